#!/usr/bin/env python3
"""calls_contexts.py HCCT_JSON WHAT [--rooted]: PASS if every context of an exact HCCT
(kprofctl hcct --exact --json) is a path of minijit's call graph (tests/fixtures/minijit/minijit.c:
mj_main calls mj_hot, mj_warm and mj_cold; mj_warm calls mj_leaf; nothing else is called by JIT
code without --paths/--rec/...), and with --rooted starts at mj_main (probes in before the first
call); FAIL naming the contexts that are not."""
import json
import sys

EDGES = {("mj_main", "mj_hot"), ("mj_main", "mj_warm"), ("mj_main", "mj_cold"),
         ("mj_warm", "mj_leaf")}


def main():
    h = json.load(open(sys.argv[1]))
    what, rooted = sys.argv[2], "--rooted" in sys.argv[3:]
    paths, bad, n = [], {}, 0
    for x in h["nodes"]:
        p = (() if x["parent"] < 0 else paths[x["parent"]]) + (x["function"],)
        paths.append(p)
        n += x["count"]
        if any(e not in EDGES for e in zip(p, p[1:])) or (rooted and p[0] != "mj_main"):
            bad[">".join(p)] = x["count"]
    ok = not bad and n > 0
    print(("PASS" if ok else "FAIL") + f": {what}: every exact context is a path of minijit's"
          f" call graph{' from mj_main' if rooted else ''} ({len(paths)} contexts, {n} calls;"
          f" not: {dict(list(bad.items())[:5])})")


main()
