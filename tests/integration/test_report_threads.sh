#!/usr/bin/env bash
# report --threads, --tid and --comm (issue 29): the per-thread view of a profile, on threadmill
# -k (two named threads doing different work: tm-hot burns in hot_spin() without a pause,
# tm-warm a quarter of the time in warm_spin()). Checked: each thread's share of the samples
# against the CPU time /proc gives its thread over the same attach (and against perf report
# -s pid,comm of a perf record run during it, when perf works here), the names, each thread's
# hottest function, --tid and --comm cutting the flat profile to one thread, both together, a
# name no thread has, and bad values refused with exit 2. Needs root.
. "$(dirname "$0")/lib.sh"
THREADMILL=$BUILD/threadmill
[ -x "$THREADMILL" ] || { fail "threadmill fixture" "$THREADMILL not built (make)"; exit 1; }
start_daemon || exit 1

"$THREADMILL" -t 1 -k 2>"$TDIR/tm.err" &
TM=$!
PIDS+=("$TM")
wait_for 10 grep -q ready "$TDIR/tm.err" || { fail "threadmill -k" "not ready"; exit 1; }
# tid_of NAME: the tid of TM's thread named NAME.
tid_of() { grep -lx "$1" /proc/"$TM"/task/*/comm | head -1 | cut -d/ -f5; }
named() { [ -n "$(tid_of tm-hot)" ] && [ -n "$(tid_of tm-warm)" ]; }
wait_for 10 named || { fail "threadmill -k threads" "no tm-hot/tm-warm thread"; exit 1; }
HOT=$(tid_of tm-hot)
WARM=$(tid_of tm-warm)
# ticks TID: the thread's utime + stime in clock ticks.
ticks() { local s; s=$(cat "/proc/$TM/task/$1/stat"); set -- ${s##*) }; echo $((${12} + ${13})); }

h0=$(ticks "$HOT"); w0=$(ticks "$WARM")
check "attach threadmill -k (pid $TM)" ctl attach "$TM" --freq 999
PERF=
if command -v perf >/dev/null; then
	perf record -q -e cpu-clock -F 999 -p "$TM" -o "$TDIR/perf.data" -- sleep 3 \
		>"$TDIR/perf.log" 2>&1 && PERF=1
fi
wait_for 60 at_least_samples "$TM" 1500 || fail "samples" "$(samples "$TM") samples in 60 s"
check "detach" ctl detach "$TM"
h1=$(ticks "$HOT"); w1=$(ticks "$WARM")

# --- The threads' table.
ctl report "$TM" --threads >"$TDIR/threads.txt" 2>&1 || fail "report --threads" "$(cat "$TDIR/threads.txt")"
row() { awk -v t="$1" '$1 == t' "$TDIR/threads.txt"; }
if row "$HOT" | grep -q " tm-hot .*% hot_spin$" && row "$WARM" | grep -q " tm-warm .*% warm_spin$"; then
	pass "report --threads: a row per thread with its name and hottest function ($(row "$HOT" | tr -s ' '); $(row "$WARM" | tr -s ' '))"
else fail "report --threads rows" "$(cat "$TDIR/threads.txt")"; fi
ctl report "$TM" --threads --json >"$TDIR/threads.json" || fail "report --threads --json" "exit $?"
# tj EXPR: a Python expression over j (the --threads JSON) and th (tid -> thread object).
tj() { python3 -c "import json,sys
j = json.load(open('$TDIR/threads.json')); th = {t['tid']: t for t in j['threads']}
print($1)"; }
total=$(tj "j['total_samples']")
hot_n=$(tj "th[$HOT]['samples']")
warm_n=$(tj "th[$WARM]['samples']")
check "--threads --json: the threads' samples add up to the profile's ($total), the sleeping main thread has none" \
	[ "$(tj "sum(t['samples'] for t in j['threads']) == j['target']['samples'] == $total and $TM not in th")" = True ]
check "--threads --json: names and hottest functions" \
	[ "$(tj "(th[$HOT]['comm'], th[$HOT]['top_function'], th[$WARM]['comm'], th[$WARM]['top_function'])")" = "('tm-hot', 'hot_spin', 'tm-warm', 'warm_spin')" ]

# Each thread's share against its CPU time over the attach (/proc, clock ticks): within 10
# points (the attach and detach are not exactly where /proc was read).
read -r k_share c_share < <(python3 -c "print(100 * $hot_n / ($hot_n + $warm_n), 100 * ($h1 - $h0) / max(1, ($h1 - $h0) + ($w1 - $w0)))")
if python3 -c "import sys; sys.exit(not abs($k_share - $c_share) <= 10)"; then
	pass "tm-hot's share of the samples ${k_share%.*}% matches its share of the CPU time ${c_share%.*}% (/proc)"
else fail "share against /proc" "kprof ${k_share}% /proc ${c_share}% ($hot_n/$warm_n samples, $((h1 - h0))/$((w1 - w0)) ticks)"; fi
if [ -n "$PERF" ]; then
	p_share=$(perf report -i "$TDIR/perf.data" -s pid --stdio 2>/dev/null |
		awk -v t="$HOT:tm-hot" '$2 == t { sub("%", "", $1); print $1 }')
	if [ -n "$p_share" ] && python3 -c "import sys; sys.exit(not abs($k_share - $p_share) <= 15)"; then
		pass "perf report -s pid,comm on the same run gives tm-hot ${p_share}% (kprof ${k_share%.*}%)"
	else fail "share against perf" "perf '${p_share}' kprof ${k_share}%: $(perf report -i "$TDIR/perf.data" -s pid --stdio 2>&1 | grep -v '^#' | head -4)"; fi
else
	skip "share against perf" "perf record failed here: $(tail -2 "$TDIR/perf.log" 2>/dev/null)"
fi

# --- --tid and --comm cut the flat profile to the threads they name.
# rj ARGS...: report TM ARGS --json --top 0 as (total_samples, [functions]).
rj() { ctl report "$TM" "$@" --json --top 0 | python3 -c "import json,sys
j = json.load(sys.stdin); print(j['total_samples'], ' '.join(e['function'] for e in j['entries']))"; }
out=$(rj --tid "$HOT")
if [ "${out%% *}" = "$hot_n" ] && [[ " $out " == *" hot_spin "* ]] && [[ " $out " != *" warm_spin "* ]]; then
	pass "report --tid $HOT: that thread's $hot_n samples, hot_spin and no warm_spin"
else fail "report --tid" "$out"; fi
out=$(rj --comm tm-warm)
if [ "${out%% *}" = "$warm_n" ] && [[ " $out " == *" warm_spin "* ]] && [[ " $out " != *" hot_spin "* ]]; then
	pass "report --comm tm-warm: that thread's $warm_n samples, warm_spin and no hot_spin"
else fail "report --comm" "$out"; fi
ctl report "$TM" --comm tm-warm --top 3 >"$TDIR/comm.txt"
grep -q "^threads: named 'tm-warm': $warm_n of $total samples" "$TDIR/comm.txt" &&
	pass "report --comm says which threads and how many of the samples" || fail "--comm text" "$(head -3 "$TDIR/comm.txt")"
check "--tid and --comm of different threads: no samples" [ "$(rj --tid "$HOT" --comm tm-warm)" = "0 " ]
check "--comm of a name no thread has: no samples, exit 0" [ "$(rj --comm nosuch)" = "0 " ]
check "--threads --tid $WARM: one row" [ "$(ctl report "$TM" --threads --tid "$WARM" --json | python3 -c "import json,sys
print([(t['tid'], t['samples']) for t in json.load(sys.stdin)['threads']])")" = "[($WARM, $warm_n)]" ]

# --- Bad values: exit 2, said.
for bad in "--tid 0" "--tid x" "--tid 99999999" "--comm=" "--comm $(printf 'a%.0s' {1..65})"; do
	out=$(ctl report "$TM" $bad 2>&1); rc=$?
	if [ "$rc" = 2 ] && [[ "$out" == *"--"* ]]; then pass "report ${bad:0:20} refused (exit 2): ${out%%$'\n'*}"
	else fail "report ${bad:0:20}" "exit $rc: $out"; fi
done
finish
