#!/usr/bin/env python3
"""names_compare.py: kprof's names against perf's, for the native-naming tests.

    names_compare.py [--same-run] KPROF_REPORT.json KPROF_FOLDED PERF_SCRIPT CHECK...

KPROF_REPORT.json is `kprofctl report PID --top 0 --json`, KPROF_FOLDED `kprofctl folded PID`,
PERF_SCRIPT `perf script -F ip,sym,dso` of a `perf record -g` of the same process or of a run of
the same length (PERF_SCRIPT "-": no perf, kprof's side only). Only user frames count. Each CHECK
prints one PASS or FAIL line with both tools' figures:

    leaf:NAME[@MODULE]  NAME is the leaf of some samples in both (module: kprof's, e.g.
                        "[vdso]" or "libm.so.6"); with --same-run (both tools sampled one
                        process at once) kprof's share is at most TOL points below perf's
                        (more is no naming fault); for two runs (whose threads the scheduler
                        splits differently, more so on a loaded machine) only that both name
                        it, the shares printed
    root:NAME           the same for the stacks NAME roots
    unnamed             samples whose user leaf, or any user frame, has no name (perf:
                        "[unknown]"; kprof: "[unknown]" or a name made up from its mapping,
                        "[libc.so.6]", "[vdso]", "[anon]"): kprof's share at most perf's + TOL
                        (or 4 standard errors of the larger share, as for leaf:)
    noroot:NAME         kprof roots no stack at NAME (perf may: only kprof is checked)
    noprefix:PFX        no kprof user frame is named PFX... (e.g. "Builtin:": the perf-map
                        name of code an ELF symbol covers)
    top                 the heaviest user leaf is the same function in both (same run)
TOL is 8 percentage points (NAMES_TOL): two profiles of one process, or of two runs, differ by
sampling noise and by the moments each tool starts and stops. Exit status 1 if a check failed.
"""
import json
import os
import re
import sys

TOL = float(os.environ.get("NAMES_TOL", "8"))
FRAME = re.compile(r"^\s*([0-9a-f]+) (.*) \(([^()]*)\)$")


def perf_stacks(path):
    """Leaf-first lists of (name, module) user frames, one list per sample."""
    stacks, cur, seen = [], [], False
    for line in open(path, errors="replace"):
        m = FRAME.match(line.rstrip("\n"))
        if not m:
            if seen:
                stacks.append(cur)
            cur, seen = [], False
            continue
        seen = True
        ip, sym, dso = m.groups()
        if dso == "[kernel.kallsyms]" or (len(ip) == 16 and ip.startswith("ffff")):
            continue
        cur.append((sym, os.path.basename(dso) if dso.startswith("/") else dso))
    if seen:
        stacks.append(cur)
    return [(s, 1) for s in stacks]


def kprof_stacks(report, folded):
    """Leaf-first lists of (name, module) user frames with their counts."""
    kinds, modules = {}, {}
    for e in report["entries"]:
        kinds.setdefault(e["function"], set()).add(e["kind"])
        modules.setdefault(e["function"], e["module"])
    out = []
    for line in open(folded):
        line = line.rstrip("\n")
        if not line:
            continue
        frames, n = line.rsplit(" ", 1)
        user = [f for f in frames.split(";") if kinds.get(f, {"native"}) != {"kernel"}]
        user = [f for f in user if modules.get(f) != "[kprof]"]
        out.append(([(f, modules.get(f, "")) for f in reversed(user)], int(n)))
    return out


def unnamed(name):
    return name.startswith("[")


def share(stacks, pred):
    total = sum(n for _, n in stacks)
    return 100.0 * sum(n for s, n in stacks if s and pred(s)) / total if total else 0.0


