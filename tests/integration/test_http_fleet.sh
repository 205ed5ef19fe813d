#!/usr/bin/env bash
# Issue 31: kprofd scraped as fleet back ends scrape a Go service. GET
# /debug/pprof/profile?seconds=N with no selector answers one pprof of every profiled process (a
# minijit attached by pid, a Node process of a watched cgroup named like a systemd scope, and the
# native fixture, a target of system-wide mode only), sent byte for byte as Parca, Grafana
# Alloy's pyroscope.scrape and the OpenTelemetry Collector's pprof receiver send it (the token,
# their User-Agent, Accept-Encoding: gzip, a second request on the kept-alive connection);
# `go tool pprof` reads the answer and finds each process under its labels (pid, comm, exe,
# unit, cgroup, runtime) with its hot function; pid=, unit= (a systemd unit, not watched),
# cgroup= and comm= narrow it; unknown arguments are ignored; GET /debug/pprof/ names what is
# served; `kprofctl export --all` (a merged view) carries the same labels.
# Needs root (BPF), python3, go (go tool pprof) and a writable cgroup2 hierarchy.
# Alone: it profiles every process of the host (another runner's are in its counts).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "http fleet" "needs root"; exit 0; fi
if ! command -v go >/dev/null; then skip "http fleet" "go (go tool pprof) is not installed"; exit 0; fi
CGROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
CG=kprof-fleet-$$.scope
if [ -z "$CGROOT" ] || ! mkdir "$CGROOT/$CG" 2>/dev/null; then
	skip "http fleet" "no writable cgroup2 hierarchy (${CGROOT:-none mounted})"; exit 0
fi
trap 'cleanup; for p in $(cat "$CGROOT/$CG/cgroup.procs" 2>/dev/null); do kill -9 "$p"; done; sleep 0.2; rmdir "$CGROOT/$CG" 2>/dev/null' EXIT
CGPATH=/$CG # as /proc/PID/cgroup names it (the cgroup2 mount is the hierarchy's root)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
export KPROF_HTTP_TOKEN=$(cat "$TDIR/token")
AUTH="Authorization: Bearer $KPROF_HTTP_TOKEN"
# No kept profile trimmed while system-wide mode's processes come and go: until the target-list
# walks are safe against trims (issue 25 item 3), a trim in the housekeeping walk is a use after
# free (found by this test's ASan run).
printf '[limits]\nmax_kept = 5000\nmax_kept_per_uid = 5000\n[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\nmax_waiting_per_source = 8\n' \
	"$PORT" "$TDIR/token" >"$TDIR/k.conf"
start_daemon --config "$TDIR/k.conf" || { fail "daemon starts" "see log"; exit 1; }
export PPROF_TMPDIR=$TDIR HOME=${HOME:-$TDIR}
FLEET="$(dirname "$0")/fleet_client.py"

start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
check "attach minijit by pid" ctl attach "$MJ_PID" --freq 199
NP=
if command -v node >/dev/null; then
	sh -c 'echo $$ > "$0/cgroup.procs" && exec node --perf-basic-prof "$1" 120' "$CGROOT/$CG" \
		"$(realpath "$(dirname "$0")/../fixtures/hot.js")" >/dev/null 2>"$TDIR/node.err" &
	NP=$!; PIDS+=("$NP")
	wait_for 15 grep -q ready "$TDIR/node.err" && wait_for 15 grep -q hotFunction "/tmp/perf-$NP.map" ||
		fail "node starts" "$(cat "$TDIR/node.err")"
	check "attach --cgroup (the node's)" ctl attach --cgroup "$CGROOT/$CG" --freq 99
fi
check "attach --all (system-wide)" ctl attach --all --freq 49
"$BUILD/native" --ms 90000 >/dev/null 2>&1 &
NAT=$!; PIDS+=("$NAT")
wait_for 20 bash -c "$KPROFCTL --socket $SOCK list --json | grep -q '\"pid\":$NAT,'" ||
	fail "system-wide mode makes the native fixture a target" "$(ctl list | head)"
wait_for 10 at_least_samples "$MJ_PID" 50

# raw FILE: go tool pprof -raw's samples, one line "COUNT pid=.. comm=.. ... leaf=FUNC".
raw() {
	go tool pprof -raw "$1" 2>/dev/null | python3 2>/dev/null -c '
import re, sys
lines = sys.stdin.read().split("\n")
funcs, i = {}, 0
for l in lines:
    m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", l)
    if m: funcs[m.group(1)] = m.group(2)
cur = None
for l in lines:
    m = re.match(r"\s+(\d+)\s+\d+: ([\d ]+)$", l)
    if m:
        if cur: print(cur)
        cur = m.group(1) + " leaf=" + funcs.get(m.group(2).split()[0], "?")
    elif cur is not None and ":[" in l:
        cur += " " + " ".join("%s=%s" % kv for kv in re.findall(r"(\w+):\[([^\]]*)\]", l))
if cur: print(cur)'
}
# has FILE WORDS...: some sample line holds every word.
has() { local f=$1; shift; raw "$f" | awk -v w="$*" 'BEGIN { n = split(w, a, " ") } { ok = 1; for (i = 1; i <= n; i++) if (index(" " $0 " ", " " a[i] " ") == 0) ok = 0; if (ok) { f = 1; exit } } END { exit !f }'; }

# The three scrape at once, as a fleet does (and the narrowing requests below too).
SCRAPES=()
for s in parca alloy otel; do
	timeout 60 python3 "$FLEET" "$PORT" "$s" 3 "$TDIR/$s.pb.gz" >"$TDIR/$s.out" 2>&1 &
	SCRAPES+=($!)
