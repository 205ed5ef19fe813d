// SPDX-License-Identifier: GPL-2.0-only
/* verbs_export.c: the verbs that take whole profiles from kprofd: export (to pprof, folded
 * stacks or JSON, with a base side for pprof -diff_base), diff (two exports merged into flat
 * reports, compared function by function) and record (run a command sampled from its start,
 * record.c). The base side's options (--base-pid, --base-since, --base-until) are shared by
 * export and diff, hence one file.
 */
#include "verbs_export.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/merge.h"
#include "client.h"
#include "export.h"
#include "record.h"
#include "render.h"
#include "verbs.h"

#define OPT_BASE 1003
#define OPT_BASE_SINCE 1004
#define OPT_BASE_UNTIL 1005
#define OPT_BASE_PID 1006

/* The other side of a diff (--base-pid, --base-since, --base-until): what is not given is the
 * main side's. */
struct base_sel {
	unsigned pid;
	uint64_t since, until;
	bool set;
};

static int base_opt(int c, struct base_sel *b)
{
	if (c == OPT_BASE_PID) {
		b->set = true;
		return verbs_parse_uint("--base-pid", optarg, 1, 0x7fffffff, &b->pid) < 0
			   ? KPROFCTL_EXIT_USAGE
			   : 0;
	}
	if (c == OPT_BASE_SINCE || c == OPT_BASE_UNTIL)
		b->set = true;
	if (c == OPT_BASE_SINCE && verbs_parse_when("--base-since", optarg, &b->since) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == OPT_BASE_UNTIL && verbs_parse_when("--base-until", optarg, &b->until) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}

/* The base side's export request from the main one's. */
static void base_request(const Kprof__ExportRequest *er, const struct base_sel *b,
			 Kprof__ExportRequest *out)
{
	*out = *er;
	if (b->pid) {
		out->pid = b->pid;
		out->session = 0;
	}
	if (b->since || b->until)
		out->since_ns = b->since, out->until_ns = b->until;
}

static int export_one(const Kprof__ExportRequest *er, Kprof__Reply **rep)
{
	Kprof__Request req = KPROF__REQUEST__INIT;

	req.body_case = KPROF__REQUEST__BODY_EXPORT;
	req.export = (Kprof__ExportRequest *)er;
	return verbs_call(&req, rep);
}

/* The options that do not depend on the target. 0, or an exit code. */
static int export_check(const char *format, const char *out, const char *base_out,
			const struct base_sel *base)
{
	if (strcmp(format, "pprof") && strcmp(format, "folded") && strcmp(format, "json"))
		return verbs_usage_error("export", "--format must be pprof, folded or json");
	if (!out)
		return verbs_usage_error("export", "-o FILE is required (- for stdout)");
	if (!base_out != !base->set)
		return verbs_usage_error("export",
					 base_out ? "--base FILE needs --base-since, --base-until "
						    "or --base-pid: which profile is the base"
						  : "--base-since/--base-until/--base-pid go "
						    "with --base FILE");
	return 0;
}

/* As gzip does: binary data on a terminal helps nobody and may upset it. */
static int export_tty_check(const char *format, const char *out)
{
	if (!strcmp(out, "-") && !strcmp(format, "pprof") && isatty(STDOUT_FILENO)) {
		fputs("kprofctl export: compressed data not written to a terminal; use -o FILE, "
		      "pipe it, or --force\n",
		      stderr);
		return KPROFCTL_EXIT_USAGE;
	}
	return 0;
}

/* Export one profile to path. 0, or an exit code. */
static int export_write(const Kprof__ExportRequest *er, const char *format, const char *path)
{
	Kprof__Reply *rep = NULL;
	int r;

	if ((r = export_one(er, &rep)))
		return r;
	if (er->off_cpu && !rep->export->off_cpu) {
		fputs("kprofctl: kprofd sent no off-CPU profile\n", stderr);
		kprof__reply__free_unpacked(rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	r = export_offcpu(rep->export->profile, er->off_cpu ? rep->export->off_cpu : NULL, format,
			  path) < 0
		? KPROFCTL_EXIT_ERROR
		: 0;
	kprof__reply__free_unpacked(rep, NULL);
	return r;
}

int verb_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"force", no_argument, NULL, 'F'},
	    {"session", required_argument, NULL, 'S'},
	    {"base", required_argument, NULL, OPT_BASE},
	    {"base-since", required_argument, NULL, OPT_BASE_SINCE},
	    {"base-until", required_argument, NULL, OPT_BASE_UNTIL},
	    {"base-pid", required_argument, NULL, OPT_BASE_PID},
	    {"off-cpu", no_argument, NULL, 'O'},
	    {"no-lines", no_argument, NULL, 'L'},
	    GROUP_OPTS,
	    RANGE_OPTS,
	    {},
	};
	const char *name, *base_out = NULL;
	struct verbs_group grp = {0};
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT, ber;
	const char *out = NULL, *format = "pprof";
	struct base_sel base = {0};
	bool force = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "export", argc, argv, "o:f:", opts)) != -1) {
		er.off_cpu |= c == 'O';
		export_lines &= c != 'L'; /* --no-lines */
		if (c == 'o')
			out = optarg;
		else if (c == 'f')
			format = optarg;
		else if (c == 'F')
			force = true;
		else if (c == 'S' && verbs_parse_session(optarg, &er.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		else if (verbs_group_opt(c, &grp))
			continue;
		else if (c == OPT_BASE)
			base_out = optarg;
		else if (verbs_range_opt(c, &er.since_ns, &er.until_ns) || base_opt(c, &base))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if ((r = export_check(format, out, base_out, &base)))
		return r;
	name = verbs_group_name("export", &grp, argc, er.session, &r);
	if (r)
		return r;
	if (name && base_out)
		return verbs_usage_error("export", "--base is for one PID, not --cgroup/--unit");
	if (er.off_cpu && (name || base_out))
		return verbs_usage_error("export", "--off-cpu is for one PID, without --base");
	if (!name && (r = verbs_one_pid("export", argc, argv, &er.pid)))
		return r;
	if (!force && (r = export_tty_check(format, out)))
		return r;
	er.lines = export_lines && !strcmp(format, "pprof");
	if (name)
		return verbs_group_export(name, er.since_ns, er.until_ns, format, out);
	if (base_out) { /* the base first: a bad base range leaves no new file behind */
		base_request(&er, &base, &ber);
		if ((r = export_write(&ber, format, base_out)))
			return r;
	}
	return export_write(&er, format, out);
}

/* Self share of a function in a merged report, by (function, module); -1 if absent. A JIT
 * module is matched without its pid (perf-PID.map): the same method in two processes. */
static double share_of(const Kprof__ReportReply *r, const Kprof__FlatEntry *e)
{
	char ka[512], kb[512];
	const char *key = merge_module_key(e->module, ka, sizeof(ka));

	for (size_t i = 0; i < r->n_entries; i++)
		if (!strcmp(r->entries[i]->function, e->function) &&
		    !strcmp(merge_module_key(r->entries[i]->module, kb, sizeof(kb)), key))
			return r->total_samples ? 100.0 * r->entries[i]->self / r->total_samples
						: 0;
	return -1;
}

struct drow {
	const Kprof__FlatEntry *e;
	double base, now;
};

static int drow_cmp(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double dx = fabs(x->now - x->base), dy = fabs(y->now - y->base);

	return dx > dy ? -1 : dx < dy ? 1 : strcmp(x->e->function, y->e->function);
}

static void print_diff(const Kprof__ReportReply *b, const Kprof__ReportReply *n, unsigned top,
		       bool json)
{
	size_t cap = b->n_entries + n->n_entries, k = 0;
	_cleanup_free_ struct drow *v = calloc(cap + 1, sizeof(*v));

	if (!v)
		return;
	for (int side = 0; side < 2; side++) {
		const Kprof__ReportReply *r = side ? b : n;

		for (size_t i = 0; i < r->n_entries; i++) {
			const Kprof__FlatEntry *e = r->entries[i];

			if (side && share_of(n, e) >= 0)
				continue; /* listed from the new side */
			v[k].e = e;
			v[k].now = fmax(share_of(n, e), 0);
			v[k].base = fmax(share_of(b, e), 0);
			k++;
		}
	}
	qsort(v, k, sizeof(*v), drow_cmp);
	if (top && top < k)
		k = top;
	if (json) {
		printf("{\"base_samples\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"functions\":[",
		       b->total_samples, n->total_samples);
		for (size_t i = 0; i < k; i++) {
			printf("%s{\"function\":", i ? "," : "");
			render_json_string(stdout, v[i].e->function);
			fputs(",\"module\":", stdout);
			render_json_string(stdout, v[i].e->module);
			printf(",\"base_self_pct\":%.2f,\"self_pct\":%.2f,\"delta_pct\":%.2f}",
			       v[i].base, v[i].now, v[i].now - v[i].base);
		}
		puts("]}");
		return;
	}
	printf("base: %" PRIu64 " samples, new: %" PRIu64 " samples; self %% of each side\n",
	       b->total_samples, n->total_samples);
	printf("%8s %8s %8s  %s\n", "BASE%", "NEW%", "DELTA", "FUNCTION (MODULE)");
	for (size_t i = 0; i < k; i++) {
		printf("%8.2f %8.2f %+8.2f  ", v[i].base, v[i].now, v[i].now - v[i].base);
		render_text(stdout, v[i].e->function);
		fputs(" (", stdout);
		render_text(stdout, v[i].e->module);
		puts(")");
	}
}

int verb_diff(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"top", required_argument, NULL, 'n'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"base-since", required_argument, NULL, OPT_BASE_SINCE},
	    {"base-until", required_argument, NULL, OPT_BASE_UNTIL},
	    {"base-pid", required_argument, NULL, OPT_BASE_PID},
	    RANGE_OPTS,
	    {},
	};
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT, ber;
	Kprof__Reply *brep = NULL, *nrep = NULL;
	Kprof__ReportReply *br = NULL, *nr = NULL;
	struct base_sel base = {0};
	unsigned top = 20;
	bool json = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "diff", argc, argv, "n:", opts)) != -1) {
		if (c == 'n' && verbs_parse_uint("--top", optarg, 0, 100000000, &top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && verbs_parse_session(optarg, &er.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (verbs_range_opt(c, &er.since_ns, &er.until_ns) || base_opt(c, &base))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (!base.set)
		return verbs_usage_error("diff",
					 "the base is required: --base-since/--base-until (another "
					 "range) or --base-pid (another process)");
	if ((r = verbs_one_pid("diff", argc, argv, &er.pid)))
		return r;
	base_request(&er, &base, &ber);
	if ((r = export_one(&ber, &brep)) || (r = export_one(&er, &nrep)))
		goto out;
	if (merge_report(brep->export->profile, 0, &br) < 0 ||
	    merge_report(nrep->export->profile, 0, &nr) < 0) {
		fputs("kprofctl: out of memory\n", stderr);
		r = KPROFCTL_EXIT_ERROR;
		goto out;
	}
	print_diff(br, nr, top, json);
out:
	merge_report_free(br);
	merge_report_free(nr);
	if (brep)
		kprof__reply__free_unpacked(brep, NULL);
	if (nrep)
		kprof__reply__free_unpacked(nrep, NULL);
	return r;
}

int verb_record(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"freq", required_argument, NULL, 'F'},
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"children", no_argument, NULL, 'c'},
	    {"no-children", no_argument, NULL, 'C'},
	    {"no-jvm-map", no_argument, NULL, 'J'},
	    {"top", required_argument, NULL, 'n'},
	    {"force", no_argument, NULL, 'B'},
	    {"full-names", no_argument, NULL, 'N'},
	    {"off-cpu", no_argument, NULL, 'O'},
	    {},
	};
	/* Children followed by default, as perf record inherits (--no-inherit). */
	struct record_opts o = {.call = verbs_call, .format = "pprof", .top = 20, .children = true};
	bool force = false;
	int c, st = -1;

	/* '+': options end at the command's name, so its own options stay its own. */
	while ((c = verbs_getopt(&st, "record", argc, argv, "+F:o:f:", opts)) != -1) {
		o.off_cpu |= c == 'O';
		if (c == 'F' && verbs_parse_uint("--freq", optarg, 1, 4999, &o.freq) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'n' && verbs_parse_uint("--top", optarg, 0, 100000000, &o.top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'o')
			o.output = optarg;
		else if (c == 'f')
			o.format = optarg;
		else if (c == 'c')
			o.children = true;
		else if (c == 'C')
			o.children = false;
		else if (c == 'J')
			o.no_jvm_map = true;
		else if (c == 'B')
			force = true;
		else if (c == 'N')
			o.full_names = true;
	}
	if (st >= 0)
		return st;
	if (strcmp(o.format, "pprof") && strcmp(o.format, "folded") && strcmp(o.format, "json") &&
	    strcmp(o.format, "report"))
		return verbs_usage_error("record",
					 "--format must be pprof, folded, json or report");
	if (optind >= argc)
		return verbs_usage_error(
		    "record", "a command to run is required (kprofctl record -- CMD ...)");
	if (!o.output)
		o.output = !strcmp(o.format, "pprof")	 ? "kprof.pb.gz"
			   : !strcmp(o.format, "folded") ? "kprof.folded"
			   : !strcmp(o.format, "json")	 ? "kprof.json"
							 : "-";
	if (!strcmp(o.output, "-") && !strcmp(o.format, "pprof") && !force && isatty(STDOUT_FILENO))
		return verbs_usage_error("record",
					 "compressed data not written to a terminal; use -o "
					 "FILE, pipe it, or --force");
	return record_run(&o, argv + optind);
}
