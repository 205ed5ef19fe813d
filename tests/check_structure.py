#!/usr/bin/env python3
"""check_structure.py: the layers of kprofd and kprofctl, and no cycles between their files.

  python3 tests/check_structure.py [--build DIR] [--layers FILE]    (DIR: $BUILD, else build)

Four checks, one line per finding, "PASS: check" or "FAIL: check: why" (the format of the
integration tests; tests/integration/test_structure.sh counts them), and "note: ..." lines
for rules that are switched off. Exit status 1 if anything FAILs, 2 on a usage or table error.

(a) layers. The files are every .c and .h under daemon/, cli/, proto/ and include/, plus the
    generated files they include (named by their path under DIR: proto/kprof.pb-c.h). Each
    must match the globs of exactly one layer of tests/layers.txt, and a #include "..." of a
    file of a higher layer fails, naming both files and their layers. A `noinclude on` line
    forbids a layer some files even of lower layers; `noinclude off` only notes who would fail.

(b) folders. kprofd's glue is one folder per subsystem (daemon/os/, daemon/kernel/, ...), and
    one folder is one layer: every file of a folder must be in the same layer, unless the
    folder is named by a `mixed` line of tests/layers.txt (kprofctl's cli/).

(c) cycles. A graph of files: A -> B when A's object (DIR/obj/<path>.o, from `nm`) has an
    undefined symbol that B's object defines (T, D, B, R...), or when A's header includes B's
    header. A .c file and the header of the same stem are one node (include/kprof/X.h goes
    with the one X.c there is); a header without a .c is a node of its own. Every strongly
    connected component of more than one node (Tarjan) is a FAIL that names its files and every
    edge inside it with one example symbol (or the #include).
    Only a header's includes are edges: they are part of its interface, which every includer
    gets. What a .c file uses of another file shows in its object, as symbols; a .c file that
    includes a header only for its types (reads another module's struct) adds no edge here,
    but if that header is of a higher layer, check (a) reports it.

(d) arrows. On the same graph: no file's object calls into (or a header includes) a file of a
    higher layer, and the graph of folders (A -> B when a file of A uses one of B, by symbol or
    by any #include) has no cycle: no arrow between folders runs upward.
"""
import argparse
import os
import re
import subprocess
import sys

ROOTS = ("daemon", "cli", "proto", "include")
INCLUDE_DIRS = ("include", "daemon")  # -Iinclude -Idaemon; then -I$BUILD
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
DEFINED = set("TDBRCGSVW")

findings = {"PASS": 0, "FAIL": 0}


def report(kind, check, why=None):
    findings[kind] += 1
    print(f"{kind}: {check}" + (f": {why}" if why else ""))


def glob_re(glob):
    """A glob as a regex: * and ? stop at '/', ** crosses it, [..] and {a,b} as in the shell."""
    out, i = "", 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif c == "*":
            out, i = out + "[^/]*", i + 1
        elif c == "?":
            out, i = out + "[^/]", i + 1
        elif c == "[":
            j = glob.index("]", i)
            out, i = out + glob[i : j + 1], j + 1
        elif c == "{":
            j = glob.index("}", i)
            words = glob[i + 1 : j].split(",")
            out, i = out + "(?:" + "|".join(re.escape(w) for w in words) + ")", j + 1
        else:
            out, i = out + re.escape(c), i + 1
    return re.compile(out + r"\Z")


class Table:
    """tests/layers.txt: layers (number, name, globs) and noinclude rules."""

    def __init__(self, path):
        self.path = path
        self.layers = {}  # number -> name
        self.globs = []  # (regex, glob, number)
        self.rules = []  # (on, layer, [(regex, glob)])
        self.mixed = set()  # folders exempt from "one folder, one layer"
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                where = f"{path}:{lineno}"
                try:
                    if words[0] == "layer" and len(words) >= 4:
                        n, name = int(words[1]), words[2]
                        if self.layers.setdefault(n, name) != name:
                            raise ValueError(f"layer {n} is {self.layers[n]}, not {name}")
                        self.globs += [(glob_re(g), g, n) for g in words[3:]]
                    elif words[0] == "mixed" and len(words) >= 2:
                        self.mixed.update(w.rstrip("/") for w in words[1:])
                    elif words[0] == "noinclude" and len(words) >= 4 and words[1] in ("on", "off"):
                        pats = [(glob_re(g), g) for g in words[3:]]
                        self.rules.append((words[1] == "on", int(words[2]), pats))
                    else:
                        raise ValueError("expected 'layer N NAME GLOB...', "
                                         "'noinclude on|off N GLOB...' or 'mixed DIR...'")
                except ValueError as e:
                    sys.exit(f"check_structure.py: {where}: {e}")
        for _, layer, _ in self.rules:
            if layer not in self.layers:
                sys.exit(f"check_structure.py: {path}: noinclude names layer {layer}, not defined")

    def layers_of(self, name):
        return sorted({n for rx, _, n in self.globs if rx.match(name)})

    def label(self, n):
        return f"{n} {self.layers[n]}"


