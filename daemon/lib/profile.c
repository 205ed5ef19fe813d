// SPDX-License-Identifier: GPL-2.0-only
/* profile.c: one target's stacks, functions and flat profile (see include/kprof/profile.h):
 * interning, adding, names given late. What readers see (views, folded text) is in
 * profile_view.c, the address cache and prefetch hints in profile_cache.c, the tables they
 * share in profile_internal.h.
 *
 * Three open-addressing hash tables with linear probing and power-of-two sizes, grown at half
 * load: functions (key: kind, start, name, module), stacks (key: the id sequence, stored once
 * in a shared uint32 arena) and the address cache. The arena holds each id sequence once: the
 * same stack in another thread (a pool's workers) points at the first one's ids, found by a
 * fourth table keyed by the sequence alone, so a stack costs its ids once per process, not once
 * per thread. Flat counts are updated on each add, so a
 * report is a sort of the function array and never a walk over the stacks. A generation mark
 * per function makes `total` count a function once per stack under recursion.
 *
 * The per-sample path (a cache lookup per frame, then a stack lookup) is bound by cache misses
 * when most samples are new stacks, so its tables are laid out for them: a stack slot keeps 32
 * bits of the stack's hash beside its index, so probing past other stacks reads no stack
 * record, and a cache slot keeps the address and the id together. The stack hash mixes each
 * pair of ids with its position independently and sums, so its cost does not grow with a
 * chain of dependent multiplications along the stack.
 *
 * Names given late (ARCHITECTURE.md §2.2.1): a frame nothing named when its sample came is
 * interned per address (profile_intern_unresolved: kind unknown, start = the address) and listed
 * as pending, at most max_unresolved of them. When a symbol source later covers it,
 * profile_rename re-points that function: in place when no function has the new identity yet,
 * else it becomes an alias of the one that has (canon[]), left out of the function index. An
 * alias is folded away by profile_commit_renames: every stack's ids are mapped to their
 * canonical ids, stacks that became equal are merged, and the flat counts are recounted from
 * the stacks (total still counts a function once per stack). So readers never see an alias in
 * a stack; the flat views skip them, and HCCT contexts, which are keyed by id, are relabelled
 * with profile_canon by their readers. None of this touches the per-sample path.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "kprof/profile.h"
#include "profile_internal.h"

int profile_new(const struct profile_limits *lim, struct profile **ret)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (lim)
		p->lim = *lim;
	if (!p->lim.max_funcs)
		p->lim.max_funcs = 1u << 20;
	if (!p->lim.max_stacks)
		p->lim.max_stacks = 1u << 18;
	if (!p->lim.max_stack_ids)
		p->lim.max_stack_ids = 8u << 20;
	if (!p->lim.max_cache)
		p->lim.max_cache = 1u << 18;
	if (!p->lim.max_unresolved)
		p->lim.max_unresolved = 1u << 16;
	*ret = p;
	return 0;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfuncs; i++) {
		if (!p->funcs[i].f.shared) {
			free((char *)p->funcs[i].f.name);
			free((char *)p->funcs[i].f.module);
		}
		free((char *)p->funcs[i].f.file);
	}
	free(p->funcs);
	idxtab_release(&p->func_tab);
	profile_same_release(p);
	free(p->stacks);
	free(p->stack_slots);
	free(p->seg_slots);
	free(p->ids);
	free(p->cache);
	free(p->pending);
	free(p->canon);
	free(p);
}

/* Rebuild a slot index of n entries whose hashes hash_of(i) gives, into nslots slots. */
/* Rebuild the stack slots into want slots. */
static int stack_reindex(struct profile *p, size_t want)
{
	struct sslot *s = calloc(want, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		uint64_t h = p->stacks[i].hash;
		size_t j = h & (want - 1);

		while (s[j].idx)
			j = (j + 1) & (want - 1);
		s[j] = (struct sslot){.idx = i + 1, .tag = h >> 32};
	}
	free(p->stack_slots);
	p->stack_slots = s;
	p->stack_nslots = want;
	return 0;
}

