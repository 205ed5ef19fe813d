#!/usr/bin/env bash
# Path profiling (kprofctl paths): uprobes on the basic blocks of minijit's mj_paths (nested
# loops, PRNG branches, an early exit) feed a k-SF in kprofd. minijit computes the exact block
# trace of every call with an interpreter of its IR (independently of kprof); paths_truth.py
# compares kprof's k-IPF, decoded into block sequences, with the n-gram counts of that trace:
# an exact match for sequences of 1..4 paths when the probes cover the whole run, and the
# hottest paths in the same order when a budget stops the trace early; the same exact match for
# mj_rec, which calls itself (each activation its own sequence of paths). Also: results kept
# after the target exits, refusals (writable alias, unknown function, busy), --stop; anonymous
# code goes to the hardware breakpoint tracer (test_hwbp.sh).
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
TRUTH=$(dirname "$0")/paths_truth.py

tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}

# run_traced FUNC K OUT ARGS...: minijit (ARGS) waits, writing the truth of FUNC to $TRACE
# (--paths-trace for mj_paths, --rec-trace for mj_rec), kprofctl paths FUNC (plus $CTL_ARGS)
# starts, minijit runs to its end.
CTL_ARGS=
run_traced() {
	local fn=$1 k=$2 out=$3 opt=--paths-trace
	shift 3
	TRACE=$TDIR/trace.$k
	[ "$fn" = mj_rec ] && { opt=--rec-trace; TRACE=$TDIR/rec.$k; }
	start_minijit --wait-usr1 $opt "$TRACE" --cleanup "$@" ||
		{ fail "minijit starts" ""; return 1; }
	P=$MJ_PID
	ctl paths "$P" "$fn" --k "$k" --duration 120 --top 0 --json $CTL_ARGS >"$out" 2>"$out.err" &
	CTL=$!
	wait_for 20 tracing "$P" || { fail "trace starts (k=$k)" "$(cat "$out.err")"; return 1; }
	kill -USR1 "$P"
	wait "$P"
	wait "$CTL" || { fail "kprofctl paths (k=$k)" "$(cat "$out.err")"; return 1; }
}

# 1. Exact, k = 4, 3, 2, 1 (each a k-SF of its own), probes on before the first call.
for k in 1 2 3 4; do
	run_traced mj_paths $k "$TDIR/p$k.json" --rounds 3 --paths 1000 || continue
	if out=$(python3 "$TRUTH" "$TDIR/trace.$k" "$TDIR/p$k.json" $k 2>&1); then
		pass "k=$k: kprof's k-IPF equals the n-gram counts of minijit's block trace ($(echo $out | tr '\n' ' '))"
	else fail "k=$k exact match" "$out"; fi
done
python3 - "$TDIR/p4.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = (r["state"] == "done" and r["end_reason"] == "target exited (status 0)" and r["activations"] == 3000
      and r["lost_events"] == 0 and r["resyncs"] == 0 and r["aborted"] == 0 and r["max_error"] == 0
      and r["probes"] == len(r["blocks"]) and r["loops"] == 2)
print(("PASS" if ok else "FAIL") + ": trace ended with the target, 3000 activations, nothing lost"
      f" ({r['end_reason']}, {r['activations']} activations, {r['probes']} probes, {r['loops']} loops,"
      f" lost {r['lost_events']}, resyncs {r['resyncs']}, aborted {r['aborted']})")
# An estimate needs half a second of the target's CPU time while traced (10 ms ticks); a fast
# machine's probes may leave less.
est = r["slowdown"] >= 1.0 if r["traced_cpu_ms"] >= 500 else r["slowdown"] == 0
ok = r["probe_hits"] > r["path_events"] > 0 and est
print(("PASS" if ok else "FAIL") + f": cost reported: {r['probe_hits']} probe hits, slowdown {r['slowdown']:.2f}x"
      f" over {r['traced_cpu_ms']} ms of the target's CPU time")
PY

