/* SPDX-License-Identifier: GPL-2.0-only */
/* symtab.h: a pure, sorted address-range table for symbol lookup.
 *
 * Used for ELF symbols, kernel symbols and the resolved index of a perf map. Entries are added
 * in any order, then symtab_finish() sorts them; lookups are a binary search. A symbol of size 0
 * reaches up to the next symbol's start (as in /proc/kallsyms), capped by `max_implicit_size`.
 * Names live in one arena owned by the table. No I/O, no globals.
 */
#ifndef KPROF_SYMTAB_H
#define KPROF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct symtab;

struct symtab_sym {
	uint64_t start;
	uint64_t size; /* > 0 after symtab_finish() */
	const char *name;
};

/* max_syms: hard cap on entries (-E2BIG beyond it). */
int symtab_new(size_t max_syms, struct symtab **ret);
void symtab_free(struct symtab *st);

/* Copy name (len bytes, need not be NUL-terminated). size 0 means "up to the next symbol".
 * Returns 0, -EINVAL (empty name or start + size overflows), -E2BIG (cap), -ENOMEM.
 * Adding after symtab_finish() un-finishes the table (lookups return NULL until re-finished). */
int symtab_add(struct symtab *st, uint64_t start, uint64_t size, const char *name, size_t len);

/* Sort, drop exact duplicates, give size-0 symbols their implicit size (up to the next start,
 * at most max_implicit_size). Overlapping sized symbols are kept; lookup returns the one with
 * the greatest start <= addr that contains addr. */
int symtab_finish(struct symtab *st, uint64_t max_implicit_size);

/* NULL if no symbol contains addr or the table is not finished. */
const struct symtab_sym *symtab_lookup(const struct symtab *st, uint64_t addr);

size_t symtab_count(const struct symtab *st);
/* i-th symbol in address order (finished tables only), NULL past the end. */
const struct symtab_sym *symtab_at(const struct symtab *st, size_t i);
/* The index i (symtab_at's) of s, a symbol symtab_lookup or symtab_at returned from st. */
size_t symtab_index(const struct symtab *st, const struct symtab_sym *s);
/* Bytes of memory held (entries + names), for accounting. */
size_t symtab_memory(const struct symtab *st);

#endif
