#!/usr/bin/env bash
# bench/http.sh: the pprof HTTP endpoint ([http] listen, issue 17 item 3).
#
# 1. Time to answer GET /debug/pprof/profile?seconds=3&pid=PID (a minijit attached at 99 Hz):
#    curl's time_total, ROUNDS times, and the wall time of curl then `go tool pprof -top` of
#    the file once (Go's own start and symbolization included; every request carries the
#    token, which go tool pprof cannot send). Ideally 3 s plus the time to build the profile.
# 2. kprofd's CPU (utime + stime of /proc/PID/stat) over WINDOW seconds: with no HTTP client,
#    then while CLIENTS clients each ask in a loop for a 1 s profile of the minijit (what a
#    scraper with a 1 s interval does; CLIENTS requests in flight at all times), then while
#    CLIENTS clients each poll GET /debug/pprof/targets in a loop (no wait between requests).
#
# Environment: BUILD (default build), ROUNDS (5), CLIENTS (10), WINDOW (20). Output: the tables
# on stdout and in $BUILD/bench/http.md. As root; curl, python3, and go for the pprof row.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
CLIENTS=${CLIENTS:-10}
WINDOW=${WINDOW:-20}
OUT=$BUILD/bench/http.md
need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit"
need_root

bench_start bench-http
CL=()
bench_on_exit() {
	local p
	for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
(umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token")
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" "$TDIR/token" >"$TDIR/kprofd.conf"
SOCK=$TDIR/kprofd.sock
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$SOCK" "" "$TDIR/kprofd.log" --config "$TDIR/kprofd.conf"
DPID=$DAEMON_PID
: >"$TDIR/mj.err"
"$BUILD/minijit" --seconds 100000 >/dev/null 2>"$TDIR/mj.err" &
MJ=$!
BENCH_PIDS+=("$MJ")
wait_ready "$TDIR/mj.err" ready || true
"$BUILD/kprofctl" --socket "$SOCK" attach "$MJ" --freq 99 >/dev/null
sleep 3

ticks() { cpu_ticks "$DPID"; }
HZ=$(getconf CLK_TCK)
# cpu_window: kprofd's CPU over WINDOW s, in percent of one CPU.
cpu_window() {
	local t0 t1 s0 s1
	t0=$(ticks); s0=$(date +%s.%N)
	sleep "$WINDOW"
	t1=$(ticks); s1=$(date +%s.%N)
	python3 -c "print('%.2f' % (100.0 * ($t1 - $t0) / $HZ / ($s1 - $s0)))"
}

{
	echo "### Time to answer a 3 s profile ($(nproc) CPUs, minijit at 99 Hz)"
	echo
	echo "| client | median | min | max | bytes |"
	echo "|---|---|---|---|---|"
	for ((i = 0; i < ROUNDS; i++)); do
		curl -s -o "$TDIR/p.pb.gz" -w '%{time_total} %{size_download}\n' -H "$AUTH" \
			"$URL/debug/pprof/profile?seconds=3&pid=$MJ"
	done >"$TDIR/curl.txt"
	python3 - "$TDIR/curl.txt" "$ROUNDS" <<'PY'
import statistics, sys
r = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
t = [x[0] for x in r]
print("| curl (%s rounds) | %.3f s | %.3f s | %.3f s | %d |" % (sys.argv[2], statistics.median(t), min(t), max(t), statistics.median(x[1] for x in r)))
PY
	if command -v go >/dev/null; then
		export PPROF_TMPDIR=$TDIR
		s0=$(date +%s.%N)
		curl -s -o "$TDIR/g.pb.gz" -H "$AUTH" "$URL/debug/pprof/profile?seconds=3&pid=$MJ"
		go tool pprof -top "$TDIR/g.pb.gz" >"$TDIR/top.txt" 2>&1
		s1=$(date +%s.%N)
		python3 -c "d = $s1 - $s0; print('| curl, then go tool pprof -top of the file (1 run) | %.3f s | | | |' % d)"
	fi
	echo
	echo "### kprofd's CPU while HTTP clients poll (${WINDOW} s windows, % of one CPU)"
	echo
	echo "| clients | kprofd CPU | requests answered |"
	echo "|---|---|---|"
	echo "| none (minijit sampled at 99 Hz) | $(cpu_window) % | 0 |"
	for mode in profile targets; do
		: >"$TDIR/codes.$mode"
		CL=()
		for ((c = 0; c < CLIENTS; c++)); do
			if [ "$mode" = profile ]; then
				u="$URL/debug/pprof/profile?seconds=1&pid=$MJ"
			else
				u="$URL/debug/pprof/targets"
			fi
			(while :; do curl -s -o /dev/null -w '%{http_code}\n' -H "$AUTH" "$u"; done >>"$TDIR/codes.$mode") &
			CL+=($!)
		done
		sleep 1
		n0=$(wc -l <"$TDIR/codes.$mode")
		cpu=$(cpu_window)
		n1=$(wc -l <"$TDIR/codes.$mode")
		for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
		wait "${CL[@]}" 2>/dev/null || true
		CL=()
		bad=$(grep -vc '^200$' "$TDIR/codes.$mode" || true)
		if [ "$mode" = profile ]; then
			what="$CLIENTS polling seconds=1 profiles"
		else
			what="$CLIENTS polling /debug/pprof/targets back to back"
		fi
		echo "| $what | $cpu % | $((n1 - n0)) ($bad not 200 in the whole run) |"
		sleep 2
	done
} | tee "$TDIR/out.md"
mkdir -p "$BUILD/bench"
cp "$TDIR/out.md" "$OUT"
