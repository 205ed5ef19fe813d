#!/usr/bin/env bash
# What one unprivileged user may take of kprofd (security issue, points 8 and 12): targets,
# kept profiles and sampling frequencies per user with the last eighth of each global limit kept
# for root; exact-mode probes per user; enough file descriptors for hundreds of probes (kprofd
# raises its soft RLIMIT_NOFILE, systemd's default being 1024); and a failing exact-mode attach
# of hundreds of functions that does not stall the event loop while its probes are removed.
. "$(dirname "$0")/lib.sh"

as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
# spawn UID: a sleeping process of that user (once it is one: setpriv runs as root until its
# exec); sets SP.
spawn() {
	setpriv --reuid="$1" --regid="$1" --clear-groups sleep 600 & SP=$!; PIDS+=("$SP")
	wait_for 5 grep -qx sleep "/proc/$SP/comm"
}
# nfuncs N FILE: a native program with N tiny functions f_0..f_N-1 (and, with BAD=1, a last
# one whose first instruction uprobes refuse) that sleeps; its perf map is written by the test.
build_funcs() {
	local n=$1 out=$2 i
	{
		echo '#include <unistd.h>'
		for ((i = 0; i < n; i++)); do
			echo "__attribute__((noinline, used)) int f_$i(int x) { return x * $i + 1; }"
		done
		# 0x06 is no x86-64 instruction: the kernel refuses a uprobe on it (never run).
		echo '__asm__(".text\n.globl zz_bad\n.type zz_bad,@function\nzz_bad:\n.byte 0x06\nret\n.size zz_bad, 2\n");'
		echo 'int main(void) { for (;;) pause(); }'
	} >"$out.c"
	cc -O1 -fno-toplevel-reorder -fcf-protection=none -o "$out" "$out.c"
}
# perfmap PID BIN N [bad]: /tmp/perf-PID.map naming f_0..f_N-1 (and zz_bad), owned by PID's uid.
cat >"$TDIR/perfmap.py" <<'PY'
import os, sys
pid, binary, n, bad = sys.argv[1], sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4
real = os.path.realpath(binary)
base = next(int(l.split()[0].split("-")[0], 16) for l in open(f"/proc/{pid}/maps")
            if l.split()[-1] == real and l.split()[2] == "00000000")
out = []
for line in sys.stdin:
    f = line.split()
    if len(f) != 3:
        continue
    if (f[2].startswith("f_") and int(f[2][2:]) < n) or (bad and f[2] == "zz_bad"):
        out.append(f"{base + int(f[0], 16):x} {2 if f[2] == 'zz_bad' else 16:x} {f[2]}\n")
open(f"/tmp/perf-{pid}.map", "w").writelines(out)
st = os.stat(f"/proc/{pid}")
os.chown(f"/tmp/perf-{pid}.map", st.st_uid, st.st_gid)
PY
perfmap() { nm "$2" | python3 "$TDIR/perfmap.py" "$@"; }
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

build_funcs 100 "$TDIR/funcs" || { fail "build the many-functions fixture" "cc failed"; exit 1; }
chmod 755 "$TDIR/funcs"
cat >"$TDIR/k.conf" <<EOF
[limits]
max_targets = 8
max_targets_per_uid = 3
max_kept = 8
max_kept_per_uid = 2
max_freqs_per_uid = 2
max_probes_per_uid = 20
EOF
# Started with a soft limit of 128 open files (systemd's default is 1024), more allowed: kprofd
# raises it, or 30 probed functions (4 fds each) would not fit.
HARD=$(ulimit -Hn); [ "$HARD" = unlimited ] && HARD=65536; [ "$HARD" -gt 65536 ] && HARD=65536
PRL=(prlimit --nofile=128:"$HARD")
start_kprofd() {
	local conf=(--config "$TDIR/k.conf")
	# A kprofd without the per-user keys (an older one) gets the global limits as flags.
	grep -qa max_targets_per_uid "$KPROFD" || conf=(--max-targets 8 --max-kept 8)
	"${PRL[@]}" "$KPROFD" --socket "$SOCK" --state-dir "$TDIR/state" "${conf[@]}" \
		>>"$TDIR/kprofd.log" 2>&1 &
	DAEMON_PID=$!
	wait_for 20 ctl status || { fail "daemon starts" "$(tail -5 "$TDIR/kprofd.log")"; exit 1; }
}
start_kprofd

