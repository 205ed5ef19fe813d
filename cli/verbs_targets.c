// SPDX-License-Identifier: GPL-2.0-only
/* verbs_targets.c: the verbs that choose what kprofd samples and show it: attach and detach (a
 * process, a cgroup or unit, system-wide mode), watch (rules kprofd attaches by), list and
 * status. Apart from the verbs that read profiles (verbs_profile.c) and write them
 * (verbs_export.c); each verb parses its options with verbs.c's helpers, sends one request and
 * renders the reply (render.c, render_targets.c).
 */
#include "verbs_targets.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "render.h"
#include "render_targets.h"
#include "verbs.h"

/* attach's options into ar and *json. Returns -1 to go on, else the exit code. */
/* The options with a value to check (and --calls). 0, or an exit code. */
static int attach_value_opt(int c, Kprof__AttachRequest *ar)
{
	if (c == 'F' && verbs_parse_uint("--freq", optarg, 1, 4999, &ar->freq_hz) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == 'd' &&
	    verbs_parse_seconds("--duration", optarg, 1, 86400 * 365, &ar->duration_sec) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == 'e' && verbs_parse_fraction("--eps", optarg, 1e-7, "[1e-7, 1]", &ar->eps) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == 'M') /* exact mode's budget */
		return verbs_parse_slowdown(optarg, &ar->max_slowdown) < 0 ? KPROFCTL_EXIT_USAGE : 0;
	if (c == 'c') {
		ar->calls = true;
		if (optarg && !optarg[0])
			return verbs_usage_error("attach", "--calls= needs function names");
		if (optarg)
			ar->calls_functions = optarg;
	}
	if (c == 'b' && verbs_parse_uint("--burst", optarg, 1, 3600000, &ar->burst_ms) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == 'P' && verbs_parse_uint("--period", optarg, 2, 3600000, &ar->period_ms) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}

static int attach_options(int argc, char **argv, Kprof__AttachRequest *ar, bool *json)
{
	static const struct option opts[] = {
	    {"freq", required_argument, NULL, 'F'},
	    {"duration", required_argument, NULL, 'd'},
	    {"eps", required_argument, NULL, 'e'},
	    {"hcct-kernel", no_argument, NULL, 'k'},
	    {"calls", optional_argument, NULL, 'c'},
	    {"force", no_argument, NULL, 'f'},
	    {"burst", required_argument, NULL, 'b'},
	    {"period", required_argument, NULL, 'P'},
	    {"json", no_argument, NULL, 'j'},
	    {"no-jvm-map", no_argument, NULL, 'J'},
	    {"children", no_argument, NULL, 'C'},
	    {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'},
	    {"all", no_argument, NULL, 'A'},
	    {"off-cpu", no_argument, NULL, 'O'},
	    {"max-slowdown", required_argument, NULL, 'M'},
	    {"pid", required_argument, NULL, 'p'},
	    {},
	};
	int c, r, st = -1;

	/* -p PID, perf's spelling, as well as the PID alone. */
	while ((c = verbs_getopt(&st, "attach", argc, argv, "F:d:p:", opts)) != -1) {
		ar->off_cpu |= c == 'O';
		if ((r = attach_value_opt(c, ar)))
			return r;
		if (c == 'p' && verbs_parse_uint("-p", optarg, 1, 0x7fffffff, &ar->pid) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'k')
			ar->hcct_kernel = true;
		if (c == 'f')
			ar->force = true;
		if (c == 'j')
			*json = true;
		if (c == 'J')
			ar->no_jvm_map = true;
		if (c == 'C')
			ar->children = true;
		if (c == 'G')
			ar->cgroup = optarg;
		if (c == 'U')
			ar->unit = (char *)verbs_unit_name(optarg);
		if (c == 'A')
			ar->all = true;
	}
	return st;
}

/* The options of attach that go together, and its PID (into ar->pid). Returns 0 or the exit
 * code. */
static int attach_check(int argc, char **argv, Kprof__AttachRequest *ar)
{
	if (ar->all &&
	    (optind < argc || ar->pid || ar->cgroup[0] || ar->unit[0] || ar->children || ar->calls ||
	     ar->duration_sec || ar->eps || ar->hcct_kernel || ar->no_jvm_map))
		return verbs_usage_error("attach",
					 "--all takes only --freq, --off-cpu and --json: no PID, "
					 "--cgroup, --unit, --children, --calls or --duration");
	if ((ar->burst_ms || ar->period_ms || ar->force || ar->max_slowdown) && !ar->calls)
		return verbs_usage_error("attach",
					 "--burst, --period, --force and --max-slowdown go with --calls");
	if (!ar->burst_ms != !ar->period_ms || (ar->burst_ms && ar->burst_ms >= ar->period_ms))
		return verbs_usage_error("attach",
					 "--burst MS needs --period MS, longer than the burst");
	if (ar->cgroup[0] || ar->unit[0]) {
		if (ar->cgroup[0] && ar->unit[0])
			return verbs_usage_error("attach", "--cgroup or --unit, not both");
		if (optind < argc || ar->pid)
			return verbs_usage_error("attach", "--cgroup and --unit take no PID");
		if (ar->calls || ar->duration_sec)
			return verbs_usage_error("attach", "--calls and --duration need a PID");
		return 0;
	}
	if (ar->pid) { /* -p PID */
		if (ar->all || optind < argc)
			return verbs_usage_error("attach", "-p PID or a PID, not both");
		return 0;
	}
	if (!ar->all)
		return verbs_one_pid("attach", argc, argv, &ar->pid);
	return 0;
}

/* attach's reply: system-wide mode on, a cgroup or unit watched, or the target. */
static void attach_print(const Kprof__AttachReply *a, bool json)
{
	if (a->system_wide) {
		const Kprof__SystemWide *w = a->system_wide;

		if (json)
			printf("{\"system_wide\":true,\"freq_hz\":%u,\"cpus\":%u,\"off_cpu\":%s}\n",
			       w->freq_hz, w->cpus, w->off_cpu ? "true" : "false");
		else
			printf("system-wide sampling on: %u Hz on %u CPUs; every process that gets "
			       "a sample%s becomes a target%s (kprofctl list, status; detach --all "
			       "stops it)\n",
			       w->freq_hz, w->cpus, w->off_cpu ? " or leaves a CPU" : "",
			       w->off_cpu ? " with its off-CPU time" : "");
	} else if (!a->target) { /* a cgroup or unit watched */
		if (json) {
			fputs("{\"cgroup\":", stdout);
			render_json_string(stdout, a->cgroup);
			fputs(",\"path\":", stdout);
			render_json_string(stdout, a->cgroup_path);
			printf(",\"attached\":%u,\"refused\":%u}\n", a->attached, a->refused);
		} else {
			printf("watching ");
			render_text(stdout, a->cgroup);
			printf(" (cgroup ");
			render_text(stdout, a->cgroup_path);
			printf("): %u process%s attached", a->attached,
			       a->attached == 1 ? "" : "es");
			if (a->refused)
				printf(", %u not (another user's, a limit, or gone)", a->refused);
			printf("; processes that enter it are attached too\n");
		}
	} else if (json) {
		render_target_json(stdout, a->target);
		fputc('\n', stdout);
	} else {
		printf("attached: ");
		render_target_line(stdout, a->target);
	}
}

int verb_attach(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AttachRequest ar = KPROF__ATTACH_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false;
	int r;

	if ((r = attach_options(argc, argv, &ar, &json)) >= 0)
		return r;
	if ((r = attach_check(argc, argv, &ar)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	if ((r = verbs_call(&req, &rep)))
		return r;
	attach_print(rep->attach, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* A PID, --cgroup, --unit or --all, exactly one. 0, or an exit code. */
static int detach_check(int argc, char **argv, Kprof__DetachRequest *dr)
{
	int r;

	if (dr->all) {
		if (dr->cgroup[0] || dr->unit[0] || optind < argc)
			return verbs_usage_error("detach",
						 "--all stands alone: no PID, --cgroup or --unit");
	} else if (dr->cgroup[0] || dr->unit[0]) {
		if ((dr->cgroup[0] && dr->unit[0]) || optind < argc)
			return verbs_usage_error(
			    "detach", "a PID, --cgroup PATH or --unit NAME: one of them");
	} else if ((r = verbs_one_pid("detach", argc, argv, &dr->pid))) {
		return r;
	}
	return 0;
}

static void detach_print(const Kprof__Reply *rep, uint32_t pid, bool json)
{
	if (rep->body_case == KPROF__REPLY__BODY_DETACH && rep->detach->all) {
		if (json)
			printf("{\"system_wide\":false,\"detached\":%u}\n", rep->detach->detached);
		else
			printf("system-wide sampling off: %u process%s detached (profiles kept: "
			       "kprofctl list --all)\n",
			       rep->detach->detached, rep->detach->detached == 1 ? "" : "es");
	} else if (rep->body_case == KPROF__REPLY__BODY_DETACH) {
		if (json) {
			fputs("{\"cgroup\":", stdout);
			render_json_string(stdout, rep->detach->cgroup);
			printf(",\"detached\":%u}\n", rep->detach->detached);
		} else {
			printf("no longer watching ");
			render_text(stdout, rep->detach->cgroup);
			printf(": %u process%s detached (profiles kept)\n", rep->detach->detached,
			       rep->detach->detached == 1 ? "" : "es");
		}
	} else if (json)
		printf("{\"pid\":%u,\"detached\":true}\n", pid);
	else
		printf("detached %u (profile kept: kprofctl report %u)\n", pid, pid);
}

int verb_detach(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__DetachRequest dr = KPROF__DETACH_REQUEST__INIT;
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'},
	    {"all", no_argument, NULL, 'A'},
	    {},
	};
	Kprof__Reply *rep = NULL;
	bool json = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "detach", argc, argv, "", opts)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'G')
			dr.cgroup = optarg;
		else if (c == 'U')
			dr.unit = (char *)verbs_unit_name(optarg);
		else if (c == 'A')
			dr.all = true;
	}
	if (st >= 0)
		return st;
	if ((r = detach_check(argc, argv, &dr)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_DETACH;
	req.detach = &dr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	detach_print(rep, dr.pid, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* The rules of a watch reply, and the automatic targets' bound. */
static void print_rules(const Kprof__WatchReply *w, bool json)
{
	if (json) {
		printf("{\"auto_targets\":%u,\"max_auto_targets\":%u,\"auto_refused\":%llu,"
		       "\"added\":%u,\"attached\":%u,\"refused\":%u,\"detached\":%u,\"rules\":[",
		       w->auto_targets, w->max_auto_targets, (unsigned long long)w->auto_refused,
		       w->added, w->attached, w->refused, w->detached);
		for (size_t i = 0; i < w->n_rules; i++) {
			const Kprof__WatchRule *r = w->rules[i];

			printf("%s{\"id\":%u,\"rule\":", i ? "," : "", r->id);
			render_json_string(stdout, r->rule);
			printf(",\"uid\":%u,\"config\":%s,\"attached\":%u,\"refused\":%u,"
			       "\"targets\":%u,\"since_ns\":%llu,\"state\":",
			       r->uid, r->config ? "true" : "false", r->attached, r->refused,
			       r->targets, (unsigned long long)r->since_ns);
			render_json_string(stdout, r->state);
			fputc('}', stdout);
		}
		fputs("]}\n", stdout);
		return;
	}
	printf("%4s %-40s %6s %8s %8s %7s  %s\n", "ID", "RULE", "UID", "ATTACHED", "REFUSED",
	       "TARGETS", "STATE");
	for (size_t i = 0; i < w->n_rules; i++) {
		const Kprof__WatchRule *r = w->rules[i];

		printf("%4u ", r->id);
		render_text(stdout, r->rule);
		printf("%*s %6u %8u %8u %7u  ",
		       (int)(strlen(r->rule) < 40 ? 40 - strlen(r->rule) : 0), "", r->uid,
		       r->attached, r->refused, r->targets);
		render_text(stdout, r->state[0] ? r->state : "watching");
		puts(r->config ? " (kprofd.conf)" : "");
	}
	printf("automatic targets: %u of %u (limits.max_auto_targets); %llu refused by the "
	       "bound\n",
	       w->auto_targets, w->max_auto_targets, (unsigned long long)w->auto_refused);
}

/* watch's options: a rule's kind and value (--comm, --exe, ...) and settings. */
struct watch_opts {
	const char *kind, *value;
	unsigned freq;
	bool json, nojvm, children, off_cpu;
};

/* watch's options into o. Returns -1 to go on, else the exit code. */
static int watch_options(int argc, char **argv, struct watch_opts *o)
{
	static const struct option opts[] = {
	    {"comm", required_argument, NULL, 'c'}, {"exe", required_argument, NULL, 'x'},
	    {"uid", required_argument, NULL, 'u'},  {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'}, {"freq", required_argument, NULL, 'F'},
	    {"no-jvm-map", no_argument, NULL, 'J'}, {"children", no_argument, NULL, 'C'},
	    {"json", no_argument, NULL, 'j'},	    {"off-cpu", no_argument, NULL, 'O'},
	    {},
	};
	int c, st = -1;

	while ((c = verbs_getopt(&st, "watch", argc, argv, "F:", opts)) != -1) {
		o->off_cpu |= c == 'O';
		const char *k = c == 'c'   ? "comm"
				: c == 'x' ? "exe"
				: c == 'u' ? "uid"
				: c == 'G' ? "cgroup"
				: c == 'U' ? "unit"
					   : NULL;

		if (k) {
			if (o->kind)
				return verbs_usage_error("watch",
							 "one of --comm, --exe, --uid, --cgroup, "
							 "--unit");
			o->kind = k;
			o->value = optarg;
		}
		if (c == 'F' && verbs_parse_uint("--freq", optarg, 1, 4999, &o->freq) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'J')
			o->nojvm = true;
		if (c == 'C')
			o->children = true;
		if (c == 'j')
			o->json = true;
	}
	return st;
}

/* `watch add`: the rule to send, from a RULE argument or the options, into rule (size bytes).
 * Returns 0 or the exit code. */
static int watch_add_rule(const struct watch_opts *o, int argc, char **argv, char *rule,
			  size_t size)
{
	const char *value = o->value;
	char uidbuf[16];
	int n;

	if (o->kind && optind < argc)
		return verbs_usage_error("watch", "a RULE or --comm/--exe/--uid/--cgroup/--unit, "
						  "not both");
	if (!o->kind && (optind != argc - 1 || !argv[optind][0]))
		return verbs_usage_error("watch", "add takes one RULE (quoted) or --comm NAME, "
						  "--exe PATH, --uid USER, --cgroup PATH, "
						  "--unit NAME");
	if (o->kind && !strcmp(o->kind, "uid") && !(value[0] >= '0' && value[0] <= '9')) {
		struct passwd *pw = getpwnam(value);

		if (!pw) {
			fprintf(stderr, "kprofctl watch: no such user: %s\n", value);
			return KPROFCTL_EXIT_USAGE;
		}
		snprintf(uidbuf, sizeof(uidbuf), "%u", (unsigned)pw->pw_uid);
		value = uidbuf;
	}
	if (o->kind)
		n = snprintf(rule, size, "%s:%s", o->kind, value);
	else
		n = snprintf(rule, size, "%s", argv[optind]);
	if (n >= 0 && o->freq && (size_t)n < size)
		n += snprintf(rule + n, size - n, " freq=%u", o->freq);
	if (n >= 0 && o->nojvm && (size_t)n < size)
		n += snprintf(rule + n, size - n, " jvm=off");
	if (n >= 0 && o->children && (size_t)n < size)
		n += snprintf(rule + n, size - n, " children=on");
	if (n >= 0 && o->off_cpu && (size_t)n < size)
		n += snprintf(rule + n, size - n, " offcpu=on");
	if (n < 0 || (size_t)n >= size)
		return verbs_usage_error("watch", "the rule is too long");
	return 0;
}

/* kprofctl watch add|list|remove. */
int verb_watch(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__WatchRequest wr = KPROF__WATCH_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	struct watch_opts o = {0};
	const char *sub;
	char rule[1024];
	int r;

	if ((r = watch_options(argc, argv, &o)) >= 0)
		return r;
	if (optind >= argc)
		return verbs_usage_error("watch", "add, list or remove");
	sub = argv[optind++];
	if (!strcmp(sub, "add")) {
		if ((r = watch_add_rule(&o, argc, argv, rule, sizeof(rule))))
			return r;
		wr.add = rule;
	} else if (!strcmp(sub, "remove")) {
		if (o.kind || o.freq || o.nojvm || o.children || o.off_cpu || optind != argc - 1 ||
		    !argv[optind][0])
			return verbs_usage_error("watch", "remove takes one rule ID or RULE");
		wr.remove = argv[optind];
	} else if (!strcmp(sub, "list")) {
		if (o.kind || o.freq || o.nojvm || o.children || o.off_cpu || optind != argc)
			return verbs_usage_error("watch", "list takes no argument but --json");
	} else {
		return verbs_usage_error("watch", "add, list or remove");
	}
	req.body_case = KPROF__REQUEST__BODY_WATCH;
	req.watch = &wr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	if (rep->body_case != KPROF__REPLY__BODY_WATCH) {
		kprof__reply__free_unpacked(rep, NULL);
		fputs("kprofctl: unexpected reply (an older kprofd?)\n", stderr);
		return KPROFCTL_EXIT_ERROR;
	}
	if (!o.json && wr.add[0])
		printf("rule %u: %u process%s attached now%s%u refused; matching processes are "
		       "attached as they start\n",
		       rep->watch->added, rep->watch->attached,
		       rep->watch->attached == 1 ? "" : "es", ", ", rep->watch->refused);
	else if (!o.json && wr.remove[0])
		printf("rule removed: %u process%s detached (profiles kept)\n",
		       rep->watch->detached, rep->watch->detached == 1 ? "" : "es");
	else
		print_rules(rep->watch, o.json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* Verbs without arguments besides --json. Returns -1 to go on, else the exit code. */
static int simple_verb(const char *name, int argc, char **argv, bool *json)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {}};
	int c, st = -1;

	while ((c = verbs_getopt(&st, name, argc, argv, "", opts)) != -1)
		*json = true;
	if (st >= 0)
		return st;
	if (optind != argc)
		return verbs_usage_error(name, "too many arguments");
	return -1;
}

int verb_list(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"json", no_argument, NULL, 'j'},
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ListRequest lr = KPROF__LIST_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false;
	int c, r, st = -1;

	while ((c = verbs_getopt(&st, "list", argc, argv, "a", opts)) != -1) {
		if (c == 'a')
			lr.all = true;
		else if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if (optind != argc)
		return verbs_usage_error("list", "too many arguments");
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	render_list(stdout, rep->list, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

int verb_status(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__StatusRequest sr = KPROF__STATUS_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false;
	int r;

	if ((r = simple_verb("status", argc, argv, &json)) >= 0)
		return r;
	req.body_case = KPROF__REQUEST__BODY_STATUS;
	req.status = &sr;
	if ((r = verbs_call(&req, &rep)))
		return r;
	render_status(stdout, rep->status, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}
