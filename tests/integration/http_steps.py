# http_steps.py PORT SOCK PATH MODE: the HTTP endpoint's since=/until= merged in steps.
#   order: a range request, then at once a socket list request: which answer came first
#   cap N: N range requests sent at once; the status of each (503s: with Retry-After?), and
#          whether the 200 bodies are all the same
#   leave N: N range requests whose clients close at once
# The bearer token, if the endpoint wants one, is in $KPROF_HTTP_TOKEN.
# http_steps.py same A.pb.gz B.pb.gz: whether two pprof files hold the same samples (stacks by
# function name, labels, values, summed): prints "same N" (N distinct samples) or "differ ...".
import collections, gzip, os, select, socket, sys

def pb_fields(buf):
    """(number, value) of each field of a protobuf message; length-delimited values as bytes."""
    i, out = 0, []
    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]; i += 1; v |= (b & 0x7F) << shift; shift += 7
            if b < 0x80: return v
    while i < len(buf):
        key = varint(); num, wt = key >> 3, key & 7
        if wt == 0: out.append((num, varint()))
        elif wt == 2:
            n = varint(); out.append((num, buf[i:i + n])); i += n
        elif wt == 1: out.append((num, buf[i:i + 8])); i += 8
        elif wt == 5: out.append((num, buf[i:i + 4])); i += 4
        else: raise ValueError("wire type %d" % wt)
    return out

def ints(v):  # a repeated integer field, packed (bytes) or not
    return [v] if isinstance(v, int) else unpack(v)

def unpack(b):
    out, i = [], 0
    while i < len(b):
        v = shift = 0
        while True:
            c = b[i]; i += 1; v |= (c & 0x7F) << shift; shift += 7
            if c < 0x80: break
        out.append(v)
    return out

def samples(path):
    top = pb_fields(gzip.open(path).read())
    strs = [v.decode() for n, v in top if n == 6]
    funcs, locs, out = {}, {}, collections.Counter()
    for n, v in top:
        if n == 5:
            f = dict(pb_fields(v)); funcs[f.get(1, 0)] = strs[f.get(2, 0)]
    for n, v in top:
        if n == 4:
            fl = pb_fields(v)
            lid = dict(fl).get(1, 0)
            locs[lid] = tuple(dict(pb_fields(l)).get(1, 0) for k, l in fl if k == 4)
    for n, v in top:
        if n != 2: continue
        ids, vals, labels = [], [], []
        for k, x in pb_fields(v):
            if k == 1: ids += ints(x)
            elif k == 2: vals += ints(x)
            elif k == 3:
                d = dict(pb_fields(x)); labels.append((strs[d.get(1, 0)], strs[d.get(2, 0)], d.get(3, 0)))
        stack = tuple(funcs.get(f, "?") for l in ids for f in locs.get(l, ()))
        out[(stack, tuple(sorted(labels)))] += vals[0] if vals else 0
    return out

if sys.argv[1] == "same":
    a, b = samples(sys.argv[2]), samples(sys.argv[3])
    if a == b and a:
        print("same", len(a))
    else:
        print("differ", len(a), len(b), sum(a.values()), sum(b.values()))
    sys.exit(0)
from kpraw import connect, send, recv_frame, LIST_ALL
port, sock, path, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
TOKEN = os.environ.get("KPROF_HTTP_TOKEN", "")
AUTH = "Authorization: Bearer %s\r\n" % TOKEN if TOKEN else ""
REQ = ("GET %s HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n" % (path, AUTH)).encode()

def http_conn():
    c = socket.create_connection(("127.0.0.1", port), timeout=30)
    return c

def http_read(c):
    buf = bytearray()
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0] else 0
    hdrs = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    return status, hdrs, bytes(body)

if mode == "order":
    h, u = http_conn(), connect(sock)
    # Both sends before kprofd, woken by the first, can take this CPU (a real-time class for
    # the two calls, if allowed): the list is sent just after the range request, not after it
    # is merged.
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass
    h.sendall(REQ)
    send(u, LIST_ALL)
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    first = None
    while first is None:
        r, _, _ = select.select([h, u], [], [], 30)
        if not r:
            break
        first = "socket" if u in r else "http"
    recv_frame(u)
    status, _, body = http_read(h)
    print(first, status, len(body))
elif mode == "cap":
    n = int(sys.argv[5])
    cs = [http_conn() for _ in range(n)]
    for c in cs:
        c.sendall(REQ)
    got = [http_read(c) for c in cs]
    ok = [b for s, _, b in got if s == 200]
    busy = [(h.get("retry-after"), b) for s, h, b in got if s == 503]
    print(len(ok), len(busy), "same" if len(set(ok)) <= 1 else "differ",
          ",".join(sorted(set(str(r) for r, _ in busy))) or "-",
          busy[0][1].decode().strip() if busy else "")
elif mode == "leave":
    for _ in range(int(sys.argv[5])):
        c = http_conn()
        c.sendall(REQ)
        c.close()
    print("left")
