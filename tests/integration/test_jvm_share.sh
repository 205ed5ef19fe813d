#!/usr/bin/env bash
# Fair shares of the JVM perf-map exchanges (security issue 25, item 9). kprofd runs at most 4
# exchanges with JVMs at once; before, one user's JVMs that never answer held all 4 (each until
# its 10 s deadline) and root's JVM waited: asked 1 s after its attach at best, 10 s here. Now
# one uid runs at most 2, and uids refused meanwhile take turns (daemon/symbols/jvmattach.c).
# The attack, with real JVMs: nobody starts 4 JVMs, attaches them (kprofd asks each for its map:
# their attach listeners start), detaches them, stops them (SIGSTOP: a listener that takes the
# connection and the request and never replies), and attaches them again: each exchange now waits
# for its deadline. Checked while those wait:
#   1. nobody's 4 new sessions started 2 exchanges, not 4 (the others wait for its share);
#   2. root attaches its JVM: asked at once (its session counts 1 exchange right after the
#      attach; before, 0: all 4 were taken), and named: its map answered.
# Needs root, java, javac, setpriv.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
	skip "JVM shares" "no java or javac (make deps installs openjdk-17-jdk-headless)"
	exit 0
fi
JCLS=$(realpath -m "$BUILD/jvm")
if [ ! -f "$JCLS/Hot.class" ] || [ "$ROOT/tests/fixtures/jvm/Hot.java" -nt "$JCLS/Hot.class" ]; then
	mkdir -p "$JCLS" && javac -d "$JCLS" "$ROOT/tests/fixtures/jvm/Hot.java" ||
		{ fail "javac Hot.java" "see above"; exit 1; }
fi
chmod -R a+rX "$JCLS"
JVMS=()
jvm_cleanup() {
	local p
	for p in "${JVMS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -f "/tmp/.java_pid$p" "/tmp/.attach_pid$p" "/tmp/perf-$p.map" /tmp/hsperfdata_*/"$p"
	done
}
trap 'jvm_cleanup; hostile_cleanup' EXIT
JOPTS=(-Xmx32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto)
start_daemon_setsid || { fail "daemon starts" "see log"; exit 1; }

# jvm_as WHO DIR: a JVM (Hot) in DIR, as nobody or root, in the background; its pid in JV_PID.
jvm_as() {
	local who=$1 dir=$2
	mkdir -p "$dir"
	chown "$who" "$dir"
	if [ "$who" = nobody ]; then
		(cd "$dir" && exec "${AS_NOBODY[@]}" java "${JOPTS[@]}" -cp "$JCLS" Hot 300 >"$dir/out" 2>"$dir/err") &
	else
		(cd "$dir" && exec java "${JOPTS[@]}" -cp "$JCLS" Hot 300 >"$dir/out" 2>"$dir/err") &
	fi
	JV_PID=$!
	PIDS+=("$JV_PID")
	JVMS+=("$JV_PID")
}
NJ=()
for i in 1 2 3 4; do
	jvm_as nobody "$NB/j$i"
	NJ+=("$JV_PID")
done
jvm_as root "$TDIR/root"
RJ=$JV_PID
for i in 1 2 3 4; do
	wait_for 90 grep -q ready "$NB/j$i/err" || { fail "nobody's JVM $i starts" "$(cat "$NB/j$i/err")"; exit 1; }
done
wait_for 90 grep -q ready "$TDIR/root/err" || { fail "root's JVM starts" "$(cat "$TDIR/root/err")"; exit 1; }

# nobody's JVMs, asked once: their attach listeners run.
for p in "${NJ[@]}"; do nctl attach "$p" --freq 49 >/dev/null || fail "nobody attaches $p" ""; done
for p in "${NJ[@]}"; do
	wait_for 60 tfield_ge "$p" jvm_map_answers 1 || fail "JVM $p answers first" "$(tfield "$p" jvm_note)"
	[ -S "/tmp/.java_pid$p" ] || fail "JVM $p listens" "no /tmp/.java_pid$p"
done
for p in "${NJ[@]}"; do nctl detach "$p" >/dev/null; kill -STOP "$p"; done

# The attack: stopped JVMs attached again; each exchange waits for its 10 s deadline.
for p in "${NJ[@]}"; do nctl attach "$p" --freq 49 >/dev/null || fail "nobody attaches $p again" ""; done
t0=$(date +%s%N)
check "root attaches its JVM" ctl attach "$RJ" --freq 99
rasks=$(target_json "$RJ" jvm_map_asks)
# newest sessions of nobody's JVMs: asks started, and none over yet (still in flight)
read -r nasks nover < <(ctl list --all --json | python3 -c "import json,sys
pids = set(map(int, '${NJ[*]}'.split()))
new = {}
for t in json.load(sys.stdin)['targets']:
    if t['pid'] in pids and t['state'] == 'attached': new[t['pid']] = t
print(sum(t['jvm_map_asks'] for t in new.values()), sum(t['jvm_map_answers'] + t['jvm_map_failures'] for t in new.values()))")
echo "while nobody's stopped JVMs wait: nobody's sessions started $nasks exchanges ($nover over), root's $rasks"
if [ "$nover" = 0 ]; then
	[ "$nasks" = 2 ] && pass "nobody's 4 JVMs that never answer hold 2 exchanges, its share" ||
		fail "nobody's share" "$nasks exchanges started"
	[ "$rasks" = 1 ] && pass "root's JVM asked at once, while nobody's wait" ||
		fail "root's JVM asked at once" "asks $rasks right after its attach"
else
	skip "shares" "nobody's exchanges were over before the check (a very slow machine): $nover"
fi
if wait_for 60 tfield_ge "$RJ" jvm_map_answers 1; then
	ms=$((($(date +%s%N) - t0) / 1000000))
	pass "root's JVM wrote its map $ms ms after its attach (before the fix: about 10 s)"
else
	fail "root's JVM answered" "$(tfield "$RJ" jvm_note); $(grep "pid $RJ" "$TDIR/kprofd.log" | tail -3)"
fi
daemon_ok && pass "kprofd answers" || fail "kprofd answers" "$(tail -5 "$TDIR/kprofd.log")"
finish
