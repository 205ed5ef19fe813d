# http_flood.py PORT MODE ...: hostile and honest clients of kprofd's pprof endpoint, for
# test_http_dos.sh. The bearer token, where one is sent, is $KPROF_HTTP_TOKEN.
#   wait PATH N SRC...: N requests of PATH with the token from each source address SRC (127.x),
#       sent at once and kept open; prints each one's status line ("-" for none within 2 s of
#       the last one sent: all are waited on at once), then "holding" and waits for stdin to
#       close, then closes them all
#   noauth PATH N: N requests of PATH without a token, at once; prints "CODE COUNT" per status
#   flood SECONDS: for SECONDS (or until SIGTERM), 48 connections at a time that send half a
#       request line and stall, each reopened when kprofd cuts it; prints the connections made
#   slowloris SECONDS: for SECONDS (or until SIGTERM), one connection sending a header byte a
#       second, reopened when cut; prints how many times it was cut
import os, select, signal, socket, sys, time

port, mode = int(sys.argv[1]), sys.argv[2]
TOKEN = os.environ.get("KPROF_HTTP_TOKEN", "")


def req(path, token):
    auth = "Authorization: Bearer %s\r\n" % token if token else ""
    return ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (path, port, auth)).encode()


def conn(src="127.0.0.1"):
    s = socket.socket()
    s.settimeout(5)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def status_line(s, deadline):
    r, _, _ = select.select([s], [], [], max(0, deadline - time.time()))
    if not r:
        return "-"
    try:
        d = s.recv(4096)
    except OSError:
        return "reset"
    return d.split(b"\r\n", 1)[0].decode(errors="replace") if d else "closed"


if mode == "wait":
    path, n, srcs = sys.argv[3], int(sys.argv[4]), sys.argv[5:]
    socks = []
    for src in srcs:
        for _ in range(n):
            s = conn(src)
            s.sendall(req(path, TOKEN))
            socks.append(s)
    deadline = time.time() + 2
    for s in socks:
        print(status_line(s, deadline), flush=True)
    print("holding", flush=True)
    sys.stdin.read()
    for s in socks:
        s.close()
elif mode == "noauth":
    path, n = sys.argv[3], int(sys.argv[4])
    socks = []
    for _ in range(n):
        s = conn()
        s.sendall(req(path, ""))
        socks.append(s)
    codes = {}
    for s in socks:
        line = status_line(s, time.time() + 10)
        code = line.split(" ")[1] if line.startswith("HTTP/") else line
        codes[code] = codes.get(code, 0) + 1
        s.close()
    for c, k in sorted(codes.items()):
        print(c, k)
elif mode in ("flood", "slowloris"):
    end = time.time() + float(sys.argv[3])

    def stop(*_):
        global end
        end = 0

    signal.signal(signal.SIGTERM, stop)
if mode == "flood":
    socks, made = [], 0
    while time.time() < end:
        while len(socks) < 48:
            try:
                s = conn()
                s.setblocking(False)
                s.send(b"GET /debug/pprof/profile?seconds=300 HTTP/1.1\r\n")
                socks.append(s)
                made += 1
            except OSError:
                break
        r, _, _ = select.select(socks, [], [], 0.2)
        for s in r:  # cut (or answered): reopen
            try:
                d = s.recv(4096)
            except OSError:
                d = b""
            if not d:
                socks.remove(s)
                s.close()
    print(made, "connections made")
elif mode == "slowloris":
    cuts = 0
    data = req("/debug/pprof/targets", "")[:-2] + b"X-Slow: " + b"a" * 1000
    while time.time() < end:
        try:
            s = conn()
            for b in data:
                s.send(bytes([b]))
                time.sleep(1)
                if time.time() > end:
                    break
        except OSError:
            cuts += 1
    print(cuts, "cuts")
