#!/usr/bin/env bash
# The units: systemd-analyze verify clean; the service's exposure score; kprofd works with
# exactly the capability bounding set of kprofd.service (JIT, native and kernel symbols), and
# each capability in it is needed: without it something named fails; kernel names without
# CAP_SYSLOG when /proc/kallsyms, opened by a privileged parent, is kprofd's standard input (as
# the unit's StandardInput= has systemd do). The sandbox itself (ProtectKernelTunables=, the
# system call filters) is tested under a real systemd: test_systemd_nspawn.sh.
# Not sanitized: a matrix of capability sets, each a kprofd start (about 30 s); no new code paths.
. "$(dirname "$0")/lib.sh"
UNITS=$TDIR/units; mkdir -p "$UNITS"
sed "s|/usr/local/sbin/kprofd|$PWD/$KPROFD|" systemd/kprofd.service >"$UNITS/kprofd.service"
cp systemd/kprofd.socket "$UNITS/"
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify "$UNITS/kprofd.service" "$UNITS/kprofd.socket" 2>&1); rc=$?
	[ $rc -eq 0 ] && [ -z "$out" ] && pass "systemd-analyze verify: no warnings" || fail "verify" "$out"
	score=$(systemd-analyze security --offline=yes "$UNITS/kprofd.service" 2>/dev/null | sed -n 's/.*exposure level for kprofd.service: \([0-9.]*\).*/\1/p')
	if [ -n "$score" ] && python3 -c "import sys; sys.exit(not float('$score') <= 2.5)"; then
		pass "exposure score $score (at most 2.5)"
	else fail "exposure score" "'$score'"; fi
else
	skip "systemd-analyze" "not installed"
fi

CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' systemd/kprofd.service)
to_setpriv() { echo "-all$(for c in "$@"; do printf ',+%s' "$(echo "${c#CAP_}" | tr A-Z a-z)"; done)"; }
# run_with CAPS...: kprofd with that bounding set; two targets of another user: minijit (JIT and
# native frames) and dd copying /dev/zero byte by byte (kernel frames in nearly every sample).
# Prints the kinds of the named functions found in both reports (made-up names, "[libc.so.6]",
# code kept by address (kind unknown, "0x7f..."),
# "[unknown]", are not names).
run_with() {
	local bset sock=$TDIR/cap.sock kd mj dd out
	bset=$(to_setpriv "$@")
	rm -f "$sock"
	setpriv --bounding-set="$bset" --inh-caps=-all "$KPROFD" --socket "$sock" --state-dir "" \
		<"${KPROFD_STDIN:-/dev/null}" >"$TDIR/cap.log" 2>&1 &
	kd=$!
	if ! wait_for 10 "$KPROFCTL" --socket "$sock" status; then
		echo "start failed: $(grep error "$TDIR/cap.log" | head -1)"; kill $kd 2>/dev/null; wait $kd 2>/dev/null; return
	fi
	# umask 077: the perf map is mode 0600, as some JITs write it.
	(umask 077; exec setpriv --reuid=65534 --regid=65534 --clear-groups "$MINIJIT" --seconds 20) 2>"$TDIR/cap.mj" &
	mj=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups dd if=/dev/zero of=/dev/null bs=1 2>/dev/null &
	dd=$!
	wait_for 10 grep -q ready "$TDIR/cap.mj"
	# dd itself, not setpriv before its exec (still root's: its libc would be named).
	wait_for 10 grep -qx dd "/proc/$dd/comm"
	"$KPROFCTL" --socket "$sock" attach "$mj" --freq 999 >/dev/null
	"$KPROFCTL" --socket "$sock" attach "$dd" --freq 999 >/dev/null
	has() { "$KPROFCTL" --socket "$sock" list --json | python3 -c "import json, sys
t = json.load(sys.stdin)['targets']
sys.exit(not t or min(x['samples'] for x in t) < 500)"; }
	wait_for 20 has
	out=$( ("$KPROFCTL" --socket "$sock" report "$mj" --top 0 --json; "$KPROFCTL" --socket "$sock" report "$dd" --top 0 --json) |
		python3 -c "import json,sys
kinds = {}
for line in sys.stdin:
    for x in json.loads(line)['entries']:
        # [vdso] frames are named from kprofd's own vdso, not from a file of the target's.
        if not x['function'].startswith('[') and x['kind'] != 'unknown' and x['module'] != '[vdso]':
            kinds.setdefault(x['kind'], []).append(x['function'] + '@' + x['module'])
print(' '.join(sorted(kinds)))
print('; '.join('%s: %s' % (k, ', '.join(v[:4])) for k, v in sorted(kinds.items())), file=open('$TDIR/cap.names', 'w'))")
	kill -9 "$mj" "$dd"; wait "$mj" "$dd" 2>/dev/null; rm -f "/tmp/perf-$mj.map"
	kill "$kd"; wait "$kd" 2>/dev/null
	echo "$out"
}
# shellcheck disable=SC2086
got=$(run_with $CAPS)
[ "$got" = "jit kernel native" ] && pass "works with exactly the unit's capabilities ($CAPS): $got" ||
	fail "unit capabilities" "got '$got'"
for c in $CAPS; do
	# shellcheck disable=SC2086
	rest=$(for x in $CAPS; do [ "$x" = "$c" ] || echo "$x"; done)
	# shellcheck disable=SC2086
	got=$(run_with $rest)
	case $c in
	CAP_BPF | CAP_PERFMON) want="start failed" ;;
	# No /proc/PID/root of another user (its maps stay readable): no native symbols, and no
	# perf map (read only inside the target's own root, never from the host's /tmp by PID).
	CAP_SYS_PTRACE) want="kernel" ;;
	CAP_SYSLOG) want="jit native" ;;             # no kernel symbols
	CAP_DAC_READ_SEARCH) want="kernel native" ;; # the 0600 perf map of another user
	CAP_SETUID | CAP_SETGID) want="jit kernel native" ;; # JVMs only: test_jvm.sh (e)
	esac
	if [ "$got" = "$want" ] || { [ "$want" = "start failed" ] && [[ "$got" == "start failed"* ]]; }; then
		pass "without $c: $got"
	else fail "without $c" "got '$got', want '$want' (names: $(cat "$TDIR/cap.names" 2>/dev/null))"; fi
