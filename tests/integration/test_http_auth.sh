#!/usr/bin/env bash
# Issue 25 item 4: kprofd serves no profile over TCP without authentication. With [http] listen
# set and no token_file, on loopback too, the endpoint stays off (kprofd runs on; the log says
# how to turn it on); so does a token file others may read or write. With a token, uid 65534
# (any local user) gets 401 with WWW-Authenticate for no token, a wrong one (shorter, longer,
# one byte off, another scheme), on every page, and a seconds=300 request without it is refused
# before it waits; every 401 is counted in kprofctl status. The loudly named opt-out
# insecure_no_auth = yes serves loopback without a token (a warning in the log; go tool pprof
# fetching the URL itself) and is refused for any other address.
# Needs root (BPF), python3 and setpriv.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "http auth" "needs root"; exit 0; fi
if ! command -v setpriv >/dev/null; then skip "http auth" "setpriv (util-linux) missing"; exit 0; fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
chmod 755 "$TDIR"
mkdir -m 777 "$TDIR/n"
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TDIR/token"
chmod 600 "$TDIR/token"
TOKEN=$(cat "$TDIR/token")
# code URL [CURL ARGS]: the status as uid 65534 (000: no connection); headers in $TDIR/n/hdr.
code() {
	local u=$1; shift
	rm -f "$TDIR/n/body" "$TDIR/n/hdr"
	setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -o "$TDIR/n/body" -D "$TDIR/n/hdr" \
		-w '%{http_code}' --max-time 20 "$@" "$u"
}
# run_with NAME CONF: kprofd with [http] CONF; passes NAME when it serves its socket.
run_with() {
	printf '[http]\n%b\n' "$2" >"$TDIR/k.conf"
	: >"$TDIR/kprofd.log"
	start_daemon --config "$TDIR/k.conf" && pass "$1: kprofd runs" || fail "$1: kprofd runs" "$(tail -3 "$TDIR/kprofd.log")"
}
# off NAME: the endpoint is off, and the log says so and how to turn it on.
off() {
	local c
	c=$(code "$URL/debug/pprof/targets")
	if [ "$c" = 000 ] && grep -q "OFF:.*token_file = FILE" "$TDIR/kprofd.log"; then
		pass "$1: endpoint off: $(grep -m1 -o 'OFF:.*' "$TDIR/kprofd.log" | head -c 150)"
	else fail "$1: endpoint off" "status $c; $(tail -3 "$TDIR/kprofd.log")"; fi
}

run_with "loopback without a token" "listen = 127.0.0.1:$PORT"
off "loopback without a token"
stop_daemon
run_with "0.0.0.0 without a token" "listen = 0.0.0.0:$PORT"
off "0.0.0.0 without a token"
stop_daemon
for m in 644 620; do
	chmod $m "$TDIR/token"
	run_with "token file mode $m" "listen = 127.0.0.1:$PORT\ntoken_file = $TDIR/token"
	off "token file mode $m"
	grep -q "token file $TDIR/token: must be" "$TDIR/kprofd.log" && pass "mode $m: the log says why" ||
		fail "mode $m: why" "$(grep token "$TDIR/kprofd.log")"
	stop_daemon
done
chmod 600 "$TDIR/token"
chown 65534 "$TDIR/token"
run_with "token file of another user" "listen = 127.0.0.1:$PORT\ntoken_file = $TDIR/token"
off "token file of another user"
stop_daemon
chown 0 "$TDIR/token"

