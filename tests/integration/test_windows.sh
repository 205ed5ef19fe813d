#!/usr/bin/env bash
# Time windows (issue 17 item 2) with 1 s windows ([windows] seconds = 1): a native workload whose
# hot function changes half-way (tests/fixtures/phases.c: phase_alpha for 3 s, then
# phase_beta); `report/folded/hcct --since/--until` select the right phase, `diff` shows the
# change, `export --base` is read by the real `go tool pprof -diff_base`, the pprof carries
# time_nanos/duration_nanos of the range; a full state disk (a small tmpfs filled up): windows
# kept in memory, counted, written once there is room again; windows survive a kprofd restart,
# a torn window file is detected, renamed .bad and counted without losing the others; bad
# --since input gets a clear error; the HTTP endpoint's since=/until= answer from the windows.
# Not sanitized: timing-heavy (phases of 3 s, windows of 1 s).
# Needs root (BPF, mount); the go tool pprof part skips without go.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "windows" "needs root"; exit 0; fi
trap 'umount -l "$TDIR/state" 2>/dev/null; cleanup' EXIT

PH=$TDIR/phases
cc -O1 -g -fno-omit-frame-pointer -o "$PH" "$(dirname "$0")/../fixtures/phases.c" ||
	{ fail "build phases" "cc failed"; exit 1; }
