// SPDX-License-Identifier: GPL-2.0-only
/* saved.c: checking a kprof.SavedProfile and rebuilding its profile (see include/kprof/saved.h).
 *
 * The checks are the union of what the daemon's restore, kprofctl's export and the fuzz target
 * did each on their own before: everything an index points at exists, parents come first, sizes
 * are what kprofd could have written. Functions are interned, so a file naming one function
 * twice (kprofd never writes one) still gives a consistent profile. Fields added later
 * (mappings, thread names, source lines) are optional: a profile written before them loads.
 */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "kprof/abi.h"
#include "kprof/hcct.h"
#include "kprof/saved.h"

/* A saved MCCT: every node's function exists, parents come first. */
static int check_hcct(Kprof__SavedHcctNode *const *v, size_t n, size_t nfuncs)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->func >= nfuncs || v[i]->parent < -1 || v[i]->parent >= (int64_t)i)
			return -EBADMSG;
	return 0;
}

static bool str_ok(const char *s, size_t max)
{
	return !s || strnlen(s, max + 1) <= max;
}

/* Mappings and thread names (fields added later: a profile of an older kprofd has none). */
static int check_tables(const Kprof__SavedProfile *sp)
{
	if (sp->n_mappings > SAVED_MAX_MAPPINGS || sp->n_threads > SAVED_MAX_THREADS)
		return -EBADMSG;
	for (size_t i = 0; i < sp->n_mappings; i++) {
		const Kprof__SavedMapping *m = sp->mappings[i];

		if (m->limit < m->start || !str_ok(m->path, SAVED_MAX_PATH) ||
		    !str_ok(m->build_id, SAVED_MAX_BUILD_ID))
			return -EBADMSG;
	}
	for (size_t i = 0; i < sp->n_threads; i++)
		if (!str_ok(sp->threads[i]->name, SAVED_MAX_THREAD_NAME))
			return -EBADMSG;
	return 0;
}

static bool share_ok(double v)
{
	return v >= -1 && v <= 1; /* false for a NaN */
}

static bool drift_event_ok(const Kprof__DriftEvent *e)
{
	return str_ok(e->function, SAVED_MAX_DRIFT_NAME) &&
	       str_ok(e->gained, SAVED_MAX_DRIFT_NAME) && str_ok(e->lost, SAVED_MAX_DRIFT_NAME) &&
	       share_ok(e->overlap) && share_ok(e->gained_reference) &&
	       share_ok(e->gained_window) && share_ok(e->lost_reference) &&
	       share_ok(e->lost_window);
}

static bool drift_func_ok(const Kprof__DriftFunction *f)
{
	if (f->n_top_keys > SAVED_MAX_DRIFT_KEYS || !str_ok(f->function, SAVED_MAX_DRIFT_NAME) ||
	    !str_ok(f->module, SAVED_MAX_PATH) || !str_ok(f->state, 16) || !share_ok(f->overlap) ||
	    !share_ok(f->min_overlap))
		return false;
	for (size_t k = 0; k < f->n_top_keys; k++)
		if (!str_ok(f->top_keys[k]->key, SAVED_MAX_DRIFT_NAME) ||
		    !share_ok(f->top_keys[k]->reference) || !share_ok(f->top_keys[k]->window))
			return false;
	return true;
}

/* The source lines of one address (issue 32). */
static bool lines_ok(Kprof__SavedLine *const *v, size_t n)
{
	if (n > SAVED_MAX_LINES_PER_ADDR)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!str_ok(v[i]->function, SAVED_MAX_LINE_NAME) ||
		    !str_ok(v[i]->file, SAVED_MAX_LINE_NAME))
			return false;
	return true;
}

/* The drift result (added later: a profile of an older kprofd has none). */
static int check_drift(const Kprof__DriftReply *d)
{
	if (!d)
		return 0;
	if (d->n_functions > SAVED_MAX_DRIFT_FUNCS || d->n_events > SAVED_MAX_DRIFT_EVENTS ||
	    !share_ok(d->threshold) || !str_ok(d->kept_reason, 64))
		return -EBADMSG;
	for (size_t i = 0; i < d->n_functions; i++)
		if (!drift_func_ok(d->functions[i]))
			return -EBADMSG;
	for (size_t i = 0; i < d->n_events; i++)
		if (!drift_event_ok(d->events[i]))
			return -EBADMSG;
	return 0;
}

