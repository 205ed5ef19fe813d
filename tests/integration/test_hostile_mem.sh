#!/usr/bin/env bash
# Hostile targets, part 2: the files of an unprivileged user's process (nobody) that kprofd
# parses with its own memory and mmaps:
#   2. an ELF (48 MB, 2 M symbols) that its owner truncates to 8 KiB and restores, again and
#      again, while kprofd parses it through a mmap: kprofd must not die of SIGBUS;
#   7a. an ELF whose 200 function symbols all share one 4 MB name: kprofd's memory must not
#      grow by 200 copies of it (< 64 MB);
#   7b. four 64 MB perf maps (16 MB on the sanitized build): when the 4 processes end, kprofd's memory must fall back to
#      within 64 MB of what it was before the attaches (kept profiles keep only their names).
# Needs root, setpriv, setsid, cc, python3.
# Timeout: 480 (the sanitized build reads 7b's perf maps slowly)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
for tool in setpriv setsid cc; do
	command -v "$tool" >/dev/null || { skip "hostile mem" "$tool is not installed"; exit 0; }
done
build elfexec || { fail "build elfexec.c" "cc failed"; exit 1; }
MB=1024 # KiB
# On the sanitized build (tests/run.sh --integration-only with SANITIZED=1) AddressSanitizer
# keeps freed memory in its quarantine and its allocator's pages: let it give them back, as
# glibc's malloc_trim does for the plain build, so RSS measures kprofd, not the sanitizer.
if [ -n "${SANITIZED:-}" ]; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0:allocator_release_to_os_interval_ms=100"
fi

# --- 2. SIGBUS: the ELF is cut to 8 KiB under kprofd's mmap.
echo "-- 2. (at ${SECONDS} s)"
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }
D2=$NB/sigbus
mkdir -p "$D2"
"$PY" "$HFIX/mkelf.py" "$D2/orig.elf" 2000000 || { fail "mkelf.py" ""; exit 1; }
cp "$D2/orig.elf" "$D2/lib.elf"
chown -R $NOBODY:$NOBODY "$D2"
"${AS_NOBODY[@]}" "$BIN/elfexec" "$D2/lib.elf" 0x200 2>"$TDIR/elfexec.err" &
T2=$!
PIDS+=("$T2")
wait_for 10 has_ready "$TDIR/elfexec.err" || fail "elfexec starts" "$(cat "$TDIR/elfexec.err")"
"${AS_NOBODY[@]}" "$PY" "$HFIX/flap.py" "$D2/lib.elf" "$D2/orig.elf" 15 >"$TDIR/flap.out" 2>&1 &
F2=$!
PIDS+=("$F2")
# Attach, wait for samples (kprofd parses the ELF on the first one in its mapping), detach;
# again (each attach reads the mappings again, and the new mtime misses the ELF cache).
# Each attach is a new session of T2 (the detached ones are kept): its samples start at 0
# (at_least_samples reads the attached session).
cycles=0 attached=0
while kill -0 "$F2" 2>/dev/null && daemon_alive; do
	cycles=$((cycles + 1))
	nctl attach "$T2" --freq 999 >/dev/null 2>&1 && attached=$((attached + 1))
	wait_for 3 at_least_samples "$T2" 200
	nctl detach "$T2" >/dev/null 2>&1
done
daemon_alive || kill "$F2" 2>/dev/null # no need to flap on for a dead kprofd
wait "$F2"
echo "$attached attaches in $cycles cycles; $(cat "$TDIR/flap.out")"
if daemon_ok && [ "$attached" -ge 3 ] && kill -0 "$T2"; then
	pass "ELF cut to 8 KiB and restored under kprofd for 15 s ($attached attaches): kprofd alive and answering"
elif ! daemon_alive; then
	fail "kprofd survives an ELF truncated while it reads it" "kprofd $(how_died) after $attached attaches; log: $(tail -1 "$TDIR/kprofd.log")"
else
	fail "kprofd survives an ELF truncated while it reads it" "$attached attaches, target alive: $(kill -0 "$T2" && echo yes); status: $(tctl status 2>&1 | head -1)"
fi
kill -9 "$T2" 2>/dev/null

