# kprof: build, test, demo, install. `make help` lists the targets.
#
# Generated files (vmlinux.h, BPF objects and skeletons, protobuf-c code) go to build/.

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

# Packages the build, the tests and the demo need (Debian 12).
DEPS := clang llvm make g++ pkg-config golang-go libbpf-dev bpftool libelf-dev zlib1g-dev libsystemd-dev \
	protobuf-c-compiler libprotobuf-c-dev libcmocka-dev libcapstone-dev libncurses-dev \
	binutils-dev libinih-dev nodejs procps util-linux tmux python3 systemd \
	linux-perf bpftrace

WFLAGS := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
OPTFLAGS ?= -O2 -g
CFLAGS ?=
ALL_CFLAGS = $(OPTFLAGS) $(CFLAGS) -std=gnu11 $(WFLAGS) -fno-omit-frame-pointer -D_GNU_SOURCE \
	-DKPROF_VERSION='"$(VERSION)"' -Iinclude -I$(BUILD)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all

DAEMON_LIBS := -lpthread -lbpf -lelf -lz -lsystemd -lprotobuf-c -linih -lcapstone -lstdc++ -lm
CLI_LIBS := -lprotobuf-c -lncursesw -lz -lm

PROTO_C := $(BUILD)/proto/kprof.pb-c.c
PROTO_H := $(BUILD)/proto/kprof.pb-c.h
PPROF_C := $(BUILD)/proto/profile.pb-c.c
PPROF_H := $(BUILD)/proto/profile.pb-c.h
SKELS := $(BUILD)/sampler.skel.h

