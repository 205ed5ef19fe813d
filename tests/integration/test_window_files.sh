#!/usr/bin/env bash
# Issue 34, item 4: time windows are persisted in one file a tick, not one per target. Four busy
# processes attached with 1 s windows: each tick's windows (one per target that had samples)
# share one batch file (status window_files counts the files; each holds several windows, their
# frames one after the other); after a restart every window is back and a range reads them from
# their place in the batch files; a torn batch file costs its own windows only (renamed .bad,
# counted), the others come back; the files of one window each an earlier kprofd wrote are
# still read (an upgrade loses nothing); files go with their last window.
# Needs root (BPF).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "window files" "needs root"; exit 0; fi
FRAMES="$(dirname "$0")/kpw_frames.py"
printf '[windows]\nseconds = 1\n' >"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" || { fail "daemon starts" "see log"; exit 1; }
BUSY=()
for i in 1 2 3 4; do
	sh -c 'while :; do :; done' &
	BUSY+=($!)
	PIDS+=($!)
	ctl attach "$!" --freq 99 >/dev/null || fail "attach a busy loop" "pid $!"
done
sjson() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
enough() { [ "$(sjson windows)" -ge 16 ] && [ "$(sjson windows_unsaved)" = 0 ]; }
wait_for 90 enough || fail "windows are cut" "$(sjson windows) windows, $(sjson windows_unsaved) unsaved"
# Detached (their last windows cut at the next tick) and gone, so that the counts below hold
# still and nothing is attached again after the restarts.
for p in "${BUSY[@]}"; do ctl detach "$p" >/dev/null; kill "$p"; done
settled() { local w; w=$(sjson windows); sleep 1.5; [ "$(sjson windows)" = "$w" ] && [ "$(sjson windows_unsaved)" = 0 ]; }
wait_for 30 settled || fail "windows settle after the detach" "$(sjson windows)"
W=$(sjson windows)
F=$(sjson window_files)
ON=$(ls "$TDIR"/state/profiles/wb-*.kpw 2>/dev/null | wc -l)
FR=$(python3 "$FRAMES" "$TDIR"/state/profiles/wb-*.kpw)
[ "$F" -ge 1 ] && [ $((2 * F)) -le "$W" ] && [ "$ON" = "$F" ] && [ "$FR" = "$W" ] &&
	pass "one file a tick: $W windows of 4 targets in $F files ($FR frames on disk)" ||
	fail "one file a tick" "$W windows, $F files written, $ON on disk, $FR frames"
ls "$TDIR"/state/profiles/w-*.kpw >/dev/null 2>&1 &&
	fail "no file of one window" "$(ls "$TDIR"/state/profiles/w-*.kpw | head -3)" ||
	pass "no file of one window"

stop_daemon
N=$(python3 "$FRAMES" "$TDIR"/state/profiles/wb-*.kpw)
start_daemon --config "$TDIR/k.conf" || { fail "daemon restarts" "see log"; exit 1; }
W2=$(sjson windows)
[ "$W2" = "$N" ] && [ "$(sjson window_bad_files)" = 0 ] && [ "$(sjson windows_in_memory)" = 0 ] &&
	pass "restart: all $N windows back from their batch files" ||
	fail "restart" "$W2 windows for $N frames, bad $(sjson window_bad_files)"
# A range reads each window at its place in its batch file.
S=$(ctl report "${BUSY[2]}" --since 10m --json | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])")
[ "${S:-0}" -gt 0 ] && pass "a range of the third loop from the files: $S samples" ||
	fail "range from the files" "${S:-none} samples; $(tail -3 "$TDIR/kprofd.log")"

stop_daemon
N=$(python3 "$FRAMES" "$TDIR"/state/profiles/wb-*.kpw)
TORN=$(ls "$TDIR"/state/profiles/wb-*.kpw | sed -n 2p)
LOST=$(python3 "$FRAMES" "$TORN")
truncate -s $(($(stat -c %s "$TORN") - 10)) "$TORN"
start_daemon --config "$TDIR/k.conf" || { fail "daemon restarts" "see log"; exit 1; }
W3=$(sjson windows)
[ "$W3" = $((N - LOST)) ] && [ "$(sjson window_bad_files)" = 1 ] && [ -e "$TORN.bad" ] &&
	grep -q "torn" "$TDIR/kprofd.log" &&
	pass "a torn batch file: its $LOST windows set aside (.bad, counted), the other $W3 back" ||
	fail "torn batch" "$W3 windows for $N - $LOST, bad $(sjson window_bad_files); $(grep -i window "$TDIR/kprofd.log" | tail -2)"

# An upgrade: the files of one window each that kprofd wrote before batches (w-SEQ-PID.kpw,
# made here from the batches' frames) are all read, and a range reads them.
stop_daemon
# All but the last batch: after an upgrade both kinds lie side by side.
LASTB=$(ls "$TDIR"/state/profiles/wb-*.kpw | tail -1)
KEPTB=$(python3 "$FRAMES" "$LASTB")
SPLIT=$(python3 "$FRAMES" --split $(ls "$TDIR"/state/profiles/wb-*.kpw | head -n -1))
# And a batch name kprofd never writes (no id): set aside, not read as a window of its own.
cp "$(ls "$TDIR"/state/profiles/w-*.kpw | head -1)" "$TDIR/state/profiles/wb-x.kpw"
start_daemon --config "$TDIR/k.conf" || { fail "daemon restarts" "see log"; exit 1; }
W4=$(sjson windows)
S4=$(ctl report "${BUSY[2]}" --since 10m --json | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])")
[ "$(sjson window_bad_files)" = 1 ] && [ -e "$TDIR/state/profiles/wb-x.kpw.bad" ] &&
	pass "a batch file's name without an id: renamed .bad, counted" ||
	fail "a bad batch name" "bad $(sjson window_bad_files); $(ls "$TDIR"/state/profiles/ | grep wb-x)"
[ $((SPLIT + KEPTB)) = "$W3" ] && [ "$W4" = "$W3" ] && [ "${S4:-0}" -gt 0 ] &&
	pass "upgrade: $SPLIT windows of files of one window each and $KEPTB of a batch back, a range of them $S4 samples" ||
	fail "upgrade" "$W4 windows for $SPLIT files + $KEPTB ($W3 before), range ${S4:-none}"

# Every window aged out (max_age 1 s): each file goes with its last window, both kinds.
stop_daemon
printf '[windows]\nseconds = 1\nmax_age = 1\n' >"$TDIR/k2.conf"
start_daemon --config "$TDIR/k2.conf" || { fail "daemon restarts" "see log"; exit 1; }
LEFT=$(ls "$TDIR"/state/profiles/ | grep -c 'kpw$')
[ "$(sjson windows)" = 0 ] && [ "$LEFT" = 0 ] && [ "$(sjson window_disk_bytes)" = 0 ] &&
	pass "aged out: no window, no window file left, no byte counted on disk" ||
	fail "aged out" "$(sjson windows) windows, $LEFT files, $(sjson window_disk_bytes) bytes"
finish
