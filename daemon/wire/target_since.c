// SPDX-License-Identifier: GPL-2.0-only
/* target_since.c: the samples a target took since a snapshot, as a SavedProfile of those alone
 * (see target_since.h), for the HTTP endpoint's ?seconds=N.
 *
 * A scrape's cost should follow what it reports, not what the target holds: a whole profile
 * packed at the start and again at the end (every function, stack, HCCT node, drift model) then
 * diffed made every scrape cost about 100 us a target whatever the samples. Instead the start
 * is a copy of the stack counts (profile_snap.c: memcpy), and the end walks only the stacks that
 * gained (nothing at all for a target that took no sample), keeps only the functions they name,
 * renumbered densely in the profile's order (the merge and the pprof encoder then see those
 * alone), and the sampled addresses of their leaf functions (issue 32's per-address locations).
 * An address's samples in the interval are not known without a copy of the annotate store at
 * the start (as costly as the rest of the scrape together: its table is far larger than a
 * minijit's stacks), so each leaf function's samples in the interval are spread over its
 * addresses in the proportions of the whole profile: exact per function, an estimate per
 * address (before, the whole profile's counts were given as they were).
 * An interval whose answer waits (for source lines) keeps its end as the interval's message of
 * that moment, its function indexes turned back into the profile's ids (stable, unlike the
 * message's dense ones): the later build, in the same ids, is cut back to it (sdelta_cap).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/saved.h"
#include "kprof/sdelta.h"
#include "wire/target_since.h"

#define NONE UINT32_MAX

int target_since_take(const struct target *t, struct target_since *s)
{
	memset(s, 0, sizeof(*s));
	return profile_snap_new(t->profile, &s->ps);
}

void target_since_release(struct target_since *s)
{
	profile_snap_free(s->ps);
	memset(s, 0, sizeof(*s));
}

/* The stacks that gained, their ids copied (the profile's ids: renumbered at the end). */
struct gained {
	const struct profile *p;
	Kprof__SavedStack *sv; /* ids not set until the arena stops moving */
	size_t *off;	       /* each stack's ids in the arena */
	size_t n, cap, off_cap;
	uint32_t *ids;
	size_t nids, ids_cap;
	uint32_t *newid;    /* per profile id: its function's index in the message, NONE: unused */
	uint64_t *leaf_self; /* per profile id: its samples as the leaf of the stacks that gained */
};

static int on_gain(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	struct gained *g = userdata;

	if (array_grow((void **)&g->sv, &g->cap, g->n + 1, sizeof(*g->sv), 64) < 0 ||
	    array_grow((void **)&g->off, &g->off_cap, g->n + 1, sizeof(*g->off), 64) < 0 ||
	    array_grow((void **)&g->ids, &g->ids_cap, g->nids + n, sizeof(*g->ids), 256) < 0)
		return -ENOMEM;
	if (n)
		memcpy(g->ids + g->nids, ids, n * sizeof(*ids));
	g->off[g->n] = g->nids;
	saved_stack(&g->sv[g->n++], tid, NULL, n, count);
	for (size_t i = 0; i < n; i++)
		g->newid[ids[i]] = 0;
	if (n)
		g->leaf_self[ids[n - 1]] += count;
	g->nids += n;
	return 0;
}

/* Used functions numbered in the profile's order (m->fids), the stacks' ids moved to them. */
static int renumber(struct gained *g, struct saved_msg *m, size_t nf, size_t *nused)
{
	size_t k = 0;

	for (size_t i = 0; i < nf; i++)
		k += g->newid[i] != NONE;
	m->fids = malloc((k ? k : 1) * sizeof(*m->fids));
	m->fv = calloc(k ? k : 1, sizeof(*m->fv));
	m->fp = calloc(k ? k : 1, sizeof(*m->fp));
	m->sp = calloc(g->n ? g->n : 1, sizeof(*m->sp));
	if (!m->fids || !m->fv || !m->fp || !m->sp)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < nf; i++)
		if (g->newid[i] != NONE) {
			g->newid[i] = k;
			m->fids[k++] = i;
		}
	for (size_t i = 0; i < g->nids; i++)
		g->ids[i] = g->newid[g->ids[i]];
	for (size_t i = 0; i < g->n; i++) {
		g->sv[i].ids = g->ids + g->off[i];
		m->sp[i] = &g->sv[i];
	}
	*nused = k;
	return 0;
}

/* The profile id annotate id counts for: its canonical function, if that is the leaf of a
 * stack that gained (else its own, for a merge not committed yet), or NONE. */
static uint32_t leaf_of(const struct gained *g, uint32_t id)
{
	uint32_t c = profile_canon(g->p, id);
	size_t nf = profile_nfuncs(g->p);

	if (c < nf && g->leaf_self[c])
		return c;
	if (id < nf && g->leaf_self[id])
		return id;
	return NONE;
}

static bool is_leaf(uint32_t id, void *userdata)
{
	return leaf_of(userdata, id) != NONE;
}

/* The sampled addresses of the leaves of the stacks that gained: since a moment (since), each
 * leaf's samples spread over its addresses as the whole profile's are (see the top). */
