#!/usr/bin/env bash
# Hostile targets, part 3: processes whose identity is not what it seems, and saves that fail.
#   5a. nobody attaches a setuid-root program it started (ruid 65534, euid 0): refused;
#   5b. nobody's process execs a setuid-root program while attached: kprofd ends the target
#       (within 3 s), and nobody's detach does not act on the now privileged process;
#   13. PID reuse: nobody's process P exits (its profile kept and saved); a process of another
#       user gets PID P and that user attaches it: nobody's kept profile and file remain;
#   14. attach --calls on a process with no perf map: refused with a clear message (before the
#       fix, qsort(NULL, 0) in exact.c: a UBSan report, and the sanitized kprofd of
#       `make test-asan` (-fno-sanitize-recover) dies here);
#   15. a save that fails (state directory full) is retried once there is room, and the profile
#       is back after a restart;
#   16a. a zombie is not attached; 16b. an attach racing a chain of execs ends with the comm of
#       the last program.
# Needs root, setpriv, setsid, cc, python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
for tool in setpriv setsid cc; do
	command -v "$tool" >/dev/null || { skip "hostile procs" "$tool is not installed"; exit 0; }
done
build busy && build execchain || { fail "build helpers" "cc failed"; exit 1; }
ST=$TDIR/state/profiles
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }

# A setuid-root copy of busy, runnable by nobody.
mkdir -p "$TDIR/suid"
chmod 755 "$TDIR/suid"
cp "$BIN/busy" "$TDIR/suid/busy_suid"
chown 0:0 "$TDIR/suid/busy_suid"
chmod 4755 "$TDIR/suid/busy_suid"
uids() { awk '/^Uid:/ { print $2, $3 }' "/proc/$1/status"; }

# --- 5a. A setuid-root program started by nobody.
echo "-- 5a. (at ${SECONDS} s)"
"${AS_NOBODY[@]}" "$TDIR/suid/busy_suid" 2>"$TDIR/suid.err" &
S5=$!
PIDS+=("$S5")
if ! wait_for 10 has_ready "$TDIR/suid.err" || [ "$(uids "$S5")" != "$NOBODY 0" ]; then
	fail "setuid target starts (ruid $NOBODY, euid 0)" "uids $(uids "$S5"); $(cat "$TDIR/suid.err")"
else
	out=$(nctl attach "$S5" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qiE "permission denied|not permitted|privilege|set-?uid|set-user" <<<"$out"; then
		pass "nobody may not attach a setuid-root process it started (ruid $NOBODY, euid 0): $out"
	else fail "attach a setuid-root process as its real uid" "rc=$rc: $out"; fi
fi
kill -9 "$S5" 2>/dev/null

# --- 5b. An attached process of nobody execs the setuid-root program.
echo "-- 5b. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
"${AS_NOBODY[@]}" sh "$FIX/exec_into.sh" "$TDIR/go5" "$TDIR/suid/busy_suid" 2>"$TDIR/exec5.err" &
X5=$!
PIDS+=("$X5")
wait_for 10 grep -q ready "$TDIR/exec5.err" || fail "exec target starts" "$(cat "$TDIR/exec5.err")"
if nctl attach "$X5" --freq 999 >/dev/null && wait_for 20 tfield_ge "$X5" samples 100; then
	touch "$TDIR/go5"
	wait_for 5 eval '[ "$(uids "$X5")" = "$NOBODY 0" ]' || fail "exec into setuid-root" "uids $(uids "$X5")"
	not_attached() { [ "$(tfield "$X5" state)" != attached ]; }
	if wait_for 3 not_attached; then
		pass "nobody's target that exec'd a setuid-root program is ended within 3 s ($(tfield "$X5" state))"
	else fail "target ended on a setuid exec" "still $(tfield "$X5" state) as $(tfield "$X5" comm), uids $(uids "$X5")"; fi
	out=$(nctl detach "$X5" 2>&1)
	rc=$?
	if [ "$rc" = 1 ]; then pass "nobody's detach does not act on the now privileged process: $out"
	else fail "nobody's detach of a setuid-exec'd process" "rc=$rc: $out"; fi
else
	fail "attach the process before its setuid exec" "$(ctl list --all)"
fi
kill -9 "$X5" 2>/dev/null

# --- 13. PID reuse: another user's process gets the PID of nobody's ended, kept process.
echo "-- 13. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
cp "$BIN/busy" "$BIN/nobodyprog"
"${AS_NOBODY[@]}" "$BIN/nobodyprog" 2>"$TDIR/np.err" &
P=$!
wait_for 10 has_ready "$TDIR/np.err"
nctl attach "$P" --freq 999 >/dev/null || fail "nobody attaches $P" ""
wait_for 20 tfield_ge "$P" samples 300
kill -9 "$P"
wait "$P" 2>/dev/null
saved() { ls "$ST/$P"-*.kprof >/dev/null 2>&1; }
if wait_for 10 tfield_is "$P" state exited && wait_for 10 saved; then
	FILE13=$(ls "$ST/$P"-*.kprof | head -1)
	N13=$(tfield "$P" samples)
	echo "nobody's $P exited with $N13 samples, saved as $FILE13"
	# PID P for uid 1 (daemon): ns_last_pid = P - 1, then fork at once; retried on a race.
	"$PY" - "$P" >"$TDIR/reuse.out" 2>&1 <<'PY' &
import os, sys, time
p = int(sys.argv[1])
for attempt in range(50):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(p - 1))
    c = os.fork()
    if c == 0:
        os.setgroups([]); os.setgid(1); os.setuid(1)
        os.execv("/bin/sleep", ["sleep", "60"])
    if c == p:
        print("reused", c, "after", attempt + 1, "tries", flush=True)
        os.waitpid(c, 0)
        sys.exit(0)
    os.kill(c, 9); os.waitpid(c, 0)
