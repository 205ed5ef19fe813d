#!/usr/bin/env bash
# The housekeeping's saves of kept profiles look only at the ones to save again, not at every
# kept profile (issue 34: "manager_save_dirty walks all targets when one is dirty"; the
# complexity check, not a timing assert). status --json counts the walks and the targets they
# looked at (save_walks, save_steps). The state directory is a tmpfs: 300 idle kept profiles
# are saved, the tmpfs is then made read-only and a busy target detached: its save fails and
# is tried again (backing off), each housekeeping walking the dirty list meanwhile. Each walk
# looks at about 1 target (a walk of all would look at ~300). Once the tmpfs is writable again
# the save goes through (the file is there) and the walks stop. Needs root (BPF,
# mount).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "save walk steps" "needs root"; exit 0; fi
N=300
cp "$(dirname "$0")/kpraw.py" "$TDIR/"
mkdir -p "$TDIR/state"
mount -t tmpfs -o size=16m kprof-it "$TDIR/state" || { skip "save walk steps" "cannot mount a tmpfs"; exit 0; }
trap 'stop_daemon; umount -l "$TDIR/state" 2>/dev/null; cleanup' EXIT
start_daemon --max-kept 1000 || { fail "daemon starts" "see log"; exit 1; }
sjson() { ctl status --json | python3 -c "import json,sys; s = json.load(sys.stdin); print(' '.join(str(s[k]) for k in sys.argv[1:]))" "$@"; }
# N idle processes attached and detached: N kept profiles, saved (not dirty).
SL=()
for ((i = 0; i < N; i++)); do sleep 600 & SL+=("$!"); PIDS+=("$!"); done
python3 "$TDIR/kpraw.py" attach-detach "$SOCK" "${SL[@]}" || fail "attach/detach $N" "see above"
kill "${SL[@]}" 2>/dev/null
read -r kept < <(sjson targets_kept)
saved() { [ "$(ls "$TDIR/state/profiles" | grep -c '\.kprof$')" -ge "$1" ]; }
[ "$kept" -ge "$N" ] && wait_for 20 saved "$N" && pass "$kept kept profiles, saved" ||
	fail "kept profiles" "$kept of $N, $(ls "$TDIR/state/profiles" | grep -c '\.kprof$') files"
sh -c 'while :; do :; done' & BUSY=$!; PIDS+=("$BUSY")
ctl attach "$BUSY" --freq 999 >/dev/null || { fail "attach" "$(tail -2 "$TDIR/kprofd.log")"; exit 1; }
wait_for 20 at_least_samples "$BUSY" 200 || fail "busy target sampled" "$(ctl list)"
# Read-only: the busy target's save fails when it is detached, and is tried again.
mount -o remount,ro "$TDIR/state" || { fail "remount read-only" "busy?"; exit 1; }
read -r w0 s0 < <(sjson save_walks save_steps)
ctl detach "$BUSY" >/dev/null || fail "detach" "$(tail -2 "$TDIR/kprofd.log")"
walked() { read -r w1 s1 < <(sjson save_walks save_steps); [ "$w1" -ge $((w0 + $1)) ]; }
if wait_for 30 walked 4; then
	r=$(((s1 - s0) * 100 / (w1 - w0)))
	[ "$r" -le 200 ] && pass "1 dirty of $((kept + 1)) kept: $((r / 100)).$((r % 100)) targets a walk ($((w1 - w0)) walks)" ||
		fail "steps a walk" "$r/100 targets a walk over $((w1 - w0)) walks (a walk of all: ~$kept)"
else
	fail "failed save tried again" "$w1 walks (had $w0); $(grep -c 'cannot save' "$TDIR/kprofd.log") failures"
fi
grep -q "pid $BUSY: cannot save the profile" "$TDIR/kprofd.log" && pass "the save failed (read-only)" ||
	fail "the save failed" "$(tail -3 "$TDIR/kprofd.log")"
# Writable again: saved at its next try (back-off: within 16 s), and no walk after it.
mount -o remount,rw "$TDIR/state" || fail "remount read-write" "busy?"
busy_saved() { ls "$TDIR/state/profiles" | grep -q "^$BUSY-.*\.kprof$"; }
wait_for 40 busy_saved && pass "saved once writable" || fail "saved once writable" "$(ls "$TDIR/state/profiles" | grep -c "^$BUSY-")"
read -r w2 _ < <(sjson save_walks save_steps)
sleep 3
read -r w3 _ < <(sjson save_walks save_steps)
[ "$w3" -le $((w2 + 1)) ] && pass "no walk once saved ($w2 then $w3)" || fail "walks once saved" "$w2 then $w3 in 3 s"
finish
