#!/usr/bin/env bash
# kprofctl top with off-CPU time (issue 33): a target attached with --off-cpu gets an OFF-CPU
# column, the time its threads waited with each function as the wait's leaf in the interval,
# and rows for the functions that only wait (do_nanosleep, futex_do_wait, anon_pipe_read). The
# offcpu_mix fixture's threads wait in nanosleep, on a futex and on a pipe while perf records
# the same run's context switches (perf record -e sched:sched_switch -g): over 4 intervals of
# top --json, each kind's share of the waits is kprof's within 3 points of perf's, and the
# entries' off-CPU times add up to the interval's. In a terminal (tmux): the column, its sort
# key, the header's off-CPU time; a target without --off-cpu has no such column. Needs root
# (BPF, perf), tmux and python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "top --off-cpu" "needs root"; exit 0; fi
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }
start_mix 40 || { fail "fixture" "not ready"; exit 1; }
ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
kill -USR1 "$MIXP"
wait_for 10 mix_tid kpoc-worker || { fail "fixture" "no worker thread"; exit 1; }
TIDS=$(mix_tid kpoc-worker),$(mix_tid kpoc-holder)

F='prev_comm == "kpoc-worker" || next_comm == "kpoc-worker" || prev_comm == "kpoc-holder" || next_comm == "kpoc-holder"'
perf_start sw "$F" || { fail "perf record" "$(head -c 300 "$TDIR/sw.log")"; exit 1; }
ctl top "$MIXP" --json --iterations 4 --interval 1000 >"$TDIR/top.json" 2>"$TDIR/top.err"
perf_stop "$TDIR/perf.json" || fail "perf script" "$(head -c 300 "$TDIR/sw.log")"
python3 "$(dirname "$0")/offcpu_check.py" perf "$TDIR/perf.json" "$TIDS" >"$TDIR/p"
python3 - "$TDIR/top.json" "$TDIR/p" >"$TDIR/shares" <<'EOF'
import json, sys
k = {"sleep": 0, "futex": 0, "pipe": 0}
sum_entries = sum_interval = lines = 0
for l in open(sys.argv[1]):
    t = json.loads(l)["targets"][0]
    lines += 1
    sum_interval += t["interval_off_cpu_ns"]
    for e in t["entries"]:
        sum_entries += e["off_cpu_ns"]
        f = e["function"]
        c = "sleep" if "nanosleep" in f else "futex" if "futex" in f else "pipe" if "pipe_read" in f else None
        if c:
            k[c] += e["off_cpu_ns"]
p = dict(l.split() for l in open(sys.argv[2]))
kt, pt = sum(k.values()), sum(int(p[c]) for c in k)
for c in k:
    print("kprof_%s %.2f" % (c, 100.0 * k[c] / kt if kt else -1))
    print("perf_%s %.2f" % (c, 100.0 * int(p[c]) / pt if pt else -1))
print("kprof_ns %d perf_ns %d" % (kt, pt))
print("lines %d entries_ns %d interval_ns %d" % (lines, sum_entries, sum_interval))
EOF
cat "$TDIR/shares"
val() { awk -v k="$1" '$1 == k { print $2 }' "$TDIR/shares"; }
close() { python3 -c "import sys; sys.exit(0 if abs($1 - $2) <= $3 else 1)"; }
check "top --json: 4 updates with off-CPU time" test "$(val lines)" = 4
# The fixture's own design judges perf's side too (offcpu_lib.sh: vs_perf): each 100 ms cycle
# the worker sleeps 50 ms and waits 30 ms on the futex while the holder sleeps 30 ms holding
# it, so of the threads' sleep and futex time 80/110 is sleep, whatever the load does to the
# rest of the cycle (the pipe wait grows with it).
sf=$(python3 -c "print($(val kprof_sleep) + $(val kprof_futex))")
vs_perf "sleep share of the waits (points)" "$(val kprof_sleep)" "$(val perf_sleep)" 3 \
	"$(python3 -c "print('%.2f' % ($sf * 80 / 110))")"
vs_perf "futex share of the waits (points)" "$(val kprof_futex)" "$(val perf_futex)" 3 \
	"$(python3 -c "print('%.2f' % ($sf * 30 / 110))")"
# The pipe waits have no clock of the fixture's: perf's side alone, unless its record lost waits
# (then it is no second side: said so).
if [ -n "$PERF_OFF" ]; then
	skip "pipe share of the waits" "perf's record of this run lost waits (see above): kprof $(val kprof_pipe)%, perf $(val perf_pipe)%"
else
	vs_perf "pipe share of the waits (points)" "$(val kprof_pipe)" "$(val perf_pipe)" 3
fi
read -r _ kns _ pns < <(grep '^kprof_ns' "$TDIR/shares")
if python3 -c "import sys; sys.exit(0 if 0.7 * $pns <= $kns <= 1.05 * $pns else 1)"; then
	pass "the waits' time in the 4 intervals is perf's in its longer window ($kns vs $pns ns)"
elif [ "$kns" -gt "$pns" ] && [ "$kns" -le 8400000000 ]; then # 2 threads, 4 s
	# perf's window holds the 4 intervals and more: a record with fewer waits than kprof's lost
	# some (a loaded host; perf does not always say so). No second side for this run.
	skip "the waits' time in the 4 intervals" "$kns ns, more than perf's $pns ns though perf's window is longer: its record lost waits${PERF_WARN:+ ($PERF_WARN)}; within the 2 threads' 4 s"
else
	fail "the waits' time in the 4 intervals is perf's in its longer window" "$kns vs $pns ns${PERF_WARN:+; perf: $PERF_WARN}"
fi
read -r _ ens _ ins < <(grep '^lines' "$TDIR/shares" | cut -d' ' -f3-)
check "the entries' off-CPU times add up to the intervals' ($ens vs $ins ns)" \
	python3 -c "import sys; sys.exit(0 if $ins > 0 and abs($ens - $ins) <= 0.01 * $ins else 1)"

# A target without --off-cpu: no off-CPU keys.
start_minijit --seconds 60 >/dev/null
ctl attach "$MJ_PID" >/dev/null
check "a target without --off-cpu has no off-CPU column" sh -c \
	"'$KPROFCTL' --socket '$SOCK' top '$MJ_PID' --json --iterations 1 --interval 500 | grep -v off_cpu | grep -q mj_"

if ! command -v tmux >/dev/null; then skip "top --off-cpu in a terminal" "tmux not installed"; finish; exit; fi
SES=kprof-octop-$$
export TMUX_TMPDIR=$TDIR
trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT
tmux new-session -d -s "$SES" -x 160 -y 40 "$PWD/$KPROFCTL --socket $SOCK top $MIXP; sleep 60"
screen() { tmux capture-pane -t "$SES" -p; }
first_row() { screen | sed -n '/SELF% .*OFF-CPU .*KIND/{n;p;q}'; }
row_off() { screen | grep -E "[0-9.]+(s|ms) .* $1( |$)"; }
check "the OFF-CPU column, a do_nanosleep row with its time" wait_for 15 row_off do_nanosleep
check "the header says the target's off-CPU time" sh -c "tmux capture-pane -t '$SES' -p | grep -q 'off CPU [0-9.]* s in the interval'"
for _ in 1 2 3 4; do tmux send-keys -t "$SES" s; done
waits_first() { first_row | grep -qE 'anon_pipe_read|do_nanosleep|futex'; }
check "sort by off-cpu: a wait first ($(first_row | tr -s ' ' | cut -c1-70))" wait_for 10 waits_first
screen | grep -q "sort: off-cpu" || fail "the keys' line names the sort" "$(screen | tail -1)"
finish
