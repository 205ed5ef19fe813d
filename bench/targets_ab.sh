#!/usr/bin/env bash
# bench/targets_ab.sh: the slowdown of bench/targets.sh's Node and 4-thread JVM workloads under
# two kprofd builds, A and B (e.g. main and the commit before a change), side by side in the
# same sets of runs, so that whatever else the machine does hits both. Timing and process
# control in bench/targets_ab.py.
#
# Both kprofds run for the whole benchmark, each on a private socket and state directory. A
# set is one run of the command in each mode: alone, under kprofd B, under kprofd A and (with
# AB_PERF=1) under `perf record -F F -g -o /dev/null --`; the order is turned by one each set.
# kprofd's CPU per sample of a run: the cpu_ns and samples deltas of `status --json` around it.
#
# Why not `kprofctl record`: an older kprofctl may not have it. Every command is held instead
# the way record holds it, in all modes: `sh -c 'kill -STOP $$; exec CMD'` stops itself, the
# script attaches it (`kprofctl attach PID --freq F`, the same request in both builds; nothing
# for alone), sends SIGCONT and reaps it; the shell then execs CMD in the same pid, which both
# builds follow (the per-CPU build by tgid, the per-thread build by its inherited events).
# "run" is the wall time from the SIGCONT to the reap; "total" from the spawn to the reap (the
# attach included). perf is timed from its spawn to its reap, against the alone run's total.
# After a kprof run the script waits until that kprofd has ended the target (status:
# targets_attached 0) before it reads its CPU.
#
# Before every set the script waits, at most QUIET_WAIT s (and QUIET_TOTAL s over the run),
# until no test suite, fuzzer, benchmark, perf, bpftrace, minijit or integration test of another
# session runs, and notes what else there was.
#
# Environment: KPROFD_A and KPROFCTL_A (default $BUILD/kprofd, $BUILD/kprofctl), KPROFD_B and
# KPROFCTL_B (required: the other build's pair; each kprofctl talks to its own kprofd), LABEL_A
# (A), LABEL_B (B), BUILD (build: where the JVM fixture is compiled and the output goes),
# AB_WORKLOADS ("node jvm"), AB_FREQS ("99 999"), AB_SETS (5), AB_PERF (1), AB_NODE_ITERS (1500),
# AB_JVM_ROUNDS (12000), QUIET_WAIT (30), QUIET_TOTAL (300), PERF, NODE, JAVA, JAVAC. As root.
# Output: the tables on stdout and in $BUILD/bench/targets_ab.md, the runs one by one in
# $BUILD/bench/targets_ab.csv, the kprofds' logs in $BUILD/bench/targets_ab-kprofd-{a,b}.log.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
KPROFD_A=${KPROFD_A:-$BUILD/kprofd}
KPROFCTL_A=${KPROFCTL_A:-$BUILD/kprofctl}
KPROFD_B=${KPROFD_B:-}
KPROFCTL_B=${KPROFCTL_B:-}
LABEL_A=${LABEL_A:-A}
LABEL_B=${LABEL_B:-B}
AB_WORKLOADS=${AB_WORKLOADS:-node jvm}
AB_FREQS=${AB_FREQS:-99 999}
AB_SETS=${AB_SETS:-5}
AB_PERF=${AB_PERF:-1}
AB_NODE_ITERS=${AB_NODE_ITERS:-1500}
AB_JVM_ROUNDS=${AB_JVM_ROUNDS:-12000}
QUIET_WAIT=${QUIET_WAIT:-30}
QUIET_TOTAL=${QUIET_TOTAL:-300}
PERF=${PERF:-perf}
NODE=${NODE:-node}
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
OUT_DIR=$BUILD/bench

die() {
	echo "bench/targets_ab.sh: $*" >&2
	exit 1
}
[ -n "$KPROFD_B" ] && [ -n "$KPROFCTL_B" ] || die "set KPROFD_B and KPROFCTL_B to the other build's kprofd and kprofctl"
for b in "$KPROFD_A" "$KPROFCTL_A" "$KPROFD_B" "$KPROFCTL_B"; do
	[ -x "$b" ] || die "$b not found or not executable"
done
[ "$(id -u)" -eq 0 ] || die "must run as root: kprofd loads BPF programs"
for c in python3 "$PERF" "$NODE" "$JAVA" "$JAVAC"; do
	command -v "$c" >/dev/null || die "$c not found"
