#!/usr/bin/env bash
# Off-CPU time over the pprof HTTP endpoint (issue 33): GET /debug/pprof/profile?type=off_cpu
# (and type=wall) answers with the four sample types of an off-CPU profile (samples, cpu,
# off_cpu, wall), the one asked the default, as the real `go tool pprof` reads it (-raw, -top,
# -sample_index). The offcpu_mix fixture's worker waits on a futex and in nanosleep while perf
# records the same run's context switches (perf record -e sched:sched_switch -g): the share of
# the futex in the worker's waits of the 3 s interval is kprof's within 3 points of perf's and
# within 5 of the fixture's own truth, its wall time in the interval about the interval. Also:
# type=cpu (and none) as before; since= with type=off_cpu (the kept windows); bad types and a
# pid without off-CPU time are refused with a clear status; the whole host (no pid=) with
# type=wall; a process asleep all along has its waits (no CPU sample needed). Every request
# carries the bearer token. The fixture runs until its last request, then is told to end
# (SIGUSR2), whatever the machine's pace. Needs root (BPF, perf), go and python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/offcpu_lib.sh"
if [ "$(id -u)" != 0 ]; then skip "off-CPU over HTTP" "needs root"; exit 0; fi
if ! command -v go >/dev/null; then skip "off-CPU over HTTP" "go is not installed"; exit 0; fi
[ -x "$MIX" ] || { fail "offcpu_mix fixture" "$MIX not built (make)"; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT/debug/pprof/profile
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\nmax_seconds = 60\nmax_waiting_per_source = 8\n' \
	"$PORT" "$TDIR/token" \
	>"$TDIR/kprofd.conf"
export HOME=$TDIR PPROF_TMPDIR=$TDIR
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }

# get QUERY: the status; the body in $TDIR/body.
get() { curl -s -o "$TDIR/body" -w '%{http_code}' --max-time 60 -H "$AUTH" "$URL?$1"; }
# get_bg NAME QUERY: get in the background, its answer in $TDIR/NAME.body and its status in
# NAME.code; got NAME waits for it (in this shell, not in a $(...)), makes its answer the body
# and its status $GOT.
declare -A GETS
get_bg() {
	curl -s -o "$TDIR/$1.body" -w '%{http_code}' --max-time 60 -H "$AUTH" "$URL?$2" >"$TDIR/$1.code" &
	GETS[$1]=$!
}
got() { wait "${GETS[$1]}"; cp "$TDIR/$1.body" "$TDIR/body"; GOT=$(cat "$TDIR/$1.code"); }
# raw NAME: go tool pprof -raw of the last body, as pprof_raw.py's JSON in $TDIR/NAME.json.
raw() {
	cp "$TDIR/body" "$TDIR/$1.pb.gz"
	go tool pprof -raw "$TDIR/$1.pb.gz" 2>"$TDIR/$1.err" |
		python3 "$(dirname "$0")/pprof_raw.py" >"$TDIR/$1.json"
}
jq1() { python3 -c "import json,sys; d=json.load(open('$TDIR/$1.json')); print($2)"; }
val() { awk -v k="$2" '$1 == k { print $2 }' "$TDIR/$1"; }

start_mix 600 || { fail "fixture" "not ready"; exit 1; } # ended by SIGUSR2 below
ctl attach "$MIXP" --off-cpu >/dev/null || { fail "attach --off-cpu" "refused"; exit 1; }
kill -USR1 "$MIXP"
wait_for 10 mix_tid kpoc-worker || { fail "fixture" "no worker thread"; exit 1; }
WT=$(mix_tid kpoc-worker)

# The interval profile, with perf recording the worker's switches meanwhile.
PERF_MONO=1 perf_start sw "prev_comm == \"kpoc-worker\" || next_comm == \"kpoc-worker\"" ||
	{ fail "perf record" "$(head -c 300 "$TDIR/sw.log")"; exit 1; }
