#!/usr/bin/env bash
# The fallbacks for kernels older than this one, run here on every check (test_kernels.sh runs
# them on a real 5.10 under QEMU, not on every machine): kprofd started with
# KPROF_FEATURES_OFF=attach-cookie,per-thread-sampling, as on Linux 5.10-5.14, loads no program
# calling bpf_get_attach_cookie and
#   1. status says both are off, why, and the versions that have them (text and JSON);
#   2. two targets at 99 and 999 Hz are each sampled by their own per-CPU set only (the sampler
#      tells the sets apart by their events' period): their sample rates stay apart;
#   3. attach --calls counts every call exactly (uprobes and uretprobes find their function by
#      address, kp_probe_cookies);
#   4. paths traces every activation of mj_paths (block uprobes found by address).
. "$(dirname "$0")/lib.sh"
export KPROF_FEATURES_OFF=attach-cookie,per-thread-sampling
start_daemon || { fail "daemon starts" "$(cat "$TDIR/kprofd.log")"; exit 1; }
unset KPROF_FEATURES_OFF

# 1. The feature list.
ctl status >"$TDIR/st"
if grep -q "^  attach-cookie  *off  Linux 5.15: turned off by KPROF_FEATURES_OFF" "$TDIR/st" &&
	grep -q "^  per-thread-sampling  *off  Linux 6.7" "$TDIR/st" && ! kernel_has attach-cookie &&
	kernel_has cgroup-ancestors; then
	pass "status: attach-cookie and per-thread-sampling off, with the versions that have them"
else fail "status features" "$(sed -n '/^features:/,$p' "$TDIR/st")"; fi

# 2. Two frequencies at once: each target only by its own set.
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
A=$MJ_PID
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
B=$MJ_PID
ctl attach "$A" --freq 99 >/dev/null && ctl attach "$B" --freq 999 >/dev/null
cpu0_a=$(cpu_ms "$A") cpu0_b=$(cpu_ms "$B")
wait_for 60 at_least_samples "$B" 2000 || fail "samples at 999 Hz" "$(ctl list)"
sa=$(samples "$A") sb=$(samples "$B")
ca=$(($(cpu_ms "$A") - cpu0_a)) cb=$(($(cpu_ms "$B") - cpu0_b))
# Samples per CPU second: 99 and 999 at most (a set samples a target only while it runs).
python3 - "$sa" "$ca" "$sb" "$cb" <<'PY'
import sys
sa, ca, sb, cb = map(int, sys.argv[1:])
ra, rb = sa / max(ca, 1) * 1000, sb / max(cb, 1) * 1000
ok = 50 <= ra <= 130 and 600 <= rb <= 1100
print(("PASS" if ok else "FAIL") + f": per-CPU sets told apart by their period: {ra:.0f} samples per CPU second at 99 Hz, {rb:.0f} at 999 Hz ({sa} in {ca} ms, {sb} in {cb} ms)")
PY
kill "$A" "$B"

# 3. Exact call counts through uprobes found by address.
start_minijit --wait-usr1 --rounds 50 --truth --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
check "attach --calls without attach cookies" ctl attach "$P" --calls
kill -USR1 "$P"
wait "$P"
wait_for 10 state_is "$P" exited
ctl report "$P" --top 0 --json >"$TDIR/r.json"
python3 - "$MJ_OUT" "$TDIR/r.json" <<'PY'
import json, sys
truth = {l.split()[1]: int(l.split()[5]) for l in open(sys.argv[1]) if l.startswith("func ")}
r = json.load(open(sys.argv[2]))
calls = {e["function"]: e["calls"] for e in r["entries"] if e["kind"] == "jit"}
ok = truth and all(calls.get(f, 0) == n for f, n in truth.items())
print(("PASS" if ok else "FAIL") + f": exact counts equal minijit's truth without cookies: {calls} vs {truth}")
ok = r["target"]["call_events"] == 2 * sum(truth.values())
print(("PASS" if ok else "FAIL") + f": one entry and one return event per call ({r['target']['call_events']})")
PY

# 4. Path profiles through block uprobes found by address.
start_minijit --wait-usr1 --rounds 3 --paths 100 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl paths "$P" mj_paths --duration 60 --top 0 --json >"$TDIR/p.json" 2>"$TDIR/p.err" &
C=$!
wait_for 20 grep -q tracing "$TDIR/p.err"
kill -USR1 "$P"
wait "$P"
if wait "$C" && python3 -c "import json,sys
r = json.load(open('$TDIR/p.json'))
sys.exit(not (r['activations'] == 300 and r['lost_events'] == 0 and r['aborted'] == 0))"; then
	pass "paths without cookies: 300 activations, none lost or aborted"
else fail "paths without cookies" "$(cat "$TDIR/p.err") $(head -c 300 "$TDIR/p.json")"; fi
finish
