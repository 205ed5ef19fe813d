#!/usr/bin/env bash
# bench/lines.sh: the cost of source lines in an export (issue 32), on a native program of 1,000
# functions (noinline, each a loop; cc -O2 -g, PIE) profiled SECONDS (default 8) at 999 Hz, then
# exported REPS times (default 11) each way from the live kprofd: --no-lines; with lines, the
# first time (nothing cached: kprofd's kprof-lines helpers resolve every leaf address and call
# site) and then (from kprofd's cache). Prints each export's median and minimum wall time, what
# the resolver said, the cache's size, and the helper's peak memory on the same addresses
# (/usr/bin/time). Needs root, cc and /usr/bin/time.
# Usage: BUILD=build bash bench/lines.sh [SECONDS] [REPS]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BUILD=${BUILD:-build}
SECS=${1:-8}
REPS=${2:-11}
need_root
need_bins "$BUILD/kprofd" "$BUILD/kprofctl" "$BUILD/kprof-lines"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
bench_start lines
T=$TDIR
kprofd_start "$BUILD/kprofd" "$BUILD/kprofctl" "$T/s" "$T/state" "$T/log"
ctl() { "$BUILD/kprofctl" -s "$T/s" "$@"; }

# 1,000 functions, each a loop of its own length, called round-robin.
python3 - "$T/many.c" <<'PY'
import sys
n = 1000
with open(sys.argv[1], "w") as f:
    f.write("#include <stdint.h>\n#include <stdlib.h>\nvolatile uint64_t sink;\n")
    for i in range(n):
        f.write(f"__attribute__((noinline)) static uint64_t f{i}(uint64_t x)\n{{\n"
                f"\tfor (int i = 0; i < {200 + i % 97}; i++)\n"
                f"\t\tx = x * 6364136223846793005ULL + {i} + i;\n\treturn x;\n}}\n")
    f.write("static uint64_t (*const fs[])(uint64_t) = {" + ", ".join(f"f{i}" for i in range(n)) + "};\n")
    f.write("int main(int argc, char **argv)\n{\n\tuint64_t x = 1;\n\tlong s = argc > 1 ? atol(argv[1]) : 10;\n"
            "\tfor (long r = 0; r < s * 4000; r++)\n\t\tfor (int i = 0; i < %d; i++)\n\t\t\tx = fs[i](x);\n"
            "\tsink = x;\n\treturn 0;\n}\n" % n)
PY
cc -O2 -g -fno-omit-frame-pointer -o "$T/many" "$T/many.c" || die "cc failed"
"$T/many" $((SECS + 600)) &
P=$!
BENCH_PIDS+=("$P")
ctl attach "$P" --freq 999 >/dev/null || die "attach failed"
sleep "$SECS"
ctl detach "$P" >/dev/null

# run NAME ARGS...: REPS exports, their wall times in ms into $T/NAME.ms; the last file kept.
run() {
	local name=$1
	shift
	for ((i = 0; i < REPS; i++)); do
		python3 -c "import subprocess,sys,time; t=time.monotonic(); subprocess.run(sys.argv[1:], check=True); print((time.monotonic()-t)*1000)" \
			"$BUILD/kprofctl" -s "$T/s" export "$P" -o "$T/$name.pb.gz" "$@" >>"$T/$name.ms"
	done
}
python3 -c "import subprocess,sys,time; t=time.monotonic(); subprocess.run(sys.argv[1:], check=True); print((time.monotonic()-t)*1000)" \
	"$BUILD/kprofctl" -s "$T/s" export "$P" -o "$T/cold.pb.gz" >"$T/cold.ms"
run nolines --no-lines
run cached
stats() { python3 -c "import statistics,sys; v=[float(l) for l in open(sys.argv[1])]; print('median %.1f ms, min %.1f ms (%d runs)' % (statistics.median(v), min(v), len(v)))" "$1"; }
comment() { go tool pprof -raw "$1" 2>/dev/null | grep -o 'kprof lines: [0-9][^"]*' | head -1; }
echo "export --no-lines:            $(stats "$T/nolines.ms")"
echo "export, lines, nothing cached: $(printf '%.1f ms' "$(cat "$T/cold.ms")") ($(comment "$T/cold.pb.gz"))"
echo "export, lines, cached:        $(stats "$T/cached.ms") ($(comment "$T/cached.pb.gz"))"
ctl status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print('lines cache: %d entries, %.1f KiB of %d MiB; %d helpers started, %d addresses resolved' % (d['lines_cache_entries'], d['lines_cache_bytes'] / 1024, d['lines_cache_max_bytes'] >> 20, d['lines_helpers_started'], d['lines_answers']))"
# The helper alone on the program's own addresses (every function's first byte and middle).
nm "$T/many" | python3 -c "import re,sys
for l in sys.stdin:
    m = re.match(r'([0-9a-f]+) [tT] f\d+$', l.strip())
    if m: a = int(m.group(1), 16); print(hex(a)); print(hex(a + 8))" >"$T/addrs"
/usr/bin/time -f "%M %U %S" -o "$T/time" "$BUILD/kprof-lines" 3<"$T/many" <"$T/addrs" >"$T/answers"
read -r rss user sys <"$T/time"
echo "kprof-lines alone, $(wc -l <"$T/addrs") addresses: max RSS $((rss / 1024)) MiB, CPU ${user}s user ${sys}s sys"
