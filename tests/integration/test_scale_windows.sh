#!/usr/bin/env bash
# A window tick's work does not grow with the kept profiles and their windows (issue 34: "each
# tick still scans the kept windows for unsaved ones"; the complexity check, not a timing
# assert). status --json counts the ticks and the targets and window index entries they looked
# at (window_ticks, window_tick_steps): a tick cuts the attached targets and the ended ones with
# samples not cut yet, the writer starts at the first unsaved window, retention walks only when
# something is due. With 1 s windows and a busy target attached, the steps a tick are measured
# with 0 kept profiles, then again after a fork loop followed with --children left ~400 short
# children behind as kept profiles, each with its windows: about the same (a walk of the kept
# targets or windows would add one step for each of them, ~400 or more). Needs root (BPF).
# Not sanitized: 400 children made for a count; the code it checks (windows.c, window.c) runs
# sanitized in test_window_files and test_windows.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "window tick steps" "needs root"; exit 0; fi
N=400
printf '[windows]\nseconds = 1\n' >"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" --max-kept 1000 || { fail "daemon starts" "see log"; exit 1; }
sjson() { ctl status --json | python3 -c "import json,sys; s = json.load(sys.stdin); print(' '.join(str(s[k]) for k in sys.argv[1:]))" "$@"; }
# per_tick TICKS: steps a tick (x100) over that many ticks, and the windows kept then.
per_tick() {
	local t0 s0 t1 s1 w
	read -r t0 s0 < <(sjson window_ticks window_tick_steps)
	ticked() { read -r t1 s1 w < <(sjson window_ticks window_tick_steps windows); [ "$t1" -ge $((t0 + $1)) ]; }
	wait_for 60 ticked "$1" || { echo "0 0 0"; return; }
	echo "$(((s1 - s0) * 100 / (t1 - t0))) $((t1 - t0)) $w"
}
sh -c 'while :; do :; done' & BUSY=$!; PIDS+=("$BUSY")
ctl attach "$BUSY" --freq 999 >/dev/null || { fail "attach" "$(tail -2 "$TDIR/kprofd.log")"; exit 1; }
wait_for 20 at_least_samples "$BUSY" 200 || fail "busy target sampled" "$(ctl list)"
read -r r0 k0 w0 < <(per_tick 3)
[ "$k0" -ge 3 ] && [ "$r0" -le 500 ] && pass "0 kept: $((r0 / 100)).$((r0 % 100)) steps a tick ($k0 ticks, $w0 windows)" ||
	fail "0 kept" "$r0/100 steps a tick over $k0 ticks, $w0 windows"
# N children that each spin a few ms (sampled at 999 Hz: windows of their own), followed.
rm -f "$TDIR/go"
sh -c 'until [ -e "$0" ]; do sleep 0.05; done; i=0; while [ $i -lt '"$N"' ]; do sh -c "j=0; while [ \$j -lt 4000 ]; do j=\$((j+1)); done"; i=$((i+1)); done' "$TDIR/go" &
LOOP=$!; PIDS+=("$LOOP")
ctl attach "$LOOP" --children --freq 999 >/dev/null || fail "attach --children" "$(tail -2 "$TDIR/kprofd.log")"
touch "$TDIR/go"
wait "$LOOP"
read -r kept < <(sjson targets_kept)
settled() { sleep 2.5; read -r k2 u windows < <(sjson targets_kept windows_unsaved windows); [ "$k2" = "$kept" ] && [ "$u" = 0 ] || { kept=$k2; false; }; }
wait_for 60 settled || fail "the children's windows settle" "$kept kept, $windows windows"
[ "$kept" -ge $((N / 2)) ] && [ "$windows" -ge $((w0 + N / 2)) ] && pass "$kept kept profiles, $windows windows" ||
	fail "kept profiles with windows" "$kept kept (of $N children), $windows windows (had $w0)"
read -r r1 k1 w1 < <(per_tick 3)
[ "$k1" -ge 3 ] && [ "$r1" -le $((r0 + 300)) ] && [ "$r1" -le 800 ] &&
	pass "$kept kept: $((r1 / 100)).$((r1 % 100)) steps a tick ($k1 ticks, $w1 windows; with 0 kept $((r0 / 100)).$((r0 % 100)))" ||
	fail "$kept kept" "$r1/100 steps a tick over $k1 ticks, $w1 windows (0 kept: $r0/100; a walk: ~$((kept + w1)))"
stop_daemon
finish
