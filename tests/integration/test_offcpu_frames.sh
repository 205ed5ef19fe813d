#!/usr/bin/env bash
# Named wait frames where libc keeps no frame pointers (issue 33): a frame-pointer walk skips
# the caller of a leaf that keeps none (libc's syscall wrappers); kprofd finds those callers at
# the switch from the stack, with rules it makes from the files' .eh_frame (offcpu.bpf.c,
# ehframe.c), and says "[caller lost]" where one is still missing. The offcpu_mix fixture's
# worker waits in pthread_mutex_lock -> __lll_lock_wait (called from wait_lock) and nanosleep
# -> clock_nanosleep (from wait_sleep), while perf records the same run's switches with DWARF
# unwinding (perf record -e sched:sched_switch --call-graph dwarf), the side that unwinds by
# .eh_frame: kprof's heaviest futex and nanosleep stacks name the same user functions as
# perf's, leaf to worker; after the first 3 s (a range of time windows) at least 95% of each
# wait's time has its callers (the waits before the drains made the rules, one level a drain,
# say "[caller lost]", never a silent gap); status counts them. With task-regs turned off (KPROF_FEATURES_OFF, as on a kernel before 5.15) the waits
# say "[caller lost]" between the wrapper and worker. Needs root (BPF, perf) and python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "off-CPU frames" "needs root"; exit 0; fi
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
printf '[windows]\nseconds = 1\n' >"$TDIR/kprofd.conf"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }
status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# run_mix SECONDS [PERF]: the fixture attached with --off-cpu and run (perf recording it with
# DWARF unwinding when PERF is given); its export in $TDIR/off.json, the worker's tid in WT.
run_mix() {
	start_mix "$1" || { fail "fixture" "not ready"; return 1; }
	ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; return 1; }
	if [ -n "${2:-}" ]; then
		perf_start dw 'prev_comm == "kpoc-worker" || next_comm == "kpoc-worker"' dwarf,8192 ||
			{ fail "perf record" "$(head -c 300 "$TDIR/dw.log")"; return 1; }
	fi
	kill -USR1 "$MIXP"
	T0=$(date +%s)
	wait_for 10 mix_tid kpoc-worker
	WT=$(mix_tid kpoc-worker)
	wait_for 60 grep -q total "$MIX_OUT.out" || fail "fixture run" "no result"
	wait_for 20 state_is "$MIXP" exited
	[ -z "${2:-}" ] || perf_stop "$TDIR/perf.json" || fail "perf script" "$(head -c 300 "$TDIR/dw.log")"
	ctl export "$MIXP" --off-cpu --format json -o "$TDIR/off.json"
	# after the first seconds, when the rules of its waits are made
	[ -z "${2:-}" ] ||
		ctl export "$MIXP" --off-cpu --since "@$((T0 + 3))" --format json -o "$TDIR/late.json"
}

# frames.py KPROF.json TID [PERF.json]: per wait (futex, sleep) of thread TID, kprof's share of
# its time whose stack has the caller (wait_lock, wait_sleep), the share neither with it nor
# saying "[caller lost]", and the user frames, leaf first, of kprof's and perf's heaviest
# stack, names normalized (versions, __GI_ and leading underscores cut).
cat >"$TDIR/frames.py" <<'PY'
import json, re, sys
def norm(n):
    n = re.sub(r"@.*", "", n)
    n = re.sub(r"^__GI_", "", n)
    return n.lstrip("_")
def kind(fr):
    return "sleep" if any("do_nanosleep" in f for f in fr) else "futex" if any("futex" in f for f in fr) else None
CALLER = {"futex": "wait_lock", "sleep": "wait_sleep"}
d = json.load(open(sys.argv[1])); tid = int(sys.argv[2])
names = [f["name"] for f in d["functions"]]
mods = [f["module"] for f in d["functions"]]
tot, has, silent, best = {}, {}, {}, {}
for s in d["stacks"]:
    if s["tid"] != tid:
        continue
    fr = [names[i] for i in s["frames"]]
    k = kind(fr)
    if not k or fr[0] != "[sleeping]":
        continue
    tot[k] = tot.get(k, 0) + s["count"]
    if CALLER[k] in fr:
        has[k] = has.get(k, 0) + s["count"]
    elif "[caller lost]" not in fr:
        silent[k] = silent.get(k, 0) + s["count"]
    user = [norm(names[i]) for i in reversed(s["frames"]) if mods[i] != "[kernel.kallsyms]" and mods[i] != "[kprof]"]
    if s["count"] > best.get(k, (0, None))[0]:
        best[k] = (s["count"], user)
