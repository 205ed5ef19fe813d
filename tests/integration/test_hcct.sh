#!/usr/bin/env bash
# The HCCT of a live target, checked against the exact contexts of the same samples (from the
# JSON export): every context with at least phi N samples is reported hot (no false negatives),
# every monitored count brackets the true count (count - err <= true <= count), hot ones are
# really above phi - eps, and the tree is connected through its cold ancestors.
. "$(dirname "$0")/lib.sh"
start_daemon || { fail "daemon starts" "see log"; exit 1; }
start_minijit --seconds 120 || { fail "minijit starts" ""; exit 1; }
P=$MJ_PID
check "attach with --eps 0.002" ctl attach "$P" --freq 999 --eps 0.002
wait_for 30 at_least_samples "$P" 3000 || fail "samples" "$(ctl list)"
ctl detach "$P" >/dev/null # freeze: the HCCT and the export see the same samples
ctl hcct "$P" --phi 0.01 | tee "$TDIR/h.txt"
ctl hcct "$P" --phi 0.01 --json >"$TDIR/h.json"
# The text (issue 29, item 5): TOTAL is inclusive (each context's at least its children's),
# SELF its own, the header says which; a marker never sits where a shallower context's name
# starts (3 columns a level, the marker in the 2 before the name).
python3 - "$TDIR/h.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
hdr = [l for l in lines if "CONTEXT" in l]
ok = bool(hdr) and "TOTAL" in hdr[0] and "SELF" in hdr[0] and "with its callees" in hdr[0]
rows = []  # (name column, total or None, marker column or None)
for l in lines[lines.index(hdr[0]) + 1:] if hdr else []:
    m = re.match(r"^( *)([*.] )?(\S.*)$", l[35:])
    if len(l) <= 35 or not m:
        continue
    nums = l[:35].split()
    mcol = 35 + len(m.group(1)) if m.group(2) else None
    rows.append((35 + len(m.group(1)) + len(m.group(2) or ""), int(nums[0]) if nums else None, mcol))
bad = []
for i, (col, tot, mark) in enumerate(rows):
    for j in range(i + 1, len(rows)):
        if rows[j][0] <= col:
            break
        if rows[j][0] == col + 3 and tot is not None and rows[j][1] is not None and rows[j][1] > tot:
            bad.append(("child total above its parent's", i, j))
    if mark is not None and any(c == mark for c, _, _ in rows if c < col):
        bad.append(("marker where a shallower name starts", i))
ok = ok and rows and not bad
print(("PASS" if ok else "FAIL") + f": hcct text: TOTAL inclusive, SELF own, markers clear of shallower names ({len(rows)} rows; {bad[:3]})")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || FAILS=$((FAILS + 1))
ctl export "$P" --format json -o "$TDIR/e.json"
python3 - "$TDIR" <<'PY'
import json, sys
d = sys.argv[1]
h = json.load(open(d + "/h.json")); e = json.load(open(d + "/e.json"))
def res(ok, msg): print(("PASS: " if ok else "FAIL: ") + msg)
funcs = e["functions"]
# Exact frequencies of user contexts (kernel frames dropped, as the HCCT does by default).
exact = {}
for s in e["stacks"]:
    ctx = tuple((funcs[i]["name"], funcs[i]["module"]) for i in s["frames"] if funcs[i]["kind"] != "kernel")
    if ctx:
        exact[ctx] = exact.get(ctx, 0) + s["count"]
N = sum(exact.values())
res(h["n"] == N, f"HCCT N {h['n']} == samples with a user stack {N}")
nodes = h["nodes"]; paths = []
for n in nodes:
    p = () if n["parent"] < 0 else paths[n["parent"]]
    paths.append(p + ((n["function"], n["module"]),))
phi, eps = h["phi"], h["eps"]
hot = {paths[i] for i, n in enumerate(nodes) if n["hot"]}
need = {c for c, f in exact.items() if f >= phi * N}
res(need <= hot, f"no false negatives: all {len(need)} contexts with >= phi N samples are hot")
res(all(exact.get(c, 0) >= (phi - eps) * N for c in hot), "every hot context has >= (phi - eps) N samples")
ok = all(n["count"] - n["err"] <= exact.get(paths[i], 0) <= n["count"] for i, n in enumerate(nodes) if n["monitored"])
res(ok, "count - err <= true frequency <= count for every monitored context")
res(all(n["parent"] < i for i, n in enumerate(nodes)), "parents precede children (a connected tree)")
names = {p[-1][0] for p in hot}
res({"mj_hot", "mj_warm", "mj_cold"} <= names, f"hot leaves include mj_hot, mj_warm, mj_cold: {sorted(names)}")
deep = [p for p in hot if [f for f, _ in p[-4:]] == ["main", "run_round", "mj_main", "mj_hot"]]
res(len(deep) == 1, "the context main > run_round > mj_main > mj_hot is hot")
m = 500  # ceil(1 / 0.002)
res(h["mcct_nodes"] <= 32 * m + 1024, f"MCCT nodes {h['mcct_nodes']} within the bound 32 m + 1024 for eps 0.002")
PY
out=$(ctl hcct "$P" --phi 0.001 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "below the target's eps" <<<"$out" && pass "phi below eps refused with a reason" ||
	fail "phi < eps" "rc=$rc $out"
# No --phi: the default (0.001) is below this target's eps (0.002), so the eps is used.
out=$(ctl hcct "$P" --json 2>&1); rc=$?
dphi=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["phi"])' "$out" 2>/dev/null)
[ $rc -eq 0 ] && [ "$dphi" = 0.002 ] && pass "hcct without --phi uses the target's eps when larger (phi $dphi)" ||
	fail "default phi" "rc=$rc phi=$dphi ${out:0:200}"
out=$(ctl hcct "$P" --phi 2 2>&1); rc=$?
[ $rc -eq 2 ] && pass "phi out of range is a usage error" || fail "phi range" "rc=$rc $out"
finish
