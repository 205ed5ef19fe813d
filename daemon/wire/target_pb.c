// SPDX-License-Identifier: GPL-2.0-only
/* target_pb.c: a target as protobuf: its facts (kprof.Target), its whole profile
 * (kprof.SavedProfile, for the state directory and for export) and back.
 *
 * The only place that maps between struct target and the wire types: the domain objects hold
 * domain types (a restored HCCT is an HCCT snapshot, queried with hcct_tree_filter) and the
 * messages built here point into the target, so they are used before the target changes. A
 * saved profile is checked by saved_check (proto/saved.c, also what kprofctl and fuzz_saved
 * run) before anything of it is used. The mapping and thread-name tables, the functions'
 * source lines and the drift result came later: a profile written before them restores without
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/config.h"
#include "kprof/saved.h"
#include "wire/target_pb.h"
#include "os/clock.h"
#include "paths/paths.h"
#include "wire/paths_reply.h"
#include "symbols/symbolize.h"
#include "target/offcpu.h"

Kprof__FrameKind target_pb_kind(enum profile_kind k)
{
	switch (k) {
	case PROFILE_KIND_NATIVE:
		return KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
	case PROFILE_KIND_JIT:
		return KPROF__FRAME_KIND__FRAME_KIND_JIT;
	case PROFILE_KIND_KERNEL:
		return KPROF__FRAME_KIND__FRAME_KIND_KERNEL;
	default:
		return KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
	}
}

/* The perf map's and jitdump's files and the profile's stack and name counters. */
static void fill_pb_names(const struct target *t, const struct tsym_stats *ss,
			  const struct profile_stats *ps, Kprof__Target *pb)
{
	/* Strings point into the target's saved statistics or its tsym's. */
	pb->perfmap_path = (char *)ss->perfmap_path;
	pb->jitdump_path = (char *)ss->jitdump_path;
	pb->jitdump_problem = (char *)ss->jitdump_problem;
	pb->jitdump_symbols = ss->jitdump_symbols;
	pb->jitdump_bad_records = ss->jitdump_bad_records;
	pb->jitdump_bytes = ss->jitdump_bytes;
	pb->symbol_read_bytes = ss->symbol_read_bytes;
	pb->symbol_read_deferred = ss->symbol_read_deferred;
	pb->stacks = ps->stacks;
	pb->lost_stacks = ps->lost;
	pb->truncated_stacks = t->truncated;
	pb->eps = t->eps;
	pb->hcct_kernel = t->hcct_kernel;
	pb->unnamed_leaf_samples = t->unnamed_leaf;
	pb->unknown_samples = t->unknown_samples;
	pb->unresolved_addresses = ps->unresolved;
	pb->unresolved_dropped = ps->unresolved_over;
	pb->named_late = ps->renamed;
	pb->unnamed_note = (char *)t->unnamed_note;
	pb->probe_samples = t->probe_samples;
	pb->memory_bytes = target_memory(t);
	pb->drift_bytes = target_drift_memory(t);
}

/* The annotation's memory and the JVM's map requests, when the target has them. */
static void fill_pb_annot_jvm(const struct target *t, const struct tsym_stats *ss,
			      Kprof__Target *pb)
{
	if (t->annot) {
		struct annot_stats as;

		annot_get_stats(t->annot, &as);
		pb->annotate_bytes = as.memory;
		pb->annotate_dropped = as.dropped;
	}
	if (ss->jvm) {
		pb->jvm = true;
		pb->jvm_map_asks = ss->jvm_asks;
		pb->jvm_map_answers = ss->jvm_answers;
		pb->jvm_map_failures = ss->jvm_failures;
		pb->jvm_note = (char *)ss->jvm_note;
	}
}

