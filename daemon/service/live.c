// SPDX-License-Identifier: GPL-2.0-only
/* live.c: the data of `kprofctl top`: per-interval deltas of every watched target's flat profile.
 *
 * A subscription remembers, per target, the self and total counts of each function at the last
 * update; each update reports the difference (the last interval) next to the cumulative counts,
 * top N by interval self time. It is fed from the profiles the daemon keeps anyway, so a live
 * view costs O(functions) per interval and nothing per sample. Targets are matched by pid and
 * attach time, so a pid reused by a new attach starts from zero. Each update is seen through
 * the reader's kernel view (profile.h): kernel functions may become one "[kernel]" row. The
 * counts at the subscription are its baseline (live_baseline): the first update is an interval
 * too, not the whole profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "service/live.h"
#include "manager/manager.h"
#include "wire/target_pb.h"

#define LIVE_MAX_PIDS 64

struct live_target {
	pid_t pid;
	uint64_t attached_ns;
	uint64_t *self, *total; /* counts at the last update, by function id */
	size_t n;
	uint64_t samples;
	uint64_t kernel_samples; /* at the last update */
};

struct live {
	struct manager *m;
	uid_t uid;
	bool reader;
	pid_t pids[LIVE_MAX_PIDS];
	size_t npids;
	unsigned interval_ms, top;
	uint64_t seq;
	struct live_target *lt;
	size_t nlt;
};

int live_new(struct manager *m, const Kprof__SubscribeRequest *req, uid_t uid, bool reader,
	     struct live **ret)
{
	struct live *lv;

	if (req->n_pids > LIVE_MAX_PIDS)
		return -E2BIG;
	if (req->interval_ms && (req->interval_ms < 100 || req->interval_ms > 60000))
		return -ERANGE;
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return -ENOMEM;
	lv->m = m;
	lv->uid = uid;
	lv->reader = reader;
	for (size_t i = 0; i < req->n_pids; i++)
		lv->pids[lv->npids++] = req->pids[i];
	lv->interval_ms = req->interval_ms ? req->interval_ms : 1000;
	lv->top = req->top ? (req->top > 10000 ? 10000 : req->top) : 100;
	*ret = lv;
	return 0;
}

void live_free(struct live *lv)
{
	if (!lv)
		return;
	for (size_t i = 0; i < lv->nlt; i++) {
		free(lv->lt[i].self);
		free(lv->lt[i].total);
	}
	free(lv->lt);
	free(lv);
}

unsigned live_interval_ms(const struct live *lv)
{
	return lv->interval_ms;
}

static bool watched(const struct live *lv, const struct target *t)
{
	if (!(lv->uid == 0 || lv->uid == t->uid || lv->reader))
		return false;
	if (!lv->npids)
		return t->state == TARGET_ATTACHED;
	for (size_t i = 0; i < lv->npids; i++)
		if (lv->pids[i] == t->pid)
			return true;
	return false;
}

static struct live_target *state_of(struct live *lv, const struct target *t)
{
	struct live_target *q;

	for (size_t i = 0; i < lv->nlt; i++)
		if (lv->lt[i].pid == t->pid && lv->lt[i].attached_ns == t->attached_ns)
			return &lv->lt[i];
	q = realloc(lv->lt, (lv->nlt + 1) * sizeof(*q));
	if (!q)
		return NULL;
	lv->lt = q;
	q = &lv->lt[lv->nlt++];
	*q = (struct live_target){.pid = t->pid, .attached_ns = t->attached_ns};
	return q;
}