code=$(get "seconds=3&pid=$MIXP&type=off_cpu")
[ "$code" = 200 ] || { fail "type=off_cpu" "status $code: $(head -c 300 "$TDIR/body")"; exit 1; }
raw off
# perf's intervals that ended in the profile's (its Time and Duration, moved to CLOCK_MONOTONIC):
# its answer may come later (while kprof-lines resolves its addresses).
window=$(go tool pprof -raw "$TDIR/off.pb.gz" 2>/dev/null | python3 -c "
import datetime, re, sys, time
t = sys.stdin.read()
m = re.search(r'^Time: (\S+ \S+?)(\.\d+)? \+0000 UTC$', t, re.M)
d = float(re.search(r'^Duration: ([\d.]+)', t, re.M).group(1))
s = datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S').replace(tzinfo=datetime.timezone.utc)
ns = int(s.timestamp()) * 10**9 + int(((m.group(2) or '.0')[1:] + '000000000')[:9])
ns -= time.time_ns() - time.monotonic_ns()
print(ns, ns + int(d * 1e9))")
perf_stop "$TDIR/perf.json" $window || fail "perf script" "$(head -c 300 "$TDIR/sw.log")"
check "go tool pprof reads the four sample types, off_cpu the default" \
	test "$(jq1 off "d['types'], d['default']")" = "['samples', 'cpu', 'off_cpu', 'wall'] off_cpu"
go tool pprof -top "$TDIR/off.pb.gz" >"$TDIR/top" 2>&1
check "go tool pprof -top shows off_cpu by default, the waits named" \
	sh -c "grep -q '^Type: off_cpu' '$TDIR/top' && grep -q do_nanosleep '$TDIR/top' && grep -q futex '$TDIR/top'"
go tool pprof -sample_index=wall -top "$TDIR/off.pb.gz" >"$TDIR/wtop" 2>&1
check "-sample_index=wall has the CPU loop and the waits" \
	sh -c "grep -q ' burn$' '$TDIR/wtop' && grep -q do_nanosleep '$TDIR/wtop'"
python3 "$(dirname "$0")/offcpu_check.py" pprof "$TDIR/off.json" kpoc-worker off_cpu >"$TDIR/k"
python3 "$(dirname "$0")/offcpu_check.py" pprof "$TDIR/off.json" kpoc-worker wall >"$TDIR/kw"
python3 "$(dirname "$0")/offcpu_check.py" perf "$TDIR/perf.json" "$WT" >"$TDIR/p"
share() { python3 -c "f, s = $(val "$1" "$2"), $(val "$1" "$3"); print('%.2f' % (100.0 * f / (f + s) if f + s else -100))"; }
kf=$(share k futex sleep) pf=$(share p futex sleep)
echo "worker's waits in the interval: kprof futex $(val k futex) ns, sleep $(val k sleep) ns;" \
	"perf futex $(val p futex) ns, sleep $(val p sleep) ns; futex share kprof $kf%, perf $pf%"
# The fixture's design judges perf's side too (offcpu_lib.sh: vs_perf): each cycle the worker
# waits 30 ms on the futex and sleeps 50 ms, whatever the load does to its CPU phase.
vs_perf "futex share of the worker's waits in the interval (points)" "$kf" "$pf" 3 37.50
wall=$(val kw total)
check "the worker's wall time in the 3 s interval is about 3 s ($wall ns)" \
	python3 -c "import sys; sys.exit(0 if 0.7 * 3e9 <= $wall <= 1.3 * 3e9 else 1)"

start_minijit --seconds 60 >/dev/null
ctl attach "$MJ_PID" >/dev/null
# The interval profiles below are asked at once (the config allows 8 waiting from this address).
get_bg wall "seconds=1&pid=$MIXP&type=wall"
get_bg cpu "type=cpu&seconds=1&pid=$MIXP"
get_bg none "seconds=1&pid=$MIXP"
# The whole host with type=wall: both targets, the minijit's CPU time and the fixture's waits.
check "whole host, type=wall: 200" test "$(get "seconds=2&type=wall")" = 200
raw host
check "whole host: the minijit's samples and the fixture's waits, by pid label" python3 -c "
import json; d = json.load(open('$TDIR/host.json'))
pids = {s['labels'].get('pid') for s in d['samples'] if s['values']['off_cpu']}
cpu = {s['labels'].get('pid') for s in d['samples'] if s['values']['cpu']}
assert '$MIXP' in pids and '$MJ_PID' not in pids and '$MJ_PID' in cpu, (pids, cpu)"
# type=wall: the same types, wall the default; type=cpu and none: CPU samples alone.
got wall
check "type=wall: 200" test "$GOT" = 200
raw wall
check "type=wall: wall is the default" test "$(jq1 wall "d['default'], len(d['types'])")" = "wall 4"
for q in "type=cpu&" ""; do
	if [ -n "$q" ]; then got cpu; else got none; fi
	check "${q:-no type}: the CPU profile as before" test "$GOT" = 200
	raw cpu
	check "${q:-no type}: two sample types" test "$(jq1 cpu "d['types']")" = "['samples', 'cpu']"
done

# Refusals.
check "type=offcpu: 400" test "$(get "seconds=1&pid=$MIXP&type=offcpu")" = 400
check "its message names the types" grep -q "cpu, off_cpu or wall" "$TDIR/body"
check "type=off_cpu with since=: the kept windows' off-CPU time" test "$(get "pid=$MIXP&type=off_cpu&since=1m")" = 200
raw since
check "since=: four sample types, off_cpu the default, the waits" python3 -c "
import json; d = json.load(open('$TDIR/since.json'))
assert d['default'] == 'off_cpu' and len(d['types']) == 4, d['types']
assert any('do_nanosleep' in s['frames'] for s in d['samples'] if s['values']['off_cpu'])"
check "type=off_cpu of a pid without off-CPU time: 404" \
	test "$(get "seconds=1&pid=$MJ_PID&type=off_cpu")" = 404
check "its message says how" grep -q "attach $MJ_PID --off-cpu" "$TDIR/body"

# The fixture's own truth of the whole run.
kill -USR2 "$MIXP"
wait_for 60 grep -q total "$MIX_OUT.out" || fail "fixture run" "no result"
tf=$(python3 -c "d = dict(l.split() for l in open('$MIX_OUT.out')); print('%.2f' % (100.0 * int(d['futex']) / (int(d['futex']) + int(d['sleep']))))")
check "futex share of the worker's waits: kprof $kf% vs the fixture's $tf% (5 points)" near "$kf" "$tf" 5

# A process asleep nearly all the time (a few wake-ups a second, hardly a CPU sample): its
# waits are the interval's off-CPU profile even without a CPU sample in it.
python3 -c 'import time
while True: time.sleep(0.05)' &
SLP=$!
PIDS+=("$SLP")
ctl attach "$SLP" --off-cpu >/dev/null || fail "attach --off-cpu a sleeper" "refused"
check "a sleeper, type=off_cpu: 200" test "$(get "seconds=2&pid=$SLP&type=off_cpu")" = 200
raw sleeper
check "a sleeper: its waits in the interval, in nanosleep" python3 -c "
import json; d = json.load(open('$TDIR/sleeper.json'))
off = [s for s in d['samples'] if s['values']['off_cpu'] and s['labels'].get('pid') == '$SLP']
assert sum(s['values']['off_cpu'] for s in off) > 0.5e9, d['samples'][:3]
assert any('nanosleep' in f for s in off for f in s['frames']), off[:3]"
ctl detach "$SLP" >/dev/null
finish
