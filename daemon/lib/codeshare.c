// SPDX-License-Identifier: GPL-2.0-only
/* codeshare.c: copies of file-backed code shared by every target of one owner (see
 * include/kprof/codeshare.h).
 *
 * A chained hash table (a power of two of buckets, at most one entry a bucket on average) of
 * entries that hold their bytes behind their header, so a holder's pointer to the bytes finds
 * its entry (codeshare_unref) without a lookup. Entries are counted by reference and freed at
 * the last one; the cap counts the entries' bytes and headers.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/codeshare.h"
#include "kprof/hash.h"

#define BUCKETS_MIN 256u

struct cs_entry {
	struct cs_entry *next;
	struct codeshare_key key;
	uint64_t hash;
	size_t refs;
	uint8_t bytes[];
};

struct codeshare {
	size_t max_bytes;
	struct cs_entry **bucket;
	size_t nbuckets, n, bytes, refs;
	uint64_t hits, full;
};

static int grow(struct codeshare *cs)
{
	size_t want = cs->nbuckets ? cs->nbuckets * 2 : BUCKETS_MIN;
	struct cs_entry **b = calloc(want, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < cs->nbuckets; i++)
		for (struct cs_entry *e = cs->bucket[i], *next; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (want - 1)];
			b[e->hash & (want - 1)] = e;
		}
	free(cs->bucket);
	cs->bucket = b;
	cs->nbuckets = want;
	return 0;
}

/* The table starts at BUCKETS_MIN: a lookup never meets an empty table. */
int codeshare_new(size_t max_bytes, struct codeshare **ret)
{
	_cleanup_free_ struct codeshare *cs = calloc(1, sizeof(*cs));

	if (!cs || grow(cs) < 0)
		return -ENOMEM;
	cs->max_bytes = max_bytes ?: 64u << 20;
	*ret = TAKE_PTR(cs);
	return 0;
}

void codeshare_free(struct codeshare *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->nbuckets; i++)
		for (struct cs_entry *e = cs->bucket[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(cs->bucket);
	free(cs);
}

static uint64_t key_hash(const struct codeshare_key *k)
{
	return mix64(mix64(mix64(k->dev ^ (uint64_t)k->uid << 32) ^ k->ino) ^ k->off) ^ k->len;
}

static int key_eq(const struct codeshare_key *a, const struct codeshare_key *b)
{
	return a->uid == b->uid && a->dev == b->dev && a->ino == b->ino && a->off == b->off &&
	       a->len == b->len;
}

static struct cs_entry *find(const struct codeshare *cs, const struct codeshare_key *k, uint64_t h)
{
	for (struct cs_entry *e = cs->bucket[h & (cs->nbuckets - 1)]; e; e = e->next)
		if (e->hash == h && key_eq(&e->key, k))
			return e;
	return NULL;
}

const uint8_t *codeshare_get(struct codeshare *cs, const struct codeshare_key *k)
{
	struct cs_entry *e;

	if (!cs || !k)
		return NULL;
	e = find(cs, k, key_hash(k));
	if (!e)
		return NULL;
	e->refs++;
	cs->refs++;
	cs->hits++;
	return e->bytes;
}

const uint8_t *codeshare_put(struct codeshare *cs, const struct codeshare_key *k,
			     const uint8_t *bytes)
{
	uint64_t h;
	struct cs_entry *e, **b;

	if (!cs || !k || !bytes || !k->len)
		return NULL;
	h = key_hash(k);
	e = find(cs, k, h);
	if (e) {
		e->refs++;
		cs->refs++;
		return e->bytes;
	}
	if (cs->bytes + sizeof(*e) + k->len > cs->max_bytes) {
		cs->full++;
		return NULL;
	}
	if (cs->n + 1 > cs->nbuckets && grow(cs) < 0)
		return NULL;
	e = malloc(sizeof(*e) + k->len);
	if (!e)
		return NULL;
	*e = (struct cs_entry){.key = *k, .hash = h, .refs = 1};
	memcpy(e->bytes, bytes, k->len);
	b = &cs->bucket[h & (cs->nbuckets - 1)];
	e->next = *b;
	*b = e;
	cs->n++;
	cs->bytes += sizeof(*e) + k->len;
	cs->refs++;
	return e->bytes;
}

void codeshare_unref(struct codeshare *cs, const uint8_t *bytes)
{
	struct cs_entry *e, **pp;

	if (!cs || !bytes)
		return;
	e = (struct cs_entry *)(void *)((uintptr_t)bytes - offsetof(struct cs_entry, bytes));
	cs->refs--;
	if (--e->refs)
		return;
	for (pp = &cs->bucket[e->hash & (cs->nbuckets - 1)]; *pp != e; pp = &(*pp)->next)
		;
	*pp = e->next;
	cs->n--;
	cs->bytes -= sizeof(*e) + e->key.len;
	free(e);
}

void codeshare_get_stats(const struct codeshare *cs, struct codeshare_stats *st)
{
	*st = (struct codeshare_stats){
	    .entries = cs->n,
	    .bytes = cs->bytes,
	    .refs = cs->refs,
	    .hits = cs->hits,
	    .full = cs->full,
	    .memory = sizeof(*cs) + cs->nbuckets * sizeof(*cs->bucket) + cs->bytes,
	};
}
