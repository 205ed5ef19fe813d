/* SPDX-License-Identifier: GPL-2.0-only */
/* strpool.h: strings interned once for the whole host (strpool.c).
 *
 * The pointer strpool_intern hands out stays valid until strpool_free and is the same for equal
 * strings, so a holder (a profile) may keep it instead of a copy and compare it by address. Its
 * 64-bit FNV-1a hash (strpool_hash, what a profile hashes names with) is stored in front of it
 * (strpool_hash_of): a holder hashes no string. Capped by bytes: at the cap a new string is not
 * interned (NULL, counted) and its caller keeps its own copy. Nothing is freed alone. Pure: no
 * I/O, no globals.
 */
#ifndef KPROF_STRPOOL_H
#define KPROF_STRPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct strpool;

struct strpool_stats {
	size_t strs, str_bytes; /* interned, their bytes (hashes included) */
	uint64_t full;		/* strings not interned: the cap was reached */
	size_t bytes;		/* memory held */
};

/* max_bytes: the strings' bytes, their hashes included, and the slot table (0: 32 MiB). */
int strpool_new(size_t max_bytes, struct strpool **ret);
void strpool_free(struct strpool *p);

/* FNV-1a, 64 bits. */
static inline uint64_t strpool_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The interned copy of s, or NULL: the cap reached (counted) or no memory. */
const char *strpool_intern(struct strpool *p, const char *s);
/* strpool_hash of a string strpool_intern returned, read where it is stored. */
static inline uint64_t strpool_hash_of(const char *interned)
{
	uint64_t h;

	memcpy(&h, interned - sizeof(h), sizeof(h));
	return h;
}
void strpool_get_stats(const struct strpool *p, struct strpool_stats *st);

#endif
