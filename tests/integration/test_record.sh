#!/usr/bin/env bash
# kprofctl record and attach --children, tried as a user would:
#   1. record a command: sampled from its first instruction (its samples cover its CPU time),
#      the pprof file written and read by go tool pprof, the report format, as a non-root user;
#   2. the command's exit status is kprofctl's (a status, a signal), a command that does not
#      exist or cannot be run (127, 126, nothing attached), no command (2), no kprofd (3, the
#      command not run);
#   3. children: a shell pipeline recorded with --children (merged profile, the tree in list),
#      a Node parent that forks a Node child (child_process.fork) attached with --children, and
#      without --children no child is followed;
#   3b. children followed by default (--no-children opts out), a wrapper shell's program names
#      the pprof, a pid label per sample, no mapping of kprofctl, an empty profile says why;
#   4. bad input: a fork storm of 300 short children, a child that execs a setuid program; the
#      daemon unharmed, no fd or BPF link left behind.
# Needs root; node for the Node child; go for the pprof check (folded otherwise); setpriv for
# the non-root user.
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
MJ=$(cd "$(dirname "$MINIJIT")" && pwd)/$(basename "$MINIJIT")
start_daemon || { fail "daemon starts" "see log"; exit 1; }
kd_fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
FDS0=$(kd_fds)
LINKS0=$(our_links)
attached() { ctl list --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)['targets']))"; }

# --- 1. record a command.
echo "-- 1. (at ${SECONDS} s)"
KPROFCTL=$(realpath "$KPROFCTL")
ctl record --freq 999 -o "$TDIR/mj.pb.gz" -- "$MJ" --seconds 1.5 >/dev/null 2>"$TDIR/mj.err"
rc=$?
cat "$TDIR/mj.err"
[ $rc = 0 ] && [ -s "$TDIR/mj.pb.gz" ] && pass "record writes kprof's pprof file (exit status 0)" ||
	fail "record minijit" "rc $rc: $(cat "$TDIR/mj.err")"
n=$(sed -n 's/.*(pprof, \([0-9]*\) samples of 1 process; .*/\1/p' "$TDIR/mj.err")
# The command's own CPU time, as record says it (its rusage; kprofctl's own is not in it).
cpu=$(sed -n 's/.*; the command ran \([0-9.]*\) s on CPU)$/\1/p' "$TDIR/mj.err")
# From its first instruction: the samples cover the command's CPU time (999 Hz, 85%).
if [ -n "$cpu" ] && python3 -c "import sys; sys.exit(not (${n:-0} >= 0.85 * 999 * $cpu))"; then
	pass "record samples the whole command: ${n:-0} samples for ${cpu} s of CPU at 999 Hz"
else fail "record covers the command" "${n:-0} samples for $cpu s of CPU at 999 Hz"; fi
if command -v go >/dev/null; then
	if go tool pprof -top "$TDIR/mj.pb.gz" >"$TDIR/mj.top" 2>&1 && grep -q ' mj_hot$' "$TDIR/mj.top"; then
		pass "go tool pprof reads the recorded profile and names mj_hot"
	else fail "go tool pprof on record's file" "$(head -12 "$TDIR/mj.top")"; fi
else
	skip "go tool pprof" "go is not installed (make deps: golang-go)"
fi
out=$(ctl record --format report --freq 999 -- "$MJ" --seconds 0.5 2>/dev/null); rc=$?
[ $rc = 0 ] && grep -q 'mj_hot' <<<"$out" && grep -q '(minijit)' <<<"$out" &&
	pass "record --format report prints the report (comm after exec: minijit)" ||
	fail "record --format report" "rc $rc: $(head -5 <<<"$out")"
if command -v setpriv >/dev/null; then
	NOBODY=$(id -u nobody)
	out=$(cd / && setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
		"$KPROFCTL" --socket "$SOCK" record --format folded -o - -- "$MJ" --seconds 0.5 2>"$TDIR/nb.err")
	rc=$?
	[ $rc = 0 ] && grep -q 'mj_hot' <<<"$out" &&
		pass "a non-root user records their own command" ||
		fail "record as nobody" "rc $rc: $(cat "$TDIR/nb.err") $(head -3 <<<"$out")"