/* Exact mode's (--calls) counters and duty cycle. */
static void fill_pb_calls(const struct target *t, Kprof__Target *pb)
{
	struct calls_stats cs;

	calls_get_stats(t->calls, &cs);
	pb->call_events = cs.events;
	pb->bursts = cs.bursts;
	pb->probes = cs.probes;
	pb->unmatched_exits = cs.unmatched_exits;
	pb->call_events_lost = cs.lost;
	pb->call_events_skipped = cs.skipped;
	pb->call_events_outside = cs.outside;
	pb->calls_hot = cs.hot;
	pb->hw_functions = cs.hw_functions;
	pb->hw_estimated = cs.hw_estimated;
	pb->hw_covered = cs.hw_covered;
	pb->hw_stopped = (char *)cs.hw_stopped;
	pb->calls_duty = cs.duty;
	pb->calls_hits = cs.hits;
	pb->calls_hits_per_s = cs.hits_per_s;
	pb->calls_hit_cost_ns = cs.hit_ns;
	pb->calls_cost_kind = (char *)(cs.cost_kind ? cs.cost_kind : "");
	pb->calls_slowdown = cs.slowdown;
	pb->calls_max_slowdown = cs.max_slowdown;
	pb->calls_max_slowdown_default = cs.max_slowdown_default;
	pb->calls_budget_offs = cs.budget_offs;
	pb->calls_budget_off = cs.budget_off;
}

void target_fill_pb_brief(const struct target *t, Kprof__Target *pb)
{
	const struct tsym_stats *ss = t->sym ? tsym_get_stats(t->sym) : &t->saved_sym;

	pb->pid = t->pid;
	pb->uid = t->uid;
	pb->comm = (char *)t->comm;
	pb->state = t->state == TARGET_ATTACHED ? KPROF__TARGET_STATE__TARGET_STATE_ATTACHED
		    : t->state == TARGET_EXITED ? KPROF__TARGET_STATE__TARGET_STATE_EXITED
						: KPROF__TARGET_STATE__TARGET_STATE_DETACHED;
	pb->freq_hz = t->freq;
	pb->samples = t->samples;
	pb->attached_at_ns = t->attached_ns;
	pb->ended_at_ns = t->ended_ns;
	pb->jit_symbols = ss->jit_symbols;
	pb->jitdump_symbols = ss->jitdump_symbols;
	pb->jvm = ss->jvm;
	pb->cgroup = t->cgroup ? t->cgroup : (char *)"";
	pb->rule = t->rule ? t->rule : (char *)"";
	pb->all = t->all;
}

void target_fill_pb(const struct target *t, Kprof__Target *pb)
{
	struct profile_stats ps;
	const struct tsym_stats *ss = t->sym ? tsym_get_stats(t->sym) : &t->saved_sym;

	target_fill_pb_brief(t, pb);
	profile_get_stats(t->profile, &ps);
	pb->resumes = t->resumes;
	pb->resume_note = (char *)t->resume_note;
	pb->duration_sec = t->duration_sec;
	pb->exit_code = t->exit_code;
	pb->perfmap_bad_lines = ss->perfmap_bad_lines;
	pb->symbols_refused = ss->refused;
	pb->save_failures = t->save_failures;
	pb->samples_refused = t->samples_refused;
	pb->samples_cut = t->samples_cut;
	pb->samples_before_exec = t->samples_before_exec;
	pb->thread_events = t->state == TARGET_ATTACHED ? t->threads.events : 0; /* closed at end */
	pb->threads_unsampled = t->threads.unsampled;
	pb->children = t->children;
	pb->parent = t->parent;
	pb->children_followed = t->children_followed;
	pb->children_refused = t->children_refused;
	fill_pb_names(t, ss, &ps, pb);
	fill_pb_annot_jvm(t, ss, pb);
	pb->calls = t->calls != NULL;
	if (t->calls)
		fill_pb_calls(t, pb);
	paths_fill_target(t->paths, pb);
	if (t->offcpu) {
		pb->off_cpu = true;
		pb->off_cpu_ns = offcpu_total_ns(t->offcpu);
		pb->n_off_cpu_state_ns = KP_OFF_NSTATES;
		pb->off_cpu_state_ns = (uint64_t *)t->offcpu->ns;
		pb->off_cpu_intervals = t->offcpu->intervals;
		pb->off_cpu_lost_stacks = t->offcpu->lost_stacks;
	}
}

