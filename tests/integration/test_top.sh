#!/usr/bin/env bash
# kprofctl top in a real terminal (tmux): the hottest function is on top within seconds, the keys
# work (sort, pause, filter, tree, Home/End), the header says "1 target" and explains TREND, it
# survives a resize (down to 40 columns, where the header flows onto the next lines and rows are
# cut, nothing wraps) and the target's exit, q and Ctrl-C exit with status 0 and restore the
# terminal, and --iterations leaves its last screen on the terminal. Also --json: one JSON line
# per interval, the first one an interval too.
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

# The first update is an interval too (issue 29, item 4), not the whole profile so far.
wait_for 30 at_least_samples "$P" 1500
if ctl top "$P" --json --iterations 1 --interval 500 | python3 -c "
import json, sys
t = json.loads(sys.stdin.readline())['targets'][0]
n, all = t['interval_samples'], t['target']['samples']
print(f'first interval {n} samples, {all} in all')
assert 0 < n <= all // 2 and n <= 1000, (n, all)
"; then pass "top's first update is an interval of 500 ms, not the whole profile"
else fail "top's first update" "its interval_samples is not an interval's (see above)"; fi

SES=kprof-top-$$
export TMUX_TMPDIR=$TDIR
tmux kill-session -t "$SES" 2>/dev/null
tmux new-session -d -s "$SES" -x 150 -y 35 \
	"$PWD/$KPROFCTL --socket $SOCK top $P; echo TOP-EXIT rc=\$?; sleep 120"
screen() { tmux capture-pane -t "$SES" -p; }
first_row() { screen | sed -n '/SELF% .*TOTAL% .*KIND/{n;p;q}'; }
row_has() { first_row | grep -q "$1"; }
shows() { screen | grep -q -- "$1"; }
cleanup_tmux() { local s; for s in "$SES" "$SES-int" "$SES-n" "$SES-2" "$SES-w80" "$SES-w160"; do tmux kill-session -t "$s" 2>/dev/null; done; }
trap 'cleanup_tmux; cleanup' EXIT

# Layout at real terminal widths (issue 29, item 5), in tmux at 80 and 160 columns: report's
# rows fit (nothing wraps: the pane's rows are its lines), MODULE before the name; top with one
# target has no PID column.
# wraps SESSION: the rows of the pane that are the continuation of a wrapped line.
wraps() { echo $(($(tmux capture-pane -t "$1" -p | wc -l) - $(tmux capture-pane -t "$1" -pJ | wc -l))); }
for W in 80 160; do
	tmux new-session -d -s "$SES-w$W" -x "$W" -y 40 \
		"$PWD/$KPROFCTL --socket $SOCK report $P --top 12; echo REPORT-END; sleep 120"
	if wait_for 10 eval "tmux capture-pane -t $SES-w$W -p | grep -q REPORT-END"; then
		n=$(wraps "$SES-w$W")
		if [ "$n" = 0 ] && tmux capture-pane -t "$SES-w$W" -p | grep -q "KIND    MODULE .*FUNCTION"; then
			pass "report at $W columns: no row wraps, the name last"
		else fail "report at $W columns" "$n wrapped rows: $(tmux capture-pane -t "$SES-w$W" -p | head -8)"; fi
	else fail "report at $W columns" "no output"; fi
	tmux kill-session -t "$SES-w$W" 2>/dev/null
done
tmux new-session -d -s "$SES-w80" -x 80 -y 24 "$PWD/$KPROFCTL --socket $SOCK top $P; sleep 120"
top80_row() { tmux capture-pane -t "$SES-w80" -p | grep -q "mj_hot"; }
if wait_for 10 top80_row; then
	hdr=$(tmux capture-pane -t "$SES-w80" -p | grep -m1 'SELF% .*TOTAL% .*KIND')
	n=$(wraps "$SES-w80")
	if [ "$n" = 0 ] && ! grep -q "^PID" <<<"$hdr"; then pass "top at 80x24 with one target: no PID column, nothing wraps"
	else fail "top at 80x24" "$n wrapped; header: $hdr"; fi
else fail "top at 80x24" "$(tmux capture-pane -t "$SES-w80" -p | head -5)"; fi
tmux kill-session -t "$SES-w80" 2>/dev/null

if wait_for 10 row_has mj_hot; then pass "hottest function mj_hot on top within 10 s: $(first_row | tr -s ' ' | cut -c1-60)"
else fail "mj_hot on top" "$(screen | head -12)"; fi
shows "kprofd CPU" && shows "samples/s" && shows "drops" && pass "header: rate, drops, kprofd CPU" ||
	fail "header" "$(screen | head -3)"
shows " 1 target attached," && pass "header: 1 target attached (singular)" || fail "plural" "$(screen | head -2)"
shows "TREND (SELF% of the last 8 intervals, oldest left): \[ \]0 \[\.\]14 .* \[#\]100%" &&
	pass "header: the legend of the TREND glyphs" || fail "TREND legend" "$(screen | head -5)"
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
# Home and End: the last row, then the first (a small window, so the rows are more than a page).
tmux resize-window -t "$SES" -x 90 -y 12
row_lacks() { [ -n "$(first_row)" ] && ! row_has "$1"; }
wait_for 5 row_has mj_hot
tmux send-keys -t "$SES" End
if wait_for 5 row_lacks mj_hot; then
	tmux send-keys -t "$SES" Home
	wait_for 5 row_has mj_hot && pass "End goes to the last row, Home back to the first" ||
		fail "Home" "$(first_row)"
