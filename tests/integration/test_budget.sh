#!/usr/bin/env bash
# The profile memory budget (limits.profiles_mb; issue 34): over it, kprofd keeps counting every
# sample and stops growing. A stack the profile holds is counted as itself; a new one as
# "[over budget]" and its leaf. kprofd runs with the smallest budget (16 MiB):
#   1. minijit at 999 Hz (few stacks, all held before the budget is spent), then manystacks.js
#      under Node at 4999 Hz (a new stack almost every sample) until the profiles pass 16 MiB:
#      the log says so once;
#   2. afterwards both targets' samples still come, every one counted (report's total is the
#      samples taken), manystacks' new stacks under "[over budget]" (their sum is samples_cut,
#      report says it), and the profiles' memory stays where it was (within 1 MiB) while
#      thousands more samples come;
#   3. minijit's stacks, held, count as before: its leaf shares beside `perf record -g` of the
#      same run after the budget was spent;
#   4. a process started after the budget was spent keeps stacks of its own while it holds
#      less than the attached targets' mean, within a sixteenth of the budget more;
#   5. a reload with a larger budget: stacks kept in full again.
# Needs root and node; perf for the comparison (skipped without).
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
CMP=(python3 "$(dirname "$0")/names_compare.py")
command -v node >/dev/null || { skip "profile budget" "node is not installed"; finish; }
printf '[limits]\nprofiles_mb = 16\n' >"$TDIR/budget.conf"
start_daemon --config "$TDIR/budget.conf" || { fail "daemon starts" "see log"; exit 1; }

status_key() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
total() { ctl report "$1" --top 0 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['total_samples'])"; }
# start_manystacks NAME: manystacks.js under Node (a new stack almost every sample) in MS_PID,
# its stderr in $TDIR/NAME.err; the test ends if it does not start.
start_manystacks() {
	(cd "$TDIR" && exec node --perf-basic-prof --interpreted-frames-native-stack \
		"$FIX/manystacks.js" 600) 2>"$TDIR/$1.err" &
	MS_PID=$!
	PIDS+=("$MS_PID")
	wait_for 30 grep -q ready "$TDIR/$1.err" ||
		{ fail "manystacks starts" "$(cat "$TDIR/$1.err")"; exit 1; }
}
over_logged() { grep -q "new stacks are counted as \[over budget\]" "$TDIR/kprofd.log"; }

# 1.
start_minijit --anon --seconds 600 || { fail "minijit starts" ""; exit 1; }
MJ=$MJ_PID
check "attach minijit" ctl attach "$MJ" --freq 999
wait_for 60 at_least_samples "$MJ" 1000 || fail "minijit samples" "$(ctl list)"
start_manystacks ms
NP=$MS_PID
check "attach manystacks" ctl attach "$NP" --freq 4999
check "status names the budget, not spent" sh -c "'$KPROFCTL' --socket '$SOCK' status | grep -q 'of 16 MiB (limits.profiles_mb)\$'"
if wait_for 180 over_logged; then
	pass "the log says the budget is spent: $(grep -o "the profiles hold.*" "$TDIR/kprofd.log" | head -1)"
else
	fail "budget spent" "$(status_key profile_bytes) bytes, $(tail -3 "$TDIR/kprofd.log")"
	exit 1
fi

# 2. and 3. (after the next housekeeping has frozen both profiles)
sleep 1.5
check "status says it is spent" test "$(status_key profiles_over_budget)" = True
B0=$(status_key profile_bytes)
N0=$(samples "$NP")
M0=$(samples "$MJ")
PERF_PID=
if command -v perf >/dev/null; then
	perf record -q -F 999 -g -p "$MJ" -o "$TDIR/perf.data" >/dev/null 2>&1 &
	PERF_PID=$!
fi
more() { [ "$(samples "$NP")" -ge $((N0 + 10000)) ] && [ "$(samples "$MJ")" -ge $((M0 + 3000)) ]; }
check "samples still come after the budget is spent (manystacks +10,000, minijit +3,000)" \
	wait_for 120 more
[ -n "$PERF_PID" ] && stop_tool "$PERF_PID"
kill -STOP "$NP" "$MJ"
sleep 0.3 # the samples taken before they stopped are in the ring buffer
B1=$(status_key profile_bytes)
check "the profiles' memory stays put: $B0 then $B1 bytes" \
	python3 -c "import sys; sys.exit(0 if $B1 - $B0 <= 1048576 else 1)"
