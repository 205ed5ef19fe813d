# kpraw.py: a small raw-protocol client for the socket tests (requests are hand-encoded
# protobuf, replies read just enough): kprof frames are a 4-byte big-endian length, then a
# kprof.Request / kprof.Reply. Tests copy it next to their own scripts in $TDIR and import it.
import socket, struct

def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def field(num, payload):  # a length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def pid_msg(pid, top=None):
    m = b"\x08" + varint(pid)
    return m + (b"\x10" + varint(top) if top is not None else b"")

STATUS = field(4, b"")
LIST_ALL = field(3, b"\x08\x01")
def report(pid, top=5): return field(5, pid_msg(pid, top))
def folded(pid): return field(6, pid_msg(pid))
def export(pid): return field(7, pid_msg(pid))
# The Reply body field expected for each request field.
BODY = {1: 10, 3: 11, 4: 12, 5: 13, 6: 14, 7: 15}

def connect(path, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s

def send(s, req):
    s.sendall(struct.pack(">I", len(req)) + req)

def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        c = s.recv(min(n - len(buf), 1 << 20))
        if not c:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += c
    return bytes(buf)

def recv_frame(s):
    return recv_exact(s, struct.unpack(">I", recv_exact(s, 4))[0])

def top_fields(msg):
    """Top-level fields of a protobuf message: {number: int value or payload bytes}."""
    out, i = {}, 0
    while i < len(msg):
        key = 0; shift = 0
        while True:
            b = msg[i]; i += 1; key |= (b & 0x7F) << shift; shift += 7
            if b < 0x80: break
        num, wt = key >> 3, key & 7
        if wt == 0:
            v = 0; shift = 0
            while True:
                b = msg[i]; i += 1; v |= (b & 0x7F) << shift; shift += 7
                if b < 0x80: break
            out[num] = v
        elif wt == 2:
            n = 0; shift = 0
            while True:
                b = msg[i]; i += 1; n |= (b & 0x7F) << shift; shift += 7
                if b < 0x80: break
            out[num] = msg[i:i + n]; i += n
        elif wt == 1:
            out[num] = msg[i:i + 8]; i += 8
        elif wt == 5:
            out[num] = msg[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % wt)
    return out

def reply_ok(reply, req):
    """The reply carries no error and the body that answers req."""
    f = top_fields(reply)
    return f.get(1, 0) == 0 and BODY[top_fields(req).popitem()[0]] in f

def frame(req):
    """A request's bytes on the wire."""
    return struct.pack(">I", len(req)) + req

def attach_all(sock, pids, detach=False):
    """Attach each pid at 99 Hz over one connection (and detach it at once when detach):
    hundreds of targets or kept profiles in a second, as the scale tests need them."""
    s = connect(sock, timeout=60)
    for pid in pids:
        reqs = [field(1, b"\x08" + varint(pid) + b"\x10\x63")]  # attach at 99 Hz
        if detach:
            reqs.append(field(2, b"\x08" + varint(pid)))  # detach
        for req in reqs:
            send(s, req)
            recv_frame(s)

if __name__ == "__main__":
    # kpraw.py attach|attach-detach SOCKET PID...
    import sys
    if len(sys.argv) < 3 or sys.argv[1] not in ("attach", "attach-detach"):
        sys.exit("usage: kpraw.py attach|attach-detach SOCKET PID...")
    attach_all(sys.argv[2], [int(p) for p in sys.argv[3:]], sys.argv[1] == "attach-detach")
