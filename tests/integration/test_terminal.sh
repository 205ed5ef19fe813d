#!/usr/bin/env bash
# Terminal injection: a target names its JIT functions, and kprofctl often runs as root in a
# terminal. minijit's perf map is rewritten so that every name carries ESC [ 31m, an OSC 52
# clipboard write (ESC ] 52 ; c ; base64 BEL), the UTF-8 C1 CSI (C2 9B), a raw 8-bit CSI (9B), a
# raw FF and a valid é; then every verb that prints names or messages quoting them is run, its
# stdout and stderr captured, and checked: strict UTF-8, no control character but '\n' and '\t'
# (so no ESC, BEL, 9B or C1), JSON that parses and gives the names back, '?' in text where the
# bad bytes were, é kept. Needs root (a real kprofd, BPF, uprobes).
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
OUT=$TDIR/out
mkdir -p "$OUT"

PRE=$'\e[31m'
POST=$'\e]52;c;aGVsbG8=\a\xc2\x9b\x9b\xff\xc3\xa9'
# evil_map PID: every name NAME of the target's perf map becomes PRE NAME POST (a new file, as a
# JIT writing its map would: read at attach).
evil_map() {
	local map=/tmp/perf-$1.map a b n
	while read -r a b n; do printf '%s %s %s\n' "$a" "$b" "$PRE$n$POST"; done <"$map" >"$map.tmp"
	mv "$map.tmp" "$map"
}
# run NAME CMD...: CMD's stdout and stderr (merged) in $OUT/NAME, its exit status in $OUT/NAME.rc.
run() {
	local name=$1
	shift
	"$@" >"$OUT/$name" 2>&1
	echo $? >"$OUT/$name.rc"
}

start_minijit --seconds 60 --paths 10 --cleanup || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
evil_map "$P"
ctl attach "$P" --freq 999 >/dev/null 2>&1 || fail "attach" "$(ctl attach "$P" 2>&1)"
report_has_hot() { ctl report "$P" --top 0 | grep -aq "mj_hot"; }
wait_for 20 report_has_hot || fail "hostile names sampled" "$(ctl report "$P" --top 5 2>&1 | cat -v)"

# A target whose comm (its executable's name, 15 bytes) is hostile too.
EVCOMM=$'\e]52;c;aGk\a\xc2\x9b\x9b\xff'
cp /bin/sleep "$TDIR/$EVCOMM"
"$TDIR/$EVCOMM" 60 &
C=$!
PIDS+=("$C")
wait_for 10 grep -aq aGk "/proc/$C/comm" || fail "hostile comm" "$(cat -v "/proc/$C/comm")"
run attach.comm ctl attach "$C"

run report ctl report "$P" --top 0
run report.json ctl report "$P" --top 0 --json
run folded ctl folded "$P"
run folded.json ctl folded "$P" --json
run hcct ctl hcct "$P" --phi 0.01
run hcct.json ctl hcct "$P" --phi 0.01 --json
run list ctl list --all
run list.json ctl list --all --json
run status ctl status
run top.json ctl top "$P" --json --iterations 1 --interval 500
run export.json ctl export "$P" --format json -o -
run export.folded ctl export "$P" --format folded -o -
# Error messages that quote a name: an unknown function given on the command line ...
run paths.unknown ctl paths "$P" $'\e]52;c;aGk=\a\xc2\x9b\x9b\xff' --duration 0.3
# ... and a real one: the progress line, the text and JSON results, --show.
MJP=$PRE"mj_paths"$POST
run paths ctl paths "$P" "$MJP" --duration 0.5 --k 2
run paths.show ctl paths "$P" --show
run paths.json ctl paths "$P" --show --json
# attach --calls refused for JIT code in anonymous memory: the message names a function.
start_minijit --anon --seconds 60 --cleanup || { fail "minijit --anon starts" ""; exit 1; }
A=$MJ_PID
evil_map "$A"
run attach.calls ctl attach "$A" --calls
# The ncurses screen, through a pseudo-terminal (its own escape sequences are allowed there).
if command -v script >/dev/null; then
	# 160 columns: the hostile name whole on the screen (a narrow one elides its middle).
	LANG=C.UTF-8 TERM=xterm script -qec \
		"stty cols 160 rows 40; $KPROFCTL --socket $SOCK top $P --iterations 2 --interval 300" \
		"$OUT/top.screen" >/dev/null 2>&1 </dev/null
	echo $? >"$OUT/top.screen.rc"
else
	skip "top screen" "script(1) not installed"
