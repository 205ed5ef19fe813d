#!/usr/bin/env bash
# bench/windows.sh: time windows (issue 17 item 2, "Measure"). Run as root:
# `BUILD=build bash bench/windows.sh` (about 11 minutes; WIN_PARTS="hour sizes cpu" picks parts,
# WIN_LOAD=node the workload of the hour and sizes parts, see mj below).
#
#  hour:  one hour's worth of 10 s windows at 99 Hz, in 6 minutes: kprofd with [windows]
#         seconds = 1 and a busy minijit attached at 999 Hz for WIN_HOUR_SECONDS (360): 360
#         windows of about 990 samples each, the number of windows and of samples per window
#         that an hour of 10 s windows at 99 Hz has (the stacks per window are what one second
#         of the workload gives, not ten; for a steady workload the same). Then the windows'
#         real sizes (status: memory and disk bytes, files), and the time `kprofctl export PID
#         --since 2h` takes to answer (the range merges every window; median of 5), with
#         `report` and `hcct` of the same range.
#  sizes: real 10 s windows for WIN_SIZE_SECONDS (120): a minijit at 99 Hz and one at 19 Hz in
#         one kprofd; bytes per window per target from the files, times 360 per hour; against
#         `perf record -g -F 99|19 -p PID` on the same processes for 60 s, its file size x 60.
#  cpu:   kprofd's CPU (utime + stime from /proc/PID/stat) over WIN_CPU_SECONDS (60) with 50
#         processes watched at 19 Hz (`kprofctl watch add --comm winload --freq 19`; each spins
#         2 ms of every 100 ms), with [windows] seconds = 10 and with seconds = 3600 (no window
#         cut during the run: the cost without windows).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
PARTS=${WIN_PARTS:-hour sizes cpu}
HOUR_S=${WIN_HOUR_SECONDS:-360}
SIZE_S=${WIN_SIZE_SECONDS:-120}
CPU_S=${WIN_CPU_SECONDS:-60}
bench_start winbench
T=$TDIR
KPROFD=$T/kprofd
cp "$BUILD/kprofd" "$KPROFD"
CTL="$BUILD/kprofctl --socket $T/sock"
PIDS=()
bench_on_exit() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; rm -f "/tmp/perf-$p.map"; done
}

daemon() { # daemon CONF: start kprofd with that [windows] text
	rm -rf "$T/state"
	printf '%b' "$1" >"$T/kprofd.conf"
	kprofd_start "$KPROFD" "$BUILD/kprofctl" "$T/sock" "$T/state" "$T/kprofd.log" --config "$T/kprofd.conf"
	DPID=$DAEMON_PID
}
stop_daemon() { kprofd_stop "$DPID"; DPID=; }
sj() { $CTL status --json | json_get "['$1']"; }
# mj: start the workload (WIN_LOAD=minijit, the default: a busy minijit, few distinct stacks;
# WIN_LOAD=node: manystacks.js, almost every sample a new stack, the costly case); sets MJ.
mj() {
	if [ "${WIN_LOAD:-minijit}" = node ]; then
		node --perf-basic-prof --interpreted-frames-native-stack \
			"$(dirname "$0")/../tests/fixtures/manystacks.js" 100000 >/dev/null 2>&1 &
		MJ=$!
		sleep 3
	else
		"$BUILD/minijit" --seconds 0 >/dev/null 2>"$T/mj.$RANDOM" &
		MJ=$!
		sleep 1
	fi
	PIDS+=("$MJ")
}

