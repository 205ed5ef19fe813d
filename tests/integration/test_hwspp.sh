#!/usr/bin/env bash
# Structural path profiling (paths --structural) of JIT code in anonymous memory, where uprobes
# cannot go: hardware breakpoints, one structure graph at a time (ALGORITHMS.md §9).
# minijit --anon: mj_fig1 (the SPP paper's Fig. 1: nested loops, rarely entered) and mj_paths
# (nested loops with an early exit) profiled by kprof against the complete profile of minijit's
# own block trace replayed through spp.c (hwspp_truth.py: each graph's local paths, its entries
# per call from the coefficients, the global profiles), and the function's and each loop's event
# counts estimated from the structural profile against minijit's (events_truth.py, Basso's
# accuracy). A graph whose branches do not fit the
# debug registers even after assuming the one-way ones (mj_phase's loop) is not profiled, with
# the reason. Node: a doubly nested JS loop (tests/fixtures/fig1.js), each loop's entries and
# iterations per call known from the JS; then with V8's default flags (inlining and loop
# peeling on, as services run): the running copy of the caller fig1 is inlined into is
# profiled, and a copy V8 replaced (tests/fixtures/drift_copies.js), traced by its address,
# stops within seconds saying it does not run (perf record on the same run: no sample in it).
# Not sanitized: timing-heavy (breakpoint hits cost ~10 us each; turns are timed).
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
hw_breakpoints_fire || { skip "test_hwspp" "$HW_SILENT_WHY"; finish; exit; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/spp_bench" >/dev/null 2>&1 ||
	{ fail "spp_bench builds" ""; exit 1; }
SPP_BENCH=$BUILD/spp_bench
[ -x "$SPP_BENCH" ] || SPP_BENCH=$ROOT/$BUILD/spp_bench
tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}

# 1. mj_fig1 --anon: kprof's structural profile against the truth.
start_minijit --anon --wait-usr1 --rounds 4 --fig1 5000 --fig1-trace "$TDIR/tr" --truth \
	--print-code --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_fig1 --structural --spp-budget 9000 --duration 30 --events --top 0 \
	--json >"$TDIR/p.json" 2>"$TDIR/p.err" &
CTL=$!
wait_for 20 tracing "$P" || fail "structural trace starts" "$(cat "$TDIR/p.err")"
grep -q "anonymous memory) with hardware breakpoints, one structure graph at a time" \
	"$TDIR/p.err" && pass "paths --structural on anonymous code starts, saying how" ||
	fail "start line" "$(cat "$TDIR/p.err")"
kill -USR1 "$P"; wait "$P"
wait "$CTL" || fail "kprofctl paths --structural (anon)" "$(cat "$TDIR/p.err")"
"$SPP_BENCH" --dump "$MJ_OUT" "$TDIR/tr" >"$TDIR/truth.json" 2>"$TDIR/sb.err" ||
	fail "spp_bench --dump" "$(cat "$TDIR/sb.err")"
if out=$(python3 "$(dirname "$0")/hwspp_truth.py" "$TDIR/truth.json" "$TDIR/p.json" 90 85 0.2 2>&1); then
	pass "mj_fig1 --anon: structural profile by breakpoints matches minijit's trace: $(echo $out | sed 's/PASS: //g' | cut -c1-600)"
else fail "hwspp truth (mj_fig1)" "$out"; fi
python3 - "$TDIR/p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["spp"]
# Each graph's turn ends at its budget; on a busy machine the workload (a fixed 10,000 calls)
# may end during the last turn: that graph is then "unfinished" and the reply must not say
# complete.
done = all(g["state"] == "finished" for g in s["graphs"])
last_cut = (not done and all(g["state"] == "finished" for g in s["graphs"][:-1])
            and s["graphs"][-1]["state"] == "unfinished" and not s["complete"]
            and r["end_reason"] != "structural profile complete")
