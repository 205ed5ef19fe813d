# pprof_refs.py FILE: what a gzip'd pprof holds, for tests: one line "SAMPLES FUNCTIONS UNUSED",
# then one line "pid=P SAMPLES" per process label: the samples (first value) in all and per
# pid label, the Function messages, and how many of them no sampled location names (a Function
# is named by a Line of a Location that some Sample lists).
import gzip, sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        elif k & 7 == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif k & 7 == 1:
            v, i = b[i:i + 8], i + 8
        else:
            v, i = b[i:i + 4], i + 4
        yield k >> 3, v


def ints(v):  # a repeated integer field: packed (bytes) or one value
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


b = gzip.decompress(open(sys.argv[1], "rb").read())
strings, samples, locs, funcs = [], [], {}, []
for f, v in fields(b):
    if f == 6:
        strings.append(v.decode())
    elif f == 2:
        samples.append(v)
    elif f == 4:
        lid, fids = 0, []
        for g, w in fields(v):
            if g == 1:
                lid = w
            elif g == 4:
                fids += [x for h, x in fields(w) if h == 1]
        locs[lid] = fids
    elif f == 5:
        funcs.append(dict(fields(v)).get(1, 0))
total, per_pid, used = 0, {}, set()
for s in samples:
    count, pid = 0, None
    for g, w in fields(s):
        if g == 1:
            for lid in ints(w):
                used.update(locs.get(lid, []))
        elif g == 2:
            count = ints(w)[0]
        elif g == 3:
            lab = dict(fields(w))
            if lab.get(1) is not None and strings[lab[1]] == "pid":
                pid = strings[lab[2]] if 2 in lab else str(lab.get(3, 0))
    total += count
    per_pid[pid] = per_pid.get(pid, 0) + count
print(total, len(funcs), sum(1 for f in funcs if f not in used))
for pid, n in sorted(per_pid.items(), key=lambda kv: str(kv[0])):
    print("pid=%s %d" % (pid, n))
