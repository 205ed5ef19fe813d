#!/usr/bin/env bash
# bench/peers.sh: kprof against perf record and bpftrace on the same workloads (issue 8), then
# the symbolization (bench/symbolize_bench.c) and ingestion (bench/ingest.sh) benchmarks.
# Entry point of `make bench-peers`; run as root from anywhere: `BUILD=build bash bench/peers.sh`.
#
# Workloads. "minijit": `minijit --rounds PEERS_ROUNDS --wait-usr1` (fixed CPU-bound JIT work;
# its code is in a memfd mapped r-x, named by /tmp/perf-PID.map; mj_hot is the hottest function).
# "node": hotFunction and warmFunction of tests/fixtures/hot.js, required by bench/peers_work.js,
# which does a fixed number of iterations (PEERS_NODE_ITERS) instead of running for a fixed time,
# under `node --perf-basic-prof`; hotFunction is the hottest. Both wait for a go signal (SIGUSR1; a
# line on stdin) once started, so each profiler is attached and sampling before the measured
# work starts and its start-up is not counted as slowdown. The timed part goes from the go
# signal to the exit of minijit, or to node's "done" line (node then waits for the end of its
# stdin, so the profilers are stopped while it is alive, as when profiling a server). The
# workload's CPU time is wait4() for minijit, process.cpuUsage() over the timed part for node.
#
# Profilers, each at every frequency of PEERS_FREQS (default 99 and 999 Hz):
#  - kprof: one kprofd for the whole benchmark (private socket, --state-dir ""), `kprofctl
#    attach PID --freq F` before the go signal; its CPU time is the status cpu_ns delta around
#    the run (getrusage of the daemon), its memory VmRSS growth over the run and its VmHWM;
#  - perf: `perf record -F F -g -p PID -D -1 --control fifo:...` (started with events disabled,
#    enabled through the control fifo and acknowledged before the go signal); it exits by itself
#    when minijit exits and is stopped with SIGINT after node's done line; its CPU time and peak
#    RSS are wait4()'s (what /usr/bin/time -v prints), samples from its "(N samples)" line;
#  - bpftrace: `bpftrace -e 'profile:hz:F /pid == $1/ { @[ustack] = count(); }' PID` (the
#    issue's one-liner with a pid filter, so it keeps the same process the others do), ready when
#    it prints __BPFTRACE_NOTIFY_PROBES_ATTACHED, stopped with SIGINT; it prints and symbolizes
#    the stacks then. CPU time and peak RSS from wait4(), samples = the sum of the counts.
# Every profiled run is paired with an unprofiled run, in alternating order (odd pairs profiled
# first, even pairs unprofiled first), and the configurations take turns (round robin, rotated
# each pair) so that drift of a shared machine spreads over all of them. Slowdown = profiled /
# unprofiled per pair; the tables give the median with min and max over PEERS_PAIRS pairs.
# "Hottest function named": the top self symbol of each profile (kprofctl report; perf report
# --no-children --sort dso,sym, read while the perf map is still there; bpftrace's leaf frames
# added up) must contain mj_hot / hotFunction. A naming check follows: each tool profiles a
# running minijit (--seconds 0) for PEERS_NAMING_SECONDS and is stopped while it is alive, with
# the code in a memfd (the default) and in anonymous memory (--anon).
# CPU per sample here includes each tool's fixed costs per run (perf: start-up and its build-id
# pass at the end; bpftrace: compiling the program, symbolizing at the end; kprofd: attach,
# reading symbols); bench/ingest.sh measures the steady state at a high rate.
# bpftrace runs with BPFTRACE_CACHE_USER_SYMBOLS=1 (PEERS_BPFTRACE_CACHE=0: its default, which
# with ASLR re-reads the symbols of every module for every frame it prints: minutes of CPU per
# node run here).
#
# Output: Markdown on stdout and $BUILD/bench/peers.md (raw runs: peers.csv), then
# symbolize.md and ingest.md; progress on stderr. Nothing here asserts on time.
#
# Environment: BUILD (build), PEERS_PAIRS (5), PEERS_ROUNDS (500 minijit rounds, about 1.3 s of
# CPU), PEERS_NODE_ITERS (700, about 1.3 s), PEERS_FREQS ("99 999"), PEERS_TOOLS ("kprof perf
# bpftrace"), PEERS_WORKLOADS ("minijit node"), PEERS_NAMING_SECONDS (2; 0 skips the check),
# PEERS_PARTS ("peers symbolize ingest"), PEERS_BPFTRACE_CACHE (1), PEERS_BPF_STATS (1: set
# kernel.bpf_stats_enabled during the comparison, restored after, to time kprof's BPF sampler in the
# target; it adds two clock reads to every BPF program run), PERF (default: the first of
# perf, /usr/bin/perf_*, /usr/lib/linux-tools*/perf that runs), BPFTRACE (bpftrace), NODE
# (node); bench/ingest.sh takes INGEST_* variables. The binaries are copied to a private
# directory first, so a rebuild of the tree during the run changes nothing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export BUILD=${BUILD:-build}
PEERS_PAIRS=${PEERS_PAIRS:-5}
PEERS_ROUNDS=${PEERS_ROUNDS:-500}
PEERS_NODE_ITERS=${PEERS_NODE_ITERS:-700}
PEERS_FREQS=${PEERS_FREQS:-99 999}
PEERS_TOOLS=${PEERS_TOOLS:-kprof perf bpftrace}
PEERS_WORKLOADS=${PEERS_WORKLOADS:-minijit node}
PEERS_NAMING_SECONDS=${PEERS_NAMING_SECONDS:-2}
PEERS_PARTS=${PEERS_PARTS:-peers symbolize ingest}
PEERS_BPFTRACE_CACHE=${PEERS_BPFTRACE_CACHE:-1}
BPFTRACE=${BPFTRACE:-bpftrace}
NODE=${NODE:-node}
KPROFD=$BUILD/kprofd
KPROFCTL=$BUILD/kprofctl
MINIJIT=$BUILD/minijit
OUT_DIR=$BUILD/bench