/* A function's hash from its strings' (strpool_hash: FNV-1a, what the host-wide name cache
 * keeps beside each name, so profile_intern_shared hashes no string). */
static uint64_t func_hash_of(uint64_t name_hash, uint64_t module_hash, uint64_t start,
			     enum profile_kind kind)
{
	return mix64(name_hash ^ mix64(module_hash + kind) ^ start * 0x9e3779b97f4a7c15ULL);
}

static uint64_t func_hash(const char *name, const char *module, uint64_t start,
			  enum profile_kind kind)
{
	return func_hash_of(hash_str(0xcbf29ce484222325ULL, name),
			    hash_str(0xcbf29ce484222325ULL, module), start, kind);
}

static uint64_t func_hash_at(const void *ctx, uint32_t i)
{
	return ((const struct profile *)ctx)->funcs[i].hash;
}

/* The id of the function of this identity and hash, or -1. */
static int func_find(const struct profile *p, uint64_t h, const char *name, const char *module,
		     uint64_t start, enum profile_kind kind)
{
	size_t j;

	if (!p->func_tab.nslots)
		return -1;
	idxtab_probe(&p->func_tab, h, j) {
		const struct pfunc *f = &p->funcs[p->func_tab.slot[j] - 1];

		/* Shared names are compared by address: equal strings are one string. */
		if (f->hash == h && f->f.start == start && f->f.kind == kind &&
		    (f->f.name == name || !strcmp(f->f.name, name)) &&
		    (f->f.module == module || !strcmp(f->f.module, module)))
			return p->func_tab.slot[j] - 1;
	}
	return -1;
}

static void func_link(struct profile *p, uint32_t id)
{
	size_t j;

	idxtab_probe(&p->func_tab, p->funcs[id].hash, j)
		;
	p->func_tab.slot[j] = id + 1;
}

/* Take id out of the function index. */
static void func_unlink(struct profile *p, uint32_t id)
{
	idxtab_remove(&p->func_tab, p->funcs[id].hash, id, func_hash_at, p);
}

/* f's names become name and module: copies of them, or (shared) the caller's strings, which
 * outlive p. The old ones are freed if f owned them. 0 or -ENOMEM (f unchanged). */
static int func_names(struct profile *p, struct pfunc *f, const char *name, const char *module,
		      bool shared)
{
	char *n = NULL, *m = NULL;

	if (!shared) {
		n = strdup(name);
		m = strdup(module);
		if (!n || !m) {
			free(n);
			free(m);
			return -ENOMEM;
		}
		p->str_bytes += strlen(n) + strlen(m) + 2;
	}
	if (f->f.name && !f->f.shared) {
		p->str_bytes -= strlen(f->f.name) + strlen(f->f.module) + 2;
		free((char *)f->f.name);
		free((char *)f->f.module);
	}
	f->f.name = shared ? name : n;
	f->f.module = shared ? module : m;
	f->f.shared = shared;
	return 0;
}

static int intern(struct profile *p, const char *name, const char *module, uint64_t h,
		  uint64_t start, enum profile_kind kind, bool shared)
{
	int id, err;

	id = func_find(p, h, name, module, start, kind);
	if (id >= 0)
		return id;
	if (p->frozen)
		return -ENOSPC;
	if (p->nfuncs >= p->lim.max_funcs)
		return -E2BIG;
	err = array_grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*p->funcs), 64);
	if (err < 0)
		return err;
	err = idxtab_reserve(&p->func_tab, p->nfuncs + 1, 256, func_hash_at, p);
	if (err < 0)
		return err;
	p->funcs[p->nfuncs] = (struct pfunc){.f = {.start = start, .kind = kind}, .hash = h};
	err = func_names(p, &p->funcs[p->nfuncs], name, module, shared);
	if (err < 0)
		return err;
	func_link(p, p->nfuncs);
	return p->nfuncs++;
}

int profile_intern(struct profile *p, const char *name, const char *module, uint64_t start,
		   enum profile_kind kind)
{
	if (!name || !module)
		return -EINVAL;
	return intern(p, name, module, func_hash(name, module, start, kind), start, kind, false);
}

