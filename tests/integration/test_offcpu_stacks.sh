#!/usr/bin/env bash
# Off-CPU stacks are kept by their addresses, not by a stack-trace map's buckets: the
# offcpu_stacks fixture leaves the CPU once under each of N different user stacks (N = 4000,
# half of kp_offcpu_stacks). A stack-trace map of 8192 buckets loses a stack whose bucket holds
# another one (-EEXIST) however empty it is: here hundreds of the 4000, and on a busy host a
# stack that shares a bucket with a busy one lost all its time (a CI run: a worker's futex waits
# all under "[stack lost]"). kprof must name (nearly) every one of the N stacks, as perf does on
# the same run (perf record -e sched:sched_switch -g), keep (nearly) no time under "[stack lost]",
# and status must count no stack the BPF side could not store. Then a full map: 16,384 stacks
# at 1 us sleeps in three processes at once overfill kp_offcpu_stacks (8,192) between two drains;
# what does not fit is counted (off_cpu_no_stack) and its time kept under "[stack lost]", and
# once they are read the map empties again: a fresh process's 4,000 stacks lose none.
# Needs root (BPF, perf) and python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "off-CPU stacks" "needs root"; exit 0; fi
FIX=$BUILD/offcpu_stacks
N=4000
[ -x "$FIX" ] || { fail "offcpu_stacks fixture" "$FIX not built (make)"; exit 1; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }
status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# A sleeper with off-CPU time keeps the program attached, so that status says what it counted
# after the fixture has exited.
python3 -c 'import time
while True: time.sleep(0.2)' &
SL=$!
PIDS+=("$SL")
ctl attach "$SL" --off-cpu >/dev/null || { fail "attach --off-cpu (sleeper)" "refused"; exit 1; }

"$FIX" "$N" >"$TDIR/fix.out" 2>"$TDIR/fix.err" &
FP=$!
PIDS+=("$FP")
wait_for 10 grep -q ready "$TDIR/fix.err" || { fail "fixture" "not ready"; exit 1; }
ctl attach "$FP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
if ! perf_start st "prev_pid == $FP || next_pid == $FP"; then
	fail "perf record" "$(head -c 300 "$TDIR/st.log")"
	exit 1
fi
kill -USR1 "$FP"
wait_for 120 grep -q done "$TDIR/fix.out" || fail "fixture run" "no result"
wait_for 20 state_is "$FP" exited || fail "the fixture's exit" "not seen"
perf_stop "$TDIR/perf.json" || fail "perf script" "$(head -c 300 "$TDIR/st.log")"

# Each stack: the fixture's left/right frames below main, root first (the bits of its i). Not
# every frame: where kprof finds the caller of a leaf without a frame pointer (.eh_frame), it
# has the bottom descend that perf's frame-pointer walk skips.
ctl folded "$FP" --off-cpu >"$TDIR/folded" 2>"$TDIR/folded.err" || fail "folded --off-cpu" "$(head -c 300 "$TDIR/folded.err")"
python3 - "$TDIR/folded" "$TDIR/perf.json" "$FP" >"$TDIR/counts" <<'EOF'
import json, sys
folded, perf, pid = sys.argv[1], sys.argv[2], sys.argv[3]
path = lambda fr: ";".join(f for f in fr if f in ("left", "right"))
k, lost, total = set(), 0, 0
for line in open(folded):
    st, _, ns = line.rstrip("\n").rpartition(" ")
    fr = st.split(";")
    total += int(ns)
    if "[stack lost]" in fr:
        lost += int(ns)
    if "descend" in fr and "do_nanosleep" in fr:
        k.add(path(fr))
p = set()
for tid, t in json.load(open(perf)).items():
    for fr, ns in t["stacks"]:
        fr = list(reversed(fr))  # root first, as kprof's
        if "descend" in fr and "do_nanosleep" in fr:
            p.add(path(fr))
print("kprof %d\nperf %d\nlost %d\ntotal %d\nboth %d" % (len(k), len(p), lost, total, len(k & p)))
EOF
val() { awk -v k="$1" '$1 == k { print $2 }' "$TDIR/counts"; }
KS=$(val kprof) PS=$(val perf) LOST=$(val lost) TOTAL=$(val total) BOTH=$(val both)
echo "   (stacks: kprof $KS, perf $PS, both $BOTH of $N; [stack lost] $LOST of $TOTAL ns;" \
	"status: $(status_key off_cpu_stacks_gone) gone, $(status_key off_cpu_intervals) intervals)"
# 1 %: an interval cut by perf's start or end, and a stack freed between kprofd's scan of the
# threads off CPU and its delete (counted: stacks_gone). The stack-trace map lost 6-12 %.
if [ "${KS:-0}" -ge $((N * 99 / 100)) ]; then
	pass "kprof names the fixture's $N different stacks: $KS"
