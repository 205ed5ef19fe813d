# fleet_client.py PORT SCRAPER SECONDS OUT [QUERY]: one scrape of kprofd's pprof endpoint sent
# byte for byte as SCRAPER's Go HTTP client sends it (docs/FLEET.md), then a second one on the
# same connection (they keep connections alive). The token is $KPROF_HTTP_TOKEN. Writes the
# first answer's body to OUT and prints "STATUS CONTENT-TYPE BYTES GZIP STATUS2".
#   parca: Parca's scrape loop (pkg/scrape): User-Agent conprof/VERSION, the token from
#          authorization.credentials_file, seconds = scrape_interval - 1
#   alloy: Grafana Alloy's pyroscope.scrape: User-Agent Alloy/VERSION (linux; binary),
#          bearer_token_file, seconds = scrape_interval - 1
#   otel:  the OpenTelemetry Collector's pprof receiver (confighttp client): its endpoint URL as
#          given, headers from its config, User-Agent of the Collector build
# Go's net/http writes Host, then User-Agent, then the other headers sorted by name, and its
# Transport adds "Accept-Encoding: gzip" last when the request has none.
import os, socket, sys

port, scraper, seconds, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
query = sys.argv[5] if len(sys.argv) > 5 else ""
token = os.environ["KPROF_HTTP_TOKEN"]
agents = {
    "parca": "conprof/v0.23.0",
    "alloy": "Alloy/v1.5.1 (linux; binary)",
    "otel": "OpenTelemetry Collector Contrib/0.114.0 (linux/amd64)",
}
path = "/debug/pprof/profile?seconds=%s%s" % (seconds, query)
req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: %s\r\n"
       "Authorization: Bearer %s\r\nAccept-Encoding: gzip\r\n\r\n"
       % (path, port, agents[scraper], token)).encode()


def response(f):
    status = f.readline().split(b" ")
    headers = {}
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        k, v = line.decode().split(":", 1)
        headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get("content-length", "0")))
    return int(status[1]), headers, body


s = socket.create_connection(("127.0.0.1", port), timeout=int(seconds) + 30)
f = s.makefile("rb")
s.sendall(req)
code, headers, body = response(f)
open(out, "wb").write(body)
s.sendall(req.replace(b"seconds=%s" % seconds.encode(), b"seconds=1"))
code2, _, _ = response(f)
print(code, headers.get("content-type", "-"), len(body), body[:2] == b"\x1f\x8b", code2)
