#!/usr/bin/env bash
# attach --cgroup and --unit: every process of a cgroup, present and future, each its own
# target, and the merged view (report, folded, export --cgroup/--unit):
#   1. a cgroup with a sleeping member: attached, and the sampler does not run while it sleeps;
#      a process moved into it, and one a member forks, are attached and sampled;
#   2. report/folded/export --cgroup merge the members (go tool pprof reads the export);
#   3. a unit found by name (system.slice/NAME.service, or anywhere in the hierarchy);
#   4. bad input: no such cgroup or unit, "..", a v1 hierarchy's path, a unit name that is not
#      one, twice the same cgroup; another user's watch attaches only their processes; the
#      cgroup removed while watched ends the watch; detach --cgroup; nothing left behind.
# Needs root, a cgroup2 hierarchy and per-thread sampling (Linux 6.7; skipped without them); go for
# the pprof check. test_kernels.sh checks --cgroup on 6.1 and 6.12.
. "$(dirname "$0")/lib.sh"
MJ=$(realpath "$MINIJIT")
CGROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ -z "$CGROOT" ] || ! mkdir "$CGROOT/kprof-test-$$" 2>/dev/null; then
	skip "cgroup watches" "no writable cgroup2 hierarchy (${CGROOT:-none mounted})"
	exit 0
fi
CG=kprof-test-$$
UNITDIR=$CGROOT/system.slice/kprof-test-$$.service
MADE_SLICE=
[ -d "$CGROOT/system.slice" ] || { mkdir "$CGROOT/system.slice" && MADE_SLICE=1; }
mkdir -p "$UNITDIR"
cg_kill_all() {
	local d p
	for d in "$CGROOT/$CG/nb" "$CGROOT/$CG" "$UNITDIR"; do
		[ -f "$d/cgroup.procs" ] || continue
		for p in $(cat "$d/cgroup.procs"); do kill -9 "$p" 2>/dev/null; done
	done
}
cg_cleanup() {
	cg_kill_all
	sleep 0.2
	rmdir "$CGROOT/$CG/nb" "$CGROOT/$CG" "$UNITDIR" 2>/dev/null
	[ -n "$MADE_SLICE" ] && rmdir "$CGROOT/system.slice" 2>/dev/null
	cleanup
}
trap cg_cleanup EXIT
start_daemon || { fail "daemon starts" "see log"; exit 1; }
# Members are sampled by per-thread events (a sleeping one costs nothing, checked below).
need_feature per-thread-sampling "cgroup watches (per-thread members)"
kd_fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
FDS0=$(kd_fds)
status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# in_cg DIR CMD...: run CMD in the background inside cgroup DIR; sets BG.
in_cg() {
	local d=$1
	shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@" &
	BG=$!
	PIDS+=("$BG")
}

# --- 1. members.
echo "-- 1. (at ${SECONDS} s)"
in_cg "$CGROOT/$CG" sh -c 'trap "$0 --seconds 8 >/dev/null 2>&1" USR1; while :; do sleep 0.2; done' "$MJ"
SHP=$BG
wait_for 5 grep -q "^$SHP\$" "$CGROOT/$CG/cgroup.procs"
out=$(ctl attach --cgroup "$CG" --freq 999 2>&1); rc=$?
[ $rc = 0 ] && grep -q 'processes attached\|process attached' <<<"$out" && [ "$(target_json "$SHP" state)" = attached ] &&
	pass "attach --cgroup: its member is attached ($out)" || fail "attach --cgroup" "rc $rc: $out"
[ "$(target_json "$SHP" cgroup)" = "$CGROOT/$CG" ] && pass "the member carries its watch's name" ||
	fail "member's cgroup" "$(target_json "$SHP" cgroup)"
r0=$(status_key sampler_runs)
sleep 2
r1=$(status_key sampler_runs)
# Sampled only while they run (the loop's forks of sleep: some ms of CPU a second, more on a
# busy machine), not 999 times a second each: under a tenth of 2 s at 999 Hz.
[ $((r1 - r0)) -lt 200 ] && pass "sleeping members cost no sampling interrupts ($((r1 - r0)) sampler runs in 2 s at 999 Hz)" ||
	fail "idle cgroup cost" "$((r1 - r0)) sampler runs in 2 s"
