#!/bin/sh
# tests/integration/kernels_guest.sh: the checks test_kernels.sh runs inside each QEMU guest
# (busybox sh, no python): kprofd, kprofctl and minijit are the host's build, copied into the
# initramfs with their libraries. Results go to the serial console as PASS:/FAIL:/SKIP: lines
# (the host adds the kernel's version), plus "SHARE: mj_hot N" (mj_hot's share of the JIT
# samples at 99 Hz, which the host compares with its own) and "GUEST-DONE" at the end.
# $1: "full" to also check attach --all and --cgroup, else "base".
MODE=${1:-base}
SOCK=/run/kprofd.sock
T=/tmp/kt
mkdir -p $T /run
FAILS=0
step() { echo "-- $1 (at $(uptime_s) s)"; }
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; FAILS=$((FAILS + 1)); }
# A TCG guest beside the suite may get a few percent of a CPU: replies wait longer than 30 s.
ctl() { KPROF_TIMEOUT=600 /bin/kprofctl --socket $SOCK "$@"; }
# uptime: the guest's seconds since boot.
uptime_s() { cut -d. -f1 /proc/uptime; }
# wait_for SECONDS CMD...: poll CMD every second until it succeeds; 1 on timeout. Under TCG on a
# busy host every exec is slow (its code translated anew): deadlines are generous and by the
# clock, polls few.
wait_for() {
	end=$(($(uptime_s) + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$(uptime_s)" -ge $end ] && return 1
		sleep 1
	done
}
# samples PID, state PID: the SAMPLES and STATE columns of `kprofctl list --all` for PID's newest
# session (PID SESSION COMM UID STATE HZ SAMPLES ...).
samples() { ctl list --all | awk -v p="$1" '$1 == p { n = $7 } END { print n + 0 }'; }
at_least() { [ "$(samples "$1")" -ge "$2" ]; }
state_is() { [ "$(ctl list --all | awk -v p="$1" '$1 == p { s = $5 } END { print s }')" = "$2" ]; }
# mj_ready FILE: minijit wrote its ready line.
mj_ready() { grep -q ready "$1"; }

echo "GUEST-START $(uname -r)"
# A perf interrupt under TCG looks slow to the kernel, which would throttle the sampling events.
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
# No slowdown budget: the paths check counts every activation (lib.sh does the same).
/bin/kprofd --socket $SOCK --state-dir $T/state --probe-slowdown 0 >$T/kprofd.log 2>&1 &
KD=$!
if wait_for 120 ctl status; then
	pass "kprofd starts"
else
	fail "kprofd starts" "$(tail -5 $T/kprofd.log | tr '\n' ' ')"
	echo "GUEST-DONE fails=$FAILS"
	exit 1
fi
# Every feature line of status, with on/off and why, for the host's log; the JSON has them too.
ctl status >$T/status
sed -n '/^features:/,$p' $T/status
if grep -q '^features:' $T/status && ctl status --json | grep -q '"features":\[{"name":'; then
	pass "status lists the kernel features (text and JSON)"
else fail "status features" "$(tr '\n' ' ' <$T/status)"; fi

# 1. Names at 99 Hz: mj_hot is the hottest JIT function; its share goes to the host.
step "1. names at 99 Hz"
/bin/minijit --seconds 600 >$T/mj1.out 2>$T/mj1.err &
P=$!
wait_for 60 mj_ready $T/mj1.err
ctl attach $P --freq 99 >$T/a1 2>&1
cat $T/a1
if wait_for 400 at_least $P 1000; then
	ctl report $P --top 8 >$T/r1
	# Columns found by the header (report puts the function last, as perf report does).
	top=$(awk '$1 == "SELF" { for (i = 1; i <= NF; i++) c[$i] = i; next }
		c["KIND"] && $c["KIND"] == "jit" { print $NF; exit }' $T/r1)
	share=$(awk '$1 == "SELF" { for (i = 1; i <= NF; i++) c[$i] = i; next }
		c["KIND"] && $c["KIND"] == "jit" && $NF ~ /^mj_(hot|warm|cold|leaf)$/ { s[$NF] = $1; t += $1 }
		END { if (t) printf "%.1f", 100 * s["mj_hot"] / t }' $T/r1)
	echo "SHARE: mj_hot $share"
	[ "$top" = mj_hot ] && pass "minijit at 99 Hz: mj_hot is named, the hottest ($(samples $P) samples)" ||
		fail "names" "$(head -8 $T/r1 | tr '\n' ' ')"
	if ctl hcct $P >$T/h1 2>&1 && grep -q '\* mj_hot' $T/h1 && grep -q 'mj_warm' $T/h1; then
		pass "hcct: mj_main > mj_hot hot"
	else fail "hcct" "$(head -12 $T/h1 | tr '\n' ' ')"; fi
else fail "attach at 99 Hz" "$(cat $T/a1) $(ctl list --all | head -3 | tr '\n' ' ')"; fi
kill $P

step "2. attach --calls"
# 2. Exact call counts (uprobes and uretprobes): equal to minijit's own.
/bin/minijit --wait-usr1 --rounds 20 --truth --cleanup >$T/mj2.out 2>$T/mj2.err &
P=$!
wait_for 60 mj_ready $T/mj2.err
if ctl attach $P --calls >$T/a2 2>&1; then
	kill -USR1 $P
	wait $P
	wait_for 120 state_is $P exited
	ctl report $P --top 0 >$T/r2
	bad=$(awk 'NR == FNR { if ($1 == "func") want[$2] = $6; next }
		$1 == "SELF" { for (i = 1; i <= NF; i++) c[$i] = i; next }
		c["CALLS"] && $c["KIND"] == "jit" && $NF in want { got[$NF] = $c["CALLS"] }
		END { for (f in want) if (got[f] != want[f]) printf "%s %s!=%s ", f, got[f], want[f]; n = 0
		      for (f in want) n++; if (!n) print "no truth" }' $T/mj2.out $T/r2)
	[ -z "$bad" ] && pass "attach --calls: exact counts equal minijit's --truth" ||
		fail "exact counts" "$bad"
else fail "attach --calls" "$(cat $T/a2)"; kill $P; fi

step "3. paths"
# 3. Path profiles (uprobes on every block of mj_paths): every activation seen.
/bin/minijit --wait-usr1 --rounds 3 --paths 100 --cleanup >/dev/null 2>$T/mj3.err &
P=$!
wait_for 60 mj_ready $T/mj3.err
ctl paths $P mj_paths --duration 300 --top 0 --json >$T/p3 2>$T/p3.err &
C=$!
wait_for 120 grep -q tracing $T/p3.err
# Past the trace's first second before the work starts: a starved guest's mj_main could run
# 100 ms before the first mj_paths, and a first second with CPU and no hit stops a trace.
sleep 2
kill -USR1 $P
wait $P
if wait $C && grep -q '"activations":300,' $T/p3; then
	pass "paths: mj_paths traced, 300 activations"
else fail "paths" "$(cat $T/p3.err) $(grep -o '"activations":[0-9]*' $T/p3)"; fi

step "4. record"
# 4. record: a command run under kprofd, its profile printed at its end (4 s at 99 Hz: some 400
#    samples, mj_hot about half of them).
if ctl record --format report --freq 99 -- /bin/minijit --seconds 4 >$T/rec 2>$T/rec.err &&
	grep -q ' jit .* mj_hot$' $T/rec; then
	pass "record: minijit's report names mj_hot"
else
	# What kprofd saw of the process, its perf map on disk and the clock (a starved guest once
	# named none of its JIT code: 34 samples, 0 JIT symbols, no warning in the log).
	rp=$(sed -n 's/.*pid \([0-9]*\) ready.*/\1/p' $T/rec.err | head -1)
	fail "record" "$(tail -3 $T/rec.err) $(head -5 $T/rec | tr '\n' ' ') [the map: \
$(stat -c '%s bytes, modified %y' /tmp/perf-$rp.map 2>&1), now $(date '+%T'); kprofd: \
$(grep "pid $rp[^0-9]" $T/kprofd.log | tail -6 | tr '\n' ' '); list: $(ctl list --all 2>&1 | grep " $rp " | tr '\n' ' ')]"
fi

if [ "$MODE" = full ]; then
	step "5. attach --all"
	# 5. attach --all: a process nobody attached is sampled and named (at 99 Hz, as the others:
	#    its default 19 Hz took 200 samples 10 s of TCG time).
	if ctl attach --all --freq 99 >$T/all 2>&1 && grep -q "system-wide sampling on" $T/all; then
		/bin/minijit --seconds 120 >/dev/null 2>$T/mj5.err &
		P=$!
		if wait_for 180 at_least $P 200 && ctl report $P --top 3 | grep -q mj_hot; then
			pass "attach --all: an unattached minijit is sampled and named"
		else fail "attach --all" "$(ctl list --all | head -5 | tr '\n' ' ')"; fi
		ctl detach --all >/dev/null 2>&1
		kill $P
	else fail "attach --all" "$(cat $T/all)"; fi

	step "6. attach --cgroup"
	# 6. attach --cgroup: a process moved into a cgroup below the watched one is attached and
	#    sampled (the BPF program walks the ancestors: struct cgroup.ancestors from Linux 6.0,
	#    ancestor_ids before).
	mkdir -p /sys/fs/cgroup/kt/sub
	if ctl attach --cgroup kt --freq 99 >$T/cg 2>&1; then
		/bin/minijit --seconds 120 >/dev/null 2>$T/mj6.err &
		P=$!
		echo $P >/sys/fs/cgroup/kt/sub/cgroup.procs
		if wait_for 180 at_least $P 200 && ctl report $P --top 3 | grep -q mj_hot; then
			pass "attach --cgroup: a process moved below it is attached, sampled and named"
		else fail "attach --cgroup" "$(ctl list --all | head -5 | tr '\n' ' ')"; fi
		kill $P
	else fail "attach --cgroup" "$(cat $T/cg)"; fi
fi

kill $KD
wait $KD
grep -i 'error\|warn' $T/kprofd.log | head -20 | sed 's/^/kprofd.log: /'

# 7. Honest errors: where the kernel has no attach cookies, kprofd made to load the programs that
#    call bpf_get_attach_cookie (a test's setting) fails, naming the program, the helper and the
#    version that has it, and no privilege hint (it runs as root).
if grep -q '^  attach-cookie  *off' $T/status; then
	step "7. a load failure explained"
	KPROF_FEATURES_ON=attach-cookie /bin/kprofd --socket /run/k2.sock --state-dir $T/st2 >$T/k2.log 2>&1
	rc=$?
	grep -E "invalid func|unknown func|load failed|CO-RE" $T/k2.log | head -5 | sed 's/^/kprofd.log: /'
	line=$(grep 'cannot load the BPF programs' $T/k2.log)
	if [ $rc -ne 0 ] && echo "$line" | grep -q 'program kp_[a-z_]*: this kernel has no BPF helper bpf_get_attach_cookie (#174; Linux 5.15' &&
		! grep -q CAP_BPF $T/k2.log; then
		pass "a load failure names the program, the helper and Linux 5.15, no privilege hint: ${line#*error: }"
	else fail "load failure explained" "rc $rc: $(grep -v '^ *[0-9]*: ' $T/k2.log | tail -8 | tr '\n' ' ')"; fi
fi
# 8. The same where the kernel has no per-thread sampling (before 6.7): the thread programs,
#    loaded all the same, fail on what this kernel lacks (a field, a program type or a kfunc).
if grep -q '^  per-thread-sampling  *off' $T/status; then
	step "8. the thread programs' failure explained"
	KPROF_FEATURES_ON=per-thread-sampling /bin/kprofd --socket /run/k3.sock --state-dir $T/st3 >$T/k3.log 2>&1
	rc=$?
	grep -E "invalid func|unknown func|load failed|CO-RE|program type" $T/k3.log | head -5 | sed 's/^/kprofd.log: /'
	line=$(grep 'cannot load the BPF programs' $T/k3.log)
	if [ $rc -ne 0 ] && echo "$line" | grep -q 'program kp_[a-z_]*: this kernel has no .*Linux [0-9.]* and newer have it' &&
		! grep -q CAP_BPF $T/k3.log; then
		pass "the thread programs' load failure names what this kernel lacks: ${line#*error: }"
	else fail "thread programs' failure explained" "rc $rc: $(grep -v '^ *[0-9]*: ' $T/k3.log | tail -8 | tr '\n' ' ')"; fi
fi
echo "GUEST-DONE fails=$FAILS"
