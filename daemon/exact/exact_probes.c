// SPDX-License-Identifier: GPL-2.0-only
/* exact_probes.c: exact mode's probes: entry and return uprobes on the JIT functions of a target.
 *
 * The plan of probes, attaching them and taking them away, for exact.c, which owns the mode's
 * state (exact_internal.h) and its timers. Where a probe may go and how probes are taken away is
 * probes.c's: only code in a file-backed private read+exec mapping, so anonymous code (V8's and
 * HotSpot's default code caches) is refused naming the function and the reason. The functions
 * are the perf map's symbols; each probe carries the function's profile id as its BPF cookie and
 * the target's pid as its filter.
 * With names (attach --calls=NAME,...) only those functions are counted, and the ones in
 * anonymous memory, where uprobes cannot go, by hardware execute breakpoints (hwcalls.c).
 * Bursting: probes are attached for burst_ms every period_ms and detached in between (a uprobe
 * costs its trap whether or not anyone listens, so detaching is the only way to stop paying).
 * The kernel attaches and removes a set probe by probe (removal takes about a second), so only
 * the events stamped with the epoch of a set all in count (kp_call_epochs: opened once its last
 * probe is in, closed before its first goes): a set half in would pair an entry with no return
 * and build contexts that never happened.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "kprof/profile.h"
#include "os/clock.h"
#include "exact/exact_internal.h"
#include "exact/hwcalls.h"
#include "kernel/loader.h"
#include "kernel/probes.h"
#include "symbols/symbolize.h"
#include "os/log.h"
#include "os/procfs.h"

#define CALLS_MAX_PROBES 4096

struct probe {
	uint64_t start;	 /* function address in the target */
	uint64_t offset; /* in the mapped file */
	uint64_t map_start, map_end;
	struct code_file file;
	uint32_t func;
	uint32_t seq; /* perf-map order: the latest line for a start wins */
	const char *name;
};

struct plan {
	struct probe *v;
	size_t n, cap;
	bool overflow;
	const char *names;
};

/* Is name one of the comma-separated names (or one of them followed by its source)? */
static bool named(const char *names, const char *name)
{
	for (const char *w = names; w && *w;) {
		const char *e = strchrnul(w, ',');

		if (perfmap_name_match(name, w, e - w))
			return true;
		w = *e ? e + 1 : e;
	}
	return false;
}

static int collect(const struct perfmap_sym *sym, void *userdata)
{
	struct plan *p = userdata;

	if (p->names && !named(p->names, sym->name))
		return 0;

	if (p->n == CALLS_MAX_PROBES) {
		p->overflow = true;
		return 1;
	}
	if (array_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v), 64) < 0)
		return -ENOMEM;
	p->v[p->n] = (struct probe){.start = sym->start, .seq = p->n, .name = sym->name};
	p->n++;
	return 0;
}

static int cmp_probe(const void *a, const void *b)
{
	const struct probe *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Check every function against the safety rules and fill offsets. -EPERM/-EINVAL with why. */
static int check_plan(struct calls *c, struct plan *p, const struct procmaps *pm, bool force,
		      char *err, size_t errlen)
{
	const struct calls_env *t = &c->env;
	const struct tsym_stats *ss = tsym_get_stats(t->sym);
	char module[sizeof(ss->perfmap_module)];
	size_t w = 0;

	memcpy(module, ss->perfmap_module, sizeof(module)); /* the perf map's, for every probe */
	if (p->n) /* an empty perf map: p->v is NULL, which qsort must not get */
		qsort(p->v, p->n, sizeof(*p->v), cmp_probe);
	for (size_t i = 0; i < p->n; i++) {
		struct probe *pr = &p->v[i];
		struct uprobe_site site;
		int id, r;

		if (i + 1 < p->n && p->v[i + 1].start == pr->start)
			continue; /* re-declared later: the later line is the live one */
		r = uprobe_site_check(pm, pr->start, pr->name, force, &site, err, errlen);
		if (r == -ENOENT)
			continue; /* code already unmapped: nothing to probe */
		if (r == -EOPNOTSUPP && !p->names) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l,
				 "; or name the functions (--calls=NAME,...) to count their calls "
				 "with hardware breakpoints");
		}
		if (r < 0 && !(r == -EOPNOTSUPP && p->names))
			return r;
		id = profile_intern(t->profile, pr->name, module, pr->start, PROFILE_KIND_JIT);
		if (id < 0) {
			if (id == -ENOSPC)
				snprintf(
				    err, errlen,
				    "the profiles hold more than their memory budget "
				    "(limits.profiles_mb, profiles_per_uid_mb): no new function "
				    "is counted until they are back under it");
			else
				snprintf(err, errlen, "profile full: %s", strerror(-id));
			return id;
		}
		if (r == -EOPNOTSUPP) { /* anonymous: a hardware breakpoint counts it */
			r = hwcalls_add(c->hw, id, pr->start, pr->name, err, errlen);
			if (r < 0)
				return r;
			continue;
		}
		pr->func = id;
		pr->offset = site.offset;
		pr->map_start = site.map_start;
		pr->map_end = site.map_end;
		pr->file = site.file;
		p->v[w++] = *pr;
	}
	p->n = w;
	if (!w && !c->hw->n) {
		if (p->names)
			snprintf(err, errlen, "no JIT function of pid %d named %s in %s", t->pid,
				 p->names, tsym_get_stats(t->sym)->perfmap_path);
		else
			snprintf(err, errlen,
				 "no JIT function of pid %d to probe (empty perf map %s?)", t->pid,
				 tsym_get_stats(t->sym)->perfmap_path);
		return -ENOENT;
	}
	return 0;
}

