#!/usr/bin/env bash
# A state directory holding what is not a file (security issue 25, item 8). Before, a FIFO
# named like a kept profile made kprofd wait at start for ever (open() of a FIFO waits for a
# writer). Now every entry is opened O_NONBLOCK and read only if it is a regular file
# (daemon/os/store.c): a FIFO, a socket and a device node named as kept profiles (.kprof), time
# windows (.kpw) and the watch rules (watch.rules) are skipped and logged; kprofd answers; a
# real kept profile next to them is restored; the entries are left where they are.
# Needs root, setsid, python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
ST=$TDIR/state/profiles

# A real kept profile first: a short target, kept and saved.
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }
start_minijit --seconds 60 || { fail "minijit starts" ""; exit 1; }
check "attach" ctl attach "$MJ_PID" --freq 199
wait_for 30 at_least_samples "$MJ_PID" 50 || fail "samples" "$(ctl list)"
check "detach" ctl detach "$MJ_PID"
wait_for 10 eval 'ls "$ST"/*.kprof' || fail "profile saved" "$(ls -la "$ST")"
kill -TERM "$DAEMON_PID"
wait_for 10 eval '! kill -0 "$DAEMON_PID" 2>/dev/null' || { fail "daemon stops" ""; exit 1; }
DAEMON_PID=

mkfifo "$ST/1-2.kprof" "$ST/3-4.kpw" "$ST/watch.rules"
mknod "$ST/5-6.kprof" c 1 3
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$ST/7-8.kprof"
ls -la "$ST" >"$TDIR/ls"
if start_daemon_setsid; then
	pass "kprofd starts with a FIFO, a socket and a device in its state directory"
else
	fail "kprofd starts" "it hung or died: $(tail -5 "$TDIR/kprofd.log")"
	exit 1
fi
for e in 1-2.kprof 5-6.kprof 7-8.kprof 3-4.kpw; do
	if grep -q "$ST/$e is not a regular file: skipped" "$TDIR/kprofd.log"; then
		pass "$e skipped and logged"
	else
		fail "$e skipped and logged" "$(grep -i "$e" "$TDIR/kprofd.log" | tail -2)"
	fi
done
grep -q "watch.rules are unusable (not a regular file)" "$TDIR/kprofd.log" && pass "watch.rules (a FIFO) refused and logged" ||
	fail "watch.rules refused" "$(tail -5 "$TDIR/kprofd.log")"
[ "$(target_state "$MJ_PID")" = detached ] && pass "the real kept profile next to them restored" ||
	fail "real profile restored" "$(ctl list --all)"
[ -p "$ST/1-2.kprof" ] && [ -p "$ST/3-4.kpw" ] && [ -c "$ST/5-6.kprof" ] && [ -S "$ST/7-8.kprof" ] &&
	pass "the entries are left where they are" || fail "entries left" "$(ls -la "$ST")"
check "status answers" tctl status
finish
