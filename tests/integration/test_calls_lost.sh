#!/usr/bin/env bash
# Exact mode (attach --calls) when call events are lost: a small ring buffer drained slowly,
# minijit's calls and two busy loops on a loaded machine, with and without --burst. The losses
# are counted and shown (status, hcct, JSON), and still every exact context is a path of
# minijit's call graph (main -> hot, warm, cold; warm -> leaf, tests/fixtures/minijit/minijit.c):
# a thread whose events were lost is followed again only from where its context is known
# (callsync.c). With the probes in before the first call, every context starts at mj_main.
# Not sanitized: callsync.c's gap cases run sanitized in its unit test and its daemon glue under
# test_calls.sh (this run passed under ASan/UBSan when it was written); the suite's time.
. "$(dirname "$0")/lib.sh"
start_daemon --ringbuf-size 8192 --drain-ms 500 || { fail "daemon starts" "see log"; exit 1; }
for i in 1 2; do
	sh -c 'while :; do :; done' &
	PIDS+=("$!")
done

# contexts_ok JSON WHAT [--rooted]: calls_contexts.py.
contexts_ok() { python3 "$(dirname "$0")/calls_contexts.py" "$@"; }
# field PID KEY: the target's KEY in list --all --json.
field() { ctl list --all --json | python3 -c "import json,sys
print([t for t in json.load(sys.stdin)['targets'] if t['pid']==$1][0]['$2'])"; }

# 1. Without --burst, probes in before the first call. A threshold of phi N below 1 lists every
# context the HCCT monitors (--eps as small as phi).
start_minijit --wait-usr1 --rounds 1500 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
check "attach --calls" ctl attach "$P" --calls --eps 0.00001
kill -USR1 "$P"; wait "$P"
wait_for 10 state_is "$P" exited
lost=$(field "$P" call_events_lost)
[ "${lost:-0}" -gt 0 ] && pass "events lost with a small ring buffer are counted ($lost lost, $(field "$P" call_events_skipped) left out of the tree)" ||
	fail "losses counted" "$(ctl list --all --json)"
h=$(ctl hcct "$P" --exact --phi 0.01)
grep -q "[0-9]* lost: ring buffer full" <<<"$h" && pass "hcct --exact says what was lost" ||
	fail "hcct --exact shows the losses" "$(ctl hcct "$P" --exact --phi 0.01 2>&1 | head -3)"
ctl hcct "$P" --exact --phi 0.00001 --json >"$TDIR/h1.json"
contexts_ok "$TDIR/h1.json" "without --burst, events lost" --rooted

# 2. --burst: the probe sets come and go under the same losses.
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
B=$MJ_PID
check "attach --calls --burst 200 --period 1500" ctl attach "$B" --calls --eps 0.00001 --burst 200 --period 1500
enough() { [ "$(field "$B" bursts)" -ge 4 ] && [ "$(field "$B" call_events_lost)" -gt 0 ]; }
wait_for 40 enough || fail "bursts with losses" "$(ctl list --json)"
st=$(ctl status)
grep -q "pid $B (minijit): exact mode: .*[0-9] lost: ring buffer full" <<<"$st" &&
	pass "status says what was lost" || fail "status shows the losses" "$st"
ctl detach "$B" >/dev/null
ctl hcct "$B" --exact --phi 0.00001 --json >"$TDIR/h2.json"
contexts_ok "$TDIR/h2.json" "--burst 200 --period 1500, events lost ($(field "$B" call_events_lost))"
finish
