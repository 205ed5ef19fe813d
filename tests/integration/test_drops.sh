#!/usr/bin/env bash
# A full ring buffer loses samples; they must be counted per CPU, reported by `status`, and the
# daemon must stay healthy. A one-page ring buffer at 4999 Hz on two busy processes overflows.
. "$(dirname "$0")/lib.sh"
start_daemon --ringbuf-size 4096 --drain-ms 1000 || { fail "daemon starts" "see log"; exit 1; }
for i in 1 2; do
	sh -c 'while :; do :; done' & PIDS+=("$!")
	check "attach busy process $i at 4999 Hz" ctl attach "$!" --freq 4999
done
drops() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['drops'])"; }
has_drops() { [ "$(drops)" -gt 0 ]; }
if wait_for 20 has_drops; then pass "drops counted ($(drops))"; else fail "drops counted" "$(ctl status)"; fi
ctl status
ctl status --json | python3 -c "
import json, os, sys
s = json.load(sys.stdin)
per = s['drops_per_cpu']
ok = len(per) >= os.cpu_count() and sum(per) == s['drops'] and s['samples'] > 0
print(('PASS' if ok else 'FAIL') + ': drops per CPU add up (%s = %d), samples still arrive (%d)' % (per, s['drops'], s['samples']))"
ctl status | grep -q "drops: *[1-9]" && pass "status text shows drops" || fail "status text shows drops" "$(ctl status)"
for p in "${PIDS[@]}"; do ctl detach "$p" >/dev/null; done
check "daemon healthy after overflow" ctl status
check "reports still readable" ctl report "${PIDS[0]}"
finish
