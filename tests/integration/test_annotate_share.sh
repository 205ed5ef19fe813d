#!/usr/bin/env bash
# Annotate's copies of a file's code are shared by the targets of one owner (daemon/lib/
# codeshare.c): two processes of the same binary run by root, sampled at once, keep one copy of
# clock_loop's code (the native fixture's own, file-backed) between them, and `kprofctl status`
# counts the copy found; each annotation is whole (its per-instruction samples add up to its
# self samples in report) with its bytes kept from its samples, and both show the same bytes. A
# process of another owner (nobody) of the same binary finds none of root's copies: it reads
# and keeps its own (the copy was read under root's rights, not nobody's). Status also counts the
# names held once for the host.
# Needs root. About 15 s.
. "$(dirname "$0")/lib.sh"
CHECK=(python3 "$(dirname "$0")/annotate_check.py")
NATIVE=$BUILD/native
start_daemon || { fail "daemon starts" "see log"; exit 1; }
status_field() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
sampled() { ctl report "$1" --top 0 --json | grep -q '"function":"clock_loop"'; }

# nobody must be able to run the fixture: a copy in a directory anyone may enter.
BIN=$(mktemp -d /tmp/kprof-share.XXXXXX)
cp "$NATIVE" "$BIN/native" && chmod 755 "$BIN" "$BIN/native"
"$BIN/native" --ms 60000 2>"$TDIR/a.err" &
A=$!
"$BIN/native" --ms 60000 2>"$TDIR/b.err" &
B=$!
PIDS+=("$A" "$B")
check "attach the first process" ctl attach "$A" --freq 499
check "attach the second process of the same binary" ctl attach "$B" --freq 499
wait_for 60 sampled "$A" && wait_for 60 sampled "$B" ||
	fail "clock_loop sampled in both" "$(ctl report "$A" --top 3 2>&1 | tail -3)"
# Let both run on a little: more addresses, more drains.
found_some() { [ "$(status_field shared_code_found)" -ge 1 ]; }
wait_for 60 found_some ||
	fail "a copy found" "$(ctl status | grep -i 'code copies')"
check "detach the first" ctl detach "$A"
check "detach the second" ctl detach "$B"
found=$(status_field shared_code_found) copies=$(status_field shared_code_copies)
[ "$found" -ge 1 ] && [ "$copies" -ge 1 ] &&
	ctl status | grep -q "^code copies: $copies of files' code shared by a owner's targets, .* found $found times" &&
	pass "root's two processes share their copies of the binary's code: $copies held, found $found times (status says so)" ||
	fail "shared copies" "found=$found copies=$copies $(ctl status | grep -i 'code copies')"
# The names too are held once for the host (strpool.h), and status says how many.
names=$(status_field shared_names)
[ "$names" -gt 0 ] && [ "$(status_field shared_names_full)" -eq 0 ] &&
	ctl status | grep -q "^symbols: .* [1-9][0-9]* names held once for the host, 0 not (cap reached: copied)" &&
	pass "status counts the names held once for the host: $names, none refused" ||
	fail "shared names in status" "$(ctl status | grep '^symbols')"
for p in "$A" "$B"; do
	ctl report "$p" --top 0 --json >"$TDIR/r.$p.json"
	ctl annotate "$p" clock_loop --json >"$TDIR/a.$p.json" || fail "annotate $p" "$(ctl annotate "$p" clock_loop 2>&1)"
	"${CHECK[@]}" sums "$TDIR/r.$p.json" "pid $p" "$TDIR/a.$p.json" || FAILS=$((FAILS + 1))
done
python3 - "$TDIR/a.$A.json" "$TDIR/a.$B.json" <<'PY' && pass "both annotations show the same bytes, kept at their samples" || fail "same bytes" "see above"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ka = [(i["address"] - a["start"], i["bytes"]) for i in a["insns"]]
kb = [(i["address"] - b["start"], i["bytes"]) for i in b["insns"]]
ok = a["captured_bytes"] > 0 and b["captured_bytes"] > 0 and ka == kb and a["read_now_bytes"] == 0
print(("" if ok else "FAIL: ") + f"captured {a['captured_bytes']} and {b['captured_bytes']} bytes, "
      f"{len(ka)} instructions, read now {a['read_now_bytes']}/{b['read_now_bytes']}")
sys.exit(0 if ok else 1)
PY

# Another owner: none of root's copies is found for it.
setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/native" --ms 60000 2>"$TDIR/c.err" &
C=$!
PIDS+=("$C")
check "attach nobody's process of the same binary" ctl attach "$C" --freq 499
wait_for 60 sampled "$C" || fail "clock_loop sampled (nobody)" "$(ctl report "$C" --top 3 2>&1 | tail -3)"
check "detach nobody's" ctl detach "$C"
found2=$(status_field shared_code_found) copies2=$(status_field shared_code_copies)
ctl report "$C" --top 0 --json >"$TDIR/r.c.json"
ctl annotate "$C" clock_loop --json >"$TDIR/a.c.json" &&
	[ "$found2" -eq "$found" ] && [ "$copies2" -gt "$copies" ] &&
	python3 -c "import json,sys; a=json.load(open('$TDIR/a.c.json')); sys.exit(0 if a['captured_bytes'] > 0 else 1)" &&
	pass "nobody's process found none of root's copies (found $found2, as before) and kept its own ($copies -> $copies2)" ||
	fail "another owner" "found $found -> $found2, copies $copies -> $copies2"
"${CHECK[@]}" sums "$TDIR/r.c.json" "nobody's" "$TDIR/a.c.json" || FAILS=$((FAILS + 1))
kill "$A" "$B" "$C" 2>/dev/null
rm -rf "$BIN"
finish
