#!/usr/bin/env bash
# Watch rules (kprofctl watch, [watch] rule in kprofd.conf): kprofd attaches by itself every
# present and future process a rule matches:
#   1. a comm rule: a minijit (as kpwjit) started, killed and started again is profiled twice,
#      no PID typed;
#      the target names its rule; watch remove stops attaching;
#   1b. as the issue's new user would: `watch add --comm node --freq 19`, then a Node service
#      (node --perf-basic-prof hot.js in system.slice/NAME.service, as systemd runs it) started
#      and restarted: both processes attached and profiled, hotFunction named, no PID typed;
#      then a unit rule for that service from kprofd.conf, added before the unit starts: its
#      start and its restart attach the new processes (the manager's waiting unit watch);
#   2. an exe rule and a uid rule (a process of user nobody, through setpriv);
#   3. rules kept across a kprofd restart; a torn rules file is refused whole (renamed .bad);
#   4. a rule matching hundreds of processes stops at limits.max_auto_targets and counts the
#      refusals (watch list, status); a config rule goes away on reload (SIGHUP);
#   5. bad input: a unit that does not exist, bad rule strings, a 10 KB comm, another user's
#      uid; fds and BPF links back after the rules are gone.
# Needs root; node and a writable cgroup2 hierarchy for 1b (skipped without them).
. "$(dirname "$0")/lib.sh"
MJ=$(realpath "$MINIJIT")
HOT=$(realpath tests/fixtures/hot.js)
CGROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
UNIT=kprof-wnode-$$.service
UNITDIR=
MADE_SLICE=
if [ -n "$CGROOT" ] && [ -w "$CGROOT" ]; then
	[ -d "$CGROOT/system.slice" ] || { mkdir "$CGROOT/system.slice" && MADE_SLICE=1; }
	UNITDIR=$CGROOT/system.slice/$UNIT
