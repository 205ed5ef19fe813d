#!/usr/bin/env bash
# Event counts from path counts (kprofctl paths --events) and structural path profiling
# (--structural). minijit's encoder tags each instruction it emits with its event classes and
# its IR interpreter counts them along the block trace of every call; kprof classifies the
# machine code itself (Capstone) and sums path count x the path's events. On a trace that saw
# every call the two must be equal, for the function, every block and every loop
# (events_truth.py); a budgeted trace's scaled counts are scored with Basso's accuracy. SPP runs
# alongside on mj_paths and mj_fig1 (the SPP paper's Fig. 1) and reports its overlap with the
# complete trace and flat Ball-Larus's. Also: text output, JSON, bad flags.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
TRUTH=$(dirname "$0")/events_truth.py

tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}

# run_traced FUNC OUT TRACEOPT ARGS... -- CTLARGS...: minijit (ARGS, --truth to $OUT.truth)
# waits, writing the trace of FUNC to $OUT.trace; kprofctl paths FUNC (CTLARGS) starts; minijit
# runs to its end.
run_traced() {
	local fn=$1 out=$2 opt=$3 a=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	"$MINIJIT" --wait-usr1 "$opt" "$out.trace" --cleanup --truth "${a[@]}" >"$out.truth" \
		2>"$out.mjerr" &
	P=$!
	PIDS+=("$P")
	wait_for 10 grep -q ready "$out.mjerr" || { fail "minijit starts" ""; return 1; }
	ctl paths "$P" "$fn" --duration 120 --top 0 --json "$@" >"$out" 2>"$out.err" &
	CTL=$!
	wait_for 20 tracing "$P" || { fail "trace of $fn starts" "$(cat "$out.err")"; return 1; }
	kill -USR1 "$P"
	wait "$P"
	wait "$CTL" || { fail "kprofctl paths $fn" "$(cat "$out.err")"; return 1; }
}

# 1. Full trace of mj_paths: events exactly equal, SPP beside it.
if run_traced mj_paths "$TDIR/p.json" --paths-trace --rounds 2 --paths 1000 -- --structural \
	--spp-budget 1000; then
	if out=$(python3 "$TRUTH" "$TDIR/p.json.trace" "$TDIR/p.json.truth" "$TDIR/p.json" 2>&1); then
		pass "mj_paths: kprof's event counts equal minijit's, function, blocks and loops ($(echo $out | tr '\n' ' '))"
	else fail "mj_paths events exact" "$out"; fi
	python3 - "$TDIR/p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["spp"]
ok = (s["budget"] == 1000 and s["complete"] and 0 < s["counted"] <= 1000 and len(s["graphs"]) == 3
      and 0 < s["overlap"] <= 100 and 0 < s["flat_overlap"] <= 100 and s["paths"]
      and all(p["whole"] for p in s["paths"]) and s["graphs"][0]["coefficient"] == 1)
print(("PASS" if ok else "FAIL") + f": mj_paths --structural: {len(s['graphs'])} structure graphs, "
      f"{s['counted']} of {s['budget']} local paths, overlap {s['overlap']:.1f}% (flat {s['flat_overlap']:.1f}%),"
      f" {len(s['paths'])} hot paths")
PY
	out=$(ctl paths "$P" --show --events --top 5 2>&1)
	if grep -q "^Events (sum over the paths" <<<"$out" && grep -q "cond_branch" <<<"$out" &&
		grep -q "^Structural path profile: budget 1000" <<<"$out" &&
		grep -q "WHOLE-FUNCTION VIEW" <<<"$out"; then
		pass "paths --show --events prints the event table and the structural profile"
	else fail "--events text" "$(tail -30 <<<"$out")"; fi
	out=$(ctl paths "$P" --show 2>&1)
	! grep -q "^Events (" <<<"$out" && pass "without --events no event table" ||
		fail "no --events" "$(grep Events <<<"$out")"
fi

# 2. A budget of 3000 paths: the trace sees about 200 of 2000 calls; counts scaled by calls /
#    activations, Basso's accuracy per class.
if run_traced mj_paths "$TDIR/b.json" --paths-trace --rounds 2 --paths 1000 -- --budget 3000; then
	if out=$(python3 "$TRUTH" "$TDIR/b.json.trace" "$TDIR/b.json.truth" "$TDIR/b.json" --estimate 2>&1); then
		pass "budgeted trace: accuracy per event class ($(echo $out | tr '\n' ' ' | tr -s ' '))"
	else fail "budgeted accuracy" "$out"; fi
fi

# 3. mj_fig1: nested loops rarely entered, then iterating 24 times: events exact again, SPP
#    with a budget of 300 (100 paths a graph; the outline graph takes one a call) and a timeout
#    of 50 activations: the outline graph stops waiting after 50 calls.
if run_traced mj_fig1 "$TDIR/f.json" --fig1-trace --rounds 2 --fig1 1000 -- --structural \
	--spp-budget 300 --spp-timeout 50; then
	if out=$(python3 "$TRUTH" "$TDIR/f.json.trace" "$TDIR/f.json.truth" "$TDIR/f.json" 2>&1); then
		pass "mj_fig1: event counts equal minijit's ($(echo $out | tr '\n' ' '))"
	else fail "mj_fig1 events exact" "$out"; fi
	python3 - "$TDIR/f.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["spp"]