/* Exact mode's results (checked by saved_check): counts moved to the restored profile's ids. */
static int restore_calls(const Kprof__SavedProfile *sp, const uint32_t *map, struct calls **ret)
{
	const Kprof__Target *pb = sp->target;
	const struct calls_stats cs = {
	    .events = pb->call_events,
	    .bursts = pb->bursts,
	    .unmatched_exits = pb->unmatched_exits,
	    .lost = pb->call_events_lost,
	    .skipped = pb->call_events_skipped,
	    .outside = pb->call_events_outside,
	    .probes = pb->probes,
	    .duty = pb->calls_duty,
	    .hw_functions = pb->hw_functions,
	    .hw_estimated = pb->hw_estimated,
	    .hw_covered = pb->hw_covered,
	    .hw_stopped = pb->hw_stopped,
	    .hits = pb->calls_hits,
	    .hit_ns = pb->calls_hit_cost_ns,
	    .cost_kind = pb->calls_cost_kind,
	    .hits_per_s = pb->calls_hits_per_s,
	    .slowdown = pb->calls_slowdown,
	    .max_slowdown = pb->calls_max_slowdown,
	    .max_slowdown_default = pb->calls_max_slowdown_default,
	    .budget_offs = pb->calls_budget_offs,
	};
	size_t nf = sp->n_functions;
	_cleanup_free_ uint64_t *counts = NULL;
	struct hcct_tree *tree = NULL;
	int err;

	if (sp->n_call_counts) {
		counts = calloc(nf, sizeof(*counts));
		if (!counts)
			return -ENOMEM;
		for (size_t i = 0; i < sp->n_call_counts; i++)
			counts[map[i]] += sp->call_counts[i];
	}
	if (sp->n_exact_hcct) {
		err =
		    saved_hcct_tree(sp->exact_hcct, sp->n_exact_hcct, sp->exact_hcct_n, map, &tree);
		if (err < 0)
			return err;
	}
	err = calls_restore(&cs, counts, nf, tree, ret);
	if (err < 0) {
		hcct_tree_free(tree);
		return err;
	}
	counts = NULL; /* calls_restore's now */
	return 0;
}

/* The symbol statistics of a saved target (strings cut to their fields, as when kept). */
static void restore_symbol_stats(const Kprof__Target *pb, struct tsym_stats *ss)
{
	ss->jit_symbols = pb->jit_symbols;
	ss->perfmap_bad_lines = pb->perfmap_bad_lines;
	ss->refused = pb->symbols_refused;
	snprintf(ss->perfmap_path, sizeof(ss->perfmap_path), "%s",
		 pb->perfmap_path ? pb->perfmap_path : "");
	snprintf(ss->jitdump_path, sizeof(ss->jitdump_path), "%s",
		 pb->jitdump_path ? pb->jitdump_path : "");
	snprintf(ss->jitdump_problem, sizeof(ss->jitdump_problem), "%s",
		 pb->jitdump_problem ? pb->jitdump_problem : "");
	ss->jitdump_symbols = pb->jitdump_symbols;
	ss->jitdump_bad_records = pb->jitdump_bad_records;
	ss->jitdump_bytes = pb->jitdump_bytes;
	ss->symbol_read_bytes = pb->symbol_read_bytes;
	ss->symbol_read_deferred = pb->symbol_read_deferred;
}

_Static_assert(MAPTAB_DEFAULT_MAX <= SAVED_MAX_MAPPINGS, "a saved table fits a target's");
_Static_assert(TNAMES_DEFAULT_MAX <= SAVED_MAX_THREADS, "a saved table fits a target's");

