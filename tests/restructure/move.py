#!/usr/bin/env python3
"""move.py: put kprofd's glue files into the subsystem folders of tests/restructure/map.txt.

  python3 tests/restructure/move.py [--root DIR] [--map FILE] [--dry-run] [--commit]

Three steps, each a no-op when already done, so the script can run again on a tree that gained
files or lines (a branch merged after the move):

1. Moves. Every daemon/STEM.c and daemon/STEM.h of the map goes to daemon/FOLDER/ with `git mv`
   (content unchanged, so `git log --follow` and `git blame -C` keep its history); a file of the
   map already in another folder of daemon/ moves to the map's folder.
2. Includes. Every #include "..." of a moved header in the C files under daemon/, cli/, proto/,
   include/, tests/ and bench/ is written folder-qualified, "kernel/loader.h" (the build has
   -Idaemon). A bare "loader.h" counts only in files under daemon/ (elsewhere it is that folder's
   own header); "daemon/loader.h", "../loader.h" and a stale "os/loader.h" count everywhere.
3. Names in text. "daemon/loader.c" or "daemon/loader.h" in any tracked text file (docs, scripts,
   comments) becomes "daemon/kernel/loader.c".

Then it lists every daemon/*.[ch] that the map does not name (new files from other branches): add
each to a line of the map and run the script again. Exit status 0 when every file is placed, 1
when some are not (the rest is done anyway), 2 on a usage or map error.

--commit makes two commits (the index must be clean): the renames alone, then the rewritten
includes and names, so that history follows each file across the move.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^(\s*#\s*include\s*")([^"]+)(".*)$')
C_ROOTS = ("daemon", "cli", "proto", "include", "tests", "bench")
TEXT_EXT = (".c", ".h", ".md", ".sh", ".py", ".proto", ".txt", ".1", ".8", ".conf", ".js", ".bt")
TEXT_NAMES = ("Makefile",)
SELF_DIR = "tests/restructure"
FOLDER_RE = re.compile(r"^(\.|[a-z][a-z0-9_]*)$")
RESERVED = ("lib",)  # daemon/lib/: the pure modules, not moved


def die(msg):
    sys.exit(f"move.py: {msg}")


def git(root, *args, capture=True):
    r = subprocess.run(["git", "-C", root, *args], capture_output=capture, text=True)
    if r.returncode != 0:
        die(f"git {' '.join(args)}: {(r.stderr or '').strip()}")
    return r.stdout if capture else ""


def read_map(path):
    """{stem: folder} from the map, in order; folders in order of first appearance."""
    stems, folders = {}, []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            folder, names = words[0], words[1:]
            where = f"{path}:{lineno}"
            if not FOLDER_RE.match(folder) or folder in RESERVED:
                die(f"{where}: '{folder}' is not a folder name (lower case, not {RESERVED})")
            if not names:
                die(f"{where}: folder {folder} names no file")
            if folder not in folders:
                folders.append(folder)
            for s in names:
                if not re.match(r"^[A-Za-z0-9_]+$", s):
                    die(f"{where}: '{s}' is not a file stem (daemon/STEM.c)")
                if s in stems:
                    die(f"{where}: {s} is already in folder {stems[s]}")
                stems[s] = folder
    return stems, folders


def tracked(root):
    return git(root, "ls-files", "-z").split("\0")[:-1]


def c_files(root):
    """Every .c and .h under C_ROOTS, tracked or not (a file being added counts too)."""
    out = []
    for top in C_ROOTS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            out += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files)
                    if f.endswith((".c", ".h"))]
    return out


def glue_files(root):
    """The .c and .h files of daemon/ and of its folders, lib/ aside: {basename: relative path}."""
    out = {}
    top = os.path.join(root, "daemon")
    for d in sorted(os.listdir(top)):
        full = os.path.join(top, d)
        if os.path.isfile(full) and d.endswith((".c", ".h")):
            out.setdefault(d, []).append(f"daemon/{d}")
        elif os.path.isdir(full) and d not in RESERVED:
            for f in sorted(os.listdir(full)):
                if f.endswith((".c", ".h")) and os.path.isfile(os.path.join(full, f)):
                    out.setdefault(f, []).append(f"daemon/{d}/{f}")
    return out


def dest(stem_folder, name):
    return f"daemon/{name}" if stem_folder == "." else f"daemon/{stem_folder}/{name}"


def plan_moves(root, stems):
    files = glue_files(root)
    moves, unplaced = [], []
    for name, paths in sorted(files.items()):
        stem = name[:-2]
        if len(paths) > 1:
            die(f"{name} is in more than one place: {', '.join(paths)}: keep one")
        src = paths[0]
        if stem not in stems:
            unplaced.append(src)
            continue
        dst = dest(stems[stem], name)
        if src != dst:
            moves.append((src, dst))
    return moves, unplaced


def header_folders(root, stems):
    """{header basename: its folder-qualified include} of the map's headers that exist."""
    out = {}
    for name, paths in glue_files(root).items():
        stem = name[:-2]
        if name.endswith(".h") and stem in stems and stems[stem] != ".":
            out[name] = f"{stems[stem]}/{name}"
    return out


