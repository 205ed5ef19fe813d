#!/usr/bin/env bash
# The control socket under bad clients: garbage, oversized and truncated frames, clients that
# vanish mid-request, too many clients. Each gets an error reply or is dropped; the daemon keeps
# serving everyone else.
. "$(dirname "$0")/lib.sh"
start_daemon --max-clients 8 --client-timeout 3 || { fail "daemon starts" "see log"; exit 1; }

# raw PYTHON-SNIPPET: run with a connected socket `s` and helpers; prints what it finds.
raw() {
	python3 - "$SOCK" "$1" <<'PY'
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
def recv_frame():
    hdr = b''
    while len(hdr) < 4:
        c = s.recv(4 - len(hdr))
        if not c: return None
        hdr += c
    n = struct.unpack('>I', hdr)[0]
    body = bytearray()
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c: return None
        body += c
    return bytes(body)
def closed():
    try:
        return s.recv(1) == b''
    except ConnectionResetError:
        return True
exec(sys.argv[2])
PY
}

# Garbage payload in a well-formed frame: an error reply naming the problem, then hang-up.
out=$(raw '
s.sendall(struct.pack(">I", 16) + b"\xff" * 16)
r = recv_frame(); print("reply", r is not None and b"malformed request" in r); print("closed", closed())')
if grep -q "reply True" <<<"$out" && grep -q "closed True" <<<"$out"; then pass "garbage frame: error reply, closed"
else fail "garbage frame" "$out"; fi

# A header announcing 1 GiB: refused before any payload is read.
out=$(raw '
s.sendall(struct.pack(">I", 1 << 30) + b"x" * 100)
r = recv_frame(); print("reply", r is not None and b"frame too large" in r); print("closed", closed())')
if grep -q "reply True" <<<"$out" && grep -q "closed True" <<<"$out"; then pass "oversized frame: error reply, closed"
else fail "oversized frame" "$out"; fi

# Truncated frames and clients that vanish half way.
for i in 1 2 3 4 5; do
	raw 's.sendall(struct.pack(">I", 100) + b"\x1a"); s.close()' >/dev/null 2>&1
	raw 's.sendall(b"\x00\x00"); s.close()' >/dev/null 2>&1
done
check "daemon serves after truncated frames" ctl status

# Random bytes in bulk.
raw 'import os
s.sendall(os.urandom(200000))
time.sleep(0.2)' >/dev/null 2>&1
check "daemon serves after 200 KB of random bytes" ctl status

# Many requests on one connection, pipelined: one reply each, in order.
out=$(raw '
req = bytes([0x22, 0x00])   # Request.status (field 4, empty message)
s.sendall((struct.pack(">I", len(req)) + req) * 50)
n = sum(1 for _ in range(50) if recv_frame() is not None)
print("replies", n)')
if grep -q "replies 50" <<<"$out"; then pass "50 pipelined requests, 50 replies"
else fail "pipelined requests" "$out"; fi

# More clients than allowed: the extra one is told why.
python3 - "$SOCK" >"$TDIR/many.out" <<'PY' &
import socket, struct, sys, time
socks = []
for i in range(8):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); socks.append(s)
time.sleep(0.5)
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
hdr = s.recv(4)
body = s.recv(struct.unpack(">I", hdr)[0]) if len(hdr) == 4 else b""
print("refused", b"too many clients" in body, flush=True)
time.sleep(1)
PY
MANY=$!
wait $MANY
if grep -q "refused True" "$TDIR/many.out"; then pass "client over the limit refused with a reason"
else fail "client limit" "$(cat "$TDIR/many.out")"; fi
check "daemon serves after the client flood" ctl status

# A client that sends half a frame and goes silent is closed after --client-timeout.
out=$(raw '
s.sendall(struct.pack(">I", 100) + b"\x1a\x02")
t = time.time(); c = closed(); print("closed", c, "after %.0f s" % (time.time() - t))')
if grep -q "closed True" <<<"$out" && grep -q "closing idle client" "$TDIR/kprofd.log"; then
	pass "silent client closed after the timeout ($out)"
else fail "idle client" "$out"; fi
if kill -0 "$DAEMON_PID"; then pass "daemon alive"; else fail "daemon alive" "it died"; fi
finish
