# slowdown.py: the timing and process control of bench/slowdown.sh, which sets its environment
# (see the variables the shell script exports) and runs it; not meant to be run alone.
import os, statistics, subprocess, sys, time

import kpbench as kb

KPROFCTL, MINIJIT, SOCK = os.environ["KPROFCTL"], os.environ["MINIJIT"], os.environ["SOCK"]
PAIRS, ROUNDS = int(os.environ["BENCH_PAIRS"]), int(os.environ["BENCH_ROUNDS"])
FREQS = [int(f) for f in os.environ["BENCH_FREQS"].split()]
OUT_DIR = os.environ["OUT_DIR"]
WARMUP_ROUNDS = 200

ctl = kb.Ctl(KPROFCTL, SOCK)
log, status = kb.log, ctl.status


def wait_detached(pid, timeout=20.0):
    """Poll until kprofd has seen the target (its only one) exit: every sample is then counted."""
    st = ctl.wait_detached(timeout)
    if st is None:
        kb.die("kprofd still reports %d attached targets 20 s after pid %d exited"
               % (status()["targets_attached"], pid))
    return st


def run_minijit(rounds, freq=None):
    """One run, timed from just before the spawn to just after the exit is reaped.

    Both kinds of runs do the same steps (spawn, read stderr until the ready line, read it to
    EOF, reap); a profiled run also attaches as soon as the ready line is seen.
    Returns (wall seconds, CPU seconds of minijit, pid, seconds from ready to the end of the
    attach call or None)."""
    attach_s = None
    t0 = time.perf_counter()
    p = subprocess.Popen([MINIJIT, "--rounds", str(rounds), "--cleanup"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    try:
        fd = p.stderr.fileno()
        buf = kb.read_until(fd, b"", b"ready", 10, "minijit (pid %d)" % p.pid)
        if freq is not None:
            ta = time.perf_counter()
            ctl("attach", str(p.pid), "--freq", str(freq))
            attach_s = time.perf_counter() - ta
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
        _, st, ru = os.wait4(p.pid, 0)
        t1 = time.perf_counter()
        rc = p.returncode = os.waitstatus_to_exitcode(st)
        if rc != 0:
            sys.exit("bench: minijit (pid %d) exited with status %d: %s"
                     % (p.pid, rc, buf.decode(errors="replace").strip()))
        return t1 - t0, ru.ru_utime + ru.ru_stime, p.pid, attach_s
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()
        kb.unlink("/tmp/perf-%d.map" % p.pid)  # --cleanup does it on a normal exit


def measured(rounds, freq=None):
    """A run between two `kprofctl status` calls: the CPU time of the daemon and samples over it.

    The status calls are outside the timed part. For a profiled run the second one waits until
    kprofd has seen the exit (no target attached), so every sample of the run is counted."""
    s0 = status()
    wall, cpu, pid, attach_s = run_minijit(rounds, freq)
    s1 = wait_detached(pid) if freq is not None else status()
    r = dict(wall=wall, cpu=cpu, pid=pid, attach_s=attach_s, samples=s1["samples"] - s0["samples"],
             cpu_ns=s1["cpu_ns"] - s0["cpu_ns"], drops=s1["drops"] - s0["drops"])
    return r


# Warm-up, not counted: kernel symbols (kb.warm_kernel_symbols), and the first runs of a fresh binary pay for the
# page cache and for whatever kprofd sets up on its first targets.
log("warm-up (not counted): dd attached at %d Hz, %d rounds unprofiled, then profiled at %s Hz"
    % (max(FREQS), WARMUP_ROUNDS, ", ".join(map(str, FREQS))))
kb.warm_kernel_symbols(ctl, max(FREQS))
measured(WARMUP_ROUNDS)
for f in FREQS:
    measured(WARMUP_ROUNDS, f)

rows, raw = [], []


def med(pairs, fn):
    return statistics.median(fn(x) for x in pairs)


t_start = time.monotonic()
stat0 = kb.cpu_stat()
for f in FREQS:
    pairs = []
    for i in range(1, PAIRS + 1):
        if i % 2 == 0:
            u = measured(ROUNDS)
            p = measured(ROUNDS, f)
        else:
            p = measured(ROUNDS, f)
            u = measured(ROUNDS)
        ratio = p["wall"] / u["wall"]
        cpu_ratio = p["cpu"] / u["cpu"] if u["cpu"] > 0 else float("nan")
        per_sample = p["cpu_ns"] / 1000 / p["samples"] if p["samples"] else float("nan")
        above_idle = ((p["cpu_ns"] - u["cpu_ns"]) / 1000 / p["samples"] if p["samples"]
                      else float("nan"))
        pairs.append(dict(u=u, p=p, ratio=ratio, cpu_ratio=cpu_ratio, per_sample=per_sample, above_idle=above_idle))
        raw.append((f, i, "unprofiled first" if i % 2 == 0 else "profiled first", u, p))
        log("%4d Hz pair %d/%d: unprofiled %.3f s (cpu %.3f), profiled %.3f s (cpu %.3f), "
            "ratio %.4f (cpu %.4f), %d samples, daemon %.1f ms (unprofiled run %.1f ms), "
            "%.2f us/sample, %d drops"
            % (f, i, PAIRS, u["wall"], u["cpu"], p["wall"], p["cpu"], ratio, cpu_ratio,
               p["samples"], p["cpu_ns"] / 1e6, u["cpu_ns"] / 1e6, per_sample, p["drops"]))
    rows.append(dict(
        freq=f,
        u_med=med(pairs, lambda x: x["u"]["wall"]),
        p_med=med(pairs, lambda x: x["p"]["wall"]),
        r_med=med(pairs, lambda x: x["ratio"]),
        r_min=min(x["ratio"] for x in pairs), r_max=max(x["ratio"] for x in pairs),
        c_med=med(pairs, lambda x: x["cpu_ratio"]),
        c_min=min(x["cpu_ratio"] for x in pairs), c_max=max(x["cpu_ratio"] for x in pairs),
        u_share=med(pairs, lambda x: x["u"]["cpu"] / x["u"]["wall"]),
        p_share=med(pairs, lambda x: x["p"]["cpu"] / x["p"]["wall"]),
        samples_med=med(pairs, lambda x: x["p"]["samples"]),
        expected=med(pairs, lambda x: x["p"]["wall"] * f),
        cpu_ms_med=med(pairs, lambda x: x["p"]["cpu_ns"] / 1e6),
        idle_ms_med=med(pairs, lambda x: x["u"]["cpu_ns"] / 1e6),
        us_per_sample=med(pairs, lambda x: x["per_sample"]),
        us_above_idle=med(pairs, lambda x: x["above_idle"]),
        attach_ms_med=med(pairs, lambda x: x["p"]["attach_s"] * 1000),
        drops=sum(x["p"]["drops"] for x in pairs)))
elapsed = time.monotonic() - t_start
stat1 = kb.cpu_stat()
busy_pct, steal_pct = kb.busy_pct(stat0, stat1)


env = os.environ
out = kb.head_lines(env)
out.append("* Other kprofd or minijit processes when the run started: %s"
           % (env["BENCH_OTHERS"] if env["BENCH_OTHERS"] == "none" else "pids " + env["BENCH_OTHERS"]))
out.append("* Workload: `minijit --rounds %d --cleanup`, %d pairs per frequency, order alternated "
           "(odd pairs profiled first, even pairs unprofiled first); the measured pairs took %.0f s"
           % (ROUNDS, PAIRS, elapsed))
out.append("* CPUs during the measured pairs (/proc/stat): %.0f%% busy over the %s CPUs "
           "(one busy CPU = %.0f%%), %.1f%% stolen by the hypervisor"
           % (busy_pct, env["BENCH_NPROC"], 100.0 / int(env["BENCH_NPROC"]), steal_pct))
out.append("")
out.append("Target slowdown: wall time from spawn to exit, ratio = profiled / unprofiled per pair, "
           "median (min, max) over the pairs; the CPU time ratio is the same with the user + "
           "system time of minijit (wait4), and CPU / wall is the share of a CPU minijit got:")
out.append("")
out.append("| Frequency | Unprofiled run (median) | Profiled run (median) "
           "| Wall time ratio | CPU time ratio | CPU / wall, unprofiled and profiled |")
out.append("|---:|---:|---:|---:|---:|---:|")
for r in rows:
    out.append("| %d Hz | %.3f s | %.3f s | **%.3f** (%.3f, %.3f) | %.3f (%.3f, %.3f) | %.3f, %.3f |"
               % (r["freq"], r["u_med"], r["p_med"], r["r_med"], r["r_min"], r["r_max"],
                  r["c_med"], r["c_min"], r["c_max"], r["u_share"], r["p_share"]))
out.append("")
out.append("Daemon CPU time (getrusage of kprofd between two `status` calls around each run; "
           "medians over the profiled runs):")
out.append("")
out.append("| Frequency | Samples per run (F x run time) | Drops (total) "
           "| Daemon CPU per profiled run | Daemon CPU per sample "
           "| Daemon CPU over an unprofiled run | Per sample, above that idle cost |")
out.append("|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    out.append("| %d Hz | %d (%d) | %d | %.1f ms | %.2f us | %.1f ms | %.2f us |"
               % (r["freq"], r["samples_med"], r["expected"], r["drops"], r["cpu_ms_med"],
                  r["us_per_sample"], r["idle_ms_med"], r["us_above_idle"]))
out.append("")
out.append("Median time from the ready line to the end of `kprofctl attach`: %s."
           % ", ".join("%.1f ms at %d Hz" % (r["attach_ms_med"], r["freq"]) for r in rows))
alone_pct = 100.0 / int(env["BENCH_NPROC"])
if busy_pct > alone_pct + 10:
    out.append("")
    out.append("**Warning: the CPUs were %.0f%% busy where the benchmark alone keeps them about "
               "%.0f%% busy: other processes ran during the measured pairs and the times are "
               "disturbed (see CPU / wall).**" % (busy_pct, alone_pct + 2))
if any(r["drops"] for r in rows):
    out.append("")
    out.append("**Warning: ring-buffer drops during profiled runs; the samples and CPU per "
               "sample figures undercount.**")
text = "\n".join(out) + "\n"

with open(os.path.join(OUT_DIR, "slowdown.md"), "w") as fh:
    fh.write(text)
with open(os.path.join(OUT_DIR, "slowdown.csv"), "w") as fh:
    fh.write("freq_hz,pair,order,unprofiled_s,profiled_s,ratio,unprofiled_cpu_s,profiled_cpu_s,"
             "samples,daemon_cpu_ns,daemon_cpu_ns_unprofiled,drops,attach_s\n")
    for f, i, order, u, p in raw:
        fh.write("%d,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d,%d,%d,%.6f\n"
                 % (f, i, order, u["wall"], p["wall"], p["wall"] / u["wall"], u["cpu"],
                    p["cpu"], p["samples"], p["cpu_ns"], u["cpu_ns"], p["drops"],
                    p["attach_s"]))
sys.stdout.write(text)
if busy_pct > alone_pct + 10:
    log("warning: other processes used the CPUs during the measured pairs (see the table)")
if any(r["drops"] for r in rows):
    log("warning: ring-buffer drops during profiled runs (see the table)")
log("wrote %s and %s" % (os.path.join(OUT_DIR, "slowdown.md"),
                         os.path.join(OUT_DIR, "slowdown.csv")))
