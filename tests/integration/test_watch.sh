#!/usr/bin/env bash
# Watch rules (kprofctl watch, [watch] rule in kprofd.conf): kprofd attaches by itself every
# present and future process a rule matches:
#   1. a comm rule: a minijit started, killed and started again is profiled twice, no PID typed;
#      the target names its rule; watch remove stops attaching;
#   2. an exe rule and a uid rule (a process of user nobody, through setpriv);
#   3. rules kept across a kprofd restart; a torn rules file is refused whole (renamed .bad);
#   4. a rule matching hundreds of processes stops at limits.max_auto_targets and counts the
#      refusals (watch list, status); a config rule goes away on reload (SIGHUP);
#   5. bad input: a unit that does not exist, bad rule strings, a 10 KB comm, another user's
#      uid; fds and BPF links back after the rules are gone.
# Needs root.
. "$(dirname "$0")/lib.sh"
MJ=$(realpath "$MINIJIT")
SLP=$TDIR/kpwsleep
cp "$(command -v sleep)" "$SLP" && chmod 755 "$SLP"
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
out=$(ctl watch add --comm minijit --freq 19 2>&1) && pass "watch add --comm minijit ($out)" ||
	fail "watch add --comm" "$out"
start_minijit --seconds 60
P1=$MJ_PID
if wait_for 5 attached_by "$P1" "comm:minijit freq=19" && wait_for 10 at_least_samples "$P1" 5; then
	pass "a minijit started after the rule is attached and sampled ($(samples "$P1") samples)"
else fail "comm rule attaches" "$(ctl list --all)"; fi
[ "$(tj "$P1" freq_hz)" = 19 ] && pass "at the rule's frequency" || fail "rule frequency" "$(tj "$P1" freq_hz)"
ctl list | grep -q 'rule comm:minijit' && pass "kprofctl list names the rule" || fail "list shows rule" "$(ctl list)"
kill -9 "$P1"
start_minijit --seconds 60
P2=$MJ_PID
if wait_for 5 attached_by "$P2" "comm:minijit freq=19" && wait_for 10 at_least_samples "$P2" 5; then
	pass "the restarted minijit ($P1 -> $P2) is profiled again without a PID"
else fail "restart re-attached" "$(ctl list --all)"; fi
kill -9 "$P2"
id=$(wj "[r['id'] for r in d['rules'] if r['rule'].startswith('comm:minijit')][0]")
out=$(ctl watch remove "$id" 2>&1) && pass "watch remove $id ($out)" || fail "watch remove" "$out"
start_minijit --seconds 60
P3=$MJ_PID
sleep 1.5
[ -z "$(tj "$P3" state)" ] && pass "after watch remove a new minijit is not attached" ||
	fail "removed rule still attaches" "$(ctl list)"
kill -9 "$P3"

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
ctl watch add --comm minijit --freq 19 >/dev/null || fail "watch add" "again"
stop_daemon
RF=$(find "$TDIR/state" -name watch.rules | head -1)
[ -s "$RF" ] && pass "rules saved in the state directory ($RF)" || fail "rules file" "none"
start_daemon -c "$CONF" || { fail "daemon restarts" "see log"; exit 1; }
n=$(wj "len([r for r in d['rules'] if not r['config']])")
[ "$n" = 2 ] && pass "both client rules restored after a restart" || fail "restored rules" "$(ctl watch list)"
start_minijit --seconds 60
P5=$MJ_PID
wait_for 5 attached_by "$P5" "comm:minijit freq=19" && pass "a restored rule attaches" ||
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
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
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
