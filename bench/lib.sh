# bench/lib.sh: helpers shared by the benchmark scripts (sourced, not run).

# kprofd_stop PID: SIGTERM, up to 10 s for a clean exit (it saves its profiles), then SIGKILL;
# the process is reaped.
kprofd_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# kprofd_wait_up KPROFCTL SOCK PID: poll `status` for up to 20 s; 1 if kprofd never answered
# or exited meanwhile.
kprofd_wait_up() {
	local ctl=$1 sock=$2 pid=$3 i
	for ((i = 0; i < 200; i++)); do
		"$ctl" --socket "$sock" status >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
