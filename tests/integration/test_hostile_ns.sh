#!/usr/bin/env bash
# Hostile targets, part 1: an unprivileged user (nobody) points kprofd, through its own user,
# mount and PID namespaces, at files kprofd must not open or must not trust:
#   1. a pty slave bind-mounted over its perf map (kprofd must not get a controlling terminal
#      nor die of the ^\ / ^C / hangup sent through it);
#   3. a FIFO bind-mounted over its binary, with kprofd run with the unit's capabilities (no
#      CAP_SYS_ADMIN: /proc/PID/map_files refused, the path opened in the target's root):
#      kprofd must not block;
#   4. root-only files read as its perf map: (a) a root JIT's 0600 /tmp/perf-R.map, reached by
#      giving its own process namespaced PID R; (b) /proc/ROOTPID/syscall and /proc/kallsyms
#      bind-mounted over its perf map: none of their content may reach nobody.
# Needs root, unprivileged user namespaces for nobody, setpriv, setsid, cc, python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
for tool in setpriv setsid unshare cc; do
	command -v "$tool" >/dev/null || { skip "hostile ns" "$tool is not installed"; exit 0; }
done
if ! "${AS_NOBODY[@]}" unshare -Urm true 2>/dev/null; then
	skip "hostile ns" "nobody cannot create user namespaces here"
	exit 0
fi
build busy || { fail "build busy.c" "cc failed"; exit 1; }
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }
# kprofd was started like systemd does it: no controlling terminal to begin with.
[ "$(stat_field "$DAEMON_PID" 7)" = 0 ] || fail "setup" "kprofd started with tty_nr $(stat_field "$DAEMON_PID" 7)"

# --- 1. A pty slave bind-mounted over the target's perf map, in nobody's mount namespace.
echo "-- 1. (at ${SECONDS} s)"
D1=$NB/pty
mkdir -p "$D1" && chown $NOBODY:$NOBODY "$D1"
"${AS_NOBODY[@]}" unshare -Urm "$PY" "$HFIX/ptymap.py" "$D1" 2>"$TDIR/pty.err" &
U1=$!
PIDS+=("$U1")
if ! wait_for 10 has_ready "$TDIR/pty.err"; then
	fail "pty perf map target starts" "$(cat "$TDIR/pty.err")"
else
	T1=$(ready_pid "$TDIR/pty.err")
	PIDS+=("$T1")
	out=$(nctl attach "$T1" 2>&1)
	arc=$?
	tty=$(stat_field "$DAEMON_PID" 7)
	if [ "$tty" = 0 ]; then pass "kprofd gets no controlling terminal from a tty bound over a perf map"
	else fail "no controlling terminal" "kprofd's tty_nr is $tty after attaching $T1 ($(head -1 "$TDIR/pty.err"))"; fi
	touch "$D1/keys"
	wait_for 5 test -e "$D1/keys.done"
	# kprofd dies of SIGQUIT at once if it got the terminal: give it 2 s to do so.
	wait_for 2 eval '! daemon_alive'
	touch "$D1/hangup"
	wait_for 5 test -e "$D1/hangup.done"
	wait_for 2 eval '! daemon_alive'
	if [ "$arc" = 0 ] && daemon_ok && grep -qE "pid $T1: .*(perf|map|tty|terminal|regular)" "$TDIR/kprofd.log"; then
		pass "^\\, ^C and a hangup on that tty leave kprofd alive and answering; attach ok, map ignored and logged"
	elif ! daemon_alive; then
		fail "kprofd survives ^\\ ^C and hangup on a perf-map tty" "kprofd $(how_died) (attach rc $arc: $out)"
	else
		fail "kprofd survives ^\\ ^C and hangup on a perf-map tty" "attach rc $arc ($out); status $(tctl status 2>&1 | head -1); log: $(grep "pid $T1" "$TDIR/kprofd.log" | tail -2)"
	fi
fi
kill -9 "$U1" "${T1:-}" 2>/dev/null

