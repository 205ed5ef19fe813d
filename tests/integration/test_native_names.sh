#!/usr/bin/env bash
# Native frames named as perf names them: the vdso (from kprofd's own image), the local functions
# of stripped libraries (from their separate debug files, libc6-dbg here: libm's __sin_fma, libc's
# start_thread and __libc_start_call_main), and the PLT (NAME@plt). kprofd and `perf record -g -p`
# sample one run of a process at once, and both tools' shares go in the PASS lines:
#   1. the debug files are the target's: looked for inside its root and mount namespace (an
#      empty /usr/lib/debug there names nothing, a debug file of another build id is refused, the
#      right files there are used);
#   2. the native fixture (tests/fixtures/native): clock_gettime in a loop on the main thread,
#      sin() on a second one;
#   3. Node calling Date.now() in a loop (tests/fixtures/clock.js; the issue measured 58%
#      "[unknown] [vdso]" there).
# Needs root; perf (linux-perf) for the comparisons, libc6-dbg for the debug files, node for 3;
# what is missing is skipped with the reason.
. "$(dirname "$0")/lib.sh"
NATIVE=$BUILD/native
CMP=(python3 "$(dirname "$0")/names_compare.py")
[ -x "$NATIVE" ] || { fail "setup" "$NATIVE is not built (make all)"; exit 1; }

PERF=
if command -v perf >/dev/null && perf record -q -o "$TDIR/probe.data" true >/dev/null 2>&1; then
	PERF=perf
else
	skip "perf comparison" "perf is not installed or cannot record (make deps: linux-perf)"
fi
# debug_path LIB: where LIB's debug file is by its build id (empty if it has none).
debug_path() {
	local id
	id=$(readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] && echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}
LIBC=$(ldd "$NATIVE" | awk '/libc\.so\.6/ { print $3 }')
LIBM=$(ldd "$NATIVE" | awk '/libm\.so\.6/ { print $3 }')
LIBC_DBG=$(debug_path "$LIBC")
LIBM_DBG=$(debug_path "$LIBM")
HAVE_DBG=
if [ -n "$LIBC_DBG" ] && [ -f "$LIBC_DBG" ] && [ -n "$LIBM_DBG" ] && [ -f "$LIBM_DBG" ]; then
	HAVE_DBG=1
else
	skip "debug files" "no debug files for $LIBC and $LIBM (make deps: libc6-dbg)"
fi

# profile PID NAME [PERF_PID]: once PID has exited, kprof's report and folded stacks into
# TDIR/NAME.json and NAME.folded, and perf's samples (when it recorded PERF_PID's run) into
# NAME.script.
profile() {
	wait_for 20 state_is "$1" exited || fail "$2: exit noticed" "$(ctl list --all)"
	ctl report "$1" --top 0 --json >"$TDIR/$2.json"
	ctl folded "$1" >"$TDIR/$2.folded"
	if [ -n "${3:-}" ]; then
		wait "$3" 2>/dev/null
		perf script -i "$TDIR/$2.data" -F ip,sym,dso >"$TDIR/$2.script" 2>/dev/null
	fi
}

# run_native NAME MS [SETUP]: the native fixture for MS ms (in a private mount namespace after
# the shell commands SETUP, if given), kprofd attached first, and perf -p too when there is
# perf and no SETUP; sets NPID and PERF_PID.
run_native() {
	local name=$1 ms=$2 setup=${3:-}
	if [ -n "$setup" ]; then
		unshare -m --propagation private sh -c "$setup && exec '$NATIVE' --ms $ms --wait-usr1" \
			2>"$TDIR/$name.err" &
	else
		"$NATIVE" --ms "$ms" --wait-usr1 2>"$TDIR/$name.err" &
	fi
	NPID=$!
	PIDS+=("$NPID")
	PERF_PID=
	wait_for 10 grep -q ready "$TDIR/$name.err" || { fail "$name: starts" "$(cat "$TDIR/$name.err")"; return 1; }
	ctl attach "$NPID" --freq 999 >/dev/null || { fail "$name: attach" "$(ctl list)"; return 1; }
	if [ -n "$PERF" ] && [ -z "$setup" ]; then
		perf record -q -g -F 999 -p "$NPID" -o "$TDIR/$name.data" >/dev/null 2>&1 &
		PERF_PID=$!
		wait_for 10 test -s "$TDIR/$name.data"
	fi
	kill -USR1 "$NPID"
	wait "$NPID"
}

# has_frame NAME FRAME: 0 if some folded stack of NAME holds FRAME.
has_frame() { tr ' ;' '\n\n' <"$TDIR/$1.folded" | grep -qxF -- "$2"; }

start_daemon || { fail "daemon starts" "see log"; exit 1; }

