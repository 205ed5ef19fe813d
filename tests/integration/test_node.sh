#!/usr/bin/env bash
# A real JIT: Node with --perf-basic-prof writes a live perf map; kprofd must name the hot JS
# function by its JS name, as a JIT (perf-map) frame, and put it above the warm one.
. "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null; then skip "node" "node is not installed"; exit 0; fi
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# Run in TDIR: V8 may drop an isolate-*.log into its working directory.
(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/tests/fixtures/hot.js" 30) >"$TDIR/node.out" 2>"$TDIR/node.err" &
NP=$!; PIDS+=("$NP")
wait_for 15 grep -q ready "$TDIR/node.err" || { fail "node starts" "$(cat "$TDIR/node.err")"; exit 1; }
# Let V8 optimize the hot loop and write its perf-map line.
wait_for 15 grep -q hotFunction "/tmp/perf-$NP.map" || { fail "node perf map" "no hotFunction in /tmp/perf-$NP.map"; exit 1; }
check "attach node" ctl attach "$NP" --freq 499
if wait_for 30 at_least_samples "$NP" 1500; then pass "samples arrive"; else fail "samples arrive" "$(ctl list)"; fi
ctl report "$NP" --top 0 --json >"$TDIR/report.json"
ctl report "$NP" --top 10
python3 - "$TDIR/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
jit = [e for e in r["entries"] if e["kind"] == "jit"]
def self_of(name):
    return sum(e["self"] for e in jit if name in e["function"])
hot, warm = self_of("hotFunction"), self_of("warmFunction")
total = r["total_samples"]
print(f"hotFunction {hot}/{total}, warmFunction {warm}/{total}")
ok = True
if not jit or "hotFunction" not in jit[0]["function"]:
    print("FAIL: node hottest JIT function: top JIT entry is", jit[0]["function"] if jit else None); ok = False
else:
    print("PASS: node hottest JIT function is hotFunction, named as in the perf map")
if hot > warm > 0 and hot > 0.3 * total:
    print("PASS: node hotFunction above warmFunction, over 30% of samples")
else:
    print("FAIL: node split: hot", hot, "warm", warm, "total", total); ok = False
PY

# Exact counts of one JS function named as `report` shows it without V8's appended source
# ("JS:*hotFunction /path/hot.js:11:21"): hardware breakpoints (the code is anonymous memory).
if hw_breakpoints_fire; then
	ctl detach "$NP" >/dev/null
	out=$(ctl attach "$NP" --calls='JS:*hotFunction' 2>&1) &&
		pass "attach --calls='JS:*hotFunction' (the name without its source)" ||
		fail "attach --calls by the short name" "$out"
	sleep 1
	ctl report "$NP" --top 0 --json | python3 -c 'import json, sys
r = json.load(sys.stdin)
c = {e["function"]: e["calls"] for e in r["entries"] if e["calls"]}
hot = [f for f in c if f.startswith("JS:*hotFunction ")]
print(("PASS" if hot and len(c) == 1 else "FAIL") + ": calls counted for %s only: %s" % (hot, c))'
else
	skip "attach --calls on a V8 JIT function by its short name" "$HW_SILENT_WHY"
fi
finish
