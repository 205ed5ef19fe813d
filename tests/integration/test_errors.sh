#!/usr/bin/env bash
# Clear errors and exit codes: no daemon, no such process, not attached, bad usage.
. "$(dirname "$0")/lib.sh"

# No daemon on the socket: exit 3 and a hint.
out=$(ctl status 2>&1); rc=$?
if [ $rc -eq 3 ] && grep -q "is kprofd running" <<<"$out"; then pass "no daemon: exit 3 with a hint"
else fail "no daemon" "rc=$rc out=$out"; fi

start_daemon || { fail "daemon starts" "see log"; exit 1; }
pass "daemon starts"

# A socket for a group the user is not in (the installed unit: 0660, group kprof): the error
# names the group to join (issue 29, item 7).
if command -v setpriv >/dev/null; then
	mode=$(stat -c %a "$SOCK") grp=$(stat -c %G "$SOCK")
	chgrp root "$SOCK" && chmod 660 "$SOCK"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$KPROFCTL" --socket "$SOCK" status 2>&1); rc=$?
	chmod "$mode" "$SOCK"; chgrp "$grp" "$SOCK"
	if [ $rc -eq 3 ] && grep -q "it is for group root; join it, e.g. sudo usermod -aG root" <<<"$out"; then
		pass "no permission on the socket: the group to join is named"
	else fail "socket permission error" "rc=$rc out=$out"; fi
fi

# A second daemon on the same socket refuses to start and leaves the first one alone.
# It says so before it loads anything: its state directory is not read (a bad file there would be
# renamed .bad and reported) and no BPF program is loaded.
mkdir -p "$TDIR/state2/profiles" && echo garbage >"$TDIR/state2/profiles/1-1.kprof"
"$KPROFD" --socket "$SOCK" --state-dir "$TDIR/state2" >"$TDIR/second.log" 2>&1; rc=$?
if [ $rc -ne 0 ] && grep -q "already listening" "$TDIR/second.log" && ctl status >/dev/null; then
	pass "second daemon on the same socket refused"
else fail "second daemon" "rc=$rc $(cat "$TDIR/second.log")"; fi
if [ -e "$TDIR/state2/profiles/1-1.kprof" ] && ! grep -qiE "kept profile|BPF" "$TDIR/second.log"; then
	pass "second daemon refused before reading its state directory or loading BPF"
else fail "second daemon order" "$(ls "$TDIR/state2/profiles"; cat "$TDIR/second.log")"; fi

