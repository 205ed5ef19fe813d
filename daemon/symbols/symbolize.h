/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize.h: naming sampled addresses (symbolize.c): per-target symbols, from the sources of
 * sources.h's table. The sources every target shares (the ELF cache, kallsyms, the vdso) are
 * symbolize_elf.h's, included here. */
#ifndef KPROF_DAEMON_SYMBOLIZE_H
#define KPROF_DAEMON_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/elfsym.h"
#include "kprof/perfmap.h"
#include "kprof/profile.h"
#include "symbols/symbolize_elf.h"
#include "symbols/symresult.h"

struct config;
struct jvmattach_ctx;
struct symbolizer;
struct tsym;

/* What the sources read: each fills its own fields (sources.h, stats). */
struct tsym_stats {
	char perfmap_path[256];
	char perfmap_module[64]; /* of its symbols: "perf-NSPID.map" */
	uint64_t jit_symbols;
	uint64_t perfmap_bad_lines;
	uint64_t perfmap_reloads;
	uint64_t refused;	   /* symbol sources left out: the uid's symbol budget was spent */
	char jitdump_path[256];	   /* the jitdump read ("" if none was found) */
	char jitdump_problem[512]; /* why one was refused or read no further ("" if neither) */
	uint64_t jitdump_symbols, jitdump_bad_records, jitdump_bytes, jitdump_reloads;
	/* Bytes of the perf map and jitdump read (every read again counted), and the refreshes
	 * a per-second or per-step bound cut short (the rest read at a later one). */
	uint64_t symbol_read_bytes, symbol_read_deferred;
	/* The maps read again for a sample's address none held, and those reads that found them
	 * unchanged (the names and the caches on them stand). */
	uint64_t maps_reread, maps_same;
	/* A HotSpot JVM asked for its perf map (jvmmap.c): libjvm.so mapped; Compiler.perfmap
	 * exchanges started, answered (the JVM wrote its map), not answered in time, refused or
	 * failed; the frame-pointer hint, why it is not asked, the last failure. */
	bool jvm;
	unsigned jvm_asks, jvm_answers, jvm_failures;
	char jvm_note[320];
};

/* Once the target is attached: for the sources that ask a runtime for its names. */
struct tsym_start {
	struct jvmattach_ctx *jvmattach; /* exchanges with HotSpot JVMs (NULL: none is asked) */
	const struct config *conf;	 /* live ([jvm] perfmap changes on SIGHUP) */
	const uint64_t *samples;	 /* the target's samples ... */
	const uint64_t *unnamed;	 /* ... and those whose leaf is code nothing names */
	bool no_ask;			 /* attach --no-jvm-map */
};

/* Symbols of process pid of real uid uid (charged to it) and effective uid euid (its perf map
 * must be owned by one of them). */
int tsym_new(struct symbolizer *sz, pid_t pid, uid_t uid, uid_t euid, uint64_t perfmap_max_bytes,
	     struct tsym **ret);
void tsym_free(struct tsym *ts);
/* The time (CLOCK_MONOTONIC) the sample whose addresses are resolved next was taken: maps read
 * before it cannot tell that an address was no code then (0: taken before any read). */
void tsym_sample_time(struct tsym *ts, uint64_t taken_ns);
/* Resolve one address; the strings stay valid until the tsym's generation changes. */
void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r);
/* How to find the caller of the user code at addr (a return address when ret: its call
 * instruction is looked up), from its file's .eh_frame (read on first use, charged with its
 * symbols): TSYM_FRAME_SP, no frame pointer there, the return address at sp + cfa - 8;
 * TSYM_FRAME_FP, a frame pointer (a frame-pointer walk finds the caller); TSYM_FRAME_UNKNOWN,
 * no such information (not a file's code, no entry for it, a rule it does not read). */
enum tsym_frame { TSYM_FRAME_UNKNOWN, TSYM_FRAME_SP, TSYM_FRAME_FP };
struct tsym_frame_rule {
	enum tsym_frame kind;
	uint32_t cfa;
	bool rbp_saved;	  /* the function saved rbp there (it may use it for something else) */
	uint32_t rbp_off; /* ... at CFA - rbp_off; 0: not somewhere it can be read back from */
};
void tsym_frame_rule(struct tsym *ts, uint64_t addr, bool ret, struct tsym_frame_rule *r);
/* Bumped whenever earlier resolutions may have changed (new JIT symbols, new mappings). */
uint64_t tsym_generation(const struct tsym *ts);
/* When the maps were last read (CLOCK_MONOTONIC; 0: never), also when that changed nothing: an
 * address kept for lack of fresh maps may be found junk by such a read (target_names_update). */
