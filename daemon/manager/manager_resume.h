/* SPDX-License-Identifier: GPL-2.0-only */
/* manager_resume.h: profiling goes on through a restart of kprofd (manager_resume.c). */
#ifndef KPROF_DAEMON_MANAGER_RESUME_H
#define KPROF_DAEMON_MANAGER_RESUME_H

struct manager;
struct target;

/* Subscribe to the ends of targets (their records go). */
int manager_resume_init(struct manager *m);
/* A client attached t: its record, so that it is attached again after kprofd dies. */
void manager_resume_track(struct manager *m, struct target *t);
/* Stopping: t, attached by a client, is to be attached again at the next start (saved so). */
void manager_mark_resume(struct target *t);
/* Starting, after the kept profiles are read: attach again the processes attached at the last
 * stop that still run, each continuing its profile. Returns how many were. */
unsigned manager_resume_kept(struct manager *m);

#endif
