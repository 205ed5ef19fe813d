#!/usr/bin/env python3
"""hwpaths_truth.py: check kprof's branch counts and loop paths of mj_paths in anonymous memory
(hardware breakpoints) against minijit's own block trace.

Usage: hwpaths_truth.py TRACE KPROF_JSON K [--subset]

TRACE is written by `minijit --anon --paths N --paths-trace TRACE` (the blocks of every call, as
an interpreter of the IR follows them; see minijit.c). KPROF_JSON is `kprofctl paths PID
mj_paths --k K --top 0 --json` of a trace whose first group of breakpoints covered the whole run.

Branches: for every branch kprof covered, taken / not taken must equal the number of times the
trace goes from its block to the taken target / elsewhere. Loops: for every loop kprof followed
(hw_loops: header and body), the trace is cut into activations (maximal runs of the body's
blocks) and iterations (ended by a back edge, b -> t with t <= b in IR order, or by leaving the
body); every sequence of 1..K consecutive iterations of one activation is counted, each
iteration named by its blocks' start addresses, and the multiset must equal kprof's sequences
(paths decoded into blocks). --subset (a trace whose breakpoints the budget took off and put
back): every count at most the truth's, every sequence one of the truth's, and some counted.
Prints one line per check; exit 0 if all hold, 1 if not.
"""
import collections
import json
import sys


def read_trace(path):
    blocks, calls = {}, []
    with open(path) as fp:
        for line in fp:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "block":
                blocks[int(w[1])] = int(w[2], 16)
            elif w[0] == "act":
                seq = []
                for p in w[1].split("|"):
                    seq.extend(int(b) for b in p.split(","))
                calls.append(seq)
    return blocks, calls


def main():
    # --subset: the breakpoints were in for part of the run (the budget took them off and put
    # them back): every count at most the truth's, every sequence one of the truth's.
    subset = "--subset" in sys.argv[4:]
    trace, kjson, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    blocks, calls = read_trace(trace)
    r = json.load(open(kjson))
    kb = r["blocks"]
    ok = True
    # Branches.
    for b in r["branches"]:
        if b["covered_ms"] == 0:
            continue
        start = kb[b["block"]]["start"]
        ir = [i for i, s in blocks.items() if s == start]
        taken = not_taken = 0
        for seq in calls:
            for x, y in zip(seq, seq[1:]):
                if ir and x == ir[0]:
                    if blocks[y] == b["taken_to"]:
                        taken += 1
                    else:
                        not_taken += 1
        good = (taken, not_taken) == (b["taken"], b["not_taken"])
        if subset:
            good = b["taken"] <= taken and b["not_taken"] <= not_taken
        ok &= good
        print(("PASS" if good else "FAIL") + f": branch B{b['block']} ({b['cond']}): kprof "
              f"{b['taken']} taken / {b['not_taken']} not, truth {taken} / {not_taken}")
    # Loops.
    if not r["hw_loops"]:
        print("FAIL: no loop followed")
        return 1
    paths = {p["id"]: tuple(s["start"] for s in p["blocks"]) for p in r["paths"]}
    for lp in r["hw_loops"]:
        body = {kb[i]["start"] for i in lp["blocks"]}
        truth = collections.Counter()
        for seq in calls:
            acts, cur, it = [], None, []
            for i, x in enumerate(seq):
                inside = blocks[x] in body
                if inside and cur is None:
                    cur, it = [], []
                if not inside:
                    if cur is not None:
                        if it:
                            cur.append(tuple(it))
                        acts.append(cur)
                    cur = None
                    continue
                it.append(blocks[x])
                nxt = seq[i + 1] if i + 1 < len(seq) else None
                if nxt is not None and nxt <= x and blocks[nxt] in body:
                    cur.append(tuple(it))
                    it = []
            if cur is not None:
                if it:
                    cur.append(tuple(it))
                acts.append(cur)
            for a in acts:
                for n in range(1, k + 1):
                    for j in range(len(a) - n + 1):
                        truth[tuple(a[j:j + n])] += 1
        got = collections.Counter()
        for s in r["sequences"]:
            got[tuple(paths[i] for i in s["paths"])] += s["count"]
        got_k = sum(got.values())
        acts = sum(1 for seq in calls for i, x in enumerate(seq)
                   if blocks[x] in body and (i == 0 or blocks[seq[i - 1]] not in body))
        good = got == truth and lp["activations"] == acts
        if subset:
            good = (got_k > 0 and all(c <= truth.get(key, 0) for key, c in got.items())
                    and lp["activations"] <= acts)
        ok &= good
        diffs = [(key, got.get(key, 0), truth.get(key, 0)) for key in set(got) | set(truth)
                 if got.get(key, 0) != truth.get(key, 0)][:4]
        print(("PASS" if good else "FAIL") + f": loop at B{lp['header']}: {lp['activations']} "
              f"activations, {len(truth)} distinct sequences of 1..{k} iterations ({got_k} in all)"
              + (f" in the trace, kprof's {len(got)} among them, none counted more" if subset else
                 f" equal the trace's") + ("" if good else f"; first differences {diffs}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
