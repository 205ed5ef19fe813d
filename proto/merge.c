// SPDX-License-Identifier: GPL-2.0-only
/* merge.c: several processes' kept profiles as one, and its flat profile.
 *
 * record --children writes the profile of a command and of the processes it forked as one
 * file, and report/folded/export --cgroup/--unit show a watched cgroup's processes together;
 * kprofd keeps a profile per process, so kprofctl merges what it exports. Merging is
 * concatenation: functions keep their (name, module, kind) per process and stacks their
 * thread; tools that read the result (pprof, flame graphs) add equal names up. The flat report
 * does the same here: functions grouped by (name, module, kind) after a sort (a perf map's or
 * jitdump's module without its pid, so one JIT function of several processes is one row), self
 * counted at each stack's leaf, total once per stack per group (a mark array, not a set per
 * stack).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/saved.h"
#include "kprof/merge.h"

void merge_free(struct merged *m)
{
	free(m->maps);
	free(m->threads);
	free(m->funcs);
	free(m->stacks);
	free(m->stack_v);
	free(m->ids);
	free(m->origin_v);
	free(m->origins);
	free(m->leaf_v);
	free(m->leaves);
	free(m->site_v);
	free(m->sites);
}

/* The inputs' call sites, their functions moved by fo[i], within the saved profile's cap. */
static int merge_sites(Kprof__SavedProfile *const *v, size_t n, const size_t *fo, struct merged *m)
{
	size_t ns = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		ns += v[i]->n_call_sites;
	m->site_v = calloc(ns + 1, sizeof(*m->site_v));
	m->sites = calloc(ns + 1, sizeof(*m->sites));
	if (!m->site_v || !m->sites)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		m->sp.call_sites_dropped += v[i]->call_sites_dropped;
		for (size_t j = 0; j < v[i]->n_call_sites; j++) {
			if (k == SAVED_MAX_CALL_SITES) {
				m->sp.call_sites_dropped++;
				continue;
			}
			m->site_v[k] = *v[i]->call_sites[j];
			m->site_v[k].caller += fo[i];
			m->site_v[k].callee += fo[i];
			m->sites[k] = &m->site_v[k];
			k++;
		}
	}
	m->sp.call_sites = m->sites;
	m->sp.n_call_sites = k;
	return 0;
}

/* The inputs' leaf addresses (their functions moved by fo[i]), within the saved profile's
 * cap (the samples of those left out counted as dropped), and their lines' counts. */
static int merge_leaves(Kprof__SavedProfile *const *v, size_t n, const size_t *fo, struct merged *m)
{
	size_t nl = 0, k = 0;
	bool asked = false;

	for (size_t i = 0; i < n; i++)
		nl += v[i]->n_leaf_addrs;
	m->leaf_v = calloc(nl + 1, sizeof(*m->leaf_v));
	m->leaves = calloc(nl + 1, sizeof(*m->leaves));
	if (!m->leaf_v || !m->leaves)
		return -ENOMEM;
	kprof__saved_lines_info__init(&m->lines);
	for (size_t i = 0; i < n; i++) {
		const Kprof__SavedLinesInfo *li = v[i]->lines;

		m->sp.leaf_addrs_dropped += v[i]->leaf_addrs_dropped;
		for (size_t j = 0; j < v[i]->n_leaf_addrs; j++) {
			if (k == SAVED_MAX_LEAF_ADDRS) {
				m->sp.leaf_addrs_dropped += v[i]->leaf_addrs[j]->count;
				continue;
			}
			m->leaf_v[k] = *v[i]->leaf_addrs[j];
			m->leaf_v[k].func += fo[i];
			m->leaves[k] = &m->leaf_v[k];
			k++;
		}
		if (!li)
			continue;
		asked = true;
		m->lines.asked += li->asked;
		m->lines.resolved += li->resolved;
		m->lines.none += li->none;
		m->lines.failed += li->failed;
		m->lines.cached += li->cached;
		m->lines.helpers_started += li->helpers_started;
		m->lines.helpers_killed += li->helpers_killed;
		for (size_t j = 0; j < li->n_notes && m->lines.n_notes < SAVED_MAX_LINES_NOTES; j++)
			m->notes[m->lines.n_notes++] = li->notes[j];
	}
	m->lines.notes = m->notes;
	m->sp.leaf_addrs = m->leaves;
	m->sp.n_leaf_addrs = k;
	m->sp.lines = asked ? &m->lines : NULL;
	return 0;
}

