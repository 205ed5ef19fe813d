# ingest.py: the timing and process control of bench/ingest.sh, which sets its environment
# (see the variables the shell script exports) and runs it; not meant to be run alone.
import os, re, signal, subprocess, sys, time

import kpbench as kb

E = os.environ
KPROFCTL, MINIJIT, SOCK, NODE, PERF = E["KPROFCTL"], E["MINIJIT"], E["SOCK"], E["NODE"], E["PERF"]
TDIR, OUT_DIR, KPID = E["TDIR"], E["OUT_DIR"], int(E["DAEMON_PID"])
SECONDS, WARMUP, FREQ = int(E["INGEST_SECONDS"]), int(E["INGEST_WARMUP"]), int(E["INGEST_FREQ"])
NPROCS, LOAD = int(E["INGEST_PROCS"]), E["INGEST_LOAD"]
FACTORS = [float(q) for q in E["INGEST_QUOTA_FACTORS"].split()]
NCPU = os.cpu_count()
HZ = os.sysconf("SC_CLK_TCK")
MANYSTACKS = os.path.abspath("tests/fixtures/manystacks.js")
STARVE_S = 5
HAVE_BPFTRACE = subprocess.run(["sh", "-c", "command -v bpftrace"], capture_output=True).returncode == 0
if E.get("INGEST_ONLY_KPROFD") == "1":  # A/B runs of kprofd builds: no perf, no peers
    PERF, HAVE_BPFTRACE = "", False
MAX_RATE0 = open("/proc/sys/kernel/perf_event_max_sample_rate").read().strip()
LIVE = []

kb.set_prefix("ingest")
ctl = kb.Ctl(KPROFCTL, SOCK)
log, status, vm_kib = kb.log, ctl.status, kb.vm_kib


def cpu_stat():
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    busy, _, total = kb.cpu_stat()
    return busy, total


