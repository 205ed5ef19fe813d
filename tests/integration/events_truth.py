#!/usr/bin/env python3
"""events_truth.py: check kprof's event counts (paths --events) against minijit's own.

Usage: events_truth.py TRACE TRUTH KPROF_JSON [--estimate]

TRACE is minijit's path trace of the function (--paths-trace or --fig1-trace: block addresses and
per-call paths), TRUTH its --truth output (the `func`, `events` and `evblock` lines: the classes
its encoder tagged, counted along its interpreter's block trace), KPROF_JSON
`kprofctl paths PID FUNC --top 0 --json`.

Default (exact): the trace covered every call, so for every class minijit counts, kprof's count
(sum over paths of path count x the path's events, from its own decoding of the machine code)
must equal minijit's; kprof's other classes must be 0 (minijit's encoder emits none of them);
every block's static classes must equal the encoder's tags; and every loop's counts must equal
the sum over the loop's blocks of visits x tags, the loops taken from the trace's back edges
(b -> t with t <= b: the loop is blocks t..b), not from kprof.

--estimate (a budgeted trace that saw only some calls): kprof's counts scaled by calls / traced
activations, and Basso's accuracy 1 - |observed - actual| / actual printed per class; exit 1 if
the instruction count's accuracy is below 0.8.
"""
import json
import sys


def read(trace, truth, kjson):
    blocks, backs = {}, {}
    func = None
    for line in open(trace):
        w = line.split()
        if w and w[0] == "function":
            func = w[1]
        elif w and w[0] == "block":
            blocks[int(w[2], 16)] = int(w[1])
        elif w and w[0] == "act":
            seq = [int(b) for p in w[1].split("|") for b in p.split(",")]
            for a, b in zip(seq, seq[1:]):
                if b <= a:
                    backs.setdefault(b, set()).add(a)
    events, evblock, calls = {}, {}, None
    for line in open(truth):
        w = line.split()
        if len(w) > 2 and w[0] == "events" and w[1] == func:
            events = {k: int(v) for k, v in (x.split("=") for x in w[2:])}
        elif len(w) > 4 and w[0] == "evblock" and w[1] == func:
            evblock[int(w[2])] = (int(w[4]), {k: int(v) for k, v in (x.split("=") for x in w[5:])})
        elif len(w) > 5 and w[0] == "func" and w[1] == func:
            calls = int(w[5])
    doc = json.load(open(kjson))
    return func, blocks, backs, events, evblock, calls, doc


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    func, blocks, backs, events, evblock, calls, doc = read(*sys.argv[1:4])
    if not events or doc.get("function") != func:
        print(f"FAIL: no events for {func} in the truth, or kprof traced {doc.get('function')}")
        return 2
    got = doc["events"]
    ok = True
    if "--estimate" in sys.argv:
        scale = calls / doc["activations"]
        print(f"budgeted trace: {doc['activations']} of {calls} calls, {doc['path_events']} paths;"
              f" counts x {scale:.2f}")
        for k, actual in events.items():
            est = got.get(k, 0) * scale
            acc = 1 - abs(est - actual) / actual if actual else (1.0 if est == 0 else 0.0)
            print(f"  {k:12s} actual {actual:10d} estimated {est:12.0f} accuracy {acc:.4f}")
            if k == "insns" and acc < 0.8:
                ok = False
        return 0 if ok else 1
    for k, v in got.items():
        want = events.get(k, 0)
        if v != want:
            print(f"MISMATCH {k}: kprof {v}, minijit {want}")
            ok = False
    print(f"function: {len(events)} classes, insns {events['insns']}, "
          f"{'equal' if ok else 'NOT equal'}")
    names = doc["event_names"]
    for i, b in enumerate(doc["blocks"]):
        ir = blocks.get(b["start"])
        if ir is None:
            print(f"MISMATCH block {i} at {b['start']:#x}: not an IR block")
            ok = False
            continue
        tags = evblock[ir][1]
        mine = dict(zip(names, doc["block_events"][i]))
        bad = {k: (mine[k], tags.get(k, 0)) for k in mine if mine[k] != tags.get(k, 0)}
        if bad:
            print(f"MISMATCH block {ir}: kprof/minijit {bad}")
            ok = False
    start = {b["start"]: i for i, b in enumerate(doc["blocks"])}
    ir2addr = {v: k for k, v in blocks.items()}
    for le in doc["loop_events"]:
        h = blocks[doc["blocks"][le["header"]]["start"]]
        body = set()
        for latch in backs.get(h, ()):
            body |= set(range(h, latch + 1))
        want = {k: sum(evblock[b][0] * evblock[b][1].get(k, 0) for b in body) for k in names}
        bad = {k: (le["events"][k], want[k]) for k in names if le["events"][k] != want[k]}
        print(f"loop at IR block {h} (blocks {sorted(body)}): "
              f"{'equal' if not bad else 'MISMATCH ' + str(bad)}")
        ok = ok and not bad and start.get(ir2addr[h]) == le["header"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