# 2. Kept after the exit: --show still answers, text output names the blocks.
out=$(ctl paths "$P" --show --top 3 2>&1)
if grep -q "Ball-Larus paths (k = 1)" <<<"$out" && grep -q "ended: target exited" <<<"$out" &&
	grep -q "B0 .*entry" <<<"$out"; then
	pass "paths --show after the target exited prints the kept trace"
else fail "--show after exit" "$out"; fi
# --top 3 shows 3 Ball-Larus paths as the top; paths listed only because a sequence shown uses
# them come apart, and the header counts only the top.
python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
sec = out.split("Ball-Larus paths (k = 1): ", 1)[1].split("\nHottest multi-iteration", 1)[0]
shown = int(sec.split(" ", 1)[0])
top = sec.split("  and ", 1)[0]
rows = [l for l in top.splitlines() if re.match(r"\s+\d+\s+[\d.]+%\s+#\d+", l)]
m = re.search(r"  and (\d+) more paths? the sequences below use:", sec)
extra = [l for l in sec.split("  and ", 1)[1].splitlines()[1:] if re.match(r"\s+\d+\s+[\d.]+%\s+#", l)] if m else []
ok = shown == 3 and len(rows) == 3 and (not m or int(m.group(1)) == len(extra))
print(("PASS" if ok else "FAIL") + f": paths --top 3 shows 3 top paths ({len(rows)} rows, header {shown})" +
      (f" and {len(extra)} more the sequences use, said so" if m else ""))
PY

# 2b. Saved with the kept profile: after a daemon restart the same trace comes back.
ctl paths "$P" --show --top 0 --json >"$TDIR/before.json"
stop_daemon
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
ctl paths "$P" --show --top 0 --json >"$TDIR/after.json" 2>&1
python3 - "$TDIR/before.json" "$TDIR/after.json" <<'PY'
import json, sys
try:
    a, b = (json.load(open(f)) for f in sys.argv[1:3])
except ValueError as e:
    print(f"FAIL: path trace kept across a restart: {e}: {open(sys.argv[2]).read()[:200]}"); sys.exit()
keys = ("function", "k", "blocks", "paths", "sequences", "level_sums", "activations", "end_reason")
same = all(a[k] == b[k] for k in keys)
print(("PASS" if same else "FAIL") + f": path trace kept across a daemon restart (saved profile): "
      f"{len(b['sequences'])} sequences, state {b['state']}")
PY

# 3. Budget: the trace stops after 3000 path events, early in the run. It saw the first A calls
#    (the last one perhaps in part), so each of its counts lies between the truth over the first
#    A-1 calls and over the first A: the same hottest paths in the same order, exactly.
CTL_ARGS="--budget 3000"
if run_traced mj_paths 2 "$TDIR/pb.json" --rounds 2 --paths 6000; then
	CTL_ARGS=
	if out=$(python3 "$TRUTH" "$TDIR/trace.2" "$TDIR/pb.json" 2 --prefix 2>&1); then
		pass "budget: every count equals the truth over the calls traced ($(grep "^n=1" <<<"$out" | sed 's/.*hottest: //'))"
	else fail "budget order" "$out"; fi
	python3 - "$TDIR/pb.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["end_reason"] == "budget" and 3000 <= r["path_events"] < 3100 and r["budget"] == 3000
print(("PASS" if ok else "FAIL") + f": stopped by the budget ({r['end_reason']}, {r['path_events']} path events)")
PY
fi
CTL_ARGS=

