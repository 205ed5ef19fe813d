#!/usr/bin/env bash
# kprofd under systemd's protocols, without systemd as PID 1: a harness plays the service
# manager. sd_notify: READY=1 once BPF is loaded and the socket listens, STATUS=, WATCHDOG=1 from
# the loop when WATCHDOG_USEC is set, STOPPING=1 on SIGTERM. Socket activation: the listening
# socket is passed in (systemd-socket-activate), used as is, and left in place at exit.
. "$(dirname "$0")/lib.sh"

python3 - "$KPROFD" "$TDIR" <<'PY'
import os, socket, subprocess, sys, time, signal
kprofd, tdir = sys.argv[1], sys.argv[2]
ns = os.path.join(tdir, "notify.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(ns); s.settimeout(0.2)
env = dict(os.environ, NOTIFY_SOCKET=ns, WATCHDOG_USEC="1000000")
p = subprocess.Popen([kprofd, "--socket", os.path.join(tdir, "n.sock"), "--state-dir", os.path.join(tdir, "st")], env=env,
                     stderr=open(os.path.join(tdir, "notify-kprofd.log"), "w"))
env["WATCHDOG_PID"] = str(p.pid)
msgs = []
sock_at_ready = None
def collect(seconds):
    global sock_at_ready
    end = time.time() + seconds
    while time.time() < end:
        try: msgs.append(s.recv(4096).decode())
        except socket.timeout: continue
        if "READY=1" in msgs[-1] and sock_at_ready is None:
            sock_at_ready = os.path.exists(os.path.join(tdir, "n.sock"))
collect(4)
p.send_signal(signal.SIGTERM)
collect(1)
rc = p.wait(10)
text = "\n".join(msgs)
def check(name, ok):
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": got " + repr(msgs[:6])))
check("READY=1 sent", "READY=1" in text)
check("the control socket exists when READY=1 arrives", sock_at_ready is True)
check("STATUS= sent", "STATUS=" in text)
check("WATCHDOG=1 sent at least twice in 4 s with WatchdogSec=1s", text.count("WATCHDOG=1") >= 2)
check("STOPPING=1 sent on SIGTERM", "STOPPING=1" in text)
check("exit status 0 after SIGTERM", rc == 0)
PY

if command -v systemd-socket-activate >/dev/null; then
	AS=$TDIR/activated.sock
	systemd-socket-activate -l "$AS" "$KPROFD" --state-dir "$TDIR/st2" >"$TDIR/act.log" 2>&1 &
	ACT=$!; PIDS+=("$ACT")
	wait_for 10 test -S "$AS"
	if "$KPROFCTL" --socket "$AS" status >/dev/null 2>&1 || wait_for 15 "$KPROFCTL" --socket "$AS" status; then
		pass "kprofd started by socket activation answers on the passed socket"
	else fail "socket activation" "$(cat "$TDIR/act.log")"; fi
	grep -q "socket passed by systemd" "$TDIR/act.log" && pass "it used the passed socket" ||
		fail "used the passed socket" "$(cat "$TDIR/act.log")"
	kill -TERM "$ACT"; wait "$ACT" 2>/dev/null
	[ -S "$AS" ] && pass "the activated socket is not unlinked by kprofd" ||
		fail "activated socket kept" "it was removed"
else
	skip "socket activation" "systemd-socket-activate not installed"
fi
# Under systemd (JOURNAL_STREAM set) every log line carries its syslog priority for the journal.
JOURNAL_STREAM=1:1 "$KPROFD" --socket "$TDIR/j.sock" --state-dir "" --freq 0 >"$TDIR/j.log" 2>&1
JOURNAL_STREAM=1:1 timeout -s TERM 2 "$KPROFD" --socket "$TDIR/j.sock" --state-dir "" >"$TDIR/j2.log" 2>&1
if grep -q "^<6>kprofd .* ready" "$TDIR/j2.log" && ! grep -qv "^<[0-7]>" "$TDIR/j2.log"; then
	pass "journal lines carry priorities (<6> for info)"
else fail "journal priorities" "$(head -3 "$TDIR/j2.log")"; fi
grep -q "frequency: '0' is not a number" "$TDIR/j.log" && pass "bad flag refused before start" ||
	fail "bad flag" "$(cat "$TDIR/j.log")"
finish