"$MJ" --seconds 15 >/dev/null 2>&1 & # long enough for 300 samples on a loaded machine
MP=$!
PIDS+=("$MP")
echo "$MP" >"$CGROOT/$CG/cgroup.procs"
has_samples() { [ "$(target_json "$1" samples)" -gt "$2" ] 2>/dev/null; }
if wait_for 14 has_samples "$MP" 300 && ctl report "$MP" --top 3 | grep -q mj_hot; then
	pass "a process moved into the cgroup is attached, sampled and named"
else fail "moved-in process" "$(ctl list --all | head -8)"; fi
kill "$MP" 2>/dev/null; wait "$MP" 2>/dev/null
kill -USR1 "$SHP"
child_mj() { pgrep -P "$SHP" -f "$MJ"; }
wait_for 5 child_mj
CP=$(child_mj)
if [ -n "$CP" ] && wait_for 10 has_samples "$CP" 200; then
	pass "a process a member forks is attached (child of the member)"
else fail "forked member" "child ${CP:-?}: $(ctl list --all | head -8)"; fi
[ -n "$CP" ] && kill "$CP" 2>/dev/null # sampled enough: it need not run its 8 s
wait "$MP" 2>/dev/null
wait_for 10 eval '[ "$(target_json "${CP:-0}" state)" = exited ]'

# --- 2. the merged view.
echo "-- 2. (at ${SECONDS} s)"
out=$(ctl report --cgroup "$CG" --top 5 2>&1); rc=$?
n=$(sed -n 's/^cgroup .*: \([0-9]*\) process.*/\1/p' <<<"$out")
[ $rc = 0 ] && [ "${n:-0}" -ge 2 ] && grep -q 'mj_hot' <<<"$out" &&
	[ "$(grep -c ' mj_hot$' <<<"$out")" = 1 ] &&
	pass "report --cgroup merges $n processes (mj_hot one row for both)" ||
	fail "report --cgroup" "rc $rc: $out"
ctl report --cgroup "$CG" --json | python3 -c "import json,sys; r = json.load(sys.stdin); sys.exit(not r['total_samples'] >= 500)" &&
	pass "report --cgroup --json" || fail "report --cgroup --json" "$(ctl report --cgroup "$CG" --json | head -c 300)"
ctl folded --cgroup "$CG" >"$TDIR/cg.folded"
grep -q 'mj_main;mj_hot ' "$TDIR/cg.folded" && pass "folded --cgroup" || fail "folded --cgroup" "$(head -3 "$TDIR/cg.folded")"
if ctl export --cgroup "$CG" -o "$TDIR/cg.pb.gz" && command -v go >/dev/null; then
	go tool pprof -top "$TDIR/cg.pb.gz" >"$TDIR/cg.top" 2>&1
	grep -q ' mj_hot$' "$TDIR/cg.top" && pass "export --cgroup: go tool pprof names mj_hot" ||
		fail "export --cgroup" "$(head -10 "$TDIR/cg.top")"
elif ! command -v go >/dev/null; then
	skip "export --cgroup" "go is not installed"
else fail "export --cgroup" "export failed"; fi

# --- 3. a unit.
echo "-- 3. (at ${SECONDS} s)"
in_cg "$UNITDIR" "$MJ" --seconds 30
UP=$BG
wait_for 5 grep -q "^$UP\$" "$UNITDIR/cgroup.procs"
out=$(ctl attach --unit "kprof-test-$$.service" --freq 499 2>&1); rc=$?
if [ $rc = 0 ] && wait_for 10 has_samples "$UP" 100; then
	pass "attach --unit finds system.slice/NAME.service and samples it"
else fail "attach --unit" "rc $rc: $out"; fi
ctl status | grep -q "kprof-test-$$.service" && pass "status lists the watches" || fail "status watches" "$(ctl status)"
out=$(ctl report --unit "kprof-test-$$.service" --top 3 2>&1)
grep -q mj_hot <<<"$out" && pass "report --unit" || fail "report --unit" "$out"
# A restart, as systemd does it: the process gone, the cgroup removed, a new cgroup of the same
# name and a new process in it.
kill -9 "$UP"
wait_for 5 test ! -s "$UNITDIR/cgroup.procs"
wait_for 5 rmdir "$UNITDIR"
waiting() { ctl status | grep -q "kprof-test-$$.service.*waiting for it to start"; }
wait_for 10 waiting && pass "a stopped unit's watch waits for it" || fail "unit stopped" "$(ctl status | grep -A1 watching)"
mkdir "$UNITDIR"
in_cg "$UNITDIR" "$MJ" --seconds 30
UP=$BG
if wait_for 10 has_samples "$UP" 100 && ctl status | grep -q "started again 1 time"; then
	pass "the unit started again: its new process is attached without a PID"