/* The executable's basename without a version suffix ("python3.11" -> "python"). */
static bool exe_is(const char *base, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(base, name, n) && strspn(base + n, "0123456789.") == strlen(base + n);
}

const char *merge_runtime(const Kprof__Target *t, const char *exe)
{
	static const char *const names[][2] = {
	    {"java", "jvm"},	 {"node", "node"},     {"nodejs", "node"}, {"python", "python"},
	    {"ruby", "ruby"},	 {"php", "php"},       {"php-fpm", "php"}, {"dotnet", "dotnet"},
	    {"bun", "bun"},	 {"deno", "deno"},     {"beam.smp", "beam"},
	};
	const char *base = exe ? strrchr(exe, '/') : NULL;

	if (t && t->jvm)
		return "jvm";
	base = base ? base + 1 : exe;
	for (size_t i = 0; base && i < sizeof(names) / sizeof(names[0]); i++)
		if (exe_is(base, names[i][0]))
			return names[i][1];
	if (t && (t->jit_symbols || t->jitdump_symbols))
		return "jit";
	return "native";
}

/* v's executable mapping's path, or NULL. */
static const char *exe_of(const Kprof__SavedProfile *v)
{
	for (size_t j = 0; j < v->n_mappings; j++)
		if (v->mappings[j]->exe && v->mappings[j]->path && v->mappings[j]->path[0])
			return v->mappings[j]->path;
	return NULL;
}

/* Input v's origins appended at m->origin_v[*no]: its own, or one made of its target. Returns
 * the offset its stacks' origins get (their origin + offset; a stack without one: base). */
static uint32_t add_origins(struct merged *m, const Kprof__SavedProfile *v, size_t *no,
			    uint32_t *base)
{
	uint32_t off = *no;

	if (v->n_origins) {
		for (size_t j = 0; j < v->n_origins; j++)
			m->origin_v[(*no)++] = *v->origins[j];
		*base = 0;
		return off;
	}
	kprof__origin__init(&m->origin_v[*no]);
	if (v->target) {
		const char *exe = exe_of(v);

		m->origin_v[*no].pid = v->target->pid;
		m->origin_v[*no].freq_hz = v->target->freq_hz;
		m->origin_v[*no].comm = v->target->comm;
		m->origin_v[*no].unit = v->target->cgroup;
		m->origin_v[*no].exe = (char *)(exe ? exe : "");
		m->origin_v[*no].runtime = (char *)merge_runtime(v->target, exe);
	}
	(*no)++;
	*base = off + 1;
	return off;
}

