# tests/integration/offcpu_lib.sh: what the off-CPU tests share (sourced after lib.sh): the
# offcpu_mix fixture, and perf recording the same run's context switches as the side to compare
# kprof with (perf_offcpu.py turns them into off-CPU time per thread and stack).

MIX=$BUILD/offcpu_mix

# start_mix SECONDS: the fixture, ready and waiting for SIGUSR1; sets MIXP and MIX_OUT (its
# result is $MIX_OUT.out once it is done).
start_mix() {
	MIX_OUT=$TDIR/mix.$RANDOM
	"$MIX" "$1" >"$MIX_OUT.out" 2>"$MIX_OUT.err" &
	MIXP=$!
	PIDS+=("$MIXP")
	wait_for 10 grep -q ready "$MIX_OUT.err"
}

# mix_tid NAME: the tid of the fixture's thread NAME (kpoc-worker, kpoc-holder).
mix_tid() {
	local d
	for d in /proc/"$MIXP"/task/*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

# perf_start NAME FILTER [CALLGRAPH]: perf record -e sched:sched_switch -g (--call-graph
# CALLGRAPH: dwarf unwinds the user stacks from a copy of them) on all CPUs with the tracepoint
# filter FILTER, in a mount namespace of its own where tracefs is mounted if the machine has
# none (nothing changes outside it); started disabled and enabled through its control fifo,
# so that it records from the moment perf_start returns (0), or 1 if perf could not start.
# With PERF_MONO=1 its times are CLOCK_MONOTONIC's (-k mono), for perf_stop's window.
perf_start() {
	PERF_DATA=$TDIR/$1.data
	rm -f "$TDIR/$1.ctl" "$TDIR/$1.ack"
	mkfifo "$TDIR/$1.ctl" "$TDIR/$1.ack" || return 1
	unshare -m sh -c '[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
		exec perf record -q -D -1 $4 --control "fifo:$1.ctl,$1.ack" -e sched:sched_switch \
			--filter "$2" -a --call-graph "$3" -o "$1.data"' sh "$TDIR/$1" "$2" "${3:-fp}" \
		"${PERF_MONO:+-k mono}" \
		>"$TDIR/$1.log" 2>&1 &
	PERF_PID=$!
	PIDS+=("$PERF_PID")
	exec {PERF_CTL}<>"$TDIR/$1.ctl" {PERF_ACK}<>"$TDIR/$1.ack" # no wait for perf to open them
	echo enable >&"$PERF_CTL"
	local ack=
	read -r -t 30 ack <&"$PERF_ACK"
	[ "$ack" = ack ]
}

# perf_stop OUT [FROM TO]: stop the recording; OUT gets perf_offcpu.py's JSON of it (0, else
# 1), of the off-CPU intervals that ended from FROM to TO (CLOCK_MONOTONIC ns) if given.
perf_stop() {
	kill -INT "$PERF_PID" 2>/dev/null
	wait "$PERF_PID" 2>/dev/null
	exec {PERF_CTL}>&- {PERF_ACK}<&-
	perf script --ns -i "$PERF_DATA" -F comm,tid,time,event,trace,ip,sym >"$PERF_DATA.txt" 2>/dev/null &&
		python3 "$(dirname "${BASH_SOURCE[0]}")/perf_offcpu.py" "$PERF_DATA.txt" "${@:2}" >"$1"
}
