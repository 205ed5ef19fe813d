#!/usr/bin/env bash
# check_dupes.sh: no new code repeats a block of 6 or more lines (tests/check_dupes.py, against
# the floor of tests/dupes.txt), and, as a floor under that, each shared helper is defined once:
#
# mix64, last_le, array_grow and write_all live in include/kprof/, the test PRNG (prng_next,
# prng_unit) in tests/prng.h. A second definition of one of those names, or a second copy of the
# splitmix64 or mix64 constants under another name, is a FAIL that says where the copies are.
# Calls and prototypes do not count: a definition is a line that starts with the return type and
# does not end with ';'. Usage: bash tests/check_dupes.sh (from anywhere); exit status 1 on FAIL.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

DIRS=(daemon cli proto include tests bench bpf)
HELPERS=(mix64 last_le array_grow write_all prng_next prng_unit)
# Constants only these helpers should spell out: splitmix64's last multiplier, mix64's last one.
CONSTS=(0x94d049bb133111eb 0xc4ceb9fe1a85ec53)
dupe_fails=0

dupe_report() { # what, places (file:line or file, one per line)
	local n
	n=$(grep -c . <<<"$2")
	if [ "$n" -eq 1 ]; then
		echo "PASS: $1 once ($2)"
	elif [ "$n" -eq 0 ]; then
		echo "FAIL: $1: not found"
		dupe_fails=$((dupe_fails + 1))
	else
		echo "FAIL: $1 $n times: $(tr '\n' ' ' <<<"$2")"
		dupe_fails=$((dupe_fails + 1))
	fi
}

for h in "${HELPERS[@]}"; do
	places=$(grep -rnE --include='*.c' --include='*.h' \
		"^(static[[:space:]]+)?(inline[[:space:]]+)?[A-Za-z_][A-Za-z0-9_ ]*[[:space:]*]$h\(" \
		"${DIRS[@]}" | grep -vE ';[[:space:]]*$' | cut -d: -f1,2)
	dupe_report "$h defined" "$places"
done
for c in "${CONSTS[@]}"; do
	places=$(grep -rliE --include='*.c' --include='*.h' "$c" "${DIRS[@]}")
	dupe_report "file spelling $c" "$places"
done
# Repeated blocks: its own PASS/FAIL lines.
python3 tests/check_dupes.py || dupe_fails=$((dupe_fails + 1))
[ "$dupe_fails" -eq 0 ]
