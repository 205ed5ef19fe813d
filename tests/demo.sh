#!/usr/bin/env bash
# tests/demo.sh (`make demo`): kprofd profiles a running JIT workload and names its hottest
# JIT-compiled functions. Starts kprofd on a private socket, runs the minijit fixture (a small
# x86-64 JIT that writes /tmp/perf-PID.map), attaches at 999 Hz for a few seconds, prints the flat
# profile, the hottest stacks and calling contexts, a path profile of one JIT function, kills the
# workload and shows its profile is kept.
set -euo pipefail
BUILD=${BUILD:-build}
SECONDS_TO_PROFILE=${DEMO_SECONDS:-5}
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: kprofd loads BPF programs and must run as root (try: sudo make demo)" >&2
	exit 1
fi
DIR=$(mktemp -d /tmp/kprof-demo.XXXXXX)
SOCK=$DIR/kprofd.sock
ctl() { "$BUILD/kprofctl" --socket "$SOCK" "$@"; }
cleanup() {
	[ -n "${MJ:-}" ] && kill -9 "$MJ" 2>/dev/null && rm -f "/tmp/perf-$MJ.map"
	[ -n "${MJ2:-}" ] && kill -9 "$MJ2" 2>/dev/null && rm -f "/tmp/perf-$MJ2.map"
	[ -n "${KD:-}" ] && kill -TERM "$KD" 2>/dev/null && wait "$KD" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "starting kprofd (socket $SOCK)"
"$BUILD/kprofd" --socket "$SOCK" --state-dir "$DIR/state" 2>"$DIR/kprofd.log" &
KD=$!
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.1; done
ctl status

say "starting the JIT workload: minijit (mj_hot ~60%, mj_warm ~25%, mj_cold ~10%, mj_leaf ~5%)"
"$BUILD/minijit" --seconds 120 2>"$DIR/minijit.err" &
MJ=$!
for _ in $(seq 100); do grep -q ready "$DIR/minijit.err" && break; sleep 0.1; done
cat "$DIR/minijit.err"
echo "its perf map, /tmp/perf-$MJ.map:"
sed 's/^/    /' "/tmp/perf-$MJ.map"

say "kprofctl attach $MJ --freq 999 (profiling for $SECONDS_TO_PROFILE s)"
ctl attach "$MJ" --freq 999
sleep "$SECONDS_TO_PROFILE"

say "kprofctl report $MJ --top 10"
ctl report "$MJ" --top 10

say "hottest stacks (kprofctl folded $MJ | sort -k2 -nr | head -5)"
ctl folded "$MJ" | sort -t' ' -k2 -nr | head -5 | sed 's/^[^;]*;//'

say "hot calling contexts (kprofctl hcct $MJ --phi 0.02)"
ctl hcct "$MJ" --phi 0.02

say "multi-iteration paths of one JIT function (kprofctl paths PID mj_paths --k 3 --duration 2)"
"$BUILD/minijit" --seconds 60 --paths 50 2>"$DIR/minijit2.err" >/dev/null &
MJ2=$!
for _ in $(seq 100); do grep -q ready "$DIR/minijit2.err" && break; sleep 0.1; done
echo "a second minijit (pid $MJ2) also runs mj_paths: nested loops with data-dependent branches"
ctl paths "$MJ2" mj_paths --k 3 --duration 2 --top 4
kill -9 "$MJ2"; wait "$MJ2" 2>/dev/null || true
rm -f "/tmp/perf-$MJ2.map"
MJ2=

say "the workload is killed; its profile is kept"
kill -9 "$MJ"; wait "$MJ" 2>/dev/null || true
rm -f "/tmp/perf-$MJ.map"
for _ in $(seq 50); do ctl list --all | grep -q exited && break; sleep 0.1; done
ctl list --all
ctl report "$MJ" --top 3
MJ=
say "kprofd's log"
cat "$DIR/kprofd.log"
