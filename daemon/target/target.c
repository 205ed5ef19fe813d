// SPDX-License-Identifier: GPL-2.0-only
/* target.c: one profiled process: its identity, state, symbols and profile.
 *
 * A sample's frames arrive leaf first (kernel frames, then user frames); they are symbolized
 * (with the profile's address cache in front of the symbolizer) and stored root first: user
 * root ... user leaf, kernel root ... kernel leaf. A user stack cut at KP_MAX_STACK frames gets
 * a "[truncated]" root so partial stacks are never mistaken for complete ones. The address
 * cache is cleared whenever the symbolizer says earlier answers may have changed; then, too, the
 * executable mappings read are added to the target's mapping table (what a pprof export places
 * native code with), with the process's executable marked. A sample's thread name goes to the
 * thread-name table; a new JIT function gets its source line, if its jitdump said it.
 *
 * A user frame no symbol names (anonymous or memfd memory, or no mapping: JIT code without a
 * perf map) is kept by its address (profile_intern_unresolved, at most 64K addresses, then by
 * its mapping as before, counted). Whenever the symbols change (a perf map or jitdump grew or
 * was read again, new mappings), target_names_update looks those addresses up again and renames
 * the ones now covered (profile_rename): a frame gets the first name read for its address after
 * its sample. It runs from the housekeeping timer and, forced, before an ended target's profile
 * is kept and before its symbols are dropped (ARCHITECTURE.md §2.2.1).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kprof/cleanup.h"
#include "kprof/codeshare.h"
#include "os/clock.h"
#include "kprof/config.h"
#include "target/annotate.h"
#include "kprof/drift.h"
#include "target/driftcode.h"
#include "kernel/hwbp.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "kprof/strpool.h"
#include "paths/paths.h"
#include "kernel/sampler.h"
#include "symbols/symbolize.h"
#include "target/target.h"
#include "os/log.h"
#include "os/procfs.h"
#include "target/offcpu.h"

int target_proc_uid(pid_t pid, uid_t *uid)
{
	struct procfs_ident id;
	int err = procfs_ident_read(pid, &id);

	if (err < 0)
		return err;
	if (id.zombie)
		return -ESRCH;
	*uid = procfs_ident_owner(&id);
	return 0;
}

static void names_note(struct target *t);

/* The bounds of t's off-CPU profile: its CPU profile's. */
static void offcpu_limits_of(const struct target *t, struct offcpu_limits *lim)
{
	*lim = (struct offcpu_limits){.max_stacks = t->env->conf->max_stacks,
				      .hcct_slots = hcct_slots_for_eps(t->eps),
				      .hcct_max_nodes = t->env->conf->hcct_max_nodes};
}

int target_offcpu_restore(struct target *t, struct profile *prof)
{
	struct offcpu_limits lim;

	offcpu_limits_of(t, &lim);
	return offcpu_restore(&lim, prof, &t->offcpu);
}

int target_tables_new(struct target *t)
{
	int err = maptab_new(0, &t->maps);

	return err < 0 ? err : tnames_new(0, &t->tnames);
}

struct record_ctx {
	struct target *t;
	char exe[MAPTAB_PATH_MAX];
	bool have_exe;
};

static int record_mapping(const struct tsym_mapping *m, void *userdata)
{
	struct record_ctx *c = userdata;
	const struct maptab_entry e = {.start = m->start,
				       .limit = m->end,
				       .offset = m->offset,
				       .vaddr = m->vaddr,
				       .has_vaddr = m->has_vaddr,
				       .exe = c->have_exe && !strcmp(m->path, c->exe),
				       .path = m->path,
				       .build_id = m->build_id};

	maptab_add(c->t->maps, &e); /* a full table counts what it leaves out */
	return 0;
}

/* The mappings of the last read of the maps into the target's table (see the top). */
static void record_mappings(struct target *t)
{
	struct record_ctx *c;

	if (!t->sym || !t->maps)
		return;
	c = malloc(sizeof(*c));
	if (!c)
		return;
	c->t = t;
	/* Read while it runs: the last read of an exited process adds no new executable. */
	c->have_exe = t->state == TARGET_ATTACHED && procfs_exe(t->pid, c->exe, sizeof(c->exe)) > 0;
	tsym_foreach_mapping(t->sym, record_mapping, c);
	free(c);
}

static int read_identity(struct target *t)
{
	struct procfs_ident id;
	int err = procfs_ident_read(t->pid, &id);

	if (err < 0)
		return err;
	if (id.zombie)
		return -ECHILD;
	memcpy(t->comm, id.comm, sizeof(t->comm));
	t->uid = procfs_ident_owner(&id);
	t->proc_uid = id.ruid;
	t->proc_euid = id.euid;
	return 0;
}

static void set_options(struct target *t, const struct target_env *env, pid_t pid,
			const struct attach_opts *o)
{
	t->env = env;
	t->pid = pid;
	t->freq = o->freq;
	t->duration_sec = o->duration_sec;
	t->eps = o->eps;
	t->hcct_kernel = o->hcct_kernel;
	t->children = o->children;
	t->no_jvm_map = o->no_jvm_map;
	t->parent = o->parent;
	t->all = o->all;
	t->before_exec = o->from_exec;
	t->state = TARGET_ATTACHED;
	t->attached_ns = now_ns(CLOCK_REALTIME);
	t->win_start_boot = now_ns(CLOCK_BOOTTIME);
	t->win_start_real = t->attached_ns;
}

/* The id buffer, memo, names and tables: 0 or a negative errno. */
static int alloc_tables(struct target *t, const struct attach_opts *o)
{
	t->ids = malloc((2 * KP_MAX_STACK + 2) * sizeof(*t->ids)); /* + [truncated], probes */
	t->memo = calloc(1, sizeof(*t->memo));
	if (o->cgroup)
		t->cgroup = strdup(o->cgroup);
	if (o->rule)
		t->rule = strdup(o->rule);
	return t->ids && t->memo && (!o->cgroup || t->cgroup) && (!o->rule || t->rule)
		   ? target_tables_new(t)
		   : -ENOMEM;
}

/* A shared copy of code the annotation store no longer holds (codeshare.h). */
static void release_code(void *ctx, const uint8_t *bytes)
{
	codeshare_unref(ctx, bytes);
}

