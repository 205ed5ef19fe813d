/* SPDX-License-Identifier: GPL-2.0-only */
/* verbs_threads.h: report's per-thread options, --threads, --tid and --comm (verbs_threads.c). */
#ifndef KPROF_CLI_VERBS_THREADS_H
#define KPROF_CLI_VERBS_THREADS_H

#include <stdbool.h>

#include "kprof/tview.h"
#include "proto/kprof.pb-c.h"

#define OPT_THREADS 2901
#define OPT_TID 2902
#define OPT_COMM 2903
#define THREAD_OPTS                                                                                \
	{"threads", no_argument, NULL, OPT_THREADS}, {"tid", required_argument, NULL, OPT_TID},    \
	{                                                                                          \
		"comm", required_argument, NULL, OPT_COMM                                          \
	}

struct verbs_threads {
	bool threads;		  /* --threads: the table of threads */
	struct tview_filter only; /* --tid, --comm */
};

/* c into t if it is one of THREAD_OPTS' options: 1 if it was, 0 if not, or an exit code
 * (negated) on a bad value. */
int verbs_threads_opt(int c, struct verbs_threads *t);
/* Whether any of them was given. */
bool verbs_threads_any(const struct verbs_threads *t);
/* The whole profile of rr's pid, session and range (an export request) into *rep, its
 * export->profile set, and with off_cpu its export->off_cpu (report --threads, --lines). 0, or
 * an exit code (nothing to free then). */
int verbs_report_profile(const Kprof__ReportRequest *rr, bool off_cpu, bool lines,
			 Kprof__Reply **rep);
/* report of rr's pid (group NULL) or of the group of processes name, per t: the profile
 * exported, cut to the threads of --tid/--comm, then the threads' table or the flat profile;
 * of a pid's off-CPU profile with rr->off_cpu, of both with wall (in time units). 0 or an exit
 * code. */
int verbs_report_threads(const struct verbs_threads *t, const Kprof__ReportRequest *rr,
			 const char *group, bool wall, bool json, bool full_names);

#endif