else
	skip "record as nobody" "setpriv (util-linux) missing"
fi

# --- 2. exit statuses and commands that cannot run.
echo "-- 2. (at ${SECONDS} s)"
ctl record -o "$TDIR/x.pb.gz" -- sh -c 'exit 7' 2>/dev/null
rc=$?; [ $rc = 7 ] && pass "the command's exit status is kprofctl's (7)" || fail "exit status" "got $rc, want 7"
ctl record -o "$TDIR/x.pb.gz" -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?; [ $rc = 143 ] && pass "a command killed by SIGTERM gives 128+15" || fail "signal status" "got $rc, want 143"
n0=$(ctl list --all --json | grep -o '"pid"' | wc -l)
out=$(ctl record -- no-such-command-kprof 2>&1); rc=$?
[ $rc = 127 ] && grep -q 'no-such-command-kprof: command not found' <<<"$out" &&
	pass "a command that does not exist: 127 and said" || fail "missing command" "rc $rc: $out"
printf '#!/bin/sh\n' >"$TDIR/noexec"
out=$(ctl record -- "$TDIR/noexec" 2>&1); rc=$?
[ $rc = 126 ] && grep -q 'Permission denied' <<<"$out" &&
	pass "a command that cannot be run: 126 and said" || fail "not executable" "rc $rc: $out"
[ "$(ctl list --all --json | grep -o '"pid"' | wc -l)" = "$n0" ] &&
	pass "nothing attached for commands that cannot run" || fail "attach of nothing" "$(ctl list --all)"
out=$(ctl record 2>&1); rc=$?
[ $rc = 2 ] && grep -q 'a command to run is required' <<<"$out" &&
	pass "record without a command: usage error 2" || fail "record without command" "rc $rc: $out"
out=$("$KPROFCTL" --socket "$TDIR/nobody-listens" record -- touch "$TDIR/ran" 2>&1); rc=$?
[ $rc = 3 ] && [ ! -e "$TDIR/ran" ] &&
	pass "no kprofd: exit 3 and the command is not run" || fail "record without kprofd" "rc $rc: $out"

# --- 3. children.
echo "-- 3. (at ${SECONDS} s)"
out=$(ctl record --children --freq 999 --format folded -o - -- sh -c "$MJ --seconds 1 | cat" 2>"$TDIR/pipe.err")
rc=$?
[ $rc = 0 ] && grep -q 'mj_main;mj_hot ' <<<"$out" &&
	pass "record --children of a shell pipeline: the forked minijit is in the profile" ||
	fail "record --children" "rc $rc: $(cat "$TDIR/pipe.err")"
grep -q 'of [2-9] processes' "$TDIR/pipe.err" && pass "the profile merges the processes ($(sed -n 's/.*(\(.*\))/\1/p' "$TDIR/pipe.err"))" ||
	fail "merged processes" "$(cat "$TDIR/pipe.err")"
ctl list --all >"$TDIR/tree"
if awk '/^[0-9]/ { root = $3 } /^[`|]-[0-9]+ +[0-9]+ +minijit / && root == "sh" { ok = 1 } END { exit !ok }' "$TDIR/tree"; then
	pass "list shows the child under the shell"
else fail "list tree" "$(head -12 "$TDIR/tree")"; fi
# A child that outlives its parent: sampled by the parent's inherited events at first, by its
# own once the parent has ended.
sh -c "sleep 0.5; $MJ --seconds 12 >/dev/null 2>&1 & sleep 1.5" &
SP=$!
PIDS+=("$SP")
ctl attach "$SP" --children --freq 999 >/dev/null
wait "$SP"
MP=$(pgrep -f -n "$MJ --seconds 12")
sp_exited() { [ "$(target_json "$SP" state)" = exited ]; }
wait_for 10 sp_exited
s1=$(target_json "${MP:-0}" samples) c1=$(cpu_ms "${MP:-0}")
# Until the child has run 200 ms more (a loaded machine gives it less than a CPU).
ran_200() { [ $(($(cpu_ms "${MP:-0}") - c1)) -ge 200 ]; }
wait_for 10 ran_200
s2=$(target_json "${MP:-0}" samples) c2=$(cpu_ms "${MP:-0}")
# At 999 Hz, one sample per ms of the child's CPU time.
[ -n "$MP" ] && [ -n "$s1" ] && [ -n "$c2" ] && [ $((c2 - c1)) -ge 200 ] &&
	[ "$s2" -gt $((s1 + (c2 - c1) / 2)) ] &&
	pass "a child that outlives its parent is still sampled ($s1, then $s2 samples after $((c2 - c1)) ms of its CPU)" ||
	fail "orphaned child" "minijit ${MP:-?}: ${s1:-?} then ${s2:-?} samples after $((${c2:-0} - ${c1:-0})) ms of its CPU; $(ctl list --all | head -5)"