int profile_intern_shared(struct profile *p, const char *name, uint64_t name_hash,
			  const char *module, uint64_t module_hash, uint64_t start,
			  enum profile_kind kind)
{
	if (!name || !module)
		return -EINVAL;
	return intern(p, name, module, func_hash_of(name_hash, module_hash, start, kind), start,
		      kind, true);
}

int profile_set_source(struct profile *p, uint32_t id, const char *file, uint32_t line)
{
	struct profile_func *f;
	char *copy;

	if (id >= p->nfuncs || !file || !*file)
		return -EINVAL;
	f = &p->funcs[id].f;
	if (f->file)
		return 0; /* the first source said stays */
	copy = strdup(file);
	if (!copy)
		return -ENOMEM;
	p->str_bytes += strlen(copy) + 1;
	f->file = copy;
	f->line = line;
	return 0;
}

/* ---- names given late ---- */

int profile_intern_unresolved(struct profile *p, uint64_t addr, const char *module)
{
	char name[32];
	int id, err;

	if (!addr || !module)
		return -EINVAL;
	snprintf(name, sizeof(name), "0x%llx", (unsigned long long)addr);
	id = func_find(p, func_hash(name, module, addr, PROFILE_KIND_UNKNOWN), name, module, addr,
		       PROFILE_KIND_UNKNOWN);
	if (id >= 0)
		return id;
	if (p->frozen)
		return -ENOSPC;
	if (p->npending >= p->lim.max_unresolved) {
		p->unresolved_over++;
		return -E2BIG;
	}
	err = array_grow((void **)&p->pending, &p->pending_cap, p->npending + 1,
			 sizeof(*p->pending), 64);
	if (err < 0)
		return err;
	id = profile_intern(p, name, module, addr, PROFILE_KIND_UNKNOWN);
	if (id >= 0) {
		p->pending[p->npending++] = id;
		p->by_addr = true;
	}
	return id;
}

const uint32_t *profile_pending(const struct profile *p, size_t *n)
{
	*n = p->npending;
	return p->pending;
}

uint32_t profile_canon(const struct profile *p, uint32_t id)
{
	/* An alias's target is never an alias itself when it is made; the bound only guards
	 * against a cycle no caller can build. */
	for (size_t hops = 0; is_alias(p, id) && hops < 64; hops++)
		id = p->canon[id] - 1;
	return id;
}

bool profile_has_aliases(const struct profile *p)
{
	return p->merged > 0;
}

/* Make id an alias of to: out of the index, shown under to's identity. */
static int func_alias(struct profile *p, uint32_t id, uint32_t to)
{
	struct pfunc *f = &p->funcs[id];
	int err;

	if (id >= p->ncanon) {
		size_t cap = p->ncanon, want = p->funcs_cap;

		err = array_grow((void **)&p->canon, &cap, want, sizeof(*p->canon), 64);
		if (err < 0)
			return err;
		memset(p->canon + p->ncanon, 0, (cap - p->ncanon) * sizeof(*p->canon));
		p->ncanon = cap;
	}
	err = func_names(p, f, p->funcs[to].f.name, p->funcs[to].f.module, p->funcs[to].f.shared);
	if (err < 0)
		return err;
	func_unlink(p, id);
	f->f.start = p->funcs[to].f.start;
	f->f.kind = p->funcs[to].f.kind;
	p->canon[id] = to + 1;
	profile_same_forget(p);
	p->merges = true;
	p->merged++;
	return 0;
}

int profile_rename(struct profile *p, uint32_t id, const char *name, const char *module,
		   uint64_t start, enum profile_kind kind)
{
	struct pfunc *f;
	uint64_t h;
	int to, err;

	if (id >= p->nfuncs || is_alias(p, id) || !name || !module)
		return -EINVAL;
	f = &p->funcs[id];
	h = func_hash(name, module, start, kind);
	to = func_find(p, h, name, module, start, kind);
	if (to == (int)id)
		return id;
	if (to >= 0) {
		err = func_alias(p, id, to);
		if (err < 0)
			return err;
		p->renamed++;
		return to;
	}
	err = func_names(p, f, name, module, false);
	if (err < 0)
		return err;
	func_unlink(p, id);
	f->f.start = start;
	f->f.kind = kind;
	f->hash = h;
	func_link(p, id);
	profile_same_forget(p);
	p->renamed++;
	return id;
}

