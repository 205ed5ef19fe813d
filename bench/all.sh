#!/usr/bin/env bash
# bench/all.sh: what system-wide mode (kprofctl attach --all) costs, beside perf record -a.
#
# Windows of WINDOW seconds, ROUNDS rounds, the order of the modes turned by one each round:
#   none   nothing profiles (a kprofd runs, system-wide mode off: it sleeps);
#   kprof  kprofctl attach --all --freq FREQ for the window, detach --all after;
#   perf   perf record -a -g -F FREQ -o a temporary file, for the window.
# Per window: local timer interrupts a second (/proc/interrupts LOC, summed over the CPUs), the
# profiler's CPU time (kprofd's, or perf's: utime + stime of /proc/PID/stat, in % of one CPU),
# the samples it took a second (kprof: the set's runs in `status`; perf: the samples in its
# file). After each kprof window: kprofd's profile memory (`status` profile_bytes) and symbol
# memory over its targets (attached and kept), and its RSS. The table gives the median (min,
# max) of each. The machine's other work shows in every column; compare within a row. Then a
# storm of STORM (1000) processes with each profiler: its time, the profiler's CPU over it.
#
# Environment: BUILD (default build), WINDOW (10), ROUNDS (3), FREQ (19), STORM (1000). Output: the table on
# stdout and in $BUILD/bench/all.md. As root.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
WINDOW=${WINDOW:-10}
ROUNDS=${ROUNDS:-3}
FREQ=${FREQ:-19}
OUT=$BUILD/bench/all.md
bench_start bench-all
TMP=$TDIR
SOCK=$TMP/kprofd.sock
CTL() { "$BUILD/kprofctl" --socket "$SOCK" "$@"; }
mkdir -p "$BUILD/bench"

sw() { CTL status --json | json_get "$1"; }
HZ=$(getconf CLK_TCK)

kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$SOCK" "$TMP/state" "$TMP/kprofd.log"
KD=$DAEMON_PID

declare -A LOCS CPUS RATES
MEMS=$TMP/mems # window runs in a subshell: its memory lines go through a file
window() { # MODE: prints "loc/s cpu% samples/s"
	local mode=$1 l0 l1 c0 c1 p r0 r1 n
	case $mode in
	none)
		l0=$(loc); sleep "$WINDOW"; l1=$(loc)
		echo "$(((l1 - l0) / WINDOW)) 0 0"
		;;
	kprof)
		CTL attach --all --freq "$FREQ" >/dev/null
		sleep 1 # the first attaches (kernel symbols, the processes running) out of the window
		r0=$(sw "['system_wide']['runs']"); c0=$(cpu_ticks "$KD"); l0=$(loc)
		sleep "$WINDOW"
		l1=$(loc); c1=$(cpu_ticks "$KD"); r1=$(sw "['system_wide']['runs']")
		local pb tg sb
		pb=$(sw "['profile_bytes']"); sb=$(sw "['symbol_bytes']")
		tg=$(($(sw "['targets_attached']") + $(sw "['targets_kept']")))
		echo "$pb $sb $tg $(rss_kb "$KD")" >>"$MEMS"
		CTL detach --all >/dev/null
		echo "$(((l1 - l0) / WINDOW)) $(python3 -c "print(f'{100 * ($c1 - $c0) / $HZ / $WINDOW:.2f}')") $(((r1 - r0) / WINDOW))"
		;;
	perf)
		perf record -q -a -g -F "$FREQ" -o "$TMP/perf.data" -- sleep "$((WINDOW + 1))" >/dev/null 2>&1 &
		p=$!
		sleep 0.5
		c0=$(cpu_ticks "$p"); l0=$(loc)
		sleep "$WINDOW"
		l1=$(loc); c1=$(cpu_ticks "$p" 2>/dev/null || echo "$c0")
		wait "$p" || true
		n=$(perf script -i "$TMP/perf.data" -F pid -G 2>/dev/null | wc -l)
		echo "$(((l1 - l0) / WINDOW)) $(python3 -c "print(f'{100 * ($c1 - $c0) / $HZ / $WINDOW:.2f}')") $((n / (WINDOW + 1)))"
		;;
	esac
}

MODES=(none kprof perf)
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < 3; k++)); do
		m=${MODES[$(((k + r) % 3))]}
		read -r l c s < <(window "$m")
		LOCS[$m]+="$l "; CPUS[$m]+="$c "; RATES[$m]+="$s "
		echo "round $r $m: LOC/s $l, CPU $c %, samples/s $s" >&2
	done
done

# A storm: a shell loop of STORM processes (/bin/true) with --all on, and under perf record -a:
# its wall time, the profiler's CPU over it, and what kprofd made of the processes.
STORM=${STORM:-1000}
storm() { local t0 t1; t0=$(date +%s.%N); bash -c "for i in \$(seq $STORM); do /bin/true; done"; t1=$(date +%s.%N); python3 -c "print(f'{$t1 - $t0:.2f}')"; }
CTL attach --all --freq "$FREQ" >/dev/null
sleep 1
p0=$(sw "['system_wide']['profiled']"); g0=$(sw "['system_wide']['gone']"); c0=$(cpu_ticks "$KD")
ST_K=$(storm)
sleep 1
c1=$(cpu_ticks "$KD"); p1=$(sw "['system_wide']['profiled']"); g1=$(sw "['system_wide']['gone']")
CTL detach --all >/dev/null
STORM_K="$ST_K s, kprofd CPU $(python3 -c "print(f'{($c1 - $c0) / $HZ:.3f}')") s, $((p1 - p0)) processes profiled, $((g1 - g0)) gone before read (counted)"
perf record -q -a -g -F "$FREQ" -o "$TMP/perf.data" -- sleep 3600 >/dev/null 2>&1 &
PP=$!
sleep 0.5
c0=$(cpu_ticks "$PP")
ST_P=$(storm)
c1=$(cpu_ticks "$PP")
kill -INT "$PP"; wait "$PP" || true
STORM_P="$ST_P s, perf CPU $(python3 -c "print(f'{($c1 - $c0) / $HZ:.3f}')") s (recording; perf report not counted)"

{
	echo "System-wide sampling at $FREQ Hz on $(nproc) CPUs, $ROUNDS rounds of $WINDOW s, median (min, max):"
	echo
	echo "| mode | local timer interrupts/s | profiler CPU, % of one CPU | samples/s |"
	echo "|---|---|---|---|"
	echo "| nothing | $(med3 ${LOCS[none]}) | - | - |"
	echo "| kprofctl attach --all --freq $FREQ | $(med3 ${LOCS[kprof]}) | $(med3 ${CPUS[kprof]}) | $(med3 ${RATES[kprof]}) |"
	echo "| perf record -a -g -F $FREQ | $(med3 ${LOCS[perf]}) | $(med3 ${CPUS[perf]}) | $(med3 ${RATES[perf]}) |"
	echo
	echo "A storm of $STORM processes (a shell loop of /bin/true) at $FREQ Hz:"
	echo
	echo "* kprofctl attach --all: $STORM_K"
	echo "* perf record -a -g: $STORM_P"
	echo
	echo "kprofd after each --all window (profile bytes, symbol bytes, targets attached + kept, RSS KiB):"
	while read -r pb sb tg rss; do
		echo "* $tg targets: profiles $pb B ($((pb / (tg ? tg : 1))) B a target), symbols $sb B, RSS $rss KiB"
	done <"$MEMS"
} | tee "$OUT"
