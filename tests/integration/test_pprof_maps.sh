#!/usr/bin/env bash
# pprof that other tools can use, checked with `go tool pprof -raw`: the main executable is the
# first mapping, with its address range, file offset, path and build id (those of readelf); a
# native function's locations are runtime addresses (ELF addresses moved by the mapping's load
# bias) of its instructions (its start, its sampled addresses) or inside its calls (a caller
# frame at its call site), per objdump (lines are tested in test_lines.sh: --no-lines here);
# the has_functions / has_filenames / has_line_numbers flags say what each mapping has; JS functions carry their file and line (V8's perf map with --perf-basic-prof, the jitdump
# with --perf-prof); samples carry thread_id and thread_name labels. Needs root and go; node for
# the JS parts (skipped without it).
# Not sanitized: go tool pprof and readelf comparisons (about 20 s); the encoder
# (proto/pprof.c) runs under ASan in the unit test test_pprof and in test_export.
. "$(dirname "$0")/lib.sh"
if ! command -v go >/dev/null; then skip "pprof maps" "go (golang-go) not installed"; exit 0; fi
export GOCACHE=$TDIR/gocache HOME=$TDIR
NATIVE=$BUILD/native
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# raw NAME PID: export PID's profile and write `go tool pprof -raw` of it to $TDIR/NAME.raw.
raw() {
	ctl export "$2" --no-lines -o "$TDIR/$1.pb.gz" &&
		go tool pprof -raw "$TDIR/$1.pb.gz" >"$TDIR/$1.raw" 2>"$TDIR/$1.err"
}

# check_raw NAME EXE FUNC [JSFUNC JSFILE JSLINE MODULE]: the assertions on $TDIR/NAME.raw (see
# the top); EXE the executable's path, FUNC a native function of it.
check_raw() {
	python3 - "$TDIR/$1.raw" "$@" <<'PY'
import re, subprocess, sys
path, name, exe, func = sys.argv[1:5]
js = sys.argv[5:]
raw = open(path, encoding="utf-8", errors="replace").read()
def res(ok, msg, why=""):
    print(("PASS: " if ok else "FAIL: ") + f"{name}: {msg}" + ("" if ok else f": {why}"))
maps = {}
for m in re.finditer(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+) ?(\S*) ?(\S*)$",
                     raw.split("Mappings")[1], re.M):
    i, start, limit, off, file, bid, bits = m.groups()
    if bid.startswith("["):
        bid, bits = "", bid
    maps[int(i)] = dict(start=int(start, 16), limit=int(limit, 16), off=int(off, 16), file=file,
                        bid=bid, bits=bits)
first = maps.get(1, {})
note = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
want_bid = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
res(first.get("file") == exe and first.get("bid") == want_bid and first["limit"] > first["start"],
    f"the executable is the first mapping, with a range and its build id {want_bid}", first)
res("[FN]" in first.get("bits", "") and "[FL]" not in first["bits"] and "[LN]" not in first["bits"],
    "the executable's mapping has functions, no file names or lines (kprof reads no DWARF)",
    first.get("bits"))
locs = {}
for l in re.finditer(r"^\s+(\d+): (0x[0-9a-f]+) M=(\d+) (.*)$", raw.split("Locations")[1].split("Mappings")[0], re.M):
    locs.setdefault(l.group(4).split(" ")[0], []).append((int(l.group(2), 16), int(l.group(3)), l.group(4)))
nm = subprocess.run(["nm", "-S", "-C", exe], capture_output=True, text=True).stdout
sym, size = (int(x, 16) for x in re.search(r"^([0-9a-f]+) ([0-9a-f]+) [tT] " + re.escape(func) + r"(\(.*\))?$", nm, re.M).group(1, 2))
# The instructions of func (objdump): a location of it is at one's start (the function's own
# location, a sampled address) or inside a call (a call site: its return address - 1).
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={sym:#x}",
                      f"--stop-address={sym + size:#x}", exe], capture_output=True, text=True).stdout
insns = [int(a, 16) for a in re.findall(r"^\s*([0-9a-f]+):\t", dis, re.M)]
calls = [int(a, 16) for a in re.findall(r"^\s*([0-9a-f]+):\tcall", dis, re.M)]
ends = dict(zip(insns, insns[1:] + [sym + size]))
# The ELF address's file offset (through its PT_LOAD), then where the mapping put that offset.
loads = [tuple(int(x, 16) for x in l.split()[1:4:2] + l.split()[4:5])
         for l in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout.splitlines()
         if l.split()[:1] == ["LOAD"]]
foff = [sym - va + off for off, va, sz in loads if va <= sym < va + sz]
bad = []
for addr, mid, _ in locs.get(func, []):
    m = maps.get(mid, {})
    elf = addr - m["start"] + m["off"] - foff[0] + sym if m and foff else -1
    if m.get("file") != exe or not (elf in ends or any(a < elf < ends[a] for a in calls)):
        bad.append((hex(addr), hex(elf), m))
res(locs.get(func) and not bad,
    f"{func}'s {len(locs.get(func, []))} locations are at runtime addresses of its instructions "
    f"or call sites in the executable (ELF {sym:#x}..{sym + size:#x})", bad or "no location")