print("no luck", flush=True)
PY
	PIDS+=("$!")
	if wait_for 10 grep -q "reused\|no luck" "$TDIR/reuse.out" && grep -q reused "$TDIR/reuse.out"; then
		PIDS+=("$P")
		cat "$TDIR/reuse.out"
		out=$(setpriv --reuid=1 --regid=1 --clear-groups "$KPROFCTL" --socket "$SOCK" attach "$P" 2>&1)
		echo "uid 1 attaches its $P (rc $?): $out"
		if as_nobody "$KPROFCTL" --socket "$SOCK" list --all --json | python3 -c "import json,sys
sys.exit(not any(t['pid'] == $P and t['uid'] == $NOBODY and t['state'] == 'exited' and t['samples'] >= $N13
                 for t in json.load(sys.stdin)['targets']))"; then
			pass "PID reuse: nobody still lists its kept profile of $P (exited, >= $N13 samples)"
		else fail "kept profile survives PID reuse" "nobody's list: $(nctl list --all 2>&1 | tr '\n' ' ')"; fi
		rep=$(nctl report "$P" --top 0 --json 2>&1)
		if python3 -c "import json,sys
r = json.loads(sys.argv[1])
sys.exit(not (r['target']['uid'] == $NOBODY and r['target']['comm'] == 'nobodyprog' and r['total_samples'] >= $N13))" "$rep" 2>/dev/null; then
			pass "PID reuse: nobody's report $P still shows nobody's profile"
		else fail "report after PID reuse" "${rep:0:300}"; fi
		[ -e "$FILE13" ] && pass "PID reuse: the kept profile's file is still there" ||
			fail "kept file after PID reuse" "$FILE13 gone: $(ls "$ST")"
	else
		skip "PID reuse" "could not get pid $P again: $(cat "$TDIR/reuse.out")"
	fi
	kill -9 "$P" 2>/dev/null
else
	fail "nobody's kept profile of $P" "$(ctl list --all; ls "$ST")"
fi

