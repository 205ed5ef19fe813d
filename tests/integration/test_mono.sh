#!/usr/bin/env bash
# Mono (issue 30), side by side with `perf record -g` on the same run: a real Mono program
# (tests/fixtures/runtimes/hot.cs, built with mcs) run with MONO_ENV_OPTIONS=--jitmap, which
# makes Mono 6.8 write /tmp/perf-PID.map; kprofd and perf sample it at once from its start to
# its exit. Mono writes that map through a stdio buffer, most of it at its exit: kprofd names
# the samples it kept by address then (the map read through the root kept since the attach),
# as perf report does after the run. No source of its own: Mono's names come through the perf
# map's (daemon/symbols/perfmapfile.c). Checked: the heaviest leaf is the same JIT method in
# both (Hot:Alpha (int)), Alpha's and Beta's shares are within tolerance of perf's, and no more
# frames are unnamed than perf's [unknown].
# Needs root, perf, mono and mcs (make deps: mono-runtime, mono-mcs); skipped without them.
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures/runtimes" && pwd)
CMP=(python3 "$(dirname "$0")/names_compare.py")
if ! command -v mono >/dev/null || ! command -v mcs >/dev/null; then
	skip "mono" "no mono or mcs (make deps installs mono-runtime and mono-mcs)"
	exit 0
fi
if ! command -v perf >/dev/null || ! perf record -q -o "$TDIR/probe.data" true >/dev/null 2>&1; then
	skip "mono" "perf is not installed or cannot record"
	exit 0
fi
mcs -O+ -out:"$TDIR/hot.exe" "$FIX/hot.cs" >"$TDIR/mcs.out" 2>&1 ||
	{ fail "mcs hot.cs" "$(tail -3 "$TDIR/mcs.out")"; exit 1; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }

MONO_ENV_OPTIONS=--jitmap mono "$TDIR/hot.exe" 3 >/dev/null 2>"$TDIR/mono.err" &
P=$!
PIDS+=("$P")
wait_for 30 grep -q ready "$TDIR/mono.err" || { fail "mono starts" "$(cat "$TDIR/mono.err")"; exit 1; }
check "attach mono" ctl attach "$P" --freq 499
perf record -q -g -F 499 -p "$P" -o "$TDIR/mono.data" >/dev/null 2>&1 &
PERF=$!
wait "$P" # 3 s of its CPU time, then it exits
wait "$PERF"
if wait_for 30 state_is "$P" exited; then pass "mono ran to its exit under kprofd"; else
	fail "mono exits" "state $(target_state "$P")"; fi
ctl report "$P" --top 0 --json >"$TDIR/mono.json"
ctl folded "$P" >"$TDIR/mono.folded"
perf script -F ip,sym,dso -i "$TDIR/mono.data" >"$TDIR/mono.perf" 2>/dev/null
echo "perf report of the same run:"
perf report -i "$TDIR/mono.data" --no-children --sort dso,sym --stdio 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -3
rm -f "/tmp/perf-$P.map"
echo "kprofd: $(target_json "$P" jit_symbols) JIT symbols, $(target_json "$P" named_late) functions named late, $(target_json "$P" samples) samples"

read -r kind module <<<"$(python3 -c "import json,sys
e = max(json.load(open(sys.argv[1]))['entries'], key=lambda e: e['self'])
print(e['kind'], e['module'])" "$TDIR/mono.json")"
if [ "$kind" = jit ] && [ "$module" = "perf-$P.map" ]; then
	pass "mono: the heaviest function is JIT code named by its perf map ($module)"
else
	fail "mono: heaviest function" "kind $kind, module $module"
fi
"${CMP[@]}" --same-run "$TDIR/mono.json" "$TDIR/mono.folded" "$TDIR/mono.perf" \
	top 'leaf:Hot:Alpha (int)' 'leaf:Hot:Beta (int)' unnamed | sed 's/^\(PASS\|FAIL\): /\1: mono: /'
[ "${PIPESTATUS[0]}" -eq 0 ] || FAILS=$((FAILS + 1))
ctl status >/dev/null && pass "kprofd answers" || fail "kprofd answers" "$(tail -5 "$TDIR/kprofd.log")"
finish
