#!/usr/bin/env bash
# Off-CPU cost (docs/BENCHMARKS.md "Off-CPU time"): bench/pingpong's round trips per second
# alone, attached with --off-cpu, and unattached while another pingpong is attached with
# --off-cpu (the sched_switch program then runs for every switch of the machine); kprofd's CPU
# time for the attached run. Root. Usage: bench/offcpu.sh [BUILD] [SECONDS] [ROUNDS]
set -eu
BUILD=${1:-build}; SECS=${2:-5}; ROUNDS=${3:-3}
D=$(mktemp -d /tmp/kprof-bench-offcpu.XXXXXX)
trap 'kill $KP 2>/dev/null; rm -rf "$D"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$D/pingpong" "$(dirname "$0")/pingpong.c"
"$BUILD/kprofd" --socket "$D/s" --state-dir "$D/st" >"$D/log" 2>&1 & KP=$!
for i in $(seq 50); do "$BUILD/kprofctl" --socket "$D/s" status >/dev/null 2>&1 && break; sleep 0.1; done
ctl() { "$BUILD/kprofctl" --socket "$D/s" "$@"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# run MODE: one pingpong; MODE plain, attached (it, --off-cpu) or other (another one is)
run() {
	local other= p fifo=$D/in.$RANDOM
	mkfifo "$fifo"
	if [ "$1" = other ]; then
		mkfifo "$fifo.o"; "$D/pingpong" $((SECS + 5)) <"$fifo.o" >/dev/null 2>&1 & other=$!
		exec 4>"$fifo.o"; ctl attach $other --off-cpu >/dev/null; echo >&4
	fi
	"$D/pingpong" "$SECS" <"$fifo" >"$D/out" 2>/dev/null & p=$!
	exec 3>"$fifo"
	[ "$1" = attached ] && ctl attach $p --off-cpu >/dev/null
	local c0; c0=$(cpu_ticks $KP)
	echo >&3; wait $p; exec 3>&-
	local c1; c1=$(cpu_ticks $KP)
	[ -n "$other" ] && { kill $other; wait $other 2>/dev/null; exec 4>&-; }
	echo "$1: $(cat "$D/out"), kprofd $(( (c1 - c0) * 10 )) ms CPU in ${SECS} s"
}
for r in $(seq "$ROUNDS"); do run plain; run attached; run other; done
ctl status | grep -i off-cpu || true
