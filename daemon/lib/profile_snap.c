// SPDX-License-Identifier: GPL-2.0-only
/* profile_snap.c: a profile's stack counts at one moment, and the samples taken since (see
 * include/kprof/profile_snap.h).
 *
 * A profile only grows: a stack keeps its index and only gains samples, new stacks are
 * appended, until profile_commit_renames folds merged functions away and rewrites the stack
 * table (p->layout counts those rewrites). So a snapshot is a copy of the stack records and of
 * their ids (memcpy, no hashing), and the samples since are, while the layout is the same, the
 * count of stack i now minus its count in the copy, i by i, plus every stack past the copy's
 * end. When no sample came at all (p->samples unchanged), nothing is walked.
 * After a rewrite, indexes mean nothing: the copy's stacks are made canonical (their ids
 * through profile_canon, equal ones merged) in a hash table, and each stack of p is looked up
 * there by (thread, canonical ids). A snapshot count is given out once: two stacks of p that
 * are one canonical stack (a merge not committed yet) share it, the first taking what it can.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/profile_snap.h"
#include "profile_internal.h"

struct profile_snap {
	uint64_t layout, samples;
	struct pstack *stacks; /* count: at the snapshot */
	size_t n;
	uint32_t *ids;
	size_t nids;
};

void profile_snap_free(struct profile_snap *s)
{
	if (!s)
		return;
	free(s->stacks);
	free(s->ids);
	free(s);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct profile_snap *, profile_snap_free);

int profile_snap_new(const struct profile *p, struct profile_snap **ret)
{
	_cleanup_(profile_snap_freep) struct profile_snap *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->stacks = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*s->stacks));
	s->ids = malloc((p->nids ? p->nids : 1) * sizeof(*s->ids));
	if (!s->stacks || !s->ids)
		return -ENOMEM;
	if (p->nstacks)
		memcpy(s->stacks, p->stacks, p->nstacks * sizeof(*s->stacks));
	if (p->nids)
		memcpy(s->ids, p->ids, p->nids * sizeof(*s->ids));
	s->n = p->nstacks;
	s->nids = p->nids;
	s->layout = p->layout;
	s->samples = p->samples;
	*ret = TAKE_PTR(s);
	return 0;
}

/* One stack's gain given to fn: 1 if it gained, 0 if not, or fn's negative return. */
static int give(const struct profile *p, const struct pstack *st, uint64_t before,
		profile_stack_fn fn, void *userdata, uint64_t *sum)
{
	int r;

	if (st->count <= before)
		return 0;
	r = fn(st->tid, p->ids + st->off, st->len, st->count - before, userdata);
	if (r < 0)
		return r;
	*sum += st->count - before;
	return 1;
}

/* The snapshot's stacks by (thread, canonical ids), equal ones merged: each one's count is
 * what it still has to give. */
struct canon_tab {
	struct pstack *v;
	uint32_t *ids;
	struct sslot *slots, *memo;
	size_t nslots, n;
};

static void canon_tab_release(struct canon_tab *c)
{
	free(c->v);
	free(c->ids);
	free(c->slots);
	free(c->memo);
}

static int canon_build(const struct profile *p, const struct profile_snap *s, struct canon_tab *c)
{
	size_t nids;

	c->nslots = 16;
	while (c->nslots < 2 * s->n)
		c->nslots *= 2;
	c->v = malloc((s->n ? s->n : 1) * sizeof(*c->v));
	c->ids = malloc((s->nids ? s->nids : 1) * sizeof(*c->ids));
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	c->memo = calloc(c->nslots, sizeof(*c->memo));
	if (!c->v || !c->ids || !c->slots || !c->memo)
		return -ENOMEM;
	c->n = profile_canon_stacks(p, s->stacks, s->n, s->ids, c->v, c->slots, c->nslots, c->memo,
				    c->ids, &nids);
	return 0;
}

/* The pass by canonical ids, after p's stacks were rewritten. */
static int delta_canon(const struct profile *p, const struct profile_snap *s, profile_stack_fn fn,
		       void *userdata, uint64_t *sum)
{
	_cleanup_(canon_tab_release) struct canon_tab c = {0};
	_cleanup_free_ uint32_t *v = NULL;
	size_t maxlen = 1;
	int err, n = 0;

	err = canon_build(p, s, &c);
	if (err < 0)
		return err;
	for (size_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].len > maxlen)
			maxlen = p->stacks[i].len;
	v = malloc(maxlen * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct pstack *st = &p->stacks[i];
		uint64_t before = 0, h;
		size_t j;

		for (uint32_t k = 0; k < st->len; k++)
			v[k] = profile_canon(p, p->ids[st->off + k]);
		h = profile_stack_hash(st->tid, v, st->len);
		j = profile_canon_slot(c.v, c.slots, c.nslots, c.ids, st, v, h);
		if (c.slots[j].idx) {
			uint64_t *left = &c.v[c.slots[j].idx - 1].count;

			before = *left < st->count ? *left : st->count;
			*left -= before;
		}
		err = give(p, st, before, fn, userdata, sum);
		if (err < 0)
			return err;
		n += err;
	}
	return n;
}

bool profile_snap_gained(const struct profile *p, const struct profile_snap *s)
{
	return p->samples != s->samples; /* renames move samples, never add any */
}

int profile_snap_delta(const struct profile *p, const struct profile_snap *s, profile_stack_fn fn,
		       void *userdata, uint64_t *samples)
{
	uint64_t sum = 0;
	int err, n = 0;

	if (samples)
		*samples = 0;
	if (!profile_snap_gained(p, s))
		return 0;
	if (p->layout != s->layout || p->nstacks < s->n) {
		n = delta_canon(p, s, fn, userdata, &sum);
	} else {
		for (size_t i = 0; i < p->nstacks && n >= 0; i++) {
			err = give(p, &p->stacks[i], i < s->n ? s->stacks[i].count : 0, fn,
				   userdata, &sum);
			n = err < 0 ? err : n + err;
		}
	}
	if (n >= 0 && samples)
		*samples = sum;
	return n;
}
