#!/usr/bin/env bash
# bench/ingest.sh: the sample rate kprofd absorbs through the real ring buffer, and where its
# time goes (issue 8, item 3). Run as root: `BUILD=build bash bench/ingest.sh` (also run by
# bench/peers.sh, i.e. `make bench-peers`).
#
# Load. One private kprofd (a copy of $BUILD/kprofd, so that a rebuild during the run cannot
# give perf report the wrong symbols; own socket, --state-dir ""); INGEST_PROCS busy processes
# (default twice the CPUs), attached at INGEST_FREQ Hz (default 4999, kprofctl's maximum): with
# the default INGEST_LOAD=mixed, half are `minijit --seconds 0` (JIT code named from its perf map)
# and half `node --perf-basic-prof --interpreted-frames-native-stack manystacks.js` (256 JS
# functions calling each other along random paths 4-11 deep: almost every sample is a new stack,
# the costly case for the profile tables). cpu-clock sampling fires per CPU, so the machine can
# produce at most CPUs x INGEST_FREQ samples/s, less the CPU time kprofd and others take; the
# "expected" rate below is the targets' own CPU time (utime + stime from /proc) x INGEST_FREQ.
# After a warm-up (INGEST_WARMUP seconds: kernel symbols, perf maps, JIT tiers) the phases are:
#  1. free: INGEST_SECONDS with kprofd unconstrained: samples/s received (status samples), drops
#     (status drops), kprofd CPU (status cpu_ns), CPU per sample, and `perf stat` on kprofd
#     (software counters: task-clock, context switches = wake-ups, page faults);
#  2. profile: `perf record -F 4999 -g -p KPROFD -- sleep INGEST_SECONDS`, then the top symbols
#     by self time, the top kprofd functions by inclusive time (frame pointers: kprofd is built
#     with them, libc and libbpf are not, so their callers may be cut short) and the split by
#     DSO (kernel, kprofd, libc, libbpf...);
#  3. saturation: kprofd is put in a cgroup of its own with a CPU quota (cgroup v1
#     cpu.cfs_quota_us or v2 cpu.max; 100 ms period, 1 s below 1 ms per 100 ms) of each of
#     INGEST_QUOTA_FACTORS times the CPU share it used in phase 1 in turn (default 0.75 0.5 0.35
#     0.25; the load, hence that share, depends on what else runs), set right after a `status`
#     and lifted after INGEST_SECONDS and the closing `status`; the first factor that does not
#     keep up ends the phase (if none has kept up yet, the factor doubles, up to 4, as the load
#     may have grown since phase 1). The rate absorbed per CPU-second kprofd got is what one
#     fully busy core would absorb (a rate the 2-CPU reference machine cannot produce
#     directly); drops show saturation. kprofd serves clients between ring-buffer drains, so
#     when it cannot keep up the closing `status` comes late or not at all: after 5 s the phase
#     is reported as "did not keep up", with the rate the targets offered (their CPU time x F),
#     and the limit is lifted. Between the last quota that kept up and the first that did not
#     lies the capacity of one core. Skipped when no cpu cgroup controller is writable;
#  4. peers: kprofd detaches, then `perf record -F INGEST_FREQ -g -p PIDS -- sleep
#     INGEST_SECONDS` and `bpftrace -e 'profile:hz:INGEST_FREQ /pid == ... / { @[ustack] =
#     count(); } interval:s:INGEST_SECONDS { exit(); }'` (BPFTRACE_CACHE_USER_SYMBOLS=1 and
#     BPFTRACE_MAP_KEYS_MAX=65536, as the default 4096 keys fill up with these stacks) run in
#     turn on the same processes: their CPU time (wait4, start-up and exit included) per sample
#     kept, against kprofd's in phase 1: the steady-state form of the CPU-per-sample goal. perf
#     record only writes the samples; it symbolizes and aggregates in `perf report`, so the CPU
#     of `perf report --no-children -g none` (flat) and of `perf report --no-children` (call
#     graphs) on the same file is added in two more rows.
# Output: Markdown on stdout and $BUILD/bench/ingest.md; progress on stderr.
#
# Environment: BUILD (build), INGEST_SECONDS (8), INGEST_WARMUP (3), INGEST_FREQ (4999),
# INGEST_PROCS (2 x CPUs), INGEST_LOAD (mixed | minijit | node), INGEST_QUOTA_FACTORS ("0.75
# 0.5 0.35 0.25"; empty to skip phase 3), INGEST_ONLY_KPROFD (1: phases 1 and 3 only, no perf
# or bpftrace, to compare kprofd builds: with INGEST_QUOTA_FACTORS= a run takes about 25 s),
# PERF (perf binary; phases 2 and 4 and perf stat are
# skipped if none runs), NODE.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
INGEST_SECONDS=${INGEST_SECONDS:-8}
INGEST_WARMUP=${INGEST_WARMUP:-3}
INGEST_FREQ=${INGEST_FREQ:-4999}
INGEST_PROCS=${INGEST_PROCS:-$((2 * $(nproc)))}
INGEST_LOAD=${INGEST_LOAD:-mixed}
INGEST_QUOTA_FACTORS=${INGEST_QUOTA_FACTORS-0.75 0.5 0.35 0.25}
NODE=${NODE:-node}
KPROFD=$BUILD/kprofd
KPROFCTL=$BUILD/kprofctl
MINIJIT=$BUILD/minijit
OUT_DIR=$BUILD/bench

