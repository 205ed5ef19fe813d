#!/usr/bin/env bash
# Readable names: `report`, `hcct` and `top` show demangled C++ names without their parameter
# lists, `--full-names` and JSON show them whole, JIT names are left alone. The target is Node
# parsing JSON (tests/fixtures/json.js), whose time goes to V8's JSON parser, C++ functions such
# as v8::internal::JsonParser<unsigned char>::ParseJsonValue<false>(v8::internal::Handle<...>)
# [clone .isra.0], and to JS functions named by its perf map (JS:*parseLoop ...).
# Needs root; node; tmux for the top check (skipped without it).
. "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null; then skip "names" "node is not installed"; exit 0; fi
start_daemon || { fail "daemon starts" "see log"; exit 1; }

(cd "$TDIR" && exec node --perf-basic-prof "$OLDPWD/tests/fixtures/json.js" 60) \
	>"$TDIR/node.out" 2>"$TDIR/node.err" &
NP=$!; PIDS+=("$NP")
wait_for 15 grep -q ready "$TDIR/node.err" || { fail "node starts" "$(cat "$TDIR/node.err")"; exit 1; }
check "attach node" ctl attach "$NP" --freq 999
if wait_for 40 at_least_samples "$NP" 3000; then pass "samples arrive"; else fail "samples arrive" "$(ctl list)"; fi
ctl report "$NP" --top 0 --json >"$TDIR/report.json"

# The hottest JSON parser function with a parameter list, its short form by hand (from
# "JsonParser", up to the parameter list, then any clone suffix), and the hottest JS function.
read -r -d '' PICK <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
cxx = [e["function"] for e in r["entries"]
       if "JsonParser<" in e["function"] and "(" in e["function"] and e["self"] > 0]
js = [e["function"] for e in r["entries"] if e["kind"] == "jit" and e["function"].startswith("JS:")]
if not cxx:
    sys.exit("no JsonParser function in the report")
full = cxx[0]
tail = full[full.index("v8::internal::JsonParser"):]
short = tail[:tail.index("(")] + "".join(re.findall(r" \[clone [^\]]*\]", tail))
print(json.dumps({"full": full, "short": short, "js": js[0] if js else ""}))
PY
if ! names=$(python3 -c "$PICK" "$TDIR/report.json"); then
	fail "a JsonParser function in the report" "$(ctl report "$NP" --top 20)"; finish; exit; fi
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$names" "$1"; }
FULL=$(field full)
SHORT=$(field short)
JS=$(field js)
echo "full:  $FULL"
echo "short: $SHORT"

# top on a 220-column terminal: the FUNCTION column is wider than the old 40 columns, and the
# short name is shown whole.
if command -v tmux >/dev/null; then
	SES=kprof-names-$$
	export TMUX_TMPDIR=$TDIR
	trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT
	tmux new-session -d -s "$SES" -x 220 -y 50 \
		"$PWD/$KPROFCTL --socket $SOCK top $NP --iterations 2 --interval 300; sleep 60"
	top_shows() { tmux capture-pane -t "$SES" -p | grep -qF -- "$1"; }
	if wait_for 15 top_shows "$SHORT"; then pass "top (220 columns, attached) shows '$SHORT' whole"
	else fail "top names" "$(tmux capture-pane -t "$SES" -p | grep -F JsonParser | head -3)"; fi
	tmux kill-session -t "$SES" 2>/dev/null
else
	skip "top names" "tmux not installed"
fi

# One profile for the text views below, the same as the JSON's.
ctl detach "$NP" >/dev/null
ctl report "$NP" --top 0 --json >"$TDIR/report.json"
ctl report "$NP" --top 0 >"$TDIR/report.txt"
ctl report "$NP" --top 0 --full-names >"$TDIR/report-full.txt"
ctl hcct "$NP" --phi 0.01 >"$TDIR/hcct.txt"
ctl hcct "$NP" --phi 0.01 --full-names >"$TDIR/hcct-full.txt"
ctl hcct "$NP" --phi 0.01 --json >"$TDIR/hcct.json"

# report: short by default, whole with --full-names, whole in JSON.
# ends_with FILE S: a line of FILE ends with " S" (report puts the name last).
ends_with() { awk -v s=" $2" 'substr($0, length($0) - length(s) + 1) == s { f = 1 } END { exit !f }' "$1"; }
if ends_with "$TDIR/report.txt" "$SHORT" && ! grep -qF -- "$FULL" "$TDIR/report.txt"; then
	pass "report shows '$SHORT'"
else fail "report short name" "$(grep -F JsonParser "$TDIR/report.txt" | head -3)"; fi
ends_with "$TDIR/report-full.txt" "$FULL" && pass "report --full-names shows the whole name" ||
	fail "report --full-names" "$(grep -F JsonParser "$TDIR/report-full.txt" | head -3)"
grep -qF -- "\"function\":$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$FULL")" \
	"$TDIR/report.json" && pass "report --json has the whole name" ||
	fail "report --json" "no $FULL"
# JIT names are left alone.
if [ -z "$JS" ]; then skip "JS names" "no JS: function in the report"
elif grep -qF -- "$JS" "$TDIR/report.txt"; then pass "JS names as in the perf map: '$JS'"
else fail "JS names" "no '$JS' in the text report"; fi

# hcct: the same names short, whole with --full-names and in JSON.
if grep -qF -- "$SHORT" "$TDIR/hcct.txt" && ! grep -qF -- "$FULL" "$TDIR/hcct.txt" &&
	grep -qF -- "$FULL" "$TDIR/hcct-full.txt" && grep -qF "JsonParser<unsigned char>::" "$TDIR/hcct.json" &&
	! grep -E 'JsonParser<unsigned char>::[A-Za-z]+(<[a-z]+>)?\(' "$TDIR/hcct.txt" | grep -q .; then
	pass "hcct: short names, whole with --full-names"
elif ! grep -qF -- "$SHORT" "$TDIR/hcct.txt" && ! grep -qF -- "$FULL" "$TDIR/hcct-full.txt"; then
	skip "hcct names" "'$SHORT' is not in a hot context at phi 0.01"
else fail "hcct names" "$(grep -F JsonParser "$TDIR/hcct.txt" | head -3)"; fi

finish
