#!/usr/bin/env bash
# One user's flood of time windows must not push out everyone's history (security issue 25,
# item 7). [windows] memory 1 MiB, not written to disk, 1 s windows: nobody runs three
# processes whose every sample is a new deep stack (a window of tens of KB a second each), root
# profiles a small shell loop. Once nobody's windows have passed the whole memory bound, root's
# first windows must still answer `report --since/--until`, and nobody's own oldest went (its
# share is all but the last eighth, which stays for root). Needs root (BPF), setpriv and cc.
. "$(dirname "$0")/lib.sh"
command -v setpriv >/dev/null || { skip "window quotas" "setpriv (util-linux) missing"; exit 0; }
NB=$(id -u nobody)
cat >"$TDIR/flood.c" <<'EOF'
/* Every sample a new stack: random recursion 80-120 deep through 16 functions. */
#include <stdint.h>
typedef unsigned (*fn)(int);
static fn tab[16];
static uint64_t x = 88172645463325252ULL;
static unsigned rnd(void) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (unsigned)x; }
#define DEF(n) __attribute__((noinline)) static unsigned f##n(int d) { \
	volatile unsigned s = n; \
	if (d == 0) { for (int i = 0; i < 5000; i++) s += i; return s; } \
	return tab[rnd() & 15](d - 1) + s; }
DEF(0) DEF(1) DEF(2) DEF(3) DEF(4) DEF(5) DEF(6) DEF(7)
DEF(8) DEF(9) DEF(10) DEF(11) DEF(12) DEF(13) DEF(14) DEF(15)
int main(void)
{
	fn t[16] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15};
	for (int i = 0; i < 16; i++) tab[i] = t[i];
	x ^= (uint64_t)(uintptr_t)&t;
	for (;;) tab[rnd() & 15](80 + rnd() % 40);
}
EOF
cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$TDIR/flood" "$TDIR/flood.c" ||
	{ fail "build the flood fixture" "cc failed"; exit 1; }
chmod 755 "$TDIR/flood"
cat >"$TDIR/k.conf" <<EOF
[windows]
seconds = 1
memory_mb = 1
disk_mb = 0
EOF
# (a kprofd without per-user window quotas, an older one, gets the same test without the key)
grep -qa memory_per_uid_mb "$KPROFD" && echo "memory_per_uid_mb = 1" >>"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" || { fail "daemon starts" "see log"; exit 1; }
win() { ctl status --json | python3 -c "import json,sys; print(json.load(sys.stdin).get('windows_$1', '?'))"; }

sh -c 'while :; do i=0; while [ $i -lt 300 ]; do i=$((i+1)); done; sleep 0.02; done' & ROOTP=$!; PIDS+=("$ROOTP")
ctl attach "$ROOTP" --freq 99 >/dev/null || { fail "root attaches" "$(tail -2 "$TDIR/kprofd.log")"; exit 1; }
T0=$(date +%s)
# Root's first windows: a few seconds of them.
wait_for 20 eval '[ "$(ctl report "$ROOTP" --since "@$T0" --until "@$((T0 + 3))" 2>/dev/null | grep -c "^time range: .* window")" -ge 1 ]' ||
	fail "root's first windows" "$(ctl report "$ROOTP" --since "@$T0" 2>&1 | head -3)"
sleep 3 # (the range [T0, T0+3) must be over before the flood: it is what must survive)
T1=$((T0 + 3))
FP=()
for i in 1 2 3; do
	setpriv --reuid="$NB" --regid="$NB" --clear-groups "$TDIR/flood" & FP+=("$!"); PIDS+=("$!")
done
for p in "${FP[@]}"; do
	wait_for 5 grep -qx flood "/proc/$p/comm"
	setpriv --reuid="$NB" --regid="$NB" --clear-groups "$KPROFCTL" --socket "$SOCK" attach "$p" --freq 4999 >/dev/null ||
		fail "nobody attaches its flood" "$p"
done
TF=$SECONDS
# nobody's first windows, then the flood past the whole bound: those first windows gone.
TN=$(date +%s)
nb_first() { ctl report "${FP[0]}" --since "@$TN" --until "@$((TN + 2))" 2>/dev/null | grep -q "^time range: .* window"; }
wait_for 20 nb_first || fail "nobody's first windows" "$(ctl report "${FP[0]}" --since "@$TN" 2>&1 | head -3)"
nb_first_gone() { ! nb_first; }
if wait_for 120 nb_first_gone; then
	pass "nobody's flood passed the bound: its first windows pushed out ($(win dropped) dropped) after $((SECONDS - TF)) s"
else
	fail "flood" "nobody's first windows still kept after 120 s; $(ctl status | grep -i window)"
fi
out=$(ctl report "$ROOTP" --since "@$T0" --until "@$T1" --top 3 2>&1)
grep -q "^time range: .* window" <<<"$out" && pass "root's first windows survive the flood" || fail "root's history" "$out"
kill -9 "${FP[@]}"
ctl status >/dev/null && pass "kprofd well" || fail "kprofd" "not answering"
stop_daemon
finish