# --- 7a. 200 function symbols sharing one 4 MB name.
echo "-- 7a. (at ${SECONDS} s)"
restart_daemon || { fail "daemon restarts" "see log"; exit 1; }
D7=$NB/bigname
mkdir -p "$D7"
"$PY" "$HFIX/mkelf.py" "$D7/lib.elf" 200 --bigname $((4 << 20)) || { fail "mkelf.py" ""; exit 1; }
chown -R $NOBODY:$NOBODY "$D7"
"${AS_NOBODY[@]}" "$BIN/elfexec" "$D7/lib.elf" 0x200 2>"$TDIR/elfexec7.err" &
T7=$!
PIDS+=("$T7")
wait_for 10 has_ready "$TDIR/elfexec7.err" || fail "elfexec starts" "$(cat "$TDIR/elfexec7.err")"
r0=$(rss_kb "$DAEMON_PID")
nctl attach "$T7" --freq 999 >/dev/null || fail "attach the big-name target" ""
# 3 s at 999 Hz: 2500 samples (the ELF is parsed on the first batch).
wait_for 20 tfield_ge "$T7" samples 2500
r1=$(rss_kb "$DAEMON_PID" 2>/dev/null)
if [ -n "$r1" ] && [ $((r1 - r0)) -lt $((64 * MB)) ] && daemon_ok; then
	pass "200 symbols sharing a 4 MB name: kprofd grew by $(((r1 - r0) / MB)) MB (< 64)"
else fail "names from an ELF are bounded" "kprofd's RSS $((r0 / MB)) MB -> $((${r1:-0} / MB)) MB after $(tfield "$T7" samples) samples"; fi
kill -9 "$T7" 2>/dev/null

# --- 7b. Four 64 MB perf maps (16 MB sanitized), freed when their processes end.
echo "-- 7b. (at ${SECONDS} s)"
restart_daemon || { fail "daemon restarts" "see log"; exit 1; }
LINES=1048576
# The sanitized build reads perf maps 3-4 times slower: its maps are a quarter of the size (the
# same code, freed the same way), for the suite's time.
[ -z "${SANITIZED:-}" ] || LINES=262144
MAPMB=$((LINES * 64 >> 20))
r0=$(rss_kb "$DAEMON_PID")
T8=()
for i in 1 2 3 4; do
	"${AS_NOBODY[@]}" "$PY" "$HFIX/bigmap.py" $LINES 2>"$TDIR/bigmap$i.err" &
	PIDS+=("$!")
	T8+=("$!")
done
for i in 1 2 3 4; do
	wait_for 30 has_ready "$TDIR/bigmap$i.err" || fail "bigmap $i starts" "$(cat "$TDIR/bigmap$i.err")"
done
for p in "${T8[@]}"; do nctl attach "$p" >/dev/null || fail "attach bigmap $p" ""; done
all_read() { local p; for p in "${T8[@]}"; do tfield_is "$p" jit_symbols $LINES || return 1; done; }
# Read at most 16 MiB a second each, within kprofd's CPU allowance for symbol reads: a minute
# here, three in the sanitized build on a loaded machine (942,214 and 464,123 lines of two maps
# after 60 s seen).
wait_for 240 all_read || fail "4 perf maps of $LINES lines read" "$(ctl list)"
r1=$(rss_kb "$DAEMON_PID")
echo "kprofd's RSS: $((r0 / MB)) MB before, $((r1 / MB)) MB with 4 perf maps of $LINES lines read"
kill -9 "${T8[@]}"
all_exited() { local p; for p in "${T8[@]}"; do tfield_is "$p" state exited || return 1; done; }
wait_for 20 all_exited || fail "4 bigmap targets exited" "$(ctl list --all)"
rss_back() { [ "$(rss_kb "$DAEMON_PID")" -le $((r0 + 64 * MB)) ]; }
if wait_for 10 rss_back && daemon_ok; then
	pass "4 x $MAPMB MB perf maps freed when their processes ended (RSS $((r0 / MB)) -> $((r1 / MB)) -> $(($(rss_kb "$DAEMON_PID") / MB)) MB)"
else fail "perf maps freed with their processes" "RSS $((r0 / MB)) MB before, $((r1 / MB)) MB attached, $(($(rss_kb "$DAEMON_PID" 2>/dev/null || echo 0) / MB)) MB 10 s after the 4 exited"; fi
finish