int merge_profiles(Kprof__SavedProfile *const *v, size_t n, struct merged *m)
{
	size_t nf = 0, ns = 0, nid = 0, nm = 0, nt = 0, fo = 0, so = 0, io = 0, mo = 0, to = 0;
	size_t norig = 0, no = 0;
	_cleanup_free_ size_t *fov = calloc(n + 1, sizeof(*fov));

	if (!fov)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		norig += v[i]->n_origins ? v[i]->n_origins : 1;
		nf += v[i]->n_functions;
		ns += v[i]->n_stacks;
		nm += v[i]->n_mappings;
		nt += v[i]->n_threads;
		for (size_t j = 0; j < v[i]->n_stacks; j++)
			nid += v[i]->stacks[j]->n_ids;
	}
	m->funcs = calloc(nf + 1, sizeof(*m->funcs));
	m->stacks = calloc(ns + 1, sizeof(*m->stacks));
	m->stack_v = calloc(ns + 1, sizeof(*m->stack_v));
	m->ids = calloc(nid + 1, sizeof(*m->ids));
	kprof__saved_profile__init(&m->sp);
	m->maps = calloc(nm + 1, sizeof(*m->maps));
	m->threads = calloc(nt + 1, sizeof(*m->threads));
	m->origin_v = calloc(norig + 1, sizeof(*m->origin_v));
	m->origins = calloc(norig + 1, sizeof(*m->origins));
	if (!m->funcs || !m->stacks || !m->stack_v || !m->ids || !m->maps || !m->threads ||
	    !m->origin_v || !m->origins)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t base, ooff = add_origins(m, v[i], &no, &base);

		for (size_t j = 0; j < v[i]->n_stacks; j++) {
			const Kprof__SavedStack *s = v[i]->stacks[j];
			Kprof__SavedStack *d = &m->stack_v[so];

			kprof__saved_stack__init(d);
			d->count = s->count;
			d->tid = s->tid;
			d->origin = s->origin && s->origin <= v[i]->n_origins ? s->origin + ooff : base;
			d->ids = m->ids + io;
			d->n_ids = s->n_ids;
			for (size_t k = 0; k < s->n_ids; k++)
				m->ids[io++] = s->ids[k] + fo;
			m->stacks[so++] = d;
		}
		for (size_t j = 0; j < v[i]->n_functions; j++) /* (a profile may have none) */
			m->funcs[fo + j] = v[i]->functions[j];
		fov[i] = fo;
		fo += v[i]->n_functions;
		/* The command's mappings first: its executable names the profile. */
		for (size_t j = 0; j < v[i]->n_mappings; j++, mo++)
			if (mo < SAVED_MAX_MAPPINGS) /* the rest dropped, and counted */
				m->maps[mo] = v[i]->mappings[j];
		for (size_t j = 0; j < v[i]->n_threads; j++, to++)
			if (to < SAVED_MAX_THREADS)
				m->threads[to] = v[i]->threads[j];
		m->sp.mappings_dropped += v[i]->mappings_dropped;
		m->sp.threads_dropped += v[i]->threads_dropped;
	}
	m->sp.format = v[0]->format;
	/* The command's target, with the samples of all. */
	m->target = *v[0]->target;
	for (size_t i = 1; i < n; i++)
		m->target.samples += v[i]->target->samples;
	m->sp.target = &m->target;
	m->sp.functions = m->funcs;
	m->sp.n_functions = fo;
	m->sp.stacks = m->stacks;
	m->sp.n_stacks = so;
	m->sp.mappings = m->maps;
	m->sp.n_mappings = mo < SAVED_MAX_MAPPINGS ? mo : SAVED_MAX_MAPPINGS;
	m->sp.mappings_dropped += mo - m->sp.n_mappings;
	m->sp.threads = m->threads;
	m->sp.n_threads = to < SAVED_MAX_THREADS ? to : SAVED_MAX_THREADS;
	m->sp.threads_dropped += to - m->sp.n_threads;
	for (size_t i = 0; i < no; i++)
		m->origins[i] = &m->origin_v[i];
	m->sp.origins = m->origins;
	m->sp.n_origins = no;
	return merge_leaves(v, n, fov, m) < 0 ? -ENOMEM : merge_sites(v, n, fov, m);
}

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* A per-process JIT module (perf-PID.map, jit-PID.dump) without its pid: the same JIT code of
 * two processes is one function. */
const char *merge_module_key(const char *m, char *buf, size_t len)
{
	size_t n = m ? strlen(m) : 0;

	if (n > 9 && !strncmp(m, "perf-", 5) && !strcmp(m + n - 4, ".map") &&
	    strspn(m + 5, "0123456789") == n - 9)
		return "perf-PID.map";
	if (n > 9 && !strncmp(m, "jit-", 4) && !strcmp(m + n - 5, ".dump") &&
	    strspn(m + 4, "0123456789") == n - 9)
		return "jit-PID.dump";
	snprintf(buf, len, "%s", m ? m : "");
	return buf;
}