/* The saved mapping and thread-name tables (checked by saved_check: within the caps). */
static void restore_tables(const Kprof__SavedProfile *sp, struct target *t)
{
	for (size_t i = 0; i < sp->n_mappings; i++) {
		const Kprof__SavedMapping *m = sp->mappings[i];
		const struct maptab_entry e = {.start = m->start,
					       .limit = m->limit,
					       .offset = m->offset,
					       .vaddr = m->vaddr,
					       .has_vaddr = m->has_vaddr,
					       .exe = m->exe,
					       .path = m->path ? m->path : "",
					       .build_id = m->build_id};

		maptab_add(t->maps, &e);
	}
	for (size_t i = 0; i < sp->n_threads; i++) {
		const Kprof__SavedThread *th = sp->threads[i];

		if (th->name)
			tnames_set(t->tnames, th->tid, th->name, strlen(th->name));
	}
}

/* The drift result kept with a profile (checked by saved_check), packed in the target. */
static int restore_drift(struct target *t, const Kprof__DriftReply *d)
{
	size_t len = kprof__drift_reply__get_packed_size(d);

	t->drift_kept = malloc(len ? len : 1);
	if (!t->drift_kept)
		return -ENOMEM;
	t->drift_kept_len = kprof__drift_reply__pack(d, t->drift_kept);
	return 0;
}

/* The saved target's own fields: identity, state, times and counters. */
static void restore_fields(const Kprof__Target *pb, struct target *t)
{
	t->pid = pb->pid;
	t->uid = pb->uid;
	snprintf(t->comm, sizeof(t->comm), "%s", pb->comm ? pb->comm : "");
	t->state =
	    pb->state == KPROF__TARGET_STATE__TARGET_STATE_EXITED ? TARGET_EXITED : TARGET_DETACHED;
	t->freq = pb->freq_hz;
	t->duration_sec = pb->duration_sec;
	t->exit_code = pb->exit_code;
	t->attached_ns = pb->attached_at_ns;
	t->ended_ns = pb->ended_at_ns;
	t->samples = pb->samples;
	t->truncated = pb->truncated_stacks;
	t->samples_refused = pb->samples_refused;
	t->samples_cut = pb->samples_cut;
	t->samples_before_exec = pb->samples_before_exec;
	t->unnamed_leaf = pb->unnamed_leaf_samples;
	t->unknown_samples = pb->unknown_samples;
	t->children = pb->children;
	t->parent = pb->parent;
	t->children_followed = pb->children_followed;
	t->children_refused = pb->children_refused;
	t->all = pb->all;
	t->eps = pb->eps;
	t->hcct_kernel = pb->hcct_kernel;
	t->resumes = pb->resumes;
	snprintf(t->resume_note, sizeof(t->resume_note), "%s",
		 pb->resume_note ? pb->resume_note : "");
}

/* A profile saved while attached at kprofd's stop: who and what to attach again. */
static void restore_resume(const Kprof__SavedResume *r, struct target *t)
{
	if (!r)
		return;
	t->resume = true;
	t->start_ticks = r->start_ticks;
	t->by = r->by;
	t->no_jvm_map = r->no_jvm_map;
	t->duration_left = r->duration_left_sec;
	t->resumes = r->resumes;
	t->resume_off_cpu = r->off_cpu;
}

/* attach --off-cpu's kept profile, and its totals from the target's fields. */
static int restore_offcpu(const Kprof__SavedProfile *off, const Kprof__Target *pb, struct target *t)
{
	struct profile *prof;
	int err = saved_profile(
	    off, &(struct profile_limits){.max_stacks = t->env->conf->max_stacks}, &prof, NULL);

	if (err >= 0)
		err = target_offcpu_restore(t, prof);
	if (err < 0)
		return err;
	for (size_t i = 0; i < pb->n_off_cpu_state_ns && i < KP_OFF_NSTATES; i++)
		t->offcpu->ns[i] = pb->off_cpu_state_ns[i];
	t->offcpu->intervals = pb->off_cpu_intervals;
	t->offcpu->lost_stacks = pb->off_cpu_lost_stacks;
	return 0;
}

