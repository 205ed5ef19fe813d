# peers.py: the timing and process control of bench/peers.sh, which sets its environment
# (see the variables the shell script exports) and runs it; not meant to be run alone.
import json, os, re, select, signal, statistics, subprocess, sys, time

import kpbench as kb

E = os.environ
KPROFCTL, MINIJIT, SOCK, NODE = E["KPROFCTL"], E["MINIJIT"], E["SOCK"], E["NODE"]
TDIR, OUT_DIR, DAEMON_PID = E["TDIR"], E["OUT_DIR"], int(E["DAEMON_PID"])
PERF, BPFTRACE = E.get("PERF") or None, E["BPFTRACE"]
PAIRS, ROUNDS, NODE_ITERS = int(E["PEERS_PAIRS"]), int(E["PEERS_ROUNDS"]), int(E["PEERS_NODE_ITERS"])
FREQS = [int(f) for f in E["PEERS_FREQS"].split()]
WORKLOADS = E["PEERS_WORKLOADS"].split()
NAMING_SECONDS = int(E["PEERS_NAMING_SECONDS"])
WORKJS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers_work.js")
EXPECTED = {"minijit": "mj_hot", "node": "hotFunction"}
UNAVAILABLE = {}
if not PERF:
    UNAVAILABLE["perf"] = E.get("PERF_UNAVAILABLE") or "not found"
if E.get("BPFTRACE_UNAVAILABLE"):
    UNAVAILABLE["bpftrace"] = E["BPFTRACE_UNAVAILABLE"]
TOOLS = [t for t in E["PEERS_TOOLS"].split() if t not in UNAVAILABLE]
LIVE = []  # processes we started and have not reaped
BPF_STATS_FILE = "/proc/sys/kernel/bpf_stats_enabled"
BPF_STATS_OLD = None  # the setting to restore, if we changed it
BPF_STATS = E.get("PEERS_BPF_STATS", "1") == "1"


class Fail(Exception):
    pass


kb.set_prefix("peers")
ctl = kb.Ctl(KPROFCTL, SOCK)
log, status, vm_kib, tail, read_until, unlink = kb.log, ctl.status, kb.vm_kib, kb.tail, kb.read_until, kb.unlink


def bpf_run_ns(pid):
    """Sum of run_time_ns and run_cnt over the BPF programs process pid holds (fdinfo; counted
    only while kernel.bpf_stats_enabled is 1)."""
    ns = cnt = 0
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as fh:
                info = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        if "prog_id" in info and "run_time_ns" in info:
            ns += int(info["run_time_ns"])
            cnt += int(info["run_cnt"])
    return ns, cnt


