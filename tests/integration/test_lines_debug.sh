#!/usr/bin/env bash
# Source lines from separate debug files (issue 32), and the debug files kprofd refuses. Each case
# is hotline.c built with a build id of its own, its DWARF stripped (strip -g: its symbols stay):
#  - its debug file by build id under [lines] debug_dir: the hot line (mix inlined into spin);
#  - its debug file by .gnu_debuglink, in .debug/ beside it: the same;
#  - at its build-id path, the debug file of another build: refused (never used), no lines, the
#    profile's comments say which build id it had;
#  - a .gnu_debuglink naming a path out of the debug directories (../../etc/...): ignored, said;
#  - no debug file at all: no lines, the comments say none was found;
#  - the process exited, its symbols dropped: an export still finds the debug file by build id,
#    and its own file at its path if anyone may read it (not once made root-only).
# Needs root, go and clang.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lines_lib.sh"
DBG=$TDIR/debug
mkdir -p "$DBG" "$TDIR/dl/.debug"
lines_conf "debug_dir = $DBG"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }

# split NAME: $TDIR/NAME built, its debug file kept in $TDIR/NAME.debug, its DWARF stripped.
split() {
	build "$1" && objcopy --only-keep-debug "$TDIR/$1" "$TDIR/$1.debug" && strip -g "$TDIR/$1"
}
# by_id FILE DEBUG: DEBUG at FILE's build-id path under $DBG.
by_id() {
	local b
	b=$(build_id "$1")
	mkdir -p "$DBG/.build-id/${b:0:2}"
	cp "$2" "$DBG/.build-id/${b:0:2}/${b:2}.debug"
}
# lines_of EXE NAME: profile EXE, export it (to $TDIR/NAME.pb.gz), detach it.
lines_of() {
	profile "$1" "$2" || return 1
	ctl export "$HP" -o "$TDIR/$2.pb.gz" 2>"$TDIR/$2.err" || { fail "$2: export" "$(cat "$TDIR/$2.err")"; return 1; }
	ctl detach "$HP" >/dev/null
}
hot() { first_line "$1" | grep -Eq " mix $SRC:$HOT \(inline\)$"; }

split byid && by_id "$TDIR/byid" "$TDIR/byid.debug"
if lines_of "$TDIR/byid" byid; then
	hot "$TDIR/byid.pb.gz" && pass "a debug file by build id under debug_dir: mix $SRC:$HOT (inline) first ($(comment "$TDIR/byid.pb.gz"))" ||
		fail "by build id" "$(comment "$TDIR/byid.pb.gz") $(notes "$TDIR/byid.pb.gz")"
fi

build link && objcopy --only-keep-debug "$TDIR/link" "$TDIR/dl/.debug/link.debug" && strip -g "$TDIR/link" &&
	(cd "$TDIR/dl/.debug" && objcopy --add-gnu-debuglink=link.debug "$TDIR/link" "$TDIR/dl/link")
if lines_of "$TDIR/dl/link" link; then
	hot "$TDIR/link.pb.gz" && pass "a debug file by .gnu_debuglink in .debug/: mix $SRC:$HOT (inline) first" ||
		fail "by debuglink" "$(comment "$TDIR/link.pb.gz") $(notes "$TDIR/link.pb.gz")"
fi

# The debug file of another build at this one's build-id path.
split wrong && by_id "$TDIR/wrong" "$TDIR/byid.debug"
if lines_of "$TDIR/wrong" wrong; then
	n=$(notes "$TDIR/wrong.pb.gz")
	! go tool pprof -lines -top "$TDIR/wrong.pb.gz" 2>&1 | grep -q "hotline.c:$HOT" &&
		echo "$n" | grep -q "build id $(build_id "$TDIR/byid"), not the mapping's $(build_id "$TDIR/wrong"): not used" &&
		pass "a debug file of another build: not used, and said ($n)" ||
		fail "wrong build id" "$(comment "$TDIR/wrong.pb.gz") $n"
fi

