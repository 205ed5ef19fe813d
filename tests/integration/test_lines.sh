#!/usr/bin/env bash
# Source lines and inlined frames (issue 32), resolved by kprofd through its sandboxed
# kprof-lines helpers. build/hotline (-O2 -g) spends about two thirds of its time in the HOT line
# of mix(), an always_inline function inlined into spin(), and one third in the WARM line of warm():
#  - the pprof endpoint (before anything is cached: its answer waits for kprof-lines) and an
#    export: `go tool pprof -lines -top` names hotline.c:HOT in mix (inline) first, spin as the
#    function it was inlined into; the leaf locations are per sampled instruction (several
#    addresses, all inside spin's symbol); the mapping says it has lines and inline frames;
#  - caller frames at their call sites (return address - 1) with the frames inlined there: mix in
#    spin, called from step (inlined) in main at the STEP line (go tool pprof -lines -traces);
#  - report --lines: that line first, mix inlined into spin; its share and WARM's within 10
#    points of `perf report --sort srcline` over the same seconds;
#  - the cache: a second export answers every address from kprofd's cache (no new helper);
#  - export --no-lines: the same samples, no file:line;
#  - a copy whose DWARF was overwritten with random bytes, and one whose .debug_info is 32 MiB
#    of random bytes: the export works, kprofd is unharmed, the comments say what lines it has;
#  - helpers that hang and that die after their start ([lines] helper, reloaded): killed within
#    the answer deadline, the export completes and says lines were not available (the target
#    detached, its symbols dropped: its files found again by build id).
# Separate debug files, and refused ones: test_lines_debug.sh. Needs root, go, cc and perf
# (for the comparison).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lines_lib.sh"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
CONF_HEAD="[http]\nlisten = 127.0.0.1:$PORT\ntoken_file = $TDIR/token\nmax_seconds = 30\n"
lines_conf
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }

profile "$HOTLINE" hotline || { finish; exit 1; }
# perf over a few seconds of the same run, while kprof samples it too.
perf record -q -N -e cpu-clock -F 499 -p "$HP" -o "$TDIR/perf.data" -- sleep 3 >/dev/null 2>&1 &
PERF=$!
# The pprof endpoint first (nothing cached yet): the next 2 s of the running process, with its
# lines, resolved while the answer waits (at most 5 s: what is still being resolved then says
# "not available"; under ASan, libc's debug file has taken longer).
curl -s --max-time 30 -H "Authorization: Bearer $(cat "$TDIR/token")" -o "$TDIR/http.pb.gz" \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2&pid=$HP"
c=$(comment "$TDIR/http.pb.gz")
first_line "$TDIR/http.pb.gz" | grep -Eq " mix $SRC:$HOT \(inline\)$" &&
	echo "$c" | grep -Eq "^kprof lines: [1-9][0-9]* of [0-9]+ addresses resolved, [0-9]+ not available, [0-9]+ without a line \(0 from the cache; kprof-lines helpers: [1-9][0-9]* started, 0 killed" &&
	pass "pprof endpoint: the hot line first: mix $SRC:$HOT (inline) ($c)" ||
	fail "pprof endpoint lines" "$c $(go tool pprof -lines -top "$TDIR/http.pb.gz" 2>&1 | head -12)"
ctl export "$HP" -o "$TDIR/lines.pb.gz" 2>"$TDIR/export.err" || fail "export" "$(cat "$TDIR/export.err")"
first_line "$TDIR/lines.pb.gz" | grep -Eq " mix $SRC:$HOT \(inline\)$" &&
	pass "pprof -lines -top: the hot line first: mix $SRC:$HOT (inline)" ||
	fail "hot line" "$(go tool pprof -lines -top "$TDIR/lines.pb.gz" 2>&1 | head -12)"
go tool pprof -raw "$TDIR/lines.pb.gz" >"$TDIR/raw.txt" 2>&1
python3 - "$TDIR/raw.txt" "$HOTLINE" "$SRC" "$HOT" <<'PY'
import re, subprocess, sys
raw, exe, src, hot = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(raw).read()
def res(ok, msg, why=""):
    print(("PASS: " if ok else "FAIL: ") + msg + ("" if ok else f": {why}"))
locs = text.split("Locations")[1].split("Mappings")[0]
# A location with its inlined frame: "ID: 0xADDR M=1 mix SRC:HOT s=0" then "spin SRC:LINE s=0".
hits = re.findall(r"^\s+\d+: (0x[0-9a-f]+) M=1 mix " + re.escape(src) + ":" + hot +
                  r" s=\d+\n\s+spin " + re.escape(src) + r":\d+ s=\d+", locs, re.M)
res(len(hits) >= 2, f"{len(hits)} per-instruction locations at {src}:{hot}, mix inlined into spin",
    locs[:1500])
m = re.search(r"^\d+: (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) " + re.escape(exe) + r" \S+ (\S+)$",
              text.split("Mappings")[1], re.M)
res(m and "[FL]" in m.group(4) and "[LN]" in m.group(4) and "[IN]" in m.group(4),
    "the executable's mapping says file names, lines and inline frames", m and m.group(0))
