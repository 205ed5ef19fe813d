// SPDX-License-Identifier: GPL-2.0-only
/* verbs_threads.c: report --threads, --tid TID and --comm NAME.
 *
 * kprofd's report request answers for the whole process; the per-thread view is made here from
 * the exported profile (its stacks carry their thread, its table the threads' names: tview.c),
 * so a kprofd of any version that exports answers it and the daemon has no request to cap.
 * The filters cut the profile first; then --threads lists its threads, or merge_report makes
 * the flat profile of what is left, rendered as report renders kprofd's. With --off-cpu the
 * export carries the off-CPU profile too (nanoseconds), which is cut and shown the same way in
 * time units; --wall shows both, each thread's CPU samples weighted by the sampling period.
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
#include "render_offcpu.h"
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

/* The header of a view cut by --tid/--comm: what it kept of the whole (in time units for an
 * off-CPU profile). */
static void filter_line(const struct verbs_threads *t, uint64_t kept, uint64_t all, bool off)
{
	char b1[32], b2[32];

	fputs("threads:", stdout);
	if (t->only.tid)
		printf(" tid %u", t->only.tid);
	if (t->only.comm) {
		fputs(" named '", stdout);
		render_text(stdout, t->only.comm);
		fputc('\'', stdout);
	}
	if (off)
		printf(": %s of %s off CPU\n", render_offcpu_time(kept, b1),
		       render_offcpu_time(all, b2));
	else
		printf(": %" PRIu64 " of %" PRIu64 " samples\n", kept, all);
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
	if (!json && (t->only.tid || t->only.comm))
		filter_line(t, v.target.samples, sp->target ? sp->target->samples : 0, false);
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

/* The same of the off-CPU profile off, and for --wall of the CPU one cpu too: the threads'
 * times, or the flat profile in time units. */
static int show_offcpu(const struct verbs_threads *t, const Kprof__ReportRequest *rr,
		       const Kprof__SavedProfile *off, const Kprof__SavedProfile *cpu, bool wall,
		       bool json)
{
	struct tview ov = {0}, cv = {0};
	struct tview_thread *ot = NULL, *ct = NULL;
	Kprof__ReportReply *orep = NULL, *crep = NULL;
	uint64_t states[RENDER_OFFCPU_NSTATES];
	size_t no = 0, nc = 0;
	int r = KPROFCTL_EXIT_ERROR;

	if (tview_filter(off, &t->only, &ov) < 0 || tview_filter(cpu, &t->only, &cv) < 0)
		goto out;
	if (!json && (t->only.tid || t->only.comm))
		filter_line(t, ov.target.samples, off->target ? off->target->samples : 0, true);
	/* The line says samples, not nanoseconds, and the session the export named. */
	ov.target.samples = cv.target.samples;
	ov.target.session = cv.target.session;
	ov.target.sessions = cv.target.sessions;
	if (t->threads) {
		struct render_offcpu_threads rt = {.target = &ov.target, .off = &ov.sp, .wall = wall};

		if (tview_threads(&ov.sp, &ot, &no) < 0 || (wall && tview_threads(&cv.sp, &ct, &nc) < 0))
			goto out;
		rt.ot = ot;
		rt.not = no;
		rt.ct = ct;
		rt.nct = nc;
		rt.period_ns = cpu->target && cpu->target->freq_hz
				   ? 1000000000ULL / cpu->target->freq_hz
				   : 0;
		render_offcpu_threads(stdout, &rt, rr->top, json);
		r = 0;
		goto out;
	}
	/* A view of some threads: its own off-CPU time and states, not the process's. */
	if (t->only.tid || t->only.comm)
		render_offcpu_view_target(&ov.sp, &ov.target, states);
	if (merge_report(&ov.sp, wall ? 0 : rr->top, &orep) < 0 ||
	    (wall && merge_report(&cv.sp, 0, &crep) < 0))
		goto out;
	render_offcpu_report(stdout, orep, crep, rr->top, json);
	r = 0;
out:
	if (r)
		fputs("kprofctl report: out of memory\n", stderr);
	merge_report_free(orep);
	merge_report_free(crep);
	free(ot);
	free(ct);
	tview_free(&ov);
	tview_free(&cv);
	return r;
}

int verbs_report_profile(const Kprof__ReportRequest *rr, bool off_cpu, bool lines,
			 Kprof__Reply **rep)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT;
	int r;

	group_export_request(&req, &er, rr->pid, rr->session, rr->since_ns, rr->until_ns);
	er.off_cpu = off_cpu;
	er.lines = lines;
	if ((r = verbs_call(&req, rep)))
		return r;
	if (!(*rep)->export || !(*rep)->export->profile || (off_cpu && !(*rep)->export->off_cpu)) {
		fputs("kprofctl report: kprofd sent no profile\n", stderr);
		kprof__reply__free_unpacked(*rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	return 0;
}

int verbs_report_threads(const struct verbs_threads *t, const Kprof__ReportRequest *rr,
			 const char *group, bool wall, bool json, bool full_names)
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
	if ((r = verbs_report_profile(rr, rr->off_cpu || wall, false, &rep)))
		return r;
	if (rr->off_cpu || wall)
		r = show_offcpu(t, rr, rep->export->off_cpu, rep->export->profile, wall, json);
	else
		r = show(t, rr, rep->export->profile, false, json, full_names);
	kprof__reply__free_unpacked(rep, NULL);
	return r;
}
