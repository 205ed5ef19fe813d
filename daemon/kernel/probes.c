// SPDX-License-Identifier: GPL-2.0-only
/* probes.c: where a uprobe may go, and taking uprobes away without stalling the loop.
 *
 * A uprobe lives on (file, offset), so only code in a file-backed private read+exec mapping (a
 * memfd or a file) can be probed, through /proc/PID/map_files/START-END (the very file mapped,
 * even deleted or in another mount namespace). Anonymous code cannot, and a JIT that writes
 * into a probed page gets SIGTRAP, so a code file that is also mapped writable is refused unless
 * forced (uprobe_site_check).
 * Removing uprobes waits for an RCU grace period in the kernel (about 1 s here): a detached
 * worker thread destroys the links, so the removals overlap and the event loop goes on; the
 * kernel makes a new probe in the same file wait for a running removal, so the loop asks
 * removals_pending before it attaches one. Shared by exact mode (exact.c) and the path tracer
 * (paths.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kprof/procmaps.h"
#include "kernel/probes.h"
#include "os/clock.h"
#include "os/log.h"

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

/* A removal runs on a detached thread; the thread and the owner each hold a reference, so
 * neither waits for the other: the loop polls removal_busy and drops its reference at will. */
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
