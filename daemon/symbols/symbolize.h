/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize.h: naming sampled addresses (symbolize.c): per-target symbols. The sources every
 * target shares (the ELF cache, kallsyms, the vdso) are symbolize_elf.h's, included here. */
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

struct symbolizer;
struct tsym;

struct sym_result {
	const char *name;
	const char *module;
	uint64_t start;
	enum profile_kind kind;
	char buf[272]; /* a name made up here: "[libc.so.6]" for code no symbol covers */
	/* The function's code where it runs, [lo, hi), when its symbol has a size (user code);
	 * both 0 otherwise. A native function's start is its ELF address, lo its address in
	 * the process. */
	uint64_t lo, hi;
	/* Unnamed code in anonymous executable memory (procmaps_is_anon: JIT code a perf map or
	 * jitdump may name later). An unnamed address anywhere else (no mapping, or memory that is
	 * not executable: a junk frame pointer) is "[unknown]" and never will be named. */
	bool jit_memory;
};

struct tsym_stats {
	char perfmap_path[256];
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
};

/* Symbols of process pid of real uid uid (charged to it) and effective uid euid (its perf map
 * must be owned by one of them). */
int tsym_new(struct symbolizer *sz, pid_t pid, uid_t uid, uid_t euid, uint64_t perfmap_max_bytes,
	     struct tsym **ret);
void tsym_free(struct tsym *ts);
/* Resolve one address; the strings stay valid until the tsym's generation changes. */
void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r);
/* Bumped whenever earlier resolutions may have changed (new JIT symbols, new mappings). */
uint64_t tsym_generation(const struct tsym *ts);
/* Re-read the perf map and the jitdump if they grew or were replaced: one step, bounded in
 * bytes and CPU time per call and per second (symbolize.c, "Reading in steps"). */
void tsym_refresh(struct tsym *ts);
/* Whether the last refresh stopped at a bound with more to read: call tsym_refresh again soon
 * (each call reads one bounded step). */
bool tsym_behind(const struct tsym *ts);
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
void tsym_get_stats(const struct tsym *ts, struct tsym_stats *st);
const char *tsym_perfmap_path(const struct tsym *ts);
/* Whether a mapping of the last read of the maps has a path pred accepts (reads nothing). */
bool tsym_maps_any(const struct tsym *ts, bool (*pred)(const char *path));
/* Executable mappings of anonymous or memfd memory (where JIT code lives) at the last read. */
size_t tsym_anon_exec(const struct tsym *ts);
/* The jitdump read ("" if none) and why one was refused or read no further ("" if neither):
 * valid until the next refresh. */
const char *tsym_jitdump_path(const struct tsym *ts);
const char *tsym_jitdump_problem(const struct tsym *ts);
/* Module name of JIT symbols ("perf-PID.map") and every perf-map entry, in feed order. */
const char *tsym_perfmap_module(const struct tsym *ts);
int tsym_foreach_jit(const struct tsym *ts, int (*fn)(const struct perfmap_sym *, void *),
		     void *userdata);

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
/* Where the JIT function starting at start comes from, if its jitdump said (the first line of
 * its code load's debug info): *file valid until the next refresh. */
bool tsym_jit_source(const struct tsym *ts, uint64_t start, const char **file, uint32_t *line);
/* The source line of JIT code at addr, when its jitdump's debug info said it (issue 32). */
bool tsym_jit_line(struct tsym *ts, uint64_t addr, const char **file, uint32_t *line);

#endif
