#!/usr/bin/env bash
# Off-CPU time (attach --off-cpu, bpf/offcpu.bpf.c, ARCHITECTURE.md §1.2.6): the offcpu_mix
# fixture's worker thread waits in known proportions (a futex held by another thread, nanosleep)
# and runs in between, measuring each phase's wall time itself. kprof's off-CPU shares of the
# worker (from export --off-cpu --format json: its stacks hold the worker function) must be
# within 3 points of the fixture's truth; the waits must be named by their kernel frames
# (futex_*, do_nanosleep) under their state ("[sleeping]"); the CPU profile still shows the
# burn loop. A bpftrace offcputime-style script on the same run, when bpftrace is there, gives
# the same shares within 3 points. Also: status names the program type (tp_btf, and raw_tp when
# KPROF_OFFCPU=raw_tp), report --off-cpu/--wall, folded --off-cpu, hcct --off-cpu and a pprof
# export with the off_cpu and wall sample types (and the CPU samples' source lines); a target
# without --off-cpu is refused an off-CPU view; the program is detached when no target asks.
# Needs root.
. "$(dirname "$0")/lib.sh"
MIX=$BUILD/offcpu_mix
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
SECS=6

start_daemon || exit 1
status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# start_mix: the fixture, ready and waiting for SIGUSR1; sets MIXP, MIX_OUT.
start_mix() {
	MIX_OUT=$TDIR/mix.$RANDOM
	"$MIX" "$SECS" >"$MIX_OUT.out" 2>"$MIX_OUT.err" &
	MIXP=$!
	PIDS+=("$MIXP")
	wait_for 10 grep -q ready "$MIX_OUT.err"
}

check "status says off-CPU is off before any target asks" \
	test "$(status_key off_cpu_program)" = ""

start_mix || { fail "fixture" "not ready"; exit 1; }
ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
check "status names the tp_btf program" test "$(status_key off_cpu_program)" = "tp_btf/sched_switch"

# bpftrace on the same run: off-CPU time of the worker by its kernel stack at the switch out.
BT_OUT=$TDIR/bt.out
if command -v bpftrace >/dev/null; then
	cat >"$TDIR/off.bt" <<'EOF'
tracepoint:sched:sched_switch /args->prev_comm == "kpoc-worker" && pid == MIXP/ { @ts[args->prev_pid] = nsecs; @ks[args->prev_pid] = kstack; }
tracepoint:sched:sched_switch /args->next_comm == "kpoc-worker" && @ts[args->next_pid]/ {
	@off[@ks[args->next_pid]] = sum(nsecs - @ts[args->next_pid]); delete(@ts[args->next_pid]);
}
EOF
	sed -i "s/MIXP/$MIXP/" "$TDIR/off.bt" # this fixture's worker only (the one switched out is current)
	# tracepoint:sched needs tracefs: mounted in a mount namespace of bpftrace's own, if the
	# machine has none mounted (this VM), so nothing changes outside it.
	unshare -m sh -c '[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
		exec bpftrace "$1"' sh "$TDIR/off.bt" >"$BT_OUT" 2>&1 &
	BT=$!
	PIDS+=("$BT")
	wait_for 60 sh -c "grep -q Attaching '$BT_OUT' || ! kill -0 $BT"
	if ! grep -q Attaching "$BT_OUT"; then
		skip "bpftrace comparison" "bpftrace did not start: $(grep -m1 -v RLIMIT "$BT_OUT" | head -c 120)"
		kill "$BT" 2>/dev/null
		BT=
	fi
fi
kill -USR1 "$MIXP"
wait_for $((SECS + 60)) grep -q total "$MIX_OUT.out" || { fail "fixture run" "no result"; exit 1; }
# bpftrace prints its maps on SIGINT; one that does not end is killed, its comparison skipped.
if [ -n "${BT:-}" ] && ! stop_tool "$BT"; then
	skip "bpftrace comparison" "bpftrace did not end on SIGINT in 30 s"
	: >"$BT_OUT"
fi
wait_for 20 state_is "$MIXP" exited

