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

[ -n "$KPROFD_B" ] && [ -n "$KPROFCTL_B" ] || die "set KPROFD_B and KPROFCTL_B to the other build's kprofd and kprofctl"
need_bins "$KPROFD_A" "$KPROFCTL_A" "$KPROFD_B" "$KPROFCTL_B"
need_root "kprofd loads BPF programs"
need_cmds python3 "$PERF" "$NODE" "$JAVA" "$JAVAC"
need_ints AB_SETS AB_NODE_ITERS AB_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL
[[ $AB_PERF =~ ^[01]$ ]] || die "AB_PERF must be 0 or 1, not '$AB_PERF'"
need_freqs AB_FREQS
need_words AB_WORKLOADS node jvm

JCLS=$(jvm_fixture "$BUILD" "$JAVAC")

bench_start bench-targets-ab
BENCH_KEEP+=("$TDIR/a.log $OUT_DIR/targets_ab-kprofd-a.log" "$TDIR/b.log $OUT_DIR/targets_ab-kprofd-b.log")
kprofd_start "$KPROFD_A" "$KPROFCTL_A" "$TDIR/a.sock" "$TDIR/a-state" "$TDIR/a.log"
PID_A=$DAEMON_PID
kprofd_start "$KPROFD_B" "$KPROFCTL_B" "$TDIR/b.sock" "$TDIR/b-state" "$TDIR/b.log"
PID_B=$DAEMON_PID
mkdir -p "$OUT_DIR"

export KPROFCTL_A KPROFCTL_B LABEL_A LABEL_B PID_A PID_B TDIR OUT_DIR JCLS AB_WORKLOADS AB_FREQS \
	AB_SETS AB_PERF AB_NODE_ITERS AB_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL PERF NODE JAVA
export SOCK_A=$TDIR/a.sock SOCK_B=$TDIR/b.sock HOT_FIXED=$ROOT/tests/fixtures/hot_fixed.js
BENCH_MACHINE=$(machine_jvm "$PERF" "$NODE" "$JAVA")
export BENCH_MACHINE
export BENCH_CMD="LABEL_A='$LABEL_A' KPROFD_A=$KPROFD_A KPROFCTL_A=$KPROFCTL_A LABEL_B='$LABEL_B' KPROFD_B=$KPROFD_B KPROFCTL_B=$KPROFCTL_B BUILD=$BUILD AB_WORKLOADS='$AB_WORKLOADS' AB_FREQS='$AB_FREQS' AB_SETS=$AB_SETS AB_PERF=$AB_PERF AB_NODE_ITERS=$AB_NODE_ITERS AB_JVM_ROUNDS=$AB_JVM_ROUNDS QUIET_WAIT=$QUIET_WAIT QUIET_TOTAL=$QUIET_TOTAL bash bench/targets_ab.sh"

python3 "$ROOT/bench/targets_ab.py"
