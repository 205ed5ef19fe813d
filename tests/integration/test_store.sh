#!/usr/bin/env bash
# Kept profiles outlive their process and kprofd itself: written to the state directory when a
# target ends or kprofd stops, read back at start (unreadable files set aside), limited by count
# and age, and still subject to the access rules.
. "$(dirname "$0")/lib.sh"
ST=$TDIR/state/profiles
start_daemon || { fail "daemon starts" "see log"; exit 1; }

start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
A=$MJ_PID
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
B=$MJ_PID
ctl attach "$A" --freq 499 >/dev/null && ctl attach "$B" --freq 499 >/dev/null
wait_for 30 at_least_samples "$A" 500 && wait_for 30 at_least_samples "$B" 500
kill -9 "$A"; wait "$A" 2>/dev/null
wait_for 10 state_is "$A" exited
if ls "$ST"/"$A"-*.kprof >/dev/null 2>&1; then pass "exited target's profile written to the state directory"
else fail "profile file written" "$(ls -la "$ST")"; fi
ctl report "$A" --top 0 --json >"$TDIR/a.before"
ctl folded "$A" | sort >"$TDIR/a.folded.before"
ctl hcct "$A" --phi 0.01 --json >"$TDIR/a.hcct.before"
ctl hcct "$A" --phi 0.2 --json >"$TDIR/a.hcct2.before"

# kprofd stops while B is attached: B is drained and saved.
stop_daemon || fail "daemon stops" "exit status $?"
ls "$ST"/"$B"-*.kprof >/dev/null 2>&1 && pass "attached target saved when kprofd stops" ||
	fail "saved at stop" "$(ls -la "$ST"; tail -5 "$TDIR/kprofd.log")"
grep -q "stopping: 1 attached profiles ended and saved" "$TDIR/kprofd.log" && pass "stop logged" ||
	fail "stop logged" "$(tail -3 "$TDIR/kprofd.log")"

# B ends while kprofd is down, so it comes back as a kept profile (a process still running
# would be attached again: test_restart.sh).
kill -9 "$B"; wait "$B" 2>/dev/null
# A corrupt file beside them.
head -c 3000 /dev/urandom >"$ST/4000000-1.kprof"
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
grep -q "kept profiles: 2 restored" "$TDIR/kprofd.log" && pass "2 kept profiles restored at start" ||
	fail "restored" "$(grep -i kept "$TDIR/kprofd.log")"
[ -e "$ST/4000000-1.kprof.bad" ] && grep -q "unreadable" "$TDIR/kprofd.log" &&
	pass "corrupt profile file set aside as .bad and reported" || fail "corrupt file" "$(ls "$ST")"
ctl report "$A" --top 0 --json >"$TDIR/a.after"
ctl folded "$A" | sort >"$TDIR/a.folded.after"
if python3 - "$TDIR/a.before" "$TDIR/a.after" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda r: (r["total_samples"], [(e["function"], e["module"], e["kind"], e["self"], e["total"]) for e in r["entries"]])
sys.exit(strip(a) != strip(b) or a["target"]["state"] != "exited" or b["target"]["state"] != "exited")
PY
then pass "restored report equals the report before the restart"
else fail "restored report" "$(head -c 300 "$TDIR/a.before") vs $(head -c 300 "$TDIR/a.after")"; fi
ctl hcct "$A" --phi 0.01 --json >"$TDIR/a.hcct.after"
ctl hcct "$A" --phi 0.2 --json >"$TDIR/a.hcct2.after"
if python3 - "$TDIR" <<'PY'
import json, sys
d = sys.argv[1]
def key(f):
    h = json.load(open(f))
    return h["n"], h["threshold"], [(n["function"], n["parent"], n["count"], n["err"], n["hot"], n["monitored"]) for n in h["nodes"]]
