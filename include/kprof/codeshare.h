/* SPDX-License-Identifier: GPL-2.0-only */
/* codeshare.h: copies of file-backed code shared by every target of one owner (codeshare.c).
 *
 * Every process of a host runs the same files, and annotate keeps a copy of the code its
 * samples fell in (annot.h); for code mapped from a file that copy is the same bytes in every
 * process of the file. Here one copy per (owner uid, file, file offset, length) is held for all
 * the targets of that owner: a key found takes a reference, a new one is copied in. Only targets
 * of the same owner share (the copy was read under that owner's rights). Capped by bytes: past
 * the cap nothing is added (counted) and the caller keeps its own copy. An entry goes when its
 * last reference does. Pure: no I/O, no globals.
 */
#ifndef KPROF_CODESHARE_H
#define KPROF_CODESHARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct codeshare;

struct codeshare_key {
	uid_t uid;    /* the target's owner */
	uint64_t dev; /* the file's device (major << 32 | minor) */
	uint64_t ino; /* and inode */
	uint64_t off; /* file offset of the first byte */
	uint32_t len; /* bytes */
};

struct codeshare_stats {
	size_t entries, bytes; /* copies held, their bytes (headers included) */
	size_t refs;	       /* references to them */
	uint64_t hits;	       /* copies found, not read again */
	uint64_t full;	       /* copies not added: the cap was reached */
	size_t memory;	       /* bytes held, tables included */
};

/* max_bytes: the copies' bytes and their headers (0: 64 MiB). */
int codeshare_new(size_t max_bytes, struct codeshare **ret);
/* Every entry is freed: call it after the holders dropped their references. */
void codeshare_free(struct codeshare *cs);

/* The copy of k, with a reference taken, or NULL if none is held. */
const uint8_t *codeshare_get(struct codeshare *cs, const struct codeshare_key *k);
/* Add bytes[0..k->len) as the copy of k with a reference taken (the held copy if k is held);
 * NULL: the cap (counted), no memory, or a zero length. */
const uint8_t *codeshare_put(struct codeshare *cs, const struct codeshare_key *k,
			     const uint8_t *bytes);
/* Drop a reference codeshare_get or codeshare_put gave. */
void codeshare_unref(struct codeshare *cs, const uint8_t *bytes);

void codeshare_get_stats(const struct codeshare *cs, struct codeshare_stats *st);

#endif
