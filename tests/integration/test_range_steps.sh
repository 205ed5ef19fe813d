#!/usr/bin/env bash
# A --since/--until range merged in steps between kprofd's other work ([windows] step_ms; here 0:
# one window a step, so every range of several windows takes several loop iterations). The
# ranged profile equals the whole one (a detached target, all its windows); `status` counts the
# ranges built in steps; several clients asking at once each get the right answer; a client that
# goes away while its range is being merged costs nothing (kprofd answers on, and under the
# sanitizers nothing leaks); a client that sends a ranged request and a status request in one
# write gets both replies, in order (the held request's successor is read when it is answered).
# Needs root (BPF).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then skip "range steps" "needs root"; exit 0; fi

printf '[windows]\nseconds = 1\nstep_ms = 0\n' >"$TDIR/kprofd.conf"
start_daemon --config "$TDIR/kprofd.conf" || { fail "daemon starts" "see log"; exit 1; }
"$MINIJIT" --seconds 30 2>"$TDIR/mj.err" &
MJ=$!
PIDS+=("$MJ")
wait_for 10 grep -q ready "$TDIR/mj.err" || { fail "minijit starts" "$(cat "$TDIR/mj.err")"; exit 1; }
check "attach" ctl attach "$MJ" --freq 999
sleep 5.5 # five windows or more
check "detach" ctl detach "$MJ"
kill "$MJ"; wait "$MJ" 2>/dev/null

total() { # report ARGS...: total_samples of `report --json`
	ctl report "$MJ" "$@" --top 0 --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["total_samples"])'
}
ALL=$(total)
RANGED=$(total --since 1h)
NW=$(ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["windows"])')
if [ -n "$ALL" ] && [ "$ALL" -gt 1000 ] && [ "$RANGED" = "$ALL" ] && [ "${NW:-0}" -ge 5 ]; then
	pass "a range of $NW windows merged in steps equals the whole profile ($RANGED samples)"
else
	fail "ranged total" "ranged ${RANGED:-?}, whole ${ALL:-?}, windows ${NW:-?}"
fi
read -r Q S N <<<"$(ctl status --json | python3 -c 'import json, sys
r = json.load(sys.stdin); print(r.get("range_queries", 0), r.get("range_sliced", 0), r.get("range_slices", 0))')"
if [ "${S:-0}" -ge 1 ] && [ "${N:-0}" -ge "${NW:-5}" ]; then
	pass "status counts the ranges built in steps: $Q built, $S in $N steps"
else
	fail "status range counters" "queries ${Q:-?} sliced ${S:-?} slices ${N:-?} (windows $NW)"
fi
ctl status | grep -q "^ranges: .* in [0-9]* steps" && pass "status text says it" ||
	fail "status text" "$(ctl status | grep -i range)"

# Eight clients at once, each a ranged report, and status answered among them.
par=()
for i in 1 2 3 4 5 6 7 8; do (total --since 1h >"$TDIR/par.$i") & par+=($!); done
for i in 1 2 3; do ctl status >/dev/null || echo bad >"$TDIR/par.status"; done
wait "${par[@]}"
bad=0
for i in 1 2 3 4 5 6 7 8; do [ "$(cat "$TDIR/par.$i")" = "$ALL" ] || bad=$((bad + 1)); done
[ "$bad" = 0 ] && [ ! -e "$TDIR/par.status" ] &&
	pass "8 clients asking for the range at once all get $ALL samples; status answered meanwhile" ||
	fail "concurrent ranges" "$bad wrong: $(cat "$TDIR"/par.*)"

# Raw clients: one that leaves while its range is merged, one that pipelines two requests.
cp "$(dirname "$0")/kpraw.py" "$TDIR/"
cat >"$TDIR/raw.py" <<'PY'
import socket, struct, sys
from kpraw import field, frame, varint, top_fields, recv_frame, STATUS
sock, mode, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
# ReportRequest{pid, since_ns = 1} in Request.report (5).
REPORT = field(5, varint(1 << 3) + varint(pid) + varint(120 << 3) + varint(1))
if mode == 'leave':
    for _ in range(20):
        c = socket.socket(socket.AF_UNIX); c.connect(sock); c.sendall(frame(REPORT)); c.close()
    print('left')
elif mode == 'pipeline':
    s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sock)
    s.sendall(frame(REPORT) + frame(STATUS))
    got = []
    for _ in range(2):
        try:
            got.append(','.join(map(str, top_fields(recv_frame(s)))))
        except (ConnectionError, OSError):
            got.append('none')
    print(' '.join(got))
PY
python3 "$TDIR/raw.py" "$SOCK" leave "$MJ" >/dev/null
if ctl status >/dev/null && [ "$(total --since 1h)" = "$ALL" ]; then
	pass "20 clients that leave while their range is merged: kprofd answers on, same range"
else
	fail "clients leaving mid-range" "$(tail -5 "$TDIR/kprofd.log")"
fi
got=$(timeout 30 python3 "$TDIR/raw.py" "$SOCK" pipeline "$MJ")
# Reply fields: 13 = report, 12 = status (no error field: error 0).
if [ "$got" = "13 12" ]; then
	pass "a ranged report and a status in one write: both answered, in order ($got)"
else
	fail "pipelined requests" "got '$got' (want report 13 then status 12)"
fi
finish
