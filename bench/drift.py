#!/usr/bin/env python3
"""bench/drift.py: profile-drift detection (ALGORITHMS.md §12) against ground truth.

Run as root: `BUILD=build python3 bench/drift.py` (about 6 minutes with the defaults).

Latency: for each frequency in DRIFT_FREQS (default "99 999") and DRIFT_RUNS runs (default 3), a
private kprofd, `minijit --phase 40 --flip-after DRIFT_FLIP` (default 10 s) attached at that
frequency; `kprofctl drift --json` is polled every 0.2 s until mj_phase's first drift (at most
40 s after the flip). Latency in time: the event's sample time minus the marker minijit prints
(both CLOCK_MONOTONIC). Latency in samples: mj_phase's samples at the event (the event says)
minus its samples at the marker, interpolated between the two polls around it. Any drift of any
function before the marker is a false alarm.

Steady: one run of DRIFT_STEADY seconds (default 180): `minijit --phase 40` (never flips) at
999 Hz and, if node is installed, `node --perf-basic-prof tests/fixtures/drift.js` without a flip
at 499 Hz; every drift is a false alarm. Prints each function's samples, judgements' lowest
overlap and drifts.

Output: Markdown on stdout; progress on stderr.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kpbench as kb  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
FREQS = [int(f) for f in os.environ.get("DRIFT_FREQS", "99 999").split()]
RUNS = int(os.environ.get("DRIFT_RUNS", "3"))
FLIP = float(os.environ.get("DRIFT_FLIP", "10"))
STEADY = float(os.environ.get("DRIFT_STEADY", "180"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Daemon(kb.Daemon):
    """A private kprofd (kb.Daemon) that answers `kprofctl drift PID --json`."""

    def __init__(self):
        super().__init__(BUILD, "kprof-drift.")

    def drift(self, pid):
        r = self.ctl.run("drift", str(pid), "--json")
        return json.loads(r.stdout) if r.returncode == 0 else None


def func(d, name):
    f = [f for f in d["functions"] if f["function"] == name] if d else []
    return f[0] if f else None


def one_flip(freq):
    d = Daemon()
    out = os.path.join(d.dir, "mj.out")
    mj = subprocess.Popen([os.path.join(BUILD, "minijit"), "--phase", "40", "--flip-after",
                           str(FLIP), "--seconds", str(FLIP + 45)],
                          stdout=open(out, "w"), stderr=subprocess.DEVNULL)
    time.sleep(0.2)
    d.ctl.run("attach", str(mj.pid), "--freq", str(freq))
    polls, res = [], None
    deadline = time.monotonic() + FLIP + 40
    while time.monotonic() < deadline:
        t = time.monotonic_ns()
        j = d.drift(mj.pid)
        f = func(j, "mj_phase")
        if f:
            polls.append((t, f["samples"]))
        ev = [e for e in (j or {}).get("events", []) if e["function"] == "mj_phase"]
        marker = [l.split() for l in open(out) if l.startswith("phase-flip")]
        if ev and marker:
            t_flip = int(marker[0][2])
            before = [p for p in polls if p[0] <= t_flip]
            after = [p for p in polls if p[0] > t_flip]
            s_flip = None
            if before and after:
                (t0, s0), (t1, s1) = before[-1], after[0]
                s_flip = s0 + (s1 - s0) * (t_flip - t0) / max(1, t1 - t0)
            e = ev[0]
            early = [x for x in j["events"] if x["time_ns"] < t_flip]
            res = {"ms": (e["time_ns"] - t_flip) / 1e6,
                   "samples": e["function_samples"] - s_flip if s_flip is not None else None,
                   "overlap": e["overlap"], "early": len(early)}
            break
        time.sleep(0.2)
    mj.kill()
    mj.wait()
    d.close()
    return res


def steady():
    d = Daemon()
    mj = subprocess.Popen([os.path.join(BUILD, "minijit"), "--phase", "40", "--seconds",
                           str(STEADY + 5)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [(mj, 999, "minijit --phase 40")]
    node = None
    if shutil.which("node"):
        node = subprocess.Popen(["node", "--perf-basic-prof",
                                 os.path.join(ROOT, "tests/fixtures/drift.js"),
                                 str(STEADY + 5)], cwd=d.dir,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append((node, 499, "node drift.js (no flip)"))
    time.sleep(1.0)
    for p, f, _ in procs:
        d.ctl.run("attach", str(p.pid), "--freq", str(f))
    time.sleep(STEADY)
    rows = []
    for p, f, what in procs:
        j = d.drift(p.pid)
        rows.append((what, f, j))
        p.kill()
        p.wait()
    d.close()
    return rows


def main():
    print("| Frequency | Runs | Latency (ms) per run | Median | Latency (mj_phase samples) per run"
          " | Median | Overlap at detection | False alarms before the flip |")
    print("|---:|---:|---|---:|---|---:|---|---:|")
    for freq in FREQS:
        res = []
        for r in range(RUNS):
            log(f"flip run {r + 1}/{RUNS} at {freq} Hz")
            x = one_flip(freq)
            log(f"  {x}")
            res.append(x)
        ok = [x for x in res if x]
        ms = [x["ms"] for x in ok]
        sm = [x["samples"] for x in ok if x["samples"] is not None]
        if not ok:
            print(f"| {freq} Hz | {len(res)} | none detected | | | | | |")
            continue
        ov = ", ".join("%.3f" % x["overlap"] for x in ok)
        print(f"| {freq} Hz | {len(res)} ({len(res) - len(ok)} missed) | "
              f"{', '.join('%.0f' % v for v in ms)} | {statistics.median(ms):.0f} | "
              f"{', '.join('%.0f' % v for v in sm)} | "
              f"{statistics.median(sm) if sm else float('nan'):.0f} | {ov} | "
              f"{sum(x['early'] for x in ok)} |")
    log(f"steady run of {STEADY:.0f} s")
    print()
    print(f"Steady run, {STEADY:.0f} s:")
    print()
    print("| Target | Frequency | Function | Samples fed | Judged windows' lowest overlap | Reference"
          " refreshes | Drifts (false alarms) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for what, f, j in steady():
        if not j:
            print(f"| {what} | {f} Hz | (no reply) | | | | |")
            continue
        for fn in sorted(j["functions"], key=lambda x: -x["samples"])[:6]:
            name = fn["function"] if len(fn["function"]) < 50 else fn["function"][:47] + "..."
            mo = f"{fn['min_overlap']:.3f}" if fn["min_overlap"] >= 0 else "-"
            print(f"| {what} | {f} Hz | {name} | {fn['samples']} | {mo} | {fn['refreshes']} |"
                  f" {fn['drifts']} |")
        print(f"| {what} | {f} Hz | all ({len(j['functions'])} functions) | {j['samples']} | |"
              f" | **{j['events_total']}** |")


if __name__ == "__main__":
    main()
