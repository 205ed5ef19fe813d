#!/usr/bin/env bash
# A JVM's and Node's waits in named frames (issue 33): their native code and libc keep no frame
# pointers (and reuse rbp), so a frame-pointer walk of a thread waiting in a JVM sleep or in
# Atomics.wait loses everything above libc; kprofd's off-CPU stacks follow the .eh_frame rules
# up the frameless frames, read rbp back and walk on from it (offcpu.bpf.c). Side by side with
# perf on the same run, unwinding by DWARF (perf record -e sched:sched_switch --call-graph
# dwarf): the heaviest stack of the waiting thread names the same native frames as perf's, from
# the leaf up (the JVM: __futex_abstimed_wait_common, pthread_cond_timedwait,
# os::PlatformEvent::park, JavaThread::sleep, JVM_Sleep; Node: libc's, then V8's
# ConditionVariable::WaitFor and FutexEmulation), and goes on into the interpreted or compiled
# code (HotSpot's Interpreter frames, V8's builtins). Needs root (BPF, perf), java and javac,
# node; each part skips without its runtime.
# Not sanitized: JVMs and Node take a while to start; the code is test_offcpu_frames'.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "runtimes' waits" "needs root"; exit 0; fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# chain.py KPROF.json PERF.json TID MARKER N: the first N native user frames, leaf first, of the
# heaviest stack of thread TID holding a frame named MARKER, kprof's and perf's, names
# normalized (parameter lists, a template's return type, symbol versions, __GI_ and leading
# underscores, glibc's 64 of its time64 aliases cut: kprof names an address by its symbol, perf
# by DWARF's name, pthread_cond_timedwait and __pthread_cond_timedwait64 at one address); and
# the frames kprof has past them (JIT or interpreted code).
cat >"$TDIR/chain.py" <<'PY'
import json, re, sys
def norm(n):
    n = re.sub(r"@.*", "", n)
    n = re.sub(r"\((?:[^()]|\([^()]*\))*\)( const)?( \[clone [^]]*\])?$", "", n).strip()
    n = re.sub(r"^[^<>]* (?=[^ ]+$)", "", n)  # "v8::internal::Object v8::...::WaitSync<int>"
    n = re.sub(r"^__GI_", "", n).lstrip("_")
    return re.sub(r"(?<=[a-z])64$", "", n)
k, p, tid, marker, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4], int(sys.argv[5])
names = [f["name"] for f in k["functions"]]; mods = [f["module"] for f in k["functions"]]
best = (0, [])
for s in k["stacks"]:
    fr = [(names[i], mods[i]) for i in reversed(s["frames"])]
    if s["tid"] != int(tid) or not any(marker in f for f, m in fr):
        continue
    user = [f for f, m in fr if m not in ("[kernel.kallsyms]", "[kprof]")]
    if s["count"] > best[0]:
        best = (s["count"], user)
kc = [norm(f) for f in best[1]]
pb = (0, [])
for fr, ns in p.get(tid, {"stacks": []})["stacks"]:
    if not any(marker in f for f in fr):
        continue
    i = max((j for j, f in enumerate(fr) if f.startswith("entry_SYSCALL")), default=-1)
    if ns > pb[0]:
        pb = (ns, fr[i + 1:])
pc = [norm(f) for f in pb[1]]
print("kprof " + ",".join(kc[:n]))
print("perf " + ",".join(pc[:n]))
print("beyond " + ",".join(kc[n:n + 6]))
PY
val() { awk -v k="$1" '$1 == k { print $2 }' "$TDIR/res"; }
# compare NAME: kprof's and perf's chains.
# When perf's record holds no such wait of the thread at all (perf's sched_switch record loses
# waits on a busy machine, see offcpu_lib.sh), there is nothing to compare with: said so.
compare() {
	cat "$TDIR/res"
	if [ -z "$(val kprof)" ]; then
		fail "$1: kprof recorded such a wait" "none in its export (perf: '$(val perf)')"
		return 1
	fi
	if [ -z "$(val perf)" ]; then
		skip "$1: kprof's native frames are perf's" "perf's record has no such wait of the thread (it lost them); kprof: $(val kprof)"
		return
	fi
	check "$1: kprof's native frames are perf's ($(val kprof))" test "$(val kprof)" = "$(val perf)"
}

