// SPDX-License-Identifier: GPL-2.0-only
/* manager_watch.c: attach --cgroup/--unit, a cgroup whose present and future processes are
 * attached (kp_cgroups tells kprofd of those that enter it), a unit's cgroup followed across
 * restarts, and unwatching. Apart from manager.c because it is one feature over manager_attach.c;
 * the watch rules that start watches from the settings are watch.c's, a layer above.
 */
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "kprof/cleanup.h"
#include "os/clock.h"
#include "symbols/jvmattach.h"
#include "kernel/loader.h"
#include "manager/manager.h"
#include "manager/manager_watch.h"
#include "manager/manager_internal.h"
#include "kernel/ringbuf.h"
#include "kernel/sampler.h"
#include "os/store.h"
#include "wire/target_pb.h"
#include "symbols/symbolize.h"
#include "os/log.h"
#include "paths/paths.h"
#include "os/procfs.h"

struct cgwatch *manager_find_watch(struct manager *m, const char *name)
{
	for (unsigned i = 0; i < m->n_watches; i++)
		if (!strcmp(m->watches[i]->name, name) || !strcmp(m->watches[i]->ref.path, name))
			return m->watches[i];
	return NULL;
}

/* Attach pid as a member of w (it entered the cgroup, or was there): 0, or a negative errno
 * (refused: counted, said at debug level; a pid already attached is left as it is). */
static int watch_attach(struct manager *m, struct cgwatch *w, pid_t pid, uint64_t start_ticks)
{
	struct target *t = manager_find(m, pid);
	char err[256];
	int r;

	if (t && t->state == TARGET_ATTACHED && !t->all)
		return 0;
	r = manager_attach(m, pid, &w->opts, &t, err, sizeof(err));
	if (r == 0 && start_ticks && t->start_ticks != start_ticks) {
		manager_forget(m, t);
		r = -ESRCH;
	}
	if (r < 0) {
		w->refused++;
		if (w->opts.counts)
			w->opts.counts->refused++;
		log_debug("%s: pid %d not attached: %s", w->name, pid, err);
		return r;
	}
	w->joined++;
	if (w->opts.counts)
		w->opts.counts->attached++;
	return 0;
}

void manager_on_cgroup(void *ctx, pid_t tgid, uint64_t cgid, uint64_t start_ticks)
{
	struct manager *m = ctx;

	for (unsigned i = 0; i < m->n_watches; i++)
		if (m->watches[i]->ref.id == cgid) {
			watch_attach(m, m->watches[i], tgid, start_ticks);
			return;
		}
}

/* Room for one more watch of uid by: 0, or -EUSERS with errbuf set. */
static int watch_check_quota(struct manager *m, uid_t by, char *errbuf, size_t errlen)
{
	unsigned mine = 0;

	for (unsigned i = 0; i < m->n_watches; i++)
		mine += m->watches[i]->opts.by == by;
	if (m->n_watches >= MANAGER_MAX_WATCHES || (by != 0 && mine >= MANAGER_WATCHES_PER_USER)) {
		snprintf(errbuf, errlen, "too many cgroups watched (%u; %u per user)",
			 MANAGER_MAX_WATCHES, MANAGER_WATCHES_PER_USER);
		return -EUSERS;
	}
	return 0;
}

/* A new watch of the cgroup or unit, resolved and named (not watched yet), or an error with
 * errbuf set: not found (unless a watch rule's, which waits for it), or already watched. */
static int watch_resolve(struct manager *m, const char *cgroup, const char *unit,
			 const struct attach_opts *o, struct cgwatch **ret, char *errbuf,
			 size_t errlen)
{
	struct cgwatch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	err = cgroup ? cgroup_resolve(cgroup, &w->ref) : cgroup_of_unit(unit, &w->ref);
	/* A watch rule's cgroup or unit that is not there yet is waited for
	 * (manager_check_watches). */
	w->waiting = err == -ENOENT && o->rule;
	if (err < 0 && !w->waiting) {
		snprintf(
		    errbuf, errlen, "%s %s: %s", cgroup ? "cgroup" : "unit", cgroup ? cgroup : unit,
		    err == -EINVAL	  ? (cgroup ? "not a path under /sys/fs/cgroup"
						    : "not a unit name (NAME.service, .scope, .slice)")
		    : err == -EMEDIUMTYPE ? "not in a cgroup2 hierarchy"
		    : err == -ENOENT
			? (cgroup ? "no such cgroup" : "no cgroup of that unit (not running?)")
			: strerror(-err));
		free(w);
		return err;
	}
	snprintf(w->name, sizeof(w->name), "%s", unit ? unit : w->waiting ? cgroup : w->ref.path);
	w->unit = unit != NULL;
	if (manager_find_watch(m, w->name) || (!w->waiting && manager_find_watch(m, w->ref.path))) {
		snprintf(errbuf, errlen, "%s is already watched", w->name);
		free(w);
		return -EALREADY;
	}
	*ret = w;
	return 0;
}

