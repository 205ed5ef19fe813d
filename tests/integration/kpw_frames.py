# kpw_frames.py FILE...: the window frames (KPWIN001, payload length, CRC) each window file
# holds, one after the other (a batch file holds several), counted up to the first frame that
# is not whole; prints the total.
import struct, sys

total = 0
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    off = 0
    while off + 16 <= len(b) and b[off:off + 8] == b"KPWIN001":
        n = struct.unpack_from("<I", b, off + 8)[0]
        if off + 16 + n > len(b):
            break
        off += 16 + n
        total += 1
print(total)
