#!/usr/bin/env bash
# Issue 34: the pprof endpoint's answers are built off kprofd's event loop. A whole-host
# interval answer is merged and packed in the loop, then made into gzip'd pprof by the
# kprofd-build thread, so that the loop drains the ring buffers and answers clients meanwhile.
#   1. A scrape of a large profile (manystacks.js, a new stack almost every sample, attached at
#      1999 Hz during the interval) is answered 200 with manystacks' functions; status counts it
#      built off the loop, and the kprofd-build thread's own CPU time (schedstat) grew by it.
#   2. Four such scrapes at once whose clients leave just after their interval ends, while their
#      builds run or wait in the thread: each is answered or released (status `served` and
#      `left`), builds that ran for a client that had left are dropped (built_off_loop counts
#      them), kprofd lives, and a scrape after them is answered.
#   3. With the build thread held (ptrace), a scrape's build waits in it while the loop answers
#      status (http.building 1) and drains the ring buffers; released, the scrape is answered.
# Needs root (BPF), python3 and node.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "http build" "needs root"; exit 0; fi
if ! command -v node >/dev/null; then skip "http build" "node is not installed"; exit 0; fi
FIX="$(cd "$(dirname "$0")/../fixtures" && pwd)"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# No source lines: an answer is built as soon as its interval ends, not after a wait for them,
# so a client that leaves just after that leaves during the build.
printf '[http]\nlisten = 127.0.0.1:%s\ninsecure_no_auth = true\nmax_waiting_per_source = 8\n[lines]\nenabled = false\n' \
	"$PORT" >"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" || { fail "daemon starts" "see log"; exit 1; }
# http FIELD: the field of status --json's http part (0 when absent).
http() { ctl status --json | python3 -c "import json, sys; print(json.load(sys.stdin)['http'].get('$1', 0))"; }
# build_ns: the kprofd-build thread's CPU time so far (schedstat, ns), "" if there is none.
build_ns() {
	local t
	for t in /proc/"$DAEMON_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = kprofd-build ] && { cut -d' ' -f1 "$t/schedstat"; return; }
	done
}

cat >"$TDIR/scrape.py" <<'PY'
# scrape.py PORT SECONDS N LEAVE OUT: N whole-host scrapes of SECONDS sent at once; LEAVE 1: each
# client closes 0.02 s after its interval ends, else each answer is read, its status printed
# and the first 200's body (gunzipped) written to OUT.
import gzip, socket, sys, time
port, secs, n, leave, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == '1', sys.argv[5]
req = ('GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % secs).encode()
socks = []
for _ in range(n):
    s = socket.create_connection(('127.0.0.1', port)); s.sendall(req); socks.append(s)
if leave:
    time.sleep(secs + 0.02)
    for s in socks: s.close()
    sys.exit(0)
done = False
for s in socks:
    s.settimeout(300); b = bytearray()
    while True:
        c = s.recv(1 << 20)
        if not c: break
        b += c
    b = bytes(b)
    head, _, body = b.partition(b'\r\n\r\n')
    code = head.split(b' ')[1].decode() if head else 'none'
    print(code)
    if code == '200' and not done:
        open(out, 'wb').write(gzip.decompress(body)); done = True
PY

# ---- 1 ----
(cd "$TDIR" && exec node --perf-basic-prof --interpreted-frames-native-stack \
	"$FIX/manystacks.js" 600) 2>"$TDIR/ms.err" &
MS=$!
PIDS+=("$MS")
wait_for 30 grep -q ready "$TDIR/ms.err" || { fail "manystacks starts" "$(cat "$TDIR/ms.err")"; exit 1; }
b0=$(build_ns)
n0=$(http built_off_loop)
python3 "$TDIR/scrape.py" "$PORT" 8 1 0 "$TDIR/one.pb" >"$TDIR/one.out" 2>&1 &
SCR=$!
sleep 0.5
check "attach manystacks at 1999 Hz during the interval" ctl attach "$MS" --freq 1999
wait "$SCR"
b1=$(build_ns)
n1=$(http built_off_loop)
stacks=$(ctl report "$MS" --json --top 0 | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])")
if [ "$(cat "$TDIR/one.out")" = 200 ] && grep -aq stackFunctionNumber "$TDIR/one.pb"; then
	pass "a scrape of manystacks ($stacks samples): 200, its functions in the pprof"
else fail "scrape of manystacks" "$(cat "$TDIR/one.out")"; fi
if [ -n "$b0" ] && [ "$n1" -ge $((n0 + 1)) ] && [ "$b1" -gt "$b0" ]; then
	pass "built off the loop: status built_off_loop $n0 -> $n1, the kprofd-build thread ran $(((b1 - b0) / 1000000)) ms"
else fail "built off the loop" "built_off_loop $n0 -> $n1, kprofd-build thread CPU '${b0}' -> '${b1}'"; fi