const struct profile_func *profile_func_get(const struct profile *p, uint32_t id)
{
	return id < p->nfuncs ? &p->funcs[id].f : NULL;
}

size_t profile_nfuncs(const struct profile *p)
{
	return p->nfuncs;
}

/* A kernel frame, resolved or not (an unresolved one keeps the kernel's module name). */
static void count_flat(struct profile *p, const uint32_t *ids, size_t n, uint64_t count)
{
	bool kernel = false;

	p->gen++;
	for (size_t i = 0; i < n; i++) {
		struct pfunc *f = &p->funcs[ids[i]];

		kernel |= profile_func_is_kernel(&f->f);
		if (f->mark != p->gen) {
			f->mark = p->gen;
			f->f.total += count;
		}
	}
	if (n)
		p->funcs[ids[n - 1]].f.self += count;
	p->samples += count;
	if (kernel)
		p->kernel_samples += count;
}

/* The stack (tid, ids[0..n)), or NULL and the free slot where it belongs. */
static struct pstack *stack_find(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
				 uint64_t h, size_t *slot)
{
	size_t j;

	for (j = h & (p->stack_nslots - 1); p->stack_slots[j].idx;
	     j = (j + 1) & (p->stack_nslots - 1)) {
		struct pstack *s;

		if (p->stack_slots[j].tag != (uint32_t)(h >> 32))
			continue;
		s = &p->stacks[p->stack_slots[j].idx - 1];
		if (s->hash == h && s->len == n && s->tid == tid &&
		    (n == 0 || !memcmp(p->ids + s->off, ids, n * sizeof(*ids))))
			return s;
	}
	*slot = j;
	return NULL;
}

/* The stack whose ids are the sequence ids[0..n) of hash hs (hash_ids), or NULL with *slot
 * where it goes in the segment table. */
static const struct pstack *seg_find(const struct profile *p, const uint32_t *ids, size_t n,
				     uint64_t hs, size_t *slot)
{
	size_t j;

	for (j = hs & (p->seg_nslots - 1); p->seg_slots[j].idx; j = (j + 1) & (p->seg_nslots - 1)) {
		const struct pstack *s;

		if (p->seg_slots[j].tag != (uint32_t)(hs >> 32))
			continue;
		s = &p->stacks[p->seg_slots[j].idx - 1];
		if ((s->hash ^ mix64(s->tid)) == hs && s->len == n &&
		    (n == 0 || !memcmp(p->ids + s->off, ids, n * sizeof(*ids))))
			return s;
	}
	*slot = j;
	return NULL;
}

/* Rebuild the segment table into want slots: the first stack of each id sequence. */
static int seg_reindex(struct profile *p, size_t want)
{
	struct sslot *s = calloc(want, sizeof(*s));
	size_t slot;

	if (!s)
		return -ENOMEM;
	free(p->seg_slots);
	p->seg_slots = s;
	p->seg_nslots = want;
	p->nsegs = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct pstack *st = &p->stacks[i];
		uint64_t hs = st->hash ^ mix64(st->tid);

		if (seg_find(p, p->ids + st->off, st->len, hs, &slot))
			continue;
		p->seg_slots[slot] = (struct sslot){.idx = i + 1, .tag = hs >> 32};
		p->nsegs++;
	}
	return 0;
}