else fail "End" "$(screen)"; fi
# 40 columns: nothing wraps. The header's lines continue indented on the next line, each item
# whole; the rows are cut at the edge, their columns intact.
tmux resize-window -t "$SES" -x 40 -y 24
narrow_ok() {
	screen | grep -qE "^pid $P \(minijit\) attached, [0-9]+ Hz," &&
		screen | grep -qE "^  [0-9]+ samples? in [0-9.]+ s, [0-9]+ in all\$" &&
		screen | grep -qE "(^| )kprofd CPU [0-9.]+%\$" &&
		first_row | grep -qE "^ *[0-9.]+% +[0-9.]+% +[0-9]+"
}
sleep 1.5 # a resize is an event with nothing to poll for; give ncurses one redraw
if wait_for 5 narrow_ok; then pass "40 columns: header reflowed, rows cut, nothing wraps"
else fail "40 columns" "$(screen | head -12)"; fi
tmux resize-window -t "$SES" -x 150 -y 35

# Ctrl-C quits as q does: exit status 0 (1 is "kprofd refused"), terminal restored.
tmux new-session -d -s "$SES-int" -x 150 -y 35 \
	"$PWD/$KPROFCTL --socket $SOCK top $P; echo TOP-EXIT rc=\$?; sleep 120"
int_shows() { tmux capture-pane -t "$SES-int" -p | grep -q -- "$1"; }
wait_for 10 int_shows mj_hot
tmux send-keys -t "$SES-int" C-c
if wait_for 5 int_shows "TOP-EXIT rc=0" && [ "$(tmux display -p -t "$SES-int" '#{alternate_on}')" = 0 ]; then
	pass "Ctrl-C exits with status 0, terminal restored"
else fail "Ctrl-C" "$(tmux capture-pane -t "$SES-int" -p | grep -v '^$' | tail -3)"; fi

# --iterations in a terminal leaves the last screen behind, as top -n and perf top do.
tmux new-session -d -s "$SES-n" -x 150 -y 35 \
	"$PWD/$KPROFCTL --socket $SOCK top $P --iterations 3 --interval 300; echo TOP-EXIT rc=\$?; sleep 120"
n_screen() { tmux capture-pane -t "$SES-n" -p; }
n_done() { n_screen | grep -q "TOP-EXIT rc=0"; }
if wait_for 15 n_done && [ "$(tmux display -p -t "$SES-n" '#{alternate_on}')" = 0 ] &&
	n_screen | sed '/TOP-EXIT/q' | grep -q 'SELF% .*TOTAL% .*KIND' &&
	n_screen | sed '/TOP-EXIT/q' | sed -n '/SELF% .*TOTAL% .*KIND/{n;p;q}' | grep -q mj_hot; then
	pass "--iterations 3: exit 0, the last screen (mj_hot first) left on the terminal"
else fail "--iterations leaves the screen" "$(n_screen | grep -v '^$' | head -8)"; fi

# Two targets: busy minijit (mj_hot about 60% of its samples) and a Python loop held to about
# 5% of a CPU (_PyEval_EvalFrameDefault or its kin near 90% of its few samples). The rows are
# ordered by the CPU time they stand for, not by percents of different wholes: minijit's mj_hot
# comes first.
python3 -c 'while True: pass' &
Y=$!; PIDS+=("$Y")
( while kill -STOP "$Y" 2>/dev/null; do sleep 0.19; kill -CONT "$Y" 2>/dev/null; sleep 0.01; done ) &
THR=$!; PIDS+=("$THR")
ctl attach "$Y" --freq 999 >/dev/null
tmux new-session -d -s "$SES-2" -x 150 -y 35 "$PWD/$KPROFCTL --socket $SOCK top $P $Y; sleep 120"
two_first() { tmux capture-pane -t "$SES-2" -p | sed -n '/^PID .*SELF%/{n;p;q}'; }
two_ok() { two_first | grep -qE "^ *$P .*mj_hot"; }
y_shown() { tmux capture-pane -t "$SES-2" -p | grep -qE "^ *$Y "; }
if wait_for 10 y_shown && sleep 2 && two_ok; then
	pass "several targets: rows by CPU time, the busy target's mj_hot first ($(two_first | tr -s ' ' | cut -c1-50))"
else fail "two targets' order" "$(tmux capture-pane -t "$SES-2" -p | sed -n '/^PID .*SELF%/,+4p')"; fi
tmux kill-session -t "$SES-2" 2>/dev/null
kill "$THR" 2>/dev/null; kill -9 "$Y" 2>/dev/null

kill -9 "$P"; wait "$P" 2>/dev/null
if wait_for 10 shows "($P\|minijit) exited" || wait_for 5 shows "exited"; then pass "target exit shown, view still running"
else fail "target exit" "$(screen | head -4)"; fi
tmux send-keys -t "$SES" q
if wait_for 5 shows "TOP-EXIT rc=0"; then pass "q exits with status 0"
else fail "q" "$(screen | tail -5)"; fi
[ "$(tmux display -p -t "$SES" '#{alternate_on}')" = 0 ] && pass "terminal restored (alternate screen off)" ||
	fail "terminal restored" "alternate screen still on"
finish
