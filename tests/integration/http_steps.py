# http_steps.py PORT SOCK PATH MODE: the HTTP endpoint's since=/until= merged in steps.
#   order: a range request, then at once a socket list request: which answer came first
#   cap N: N range requests sent at once; the status of each (503s: with Retry-After?), and
#          whether the 200 bodies are all the same
#   leave N: N range requests whose clients close at once
import select, socket, sys
from kpraw import connect, send, recv_frame, LIST_ALL
port, sock, path, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
REQ = ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode()

def http_conn():
    c = socket.create_connection(("127.0.0.1", port), timeout=30)
    return c

def http_read(c):
    buf = b""
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0] else 0
    hdrs = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    return status, hdrs, body

if mode == "order":
    h = http_conn()
    h.sendall(REQ)
    u = connect(sock)
    send(u, LIST_ALL)
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
