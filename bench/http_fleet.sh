#!/usr/bin/env bash
# bench/http_fleet.sh: what a whole-host scrape costs kprofd (issue 31).
#
# TARGETS minijits attached at FREQ Hz (each its own target). kprofd's CPU (its on-CPU time in
# /proc/PID/schedstat, nanoseconds: the 10 ms ticks of /proc/PID/stat are too coarse for a few
# ms a scrape) is measured over WINDOW seconds with no scrape, then over WINDOW seconds while
# one client scrapes GET /debug/pprof/profile?seconds=SCRAPE_SECONDS (no selector: every
# target) back to back, as a fleet scraper would with that interval. The extra CPU divided by
# the scrapes answered is the cost of one scrape; kprofd also counts the CPU of the scrapes' own
# code (status --json http.profile_cpu_ns: its thread clock around the snapshots and answers).
# Each is set beside the samples the scrape reports and what kprofd spent taking those samples
# (its CPU per sample, from the quiet window, times the samples): the scrape's share of the
# sampling it reports.
#
# With BEFORE=DIR (a build of another version, e.g. the one before a change), a second kprofd of
# DIR runs beside the first, attached to the same minijits, scraped the same way at the same
# time: on a machine as loaded and as shared as this one a CPU second is not the same from one
# minute to the next (caches, other sessions), so two versions are compared side by side.
# The minijits run in one cgroup of the cpu controller and the kprofds in another (cpu_group,
# as a systemd deployment runs them), so that the 50 busy targets do not starve kprofd.
#
# Environment: BUILD (default build), BEFORE (none), TARGETS (50), FREQ (99), SCRAPE_SECONDS
# (5), WINDOW (30). Output: the table on stdout and in $BUILD/bench/http_fleet.md. As root;
# curl, python3.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${BUILD:-build}
BEFORE=${BEFORE:-}
TARGETS=${TARGETS:-50}
FREQ=${FREQ:-99}
SECONDS_Q=${SCRAPE_SECONDS:-5}
WINDOW=${WINDOW:-30}
OUT=$BUILD/bench/http_fleet.md
need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit"
[ -z "$BEFORE" ] || need_bins "$BEFORE/kprofd" "$BEFORE/kprofctl"
need_root

