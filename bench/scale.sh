#!/usr/bin/env bash
# bench/scale.sh: does kprofd's cost per sample and per child stay flat as kept profiles and
# children pile up (issue 34, items 1, 2 and 5)? kprofd's CPU is read from /proc (utime +
# stime), so the load of a shared machine barely distorts it.
#
# 1. per sample: a busy shell loop attached at 999 Hz first, then SC_KEPT kept profiles of
#    other processes (sleepers attached and detached through one raw socket connection), then
#    SC_SECONDS of sampling: kprofd's CPU over that time / the samples it took in, and the
#    lookup steps per lookup (status --json).
# 2. per child: `attach --children` of a shell loop running /bin/true SC_CHILDREN times (the
#    loop waits for a file, so every child is followed): kprofd's CPU from the start of the
#    loop to 2 s after its end, / the children; the loop's wall time, and alone.
# 3. per attach: a process of SC_THREADS threads, each spinning ~1 ms and sleeping 1 ms,
#    attached 2 s after its start, once all its threads run: the wall time of `kprofctl
#    attach`, kprofd's time on CPU and waiting to run (/proc/PID/schedstat) meanwhile, the
#    threads it had and the events kprofd opened. In two layouts (SC_LAYOUTS): all in
#    one cgroup (the shell's: "shared"), and as deployed ("own-cgroups": kprofd.service and the
#    workload each in a cgroup of its own): the busy process in one cgroup of the cpu
#    controller, kprofd and kprofctl in another, of equal weight (v2 if it has cpu, else v1's
#    cpu hierarchy, where kprofd gets no SCHED_FIFO: no real-time budget; skipped without).
# 4. housekeeping: SC_IDLE sleeping processes attached (99 Hz), 12 s later SC_IDLE_SECONDS:
#    kprofd's CPU a second, and per target a second (its per-second work for each attached
#    target); kprofd in a cgroup of its own where there is one, as deployed.
# Usage: [BUILD=build] [SC_KEPT="0 1000 2000"] [SC_CHILDREN="500 1000 2000"] [SC_SECONDS=10]
#        [SC_THREADS="100 500"] [SC_LAYOUTS="shared own-cgroups"] [SC_CHILD_FREQ=99]
#        [SC_IDLE="10 100 1000"] [SC_IDLE_SECONDS=10] [SC_PARTS="1 2 3 4"]
#        bash bench/scale.sh    (make bench runs it short: SC_SHORT=1)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${SC_SHORT:-}" ]; then
	SC_KEPT=${SC_KEPT:-"0 300"} SC_CHILDREN=${SC_CHILDREN:-"200 400"} SC_SECONDS=${SC_SECONDS:-3}
	SC_THREADS=${SC_THREADS:-"100"} SC_IDLE=${SC_IDLE:-"10 100"} SC_IDLE_SECONDS=${SC_IDLE_SECONDS:-3}
