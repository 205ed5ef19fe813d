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
 *
 * A target attached with --off-cpu has its off-CPU profile followed the same way: its
 * functions with most off-CPU self time in the interval (nanoseconds) are put on the entries
 * of the same function (name and module), or added after the CPU ones, so that each function is
 * one row with both columns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "service/live.h"
#include "manager/manager.h"
#include "target/offcpu.h"
#include "wire/target_pb.h"

#define LIVE_MAX_PIDS 64

/* A profile's counts at the last update, by function id. */
struct live_counts {
	uint64_t *self, *total;
	size_t n;
	uint64_t kernel_samples;
};

struct live_target {
	pid_t pid;
	uint64_t attached_ns;
	struct live_counts cpu, off; /* its samples; its off-CPU nanoseconds (attach --off-cpu) */
	uint64_t samples, off_ns;
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
		free(lv->lt[i].cpu.self);
		free(lv->lt[i].cpu.total);
		free(lv->lt[i].off.self);
		free(lv->lt[i].off.total);
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
static int grow_state(struct live_counts *s, size_t n)
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

/* The deltas of every function of profile p since the last update, kernel ones merged into one
 * PROFILE_ID_KERNEL row under PROFILE_VIEW_NO_KERNEL (*kernel gets its cumulative counts). */
static size_t deltas(const struct profile *p, struct live_counts *s, unsigned view,
		     struct delta *d, struct profile_func *kernel)
{
	size_t nf = profile_nfuncs(p), n = 0;
	struct profile_stats ps;
	struct delta kd = {.id = PROFILE_ID_KERNEL};
	bool any = false;

	profile_get_stats(p, &ps);
	*kernel = (struct profile_func){.name = PROFILE_KERNEL_NAME,
					.module = PROFILE_KERNEL_MODULE,
					.kind = PROFILE_KIND_KERNEL,
					.total = ps.kernel_samples};
	/* A function merged into another (named late): what this client saw of it counts as
	 * seen of the other, so the interval shows no jump, and the alias no row. */
	for (size_t i = 0; profile_has_aliases(p) && i < nf; i++) {
		uint32_t c = profile_canon(p, i);

		if (c == i)
			continue;
		s->self[c] += s->self[i];
		s->total[c] += s->total[i];
		s->self[i] = s->total[i] = 0;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct profile_func *f = profile_func_get(p, i);
		/* The recount at a merge can leave less than was seen (total: once per stack). */
		struct delta di = {i, f->self > s->self[i] ? f->self - s->self[i] : 0,
				   f->total > s->total[i] ? f->total - s->total[i] : 0};

		if (profile_canon(p, i) != i)
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

/* The deltas of profile p (*n of them) since the last update, by interval self then total, in
 * *ret (free()d by the caller). 0 or -ENOMEM. */
static int sorted_deltas(const struct profile *p, struct live_counts *s, unsigned view,
			 struct delta **ret, size_t *n, struct profile_func *kernel)
{
	size_t nf = profile_nfuncs(p);
	struct delta *d;

	if (grow_state(s, nf) < 0 || !(d = calloc(nf + 1, sizeof(*d))))
		return -ENOMEM;
	*n = deltas(p, s, view, d, kernel);
	qsort(d, *n, sizeof(*d), cmp_delta);
	*ret = d;
	return 0;
}

/* The function of delta d of profile p as the reader sees it. */
static struct profile_func delta_func(const struct profile *p, const struct delta *d,
				      const struct profile_func *kernel, unsigned view)
{
	return d->id == PROFILE_ID_KERNEL ? *kernel
					  : profile_func_view(profile_func_get(p, d->id), view);
}

/* The entry of function f among e[0..n), else e[n] made for it with no samples (*n grown). */
static Kprof__TopEntry *entry_of(Kprof__TopEntry *e, size_t *n, const struct profile_func *f)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(e[i].function, f->name) && !strcmp(e[i].module, f->module))
			return &e[i];
	kprof__top_entry__init(&e[*n]);
	e[*n].function = (char *)f->name;
	e[*n].module = (char *)f->module;
	e[*n].kind = (Kprof__FrameKind)f->kind;
	return &e[(*n)++];
}

/* The off-CPU entries of t (its functions with most off-CPU self time in the interval, at most
 * top) into ev[0..*n), each on its CPU entry if it has one. */
static int fill_offcpu(struct live *lv, struct target *t, struct live_target *s, unsigned view,
		       Kprof__TopEntry *ev, size_t *n)
{
	_cleanup_free_ struct delta *d = NULL;
	struct profile_func kernel;
	size_t nd;

	if (sorted_deltas(t->offcpu->prof, &s->off, view, &d, &nd, &kernel) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < nd && i < lv->top; i++) {
		struct profile_func f = delta_func(t->offcpu->prof, &d[i], &kernel, view);
		Kprof__TopEntry *e = entry_of(ev, n, &f);

		e->off_cpu_self = d[i].self;
		e->off_cpu_total = d[i].total;
		e->off_cpu_self_all = f.self;
	}
	return 0;
}

static int fill_target(struct live *lv, struct target *t, unsigned view, struct live_msg *msg,
		       size_t k)
{
	Kprof__TopTarget *tt = &msg->tv[k];
	struct live_target *s = state_of(lv, t);
	size_t nf, shown = 0, cap;
	_cleanup_free_ struct delta *d = NULL;
	struct profile_func kernel;

	if (!s || sorted_deltas(t->profile, &s->cpu, view, &d, &nf, &kernel) < 0)
		return -ENOMEM;
	cap = (nf < lv->top ? nf : lv->top) + (t->offcpu ? lv->top : 0);
	kprof__top_target__init(tt);
	kprof__target__init(&msg->tpb[k]);
	target_fill_pb(t, &msg->tpb[k]);
	tt->target = &msg->tpb[k];
	tt->interval_samples = t->samples - s->samples;
	s->samples = t->samples;
	tt->entries = calloc(cap + 1, sizeof(*tt->entries));
	msg->ev[k] = calloc(cap + 1, sizeof(*msg->ev[k]));
	if (!tt->entries || !msg->ev[k])
		return -ENOMEM;
	for (; shown < nf && shown < lv->top; shown++) {
		struct profile_func f = delta_func(t->profile, &d[shown], &kernel, view);
		Kprof__TopEntry *e = &msg->ev[k][shown];

		kprof__top_entry__init(e);
		e->function = (char *)f.name;
		e->module = (char *)f.module;
		e->kind = (Kprof__FrameKind)f.kind;
		e->self = d[shown].self;
		e->total = d[shown].total;
		e->self_all = f.self;
		e->total_all = f.total;
	}
	if (t->offcpu) {
		uint64_t ns = offcpu_total_ns(t->offcpu);

		tt->interval_off_cpu = ns > s->off_ns ? ns - s->off_ns : 0;
		s->off_ns = ns;
		if (fill_offcpu(lv, t, s, view, msg->ev[k], &shown) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < shown; i++)
		tt->entries[i] = &msg->ev[k][i];
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
		_cleanup_free_ struct delta *d = NULL, *od = NULL;
		struct profile_func kernel;
		size_t n;

		if (!watched(lv, t))
			continue;
		s = state_of(lv, t);
		if (!s || sorted_deltas(t->profile, &s->cpu, view, &d, &n, &kernel) < 0)
			return -ENOMEM;
		s->samples = t->samples;
		if (!t->offcpu)
			continue;
		if (sorted_deltas(t->offcpu->prof, &s->off, view, &od, &n, &kernel) < 0)
			return -ENOMEM;
		s->off_ns = offcpu_total_ns(t->offcpu);
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
