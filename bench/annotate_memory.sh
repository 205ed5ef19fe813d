#!/usr/bin/env bash
# bench/annotate_memory.sh: the memory of annotate's per-target store (per-instruction counts and
# code snapshots, daemon/lib/annot.c) per sampled function, on real targets sampled at 999 Hz for
# SECONDS each (default 20): minijit --anon, Node (hot.js and manystacks.js: 256 functions), and a
# HotSpot JVM (tests/fixtures/jvm/Hot.java) when java is there. Prints one line per target:
# samples, user functions with self samples, (function, address) entries, store bytes, bytes per
# function. Needs root. Usage: BUILD=build bash bench/annotate_memory.sh [SECONDS]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
SECS=${1:-20}
ROOT=$BENCH_ROOT
bench_start annmem
T=$TDIR
PIDS=()
bench_on_exit() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for p in "${PIDS[@]}"; do rm -f "/tmp/perf-$p.map" "/tmp/.java_pid$p" /tmp/hsperfdata_*/"$p"; done
}
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$T/s" "$T/state" "$T/log"
ctl() { "$BUILD/kprofctl" -s "$T/s" "$@"; }
measure() { # NAME PID
	local name=$1 pid=$2
	ctl attach "$pid" --freq 999 >/dev/null || return
	sleep "$SECS"
	ctl detach "$pid" >/dev/null
	python3 - "$name" <(ctl list --all --json) <(ctl report "$pid" --top 0 --json) "$pid" <<'PY'
import json, sys
name, lst, rep, pid = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), int(sys.argv[4])
t = [t for t in lst["targets"] if t["pid"] == pid][-1]
fns = [e for e in rep["entries"] if e["self"] > 0 and e["kind"] != "kernel"]
b = t["annotate_bytes"]
print(f"{name:24} samples {t['samples']:7}  functions {len(fns):5}  store {b / 1024:8.1f} KiB"
      f"  per function {b / max(len(fns), 1):7.0f} B  dropped {t['annotate_dropped']}")
PY
}
"$BUILD/minijit" --anon --seconds $((SECS + 30)) >/dev/null 2>&1 &
PIDS+=($!); sleep 0.5; measure "minijit --anon" "${PIDS[-1]}"
if command -v node >/dev/null; then
	node --perf-basic-prof "$ROOT/tests/fixtures/hot.js" $((SECS + 30)) >/dev/null 2>&1 &
	PIDS+=($!); sleep 2; measure "node hot.js" "${PIDS[-1]}"
	node --perf-basic-prof --interpreted-frames-native-stack "$ROOT/tests/fixtures/manystacks.js" \
		$((SECS + 30)) >/dev/null 2>&1 &
	PIDS+=($!); sleep 2; measure "node manystacks.js" "${PIDS[-1]}"
fi
if command -v java >/dev/null && command -v javac >/dev/null; then
	mkdir -p "$T/jvm" && javac -d "$T/jvm" "$ROOT/tests/fixtures/jvm/Hot.java" &&
		{ java -XX:+PreserveFramePointer -cp "$T/jvm" Hot $((SECS + 60)) >/dev/null 2>"$T/jvm.err" &
		  PIDS+=($!)
		  wait_ready "$T/jvm.err" ready 100 0.2
		  measure "java Hot" "${PIDS[-1]}"; }
fi