/* The tables, profile, HCCT, exact mode's results, paths and drift, each if saved. */
static int restore_parts(const Kprof__SavedProfile *sp, struct target *t)
{
	const Kprof__Target *pb = sp->target;
	_cleanup_free_ uint32_t *map = NULL;
	int err;

	err = target_tables_new(t);
	if (err >= 0) {
		restore_tables(sp, t);
		err = saved_profile(sp, NULL, &t->profile, &map);
	}
	if (err >= 0 && sp->n_hcct)
		err = saved_hcct_tree(sp->hcct, sp->n_hcct, sp->hcct_n, map, &t->saved_hcct);
	if (err >= 0 && pb->calls)
		err = restore_calls(sp, map, &t->calls);
	if (err >= 0 && sp->paths)
		err = paths_restore(t, sp->paths);
	if (err >= 0 && sp->drift)
		err = restore_drift(t, sp->drift);
	if (err >= 0 && sp->off_cpu && pb->off_cpu)
		err = restore_offcpu(sp->off_cpu, pb, t);
	return err;
}

int target_restore(const struct target_env *env, const Kprof__SavedProfile *sp, struct target **ret)
{
	const Kprof__Target *pb = sp->target;
	struct target *t;
	int err;

	err = saved_check(sp);
	if (err < 0)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->env = env;
	restore_fields(pb, t);
	restore_resume(sp->resume, t);
	restore_symbol_stats(pb, &t->saved_sym);
	if (pb->cgroup && pb->cgroup[0])
		t->cgroup = strdup(pb->cgroup);
	if (pb->rule && pb->rule[0])
		t->rule = strdup(pb->rule);
	err = (pb->cgroup && pb->cgroup[0] && !t->cgroup) || (pb->rule && pb->rule[0] && !t->rule)
		  ? -ENOMEM
		  : restore_parts(sp, t);
	if (err < 0) {
		target_free(t);
		return err;
	}
	*ret = t;
	return 0;
}

static int pack_stack(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	struct saved_msg *m = userdata;
	Kprof__SavedStack *s = &m->sv[m->msg.n_stacks];

	saved_stack(s, tid, ids, n, count);
	m->sp[m->msg.n_stacks++] = s;
	return 0;
}

/* An HCCT (live, else its saved snapshot) as saved MCCT nodes: *vp, *pp malloc'd. Functions
 * merged after the fact (names given late) are merged in it too (canon: the profile's, or
 * NULL for an HCCT of other ids). */
static int pack_hcct(const struct hcct *h, const struct hcct_tree *saved,
		     const struct profile *canon, Kprof__SavedHcctNode **vp,
		     Kprof__SavedHcctNode ***pp, size_t *n_out, uint64_t *n_samples)
{
	struct hcct_tree *tree = NULL;
	const struct hcct_tree *src = saved;
	size_t n;

	if (h && hcct_snapshot(h, &tree) == 0)
		src = tree;
	if (!src)
		return 0;
	if (canon && target_canon_tree(canon, &tree, src) == 0 && tree)
		src = tree;
	n = src->len;
	*vp = calloc(n ? n : 1, sizeof(**vp));
	*pp = calloc(n ? n : 1, sizeof(**pp));
	if (!*vp || !*pp) {
		hcct_tree_free(tree);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hcct_entry *e = &src->entries[i];
		Kprof__SavedHcctNode *v = &(*vp)[i];

		kprof__saved_hcct_node__init(v);
		v->func = e->id;
		v->parent = e->parent == HCCT_NONE ? -1 : (int32_t)e->parent;
		v->count = e->count;
		v->err = e->err;
		v->monitored = e->flags & HCCT_ENTRY_MONITORED;
		(*pp)[i] = v;
	}
	*n_out = n;
	*n_samples = src->n;
	hcct_tree_free(tree);
	return 0;
}

static int pack_thread(uint32_t tid, const char *name, void *userdata)
{
	struct saved_msg *m = userdata;
	Kprof__SavedThread *th = &m->tv[m->msg.n_threads];

	kprof__saved_thread__init(th);
	th->tid = tid;
	th->name = (char *)name;
	m->tp[m->msg.n_threads++] = th;
	return 0;
}

