#!/usr/bin/env bash
# bench/targets.sh: what profiling real targets costs (issue 16, "Measure"), kprof and perf 6.1
# side by side in one run. Three parts (TG_PARTS), each run by bench/targets.py:
#
# 1. start: the start-up overhead of `record`: wall time from spawn to reap of CMD alone,
#    `kprofctl record -o /dev/null --format folded -- CMD`, `perf record -q -o /dev/null --
#    CMD` and the same with --no-bpf-event, for CMD = /bin/true and `node -e 0`; TG_START_RUNS
#    rounds, the order of the modes turned by one each round (and the two commands swapped every
#    other round); median (min, max), and the overhead: the median of the per-round differences
#    to CMD alone. (perf 6.1's side-band thread for BPF events polls with a 1 s timeout and is
#    joined at the end: up to 1 s more at exit, which --no-bpf-event removes.)
# 2. attach: a JVM with TG_JVM_THREADS threads (tests/fixtures/jvm/Threads.java, `idle`: all
#    asleep but TG_JVM_SPIN that are busy half the time), started fresh for every window, then
#    profiled at 99 Hz by: `kprofctl attach PID --freq 99` (kprofd asks the JVM for its perf map,
#    the default), the same with --no-jvm-map, or `perf record -F 99 -g -p PID -o /dev/null`.
#    For kprof: the wall time of `kprofctl attach`, kprofd's log line "attached ... by N thread
#    events", kprofd's open fds (/proc/KPROFD/fd) before, right after, at most over the 2 s after
#    (a JVM's perf map is asked for meanwhile) and after the detach, `status --json`
#    thread_events. For perf: its fds (/proc/PERFPID/fd, counted every 5 ms from its spawn) and
#    the time until that count stopped growing (perf says nothing on stderr when it is ready).
#    TG_ATTACH_ROUNDS rounds, the order turned each round.
# 3. slowdown: a CPU-bound Node workload (`node --perf-basic-prof tests/fixtures/hot_fixed.js
#    TG_NODE_ITERS`) and a 4-thread JVM one (`java -XX:+PreserveFramePointer Threads work 4
#    TG_JVM_ROUNDS`), both fixed work, at each frequency of TG_FREQS: sets of four runs, the
#    command alone, under `kprofctl record --freq F -o /dev/null --format folded --`, under `perf
#    record -F F -g -o /dev/null --` and the same with --no-bpf-event, timed from spawn to reap;
#    the ratio over the run alone of the same set; TG_TRIPLES sets per cell, the cells taking
#    turns and the order inside a set turned each time. Every command runs under `sh -c 'echo $$
#    >F; exec CMD'` in all modes (the same few ms each), so that what the target leaves in /tmp
#    (perf map, JVM attach socket) is removed by its pid. kprofd's CPU per sample of a kprof
#    run: the cpu_ns and samples deltas of `kprofctl status --json` around it (the second read
#    once the record is over: record waits for kprofd to end the target); the same delta around
#    the run alone is kprofd's idle cost over that time. The CPU time of what was spawned
#    (wait4: the command, and kprofctl or perf) over the command alone's is given too: it
#    depends less than wall time on what else wants the CPUs.
#
# One kprofd of BUILD runs on a private socket, with a private state directory, for the whole
# benchmark; before it is measured it profiles dd for a moment (it loads the kernel's symbols
# once, 50-100 ms of CPU) and records each command once (not counted). Before every window (a
# round of part 1, a JVM of part 2, a set of part 3) the script waits, at most QUIET_WAIT s
# (and QUIET_TOTAL s over the whole run), until no test suite, fuzzer, benchmark, perf,
# bpftrace, minijit or foreign kprofd's integration test runs, and notes per window which other
# kprofd, minijit, node, java and perf processes there were, at its start and at its end.
#
# Environment: BUILD (build), TG_PARTS ("start attach slowdown"), TG_START_RUNS (20),
# TG_ATTACH_ROUNDS (5), TG_JVM_THREADS (200), TG_JVM_SPIN (2), TG_TRIPLES (7: sets of runs per
# cell of part 3), TG_WORKLOADS ("node jvm": the workloads of part 3), TG_FREQS ("99 999"),
# TG_NODE_ITERS (1500), TG_JVM_ROUNDS (12000), QUIET_WAIT (120), QUIET_TOTAL (600), PERF (perf),
# NODE (node), JAVA (java), JAVAC (javac), KPROFD and KPROFCTL (default $BUILD/kprofd and
# $BUILD/kprofctl: another build's pair; kprofctl must have `record`, else see
# bench/targets_ab.sh). As root. Output: the tables on stdout and in
# $BUILD/bench/targets.md, the runs one by one in $BUILD/bench/targets.csv, kprofd's log in
# $BUILD/bench/targets-kprofd.log; progress on stderr.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
TG_PARTS=${TG_PARTS:-start attach slowdown}
TG_START_RUNS=${TG_START_RUNS:-20}
TG_ATTACH_ROUNDS=${TG_ATTACH_ROUNDS:-5}
TG_JVM_THREADS=${TG_JVM_THREADS:-200}
TG_JVM_SPIN=${TG_JVM_SPIN:-2}
TG_TRIPLES=${TG_TRIPLES:-7}
TG_WORKLOADS=${TG_WORKLOADS:-node jvm}
TG_FREQS=${TG_FREQS:-99 999}
TG_NODE_ITERS=${TG_NODE_ITERS:-1500}
TG_JVM_ROUNDS=${TG_JVM_ROUNDS:-12000}
QUIET_WAIT=${QUIET_WAIT:-120}
QUIET_TOTAL=${QUIET_TOTAL:-600}
PERF=${PERF:-perf}
NODE=${NODE:-node}
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
KPROFD=${KPROFD:-$BUILD/kprofd}
KPROFCTL=${KPROFCTL:-$BUILD/kprofctl}
OUT_DIR=$BUILD/bench