ok = all(key(f"{d}/a.{n}.before") == key(f"{d}/a.{n}.after") for n in ("hcct", "hcct2"))
sys.exit(not ok or not any(n["hot"] for n in json.load(open(d + "/a.hcct.after"))["nodes"]))
PY
then pass "restored HCCT answers queries (phi 0.01 and 0.2) exactly as before the restart"
else fail "restored HCCT" "$(head -c 400 "$TDIR/a.hcct.after")"; fi
cmp -s "$TDIR/a.folded.before" "$TDIR/a.folded.after" && pass "restored folded stacks identical" ||
	fail "restored folded" "$(diff "$TDIR/a.folded.before" "$TDIR/a.folded.after" | head -5)"
[ "$(target_state "$B")" = detached ] && pass "profile saved at stop restored as detached" ||
	fail "B restored" "$(ctl list --all)"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$KPROFCTL" --socket "$SOCK" report "$A" 2>&1)
grep -q "permission denied" <<<"$out" && pass "another uid cannot read a restored root profile" ||
	fail "restored profile access" "$out"
[ -z "$(ctl list)" ] || ctl list | grep -q "no targets" && pass "plain list shows only attached targets" ||
	fail "plain list" "$(ctl list)"
stop_daemon

# Retention by count: only the newest profile stays, the other file is deleted.
start_daemon --max-kept 1 || { fail "daemon restarts" "see log"; exit 1; }
n=$(ls "$ST"/*.kprof | wc -l)
if [ "$n" -eq 1 ] && [ "$(target_state "$B")" = detached ] && [ -z "$(target_state "$A")" ]; then
	pass "--max-kept 1 keeps the newest profile and deletes the other file"
else fail "retention by count" "$n files; $(ctl list --all)"; fi
stop_daemon

# Retention by age.
start_daemon --kept-max-age 1 || { fail "daemon restarts" "see log"; exit 1; }
no_files() { ! ls "$ST"/*.kprof >/dev/null 2>&1; }
if wait_for 10 no_files && [ -z "$(target_state "$B")" ]; then pass "--kept-max-age drops old profiles and their files"
else fail "retention by age" "$(ls "$ST"; ctl list --all)"; fi
stop_daemon

# Re-attaching a process keeps what detach said it kept: two sessions, each readable (memory
# and disk), numbered oldest first, the same after a restart; plain reads get the newest.
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
C=$MJ_PID
ctl attach "$C" --freq 499 >/dev/null && wait_for 30 at_least_samples "$C" 300
ctl detach "$C" >/dev/null
first=$(samples "$C")
ctl attach "$C" --freq 997 >/dev/null && wait_for 30 at_least_samples "$C" 600
ctl detach "$C" >/dev/null
sess() { ctl report "$C" --json --top 1 "$@" | python3 -c "import json,sys
t=json.load(sys.stdin)['target']; print(t['freq_hz'], t['session'], t['sessions'], t['samples'])"; }
s1=$(sess --session 1) s2=$(sess --session 2) dflt=$(sess)
if [ "${s1% *}" = "499 1 2" ] && [ "${s1##* }" = "$first" ] && [ "${s2% *}" = "997 2 2" ] && [ "$dflt" = "$s2" ] &&
	[ "$(ls "$ST"/"$C"-*.kprof | wc -l)" -eq 2 ]; then
	pass "re-attach keeps the first session: --session 1 ($s1), --session 2 ($s2), 2 files"
else fail "sessions" "s1='$s1' (first $first) s2='$s2' default='$dflt' $(ls "$ST")"; fi
out=$(ctl folded "$C" --session 3 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "has 2 sessions" <<<"$out" && pass "--session 3 of 2: refused, naming how many there are" ||
	fail "session out of range" "rc=$rc $out"
ctl list --all | grep -qE "^$C +1 +minijit" && ctl list --all | grep -qE "^$C +2 +minijit" &&
	pass "list --all shows both sessions of the pid" || fail "list sessions" "$(ctl list --all)"
stop_daemon
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
[ "$(sess --session 1)" = "$s1" ] && [ "$(sess --session 2)" = "$s2" ] &&
	pass "both sessions restored with their numbers after a restart" ||
	fail "sessions restored" "$(sess --session 1) / $(sess --session 2)"
kill "$C" 2>/dev/null
finish
