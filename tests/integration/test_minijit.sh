#!/usr/bin/env bash
# End to end on the minijit fixture: kprofd names the JIT functions from the perf map, finds the
# known CPU split (within a stated tolerance), unwinds through JIT frames into the C driver,
# keeps the profile of a target that exits (noticed by the BPF exit hook), and honours
# --duration.
. "$(dirname "$0")/lib.sh"
TOL=8 # percentage points: sampling error at ~3000 samples is about 1 pp, the rest is noise
start_daemon || { fail "daemon starts" "see log"; exit 1; }

start_minijit --seconds 120 --truth || { fail "minijit starts" "no ready line"; exit 1; }
P=$MJ_PID
check "attach minijit at 999 Hz" ctl attach "$P" --freq 999
if wait_for 30 at_least_samples "$P" 3000; then pass "3000 samples within 30 s"
else fail "samples" "$(ctl list)"; fi
ctl report "$P" --top 8
ctl report "$P" --top 0 --json >"$TDIR/r1.json"
ctl folded "$P" >"$TDIR/folded"

# One frame, one name and one kind in every view: code of a mapped file that no symbol covers
# (libc's static start-up functions, unless libc's debug file names them) is "[libc.so.6]",
# kind native, in the report and in the folded stacks alike; no "[unknown]" for a file kprofd
# could read.
python3 - "$TDIR/r1.json" "$TDIR/folded" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
folded = {f for line in open(sys.argv[2]) for f in line.rsplit(" ", 1)[0].split(";")}
made = [e for e in r["entries"] if e["function"].startswith("[") and e["module"].endswith(".so.6")]
bad = [e for e in r["entries"] if e["function"] == "[unknown]" and not e["module"].startswith("[")]
ok = not bad and all(e["kind"] == "native" and e["function"] == "[" + e["module"] + "]"
                     and e["function"] in folded for e in made)
print(("PASS" if ok else "FAIL") + ": unnamed libc code is one frame in report and folded: " +
      (", ".join(f"{e['function']} ({e['kind']})" for e in made + bad) or
       "none (libc's debug file names every frame)"))
PY

# Expected split straight from the fixture's IR (printed by --truth at exit): the functions
# and percentages are fixed by the IR, so they are read from a short --rounds run.
"$MINIJIT" --rounds 1 --truth --cleanup 2>/dev/null | awk '$1 == "func" { print $2, $NF }' >"$TDIR/expected"
python3 - "$TDIR/r1.json" "$TDIR/expected" "$TOL" "$P" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); tol = float(sys.argv[3]); pid = sys.argv[4]
exp = dict(l.split() for l in open(sys.argv[2]))
exp = {k: float(v) for k, v in exp.items()}
jit = [e for e in r["entries"] if e["kind"] == "jit"]
names = [e["function"] for e in jit]
print("top JIT functions:", names[:5])
ok = len(names) >= 2 and names[0] == "mj_hot" and names[1] == "mj_warm"
print(("PASS" if ok else "FAIL") + ": the two hottest functions are mj_hot and mj_warm, by name")
mods = {e["module"] for e in jit}
ok = mods == {"perf-%s.map" % pid}
print(("PASS" if ok else "FAIL") + ": JIT frames come from the perf map (%s)" % mods)
mj = {e["function"]: e["self"] for e in jit if e["function"] in exp}
tot = sum(mj.values())
worst = 0
for name, pct in exp.items():
    got = 100.0 * mj.get(name, 0) / tot if tot else 0
    print(f"  {name}: measured {got:.1f}% expected {pct:.1f}%")
    worst = max(worst, abs(got - pct))
ok = tot > 0 and worst <= tol
print(("PASS" if ok else "FAIL") + f": self split matches the fixture's within {tol} pp (worst {worst:.1f} pp)")
share = tot / r["total_samples"]
print(("PASS" if share > 0.9 else "FAIL") + f": {100*share:.1f}% of samples land in JIT code")
PY