done
# /proc/kallsyms opened here, with CAP_SYSLOG, and given as standard input: the kernel shows the
# addresses by the opener's credentials, so kprofd without CAP_SYSLOG still names kernel code.
# shellcheck disable=SC2086
got=$(KPROFD_STDIN=/proc/kallsyms run_with $(for x in $CAPS; do [ "$x" = CAP_SYSLOG ] || echo "$x"; done))
[ "$got" = "jit kernel native" ] && pass "without CAP_SYSLOG, with /proc/kallsyms as standard input: $got" ||
	fail "kallsyms as standard input" "got '$got'"

# Exact mode needs CAP_SYS_ADMIN (uprobes through perf_event_open on /proc/PID/map_files), which
# the unit leaves out: with the unit's set it fails with a message naming the capability, with
# CAP_SYS_ADMIN added (the documented drop-in) it works.
calls_with() {
	local bset sock=$TDIR/cap2.sock kd mj out
	bset=$(to_setpriv "$@")
	rm -f "$sock"
	setpriv --bounding-set="$bset" --inh-caps=-all "$KPROFD" --socket "$sock" --state-dir "" \
		>"$TDIR/cap2.log" 2>&1 &
	kd=$!
	wait_for 10 "$KPROFCTL" --socket "$sock" status
	"$MINIJIT" --seconds 20 2>"$TDIR/cap2.mj" &
	mj=$!
	wait_for 10 grep -q ready "$TDIR/cap2.mj"
	out=$("$KPROFCTL" --socket "$sock" attach "$mj" --calls 2>&1 && echo ATTACHED)
	kill -9 "$mj"; wait "$mj" 2>/dev/null; rm -f "/tmp/perf-$mj.map"
	kill "$kd"; wait "$kd" 2>/dev/null
	echo "$out"
}
# shellcheck disable=SC2086
grep -q ATTACHED <<<"$(calls_with $CAPS CAP_SYS_ADMIN)" && pass "exact mode works with the unit's set plus CAP_SYS_ADMIN" ||
	fail "exact mode with CAP_SYS_ADMIN" "$(calls_with $CAPS CAP_SYS_ADMIN)"
# shellcheck disable=SC2086
out=$(calls_with $CAPS)
grep -q "needs CAP_SYS_ADMIN" <<<"$out" && pass "exact mode without CAP_SYS_ADMIN fails, naming it" ||
	fail "exact mode without CAP_SYS_ADMIN" "$out"
finish