# --- 14. attach --calls on a process without a perf map.
echo "-- 14. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
sleep 100 &
Z=$!
PIDS+=("$Z")
out=$(tctl attach "$Z" --calls 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -qiE "JIT function|perf map" <<<"$out" && daemon_ok; then
	pass "attach --calls without a perf map refused: $out"
else fail "attach --calls without a perf map" "rc=$rc: $out; kprofd alive: $(daemon_ok && echo yes || echo no)"; fi
kill -9 "$Z"

# --- 16a. A zombie.
echo "-- 16a. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
"$PY" -c 'import os, sys, time
c = os.fork()
if c == 0: os._exit(0)
print(c, flush=True)
time.sleep(60)' >"$TDIR/zombie.out" &
ZP=$!
PIDS+=("$ZP")
wait_for 5 test -s "$TDIR/zombie.out"
Z=$(cat "$TDIR/zombie.out")
wait_for 5 eval '[ "$(stat_field "$Z" 3)" = Z ]'
out=$(tctl attach "$Z" 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -qiE "zombie|exited|defunct" <<<"$out"; then pass "attaching a zombie refused: $out"
else fail "attach a zombie" "rc=$rc: $out (state $(stat_field "$Z" 3))"; fi
kill -9 "$ZP"

# --- 16b. An attach racing a chain of execs.
# The process execs itself 200 times (~2.5 ms each) then execs finalcomm, a copy of sleep. Its
# perf map (1 M lines, 25 MB, root's like the process) takes kprofd ~0.1 s to read while it
# attaches, between reading the comm and watching the exec events; the chain is ended at a
# random moment 0-60 ms after the attach is sent.
echo "-- 16b. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
cp /bin/sleep "$BIN/finalcomm"
"$PY" -c 'import sys
sys.stdout.write("".join("%x 10 jit_%08d\n" % (0x10000000 + 16 * i, i) for i in range(1 << 20)))' >"$TDIR/chain.map"
TRIES=${RACE_TRIES:-10} wrong=0 wrongs=""
comm_is() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }
for _ in $(seq $TRIES); do
	rm -f "$TDIR/go16" "$TDIR/chain.err"
	"$BIN/execchain" 0 200 "$TDIR/go16" "$BIN/finalcomm" 60 2>"$TDIR/chain.err" &
	C=$!
	PIDS+=("$C")
	wait_for 5 has_ready "$TDIR/chain.err"
	cp "$TDIR/chain.map" "/tmp/perf-$C.map"
	ctl attach "$C" --freq 999 >"$TDIR/attach16.out" 2>&1 &
	A=$!
	d=$((RANDOM % 60))
	sleep "0.$(printf %03d $d)"
	touch "$TDIR/go16"
	wait "$A"
	wait_for 5 comm_is "$C" finalcomm
	# The exec event is handled within a drain period (500 ms).
	if ! wait_for 2 tfield_is "$C" comm finalcomm; then
		wrong=$((wrong + 1))
		wrongs="$wrongs $(tfield "$C" comm)@${d}ms ($(head -c 300 "$TDIR/attach16.out"))"
	fi
	ctl detach "$C" >/dev/null 2>&1
	kill -9 "$C"
	wait "$C" 2>/dev/null
	rm -f "/tmp/perf-$C.map"
done
if [ "$wrong" = 0 ]; then pass "attach racing 200 execs: the comm is the last program's ($TRIES tries)"
else fail "comm after an attach racing execs" "$wrong of $TRIES tries kept another comm:$wrongs"; fi

# --- 15. A save that fails for want of room is retried.
echo "-- 15. (at ${SECONDS} s)"
STATE_DIR=$TDIR/state15
mkdir -p "$STATE_DIR"
if ! mount -t tmpfs -o size=256k tmpfs "$STATE_DIR"; then
	skip "failed save retried" "cannot mount a tmpfs here"
else
	UMOUNTS+=("$STATE_DIR")
	restart_daemon || { fail "daemon starts on a tiny tmpfs" "see log"; exit 1; }
	dd if=/dev/zero of="$STATE_DIR/filler" bs=4k 2>/dev/null
	start_minijit --seconds 0 || { fail "minijit starts" ""; exit 1; }
	M=$MJ_PID
	ctl attach "$M" --freq 999 >/dev/null
	wait_for 20 at_least_samples "$M" 1000
	ctl detach "$M" >/dev/null
	wait_for 5 grep -qiE "no space|ENOSPC" "$TDIR/kprofd.log" ||
		echo "(no ENOSPC in the log: $(grep "$M" "$TDIR/kprofd.log" | tail -2))"
	rm -f "$STATE_DIR/filler"
	saved15() { ls "$STATE_DIR/profiles/$M"-*.kprof >/dev/null 2>&1; }
	if wait_for 10 saved15; then pass "a save that failed (ENOSPC) is retried once there is room"
	else fail "failed save retried" "no profile file 10 s after room was made: $(ls -la "$STATE_DIR/profiles")"; fi
	restart_daemon || { fail "daemon restarts" "see log"; exit 1; }
	if [ -n "$(tfield "$M" state)" ]; then pass "the profile whose first save failed is back after a restart"
	else fail "profile after a failed save and a restart" "$(ctl list --all)"; fi
	kill -9 "$M"
fi
daemon_ok || fail "kprofd alive at the end" "kprofd $(how_died)"
finish