uint64_t tsym_maps_read_ns(const struct tsym *ts);
/* Re-read the files of its sources (the perf map, the jitdump) if they grew or were replaced:
 * one step, bounded in bytes and CPU time per call and per second (symbolize.c, "Reading in
 * steps"). */
void tsym_refresh(struct tsym *ts);
/* The target is attached: its sources that ask the runtime for names may begin (once). */
void tsym_start(struct tsym *ts, const struct tsym_start *o);
/* Housekeeping (about every second, and between drains): a runtime asked again if due. */
void tsym_tick(struct tsym *ts, uint64_t now_ns);
/* Whether the last refresh stopped at a bound with more to read: call tsym_refresh again soon
 * (each call reads one bounded step). */
bool tsym_behind(const struct tsym *ts);
/* For a client's request that names a function of the target: read on past the allowances
 * (which a loaded host or other targets may have spent), step by step while there is more, up
 * to READ_ASKED_BYTES and READ_ASKED_CPU_NS; charged to the allowances all the same. */
void tsym_refresh_asked(struct tsym *ts);
/* The process exec'd: forget all of its symbols. */
void tsym_exec(struct tsym *ts);
/* Who may read the names (the target's owner, 0 for root only): a sample's unknown address
 * makes the maps be read again only while that uid may read the process (procfs_may_read). */
void tsym_set_reader(struct tsym *ts, uid_t uid);
/* The process is gone: stop reading its /proc files, keep what is loaded. */
void tsym_gone(struct tsym *ts);
/* The target ended and its last samples are named: its root is closed (no fd is held for a
 * kept profile), nothing of the process is read again. */
void tsym_done(struct tsym *ts);
/* The same process still runs the same program after the target was detached (the caller
 * checked it): its files may be read again (late names for a kept profile). */
void tsym_resume(struct tsym *ts);
/* What its sources read, as of now: valid until the next call (its strings until the next
 * refresh too). */
const struct tsym_stats *tsym_get_stats(struct tsym *ts);
/* Executable mappings of anonymous or memfd memory (where JIT code lives) at the last read. */
size_t tsym_anon_exec(struct tsym *ts);
/* Every JIT function of the sources that list theirs (the perf map), for exact mode's probes
 * and the path tracer; stops at and returns fn's first non-zero return. */
int tsym_foreach_jit(const struct tsym *ts, int (*fn)(const struct perfmap_sym *, void *),
		     void *userdata);

/* Where [start, start + len) comes from when it is a file's code as the file holds it (mapped
 * from a file, not writable, in one mapping of the maps as last read): the file (device
 * major << 32 | minor, inode) and the offset of start in it. Reads nothing. */
struct tsym_file_span {
	uint64_t dev, ino, off;
};
bool tsym_file_code(const struct tsym *ts, uint64_t start, size_t len, struct tsym_file_span *f);

/* An executable file mapping as last read: what an export needs to place native code. */
struct tsym_mapping {
	uint64_t start, end, offset;
	const char *path; /* as /proc/PID/maps shows it */
	uint64_t vaddr;	  /* ELF virtual address of start, when has_vaddr */
	bool has_vaddr;
	char build_id[2 * ELFSYM_BUILD_ID_MAX + 1]; /* hex; "" if none or not read */
};
typedef int (*tsym_mapping_fn)(const struct tsym_mapping *m, void *userdata);
/* Every executable file mapping of the last read of the maps, in address order; stops at and
 * returns fn's first non-zero return. Reads nothing. */
int tsym_foreach_mapping(const struct tsym *ts, tsym_mapping_fn fn, void *userdata);
/* Where the JIT function starting at start comes from, if a source said (the first line of a
 * jitdump code load's debug info): *file valid until the next refresh. */
bool tsym_jit_source(const struct tsym *ts, uint64_t start, const char **file, uint32_t *line);
/* The source line of JIT code at addr, when its jitdump's debug info said it (issue 32). */
bool tsym_jit_line(struct tsym *ts, uint64_t addr, const char **file, uint32_t *line);

#endif