if m and hits:
    start, off = int(m.group(1), 16), int(m.group(3), 16)
    nm = subprocess.run(["nm", "-S", exe], capture_output=True, text=True).stdout
    sym = re.search(r"^([0-9a-f]+) ([0-9a-f]+) [tT] spin$", nm, re.M)
    lo = int(sym.group(1), 16); hi = lo + int(sym.group(2), 16)
    # PIE: the first PT_LOAD at vaddr 0, so the ELF address is the runtime one minus start - off.
    inside = all(lo <= int(a, 16) - start + off < hi for a in hits)
    res(inside, f"each of those addresses lies in spin [{lo:#x}, {hi:#x})", hits[:5])
PY
# Caller frames at their call sites (return address - 1), with the frames inlined there: main
# called spin and warm from step(), inlined into main at STEP.
go tool pprof -lines -traces "$TDIR/lines.pb.gz" >"$TDIR/traces.txt" 2>&1
python3 - "$TDIR/traces.txt" "$SRC" "$HOT" "$WARM" "$(grep -n '/\* CALL spin \*/' "$SRC" | cut -d: -f1)" \
	"$(grep -n '/\* CALL warm \*/' "$SRC" | cut -d: -f1)" "$(grep -n '/\* STEP \*/' "$SRC" | cut -d: -f1)" <<'PY'
