#!/usr/bin/env bash
# resolve.sh: what naming one address costs kprofd (tsym_resolve), per kind of address, for one
# build of bench/resolve_bench.c or two compared (docs/BENCHMARKS.md, "Symbol sources behind
# one table"). Needs root (the kernel's symbols).
#
#   bash bench/resolve.sh [BIN_A [BIN_B]]        default: $BUILD/resolve_bench (BUILD=build)
#
# Time: the binaries run alternately RESOLVE_ROUNDS times (4), each run RESOLVE_LOOKUPS lookups
# per kind (1000000), the median of 5 repetitions; printed per kind: every round's figure and
# their median, in ns of CPU time per resolve. A shared machine moves these by several percent
# from run to run, hence the alternation.
# Instructions: with valgrind installed, the instructions per resolve (callgrind, the
# difference of a run of 60000 lookups and one of 20000), a figure the machine's load does not
# move. Under valgrind the benchmark names none of its user addresses (only its kernel ones),
# so only "kernel" and "anon" are counted: "anon" is the path where no source names the
# address (every user source asked, the files read again if due, then "[anon]").
set -eu
BUILD=${BUILD:-build}
ROUNDS=${RESOLVE_ROUNDS:-4}
LOOKUPS=${RESOLVE_LOOKUPS:-1000000}
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$BUILD/resolve_bench")
for b in "${BINS[@]}"; do [ -x "$b" ] || { echo "resolve.sh: $b: not built (make $BUILD/resolve_bench)" >&2; exit 2; }; done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$ROUNDS"); do
	for i in "${!BINS[@]}"; do
		"${BINS[$i]}" --lookups "$LOOKUPS" --reps 5 2>/dev/null |
			awk -F'|' -v b="$i" '$2 ~ /^ [a-z]+ $/ { gsub(/ /, "", $2); print b, $2, $3 + 0 }' >>"$out"
	done
done
echo "| Addresses | $(for b in "${BINS[@]}"; do printf '%s: ns per resolve, rounds (median) | ' "$b"; done)"
echo "|---|$(for b in "${BINS[@]}"; do printf -- '---|'; done)"
python3 - "$out" "${#BINS[@]}" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    b, kind, ns = line.split()
    rows.setdefault(kind, {}).setdefault(int(b), []).append(float(ns))
for kind in ("jit", "native", "vdso", "kernel", "anon"):
    if kind in rows:
        cells = [", ".join("%.1f" % v for v in rows[kind].get(b, [])) +
                 " (**%.1f**)" % statistics.median(rows[kind][b]) if rows[kind].get(b) else "-"
                 for b in range(int(sys.argv[2]))]
        print("| %s | %s |" % (kind, " | ".join(cells)))
PY

command -v valgrind >/dev/null || exit 0
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | awk '/Collected/ { print $4 }'; }
echo
echo "| Addresses | $(for b in "${BINS[@]}"; do printf '%s: instructions per resolve | ' "$b"; done)"
echo "|---|$(for b in "${BINS[@]}"; do printf -- '---:|'; done)"
for kind in kernel anon; do
	row="| $kind |"
	for b in "${BINS[@]}"; do
		a=$(ir "$b" --only "$kind" --lookups 20000 --reps 1)
		z=$(ir "$b" --only "$kind" --lookups 60000 --reps 1)
		row="$row $(((z - a) / 40000)) |"
	done
	echo "$row"
done