fi
SC_PARTS=${SC_PARTS:-"1 2 3 4"}
SC_IDLE=${SC_IDLE:-"10 100 1000"}
SC_IDLE_SECONDS=${SC_IDLE_SECONDS:-10}
SC_KEPT=${SC_KEPT:-"0 1000 2000"}
SC_CHILDREN=${SC_CHILDREN:-"500 1000 2000"}
SC_SECONDS=${SC_SECONDS:-10}
SC_THREADS=${SC_THREADS:-"100 500"}
KPROFD=$BUILD/kprofd KPROFCTL=$BUILD/kprofctl
[ "$(id -u)" = 0 ] || { echo "bench/scale.sh: must run as root" >&2; exit 1; }
[ -x "$KPROFD" ] && [ -x "$KPROFCTL" ] || { echo "bench/scale.sh: build first ($BUILD)" >&2; exit 1; }
T=$(mktemp -d /tmp/kprof-scale.XXXXXX)
chmod 755 "$T"
SOCK=$T/s KD= KILL=() CGROUPS=()
cleanup() {
	[ ${#KILL[@]} -gt 0 ] && kill -9 "${KILL[@]}" 2>/dev/null
	[ -n "$KD" ] && kill -TERM "$KD" 2>/dev/null && wait "$KD" 2>/dev/null
	for d in "${CGROUPS[@]}"; do
		for _ in 1 2 3 4 5; do rmdir "$d" 2>/dev/null && break; sleep 0.2; done
	done
	rm -rf "$T"
}
# cgroup_new NAME: a cgroup of the cpu controller (removed at exit) into CGROUP; "" if none.
cgroup_new() {
	CGROUP=
	if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		CGROUP=/sys/fs/cgroup/$1-$$
	elif [ -w /sys/fs/cgroup/cpu ]; then
		CGROUP=/sys/fs/cgroup/cpu/$1-$$
	else
		return 0
	fi
	mkdir "$CGROUP" 2>/dev/null && CGROUPS+=("$CGROUP") || CGROUP=
}
# cgroup_home PID: PID back into this shell's cgroup of the cpu controller.
cgroup_home() {
	local d
	if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		d=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$$/cgroup")
	else
		d=/sys/fs/cgroup/cpu$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3 }' "/proc/$$/cgroup")
	fi
	echo "$1" >"$d/cgroup.procs"
}
trap cleanup EXIT
ctl() { "$KPROFCTL" --socket "$SOCK" "$@"; }
cpu_us() { awk '{ printf "%.0f\n", $1 / 1000 }' "/proc/$1/schedstat"; } # on-CPU time, ns resolution
status() { ctl status --json | python3 -c "import json,sys; s = json.load(sys.stdin); print(s['samples'], s.get('lookups', 0), s.get('lookup_steps', 0))"; }
start() {
	rm -rf "$T/st"
	"$KPROFD" --socket "$SOCK" --state-dir "$T/st" --max-kept 5000 "$@" >>"$T/kprofd.log" 2>&1 &
	KD=$!
	for _ in $(seq 100); do ctl status >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "bench/scale.sh: kprofd did not start: $(tail -3 "$T/kprofd.log")" >&2
	exit 1
}
stop() { kill -TERM "$KD"; wait "$KD" 2>/dev/null; KD=; }
cp "$ROOT/tests/integration/kpraw.py" "$T/"

echo "# kprofd $("$KPROFD" --version 2>/dev/null | head -1) ($KPROFD), $(nproc) CPUs, $(uname -r)"
part() { case " $SC_PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
part 1 || SC_KEPT=
part 1 && echo "## per sample: busy target at 999 Hz attached first, then K kept profiles, ${SC_SECONDS} s"
part 1 && printf "%8s %10s %12s %14s\n" kept samples "us/sample" "steps/lookup"
for K in $SC_KEPT; do
	start
	sh -c 'while :; do :; done' & BUSY=$!; KILL+=("$BUSY")
	ctl attach "$BUSY" --freq 999 >/dev/null
	[ "$K" -gt 0 ] && PYTHONPATH=$T python3 - "$SOCK" "$K" <<'PY'
import subprocess, sys, kpraw
procs = [subprocess.Popen(["sleep", "600"]) for _ in range(int(sys.argv[2]))]
s = kpraw.connect(sys.argv[1], timeout=120)
for p in procs:
    for req in (kpraw.field(1, b"\x08" + kpraw.varint(p.pid) + b"\x10\x63"),
                kpraw.field(2, b"\x08" + kpraw.varint(p.pid))):
        kpraw.send(s, req)
        kpraw.recv_frame(s)
for p in procs:
    p.kill()
    p.wait()
PY
	sleep 2 # the detaches' last drains and saves over
	read -r s0 l0 st0 < <(status); c0=$(cpu_us "$KD")
	sleep "$SC_SECONDS"
	read -r s1 l1 st1 < <(status); c1=$(cpu_us "$KD")
	python3 -c "import sys
k, ds, dc, dl, dst = map(float, sys.argv[1:])
print('%8d %10d %12.2f %14s' % (k, ds, dc / max(ds, 1), '%.2f' % (dst / dl) if dl else '-'))" \
		"$K" $((s1 - s0)) "$(echo "$c1 - $c0" | bc)" $((l1 - l0)) $((st1 - st0))
	kill -9 "$BUSY"; wait "$BUSY" 2>/dev/null
	stop
done

part 2 || SC_CHILDREN=
part 2 && echo "## per child: attach --children --freq ${SC_CHILD_FREQ:-99} of a loop of N /bin/true"
part 2 && printf "%8s %12s %12s %12s\n" children "us/child" "wall s" "alone s"
for N in $SC_CHILDREN; do
	loop='until [ -e "$0" ]; do sleep 0.05; done; i=0; while [ $i -lt '"$N"' ]; do /bin/true; i=$((i+1)); done'
	a0=$(date +%s.%N)
	sh -c "${loop/until*done; /}"
	alone=$(echo "$(date +%s.%N) - $a0" | bc)
	start
	rm -f "$T/go"
	sh -c "$loop" "$T/go" & LP=$!; KILL+=("$LP")
	ctl attach "$LP" --children --freq "${SC_CHILD_FREQ:-99}" >/dev/null
	c0=$(cpu_us "$KD"); w0=$(date +%s.%N)
	touch "$T/go"
	wait "$LP"
	w1=$(date +%s.%N)
	sleep 2
	c1=$(cpu_us "$KD")
	python3 -c "import sys
n, dc, w, a = map(float, sys.argv[1:])
print('%8d %12.0f %12.2f %12.2f' % (n, dc / n, w, a))" "$N" "$(echo "$c1 - $c0" | bc)" "$(echo "$w1 - $w0" | bc)" "$alone"
	stop
done

if part 3; then
echo "## per attach: N threads busy half the time, kprofctl attach --freq 99"
printf "%8s %-12s %10s %14s %16s %8s %8s\n" threads layout "wall s" "kprofd cpu ms" "kprofd wait ms" "had" "events"
cat >"$T/busy.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *w(void *a) { for (;;) { volatile unsigned s = 0; for (int i = 0; i < 200000; i++) s += i; usleep(1000); } return a; }
int main(int argc, char **argv) { pthread_t t; for (int i = 0; i < atoi(argv[1]); i++) pthread_create(&t, NULL, w, NULL); pause(); }
EOF
cc -O1 -pthread -o "$T/busy" "$T/busy.c" || exit 1
cgroup_new kprof-scale-kprofd; CG_D=$CGROUP
cgroup_new kprof-scale-target; CG_T=$CGROUP
[ -n "$CG_D" ] && [ -n "$CG_T" ] || echo "# no cgroup of the cpu controller: the own-cgroups layout is skipped"
start
for N in $SC_THREADS; do
	for layout in ${SC_LAYOUTS:-shared own-cgroups}; do
		if [ "$layout" = own-cgroups ]; then
			[ -n "$CG_D" ] && [ -n "$CG_T" ] || continue
			echo "$KD" >"$CG_D/cgroup.procs"
		fi
		"$T/busy" "$N" & BP=$!; KILL+=("$BP")
		[ "$layout" = own-cgroups ] && echo "$BP" >"$CG_T/cgroup.procs"
		sleep 2 # and until its N threads run (a loaded machine creates them slowly)
		for _ in $(seq 150); do
			[ "$(awk '/^Threads:/ { print $2 - 1 }' "/proc/$BP/status")" -ge "$N" ] && break
			sleep 0.2
		done
		had=$(awk '/^Threads:/ { print $2 - 1 }' "/proc/$BP/status") # its workers
		e0=$(ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['thread_events'])")
		read -r c0 w0 _ <"/proc/$KD/schedstat"; t0=$(date +%s.%N)
		if [ "$layout" = own-cgroups ]; then # kprofctl in kprofd's cgroup, as a client would be
			sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG_D" \
				"$KPROFCTL" --socket "$SOCK" attach "$BP" --freq 99 >/dev/null
		else
			ctl attach "$BP" --freq 99 >/dev/null
		fi
		t1=$(date +%s.%N); read -r c1 w1 _ <"/proc/$KD/schedstat"
		e1=$(ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['thread_events'])")
		python3 -c "import sys
n, l = sys.argv[1:3]
w, c, q = map(float, sys.argv[3:6])
print('%8s %-12s %10.3f %14.1f %16.0f %8s %8s' % (n, l, w, c / 1e6, q / 1e6, sys.argv[6], sys.argv[7]))" \
			"$N" "$layout" "$(echo "$t1 - $t0" | bc)" $((c1 - c0)) $((w1 - w0)) "$had" $((e1 - e0))
		kill -9 "$BP"; wait "$BP" 2>/dev/null
		ctl detach "$BP" >/dev/null 2>&1
		[ "$layout" = own-cgroups ] && cgroup_home "$KD"
	done
done
stop
fi

if part 4; then
echo "## housekeeping: N sleeping processes attached at 99 Hz, kprofd's CPU over ${SC_IDLE_SECONDS} s"
printf "%8s %14s %20s\n" targets "cpu ms/s" "us/target/s"
cgroup_new kprof-scale-idle; CG_I=$CGROUP
for N in $SC_IDLE; do
	start --max-targets $((N > 1024 ? N : 1024))
	# As deployed: kprofd in a cgroup of its own (a loaded machine starves it otherwise).
	[ -n "$CG_I" ] && echo "$KD" >"$CG_I/cgroup.procs"
	PYTHONPATH=$T python3 - "$SOCK" "$N" "$T/idle.pids" <<'PY'
import subprocess, sys, kpraw
procs = [subprocess.Popen(["sleep", "600"]) for _ in range(int(sys.argv[2]))]
open(sys.argv[3], "w").write(" ".join(str(p.pid) for p in procs))
s = kpraw.connect(sys.argv[1], timeout=120)
for p in procs:
    kpraw.send(s, kpraw.field(1, b"\x08" + kpraw.varint(p.pid) + b"\x10\x63"))
    kpraw.recv_frame(s)
PY
	read -r -a IDLE <"$T/idle.pids"; KILL+=("${IDLE[@]}")
	sleep 12 # past the first 10 s after an attach, when a JVM is looked for 4 times a second
	att=$(ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['targets_attached'])")
	c0=$(cpu_us "$KD"); t0=$(date +%s.%N)
	sleep "$SC_IDLE_SECONDS"
	c1=$(cpu_us "$KD"); t1=$(date +%s.%N)
	python3 -c "import sys
n, dc, dt = map(float, sys.argv[1:])
print('%8d %14.2f %20.1f' % (n, dc / dt / 1000, dc / dt / max(n, 1)))" "$att" "$(echo "$c1 - $c0" | bc)" "$(echo "$t1 - $t0" | bc)"
	kill -9 "${IDLE[@]}" 2>/dev/null
	stop
done
fi