ok = (s.get("hw") and all(g["hw_breakpoints"] >= 1 for g in s["graphs"])
      and s["graphs"][0]["state"] == "finished"
      and ((done and s["complete"] and r["end_reason"] == "structural profile complete") or last_cut)
      and s["overlap"] == 0 and r.get("events_from_spp"))
whole = s["paths"][0]["whole"] if s["paths"] else []
print(("PASS" if ok else "FAIL") + f": reply says hw, each graph had its turn"
      f" ({[(g['state'], g['hw_breakpoints'], round(g['hw_ms'])) for g in s['graphs']]}"
      f"{'' if done else ', the last cut by the end of the run: ' + repr(r['end_reason'])}),"
      f" hottest whole-function path {whole}")
PY
if out=$(python3 "$(dirname "$0")/events_truth.py" "$TDIR/tr" "$MJ_OUT" "$TDIR/p.json" --estimate 2>&1); then
	pass "function event totals from the structural profile (estimate): $(echo $out | cut -c1-300)"
else fail "events from spp" "$out"; fi
# Each loop's events from the same block runs, scaled by its entries in the whole trace over the
# entries kprof's coefficients give (events_truth.py --hw-estimate prints Basso's accuracy;
# >= 0.7: a loop's estimate compounds its own coefficient's window with its parent's).
out=$(python3 "$(dirname "$0")/events_truth.py" "$TDIR/tr" "$MJ_OUT" "$TDIR/p.json" --hw-estimate 2>&1)
acc=$(awk '$1 == "insns" { print $NF }' <<<"$out" | tr '\n' ' ')
[ "$(wc -w <<<"$acc")" -eq 2 ] && awk -v a="$acc" 'BEGIN { n = split(a, v, " "); for (i = 1; i <= n; i++) if (v[i] < 0.7) exit 1 }' &&
	pass "loop event counts from the structural profile, insns accuracy per loop: $acc" ||
	fail "loop events from spp" "$out"
ctl paths "$P" --show --events >"$TDIR/p.txt" 2>&1
grep -q "by hardware breakpoints one structure graph at a time" "$TDIR/p.txt" &&
	grep -q "no complete profile of anonymous code" "$TDIR/p.txt" &&
	grep -q "estimated from the structural profile" "$TDIR/p.txt" &&
	grep -q "trace without --structural for those" "$TDIR/p.txt" &&
	! grep -q "^Ball-Larus paths\|^Hottest multi-iteration\|^Branches (" "$TDIR/p.txt" &&
	pass "text reply: breakpoints graph by graph, no overlap figure, events estimated, no empty tables" ||
	fail "text reply" "$(tail -30 "$TDIR/p.txt")"

# 1b. mj_paths --anon (nested loops, an early exit from the inner one to the outer latch). The
# workload (up to 60 rounds of 3000 calls) outlasts the trace on a loaded host, where the time
# between two graphs' turns lets thousands of calls run untraced; it stops when the trace ends.
start_minijit --anon --wait-usr1 --rounds 60 --paths 3000 --paths-trace "$TDIR/trp" --print-code \
	--cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_paths --structural --spp-budget 3000 --duration 30 --top 0 --json \
	>"$TDIR/pp.json" 2>"$TDIR/pp.err" &
CTL=$!
wait_for 20 tracing "$P" || fail "structural trace starts (mj_paths)" "$(cat "$TDIR/pp.err")"
kill -USR1 "$P"
wait "$CTL" || fail "kprofctl paths --structural (mj_paths)" "$(cat "$TDIR/pp.err")"
kill -TERM "$P" 2>/dev/null; wait "$P"
"$SPP_BENCH" --dump "$MJ_OUT" "$TDIR/trp" >"$TDIR/truthp.json" 2>"$TDIR/sbp.err" ||
	fail "spp_bench --dump (mj_paths)" "$(cat "$TDIR/sbp.err")"
if out=$(python3 "$(dirname "$0")/hwspp_truth.py" "$TDIR/truthp.json" "$TDIR/pp.json" 90 85 0.2 2>&1); then
	pass "mj_paths --anon: structural profile by breakpoints matches minijit's trace: $(echo $out | sed 's/PASS: //g' | cut -c1-600)"
