#!/usr/bin/env bash
# Names on runtimes, side by side with `perf record -g` on the same run (issue 30, items 3, 5, 6,
# 7). Each runtime runs ~12 s; kprofd and perf sample it at once for 5 s.
#   3. Erlang/OTP (erl +JPperf map): BEAM puts normal_exit/0's own first byte at the bottom of
#      every Erlang process stack; kprof named that root by the perf-map entry before it
#      (normal_exit/0-CodeInfoPrologue). Now as perf: root normal_exit/0 within tolerance of
#      perf's share, never CodeInfoPrologue.
#   5. CPython 3.11 (no JIT; junk frame pointers): no recipe note, no address rows; its junk
#      addresses are [unknown] and counted apart (unknown_samples), as perf has [unknown].
#   5b. junkfp (tests/fixtures/hostile, built here with cc): a frame pointer into a file's data,
#      mapped but not executable: "[unknown]" as in perf's stacks (within 5 points), never the
#      file's "[junkfp]", and unknown_samples equal to the kept profile's samples with it.
#   6. PHP opcache JIT, its buffer mapped as /dev/zero (deleted): without a perf map, anonymous
#      memory kept by address ([anon], unknown), never native "[zero (deleted)]"; with its perf
#      map (opcache.jit_debug=0x10), the same top JIT function as perf.
#   7. node --perf-basic-prof sorting: V8's embedded builtins named by node's ELF symbols
#      (Builtins_ArrayTimSort, native) as perf names them, never by the perf map's Builtin:X.
# Needs root, perf; erl/erlc (erlang-base), php (php-cli), node for their parts (skipped without).
# Not sanitized: four runtimes under perf take a minute; the naming rules run under ASan in
# test_perfmap/test_procmaps (unit) and test_names.
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures/runtimes" && pwd)
CMP=(python3 "$(dirname "$0")/names_compare.py")
if ! command -v perf >/dev/null || ! perf record -q -o "$TDIR/probe.data" true >/dev/null 2>&1; then
	skip "runtime names" "perf is not installed or cannot record"
	exit 0
fi
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# side_by_side NAME PID: kprofd and perf on PID for 5 s; NAME.json, NAME.folded, NAME.perf.
side_by_side() {
	local name=$1 pid=$2
	ctl attach "$pid" --freq 499 >/dev/null || { fail "$name: attach" "$(ctl attach "$pid" 2>&1)"; return 1; }
	perf record -q -g -F 499 -p "$pid" -o "$TDIR/$name.data" -- sleep 5 >/dev/null 2>&1
	ctl report "$pid" --top 0 --json >"$TDIR/$name.json"
	ctl folded "$pid" >"$TDIR/$name.folded"
	perf script -F ip,sym,dso -i "$TDIR/$name.data" >"$TDIR/$name.perf" 2>/dev/null
	ctl detach "$pid" >/dev/null 2>&1
}
field() { target_json "$1" "$2"; }
none_unresolved() { [ "$(field "$1" unresolved_addresses)" = 0 ]; }
# unknown_count FOLDED: the samples of FOLDED with an "[unknown]" frame.
unknown_count() {
	python3 -c "
import sys
n = 0
for l in open(sys.argv[1]):
    st, _, c = l.rstrip().rpartition(' ')
    if c.isdigit() and '[unknown]' in st.split(';'):
        n += int(c)
print(n)" "$1"
}
# perf_unknown_share PERFSCRIPT: % of perf's samples with an [unknown] frame.
perf_unknown_share() {
	python3 -c "
import sys
n = u = 0; cur = False; unk = False
for l in open(sys.argv[1], errors='replace'):
    if l.strip():
        cur = True; unk |= '[unknown]' in l
    elif cur:
        n += 1; u += unk; cur = unk = False
print('%.1f' % (100.0 * u / n if n else 0))" "$1"
}
run_bg() { "$@" & BG=$!; PIDS+=("$BG"); }

# --- 3. Erlang
if command -v erl >/dev/null && command -v erlc >/dev/null; then
	mkdir -p "$TDIR/erl"
	erlc -o "$TDIR/erl" "$FIX/spin.erl" || fail "erlc spin.erl" "see above"
	run_bg erl +JPperf map -noshell -pa "$TDIR/erl" -run spin start 14 2>"$TDIR/erl.err"
	# erl is a script: the VM is beam.smp, its child or itself.
	if wait_for 20 grep -q ready "$TDIR/erl.err"; then
		P=$(pgrep -n -P "$BG" beam.smp || echo "$BG")
		[ "$(cat "/proc/$P/comm" 2>/dev/null)" = beam.smp ] || P=$(pgrep -n beam.smp)
		wait_for 10 test -s "/tmp/perf-$P.map"
		side_by_side erl "$P" &&
			"${CMP[@]}" --same-run "$TDIR/erl.json" "$TDIR/erl.folded" "$TDIR/erl.perf" \
				'root:$erts_beamasm:normal_exit/0' \
				'noroot:$erts_beamasm:normal_exit/0-CodeInfoPrologue' | sed 's/^\(PASS\|FAIL\): /\1: erlang: /'
	else
		fail "erlang starts" "$(cat "$TDIR/erl.err")"
	fi
