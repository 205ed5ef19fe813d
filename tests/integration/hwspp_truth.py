#!/usr/bin/env python3
"""hwspp_truth.py: check kprof's structural path profile of a function in anonymous memory
(hardware breakpoints, one structure graph at a time) against the complete profile of minijit's
own block trace.

Usage: hwspp_truth.py TRUTH_JSON KPROF_JSON [MIN_LOCAL [MIN_GLOBAL [MAX_ERR]]]

TRUTH_JSON is `spp_bench --dump CODE TRACE` (the trace of `minijit --anon --fig1 N
--fig1-trace TRACE --print-code`, replayed through spp.c without a budget: every local path of
every call). KPROF_JSON is `kprofctl paths PID FUNC --structural --top 0 --json`. There is no
complete profile of anonymous code inside kprof (it never sees every block), so the truth is
minijit's. Checks, per structure graph profiled: the overlap percentage of its local paths'
shares with the truth's (>= MIN_LOCAL, default 90); the loop's entries per call, kprof's from its
coefficient (A x entries / outline paths) against the truth's (relative error <= MAX_ERR,
default 0.15); and the overlap of the two global profiles (every graph's paths, global counts as
shares; >= MIN_GLOBAL, default 85). Prints one line per check and the figures; exit 0 if all
hold, 1 if not.
"""
import json
import sys


def key(p):
    return (p["graph"], p["from_back"], p["to_back"], tuple(p["nodes"]))


def overlap(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    if ta <= 0 or tb <= 0:
        return 0.0
    return 100.0 * sum(min(a[k] / ta, b.get(k, 0) / tb) for k in a)


def main():
    truth = json.load(open(sys.argv[1]))
    r = json.load(open(sys.argv[2]))
    min_local = float(sys.argv[3]) if len(sys.argv) > 3 else 90.0
    min_global = float(sys.argv[4]) if len(sys.argv) > 4 else 85.0
    max_err = float(sys.argv[5]) if len(sys.argv) > 5 else 0.15
    s = r["spp"]
    ok = True
    kb = [b["start"] for b in r["blocks"]]
    if kb != truth["blocks"]:
        print(f"FAIL: kprof's blocks are not the truth's: {len(kb)} vs {len(truth['blocks'])}")
        return 1
    tg, kg = truth["graphs"], s["graphs"]
    if [(g["header"], g["parent"]) for g in tg] != [(g["header"], g["parent"]) for g in kg]:
        print("FAIL: structure graphs differ")
        return 1
    tpaths = {key(p): p["local"] for p in truth["paths"]}
    kpaths = {key(p): p["local"] for p in s["paths"]}
    kglob = {key(p): p["global"] for p in s["paths"]}
    t_out = tg[0]["counted"]
    k_out = kg[0]["counted"] * kg[0]["coefficient"]
    for i, g in enumerate(kg):
        if g["counted"] == 0:
            print(f"INFO: graph {i} (header B{g['header']}): not profiled ({g['state']})")
            continue
        a = {k: v for k, v in kpaths.items() if k[0] == i}
        b = {k: v for k, v in tpaths.items() if k[0] == i}
        ov = overlap(a, b)
        good = ov >= min_local
        ok &= good
        line = (f"graph {i} (header B{g['header']}): {g['counted']} local paths, "
                f"overlap with the truth's {sum(b.values())}: {ov:.1f}%")
        if i > 0 and t_out and k_out:
            te = tg[i]["entries"] / t_out
            ke = g["coefficient"] * g["entries"] / k_out
            err = abs(ke - te) / te if te else (0 if ke == 0 else 1)
            good2 = err <= max_err
            ok &= good2
            good &= good2
            line += (f"; entries per call {ke:.3f} vs {te:.3f} (coefficient {g['coefficient']:.3f},"
                     f" error {100 * err:.1f}%)")
        print(("PASS: " if good else "FAIL: ") + line)
    tglob = {k: float(v) for k, v in tpaths.items()}
    gov = overlap(kglob, tglob)
    good = gov >= min_global
    ok &= good
    print(("PASS: " if good else "FAIL: ") +
          f"global profiles overlap {gov:.1f}% (kprof {s['counted']} local paths, "
          f"truth {sum(tpaths.values())} from {truth['calls']} calls)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
