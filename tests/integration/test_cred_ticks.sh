#!/usr/bin/env bash
# The housekeeping's credential check of attached targets costs one stat of /proc/PID/stat a
# target a second, not a read of its status, yet still catches every change it caught (issue
# 34: "the credential check of every attached target every second"; complexity, not timing):
#   1. 100 idle root processes attached: status --json counts the checks (cred_ticks) and the
#      full reads of /proc/PID/status (cred_reads): over a few seconds, a few reads at most
#      (a full read at each check would make them equal); and the seconds left out for quiet
#      targets (quiet_skips: checked every 10 s with their alive check instead), more than
#      the checks;
#   2. nobody's process attached by nobody turns itself non-dumpable (prctl, no exec): ended;
#   3. nobody's process that kept CAP_SETUID (root's, then setresuid to nobody with
#      PR_SET_KEEPCAPS) changes only its real uid (euid stays nobody's, so /proc/PID/stat does
#      not change owner): read in full each second, and ended;
#   4. nobody's process enters a user namespace (unshare, no exec), where root maps uid 1 for
#      it, and changes its real uid alone there: /proc/PID/ns/user changed, read in full, ended;
#   5. nobody's process blocked in a read (quiet: its checks left to every 10 s) turns itself
#      non-dumpable and spins for 3 s: checked before its first sample after is taken in,
#      ended, none of its samples kept (left to the 10 s check, the spin's would be).
# The quiet ones (2-4 wait polling, so they may be quiet too) are ended within 10 s: waited for
# up to 30.
# Needs root (BPF), setpriv, python3.
# Not sanitized: about 45 s of waiting for the 10 s checks of quiet targets; the recheck code
# (manager_recheck) runs sanitized in test_hostile_procs (5b: a setuid exec ends a target).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "credential checks" "needs root"; exit 0; fi
command -v setpriv >/dev/null || { skip "credential checks" "setpriv is not installed"; exit 0; }
N=100 NOBODY=65534
AS_NOBODY=(setpriv "--reuid=$NOBODY" "--regid=$NOBODY" --clear-groups)
nctl() { "${AS_NOBODY[@]}" "$KPROFCTL" --socket "$SOCK" "$@"; }
cp "$(dirname "$0")/kpraw.py" "$TDIR/"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
sjson() { ctl status --json | python3 -c "import json,sys; s = json.load(sys.stdin); print(' '.join(str(s[k]) for k in sys.argv[1:]))" "$@"; }

# --- 1. N idle targets.
SL=()
for ((i = 0; i < N; i++)); do sleep 600 & SL+=("$!"); PIDS+=("$!"); done
python3 "$TDIR/kpraw.py" attach "$SOCK" "${SL[@]}" || fail "attach $N" "see above"
read -r att < <(sjson targets_attached)
[ "$att" -ge "$N" ] || fail "attached" "$att of $N"
# Past each target's first check (a full read: nothing known of it yet).
read -r c0 r0 < <(sjson cred_ticks cred_reads)
ticked() { read -r c1 r1 < <(sjson cred_ticks cred_reads); [ "$c1" -ge $((c0 + N)) ]; }
wait_for 60 ticked
read -r c0 r0 q0 < <(sjson cred_ticks cred_reads quiet_skips)
ticked() { read -r c1 r1 q1 < <(sjson cred_ticks cred_reads quiet_skips); [ "$c1" -ge $((c0 + 3 * N)) ]; }
if wait_for 120 ticked; then
	[ $((r1 - r0)) -le $(((c1 - c0) / 20)) ] &&
		pass "$N idle targets: $((c1 - c0)) checks, $((r1 - r0)) full reads" ||
		fail "full reads of idle targets" "$((r1 - r0)) of $((c1 - c0)) checks"
	[ $((q1 - q0)) -gt $((c1 - c0)) ] &&
		pass "$N idle targets: $((q1 - q0)) quiet seconds left out, $((c1 - c0)) checks" ||
		fail "quiet targets left out" "$((q1 - q0)) left out, $((c1 - c0)) checks"
else
	fail "checks of $N targets" "$c1 checks (had $c0)"
fi
kill "${SL[@]}" 2>/dev/null

