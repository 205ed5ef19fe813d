#!/usr/bin/env bash
# PID reuse while kprofd is stalled: a target is a process (pid and start time), not a pid. A busy
# process of user nobody is attached by nobody; kprofd is stopped (SIGSTOP), the target killed
# and reaped, and a root busy loop started on the same pid (through ns_last_pid) runs 2 s at
# 999 Hz. When kprofd goes on, nobody's profile must not hold the root process's samples and the
# root process must not be attached. Then the ordinary cases still work: an exit is seen at once,
# attach and detach. Needs root, setpriv (util-linux) and python3.
. "$(dirname "$0")/lib.sh"
NOBODY=65534
[ "$(id -u)" = 0 ] || { skip "pid reuse" "needs root"; exit 0; }
for tool in setpriv python3; do
	command -v "$tool" >/dev/null || { skip "pid reuse" "$tool is not installed"; exit 0; }
done
[ -w /proc/sys/kernel/ns_last_pid ] || { skip "pid reuse" "/proc/sys/kernel/ns_last_pid is not writable"; exit 0; }
NOBODY_PRIV=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# --- 1. The pid of nobody's exited target taken by a root process while kprofd is stopped.
# Not through a function: $! must be the process itself, not a subshell.
"${NOBODY_PRIV[@]}" sh -c 'while :; do :; done' &
V=$!
PIDS+=("$V")
# setpriv runs as root until it execs sh: attach the process once it is nobody's.
wait_for 5 grep -qE "^Uid:\s+$NOBODY\s+$NOBODY\s+$NOBODY" "/proc/$V/status"
check "nobody attaches its busy process" "${NOBODY_PRIV[@]}" "$KPROFCTL" --socket "$SOCK" attach "$V" --freq 999
wait_for 15 at_least_samples "$V" 300 || fail "samples of nobody's target" "$(ctl list --all)"
# Stopped, the target is not sampled any more: what the profile holds now is all of it.
kill -STOP "$V"
before=$(samples "$V")
kill -STOP "$DAEMON_PID"
kill -9 "$V"
wait "$V" 2>/dev/null
# The exit hook itself removed the target from the BPF map (kprofd cannot: it is stopped).
if command -v bpftool >/dev/null; then
	for id in $(grep -hs '^map_id:' /proc/"$DAEMON_PID"/fdinfo/* | awk '{ print $2 }' | sort -un); do
		bpftool map show id "$id" | grep -q 'name kp_targets ' && MID=$id
	done
	if bpftool map dump id "${MID:-0}" -j | python3 -c "import json,sys
sys.exit(any(e['formatted']['key'] == $V for e in json.load(sys.stdin)))"; then
		pass "the exit hook removed pid $V from kp_targets while kprofd is stopped"
	else fail "kp_targets entry after the exit" "map ${MID:-none}: $(bpftool map dump id "${MID:-0}" 2>&1 | head -5)"; fi
else skip "kp_targets entry after the exit" "bpftool is not installed"; fi
R=
for _ in $(seq 20); do
	echo $((V - 1)) >/proc/sys/kernel/ns_last_pid
	sh -c 'while :; do :; done' &
	if [ "$!" = "$V" ]; then R=$!; PIDS+=("$R"); break; fi
	kill -9 "$!"; wait "$!" 2>/dev/null # another process took the pid first: try again
done
if [ -z "$R" ]; then
	kill -CONT "$DAEMON_PID"
	fail "pid reused" "could not start a process on pid $V in 20 tries"; exit 1
fi
pass "root busy loop started on nobody's old pid $V while kprofd is stopped"
deadline=$((SECONDS + 2))
while [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done # the reusing process runs 2 s
kill -CONT "$DAEMON_PID"
if wait_for 10 state_is "$V" exited; then pass "nobody's old target is marked exited"
else fail "old target exited" "$(ctl list --all)"; fi
sleep 1.5 # a housekeeping tick: a wrongly sampled process would add samples here
after=$(samples "$V")
if [ -n "$after" ] && [ "$after" -le $((before + 5)) ]; then
	pass "nobody's profile holds none of the root process's samples ($before before, $after after)"
else fail "samples of the reused pid" "nobody's profile grew from $before to $after samples"; fi
n=$(ctl list --all --json | python3 -c "import json,sys
print(sum(t['pid'] == $V and t['state'] == 'attached' for t in json.load(sys.stdin)['targets']))")
[ "$n" = 0 ] && pass "the root process on the reused pid is not attached" ||
	fail "reused pid attached" "$(ctl list --all)"
kill -9 "$R"
wait "$R" 2>/dev/null

# --- 2. The ordinary cases: an exit seen at once, attach and detach.
"${NOBODY_PRIV[@]}" sh -c 'while :; do :; done' &
E=$!
PIDS+=("$E")
check "attach a process that will exit" ctl attach "$E" --freq 999
wait_for 15 at_least_samples "$E" 100 || fail "samples before the exit" "$(ctl list --all)"
kill -9 "$E"
wait "$E" 2>/dev/null
t0=$SECONDS
if wait_for 2 state_is "$E" exited; then pass "an exit is seen within 2 s ($((SECONDS - t0)) s)"
else fail "prompt exit" "$(ctl list --all)"; fi

sh -c 'while :; do :; done' &
D=$!
PIDS+=("$D")
check "attach" ctl attach "$D" --freq 499
wait_for 15 at_least_samples "$D" 100 && pass "an attached process is sampled" ||
	fail "attached process sampled" "$(ctl list --all)"
check "detach" ctl detach "$D"
n1=$(samples "$D")
sleep 1
n2=$(samples "$D")
[ "$(target_state "$D")" = detached ] && [ "$n2" -le $((n1 + 5)) ] &&
	pass "a detached process is not sampled ($n1, then $n2)" ||
	fail "detached" "state $(target_state "$D"), samples $n1 then $n2"
check "attach again after a detach" ctl attach "$D" --freq 499
wait_for 15 at_least_samples "$D" $((n2 + 100)) && pass "sampled again after the new attach" ||
	fail "sampled after reattach" "$(ctl list --all)"
kill -9 "$D"
wait "$D" 2>/dev/null
wait_for 5 state_is "$D" exited || fail "reattached target exited" "$(ctl list --all)"
finish
