# kpbench.py: what the python benchmarks of bench/ share (imported, not run): progress lines,
# kprofctl calls, /proc readings, the wait for a quiet machine, timed runs, what a Node or JVM
# target leaves in /tmp, median (min, max) cells and the output files. Errors end the benchmark
# with "PREFIX: why" (sys.exit), PREFIX being the name set_prefix() gave (bench by default).
import json, os, select, shutil, signal, statistics, subprocess, sys, tempfile, time

PREFIX = "bench"


def set_prefix(prefix):
    global PREFIX
    PREFIX = prefix


def log(msg):
    print(PREFIX + ": " + msg, file=sys.stderr, flush=True)


def die(msg):
    sys.exit(PREFIX + ": " + msg)


# ---- kprofctl -------------------------------------------------------------------------------

class Ctl:
    """kprofctl on one socket. name, if given, is said in errors: "kprofctl (A) status failed"."""

    def __init__(self, kprofctl, sock, name=None):
        self.argv = [kprofctl, "--socket", sock]
        self.name = name

    def run(self, *args, timeout=None):
        """The CompletedProcess, whatever its status; None if it did not end within timeout s."""
        try:
            return subprocess.run(self.argv + list(args), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def __call__(self, *args, timeout=None):
        """The output; the benchmark ends if kprofctl fails; None if it did not answer in time."""
        r = self.run(*args, timeout=timeout)
        if r is None:
            return None
        if r.returncode != 0:
            die("kprofctl %s%s failed (status %d): %s"
                % ("(%s) " % self.name if self.name else "", " ".join(args), r.returncode,
                   (r.stderr or r.stdout).strip()))
        return r.stdout

    def status(self, timeout=None):
        out = self("status", "--json", timeout=timeout)
        return json.loads(out) if out is not None else None

    def wait_detached(self, timeout):
        """Poll until kprofd has no attached target (it saw the exit); its status, or None if it
        still had one after timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            if st["targets_attached"] == 0:
                return st
            if time.monotonic() > deadline:
                return None
            time.sleep(0.02)


def warm_kernel_symbols(ctl, freq=999):
    """Make kprofd load /proc/kallsyms (50-100 ms of CPU, once in its life) now, not in a
    measured run: it does so on the first kernel frame it symbolizes, and dd copying /dev/zero
    to /dev/null runs almost only in the kernel."""
    p = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=64k"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        s0 = ctl.status()
        ctl("attach", str(p.pid), "--freq", str(freq))
        deadline = time.monotonic() + 10
        while ctl.status()["samples"] - s0["samples"] < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        ctl("detach", str(p.pid))
    finally:
        p.kill()
        p.wait()


class Daemon:
    """A private kprofd (socket and log in a fresh directory, no state directory) for a
    benchmark that starts its own; close() stops it and removes the directory."""

    def __init__(self, build, prefix="kprof-bench."):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.sock = os.path.join(self.dir, "s")
        self.log = open(os.path.join(self.dir, "kprofd.log"), "w")
        self.p = subprocess.Popen([os.path.join(build, "kprofd"), "--socket", self.sock,
                                   "--state-dir", ""], stdout=self.log, stderr=self.log)
        self.ctl = Ctl(os.path.join(build, "kprofctl"), self.sock)
        for _ in range(100):
            if self.ctl.run("status").returncode == 0:
                return
            time.sleep(0.1)
        self.close()
        die("kprofd did not start")

    def close(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- /proc ----------------------------------------------------------------------------------

def cpu_stat():
    """(busy, steal, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    total = sum(v[:8])  # guest time is already inside user and nice
    return total - v[3] - v[4], v[7], total


def busy_pct(s0, s1):
    """(% busy, % stolen) of the CPUs between two cpu_stat()s."""
    tot = max(s1[2] - s0[2], 1)
    return 100.0 * (s1[0] - s0[0]) / tot, 100.0 * (s1[1] - s0[1]) / tot


def vm_kib(pid, key):
    with open("/proc/%d/status" % pid) as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def nfds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def pgrep(*args):
    r = subprocess.run(["pgrep", *args], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as fh:
            return fh.read().strip()
    except OSError:
        return None


# ---- a quiet machine ------------------------------------------------------------------------

# What disturbs a window: test suites, fuzzers, benchmarks, other profilers, minijit.
BUSY_BENCHES = "slowdown|ingest|peers|threads|soak"


def busy_re(benches=BUSY_BENCHES):
    return (r"tests/run\.sh|tests/fuzz/run\.sh|\.ci/run|tests/integration/test_|perf (record|top|stat)"
            r"|bpftrace|bench/(%s)|bench_ingest|minijit" % benches)


class Quiet:
    """Waits before each window, at most wait s (and total s over the run), until nothing that
    busy_re matches runs (but the pids in own), and notes per window what else ran."""

    def __init__(self, own, wait, total, benches=BUSY_BENCHES, step=5):
        self.own, self.wait_max, self.total, self.step = set(own), wait, total, step
        self.re = busy_re(benches)
        self.waited_total = 0.0
        self.windows = []  # (part, others at start, at end, busy at start, at end, waited s)

    def busy(self):
        return sorted({comm(p) or "?" for p in pgrep("-f", self.re) if p not in self.own} - {None})

    def others(self):
        """Other kprofd, minijit, node, java, perf and bpftrace processes, by name."""
        seen = {}
        for p in pgrep("-x", "kprofd|minijit|node|java|perf|bpftrace"):
            if p not in self.own and (c := comm(p)):
                seen[c] = seen.get(c, 0) + 1
        return seen

    def wait(self):
        t0, said = time.monotonic(), False
        while (b := self.busy()):
            w = time.monotonic() - t0
            if w >= self.wait_max or self.waited_total + w >= self.total:
                log("  still running after %.0f s of waiting: %s; measuring anyway" % (w, " ".join(b)))
                break
            if not said:
                log("  waiting for: %s" % " ".join(b))
                said = True
            time.sleep(self.step)
        w = time.monotonic() - t0
        self.waited_total += w
        return w

    def window(self, part=None):
        return _Window(self, part)

    def notes(self, part=None, unit="windows", of_them=" of them", busy_what="running",
              always_waited=False):
        """A sentence on the windows of part: how many saw other processes, and which."""
        ws = [w for w in self.windows if w[0] == part]
        if not ws and not always_waited:
            return ""
        with_o = [w for w in ws if w[1] or w[2]]
        with_b = [w for w in ws if w[3] or w[4]]
        names = {}
        for w in with_o:
            for d in (w[1], w[2]):
                for c, n in d.items():
                    names[c] = max(names.get(c, 0), n)
        s = "%d %s; other kprofd/minijit/node/java/perf processes in %d%s" % (
            len(ws), unit, len(with_o), of_them)
        if names:
            s += " (at most %s)" % ", ".join("%d %s" % (n, c) for c, n in sorted(names.items()))
        s += "; a test suite, fuzzer, benchmark or profiler %s in %d" % (busy_what, len(with_b))
        if with_b:
            s += " (%s)" % ", ".join(sorted({c for w in with_b for c in w[3] + w[4]}))
        waited = sum(w[5] for w in ws)
        if waited or always_waited:
            s += "; %.0f s spent waiting for a quiet machine" % waited
        return s


class _Window:
    def __init__(self, q, part):
        self.q, self.part = q, part

    def __enter__(self):
        self.waited = self.q.wait()
        self.o0, self.b0 = self.q.others(), self.q.busy()
        return self

    def __exit__(self, *exc):
        self.q.windows.append((self.part, self.o0, self.q.others(), self.b0, self.q.busy(), self.waited))


# ---- targets --------------------------------------------------------------------------------

def unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def reap_tmp(pid):
    """What a Node or JVM target of pid leaves in /tmp: its perf map, JVM attach files."""
    for f in ("/tmp/perf-%d.map" % pid, "/tmp/.java_pid%d" % pid, "/tmp/.attach_pid%d" % pid,
              "/tmp/hsperfdata_root/%d" % pid):
        unlink(f)


def tail(b, n=400):
    return b[-n:].decode(errors="replace").strip()


def read_until(fd, buf, needle, timeout, what):
    """Read fd (a child's stderr) onto buf until needle is in it; the benchmark ends if it is
    not there within timeout s or fd ends first."""
    deadline = time.monotonic() + timeout
    while needle not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            die("%s: no %r after %.0f s: %s" % (what, needle.decode(), timeout, tail(buf)))
        chunk = os.read(fd, 65536)
        if not chunk:
            die("%s ended before %r: %s" % (what, needle.decode(), tail(buf)))
        buf += chunk
    return buf


def stop(p, sig=signal.SIGTERM, timeout=5):
    """Send sig to Popen p, SIGKILL if it has not exited timeout s later; p is reaped."""
    p.send_signal(sig)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def wrapped(cmd, pidfile):
    """cmd under a shell that writes its pid first (the pid cmd keeps after its exec)."""
    return ["/bin/sh", "-c", 'echo $$ >"$0"; exec "$@"', pidfile, *cmd]


def timed(cmd, pidfile=None, what=None):
    """Run cmd, timed from just before the spawn to just after the reap: (wall s, CPU s of the
    process tree (wait4), stderr text). With pidfile (see wrapped()), what the pid written there
    left in /tmp is removed. The benchmark ends if cmd fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, st, ru = os.wait4(p.pid, 0)
    t1 = time.perf_counter()
    p.returncode = os.waitstatus_to_exitcode(st)
    p.stderr.close()
    if pidfile:
        try:
            with open(pidfile) as fh:
                reap_tmp(int(fh.read()))
            os.unlink(pidfile)
        except (OSError, ValueError):
            pass
    if p.returncode != 0:
        die("%s exited with status %d: %s" % (what or " ".join(cmd), p.returncode,
                                              err.decode(errors="replace").strip()[-500:]))
    return t1 - t0, ru.ru_utime + ru.ru_stime, err.decode(errors="replace")


def hot_workloads(node, hot_fixed, node_iters, java, jcls, jvm_rounds):
    """bench/targets.sh's fixed-work targets: (name, how the table shows it, argv) of the Node
    one (tests/fixtures/hot_fixed.js) and the 4-thread JVM one (tests/fixtures/jvm/Threads)."""
    return [
        ("node", "`node --perf-basic-prof tests/fixtures/hot_fixed.js %d`" % node_iters,
         [node, "--perf-basic-prof", hot_fixed, str(node_iters)]),
        ("jvm", "`java -XX:+PreserveFramePointer Threads work 4 %d`" % jvm_rounds,
         [java, "-XX:+PreserveFramePointer", "-cp", jcls, "Threads", "work", "4", str(jvm_rounds)]),
    ]


# ---- tables and files -----------------------------------------------------------------------

def med3(v):
    v = sorted(v)
    return statistics.median(v), v[0], v[-1]


def fmt3(v, scale=1.0, digits=1, bold=False):
    """"median (min, max)" of v times scale; the median in bold if asked."""
    m, lo, hi = med3(v)
    ms = "%.*f" % (digits, m * scale)
    return "%s (%.*f, %.*f)" % ("**%s**" % ms if bold else ms, digits, lo * scale, digits, hi * scale)


def now_utc(fmt="%Y-%m-%d %H:%M UTC"):
    return time.strftime(fmt, time.gmtime())


def loadavg():
    with open("/proc/loadavg") as fh:
        return fh.read().split()[:3]


def head_lines(env, what=""):
    """The first lines of a table from the variables the shell script set: the command, the
    date and commit, the machine."""
    return ["Command: `%s`%s" % (env["BENCH_CMD"], what), "",
            "* Date: %s; commit %s" % (env["BENCH_DATE"], env["BENCH_COMMIT"]),
            "* Machine: Linux %s, %s CPUs (%s), load average before the run %s"
            % (env["BENCH_KERNEL"], env["BENCH_NPROC"], env["BENCH_CPU"], env["BENCH_LOADAVG"])]


def write_out(out_dir, files, show):
    """Write each name: text of files into out_dir, then the text of show on stdout."""
    os.makedirs(out_dir, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w") as fh:
            fh.write(text)
    sys.stdout.write(files[show])
    sys.stdout.flush()
