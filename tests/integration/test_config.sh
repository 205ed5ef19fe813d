#!/usr/bin/env bash
# The config file: errors at start name file, line and key; flags override the file; SIGHUP
# re-reads it; a bad reload keeps the settings in force; the read group gets read-only access.
. "$(dirname "$0")/lib.sh"
CONF=$TDIR/kprofd.conf

printf '[daemon]\nfrequency = 99\n[limits]\nmax_targets = 1\nmax_targetz = 2\n' >"$CONF"
out=$("$KPROFD" --config "$CONF" --socket "$SOCK" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "kprofd.conf:5: unknown key 'max_targetz' in section \[limits\]" <<<"$out"; then
	pass "config error at start names file, line and key"
else fail "config error at start" "rc=$rc $out"; fi
out=$("$KPROFD" --config "$TDIR/missing.conf" --socket "$SOCK" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "missing.conf: No such file" <<<"$out"; then pass "a missing --config file is an error"
else fail "missing config" "rc=$rc $out"; fi

printf '[daemon]\nfrequency = 199\n[limits]\nmax_targets = 1\n' >"$CONF"
start_daemon --config "$CONF" --max-targets 2 || { fail "daemon starts with a config" "see log"; exit 1; }
sleep 300 & A=$!; PIDS+=("$A")
sleep 300 & B=$!; PIDS+=("$B")
sleep 300 & C=$!; PIDS+=("$C")
if ctl attach "$A" --json | grep -q '"freq_hz":199'; then pass "default frequency from the file"
else fail "frequency from the file" "$(ctl list)"; fi
check "the flag overrides the file (2 targets allowed)" ctl attach "$B"
out=$(ctl attach "$C" 2>&1)
grep -q "too many targets" <<<"$out" && pass "limit of 2 targets enforced" || fail "target limit" "$out"

# Reload: the file now allows fewer kept profiles and another frequency; the flag still wins.
printf '[daemon]\nfrequency = 301\n[limits]\nmax_targets = 1\n' >"$CONF"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reloaded the settings: 301 Hz" "$TDIR/kprofd.log" && pass "SIGHUP reloads the file" ||
	fail "SIGHUP reload" "$(tail -3 "$TDIR/kprofd.log")"
ctl detach "$A" >/dev/null
if ctl attach "$C" --json | grep -q '"freq_hz":301'; then pass "new default frequency applies after reload"
else fail "reloaded frequency" "$(ctl list)"; fi

printf '[daemon]\nfrequency = 9999\n' >"$CONF"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reload: .*daemon.frequency: '9999'.*keeping the current settings" "$TDIR/kprofd.log" &&
	pass "a bad reload is reported and the old settings stay" ||
	fail "bad reload" "$(tail -3 "$TDIR/kprofd.log")"
check "daemon still serving after the bad reload" ctl status
finish
