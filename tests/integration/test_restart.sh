#!/usr/bin/env bash
# Profiling goes on through a restart of kprofd (issue 29, item 1): processes attached by a
# client when kprofd stops, and still running (same pid and start time), are attached again at
# the next start with their options, continuing their profile; the rest stay kept, saying why.
# A kprofd killed without stopping (SIGKILL, as a watchdog or the OOM killer does) attaches them
# again too, from the record each attach leaves in the state directory. Played with root's and
# nobody's processes, kprofd started as systemd starts it. The nspawn test does the same through
# systemctl restart under a real systemd (test_systemd_nspawn.sh).
# Needs root, setpriv. About 30 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"

command -v setpriv >/dev/null || { skip "restart" "setpriv is not installed"; exit 0; }
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }

# Root's minijit A at 199 Hz for at most 600 s, nobody's minijit N, root's minijit B (it exits
# while kprofd is down).
start_minijit --seconds 600 || { fail "minijit A starts" ""; exit 1; }
A=$MJ_PID
"${AS_NOBODY[@]}" "$MINIJIT" --seconds 600 >/dev/null 2>"$TDIR/n.err" &
N=$!
PIDS+=("$N")
wait_for 10 grep -q ready "$TDIR/n.err" || { fail "nobody's minijit starts" "$(cat "$TDIR/n.err")"; exit 1; }
start_minijit --seconds 600 || { fail "minijit B starts" ""; exit 1; }
B=$MJ_PID
check "attach A (root, 199 Hz, --duration 600)" ctl attach "$A" --freq 199 --duration 600
check "attach N (nobody)" nctl attach "$N"
check "attach B (root)" ctl attach "$B"
wait_for 30 tfield_ge "$A" samples 30 || fail "A sampled" "$(ctl list)"
wait_for 30 tfield_ge "$N" samples 10 || fail "N sampled" "$(ctl list)"

# 1. A stop (SIGTERM, as systemctl restart sends) and a start.
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
kill -9 "$B"
wait "$B" 2>/dev/null
# The samples A had when kprofd stopped: in its saved profile, read back by the next kprofd.
start_daemon_setsid || { fail "daemon starts again" "see log"; exit 1; }
a_kept=$(tfield "$A" samples)
if wait_for 20 tfield_is "$A" state attached && tfield_is "$A" resumes 1; then
	pass "after a stop and start, A is attached again (resumes 1, $a_kept samples carried over)"
else fail "A attached again" "$(ctl list --all)"; fi
if wait_for 30 tfield_ge "$A" samples $((a_kept + 30)); then
	pass "A is sampled again, its profile continued ($(tfield "$A" samples) samples, one session)"
else fail "A sampled again" "$(ctl list --all --json)"; fi
if [ "$(tfield "$A" freq_hz)" = 199 ] && [ "$(tfield "$A" duration_sec)" = 600 ] &&
	[ "$(tfield "$A" session | wc -l)" = 1 ]; then
	pass "A keeps its options (199 Hz, duration 600 s) and its one session"
else fail "A's options" "$(tfield "$A" freq_hz) Hz, $(tfield "$A" duration_sec) s, sessions $(tfield "$A" session | tr '\n' ' ')"; fi
if wait_for 20 tfield_is "$N" state attached && [ "$(tfield "$N" uid nobody)" = 65534 ] &&
	wait_for 30 tfield_ge "$N" samples 20; then
	pass "nobody's process is attached again for nobody, and sampled"
else fail "N attached again" "$(nctl list --all 2>&1)"; fi
if tfield_is "$B" state detached && tfield "$B" resume_note | grep -q "had exited"; then
	pass "B, gone meanwhile, stays kept and says why: $(tfield "$B" resume_note)"
else fail "B kept" "$(ctl list --all --json)"; fi
if ctl list --all | grep -E "^$A .* resumed" >/dev/null && ctl list --all | grep -E "^$B .* not resumed" >/dev/null; then
	pass "list marks the resumed and the not resumed"
else fail "list marks" "$(ctl list --all)"; fi
if grep -q "pid $A (minijit): attached again after kprofd's restart" "$TDIR/kprofd.log" &&
	grep -q "pid $B (minijit): not attached again after kprofd's restart: the process had exited" "$TDIR/kprofd.log"; then
	pass "the log says which were attached again and which not"
else fail "log" "$(tail -20 "$TDIR/kprofd.log")"; fi

# 2. kprofd killed without stopping (SIGKILL): A and N are attached again from their records.
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
start_daemon_setsid || { fail "daemon starts after SIGKILL" "see log"; exit 1; }
if wait_for 20 tfield_is "$A" state attached && wait_for 30 tfield_ge "$A" samples 20 &&
	tfield_is "$A" resumes 2; then
	pass "after SIGKILL, A is attached again from its record and sampled (resumes 2)"
else fail "A after SIGKILL" "$(ctl list --all --json)"; fi
if wait_for 20 tfield_is "$N" state attached && wait_for 30 tfield_ge "$N" samples 5; then
	pass "after SIGKILL, nobody's process is attached again and sampled"
else fail "N after SIGKILL" "$(nctl list --all 2>&1)"; fi

# 3. A detach is final: no record, not attached again at the next start.
check "detach N" nctl detach "$N"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }
if wait_for 20 tfield_is "$A" state attached && tfield_is "$N" state detached &&
	! ls "$TDIR/state/profiles/$N-"*.resume >/dev/null 2>&1; then
	pass "a detached process is not attached again (no record left), A still is"
else fail "detach final" "$(ctl list --all) $(ls "$TDIR/state/profiles")"; fi
# 4. An exit removes the record too.
kill -9 "$A"
if wait_for 20 tfield_is "$A" state exited && ! ls "$TDIR/state/profiles/$A-"*.resume >/dev/null 2>&1; then
	pass "an exited target leaves no record"
else fail "record after exit" "$(ls "$TDIR/state/profiles")"; fi
[ "$FAILS" = 0 ]
