#!/usr/bin/env bash
# Profile drift (kprofctl drift) on a JIT that replaces code: tests/fixtures/drift_copies.js has
# V8 deoptimize and re-optimize `batch` every 4 s (a new copy of it at a new address, the same
# name, in the perf map), while `handle`, which calls it, spends its time the same way. The
# ground truth is the program's own "swap" lines and the perf map's copies of batch: kprofd
# must count the copies (report), report no drift of `handle` (a swapped callee is the same
# callee), and end the copies that no longer run ([drift] end_after = 3 s here) instead of
# watching them forever; the result is the same kept after the program exits, and its text says
# how many functions ended. About 25 s.
# Not sanitized: the detection needs a few hundred samples per function at a steady rate.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null || { skip "drift of swapped copies" "node is not installed"; exit 0; }
printf '[drift]\nend_after = 3\n' >"$TDIR/kprofd.conf"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }

(cd "$TDIR" && exec node --perf-basic-prof --allow-natives-syntax \
	"$OLDPWD/tests/fixtures/drift_copies.js" 22 4) >"$TDIR/node.out" 2>"$TDIR/node.err" &
NP=$!
PIDS+=("$NP")
wait_for 20 grep -q ready "$TDIR/node.err" || { fail "node starts" "$(cat "$TDIR/node.err")"; exit 1; }
ctl attach "$NP" --freq 999 >/dev/null || { fail "attach node" "refused"; exit 1; }

# drift_state: "<ended copies of batch> <handle drifts> <handle state> <ended total>" now.
drift_state() {
	ctl drift "$NP" --json 2>/dev/null | python3 -c "import json,sys
r = json.load(sys.stdin)
f = r['functions']
ended = sum(1 for x in f if 'batch' in x['function'] and x['state'] == 'ended')
h = [x for x in f if 'handle' in x['function']]
hd = sum(x['drifts'] for x in h)
print(ended, hd, h[0]['state'] if h else 'none', r['functions_ended'])"
}
copies_ended() { read -r e _ <<<"$(drift_state)"; [ "${e:-0}" -ge 1 ]; }

if wait_for 40 copies_ended; then
	read -r e hd hs te <<<"$(drift_state)"
	pass "a replaced copy of batch ended: $e ended ($te functions in all) while handle is $hs"
else
	fail "a replaced copy of batch ended" "$(ctl drift "$NP")"
fi
wait "$NP" 2>/dev/null
swaps=$(awk '/^swap/ { n = $4 } END { print n + 0 }' "$TDIR/node.out")
maps=$(grep -c ' JS:\*batch ' "/tmp/perf-$NP.map" 2>/dev/null)
wait_for 20 state_is "$NP" exited || fail "node exit seen" "$(ctl list --all)"

# The copies kprofd named: distinct addresses of *batch in the report, against the perf map.
named=$(ctl report "$NP" --json 2>/dev/null | python3 -c "import json,sys
r = json.load(sys.stdin)
print(len({e['address'] for e in r['entries'] if e['function'].startswith('JS:*batch')}))" 2>/dev/null)
if [ "$swaps" -ge 3 ] && [ "${named:-0}" -ge 3 ]; then
	pass "the swaps happened: $swaps swaps; $named copies of *batch sampled, $maps in the perf map"
else
	fail "the swaps happened" "swaps $swaps, named ${named:-?}, perf map $maps"
fi

ctl drift "$NP" --json >"$TDIR/drift.json"
ctl drift "$NP" >"$TDIR/drift.txt"
if python3 - "$TDIR/drift.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
h = [f for f in r['functions'] if 'handle' in f['function']]
ev = [e for e in r['events'] if 'handle' in e['function']]
ok = h and h[0]['samples'] >= 1000 and h[0]['drifts'] == 0 and not ev
print(f"handle: {h[0]['samples'] if h else 0} samples, {h[0]['drifts'] if h else '?'} drifts, "
      f"{len(ev)} events; {r['events_total']} drifts in all")
sys.exit(0 if ok else 1)
PY
then pass "no false drift of handle across the swaps of its callee: $(python3 -c "import json
r = json.load(open('$TDIR/drift.json'))
h = [f for f in r['functions'] if 'handle' in f['function']][0]
print(f\"{h['samples']} samples, keys {[k['key'] for k in h['top_keys']]}\")")"
else
	fail "no false drift of handle" "$(cat "$TDIR/drift.txt")"
fi
if grep -q "^ended: [0-9]* function" "$TDIR/drift.txt" && grep -q " ended " "$TDIR/drift.txt"; then
	pass "the kept result says which functions ended: $(grep '^ended:' "$TDIR/drift.txt")"
else
	fail "the kept result says which functions ended" "$(cat "$TDIR/drift.txt")"
fi
grep -q "kprofd.*ERROR\|AddressSanitizer" "$TDIR/kprofd.log" && fail "kprofd log" "$(tail -5 "$TDIR/kprofd.log")"
finish
