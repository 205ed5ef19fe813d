#!/usr/bin/env bash
# Off-CPU cost (docs/BENCHMARKS.md "Off-CPU time"): bench/pingpong (two threads passing a byte
# through pipes) run ROUNDS times in each of three modes, interleaved: plain (nothing attached
# with --off-cpu: the sched_switch program is not attached), other (a sleeping process is
# attached with --off-cpu: the program runs at every switch of the machine and returns at once
# for pingpong), sampled (pingpong attached without --off-cpu: its per-thread sampling events,
# which the kernel switches with the threads, cost too) and attached (pingpong attached with
# --off-cpu). Prints each run's
# round trips per second and CPU per round trip, and kprofd's CPU time over the attached runs.
# Then bpftrace (when there) running an offcputime-style script on pingpong (both stacks at the
# switch out, summed by stacks at the switch in), with its own CPU time.
# Root. Usage: bench/offcpu.sh [BUILD] [SECONDS] [ROUNDS]
set -eu
BUILD=${1:-build}; SECS=${2:-5}; ROUNDS=${3:-3}
D=$(mktemp -d /tmp/kprof-bench-offcpu.XXXXXX)
KP=; SL=
trap '[ -n "$SL" ] && kill $SL; [ -n "$KP" ] && { kill $KP; wait $KP; }; rm -rf "$D"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$D/pingpong" "$(dirname "$0")/pingpong.c"
"$BUILD/kprofd" --socket "$D/s" --state-dir "$D/st" >"$D/log" 2>&1 & KP=$!
for i in $(seq 50); do "$BUILD/kprofctl" --socket "$D/s" status >/dev/null 2>&1 && break; sleep 0.1; done
ctl() { "$BUILD/kprofctl" --socket "$D/s" "$@"; }
cpu_ms() { awk '{ print ($14 + $15) * 10 }' "/proc/$1/stat"; }
sleep 100000 & SL=$!
KCPU=0
for r in $(seq "$ROUNDS"); do
	echo -n "plain:    "; echo | "$D/pingpong" "$SECS" 2>/dev/null
	ctl attach $SL --off-cpu >/dev/null
	echo -n "other:    "; echo | "$D/pingpong" "$SECS" 2>/dev/null
	ctl detach $SL >/dev/null
	{ sleep 1; echo; } | "$D/pingpong" "$SECS" >"$D/out" 2>/dev/null & P=$!
	ctl attach $P >/dev/null
	wait $P
	echo "sampled:  $(cat "$D/out")"
	{ sleep 1; echo; } | "$D/pingpong" "$SECS" >"$D/out" 2>/dev/null & P=$!
	ctl attach $P --off-cpu >/dev/null
	c0=$(cpu_ms $KP); wait $P; c1=$(cpu_ms $KP)
	KCPU=$((KCPU + c1 - c0))
	echo "attached: $(cat "$D/out") (kprofd $((c1 - c0)) ms CPU)"
done
echo "kprofd: $KCPU ms CPU over $ROUNDS attached runs of ${SECS} s (+1 s waiting each)"
command -v bpftrace >/dev/null || exit 0
cat >"$D/off.bt" <<'EOF'
tracepoint:sched:sched_switch /args->prev_comm == "pingpong"/ { @ts[args->prev_pid] = nsecs; @ks[args->prev_pid] = kstack; @us[args->prev_pid] = ustack; }
tracepoint:sched:sched_switch /args->next_comm == "pingpong" && @ts[args->next_pid]/ {
	@off[@ks[args->next_pid], @us[args->next_pid]] = sum(nsecs - @ts[args->next_pid]); delete(@ts[args->next_pid]);
}
EOF
for r in $(seq "$ROUNDS"); do
	echo -n "plain:    "; echo | "$D/pingpong" "$SECS" 2>/dev/null
	# tracepoint:sched needs tracefs: mounted in bpftrace's own mount namespace if missing
	unshare -m sh -c '[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
		exec bpftrace "$1"' sh "$D/off.bt" >"$D/bt.out" 2>&1 & BT=$!
	for i in $(seq 600); do grep -q Attaching "$D/bt.out" && break; sleep 0.1; done
	c0=$(cpu_ms $BT)
	echo -n "bpftrace: "; echo | "$D/pingpong" "$SECS" 2>/dev/null
	c1=$(cpu_ms $BT)
	kill -INT $BT; wait $BT || true
	echo "          (bpftrace $((c1 - c0)) ms CPU)"
done
