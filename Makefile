# kprof: build, test, demo, install. `make help` lists the targets.
#
# Everything built goes to $(BUILD)/ (build/ by default): generated files (BPF objects
# and skeletons, protobuf-c code), objects under obj/ (obj/<path>.o from <path>.c, with a .d file
# of the headers it includes), the libraries libkprof.a (the pure modules of daemon/lib/) and
# libkprofwire.a (frames, kept profiles, protobuf-c code) that kprofd, kprofctl, the benchmarks
# and the fuzzers link, and the unit tests' sanitized objects and libraries under san/.

PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=
BUILD ?= build
WERROR ?= 1
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
PROTOC_C ?= protoc-c
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.1.0)

# Packages the build, the tests and the demo need (Debian 12). QEMU and a static busybox boot
# Debian's older kernels for tests/integration/test_kernels.sh; the runtimes (a JVM, Erlang,
# PHP, Mono, LuaJIT) are profiled side by side with perf by the naming tests.
DEPS := clang llvm make g++ pkg-config golang-go libbpf-dev bpftool libelf-dev zlib1g-dev libsystemd-dev \
	protobuf-c-compiler libprotobuf-c-dev libcmocka-dev libcapstone-dev libncurses-dev \
	binutils-dev libinih-dev libmicrohttpd-dev nodejs procps util-linux tmux python3 systemd systemd-container groff-base \
	linux-perf bpftrace libc6-dbg openjdk-17-jdk-headless erlang-base php-cli qemu-system-x86 busybox-static \
	mono-runtime mono-mcs luajit

WFLAGS := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
OPTFLAGS ?= -O2 -g
CFLAGS ?=
ALL_CFLAGS = $(OPTFLAGS) $(CFLAGS) -std=gnu11 $(WFLAGS) -fno-omit-frame-pointer -D_GNU_SOURCE \
	-DKPROF_VERSION='"$(VERSION)"' -Iinclude -Idaemon -I$(BUILD)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all

DAEMON_LIBS := -lpthread -lbpf -lelf -lz -lsystemd -lprotobuf-c -linih -lcapstone -lmicrohttpd -lstdc++ -lm
CLI_LIBS := -lprotobuf-c -lncursesw -lz -lm

PROTO_C := $(BUILD)/proto/kprof.pb-c.c
PROTO_H := $(BUILD)/proto/kprof.pb-c.h
PPROF_C := $(BUILD)/proto/profile.pb-c.c
PPROF_H := $(BUILD)/proto/profile.pb-c.h
# kprofctl's per-verb help, generated from its man page.
MANHELP_H := $(BUILD)/cli/manhelp.h
# One BPF source per tool (bpf/*.bpf.c), linked into one object and one skeleton.
BPF_SRC := bpf/shared.bpf.c bpf/sampler.bpf.c bpf/lifecycle.bpf.c bpf/calls.bpf.c bpf/paths.bpf.c \
	bpf/threads.bpf.c bpf/pidns.bpf.c bpf/hwbp.bpf.c bpf/offcpu.bpf.c
BPF_OBJS := $(patsubst bpf/%.c,$(BUILD)/bpf/%.o,$(BPF_SRC))
SKELS := $(BUILD)/kprof.skel.h

