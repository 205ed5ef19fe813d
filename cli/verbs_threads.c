// SPDX-License-Identifier: GPL-2.0-only
/* verbs_threads.c: report --threads, --tid TID and --comm NAME.
 *
 * kprofd's report request answers for the whole process; the per-thread view is made here from
 * the exported profile (its stacks carry their thread, its table the threads' names: tview.c),
 * so a kprofd of any version that exports answers it and the daemon has no request to cap.
 * The filters cut the profile first; then --threads lists its threads, or merge_report makes
 * the flat profile of what is left, rendered as report renders kprofd's.
 */
#include "verbs_threads.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/merge.h"
#include "client.h"
#include "group.h"
#include "render.h"
#include "render_profile.h"
#include "render_threads.h"
#include "verbs.h"

#define COMM_MAX 64 /* a thread's name is 15 bytes; a longer one matches nothing */

int verbs_threads_opt(int c, struct verbs_threads *t)
{
	unsigned v;

	switch (c) {
	case OPT_THREADS:
		t->threads = true;
		return 1;
	case OPT_TID:
		if (verbs_parse_uint("--tid", optarg, 1, 4194304, &v) < 0)
			return -KPROFCTL_EXIT_USAGE;
		t->only.tid = v;
		return 1;
	case OPT_COMM:
		if (!optarg[0] || strlen(optarg) > COMM_MAX)
			return -verbs_usage_error("report",
						  "--comm takes a thread's name (1-64 characters)");
		t->only.comm = optarg;
		return 1;
	default:
		return 0;
	}
}

bool verbs_threads_any(const struct verbs_threads *t)
{
	return t->threads || t->only.tid || t->only.comm;
}

/* The view's threads table or flat profile (of a merged profile: without a target line). 0 or
 * an exit code. */
static int show(const struct verbs_threads *t, const Kprof__ReportRequest *rr,
		const Kprof__SavedProfile *sp, bool merged, bool json, bool full_names)
{
	struct tview v;
	int r = 0;

	if (tview_filter(sp, &t->only, &v) < 0)
		goto nomem;
	if (!json && (t->only.tid || t->only.comm)) {
		fputs("threads:", stdout);
		if (t->only.tid)
			printf(" tid %u", t->only.tid);
		if (t->only.comm) {
			fputs(" named '", stdout);
			render_text(stdout, t->only.comm);
			fputc('\'', stdout);
		}
		printf(": %" PRIu64 " of %" PRIu64 " samples\n", v.target.samples,
		       sp->target ? sp->target->samples : 0);
	}
	if (t->threads) {
		struct tview_thread *th;
		size_t n;

		if (tview_threads(&v.sp, &th, &n) < 0)
			goto nomem;
		render_threads(stdout, merged ? NULL : &v.target, &v.sp, th, n, rr->top,
			       v.target.samples, json);
		free(th);
	} else {
		Kprof__ReportReply *rep;

		if (merge_report(&v.sp, rr->top, &rep) < 0)
			goto nomem;
		if (merged) /* its target is its first process's: not the group's */
			rep->target = NULL;
		render_report(stdout, rep, json, full_names);
		merge_report_free(rep);
	}
	tview_free(&v);
	return r;
nomem:
	tview_free(&v);
	fputs("kprofctl report: out of memory\n", stderr);
	return KPROFCTL_EXIT_ERROR;
}

int verbs_report_profile(const Kprof__ReportRequest *rr, bool lines, Kprof__Reply **rep)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT;
	int r;

	group_export_request(&req, &er, rr->pid, rr->session, rr->since_ns, rr->until_ns);
	er.lines = lines;
	if ((r = verbs_call(&req, rep)))
		return r;
	if (!(*rep)->export || !(*rep)->export->profile) {
		fputs("kprofctl report: kprofd sent no profile\n", stderr);
		kprof__reply__free_unpacked(*rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	return 0;
}

int verbs_report_threads(const struct verbs_threads *t, const Kprof__ReportRequest *rr,
			 const char *group, bool json, bool full_names)
{
	Kprof__Reply *rep = NULL;
	struct group g;
	int r;

	if (group) {
		if ((r = group_load_range(verbs_call_raw, group, rr->since_ns, rr->until_ns, &g)))
			return r;
		r = show(t, rr, g.sp, true, json, full_names);
		group_free(&g);
		return r;
	}
	if ((r = verbs_report_profile(rr, false, &rep)))
		return r;
	r = show(t, rr, rep->export->profile, false, json, full_names);
	kprof__reply__free_unpacked(rep, NULL);
	return r;
}
