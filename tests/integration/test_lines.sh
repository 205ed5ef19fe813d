#!/usr/bin/env bash
# Source lines and inlined frames in a pprof export (issue 32). build/hotline (-O2 -g) spends its
# time in the HOT line of mix(), an always_inline function inlined into spin():
#  - `go tool pprof -lines -top` of the export names hotline.c:HOT in mix (inline) first, and
#    spin as the function it was inlined into; the leaf locations are per sampled instruction
#    (several addresses, all inside spin's symbol);
#  - a stripped copy with its debug file (by build id, KPROF_DEBUG_DIR): the same; without: none;
#  - `report --lines` lists that line first, mix inlined into spin;
#  - `--no-lines`: the same samples, no file:line;
#  - a copy whose DWARF was overwritten with random bytes: the export still works, kprofd is
#    unharmed, and the profile's comments say how many addresses had lines;
#  - a helper that hangs, and one that dies after its start: each is killed or restarted within
#    the answer deadline, the export completes and says lines were not available.
# Needs root and go.
. "$(dirname "$0")/lib.sh"
if ! command -v go >/dev/null; then skip "lines" "go (golang-go) not installed"; exit 0; fi
export GOCACHE=$TDIR/gocache HOME=$TDIR
HOTLINE=$(readlink -f "$BUILD/hotline")
SRC=$(readlink -f tests/fixtures/lines/hotline.c)
HOT=$(grep -n "/\* HOT \*/" "$SRC" | cut -d: -f1)
[ -x "$HOTLINE" ] && [ -x "$BUILD/kprof-lines" ] || { fail "setup" "make all builds hotline and kprof-lines"; exit 1; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# profile EXE NAME: run EXE for up to 60 s, profile it until it has 400 samples; sets HP.
profile() {
	"$1" 60 >/dev/null &
	HP=$!
	PIDS+=("$HP")
	ctl attach "$HP" --freq 999 >/dev/null || { fail "$2: attach" "$(ctl list --all)"; return 1; }
	wait_for 40 at_least_samples "$HP" 400 || { fail "$2: samples" "$(ctl list --all)"; return 1; }
	ctl detach "$HP" >/dev/null
}

profile "$HOTLINE" hotline || { finish; exit 1; }
ctl export "$HP" -o "$TDIR/lines.pb.gz" 2>"$TDIR/export.err" || fail "export" "$(cat "$TDIR/export.err")"
go tool pprof -lines -top "$TDIR/lines.pb.gz" >"$TDIR/top.txt" 2>&1
first=$(grep -m1 -E "^ +[0-9.]+(ms|s|us) " "$TDIR/top.txt")
echo "$first" | grep -Eq " mix $SRC:$HOT \(inline\)$" &&
	pass "pprof -lines -top: the hot line first: mix $SRC:$HOT (inline)" ||
	fail "hot line" "$(head -12 "$TDIR/top.txt")"
ctl report "$HP" --lines --top 3 >"$TDIR/report.txt" 2>&1
sed -n 3p "$TDIR/report.txt" | grep -Eq "^ +[0-9]+ +[0-9.]+%  $SRC:$HOT  mix \(inlined into spin\)$" &&
	pass "report --lines: the hot line first, mix inlined into spin" ||
	fail "report --lines" "$(cat "$TDIR/report.txt")"
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
res("kprof lines: " in text and " not available" in text, "the comments say what lines it has",
    text[-600:])
PY

# A stripped copy and its separate debug file (found by build id): the same hot line.
STRIPPED=$TDIR/stripped
BID=$(readelf -n "$HOTLINE" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
mkdir -p "$TDIR/debug/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$HOTLINE" "$TDIR/debug/.build-id/${BID:0:2}/${BID:2}.debug"
strip -g -o "$STRIPPED" "$HOTLINE"
if profile "$STRIPPED" stripped; then
	KPROF_DEBUG_DIR=$TDIR/debug ctl export "$HP" -o "$TDIR/dbg.pb.gz" 2>"$TDIR/dbg.err"
	go tool pprof -lines -top "$TDIR/dbg.pb.gz" 2>&1 | grep -m1 -E "^ +[0-9.]+(ms|s|us) " |
		grep -Eq " mix $SRC:$HOT \(inline\)$" &&
		pass "a stripped executable, its debug file by build id: mix $SRC:$HOT (inline) first" ||
		fail "debug file" "$(go tool pprof -lines -top "$TDIR/dbg.pb.gz" 2>&1 | head -12)"
	ctl export "$HP" -o "$TDIR/nodbg.pb.gz" 2>/dev/null
	go tool pprof -lines -top "$TDIR/nodbg.pb.gz" 2>&1 | grep -q "hotline.c:$HOT" &&
		fail "stripped without its debug file" "has lines" ||
		pass "the stripped executable without its debug file: no lines"
fi

ctl export "$HP" --no-lines -o "$TDIR/nolines.pb.gz" 2>"$TDIR/export2.err" || fail "export --no-lines" "$(cat "$TDIR/export2.err")"
go tool pprof -lines -top "$TDIR/nolines.pb.gz" 2>&1 | grep -q "hotline.c:" &&
	fail "--no-lines" "file:line shown" || pass "--no-lines: no source lines"

# A copy with its DWARF sections overwritten with random bytes (its symbols intact).
EVIL=$TDIR/evil
cp "$HOTLINE" "$EVIL"
python3 - "$EVIL" <<'PY'
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
profile "$EVIL" evil && {
	ctl export "$HP" -o "$TDIR/evil.pb.gz" 2>"$TDIR/evil.err" &&
		go tool pprof -raw "$TDIR/evil.pb.gz" >"$TDIR/evil.raw" 2>&1 &&
		grep -q "kprof lines: " "$TDIR/evil.raw" &&
		pass "fuzzed DWARF: the export works ($(grep -o 'kprof lines: [^"]*' "$TDIR/evil.raw" | head -1))" ||
		fail "fuzzed DWARF export" "$(cat "$TDIR/evil.err")"
	ctl status >/dev/null && kill -0 "$DAEMON_PID" && pass "kprofd is unharmed" || fail "kprofd" "gone"
}

# Helpers that hang or die: killed, restarted, the export completes and says so.
printf '#!/bin/sh\necho R\nexec sleep 100\n' >"$TDIR/hang.sh"
printf '#!/bin/sh\necho R\nexit 3\n' >"$TDIR/die.sh"
chmod 755 "$TDIR/hang.sh" "$TDIR/die.sh"
for h in hang die; do
	if KPROF_LINES=$TDIR/$h.sh ctl export "$HP" -o "$TDIR/$h.pb.gz" 2>"$TDIR/$h.err" &&
		go tool pprof -raw "$TDIR/$h.pb.gz" >"$TDIR/$h.raw" 2>&1; then
		c=$(grep -o 'kprof lines: [^"]*' "$TDIR/$h.raw" | head -1)
		echo "$c" | grep -Eq "^kprof lines: 0 of [0-9]+ addresses resolved, [1-9][0-9]* not available.* [1-9][0-9]* helpers killed" &&
			pass "a helper that ${h}s: killed, the export says lines were not available ($c)" ||
			fail "$h helper" "$c"
	else fail "$h helper: export" "$(cat "$TDIR/$h.err")"; fi
done
finish