# Pure modules (no I/O) and the glue around them.
PURE := $(wildcard daemon/lib/*.c)
GLUE := daemon/main.c daemon/manager.c daemon/loader.c daemon/ringbuf.c daemon/symbolize.c \
	daemon/control.c daemon/target.c daemon/store.c daemon/live.c daemon/exact.c daemon/log.c \
	daemon/paths.c daemon/paths_reply.c daemon/tfile.c daemon/procfs.c
DAEMON_SRC := $(GLUE) $(PURE) proto/frame.c proto/saved.c $(PROTO_C)
CLI_SRC := cli/kprofctl.c cli/client.c cli/render.c cli/export.c cli/pprof.c cli/top.c \
	daemon/lib/profile.c \
	proto/frame.c proto/saved.c $(PROTO_C) $(PPROF_C)

UNIT_TESTS := test_symtab test_perfmap test_profile test_frame test_procmaps test_render test_config \
	test_cfg test_elfsym test_pprof \
	test_hcct test_cct test_hcct_metrics test_ksf test_budget test_procinfo test_saved
UNIT_BINS := $(addprefix $(BUILD)/tests/,$(UNIT_TESTS))

# Keep the BPF objects between the object and the skeleton steps.
.SECONDARY:

# make fuzz: FUZZ_RUNS executions of every target (FUZZ_MAX_TIME seconds at most, a FAIL if hit
# first); FUZZ_SECONDS=N instead runs each for N seconds (make check: 30).
FUZZ_SECONDS ?=
FUZZ_RUNS ?= 10000000
FUZZ_MAX_TIME ?= 7200
FUZZ_JOBS ?= 1

.PHONY: bench-peers all deps check test test-asan unit integration demo bench install uninstall clean help format fuzz

all: $(BUILD)/kprofd $(BUILD)/kprofctl $(BUILD)/minijit

help:
	@echo "make deps      install build/test packages (apt-get, idempotent)"
	@echo "make           build kprofd, kprofctl and the minijit fixture into $(BUILD)/"
	@echo "make check     test, test-asan and a 30 s fuzz run of every target (what CI runs)"
	@echo "make test      build and run unit and integration tests (root for integration)"
	@echo "make unit      build and run the unit tests alone"
	@echo "make integration build and run the integration tests alone (root)"
	@echo "make test-asan the integration tests on an ASan+UBSan build (build-asan/)"
	@echo "make demo      start kprofd, profile minijit, print its hottest JIT functions"
	@echo "make bench     run benchmarks (results: docs/BENCHMARKS.md)"
	@echo "make fuzz      run each libFuzzer target for FUZZ_RUNS executions (default 10000000, at most"
	@echo "               FUZZ_MAX_TIME=$(FUZZ_MAX_TIME) s each); FUZZ_SECONDS=N: N s each instead; crashes in $(BUILD)/fuzz/crashes/"
	@echo "make bench-peers kprof vs perf record/bpftrace, perf-map and ingestion benchmarks (root)"
	@echo "make install   install into \$$(DESTDIR)\$$(PREFIX) (PREFIX=$(PREFIX))"
	@echo "make clean     remove $(BUILD)/"

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

$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c include/kprof/abi.h $(BUILD)/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 $(WFLAGS) -Wno-unused-parameter \
		-I$(BUILD) -Iinclude -c $< -o $@
	$(LLVM_STRIP) -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(PROTO_C) $(PROTO_H): proto/kprof.proto | $(BUILD)
	$(PROTOC_C) --c_out=$(BUILD) $<

$(PPROF_C) $(PPROF_H): proto/profile.proto | $(BUILD)
	$(PROTOC_C) --c_out=$(BUILD) $<

HDRS := $(wildcard include/kprof/*.h daemon/*.h cli/*.h tests/oracles/*.h)

$(BUILD)/kprofd: $(DAEMON_SRC) $(HDRS) $(SKELS) $(PROTO_H)
	$(CC) $(ALL_CFLAGS) -o $@ $(DAEMON_SRC) $(DAEMON_LIBS)

$(BUILD)/kprofctl: $(CLI_SRC) $(HDRS) $(PROTO_H) $(PPROF_H)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_SRC) $(CLI_LIBS)

# The fixture is built with clang: gcc may drop leaf frames even with -fno-omit-frame-pointer.
$(BUILD)/minijit: tests/fixtures/minijit/minijit.c tests/prng.h include/kprof/io.h | $(BUILD)
	$(CLANG) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WFLAGS) -Iinclude -o $@ $<

# Unit tests: one program per pure module, linked with that module alone, under ASan/UBSan.
$(BUILD)/tests/test_symtab: daemon/lib/symtab.c
$(BUILD)/tests/test_perfmap: daemon/lib/perfmap.c daemon/lib/symtab.c
$(BUILD)/tests/test_profile: daemon/lib/profile.c
$(BUILD)/tests/test_procmaps: daemon/lib/procmaps.c
$(BUILD)/tests/test_frame: proto/frame.c $(PROTO_C)
$(BUILD)/tests/test_saved: proto/saved.c daemon/lib/profile.c $(PROTO_C)
$(BUILD)/tests/test_render: cli/render.c $(PROTO_C)
$(BUILD)/tests/test_config: daemon/lib/config.c
$(BUILD)/tests/test_cfg: daemon/lib/cfg.c
$(BUILD)/tests/test_hcct: daemon/lib/hcct.c tests/oracles/cct.c
$(BUILD)/tests/test_cct: tests/oracles/cct.c
$(BUILD)/tests/test_ksf: daemon/lib/ksf.c
$(BUILD)/tests/test_budget: daemon/lib/budget.c
$(BUILD)/tests/test_procinfo: daemon/lib/procinfo.c
$(BUILD)/tests/test_hcct_metrics: tests/oracles/hcct_metrics.c tests/oracles/cct.c daemon/lib/hcct.c
$(BUILD)/tests/test_elfsym: daemon/lib/elfsym.c daemon/lib/symtab.c
$(BUILD)/tests/test_pprof: cli/pprof.c cli/render.c $(PROTO_C) $(PPROF_C)
$(BUILD)/tests/test_%: tests/unit/test_%.c tests/prng.h $(HDRS) $(PROTO_H) $(PPROF_H) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $(filter %.c,$^) -lcmocka -lprotobuf-c -linih -lcapstone -lelf -lz -lm

BENCH_BINS := $(BUILD)/bench_hcct $(BUILD)/bench_ksf $(BUILD)/bench_ingest

$(BUILD)/bench_ingest: tests/bench/bench_ingest.c tests/bench/bench_util.h tests/prng.h daemon/lib/hcct.c daemon/lib/profile.c $(HDRS) | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) -lm

$(BUILD)/bench_ksf: tests/bench/bench_ksf.c tests/prng.h daemon/lib/ksf.c $(HDRS) | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) -lm

$(BUILD)/bench_hcct: tests/bench/bench_hcct.c tests/bench/bench_util.h tests/prng.h daemon/lib/hcct.c tests/oracles/cct.c tests/oracles/hcct_metrics.c $(HDRS) | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) -lm

# The unit tests alone (no root needed), and the integration tests alone (root).
unit: $(UNIT_BINS)
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --unit-only

integration: all
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --integration-only

test: all $(UNIT_BINS)
	BUILD=$(BUILD) RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh

# Everything CI runs (the README's test command): the tests, the tests on a sanitized build, and
# a bounded run of every fuzz target.
check:
	@rm -f $(BUILD)/check-results; mkdir -p $(BUILD)
	@st=0; \
	$(MAKE) test RESULTS_FILE=$(abspath $(BUILD))/check-results || st=1; \
	$(MAKE) test-asan RESULTS_FILE=$(abspath $(BUILD))/check-results || st=1; \
	$(MAKE) fuzz FUZZ_SECONDS=30 FUZZ_JOBS=2 RESULTS_FILE=$(abspath $(BUILD))/check-results || st=1; \
	awk '{ p += $$1; f += $$2; s += $$3 } END { printf "total: %d passed, %d failed, %d skipped\n", p, f, s }' \
		$(BUILD)/check-results; \
	exit $$st

# The integration suite again on an AddressSanitizer + UndefinedBehaviorSanitizer build of kprofd
# and kprofctl (the fixture stays as it is); any sanitizer report fails the run.
ASAN_BUILD ?= build-asan
test-asan:
	$(MAKE) BUILD=$(ASAN_BUILD) OPTFLAGS="-O1 -g" CFLAGS="$(SAN)" $(ASAN_BUILD)/kprofd $(ASAN_BUILD)/kprofctl \
		$(ASAN_BUILD)/minijit
	BUILD=$(ASAN_BUILD) SANITIZED=1 RESULTS_FILE=$(RESULTS_FILE) bash tests/run.sh --integration-only

demo: all
	BUILD=$(BUILD) bash tests/demo.sh

bench: all $(BENCH_BINS)
	BUILD=$(BUILD) bash bench/run.sh

$(BUILD)/symbolize_bench: bench/symbolize_bench.c tests/prng.h daemon/lib/perfmap.c daemon/lib/symtab.c $(HDRS) | $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^)

# kprof vs perf record and bpftrace, perf-map symbolization and ingestion (docs/BENCHMARKS.md).
bench-peers: all $(BUILD)/symbolize_bench
	BUILD=$(BUILD) bash bench/peers.sh

fuzz: $(PROTO_C) $(PROTO_H)
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_MAX_TIME=$(FUZZ_MAX_TIME) \
		FUZZ_JOBS=$(FUZZ_JOBS) RESULTS_FILE=$(RESULTS_FILE) bash tests/fuzz/run.sh

install: all
	install -D -m 0755 $(BUILD)/kprofd $(DESTDIR)$(PREFIX)/sbin/kprofd
	install -D -m 0755 $(BUILD)/kprofctl $(DESTDIR)$(PREFIX)/bin/kprofctl
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/lib/sysusers.d \
		$(DESTDIR)$(PREFIX)/lib/tmpfiles.d $(DESTDIR)$(SYSCONFDIR)/kprofd
	sed 's|/usr/local/sbin/kprofd|$(PREFIX)/sbin/kprofd|' systemd/kprofd.service \
		> $(DESTDIR)$(UNITDIR)/kprofd.service
	install -m 0644 systemd/kprofd.socket $(DESTDIR)$(UNITDIR)/kprofd.socket
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
	rm -f $(DESTDIR)$(PREFIX)/sbin/kprofd $(DESTDIR)$(PREFIX)/bin/kprofctl \
		$(DESTDIR)$(UNITDIR)/kprofd.service $(DESTDIR)$(UNITDIR)/kprofd.socket \
		$(DESTDIR)$(PREFIX)/lib/sysusers.d/kprof.conf $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/kprof.conf \
		$(DESTDIR)$(PREFIX)/share/man/man1/kprofctl.1 $(DESTDIR)$(PREFIX)/share/man/man8/kprofd.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/kprofctl

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
