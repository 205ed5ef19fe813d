// SPDX-License-Identifier: GPL-2.0-only
/* lcache.c: resolved source lines kept across exports (see include/kprof/lcache.h).
 *
 * Each entry is one allocation: its header (hash chain, LRU links, address, sizes), the key, then
 * per frame its line and its two strings. A power-of-two array of hash chains (one bucket per
 * 256 bytes of the bound: chains stay short when entries are of the usual size) indexes them by
 * a hash of (key, address); a doubly-linked list orders them by use, the most recent first. A put
 * that passes the bound frees from the list's tail. The bytes counted are the allocations' sizes
 * plus the bucket array, so the bound is what the cache holds.
 */
#include "kprof/lcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hash.h"

struct entry {
	struct entry *chain;	   /* next in its bucket */
	struct entry *prev, *next; /* use order: prev more recent */
	uint64_t hash, addr, seq;
	uint32_t size; /* of the allocation */
	uint16_t nframes;
	bool failed;
	char data[]; /* key NUL, then per frame: uint32 line (unaligned), func NUL, file NUL */
};

struct lcache {
	struct entry **buckets;
	size_t nbuckets, max_bytes;
	struct entry *head, *tail;
	uint64_t seq;
	struct lcache_stats st;
};

static uint64_t key_hash(const char *key, uint64_t addr)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 0x100000001b3ULL;
	return mix64(h ^ mix64(addr));
}

int lcache_new(size_t max_bytes, struct lcache **ret)
{
	struct lcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (max_bytes < (64u << 10))
		max_bytes = 64u << 10;
	c->nbuckets = 256;
	while (c->nbuckets < max_bytes / 256)
		c->nbuckets *= 2;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return -ENOMEM;
	}
	c->max_bytes = max_bytes;
	c->st.max_bytes = max_bytes;
	c->st.bytes = c->nbuckets * sizeof(*c->buckets);
	*ret = c;
	return 0;
}

static void unlink_use(struct lcache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct lcache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void drop(struct lcache *c, struct entry *e)
{
	struct entry **pp = &c->buckets[e->hash & (c->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	unlink_use(c, e);
	c->st.entries--;
	c->st.bytes -= e->size;
	free(e);
}

void lcache_clear(struct lcache *c)
{
	while (c && c->tail)
		drop(c, c->tail);
}

void lcache_free(struct lcache *c)
{
	if (!c)
		return;
	lcache_clear(c);
	free(c->buckets);
	free(c);
}

static struct entry *find(const struct lcache *c, const char *key, uint64_t addr, uint64_t h)
{
	for (struct entry *e = c->buckets[h & (c->nbuckets - 1)]; e; e = e->chain)
		if (e->hash == h && e->addr == addr && !strcmp(e->data, key))
			return e;
	return NULL;
}

int lcache_get(struct lcache *c, const char *key, uint64_t addr, struct srcline_frame *fr,
	       size_t max, size_t *n, bool *failed, uint64_t *seq)
{
	struct entry *e = find(c, key, addr, key_hash(key, addr));
	const char *p;

	if (!e) {
		c->st.misses++;
		return 0;
	}
	c->st.hits++;
	unlink_use(c, e);
	push_front(c, e);
	p = e->data + strlen(e->data) + 1;
	*n = 0;
	for (size_t i = 0; i < e->nframes; i++) {
		uint32_t line;

		memcpy(&line, p, sizeof(line));
		p += sizeof(line);
		if (*n < max)
			fr[(*n)++] = (struct srcline_frame){.func = p, .file = p + strlen(p) + 1, .line = line};
		p += strlen(p) + 1;
		p += strlen(p) + 1;
	}
	*failed = e->failed;
	*seq = e->seq;
	return 1;
}

uint64_t lcache_seq(const struct lcache *c)
{
	return c->seq;
}

int lcache_put(struct lcache *c, const char *key, uint64_t addr, const struct srcline_frame *fr,
	       size_t n, bool failed)
{
	size_t klen = strlen(key), size = sizeof(struct entry) + klen + 1;
	uint64_t h = key_hash(key, addr);
	struct entry *e, *old;
	char *p;

	if (klen > LCACHE_MAX_KEY || n > SRCLINE_MAX_FRAMES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		size += sizeof(uint32_t) + strlen(fr[i].func) + strlen(fr[i].file) + 2;
	if (size > c->max_bytes / 8)
		return -E2BIG;
	e = malloc(size);
	if (!e)
		return -ENOMEM;
	*e = (struct entry){
	    .hash = h, .addr = addr, .seq = ++c->seq, .size = size, .nframes = n, .failed = failed};
	memcpy(e->data, key, klen + 1);
	p = e->data + klen + 1;
	for (size_t i = 0; i < n; i++) {
		size_t a = strlen(fr[i].func) + 1, b = strlen(fr[i].file) + 1;

		memcpy(p, &fr[i].line, sizeof(fr[i].line));
		p += sizeof(fr[i].line);
		memcpy(p, fr[i].func, a);
		memcpy(p + a, fr[i].file, b);
		p += a + b;
	}
	old = find(c, key, addr, h);
	if (old)
		drop(c, old);
	while (c->tail && c->st.bytes + size > c->max_bytes) {
		drop(c, c->tail);
		c->st.evicted++;
	}
	e->chain = c->buckets[h & (c->nbuckets - 1)];
	c->buckets[h & (c->nbuckets - 1)] = e;
	push_front(c, e);
	c->st.entries++;
	c->st.bytes += size;
	return 0;
}

void lcache_get_stats(const struct lcache *c, struct lcache_stats *st)
{
	*st = c->st;
}