int saved_msg_tables(const struct target *t, struct saved_msg *m)
{
	size_t nm = t->maps ? maptab_count(t->maps) : 0;
	size_t nt = t->tnames ? tnames_count(t->tnames) : 0;

	m->mv = calloc(nm ? nm : 1, sizeof(*m->mv));
	m->mp = calloc(nm ? nm : 1, sizeof(*m->mp));
	m->tv = calloc(nt ? nt : 1, sizeof(*m->tv));
	m->tp = calloc(nt ? nt : 1, sizeof(*m->tp));
	if (!m->mv || !m->mp || !m->tv || !m->tp)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		const struct maptab_entry *e = maptab_at(t->maps, i);
		Kprof__SavedMapping *v = &m->mv[i];

		kprof__saved_mapping__init(v);
		v->start = e->start;
		v->limit = e->limit;
		v->offset = e->offset;
		v->path = (char *)e->path;
		v->build_id = (char *)e->build_id;
		v->vaddr = e->vaddr;
		v->has_vaddr = e->has_vaddr;
		v->exe = e->exe;
		m->mp[i] = v;
	}
	m->msg.n_mappings = nm;
	m->msg.mappings = m->mp;
	m->msg.mappings_dropped = t->maps ? maptab_dropped(t->maps) : 0;
	if (t->tnames) {
		tnames_foreach(t->tnames, pack_thread, m);
		m->msg.threads_dropped = tnames_dropped(t->tnames);
	}
	m->msg.threads = m->tp;
	return 0;
}

int saved_msg_build_tables(const struct target *t, struct saved_msg *m)
{
	int err;

	memset(m, 0, sizeof(*m));
	kprof__saved_profile__init(&m->msg);
	err = saved_msg_tables(t, m);
	if (err < 0)
		saved_msg_release(m);
	return err;
}

int saved_msg_build(const struct target *t, struct saved_msg *m)
{
	return saved_msg_build_range(t, NULL, NULL, m);
}

/* The whole profile's paths trace and drift result (live, or as kept), if it has them. */
static void pack_paths_drift(const struct target *t, struct saved_msg *m)
{
	if (t->paths && paths_reply(t, 0, false, &m->pm) == 0) {
		m->pm.r.target = NULL; /* the profile's target says it */
		m->msg.paths = &m->pm.r;
	}
	if (t->drift && drift_reply_keep(t, &m->dm) == 0)
		m->msg.drift = &m->dm.r;
	else if (t->drift_kept &&
		 (m->dk = kprof__drift_reply__unpack(NULL, t->drift_kept_len, t->drift_kept)))
		m->msg.drift = m->dk;
}

static bool any_id(uint32_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	return true;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct annot_addr *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int saved_msg_leaf_addrs(struct saved_msg *m, struct annot_addr *v, size_t n, size_t nf)
{
	size_t k = 0, want = 0;
	uint64_t dropped = 0;

	for (size_t i = 0; i < n; i++)
		want += v[i].self && v[i].id < nf;
	if (!want)
		return 0;
	want = want < SAVED_MAX_LEAF_ADDRS ? want : SAVED_MAX_LEAF_ADDRS;
	qsort(v, n, sizeof(*v), by_count_desc);
	m->lv = calloc(want, sizeof(*m->lv));
	m->lp = calloc(want, sizeof(*m->lp));
	if (!m->lv || !m->lp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].self || v[i].id >= nf)
			continue;
		if (k == SAVED_MAX_LEAF_ADDRS) {
			dropped += v[i].self;
			continue;
		}
		kprof__saved_leaf_addr__init(&m->lv[k]);
		m->lv[k].func = v[i].id;
		m->lv[k].address = v[i].addr;
		m->lv[k].count = v[i].self;
		m->lp[k] = &m->lv[k];
		k++;
	}
	m->msg.n_leaf_addrs = k;
	m->msg.leaf_addrs = m->lp;
	m->msg.leaf_addrs_dropped = dropped;
	return 0;
}