if command -v java >/dev/null && command -v javac >/dev/null; then
	JCLS=$TDIR/jvm
	mkdir -p "$JCLS" && javac -d "$JCLS" "$ROOT/tests/fixtures/jvm/Waits.java" || fail "javac" ""
	java -XX:+PreserveFramePointer -cp "$JCLS" Waits 12 2>"$TDIR/j.err" >/dev/null &
	JP=$!
	PIDS+=("$JP")
	wait_for 30 grep -q ready "$TDIR/j.err" || fail "the JVM starts" "$(cat "$TDIR/j.err")"
	# the Java main thread: named "java", not the launcher's (the pid's own)
	JT=$(for d in /proc/"$JP"/task/*; do t=$(basename "$d");
		[ "$t" != "$JP" ] && [ "$(cat "$d/comm")" = java ] && echo "$t" && break; done)
	ctl attach "$JP" --off-cpu >/dev/null || fail "attach the JVM --off-cpu" "refused"
	sleep_waits() { ctl folded "$JP" --off-cpu 2>/dev/null | grep -q 'JVM_Sleep;'; }
	wait_for 20 sleep_waits # its rules made
	perf_start jdw "prev_pid == $JT || next_pid == $JT" dwarf,16384 ||
		fail "perf record" "$(head -c 300 "$TDIR/jdw.log")"
	sleep_for() { python3 -c "import time; time.sleep($1)"; }
	sleep_for 3
	perf_stop "$TDIR/jperf.json" || fail "perf script" "$(head -c 300 "$TDIR/jdw.log")"
	ctl export "$JP" --off-cpu --format json -o "$TDIR/j.json"
	python3 "$TDIR/chain.py" "$TDIR/j.json" "$TDIR/jperf.json" "$JT" JVM_Sleep 5 >"$TDIR/res"
	compare "the JVM's sleep"
	check "the JVM's sleep goes on into Java code ($(val beyond))" sh -c "echo '$(val beyond)' | grep -qE 'Interpreter|Waits'"
	python3 "$TDIR/chain.py" "$TDIR/j.json" "$TDIR/jperf.json" "$JT" JVM_MonitorWait 4 >"$TDIR/res"
	compare "the JVM's Object.wait"
	kill "$JP"
else
	skip "the JVM's waits" "no java or javac"
fi

if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$ROOT/tests/fixtures/waits.js" 120) 2>"$TDIR/n.err" >/dev/null &
	NP=$!
	PIDS+=("$NP")
	wait_for 15 grep -q ready "$TDIR/n.err" || fail "node starts" "$(cat "$TDIR/n.err")"
	ctl attach "$NP" --off-cpu >/dev/null || fail "attach node --off-cpu" "refused"
	futex_waits() { ctl folded "$NP" --off-cpu 2>/dev/null | grep -q 'FutexEmulation'; }
	wait_for 60 futex_waits || fail "kprof records Node's Atomics.wait" "no FutexEmulation stack in 60 s"
	perf_start ndw "prev_pid == $NP || next_pid == $NP" dwarf,16384 ||
		fail "perf record" "$(head -c 300 "$TDIR/ndw.log")"
	python3 -c "import time; time.sleep(3)"
	perf_stop "$TDIR/nperf.json" || fail "perf script" "$(head -c 300 "$TDIR/ndw.log")"
	ctl export "$NP" --off-cpu --format json -o "$TDIR/n.json"
	python3 "$TDIR/chain.py" "$TDIR/n.json" "$TDIR/nperf.json" "$NP" FutexEmulation 5 >"$TDIR/res"
	compare "Node's Atomics.wait" &&
		check "Node's wait goes on into V8's builtins ($(val beyond))" sh -c "echo '$(val beyond)' | grep -q 'Builtins'"
	kill "$NP"
else
	skip "Node's waits" "node is not installed"
fi
finish
