# tests/integration/lib.sh: helpers shared by the integration tests (sourced, not run).
#
# Each test runs a real kprofd on a private socket in a fresh directory, real target processes
# and real kprofctl calls. Conditions are polled (wait_for), never slept on blindly. Results are
# "PASS: name" / "FAIL: name: why" lines, counted by tests/run.sh. Everything started is
# killed on exit.
set -u
# The system's tools first: a per-user shim in front of them (pyenv's python3 here costs 0.25 s a
# call against 0.02 s, and the tests call python3 hundreds of times) is not what a fresh machine
# has, nor what the clients that run as other users can read.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
BUILD=${BUILD:-build}
KPROFD=$BUILD/kprofd
KPROFCTL=$BUILD/kprofctl
MINIJIT=$BUILD/minijit
TDIR=$(mktemp -d /tmp/kprof-it.XXXXXX)
chmod 755 "$TDIR"
SOCK=$TDIR/kprofd.sock
PIDS=()
FAILS=0

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; rm -f "/tmp/perf-$p.map"; done
	[ -n "${DAEMON_PID:-}" ] && kill -TERM "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	rm -rf "$TDIR"
}
trap cleanup EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; FAILS=$((FAILS + 1)); }
skip() { echo "SKIP: $1: $2"; }
# check NAME CMD...: PASS if CMD succeeds, FAIL with its output otherwise.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -5 | tr '\n' ' ')"; fi
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds; 1 on timeout.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

ctl() { "$KPROFCTL" --socket "$SOCK" "$@"; }

# hw_breakpoints_fire: whether this host's hardware execute breakpoints count hits, by perf
# (not kprofd: the tests judge kprofd against it). Some hypervisors do not pass debug traps to
# their guests; there perf's mem:ADDR:x counts 0. Anything else perf says (not installed, not
# supported) counts as "they fire", so that the tests run and say what fails.
hw_breakpoints_fire() {
	if [ -z "${HW_FIRE:-}" ]; then
		local d a n
		d=$(mktemp -d)
		printf '%s\n' '__attribute__((noinline)) int f(int x) { return x + 1; }' \
			'int main(void) { volatile int s = 0; for (int i = 0; i < 1000; i++) s = f(s); return 0; }' >"$d/h.c"
		HW_FIRE=yes
		if cc -O1 -no-pie -o "$d/h" "$d/h.c" 2>/dev/null; then
			a=$(nm "$d/h" | awk '$3 == "f" { print $1 }')
			n=$(perf stat -x, -e "mem:0x$a:x" "$d/h" 2>&1 >/dev/null | awk -F, '/mem:/ { print $1 }')
			[ "$n" = 0 ] && HW_FIRE=no
		fi
		rm -rf "$d"
	fi
	[ "$HW_FIRE" = yes ]
}
HW_SILENT_WHY="hardware breakpoints do not fire on this host (perf's mem:ADDR:x counts 0 too)"

# stop_tool PID [SECS]: stop perf or bpftrace the way a user does (SIGINT: it writes its output),
# the signal again every 10 s (one that came while the tool set up its handler is lost: a
# background job starts with SIGINT ignored), SIGKILL after SECS (30). 0 if it ended on SIGINT.
stop_tool() {
	local pid=$1 deadline=$((SECONDS + ${2:-30})) next=0
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 1
		fi
		[ "$SECONDS" -ge "$next" ] && { kill -INT "$pid" 2>/dev/null; next=$((SECONDS + 10)); }
		sleep 0.2
	done
	wait "$pid" 2>/dev/null
	return 0
}

# our_links: BPF links (bpftool link) of this kprofd's programs; other kprofds may run too.
our_links() {
	local ids
	ids=$(cat /proc/"$DAEMON_PID"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' |
		sort -u | tr '\n' ' ')
	bpftool link show -j 2>/dev/null | python3 -c "import json,sys
ids = set(map(int, '$ids'.split()))
print(sum(1 for l in json.load(sys.stdin) if l.get('prog_id') in ids))"
}

# target_json PID KEY: KEY of the newest target of PID in list --all --json ("" if none).
target_json() {
	ctl list --all --json | python3 -c "import json,sys
t = [t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
print(max(t, key=lambda t: t['attached_at_ns'])['$2'] if t else '')"
}

# The suite's path traces compare exact counts with ground truth over whole runs: kprofd runs them
# without its default slowdown budget (--probe-slowdown 0) unless the test sets PROBE_SLOWDOWN
# (a percent, or "default": kprofd's own, which test_probe_cost.sh checks).
start_daemon() {
	local ps=(--probe-slowdown "${PROBE_SLOWDOWN:-0}")
	[ "${PROBE_SLOWDOWN:-0}" = default ] && ps=()
	"$KPROFD" --socket "$SOCK" --state-dir "$TDIR/state" "${ps[@]}" "$@" >>"$TDIR/kprofd.log" 2>&1 &
	DAEMON_PID=$!
	if ! wait_for 20 ctl status; then
		echo "kprofd did not come up:"; cat "$TDIR/kprofd.log"
		return 1
	fi
}

stop_daemon() {
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	local rc=$?
	DAEMON_PID=
	return $rc
}

# start_minijit ARGS...: run minijit in the background, wait until it reports ready; sets MJ_PID.
start_minijit() {
	local out=$TDIR/minijit.$RANDOM
	"$MINIJIT" "$@" >"$out.out" 2>"$out.err" &
	MJ_PID=$!
	MJ_OUT=$out.out
	PIDS+=("$MJ_PID")
	wait_for 10 grep -q ready "$out.err"
}

# samples PID: the target's sample count from `kprofctl list --json` (the attached session of
# PID, else its newest kept one: a PID may have several).
samples() {
	ctl list --all --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
t.sort(key=lambda t: (t['state'] == 'attached', t['ended_at_ns']))
if t: print(t[-1]['samples'])"
}

# at_least_samples PID N
at_least_samples() {
	local n
	n=$(samples "$1")
	[ -n "$n" ] && [ "$n" -ge "$2" ]
}

# target_state PID: attached / exited / detached (of the session samples() reads)
target_state() {
	ctl list --all --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
t.sort(key=lambda t: (t['state'] == 'attached', t['ended_at_ns']))
if t: print(t[-1]['state'])"
}

finish() {
	[ "$FAILS" -eq 0 ]
}

# cpu_ms PID: the CPU time PID has used so far, in milliseconds (utime + stime; comm may hold
# spaces, so the fields are counted from its closing parenthesis).
cpu_ms() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	set -- ${stat##*) }
	echo $(((${12} + ${13}) * 1000 / $(getconf CLK_TCK)))
}

# kernel_has FEATURE: the running kprofd found FEATURE on this kernel (kprofctl status, features).
kernel_has() {
	ctl status --json | python3 -c "import json,sys
f = [f for f in json.load(sys.stdin).get('features', []) if f['name'] == '$1']
sys.exit(0 if f and f[0]['on'] else 1)"
}

# need_feature FEATURE TEST: skip the rest of the test (exit 0) when this kernel lacks FEATURE,
# naming it and the Linux version that has it.
need_feature() {
	kernel_has "$1" && return 0
	skip "$2" "this kernel has no $1 (Linux $(ctl status --json | python3 -c "import json,sys
print(''.join(f['kernel'] for f in json.load(sys.stdin).get('features', []) if f['name'] == '$1') or '?')") or newer)"
	exit 0
}

# state_is PID STATE: for wait_for, which needs a command evaluated on every poll.
state_is() { [ "$(target_state "$1")" = "$2" ]; }
