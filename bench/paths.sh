#!/usr/bin/env bash
# bench/paths.sh: what path tracing (kprofctl paths) costs the target, and the k-SF's size vs k.
#
# Workload: `minijit --wait-usr1 --rounds PATHS_ROUNDS --paths PATHS_N --cleanup` (each round
# runs mj_main, then calls the JIT function mj_paths PATHS_N times: about 10 path events and 45
# block probe hits per call; the seed is fixed, so every run takes the same paths). minijit
# waits for SIGUSR1 after its ready line, so a trace is started (`kprofctl paths PID mj_paths`)
# and seen in state "tracing" before the first round. Each run is timed from SIGUSR1 to its
# exit; its user and system time come from wait4.
#
# 1. and 2. BENCH_PAIRS groups of runs: untraced; traced for the whole run (k = 4, --duration
#    3600, so the run ends first); traced with each budget of PATHS_BUDGETS (the trace stops
#    after that many path events and its probes are removed, off kprofd's loop, which takes
#    about 1 s in the kernel here while the probes still fire). The order rotates in each group
#    (as bench/calls.sh does) so drift cancels; each ratio is traced / the untraced run of the
#    same group, median (min, max) over the groups. Per event: (traced - untraced wall time) /
#    path_events and / probe_hits of the trace's JSON. kprofd's own estimate (`slowdown`, from
#    the target's system-time share) is shown beside the measured ratio, and the daemon's CPU
#    time (`status` cpu_ns before and after) per path event. A budgeted trace stops counting
#    probe hits when it ends, so its table also gives the hits implied by its extra system time
#    (at the whole-run trace's system time per hit): the difference is the removal's cost.
# 3. One whole-run trace per k of PATHS_KS: ksf_nodes, ipf_nodes, level_sums[0], path_events,
#    and kprofd's CPU for one full query (`paths PID --show --top 0 --json`) after the run.
#
# kprofctl paths attaches the target with kprofd's defaults first (sampling at 99 Hz), so a
# traced run is also sampled; bench/slowdown.sh measures that part alone (about 1%).
# The binaries are copied to a private directory first (a rebuild during the run changes nothing).
# Output: Markdown on stdout and $BUILD/bench/paths.md, the runs in $BUILD/bench/paths.csv;
# progress on stderr. Nothing here asserts on time.
#
# Environment: BUILD (build), BENCH_PAIRS (5), PATHS_ROUNDS (500, about 1.3 s untraced),
# PATHS_N (20), PATHS_BUDGETS ("1000 10000"), PATHS_KS ("1 2 4 8 16"). Needs root.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
export BENCH_PAIRS=${BENCH_PAIRS:-5}
export PATHS_ROUNDS=${PATHS_ROUNDS:-500}
export PATHS_N=${PATHS_N:-20}
export PATHS_BUDGETS=${PATHS_BUDGETS:-1000 10000}
export PATHS_KS=${PATHS_KS:-1 2 4 8 16}

need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit"
need_root "kprofd loads BPF programs and uprobes"
[ "$BENCH_PAIRS" -ge 5 ] || warn "BENCH_PAIRS=$BENCH_PAIRS; the documented figures use at least 5"
others_running 'kprofd|minijit|node|perf|bpftrace'
export BENCH_OTHERS=${OTHERS:-none}

bench_start bench-paths
DIR=$TDIR
# Private copies of the binaries: a rebuild of the tree during the run changes nothing.
cp "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/minijit" "$DIR/"
export SOCK=$DIR/kprofd.sock
BENCH_KEEP+=("$DIR/kprofd.log $BUILD/bench/paths-kprofd.log")
kprofd_start "$DIR/kprofd" "$DIR/kprofctl" "$SOCK" "" "$DIR/kprofd.log"
mkdir -p "$BUILD/bench"

export KPROFCTL=$DIR/kprofctl MINIJIT=$DIR/minijit OUT_DIR=$BUILD/bench
BENCH_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
export BENCH_COMMIT
BENCH_MACHINE="Linux $(uname -r), $(nproc) CPUs, load average before the run $(loadavg)"
export BENCH_MACHINE
BENCH_DATE=$(date_utc)
export BENCH_DATE

