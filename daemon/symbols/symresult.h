/* SPDX-License-Identifier: GPL-2.0-only */
/* symresult.h: what a symbol source's lookup is asked and answers (struct sym_where, enum
 * sym_hit, struct sym_result), shared by symbolize.h, sources.h and the sources without a
 * cycle between them. */
#ifndef KPROF_DAEMON_SYMRESULT_H
#define KPROF_DAEMON_SYMRESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/profile.h"

struct procmaps_entry;

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
	/* Kept (jit_memory) only because the maps were read before the sample, and they may be
	 * read again (not once a read since failed): maps read again will name it or show it to
	 * be junk. */
	bool maps_stale;
	/* name and module are the symbolizer's host-wide names (strpool.h), valid as long as it:
	 * a profile keeps them without copying (profile_intern_shared). Set with a hit only. */
	bool shared;
};

/* The address a lookup is asked about: where tsym_resolve found it. */
struct sym_where {
	uint64_t addr;
	const struct procmaps_entry *m; /* its mapping as last read, NULL if none (or kernel) */
	size_t idx;			/* m's index in the target's maps */
};

enum sym_hit {
	SYM_MISS, /* not named here; r untouched (the ELF source may set r->module: the file) */
	SYM_NEAR, /* r holds a name not known to cover addr (the nearest symbol below it) */
	SYM_HIT,  /* r holds the name: the walk stops */
};

#endif
