#!/usr/bin/env bash
# bench/budget.sh: what each probe mode costs its target under kprofd's default budget (issue
# 28): `paths` (uprobes on file-backed code, hardware breakpoints on anonymous code),
# `paths --structural`, `paths --events`, `attach --calls` and `--calls=hot:N`, each with
# kprofd's defaults (no --max-slowdown: [limits] probe_slowdown_pct, 1.1x), on minijit and Node.
#
# Each mode gets a fresh workload that reports its own work per CPU second (`minijit
# --progress`, tests/fixtures/rate.js: a line "progress cpu_ns N rounds N" every 0.2 s),
# attached first with kprofd's defaults (99 Hz; exact mode's attach is its own). Its rate over BU_BEFORE progress lines before
# the mode, over the mode's BU_SECONDS (paths: --duration; calls: from the attach to the
# detach), and over BU_BEFORE lines after; the base is the mean of before and after. The
# workload's slowdown is base / traced; kprof's is the one it states (the paths reply's
# `slowdown`, the target's `calls_slowdown` in `list --json`); what the budget cost in coverage
# is what kprof says of it (the trace's end reason and its traced time, exact mode's times off).
# Output: a Markdown table on stdout and $BUILD/bench/budget.md; progress on stderr. Nothing
# here asserts on time. BU_SHORT=1 (make bench): one mode per workload, 5 s each.
#   BUILD=build bash bench/budget.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-build}
BU_SECONDS=${BU_SECONDS:-10}
BU_BEFORE=${BU_BEFORE:-12}
BU_SHORT=${BU_SHORT:-}
[ -n "$BU_SHORT" ] && BU_SECONDS=5
need_root
need_ints BU_SECONDS BU_BEFORE
need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit"
need_cmds python3
bench_start budget
cp "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit" "$TDIR/"
SOCK=$TDIR/kprofd.sock
kprofd_start "$TDIR/kprofd" "$TDIR/kprofctl" "$SOCK" "" "$TDIR/kprofd.log"
ctl() { "$TDIR/kprofctl" --socket "$SOCK" "$@"; }
RATE_JS=$BENCH_ROOT/tests/fixtures/rate.js

lines() { wc -l <"$1"; }
# mark OUT N: the progress line N lines from now (waits up to 120 s)
mark() {
	local n i
	n=$(lines "$1")
	for ((i = 0; i < 1200; i++)); do
		[ "$(lines "$1")" -ge $((n + $2)) ] && break
		sleep 0.1
	done
	tail -1 "$1"
}
# start_workload KIND: WPID and WOUT; KIND file (minijit --paths 2), anon (minijit --anon
# --paths 10) or node (rate.js 16 50)
start_workload() {
	WOUT=$TDIR/w.out
	: >"$WOUT"
	case $1 in
	file) "$TDIR/minijit" --seconds 600 --paths 2 --progress --cleanup >"$WOUT" 2>"$TDIR/w.err" & ;;
	anon) "$TDIR/minijit" --anon --seconds 600 --paths 10 --progress --cleanup >"$WOUT" 2>"$TDIR/w.err" & ;;
	node) (cd "$TDIR" && exec node --perf-basic-prof "$RATE_JS" 16 50) >"$WOUT" 2>"$TDIR/w.err" & ;;
	esac
	WPID=$!
	BENCH_PIDS+=("$WPID")
	mark "$WOUT" 3 >/dev/null
	[ "$2" = calls ] || ctl attach "$WPID" >/dev/null
}
stop_workload() {
	ctl detach "$WPID" >/dev/null 2>&1 || true
	kill "$WPID" 2>/dev/null || true
	wait "$WPID" 2>/dev/null || true
	rm -f "/tmp/perf-$WPID.map"
}
target_json() {
	ctl list --json | python3 -c "import json,sys
print(json.dumps([t for t in json.load(sys.stdin)['targets'] if t['pid']==$WPID][0]))"
}

