// SPDX-License-Identifier: GPL-2.0-only
/* annot.c: per-address sample counts and code snapshots for annotate (see include/kprof/annot.h).
 *
 * Two open-addressing tables with linear probing, grown by doubling at half load: (id, address)
 * -> counts, and id -> extent. Chunks of code are kept in an array sorted by start address, with
 * an insertion sequence number so that assembling code can prefer the oldest bytes (the code as
 * it was first sampled). A lookup by address walks back from the last chunk starting at or before
 * it, no further than max_chunk bytes, since no chunk is longer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/annot.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"

#define INITIAL_SLOTS 256

struct slot {
	uint64_t addr; /* 0: empty */
	uint32_t id;
	uint32_t self;
	uint32_t below;
};

struct rslot {
	uint64_t lo, hi;
	uint32_t key; /* id + 1; 0: empty */
};

struct chunk {
	uint64_t start;
	size_t len;
	uint64_t seq;
	uint32_t id;
	bool shared; /* bytes are a reference of the release callback's, not this store's */
	uint8_t *bytes;
};

struct annot {
	struct annot_limits lim;
	struct slot *slots;
	size_t nslots, used;
	struct rslot *rslots;
	size_t nrslots, rused;
	struct chunk *chunks;
	size_t nchunks, chunks_cap;
	size_t code_bytes, shared_bytes;
	void (*release)(void *ctx, const uint8_t *bytes);
	void *release_ctx;
	uint64_t seq;
	uint64_t dropped, code_dropped, ranges_dropped;
};

int annot_new(const struct annot_limits *lim, struct annot **ret)
{
	struct annot *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	if (lim)
		a->lim = *lim;
	if (!a->lim.max_addrs)
		a->lim.max_addrs = 65536;
	if (!a->lim.max_code_bytes)
		a->lim.max_code_bytes = 2u << 20;
	if (!a->lim.max_chunk)
		a->lim.max_chunk = 64u << 10;
	if (!a->lim.max_ranges)
		a->lim.max_ranges = 16384;
	*ret = a;
	return 0;
}

void annot_free(struct annot *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nchunks; i++) {
		if (!a->chunks[i].shared)
			free(a->chunks[i].bytes);
		else if (a->release)
			a->release(a->release_ctx, a->chunks[i].bytes);
	}
	free(a->chunks);
	free(a->slots);
	free(a->rslots);
	free(a);
}

static struct slot *slot_find(struct slot *slots, size_t nslots, uint32_t id, uint64_t addr)
{
	size_t i = mix64(addr) & (nslots - 1); /* by address alone: annot_prefetch knows no id */

	while (slots[i].addr && !(slots[i].addr == addr && slots[i].id == id))
		i = (i + 1) & (nslots - 1);
	return &slots[i];
}

static int slots_grow(struct annot *a)
{
	size_t n = a->nslots ? a->nslots * 2 : INITIAL_SLOTS;
	struct slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < a->nslots; i++)
		if (a->slots[i].addr)
			*slot_find(s, n, a->slots[i].id, a->slots[i].addr) = a->slots[i];
	free(a->slots);
	a->slots = s;
	a->nslots = n;
	return 0;
}

void annot_prefetch(const struct annot *a, uint64_t addr)
{
	if (a->nslots)
		__builtin_prefetch(&a->slots[mix64(addr) & (a->nslots - 1)]);
}

int annot_add(struct annot *a, uint32_t id, uint64_t addr, bool below)
{
	struct slot *s;
	int err;

	if (!addr)
		return -EINVAL;
	if (a->nslots) {
		s = slot_find(a->slots, a->nslots, id, addr);
		if (s->addr) {
			if (below)
				s->below += s->below < UINT32_MAX;
			else
				s->self += s->self < UINT32_MAX;
			return 0;
		}
	}
	if (a->used >= a->lim.max_addrs) {
		a->dropped++;
		return -E2BIG;
	}
	if (2 * (a->used + 1) > a->nslots && (err = slots_grow(a)) < 0)
		return err;
	s = slot_find(a->slots, a->nslots, id, addr);
	*s = (struct slot){.addr = addr, .id = id, .self = !below, .below = below};
	a->used++;
	return 1;
}

