#!/usr/bin/env bash
# bench/soak.sh: kprofd over a long run, watched for leaks (a benchmark, not a CI test).
#
# One kprofd on a private socket and state directory profiles one minijit (`--seconds 0`: until
# stopped) at 999 Hz for SOAK_SECONDS (default 1800, 30 minutes). Every second one query is sent
# with kprofctl, in turn report, status, export (pprof, to a scratch file) and list --all; each is
# counted as answered (exit status 0) or failed. Every 10 s the daemon's resident set size (VmRSS
# from /proc/PID/status), its open file descriptors (/proc/PID/fd) and its sample and drop counters
# (status --json) are appended to $BUILD/bench/soak.csv. At the end a summary is printed (and
# written to $BUILD/bench/soak.md): RSS at start, end and maximum, RSS growth over the second half
# of the run, fd count min and max, samples, drops, queries answered and failed.
#
# The first RSS row is taken right after the attach; the profile's tables fill during the first
# minutes, so "second half" growth is the figure that tells a leak from warm-up.
#
# Run as root: `BUILD=build bash bench/soak.sh` (a short check: `SOAK_SECONDS=60 ...`). Meant to
# be left running: `nohup bash bench/soak.sh >build/bench/soak.log 2>&1 &`.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
SOAK_SECONDS=${SOAK_SECONDS:-1800}
SOAK_FREQ=${SOAK_FREQ:-999}
KPROFD=$BUILD/kprofd
KPROFCTL=$BUILD/kprofctl
MINIJIT=$BUILD/minijit
OUT_DIR=$BUILD/bench
CSV=$OUT_DIR/soak.csv
MD=$OUT_DIR/soak.md

need_bins "$KPROFD" "$KPROFCTL" "$MINIJIT"
need_root "kprofd loads BPF programs"
need_ints SOAK_SECONDS
need_freqs SOAK_FREQ
need_cmds python3

bench_start soak
SOCK=$TDIR/kprofd.sock

ctl() { "$KPROFCTL" --socket "$SOCK" "$@"; }

kprofd_start "$KPROFD" "$KPROFCTL" "$SOCK" "$TDIR/state" "$TDIR/kprofd.log"

"$MINIJIT" --seconds 0 --cleanup >/dev/null 2>"$TDIR/minijit.err" &
MJ_PID=$!
BENCH_PIDS+=("$MJ_PID")
wait_ready "$TDIR/minijit.err" ready || die "minijit did not report ready"
ctl attach "$MJ_PID" --freq "$SOAK_FREQ" >/dev/null || die "attach $MJ_PID failed"

mkdir -p "$OUT_DIR"
echo "t_s,rss_kb,fds,samples,drops,target_samples,queries_ok,queries_failed,cpu_ns" >"$CSV"

nfds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
# status_fields: "samples drops target_samples cpu_ns" from status --json and list --json.
status_fields() {
	local st li
	st=$(ctl status --json) && li=$(ctl list --json) || return 1
	python3 -c '
import json, sys
s = json.loads(sys.argv[1]); l = json.loads(sys.argv[2]); pid = int(sys.argv[3])
t = [t["samples"] for t in l["targets"] if t["pid"] == pid]
print(s["samples"], s["drops"], t[0] if t else -1, s["cpu_ns"])' "$st" "$li" "$MJ_PID"
}

ok=0 failed=0
record() {
	local t=$1 f
	f=$(status_fields) || f="-1 -1 -1 -1"
	# shellcheck disable=SC2086 # four space-separated numbers
	set -- $f
	echo "$t,$(rss_kb "$DAEMON_PID"),$(nfds),$1,$2,$3,$ok,$failed,$4" >>"$CSV"
}

query() {
	case $(($1 % 4)) in
	0) ctl report "$MJ_PID" --top 20 ;;
	1) ctl status ;;
	2) ctl export "$MJ_PID" -o "$TDIR/export.pb.gz" ;;
	3) ctl list --all ;;
	esac
}

echo "soak: kprofd pid $DAEMON_PID, minijit pid $MJ_PID at $SOAK_FREQ Hz, $SOAK_SECONDS s, CSV $CSV"
start=$SECONDS
record 0
n=0
next=1
while :; do
	el=$((SECONDS - start))
	[ "$el" -ge "$SOAK_SECONDS" ] && break
	kill -0 "$DAEMON_PID" 2>/dev/null || die "kprofd died after $el s"
	kill -0 "$MJ_PID" 2>/dev/null || die "minijit died after $el s"
	if query "$n" >/dev/null 2>"$TDIR/q.err"; then
		ok=$((ok + 1))
	else
		failed=$((failed + 1))
		echo "soak: query $n failed at $el s: $(tr '\n' ' ' <"$TDIR/q.err")" >&2
	fi
	n=$((n + 1))
	if [ "$el" -ge $((next * 10)) ]; then
		record "$el"
		next=$((el / 10 + 1))
	fi
	# Pacing, not waiting for a condition: one query a second.
	sleep 1
done
record $((SECONDS - start))

python3 - "$CSV" "$SOAK_SECONDS" "$SOAK_FREQ" "$BUILD" >"$MD" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
secs, freq, build = sys.argv[2], sys.argv[3], sys.argv[4]
rss = [int(r["rss_kb"]) for r in rows]
fds = [int(r["fds"]) for r in rows]
last, first = rows[-1], rows[0]
half = [r for r in rows if int(r["t_s"]) >= int(rows[-1]["t_s"]) // 2]
print(f"## Soak: {secs} s at {freq} Hz on minijit, one query a second\n")
print(f"Command: `BUILD={build} SOAK_SECONDS={secs} bash bench/soak.sh`; "
      f"{len(rows)} rows in {sys.argv[1]}\n")
print("| figure | value |\n|---|---|")
print(f"| kprofd RSS at start / end / max | {rss[0]} / {rss[-1]} / {max(rss)} KiB |")
print(f"| RSS growth over the second half ({half[0]['t_s']} s to {last['t_s']} s) | "
      f"{int(half[-1]['rss_kb']) - int(half[0]['rss_kb'])} KiB |")
print(f"| open fds min / max | {min(fds)} / {max(fds)} |")
print(f"| samples received (daemon) / in the target's profile | {last['samples']} / {last['target_samples']} |")
print(f"| ring-buffer drops | {last['drops']} |")
print(f"| queries answered / failed | {last['queries_ok']} / {last['queries_failed']} |")
cpu = int(last["cpu_ns"]) / 1e9
print(f"| kprofd CPU time | {cpu:.1f} s ({100 * cpu / max(1, int(last['t_s'])):.2f}% of one CPU) |")
PY
cat "$MD"
ctl status
