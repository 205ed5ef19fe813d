#!/usr/bin/env bash
# bench/http_fleet.sh: what a whole-host scrape costs kprofd (issue 31).
#
# TARGETS minijits attached at FREQ Hz (each its own target). kprofd's CPU (its on-CPU time in
# /proc/PID/schedstat, nanoseconds: the 10 ms ticks of /proc/PID/stat are too coarse for a few
# ms a scrape) is measured over WINDOW seconds with no scrape, then over WINDOW seconds while
# one client scrapes GET /debug/pprof/profile?seconds=SCRAPE_SECONDS (no selector: every target)
# back to back, as a fleet scraper would with that interval. The extra CPU divided by the
# scrapes answered is the cost of one scrape; it is set beside the samples the scrape reports
# and what kprofd spent taking those samples (its CPU per sample, from the quiet window, times
# the samples): the scrape's share of the sampling it reports.
#
# Environment: BUILD (default build), TARGETS (50), FREQ (99), SCRAPE_SECONDS (5), WINDOW (30).
# Output: the table on stdout and in $BUILD/bench/http_fleet.md. As root; curl, python3.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
TARGETS=${TARGETS:-50}
FREQ=${FREQ:-99}
SECONDS_Q=${SCRAPE_SECONDS:-5}
WINDOW=${WINDOW:-30}
OUT=$BUILD/bench/http_fleet.md
need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit"
need_root

