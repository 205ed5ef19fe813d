#!/usr/bin/env bash
# bench/range_steps.sh: what a big --since range costs the rest of kprofd, with the range merged
# in steps ([windows] step_ms = 10, the default) and in one go (step_ms = 1000 here: longer than
# any range of this run takes). Run as root: `BUILD=build bash bench/range_steps.sh` (about
# RS_SECONDS + 2 minutes).
#
# kprofd with 1 s windows; Node's manystacks.js (almost every sample a new stack: the costly
# case of BENCHMARKS "Time windows") attached at 999 Hz for RS_SECONDS (120): that many windows.
# Then, alternating step_ms 10 and 1000 (changed by SIGHUP, same windows), RS_ROUNDS (3) times
# each: `kprofctl export PID --since 2h` timed, while a second client sends `status` back to
# back; the slowest status answer during the export is how long the loop was held.
# RS_VIA=http: the range is asked from the HTTP endpoint instead (`curl
# .../debug/pprof/profile?pid=PID&since=2h`, merged in the same steps, http_range.c).
set -u
. "$(dirname "$0")/lib.sh"
BUILD=${BUILD:-build}
SECONDS_RUN=${RS_SECONDS:-120}
ROUNDS=${RS_ROUNDS:-3}
VIA=${RS_VIA:-socket}
need_root
need_bins "$BUILD/kprofd" "$BUILD/kprofctl"
need_cmds node python3
need_ints SECONDS_RUN ROUNDS
bench_start rsbench
T=$TDIR
CTL="$BUILD/kprofctl --socket $T/sock"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
conf() {
	printf '[windows]\nseconds = 1\nmemory_mb = 1024\nstep_ms = %s\n' "$1" >"$T/kprofd.conf"
	[ "$VIA" = http ] && printf '[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" "$T/token" >>"$T/kprofd.conf"
	return 0
}
(umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$T/token")
conf 10
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$T/sock" "$T/state" "$T/kprofd.log" --config "$T/kprofd.conf"
DPID=$DAEMON_PID
node --perf-basic-prof --interpreted-frames-native-stack \
	"$BENCH_ROOT/tests/fixtures/manystacks.js" 100000 >/dev/null 2>&1 &
NP=$!
BENCH_PIDS+=("$NP")
sleep 3
$CTL attach "$NP" --freq 999 >/dev/null || die "attach failed"
sleep "$SECONDS_RUN"
$CTL detach "$NP" >/dev/null
sleep 1.5
echo "windows: $($CTL status --json | json_get '["windows"]'), samples $($CTL report "$NP" --top 1 --json | json_get '["total_samples"]')"

# probe.py SOCK STOPFILE: status requests back to back until STOPFILE exists; prints the
# slowest answer (ms) and how many.
cat >"$T/probe.py" <<'PY'
import os, socket, struct, sys, time
sock, stop = sys.argv[1], sys.argv[2]
req = struct.pack('>I', 2) + bytes([4 << 3 | 2, 0])  # Request.status (4), empty
worst, n = 0.0, 0
s = socket.socket(socket.AF_UNIX); s.connect(sock)
def recv_n(k):
    b = b''
    while len(b) < k:
        c = s.recv(k - len(b))
        if not c: raise SystemExit('closed')
        b += c
    return b
while not os.path.exists(stop):
    t0 = time.monotonic()
    s.sendall(req)
    recv_n(struct.unpack('>I', recv_n(4))[0])
    worst = max(worst, time.monotonic() - t0); n += 1
print(f"{worst * 1000:.0f} {n}")
PY
for r in $(seq "$ROUNDS"); do
	for step in 10 1000; do
		conf "$step"
		kill -HUP "$DPID"
		sleep 0.5
		rm -f "$T/stop"
		python3 "$T/probe.py" "$T/sock" "$T/stop" >"$T/probe.out" &
		pp=$!
		sleep 0.3
		s=$(date +%s%N)
		if [ "$VIA" = http ]; then
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 300 -H "Authorization: Bearer $(cat "$T/token")" \
				"http://127.0.0.1:$PORT/debug/pprof/profile?pid=$NP&since=2h")
			[ "$code" = 200 ] || echo "http range: status $code"
		else
			$CTL export "$NP" --since 2h -o /dev/null || echo "export failed"
		fi
		e=$(date +%s%N)
		touch "$T/stop"
		wait "$pp"
		read -r worst n <"$T/probe.out"
		echo "round $r step_ms $step: $VIA range --since 2h $(((e - s) / 1000000)) ms; slowest status meanwhile $worst ms ($n answered)"
	done
done
$CTL status | grep '^ranges:'