else
	skip "erlang" "no erl/erlc (make deps installs erlang-base)"
fi

# --- 5. CPython 3.11: no JIT, junk frame pointers.
PY=/usr/bin/python3
run_bg "$PY" -c "
import sys, time
def f(n):
    s = 0
    for i in range(n): s += i * i
    return s
print('ready', file=sys.stderr, flush=True)
e = time.time() + 12
while time.time() < e: f(100000)
" 2>"$TDIR/py.err"
if wait_for 10 grep -q ready "$TDIR/py.err"; then
	P=$BG
	side_by_side py "$P"
	note=$(field "$P" unnamed_note)
	unres=$(field "$P" unresolved_addresses)
	unk=$(field "$P" unknown_samples)
	total=$(field "$P" samples)
	rows=$(python3 -c "import json,sys
print(sum(1 for e in json.load(open(sys.argv[1]))['entries'] if e['function'].startswith('0x')))" "$TDIR/py.json")
	pshare=$(perf_unknown_share "$TDIR/py.perf")
	kshare=$(python3 -c "print('%.1f' % (100.0 * ${unk:-0} / max(${total:-0}, 1)))")
	echo "python3: samples with an [unknown] frame: kprof $kshare% ($unk of $total), perf $pshare%"
	[ -z "$note" ] && pass "python3: no JIT recipe note" || fail "python3: no note" "'$note'"
	[ "$unres" = 0 ] && [ "$rows" = 0 ] && pass "python3: no address kept as unnamed JIT code" ||
		fail "python3: address rows" "unresolved $unres, rows $rows"
	# unknown_samples against the kept profile's own stacks: junk kept by address for lack of
	# fresh maps and settled into [unknown] later counts too (frame by frame, exactly).
	ctl folded "$P" >"$TDIR/py.kept.folded" 2>&1
	fknown=$(unknown_count "$TDIR/py.kept.folded")
	[ "$fknown" = "$(field "$P" unknown_samples)" ] &&
		pass "python3: unknown_samples ($fknown) = the kept profile's samples with an [unknown] frame" ||
		fail "python3: unknown_samples" "$(field "$P" unknown_samples) counted, the folded stacks have $fknown"
	if python3 -c "import sys; p, k = $pshare, $kshare; sys.exit(not ((p > 0) == (k > 0)))"; then
		pass "python3: junk addresses [unknown], counted apart (kprof $kshare%, perf $pshare% of samples)"
	else
		fail "python3: [unknown] counted" "kprof $kshare%, perf $pshare%"
	fi
else
	fail "python3 starts" "$(cat "$TDIR/py.err")"
fi

# --- 5b. A junk frame pointer into a file's data (mapped, not executable): "[unknown]" as perf
# has it, never the file's name, and counted in unknown_samples (settled late or at once).
if [ "$(uname -m)" != x86_64 ]; then
	skip "junkfp" "its fake frame is x86-64 assembly"
elif command -v cc >/dev/null && cc -O0 -o "$TDIR/junkfp" "$(dirname "$0")/../fixtures/hostile/junkfp.c"; then
	run_bg "$TDIR/junkfp" 12 2>"$TDIR/jf.err"
	if wait_for 10 grep -q ready "$TDIR/jf.err"; then
		P=$BG
		side_by_side jf "$P"
		# Addresses kept for lack of fresh maps are settled as the kept profile's names
		# are looked at again (the process runs on): read both counts once none waits.
		wait_for 30 none_unresolved "$P" ||
			fail "junkfp: addresses left unnamed" "$(field "$P" unresolved_addresses)"
		ctl folded "$P" >"$TDIR/jf.kept.folded" 2>&1
		unk=$(field "$P" unknown_samples)
		total=$(field "$P" samples)
		fknown=$(unknown_count "$TDIR/jf.kept.folded")
		pshare=$(perf_unknown_share "$TDIR/jf.perf")
		kshare=$(python3 -c "print('%.1f' % (100.0 * ${unk:-0} / max(${total:-0}, 1)))")
		echo "junkfp: samples with an [unknown] frame: kprof $kshare% ($unk of $total), perf $pshare%"
		[ "$fknown" = "$unk" ] && [ "${unk:-0}" -gt 0 ] &&
			pass "junkfp: unknown_samples ($unk) = the kept profile's samples with an [unknown] frame" ||
			fail "junkfp: unknown_samples" "$unk counted, the folded stacks have $fknown"
		if python3 -c "import sys; sys.exit(not abs($pshare - $kshare) <= 5)"; then
			pass "junkfp: the junk frame [unknown] in kprof $kshare%, perf $pshare% of samples"
		else
			fail "junkfp: [unknown] share" "kprof $kshare%, perf $pshare%"
		fi
		! grep -q '\[junkfp\]' "$TDIR/jf.kept.folded" && pass "junkfp: the file's data is not named as its code" ||
			fail "junkfp: data named" "$(grep -m2 '\[junkfp\]' "$TDIR/jf.kept.folded")"
	else
		fail "junkfp starts" "$(cat "$TDIR/jf.err")"
	fi
else
	skip "junkfp" "no cc"
fi

# --- 6. PHP opcache JIT
if command -v php >/dev/null && php -m 2>/dev/null | grep -q "Zend OPcache"; then
	PHPJIT=(php -d opcache.enable_cli=1 -d opcache.jit_buffer_size=32M -d opcache.jit=tracing)
	run_bg "${PHPJIT[@]}" "$FIX/hot.php" 12 2>"$TDIR/php.err" >/dev/null
	if wait_for 10 grep -q ready "$TDIR/php.err"; then
		P=$BG
		wait_for 10 grep -q "/dev/zero (deleted)" "/proc/$P/maps"
		grep -q "r-xs .*/dev/zero (deleted)" "/proc/$P/maps" || fail "php: JIT buffer" "$(grep zero "/proc/$P/maps")"
		side_by_side php "$P"
		read -r top kind module unres <<<"$(python3 -c "import json,sys
e = max(json.load(open(sys.argv[1]))['entries'], key=lambda e: e['self'])
print(e['function'], e['kind'], e['module'])" "$TDIR/php.json") $(field "$P" unresolved_addresses)"
		if [ "$kind" = unknown ] && [ "$module" = "[anon]" ] && [ "${unres:-0}" -gt 0 ] &&
			! grep -q "zero" "$TDIR/php.json"; then
			pass "php without a perf map: its JIT buffer is anonymous memory ($top in [anon], $unres addresses kept to be named)"
		else
			fail "php JIT buffer" "top $top $kind $module, unresolved $unres; $(grep -o 'zero[^"]*' "$TDIR/php.json" | head -2)"
		fi
		case "$(field "$P" unnamed_note)" in *"PHP"*) pass "php: the note gives PHP's recipe" ;;
			*) fail "php recipe" "$(field "$P" unnamed_note)" ;; esac
	else
		fail "php starts" "$(cat "$TDIR/php.err")"
	fi
	run_bg "${PHPJIT[@]}" -d opcache.jit_debug=0x10 "$FIX/hot.php" 12 2>"$TDIR/php2.err" >/dev/null
	if wait_for 10 grep -q ready "$TDIR/php2.err"; then
		P=$BG
		wait_for 10 test -s "/tmp/perf-$P.map"
		side_by_side php2 "$P"
		"${CMP[@]}" --same-run "$TDIR/php2.json" "$TDIR/php2.folded" "$TDIR/php2.perf" top |
			sed 's/^\(PASS\|FAIL\): /\1: php with its perf map: /'
		rm -f "/tmp/perf-$P.map"
	else
		fail "php (perf map) starts" "$(cat "$TDIR/php2.err")"
	fi
else
	skip "php" "no php with opcache (make deps installs php-cli)"
fi

# --- 7. node's embedded builtins
if command -v node >/dev/null; then
	run_bg node --perf-basic-prof "$FIX/sort.js" 12 2>"$TDIR/node.err" >/dev/null
	if wait_for 10 grep -q ready "$TDIR/node.err"; then
		P=$BG
		wait_for 10 grep -q "Builtin:ArrayTimSort" "/tmp/perf-$P.map"
		side_by_side node "$P"
		"${CMP[@]}" --same-run "$TDIR/node.json" "$TDIR/node.folded" "$TDIR/node.perf" \
			'leaf:Builtins_ArrayTimSort@node' 'noprefix:Builtin:' |
			sed 's/^\(PASS\|FAIL\): /\1: node builtins: /'
		rm -f "/tmp/perf-$P.map"
	else
		fail "node starts" "$(cat "$TDIR/node.err")"
	fi
else
	skip "node" "node is not installed"
fi
ctl status >/dev/null && pass "kprofd answers" || fail "kprofd answers" "$(tail -5 "$TDIR/kprofd.log")"
finish
