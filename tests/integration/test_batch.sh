#!/usr/bin/env bash
# Samples added a target at a time, in runs (manager.c; issue 34): with daemon.batch_min_targets
# = 1 every drain keeps each target's samples and adds them in runs of up to 16 (or after 2 s),
# as kprofd does on a host with many targets. Nothing may be lost, late or misnamed for it:
#   1. minijit at 999 Hz beside `perf record -g` of the same run, then stopped: a reply sees
#      every sample (report's total is the profile kept at the detach that follows), the
#      leaves' shares are perf's;
#   2. a shell that spins, then execs minijit: the shell's samples still waiting for their run
#      at the exec are named by the shell (no "[unknown]" leaves), minijit's after it, also
#      those taken in code minijit mapped after the maps read at the exec's handling;
#   3. a 1 s minijit under `kprofctl record`: its profile holds all its samples at its exit.
# The daemon's log says the runs are on. Needs root; perf for the comparison (skipped without).
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
CMP=(python3 "$(dirname "$0")/names_compare.py")
cat >"$TDIR/batch.conf" <<'CONF'
[daemon]
batch_min_targets = 1
CONF
start_daemon --config "$TDIR/batch.conf" || { fail "daemon starts" "see log"; exit 1; }

# total PID: report's total samples; count PID: list's.
total() { ctl report "$1" --top 0 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])"; }

# 1. (--anon: perf names JIT code in anonymous memory from the perf map)
start_minijit --anon --seconds 600 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
check "attach minijit" ctl attach "$P" --freq 999
PERF_PID=
if command -v perf >/dev/null; then
	perf record -q -F 999 -g -p "$P" -o "$TDIR/perf.data" >/dev/null 2>&1 &
	PERF_PID=$!
fi
wait_for 60 at_least_samples "$P" 2000 || fail "samples" "$(ctl list)"
if wait_for 10 grep -q "samples added a target at a time" "$TDIR/kprofd.log"; then
	pass "runs on: $(grep -o "samples added a target at a time.*" "$TDIR/kprofd.log" | head -1)"
else fail "runs on" "$(tail -5 "$TDIR/kprofd.log")"; fi
if [ -n "$PERF_PID" ]; then
	stop_tool "$PERF_PID"
fi
# Stopped, so that nothing new comes: a reply (which drains and adds every waiting run) and
# the profile kept at the detach (which adds the target's own) hold the same samples.
kill -STOP "$P"
sleep 0.3 # the samples taken before it stopped are in the ring buffer
ctl report "$P" --top 0 --json >"$TDIR/r.json"
ctl folded "$P" >"$TDIR/r.folded"
a=$(total "$P")
check "detach" ctl detach "$P"
b=$(total "$P"); c=$(samples "$P")
kill -CONT "$P"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$b" = "$c" ] &&
	pass "a reply sees every sample: report's $a is the kept profile's $b ($c taken)" ||
	fail "reply sees all" "report $a, kept $b, taken $c"
if [ -n "$PERF_PID" ]; then
	perf script -i "$TDIR/perf.data" -F ip,sym,dso >"$TDIR/perf.script" 2>/dev/null
	"${CMP[@]}" --same-run "$TDIR/r.json" "$TDIR/r.folded" "$TDIR/perf.script" \
		leaf:mj_hot leaf:mj_warm unnamed | while read -r l; do echo "$l (in runs)"; done
else
	skip "perf comparison" "perf is not installed"
fi
kill "$P"; wait "$P" 2>/dev/null

# 2.
sh "$FIX/exec_into.sh" "$TDIR/go" "$MINIJIT" --seconds 60 >/dev/null 2>"$TDIR/exec.err" &
X=$!
PIDS+=("$X")
wait_for 10 grep -q ready "$TDIR/exec.err" || fail "exec target starts" "$(cat "$TDIR/exec.err")"
check "attach the shell before its exec" ctl attach "$X" --freq 999
wait_for 30 at_least_samples "$X" 500 || fail "shell samples" "$(ctl list)"
touch "$TDIR/go"
comm_is() { [ "$(target_json "$1" comm)" = "$2" ]; }
wait_for 30 comm_is "$X" minijit || fail "exec seen" "$(ctl list)"
wait_for 30 at_least_samples "$X" 2000 || fail "minijit samples" "$(ctl list)"
# Code mapped after the maps read at the exec's handling (over what was a file's data then) is
# kept by address until they are read again, then named: no address rows stay.
addr_rows() { ctl report "$1" --top 0 --json | python3 -c "import json,sys
print(sum(1 for e in json.load(sys.stdin)['entries'] if e['function'].startswith('0x')))"; }
no_addr_rows() { [ "$(addr_rows "$1")" = 0 ]; }
if wait_for 30 no_addr_rows "$X"; then pass "exec: no address rows stay"
else fail "kept addresses named" "$(ctl report "$X" --top 0 --json | python3 -c "import json,sys
print([(e['function'], e['module'], e['self'], e['total']) for e in json.load(sys.stdin)['entries'] if e['function'].startswith('0x')])") $(ctl list --json)"; fi
ctl report "$X" --top 0 --json | python3 -c "
import json, sys
r = json.load(sys.stdin); e = r['entries']; t = r['total_samples'] or 1
sh = sum(x['self'] for x in e if x['module'] in ('dash', 'sh', 'bash'))
mj = sum(x['self'] for x in e if x['function'] == 'mj_hot')
unk = sum(x['self'] for x in e if x['function'] == '[unknown]')
print(sh, mj, unk, t)" >"$TDIR/exec.shares"
read -r sh mj unk t <"$TDIR/exec.shares"
if [ "${sh:-0}" -gt 0 ] && [ "${mj:-0}" -gt 0 ] && [ "${unk:-1}" = 0 ]; then
	pass "exec: the shell's $sh samples named by the shell, mj_hot $mj after it, $unk [unknown] of $t"
else fail "exec while samples wait" "shell $sh, mj_hot $mj, [unknown] $unk of $t"; fi
kill -9 "$X"; wait "$X" 2>/dev/null

# 3.
ctl record --freq 999 --format json -o "$TDIR/rec.json" -- "$MINIJIT" --seconds 1 >/dev/null 2>&1
python3 - "$TDIR/rec.json" <<'PY' && pass "record of a 1 s process: $(cat "$TDIR/rec.txt")" || fail "record" "$(cat "$TDIR/rec.txt")"
import json, sys
r = json.load(open(sys.argv[1])); t = r["target"]
n = sum(s["count"] for s in r["stacks"])
msg = "%d samples in its stacks, %d taken" % (n, t["samples"])
open(sys.argv[1].replace("rec.json", "rec.txt"), "w").write(msg)
# 999 Hz for 1 s of CPU is 999 samples; on a loaded machine the process gets less of it.
sys.exit(0 if n == t["samples"] and n >= 100 else 1)
PY

finish
