# targets.py: the timing and process control of bench/targets.sh, which sets its environment
# (see the variables the shell script exports), starts kprofd and runs it; not meant to be run
# alone. See bench/targets.sh for what is measured and how.
import json, os, re, signal, statistics, subprocess, time

import kpbench as kb

E = os.environ
KPROFCTL, SOCK, KPROFD_PID, KPROFD_LOG = E["KPROFCTL"], E["SOCK"], int(E["KPROFD_PID"]), E["KPROFD_LOG"]
PERF, NODE, JAVA, JCLS, HOT_FIXED = E["PERF"], E["NODE"], E["JAVA"], E["JCLS"], E["HOT_FIXED"]
TDIR, OUT_DIR = E["TDIR"], E["OUT_DIR"]
PARTS = E["TG_PARTS"].split()
START_RUNS, ATTACH_ROUNDS = int(E["TG_START_RUNS"]), int(E["TG_ATTACH_ROUNDS"])
JVM_THREADS, JVM_SPIN = int(E["TG_JVM_THREADS"]), int(E["TG_JVM_SPIN"])
TRIPLES, FREQS = int(E["TG_TRIPLES"]), [int(f) for f in E["TG_FREQS"].split()]
NODE_ITERS, JVM_ROUNDS = int(E["TG_NODE_ITERS"]), int(E["TG_JVM_ROUNDS"])
QUIET_WAIT, QUIET_TOTAL = int(E["QUIET_WAIT"]), int(E["QUIET_TOTAL"])
CTL = [KPROFCTL, "--socket", SOCK]
PIDFILE = os.path.join(TDIR, "pid")
ctl = kb.Ctl(KPROFCTL, SOCK)
status, log, nfds, reap_tmp, fmt3 = ctl.status, kb.log, kb.nfds, kb.reap_tmp, kb.fmt3
Q = kb.Quiet({os.getpid(), os.getppid(), KPROFD_PID}, QUIET_WAIT, QUIET_TOTAL)
Window = Q.window


def timed(cmd, pidfile=False):
    return kb.timed(cmd, PIDFILE if pidfile else None)


def wrapped(cmd):
    return kb.wrapped(cmd, PIDFILE)


def record_cmd(cmd, freq=None):
    f = ["--freq", str(freq)] if freq else []
    return CTL + ["record", *f, "-o", "/dev/null", "--format", "folded", "--", *cmd]


def perf_cmd(cmd, freq=None, quiet_flag=False, nobpf=False):
    return [PERF, "record", *(["-q"] if quiet_flag else []), *(["--no-bpf-event"] if nobpf else []),
            *(["-F", str(freq), "-g"] if freq else []), "-o", "/dev/null", "--", *cmd]


csv = ["part,round,item,mode,freq,wall_s,cpu_s,extra"]
out = []
parts_time = {}

# ---- Part 1: record start-up --------------------------------------------------------------
START_CMDS = [("/bin/true", ["/bin/true"]), ("node -e 0", [NODE, "-e", "0"])]
START_MODES = ["alone", "kprof", "perf", "perf-nobpf"]


def start_run(mode, cmd):
    if mode == "alone":
        return timed(cmd)
    if mode == "kprof":
        return timed(record_cmd(cmd))
    return timed(perf_cmd(cmd, quiet_flag=True, nobpf=mode == "perf-nobpf"))


