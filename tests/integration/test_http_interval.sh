#!/usr/bin/env bash
# Issue 31: an interval profile (GET /debug/pprof/profile?seconds=N) holds what the interval
# took and nothing else. A shell loop runs, is sampled, then blocks (it takes no more samples)
# beside a busy minijit: a scrape of the blocked process alone answers 200 with an empty profile;
# a whole-host scrape has no sample of it and no function that no sample names (each target's
# interval carries only the functions its new stacks name, not its whole profile's), and the
# minijit's samples in it are no more than the minijit took over the request.
# Needs root (BPF) and python3.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "http interval" "needs root"; exit 0; fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
AUTH="Authorization: Bearer $(cat "$TDIR/token")"
printf '[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" "$TDIR/token" >"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" || { fail "daemon starts" "see log"; exit 1; }
REFS="$(dirname "$0")/pprof_refs.py"

start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
mkfifo "$TDIR/fifo"
sh -c 'while [ ! -e "$0" ]; do :; done; read x <"$1"' "$TDIR/stop" "$TDIR/fifo" &
SH=$!
PIDS+=("$SH")
check "attach the minijit" ctl attach "$MJ_PID" --freq 199
check "attach the shell loop" ctl attach "$SH" --freq 199
wait_for 60 at_least_samples "$SH" 20 || fail "the shell loop is sampled" "$(samples "$SH") samples"
touch "$TDIR/stop"
blocked() { [ "$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$SH/stat")" = S ]; }
wait_for 30 blocked || fail "the shell loop blocks" "$(cat "/proc/$SH/stat")"
wait_for 20 at_least_samples "$MJ_PID" 50

# scrape NAME QUERY OUT: GET ...?seconds=N&QUERY into OUT; its status.
scrape() { curl -s -m 60 -o "$2" -w '%{http_code}' -H "$AUTH" "$URL/debug/pprof/profile?$1"; }

code=$(scrape "seconds=1&pid=$SH" "$TDIR/idle.pb.gz")
read -r tot nf unused < <(python3 "$REFS" "$TDIR/idle.pb.gz" 2>&1 | head -1)
[ "$code" = 200 ] && [ "$tot" = 0 ] && [ "$nf" = 0 ] &&
	pass "pid= of a process that took no sample: 200, an empty profile" ||
	fail "pid= of an idle process" "$code: $tot samples, $nf functions"

m0=$(samples "$MJ_PID")
code=$(scrape "seconds=2" "$TDIR/host.pb.gz")
m1=$(samples "$MJ_PID")
python3 "$REFS" "$TDIR/host.pb.gz" >"$TDIR/host.txt" 2>&1
read -r tot nf unused <"$TDIR/host.txt"
mj=$(awk -v p="pid=$MJ_PID" '$1 == p { print $2 }' "$TDIR/host.txt")
[ "$code" = 200 ] && [ "${nf:-0}" -gt 0 ] && [ "$unused" = 0 ] &&
	pass "whole host: every function is named by some sample ($nf functions)" ||
	fail "whole host: functions no sample names" "$code: $(head -1 "$TDIR/host.txt")"
grep -q "^pid=$SH " "$TDIR/host.txt" && fail "whole host: the blocked process has no sample" \
	"$(grep "^pid=$SH " "$TDIR/host.txt")" || pass "whole host: the blocked process has no sample"
[ -n "$mj" ] && [ "$mj" -gt 0 ] && [ "$mj" -le $((m1 - m0)) ] &&
	pass "whole host: the minijit's samples are the interval's ($mj of the $((m1 - m0)) it took meanwhile)" ||
	fail "whole host: the minijit's samples" "${mj:-none} in the scrape, $((m1 - m0)) taken meanwhile (of $m1)"
ctl detach --all >/dev/null 2>&1
finish
