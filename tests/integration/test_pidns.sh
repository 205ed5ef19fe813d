#!/usr/bin/env bash
# kprofd inside a PID namespace (a container without the host's PID namespace): kprofd and its
# targets run in a new one (unshare --pid --fork --mount-proc), targets are attached by the pids
# of that namespace, and everything the BPF programs report comes in those pids
# (ARCHITECTURE.md §1.2.2): samples (JIT names), the thread scan and new threads, exit, exec,
# exact mode's call probes, per-CPU events; `list` shows the namespace's pids; a target in a nested namespace is
# named by its pid in kprofd's. The same in a time namespace (boot time offset), for samples. A kprofd in a PID namespace whose
# /proc is not that namespace's refuses to start, saying why. Needs root and Linux 6.13 or newer
# (bpf_task_from_vpid).
. "$(dirname "$0")/lib.sh"
FIX=tests/fixtures

if [ "${KPROF_PIDNS_INNER:-}" != 1 ]; then
	command -v unshare >/dev/null || { skip "PID namespace" "unshare (util-linux) not installed"; exit 0; }
	# kprofd in a new PID namespace but with the host's /proc: its pids would not be /proc's.
	out=$(timeout 20 unshare --pid --fork "$KPROFD" --socket "$TDIR/r.sock" --state-dir "" 2>&1)
	rc=$?
	if grep -q "bpf_task_from_vpid (Linux 6.13" <<<"$out"; then
		skip "kprofd in a PID namespace" "this kernel cannot give a PID namespace's pids to BPF: $(grep -m1 error <<<"$out")"
		exit 0
	fi
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "/proc is not mounted for it" <<<"$out"; then
		pass "in a PID namespace with the host's /proc, kprofd refuses to start, saying why"
	else fail "refusal with the host's /proc" "rc=$rc $(tail -3 <<<"$out")"; fi
	KPROF_PIDNS_INNER=1 BUILD=$BUILD timeout 120 unshare --pid --fork --mount-proc bash "$0" |
		tee "$TDIR/inner.out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL:' "$TDIR/inner.out"; then
		fail "the test inside the PID namespace" "exited with status $rc"
	fi
	grep -q '^FAIL:' "$TDIR/inner.out" && FAILS=$((FAILS + 1))
	# In a time namespace too, whose boot time offset shifts the start times /proc shows: the
	# samples part only.
	if unshare --time --boottime 100000 true 2>/dev/null; then
		KPROF_PIDNS_INNER=1 KPROF_PIDNS_QUICK=1 BUILD=$BUILD timeout 60 \
			unshare --pid --fork --mount-proc --time --boottime 100000 bash "$0" |
			sed 's/^\(PASS\|FAIL\): /\1: time namespace: /' | tee "$TDIR/time.out"
		grep -q '^FAIL:' "$TDIR/time.out" && FAILS=$((FAILS + 1))
		grep -q '^PASS: .*samples arrive' "$TDIR/time.out" || fail "time namespace" "no result"
	else skip "time namespace" "unshare --time does not work here"; fi
	finish
	exit
fi

# --- Inside the new PID namespace (this shell is its pid 1).
check "this runs in a PID namespace of its own" [ "$(stat -L -c %i /proc/self/ns/pid)" != 4026531836 ]
start_daemon || { fail "daemon starts" "$(cat "$TDIR/kprofd.log")"; exit 1; }
grep -q "PID namespace pid:\[[0-9]*\], level [1-9]" "$TDIR/kprofd.log" &&
	pass "kprofd says it works in its PID namespace" ||
	fail "namespace in the log" "$(head -5 "$TDIR/kprofd.log")"

# Samples of a JIT, attached by its pid in the namespace.
start_minijit --seconds 60 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
check "attach minijit by its namespace pid $P" ctl attach "$P" --freq 999
if wait_for 20 at_least_samples "$P" 1000; then pass "samples arrive ($(samples "$P") within 20 s)"
else fail "samples" "$(ctl list 2>&1)"; fi
if ctl report "$P" --top 0 --json | python3 -c "import json,sys
e = json.load(sys.stdin)['entries']
sys.exit(not any(x['function'] == 'mj_hot' and x['kind'] == 'jit' for x in e))"; then
	pass "JIT names from the perf map of the namespace pid (mj_hot)"
else fail "JIT names" "$(ctl report "$P" --top 5 2>&1)"; fi
if [ -n "${KPROF_PIDNS_QUICK:-}" ]; then
	finish
	exit