/* Every name given is a function of the plan (probed or counted by breakpoints)? */
static int check_names(const struct calls *c, const struct plan *p, char *err, size_t errlen)
{
	for (const char *w = c->names; w && *w;) {
		const char *e = strchrnul(w, ',');
		bool found = false;

		for (size_t i = 0; i < p->n && !found; i++)
			found = perfmap_name_match(p->v[i].name, w, e - w);
		for (size_t i = 0; i < c->hw->n && !found; i++)
			found = perfmap_name_match(c->hw->f[i].name, w, e - w);
		if (!found && e > w) {
			snprintf(err, errlen, "no JIT function named %.*s in the perf map",
				 (int)(e - w), w);
			return -ENOENT;
		}
		w = *e ? e + 1 : e;
	}
	return 0;
}

int calls_plan(struct calls *c, bool force, char *err, size_t errlen)
{
	const struct calls_env *t = &c->env;
	struct procmaps *pm = NULL;
	struct plan p = {.names = c->names};
	int r;

	hwcalls_free(c->hw);
	c->hw = calloc(1, sizeof(*c->hw));
	if (!c->hw)
		return -ENOMEM;
	c->hw->pid = t->pid;
	c->hw->countsp = &c->counts;
	c->hw->ncountsp = &c->ncounts;
	r = procmaps_read_pid(t->pid, &pm, err, errlen);
	if (r < 0)
		return r;
	tsym_refresh(t->sym);
	r = tsym_foreach_jit(t->sym, collect, &p);
	if (r < 0 || p.overflow) {
		snprintf(err, errlen, r < 0 ? "out of memory" : "more than %d JIT functions",
			 CALLS_MAX_PROBES);
		r = r < 0 ? r : -E2BIG;
	} else {
		r = check_plan(c, &p, pm, force, err, errlen);
	}
	if (r >= 0)
		r = check_names(c, &p, err, errlen);
	procmaps_free(pm);
	if (r < 0) {
		free(p.v);
		return r;
	}
	free(c->probes);
	c->probes = p.v;
	c->nprobes = p.n;
	return 0;
}

void calls_off(struct calls *c)
{
	/* Before any probe goes: the events from now on are of a set half removed. */
	if (c->epoch_open)
		loader_calls_close(c->env.loader, c->env.pid);
	c->epoch_open = false;
	if (c->nlinks) {
		struct code_file files[REMOVAL_MAX_FILES];
		size_t nf = 0;

		for (size_t i = 0; i < c->nprobes && nf < REMOVAL_MAX_FILES; i++)
			if (!i || memcmp(&c->probes[i].file, &files[nf - 1], sizeof(files[0])))
				files[nf++] = c->probes[i].file;
		removal_put(c->removal);
		c->removal = links_remove_async(c->links, c->nlinks, files, nf, NULL, NULL);
		c->links = NULL;
		c->nlinks = 0;
	}
	free(c->links); /* allocated, nothing attached yet (a failed calls_on) */
	c->links = NULL;
	if (c->hw)
		hwcalls_off(c->hw);
	if (c->on_since_ns) {
		c->active_ns += now_ns(CLOCK_MONOTONIC) - c->on_since_ns;
		c->on_since_ns = 0;
	}
}

