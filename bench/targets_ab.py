# targets_ab.py: the timing and process control of bench/targets_ab.sh, which sets its
# environment, starts the two kprofds and runs it; not meant to be run alone. See
# bench/targets_ab.sh for what is measured and how.
import os, signal, statistics, subprocess, sys, time

import kpbench as kb

E = os.environ
D = {"A": dict(label=E["LABEL_A"], ctl=[E["KPROFCTL_A"], "--socket", E["SOCK_A"]], pid=int(E["PID_A"])),
     "B": dict(label=E["LABEL_B"], ctl=[E["KPROFCTL_B"], "--socket", E["SOCK_B"]], pid=int(E["PID_B"]))}
PERF, NODE, JAVA, JCLS, HOT_FIXED = E["PERF"], E["NODE"], E["JAVA"], E["JCLS"], E["HOT_FIXED"]
OUT_DIR = E["OUT_DIR"]
SETS, FREQS = int(E["AB_SETS"]), [int(f) for f in E["AB_FREQS"].split()]
NODE_ITERS, JVM_ROUNDS = int(E["AB_NODE_ITERS"]), int(E["AB_JVM_ROUNDS"])
QUIET_WAIT, QUIET_TOTAL = int(E["QUIET_WAIT"]), int(E["QUIET_TOTAL"])
MODES = ["alone", "B", "A"] + (["perf"] if E["AB_PERF"] == "1" else [])

CTL = {d: kb.Ctl(E["KPROFCTL_" + d], E["SOCK_" + d], d) for d in D}
log = kb.log
Q = kb.Quiet({os.getpid(), os.getppid(), D["A"]["pid"], D["B"]["pid"]}, QUIET_WAIT, QUIET_TOTAL,
             kb.BUSY_BENCHES + "|targets", step=3)


def ctl(d, *args):
    return CTL[d](*args)


def status(d):
    return CTL[d].status()


def ended(d, timeout=5.0):
    """Wait until kprofd d has no attached target (it saw the exit); None on timeout."""
    return CTL[d].wait_detached(timeout)