# Frame-pointer unwinding through JIT frames into the C driver.
hot=$(awk '/;mj_hot [0-9]+$/ { n += $NF } END { print n + 0 }' "$TDIR/folded")
full=$(awk '/main;run_round;mj_main;mj_hot [0-9]+$/ { n += $NF } END { print n + 0 }' "$TDIR/folded")
if [ "$hot" -gt 0 ] && [ $((full * 100 / hot)) -ge 90 ]; then
	pass "stacks unwind through JIT frames: $full of $hot mj_hot samples under main;run_round;mj_main"
else fail "JIT unwinding" "$full of $hot; $(sort -t' ' -k2 -nr "$TDIR/folded" | head -3)"; fi
if grep -q "mj_warm;mj_leaf " "$TDIR/folded"; then pass "JIT-to-JIT call mj_warm -> mj_leaf seen"
else fail "JIT-to-JIT call" "no mj_warm;mj_leaf stack"; fi

# The target is killed: the BPF exit hook notices, the profile is kept and complete.
before=$(samples "$P")
kill -9 "$P"; wait "$P" 2>/dev/null
if wait_for 10 state_is "$P" exited; then pass "killed target marked exited"
else fail "exit noticed" "$(ctl list)"; fi
if grep -q "pid $P (minijit) exited (signal 9)" "$TDIR/kprofd.log"; then pass "exit seen by the BPF exit hook, signal 9"
else fail "BPF exit hook" "$(grep "$P" "$TDIR/kprofd.log")"; fi
after=$(samples "$P")
logged=$(sed -nE "s/.*pid $P \(minijit\) exited \(signal 9\), ([0-9]+) samples kept.*/\1/p" "$TDIR/kprofd.log")
if [ -n "$logged" ] && [ "$logged" = "$after" ]; then
	pass "the exit's log line counts the kept profile's samples ($logged)"
else fail "exit log count" "log says '${logged}', the kept profile has $after"; fi
ctl report "$P" --json --top 3 >"$TDIR/r2.json"
if [ "$after" -ge "$before" ] && grep -q '"function":"mj_hot"' "$TDIR/r2.json"; then
	pass "final profile of the dead target readable ($after samples, named)"
else fail "final profile" "before=$before after=$after $(cat "$TDIR/r2.json")"; fi
rm -f "/tmp/perf-$P.map"

# Anonymous code and the 0x/upper-case perf map style; a normal exit with status 0.
start_minijit --anon --perf-map-style=0x --seconds 6 --cleanup || { fail "minijit --anon starts" ""; exit 1; }
A=$MJ_PID
check "attach minijit --anon" ctl attach "$A" --freq 499
wait_for 20 at_least_samples "$A" 800
top=$(ctl report "$A" --json --top 0 | python3 -c "import json,sys
print([e['function'] for e in json.load(sys.stdin)['entries'] if e['kind']=='jit'][0])")
if [ "$top" = mj_hot ]; then pass "anonymous JIT code with a 0x-style perf map: mj_hot on top"
else fail "anon top" "$top"; fi
wait "$A"
if wait_for 10 state_is "$A" exited && ctl list --all | grep -q "exited"; then
	pass "normal exit noticed"
else fail "normal exit" "$(ctl list)"; fi
if ctl list --all --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid']==$A][0]; sys.exit(t['exit_code'] != 0)"; then
	pass "exit status 0 recorded"
else fail "exit status" "$(ctl list --all --json)"; fi

# --duration: sampling stops by itself, the profile stays.
start_minijit --seconds 30 --cleanup || { fail "minijit starts" ""; exit 1; }
D=$MJ_PID
check "attach --duration 2" ctl attach "$D" --duration 2
if wait_for 10 state_is "$D" detached; then pass "duration over: detached"
else fail "duration" "$(ctl list)"; fi
n1=$(samples "$D"); sleep 1; n2=$(samples "$D")
if [ "$n1" = "$n2" ] && [ "$n1" -gt 0 ]; then pass "no samples after the duration ($n1 kept)"
else fail "samples after duration" "$n1 -> $n2"; fi
finish
