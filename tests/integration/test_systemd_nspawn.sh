#!/usr/bin/env bash
# kprofd under a real systemd: this machine's own tree booted as a container (systemd-nspawn -D /
# --volatile=yes: a tmpfs root, the host's /usr read-only), kprof put in with `make install`
# (DESTDIR, then bound at /usr/local and /etc/kprofd), kprofd.socket started. Checked there:
# socket activation (the first connection starts kprofd.service), Type=notify readiness and
# STATUS= (StatusText), the watchdog (WatchdogUSec, pings, and a stopped kprofd restarted by it),
# `systemctl reload` (SIGHUP re-reads the config; an [http] listen it cannot apply is said, and
# without the network drop-in kprofd starts without the endpoint, saying how to enable it), the
# journal, a restart keeping the saved profiles, JIT, native and kernel names of processes
# attached under the hardened unit (kernel names need StandardInput=file:/proc/kallsyms:
# ProtectKernelTunables= hides the file), a whole-host scrape of the pprof endpoint with the
# network drop-in (built in the kprofd-build thread), and the exposure of `systemd-analyze security` (at most 2.5). kprofd runs in the container's PID
# namespace (ARCHITECTURE.md §1.2.2). The container is powered off, and its mounts gone, on every
# exit. Needs root, systemd-container (make deps) and a kernel that lets nspawn boot.
# Not sanitized: it runs the installed build under systemd in a container (about 30 s).
. "$(dirname "$0")/lib.sh"
T0=$SECONDS
command -v systemd-nspawn >/dev/null || { skip "systemd under nspawn" "systemd-nspawn not installed (apt-get install systemd-container, make deps)"; exit 0; }
[ -x /lib/systemd/systemd ] || { skip "systemd under nspawn" "no /lib/systemd/systemd in this tree to boot"; exit 0; }

M=kprof-it-$$
STAGE=$TDIR/stage
NSPAWN=
LEADER=
# Power the container off (SIGTERM to nspawn: an orderly shutdown), SIGKILL past 20 s; then
# lib.sh's cleanup. Its mounts live in its own mount namespace and go with it. A signal to this
# script (tests/run.sh's timeout sends SIGTERM) ends it through the same trap.
stop_machine() {
	[ -n "$NSPAWN" ] || return 0
	kill -TERM "$NSPAWN" 2>/dev/null
	local deadline=$((SECONDS + 20))
	while kill -0 "$NSPAWN" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
	kill -KILL "$NSPAWN" 2>/dev/null
	wait "$NSPAWN" 2>/dev/null
	NSPAWN=
}
trap 'stop_machine; cleanup' EXIT
trap 'exit 143' TERM INT HUP

# `make install` into a staging tree: $STAGE/usr/local (binaries, units, sysusers, tmpfiles) and
# $STAGE/etc/kprofd (the config).
if ! make -s BUILD="$BUILD" DESTDIR="$STAGE" install >"$TDIR/install.log" 2>&1; then
	fail "make install" "$(tail -5 "$TDIR/install.log")"
	exit 1
fi
pass "make install DESTDIR=… put kprofd, kprofctl, the units and the config in place"

systemd-nspawn -D / --volatile=yes --register=no --keep-unit --console=passive -M "$M" \
	--capability=CAP_BPF,CAP_PERFMON,CAP_SYS_PTRACE,CAP_DAC_READ_SEARCH,CAP_SYSLOG,CAP_SYS_ADMIN \
	--system-call-filter='bpf perf_event_open' \
	--bind-ro="$STAGE/usr/local:/usr/local" --bind="$STAGE/etc/kprofd:/etc/kprofd" \
	--bind-ro="$PWD/$BUILD:/kprof" \
	-b systemd.firstboot=off >"$TDIR/nspawn.log" 2>&1 &
