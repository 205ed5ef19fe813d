#!/usr/bin/env bash
# Short-lived processes are named as fully as long ones. kprofd reads its samples in batches,
# often after a short process has exited: by then /proc/PID/map_files and /proc/PID/root are
# gone. kprofd reads the symbols of every mapped file when it attaches (and keeps the target's
# root), so these samples are named from what was read while the process ran:
#   1. the native fixture for 300 ms (attached first, then started by SIGUSR1);
#   2. Node for 400 ms (tests/fixtures/clock.js, started by SIGUSR2), JIT frames from its perf
#      map read after the exit;
#   3. the native fixture again, every sample read from a zombie: kprofd is stopped (SIGSTOP)
#      from the start until the process has exited, and its parent reaps it only 2 s later. A
#      zombie's /proc/PID/maps is empty; the fixture's --late-code page, mapped after the attach,
#      makes kprofd read the maps again then, and what it read while the process ran must still
#      name everything else.
# Each is compared with `perf record -g` (1: of a run of the same length; 2, 3: `-p PID` of the
# same run, as Node's share in the vdso and the late page's share vary from run to run): no frame unnamed in kprof (an
# "[unknown]" or a name made up from its mapping, "[libc.so.6]") where perf has its name,
# and the hot functions perf names named by kprof too. A fresh kprofd for each, so that no symbol
# cached from an earlier target helps.
# Needs root; perf (linux-perf) for the comparisons, libc6-dbg for libm's and libc's local names,
# node for 2.
. "$(dirname "$0")/lib.sh"
NATIVE=$BUILD/native
CMP=(python3 "$(dirname "$0")/names_compare.py")
export NAMES_TOL=3 # points of samples with an unnamed frame kprof may have above perf's
[ -x "$NATIVE" ] || { fail "setup" "$NATIVE is not built (make all)"; exit 1; }
PERF=
if command -v perf >/dev/null && perf record -q -o "$TDIR/probe.data" true >/dev/null 2>&1; then
	PERF=perf
else
	skip "perf comparison" "perf is not installed or cannot record (make deps: linux-perf)"