def part_start():
    res = {(c, m): [] for c, _ in START_CMDS for m in START_MODES}
    kcpu = {c: [] for c, _ in START_CMDS}
    for c, cmd in START_CMDS:  # warm-up, not counted
        for m in START_MODES:
            start_run(m, cmd)
    for r in range(START_RUNS):
        with Window("start"):
            cmds = START_CMDS if r % 2 == 0 else START_CMDS[::-1]
            for c, cmd in cmds:
                for i in range(len(START_MODES)):
                    m = START_MODES[(i + r) % len(START_MODES)]
                    if m == "kprof":
                        s0 = status()
                    wall, cpu, _ = start_run(m, cmd)
                    if m == "kprof":
                        s1 = status()
                        kcpu[c].append((s1["cpu_ns"] - s0["cpu_ns"]) / 1e6)
                    res[(c, m)].append(wall)
                    csv.append("start,%d,%s,%s,,%.6f,%.6f," % (r + 1, c, m, wall, cpu))
        log("start round %d/%d: %s" % (r + 1, START_RUNS, ", ".join(
            "%s %s %.1f ms" % (c, m, res[(c, m)][-1] * 1e3) for c, _ in START_CMDS for m in START_MODES)))
    o = ["Start-up of `record`: wall time from spawn to reap, ms, median (min, max) of %d rounds; "
         "overhead: the median of the per-round differences to the command alone:" % START_RUNS, "",
         "| command | alone | `kprofctl record -o /dev/null --format folded --` | overhead | "
         "`perf record -q -o /dev/null --` | overhead | the same with `--no-bpf-event` | overhead "
         "| kprofd CPU per record |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c, _ in START_CMDS:
        a = res[(c, "alone")]
        dk = [k - x for k, x in zip(res[(c, "kprof")], a)]
        dp = [p - x for p, x in zip(res[(c, "perf")], a)]
        dn = [p - x for p, x in zip(res[(c, "perf-nobpf")], a)]
        o.append("| `%s` | %s | %s | **%+.1f** | %s | %+.1f | %s | %+.1f | %.1f ms |" % (
            c, fmt3(a, 1e3), fmt3(res[(c, "kprof")], 1e3), statistics.median(dk) * 1e3,
            fmt3(res[(c, "perf")], 1e3), statistics.median(dp) * 1e3,
            fmt3(res[(c, "perf-nobpf")], 1e3), statistics.median(dn) * 1e3,
            statistics.median(kcpu[c])))
    return o


# ---- Part 2: attaching a JVM with many threads --------------------------------------------
ATTACH_MODES = ["kprof", "kprof-nomap", "perf"]


def start_idle_jvm():
    p = subprocess.Popen([JAVA, "-cp", JCLS, "Threads", "idle", str(JVM_THREADS), str(JVM_SPIN), "300"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        kb.read_until(p.stderr.fileno(), b"", b"ready", 60, "the JVM (pid %d)" % p.pid)
    except SystemExit:
        p.kill()
        raise
    return p


def stop_jvm(p):
    kb.stop(p)
    p.stderr.close()
    reap_tmp(p.pid)


def threads_of(pid):
    with open("/proc/%d/status" % pid) as fh:
        return int(re.search(r"^Threads:\s+(\d+)", fh.read(), re.M).group(1))


def log_size():
    return os.path.getsize(KPROFD_LOG)


def log_wait(off, pattern, timeout):
    """The first match of pattern in kprofd's log after offset off, waiting up to timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        with open(KPROFD_LOG, errors="replace") as fh:
            fh.seek(off)
            m = re.search(pattern, fh.read())
        if m or time.monotonic() > deadline:
            return m
        time.sleep(0.02)


def attach_kprof(pid, nomap):
    st0, fd0, off = status(), nfds(KPROFD_PID), log_size()
    args = ["attach", str(pid), "--freq", "99"] + (["--no-jvm-map"] if nomap else [])
    t0 = time.perf_counter()
    ctl(*args)
    wall = time.perf_counter() - t0
    fd1 = nfds(KPROFD_PID)
    st1 = status()
    m = log_wait(off, r"attached pid %d \(.*?\) at 99 Hz by (\d+) thread events \((\d+) threads, (\d+) unsampled\)" % pid, 5)
    # the next 2 s: a JVM asked for its perf map answers meanwhile
    fdmax, t_end = fd1, time.monotonic() + 2
    while time.monotonic() < t_end:
        fdmax = max(fdmax, nfds(KPROFD_PID))
        time.sleep(0.01)
    mp = log_wait(off, r"pid %d: the JVM wrote its perf map on request \(Compiler\.perfmap, (\d+) ms" % pid, 0 if nomap else 10)
    fd2 = nfds(KPROFD_PID)
    ctl("detach", str(pid))
    time.sleep(0.3)
    fd3 = nfds(KPROFD_PID)
    return dict(wall=wall, fd0=fd0, fd1=fd1, fdmax=fdmax, fd2=fd2, fd3=fd3,
                te=st1["thread_events"] - st0["thread_events"],
                logged=m.group(1) if m else "?", map_ms=int(mp.group(1)) if mp else None)


def attach_perf(pid):
    err = open(os.path.join(TDIR, "perf.err"), "w+")
    t0 = time.perf_counter()
    p = subprocess.Popen([PERF, "record", "-F", "99", "-g", "-p", str(pid), "-o", "/dev/null"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    n, t_last, said = 0, 0.0, None
    while True:
        now = time.perf_counter()
        c = nfds(p.pid)
        if c != n and c >= 0:
            n, t_last = c, now
        if said is None and os.fstat(err.fileno()).st_size > 0:
            said = now - t0
        if now - t0 > 20 or (n > 0 and now - t_last > 1.0):
            break
        time.sleep(0.005)
    kb.stop(p, signal.SIGINT, 20)
    err.seek(0)
    text = err.read().strip().replace("\n", " / ")
    err.close()
    return dict(wall=t_last - t0, fds=n, said=said, stderr=text)


def part_attach():
    kp = {m: [] for m in ATTACH_MODES}
    for r in range(ATTACH_ROUNDS):
        for i in range(3):
            m = ATTACH_MODES[(i + r) % 3]
            with Window("attach"):
                jvm = start_idle_jvm()
                try:
                    time.sleep(1)
                    nthr = threads_of(jvm.pid)
                    if m == "perf":
                        v = attach_perf(jvm.pid)
                        log("attach round %d %s: %d threads, %.0f ms until its fd count stopped "
                            "growing, %d fds; stderr: %s" % (r + 1, m, nthr, v["wall"] * 1e3,
                                                              v["fds"], v["stderr"] or "(nothing)"))
                    else:
                        v = attach_kprof(jvm.pid, m == "kprof-nomap")
                        log("attach round %d %s: %d threads, attach %.1f ms, logged %s thread "
                            "events, status +%d, kprofd fds %d -> %d (max %d, %d after 2 s) -> "
                            "%d after detach; JVM map %s ms"
                            % (r + 1, m, nthr, v["wall"] * 1e3, v["logged"], v["te"], v["fd0"],
                               v["fd1"], v["fdmax"], v["fd2"], v["fd3"], v["map_ms"]))
                finally:
                    stop_jvm(jvm)
            v["threads"] = nthr
            kp[m].append(v)
            csv.append("attach,%d,%d threads,%s,99,%.6f,,%s" % (
                r + 1, nthr, m, v["wall"], json.dumps({k: x for k, x in v.items() if k != "wall"})
                .replace(",", ";")))
    o = ["Attaching a JVM of %d threads (`java Threads idle %d %d`: %d of them busy half the time, "
         "the others asleep), 99 Hz, a fresh JVM each time; median (min, max) of %d rounds:"
         % (statistics.median(v["threads"] for v in kp["kprof"] + kp["perf"]), JVM_THREADS,
            JVM_SPIN, JVM_SPIN, ATTACH_ROUNDS), "",
         "| profiler | time to attach (ms) | fds it opened | thread events (log; status) | kprofd's fds before; after the detach |",
         "|---|---:|---:|---:|---:|"]
    for m in ("kprof", "kprof-nomap"):
        v = kp[m]
        label = ("`kprofctl attach PID --freq 99` (JVM asked for its perf map)" if m == "kprof"
                 else "`kprofctl attach PID --freq 99 --no-jvm-map`")
        o.append("| %s | %s | %s; at most %s | %s; %s | %s |" % (
            label, fmt3([x["wall"] for x in v], 1e3, 1, True), fmt3([x["fd1"] - x["fd0"] for x in v], 1, 0),
            fmt3([x["fdmax"] - x["fd0"] for x in v], 1, 0),
            "/".join(sorted({x["logged"] for x in v})), "/".join(sorted({str(x["te"]) for x in v})),
            "%s; %s" % ("/".join(sorted({str(x["fd0"]) for x in v})), "/".join(sorted({str(x["fd3"]) for x in v})))))
    v = kp["perf"]
    o.append("| `perf record -F 99 -g -p PID -o /dev/null` | %s (until its fd count stopped growing) | %s | - | - |"
             % (fmt3([x["wall"] for x in v], 1e3, 1, True), fmt3([x["fds"] for x in v], 1, 0)))
    maps = [x["map_ms"] for x in kp["kprof"] if x["map_ms"] is not None]
    o.append("")
    o.append("kprofd's fds before the first attach: %d. The JVM's perf map, asked for after the "
             "attach, came in %s ms (as kprofd logs it; %d of %d attaches). perf's stderr while "
             "starting: %s." % (kp["kprof"][0]["fd0"], fmt3(maps, 1, 0) if maps else "-",
                                len(maps), len(kp["kprof"]),
                                "/".join(sorted({x["stderr"] or "nothing" for x in v}))[:300]))
    return o


# ---- Part 3: slowdown ---------------------------------------------------------------------
WORKLOADS = kb.hot_workloads(NODE, HOT_FIXED, NODE_ITERS, JAVA, JCLS, JVM_ROUNDS)
SLOW_MODES = ["alone", "kprof", "perf", "perf-nobpf"]


def slow_run(mode, cmd, freq):
    c = wrapped(cmd)
    if mode == "alone":
        s0 = status()
        wall, cpu, _ = timed(c, True)
        s1 = status()
    elif mode == "kprof":
        s0 = status()
        wall, cpu, _ = timed(record_cmd(c, freq), True)
        s1 = status()
    else:
        s0 = s1 = None
        wall, cpu, _ = timed(perf_cmd(c, freq, nobpf=mode == "perf-nobpf"), True)
    r = dict(wall=wall, cpu=cpu)
    if s0:
        r.update(samples=s1["samples"] - s0["samples"], cpu_ns=s1["cpu_ns"] - s0["cpu_ns"],
                 drops=s1["drops"] - s0["drops"])
    return r


def part_slowdown():
    cells = [(w, f) for w in WORKLOADS if w[0] in E.get("TG_WORKLOADS", "node jvm").split() for f in FREQS]
    res = {(w[0], f): [] for w, f in cells}
    for w in [w for w in WORKLOADS if any(c[0] is w for c in cells)]:  # warm-up, not counted
        for m in SLOW_MODES:
            slow_run(m, w[2], FREQS[0])
    for r in range(TRIPLES):
        for ci in range(len(cells)):
            (name, _, cmd), f = cells[(ci + r) % len(cells)]
            with Window("slowdown"):
                t = {}
                for i in range(len(SLOW_MODES)):
                    m = SLOW_MODES[(i + r + ci) % len(SLOW_MODES)]
                    t[m] = slow_run(m, cmd, f)
                    csv.append("slowdown,%d,%s,%s,%d,%.6f,%.6f,%s" % (
                        r + 1, name, m, f, t[m]["wall"], t[m]["cpu"],
                        "samples=%d;cpu_ns=%d;drops=%d" % (t[m]["samples"], t[m]["cpu_ns"], t[m]["drops"])
                        if "samples" in t[m] else ""))
            res[(name, f)].append(t)
            log("slowdown %s %d Hz triple %d/%d: alone %.3f s, kprof %.3f s (x%.3f, %d samples, "
                "%.2f us/sample), perf %.3f s (x%.3f), perf --no-bpf-event %.3f s (x%.3f)"
                % (name, f, r + 1, TRIPLES, t["alone"]["wall"], t["kprof"]["wall"],
                   t["kprof"]["wall"] / t["alone"]["wall"], t["kprof"]["samples"],
                   t["kprof"]["cpu_ns"] / 1e3 / max(1, t["kprof"]["samples"]), t["perf"]["wall"],
                   t["perf"]["wall"] / t["alone"]["wall"], t["perf-nobpf"]["wall"],
                   t["perf-nobpf"]["wall"] / t["alone"]["wall"]))
    o = ["Slowdown: wall time from spawn to reap over the command alone in the same set of runs, "
         "median (min, max) of %d sets per row:" % TRIPLES, "",
         "| workload | Hz | alone (s) | `kprofctl record --freq F -o /dev/null --format folded --` | "
         "`perf record -F F -g -o /dev/null --` | the same with `--no-bpf-event` | kprof samples per run | drops |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, desc, _), f in cells:
        v = res[(name, f)]
        o.append("| %s | %d | %s | %s | %s | %s | %d | %d |" % (
            desc, f, fmt3([x["alone"]["wall"] for x in v], 1, 3),
            fmt3([x["kprof"]["wall"] / x["alone"]["wall"] for x in v], 1, 3, True),
            fmt3([x["perf"]["wall"] / x["alone"]["wall"] for x in v], 1, 3, True),
            fmt3([x["perf-nobpf"]["wall"] / x["alone"]["wall"] for x in v], 1, 3),
            statistics.median(x["kprof"]["samples"] for x in v),
            sum(x["kprof"]["drops"] for x in v)))
    o += ["", "kprofd's CPU (getrusage, `status --json` cpu_ns) around each run, median (min, max):", "",
          "| workload | Hz | per kprof run (ms) | per sample (us) | around the run alone (ms) | per sample above that (us) |",
          "|---|---:|---:|---:|---:|---:|"]
    for (name, desc, _), f in cells:
        v = res[(name, f)]
        o.append("| %s | %d | %s | %s | %s | %s |" % (
            name, f, fmt3([x["kprof"]["cpu_ns"] / 1e6 for x in v], 1, 1),
            fmt3([x["kprof"]["cpu_ns"] / 1e3 / max(1, x["kprof"]["samples"]) for x in v], 1, 2, True),
            fmt3([x["alone"]["cpu_ns"] / 1e6 for x in v], 1, 1),
            fmt3([(x["kprof"]["cpu_ns"] - x["alone"]["cpu_ns"]) / 1e3 / max(1, x["kprof"]["samples"])
                  for x in v], 1, 2)))
    o += ["", "CPU of the process tree (wait4 of what was spawned: the command, plus kprofctl or "
          "perf itself; kprofd's is not in it) over the command alone's, median (min, max):", "",
          "| workload | Hz | alone (CPU s, CPU / wall) | kprof | perf | perf --no-bpf-event |",
          "|---|---:|---:|---:|---:|---:|"]
    for (name, desc, _), f in cells:
        v = res[(name, f)]
        o.append("| %s | %d | %.2f, %.2f | %s | %s | %s |" % (
            name, f, statistics.median(x["alone"]["cpu"] for x in v),
            statistics.median(x["alone"]["cpu"] / x["alone"]["wall"] for x in v),
            fmt3([x["kprof"]["cpu"] / x["alone"]["cpu"] for x in v], 1, 3),
            fmt3([x["perf"]["cpu"] / x["alone"]["cpu"] for x in v], 1, 3),
            fmt3([x["perf-nobpf"]["cpu"] / x["alone"]["cpu"] for x in v], 1, 3)))
    return o


# ---- Run ----------------------------------------------------------------------------------
log("warm-up: dd attached for a moment (kernel symbols)")
kb.warm_kernel_symbols(ctl)
date0, load0 = kb.now_utc(), kb.loadavg()
t_all = time.monotonic()
for part, fn in (("start", part_start), ("attach", part_attach), ("slowdown", part_slowdown)):
    if part not in PARTS:
        continue
    log("part %s" % part)
    t0, s0 = time.monotonic(), kb.cpu_stat()
    body = fn()
    parts_time[part] = (time.monotonic() - t0, *kb.busy_pct(s0, kb.cpu_stat()))
    out += body + [""]
date1 = kb.now_utc("%H:%M UTC")
head = ["Command: `%s`" % E["BENCH_CMD"], "",
        "* Date: %s to %s; commit %s" % (date0, date1, E["BENCH_COMMIT"]),
        "* Machine: %s; load average before the run %s" % (E["BENCH_MACHINE"], " ".join(load0))]
for part in ("start", "attach", "slowdown"):
    if part in parts_time:
        el, b, st = parts_time[part]
        head.append("* Part %s: %.0f s, CPUs %.0f%% busy over the %d CPUs (/proc/stat), %.1f%% stolen; %s"
                    % (part, el, b, os.cpu_count(), st, Q.notes(part)))
head.append("")
text = "\n".join(head + out).rstrip() + "\n"
kb.write_out(OUT_DIR, {"targets.md": text, "targets.csv": "\n".join(csv) + "\n"}, "targets.md")
log("done in %.0f s" % (time.monotonic() - t_all))
