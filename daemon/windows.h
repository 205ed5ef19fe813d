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

/* Restore the window files of the state directory, start the window timer; sets m->windows. */
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
	uint64_t start, end;	/* CLOCK_REALTIME span of the windows merged */
	uint64_t samples;
	size_t windows, skipped; /* merged; left out (a file gone or damaged) */
};
/* 0, or a negative errno with msg saying why (-ENODATA: no window in the range). */
int windows_range(struct windows *w, struct target *t, bool session, uint64_t since, uint64_t until,
		  struct wrange *r, char *msg, size_t msglen);
void wrange_free(struct wrange *r);

struct windows_stats {
	struct window_stats s;
	uint64_t bad_files, write_failures;
	unsigned window_sec;
};
void windows_get_stats(const struct windows *w, struct windows_stats *st);

#endif
