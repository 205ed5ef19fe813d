#!/usr/bin/env bash
# bench/hwbp.sh: what hardware execute breakpoints cost the target (issue 18).
#
# 1. The cost of one hit: bench/hwbp_hit.c calls an empty function HWBP_CALLS times without and
#    with a counting breakpoint on its entry (what `attach --calls=NAME` opens on anonymous code;
#    it checks that every call was counted).
# 2. The branch tracer (`kprofctl paths` on anonymous code: a breakpoint per loop branch, a BPF
#    program and a ring-buffer record per hit), on Node: tests/fixtures/mod3.js runs
#    mod3(HWBP_N) HWBP_M times after SIGUSR1 and prints the batch's wall time. Runs: untraced;
#    traced with each budget of HWBP_BUDGETS (branch hits; the groups of four take turns, each
#    with its share); and, on a smaller batch (mod3(9999) x 3, about 100,000 hits), traced for
#    the whole batch, which gives the cost per hit with BPF. HWBP_REPS runs of each, the order
#    rotating; medians. The Node processes are started before kprofd sees them and warmed up
#    (V8's optimized code exists and is in the perf map) before the batch.
# Output: Markdown on stdout and $BUILD/bench/hwbp.md. Nothing here asserts on time. Needs root.
set -euo pipefail
BUILD=${BUILD:-build}
HWBP_CALLS=${HWBP_CALLS:-200000}
HWBP_N=${HWBP_N:-1000000}
HWBP_M=${HWBP_M:-1000}
HWBP_BUDGETS=${HWBP_BUDGETS:-1000 10000}
HWBP_REPS=${HWBP_REPS:-3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. bench/lib.sh
need_root
need_cmds node
bench_start bench-hwbp
DIR=$TDIR
cp "$BUILD/kprofd" "$BUILD/kprofctl" "$DIR/"
cc -O2 -o "$DIR/hwbp_hit" bench/hwbp_hit.c
SOCK=$DIR/kprofd.sock
kprofd_start "$DIR/kprofd" "$DIR/kprofctl" "$SOCK" "" "$DIR/kprofd.log"
mkdir -p "$BUILD/bench"
ctl() { "$DIR/kprofctl" --socket "$SOCK" "$@"; }

# node_run N M BUDGET: one batch; BUDGET "-" untraced, 0 the whole batch. Prints "MS HITS".
node_run() {
	local n=$1 m=$2 budget=$3 np name hits=0
	node --perf-basic-prof tests/fixtures/mod3.js "$n" "$m" 2>"$DIR/node.err" >/dev/null &
	np=$!
	wait_ready "$DIR/node.err" ready 300 || true
	if [ "$budget" != - ]; then
		name=$(grep -a -o 'JS:\*mod3 .*' "/tmp/perf-$np.map" | tail -1)
		ctl paths "$np" "$name" --duration 600 --k 2 --top 0 --json \
			$([ "$budget" != 0 ] && echo --budget "$budget") \
			>"$DIR/p.json" 2>/dev/null &
		local c=$!
		for _ in $(seq 200); do
			ctl paths "$np" --show --json 2>/dev/null | grep -q '"state":"tracing"' && break
			[ "$budget" != 0 ] && ctl paths "$np" --show --json 2>/dev/null | grep -q '"end_reason":"budget"' && break
			sleep 0.05
		done
	fi
	kill -USR1 "$np"
	wait "$np" || true
	if [ "$budget" != - ]; then
		wait "$c" || true
		hits=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(b['taken']+b['not_taken'] for b in r['branches']))" "$DIR/p.json")
	fi
	rm -f "/tmp/perf-$np.map"
	echo "$(awk '/^done/ {print $3}' "$DIR/node.err") $hits"
}

echo "## Hardware breakpoints (issue 18): bench/hwbp.sh"
echo
echo "$(date_utc), Linux $(uname -r), $(nproc) CPUs, load before: $(loadavg), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
echo
echo "### One hit of a counting breakpoint (bench/hwbp_hit.c)"
echo
echo "| calls | ns per call, no breakpoint | ns per call, breakpoint | us per hit |"
echo "|---|---|---|---|"
for _ in $(seq "$HWBP_REPS"); do "$DIR/hwbp_hit" "$HWBP_CALLS"; done
echo
echo "### Node: mod3($HWBP_N) x $HWBP_M while its loop's branches are traced (kprofctl paths)"
echo
declare -A ms hits
for rep in $(seq "$HWBP_REPS"); do
	for b in - $HWBP_BUDGETS; do
		read -r t h < <(node_run "$HWBP_N" "$HWBP_M" "$b")
		ms[$b]="${ms[$b]:-} $t"; hits[$b]="${hits[$b]:-} $h"
		echo "bench/hwbp.sh: rep $rep budget $b: $t ms, $h hits" >&2
	done
done
base=$(median ${ms[-]})
echo "| trace | batch ms (median of $HWBP_REPS) | slowdown | branch hits counted |"
echo "|---|---|---|---|"
echo "| none | $base | 1.00x | - |"
for b in $HWBP_BUDGETS; do
	m=$(median ${ms[$b]})
	echo "| budget $b | $m | $(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2fx", a / b}') | $(median ${hits[$b]}) |"
done
echo
echo "### Node: mod3(9999) x 3, traced for the whole batch: cost per hit with BPF"
echo
ums=""; tms=""; th=""
for _ in $(seq "$HWBP_REPS"); do
	read -r t _ < <(node_run 9999 3 -); ums="$ums $t"
	read -r t h < <(node_run 9999 3 0); tms="$tms $t"; th="$th $h"
done
u=$(median $ums); t=$(median $tms); h=$(median $th)
echo "| untraced ms | traced ms | branch hits | us per hit |"
echo "|---|---|---|---|"
echo "| $u | $t | $h | $(awk -v u="$u" -v t="$t" -v h="$h" 'BEGIN {printf "%.2f", (t - u) * 1000 / h}') |"
