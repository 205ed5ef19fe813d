# kpw_frames.py FILE...: the window frames (KPWIN001, payload length, CRC) each window file
# holds, one after the other (a batch file holds several), counted up to the first frame that
# is not whole; prints the total.
# kpw_frames.py --split FILE...: each batch file becomes the files of one window each that
# kprofd wrote before batches (w-SEQ-PID.kpw, one frame, SEQ and PID read from the frame's
# kprof.SavedProfile: window_seq = 125, target = 2 { pid = 1 }), beside it; the batch is
# removed. Prints how many were written. As an upgrade finds them.
import os, struct, sys


def frames(b):
    off = 0
    while off + 16 <= len(b) and b[off:off + 8] == b"KPWIN001":
        n = struct.unpack_from("<I", b, off + 8)[0]
        if off + 16 + n > len(b):
            break
        yield b[off:off + 16 + n]
        off += 16 + n


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(number, value) of each varint or length-delimited field of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        wt = key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield key >> 3, v


if sys.argv[1:2] == ["--split"]:
    total = 0
    for path in sys.argv[2:]:
        for fr in frames(open(path, "rb").read()):
            top = dict(fields(fr[16:]))
            pid = dict(fields(top[2]))[1]
            name = "w-%016x-%u.kpw" % (top[125], pid)
            with open(os.path.join(os.path.dirname(path), name), "wb") as f:
                f.write(fr)
            total += 1
        os.remove(path)
    print(total)
else:
    print(sum(1 for p in sys.argv[1:] for _ in frames(open(p, "rb").read())))
