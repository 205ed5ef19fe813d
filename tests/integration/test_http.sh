#!/usr/bin/env bash
# The pprof HTTP endpoint ([http] listen): the real `go tool pprof` as the client names the hot
# function of a minijit (and of Node's hot.js) from /debug/pprof/profile?seconds=3&pid=PID; the
# target listing; clear statuses for bad requests (seconds=0/-1/100000, unknown pid, since=,
# unknown pages, POST); hostile clients (a 100 KB query, a slowloris sending a header byte a
# second, 300 connections at once, missing or wrong bearer tokens); an address other than
# loopback refused without a token. Throughout, kprofd keeps sampling and serving its socket.
# Needs root (BPF) and python3; go tool pprof and node parts skip without them.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "http" "needs root"; exit 0; fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
cat >"$TDIR/kprofd.conf" <<CONF
[http]
listen = 127.0.0.1:$PORT
request_timeout = 3
max_seconds = 60
CONF
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }
grep -q "http: pprof endpoint on 127.0.0.1:$PORT" "$TDIR/kprofd.log" && pass "listening, said in the log" ||
	fail "listening" "$(tail -3 "$TDIR/kprofd.log")"

# status URL [CURL ARGS]: the HTTP status; the body goes to $TDIR/body.
status() { local u=$1; shift; curl -s -o "$TDIR/body" -w '%{http_code}' --max-time 20 "$@" "$u"; }
# expect NAME WANT URL [CURL ARGS]: the status and a one-line text body.
expect() {
	local name=$1 want=$2 got; shift 2
	got=$(status "$@")
	if [ "$got" = "$want" ]; then pass "$name: $want ($(head -c 160 "$TDIR/body"))"
	else fail "$name" "status $got, not $want: $(head -c 300 "$TDIR/body")"; fi
}

start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
check "attach minijit" ctl attach "$MJ_PID" --freq 199
wait_for 10 at_least_samples "$MJ_PID" 100 || fail "samples arrive" "$(ctl list)"

# The listing.
expect "targets listing" 200 "$URL/debug/pprof/targets"
python3 - "$TDIR/body" "$MJ_PID" <<'PY' && pass "targets JSON names the minijit" || fail "targets JSON" "$(head -c 300 "$TDIR/body")"
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["targets"] if t["pid"] == int(sys.argv[2])]
assert t and t[0]["state"] == "attached" and t[0]["comm"] == "minijit", t
PY
expect "index" 200 "$URL/debug/pprof/"

# go tool pprof, the real client.
if command -v go >/dev/null; then
	export PPROF_TMPDIR=$TDIR HOME=${HOME:-$TDIR}
	t0=$(date +%s.%N)
	go tool pprof -top "$URL/debug/pprof/profile?seconds=3&pid=$MJ_PID" >"$TDIR/top.txt" 2>"$TDIR/top.err"
	t1=$(date +%s.%N)
	echo "go tool pprof took $(python3 -c "print(round($t1 - $t0, 2))") s for seconds=3"
	head -12 "$TDIR/top.txt"
	first=$(awk '/flat%/{getline; print $NF; exit}' "$TDIR/top.txt")
	[ "$first" = mj_hot ] && pass "go tool pprof -top: mj_hot is the hottest" ||
		fail "go tool pprof names mj_hot" "first row '$first': $(cat "$TDIR/top.err" | tail -3)"
	# 3 s at 199 Hz: about 600 samples, not the whole profile's.
	python3 - "$TDIR/top.txt" <<'PY' && pass "the profile covers the 3 s asked" || fail "3 s of samples" "$(grep -m1 Duration "$TDIR/top.txt")"
import re, sys
t = open(sys.argv[1]).read()
d = re.search(r"Duration: ([\d.]+)s, Total samples = ([\d.]+)(ms|s)", t)
dur, tot = float(d.group(1)), float(d.group(2)) * (1 if d.group(3) == "s" else 1e-3)
print("duration", dur, "cpu", tot)
assert 2.5 <= dur <= 4.5 and 1.5 <= tot <= 4.5
PY
	if command -v node >/dev/null; then
		(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/tests/fixtures/hot.js" 60) >"$TDIR/node.out" 2>"$TDIR/node.err" &
		NP=$!; PIDS+=("$NP")
		if wait_for 15 grep -q ready "$TDIR/node.err" && wait_for 15 grep -q hotFunction "/tmp/perf-$NP.map"; then
			ctl attach "$NP" --freq 199 >/dev/null
			go tool pprof -top "$URL/debug/pprof/profile?seconds=3&pid=$NP" >"$TDIR/ntop.txt" 2>"$TDIR/ntop.err"
			head -8 "$TDIR/ntop.txt"
			awk '/flat%/{getline; print; exit}' "$TDIR/ntop.txt" | grep -q hotFunction &&
				pass "go tool pprof -top: node's hotFunction is the hottest" ||
				fail "node hotFunction" "$(head -12 "$TDIR/ntop.txt" | tail -4) $(tail -2 "$TDIR/ntop.err")"
		else fail "node starts" "$(cat "$TDIR/node.err")"; fi
	else skip "node via go tool pprof" "node is not installed"; fi
else
	skip "go tool pprof" "go is not installed"
fi

# Bad requests: clear statuses, one-line reasons.
for s in 0 -1 100000 abc; do
	expect "seconds=$s" 400 "$URL/debug/pprof/profile?seconds=$s&pid=$MJ_PID"
done
grep -q "1-60" "$TDIR/body" && pass "the seconds bound is named" || fail "seconds bound" "$(cat "$TDIR/body")"
expect "unknown pid" 404 "$URL/debug/pprof/profile?seconds=1&pid=4000000"
expect "no selector" 400 "$URL/debug/pprof/profile?seconds=1"
expect "since= (no time windows)" 400 "$URL/debug/pprof/profile?since=10m&pid=$MJ_PID"
grep -q "time windows" "$TDIR/body" && pass "since= says why" || fail "since= says why" "$(cat "$TDIR/body")"
expect "unknown unit" 404 "$URL/debug/pprof/profile?seconds=1&unit=nope.service"
expect "unknown argument" 400 "$URL/debug/pprof/profile?seconds=1&pid=$MJ_PID&debug=1"
expect "unknown page" 404 "$URL/debug/pprof/heap"
expect "POST" 405 "$URL/debug/pprof/profile?seconds=1&pid=$MJ_PID" -X POST
long=$(python3 -c 'print("a" * 100000)')
got=$(status "$URL/debug/pprof/profile?seconds=1&pid=$MJ_PID&x=$long")
case "$got" in 414 | 431 | 400) pass "100 KB query string: $got" ;; *) fail "100 KB query" "status $got" ;; esac

