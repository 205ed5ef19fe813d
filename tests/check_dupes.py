#!/usr/bin/env python3
"""check_dupes.py: no new code repeats a block of 6 or more lines of kprof's C sources.

  python3 tests/check_dupes.py [--update] [--min-lines N] [--show]

The sources are the .c and .h files under daemon/, cli/, proto/, include/ and bpf/ (the tests
and benchmarks are left out: fixtures repeat on purpose). Blank lines,
comment lines, #include lines and lines of punctuation alone ("{", "} else {", ");") are passed
over; the others count by their shape (names, numbers and strings as placeholders, white space
folded). A run of N counted lines (N = 6) whose shape stands in two places (two files, or two
places of one file that do not overlap) with at least half of its names the same is a repeated
block (a copy, perhaps with some names changed); a shape in more than 8 places is an idiom and
does not count. Each pair of files gets the number of runs they share.

tests/dupes.txt is the floor: the pairs that shared runs when it was written, with their counts
(the copies that existed before this check). A pair over its floor, or a pair not in it, is a
FAIL that names the places of one of its new runs: define the code once (a function, a table)
and call it. A pair under its floor is a note: --update writes the lower counts, so the floor
only goes down. Files are named by their base names, so a file that moves to another folder
keeps its floor.

One line per finding, "PASS: check" or "FAIL: check: why" (the format of the integration tests;
tests/integration/test_structure.sh counts them via tests/check_dupes.sh); exit status 1 on a
FAIL, 2 on a usage error. No git, no tool outside the repository: CI runs it on a clean clone.
"""
import argparse
import hashlib
import os
import re
import sys

ROOTS = ("daemon", "cli", "proto", "include", "bpf")
MAX_PLACES = 8  # a run in more places is counted among its first 8 only
TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z_]\w*|\d[\w.]*|->|\S')
KEYWORDS = set("""auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool true false NULL _Bool size_t ssize_t uint8_t
uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t""".split())
SAME_NAMES = 0.5  # a shape shared with at least this share of its names the same is a copy
SKIP_RE = re.compile(r"^(?:#\s*include\b|//|/\*|\*|[{}()\[\];,\s]*$|\}\s*else\s*\{$|else$)")


def sources(root):
    out = []
    for top in ROOTS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            out += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files)
                    if f.endswith((".c", ".h"))]
    return out


def counted_lines(path):
    """[(line number, shape, names)] of the lines that count: the shape is the line with its
    names, numbers and strings as placeholders (keywords and punctuation kept); names are the
    identifiers in order, to tell a copy (mostly the same names) from an idiom."""
    out = []
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            t = " ".join(line.split())
            if not t or SKIP_RE.match(t):
                continue
            shape, names = [], []
            toks = TOKEN_RE.findall(t)
            for i, tok in enumerate(toks):
                if tok in ("->", ".") and i + 1 < len(toks) and toks[i + 1][0].isalpha():
                    if shape and shape[-1] == "I":  # a->b, a.b: the field alone, so that
                        shape.pop()  # m->fv[i].name and fv[i].name are one shape
                        names.pop()
                    continue
                if tok[0] in "\"'":
                    shape.append("S")
                elif tok[0].isdigit():
                    shape.append("N")
                elif (tok[0].isalpha() or tok[0] == "_") and tok not in KEYWORDS:
                    shape.append("I")
                    names.append(tok)
                else:
                    shape.append(tok)
            out.append((n, " ".join(shape), names))
    return out


def runs(files, min_lines):
    """{hash: [(file, first line, last line)]} of every run of min_lines counted lines."""
    where = {}
    for path, lines in files.items():
        for i in range(len(lines) - min_lines + 1):
            block = lines[i:i + min_lines]
            h = hashlib.blake2b("\n".join(t for _, t, _ in block).encode(),
                                digest_size=12).digest()
            names = [x for _, _, ns in block for x in ns]
            where.setdefault(h, []).append((path, block[0][0], block[-1][0], names))
    return where


def same_names(p, q):
    """The share of name positions where the two runs (of one shape) use the same name."""
    if not p[3]:
        return 1.0
    return sum(a == b for a, b in zip(p[3], q[3])) / len(p[3])