ctl export "$MIXP" --off-cpu --format json -o "$TDIR/off.json" || fail "export --off-cpu json" "failed"
ctl export "$MIXP" --format json -o "$TDIR/cpu.json" || fail "export json" "failed"
# shares: the worker's off-CPU shares of its own wall time, kprof's and the truth's.
python3 - "$MIX_OUT.out" "$TDIR/off.json" "$TDIR/cpu.json" "$BT_OUT" >"$TDIR/shares" <<'EOF'
import json, sys, re
truth = dict(l.split() for l in open(sys.argv[1]))
total = int(truth["total"])
off = json.load(open(sys.argv[2])); cpu = json.load(open(sys.argv[3]))
names = [f["name"] for f in off["functions"]]
fut = slp = allw = 0
for s in off["stacks"]:
    fr = [names[i] for i in s["frames"]]
    if "worker" not in fr:
        continue
    allw += s["count"]
    if fr[0] != "[sleeping]":
        continue
    if "do_nanosleep" in fr:
        slp += s["count"]
    elif any("futex" in f for f in fr):
        fut += s["count"]
cn = [f["name"] for f in cpu["functions"]]
burn = work = 0
for s in cpu["stacks"]:
    fr = [cn[i] for i in s["frames"]]
    if "worker" in fr:
        work += s["count"]
        burn += s["count"] if "burn" in fr else 0
print("truth_futex %.2f" % (100.0 * int(truth["futex"]) / total))
print("truth_sleep %.2f" % (100.0 * int(truth["sleep"]) / total))
print("kprof_futex %.2f" % (100.0 * fut / total))
print("kprof_sleep %.2f" % (100.0 * slp / total))
print("kprof_worker_offcpu %.2f" % (100.0 * allw / total))
print("cpu_burn_share %.2f" % (100.0 * burn / work if work else 0))
try:
    bt = open(sys.argv[4]).read()
except OSError:
    bt = ""
bf = bs = 0
for m in re.finditer(r"@off\[(.*?)\]: (\d+)", bt, re.S):
    st, v = m.group(1), int(m.group(2))
    if "futex" in st:
        bf += v
    elif "nanosleep" in st:
        bs += v
if bf or bs:
    print("bpftrace_futex %.2f" % (100.0 * bf / total))
    print("bpftrace_sleep %.2f" % (100.0 * bs / total))
EOF
cat "$TDIR/shares"
val() { awk -v k="$1" '$1 == k { print $2 }' "$TDIR/shares"; }
close() { python3 -c "import sys; sys.exit(0 if abs(float('$1') - float('$2')) <= 3 else 1)"; }
check "futex share within 3 points of the truth ($(val kprof_futex) vs $(val truth_futex))" \
	close "$(val kprof_futex)" "$(val truth_futex)"
check "nanosleep share within 3 points of the truth ($(val kprof_sleep) vs $(val truth_sleep))" \
	close "$(val kprof_sleep)" "$(val truth_sleep)"
check "the CPU profile still shows the burn loop ($(val cpu_burn_share)% of the worker's samples)" \
	python3 -c "import sys; sys.exit(0 if float('$(val cpu_burn_share)') >= 80 else 1)"
# bt_agrees WAIT K B T: bpftrace's share B is kprof's K within 3 points; when it is not, kprof
# must be the fixture's own T within 3 points, bpftrace on its other side or off it (a CI run:
# its nanosleep share 45.41 against kprof's 48.71 and the fixture's 48.85: it missed intervals),
# as vs_perf judges perf in the other off-CPU tests. Otherwise it fails.
bt_agrees() {
	if close "$2" "$3"; then
		pass "bpftrace agrees on the $1 share ($3, kprof $2)"
	elif close "$2" "$4" && close "$3" "$4"; then
		pass "bpftrace's $1 share $3 and kprof's $2 are both the fixture's own $4, on either side"
	elif close "$2" "$4"; then
		pass "bpftrace's $1 share $3 is off the fixture's own $4; kprof's $2 is on it"
	else
		fail "bpftrace agrees on the $1 share" "bpftrace $3, kprof $2, the fixture $4"
	fi
}
if [ -n "$(val bpftrace_futex)" ]; then
	bt_agrees futex "$(val kprof_futex)" "$(val bpftrace_futex)" "$(val truth_futex)"
	bt_agrees nanosleep "$(val kprof_sleep)" "$(val bpftrace_sleep)" "$(val truth_sleep)"
fi

