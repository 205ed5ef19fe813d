#!/usr/bin/env bash
# bench/threads.sh: what per-thread sampling events change (issue 16), side by side in one run.
#
# 1. Local timer interrupts a second (/proc/interrupts LOC, summed over the CPUs, over
#    IRQ_SECONDS) while one process that sleeps (threadmill: 5 threads, all blocked) is profiled
#    at 999 Hz by: nothing; kprof before (the build in BEFORE, per-CPU events); kprof after
#    (this BUILD, per-thread events); `perf record -F 999 -g -p PID`. Each profiler is started
#    for its window and stopped after (a kprofd with nothing attached sleeps too). IRQ_ROUNDS
#    rounds, the order of the modes turned by one each round, so drift and the bursts of other
#    work on the machine spread over all of them; the table gives the median (min, max). LOC
#    counts every timer on the machine: another kprofd with per-CPU events, a perf or a
#    benchmark adds thousands a second, so each window first waits (up to QUIET_WAIT s) until
#    none runs, is measured again (up to 5 times) when one started meanwhile, and the output
#    says how many windows could not be kept clear.
# 2. kprofd's CPU per sample on a busy minijit at 999 Hz, before and after: `kprofctl status
#    --json` (cpu_ns, samples) 2 s after the attach and CPU_SECONDS later; the ratio of the
#    deltas. CPU_ROUNDS alternated pairs. Each kprofd first profiles dd for a second, so that
#    what it loads once (the kernel's symbols, 0.05-0.1 s) is not in the window.
# 3. What a thread storm costs the target: threads threadmill's 4 creators start and join (each
#    burns 100 us) in STORM_SECONDS, unprofiled and profiled at 999 Hz by each profiler, whose
#    per-thread events are copied into every new thread. STORM_ROUNDS rounds.
#
# Environment: BUILD (default build), BEFORE (a build directory of the version to compare, with
# kprofd and kprofctl; empty: that mode is left out), IRQ_SECONDS (10), IRQ_ROUNDS (3), CPU_ROUNDS
# (3), CPU_SECONDS (10), QUIET_WAIT (900). Output: the tables on stdout and in
# $BUILD/bench/threads.md. As root.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
BEFORE=${BEFORE:-}
IRQ_SECONDS=${IRQ_SECONDS:-10}
IRQ_ROUNDS=${IRQ_ROUNDS:-3}
CPU_ROUNDS=${CPU_ROUNDS:-3}
CPU_SECONDS=${CPU_SECONDS:-10}
QUIET_WAIT=${QUIET_WAIT:-900}
STORM_SECONDS=${STORM_SECONDS:-5}
STORM_ROUNDS=${STORM_ROUNDS:-3}
OUT=$BUILD/bench/threads.md

need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/threadmill" "$BUILD/minijit"
[ -z "$BEFORE" ] || [ -x "$BEFORE/kprofd" ] || die "BEFORE=$BEFORE has no kprofd"
need_root
command -v perf >/dev/null || echo "bench/threads.sh: perf not found: its mode is left out" >&2

bench_start bench-threads
TM= PERF=
bench_on_exit() {
	[ -n "$PERF" ] && kill -INT "$PERF" 2>/dev/null && wait "$PERF" 2>/dev/null
	[ -n "$TM" ] && kill "$TM" 2>/dev/null && wait "$TM" 2>/dev/null
}

# quiet: wait (QUIET_WAIT s at most) until no other kprofd, perf, bpftrace or kprof benchmark runs
quiet() { quiet_wait "$QUIET_WAIT"; }
others() { busy_pids; }
# daemon_start DIR: a kprofd of build DIR on a private socket; sets DAEMON_PID, CTL
daemon_start() {
	CTL="$1/kprofctl --socket $TDIR/s"
	kprofd_start "$1/kprofd" "$1/kprofctl" "$TDIR/s" "" "$TDIR/kprofd.log"
}
daemon_stop() { kprofd_stop "$DAEMON_PID"; DAEMON_PID=; }
jkey() { json_get "['$1']"; }

# The sleeping target: threadmill's main thread waits for signals, its 4 others pause.
"$BUILD/threadmill" -t 4 2>"$TDIR/tm.err" &
TM=$!
wait_ready "$TDIR/tm.err" ready 50 || true

