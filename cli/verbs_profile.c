// SPDX-License-Identifier: GPL-2.0-only
/* verbs_profile.c: the verbs that read a profile from kprofd and print it: report, hcct, folded
 * (of a process, or merged over a watched cgroup, a unit or system-wide mode), top (the live
 * view, top.c), drift, and the two about one function's code: paths (the path tracer, waited
 * for until it ends or Ctrl-C) and annotate. Apart from the verbs that choose targets
 * (verbs_targets.c) and write profiles to files (verbs_export.c).
 */
#include "verbs_profile.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/cleanup.h"
#include "kprof/saved.h"
#include "kprof/when.h"
#include "client.h"
#include "group.h"
#include "lines.h"
#include "render.h"
#include "render_annotate.h"
#include "render_offcpu.h"
#include "render_profile.h"
#include "render_spp.h"
#include "top.h"
#include "drift.h"
#include "verbs.h"
#include "verbs_threads.h"

/* The merged report of a watched cgroup or unit. 0, or an exit code. */
static int report_group(const char *name, const struct verbs_group *grp,
			const Kprof__ReportRequest *rr, bool json, bool full_names)
{
	struct group g;
	Kprof__ReportReply *gr = NULL;
	int r;

	if ((r = group_load_range(verbs_call_raw, name, rr->since_ns, rr->until_ns, &g)) == 0 &&
	    merge_report(g.sp, rr->top, &gr) < 0)
		r = KPROFCTL_EXIT_ERROR;
	if (r == 0) {
		if (!json && grp->all) {
			printf("system-wide (attach --all): %zu process%s\n", g.n,
			       g.n == 1 ? "" : "es");
		} else if (!json) {
			fputs(grp->cgroup ? "cgroup " : "unit ", stdout);
			render_text(stdout, name);
			printf(": %zu process%s\n", g.n, g.n == 1 ? "" : "es");
		}
		gr->target = NULL;
		render_report(stdout, gr, json, full_names);
	}
	merge_report_free(gr);
	group_free(&g);
	return r;
}

/* req asked with its off_cpu set into *off, then (cpu not NULL: --wall) cleared into *cpu. 0,
 * or the exit code (nothing to free then). */
static int call_offcpu(const Kprof__Request *req, protobuf_c_boolean *off_cpu, Kprof__Reply **off,
		       Kprof__Reply **cpu)
{
	int r;

	*off_cpu = true;
	r = verbs_call(req, off);
	*off_cpu = false;
	if (r || !cpu || !(r = verbs_call(req, cpu)))
		return r;
	kprof__reply__free_unpacked(*off, NULL);
	return r;
}

/* report --off-cpu, or --wall (the CPU report too, the whole of both merged). */
static int report_offcpu(Kprof__ReportRequest *rr, bool wall, bool json)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__Reply *off = NULL, *cpu = NULL;
	unsigned top = rr->top;
	int r;

	req.body_case = KPROF__REQUEST__BODY_REPORT;
	req.report = rr;
	if (wall)
		rr->top = 0; /* merged: every function of both, cut after */
	if ((r = call_offcpu(&req, &rr->off_cpu, &off, wall ? &cpu : NULL)))
		return r;
	render_offcpu_report(stdout, off->report, cpu ? cpu->report : NULL, top, json);
	kprof__reply__free_unpacked(off, NULL);
	if (cpu)
		kprof__reply__free_unpacked(cpu, NULL);
	return 0;
}

/* The whole profile of a process with its source lines and call sites (an export request of
 * rr's process, session and range), checked: 0 with *rep (free it), or an exit code. */
static int lines_profile(const Kprof__ReportRequest *rr, Kprof__Reply **rep)
{
	int r, err;

	if ((r = verbs_report_profile(rr, false, true, rep)))
		return r;
	err = saved_check((*rep)->export->profile);
	if (err >= 0)
		return 0;
	fprintf(stderr, "kprofctl: the profile kprofd sent: %s\n", strerror(-err));
	kprof__reply__free_unpacked(*rep, NULL);
	*rep = NULL;
	return KPROFCTL_EXIT_ERROR;
}

