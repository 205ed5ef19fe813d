/* SPDX-License-Identifier: GPL-2.0-only */
/* annot.h: a pure, bounded store of what `kprofctl annotate` needs of one target's samples: the
 * sampled user leaf addresses with their counts, per function id, and the code bytes around them
 * as they were when the function was first sampled (ARCHITECTURE.md §2.6).
 *
 * Counts: one entry per (function id, leaf address), in an open-addressing table: `self` counts
 * the samples whose leaf this was (the function's self samples in the profile), `below` those
 * whose user leaf this was but whose self went to a frame under it (the kernel, a probe of
 * kprof's own). Entries are never removed; at max_addrs a new address's samples are dropped and
 * counted, never silently lost. Keying by id as well as address keeps the counts of code that
 * reused an address (a JIT that freed and recompiled) apart, and lets the per-function sums
 * equal the profile's self counts exactly (the caller maps ids through profile_canon).
 *
 * Code: chunks of bytes copied from the target, each tagged with the id whose sample asked for
 * it, kept in address order (overlaps allowed: the first chunk of an owner wins when code is
 * assembled for it, then the oldest). Within max_code_bytes in all, each at most max_chunk; a
 * chunk that does not fit is counted. A chunk's bytes are the store's own copy
 * (annot_put_code) or a reference the caller gives it (annot_put_shared: code shared with other
 * targets, codeshare.h), handed back through the release callback when the store is freed; the
 * memory figure counts only its own. Ranges: the [lo, hi) extent of a function id's code, when a
 * symbol said it at its first sample, at most max_ranges ids.
 * No I/O, no logging, no globals.
 */
#ifndef KPROF_ANNOT_H
#define KPROF_ANNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct annot;

struct annot_limits {
	size_t max_addrs;      /* (id, address) entries, default 65536 */
	size_t max_code_bytes; /* code bytes kept in all, default 2 MiB */
	size_t max_chunk;      /* bytes of one chunk, default 64 KiB */
	size_t max_ranges;     /* function extents, default 16384 */
};

struct annot_addr {
	uint64_t addr;
	uint32_t id;
	uint32_t self;
	uint32_t below;
};

struct annot_stats {
	size_t addrs;		 /* entries */
	uint64_t dropped;	 /* samples not kept per address: max_addrs reached */
	size_t chunks;		 /* code chunks */
	size_t code_bytes;	 /* their bytes */
	size_t shared_bytes;	 /* of code_bytes, those of shared chunks (not in memory) */
	uint64_t code_dropped;	 /* chunks refused: max_code_bytes reached */
	size_t ranges;		 /* function extents kept */
	uint64_t ranges_dropped; /* extents not kept: max_ranges reached */
	size_t memory;		 /* bytes held */
};

int annot_new(const struct annot_limits *lim, struct annot **ret);
void annot_free(struct annot *a);

/* One sample whose user leaf is addr, in function id; below: its self went to a frame under the
 * leaf. 1 if (id, addr) is new, 0 if it was there, -E2BIG when the table is full (counted),
 * -EINVAL for address 0. */
int annot_add(struct annot *a, uint32_t id, uint64_t addr, bool below);

/* A hint, no effect on results: start fetching what annot_add(.., addr, ..) reads first, so that
 * a sample can issue it before its frames are named. */
void annot_prefetch(const struct annot *a, uint64_t addr);

/* Function id's extent: set once (later calls are ignored: 0), -E2BIG at the cap (counted),
 * -EINVAL if hi <= lo. annot_range: true and the extent if one was set. */
int annot_set_range(struct annot *a, uint32_t id, uint64_t lo, uint64_t hi);
bool annot_range(const struct annot *a, uint32_t id, uint64_t *lo, uint64_t *hi);

/* Whether some chunk holds addr. */
bool annot_covered(const struct annot *a, uint64_t addr);
/* Whether a chunk of exactly [start, start + len) is kept (a function's own, read for it). */
bool annot_has_chunk(const struct annot *a, uint64_t start, size_t len);
/* Keep a copy of code[0..len) mapped at start, asked for by function id. -E2BIG (counted) when
 * it is longer than max_chunk or does not fit in max_code_bytes, -EINVAL for an empty one or
 * one that wraps, -ENOMEM. */
int annot_put_code(struct annot *a, uint32_t id, uint64_t start, const uint8_t *code, size_t len);
/* Who takes back the references of shared chunks (called once per chunk at annot_free). */
void annot_set_release(struct annot *a, void (*fn)(void *ctx, const uint8_t *bytes), void *ctx);
/* As annot_put_code, but the chunk is code[0..len) itself, a reference the store now holds (0)
 * and gives back through the release callback; on an error the caller keeps it. -EINVAL
 * without a release callback. */
int annot_put_shared(struct annot *a, uint32_t id, uint64_t start, const uint8_t *code, size_t len);

typedef bool (*annot_match_fn)(uint32_t id, void *userdata);
/* The kept bytes of [start, start + len) into out, have[i] = 1 where byte i is known (0 and out
 * left 0 elsewhere): from chunks whose id match() accepts first (match may be NULL), then the
 * oldest. Returns the count of known bytes. */
size_t annot_code(const struct annot *a, uint64_t start, size_t len, annot_match_fn match,
		  void *userdata, uint8_t *out, uint8_t *have);

/* The entries whose id match() accepts, sorted by address, one per address (the ids' counts
 * summed, id the first one's). *ret is malloc'd (NULL when *n is 0). -ENOMEM. */
int annot_collect(const struct annot *a, annot_match_fn match, void *userdata,
		  struct annot_addr **ret, size_t *n);
/* Every id that has an extent, for a lookup by address: calls fn until it returns non-zero
 * (that value is returned). */
int annot_foreach_range(const struct annot *a,
			int (*fn)(uint32_t id, uint64_t lo, uint64_t hi, void *userdata),
			void *userdata);

void annot_get_stats(const struct annot *a, struct annot_stats *st);

#endif
