#!/usr/bin/env python3
"""perf_offcpu.py: off-CPU time per thread and stack from `perf script --ns` output of
`perf record -e sched:sched_switch -g`, as bcc's offcputime counts it: for each thread, every
interval from the switch that takes it off a CPU (prev_pid) to the one that brings it back
(next_pid), under the stack of the switch out. The side of the off-CPU tests that kprof did not
compute.

  perf_offcpu.py SCRIPT.txt [FROM TO]  ->  JSON {tid: {"comm": C, "ns": N, "stacks": [[frames], ns]...}}

With FROM and TO (perf's clock, ns), only the intervals that ended between them, whole: what
kprof's profile of that interval holds (it counts an off-CPU interval when it ends).

Frames are leaf first, kernel then user, as perf prints them ("[unknown]" kept); of the lines
of one address (a --call-graph dwarf record lists the functions inlined there first), the last,
the function that holds the address. Intervals cut by the recording's start or end are not
counted. Events are taken in time order, whatever order perf script printed them in.
"""
import json
import re
import sys

EV = re.compile(r"\s(\d+\.\d+):\s+sched:sched_switch:.*?prev_comm=(.*?) prev_pid=(\d+) .*"
                r"==> next_comm=(.*?) next_pid=(\d+)")


def events(path):
    ev, frames, addrs = None, [], []
    for line in open(path, errors="replace"):
        if not line.strip():
            if ev:
                yield ev + (frames,)
            ev, frames, addrs = None, [], []
            continue
        m = EV.search(line)
        if m:
            if ev:
                yield ev + (frames,)
            t = m.group(1).split(".")
            ns = int(t[0]) * 1000000000 + int(t[1].ljust(9, "0")[:9])
            ev, frames, addrs = (ns, m.group(2), int(m.group(3)), m.group(4), int(m.group(5))), [], []
        elif ev:
            parts = line.split(None, 1)
            sym = parts[1].strip() if len(parts) > 1 else "[unknown]"
            if sym.endswith(" (inlined)"):
                sym = sym[:-len(" (inlined)")]
            if addrs and addrs[-1] == parts[0]:
                frames[-1] = sym  # an inlined function's line before its holder's
            else:
                frames.append(sym)
                addrs.append(parts[0])
    if ev:
        yield ev + (frames,)


def main():
    start, out = {}, {}
    lo, hi = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (0, 1 << 63)
    # In time order: perf script delivers a CPU's buffer late when perf record could not write
    # it in time (a loaded machine: "out of order events"), and a switch back in seen before its
    # switch out would lose the whole wait.
    for ns, pcomm, prev, ncomm, nxt, frames in sorted(events(sys.argv[1]), key=lambda e: e[0]):
        if prev:
            start[prev] = (ns, pcomm, tuple(frames))
        if nxt in start:
            t0, comm, st = start.pop(nxt)
            if not lo <= ns <= hi:
                continue
            d = out.setdefault(nxt, {"comm": comm, "ns": 0, "stacks": {}})
            d["ns"] += ns - t0
            d["stacks"][st] = d["stacks"].get(st, 0) + ns - t0
    for d in out.values():
        d["stacks"] = sorted(([list(k), v] for k, v in d["stacks"].items()), key=lambda x: -x[1])
    json.dump(out, sys.stdout)


main()