if command -v node >/dev/null; then
	node --perf-basic-prof "$FIX/forker.js" 2 2>"$TDIR/forker.err" &
	FP=$!
	PIDS+=("$FP")
	wait_for 20 grep -q 'forker: ready' "$TDIR/forker.err" || fail "forker starts" "$(cat "$TDIR/forker.err")"
	check "attach --children a Node parent" ctl attach "$FP" --children --freq 999
	kill -USR2 "$FP"
	wait_for 10 grep -q 'forker: child' "$TDIR/forker.err"
	CP=$(sed -n 's/forker: child \([0-9]*\)/\1/p' "$TDIR/forker.err")
	PIDS+=("$CP")
	child_named() { ctl report "$CP" --top 5 | grep -q 'childHot'; }
	if [ -n "$CP" ] && wait_for 15 child_named; then
		pass "the Node child (child_process.fork) is a target, childHot named"
	else fail "node child" "child ${CP:-?}: $(ctl report "${CP:-0}" --top 5 2>&1)"; fi
	[ "$(target_json "${CP:-0}" parent)" = "$FP" ] && pass "the child's parent is the Node parent" ||
		fail "parent link" "$(ctl list --all)"
	wait_for 15 eval '[ "$(target_json "$FP" state)" = exited ]'
	[ "$(target_json "$FP" children_followed)" -ge 1 ] 2>/dev/null &&
		pass "the parent counts its followed child" || fail "children_followed" "$(ctl list --all --json)"
	# Without --children the child is left alone.
	node --perf-basic-prof "$FIX/forker.js" 1 2>"$TDIR/forker2.err" &
	FP2=$!
	PIDS+=("$FP2")
	wait_for 20 grep -q 'forker: ready' "$TDIR/forker2.err"
	ctl attach "$FP2" >/dev/null
	kill -USR2 "$FP2"
	wait_for 10 grep -q 'forker: child' "$TDIR/forker2.err"
	CP2=$(sed -n 's/forker: child \([0-9]*\)/\1/p' "$TDIR/forker2.err")
	sleep 0.5
	[ -n "$CP2" ] && [ -z "$(target_json "$CP2" pid)" ] &&
		pass "without --children the child is not followed" || fail "no children" "$(ctl list --all)"
	wait "$FP2" 2>/dev/null
else
	skip "Node child" "node is not installed"
fi

# --- 3b. Children by default, as perf record inherits (issue 29, items 2 and 3): a wrapper
# shell's forked program is recorded, the pprof is named after it (not kprofctl, not sh) with a
# pid label per sample; --no-children opts out; an empty profile says why.
echo "-- 3b. (at ${SECONDS} s)"
out=$(ctl record --freq 999 --format folded -o - -- sh -c "$MJ --seconds 1 >/dev/null; true" 2>"$TDIR/wrap.err")
rc=$?
[ $rc = 0 ] && grep -q 'mj_main;mj_hot ' <<<"$out" &&
	pass "record follows children by default: sh -c 'minijit; true' has minijit's samples" ||
	fail "record follows children by default" "rc $rc: $(cat "$TDIR/wrap.err"); $(head -3 <<<"$out")"
# Folded stacks of several processes are rooted at their comm (as stackcollapse-perf does).
! grep 'mj_hot' <<<"$out" | grep -qv '^minijit;' && grep -q '^minijit;' <<<"$out" &&
	pass "merged folded stacks rooted at their process's comm ($(grep -c '^minijit;' <<<"$out") minijit lines)" ||
	fail "folded comm roots" "$(head -3 <<<"$out")"
