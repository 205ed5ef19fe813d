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

die() {
	echo "bench/slowdown.sh: $*" >&2
	exit 1
}

for b in "$KPROFD" "$KPROFCTL" "$MINIJIT"; do
	[ -x "$b" ] || die "$b not found or not executable: run 'make' first (or set BUILD)"
done
[ "$(id -u)" -eq 0 ] || die "must run as root: kprofd loads BPF programs (try: sudo make bench)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to time the runs"
[[ $BENCH_PAIRS =~ ^[1-9][0-9]*$ ]] || die "BENCH_PAIRS must be a positive integer, not '$BENCH_PAIRS'"
[[ $BENCH_ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer, not '$BENCH_ROUNDS'"
for f in $BENCH_FREQS; do
	if ! [[ $f =~ ^[1-9][0-9]*$ ]] || [ "$f" -gt 4999 ]; then
		die "BENCH_FREQS: '$f' is not a frequency in 1-4999 Hz"
	fi
done
[ -n "${BENCH_FREQS// /}" ] || die "BENCH_FREQS is empty"
[ "$BENCH_PAIRS" -ge 5 ] || echo "bench/slowdown.sh: warning: BENCH_PAIRS=$BENCH_PAIRS; the documented figures use at least 5 pairs" >&2

# Other profilers or fixtures compete for the 2 CPUs (and another kprofd's BPF programs tax every
# process): say so, in the table as well, rather than refuse to run.
others=$(pgrep -x 'kprofd|minijit' | tr '\n' ' ' || true)
others=${others% }
if [ -n "$others" ]; then
	echo "bench/slowdown.sh: warning: other kprofd/minijit processes are running (pids $others): the figures will be noisier" >&2
fi
export BENCH_OTHERS=${others:-none}

TDIR=$(mktemp -d /tmp/kprof-bench.XXXXXX)
chmod 755 "$TDIR"
SOCK=$TDIR/kprofd.sock
DAEMON_PID=

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	if [ -n "$DAEMON_PID" ]; then
		kprofd_stop "$DAEMON_PID"
	fi
	# The daemon log of the run, for a look at what it did (kernel symbols, profiles saved).
	if [ -d "$OUT_DIR" ] && [ -f "$TDIR/kprofd.log" ]; then
		cp "$TDIR/kprofd.log" "$OUT_DIR/slowdown-kprofd.log" 2>/dev/null || true
	fi
	if [ "$rc" -ne 0 ] && [ -s "$TDIR/kprofd.log" ]; then
		echo "bench/slowdown.sh: failed (status $rc); last lines of the kprofd log:" >&2
		tail -n 20 "$TDIR/kprofd.log" >&2
	fi
	rm -rf "$TDIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Kept profiles go to a private state directory, as they would to /var/lib/kprofd in production.
"$KPROFD" --socket "$SOCK" --state-dir "$TDIR/state" >"$TDIR/kprofd.log" 2>&1 &
DAEMON_PID=$!
kprofd_wait_up "$KPROFCTL" "$SOCK" "$DAEMON_PID" || die "kprofd did not come up on $SOCK"

mkdir -p "$OUT_DIR"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- 2>/dev/null; then
	commit="$commit (with uncommitted changes)"
fi
cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)

export BENCH_PAIRS BENCH_ROUNDS BENCH_FREQS KPROFCTL MINIJIT SOCK OUT_DIR
export BENCH_COMMIT=$commit
export BENCH_KERNEL
BENCH_KERNEL=$(uname -r)
export BENCH_NPROC
BENCH_NPROC=$(nproc)
export BENCH_CPU=${cpu_model:-unknown}
export BENCH_LOADAVG
BENCH_LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
export BENCH_DATE
BENCH_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
export BENCH_CMD="BUILD=$BUILD BENCH_PAIRS=$BENCH_PAIRS BENCH_ROUNDS=$BENCH_ROUNDS BENCH_FREQS='$BENCH_FREQS' bash bench/run.sh"


python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/slowdown.py"
