// SPDX-License-Identifier: GPL-2.0-only
/* exact.c: exact mode: entry and return uprobes on the JIT functions of a target.
 *
 * A uprobe lives on (file, offset), so only JIT code in a file-backed private read+exec
 * mapping (a memfd or a file) can be probed, through /proc/PID/map_files/START-END (the very
 * file mapped, even deleted or in another mount namespace). Anonymous code (V8's and HotSpot's
 * default code caches) cannot: the attach fails naming the function and the reason. A JIT that
 * writes into a probed page gets SIGTRAP, so a code file that is also mapped writable in the
 * target is refused unless forced. The functions are the perf map's symbols; each probe carries
 * the function's profile id as its BPF cookie and the target's pid as its filter.
 * Bursting: probes are attached for burst_ms every period_ms and detached in between (a uprobe
 * costs its trap whether or not anyone listens, so detaching is the only way to stop paying).
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
#include "clock.h"
#include "exact.h"
#include "loader.h"
#include "manager.h"
#include "symbolize.h"
#include "log.h"
#include "procfs.h"

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
};

static int collect(const struct perfmap_sym *sym, void *userdata)
{
	struct plan *p = userdata;

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

/* Is the file of mapping m also mapped writable anywhere in the target? */
static const struct procmaps_entry *writable_alias(const struct procmaps *pm,
						   const struct procmaps_entry *m)
{
	for (size_t i = 0; i < procmaps_count(pm); i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);

		if (e->perms[1] == 'w' && e->inode == m->inode && e->dev_major == m->dev_major &&
		    e->dev_minor == m->dev_minor)
			return e;
	}
	return NULL;
}

int uprobe_site_check(const struct procmaps *pm, uint64_t addr, const char *name, bool force,
		      struct uprobe_site *site, char *err, size_t errlen)
{
	const struct procmaps_entry *m = procmaps_find(pm, addr), *alias;

	if (!m) {
		snprintf(err, errlen, "%s at 0x%llx is not mapped (any more)", name,
			 (unsigned long long)addr);
		return -ENOENT;
	}
	if (!m->inode || m->path[0] != '/') {
		snprintf(err, errlen,
			 "%s at 0x%llx is in anonymous memory: uprobes need JIT code in a "
			 "file-backed mapping (a memfd or a file); use sampling",
			 name, (unsigned long long)addr);
		return -EOPNOTSUPP;
	}
	if (strcmp(m->perms, "r-xp")) {
		snprintf(err, errlen,
			 "%s at 0x%llx is in a %s mapping of %s, not a private read+exec one", name,
			 (unsigned long long)addr, m->perms, m->path);
		return -EPERM;
	}
	alias = writable_alias(pm, m);
	if (alias && !force) {
		snprintf(err, errlen,
			 "the code of %s (%s) is also mapped writable at 0x%llx-0x%llx: a JIT "
			 "that rewrites a probed page dies of SIGTRAP (--force to probe anyway)",
			 name, m->path, (unsigned long long)alias->start,
			 (unsigned long long)alias->end);
		return -EPERM;
	}
	site->offset = addr - m->start + m->offset;
	site->map_start = m->start;
	site->map_end = m->end;
	site->file = (struct code_file){m->inode, m->dev_major, m->dev_minor};
	return 0;
}

/* Check every function against the safety rules and fill offsets. -EPERM/-EINVAL with why. */
static int check_plan(struct target *t, struct plan *p, const struct procmaps *pm, bool force,
		      char *err, size_t errlen)
{
	size_t w = 0;

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
		if (r < 0)
			return r;
		id = profile_intern(t->profile, pr->name, tsym_perfmap_module(t->sym), pr->start,
				    PROFILE_KIND_JIT);
		if (id < 0) {
			snprintf(err, errlen, "profile full: %s", strerror(-id));
			return id;
		}
		pr->func = id;
		pr->offset = site.offset;
		pr->map_start = site.map_start;
		pr->map_end = site.map_end;
		pr->file = site.file;
		p->v[w++] = *pr;
	}
	p->n = w;
	if (!w) {
		snprintf(err, errlen, "no JIT function of pid %d to probe (empty perf map %s?)",
			 t->pid, tsym_perfmap_path(t->sym));
		return -ENOENT;
	}
	return 0;
}

int calls_plan(struct target *t, bool force, char *err, size_t errlen)
{
	struct procmaps *pm = NULL;
	struct plan p = {0};
	int r;

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
		r = check_plan(t, &p, pm, force, err, errlen);
	}
	procmaps_free(pm);
	if (r < 0) {
		free(p.v);
		return r;
	}
	free(t->calls.probes);
	t->calls.probes = p.v;
	t->calls.nprobes = p.n;
	return 0;
}

/* A removal runs on a detached thread; the thread and the owner each hold a reference, so
 * neither waits for the other: the loop polls removal_busy and drops its reference at will. */
#define REMOVAL_MAX_FILES 8
#define REMOVALS_TRACKED 256

struct removal {
	struct bpf_link **links;
	size_t n;
	struct code_file files[REMOVAL_MAX_FILES];
	size_t nfiles;
	uint64_t t0;
	void (*after)(void *arg);
	void *arg;
	_Atomic int refs;
	_Atomic bool done;
};

static _Atomic unsigned removals_running;
/* Removals still running, by the loop's thread only (it adds and polls them). */
static struct removal *tracked[REMOVALS_TRACKED];
static size_t ntracked;

struct slice {
	struct bpf_link **links;
	size_t n, first, step;
};

