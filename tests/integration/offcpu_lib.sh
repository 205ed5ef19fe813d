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
# PERF_WARN gets what perf itself says is wrong with its record (events lost or throttled, out of
# order: a loaded machine), empty if nothing.
perf_stop() {
	stop_tool "$PERF_PID" || echo "perf did not end on SIGINT in 30 s: killed" >>"${PERF_DATA%.data}.log"
	exec {PERF_CTL}>&- {PERF_ACK}<&-
	PERF_WARN=$(perf report --stats -i "$PERF_DATA" 2>/dev/null |
		grep -E '(LOST|THROTTLE)[A-Z_]* events: *[1-9]' | tr -s ' ' | tr '\n' ';')
	# perf script's complaint goes where the callers look (the recording's log, NAME.log).
	perf script --ns -i "$PERF_DATA" -F comm,tid,time,event,trace,ip,sym >"$PERF_DATA.txt" \
		2>"$PERF_DATA.err" || { grep -v "not valid for" "$PERF_DATA.err" >>"${PERF_DATA%.data}.log"; return 1; }
	PERF_WARN+=$(grep -iE 'out of order|lost' "$PERF_DATA.err" | head -2 | tr '\n' ';')
	python3 "$(dirname "${BASH_SOURCE[0]}")/perf_offcpu.py" "$PERF_DATA.txt" "${@:2}" >"$1"
}

# near A B TOL: A is B within TOL (both numbers).
near() { python3 -c "import sys; sys.exit(0 if abs($1 - $2) <= $3 else 1)"; }

# vs_perf NAME K P TOL [TRUTH]: the check NAME that kprof's value K is perf's P of the same run
# within TOL. When they differ and the fixture measured the same quantity itself (TRUTH, from
# its own clock), perf's side is judged by the truth too: if perf's record is off the truth by
# more than TOL (it lost switches under load: PERF_WARN says so when perf noticed) while kprof's
# is within TOL of it, kprof is right and the check says so (PERF_OFF=1 then); so it is when
# both are within TOL of the truth, on its two sides; otherwise it fails.
PERF_OFF=
vs_perf() {
	local name=$1 k=$2 p=$3 tol=$4 t=${5:-}
	if near "$k" "$p" "$tol"; then
		pass "$name: kprof $k vs perf $p (within $tol)"
	elif [ -n "$t" ] && near "$k" "$t" "$tol" && near "$p" "$t" "$tol"; then
		# Both within the tolerance of the truth, on its two sides (a loaded host moves
		# perf's record by a few points): kprof is right.
		pass "$name: kprof $k and perf $p are both the fixture's own $t (within $tol), on either side of it"
	elif [ -n "$t" ] && near "$k" "$t" "$tol"; then
		pass "$name: kprof $k is the fixture's own $t (within $tol); perf's record $p is off it${PERF_WARN:+ (perf: $PERF_WARN)}"
		PERF_OFF=1 # perf's record of this run lost waits: later checks of it may say so
	else
		local truth=
		[ -z "$t" ] || truth=", the fixture measured $t"
		fail "$name" "kprof $k vs perf $p (within $tol)$truth${PERF_WARN:+; perf: $PERF_WARN}"
	fi
}

# worker_vs_perf WHAT K P [shares]: the worker's waits, kprof's (K) against perf's (P), files of
# offcpu_check.py lines ("total N", "futex N", "sleep N"), both of the worker's whole run: its
# futex and sleep shares of its waits within 3 points, its off-CPU time within 5%, each judged
# by the fixture's own clock too ($MIX_OUT.out: its phases' wall times, and its wall time less
# its CPU time) when kprof's and perf's differ. With "shares", the shares only (kprof was away
# for a while: a restart).
worker_vs_perf() {
	local t k p c
	t=$(awk '$1 == "offcpu" { print $2 }' "$MIX_OUT.out")
	for c in futex sleep; do
		k=$(awk -v c=$c '$1 == c { k = $2 } $1 == "total" { t = $2 } END { printf "%.2f", t ? 100.0 * k / t : -100 }' "$2")
		p=$(awk -v c=$c '$1 == c { k = $2 } $1 == "total" { t = $2 } END { printf "%.2f", t ? 100.0 * k / t : -100 }' "$3")
		vs_perf "$1: the worker's $c share of its waits (points)" "$k" "$p" 3 \
			"$(awk -v c=$c -v t="$t" '$1 == c { printf "%.2f", t ? 100.0 * $2 / t : -100 }' "$MIX_OUT.out")"
	done
	[ "${4:-}" != shares ] || return 0
	k=$(awk '$1 == "total" { print $2 }' "$2")
	p=$(awk '$1 == "total" { print $2 }' "$3")
	vs_perf "$1: the worker's off-CPU time (ns)" "$k" "$p" "$((t / 20))" "$t"
}
