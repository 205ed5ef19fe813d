#!/usr/bin/env bash
# Security, second round (issue 25), items 1, 2 and 10, played by nobody (uid 65534) against a
# kprofd started as systemd starts it (docs/RELIABILITY.md, second round):
#   2a. nobody's process that made itself non-dumpable (prctl(PR_SET_DUMPABLE, 0)): attach
#       refused (the kernel refuses nobody its /proc/PID/mem);
#   2b. nobody's attached process makes itself non-dumpable: the target is ended;
#   2c. an execute-only (0711) root binary run by nobody, 2d. nobody's attached process execs
#       it: kprofd decides as the kernel does (refused and ended, no names of it, when the
#       kernel refuses nobody its /proc/PID/mem; Linux 6.18 lets nobody read it);
#   1.  nobody's process samples unnamed code on an anonymous page at the address where a
#       non-PIE setuid-root (4711) program keeps a page of secret data, then execs it: the
#       samples are drained after the exec, and no byte of the secret reaches nobody's
#       `annotate` (nor is read when annotate compares with the code "now"), and no name
#       from the setuid program's maps reaches nobody's profile;
#   10. nobody's kprofctl inside its own user and PID namespace (unshare -Urpf) names its
#       process by the PID it sees: kprofd attaches that process (the PID translated), and a
#       PID no process of that namespace has is refused, saying so.
# Needs root, setpriv, setsid, unshare, cc, nm, python3. About 40 s (60 s sanitized).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
for tool in setpriv setsid unshare cc nm; do
	command -v "$tool" >/dev/null || { skip "security 2" "$tool is not installed"; exit 0; }
done
build busy && build anonexec || { fail "build helpers" "cc failed"; exit 1; }
# Root's programs, in a directory on a filesystem that honours setuid bits.
R=$TDIR/root
mkdir -p "$R" && chmod 755 "$R"
cc -O0 -no-pie -o "$R/secret" "$HFIX/secret.c" || { fail "build secret.c" "cc -no-pie failed"; exit 1; }
cp "$BIN/busy" "$R/busy_xo"
chown 0:0 "$R/secret" "$R/busy_xo"
chmod 4711 "$R/secret"
chmod 0711 "$R/busy_xo"
if findmnt -no OPTIONS -T "$R" | grep -qw nosuid; then
	skip "security 2" "$R is on a nosuid filesystem"
	exit 0
fi
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
# nreport PID: nobody's folded report of PID (every name it was given).
nreport() { nctl folded "$1" 2>&1; }

# kernel_lets_nobody PID: whether the kernel lets nobody open /proc/PID/mem (its ptrace rule).
kernel_lets_nobody() { "${AS_NOBODY[@]}" sh -c "exec 3</proc/$1/mem" 2>/dev/null; }
# refused OUT: a refusal that says why.
refused() { grep -qiE "permission denied|dumpable|root may" <<<"$1"; }
not_attached() { [ "$(tfield "$1" state)" != attached ]; }

