#!/usr/bin/env bash
# Off-CPU time kept (issue 33): in the time windows, across a restart of kprofd, and for a
# process attached again after one. The offcpu_mix fixture's worker waits on a futex and in
# nanosleep while perf records the same run's context switches (perf record -e
# sched:sched_switch -g).
# 1. Windows ([windows] seconds = 1): report, folded and export --off-cpu take --since/--until;
#    the whole run's range holds the whole off-CPU profile (within 0.5%), the worker's futex and
#    nanosleep shares of its waits are perf's within 3 points, a range before the attach has
#    none; the HTTP endpoint's since= with type=off_cpu answers the same time for go tool pprof.
# 2. A restart of kprofd: the ended target's off-CPU profile and the range read back from the
#    state directory are the same as before (within 0.1%).
# 3. A running target attached with --off-cpu is attached again with it after a stop and start
#    (its off-CPU profile continued: as much as before, then more) and after a SIGKILL of kprofd
#    (from its resume record); over the whole run, kprof's shares are perf's within 3 points.
# Needs root (BPF, perf), python3; go for the HTTP part.
# Not sanitized: perf and the fixture run twice for the comparison; the off-CPU code runs
# sanitized in test_offcpu, test_offcpu_http and test_offcpu_threads, windows and saving in
# test_windows_quota and test_restart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "off-CPU kept" "needs root"; exit 0; fi
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[windows]\nseconds = 1\n[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" \
	"$TDIR/token" >"$TDIR/kprofd.conf"
export HOME=$TDIR PPROF_TMPDIR=$TDIR
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }
check_py() { python3 "$(dirname "$0")/offcpu_check.py" "$@"; }
val() { awk -v k="$2" '$1 == k { print $2 }' "$TDIR/$1"; }
share() { python3 -c "t = $(val "$1" total); print('%.2f' % (100.0 * $(val "$1" "$2") / t if t else -100))"; }
close() { python3 -c "import sys; sys.exit(0 if abs($1 - $2) <= $3 else 1)"; }
rel() { python3 -c "import sys; sys.exit(0 if $2 > 0 and abs($1 - $2) <= $3 * $2 else 1)"; }
# shares NAME K P: the worker's futex and sleep shares, kprof's (K) against perf's (P)
shares() {
	local c k p
	for c in futex sleep; do
		k=$(share "$2" $c) p=$(share "$3" $c)
		check "$1: the worker's $c share kprof $k% vs perf $p% (3 points)" close "$k" "$p" 3
	done
}
F='prev_comm == "kpoc-worker" || next_comm == "kpoc-worker"'

echo "-- 1. windows"
before=$(date +%s)
sleep 1.1 # a second before the attach, for a range that has none
start_mix 4 || { fail "fixture" "not ready"; exit 1; }
ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
perf_start w1 "$F" || { fail "perf record" "$(head -c 300 "$TDIR/w1.log")"; exit 1; }
kill -USR1 "$MIXP"
wait_for 10 mix_tid kpoc-worker
WT=$(mix_tid kpoc-worker)
wait_for 60 grep -q total "$MIX_OUT.out" || fail "fixture run" "no result"
wait_for 20 state_is "$MIXP" exited
perf_stop "$TDIR/p1.json" || fail "perf script" "$(head -c 300 "$TDIR/w1.log")"
check_py perf "$TDIR/p1.json" "$WT" >"$TDIR/p1"
ctl export "$MIXP" --off-cpu --format json -o "$TDIR/all.json" || fail "export --off-cpu" "refused"
ctl export "$MIXP" --off-cpu --since 10m --format json -o "$TDIR/rng.json" ||
	fail "export --off-cpu --since" "refused"
check_py export "$TDIR/all.json" all >"$TDIR/kall"
check_py export "$TDIR/rng.json" all >"$TDIR/krng"
check_py export "$TDIR/rng.json" "$WT" >"$TDIR/kw"
check "the windows since 10 min ago hold the whole off-CPU profile ($(val krng total) vs $(val kall total) ns, 0.5%)" \
	rel "$(val krng total)" "$(val kall total)" 0.005
shares "a range of windows" kw p1
ctl report "$MIXP" --off-cpu --since 10m >"$TDIR/rep" 2>&1
check "report --off-cpu --since: the range's time and states" sh -c \
	"grep -q 'off-CPU .*: off CPU [0-9.]* s' '$TDIR/rep' && grep -q 'sleeping' '$TDIR/rep' && grep -q do_nanosleep '$TDIR/rep'"
