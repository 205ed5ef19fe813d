/* SPDX-License-Identifier: GPL-2.0-only */
/* maptab.h: the executable file mappings one target had, bounded (maptab.c).
 *
 * What a pprof export needs to place native code: each mapping's address range, file offset,
 * path, build id, and the ELF virtual address of its start (native functions are named by ELF
 * symbols, whose addresses are virtual addresses: start + (symbol - vaddr) is where one runs).
 * The table is the union of every read of the target's maps (attach, exec, re-reads after a
 * dlopen), so that a profile keeps the mappings of code it sampled even after they went away;
 * at most max entries, those past it counted. The process's executable comes first. Pure: no
 * I/O, no globals.
 */
#ifndef KPROF_MAPTAB_H
#define KPROF_MAPTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAPTAB_BUILD_ID_MAX 129 /* hex digits of a 64-byte build id, and the NUL */
#define MAPTAB_DEFAULT_MAX 4096
#define MAPTAB_PATH_MAX 4096 /* bytes of a path, with the NUL; longer ones are cut */

struct maptab_entry {
	uint64_t start, limit; /* [start, limit) */
	uint64_t offset;       /* file offset of start */
	uint64_t vaddr;	       /* ELF virtual address of start, when has_vaddr */
	bool has_vaddr;
	bool exe; /* the process's executable */
	const char *path;
	const char *build_id; /* lower-case hex, "" if unknown */
};

struct maptab;

/* At most max entries (0: MAPTAB_DEFAULT_MAX). 0 or -ENOMEM. */
int maptab_new(size_t max, struct maptab **ret);
void maptab_free(struct maptab *mt);

/* Add e (its strings are copied). A mapping already there (same range, offset and path) is
 * completed instead: a build id, a vaddr or the exe mark learnt since. An executable goes first
 * (after the mappings of the same file already there, before those of an earlier program).
 * 1 added, 0 already there, -ENOSPC table full (counted), -ENOMEM, -EINVAL (limit < start, no
 * path). */
int maptab_add(struct maptab *mt, const struct maptab_entry *e);
size_t maptab_count(const struct maptab *mt);
/* Entry i (0 <= i < count); its strings are the table's. */
const struct maptab_entry *maptab_at(const struct maptab *mt, size_t i);
uint64_t maptab_dropped(const struct maptab *mt);

#endif