for k in ("futex", "sleep"):
    t = tot.get(k, 0) or 1
    print("%s_callers %.1f" % (k, 100.0 * has.get(k, 0) / t))
    print("%s_silent %.1f" % (k, 100.0 * silent.get(k, 0) / t))
    print("%s_kprof %s" % (k, ",".join(best.get(k, (0, []))[1][:4])))
if len(sys.argv) > 3:
    p = json.load(open(sys.argv[3])).get(str(tid), {"stacks": []})
    pb = {}
    for fr, ns in p["stacks"]:
        k = kind(fr)
        user = [norm(f) for f in fr if not f.startswith(("entry_SYSCALL", "do_syscall", "__x64_sys"))
                and f not in ("[unknown]",) and not re.match(r"^(__)?(schedule|traceiter)", f)]
        # the user part: from the first frame perf could not place in the kernel's stack
        kern = {"futex_do_wait", "futex_wait", "do_futex", "futex_wait_queue", "hrtimer_nanosleep",
                "do_nanosleep", "common_nsleep", "traceiter_sched_switch"}
        user = [f for f in user if f not in kern]
        if k and ns > pb.get(k, (0, None))[0]:
            pb[k] = (ns, user)
    for k in ("futex", "sleep"):
        print("%s_perf %s" % (k, ",".join(pb.get(k, (0, []))[1][:4])))
PY

run_mix 6 perf || exit 1
python3 "$TDIR/frames.py" "$TDIR/off.json" "$WT" "$TDIR/perf.json" >"$TDIR/res"
python3 "$TDIR/frames.py" "$TDIR/late.json" "$WT" | sed 's/^/late_/' >>"$TDIR/res"
cat "$TDIR/res"
val() { awk -v k="$1" '$1 == k { print $2 }' "$TDIR/res"; }
for k in futex sleep; do
	check "$k: kprof's heaviest stack names perf's user frames ($(val ${k}_kprof) vs $(val ${k}_perf))" \
		test "$(val ${k}_kprof)" = "$(val ${k}_perf)"
	check "$k: after the first 3 s, $(val late_${k}_callers)% of the wait's time has its caller (95% at least; $(val ${k}_callers)% of the whole run)" \
		python3 -c "import sys; sys.exit(0 if $(val late_${k}_callers) >= 95 else 1)"
	check "$k: no time without its caller that does not say [caller lost] ($(val ${k}_silent)%)" \
		test "$(val ${k}_silent)" = 0.0
done
check "status counts the sums with callers found" \
	python3 -c "import sys; sys.exit(0 if $(status_key off_cpu_callers_found) > 0 and $(status_key off_cpu_rules) > 0 else 1)"

# Without bpf_task_pt_regs: the truth said.
stop_daemon
KPROF_FEATURES_OFF=task-regs start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts without task-regs" "see log"; exit 1; }
check "status says task-regs is off" sh -c "'$KPROFCTL' --socket '$SOCK' status | grep -q 'task-regs  *off'"
run_mix 2 || exit 1
python3 "$TDIR/frames.py" "$TDIR/off.json" "$WT" >"$TDIR/res"
cat "$TDIR/res"
for k in futex sleep; do
	check "without task-regs, $k: no caller found, and none missing silently" \
		test "$(val ${k}_callers) $(val ${k}_silent)" = "0.0 0.0"
done
check "without task-regs: [caller lost] between the wrapper and worker" sh -c \
	"'$KPROFCTL' --socket '$SOCK' folded '$MIXP' --off-cpu | grep -q ';worker;\[caller lost\];clock_nanosleep'"
finish
