/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize_elf.h: the symbol sources every target shares (symbolize_elf.c): struct symbolizer,
 * its ELF cache and its budget; and what every source uses: the target's root, a JIT symbol
 * made a result. Included by symbolize.h. */
#ifndef KPROF_DAEMON_SYMBOLIZE_ELF_H
#define KPROF_DAEMON_SYMBOLIZE_ELF_H

#include <stdint.h>

#include "symbols/symresult.h"

struct perfmap;
struct sym_ctx;
struct symbolizer;

/* Symbol memory of all targets at most total_bytes, of one non-root uid's per_uid_bytes. */
int symbolizer_new(uint64_t total_bytes, uint64_t per_uid_bytes, struct symbolizer **ret);
void symbolizer_set_budget(struct symbolizer *sz, uint64_t total_bytes, uint64_t per_uid_bytes);
void symbolizer_get_stats(const struct symbolizer *sz, uint64_t *bytes, uint64_t *refusals);
/* The host-wide names (strpool.h): how many are held, and how many were not (its cap reached:
 * their profiles keep copies). */
void symbolizer_names_stats(const struct symbolizer *sz, uint64_t *names, uint64_t *full);
void symbolizer_free(struct symbolizer *sz);

/* A new fd (O_PATH) of the target's root, kept since the last read of its maps (its /tmp and
 * its files are inside it; a process that exited is still reached), or a negative errno. */
int sym_root(const struct sym_ctx *c);
/* The start of the state of a source whose names are a table of JIT symbols (the perf map, the
 * jitdump): its lookup is sym_lookup_jit. */
struct sym_jit {
	struct perfmap *syms;
	char module[64]; /* of its symbols: "perf-NSPID.map", "jit-NSPID.dump" */
};
/* The symbol of the table at w->addr (perfmap_lookup_frame) names it as JIT code of the
 * table's module, its size (if it has one) its extent: SYM_HIT, or SYM_MISS. */
enum sym_hit sym_lookup_jit(struct sym_ctx *c, void *state, const struct sym_where *w,
			    struct sym_result *r);

#endif