int saved_check(const Kprof__SavedProfile *sp)
{
	const Kprof__Target *pb = sp->target;

	if (sp->format != SAVED_FORMAT)
		return -EPROTONOSUPPORT;
	if (!pb || pb->pid == 0 || pb->pid > INT32_MAX)
		return -EBADMSG;
	for (size_t i = 0; i < sp->n_functions; i++) {
		int kind = sp->functions[i]->kind;

		if (kind < PROFILE_KIND_NATIVE || kind > PROFILE_KIND_UNKNOWN ||
		    !str_ok(sp->functions[i]->file, SAVED_MAX_PATH))
			return -EBADMSG;
	}
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];

		if (s->n_ids > KP_MAX_FRAMES)
			return -EBADMSG;
		for (size_t j = 0; j < s->n_ids; j++)
			if (s->ids[j] >= sp->n_functions)
				return -EBADMSG;
	}
	if (check_hcct(sp->hcct, sp->n_hcct, sp->n_functions) < 0 ||
	    check_hcct(sp->exact_hcct, sp->n_exact_hcct, sp->n_functions) < 0 ||
	    sp->n_call_counts > sp->n_functions)
		return -EBADMSG;
	if (check_drift(sp->drift) < 0 || sp->n_leaf_addrs > SAVED_MAX_LEAF_ADDRS)
		return -EBADMSG;
	for (size_t i = 0; i < sp->n_leaf_addrs; i++)
		if (sp->leaf_addrs[i]->func >= sp->n_functions ||
		    !lines_ok(sp->leaf_addrs[i]->lines, sp->leaf_addrs[i]->n_lines))
			return -EBADMSG;
	if (sp->lines && sp->lines->n_notes > SAVED_MAX_LINES_NOTES)
		return -EBADMSG;
	if (sp->n_call_sites > SAVED_MAX_CALL_SITES)
		return -EBADMSG;
	for (size_t i = 0; i < sp->n_call_sites; i++) {
		const Kprof__SavedCallSite *c = sp->call_sites[i];

		if (c->caller >= sp->n_functions || c->callee >= sp->n_functions ||
		    !lines_ok(c->lines, c->n_lines))
			return -EBADMSG;
	}
	for (size_t i = 0; sp->lines && i < sp->lines->n_notes; i++)
		if (!str_ok(sp->lines->notes[i], SAVED_MAX_LINES_NOTE))
			return -EBADMSG;
	/* attach --off-cpu's profile, one level deep, with the target's own Target */
	if (sp->off_cpu && (sp->off_cpu->off_cpu || sp->off_cpu->format != SAVED_FORMAT ||
			    !sp->off_cpu->target || saved_check(sp->off_cpu) < 0))
		return -EBADMSG;
	return check_tables(sp);
}

int saved_profile(const Kprof__SavedProfile *sp, const struct profile_limits *lim,
		  struct profile **ret, uint32_t **map)
{
	uint32_t *m = calloc(sp->n_functions ? sp->n_functions : 1, sizeof(*m));
	struct profile *p = NULL;
	int err = m ? profile_new(lim, &p) : -ENOMEM;

	for (size_t i = 0; err >= 0 && i < sp->n_functions; i++) {
		const Kprof__SavedFunction *f = sp->functions[i];

		err = profile_intern(p, f->name, f->module, f->start, (enum profile_kind)f->kind);
		if (err >= 0)
			m[i] = err;
		if (err >= 0 && f->file && f->file[0])
			err = profile_set_source(p, m[i], f->file, f->line);
	}
	for (size_t i = 0; err >= 0 && i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		uint32_t ids[KP_MAX_FRAMES];

		if (s->n_ids > KP_MAX_FRAMES) { /* saved_check was not called */
			err = -EBADMSG;
			break;
		}
		for (size_t j = 0; j < s->n_ids && err >= 0; j++) {
			if (s->ids[j] >= sp->n_functions)
				err = -EBADMSG;
			else
				ids[j] = m[s->ids[j]];
		}
		if (err < 0)
			break;
		err = profile_add_tid(p, s->tid, ids, s->n_ids, s->count);
	}
	if (err < 0) {
		profile_free(p);
		free(m);
		return err;
	}
	*ret = p;
	if (map)
		*map = m;
	else
		free(m);
	return 0;
}

int saved_hcct_tree(Kprof__SavedHcctNode *const *v, size_t n, uint64_t n_samples,
		    const uint32_t *map, struct hcct_tree **ret)
{
	struct hcct_tree *tree = calloc(1, sizeof(*tree));

	if (!tree || !(tree->entries = calloc(n ? n : 1, sizeof(*tree->entries)))) {
		hcct_tree_free(tree);
		return -ENOMEM;
	}
	tree->n = n_samples;
	tree->phi_den = 1;
	for (size_t i = 0; i < n; i++) {
		const Kprof__SavedHcctNode *h = v[i];
		struct hcct_entry *e = &tree->entries[i];

		if (h->parent >= (int64_t)i) { /* saved_check was not called */
			hcct_tree_free(tree);
			return -EBADMSG;
		}
		e->id = map ? map[h->func] : h->func;
		e->parent = h->parent < 0 ? HCCT_NONE : (uint32_t)h->parent;
		e->depth = h->parent < 0 ? 1 : tree->entries[h->parent].depth + 1;
		e->slot = HCCT_NONE;
		if (h->parent >= 0)
			tree->entries[h->parent].children++;
		if (h->monitored) {
			e->flags = HCCT_ENTRY_MONITORED;
			e->count = h->count;
			e->err = h->err;
		}
	}
	tree->len = n;
	*ret = tree;
	return 0;
}

void saved_functions(const struct profile *p, const uint32_t *ids, size_t n,
		     Kprof__SavedFunction *fv, Kprof__SavedFunction **fp)
{
	for (size_t i = 0; i < n; i++) {
		const struct profile_func *f = profile_func_get(p, ids ? ids[i] : (uint32_t)i);

		kprof__saved_function__init(&fv[i]);
		fv[i].name = (char *)f->name;
		fv[i].module = (char *)f->module;
		fv[i].start = f->start;
		fv[i].kind = (Kprof__FrameKind)f->kind;
		fv[i].file = (char *)(f->file ? f->file : "");
		fv[i].line = f->line;
		fp[i] = &fv[i];
	}
}

void saved_stack(Kprof__SavedStack *s, uint32_t tid, const uint32_t *ids, size_t n,
		 uint64_t count)
{
	kprof__saved_stack__init(s);
	s->ids = (uint32_t *)ids;
	s->n_ids = n;
	s->count = count;
	s->tid = tid;
}
