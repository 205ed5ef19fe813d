#!/usr/bin/env bash
# The per-sample cost does not grow with the kept profiles (issue 34, item 1 and the
# complexity check; not a timing assert): a sample finds its target by PID in a hash table, and
# status --json counts the lookups and the hash-chain entries they looked at. A busy target
# attached first, then 400 kept profiles of other processes attached and detached after it
# (the newest first in the list a walk would take): the chain entries looked at per lookup stay
# under 2 with 0 and with 400 kept (attached targets come first in each chain; a walk of the
# list would look at ~400). Needs root (BPF).
# Not sanitized: 400 kept profiles made for a count; the lookup (daemon/lib/idxtab.c) runs
# sanitized in every test that samples, and in test_idxtab.
. "$(dirname "$0")/lib.sh"
N=400
cp "$(dirname "$0")/kpraw.py" "$TDIR/"
start_daemon --max-kept 1000 || { fail "daemon starts" "see log"; exit 1; }
steps() { ctl status --json | python3 -c "import json,sys; s = json.load(sys.stdin); print(s['lookups'], s['lookup_steps'], s['samples'])"; }
# per_lookup SECONDS: chain entries per lookup over that many seconds of sampling (x100).
per_lookup() {
	local a b
	a=($(steps)); sleep "$1"; b=($(steps))
	local dl=$((b[0] - a[0])) ds=$((b[1] - a[1])) dn=$((b[2] - a[2]))
	echo "$((ds * 100 / (dl > 0 ? dl : 1))) $dl $dn"
}
sh -c 'while :; do :; done' & BUSY=$!; PIDS+=("$BUSY")
ctl attach "$BUSY" --freq 999 >/dev/null || { fail "attach" "$(tail -2 "$TDIR/kprofd.log")"; exit 1; }
wait_for 20 at_least_samples "$BUSY" 200 || fail "busy target sampled" "$(ctl list)"
read -r r0 l0 n0 < <(per_lookup 3)
[ "$n0" -gt 100 ] && [ "$r0" -lt 200 ] && pass "0 kept: $((r0 / 100)).$((r0 % 100)) chain entries a lookup ($l0 lookups, $n0 samples)" ||
	fail "0 kept" "$r0/100 a lookup, $l0 lookups, $n0 samples"
# 400 kept profiles, each of another process, all attached after the busy one.
SL=()
for ((i = 0; i < N; i++)); do sleep 600 & SL+=("$!"); PIDS+=("$!"); done
python3 "$TDIR/kpraw.py" attach-detach "$SOCK" "${SL[@]}" || fail "attach/detach $N" "see above"
kept=$(ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['targets_kept'])")
[ "$kept" -ge "$N" ] && pass "$kept kept profiles" || fail "kept profiles" "$kept of $N"
read -r r1 l1 n1 < <(per_lookup 3)
[ "$n1" -gt 100 ] && [ "$r1" -lt 200 ] && pass "$kept kept: $((r1 / 100)).$((r1 % 100)) chain entries a lookup ($l1 lookups, $n1 samples)" ||
	fail "$kept kept" "$r1/100 a lookup, $l1 lookups, $n1 samples (a list walk: ~$kept)"
kill "${SL[@]}" 2>/dev/null
stop_daemon
finish
