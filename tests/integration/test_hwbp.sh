#!/usr/bin/env bash
# Hardware execute breakpoints on JIT code in anonymous memory (minijit --anon, Node), where
# uprobes cannot go. Exact call counts (attach --calls=NAME,...) equal minijit's own counters,
# four functions exactly and more in turns (estimated, said so); a thread whose debug registers
# are taken (a fixture that holds all four on itself, as a debugger would) is refused with the
# reason; no breakpoint event stays open in kprofd after detach (/proc/PID/fdinfo). paths on
# anonymous code: branch counts, the followed loops' paths and their event counts (--events)
# equal minijit's interpreter and the JS loop's iteration counts.
# Not sanitized: breakpoint hits cost ~10 us each, and the runs need their full length.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# perf_fds: perf events open in kprofd now (fdinfo does not say which kind: compared with the
# count before the target came, when kprofd holds only its per-CPU sets).
perf_fds() { ls -l /proc/"$DAEMON_PID"/fd 2>/dev/null | grep -c "anon_inode:\[perf_event\]"; }
BASE=$(perf_fds)
# perf_ready PID: perf (stat) has its events open.
perf_ready() { ls -l /proc/"$1"/fd 2>/dev/null | grep -q "anon_inode:\[perf_event\]"; }

# 0. A host whose breakpoints count nothing (perf's either): kprofd says so, not "0 calls".
if ! hw_breakpoints_fire; then
	start_minijit --anon --seconds 120 || { fail "minijit starts" ""; exit 1; }
	out=$(ctl attach "$MJ_PID" --calls=mj_hot 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q "hardware breakpoints do not fire on this host" <<<"$out"; then
		pass "a host whose breakpoints count nothing: attach --calls on anonymous code refused with the reason"
	else fail "attach --calls where breakpoints count nothing" "rc=$rc $out"; fi
	out=$(ctl paths "$MJ_PID" mj_hot --duration 2 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q "hardware breakpoints do not fire on this host" <<<"$out"; then
		pass "paths on anonymous code refused with the reason"
	else fail "paths where breakpoints count nothing" "rc=$rc $out"; fi
	kill "$MJ_PID"; wait "$MJ_PID" 2>/dev/null
	skip "the rest of test_hwbp" "$HW_SILENT_WHY"
	finish; exit
fi

# 1. Four functions in anonymous memory: exact, from before the first round to the exit.
start_minijit --anon --wait-usr1 --rounds 100 --truth --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
out=$(ctl attach "$P" --calls=mj_main,mj_hot,mj_warm,mj_leaf 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "4 in anonymous memory counted by hardware breakpoints (exact)" <<<"$out"; then
	pass "attach --calls=4 names on anonymous code: hardware breakpoints, exact"
else fail "attach --calls on anon" "rc=$rc $out"; fi
n=$(perf_fds)
[ "$n" -ge $((BASE + 4)) ] && pass "breakpoint events open in kprofd while counting ($BASE before, $n now)" ||
	fail "bp fds" "$BASE before, $n now"
kill -USR1 "$P"; wait "$P"
wait_for 10 state_is "$P" exited
ctl report "$P" --top 0 --json >"$TDIR/r1.json"
python3 - "$MJ_OUT" "$TDIR/r1.json" <<'PY'
import json, sys
truth = {l.split()[1]: int(l.split()[5]) for l in open(sys.argv[1]) if l.startswith("func ")}
r = json.load(open(sys.argv[2]))
calls = {e["function"]: e["calls"] for e in r["entries"] if e["kind"] == "jit"}
want = {f: truth[f] for f in ("mj_main", "mj_hot", "mj_warm", "mj_leaf")}
got = {f: calls.get(f, 0) for f in want}
ok = got == want and calls.get("mj_cold", 0) == 0 and not r["target"]["hw_estimated"]
print(("PASS" if ok else "FAIL") + f": exact call counts by breakpoints equal minijit's counters: {got} vs {want}")
PY
# hcct --exact of breakpoint-only counting: said to build no tree (issue 29, item 10), not an
# empty tree.
out=$(ctl hcct "$P" --exact 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "hardware breakpoints .*build no exact calling-context tree" <<<"$out" &&
	pass "hcct --exact after breakpoint counting says there is no exact tree" ||
	fail "hcct --exact of breakpoint counts" "rc=$rc: $(head -5 <<<"$out")"
n=$(perf_fds)
[ "$n" -eq "$BASE" ] && pass "no breakpoint event left in kprofd after the target exited ($n perf events, as before)" ||
	fail "bp fds after exit" "$BASE before, $n now"

# 1b. --calls=hot:2: sample first, then count the two hottest JIT functions sampled.
start_minijit --anon --seconds 8 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
out=$(ctl attach "$P" --freq 499 --calls=hot:2 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "sampling first: the 2 hottest JIT functions sampled get counted" <<<"$out" &&
	pass "attach --calls=hot:2: samples first, says so" || fail "hot:2 attach" "rc=$rc $out"
hw_on() { ctl list --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
sys.exit(0 if t and t[0]['hw_functions'] == 2 else 1)"; }
wait_for 15 hw_on "$P" || fail "hot:2 chosen" "$(ctl list)"
sleep 0.6 # counts are read back every 250 ms
ctl report "$P" --top 0 --json >"$TDIR/hot.json"
python3 - "$TDIR/hot.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
jit = sorted((e for e in r["entries"] if e["kind"] == "jit"), key=lambda e: -e["self"])
counted = [e["function"] for e in jit if e["calls"] > 0]
top3 = [e["function"] for e in jit[:3]]
ok = len(counted) == 2 and all(f in top3 for f in counted) and r["target"]["hw_functions"] == 2
print(("PASS" if ok else "FAIL") + f": the 2 hottest JIT functions sampled are counted: {counted}"
      f" (hottest by self now: {top3})")
PY
kill "$P"; wait "$P" 2>/dev/null

# 2. Five functions: they take turns in groups of four, each count an estimate, said so.
start_minijit --anon --seconds 2 --truth --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
out=$(ctl attach "$P" --calls=mj_main,mj_hot,mj_warm,mj_cold,mj_leaf 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "5 in anonymous memory counted by hardware breakpoints (estimated" <<<"$out" &&
	pass "5 functions: counted in turns, marked estimated" || fail "rotation attach" "rc=$rc $out"
wait "$P"
wait_for 10 state_is "$P" exited
ctl report "$P" --top 0 --json >"$TDIR/r2.json"
ctl report "$P" --top 3 >"$TDIR/r2.txt"
python3 - "$MJ_OUT" "$TDIR/r2.json" <<'PY'
import json, sys
truth = {l.split()[1]: int(l.split()[5]) for l in open(sys.argv[1]) if l.startswith("func ")}
r = json.load(open(sys.argv[2])); t = r["target"]
calls = {e["function"]: e["calls"] for e in r["entries"] if e["kind"] == "jit"}
names = ("mj_main", "mj_hot", "mj_warm", "mj_cold", "mj_leaf")
# Scaled from about half the time each: within a factor of 1.5 of the truth (a 2 s run of
# 100 ms turns; minijit's rounds are steady).
ok = all(0.66 * truth[f] <= calls.get(f, 0) <= 1.5 * truth[f] for f in names)
ok = ok and t["hw_estimated"] and t["hw_functions"] == 5 and 0.3 < t["hw_covered"] < 0.7
print(("PASS" if ok else "FAIL") + f": estimated counts near the truth ({ {f: calls.get(f) for f in names} } vs"
      f" { {f: truth[f] for f in names} }), each counted {t['hw_covered']:.0%} of the time")
PY
grep -q "estimated: they took turns), each counted [0-9]*% of the time" "$TDIR/r2.txt" &&
	pass "report says the counts are estimates and how much of the time each was counted" ||
	fail "report estimated" "$(head -3 "$TDIR/r2.txt")"
# Kept with the profile: after a daemon restart the report says the same.
stop_daemon
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
ctl report "$P" --top 3 >"$TDIR/r2b.txt" 2>&1
grep -q "5 in anonymous memory counted by hardware breakpoints (estimated: they took turns), each counted [0-9]*% of the time" "$TDIR/r2b.txt" &&
	pass "the breakpoint figures are kept across a daemon restart" ||
	fail "hw kept" "$(head -3 "$TDIR/r2b.txt")"

# 3. A thread whose debug registers are taken (perf holds one: 4 more do not fit): refused,
#    saying why; the target left as it was, nothing left open in kprofd.
start_minijit --anon --seconds 30 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
addr=$(awk '$3 == "mj_cold" { print $1 }' /tmp/perf-"$P".map)
perf stat -e "mem:0x$addr:x" -p "$P" -o "$TDIR/perf.txt" &
PERF=$!
PIDS+=("$PERF")
wait_for 10 perf_ready "$PERF" || fail "perf stat holds a breakpoint" "$(cat "$TDIR/perf.txt")"
out=$(ctl attach "$P" --calls=mj_main,mj_hot,mj_warm,mj_leaf 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "already uses its debug registers" <<<"$out" &&
	pass "debug registers in use (perf's breakpoint): refused with the reason" ||
	fail "debugger refusal" "rc=$rc $out"
n=$(perf_fds)
[ "$n" -eq "$BASE" ] && pass "nothing left open after the refusal" || fail "fds after refusal" "$n"
stop_tool "$PERF"
kill -0 "$P" 2>/dev/null && pass "the target runs on after the refusal" || fail "target alive" ""
# 4. Detach while counting: the breakpoints go, the target runs on.
out=$(ctl attach "$P" --calls=mj_hot 2>&1) || fail "attach after perf left" "$out"
wait_for 10 at_least_samples "$P" 1
n=$(perf_fds)
ctl detach "$P" >/dev/null
n2=$(perf_fds)
[ "$n" -gt "$BASE" ] && [ "$n2" -eq "$BASE" ] && kill -0 "$P" &&
	pass "detach takes every breakpoint away ($n perf events while attached, $n2 after)" ||
	fail "detach fds" "$BASE/$n/$n2"
kill "$P"; wait "$P" 2>/dev/null

# 5. paths on anonymous code: breakpoints on the branches of mj_paths's loops. The inner loop's
#    four branches fit (its paths are followed), the outer loop's five do not (counts only, in
#    a second turn). minijit's block trace is the truth: the inner loop's group is on for the
#    whole run (the first half of a 60 s trace), so its branch counts and its sequences of 1-3
#    iterations must equal the trace's exactly.
TRUTH=$(dirname "$0")/hwpaths_truth.py
tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}
start_minijit --anon --wait-usr1 --rounds 2 --paths 500 --paths-trace "$TDIR/tr" --truth --cleanup ||
	{ fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_paths --duration 60 --k 3 --top 0 --json >"$TDIR/p.json" 2>"$TDIR/p.err" &
CTL=$!
wait_for 20 tracing "$P" || fail "branch trace starts" "$(cat "$TDIR/p.err")"
grep -q "anonymous memory) with hardware breakpoints on 5 loop branches" "$TDIR/p.err" &&
	pass "paths on anonymous code: hardware breakpoints on the loops' branches, said so" ||
	fail "paths hw start line" "$(cat "$TDIR/p.err")"
kill -USR1 "$P"; wait "$P"
wait "$CTL" || fail "kprofctl paths (anon)" "$(cat "$TDIR/p.err")"
if out=$(python3 "$TRUTH" "$TDIR/tr" "$TDIR/p.json" 3 2>&1); then
	pass "branch counts and loop paths equal minijit's block trace: $(echo $out | sed 's/PASS: //g' | cut -c1-400)"
else fail "hw paths truth" "$out"; fi
# Event counts (paths --events) of the loop followed: the interpreter's visits x the encoder's
# tags over the loop's blocks (from the trace's back edges), exactly; its per-block runs equal
# the visits; no function totals, said so. Its conditional branches ran as often as the
# breakpoints on them fired (the loop's turn was on for the whole run).
if out=$(python3 "$(dirname "$0")/events_truth.py" "$TDIR/tr" "$MJ_OUT" "$TDIR/p.json" --hw 2>&1); then
	pass "events of the followed loop equal minijit's: $(echo $out | cut -c1-300)"
else fail "hw events truth" "$out"; fi
python3 - "$TDIR/p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
le = r["loop_events"][0] if r["loop_events"] else {"blocks": [], "events": {}}
hits = sum(b["taken"] + b["not_taken"] for b in r["branches"] if b["block"] in le["blocks"])
ok = hits > 0 and le["events"].get("cond_branch") == hits
print(("PASS" if ok else "FAIL") + f": the loop's cond_branch events ({le['events'].get('cond_branch')})"
      f" equal the hits of its branches' breakpoints ({hits})")
PY
python3 - "$TDIR/p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
nc = " | ".join(r["not_covered"])
ok = (r["hw"] and r["end_reason"] == "target exited (status 0)" and len(r["branches"]) == 5
      and len(r["hw_loops"]) == 1 and "more than the 4 debug registers" in nc
      and "never had its turn" in nc and r["lost_events"] == 0)
print(("PASS" if ok else "FAIL") + f": what could not be covered is listed: {nc}")
PY

# 6. A longer run than the trace: the groups take turns (half the duration each), each
#    branch's counts over the time it was covered; then a budget ends the turns early.
start_minijit --anon --seconds 30 --paths 20 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_paths --duration 1.5 --k 2 --json >"$TDIR/rot.json" 2>"$TDIR/rot.err" ||
	fail "paths rotation" "$(cat "$TDIR/rot.err")"
python3 - "$TDIR/rot.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cov = {b["block"]: b["covered_ms"] for b in r["branches"]}
outer = [b for b in r["branches"] if b["loop"] != r["hw_loops"][0]["header"]]
ok = (r["end_reason"] == "duration" and all(500 < c < 1000 for c in cov.values())
      and all(b["taken"] + b["not_taken"] > 0 for b in r["branches"])
      and not any("never had its turn" in n for n in r["not_covered"]))
print(("PASS" if ok else "FAIL") + f": two turns over 1.5 s: every branch covered about half of it"
      f" ({cov} ms), the outer loop's branch counted in its own turn ({outer[0]['taken']} taken)")
PY
ctl paths "$P" mj_paths --duration 20 --budget 2000 --json >"$TDIR/bud.json" 2>"$TDIR/bud.err" ||
	fail "paths budget" "$(cat "$TDIR/bud.err")"
python3 - "$TDIR/bud.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
hits = sum(b["taken"] + b["not_taken"] for b in r["branches"])
# Hits keep coming while the last ones wait in the ring buffer: the budget ends the turns late
# (by what arrives in one drain, 50 ms: more when kprofd waits for a loaded CPU), never early.
ok = r["end_reason"] == "budget" and 2000 <= hits < 20000 and r["traced_ms"] < 19000
print(("PASS" if ok else "FAIL") + f": a budget of 2000 events ends the trace ({r['end_reason']},"
      f" {hits} branch hits in {r['traced_ms']:.0f} ms)")
PY
n=$(perf_fds)
[ "$n" -le $((BASE + 1)) ] && pass "branch traces over: no breakpoint left in kprofd ($n perf events: the sampler's)" ||
	fail "fds after paths" "$BASE before, $n now"
kill "$P"; wait "$P" 2>/dev/null
# 7. Node: the optimized code of a JS loop whose branch goes one way a known number of times
#    (i % 3 === 0 for i in 1..3000, two calls: 2000, which the script itself prints). Its loop
#    has 8 branches (bounds, overflow and stack checks): two counting turns of four, then a turn
#    that follows the loop's paths with the two branches that went both ways, the six others
#    assumed one way. One batch runs in each turn: the counts must hold the JS count exactly, and
#    the paths of the third turn must be the JS loop's iterations exactly (i = 1 is peeled out
#    of the loop by TurboFan): i % 3 == 0 for 2000 of them, not for 3998, 2 exits, in the order
#    the JS code takes them (sequences of 2).
if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/$(dirname "$0")/../fixtures/mod3.js" 3000 2 3) \
		>"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 30 grep -q ready "$TDIR/node.err" || fail "node starts" "$(cat "$TDIR/node.err")"
	# By its name, as a user would: V8 may also have compiled it on stack replacement during
	# the warm-up, another copy under the same name whose loop the CFG from its start does not
	# reach; kprofd then takes the copy that has one.
	name=$(grep -a -o 'JS:\*mod3 .*' "/tmp/perf-$NP.map" | tail -1)
	ctl paths "$NP" "$name" --duration 9 --k 2 --top 0 --json >"$TDIR/n.json" 2>"$TDIR/n.err" &
	CTL=$!
	wait_for 20 grep -q "hardware breakpoints on" "$TDIR/n.err" ||
		fail "node branch trace starts" "$(cat "$TDIR/n.err")"
	turn_is() { ctl paths "$NP" --show --json 2>/dev/null | grep -q "\"hw_turn\":\"turn $1 of"; }
	batches() { [ "$(grep -c '^done' "$TDIR/node.err")" -ge "$1" ]; }
	for t in 1 2 3; do
		wait_for 10 turn_is $t || { fail "node: turn $t" "$(ctl paths "$NP" --show 2>&1 | tail -3)"; break; }
		kill -USR1 "$NP"
		wait_for 10 batches $t || { fail "node: batch $t" "$(cat "$TDIR/node.err")"; break; }
	done
	wait "$NP"
	wait "$CTL" || fail "kprofctl paths (node)" "$(cat "$TDIR/n.err")"
	python3 - "$TDIR/n.json" "$TDIR/node.err" "$name" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1]))
truth = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("done ")]
n, m = 3000, 2
# The branch of i % 3 (or the c++ it guards): one way exactly truth times per batch it covered.
hit = [b for b in r["branches"] if b["covered_ms"] > 0 and any(
    c and c % truth[0] == 0 and c // truth[0] in (1, 2, 3) for c in (b["taken"], b["not_taken"]))]
desc = ", ".join(f"B{b['block']} {b['cond']} {b['taken']}/{b['not_taken']}" for b in r["branches"])
ok = r["hw"] and truth == [2000] * 3 and len(hit) >= 1
print(("PASS" if ok else "FAIL") + f": node {sys.argv[3]}: the i % 3 branch of the optimized loop"
      f" went one way exactly {truth[0]} times per batch, the JS-level count ({desc})")
# The JS loop's iterations in order: i = 2..n (i = 1 peeled), 'm' when i % 3 == 0, then 'x'.
js = collections.Counter()
for _ in range(m):
    seq = ["m" if i % 3 == 0 else "e" for i in range(2, n + 1)] + ["x"]
    for k in (1, 2):
        for j in range(len(seq) - k + 1):
            js[tuple(seq[j:j + k])] += 1
counts = {p["id"]: p["count"] for p in r["paths"]}
label = {}
for p in r["paths"]:
    if p["blocks"] and p["blocks"][-1]["edge"] != "back":
        label[p["id"]] = "x"  # the iteration that leaves the loop
    elif p["count"] == js[("m",)]:
        label[p["id"]] = "m"
    elif p["count"] == js[("e",)]:
        label[p["id"]] = "e"
got = collections.Counter()
for s in r["sequences"]:
    got[tuple(label.get(i, "?") for i in s["paths"])] += s["count"]
loops = r["hw_loops"]
ok = got == js and len(loops) == 1 and loops[0]["activations"] == m and len(loops[0]["assumed"]) > 0
print(("PASS" if ok else "FAIL") + f": node loop paths on assumptions equal the JS loop's iterations"
      f" exactly: {dict(got)} ({len(loops[0]['assumed']) if loops else 0} branches assumed one way)"
      + ("" if ok else f" vs {dict(js)}; {r['not_covered']}"))
# Event counts of the loop (paths --events): no function totals; the loop's counts equal the JS
# loop's iterations x the events on each iteration's path (kprof's decoding of the blocks, counts
# from the JS, not from the trace), and its conditional branches per batch equal the hits of the
# breakpoints on them (the assumed ones counted in one batch, the followed ones in two).
le = r["loop_events"][0] if r["loop_events"] else None
paths = {p["id"]: p for p in r["paths"]}
want = collections.Counter()
for pid, lab in label.items():
    for st in paths[pid]["blocks"]:
        for i, name in enumerate(r["event_names"]):
            want[name] += js[(lab,)] * r["block_events"][st["block"]][i]
ok = le is not None and not r["events"] and all(le["events"][k] == want[k] for k in r["event_names"])
assumed = set(loops[0]["assumed"]) if loops else set()
per_batch = sum((b["taken"] + b["not_taken"]) // (1 if b["address"] in assumed else 2)
                for b in r["branches"] if le and b["block"] in le["blocks"])
ok = ok and per_batch == le["events"]["cond_branch"] and le["activations"] == m
print(("PASS" if ok else "FAIL") + f": node loop events = JS iterations x events per iteration path"
      f" (insns {le['events']['insns'] if le else None}, cond_branch {le['events']['cond_branch'] if le else None}"
      f" = {per_batch} branch hits per batch)" + ("" if ok else f" want {dict(want)}; {le}"))
PY
else
	skip "node i % 3 loop" "node is not installed"
fi
# 8. Bad input. jitswap: a loop in anonymous memory, named jit_loop in the perf map, called
#    over and over; at SIGUSR1 it rewrites one byte of it (as a JIT recompiling in place).
#    Counting and tracing must stop saying so, keep what was counted, and leave the target
#    running; a target of more than 1024 threads is refused with the reason. Threads created
#    after the attach get the breakpoints (jit_thread: 8 threads x 1000 calls, none before);
#    a loop whose exit jumps out of the function (jit_esc) and code that jumps into the middle
#    of an instruction (jit_bad: refused) are handled.
cat >"$TDIR/jitswap.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static volatile sig_atomic_t swap, spawn;
static uint8_t *p;
static void on_usr1(int s) { (void)s; swap = 1; }
static void on_usr2(int s) { (void)s; spawn = 1; }
static void *idle(void *a) { (void)a; pause(); return NULL; }
static void *caller(void *a)
{
	for (int i = 0; i < 1000; i++)
		((void (*)(void))(p + 16))();
	return a;
}
int main(int argc, char **argv)
{
	/* jit_loop: mov ecx, 100; L: dec ecx; jnz L; ret */
	static const uint8_t loop[] = {0xb9, 0x64, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3};
	/* jit_esc: mov ecx, 100; L: dec ecx; jz jit_ret (outside it); jmp L */
	static const uint8_t esc[] = {0xb9, 0x64, 0, 0, 0, 0xff, 0xc9, 0x0f, 0x84, 0x23, 0, 0, 0, 0xeb, 0xf6};
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	char path[64];
	pthread_attr_t at;
	FILE *f;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memcpy(p, loop, sizeof(loop));
	p[16] = 0xc3;		    /* jit_thread: ret (called by threads made at SIGUSR2) */
	p[32] = 0xeb, p[33] = 0xff; /* jit_bad: jmp into its own middle (never run) */
	memcpy(p + 48, esc, sizeof(esc));
	p[96] = 0xc3;			/* jit_ret */
	memcpy(p + 128, loop, sizeof(loop)); /* jit_dup, older copy */
	p[144] = 0xc3;			/* jit_dup, newer copy: no loop */
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	fprintf(f, "%lx a jit_loop\n%lx 1 jit_thread\n%lx 2 jit_bad\n%lx f jit_esc\n%lx 1 jit_ret\n",
		(unsigned long)p, (unsigned long)p + 16, (unsigned long)p + 32,
		(unsigned long)p + 48, (unsigned long)p + 96);
	/* One name, two copies (as V8 names its on-stack-replacement code): the newer has no loop. */
	fprintf(f, "%lx a jit_dup\n%lx 1 jit_dup\n", (unsigned long)p + 128, (unsigned long)p + 144);
	fclose(f);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 65536);
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, idle, NULL))
			return 1;
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	fprintf(stderr, "ready\n");
	for (;;) {
		((void (*)(void))p)();
		((void (*)(void))(p + 48))();
		if (swap == 1) {
			mprotect(p, 4096, PROT_READ | PROT_WRITE);
			p[1] = 0x65;
			mprotect(p, 4096, PROT_READ | PROT_EXEC);
			swap = 2;
			fprintf(stderr, "swapped\n");
		}
		if (spawn == 1) { /* 4 threads, each of which makes another: 8 x 1000 calls */
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, caller, (void *)1);
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, caller, NULL);
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
			spawn = 2;
			fprintf(stderr, "threads done\n");
		}
		usleep(200);
	}
}
C
if cc -O2 -pthread -o "$TDIR/jitswap" "$TDIR/jitswap.c" 2>"$TDIR/cc.err"; then
	start_js() { # its own stderr file each time: an old "ready" must not count
		rm -f "$TDIR/js.err"
		"$TDIR/jitswap" "$@" 2>"$TDIR/js.err.new" &
		JS=$!; PIDS+=("$JS")
		wait_for 10 grep -q ready "$TDIR/js.err.new"
		mv "$TDIR/js.err.new" "$TDIR/js.err"
	}
	start_js
	out=$(ctl attach "$JS" --calls=jit_loop,jit_thread 2>&1) || fail "attach jitswap" "$out"
	kill -USR2 "$JS"
	wait_for 20 grep -q "threads done" "$TDIR/js.err" || fail "jitswap threads" "$(cat "$TDIR/js.err")"
	sleep 0.5 # the counts are read back every 250 ms
	ctl report "$JS" --top 0 --json >"$TDIR/jt.json"
	python3 - "$TDIR/jt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
calls = {e["function"]: e["calls"] for e in r["entries"]}
ok = calls.get("jit_thread") == 8000
print(("PASS" if ok else "FAIL") + f": threads created after the attach (and by those threads) get the"
      f" breakpoints: jit_thread counted {calls.get('jit_thread')} calls of 8000")
PY
	wait_for 10 at_least_samples "$JS" 1
	kill -USR1 "$JS"
	wait_for 10 grep -q swapped "$TDIR/js.err"
	wait_for 10 sh -c "$KPROFCTL --socket $SOCK list --json | grep -q 'changed (recompiled or freed)'"
	ctl report "$JS" --top 0 --json >"$TDIR/js.json"
	python3 - "$TDIR/js.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t = r["target"]
calls = {e["function"]: e["calls"] for e in r["entries"]}
ok = "changed (recompiled or freed)" in t["hw_stopped"] and calls.get("jit_loop", 0) > 0
print(("PASS" if ok else "FAIL") + f": code rewritten under a breakpoint: counting stopped, said so"
      f" ({t['hw_stopped'][:80]}...), {calls.get('jit_loop', 0)} calls kept")
PY
	kill -0 "$JS" && pass "the target runs on after its code changed" || fail "jitswap alive" ""
	ctl detach "$JS" >/dev/null
	kill "$JS"; wait "$JS" 2>/dev/null
	start_js
	ctl paths "$JS" jit_loop --duration 30 --json >"$TDIR/jsp.json" 2>"$TDIR/jsp.err" &
	CTL=$!
	wait_for 20 tracing "$JS" || fail "jitswap trace starts" "$(cat "$TDIR/jsp.err")"
	kill -USR1 "$JS"
	wait "$CTL"
	python3 - "$TDIR/jsp.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = r["branches"][0] if r["branches"] else {}
ok = r["end_reason"] == "code changed" and "changed" in r["hw_stopped"] and b.get("taken", 0) > 0
print(("PASS" if ok else "FAIL") + f": branch trace of rewritten code ends ({r['end_reason']}),"
      f" counts kept ({b.get('cond')} {b.get('taken')}/{b.get('not_taken')})")
PY
	ctl detach "$JS" >/dev/null
	kill "$JS"; wait "$JS" 2>/dev/null
	start_js
	# All four debug registers held by perf: the branch tracer is refused too, with the reason.
	a=$(awk '$3 == "jit_ret" { print $1 }' /tmp/perf-"$JS".map)
	evs=""
	for off in 96 97 98 99; do evs="$evs,mem:0x$(printf %x $((0x$a - 96 + off))):x"; done
	perf stat -e "${evs#,}" -p "$JS" -o "$TDIR/perf2.txt" &
	PERF=$!
	PIDS+=("$PERF")
	wait_for 10 perf_ready "$PERF" || fail "perf stat holds breakpoints" "$(cat "$TDIR/perf2.txt")"
	out=$(ctl paths "$JS" jit_loop --duration 1 2>&1); rc=$?
	[ $rc -ne 0 ] && grep -q "already uses its debug registers" <<<"$out" &&
		pass "paths refused while a debugger holds the debug registers, with the reason" ||
		fail "paths debugger refusal" "rc=$rc $out"
	stop_tool "$PERF"
	# --structural on anonymous code: one structure graph at a time (test_hwspp.sh checks it).
	out=$(ctl paths "$JS" jit_loop --duration 1 --structural --json 2>/dev/null); rc=$?
	[ $rc -eq 0 ] && python3 -c "import json,sys; s=json.loads(sys.argv[1])['spp']; sys.exit(0 if s['hw'] and s['graphs'][0]['hw_breakpoints'] >= 1 else 1)" "$out" &&
		pass "paths --structural on anonymous code: by breakpoints, graph by graph" ||
		fail "structural on anon" "rc=$rc $(head -c 300 <<<"$out")"
	out=$(ctl paths "$JS" jit_bad --duration 1 2>&1); rc=$?
	[ $rc -ne 0 ] && grep -q "cannot recover the control flow of jit_bad" <<<"$out" &&
		pass "a jump into the middle of an instruction: refused with the reason" ||
		fail "jit_bad" "rc=$rc $out"
	out=$(ctl paths "$JS" jit_dup --duration 0.3 --json 2>/dev/null); rc=$?
	a0=$(awk '$3 == "jit_dup" { print $1; exit }' /tmp/perf-"$JS".map)
	[ $rc -eq 0 ] && python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['start'] == int(sys.argv[2], 16) and len(r['branches']) == 1 else 1)" "$out" "$a0" &&
		pass "two copies under one name (as V8's OSR code): the one with a loop is traced" ||
		fail "jit_dup" "rc=$rc $(head -c 300 <<<"$out")"
	ctl paths "$JS" jit_esc --duration 1 --json >"$TDIR/esc.json" 2>"$TDIR/esc.err" ||
		fail "paths jit_esc" "$(cat "$TDIR/esc.err")"
	python3 - "$TDIR/esc.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = r["branches"][0]