fi
pids=$(ctl list --json | python3 -c "import json,sys
print(' '.join(str(t['pid']) for t in json.load(sys.stdin)['targets']))")
[ "$pids" = "$P" ] && pass "list shows the namespace pid ($pids)" || fail "list pids" "'$pids', want '$P'"

# A target in a namespace below kprofd's: named by its pid in kprofd's namespace (its own is 1).
unshare --pid --fork "$MINIJIT" --seconds 60 2>"$TDIR/nested.err" &
PIDS+=($!)
wait_for 10 grep -q ready "$TDIR/nested.err"
N=$(pgrep -f -n "^$MINIJIT --seconds 60\$" | while read -r p; do
	[ "$(awk '$1 == "NStgid:" { print NF }' "/proc/$p/status")" = 3 ] && echo "$p"; done)
if [ -n "$N" ] && ctl attach "$N" --freq 999 >/dev/null && wait_for 20 at_least_samples "$N" 300 &&
	ctl report "$N" --top 0 --json | grep -q '"function":"mj_hot"'; then
	pass "a target in a nested PID namespace ($N here, 1 in its own) is sampled and named"
else fail "nested namespace" "pid '$N' $(ctl list 2>&1 | tail -2)"; fi
[ -n "$N" ] && kill "$N"

# Threads: the thread scan counts every thread by its namespace tid, and threads created later
# inherit their events.
"$BUILD/threadmill" -t 4 -b 300 2>"$TDIR/tm.err" &
TM=$!
PIDS+=("$TM")
wait_for 10 grep -q ready "$TDIR/tm.err" || fail "threadmill starts" "$(cat "$TDIR/tm.err")"
out=$(ctl attach "$TM" --freq 999 2>&1)
grep -q ", 5 thread events" <<<"$out" && ! grep -q "not sampled" <<<"$out" &&
	pass "the thread scan finds the 5 threads of a process in the namespace" ||
	fail "thread scan" "$out"
kill -USR1 "$TM"
late() { [ "$(ctl folded "$TM" | awk 'index($0, "late_grandchild") { s += $NF } END { print s + 0 }')" -ge 20 ]; }
if wait_for 20 late; then pass "threads created after the attach are sampled"
else fail "new threads sampled" "$(ctl folded "$TM" | tail -3)"; fi
kill "$TM"

# Exit: seen by the BPF exit hook, in the namespace's pid.
kill "$P"
if wait_for 10 state_is "$P" exited; then pass "the exit of the namespace pid $P is seen"
else fail "exit seen" "$(ctl list --all 2>&1)"; fi

# Exec: a shell that execs minijit, same pid.
sh "$FIX/exec_into.sh" "$TDIR/go" "$MINIJIT" --seconds 60 >/dev/null 2>"$TDIR/exec.err" &
X=$!
PIDS+=("$X")
wait_for 10 grep -q ready "$TDIR/exec.err"
ctl attach "$X" --freq 999 >/dev/null
touch "$TDIR/go"
if wait_for 15 grep -q "pid $X exec'd minijit" "$TDIR/kprofd.log"; then pass "the exec of namespace pid $X is seen"
else fail "exec seen" "$(grep "pid $X" "$TDIR/kprofd.log")"; fi
has_hot() { ctl report "$X" --top 0 --json | grep -q '"function":"mj_hot"'; }
wait_for 20 has_hot && pass "after the exec, the new program's JIT names (mj_hot)" ||
	fail "names after exec" "$(ctl report "$X" --top 5 2>&1)"
kill -9 "$X"

# Per-CPU events (sampling = cpus) fire for every process on the CPU, the host's too (which have
# no pid in this namespace, and are left out): a second kprofd samples minijit that way.
start_minijit --seconds 60 || { fail "minijit starts" ""; exit 1; }
Q=$MJ_PID
"$KPROFD" --socket "$TDIR/cpus.sock" --state-dir "" --sampling cpus >"$TDIR/cpus.log" 2>&1 &
PIDS+=($!)
cctl() { "$KPROFCTL" --socket "$TDIR/cpus.sock" "$@"; }
cpu_samples() { cctl list --json | python3 -c "import json, sys
sys.exit(not [t for t in json.load(sys.stdin)['targets'] if t['samples'] >= 300])"; }
if wait_for 20 cctl status && cctl attach "$Q" --freq 999 >/dev/null && wait_for 20 cpu_samples &&
	cctl report "$Q" --top 0 --json | grep -q '"function":"mj_hot"'; then
	pass "per-CPU sampling events in the namespace: samples and JIT names"
else fail "per-CPU sampling" "$(cctl list 2>&1 | tail -2) $(tail -2 "$TDIR/cpus.log")"; fi
kill "$Q"

# Exact mode: the call probes report the namespace's tgid; counts equal minijit's own.
start_minijit --wait-usr1 --rounds 20 --truth --cleanup || { fail "minijit starts" ""; exit 1; }
C=$MJ_PID
if ctl attach "$C" --calls >/dev/null 2>"$TDIR/calls.err"; then
	kill -USR1 "$C"
	wait "$C"
	wait_for 10 state_is "$C" exited
	ctl report "$C" --top 0 --json | python3 -c "import json,sys
truth = {l.split()[1]: int(l.split()[5]) for l in open('$MJ_OUT') if l.startswith('func ')}
calls = {e['function']: e['calls'] for e in json.load(sys.stdin)['entries'] if e['kind'] == 'jit'}
ok = truth and all(calls.get(f, 0) == n for f, n in truth.items())
print(('PASS' if ok else 'FAIL') + f': exact mode counts every call in the namespace: {calls} vs {truth}')"
else fail "attach --calls" "$(cat "$TDIR/calls.err")"; fi
finish
