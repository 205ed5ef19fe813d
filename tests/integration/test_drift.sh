#!/usr/bin/env bash
# Profile drift (kprofctl drift, ALGORITHMS.md §12) against ground truth: minijit --flip-after
# flips mj_phase's branch bias and prints the time; kprofd must report a drift of mj_phase after
# that marker and not before (the latency is printed), none in a steady minijit run sampled as
# long (attached by a watch rule), the same in `kprofctl drift` text and --json, in the journal
# line and in `top --json`; a Node function whose hot loop changes behaviour halfway
# (tests/fixtures/drift.js) is reported after its marker, and so is the path mix of mj_phase
# traced across the flip (paths). Nothing lost, but the detectors' memory freed at the end
# (list --json drift_bytes): the flipped minijit detached, the steady one
# exited, the traced one still attached when kprofd stops, each answers `drift` with the
# result kept with its profile, the same after a restart of kprofd (restored from its state
# directory); a profile kept without drift data (drift off) says so. Bad input: no PID, a bad
# --keys, an unknown PID, a --session that does not exist; attached again, a PID's first session
# keeps its result (--session 1). The first three workloads run at
# once, then the traced one: about 20 s.
# Not sanitized: the detection needs a few hundred samples per function at a steady rate.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }

FLIP=6
start_minijit --phase 40 --flip-after "$FLIP" --seconds 60 || { fail "minijit starts" ""; exit 1; }
FP=$MJ_PID FOUT=$MJ_OUT
ctl attach "$FP" --freq 999 >/dev/null
# The steady one is a watched target: a copy of minijit under its own name, attached by a rule.
cp "$MINIJIT" "$TDIR/steadyjit"
ctl watch add "comm:steadyjit freq=999" >/dev/null || fail "watch rule" "refused"
"$TDIR/steadyjit" --phase 40 --seconds 16 >/dev/null 2>"$TDIR/steady.err" &
SP=$!
PIDS+=("$SP")
wait_for 10 state_is "$SP" attached || fail "steady minijit attached by its watch rule" "$(ctl list)"
NP=
if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/tests/fixtures/drift.js" 16 "$FLIP") \
		>"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!
	PIDS+=("$NP")
	if wait_for 10 grep -q ready "$TDIR/node.err"; then
		ctl attach "$NP" --freq 499 >/dev/null
	else
		fail "node starts" "$(cat "$TDIR/node.err")"
		NP=
	fi
else
	skip "node drift" "node is not installed"
fi

# drift_event PID FUNCTION: the JSON of the first drift of FUNCTION (a substring), if any.
drift_event() {
	ctl drift "$1" --json 2>/dev/null | python3 -c "import json,sys
e=[e for e in json.load(sys.stdin)['events'] if '$2' in e['function']]
assert e
print(json.dumps(e[0]))"
}
has_drift() { drift_event "$1" "$2" >/dev/null; }

wait_for 20 grep -q phase-flip "$FOUT" || fail "minijit flip marker" "none in $FOUT"
if wait_for 12 has_drift "$FP" mj_phase; then
	pass "minijit phase flip reported"
else
	fail "minijit phase flip reported" "$(ctl drift "$FP")"
fi
ctl drift "$FP" --json >"$TDIR/flip.json"
ctl drift "$FP" >"$TDIR/flip.txt"
ctl drift "$SP" --json >"$TDIR/steady.json"
ctl top "$FP" --json --iterations 1 --interval 200 >"$TDIR/top.json"
python3 - "$TDIR/flip.json" "$FOUT" "$TDIR/steady.json" "$TDIR/top.json" <<'PY'
import json, sys
flip = json.load(open(sys.argv[1]))
marker = [l.split() for l in open(sys.argv[2]) if l.startswith("phase-flip")]
steady = json.load(open(sys.argv[3]))
top = json.loads(open(sys.argv[4]).readline())
t_flip = int(marker[0][2]) if marker else None
ev = flip["events"]
phase = [e for e in ev if e["function"] == "mj_phase"]
early = [e for e in ev if t_flip is None or e["time_ns"] < t_flip]
if phase and t_flip and phase[0]["time_ns"] > t_flip and not early:
    e = phase[0]
    print(f"PASS: minijit drift after the marker, none before: latency "
          f"{(e['time_ns'] - t_flip) / 1e6:.0f} ms, overlap {100 * e['overlap']:.1f}% "
          f"over {e['window_samples']} samples (reference {e['reference_samples']}), "
          f"mj_phase sample {e['function_samples']}")
