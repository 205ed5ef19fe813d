#!/usr/bin/env bash
# HotSpot JVMs write their perf maps when kprofd asks (jcmd Compiler.perfmap through the attach
# protocol, daemon/symbols/jvmattach.c), with nothing run by hand:
#  (a) a JVM started with no perf-map flag, attached by PID: its hot method is named within
#      seconds, and the attach file is gone again;
#  (b) the same run side by side with `perf record -g -p PID` + `jcmd PID Compiler.perfmap` +
#      `perf report`: the top Java methods agree within 2 points, and at least 99% of the samples
#      whose leaf is in the code cache are named;
#  (c) attach --no-jvm-map: the JVM is not asked (its attach listener never starts, no map), its
#      code stays unnamed, and a JVM without -XX:+PreserveFramePointer gets the hint (log, list);
#  (d) a fake "JVM" (maps a libjvm.so, catches SIGQUIT, never answers): kprofd goes on sampling
#      and answering status while the attempt times out, and says so once; detached during an
#      attempt, the helper stops and leaves nothing behind;
#  (e) a JVM of another user, kprofd with only the systemd unit's capabilities: asked as that
#      user (root could not even connect to its 0600 socket without CAP_DAC_OVERRIDE);
#  (f) a JVM in its own PID and mount namespaces with a private /tmp (pid 1 inside);
#  (g) a method compiled after the map was written: the JVM is asked again, the method named.
# Needs root, java and javac (make deps: openjdk-17-jdk-headless) and perf for (b).
# Not sanitized: JVMs take a minute; the attach protocol's parser is fuzzed (fuzz_hsattach).
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
	skip "JVM perf maps" "no java or javac (make deps installs openjdk-17-jdk-headless)"
	exit 0
fi
# The fixture, compiled into the build directory when the source is newer.
JCLS=$(realpath -m "$BUILD/jvm")
if [ ! -f "$JCLS/Hot.class" ] || [ "$ROOT/tests/fixtures/jvm/Hot.java" -nt "$JCLS/Hot.class" ]; then
	mkdir -p "$JCLS" && javac -d "$JCLS" "$ROOT/tests/fixtures/jvm/Hot.java" ||
		{ fail "javac Hot.java" "see above"; exit 1; }
fi
chmod -R a+rX "$JCLS"
JVMS=()
# A JVM leaves its socket, perf map and hsperfdata behind when killed: stop it, then remove them.
jvm_cleanup() {
	local p
	for p in "${JVMS[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait_for 3 eval "! kill -0 $p" || kill -9 "$p" 2>/dev/null
		rm -f "/tmp/.java_pid$p" "/tmp/.attach_pid$p" "/tmp/perf-$p.map" /tmp/hsperfdata_*/"$p"
	done
}
trap 'jvm_cleanup; cleanup' EXIT
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# start_jvm DIR ARGS...: `java ARGS -cp JCLS Hot 300` with DIR as its cwd, in the background, until
# it says ready; sets JV_PID.
start_jvm() {
	local dir=$1
	shift
	mkdir -p "$dir"
	(cd "$dir" && exec java "$@" -cp "$JCLS" Hot 300 >"$dir/out" 2>"$dir/err") &
	JV_PID=$!
	PIDS+=("$JV_PID")
	JVMS+=("$JV_PID")
	wait_for 60 grep -q ready "$dir/err"
}
# report_json PID: the whole flat profile.
report_json() { ctl report "$1" --top 0 --json; }
# jit_top PID: the hottest JIT function ("" if none).
jit_top() {
	report_json "$1" | python3 -c "import json,sys
j=[e['function'] for e in json.load(sys.stdin)['entries'] if e['kind']=='jit']
print(j[0] if j else '')"
}
top_has() { [[ "$(jit_top "$1")" == *"$2"* ]]; }
# target_field PID FIELD: a field of the attached target in `list --json`.
target_field() {
	ctl list --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
print(t[0]['$2'] if t else '')"
}
now() { date +%s.%N; }
log_count() { grep -c -- "$1" "$TDIR/kprofd.log"; }

