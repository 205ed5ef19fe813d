#!/usr/bin/env bash
# What probes cost, measured: kprofd measures one hit's CPU time on this host (a uprobe, a
# hardware breakpoint) and reports each trace's slowdown from its hits. A workload that reports
# its own work per CPU second (minijit --progress, tests/fixtures/rate.js) is traced with
# paths; its rate before and while traced gives the real slowdown, which kprof's must be within
# a factor 1.5 of: uprobes on minijit's file-backed code, breakpoints on its anonymous code and
# on Node's. Rates per CPU second, not per wall second: a loaded host slows both alike.
# kprofd's default budget (1.1x) is kept by taking the probes off and putting them back: the
# workload's own rate over such a trace is at most 1.1x lower, and the trace says its duty;
# --max-slowdown X asks for another budget, 0 for none, each stated.
# Samples at a hardware breakpoint go under [kprof probes].
# Not sanitized: the runs need their full length and the sanitizers change the rates.
. "$(dirname "$0")/lib.sh"
PROBE_SLOWDOWN=default start_daemon || { fail "daemon starts" "see log"; exit 1; }

tracing() {
	ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"
}
lines() { wc -l <"$1"; }
grown() { [ "$(lines "$1")" -ge "$2" ]; }
show() { ctl paths "$1" --show --json 2>/dev/null; }
# compare NAME PID FUNCTION OUT WHOLE: the workload's rate over 12 progress lines before the
# trace, then over 25 lines while traced, with kprof's hits read at both ends of those: the
# slowdown kprof's hits and measured cost give for that interval must be within a factor 1.5 of
# the rate's, or the share of the target's CPU the two give the probes within 1.3x. WHOLE=1: so must the slowdown of the whole trace, in its reply (a steady load;
# breakpoints that take turns on loops of different heat are not: Node's).
compare() {
	local name=$1 pid=$2 func=$3 out=$4 whole=$5 n0 b0 b1 t0 t1 s0 s1 a0 a1 ctl_pid
	n0=$(lines "$out")
	wait_for 60 grown "$out" $((n0 + 12)) || { fail "$name: progress" "$(tail -2 "$out")"; return; }
	b0=$(sed -n "$((n0 + 1))p" "$out") b1=$(tail -1 "$out")
	ctl paths "$pid" "$func" --duration 30 --max-slowdown 0 --json >"$TDIR/p.json" 2>"$TDIR/p.err" &
	ctl_pid=$!
	wait_for 30 tracing "$pid" || { fail "$name: trace starts" "$(cat "$TDIR/p.err")"; return; }
	n0=$(lines "$out")
	wait_for 30 grown "$out" $((n0 + 1))
	t0=$(tail -1 "$out") s0=$(show "$pid")
	n0=$(lines "$out")
	wait_for 90 grown "$out" $((n0 + 25))
	t1=$(tail -1 "$out") s1=$(show "$pid")
	ctl paths "$pid" --stop >/dev/null 2>&1
	wait "$ctl_pid" || { fail "$name: paths" "$(cat "$TDIR/p.err")"; return; }
	# The rate again after the trace: the base is the mean of before and after (a JIT's
	# code and its collector drift).
	n0=$(lines "$out")
	wait_for 60 grown "$out" $((n0 + 13)) || { fail "$name: progress after" "$(tail -2 "$out")"; return; }
	a0=$(sed -n "$((n0 + 1))p" "$out") a1=$(tail -1 "$out")
	ATTEMPT=${ATTEMPT:-1} python3 - "$name" "$b0" "$b1" "$t0" "$t1" "$s0" "$s1" "$TDIR/p.json" "$whole" "$a0" "$a1" <<'PY'
import json, os, sys
name, b0, b1, t0, t1, s0, s1, whole = sys.argv[1:6] + [json.loads(sys.argv[6]),
                                                       json.loads(sys.argv[7]), sys.argv[9]]
a0, a1 = sys.argv[10:12]
def parse(l):
    l = l.split()
    return int(l[2]), int(l[4])
def rate(a, b):
    (ca, ua), (cb, ub) = parse(a), parse(b)
    return (ub - ua) / ((cb - ca) / 1e9), cb - ca
before, after = rate(b0, b1)[0], rate(a0, a1)[0]
base = (before + after) / 2
traced, cpu = rate(t0, t1)
real = base / traced if traced > 0 else float("inf")
hits, cost = s1["probe_hits"] - s0["probe_hits"], s1["hit_cost_ns"]
est = cpu / max(cpu - hits * cost, cpu / 100) if cost else 0
# Within a factor 1.5. Both rates are per CPU second, but a host loaded by others (CI, builds)
# still shifts them: a first run off by up to 3x is measured once more (the line says so), and
# the second run decides.
attempt = os.environ.get("ATTEMPT", "1")
r = json.load(open(sys.argv[8]))
HIT_TOL = float(os.environ.get("COST_HIT_TOL", "1.3"))
if hits == 0 and whole == "0":
    # V8 replaced or inlined the copy traced after kprofd read its perf map: the trace
    # counts nothing. Traced again (up to 3 times: the new copy gathers the samples).
    if int(os.environ.get("NOHIT_TRY", "1")) < 3:
        print(f"AGAIN: {name}: the copy traced got no hit (V8 replaced it): traced once more")
        sys.exit(4)
    print(f"SKIP: {name}: the copy traced got no hit in 3 traces (V8 replaced it): nothing to compare")
    sys.exit(0)
# A hit's cost the workload's rate implies: the CPU the trace took from it, per hit. Where the
# hits take most of the target's CPU (breakpoints: 2-5x), the slowdown magnifies an error in the
# cost (20 us against 16 us is 4.9x against 2.8x), so two slowdowns also agree when the shares
# of the CPU they give the probes (1 - 1/slowdown, the cost's ratio) are within COST_HIT_TOL.
implied = cpu * (1 - 1 / real) / hits if hits and real > 1 else 0
def close(a, b, tol):
    if a <= 0 or b <= 0:
        return False
    if 1 / tol <= a / b <= tol:
        return True
    fa, fb = 1 - 1 / a, 1 - 1 / b
    return fa > 0 and fb > 0 and 1 / HIT_TOL <= fa / fb <= HIT_TOL
def within(tol):
    ok = hits > 0 and cost > 0 and s1["state"] == "tracing" and close(est, real, tol)
    if whole == "1":
        ok = ok and close(r["slowdown"], real, tol)
    return ok
tol = float(os.environ.get("COST_TOL", "1.5"))
ok = within(tol)
verdict = "PASS" if ok else "FAIL"
if not ok and attempt == "1" and within(3.0):
    verdict = "AGAIN (off by more than 1.5x, within 3x: measured once more)"
print(verdict + f": {name} (within {tol:g}x): kprof's hits give {est:.2f}x slower ({hits} hits of"
      f" {cost / 1000:.1f} us, {r['cost_kind']}, in {cpu / 1e6:.0f} ms of CPU), the workload ran"
      f" {real:.2f}x slower ({before:.0f} before, {after:.0f} after -> {traced:.0f} units per CPU"
      f" second, {implied / 1000:.1f} us a hit); whole trace:"
      f" kprof says {r['slowdown']:.2f}x ({r['hits_per_s']:.0f} hits/s)"
      + (f" (second run)" if attempt != "1" else "")
      + (f"; {cost / 1000:.1f} us a hit measured in the target ({s1['cost_ref']}:"
         f" {100 * s1['ref_share_before']:.1f}% of its samples before,"
         f" {100 * s1['ref_share_during']:.1f}% traced), {s1['hit_cost_calibrated_ns'] / 1000:.1f}"
         f" us calibrated" if cost > s1["hit_cost_calibrated_ns"] else ""))
sys.exit(3 if verdict.startswith("AGAIN") else 0)
PY
}
# compare_twice ARGS: compare, and once more if the first run asks for it (exit 3); a trace of
# a copy V8 replaced (exit 4) is traced again, 3 times at most.
compare_twice() {
	local rc try=1
	while :; do
		NOHIT_TRY=$try compare "$@"
		rc=$?
		[ $rc -eq 4 ] && [ $try -lt 3 ] || break
		try=$((try + 1))
	done
	[ $rc -eq 3 ] && ATTEMPT=2 compare "$@"
	return 0
}