ctl export "$NP" --format folded -o "$TDIR/ms.folded" # folded's text stops at 64 MiB
t=$(total "$NP")
n=$(samples "$NP")
cut=$(target_json "$NP" samples_cut)
refused=$(target_json "$NP" samples_refused)
[ -n "$t" ] && [ "$t" = "$n" ] && [ "$refused" = 0 ] &&
	pass "every sample of manystacks counted: report's total $t of $n taken, none refused" ||
	fail "every sample counted" "report $t, taken $n, refused $refused"
ob=$(awk '/^\[over budget\]/ { s += $NF } END { print s + 0 }' "$TDIR/ms.folded")
[ "$cut" -gt 0 ] && [ "$ob" = "$cut" ] &&
	pass "new stacks counted as [over budget] and their leaf: $ob samples, samples_cut $cut" ||
	fail "[over budget] stacks" "folded $ob, samples_cut $cut"
said() { ctl report "$NP" --top 1 | tr -s ' \n' ' ' | grep -q "$1"; }
check "report says it" said 'with a new stack counted as \[over budget\] and their leaf'
check "... with their leaf: the JIT functions" \
	grep -qE '^\[over budget\];JS:\*stackFunctionNumber[0-9]+ .* [0-9]+$' "$TDIR/ms.folded"
t=$(total "$MJ")
n=$(samples "$MJ")
[ -n "$t" ] && [ "$t" = "$n" ] && pass "every sample of minijit counted: $t of $n" ||
	fail "minijit counted" "report $t, taken $n"
ctl report "$MJ" --top 0 --json >"$TDIR/mj.json"
ctl folded "$MJ" >"$TDIR/mj.folded"
if [ -n "$PERF_PID" ]; then
	perf script -i "$TDIR/perf.data" -F ip,sym,dso >"$TDIR/perf.script" 2>/dev/null
	"${CMP[@]}" --same-run "$TDIR/mj.json" "$TDIR/mj.folded" "$TDIR/perf.script" \
		leaf:mj_hot leaf:mj_warm | while read -r l; do echo "$l (over the budget)"; done
else
	skip "perf comparison" "perf is not installed"
fi
kill -CONT "$NP" "$MJ"

# 4. A process started after the budget was spent: its profile grows on while it holds less
#    than the attached targets' mean (6 MiB here), so its own stacks are kept, not only
#    "[over budget]". manystacks again, at 99 Hz: a new stack almost every sample. The profiles
#    hold at most a sixteenth of the budget more than when it was found spent.
start_manystacks ms2
NP2=$MS_PID
check "attach a process after the budget was spent" ctl attach "$NP2" --freq 99
wait_for 60 at_least_samples "$NP2" 400 || fail "late manystacks samples" "$(ctl list)"
n=$(samples "$NP2")
cut=$(target_json "$NP2" samples_cut)
st=$(target_json "$NP2" stacks)
# Without the floor it would stop growing at the first housekeeping after its attach: at most
# a second's samples (99) kept as their own stacks.
[ $((n - cut)) -ge 200 ] &&
	pass "... its own stacks are kept: $((n - cut)) of its $n samples ($st stacks), $cut as [over budget]" ||
	fail "late process's stacks" "$st stacks, $cut of $n samples as [over budget]"
B2=$(status_key profile_bytes)
check "the profiles hold at most a sixteenth more than when the budget was found spent, and a second's growth ($B0 then $B2 bytes)" \
	python3 -c "import sys; sys.exit(0 if $B2 <= $B0 + 2 * 1048576 else 1)"
check "status still says the budget is spent" test "$(status_key profiles_over_budget)" = True
kill "$NP2"

# 5.
S0=$(target_json "$NP" stacks)
printf '[limits]\nprofiles_mb = 4096\n' >"$TDIR/budget.conf"
kill -HUP "$DAEMON_PID"
under_logged() { grep -q "stacks kept in full again" "$TDIR/kprofd.log"; }
check "a reload with a larger budget: the log says stacks are kept in full again" \
	wait_for 30 under_logged
grown() { [ "$(target_json "$NP" stacks)" -ge $((S0 + 1000)) ]; }
check "... and new stacks are kept again (from $S0)" wait_for 60 grown
kill "$NP" "$MJ" 2>/dev/null
finish