/* Make room for n functions in the remembered counts. */
static int grow_state(struct live_target *s, size_t n)
{
	uint64_t *a, *b;

	if (n <= s->n)
		return 0;
	a = realloc(s->self, n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	s->self = a;
	b = realloc(s->total, n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	s->total = b;
	memset(s->self + s->n, 0, (n - s->n) * sizeof(*a));
	memset(s->total + s->n, 0, (n - s->n) * sizeof(*b));
	s->n = n;
	return 0;
}

struct delta {
	uint32_t id;
	uint64_t self, total;
};

static int cmp_delta(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The deltas of every function of t since the last update, kernel ones merged into one
 * PROFILE_ID_KERNEL row under PROFILE_VIEW_NO_KERNEL (*kernel gets its cumulative counts). */
static size_t deltas(struct target *t, struct live_target *s, unsigned view, struct delta *d,
		     struct profile_func *kernel)
{
	size_t nf = profile_nfuncs(t->profile), n = 0;
	struct profile_stats ps;
	struct delta kd = {.id = PROFILE_ID_KERNEL};
	bool any = false;

	profile_get_stats(t->profile, &ps);
	*kernel = (struct profile_func){.name = PROFILE_KERNEL_NAME,
					.module = PROFILE_KERNEL_MODULE,
					.kind = PROFILE_KIND_KERNEL,
					.total = ps.kernel_samples};
	/* A function merged into another (named late): what this client saw of it counts as
	 * seen of the other, so the interval shows no jump, and the alias no row. */
	for (size_t i = 0; profile_has_aliases(t->profile) && i < nf; i++) {
		uint32_t c = profile_canon(t->profile, i);

		if (c == i)
			continue;
		s->self[c] += s->self[i];
		s->total[c] += s->total[i];
		s->self[i] = s->total[i] = 0;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct profile_func *f = profile_func_get(t->profile, i);
		/* The recount at a merge can leave less than was seen (total: once per stack). */
		struct delta di = {i, f->self > s->self[i] ? f->self - s->self[i] : 0,
				   f->total > s->total[i] ? f->total - s->total[i] : 0};

		if (profile_canon(t->profile, i) != i)
			continue;
		s->self[i] = f->self;
		s->total[i] = f->total;
		if ((view & PROFILE_VIEW_NO_KERNEL) && profile_func_is_kernel(f)) {
			kd.self += di.self;
			kernel->self += f->self;
			any = true;
			continue;
		}
		d[n++] = di;
	}
	if (any) {
		kd.total = ps.kernel_samples - s->kernel_samples;
		d[n++] = kd;
	}
	s->kernel_samples = ps.kernel_samples;
	return n;
}

static int fill_target(struct live *lv, struct target *t, unsigned view, struct live_msg *msg,
		       size_t k)
{
	Kprof__TopTarget *tt = &msg->tv[k];
	struct live_target *s = state_of(lv, t);
	size_t nf = profile_nfuncs(t->profile), shown = 0;
	_cleanup_free_ struct delta *d = NULL;
	struct profile_func kernel;

	if (!s || grow_state(s, nf) < 0)
		return -ENOMEM;
	d = calloc(nf + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	nf = deltas(t, s, view, d, &kernel);
	qsort(d, nf, sizeof(*d), cmp_delta);
	shown = nf < lv->top ? nf : lv->top;
	kprof__top_target__init(tt);
	kprof__target__init(&msg->tpb[k]);
	target_fill_pb(t, &msg->tpb[k]);
	tt->target = &msg->tpb[k];
	tt->interval_samples = t->samples - s->samples;
	s->samples = t->samples;
	tt->entries = calloc(shown ? shown : 1, sizeof(*tt->entries));
	msg->ev[k] = calloc(shown ? shown : 1, sizeof(*msg->ev[k]));
	if (!tt->entries || !msg->ev[k])
		return -ENOMEM;
	for (size_t i = 0; i < shown; i++) {
		struct profile_func f =
		    d[i].id == PROFILE_ID_KERNEL
			? kernel
			: profile_func_view(profile_func_get(t->profile, d[i].id), view);
		Kprof__TopEntry *e = &msg->ev[k][i];

		kprof__top_entry__init(e);
		e->function = (char *)f.name;
		e->module = (char *)f.module;
		e->kind = (Kprof__FrameKind)f.kind;
		e->self = d[i].self;
		e->total = d[i].total;
		e->self_all = f.self;
		e->total_all = f.total;
		tt->entries[i] = e;
	}
	tt->n_entries = shown;
	if (drift_events_build(t, 3, &msg->dv[k]) < 0)
		return -ENOMEM;
	tt->n_drift_events = msg->dv[k].n;
	tt->drift_events = msg->dv[k].ep;
	msg->tp[k] = tt;
	return 0;
}

int live_baseline(struct live *lv, unsigned view)
{
	for (struct target *t = manager_targets_first(lv->m); t; t = manager_targets_next(t)) {
		struct live_target *s;
		_cleanup_free_ struct delta *d = NULL;
		struct profile_func kernel;
		size_t nf = profile_nfuncs(t->profile);

		if (!watched(lv, t))
			continue;
		s = state_of(lv, t);
		d = calloc(nf + 1, sizeof(*d));
		if (!s || !d || grow_state(s, nf) < 0)
			return -ENOMEM;
		deltas(t, s, view, d, &kernel);
		s->samples = t->samples;
	}
	return 0;
}

int live_update(struct live *lv, unsigned view, struct live_msg *msg)
{
	size_t n = 0, k = 0;
	int err;

	memset(msg, 0, sizeof(*msg));
	kprof__update_reply__init(&msg->up);
	for (struct target *t = manager_targets_first(lv->m); t; t = manager_targets_next(t))
		n += watched(lv, t);
	msg->tv = calloc(n + 1, sizeof(*msg->tv));
	msg->tp = calloc(n + 1, sizeof(*msg->tp));
	msg->tpb = calloc(n + 1, sizeof(*msg->tpb));
	msg->ev = calloc(n + 1, sizeof(*msg->ev));
	msg->dv = calloc(n + 1, sizeof(*msg->dv));
	msg->n = n;
	if (!msg->tv || !msg->tp || !msg->tpb || !msg->ev || !msg->dv)
		return -ENOMEM;
	for (struct target *t = manager_targets_first(lv->m); t && k < n;
	     t = manager_targets_next(t)) {
		if (!watched(lv, t))
			continue;
		err = fill_target(lv, t, view, msg, k);
		if (err < 0)
			return err;
		k++;
	}
	msg->up.seq = ++lv->seq;
	msg->up.interval_ms = lv->interval_ms;
	msg->up.n_targets = k;
	msg->up.targets = msg->tp;
	return 0;
}

void live_msg_release(struct live_msg *msg)
{
	for (size_t i = 0; msg->tv && i < msg->n; i++) {
		free(msg->tv[i].entries);
		free(msg->ev ? msg->ev[i] : NULL);
		if (msg->dv)
			drift_events_release(&msg->dv[i]);
	}
	free(msg->dv);
	free(msg->tv);
	free(msg->tp);
	free(msg->tpb);
	free(msg->ev);
	memset(msg, 0, sizeof(*msg));
}