# ---- 2 ----
# Each is either answered before its client leaves (served) or released when it leaves (left):
# the builds run one at a time, so at least the last ones are still building or queued.
left0=$(http left)
served0=$(http served)
built0=$(http built_off_loop)
python3 "$TDIR/scrape.py" "$PORT" 6 4 1 - >"$TDIR/leave.out" 2>&1
wait_for 60 bash -c "[ \"\$($KPROFCTL --socket $SOCK status --json | python3 -c \"import json,sys; print(json.load(sys.stdin)['http']['waiting'])\")\" = 0 ]"
left=$(($(http left) - left0))
served=$(($(http served) - served0))
built=$(($(http built_off_loop) - built0))
# A build whose request was served answered it; any other build ran for a client that had left.
if [ "$(http waiting)" = 0 ] && [ $((left + served)) = 4 ]; then
	pass "four scrapes whose clients left: each answered ($served) or released ($left)"
else fail "leavers" "left $left, served $served, waiting $(http waiting)"; fi
if [ $((built - served)) -ge 1 ]; then
	pass "$((built - served)) of $built builds ran for a client that had left: their results dropped"
else
	skip "a build for a client that left" "every client left before its interval's end on this run ($built built)"
fi
python3 "$TDIR/scrape.py" "$PORT" 1 1 0 "$TDIR/after.pb" >"$TDIR/after.out" 2>&1
kill -0 "$DAEMON_PID" && [ "$(cat "$TDIR/after.out")" = 200 ] &&
	pass "kprofd alive, a scrape after them: 200" ||
	fail "after the leavers" "$(cat "$TDIR/after.out"; tail -3 "$TDIR/kprofd.log")"

# ---- 3 ----
# The build thread held (ptrace-stopped while it waits for a job, so it holds no lock): a scrape's
# build handed to it waits there, while the loop answers status (http.building 1), drains the
# ring buffers (manystacks' samples grow) and leaves the scrape unanswered; released, the
# thread builds it and the scrape is answered 200. A build in the loop, or a loop that waits for
# the thread, fails this whatever the machine's load.
cat >"$TDIR/hold.py" <<'PY'
# hold.py TID RELEASE: stops thread TID (PTRACE_SEIZE + PTRACE_INTERRUPT: that thread only),
# prints "held" (or why not), and lets it go when file RELEASE exists.
import ctypes, os, sys, time
tid, release = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(0x4206, tid, None, None) != 0 or libc.ptrace(0x4207, tid, None, None) != 0:
    print('ptrace: ' + os.strerror(ctypes.get_errno()), flush=True); sys.exit(1)
os.waitpid(tid, 0x40000000)  # __WALL: its stop
print('held', flush=True)
while not os.path.exists(release):
    time.sleep(0.05)
libc.ptrace(17, tid, None, None)  # PTRACE_DETACH
PY
build_tid() {
	local t
	for t in /proc/"$DAEMON_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = kprofd-build ] && { basename "$t"; return; }
	done
}
samples() { ctl report "$MS" --json --top 0 | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])"; }
# The build thread idle: no build queued or running (section 2's are done).
wait_for 60 bash -c "[ \"\$($KPROFCTL --socket $SOCK status --json | python3 -c \"import json,sys; print(json.load(sys.stdin)['http'].get('building', 0))\")\" = 0 ]"
TID=$(build_tid)
python3 "$TDIR/hold.py" "$TID" "$TDIR/release" >"$TDIR/hold.out" 2>&1 &
HOLD=$!
PIDS+=("$HOLD")
if [ -z "$TID" ] || ! wait_for 30 grep -q held "$TDIR/hold.out"; then
	fail "hold the build thread" "thread '$TID': $(cat "$TDIR/hold.out")"
	touch "$TDIR/release"
else
	python3 "$TDIR/scrape.py" "$PORT" 1 1 0 "$TDIR/held.pb" >"$TDIR/held.out" 2>&1 &
	SCR=$!
	if wait_for 60 bash -c "[ \"\$($KPROFCTL --socket $SOCK status --json | python3 -c \"import json,sys; print(json.load(sys.stdin)['http'].get('building', 0))\")\" = 1 ]"; then
		s0=$(samples)
		wait_for 30 bash -c "[ \$($KPROFCTL --socket $SOCK report $MS --json --top 0 | python3 -c \"import json,sys; print(json.load(sys.stdin)['total_samples'])\") -gt $s0 ]"
		s1=$(samples)
		building=$(http building)
		if [ "$s1" -gt "$s0" ] && [ "$building" = 1 ] && [ ! -s "$TDIR/held.out" ]; then
			pass "a build held in its thread: status answered (building 1), manystacks' samples $s0 -> $s1, the scrape waits"
		else fail "the loop during a held build" "samples $s0 -> $s1, building $building, scrape '$(cat "$TDIR/held.out")'"; fi
	else
		fail "a scrape's build handed to the thread" "status building $(http building), scrape '$(cat "$TDIR/held.out")'"
	fi
	touch "$TDIR/release"
	wait "$SCR"
	if [ "$(cat "$TDIR/held.out")" = 200 ] && grep -aq stackFunctionNumber "$TDIR/held.pb" &&
		[ "$(http building)" = 0 ]; then
		pass "released, the thread built it: 200 with manystacks' functions, building 0"
	else fail "the held build's answer" "$(cat "$TDIR/held.out"), building $(http building)"; fi
fi
wait "$HOLD"
kill -0 "$DAEMON_PID" && pass "kprofd alive" || fail "kprofd alive" "$(tail -5 "$TDIR/kprofd.log")"
finish