done
for n in AB_SETS AB_NODE_ITERS AB_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL; do
	[[ ${!n} =~ ^[0-9]+$ ]] && [ "${!n}" -gt 0 ] || die "$n must be a positive number, not '${!n}'"
done
[[ $AB_PERF =~ ^[01]$ ]] || die "AB_PERF must be 0 or 1, not '$AB_PERF'"
for f in $AB_FREQS; do
	[[ $f =~ ^[1-9][0-9]*$ ]] && [ "$f" -le 4999 ] || die "AB_FREQS: '$f' is not a frequency in 1-4999 Hz"
done
for w in $AB_WORKLOADS; do
	case $w in node | jvm) ;; *) die "AB_WORKLOADS: no workload '$w' (node, jvm)" ;; esac
done

JCLS=$(realpath -m "$BUILD/jvm")
if [ ! -f "$JCLS/Threads.class" ] || [ "$ROOT/tests/fixtures/jvm/Threads.java" -nt "$JCLS/Threads.class" ]; then
	mkdir -p "$JCLS" && "$JAVAC" -d "$JCLS" "$ROOT/tests/fixtures/jvm/Threads.java" || die "javac Threads.java failed"
fi

TDIR=$(mktemp -d /tmp/kprof-bench-targets-ab.XXXXXX)
chmod 755 "$TDIR"
PID_A=
PID_B=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$PID_A" ] && kprofd_stop "$PID_A"
	[ -n "$PID_B" ] && kprofd_stop "$PID_B"
	if [ -d "$OUT_DIR" ]; then
		cp "$TDIR/a.log" "$OUT_DIR/targets_ab-kprofd-a.log" 2>/dev/null || true
		cp "$TDIR/b.log" "$OUT_DIR/targets_ab-kprofd-b.log" 2>/dev/null || true
	fi
	if [ "$rc" -ne 0 ]; then
		for s in a b; do
			[ -s "$TDIR/$s.log" ] && echo "bench/targets_ab.sh: failed (status $rc); kprofd $s's last lines:" >&2 &&
				tail -n 10 "$TDIR/$s.log" >&2
		done
	fi
	rm -rf "$TDIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$KPROFD_A" --socket "$TDIR/a.sock" --state-dir "$TDIR/a-state" >"$TDIR/a.log" 2>&1 &
PID_A=$!
"$KPROFD_B" --socket "$TDIR/b.sock" --state-dir "$TDIR/b-state" >"$TDIR/b.log" 2>&1 &
PID_B=$!
kprofd_wait_up "$KPROFCTL_A" "$TDIR/a.sock" "$PID_A" || die "kprofd A did not come up"
kprofd_wait_up "$KPROFCTL_B" "$TDIR/b.sock" "$PID_B" || die "kprofd B did not come up"
mkdir -p "$OUT_DIR"

export KPROFCTL_A KPROFCTL_B LABEL_A LABEL_B PID_A PID_B TDIR OUT_DIR JCLS AB_WORKLOADS AB_FREQS \
	AB_SETS AB_PERF AB_NODE_ITERS AB_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL PERF NODE JAVA
export SOCK_A=$TDIR/a.sock SOCK_B=$TDIR/b.sock HOT_FIXED=$ROOT/tests/fixtures/hot_fixed.js
export BENCH_MACHINE="Linux $(uname -r), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)), perf $("$PERF" --version | awk '{ print $3 }'), node $("$NODE" --version), $("$JAVA" -version 2>&1 | head -n 1)"
export BENCH_CMD="LABEL_A='$LABEL_A' KPROFD_A=$KPROFD_A KPROFCTL_A=$KPROFCTL_A LABEL_B='$LABEL_B' KPROFD_B=$KPROFD_B KPROFCTL_B=$KPROFCTL_B BUILD=$BUILD AB_WORKLOADS='$AB_WORKLOADS' AB_FREQS='$AB_FREQS' AB_SETS=$AB_SETS AB_PERF=$AB_PERF AB_NODE_ITERS=$AB_NODE_ITERS AB_JVM_ROUNDS=$AB_JVM_ROUNDS QUIET_WAIT=$QUIET_WAIT QUIET_TOTAL=$QUIET_TOTAL bash bench/targets_ab.sh"

python3 "$ROOT/bench/targets_ab.py"
