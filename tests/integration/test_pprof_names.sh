#!/usr/bin/env bash
# Names in pprof exports, as flame graphs show them (issue 30, item 8): Function.name is kprof's
# short name (a Java method without its return type and parameters, a C++ function without its
# parameter list and return type; the whole name where two would share one), the whole name is
# Function.system_name. Read back by go tool pprof: -top and -traces (the frames a flame graph
# draws) of a JVM (HotSpot perf map names "long Hot$Alpha.run(long, int)") and of node (V8's
# C++ functions).
# Needs root, go; java/javac and node for their parts (skipped without).
# Not sanitized: the naming is pure (funcname_short, unit-tested in test_cxxname and test_pprof)
# and the export code runs under ASan in test_export.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v go >/dev/null || { skip "pprof names" "go is not installed"; exit 0; }
start_daemon || { fail "daemon starts" "see log"; exit 1; }

# pprof_funcs FILE: "name<TAB>system_name" of every function of the export (go tool pprof -raw
# prints neither field alone: the protobuf is read with python's gzip and a tiny decoder).
pprof_funcs() {
	python3 - "$1" <<'PY'
import gzip, sys
data = gzip.open(sys.argv[1]).read()
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 1: v = b[i:i + 8]; i += 8
        elif t == 5: v = b[i:i + 4]; i += 4
        yield f, v
strs, funcs = [], []
for f, v in fields(data):
    if f == 6: strs.append(v.decode(errors="replace"))
    elif f == 5: funcs.append(dict((g, w) for g, w in fields(v) if g in (2, 3)))
for fn in funcs:
    print(strs[fn.get(2, 0)] + "\t" + strs[fn.get(3, 0)])
PY
}

# --- a JVM
if command -v java >/dev/null && command -v javac >/dev/null; then
	JCLS=$(realpath -m "$BUILD/jvm")
	if [ ! -f "$JCLS/Hot.class" ] || [ "$ROOT/tests/fixtures/jvm/Hot.java" -nt "$JCLS/Hot.class" ]; then
		mkdir -p "$JCLS" && javac -d "$JCLS" "$ROOT/tests/fixtures/jvm/Hot.java" || fail "javac" ""
	fi
	java -XX:+PreserveFramePointer -cp "$JCLS" Hot 60 >/dev/null 2>"$TDIR/jvm.err" &
	JP=$!
	PIDS+=("$JP")
	if wait_for 60 grep -q ready "$TDIR/jvm.err"; then
		check "attach the JVM" ctl attach "$JP" --freq 499
		wait_for 60 eval "ctl report $JP --top 5 | grep -q 'Hot\$Alpha.run'" || fail "JVM named" "$(ctl report "$JP" --top 5)"
		wait_for 30 at_least_samples "$JP" 500
		ctl export "$JP" -o "$TDIR/jvm.pb.gz" || fail "export the JVM" ""
		pprof_funcs "$TDIR/jvm.pb.gz" >"$TDIR/jvm.funcs"
		go tool pprof -top "$TDIR/jvm.pb.gz" >"$TDIR/jvm.top" 2>&1
		go tool pprof -traces "$TDIR/jvm.pb.gz" >"$TDIR/jvm.traces" 2>&1
		if grep -qP '^Hot\$Alpha\.run\tlong Hot\$Alpha\.run\(long, int\)$' "$TDIR/jvm.funcs" &&
			grep -q ' Hot\$Alpha.run$' "$TDIR/jvm.top" && grep -q ' Hot\$Alpha.run$' "$TDIR/jvm.traces" &&
			! grep -q 'long Hot' "$TDIR/jvm.top" "$TDIR/jvm.traces"; then
			pass "JVM: Function.name Hot\$Alpha.run (system_name 'long Hot\$Alpha.run(long, int)'), so in go tool pprof -top and -traces"
		else
			fail "JVM names" "$(grep Alpha "$TDIR/jvm.funcs" | head -2); top: $(grep -m2 Alpha "$TDIR/jvm.top")"
		fi
		ctl detach "$JP" >/dev/null
	else
		fail "the JVM starts" "$(cat "$TDIR/jvm.err")"
	fi
	kill "$JP" 2>/dev/null
else
	skip "JVM pprof names" "no java/javac"
fi

# --- node: V8's C++ functions
if command -v node >/dev/null; then
	node "$ROOT/tests/fixtures/hot.js" 60 >/dev/null 2>&1 &
	NP=$!
	PIDS+=("$NP")
	sleep 1
	check "attach node" ctl attach "$NP" --freq 999
	wait_for 60 at_least_samples "$NP" 1500
	ctl export "$NP" -o "$TDIR/node.pb.gz" || fail "export node" ""
	pprof_funcs "$TDIR/node.pb.gz" >"$TDIR/node.funcs"
	go tool pprof -top "$TDIR/node.pb.gz" >"$TDIR/node.top" 2>&1
	if python3 - "$TDIR/node.funcs" <<'PY'; then
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
cxx = [(n, s) for n, s in rows if "::" in s and s.endswith(")")]
pre = lambda x: x.split("(")[0]
# Whole only where two different names would share a short form (overloads).
whole = [n for n, s in cxx if n == s and sum(1 for _, t in cxx if pre(t) == pre(s)) < 2]
bad = [n for n, s in cxx if "::::" in n or n.startswith(("void ", "v8::internal::Handle "))]
print("node: %d C++ functions with parameter lists; Function.name short for %d, e.g. %r (system_name %r); whole without an overload: %s; bad: %s"
      % (len(cxx), sum(n != s for n, s in cxx), next((n for n, s in cxx if n != s), ""),
         next((s for n, s in cxx if n != s), ""), whole[:3], bad[:3]))
sys.exit(not (cxx and not whole and not bad))
PY
		pass "node: C++ names short in Function.name, whole in system_name"
	else
		fail "node C++ names" "see above"
	fi
	grep -q '(' <(awk 'NR > 6 { $1 = $2 = $3 = $4 = $5 = ""; print }' "$TDIR/node.top" | grep '::' |
		sed 's/(anonymous namespace)//g') &&
		fail "go tool pprof -top" "C++ parameter lists: $(grep -m2 '::.*(' "$TDIR/node.top")" ||
		pass "go tool pprof -top: no C++ parameter lists"
else
	skip "node pprof names" "node is not installed"
fi
finish