/* The annotate store's per-address self samples as leaf_addrs (issue 32), canonical function
 * ids, the heaviest SAVED_MAX_LEAF_ADDRS kept (the others' samples counted as dropped). */
static int pack_leaf_addrs(const struct target *t, struct saved_msg *m)
{
	_cleanup_free_ struct annot_addr *v = NULL;
	size_t n = 0;
	int err;

	if (!t->annot)
		return 0;
	err = annot_collect(t->annot, any_id, NULL, &v, &n);
	if (err < 0 || !n)
		return err;
	for (size_t i = 0; i < n; i++)
		v[i].id = profile_canon(t->profile, v[i].id);
	return saved_msg_leaf_addrs(m, v, n, profile_nfuncs(t->profile));
}

struct cs_pack {
	const struct target *t;
	struct saved_msg *m;
	size_t n;
};

static int pack_one_site(const struct csite_entry *e, void *userdata)
{
	struct cs_pack *p = userdata;
	Kprof__SavedCallSite *c = &p->m->cv[p->n];
	uint32_t nf = profile_nfuncs(p->t->profile);

	kprof__saved_call_site__init(c);
	c->caller = profile_canon(p->t->profile, e->caller);
	c->callee = profile_canon(p->t->profile, e->callee);
	c->address = e->addr;
	if (c->caller < nf && c->callee < nf)
		p->m->cp[p->n++] = c;
	return 0;
}

/* The call-site set as call_sites (issue 32), canonical function ids. */
static int pack_call_sites(const struct target *t, struct saved_msg *m)
{
	struct cs_pack p = {t, m, 0};
	struct csite_stats st;

	if (!t->csite)
		return 0;
	csite_get_stats(t->csite, &st);
	m->cv = calloc(st.entries + 1, sizeof(*m->cv));
	m->cp = calloc(st.entries + 1, sizeof(*m->cp));
	if (!m->cv || !m->cp)
		return -ENOMEM;
	csite_foreach(t->csite, pack_one_site, &p);
	m->msg.call_sites = m->cp;
	m->msg.n_call_sites = p.n;
	m->msg.call_sites_dropped = st.dropped;
	return 0;
}

void target_resume_pb(const struct target *t, unsigned duration_left, Kprof__SavedResume *r)
{
	kprof__saved_resume__init(r);
	r->start_ticks = t->start_ticks;
	r->by = t->by;
	r->no_jvm_map = t->no_jvm_map;
	r->duration_left_sec = duration_left;
	r->resumes = t->resumes;
	r->off_cpu = t->offcpu != NULL;
}