# nobody_proc GO PYTHON: a python3 process of nobody running PYTHON once GO exists (its
# "ready" in $TDIR/p.err), attached by nobody; sets P.
nobody_proc() {
	rm -f "$TDIR/p.err"
	"${AS_NOBODY[@]}" python3 -c "$2" "$1" 2>"$TDIR/p.err" &
	P=$!; PIDS+=("$P")
}
# changed PID: nobody's target of PID ended by a change of its credentials.
changed() { grep -q "pid $1 .*credentials changed away" "$TDIR/kprofd.log"; }
PRE='import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
'
WAIT='sys.stderr.write("ready\n"); sys.stderr.flush()
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
'
# --- 2. Non-dumpable by prctl.
nobody_proc "$TDIR/go2" "$PRE$WAIT"'libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
sys.stderr.write("done\n"); sys.stderr.flush()
time.sleep(600)'
wait_for 10 grep -q ready "$TDIR/p.err" || fail "nobody's process starts" "$(cat "$TDIR/p.err")"
if nctl attach "$P" --freq 99 >/dev/null; then
	wait_for 20 eval "[ \$(sjson cred_ticks) -gt $(sjson cred_ticks) ]" # a check of it done
	touch "$TDIR/go2"
	wait_for 10 grep -q done "$TDIR/p.err" || fail "prctl" "$(cat "$TDIR/p.err")"
	wait_for 30 changed "$P" && pass "a target made non-dumpable is ended: $(grep -o "pid $P .*credentials changed.*" "$TDIR/kprofd.log" | head -1)" ||
		fail "non-dumpable target ended" "$(tail -3 "$TDIR/kprofd.log")"
else
	fail "nobody attaches its process" "$(tail -2 "$TDIR/kprofd.log")"
fi
{ kill -9 "$P"; wait "$P"; } 2>/dev/null

# --- 3. CAP_SETUID kept, the real uid changed alone (root starts it, it becomes nobody).
rm -f "$TDIR/p.err"
python3 -c "$PRE"'libc.prctl(8, 1, 0, 0, 0)  # PR_SET_KEEPCAPS
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
libc.prctl(4, 1, 0, 0, 0)  # dumpable again (the uid change turned it off)
'"$WAIT"'class H(ctypes.Structure): _fields_ = [("v", ctypes.c_uint32), ("pid", ctypes.c_int)]
class D(ctypes.Structure): _fields_ = [("e", ctypes.c_uint32), ("p", ctypes.c_uint32), ("i", ctypes.c_uint32)]
h = H(0x20080522, 0); d = (D * 2)()
libc.capget(ctypes.byref(h), d)
d[0].e |= 1 << 7  # CAP_SETUID, from the permitted set
if libc.capset(ctypes.byref(h), d) != 0: sys.exit("capset: %d" % ctypes.get_errno())
os.setresuid(1, 65534, 65534)
sys.stderr.write("done\n"); sys.stderr.flush()
time.sleep(600)' "$TDIR/go3" 2>"$TDIR/p.err" &
P=$!; PIDS+=("$P")
wait_for 10 grep -q ready "$TDIR/p.err" || fail "the process with CAP_SETUID starts" "$(cat "$TDIR/p.err")"
if nctl attach "$P" --freq 99 >/dev/null; then
	wait_for 20 eval "[ \$(sjson cred_ticks) -gt $(sjson cred_ticks) ]"
	st=$(stat -c %u "/proc/$P/stat")
	touch "$TDIR/go3"
	wait_for 10 grep -q done "$TDIR/p.err" || fail "setresuid" "$(cat "$TDIR/p.err")"
	[ "$(awk '/^Uid:/ { print $2, $3 }' "/proc/$P/status")" = "1 $NOBODY" ] && [ "$(stat -c %u "/proc/$P/stat")" = "$st" ] ||
		fail "real uid alone changed" "uids $(awk '/^Uid:/' "/proc/$P/status"), /proc/PID/stat $st then $(stat -c %u "/proc/$P/stat")"
	wait_for 30 changed "$P" && pass "a target with CAP_SETUID that changes its real uid alone is ended" ||
		fail "real uid change with CAP_SETUID" "$(tail -3 "$TDIR/kprofd.log")"
else
	fail "nobody attaches the process with CAP_SETUID" "$(tail -2 "$TDIR/kprofd.log"); $(cat "$TDIR/p.err")"
