#!/usr/bin/env bash
# tests/run.sh: run every unit test program and every integration test, then print one closing
# line "N passed, N failed" for the whole suite. Unit tests are cmocka programs (their own
# summary lines are shown as they are); integration tests are tests/integration/test_*.sh,
# each printing "PASS: name" / "FAIL: name: why" / "SKIP: name: why" lines. Integration tests
# run as root; without root, only those whose header comment says "Needs no root". Each
# integration test's time is printed after its lines, for the suite's time budget.
# TESTS="test_a test_b ..." runs only those integration tests (a subset, for their authors).
set -u
# Tests that run make themselves do it as from a shell, not as jobs of make check's -j.
unset MAKEFLAGS MFLAGS MAKELEVEL
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
passed=0 failed=0 skipped=0
log=$(mktemp -d /tmp/kprof-tests.XXXXXX)
unit=1 integration=1
[ "${1:-}" = --integration-only ] && unit=0
[ "${1:-}" = --unit-only ] && integration=0
# Sanitized binaries write their reports here instead of into logs that tests delete.
if [ -n "${SANITIZED:-}" ]; then
	mkdir -p "$log/san"
	export ASAN_OPTIONS="log_path=$log/san/asan:detect_leaks=1:abort_on_error=0"
	export UBSAN_OPTIONS="log_path=$log/san/ubsan:print_stacktrace=1:halt_on_error=0"
fi

[ "$unit" = 1 ] && echo "== unit tests"
for t in "$BUILD"/tests/test_*; do
	[ "$unit" = 1 ] || break
	[ -x "$t" ] || continue
	name=$(basename "$t")
	"$t" >"$log/$name.out" 2>&1
	rc=$?
	grep -E '^\[ *(PASSED|FAILED|==========) *\]|^\[  ERROR   \]|^\[  FAILED  \]' "$log/$name.out" | sed "s/^/$name: /"
	p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' "$log/$name.out" | tail -1)
	f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' "$log/$name.out" | tail -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		echo "$name: exited with status $rc"; tail -20 "$log/$name.out"
		failed=$((failed + 1))
		echo "$name: exited with status $rc" >>"$log/failed"
	elif [ -n "$f" ]; then
		grep -E 'FAILED|ERROR|error|Failure' "$log/$name.out" | head -20
		grep -E '^\[  FAILED  \] [a-z]' "$log/$name.out" | sed "s/^/$name: /" >>"$log/failed"
	fi
done

[ "$integration" = 1 ] && echo "== integration tests"
tests=()
if [ "$integration" = 0 ]; then
	:
elif [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: integration: needs root (BPF, perf events, other processes' /proc)"
	skipped=$((skipped + 1))
	# Tests that say so in their header run anyway.
	for t in tests/integration/test_*.sh; do
		grep -q '^# .*Needs no root' "$t" && tests+=("$t")
	done
else
	tests=(tests/integration/test_*.sh)
fi
if [ -n "${TESTS:-}" ] && [ "${#tests[@]}" -gt 0 ]; then
	sel=()
	for t in "${tests[@]}"; do
		[[ " $TESTS " == *" $(basename "$t" .sh) "* ]] && sel+=("$t")
	done
	tests=("${sel[@]}")
fi
# The sanitized run leaves out what adds no code of ours to check and costs the most time (the
# suite has 35 minutes): tests whose header says "Not sanitized: WHY". They run in the plain run.
not_here() { [ -n "${SANITIZED:-}" ] && grep -q '^# .*Not sanitized: ' "$1"; }
# Each test gets 300 s, unless its header says "Timeout: N" (the kernels' boots under QEMU).
timeout_of() { local to; to=$(sed -n 's/^# .*Timeout: \([0-9][0-9]*\).*/\1/p' "$1" | head -1); echo "${to:-300}"; }
# A test whose header says "Background: WHY" starts with the first test, at the lowest priority
# (nice 19: it runs on the CPU time the others leave idle, and they run as on a machine where it
# is not), and is waited for after the others, where its lines and time are printed: test_kernels'
# QEMU guests, two minutes of CPU-bound boots, overlap the whole suite. Then it and everything it
# started are back at the default priority (renice: a machine busy with other work would leave it
# little CPU at 19).
declare -A bg_pid bg_start
# Two runners at once (make check runs the plain and the sanitized suites side by side) share
# the machine through KPROF_SUITE_LOCK, a file both name: each test holds it shared, and a test
# whose header says "Alone: WHY" (it changes or measures what belongs to the whole host: a
# /proc/sys setting, every process's samples, the timer interrupts) holds it exclusive, so
# the other runner's tests wait for it and it for them. A turnstile beside it (LOCK.turn) gives an
# Alone test the lock at the next gap instead of never. The locks are flock(1)'s, on descriptors
# 8 and 9 of this shell alone: a test and what it leaves running do not inherit them.
alone() { grep -q '^# .*Alone: ' "$1"; }
if [ -n "${KPROF_SUITE_LOCK:-}" ]; then
	exec 8>>"$KPROF_SUITE_LOCK" 9>>"$KPROF_SUITE_LOCK.turn"
fi
lock_test() {
	[ -n "${KPROF_SUITE_LOCK:-}" ] || return 0
	if alone "$1"; then
		flock 9 && flock -x 8
	else
		flock 9 && flock -u 9 && flock -s 8
	fi
}
unlock_test() {
	[ -n "${KPROF_SUITE_LOCK:-}" ] || return 0
	flock -u 8; flock -u 9
}
# tree PID: PID and its descendants.
tree() {
	ps -eo pid=,ppid= | awk -v p="$1" '{ kids[$2] = kids[$2] " " $1 }
		END { q[1] = p; n = 1; for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], k, " ")
			for (j = 1; j <= m; j++) q[++n] = k[j] } }'
}
# A suite stopped (^C, the CI's limit) takes its background tests and their guests with it.
declare -A bg_done
stop_bg() {
	local n
	for n in "${!bg_pid[@]}"; do
		[ -z "${bg_done[$n]:-}" ] && kill $(tree "${bg_pid[$n]}") 2>/dev/null
	done
}
trap stop_bg EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for t in "${tests[@]}"; do
	grep -q '^# .*Background: ' "$t" && ! not_here "$t" || continue
	name=$(basename "$t" .sh)
	BUILD=$BUILD nice -n 19 timeout "$(timeout_of "$t")" bash "$t" >"$log/$name.out" 2>&1 8>&- 9>&- &
	bg_pid[$name]=$!
	bg_start[$name]=$SECONDS
