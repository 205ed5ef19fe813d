#!/usr/bin/env bash
# bench/calls.sh: what exact mode (attach --calls) costs the target.
#
# minijit runs a fixed number of rounds (--rounds R, about 3 s unprofiled) in pairs: unprofiled,
# then with its JIT functions probed (--calls, probes always attached), then in bursts (--calls
# --burst 200 --period 2000). The order rotates inside each group so drift cancels. Reported:
# the median slowdown ratio to the unprofiled run of the same group (with min and max), the call
# events per second, and the per-event cost (extra time / events). minijit waits for SIGUSR1 after
# its ready line, so the probes are in place before its first round.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
PAIRS=${BENCH_PAIRS:-5}
ROUNDS=${BENCH_ROUNDS:-1000}
need_root "BPF, uprobes"
bench_start bench-calls
DIR=$TDIR
SOCK=$DIR/kprofd.sock
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$SOCK" "" "$DIR/kprofd.log"

# run MODE: prints "seconds events" for one run of minijit.
run() {
	local mode=$1 mj t0 t1 ev=0
	"$BUILD/minijit" --wait-usr1 --rounds "$ROUNDS" --cleanup 2>"$DIR/mj.err" &
	mj=$!
	wait_ready "$DIR/mj.err" waiting 100 0.02 || true
	case $mode in
	calls) "$BUILD/kprofctl" --socket "$SOCK" attach "$mj" --calls >/dev/null ;;
	burst) "$BUILD/kprofctl" --socket "$SOCK" attach "$mj" --calls --burst 200 --period 2000 >/dev/null ;;
	esac
	t0=$(date +%s%N)
	kill -USR1 "$mj"
	wait "$mj"
	t1=$(date +%s%N)
	if [ "$mode" != none ]; then
		sleep 0.2
		ev=$("$BUILD/kprofctl" --socket "$SOCK" list --all --json | python3 -c "import json,sys
print([t['call_events'] for t in json.load(sys.stdin)['targets'] if t['pid']==$mj][0])")
	fi
	echo "$(( (t1 - t0) / 1000 )) $ev"
}

: >"$DIR/results"
for i in $(seq "$PAIRS"); do
	modes=(none calls burst)
	for k in 0 1 2; do
		m=${modes[$(( (k + i) % 3 ))]}
		echo "$i $m $(run "$m")" >>"$DIR/results"
	done
done
mkdir -p "$BUILD/bench"
python3 - "$DIR/results" "$PAIRS" "$ROUNDS" <<'PY' | tee "$BUILD/bench/calls.md"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for i, mode, us, ev in rows:
    by.setdefault(int(i), {})[mode] = (int(us), int(ev))
def stats(mode):
    r = [g[mode][0] / g["none"][0] for g in by.values()]
    ev = [g[mode][1] / (g[mode][0] / 1e6) for g in by.values()]
    cost = [(g[mode][0] - g["none"][0]) / g[mode][1] * 1000 if g[mode][1] else 0 for g in by.values()]
    return statistics.median(r), min(r), max(r), statistics.median(ev), statistics.median(cost)
base = statistics.median(g["none"][0] for g in by.values()) / 1e6
print(f"minijit --rounds {sys.argv[3]}, {sys.argv[2]} groups; unprofiled median {base:.2f} s\n")
print("| mode | slowdown (median) | min | max | call events/s | extra ns per event |")
print("|---|---|---|---|---|---|")
for mode, name in (("calls", "--calls (probes always on)"), ("burst", "--calls --burst 200 --period 2000")):
    m, lo, hi, ev, cost = stats(mode)
    print(f"| {name} | {m:.2f}x | {lo:.2f}x | {hi:.2f}x | {ev:,.0f} | {cost:,.0f} |")
PY
