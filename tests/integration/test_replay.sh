#!/usr/bin/env bash
# The replay of a big host through kprofd's ingestion code (bench/replay.c, issue 34): the
# records as the BPF side writes them, fed to the ring buffer's handler, processes ending (exit
# records, kept profiles) and starting (attached), a whole-host scrape. Checked, not timed: every
# record valid and every sample's process found; a sample's target found in under 3 PID-hash
# steps with 10 and with 300 processes (a walk of the targets would take about 150 at 300);
# processes ended, kept within limits.max_kept (64), and replaced; the maps read again for junk
# frames found unchanged (no new symbol generation); the scrape answered. Needs
# root (the replay loads kprofd's BPF object); its children are killed when it ends.
. "$(dirname "$0")/lib.sh"
REPLAY=$BUILD/replay
# ok NAME CONDITION: CONDITION (evaluated here) holds.
ok() { if eval "$2"; then pass "$1"; else fail "$1" "not: $2"; fi; }
[ -x "$REPLAY" ] || { fail "replay built" "$REPLAY missing (make all)"; finish; exit; }
# run NAME ARGS...: the replay's output in $TDIR/NAME.txt; 0 if it ran to its end.
run() {
	local name=$1
	shift
	timeout -s KILL 600 "$REPLAY" --seconds 3 --warmup 1 --scrape-period 2 --scrape-seconds 1 "$@" \
		>"$TDIR/$name.txt" 2>"$TDIR/$name.err" && grep -q '^RESULT' "$TDIR/$name.txt"
}
for n in 10 300; do
	if ! run "p$n" --procs "$n" --threads $((10 * n)) --churn 4; then
		fail "$n processes: the replay runs" "$(tail -3 "$TDIR/p$n.err")"
		continue
	fi
	out=$TDIR/p$n.txt
	read -r lookups steps spl unknown bad < <(sed -nE \
		's/^lookups ([0-9]+) steps ([0-9]+) steps_per_lookup ([0-9.]+) unknown_tgid ([0-9]+) bad_records ([0-9]+)$/\1 \2 \3 \4 \5/p' "$out")
	ok "$n processes: samples looked up (${lookups:-none})" '[ "${lookups:-0}" -ge 57024 ]'
	ok "$n processes: $spl PID-hash steps a lookup (< 3)" \
		'awk -v s="${spl:-9}" "BEGIN { exit !(s < 3) }"'
	ok "$n processes: no unknown process (${unknown:-?}), no bad record (${bad:-?})" \
		'[ "${unknown:-1}" = 0 ] && [ "${bad:-1}" = 0 ]'
	read -r att kept < <(sed -nE 's/^memory t=[0-9]+s attached ([0-9]+) kept ([0-9]+) .*/\1 \2/p' "$out" | tail -1)
	ok "$n processes: $n attached (${att:-?}), ended ones kept (${kept:-?}, at most 64)" \
		'[ "${att:-0}" = "$n" ] && [ "${kept:-0}" -ge 1 ] && [ "${kept:-99}" -le 64 ]'
	ended=$(sed -nE 's/.*\(([0-9]+) processes ended and started.*/\1/p' "$out")
	ok "$n processes: processes ended and started (${ended:-none})" '[ "${ended:-0}" -ge 4 ]'
	read -r reread same < <(sed -nE \
		's/^maps read again for an address none held: ([0-9]+), unchanged ([0-9]+) .*/\1 \2/p' "$out")
	# The children never map anything new: each read again (for a frame past the end of a
	# mapping) finds the maps unchanged, and keeps the target's names and caches.
	[ "$n" = 300 ] && ok "$n processes: maps read again ${reread:-?} times, unchanged ${same:-?}" \
		'[ "${same:-0}" -ge 1 ] && [ "$same" = "$reread" ]'
	scrape=$(sed -nE 's/^scrape: 1 whole-host scrapes of 1 s, ([0-9.]+) targets each.*/\1/p' "$out")
	ok "$n processes: a whole-host scrape answered (${scrape:-none} targets)" \
		'[ -n "$scrape" ] && awk -v t="$scrape" "BEGIN { exit !(t >= 1) }"'
done
finish