# A .gnu_debuglink naming a path: "../../etc/hostname", NUL, padding, a CRC32.
split outside && python3 - "$TDIR/outside.link" <<'PY'
import sys, zlib
name = b"../../etc/hostname\0"
name += b"\0" * (-len(name) % 4)
open(sys.argv[1], "wb").write(name + zlib.crc32(b"").to_bytes(4, "little"))
PY
objcopy --add-section .gnu_debuglink="$TDIR/outside.link" "$TDIR/outside"
if lines_of "$TDIR/outside" outside; then
	n=$(notes "$TDIR/outside.pb.gz")
	echo "$n" | grep -q "its .gnu_debuglink names a path, not a file name: ignored" &&
		pass "a .gnu_debuglink naming a path: ignored, and said" || fail "debuglink path" "$(comment "$TDIR/outside.pb.gz") $n"
fi

split none
if lines_of "$TDIR/none" none; then
	n=$(notes "$TDIR/none.pb.gz")
	echo "$n" | grep -q "no DWARF, and no debug file found" &&
		! go tool pprof -lines -top "$TDIR/none.pb.gz" 2>&1 | grep -q "hotline.c:$HOT" &&
		pass "no debug file: no lines, and said ($n)" || fail "no debug file" "$(comment "$TDIR/none.pb.gz") $n"
fi

# Processes that exit: gone, exited and private below, each profiled for the 5 s it runs, the
# three at once (EP: their pids).
split gone && by_id "$TDIR/gone" "$TDIR/gone.debug"
build exited
build private
declare -A EP
for n in gone exited private; do
	[ -x "$TDIR/$n" ] && NSAMPLES=200 profile "$TDIR/$n" "$n" 5 && EP[$n]=$HP
done
# Its debug file by build id once the process has exited and its symbols are dropped.
if [ -n "${EP[gone]:-}" ]; then
	HP=${EP[gone]}
	wait_for 20 state_is "$HP" exited || fail "gone: exited" "$(ctl list --all)"
	ctl export "$HP" -o "$TDIR/gone.pb.gz" 2>"$TDIR/gone.err" &&
		hot "$TDIR/gone.pb.gz" && pass "an exited process: its debug file by build id: mix $SRC:$HOT (inline) first" ||
		fail "exited" "$(cat "$TDIR/gone.err") $(comment "$TDIR/gone.pb.gz") $(notes "$TDIR/gone.pb.gz")"
fi
# An exited process's own file (its DWARF in it) at its path in kprofd's root, readable by
# anyone; made root-only (chmod 700) after its process exited, the same file is never read.
# exited_lines NAME MODE: $TDIR/NAME, profiled above, once it has exited: chmod MODE, exported.
exited_lines() {
	[ -n "${EP[$1]:-}" ] || return 1
	HP=${EP[$1]}
	wait_for 20 state_is "$HP" exited || { fail "$1: exited" "$(ctl list --all)"; return 1; }
	chmod "$2" "$TDIR/$1"
	ctl export "$HP" -o "$TDIR/$1.pb.gz" 2>"$TDIR/$1.err" || { fail "$1: export" "$(cat "$TDIR/$1.err")"; return 1; }
}
if exited_lines exited 755; then
	hot "$TDIR/exited.pb.gz" && pass "an exited process: its file at its path: mix $SRC:$HOT (inline) first" ||
		fail "exited, own file" "$(comment "$TDIR/exited.pb.gz") $(notes "$TDIR/exited.pb.gz")"
fi
if exited_lines private 700; then
	n=$(notes "$TDIR/private.pb.gz")
	echo "$n" | grep -q "private: no DWARF, and no debug file found" &&
		! go tool pprof -lines -top "$TDIR/private.pb.gz" 2>&1 | grep -q "hotline.c:" &&
		pass "an exited process's file made root-only: not read, no lines ($n)" ||
		fail "exited, root-only file" "$(comment "$TDIR/private.pb.gz") $n"
fi
ctl status >/dev/null && kill -0 "$DAEMON_PID" && pass "kprofd is unharmed" || fail "kprofd" "gone"
finish
