#!/usr/bin/env bash
# LuaJIT (issue 30), side by side with `perf record -g` on the same run (kprofd and perf sample
# tests/fixtures/runtimes/hot.lua at once from its start to its exit):
#   1. Debian's luajit (2.1.0-beta3) is built without LUAJIT_USE_PERFTOOLS: it writes no perf
#      map, so neither tool names its traces. kprofd keeps them by address in [anon] (perf:
#      [unknown] in "[JIT] tid"), the same hottest address in both, and its note gives LuaJIT's
#      recipe.
#   2. The recipe, docs/recipes/kprof_perfmap.lua (luajit -l kprof_perfmap): a perf map of the
#      traces through jit.attach. Both tools then name them, the same hottest trace (alpha's
#      loop, hot.lua:6) in both, and kprofd leaves no more frames unnamed than perf.
# Needs root, perf and luajit (make deps); skipped without.
# Not sanitized: it adds no code path of kprofd's that test_perfmap.sh and test_mono.sh do not
# run sanitized (a perf map read while it grows and at the exit).
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures/runtimes" && pwd)
RECIPES=$(cd "$(dirname "$0")/../../docs/recipes" && pwd)
CMP=(python3 "$(dirname "$0")/names_compare.py")
if ! command -v luajit >/dev/null; then skip "luajit" "luajit is not installed (make deps)"; exit 0; fi
if ! command -v perf >/dev/null || ! perf record -q -o "$TDIR/probe.data" true >/dev/null 2>&1; then
	skip "luajit" "perf is not installed or cannot record"
	exit 0
fi
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# run NAME ARGS...: luajit ARGS (2 s of its CPU time) under kprofd and perf until it exits;
# NAME.json, NAME.folded, NAME.perf; P its pid.
run() {
	local name=$1 perf
	shift
	luajit "$@" "$FIX/hot.lua" 2 >/dev/null 2>"$TDIR/$name.err" &
	P=$!
	PIDS+=("$P")
	wait_for 30 grep -q ready "$TDIR/$name.err" || { fail "$name: luajit starts" "$(cat "$TDIR/$name.err")"; return 1; }
	ctl attach "$P" --freq 499 >/dev/null || { fail "$name: attach" "$(ctl attach "$P" 2>&1)"; return 1; }
	perf record -q -g -F 499 -p "$P" -o "$TDIR/$name.data" >/dev/null 2>&1 &
	perf=$!
	wait "$P"
	wait "$perf"
	wait_for 30 state_is "$P" exited || { fail "$name: luajit exits" "$(target_state "$P")"; return 1; }
	ctl report "$P" --top 0 --json >"$TDIR/$name.json"
	ctl folded "$P" >"$TDIR/$name.folded"
	perf script -F ip,sym,dso -i "$TDIR/$name.data" >"$TDIR/$name.perf" 2>/dev/null
}

# --- 1. Debian's luajit alone: no perf map.
if run plain; then
	if [ -e "/tmp/perf-$P.map" ]; then
		fail "luajit: no perf map" "/tmp/perf-$P.map exists: this luajit writes one (LUAJIT_USE_PERFTOOLS)"
	else
		pass "luajit (Debian's build) writes no perf map (/tmp/perf-$P.map never appeared)"
	fi
	# The hottest leaf of each: kprofd's row (its name, kind, module) and perf's (its ip, sym).
	read -r kname kkind kmod pip psym pshare kshare <<<"$(python3 -c "
import json, re, sys
e = max(json.load(open(sys.argv[1]))['entries'], key=lambda e: e['self'])
tot = sum(x['self'] for x in json.load(open(sys.argv[1]))['entries'])
leaves, cur = {}, None
for l in open(sys.argv[2], errors='replace'):
    m = re.match(r'^\s*([0-9a-f]+) (.*) \(([^()]*)\)$', l.rstrip('\n'))
    if m and cur is None:
        cur = (m.group(1), m.group(2))
        leaves[cur] = leaves.get(cur, 0) + 1
    elif not m:
        cur = None
(ip, sym), n = max(leaves.items(), key=lambda kv: kv[1])
print(e['function'], e['kind'], e['module'], '0x' + ip.lstrip('0'), sym.split('+')[0] or '-',
      '%.1f' % (100.0 * n / sum(leaves.values())), '%.1f' % (100.0 * e['self'] / tot))
" "$TDIR/plain.json" "$TDIR/plain.perf")"
	echo "hottest leaf: kprof $kname ($kkind, $kmod) $kshare%; perf $pip ($psym) $pshare%"
	if [ "$kname" = "$pip" ] && [ "$kmod" = "[anon]" ] && [ "$psym" = "[unknown]" ]; then
		pass "luajit without a map: its traces are addresses in both, the same hottest one ($kname: kprof $kshare%, perf $pshare%)"
	else
		fail "luajit without a map" "kprof $kname $kkind $kmod, perf $pip $psym"
	fi
	case "$(target_json "$P" unnamed_note)" in
	*kprof_perfmap*) pass "luajit: the note gives LuaJIT's recipe" ;;
	*) fail "luajit recipe note" "$(target_json "$P" unnamed_note)" ;;
	esac
fi

# --- 2. The recipe: luajit -l kprof_perfmap.
if LUA_PATH="$RECIPES/?.lua;;" run recipe -l kprof_perfmap; then
	top=$(python3 -c "import json,sys
print(max(json.load(open(sys.argv[1]))['entries'], key=lambda e: e['self'])['function'])" "$TDIR/recipe.json")
	if [[ "$top" =~ ^TRACE_[0-9]+::@.*hot\.lua:6$ ]]; then
		pass "luajit -l kprof_perfmap: its hottest trace named where it starts ($top)"
	else
		fail "luajit -l kprof_perfmap: hottest" "'$top', want TRACE_N::@.../hot.lua:6"
	fi
	"${CMP[@]}" --same-run "$TDIR/recipe.json" "$TDIR/recipe.folded" "$TDIR/recipe.perf" \
		top unnamed | sed 's/^\(PASS\|FAIL\): /\1: luajit -l kprof_perfmap: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || FAILS=$((FAILS + 1))
	rm -f "/tmp/perf-$P.map"
fi
ctl status >/dev/null && pass "kprofd answers" || fail "kprofd answers" "$(tail -5 "$TDIR/kprofd.log")"
finish