if [[ " $PARTS " == *" hour "* ]]; then
	echo "## hour: $HOUR_S windows of 1 s, a minijit at 999 Hz"
	daemon '[windows]\nseconds = 1\nmemory_mb = 1024\n'
	mj
	$CTL attach "$MJ" --freq 999 >/dev/null
	sleep "$HOUR_S"
	sleep 1.5
	$CTL detach "$MJ" >/dev/null
	sleep 1.5
	echo "windows: $(sj windows), samples: $(sj samples), memory bytes: $(sj window_memory_bytes), disk bytes: $(sj window_disk_bytes)"
	echo "files: $(ls "$T"/state/profiles/w-*.kpw | wc -l), $(du -cb "$T"/state/profiles/w-*.kpw | tail -1 | cut -f1) bytes"
	for verb in export report hcct; do
		for i in 1 2 3 4 5; do
			case $verb in
			export) args=(export "$MJ" --since 2h -o /dev/null) ;;
			report) args=(report "$MJ" --since 2h --top 20) ;;
			hcct) args=(hcct "$MJ" --since 2h) ;;
			esac
			s=$(date +%s%N)
			$CTL "${args[@]}" >"$T/out" || echo "$verb failed"
			e=$(date +%s%N)
			echo $(((e - s) / 1000000))
		done | median | sed "s/^/$verb --since 2h (median of 5, ms): /"
	done
	$CTL report "$MJ" --since 2h --top 3 | head -3
	echo "kprofd RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$DPID/status)"
	stop_daemon
	kill -9 "$MJ"
fi

if [[ " $PARTS " == *" sizes "* ]]; then
	echo "## sizes: 10 s windows for $SIZE_S s, minijit at 99 Hz and at 19 Hz"
	daemon '[windows]\nseconds = 10\n'
	mj; M99=$MJ
	mj; M19=$MJ
	$CTL attach "$M99" --freq 99 >/dev/null
	$CTL attach "$M19" --freq 19 >/dev/null
	sleep "$SIZE_S"
	$CTL detach "$M99" >/dev/null
	$CTL detach "$M19" >/dev/null
	sleep 1
	for p in "$M99:99" "$M19:19"; do
		pid=${p%%:*} hz=${p##*:}
		n=$(ls "$T"/state/profiles/w-*-"$pid".kpw | wc -l)
		b=$(du -cb "$T"/state/profiles/w-*-"$pid".kpw | tail -1 | cut -f1)
		echo "$hz Hz: $n windows, $b bytes, $((b / n)) per window, $((b * 360 / n)) per hour (x 360 / windows)"
	done
	stop_daemon
	for p in "$M99:99" "$M19:19"; do
		pid=${p%%:*} hz=${p##*:}
		perf record -q -g -F "$hz" -p "$pid" -o "$T/perf.$hz.data" -- sleep 60 2>/dev/null
		s=$(stat -c %s "$T/perf.$hz.data")
		echo "perf record -g -F $hz, 60 s: $s bytes, x 60 per hour: $((s * 60))"
	done
	kill -9 "$M99" "$M19"
fi

if [[ " $PARTS " == *" cpu "* ]]; then
	echo "## cpu: 50 processes watched at 19 Hz, $CPU_S s"
	cat >"$T/winload.c" <<'EOF'
#include <time.h>
#include <unistd.h>
volatile unsigned long sink;
static double ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__attribute__((noinline)) void work(double until) { while (ms() < until) for (int i = 0; i < 1000; i++) sink += i; }
int main(void) { for (;;) { work(ms() + 2); usleep(98000); } }
EOF
	cc -O1 -fno-omit-frame-pointer -o "$T/winload" "$T/winload.c"
	for secs in 10 3600; do
		daemon "[windows]\\nseconds = $secs\\n"
		$CTL watch add --comm winload --freq 19 >/dev/null
		for _ in $(seq 50); do "$T/winload" & PIDS+=($!); done
		sleep 5
		a=$(cpu_ticks "$DPID")
		sleep "$CPU_S"
		b=$(cpu_ticks "$DPID")
		echo "[windows] seconds = $secs: targets $(sj auto_targets), samples $(sj samples), windows $(sj windows), kprofd CPU $(((b - a) * 10)) ms in $CPU_S s ($(python3 -c "print(round(($b - $a) / $(getconf CLK_TCK) / $CPU_S * 100, 3))") %)"
		for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
		PIDS=()
		stop_daemon
	done
fi
