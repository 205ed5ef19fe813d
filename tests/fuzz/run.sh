#!/usr/bin/env bash
# run.sh: build the libFuzzer targets in tests/fuzz/ and run each, for a number of executions or
# for a bounded time.
#
#   BUILD=build bash tests/fuzz/run.sh [fuzz_perfmap fuzz_cfg ...]    # FUZZ_RUNS executions each
#   BUILD=build FUZZ_SECONDS=5 bash tests/fuzz/run.sh                  # 5 s each (make check, CI)
#
# Each target (every tests/fuzz/fuzz_*.c) is built with clang, libFuzzer, ASan and UBSan (every
# UB report fatal), linked with the libraries kprofd and kprofctl use, built by make with coverage
# instrumentation in $BUILD/fuzz/build/ (the linker takes the module fuzzed and what it calls,
# nothing else), and run on a copy of its seed corpus (tests/fuzz/corpus/<target>/ is never
# written):
#   FUZZ_SECONDS unset or empty: until FUZZ_RUNS executions (default 10000000, libFuzzer -runs),
#     with a safety limit of FUZZ_MAX_TIME seconds (default 7200); a target stopped by that limit
#     before FUZZ_RUNS executions FAILs ("only N of M runs").
#   FUZZ_SECONDS=N > 0: for N seconds (libFuzzer -max_total_time), however many runs that is.
#   FUZZ_SECONDS=0: the seed corpus once, then stop.
# One line per target: "PASS: fuzz_x: N runs in T s (E exec/s), no crash" or "FAIL: fuzz_x:
# <summary>"; the exit code is non-zero if any target crashed, leaked, broke an invariant, fell
# short of its runs or did not build. Crashing inputs go to $BUILD/fuzz/crashes/, full logs to
# $BUILD/fuzz/logs/. To replay one:
#   $BUILD/fuzz/fuzz_x $BUILD/fuzz/crashes/fuzz_x-crash-<sha1>
# Targets run one after another (libFuzzer uses one core each); FUZZ_JOBS=2 runs two at a time.
# FUZZ_BUILD_ONLY=1 builds the libraries and stops (make check builds them early, beside the tests).
set -uo pipefail

cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-}
FUZZ_RUNS=${FUZZ_RUNS:-10000000}
FUZZ_MAX_TIME=${FUZZ_MAX_TIME:-7200}
FUZZ_JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
OUT=$BUILD/fuzz
LIB=$OUT/build
CRASHES=$OUT/crashes
LOGS=$OUT/logs

# The libraries (libkprof.a, libkprofwire.a) and the kprofctl objects some targets test, built by
# make in $LIB with coverage instrumentation and the sanitizers: the Makefile is the one place
# that lists the modules' sources. The CLI objects go into an archive too, so that each target
# links only what it calls.
LIB_FLAGS='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all'
CLI_OBJS=(cli/render.o cli/render_paths.o)
CFLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE
	-std=gnu11 -Wall -Wextra -Werror -Iinclude -I"$LIB" -Itests/fuzz)
LINK=("$LIB/libkprofcli.a" "$LIB/libkprofwire.a" "$LIB/libkprof.a"
	-lprotobuf-c -lelf -linih -lcapstone -lz -lm)