else fail "hwspp truth (mj_paths)" "$out"; fi

# 2. A loop whose own branches do not fit even after assuming (mj_phase: six PRNG branches go
#    both ways): that graph is not profiled, and the reply says why; the outline still is.
start_minijit --anon --seconds 20 --phase 1 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_phase --structural --spp-budget 200 --duration 3 --top 0 --json \
	>"$TDIR/ph.json" 2>"$TDIR/ph.err" || fail "paths --structural mj_phase" "$(cat "$TDIR/ph.err")"
kill "$P"; wait "$P" 2>/dev/null
python3 - "$TDIR/ph.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["spp"]
notes = [(g["header"], g["hw_note"]) for g in s["graphs"] if g["hw_note"]]
ok = any("went both ways" in n for _, n in notes) and s["graphs"][0]["counted"] > 0
print(("PASS" if ok else "FAIL") + f": a graph whose branches do not fit is not profiled: {notes}")
# Said so: "unprofiled", not "timeout", and the trace does not call itself complete.
r = json.load(open(sys.argv[1]))
bad = [g for g in s["graphs"] if "went both ways" in g["hw_note"]]
ok = (bad and all(g["state"] == "unprofiled" and g["counted"] == 0 for g in bad)
      and "complete" not in r["end_reason"]
      and ("counted nothing" in r["end_reason"] or s["graphs"][0]["state"] == "unfinished"))
print(("PASS" if ok else "FAIL") + f": the unprofiled graph is said so ({[g['state'] for g in s['graphs']]}),"
      f" the end: '{r['end_reason']}'")
PY

# 3. Node: fig1(20, c) enters its outer loop when c % 16 == 0, runs it 3 times around an inner
#    loop of 20 trips (an even diamond). V8 flags: no loop peeling (a peeled first iteration is
#    a copy outside the loop), no inlining (the caller's loop would inline fig1 and never call
#    it). Checked against the JS: entries per call of each loop from the coefficients (1/16,
#    3/16), the outer loop's trips per entry (3), the inner body's runs per call (3 x 20 / 16),
#    its diamond even; the hottest whole-function path skips the loops (15 calls in 16).
if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof --no-turbo-loop-peeling --no-turbo-inlining \
		"$ROOT/tests/fixtures/fig1.js" 20 2000) >"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 30 grep -q ready "$TDIR/node.err" || fail "node starts" "$(cat "$TDIR/node.err")"
	name=$(grep -a -o 'JS:\*fig1 .*' "/tmp/perf-$NP.map" | tail -1)
	# The name as report shows it without its source ("JS:*fig1 /path/fig1.js:11:14"), as a
	# user types it.
	# The graphs are counted in turn within the duration: on a loaded machine fig1 runs slower
	# and the last one may not start in 8 s; then the trace again, for 30 s.
	all_counted() {
		python3 -c "import json, sys; g = json.load(open(sys.argv[1]))['spp']['graphs']
sys.exit(0 if len(g) == 3 and all(x['counted'] for x in g) else 1)" "$TDIR/n.json" 2>/dev/null
	}
	for d in 8 30; do
		ctl paths "$NP" 'JS:*fig1' --structural --spp-budget 3000 --duration $d --events --top 0 \
			--json >"$TDIR/n.json" 2>"$TDIR/n.err" || fail "paths --structural (node)" "$(cat "$TDIR/n.err")"
		all_counted && break
	done
	kill "$NP"; wait "$NP" 2>/dev/null
	python3 - "$TDIR/n.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["spp"]
g = s["graphs"]
paths = s["paths"]
def glob(gi, pred=lambda p: True):
    return sum(p["global"] for p in paths if p["graph"] == gi and pred(p))