out=$(ctl record --no-children --freq 999 --format folded -o - -- sh -c "$MJ --seconds 1 >/dev/null; true" 2>"$TDIR/nochild.err")
rc=$?
[ $rc = 0 ] && ! grep -q 'mj_hot' <<<"$out" &&
	pass "record --no-children: only the command itself ($(sed -n 's/.*(\(.*\))/\1/p' "$TDIR/nochild.err"))" ||
	fail "record --no-children" "rc $rc: $(cat "$TDIR/nochild.err")"
ctl record --freq 1 --format folded -o /dev/null -- sh -c "sleep 0.3; true" 2>"$TDIR/empty.err"
grep -q "no samples: the command and the 1 process it started ran too briefly" "$TDIR/empty.err" &&
	pass "an empty profile of a command that forked says so: $(grep 'no samples' "$TDIR/empty.err")" ||
	fail "empty profile note" "$(cat "$TDIR/empty.err")"
if command -v go >/dev/null; then
	ctl record --freq 999 -o "$TDIR/wrap.pb.gz" -- sh -c "$MJ --seconds 1.5 >/dev/null; true" 2>"$TDIR/wrap2.err"
	file=$(go tool pprof -top "$TDIR/wrap.pb.gz" 2>/dev/null | sed -n 's/^File: //p' | head -1)
	[ "$file" = minijit ] && pass "the pprof of a wrapped command is named after its program (File: $file)" ||
		fail "pprof File of a wrapped command" "File: '$file' ($(cat "$TDIR/wrap2.err"))"
	pids=$(go tool pprof -tags "$TDIR/wrap.pb.gz" 2>/dev/null | awk '/^ *pid:/ { on = 1; next } on && NF == 0 { on = 0 } on' | wc -l)
	[ "$pids" -ge 1 ] && pass "every sample has a pid label ($pids pids: $(go tool pprof -tags "$TDIR/wrap.pb.gz" 2>/dev/null | awk '/^ *pid:/ { on = 1; next } on && NF == 0 { on = 0 } on' | tr -s ' ' | tr '\n' ';'))" ||
		fail "pid labels" "$(go tool pprof -tags "$TDIR/wrap.pb.gz" 2>&1 | head -20)"
	ctl record --freq 999 -o "$TDIR/direct.pb.gz" -- "$MJ" --seconds 1 >/dev/null 2>&1
	# Samples count from the exec (from_exec, as perf's enable_on_exec): none of kprofctl's.
	! go tool pprof -raw "$TDIR/direct.pb.gz" 2>/dev/null | grep -q "kprofctl" &&
		pass "record's profile has nothing of kprofctl (its mappings, its functions)" ||
		fail "kprofctl in record's profile" "$(go tool pprof -raw "$TDIR/direct.pb.gz" 2>&1 | grep kprofctl | head -3)"
else skip "record's pprof names" "go is not installed"; fi

# The attach record asks for (from_exec), made to matter: a process that spins 0.5 s of CPU in
# Python before it execs the native fixture. Nothing of the Python part is counted, the log
# says how many samples were not, and the native fixture's are.
cp "$(dirname "$0")/kpraw.py" "$TDIR/kp.py"
mkfifo "$TDIR/hold.fifo"
python3 -c 'import os, sys, time
sys.stderr.write("ready\n"); sys.stderr.flush()
sys.stdin.readline()
t = time.process_time()
while time.process_time() - t < 0.5: pass
os.execv(sys.argv[1], sys.argv[1:])' "$BUILD/native" --ms 300 <"$TDIR/hold.fifo" 2>"$TDIR/held.err" &
HP=$!
PIDS+=("$HP")
exec 7>"$TDIR/hold.fifo"
if wait_for 15 grep -q ready "$TDIR/held.err" &&
	PYTHONPATH=$TDIR python3 -c 'import sys, kp