def proc_cpu_s(pid):
    """utime + stime of a whole process (all threads), seconds."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / HZ
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def start_load():
    kinds = []
    for i in range(NPROCS):
        if LOAD == "minijit" or (LOAD == "mixed" and i % 2 == 0):
            kinds.append("minijit")
        else:
            kinds.append("node")
    procs = []
    for k in kinds:
        if k == "minijit":
            argv = [MINIJIT, "--seconds", "0"]
        else:
            argv = [NODE, "--perf-basic-prof", "--interpreted-frames-native-stack", MANYSTACKS, "100000"]
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        LIVE.append(p)
        kb.read_until(p.stderr.fileno(), b"", b"ready", 30, "%s (pid %d)" % (k, p.pid))
        procs.append((k, p))
    for k, p in procs:
        ctl("attach", str(p.pid), "--freq", str(FREQ))
    return procs


def snapshot(procs, st):
    return dict(st=st, tcpu=sum(proc_cpu_s(p.pid) for k, p in procs), busy=cpu_stat(),
                t=time.monotonic())


def figures(a, b):
    """Rates between two snapshots."""
    dt = b["t"] - a["t"]
    m = dict(dt=dt, samples=b["st"]["samples"] - a["st"]["samples"],
             drops=b["st"]["drops"] - a["st"]["drops"],
             kcpu=(b["st"]["cpu_ns"] - a["st"]["cpu_ns"]) / 1e9, tcpu=b["tcpu"] - a["tcpu"],
             busy=100.0 * (b["busy"][0] - a["busy"][0]) / max(b["busy"][1] - a["busy"][1], 1))
    m["rate"] = m["samples"] / dt
    m["drop_rate"] = m["drops"] / dt
    m["expected"] = m["tcpu"] * FREQ / dt
    m["kshare"] = 100.0 * m["kcpu"] / dt
    m["us_per_sample"] = m["kcpu"] * 1e6 / m["samples"] if m["samples"] else float("nan")
    m["per_core"] = m["samples"] / m["kcpu"] if m["kcpu"] > 0 else float("nan")
    return m


def measure(procs, seconds, with_perf_stat=False):
    """Counters over `seconds`: samples, drops, kprofd CPU, targets' CPU, CPUs busy."""
    stat_p = None
    if with_perf_stat and PERF:
        stat_p = subprocess.Popen([PERF, "stat", "-x", ",", "-e",
                                   "task-clock,context-switches,cpu-migrations,page-faults",
                                   "-p", str(KPID), "--", "sleep", str(seconds)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        LIVE.append(stat_p)
    a = snapshot(procs, status())
    time.sleep(seconds)
    m = figures(a, snapshot(procs, status()))
    if stat_p:
        _, err = stat_p.communicate()
        LIVE.remove(stat_p)
        ev = {}
        for line in err.splitlines():
            f = line.split(",")
            if len(f) > 2 and f[0].replace(".", "", 1).isdigit():
                ev[f[2]] = float(f[0])
        m["perf_stat"] = ev
    return m


def measure_quota(procs, cg, pct, seconds):
    """The quota is set right after an (unthrottled) status; the closing status waits behind the
    ring-buffer drains, so the phase ends when it is answered. If it is not answered within
    STARVE_S, the quota is lifted and the phase is reported as starved."""
    a = snapshot(procs, status())
    cg.quota(pct)
    time.sleep(seconds)
    st = status(timeout=STARVE_S)
    b = snapshot(procs, st) if st else None
    cg.quota(None)
    if b is None:
        # What the targets offered over the phase: their CPU time x F (from /proc, no kprofd).
        b = snapshot(procs, {"samples": 0, "drops": 0, "cpu_ns": 0})
        offered = (b["tcpu"] - a["tcpu"]) * FREQ / (b["t"] - a["t"])
        status()  # kprofd catches up once the quota is lifted
        return dict(quota=pct, starved=b["t"] - a["t"] - seconds, offered=offered)
    m = figures(a, b)
    m["quota"], m["starved"] = pct, None
    m["answer_s"] = b["t"] - a["t"] - seconds
    return m


def timed(argv):
    """Run argv (output discarded); (CPU seconds, peak RSS KiB) from wait4."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    LIVE.append(p)
    _, st, ru = os.wait4(p.pid, 0)
    LIVE.remove(p)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def peer_cost(procs, tool, seconds):
    """perf record or bpftrace on the same processes for `seconds`: its CPU and samples. For perf
    also `perf report` of the result, flat and with call graphs: perf symbolizes and aggregates
    there, kprofd as it goes."""
    pids = [p.pid for k, p in procs]
    if tool == "perf":
        data = os.path.join(TDIR, "peer.perf.data")
        argv = [PERF, "record", "-F", str(FREQ), "-g", "-p", ",".join(map(str, pids)), "-o", data,
                "--", "sleep", str(seconds)]
        env = None
    else:
        data = None
        pred = " || ".join("pid == %d" % p for p in pids)
        argv = ["bpftrace", "-e", "profile:hz:%d /%s/ { @[ustack] = count(); } "
                "interval:s:%d { exit(); }" % (FREQ, pred, seconds)]
        env = dict(os.environ, BPFTRACE_CACHE_USER_SYMBOLS="1", BPFTRACE_MAP_KEYS_MAX="65536")
    out = os.path.join(TDIR, "peer.out")
    with open(out, "wb") as fh:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, env=env)
        LIVE.append(p)
        # The targets' CPU over the sampling window only (not the tool's start-up and exit).
        a = snapshot(procs, None)
        time.sleep(seconds)
        b = snapshot(procs, None)
        _, st, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(st)
        LIVE.remove(p)
    with open(out, errors="replace") as fh:
        text = fh.read()
    os.unlink(out)
    report = None
    if data:
        m = re.search(r"\((\d+) samples\)", text)
        samples = int(m.group(1)) if m else 0
        if samples:
            flat = timed([PERF, "report", "-i", data, "--stdio", "--no-children", "-g", "none"])
            graph = timed([PERF, "report", "-i", data, "--stdio", "--no-children"])
            report = dict(flat=flat, graph=graph)
        for f in (data, data + ".old"):
            if os.path.exists(f):
                os.unlink(f)
    else:
        samples = sum(int(c) for c in re.findall(r"\]: (\d+)", text))
    if not samples:
        return dict(tool=tool, error="status %d: %s" % (p.returncode, text.strip()[-300:]))
    cpu = ru.ru_utime + ru.ru_stime
    return dict(tool=tool, samples=samples, cpu=cpu, us=cpu * 1e6 / samples, rss=ru.ru_maxrss,
                rate=samples / seconds, expected=(b["tcpu"] - a["tcpu"]) * FREQ / (b["t"] - a["t"]),
                report=report)


def perf_profile(seconds):
    data = os.path.join(TDIR, "kprofd.perf.data")
    r = subprocess.run([PERF, "record", "-F", "4999", "-g", "-p", str(KPID), "-o", data, "--",
                        "sleep", str(seconds)], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    m = re.search(r"\((\d+) samples\)", r.stderr)
    if r.returncode != 0 or not m:
        return None, "perf record on kprofd failed (status %d): %s" % (r.returncode, r.stderr.strip()[-300:])

    def rep(*args):
        q = subprocess.run([PERF, "report", "-i", data, "--stdio", "-q", "--percent-limit", "0.5", *args],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        rows = []
        for line in q.stdout.splitlines():
            mm = re.match(r"\s*([\d.]+)%\s+(?:([\d.]+)%\s+)?(.*\S)", line)
            if mm:
                rows.append((float(mm.group(1)), mm.group(2), re.sub(r"\s+", " ", mm.group(3))))
        return rows

    prof = dict(samples=int(m.group(1)),
                self=rep("--no-children", "--sort", "dso,sym", "-g", "none")[:15],
                children=[r for r in rep("--children", "--sort", "sym", "-g", "none")
                          if r[1] is not None][:25],
                dso=rep("--no-children", "--sort", "dso", "-g", "none")[:8])
    os.unlink(data)
    return prof, None


class Cgroup:
    """kprofd in a cpu cgroup of its own with a quota (v1 cpu.cfs_quota_us or v2 cpu.max)."""

    def __init__(self):
        self.path = None
        name = E["CGROUP_NAME"]
        v1 = "/sys/fs/cgroup/cpu"
        v2 = "/sys/fs/cgroup"
        try:
            if os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")):
                self.kind, self.path = "v1", os.path.join(v1, name)
                with open("/proc/%d/cgroup" % KPID) as fh:
                    rel = next((l.split(":", 2)[2].strip() for l in fh
                                if "cpu" in l.split(":")[1].split(",")), "/")
                self.orig = v1 + rel
            elif "cpu" in open(os.path.join(v2, "cgroup.subtree_control")).read().split():
                self.kind, self.path = "v2", os.path.join(v2, name)
                with open("/proc/%d/cgroup" % KPID) as fh:
                    rel = next((l.split(":", 2)[2].strip() for l in fh if l.startswith("0::")), "/")
                self.orig = v2 + rel
            else:
                self.why = "no writable cpu cgroup controller (v1 cpu or v2 with cpu enabled)"
                return
            os.mkdir(self.path)
            self._write("cgroup.procs", str(KPID))
        except OSError as e:
            self.why = "cannot set up a cpu cgroup: %s" % e
            self.path = None

    def _write(self, f, v):
        with open(os.path.join(self.path, f), "w") as fh:
            fh.write(v)

    def quota(self, pct):
        """pct of one CPU; None lifts the limit. The kernel wants at least 1 ms per period: a
        100 ms period down to 1%, 1 s below."""
        period = 100000 if pct is None or pct >= 1 else 1000000
        q = -1 if pct is None else max(int(pct * period / 100), 1000)
        if self.kind == "v1":
            if q == -1:
                self._write("cpu.cfs_quota_us", "-1")
            else:  # the quota first: the period may not go below it
                self._write("cpu.cfs_quota_us", "-1")
                self._write("cpu.cfs_period_us", str(period))
                self._write("cpu.cfs_quota_us", str(q))
        else:
            self._write("cpu.max", "%s %d" % ("max" if q == -1 else str(q), period))

    def remove(self):
        if not self.path:
            return
        try:
            with open(os.path.join(self.orig, "cgroup.procs"), "w") as fh:
                fh.write(str(KPID))
            os.rmdir(self.path)
        except OSError as e:
            log("could not remove %s (%s); it goes when kprofd exits" % (self.path, e))
        self.path = None


def main():
    procs = start_load()
    log("%d processes (%s) attached at %d Hz; warm-up %d s"
        % (len(procs), ", ".join(k for k, p in procs), FREQ, WARMUP))
    time.sleep(WARMUP)
    rss0 = vm_kib(KPID, "VmRSS")
    log("phase 1: %d s unconstrained%s" % (SECONDS, " (with perf stat on kprofd)" if PERF else ""))
    free = measure(procs, SECONDS, with_perf_stat=True)
    prof, prof_err = (None, "no working perf binary")
    if PERF:
        log("phase 2: %d s under perf record -g on kprofd" % SECONDS)
        prof, prof_err = perf_profile(SECONDS)
    sat, cg_why = [], None
    if FACTORS:
        cg = Cgroup()
        if cg.path:
            try:
                done, todo = set(), list(FACTORS)
                while todo:
                    f = todo.pop(0)
                    q = max(round(free["kshare"] * f, 2), 0.1)  # the kernel's floor: 1 ms per s
                    if q in done:
                        continue
                    done.add(q)
                    log("phase 3: kprofd limited to %g%% of a CPU (%g x phase 1), %d s"
                        % (q, f, SECONDS))
                    m = measure_quota(procs, cg, q, SECONDS)
                    m["factor"] = f
                    sat.append(m)
                    time.sleep(1)
                    if m["starved"]:
                        # The load may have grown since phase 1 (the machine is shared): go up
                        # until a quota keeps up, at most to 4 x, then stop.
                        if not any(not x["starved"] for x in sat) and f < 4:
                            todo = [f * 2]
                            continue
                        break
            finally:
                cg.remove()
        else:
            cg_why = cg.why
    peers = []
    # The peers alone on the same processes: kprofd stops sampling them first.
    for k, p in procs:
        ctl("detach", str(p.pid))
    for tool in (["perf"] if PERF else []) + (["bpftrace"] if HAVE_BPFTRACE else []):
        log("phase 4: %s on the same processes at %d Hz, %d s" % (tool, FREQ, SECONDS))
        peers.append(peer_cost(procs, tool, SECONDS))
    rss1, hwm = vm_kib(KPID, "VmRSS"), vm_kib(KPID, "VmHWM")
    st = status()
    for k, p in procs:
        p.send_signal(signal.SIGTERM)
    for k, p in procs:
        p.wait()
        LIVE.remove(p)
        kb.unlink("/tmp/perf-%d.map" % p.pid)

    out = []
    out.append("Command: `%s` (part of `make bench-peers`)" % E["BENCH_CMD"])
    out.append("")
    out.append("* Date: %s; load average before the run %s; other kprofd/minijit/node/perf/bpftrace "
               "processes: %s" % (E["BENCH_DATE"], E["BENCH_LOADAVG"], E["BENCH_OTHERS"]))
    max_rate1 = open("/proc/sys/kernel/perf_event_max_sample_rate").read().strip()
    out.append("* kernel.perf_event_max_sample_rate: %s before, %s after" % (MAX_RATE0, max_rate1))
    out.append("* Load: %d processes (%s) attached at %d Hz on %d CPUs: at most %d samples/s if "
               "they had all the CPUs" % (len(procs), ", ".join(sorted(set(k for k, p in procs))),
                                           FREQ, NCPU, NCPU * FREQ))
    out.append("")
    out.append("| Phase | Samples/s absorbed | Expected (targets' CPU x F) | Drops/s | kprofd CPU "
               "| kprofd CPU per sample | Samples per kprofd CPU-second | CPUs busy |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [("unconstrained", free)] + [("quota %g%% of a CPU (%g x)" % (m["quota"], m["factor"]), m)
                                         for m in sat
                                         if not m["starved"]]
    for name, m in rows:
        out.append("| %s | **%.0f** | %.0f | %.0f | %.1f%% of a CPU | %.2f us | %.0f | %.0f%% |"
                   % (name, m["rate"], m["expected"], m["drop_rate"], m["kshare"],
                      m["us_per_sample"], m["per_core"], m["busy"]))
    for m in sat:
        if m["starved"]:
            out.append("| quota %g%% of a CPU (%g x) | did not keep up: `status` unanswered %.0f s "
                       "after the phase | %.0f offered | | | | | |"
                       % (m["quota"], m["factor"], m["starved"], m["offered"]))
    out.append("")
    slow = [m for m in sat if not m["starved"] and m["answer_s"] > 1]
    if slow or any(m["starved"] for m in sat):
        parts = ["%.1f s late at %g%%" % (m["answer_s"], m["quota"]) for m in slow]
        parts += ["unanswered after %.0f s at %g%%" % (m["starved"], m["quota"])
                  for m in sat if m["starved"]]
        out.append("Under a quota the closing `status` waits while kprofd works through the ring "
                   "buffer (the event loop serves clients between drains): "
                   + ", ".join(parts) + ".")
        out.append("")
    starved = [m for m in sat if m["starved"]]
    sat = [m for m in sat if not m["starved"]]
    saturated = [m for m in sat if m["drops"] > 0]
    kept_up = [m for m in sat if m["drops"] == 0]
    if starved and kept_up:
        lo = max(kept_up, key=lambda m: m["per_core"])
        hi = min(starved, key=lambda m: m["offered"] / (m["quota"] / 100.0))
        upper = hi["offered"] / (hi["quota"] / 100.0)
        out.append("Kept up at %g%% of a CPU (%.0f samples/s, no drops, %.2f us per sample), not at "
                   "%g%% (%.0f samples/s offered): one fully busy core absorbs %s."
                   % (lo["quota"], lo["rate"], lo["us_per_sample"], hi["quota"], hi["offered"],
                      "between about **%.0f and %.0f samples/s**" % (lo["per_core"], upper)
                      if upper >= lo["per_core"] else
                      "at least about **%.0f samples/s** (the load changed between the phases: "
                      "no upper bound)" % lo["per_core"]))
        saturated = []
    if saturated:
        best = max(m["per_core"] for m in saturated)
        out.append("Saturated (drops) under a quota: one fully busy core absorbs about **%.0f "
                   "samples/s** (samples absorbed per CPU-second kprofd got, best saturated phase)."
                   % best)
    elif starved and not sat:
        hi = min(starved, key=lambda m: m["offered"] / (m["quota"] / 100.0))
        out.append("Did not keep up at %g%% of a CPU with %.0f samples/s offered: one fully busy "
                   "core absorbs less than about %.0f samples/s of this load."
                   % (hi["quota"], hi["offered"], hi["offered"] / (hi["quota"] / 100.0)))
    elif sat and not starved:
        out.append("No quota phase saturated kprofd (no drops): a full core absorbs more than %.0f "
                   "samples/s (the best rate per CPU-second measured, with the large batches a "
                   "quota makes)." % max(m["per_core"] for m in sat))
    elif cg_why:
        out.append("Saturation phase skipped: %s. At %.2f us per sample, one busy core would "
                   "absorb about %.0f samples/s (extrapolated)." % (cg_why, free["us_per_sample"],
                                                                  free["per_core"]))
    if peers:
        out.append("")
        out.append("The peers on the same processes at %d Hz for %d s (kprofd detached), against "
                   "kprofd in the unconstrained phase; CPU from wait4() (with the start-up and the "
                   "end: perf's build-id pass, bpftrace's printing and symbolizing):" % (FREQ, SECONDS))
        out.append("")
        out.append("| Tool | Samples/s kept | Expected (targets' CPU x F) | CPU | CPU per sample "
                   "| Peak RSS |")
        out.append("|---|---:|---:|---:|---:|---:|")
        out.append("| kprofd | %.0f | %.0f | %.2f s | **%.2f us** | VmHWM %.1f MiB |"
                   % (free["rate"], free["expected"], free["kcpu"], free["us_per_sample"],
                      vm_kib(KPID, "VmHWM") / 1024))
        for r in peers:
            if "error" in r:
                out.append("| %s | failed: %s | | | | |" % (r["tool"], r["error"]))
                continue
            name = "perf record" if r["tool"] == "perf" else r["tool"]
            out.append("| %s | %.0f | %.0f | %.2f s | **%.2f us** | %.1f MiB |"
                       % (name, r["rate"], r["expected"], r["cpu"], r["us"], r["rss"] / 1024))
            if r.get("report"):
                for what, key in (("perf record + perf report -g none (flat)", "flat"),
                                  ("perf record + perf report (call graphs)", "graph")):
                    c, rss = r["report"][key]
                    r[key + "_us"] = (r["cpu"] + c) * 1e6 / r["samples"]
                    out.append("| %s | | | %.2f s | **%.2f us** | report: %.1f MiB |"
                               % (what, r["cpu"] + c, r[key + "_us"], rss / 1024))
        for r in peers:
            if r["tool"] == "perf" and "us" in r:
                k = free["us_per_sample"]
                out.append("")
                out.append("kprofd CPU per sample / perf record's = %.3f (goal <= 0.333: %s); "
                           "against perf record + a flat perf report: %.3f; + perf report with "
                           "call graphs: %.3f. perf record's own CPU is nearly all fixed (start-up, "
                           "build-id pass at exit), so its CPU per sample falls as the window grows."
                           % (k / r["us"], "met" if k <= r["us"] / 3 else "**not met**",
                              k / r["flat_us"] if r.get("flat_us") else float("nan"),
                              k / r["graph_us"] if r.get("graph_us") else float("nan")))
    ps = free.get("perf_stat")
    if ps:
        cs = ps.get("context-switches", 0)
        out.append("")
        out.append("perf stat on kprofd, unconstrained phase: task-clock %.0f ms, %.0f context switches "
                   "(%.0f/s, %.0f samples per switch), %.0f cpu-migrations, %.0f page faults."
                   % (ps.get("task-clock", 0), cs, cs / free["dt"],
                      free["samples"] / cs if cs else float("nan"), ps.get("cpu-migrations", 0),
                      ps.get("page-faults", 0)))
    out.append("")
    out.append("kprofd memory: VmRSS %.1f MiB after the warm-up, %.1f MiB at the end; VmHWM %.1f MiB. "
               "Total samples %d, drops %d." % (rss0 / 1024, rss1 / 1024, hwm / 1024, st["samples"], st["drops"]))
    out.append("")
    if prof:
        out.append("Where kprofd's time goes (`perf record -F 4999 -g -p KPROFD`, %d s, %d samples, "
                   "unconstrained, same load). By DSO:" % (SECONDS, prof["samples"]))
        out.append("")
        out.append("| Self | DSO |")
        out.append("|---:|---|")
        for pct, _, name in prof["dso"]:
            out.append("| %.1f%% | %s |" % (pct, name))
        out.append("")
        out.append("Top symbols by self time:")
        out.append("")
        out.append("| Self | DSO and symbol |")
        out.append("|---:|---|")
        for pct, _, name in prof["self"]:
            out.append("| %.1f%% | `%s` |" % (pct, name))
        out.append("")
        out.append("Inclusive (children) time, top functions (frame-pointer stacks):")
        out.append("")
        out.append("| Total | Self | Symbol |")
        out.append("|---:|---:|---|")
        for total, selfp, name in prof["children"]:
            out.append("| %.1f%% | %s%% | `%s` |" % (total, selfp, name))
    else:
        out.append("Where kprofd's time goes: not measured (%s)." % prof_err)
    text = "\n".join(out) + "\n"
    with open(os.path.join(OUT_DIR, "ingest.md"), "w") as fh:
        fh.write(text)
    sys.stdout.write(text)
    sys.stdout.flush()
    log("wrote %s" % os.path.join(OUT_DIR, "ingest.md"))


try:
    main()
finally:
    for p in LIVE:
        if p.poll() is None:
            p.kill()
            p.wait()
        kb.unlink("/tmp/perf-%d.map" % p.pid)
