#!/usr/bin/env bash
# The structure of the code, read from the sources and the built objects ($BUILD/obj): every file
# of kprofd and kprofctl is in one layer of tests/layers.txt and includes nothing of a higher
# layer, no files depend on each other in a cycle (tests/check_structure.py), and each shared
# helper is defined once and no new code repeats a block of 6 lines (tests/check_dupes.sh, which
# runs tests/check_dupes.py against the floor tests/dupes.txt), and the file table of
# docs/ARCHITECTURE.md is the one tests/doc_table.py generates. Needs no root, no daemon and no
# kernel feature.
# Not sanitized: it reads sources and objects, and runs no kprofd.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# relay CMD...: CMD's "PASS: name" / "FAIL: name: why" lines, counted here, the others shown
# as they are; a CMD that fails without saying why is a FAIL too.
relay() {
	local line fails=$FAILS
	while IFS= read -r line; do
		case $line in
		"PASS: "*) pass "${line#PASS: }" ;;
		"FAIL: "*) line=${line#FAIL: } && fail "${line%%: *}" "${line#*: }" ;;
		"exit status 0") ;;
		"exit status "*) [ "$FAILS" -eq "$fails" ] && fail "$(basename "$2")" "$line" ;;
		*) echo "$line" ;;
		esac
	done < <("$@" 2>&1; echo "exit status $?")
}

command -v python3 >/dev/null || { fail "structure" "python3 not found"; exit 1; }
command -v nm >/dev/null || { fail "structure" "nm (binutils) not found"; exit 1; }
relay python3 "$ROOT/tests/check_structure.py" --build "$BUILD"
relay bash "$ROOT/tests/check_dupes.sh"
relay python3 "$ROOT/tests/doc_table.py"
finish
