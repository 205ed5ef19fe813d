#!/usr/bin/env bash
# A jitdump read to its end at the process's exit (issue 30, item 1). V8 (node --perf-prof)
# writes its jitdump through a stdio buffer: the records of the code compiled last, the hot
# functions of a short run, reach the file only at exit, when /proc/PID/cwd is gone. kprofd
# reopened the file by that path and got "No such process": the hot functions stayed [anon]
# (5 of 6 runs). Now the file found while the process ran is kept open and read to its end
# after the exit (daemon/symbols/jitfile.c). Checked on a 5 s node --perf-prof run attached until its
# exit, side by side with perf record -g + perf inject --jit on the same run:
#   hotFunction named from jit-PID.dump (above warmFunction, within 10 points of perf's share),
#   nothing left in [anon], no "No such process" in jitdump_problem or the log.
# Needs root, node; perf for the comparison.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null || { skip "jitdump at exit" "node is not installed"; exit 0; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }
mkdir -p "$TDIR/node"
# Under perf record when perf is there (perf inject --jit reads the same run), else alone.
PERF=
if command -v perf >/dev/null; then
	(cd "$TDIR/node" && exec perf record -q -N -k mono -g -F 499 -o "$TDIR/perf.data" -- \
		node --perf-prof "$ROOT/tests/fixtures/hot.js" 5) >"$TDIR/node.out" 2>"$TDIR/node.err" &
	PERF=$!
	PIDS+=("$PERF")
	wait_for 15 pgrep -P "$PERF" node || { fail "node starts under perf" "$(cat "$TDIR/node.err")"; exit 1; }
	NP=$(pgrep -P "$PERF" node)
else
	(cd "$TDIR/node" && exec node --perf-prof "$ROOT/tests/fixtures/hot.js" 5) >"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!
fi
PIDS+=("$NP")
wait_for 15 test -s "$TDIR/node/jit-$NP.dump" || { fail "node --perf-prof starts" "$(cat "$TDIR/node.err")"; exit 1; }
check "attach node --perf-prof" ctl attach "$NP" --freq 499
wait_for 60 state_is "$NP" exited || fail "exit seen" "$(ctl list --all)"
[ -n "$PERF" ] && wait "$PERF"
read -r khot kwarm kanon kmod <<<"$(ctl report "$NP" --top 0 --json | python3 -c "import json,sys
r = json.load(sys.stdin); t = r['total_samples'] or 1
pct = lambda f: 100.0 * sum(e['self'] for e in r['entries'] if f(e)) / t
hot = [e for e in r['entries'] if 'hotFunction' in e['function']]
print('%.1f %.1f %.1f %s' % (pct(lambda e: 'hotFunction' in e['function']), pct(lambda e: 'warmFunction' in e['function']),
      pct(lambda e: e['module'] == '[anon]'), hot[0]['module'] if hot else '-'))")"
problem=$(target_json "$NP" jitdump_problem)
echo "kprofd: hotFunction $khot% ($kmod), warmFunction $kwarm%, [anon] $kanon%; $(target_json "$NP" jitdump_symbols) jitdump symbols"
if [ "$kmod" = "jit-$NP.dump" ] && python3 -c "import sys; sys.exit(not ($khot > $kwarm > 0 and $khot > 30 and $kanon < 5))"; then
	pass "hotFunction named from the jitdump read after the exit ($khot%, [anon] $kanon%)"
else
	fail "named at exit" "hot $khot% from '$kmod', warm $kwarm%, anon $kanon%; problem '$problem'"
fi
if ! grep -q "No such process" <<<"$problem" && ! grep -q "pid $NP: jitdump.*No such process" "$TDIR/kprofd.log"; then
	pass "no 'No such process' for the jitdump"
else
	fail "jitdump after exit" "'$problem'"
fi
if [ -n "$PERF" ] && perf --buildid-dir "$TDIR/debug" inject --jit -i "$TDIR/perf.data" -o "$TDIR/perf.jit.data" >"$TDIR/inject.err" 2>&1; then
	phot=$(perf --buildid-dir "$TDIR/debug" report -i "$TDIR/perf.jit.data" --no-children --sort sym --stdio -g none 2>/dev/null |
		python3 -c "import re,sys
rows = [(float(m.group(1)), m.group(2)) for m in (re.match(r'\s*([\d.]+)%\s+\[\.\]\s+(.*)', l) for l in sys.stdin) if m]
print('%.1f' % sum(p for p, s in rows if 'hotFunction' in s))")
	echo "perf (record -g + inject --jit, same run): hotFunction $phot%"
	if python3 -c "import sys; sys.exit(not ($phot > 0 and $khot >= $phot - 10))"; then
		pass "kprof names hotFunction as perf inject --jit does ($khot% vs $phot%)"
	else
		fail "kprof vs perf" "kprof $khot%, perf $phot%"
	fi
else
	skip "perf comparison" "perf is not installed or perf inject --jit failed: $(tail -2 "$TDIR/inject.err" 2>/dev/null)"
fi
finish