/* The profile, HCCT, annotation and (if enabled) drift models: 0 or a negative errno. */
static int new_models(struct target *t, const struct config *conf)
{
	int err;

	err = profile_new(&(struct profile_limits){.max_stacks = conf->max_stacks,
						   .max_stack_ids = 32 * (size_t)conf->max_stacks},
			  &t->profile);
	if (err < 0)
		return err;
	/* Memory bounded by eps: m counters, at most 32 m + 1024 MCCT nodes. */
	err = hcct_new(&(struct hcct_params){.slots = hcct_slots_for_eps(t->eps),
					     .max_nodes = conf->hcct_max_nodes,
					     .max_depth = 2 * KP_MAX_STACK + 1},
		       &t->hcct);
	if (err < 0)
		return err;
	err = annot_new(&(struct annot_limits){.max_addrs = ANNOTATE_MAX_ADDRS,
					       .max_code_bytes = ANNOTATE_MAX_CODE,
					       .max_chunk = ANNOTATE_MAX_FUNC},
			&t->annot);
	if (err < 0)
		return err;
	if (t->env && t->env->code)
		annot_set_release(t->annot, release_code, t->env->code);
	err = annotate_queue_new(&t->annot_q);
	if (err < 0)
		return err;
	err = csite_new(TARGET_MAX_CALL_SITES, &t->csite);
	if (err < 0)
		return err;
	if (conf->drift_enabled)
		err = drift_new(&(struct drift_config){.window = conf->drift_window,
						       .min_samples = conf->drift_min_samples,
						       .threshold = conf->drift_threshold},
				&t->drift);
	return err;
}

int target_new(const struct target_env *env, pid_t pid, const struct attach_opts *o,
	       struct target **ret)
{
	struct target *t = calloc(1, sizeof(*t));
	struct offcpu_limits lim;
	int err;

	if (!t)
		return -ENOMEM;
	set_options(t, env, pid, o);
	err = alloc_tables(t, o);
	if (err >= 0)
		err = read_identity(t);
	if (err >= 0)
		err = new_models(t, env->conf);
	if (err >= 0 && o->off_cpu) {
		offcpu_limits_of(t, &lim);
		err = offcpu_new(&lim, &t->offcpu);
	}
	if (err < 0)
		goto fail;
	err = tsym_new(env->sym, pid, t->proc_uid, t->proc_euid,
		       (uint64_t)env->conf->perfmap_max_mb << 20, &t->sym);
	if (err < 0)
		goto fail;
	tsym_set_reader(t->sym, t->uid);
	t->cache_gen = t->names_gen = tsym_generation(t->sym);
	record_mappings(t);
	names_note(t);
	*ret = t;
	return 0;
fail:
	target_free(t);
	return err;
}

void target_free(struct target *t)
{
	if (!t)
		return;
	sampler_target_free(t->events);
	calls_free(t->calls);
	paths_free(t->paths);
	hcct_tree_free(t->saved_hcct);
	free(t->saved_name);
	free(t->cgroup);
	free(t->rule);
	hcct_free(t->hcct);
	drift_free(t->drift);
	drift_free(t->drift_paths);
	free(t->drift_kept);
	sd_event_source_disable_unref(t->duration_timer);
	tsym_free(t->sym);
	profile_free(t->profile);
	maptab_free(t->maps);
	tnames_free(t->tnames);
	annot_free(t->annot);
	annotate_queue_free(t->annot_q);
	csite_free(t->csite);
	offcpu_free(t->offcpu);
	free(t->ids);
	free(t->memo);
	free(t->batch_buf);
	free(t);
}

void target_exec(struct target *t)
{
	uint64_t gen = tsym_generation(t->sym);
	struct maptab *mt;

	tsym_exec(t->sym);
	/* The mappings of the program before the exec are gone: an export names the new one
	 * (record's held child was kprofctl until its exec). */
	if (maptab_new(0, &mt) < 0)
		return;
	maptab_free(t->maps);
	t->maps = mt;
	if (tsym_generation(t->sym) != gen) /* read: the process still runs */
		record_mappings(t);
}

void target_flush_captures(struct target *t)
{
	if (t->state == TARGET_ATTACHED)
		annotate_flush(t->annot, t->annot_q, t->pid, t->uid, t->env ? t->env->code : NULL);
	else
		annotate_exec(t->annot_q); /* exited or detached: its process is not read */
}

/* Its symbols dropped: what the note can still promise. */
static void unnamed_note_final(struct target *t)
{
	struct profile_stats ps;

	profile_get_stats(t->profile, &ps);
	if (!ps.unresolved || t->unnamed_note[0] == '\0' ||
	    !strstr(t->unnamed_note, "(named when they are)"))
		return;
	snprintf(t->unnamed_note, sizeof(t->unnamed_note),
		 "%zu address%s of unnamed code no perf map or jitdump named while kprofd read "
		 "them (until the process ended, exec'd, or 10 min after the detach)",
		 ps.unresolved, ps.unresolved == 1 ? "" : "es");
}

struct jit_keep {
	struct target *t;
	char key[LCACHE_MAX_KEY + 1];
};

/* One address's JIT line, kept in the cache (srclines_jit_key). */
static void keep_jit_line(struct jit_keep *k, uint64_t addr)
{
	struct srcline_frame fr = {.func = ""};

	if (tsym_jit_line(k->t->sym, addr, &fr.file, &fr.line))
		srclines_put(k->t->env->lines, k->key, addr, &fr, 1);
}

static int keep_site_line(const struct csite_entry *e, void *userdata)
{
	keep_jit_line(userdata, e->addr);
	return 0;
}

static bool any_id(uint32_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	return true;
}

/* The source lines of the JIT code of its sampled leaf addresses and call sites, from its
 * jitdump's debug records, into the lines cache before the symbols go (issue 32): exports
 * after the drop (a kept profile) still have them. */
static void keep_jit_lines(struct target *t)
{
	_cleanup_free_ struct annot_addr *v = NULL;
	struct jit_keep k = {.t = t};
	size_t n = 0;

	if (!t->env->lines || !t->annot)
		return;
	srclines_jit_key(t->pid, t->attached_ns, k.key);
	if (annot_collect(t->annot, any_id, NULL, &v, &n) == 0)
		for (size_t i = 0; i < n; i++)
			keep_jit_line(&k, v[i].addr);
	if (t->csite)
		csite_foreach(t->csite, keep_site_line, &k);
}

