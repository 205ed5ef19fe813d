#!/usr/bin/env bash
# The target list walked while targets end and kept profiles are trimmed (security issue 25,
# item 3): every walk that can end a target, driven by an unprivileged user (nobody), with
# limits.max_kept 0 (each ended profile trimmed at once) and then with that user's kept-profile
# quota full (each end trims one of its older profiles, which may be the walk's next entry):
#   - detach --cgroup of the user's own cgroup (manager_unwatch ends each member);
#   - housekeeping finding targets gone and draining their exits inside its walk, or ending
#     those whose process turned non-dumpable (a credential change);
#   - --duration timers (found by a walk), exits, and a --children fork loop (children attached
#     inside a drain inside a walk, dropped when they had no samples);
#   - SIGTERM with attached targets (manager_stop_targets): kprofd exits 0, and a root target
#     attached before the user's is saved.
# kprofd must survive each (a use-after-free is a crash, or a report in the ASan run).
# Needs root (BPF) and setpriv; the cgroup part a writable cgroup2 hierarchy.
. "$(dirname "$0")/lib.sh"
command -v setpriv >/dev/null || { skip "list walks" "setpriv (util-linux) missing"; exit 0; }
NB=$(id -u nobody)
as_nb() { setpriv --reuid="$NB" --regid="$NB" --clear-groups "$@"; }
nbctl() { as_nb "$KPROFCTL" --socket "$SOCK" "$@"; }
CGROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
CG=
if [ -n "$CGROOT" ] && mkdir "$CGROOT/kprof-walks-$$" 2>/dev/null; then CG=$CGROOT/kprof-walks-$$; fi
walks_cleanup() {
	local p
	if [ -n "$CG" ]; then
		for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		wait_for 5 rmdir "$CG"
	fi
	cleanup
}
trap walks_cleanup EXIT

# A process of nobody that sleeps; with "nd", turns itself non-dumpable once $TDIR/nd-go exists.
cat >"$TDIR/nd.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None)
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
time.sleep(600)
PY
# (setpriv run directly: a function run in the background would be a root subshell)
spawn_nb() {
	setpriv --reuid="$NB" --regid="$NB" --clear-groups sleep 600 & SP=$!; PIDS+=("$SP")
	wait_for 5 grep -qx sleep "/proc/$SP/comm"
}
spawn_nd() {
	local out=$TDIR/nd.$RANDOM
	setpriv --reuid="$NB" --regid="$NB" --clear-groups /usr/bin/python3 "$TDIR/nd.py" "$TDIR/nd-go" >"$out" &
	SP=$!; PIDS+=("$SP")
	wait_for 10 grep -q ready "$out"
}
alive() {
	if kill -0 "$DAEMON_PID" 2>/dev/null && ctl status >/dev/null 2>&1; then pass "$1: kprofd alive"
	else fail "$1" "kprofd died: $(grep -m3 -E 'ERROR|SUMMARY|Sanitizer' "$TDIR/kprofd.log" | tr '\n' ' ')"; exit 1; fi
}
attached_of() { # UID: attached targets of that uid
	ctl list --json | python3 -c "import json,sys
print(sum(1 for t in json.load(sys.stdin)['targets'] if t['uid'] == $1))"
}
none_attached() { [ "$(attached_of "$NB")" = 0 ]; }
# fill_quota N: N kept profiles of nobody (attach, detach).
fill_quota() {
	local i
	for ((i = 0; i < $1; i++)); do
		spawn_nb
		nbctl attach "$SP" --freq 99 >/dev/null && nbctl detach "$SP" >/dev/null
		kill -9 "$SP"
	done
}