# With the token.
run_with "loopback with a token" "listen = 127.0.0.1:$PORT\ntoken_file = $TDIR/token"
start_minijit --seconds 60 || { fail "minijit starts" ""; exit 1; }
check "attach minijit" ctl attach "$MJ_PID" --freq 99
u0=$(ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["unauthorized"])')
n=0
for h in "" "Authorization: Bearer" "Authorization: Bearer ${TOKEN:0:-1}" "Authorization: Bearer ${TOKEN}x" \
	"Authorization: Bearer ${TOKEN:0:-1}$(printf '%s' "${TOKEN: -1}" | tr 'A-Za-z0-9' 'B-ZAb-za1-90')" \
	"Authorization: Basic $TOKEN" "Authorization: $TOKEN" "X-Token: $TOKEN"; do
	for p in /debug/pprof/targets "/debug/pprof/profile?seconds=300&pid=$MJ_PID" /debug/pprof/ /nope; do
		c=$(code "$URL$p" ${h:+-H "$h"})
		n=$((n + 1))
		if [ "$c" != 401 ] || ! grep -qi '^WWW-Authenticate: Bearer realm="kprofd"' "$TDIR/n/hdr" ||
			grep -q '"targets"' "$TDIR/n/body"; then
			fail "401 for '${h:0:30}...' on $p" "status $c: $(head -c 200 "$TDIR/n/body")"
			break 2
		fi
	done
done
[ "$n" = 32 ] && pass "no, short, long, one-byte-off and other-scheme tokens: 401 with WWW-Authenticate on every page (32 requests, a seconds=300 one refused at once)"
u1=$(ctl status --json | python3 -c 'import json, sys; h = json.load(sys.stdin)["http"]; print(h["unauthorized"], h["waiting"], h["token"])')
[ "$u1" = "$((u0 + 32)) 0 True" ] && pass "the 401s counted in status (unauthorized $u0 -> ${u1%% *}), none waiting" ||
	fail "401s counted" "$u0 -> $u1"
ctl status | grep -q "^http: .*(token).*unauthorized (401)" && pass "status text: $(ctl status | grep '^http:')" ||
	fail "status text" "$(ctl status | grep http)"
c=$(code "$URL/debug/pprof/targets" -H "Authorization: Bearer $TOKEN")
[ "$c" = 200 ] && grep -q "\"pid\":$MJ_PID" "$TDIR/n/body" && pass "the right token: 200" || fail "the right token" "status $c"
c=$(code "$URL/debug/pprof/profile?seconds=1&pid=$MJ_PID" -H "authorization: bearer $TOKEN")
[ "$c" = 200 ] && pass "header name and scheme in any case (RFC 7235): 200" || fail "case" "status $c"
ctl detach "$MJ_PID" >/dev/null # else it is attached again at the next start (test_restart.sh)
stop_daemon

# The opt-out: loopback only, loudly.
run_with "insecure_no_auth on loopback" "listen = 127.0.0.1:$PORT\ninsecure_no_auth = yes"
grep -q "INSECURE: insecure_no_auth = yes" "$TDIR/kprofd.log" && pass "the opt-out warned in the log" ||
	fail "opt-out warning" "$(tail -3 "$TDIR/kprofd.log")"
ctl status | grep -q "^http: .*NO AUTHENTICATION" && pass "status says NO AUTHENTICATION" || fail "status no auth" "$(ctl status | grep http)"
check "attach minijit" ctl attach "$MJ_PID" --freq 199
if command -v go >/dev/null; then
	export PPROF_TMPDIR=$TDIR HOME=${HOME:-$TDIR}
	go tool pprof -top "$URL/debug/pprof/profile?seconds=2&pid=$MJ_PID" >"$TDIR/top.txt" 2>"$TDIR/top.err"
	first=$(awk '/flat%/{getline; print $NF; exit}' "$TDIR/top.txt")
	[ "$first" = mj_hot ] && pass "go tool pprof fetches the URL itself: mj_hot" ||
		fail "go tool pprof" "'$first' $(tail -2 "$TDIR/top.err")"
else
	c=$(code "$URL/debug/pprof/targets")
	[ "$c" = 200 ] && pass "served without a token" || fail "served without a token" "status $c"
fi
stop_daemon
run_with "insecure_no_auth on 0.0.0.0" "listen = 0.0.0.0:$PORT\ninsecure_no_auth = yes"
off "insecure_no_auth on 0.0.0.0"
grep -q "loopback addresses only" "$TDIR/kprofd.log" && pass "the opt-out is for loopback only" ||
	fail "opt-out loopback only" "$(grep http "$TDIR/kprofd.log")"
finish