def pairs(where):
    """{(a, b): [places of each shared run]} by base name, a <= b."""
    out = {}
    for places in where.values():
        if len(places) < 2 or len(places) > MAX_PLACES:
            continue  # alone, or an idiom (a shape in more than MAX_PLACES places)
        for i in range(len(places)):
            for j in range(i + 1, len(places)):
                p, q = places[i], places[j]
                if p[0] == q[0] and p[1] <= q[2] and q[1] <= p[2]:
                    continue  # overlapping runs of one file: a repeated line, not a copy
                if same_names(p, q) < SAME_NAMES:
                    continue  # one shape, other names: an idiom, not a copy
                a, b = sorted((os.path.basename(p[0]), os.path.basename(q[0])))
                out.setdefault((a, b), []).append((p, q))
    return out


def read_floor(path):
    floor = {}
    if not os.path.exists(path):
        return floor
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) != 3 or not words[2].isdigit():
                sys.exit(f"check_dupes.py: {path}:{lineno}: expected 'FILE FILE COUNT'")
            floor[(words[0], words[1])] = int(words[2])
    return floor


def write_floor(path, counts, min_lines):
    with open(path, "w") as f:
        f.write(f"""# tests/dupes.txt: the floor of tests/check_dupes.py: pairs of files (base names) and how many
# runs of {min_lines} counted lines they share. New code may not raise a count or add a pair; a
# count only goes down (python3 tests/check_dupes.py --update, after removing a copy).
""")
        for (a, b), n in sorted(counts.items()):
            f.write(f"{a} {b} {n}\n")


def merged(found):
    """The first shared block of a pair as two line ranges, its runs merged."""
    (p, q), rest = found[0], found[1:]
    pa, pe, qa, qe = p[1], p[2], q[1], q[2]
    for r, s in rest:
        if r[0] == p[0] and s[0] == q[0] and pa <= r[1] <= pe + 1 and qa <= s[1] <= qe + 1:
            pe, qe = max(pe, r[2]), max(qe, s[2])
    return f"{p[0]}:{pa}-{pe} ~ {q[0]}:{qa}-{qe}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true",
                    help="lower the floor to the current counts (never raises one)")
    ap.add_argument("--init", action="store_true", help=argparse.SUPPRESS)  # first floor
    ap.add_argument("--min-lines", type=int, default=6)
    ap.add_argument("--floor", default=os.path.join(here, "dupes.txt"))
    ap.add_argument("--show", action="store_true", help="list every pair's first shared block")
    args = ap.parse_args()
    if args.min_lines < 2:
        print("check_dupes.py: --min-lines is 2 or more", file=sys.stderr)
        return 2
    os.chdir(root)
    files = {p: counted_lines(p) for p in sources(root)}
    found = pairs(runs(files, args.min_lines))
    counts = {k: len(v) for k, v in found.items()}
    floor = read_floor(args.floor)

    if args.init:
        write_floor(args.floor, counts, args.min_lines)
        print(f"check_dupes.py: wrote {args.floor}: {len(counts)} pairs")
        return 0
    over = sorted(k for k in counts if counts[k] > floor.get(k, 0))
    under = sorted(k for k in floor if counts.get(k, 0) < floor[k])
    if args.show:
        for k in sorted(found):
            print(f"{counts[k]:5d} {merged(found[k])}")
    for k in over:
        was = floor.get(k, 0)
        print(f"FAIL: repeated blocks: {k[0]} and {k[1]} share {counts[k]} runs of "
              f"{args.min_lines} lines (floor {was}), e.g. {merged(found[k][was:] or found[k])}: "
              "define it once and call it (or, for a true exception, raise tests/dupes.txt)")
    if under:
        print(f"note: {len(under)} pair(s) share fewer runs than tests/dupes.txt says "
              "(a copy was removed): python3 tests/check_dupes.py --update lowers the floor")
    if args.update:
        new = {k: min(v, counts.get(k, 0)) for k, v in floor.items() if counts.get(k, 0)}
        write_floor(args.floor, new, args.min_lines)
        print(f"check_dupes.py: floor lowered for {len(under)} pair(s)")
    if not over:
        total = sum(counts.values())
        print(f"PASS: repeated blocks: no pair of files shares more runs of {args.min_lines} "
              f"lines than tests/dupes.txt allows ({len(files)} files, {len(counts)} pairs, "
              f"{total} runs)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