bench_start bench-http-fleet
CL=()
bench_on_exit() {
	local p
	for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token")
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[limits]\nmax_targets_per_uid = 1024\n[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' \
	"$PORT" "$TDIR/token" >"$TDIR/kprofd.conf"
SOCK=$TDIR/kprofd.sock
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$SOCK" "" "$TDIR/kprofd.log" --config "$TDIR/kprofd.conf"
DPID=$DAEMON_PID
for ((i = 0; i < TARGETS; i++)); do
	"$BUILD/minijit" --seconds 100000 >/dev/null 2>"$TDIR/mj.$i.err" &
	BENCH_PIDS+=($!)
done
for ((i = 0; i < TARGETS; i++)); do
	wait_ready "$TDIR/mj.$i.err" ready || true
	"$BUILD/kprofctl" --socket "$SOCK" attach "${BENCH_PIDS[$i]}" --freq "$FREQ" >/dev/null
done
sleep 5

cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
samples() { "$BUILD/kprofctl" --socket "$SOCK" status --json | json_get "['samples']"; }
# pprof_samples FILE: the samples (first value) of a gzip'd pprof.
pprof_samples() {
	python3 - "$1" <<'PY'
import gzip, sys
b = gzip.decompress(open(sys.argv[1], "rb").read())
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0: v, i = varint(b, i); yield k >> 3, v
        elif k & 7 == 2:
            n, i = varint(b, i); yield k >> 3, b[i:i + n]; i += n
        elif k & 7 == 1: yield k >> 3, b[i:i + 8]; i += 8
        else: yield k >> 3, b[i:i + 4]; i += 4
total = 0
for f, v in fields(b):
    if f == 2:  # Sample
        for g, w in fields(v):
            if g == 2:  # value: packed, the first is the count
                if isinstance(w, int): total += w; break
                total += varint(w, 0)[0]; break
print(total)
PY
}

t0=$(cpu_ns "$DPID"); n0=$(samples); s0=$(date +%s.%N)
sleep "$WINDOW"
t1=$(cpu_ns "$DPID"); n1=$(samples); s1=$(date +%s.%N)
: >"$TDIR/scrapes"
(while :; do
	curl -s -o "$TDIR/s.pb.gz.tmp" -w '%{http_code} %{time_total} %{size_download}\n' -H "$AUTH" \
		"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=$SECONDS_Q" >>"$TDIR/scrapes" &&
		mv "$TDIR/s.pb.gz.tmp" "$TDIR/s.pb.gz"
done) &
CL+=($!)
sleep 1
k0=$(wc -l <"$TDIR/scrapes")
t2=$(cpu_ns "$DPID"); n2=$(samples); s2=$(date +%s.%N)
sleep "$WINDOW"
t3=$(cpu_ns "$DPID"); n3=$(samples); s3=$(date +%s.%N)
k1=$(wc -l <"$TDIR/scrapes")
kill "${CL[@]}" 2>/dev/null || true
CL=()
sleep $((SECONDS_Q + 2)) # the last scrape answered (or abandoned)
# kprofd's own count of its CPU in the scrapes' snapshots and answers (thread clock): 0 0 if
# this kprofd has none.
read -r np npc < <("$BUILD/kprofctl" --socket "$SOCK" status --json |
	python3 -c 'import json,sys; h = json.load(sys.stdin).get("http", {}); print(h.get("profiles", 0), h.get("profile_cpu_ns", 0))')
ps=$(pprof_samples "$TDIR/s.pb.gz")
LOAD=$(loadavg)
python3 - 1e9 "$t0" "$t1" "$s0" "$s1" "$n0" "$n1" "$t2" "$t3" "$s2" "$s3" "$n2" "$n3" "$k0" "$k1" \
	"$ps" "$TARGETS" "$FREQ" "$SECONDS_Q" "$TDIR/scrapes" "$LOAD" "$np" "$npc" <<'PY' | tee "$TDIR/out.md"
import statistics, sys
a = sys.argv[1:]
hz = float(a[0])
t0, t1, s0, s1, n0, n1, t2, t3, s2, s3, n2, n3 = map(float, a[1:13])
k0, k1, ps, targets, freq, sec = map(int, a[13:19])
rows = [l.split() for l in open(a[19])]
codes = {r[0] for r in rows}
quiet = (t1 - t0) / hz / (s1 - s0)          # CPU s per s
busy = (t3 - t2) / hz / (s3 - s2)
per_sample = (t1 - t0) / hz / max(n1 - n0, 1)
scrapes = k1 - k0
scrape_cpu = (busy - quiet) * (s3 - s2) / max(scrapes, 1)
print("### A whole-host scrape, %d targets at %d Hz, seconds=%d" % (targets, freq, sec))
print()
print("| | value |")
print("|---|---|")
print("| kprofd CPU, no scrape | %.2f %% of a CPU (%.0f samples/s, %.1f us of CPU per sample) |"
      % (100 * quiet, (n1 - n0) / (s1 - s0), 1e6 * per_sample))
print("| kprofd CPU, scraped back to back | %.2f %% of a CPU |" % (100 * busy))
print("| scrapes answered in %.0f s | %d (status %s; median %.2f s, %s bytes) |"
      % (s3 - s2, scrapes, ",".join(sorted(codes)), statistics.median(float(r[1]) for r in rows),
         statistics.median(int(r[2]) for r in rows)))
print("| samples in the last scrape | %d |" % ps)
print("| kprofd CPU per scrape (extra CPU / scrapes) | %.1f ms |" % (1e3 * scrape_cpu))
print("| kprofd CPU for the samples it reports (their count x CPU per sample) | %.1f ms |"
      % (1e3 * ps * per_sample))
print("| the scrape's cost / the sampling it reports | %.1f %% |"
      % (100 * scrape_cpu / max(ps * per_sample, 1e-9)))
np, npc = int(a[21]), int(a[22])
if np:
    print("| kprofd CPU in the scrapes' own code (snapshots, answers; its thread clock), per scrape "
          "| %.2f ms (%d scrapes) |" % (npc / np / 1e6, np))
    print("| that / the sampling it reports | %.1f %% |" % (100 * npc / np / 1e9 / max(ps * per_sample, 1e-9)))
print("| load average at the end (the targets' own included) | %s |" % a[20])
PY
mkdir -p "$BUILD/bench"
cp "$TDIR/out.md" "$OUT"