bench_start bench-http-fleet
CL=()
bench_on_exit() {
	local p
	for p in "${CL[@]}"; do kill "$p" 2>/dev/null || true; done
}
(umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token")
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
# One kprofd per build: K (0, and 1 with BEFORE), its socket, port, pid and kprofctl.
BUILDS=("$BUILD")
[ -z "$BEFORE" ] || BUILDS+=("$BEFORE")
NK=${#BUILDS[@]}
PORT=() SOCK=() DPID=()
CG_KPROFD=$(cpu_group kprof-bench-kprofd)
CG_TARGETS=$(cpu_group kprof-bench-targets)
for ((k = 0; k < NK; k++)); do
	PORT[k]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	SOCK[k]=$TDIR/kprofd.$k.sock
	printf '[limits]\nmax_targets_per_uid = 1024\n[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' \
		"${PORT[k]}" "$TDIR/token" >"$TDIR/kprofd.$k.conf"
	kprofd_start "${BUILDS[k]}/kprofd" "${BUILDS[k]}/kprofctl" "${SOCK[k]}" "" "$TDIR/kprofd.$k.log" \
		--config "$TDIR/kprofd.$k.conf"
	DPID[k]=$DAEMON_PID
	cpu_group_add "$CG_KPROFD" "$DAEMON_PID"
done
ctl() { local k=$1; shift; "${BUILDS[k]}/kprofctl" --socket "${SOCK[k]}" "$@"; }
for ((i = 0; i < TARGETS; i++)); do
	"$BUILD/minijit" --seconds 100000 >/dev/null 2>"$TDIR/mj.$i.err" &
	BENCH_PIDS+=($!)
	cpu_group_add "$CG_TARGETS" "$!"
done
for ((i = 0; i < TARGETS; i++)); do
	wait_ready "$TDIR/mj.$i.err" ready || true
	for ((k = 0; k < NK; k++)); do ctl "$k" attach "${BENCH_PIDS[$i]}" --freq "$FREQ" >/dev/null; done
done
sleep 5

cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
samples() { ctl "$1" status --json | json_get "['samples']"; }
# http_cpu K: "PROFILES CPU_NS" of kprofd K's own count (0 0 if it has none).
http_cpu() {
	ctl "$1" status --json |
		python3 -c 'import json,sys; h = json.load(sys.stdin).get("http", {}); print(h.get("profiles", 0), h.get("profile_cpu_ns", 0))'
}
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
# snap K: "CPU_NS SAMPLES TIME PROFILES PROFILE_CPU_NS" of kprofd K now.
snap() { echo "$(cpu_ns "${DPID[$1]}") $(samples "$1") $(date +%s.%N) $(http_cpu "$1")"; }

for ((k = 0; k < NK; k++)); do Q0[k]=$(snap "$k"); done
sleep "$WINDOW"
for ((k = 0; k < NK; k++)); do Q1[k]=$(snap "$k"); : >"$TDIR/scrapes.$k"; done
for ((k = 0; k < NK; k++)); do
	(while :; do
		curl -s -o "$TDIR/s.$k.pb.gz.tmp" -w '%{http_code} %{time_total} %{size_download}\n' \
			-H "$AUTH" "http://127.0.0.1:${PORT[k]}/debug/pprof/profile?seconds=$SECONDS_Q" \
			>>"$TDIR/scrapes.$k" && mv "$TDIR/s.$k.pb.gz.tmp" "$TDIR/s.$k.pb.gz"
	done) &
	CL+=($!)
done
sleep 1
for ((k = 0; k < NK; k++)); do K0[k]=$(wc -l <"$TDIR/scrapes.$k"); B0[k]=$(snap "$k"); done
sleep "$WINDOW"
for ((k = 0; k < NK; k++)); do B1[k]=$(snap "$k"); K1[k]=$(wc -l <"$TDIR/scrapes.$k"); done
kill "${CL[@]}" 2>/dev/null || true
CL=()
LOAD=$(loadavg)
ARGS=()
for ((k = 0; k < NK; k++)); do
	ARGS+=("${BUILDS[k]}" "${Q0[k]}" "${Q1[k]}" "${B0[k]}" "${B1[k]}" "${K0[k]}" "${K1[k]}"
		"$(pprof_samples "$TDIR/s.$k.pb.gz")" "$TDIR/scrapes.$k")
done
python3 - "$TARGETS" "$FREQ" "$SECONDS_Q" "$LOAD${CG_KPROFD:+ (kprofd and the targets in cpu cgroups of their own)}" "${ARGS[@]}" <<'PY' | tee "$TDIR/out.md"
import statistics, sys
a = sys.argv[1:]
targets, freq, sec, load = int(a[0]), int(a[1]), int(a[2]), a[3]
cols, a = [], a[4:]
while a:
    build, q0, q1, b0, b1, k0, k1, ps, scrapes = a[:9]
    a = a[9:]
    q0, q1, b0, b1 = ([float(x) for x in s.split()] for s in (q0, q1, b0, b1))
    k0, k1, ps = int(k0), int(k1), int(ps)
    rows = [l.split() for l in open(scrapes)]
    quiet = (q1[0] - q0[0]) / 1e9 / (q1[2] - q0[2])          # CPU s per s
    busy = (b1[0] - b0[0]) / 1e9 / (b1[2] - b0[2])
    per_sample = (q1[0] - q0[0]) / 1e9 / max(q1[1] - q0[1], 1)
    n = k1 - k0
    extra = (busy - quiet) * (b1[2] - b0[2]) / max(n, 1)
    np_, npc = b1[3] - b0[3], b1[4] - b0[4]
    own = npc / np_ / 1e9 if np_ else None
    reported = ps * per_sample
    c = [build,
         "%.2f %% (%.0f samples/s, %.1f us a sample)" % (100 * quiet, (q1[1] - q0[1]) / (q1[2] - q0[2]), 1e6 * per_sample),
         "%.2f %%" % (100 * busy),
         "%d in %.0f s (%s; median %.2f s, %s bytes)" % (n, b1[2] - b0[2], ",".join(sorted({r[0] for r in rows})),
             statistics.median(float(r[1]) for r in rows), statistics.median(int(r[2]) for r in rows)),
         "%d" % ps,
         "%.1f ms" % (1e3 * extra),
         "%.2f ms (%d scrapes)" % (1e3 * own, np_) if own is not None else "-",
         "%.1f ms" % (1e3 * reported),
         "%.1f %%" % (100 * extra / max(reported, 1e-9)),
         "%.1f %%" % (100 * own / max(reported, 1e-9)) if own is not None else "-"]
    cols.append(c)
names = ["kprofd", "kprofd CPU, no scrape", "kprofd CPU, scraped back to back", "scrapes answered",
         "samples in the last scrape", "kprofd CPU per scrape (extra CPU / scrapes)",
         "kprofd CPU in the scrapes' own code, per scrape (its thread clock)",
         "kprofd CPU for the samples a scrape reports (their count x CPU per sample)",
         "extra CPU per scrape / the sampling it reports", "own code / the sampling it reports"]
print("### A whole-host scrape, %d targets at %d Hz, seconds=%d" % (targets, freq, sec))
print()
print("| | " + " | ".join(c[0] for c in cols) + " |")
print("|---|" + "---|" * len(cols))
for i in range(1, len(names)):
    print("| %s | %s |" % (names[i], " | ".join(c[i] for c in cols)))
print("| load average at the end (the targets' own included) | %s |" % " | ".join([load] * len(cols)))
PY
mkdir -p "$BUILD/bench"
cp "$TDIR/out.md" "$OUT"