int calls_may_attach(const struct calls *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->nprobes; i++) {
		uint64_t since = removals_pending(&c->probes[i].file);

		if (since) {
			snprintf(
			    err, errlen,
			    "uprobes in the code of %s are still being removed by the kernel "
			    "(for %.1f s): attaching now would stall kprofd until they are gone; "
			    "try again in a few seconds",
			    c->probes[i].name, since / 1e9);
			return -EBUSY;
		}
	}
	return 0;
}

int calls_on(struct calls *c, char *err, size_t errlen)
{
	struct loader *l = c->env.loader;
	pid_t pid = c->env.pid;
	int r;

	calls_off(c);
	r = calls_may_attach(c, err, errlen);
	if (r < 0)
		return r;
	c->links = calloc(2 * c->nprobes + 1, sizeof(*c->links));
	if (!c->links)
		return -ENOMEM;
	for (size_t i = 0; i < c->nprobes; i++) {
		const struct probe *pr = &c->probes[i];
		char path[96];

		procmaps_file_path(path, sizeof(path), pid, pr->map_start, pr->map_end);
		for (int ret = 0; ret < 2; ret++) {
			struct bpf_link *lk =
			    loader_uprobe_attach(l, ret, loader_call_prog(l, ret), pid, path,
						 pr->offset, pr->start, pr->func);

			if (!lk) {
				int e = -errno;

				snprintf(err, errlen, "cannot attach a %s to %s (%s+0x%llx): %s%s",
					 ret ? "uretprobe" : "uprobe", pr->name, path,
					 (unsigned long long)pr->offset, strerror(-e),
					 e == -EACCES || e == -EPERM
					     ? " (exact mode needs CAP_SYS_ADMIN)"
					     : "");
				calls_off(c);
				return e;
			}
			c->links[c->nlinks++] = lk;
		}
	}
	if (c->hw && c->hw->n) {
		r = hwcalls_on(c->hw, c->env.event, err, errlen);
		if (r < 0) {
			calls_off(c);
			return r;
		}
	}
	/* Every probe is in: a new epoch, and the threads start over from where they are (the
	 * thesis's static bursting re-aligns from the stack; here a context starts where the
	 * thread was at its first event of the epoch, and a return from a call entered before is
	 * an unmatched exit). */
	r = loader_calls_open(l, pid, &c->epoch);
	if (r < 0) {
		snprintf(err, errlen, "cannot open the probes' epoch: %s", strerror(-r));
		calls_off(c);
		return r;
	}
	c->epoch_open = true;
	calls_reset_cursors(c);
	c->on_since_ns = now_ns(CLOCK_MONOTONIC);
	if (!c->enabled_ns) /* the duty's window begins with the first probes in */
		c->enabled_ns = c->on_since_ns;
	c->bursts++;
	return 0;
}

void calls_reset_cursors(struct calls *c)
{
	for (size_t j = 0; c->threads && j < CALLS_MAX_THREADS; j++) {
		if (c->threads[j].tid)
			callsync_reset(c->exact, &c->threads[j].cs);
		c->threads[j].tid = 0;
	}
	tidtab_clear(&c->tids);
}

int calls_hot_names(const struct profile *p, unsigned n, char **ret)
{
	_cleanup_free_ uint32_t *ids = NULL;
	size_t nids = 0, len = 0;
	char *s = NULL;
	unsigned got = 0;
	int r = profile_sorted(p, &ids, &nids);

	if (r < 0)
		return r;
	for (size_t i = 0; i < nids && got < n; i++) {
		const struct profile_func *f = profile_func_get(p, ids[i]);
		size_t l;
		char *v;

		if (!f || f->kind != PROFILE_KIND_JIT || !f->self || !f->name ||
		    strchr(f->name, ','))
			continue;
		l = strlen(f->name);
		v = realloc(s, len + l + 2);
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		s = v;
		if (len)
			s[len++] = ',';
		memcpy(s + len, f->name, l + 1);
		len += l;
		got++;
	}
	*ret = s;
	return (int)got;
}

void calls_probes_free(struct calls *c)
{
	calls_off(c);
	calls_reset_cursors(c);
	removal_put(c->removal);
	c->removal = NULL;
	free(c->threads);
	c->threads = NULL;
	tidtab_release(&c->tids);
	free(c->probes);
	c->probes = NULL;
	hwcalls_free(c->hw);
	c->hw = NULL;
}

uint64_t calls_hottest_probe(const struct calls *c)
{
	uint64_t best = 0, addr = 0;

	for (size_t i = 0; i < c->nprobes; i++) {
		uint32_t f = c->probes[i].func;
		uint64_t n = f < c->ncounts ? c->counts[f] : 0;

		if (!addr || n > best)
			best = n, addr = c->probes[i].start;
	}
	return addr;
}