fi
run detach ctl detach "$P"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
PRE, POST = "\x1b[31m", "\x1b]52;c;aGVsbG8=\x07\u009b\ufffd\ufffd\u00e9"
TEXT_POST = "?]52;c;aGVsbG8=????\u00e9"  # BEL, C2 9B, 9B, FF: one '?' each
# Folded stacks: kprofd itself writes ':' for ';' and '?' for C0 controls in names.
FOLDED_POST = "?]52:c:aGVsbG8=????\u00e9"
FOLDED_JSON = "?[31mmj_hot?]52:c:aGVsbG8=?\u009b\ufffd\ufffd\u00e9"
ok = True

def res(good, name, why=""):
    global ok
    ok &= good
    print(f"PASS: {name}" if good else f"FAIL: {name}: {why}")

def read(name):
    with open(os.path.join(out, name), "rb") as f:
        return f.read()

def strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)

def rc(name):
    with open(os.path.join(out, name + ".rc")) as f:
        return int(f.read())

# (file, expected exit status, expected text in the output or None)
cases = [
    ("report", 0, "?[31mmj_hot" + TEXT_POST),
    ("report.json", 0, None),
    ("folded", 0, "?[31mmj_hot" + FOLDED_POST),
    ("folded.json", 0, None),
    ("hcct", 0, "?[31mmj_hot" + TEXT_POST),
    ("hcct.json", 0, None),
    ("list", 0, "?]52;c;aGk????"),
    ("list.json", 0, None),
    ("status", 0, None),
    ("top.json", 0, None),
    ("export.json", 0, None),
    ("export.folded", 0, "?[31mmj_hot" + FOLDED_POST),
    ("paths.unknown", 1, "?]52;c;aGk=????"),
    ("paths", 0, "tracing the paths of ?[31mmj_paths" + TEXT_POST),
    ("paths.show", 0, "Paths of ?[31mmj_paths" + TEXT_POST),
    ("paths.json", 0, None),
    ("attach.calls", 1, "?[31mmj_"),
    ("detach", 0, None),
    ("attach.comm", 0, "?]52;c;aGk????"),
]
for name, want_rc, want in cases:
    data = read(name)
    why = []
    if rc(name) != want_rc:
        why.append(f"exit status {rc(name)}, not {want_rc}")
    for b, what in ((0x1b, "ESC"), (0x07, "BEL"), (0x9b, "raw 0x9B")):
        if b in data:
            why.append(f"{what} at byte {data.index(b)}")
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        why.append(f"not UTF-8: {e}")
        text = data.decode("utf-8", errors="replace")
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    if bad:
        why.append(f"control characters {sorted(set(hex(ord(c)) for c in bad))}")
    if want and want not in text:
        why.append(f"{want!r} not in {text[:300]!r}")
    if name.endswith(".json"):
        try:
            docs = [json.loads(l) for l in data.splitlines()] if name == "top.json" \
                else [json.loads(data)]
        except ValueError as e:
            why.append(f"JSON does not parse: {e}")
            docs = []
        # The names come back whole: controls as such, bad bytes as U+FFFD.
        whole = FOLDED_JSON if name == "folded.json" else \
            PRE + ("mj_paths" if name == "paths.json" else "mj_hot") + POST
        names = set(strings(docs))
        if name == "list.json":
            whole = "\x1b]52;c;aGk\x07\u009b\ufffd\ufffd"
        if docs and whole not in names:
            why.append(f"{whole!r} not among {sorted(n for n in names if 'mj_' in n)[:3]!r}")
    res(not why, f"{name}: no terminal controls, valid UTF-8" +
        (", JSON parses" if name.endswith(".json") else ""), "; ".join(why))

# The ncurses screen: its own ESC [ sequences, but no OSC, no C1, no invalid UTF-8.
if os.path.exists(os.path.join(out, "top.screen")):
    data, why = read("top.screen"), []
    for seq, what in ((b"\x1b]", "OSC (ESC ])"), (b"\x07", "BEL"), (b"\x1b[31m", "ESC [31m")):
        if seq in data:
            why.append(f"{what} at byte {data.index(seq)}")
    try:
        text = data.decode("utf-8", errors="strict")
        if any(0x80 <= ord(c) <= 0x9f for c in text):
            why.append("C1 control")
    except UnicodeDecodeError as e:
        why.append(f"not UTF-8: {e}")
    if b"mj_hot" not in data:
        why.append("mj_hot not on the screen")
    res(not why, "top screen: no OSC, C1 or invalid UTF-8 from the names", "; ".join(why))
if os.environ.get("SHOW"):
    for name, _, _ in cases:
        print(f"--- {name}:", read(name)[:400].decode("utf-8", "replace"))
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || FAILS=$((FAILS + 1))
finish
