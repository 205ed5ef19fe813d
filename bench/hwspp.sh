#!/usr/bin/env bash
# bench/hwspp.sh: structural path profiling of anonymous code by hardware breakpoints (paths
# --structural on minijit --anon and on Node; docs/BENCHMARKS.md "Structural path profiling of
# anonymous code").
#
# 1. minijit --anon, mj_fig1 / mj_two / mj_paths, budgets HWSPP_BUDGETS local paths: kprof's
#    structural profile (one structure graph per turn of the debug registers) against the
#    complete profile of minijit's own block trace of the same run, replayed through spp.c
#    (spp_bench --dump; tests/integration/hwspp_truth.py): the overlap percentage of the global
#    profiles, next to what spp.c itself gets with the same budget on the complete trace (what
#    the uprobe tracer's SPP would count: spp_bench), and the paths kprof gave up.
# 2. Node, tests/fixtures/fig1.js (outer loop entered 1 call in 16, 3 trips around 20 inner
#    trips): each loop's entries per call from the coefficients against the JS counts, and
#    perf record -g -p PID over the same seconds: perf has no path profile, so what is compared
#    is fig1's share of the samples (perf's and kprof's sampler's).
# Output: Markdown on stdout and $BUILD/bench/hwspp.md. Asserts nothing. Needs root.
set -euo pipefail
BUILD=${BUILD:-build}
HWSPP_BUDGETS=${HWSPP_BUDGETS:-100 1000 10000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. bench/lib.sh
[ "$(id -u)" -eq 0 ] || { echo "bench/hwspp.sh: must run as root" >&2; exit 1; }
make -s BUILD="$BUILD" "$BUILD/spp_bench" "$BUILD/minijit" >/dev/null
DIR=$(mktemp -d /tmp/kprof-bench-hwspp.XXXXXX)
chmod 755 "$DIR"
cp "$BUILD/kprofd" "$BUILD/kprofctl" "$DIR/"
SOCK=$DIR/kprofd.sock
"$DIR/kprofd" --socket "$SOCK" --state-dir "" 2>"$DIR/kprofd.log" &
KD=$!
trap 'kprofd_stop $KD; rm -rf "$DIR"' EXIT
kprofd_wait_up "$DIR/kprofctl" "$SOCK" "$KD" || { echo "kprofd did not come up" >&2; exit 1; }
mkdir -p "$BUILD/bench"
ctl() { "$DIR/kprofctl" --socket "$SOCK" "$@"; }
out=$BUILD/bench/hwspp.md
{
	echo "| function | budget | kprof hw SPP overlap | spp.c, same budget, complete trace | graphs profiled | paths given up |"
	echo "|---|---:|---:|---:|---|---:|"
} >"$out"

# mj NAME FUNC ARGS...: one run per budget.
mj() {
	local name=$1 fn=$2 b p c
	shift 2
	for b in $HWSPP_BUDGETS; do
		"$BUILD/minijit" --anon --wait-usr1 --rounds 2 --print-code --cleanup "$@" "$DIR/tr" \
			>"$DIR/code" 2>"$DIR/mj.err" &
		p=$!
		for _ in $(seq 100); do grep -qs ready "$DIR/mj.err" && break; sleep 0.1; done
		ctl paths "$p" "$fn" --structural --spp-budget "$b" --duration 120 --top 0 --json \
			>"$DIR/p.json" 2>"$DIR/p.err" &
		c=$!
		for _ in $(seq 100); do
			ctl paths "$p" --show --json 2>/dev/null | grep -q '"state":"tracing"' && break
			sleep 0.1
		done
		kill -USR1 "$p"
		wait "$p" || true
		wait "$c" || true
		if ! [ -s "$DIR/p.json" ]; then
			echo "| $name | $b | (kprofctl failed: $(tail -1 "$DIR/p.err")) | | | |" >>"$out"
			continue
		fi
		"$BUILD/spp_bench" --dump "$DIR/code" "$DIR/tr" >"$DIR/truth.json"
		python3 tests/integration/hwspp_truth.py "$DIR/truth.json" "$DIR/p.json" >"$DIR/cmp.txt" || true
		ref=$("$BUILD/spp_bench" "$DIR/code" "$DIR/tr" "$b" | awk -F'|' '$2 ~ /[0-9]/ { print $3 }')
		python3 - "$DIR/p.json" "$DIR/cmp.txt" "$name" "$b" "$ref" >>"$out" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
s = r["spp"]
m = re.search(r"global profiles overlap ([0-9.]+)%", open(sys.argv[2]).read())
prof = sum(1 for g in s["graphs"] if g["counted"])
print(f"| {sys.argv[3]} | {sys.argv[4]} | {m.group(1) if m else '?'}% | {sys.argv[5].strip()} |"
      f" {prof} of {len(s['graphs'])} | {s['hw_given_up']} |")
PY
	done
}
mj "mj_fig1 (Fig. 1: loops entered 1 call in 16)" mj_fig1 --fig1 10000 --fig1-trace
mj "mj_two (two loops of 500 trips)" mj_two --two 2000 --two-trace
mj "mj_paths (nested, early exit)" mj_paths --paths 10000 --paths-trace

# Node: fig1.js, traced, and perf record over the same seconds.
command -v node >/dev/null || { cat "$out"; echo "(node not installed)"; exit 0; }
(cd "$DIR" && exec node --perf-basic-prof --no-turbo-loop-peeling --no-turbo-inlining \
	"$root/tests/fixtures/fig1.js" 20 2000) 2>"$DIR/node.err" >/dev/null &
np=$!
for _ in $(seq 300); do grep -q ready "$DIR/node.err" && break; sleep 0.1; done
name=$(grep -a -o 'JS:\*fig1 .*' "/tmp/perf-$np.map" | tail -1)
ctl attach "$np" >/dev/null
perf record -g -F 999 -p "$np" -o "$DIR/perf.data" -- sleep 4 >/dev/null 2>&1 &
pr=$!
ctl paths "$np" "$name" --structural --spp-budget 3000 --duration 4 --events --top 0 --json \
	>"$DIR/n.json" 2>/dev/null || true
wait "$pr" || true
ctl report "$np" --top 0 --json >"$DIR/rep.json"
perf report -i "$DIR/perf.data" --stdio --no-children --sort sym 2>/dev/null >"$DIR/perf.txt" || true
kill "$np"
wait "$np" 2>/dev/null || true
python3 - "$DIR/n.json" "$DIR/rep.json" "$DIR/perf.txt" >>"$out" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
g = r["spp"]["graphs"]
calls = g[0]["counted"]
e = [x["coefficient"] * x["entries"] / calls for x in g]
rep = json.load(open(sys.argv[2]))
ks = sum(x["self"] for x in rep["entries"] if "fig1" in x["function"])
kt = sum(x["self"] for x in rep["entries"])
ps = sum(float(m.group(1)) for m in re.finditer(r"^\s+([0-9.]+)%.*fig1", open(sys.argv[3]).read(), re.M))
print()
print("| Node fig1.js | JS | kprof (structural, hw) |\n|---|---:|---:|")
print(f"| outer loop entries per call | 0.0625 | {e[1]:.4f} |")
print(f"| inner loop entries per call | 0.1875 | {e[2]:.4f} |")
print(f"| graphs: breakpoints / assumed | | {[(x['hw_breakpoints'], x['hw_assumed']) for x in g]} |")
print(f"| fig1's share of samples: perf record -g -p / kprof sampler | | {ps:.1f}% / {100 * ks / kt if kt else 0:.1f}% |")
PY
cat "$out"