# budget NAME PID FUNCTION OUT: a trace of 10 s under kprofd's default budget (1.1x) of a hot
# function, which alone would slow the workload 1.6x (uprobes) or 2-3x (breakpoints): the budget
# takes the probes off and puts them back, and the workload's rate per CPU second over the
# trace, against the mean of before and after, is at most 1.1x slower (1.25x for a loaded host;
# a first run over it, within 1.6x, is measured once more). The trace runs its whole duration,
# counts paths, and says its duty (the part of the time the probes were in).
budget() {
	local name=$1 pid=$2 func=$3 out=$4 n0 b0 b1 t0 t1 a0 a1
	n0=$(lines "$out")
	wait_for 60 grown "$out" $((n0 + 12)) || { fail "$name: progress" "$(tail -2 "$out")"; return; }
	b0=$(sed -n "$((n0 + 1))p" "$out") b1=$(tail -1 "$out")
	t0=$(tail -1 "$out")
	ctl paths "$pid" "$func" --duration 10 --json >"$TDIR/b.json" 2>"$TDIR/b.err" ||
		{ fail "$name: paths" "$(cat "$TDIR/b.err")"; return; }
	t1=$(tail -1 "$out")
	# After: past the uprobes' removal (about a second), 12 lines.
	n0=$(lines "$out")
	wait_for 60 grown "$out" $((n0 + 20)) || { fail "$name: progress after" "$(tail -2 "$out")"; return; }
	a0=$(sed -n "$((n0 + 8))p" "$out") a1=$(tail -1 "$out")
	ctl paths "$pid" --show >"$TDIR/b.txt" 2>&1
	grep "over the budget of 1.10x" "$TDIR/b.err" >>"$TDIR/b.txt"
	ATTEMPT=${ATTEMPT:-1} python3 - "$name" "$b0" "$b1" "$t0" "$t1" "$a0" "$a1" "$TDIR/b.json" "$TDIR/b.txt" <<'PY'
import json, os, re, sys
name, b0, b1, t0, t1, a0, a1 = sys.argv[1:8]
r = json.load(open(sys.argv[8]))
text = open(sys.argv[9]).read()
def rate(a, b):
    a, b = a.split(), b.split()
    return (int(b[4]) - int(a[4])) / ((int(b[2]) - int(a[2])) / 1e9)
base = (rate(b0, b1) + rate(a0, a1)) / 2
traced = rate(t0, t1)
real = base / traced if traced > 0 else float("inf")
stated = re.search(r"^Budget: at most 1\.10x slower over the trace \(kprofd's default.*went off "
                   r"[0-9]+ times? to keep it.*: in [0-9.]+% of the time traced", text, re.M)
# and, while it ran, kprofctl's progress line
stated = stated and re.search(r"^kprofctl: over the budget of 1\.10x: the probes go off .*\(in "
                              r"[0-9]+% of the time so far", text, re.M)
shape = (r["end_reason"] == "duration" and r["max_slowdown"] == 1.1 and r["max_slowdown_default"]
         and r["budget_offs"] >= 1 and 0 < r["duty"] < 1 and r["path_events"] > 0
         and r["probe_hits"] > 0 and bool(stated))
attempt = os.environ.get("ATTEMPT", "1")
ok = shape and real <= 1.25
verdict = "PASS" if ok else "FAIL"
if not ok and shape and attempt == "1" and real <= 1.6:
    verdict = "AGAIN (over 1.25x, within 1.6x: measured once more)"
print(verdict + f": {name} under the default budget: the workload ran {real:.2f}x slower"
      f" ({base:.0f} -> {traced:.0f} units per CPU second), kprof says {r['slowdown']:.2f}x;"
      f" probes in {100 * r['duty']:.1f}% of the time (off {r['budget_offs']} times),"
      f" {r['path_events']} paths, {r['activations']} activations, ended: {r['end_reason']}"
      + ("" if stated else "; no budget line: " + " | ".join(l for l in text.splitlines()
                                                            if l.startswith("Budget")))
      + (" (second run)" if attempt != "1" else ""))
sys.exit(3 if verdict.startswith("AGAIN") else 0)
PY
}
budget_twice() {
	budget "$@"
	[ $? -eq 3 ] && ATTEMPT=2 budget "$@"
	return 0
}