s = kp.connect(sys.argv[1])
pid = int(sys.argv[2])  # attach at 999 Hz, from_exec (field 191)
kp.send(s, kp.field(1, b"\x08" + kp.varint(pid) + b"\x10" + kp.varint(999) + kp.varint(191 << 3) + b"\x01"))
sys.exit(not kp.reply_ok(kp.recv_frame(s), kp.field(1, b"")))' "$SOCK" "$HP"; then
	echo go >&7
	exec 7>&-
	wait "$HP"
	wait_for 20 state_is "$HP" exited
	ctl folded "$HP" >"$TDIR/held.folded"
	if ! grep -qiE "python|libpython" "$TDIR/held.folded" && grep -q "clock_loop" "$TDIR/held.folded"; then
		pass "from_exec: samples count from the exec (the native program's: $(awk '{ n += $NF } END { print n }' "$TDIR/held.folded"); none of the 0.5 s of Python before it)"
	else fail "from_exec" "$(sort -t' ' -k2 -nr "$TDIR/held.folded" | head -5)"; fi
	n=$(sed -n "s/.*pid $HP exec'd .*; \([0-9]*\) samples before it not counted.*/\1/p" "$TDIR/kprofd.log")
	[ "${n:-0}" -ge 100 ] && pass "... and the log says how many were not counted ($n)" ||
		fail "from_exec: samples not counted" "log: $(grep "pid $HP" "$TDIR/kprofd.log" | head -3)"
	j=$(target_json "$HP" samples_before_exec)
	[ -n "$n" ] && [ "$j" = "$n" ] && ctl report "$HP" | grep -q "$j samples before its exec not counted" &&
		pass "... and list --json and report say so too ($j)" ||
		fail "from_exec: samples_before_exec" "list --json '$j', log '$n': $(ctl report "$HP" 2>&1 | head -c 400)"
else
	exec 7>&-
	fail "from_exec: a held process attached" "$(cat "$TDIR/held.err")"
fi

# --- 4. bad input: a fork storm, a setuid child; nothing left behind.
echo "-- 4. (at ${SECONDS} s)"
if [ -n "${NOBODY:-}" ] && [ -u /usr/bin/passwd ]; then
	(cd / && setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$KPROFCTL" --socket "$SOCK" \
		record --children --format folded -o /dev/null -- sh -c 'sleep 1 | /usr/bin/passwd >/dev/null 2>&1; exit 0') 2>"$TDIR/suid.err"
	rc=$?
	grep -qE 'credentials changed|child [0-9]+ not followed: permission denied' "$TDIR/kprofd.log" &&
		[ $rc = 0 ] && ctl status >/dev/null &&
		pass "a child that execs a setuid program is not profiled (ended or refused), kprofd well" ||
		fail "setuid child" "rc $rc: $(cat "$TDIR/suid.err"); $(grep -i passwd "$TDIR/kprofd.log" | tail -3)"
else
	skip "setuid child" "no setpriv or no setuid /usr/bin/passwd"
fi
t0=$SECONDS
ctl record --children --format report --top 1 -o "$TDIR/storm.txt" -- \
	sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done' 2>"$TDIR/storm.err"
rc=$?
seen=$(sed -n 's/.*following its children (\([0-9]*\) followed, \([0-9]*\) not).*/\1 \2/p' "$TDIR/storm.txt" | head -1)
[ $rc = 0 ] && ctl status >/dev/null && [ -n "$seen" ] && [ $((${seen% *} + ${seen#* })) -ge 300 ] &&
	pass "a storm of 300 short children ($seen: followed, not): recorded in $((SECONDS - t0)) s, kprofd well" ||
	fail "fork storm" "rc $rc: $(cat "$TDIR/storm.err")"
sleep 1.5 # two drains: the empty children are dropped
n=$(ctl list --all | grep -c ' true ')
[ "$n" -lt 20 ] && pass "children without samples are not kept ($n of the storm's 300 are)" ||
	fail "empty children kept" "$n kept"
wait_for 10 eval '[ "$(attached)" = 0 ]' && pass "no target left attached" || fail "attached left" "$(ctl list)"
fds_back() { [ "$(kd_fds)" -le "$FDS0" ]; }
wait_for 10 fds_back && pass "fds back to $FDS0 or fewer ($(kd_fds))" ||
	fail "fds" "$(kd_fds) now, $FDS0 before: $(ls -l /proc/$DAEMON_PID/fd | tail -5)"
[ "$(our_links)" = "$LINKS0" ] && pass "no BPF link left ($LINKS0)" || fail "links" "$(our_links), $LINKS0 before"
stop_daemon
exit $((FAILS > 0))
