/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_attach.h: attaching, detaching and re-checking targets (manager_attach.c). Included
 * by manager.h. */
#ifndef KPROF_DAEMON_MANAGER_ATTACH_H
#define KPROF_DAEMON_MANAGER_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct attach_opts;
struct manager;
struct target;

/* Attach pid; on error errbuf says why. */
int manager_attach(struct manager *m, pid_t pid, const struct attach_opts *o, struct target **ret,
		   char *errbuf, size_t errlen);
int manager_detach(struct manager *m, struct target *t);
/* Undo an attach that a failed request made: the target goes and nothing of it is kept. */
void manager_forget(struct manager *m, struct target *t);
/* Check a target's credentials again (exec, each second, each request): one a user attached
 * that is no longer that user's is ended; true if it was. */
bool manager_recheck(struct manager *m, struct target *t);
/* The housekeeping's check, each second: manager_recheck only when the credentials may have
 * changed since its last read (see manager_attach.c), or when lost (an exec record may have been
 * lost); else one stat of /proc/PID/stat. true if t was ended. */
bool manager_recheck_tick(struct manager *m, struct target *t, bool lost);
/* Exact mode or a path trace put probes in: drain every drain_ms from now on. */
void manager_probes_started(struct manager *m);

#endif