# --- 1. The target's root (before anything else: the symbols of a file are cached).
echo "-- 1. debug files inside the target's root"
if [ -n "$HAVE_DBG" ] && command -v unshare >/dev/null; then
	cp "$LIBM_DBG" "$TDIR/libm.debug"
	cp "$LIBC_DBG" "$TDIR/libc.debug"
	tmpfs="mount -t tmpfs tmpfs /usr/lib/debug"
	put() { echo "mkdir -p \$(dirname $2) && cp $1 $2"; }
	run_native ns_empty 600 "$tmpfs" && profile "$NPID" ns_empty
	if has_frame ns_empty "[libm.so.6]" && ! has_frame ns_empty __sin_fma &&
		! has_frame ns_empty start_thread; then
		pass "an empty /usr/lib/debug in the target's mount namespace: libm and libc unnamed, as there"
	else fail "target's root, empty" "$(sort -t' ' -k2 -nr "$TDIR/ns_empty.folded" | head -3)"; fi
	# libm's debug file where libc's belongs: another build id, refused.
	run_native ns_wrong 600 "$tmpfs && $(put "$TDIR/libm.debug" "$LIBC_DBG")" && profile "$NPID" ns_wrong
	if has_frame ns_wrong "[libc.so.6]" && ! has_frame ns_wrong start_thread &&
		! has_frame ns_wrong __sin_fma; then
		pass "a debug file of another build id at libc's build-id path is refused"
	else fail "debug file of another build id" "$(sort -t' ' -k2 -nr "$TDIR/ns_wrong.folded" | head -3)"; fi
	run_native ns_right 600 "$tmpfs && $(put "$TDIR/libm.debug" "$LIBM_DBG") && $(put "$TDIR/libc.debug" "$LIBC_DBG")" &&
		profile "$NPID" ns_right
	if has_frame ns_right __sin_fma && has_frame ns_right start_thread; then
		pass "the right debug files in the target's mount namespace only: __sin_fma and start_thread named"
	else fail "debug files in the target's root" "$(sort -t' ' -k2 -nr "$TDIR/ns_right.folded" | head -3)"; fi
else
	skip "target's root" "needs libc6-dbg and unshare"
fi

# --- 2. The native fixture, kprofd and perf on one run.
echo "-- 2. vdso, debug files and PLT on the native fixture"
run_native native 2500 && profile "$NPID" native "$PERF_PID"
ctl report "$NPID" --top 8
checks=(leaf:__vdso_clock_gettime@[vdso] unnamed)
[ -n "$HAVE_DBG" ] && checks+=(leaf:__sin_fma@libm.so.6 root:start_thread root:__libc_start_call_main)
"${CMP[@]}" --same-run "$TDIR/native.json" "$TDIR/native.folded" \
	"$([ -n "$PERF" ] && echo "$TDIR/native.script" || echo -)" "${checks[@]}" || FAILS=$((FAILS + 1))
if has_frame native "clock_gettime@@GLIBC_2.17" || [ -z "$HAVE_DBG" ]; then
	pass "libc's caller of the vdso named as perf names it: clock_gettime@@GLIBC_2.17"
else fail "clock_gettime@@GLIBC_2.17" "$(grep -o 'clock_gettime[^;]*' "$TDIR/native.folded" | sort -u | tr '\n' ' ')"; fi
if has_frame native "sin@plt" && ! has_frame native _init; then
	pass "the PLT entry of sin is sin@plt, as in perf, not _init"
else fail "sin@plt" "$(grep -E "_init|@plt" "$TDIR/native.folded" | head -3)"; fi

# --- 3. Node: Date.now() in a loop reads the clock through the vdso.
echo "-- 3. Node, Date.now() in a loop"
if command -v node >/dev/null; then
	(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/tests/fixtures/clock.js" 2500 --wait) \
		>"$TDIR/node.out" 2>"$TDIR/node.err" &
	NP=$!
	PIDS+=("$NP")
	if wait_for 15 grep -q ready "$TDIR/node.err" && ctl attach "$NP" --freq 999 >/dev/null; then
		PERF_PID=
		if [ -n "$PERF" ]; then
			perf record -q -g -F 999 -p "$NP" -o "$TDIR/node.data" >/dev/null 2>&1 &
			PERF_PID=$!
			wait_for 10 test -s "$TDIR/node.data"
		fi
		kill -USR2 "$NP"
		wait "$NP"
		profile "$NP" node "$PERF_PID"
		ctl report "$NP" --top 6
		# The vdso function perf names most (V8 reads the clock with gettimeofday or
		# clock_gettime, depending on its version). Not "[unknown]": code of the vdso no
		# symbol covers, which kprof names "[vdso]" (its share is checked as "unnamed").
		vdso=$([ -n "$PERF" ] && awk '/ \(\[vdso\]\)$/ && $2 != "[unknown]" { print $2 }' "$TDIR/node.script" |
			sort | uniq -c | sort -nr | awk '{ print $2; exit }')
		"${CMP[@]}" --same-run "$TDIR/node.json" "$TDIR/node.folded" \
			"$([ -n "$PERF" ] && echo "$TDIR/node.script" || echo -)" \
			"leaf:${vdso:-__vdso_gettimeofday}@[vdso]" unnamed || FAILS=$((FAILS + 1))
	else
		fail "node starts and is attached" "$(cat "$TDIR/node.err")"
	fi
	rm -f "/tmp/perf-$NP.map"
else
	skip "node" "node is not installed"
fi
finish