static struct rslot *rslot_find(struct rslot *r, size_t n, uint32_t id)
{
	size_t i = mix64(id) & (n - 1);

	while (r[i].key && r[i].key != id + 1)
		i = (i + 1) & (n - 1);
	return &r[i];
}

int annot_set_range(struct annot *a, uint32_t id, uint64_t lo, uint64_t hi)
{
	struct rslot *r;

	if (hi <= lo || id == UINT32_MAX)
		return -EINVAL;
	if (a->nrslots && rslot_find(a->rslots, a->nrslots, id)->key)
		return 0;
	if (a->rused >= a->lim.max_ranges) {
		a->ranges_dropped++;
		return -E2BIG;
	}
	if (2 * (a->rused + 1) > a->nrslots) {
		size_t n = a->nrslots ? a->nrslots * 2 : INITIAL_SLOTS;
		struct rslot *nr = calloc(n, sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		for (size_t i = 0; i < a->nrslots; i++)
			if (a->rslots[i].key)
				*rslot_find(nr, n, a->rslots[i].key - 1) = a->rslots[i];
		free(a->rslots);
		a->rslots = nr;
		a->nrslots = n;
	}
	r = rslot_find(a->rslots, a->nrslots, id);
	*r = (struct rslot){.lo = lo, .hi = hi, .key = id + 1};
	a->rused++;
	return 0;
}

bool annot_range(const struct annot *a, uint32_t id, uint64_t *lo, uint64_t *hi)
{
	const struct rslot *r;

	if (!a->nrslots || id == UINT32_MAX)
		return false;
	r = rslot_find(a->rslots, a->nrslots, id);
	if (!r->key)
		return false;
	*lo = r->lo;
	*hi = r->hi;
	return true;
}

int annot_foreach_range(const struct annot *a,
			int (*fn)(uint32_t id, uint64_t lo, uint64_t hi, void *userdata),
			void *userdata)
{
	for (size_t i = 0; i < a->nrslots; i++) {
		int r;

		if (a->rslots[i].key &&
		    (r = fn(a->rslots[i].key - 1, a->rslots[i].lo, a->rslots[i].hi, userdata)))
			return r;
	}
	return 0;
}

/* Index of the first chunk whose start is > addr. */
static size_t chunk_upper(const struct annot *a, uint64_t addr)
{
	size_t lo = 0, hi = a->nchunks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->chunks[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool annot_covered(const struct annot *a, uint64_t addr)
{
	for (size_t i = chunk_upper(a, addr); i-- > 0;) {
		const struct chunk *c = &a->chunks[i];

		if (addr - c->start < c->len)
			return true;
		if (addr - c->start >= a->lim.max_chunk)
			break;
	}
	return false;
}

bool annot_has_chunk(const struct annot *a, uint64_t start, size_t len)
{
	for (size_t i = chunk_upper(a, start); i-- > 0 && a->chunks[i].start == start;)
		if (a->chunks[i].len == len)
			return true;
	return false;
}

/* Chunk bytes[0..len) at start for id: a copy made here, or (shared) the caller's reference. */
static int chunk_put(struct annot *a, uint32_t id, uint64_t start, const uint8_t *code, size_t len,
		     bool shared)
{
	_cleanup_free_ uint8_t *copy = NULL;
	size_t at;

	if (!len || start + len < start || !code)
		return -EINVAL;
	if (len > a->lim.max_chunk || a->code_bytes + len > a->lim.max_code_bytes) {
		a->code_dropped++;
		return -E2BIG;
	}
	if (a->nchunks == a->chunks_cap) {
		size_t cap = a->chunks_cap ? 2 * a->chunks_cap : 16;
		struct chunk *c = realloc(a->chunks, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		a->chunks = c;
		a->chunks_cap = cap;
	}
	if (!shared) {
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, code, len);
	}
	at = chunk_upper(a, start);
	memmove(&a->chunks[at + 1], &a->chunks[at], (a->nchunks - at) * sizeof(*a->chunks));
	a->chunks[at] = (struct chunk){.start = start,
				       .len = len,
				       .seq = a->seq++,
				       .id = id,
				       .shared = shared,
				       .bytes = shared ? (uint8_t *)code : TAKE_PTR(copy)};
	a->nchunks++;
	a->code_bytes += len;
	if (shared)
		a->shared_bytes += len;
	return 0;
}

int annot_put_code(struct annot *a, uint32_t id, uint64_t start, const uint8_t *code, size_t len)
{
	return chunk_put(a, id, start, code, len, false);
}

void annot_set_release(struct annot *a, void (*fn)(void *ctx, const uint8_t *bytes), void *ctx)
{
	a->release = fn;
	a->release_ctx = ctx;
}

int annot_put_shared(struct annot *a, uint32_t id, uint64_t start, const uint8_t *code, size_t len)
{
	if (!a->release)
		return -EINVAL; /* nobody to give the reference back to */
	return chunk_put(a, id, start, code, len, true);
}

static int by_seq(const void *x, const void *y)
{
	const struct chunk *const *a = x, *const *b = y;

	return (*a)->seq < (*b)->seq ? -1 : (*a)->seq > (*b)->seq;
}

static size_t fill(const struct chunk *c, uint64_t start, size_t len, uint8_t *out, uint8_t *have)
{
	uint64_t lo = c->start > start ? c->start : start;
	uint64_t hi = c->start + c->len < start + len ? c->start + c->len : start + len;
	size_t n = 0;

	for (uint64_t x = lo; x < hi; x++)
		if (!have[x - start]) {
			out[x - start] = c->bytes[x - c->start];
			have[x - start] = 1;
			n++;
		}
	return n;
}

size_t annot_code(const struct annot *a, uint64_t start, size_t len, annot_match_fn match,
		  void *userdata, uint8_t *out, uint8_t *have)
{
	_cleanup_free_ const struct chunk **over = NULL;
	size_t n = 0, known = 0;

	memset(out, 0, len);
	memset(have, 0, len);
	if (!len || start + len < start || !a->nchunks)
		return 0;
	over = malloc(a->nchunks * sizeof(*over));
	if (!over)
		return 0;
	for (size_t i = 0; i < a->nchunks; i++) {
		const struct chunk *c = &a->chunks[i];

		if (c->start < start + len && c->start + c->len > start)
			over[n++] = c;
	}
	qsort(over, n, sizeof(*over), by_seq);
	for (int pass = match ? 0 : 1; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (pass == 1 || match(over[i]->id, userdata))
				known += fill(over[i], start, len, out, have);
	return known;
}

static int by_addr(const void *x, const void *y)
{
	const struct annot_addr *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int annot_collect(const struct annot *a, annot_match_fn match, void *userdata,
		  struct annot_addr **ret, size_t *ret_n)
{
	_cleanup_free_ struct annot_addr *v = NULL;
	size_t n = 0, m = 0;

	*ret = NULL;
	*ret_n = 0;
	for (size_t i = 0; i < a->nslots; i++)
		n += a->slots[i].addr && match(a->slots[i].id, userdata);
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < a->nslots; i++) {
		const struct slot *s = &a->slots[i];

		if (s->addr && match(s->id, userdata))
			v[n++] = (struct annot_addr){
			    .addr = s->addr, .id = s->id, .self = s->self, .below = s->below};
	}
	qsort(v, n, sizeof(*v), by_addr);
	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].addr == v[i].addr) {
			v[m - 1].self += v[i].self;
			v[m - 1].below += v[i].below;
			if (v[i].id < v[m - 1].id)
				v[m - 1].id = v[i].id;
			continue;
		}
		v[m++] = v[i];
	}
	*ret = TAKE_PTR(v);
	*ret_n = m;
	return 0;
}

void annot_get_stats(const struct annot *a, struct annot_stats *st)
{
	*st = (struct annot_stats){
	    .addrs = a->used,
	    .dropped = a->dropped,
	    .chunks = a->nchunks,
	    .code_bytes = a->code_bytes,
	    .shared_bytes = a->shared_bytes,
	    .code_dropped = a->code_dropped,
	    .ranges = a->rused,
	    .ranges_dropped = a->ranges_dropped,
	    .memory = sizeof(*a) + a->nslots * sizeof(struct slot) +
		      a->nrslots * sizeof(struct rslot) + a->chunks_cap * sizeof(struct chunk) +
		      a->code_bytes - a->shared_bytes,
	};
}