# --- 3. A FIFO bind-mounted over the target's binary; kprofd without CAP_SYS_ADMIN.
echo "-- 3. (at ${SECONDS} s)"
# The bounding set of systemd/kprofd.service.
# shellcheck disable=SC2054
PRE_DAEMON=(setpriv --bounding-set=-all,+bpf,+perfmon,+sys_ptrace,+dac_read_search,+syslog --inh-caps=-all)
restart_daemon || { fail "daemon starts with the unit's capabilities" "see log"; exit 1; }
PRE_DAEMON=()
capbnd=$(awk '/^CapBnd:/ { print $2 }' "/proc/$DAEMON_PID/status")
(((0x$capbnd >> 21) & 1)) && fail "setup" "kprofd still has CAP_SYS_ADMIN in its bounding set ($capbnd)"
D3=$NB/fifo
mkdir -p "$D3" && chown $NOBODY:$NOBODY "$D3"
"${AS_NOBODY[@]}" unshare -Urm sh -c "
	cp '$BIN/busy' '$D3/busy' && '$D3/busy' 2>'$D3/busy.err' &
	while ! grep -q ready '$D3/busy.err' 2>/dev/null; do sleep 0.05; done
	mkfifo '$D3/fifo' && mount --bind '$D3/fifo' '$D3/busy' || exit 1
	echo \"fifo: \$(cat '$D3/busy.err') bound\" >&2
	wait" 2>"$TDIR/fifo.err" &
U3=$!
PIDS+=("$U3")
if ! wait_for 10 grep -q bound "$TDIR/fifo.err"; then
	fail "FIFO target starts" "$(cat "$TDIR/fifo.err")"
else
	T3=$(ready_pid "$TDIR/fifo.err")
	PIDS+=("$T3")
	out=$(timeout 3 setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$KPROFCTL" --socket "$SOCK" attach "$T3" --freq 999 2>&1) ||
		fail "attach the FIFO target" "$out"
	worst=0 bad=""
	end=$((SECONDS + 10))
	while [ "$SECONDS" -lt "$end" ]; do
		t0=$(date +%s%N)
		if ! tctl status >/dev/null 2>&1; then bad="status not answered within 3 s at $((10 - end + SECONDS)) s"; break; fi
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ "$ms" -gt "$worst" ] && worst=$ms
		[ "$ms" -gt 2000 ] && { bad="status took $ms ms"; break; }
		sleep 0.3
	done
	if [ -z "$bad" ] && daemon_alive; then
		pass "a FIFO over the target's binary: status answered for 10 s (slowest $worst ms), kprofd alive"
	else fail "kprofd does not block on a FIFO over the target's binary" "${bad:-kprofd $(how_died)}; $(grep -c "" "$TDIR/kprofd.log") log lines, last: $(tail -1 "$TDIR/kprofd.log")"; fi
	kill -9 "$T3" 2>/dev/null
fi
kill -9 "$U3" 2>/dev/null
restart_daemon || { fail "daemon restarts" "see log"; exit 1; }

# --- 4a. A root JIT's perf map (0600), reached by a namespaced PID equal to the JIT's PID.
echo "-- 4a. (at ${SECONDS} s)"
"$BIN/busy" --sleep 2>/dev/null &
R=$!
PIDS+=("$R")
echo "0 7fffffffffff ROOTSECRET_x" >"/tmp/perf-$R.map"
chmod 600 "/tmp/perf-$R.map"
T4=
for _ in 1 2 3 4 5; do
	rm -f "$TDIR/4a.err"
	# (--kill-child: killing unshare kills the namespace's init, and so all in it.)
	"${AS_NOBODY[@]}" unshare --kill-child -Urpf --mount-proc sh -c \
		"echo $((R - 1)) >/proc/sys/kernel/ns_last_pid; '$BIN/busy' & wait" >/dev/null 2>"$TDIR/4a.err" &
	U4=$!
	PIDS+=("$U4")
	wait_for 10 has_ready "$TDIR/4a.err"
	if [ "$(ready_pid "$TDIR/4a.err")" = "$R" ]; then
		T4=$(host_pid "$R" "$BIN/busy")
		break
	fi
	kill -9 "$U4" 2>/dev/null
done
if [ -z "$T4" ]; then
	fail "namespaced PID $R" "5 tries, got $(ready_pid "$TDIR/4a.err")"
