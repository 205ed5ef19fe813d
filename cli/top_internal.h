/* SPDX-License-Identifier: GPL-2.0-only */
/* top_internal.h: what top.c (updates, rows, keys, the loop) and top_draw.c (the screen) share:
 * the view. Not for other files. */
#ifndef KPROF_CLI_TOP_INTERNAL_H
#define KPROF_CLI_TOP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/kprof.pb-c.h"

struct top_opts;

#define TREND_LEN 8
/* The columns before FUNCTION: "%-8u %6.1f%% %6.1f%% %10s %-8s %-7s ". */
#define ROW_PREFIX 53
#define MIN_FN 24
#define MAX_MODULE 32

enum sort_key { SORT_SELF, SORT_TOTAL, SORT_SELF_ALL, SORT_NAME, SORT_OFF_CPU, SORT_N };
/* The OFF-CPU column, shown when a target records off-CPU time: "%8s ". */
#define OFF_CPU_COL 9

struct row {
	uint32_t pid;
	const Kprof__TopEntry *e;
	const char *name;	    /* the function's name as shown */
	double self_pct, total_pct; /* of its own target's samples in the interval */
	/* CPU seconds in the interval (samples / Hz): what compares across targets, whose
	 * percentages have different wholes and whose samples different rates. */
	double self_cpu, total_cpu;
	double off_cpu; /* seconds its threads waited in it (leaf) in the interval (--off-cpu) */
	/* A copy: the histories live in an array that grows (moves) while rows are built. */
	char trend[TREND_LEN + 1];
};

/* Per-function history of self percent, for the trend column. */
struct hist {
	char *key;
	double v[TREND_LEN];
	uint64_t seq;
	char trend[TREND_LEN + 1];
};

struct view {
	Kprof__Reply *last; /* latest update */
	struct hist *hist;
	size_t nhist, caphist;
	struct row *rows;
	size_t nrows;
	const char **names; /* render_names of the rows, or NULL: names whole */
	enum sort_key sort;
	bool off_cpu; /* a target of the last update records off-CPU time: the OFF-CPU column */
	bool paused, tree;
	char filter[64];
	int scroll, page; /* first row shown; rows on a page */
	char msg[160];
	char *error; /* kprofd's error, sanitized, printed once the screen is gone */
	uint64_t prev_cpu_ns, prev_uptime_ns;
	double daemon_cpu_pct;
	time_t drawn_at;
	const struct top_opts *o;
	/* Of o, what the screen needs (top_draw.c does not see struct top_opts). */
	const char *socket_path;
	bool full_names;
};

#endif
