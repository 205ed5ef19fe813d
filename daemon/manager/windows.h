/* SPDX-License-Identifier: GPL-2.0-only */
/* windows.h: time windows of the targets' samples and the profiles of time ranges (windows.c). */
#ifndef KPROF_DAEMON_WINDOWS_H
#define KPROF_DAEMON_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/hcct.h"
#include "kprof/profile.h"
#include "kprof/window.h"

struct manager;
struct target;
struct windows;

/* Restore the window files of the state directory, start the window timer. main.c sets
 * m->windows for the requests. */
int windows_new(struct manager *m, struct windows **ret);
/* Cut the last partial windows (written), then free. */
void windows_free(struct windows *w);
/* Cut every target's window now. */
void windows_cut_all(struct windows *w);

/* The profile of a time range of a target: its windows whose middle is in [since, until)
 * (CLOCK_REALTIME, until 0: now) merged. session: only t's own windows, else those of every
 * target of t's pid and uid. */
struct wrange {
	struct profile *prof;	/* the stacks and functions */
	struct hcct_tree *tree; /* the merged summaries (snapshot format) */
	struct profile *off;	/* attach --off-cpu: the windows' off-CPU time (NULL: none) */
	size_t max_stacks;	/* the bound of both profiles */
	uint64_t start, end;	/* CLOCK_REALTIME span of the windows merged */
	uint64_t samples;
	size_t windows, skipped; /* merged; left out (a file gone or damaged) */
};
/* 0, or a negative errno with msg saying why (-ENODATA: no window in the range). */
int windows_range(struct windows *w, struct target *t, bool session, uint64_t since, uint64_t until,
		  struct wrange *r, char *msg, size_t msglen);
void wrange_free(struct wrange *r);

/* The same range built in steps, so that a long one does not hold the event loop (requests.c
 * runs one step per loop iteration): begin picks the windows (by seq) and cuts t's current
 * one; each step merges windows until budget_ns has passed (at least one) and returns 1 while
 * some are left, 0 when all are merged, or a negative errno with msg; end gives the range (the
 * job keeps nothing of it) or -ENODATA with msg. Windows that aged out since begin are counted
 * as skipped. The job holds no pointer to t: t may go while it runs. */
struct wrange_job;
int windows_range_begin(struct windows *w, struct target *t, bool session, uint64_t since,
			uint64_t until, struct wrange_job **ret, char *msg, size_t msglen);
int windows_range_step(struct windows *w, struct wrange_job *j, uint64_t budget_ns, char *msg,
		       size_t msglen);
int windows_range_end(struct windows *w, struct wrange_job *j, struct wrange *r, char *msg,
		      size_t msglen);
void wrange_job_free(struct wrange_job *j);
/* The one stepper of a range merged between other work (the control socket's requests, the
 * HTTP endpoint's, windows_range at once): with *jp NULL it begins a job for t in *jp (t,
 * session, since and until are read then only), and in every call it takes one step of
 * budget_ns: 1 while windows are left (call again at a later loop iteration), 0 with the range
 * in *r, or a negative errno with msg; on 0 or an error the job is freed (*jp NULL). */
int windows_range_run(struct windows *w, struct wrange_job **jp, struct target *t, bool session,
		      uint64_t since, uint64_t until, uint64_t budget_ns, struct wrange *r,
		      char *msg, size_t msglen);

struct windows_stats {
	struct window_stats s;
	uint64_t bad_files, write_failures;
	uint64_t files; /* window files written: one a tick (a batch), whatever the targets */
	/* Debug counters: ticks, and the targets and index entries they (and range queries'
	 * cuts) looked at; flat in the kept profiles and windows. */
	uint64_t ticks, tick_steps;
	uint64_t range_queries, range_sliced, range_slices; /* built in more than one step */
	unsigned window_sec;
};
void windows_get_stats(const struct windows *w, struct windows_stats *st);

#endif