static int stack_insert(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n, uint64_t h)
{
	uint64_t hs = h ^ mix64(tid);
	const struct pstack *same;
	size_t slot, seg = 0;
	uint32_t off = 0;
	int err;

	if (p->nstacks >= p->lim.max_stacks)
		return -ENOSPC;
	if ((p->nsegs + 1) * 2 > p->seg_nslots) {
		err = seg_reindex(p, p->seg_nslots ? p->seg_nslots * 2 : 1024);
		if (err < 0)
			return err;
	}
	same = seg_find(p, ids, n, hs, &seg);
	if (same)
		off = same->off; /* read now: growing p->stacks may move it */
	else if (p->nids + n > p->lim.max_stack_ids)
		return -ENOSPC;
	if ((err = array_grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1,
			      sizeof(*p->stacks), 64)) ||
	    (!same &&
	     (err = array_grow((void **)&p->ids, &p->ids_cap, p->nids + n, sizeof(*p->ids), 64))))
		return err;
	if ((p->nstacks + 1) * 2 > p->stack_nslots) {
		err = stack_reindex(p, p->stack_nslots ? p->stack_nslots * 2 : 1024);
		if (err < 0)
			return err;
	}
	stack_find(p, tid, ids, n, h, &slot);
	if (!same) {
		if (n) /* memcpy with a NULL pointer is undefined even for 0 bytes */
			memcpy(p->ids + p->nids, ids, n * sizeof(*ids));
		off = (uint32_t)p->nids;
		p->nids += n;
		p->seg_slots[seg] = (struct sslot){.idx = p->nstacks + 1, .tag = hs >> 32};
		p->nsegs++;
	}
	p->stacks[p->nstacks] = (struct pstack){.hash = h, .off = off, .len = n, .tid = tid};
	p->stack_slots[slot] = (struct sslot){.idx = ++p->nstacks, .tag = h >> 32};
	return 0;
}

int profile_add(struct profile *p, const uint32_t *ids, size_t n, uint64_t count)
{
	return profile_add_tid(p, 0, ids, n, count);
}

uint64_t profile_stack_hash(uint32_t tid, const uint32_t *ids, size_t n)
{
	return hash_ids(ids, n) ^ mix64(tid);
}

int profile_add_tid(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n, uint64_t count)
{
	return profile_add_hashed(p, tid, ids, n, count, profile_stack_hash(tid, ids, n));
}

/* A stack's and the flat counts: count more samples of s (ids[0..n)). */
static void count_stack(struct profile *p, struct pstack *s, const uint32_t *ids, size_t n,
			uint64_t count)
{
	s->count += count;
	s->recent = count < UINT32_MAX - s->recent ? s->recent + (uint32_t)count : UINT32_MAX;
	p->recent |= count != 0;
	count_flat(p, ids, n, count);
}

static bool ids_valid(const struct profile *p, const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= p->nfuncs)
			return false;
	return true;
}

int profile_add_hashed(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
		       uint64_t count, uint64_t h)
{
	struct pstack *s = NULL;
	size_t slot;
	int err;

	if (!ids_valid(p, ids, n))
		return -EINVAL;
	if (p->stack_nslots)
		s = stack_find(p, tid, ids, n, h, &slot);
	if (!s) {
		err = stack_insert(p, tid, ids, n, h);
		if (err < 0) {
			p->lost += count;
			return err;
		}
		s = &p->stacks[p->nstacks - 1];
		p->has_tids |= tid != 0;
	}
	count_stack(p, s, ids, n, count);
	return 0;
}

int profile_count_hashed(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
			 uint64_t count, uint64_t h)
{
	struct pstack *s;
	size_t slot;

	if (!ids_valid(p, ids, n))
		return -EINVAL;
	s = p->stack_nslots ? stack_find(p, tid, ids, n, h, &slot) : NULL;
	if (!s)
		return -ENOENT;
	count_stack(p, s, ids, n, count);
	return 0;
}

void profile_freeze(struct profile *p, bool frozen)
{
	p->frozen = frozen;
}

/* Drop from the pending list the functions named since (renamed in place or merged). */
void profile_pending_compact(struct profile *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->npending; i++) {
		uint32_t id = p->pending[i];

		if (!is_alias(p, id) && p->funcs[id].f.kind == PROFILE_KIND_UNKNOWN)
			p->pending[k++] = id;
	}
	p->npending = k;
}

