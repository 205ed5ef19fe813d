#!/usr/bin/env bash
# kprofctl's views with source lines (issue 32), on build/hotline: main calls spin and warm
# through step(), inlined into main at STEP; spin spends its time at HOT in mix(), inlined:
#  - folded --lines: function:line frames, inlined functions frames of their own, callers at
#    their call sites ("main:STEP;step:CALL spin;spin:N;mix:HOT"), the leaf split over its
#    sampled lines; the counts add up to the profile's samples; HOT's share as report --lines';
#  - hcct --lines: spin's context says where main called it (in step, inlined into main), also
#    in JSON;
#  - annotate --lines: the HOT line (its text read from the source) above the hottest
#    instructions, mix inlined into spin; in JSON each instruction's lines.
# Needs root, go and clang.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lines_lib.sh"
CSPIN=$(grep -n "/\* CALL spin \*/" "$SRC" | cut -d: -f1)
STEP=$(grep -n "/\* STEP \*/" "$SRC" | cut -d: -f1)
start_daemon || { fail "daemon starts" "see log"; exit 1; }
NSAMPLES=1000 profile "$HOTLINE" hotline || { finish; exit 1; }
ctl detach "$HP" >/dev/null

ctl folded "$HP" --lines >"$TDIR/folded.txt" 2>"$TDIR/folded.err" || fail "folded --lines" "$(cat "$TDIR/folded.err")"
ctl report "$HP" --lines --top 0 >"$TDIR/report.txt"
python3 - "$TDIR/folded.txt" "$TDIR/report.txt" "$(target_json "$HP" samples)" "$SRC" "$HOT" "$CSPIN" "$STEP" <<'PY'
import re, sys
folded, report, samples, src, hot, cspin, step = sys.argv[1:]
rows = [l.rsplit(" ", 1) for l in open(folded).read().splitlines() if l]
total = sum(int(c) for _, c in rows)
def res(ok, msg, why=""):
    print(("PASS: " if ok else "FAIL: ") + msg + ("" if ok else f": {why}"))
want = re.compile(rf"(^|;)main:{step};step:{cspin};spin(:\d+)?;mix:{hot}$")
hot_n = sum(int(c) for s, c in rows if want.search(s))
res(total == int(samples), f"folded --lines: {len(rows)} stacks, {total} samples, as the profile's {samples}",
    open(folded).read()[:800])
rep = {}
for l in open(report):
    m = re.match(r"\s*\d+\s+([\d.]+)%\s+(\S+)\s", l)
    if m:
        rep[m.group(2)] = float(m.group(1))
share = 100.0 * hot_n / total if total else 0
want_share = rep.get(f"{src}:{hot}", -100)
res(hot_n and abs(share - want_share) < 0.5,
    f"folded --lines: main:{step};step:{cspin};spin;mix:{hot} frames, {share:.1f}% of the samples, "
    f"as report --lines' {want_share:.1f}%", open(folded).read()[:800])
PY

ctl hcct "$HP" --lines >"$TDIR/hcct.txt" 2>&1
grep -E " spin  \(hotline\)  called at $SRC:$CSPIN in step, inlined into main at $SRC:$STEP$" "$TDIR/hcct.txt" >/dev/null &&
	pass "hcct --lines: spin called at $SRC:$CSPIN in step, inlined into main at line $STEP" ||
	fail "hcct --lines" "$(cat "$TDIR/hcct.txt")"
ctl hcct "$HP" --lines --json | python3 -c "import json,sys
n=[n for n in json.load(sys.stdin)['nodes'] if n['function'] == 'spin']
cs=n[0].get('call_site') if n else None
ok=cs and [(c['function'], c['line']) for c in cs] == [('step', $CSPIN), ('main', $STEP)]
print(('PASS: ' if ok else 'FAIL: ') + 'hcct --lines --json: spin\'s call_site ' + str(cs))"

ctl annotate "$HP" spin --lines >"$TDIR/ann.txt" 2>&1
python3 - "$TDIR/ann.txt" "$SRC" "$HOT" <<'PY'
import re, sys
text, src, hot = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
def res(ok, msg, why=""):
    print(("PASS: " if ok else "FAIL: ") + msg + ("" if ok else f": {why}"))
cur, per = None, {}
lines = text.splitlines()
for i, l in enumerate(lines):
    m = re.match(r"\s+: (\S+):(\d+)  ", l)
    if m:
        cur = (m.group(1), m.group(2), l)
        continue
    m = re.match(r"\s+(\d+)\s+[\d.]+%\s+[0-9a-f]+\s", l)
    if m and cur:
        per[cur[:2]] = per.get(cur[:2], 0) + int(m.group(1))
top = max(per, key=per.get) if per else None
marker = next((i for i, l in enumerate(lines) if re.match(rf"\s+: {re.escape(src)}:{hot}  mix \(inlined into spin", l)), None)
res(top == (src, hot) and marker is not None and "/* HOT */" in lines[marker + 1],
    f"annotate --lines: the most samples under {src}:{hot} (mix inlined into spin), its text shown",
    f"{per} {text[:1500]}")
PY
ctl annotate "$HP" spin --lines --json | python3 -c "import json,sys
r=json.load(sys.stdin)
n=sum(1 for i in r['insns'] if any(l['line'] == $HOT and l['function'] == 'mix' for l in i.get('lines', [])))
print(('PASS: ' if n else 'FAIL: ') + 'annotate --lines --json: %d instructions at line $HOT in mix' % n)"
finish
