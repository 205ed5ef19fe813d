# bench/lib.sh: what the shell benchmarks of bench/ share (sourced, not run): the checks of their
# environment, a private kprofd (own socket, state directory and log) started and stopped, the
# cleanup at exit, the waits for a ready line and for a quiet machine, kprofd's kernel-symbol
# warm-up, /proc readings and the machine's description for the tables. Works under `set -u`
# and `set -euo pipefail` alike. Errors say "bench/SCRIPT.sh: why" (BENCH_NAME).

BENCH_NAME=${BENCH_NAME:-bench/$(basename "$0")}
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(dirname "$BENCH_DIR")
BENCH_KPROFDS=() # the kprofds kprofd_start started and kprofd_stop has not stopped
BENCH_PIDS=()    # other processes to kill at exit (their /tmp/perf-PID.map removed too)
BENCH_KEEP=()    # "LOG COPY" pairs: at exit LOG is copied to COPY (the kprofd logs of a run)
BENCH_CGROUPS=() # cgroups cpu_group made (removed at exit, their processes gone)
TDIR=

die() {
	echo "$BENCH_NAME: $*" >&2
	exit 1
}
warn() {
	echo "$BENCH_NAME: warning: $*" >&2
}

# ---- checks ----------------------------------------------------------------------------------

