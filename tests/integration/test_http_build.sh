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
#   3. While a large build runs, `status` over the socket is answered within 4 times a status
#      round trip measured alone plus 0.5 s (not a timing benchmark: the loop is free, or the
#      answer waits for the whole build, seconds under ASan).
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
# status round trips in a row until FILE exists: the longest, in seconds.
cat >"$TDIR/lat.py" <<'PY'
import os, subprocess, sys, time
ctl, sock, stop = sys.argv[1], sys.argv[2], sys.argv[3]
worst = 0
while not os.path.exists(stop):
    t = time.time(); subprocess.run([ctl, '--socket', sock, 'status'], stdout=subprocess.DEVNULL)
    worst = max(worst, time.time() - t)
print('%.3f' % worst)
PY
alone=$(python3 -c 'import subprocess,sys,time
best = 9
for _ in range(5):
    t = time.time(); subprocess.run([sys.argv[1], "--socket", sys.argv[2], "status"], stdout=subprocess.DEVNULL); best = min(best, time.time() - t)
print("%.3f" % best)' "$KPROFCTL" "$SOCK")
# A scrape of manystacks' new stacks over 6 s, status asked in a row meanwhile.
b0=$(build_ns)
python3 "$TDIR/scrape.py" "$PORT" 6 1 0 "$TDIR/big.pb" >"$TDIR/big.out" 2>&1 &
SCR=$!
sleep 0.5
python3 "$TDIR/lat.py" "$KPROFCTL" "$SOCK" "$TDIR/stop" >"$TDIR/lat.out" &
LAT=$!
wait "$SCR"
touch "$TDIR/stop"
wait "$LAT"
b1=$(build_ns)
worst=$(cat "$TDIR/lat.out")
built=$(((b1 - b0) / 1000000))
limit=$(python3 -c "print('%.3f' % (4 * $alone + 0.5))")
if python3 -c "import sys; sys.exit(0 if $worst <= $limit else 1)"; then
	pass "status during a scrape's build of $built ms: at most $worst s (alone $alone s, limit $limit s)"
else fail "status during a build" "$worst s (alone $alone s, limit $limit s), the build $built ms"; fi
kill -0 "$DAEMON_PID" && pass "kprofd alive" || fail "kprofd alive" "$(tail -5 "$TDIR/kprofd.log")"
finish