run_walks() { # LABEL
	local l=$1 i pids=()
	# 1. detach --cgroup of the user's own cgroup: each member ended inside manager_unwatch.
	if [ -n "$CG" ]; then
		for i in 1 2 3 4; do
			sh -c 'echo $$ > "$0/cgroup.procs" && exec setpriv --reuid='"$NB"' --regid='"$NB"' --clear-groups sleep 600' "$CG" &
			PIDS+=("$!")
		done
		wait_for 5 eval '[ "$(wc -l <"$CG/cgroup.procs")" -ge 4 ]'
		wait_for 5 eval '[ "$(grep -c . <(for p in $(cat "$CG/cgroup.procs"); do grep -x sleep /proc/$p/comm; done))" -ge 4 ]'
		out=$(nbctl attach --cgroup "$CG" 2>&1) || fail "$l: nobody's attach --cgroup" "$out"
		wait_for 10 eval '[ "$(attached_of "$NB")" -ge 4 ]' || fail "$l: members attached" "$(ctl list)"
		out=$(nbctl detach --cgroup "$CG" 2>&1)
		grep -q '4 process' <<<"$out" || fail "$l: detach --cgroup" "$out"
		alive "$l: detach --cgroup of nobody's own cgroup"
		for p in $(cat "$CG/cgroup.procs"); do kill -9 "$p" 2>/dev/null; done
	else
		skip "$l: detach --cgroup" "no writable cgroup2 hierarchy"
	fi
	# 2. housekeeping. (a) Processes killed together: their exits are often still in the ring
	# buffer when the housekeeping walk finds them gone, and are drained inside that walk
	# (each end trimming); rounds of it, so that some land there. (b) Processes that turn
	# non-dumpable: the walk's credential check ends them (once kprofd sees dumpability the
	# kernel's way, security item 2; skipped until then).
	for r in 1 2 3 4 5 6; do
		pids=()
		for i in 1 2 3 4; do spawn_nb; pids+=("$SP"); nbctl attach "$SP" --freq 99 >/dev/null; done
		kill -9 "${pids[@]}"
		wait_for 10 none_attached || fail "$l: housekeeping round $r" "$(ctl list)"
	done
	alive "$l: housekeeping walk after exits"
	rm -f "$TDIR/nd-go"
	pids=()
	for i in 1 2 3; do spawn_nd; pids+=("$SP"); nbctl attach "$SP" --freq 99 >/dev/null; done
	touch "$TDIR/nd-go"
	if wait_for 5 none_attached; then pass "$l: housekeeping ended the non-dumpable targets"
	else skip "$l: non-dumpable targets" "not ended by this kprofd (security item 2)"; fi
	alive "$l: housekeeping walk"
	kill -9 "${pids[@]}" 2>/dev/null
	# 3. --duration timers, and exits, each ending a target (and trimming).
	pids=()
	for i in 1 2 3; do spawn_nb; pids+=("$SP"); nbctl attach "$SP" --freq 99 --duration 1 >/dev/null; done
	for i in 1 2; do spawn_nb; nbctl attach "$SP" --freq 99 >/dev/null; kill -9 "$SP"; done
	wait_for 15 none_attached && pass "$l: --duration and exits ended their targets" ||
		fail "$l: durations" "$(ctl list)"
	alive "$l: duration timers and exits"
	kill -9 "${pids[@]}" 2>/dev/null
	# 4. --children of a fork loop: children attached and dropped inside drains.
	rm -f "$TDIR/fork-go"
	setpriv --reuid="$NB" --regid="$NB" --clear-groups sh -c 'until [ -e "$0" ]; do /bin/sleep 0.05; done
		i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; exec sleep 600' "$TDIR/fork-go" &
	SP=$!; PIDS+=("$SP")
	wait_for 5 grep -qx sh "/proc/$SP/comm"
	nbctl attach "$SP" --freq 999 --children >/dev/null || fail "$l: attach --children" "refused"
	touch "$TDIR/fork-go"
	wait_for 30 eval '[ "$(cat /proc/'"$SP"'/comm)" = sleep ]'
	nbctl detach "$SP" >/dev/null
	kill -9 "$SP"
	alive "$l: a followed fork loop"
}

ST=$TDIR/state/profiles
# Run 1: nothing kept (max_kept 0): each end drops the profile it just ended.
cat >"$TDIR/k0.conf" <<EOF
[limits]
max_kept = 0
EOF
start_daemon --config "$TDIR/k0.conf" || { fail "daemon starts" "see log"; exit 1; }
run_walks "max_kept 0"
spawn_nb; nbctl attach "$SP" --freq 99 >/dev/null
if stop_daemon; then pass "max_kept 0: SIGTERM with an attached target: exit 0"
else fail "max_kept 0: SIGTERM" "exit $?: $(tail -3 "$TDIR/kprofd.log")"; fi
rm -rf "$TDIR/state"

# Run 2: nobody's kept-profile quota full (2), the global limit far from reached.
cat >"$TDIR/k2.conf" <<EOF
[limits]
max_kept = 64
max_kept_per_uid = 2
EOF
L0=$(wc -l <"$TDIR/kprofd.log")
start_daemon --config "$TDIR/k2.conf" || { fail "daemon starts" "see log"; exit 1; }
sleep 600 & ROOTP=$!; PIDS+=("$ROOTP")
ctl attach "$ROOTP" --freq 99 >/dev/null || fail "root attaches" "$(tail -2 "$TDIR/kprofd.log")"
fill_quota 2
run_walks "quota full"
# SIGTERM: nobody's attached targets end first (the newest), each trimming one of its kept
# profiles; the walk must still reach and save root's target.
fill_quota 2
for i in 1 2 3; do spawn_nb; nbctl attach "$SP" --freq 99 >/dev/null; done
if stop_daemon; then pass "quota full: SIGTERM with attached targets: exit 0"
else fail "quota full: SIGTERM" "exit $?: $(tail -3 "$TDIR/kprofd.log")"; fi
ls "$ST"/"$ROOTP"-*.kprof >/dev/null 2>&1 && pass "root's target attached earlier saved at SIGTERM" ||
	fail "root's profile saved" "$(ls "$ST")"
n=$(tail -n +$((L0 + 1)) "$TDIR/kprofd.log" | grep -c 'detached: kprofd stopping')
[ "$n" -ge 4 ] && pass "every attached target ended at SIGTERM ($n)" || fail "ended at SIGTERM" "$n"
finish