fi
LIBM=$(ldd "$NATIVE" | awk '/libm\.so\.6/ { print $3 }')
id=$(readelf -n "$LIBM" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
HAVE_DBG=
[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] && HAVE_DBG=1
[ -n "$HAVE_DBG" ] || skip "debug-file names" "no debug file for $LIBM (make deps: libc6-dbg)"

# perf_run NAME CMD...: perf record -g at 999 Hz of CMD, its samples into TDIR/NAME.perf.
perf_run() {
	local name=$1
	shift
	[ -n "$PERF" ] || { echo - >"$TDIR/$name.perfpath"; return; }
	perf record -q -g -F 999 -o "$TDIR/$name.data" -- "$@" >/dev/null 2>&1
	perf script -i "$TDIR/$name.data" -F ip,sym,dso >"$TDIR/$name.perf" 2>/dev/null
	echo "$TDIR/$name.perf" >"$TDIR/$name.perfpath"
}

# perf_same_start NAME PID: perf record -g -p PID at 999 Hz into TDIR/NAME.data, returning once
# it records (its pid in PERF_SAME, empty without perf). perf_same_end NAME: waits for it (it
# ends with its target), its samples into TDIR/NAME.perf, that path (or "-") in
# TDIR/NAME.perfpath.
perf_same_start() {
	local name=$1 pid=$2 ack
	PERF_SAME=
	[ -n "$PERF" ] || return 0
	rm -f "$TDIR/$name.ctl" "$TDIR/$name.ack"
	mkfifo "$TDIR/$name.ctl" "$TDIR/$name.ack" || return 0
	perf record -q -g -F 999 -D -1 --control "fifo:$TDIR/$name.ctl,$TDIR/$name.ack" \
		-p "$pid" -o "$TDIR/$name.data" >"$TDIR/$name.perferr" 2>&1 &
	PERF_SAME=$!
	PIDS+=("$PERF_SAME")
	exec 8>"$TDIR/$name.ctl" 9<"$TDIR/$name.ack"
	echo enable >&8
	read -r -t 10 ack <&9 || fail "$name: perf record -p starts" "$(cat "$TDIR/$name.perferr")"
	exec 8>&- 9<&-
}
perf_same_end() {
	local name=$1
	echo - >"$TDIR/$name.perfpath"
	[ -n "$PERF_SAME" ] || return 0
	wait "$PERF_SAME"
	perf script -i "$TDIR/$name.data" -F ip,sym,dso >"$TDIR/$name.perf" 2>/dev/null &&
		echo "$TDIR/$name.perf" >"$TDIR/$name.perfpath"
}

# kprof_run NAME SIGNAL CMD...: CMD (which prints "ready" on stderr, then waits for SIGNAL),
# attached at 999 Hz, started, waited for; its report and folded stacks into TDIR/NAME.*. With
# SAME_RUN=1, perf records the same run (perf_same_*), read before CMD's perf map is removed.
kprof_run() {
	local name=$1 sig=$2 pid
	shift 2
	"$@" >"$TDIR/$name.out" 2>"$TDIR/$name.err" &
	pid=$!
	PIDS+=("$pid")
	wait_for 15 grep -q ready "$TDIR/$name.err" || { fail "$name: starts" "$(cat "$TDIR/$name.err")"; return 1; }
	ctl attach "$pid" --freq 999 >/dev/null || { fail "$name: attach" "$(ctl list)"; return 1; }
	[ "${SAME_RUN:-}" = 1 ] && perf_same_start "$name" "$pid"
	kill "-$sig" "$pid"
	wait "$pid"
	[ "${SAME_RUN:-}" = 1 ] && perf_same_end "$name"
	wait_for 20 state_is "$pid" exited || { fail "$name: exit noticed" "$(ctl list --all)"; return 1; }
	ctl report "$pid" --top 0 --json >"$TDIR/$name.json"
	ctl folded "$pid" >"$TDIR/$name.folded"
	ctl report "$pid" --top 8
	rm -f "/tmp/perf-$pid.map"
}

# --- 1. 300 ms of native code.
echo "-- 1. a 300 ms native program"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
if kprof_run native USR1 "$NATIVE" --ms 300 --wait-usr1; then
	perf_run native "$NATIVE" --ms 300
	checks=(unnamed leaf:__vdso_clock_gettime@[vdso] leaf:clock_loop@native)
	[ -n "$HAVE_DBG" ] && checks+=(leaf:__sin_fma@libm.so.6 root:start_thread root:__libc_start_call_main)
	"${CMP[@]}" "$TDIR/native.json" "$TDIR/native.folded" "$(cat "$TDIR/native.perfpath")" \
		"${checks[@]}" || FAILS=$((FAILS + 1))
fi
stop_daemon

# --- 2. 400 ms of Node.
echo "-- 2. a 400 ms Node run"
if command -v node >/dev/null; then
	start_daemon || { fail "daemon starts" "see log"; exit 1; }
	JS=$PWD/tests/fixtures/clock.js
	# In TDIR: V8 may drop an isolate log into its working directory.
	# perf on the same run: how much of it the vdso takes varies from run to run.
	if SAME_RUN=1 kprof_run node USR2 sh -c 'cd "$0" && exec node --perf-basic-prof "$1" 400 --wait' "$TDIR" "$JS"; then
		# Not "[unknown]": vdso code no symbol covers is compared as unnamed.
		vdso=$(awk '/ \(\[vdso\]\)$/ && $2 != "[unknown]" { print $2 }' "$TDIR/node.perf" 2>/dev/null |
			sort | uniq -c | sort -nr | awk '{ print $2; exit }')
		"${CMP[@]}" --same-run "$TDIR/node.json" "$TDIR/node.folded" "$(cat "$TDIR/node.perfpath")" unnamed \
			"leaf:${vdso:-__vdso_gettimeofday}@[vdso]" || FAILS=$((FAILS + 1))
		if python3 -c "import json,sys
sys.exit(not any(e['kind'] == 'jit' and 'mixLoop' in e['function'] for e in json.load(open('$TDIR/node.json'))['entries']))"; then
			pass "node: JS functions named from the perf map read after the exit (mixLoop)"
		else fail "node: JIT names" "no mixLoop JIT frame: $(grep -o 'perf-[0-9]*.map' "$TDIR/kprofd.log" | head -1)"; fi
	fi
	stop_daemon
else
	skip "node" "node is not installed"
fi

# --- 3. Every sample read from a zombie.
echo "-- 3. a 300 ms native program read only after its exit, before it is reaped"
# HOLD CMD...: runs CMD, prints "zombie" once CMD has exited, reaps it 2 s later.
HOLD='import subprocess, sys, time
p = subprocess.Popen(sys.argv[1:])
while True:
    try:
        state = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        break
    if state == "Z":
        break
    time.sleep(0.02)
print("zombie", flush=True)
time.sleep(2)
sys.exit(p.wait())'
start_daemon || { fail "daemon starts" "see log"; exit 1; }
python3 -c "$HOLD" "$NATIVE" --ms 300 --wait-usr1 --late-code >"$TDIR/zombie.out" 2>"$TDIR/zombie.err" &
hold=$!
PIDS+=("$hold")
if wait_for 15 grep -q ready "$TDIR/zombie.err" &&
	pid=$(awk '/ ready$/ { print $3; exit }' "$TDIR/zombie.err") &&
	ctl attach "$pid" --freq 999 >/dev/null; then
	# perf on the same run: how much of it the late page takes varies from run to run.
	perf_same_start zombie "$pid"
	kill -STOP "$DAEMON_PID"
	kill -USR1 "$pid"
	wait_for 10 grep -q zombie "$TDIR/zombie.out"
	zombie=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
	kill -CONT "$DAEMON_PID"
	wait "$hold"
	check "the target was a zombie when kprofd went on (state ${zombie:-gone})" [ "$zombie" = Z ]
	if wait_for 20 state_is "$pid" exited; then
		ctl report "$pid" --top 0 --json >"$TDIR/zombie.json"
		ctl folded "$pid" >"$TDIR/zombie.folded"
		ctl report "$pid" --top 8
		perf_same_end zombie
		checks=(unnamed leaf:__vdso_clock_gettime@[vdso] leaf:clock_loop@native)
		[ -n "$HAVE_DBG" ] && checks+=(leaf:__sin_fma@libm.so.6 root:__libc_start_call_main)
		"${CMP[@]}" --same-run "$TDIR/zombie.json" "$TDIR/zombie.folded" "$(cat "$TDIR/zombie.perfpath")" \
			"${checks[@]}" || FAILS=$((FAILS + 1))
	else
		fail "zombie: exit noticed" "$(ctl list --all)"
	fi
else
	fail "zombie: starts and is attached" "$(cat "$TDIR/zombie.err")"
	kill "$hold" 2>/dev/null
fi
stop_daemon
finish