# The views.
ctl report "$MIXP" --off-cpu --top 40 >"$TDIR/report" 2>&1
check "report --off-cpu names the waits in time units" \
	grep -qE '[0-9.]+ (s|ms) .*do_nanosleep' "$TDIR/report"
check "report --off-cpu shows the states" grep -q 'sleeping' "$TDIR/report"
ctl report "$MIXP" --wall --top 40 >"$TDIR/wall" 2>&1
check "report --wall has the CPU burn loop and the waits" \
	sh -c "grep -q ' burn ' '$TDIR/wall' && grep -q do_nanosleep '$TDIR/wall' && grep -q 'running' '$TDIR/wall'"
ctl folded "$MIXP" --off-cpu >"$TDIR/folded" 2>&1
check "folded --off-cpu: stacks under their state, waits at the leaf" \
	grep -qE '^\[sleeping\];.*;do_nanosleep [0-9]+$' "$TDIR/folded"
ctl folded "$MIXP" --wall >"$TDIR/wfolded" 2>&1
check "folded --wall: CPU stacks under [running]" grep -qE '^\[running\];.*burn' "$TDIR/wfolded"
check "hcct --off-cpu answers" sh -c "'$KPROFCTL' --socket '$SOCK' hcct '$MIXP' --off-cpu --json | grep -q nodes"
if ctl export "$MIXP" --off-cpu -o "$TDIR/p.pb.gz" && command -v go >/dev/null; then
	check "pprof: off_cpu and wall sample types" \
		sh -c "go tool pprof -raw '$TDIR/p.pb.gz' 2>/dev/null | grep -q 'off_cpu/nanoseconds.*wall/nanoseconds'"
	check "go tool pprof -sample_index=off_cpu shows the waits" \
		sh -c "go tool pprof -sample_index=off_cpu -top '$TDIR/p.pb.gz' 2>/dev/null | grep -q do_nanosleep"
	check "pprof: the CPU samples' source lines too (kprof-lines)" \
		sh -c "go tool pprof -raw '$TDIR/p.pb.gz' 2>/dev/null | grep -qE 'kprof lines: [1-9][0-9]* of' &&
			go tool pprof -sample_index=cpu -lines -top '$TDIR/p.pb.gz' 2>/dev/null | grep -q 'offcpu_mix.c:[0-9]'"
else
	skip "pprof sample types" "no export or no go"
fi

# No --off-cpu: refused; the program goes when no target asks.
check "status: no program once no target asks" test "$(status_key off_cpu_program)" = ""
start_mix
ctl attach "$MIXP" >/dev/null
check "report --off-cpu of a target without it is refused" \
	sh -c "! '$KPROFCTL' --socket '$SOCK' report '$MIXP' --off-cpu 2>&1 | grep -q SELF"
check "its error says how" sh -c "'$KPROFCTL' --socket '$SOCK' report '$MIXP' --off-cpu 2>&1 | grep -q 'attach with --off-cpu'"
kill "$MIXP"
stop_daemon

# raw_tp where tp_btf is not wanted (or not there).
KPROF_OFFCPU=raw_tp start_daemon || exit 1
start_mix
ctl attach "$MIXP" --off-cpu >/dev/null
check "status names the raw_tp program" test "$(status_key off_cpu_program)" = "raw_tp/sched_switch"
kill -USR1 "$MIXP"
check "raw_tp: off-CPU time comes" wait_for 30 sh -c "'$KPROFCTL' --socket '$SOCK' folded '$MIXP' --off-cpu | grep -q do_nanosleep"

# record --off-cpu: the command's waits in the file (sleep: do_nanosleep).
check "record --off-cpu writes the off-CPU stacks" \
	sh -c "'$KPROFCTL' --socket '$SOCK' record --off-cpu --format folded -o '$TDIR/rec.folded' -- sleep 0.3 2>/dev/null && grep -q 'do_nanosleep' '$TDIR/rec.folded'"
# A watch rule with offcpu=on attaches its matches with off-CPU time.
ctl watch add --comm offcpu_mix --off-cpu >/dev/null || fail "watch add --off-cpu" "refused"
start_mix
mix_offcpu() { [ "$(target_json "$MIXP" off_cpu 2>/dev/null)" = True ]; }
check "a watch rule's target records off-CPU time" wait_for 30 mix_offcpu
finish
