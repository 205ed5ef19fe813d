#!/usr/bin/env bash
# Exports read by independent tools: `go tool pprof` reads the pprof file and finds the same
# total and the same top functions as `kprofctl report`; folded and JSON exports add up to the
# same total; the export works for a live target and for one that has exited. pprof (gzip) is
# not written to a terminal without --force, as gzip refuses to; to a pipe it is. diff
# --base-pid matches JIT functions across two processes (their perf-PID.map modules).
. "$(dirname "$0")/lib.sh"
if ! command -v go >/dev/null; then skip "export" "go (golang-go) not installed"; exit 0; fi
export GOCACHE=$TDIR/gocache HOME=$TDIR
start_daemon || { fail "daemon starts" "see log"; exit 1; }
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
ctl attach "$P" --freq 999 >/dev/null
wait_for 30 at_least_samples "$P" 2000 || fail "samples" "$(ctl list)"
check "export from a live target" ctl export "$P" -o "$TDIR/live.pb.gz"
ctl detach "$P" >/dev/null # freeze the profile so every reader sees the same one
ctl report "$P" --top 0 --json >"$TDIR/report.json"
check "export pprof" ctl export "$P" -o "$TDIR/p.pb.gz"
check "export folded" ctl export "$P" --format folded -o "$TDIR/p.folded"
check "export json" ctl export "$P" --format json -o "$TDIR/p.json"
ctl folded "$P" >"$TDIR/folded"
gzip -t "$TDIR/p.pb.gz" && pass "pprof export is gzip" || fail "gzip" "not gzip"
# on_tty CMD: CMD run with a terminal (script's pty) as its standard output; its output (what
# reached the terminal) in $TDIR/tty.out, its exit status returned.
on_tty() { script -qec "$*" /dev/null </dev/null >"$TDIR/tty.out" 2>&1; }
on_tty "$KPROFCTL --socket $SOCK export $P -o -"; rc=$?
if [ $rc -eq 2 ] && grep -q "compressed data not written to a terminal; use -o FILE, pipe it, or --force" "$TDIR/tty.out" &&
	! grep -qa $'\x1f\x8b' "$TDIR/tty.out"; then
	pass "export -o - of pprof to a terminal refused (exit 2), nothing written"