# Hostile clients, with samples still counted and the socket served meanwhile.
before=$(samples "$MJ_PID")
cat >"$TDIR/hostile.py" <<'PY'
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "slowloris":
    s = socket.create_connection(("127.0.0.1", port))
    req = b"GET /debug/pprof/targets HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    t0 = time.time()
    try:
        for b in req:
            s.send(bytes([b]))
            time.sleep(1)
            if time.time() - t0 > 30: break
        print("still open after", round(time.time() - t0), "s"); sys.exit(1)
    except (BrokenPipeError, ConnectionResetError):
        pass
    print("closed after", round(time.time() - t0, 1), "s")
elif mode == "flood":
    socks = []
    for i in range(300):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError as e:
            print("connect", i, e); break
    # Every socket half-sends a request and then stalls.
    for s in socks:
        try: s.send(b"GET /debug/pprof/targets HTTP/1.1\r\n")
        except OSError: pass
    print(len(socks), "connections opened")
    time.sleep(float(sys.argv[3]))
    for s in socks: s.close()
PY
out=$(python3 "$TDIR/hostile.py" "$PORT" slowloris 2>&1) && pass "slowloris cut: $out" || fail "slowloris" "$out"
python3 "$TDIR/hostile.py" "$PORT" flood 8 >"$TDIR/flood.out" 2>&1 &
FLOOD=$!
sleep 1
check "socket served during the flood" ctl status
# Over the connection limit, MHD closes new connections at once (curl: 000 or a reset): never a
# hang. Once the stalled ones pass request_timeout, the endpoint answers again.
got=$(status "$URL/debug/pprof/targets" --max-time 5)
echo "during the flood: status $got"
if wait_for 10 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 $URL/debug/pprof/targets)\" = 200 ]"; then
	pass "served again within request_timeout of the flood"
else fail "served after the flood" "$(curl -s -m 3 -w '%{http_code}' -o /dev/null "$URL/debug/pprof/targets")"; fi
wait "$FLOOD"; cat "$TDIR/flood.out"
after=$(samples "$MJ_PID")
[ "$after" -gt $((before + 200)) ] && pass "sampling went on ($before -> $after)" || fail "sampling went on" "$before -> $after"
# A profile request whose client leaves: nothing is left behind (the next one works).
curl -s -o /dev/null --max-time 1 "$URL/debug/pprof/profile?seconds=2&pid=$MJ_PID"
expect "a profile after a client left" 200 "$URL/debug/pprof/profile?seconds=1&pid=$MJ_PID"
kill -0 "$DAEMON_PID" && pass "kprofd alive" || fail "kprofd alive" "$(tail -5 "$TDIR/kprofd.log")"
stop_daemon

# A token: required when configured (here on loopback too); none or a wrong one is a 401.
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
TOKEN=$(cat "$TDIR/token")
cat >>"$TDIR/kprofd.conf" <<CONF
token_file = $TDIR/token
CONF
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts with a token" "see log"; exit 1; }
expect "no token" 401 "$URL/debug/pprof/targets"
expect "wrong token" 401 "$URL/debug/pprof/targets" -H "Authorization: Bearer ${TOKEN}x"
expect "token of another scheme" 401 "$URL/debug/pprof/targets" -H "Authorization: Basic $TOKEN"
expect "right token" 200 "$URL/debug/pprof/targets" -H "Authorization: Bearer $TOKEN"
stop_daemon

# Anything but loopback without a token: kprofd does not start, and says why.
printf '[http]\nlisten = 0.0.0.0:%s\n' "$PORT" >"$TDIR/open.conf"
if timeout 20 "$KPROFD" --socket "$TDIR/o.sock" --state-dir "" --config "$TDIR/open.conf" >"$TDIR/open.log" 2>&1; then
	fail "0.0.0.0 without a token refused" "kprofd ran"
elif grep -q "not a loopback address: set \[http\] token_file" "$TDIR/open.log"; then
	pass "0.0.0.0 without a token refused: $(grep -m1 loopback "$TDIR/open.log")"
else fail "0.0.0.0 without a token refused" "$(tail -3 "$TDIR/open.log")"; fi
chmod 644 "$TDIR/token"
printf '[http]\nlisten = 127.0.0.1:%s\ntoken_file = %s\n' "$PORT" "$TDIR/token" >"$TDIR/open.conf"
if ! timeout 20 "$KPROFD" --socket "$TDIR/o.sock" --state-dir "" --config "$TDIR/open.conf" >"$TDIR/open.log" 2>&1 &&
	grep -q "not readable by others" "$TDIR/open.log"; then
	pass "a world-readable token file refused"
else fail "world-readable token refused" "$(tail -3 "$TDIR/open.log")"; fi
finish
