#!/usr/bin/env bash
# A profile detached before the runtime wrote its names is named when it does (issue 30, item 2).
# node --perf-prof buffers its jitdump: the records of its hot code reach the file only at exit.
# Attached for 3 s in the middle of an 8 s run and detached, its hot code was [anon] for ever,
# while its note said "(named when they are)". Now a detached target with unnamed addresses keeps
# its symbols while the same process runs the same program (at most 10 min): the jitdump is read
# on, and to its end through the fd kept open when the process exits (target_late_names).
# Checked against perf record -g + perf inject --jit of the same seconds.
# Needs root, node; perf for the comparison.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null || { skip "late names of a kept profile" "node is not installed"; exit 0; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }
mkdir -p "$TDIR/node"
(cd "$TDIR/node" && exec node --perf-prof "$ROOT/tests/fixtures/hot.js" 8) >"$TDIR/node.out" 2>"$TDIR/node.err" &
NP=$!
PIDS+=("$NP")
wait_for 15 test -s "$TDIR/node/jit-$NP.dump" || { fail "node starts" "$(cat "$TDIR/node.err")"; exit 1; }
sleep 1
check "attach node --perf-prof mid-run" ctl attach "$NP" --freq 499 --duration 3
PERF=
if command -v perf >/dev/null; then
	perf record -q -N -k mono -g -F 499 -p "$NP" -o "$TDIR/perf.data" -- sleep 3 >"$TDIR/perf.err" 2>&1 &
	PERF=$!
fi
wait_for 20 state_is "$NP" detached || fail "detached after 3 s" "$(ctl list --all)"
split() {
	ctl report "$NP" --top 0 --json | python3 -c "import json,sys
r = json.load(sys.stdin); t = r['total_samples'] or 1
pct = lambda f: 100.0 * sum(e['self'] for e in r['entries'] if f(e)) / t
print('%.1f %.1f' % (pct(lambda e: 'hotFunction' in e['function']), pct(lambda e: e['module'] == '[anon]')))"
}
read -r hot0 anon0 <<<"$(split)"
echo "detached, node still running: hotFunction $hot0%, [anon] $anon0%; note: $(target_json "$NP" unnamed_note)"
[ -n "$PERF" ] && wait "$PERF"
wait_for 30 eval "! kill -0 $NP 2>/dev/null"
named() { read -r h a <<<"$(split)"; python3 -c "import sys; sys.exit(not ($h > 30 and $a < 5))"; }
if python3 -c "import sys; sys.exit(not $anon0 < 5)"; then
	read -r hot1 anon1 <<<"$(split)" # named already: compared with perf below all the same
	skip "named after the exit" "V8 flushed its jitdump buffer before the detach (hotFunction $hot0%): nothing was left to name late in this run"
elif wait_for 20 named; then
	read -r hot1 anon1 <<<"$(split)"
	pass "the kept profile named after node's exit: hotFunction $hot0% -> $hot1%, [anon] $anon0% -> $anon1%"
else
	read -r hot1 anon1 <<<"$(split)"
	fail "named after the exit" "hotFunction $hot1%, [anon] $anon1%; note: $(target_json "$NP" unnamed_note)"
fi
if [ -n "$PERF" ] && perf --buildid-dir "$TDIR/debug" inject --jit -i "$TDIR/perf.data" -o "$TDIR/perf.jit.data" >"$TDIR/inject.err" 2>&1; then
	phot=$(perf --buildid-dir "$TDIR/debug" report -i "$TDIR/perf.jit.data" --no-children --sort sym --stdio -g none 2>/dev/null |
		python3 -c "import re,sys
rows = [(float(m.group(1)), m.group(2)) for m in (re.match(r'\s*([\d.]+)%\s+\[\.\]\s+(.*)', l) for l in sys.stdin) if m]
print('%.1f' % sum(p for p, s in rows if 'hotFunction' in s))")
	echo "perf (record -g + inject --jit, the same 3 s): hotFunction $phot%"
	python3 -c "import sys; sys.exit(not ($phot > 0 and $hot1 >= $phot - 10))" &&
		pass "as perf inject --jit names it ($hot1% vs $phot%)" || fail "kprof vs perf" "kprof $hot1%, perf $phot%"
else
	skip "perf comparison" "perf is not installed or perf inject --jit failed"
fi
finish