modes=(none after)
[ -n "$BEFORE" ] && modes=(none before after)
command -v perf >/dev/null && modes+=(perf)
declare -A irq
# window MODE: LOC/s over IRQ_SECONDS with MODE profiling the sleeping target
window() {
	local a b runs0 runs1
	case $1 in
	before) daemon_start "$BEFORE"; $CTL attach "$TM" --freq 999 >/dev/null ;;
	after)
		daemon_start "$BUILD"; $CTL attach "$TM" --freq 999 >/dev/null
		runs0=$($CTL status --json | jkey sampler_runs)
		;;
	perf)
		perf record -q -F 999 -g -p "$TM" -o "$TDIR/perf.data" >/dev/null 2>&1 &
		PERF=$!
		;;
	esac
	sleep 1
	a=$(loc); sleep "$IRQ_SECONDS"; b=$(loc)
	case $1 in
	before) daemon_stop ;;
	after)
		runs1=$($CTL status --json | jkey sampler_runs)
		echo "  after: kp_sample ran $((runs1 - runs0)) times in the window" >&2
		daemon_stop
		;;
	perf) kill -INT "$PERF"; wait "$PERF" 2>/dev/null || true; PERF= ;;
	esac
	echo $(((b - a) / IRQ_SECONDS))
}
for ((r = 0; r < IRQ_ROUNDS; r++)); do
	for ((i = 0; i < ${#modes[@]}; i++)); do
		m=${modes[$(((i + r) % ${#modes[@]}))]}
		for try in 1 2 3 4 5; do
			quiet || true
			v=$(window "$m")
			[ -z "$(others)" ] && break
			echo "  round $((r + 1)) $m: $v LOC/s, but another profiler started: again" >&2
			[ "$try" -lt 5 ] || NOISY=$((NOISY + 1))
		done
		echo "round $((r + 1)) $m: $v LOC/s" >&2
		irq[$m]="${irq[$m]:-} $v"
	done
done
kill "$TM"; wait "$TM" 2>/dev/null || true; TM=
NOISY_IRQ=$NOISY

# kprofd's CPU per sample on a busy minijit at 999 Hz
declare -A cps
cpu_run() {
	local dir=$1 mj s0 s1 c0 c1
	daemon_start "$dir"
	warm_kernel_symbols $CTL
	"$BUILD/minijit" --seconds $((CPU_SECONDS + 5)) >/dev/null 2>"$TDIR/mj.err" &
	mj=$!
	wait_ready "$TDIR/mj.err" ready 50 || true
	$CTL attach "$mj" --freq 999 >/dev/null
	sleep 2
	read -r s0 c0 < <($CTL status --json | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['samples'], j['cpu_ns'])")
	sleep "$CPU_SECONDS"
	read -r s1 c1 < <($CTL status --json | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['samples'], j['cpu_ns'])")
	wait "$mj" 2>/dev/null || true
	daemon_stop
	python3 -c "print('%.2f %d' % (($c1 - $c0) / 1000 / max(1, $s1 - $s0), $s1 - $s0))"
}
cmodes=(after)
[ -n "$BEFORE" ] && cmodes=(before after)
for ((r = 0; r < CPU_ROUNDS; r++)); do
	for ((i = 0; i < ${#cmodes[@]}; i++)); do
		m=${cmodes[$(((i + r) % ${#cmodes[@]}))]}
		[ "$m" = before ] && d=$BEFORE || d=$BUILD
		quiet || true
		v=$(cpu_run "$d")
		echo "round $((r + 1)) $m: ${v% *} us per sample (${v#* } samples)" >&2
		cps[$m]="${cps[$m]:-} ${v% *}"
	done
done

# A thread storm: threads created in STORM_SECONDS with MODE profiling threadmill
declare -A storm
storm_run() {
	local tm n
	"$BUILD/threadmill" -t 0 -c 4 -w 100 2>"$TDIR/st.err" &
	tm=$!
	wait_ready "$TDIR/st.err" ready 50 || true
	case $1 in
	before) daemon_start "$BEFORE"; $CTL attach "$tm" --freq 999 >/dev/null ;;
	after) daemon_start "$BUILD"; $CTL attach "$tm" --freq 999 >/dev/null ;;
	perf)
		perf record -q -F 999 -g -p "$tm" -o "$TDIR/perf.data" >/dev/null 2>&1 &
		PERF=$!
		sleep 1
		;;
	esac
	kill -USR2 "$tm"; sleep "$STORM_SECONDS"; kill -USR2 "$tm"
	wait_ready "$TDIR/st.err" "storm stopped" || true
	n=$(sed -n 's/storm stopped: \([0-9]*\) threads/\1/p' "$TDIR/st.err")
	case $1 in
	before | after) daemon_stop ;;
	perf) kill -INT "$PERF"; wait "$PERF" 2>/dev/null || true; PERF= ;;
	esac
	kill "$tm"; wait "$tm" 2>/dev/null || true
	echo $((n / STORM_SECONDS))
}
for ((r = 0; r < STORM_ROUNDS; r++)); do
	for ((i = 0; i < ${#modes[@]}; i++)); do
		m=${modes[$(((i + r) % ${#modes[@]}))]}
		quiet || true
		v=$(storm_run "$m")
		echo "round $((r + 1)) $m: $v threads/s" >&2
		storm[$m]="${storm[$m]:-} $v"
	done
done

label() {
	case $1 in
	none) echo "nothing attached" ;;
	before) echo "kprof before (per-CPU events)" ;;
	after) echo "kprof after (per-thread events)" ;;
	perf) echo "perf record -F 999 -g -p PID" ;;
	esac
}
mkdir -p "$(dirname "$OUT")"
{
	echo "Local timer interrupts a second, a sleeping 5-thread process profiled at 999 Hz, ${IRQ_SECONDS} s windows, median (min, max) of $IRQ_ROUNDS rounds:"
	echo
	echo "| profiler | LOC interrupts/s |"
	echo "|---|---:|"
	for m in "${modes[@]}"; do echo "| $(label "$m") | $(med3 ${irq[$m]}) |"; done
	[ "$NOISY_IRQ" -eq 0 ] || echo "($NOISY_IRQ windows ran while another profiler or benchmark did.)"
	echo
	echo "kprofd's CPU per sample, minijit (busy) at 999 Hz, ${CPU_SECONDS} s windows, median (min, max) of $CPU_ROUNDS runs:"
	echo
	echo "| kprofd | CPU per sample (us) |"
	echo "|---|---:|"
	for m in "${cmodes[@]}"; do echo "| $(label "$m") | $(med3 ${cps[$m]}) |"; done
	echo
	echo "A thread storm (4 creators, threads of 100 us), threads created a second, ${STORM_SECONDS} s, median (min, max) of $STORM_ROUNDS rounds:"
	echo
	echo "| profiler | threads/s |"
	echo "|---|---:|"
	for m in "${modes[@]}"; do echo "| $(label "$m") | $(med3 ${storm[$m]}) |"; done
	[ "$NOISY" -eq "$NOISY_IRQ" ] ||
		echo "($((NOISY - NOISY_IRQ)) CPU or storm runs started while another profiler or benchmark ran.)"
} | tee "$OUT"