# One list of sources per module; every program, test and fuzz target links these. libkprof.a:
# the pure modules. libkprofwire.a: frames and protobuf (kprofd's and kprofctl's wire). kprofd:
# its glue (daemon/main.c and daemon/FOLDER/*.c, a subsystem per folder, included as
# "kernel/loader.h" through -Idaemon) and both. kprofctl: cli/*.c and both. liboracles.a: the
# exact CCT and the HCCT metrics, for unit tests and bench_hcct.
LIB_SRC := $(wildcard daemon/lib/*.c)
WIRE_SRC := proto/frame.c proto/saved.c proto/leafsplit.c proto/sites.c proto/pprof.c proto/sdelta.c proto/merge.c proto/tview.c $(PROTO_C) $(PPROF_C)
DAEMON_SRC := $(wildcard daemon/*.c) $(filter-out daemon/lib/%,$(wildcard daemon/*/*.c))
CLI_SRC := $(wildcard cli/*.c)
ORACLE_SRC := $(wildcard tests/oracles/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
BENCH_SRC := $(wildcard tests/bench/*.c) bench/symbolize_bench.c bench/spp_bench.c bench/resolve_bench.c \
	bench/replay.c

# Objects: $(OBJ)/<path>.o from <path>.c, $(OBJ)/gen/<path>.o from $(BUILD)/<path>.c; the unit
# tests' ASan/UBSan builds of the same files under $(SAN_DIR)/obj/.
OBJ := $(BUILD)/obj
SAN_DIR := $(BUILD)/san
SAN_OBJ := $(SAN_DIR)/obj
# $(call objs,DIR,SOURCES): the objects of SOURCES under DIR.
objs = $(foreach s,$(2),$(if $(filter $(BUILD)/%,$(s)),\
	$(patsubst $(BUILD)/%.c,$(1)/gen/%.o,$(s)),$(patsubst %.c,$(1)/%.o,$(s))))

LIB_OBJS := $(call objs,$(OBJ),$(LIB_SRC))
WIRE_OBJS := $(call objs,$(OBJ),$(WIRE_SRC))
DAEMON_OBJS := $(call objs,$(OBJ),$(DAEMON_SRC))
CLI_OBJS := $(call objs,$(OBJ),$(CLI_SRC))
ORACLE_OBJS := $(call objs,$(OBJ),$(ORACLE_SRC))
BENCH_OBJS := $(call objs,$(OBJ),$(BENCH_SRC))
SAN_OBJS := $(call objs,$(SAN_OBJ),$(LIB_SRC) $(WIRE_SRC) $(CLI_SRC) $(ORACLE_SRC) $(UNIT_SRC))
ALL_OBJS := $(LIB_OBJS) $(WIRE_OBJS) $(DAEMON_OBJS) $(CLI_OBJS) $(ORACLE_OBJS) $(BENCH_OBJS) \
	$(SAN_OBJS)

LIBS := $(BUILD)/libkprofwire.a $(BUILD)/libkprof.a
SAN_LIBS := $(SAN_DIR)/liboracles.a $(SAN_DIR)/libkprofwire.a $(SAN_DIR)/libkprof.a
UNIT_LIBS := -lcmocka -lprotobuf-c -linih -lcapstone -lelf -lz -lm
LINK_FLAGS = $(OPTFLAGS) $(CFLAGS) $(LDFLAGS)

UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(UNIT_SRC))
UNIT_BINS := $(addprefix $(BUILD)/tests/,$(UNIT_TESTS))

# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:

# Keep the BPF objects between the object and the skeleton steps, and the generated C sources.
.SECONDARY: $(SKELS:.skel.h=.bpf.o) $(PROTO_C) $(PPROF_C)

# make fuzz: FUZZ_RUNS executions of every target (FUZZ_MAX_TIME seconds at most, a FAIL if hit
# first); FUZZ_SECONDS=N instead runs each for N seconds (make check: 5).
FUZZ_SECONDS ?=
FUZZ_RUNS ?= 10000000
FUZZ_MAX_TIME ?= 7200
FUZZ_JOBS ?= 1

.PHONY: bench-peers all deps vmlinux-update check check-structure test test-asan unit integration demo bench \
	install uninstall clean help format fuzz

all: $(BUILD)/kprofd $(BUILD)/kprofctl $(BUILD)/minijit $(BUILD)/native $(BUILD)/threadmill \
	$(BUILD)/offcpu_mix $(BUILD)/offcpu_stacks
all: $(BUILD)/kprof-lines $(BUILD)/hotline $(BUILD)/replay

help:
	@echo "make deps      install build/test packages (apt-get, idempotent)"
	@echo "make           build kprofd, kprofctl and the minijit, native and threadmill fixtures into $(BUILD)/"
	@echo "make check     test, test-asan and a 5 s fuzz run of every target (what CI runs)"
	@echo "make test      build and run unit and integration tests (root for integration)"
	@echo "make unit      build and run the unit tests alone"
	@echo "make check-structure  layers and cycles of the sources and objects (tests/layers.txt)"
	@echo "make integration build and run the integration tests alone (root)"
	@echo "make test-asan the integration tests on an ASan+UBSan build (build-asan/)"
	@echo "make demo      start kprofd, profile minijit, print its hottest JIT functions"
	@echo "make bench     run benchmarks (results: docs/BENCHMARKS.md)"
	@echo "make fuzz      run each libFuzzer target for FUZZ_RUNS executions (default 10000000, at most"
	@echo "               FUZZ_MAX_TIME=$(FUZZ_MAX_TIME) s each); FUZZ_SECONDS=N: N s each instead; crashes in $(BUILD)/fuzz/crashes/"
	@echo "make bench-peers kprof vs perf record/bpftrace, perf-map and ingestion benchmarks (root)"
	@echo "make install   install into \$$(DESTDIR)\$$(PREFIX) (PREFIX=$(PREFIX))"
	@echo "make uninstall remove what make install installed (the config in $(SYSCONFDIR)/kprofd stays)"
	@echo "make clean     remove $(BUILD)/"
	@echo "make vmlinux-update  regenerate bpf/vmlinux/x86/vmlinux.h from the running kernel's BTF"
	@echo "make format    clang-format every C file in place (not bpf/vmlinux/)"
	@echo "make help      this list"

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$(echo $$missing | sed 's/^/ /')"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "deps: all installed"; fi

$(BUILD) $(BUILD)/tests:
	mkdir -p $@

# The kernel's types for the BPF programs: a committed vmlinux.h (bpftool btf dump of Linux 6.18's
# BTF, as libbpf-tools commit theirs), so the build does not depend on the kernel it runs on; CO-RE
# relocations and the loader's feature checks (features.c) fit the programs to the kernel
# they run on. `make vmlinux-update` regenerates it from the running kernel (a newer one only).
VMLINUX_DIR := bpf/vmlinux/x86

vmlinux-update:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_DIR)/vmlinux.h.tmp && \
		mv $(VMLINUX_DIR)/vmlinux.h.tmp $(VMLINUX_DIR)/vmlinux.h

# DWARF is stripped from each object; BTF stays, for the linker (externs, maps) and libbpf.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c bpf/kprof.bpf.h include/kprof/abi.h $(VMLINUX_DIR)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 $(WFLAGS) -Wno-unused-parameter \
		-I$(VMLINUX_DIR) -Iinclude -c $< -o $@
	$(LLVM_STRIP) -g $@

# libbpf's static linker resolves each tool's extern maps to shared.bpf.c's definitions.
$(BUILD)/kprof.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

# One protoc-c run writes both files (a pattern rule with two targets is run once for both).
$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto | $(BUILD)
	$(PROTOC_C) --c_out=$(BUILD) $<

# `kprofctl VERB --help` prints VERB's section of kprofctl(1): cli/manhelp.py renders the
# sections as text into a table, and fails on any roff it does not know, so the two cannot drift.
$(MANHELP_H): docs/man/kprofctl.1 cli/manhelp.py
	@mkdir -p $(@D)
	python3 cli/manhelp.py docs/man/kprofctl.1 > $@.tmp && mv $@.tmp $@

# Every object knows the headers it includes (-MMD, the .d files below); before its first build
# it waits for the generated headers, which no .d file names yet. Only the glue waits for the BPF
# skeleton, so the libraries build without a kernel's BTF (the fuzzers build them too).
$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
$(OBJ)/gen/%.o: $(BUILD)/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
$(SAN_OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN) -MMD -MP -c $< -o $@
$(SAN_OBJ)/gen/%.o: $(BUILD)/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN) -MMD -MP -c $< -o $@
$(ALL_OBJS): | $(PROTO_H) $(PPROF_H)
$(DAEMON_OBJS): | $(SKELS)
$(CLI_OBJS) $(call objs,$(SAN_OBJ),$(CLI_SRC)): | $(MANHELP_H)
-include $(ALL_OBJS:.o=.d)

$(BUILD)/libkprof.a: $(LIB_OBJS)
$(BUILD)/libkprofwire.a: $(WIRE_OBJS)
$(BUILD)/liboracles.a: $(ORACLE_OBJS)
$(SAN_DIR)/libkprof.a: $(call objs,$(SAN_OBJ),$(LIB_SRC))
$(SAN_DIR)/libkprofwire.a: $(call objs,$(SAN_OBJ),$(WIRE_SRC))
$(SAN_DIR)/liboracles.a: $(call objs,$(SAN_OBJ),$(ORACLE_SRC))
$(LIBS) $(BUILD)/liboracles.a $(SAN_LIBS):
	@rm -f $@
	$(AR) rcs $@ $^

# Programs: their own objects first, then the libraries (wire before pure: saved.c uses profile.c).
$(BUILD)/kprofd: $(DAEMON_OBJS) $(LIBS)
	$(CC) $(LINK_FLAGS) -o $@ $^ $(DAEMON_LIBS)

$(BUILD)/kprofctl: $(CLI_OBJS) $(LIBS)
	$(CC) $(LINK_FLAGS) -o $@ $^ $(CLI_LIBS)

# The source-line helper (cli/helper/kprof-lines.c): its own program, the only one linking libbfd
# (GPL-3.0-or-later; docs/ARCHITECTURE.md "Source lines" says why kprofd and kprofctl never do).
# Never sanitized: it runs under RLIMIT_AS 1 GiB and its own seccomp filter, which ASan's shadow
# memory and its system calls do not fit.
# Its object under obj/ like every C file's (make check-structure reads it), built without
# CFLAGS (no sanitizer even in the ASan build).
HELPER_OBJ := $(OBJ)/cli/helper/kprof-lines.o
$(HELPER_OBJ): cli/helper/kprof-lines.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 $(WFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/kprof-lines: $(HELPER_OBJ) | $(BUILD)
	$(CC) -O2 -g -o $@ $< -lbfd

# A hot loop in an always_inline function, for source lines (tests/integration/test_lines.sh).
# Built with clang: gcc drops the frame of a leaf function even with -fno-omit-frame-pointer, and
# with it its caller from the stack.
$(BUILD)/hotline: tests/fixtures/lines/hotline.c | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -o $@ $<

# The fixture is built with clang: gcc may drop leaf frames even with -fno-omit-frame-pointer.
$(BUILD)/minijit: tests/fixtures/minijit/minijit.c tests/prng.h include/kprof/io.h | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -Iinclude -o $@ $<

# Native code named only by the vdso, libm's and libc's debug files (tests/fixtures/native/).
$(BUILD)/native: tests/fixtures/native/native.c | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -o $@ $< -lm -lpthread

# Threads that run and wait in known proportions, for test_offcpu.sh.
$(BUILD)/offcpu_mix: tests/fixtures/offcpu_mix.c | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -pthread -o $@ $<

# Many different user stacks that each wait once, for test_offcpu_stacks.sh.
$(BUILD)/offcpu_stacks: tests/fixtures/offcpu_stacks.c | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -o $@ $<

# A multi-threaded target for test_threads.sh (late threads, a thread storm, sleepers).
$(BUILD)/threadmill: tests/fixtures/threadmill.c | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -pthread -o $@ $<

# Unit tests: one program per pure module under ASan/UBSan, linked with sanitized builds of the
# libraries (from which the linker takes the module under test and what it calls, nothing else)
# and, for kprofctl's output, the CLI objects they test.
$(BUILD)/tests/test_render: $(SAN_OBJ)/cli/render.o $(SAN_OBJ)/cli/render_spp.o
$(BUILD)/tests/test_render: $(SAN_OBJ)/cli/render_targets.o $(SAN_OBJ)/cli/render_profile.o \
	$(SAN_OBJ)/cli/render_paths.o $(SAN_OBJ)/cli/render_annotate.o $(SAN_OBJ)/cli/drift.o
$(BUILD)/tests/test_render_offcpu: $(SAN_OBJ)/cli/render_offcpu.o $(SAN_OBJ)/cli/render.o
$(BUILD)/tests/test_render_threads: $(SAN_OBJ)/cli/render.o $(SAN_OBJ)/cli/render_threads.o
$(BUILD)/tests/test_%: $(SAN_OBJ)/tests/unit/test_%.o $(SAN_LIBS) | $(BUILD)/tests
	$(CC) $(LINK_FLAGS) $(SAN) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(UNIT_LIBS)

# Micro-benchmarks, linked with the libraries kprofd uses.
BENCH_BINS := $(BUILD)/bench_hcct $(BUILD)/bench_ksf $(BUILD)/bench_ingest
BENCH_BINS += $(BUILD)/bench_drift
$(BUILD)/bench_%: $(OBJ)/tests/bench/bench_%.o $(BUILD)/liboracles.a $(BUILD)/libkprof.a
	$(CC) $(LINK_FLAGS) -o $@ $^ -lm
$(BUILD)/symbolize_bench: $(OBJ)/bench/symbolize_bench.o $(BUILD)/libkprof.a
	$(CC) $(LINK_FLAGS) -o $@ $^
# tsym_resolve on a real process (bench/resolve_bench.c): kprofd's glue without its main().
$(BUILD)/resolve_bench: $(OBJ)/bench/resolve_bench.o $(filter-out $(OBJ)/daemon/main.o,$(DAEMON_OBJS)) $(LIBS)
	$(CC) $(LINK_FLAGS) -o $@ $^ $(DAEMON_LIBS)
# kprofd's ingestion fed a 192-CPU host's stream in simulated time (bench/replay.sh, issue 34).
$(BUILD)/replay: $(OBJ)/bench/replay.o $(filter-out $(OBJ)/daemon/main.o,$(DAEMON_OBJS)) $(LIBS)
	$(CC) $(LINK_FLAGS) -o $@ $^ $(DAEMON_LIBS)
# SPP vs flat Ball-Larus overlap on minijit's traces (bench/spp.sh).
$(BUILD)/spp_bench: $(OBJ)/bench/spp_bench.o $(BUILD)/libkprof.a
	$(CC) $(LINK_FLAGS) -o $@ $^ -lcapstone

# The unit tests alone (no root needed), and the integration tests alone (root).
unit: $(UNIT_BINS)
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --unit-only

integration: all
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --integration-only

test: all $(UNIT_BINS)
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh

# Everything CI runs (the README's test command): the tests, the tests on a sanitized build, and
# a bounded run of every fuzz target. Builds use every CPU. The plain integration tests start as
# soon as what they run is built (all); meanwhile, at the lowest priority (nice 19: on CPU time
# the tests leave idle), the unit tests are built and run and the sanitized binaries built; then
# the sanitized integration tests run beside the plain ones, at the same priority (on 2 CPUs the
# two runners keep both busy: 39 min in all, against 47 one after the other), while the fuzz
# targets' libraries are built. The two runners share $(BUILD)/suite.lock: a test that changes or measures
# what belongs to the whole host ("Alone:" in its header) runs while the other runner waits
# (tests/run.sh). Then the fuzz targets run, still beside the plain tests. The unit, sanitized
# and fuzz output is shown after the plain tests' (the early builds' log is
# $(ASAN_BUILD)/prebuild.log).
NPROC := $(shell nproc 2>/dev/null || echo 2)
check:
	@rm -f $(BUILD)/check-results $(BUILD)/check-results.failed $(BUILD)/unit.out $(BUILD)/unit.rc \
		$(BUILD)/asan.out $(BUILD)/asan.rc $(BUILD)/fuzz.out $(BUILD)/fuzz.rc
	@mkdir -p $(BUILD) $(ASAN_BUILD)
	@st=0; res=$(abspath $(BUILD))/check-results; lock=$(abspath $(BUILD))/suite.lock; \
	$(MAKE) -j$(NPROC) all || st=1; \
	{ nice -n 19 $(MAKE) -j$(NPROC) unit RESULTS_FILE=$$res >$(BUILD)/unit.out 2>&1; \
	  echo $$? >$(BUILD)/unit.rc; \
	  nice -n 19 $(MAKE) -j$(NPROC) $(ASAN_MAKE) >$(ASAN_BUILD)/prebuild.log 2>&1; \
	  BUILD=$(BUILD) FUZZ_BUILD_ONLY=1 nice -n 19 bash tests/fuzz/run.sh >>$(ASAN_BUILD)/prebuild.log 2>&1 & \
	  KPROF_SUITE_LOCK=$$lock $(MAKE) -j$(NPROC) test-asan RESULTS_FILE=$$res >$(BUILD)/asan.out 2>&1; \
	  echo $$? >$(BUILD)/asan.rc; wait; \
	  $(MAKE) fuzz FUZZ_SECONDS=5 FUZZ_JOBS=2 RESULTS_FILE=$$res >$(BUILD)/fuzz.out 2>&1; \
	  echo $$? >$(BUILD)/fuzz.rc; } & pre=$$!; \
	KPROF_SUITE_LOCK=$$lock $(MAKE) integration RESULTS_FILE=$$res || st=1; \
	wait $$pre; \
	cat $(BUILD)/unit.out; [ "$$(cat $(BUILD)/unit.rc 2>/dev/null)" = 0 ] || st=1; \
	echo "== the sanitized run (beside the plain one)"; cat $(BUILD)/asan.out; \
	[ "$$(cat $(BUILD)/asan.rc 2>/dev/null)" = 0 ] || st=1; \
	echo "== the fuzz targets (after the sanitized run)"; cat $(BUILD)/fuzz.out; \
	[ "$$(cat $(BUILD)/fuzz.rc 2>/dev/null)" = 0 ] || st=1; \
	if [ -s $(BUILD)/check-results.failed ]; then echo "failed checks:"; cat $(BUILD)/check-results.failed; fi; \
	awk '{ p += $$1; f += $$2; s += $$3 } END { printf "total: %d passed, %d failed, %d skipped\n", p, f, s }' \
		$(BUILD)/check-results; \
	exit $$st

# The layers of tests/layers.txt and no cycles between files, on this build's objects, and the
# generated file table of docs/ARCHITECTURE.md (also run by the suite:
# tests/integration/test_structure.sh).
check-structure: $(DAEMON_OBJS) $(CLI_OBJS) $(HELPER_OBJ) $(LIBS)
	python3 tests/check_structure.py --build $(BUILD)
	python3 tests/doc_table.py

# The integration suite again on an AddressSanitizer + UndefinedBehaviorSanitizer build of kprofd
# and kprofctl (the fixture stays as it is); any sanitizer report fails the run.
ASAN_BUILD ?= build-asan
ASAN_MAKE = BUILD=$(ASAN_BUILD) OPTFLAGS="-O1 -g" CFLAGS="$(SAN)" $(ASAN_BUILD)/kprofd $(ASAN_BUILD)/kprofctl \
	$(ASAN_BUILD)/minijit $(ASAN_BUILD)/native $(ASAN_BUILD)/threadmill \
	$(ASAN_BUILD)/offcpu_mix $(ASAN_BUILD)/offcpu_stacks $(ASAN_BUILD)/kprof-lines $(ASAN_BUILD)/hotline $(ASAN_BUILD)/replay
test-asan:
	$(MAKE) $(ASAN_MAKE)
	BUILD=$(ASAN_BUILD) SANITIZED=1 RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --integration-only

demo: all
	BUILD=$(BUILD) bash tests/demo.sh

bench: all $(BENCH_BINS) $(BUILD)/spp_bench $(BUILD)/replay
	BUILD=$(BUILD) bash bench/run.sh

# kprof vs perf record and bpftrace, perf-map symbolization and ingestion (docs/BENCHMARKS.md).
bench-peers: all $(BUILD)/symbolize_bench
	BUILD=$(BUILD) bash bench/peers.sh

fuzz:
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_MAX_TIME=$(FUZZ_MAX_TIME) \
		FUZZ_JOBS=$(FUZZ_JOBS) RESULTS_FILE=$(RESULTS_FILE) bash tests/fuzz/run.sh

install: all
	install -D -m 0755 $(BUILD)/kprofd $(DESTDIR)$(PREFIX)/sbin/kprofd
	install -D -m 0755 $(BUILD)/kprofctl $(DESTDIR)$(PREFIX)/bin/kprofctl
	install -D -m 0755 $(BUILD)/kprof-lines $(DESTDIR)$(PREFIX)/bin/kprof-lines
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/lib/sysusers.d \
		$(DESTDIR)$(PREFIX)/lib/tmpfiles.d $(DESTDIR)$(SYSCONFDIR)/kprofd
	sed 's|/usr/local/sbin/kprofd|$(PREFIX)/sbin/kprofd|' systemd/kprofd.service \
		> $(DESTDIR)$(UNITDIR)/kprofd.service
	install -m 0644 systemd/kprofd.socket $(DESTDIR)$(UNITDIR)/kprofd.socket
	install -D -m 0644 systemd/kprofd-http.conf $(DESTDIR)$(PREFIX)/share/kprof/kprofd-http.conf
	install -D -m 0644 docs/recipes/kprof_perfmap.lua $(DESTDIR)$(PREFIX)/share/kprof/kprof_perfmap.lua
	install -m 0644 systemd/kprof.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/kprof.conf
	install -m 0644 systemd/kprof.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/kprof.conf
	install -D -m 0644 docs/man/kprofctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/kprofctl.1
	install -D -m 0644 docs/man/kprofd.8 $(DESTDIR)$(PREFIX)/share/man/man8/kprofd.8
	install -D -m 0644 cli/kprofctl.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/kprofctl
	# An existing config is the administrator's: never overwritten.
	[ -e $(DESTDIR)$(SYSCONFDIR)/kprofd/kprofd.conf ] || \
		install -m 0644 systemd/kprofd.conf $(DESTDIR)$(SYSCONFDIR)/kprofd/kprofd.conf

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/kprofd $(DESTDIR)$(PREFIX)/bin/kprofctl $(DESTDIR)$(PREFIX)/bin/kprof-lines \
		$(DESTDIR)$(UNITDIR)/kprofd.service $(DESTDIR)$(UNITDIR)/kprofd.socket \
		$(DESTDIR)$(PREFIX)/lib/sysusers.d/kprof.conf $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/kprof.conf \
		$(DESTDIR)$(PREFIX)/share/man/man1/kprofctl.1 $(DESTDIR)$(PREFIX)/share/man/man8/kprofd.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/kprofctl \
		$(DESTDIR)$(PREFIX)/share/kprof/kprofd-http.conf \
		$(DESTDIR)$(PREFIX)/share/kprof/kprof_perfmap.lua

# bpf/vmlinux/ is bpftool's output (make vmlinux-update), not ours to format.
format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^bpf/vmlinux/')

clean:
	rm -rf $(BUILD)