else:
    print("FAIL: minijit drift after the marker, none before:", "flip", t_flip, "events",
          [(e["function"], e["time_ns"]) for e in ev])
sf = [f for f in steady["functions"] if f["function"] == "mj_phase"]
# Not vacuous: the steady mj_phase must have been judged against its reference.
if steady["events_total"] == 0 and sf and sf[0]["min_overlap"] >= 0.5:
    print(f"PASS: steady watched minijit: no drift in {steady['samples']} samples of JIT functions "
          f"(mj_phase: {sf[0]['samples']}, lowest overlap {100 * sf[0]['min_overlap']:.1f}%)")
else:
    print("FAIL: steady watched minijit:", steady["events_total"], "drifts in", steady["samples"],
          "samples:", [(e["function"], e["overlap"]) for e in steady["events"]], sf)
fns = {f["function"]: f for f in flip["functions"]}
if ("mj_phase" in fns and fns["mj_phase"]["drifts"] >= 1 and flip["window"] == 256
        and flip["threshold"] == 0.5 and fns["mj_phase"]["top_keys"]
        and fns["mj_phase"]["top_keys"][0]["key"].startswith("block +0x")
        and any(k["key"] == "-> mj_hot" for k in fns.get("mj_main", {}).get("top_keys", []))):
    print("PASS: drift --json: functions, settings, basic blocks (file-backed code) and callees")
else:
    print("FAIL: drift --json (blocks, callees):", json.dumps(flip)[:600])
tt = [t for t in top["targets"] if t["target"]["pid"] == flip["target"]["pid"]]
if tt and any(e["function"] == "mj_phase" for e in tt[0]["drift_events"]):
    print("PASS: top --json carries the drift event")
else:
    print("FAIL: top --json carries the drift event:", json.dumps(tt)[:400])
PY
[ $? -eq 0 ] || fail "drift checks" "the checker failed (its error is above)"
if grep -Eq "^ (learning|watching) .* mj_phase$" "$TDIR/flip.txt" && grep -q "Drifts (oldest first):" "$TDIR/flip.txt" &&
	grep -q "drift #1 mj_phase: overlap" "$TDIR/flip.txt"; then
	pass "drift text"
else
	fail "drift text" "$(cat "$TDIR/flip.txt")"
fi
if grep -q "info: drift $FP (minijit): mj_phase changed: overlap .* with its reference" "$TDIR/kprofd.log"; then
	pass "journal line"
else
	fail "journal line" "$(grep drift "$TDIR/kprofd.log")"
fi
if ! grep -q "info: drift $SP " "$TDIR/kprofd.log"; then pass "steady run: no journal line"; else
	fail "steady run: no journal line" "$(grep "drift $SP" "$TDIR/kprofd.log")"; fi

if [ -n "$NP" ]; then
	wait_for 10 grep -q phase-flip "$TDIR/node.out" || fail "node flip marker" "none"
	if wait_for 12 has_drift "$NP" "drift.js"; then
		T=$(awk '/phase-flip/ { print $3 }' "$TDIR/node.out")
		E=$(drift_event "$NP" drift.js)
		if python3 -c "import json,sys; e=json.loads(sys.argv[1]); t=int(sys.argv[2])