def held_run(cmd, freq, d=None):
    """cmd held at its start (the shell stops itself before the exec), attached to kprofd d if
    given, continued and reaped. Returns wall (spawn to reap), run (SIGCONT to reap), attach
    (s), CPU of the tree (wait4), and for d kprofd's samples, cpu_ns, drops deltas."""
    s0 = {k: status(k) for k in D}
    t0 = time.perf_counter()
    p = subprocess.Popen(["/bin/sh", "-c", 'kill -STOP $$; exec "$@"', "sh", *cmd],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, st = os.waitpid(p.pid, os.WUNTRACED)
    if not os.WIFSTOPPED(st):
        sys.exit("bench: %s did not stop itself (status %#x)" % (" ".join(cmd), st))
    ta = time.perf_counter()
    if d:
        ctl(d, "attach", str(p.pid), "--freq", str(freq))
    t1 = time.perf_counter()
    os.kill(p.pid, signal.SIGCONT)
    err = p.stderr.read()
    _, st, ru = os.wait4(p.pid, 0)
    t2 = time.perf_counter()
    p.returncode = os.waitstatus_to_exitcode(st)
    p.stderr.close()
    kb.reap_tmp(p.pid)
    if p.returncode != 0:
        sys.exit("bench: %s exited with status %d: %s"
                 % (" ".join(cmd), p.returncode, err.decode(errors="replace").strip()[-500:]))
    r = dict(wall=t2 - t0, run=t2 - t1, attach=t1 - ta, cpu=ru.ru_utime + ru.ru_stime)
    s1 = {}
    for k in D:
        s1[k] = (ended(k) if k == d else None) or status(k)
        if k == d and s1[k]["targets_attached"] != 0:
            log("  kprofd %s had not ended pid %d 5 s after its exit" % (k, p.pid))
    for k in D:
        r["cpu_ns_" + k] = s1[k]["cpu_ns"] - s0[k]["cpu_ns"]
    if d:
        r.update(samples=s1[d]["samples"] - s0[d]["samples"], drops=s1[d]["drops"] - s0[d]["drops"])
    return r


def perf_run(cmd, freq):
    pidfile = os.path.join(E["TDIR"], "pid")
    wall, cpu, _ = kb.timed([PERF, "record", "-F", str(freq), "-g", "-o", "/dev/null", "--",
                             *kb.wrapped(cmd, pidfile)], pidfile, "perf record of " + " ".join(cmd))
    return dict(wall=wall, cpu=cpu)


def one(mode, cmd, freq):
    if mode == "alone":
        return held_run(cmd, freq)
    if mode == "perf":
        return perf_run(cmd, freq)
    return held_run(cmd, freq, mode)


def fmt3(v, scale=1.0, digits=3, bold=False):
    return kb.fmt3(v, scale, digits, bold)


WORKLOADS = kb.hot_workloads(NODE, HOT_FIXED, NODE_ITERS, JAVA, JCLS, JVM_ROUNDS)
WANT = E["AB_WORKLOADS"].split()
cells = [(w, f) for w in WORKLOADS if w[0] in WANT for f in FREQS]
res = {(w[0], f): [] for w, f in cells}
csv = ["set,workload,freq,mode,wall_s,run_s,attach_s,cpu_s,samples,drops,cpu_ns_A,cpu_ns_B"]

for d in D:
    log("warm-up: kprofd %s (%s) profiles dd for a moment" % (d, D[d]["label"]))
    kb.warm_kernel_symbols(CTL[d])
for w in [w for w in WORKLOADS if w[0] in WANT]:  # warm-up, not counted
    for m in MODES:
        one(m, w[2], FREQS[0])
date0, load0 = kb.now_utc(), " ".join(kb.loadavg())
t_all, c0 = time.monotonic(), kb.cpu_stat()
for r in range(SETS):
    for ci in range(len(cells)):
        (name, _, cmd), f = cells[(ci + r) % len(cells)]
        t, order = {}, []
        with Q.window():
            for i in range(len(MODES)):
                m = MODES[(i + r + ci) % len(MODES)]
                order.append(m)
                t[m] = one(m, cmd, f)
                x = t[m]
                csv.append("%d,%s,%d,%s,%.6f,%s,%s,%.6f,%s,%s,%s,%s" % (
                    r + 1, name, f, m, x["wall"], "%.6f" % x["run"] if "run" in x else "",
                    "%.6f" % x["attach"] if "attach" in x else "", x["cpu"], x.get("samples", ""),
                    x.get("drops", ""), x.get("cpu_ns_A", ""), x.get("cpu_ns_B", "")))
        res[(name, f)].append(t)
        msg = "set %d/%d %s %d Hz (%s): alone %.3f s" % (r + 1, SETS, name, f, " ".join(order), t["alone"]["run"])
        for d in ("B", "A"):
            msg += ", %s x%.3f (%d samples, %.2f us/sample)" % (
                d, t[d]["run"] / t["alone"]["run"], t[d]["samples"], t[d]["cpu_ns_" + d] / 1e3 / max(1, t[d]["samples"]))
        if "perf" in t:
            msg += ", perf x%.3f" % (t["perf"]["wall"] / t["alone"]["wall"])
        log(msg)
busy_pct, steal_pct = kb.busy_pct(c0, kb.cpu_stat())
date1 = kb.now_utc("%H:%M UTC")

LA, LB = D["A"]["label"], D["B"]["label"]
o = ["Command: `%s`" % E["BENCH_CMD"], "",
     "* Date: %s to %s; A = %s, B = %s" % (date0, date1, LA, LB),
     "* Machine: %s; load average before %s; CPUs %.0f%% busy over the sets (/proc/stat), %.1f%% stolen"
     % (E["BENCH_MACHINE"], load0, busy_pct, steal_pct)]
s = "* " + Q.notes(unit="sets", of_them="", busy_what="of another session", always_waited=True)
o += [s, ""]

o += ["Wall time from SIGCONT to reap over the command alone's in the same set (perf: spawn to reap "
      "over alone's spawn to reap), median (min, max) of %d sets; after/before: the median of the "
      "per-set ratios of A's run time to B's:" % SETS, "",
      "| workload | Hz | alone (s) | kprofd B: %s | kprofd A: %s | A / B, per set | %ssamples B; A | drops B; A |"
      % (LB, LA, "`perf record -F F -g -o /dev/null --` | " if "perf" in MODES else ""),
      "|---|---:|---:|---:|---:|---:|%s---:|---:|" % ("---:|" if "perf" in MODES else "")]
for (name, desc, _), f in cells:
    v = res[(name, f)]
    o.append("| %s | %d | %s | %s | %s | %s | %s%d; %d | %d; %d |" % (
        name, f, fmt3([x["alone"]["run"] for x in v]),
        fmt3([x["B"]["run"] / x["alone"]["run"] for x in v], bold=True),
        fmt3([x["A"]["run"] / x["alone"]["run"] for x in v], bold=True),
        fmt3([x["A"]["run"] / x["B"]["run"] for x in v]),
        (fmt3([x["perf"]["wall"] / x["alone"]["wall"] for x in v]) + " | ") if "perf" in MODES else "",
        statistics.median(x["B"]["samples"] for x in v), statistics.median(x["A"]["samples"] for x in v),
        sum(x["B"]["drops"] for x in v), sum(x["A"]["drops"] for x in v)))
o += ["", "The same from spawn to reap (the attach request included; its time in ms, median):", "",
      "| workload | Hz | alone (s) | B | A | attach B; A (ms) |", "|---|---:|---:|---:|---:|---:|"]
for (name, desc, _), f in cells:
    v = res[(name, f)]
    o.append("| %s | %d | %s | %s | %s | %.1f; %.1f |" % (
        name, f, fmt3([x["alone"]["wall"] for x in v]),
        fmt3([x["B"]["wall"] / x["alone"]["wall"] for x in v]),
        fmt3([x["A"]["wall"] / x["alone"]["wall"] for x in v]),
        statistics.median(x["B"]["attach"] for x in v) * 1e3, statistics.median(x["A"]["attach"] for x in v) * 1e3))
o += ["", "CPU time of the process tree (wait4: the command; perf's own included for perf) over the "
      "command alone's, median (min, max):", "",
      "| workload | Hz | alone (CPU s, CPU / run wall) | B | A | A / B, per set |%s" % (" perf |" if "perf" in MODES else ""),
      "|---|---:|---:|---:|---:|---:|%s" % ("---:|" if "perf" in MODES else "")]
for (name, desc, _), f in cells:
    v = res[(name, f)]
    o.append("| %s | %d | %.2f, %.2f | %s | %s | %s |%s" % (
        name, f, statistics.median(x["alone"]["cpu"] for x in v),
        statistics.median(x["alone"]["cpu"] / x["alone"]["run"] for x in v),
        fmt3([x["B"]["cpu"] / x["alone"]["cpu"] for x in v]), fmt3([x["A"]["cpu"] / x["alone"]["cpu"] for x in v]),
        fmt3([x["A"]["cpu"] / x["B"]["cpu"] for x in v]),
        (" %s |" % fmt3([x["perf"]["cpu"] / x["alone"]["cpu"] for x in v])) if "perf" in MODES else ""))
o += ["", "kprofd's CPU (`status --json` cpu_ns) around each of its runs, until it had ended the target; "
      "idle: the same kprofd around the run alone; median (min, max):", "",
      "| workload | Hz | kprofd | per run (ms) | per sample (us) | idle, around the run alone (ms) | per sample above idle (us) |",
      "|---|---:|---|---:|---:|---:|---:|"]
for (name, desc, _), f in cells:
    v = res[(name, f)]
    for d in ("B", "A"):
        o.append("| %s | %d | %s | %s | %s | %s | %s |" % (
            name, f, D[d]["label"], fmt3([x[d]["cpu_ns_" + d] / 1e6 for x in v], digits=1),
            fmt3([x[d]["cpu_ns_" + d] / 1e3 / max(1, x[d]["samples"]) for x in v], digits=2, bold=True),
            fmt3([x["alone"]["cpu_ns_" + d] / 1e6 for x in v], digits=1),
            fmt3([(x[d]["cpu_ns_" + d] - x["alone"]["cpu_ns_" + d]) / 1e3 / max(1, x[d]["samples"]) for x in v],
                 digits=2)))
text = "\n".join(o).rstrip() + "\n"
kb.write_out(OUT_DIR, {"targets_ab.md": text, "targets_ab.csv": "\n".join(csv) + "\n"}, "targets_ab.md")
log("done in %.0f s" % (time.monotonic() - t_all))