fi
w_cleanup() {
	local p
	if [ -n "$UNITDIR" ] && [ -f "$UNITDIR/cgroup.procs" ]; then
		for p in $(cat "$UNITDIR/cgroup.procs"); do kill -9 "$p" 2>/dev/null; done
		sleep 0.2
		rmdir "$UNITDIR" 2>/dev/null
	fi
	[ -n "$MADE_SLICE" ] && rmdir "$CGROOT/system.slice" 2>/dev/null
	cleanup
}
trap w_cleanup EXIT
SLP=$TDIR/kpwsleep
cp "$(command -v sleep)" "$SLP" && chmod 755 "$SLP"
# minijit under a comm of its own: a comm rule matches every process of that name on the
# machine, and other tests may run minijits meanwhile.
cp "$MJ" "$TDIR/kpwjit" && chmod 755 "$TDIR/kpwjit"
start_kpwjit() { MINIJIT=$TDIR/kpwjit start_minijit "$@"; }
CONF=$TDIR/kprofd.conf
printf '[limits]\nmax_auto_targets = 12\n[watch]\nrule = comm:kpwcfg freq=29\n' >"$CONF"
start_daemon -c "$CONF" || { fail "daemon starts" "see log"; exit 1; }
kd_fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
kd_links() { ls -l "/proc/$DAEMON_PID/fd" | grep -c 'bpf[-_]link'; }
FDS0=$(kd_fds)
LINKS0=$(kd_links)
tj() { # tj PID FIELD: of the newest session of PID
	ctl list --all --json | python3 -c "import json,sys
t = [t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
print(max(t, key=lambda t: t['attached_at_ns'])['$2'] if t else '')"
}
wj() { ctl watch list --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
attached_by() { [ "$(tj "$1" state)" = attached ] && [ "$(tj "$1" rule)" = "$2" ]; }

# --- 1. comm rule, restart, remove.
echo "-- 1. (at ${SECONDS} s)"
out=$(ctl watch add --comm kpwjit --freq 19 2>&1) && pass "watch add --comm kpwjit ($out)" ||
	fail "watch add --comm" "$out"
start_kpwjit --seconds 60
P1=$MJ_PID
if wait_for 5 attached_by "$P1" "comm:kpwjit freq=19" && wait_for 10 at_least_samples "$P1" 5; then
	pass "a minijit started after the rule is attached and sampled ($(samples "$P1") samples)"
else fail "comm rule attaches" "$(ctl list --all)"; fi
[ "$(tj "$P1" freq_hz)" = 19 ] && pass "at the rule's frequency" || fail "rule frequency" "$(tj "$P1" freq_hz)"
ctl report "$P1" --top 1 | grep -q 'rule comm:kpwjit' && pass "kprofctl report names the rule" ||
	fail "report shows rule" "$(ctl report "$P1" --top 1)"
kill -9 "$P1"
start_kpwjit --seconds 60
P2=$MJ_PID
if wait_for 5 attached_by "$P2" "comm:kpwjit freq=19" && wait_for 10 at_least_samples "$P2" 5; then
	pass "the restarted minijit ($P1 -> $P2) is profiled again without a PID"
else fail "restart re-attached" "$(ctl list --all)"; fi
kill -9 "$P2"
id=$(wj "[r['id'] for r in d['rules'] if r['rule'].startswith('comm:kpwjit')][0]")
out=$(ctl watch remove "$id" 2>&1) && pass "watch remove $id ($out)" || fail "watch remove" "$out"
start_kpwjit --seconds 60
P3=$MJ_PID
sleep 1.5
[ -z "$(tj "$P3" state)" ] && pass "after watch remove a new minijit is not attached" ||
	fail "removed rule still attaches" "$(ctl list)"
kill -9 "$P3"

# --- 1b. node, as a service started and restarted.
echo "-- 1b. (at ${SECONDS} s)"
# svc_start: the service's process, as systemd starts it: in a new cgroup of the unit (when
# there is a cgroup2 hierarchy), its working directory private, then node exec'd; sets NP.
svc_start() {
	mkdir -p "$TDIR/node"
	[ -z "$UNITDIR" ] || mkdir "$UNITDIR"
	(cd "$TDIR/node" && { [ -z "$UNITDIR" ] || echo "$BASHPID" >"$UNITDIR/cgroup.procs"; } &&
		exec node --perf-basic-prof "$HOT" 60) >"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!
	PIDS+=("$NP")
}
# svc_stop: as systemd stops it: SIGTERM, then the cgroup removed.
svc_stop() {
	kill -TERM "$NP" 2>/dev/null
	wait "$NP" 2>/dev/null
	[ -z "$UNITDIR" ] || { wait_for 5 test ! -s "$UNITDIR/cgroup.procs"; wait_for 5 rmdir "$UNITDIR"; }
}
# profiled PID RULE: attached by RULE, sampled, hotFunction named in its report.
profiled() {
	attached_by "$1" "$2" && at_least_samples "$1" 30 &&
		ctl report "$1" --top 5 2>/dev/null | grep -q hotFunction
}
if ! command -v node >/dev/null; then
	skip "node service" "node is not installed"
else
	out=$(ctl watch add --comm node --freq 19 2>&1) && pass "watch add --comm node --freq 19 ($out)" ||
		fail "watch add --comm node" "$out"
	svc_start
	N1=$NP
	if wait_for 30 profiled "$N1" "comm:node freq=19"; then
		pass "a node service started after the rule is profiled, hotFunction named ($(samples "$N1") samples at $(tj "$N1" freq_hz) Hz)"
	else fail "node comm rule" "$(ctl list --all | grep -w "$N1"); $(ctl report "$N1" --top 5 2>&1 | tail -5)"; fi
	svc_stop
	svc_start
	N2=$NP
	if wait_for 30 profiled "$N2" "comm:node freq=19"; then
		pass "the restarted node service ($N1 -> $N2) is profiled again, no PID typed ($(samples "$N2") samples)"
	else fail "node restart" "$(ctl list --all | grep -w "$N2"); $(ctl report "$N2" --top 5 2>&1 | tail -5)"; fi
	[ "$(tj "$N1" state)" = exited ] && pass "the first node's profile is kept (exited)" ||
		fail "first node kept" "$(tj "$N1" state)"
	svc_stop
	ctl watch remove "comm:node freq=19" >/dev/null || fail "watch remove comm:node" "rc $?"
	if [ -n "$UNITDIR" ]; then
		# A unit rule from kprofd.conf, read on reload while the unit is stopped: waited for.
		printf '[limits]\nmax_auto_targets = 12\n[watch]\nrule = comm:kpwcfg freq=29\nrule = unit:%s freq=23\n' \
			"$UNIT" >"$CONF"
		kill -HUP "$DAEMON_PID"
		wait_for 5 sh -c "$KPROFCTL --socket $SOCK watch list | grep -q 'unit:$UNIT.*waiting for the unit to start'" &&
			pass "a unit rule for a unit not started yet waits for it" || fail "unit rule waits" "$(ctl watch list)"
		for round in start restart; do
			svc_start
			if wait_for 30 profiled "$NP" "unit:$UNIT freq=23" &&
				[ "$(tj "$NP" cgroup)" = "$UNIT" ]; then
				pass "unit rule: the service's $round is profiled (pid $NP, $(samples "$NP") samples)"
			else fail "unit rule $round" "$(ctl list --all | grep -w "$NP"); $(ctl status | grep -A1 "$UNIT")"; fi
			svc_stop
		done
		ctl status | grep -q "$UNIT.*started again 1 time" && pass "status: the unit's watch started again once" ||
			fail "unit restarts" "$(ctl status | grep -A1 "$UNIT")"
		out=$(ctl detach --unit "$UNIT" 2>&1)
		[ $? != 0 ] && grep -q 'watch rule' <<<"$out" && pass "detach --unit of a rule's watch is refused ($out)" ||
			fail "detach rule's unit" "$out"
		printf '[limits]\nmax_auto_targets = 12\n[watch]\nrule = comm:kpwcfg freq=29\n' >"$CONF"
		kill -HUP "$DAEMON_PID"
		wait_for 5 sh -c "! $KPROFCTL --socket $SOCK status | grep -q '$UNIT'" &&
			pass "the unit rule removed from kprofd.conf: its watch ends on reload" ||
			fail "unit rule reload" "$(ctl status | grep -A1 "$UNIT")"
	else
		skip "unit rule" "no writable cgroup2 hierarchy (${CGROOT:-none mounted})"
	fi
fi

# --- 2. exe and uid rules.
echo "-- 2. (at ${SECONDS} s)"
out=$(ctl watch add "exe:$MJ jvm=off" 2>&1) || fail "watch add exe" "$out"
start_minijit --seconds 60
P4=$MJ_PID
wait_for 5 attached_by "$P4" "exe:$MJ jvm=off" && pass "an exe rule attaches its program" ||
	fail "exe rule" "$(ctl list --all)"
kill -9 "$P4"
ctl watch remove "exe:$MJ jvm=off" >/dev/null || fail "watch remove by text" "rc $?"
NOBODY=$(id -u nobody)
out=$(ctl watch add --uid nobody 2>&1) || fail "watch add --uid nobody" "$out"
setpriv --reuid "$NOBODY" --regid "$(id -g nobody)" --clear-groups "$SLP" 60 &
PN=$!
PIDS+=("$PN")
wait_for 5 attached_by "$PN" "uid:$NOBODY" && pass "a uid rule attaches a process of user nobody" ||
	fail "uid rule" "$(ctl list --all)"
[ "$(tj "$PN" uid)" = "$NOBODY" ] && pass "... as nobody's process" || fail "uid" "$(tj "$PN" uid)"
out=$(setpriv --reuid "$NOBODY" --regid "$(id -g nobody)" --clear-groups "$KPROFCTL" --socket "$SOCK" watch add --uid 0 2>&1)
[ $? != 0 ] && grep -qi 'permission denied' <<<"$out" && pass "a user may not watch another uid ($out)" ||
	fail "user watching uid 0" "$out"
kill -9 "$PN"

# --- 3. kept across a restart; torn file.
echo "-- 3. (at ${SECONDS} s)"
ctl watch add --comm kpwjit --freq 19 >/dev/null || fail "watch add" "again"
stop_daemon
RF=$(find "$TDIR/state" -name watch.rules | head -1)
[ -s "$RF" ] && pass "rules saved in the state directory ($RF)" || fail "rules file" "none"
start_daemon -c "$CONF" || { fail "daemon restarts" "see log"; exit 1; }
n=$(wj "len([r for r in d['rules'] if not r['config']])")
[ "$n" = 2 ] && pass "both client rules restored after a restart" || fail "restored rules" "$(ctl watch list)"
start_kpwjit --seconds 60
P5=$MJ_PID
wait_for 5 attached_by "$P5" "comm:kpwjit freq=19" && pass "a restored rule attaches" ||
	fail "restored rule" "$(ctl list --all)"
kill -9 "$P5"
stop_daemon
python3 - "$RF" <<'PY'
import sys
p = sys.argv[1]; b = open(p, 'rb').read(); open(p, 'wb').write(b[:-5])
PY
start_daemon -c "$CONF" || { fail "daemon restarts" "see log"; exit 1; }
n=$(wj "len([r for r in d['rules'] if not r['config']])")
[ "$n" = 0 ] && [ -f "$RF.bad" ] && grep -q 'watch rules .* unusable' "$TDIR/kprofd.log" &&
	pass "a torn rules file is detected, renamed .bad, no rule restored" ||
	fail "torn rules file" "$n rules; $(ls "$(dirname "$RF")")"
FDS0=$(kd_fds)
LINKS0=$(kd_links)

# --- 4. the bound; config rules and reload.
echo "-- 4. (at ${SECONDS} s)"
for i in $(seq 200); do "$SLP" 120 & PIDS+=("$!"); done
out=$(ctl watch add --comm kpwsleep 2>&1) || fail "watch add kpwsleep" "$out"
at=$(wj "d['auto_targets']")
ref=$(wj "d['auto_refused']")
[ "$at" = 12 ] && [ "$ref" -ge 150 ] && pass "200 matches: 12 attached (max_auto_targets), $ref refusals counted" ||
	fail "auto bound" "$at attached, $ref refused: $out"
ctl status | grep -q 'refused by the bound' && pass "status shows the refusals" || fail "status" "$(ctl status)"
[ "$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["auto_refused"])')" -ge 150 ] &&
	pass "status --json counts them" || fail "status json" "auto_refused"
ctl watch remove comm:kpwsleep >/dev/null
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
wj "[r['rule'] for r in d['rules'] if r['config']]" | grep -q kpwcfg && pass "a config rule is listed" ||
	fail "config rule" "$(ctl watch list)"
out=$(ctl watch remove comm:kpwcfg\ freq=29 2>&1)
[ $? != 0 ] && grep -q kprofd.conf <<<"$out" && pass "a config rule is not removed by a client" || fail "remove config rule" "$out"
printf '[limits]\nmax_auto_targets = 12\n' >"$CONF"
kill -HUP "$DAEMON_PID"
wait_for 5 sh -c "! $KPROFCTL --socket $SOCK watch list | grep -q kpwcfg" && pass "reload drops a rule removed from the config" ||
	fail "reload" "$(ctl watch list)"

# --- 5. bad input.
echo "-- 5. (at ${SECONDS} s)"
out=$(ctl watch add --unit "kprof-no-such-$$.service" 2>&1)
[ $? != 0 ] && grep -q 'no such unit' <<<"$out" && pass "a unit that does not exist: $out" || fail "missing unit" "$out"
big=$(head -c 10240 /dev/zero | tr '\0' a)
for bad in "" "comm:" "bogus:x" "comm:a freq=0" "comm:a freq=99999" "comm:$big" "comm:abcdefghijklmnopq" \
	"exe:relative/path" "uid:-1" "uid:99999999999" "comm:a b=c" "cgroup:../../etc" "unit:foo" \
	"$(printf 'comm:a\nfreq=1')" "comm:a jvm=maybe"; do
	out=$(ctl watch add "$bad" 2>&1)
	rc=$?
	[ $rc != 0 ] || fail "bad rule refused: ${bad:0:40}" "accepted: $out"
done
pass "bad rule strings refused (empty, no value, bad kind, bad freq, 10 KB comm, relative exe, bad uid, bad option, '..', newline)"
ctl status >/dev/null && pass "kprofd still serves" || fail "kprofd alive" "status failed"
[ "$(wj "len(d['rules'])")" = 0 ] && pass "no rule left" || fail "rules left" "$(ctl watch list)"
wait_for 10 sh -c "[ \$(ls /proc/$DAEMON_PID/fd | wc -l) -le $FDS0 ]" && [ "$(kd_links)" = "$LINKS0" ] &&
	pass "fds and BPF links back after removal ($(kd_fds) fds, $(kd_links) links)" ||
	fail "fds back" "$(kd_fds) fds (was $FDS0), $(kd_links) links (was $LINKS0)"
finish