void target_drop_symbols(struct target *t)
{
	if (!t->sym)
		return;
	record_mappings(t); /* libraries read since the last change */
	/* Samples that came after the profile was kept may have been named since. */
	if (target_names_update(t, true) > 0 && t->state != TARGET_ATTACHED)
		t->dirty = true;
	t->saved_sym = *tsym_get_stats(t->sym);
	keep_jit_lines(t);
	tsym_free(t->sym);
	t->sym = NULL;
	unnamed_note_final(t);
	/* A perf map can be hundreds of MB: give the pages back now, not at the next growth of
	 * the heap's top (glibc keeps freed memory in the middle of the heap otherwise). */
	malloc_trim(0);
	profile_cache_clear(t->profile);
	memset(t->memo->addr, 0, sizeof(t->memo->addr));
}

/* How long a detached target's symbols are kept for names that come late. */
#define LATE_NAMES_NS (600 * 1000000000ULL)

/* The process of t still runs the program its symbols were read for, with the same owner: 1;
 * ended (gone or a zombie): 0; exec'd or changed credentials: -1. */
static int same_program(struct target *t)
{
	struct procinfo_stat ps;
	struct procfs_ident id;
	struct stat exe;
	char path[48];

	if (procfs_stat(t->pid, &ps) < 0 || ps.start_ticks != t->start_ticks ||
	    procfs_ident_read(t->pid, &id) < 0 || id.zombie)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	if (procfs_ident_owner(&id) != t->uid || stat(path, &exe) < 0)
		return -1;
	if (!t->late_ino) {
		t->late_dev = exe.st_dev;
		t->late_ino = exe.st_ino;
	}
	return exe.st_dev == t->late_dev && exe.st_ino == t->late_ino ? 1 : -1;
}

bool target_late_names(struct target *t)
{
	struct profile_stats ps;
	int same;

	if (t->state != TARGET_DETACHED || !t->sym)
		return false;
	profile_get_stats(t->profile, &ps);
	if (!ps.unresolved || now_ns(CLOCK_REALTIME) - t->ended_ns > LATE_NAMES_NS)
		return false;
	same = same_program(t);
	if (same < 0)
		return false; /* another program now: its files say nothing of these addresses */
	tsym_resume(t->sym);
	if (!same) /* ended: what it wrote at its exit, through the files kept open */
		tsym_gone(t->sym);
	else
		tsym_refresh(t->sym);
	if (target_names_update(t, !same) > 0)
		t->dirty = true;
	target_commit_names(t); /* readers' drains commit only the attached targets' */
	if (!same)
		tsym_done(t->sym);
	return same;
}

/* Cached and memoized answers may be stale once the target's symbols changed. */
static void forget_if_symbols_changed(struct target *t)
{
	if (!t->sym || tsym_generation(t->sym) == t->cache_gen)
		return;
	profile_cache_clear(t->profile);
	memset(t->memo->addr, 0, sizeof(t->memo->addr));
	t->cache_gen = tsym_generation(t->sym);
	record_mappings(t);
}

/* The address to look up for user frame i (0 = leaf): return addresses point after the call,
 * so every frame but the leaf is looked up at addr - 1 (a call at the very end of a function
 * is not blamed on the next one). */
static uint64_t user_addr(const struct kp_sample *s, int i)
{
	uint64_t ip = s->ips[s->n_kernel + i];

	return i > 0 && ip ? ip - 1 : ip;
}

/* Whether the memo holds a at depth d (root = 0). */
static bool memo_has(const struct frame_memo *memo, int d, uint64_t a)
{
	return d < KP_MAX_STACK && a && memo->addr[d] == a;
}

/* Kernel functions that run only to handle a uprobe: the int3 and single-step exceptions of
 * user code (a uprobe's breakpoint and its out-of-line step), the uprobe core and the handlers
 * it calls. A sample with one of them in its kernel stack is the cost of a probe. */