# (a) No perf-map flag at all: the JVM is asked at attach and its hot method is named.
if start_jvm "$TDIR/a" -XX:+PreserveFramePointer; then
	P=$JV_PID
	t0=$(now)
	out=$(ctl attach "$P" --freq 999 2>&1) || fail "(a) attach the JVM" "$out"
	if wait_for 20 top_has "$P" 'Hot$Alpha.run'; then
		el=$(python3 -c "print(f'{$(now) - $t0:.2f}')")
		pass "(a) a JVM started with no perf-map flag, attached by PID: its hot method \
'$(jit_top "$P")' named $el s after the attach, nothing run by hand"
	else
		fail "(a) JVM hot method named" "top '$(jit_top "$P")'; $(grep "pid $P" "$TDIR/kprofd.log")"
	fi
	grep -q "pid $P: the JVM wrote its perf map on request" "$TDIR/kprofd.log" &&
		[ "$(target_field "$P" jvm_map_answers)" -ge 1 ] &&
		pass "(a) kprofd says the JVM wrote its map on request, and counts it" ||
		fail "(a) log and counts" "$(grep "pid $P" "$TDIR/kprofd.log"; ctl list)"
	if [ ! -e "$TDIR/a/.attach_pid$P" ] && [ ! -e "/tmp/.attach_pid$P" ] && [ -S "/tmp/.java_pid$P" ] &&
		! grep -q "Full thread dump" "$TDIR/a/out"; then
		pass "(a) the attach file is removed again, the listener's socket is there, no thread dump"
	else fail "(a) attach file" "$(ls -la "$TDIR/a" /tmp/.attach_pid$P /tmp/.java_pid$P 2>&1)"; fi
	grep -q "Java stacks will be short" <<<"$out$(target_field "$P" jvm_note)" &&
		fail "(a) no frame-pointer hint for a JVM with -XX:+PreserveFramePointer" "$out" ||
		pass "(a) no frame-pointer hint for a JVM with -XX:+PreserveFramePointer"

	# (b) Side by side with perf on the same run, over the same window.
	if command -v perf >/dev/null && command -v jcmd >/dev/null; then
		report_json "$P" >"$TDIR/k0.json"
		perf record -F 999 -g -p "$P" -o "$TDIR/perf.data" -- sleep 10 >"$TDIR/perf.out" 2>&1
		report_json "$P" >"$TDIR/k1.json"
		jcmd "$P" Compiler.perfmap >"$TDIR/jcmd.out" 2>&1 # the perf recipe
		perf report -i "$TDIR/perf.data" --no-children --sort sym --stdio -q -g none \
			>"$TDIR/perf.txt" 2>"$TDIR/perf.err"
		# Self shares over the window: kprof's from the difference of two reports, perf's
		# from its report. The code cache is the JVM's anonymous code: named (kind jit) or
		# "[anon]".
		res=$(python3 - "$TDIR/k0.json" "$TDIR/k1.json" "$TDIR/perf.txt" <<'EOF'
import json, re, sys
def load(p):
    r = json.load(open(p))
    return r['total_samples'], {(e['function'], e['module'], e['kind']): e['self'] for e in r['entries']}
n0, a = load(sys.argv[1]); n1, b = load(sys.argv[2])
n = n1 - n0
delta = {k: v - a.get(k, 0) for k, v in b.items()}
kprof = {}
for (f, m, kind), v in delta.items():
    if kind == 'jit':
        kprof[f] = kprof.get(f, 0) + 100.0 * v / n
named = sum(v for (f, m, kind), v in delta.items() if kind == 'jit')
unnamed = sum(v for (f, m, kind), v in delta.items() if m == '[anon]')
named_all = sum(v for (f, m, kind), v in b.items() if kind == 'jit')
unnamed_all = sum(v for (f, m, kind), v in b.items() if m == '[anon]')
perf = {}
for line in open(sys.argv[3]):
    m = re.match(r'\s*([0-9.]+)%\s+\[\.\]\s+(.*\S)\s*$', line)
    if m:
        perf[m.group(2)] = perf.get(m.group(2), 0) + float(m.group(1))
top = sorted(perf, key=perf.get, reverse=True)[:3]
# The gap allowed: two independent samplings (binomial error of each share, 4 sigma) plus
# 1.5 points for the windows (kprof's brackets perf's, perf's start and exit included).
nperf = 0
for line in open(sys.argv[3].replace('perf.txt', 'perf.out')):
    m = re.search(r'\(([0-9]+) samples\)', line)
    if m:
        nperf = int(m.group(1))
nperf = nperf or n
def tol(f):
    p = perf[f] / 100.0
    return 1.5 + 400.0 * (p * (1 - p) * (1.0 / max(n, 1) + 1.0 / max(nperf, 1))) ** 0.5
worst = max(abs(perf[f] - kprof.get(f, 0)) - tol(f) for f in top) if top else 99
print(f"{worst:.2f}", f"{100.0 * named / max(named + unnamed, 1):.2f}",
      f"{100.0 * named_all / max(named_all + unnamed_all, 1):.2f}", n,
      "; ".join(f"{f}: kprof {kprof.get(f, 0):.2f}% perf {perf[f]:.2f}%" for f in top))
EOF
)
		read -r worst share share_all nk rest <<<"$res"
		if [ -n "$worst" ] && python3 -c "import sys; sys.exit(not ($worst <= 0))"; then
			pass "(b) top Java methods vs perf record -g + jcmd Compiler.perfmap + perf report, \
10 s at 999 Hz ($nk kprof samples): $rest (every gap within its tolerance, by $worst points)"
		else fail "(b) kprof vs perf" "gap over tolerance by $worst points: $rest; $(head -5 "$TDIR/perf.txt")"; fi
		if python3 -c "import sys; sys.exit(not ($share >= 99.0))"; then
			pass "(b) $share% of the samples whose leaf is in the code cache are named over \
that window ($share_all% since the attach, the samples before the map was written included)"
		else fail "(b) code-cache samples named" "$share% (since attach $share_all%)"; fi
	else
		skip "(b) kprof vs perf" "no perf or jcmd"
	fi
	ctl detach "$P" >/dev/null
