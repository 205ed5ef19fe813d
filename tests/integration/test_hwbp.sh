#!/usr/bin/env bash
# Hardware execute breakpoints on JIT code in anonymous memory (minijit --anon, Node), where
# uprobes cannot go. Exact call counts (attach --calls=NAME,...) equal minijit's own counters,
# four functions exactly and more in turns (estimated, said so); a thread whose debug registers
# are taken (a fixture that holds all four on itself, as a debugger would) is refused with the
# reason; no breakpoint event stays open in kprofd after detach (/proc/PID/fdinfo).
# Not sanitized: breakpoint hits cost ~10 us each, and the runs need their full length.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# perf_fds: perf events open in kprofd now (fdinfo does not say which kind: compared with the
# count before the target came, when kprofd holds only its per-CPU sets).
perf_fds() { ls -l /proc/"$DAEMON_PID"/fd 2>/dev/null | grep -c "anon_inode:\[perf_event\]"; }
BASE=$(perf_fds)

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
n=$(perf_fds)
[ "$n" -eq "$BASE" ] && pass "no breakpoint event left in kprofd after the target exited ($n perf events, as before)" ||
	fail "bp fds after exit" "$BASE before, $n now"
