#!/usr/bin/env python3
"""make_seeds.py: (re)generate the seed corpora in tests/fuzz/corpus/.

Run once from the repository root (python3 tests/fuzz/make_seeds.py); the seeds are committed,
this script is how they were made. It needs clang (the ELF seeds and the minijit fixture, whose
JIT code and perf maps become seeds) and nothing else: protobuf messages are encoded by hand
below, from proto/kprof.proto. Existing seed files of the same name are overwritten; fuzzing runs
never write here (tests/fuzz/run.sh fuzzes a copy).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
MAX_SEED = 20 * 1024


def put(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        sys.exit(f"seed {target}/{name} is {len(data)} bytes, above {MAX_SEED}")
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


# ---- protobuf, by hand (proto3 wire format) ----

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(num, v):
    return varint(num << 3) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def f_packed(num, values):
    return f_bytes(num, b"".join(varint(v) for v in values))


def f_double(num, x):
    return varint(num << 3 | 1) + struct.pack("<d", x)


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def request(case, body=b""):
    return f_bytes(case, body)


def target_msg(pid=4242, comm="minijit", state=2):
    return (f_varint(1, pid) + f_varint(2, 1000) + f_bytes(3, comm) + f_varint(4, state) +
            f_varint(5, 99) + f_varint(6, 1234) + f_varint(7, 1700000000000000000) +
            f_varint(8, 1700000010000000000) + f_varint(10, 0) + f_varint(11, 5) +
            f_varint(12, 1) + f_bytes(13, f"/tmp/perf-{pid}.map") + f_varint(14, 3))


def saved_profile(nfuncs=5, stacks=((0, 1, 2), (0, 1, 3), (0, 4)), fmt=1, kind=None):
    funcs = b""
    names = ["mj_main", "mj_hot", "mj_warm", "mj_cold", "mj_leaf", "main", "__libc_start_call_main"]
    for i in range(nfuncs):
        k = kind if kind is not None else (2 if i < 5 else 1)
        funcs += f_bytes(3, f_bytes(1, names[i % len(names)]) +
                         f_bytes(2, "[jit]" if k == 2 else "/usr/bin/minijit") +
                         f_varint(3, 0x7F0000001000 + 0x100 * i) + f_varint(4, k))
    st = b"".join(f_bytes(4, f_packed(1, ids) + f_varint(2, 10 + len(ids)) + f_varint(3, 4242 + k % 2))
                  for k, ids in enumerate(stacks))
    return f_varint(1, fmt) + f_bytes(2, target_msg()) + funcs + st


def drift_reply(overlap=0.31):
    key = f_bytes(1, "block +0x40") + f_double(2, 0.8) + f_double(3, 0.1)
    func = (f_bytes(1, "mj_phase") + f_bytes(2, "[jit]") + f_varint(3, 0x7F0000001000) +
            f_bytes(4, "watching") + f_varint(5, 3000) + f_varint(6, 256) + f_varint(7, 256) +
            f_double(8, 0.9) + f_double(9, 0.8) + f_varint(10, 1) + f_varint(12, 7) +
            f_bytes(13, key) + f_bytes(13, key))
    event = (f_varint(1, 1) + f_bytes(2, "mj_phase") + f_varint(3, 123456789) +
             f_varint(4, 1700000000000000000) + f_double(5, overlap) + f_varint(6, 256) +
             f_varint(7, 256) + f_varint(8, 2732) + f_bytes(9, "block +0x80") +
             f_double(10, 0.1) + f_double(11, 0.7) + f_bytes(12, "block +0x40") +
             f_double(13, 0.8) + f_double(14, 0.1))
    return (f_varint(2, 256) + f_varint(3, 128) + f_varint(4, 1280) + f_double(5, 0.5) +
            f_bytes(6, func) + f_bytes(7, event) + f_varint(8, 6000) + f_varint(11, 1) +
            f_varint(344, 2))


def proto_seeds():
    reqs = {
        "attach": request(1, f_varint(1, 4242) + f_varint(2, 999) + f_varint(3, 10)),
        "detach": request(2, f_varint(1, 4242)),
        "list_all": request(3, f_varint(1, 1)),
        "status": request(4),
        "report_top": request(5, f_varint(1, 4242) + f_varint(2, 20)),
        "folded": request(6, f_varint(1, 4242)),
        "export": request(7, f_varint(1, 4242)),
        "empty": b"",
        "unknown_case": request(99, f_varint(1, 1)),
    }
    for name, payload in reqs.items():
        put("fuzz_frame", "req_" + name, frame(payload))
    put("fuzz_frame", "session", b"".join(frame(p) for p in reqs.values()))
    put("fuzz_frame", "oversized_header", struct.pack(">I", (1 << 20) + 1) + b"\x22\x00")
    put("fuzz_frame", "torn_payload", frame(reqs["attach"])[:-2])
    # Field number 0 in a non-minimal tag: protobuf-c keeps it as an unknown field (fuzz_pb.h).
    put("fuzz_frame", "field0_nonminimal", frame(request(1, b"\x82\x00\x00" + f_varint(2, 999))))
    sp = saved_profile()
    put("fuzz_frame", "saved_profile", frame(sp))
    reply_report = (f_varint(1, 0) + f_bytes(13, f_bytes(1, target_msg(state=1)) + f_varint(2, 100) +
                    f_bytes(3, f_bytes(1, "mj_hot") + f_bytes(2, "[jit]") + f_varint(3, 2) +
                            f_varint(4, 60) + f_varint(5, 60) + f_varint(6, 0x7F0000001100)) +
                    f_varint(4, 5)))
    reply_err = f_varint(1, (1 << 64) - 3) + f_bytes(2, "attach 1: no such process")
    reply_status = f_bytes(12, f_bytes(1, "0.1.0") + f_varint(2, 1) + f_double(7, 98.5) +
                           f_packed(9, [0, 1, 2]) + f_packed(12, [99, 999]))
    put("fuzz_frame", "replies", frame(reply_report) + frame(reply_err) + frame(reply_status))

    put("fuzz_saved", "minijit", sp)
    put("fuzz_saved", "no_stacks", saved_profile(stacks=()))
    put("fuzz_saved", "deep_stack", saved_profile(nfuncs=7, stacks=(tuple(i % 7 for i in range(254)),)))
    put("fuzz_saved", "bad_id", saved_profile(stacks=((0, 9),)))
    put("fuzz_saved", "bad_kind", saved_profile(kind=7))
    put("fuzz_saved", "format2", saved_profile(fmt=2))
    put("fuzz_saved", "field0_nonminimal", saved_profile() + b"\x80\x00\x05")
    put("fuzz_saved", "recursive", saved_profile(stacks=((0, 1, 1, 1, 2), (0,), ())))
    # The drift result kept with a profile (SavedProfile.drift = 340, a DriftReply), and one
    # with an overlap that is no number (refused).
    put("fuzz_saved", "drift", sp + f_bytes(340, drift_reply()))
    put("fuzz_saved", "drift_nan", sp + f_bytes(340, drift_reply(overlap=float("nan"))))


# ---- text seeds ----

PERFMAP_HANDMADE = {
    "node": "7f3c2a0041c0 1e8 LazyCompile:~foo /app/hot.js:12:3\n"
            "7f3c2a004400 88 Builtin:ArgumentsAdaptorTrampoline\n"
            "7f3c2a004500 2c0 LazyCompile:*bar /app/hot.js:40:10\n"
            "7f3c2a0041c0 40 Function:~foo (recompiled)\n",
    "prefixes": "0x1000 0x10 a\n0X2000 0XFF b\nABCDEF00 aB c\n0xDeadBeef0 0Xf d\n"
                "ffffffffffffff00 ff top\n0000000000003000 0000000000000001 e\n",
    "blanks_crlf": "  1000\t\t20   name with  spaces  \r\n2000 10 java.lang.String::hashCode\r\n"
                   "3000 10 trailing blanks   \n",
    "bad_lines": "10g0 10 x\n1000 1g x\n0x 10 x\n1000 0 x\n-1000 10 x\n1000 10\n\n"
                 "00000000000001000 10 x\nffffffffffffffff 2 wrap\n1000 10 ok\n",
    "overlaps": "1000 1000 outer\n1800 100 inner\n1000 1000 outer_again\n1400 800 tail\n",
    "torn": "1000 10 complete\n2000 10 torn_without_newl",
}

CONFIGS = {
    "example": None,  # systemd/kprofd.conf
    "minimal": "[daemon]\nfrequency = 199\n",
    "all_keys": "[daemon]\nsocket = /run/kprofd/test.sock\nstate_dir =\nfrequency = 4999\n"
                "ringbuf_size = 67108864\nringbuf_max_mb = 64\nsampling = cpus\ndrain_ms = 1\n"
                "[limits]\nmax_targets = 1\nmax_kept = 0\n"
                "kept_max_age = 0\nmax_clients = 10000\nclient_timeout = 86400\n"
                "max_threads = 65536\nmax_thread_fds = 1048576\n"
                "[access]\nread_group = kprof\n",
    "errors": "[daemon]\nfrequency = 5000\n",
    "unknown": "[daemon]\nfrobnicate = 1\n",
    "syntax": "[daemon\nfrequency 99\n",
    "comments": "; comment\n# also a comment\n\n[limits] ; inline\nmax_clients = 8 ; eight\n",
    "set_key": "daemon.frequency\x00" "123\x00",
    "set_string": "access.read_group\x00" "wheel\x00",
}

# Small functions in AT&T syntax, assembled with clang: shapes the minijit code lacks.
CODE_ASM = {
    "diamond": "test %rdi,%rdi; je 1f; mov $1,%eax; jmp 2f; 1: mov $2,%eax; 2: ret",
    "loop": "xor %eax,%eax; 1: add %edi,%eax; dec %edi; jnz 1b; ret",
    "nested_loops": "xor %eax,%eax; 1: mov %esi,%ecx; 2: add %ecx,%eax; dec %ecx; jnz 2b;"
                    " dec %edi; jnz 1b; ret",
    "jumptable": "cmp $3,%rdi; ja 1f; jmp *0x1000(,%rdi,8); 1: xor %eax,%eax; ret",
    "call_tail": "push %rbp; call .+0x100; test %eax,%eax; jne .+0x200; pop %rbp; jmp .+0x300",
    "traps": "test %edi,%edi; je 1f; ud2; 1: int3; hlt",
    "irreducible": "test %edi,%edi; je 2f; 1: inc %edi; cmp $9,%edi; jl 2f; ret;"
                   " 2: inc %esi; cmp $5,%esi; jl 1b; ret",
    "loopnz_jrcxz": "mov %rdi,%rcx; 1: jrcxz 2f; loopnz 1b; 2: ret",
}


def asm_seeds(tmp):
    for name, text in CODE_ASM.items():
        src = os.path.join(tmp, name + ".s")
        obj = os.path.join(tmp, name + ".obj")
        raw = os.path.join(tmp, name + ".bin")
        with open(src, "w") as f:
            f.write(".text\n" + text.replace("; ", "\n") + "\n")
        run("clang", "-c", "-x", "assembler", "-o", obj, src)
        run("llvm-objcopy", "-O", "binary", "--only-section=.text", obj, raw)
        with open(raw, "rb") as f:
            put("fuzz_cfg", name, f.read())


def minijit_seeds(tmp):
    exe = os.path.join(tmp, "minijit")
    run("clang", "-O2", "-fno-omit-frame-pointer", "-o", exe,
        os.path.join(ROOT, "tests", "fixtures", "minijit", "minijit.c"))
    for style in ("plain", "0x"):
        # setarch -R: no ASLR, so the addresses in the seeds are the same from run to run.
        p = subprocess.run(["setarch", "-R", exe, "--print-code", "--rounds", "1", "--cleanup",
                            "--perf-map-style=" + style], check=True, capture_output=True,
                           text=True)
        if style == "plain":
            code_dump = p.stdout
        # The map is removed at exit (--cleanup): rebuild it from the dump's function lines.
        funcs = re.findall(r"^code (\S+) 0x([0-9a-f]+) size (\d+)", p.stdout, re.M)
        if style == "plain":
            text = "".join(f"{a} {int(s):x} {n}\n" for n, a, s in funcs)
        else:
            text = "".join(f"0x{a.upper()} 0x{int(s):X} {n}\n" for n, a, s in funcs)
        put("fuzz_perfmap", "minijit_" + style.replace("0x", "hex"), text)

    # Code bytes per function: the blocks' hex lines in order, from the dump.
    cur, out = None, {}
    for line in code_dump.splitlines():
        m = re.match(r"^code (\S+) 0x([0-9a-f]+) size (\d+)", line)
        if m:
            cur = m.group(1)
            out[cur] = bytearray()
        elif cur and re.match(r"^    ([0-9a-f]{2} ?)+$", line):
            out[cur] += bytes.fromhex(line.strip())
    for name, code in out.items():
        put("fuzz_cfg", name, bytes(code))


ELF_SRC = r"""
__attribute__((noinline)) int helper(int x) { return x * 3 + 1; }
__attribute__((noinline)) long compute(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i & 1) ? helper((int)i) : (int)(i >> 1);
	return s;
}
void _start(void)
{
	long r = compute(10);
	__asm__ volatile("syscall" : : "a"(60), "D"(r & 1) : "rcx", "r11", "memory");
	__builtin_unreachable();
}
"""

LIB_SRC = r"""
__attribute__((noinline)) int lib_add(int a, int b) { return a + b; }
int lib_twice(int a) { return lib_add(a, a); }
static int lib_hidden(int a) { return a * 7; }
int (*lib_ptr)(int) = lib_hidden;
"""


# Imports through the PLT (two named, one IFUNC: an IRELATIVE relocation), for NAME@plt.
PLT_SRC = r"""
extern int ext_a(int);
extern int ext_b(int);
static int c_impl(int a) { return a + 3; }
static void *resolve_c(void) { return (void *)c_impl; }
int ifunc_c(int) __attribute__((ifunc("resolve_c")));
int call_all(int a) { return ext_a(a) + ext_b(a) + ifunc_c(a); }
"""


def debug_seeds(tmp):
    """A stripped library with a build id, a PLT and a .gnu_debuglink, and its debug file (a
    .symtab, section data NOBITS), as kprofd pairs them."""
    src = os.path.join(tmp, "p.c")
    out = os.path.join(tmp, "plt_lib")
    with open(src, "w") as f:
        f.write(PLT_SRC)
    run("clang", "-O2", "-shared", "-fPIC", "-nostdlib", "-Wl,--build-id=sha1", "-Wl,-z,lazy",
        "-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=4096", "-o", out, src)
    run("llvm-objcopy", "--remove-section=.comment", out)
    run("llvm-objcopy", "--only-keep-debug", out, out + ".debug")
    run("llvm-strip", "--strip-all", out)
    run("llvm-objcopy", "--add-gnu-debuglink=" + out + ".debug", out)
    for name, path in (("plt_lib_stripped_debuglink", out), ("plt_lib_debug", out + ".debug")):
        with open(path, "rb") as f:
            put("fuzz_elfsym", name, f.read())


def elf_seeds(tmp):
    src = os.path.join(tmp, "t.c")
    lib = os.path.join(tmp, "l.c")
    with open(src, "w") as f:
        f.write(ELF_SRC)
    with open(lib, "w") as f:
        f.write(LIB_SRC)
    small = ["-Wl,--build-id=none", "-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=4096"]
    builds = {
        "static_exe": ["clang", "-O2", "-static", "-nostdlib", "-fno-pie", "-no-pie", *small,
                       "-o", "{out}", src],
        "shared_lib": ["clang", "-O2", "-shared", "-fPIC", "-nostdlib", *small, "-o", "{out}", lib],
        "i386_rel": ["clang", "--target=i386-linux-gnu", "-O2", "-c", "-o", "{out}", lib],
        "ppc64be_rel": ["clang", "--target=powerpc64-linux-gnu", "-O2", "-c", "-o", "{out}", lib],
    }
    for name, cmd in builds.items():
        out = os.path.join(tmp, name)
        run(*[c.replace("{out}", out) for c in cmd])
        run("llvm-objcopy", "--remove-section=.comment", "--remove-section=.note.GNU-stack", out)
        with open(out, "rb") as f:
            data = f.read()
        put("fuzz_elfsym", name, data)
        if name == "shared_lib":
            run("llvm-strip", "--strip-all", "-o", out + ".s", out)
            with open(out + ".s", "rb") as f:
                put("fuzz_elfsym", "shared_lib_stripped", f.read())
        if name == "static_exe":
            put("fuzz_elfsym", "static_exe_headers_only", data[:64 + 56 * 2])


# ---- jitdump files (perf's jitdump-specification.txt), written field by field ----

class JitDump:
    def __init__(self, big=False):
        self.e = ">" if big else "<"
        self.b = bytearray()

    def header(self, version=1, total=40, flags=0, pid=4242, extra=b""):
        self.b += struct.pack(self.e + "IIIIIIQQ", 0x4A695444, version, total, 62, 0, pid,
                              1000, flags) + extra
        return self

    def record(self, rid, ts, payload, size=None):
        size = 16 + len(payload) if size is None else size
        self.b += struct.pack(self.e + "IIQ", rid, size, ts) + payload
        return self

    def load(self, ts, addr, name, code, index, size=None):
        size = len(code) if size is None else size
        return self.record(0, ts, struct.pack(self.e + "IIQQQQ", 4242, 4243, addr, addr, size,
                                              index) + name.encode() + b"\0" + code)

    def move(self, ts, old, new, size, index):
        return self.record(1, ts, struct.pack(self.e + "IIQQQQQ", 4242, 4243, new, old, new, size,
                                              index))

    def debug(self, ts, addr, entries, nr=None):
        nr = len(entries) if nr is None else nr
        p = struct.pack(self.e + "QQ", addr, nr)
        for a, line, disc, f in entries:
            p += struct.pack(self.e + "QII", a, line, disc) + f + b"\0"
        p += b"\0" * (-(16 + len(p)) % 8)
        return self.record(2, ts, p)

    def close(self, ts):
        return self.record(3, ts, b"")

    def unwinding(self, ts, data, hdr_size):
        return self.record(4, ts, struct.pack(self.e + "QQQ", len(data), hdr_size, len(data)) +
                           data)


# x86-64 function bodies: push rbp; mov rbp,rsp; ...; pop rbp; ret
JIT_CODE = [bytes.fromhex("554889e5" + body + "5dc3") for body in
            ("8d4701", "4801f8", "31c0ffc7e2fc", "4889f848c1e003", "90" * 13)]


def jitdump_sample(big):
    base = 0x7f1234560000
    d = JitDump(big).header(flags=1)
    d.debug(2000, base, [(base, 12, 0, b"/srv/app.js"), (base + 4, 13, 2, b"\xff"),
                         (base + 8, 40, 0, b"lib.js")])
    for i, code in enumerate(JIT_CODE):
        d.load(2001 + i, base + 0x100 * i, f"LazyCompile:~fn{i} /srv/app.js:{10 * i}", code, i + 1)
    d.unwinding(2010, b"\x1b" * 24, 8)
    d.move(2011, base + 0x100, base + 0x1000, len(JIT_CODE[1]), 2)
    return d.close(2012).b


def jitdump_seeds():
    put("fuzz_jitdump", "sample", jitdump_sample(False))
    put("fuzz_jitdump", "sample_be", jitdump_sample(True))
    put("fuzz_jitdump", "torn", jitdump_sample(False)[:-30])
    put("fuzz_jitdump", "header_extra",
        JitDump().header(total=56, extra=b"sixteen bytes...").load(1, 0x1000, "x", JIT_CODE[0], 1)
        .b)
    d = JitDump().header()
    d.load(1, 0x1000, "good", JIT_CODE[0], 1)
    d.record(0, 2, struct.pack("<I", 1))                       # below the fixed part
    d.load(3, 0x2000, "", JIT_CODE[0], 2)                      # empty name
    d.load(4, 0x3000, "past", JIT_CODE[0], 3, size=100)        # code past the record
    d.load(5, 0x3000, "zero", b"", 4)                          # no code
    d.load(6, 2**64 - 2, "wrap", JIT_CODE[0], 5)               # address overflow
    d.move(7, 0x1000, 2**64 - 1, 4, 1)                         # move overflow
    d.debug(8, 0x1000, [(0x1000, 1, 0, b"a.js")], nr=9)        # nr_entry past the record
    d.debug(9, 0x1000, [(0x1000, 1, 0, b"\xff")])              # "previous file" first
    d.unwinding(10, b"\x1b" * 8, 9)                            # header past the data
    d.record(77, 11, b"from the future")                       # unknown kind
    d.load(12, 0x4000, "n" * 1100, JIT_CODE[1], 6)             # long name, cut
    d.load(13, 0x5000, "after", JIT_CODE[2], 7)
    put("fuzz_jitdump", "bad_records", d.b)
    put("fuzz_jitdump", "oversize",
        JitDump().header().load(1, 0x1000, "a", JIT_CODE[0], 1).record(0, 2, b"", size=1 << 25)
        .b)


# Function names as targets give them: demangled C++ from node's V8 and libstdc++, V8 and HotSpot
# perf-map names, and hostile ones.
CXXNAMES = {
    "v8_json": "v8::internal::JsonParser<unsigned char>::ParseJsonValue(v8::internal::Handle<"
               "v8::internal::Object>)",
    "template_ret": "v8::internal::Handle<v8::internal::Object> v8::internal::JsonParser<"
                    "unsigned char>::ParseJsonValue<false>(v8::internal::Handle<"
                    "v8::internal::String>) const",
    "lambda": "ada::idna::is_label_valid(std::basic_string_view<char32_t, std::char_traits<"
              "char32_t> >)::{lambda(unsigned int)#1}::operator()(unsigned int) const "
              "[clone .constprop.0]",
    "operators": "bool std::operator< <char>(std::basic_string<char> const&, char const*)",
    "operator_eq": "bool std::operator==<char, std::char_traits<char> >(std::basic_string_view<"
                   "char, std::char_traits<char> >)",
    "conversion": "Foo::operator std::vector<int, std::allocator<int> >() const &",
    "thunk": "non-virtual thunk to (anonymous namespace)::uvimpl::Work::~Work()",
    "abi": "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
           "v8_inspector::toStdString[abi:cxx11]<int>(int)",
    "js": "JS:*foo /path/x.js:12:3",
    "lazy": "LazyCompile:*foo file.js:1",
    "regexp": "RegExp:(a)(b)",
    "java": "void java.util.HashMap.get(java.lang.Object)",
    "unbalanced": "a<b<c(d)>::e(((f)",
    "escape": "foo\x1b]0;x\x07(int)",
}


def cxxname_seeds():
    for name, text in CXXNAMES.items():
        put("fuzz_cxxname", name, text)


def srcline_seeds():
    """A kprof-lines helper's output (cli/helper/kprof-lines.c): its start line, then answers."""
    frames = "F\tmix\t/src/hotline.c\t19\nF\tspin\t/src/hotline.c\t31\nE\n"
    put("fuzz_srcline", "answers", "R\n" + frames + "E\n" + "F\tmain\t\t0\nE\n" + frames)
    put("fuzz_srcline", "refused", "X cannot open the file: Permission denied\n")
    put("fuzz_srcline", "inlined", "R\n" + "".join(
        f"F\tf{i}\t/src/a{i}.h\t{i * 7}\n" for i in range(16)) + "E\n")
    put("fuzz_srcline", "too_many", "R\n" + "F\tf\tx.c\t1\n" * 17 + "E\n")
    put("fuzz_srcline", "long_field", "R\nF\t" + "a" * 1025 + "\tx.c\t1\nE\n")
    put("fuzz_srcline", "bad_lines", "R\nF\tf\tx.c\t4294967296\nE\nF\tf\tx.c\nE\n"
        "F\tf\x01\tx.c\t1\nE\nF\tf\tx.c\t-1\nE\n")


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    with tempfile.TemporaryDirectory() as tmp:
        minijit_seeds(tmp)
        elf_seeds(tmp)
        debug_seeds(tmp)
        asm_seeds(tmp)
    for name, text in PERFMAP_HANDMADE.items():
        put("fuzz_perfmap", name, text)
    maps = run("setarch", "-R", "cat", "/proc/self/maps", text=True).stdout
    put("fuzz_procmaps", "self", maps)
    with open(os.path.join(ROOT, "tests", "unit", "test_procmaps.c")) as f:
        src = f.read()
    # The unit test's hand-written maps (paths with spaces, memfd, vsyscall): the C string.
    body = src.split("static const char maps[] =", 1)[1].split(";", 1)[0]
    text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body)).encode().decode("unicode_escape")
    put("fuzz_procmaps", "unit_test", text)
    put("fuzz_procmaps", "bad_lines", "zz-1000 r-xp 0 0:0 0\n1000-1000 r-xp 0 0:0 0\n"
        "2000-1000 r-xp 0 0:0 0\n1000-2000 r-x\n1000-2000 r-xp 0 0:0 99999999999999999999999 x\n"
        "1000-2000 rwxp 00000000 fd:00 12 /ok\n")
    put("fuzz_procmaps", "overlap", "1000-5000 r-xp 0 0:0 1 /a\n2000-3000 r--p 0 0:0 2 /b\n")
    for name, text in CONFIGS.items():
        if text is None:
            with open(os.path.join(ROOT, "systemd", "kprofd.conf")) as f:
                text = f.read()
        put("fuzz_config", name, text)
    proto_seeds()
    jitdump_seeds()
    cxxname_seeds()
    srcline_seeds()
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        size = sum(os.path.getsize(os.path.join(CORPUS, t, x)) for x in files)
        print(f"{t}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    main()
