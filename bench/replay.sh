#!/usr/bin/env bash
# bench/replay.sh: kprofd's ingestion code fed the stream of a 192-CPU host profiled system-wide
# at 99 Hz (issue 34, "past this machine, by replay"), in simulated time; what is real and what is
# modelled is said at the top of bench/replay.c.
#
# Curves: $BUILD/replay once per number of processes (RP_PROCS, threads 10 a process) and once per
# number of threads of one process (RP_THREADS), each RP_SECONDS simulated seconds after
# RP_WARMUP; then one run at the fork rate measured on this machine (/proc/stat "processes"
# over RP_RATE_SECONDS: every new process taken as a target, an upper bound) with
# RP_CHURN_PROCS processes (default the largest size; 1000 in the short mode). Output: a Markdown table on stdout and $BUILD/bench/replay.md, each run's full output
# under $BUILD/bench/replay-*.txt.
#
# The one check (not a timing): the PID-hash steps per lookup stay under 3 at every size, where
# a walk of the target list would take hundreds (one hot process behind two others in its
# chain gives about 2; RP_NO_CHECK=1 skips it).
#
# Usage (root: the replay loads kprofd's BPF object): [BUILD=build] [RP_SHORT=1]
#   [RP_PROCS="10 100 1000 5000"] [RP_THREADS="10 100 500 2000"] [RP_SECONDS=60] [RP_WARMUP=5]
#   [RP_CHURN=2] [RP_RATE_SECONDS=10] [RP_CHURN_PROCS=N] [RP_SCRAPE="15 10"] bash bench/replay.sh      (make bench runs RP_SHORT=1)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
if [ -n "${RP_SHORT:-}" ]; then
	RP_SECONDS=${RP_SECONDS:-2} RP_WARMUP=${RP_WARMUP:-1} RP_RATE_SECONDS=${RP_RATE_SECONDS:-2}
	RP_THREADS=${RP_THREADS:-"10 2000"} RP_CHURN_PROCS=${RP_CHURN_PROCS:-100}
	RP_SCRAPE=${RP_SCRAPE:-"2 1"}
fi
RP_PROCS=${RP_PROCS:-"10 100 1000 5000"}
RP_THREADS=${RP_THREADS:-"10 100 500 2000"}
RP_SECONDS=${RP_SECONDS:-60}
RP_WARMUP=${RP_WARMUP:-5}
RP_CHURN=${RP_CHURN:-2}
RP_RATE_SECONDS=${RP_RATE_SECONDS:-10}
RP_CHURN_PROCS=${RP_CHURN_PROCS:-${RP_PROCS##* }}
RP_SCRAPE=${RP_SCRAPE:-"15 10"} # a whole-host scrape every P s, of S s
read -r scrape_p scrape_s <<<"$RP_SCRAPE"
REPLAY=$BUILD/replay
OUT=$BUILD/bench
[ "$(id -u)" = 0 ] || { echo "bench/replay.sh: must run as root" >&2; exit 1; }
[ -x "$REPLAY" ] || { echo "bench/replay.sh: build $REPLAY first (make $REPLAY)" >&2; exit 1; }
for v in $RP_PROCS $RP_THREADS $RP_SECONDS $RP_WARMUP $RP_RATE_SECONDS $RP_CHURN_PROCS $scrape_p $scrape_s; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "bench/replay.sh: '$v' is not a number" >&2; exit 1; }
done
[ "$RP_SECONDS" -gt "$scrape_s" ] ||
	{ echo "bench/replay.sh: RP_SECONDS ($RP_SECONDS) must be longer than a scrape's $scrape_s s (RP_SCRAPE)" >&2; exit 1; }
mkdir -p "$OUT"
md=$OUT/replay.md
fail=0

# One run: its RESULT line's fields as "key=value ..." on stdout.
run() {
	local name=$1
	shift
	"$REPLAY" --seconds "$RP_SECONDS" --warmup "$RP_WARMUP" --scrape-period "$scrape_p" \
		--scrape-seconds "$scrape_s" "$@" >"$OUT/replay-$name.txt" 2>"$OUT/replay-$name.err" ||
		{ echo "bench/replay.sh: $REPLAY $* failed: $(tail -3 "$OUT/replay-$name.err")" >&2; exit 1; }
	grep '^RESULT' "$OUT/replay-$name.txt" | sed 's/^RESULT //'
}
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
row() { # label, RESULT fields
	local r=$2 steps
	steps=$(field "$r" steps_per_lookup)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(field "$r" cpu_pct)" \
		"$(field "$r" us_per_sample)" "$steps" "$(field "$r" profile_bytes_per_proc)" \
		"$(field "$r" rss_mb)" "$(field "$r" scrape_ms)" "$(field "$r" attach_us)"
	if [ -z "${RP_NO_CHECK:-}" ] && ! awk -v s="$steps" 'BEGIN { exit !(s < 3) }'; then
		echo "FAIL: $1: $steps PID-hash steps a lookup (want < 3: the lookup must not walk the targets)" >&2
		fail=1
	fi
}
header() {
	echo "| $1 | kprofd CPU, % of a core | us a sample | steps a lookup | profile bytes a process | RSS MiB | scrape ms (${scrape_s} s) | attach us |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
}

a=$(awk '/^processes/ { print $2 }' /proc/stat)
sleep "$RP_RATE_SECONDS"
b=$(awk '/^processes/ { print $2 }' /proc/stat)
rate=$(((b - a) / RP_RATE_SECONDS))
{
	echo "# replay: a 192-CPU host at 99 Hz, ${RP_SECONDS} s simulated after ${RP_WARMUP} s ($(date -u '+%F %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	header processes
	for n in $RP_PROCS; do
		row "$n ($((10 * n)) threads)" "$(run "p$n" --procs "$n" --threads $((10 * n)) --churn "$RP_CHURN")"
	done
	echo
	header "threads of 1 process"
	for n in $RP_THREADS; do
		row "$n" "$(run "t$n" --procs 1 --threads "$n" --churn 0)"
	done
	echo
	n=$RP_CHURN_PROCS big=${RP_PROCS##* }
	echo "Churn measured here: $rate new processes/s (/proc/stat, ${RP_RATE_SECONDS} s); $n processes at that churn:"
	echo
	header processes
	row "$n at $rate/s" "$(run "c$n" --procs "$n" --threads $((10 * n)) --churn "$rate")"
	echo
	echo "Ring buffer (from the run of $big processes at churn $RP_CHURN/s):"
	echo
	grep -E '^(ring_bytes|burst)' "$OUT/replay-p$big.txt" | sed 's/^/    /'
} | tee "$md"
exit $fail