# A PID that does not exist (pid_max is at most 4194304).
out=$(ctl attach 4194304 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "no such process" <<<"$out"; then pass "attach dead pid: no such process"
else fail "attach dead pid" "rc=$rc out=$out"; fi

out=$(ctl report 4194300 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "not attached" <<<"$out"; then pass "report of a pid never attached"
else fail "report not attached" "rc=$rc out=$out"; fi

out=$(ctl detach 4194300 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "not attached" <<<"$out"; then pass "detach of a pid never attached"
else fail "detach not attached" "rc=$rc out=$out"; fi

# Bad usage: exit 2 without talking to the daemon.
for args in "attach" "attach abc" "attach 1 --freq 0" "attach 1 --freq 5000" "report 1 2" \
	"frobnicate" "report 1 --top -3"; do
	# shellcheck disable=SC2086
	ctl $args >/dev/null 2>&1; rc=$?
	if [ $rc -eq 2 ]; then pass "usage error: kprofctl $args"
	else fail "usage error: kprofctl $args" "rc=$rc"; fi
done

# A value out of range: one message, naming the verb, the option and the range that holds.
for e in 2 1e-9 0 x; do
	out=$(ctl attach 1 --eps "$e" 2>&1); rc=$?
	want="kprofctl attach: --eps: '$e' is not a number in [1e-7, 1] (see kprofctl attach --help)"
	if [ $rc -eq 2 ] && [ "$out" = "$want" ]; then pass "attach --eps $e: one message with the range [1e-7, 1]"
	else fail "attach --eps $e" "rc=$rc out=$(tr '\n' '|' <<<"$out")"; fi
done

# Attaching twice, detaching, then the kept profile is still there.
sleep 300 & SP=$!; PIDS+=("$SP")
check "attach a sleeping process" ctl attach "$SP"
out=$(ctl attach "$SP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "already attached" <<<"$out"; then pass "second attach refused"
else fail "second attach" "rc=$rc out=$out"; fi
check "detach" ctl detach "$SP"
if [ "$(target_state "$SP")" = detached ]; then pass "detached profile kept"
else fail "detached profile kept" "$(ctl list)"; fi
out=$(ctl detach "$SP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "not attached" <<<"$out"; then pass "detach twice refused"
else fail "detach twice" "rc=$rc out=$out"; fi
# A thread id is not a process.
python3 -c 'import threading,time
t=threading.Thread(target=time.sleep,args=(60,)); t.start(); print(threading.get_native_id(), flush=True)
import os; time.sleep(60)' >"$TDIR/py.out" & PY=$!; PIDS+=("$PY")
wait_for 5 test -s "$TDIR/py.out"
TID=$(ls /proc/$PY/task | grep -v "^$PY$" | head -1)
out=$(ctl attach "$TID" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "thread" <<<"$out"; then pass "attach to a thread id refused"
else fail "attach thread id" "rc=$rc out=$out"; fi

# The spellings a perf and systemctl user types (issue 29, item 10): attach -p PID, --duration
# with a unit, --since "2 minutes ago", --unit NAME without .service.
start_minijit --seconds 60 || fail "minijit starts" ""
out=$(ctl attach -p "$MJ_PID" --duration 2s --json 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(target_json "$MJ_PID" duration_sec)" = 2 ]; then
	pass "attach -p PID --duration 2s: attached for 2 s"
else fail "attach -p PID --duration 2s" "rc=$rc out=$out"; fi
# Taken as a time: a report, or (no window cut yet, 10 s) the range's own answer, not a usage error.
out=$(ctl report "$MJ_PID" --since "2 minutes ago" 2>&1); rc=$?
if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q "no kept time window in that range" <<<"$out"; }; then
	pass "report --since \"2 minutes ago\" taken as a time"
else fail "report --since \"2 minutes ago\"" "rc=$rc out=$out"; fi
out=$(ctl report --unit kprof-no-such-unit 2>&1); rc=$?
if [ $rc -ne 0 ] && ! grep -q "not a unit name" <<<"$out" && grep -q "kprof-no-such-unit.service" <<<"$out"; then
	pass "--unit NAME is NAME.service, as for systemctl: $out"
else fail "--unit without .service" "rc=$rc out=$out"; fi

# A daemon that does not answer (stopped): the reply's timeout is $KPROF_TIMEOUT's, and kprofctl
# says what it waited and how to wait longer; a bad value is a usage error.
kill -STOP "$DAEMON_PID"
out=$(KPROF_TIMEOUT=1 timeout 20 "$KPROFCTL" --socket "$SOCK" status 2>&1); rc=$?
kill -CONT "$DAEMON_PID"
if [ $rc -eq 3 ] && grep -q "no reply in 1 s (KPROF_TIMEOUT=SECONDS waits longer" <<<"$out"; then
	pass "a stopped daemon: no reply in KPROF_TIMEOUT=1 s, exit 3 and a hint"
else fail "KPROF_TIMEOUT=1 on a stopped daemon" "rc=$rc out=$out"; fi
out=$(KPROF_TIMEOUT=soon "$KPROFCTL" --socket "$SOCK" status 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "KPROF_TIMEOUT: 'soon' is not a number of seconds" <<<"$out" &&
	pass "KPROF_TIMEOUT=soon: usage error" || fail "KPROF_TIMEOUT=soon" "rc=$rc out=$out"
out=$(KPROF_TIMEOUT=0 "$KPROFCTL" --socket "$SOCK" status 2>&1); rc=$?
[ $rc -eq 0 ] && pass "KPROF_TIMEOUT=0 (no limit): status answers" || fail "KPROF_TIMEOUT=0" "rc=$rc out=$out"

if stop_daemon; then pass "daemon stops cleanly on SIGTERM"
else fail "daemon stops cleanly on SIGTERM" "exit status $?: $(tail -3 "$TDIR/kprofd.log")"; fi
if [ ! -e "$SOCK" ]; then pass "socket removed at exit"; else fail "socket removed" "$SOCK still there"; fi
finish
