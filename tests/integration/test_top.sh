#!/usr/bin/env bash
# kprofctl top in a real terminal (tmux): the hottest function is on top within seconds, the keys
# work (sort, pause, filter, tree), it survives a resize and the target's exit, and q restores
# the terminal. Also --json: one JSON line per interval.
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null; then skip "top" "tmux not installed"; exit 0; fi
start_daemon || { fail "daemon starts" "see log"; exit 1; }
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl attach "$P" --freq 999 >/dev/null
wait_for 20 at_least_samples "$P" 200

# --json first: two updates, each a JSON object whose hottest entry is mj_hot.
if ctl top "$P" --json --iterations 3 --interval 500 | tail -n 2 | python3 -c "
import json, sys
u = [json.loads(l) for l in sys.stdin]
assert len(u) == 2, u
for x in u:
    t = x['targets'][0]
    assert t['target']['pid'] == $P and t['interval_samples'] > 0, t
    assert t['entries'][0]['function'] == 'mj_hot', t['entries'][:2]
"; then pass "top --json: one line per interval, mj_hot first"
else fail "top --json" "see above"; fi

SES=kprof-top-$$
export TMUX_TMPDIR=$TDIR
tmux kill-session -t "$SES" 2>/dev/null
tmux new-session -d -s "$SES" -x 150 -y 35 \
	"$PWD/$KPROFCTL --socket $SOCK top $P; echo TOP-EXIT rc=\$?; sleep 120"
screen() { tmux capture-pane -t "$SES" -p; }
first_row() { screen | sed -n '/^PID .*SELF%/{n;p;q}'; }
row_has() { first_row | grep -q "$1"; }
shows() { screen | grep -q -- "$1"; }
cleanup_tmux() { tmux kill-session -t "$SES" 2>/dev/null; }
trap 'cleanup_tmux; cleanup' EXIT

if wait_for 10 row_has mj_hot; then pass "hottest function mj_hot on top within 10 s: $(first_row | tr -s ' ' | cut -c1-60)"
else fail "mj_hot on top" "$(screen | head -12)"; fi
shows "kprofd CPU" && shows "samples/s" && shows "drops" && pass "header: rate, drops, kprofd CPU" ||
	fail "header" "$(screen | head -3)"
tmux send-keys -t "$SES" s
wait_for 5 shows "sort: total%" && pass "s changes the sort column" || fail "sort key" "$(screen | tail -1)"
tmux send-keys -t "$SES" s s s # back to self%
tmux send-keys -t "$SES" p
wait_for 5 shows "p resume" && pass "p pauses" || fail "pause" "$(screen | tail -1)"
tmux send-keys -t "$SES" p
tmux send-keys -t "$SES" / w a r m Enter
if wait_for 5 row_has mj_warm && ! screen | grep -q "mj_hot"; then pass "/ filters rows (warm: mj_warm only)"
else fail "filter" "$(screen | sed -n 6,10p)"; fi
tmux send-keys -t "$SES" / Enter
wait_for 5 row_has mj_hot && pass "empty filter shows everything again" || fail "filter clear" "$(first_row)"
tmux send-keys -t "$SES" t
wait_for 5 shows "HCCT:" && shows "\* mj_hot" && pass "t shows the hot-context tree" ||
	fail "tree" "$(screen | sed -n 5,15p)"
tmux send-keys -t "$SES" t
wait_for 5 row_has mj_hot || fail "back from tree" "$(first_row)"
tmux send-keys -t "$SES" Down Up
tmux resize-window -t "$SES" -x 90 -y 15
sleep 1.5 # a resize is an event with nothing to poll for; give ncurses one redraw
if wait_for 5 row_has mj_hot && [ "$(screen | wc -l)" -le 15 ]; then pass "survives a resize to 90x15"
else fail "resize" "$(screen)"; fi
tmux resize-window -t "$SES" -x 150 -y 35
kill -9 "$P"; wait "$P" 2>/dev/null
if wait_for 10 shows "($P\|minijit) exited" || wait_for 5 shows "exited"; then pass "target exit shown, view still running"
else fail "target exit" "$(screen | head -4)"; fi
tmux send-keys -t "$SES" q
if wait_for 5 shows "TOP-EXIT rc=0"; then pass "q exits with status 0"
else fail "q" "$(screen | tail -5)"; fi
[ "$(tmux display -p -t "$SES" '#{alternate_on}')" = 0 ] && pass "terminal restored (alternate screen off)" ||
	fail "terminal restored" "alternate screen still on"
finish
