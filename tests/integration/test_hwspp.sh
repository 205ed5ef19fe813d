#!/usr/bin/env bash
# Structural path profiling (paths --structural) of JIT code in anonymous memory, where uprobes
# cannot go: hardware breakpoints, one structure graph at a time (ALGORITHMS.md §9).
# minijit --anon: mj_fig1 (the SPP paper's Fig. 1: nested loops, rarely entered) profiled by
# kprof against the complete profile of minijit's own block trace replayed through spp.c
# (hwspp_truth.py: each graph's local paths, its entries per call from the coefficients, the
# global profiles), and the function's event totals estimated from the structural profile
# against minijit's (events_truth.py, Basso's accuracy). A graph whose branches do not fit the
# debug registers even after assuming the one-way ones (mj_phase's loop) is not profiled, with
# the reason. Node: a doubly nested JS loop (tests/fixtures/fig1.js), each loop's entries and
# iterations per call known from the JS.
# Not sanitized: timing-heavy (breakpoint hits cost ~10 us each; turns are timed).
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
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
start_minijit --anon --wait-usr1 --rounds 2 --fig1 3000 --fig1-trace "$TDIR/tr" --truth \
	--print-code --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_fig1 --structural --spp-budget 3000 --duration 30 --events --top 0 \
	--json >"$TDIR/p.json" 2>"$TDIR/p.err" &
CTL=$!
wait_for 20 tracing "$P" || fail "structural trace starts" "$(cat "$TDIR/p.err")"
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
ok = (s.get("hw") and s["complete"] and all(g["hw_breakpoints"] >= 1 for g in s["graphs"])
      and s["graphs"][0]["state"] == "finished" and r["end_reason"] == "structural profile complete"
      and s["overlap"] == 0 and r.get("events_from_spp"))
whole = s["paths"][0]["whole"] if s["paths"] else []
print(("PASS" if ok else "FAIL") + f": reply says hw, each graph had its turn"
      f" ({[(g['state'], g['hw_breakpoints'], round(g['hw_ms'])) for g in s['graphs']]}),"
      f" hottest whole-function path {whole}")
PY
if out=$(python3 "$(dirname "$0")/events_truth.py" "$TDIR/tr" "$MJ_OUT" "$TDIR/p.json" --estimate 2>&1); then
	pass "function event totals from the structural profile (estimate): $(echo $out | cut -c1-300)"
else fail "events from spp" "$out"; fi
ctl paths "$P" --show --events >"$TDIR/p.txt" 2>&1
grep -q "by hardware breakpoints one structure graph at a time" "$TDIR/p.txt" &&
	grep -q "no complete profile of anonymous code" "$TDIR/p.txt" &&
	grep -q "estimated from the structural profile" "$TDIR/p.txt" &&
	pass "text reply: breakpoints graph by graph, no overlap figure, events estimated" ||
	fail "text reply" "$(tail -30 "$TDIR/p.txt")"

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
PY

cp -r "$TDIR" /tmp/hwspp-exp/last 2>/dev/null
finish
