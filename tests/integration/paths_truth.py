#!/usr/bin/env python3
"""paths_truth.py: check kprof's multi-iteration path profile of mj_paths against minijit's own trace.

Usage: paths_truth.py TRACE KPROF_JSON K [--top N]

TRACE is written by `minijit --paths N --paths-trace TRACE`: the address range of every IR block
of mj_paths and, per call, the acyclic paths it took (see the header of minijit.c). From it this
script counts exactly every sequence of n consecutive paths within one call, n = 1..K (the n-grams
of each call's path list; the k-IPF of ALGORITHMS.md §3). A path is identified by the tuple of its
blocks' start addresses, so kprof's Ball-Larus ids need not be known.

KPROF_JSON is `kprofctl paths PID mj_paths --k K --top 0 --json`: "paths" decodes every Ball-Larus
id into blocks ({"start", "end", "edge"}), "sequences" gives the count of every sequence of 1..K
ids. Each sequence is mapped to its tuple of block-start tuples and compared with the truth.

Default (exact) mode: for every n the two multisets must be equal. --top N (budget mode): for
every n, kprof's N hottest sequences must all occur in the truth, in the same relative order of
counts (ties on either side may be in either order), and none of their counts may exceed the
truth's. Prints one summary line per n and the first differences; exit 0 if everything holds,
1 if not, 2 on unusable input.
"""
import argparse
import collections
import json
import sys

MAX_DIFFS = 8


class InputError(Exception):
    pass


def read_trace(path):
    """Return (function name, {ir index: (start, end)}, [[path tuple, ...] per call])."""
    func, blocks, calls = None, {}, []
    with open(path) as fp:
        first = fp.readline().rstrip("\n")
        if first != "# minijit path trace v1":
            raise InputError(f"{path}: not a minijit path trace v1 (first line {first!r})")
        for lineno, line in enumerate(fp, 2):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            try:
                if words[0] == "function" and len(words) == 4:
                    func = words[1]
                elif words[0] == "block" and len(words) == 4:
                    blocks[int(words[1])] = (int(words[2], 16), int(words[3], 16))
                elif words[0] == "act" and len(words) == 2:
                    calls.append([tuple(blocks[int(b)][0] for b in p.split(","))
                                  for p in words[1].split("|")])
                else:
                    raise ValueError("unknown line")
            except (ValueError, KeyError) as e:
                raise InputError(f"{path}:{lineno}: bad line ({e}): {line.rstrip()}")
    if func is None:
        raise InputError(f"{path}: no function line")
    return func, blocks, calls


def truth_counts(calls, k):
    """{n: Counter(sequence of path tuples -> occurrences)} for n = 1..k, within each call."""
    counts = {n: collections.Counter() for n in range(1, k + 1)}
    for paths in calls:
        for n in range(1, k + 1):
            c = counts[n]
            for i in range(len(paths) - n + 1):
                c[tuple(paths[i:i + n])] += 1
    return counts


def number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise InputError(f"{what}: not a number: {v!r}")
    try:
        return v if isinstance(v, int) else int(v, 0)
    except ValueError:
        raise InputError(f"{what}: not a number: {v!r}")