check "folded --off-cpu --since: the waits" sh -c \
	"'$KPROFCTL' --socket '$SOCK' folded '$MIXP' --off-cpu --since 10m | grep -q '^\[sleeping\];.*do_nanosleep [0-9]*$'"
check "a range before the attach has no off-CPU time" sh -c \
	"! '$KPROFCTL' --socket '$SOCK' report '$MIXP' --off-cpu --since @$((before - 600)) --until @$before 2>/dev/null"
if command -v go >/dev/null; then
	code=$(curl -s -o "$TDIR/h.pb.gz" -w '%{http_code}' --max-time 60 -H "$AUTH" \
		"http://127.0.0.1:$PORT/debug/pprof/profile?since=10m&pid=$MIXP&type=off_cpu")
	go tool pprof -raw "$TDIR/h.pb.gz" 2>/dev/null | python3 "$(dirname "$0")/pprof_raw.py" >"$TDIR/h.json"
	hns=$(python3 -c "import json; d = json.load(open('$TDIR/h.json')); print(sum(s['values']['off_cpu'] for s in d['samples']))")
	check "HTTP since=&type=off_cpu: $code, go tool pprof reads the range's off-CPU time ($hns ns)" \
		sh -c "[ $code = 200 ] && python3 -c 'import sys; sys.exit(0 if abs($hns - $(val krng total)) <= 0.005 * $(val krng total) else 1)'"
else
	skip "HTTP since= with type=off_cpu" "go is not installed"
fi

echo "-- 2. a restart"
stop_daemon
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts again" "see log"; exit 1; }
ctl export "$MIXP" --off-cpu --format json -o "$TDIR/all2.json" || fail "export --off-cpu after a restart" "refused"
ctl export "$MIXP" --off-cpu --since 10m --format json -o "$TDIR/rng2.json" ||
	fail "export --off-cpu --since after a restart" "refused"
check_py export "$TDIR/all2.json" all >"$TDIR/kall2"
check_py export "$TDIR/rng2.json" all >"$TDIR/krng2"
check "the kept off-CPU profile is read back ($(val kall2 total) vs $(val kall total) ns)" \
	rel "$(val kall2 total)" "$(val kall total)" 0.001
check "the windows' off-CPU time is read back ($(val krng2 total) vs $(val krng total) ns)" \
	rel "$(val krng2 total)" "$(val krng total)" 0.001
check "report --off-cpu of the kept profile names the waits" sh -c \
	"'$KPROFCTL' --socket '$SOCK' report '$MIXP' --off-cpu | grep -q futex"

echo "-- 3. attached again"
start_mix 14 || { fail "fixture" "not ready"; exit 1; }
ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
perf_start w3 "$F" || { fail "perf record" "$(head -c 300 "$TDIR/w3.log")"; exit 1; }
kill -USR1 "$MIXP"
wait_for 10 mix_tid kpoc-worker
WT=$(mix_tid kpoc-worker)
off_ns() { target_json "$MIXP" off_cpu_ns; }
ge() { [ "$(off_ns)" -ge "$1" ] 2>/dev/null; }
wait_for 30 ge 1500000000 || fail "off-CPU time comes" "$(ctl list --json)"
stop_daemon
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts again" "see log"; exit 1; }
again() { [ "$(target_json "$MIXP" state) $(target_json "$MIXP" off_cpu)" = "attached True" ]; }
wait_for 20 again
n0=$(off_ns)
check "after a stop and start: attached again with --off-cpu, its off-CPU time carried ($n0 ns)" \
	sh -c "[ '$(target_json "$MIXP" off_cpu)' = True ] && [ '$(target_json "$MIXP" resumes)' = 1 ] && [ $n0 -ge 1500000000 ]"
check "its off-CPU profile goes on" wait_for 30 ge $((n0 + 1000000000))
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts after SIGKILL" "see log"; exit 1; }
check "after a SIGKILL of kprofd: attached again with --off-cpu" wait_for 20 again
wait_for 60 grep -q total "$MIX_OUT.out" || fail "fixture run" "no result"
wait_for 20 state_is "$MIXP" exited
perf_stop "$TDIR/p3.json" || fail "perf script" "$(head -c 300 "$TDIR/w3.log")"
check_py perf "$TDIR/p3.json" "$WT" >"$TDIR/p3"
ctl export "$MIXP" --off-cpu --format json -o "$TDIR/a3.json" || fail "export --off-cpu" "refused"
check_py export "$TDIR/a3.json" "$WT" >"$TDIR/k3"
shares "through two restarts" k3 p3
finish