done
wait "${SCRAPES[@]}"
for s in parca alloy otel; do
	out=$(cat "$TDIR/$s.out")
	read -r code ctype bytes gz code2 <<<"$out"
	if [ "$code" = 200 ] && [ "$ctype" = application/octet-stream ] && [ "$gz" = True ] && [ "$code2" = 200 ]; then
		pass "$s's request, byte for byte: 200, gzip'd pprof of $bytes bytes; again on the same connection: 200"
	else fail "$s's request" "$out"; continue; fi
	go tool pprof -top "$TDIR/$s.pb.gz" >"$TDIR/$s.top" 2>&1 || fail "$s: go tool pprof reads it" "$(tail -2 "$TDIR/$s.top")"
done
P=$TDIR/alloy.pb.gz
has "$P" "pid=$MJ_PID" "comm=minijit" "runtime=jit" "leaf=mj_hot" "exe=$(realpath "$MINIJIT")" &&
	pass "whole host: the minijit's samples labelled pid, comm, exe, runtime=jit, its mj_hot among them" ||
	fail "minijit labelled" "$(raw "$P" | grep "pid=$MJ_PID" | head -3)"
if [ -n "$NP" ]; then
	has "$P" "pid=$NP" "comm=node" "runtime=node" "unit=$CG" "cgroup=$CGPATH" "leaf=JS:*hotFunction" &&
		pass "whole host: the watched node labelled runtime=node, unit=$CG, cgroup=$CGPATH, with hotFunction" ||
		fail "node labelled" "$(raw "$P" | grep "pid=$NP" | head -3)"
fi
has "$P" "pid=$NAT" "comm=native" "runtime=native" &&
	pass "whole host: system-wide mode's native fixture labelled (runtime=native)" ||
	fail "native labelled" "$(raw "$P" | grep "pid=$NAT" | head -3); targets: $(ctl list | grep -c .)"
n=$(raw "$P" | grep -o ' pid=[0-9]*' | sort -u | wc -l)
echo "the whole-host profile holds $n processes"

# Narrowing, and unknown arguments ignored: the requests sent at once (they wait 2 s each; the
# config allows 8 from this one address), their answers checked once all are in.
pids() { raw "$1" | grep -o ' pid=[0-9]*' | sort -u | cut -d= -f2 | tr '\n' ' '; }
SCRAPES=()
# scrape N QUERY: a seconds=2 request with QUERY, answer in $TDIR/n$N.pb.gz, status in n$N.out.
scrape() {
	timeout 60 python3 "$FLEET" "$PORT" parca 2 "$TDIR/n$1.pb.gz" "$2" >"$TDIR/n$1.out" 2>&1 &
	SCRAPES+=($!)
}
scrape 1 "&pid=$MJ_PID&debug=1&labels=x"
scrape 2 "&comm=minijit"
if [ -n "$NP" ]; then
	scrape 3 "&unit=$CG"
	scrape 4 "&cgroup=$CGPATH"
	scrape 5 "&cgroup=$CGPATH&comm=node"
fi
wait "${SCRAPES[@]}"
narrow() { # NAME N WANT_PIDS
	local got
	out=$(cat "$TDIR/n$2.out")
	got=$(pids "$TDIR/n$2.pb.gz")
	[ "${out%% *}" = 200 ] && [ "$got" = "$3 " ] && pass "$1: only pid $3" || fail "$1" "$out; pids '$got', not '$3'"
}
narrow "pid= with an unknown argument" 1 "$MJ_PID"
# comm=: every process of that name (other minijits on this machine too: system-wide mode).
out=$(cat "$TDIR/n2.out")
comms=$(raw "$TDIR/n2.pb.gz" | grep -o ' comm=[^ ]*' | sort -u | tr -d ' ')
[ "${out%% *}" = 200 ] && [ "$comms" = comm=minijit ] && raw "$TDIR/n2.pb.gz" | grep -q " pid=$MJ_PID " &&
	pass "comm=minijit: only minijits ($(pids "$TDIR/n2.pb.gz"))" || fail "comm=minijit" "$out; $comms"
if [ -n "$NP" ]; then
	narrow "unit= (a systemd scope's name, not a watch's)" 3 "$NP"
	narrow "cgroup=" 4 "$NP"
	narrow "cgroup= and comm= together" 5 "$NP"
fi
got=$(curl -s -o "$TDIR/idx" -w '%{http_code}' -H "$AUTH" "$URL/debug/pprof/")
[ "$got" = 200 ] && grep -q "/debug/pprof/profile?seconds=N" "$TDIR/idx" && grep -q "/debug/pprof/targets" "$TDIR/idx" &&
	pass "GET /debug/pprof/ names what is served" || fail "index" "$got $(head -3 "$TDIR/idx")"

# export of a merged view (system-wide mode's processes) carries the labels too.
ctl export --all -o "$TDIR/exp.pb.gz"
n=$(pids "$TDIR/exp.pb.gz" | wc -w)
unl=$(raw "$TDIR/exp.pb.gz" | awk '!/ pid=[0-9]/ || !/ comm=/ || !/ runtime=/' | wc -l)
[ "$n" -ge 2 ] && [ "$unl" = 0 ] &&
	pass "export --all: every sample labelled with its process (pid, comm, runtime; $n processes)" ||
	fail "export --all labels" "$n processes, $unl samples unlabelled: $(raw "$TDIR/exp.pb.gz" | head -2)"
ctl detach --all >/dev/null 2>&1
finish