# need_root [WHY]
need_root() {
	[ "$(id -u)" -eq 0 ] || die "must run as root${1:+: $1}"
}
# need_bins FILE...: each one built
need_bins() {
	local b
	for b; do
		[ -x "$b" ] || die "$b not found or not executable: run 'make' first (or set BUILD)"
	done
}
# need_cmds CMD...: each one installed
need_cmds() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 || die "$c not found"
	done
}
# need_ints NAME...: each variable a positive integer; need_nums: an integer >= 0
need_ints() {
	local n
	for n; do
		[[ ${!n} =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive integer, not '${!n}'"
	done
}
need_nums() {
	local n
	for n; do
		[[ ${!n} =~ ^[0-9]+$ ]] || die "$n must be a number, not '${!n}'"
	done
}
# need_freqs NAME: the variable a non-empty list of frequencies of 1-4999 Hz
need_freqs() {
	local f
	for f in ${!1}; do
		[[ $f =~ ^[1-9][0-9]*$ ]] && [ "$f" -le 4999 ] || die "$1: '$f' is not a frequency in 1-4999 Hz"
	done
	[ -n "${!1// /}" ] || die "$1 is empty"
}
# need_words NAME WORD...: each word of the variable one of WORDs
need_words() {
	local v=$1 w
	shift
	for w in ${!v}; do
		[[ " $* " == *" $w "* ]] || die "$v: no '$w' ($*)"
	done
}

# ---- the run's directory, kprofd and the cleanup ---------------------------------------------

# bench_start NAME: TDIR, a fresh /tmp/kprof-NAME.XXXXXX that the targets can read (Node and the
# JVM run as other users' files), and the traps: bench_cleanup at exit, INT and TERM exit 130 and
# 143.
bench_start() {
	TDIR=$(mktemp -d "/tmp/kprof-$1.XXXXXX")
	chmod 755 "$TDIR"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# bench_cleanup (the EXIT trap): the BENCH_PIDS killed and reaped (and their perf maps removed),
# the kprofds stopped, bench_on_exit if the script defines one, the BENCH_KEEP logs copied, the
# last lines of each kprofd log shown if the script failed, TDIR removed (kept with KEEP=1).
bench_cleanup() {
	local rc=$? p kl
	trap - EXIT INT TERM
	for p in "${BENCH_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -f "/tmp/perf-$p.map"
	done
	for p in "${BENCH_KPROFDS[@]}"; do kprofd_stop "$p"; done
	if declare -F bench_on_exit >/dev/null; then bench_on_exit || true; fi
	for p in "${BENCH_CGROUPS[@]}"; do
		for _ in 1 2 3 4 5; do rmdir "$p" 2>/dev/null && break; sleep 0.2; done
	done
	for kl in "${BENCH_KEEP[@]}"; do
		[ -d "$(dirname "${kl#* }")" ] && cp "${kl%% *}" "${kl#* }" 2>/dev/null || true
	done
	if [ "$rc" -ne 0 ] && [ -n "$TDIR" ]; then
		for kl in "$TDIR"/*.log; do
			[ -s "$kl" ] || continue
			echo "$BENCH_NAME: failed (status $rc); last lines of $(basename "$kl"):" >&2
			tail -n 20 "$kl" >&2
		done
	fi
	[ -z "$TDIR" ] || [ -n "${KEEP:-}" ] || rm -rf "$TDIR"
	exit "$rc"
}

# cpu_group NAME: a cgroup of the cpu controller (cgroup v2 with cpu enabled, else v1's cpu
# hierarchy) named NAME-PID, removed at exit; its directory is printed, nothing if there is no
# cpu controller. A systemd deployment runs kprofd.service and the workload each in its own
# cgroup with its own CPU weight: a bench whose targets are many busy processes puts them and
# kprofd in two of these, so that kprofd is not one task among hundreds (which starves it:
# each of its replies then waits seconds to run, and the runs fail on kprofctl's timeouts).
# Note: a v1 cgroup has no real-time budget (cpu.rt_runtime_us 0), so kprofd's SCHED_FIFO
# attach is refused in one.
cpu_group() {
	local d
	if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		d=/sys/fs/cgroup/$1-$$
	elif [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
		d=/sys/fs/cgroup/cpu/$1-$$
	else
		return 0
	fi
	mkdir -p "$d" 2>/dev/null || return 0
	BENCH_CGROUPS+=("$d")
	echo "$d"
}
# cpu_group_add DIR PID: PID into cgroup DIR (from cpu_group; nothing if DIR is "").
cpu_group_add() {
	[ -z "$1" ] || echo "$2" >"$1/cgroup.procs" 2>/dev/null || true
}

# kprofd_start KPROFD KPROFCTL SOCK STATE_DIR LOG [ARG...]: a kprofd on its own socket and state
# directory ("" for none), its output appended to LOG; sets DAEMON_PID. Dies if it does not
# answer within 20 s.
kprofd_start() {
	local kprofd=$1 ctl=$2 sock=$3 state=$4 log=$5
	shift 5
	"$kprofd" --socket "$sock" --state-dir "$state" "$@" >>"$log" 2>&1 &
	DAEMON_PID=$!
	BENCH_KPROFDS+=("$DAEMON_PID")
	kprofd_wait_up "$ctl" "$sock" "$DAEMON_PID" || die "kprofd ($kprofd) did not come up on $sock (log: $log)"
}

# kprofd_stop PID: SIGTERM, up to 10 s for a clean exit (it saves its profiles), then SIGKILL;
# the process is reaped.
kprofd_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	local k=() p
	for p in "${BENCH_KPROFDS[@]}"; do [ "$p" = "$pid" ] || k+=("$p"); done
	BENCH_KPROFDS=("${k[@]}")
}

# kprofd_wait_up KPROFCTL SOCK PID: poll `status` for up to 20 s; 1 if kprofd never answered
# or exited meanwhile.
kprofd_wait_up() {
	local ctl=$1 sock=$2 pid=$3 i
	for ((i = 0; i < 200; i++)); do
		"$ctl" --socket "$sock" status >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# warm_kernel_symbols KPROFCTL ARG...: the kprofd that `KPROFCTL ARG...` talks to profiles dd for
# a second, so that what it loads once (the kernel's symbols, 0.05-0.1 s) is not in a window.
warm_kernel_symbols() {
	local dd
	dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null &
	dd=$!
	"$@" attach "$dd" --freq 999 >/dev/null
	sleep 1
	"$@" report "$dd" >/dev/null
	kill "$dd"
	wait "$dd" 2>/dev/null || true
}

# wait_ready FILE WORD [TRIES [STEP]]: until WORD is in FILE (a target's stderr), at most TRIES
# (100) times STEP (0.1) s; 1 if it never was.
wait_ready() {
	local i
	for ((i = 0; i < ${3:-100}; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep "${4:-0.1}"
	done
	grep -q "$2" "$1" 2>/dev/null
}

# find_perf: PERF, the first of $PERF, perf, /usr/bin/perf_*, /usr/lib/linux-tools*/perf that can
# count an event here (Debian's linux-perf may not match the running kernel), or empty; then
# PERF_UNAVAILABLE says why none could.
find_perf() {
	local c out
	PERF_UNAVAILABLE=
	for c in ${PERF:-} perf /usr/bin/perf_* /usr/lib/linux-tools*/perf; do
		[ -x "$c" ] || c=$(command -v "$c" 2>/dev/null) || continue
		if [ -z "$c" ] || [ ! -x "$c" ]; then continue; fi
		if out=$("$c" stat -e task-clock -x, -- true 2>&1 >/dev/null); then
			PERF=$c
			return 0
		fi
		PERF_UNAVAILABLE="$c: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	done
	PERF=
	PERF_UNAVAILABLE=${PERF_UNAVAILABLE:-no perf binary found (apt-get install linux-perf)}
}

# ---- a quiet machine -------------------------------------------------------------------------

# What a window should not share the machine with: another kprofd, perf, bpftrace, a benchmark.
QUIET_RE='kprofd --socket|perf (record|top|stat)|bpftrace|bench/(slowdown|ingest|peers)|bench_ingest'
NOISY=0
busy_pids() {
	pgrep -f "$QUIET_RE" | grep -vx "$$" || true
}
# quiet_wait MAX: wait (5 s steps) until none of busy_pids runs; 1 (and NOISY + 1) if one still
# does after MAX s.
quiet_wait() {
	local t=0
	while [ -n "$(busy_pids)" ]; do
		[ "$t" -ge "$1" ] && { NOISY=$((NOISY + 1)); return 1; }
		[ "$t" -eq 0 ] && echo "  waiting for: $(busy_pids | xargs -r ps -o comm= -p | sort -u | tr '\n' ' ')" >&2
		sleep 5
		t=$((t + 5))
	done
}
# others_running NAMES: OTHERS, the pids of the processes named NAMES ("kprofd|minijit"),
# OTHERS_DESC the same as "comm(pid) ..."; a warning if there are some (they compete for the CPUs).
others_running() {
	local p
	OTHERS=$(pgrep -x "$1" 2>/dev/null | tr '\n' ' ' || true)
	OTHERS=${OTHERS% }
	OTHERS_DESC=$(for p in $OTHERS; do printf '%s(%s) ' "$(cat /proc/"$p"/comm 2>/dev/null || echo '?')" "$p"; done)
	[ -z "$OTHERS" ] || warn "other ${1//|//} processes are running (pids $OTHERS): the figures will be noisier"
}

# ---- /proc, JSON, medians --------------------------------------------------------------------

# loc: local timer interrupts so far, summed over the CPUs
loc() { awk '/^ *LOC:/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }
# cpu_ticks PID: utime + stime (clock ticks)
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# json_get EXPR: d EXPR of the JSON on stdin, e.g. json_get "['system_wide']['runs']"
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
# med3 NUMBER...: "median (min, max)"
med3() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s (%s, %s)", m, v[1], v[NR] }'; }
# median [NUMBER...]: the middle one (the lower of the two middle ones for an even count) of the
# arguments, or of the lines of stdin if there are none
median() {
	if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi |
		grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# ---- the machine, for the tables -------------------------------------------------------------

# bench_commit: the tree's short commit, "(with uncommitted changes)" when it has some
bench_commit() {
	local c
	c=$(git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ "$c" != unknown ] && ! git -C "$BENCH_ROOT" diff --quiet HEAD -- 2>/dev/null; then
		c="$c (with uncommitted changes)"
	fi
	echo "$c"
}
cpu_model() {
	local m
	m=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
	echo "${m:-unknown}"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
date_utc() { date -u '+%Y-%m-%d %H:%M UTC'; }
# export_machine: BENCH_COMMIT, BENCH_KERNEL, BENCH_NPROC, BENCH_CPU, BENCH_LOADAVG and BENCH_DATE
# exported, for the head of a table (kpbench.head_lines)
export_machine() {
	export BENCH_COMMIT BENCH_KERNEL BENCH_NPROC BENCH_CPU BENCH_LOADAVG BENCH_DATE
	BENCH_COMMIT=$(bench_commit)
	BENCH_KERNEL=$(uname -r)
	BENCH_NPROC=$(nproc)
	BENCH_CPU=$(cpu_model)
	BENCH_LOADAVG=$(loadavg)
	BENCH_DATE=$(date_utc)
}

# machine_jvm PERF NODE JAVA: the machine and the versions of perf, node and java, in one line
machine_jvm() {
	echo "Linux $(uname -r), $(nproc) CPUs ($(cpu_model)), perf $("$1" --version | awk '{ print $3 }'), node $("$2" --version), $("$3" -version 2>&1 | head -n 1)"
}

# jvm_fixture BUILD JAVAC: the directory of tests/fixtures/jvm/Threads.class, compiled into
# BUILD/jvm when the source is newer (as test_jvm.sh does)
jvm_fixture() {
	local d
	d=$(realpath -m "$1/jvm")
	if [ ! -f "$d/Threads.class" ] || [ "$BENCH_ROOT/tests/fixtures/jvm/Threads.java" -nt "$d/Threads.class" ]; then
		mkdir -p "$d" && "$2" -d "$d" "$BENCH_ROOT/tests/fixtures/jvm/Threads.java" >&2 || die "javac Threads.java failed"
	fi
	echo "$d"
}