# --- 2a. A process that made itself non-dumpable.
echo "-- 2a. (at ${SECONDS} s)"
"${AS_NOBODY[@]}" "$BIN/anonexec" --nodump 2>"$TDIR/nd.err" &
ND=$!
PIDS+=("$ND")
if wait_for 10 grep -q "not dumpable" "$TDIR/nd.err"; then
	out=$(nctl attach "$ND" 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && refused "$out"; then
		pass "nobody may not attach its process that made itself non-dumpable: $out"
	else fail "attach a non-dumpable process" "rc=$rc: $out"; fi
else fail "non-dumpable process starts" "$(cat "$TDIR/nd.err")"; fi
kill -9 "$ND" 2>/dev/null

# --- 2b. An attached process of nobody makes itself non-dumpable.
echo "-- 2b. (at ${SECONDS} s)"
"${AS_NOBODY[@]}" "$BIN/anonexec" --nodump "$TDIR/go2b" 2>"$TDIR/nd2.err" &
N2=$!
PIDS+=("$N2")
if wait_for 10 has_ready "$TDIR/nd2.err" && nctl attach "$N2" --freq 999 >/dev/null &&
	wait_for 20 tfield_ge "$N2" samples 20; then
	touch "$TDIR/go2b"
	wait_for 10 grep -q "not dumpable" "$TDIR/nd2.err"
	if wait_for 5 not_attached "$N2"; then
		pass "nobody's target that made itself non-dumpable is ended ($(tfield "$N2" state))"
	else fail "target ended when it becomes non-dumpable" "still $(tfield "$N2" state)"; fi
else fail "attach the process before prctl" "$(cat "$TDIR/nd2.err")"; fi
kill -9 "$N2" 2>/dev/null

# --- 2c. An execute-only root binary run by nobody: kprofd decides as the kernel does.
echo "-- 2c. (at ${SECONDS} s)"
"${AS_NOBODY[@]}" "$R/busy_xo" 2>"$TDIR/xo.err" &
XO=$!
PIDS+=("$XO")
if wait_for 10 has_ready "$TDIR/xo.err"; then
	out=$(nctl attach "$XO" 2>&1)
	rc=$?
	if kernel_lets_nobody "$XO"; then
		if [ "$rc" = 0 ]; then pass "an execute-only binary nobody runs: the kernel lets nobody read its memory, kprofd lets it attach"
		else fail "attach an execute-only binary the kernel lets nobody read" "rc=$rc: $out"; fi
	elif [ "$rc" != 0 ] && refused "$out"; then
		pass "nobody may not attach an execute-only (0711) root binary it runs: $out"
	else fail "attach an execute-only binary" "rc=$rc: $out"; fi
else fail "execute-only binary starts" "$(cat "$TDIR/xo.err")"; fi
kill -9 "$XO" 2>/dev/null

# --- 2d. nobody's attached process execs the execute-only binary.
echo "-- 2d. (at ${SECONDS} s)"
"${AS_NOBODY[@]}" sh "$FIX/exec_into.sh" "$TDIR/go2d" "$R/busy_xo" 2>"$TDIR/ex2d.err" &
X2=$!
PIDS+=("$X2")
if wait_for 10 grep -q ready "$TDIR/ex2d.err" && nctl attach "$X2" --freq 999 >/dev/null &&
	wait_for 20 tfield_ge "$X2" samples 50; then
	touch "$TDIR/go2d"
	wait_for 10 eval '[ "$(readlink /proc/$X2/exe)" = "$R/busy_xo" ]'
	if kernel_lets_nobody "$X2"; then
		pass "exec of an execute-only binary: the kernel lets nobody read it here, so may kprofd"
	else
		if wait_for 5 not_attached "$X2"; then
			pass "nobody's target that exec'd an execute-only binary is ended ($(tfield "$X2" state))"
		else fail "target ended on exec of an execute-only binary" "still $(tfield "$X2" state) as $(tfield "$X2" comm)"; fi
		if nreport "$X2" | grep -q "busy_xo"; then
			fail "no names of the execute-only binary" "$(nreport "$X2" | grep busy_xo | head -3)"
		else pass "none of the execute-only binary's names reach nobody"; fi
	fi
else
	fail "attach the process before its exec" "$(cat "$TDIR/ex2d.err"); $(ctl list --all 2>&1 | tail -3)"
fi
kill -9 "$X2" 2>/dev/null

# --- 1. Anonymous code at the setuid program's data address, then an exec of that program.
echo "-- 1. (at ${SECONDS} s)"
ADDR=$(nm "$R/secret" | awk '$3 == "secret_page" { print "0x" $1 }')
leaked=0
named=0
tried=0
for round in 1 2 3; do
	ensure_daemon || { fail "daemon restarts" "see log"; break; }
	"${AS_NOBODY[@]}" "$BIN/anonexec" "$ADDR" "$TDIR/go1.$round" "$R/secret" 2>"$TDIR/ae.$round.err" &
	AE=$!
	PIDS+=("$AE")
	if ! wait_for 10 has_ready "$TDIR/ae.$round.err" || ! nctl attach "$AE" --freq 999 >/dev/null ||
		! wait_for 20 tfield_ge "$AE" samples 20; then
		fail "attacker $round starts and is attached" "$(cat "$TDIR/ae.$round.err")"
		continue
	fi
	touch "$TDIR/go1.$round"
	if ! wait_for 10 grep -q "secret: pid" "$TDIR/ae.$round.err"; then
		fail "attacker $round execs the setuid program" "$(cat "$TDIR/ae.$round.err")"
		continue
	fi
	wait_for 5 eval '[ "$(tfield "$AE" state)" != attached ]'
	tried=$((tried + 1))
	# Samples drained after the exec, before kprofd saw it: not named from the setuid
	# program's maps (nor its symbols) for nobody.
	if nreport "$AE" | grep -q "secret"; then
		named=$((named + 1))
		echo "round $round: nobody's profile names the setuid program: $(nreport "$AE" | grep secret | head -2)"
	fi
	# Every function nobody's profile holds, annotated as nobody: no byte of the secret.
	nctl report "$AE" --top 0 --json >"$TDIR/rep.$round.json" 2>&1
	python3 -c "import json,sys
for e in json.load(open(sys.argv[1]))['entries']:
    if e['kind'] != 'kernel':
        print(e['function'])
        print(hex(e['address']))" "$TDIR/rep.$round.json" >"$TDIR/funcs.$round" 2>/dev/null
	: >"$TDIR/ann.$round"
	while IFS= read -r f; do
		nctl annotate "$AE" "$f" --json >>"$TDIR/ann.$round" 2>&1
	done <"$TDIR/funcs.$round"
	nctl annotate "$AE" "$ADDR" --json >>"$TDIR/ann.$round" 2>&1
	for off in 0x105 0x107; do
		nctl annotate "$AE" "$(printf '0x%x' $((ADDR + off)))" --json >>"$TDIR/ann.$round" 2>&1
	done
	# Any 6 bytes of the secret ("KPSECRET" repeated) among a reply's instruction bytes.
	if python3 -c "import json,sys
pat = b'KPSECRET' * 3
for line in open(sys.argv[1]):
    if line.startswith('{'):
        code = bytes.fromhex(''.join(i['bytes'] for i in json.loads(line).get('insns', [])))
        if any(code[i:i + 6] in pat for i in range(len(code) - 5)):
            sys.exit(0)
sys.exit(1)" "$TDIR/ann.$round"; then
		leaked=$((leaked + 1))
		echo "round $round: the secret in nobody's annotate: $(grep -o '"captured_bytes":[0-9]*' "$TDIR/ann.$round" | head -3)"
	fi
	kill -9 "$AE" 2>/dev/null
done
if [ "$tried" = 0 ]; then :
elif [ "$leaked" = 0 ]; then
	pass "no byte of a setuid program's data reaches nobody's annotate after an exec ($tried rounds; $(grep -c '"captured_bytes"' "$TDIR"/ann.* | awk -F: '{ s += $2 } END { print s }') replies)"
else fail "setuid data through annotate" "the secret in $leaked of $tried rounds"; fi
if [ "$tried" != 0 ] && [ "$named" = 0 ]; then
	pass "samples drained after a setuid exec are not named from the setuid program for nobody"
elif [ "$tried" != 0 ]; then fail "names of a setuid program" "in $named of $tried rounds"; fi

# --- 10. nobody's kprofctl in its own user and PID namespace names its process by its PID there.
echo "-- 10. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
if ! "${AS_NOBODY[@]}" unshare -Urpf true 2>/dev/null; then
	skip "PIDs of a client in a PID namespace" "nobody cannot create user and PID namespaces here"
else
	# Inside: busy (a small PID there), attached by that PID, then a PID no process there has.
	"${AS_NOBODY[@]}" unshare -Urpf sh -c '
		"$1" 2>"$2/ns.err" &
		b=$!
		echo "$b" >"$2/ns.pid"
		while ! grep -q ready "$2/ns.err"; do sleep 0.1; done
		"$3" --socket "$4" attach "$b" --freq 99 >"$2/ns.attach" 2>&1
		"$3" --socket "$4" report 99999 >"$2/ns.bad" 2>&1
		touch "$2/ns.asked"
		while [ ! -e "$2/ns.done" ]; do sleep 0.1; done
		kill -9 "$b"' sh "$BIN/busy" "$NB" "$KPROFCTL" "$SOCK" &
	NSJ=$!
	PIDS+=("$NSJ")
	if wait_for 20 test -e "$NB/ns.asked"; then
		nsb=$(cat "$NB/ns.pid")
		hb=$(host_pid "$nsb" "$BIN/busy")
		if [ -n "$hb" ] && [ "$hb" != "$nsb" ] && tfield_is "$hb" state attached; then
			pass "attach $nsb inside a PID namespace attaches that process (pid $hb in kprofd's): $(head -1 "$NB/ns.attach")"
		else fail "a PID of the client's namespace" "pid $nsb there is $hb here; attach said: $(cat "$NB/ns.attach"); targets: $(ctl list --all 2>&1 | tail -n +2 | head -3)"; fi
		if grep -q "no process has this PID in kprofctl's PID namespace" "$NB/ns.bad"; then
			pass "a PID no process of the client's namespace has is refused, saying so: $(cat "$NB/ns.bad")"
		else fail "an unknown PID of the client's namespace" "$(cat "$NB/ns.bad")"; fi
		[ -n "$hb" ] && ctl detach "$hb" >/dev/null 2>&1
	else fail "kprofctl in a PID namespace" "no answer: $(cat "$NB"/ns.* 2>&1 | head -5)"; fi
	touch "$NB/ns.done"
	wait "$NSJ" 2>/dev/null
fi

finish