/* The processes in w's cgroup now (not kprofd itself) are attached. */
static void watch_attach_members(struct manager *m, struct cgwatch *w)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;

	pids = w->waiting ? NULL : calloc(KP_MAX_TARGETS, sizeof(*pids));
	if (pids)
		cgroup_procs(&w->ref, pids, KP_MAX_TARGETS, &n);
	for (size_t i = 0; i < n; i++)
		if (pids[i] != getpid())
			watch_attach(m, w, pids[i], 0);
}

int manager_watch(struct manager *m, const char *cgroup, const char *unit,
		  const struct attach_opts *o, struct cgwatch **ret, unsigned *attached,
		  unsigned *refused, char *errbuf, size_t errlen)
{
	struct cgwatch *w;
	int err;

	if (!cgroup == !unit) {
		snprintf(errbuf, errlen, "a cgroup or a unit, not both");
		return -EINVAL;
	}
	err = watch_check_quota(m, o->by, errbuf, errlen);
	if (err < 0)
		return err;
	err = watch_resolve(m, cgroup, unit, o, &w, errbuf, errlen);
	if (err < 0)
		return err;
	w->opts = *o;
	w->opts.children = true;
	w->opts.duration_sec = 0;
	w->opts.calls = false;
	w->opts.cgroup = w->name;
	w->since_ns = now_ns(CLOCK_REALTIME);
	/* Watched first: a process entering while the members are read is reported. */
	err = w->waiting ? 0 : loader_cgroup_watch(m->loader, w->ref.id, true);
	if (err < 0) {
		snprintf(errbuf, errlen, "cannot watch %s: %s", w->name, strerror(-err));
		free(w);
		return err;
	}
	m->watches[m->n_watches++] = w;
	watch_attach_members(m, w);
	*attached = w->joined;
	*refused = w->refused;
	log_info("watching %s (cgroup %s, by uid %u): %u processes attached, %u refused", w->name,
		 w->waiting ? "not there yet" : w->ref.path, o->by, w->joined, w->refused);
	*ret = w;
	return 0;
}

unsigned manager_unwatch(struct manager *m, struct cgwatch *w)
{
	struct target *t;
	unsigned n = 0;

	if (!w->waiting)
		loader_cgroup_watch(m->loader, w->ref.id, false);
	for (unsigned i = 0; i < m->n_watches; i++)
		if (m->watches[i] == w) {
			m->watches[i] = m->watches[--m->n_watches];
			break;
		}
	manager_for_each_attached(m, t)
		if (t->cgroup && !strcmp(t->cgroup, w->name)) {
			manager_end_target(m, t, TARGET_DETACHED, LOG_DEBUG,
					   "detached (%s no longer watched)", w->name);
			n++;
		}
	log_info("%s no longer watched: %u processes detached", w->name, n);
	free(w);
	return n;
}

/* The cgroup of watch w (a unit's, found again) is ref now: watched by its new id, its
 * processes attached. */
static void watch_rebind(struct manager *m, struct cgwatch *w, const struct cgroup_ref *ref)
{
	_cleanup_free_ pid_t *pids = calloc(KP_MAX_TARGETS, sizeof(*pids));
	size_t n = 0;
	int err = loader_cgroup_watch(m->loader, ref->id, true);

	if (err < 0 && err != -EEXIST) {
		log_warn("%s: cannot watch its new cgroup %s: %s", w->name, ref->path,
			 strerror(-err));
		return;
	}
	w->restarts += w->ref.id != 0; /* not the first start of a rule's unit */
	w->ref = *ref;
	w->waiting = false;
	if (pids)
		cgroup_procs(&w->ref, pids, KP_MAX_TARGETS, &n);
	for (size_t i = 0; i < n; i++)
		if (pids[i] != getpid())
			watch_attach(m, w, pids[i], 0);
	log_info("%s started again (cgroup %s): %zu processes", w->name, w->ref.path, n);
}

/* Housekeeping: a watched cgroup removed ends its watch; a unit's, and a watch rule's cgroup,
 * is waited for (a stopped or restarting service) and watched again when it is back. */
void manager_check_watches(struct manager *m)
{
	for (unsigned i = 0; i < m->n_watches;) {
		struct cgwatch *w = m->watches[i];
		struct cgroup_ref ref;

		i++;
		if (!w->waiting && cgroup_exists(&w->ref))
			continue;
		if (!w->unit && !w->opts.rule) {
			log_info("%s: cgroup %s removed: no longer watched", w->name, w->ref.path);
			manager_unwatch(m, w);
			i--; /* the last watch took its place */
			continue;
		}
		if (!w->waiting) {
			loader_cgroup_watch(m->loader, w->ref.id, false);
			w->waiting = true;
			log_info("%s stopped (cgroup %s removed): waiting for it to start again",
				 w->name, w->ref.path);
		}
		if ((w->unit ? cgroup_of_unit(w->name, &ref) : cgroup_resolve(w->name, &ref)) == 0)
			watch_rebind(m, w, &ref);
	}
}