else
	fail "(a) the JVM starts" "$(cat "$TDIR/a/err")"
fi

# (g) Code compiled after the map was written: its samples land in unnamed code, so the JVM is
#     asked again (at most every 10 s) and the new method is named.
mkdir -p "$TDIR/g"
(cd "$TDIR/g" && exec java -XX:+PreserveFramePointer -cp "$JCLS" Hot 300 4 >"$TDIR/g/out" 2>"$TDIR/g/err") &
P=$!
PIDS+=("$P")
JVMS+=("$P")
if wait_for 60 grep -q ready "$TDIR/g/err"; then
	ctl attach "$P" --freq 499 >/dev/null
	wait_for 20 top_has "$P" 'Hot$Alpha.run'
	asks0=$(target_field "$P" jvm_map_asks)
	wait_for 20 grep -q delta "$TDIR/g/err"
	t0=$(now)
	delta_named() { report_json "$P" | grep -q 'Hot$Delta.run'; }
	if wait_for 40 delta_named; then
		el=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
		pass "(g) a method compiled after the map was written (Delta.run) is named $el s after \
it starts: the JVM asked again while its samples were unnamed ($asks0 -> $(target_field "$P" jvm_map_asks) asks)"
	else fail "(g) asked again" "asks $(target_field "$P" jvm_map_asks); $(ctl report "$P" --top 6)"; fi
	ctl detach "$P" >/dev/null
else
	fail "(g) the JVM starts" "$(cat "$TDIR/g/err")"
fi

