#!/usr/bin/env bash
# What one unprivileged user (nobody) can take from the root daemon through its socket: client
# slots (per-uid quota, root's reserve, whole-frame deadline, quiet refusal logs), file
# descriptors (no spinning when accept runs out of them), memory and loop time (folded text
# built within its cap, replies waiting to be read capped per uid), and kernel detail (addresses
# and names only as the kernel itself would show them). Needs root (setpriv to uid 65534).
# Alone: it sets perf_event_paranoid and kptr_restrict for the whole host.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
	skip "socket limits" "needs root, setpriv and prlimit"; exit 0
fi
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
PY=/usr/bin/python3 # not a per-user shim: the clients run as other uids
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
KPTR=$(cat /proc/sys/kernel/kptr_restrict)
restore() {
	echo "$PARANOID" >/proc/sys/kernel/perf_event_paranoid
	echo "$KPTR" >/proc/sys/kernel/kptr_restrict
	cleanup
}
trap restore EXIT

# A raw client: `cl.py SOCK MODE ARGS`; modes below. Replies are decoded just enough here.
cp "$(dirname "$0")/kpraw.py" "$TDIR/"
cat >"$TDIR/cl.py" <<'PY'
import socket, struct, sys, time
sock, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
from kpraw import varint, field, frame, top_fields as fields
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(sock); return s
def recv_n(s, n):            # into one buffer: appending to bytes is quadratic (64 MiB replies)
    b, got = bytearray(n), 0
    v = memoryview(b)
    while got < n:
        c = s.recv_into(v[got:], min(n - got, 1 << 20))
        if not c: return None
        got += c
    return bytes(b)
def recv_frame(s):
    h = recv_n(s, 4)
    return None if h is None else recv_n(s, struct.unpack('>I', h)[0])
STATUS = frame(field(4, b''))
def folded_req(pid): return frame(field(6, varint(1 << 3) + varint(pid)))
def refused(s):
    """After a moment: the refusal the daemon sent and closed with, or None (still a client)."""
    s.setblocking(False)
    try: b = s.recv(4096)
    except BlockingIOError: return None
    s.setblocking(True)
    return fields(b[4:]).get(2, b'').decode('utf-8', 'replace') if len(b) > 4 else 'closed'
if mode == 'hold':         # N connections, report which were refused, keep the rest SECS
    n, secs = int(args[0]), float(args[1])
    socks = [connect() for _ in range(n)]
    time.sleep(0.5)
    why = [refused(s) for s in socks]
    print('accepted %d refused %d' % (why.count(None), n - why.count(None)), flush=True)
    for w in why:
        if w: print('why', w.strip()[-120:], flush=True)
    time.sleep(secs)
elif mode == 'burst':      # N connections one after the other: how many were refused
    n = 0
    for _ in range(int(args[0])):
        s = connect(); s.settimeout(0.5)
        try: n += b'too many clients' in s.recv(4096)
        except OSError: pass
        s.close()
    print('refused', n)
elif mode == 'slow':       # a valid status request (padded with an unknown field), 1 byte / 0.5 s
    body = field(4, b'') + field(1000, b'x' * 24)
    data, s, t = frame(body), connect(), time.time()
    for i in range(len(data)):
        try: s.send(data[i:i + 1])
        except OSError: break
        time.sleep(0.5)
        s.setblocking(False)
        try: gone = s.recv(4096) is not None
        except BlockingIOError: gone = False
        except OSError: gone = True
        s.setblocking(True)
        if gone: break
    print('closed after %.1f s (%d of %d bytes sent)' % (time.time() - t, i + 1, len(data)))
elif mode == 'folded':     # one folded request, the reply read whole: truncated? size?
    s = connect(); s.sendall(folded_req(int(args[0])))
    r = fields(recv_frame(s))
    fr = fields(r.get(14, b''))
    print('error', r.get(1, 0), 'truncated', fr.get(3, 0), 'omitted', fr.get(4, 0),
          'bytes', len(fr.get(2, b'')), r.get(2, b'').decode()[:200])
elif mode == 'latency':    # a folded request in flight (not read yet), then a status: how long
    # first a status alone: what a status costs on this host now (a loaded one: more)
    s = connect(); s.settimeout(60); t = time.time(); s.sendall(STATUS); recv_frame(s)
    base = time.time() - t
    big = connect(); big.sendall(folded_req(int(args[0])))
    time.sleep(0.05)
    s = connect(); s.settimeout(60); t = time.time(); s.sendall(STATUS)
    ok = recv_frame(s) is not None
    lat = time.time() - t
    big.settimeout(120); recv_frame(big)
    print('status answered %s after %.2f s (alone %.2f s); folded ended after %.2f s' % (ok, lat, base, time.time() - t))