done
order=() last=()
for t in "${tests[@]}"; do
	if [ -n "${bg_pid[$(basename "$t" .sh)]:-}" ]; then last+=("$t"); else order+=("$t"); fi
done
order+=("${last[@]}")
if [ "${#order[@]}" -gt 0 ]; then
	for t in "${order[@]}"; do
		name=$(basename "$t" .sh)
		if not_here "$t"; then
			echo "SKIP: $name: not in the sanitized run: $(sed -n 's/^# .*Not sanitized: //p' "$t" | head -1)"
			skipped=$((skipped + 1))
			continue
		fi
		echo "-- $name"
		start=$SECONDS
		waited=""
		if [ -z "${bg_pid[$name]:-}" ]; then
			lock_test "$t"
			[ $((SECONDS - start)) -gt 1 ] && waited="; it waited $((SECONDS - start)) s for the other runner"
			start=$SECONDS
		fi
		if [ -n "${bg_pid[$name]:-}" ]; then
			renice -n 0 -p $(tree "${bg_pid[$name]}") >/dev/null 2>&1
			wait "${bg_pid[$name]}"
			rc=$?
			bg_done[$name]=1
		else
			BUILD=$BUILD timeout "$(timeout_of "$t")" bash "$t" >"$log/$name.out" 2>&1 8>&- 9>&-
			rc=$?
			unlock_test
		fi
		grep -E '^(PASS|FAIL|SKIP):' "$log/$name.out"
		if [ -n "${bg_pid[$name]:-}" ]; then
			echo "   ($name: $((SECONDS - start)) s; it ran in the background for $((SECONDS - bg_start[$name])) s)"
		else
			echo "   ($name: $((SECONDS - start)) s$waited)"
		fi
		p=$(grep -c '^PASS:' "$log/$name.out")
		f=$(grep -c '^FAIL:' "$log/$name.out")
		s=$(grep -c '^SKIP:' "$log/$name.out")
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL: $name: script exited with status $rc"
			failed=$((failed + 1))
		fi
		if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
			echo "   (log: $log/$name.out)"; tail -30 "$log/$name.out" | sed 's/^/   | /'
			grep '^FAIL:' "$log/$name.out" | cut -c1-240 | sed "s/^/$name${SANITIZED:+ (sanitized)}: /" >>"$log/failed"
			[ "$f" -gt 0 ] || echo "$name${SANITIZED:+ (sanitized)}: script exited with status $rc" >>"$log/failed"
		fi
	done
fi

if [ -n "${SANITIZED:-}" ]; then
	reports=$(ls "$log/san" 2>/dev/null | wc -l)
	if [ "$reports" -eq 0 ]; then
		echo "PASS: sanitizers: no AddressSanitizer or UndefinedBehaviorSanitizer report"
		passed=$((passed + 1))
	else
		echo "FAIL: sanitizers: $reports report(s):"
		head -40 "$log"/san/* | sed 's/^/   | /'
		failed=$((failed + 1))
		echo "sanitizers: $reports report(s) in $log/san" >>"$log/failed"
	fi
fi

echo
# Every failed check once more, one line each, where a reader of the run's tail sees them.
if [ -s "$log/failed" ]; then
	echo "failed checks:"
	sed 's/^/  /' "$log/failed"
	[ -n "${RESULTS_FILE:-}" ] && sed 's/^/  /' "$log/failed" >>"$RESULTS_FILE.failed"
fi
[ -n "${RESULTS_FILE:-}" ] && echo "$passed $failed $skipped" >>"$RESULTS_FILE"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
