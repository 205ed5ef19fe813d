#!/usr/bin/env bash
# bench/slowdown.sh: target slowdown under kprofd and the daemon's own CPU time per sample.
#
# One kprofd runs on a private socket (kept profiles in a private state directory) for the whole
# benchmark. For each frequency, BENCH_PAIRS pairs of runs of the same deterministic CPU-bound
# workload (`minijit --rounds BENCH_ROUNDS`) are timed from spawn to exit: one unprofiled, one
# attached with `kprofctl attach PID --freq F` as soon as minijit reports ready. The order inside a
# pair alternates (even pair: unprofiled first; odd pair: profiled first) so slow drift of the
# machine cancels out, and the figure is the median of the per-pair ratios profiled/unprofiled,
# with min and max as the noise floor. The same ratio is also taken on minijit's own CPU time
# (wait4), which competing processes disturb less than wall time; CPU/wall and /proc/stat show
# how contended the CPUs were. `kprofctl status --json` before and after each run gives the
# daemon's CPU time (getrusage of kprofd) and samples over it: their ratio for a profiled run is
# the daemon's CPU per sample, and an unprofiled run gives its idle cost over the same time.
# A short warm-up (not counted) first pays what kprofd loads once (kernel symbols: dd is attached
# for a moment, as it lives in the kernel) and warms the page cache. Timing and process control are a python3 program (bench/slowdown.py) (perf_counter around
# subprocess). The tables go to stdout and $BUILD/bench/slowdown.md, the raw runs to
# $BUILD/bench/slowdown.csv, the daemon's log to $BUILD/bench/slowdown-kprofd.log; progress goes
# to stderr.
#
# Environment: BUILD (default build), BENCH_PAIRS (default 7), BENCH_ROUNDS (default 1300, about
# 3.3 s per run on the reference VM), BENCH_FREQS (default "99 999").
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
BENCH_PAIRS=${BENCH_PAIRS:-7}
BENCH_ROUNDS=${BENCH_ROUNDS:-1300}
BENCH_FREQS=${BENCH_FREQS:-99 999}
KPROFD=$BUILD/kprofd
KPROFCTL=$BUILD/kprofctl
MINIJIT=$BUILD/minijit
OUT_DIR=$BUILD/bench

need_bins "$KPROFD" "$KPROFCTL" "$MINIJIT"
need_root "kprofd loads BPF programs (try: sudo make bench)"
need_cmds python3
need_ints BENCH_PAIRS BENCH_ROUNDS
need_freqs BENCH_FREQS
[ "$BENCH_PAIRS" -ge 5 ] || warn "BENCH_PAIRS=$BENCH_PAIRS; the documented figures use at least 5 pairs"

# Other profilers or fixtures compete for the 2 CPUs (and another kprofd's BPF programs tax every
# process): say so, in the table as well, rather than refuse to run.
others_running 'kprofd|minijit'
export BENCH_OTHERS=${OTHERS:-none}

bench_start bench
SOCK=$TDIR/kprofd.sock
# The daemon log of the run, for a look at what it did (kernel symbols, profiles saved).
BENCH_KEEP+=("$TDIR/kprofd.log $OUT_DIR/slowdown-kprofd.log")
# Kept profiles go to a private state directory, as they would to /var/lib/kprofd in production.
kprofd_start "$KPROFD" "$KPROFCTL" "$SOCK" "$TDIR/state" "$TDIR/kprofd.log"
mkdir -p "$OUT_DIR"

export BENCH_PAIRS BENCH_ROUNDS BENCH_FREQS KPROFCTL MINIJIT SOCK OUT_DIR
export_machine
export BENCH_CMD="BUILD=$BUILD BENCH_PAIRS=$BENCH_PAIRS BENCH_ROUNDS=$BENCH_ROUNDS BENCH_FREQS='$BENCH_FREQS' bash bench/run.sh"

python3 "$BENCH_DIR/slowdown.py"
