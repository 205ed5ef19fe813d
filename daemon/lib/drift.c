// SPDX-License-Identifier: GPL-2.0-only
/* drift.c: profile-drift detection per function (see include/kprof/drift.h).
 *
 * The generic form of the stale-feedback detection of Wälchli's sampling profiler for a JIT
 * (seeds/003, §4.3), with the overlap percentage of Yasue et al. (seeds/001, §2, Fig. 2) as the
 * comparison; the rules and defaults are explained in ALGORITHMS.md §12.
 *
 * A function's keys are interned into at most DRIFT_MAX_KEYS small indices (an open-addressing
 * table of 512 slots); later keys share the index DRIFT_MAX_KEYS ("other"). The reference and
 * the window are count arrays over those indices; the window is also a ring of the indices of
 * its last W samples, so a sample entering it pushes the oldest out in O(1). A judgement is
 * O(keys) and runs every check_every samples, so the per-sample cost is a function lookup
 * (a one-entry cache, then a hash table), a key lookup and two counter updates.
 *
 * States: LEARNING (the first W samples, after a start or a drift, make the reference), then
 * WATCHING. A drift resets the window: the samples it holds mix the old behaviour with the new
 * (the thesis's polluted recording, cleared so that what follows is judged on fresh samples),
 * and the reference is learned again from the new behaviour, as a JIT recompiles with fresh
 * feedback; so a change is reported once, and a change back is a new drift.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/drift.h"
#include "kprof/hash.h"
#include "kprof/idxtab.h"

#define KEY_SLOTS 512 /* power of two, >= 2 * DRIFT_MAX_KEYS */
#define NIDX (DRIFT_MAX_KEYS + 1)

struct dfunc {
	uint32_t func;
	enum drift_state state;
	uint64_t samples;
	uint32_t nkeys;
	uint32_t ref_n, win_n, head;
	uint64_t judged; /* samples watched since the reference was set */
	double overlap, min_overlap;
	uint32_t drifts, refreshes;
	uint64_t first_ns, last_ns, ref_ns, ended_ns;
	uint64_t *blocks; /* block start offsets, ascending (drift_func_set_blocks) */
	uint32_t nblocks;
	uint64_t keys[DRIFT_MAX_KEYS];
	uint16_t slots[KEY_SLOTS]; /* key index + 1, 0 = empty */
	uint32_t ref[NIDX], win[NIDX];
	uint8_t ring[]; /* W key indices, the oldest at head once full */
};

struct drift {
	struct drift_config c;
	struct dfunc **funcs;
	size_t nfuncs;
	struct idxtab ftab; /* function id -> index in funcs (sized for max_funcs once) */
	struct dfunc *last; /* the function of the last sample */
	struct drift_event *events;
	uint64_t nevents; /* reported; the newest max_events are kept */
	uint64_t samples, funcs_over, keys_over, ended, recycled;
};

static int config_fill(const struct drift_config *in, struct drift_config *c)
{
	*c = in ? *in : (struct drift_config){0};
	if (!c->window)
		c->window = 256;
	if (!c->min_samples)
		c->min_samples = c->window < 128 ? c->window : 128;
	if (!c->refresh)
		c->refresh = 10 * c->min_samples;
	if (c->threshold == 0)
		c->threshold = 0.5;
	if (!c->check_every)
		c->check_every = 8;
	if (!c->max_funcs)
		c->max_funcs = 64;
	if (!c->max_events)
		c->max_events = 32;
	if (c->window < 16 || c->window > 4096 || c->min_samples < 8 ||
	    c->min_samples > c->window || c->refresh < c->min_samples ||
	    !(c->threshold > 0 && c->threshold < 1) || c->check_every > 64 || c->max_funcs > 4096 ||
	    c->max_events > 1024)
		return -EINVAL;
	return 0;
}