import re, sys
text, src, hot, warm, cspin, cwarm, step = open(sys.argv[1]).read(), *sys.argv[2:]
def ms(v):
    n, u = re.match(r"([0-9.]+)(\w+)", v).groups()
    return float(n) * {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[u]
want = {"spin": [f"mix {src}:{hot} (inline)", "spin ", f"step {src}:{cspin} (inline)", f"main {src}:{step}"],
        "warm": [f"warm {src}:{warm}", f"step {src}:{cwarm} (inline)", f"main {src}:{step}"]}
got = {"spin": 0.0, "warm": 0.0}
total = {"spin": 0.0, "warm": 0.0}
for block in text.split("-----------+")[1:]:
    frames = [l.strip() for l in block.splitlines() if l.startswith(" ") and not re.match(r"\s+\w+:\s", l)]
    if not frames:
        continue
    m = re.match(r"([0-9.]+\w+)\s+(.*)", frames[0])
    if not m:
        continue
    t, stack = ms(m.group(1)), [m.group(2)] + frames[1:]
    for k, w in want.items():
        if stack[0].startswith(w[0].split()[0] + " " + src + ":" + (hot if k == "spin" else warm)):
            total[k] += t
            if all(any(f.startswith(x) for f in stack[i:i + 1]) for i, x in enumerate(w)):
                got[k] += t
for k in want:
    ok = total[k] > 0 and got[k] >= 0.9 * total[k]
    print(("PASS: " if ok else "FAIL: ") + f"{k}'s hot line: {got[k]:.0f} of {total[k]:.0f} ms with its caller at its call site: " +
          " <- ".join(want[k][1:]) + ("" if ok else ": " + text[:1500].replace("\n", " | ")))
PY
c=$(comment "$TDIR/lines.pb.gz")
echo "$c" | grep -Eq "^kprof lines: [1-9][0-9]* of [0-9]+ addresses resolved, 0 not available, [0-9]+ without a line \([1-9][0-9]* from the cache; kprof-lines helpers: [0-9]+ started, 0 killed" &&
	pass "the export's comments say what the lines resolver did ($c)" || fail "lines comment" "$c"

# report --lines, and perf's srcline shares of the same process over those seconds.
wait "$PERF"
ctl report "$HP" --lines --top 3 >"$TDIR/report.txt" 2>&1
sed -n 3p "$TDIR/report.txt" | grep -Eq "^ +[0-9]+ +[0-9.]+%  $SRC:$HOT  mix \(inlined into spin\)$" &&
	pass "report --lines: the hot line first, mix inlined into spin" ||
	fail "report --lines" "$(cat "$TDIR/report.txt")"
perf report -i "$TDIR/perf.data" --sort srcline --stdio -q --no-children 2>/dev/null >"$TDIR/perf.txt"
for l in HOT WARM; do
	n=${!l}
	k=$(awk -v f="$SRC:$n" '$3 == f { sub("%", "", $2); print $2 }' "$TDIR/report.txt")
	[ -z "$k" ] && k=$(ctl report "$HP" --lines | awk -v f="$SRC:$n" '$3 == f { sub("%", "", $2); print $2 }')
	p=$(awk -v f="hotline.c:$n" '$2 == f { sub("%", "", $1); print $1 }' "$TDIR/perf.txt")
	python3 -c "import sys; sys.exit(0 if abs(float('${k:-0}') - float('${p:-0}')) <= 10 and float('${p:-0}') > 0 else 1)" &&
		pass "$l line share: kprof $k%, perf report --sort srcline $p% (within 10 points)" ||
		fail "$l share vs perf" "kprof '$k' perf '$p': $(head -5 "$TDIR/perf.txt")"
done

# The cache: once detached (no new addresses), an export again: every address from kprofd's
# cache, none asked of a helper.
ctl detach "$HP" >/dev/null
ctl export "$HP" -o "$TDIR/once.pb.gz" 2>/dev/null
ctl export "$HP" -o "$TDIR/again.pb.gz" 2>"$TDIR/again.err" || fail "export again" "$(cat "$TDIR/again.err")"
c=$(comment "$TDIR/again.pb.gz")
read -r asked cached <<<"$(echo "$c" | sed -n 's/^kprof lines: [0-9]* of \([0-9]*\) .*(\([0-9]*\) from the cache.*/\1 \2/p')"
[ -n "${asked:-}" ] && [ "$cached" = "$asked" ] && [ "$cached" -ge 1 ] &&
	echo "$c" | grep -q "helpers: 0 started" &&
	pass "a second export: $cached of $asked addresses from kprofd's cache, no new helper" ||
	fail "cache" "$c"
# status: the cache's entries (one per file and address; an export counts an address once per
# place it is asked for, so it can ask more than there are entries), its bytes within the bound.
ctl status --json | python3 -c "import json,sys
d=json.load(sys.stdin)
ok=d['lines_cache_entries'] >= 1 and 0 < d['lines_cache_bytes'] <= d['lines_cache_max_bytes'] == 32 << 20 and d['lines_helpers_started'] >= 1
print(('PASS: ' if ok else 'FAIL: ') + 'status: the lines cache holds %d entries, %d of %d bytes; %d helpers started' % (d['lines_cache_entries'], d['lines_cache_bytes'], d['lines_cache_max_bytes'], d['lines_helpers_started']))"

ctl export "$HP" --no-lines -o "$TDIR/nolines.pb.gz" 2>"$TDIR/export2.err" || fail "export --no-lines" "$(cat "$TDIR/export2.err")"
go tool pprof -lines -top "$TDIR/nolines.pb.gz" 2>&1 | grep -q "hotline.c:" &&
	fail "--no-lines" "file:line shown" || pass "--no-lines: no source lines"

# export_ok NAME FILE: the export of $HP into FILE works, kprofd answers after it.
export_ok() {
	if ctl export "$HP" -o "$2" 2>"$TDIR/$1.err" && [ -n "$(comment "$2")" ]; then
		pass "$1: the export works ($(comment "$2"))"
	else fail "$1 export" "$(cat "$TDIR/$1.err")"; fi
	ctl status >/dev/null && kill -0 "$DAEMON_PID" && pass "$1: kprofd is unharmed" || fail "$1: kprofd" "gone"
}

# DWARF sections overwritten with random bytes (symbols intact).
build evil
python3 - "$TDIR/evil" <<'PY'
import random, re, subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
rnd = random.Random(32)
with open(path, "r+b") as f:
    for m in re.finditer(r"\] (\.debug_\w+)\s+\w+\s+[0-9a-f]+ ([0-9a-f]+) ([0-9a-f]+)", out):
        off, size = int(m.group(2), 16), int(m.group(3), 16)
        f.seek(off + 4)
        f.write(bytes(rnd.randrange(256) for _ in range(max(0, size - 4))))
PY
profile "$TDIR/evil" evil && { export_ok "fuzzed DWARF" "$TDIR/evil.pb.gz"; ctl detach "$HP" >/dev/null; }
# A .debug_info of 32 MiB of random bytes.
build huge
head -c $((32 << 20)) /dev/urandom >"$TDIR/huge.blob"
objcopy --update-section .debug_info="$TDIR/huge.blob" "$TDIR/huge" 2>/dev/null
profile "$TDIR/huge" huge && { export_ok "32 MiB of garbage DWARF" "$TDIR/huge.pb.gz"; ctl detach "$HP" >/dev/null; }

# Helpers that hang or die: killed, restarted, the export completes and says so.
printf '#!/bin/sh\necho R\nexec sleep 100\n' >"$TDIR/hang.sh"
printf '#!/bin/sh\necho R\nexit 3\n' >"$TDIR/die.sh"
chmod 755 "$TDIR/hang.sh" "$TDIR/die.sh"
profile "$HOTLINE" hotline2 && ctl detach "$HP" >/dev/null
for h in hang die; do
	lines_reload "helper = $TDIR/$h.sh"
	if ctl export "$HP" -o "$TDIR/$h.pb.gz" 2>"$TDIR/$h.err"; then
		c=$(comment "$TDIR/$h.pb.gz")
		echo "$c" | grep -Eq "^kprof lines: 0 of [0-9]+ addresses resolved, [1-9][0-9]* not available.* [1-9][0-9]* killed" &&
			pass "a helper that ${h}s: killed, the export says lines were not available ($c)" ||
			fail "$h helper" "$c"
	else fail "$h helper: export" "$(cat "$TDIR/$h.err")"; fi
done
ctl status >/dev/null && kill -0 "$DAEMON_PID" && pass "kprofd is unharmed by its helpers" || fail "kprofd" "gone"
finish