fi
{ kill -9 "$P"; wait "$P"; } 2>/dev/null

# --- 4. A user namespace entered (no exec), then only the real uid changed in it: root maps
# uid 1 there (what newuidmap does for a user's delegated uids), euid stays nobody's.
nobody_proc "$TDIR/go4" "$PRE$WAIT"'if libc.unshare(0x10000000) != 0: sys.exit("unshare: %d" % ctypes.get_errno())
sys.stderr.write("unshared\n"); sys.stderr.flush()
while not os.path.exists(sys.argv[1] + "b"): time.sleep(0.05)
os.setresuid(1, 0, 0)  # in the namespace: real uid 1 (uid 1 outside), effective nobody
sys.stderr.write("done\n"); sys.stderr.flush()
time.sleep(600)'
wait_for 10 grep -q ready "$TDIR/p.err" || fail "nobody's process starts" "$(cat "$TDIR/p.err")"
if nctl attach "$P" --freq 99 >/dev/null; then
	wait_for 20 eval "[ \$(sjson cred_ticks) -gt $(sjson cred_ticks) ]"
	touch "$TDIR/go4"
	if wait_for 10 grep -q unshared "$TDIR/p.err"; then
		python3 -c 'import os, sys; os.write(os.open(sys.argv[1], os.O_WRONLY), sys.argv[2].encode())' \
			"/proc/$P/uid_map" "0 $NOBODY 1"$'\n1 1 1\n' || fail "uid_map" "not written"
		touch "$TDIR/go4b"
		wait_for 10 grep -q done "$TDIR/p.err" || fail "setresuid in the namespace" "$(cat "$TDIR/p.err")"
		[ "$(awk '/^Uid:/ { print $2, $3 }' "/proc/$P/status")" = "1 $NOBODY" ] ||
			fail "real uid alone changed in the namespace" "$(awk '/^Uid:/' "/proc/$P/status")"
		wait_for 30 changed "$P" && pass "a target that enters a user namespace and changes its real uid there is ended" ||
			fail "real uid change in a user namespace" "$(tail -3 "$TDIR/kprofd.log")"
	else
		skip "user namespace" "unshare failed: $(cat "$TDIR/p.err")"
	fi
else
	fail "nobody attaches its process" "$(tail -2 "$TDIR/kprofd.log")"
fi
{ kill -9 "$P"; wait "$P"; } 2>/dev/null

# --- 5. Quiet (blocked in a read of a FIFO), then non-dumpable and spinning.
mkfifo "$TDIR/fifo5"
chmod 666 "$TDIR/fifo5"
nobody_proc "$TDIR/fifo5" "$PRE"'sys.stderr.write("ready\n"); sys.stderr.flush()
open(sys.argv[1]).read(1)
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
sys.stderr.write("done\n"); sys.stderr.flush()
t = time.time()
while time.time() - t < 3: pass
sys.stderr.write("spun\n"); sys.stderr.flush()
time.sleep(600)'
wait_for 10 grep -q ready "$TDIR/p.err" || fail "nobody's process starts" "$(cat "$TDIR/p.err")"
if nctl attach "$P" --freq 999 >/dev/null; then
	# Its first check is a full one; then it is quiet and left out.
	q=$(sjson quiet_skips)
	wait_for 30 eval "[ \$(sjson quiet_skips) -gt $((q + 1)) ]"
	echo x >"$TDIR/fifo5"
	wait_for 10 grep -q done "$TDIR/p.err" || fail "prctl" "$(cat "$TDIR/p.err")"
	if wait_for 30 changed "$P"; then
		# Left to its alive check (every 10 s), it would keep the samples of its spin.
		kept=$(grep -o "pid $P .*credentials changed.*" "$TDIR/kprofd.log" | head -1)
		[[ "$kept" == *", 0 samples kept"* ]] &&
			pass "a quiet target made non-dumpable is checked before its next sample: $kept" ||
			fail "quiet target checked before its next sample" "$kept"
	else
		fail "quiet non-dumpable target ended" "$(tail -3 "$TDIR/kprofd.log")"
	fi
else
	fail "nobody attaches its process" "$(tail -2 "$TDIR/kprofd.log")"
fi
{ kill -9 "$P"; wait "$P"; } 2>/dev/null
stop_daemon
finish