size_t profile_canon_slot(const struct pstack *stacks, const struct sslot *slots, size_t nslots,
			  const uint32_t *ids, const struct pstack *st, const uint32_t *v,
			  uint64_t h)
{
	size_t j;

	for (j = h & (nslots - 1); slots[j].idx; j = (j + 1) & (nslots - 1)) {
		const struct pstack *o = &stacks[slots[j].idx - 1];

		if (o->hash == h && o->len == st->len && o->tid == st->tid &&
		    (!st->len || !memcmp(ids + o->off, v, st->len * sizeof(*v))))
			break;
	}
	return j;
}

size_t profile_canon_stacks(const struct profile *p, const struct pstack *src, size_t n,
			    const uint32_t *src_ids, struct pstack *out, struct sslot *slots,
			    size_t nslots, struct sslot *memo, uint32_t *ids, size_t *ret_nids)
{
	size_t k = 0, nids = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pstack *st = &src[i];
		uint32_t *v = ids + nids, off = (uint32_t)nids;
		uint64_t h;
		size_t j, m;

		/* the copy of the source's ids, if another stack's made it (an empty stack has
		 * none: its offset may be the next one's, so it is not remembered) */
		for (m = mix64(st->off) & (nslots - 1); memo[m].idx && memo[m].idx != st->off + 1;
		     m = (m + 1) & (nslots - 1))
			;
		if (st->len && memo[m].idx) {
			off = memo[m].tag;
			v = ids + off;
		} else {
			for (size_t x = 0; x < st->len; x++)
				v[x] = profile_canon(p, src_ids[st->off + x]);
		}
		h = profile_stack_hash(st->tid, v, st->len);
		j = profile_canon_slot(out, slots, nslots, ids, st, v, h);
		if (slots[j].idx) {
			if (st->len && !memo[m].idx) /* merged: its ids are the other stack's */
				memo[m] = (struct sslot){.idx = st->off + 1,
							 .tag = out[slots[j].idx - 1].off};
			struct pstack *o = &out[slots[j].idx - 1];

			o->count += st->count;
			o->recent = st->recent < UINT32_MAX - o->recent ? o->recent + st->recent
									: UINT32_MAX;
			continue;
		}
		out[k] = (struct pstack){.hash = h,
					 .count = st->count,
					 .off = off,
					 .len = st->len,
					 .tid = st->tid,
					 .recent = st->recent};
		slots[j] = (struct sslot){.idx = ++k, .tag = h >> 32};
		if (st->len && !memo[m].idx) {
			memo[m] = (struct sslot){.idx = st->off + 1, .tag = off};
			nids += st->len;
		}
	}
	*ret_nids = nids;
	return k;
}

/* The flat counts again from the stacks; the sample and loss totals do not change. */
static void stacks_recount(struct profile *p)
{
	uint64_t samples = p->samples, lost = p->lost;

	for (size_t i = 0; i < p->nfuncs; i++)
		p->funcs[i].f.self = p->funcs[i].f.total = 0;
	p->kernel_samples = 0;
	for (size_t i = 0; i < p->nstacks; i++)
		count_flat(p, p->ids + p->stacks[i].off, p->stacks[i].len, p->stacks[i].count);
	p->samples = samples; /* count_flat counted them again */
	p->lost = lost;
}

/* The stacks again with every id canonical, equal stacks merged, and the flat counts recounted
 * from them. All new tables are made before the old ones go: on -ENOMEM nothing changed (and
 * the next commit tries again). */