need_bins "$KPROFD" "$KPROFCTL"
need_root "kprofd loads BPF programs"
need_cmds python3 "$PERF" "$NODE" "$JAVA" "$JAVAC"
need_nums TG_START_RUNS TG_ATTACH_ROUNDS TG_JVM_THREADS TG_TRIPLES TG_NODE_ITERS TG_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL
[[ $TG_JVM_SPIN =~ ^[0-9]+$ ]] && [ "$TG_JVM_SPIN" -le "$TG_JVM_THREADS" ] ||
	die "TG_JVM_SPIN must be a number of at most TG_JVM_THREADS"
need_freqs TG_FREQS
need_words TG_PARTS start attach slowdown
[ "$TG_TRIPLES" -ge 5 ] || warn "TG_TRIPLES=$TG_TRIPLES; the documented figures use at least 5"

JCLS=$(jvm_fixture "$BUILD" "$JAVAC")

bench_start bench-targets
SOCK=$TDIR/kprofd.sock
BENCH_KEEP+=("$TDIR/kprofd.log $OUT_DIR/targets-kprofd.log")
kprofd_start "$KPROFD" "$KPROFCTL" "$SOCK" "$TDIR/state" "$TDIR/kprofd.log"
mkdir -p "$OUT_DIR"

export TG_WORKLOADS TG_PARTS TG_START_RUNS TG_ATTACH_ROUNDS TG_JVM_THREADS TG_JVM_SPIN TG_TRIPLES TG_FREQS \
	TG_NODE_ITERS TG_JVM_ROUNDS QUIET_WAIT QUIET_TOTAL PERF NODE JAVA KPROFCTL SOCK OUT_DIR JCLS
export KPROFD_PID=$DAEMON_PID KPROFD_LOG=$TDIR/kprofd.log TDIR
export HOT_FIXED=$ROOT/tests/fixtures/hot_fixed.js
export BENCH_COMMIT BENCH_MACHINE
BENCH_COMMIT=$(bench_commit)
BENCH_MACHINE=$(machine_jvm "$PERF" "$NODE" "$JAVA")
BENCH_CMD="BUILD=$BUILD TG_PARTS='$TG_PARTS' TG_START_RUNS=$TG_START_RUNS TG_ATTACH_ROUNDS=$TG_ATTACH_ROUNDS TG_TRIPLES=$TG_TRIPLES TG_WORKLOADS='$TG_WORKLOADS' TG_FREQS='$TG_FREQS' TG_NODE_ITERS=$TG_NODE_ITERS TG_JVM_ROUNDS=$TG_JVM_ROUNDS QUIET_WAIT=$QUIET_WAIT QUIET_TOTAL=$QUIET_TOTAL bash bench/targets.sh"
export BENCH_CMD

python3 "$ROOT/bench/targets.py"