def spawn(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    LIVE.append(p)
    return p


def reap(p, timeout, what, sig=None):
    """wait4() with a timeout; returns (exit code, rusage). sig is sent once the timeout expires
    (then SIGKILL after as long again)."""
    deadline = time.monotonic() + timeout
    sent = None
    while True:
        pid, st, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = os.waitstatus_to_exitcode(st)
            LIVE.remove(p)
            return p.returncode, ru
        if time.monotonic() > deadline:
            if sent is None and sig is not None:
                log("%s still running after %.0f s: sending signal %d" % (what, timeout, sig))
                p.send_signal(sig)
                sent, deadline = sig, time.monotonic() + timeout
            elif sent != signal.SIGKILL:
                log("%s still running: killing it" % what)
                p.kill()
                sent, deadline = signal.SIGKILL, time.monotonic() + timeout
            else:
                raise Fail("%s (pid %d) cannot be reaped" % (what, p.pid))
        time.sleep(0.005)


# ---- workloads ----

class Workload:
    """A workload process that waits for a go signal. kind: minijit or node; mode: "timed" (fixed
    work) or "endless" (until stopped, for the naming check), anon: JIT code in anonymous memory."""

    def __init__(self, kind, mode="timed", anon=False):
        self.kind = kind
        if kind == "minijit":
            argv = [MINIJIT]
            argv += ["--rounds", str(ROUNDS), "--wait-usr1"] if mode == "timed" else ["--seconds", "0"]
            if anon:
                argv.append("--anon")
            self.p = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
            ready = b"waiting for SIGUSR1" if mode == "timed" else b"ready"
        else:
            self.p = spawn([NODE, "--perf-basic-prof", WORKJS, str(NODE_ITERS)],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            ready = b"ready"
        self.pid = self.p.pid
        self.fd = self.p.stderr.fileno()
        self.buf = read_until(self.fd, b"", ready, 30, "%s (pid %d)" % (kind, self.pid))
        self.exited = False
        self.cpu = None

    def go(self):
        if self.kind == "minijit":
            os.kill(self.pid, signal.SIGUSR1)
        else:
            self.p.stdin.write(b"go\n")
            self.p.stdin.flush()

    def wait_done(self):
        """Until the work is done: minijit exits, node prints its done line. Sets self.cpu."""
        what = "%s (pid %d)" % (self.kind, self.pid)
        if self.kind == "minijit":
            rc, ru = reap(self.p, 600, what)
            self.exited = True
            if rc != 0:
                raise Fail("%s exited with status %d: %s" % (what, rc, tail(self.buf)))
            self.cpu = ru.ru_utime + ru.ru_stime
        else:
            self.buf = read_until(self.fd, self.buf, b"done", 600, what)
            m = re.search(rb"done (\d+)", self.buf)
            self.cpu = int(m.group(1)) / 1e6

    def finish(self):
        what = "%s (pid %d)" % (self.kind, self.pid)
        if not self.exited:
            if self.kind == "node":
                self.p.stdin.close()
            else:
                os.kill(self.pid, signal.SIGINT)
            rc, _ = reap(self.p, 30, what, signal.SIGTERM)
            self.exited = True
            if rc != 0:
                raise Fail("%s exited with status %d: %s" % (what, rc, tail(self.buf)))
        if self.p.stdin:
            try:
                self.p.stdin.close()
            except BrokenPipeError:
                pass
        self.p.stderr.close()
        unlink("/tmp/perf-%d.map" % self.pid)


# ---- profilers ----

def leaf_name(frame):
    return re.sub(r"\+\d+$", "", frame.strip())


class Kprof:
    name = "kprof"

    def start(self, w, freq):
        ctl("attach", str(w.pid), "--freq", str(freq))

    def stop(self, w):
        if w.exited:  # wait until kprofd has seen the exit: every sample is then counted
            deadline = time.monotonic() + 20
            while status()["targets_attached"] != 0:
                if time.monotonic() > deadline:
                    raise Fail("kprofd still has targets 20 s after pid %d exited" % w.pid)
                time.sleep(0.02)
        else:
            ctl("detach", str(w.pid))
        return {}

    def top(self, w, res):
        rep = json.loads(ctl("report", str(w.pid), "--json", "--top", "3"))
        e = rep["entries"]
        return (e[0]["function"], e[0]["self_pct"]) if e else ("(no samples)", 0.0)


class Perf:
    name = "perf"
    n = 0

    def start(self, w, freq):
        Perf.n += 1
        base = os.path.join(TDIR, "perf%d" % Perf.n)
        self.data, self.err = base + ".data", base + ".err"
        ctl_path, ack_path = base + ".ctl", base + ".ack"
        os.mkfifo(ctl_path)
        os.mkfifo(ack_path)
        # O_RDWR: opening a fifo so never blocks, and perf finds a reader on its ack fifo.
        self.ctl_fd = os.open(ctl_path, os.O_RDWR)
        self.ack_fd = os.open(ack_path, os.O_RDWR)
        with open(self.err, "wb") as errf:
            self.p = spawn([PERF, "record", "-F", str(freq), "-g", "-p", str(w.pid), "-o", self.data,
                            "-D", "-1", "--control", "fifo:%s,%s" % (ctl_path, ack_path)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf)
        os.write(self.ctl_fd, b"enable\n")
        if not select.select([self.ack_fd], [], [], 60)[0]:
            raise Fail("perf record did not acknowledge 'enable' in 60 s: %s" % self.err_text())
        ack = os.read(self.ack_fd, 64)
        if not ack.startswith(b"ack"):
            raise Fail("perf record answered %r to 'enable'" % ack)

    def err_text(self):
        with open(self.err, "rb") as fh:
            return tail(fh.read())

    def stop(self, w):
        if w.exited:  # perf record -p ends when its target does
            rc, ru = reap(self.p, 30, "perf record", signal.SIGINT)
        else:
            self.p.send_signal(signal.SIGINT)
            rc, ru = reap(self.p, 60, "perf record", signal.SIGTERM)
        os.close(self.ctl_fd)
        os.close(self.ack_fd)
        m = re.search(r"\((\d+) samples\)", self.err_text())
        if not m:
            raise Fail("perf record (status %d) wrote no sample count: %s" % (rc, self.err_text()))
        return dict(cpu_ns=(ru.ru_utime + ru.ru_stime) * 1e9, samples=int(m.group(1)),
                    maxrss_kib=ru.ru_maxrss)

    def top(self, w, res):
        r = subprocess.run([PERF, "report", "-i", self.data, "--stdio", "--no-children", "--sort",
                            "dso,sym", "-g", "none", "-q"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(.*?)\s+\[(.)\]\s+(.*\S)", line)
            if m:
                return ("%s (%s)" % (m.group(4), m.group(2)), float(m.group(1)))
        return ("(perf report: %s)" % (r.stderr.strip().splitlines() or ["no output"])[-1], 0.0)

    def cleanup(self):
        if not hasattr(self, "data"):
            return
        for f in (self.data, self.err, self.data + ".old"):
            unlink(f)
        for f in (".ctl", ".ack"):
            unlink(self.data[:-5] + f)


class Bpftrace:
    name = "bpftrace"
    n = 0

    def start(self, w, freq):
        Bpftrace.n += 1
        self.out = os.path.join(TDIR, "bt%d.out" % Bpftrace.n)
        prog = "profile:hz:%d /pid == $1/ { @[ustack] = count(); }" % freq
        env = dict(os.environ, __BPFTRACE_NOTIFY_PROBES_ATTACHED="1")
        if E["PEERS_BPFTRACE_CACHE"] == "1":
            env["BPFTRACE_CACHE_USER_SYMBOLS"] = "1"
        with open(self.out, "wb") as outf:
            self.p = spawn([BPFTRACE, "-e", prog, str(w.pid)], stdin=subprocess.DEVNULL,
                           stdout=outf, stderr=subprocess.PIPE, env=env)
        self.errbuf = read_until(self.p.stderr.fileno(), b"", b"__BPFTRACE_NOTIFY_PROBES_ATTACHED",
                                 120, "bpftrace")

    def stop(self, w):
        self.p.send_signal(signal.SIGINT)
        rc, ru = reap(self.p, 300, "bpftrace", signal.SIGTERM)
        self.errbuf += self.p.stderr.read()
        self.p.stderr.close()
        with open(self.out, errors="replace") as fh:
            text = fh.read()
        self.leaves, total = {}, 0
        for m in re.finditer(r"@\[(.*?)\]: (\d+)", text, re.S):
            frames = [f for f in m.group(1).strip().splitlines() if f.strip()]
            c = int(m.group(2))
            total += c
            leaf = leaf_name(frames[0]) if frames else "(empty stack)"
            self.leaves[leaf] = self.leaves.get(leaf, 0) + c
        if rc != 0 and total == 0:
            raise Fail("bpftrace exited with status %d: %s" % (rc, tail(self.errbuf)))
        return dict(cpu_ns=(ru.ru_utime + ru.ru_stime) * 1e9, samples=total,
                    maxrss_kib=ru.ru_maxrss)

    def top(self, w, res):
        if not self.leaves:
            return ("(no samples)", 0.0)
        leaf, c = max(self.leaves.items(), key=lambda kv: kv[1])
        return (leaf, 100.0 * c / max(sum(self.leaves.values()), 1))

    def cleanup(self):
        if hasattr(self, "out"):
            unlink(self.out)


PROFILERS = {"kprof": Kprof, "perf": Perf, "bpftrace": Bpftrace}


def run(kind, tool=None, freq=None, name=True):
    """One timed run; tool None is the unprofiled run. Returns a dict of figures."""
    w = Workload(kind)
    prof = PROFILERS[tool]() if tool else None
    try:
        s0, rss0 = status(), vm_kib(DAEMON_PID, "VmRSS")
        b0 = bpf_run_ns(DAEMON_PID)
        if prof:
            prof.start(w, freq)
        t0 = time.perf_counter()
        w.go()
        w.wait_done()
        t1 = time.perf_counter()
        res = prof.stop(w) if prof else {}
        s1, rss1 = status(), vm_kib(DAEMON_PID, "VmRSS")
        b1 = bpf_run_ns(DAEMON_PID)
        r = dict(kind=kind, tool=tool or "none", freq=freq or 0, pid=w.pid, wall=t1 - t0, cpu=w.cpu,
                 kprofd_bpf_ns=b1[0] - b0[0], kprofd_bpf_runs=b1[1] - b0[1],
                 kprofd_cpu_ns=s1["cpu_ns"] - s0["cpu_ns"], kprofd_samples=s1["samples"] - s0["samples"],
                 kprofd_drops=s1["drops"] - s0["drops"], kprofd_rss_growth_kib=rss1 - rss0,
                 kprofd_hwm_kib=vm_kib(DAEMON_PID, "VmHWM"),
                 top="", top_pct=0.0, named=None)
        if tool == "kprof":
            res = dict(cpu_ns=r["kprofd_cpu_ns"], samples=r["kprofd_samples"], maxrss_kib=None)
        r.update({k: res.get(k) for k in ("cpu_ns", "samples", "maxrss_kib")})
        if prof and name:
            r["top"], r["top_pct"] = prof.top(w, res)
            r["named"] = EXPECTED[kind] in r["top"]
        w.finish()
        return r
    finally:
        if prof and hasattr(prof, "cleanup"):
            prof.cleanup()
        unlink("/tmp/perf-%d.map" % w.pid)


def naming_check(tool, anon):
    """Profile a minijit that keeps running; stop the tool while it is alive; the top symbol."""
    w = Workload("minijit", mode="endless", anon=anon)
    prof = PROFILERS[tool]()
    try:
        prof.start(w, max(FREQS))
        time.sleep(NAMING_SECONDS)
        res = prof.stop(w)
        top, pct = prof.top(w, res)
        w.finish()
        return top, pct
    finally:
        if hasattr(prof, "cleanup"):
            prof.cleanup()
        unlink("/tmp/perf-%d.map" % w.pid)


def main():
    configs = [(t, f) for f in FREQS for t in TOOLS]
    hwm0, rss_start = vm_kib(DAEMON_PID, "VmHWM"), vm_kib(DAEMON_PID, "VmRSS")
    raw, pairs = [], {}
    t_start, stat0 = time.monotonic(), kb.cpu_stat()
    for kind in WORKLOADS:
        # kprofd loads kernel symbols on the first kernel frame it sees; the first runs of each
        # binary pay for the page cache.
        log("%s: warm-up (not counted): unprofiled, then each tool at %d Hz" % (kind, max(FREQS)))
        run(kind)
        for t in TOOLS:
            run(kind, t, max(FREQS), name=False)
        for i in range(1, PAIRS + 1):
            k = (i - 1) % len(configs)
            for tool, freq in configs[k:] + configs[:k]:
                if i % 2:
                    p = run(kind, tool, freq)
                    u = run(kind)
                else:
                    u = run(kind)
                    p = run(kind, tool, freq)
                order = "profiled first" if i % 2 else "unprofiled first"
                raw.append((i, order, u, p))
                pairs.setdefault((kind, tool, freq), []).append((u, p))
                log("%s %s %d Hz pair %d/%d: unprofiled %.3f s, profiled %.3f s (ratio %.3f, cpu %.3f), "
                    "%s samples, profiler cpu %.1f ms, top %s"
                    % (kind, tool, freq, i, PAIRS, u["wall"], p["wall"], p["wall"] / u["wall"],
                       p["cpu"] / u["cpu"], p["samples"], (p["cpu_ns"] or 0) / 1e6, p["top"]))
    elapsed, stat1 = time.monotonic() - t_start, kb.cpu_stat()
    naming = []
    if NAMING_SECONDS > 0 and "minijit" in WORKLOADS:
        for anon in (False, True):
            for t in TOOLS:
                log("naming check: %s on a running minijit%s, %d Hz, %d s"
                    % (t, " --anon" if anon else "", max(FREQS), NAMING_SECONDS))
                naming.append((t, anon) + naming_check(t, anon))
    report(configs, pairs, raw, naming, elapsed, stat0, stat1, hwm0, rss_start)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def report(configs, pairs, raw, naming, elapsed, stat0, stat1, hwm0, rss_start):
    busy, steal = kb.busy_pct(stat0, stat1)
    hwm1, rss_end = vm_kib(DAEMON_PID, "VmHWM"), vm_kib(DAEMON_PID, "VmRSS")
    out = kb.head_lines(E, " (part of `make bench-peers`)")
    out.append("* Other kprofd/minijit/node/perf/bpftrace processes when the run started: %s"
               % E["BENCH_OTHERS"])
    out.append("* CPUs during the measured pairs (/proc/stat): %.0f%% busy over the %s CPUs, "
               "%.1f%% stolen; the measured pairs took %.0f s" % (busy, E["BENCH_NPROC"], steal, elapsed))
    out.append("* Tools: kprofd of this tree; %s; bpftrace %s; node %s"
               % (E["PERF_VERSION"] + " (" + PERF + ")" if PERF else "perf: none",
                  E["BPFTRACE_VERSION"], E["NODE_VERSION"]))
    for t, why in UNAVAILABLE.items():
        out.append("* **%s could not run here and was skipped**: %s" % (t, why))
    out.append("* Workloads: `minijit --rounds %d --wait-usr1`; `node --perf-basic-prof work.js %d` "
               "(hot.js functions, fixed work); %d pairs per configuration, order alternated, "
               "configurations in rotated round robin" % (ROUNDS, NODE_ITERS, PAIRS))
    out.append("")
    for kind in WORKLOADS:
        base = [u for (k, t, f), ps in pairs.items() if k == kind for u, _ in ps]
        out.append("**%s** (unprofiled: median %.3f s wall, %.3f s CPU over %d runs; hottest "
                   "function %s)" % (kind, med(u["wall"] for u in base), med(u["cpu"] for u in base),
                                     len(base), EXPECTED[kind]))
        out.append("")
        out.append("| Tool | Freq | Wall ratio | CPU ratio | Samples/run | Tool CPU/run "
                   "| Tool CPU/sample | Tool memory | Hottest named |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for tool, freq in configs:
            ps = pairs.get((kind, tool, freq), [])
            if not ps:
                continue
            wr = [p["wall"] / u["wall"] for u, p in ps]
            cr = [p["cpu"] / u["cpu"] for u, p in ps]
            cps = [p["cpu_ns"] / 1e3 / p["samples"] for u, p in ps if p["samples"]]
            named = sum(1 for u, p in ps if p["named"])
            tops = [p["top"] for u, p in ps]
            top = max(set(tops), key=tops.count)
            top_pct = med(p["top_pct"] for u, p in ps if p["top"] == top)
            if tool == "kprof":
                mem = "VmHWM %.1f MiB, RSS +%.1f MiB/run" % (
                    max(p["kprofd_hwm_kib"] for u, p in ps) / 1024,
                    med(p["kprofd_rss_growth_kib"] for u, p in ps) / 1024)
            else:
                mem = "%.1f MiB peak" % (max(p["maxrss_kib"] for u, p in ps) / 1024)
            out.append("| %s | %d Hz | **%.3f** (%.3f, %.3f) | %.3f (%.3f, %.3f) | %d | %.1f ms "
                       "| %.1f us | %s | %d/%d: `%s` %.0f%% |"
                       % (tool, freq, med(wr), min(wr), max(wr), med(cr), min(cr), max(cr),
                          med(p["samples"] for u, p in ps), med(p["cpu_ns"] for u, p in ps) / 1e6,
                          med(cps), mem, named, len(ps), top[:70], top_pct))
        out.append("")
    out.append("kprofd (one daemon for all runs): VmRSS %.1f MiB at the start, %.1f MiB at the end "
               "(profiles of ended targets are kept in memory); VmHWM %.1f MiB at the start, "
               "%.1f MiB at the end. Its CPU over the unprofiled runs (idle cost): median %.2f ms."
               % (rss_start / 1024, rss_end / 1024, hwm0 / 1024, hwm1 / 1024,
                  med(u["kprofd_cpu_ns"] for i, o, u, p in raw) / 1e6))
    drops = sum(p["kprofd_drops"] for i, o, u, p in raw if p["tool"] == "kprof")
    out.append("kprofd ring-buffer drops over the kprof runs: %d." % drops)
    if BPF_STATS and "kprof" in TOOLS:
        out.append("")
        out.append("kprof's own work inside the target (its BPF sampler, which runs in the "
                   "interrupted thread's context; `kernel.bpf_stats_enabled` was 1 during the "
                   "runs): the programs' run time over the run / the samples kept, median (min, "
                   "max); it includes the runs on other tasks that the pid filter rejects, and "
                   "the share of the target's CPU time it is:")
        out.append("")
        out.append("| Workload | Freq | BPF time per sample | Program runs per sample | Share of the "
                   "target's CPU |")
        out.append("|---|---:|---:|---:|---:|")
        for kind in WORKLOADS:
            for freq in FREQS:
                ps = [p for u, p in pairs.get((kind, "kprof", freq), []) if p["samples"]]
                if not ps:
                    continue
                per = [p["kprofd_bpf_ns"] / 1e3 / p["samples"] for p in ps]
                runs = [p["kprofd_bpf_runs"] / p["samples"] for p in ps]
                share = [100.0 * p["kprofd_bpf_ns"] / 1e9 / p["cpu"] for p in ps]
                out.append("| %s | %d Hz | %.2f us (%.2f, %.2f) | %.2f | %.2f%% |"
                           % (kind, freq, med(per), min(per), max(per), med(runs), med(share)))
    out.append("")
    if "kprof" in TOOLS and "perf" in TOOLS:
        out.append("Goals (medians): kprof's slowdown no larger than perf record's at the same "
                   "frequency; kprofd's CPU per sample at most a third of perf record's. A slowdown "
                   "verdict is \"within noise\" when the medians differ by less than the spread of "
                   "the pairs (half the min-max range, the larger of the two tools'):")
        out.append("")
        out.append("| Workload | Freq | Wall ratio kprof / perf | CPU ratio kprof / perf | Slowdown goal "
                   "| CPU/sample kprof / perf | Ratio | CPU goal (<= 0.333) |")
        out.append("|---|---:|---:|---:|---|---:|---:|---|")
        for kind in WORKLOADS:
            for f in FREQS:
                k, p = pairs.get((kind, "kprof", f)), pairs.get((kind, "perf", f))
                if not k or not p:
                    continue
                kr = [b["wall"] / a["wall"] for a, b in k]
                pr = [b["wall"] / a["wall"] for a, b in p]
                kw, pw = med(kr), med(pr)
                kcr = med(b["cpu"] / a["cpu"] for a, b in k)
                pcr = med(b["cpu"] / a["cpu"] for a, b in p)
                noise = max(max(kr) - min(kr), max(pr) - min(pr)) / 2
                if kw <= pw:
                    verdict = "met" if pw - kw > noise else "met (within noise)"
                else:
                    verdict = "**not met**" if kw - pw > noise else "not met (within noise)"
                kc = med(b["cpu_ns"] / 1e3 / b["samples"] for a, b in k if b["samples"])
                pc = med(b["cpu_ns"] / 1e3 / b["samples"] for a, b in p if b["samples"])
                out.append("| %s | %d Hz | %.3f / %.3f | %.3f / %.3f | %s | %.1f / %.1f us | %.3f | %s |"
                           % (kind, f, kw, pw, kcr, pcr, verdict, kc, pc, kc / pc,
                              "met" if kc <= pc / 3 else "**not met**"))
        out.append("")
    if naming:
        out.append("Naming check: each tool on a running `minijit --seconds 0` at %d Hz for %d s, "
                   "stopped while minijit is alive; top self symbol:" % (max(FREQS), NAMING_SECONDS))
        out.append("")
        out.append("| Tool | JIT code in a memfd (default) | JIT code in anonymous memory (--anon) |")
        out.append("|---|---|---|")
        for t in TOOLS:
            cells = []
            for anon in (False, True):
                for tt, aa, top, pct in naming:
                    if tt == t and aa == anon:
                        cells.append("%s `%s` %.0f%%" % ("named:" if "mj_hot" in top else "**not named**:",
                                                        top[:60], pct))
            out.append("| %s | %s |" % (t, " | ".join(cells)))
        out.append("")
    text = "\n".join(out) + "\n"
    with open(os.path.join(OUT_DIR, "peers.md"), "w") as fh:
        fh.write(text)
    cols = ["kind", "tool", "freq", "pid", "wall", "cpu", "cpu_ns", "samples", "maxrss_kib",
            "kprofd_cpu_ns", "kprofd_samples", "kprofd_drops", "kprofd_rss_growth_kib", "kprofd_hwm_kib",
            "named", "top"]
    with open(os.path.join(OUT_DIR, "peers.csv"), "w") as fh:
        fh.write("pair,order,run," + ",".join(cols) + "\n")
        for i, order, u, p in raw:
            for which, r in (("unprofiled", u), ("profiled", p)):
                fh.write("%d,%s,%s,%s\n" % (i, order, which, ",".join(
                    '"%s"' % str(r[c]).replace('"', "'") if c == "top" else str(r[c]) for c in cols)))
    sys.stdout.write(text)
    sys.stdout.flush()
    log("wrote %s and %s" % (os.path.join(OUT_DIR, "peers.md"), os.path.join(OUT_DIR, "peers.csv")))


try:
    if BPF_STATS:
        try:
            with open(BPF_STATS_FILE) as fh:
                BPF_STATS_OLD = fh.read().strip()
            with open(BPF_STATS_FILE, "w") as fh:
                fh.write("1")
        except OSError as e:
            log("cannot enable %s (%s): no BPF run times" % (BPF_STATS_FILE, e))
            BPF_STATS = False
    main()
except Fail as e:
    sys.exit("peers: " + str(e))
finally:
    if BPF_STATS_OLD is not None and BPF_STATS_OLD != "1":
        with open(BPF_STATS_FILE, "w") as fh:
            fh.write(BPF_STATS_OLD)
    for p in list(LIVE):
        if p.poll() is None:
            kb.stop(p, signal.SIGINT)