elif mode == 'noread':     # N clients ask for folded text and never read it
    pid, n, secs = int(args[0]), int(args[1]), float(args[2])
    socks = []
    for _ in range(n):
        s = connect(); s.sendall(folded_req(pid)); socks.append(s); time.sleep(0.3)
    time.sleep(1)
    waiting = big = 0
    for s in socks:
        s.settimeout(5)
        h = recv_n(s, 4)
        if h and struct.unpack('>I', h)[0] < 4096:
            m = fields(recv_n(s, struct.unpack('>I', h)[0])).get(2, b'').decode()
            waiting += 'waiting to be read' in m
            if waiting == 1 and 'waiting to be read' in m: print('msg', m, flush=True)
        else: big += 1
    print('big %d waiting %d' % (big, waiting), flush=True)
    time.sleep(secs)
PY
# start_conf CONF FLAGS...: start_daemon --config CONF FLAGS; a kprofd that rejects CONF (one
# from before these limits) is started with the flags alone, so its checks run and fail.
start_conf() {
	local conf=$1
	shift
	"$KPROFD" --socket "$SOCK" --state-dir "$TDIR/state" --config "$conf" "$@" \
		>>"$TDIR/kprofd.log" 2>&1 &
	DAEMON_PID=$!
	wait_for 20 eval 'ctl status || ! kill -0 $DAEMON_PID'
	ctl status >/dev/null 2>&1 && return 0
	wait "$DAEMON_PID" 2>/dev/null
	echo "note: this kprofd rejects $(tr '\n' ' ' <"$conf"); started without it"
	start_daemon "$@"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# ---- 12: client slots ----
printf '[limits]\nframe_timeout = 2\nmax_clients_per_uid = 4\n' >"$TDIR/limits.conf"
start_conf "$TDIR/limits.conf" --max-clients 16 || { fail "daemon starts" "see log"; exit 1; }

# Four uids of four clients each ask for all 16 slots: the last eighth (2) stays for root.
HOLDS=()
for u in 60001 60002 60003 60004; do
	setpriv --reuid="$u" --regid="$u" --clear-groups "$PY" "$TDIR/cl.py" "$SOCK" hold 4 4 \
		>"$TDIR/hold.$u" 2>&1 &
	HOLDS+=($!)
	sleep 0.15
done
sleep 1
accepted=$(cat "$TDIR"/hold.* | awk '/^accepted/ {a += $2} END {print a + 0}')
if out=$(ctl status 2>&1) && [ "$accepted" -le 14 ] && grep -q "kept for root" "$TDIR"/hold.*; then
	pass "non-root clients get 14 of 16 slots, root still connects"
else fail "root reserve" "$accepted non-root clients accepted; root: $(echo "$out" | tail -1)"; fi
kill "${HOLDS[@]}" 2>/dev/null
wait "${HOLDS[@]}" 2>/dev/null

# One uid gets max_clients_per_uid (4); root still connects.
out=$("${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" hold 5 0)
if grep -q "accepted 4 refused 1" <<<"$out" && grep -q "too many clients of uid 65534" <<<"$out" &&
	ctl status >/dev/null; then pass "5th client of one uid refused (limit 4 per uid)"
else fail "per-uid client quota" "$out"; fi

# A request trickling in a byte every 0.5 s is closed after frame_timeout (2 s).
out=$("${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" slow)
t=$(awk '/^closed after/ {print int($3)}' <<<"$out")
if [ -n "$t" ] && [ "$t" -ge 2 ] && [ "$t" -le 4 ]; then pass "slow request closed at the frame deadline ($out)"
else fail "frame deadline" "$out"; fi

# 200 refused connections (nobody already holds its 4) log a handful of lines.
"${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" hold 4 6 >/dev/null &
HOLD=$!
sleep 0.8
before=$(grep -c refusing "$TDIR/kprofd.log")
out=$("${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" burst 200)
after=$(grep -c refusing "$TDIR/kprofd.log")
if [ "${out#refused }" -ge 150 ] && [ $((after - before)) -le 5 ]; then
	pass "${out#refused } refusals, $((after - before)) log lines"
else fail "refusal logging" "${out#refused } of 200 refused, $((after - before)) log lines"; fi
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
stop_daemon

# ---- 8: out of file descriptors ----
start_daemon --max-clients 500 || { fail "daemon starts" "see log"; exit 1; }
prlimit --pid "$DAEMON_PID" --nofile=64:64
"$PY" "$TDIR/cl.py" "$SOCK" hold 100 5 >"$TDIR/fds.out" 2>&1 &
HOLD=$!
sleep 1
t0=$(cpu_ticks "$DAEMON_PID")
sleep 2
cpu=$(( $(cpu_ticks "$DAEMON_PID") - t0 ))
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
wait_for 5 ctl status
if [ "$cpu" -lt 30 ] && grep -q "out of file descriptors" "$TDIR/kprofd.log" && ctl status >/dev/null; then
	pass "fds exhausted: kprofd used $((cpu * 10)) ms of CPU in 2 s, root connects after"
else fail "fds exhausted" "kprofd used $((cpu * 10)) ms of CPU in 2 s (spinning on accept?)"; fi

# ---- 11: kernel detail for unprivileged readers ----
"${NOBODY[@]}" dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null &
DD=$!
PIDS+=("$DD")
wait_for 5 grep -q '^Uid:.65534' "/proc/$DD/status" # setpriv has switched uid before exec'ing
wait_for 5 grep -qx dd "/proc/$DD/comm"
"${NOBODY[@]}" "$KPROFCTL" --socket "$SOCK" attach "$DD" --freq 999 >/dev/null
wait_for 15 at_least_samples "$DD" 300
# kernel rows of `report --json` as "name address" lines
kernel_rows() {
	"$@" report "$DD" --top 0 --json | python3 -c "import json,sys
for e in json.load(sys.stdin)['entries']:
    if e['kind'] in ('kernel', 'FRAME_KIND_KERNEL', 3): print(e['function'], e['address'])" 2>/dev/null
}
as_root=$(kernel_rows ctl)
echo 1 >/proc/sys/kernel/perf_event_paranoid
echo 1 >/proc/sys/kernel/kptr_restrict
as_nobody=$(kernel_rows "${NOBODY[@]}" "$KPROFCTL" --socket "$SOCK")
if [ -n "$as_nobody" ] && ! awk '$NF != 0' <<<"$as_nobody" | grep -q . &&
	grep -vq '^\[kernel\] ' <<<"$as_nobody"; then
	pass "kptr_restrict 1: nobody sees kernel names without addresses"
else fail "kernel addresses" "$(awk '$NF != 0' <<<"$as_nobody" | head -3 | tr '\n' ' ')"; fi
echo 2 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/kptr_restrict
as_nobody=$(kernel_rows "${NOBODY[@]}" "$KPROFCTL" --socket "$SOCK")
folded=$("${NOBODY[@]}" "$KPROFCTL" --socket "$SOCK" folded "$DD")
kname=$(awk '$1 != "[kernel]" && $1 != "[unknown]" {print $1; exit}' <<<"$as_root")
if [ "$as_nobody" = "[kernel] 0" ] && grep -q '\[kernel\]' <<<"$folded" &&
	{ [ -z "$kname" ] || ! grep -qF "$kname" <<<"$folded"; }; then
	pass "perf_event_paranoid 2: nobody sees one [kernel] frame"
else fail "kernel frames hidden" "report: $(head -3 <<<"$as_nobody" | tr '\n' ' ')"; fi
if [ -n "$kname" ] && awk '$NF != 0' <<<"$as_root" | grep -q .; then
	pass "root sees kernel names and addresses ($kname)"
else fail "root kernel detail" "$(head -3 <<<"$as_root" | tr '\n' ' ')"; fi
echo "$PARANOID" >/proc/sys/kernel/perf_event_paranoid
echo "$KPTR" >/proc/sys/kernel/kptr_restrict
kill "$DD"
stop_daemon

# ---- 6: replies within their caps ----
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$TDIR/hostile" -x c - <<'C'
/* Stubs of JIT code in anonymous memory, each named in the perf map by 4000 bytes, called in
 * random chains of 8: nearly every sample is a new stack of 8 long names. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#define NF 2048
#define STUB 64
#define DEPTH 8
static const unsigned char code[] = {
    0x55, 0x48, 0x89, 0xe5,	  /* push rbp; mov rbp, rsp */
    0x48, 0x8b, 0x07,		  /* mov rax, [rdi] */
    0x48, 0x85, 0xc0,		  /* test rax, rax */
    0x74, 0x08,			  /* jz leaf */
    0x48, 0x83, 0xc7, 0x08,	  /* add rdi, 8 */
    0xff, 0xd0,			  /* call rax */
    0x5d, 0xc3,			  /* pop rbp; ret */
    0xb9, 0x40, 0x0d, 0x03, 0x00, /* leaf: mov ecx, 200000 */
    0xff, 0xc9, 0x75, 0xfc,	  /* dec ecx; jnz */
    0x5d, 0xc3,			  /* pop rbp; ret */
};
static unsigned char *mem;
static time_t end;
static void *run(void *arg)
{
	uint64_t x = (uintptr_t)arg * 2654435761u + 1;
	void *chain[DEPTH + 1];

	while (time(NULL) < end) {
		for (int i = 0; i < DEPTH; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			chain[i] = mem + (x % NF) * STUB;
		}
		chain[DEPTH] = NULL;
		((void (*)(void **))chain[0])(&chain[1]);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 60;
	char path[64], name[4001];
	pthread_t th[2];
	FILE *f;

	mem = mmap(NULL, NF * STUB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	for (int i = 0; i < NF; i++)
		memcpy(mem + i * STUB, code, sizeof(code));
	if (mprotect(mem, NF * STUB, PROT_READ | PROT_EXEC) < 0)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	memset(name, 'x', 4000);
	name[4000] = '\0';
	for (int i = 0; i < NF; i++) {
		snprintf(name, 6, "s%04d", i);
		name[5] = 'x';
		fprintf(f, "%lx %x %s\n", (unsigned long)(uintptr_t)(mem + i * STUB), STUB, name);
	}
	fclose(f);
	end = time(NULL) + secs;
	fprintf(stderr, "ready\n");
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, run, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	unlink(path);
	return 0;
}
C
printf '[limits]\nreply_pending_per_uid_mb = 100\n' >"$TDIR/replies.conf"
start_conf "$TDIR/replies.conf" || { fail "daemon starts" "see log"; exit 1; }
"${NOBODY[@]}" "$TDIR/hostile" 60 2>"$TDIR/hostile.err" &
HP=$!
PIDS+=("$HP")
wait_for 5 grep -q ready "$TDIR/hostile.err"
"${NOBODY[@]}" "$KPROFCTL" --socket "$SOCK" attach "$HP" --freq 4999 --duration 6 >/dev/null
wait_for 15 state_is "$HP" detached
# Its kept profile is what is read from here on; its two spinning threads would only slow kprofd.
kill "$HP" 2>/dev/null
hwm0=$(kb "$DAEMON_PID" VmHWM)
out=$("${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" folded "$HP")
hwm=$(kb "$DAEMON_PID" VmHWM)
if grep -q "truncated 1" <<<"$out" && [ "$(awk '{print $8}' <<<"$out")" -le $((64 << 20)) ]; then
	pass "folded of a hostile profile capped and marked truncated (${out:0:60})"
else fail "folded cap" "${out:0:200}"; fi
if grep -q "^error" <<<"$out" && [ $((hwm - hwm0)) -lt $((250 << 10)) ]; then
	pass "folded peak memory bounded (VmHWM +$(((hwm - hwm0) >> 10)) MiB)"
else fail "folded peak memory" "VmHWM grew by $(((hwm - hwm0) >> 10)) MiB"; fi
out=$("${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" latency "$HP")
# kprofd builds a folded reply whole, in its loop (requests.c do_folded), then streams it: the
# build, capped at 64 MiB of text, is what every other client waits for (0.5 s here). Within
# 1 s (2.5 s sanitized: ASan makes the build 2-3x slower; 1.25 s in a sanitized CI run) plus 4
# times a status alone just before (a loaded host): an uncapped or slower build fails it.
LIM=1.0
[ -z "${SANITIZED:-}" ] || LIM=2.5
if grep -q "answered True" <<<"$out" && awk -v l=$LIM '{ exit !($5 < l + 4 * $8) }' <<<"$out"; then
	pass "status served while folded is built ($out)"
else fail "status during folded" "$out"; fi
rss0=$(kb "$DAEMON_PID" VmRSS)
"${NOBODY[@]}" "$PY" "$TDIR/cl.py" "$SOCK" noread "$HP" 4 6 >"$TDIR/noread.out" 2>&1 &
NR=$!
wait_for 20 grep -q "^big" "$TDIR/noread.out"
rss=$(kb "$DAEMON_PID" VmRSS)
if grep -q "^big [1-9]" "$TDIR/noread.out" && [ $((rss - rss0)) -lt $(((100 + 60) << 10)) ]; then
	pass "4 clients not reading: RSS +$(((rss - rss0) >> 10)) MiB (per-uid limit 100 MiB)"
else fail "unread replies" "RSS grew by $(((rss - rss0) >> 10)) MiB"; fi
if grep -q "waiting [1-9]" "$TDIR/noread.out"; then
	pass "further requests refused: $(grep -m1 '^msg' "$TDIR/noread.out" | cut -c5-120)"
else fail "replies waiting error" "$(cat "$TDIR/noread.out" | head -3 | tr '\n' ' ')"; fi
kill "$NR" 2>/dev/null
wait "$NR" 2>/dev/null
kill -0 "$DAEMON_PID" || fail "daemon alive" "kprofd died"
finish