# 4. Refusals, each with its reason and exit status 1.
start_minijit --seconds 60 --paths 10 --cleanup || { fail "minijit starts" ""; exit 1; }
R=$MJ_PID
out=$(ctl paths "$R" no_such_fn --duration 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "no JIT function named no_such_fn" <<<"$out" &&
	pass "unknown function refused, naming it" || fail "unknown function" "rc=$rc $out"
ctl paths "$R" mj_paths --duration 30 >/dev/null 2>&1 &
CTL=$!
wait_for 10 tracing "$R" || fail "trace starts" ""
out=$(ctl paths "$R" mj_hot --duration 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "already tracing the paths of mj_paths" <<<"$out" &&
	pass "a second function while one is traced: refused (one trace per target)" ||
	fail "busy" "rc=$rc $out"
out=$(ctl paths "$R" --stop --json 2>&1); rc=$?
wait "$CTL"
[ $rc -eq 0 ] && python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['end_reason']=='stopped' and r['path_events']>0 else 1)" "$out" &&
	pass "paths --stop ends the running trace and prints it" || fail "--stop" "rc=$rc $out"
# Address inside the function selects it too.
addr=$(python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(hex(r['start']+5))" "$out")
out=$(ctl paths "$R" "$addr" --duration 0.3 --k 1 --json 2>"$TDIR/addr.err"); rc=$?
[ $rc -eq 0 ] && python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['function']=='mj_paths' and r['k']==1 and r['activations']>0 else 1)" "$out" &&
	pass "FUNCTION given as an address inside it ($addr)" || fail "by address" "rc=$rc $(head -c 300 <<<"$out")"
kill -9 "$R"; wait "$R" 2>/dev/null

if hw_breakpoints_fire; then
	start_minijit --anon --seconds 60 --paths 10 --cleanup || { fail "minijit starts" ""; exit 1; }
	A=$MJ_PID
	out=$(ctl paths "$A" mj_paths --duration 1 --json 2>/dev/null); rc=$?
	[ $rc -eq 0 ] && python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['hw'] and r['path_events']>0 else 1)" "$out" &&
		pass "anonymous JIT code: traced with hardware breakpoints instead (test_hwbp.sh checks them)" ||
		fail "anon" "rc=$rc $(head -c 300 <<<"$out")"
	kill -9 "$A"; wait "$A" 2>/dev/null
else
	skip "anonymous JIT code traced with hardware breakpoints" "$HW_SILENT_WHY"
fi