# Every tests/fuzz/fuzz_*.c is a target.
ALL=()
for f in tests/fuzz/fuzz_*.c; do
	f=${f##*/}
	ALL+=("${f%.c}")
done

if [ $# -gt 0 ]; then
	TARGETS=("$@")
else
	TARGETS=("${ALL[@]}")
fi
if ! [[ "$FUZZ_SECONDS" =~ ^[0-9]*$ && "$FUZZ_RUNS" =~ ^[1-9][0-9]*$ &&
	"$FUZZ_MAX_TIME" =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: FUZZ_SECONDS, FUZZ_RUNS and FUZZ_MAX_TIME must be numbers" >&2
	exit 2
fi
for t in "${TARGETS[@]}"; do
	if [ ! -f "tests/fuzz/$t.c" ]; then
		echo "run.sh: unknown target '$t' (targets: ${ALL[*]})" >&2
		exit 2
	fi
done
if ! command -v "$CLANG" >/dev/null; then
	echo "run.sh: $CLANG not found: libFuzzer needs clang" >&2
	exit 2
fi
mkdir -p "$OUT" "$CRASHES" "$LOGS"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kprof-fuzz.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The libraries, once for all targets (an outer make's flags and jobserver are not passed on).
build_libs() {
	local objs=("${CLI_OBJS[@]/#/$LIB/obj/}")
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -j"$(nproc)" BUILD="$LIB" \
		CC="$CLANG" OPTFLAGS='-g -O1' CFLAGS="$LIB_FLAGS" \
		"$LIB/libkprof.a" "$LIB/libkprofwire.a" "${objs[@]}" &&
		rm -f "$LIB/libkprofcli.a" && ar rcs "$LIB/libkprofcli.a" "${objs[@]}"
}

build() {
	local t=$1
	if [ ! -f "$LIB/libkprofcli.a" ]; then
		echo "the libraries did not build: see $LOGS/libs.build.log" >"$LOGS/$t.build.log"
		return 1
	fi
	"$CLANG" "${CFLAGS[@]}" -o "$OUT/$t" "tests/fuzz/$t.c" "${LINK[@]}" >"$LOGS/$t.build.log" 2>&1
}

# Run one target; writes its result line to $TMP/$t.result.
fuzz_one() {
	local t=$1 log=$LOGS/$t.log corpus=$TMP/$t/corpus runs eps secs summary start
	local -a limit

	if ! build "$t"; then
		echo "FAIL: $t: does not build (see $LOGS/$t.build.log)" >"$TMP/$t.result"
		sed 's/^/    /' "$LOGS/$t.build.log" | head -20 >>"$TMP/$t.result"
		return
	fi
	mkdir -p "$corpus"
	cp -R "tests/fuzz/corpus/$t/." "$corpus/"
	if [ -z "$FUZZ_SECONDS" ]; then
		limit=(-runs="$FUZZ_RUNS" -max_total_time="$FUZZ_MAX_TIME")
	elif [ "$FUZZ_SECONDS" -gt 0 ]; then
		limit=(-max_total_time="$FUZZ_SECONDS")
	else
		limit=(-runs=0)
	fi
	start=$(date +%s)
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		"$OUT/$t" "${limit[@]}" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
		-artifact_prefix="$CRASHES/$t-" "$corpus" >"$log" 2>&1
	local rc=$?
	secs=$(($(date +%s) - start))
	runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	if [ $rc -eq 0 ] && [ -z "$FUZZ_SECONDS" ] && [ "${runs:-0}" -lt "$FUZZ_RUNS" ]; then
		{
			echo "FAIL: $t: only ${runs:-0} of $FUZZ_RUNS runs in ${secs} s (${eps:-?}" \
				"exec/s): stopped by FUZZ_MAX_TIME=$FUZZ_MAX_TIME"
			echo "    log: $log"
		} >"$TMP/$t.result"
		return
	fi
	if [ $rc -eq 0 ]; then
		echo "PASS: $t: ${runs:-?} runs in ${secs} s (${eps:-?} exec/s), no crash" \
			>"$TMP/$t.result"
		return
	fi
	# The first line that says what went wrong, then where the input went.
	summary=$(grep -m1 -E 'invariant broken|^SUMMARY: |ERROR: libFuzzer|^==[0-9]+==ERROR' "$log")
	summary=${summary:-"exit code $rc"}
	{
		echo "FAIL: $t: $summary"
		grep -E 'Test unit written to' "$log" | sed 's/^/    /'
		echo "    log: $log"
	} >"$TMP/$t.result"
}

rm -f "$LIB/libkprofcli.a"
build_libs >"$LOGS/libs.build.log" 2>&1
[ -z "${FUZZ_BUILD_ONLY:-}" ] || exit 0
running=0
for t in "${TARGETS[@]}"; do
	fuzz_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$FUZZ_JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

status=0 npass=0 nfail=0
for t in "${TARGETS[@]}"; do
	cat "$TMP/$t.result"
	if grep -q '^PASS' "$TMP/$t.result"; then npass=$((npass + 1)); else nfail=$((nfail + 1)); status=1
		[ -z "${RESULTS_FILE:-}" ] || head -1 "$TMP/$t.result" | sed 's/^/  fuzz: /' >>"$RESULTS_FILE.failed"; fi
done
[ -n "${RESULTS_FILE:-}" ] && echo "$npass $nfail 0" >>"$RESULTS_FILE"
echo "$npass passed, $nfail failed"
exit $status
