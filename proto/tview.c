// SPDX-License-Identifier: GPL-2.0-only
/* tview.c: a kept profile by thread, for report --threads, --tid and --comm.
 *
 * kprofd keeps the thread of every stack (SavedStack.tid) and the latest name of each thread
 * (SavedProfile.threads), so a per-thread view is a pass over the exported profile in kprofctl:
 * no daemon request of its own. The threads table: stack indices sorted by (tid, leaf function),
 * then one scan adds up each thread's samples and each (thread, leaf) run's self samples, the
 * heaviest run being the thread's hottest function. The filter keeps the matching stacks in a
 * view of the profile that merge_report and the renderers read as any other profile.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/tview.h"

const char *tview_name(const Kprof__SavedProfile *sp, uint32_t tid)
{
	for (size_t i = 0; i < sp->n_threads; i++)
		if (sp->threads[i]->tid == tid && sp->threads[i]->name)
			return sp->threads[i]->name;
	return "";
}

/* A thread's name is looked up once per distinct tid: the stacks of one thread are many. */
static bool passes(const Kprof__SavedProfile *sp, const struct tview_filter *f, uint32_t tid,
		   uint32_t *last_tid, bool *last_ok)
{
	if (f->tid && tid != f->tid)
		return false;
	if (!f->comm)
		return true;
	if (tid != *last_tid || !*last_ok) {
		*last_tid = tid;
		const char *name = tview_name(sp, tid);

		*last_ok = name[0] && !strcmp(name, f->comm); /* no name matches no --comm */
	}
	return *last_ok;
}

int tview_filter(const Kprof__SavedProfile *sp, const struct tview_filter *f, struct tview *v)
{
	uint32_t last_tid = 0;
	bool last_ok = false;
	size_t k = 0;

	memset(v, 0, sizeof(*v));
	v->stacks = calloc(sp->n_stacks + 1, sizeof(*v->stacks));
	if (!v->stacks)
		return -ENOMEM;
	v->sp = *sp;
	kprof__target__init(&v->target);
	if (sp->target)
		v->target = *sp->target;
	v->target.samples = 0;
	for (size_t i = 0; i < sp->n_stacks; i++) {
		Kprof__SavedStack *st = sp->stacks[i];

		if (!passes(sp, f, st->tid, &last_tid, &last_ok))
			continue;
		v->stacks[k++] = st;
		v->target.samples += st->count;
	}
	v->sp.stacks = v->stacks;
	v->sp.n_stacks = k;
	v->sp.target = &v->target;
	return 0;
}

void tview_free(struct tview *v)
{
	free(v->stacks);
	v->stacks = NULL;
}

static uint32_t leaf(const Kprof__SavedStack *st, size_t nf)
{
	uint32_t id = st->n_ids ? st->ids[st->n_ids - 1] : TVIEW_NO_FUNC;

	return id < nf ? id : TVIEW_NO_FUNC;
}

static int by_tid_leaf(const void *a, const void *b, void *arg)
{
	const Kprof__SavedProfile *sp = arg;
	const Kprof__SavedStack *x = sp->stacks[*(const size_t *)a];
	const Kprof__SavedStack *y = sp->stacks[*(const size_t *)b];
	uint32_t lx = leaf(x, sp->n_functions), ly = leaf(y, sp->n_functions);

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return lx < ly ? -1 : lx > ly;
}

static int by_samples(const void *a, const void *b)
{
	const struct tview_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int tview_threads(const Kprof__SavedProfile *sp, struct tview_thread **ret, size_t *n)
{
	size_t *order = calloc(sp->n_stacks + 1, sizeof(*order));
	struct tview_thread *t = calloc(sp->n_stacks + 1, sizeof(*t));
	size_t nt = 0;

	*ret = NULL;
	*n = 0;
	if (!order || !t) {
		free(order);
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sp->n_stacks; i++)
		order[i] = i;
	qsort_r(order, sp->n_stacks, sizeof(*order), by_tid_leaf, (void *)sp);
	for (size_t i = 0; i < sp->n_stacks;) {
		const Kprof__SavedStack *st = sp->stacks[order[i]];
		uint32_t f = leaf(st, sp->n_functions);
		uint64_t run = 0;
		struct tview_thread *cur;

		if (!nt || t[nt - 1].tid != st->tid) {
			cur = &t[nt++];
			cur->tid = st->tid;
			cur->name = tview_name(sp, st->tid);
			cur->top_func = TVIEW_NO_FUNC;
		}
		cur = &t[nt - 1];
		/* One (tid, leaf) run. */
		for (; i < sp->n_stacks; i++) {
			const Kprof__SavedStack *s = sp->stacks[order[i]];

			if (s->tid != cur->tid || leaf(s, sp->n_functions) != f)
				break;
			run += s->count;
		}
		cur->samples += run;
		if (f != TVIEW_NO_FUNC && run > cur->top_self) {
			cur->top_self = run;
			cur->top_func = f;
		}
	}
	free(order);
	if (!nt) {
		free(t);
		return 0;
	}
	qsort(t, nt, sizeof(*t), by_samples);
	*ret = t;
	*n = nt;
	return 0;
}