static int stacks_canonicalize(struct profile *p)
{
	_cleanup_free_ struct pstack *stacks = NULL;
	_cleanup_free_ struct sslot *slots = NULL, *memo = NULL;
	_cleanup_free_ uint32_t *ids = NULL;
	size_t nslots = p->stack_nslots ? p->stack_nslots : 1024, n = 0, nids = 0;

	stacks = malloc((p->stacks_cap ? p->stacks_cap : 1) * sizeof(*stacks));
	slots = calloc(nslots, sizeof(*slots));
	memo = calloc(nslots, sizeof(*memo));
	ids = malloc((p->ids_cap ? p->ids_cap : 1) * sizeof(*ids));
	if (!stacks || !slots || !memo || !ids)
		return -ENOMEM;
	n = profile_canon_stacks(p, p->stacks, p->nstacks, p->ids, stacks, slots, nslots, memo, ids,
				 &nids);
	free(p->stacks);
	free(p->stack_slots);
	free(p->ids);
	p->stacks = TAKE_PTR(stacks);
	p->stack_slots = TAKE_PTR(slots);
	p->ids = TAKE_PTR(ids);
	p->stack_nslots = nslots;
	p->nstacks = n;
	p->nids = nids;
	p->layout++; /* stack indexes changed: snapshots compare by ids now */
	/* The caps stay the old arrays' sizes: the copies were allocated at them. */
	stacks_recount(p);
	/* the segment table names stacks by index: again (on -ENOMEM the next insert's growth
	 * rebuilds it; until then the old one must not be read) */
	if (seg_reindex(p, p->seg_nslots ? p->seg_nslots : 1024) < 0) {
		free(p->seg_slots);
		p->seg_slots = NULL;
		p->seg_nslots = p->nsegs = 0;
	}
	return 0;
}

int profile_commit_renames(struct profile *p)
{
	int err;

	profile_pending_compact(p);
	if (!p->merges)
		return 0;
	err = stacks_canonicalize(p);
	if (err < 0)
		return err;
	p->merges = false;
	profile_cache_clear(p); /* it may hold ids that are aliases now */
	return 1;
}

bool profile_merges_pending(const struct profile *p)
{
	return p->merges;
}

bool profile_has_recent(const struct profile *p)
{
	return p->recent;
}

int profile_take_recent(struct profile *p, profile_stack_fn fn, void *userdata)
{
	int n = 0;

	if (!p->recent)
		return 0; /* no stack to look at: an idle profile's cut costs nothing */
	for (size_t i = 0; i < p->nstacks; i++) {
		struct pstack *st = &p->stacks[i];

		if (!st->recent)
			continue;
		if (fn) {
			int r = fn(st->tid, p->ids + st->off, st->len, st->recent, userdata);

			if (r < 0)
				return r;
		}
		st->recent = 0;
		n++;
	}
	p->recent = false;
	return n;
}

int profile_foreach_stack(const struct profile *p, profile_stack_fn fn, void *userdata)
{
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct pstack *st = &p->stacks[i];
		int r = fn(st->tid, p->ids + st->off, st->len, st->count, userdata);

		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_flat(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_func *x = &p->funcs[*(const uint32_t *)a].f;
	const struct profile_func *y = &p->funcs[*(const uint32_t *)b].f;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

int profile_sorted(const struct profile *p, uint32_t **ret, size_t *ret_n)
{
	uint32_t *v = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	size_t n = 0;

	for (size_t i = 0; i < p->nfuncs; i++)
		if (!is_alias(p, i))
			v[n++] = i;
	qsort_r(v, n, sizeof(*v), cmp_flat, (void *)p);
	*ret = v;
	*ret_n = n;
	return 0;
}

void profile_get_stats(const struct profile *p, struct profile_stats *st)
{
	*st = (struct profile_stats){
	    .samples = p->samples,
	    .lost = p->lost,
	    .funcs = p->nfuncs,
	    .stacks = p->nstacks,
	    .stack_ids = p->nids,
	    .kernel_samples = p->kernel_samples,
	    .unresolved = p->npending,
	    .unresolved_over = p->unresolved_over,
	    .renamed = p->renamed,
	    .memory = sizeof(*p) + p->funcs_cap * sizeof(*p->funcs) +
		      p->pending_cap * sizeof(*p->pending) + p->ncanon * sizeof(*p->canon) +
		      p->func_tab.nslots * sizeof(*p->func_tab.slot) +
		      p->stacks_cap * sizeof(*p->stacks) +
		      p->stack_nslots * sizeof(*p->stack_slots) + p->ids_cap * sizeof(*p->ids) +
		      p->seg_nslots * sizeof(*p->seg_slots) + p->cache_nslots * sizeof(*p->cache) +
		      p->str_bytes,
	};
}