need_bins "$KPROFD" "$KPROFCTL" "$MINIJIT"
need_root "kprofd loads BPF programs"
need_cmds python3
need_ints INGEST_SECONDS INGEST_WARMUP INGEST_PROCS
need_freqs INGEST_FREQ
for q in $INGEST_QUOTA_FACTORS; do
	[[ $q =~ ^(0\.[0-9]*[1-9][0-9]*|1)$ ]] || die "INGEST_QUOTA_FACTORS: '$q' is not a factor in (0, 1]"
done
case $INGEST_LOAD in
mixed | node) command -v "$NODE" >/dev/null 2>&1 || die "$NODE not found: set INGEST_LOAD=minijit" ;;
minijit) ;;
*) die "INGEST_LOAD must be mixed, minijit or node" ;;
esac

# perf, as bench/peers.sh finds it (it exports PERF when it runs this script).
[ -n "${PERF:-}" ] || find_perf
PERF=${PERF:-}
[ -n "$PERF" ] || warn "no working perf: phase 2 and perf stat skipped"

others_running 'kprofd|minijit|node|perf|bpftrace'

bench_start ingest
SOCK=$TDIR/kprofd.sock
# The quota cgroup (if the python part could not remove it): empty once kprofd is gone.
bench_on_exit() {
	local d
	for d in /sys/fs/cgroup/cpu/kprof-ingest.$$ /sys/fs/cgroup/kprof-ingest.$$; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null || true
	done
}

# A private copy of the daemon: perf report names kprofd's functions from the file the process
# mapped, and a rebuild of $BUILD/kprofd during the run would give it the wrong symbols.
cp "$KPROFD" "$TDIR/kprofd"
# INGEST_KPROFD_ARGS: more kprofd flags (a --config with [windows] seconds, say).
# shellcheck disable=SC2086
kprofd_start "$TDIR/kprofd" "$KPROFCTL" "$SOCK" "" "$TDIR/kprofd.log" ${INGEST_KPROFD_ARGS:-}
mkdir -p "$OUT_DIR"

export INGEST_SECONDS INGEST_WARMUP INGEST_FREQ INGEST_PROCS INGEST_LOAD INGEST_QUOTA_FACTORS NODE
export KPROFCTL MINIJIT SOCK OUT_DIR TDIR DAEMON_PID PERF
export CGROUP_NAME=kprof-ingest.$$
export BENCH_OTHERS=${OTHERS_DESC:-none}
export_machine
export BENCH_CMD="BUILD=$BUILD INGEST_SECONDS=$INGEST_SECONDS INGEST_FREQ=$INGEST_FREQ INGEST_PROCS=$INGEST_PROCS INGEST_LOAD=$INGEST_LOAD INGEST_QUOTA_FACTORS='$INGEST_QUOTA_FACTORS' bash bench/ingest.sh"


python3 "$root/bench/ingest.py"
