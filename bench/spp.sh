#!/usr/bin/env bash
# bench/spp.sh: structural (SPP) vs flat Ball-Larus path profiling at equal budgets, on real
# minijit traces (issue 19 item 2; docs/BENCHMARKS.md "Structural path profiling").
#
# For each seed, minijit runs 20000 calls of mj_paths and of mj_fig1 (the SPP paper's Fig. 1:
# nested loops rarely entered, then iterating), and 4000 calls of mj_two (two loops of 500 trips
# one after the other, the shape of the paper's compress and db), writing its code (--print-code) and the
# interpreter's path traces; spp_bench replays each trace into SPP and flat profiles with
# budgets of 100 to 10000 local paths and prints their overlap with the complete profile of the
# run. The table is the mean (and the minimum) over SEEDS runs. No root needed; asserts nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
SEEDS=${SEEDS:-10}
out=$BUILD/bench/spp
mkdir -p "$out"
make -s BUILD="$BUILD" "$BUILD/minijit" "$BUILD/spp_bench" >/dev/null
for s in $(seq 1 "$SEEDS"); do
	for cfg in paths fig1 fig1rarer two; do
		case $cfg in
		paths) args=(--paths 5000 --paths-trace "$out/$cfg.$s.trace") ;;
		fig1) args=(--fig1 5000 --fig1-trace "$out/$cfg.$s.trace") ;;
		fig1rarer) args=(--fig1 5000 --fig1-rarer --fig1-trace "$out/$cfg.$s.trace") ;;
		two) args=(--two 1000 --two-trace "$out/$cfg.$s.trace") ;;
		esac
		"$BUILD/minijit" --seed "$s" --rounds 4 --print-code --cleanup "${args[@]}" \
			>"$out/$cfg.$s.code" 2>/dev/null
		"$BUILD/spp_bench" "$out/$cfg.$s.code" "$out/$cfg.$s.trace" >"$out/$cfg.$s.md"
		rm -f "$out/$cfg.$s.trace" # mj_two's are 24 MB
	done
done
python3 - "$out" "$SEEDS" <<'PY'
import collections, sys
out, seeds = sys.argv[1], int(sys.argv[2])
names = {"paths": "mj_paths", "fig1": "mj_fig1 (loops entered 1 in 16, 24 trips)",
         "fig1rarer": "mj_fig1 --fig1-rarer (entered 1 in 64, 24 trips)",
         "two": "mj_two (two loops of 500 trips in a row; 4000 calls)"}
print(f"Overlap with the complete profile, mean (min) over {seeds} runs\n")
print("| function | budget | SPP | flat Ball-Larus |\n|---|---:|---:|---:|")
for cfg, name in names.items():
    spp, flat = collections.defaultdict(list), collections.defaultdict(list)
    for s in range(1, seeds + 1):
        for line in open(f"{out}/{cfg}.{s}.md"):
            w = [x.strip() for x in line.split("|")]
            if len(w) > 4 and w[1].isdigit():
                spp[int(w[1])].append(float(w[2].rstrip("%")))
                flat[int(w[1])].append(float(w[3].rstrip("%")))
    for b in sorted(spp):
        m = lambda v: f"{sum(v) / len(v):.1f}% ({min(v):.1f}%)"
        print(f"| {name} | {b} | {m(spp[b])} | {m(flat[b])} |")
PY