def source_files(root):
    """Every .c and .h under ROOTS, as paths relative to root."""
    out = []
    for top in ROOTS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return out


class Tree:
    """The files, their includes resolved as the compiler would (-Iinclude -I$BUILD)."""

    def __init__(self, root, build):
        self.root, self.build = root, build
        self.files = {}  # name -> path on disk
        for name in source_files(root):
            self.files[name] = os.path.join(root, name)
        self.includes = {}  # name -> [(line, text, resolved name or None)]
        todo = list(self.files)
        while todo:
            name = todo.pop()
            incs = []
            with open(self.files[name], errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    target = self.resolve(name, m.group(1))
                    if target and target not in self.files:
                        self.files[target] = self.path_of(target)
                        todo.append(target)
                    incs.append((lineno, m.group(1), target))
            self.includes[name] = incs

    def path_of(self, name):
        p = os.path.join(self.root, name)
        return p if os.path.exists(p) else os.path.join(self.build, name)

    def resolve(self, name, inc):
        """The name of the file `#include "inc"` in `name` opens, or None."""
        cands = [os.path.join(os.path.dirname(name), inc)]
        cands += [os.path.join(d, inc) for d in INCLUDE_DIRS]
        for c in cands:
            c = os.path.normpath(c)
            if os.path.isfile(os.path.join(self.root, c)):
                return c
        if os.path.isfile(os.path.join(self.build, inc)):
            return os.path.normpath(inc)  # generated: named by its path under $BUILD
        return None


def check_layers(table, tree):
    layer = {}
    ok = True
    for name in sorted(tree.files):
        ls = table.layers_of(name)
        if not ls:
            report("FAIL", "layers", f"{name} matches no glob of {table.path}: place it in a layer")
            ok = False
        elif len(ls) > 1:
            report("FAIL", "layers", f"{name} is in more than one layer: "
                   + ", ".join(table.label(n) for n in ls))
            ok = False
        else:
            layer[name] = ls[0]
    tree.layer = layer
    if ok:
        report("PASS", f"layers: each of {len(tree.files)} files is in one layer of {table.path}")

    bad = 0
    for name in sorted(tree.includes):
        for lineno, inc, target in tree.includes[name]:
            if target is None:
                report("FAIL", "layers", f'{name}:{lineno}: #include "{inc}" not found '
                       "(in its folder, include/ or $BUILD: is the tree built?)")
                bad += 1
            elif name in layer and target in layer and layer[target] > layer[name]:
                report("FAIL", "layers", f"{name} ({table.label(layer[name])}) includes "
                       f"{target} ({table.label(layer[target])})")
                bad += 1
    if not bad:
        report("PASS", "layers: no file includes a file of a higher layer")

    for on, n, pats in table.rules:
        what = f"layer {table.label(n)} must not include " + " ".join(g for _, g in pats)
        hits = [(name, target) for name in sorted(tree.includes) if layer.get(name) == n
                for _, _, target in tree.includes[name]
                if target and any(rx.match(target) for rx, _ in pats)]
        if not on:
            print(f"note: off in {table.path}: {what}; "
                  + (f"would fail: {', '.join(f'{a} includes {b}' for a, b in hits)}"
                     if hits else "no file would fail"))
        elif hits:
            for a, b in hits:
                report("FAIL", "noinclude", f"{a} ({table.label(n)}) includes {b}")
        else:
            report("PASS", f"noinclude: {what}")


def check_folders(table, tree):
    """One folder, one layer: the layers of the files of each folder in the tree."""
    by_folder = {}
    for name, n in tree.layer.items():
        if os.path.exists(os.path.join(tree.root, name)):  # generated files have no folder here
            by_folder.setdefault(os.path.dirname(name), {}).setdefault(n, []).append(name)
    bad = 0
    for folder in sorted(by_folder):
        layers = by_folder[folder]
        if len(layers) < 2 or folder in table.mixed:
            continue
        bad += 1
        report("FAIL", "folders", f"{folder}/ spans layers: " + "; ".join(
            f"{table.label(n)}: {', '.join(os.path.basename(f) for f in sorted(fs))}"
            for n, fs in sorted(layers.items()))
            + " (move the files, or name the folder in a mixed line)")
    for folder in sorted(table.mixed):
        if folder not in by_folder:
            report("FAIL", "folders", f"mixed {folder} in {table.path}: no such folder")
            bad += 1
    if not bad:
        one = len([f for f in by_folder if f not in table.mixed])
        report("PASS", f"folders: each of {one} folders is in one layer"
               + (f" (mixed: {', '.join(sorted(table.mixed))})" if table.mixed else ""))


def nm_symbols(path):
    """(defined, undefined) external symbols of one object."""
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in DEFINED:
            defined.add(parts[2])
    return defined, undefined


def tarjan(nodes, edges):
    """The strongly connected components of the graph, each a sorted list."""
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(max(1000, 10 * len(nodes)))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            sccs.append(sorted(scc))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sccs


def check_cycles(table, tree, build):
    # Nodes: a .c file with the header of its stem; a header alone if there is no such .c.
    sources = [n for n in tree.files if n.endswith(".c")]
    by_stem = {}
    for c in sources:
        by_stem.setdefault(os.path.basename(c)[:-2], []).append(c)
    node = {c: c for c in sources}
    for h in (n for n in tree.files if n.endswith(".h")):
        stem = os.path.basename(h)[:-2]
        same_dir = os.path.join(os.path.dirname(h), stem + ".c")
        if same_dir in tree.files:
            node[h] = same_dir
        elif len(by_stem.get(stem, [])) == 1:
            node[h] = by_stem[stem][0]
        else:
            node[h] = h

    # Objects: obj/<path>.o of <path>.c, obj/gen/<path>.o of the generated $BUILD/<path>.c.
    objdir = os.path.join(build, "obj")
    missing, defined_in, uses = [], {}, {}
    for c in sorted(sources):
        obj = os.path.join(objdir, c[:-2] + ".o")
        if not os.path.exists(obj):
            obj = os.path.join(objdir, "gen", c[:-2] + ".o")
        if not os.path.exists(obj):
            missing.append(c)
            continue
        defined, undefined = nm_symbols(obj)
        for s in defined:
            defined_in.setdefault(s, []).append(c)
        uses[c] = undefined
    # The generated .c files are found through their headers; each must have been compiled too.
    for h in [n for n in tree.files if n.endswith(".pb-c.h")]:
        c = h[:-2] + ".c"
        obj = os.path.join(objdir, "gen", c[:-2] + ".o")
        if c in uses or not os.path.exists(obj):
            continue
        defined, undefined = nm_symbols(obj)
        for s in defined:
            defined_in.setdefault(s, []).append(c)
        uses[c] = undefined
        node[c] = c
        node[h] = c
    if missing:
        report("FAIL", "cycles", f"no object in {objdir}/ for {len(missing)} file(s) "
               f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}): "
               "build them first (make BUILD=... all)")
        return

    edges, example = {}, {}

    def add(a, b, why):
        a, b = node[a], node[b]
        if a == b:
            return
        edges.setdefault(a, set()).add(b)
        # A symbol says more than an #include; keep the first (sorted) of the best kind.
        old = example.get((a, b))
        if old is None or (old.startswith("#") and not why.startswith("#")):
            example[(a, b)] = why

    for c in sorted(uses):
        for s in sorted(uses[c]):
            for d in defined_in.get(s, ()):
                add(c, d, s)
    for name in sorted(n for n in tree.includes if n.endswith(".h")):
        for _, inc, target in tree.includes[name]:
            if target:
                add(name, target, f'{os.path.basename(name)}: #include "{inc}"')

    nodes = set(node.values())
    cycles = sorted(scc for scc in tarjan(nodes, edges) if len(scc) > 1)
    nedges = sum(len(v) for v in edges.values())
    if not cycles:
        report("PASS", f"cycles: none among {len(nodes)} files ({nedges} edges: symbols and "
               "headers' #includes)")
    for scc in cycles:
        members = set(scc)
        inside = [f"{a} -> {b} ({example[(a, b)]})" for a in scc
                  for b in sorted(edges.get(a, ())) if b in members]
        report("FAIL", "cycles", f"{len(scc)} files depend on each other: {' '.join(scc)}: "
               + ", ".join(inside))

    # (d) Arrows: no edge to a higher layer (the symbols of check (a)'s includes), and no cycle
    # between folders (a node's folder is its .c file's, so include/kprof/X.h is daemon/lib's).
    layer = tree.layer
    up = [(a, b) for a in sorted(edges) for b in sorted(edges[a])
          if a in layer and b in layer and layer[b] > layer[a]]
    for a, b in up:
        report("FAIL", "arrows", f"{a} ({table.label(layer[a])}) uses {b} "
               f"({table.label(layer[b])}): {example[(a, b)]}")
    fedges, fexample = {}, {}
    for a in edges:
        for b in edges[a]:
            fa, fb = os.path.dirname(a), os.path.dirname(b)
            if fa != fb:
                fedges.setdefault(fa, set()).add(fb)
                fexample.setdefault((fa, fb), f"{a} -> {b} ({example[(a, b)]})")
    for name in sorted(tree.includes):  # a .c file's includes: the edges of its types
        for _, inc, target in tree.includes[name]:
            if target and name in node and target in node:
                fa, fb = os.path.dirname(node[name]), os.path.dirname(node[target])
                if fa != fb:
                    fedges.setdefault(fa, set()).add(fb)
                    fexample.setdefault((fa, fb), f'{name}: #include "{inc}"')
    folders = set(os.path.dirname(n) for n in nodes)
    fcycles = sorted(scc for scc in tarjan(folders, fedges) if len(scc) > 1)
    flayer = {}  # a folder's layer: its files' lowest
    for n in nodes:
        if n in layer:
            f = os.path.dirname(n)
            flayer[f] = min(flayer.get(f, layer[n]), layer[n])
    for scc in fcycles:
        members = set(scc)
        inside = [(a, b) for a in scc for b in sorted(fedges.get(a, ())) if b in members]
        # The arrows that run upward close the cycle; name those (or a few, if none does).
        upward = [(a, b) for a, b in inside if flayer.get(b, -1) > flayer.get(a, -1)]
        report("FAIL", "arrows", f"{len(scc)} folders depend on each other "
               f"({', '.join(f + '/' for f in scc)}): "
               + ", ".join(f"{a}/ -> {b}/ ({fexample[(a, b)]})" for a, b in (upward or inside[:6])))
    if not up and not fcycles:
        report("PASS", f"arrows: none to a higher layer, no cycle among {len(folders)} folders "
               f"({sum(len(v) for v in fedges.values())} folder edges)")