else
	fail "kprof names the fixture's $N different stacks" "only ${KS:-0} (perf ${PS:-?}); [stack lost] $LOST of $TOTAL ns"
fi
# perf's record of this run holds fewer switches than the fixture made (here, with no loss
# counted by perf): each stack it has must be one of kprof's.
if [ "${PS:-0}" -gt 0 ] && [ "${BOTH:-0}" -ge $((PS * 99 / 100)) ]; then
	pass "perf's stacks of the same run are kprof's: $BOTH of perf's $PS"
else
	fail "perf's stacks of the same run are kprof's" "$BOTH of perf's $PS, kprof $KS${PERF_WARN:+; perf: $PERF_WARN}"
fi
if [ "${TOTAL:-0}" -gt 0 ] && [ "$((LOST * 100))" -le "$TOTAL" ]; then
	pass "at most 1 % of the time under [stack lost]: $LOST of $TOTAL ns"
else
	fail "at most 1 % of the time under [stack lost]" "$LOST of $TOTAL ns"
fi
check "status: no stack the BPF side could not store" test "$(status_key off_cpu_no_stack)" = 0

# lost_ns PID: the time of PID's off-CPU stacks under "[stack lost]", and their total.
lost_ns() {
	ctl folded "$1" --off-cpu | awk '{ ns = $NF; t += ns } /\[stack lost\]/ { l += ns } END { print l + 0, t + 0 }'
}
BURST=()
for b in 1 2 3; do
	"$FIX" 16384 1000 >"$TDIR/burst$b.out" 2>"$TDIR/burst$b.err" &
	BURST+=($!)
	PIDS+=($!)
done
for b in 1 2 3; do
	wait_for 10 grep -q ready "$TDIR/burst$b.err" || fail "burst fixture $b" "not ready"
	ctl attach "${BURST[b - 1]}" --off-cpu >/dev/null || fail "attach --off-cpu (burst $b)" "refused"
done
kill -USR1 "${BURST[@]}"
for b in 1 2 3; do
	wait_for 120 grep -q done "$TDIR/burst$b.out" || fail "burst fixture $b" "no result"
	wait_for 20 state_is "${BURST[b - 1]}" exited || fail "burst fixture $b's exit" "not seen"
done
NOSTACK=$(status_key off_cpu_no_stack)
read -r BL BT < <(lost_ns "${BURST[0]}")
echo "   (the burst: $NOSTACK stacks not stored; burst 1: [stack lost] $BL of $BT ns)"
if [ "$NOSTACK" -gt 0 ]; then
	s_lost() { for p in "${BURST[@]}"; do lost_ns "$p"; done | awk '{ l += $1 } END { exit !(l > 0) }'; }
	check "a full map: the stacks not stored ($NOSTACK) keep their time under [stack lost]" s_lost
	# Stacks no sum read are not freed by the per-sum free: the next one sweeps the map.
	wait_for 10 bash -c "[ \"\$($KPROFCTL --socket $SOCK status --json | python3 -c \"import json,sys; print(json.load(sys.stdin)['off_cpu_sweeps'])\")\" -gt 0 ]" &&
		pass "a full map: swept ($(status_key off_cpu_sweeps) sweeps, $(status_key off_cpu_stacks_freed) stacks freed)" ||
		fail "a full map: swept" "off_cpu_sweeps $(status_key off_cpu_sweeps), stacks freed $(status_key off_cpu_stacks_freed)"
else
	skip "a full map" "the bursts did not overfill it on this run (drained in between)"
fi
"$FIX" 4000 >"$TDIR/after.out" 2>"$TDIR/after.err" &
AP=$!
PIDS+=("$AP")
wait_for 10 grep -q ready "$TDIR/after.err" || fail "fixture after the burst" "not ready"
ctl attach "$AP" --off-cpu >/dev/null || fail "attach --off-cpu (after the burst)" "refused"
kill -USR1 "$AP"
wait_for 120 grep -q done "$TDIR/after.out" || fail "fixture after the burst" "no result"
wait_for 20 state_is "$AP" exited || fail "the exit after the burst" "not seen"
read -r AL AT < <(lost_ns "$AP")
AN=$(status_key off_cpu_no_stack)
if [ "$AN" = "$NOSTACK" ] && [ "$AL" = 0 ] && [ "$AT" -gt 0 ]; then
	pass "after the burst the map has room again: 4,000 new stacks, none lost"
else
	fail "after the burst the map has room again" "stacks not stored $NOSTACK -> $AN; [stack lost] $AL of $AT ns"
fi
finish