ok = len(g) == 3 and g[1]["parent"] == 0 and g[2]["parent"] == 1 and all(x["counted"] for x in g)
calls = g[0]["counted"]
def err(a, b): return abs(a - b) / b
if ok:
    outer, inner = g[1]["header"], g[2]["header"]
    e1 = g[1]["coefficient"] * g[1]["entries"] / calls
    e2 = g[2]["coefficient"] * g[2]["entries"] / calls
    through = sum(p["local"] for p in paths if p["graph"] == 1 and -2 in p["nodes"])
    trips = through / g[1]["entries"]
    # the inner body: its paths that take a back edge or start at the header and do not exit
    body = glob(2, lambda p: p["to_back"]) / calls
    arms = sorted(p["local"] for p in paths if p["graph"] == 2 and p["to_back"] and p["from_back"])
    hot = max((p for p in paths if p["graph"] == 0), key=lambda p: p["global"])
    ok = (err(e1, 1 / 16) < 0.15 and err(e2, 3 / 16) < 0.15 and err(trips, 3) < 0.05
          and err(body, 3 * 20 / 16) < 0.15 and len(arms) == 2 and err(arms[0], arms[1]) < 0.25
          and -1 not in hot["whole"] and hot["local"] > 0.85 * calls)
    print(("PASS" if ok else "FAIL") + f": node {sys.argv[2]}: loop entries per call {e1:.4f} (JS 1/16),"
          f" {e2:.4f} (JS 3/16); outer trips per entry {trips:.2f} (JS 3); inner body runs per"
          f" call {body:.3f} (JS 3.75); diamond arms {arms}; hottest whole-function path"
          f" {hot['whole']} ({hot['local']} of {calls} calls); breakpoints/assumed per graph"
          f" {[(x['hw_breakpoints'], x['hw_assumed']) for x in g]}")
else:
    print(f"FAIL: node structure graphs: {g}")
PY
else
	skip "node: not installed"
fi

# 4. Node with V8's default flags (inlining and loop peeling on, as services run). fig1 is
#    inlined into its caller, whose loops are then fig1's, peeled; V8 re-optimizes it now and
#    then, so it has several copies: the one that runs now is traced (not the one with the
#    most samples since the attach), profiled, and the reply says what was covered.
if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$ROOT/tests/fixtures/fig1.js" 20 2000) \
		>"$TDIR/node4.out" 2>"$TDIR/node4.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 30 grep -q ready "$TDIR/node4.err" || fail "node starts" "$(cat "$TDIR/node4.err")"
	ctl attach "$NP" >/dev/null
	wait_for 30 at_least_samples "$NP" 100 || fail "node sampled" "$(ctl list)"
	# Where V8 put fig1's loops depends on its inlining of the run: into batch, or further into
	# Node's processImmediate. As a user would: the hottest JIT function of the report, once
	# TurboFan's code holds a fifth of the samples, is the one to trace.
	# The optimized JIT function with the most samples over the last second (V8 moves code
	# between copies and callers as it re-optimizes): its name as a user types it.
	hot_jit() {
		ctl report "$NP" --top 0 --json >"$TDIR/r0.json" || return 1
		sleep 1 # the window over which "now" is judged, not a wait for an event
		ctl report "$NP" --top 0 --json >"$TDIR/r1.json" || return 1
		python3 - "$TDIR/r0.json" "$TDIR/r1.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
old = {(e['function'], e['address']): e['self'] for e in a['entries']}
n = b['total_samples'] - a['total_samples']
best = max(((e['self'] - old.get((e['function'], e['address']), 0), e['function'])
            for e in b['entries'] if e['kind'] == 'jit' and e['function'].startswith('JS:*')),
           default=(0, ''))
if n <= 0 or best[0] * 5 <= n:
    sys.exit(1)
print(best[1].split(' ')[0])
PY
	}
	wait_for 40 hot_jit || echo "no hot optimized code yet: $(ctl report "$NP" --top 5)"
	perf record -F 999 -g -p "$NP" -o "$TDIR/perf4.data" -- sleep 3 >/dev/null 2>&1 &
	PERF=$!
	# V8 may replace the copy right after the start: said so ("does not run ... replaced"),
	# and traced again, as a user would, at most 5 times.
	for try in 1 2 3 4 5; do
		HOT=$(hot_jit)
		ctl paths "$NP" "${HOT:-JS:*batch}" --structural --duration 15 --json >"$TDIR/b4.json" \
			2>"$TDIR/b4.err"
		grep -q "it does not run" "$TDIR/b4.json" || break
	done
	wait "$PERF"
	pb=$(perf report -i "$TDIR/perf4.data" --no-children --sort sym --stdio -q -g none 2>/dev/null |
		awk -v f="${HOT:-none}" 'index($0, "[.] " f " ") { b += $1 } END { printf "%.1f", b }')
	# A target that died under the trace: how (kprofd's end reason says the signal), and
	# what it printed last.
	died=""
	kill -0 "$NP" 2>/dev/null || died="node died: $(tail -c 600 "$TDIR/node4.err" | tr '\n' ' ')"
	python3 - "$TDIR/b4.json" "$pb" "$try" "${HOT:-none}" "$died" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    g = r["spp"]["graphs"]
