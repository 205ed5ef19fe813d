#!/usr/bin/env bash
# SO_PEERCRED authorization: root may do anything; another uid may attach to, read and detach
# only its own processes, and sees only those in `list`.
. "$(dirname "$0")/lib.sh"
# A group whose members may read every profile (read only).
RG=kprof-test-readers
getent group "$RG" >/dev/null || groupadd --system "$RG"
RGID=$(getent group "$RG" | cut -d: -f3)
start_daemon --read-group "$RG" || { fail "daemon starts" "see log"; exit 1; }
if ! command -v setpriv >/dev/null; then skip "auth" "setpriv (util-linux) missing"; exit 0; fi
NOBODY=65534
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$KPROFCTL" --socket "$SOCK" "$@"; }

sleep 300 & ROOTP=$!; PIDS+=("$ROOTP")
setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups sleep 300 & NOBP=$!; PIDS+=("$NOBP")
owner_is() { [ "$(stat -c %u "/proc/$1")" = "$2" ]; }
wait_for 5 owner_is "$NOBP" $NOBODY

out=$(as_nobody attach "$ROOTP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "permission denied" <<<"$out"; then pass "other uid refused attaching to a root process"
else fail "other uid attach root process" "rc=$rc out=$out"; fi
if [ "$(target_state "$ROOTP")" = "" ]; then pass "refused attach left no target"
else fail "refused attach left no target" "$(ctl list)"; fi

check "other uid attaches its own process" as_nobody attach "$NOBP"
check "root attaches a root process" ctl attach "$ROOTP"

out=$(as_nobody report "$ROOTP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "permission denied" <<<"$out"; then pass "other uid cannot read root's profile"
else fail "other uid report" "rc=$rc out=$out"; fi
out=$(as_nobody detach "$ROOTP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "permission denied" <<<"$out"; then pass "other uid cannot detach root's target"
else fail "other uid detach" "rc=$rc out=$out"; fi
out=$(as_nobody list --all --json)
if grep -q "\"pid\":$NOBP" <<<"$out" && ! grep -q "\"pid\":$ROOTP" <<<"$out"; then
	pass "other uid lists only its own targets"
else fail "other uid list" "$out"; fi
check "other uid reads its own profile" as_nobody report "$NOBP"
check "root reads any profile" ctl report "$NOBP"
check "other uid detaches its own process" as_nobody detach "$NOBP"

as_reader() { setpriv --reuid=$NOBODY --regid=$NOBODY --groups="$RGID" "$KPROFCTL" --socket "$SOCK" "$@"; }
check "read group member reads root's profile" as_reader report "$ROOTP"
if as_reader list --all --json | grep -q "\"pid\":$ROOTP"; then pass "read group member lists every target"
else fail "read group list" "$(as_reader list)"; fi
out=$(as_reader detach "$ROOTP" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "permission denied" <<<"$out"; then pass "read group member cannot detach"
else fail "read group detach" "rc=$rc out=$out"; fi
sleep 300 & ROOTQ=$!; PIDS+=("$ROOTQ")
out=$(as_reader attach "$ROOTQ" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "permission denied" <<<"$out"; then pass "read group member cannot attach"
else fail "read group attach" "rc=$rc out=$out"; fi
finish