static void *remove_slice(void *arg)
{
	struct slice *s = arg;

	for (size_t i = s->first; i < s->n; i += s->step)
		bpf_link__destroy(s->links[i]);
	return NULL;
}

void removal_put(struct removal *r)
{
	if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
		free(r->links);
		free(r);
	}
}

bool removal_busy(const struct removal *r)
{
	return r && !atomic_load(&r->done);
}

/* Each removal waits for an RCU grace period in the kernel; done in parallel, the waits
 * overlap instead of adding up. */
static void *remove_links(void *arg)
{
	enum { MAX_PAR = 32 };
	struct removal *r = arg;
	struct slice sl[MAX_PAR];
	pthread_t th[MAX_PAR];
	size_t k = r->n < MAX_PAR ? r->n : MAX_PAR, started = 0;

	for (size_t i = 0; i < k; i++) {
		sl[i] = (struct slice){r->links, r->n, i, k};
		if (pthread_create(&th[i], NULL, remove_slice, &sl[i]) != 0)
			break;
		started++;
	}
	for (size_t i = started; i < k; i++) /* no thread: this one does it */
		remove_slice(&sl[i]);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	log_debug("removed %zu uprobes in %.3f s", r->n, (now_ns(CLOCK_MONOTONIC) - r->t0) / 1e9);
	if (r->after)
		r->after(r->arg);
	atomic_store(&r->done, true);
	atomic_fetch_sub(&removals_running, 1);
	removal_put(r);
	return NULL;
}

uint64_t removals_pending(const struct code_file *f)
{
	uint64_t since = 0, now = now_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; i < ntracked;) {
		struct removal *r = tracked[i];

		if (atomic_load(&r->done)) {
			tracked[i] = tracked[--ntracked];
			removal_put(r);
			continue;
		}
		for (size_t j = 0; j < r->nfiles; j++)
			if (r->files[j].ino == f->ino && r->files[j].dev_major == f->dev_major &&
			    r->files[j].dev_minor == f->dev_minor && now - r->t0 > since)
				since = now - r->t0;
		i++;
	}
	return since;
}

struct removal *links_remove_async(struct bpf_link **links, size_t n, const struct code_file *files,
				   size_t nfiles, void (*after)(void *), void *arg)
{
	struct removal *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	pthread_t th;

	if (r) {
		*r = (struct removal){.links = links,
				      .n = n,
				      .t0 = now_ns(CLOCK_MONOTONIC),
				      .after = after,
				      .arg = arg};
		for (size_t i = 0; i < nfiles && r->nfiles < REMOVAL_MAX_FILES; i++) {
			bool seen = false;

			for (size_t j = 0; j < r->nfiles; j++)
				seen |= !memcmp(&r->files[j], &files[i], sizeof(files[i]));
			if (!seen)
				r->files[r->nfiles++] = files[i];
		}
		atomic_store(&r->refs, 2);
		atomic_fetch_add(&removals_running, 1);
		if (pthread_attr_init(&attr) == 0 &&
		    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
		    pthread_create(&th, &attr, remove_links, r) == 0) {
			pthread_attr_destroy(&attr);
			removals_pending(&(struct code_file){0}); /* drop the finished ones */
			if (ntracked < REMOVALS_TRACKED) {
				atomic_fetch_add(&r->refs, 1);
				tracked[ntracked++] = r;
			}
			return r;
		}
		atomic_fetch_sub(&removals_running, 1);
		free(r);
	}
	/* No thread: remove them here, blocking the loop meanwhile. */
	for (size_t i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	free(links);
	if (after)
		after(arg);
	return NULL;
}

void links_removals_wait(unsigned timeout_ms)
{
	for (unsigned i = 0; atomic_load(&removals_running) && i < timeout_ms / 10; i++)
		usleep(10000);
}

void calls_off(struct target *t)
{
	struct calls *c = &t->calls;

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
	if (c->on_since_ns) {
		c->active_ns += now_ns(CLOCK_MONOTONIC) - c->on_since_ns;
		c->on_since_ns = 0;
	}
	target_calls_reset_cursors(t);
}

int calls_may_attach(const struct target *t, char *err, size_t errlen)
{
	const struct calls *c = &t->calls;

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

int calls_on(struct loader *l, struct target *t, char *err, size_t errlen)
{
	struct calls *c = &t->calls;
	int r;

	calls_off(t);
	r = calls_may_attach(t, err, errlen);
	if (r < 0)
		return r;
	c->links = calloc(2 * c->nprobes, sizeof(*c->links));
	if (!c->links)
		return -ENOMEM;
	for (size_t i = 0; i < c->nprobes; i++) {
		const struct probe *pr = &c->probes[i];
		char path[96];

		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", t->pid,
			 (unsigned long long)pr->map_start, (unsigned long long)pr->map_end);
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = pr->func);
			struct bpf_link *lk = bpf_program__attach_uprobe_opts(
			    loader_call_prog(l, ret), t->pid, path, pr->offset, &o);

			if (!lk) {
				int e = -errno;

				snprintf(err, errlen, "cannot attach a %s to %s (%s+0x%llx): %s%s",
					 ret ? "uretprobe" : "uprobe", pr->name, path,
					 (unsigned long long)pr->offset, strerror(-e),
					 e == -EACCES || e == -EPERM
					     ? " (exact mode needs CAP_SYS_ADMIN)"
					     : "");
				calls_off(t);
				return e;
			}
			c->links[c->nlinks++] = lk;
		}
	}
	c->on_since_ns = now_ns(CLOCK_MONOTONIC);
	c->bursts++;
	return 0;
}