/* Function indices by (name, module, kind) (qsort_r; arg: the profile). */
static int func_cmp(const void *a, const void *b, void *arg)
{
	const Kprof__SavedProfile *sp = arg;
	const Kprof__SavedFunction *x = sp->functions[*(const uint32_t *)a],
				   *y = sp->functions[*(const uint32_t *)b];
	char bx[64], by[64];
	int c = str_cmp(x->name, y->name);

	if (!c)
		c = strcmp(merge_module_key(x->module, bx, sizeof(bx)),
			   merge_module_key(y->module, by, sizeof(by)));
	if (!c)
		c = (int)x->kind - (int)y->kind;
	return c;
}

struct flat {
	uint64_t self, total;
	uint32_t func; /* a function of the group */
	size_t mark;   /* last stack counted in total, + 1 */
};

static int flat_cmp(const void *a, const void *b)
{
	const struct flat *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return 0;
}

void merge_report_free(Kprof__ReportReply *r)
{
	if (!r)
		return;
	free(r->entries ? r->entries[0] : NULL); /* the entries, one array */
	free(r->entries);
	free(r);
}

int merge_report(const Kprof__SavedProfile *sp, unsigned top, Kprof__ReportReply **ret)
{
	size_t nf = sp->n_functions, ng = 0, ne;
	uint32_t *order = calloc(nf + 1, sizeof(*order)), *group = calloc(nf + 1, sizeof(*group));
	struct flat *g = calloc(nf + 1, sizeof(*g));
	Kprof__ReportReply *r = calloc(1, sizeof(*r));
	Kprof__FlatEntry *ev = NULL;
	uint64_t n = 0;

	if (!order || !group || !g || !r)
		goto nomem;
	for (size_t i = 0; i < nf; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nf, sizeof(*order), func_cmp, (void *)sp);
	for (size_t i = 0; i < nf; i++) {
		if (!i || func_cmp(&order[i - 1], &order[i], (void *)sp))
			g[ng++].func = order[i];
		group[order[i]] = (uint32_t)(ng - 1);
	}
	for (size_t s = 0; s < sp->n_stacks; s++) {
		const Kprof__SavedStack *st = sp->stacks[s];

		n += st->count;
		for (size_t k = 0; k < st->n_ids; k++) {
			struct flat *e;

			if (st->ids[k] >= nf)
				continue; /* saved_check refuses these; be safe */
			e = &g[group[st->ids[k]]];
			if (k + 1 == st->n_ids)
				e->self += st->count;
			if (e->mark != s + 1) {
				e->mark = s + 1;
				e->total += st->count;
			}
		}
	}
	qsort(g, ng, sizeof(*g), flat_cmp);
	/* Functions in no stack (a view cut to some threads: tview.c) are left out, last. */
	while (ng && !g[ng - 1].total)
		ng--;
	ne = top && top < ng ? top : ng;
	kprof__report_reply__init(r);
	r->entries = calloc(ne + 1, sizeof(*r->entries));
	ev = calloc(ne + 1, sizeof(*ev));
	if (!r->entries || !ev)
		goto nomem;
	for (size_t i = 0; i < ne; i++) {
		const Kprof__SavedFunction *f = sp->functions[g[i].func];

		kprof__flat_entry__init(&ev[i]);
		ev[i].function = f->name;
		ev[i].module = f->module;
		ev[i].kind = f->kind;
		ev[i].self = g[i].self;
		ev[i].total = g[i].total;
		ev[i].address = f->start;
		r->entries[i] = &ev[i];
	}
	if (!ne)
		free(ev); /* merge_report_free frees it through entries[0] */
	r->n_entries = ne;
	r->total_samples = n;
	r->functions = (uint32_t)ng;
	r->target = sp->target;
	free(order);
	free(group);
	free(g);
	*ret = r;
	return 0;
nomem:
	free(order);
	free(group);
	free(g);
	free(ev);
	if (r)
		free(r->entries);
	free(r);
	return -ENOMEM;
}
