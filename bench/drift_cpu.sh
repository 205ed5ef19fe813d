#!/usr/bin/env bash
# bench/drift_cpu.sh: kprofd's CPU per sample with and without the profile-drift detector
# (ALGORITHMS.md §12), from the nanosecond CPU time of /proc/PID/schedstat, not the 10 ms ticks of
# `status`'s cpu_ns. Run as root: `bash bench/drift_cpu.sh BASE_BUILD NEW_BUILD [RUNS]`, where
# each build directory holds a kprofd (BASE_BUILD's from a commit before the detector), a
# kprofctl and a minijit. For each run, alternating the builds: one private kprofd, DRIFT_PROCS
# (default 4) `minijit --phase 40` or, with DRIFT_LOAD=node, node tests/fixtures/drift.js, all
# attached at DRIFT_FREQ Hz (default 4999); after DRIFT_WARMUP s (3), kprofd's CPU time and its
# samples (`status --json`: samples_total) over DRIFT_SECONDS (20). Prints one line per run and
# the medians, in Markdown.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BASE=${1:?usage: drift_cpu.sh BASE_BUILD NEW_BUILD [RUNS]}
NEW=${2:?usage: drift_cpu.sh BASE_BUILD NEW_BUILD [RUNS]}
RUNS=${3:-3}
PROCS=${DRIFT_PROCS:-4}
FREQ=${DRIFT_FREQ:-4999}
WARMUP=${DRIFT_WARMUP:-3}
SECONDS_RUN=${DRIFT_SECONDS:-20}
LOAD=${DRIFT_LOAD:-minijit}
ROOT=$BENCH_ROOT
bench_start driftcpu

cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
samples() {
	"$2/kprofctl" --socket "$1" status --json | python3 -c "import json,sys
s=json.load(sys.stdin); print(s.get('samples_total', s.get('samples', 0)))"
}

one() { # BUILD -> "cpu_ns samples"
	local b=$1 d pids=() k p c0 c1 s0 s1
	d=$(mktemp -d "$TDIR/run.XXXXXX")
	kprofd_start "$b/kprofd" "$b/kprofctl" "$d/s" "" "$d/log"
	k=$DAEMON_PID
	for _ in $(seq "$PROCS"); do
		if [ "$LOAD" = node ]; then
			(cd "$d" && exec node --perf-basic-prof "$ROOT/tests/fixtures/drift.js" 3600) >/dev/null 2>&1 &
		else
			"$b/minijit" --phase 40 --seconds 0 >/dev/null 2>&1 &
		fi
		pids+=($!)
	done
	sleep 1
	for p in "${pids[@]}"; do "$b/kprofctl" --socket "$d/s" attach "$p" --freq "$FREQ" >/dev/null; done
	sleep "$WARMUP"
	c0=$(cpu_ns "$k"); s0=$(samples "$d/s" "$b")
	sleep "$SECONDS_RUN"
	c1=$(cpu_ns "$k"); s1=$(samples "$d/s" "$b")
	kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
	kprofd_stop "$k"
	rm -rf "$d"
	echo "$((c1 - c0)) $((s1 - s0))"
}

echo "| Run | Build | Samples | kprofd CPU | CPU per sample |"
echo "|---:|---|---:|---:|---:|"
declare -A per
for r in $(seq "$RUNS"); do
	for b in "$BASE" "$NEW"; do
		read -r c s < <(one "$b")
		ps=$(python3 -c "print(f'{$c / max(1, $s) / 1000:.3f}')")
		per[$b]="${per[$b]:-} $ps"
		echo "| $r | $b | $s | $((c / 1000000)) ms | $ps us |"
	done
done
for b in "$BASE" "$NEW"; do
	python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[2:]]
print(f'| median | {sys.argv[1]} | | | **{statistics.median(v):.3f} us** |')" "$b" ${per[$b]}
done