mkdir -p "$TDIR/state"
FULL=0
if mount -t tmpfs -o size=2m tmpfs "$TDIR/state" 2>/dev/null; then FULL=1; fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The endpoint needs its bearer token (test_http_auth.sh).
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[windows]\nseconds = 1\n[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" "$TDIR/token" \
	>"$TDIR/kprofd.conf"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }

# A full state disk from the start: every window write fails (ENOSPC).
if [ "$FULL" = 1 ]; then
	dd if=/dev/zero of="$TDIR/state/filler" bs=64k 2>/dev/null
fi

now() { date +%s.%N; }
"$PH" 3000 2>"$TDIR/ph.err" &
PH_PID=$!
PIDS+=("$PH_PID")
wait_for 5 grep -q ready "$TDIR/ph.err" || { fail "phases starts" ""; exit 1; }
T0=$(now)
check "attach phases" ctl attach "$PH_PID" --freq 99
wait_for 10 grep -q beta "$TDIR/ph.err"
TB=$(now)
wait_for 10 grep -q done "$TDIR/ph.err"
TD=$(now)
sleep 1.5 # the last window of beta is cut

# share RANGE... FUNC: FUNC's self % in `report --json` of that range.
share() {
	local f=${*: -1}
	ctl report "$PH_PID" "${@:1:$#-1}" --top 0 --json | python3 -c "import json,sys
r = json.load(sys.stdin); n = r['total_samples'] or 1
print(int(100 * sum(e['self'] for e in r['entries'] if e['function'] == '$f') / n))"
}
A_A=$(share --since "@$T0" --until "@$TB" phase_alpha)
A_B=$(share --since "@$T0" --until "@$TB" phase_beta)
B_A=$(share --since "@$TB" --until "@$TD" phase_alpha)
B_B=$(share --since "@$TB" phase_beta)
ALL_A=$(share phase_alpha)
ALL_B=$(share phase_beta)
if [ "${A_A:-0}" -ge 60 ] && [ "${A_B:-100}" -le 30 ] && [ "${B_B:-0}" -ge 60 ] && [ "${B_A:-100}" -le 30 ]; then
	pass "report --since/--until picks the phase: alpha range ${A_A}% alpha/${A_B}% beta, beta range ${B_B}% beta/${B_A}% alpha"
else
	fail "report ranges" "alpha range ${A_A}/${A_B}, beta range ${B_B}/${B_A}"
fi
if [ "${ALL_A:-0}" -ge 25 ] && [ "${ALL_B:-0}" -ge 25 ]; then
	pass "without --since: everything (${ALL_A}% alpha, ${ALL_B}% beta)"
else
	fail "whole profile" "${ALL_A}% alpha, ${ALL_B}% beta"
fi
ctl report "$PH_PID" --since "@$TB" --top 3 | grep -q "^time range: .* window" &&
	pass "report says the time range" || fail "report range line" "$(ctl report "$PH_PID" --since "@$TB" --top 3)"
FA=$(ctl folded "$PH_PID" --since "@$TB" | grep -c phase_beta)
FB=$(ctl folded "$PH_PID" --since "@$TB" | awk '/phase_alpha/ {n += $NF} END {print n + 0}')
FT=$(ctl folded "$PH_PID" --since "@$TB" | awk '{n += $NF} END {print n + 0}')
[ "$FA" -ge 1 ] && [ $((FB * 100)) -le $((FT * 30)) ] && pass "folded --since: beta stacks ($FB of $FT samples alpha)" ||
	fail "folded --since" "$FA beta lines, alpha $FB of $FT"
ctl hcct "$PH_PID" --since "@$TB" --phi 0.2 --json | python3 -c "import json,sys
r = json.load(sys.stdin)
hot = [n['function'] for n in r['nodes'] if n['hot']]
assert 'phase_beta' in hot and 'phase_alpha' not in hot, hot
assert all(n['count'] >= n['err'] for n in r['nodes'])" && pass "hcct --since: the merged summaries name phase_beta hot" ||
	fail "hcct --since" "$(ctl hcct "$PH_PID" --since "@$TB" --phi 0.2 | tail -5)"

ctl diff "$PH_PID" --since "@$TB" --until "@$TD" --base-since "@$T0" --base-until "@$TB" --json >"$TDIR/diff.json"
python3 - "$TDIR/diff.json" <<'PY' && pass "diff: phase_beta up, phase_alpha down" || fail "diff" "$(cat "$TDIR/diff.json")"
import json, sys
d = {f["function"]: f["delta_pct"] for f in json.load(open(sys.argv[1]))["functions"]}
assert d.get("phase_beta", 0) > 30 and d.get("phase_alpha", 0) < -30, d
PY
ctl diff "$PH_PID" --since "@$TB" >/dev/null 2>"$TDIR/err"
[ $? = 2 ] && grep -q "base is required" "$TDIR/err" && pass "diff without a base: usage error" || fail "diff without base" "$(cat "$TDIR/err")"

# export --base, read by the real go tool pprof.
if ctl export "$PH_PID" --since "@$TB" --until "@$TD" -o "$TDIR/new.pb.gz" \
	--base "$TDIR/base.pb.gz" --base-since "@$T0" --base-until "@$TB"; then
	pass "export --base writes both sides"
else
	fail "export --base" "exit $?"
fi
if command -v go >/dev/null && go version >/dev/null 2>&1; then
	go tool pprof -top -diff_base "$TDIR/base.pb.gz" "$TDIR/new.pb.gz" >"$TDIR/top" 2>&1
	if grep -Eq '^ *[0-9.]+m?s .*phase_beta' "$TDIR/top" && grep -Eq '^ *-[0-9.]+m?s .*phase_alpha' "$TDIR/top"; then
		pass "go tool pprof -diff_base: phase_beta positive, phase_alpha negative"
	else
		fail "go tool pprof -diff_base" "$(head -15 "$TDIR/top")"
	fi
	go tool pprof -raw "$TDIR/new.pb.gz" 2>/dev/null >"$TDIR/raw"
	python3 - "$TDIR/raw" "$TB" "$TD" <<'PY' && pass "pprof time_nanos/duration_nanos: the range's windows" || fail "pprof time" "$(head -5 "$TDIR/raw")"
import re, sys, datetime
raw = open(sys.argv[1]).read()
tb, td = float(sys.argv[2]), float(sys.argv[3])
m = re.search(r"^Time: (\S+ \S+) ", raw, re.M)
t = datetime.datetime.strptime(m.group(1)[:26], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
d = float(re.search(r"^Duration: ([0-9.]+)", raw, re.M).group(1))
assert tb - 1.5 <= t <= tb + 1.5, (t, tb)
assert 1.0 <= d <= (td - tb) + 2.5, d
PY
else
	skip "go tool pprof" "go not installed"
fi

# The HTTP endpoint's since=/until=: the kept windows at once.
URL="http://127.0.0.1:$PORT/debug/pprof/profile?pid=$PH_PID"
if curl -sf -H "$AUTH" -o "$TDIR/http.pb.gz" "$URL&since=@$TB&until=@$TD"; then
	if command -v go >/dev/null && go version >/dev/null 2>&1; then
		go tool pprof -top "$TDIR/http.pb.gz" 2>/dev/null | grep -E '^ *[0-9.]+m?s' | head -1 | grep -q phase_beta &&
			pass "http since=/until=: go tool pprof's top function is phase_beta" ||
			fail "http since=" "$(go tool pprof -top "$TDIR/http.pb.gz" 2>&1 | head -8)"
	else
		pass "http since=/until=: a profile ($(stat -c %s "$TDIR/http.pb.gz") bytes)"
	fi
else
	fail "http since=" "curl failed"
fi
CODE=$(curl -s -H "$AUTH" -o "$TDIR/body" -w '%{http_code}' "$URL&since=2099-01-01T00:00:00Z")
[ "$CODE" = 404 ] && grep -q "no kept time window" "$TDIR/body" && pass "http: a range without windows: 404, said" ||
	fail "http empty range" "$CODE $(cat "$TDIR/body")"

# Bad input.
ctl report "$PH_PID" --since garbage >/dev/null 2>"$TDIR/err"
[ $? = 2 ] && grep -q "is not a time" "$TDIR/err" && pass "--since garbage: usage error ($(head -c 90 "$TDIR/err"))" ||
	fail "--since garbage" "$(cat "$TDIR/err")"
ctl report "$PH_PID" --since "@$TD" --until "@$T0" >/dev/null 2>"$TDIR/err"
[ $? = 1 ] && grep -q "range is empty" "$TDIR/err" && pass "--until before --since: said" || fail "empty range" "$(cat "$TDIR/err")"
ctl report "$PH_PID" --since "2099-01-01 00:00" >/dev/null 2>"$TDIR/err"
[ $? = 1 ] && grep -q "no kept time window" "$TDIR/err" && pass "a range without windows: said" || fail "future range" "$(cat "$TDIR/err")"

# sjson KEY: a number of status --json.
sjson() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
if [ "$FULL" = 1 ]; then
	FAILED=$(sjson window_write_failures)
	UNSAVED=$(sjson windows_unsaved)
	[ "$FAILED" -ge 1 ] && [ "$UNSAVED" -ge 3 ] && pass "full disk: $FAILED failed writes, $UNSAVED windows kept in memory (and the ranges above answered)" ||
		fail "full disk" "failures $FAILED, unsaved $UNSAVED"
	rm -f "$TDIR/state/filler"
	unsaved_none() { [ "$(sjson windows_unsaved)" = 0 ]; }
	wait_for 5 unsaved_none &&
		pass "room again: every window written" || fail "written later" "unsaved $(sjson windows_unsaved)"
else
	skip "full disk" "cannot mount a tmpfs here"
fi

# Restart: every window back but those of a torn file (a tick's batch), detected and set aside.
# A busy loop's windows first, so that the newest files are its own (the phases' may all be in
# one batch, written when the disk had room again).
sh -c 'while :; do :; done' &
LOOP=$!
PIDS+=("$LOOP")
ctl attach "$LOOP" --freq 99 >/dev/null
F0=$(sjson window_files)
two_more() { [ "$(sjson window_files)" -ge $((F0 + 2)) ]; }
wait_for 30 two_more || fail "the loop's windows are written" "$(sjson window_files) files, $F0 before"
ctl detach "$LOOP" >/dev/null
kill "$LOOP"
N1=$(sjson windows)
stop_daemon
ls "$TDIR"/state/profiles/w*.kpw >"$TDIR/files"
FRAMES="$(dirname "$0")/kpw_frames.py"
NF=$(python3 "$FRAMES" $(cat "$TDIR/files"))
TORN=$(tail -1 "$TDIR/files")
LOST=$(python3 "$FRAMES" "$TORN")
truncate -s $(($(stat -c %s "$TORN") - 10)) "$TORN"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon restarts" "see log"; exit 1; }
N2=$(sjson windows)
BAD=$(sjson window_bad_files)
INMEM=$(sjson windows_in_memory)
[ "$BAD" = 1 ] && [ "$N2" = $((NF - LOST)) ] && [ "$NF" -ge "$N1" ] && [ -e "$TORN.bad" ] && [ "$INMEM" = 0 ] &&
	grep -q "torn" "$TDIR/kprofd.log" &&
	pass "restart: $N2 of $NF windows back (on disk only), the torn file's $LOST renamed .bad and counted" ||
	fail "restart" "windows $N1 -> on disk $NF -> $N2 ($INMEM in memory), bad $BAD, $(grep -i window "$TDIR/kprofd.log" | tail -3)"
B2=$(share --since "@$TB" phase_beta)
[ "${B2:-0}" -ge 60 ] && pass "after the restart: the beta range (read from the files) still ${B2}% phase_beta" || fail "range after restart" "$B2"
finish
