#!/usr/bin/env bash
# Perf maps found and read by the rules: inside the target's mount and PID namespaces, owner
# checked, symlinks refused, re-read when the file grows after attach or is replaced.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# jit_top PID: the hottest JIT function's name ("" if none).
jit_top() {
	ctl report "$1" --json --top 0 | python3 -c "import json,sys
j=[e['function'] for e in json.load(sys.stdin)['entries'] if e['kind']=='jit']
print(j[0] if j else '')"
}
top_is() { [ "$(jit_top "$1")" = "$2" ]; }

# 1. A target in its own PID and mount namespaces with a private /tmp: its perf map is
#    /tmp/perf-1.map inside its root, invisible from the host's /tmp.
if unshare --mount --pid --fork --mount-proc true 2>/dev/null; then
	# The binary may live under /tmp, which the new tmpfs hides: keep it open on fd 3 and
	# exec it from there.
	unshare --mount --pid --fork --mount-proc sh -c \
		"mount -t tmpfs none /tmp && exec /proc/self/fd/3 --seconds 60" \
		3<"$MINIJIT" 2>"$TDIR/ns.err" &
	U=$!; PIDS+=("$U")
	wait_for 10 grep -q ready "$TDIR/ns.err"
	NP=$(pgrep -P "$U")
	if [ -n "$NP" ] && [ ! -e "/tmp/perf-$NP.map" ] && grep -q "NStgid:.*1$" "/proc/$NP/status"; then
		check "attach a namespaced target (host pid $NP, pid 1 inside)" ctl attach "$NP" --freq 499
		if wait_for 20 top_is "$NP" mj_hot; then pass "perf map found in the target's root and PID namespace"
		else fail "namespaced perf map" "$(ctl report "$NP" --top 5; grep "$NP" "$TDIR/kprofd.log")"; fi
		ctl list --json | grep -q "/proc/$NP/root/tmp/perf-1.map" && pass "perf map path reported" ||
			fail "perf map path reported" "$(ctl list --all --json)"
	else
		fail "namespaced minijit" "pid '$NP' $(cat "$TDIR/ns.err")"
	fi
	kill -9 "$U" "$NP" 2>/dev/null
else
	skip "namespaced perf map" "unshare --pid --mount not permitted here"
fi

# 2. A perf map owned by another user is ignored (with a log line) until it is fixed.
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
chown 12345 "/tmp/perf-$P.map"
check "attach with a foreign-owned perf map" ctl attach "$P" --freq 499
wait_for 20 at_least_samples "$P" 500
if [ -z "$(jit_top "$P")" ] && grep -q "owned by uid 12345" "$TDIR/kprofd.log"; then
	pass "foreign-owned perf map ignored, and said so"
else fail "foreign-owned perf map" "top=$(jit_top "$P") $(grep "$P" "$TDIR/kprofd.log")"; fi
chown 0 "/tmp/perf-$P.map"
if wait_for 20 top_is "$P" mj_hot; then pass "perf map read once its owner is right"
else fail "perf map after chown" "$(ctl report "$P" --top 5)"; fi
kill -9 "$P"

# 3. A symlink in place of the perf map is refused.
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
mv "/tmp/perf-$P.map" "$TDIR/real.map"
ln -s "$TDIR/real.map" "/tmp/perf-$P.map"
check "attach with a symlinked perf map" ctl attach "$P" --freq 499
wait_for 20 at_least_samples "$P" 500
if [ -z "$(jit_top "$P")" ] && grep -q "is a symbolic link" "$TDIR/kprofd.log"; then
	pass "symlinked perf map refused, and said so"
else fail "symlinked perf map" "top=$(jit_top "$P")"; fi
kill -9 "$P"; rm -f "/tmp/perf-$P.map"

# 4. The perf map is empty at attach time and written afterwards (a JIT that compiles later):
#    the new lines are read incrementally and the functions get their names.
start_minijit --seconds 60 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
cp "/tmp/perf-$P.map" "$TDIR/saved.map"
: >"/tmp/perf-$P.map"
check "attach with an empty perf map" ctl attach "$P" --freq 499
wait_for 20 at_least_samples "$P" 300
[ -z "$(jit_top "$P")" ] && pass "no JIT names while the map is empty" || fail "empty map" "$(jit_top "$P")"
head -c 20 "$TDIR/saved.map" >>"/tmp/perf-$P.map"     # a torn first line ...
sleep 1.5
tail -c +21 "$TDIR/saved.map" >>"/tmp/perf-$P.map"    # ... completed later
if wait_for 20 top_is "$P" mj_hot; then pass "lines appended after attach are read (torn line completed)"
else fail "appended perf map" "$(ctl report "$P" --top 5)"; fi
if ctl list --all --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid']==$P][0]
sys.exit(not (t['jit_symbols']==$(wc -l <"$TDIR/saved.map") and t['perfmap_bad_lines']==0))"; then
	pass "every JIT symbol of the map ($(wc -l <"$TDIR/saved.map")), 0 bad lines after the torn line"
else fail "perf map counts" "$(ctl list --all --json)"; fi

# 5. The map rewritten in place, as `jcmd PID Compiler.perfmap` does (truncate, write it all
#    again, the same first lines): read again from the start, not glued on at the old offset.
#    Not a bad line in sight.
[ "$(head -n 3 "$TDIR/saved.map" | wc -c)" -gt 64 ] || fail "fixture" "first 3 lines <= 64 bytes"
{
	head -n 3 "$TDIR/saved.map"
	for i in $(seq 1 40); do printf '%x 10 rewritten_fn_%d\n' $((0x10000000 + i * 16)) "$i"; done
	tail -n +4 "$TDIR/saved.map"
} >"$TDIR/rewritten.map"
cat "$TDIR/rewritten.map" >"/tmp/perf-$P.map" # O_TRUNC: the same inode
want=$(wc -l <"$TDIR/rewritten.map")
counts() { ctl list --all --json | python3 -c "import json,sys
t=[t for t in json.load(sys.stdin)['targets'] if t['pid']==$P][0]
print(t['jit_symbols'], t['perfmap_bad_lines'])"; }
rewritten() { [ "$(counts)" = "$want 0" ]; }
if wait_for 20 rewritten; then pass "perf map rewritten in place read again: $want symbols, 0 bad lines"
else fail "rewritten perf map" "symbols and bad lines: $(counts), want $want 0"; fi
finish