static int leaf_addrs(const struct target *t, bool since, struct gained *g, struct saved_msg *m,
		      size_t nused)
{
	_cleanup_free_ struct annot_addr *v = NULL;
	size_t n = 0;
	int err;

	if (!t->annot)
		return 0;
	err = annot_collect(t->annot, is_leaf, g, &v, &n);
	if (err < 0 || !n)
		return err;
	for (size_t i = 0; i < n; i++) {
		uint32_t f = leaf_of(g, v[i].id);
		uint64_t all = profile_func_get(g->p, f)->self;

		if (since)
			v[i].self = all ? (uint32_t)((double)v[i].self * g->leaf_self[f] / all + 0.5)
					: 0;
		v[i].id = g->newid[f];
	}
	return saved_msg_leaf_addrs(m, v, n, nused);
}

static int all_stacks(const struct profile *p, struct gained *g, uint64_t *sum)
{
	struct profile_stats ps;

	profile_get_stats(p, &ps);
	*sum = ps.samples;
	return profile_foreach_stack(p, on_gain, g);
}

static void gained_release(struct gained *g)
{
	free(g->sv);
	free(g->off);
	free(g->ids);
	free(g->newid);
	free(g->leaf_self);
}

/* m from the stacks g gathered (sum: their samples): 0 or -ENOMEM (m released). */
static int fill(const struct target *t, const struct target_since *s, struct gained *g,
		uint64_t sum, struct saved_msg *m)
{
	size_t nused = 0;
	int err;

	kprof__saved_profile__init(&m->msg);
	kprof__target__init(&m->target);
	err = renumber(g, m, profile_nfuncs(t->profile), &nused);
	if (err >= 0) {
		m->sv = TAKE_PTR(g->sv);
		m->ids = TAKE_PTR(g->ids);
		saved_functions(t->profile, m->fids, nused, m->fv, m->fp);
		err = saved_msg_tables(t, m);
	}
	if (err >= 0)
		err = leaf_addrs(t, s != NULL, g, m, nused);
	if (err < 0) {
		saved_msg_release(m);
		return err;
	}
	target_fill_pb_brief(t, &m->target);
	m->target.samples = sum;
	m->msg.format = 1;
	m->msg.target = &m->target;
	m->msg.n_functions = nused;
	m->msg.functions = m->fp;
	m->msg.n_stacks = g->n;
	m->msg.stacks = m->sp;
	return 0;
}

int target_since_build(const struct target *t, const struct target_since *s, struct saved_msg *m)
{
	const size_t nf = profile_nfuncs(t->profile);
	_cleanup_(gained_release) struct gained g = {.p = t->profile};
	uint64_t sum = 0;
	int err;

	memset(m, 0, sizeof(*m));
	if (s && !profile_snap_gained(t->profile, s->ps))
		return 0; /* nothing to walk */
	g.newid = malloc((nf ? nf : 1) * sizeof(*g.newid));
	g.leaf_self = calloc(nf ? nf : 1, sizeof(*g.leaf_self));
	if (!g.newid || !g.leaf_self)
		return -ENOMEM;
	memset(g.newid, 0xff, (nf ? nf : 1) * sizeof(*g.newid));
	err = s ? profile_snap_delta(t->profile, s->ps, on_gain, &g, &sum)
		: all_stacks(t->profile, &g, &sum);
	if (err < 0 || (s && !g.n))
		return err < 0 ? err : 0;
	err = fill(t, s, &g, sum, m);
	return err < 0 ? err : 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* m's stack ids and leaf functions as the profile's ids (m->fids), or back (sorted fids). */
static void map_ids(struct saved_msg *m, bool to_profile)
{
	Kprof__SavedProfile *p = &m->msg;
	size_t nf = p->n_functions;

	for (size_t i = 0; i < p->n_stacks; i++)
		for (size_t j = 0; j < p->stacks[i]->n_ids; j++) {
			uint32_t *id = &p->stacks[i]->ids[j];
			uint32_t *at = to_profile ? NULL : bsearch(id, m->fids, nf, sizeof(*id), cmp_u32);

			*id = to_profile ? m->fids[*id] : (uint32_t)(at - m->fids);
		}
	for (size_t i = 0; i < p->n_leaf_addrs; i++) {
		uint32_t *id = &p->leaf_addrs[i]->func;
		uint32_t *at = to_profile ? NULL : bsearch(id, m->fids, nf, sizeof(*id), cmp_u32);

		*id = to_profile ? m->fids[*id] : (uint32_t)(at - m->fids);
	}
}

int target_since_end(const struct target *t, const struct target_since *s, struct sdelta **e)
{
	struct saved_msg m;
	int r = target_since_build(t, s, &m);

	*e = NULL;
	if (r <= 0)
		return r;
	map_ids(&m, true);
	r = sdelta_new(&m.msg, e);
	saved_msg_release(&m);
	return r;
}

int target_since_build_until(const struct target *t, const struct target_since *s,
			     const struct sdelta *e, struct saved_msg *m)
{
	int r = target_since_build(t, s, m);

	if (r <= 0 || !e)
		return r;
	map_ids(m, true);
	m->target.samples = sdelta_cap(e, &m->msg);
	map_ids(m, false);
	if (!m->msg.n_stacks) {
		saved_msg_release(m);
		memset(m, 0, sizeof(*m));
		return 0;
	}
	return 1;
}