def kprof_counts(path, func, k):
    """{n: Counter} from kprofctl's JSON, plus its state."""
    try:
        with open(path) as fp:
            doc = json.load(fp)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")
    try:
        if doc.get("function") != func:
            raise InputError(f"{path}: function {doc.get('function')!r}, the trace has {func!r}")
        if number(doc.get("k"), "k") < k:
            raise InputError(f"{path}: k = {doc.get('k')}, less than K = {k}")
        ids = {}
        for p in doc["paths"]:
            pid = number(p["id"], "path id")
            if pid in ids:
                raise InputError(f"{path}: path id {pid} listed twice")
            if not p["blocks"]:
                raise InputError(f"{path}: path id {pid} has no blocks")
            ids[pid] = tuple(number(b["start"], f"path {pid} block start") for b in p["blocks"])
        counts = {n: collections.Counter() for n in range(1, k + 1)}
        seen = set()
        for s in doc["sequences"]:
            seq = tuple(number(i, "sequence path id") for i in s["paths"])
            if not seq:
                raise InputError(f"{path}: empty sequence")
            if len(seq) > k:
                continue  # a JSON for a larger k: longer sequences are not compared
            if seq in seen:
                raise InputError(f"{path}: sequence {list(seq)} listed twice")
            seen.add(seq)
            try:
                key = tuple(ids[i] for i in seq)
            except KeyError as e:
                raise InputError(f"{path}: sequence {list(seq)} uses path id {e} not in \"paths\"")
            # Two ids decoding to the same blocks count as one path, as in the truth.
            counts[len(seq)][key] += number(s["count"], "sequence count")
    except (KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{path}: unexpected JSON shape ({type(e).__name__}: {e})")
    return counts, doc.get("state")


def show(seq, index):
    """A sequence as IR block indices ('0,1,2|2,3,7'); addresses not in the trace in hex."""
    return "|".join(",".join(str(index[a]) if a in index else hex(a) for a in p) for p in seq)


def compare_exact(truth, kprof, index, k):
    ok = True
    for n in range(1, k + 1):
        t, m = truth[n], kprof[n]
        diffs = [(s, t.get(s, 0), m.get(s, 0)) for s in set(t) | set(m) if t.get(s, 0) != m.get(s, 0)]
        if not diffs:
            print(f"n={n}: {len(t)} sequences, {sum(t.values())} occurrences, match")
            continue
        ok = False
        print(f"n={n}: truth {len(t)} sequences, {sum(t.values())} occurrences; kprof "
              f"{len(m)} sequences, {sum(m.values())} occurrences; MISMATCH in {len(diffs)}")
        diffs.sort(key=lambda d: (-abs(d[1] - d[2]), -d[1], show(d[0], index)))
        for s, tc, mc in diffs[:MAX_DIFFS]:
            print(f"    {show(s, index)}: truth {tc}, kprof {mc}")
        if len(diffs) > MAX_DIFFS:
            print(f"    ... and {len(diffs) - MAX_DIFFS} more")
    return ok


def compare_top(truth, kprof, index, k, top):
    ok = True
    for n in range(1, k + 1):
        t, m = truth[n], kprof[n]
        # kprof's hottest first; among equal kprof counts the truth's order is taken, so ties
        # in kprof may be in either order, and equal truth counts never break the order.
        hot = sorted(m.items(), key=lambda kv: (-kv[1], -t.get(kv[0], 0), show(kv[0], index)))
        hot = hot[:top]
        bad = []
        for s, mc in hot:
            if s not in t:
                bad.append(f"{show(s, index)}: kprof {mc}, not in the truth")
            elif mc > t[s]:
                bad.append(f"{show(s, index)}: kprof {mc} exceeds the truth {t[s]}")
        for (s1, c1), (s2, c2) in zip(hot, hot[1:]):
            if c1 > c2 and t.get(s1, 0) < t.get(s2, 0):
                bad.append(f"order: {show(s1, index)} (kprof {c1}, truth {t.get(s1, 0)}) before "
                           f"{show(s2, index)} (kprof {c2}, truth {t.get(s2, 0)})")
        want = {s for s, _ in sorted(t.items(), key=lambda kv: -kv[1])[:top]}
        found = sum(1 for s, _ in hot if s in want)
        head = (f"n={n}: kprof's top {len(hot)} of {len(m)} sequences (truth {len(t)}); "
                f"{found} of them among the truth's top {len(want)}")
        if not bad:
            print(head + "; order and counts ok")
            continue
        ok = False
        print(head + f"; FAIL in {len(bad)}")
        for b in bad[:MAX_DIFFS]:
            print("    " + b)
        if len(bad) > MAX_DIFFS:
            print(f"    ... and {len(bad) - MAX_DIFFS} more")
    return ok


def compare_prefix(lower, upper, kprof, index, k, acts):
    ok = True
    for n in range(1, k + 1):
        keys = set(upper[n]) | set(kprof[n])
        bad = [(s, lower[n].get(s, 0), kprof[n].get(s, 0), upper[n].get(s, 0)) for s in keys
               if not lower[n].get(s, 0) <= kprof[n].get(s, 0) <= upper[n].get(s, 0)]
        top = [s for s, _ in kprof[n].most_common(3)]
        print(f"n={n}: {len(kprof[n])} sequences; truth over the first {acts - 1} calls <= kprof "
              f"<= truth over the first {acts}: " + ("ok" if not bad else f"FAIL in {len(bad)}")
              + "; hottest: " + ", ".join(f"{show(s, index)} {kprof[n][s]}" for s in top))
        for s, lo, kc, hi in bad[:5]:
            print(f"    {show(s, index)}: {lo} <= {kc} <= {hi} does not hold")
        ok = ok and not bad
    return ok


def compare_subset(truth, kprof, index, k):
    """Probes in for part of the run (the budget): every sequence one of the truth's, counted at
    most as often, and some counted."""
    ok = True
    for n in range(1, k + 1):
        bad = [(s, c, truth[n].get(s, 0)) for s, c in kprof[n].items() if c > truth[n].get(s, 0)]
        got = sum(kprof[n].values())
        print(f"n={n}: {len(kprof[n])} sequences in kprof ({got} in all), {len(truth[n])} in the "
              "truth; each in the truth, at most as often: " + ("ok" if not bad else
                                                                f"FAIL in {len(bad)}"))
        for s, kc, tc in bad[:5]:
            print(f"    {show(s, index)}: kprof {kc}, truth {tc}")
        ok = ok and not bad and got > 0
    return ok


def compare_bound(truth, kprof, index, k, err):
    ok = True
    for n in range(1, k + 1):
        bad = [(s, kprof[n].get(s, 0), truth[n].get(s, 0))
               for s in set(truth[n]) | set(kprof[n])
               if not kprof[n].get(s, 0) <= truth[n].get(s, 0) <= kprof[n].get(s, 0) + err]
        print(f"n={n}: {len(kprof[n])} sequences in kprof, {len(truth[n])} in the truth; "
              f"kprof <= truth <= kprof + {err}: " + ("ok" if not bad else f"FAIL in {len(bad)}"))
        for s, kc, tc in bad[:5]:
            print(f"    {show(s, index)}: kprof {kc}, truth {tc}")
        ok = ok and not bad
    return ok


def main():
    ap = argparse.ArgumentParser(description="Compare kprof's k-iteration path profile of "
                                 "mj_paths with minijit's --paths-trace.")
    ap.add_argument("trace", metavar="TRACE")
    ap.add_argument("kprof", metavar="KPROF_JSON")
    ap.add_argument("k", metavar="K", type=int)
    ap.add_argument("--top", metavar="N", type=int, help="budget mode: check kprof's N hottest")
    ap.add_argument("--prefix", action="store_true",
                    help="budget mode, exact: with A = the JSON's activations, every count lies "
                         "between the truth over the first A-1 calls and over the first A (the "
                         "trace began at the first call and stopped inside call A or after it)")
    ap.add_argument("--subset", action="store_true",
                    help="duty-cycled mode: every sequence of kprof's in the truth, counted at "
                         "most as often (the probes were in for part of the run)")
    ap.add_argument("--bound", action="store_true",
                    help="pruned mode: kprof <= truth <= kprof + max_error for every sequence "
                         "(max_error from the JSON; absent sequences count 0)")
    a = ap.parse_args()
    if a.k < 1 or (a.top is not None and a.top < 1):
        ap.error("K and N must be >= 1")
    try:
        func, blocks, calls = read_trace(a.trace)
        kprof, state = kprof_counts(a.kprof, func, a.k)
    except (InputError, OSError) as e:
        print(f"paths_truth: {e}", file=sys.stderr)
        return 2
    truth = truth_counts(calls, a.k)
    index = {start: i for i, (start, _) in blocks.items()}
    print(f"{func}: {len(calls)} calls in the trace, kprof state {state}, K = {a.k}"
          + (f", top {a.top}" if a.top else ", duty-cycled" if a.subset else ", exact"))
    if a.prefix:
        with open(a.kprof) as fp:
            acts = number(json.load(fp).get("activations", 0), "activations")
        if not 1 <= acts <= len(calls):
            print(f"paths_truth: {acts} activations in kprof's trace, {len(calls)} calls in the "
                  "trace file", file=sys.stderr)
            return 2
        lower, upper = truth_counts(calls[:acts - 1], a.k), truth_counts(calls[:acts], a.k)
        ok = compare_prefix(lower, upper, kprof, index, a.k, acts)
    elif a.subset:
        ok = compare_subset(truth, kprof, index, a.k)
    elif a.bound:
        with open(a.kprof) as fp:
            err = number(json.load(fp).get("max_error", 0), "max_error")
        ok = compare_bound(truth, kprof, index, a.k, err)
    elif a.top:
        ok = compare_top(truth, kprof, index, a.k, a.top)
    else:
        ok = compare_exact(truth, kprof, index, a.k)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
