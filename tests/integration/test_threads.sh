#!/usr/bin/env bash
# Per-thread sampling (ARCHITECTURE.md §1.2): an attached process is sampled by one cpu-clock
# event per thread, which the threads it creates inherit. Checked on real processes (the
# threadmill fixture): one event per existing thread; threads created after the attach, and
# theirs, are sampled; a sleeping target adds no sampling interrupts (the BPF side's own count,
# and the machine's local timer interrupts, which the per-CPU events of `--sampling cpus` do
# raise by about CPUs x 999 a second); a thread storm after the attach and during it leaves
# kprofd well, gives no thread two events (samples per storm thread match its CPU time) and
# leaks no fd or BPF link; the thread limit is counted and said. Needs root and Linux 6.7+.
# Not sanitized: a minute of interrupt counting and thread storms; kprofd's thread code runs in test_record and test_pidns there.
# Alone: it counts the host's local timer interrupts.
. "$(dirname "$0")/lib.sh"
THREADMILL=$BUILD/threadmill
[ -x "$THREADMILL" ] || { fail "threadmill fixture" "$THREADMILL not built (make)"; exit 1; }

# start_tm ARGS...: threadmill in the background, ready; sets TM (pid) and TM_ERR (its stderr).
start_tm() {
	TM_ERR=$TDIR/tm.$RANDOM.err
	"$THREADMILL" "$@" 2>"$TM_ERR" &
	TM=$!
	PIDS+=("$TM")
	wait_for 10 grep -q ready "$TM_ERR"
}
status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# target_key PID KEY: KEY of the attached session of PID
target_key() {
	ctl list --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid'] == $1]
print(t[0]['$2'] if t else '')"
}
# func_samples PID FUNC: samples whose stack holds FUNC
func_samples() { ctl folded "$1" | awk -v f="$2" 'index($0, f) { s += $NF } END { print s + 0 }'; }
has_samples() { [ "$(func_samples "$1" "$2")" -ge "$3" ]; }
kd_fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
kd_perf_fds() { ls -l "/proc/$DAEMON_PID/fd" | grep -c 'perf_event'; }
loc() { awk '/^ *LOC:/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }
# loc_added PID: local timer interrupts a second that attaching PID at 999 Hz adds: the median,
# over 6 pairs of 1 s windows (detached, attached), of the difference (other work on the
# machine comes in bursts; pairing and the median leave them out).
loc_added() {
	local d=() a b c e i
	for i in 1 2 3 4 5 6; do
		a=$(loc); sleep 1; b=$(loc)
		ctl attach "$1" --freq 999 >/dev/null || return 1
		c=$(loc); sleep 1; e=$(loc)
		ctl detach "$1" >/dev/null || return 1
		d+=($(((e - c) - (b - a))))
	done
	printf '%s\n' "${d[@]}" | sort -n | awk '{ v[NR] = $1 } END { print int((v[3] + v[4]) / 2) }'
}

start_daemon || { fail "daemon starts" "see log"; exit 1; }
need_feature per-thread-sampling "per-thread sampling"
FDS0=$(kd_fds)
LINKS0=$(our_links)

# One event per thread of a multi-threaded process; threads it creates later inherit theirs.
start_tm -t 4 -b 300 || { fail "threadmill starts" "$(cat "$TM_ERR")"; exit 1; }
out=$(ctl attach "$TM" --freq 999)
check "attach a 5-thread process" [ "$(target_key "$TM" thread_events)" = 5 ]
echo "$out" | grep -q ", 5 thread events" && pass "attach says its thread events" ||
	fail "attach says its thread events" "$out"
check "one perf event fd per thread" [ "$(kd_perf_fds)" = 5 ]
kill -USR1 "$TM"
if wait_for 20 has_samples "$TM" late_worker 30 && wait_for 20 has_samples "$TM" late_grandchild 30; then
	pass "threads created after the attach, and theirs, are sampled ($(func_samples "$TM" late_worker) + $(func_samples "$TM" late_grandchild) samples)"
else
	fail "threads created after the attach are sampled" "$(ctl folded "$TM" | tail -5)"
fi
check "inherited events take no fd" [ "$(kd_perf_fds)" = 5 ]

# A sleeping target: no sampling interrupt at all (kp_sample's own count), and the machine's
# local timer interrupts barely move.
wait_for 10 grep -q "late done" "$TM_ERR"
sleep 0.2
r0=$(status_key sampler_runs); sleep 3; r1=$(status_key sampler_runs)
check "a sleeping target runs the sampler no more ($((r1 - r0)) runs in 3 s)" [ $((r1 - r0)) -lt 10 ]
ctl detach "$TM" >/dev/null
added=$(loc_added "$TM")
if [ -n "$added" ] && [ "$added" -lt 200 ]; then
	pass "a sleeping target at 999 Hz adds $added local timer interrupts/s (< 200)"
else
	fail "a sleeping target adds no interrupts" "added ${added:-?}/s (limit 200)"
fi
kill "$TM"

# A thread storm after the attach: each storm thread burns 2 ms, so it is sampled about twice
# at 999 Hz (a thread with two events would be sampled four times).
start_tm -t 2 -c 4 -w 2000 || { fail "threadmill starts" "$(cat "$TM_ERR")"; exit 1; }
ctl attach "$TM" --freq 999 >/dev/null
fds=$(kd_fds)
kill -USR2 "$TM"; sleep 3; kill -USR2 "$TM"
wait_for 20 grep -q "storm stopped" "$TM_ERR"
n=$(sed -n 's/storm stopped: \([0-9]*\) threads/\1/p' "$TM_ERR" | tail -1)
check "kprofd well after a storm of ${n:-?} threads" ctl status
check "the storm took no fd" [ "$(kd_fds)" = "$fds" ]
s=$(func_samples "$TM" storm_worker)
python3 -c "import sys; r = $s / max(1, ${n:-0}); sys.exit(not (${n:-0} >= 300 and 1.0 <= r <= 2.6))" &&
	pass "storm threads sampled once per ms of CPU ($s samples, $n threads)" ||
	fail "storm threads sampled once per ms of CPU" "$s samples for ${n:-?} threads of 2 ms"
ctl detach "$TM" >/dev/null
kill "$TM"

# Attach while 4 threads create threads and 1000 others make the attach take a while: the
# threads created before their creator's event are reported and get one; none is left out,
# none gets two.
start_tm -t 1000 -c 4 -w 2000 || { fail "threadmill starts" "$(cat "$TM_ERR")"; exit 1; }
kill -USR2 "$TM"; sleep 0.5
rep0=$(status_key thread_reports)
check "attach during a storm" ctl attach "$TM" --freq 999
sleep 1; kill -USR2 "$TM"; wait_for 20 grep -q "storm stopped" "$TM_ERR"
# Threads still being created when the attach's scans end get theirs at the next scan (kprofd
# scans again every second while a target has threads without an event).
none_unsampled() { [ "$(target_key "$TM" threads_unsampled)" = 0 ]; }
if wait_for 5 none_unsampled; then
	pass "no thread left unsampled"
else
	fail "no thread left unsampled" "$(target_key "$TM" threads_unsampled) threads without an event after 5 s"
fi
echo "threads reported without an event during the attach: $(($(status_key thread_reports) - rep0))"
s0=$(func_samples "$TM" storm_worker)
kill -USR2 "$TM"; sleep 2; kill -USR2 "$TM"
wait_for 20 eval '[ "$(grep -c "storm stopped" "$TM_ERR")" -ge 2 ]'
n=$(sed -n 's/storm stopped: \([0-9]*\) threads/\1/p' "$TM_ERR" | tail -1)
s=$(($(func_samples "$TM" storm_worker) - s0))
python3 -c "import sys; r = $s / max(1, ${n:-0}); sys.exit(not (${n:-0} >= 300 and 1.0 <= r <= 2.6))" &&
	pass "after it, storm threads sampled once per ms of CPU ($s samples, $n threads)" ||
	fail "after an attach during a storm, storm threads sampled once per ms of CPU" \
		"$s samples for ${n:-?} threads of 2 ms"
ctl detach "$TM" >/dev/null
kill "$TM"
check "no perf event left open" [ "$(kd_perf_fds)" = 0 ]
check "fds back to $FDS0" [ "$(kd_fds)" = "$FDS0" ]
check "no BPF link leaked ($LINKS0 of this kprofd)" [ "$(our_links)" = "$LINKS0" ]

# The thread limit: threads beyond it are counted and said.
stop_daemon
start_daemon --max-threads 3 || { fail "daemon starts with --max-threads 3" "see log"; exit 1; }
start_tm -t 5 || { fail "threadmill starts" "$(cat "$TM_ERR")"; exit 1; }
out=$(ctl attach "$TM" --freq 99)
echo "$out" | grep -q ", 3 thread events, 3 threads not sampled (thread event limit reached)" &&
	pass "attach says threads beyond the limit are not sampled" || fail "attach over the limit" "$out"
ctl list | grep -q "3+3!" && ctl list | grep -q "pid $TM: 3 threads not sampled" &&
	pass "list says it" || fail "list over the limit" "$(ctl list)"
grep -q "pid $TM: 3 of its 6 threads are not sampled" "$TDIR/kprofd.log" &&
	pass "kprofd logs it" || fail "kprofd logs the limit" "$(grep "pid $TM" "$TDIR/kprofd.log")"
ctl detach "$TM" >/dev/null
check "limited target: no perf event left open" [ "$(kd_perf_fds)" = 0 ]
kill "$TM"

# The same check on per-CPU events must fail: they interrupt every CPU at 999 Hz.
stop_daemon
start_daemon --sampling cpus || { fail "daemon starts with --sampling cpus" "see log"; exit 1; }
start_tm -t 4 || { fail "threadmill starts" "$(cat "$TM_ERR")"; exit 1; }
ctl attach "$TM" --freq 999 >/dev/null
r0=$(status_key sampler_runs); sleep 2; r1=$(status_key sampler_runs)
check "per-CPU events run the sampler at CPUs x 999/s ($(((r1 - r0) / 2))/s)" [ $((r1 - r0)) -gt 1000 ]
ctl detach "$TM" >/dev/null
added=$(loc_added "$TM")
if [ -n "$added" ] && [ "$added" -ge 200 ]; then
	pass "the interrupt check catches per-CPU events (+$added/s)"
else
	fail "the interrupt check catches per-CPU events" "added ${added:-?}/s (expected >= 200)"
fi
finish