else fail "pprof to a terminal" "rc=$rc $(head -c 200 "$TDIR/tty.out" | cat -v)"; fi
on_tty "$KPROFCTL --socket $SOCK export $P -o - --force"; rc=$?
[ $rc -eq 0 ] && [ "$(head -c 2 "$TDIR/tty.out" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
	pass "export -o - --force writes pprof to a terminal" || fail "--force" "rc=$rc $(head -c 100 "$TDIR/tty.out" | cat -v)"
on_tty "$KPROFCTL --socket $SOCK export $P -o - --format folded"; rc=$?
[ $rc -eq 0 ] && grep -q "mj_hot" "$TDIR/tty.out" && pass "export -o - of folded text to a terminal" ||
	fail "folded to a terminal" "rc=$rc $(head -c 100 "$TDIR/tty.out" | cat -v)"
ctl export "$P" -o - | gzip -t && pass "export -o - of pprof to a pipe" || fail "pprof to a pipe" "not gzip"
go tool pprof -raw "$TDIR/p.pb.gz" >"$TDIR/raw" 2>"$TDIR/raw.err" || fail "go tool pprof -raw" "$(cat "$TDIR/raw.err")"
go tool pprof -top -sample_index=samples -nodecount=100 "$TDIR/p.pb.gz" >"$TDIR/top" 2>"$TDIR/top.err" ||
	fail "go tool pprof -top" "$(cat "$TDIR/top.err")"
python3 - "$TDIR" <<'PY'
import json, re, sys
d = sys.argv[1]
rep = json.load(open(d + "/report.json"))
total = rep["total_samples"]
def res(ok, msg):
    print(("PASS: " if ok else "FAIL: ") + msg)
# -raw: the sample section lists "count nanos: locations" then labels.
raw = open(d + "/raw").read()
sec = raw.split("Samples:")[1].split("Locations")[0]
counts = [int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\d+:", sec, re.M)]
res(sum(counts) == total, f"pprof -raw total {sum(counts)} == report total {total}")
res("kind:[jit]" in sec and "thread_id:[" in sec and "thread_name:[minijit]" in sec,
    "samples carry thread_id, thread_name and kind labels")
res("PeriodType: cpu nanoseconds" in raw and "samples/count cpu/nanoseconds" in raw,
    "sample types samples/count and cpu/nanoseconds, period type cpu/nanoseconds")
# -top: flat column in samples, then the function name.
rows = []
for line in open(d + "/top"):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*\S)", line)
    if m:
        rows.append((m.group(3), int(m.group(1)), int(m.group(2))))
m = re.search(r"of (\d+) total", open(d + "/top").read())
res(m and int(m.group(1)) == total, f"pprof -top total {m.group(1) if m else None} == {total}")
top_rep = [(e["function"], e["self"], e["total"]) for e in rep["entries"] if e["self"] > 0][:4]
res(rows[:4] == top_rep, f"pprof -top's top 4 (name, flat, cum) == report's: {rows[:4]}")
# folded and JSON exports.
fold = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/p.folded") if l.strip())
res(fold == total, f"folded export total {fold} == {total}")
res(sorted(open(d + "/p.folded")) == sorted(open(d + "/folded")), "export --format folded == kprofctl folded")
j = json.load(open(d + "/p.json"))
res(j["total_samples"] == total and sum(s["count"] for s in j["stacks"]) == total,
    "JSON export total == report total")
names = {f["name"] for f in j["functions"]}
res({"mj_hot", "mj_warm", "main", "run_round"} <= names, "JSON export names JIT and native functions")
PY
# An exited target exports too.
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
Q=$MJ_PID
ctl attach "$Q" --freq 499 >/dev/null
wait_for 30 at_least_samples "$Q" 300
kill -9 "$Q"; wait "$Q" 2>/dev/null
wait_for 10 state_is "$Q" exited
if ctl export "$Q" -o "$TDIR/q.pb.gz" && go tool pprof -top "$TDIR/q.pb.gz" 2>/dev/null | grep -q mj_hot; then
	pass "export of an exited target, read by go tool pprof"
else fail "export exited" "$(go tool pprof -top "$TDIR/q.pb.gz" 2>&1 | head -5)"; fi
# folded --comm roots every stack at the target's comm (issue 29, item 10).
ctl folded "$Q" --comm >"$TDIR/comm.folded"
[ -s "$TDIR/comm.folded" ] && ! grep -qv '^minijit;' "$TDIR/comm.folded" &&
	pass "folded --comm: every stack rooted at minijit" || fail "folded --comm" "$(head -3 "$TDIR/comm.folded")"
# diff --base-pid of two processes running the same JIT code (issue 29, item 6): each function
# is one row, matched across perf-P.map and perf-Q.map, not +x% and -y% as two.
if ctl diff "$Q" --base-pid "$P" --top 0 --json >"$TDIR/diff.json" && python3 -c "
import json, sys
fs = json.load(open(sys.argv[1]))['functions']
hot = [f for f in fs if f['function'] == 'mj_hot']
assert len(hot) == 1, hot
h = hot[0]
assert h['base_self_pct'] > 10 and h['self_pct'] > 10 and abs(h['delta_pct']) < 25, h
print('mj_hot: base %.1f%%, new %.1f%% (%s)' % (h['base_self_pct'], h['self_pct'], h['module']))
" "$TDIR/diff.json" >"$TDIR/diff.out" 2>&1; then
	pass "diff --base-pid matches JIT functions across processes: $(cat "$TDIR/diff.out")"
else fail "diff --base-pid of JIT code" "$(cat "$TDIR/diff.out"; head -c 600 "$TDIR/diff.json")"; fi
out=$(ctl export "$Q" --format xml -o "$TDIR/x" 2>&1); rc=$?
[ $rc -eq 2 ] && pass "unknown export format refused" || fail "bad format" "rc=$rc $out"
finish