static bool is_probe_function(const char *name)
{
	static const char *const names[] = {
	    "asm_exc_int3",
	    "exc_int3",
	    "asm_exc_debug",
	    "exc_debug_user",
	    "uprobe_notify_resume",
	    "handle_swbp",
	    "handle_singlestep",
	    "handler_chain",
	    "uprobe_dispatcher",
	    "uretprobe_dispatcher",
	    "uprobe_handle_trampoline",
	    "uprobe_pre_sstep_notifier",
	    "uprobe_post_sstep_notifier",
	    "arch_uprobe_exception_notify",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* A sample whose user leaf is one of t's hardware breakpoints (a path trace's or exact mode's):
 * an execute breakpoint stops before its instruction, and on a VM its debug trap is a VM exit
 * whose time the guest books to that user instruction, so the sample is the probe's cost. */
static bool at_breakpoint(const struct target *t, const struct kp_sample *s)
{
	uint64_t ip;

	if (!s->n_user || (!t->paths && !t->calls))
		return false;
	ip = user_addr(s, 0);
	return paths_breakpoint_at(t->paths, ip) || calls_breakpoint_at(t->calls, ip);
}

static bool is_probe_id(const struct target *t, uint32_t id)
{
	for (unsigned i = 0; i < t->nprobe_ids; i++)
		if (t->probe_ids[i] == id)
			return true;
	return false;
}

static int frame_id(struct target *t, uint64_t addr, bool kernel)
{
	struct sym_result r;
	const char *file;
	uint32_t id, line;
	bool by_addr = false;
	size_t nfuncs;
	int ret;

	if (profile_cache_get(t->profile, addr, &id))
		return id;
	if (!t->sym) /* ended: its symbol sources are gone (a late sample) */
		return profile_intern(t->profile, "[unknown]", "[unknown]", 0,
				      PROFILE_KIND_UNKNOWN);
	tsym_resolve(t->sym, addr, kernel, &r);
	forget_if_symbols_changed(t); /* they may have while resolving */
	nfuncs = profile_nfuncs(t->profile);
	ret = -E2BIG;
	/* Kept by address only in anonymous executable memory, where a perf map or jitdump may
	 * name it later; a junk address stays "[unknown]" (counted in unknown_frames). */
	if (!kernel && r.kind == PROFILE_KIND_UNKNOWN && addr && r.jit_memory)
		by_addr = (ret = profile_intern_unresolved(t->profile, addr, r.module)) >= 0;
	if (ret == -E2BIG && r.shared) /* the host-wide names: kept, not copied */
		ret = profile_intern_shared(t->profile, r.name, strpool_hash_of(r.name), r.module,
					    strpool_hash_of(r.module), r.start, r.kind);
	else if (ret == -E2BIG) /* not by address: too many are waiting (counted) */
		ret = profile_intern(t->profile, r.name, r.module, r.start, r.kind);
	/* "[unknown]" itself: junk, or an address not kept for lack of room (counted) */
	if (ret >= 0 && !kernel && r.kind == PROFILE_KIND_UNKNOWN && !by_addr &&
	    !strcmp(r.module, "[unknown]") && !strcmp(r.name, "[unknown]"))
		t->unknown_id = ret + 1;
	if (ret >= 0)
		profile_cache_put(t->profile, addr, ret);
	if (ret >= 0 && kernel && (size_t)ret == nfuncs && is_probe_function(r.name) &&
	    t->nprobe_ids < ARRAY_SIZE(t->probe_ids))
		t->probe_ids[t->nprobe_ids++] = ret;
	if (ret >= 0 && (size_t)ret == nfuncs && r.kind == PROFILE_KIND_JIT &&
	    tsym_jit_source(t->sym, r.start, &file, &line))
		profile_set_source(t->profile, ret, file, line); /* no memory: no source line */
	return ret;
}

static int special_id(struct target *t, const char *name)
{
	return profile_intern(t->profile, name, "[kprof]", 0, PROFILE_KIND_UNKNOWN);
}

/* Code nothing names (name_by_mapping's unknown kinds: anonymous or memfd memory), not one of
 * kprofd's own markers nor a junk address ("[unknown]": no executable memory there). */
static bool is_unnamed_code(const struct target *t, uint32_t id)
{
	const struct profile_func *f = profile_func_get(t->profile, id);

	return f && f->kind == PROFILE_KIND_UNKNOWN && strcmp(f->module, "[kprof]") != 0 &&
	       strcmp(f->module, "[unknown]") != 0;
}

uint64_t target_memory(const struct target *t)
{
	struct profile_stats ps;
	struct hcct_stats hs;
	uint64_t n;

	profile_get_stats(t->profile, &ps);
	n = ps.memory;
	if (t->saved_hcct)
		n += t->saved_hcct->len * sizeof(*t->saved_hcct->entries);
	if (t->hcct) {
		hcct_get_stats(t->hcct, &hs);
		n += hs.bytes;
	}
	n += calls_memory(t->calls);
	if (t->annot) {
		struct annot_stats as;

		annot_get_stats(t->annot, &as);
		n += as.memory;
	}
	if (t->csite) {
		struct csite_stats cs;

		csite_get_stats(t->csite, &cs);
		n += cs.memory;
	}
	return n + target_drift_memory(t) + offcpu_memory(t->offcpu);
}

uint64_t target_drift_memory(const struct target *t)
{
	uint64_t n = t->drift_kept_len;
	struct drift_stats ds;

	if (t->drift) {
		drift_get_stats(t->drift, &ds);
		n += ds.memory;
	}
	if (t->drift_paths) {
		drift_get_stats(t->drift_paths, &ds);
		n += ds.memory;
	}
	return n;
}

/* ---- profile drift (ALGORITHMS.md §12) ---- */

#define DRIFT_CALLEE (1ULL << 62) /* a key naming a callee: DRIFT_CALLEE | its id */

void target_drift_name(const struct target *t, bool paths, uint32_t func, char *buf, size_t len)
{
	const struct profile_func *f;

	if (paths && t->paths && t->paths->id == func)
		snprintf(buf, len, "%s (paths)", t->paths->func ? t->paths->func : "?");
	else if (paths)
		snprintf(buf, len, "trace %u (paths)", func);
	else if ((f = profile_func_get(t->profile, profile_canon(t->profile, func))))
		snprintf(buf, len, "%s", f->name);
	else
		snprintf(buf, len, "?");
}

void target_drift_key(const struct target *t, bool paths, uint64_t key, char *buf, size_t len)
{
	const struct profile_func *f;

	if (key == DRIFT_KEY_OTHER)
		snprintf(buf, len, "other");
	else if (paths)
		snprintf(buf, len, "path %llu", (unsigned long long)key);
	else if (!(key & DRIFT_CALLEE) && (key & DRIFT_KEY_BLOCK))
		snprintf(buf, len, "block +0x%llx", (unsigned long long)(key & ~DRIFT_KEY_BLOCK));
	else if (!(key & DRIFT_CALLEE))
		snprintf(buf, len, "+0x%llx", (unsigned long long)key);
	else if ((f = profile_func_get(t->profile, profile_canon(t->profile, (uint32_t)key))))
		snprintf(buf, len, "-> %s", f->name);
	else
		snprintf(buf, len, "-> ?");
}

void target_drift_log(struct target *t, bool paths, const struct drift_event *e)
{
	char name[160], up[96], down[96], more[48] = "";

	if (t->drift_logged_ns && e->time_ns - t->drift_logged_ns < 1000000000ULL) {
		t->drift_unlogged++;
		return;
	}
	if (t->drift_unlogged)
		snprintf(more, sizeof(more), " (and %u earlier drift%s not logged)",
			 t->drift_unlogged, t->drift_unlogged == 1 ? "" : "s");
	t->drift_logged_ns = e->time_ns;
	t->drift_unlogged = 0;
	target_drift_name(t, paths, e->func, name, sizeof(name));
	target_drift_key(t, paths, e->gained, up, sizeof(up));
	target_drift_key(t, paths, e->lost, down, sizeof(down));
	log_info("drift %d (%s): %s changed: overlap %.1f%% of its last %u %s with its "
		 "reference of %u (below %.0f%%); %s %.0f%% -> %.0f%%, %s %.0f%% -> %.0f%%%s",
		 t->pid, t->comm, name, 100 * e->overlap, e->window, paths ? "paths" : "samples",
		 e->ref, 100 * drift_get_config(t->drift)->threshold, up, 100 * e->gained_ref,
		 100 * e->gained_win, down, 100 * e->lost_ref, 100 * e->lost_win, more);
}

/* The innermost two JIT frames of the user stack (among the 8 nearest the leaf) go to the drift
 * detector: the leaf one keyed by the sampled offset inside it, a caller by the function it was
 * calling (any copy of it: profile_same, so that a JIT swapping the callee's code for a new copy
 * or tier is no drift of the caller). Frame ids come from the memo target_add_sample just
 * filled. */
static void drift_feed(struct target *t, const struct kp_sample *s)
{
	const struct frame_memo *memo = t->memo;
	int fed = 0;

	for (int i = 0; i < s->n_user && i < 8 && fed < 2; i++) {
		int d = s->n_user - 1 - i;
		uint64_t a = user_addr(s, i), key;
		const struct profile_func *f;

		if (d >= KP_MAX_STACK || !a || memo->addr[d] != a)
			return;
		f = profile_func_get(t->profile, memo->id[d]);
		if (!f || f->kind != PROFILE_KIND_JIT || a < f->start)
			continue;
		if (i == 0)
			key = a - f->start;
		else if (memo->addr[d + 1])
			key = DRIFT_CALLEE | profile_same(t->profile, memo->id[d + 1]);
		else
			continue;
		fed++;
		if (drift_add(t->drift, memo->id[d], key, s->time_ns) == 1)
			target_drift_log(t, false,
					 drift_event_get(t->drift, drift_nevents(t->drift) - 1));
	}
}

/* The sample's kernel frames, root first, appended to t->ids[n..]: the new n; *probe set if one
 * is a probe's. */
static inline size_t kernel_frames(struct target *t, const struct kp_sample *s, size_t n,
				   bool *probe)
{
	for (int i = s->n_kernel - 1; i >= 0; i--) {
		uint64_t ip = s->ips[i];
		int id = frame_id(t, i > 0 && ip ? ip - 1 : ip, true);

		t->leaf_cut = id < 0;
		if (id < 0) {
			t->cut |= id == -ENOSPC;
			t->bad_frames += id != -ENOSPC;
			continue;
		}
		t->ids[n++] = id;
		*probe |= t->nprobe_ids && is_probe_id(t, id);
	}
	return n;
}

#define OVER_BUDGET_NAME "[over budget]"

void target_set_over_budget(struct target *t, bool over)
{
	int id;

	if (over && !t->over_budget) {
		/* Made before the profile is frozen: its own marker and the other markers a
		 * sample may need (a frozen profile makes none). */
		if (!t->over_id1 && (id = special_id(t, OVER_BUDGET_NAME)) >= 0)
			t->over_id1 = (uint32_t)id + 1;
		special_id(t, "[no stack]");
		special_id(t, "[truncated]");
		special_id(t, KPROF_PROBE_NAME);
	}
	if (!over && t->over_budget) {
		/* Frames seen while over fed no call sites: not "seen before" for them now. */
		t->memo->len = 0;
		memset(t->memo->addr, 0, sizeof(t->memo->addr));
	}
	t->over_budget = over;
	profile_freeze(t->profile, over);
}

/* Over the profile budget: the sample is counted and nothing grows. Its stack counts as
 * itself if the profile holds it; else (a frame or the stack new) as "[over budget]" and its
 * leaf, if the profile holds that one: thread 0, one stack per leaf function at most. */
static void add_over_budget(struct target *t, const struct kp_sample *s, size_t n)
{
	uint32_t cut[2] = {t->over_id1 - 1};
	size_t k = 1;

	t->samples++;
	if (!t->cut && n &&
	    profile_count_hashed(t->profile, s->tid, t->ids, n, 1,
				 profile_stack_hash(s->tid, t->ids, n)) == 0)
		return;
	t->samples_cut++;
	if (n && !t->leaf_cut)
		cut[k++] = t->ids[n - 1];
	profile_add_hashed(t->profile, 0, cut, k, 1, profile_stack_hash(0, cut, k));
}

/* The sample's stack t->ids[0..n) ([no stack] if empty) counted in the profile and the HCCT
 * (its first n_user frames the user's), its leaf annotated, drift fed and its thread named. */
static inline void add_stack(struct target *t, const struct kp_sample *s, size_t n, size_t n_user,
			     size_t n_leaf, int leaf)
{
	uint64_t hash;
	int id;

	if (n == 0 && !t->cut && (id = special_id(t, "[no stack]")) >= 0)
		t->ids[n++] = id;
	if (t->over_budget) {
		add_over_budget(t, s, n);
		return;
	}
	t->samples++;
	/* The profile's tables are fetched while the HCCT works. The HCCT sees user contexts
	 * only unless asked: kernel leaves would split every hot user context into many cold
	 * ones. */
	hash = profile_stack_hash(s->tid, t->ids, n);
	profile_prefetch_stack(t->profile, hash, t->ids, n);
	if (t->hcct && (t->hcct_kernel ? n : n_user) > 0)
		hcct_add_stack(t->hcct, t->ids, t->hcct_kernel ? n : n_user, 1);
	profile_add_hashed(t->profile, s->tid, t->ids, n, 1, hash);
	if (leaf >= 0) {
		annotate_sample(t->annot, t->annot_q, t->state == TARGET_ATTACHED ? t->sym : NULL,
				leaf, user_addr(s, 0), n > n_leaf);
		t->recent_leaf[t->recent_head++ % TARGET_RECENT_LEAVES] = (uint32_t)leaf + 1;
	}
	/* While uprobes trace its paths, samples show the probes' traps, not the code. */
	if (t->drift && !(t->paths && t->paths->tracing))
		drift_feed(t, s);
	tnames_set(t->tnames, s->tid, s->comm, sizeof(s->comm)); /* a full table counts */
}

/* The sample's user frames, root first, appended to t->ids[n..]: the new n. The cache slots of
 * the frames the memo lacks are fetched together first, then each frame is found in the memo
 * or the cache. Each (caller, callee) pair of adjacent named frames is recorded with the
 * caller's return address - 1 in the call-site set when either frame is new to the memo (a hit
 * at both depths means the previous sample had both, so the pair was recorded then). */
static inline size_t user_frames(struct target *t, const struct kp_sample *s, size_t n)
{
	struct frame_memo *memo = t->memo;
	struct csite_entry add[KP_MAX_STACK];
	uint64_t prev_a = 0;
	bool prev_new = false;
	int id, prev = -1;
	size_t nadd = 0;

	for (int i = s->n_user - 1, d = 0; i >= 0; i--, d++)
		if (!memo_has(memo, d, user_addr(s, i)))
			profile_cache_prefetch(t->profile, user_addr(s, i));
	for (int i = s->n_user - 1, d = 0; i >= 0; i--, d++) {
		uint64_t a = user_addr(s, i);
		bool fresh = d >= (int)memo->len;

		if (memo_has(memo, d, a)) {
			id = memo->id[d];
		} else {
			fresh = true;
			id = frame_id(t, a, false);
			if (d < KP_MAX_STACK) {
				memo->addr[d] = id >= 0 ? a : 0;
				memo->id[d] = id;
			}
			if (id < 0) {
				t->leaf_cut = true;
				t->cut |= id == -ENOSPC;
				t->bad_frames += id != -ENOSPC;
				prev = -1; /* the caller of the next frame is not known */
				continue;
			}
		}
		t->leaf_cut = false;
		t->ids[n++] = id;
		/* The address cache remembers the last callee of each return address: a call
		 * seen before costs no call-site table lookup. */
		if (prev >= 0 && (fresh || prev_new) && t->csite && !t->over_budget &&
		    nadd < ARRAY_SIZE(add) && !profile_cache_callee(t->profile, prev_a, id)) {
			add[nadd] = (struct csite_entry){prev, id, prev_a};
			csite_prefetch(t->csite, prev, id, prev_a);
			nadd++;
		}
		prev = id;
		prev_a = a;
		prev_new = fresh;
	}
	memo->len = s->n_user;
	/* Added once all are fetched: their cache misses overlap. */
	for (size_t i = 0; i < nadd; i++)
		csite_add(t->csite, add[i].caller, add[i].callee, add[i].addr);
	return n;
}

void target_add_sample(struct target *t, const struct kp_sample *s)
{
	struct frame_memo *memo = t->memo;
	size_t n = 0, n_user, n_leaf;
	int id, leaf = -1;
	bool probe = false;

	if (t->over_budget && !t->over_id1) {
		t->samples_refused++;
		return;
	}
	t->cut = t->leaf_cut = false;
	forget_if_symbols_changed(t);
	tsym_sample_time(t->sym, s->time_ns);
	if (s->n_user && t->annot)
		annot_prefetch(t->annot, user_addr(s, 0));
	if (s->flags & KP_SF_USER_TRUNC) {
		t->truncated++;
		if ((id = special_id(t, "[truncated]")) >= 0)
			t->ids[n++] = id;
	}
	n = user_frames(t, s, n);
	if (s->n_user && n && memo_has(memo, s->n_user - 1, user_addr(s, 0)))
		leaf = t->ids[n - 1]; /* the leaf frame was named: its id is the last one */
	n_user = n_leaf = n;
	if (n_user && is_unnamed_code(t, t->ids[n_user - 1]))
		t->unnamed_leaf++;
	for (size_t i = 0; t->unknown_id && i < n_user; i++)
		if (t->ids[i] == t->unknown_id - 1) {
			t->unknown_samples++;
			break;
		}
	n = kernel_frames(t, s, n, &probe);
	probe = probe || at_breakpoint(t, s);
	/* Taken while a probe ran in the thread (the sampler put the probed instruction back in
	 * the stack, the kernel was handling a uprobe, or at a hardware breakpoint): kprof's own
	 * cost, counted under one frame between the probed function and the kernel's. */
	if ((probe || (s->flags & KP_SF_UPROBE)) && (id = special_id(t, KPROF_PROBE_NAME)) >= 0) {
		memmove(&t->ids[n_user + 1], &t->ids[n_user], (n - n_user) * sizeof(*t->ids));
		t->ids[n_user++] = id;
		n++;
		t->probe_samples++;
	}
	add_stack(t, s, n, n_user, n_leaf, leaf);
}

/* ---- samples added in a row ---- */

int target_batch_keep(struct target *t, const struct kp_sample *s, size_t len, size_t max_bytes)
{
	size_t need = t->batch_len + ((len + 7) & ~(size_t)7), cap;
	uint8_t *b;

	if (need > max_bytes)
		return -E2BIG;
	if (need > t->batch_cap) {
		for (cap = t->batch_cap ? t->batch_cap : 2048; cap < need; cap *= 2)
			;
		b = realloc(t->batch_buf, cap < max_bytes ? cap : max_bytes);
		if (!b)
			return -ENOMEM;
		t->batch_buf = b;
		t->batch_cap = cap < max_bytes ? cap : max_bytes;
	}
	memcpy(t->batch_buf + t->batch_len, s, len);
	t->batch_len = need;
	t->batch_n++;
	return 0;
}

void target_batch_add(struct target *t)
{
	for (size_t off = 0; off < t->batch_len;) {
		const struct kp_sample *s = (const void *)(t->batch_buf + off);

		target_add_sample(t, s);
		off +=
		    (offsetof(struct kp_sample, ips) + 8 * ((size_t)s->n_kernel + s->n_user) + 7) &
		    ~(size_t)7;
	}
	free(t->batch_buf);
	t->batch_buf = NULL;
	t->batch_len = t->batch_cap = 0;
	t->batch_n = 0;
}

/* ---- names given late ---- */

/* How to get a runtime to write a perf map, for what its comm says it is. */
static const char *perfmap_recipe(const char *comm)
{
	if (!strncmp(comm, "node", 4))
		return "start node with --perf-basic-prof (a perf map) or --perf-prof (a jitdump)";
	if (!strncmp(comm, "python", 6))
		return "CPython 3.12 and later: run it with -X perf (or PYTHONPERFSUPPORT=1)";
	if (strstr(comm, "dotnet") || strstr(comm, "DOTNET"))
		return "set DOTNET_PerfMapEnabled=1 in its environment";
	if (!strncmp(comm, "php", 3))
		return "PHP's opcache JIT: php -d opcache.jit_debug=0x10 (a perf map) or 0x20 (a "
		       "jitdump)";
	if (!strncmp(comm, "beam", 4))
		return "Erlang/OTP 25 and later: erl +JPperf map (or +JPperf dump, +JPperf true)";
	if (!strncmp(comm, "mono", 4))
		return "Mono: mono --jitmap (or MONO_ENV_OPTIONS=--jitmap)";
	if (!strncmp(comm, "luajit", 6))
		return "LuaJIT: luajit -l kprof_perfmap (share/kprof/kprof_perfmap.lua), or a "
		       "build with "
		       "-DLUAJIT_USE_PERFTOOLS";
	return "Node: --perf-basic-prof or --perf-prof; JVM: jcmd PID Compiler.perfmap or "
	       "-XX:+DumpPerfMapAtExit; .NET: DOTNET_PerfMapEnabled=1; CPython 3.12: -X perf";
}

/* Why code of t is shown by address, and how to get names ("" when nothing to say). */
static void names_note(struct target *t)
{
	const struct tsym_stats *st;
	struct profile_stats ps;

	t->unnamed_note[0] = '\0';
	if (!t->sym)
		return;
	st = tsym_get_stats(t->sym);
	if (st->jvm) /* a JVM is asked for its map; its note says how that went */
		return;
	profile_get_stats(t->profile, &ps);
	/* Only anonymous executable memory is JIT code: junk addresses ("[unknown]") and those
	 * kept after the exit for lack of fresh maps get no recipe. */
	if (st->jit_symbols + st->jitdump_symbols == 0 &&
	    (t->unnamed_leaf || tsym_anon_exec(t->sym)))
		snprintf(t->unnamed_note, sizeof(t->unnamed_note),
			 "code in anonymous memory and no perf map (%s) or jitdump: JIT code is "
			 "shown by address until one names it; %s",
			 st->perfmap_path, perfmap_recipe(t->comm));
	else if (ps.unresolved)
		snprintf(t->unnamed_note, sizeof(t->unnamed_note),
			 "%zu address%s of unnamed code not in the perf map or jitdump (named when "
			 "they are)",
			 ps.unresolved, ps.unresolved == 1 ? "" : "es");
}

bool target_quiet(struct target *t)
{
	bool was = t->active;
	size_t pending = 0;

	t->active = false;
	if (was || !t->sym || t->batch_n || t->calls || t->paths || tsym_behind(t->sym) ||
	    (t->drift && t->drift_code_tried < drift_nfuncs(t->drift)))
		return false;
	profile_pending(t->profile, &pending);
	return !pending;
}

bool target_symbols_due(struct target *t, uint64_t now)
{
	size_t pending = 0;

	if (!t->sym)
		return false;
	profile_pending(t->profile, &pending);
	if (!pending && t->unnamed_leaf == t->files_unnamed && now < t->files_next_ns)
		return false;
	t->files_unnamed = t->unnamed_leaf;
	t->files_next_ns = now + TARGET_FILES_EVERY_NS;
	return true;
}

/* An address kept for lack of fresh maps that fresh ones show to be junk (r: "[unknown]" in no
 * mapping or in a file's data): one with that function, made first, so that it is merged into it
 * and off the waiting list. */
static int settle_junk(struct target *t, uint32_t id, const struct sym_result *r)
{
	int ret = profile_intern(t->profile, r->name, r->module, r->start, r->kind);

	if (ret < 0)
		return ret;
	if (!strcmp(r->module, "[unknown]"))
		t->unknown_id = ret + 1;
	return profile_rename(t->profile, id, r->name, r->module, r->start, r->kind);
}

int target_names_update(struct target *t, bool force)
{
	_cleanup_free_ uint32_t *ids = NULL;
	const uint32_t *pend;
	const char *file;
	uint32_t line;
	uint64_t gen;
	size_t n, named = 0, stale = 0;
	int ret;

	if (!t->sym)
		return 0;
	if (force || now_ns(CLOCK_MONOTONIC) >= t->commit_next_ns)
		target_commit_names(t); /* merges of earlier calls, when due */
	gen = tsym_generation(t->sym);
	pend = profile_pending(t->profile, &n);
	if (!n ||
	    (!force && gen == t->names_gen && tsym_maps_read_ns(t->sym) == t->names_maps_ns)) {
		t->names_gen = gen;
		t->names_maps_ns = tsym_maps_read_ns(t->sym);
		names_note(t);
		return 0;
	}
	/* A copy: the list is compacted at the commit. */
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	memcpy(ids, pend, n * sizeof(*ids));
	/* Every address here was sampled before now: maps read from now on hold for it. */
	tsym_sample_time(t->sym, now_ns(CLOCK_MONOTONIC));
	for (size_t i = 0; i < n; i++) {
		const struct profile_func *f = profile_func_get(t->profile, ids[i]);
		struct sym_result r;

		if (!f || f->kind != PROFILE_KIND_UNKNOWN)
			continue;
		tsym_resolve(t->sym, f->start, false, &r);
		if (r.kind == PROFILE_KIND_UNKNOWN && !r.jit_memory)
			ret = settle_junk(t, ids[i], &r); /* maps read since: no code there */
		else if (r.kind == PROFILE_KIND_UNKNOWN) {
			stale += r.maps_stale;
			continue;
		} else
			ret = profile_rename(t->profile, ids[i], r.name, r.module, r.start, r.kind);
		if (ret < 0)
			continue;
		named++;
		if ((uint32_t)ret == ids[i] && r.kind == PROFILE_KIND_JIT &&
		    tsym_jit_source(t->sym, r.start, &file, &line))
			profile_set_source(t->profile, ret, file, line); /* no memory: no line */
	}
	if (force || now_ns(CLOCK_MONOTONIC) >= t->commit_next_ns)
		target_commit_names(t);
	else if (named)
		profile_pending_compact(t->profile); /* the named ones off the list now */
	/* Resolving may have read more. */
	forget_if_symbols_changed(t);
	t->names_gen = tsym_generation(t->sym);
	/* Addresses that wait for maps read after them: looked at again next time, when the
	 * maps may be read again (find_mapping: at most every 100 ms), not only once something
	 * else reads them. */
	t->names_maps_ns = stale ? 0 : tsym_maps_read_ns(t->sym);
	if (named)
		log_debug("pid %d: %zu of %zu unnamed addresses named late", t->pid, named, n);
	names_note(t);
	return named;
}

/* The samples with a frame in "[unknown]" (its total: once per stack), 0 if there is none. */
static uint64_t unknown_total(const struct target *t)
{
	const struct profile_func *f =
	    t->unknown_id ? profile_func_get(t->profile, t->unknown_id - 1) : NULL;

	return f ? f->total : 0;
}

int target_commit_names(struct target *t)
{
	uint64_t before;
	int err;

	if (!profile_merges_pending(t->profile))
		return 0;
	/* Junk addresses settled into "[unknown]" (settle_junk) bring their samples to it here,
	 * the stacks rewritten and its flat count recounted: those that had no "[unknown]"
	 * frame before are new to unknown_samples (counted as they came otherwise). */
	before = unknown_total(t);
	err = profile_commit_renames(t->profile);
	if (err < 0) {
		log_warn("pid %d: functions named late, not merged yet: %s", t->pid,
			 strerror(-err));
		return err;
	}
	if (unknown_total(t) > before)
		t->unknown_samples += unknown_total(t) - before;
	t->commit_next_ns = now_ns(CLOCK_MONOTONIC) + TARGET_COMMIT_EVERY_NS;
	/* The memo may hold ids merged away (the commit cleared the address cache). */
	memset(t->memo->addr, 0, sizeof(t->memo->addr));
	return err;
}

int target_canon_tree(const struct profile *p, struct hcct_tree **owned,
		      const struct hcct_tree *src)
{
	size_t n = profile_nfuncs(p);
	_cleanup_free_ uint32_t *map = NULL;
	struct hcct_tree *t = NULL;
	int err;

	if (!profile_has_aliases(p))
		return 0;
	map = malloc((n ? n : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		map[i] = profile_canon(p, i);
	err = hcct_tree_relabel(src, map, n, &t);
	if (err < 0)
		return err;
	hcct_tree_free(*owned);
	*owned = t;
	return 0;
}

void target_sources_start(struct target *t, const struct attach_opts *o)
{
	const struct tsym_start st = {
	    .jvmattach = t->env->jvm,
	    .conf = t->env->conf,
	    .samples = &t->samples,
	    .unnamed = &t->unnamed_leaf,
	    .no_ask = o->no_jvm_map,
	};

	if (!t->env->jvm || !t->sym)
		return;
	tsym_start(t->sym, &st);
	names_note(t); /* a JVM's own note says how its map is asked for */
}

void target_sources_tick(struct target *t, uint64_t now)
{
	if (t->sym)
		tsym_tick(t->sym, now);
}

void target_on_call(struct target *t, const struct kp_call *c)
{
	if (t->calls)
		calls_on_event(t->calls, c, profile_nfuncs(t->profile));
}

/* A JIT function of the name typed: whole, or as a perf map's entry is typed (V8's "JS:*batch"
 * for "JS:*batch /app.js:28:15", perfmap_name_match), the way the trace finds it. */
static bool is_copy(const struct profile_func *f, const char *name)
{
	return f && f->kind == PROFILE_KIND_JIT && f->name &&
	       perfmap_name_match(f->name, name, strlen(name)) > 0;
}

/* Of the JIT functions named name, the start of the one to trace (0: none has samples): a JIT
 * keeps several copies under one name (HotSpot's tiers, V8's on-stack replacement and the copy
 * it makes after a deoptimization), and the one that runs now is the one to trace. So the copy
 * that is the leaf of most of the target's last TARGET_RECENT_LEAVES samples (by the function an
 * address kept before it was named became: profile_canon); the one with the
 * most samples overall when none of them is in any. */
static uint64_t hottest_copy(const struct target *t, const char *name)
{
	const struct profile *p = t->profile;
	uint64_t best = 0, start = 0;
	uint32_t ids[TARGET_RECENT_LEAVES], counts[TARGET_RECENT_LEAVES], n = 0, top = 0;

	for (uint32_t k = 0; k < TARGET_RECENT_LEAVES; k++) {
		uint32_t id = t->recent_leaf[k], j;

		/* A leaf kept by its address before the perf map named it is that function now:
		 * the copy V8 just made is most often one of them. */
		if (!id)
			continue;
		id = profile_canon(p, id - 1) + 1;
		if (!is_copy(profile_func_get(p, id - 1), name))
			continue;
		for (j = 0; j < n && ids[j] != id; j++)
			;
		if (j == n)
			ids[n] = id, counts[n++] = 0;
		if (++counts[j] > top)
			top = counts[j], start = profile_func_get(p, id - 1)->start;
	}
	if (top)
		return start;
	for (size_t i = 0; i < profile_nfuncs(p); i++) {
		const struct profile_func *f = profile_func_get(p, (uint32_t)i);

		if (is_copy(f, name) && f->self > best)
			best = f->self, start = f->start;
	}
	return start;
}

/* paths_env.code_samples: the target's samples, those whose leaf is in the code traced, and the
 * JIT function with the most. */
static void code_samples(void *ctx, uint64_t start, uint64_t size, uint64_t *all, uint64_t *in,
			 char *hot, size_t hotlen)
{
	const struct target *t = ctx;
	const struct profile *p = t->profile;
	const struct profile_func *best = NULL;
	struct profile_stats st;

	profile_get_stats(p, &st);
	*all = st.samples;
	*in = 0;
	for (size_t i = 0; i < profile_nfuncs(p); i++) {
		const struct profile_func *f = profile_func_get(p, (uint32_t)i);

		if (!f || f->kind != PROFILE_KIND_JIT)
			continue;
		if (f->start >= start && f->start < start + size)
			*in += f->self;
		else if (!best || f->self > best->self)
			best = f;
	}
	if (hot && hotlen)
		snprintf(hot, hotlen, "%s", best && best->self ? best->name : "");
}

/* paths_env.ref_samples: the target's samples, and the leaf samples of one function (chosen
 * first: the one with the most outside the code traced, not the probes'). */
static void ref_samples(void *ctx, uint64_t start, uint64_t size, uint32_t *id, uint64_t *self,
			uint64_t *all, char *name, size_t namelen)
{
	const struct target *t = ctx;
	const struct profile *p = t->profile;
	const struct profile_func *f;
	struct profile_stats st;

	profile_get_stats(p, &st);
	*all = st.samples;
	*self = 0;
	if (*id == PATHS_NO_REF) {
		uint64_t best = 0;

		for (size_t i = 0; i < profile_nfuncs(p); i++) {
			f = profile_func_get(p, (uint32_t)i);
			if (!f || f->self <= best ||
			    (f->start >= start && f->start < start + size) ||
			    (f->name && !strcmp(f->name, KPROF_PROBE_NAME)))
				continue;
			best = f->self;
			*id = (uint32_t)i;
		}
	}
	f = *id == PATHS_NO_REF ? NULL : profile_func_get(p, *id);
	if (!f)
		return;
	*self = f->self;
	if (name && namelen)
		snprintf(name, namelen, "%s", f->name ? f->name : "?");
}

int target_paths_start(struct target *t, const struct paths_opts *o, char *err, size_t errlen)
{
	struct paths_opts po = *o;
	char addr[24];
	uint64_t hot;
	const struct paths_env env = {
	    .loader = t->env->loader,
	    .event = t->env->event,
	    .max_paths = t->env->conf->max_paths,
	    .ksf_max_nodes = t->env->conf->ksf_max_nodes,
	    .max_slowdown = t->env->conf->probe_slowdown_pct / 100.0,
	    .code_samples = code_samples,
	    .ref_samples = ref_samples,
	    .ctx = t,
	};

	if (t->state != TARGET_ATTACHED) {
		snprintf(err, errlen, "pid %d is not attached (%s): nothing to trace", t->pid,
			 t->state == TARGET_EXITED ? "it exited" : "detached");
		return -ESRCH;
	}
	hot = o->function && strncmp(o->function, "0x", 2) ? hottest_copy(t, o->function) : 0;
	if (hot) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, hot);
		po.function = addr;
	}
	return paths_start(&t->paths, &env, t->pid, t->sym, &po, err, errlen);
}