sec = raw.split("Samples:")[1].split("Locations")[0]
res("thread_id:[" in sec and "thread_name:[" in sec, "samples carry thread_id and thread_name labels")
if js:
    jsfunc, jsfile, jsline, module = js
    l = [x for v in locs.values() for x in v if jsfunc in x[2]]
    ok = l and re.search(re.escape(jsfile) + ":" + jsline + r" s=" + jsline + "$", l[0][2])
    res(bool(ok), f"{jsfunc} carries {jsfile}:{jsline} (Function.filename, start_line, Line.line)",
        l[0][2] if l else "no location")
    jm = maps.get(l[0][1], {}) if l else {}
    res(jm.get("file") == module and jm.get("bits") == "[FN][FL][LN]",
        f"the JIT mapping {module} has functions, file names and line numbers", jm)
PY
}

# --- minijit: JIT code of a perf map, native code of its executable.
start_minijit --seconds 60 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl attach "$P" --freq 999 >/dev/null
wait_for 30 at_least_samples "$P" 1000 || fail "samples" "$(ctl list)"
ctl detach "$P" >/dev/null
if raw minijit "$P"; then
	check_raw minijit "$(readlink -f "$MINIJIT")" run_round
	grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ /\S+/libc\.so\.6 [0-9a-f]{40} \[FN\]$" "$TDIR/minijit.raw" &&
		pass "minijit: libc's mapping with its range, path and build id" ||
		fail "minijit: libc mapping" "$(grep -A8 ^Mappings "$TDIR/minijit.raw")"
	grep -Eq "^[0-9]+: 0x0/0x0/0x0 perf-$P\.map +\[FN\]$" "$TDIR/minijit.raw" &&
		pass "minijit: the perf map's mapping has functions, no file names or lines" ||
		fail "minijit: perf map mapping" "$(grep -A8 ^Mappings "$TDIR/minijit.raw")"
else fail "minijit: export and pprof -raw" "$(cat "$TDIR/minijit.err")"; fi
# The kept profile, read back by a restarted kprofd, still has its mappings and thread names.
stop_daemon
start_daemon || { fail "daemon restarts" "see log"; exit 1; }
if raw minijit-restored "$P"; then
	check_raw minijit-restored "$(readlink -f "$MINIJIT")" run_round
else fail "minijit restored: export" "$(cat "$TDIR/minijit-restored.err")"; fi
go tool pprof -top "$TDIR/minijit.pb.gz" 2>&1 | head -1 | grep -q "^File: minijit$" &&
	pass "pprof -top names the profile after the executable (File: minijit)" ||
	fail "pprof -top File" "$(go tool pprof -top "$TDIR/minijit.pb.gz" 2>&1 | head -2)"

# --- the native fixture: native code only.
if [ -x "$NATIVE" ]; then
	"$NATIVE" --ms 3000 --wait-usr1 2>"$TDIR/native.err" &
	NPID=$!
	PIDS+=("$NPID")
	wait_for 10 grep -q ready "$TDIR/native.err"
	ctl attach "$NPID" --freq 999 >/dev/null && kill -USR1 "$NPID"
	wait_for 15 state_is "$NPID" exited || fail "native exits" "$(ctl list --all)"
	if raw native "$NPID"; then check_raw native "$(readlink -f "$NATIVE")" main
	else fail "native: export and pprof -raw" "$(cat "$TDIR/native.err")"; fi
else fail "setup" "$NATIVE is not built (make all)"; fi

# --- node: V8's names (perf map) and its jitdump.
if ! command -v node >/dev/null; then skip "pprof maps: node" "node is not installed"; finish; exit; fi
NODE=$(readlink -f "$(command -v node)")
HOT=$(readlink -f tests/fixtures/hot.js)
# node::Start: node's main calls it last (a tail call: main itself is on no stack).
# node_profile NAME FLAG ARG: node FLAG hot.js 12 ARG in $TDIR/NAME, 3 s of it profiled after
# warm-up; sets NP.
node_profile() {
	mkdir -p "$TDIR/$1"
	(cd "$TDIR/$1" && exec node "$2" "$HOT" 12 $3) >"$TDIR/$1.out" 2>"$TDIR/$1.nerr" &
	NP=$!
	PIDS+=("$NP")
	wait_for 15 grep -q ready "$TDIR/$1.nerr" || { fail "$1 starts" "$(cat "$TDIR/$1.nerr")"; return 1; }
	[ -z "$3" ] || wait_for 15 grep -q flushed "$TDIR/$1.nerr"
	ctl attach "$NP" --freq 499 --duration 3 >/dev/null
	wait_for 20 state_is "$NP" detached || fail "$1 profile ends" "$(ctl list --all)"
}
line=$(grep -n "^function hotFunction" "$HOT" | cut -d: -f1)
if node_profile node-basic --perf-basic-prof "" && raw node-basic "$NP"; then
	check_raw node-basic "$NODE" node::Start hotFunction "$HOT" "$line" "perf-$NP.map"
fi
if node_profile node-jit --perf-prof flush && raw node-jit "$NP"; then
	check_raw node-jit "$NODE" node::Start hotFunction "$HOT" "$line" "jit-$NP.dump"
fi
finish