# Fields only their owner may touch: (identifier, owner file names; others anywhere fail).
PRIVATE = [
    # The target list (security issue 25, item 3): walked only with manager_for_each_target,
    # whose entries survive ends and trims in a walk's body.
    (r"\b(list_next|list_dropped|hash_next|att_next|att_prev|recent_next)\b", {"manager_targets.c", "target.h"}),
]


def check_private(root):
    bad = {}
    for rel in source_files(root):
        if not rel.endswith((".c", ".h")):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for pat, owners in PRIVATE:
            if os.path.basename(rel) not in owners and re.search(pat, text):
                bad.setdefault(pat, []).append(rel)
    for pat, owners in PRIVATE:
        if pat in bad:
            report("FAIL", f"private {pat}", "used outside " + ", ".join(sorted(owners)) +
                   ": " + " ".join(bad[pat]))
        else:
            report("PASS", f"private {pat}: only in " + ", ".join(sorted(owners)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD") or "build",
                    help="build directory (objects in BUILD/obj, generated headers in BUILD)")
    ap.add_argument("--layers", default=os.path.join("tests", "layers.txt"))
    args = ap.parse_args()
    root = os.path.dirname(here)
    build = os.path.abspath(args.build)
    layers = os.path.abspath(args.layers)
    os.chdir(root)
    # Relative names in messages when the build directory is in the tree.
    if not os.path.relpath(build, root).startswith(".."):
        build = os.path.relpath(build, root)
    if not os.path.relpath(layers, root).startswith(".."):
        args.layers = os.path.relpath(layers, root)
    table = Table(args.layers)
    if not os.path.isdir(os.path.join(build, "obj")):
        report("FAIL", "structure", f"no objects in {build}/obj/: build first "
               f"(make BUILD={build} all)")
        return 1
    tree = Tree(root, build)
    check_layers(table, tree)
    check_folders(table, tree)
    check_cycles(table, tree, build)
    check_private(root)
    print(f"{findings['PASS']} passed, {findings['FAIL']} failed")
    return 1 if findings["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