need_root "kprofd, perf and bpftrace load BPF programs or open perf events"
need_ints PEERS_PAIRS PEERS_ROUNDS PEERS_NODE_ITERS
need_nums PEERS_NAMING_SECONDS
need_freqs PEERS_FREQS
need_words PEERS_TOOLS kprof perf bpftrace
need_words PEERS_WORKLOADS minijit node
need_words PEERS_PARTS peers symbolize ingest
[ "$PEERS_PAIRS" -ge 5 ] || warn "PEERS_PAIRS=$PEERS_PAIRS; the documented figures use at least 5 pairs"

mkdir -p "$OUT_DIR"
has_part() {
	[[ " $PEERS_PARTS " == *" $1 "* ]]
}

run_peers() {
	local t
	need_bins "$KPROFD" "$KPROFCTL" "$MINIJIT"
	need_cmds python3
	find_perf
	BPFTRACE_UNAVAILABLE=
	if ! command -v "$BPFTRACE" >/dev/null 2>&1; then
		BPFTRACE_UNAVAILABLE="$BPFTRACE not found (apt-get install bpftrace)"
	elif ! out=$("$BPFTRACE" -e 'BEGIN { exit(); }' 2>&1 >/dev/null); then
		BPFTRACE_UNAVAILABLE="$BPFTRACE cannot load a program: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
	if [[ " $PEERS_WORKLOADS " == *" node "* ]] && ! command -v "$NODE" >/dev/null 2>&1; then
		die "$NODE not found: install nodejs or set PEERS_WORKLOADS=minijit"
	fi
	for t in $PEERS_TOOLS; do
		[ "$t" = perf ] && [ -z "$PERF" ] && warn "perf cannot run here, skipped: $PERF_UNAVAILABLE"
		[ "$t" = bpftrace ] && [ -n "$BPFTRACE_UNAVAILABLE" ] && warn "bpftrace skipped: $BPFTRACE_UNAVAILABLE"
	done

	# Other profilers and fixtures compete for the CPUs (another kprofd's BPF programs also tax
	# every process): say so in the table rather than refuse to run.
	others_running 'kprofd|minijit|node|perf|bpftrace'

	bench_start peers
	SOCK=$TDIR/kprofd.sock

	# Private copies: the tree may be rebuilt while the benchmark runs (and perf report names
	# minijit's native frames from the file it mapped).
	cp "$KPROFD" "$KPROFCTL" "$MINIJIT" "$TDIR/"
	KPROFD=$TDIR/kprofd KPROFCTL=$TDIR/kprofctl MINIJIT=$TDIR/minijit
	kprofd_start "$KPROFD" "$KPROFCTL" "$SOCK" "" "$TDIR/kprofd.log"

	export PEERS_PAIRS PEERS_ROUNDS PEERS_NODE_ITERS PEERS_FREQS PEERS_TOOLS PEERS_WORKLOADS
	export PEERS_NAMING_SECONDS PEERS_BPFTRACE_CACHE KPROFCTL MINIJIT SOCK OUT_DIR TDIR DAEMON_PID NODE
	export PERF PERF_UNAVAILABLE BPFTRACE BPFTRACE_UNAVAILABLE
	export PERF_VERSION BPFTRACE_VERSION NODE_VERSION
	PERF_VERSION=$([ -n "$PERF" ] && "$PERF" --version 2>/dev/null || echo none)
	BPFTRACE_VERSION=$([ -z "$BPFTRACE_UNAVAILABLE" ] && "$BPFTRACE" --version 2>/dev/null || echo none)
	NODE_VERSION=$("$NODE" --version 2>/dev/null || echo none)
	export BENCH_OTHERS=${OTHERS_DESC:-none}
	export_machine
	export BENCH_CMD="BUILD=$BUILD PEERS_PAIRS=$PEERS_PAIRS PEERS_ROUNDS=$PEERS_ROUNDS PEERS_NODE_ITERS=$PEERS_NODE_ITERS PEERS_FREQS='$PEERS_FREQS' bash bench/peers.sh"

	python3 "$root/bench/peers.py"
	kprofd_stop "$DAEMON_PID"
}

if has_part peers; then
	run_peers
fi
if has_part symbolize; then
	[ -x "$BUILD/symbolize_bench" ] || die "$BUILD/symbolize_bench not found: build it first (make bench-peers does)"
	echo "peers: symbolization benchmark ($BUILD/symbolize_bench)" >&2
	"$BUILD/symbolize_bench" >"$OUT_DIR/symbolize.md.tmp"
	mv "$OUT_DIR/symbolize.md.tmp" "$OUT_DIR/symbolize.md"
	# shellcheck disable=SC2016 # backquotes for Markdown
	printf '\nCommand: `%s/symbolize_bench` (part of `make bench-peers`)\n\n' "$BUILD"
	cat "$OUT_DIR/symbolize.md"
fi
if has_part ingest; then
	bash bench/ingest.sh
fi
