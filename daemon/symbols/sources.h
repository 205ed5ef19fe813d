/* SPDX-License-Identifier: GPL-2.0-only */
/* sources.h: the symbol sources of a target behind one interface (struct sym_source), and
 * their ordered table (sources.c). Each source is one file: the kernel's, the ELF files' and
 * the vdso's symbols (symbolize_elf.c), the jitdump (jitfile.c), the perf map (perfmapfile.c),
 * the HotSpot JVM's perf map on request (jvmmap.c). symbolize.c keeps one state per source per
 * target and walks the table; it names no source. How to add one: docs/ARCHITECTURE.md,
 * "Adding a symbol source". */
#ifndef KPROF_DAEMON_SOURCES_H
#define KPROF_DAEMON_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/perfmap.h"
#include "symbols/symresult.h"

struct budget;
struct procmaps;
struct tfile_step;
struct tsym_start;
struct tsym_stats;

/* What a source knows of its target: symbolize.c's (the start of struct tsym), alive as long
 * as the target's symbols. Sources read it, never change it. */
struct sym_ctx {
	pid_t pid;	 /* in kprofd's PID namespace */
	pid_t nspid;	 /* in the target's own: what its runtime names its files by */
	uid_t uid, euid; /* its files must be owned by one of them; memory is charged to uid */
	uint64_t start_realtime_ns; /* process start: a file older than that is another's */
	uint64_t start_ticks;	    /* process start, as /proc/PID/stat says it */
	uint64_t max_bytes;	    /* of one file read at most (perfmap_max_mb) */
	struct budget *budget;	    /* symbol memory, charged to uid */
	struct procmaps *maps;	    /* its mappings as last read (NULL: none) */
	uint64_t maps_gen;	    /* +1 each time maps is read again */
	int root;     /* its /proc/PID/root as of that read, or -1 (sym_root, symbolize_elf.h) */
	bool gone;    /* the process is gone: no path through /proc/PID (another's by now) */
	bool exiting; /* the last reads after its exit: only files kept open are read */
	bool done;    /* its samples are all named: nothing of the process is read again */
	/* symbolize.c's, for a source that makes the runtime write its names (the JVM): read
	 * every source's files at once, and how many JIT symbols the perf map holds. */
	void (*refresh)(struct sym_ctx *c);
	uint64_t (*jit_symbols)(struct sym_ctx *c);
};

/* Which addresses a source's lookup is asked about. */
enum sym_space {
	SYM_SPACE_USER,	  /* every user address (a JIT's code is anywhere) */
	SYM_SPACE_FILE,	  /* user addresses in a mapping of a file (path "/...") */
	SYM_SPACE_KERNEL, /* kernel addresses */
};

/* One symbol source. Every operation but name is optional (NULL: nothing to do); state is
 * what open made (NULL if none). */
struct sym_source {
	const char *name;
	enum sym_space space;
	/* A new target: *ret its state, or a negative errno (the target is not attached). */
	int (*open)(struct sym_ctx *c, void **ret);
	void (*free)(struct sym_ctx *c, void *state);
	/* Read what the target's files gained, as far as the step allows, and index it (inside
	 * the step's measured CPU time, not at the next lookup). 1: the names changed. A
	 * SYM_SPACE_USER source that has one is asked again when nothing named an address and
	 * a refresh was due (the JIT may have written the name since). */
	int (*refresh)(struct sym_ctx *c, void *state, struct tfile_step *step);
	/* Name w->addr into r (SYM_HIT, SYM_NEAR or SYM_MISS); the strings stay valid until
	 * the next refresh or lookup of this source. The hot path: no I/O but what the first use
	 * of a file costs. */
	enum sym_hit (*lookup)(struct sym_ctx *c, void *state, const struct sym_where *w,
			       struct sym_result *r);
	/* The process exec'd (c->nspid read again): forget its names. */
	void (*exec)(struct sym_ctx *c, void *state);
	/* The target is attached (tsym_start): a source that asks its runtime may begin. */
	void (*start)(struct sym_ctx *c, void *state, const struct tsym_start *o);
	/* Housekeeping, about every second and between drains (nothing read: rate limits of
	 * its own). */
	void (*tick)(struct sym_ctx *c, void *state, uint64_t now_ns);
	/* The target ended and its samples are named: close what is kept open, stop asking. */
	void (*done)(struct sym_ctx *c, void *state);
	/* Its part of the statistics (the fields of struct tsym_stats it owns). */
	void (*stats)(const void *state, struct tsym_stats *st);
	/* Its part of tsym_stats' jit_symbols alone: asked on the lookup's miss path, where the
	 * whole statistics (strings formatted) would cost more than the lookup. */
	uint64_t (*jit_symbols)(const void *state);
	/* The source line of the JIT function starting at start, if the runtime said it. */
	bool (*line)(const void *state, uint64_t start, const char **file, uint32_t *line);
	/* The source line of the JIT code at addr, if the runtime said it (jitdump debug info). */
	bool (*addr_line)(const void *state, uint64_t addr, const char **file, uint32_t *line);
	/* Every JIT function it names, for exact mode's probes and the path tracer. */
	int (*each)(const void *state, int (*fn)(const struct perfmap_sym *, void *),
		    void *userdata);
};

/* The sources, in the order a lookup asks them (sources.c): the first SYM_HIT names an
 * address; a SYM_NEAR stands unless a later source hits. NULL-terminated. */
#define SYM_SOURCES_MAX 16
extern const struct sym_source *const sym_sources[SYM_SOURCES_MAX + 1];

extern const struct sym_source sym_source_kernel;  /* symbolize_elf.c */
extern const struct sym_source sym_source_elf;	   /* symbolize_elf.c */
extern const struct sym_source sym_source_jitdump; /* jitfile.c */
extern const struct sym_source sym_source_perfmap; /* perfmapfile.c */
extern const struct sym_source sym_source_vdso;	   /* symbolize_elf.c */
extern const struct sym_source sym_source_jvm;	   /* jvmmap.c */

#endif