states = [g["state"] for g in s["graphs"]]
g0 = s["graphs"][0]
ok = (len(s["graphs"]) == 3 and s["counted"] <= 300 and 0 < s["overlap"] <= 100
      and s["timeout"] == 50 and g0["state"] == "timeout" and g0["counted"] == 50)
print(("PASS" if ok else "FAIL") + f": mj_fig1 --spp-budget 300 --spp-timeout 50: graphs {states}"
      f" (outline {g0['counted']} of {g0['share']}), overlap"
      f" {s['overlap']:.1f}% vs flat {s['flat_overlap']:.1f}%")
PY
fi

# 3b. mj_two: two loops of 500 trips in a row (the SPP paper's compress/db shape). A flat budget
#     of 45 paths never leaves the first loop; SPP gives each loop its own share (15 paths), so
#     its overlap with the complete trace must be the higher one. Deterministic: seed 1, and the
#     controller follows the event stream.
if run_traced mj_two "$TDIR/t.json" --two-trace --rounds 4 --two 6 -- --structural \
	--spp-budget 45; then
	if out=$(python3 "$TRUTH" "$TDIR/t.json.trace" "$TDIR/t.json.truth" "$TDIR/t.json" 2>&1); then
		pass "mj_two: event counts equal minijit's ($(echo $out | tr '\n' ' '))"
	else fail "mj_two events exact" "$out"; fi
	python3 - "$TDIR/t.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["spp"]
ok = s["complete"] and s["flat_overlap"] < 60 and s["overlap"] > s["flat_overlap"] + 10
print(("PASS" if ok else "FAIL") + f": mj_two, budget 45: SPP overlap {s['overlap']:.1f}% above flat"
      f" Ball-Larus's {s['flat_overlap']:.1f}% (flat never leaves the first loop)")
PY
fi

# 4. Bad flags: usage errors (exit 2) that say what is wrong.
start_minijit --seconds 30 --paths 10 --cleanup || { fail "minijit starts" ""; exit 1; }
R=$MJ_PID
for bad in "--spp-budget 0" "--spp-budget abc" "--spp-budget 100000001" "--spp-timeout 0" \
	"--spp-timeout -5"; do
	out=$(ctl paths "$R" mj_paths $bad 2>&1); rc=$?
	[ $rc -eq 2 ] && grep -q -- "${bad%% *}" <<<"$out" && pass "paths $bad: usage error" ||
		fail "paths $bad" "rc=$rc $out"
done
# A structural trace that ends (its duration) before its graphs have their shares: no graph
# is called active or idle after the end, nor the profile complete or still going.
ctl paths "$R" mj_paths --structural --spp-budget 100000000 --duration 1 --json >"$TDIR/u.json" 2>"$TDIR/u.err"
ctl paths "$R" --show >"$TDIR/u.txt" 2>&1
python3 - "$TDIR/u.json" "$TDIR/u.txt" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["spp"]
except Exception as e:
    print(f"FAIL: a structural trace ended before its shares: no reply ({e})")
    sys.exit(0)
txt = open(sys.argv[2]).read()
states = [g["state"] for g in s["graphs"]]
ok = (not s["complete"] and states[0] == "unfinished" and "not started" in states[1:]
      and "active" not in states and "idle" not in states
      and "(the trace ended before every graph was done)" in txt and "still profiling" not in txt)
print(("PASS" if ok else "FAIL") + f": a structural trace ended before its shares: graphs {states},"
      f" the text says so")
PY
out=$(ctl paths "$R" --show --structural 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "not with --show" <<<"$out" && pass "--structural with --show: usage error" ||
	fail "--structural --show" "rc=$rc $out"
# Too many paths to number: structural profiling refused with the reason.
stop_daemon
printf '[limits]\nmax_paths = 4\n' >"$TDIR/edges.conf"
start_daemon --config "$TDIR/edges.conf" || { fail "daemon restarts" "see log"; exit 1; }
out=$(ctl paths "$R" mj_paths --structural --duration 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "needs a path numbering" <<<"$out" &&
	pass "--structural on an edge profile: refused with the reason" || fail "edge profile" "rc=$rc $out"
kill -9 "$R"; wait "$R" 2>/dev/null
# The same limit: mj_paths gets an edge profile, and its events come from the blocks'
# executions (out-edges plus exits): exact again.
if run_traced mj_paths "$TDIR/e.json" --paths-trace --rounds 1 --paths 500 --; then
	if out=$(python3 "$TRUTH" "$TDIR/e.json.trace" "$TDIR/e.json.truth" "$TDIR/e.json" 2>&1) &&
		python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['edge_profile'] else 1)" "$TDIR/e.json"; then
		pass "edge profile: event counts from block executions equal minijit's ($(echo $out | tr '\n' ' '))"
	else fail "edge profile events exact" "$out"; fi
fi
finish
