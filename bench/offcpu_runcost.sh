#!/usr/bin/env bash
# The sched_switch program's own CPU per run (docs/BENCHMARKS.md "Off-CPU stacks by hash"): the
# kernel's BPF statistics (kernel.bpf_stats_enabled: run_time_ns and run_cnt of the program)
# over 3 s of bench/pingpong attached --off-cpu; its rate moves with the machine, the program's
# time per run much less. Root. Usage: bench/offcpu_runcost.sh [BUILD]
set -eu
B=${1:-build}; D=$(mktemp -d /tmp/kprof-bench-runcost.XXXXXX)
KP=
trap '[ -n "$KP" ] && { kill $KP; wait $KP; }; sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$D"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$D/pingpong" "$(dirname "$0")/pingpong.c"
"$B/kprofd" --socket "$D/s" --state-dir "$D/st" >"$D/log" 2>&1 & KP=$!
for i in $(seq 50); do "$B/kprofctl" --socket "$D/s" status >/dev/null 2>&1 && break; sleep 0.1; done
sysctl -qw kernel.bpf_stats_enabled=1
{ sleep 1; echo; } | "$D/pingpong" 4 >"$D/out" 2>/dev/null & P=$!
sleep 0.3; "$B/kprofctl" --socket "$D/s" attach $P --off-cpu >/dev/null
sleep 0.5
id=$(bpftool -j prog show | python3 -c "import json,sys; print([p['id'] for p in json.load(sys.stdin) if p.get('name','').startswith('kp_offcpu')][0])")
a=$(bpftool -j prog show id $id | python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('run_time_ns',0), d.get('run_cnt',0))")
sleep 3
b=$(bpftool -j prog show id $id | python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('run_time_ns',0), d.get('run_cnt',0))")
wait $P; cat "$D/out"
echo "$a $b" | awk '{ printf "ns per run: %.0f (%d runs)\n", ($3-$1)/($4-$2), $4-$2 }'