start_minijit --writable-alias --seconds 60 --paths 10 --cleanup || { fail "minijit starts" ""; exit 1; }
W=$MJ_PID
out=$(ctl paths "$W" mj_paths --duration 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "also mapped writable" <<<"$out" &&
	pass "writable alias refused unless --force" || fail "alias" "rc=$rc $out"
check "--force traces it anyway" ctl paths "$W" mj_paths --duration 0.5 --force
kill -9 "$W"; wait "$W" 2>/dev/null

# 5. A k-SF node budget that is too small (ksf_max_nodes = 64 in the config, k = 8: the k-SF raises it to 16 k = 128): cold
#    sequences are pruned, the reply says the counts are lower bounds and by how much at most
#    (max_error), and every count c of kprof and t of the truth has c <= t <= c + max_error.
stop_daemon
printf '[limits]\nksf_max_nodes = 64\n' >"$TDIR/small.conf"
start_daemon --config "$TDIR/small.conf" || { fail "daemon restarts" "see log"; exit 1; }
if run_traced mj_paths 8 "$TDIR/p8.json" --rounds 1 --paths 1000; then
	if out=$(python3 "$TRUTH" "$TDIR/trace.8" "$TDIR/p8.json" 8 --bound 2>&1); then
		pass "pruned k-SF: every count within its stated error of the truth, never above it"
	else fail "pruned order" "$out"; fi
	python3 - "$TDIR/p8.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["pruned_items"] > 0 and r["max_error"] > 0 and r["ksf_nodes"] <= 128  # max(64, 16 k)
print(("PASS" if ok else "FAIL") + f": node budget reached and reported (nodes {r['ksf_nodes']},"
      f" pruned items {r['pruned_items']}, counts low by at most {r['max_error']})")
PY
	ctl paths "$P" --show | grep -q "Counts are lower bounds, short by at most" &&
		pass "text output says the counts are lower bounds" || fail "lower bound text" "$(ctl paths "$P" --show | head -8)"
fi

# 6. A refused trace of a process that was not attached leaves nothing behind (the daemon
#    attached it only to read its perf map).
sleep 60 &
SL=$!
PIDS+=("$SL")
out=$(ctl paths "$SL" some_fn --duration 1 2>&1); rc=$?
[ $rc -eq 1 ] && [ -z "$(target_state "$SL")" ] &&
	pass "refused trace of an unattached process: error, and the process is not left attached" ||
	fail "refused trace leaves nothing" "rc=$rc state=$(target_state "$SL") $out"

out=$(ctl paths 1 2>&1); rc=$?
[ $rc -eq 2 ] && pass "FUNCTION missing: usage error" || fail "usage" "rc=$rc $out"
out=$(ctl paths "$$" --show 2>&1); rc=$?
[ $rc -eq 1 ] && pass "--show without a trace: clear error ($out)" || fail "--show none" "rc=$rc $out"

# 7. Recursion: mj_rec calls itself (up to 6 activations deep) from a block inside its loop and
#    from one after it. Every activation is its own sequence of paths: a callee's paths never
#    extend its caller's, and the caller's path runs on through the block holding the call. The
#    trace has one act line per activation (recursive ones included), each with its own paths.
#    Exact for k = 3, with the daemon's default k-SF budget again.
stop_daemon
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
if run_traced mj_rec 3 "$TDIR/r3.json" --rounds 2 --rec 500; then
	if out=$(python3 "$TRUTH" "$TRACE" "$TDIR/r3.json" 3 2>&1); then
		pass "recursion: kprof's 3-IPF of mj_rec equals the n-gram counts of every activation ($(echo $out | tr '\n' ' '))"
	else fail "recursion: k=3 exact match" "$out"; fi
	python3 - "$TDIR/r3.json" "$TRACE" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
acts = sum(1 for l in open(sys.argv[2]) if l.startswith("act "))
ok = (r["activations"] == acts > 1000 and r["lost_events"] == 0 and r["resyncs"] == 0
      and r["aborted"] == 0 and r["end_reason"] == "target exited (status 0)" and r["probes"] == 11)
print(("PASS" if ok else "FAIL") + f": recursion: one activation per call, recursive ones too "
      f"({r['activations']} activations, {acts} act lines for 1000 calls from C; {r['probes']} probes,"
      f" lost {r['lost_events']}, resyncs {r['resyncs']}, aborted {r['aborted']}, {r['end_reason']})")
PY
fi
# 8. Too many paths to number ([limits] max_paths = 4; mj_paths has 33): an edge profile
#    instead, said so. Every edge count, every exit count and the entries equal those of
#    minijit's block trace.
stop_daemon
printf '[limits]\nmax_paths = 4\n' >"$TDIR/edges.conf"
start_daemon --config "$TDIR/edges.conf" || { fail "daemon restarts" "see log"; exit 1; }
if run_traced mj_paths 9 "$TDIR/e.json" --rounds 2 --paths 500; then
	python3 - "$TDIR/e.json" "$TRACE" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1]))
blocks, acts = {}, []
for l in open(sys.argv[2]):
    w = l.split()
    if w and w[0] == "block":
        blocks[int(w[1])] = int(w[2], 16)
    elif w and w[0] == "act":
        acts.append([[blocks[int(b)] for b in p.split(",")] for p in w[1].split("|")])
want = collections.Counter()
for a in acts:
    seq = [b for p in a for b in p]  # a path ends with the block that takes the back edge
    for x, y in zip(seq, seq[1:]):
        want[(x, y)] += 1
    want[(seq[-1], "exit")] += 1
start = [b["start"] for b in r["blocks"]]
got = collections.Counter()
for e in r["edges"]:
    if e["count"]:
        got[(start[e["from"]], "exit" if e["exit"] else start[e["to"]])] += e["count"]
ok = r["edge_profile"] and got == want and r["activations"] == len(acts) and not r["sequences"]
print(("PASS" if ok else "FAIL") + f": edge profile when the paths are too many to number: "
      f"{len(got)} edges and exits, {sum(got.values())} traversals, {r['activations']} entries, "
      f"equal to the block trace's ({len(want)}, {sum(want.values())}, {len(acts)})")
PY
	ctl paths "$P" --show | grep -q "Edge profile: mj_paths has more acyclic paths than kprofd numbers" &&
		pass "the text output says it is an edge profile, and why" ||
		fail "edge profile text" "$(ctl paths "$P" --show | tail -5)"
fi
finish