int drift_new(const struct drift_config *cfg, struct drift **ret)
{
	struct drift *d;
	struct drift_config c;
	int err = config_fill(cfg, &c);

	if (err < 0)
		return err;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->c = c;
	d->funcs = calloc(c.max_funcs, sizeof(*d->funcs));
	d->events = calloc(c.max_events, sizeof(*d->events));
	if (!d->funcs || !d->events || idxtab_reserve(&d->ftab, c.max_funcs, 2, NULL, NULL) < 0) {
		drift_free(d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

void drift_free(struct drift *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nfuncs; i++) {
		free(d->funcs[i]->blocks);
		free(d->funcs[i]);
	}
	free(d->funcs);
	idxtab_release(&d->ftab);
	free(d->events);
	free(d);
}

const struct drift_config *drift_get_config(const struct drift *d)
{
	return &d->c;
}

double drift_overlap(const uint32_t *a, uint64_t na, const uint32_t *b, uint64_t nb, size_t n)
{
	double s = 0;

	if (!na || !nb)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double x = (double)a[i] / (double)na, y = (double)b[i] / (double)nb;

		s += x < y ? x : y;
	}
	return s > 1 ? 1 : s;
}

/* func's entry, or NULL; *slot: its slot in the index, or the free one where it goes. */
static struct dfunc *func_find(const struct drift *d, uint32_t func, size_t *slot)
{
	size_t i;

	idxtab_probe(&d->ftab, mix64(func), i)
		if (d->funcs[d->ftab.slot[i] - 1]->func == func)
			break;
	*slot = i;
	return d->ftab.slot[i] ? d->funcs[d->ftab.slot[i] - 1] : NULL;
}

static uint64_t func_hash_at(const void *ctx, uint32_t i)
{
	return mix64(((const struct drift *)ctx)->funcs[i]->func);
}

/* The place of an ended function, taken out of the index and cleared for a new one: its index
 * in funcs, or -1 if none is ended. */
static long func_recycle(struct drift *d)
{
	for (size_t i = 0; i < d->nfuncs; i++) {
		struct dfunc *f = d->funcs[i];

		if (f->state != DRIFT_ENDED)
			continue;
		idxtab_remove(&d->ftab, mix64(f->func), (uint32_t)i, func_hash_at, d);
		free(f->blocks);
		memset(f, 0, sizeof(*f) + d->c.window);
		d->recycled++;
		return (long)i;
	}
	return -1;
}

static int func_get(struct drift *d, uint32_t func, struct dfunc **ret)
{
	struct dfunc *f;
	size_t slot;

	if (d->last && d->last->func == func) {
		*ret = d->last;
		return 0;
	}
	f = func_find(d, func, &slot);
	if (!f) {
		long idx = (long)d->nfuncs;

		if (d->nfuncs >= d->c.max_funcs) {
			idx = func_recycle(d);
			if (idx < 0)
				return -E2BIG;
			f = d->funcs[idx];
			func_find(d, func, &slot); /* the removal may have moved the free slot */
		} else {
			f = calloc(1, sizeof(*f) + d->c.window);
			if (!f)
				return -ENOMEM;
			d->funcs[d->nfuncs++] = f;
		}
		f->func = func;
		f->state = DRIFT_LEARNING;
		f->overlap = f->min_overlap = -1;
		d->ftab.slot[slot] = (uint32_t)idx + 1;
	}
	d->last = f;
	*ret = f;
	return 0;
}

/* The index of key in f, interning it; DRIFT_MAX_KEYS ("other") when f has no room. */
static unsigned key_index(struct drift *d, struct dfunc *f, uint64_t key)
{
	size_t i = mix64(key) & (KEY_SLOTS - 1);

	if (key == DRIFT_KEY_OTHER)
		return DRIFT_MAX_KEYS;
	for (; f->slots[i]; i = (i + 1) & (KEY_SLOTS - 1))
		if (f->keys[f->slots[i] - 1] == key)
			return f->slots[i] - 1;
	if (f->nkeys >= DRIFT_MAX_KEYS) {
		d->keys_over++;
		return DRIFT_MAX_KEYS;
	}
	f->keys[f->nkeys] = key;
	f->slots[i] = (uint16_t)++f->nkeys;
	return f->nkeys - 1;
}

static uint64_t key_of(const struct dfunc *f, unsigned k)
{
	return k < f->nkeys ? f->keys[k] : DRIFT_KEY_OTHER;
}

static double func_overlap(const struct dfunc *f)
{
	double s = drift_overlap(f->ref, f->ref_n, f->win, f->win_n, f->nkeys);
	double x = (double)f->ref[DRIFT_MAX_KEYS] / f->ref_n,
	       y = (double)f->win[DRIFT_MAX_KEYS] / f->win_n;

	s += x < y ? x : y;
	return s > 1 ? 1 : s;
}

static void window_push(struct drift *d, struct dfunc *f, unsigned k)
{
	if (f->win_n == d->c.window) {
		f->win[f->ring[f->head]]--;
		f->win_n--;
	}
	f->ring[f->head] = (uint8_t)k;
	f->head = (f->head + 1) % d->c.window;
	f->win[k]++;
	f->win_n++;
}

/* Back to LEARNING with nothing recorded: the keys, the reference and the window. */
static void func_reset(struct drift *d, struct dfunc *f)
{
	(void)d;
	f->state = DRIFT_LEARNING;
	f->nkeys = 0;
	memset(f->slots, 0, sizeof(f->slots));
	memset(f->ref, 0, sizeof(f->ref));
	memset(f->win, 0, sizeof(f->win));
	f->ref_n = f->win_n = f->head = 0;
	f->judged = 0;
	f->overlap = f->min_overlap = -1;
}

static void event_record(struct drift *d, struct dfunc *f, double ov, uint64_t time_ns)
{
	struct drift_event *e = &d->events[d->nevents % d->c.max_events];
	double up = -2, down = -2;

	*e = (struct drift_event){.seq = d->nevents + 1,
				  .func = f->func,
				  .time_ns = time_ns,
				  .overlap = ov,
				  .window = f->win_n,
				  .ref = f->ref_n,
				  .samples = f->samples,
				  .ref_ns = f->ref_ns};
	for (unsigned k = 0; k < NIDX; k++) {
		double r = (double)f->ref[k] / f->ref_n, w = (double)f->win[k] / f->win_n;

		if (k >= f->nkeys && k != DRIFT_MAX_KEYS)
			continue;
		if (w - r > up) {
			up = w - r;
			e->gained = key_of(f, k);
			e->gained_ref = r;
			e->gained_win = w;
		}
		if (r - w > down) {
			down = r - w;
			e->lost = key_of(f, k);
			e->lost_ref = r;
			e->lost_win = w;
		}
	}
	d->nevents++;
	f->drifts++;
}

/* A judgement of f's window: 1 for a drift. */
static int judge(struct drift *d, struct dfunc *f, uint64_t time_ns)
{
	double ov = func_overlap(f);

	f->overlap = ov;
	if (f->min_overlap < 0 || ov < f->min_overlap)
		f->min_overlap = ov;
	if (ov < d->c.threshold) {
		event_record(d, f, ov, time_ns);
		func_reset(d, f);
		return 1;
	}
	/* T2: a reference judged this long without a drift may hold what no longer occurs; the
	 * window replaces it when they agree well, never while a change may be under way. */
	if (f->judged >= d->c.refresh && f->win_n == d->c.window &&
	    ov >= (1 + d->c.threshold) / 2) {
		memcpy(f->ref, f->win, sizeof(f->ref));
		f->ref_n = f->win_n;
		f->judged = 0;
		f->refreshes++;
		f->ref_ns = time_ns;
	}
	return 0;
}

int drift_func_set_blocks(struct drift *d, uint32_t func, const uint64_t *starts, size_t n)
{
	struct dfunc *f;
	uint64_t *b;
	size_t slot;

	if (n == 0 || n > 4096)
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (starts[i] <= starts[i - 1])
			return -EINVAL;
	f = func_find(d, func, &slot);
	if (!f)
		return -ENOENT;
	b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	memcpy(b, starts, n * sizeof(*b));
	free(f->blocks);
	f->blocks = b;
	f->nblocks = (uint32_t)n;
	func_reset(d, f);
	return 0;
}

/* An offset key as the block holding it: the last start at or below it. */
static uint64_t block_key(const struct dfunc *f, uint64_t key)
{
	size_t lo = 0, hi = f->nblocks;

	if (key >= DRIFT_KEY_BLOCK || key < f->blocks[0])
		return key;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (f->blocks[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return DRIFT_KEY_BLOCK | f->blocks[lo];
}

int drift_add(struct drift *d, uint32_t func, uint64_t key, uint64_t time_ns)
{
	struct dfunc *f;
	unsigned k;
	int err = func_get(d, func, &f);

	if (err == -E2BIG)
		d->funcs_over++;
	if (err < 0)
		return err;
	if (f->state == DRIFT_ENDED) {
		func_reset(d, f);
		f->ended_ns = 0;
	}
	d->samples++;
	f->samples++;
	if (!f->first_ns)
		f->first_ns = time_ns;
	f->last_ns = time_ns;
	if (f->blocks)
		key = block_key(f, key);
	k = key_index(d, f, key);
	if (f->state == DRIFT_LEARNING) {
		f->ref[k]++;
		if (++f->ref_n >= d->c.window) {
			f->state = DRIFT_WATCHING;
			f->ref_ns = time_ns;
		}
		return 0;
	}
	window_push(d, f, k);
	f->judged++;
	if (f->win_n < d->c.min_samples || f->judged % d->c.check_every)
		return 0;
	return judge(d, f, time_ns);
}

size_t drift_end_idle(struct drift *d, uint64_t now_ns, uint64_t idle_ns)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nfuncs; i++) {
		struct dfunc *f = d->funcs[i];

		if (f->state == DRIFT_ENDED || !f->last_ns || now_ns < f->last_ns ||
		    now_ns - f->last_ns < idle_ns)
			continue;
		func_reset(d, f);
		f->state = DRIFT_ENDED;
		f->ended_ns = now_ns;
		d->ended++;
		n++;
	}
	return n;
}

size_t drift_nevents(const struct drift *d)
{
	return d->nevents < d->c.max_events ? d->nevents : d->c.max_events;
}

const struct drift_event *drift_event_get(const struct drift *d, size_t i)
{
	size_t n = drift_nevents(d);

	if (i >= n)
		return NULL;
	return &d->events[(d->nevents - n + i) % d->c.max_events];
}

size_t drift_nfuncs(const struct drift *d)
{
	return d->nfuncs;
}

int drift_func_get(const struct drift *d, size_t i, struct drift_func_info *out)
{
	const struct dfunc *f;

	if (i >= d->nfuncs)
		return -EINVAL;
	f = d->funcs[i];
	*out = (struct drift_func_info){.func = f->func,
					.state = f->state,
					.samples = f->samples,
					.ref = f->ref_n,
					.window = f->win_n,
					.overlap = f->overlap,
					.min_overlap = f->min_overlap,
					.keys = f->nkeys,
					.drifts = f->drifts,
					.refreshes = f->refreshes,
					.blocks = f->nblocks,
					.first_ns = f->first_ns,
					.last_ns = f->last_ns,
					.ended_ns = f->ended_ns};
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct drift_key *x = a, *y = b;
	double sx = x->ref + x->win, sy = y->ref + y->win;

	return sx < sy ? 1 : sx > sy ? -1 : (x->key > y->key) - (x->key < y->key);
}

size_t drift_func_keys(const struct drift *d, size_t i, struct drift_key *out, size_t max)
{
	struct drift_key all[NIDX];
	const struct dfunc *f;
	size_t n = 0;

	if (i >= d->nfuncs)
		return 0;
	f = d->funcs[i];
	for (unsigned k = 0; k < NIDX; k++) {
		if ((k >= f->nkeys && k != DRIFT_MAX_KEYS) || (!f->ref[k] && !f->win[k]))
			continue;
		all[n++] = (struct drift_key){
		    .key = key_of(f, k),
		    .ref = f->ref_n ? (double)f->ref[k] / f->ref_n : 0,
		    .win = f->win_n ? (double)f->win[k] / f->win_n : 0,
		};
	}
	qsort(all, n, sizeof(all[0]), cmp_key);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	return n;
}

void drift_get_stats(const struct drift *d, struct drift_stats *st)
{
	*st = (struct drift_stats){.samples = d->samples,
				   .funcs_over = d->funcs_over,
				   .keys_over = d->keys_over,
				   .events = d->nevents,
				   .funcs = d->nfuncs,
				   .ended = d->ended,
				   .recycled = d->recycled};
	st->memory = sizeof(*d) + d->c.max_funcs * sizeof(*d->funcs) +
		     d->ftab.nslots * sizeof(*d->ftab.slot) + d->c.max_events * sizeof(*d->events) +
		     d->nfuncs * (sizeof(struct dfunc) + d->c.window);
	for (size_t i = 0; i < d->nfuncs; i++)
		st->memory += d->funcs[i]->nblocks * sizeof(uint64_t);
}
