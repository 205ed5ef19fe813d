/* SPDX-License-Identifier: GPL-2.0-only */
/* worker.h: one thread that runs kprofd's long builds off its event loop (worker.c). */
#ifndef KPROF_WORKER_H
#define KPROF_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct worker;

/* A job: run() in the worker's thread, touching only what the job owns (never a target, the
 * manager or anything else the loop changes); done() later in the loop, ran false when the job
 * was not run (the worker was freed first). cpu_ns: the thread's CPU time on run(). */
struct worker_job {
	void (*run)(struct worker_job *j);
	void (*done)(struct worker_job *j, bool ran);
	uint64_t cpu_ns;
	struct worker_job *next; /* the worker's */
};

/* A worker on loop e, holding at most max_jobs jobs queued or running: 0 or a negative errno. */
int worker_new(sd_event *e, unsigned max_jobs, struct worker **out);
/* The running job finished, the thread joined, every job's done() called (the queued ones with
 * ran false). */
void worker_free(struct worker *w);
/* j queued: 0, or -EBUSY when max_jobs are queued or running, -EINVAL without a worker. */
int worker_submit(struct worker *w, struct worker_job *j);

#endif