def main():
    args = sys.argv[1:]
    same_run = args[0] == "--same-run"
    if same_run:
        args = args[1:]
    report = json.load(open(args[0]))
    kp = kprof_stacks(report, args[1])
    pf = perf_stacks(args[2]) if args[2] != "-" else None
    ok = True

    def verdict(good, what):
        nonlocal ok
        ok &= good
        print(("PASS" if good else "FAIL") + ": " + what)

    for check in args[3:]:
        if check.startswith(("leaf:", "root:")):
            kind, want = check.split(":", 1)
            name, _, module = want.partition("@")
            at = 0 if kind == "leaf" else -1

            def pred(s, name=name, module=module, at=at):
                return s[at][0] == name and (not module or s[at][1] == module)

            k = share(kp, pred)
            if pf is None:
                verdict(k > 0, f"{check}: kprof {k:.1f}% (no perf to compare)")
                continue
            p = share(pf, lambda s: s[at][0] == name)
            # What fails is kprof naming less than perf: a larger share (perf lost frames
            # of a loaded machine's samples: one CI run, 42.2% vs 23.2%) is not a naming fault.
            # Two runs: the scheduler splits a loaded machine's threads differently each time
            # (17.6% vs 7.1% seen), so only that both name it; `unnamed` checks completeness.
            # Two samplings of one run differ by chance too: at least 4 standard errors of
            # the difference of the two shares (binomial, from each side's sample count).
            nk, np_ = sum(n for _, n in kp), sum(n for _, n in pf)
            q = max(k, p) / 100.0
            tol = max(TOL, 400.0 * (q * (1 - q) * (1.0 / max(nk, 1) + 1.0 / max(np_, 1))) ** 0.5)
            close = k >= p - tol if same_run else True
            verdict(k > 0 and p > 0 and close,
                    f"{check}: kprof {k:.1f}%, perf {p:.1f}% of samples " +
                    (f"(same run, tolerance {tol:.1f}: {TOL:g} or 4 standard errors of "
                     f"{nk} and {np_} samples)" if same_run else "(two runs)"))
        elif check == "unnamed":
            kl = share(kp, lambda s: unnamed(s[0][0]))
            ka = share(kp, lambda s: any(unnamed(f) for f, _ in s))
            if pf is None:
                verdict(kl == 0 and ka == 0,
                        f"unnamed: kprof {kl:.1f}% of leaves, {ka:.1f}% of stacks (no perf)")
                continue
            pl = share(pf, lambda s: s[0][0] == "[unknown]")
            pa = share(pf, lambda s: any(f == "[unknown]" for f, _ in s))
            worst = sorted({f for s, _ in kp for f, _ in s if unnamed(f)})[:6]
            nk, np_ = sum(n for _, n in kp), len(pf)

            def tol_of(k, p):  # TOL, or 4 standard errors of a large share (the leaf checks')
                q = max(k, p) / 100.0
                return max(TOL, 400.0 * (q * (1 - q) * (1.0 / max(nk, 1) + 1.0 / max(np_, 1))) ** 0.5)
            tl, ta = tol_of(kl, pl), tol_of(ka, pa)
            verdict(kl <= pl + tl and ka <= pa + ta,
                    f"unnamed: kprof {kl:.1f}% of leaves and {ka:.1f}% of stacks, perf "
                    f"{pl:.1f}% and {pa:.1f}% ({nk} and {np_} samples, tolerance {tl:.1f} and "
                    f"{ta:.1f})" + (f"; kprof's: {', '.join(worst)}" if worst else ""))
        elif check.startswith(("noroot:", "noprefix:")):
            kind, want = check.split(":", 1)
            if kind == "noroot":
                k = share(kp, lambda s: s[-1][0] == want)
            else:
                k = share(kp, lambda s: any(f.startswith(want) for f, _ in s))
            verdict(k == 0, f"{check}: kprof {k:.1f}% of samples")
        elif check == "top":
            def top(stacks):
                c = {}
                for s, n in stacks:
                    if s:
                        c[s[0][0]] = c.get(s[0][0], 0) + n
                return max(c.items(), key=lambda kv: kv[1])[0] if c else ""
            kt = top(kp)
            pt = top(pf) if pf is not None else kt
            verdict(kt == pt and kt != "", f"top: kprof's heaviest leaf {kt!r}, perf's {pt!r}")
        else:
            sys.exit(f"names_compare.py: unknown check {check}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