# run KIND NAME FUNCTION MODE [ARG...]: MODE paths or calls
ROWS=()
run() {
	local kind=$1 name=$2 func=$3 mode=$4 b0 b1 t0 t1 a0 a1 res cpid
	shift 4
	echo "budget: $name ..." >&2
	start_workload "$kind" "$mode"
	b0=$(mark "$WOUT" 1)
	b1=$(mark "$WOUT" "$BU_BEFORE")
	if [ "$mode" = paths ]; then
		ctl paths "$WPID" "$func" --duration "$BU_SECONDS" "$@" --json >"$TDIR/res.json" 2>"$TDIR/res.err" &
		cpid=$!
		t0=$(tail -1 "$WOUT")
		wait "$cpid" || true
		t1=$(tail -1 "$WOUT")
	else
		t0=$(tail -1 "$WOUT")
		ctl attach "$WPID" "$@" >"$TDIR/res.err" 2>&1 || true
		sleep "$BU_SECONDS"
		target_json >"$TDIR/res.json" || echo '{}' >"$TDIR/res.json"
		t1=$(tail -1 "$WOUT")
		ctl detach "$WPID" >/dev/null 2>&1 || true
	fi
	a0=$(mark "$WOUT" 1)
	a1=$(mark "$WOUT" "$BU_BEFORE")
	res=$(python3 - "$name" "$mode" "$b0" "$b1" "$t0" "$t1" "$a0" "$a1" "$TDIR/res.json" "$TDIR/res.err" <<'PY'
import json, sys
name, mode, b0, b1, t0, t1, a0, a1, rj, re_ = sys.argv[1:]
def rate(a, b):
    a, b = a.split(), b.split()
    d = (int(b[2]) - int(a[2])) / 1e9
    return (int(b[4]) - int(a[4])) / d if d > 0 else 0
base = (rate(b0, b1) + rate(a0, a1)) / 2
traced = rate(t0, t1)
real = base / traced if traced > 0 else float("inf")
try:
    r = json.load(open(rj))
except Exception:
    r = {}
if mode == "paths":
    said = r.get("slowdown", 0)
    hps = r.get("hits_per_s", 0)
    cov = f"{r.get('traced_ms', 0) / 1000:.1f} s traced; {r.get('end_reason', '?')}"
    for k in ("duty", "budget_duty", "on_share"):
        if k in r:
            cov += f"; {k} {r[k]}"
else:
    said = r.get("calls_slowdown", 0)
    hps = r.get("calls_hits_per_s", 0)
    cov = (f"probes in {100 * r.get('calls_duty', 0):.0f}% of the time; the budget took them"
           f" off {r.get('calls_budget_offs', 0)} times")
    if not r:
        cov = "no calls: " + open(re_).read().strip().replace("\n", " ")[:120]
print(f"| {name} | {said:.2f}x | {real:.2f}x | {hps:.0f} | {cov} |")
PY
)
	ROWS+=("$res")
	echo "$res" >&2
	stop_workload
}

echo "budget: $(date_utc), load $(loadavg)" >&2
run file "minijit, paths (uprobes)" mj_paths paths
if [ -z "$BU_SHORT" ]; then
	run file "minijit, paths --events (uprobes)" mj_paths paths --events
	run file "minijit, attach --calls" "" calls --calls
	run file "minijit, attach --calls=hot:1" "" calls --calls=hot:1
fi
run anon "minijit --anon, paths (breakpoints)" mj_paths paths
if [ -z "$BU_SHORT" ]; then
	run anon "minijit --anon, paths --structural" mj_paths paths --structural
	run anon "minijit --anon, paths --events" mj_paths paths --events
	run anon "minijit --anon, attach --calls=mj_paths" "" calls --calls=mj_paths
fi
if command -v node >/dev/null; then
	run node "Node, paths 'JS:*batch' (breakpoints)" 'JS:*batch' paths
	if [ -z "$BU_SHORT" ]; then
		run node "Node, paths --structural" 'JS:*batch' paths --structural
		run node "Node, paths --events" 'JS:*batch' paths --events
		run node "Node, attach --calls=hot:2" "" calls --calls=hot:2
	fi
fi
mkdir -p "$BUILD/bench"
{
	echo "Default budget (kprofd's probe_slowdown_pct, 1.1x), $BU_SECONDS s a mode; $(date_utc);"
	echo "load $(loadavg); commit $(bench_commit 2>/dev/null || echo ?)"
	echo
	echo "| target, mode | kprof says | the workload's slowdown | probe hits/s | what kprof says of coverage |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${ROWS[@]}"
} | tee "$BUILD/bench/budget.md"