# 1. Targets per user, and the last eighth of max_targets kept for root.
U=()
for u in 65534 65534 65534 65534 1 1 1 2 2; do spawn "$u"; U+=("$u:$SP"); done
ok=0 refused=
for e in "${U[@]:0:3}"; do as 65534 "$KPROFCTL" --socket "$SOCK" attach "${e#*:}" --freq 99 >/dev/null && ok=$((ok + 1)); done
out=$(as 65534 "$KPROFCTL" --socket "$SOCK" attach "${U[3]#*:}" --freq 99 2>&1) || refused=1
if [ "$ok" = 3 ] && [ -n "$refused" ] && grep -q "limit 3 per user" <<<"$out"; then
	pass "a user's 4th target refused (max_targets_per_uid = 3), saying so"
else fail "targets per user" "attached $ok, 4th: $out"; fi
for e in "${U[@]:4:3}" "${U[7]}"; do as "${e%%:*}" "$KPROFCTL" --socket "$SOCK" attach "${e#*:}" --freq 99 >/dev/null; done
# 7 of 8 slots are taken by users: the 8th is root's.
out=$(as 2 "$KPROFCTL" --socket "$SOCK" attach "${U[8]#*:}" --freq 99 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "kept for root" <<<"$out"; then
	pass "users cannot take the last of max_targets (kept for root)"
else fail "root's share of targets" "rc=$rc $out"; fi
check "root still attaches when users hold their whole share" ctl attach "${U[8]#*:}" --freq 99
# 2. Distinct frequencies per user (each frequency is a set of per-CPU events).
for e in "${U[@]}"; do ctl detach "${e#*:}" >/dev/null 2>&1; done
spawn 65534; F1=$SP; spawn 65534; F2=$SP; spawn 65534; F3=$SP
as 65534 "$KPROFCTL" --socket "$SOCK" attach "$F1" --freq 101 >/dev/null
as 65534 "$KPROFCTL" --socket "$SOCK" attach "$F2" --freq 103 >/dev/null
out=$(as 65534 "$KPROFCTL" --socket "$SOCK" attach "$F3" --freq 107 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "distinct frequencies" <<<"$out"; then
	pass "a user's third distinct frequency refused (max_freqs_per_uid = 2)"
else fail "frequencies per user" "rc=$rc $out"; fi
as 65534 "$KPROFCTL" --socket "$SOCK" attach "$F3" --freq 103 >/dev/null &&
	pass "the same user may use a frequency it already has" || fail "shared frequency" ""
ctl detach "$F1" "$F2" "$F3" >/dev/null 2>&1
for p in $F1 $F2 $F3; do ctl detach "$p" >/dev/null 2>&1; done

# 3. Kept profiles: a user keeps at most its quota, and never evicts root's.
spawn 0; R=$SP
ctl attach "$R" --freq 99 >/dev/null && ctl detach "$R" >/dev/null
rfile=$(ls "$TDIR/state/profiles/$R-"*.kprof 2>/dev/null | head -1)
for i in 1 2 3 4 5 6 7 8 9 10; do
	spawn 65534
	as 65534 "$KPROFCTL" --socket "$SOCK" attach "$SP" --freq 99 >/dev/null
	as 65534 "$KPROFCTL" --socket "$SOCK" detach "$SP" >/dev/null
	spawn 1
	as 1 "$KPROFCTL" --socket "$SOCK" attach "$SP" --freq 99 >/dev/null
	as 1 "$KPROFCTL" --socket "$SOCK" detach "$SP" >/dev/null
done
kept=$(ctl list --all --json | python3 -c "import json,sys,collections
c=collections.Counter(t['uid'] for t in json.load(sys.stdin)['targets'] if t['state']!='attached')
print(c[0], c[65534], c[1])")
read -r k0 k65534 k1 <<<"$kept"
if [ "$k0" -ge 1 ] && [ "$k65534" -le 2 ] && [ "$k1" -le 2 ] && [ -n "$rfile" ] && [ -e "$rfile" ]; then
	pass "kept profiles: root's survives 20 users' sessions; each user keeps at most 2 ($kept)"
else fail "kept profiles per user" "root/nobody/daemon kept: $kept, root's file '$rfile'"; fi

# 4. Exact-mode probes: a user's budget; root's attach of 30 functions fits in the fds.
# (--force: the binary's .data is a private writable mapping of the same file, never code.)
"$TDIR/funcs" & NB=$!; PIDS+=("$NB")
setpriv --reuid=65534 --regid=65534 --clear-groups "$TDIR/funcs" & NN=$!; PIDS+=("$NN")
wait_for 5 grep -qx funcs "/proc/$NN/comm"
wait_for 5 grep -qx funcs "/proc/$NB/comm"
perfmap "$NB" "$TDIR/funcs" 30
perfmap "$NN" "$TDIR/funcs" 30
out=$(as 65534 "$KPROFCTL" --socket "$SOCK" attach "$NN" --calls --force 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "limit 20 per user" <<<"$out"; then
	pass "exact mode over a user's probe budget refused (30 functions, max_probes_per_uid = 20)"
else fail "probe budget" "rc=$rc $out"; fi
soft=$(awk '/Max open files/ { print $4 }' "/proc/$DAEMON_PID/limits")
[ "$soft" -gt 128 ] && pass "kprofd raised its open files limit (soft 128 -> $soft)" ||
	fail "RLIMIT_NOFILE" "soft limit $soft"
if ctl attach "$NB" --calls --force >/dev/null 2>"$TDIR/calls.err"; then
	fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
	c0=$(cpu_ticks "$DAEMON_PID")
	ok=0
	for i in $(seq 40); do ctl status >/dev/null 2>&1 && ok=$((ok + 1)); done
	sleep 1
	c1=$(cpu_ticks "$DAEMON_PID")
	if [ "$fds" -gt 128 ] && [ "$ok" = 40 ] && [ $((c1 - c0)) -lt 80 ]; then
		pass "30 functions probed ($fds fds, past the soft limit kprofd started with): 40 clients served, no spin"
	else fail "many probes" "fds $fds, $ok of 40 status, cpu $((c1 - c0)) ticks"; fi
else fail "root exact mode of 30 functions" "$(cat "$TDIR/calls.err")"; fi
ctl detach "$NB" >/dev/null

# 5. Removing uprobes waits for the kernel (about a second for each of the parallel removals)
#    and the kernel makes a new probe in the same file wait for it: kprofd must not. The 60
#    probes just detached are still being removed: an attach in the same binary is refused at
#    once with the reason, and kprofctl waits and asks again; then the attach of 40 functions
#    and one the kernel refuses fails, and its 80 probes are removed off the loop. Status
#    requests are answered throughout.
"$TDIR/funcs" & NF=$!; PIDS+=("$NF")
wait_for 5 grep -qx funcs "/proc/$NF/comm"
perfmap "$NF" "$TDIR/funcs" 40 bad
(
	worst=0
	for i in $(seq 300); do
		[ -e "$TDIR/stop" ] && break
		t0=$(date +%s%N)
		timeout 60 "$KPROFCTL" --socket "$SOCK" status >/dev/null 2>&1
		t=$((($(date +%s%N) - t0) / 1000000))
		[ $t -gt $worst ] && worst=$t
		sleep 0.1
	done
	echo "$worst" >"$TDIR/worst"
) &
W=$!
out=$(timeout 120 "$KPROFCTL" --socket "$SOCK" attach "$NF" --calls --force 2>&1); rc=$?
sleep 3 # the 80 probes of the failed attach are being removed meanwhile
touch "$TDIR/stop"
wait "$W"
worst=$(cat "$TDIR/worst")
if grep -q "waiting for the kernel to remove" <<<"$out"; then
	pass "attach while the same code's probes are being removed: kprofd refuses, kprofctl waits"
else fail "attach during a removal" "rc=$rc: $out"; fi
if [ $rc -eq 1 ] && grep -q "zz_bad" <<<"$out" && [ "$worst" -lt 3000 ]; then
	pass "failing exact-mode attach of 41 functions refused; status waited at most $worst ms throughout"
else fail "failing exact-mode attach" "rc=$rc, status worst $worst ms: $out"; fi
ctl status >/dev/null && pass "kprofd serves after the failed attach" || fail "serves after" ""
# Let the removal end before kprofd stops (its exit would wait for the kernel instead).
wait_for 60 eval '[ "$(ls "/proc/$DAEMON_PID/fd" | wc -l)" -lt 100 ]'
finish