# The trace's start and end may cut a call: at most one more activation than exits, and
# 99 iterations back per call give or take one call's.
t, acts = b["taken"], r["hw_loops"][0]["activations"] if r["hw_loops"] else -1
ok = (len(r["branches"]) == 1 and b["cond"] == "je" and b["taken_to"] == 0 and t > 0
      and 99 * (t - 1) <= b["not_taken"] <= 99 * (t + 1) and t <= acts <= t + 1)
print(("PASS" if ok else "FAIL") + f": a loop that leaves by a jump out of the function: {b['taken']}"
      f" exits, {b['not_taken']} iterations back (99 per call), {r['hw_loops'][0]['activations']} activations")
PY
	ctl detach "$JS" >/dev/null
	kill "$JS"; wait "$JS" 2>/dev/null
	start_js 1100
	out=$(ctl attach "$JS" --calls=jit_loop 2>&1); rc=$?
	[ $rc -ne 0 ] && grep -q "more than 1024 threads" <<<"$out" &&
		pass "1101 threads: refused with the reason" || fail "threads" "rc=$rc $out"
	kill "$JS"; wait "$JS" 2>/dev/null
	n=$(perf_fds)
	[ "$n" -eq "$BASE" ] && pass "no breakpoint left in kprofd after the bad input" ||
		fail "fds at the end" "$BASE before, $n now"
else
	fail "cc jitswap" "$(cat "$TDIR/cc.err")"
fi
finish