else fail "unit restart" "$(ctl status | grep -A1 watching); $(ctl list | head -5)"; fi

# --- 4. bad input.
echo "-- 4. (at ${SECONDS} s)"
expect_err() { # NAME PATTERN CMD...
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1); rc=$?
	[ $rc = 1 ] && grep -q -- "$pat" <<<"$out" && pass "$name: refused ($out)" || fail "$name" "rc $rc: $out"
}
expect_err "no such cgroup" "no such cgroup" ctl attach --cgroup "no-such-$$"
expect_err "no such unit" "no cgroup of that unit" ctl attach --unit "no-such-$$.service"
expect_err "not a unit name" "not a unit name" ctl attach --unit "bad/name"
expect_err "'..' in a cgroup path" "not a path under" ctl attach --cgroup "$CG/../.."
if [ -d /sys/fs/cgroup/cpu ] && [ "$CGROOT" != /sys/fs/cgroup ]; then
	expect_err "a v1 hierarchy's path" "not in a cgroup2 hierarchy" ctl attach --cgroup /sys/fs/cgroup/cpu
fi
expect_err "the same cgroup twice" "already watched" ctl attach --cgroup "$CG"
out=$(ctl attach --cgroup "$CG" 1234 2>&1); rc=$?
[ $rc = 2 ] && pass "--cgroup with a PID: usage error" || fail "--cgroup with PID" "rc $rc: $out"
if command -v setpriv >/dev/null; then
	NOBODY=$(id -u nobody)
	mkdir "$CGROOT/$CG/nb"
	in_cg "$CGROOT/$CG/nb" setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups sleep 30
	NBP=$BG
	wait_for 5 grep -q . "$CGROOT/$CG/nb/cgroup.procs"
	NBP=$(cat "$CGROOT/$CG/nb/cgroup.procs")
	ctl detach --cgroup "$CG" >/dev/null
	out=$(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$KPROFCTL" --socket "$SOCK" \
		attach --cgroup "$CG" 2>&1); rc=$?
	[ $rc = 0 ] && [ "$(target_json "$NBP" state)" = attached ] && [ "$(target_json "$SHP" state)" != attached ] &&
		grep -q ' not ' <<<"$out" &&
		pass "another user's watch attaches only their own processes ($out)" ||
		fail "user watch" "rc $rc: $out; $(ctl list)"
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$KPROFCTL" --socket "$SOCK" detach --cgroup "$CG" >/dev/null
	kill -9 "$NBP" 2>/dev/null
	wait_for 5 test ! -s "$CGROOT/$CG/nb/cgroup.procs"
	wait_for 5 rmdir "$CGROOT/$CG/nb"
	ctl attach --cgroup "$CG" >/dev/null
else
	skip "user watch" "setpriv (util-linux) missing"
fi
out=$(ctl detach --unit "kprof-test-$$.service" 2>&1); rc=$?
[ $rc = 0 ] && grep -q '1 process detached' <<<"$out" && [ "$(target_json "$UP" state)" = detached ] &&
	pass "detach --unit: the watch ends, its member detached, profile kept" || fail "detach --unit" "rc $rc: $out"
# Removed while watched: the members gone, the directory removed.
kill -9 "$SHP" "$UP" 2>/dev/null
cg_kill_all
wait_for 5 test ! -s "$CGROOT/$CG/cgroup.procs"
wait_for 5 rmdir "$CGROOT/$CG" # busy until the last member is reaped
not_watched() { ! ctl status | grep -q "kprof-test-$$"; }
wait_for 10 not_watched && grep -q 'removed: no longer watched' "$TDIR/kprofd.log" &&
	pass "a cgroup removed while watched ends its watch" ||
	fail "cgroup removed" "$(ctl status | grep -A1 watching); dir: $(ls -d "$CGROOT/$CG" 2>&1); $(tail -3 "$TDIR/kprofd.log")"
ctl status >/dev/null && pass "kprofd well" || fail "kprofd" "not answering"
attached() { ctl list --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)['targets']))"; }
wait_for 10 eval '[ "$(attached)" = 0 ]' && pass "no target left attached" || fail "attached left" "$(ctl list)"
fds_back() { [ "$(kd_fds)" -le "$FDS0" ]; }
wait_for 10 fds_back && pass "fds back to $FDS0 or fewer" || fail "fds" "$(kd_fds), $FDS0 before"
stop_daemon
exit $((FAILS > 0))
