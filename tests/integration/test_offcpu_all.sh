#!/usr/bin/env bash
# System-wide mode with off-CPU time, kprofctl attach --all --off-cpu (issue 33): every process
# that gets a sample, or that leaves a CPU while it is no target (offcpu.bpf.c reports it once,
# KP_SF_WAITER), becomes a target that records its off-CPU time. Checked at 1 Hz: a Python
# loop that sleeps 50 ms at a time (almost no CPU: the sampler would seldom see it) becomes a
# target by its waits, with its time in do_nanosleep; the offcpu_mix fixture started after the attach
# becomes a target before it is let run, and its worker's futex and nanosleep shares of its
# waits are kprof's within 3 points of perf's on the same run (perf record -e sched:sched_switch
# -g); status says the mode records off-CPU time and how many processes came by their waits;
# kernel threads and kprofd are no targets; detach --all detaches the sched_switch program.
# Needs root (BPF, perf) and python3.
# Alone: it profiles every process of the host (another runner's are in its counts).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "attach --all --off-cpu" "needs root"; exit 0; fi
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
printf '[limits]\nmax_kept = 256\n' >"$TDIR/kprofd.conf"
start_daemon -c "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }
status_key() { ctl status --json | python3 -c "import json,sys; d = json.load(sys.stdin); print(d$1)"; }
attached() { [ "$(target_json "$1" state 2>/dev/null)" = attached ]; }

# 1 Hz: a process that uses little CPU is seldom sampled; its waits make it a target.
check "attach --all --off-cpu is taken" ctl attach --all --off-cpu --freq 1
check "status: the mode records off-CPU time" test "$(status_key "['system_wide']['off_cpu']")" = True
check "status: the sched_switch program is attached" \
	test "$(status_key "['off_cpu_program']")" = "tp_btf/sched_switch"

# A process that sleeps 50 ms at a time, started after the attach.
python3 -c 'import time
while True: time.sleep(0.05)' &
PY=$!
PIDS+=("$PY")
check "the sleeper becomes a target" wait_for 20 attached "$PY"
check "... of system-wide mode, with off-CPU time" \
	test "$(target_json "$PY" all) $(target_json "$PY" off_cpu)" = "True True"
sleeper_waits() { ctl folded "$PY" --off-cpu 2>/dev/null | grep -q do_nanosleep; }
# Generous: on a sanitized build every process of a busy host becomes a target at once here.
if wait_for 90 sleeper_waits; then pass "its waits are in do_nanosleep"
else
	fail "its waits are in do_nanosleep" "folded --off-cpu: $(ctl folded "$PY" --off-cpu 2>&1 |
		sort -t' ' -k2 -nr | head -c 600); target: $(ctl list --all 2>&1 | grep -E "^ *$PY " | head -c 300); $(ctl status 2>&1 | head -c 600)"
fi
check "status counts the processes made targets by their waits" \
	python3 -c "import sys; sys.exit(0 if $(status_key "['system_wide']['waiters']") >= 1 else 1)"

# The fixture: a target (by its first wait) before it runs its threads; perf meanwhile.
start_mix 4 || { fail "fixture" "not ready"; exit 1; }
check "the fixture becomes a target before it runs" wait_for 20 attached "$MIXP"
F='prev_comm == "kpoc-worker" || next_comm == "kpoc-worker"'
perf_start sw "$F" || { fail "perf record" "$(head -c 300 "$TDIR/sw.log")"; exit 1; }
kill -USR1 "$MIXP"
wait_for 10 mix_tid kpoc-worker
WT=$(mix_tid kpoc-worker)
wait_for 60 grep -q total "$MIX_OUT.out" || fail "fixture run" "no result"
wait_for 20 state_is "$MIXP" exited
perf_stop "$TDIR/perf.json" || fail "perf script" "$(head -c 300 "$TDIR/sw.log")"
ctl export "$MIXP" --off-cpu --format json -o "$TDIR/off.json" || fail "export --off-cpu" "refused"
python3 "$(dirname "$0")/offcpu_check.py" export "$TDIR/off.json" "$WT" >"$TDIR/k"
python3 "$(dirname "$0")/offcpu_check.py" perf "$TDIR/perf.json" "$WT" >"$TDIR/p"
worker_vs_perf "the fixture" "$TDIR/k" "$TDIR/p"

# No kernel thread, no kprofd.
check "kprofd is no target" sh -c "! '$KPROFCTL' --socket '$SOCK' list --json | grep -q '\"pid\":$DAEMON_PID,'"
check "kthreadd (pid 2) is no target" sh -c "! '$KPROFCTL' --socket '$SOCK' list --json | grep -q '\"pid\":2,'"

check "detach --all" ctl detach --all
no_program() { [ "$(status_key "['off_cpu_program']")" = "" ]; }
check "the sched_switch program is detached" wait_for 10 no_program
finish
