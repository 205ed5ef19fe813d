#!/usr/bin/env bash
# bench/window_files.sh: what persisting time windows costs kprofd per tick as the targets
# grow (issue 34, item 4). For each N of WF_TARGETS: N shell loops that each spin ~2 ms every
# half second, attached at 999 Hz (a few samples a second each: a window a target a tick),
# [windows] seconds = 1; over WF_SECONDS, the windows cut (status), the window files written
# (the state directory: each is one write, one fsync and one rename, store.c) and kprofd's CPU
# time (/proc/PID/schedstat), per tick and per window.
# Usage: [BUILD=build] [WF_TARGETS="10 50 100"] [WF_SECONDS=20] bash bench/window_files.sh
# (as root). make bench runs it short (WF_SHORT=1: 10 and 50 targets, 8 s).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
if [ -n "${WF_SHORT:-}" ]; then WF_TARGETS=${WF_TARGETS:-"10 50"} WF_SECONDS=${WF_SECONDS:-8}; fi
WF_TARGETS=${WF_TARGETS:-"10 50 100"}
WF_SECONDS=${WF_SECONDS:-20}
need_root
need_bins "$BUILD/kprofd" "$BUILD/kprofctl"
bench_start bench-window-files
ctl() { "$BUILD/kprofctl" --socket "$TDIR/s" "$@"; }
windows() { ctl status --json | json_get "['windows']"; }
echo "# kprofd $("$BUILD/kprofd" --version 2>/dev/null | head -1) ($BUILD), $(nproc) CPUs, load $(loadavg)"
printf "%8s %10s %10s %12s %14s %14s\n" targets windows files "files/tick" "windows/file" "cpu us/window"
for N in $WF_TARGETS; do
	rm -rf "$TDIR/st"
	printf '[windows]\nseconds = 1\n[limits]\nmax_targets_per_uid = 1024\n' >"$TDIR/k.conf"
	kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$TDIR/s" "$TDIR/st" "$TDIR/kprofd.log" \
		--config "$TDIR/k.conf"
	KD=$DAEMON_PID
	LOOPS=()
	for ((i = 0; i < N; i++)); do
		sh -c 'while :; do i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; sleep 0.5; done' &
		LOOPS+=($!)
		BENCH_PIDS+=($!)
	done
	for p in "${LOOPS[@]}"; do ctl attach "$p" --freq 999 >/dev/null || true; done
	sleep 3
	f0=$(ls "$TDIR/st/profiles/" | grep -c 'kpw$'); w0=$(windows); c0=$(awk '{ print $1 }' "/proc/$KD/schedstat")
	sleep "$WF_SECONDS"
	f1=$(ls "$TDIR/st/profiles/" | grep -c 'kpw$'); w1=$(windows); c1=$(awk '{ print $1 }' "/proc/$KD/schedstat")
	python3 -c "import sys
n, dw, df, dc, sec = map(float, sys.argv[1:])
print('%8d %10d %10d %12.1f %14.1f %14.1f' % (n, dw, df, df / sec, dw / max(df, 1), dc / 1e3 / max(dw, 1)))" \
		"$N" $((w1 - w0)) $((f1 - f0)) "$(echo "$c1 - $c0" | bc)" "$WF_SECONDS"
	for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
	kprofd_stop "$KD"
done