int saved_msg_build_range(const struct target *t, const struct profile *range,
			  const struct hcct_tree *tree, struct saved_msg *m)
{
	const struct profile *prof = range ? range : t->profile;
	const bool r = range != NULL;
	struct profile_stats ps;
	size_t nf = profile_nfuncs(prof), ncounts;
	const uint64_t *counts;
	int err;

	memset(m, 0, sizeof(*m));
	kprof__saved_profile__init(&m->msg);
	kprof__target__init(&m->target);
	profile_get_stats(prof, &ps);
	m->fv = calloc(nf ? nf : 1, sizeof(*m->fv));
	m->fp = calloc(nf ? nf : 1, sizeof(*m->fp));
	m->sv = calloc(ps.stacks ? ps.stacks : 1, sizeof(*m->sv));
	m->sp = calloc(ps.stacks ? ps.stacks : 1, sizeof(*m->sp));
	if (!m->fv || !m->fp || !m->sv || !m->sp) {
		saved_msg_release(m);
		return -ENOMEM;
	}
	saved_functions(prof, NULL, nf, m->fv, m->fp);
	profile_foreach_stack(prof, pack_stack, m);
	err = saved_msg_tables(t, m);
	if (err >= 0)
		err =
		    r ? pack_hcct(NULL, tree, NULL, &m->hv, &m->hp, &m->msg.n_hcct, &m->msg.hcct_n)
		      : pack_hcct(t->hcct, t->saved_hcct, t->profile, &m->hv, &m->hp,
				  &m->msg.n_hcct, &m->msg.hcct_n);
	if (err >= 0 && !r)
		err = pack_leaf_addrs(t, m);
	if (err >= 0 && !r)
		err = pack_call_sites(t, m);
	if (err >= 0 && !r)
		err = pack_hcct(calls_tree(t->calls), calls_saved_tree(t->calls), NULL, &m->xv,
				&m->xp, &m->msg.n_exact_hcct, &m->msg.exact_hcct_n);
	if (err < 0) {
		saved_msg_release(m);
		return err;
	}
	m->msg.hcct = m->hp;
	m->msg.exact_hcct = m->xp;
	counts = calls_counts(t->calls, &ncounts);
	m->msg.n_call_counts = r ? 0 : ncounts < nf ? ncounts : nf;
	m->msg.call_counts = (uint64_t *)counts;
	target_fill_pb(t, &m->target);
	if (r) {
		m->target.stacks = ps.stacks;
		m->target.lost_stacks = ps.lost;
	}
	if (!r)
		pack_paths_drift(t, m);
	if (!r && t->resume) {
		target_resume_pb(t, t->duration_left, &m->resume);
		m->msg.resume = &m->resume;
	}
	m->msg.format = 1;
	m->msg.target = &m->target;
	m->msg.n_functions = nf;
	m->msg.functions = m->fp;
	m->msg.stacks = m->sp;
	return 0;
}

int saved_msg_build_offcpu(const struct target *t, struct saved_msg *m)
{
	struct profile_stats ps;
	int err;

	if (!t->offcpu)
		return -ENODATA;
	err = saved_msg_build_range(t, t->offcpu->prof, NULL, m);
	if (err < 0)
		return err;
	profile_get_stats(t->offcpu->prof, &ps);
	m->target.samples = ps.samples; /* nanoseconds */
	return 0;
}

void saved_msg_release(struct saved_msg *m)
{
	free(m->fv);
	free(m->fp);
	free(m->sv);
	free(m->sp);
	free(m->hv);
	free(m->hp);
	free(m->xv);
	free(m->xp);
	free(m->mv);
	free(m->mp);
	free(m->tv);
	free(m->tp);
	free(m->lv);
	free(m->lp);
	free(m->ids);
	free(m->fids);
	free(m->cv);
	free(m->cp);
	arena_release(&m->lines.a);
	paths_msg_release(&m->pm);
	drift_reply_release(&m->dm);
	if (m->dk)
		kprof__drift_reply__free_unpacked(m->dk, NULL);
	memset(m, 0, sizeof(*m));
}

int target_pack(const struct target *t, uint8_t **ret, size_t *retlen)
{
	struct saved_msg m, om;
	uint8_t *buf;
	size_t len;
	int err;

	err = saved_msg_build(t, &m);
	if (err >= 0 && t->offcpu && (err = saved_msg_build_offcpu(t, &om)) < 0)
		saved_msg_release(&m);
	if (err < 0)
		return err;
	if (t->offcpu) { /* its own Target is the profile's */
		om.msg.target = &m.target;
		m.msg.off_cpu = &om.msg;
	}
	len = kprof__saved_profile__get_packed_size(&m.msg);
	buf = malloc(len ? len : 1);
	if (buf)
		kprof__saved_profile__pack(&m.msg, buf);
	saved_msg_release(&m);
	if (t->offcpu)
		saved_msg_release(&om);
	if (!buf)
		return -ENOMEM;
	*ret = buf;
	*retlen = len;
	return 0;
}

int target_unpack(const struct target_env *env, const uint8_t *buf, size_t len, struct target **ret)
{
	Kprof__SavedProfile *sp = kprof__saved_profile__unpack(NULL, len, buf);
	int err;

	if (!sp)
		return -EBADMSG;
	err = target_restore(env, sp, ret);
	kprof__saved_profile__free_unpacked(sp, NULL);
	return err;
}