NSPAWN=$!
leader() { LEADER=$(pgrep -P "$NSPAWN" -x systemd); [ -n "$LEADER" ]; }
in_ct() { nsenter -t "$LEADER" -a "$@"; }
booted() { in_ct systemctl is-system-running --wait 2>/dev/null | grep -qE '^(running|degraded)$'; }
if ! wait_for 30 leader || ! wait_for 30 booted; then
	if kill -0 "$NSPAWN" 2>/dev/null; then
		fail "boot" "the container did not reach running in 30 s: $(tail -5 "$TDIR/nspawn.log")"
		exit 1
	fi
	skip "systemd under nspawn" "systemd-nspawn cannot boot this tree here: $(grep -v '^$' "$TDIR/nspawn.log" | tail -3 | tr '\n' ' ')"
	exit 0
fi
pass "the container booted to '$(in_ct systemctl is-system-running)' in $((SECONDS - T0)) s"
kd() { in_ct /usr/local/bin/kprofctl "$@"; }
prop() { in_ct systemctl show -P "$1" kprofd.service; }

# --- Socket activation: nothing runs until the first connection. The container's /etc starts
# empty, so its first boot applied the presets (Debian's: enable everything), which enabled and
# started kprofd.service at boot; disabled first, then the steps of docs/SERVICE.md.
in_ct systemctl disable -q --now kprofd.service kprofd.socket
in_ct systemd-sysusers
in_ct systemctl daemon-reload
check "systemctl enable --now kprofd.socket" in_ct systemctl enable -q --now kprofd.socket
# (disable --now returns while a slow kprofd may still be stopping: "deactivating" first.)
inactive() { [ "$(prop ActiveState)" = inactive ]; }
if wait_for 15 inactive; then pass "kprofd.service is not running before a client connects"
else fail "kprofd.service inactive before a client" "ActiveState $(prop ActiveState)"; fi
if out=$(kd status 2>&1); then pass "the first kprofctl status is answered (kprofd started by the socket)"
else fail "socket activation" "$out $(in_ct journalctl -u kprofd --no-pager | tail -5)"; fi
check "kprofd.service is active after that connection" [ "$(prop ActiveState)" = active ]
in_ct journalctl -u kprofd --no-pager -o cat >"$TDIR/journal1"
grep -q "socket passed by systemd" "$TDIR/journal1" && pass "kprofd uses the socket systemd passed" ||
	fail "passed socket" "$(head -5 "$TDIR/journal1")"

# --- Type=notify, STATUS=, the watchdog setting.
check "Type=notify" [ "$(prop Type)" = notify ]
status_text() { [ -n "$(prop StatusText)" ] && [ "$(prop StatusText)" != "ready, no targets" ]; }
if wait_for 5 status_text; then pass "STATUS= reaches systemd: '$(prop StatusText)'"
else fail "StatusText" "'$(prop StatusText)'"; fi
check "WatchdogUSec is the unit's 30 s" [ "$(prop WatchdogUSec)" = 30s ]

# --- The journal has kprofd's lines, with priorities.
grep -q "kprofd .* ready" "$TDIR/journal1" && pass "journalctl -u kprofd has kprofd's lines" ||
	fail "journal" "$(head -5 "$TDIR/journal1")"
in_ct journalctl -u kprofd -p info --no-pager -o cat | grep -q "ready" &&
	pass "journalctl -p info -u kprofd shows the ready line (priorities reach the journal)" ||
	fail "journal priorities" "$(in_ct journalctl -u kprofd -p info --no-pager | tail -3)"