except Exception as e:
    print(f"FAIL: default V8 flags: the hot code profiled: {e}")
    sys.exit(0)
counted = [x for x in g if x["counted"]]
ok = len(counted) >= 1 and r["probe_hits"] > 0
print(("PASS" if ok else "FAIL") + f": default V8 flags: the running copy of {sys.argv[4]}, where "
      f"V8 inlined fig1 (perf on the same run, first try: {sys.argv[2]}% of samples in it; try "
      f"{sys.argv[3]}), profiled: {len(counted)} of {len(g)} structure graphs counted (peeled "
      f"loops are graphs of their own), {r['probe_hits']} hits, ended: {r['end_reason']}"
      + (f"; {sys.argv[5]}" if sys.argv[5] else ""))
PY
	kill "$NP"; wait "$NP" 2>/dev/null

	# A copy that no longer runs (V8 deoptimized it and made a new one): traced by its
	#    address, the trace stops within seconds by the samples' evidence, and perf agrees.
	(cd "$TDIR" && exec node --perf-basic-prof --allow-natives-syntax \
		"$ROOT/tests/fixtures/drift_copies.js" 40 2) >"$TDIR/dc.out" 2>"$TDIR/dc.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 30 grep -q ready "$TDIR/dc.err" || fail "node starts" "$(cat "$TDIR/dc.err")"
	ctl attach "$NP" >/dev/null
	wait_for 30 grep -q "^swap .* 2$" "$TDIR/dc.out" || fail "two swaps" "$(cat "$TDIR/dc.out")"
	read -r old size < <(awk '/ JS:\*batch / { print $1, $2; exit }' "/tmp/perf-$NP.map")
	perf record -F 999 -p "$NP" -o "$TDIR/perf5.data" -- sleep 4 >/dev/null 2>&1 &
	PERF=$!
	t0=$SECONDS
	ctl paths "$NP" "0x$old" --structural --duration 30 >"$TDIR/old.txt" 2>&1
	took=$((SECONDS - t0))
	wait "$PERF"
	inold=$(perf script -i "$TDIR/perf5.data" -F ip 2>/dev/null | python3 -c "import sys
lo, n = int('$old', 16), int('$size', 16)
ips = [int(l, 16) for l in sys.stdin if l.strip()]
print(sum(lo <= ip < lo + n for ip in ips), len(ips))")
	read -r pin pall <<<"$inold"
	if grep -q "it does not run (inlined into callers" "$TDIR/old.txt" && [ "$took" -lt 15 ] &&
		[ "${pin:-1}" -eq 0 ] && [ "${pall:-0}" -gt 100 ]; then
		pass "a replaced copy traced by address stops in $took s saying it does not run \
($(grep -o 'none of the target.s [0-9]* samples' "$TDIR/old.txt")); perf on the same run: \
$pin of $pall samples in it"
	else
		fail "a replaced copy traced by address stops saying why" \
			"took $took s, perf $pin of $pall: $(head -5 "$TDIR/old.txt")"
	fi
	kill "$NP"; wait "$NP" 2>/dev/null
fi

finish
