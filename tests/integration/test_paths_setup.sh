#!/usr/bin/env bash
# paths on anonymous code while the target changes under the set-up: (1) a function given by its
# short name (a JIT's "NAME SOURCE" perf-map line) whose code has no loop: refused with the
# reason, every copy of its whole name tried, nothing read out of bounds (the sanitized run
# aborts on that); (2) threads that start and end all the time (minijit --churn): every trace
# starts, a thread that exits between two breakpoint opens is skipped, not an error; (3) a trace
# of code that does not run stops after its first second, saying why; (4) one of code that runs
# only later, after other work, is not stopped for it; (5) a trace asked for before kprofd has
# read the whole perf map waits for it; (6) one past what a request reads (64 MiB) reads on
# while kprofctl asks again, the target attached meanwhile.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# 1. A stub with no loop, named as V8 names its code ("NAME SOURCE"): the tail block of mj_main
#    (mov rax, rsi; leave; ret), added to minijit's perf map as a JIT adds a stub.
if hw_breakpoints_fire; then
	start_minijit --anon --seconds 60 --print-code --cleanup || { fail "minijit starts" ""; exit 1; }
	P=$MJ_PID
	wait_for 10 grep -q "^code mj_hot" "$MJ_OUT" || fail "minijit prints its code" "$(head -3 "$MJ_OUT")"
	tail=$(awk '/^code mj_main/ {f = 1; next} /^code/ {f = 0} f && /block/ {b = $3} END {print b}' "$MJ_OUT")
	start=${tail%-*}
	end=${tail#*-}
	printf '%x %x mj_stub stub.js:1\n' "$start" $((end - start)) >>"/tmp/perf-$P.map"
	out=$(ctl paths "$P" mj_stub --duration 1 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -q "no loop" <<<"$out"; then
		pass "paths on a short name with no loop: refused with the reason ($(tail -1 <<<"$out" | cut -c1-160))"
	else fail "short name, no loop" "rc=$rc $out"; fi
	ctl status >/dev/null 2>&1 && kill -0 "$DAEMON_PID" 2>/dev/null && pass "kprofd still serves after it" ||
		fail "kprofd alive" "$(tail -5 "$TDIR/kprofd.log")"
	out=$(ctl paths "$P" mj_hot --duration 0.5 --k 2 2>&1) && pass "a trace on the same target then starts" ||
		fail "paths after the refusal" "$out"
	kill "$P"; wait "$P" 2>/dev/null
else
	skip "paths on a short name with no loop (anonymous code)" "$HW_SILENT_WHY"
fi

# 2. Threads that come and go: 12 threads each starting and joining a short thread in a loop.
#    Every trace must start (a thread gone between two opens is skipped). The target lives
#    longer than the 40 traces take on a loaded machine (120 s did not: the last ones found it
#    gone), and is killed after them.
if hw_breakpoints_fire; then
	start_minijit --anon --seconds 900 --paths 20 --churn 12 --cleanup || { fail "minijit starts" ""; exit 1; }
	P=$MJ_PID
	ok=0 bad=0 why=
	for i in $(seq 1 40); do
		if out=$(ctl paths "$P" mj_paths --duration 0.2 --k 2 --json 2>&1 >/dev/null); then
			ok=$((ok + 1))
		else bad=$((bad + 1)) why=$(tail -1 <<<"$out"); fi
	done
	[ "$bad" -eq 0 ] && pass "40 traces on a target whose threads come and go: all started" ||
		fail "paths with exiting threads" "$ok started, $bad failed: $why"
	kill "$P"; wait "$P" 2>/dev/null
else
	skip "paths on anonymous code whose threads come and go" "$HW_SILENT_WHY"
fi

# 3. Code that does not run: minijit without --paths never calls mj_paths while its rounds run.
#    The trace stops after its first second with no hit, saying why, not at its duration.
start_minijit --seconds 120 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
out=$(ctl paths "$P" mj_paths --duration 60 --json 2>"$TDIR/nh.err")
python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ok = r["end_reason"].startswith("no hit in the first second") and r["traced_ms"] < 30000
print(("PASS" if ok else "FAIL") + f": a trace of code that does not run stops: '{r['end_reason']}'"
      f" after {r['traced_ms']:.0f} ms")
PY
kill "$P"; wait "$P" 2>/dev/null

# 4. But code that runs late is not stopped for it: a target idle through the trace's first
#    second (waiting for work), then a million calls each of mj_paths and mj_rec (some 500 ms
#    of CPU) before its 10 calls of mj_two, the function traced. The first second is judged at
#    its end, when the target had not run: the trace counts every call of mj_two.
start_minijit --wait-usr1 --rounds 1 --paths 1000000 --rec 1000000 --two 10 --cleanup ||
	{ fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_two --duration 120 --top 0 --json >"$TDIR/late.json" 2>"$TDIR/late.err" &
C=$!
tracing() { ctl paths "$1" --show --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin)['state'] == 'tracing' else 1)"; }
wait_for 30 tracing "$P" || fail "the late trace starts" "$(cat "$TDIR/late.err")"
sleep 1.5 # past the first second, the target idle
kill -USR1 "$P"; wait "$P"
wait "$C" || fail "kprofctl paths (late)" "$(cat "$TDIR/late.err")"
python3 - "$TDIR/late.json" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["activations"] == 10 and not r["end_reason"].startswith("no hit")
print(("PASS" if ok else "FAIL") + f": a function first called after the trace's first second and"
      f" 500 ms of other work is traced, not stopped: {r['activations']} activations of 10,"
      f" ended: '{r['end_reason']}'")
sys.exit(0 if ok else 1)
PY

# 5. A perf map kprofd has not read in full when the trace is asked for (it reads symbol files
#    in steps of 4 MiB, within an allowance): for a request that names a function it reads on
#    (up to 64 MiB, 250 ms), and the trace starts; not "no JIT function named" (past that,
#    kprofctl is told the map is not read in full yet and asks again for 15 s). The map:
#    400,000 lines of other code, then minijit's own functions (minijit --late-map writes none
#    itself meanwhile).
start_minijit --seconds 120 --paths 10 --late-map 100000 --print-code --cleanup ||
	{ fail "minijit starts" ""; exit 1; }
P=$MJ_PID
wait_for 10 grep -q "^code mj_paths" "$MJ_OUT" || fail "minijit prints its code" "$(head -3 "$MJ_OUT")"
python3 - "$MJ_OUT" "/tmp/perf-$P.map" <<'PY'
import sys
lines = [f"{0x10000000 + 64 * i:x} 40 filler_function_number_{i}_of_a_big_jit\n" for i in range(400000)]
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) >= 4 and w[0] == "code" and w[3] == "size":
        lines.append(f"{int(w[2], 16):x} {int(w[4]):x} {w[1]}\n")
open(sys.argv[2], "w").writelines(lines)
PY
out=$(ctl paths "$P" mj_paths --duration 1 --top 1 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "tracing the paths of mj_paths" <<<"$out" &&
	pass "a function at the end of a perf map not read in full yet: found, the trace starts ($(wc -c <"/tmp/perf-$P.map") bytes)" ||
	fail "big perf map" "rc=$rc $(head -5 <<<"$out")"
kill "$P"; wait "$P" 2>/dev/null

# 6. A map past what one request reads (64 MiB), of a process not attached: the request attaches
#    it and is told "not read in full yet"; the target stays attached, so each time kprofctl
#    asks again the read goes on from where it was, and the trace starts. Before, the failed
#    request dropped the target and each new one read from the start again.
start_minijit --seconds 120 --paths 10 --late-map 100000 --print-code --cleanup ||
	{ fail "minijit starts" ""; exit 1; }
P=$MJ_PID
wait_for 10 grep -q "^code mj_paths" "$MJ_OUT" || fail "minijit prints its code" "$(head -3 "$MJ_OUT")"
python3 - "$MJ_OUT" "/tmp/perf-$P.map" <<'PY'
import sys
with open(sys.argv[2], "w") as f:
    for i in range(0, 1600000, 1000):
        f.writelines(f"{0x10000000 + 64 * j:x} 40 filler_function_number_{j}_of_a_big_jit\n"
                     for j in range(i, i + 1000))
    for l in open(sys.argv[1]):
        w = l.split()
        if len(w) >= 4 and w[0] == "code" and w[3] == "size":
            f.write(f"{int(w[2], 16):x} {int(w[4]):x} {w[1]}\n")
PY
out=$(ctl paths "$P" mj_paths --duration 1 --top 1 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "not read in full yet.*waiting" <<<"$out" &&
	grep -q "tracing the paths of mj_paths" <<<"$out" &&
	pass "a perf map past one request's read ($(wc -c <"/tmp/perf-$P.map") bytes), target not attached: asked again, read on, the trace starts" ||
	fail "perf map past one request" "rc=$rc $(grep -v "^ " <<<"$out" | head -5)"
kill "$P"; wait "$P" 2>/dev/null
exit $((FAILS > 0))