def new_include(path, inc, headers, folders):
    """The folder-qualified include that replaces `inc` in file `path`, or None."""
    name = os.path.basename(inc)
    want = headers.get(name)
    if want is None or inc == want:
        return None
    in_glue = path.startswith("daemon/") and not path.startswith("daemon/lib/")
    if "/" not in inc:
        return want if in_glue else None
    norm = os.path.normpath(os.path.join(os.path.dirname(path), inc))
    if norm == f"daemon/{name}" or inc == f"daemon/{name}":
        return want
    head = os.path.dirname(inc)
    if head.startswith("daemon/"):
        head = head[len("daemon/"):]
    if head in folders:  # "os/loader.h" after the map moved loader to kernel/
        return want
    if os.path.dirname(norm).startswith("daemon/") and os.path.dirname(norm)[7:] in folders:
        return want
    return None


def rewrite_includes(root, files, headers, folders, dry):
    changed = {}
    for path in files:
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, errors="surrogateescape") as f:
            lines = f.readlines()
        n = 0
        for i, line in enumerate(lines):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            inc = new_include(path, m.group(2), headers, folders)
            if inc:
                lines[i] = f"{m.group(1)}{inc}{m.group(3)}\n" if line.endswith("\n") else \
                    f"{m.group(1)}{inc}{m.group(3)}"
                n += 1
        if n:
            changed[path] = n
            if not dry:
                with open(full, "w", errors="surrogateescape") as f:
                    f.writelines(lines)
    return changed


def rewrite_names(root, files, stems, dry):
    """daemon/STEM.[ch] (and daemon/STEM.[ch] as a glob) named in text -> daemon/FOLDER/..."""
    moved = {s: f for s, f in stems.items() if f != "."}
    if not moved:
        return {}
    rx = re.compile(r"(?<![\w/.-])daemon/(" + "|".join(sorted(moved, key=len, reverse=True))
                    + r")\.(c|h|\[ch\])(?![\w])")
    changed = {}
    for path in files:
        if path.startswith(SELF_DIR + "/"):
            continue
        if not (path.endswith(TEXT_EXT) or os.path.basename(path) in TEXT_NAMES):
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, errors="surrogateescape") as f:
            text = f.read()
        new, n = rx.subn(lambda m: f"daemon/{moved[m.group(1)]}/{m.group(1)}.{m.group(2)}", text)
        if n:
            changed[path] = n
            if not dry:
                with open(full, "w", errors="surrogateescape") as f:
                    f.write(new)
    return changed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", help="the repository (default: the one of the current directory)")
    ap.add_argument("--map", default=os.path.join(here, "map.txt"))
    ap.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    ap.add_argument("--commit", action="store_true", help="commit the moves, then the rewrites")
    args = ap.parse_args()
    root = args.root or git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    root = os.path.abspath(root)
    if not os.path.isdir(os.path.join(root, "daemon")):
        die(f"{root} has no daemon/: not a kprof tree")
    stems, folders = read_map(args.map)
    folders = [f for f in folders if f != "."]
    if args.commit and not args.dry_run:
        if git(root, "diff", "--cached", "--name-only").strip():
            die("--commit: the index has staged changes; commit or reset them first")

    moves, unplaced = plan_moves(root, stems)
    for src, dst in moves:
        print(f"move {src} -> {dst}")
        if not args.dry_run:
            os.makedirs(os.path.join(root, os.path.dirname(dst)), exist_ok=True)
            if git(root, "ls-files", "--", src).strip():
                git(root, "mv", src, dst)
            else:  # not added yet: moved all the same, for its author to add
                os.rename(os.path.join(root, src), os.path.join(root, dst))
    if args.dry_run and moves:
        # What the rewrites would do is only known after the moves.
        print(f"{len(moves)} files would move; run without --dry-run for the rewrites")
    if args.commit and not args.dry_run and moves:
        git(root, "commit", "-q", "-m", "daemon: files into subsystem folders (git mv only)",
            "-m", f"By tests/restructure/move.py and map.txt: {len(moves)} files, content "
            "unchanged. The includes follow in the next commit.", capture=False)

    files = tracked(root)
    headers = header_folders(root, stems)
    incs = {} if args.dry_run and moves else rewrite_includes(root, c_files(root), headers,
                                                              folders, args.dry_run)
    names = {} if args.dry_run and moves else rewrite_names(root, files, stems, args.dry_run)
    for path in sorted(incs):
        print(f"includes {path}: {incs[path]}")
    for path in sorted(names):
        print(f"names {path}: {names[path]}")
    touched = sorted(set(incs) | set(names))
    if args.commit and not args.dry_run and touched:
        git(root, "add", "--", *touched)
        git(root, "commit", "-q", "-m", "daemon: folder-qualified includes after the move",
            "-m", "By tests/restructure/move.py: #include \"kernel/loader.h\" and daemon/FOLDER/"
            "file names in docs and comments.", capture=False)

    print(f"move.py: {len(moves)} moved, {sum(incs.values())} includes in {len(incs)} files, "
          f"{sum(names.values())} names in {len(names)} files"
          + (" (dry run)" if args.dry_run else ""))
    if unplaced:
        print(f"move.py: {len(unplaced)} file(s) of daemon/ not in {args.map}: add each stem to "
              "a folder's line and run again:")
        for p in unplaced:
            print(f"  unplaced {p}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
