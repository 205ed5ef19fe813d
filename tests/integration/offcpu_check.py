#!/usr/bin/env python3
"""offcpu_check.py: off-CPU time by wait, from kprof and from perf, for the off-CPU tests.

  offcpu_check.py perf PERF.json TIDS          perf_offcpu.py's output
  offcpu_check.py pprof RAW.json THREAD TYPE   pprof_raw.py's output, thread_name THREAD, TYPE
  offcpu_check.py export EXPORT.json TIDS      kprofctl export --off-cpu --format json

Each prints "total NS" and one line "CLASS NS" per kind of wait, of the threads given (TIDS: a
comma-separated list, or "all"): sleep (do_nanosleep), futex (futex_*), pipe (pipe_read),
running (a CPU stack of a wall profile), other. The stacks are leaf first (perf, pprof) or root
first (export); the class looks at every frame.
"""
import json
import sys


def klass(frames):
    if "[running]" in frames:
        return "running"
    if any("do_nanosleep" in f for f in frames):
        return "sleep"
    if any("futex" in f for f in frames):
        return "futex"
    if any("pipe_read" in f for f in frames):
        return "pipe"
    return "other"


def out(stacks):
    sums = {"sleep": 0, "futex": 0, "pipe": 0, "running": 0, "other": 0}
    for frames, ns in stacks:
        sums[klass(frames)] += ns
    print("total %d" % sum(sums.values()))
    for k, v in sums.items():
        print("%s %d" % (k, v))


def tids(arg):
    return None if arg == "all" else {int(t) for t in arg.split(",") if t}


def main():
    kind, path = sys.argv[1], sys.argv[2]
    d = json.load(open(path))
    if kind == "perf":
        want = tids(sys.argv[3])
        out([(f, ns) for tid, t in d.items() if want is None or int(tid) in want
             for f, ns in t["stacks"]])
    elif kind == "pprof":
        thread, typ = sys.argv[3], sys.argv[4]
        st = []
        for s in d["samples"]:
            if s["labels"].get("thread_name") != thread or not s["values"].get(typ):
                continue
            fr = s["frames"] + (["[running]"] if not s["values"].get("off_cpu") else [])
            st.append((fr, s["values"][typ]))
        out(st)
    else:
        want, names = tids(sys.argv[3]), [f["name"] for f in d["functions"]]
        out([([names[i] for i in s["frames"]], s["count"]) for s in d["stacks"]
             if want is None or s["tid"] in want])


main()