# (c) --no-jvm-map: not asked. A JVM without -XX:+PreserveFramePointer gets the hint.
if start_jvm "$TDIR/c"; then
	P=$JV_PID
	out=$(ctl attach "$P" --freq 999 --no-jvm-map 2>&1) || fail "(c) attach --no-jvm-map" "$out"
	grep -q "HotSpot JVM: .*not asked for its perf map (--no-jvm-map)" <<<"$out" &&
		pass "(c) the attach reply says the JVM is not asked: ${out#*; }" ||
		fail "(c) attach reply" "$out"
	# Its command line is read off the loop (its pages are the target's): the hint comes soon.
	note_short() { [[ "$(target_field "$P" jvm_note)" == *"Java stacks will be short"* ]]; }
	if wait_for 10 grep -q "pid $P: the JVM runs without -XX:+PreserveFramePointer" "$TDIR/kprofd.log" &&
		wait_for 5 note_short; then
		pass "(c) a JVM without -XX:+PreserveFramePointer gets the hint, in the log and in list: \
$(target_field "$P" jvm_note)"
	else fail "(c) frame-pointer hint" "$(target_field "$P" jvm_note); $(grep "pid $P" "$TDIR/kprofd.log")"; fi
	wait_for 20 at_least_samples "$P" 4000
	res=$(report_json "$P" | python3 -c "import json,sys
r=json.load(sys.stdin)
jit=sum(e['self'] for e in r['entries'] if e['kind']=='jit')
anon=sum(e['self'] for e in r['entries'] if e['module']=='[anon]')
print(jit, anon, r['total_samples'])")
	read -r jit anon total <<<"$res"
	if [ ! -e "/tmp/.java_pid$P" ] && [ ! -e "$TDIR/c/.attach_pid$P" ] && [ ! -e "/tmp/.attach_pid$P" ] &&
		[ ! -e "/tmp/perf-$P.map" ] && [ "$jit" = 0 ] && [ "$anon" -gt $((total / 2)) ] &&
		[ "$(target_field "$P" jvm_map_asks)" = 0 ]; then
		pass "(c) --no-jvm-map: not asked (no attach file, no listener socket, no map), its code \
stays unnamed ($anon of $total samples in [anon])"
	else fail "(c) --no-jvm-map" "jit $jit anon $anon of $total; $(ls -la /tmp/.java_pid$P /tmp/perf-$P.map 2>&1); $(ctl list)"; fi
	ctl detach "$P" >/dev/null
else
	fail "(c) the JVM starts" "$(cat "$TDIR/c/err")"
fi

# (d) A "JVM" that never answers: the loop goes on while the attempt times out, said once.
mkdir -p "$TDIR/d"
head -c 65536 /dev/urandom >"$TDIR/d/libjvm.so"
(cd "$TDIR/d" && exec python3 "$ROOT/tests/fixtures/jvm/fakejvm.py" "$TDIR/d/libjvm.so" 60 \
	>"$TDIR/d/out" 2>"$TDIR/d/err") &
P=$!
PIDS+=("$P")
if wait_for 10 grep -q ready "$TDIR/d/err"; then
	t0=$(now)
	out=$(ctl attach "$P" --freq 499 2>&1) || fail "(d) attach the fake JVM" "$out"
	t1=$(now)
	# While the attempt runs (3 s for the socket that never comes): status every 50 ms.
	slow=$(python3 - "$KPROFCTL" "$SOCK" <<'EOF'
import subprocess, sys, time
worst, n, end = 0.0, 0, time.monotonic() + 4.0
while time.monotonic() < end:
    t = time.monotonic()
    subprocess.run([sys.argv[1], "--socket", sys.argv[2], "status"], check=True, capture_output=True)
    worst, n = max(worst, time.monotonic() - t), n + 1
    time.sleep(0.05)
print(f"{worst * 1000:.0f} {n}")
EOF
)
	read -r worst_ms nstatus <<<"$slow"
	s1=$(samples "$P")
	wait_for 10 grep -q "pid $P: the JVM did not give its perf map" "$TDIR/kprofd.log"
	sleep 2
	s2=$(samples "$P")
	msg=$(grep "pid $P: the JVM did not give its perf map" "$TDIR/kprofd.log")
	if [ "$(log_count "pid $P: the JVM did not give its perf map")" = 1 ] && [ "${s2:-0}" -gt "${s1:-0}" ] &&
		[ "${worst_ms:-9999}" -lt 500 ] && [ "$(target_field "$P" jvm_map_failures)" = 1 ] &&
		[ "$(grep -c SIGQUIT "$TDIR/d/out")" = 1 ] && [ ! -e "$TDIR/d/.attach_pid$P" ]; then
		ams=$(python3 -c "print(f'{($t1 - $t0) * 1000:.0f}')")
		pass "(d) a fake JVM that never answers: attach took $ams ms, $nstatus status calls \
meanwhile (slowest $worst_ms ms), sampling went on ($s1 -> $s2 samples), said once: \
$(sed 's/^.*\] [a-z]*: //' <<<"$msg")"
	else
		fail "(d) fake JVM" "worst status ${worst_ms} ms, samples $s1 -> $s2, failures $(target_field "$P" jvm_map_failures), $(grep -c SIGQUIT "$TDIR/d/out") SIGQUIT; $(grep "pid $P" "$TDIR/kprofd.log")"
	fi
	# Detached while an attempt runs: the helper stops, removes its attach file, is reaped.
	ctl detach "$P" >/dev/null
	ctl attach "$P" --freq 499 >/dev/null
	sleep 0.5
	helpers=$(ps --ppid "$DAEMON_PID" -o pid= | wc -l)
	ctl detach "$P" >/dev/null
	no_helper() { [ "$(ps --ppid "$DAEMON_PID" -o pid= | wc -l)" = 0 ]; }
	if [ "$helpers" = 1 ] && wait_for 5 no_helper && [ ! -e "$TDIR/d/.attach_pid$P" ] &&
		ctl status >/dev/null; then
		pass "(d) detached during an attempt: its helper stopped, was reaped and left no attach file"
	else fail "(d) detach during an attempt" "helpers $helpers, now $(ps --ppid "$DAEMON_PID" -o pid=,stat=); $(ls -la "$TDIR/d")"; fi
	kill -9 "$P"
	wait "$P" 2>/dev/null
else
	fail "(d) the fake JVM starts" "$(cat "$TDIR/d/err")"
fi

# (e) A JVM of another user; kprofd with exactly the systemd unit's capabilities.
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/systemd/kprofd.service")
bset="-all$(for c in $CAPS; do printf ',+%s' "$(echo "${c#CAP_}" | tr A-Z a-z)"; done)"
mkdir -p "$TDIR/e" && chmod 755 "$TDIR/e" # its cwd: not writable by it, the attach file goes to /tmp
(cd "$TDIR/e" && exec setpriv --reuid 12345 --regid 12345 --clear-groups \
	java -XX:+PreserveFramePointer -cp "$JCLS" Hot 300 >"$TDIR/e/out" 2>"$TDIR/e/err") &
P=$!
PIDS+=("$P")
JVMS+=("$P")
if wait_for 60 grep -q ready "$TDIR/e/err"; then
	ESOCK=$TDIR/e.sock
	setpriv --bounding-set="$bset" --inh-caps=-all "$KPROFD" --socket "$ESOCK" --state-dir "" \
		>"$TDIR/e.log" 2>&1 &
	EK=$!
	if wait_for 10 "$KPROFCTL" --socket "$ESOCK" status; then
		"$KPROFCTL" --socket "$ESOCK" attach "$P" --freq 499 >/dev/null
		etop() {
			"$KPROFCTL" --socket "$ESOCK" report "$P" --top 0 --json | python3 -c "import json,sys
j=[e['function'] for e in json.load(sys.stdin)['entries'] if e['kind']=='jit']
print(j[0] if j else '')"
		}
		etop_has() { [[ "$(etop)" == *'Hot$Alpha.run'* ]]; }
		if wait_for 20 etop_has && [ "$(stat -c %u "/tmp/perf-$P.map")" = 12345 ]; then
			pass "(e) a JVM of uid 12345 asked as its user by kprofd with the unit's \
capabilities ($CAPS): '$(etop)' named"
		else fail "(e) JVM of another user" "top '$(etop)'; $(cat "$TDIR/e.log")"; fi
	else
		fail "(e) kprofd with the unit's capabilities starts" "$(cat "$TDIR/e.log")"
	fi
	kill "$EK"
	wait "$EK" 2>/dev/null
else
	fail "(e) the JVM of uid 12345 starts" "$(cat "$TDIR/e/err")"
fi

# (f) A JVM in its own PID and mount namespaces with a private /tmp: /tmp/.java_pid1 and
#     /tmp/perf-1.map exist only inside its root.
if unshare --mount --pid --fork --mount-proc true 2>/dev/null; then
	mkdir -p "$TDIR/f"
	# The classes may live under /tmp (a clone in /tmp), which the new tmpfs hides: keep their
	# directory open on fd 3 and load them from there.
	unshare --mount --pid --fork --mount-proc sh -c \
		"mount -t tmpfs none /tmp && cd / && exec java -XX:+PreserveFramePointer -cp /proc/self/fd/3 Hot 300" \
		3<"$JCLS" >"$TDIR/f/out" 2>"$TDIR/f/err" &
	U=$!
	PIDS+=("$U")
	if wait_for 60 grep -q ready "$TDIR/f/err" && NP=$(pgrep -P "$U") && [ -n "$NP" ] &&
		grep -q "NStgid:.*[[:space:]]1$" "/proc/$NP/status"; then
		PIDS+=("$NP")
		ctl attach "$NP" --freq 499 >/dev/null
		if wait_for 20 top_has "$NP" 'Hot$Alpha.run' && [ ! -e "/tmp/.java_pid1" ] &&
			[ -S "/proc/$NP/root/tmp/.java_pid1" ]; then
			pass "(f) a JVM in its own PID and mount namespaces (host pid $NP, 1 inside): \
asked inside its root, '$(jit_top "$NP")' named"
		else fail "(f) namespaced JVM" "top '$(jit_top "$NP")'; $(grep "pid $NP" "$TDIR/kprofd.log")"; fi
		kill -9 "$NP"
	else
		fail "(f) the namespaced JVM starts" "pid '${NP:-}' $(cat "$TDIR/f/err")"
	fi
	kill -9 "$U" 2>/dev/null
	wait "$U" 2>/dev/null
else
	skip "(f) namespaced JVM" "unshare --pid --mount not permitted here"
fi
finish