else
	PIDS+=("$T4")
	# The root JIT goes on writing its map (so the map is newer than nobody's process).
	echo "100 10 ROOTSECRET_y" >>"/tmp/perf-$R.map"
	echo "nobody's process: host pid $T4, pid $R in its namespace ($(grep NStgid "/proc/$T4/status"))"
	nctl attach "$T4" --freq 999 >/dev/null || fail "nobody attaches its namespaced process" ""
	wait_for 20 tfield_ge "$T4" samples 300
	rep=$(nctl report "$T4" --top 0 --json 2>&1)
	if [ -n "$(tfield "$T4" samples)" ] && ! grep -q ROOTSECRET <<<"$rep"; then
		pass "a root JIT's 0600 perf map is not read for nobody's process with the same namespaced PID"
	else
		fail "root perf map through a namespaced PID" "nobody's report: $(grep -o '"function":"ROOTSECRET[^"]*"' <<<"$rep" | sort -u | tr '\n' ' ') ($(tfield "$T4" samples) samples)"
	fi
	kill -9 "$T4" 2>/dev/null
fi
kill -9 "$U4" "$R" 2>/dev/null
rm -f "/tmp/perf-$R.map"

# --- 4b. /proc/ROOTPID/syscall, then /proc/kallsyms, bind-mounted over nobody's perf map.
echo "-- 4b. (at ${SECONDS} s)"
ensure_daemon || { fail "daemon restarts" "see log"; exit 1; }
"$BIN/busy" --sleep 2>/dev/null &
S=$!
PIDS+=("$S")
wait_for 5 grep -q "^35 " "/proc/$S/syscall"
# bound_target SOURCE ERRFILE: nobody's busy loop with SOURCE bound over its perf map; its pid
# in BT ("" if it did not start).
bound_target() {
	# A perf map left in /tmp by a process that is gone (root's, from another test) would stop
	# nobody from creating its own if its pid comes round again.
	local f
	for f in /tmp/perf-*.map; do
		[ -e "$f" ] || continue
		f=${f#/tmp/perf-}
		[ -d "/proc/${f%.map}" ] || rm -f "/tmp/perf-$f"
	done
	"${AS_NOBODY[@]}" unshare -Urm sh -c \
		"m=/tmp/perf-\$\$.map; : >\$m && mount --bind '$1' \$m && exec '$BIN/busy'" >/dev/null 2>"$2" &
	PIDS+=("$!")
	BT=
	wait_for 10 has_ready "$2" && BT=$(ready_pid "$2") && PIDS+=("$BT")
}
bound_target "/proc/$S/syscall" "$TDIR/4b.err"
T5=$BT
if [ -z "$T5" ]; then
	fail "syscall-file target starts" "$(cat "$TDIR/4b.err")"
else
	nctl attach "$T5" --freq 999 >/dev/null || fail "nobody attaches (syscall file)" ""
	wait_for 20 tfield_ge "$T5" samples 300
	secret=$(cat "/proc/$S/syscall")
	echo "root process $S: /proc/$S/syscall is: $secret"
	leak=$(nctl report "$T5" --top 0 --json | python3 -c "import json,sys
toks = [t for t in sys.argv[1].split() if len(t) >= 6]
print(' | '.join(sorted({e['function'] for e in json.load(sys.stdin)['entries'] if any(t in e['function'] for t in toks)})))" "$secret")
	if [ -n "$(tfield "$T5" samples)" ] && [ -z "$leak" ]; then
		pass "/proc/ROOTPID/syscall bound over nobody's perf map: none of it in nobody's report"
	else fail "root's /proc/PID/syscall as a perf map" "names in nobody's report: ${leak:0:300} ($(tfield "$T5" samples) samples, $(tfield "$T5" jit_symbols) JIT symbols)"; fi
	kill -9 "$T5"
fi
kill -9 "$S"
# /proc/kallsyms: its mtime is the time /proc first looked it up, so kprofd's "not older than
# the process" rule alone would ignore it; bump it (root, as anything on the machine may) to
# show what a perf map check that only looks at the owner and the time lets through.
bound_target /proc/kallsyms "$TDIR/4c.err"
T6=$BT
if [ -z "$T6" ]; then
	fail "kallsyms target starts" "$(cat "$TDIR/4c.err")"
else
	touch /proc/kallsyms
	nctl attach "$T6" --freq 999 >/dev/null || fail "nobody attaches (kallsyms)" ""
	wait_for 20 tfield_ge "$T6" samples 300
	n=$(tfield "$T6" jit_symbols)
	if [ "$n" = 0 ]; then pass "/proc/kallsyms bound over nobody's perf map is not read (0 JIT symbols)"
	else fail "/proc/kallsyms as a perf map" "$n JIT symbols read from it for nobody's process"; fi
	kill -9 "$T6"
fi
daemon_ok || fail "kprofd alive at the end" "kprofd $(how_died)"
finish