assert e['time_ns'] > t, (e['time_ns'], t)
print(f\"node: {e['function']} drift {(e['time_ns'] - t) / 1e6:.0f} ms after the marker, overlap {100 * e['overlap']:.1f}%\")" "$E" "$T"; then
			pass "node hot loop change reported after the marker"
		else
			fail "node hot loop change reported after the marker" "$E"
		fi
	else
		fail "node hot loop change reported" "$(ctl drift "$NP")"
	fi
fi

# Bad input.
out=$(ctl drift 2>&1); rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "PID"; then pass "drift without PID"; else fail "drift without PID" "$rc $out"; fi
out=$(ctl drift "$FP" --keys 0 2>&1); rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "keys"; then pass "drift --keys 0"; else fail "drift --keys 0" "$rc $out"; fi
out=$(ctl drift 4194304 2>&1); rc=$?
if [ "$rc" -eq 1 ] && echo "$out" | grep -q "pid 4194304 is not attached"; then pass "drift unknown pid"; else fail "drift unknown pid" "$rc $out"; fi
kill -TERM "$SP"
wait_for 10 state_is "$SP" exited
out=$(ctl drift "$SP" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && echo "$out" | grep -q "^kept: the result when the target ended at .* (exited), kept with its profile$" &&
	echo "$out" | grep -Eq "^ (learning|watching) .* mj_phase$"; then
	pass "drift of an exited target: the kept result"
else
	fail "drift of an exited target: the kept result" "$rc $out"
fi
out=$(ctl drift "$SP" --session 9 2>&1); rc=$?
if [ "$rc" -eq 1 ] && echo "$out" | grep -q "no session 9"; then pass "drift --session 9"; else fail "drift --session 9" "$rc $out"; fi

# drift_same A B: A (a kept result, --json) has the functions and drifts of B, the same but for
# the realtime of the drifts (given by the clocks' offset at each answer).
drift_same() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda r: ([dict(e, realtime_ns=0) for e in r["events"]], r["functions"],
                   [r[k] for k in ("window", "samples", "events_total", "keys_over")])
ph = [e for e in a["events"] if e["function"] == "mj_phase"]
assert a["kept"] and a["target"]["state"] != "attached", (a["kept"], a["target"]["state"])
assert ph and ph[0]["time_ns"] > 0, a["events"]
assert strip(a) == strip(b), (json.dumps(strip(a))[:300], json.dumps(strip(b))[:300])
print(f"{sys.argv[1]}: {len(a['functions'])} functions, {len(a['events'])} drifts "
      f"(mj_phase #{ph[0]['seq']}, overlap {100 * ph[0]['overlap']:.1f}%) as in {sys.argv[2]}")
PY
}
# The flipped minijit detached: the same drift as live, now the kept result.
ctl drift "$FP" --json >"$TDIR/flip2.json"
mem_of() { # PID: state, drift_bytes and memory_bytes of its newest session
	ctl list --all --json | python3 -c "import json,sys
t = max((t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1), key=lambda t: t['attached_at_ns'])
print(t['state'], t['drift_bytes'], t['memory_bytes'])"
}
read -r S0 D0 M0 <<<"$(mem_of "$FP")"
ctl detach "$FP" >/dev/null
# Ended, its detectors are freed: only their result is kept (a packed DriftReply).
read -r S1 D1 M1 <<<"$(mem_of "$FP")"
if [ "$S0" != attached ]; then
	skip "detached: the drift detectors freed" "minijit ended before the detach (a slow machine)"
elif [ "${D0:-0}" -gt 4096 ] && [ "${D1:-0}" -gt 0 ] && [ $((D1 * 4)) -lt "$D0" ] &&
	[ "$M1" -lt "$M0" ]; then
	pass "detached: the drift detectors freed (drift $D0 -> $D1 bytes; target memory $M0 -> $M1)"
else
	fail "detached: the drift detectors freed" "drift ${D0:-?} -> ${D1:-?}, memory ${M0:-?} -> ${M1:-?} ($S0 -> $S1)"
fi
ctl drift "$FP" --json >"$TDIR/kept.json"
ctl drift "$FP" >"$TDIR/kept.txt" 2>&1
if python3 -c "import json,sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
first = lambda r: [e for e in r['events'] if e['function'] == 'mj_phase'][0]
assert a['kept'] and a['kept_reason'] == 'detached' and not a['kept_restored'], a
assert dict(first(a), realtime_ns=0) == dict(first(b), realtime_ns=0), (first(a), first(b))
assert a['samples'] >= b['samples'] and a['events_total'] >= b['events_total']" \
	"$TDIR/kept.json" "$TDIR/flip2.json" && grep -q "drift #1 mj_phase: overlap" "$TDIR/kept.txt" &&
	grep -q "^kept: the result when the target ended at .* (detached), kept with its profile$" "$TDIR/kept.txt"; then
	pass "detached target: drift shows the same drift, kept"
else
	fail "detached target: drift shows the same drift, kept" "$(cat "$TDIR/kept.txt")"
fi
# export --format json carries the same kept result.
ctl export "$FP" --format json -o "$TDIR/export.json" >/dev/null 2>&1
ctl drift "$FP" --json --keys 16 >"$TDIR/kept16.json"
if python3 -c "import json,sys
e, k = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d = e['drift']
assert e['stacks'] and d['kept'], (len(e['stacks']), d['kept'], d['kept_reason'])
for a, b in zip(d['functions'], k['functions']):  # kept with 16 top keys a function
    assert a == b, [(x, a[x], b.get(x)) for x in a if a[x] != b.get(x)]
assert len(d['functions']) == len(k['functions'])
assert [dict(x, realtime_ns=0) for x in d['events']] == [dict(x, realtime_ns=0) for x in k['events']]" \
	"$TDIR/export.json" "$TDIR/kept16.json" 2>"$TDIR/export.err"; then
	pass "export --format json: the profile with its drift result"
else
	fail "export --format json: the profile with its drift result" "$(tail -n 3 "$TDIR/export.err" | cut -c 1-300)"
fi
# Attached again: a new session, live; the first one keeps its result (--session 1).
ctl attach "$FP" --freq 99 >/dev/null
ctl drift "$FP" --json >"$TDIR/again.json"
ctl drift "$FP" --session 1 --json >"$TDIR/session1.json"
if python3 -c "import json,sys
a, b, k = (json.load(open(f)) for f in sys.argv[1:4])
assert not a['kept'] and a['target']['session'] == 2 and a['target']['state'] == 'attached', a['target']
assert b['kept'] and b['target']['session'] == 1 and b['functions'] == k['functions'], b['target']" \
	"$TDIR/again.json" "$TDIR/session1.json" "$TDIR/kept.json"; then
	pass "attached again: drift is live, --session 1 the kept result"
else
	fail "attached again: drift is live, --session 1 the kept result" "$(head -c 400 "$TDIR/session1.json")"
fi

# The path mix when traced: a path trace of mj_phase across the flip (uprobes slow it some 50
# times, so a short run of mj_phase per round keeps the flip on time). The trace runs until the
# flip's drift is seen (a busy machine delays the flip), at most 30 s, then is stopped.
kill -9 "$FP" ${NP:+"$NP"} 2>/dev/null # FP's first session stays kept
wait "$FP" ${NP:+"$NP"} 2>/dev/null
start_minijit --phase 2 --flip-after 3 --seconds 40 || fail "traced minijit starts" ""
PP=$MJ_PID
ctl attach "$PP" --freq 99 >/dev/null
ctl paths "$PP" mj_phase --duration 30 --top 1 >"$TDIR/paths.out" 2>&1 &
CTL=$!
wait_for 30 grep -q phase-flip "$MJ_OUT" && wait_for 20 has_drift "$PP" "mj_phase (paths)"
ctl paths "$PP" --stop >/dev/null 2>&1
wait "$CTL" || fail "paths trace" "$(cat "$TDIR/paths.out")"
T=$(awk '/phase-flip/ { print $3 }' "$MJ_OUT")
E=$(drift_event "$PP" "mj_phase (paths)")
if [ -n "$T" ] && [ -n "$E" ] && python3 -c "import json,sys; e=json.loads(sys.argv[1]); t=int(sys.argv[2])
assert e['time_ns'] > t, (e['time_ns'], t)
assert e['gained'].startswith('path ') and e['lost'].startswith('path '), e
print(f\"paths: mj_phase's path mix drifted {(e['time_ns'] - t) / 1e6:.0f} ms after the marker, overlap {100 * e['overlap']:.1f}%\")" "$E" "$T"; then
	pass "path mix of a traced function: drift after the marker"
else
	fail "path mix of a traced function" "marker '$T' event '$E' $(ctl drift "$PP" | tail -5)"
fi
ctl drift "$SP" --json >"$TDIR/steady_kept.json"

# A restart (drift off now): the three kept results are restored from the state directory, the
# same; the traced minijit, attached when kprofd stopped, keeps what it had then.
ctl drift "$PP" --json >"$TDIR/traced.json"
stop_daemon || fail "daemon stops" "exit status $?"
printf '[drift]\nenabled = off\n' >"$TDIR/nodrift.conf"
start_daemon --config "$TDIR/nodrift.conf" || { fail "daemon restarts" "see log"; exit 1; }
ctl drift "$FP" --session 1 --json >"$TDIR/restored.json"
if drift_same "$TDIR/restored.json" "$TDIR/kept.json" && python3 -c "import json,sys
r = json.load(open(sys.argv[1]))
assert r['kept_restored'] and r['kept_reason'] == 'detached', r" "$TDIR/restored.json" &&
	ctl drift "$FP" --session 1 | grep -q "^kept: .* (detached), kept with its profile and restored after kprofd restarted$"; then
	pass "after a restart: the detached target's drift restored, the same"
else
	fail "after a restart: the detached target's drift restored" "$(ctl drift "$FP" --session 1 2>&1 | head -20)"
fi
ctl drift "$SP" --json >"$TDIR/steady_restored.json"
ctl drift "$PP" --json >"$TDIR/traced_restored.json"
if python3 -c "import json,sys
a, b, c, d = (json.load(open(f)) for f in sys.argv[1:5])
assert a['kept_restored'] and a['kept_reason'] == 'exited' and a['functions'] == b['functions'], a
assert c['kept_restored'] and any(e['function'] == 'mj_phase (paths)' for e in c['events']), c
p = lambda r: [dict(e, realtime_ns=0) for e in r['events'] if e['function'].endswith(' (paths)')]
assert p(c) == p(d), (p(c), p(d))" \
	"$TDIR/steady_restored.json" "$TDIR/steady_kept.json" "$TDIR/traced_restored.json" "$TDIR/traced.json"; then
	pass "after a restart: the exited and the traced targets' drift restored"
else
	fail "after a restart: the exited and the traced targets' drift restored" "$(head -c 600 "$TDIR/traced_restored.json")"
fi
start_minijit --phase 40 --seconds 10 || fail "minijit starts (drift off)" ""
OP=$MJ_PID
ctl attach "$OP" --freq 999 >/dev/null
wait_for 10 at_least_samples "$OP" 50 || fail "samples with drift off" "$(ctl list)"
ctl detach "$OP" >/dev/null
out=$(ctl drift "$OP" 2>&1); rc=$?
if [ "$rc" -eq 1 ] && echo "$out" | grep -q "no drift data was kept with this profile (saved by an older kprofd or drift was off)"; then
	pass "a profile kept without drift data says so"
else
	fail "a profile kept without drift data says so" "$rc $out"
fi
check "kprofd still answers" ctl status
finish
