#!/usr/bin/env bash
# tests/run.sh: run every unit test program and every integration test, then print one closing
# line "N passed, N failed" for the whole suite. Unit tests are cmocka programs (their own
# summary lines are shown as they are); integration tests are tests/integration/test_*.sh,
# each printing "PASS: name" / "FAIL: name: why" / "SKIP: name: why" lines. Integration tests
# run as root; without root, only those whose header comment says "Needs no root". Each
# integration test's time is printed after its lines, for the suite's time budget.
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
if [ "${#tests[@]}" -gt 0 ]; then
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		# The sanitized run leaves out what adds no code of ours to check and costs the most
		# time (the suite has 20 minutes): tests whose header says "Not sanitized: WHY". They
		# run in the plain run.
		why=$(sed -n 's/^# .*Not sanitized: //p' "$t" | head -1)
		if [ -n "${SANITIZED:-}" ] && [ -n "$why" ]; then
			echo "SKIP: $name: not in the sanitized run: $why"
			skipped=$((skipped + 1))
			continue
		fi
		echo "-- $name"
		start=$SECONDS
		# 300 s each, unless its header says "Timeout: N" (the kernels' boots under QEMU).
		to=$(sed -n 's/^# .*Timeout: \([0-9][0-9]*\).*/\1/p' "$t" | head -1)
		BUILD=$BUILD timeout "${to:-300}" bash "$t" >"$log/$name.out" 2>&1
		rc=$?
		grep -E '^(PASS|FAIL|SKIP):' "$log/$name.out"
		echo "   ($name: $((SECONDS - start)) s)"
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
