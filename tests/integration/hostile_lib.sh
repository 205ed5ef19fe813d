# tests/integration/hostile_lib.sh: helpers of the test_hostile_*.sh tests (sourced after lib.sh).
# shellcheck shell=bash
#
# Those tests play an unprivileged user (nobody, 65534) who attacks kprofd through the files,
# namespaces and processes it is made to read. kprofd runs as systemd runs it: its own session,
# no controlling terminal (setsid), no core dump. A check that kills or hangs kprofd must not
# take the next ones down with it: ensure_daemon starts a fresh one when the last one is dead or
# stuck, and the cleanup kills a stuck one with SIGKILL instead of waiting for it forever.
NOBODY=65534
HFIX=$(cd "$(dirname "$0")/../fixtures/hostile" && pwd)
# Absolute paths: the daemon and the nobody helpers do not run in this directory.
KPROFD=$(realpath "$KPROFD")
KPROFCTL=$(realpath "$KPROFCTL")
MINIJIT=$(realpath "$MINIJIT")
# python3 at a path nobody can run (a pyenv shim under /root is not).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
BIN=$TDIR/bin # helper programs compiled here, readable and runnable by nobody
mkdir -p "$BIN"
chmod 755 "$BIN"
# NB: a nobody-writable directory, for files nobody must own.
NB=$TDIR/nobody
mkdir -p "$NB"
chown $NOBODY:$NOBODY "$NB"
UMOUNTS=()
PRE_DAEMON=()

hostile_cleanup() {
	local m
	# A daemon blocked for ever (a FIFO) would make lib.sh's cleanup wait for ever: SIGKILL it.
	if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null &&
		! timeout 3 "$KPROFCTL" --socket "$SOCK" status >/dev/null 2>&1; then
		kill -9 "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
		DAEMON_PID=
	fi
	for m in "${UMOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
	cleanup
}
trap hostile_cleanup EXIT

# As nobody. A background job must be started with "${AS_NOBODY[@]}" CMD &, not with the
# function (that would put a root subshell at $!).
AS_NOBODY=(setpriv "--reuid=$NOBODY" "--regid=$NOBODY" --clear-groups)
as_nobody() { "${AS_NOBODY[@]}" "$@"; }
nctl() { as_nobody "$KPROFCTL" --socket "$SOCK" "$@"; }
# tctl ARGS: ctl that gives up after 3 s (a stuck daemon must not stop the test).
tctl() { timeout 3 "$KPROFCTL" --socket "$SOCK" "$@"; }

# build NAME [CFLAGS...]: compile tests/fixtures/hostile/NAME.c into $BIN/NAME.
build() {
	local name=$1
	shift
	[ -x "$BIN/$name" ] || cc -O0 -g -o "$BIN/$name" "$HFIX/$name.c" "$@"
}

# start_daemon_setsid [KPROFD ARGS...]: kprofd as systemd starts it, in a session of its own
# with no controlling terminal, core dumps off; DAEMON_PID is kprofd's pid. PRE_DAEMON (an
# array) is put before kprofd, e.g. (setpriv --bounding-set=...).
start_daemon_setsid() {
	(
		ulimit -c 0
		exec setsid "${PRE_DAEMON[@]}" "$KPROFD" --socket "$SOCK" --state-dir "${STATE_DIR:-$TDIR/state}" "$@" \
			</dev/null >>"$TDIR/kprofd.log" 2>&1
	) &
	DAEMON_PID=$!
	# The subshell becomes setsid, then kprofd (same pid); setsid forks first when it leads its
	# process group: then kprofd is its child.
	DAEMON_SH=$DAEMON_PID
	if ! wait_for 10 find_daemon; then
		echo "kprofd did not start"
		tail -20 "$TDIR/kprofd.log"
		return 1
	fi
	if ! wait_for 20 tctl status; then
		echo "kprofd did not come up:"
		tail -20 "$TDIR/kprofd.log"
		return 1
	fi
}

find_daemon() {
	local c
	if [ "$(readlink "/proc/$DAEMON_SH/exe")" = "$KPROFD" ]; then DAEMON_PID=$DAEMON_SH; return 0; fi
	for c in $(pgrep -P "$DAEMON_SH"); do
		if [ "$(readlink "/proc/$c/exe")" = "$KPROFD" ]; then DAEMON_PID=$c; return 0; fi
	done
	return 1
}

daemon_alive() { [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; }
daemon_ok() { daemon_alive && tctl status >/dev/null 2>&1; }

# how_died: "exit status N" / "killed by SIGX" for a daemon that is gone (reaps it).
how_died() {
	local rc
	wait "$DAEMON_PID" 2>/dev/null
	rc=$?
	if [ "$rc" -gt 128 ]; then echo "killed by SIG$(kill -l $((rc - 128)))"; else echo "exit status $rc"; fi
}

# ensure_daemon [ARGS...]: a fresh kprofd if the current one is dead or does not answer.
ensure_daemon() {
	if daemon_ok; then return 0; fi
	if [ -n "${DAEMON_PID:-}" ]; then
		kill -9 "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	DAEMON_PID=
	start_daemon_setsid "$@"
}

# restart_daemon [ARGS...]: stop the current kprofd (SIGKILL if it does not stop in 5 s) and
# start a fresh one.
restart_daemon() {
	if daemon_alive; then
		kill -TERM "$DAEMON_PID"
		wait_for 5 eval '! kill -0 "$DAEMON_PID" 2>/dev/null' || kill -9 "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
	fi
	DAEMON_PID=
	start_daemon_setsid "$@"
}

# stat_field PID N: field N of /proc/PID/stat, counted after the last ')' (comm may hold any
# byte): 3 state, 4 ppid, 5 pgrp, 6 session, 7 tty_nr.
stat_field() {
	local s
	s=$(cat "/proc/$1/stat") || return 1
	s=${s##*) }
	echo "$s" | cut -d' ' -f$(($2 - 2))
}

# rss_kb PID: VmRSS in KiB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# tfield PID FIELD [AS]: a field of the target from `list --all --json` (as root, or as nobody
# with AS=nobody).
tfield() {
	local c=ctl
	[ "${3:-}" = nobody ] && c=nctl
	$c list --all --json | python3 -c "import json,sys
for t in json.load(sys.stdin)['targets']:
    if t['pid'] == $1: print(t['$2'])"
}
tfield_is() { [ "$(tfield "$1" "$2")" = "$3" ]; }
tfield_ge() { local v; v=$(tfield "$1" "$2"); [ -n "$v" ] && [ "$v" -ge "$3" ]; }

# ready_pid FILE: the pid in a "...: pid N ready" line of FILE (helpers print one on stderr).
ready_pid() { sed -nE 's/.*pid ([0-9]+) ready.*/\1/p' "$1" | head -1; }
has_ready() { [ -n "$(ready_pid "$1")" ]; }

# host_pid NSPID EXE: the host pid of the process running EXE whose innermost pid is NSPID.
host_pid() {
	local f
	for f in /proc/[0-9]*/status; do
		if grep -qP "^NStgid:\t[0-9]+(\t[0-9]+)*\t$1$" "$f" 2>/dev/null &&
			[ "$(readlink "${f%/status}/exe")" = "$2" ]; then
			f=${f%/status}
			echo "${f#/proc/}"
			return 0
		fi
	done
	return 1
}