/* report --lines: the whole profile (an export request), its samples per source line. */
static int report_lines(const Kprof__ReportRequest *rr, bool json)
{
	Kprof__Reply *rep = NULL;
	int r = lines_profile(rr, &rep);

	if (r)
		return r;
	r = lines_report(stdout, rep->export->profile, rr->top, json);
	if (r < 0)
		fprintf(stderr, "kprofctl report --lines: %s\n", strerror(-r));
	kprof__reply__free_unpacked(rep, NULL);
	return r < 0 ? KPROFCTL_EXIT_ERROR : 0;
}

int verb_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"top", required_argument, NULL, 'n'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"full-names", no_argument, NULL, 'W'},
	    LINES_OPT,
	    GROUP_OPTS,
	    RANGE_OPTS,
	    {"off-cpu", no_argument, NULL, 'O'},
	    {"wall", no_argument, NULL, 'w'},
	    THREAD_OPTS,
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;
	bool lines = false;
	Kprof__Reply *rep = NULL;
	bool json = false, full_names = false, wall = false;
	struct verbs_group grp = {0};
	struct verbs_threads th = {0};
	const char *name;
	int c, r, st = -1;

	rr.top = 20;
	while ((c = verbs_getopt(&st, "report", argc, argv, "n:", opts)) != -1) {
		if (c == 'n' && verbs_parse_uint("--top", optarg, 0, 100000000, &rr.top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && verbs_parse_session(optarg, &rr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (c == 'W')
			full_names = true;
		rr.off_cpu |= c == 'O';
		wall |= c == 'w';
		lines |= c == 'L';
		if ((r = verbs_threads_opt(c, &th)) < 0)
			return -r;
		if (!r && !verbs_group_opt(c, &grp) &&
		    verbs_range_opt(c, &rr.since_ns, &rr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	name = verbs_group_name("report", &grp, argc, rr.session, &r);
	if (r)
		return r;
	if (lines && (name || rr.off_cpu || wall || verbs_threads_any(&th)))
		return verbs_usage_error("report", "--lines is for one PID, without --off-cpu, "
						   "--wall, --threads, --tid or --comm");
	if (name && (rr.off_cpu || wall))
		return verbs_usage_error("report", "--off-cpu and --wall are for one PID");
	if (!name && verbs_threads_any(&th) && (r = verbs_one_pid("report", argc, argv, &rr.pid)))
		return r;
	if (verbs_threads_any(&th))
		return verbs_report_threads(&th, &rr, name, wall, json, full_names);
	if (name)
		return report_group(name, &grp, &rr, json, full_names);
	if ((r = verbs_one_pid("report", argc, argv, &rr.pid)))
		return r;
	if (lines)
		return report_lines(&rr, json);
	if (rr.off_cpu || wall)
		return report_offcpu(&rr, wall, json);
	req.body_case = KPROF__REQUEST__BODY_REPORT;
	req.report = &rr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	render_report(stdout, rep->report, json, full_names);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

int verb_drift(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"keys", required_argument, NULL, 'k'},
	    {"json", no_argument, NULL, 'j'},
	    {"session", required_argument, NULL, 'S'},
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__DriftRequest dr = KPROF__DRIFT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "drift", argc, argv, "", opts)) != -1) {
		if (c == 'k' && verbs_parse_uint("--keys", optarg, 1, 16, &dr.keys) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && verbs_parse_session(optarg, &dr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if ((r = verbs_one_pid("drift", argc, argv, &dr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_DRIFT;
	req.drift = &dr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	drift_render(stdout, rep->drift, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static volatile sig_atomic_t paths_interrupted;

static void on_paths_sigint(int sig)
{
	(void)sig;
	paths_interrupted = 1;
}

/* One PathsRequest; the reply in *ret. */
static int paths_call(Kprof__PathsRequest *pr, Kprof__PathsOp op, uint32_t top, bool brief,
		      Kprof__Reply **ret)
{
	Kprof__Request req = KPROF__REQUEST__INIT;

	pr->op = op;
	pr->top = top;
	pr->brief = brief;
	req.body_case = KPROF__REQUEST__BODY_PATHS;
	req.paths = pr;
	return verbs_call(&req, ret);
}

/* What paths' options ask besides the request. */
struct paths_opts {
	unsigned top;
	bool json, show, stop, events;
};

/* paths' options that take a number parsed here (--duration, --budget, --spp-timeout,
 * --spp-budget, --max-slowdown) into pr. Returns 0, or the exit code of a bad number (reported). */
static int paths_number_opt(int c, Kprof__PathsRequest *pr)
{
	double secs;
	char *end;

	switch (c) {
	case 'd':
		errno = 0;
		secs = strtod(optarg, &end);
		if (errno || end == optarg || *end || !(secs >= 0.001 && secs <= 86400))
			return verbs_usage_errorf("--duration: '%s' is not a number of seconds "
						  "in 0.001-86400",
						  optarg);
		pr->duration_ms = (uint32_t)lround(secs * 1000);
		break;
	case 'b':
		errno = 0;
		pr->budget = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || optarg[0] == '-' || !pr->budget)
			return verbs_usage_errorf("--budget: '%s' is not a positive number",
						  optarg);
		break;
	case 'O':
		errno = 0;
		pr->spp_timeout = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || optarg[0] == '-' || !pr->spp_timeout ||
		    pr->spp_timeout > 100000000)
			return verbs_usage_errorf(
			    "--spp-timeout: '%s' is not a number of activations "
			    "in 1-100000000",
			    optarg);
		pr->structural = true;
		break;
	case 'B':
		errno = 0;
		pr->spp_budget = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || optarg[0] == '-' || !pr->spp_budget ||
		    pr->spp_budget > 100000000)
			return verbs_usage_errorf("--spp-budget: '%s' is not a number in "
						  "1-100000000",
						  optarg);
		pr->structural = true;
		break;
	case 'M':
		if (verbs_parse_slowdown(optarg, &pr->max_slowdown) < 0)
			return KPROFCTL_EXIT_USAGE;
		break;
	}
	return 0;
}

/* paths' options into pr and o. Returns -1 to go on, else the exit code. */
static int paths_options(int argc, char **argv, Kprof__PathsRequest *pr, struct paths_opts *o)
{
	static const struct option opts[] = {
	    {"k", required_argument, NULL, 'k'},
	    {"duration", required_argument, NULL, 'd'},
	    {"budget", required_argument, NULL, 'b'},
	    {"top", required_argument, NULL, 't'},
	    {"force", no_argument, NULL, 'f'},
	    {"show", no_argument, NULL, 's'},
	    {"stop", no_argument, NULL, 'S'},
	    {"session", required_argument, NULL, 'e'},
	    {"json", no_argument, NULL, 'j'},
	    {"events", no_argument, NULL, 'E'},
	    {"structural", no_argument, NULL, 'T'},
	    {"spp-budget", required_argument, NULL, 'B'},
	    {"spp-timeout", required_argument, NULL, 'O'},
	    {"max-slowdown", required_argument, NULL, 'M'},
	    {},
	};
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "paths", argc, argv, "", opts)) != -1) {
		if ((r = paths_number_opt(c, pr)))
			return r;
		if (c == 'k' && verbs_parse_uint("--k", optarg, 1, 64, &pr->k) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 't' && verbs_parse_uint("--top", optarg, 0, 1000000, &o->top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'e' && verbs_parse_session(optarg, &pr->session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'f')
			pr->force = true;
		if (c == 's')
			o->show = true;
		if (c == 'S')
			o->stop = true;
		if (c == 'j')
			o->json = true;
		if (c == 'E')
			o->events = true;
		if (c == 'T')
			pr->structural = true;
	}
	return st;
}

/* "tracing the paths of FUNCTION in pid PID with ..." on stderr, from the START reply. */
static void paths_announce(const Kprof__PathsRequest *pr, const Kprof__PathsReply *p)
{
	fputs("kprofctl: tracing the paths of ", stderr);
	render_text(stderr, p->function);
	if (p->hw && p->hw_turn && !strncmp(p->hw_turn, "structure graph", 15))
		fprintf(stderr,
			" in pid %u (anonymous memory) with hardware breakpoints, one structure "
			"graph at a time,",
			pr->pid);
	else if (p->hw)
		fprintf(stderr,
			" in pid %u (anonymous memory) with hardware breakpoints on %u loop "
			"branch%s, 4 at a time,",
			pr->pid, p->probes, p->probes == 1 ? "" : "es");
	else
		fprintf(stderr, " in pid %u with %u uprobe%s", pr->pid, p->probes,
			render_plural(p->probes));
	fprintf(stderr, " for up to %.1f s%s (Ctrl-C stops)\n", p->duration_ms / 1e3,
		p->budget ? " or until the budget" : "");
}

/* Wait for the trace started with *rep to end: duration, budget, the target's exit, or Ctrl-C
 * (which stops it). *rep is freed. Returns 0 or the exit code of a failed query. */
static int paths_wait(Kprof__PathsRequest *pr, Kprof__Reply *rep)
{
	struct sigaction sa = {.sa_handler = on_paths_sigint}, old_int, old_term;
	bool interrupted = false, told = false;
	int r = 0;

	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	while (rep->paths->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING) {
		struct timespec ts = {0, 100 * 1000 * 1000};

		if (rep->paths->budget_offs && !told) /* once: the reply says the rest */
			fprintf(
			    stderr,
			    "kprofctl: over the budget of %.2fx: the probes go off until the "
			    "target's work has paid for them, then back (in %.0f%% of the time so "
			    "far; the counts cover that part)\n",
			    rep->paths->max_slowdown, 100.0 * rep->paths->duty);
		told |= rep->paths->budget_offs > 0;
		kprof__reply__free_unpacked(rep, NULL);
		rep = NULL;
		nanosleep(&ts, NULL);
		interrupted = paths_interrupted;
		r = paths_call(pr,
			       interrupted ? KPROF__PATHS_OP__PATHS_OP_STOP
					   : KPROF__PATHS_OP__PATHS_OP_QUERY,
			       1, true, &rep);
		if (r)
			break;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rep)
		kprof__reply__free_unpacked(rep, NULL);
	return r;
}

int verb_paths(int argc, char **argv)
{
	Kprof__PathsRequest pr = KPROF__PATHS_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	struct paths_opts o = {.top = 10};
	int r;

	if ((r = paths_options(argc, argv, &pr, &o)) >= 0)
		return r;
	if ((o.show || o.stop) && pr.structural)
		return verbs_usage_errorf(
		    "--structural, --spp-budget and --spp-timeout start a trace: not with "
		    "--show or --stop (a structural trace shows its profile "
		    "anyway)");
	if (optind >= argc || argc - optind > 2 || (!o.show && !o.stop && argc - optind != 2))
		return verbs_usage_error("paths", optind >= argc      ? "a PID is required"
						  : argc - optind > 2 ? "too many arguments"
								      : "a FUNCTION is required");
	if (verbs_parse_uint("PID", argv[optind], 1, 0x7fffffff, &pr.pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	pr.function = argc - optind == 2 ? argv[optind + 1] : "";
	if (o.show || o.stop) {
		r = paths_call(
		    &pr, o.stop ? KPROF__PATHS_OP__PATHS_OP_STOP : KPROF__PATHS_OP__PATHS_OP_QUERY,
		    o.top, false, &rep);
		if (r)
			return r;
		render_paths_ex(stdout, rep->paths, o.json, o.events);
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if ((r = paths_call(&pr, KPROF__PATHS_OP__PATHS_OP_START, 1, true, &rep)))
		return r;
	paths_announce(&pr, rep->paths);
	if ((r = paths_wait(&pr, rep)))
		return r;
	if ((r = paths_call(&pr, KPROF__PATHS_OP__PATHS_OP_QUERY, o.top, false, &rep)))
		return r;
	render_paths_ex(stdout, rep->paths, o.json, o.events);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* A folded reply: its lines, or (json) its stacks as JSON; a note on stderr when it was
 * cut short. */
static void folded_print(const Kprof__FoldedReply *f, bool json)
{
	if (json) {
		/* {"stacks":[{"frames":[root,...,leaf],"count":N},...]} from the folded lines. */
		const char *p = f->folded;
		bool first = true;

		fputs("{\"stacks\":[", stdout);
		while (*p) {
			const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
			const char *sp = end;

			while (sp > p && sp[-1] != ' ')
				sp--;
			if (sp > p) {
				printf("%s{\"frames\":[", first ? "" : ",");
				for (const char *q = p, *semi; q < sp - 1; q = semi + 1) {
					semi = memchr(q, ';', sp - 1 - q);
					if (!semi)
						semi = sp - 1;
					if (q != p)
						putchar(',');
					render_json_strn(stdout, q, semi - q);
				}
				/* The count as a number: its digits only. */
				printf("],\"count\":%llu}", strtoull(sp, NULL, 10));
				first = false;
			}
			p = nl ? nl + 1 : end;
		}
		fprintf(stdout,
			"],\"truncated\":%s,\"stacks_omitted\":%" PRIu64
			",\"samples_omitted\":%" PRIu64 "}\n",
			f->truncated ? "true" : "false", f->stacks_omitted, f->samples_omitted);
	} else {
		render_lines(stdout, f->folded);
	}
	if (f->truncated)
		fprintf(stderr,
			"kprofctl: folded text cut at %" PRIu64 " MiB: the %" PRIu64
			" coldest stack%s (%" PRIu64
			" sample%s) left out; kprofctl export has them all\n",
			f->max_bytes >> 20, f->stacks_omitted, render_plural(f->stacks_omitted),
			f->samples_omitted, render_plural(f->samples_omitted));
}

/* folded --lines: the stacks with function:line frames (lines_folded). */
static int folded_lines(uint32_t pid, uint32_t session)
{
	Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	int r;

	rr.pid = pid;
	rr.session = session;
	if ((r = lines_profile(&rr, &rep)))
		return r;

	if (lines_folded(stdout, rep->export->profile) < 0) {
		fputs("kprofctl folded --lines: out of memory\n", stderr);
		r = KPROFCTL_EXIT_ERROR;
	}
	kprof__reply__free_unpacked(rep, NULL);
	return r;
}

/* folded --wall: the CPU stacks (under "[running]", weighted by the period) and the off-CPU
 * ones, in nanoseconds. */
static int folded_wall(Kprof__FoldedRequest *fr)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__Reply *off = NULL, *cpu = NULL;
	int r;

	req.body_case = KPROF__REQUEST__BODY_FOLDED;
	req.folded = fr;
	if ((r = call_offcpu(&req, &fr->off_cpu, &off, &cpu)))
		return r;
	render_offcpu_wall_folded(stdout, cpu->folded->folded,
				  cpu->folded->target ? cpu->folded->target->freq_hz : 0,
				  off->folded->folded);
	kprof__reply__free_unpacked(off, NULL);
	kprof__reply__free_unpacked(cpu, NULL);
	return 0;
}

/* --comm: every line of f's text rooted at the target's comm (as stackcollapse-perf does), in
 * place. 0 or -ENOMEM. */
static int folded_comm(Kprof__FoldedReply *f)
{
	const char *comm = f->target && f->target->comm[0] ? f->target->comm : "?";
	size_t lines = 0, n = strlen(f->folded), k = 0;
	char *out;

	for (const char *p = f->folded; *p; p++)
		lines += *p == '\n';
	out = malloc(n + (lines + 1) * (strlen(comm) + 1) + 1);
	if (!out)
		return -ENOMEM;
	for (const char *p = f->folded; *p;) {
		size_t len = strcspn(p, "\n");

		k += sprintf(out + k, "%s;", comm);
		memcpy(out + k, p, len);
		k += len;
		p += len;
		if (*p == '\n')
			out[k++] = *p++;
	}
	out[k] = '\0';
	free(f->folded);
	f->folded = out;
	return 0;
}

int verb_folded(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	static const struct option opts[] = {
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"comm", no_argument, NULL, 'C'},
	    GROUP_OPTS,
	    RANGE_OPTS,
	    {"off-cpu", no_argument, NULL, 'O'},
	    {"wall", no_argument, NULL, 'w'},
	    LINES_OPT,
	    {},
	};
	Kprof__FoldedRequest fr = KPROF__FOLDED_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false, comm = false, wall = false, lines = false;
	struct verbs_group grp = {0};
	const char *name;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "folded", argc, argv, "", opts)) != -1) {
		if (c == 'S' && verbs_parse_session(optarg, &fr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		fr.off_cpu |= c == 'O';
		wall |= c == 'w';
		if (c == 'C')
			comm = true;
		lines |= c == 'L';
		if (!verbs_group_opt(c, &grp) && verbs_range_opt(c, &fr.since_ns, &fr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (lines && (json || comm || wall || fr.off_cpu || fr.since_ns || fr.until_ns))
		return verbs_usage_error("folded", "--lines goes alone: no --json, --comm, "
						   "--off-cpu, --wall, --since or --until");
	if (wall && (json || fr.off_cpu))
		return verbs_usage_error("folded", "--wall goes alone: no --json or --off-cpu");
	name = verbs_group_name("folded", &grp, argc, fr.session, &r);
	if (r)
		return r;
	if (name && json)
		return verbs_usage_error("folded",
					 "--json is for one PID; use export --format json");
	if (name && (fr.off_cpu || wall))
		return verbs_usage_error("folded", "--off-cpu and --wall are for one PID");
	if (name)
		return verbs_group_export(name, fr.since_ns, fr.until_ns, "folded", "-");
	if ((r = verbs_one_pid("folded", argc, argv, &fr.pid)) || wall)
		return r ? r : folded_wall(&fr);
	if (lines)
		return folded_lines(fr.pid, fr.session);
	req.body_case = KPROF__REQUEST__BODY_FOLDED;
	req.folded = &fr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	if (comm && folded_comm(rep->folded) < 0) {
		kprof__reply__free_unpacked(rep, NULL);
		fputs("kprofctl: out of memory\n", stderr);
		return KPROFCTL_EXIT_ERROR;
	}
	folded_print(rep->folded, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

int verb_top(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"interval", required_argument, NULL, 'i'},
	    {"iterations", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, 'j'},
	    {"full-names", no_argument, NULL, 'W'},
	    {},
	};
	struct top_opts o = {.socket_path = socket_path, .interval_ms = 1000};
	uint32_t pids[64];
	int c, st = -1;

	while ((c = verbs_getopt(&st, "top", argc, argv, "i:n:", opts)) != -1) {
		if (c == 'i' &&
		    verbs_parse_uint("--interval", optarg, 100, 60000, &o.interval_ms) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'n' &&
		    verbs_parse_uint("--iterations", optarg, 1, 1000000, &o.iterations) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			o.json = true;
		if (c == 'W')
			o.full_names = true;
	}
	if (st >= 0)
		return st;
	for (; optind < argc; optind++) {
		if (o.npids == ARRAY_SIZE(pids))
			return verbs_usage_error("top", "at most 64 PIDs");
		if (verbs_parse_uint("PID", argv[optind], 1, 0x7fffffff, &pids[o.npids]) < 0)
			return KPROFCTL_EXIT_USAGE;
		o.npids++;
	}
	o.pids = pids;
	return top_run(&o);
}

int verb_annotate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"top", required_argument, NULL, 't'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    LINES_OPT,
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AnnotateRequest ar = KPROF__ANNOTATE_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	struct lines_src src;
	unsigned top = 10;
	bool json = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "annotate", argc, argv, "", opts)) != -1) {
		if (c == 't' && verbs_parse_uint("--top", optarg, 0, 100000, &top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && verbs_parse_session(optarg, &ar.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		ar.lines |= c == 'L';
	}
	if (st >= 0)
		return st;
	if (argc - optind != 2)
		return verbs_usage_error("annotate", optind >= argc ? "a PID is required"
						     : argc - optind > 2
							 ? "too many arguments"
							 : "a FUNCTION is required");
	if (verbs_parse_uint("PID", argv[optind], 1, 0x7fffffff, &ar.pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (!argv[optind + 1][0])
		return verbs_usage_error("annotate", "FUNCTION is empty");
	ar.function = argv[optind + 1];
	req.body_case = KPROF__REQUEST__BODY_ANNOTATE;
	req.annotate = &ar;
	if ((r = verbs_call(&req, &rep)))
		return r;
	lines_source_open(&src);
	render_annotate_src(stdout, rep->annotate, json, top, ar.lines ? lines_source : NULL, &src);
	lines_source_close(&src);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int hcct_free(Kprof__Reply *rep, Kprof__Reply *lrep, int r);

int verb_hcct(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"phi", required_argument, NULL, 'p'},
	    {"exact", no_argument, NULL, 'x'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"full-names", no_argument, NULL, 'W'},
	    RANGE_OPTS,
	    {"off-cpu", no_argument, NULL, 'O'},
	    LINES_OPT,
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__HcctRequest hr = KPROF__HCCT_REQUEST__INIT;
	Kprof__Reply *rep = NULL, *lrep = NULL;
	bool json = false, full_names = false, lines = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "hcct", argc, argv, "", opts)) != -1) {
		if (c == 'p' && verbs_parse_fraction("--phi", optarg, 0, "(0, 1]", &hr.phi) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && verbs_parse_session(optarg, &hr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'x')
			hr.exact = true;
		hr.off_cpu |= c == 'O';
		if (c == 'j')
			json = true;
		if (c == 'W')
			full_names = true;
		lines |= c == 'L';
		if (verbs_range_opt(c, &hr.since_ns, &hr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if ((r = verbs_one_pid("hcct", argc, argv, &hr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_HCCT;
	req.hcct = &hr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	/* --lines: the call sites, with their lines, of the whole profile (an export). */
	if (lines) {
		Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;

		rr.pid = hr.pid;
		rr.session = hr.session;
		if (!(r = lines_profile(&rr, &lrep)) &&
		    lines_call_sites(rep->hcct, lrep->export->profile) < 0)
			r = KPROFCTL_EXIT_ERROR;
	}
	if (!r)
		render_hcct(stdout, rep->hcct, json, full_names);
	return hcct_free(rep, lrep, r);
}

/* hcct's replies freed, --lines' too (the call sites its nodes borrowed from lrep first): r. */
static int hcct_free(Kprof__Reply *rep, Kprof__Reply *lrep, int r)
{
	for (size_t i = 0; i < rep->hcct->n_nodes; i++) {
		rep->hcct->nodes[i]->call_site = NULL;
		rep->hcct->nodes[i]->n_call_site = 0;
	}
	kprof__reply__free_unpacked(rep, NULL);
	if (lrep)
		kprof__reply__free_unpacked(lrep, NULL);
	return r;
}