PYTHONPATH=$BENCH_DIR python3 - <<'PY' | tee "$BUILD/bench/paths.md"
import json, os, signal, statistics, subprocess, sys, time

import kpbench as kb

env = os.environ
KPROFCTL, MINIJIT, SOCK = env["KPROFCTL"], env["MINIJIT"], env["SOCK"]
PAIRS, ROUNDS, N = int(env["BENCH_PAIRS"]), int(env["PATHS_ROUNDS"]), int(env["PATHS_N"])
BUDGETS = [int(b) for b in env["PATHS_BUDGETS"].split()]
KS = [int(k) for k in env["PATHS_KS"].split()]


kb.set_prefix("bench/paths.sh")
log, ctl = kb.log, kb.Ctl(KPROFCTL, SOCK)


def daemon_cpu_ns():
    return ctl.status()["cpu_ns"]


def run(k=None, budget=0):
    """One run; k None: untraced. Returns a dict (wall, user, sys, and the trace's JSON)."""
    p = subprocess.Popen([MINIJIT, "--wait-usr1", "--rounds", str(ROUNDS), "--paths", str(N),
                          "--cleanup"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    c = None
    try:
        kb.read_until(p.stderr.fileno(), b"", b"waiting", 10, "minijit %d" % p.pid)
        if k is not None:
            args = ["paths", str(p.pid), "mj_paths", "--k", str(k), "--duration", "3600",
                    "--top", "0", "--json"] + (["--budget", str(budget)] if budget else [])
            c = subprocess.Popen([KPROFCTL, "--socket", SOCK, *args], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 20
            while True:
                r = ctl.run("paths", str(p.pid), "--show", "--json")
                if r.returncode == 0 and json.loads(r.stdout)["state"] == "tracing":
                    break
                if c.poll() is not None or time.monotonic() > deadline:
                    sys.exit("bench/paths.sh: the trace of %d did not start: %s"
                             % (p.pid, c.stderr.read() if c.poll() is not None else "timeout"))
                time.sleep(0.05)
        cpu0 = daemon_cpu_ns()
        t0 = time.perf_counter()
        os.kill(p.pid, signal.SIGUSR1)
        while os.read(p.stderr.fileno(), 4096):
            pass
        _, st, ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter()
        p.returncode = os.waitstatus_to_exitcode(st)
        if p.returncode != 0:
            sys.exit("bench/paths.sh: minijit %d exited with status %d" % (p.pid, p.returncode))
        res = dict(wall=t1 - t0, user=ru.ru_utime, sys=ru.ru_stime, k=k, budget=budget, j=None)
        if c is not None:
            out, err = c.communicate(timeout=120)
            if c.returncode != 0:
                sys.exit("bench/paths.sh: kprofctl paths %d failed (%d): %s" % (p.pid, c.returncode, err.strip()))
            res["j"] = json.loads(out)
            time.sleep(0.2)  # let kprofd finish with the exit before reading its CPU time
        cpu1 = daemon_cpu_ns()
        res["daemon_s"] = (cpu1 - cpu0) / 1e9
        if c is not None:
            # What one query costs kprofd (kprofctl paths sends one every 100 ms while tracing).
            ctl("paths", str(p.pid), "--show", "--top", "0", "--json")
            res["query_ms"] = (daemon_cpu_ns() - cpu1) / 1e6
        return res
    finally:
        for x in (p, c):
            if x is not None and x.poll() is None:
                x.kill()
                x.wait()
        p.stderr.close()


def mmm(xs):
    return statistics.median(xs), min(xs), max(xs)


log("warm-up (not counted): one untraced and one traced run")
run()
run(4)

modes = ["none", "full"] + ["b%d" % b for b in BUDGETS]
groups, raw = [], []
stat0, t_start = kb.cpu_stat(), time.monotonic()
for i in range(PAIRS):
    g = {}
    for j in range(len(modes)):
        m = modes[(i + j) % len(modes)]
        g[m] = run() if m == "none" else run(4, 0 if m == "full" else int(m[1:]))
        r = g[m]
        log("group %d/%d %-6s %.3f s (user %.3f, sys %.3f)%s" % (
            i + 1, PAIRS, m, r["wall"], r["user"], r["sys"],
            "" if r["j"] is None else ", %d path events, %d probe hits, %s, kprofd estimate %.2fx"
            % (r["j"]["path_events"], r["j"]["probe_hits"], r["j"]["end_reason"], r["j"]["slowdown"])))
        raw.append((i + 1, m, r))
    groups.append(g)
ksweep = {}
for k in KS:
    ksweep[k] = run(k)
    j = ksweep[k]["j"]
    log("k=%d: %.3f s, %d path events, %d k-SF nodes, %d k-IPF nodes"
        % (k, ksweep[k]["wall"], j["path_events"], j["ksf_nodes"], j["ipf_nodes"]))
    raw.append((0, "k%d" % k, ksweep[k]))
stat1, elapsed = kb.cpu_stat(), time.monotonic() - t_start
busy = kb.busy_pct(stat0, stat1)[0]

o = []
o.append("Command: `bash bench/paths.sh` (BENCH_PAIRS=%d PATHS_ROUNDS=%d PATHS_N=%d "
         "PATHS_BUDGETS='%s' PATHS_KS='%s')" % (PAIRS, ROUNDS, N, env["PATHS_BUDGETS"], env["PATHS_KS"]))
o.append("")
o.append("* %s; commit %s; %s" % (env["BENCH_DATE"], env["BENCH_COMMIT"], env["BENCH_MACHINE"]))
o.append("* Workload: `minijit --wait-usr1 --rounds %d --paths %d --cleanup` (%d calls of mj_paths),"
         " timed from SIGUSR1 to exit; %d groups, order rotated; %.0f s in all, CPUs %.0f%% busy "
         "(/proc/stat; one busy CPU = %.0f%%); other profilers/fixtures running at the start: %s"
         % (ROUNDS, N, ROUNDS * N, PAIRS, elapsed, busy, 100.0 / os.cpu_count(), env["BENCH_OTHERS"]))
o.append("")
o.append("Slowdown (wall time / the untraced run of the same group; median (min, max)); kprofd's "
         "estimate is the trace's `slowdown` field; user and system time of minijit from wait4 "
         "(medians):")
o.append("")
o.append("| run | wall (median) | slowdown measured | kprofd's estimate | minijit user | minijit sys | traced_ms | end_reason |")
o.append("|---|---:|---:|---:|---:|---:|---:|---|")
names = {"none": "untraced", "full": "whole run traced, k = 4"}
for m in modes:
    rs = [g[m] for g in groups]
    w = statistics.median(r["wall"] for r in rs)
    us = statistics.median(r["user"] for r in rs)
    sy = statistics.median(r["sys"] for r in rs)
    if m == "none":
        o.append("| untraced | %.3f s | 1 | - | %.3f s | %.3f s | - | - |" % (w, us, sy))
        continue
    ratio = mmm([g[m]["wall"] / g["none"]["wall"] for g in groups])
    est = mmm([r["j"]["slowdown"] for r in rs])
    reasons = sorted({r["j"]["end_reason"] for r in rs})
    o.append("| %s | %.3f s | **%.2fx** (%.2f, %.2f) | %.2fx (%.2f, %.2f) | %.3f s | %.3f s | %.0f | %s |"
             % (names.get(m, "budget %s, k = 4" % m[1:]), w, *ratio, *est, us, sy,
                statistics.median(r["j"]["traced_ms"] for r in rs), ", ".join(reasons)))
o.append("")
o.append("Whole run traced, per event (medians over the groups; extra = traced - untraced of the "
         "group; kprofd CPU = its `status` cpu_ns over the run, kprofctl's polls included):")
o.append("")
o.append("| path events | probe hits | hits per event | extra wall per path event | per probe hit "
         "| extra sys per probe hit | kprofd CPU per path event | lost events |")
o.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
rs = [g["full"] for g in groups]
pe = statistics.median(r["j"]["path_events"] for r in rs)
ph = statistics.median(r["j"]["probe_hits"] for r in rs)
hit_sys = {id(g): (g["full"]["sys"] - g["none"]["sys"]) / g["full"]["j"]["probe_hits"] for g in groups}
o.append("| %d | %d | %.2f | %.2f us | %.2f us | %.2f us | %.2f us | %d |" % (
    pe, ph, ph / pe,
    statistics.median((g["full"]["wall"] - g["none"]["wall"]) / g["full"]["j"]["path_events"] * 1e6 for g in groups),
    statistics.median((g["full"]["wall"] - g["none"]["wall"]) / g["full"]["j"]["probe_hits"] * 1e6 for g in groups),
    statistics.median(hit_sys.values()) * 1e6,
    statistics.median(r["daemon_s"] / r["j"]["path_events"] * 1e6 for r in rs),
    sum(r["j"]["lost_events"] for r in rs)))
o.append("")
o.append("With a budget (medians; probe hits as counted by the trace, which stops counting when the "
         "budget is reached; hits implied = extra system time / the extra system time per hit of "
         "the whole-run trace of the same group, so the difference is what the probes cost while "
         "they were being removed):")
o.append("")
o.append("| budget | path events | traced_ms | extra wall vs untraced | extra sys | probe hits counted "
         "| probe hits implied by the extra sys |")
o.append("|---:|---:|---:|---:|---:|---:|---:|")
for m in modes[2:]:
    rs = [g[m] for g in groups]
    o.append("| %s | %d | %.0f | %.3f s | %.3f s | %d | %.0f |" % (
        m[1:], statistics.median(r["j"]["path_events"] for r in rs),
        statistics.median(r["j"]["traced_ms"] for r in rs),
        statistics.median(g[m]["wall"] - g["none"]["wall"] for g in groups),
        statistics.median(g[m]["sys"] - g["none"]["sys"] for g in groups),
        statistics.median(r["j"]["probe_hits"] for r in rs),
        statistics.median((g[m]["sys"] - g["none"]["sys"]) / hit_sys[id(g)] for g in groups)))
o.append("")
o.append("k-SF size vs k (one whole-run trace per k, same workload; one query = kprofd's CPU for "
         "one `kprofctl paths PID --show --top 0 --json` after the run):")
o.append("")
o.append("| k | wall | path_events | level_sums[0] | ksf_nodes | ipf_nodes | kprofd CPU per path event | one query | lost events |")
o.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in KS:
    r = ksweep[k]
    j = r["j"]
    o.append("| %d | %.3f s | %d | %d | %d | %d | %.2f us | %.1f ms | %d |"
             % (k, r["wall"], j["path_events"], j["level_sums"][0], j["ksf_nodes"], j["ipf_nodes"],
                r["daemon_s"] / j["path_events"] * 1e6, r["query_ms"], j["lost_events"]))
if busy > 100.0 / os.cpu_count() + 10:
    o.append("")
    o.append("**Warning: the CPUs were %.0f%% busy where the benchmark alone keeps one busy "
             "(%.0f%%): other processes ran, the times are disturbed.**" % (busy, 100.0 / os.cpu_count()))
sys.stdout.write("\n".join(o) + "\n")

with open(os.path.join(env["OUT_DIR"], "paths.csv"), "w") as fh:
    fh.write("group,mode,k,budget,wall_s,user_s,sys_s,daemon_cpu_s,query_ms,path_events,probe_hits,"
             "traced_ms,estimate,end_reason,ksf_nodes,ipf_nodes,lost_events\n")
    for i, m, r in raw:
        j = r["j"] or {}
        fh.write("%d,%s,%s,%d,%.6f,%.6f,%.6f,%.6f,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" % (
            i, m, r["k"] if r["k"] else "", r["budget"], r["wall"], r["user"], r["sys"],
            r["daemon_s"], r.get("query_ms", ""), j.get("path_events", ""), j.get("probe_hits", ""), j.get("traced_ms", ""),
            j.get("slowdown", ""), j.get("end_reason", ""), j.get("ksf_nodes", ""),
            j.get("ipf_nodes", ""), j.get("lost_events", "")))
log("wrote %s/paths.md and paths.csv" % env["OUT_DIR"])
PY