# 1. Uprobes on minijit's code in a memfd, every block of mj_paths.
start_minijit --seconds 180 --paths 2 --progress --cleanup || { fail "minijit starts" ""; exit 1; }
compare_twice "uprobes on minijit" "$MJ_PID" mj_paths "$MJ_OUT" 1
ctl paths "$MJ_PID" --show | grep -q "^Budget: none (--max-slowdown 0" &&
	pass "--max-slowdown 0: no budget, said so" || fail "no budget" "$(ctl paths "$MJ_PID" --show | grep Budget)"
budget_twice "uprobes on minijit" "$MJ_PID" mj_paths "$MJ_OUT"
# One asked for: stated, and kept the same way.
out=$(ctl paths "$MJ_PID" mj_paths --duration 5 --max-slowdown 1.3 2>&1)
grep -q "Budget: at most 1.30x slower over the trace (--max-slowdown): the probes went off [0-9]* times* to keep it.*: in [0-9.]*% of the time traced" <<<"$out" &&
	pass "--max-slowdown 1.3: the budget asked for, stated, kept by taking the probes off" ||
	fail "--max-slowdown 1.3" "$(grep -i "budget\|trace of\|ended" <<<"$out" | head -3)"
out=$(ctl paths "$MJ_PID" mj_paths --max-slowdown 1.0 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "max-slowdown" <<<"$out" && pass "--max-slowdown 1.0: a usage error" ||
	fail "--max-slowdown 1.0" "rc=$rc $out"
kill "$MJ_PID"; wait "$MJ_PID" 2>/dev/null

# 2. Hardware breakpoints on minijit's anonymous code (mj_paths's loop branches, in turns).
if hw_breakpoints_fire; then
	start_minijit --anon --seconds 180 --paths 10 --progress --cleanup || { fail "minijit starts" ""; exit 1; }
	compare_twice "breakpoints on minijit" "$MJ_PID" mj_paths "$MJ_OUT" 1
	budget_twice "breakpoints on minijit" "$MJ_PID" mj_paths "$MJ_OUT"
	# The traps' time is the probes', not mj_paths's: on this VM a debug trap is a VM exit booked to
	# the instruction it stopped at, so the samples there go under [kprof probes]. The trace took
	# about 60% of minijit's CPU time for about a third of its life so far (less on a loaded host,
	# where the budget keeps the breakpoints off longer): the traps' samples are a share of the
	# whole, and more than mj_paths's own (which would hold them if they were not told apart).
	ctl report "$MJ_PID" --top 0 --json >"$TDIR/hwr.json"
	python3 - "$TDIR/hwr.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
total = r["target"]["samples"]
probes = sum(e["self"] for e in r["entries"] if e["function"] == "[kprof probes]")
paths = sum(e["self"] for e in r["entries"] if e["function"] == "mj_paths")
ok = total > 0 and probes >= 0.05 * total and probes > paths
print(("PASS" if ok else "FAIL") + f": breakpoint traps charged to [kprof probes]: {probes} of {total}"
      f" samples (mj_paths itself {paths})")
PY
	kill "$MJ_PID"; wait "$MJ_PID" 2>/dev/null
else
	skip "breakpoints on minijit" "$HW_SILENT_WHY"
fi

# 3. Hardware breakpoints on Node's optimized code, V8's default flags.
if ! hw_breakpoints_fire; then
	skip "breakpoints on Node" "$HW_SILENT_WHY"
elif command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/$(dirname "$0")/../fixtures/rate.js" 16 50) \
		>"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 30 grep -q ready "$TDIR/node.err" || fail "node starts" "$(cat "$TDIR/node.err")"
	# Sampled before the trace: the shares of its samples before and while traced measure a
	# hit's cost in V8's code (3-4 us more than the calibration's, cold predictors after each
	# trap), which the calibration alone missed by up to 1.7x.
	ctl attach "$NP" --freq 499 >/dev/null || fail "attach node" ""
	# The optimized JS function the loop runs in, as a user picks it from the report: V8
	# inlines rate.js's batch into Node's processImmediate in some runs, and then no copy of
	# batch runs at all. Its name as typed (V8's "JS:*f file:line:col" without the place).
	wait_for 60 at_least_samples "$NP" 1000 || fail "node sampled" "$(ctl list)"
	JSF=$(ctl report "$NP" --top 0 --json | python3 -c "import json, sys
e = [e for e in json.load(sys.stdin)['entries'] if e['kind'] == 'jit' and e['function'].startswith('JS:*')]
top = max(e, key=lambda e: e['total']) if e else None
b = [x for x in e if x['function'].startswith('JS:*batch ')]
# batch when it runs on its own (its caller's total is then mostly batch's), else its caller
pick = max(b, key=lambda x: x['total']) if b and top and max(x['total'] for x in b) * 2 >= top['total'] else top
print(pick['function'].split(' ')[0] if pick else '')")
	echo "Node: tracing ${JSF:=JS:*batch}, the optimized JS function the loop runs in"
	compare_twice "breakpoints on Node" "$NP" "$JSF" "$TDIR/node.out" 0
else skip "breakpoints on Node" "no node"; fi
exit $((FAILS > 0))