# --- Names under the hardened unit: minijit (JIT, native) and dd bs=1 (kernel), in the
# container, attached by the container's pids.
# nsenter itself in the background (not through in_ct, whose subshell would leave it behind).
nsenter -t "$LEADER" -a /kprof/minijit --seconds 60 2>"$TDIR/mj.err" >/dev/null &
PIDS+=($!)
nsenter -t "$LEADER" -a dd if=/dev/zero of=/dev/null bs=1 2>/dev/null &
PIDS+=($!)
wait_for 10 grep -q ready "$TDIR/mj.err"
MJ=$(sed -n 's/^minijit: pid \([0-9]*\) ready.*/\1/p' "$TDIR/mj.err")
DD=$(in_ct pgrep -n -x dd)
check "attach minijit (pid $MJ in the container)" kd attach "$MJ" --freq 999
check "attach dd (pid $DD in the container)" kd attach "$DD" --freq 999
enough() { kd list --json | python3 -c "import json, sys
t = json.load(sys.stdin)['targets']
sys.exit(not t or min(x['samples'] for x in t) < 500)"; }
wait_for 20 enough || fail "samples under the unit" "$(kd list 2>&1)"
kinds=$( (kd report "$MJ" --top 0 --json; kd report "$DD" --top 0 --json) | python3 -c "import json,sys
kinds = set()
for line in sys.stdin:
    kinds |= {x['kind'] for x in json.loads(line)['entries'] if not x['function'].startswith('[') and x['kind'] != 'unknown'}
print(' '.join(sorted(kinds)))")
[ "$kinds" = "jit kernel native" ] && pass "JIT, native and kernel names under the hardened unit ($kinds)" ||
	fail "names under the unit" "got '$kinds'; $(in_ct journalctl -u kprofd --no-pager -o cat | grep -i 'kernel symbols')"
in_ct journalctl -u kprofd --no-pager -o cat | grep -q "kernel symbols: [0-9]* loaded from standard input" &&
	pass "kernel symbols read from the /proc/kallsyms systemd opened (StandardInput=file:)" ||
	fail "kallsyms from stdin" "$(in_ct journalctl -u kprofd --no-pager -o cat | grep 'kernel symbols')"
kd report "$MJ" --top 0 --json | grep -q '"function":"mj_hot"' && pass "mj_hot named" ||
	fail "mj_hot" "$(kd report "$MJ" --top 5 2>&1)"

# --- A service attached by its unit's name, and followed across a restart (attach --unit).
in_ct systemd-run -q --unit kprof-demo.service -p Restart=always -p RestartSec=1 \
	/kprof/minijit --seconds 4
uprop() { in_ct systemctl show -P "$1" kprof-demo.service; }
main_pid() { local p; p=$(uprop MainPID); [ "${p:-0}" != 0 ] && echo "$p"; }
wait_for 10 main_pid
D1=$(main_pid)
out=$(kd attach --unit kprof-demo.service --freq 999 2>&1)
sampled() { [ "$(kd list --json | python3 -c "import json,sys
print(sum(t['samples'] for t in json.load(sys.stdin)['targets'] if t['pid'] == $1))")" -gt 200 ]; }
if [ -n "$D1" ] && wait_for 10 sampled "$D1"; then
	pass "attach --unit kprof-demo.service: its main process (pid $D1) sampled ($out)"
else fail "attach --unit" "$out; $(kd list)"; fi
restarted() { local p; p=$(main_pid) && [ "$p" != "$D1" ]; }
wait_for 15 restarted
D2=$(main_pid)
if [ -n "$D2" ] && [ "$D2" != "$D1" ] && wait_for 10 sampled "$D2" &&
	kd report "$D2" --top 3 | grep -q mj_hot; then
	pass "the service restarted by systemd (pid $D2): profiled again, no PID typed"
else fail "unit restart" "pids $D1 -> ${D2:-?}; $(kd status | grep -A1 watching); $(kd list --all | head -6)"; fi
kd detach --unit kprof-demo.service >/dev/null
in_ct systemctl stop kprof-demo.service

# --- systemctl reload: SIGHUP re-reads /etc/kprofd/kprofd.conf. With it, [http] listen set
# while the unit has no network (no kprofd-http.conf drop-in; issue 29): the reload says it did
# not apply it, and the restarts below start kprofd without the endpoint, saying how to enable it.
sed -i -e 's/^frequency = .*/frequency = 77/' -e 's/^listen =.*/listen = 127.0.0.1:6061/' \
	-e 's/^insecure_no_auth = .*/insecure_no_auth = yes/' "$STAGE/etc/kprofd/kprofd.conf"
check "systemctl reload kprofd" in_ct systemctl reload kprofd
reloaded() { in_ct journalctl -u kprofd --no-pager -o cat | grep -q "reloaded the settings: 77 Hz default"; }
wait_for 10 reloaded && pass "the reload re-read the config (77 Hz default)" ||
	fail "reload" "$(in_ct journalctl -u kprofd --no-pager -o cat | tail -3)"
in_ct journalctl -u kprofd --no-pager -o cat | grep -q "reload: NOT applied: \[http\] listen.*restart.*endpoint stays off" &&
	pass "the reload says the [http] listen it read applies only at restart" ||
	fail "reload of [http] listen" "$(in_ct journalctl -u kprofd --no-pager -o cat | tail -3)"
check "still the same process after the reload" [ "$(prop NRestarts)" = 0 ]

# --- A restart keeps the profiles of ended targets (the state directory).
n_before=$(kd list --all --json | python3 -c "import json,sys
print([t['samples'] for t in json.load(sys.stdin)['targets'] if t['pid'] == $MJ][0])")
# A watchdog of 2 s from now on, to see the pings and a wedged kprofd restarted.
in_ct mkdir -p /run/systemd/system/kprofd.service.d
printf '[Service]\nWatchdogSec=2s\n' | in_ct tee /run/systemd/system/kprofd.service.d/wd.conf >/dev/null
in_ct systemctl daemon-reload
# A long-running process attached by PID goes on being profiled through the restarts (issue 29).
nsenter -t "$LEADER" -a /kprof/minijit --seconds 300 2>"$TDIR/lj.err" >/dev/null &
wait_for 10 grep -q ready "$TDIR/lj.err"
LJ=$(sed -n 's/^minijit: pid \([0-9]*\) ready.*/\1/p' "$TDIR/lj.err")
check "attach a long-running minijit (pid $LJ)" kd attach "$LJ"
# lj FIELD: LJ's field in list --all --json.
lj() { kd list --all --json | python3 -c "import json,sys
t = [t for t in json.load(sys.stdin)['targets'] if t['pid'] == $LJ]
print(t[-1]['$1'] if t else '')"; }
lj_more() { local v; v=$(lj samples); [ "$(lj state)" = attached ] && [ -n "$v" ] && [ "$v" -gt "$1" ]; }
wait_for 20 lj_more 10 || fail "long-running minijit sampled" "$(kd list --all 2>&1)"
check "systemctl restart kprofd (with [http] listen, no network drop-in)" in_ct systemctl restart kprofd
check "kprofd.service active after that restart" [ "$(prop ActiveState)" = active ]
in_ct journalctl -u kprofd --no-pager -o cat | grep -q "http: endpoint 127.0.0.1:6061 OFF: no network sockets here.*kprofd-http.conf.*/etc/systemd/system/kprofd.service.d/http.conf" &&
	pass "kprofd started without the endpoint and names the drop-in kprofd-http.conf to enable it" ||
	fail "http endpoint without the drop-in" "$(in_ct journalctl -u kprofd --no-pager -o cat | grep http | tail -3)"
lj_before=$(lj samples)
if wait_for 30 lj_more "$((lj_before + 20))" && [ "$(lj resumes)" = 1 ]; then
	pass "after systemctl restart, the running process is attached again and sampled ($(lj samples) samples, its profile continued)"
else fail "attached again after systemctl restart" "$(kd list --all 2>&1)"; fi
kept() { kd list --all --json | python3 -c "import json,sys
t = [t for t in json.load(sys.stdin)['targets'] if t['pid'] == $MJ]
sys.exit(not (t and t[0]['samples'] >= $n_before))"; }
if wait_for 10 kept && kd report "$MJ" --top 0 --json | grep -q '"function":"mj_hot"'; then
	pass "after the restart, minijit's profile is kept ($n_before+ samples, mj_hot named)"
else fail "profile kept across the restart" "$(kd list --all 2>&1)"; fi
in_ct ls /var/lib/kprofd/profiles | grep -q "^$MJ-" && pass "saved in /var/lib/kprofd/profiles (StateDirectory=)" ||
	fail "state directory" "$(in_ct ls -la /var/lib/kprofd/profiles 2>&1)"

# --- The watchdog: pings arrive (their timestamp moves), and a stopped kprofd is restarted.
check "WatchdogUSec 2 s after the drop-in" [ "$(prop WatchdogUSec)" = 2s ]
w0=$(prop WatchdogTimestampMonotonic)
sleep 1.5
w1=$(prop WatchdogTimestampMonotonic)
[ -n "$w0" ] && [ "$w1" -gt "$w0" ] && pass "kprofd pings the watchdog (last ping moved ${w0} -> ${w1} us)" ||
	fail "watchdog pings" "'$w0' -> '$w1'"
pid0=$(prop MainPID)
in_ct kill -STOP "$pid0"
restarted() { [ "$(prop NRestarts)" -ge 1 ] && [ "$(prop ActiveState)" = active ] && [ "$(prop MainPID)" != "$pid0" ]; }
if wait_for 15 restarted; then pass "a stopped kprofd misses its pings and systemd restarts it (watchdog)"
else fail "watchdog restart" "NRestarts=$(prop NRestarts) Result=$(prop Result) $(prop ActiveState)"; fi
in_ct journalctl -u kprofd --no-pager -o cat | grep -qi "watchdog timeout" &&
	pass "the journal says it was the watchdog" || fail "watchdog in the journal" "$(in_ct journalctl -u kprofd --no-pager -o cat | tail -5)"
wait_for 10 kd status >/dev/null || fail "kprofd answers after the watchdog restart" "$(kd status 2>&1)"
if wait_for 20 lj_more 20 && [ "$(lj resumes)" = 2 ]; then
	pass "after the watchdog's kill, the running process is attached again and sampled ($(lj samples) samples)"
else fail "attached again after the watchdog kill" "$(kd list --all 2>&1)"; fi

# --- Exposure, as systemd in the container sees the installed unit.
score=$(in_ct systemd-analyze security kprofd.service 2>/dev/null | sed -n 's/.*exposure level for kprofd.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && python3 -c "import sys; sys.exit(not float('$score') <= 2.5)"; then
	pass "systemd-analyze security kprofd.service: $score (at most 2.5)"
else fail "exposure" "'$score'"; fi

# --- The pprof endpoint under the hardened unit, with the network drop-in (after the exposure
# check: the drop-in opens the loopback network): a whole-host scrape
# is answered, its pprof made by the kprofd-build thread (the unit's SystemCallFilter= and
# MemoryDenyWriteExecute= let it run), counted in status.
in_ct install -D -m 0644 /usr/local/share/kprof/kprofd-http.conf /run/systemd/system/kprofd.service.d/http.conf
in_ct systemctl daemon-reload
check "systemctl restart kprofd (with the network drop-in)" in_ct systemctl restart kprofd
wait_for 10 kd status >/dev/null || fail "kprofd answers after the restart" "$(kd status 2>&1)"
scrape_ct() { in_ct python3 -c 'import urllib.request, gzip, sys
b = urllib.request.urlopen("http://127.0.0.1:6061/debug/pprof/profile?seconds=1", timeout=30).read()
sys.exit(0 if b"mj_" in gzip.decompress(b) else 1)'; }
built_ct() { kd status --json | python3 -c "import json,sys; sys.exit(0 if json.load(sys.stdin)['http'].get('built_off_loop', 0) >= 1 else 1)"; }
if wait_for 20 scrape_ct && built_ct; then
	pass "under the unit: a whole-host scrape answered 200 with minijit's functions, built off the loop"
else fail "scrape under the unit" "$(in_ct journalctl -u kprofd --no-pager -o cat | grep -i http | tail -3)"; fi

stop_machine
[ -z "$(findmnt -rn -o TARGET | grep -F "$TDIR")" ] && pass "container powered off, no mount left" ||
	fail "cleanup" "$(findmnt -rn -o TARGET | grep -F "$TDIR")"
echo "took $((SECONDS - T0)) s"
finish
