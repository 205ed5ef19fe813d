/* SPDX-License-Identifier: GPL-2.0-only */
/* lcache.h: resolved source lines kept across exports (lcache.c; issue 32).
 *
 * Keyed by (file key, ELF address): the file key is what names one build of one file, its GNU
 * build id in hex (or, for a file without one, a key the caller makes of its identity), so the
 * answer for an address holds for every process that maps that build, and for every later
 * export. Each entry is the address's frames (innermost first, as the helper gave them; none
 * when the file has no line for it), or a mark that the address could not be resolved (the
 * helper died or hung on it: it is not asked again while the entry is kept). Bounded in bytes:
 * the least recently used entries go first. Pure: no I/O.
 */
#ifndef KPROF_LCACHE_H
#define KPROF_LCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/srcline.h"

#define LCACHE_MAX_KEY 160 /* bytes of a file key */

struct lcache;

struct lcache_stats {
	uint64_t entries, bytes, max_bytes;
	uint64_t hits, misses, evicted;
};

/* A cache of at most max_bytes (entries and their index; at least 64 KiB). 0 or -ENOMEM. */
int lcache_new(size_t max_bytes, struct lcache **ret);
void lcache_free(struct lcache *c);

/* The entry of (key, addr): 1 with its frames in fr[0..*n) (at most max; the strings are the
 * cache's, valid until the next lcache_put), *failed set for an address that could not be
 * resolved, and *seq the number of the put that made it (lcache_seq); 0 if there is none. A hit
 * makes the entry the most recently used. */
int lcache_get(struct lcache *c, const char *key, uint64_t addr, struct srcline_frame *fr,
	       size_t max, size_t *n, bool *failed, uint64_t *seq);

/* The number of the last put (from 1; 0: none yet): an entry whose seq is above what this said
 * at some moment was made after it. */
uint64_t lcache_seq(const struct lcache *c);

/* Keep the frames fr[0..n) of (key, addr) (n 0: no line there), or with failed the mark that it
 * could not be resolved; replaces an entry of the same (key, addr). Evicts the least recently
 * used entries to stay within the bound. 0, -EINVAL (a key longer than LCACHE_MAX_KEY, more than
 * SRCLINE_MAX_FRAMES frames), -E2BIG (one entry larger than an eighth of the cache), -ENOMEM. */
int lcache_put(struct lcache *c, const char *key, uint64_t addr, const struct srcline_frame *fr,
	       size_t n, bool failed);

void lcache_get_stats(const struct lcache *c, struct lcache_stats *st);

/* Empty it (a reload that changes what files are read). */
void lcache_clear(struct lcache *c);

#endif
