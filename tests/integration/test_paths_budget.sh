#!/usr/bin/env bash
# A path trace under kprofd's default budget (1.1x) on a function hot enough to exceed it: the
# budget takes the probes off and puts them back (duty cycling) instead of stopping the trace,
# and the paths stay right across: each thread starts afresh when the probes come back, so no
# path or sequence spans the time they were off. minijit's own block trace is the truth: every
# sequence kprof counted is one of the truth's, counted at most as often (the probes were in for
# part of the run). Uprobes (file-backed code), hardware breakpoints (anonymous code), and
# --structural by breakpoints; each trace says its duty, and --max-slowdown 0 says no budget.
# The workload's own rate under the budget is measured in test_probe_cost.sh.
. "$(dirname "$0")/lib.sh"
PROBE_SLOWDOWN=default start_daemon || { fail "daemon starts" "see log"; exit 1; }

tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}
# duty NAME JSON: the budget took the probes off, the trace ran to the target's end, counted,
# and said its duty.
duty() {
	python3 - "$1" "$2" <<'PY'
import json, sys
name, r = sys.argv[1], json.load(open(sys.argv[2]))
ok = (r["max_slowdown"] == 1.1 and r["max_slowdown_default"] and r["budget_offs"] >= 1
      and 0 < r["duty"] < 1 and r["end_reason"] == "target exited (status 0)" and r["path_events"] > 0)
print(("PASS" if ok else "FAIL") + f": {name}: the budget took the probes off {r['budget_offs']}"
      f" times, in {100 * r['duty']:.1f}% of the time, {r['path_events']} paths counted, kprof says"
      f" {r['slowdown']:.2f}x over the trace, ended: {r['end_reason']}")
PY
}
# traced NAME FUNC ARGS...: minijit (ARGS) waits, a trace (default budget, $CTL_ARGS) starts,
# minijit runs to its end; the reply in $TDIR/NAME.json.
CTL_ARGS=
traced() {
	local name=$1
	shift
	start_minijit --wait-usr1 --cleanup "$@" || { fail "$name: minijit starts" ""; return 1; }
	ctl paths "$MJ_PID" mj_paths --duration 120 --top 0 --json $CTL_ARGS >"$TDIR/$name.json" \
		2>"$TDIR/$name.err" &
	CTL=$!
	wait_for 20 tracing "$MJ_PID" || { fail "$name: trace starts" "$(cat "$TDIR/$name.err")"; return 1; }
	kill -USR1 "$MJ_PID"
	wait "$MJ_PID"
	wait "$CTL" || { fail "$name: kprofctl paths" "$(cat "$TDIR/$name.err")"; return 1; }
}

# 1. Uprobes on every block of mj_paths: about 1.6x without a budget.
CTL_ARGS="--k 3"
if traced uprobes --rounds 1500 --paths 2 --paths-trace "$TDIR/tr.u"; then
	duty "uprobes" "$TDIR/uprobes.json"
	if out=$(python3 "$(dirname "$0")/paths_truth.py" "$TDIR/tr.u" "$TDIR/uprobes.json" 3 --subset 2>&1); then
		pass "uprobes, duty-cycled: every sequence of 1-3 paths in minijit's trace, none counted more ($(echo $out | tr '\n' ' ' | cut -c1-300))"
	else fail "uprobes truth" "$out"; fi
fi

# 2. Hardware breakpoints on mj_paths's inner loop (2-3x without a budget).
if ! hw_breakpoints_fire; then
	skip "breakpoints, duty-cycled" "$HW_SILENT_WHY"
elif traced breakpoints --anon --rounds 1500 --paths 10 --paths-trace "$TDIR/tr.h"; then
	duty "breakpoints" "$TDIR/breakpoints.json"
	if out=$(python3 "$(dirname "$0")/hwpaths_truth.py" "$TDIR/tr.h" "$TDIR/breakpoints.json" 3 --subset 2>&1); then
		pass "breakpoints, duty-cycled: branch counts and loop sequences within minijit's trace: $(echo $out | sed 's/PASS: //g' | cut -c1-300)"
	else fail "breakpoints truth" "$out"; fi
fi

# 3. --structural by breakpoints: the structure graphs' turns under the budget.
CTL_ARGS="--structural"
if ! hw_breakpoints_fire; then
	skip "--structural, duty-cycled" "$HW_SILENT_WHY"
elif traced structural --anon --rounds 1500 --paths 10; then
	python3 - "$TDIR/structural.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["max_slowdown"] == 1.1 and r["budget_offs"] >= 1 and 0 < r["duty"] < 1 and r["path_events"] > 0
print(("PASS" if ok else "FAIL") + f": --structural: the budget took the breakpoints off"
      f" {r['budget_offs']} times, in {100 * r['duty']:.1f}% of the time; {r['path_events']} local"
      f" paths, ended: {r['end_reason']}")
PY
fi

# 4. No budget: said so, the probes in all the time.
start_minijit --seconds 10 --paths 2 --cleanup || { fail "minijit starts" ""; exit 1; }
out=$(ctl paths "$MJ_PID" mj_paths --duration 2 --max-slowdown 0 2>&1)
grep -q "^Budget: none (--max-slowdown 0, or kprofd's probe_slowdown_pct 0): the probes stayed in all the time" <<<"$out" &&
	pass "--max-slowdown 0: no budget, said so" || fail "no budget" "$(grep -i budget <<<"$out")"
kill "$MJ_PID"
finish
