// SPDX-License-Identifier: GPL-2.0-only
/* kprofctl.c: the command line of kprof: one verb, one request to kprofd, one rendered reply.
 *
 * A table maps each verb to its handler and usage line; every handler parses its own options
 * with verb_getopt (getopt_long, plus -h/--help and errors that name the verb and the option).
 * A verb's help is its section of kprofctl(1), turned into text at build time by
 * cli/manhelp.py (manhelp.h), so `kprofctl VERB --help` and the man page say the same. Exit
 * codes: 0 ok, 1 kprofd refused or failed the request (its message is printed), 2 bad command
 * line, 3 kprofd not reachable.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <pwd.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/when.h"
#include "cli/manhelp.h"
#include "client.h"
#include "export.h"
#include "group.h"
#include "record.h"
#include "render.h"
#include "render_annotate.h"
#include "render_paths.h"
#include "render_profile.h"
#include "render_spp.h"
#include "render_targets.h"
#include "top.h"
#include "drift.h"

#define DEFAULT_SOCKET "/run/kprofd/kprofd.sock"

static const char *socket_path = DEFAULT_SOCKET;
/* The verb being run, for messages ("kprofctl VERB: ..."). */
static const char *verb_name;

struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;
	const char *help;
};

/* A bad command line: "kprofctl VERB: MESSAGE (see kprofctl VERB --help)" on stderr. Returns
 * the exit code. */
__attribute__((format(printf, 1, 2))) static int usage_errorf(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kprofctl%s%s: ", verb_name ? " " : "", verb_name ? verb_name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see kprofctl%s%s --help)\n", verb_name ? " " : "",
		verb_name ? verb_name : "");
	return KPROFCTL_EXIT_USAGE;
}

static int usage_error(const char *verb, const char *msg)
{
	verb_name = verb;
	return usage_errorf("%s", msg);
}

static int parse_uint(const char *what, const char *s, unsigned long min, unsigned long max,
		      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		usage_errorf("%s: '%s' is not a number in %lu-%lu", what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A number in (0, 1] and at least min; range says which numbers these are, for the message. */
static int parse_fraction(const char *what, const char *s, double min, const char *range,
			  double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 1 && v >= min)) {
		usage_errorf("%s: '%s' is not a number in %s", what, s, range);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Print verb's help (its section of kprofctl(1)) on stdout. Returns the exit code. */
static int verb_help(const char *verb)
{
	for (size_t i = 0; i < ARRAY_SIZE(manhelp); i++) {
		if (!strcmp(manhelp[i].verb, verb)) {
			fputs(manhelp[i].text, stdout);
			return fflush(stdout) ? KPROFCTL_EXIT_ERROR : 0;
		}
	}
	fprintf(stderr, "kprofctl %s: no help in this build (see kprofctl(1))\n", verb);
	return KPROFCTL_EXIT_ERROR;
}

/* getopt_long's '?' or ':' (opterr is 0, so getopt printed nothing): which option, and why. */
static int option_error(int c, char **argv, const struct option *opts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	size_t len = strcspn(arg, "=");
	char name[64], which[256] = "";
	int n = 0;

	if (!strncmp(arg, "--", 2) && arg[2] && (c == ':' || !optopt || arg[len])) {
		snprintf(name, sizeof(name), "%.*s", (int)len, arg);
		if (c == ':')
			return usage_errorf("option '%s' needs an argument", name);
		if (optopt)
			return usage_errorf("option '%s' takes no argument", name);
		for (const struct option *o = opts; o->name; o++) {
			if (strncmp(o->name, name + 2, len - 2))
				continue;
			snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s--%s",
				 n++ ? ", " : "", o->name);
		}
		if (n > 1)
			return usage_errorf("option '%s' is ambiguous (%s)", name, which);
		return usage_errorf("unknown option '%s'", name);
	}
	if (c == ':')
		return usage_errorf("option '-%c' needs an argument", optopt);
	return usage_errorf("unknown option '-%c'", optopt);
}

/* getopt_long over a verb's options, and -h/--help besides them. Returns the next option, or
 * -1 when there is none left or the verb is to stop: *status is then the exit code, 0 after
 * printing the verb's help, KPROFCTL_EXIT_USAGE after an unknown option or a missing argument
 * (both reported). */
static int verb_getopt(int *status, const char *verb, int argc, char **argv, const char *shortopts,
		       const struct option *opts)
{
	struct option all[16];
	char so[32];
	size_t n = 0;
	int c;

	verb_name = verb;
	for (; opts[n].name; n++) {
		assert(n < ARRAY_SIZE(all) - 2);
		all[n] = opts[n];
	}
	all[n++] = (struct option){"help", no_argument, NULL, 'h'};
	all[n] = (struct option){};
	/* ':' first: a missing argument is ':', not '?'. */
	snprintf(so, sizeof(so), ":%sh", shortopts);
	c = getopt_long(argc, argv, so, all, NULL);
	if (c == 'h')
		*status = verb_help(verb);
	else if (c == '?' || c == ':')
		*status = option_error(c, argv, all);
	else
		return c;
	return -1;
}

/* --session N: which kept session of the pid (kprofctl list --all numbers them from 1). */
static int parse_session(const char *s, uint32_t *out)
{
	unsigned v;

	if (parse_uint("--session", s, 1, 0x7fffffff, &v) < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Send req and print the daemon's error if there is one. Returns the exit code; *ret is the
 * reply on success. */
/* Seconds to wait, retrying, while kprofd refuses uprobes because the kernel is still removing
 * earlier ones in the same code (it refuses rather than stall; a removal takes about a second
 * per 32 probes). */
#define BUSY_RETRY_SEC 60

static bool removal_busy(const Kprof__Reply *rep)
{
	return rep->error == -EBUSY && rep->message && strstr(rep->message, "still being removed");
}

static int call(const Kprof__Request *req, Kprof__Reply **ret)
{
	_cleanup_close_ int fd = client_connect(socket_path);
	Kprof__Reply *rep = NULL;
	int err;
	static unsigned waited_ms;

	if (fd < 0) {
		fprintf(stderr, "kprofctl: cannot connect to kprofd at %s: %s%s\n", socket_path,
			strerror(-fd),
			fd == -ENOENT || fd == -ECONNREFUSED ? " (is kprofd running?)"
			: fd == -EACCES			     ? " (no permission to use the socket)"
							     : "");
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	err = client_call(fd, req, &rep);
	if (err < 0) {
		fprintf(stderr, "kprofctl: talking to kprofd at %s: %s\n", socket_path,
			err == -EBADMSG ? "malformed reply" : strerror(-err));
		return KPROFCTL_EXIT_NO_DAEMON;
	}
	if (removal_busy(rep) && waited_ms < BUSY_RETRY_SEC * 1000) {
		if (!waited_ms)
			fputs("kprofctl: waiting for the kernel to remove earlier uprobes in the "
			      "same "
			      "code...\n",
			      stderr);
		kprof__reply__free_unpacked(rep, NULL);
		close(TAKE_FD(fd));
		usleep(250000);
		waited_ms += 250;
		return call(req, ret);
	}
	if (rep->error) {
		/* The message may quote names from the target: sanitized. */
		fputs("kprofctl: ", stderr);
		render_text(stderr,
			    rep->message && *rep->message ? rep->message : strerror(-rep->error));
		fputc('\n', stderr);
		kprof__reply__free_unpacked(rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	*ret = rep;
	return 0;
}

/* Parse "PID" as the one positional argument after options. */
static int one_pid(const char *verb, int argc, char **argv, unsigned *pid)
{
	if (optind != argc - 1)
		return usage_error(verb,
				   optind >= argc ? "a PID is required" : "too many arguments");
	if (parse_uint("PID", argv[optind], 1, 0x7fffffff, pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}

static int verb_attach(int argc, char **argv)
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
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AttachRequest ar = KPROF__ATTACH_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "attach", argc, argv, "F:d:", opts)) != -1) {
		if (c == 'F' && parse_uint("--freq", optarg, 1, 4999, &ar.freq_hz) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'd' &&
		    parse_uint("--duration", optarg, 1, 86400 * 365, &ar.duration_sec) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'e' && parse_fraction("--eps", optarg, 1e-7, "[1e-7, 1]", &ar.eps) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'k')
			ar.hcct_kernel = true;
		if (c == 'c') {
			ar.calls = true;
			if (optarg && !optarg[0])
				return usage_error("attach", "--calls= needs function names");
			if (optarg)
				ar.calls_functions = optarg;
		}
		if (c == 'f')
			ar.force = true;
		if (c == 'b' && parse_uint("--burst", optarg, 1, 3600000, &ar.burst_ms) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'P' && parse_uint("--period", optarg, 2, 3600000, &ar.period_ms) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (c == 'J')
			ar.no_jvm_map = true;
		if (c == 'C')
			ar.children = true;
		if (c == 'G')
			ar.cgroup = optarg;
		if (c == 'U')
			ar.unit = optarg;
		if (c == 'A')
			ar.all = true;
	}
	if (st >= 0)
		return st;
	if (ar.all && (optind < argc || ar.cgroup[0] || ar.unit[0] || ar.children || ar.calls ||
		       ar.duration_sec || ar.eps || ar.hcct_kernel || ar.no_jvm_map))
		return usage_error("attach", "--all takes only --freq and --json: no PID, "
					     "--cgroup, --unit, --children, --calls or --duration");
	if ((ar.burst_ms || ar.period_ms || ar.force) && !ar.calls)
		return usage_error("attach", "--burst, --period and --force go with --calls");
	if (!ar.burst_ms != !ar.period_ms || (ar.burst_ms && ar.burst_ms >= ar.period_ms))
		return usage_error("attach", "--burst MS needs --period MS, longer than the burst");
	if (ar.cgroup[0] || ar.unit[0]) {
		if (ar.cgroup[0] && ar.unit[0])
			return usage_error("attach", "--cgroup or --unit, not both");
		if (optind < argc)
			return usage_error("attach", "--cgroup and --unit take no PID");
		if (ar.calls || ar.duration_sec)
			return usage_error("attach", "--calls and --duration need a PID");
	} else if (!ar.all && (r = one_pid("attach", argc, argv, &ar.pid))) {
		return r;
	}
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	if ((r = call(&req, &rep)))
		return r;
	if (rep->attach->system_wide) {
		const Kprof__SystemWide *w = rep->attach->system_wide;

		if (json)
			printf("{\"system_wide\":true,\"freq_hz\":%u,\"cpus\":%u}\n", w->freq_hz,
			       w->cpus);
		else
			printf("system-wide sampling on: %u Hz on %u CPUs; every process that gets "
			       "a sample becomes a target (kprofctl list, status; detach --all "
			       "stops it)\n",
			       w->freq_hz, w->cpus);
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if (!rep->attach->target) { /* a cgroup or unit watched */
		const Kprof__AttachReply *a = rep->attach;

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
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if (json) {
		render_target_json(stdout, rep->attach->target);
		fputc('\n', stdout);
	} else {
		printf("attached: ");
		render_target_line(stdout, rep->attach->target);
	}
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int verb_detach(int argc, char **argv)
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

	while ((c = verb_getopt(&st, "detach", argc, argv, "", opts)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'G')
			dr.cgroup = optarg;
		else if (c == 'U')
			dr.unit = optarg;
		else if (c == 'A')
			dr.all = true;
	}
	if (st >= 0)
		return st;
	if (dr.all) {
		if (dr.cgroup[0] || dr.unit[0] || optind < argc)
			return usage_error("detach",
					   "--all stands alone: no PID, --cgroup or --unit");
	} else if (dr.cgroup[0] || dr.unit[0]) {
		if ((dr.cgroup[0] && dr.unit[0]) || optind < argc)
			return usage_error("detach",
					   "a PID, --cgroup PATH or --unit NAME: one of them");
	} else if ((r = one_pid("detach", argc, argv, &dr.pid))) {
		return r;
	}
	req.body_case = KPROF__REQUEST__BODY_DETACH;
	req.detach = &dr;
	if ((r = call(&req, &rep)))
		return r;
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
		printf("{\"pid\":%u,\"detached\":true}\n", dr.pid);
	else
		printf("detached %u (profile kept: kprofctl report %u)\n", dr.pid, dr.pid);
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

/* kprofctl watch add|list|remove. */
static int verb_watch(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"comm", required_argument, NULL, 'c'}, {"exe", required_argument, NULL, 'x'},
	    {"uid", required_argument, NULL, 'u'},  {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'}, {"freq", required_argument, NULL, 'F'},
	    {"no-jvm-map", no_argument, NULL, 'J'}, {"children", no_argument, NULL, 'C'},
	    {"json", no_argument, NULL, 'j'},	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__WatchRequest wr = KPROF__WATCH_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	const char *kind = NULL, *value = NULL, *sub;
	char rule[1024];
	unsigned freq = 0;
	bool json = false, nojvm = false, children = false;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "watch", argc, argv, "F:", opts)) != -1) {
		const char *k = c == 'c'   ? "comm"
				: c == 'x' ? "exe"
				: c == 'u' ? "uid"
				: c == 'G' ? "cgroup"
				: c == 'U' ? "unit"
					   : NULL;

		if (k) {
			if (kind)
				return usage_error("watch",
						   "one of --comm, --exe, --uid, --cgroup, "
						   "--unit");
			kind = k;
			value = optarg;
		}
		if (c == 'F' && parse_uint("--freq", optarg, 1, 4999, &freq) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'J')
			nojvm = true;
		if (c == 'C')
			children = true;
		if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if (optind >= argc)
		return usage_error("watch", "add, list or remove");
	sub = argv[optind++];
	if (!strcmp(sub, "add")) {
		char uidbuf[16];
		int n;

		if (kind && optind < argc)
			return usage_error("watch", "a RULE or --comm/--exe/--uid/--cgroup/--unit, "
						    "not both");
		if (!kind && (optind != argc - 1 || !argv[optind][0]))
			return usage_error("watch", "add takes one RULE (quoted) or --comm NAME, "
						    "--exe PATH, --uid USER, --cgroup PATH, "
						    "--unit NAME");
		if (kind && !strcmp(kind, "uid") && !(value[0] >= '0' && value[0] <= '9')) {
			struct passwd *pw = getpwnam(value);

			if (!pw) {
				fprintf(stderr, "kprofctl watch: no such user: %s\n", value);
				return KPROFCTL_EXIT_USAGE;
			}
			snprintf(uidbuf, sizeof(uidbuf), "%u", (unsigned)pw->pw_uid);
			value = uidbuf;
		}
		if (kind)
			n = snprintf(rule, sizeof(rule), "%s:%s", kind, value);
		else
			n = snprintf(rule, sizeof(rule), "%s", argv[optind]);
		if (n >= 0 && freq && (size_t)n < sizeof(rule))
			n += snprintf(rule + n, sizeof(rule) - n, " freq=%u", freq);
		if (n >= 0 && nojvm && (size_t)n < sizeof(rule))
			n += snprintf(rule + n, sizeof(rule) - n, " jvm=off");
		if (n >= 0 && children && (size_t)n < sizeof(rule))
			n += snprintf(rule + n, sizeof(rule) - n, " children=on");
		if (n < 0 || (size_t)n >= sizeof(rule))
			return usage_error("watch", "the rule is too long");
		wr.add = rule;
	} else if (!strcmp(sub, "remove")) {
		if (kind || freq || nojvm || children || optind != argc - 1 || !argv[optind][0])
			return usage_error("watch", "remove takes one rule ID or RULE");
		wr.remove = argv[optind];
	} else if (!strcmp(sub, "list")) {
		if (kind || freq || nojvm || children || optind != argc)
			return usage_error("watch", "list takes no argument but --json");
	} else {
		return usage_error("watch", "add, list or remove");
	}
	req.body_case = KPROF__REQUEST__BODY_WATCH;
	req.watch = &wr;
	if ((r = call(&req, &rep)))
		return r;
	if (rep->body_case != KPROF__REPLY__BODY_WATCH) {
		kprof__reply__free_unpacked(rep, NULL);
		fputs("kprofctl: unexpected reply (an older kprofd?)\n", stderr);
		return KPROFCTL_EXIT_ERROR;
	}
	if (!json && wr.add[0])
		printf("rule %u: %u process%s attached now%s%u refused; matching processes are "
		       "attached as they start\n",
		       rep->watch->added, rep->watch->attached,
		       rep->watch->attached == 1 ? "" : "es", ", ", rep->watch->refused);
	else if (!json && wr.remove[0])
		printf("rule removed: %u process%s detached (profiles kept)\n",
		       rep->watch->detached, rep->watch->detached == 1 ? "" : "es");
	else
		print_rules(rep->watch, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* Verbs without arguments besides --json. Returns -1 to go on, else the exit code. */
static int simple_verb(const char *name, int argc, char **argv, bool *json)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {}};
	int c, st = -1;

	while ((c = verb_getopt(&st, name, argc, argv, "", opts)) != -1)
		*json = true;
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error(name, "too many arguments");
	return -1;
}

static int verb_list(int argc, char **argv)
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

	while ((c = verb_getopt(&st, "list", argc, argv, "a", opts)) != -1) {
		if (c == 'a')
			lr.all = true;
		else if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("list", "too many arguments");
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	if ((r = call(&req, &rep)))
		return r;
	render_list(stdout, rep->list, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int verb_status(int argc, char **argv)
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
	if ((r = call(&req, &rep)))
		return r;
	render_status(stdout, rep->status, json);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

/* --cgroup PATH / --unit NAME instead of a PID: the watch's name, or NULL. Sets *err to an exit
 * code on a bad command line. */
static const char *group_arg(const char *verb, const char *cgroup, const char *unit, int argc,
			     bool session, int *err)
{
	*err = 0;
	if (!cgroup && !unit)
		return NULL;
	if ((cgroup && unit) || optind < argc || session) {
		*err = usage_error(verb, "--cgroup, --unit or --all, alone: no PID or --session");
		return NULL;
	}
	return cgroup ? cgroup : unit;
}

/* --since/--until T: CLOCK_REALTIME ns (kprof/when.h). */
static int parse_when(const char *opt, const char *s, uint64_t *out)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (when_parse(s, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec, mktime, out) < 0) {
		usage_errorf("%s: '%s' is not a time kprofctl reads (10m, \"10m ago\", "
			     "11:05, \"2026-11-24 11:05\", @EPOCH, now)",
			     opt, s);
		return -1;
	}
	if (!*out)
		*out = 1; /* the epoch itself: still a range */
	return 0;
}

#define OPT_SINCE 1001
#define OPT_UNTIL 1002
#define RANGE_OPTS                                                                                 \
	{"since", required_argument, NULL, OPT_SINCE},                                             \
	{                                                                                          \
		"until", required_argument, NULL, OPT_UNTIL                                        \
	}

/* One --since or --until option into since or until; an exit code on bad input. */
static int range_opt(int c, uint64_t *since, uint64_t *until)
{
	if (c == OPT_SINCE && parse_when("--since", optarg, since) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == OPT_UNTIL && parse_when("--until", optarg, until) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}

/* --all: the processes of system-wide mode merged, as group_arg's name (cgroup is then set). */
static const char *all_arg(bool all, const char **cgroup)
{
	if (all && !*cgroup)
		*cgroup = group_all;
	return *cgroup;
}

static int verb_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"top", required_argument, NULL, 'n'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"full-names", no_argument, NULL, 'W'},
	    {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'},
	    {"all", no_argument, NULL, 'A'},
	    RANGE_OPTS,
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false, full_names = false, all = false;
	const char *cgroup = NULL, *unit = NULL, *name;
	int c, r, st = -1;

	rr.top = 20;
	while ((c = verb_getopt(&st, "report", argc, argv, "n:", opts)) != -1) {
		if (c == 'n' && parse_uint("--top", optarg, 0, 100000000, &rr.top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && parse_session(optarg, &rr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (c == 'W')
			full_names = true;
		if (c == 'G')
			cgroup = optarg;
		if (c == 'U')
			unit = optarg;
		if (c == 'A')
			all = true;
		if (range_opt(c, &rr.since_ns, &rr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (all && (cgroup || unit))
		return usage_error("report", "--all, --cgroup or --unit: one of them");
	all_arg(all, &cgroup);
	name = group_arg("report", cgroup, unit, argc, rr.session, &r);
	if (r)
		return r;
	if (name) { /* the merged view of a watched cgroup or unit */
		struct group g;
		Kprof__ReportReply *gr = NULL;

		if ((r = group_load_range(call, name, rr.since_ns, rr.until_ns, &g)) == 0 &&
		    merge_report(g.sp, rr.top, &gr) < 0)
			r = KPROFCTL_EXIT_ERROR;
		if (r == 0) {
			if (!json && all) {
				printf("system-wide (attach --all): %zu process%s\n", g.n,
				       g.n == 1 ? "" : "es");
			} else if (!json) {
				fputs(cgroup ? "cgroup " : "unit ", stdout);
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
	if ((r = one_pid("report", argc, argv, &rr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_REPORT;
	req.report = &rr;
	if ((r = call(&req, &rep)))
		return r;
	render_report(stdout, rep->report, json, full_names);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int verb_hcct(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"phi", required_argument, NULL, 'p'},
	    {"exact", no_argument, NULL, 'x'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"full-names", no_argument, NULL, 'W'},
	    RANGE_OPTS,
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__HcctRequest hr = KPROF__HCCT_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false, full_names = false;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "hcct", argc, argv, "", opts)) != -1) {
		if (c == 'p' && parse_fraction("--phi", optarg, 0, "(0, 1]", &hr.phi) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && parse_session(optarg, &hr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'x')
			hr.exact = true;
		if (c == 'j')
			json = true;
		if (c == 'W')
			full_names = true;
		if (range_opt(c, &hr.since_ns, &hr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if ((r = one_pid("hcct", argc, argv, &hr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_HCCT;
	req.hcct = &hr;
	if ((r = call(&req, &rep)))
		return r;
	render_hcct(stdout, rep->hcct, json, full_names);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int verb_drift(int argc, char **argv)
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

	while ((c = verb_getopt(&st, "drift", argc, argv, "", opts)) != -1) {
		if (c == 'k' && parse_uint("--keys", optarg, 1, 16, &dr.keys) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && parse_session(optarg, &dr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if ((r = one_pid("drift", argc, argv, &dr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_DRIFT;
	req.drift = &dr;
	if ((r = call(&req, &rep)))
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
	return call(&req, ret);
}

static int verb_paths(int argc, char **argv)
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
	    {},
	};
	Kprof__PathsRequest pr = KPROF__PATHS_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	struct sigaction sa = {.sa_handler = on_paths_sigint}, old_int, old_term;
	unsigned top = 10;
	bool json = false, show = false, stop = false, interrupted = false, events = false;
	double secs;
	char *end;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "paths", argc, argv, "", opts)) != -1) {
		switch (c) {
		case 'k':
			if (parse_uint("--k", optarg, 1, 64, &pr.k) < 0)
				return KPROFCTL_EXIT_USAGE;
			break;
		case 'd':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0.001 && secs <= 86400))
				return usage_errorf("--duration: '%s' is not a number of seconds "
						    "in 0.001-86400",
						    optarg);
			pr.duration_ms = (uint32_t)lround(secs * 1000);
			break;
		case 'b':
			errno = 0;
			pr.budget = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || !pr.budget)
				return usage_errorf("--budget: '%s' is not a positive number",
						    optarg);
			break;
		case 't':
			if (parse_uint("--top", optarg, 0, 1000000, &top) < 0)
				return KPROFCTL_EXIT_USAGE;
			break;
		case 'f':
			pr.force = true;
			break;
		case 's':
			show = true;
			break;
		case 'S':
			stop = true;
			break;
		case 'e':
			if (parse_session(optarg, &pr.session) < 0)
				return KPROFCTL_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'E':
			events = true;
			break;
		case 'T':
			pr.structural = true;
			break;
		case 'O':
			errno = 0;
			pr.spp_timeout = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || !pr.spp_timeout ||
			    pr.spp_timeout > 100000000)
				return usage_errorf(
				    "--spp-timeout: '%s' is not a number of activations "
				    "in 1-100000000",
				    optarg);
			pr.structural = true;
			break;
		case 'B':
			errno = 0;
			pr.spp_budget = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || !pr.spp_budget ||
			    pr.spp_budget > 100000000)
				return usage_errorf("--spp-budget: '%s' is not a number in "
						    "1-100000000",
						    optarg);
			pr.structural = true;
			break;
		}
	}
	if (st >= 0)
		return st;
	if ((show || stop) && pr.structural)
		return usage_errorf(
		    "--structural, --spp-budget and --spp-timeout start a trace: not with "
		    "--show or --stop (a structural trace shows its profile "
		    "anyway)");
	if (optind >= argc || argc - optind > 2 || (!show && !stop && argc - optind != 2))
		return usage_error("paths", optind >= argc	? "a PID is required"
					    : argc - optind > 2 ? "too many arguments"
								: "a FUNCTION is required");
	if (parse_uint("PID", argv[optind], 1, 0x7fffffff, &pr.pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	pr.function = argc - optind == 2 ? argv[optind + 1] : "";
	if (show || stop) {
		r = paths_call(
		    &pr, stop ? KPROF__PATHS_OP__PATHS_OP_STOP : KPROF__PATHS_OP__PATHS_OP_QUERY,
		    top, false, &rep);
		if (r)
			return r;
		render_paths_ex(stdout, rep->paths, json, events);
		kprof__reply__free_unpacked(rep, NULL);
		return 0;
	}
	if ((r = paths_call(&pr, KPROF__PATHS_OP__PATHS_OP_START, 1, true, &rep)))
		return r;
	fputs("kprofctl: tracing the paths of ", stderr);
	render_text(stderr, rep->paths->function);
	if (rep->paths->hw && rep->paths->hw_turn &&
	    !strncmp(rep->paths->hw_turn, "structure graph", 15))
		fprintf(stderr,
			" in pid %u (anonymous memory) with hardware breakpoints, one structure "
			"graph at a time,",
			pr.pid);
	else if (rep->paths->hw)
		fprintf(stderr,
			" in pid %u (anonymous memory) with hardware breakpoints on %u loop "
			"branch%s, 4 at a time,",
			pr.pid, rep->paths->probes, rep->paths->probes == 1 ? "" : "es");
	else
		fprintf(stderr, " in pid %u with %u uprobe%s", pr.pid, rep->paths->probes,
			render_plural(rep->paths->probes));
	fprintf(stderr, " for up to %.1f s%s (Ctrl-C stops)\n", rep->paths->duration_ms / 1e3,
		rep->paths->budget ? " or until the budget" : "");
	/* Wait for the trace to end: duration, budget, the target's exit, or Ctrl-C. */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	while (rep->paths->state == KPROF__PATHS_STATE__PATHS_STATE_TRACING) {
		struct timespec ts = {0, 100 * 1000 * 1000};

		kprof__reply__free_unpacked(rep, NULL);
		rep = NULL;
		nanosleep(&ts, NULL);
		interrupted = paths_interrupted;
		r = paths_call(&pr,
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
	if (r)
		return r;
	if ((r = paths_call(&pr, KPROF__PATHS_OP__PATHS_OP_QUERY, top, false, &rep)))
		return r;
	render_paths_ex(stdout, rep->paths, json, events);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static int verb_folded(int argc, char **argv)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	static const struct option opts[] = {
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'},
	    {"all", no_argument, NULL, 'A'},
	    RANGE_OPTS,
	    {},
	};
	Kprof__FoldedRequest fr = KPROF__FOLDED_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	bool json = false, all = false;
	const char *cgroup = NULL, *unit = NULL, *name;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "folded", argc, argv, "", opts)) != -1) {
		if (c == 'S' && parse_session(optarg, &fr.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (c == 'G')
			cgroup = optarg;
		if (c == 'U')
			unit = optarg;
		if (c == 'A')
			all = true;
		if (range_opt(c, &fr.since_ns, &fr.until_ns))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (all && (cgroup || unit))
		return usage_error("folded", "--all, --cgroup or --unit: one of them");
	all_arg(all, &cgroup);
	name = group_arg("folded", cgroup, unit, argc, fr.session, &r);
	if (r)
		return r;
	if (name) {
		struct group g;

		if (json)
			return usage_error("folded",
					   "--json is for one PID; use export --format json");
		if ((r = group_load_range(call, name, fr.since_ns, fr.until_ns, &g)) == 0 &&
		    export_profile(g.sp, "folded", "-") < 0)
			r = KPROFCTL_EXIT_ERROR;
		group_free(&g);
		return r;
	}
	if ((r = one_pid("folded", argc, argv, &fr.pid)))
		return r;
	req.body_case = KPROF__REQUEST__BODY_FOLDED;
	req.folded = &fr;
	if ((r = call(&req, &rep)))
		return r;
	if (json) {
		/* {"stacks":[{"frames":[root,...,leaf],"count":N},...]} from the folded lines. */
		const char *p = rep->folded->folded;
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
			rep->folded->truncated ? "true" : "false", rep->folded->stacks_omitted,
			rep->folded->samples_omitted);
	} else {
		render_lines(stdout, rep->folded->folded);
	}
	if (rep->folded->truncated)
		fprintf(stderr,
			"kprofctl: folded text cut at %" PRIu64 " MiB: the %" PRIu64
			" coldest stack%s (%" PRIu64
			" sample%s) left out; kprofctl export has them all\n",
			rep->folded->max_bytes >> 20, rep->folded->stacks_omitted,
			render_plural(rep->folded->stacks_omitted), rep->folded->samples_omitted,
			render_plural(rep->folded->samples_omitted));
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

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
		return parse_uint("--base-pid", optarg, 1, 0x7fffffff, &b->pid) < 0
			   ? KPROFCTL_EXIT_USAGE
			   : 0;
	}
	if (c == OPT_BASE_SINCE || c == OPT_BASE_UNTIL)
		b->set = true;
	if (c == OPT_BASE_SINCE && parse_when("--base-since", optarg, &b->since) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == OPT_BASE_UNTIL && parse_when("--base-until", optarg, &b->until) < 0)
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
	return call(&req, rep);
}

static int verb_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"force", no_argument, NULL, 'F'},
	    {"session", required_argument, NULL, 'S'},
	    {"cgroup", required_argument, NULL, 'G'},
	    {"unit", required_argument, NULL, 'U'},
	    {"base", required_argument, NULL, OPT_BASE},
	    {"base-since", required_argument, NULL, OPT_BASE_SINCE},
	    {"base-until", required_argument, NULL, OPT_BASE_UNTIL},
	    {"base-pid", required_argument, NULL, OPT_BASE_PID},
	    {"all", no_argument, NULL, 'A'},
	    RANGE_OPTS,
	    {},
	};
	const char *cgroup = NULL, *unit = NULL, *name, *base_out = NULL;
	Kprof__ExportRequest er = KPROF__EXPORT_REQUEST__INIT, ber;
	Kprof__Reply *rep = NULL;
	const char *out = NULL, *format = "pprof";
	struct base_sel base = {0};
	bool force = false, all = false;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "export", argc, argv, "o:f:", opts)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'f')
			format = optarg;
		else if (c == 'F')
			force = true;
		else if (c == 'S' && parse_session(optarg, &er.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		else if (c == 'G')
			cgroup = optarg;
		else if (c == 'U')
			unit = optarg;
		else if (c == 'A')
			all = true;
		else if (c == OPT_BASE)
			base_out = optarg;
		else if (range_opt(c, &er.since_ns, &er.until_ns) || base_opt(c, &base))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (all && (cgroup || unit))
		return usage_error("export", "--all, --cgroup or --unit: one of them");
	all_arg(all, &cgroup);
	if (strcmp(format, "pprof") && strcmp(format, "folded") && strcmp(format, "json"))
		return usage_error("export", "--format must be pprof, folded or json");
	if (!out)
		return usage_error("export", "-o FILE is required (- for stdout)");
	if (!base_out != !base.set)
		return usage_error("export", base_out
						 ? "--base FILE needs --base-since, --base-until "
						   "or --base-pid: which profile is the base"
						 : "--base-since/--base-until/--base-pid go "
						   "with --base FILE");
	name = group_arg("export", cgroup, unit, argc, er.session, &r);
	if (r)
		return r;
	if (name && base_out)
		return usage_error("export", "--base is for one PID, not --cgroup/--unit");
	if (!name && (r = one_pid("export", argc, argv, &er.pid)))
		return r;
	/* As gzip does: binary data on a terminal helps nobody and may upset it. */
	if (!strcmp(out, "-") && !strcmp(format, "pprof") && !force && isatty(STDOUT_FILENO)) {
		fputs("kprofctl export: compressed data not written to a terminal; use -o FILE, "
		      "pipe it, or --force\n",
		      stderr);
		return KPROFCTL_EXIT_USAGE;
	}
	if (name) {
		struct group g;

		if ((r = group_load_range(call, name, er.since_ns, er.until_ns, &g)) == 0 &&
		    export_profile(g.sp, format, out) < 0)
			r = KPROFCTL_EXIT_ERROR;
		group_free(&g);
		return r;
	}
	if (base_out) { /* the base first: a bad base range leaves no new file behind */
		base_request(&er, &base, &ber);
		if ((r = export_one(&ber, &rep)))
			return r;
		r = export_profile(rep->export->profile, format, base_out) < 0 ? KPROFCTL_EXIT_ERROR
									       : 0;
		kprof__reply__free_unpacked(rep, NULL);
		if (r)
			return r;
	}
	if ((r = export_one(&er, &rep)))
		return r;
	r = export_profile(rep->export->profile, format, out) < 0 ? KPROFCTL_EXIT_ERROR : 0;
	kprof__reply__free_unpacked(rep, NULL);
	return r;
}

/* Self share of a function in a merged report, by (function, module); -1 if absent. */
static double share_of(const Kprof__ReportReply *r, const Kprof__FlatEntry *e)
{
	for (size_t i = 0; i < r->n_entries; i++)
		if (!strcmp(r->entries[i]->function, e->function) &&
		    !strcmp(r->entries[i]->module, e->module))
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

static int verb_diff(int argc, char **argv)
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

	while ((c = verb_getopt(&st, "diff", argc, argv, "n:", opts)) != -1) {
		if (c == 'n' && parse_uint("--top", optarg, 0, 100000000, &top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && parse_session(optarg, &er.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
		if (range_opt(c, &er.since_ns, &er.until_ns) || base_opt(c, &base))
			return KPROFCTL_EXIT_USAGE;
	}
	if (st >= 0)
		return st;
	if (!base.set)
		return usage_error("diff",
				   "the base is required: --base-since/--base-until (another "
				   "range) or --base-pid (another process)");
	if ((r = one_pid("diff", argc, argv, &er.pid)))
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

static int verb_record(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"freq", required_argument, NULL, 'F'},
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"children", no_argument, NULL, 'c'},
	    {"no-jvm-map", no_argument, NULL, 'J'},
	    {"top", required_argument, NULL, 'n'},
	    {"force", no_argument, NULL, 'B'},
	    {"full-names", no_argument, NULL, 'N'},
	    {},
	};
	struct record_opts o = {.call = call, .format = "pprof", .top = 20};
	bool force = false;
	int c, st = -1;

	/* '+': options end at the command's name, so its own options stay its own. */
	while ((c = verb_getopt(&st, "record", argc, argv, "+F:o:f:", opts)) != -1) {
		if (c == 'F' && parse_uint("--freq", optarg, 1, 4999, &o.freq) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'n' && parse_uint("--top", optarg, 0, 100000000, &o.top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'o')
			o.output = optarg;
		else if (c == 'f')
			o.format = optarg;
		else if (c == 'c')
			o.children = true;
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
		return usage_error("record", "--format must be pprof, folded, json or report");
	if (optind >= argc)
		return usage_error("record",
				   "a command to run is required (kprofctl record -- CMD ...)");
	if (!o.output)
		o.output = !strcmp(o.format, "pprof")	 ? "kprof.pb.gz"
			   : !strcmp(o.format, "folded") ? "kprof.folded"
			   : !strcmp(o.format, "json")	 ? "kprof.json"
							 : "-";
	if (!strcmp(o.output, "-") && !strcmp(o.format, "pprof") && !force && isatty(STDOUT_FILENO))
		return usage_error("record", "compressed data not written to a terminal; use -o "
					     "FILE, pipe it, or --force");
	return record_run(&o, argv + optind);
}

static int verb_top(int argc, char **argv)
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

	while ((c = verb_getopt(&st, "top", argc, argv, "i:n:", opts)) != -1) {
		if (c == 'i' && parse_uint("--interval", optarg, 100, 60000, &o.interval_ms) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'n' && parse_uint("--iterations", optarg, 1, 1000000, &o.iterations) < 0)
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
			return usage_error("top", "at most 64 PIDs");
		if (parse_uint("PID", argv[optind], 1, 0x7fffffff, &pids[o.npids]) < 0)
			return KPROFCTL_EXIT_USAGE;
		o.npids++;
	}
	o.pids = pids;
	return top_run(&o);
}

static int verb_annotate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"top", required_argument, NULL, 't'},
	    {"session", required_argument, NULL, 'S'},
	    {"json", no_argument, NULL, 'j'},
	    {},
	};
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AnnotateRequest ar = KPROF__ANNOTATE_REQUEST__INIT;
	Kprof__Reply *rep = NULL;
	unsigned top = 10;
	bool json = false;
	int c, r, st = -1;

	while ((c = verb_getopt(&st, "annotate", argc, argv, "", opts)) != -1) {
		if (c == 't' && parse_uint("--top", optarg, 0, 100000, &top) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'S' && parse_session(optarg, &ar.session) < 0)
			return KPROFCTL_EXIT_USAGE;
		if (c == 'j')
			json = true;
	}
	if (st >= 0)
		return st;
	if (argc - optind != 2)
		return usage_error("annotate", optind >= argc	   ? "a PID is required"
					       : argc - optind > 2 ? "too many arguments"
								   : "a FUNCTION is required");
	if (parse_uint("PID", argv[optind], 1, 0x7fffffff, &ar.pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (!argv[optind + 1][0])
		return usage_error("annotate", "FUNCTION is empty");
	ar.function = argv[optind + 1];
	req.body_case = KPROF__REQUEST__BODY_ANNOTATE;
	req.annotate = &ar;
	if ((r = call(&req, &rep)))
		return r;
	render_annotate(stdout, rep->annotate, json, top);
	kprof__reply__free_unpacked(rep, NULL);
	return 0;
}

static void usage(FILE *f);
static int verb_help_verb(int argc, char **argv);

static const struct verb verbs[] = {
    {"attach", verb_attach,
     "PID [--freq HZ] [--duration SEC] [--eps E] [--hcct-kernel] [--no-jvm-map] [--json]\n"
     "          [--children] [--calls[=NAME,...|=hot:N] [--burst MS --period MS] [--force]]\n"
     "          | --cgroup PATH | --unit NAME [--freq HZ] [...] | --all [--freq HZ]",
     "start sampling PID (default 99 Hz, 1-4999; until detached, exit or SEC seconds);\n"
     "          --children: every process it forks from then on is a target too;\n"
     "          --cgroup/--unit: every process in the cgroup or unit, now and later;\n"
     "          --all (root): system-wide, per-CPU events at 19 Hz by default, every\n"
     "          process that gets a sample a target of its own (kernel threads and idle\n"
     "          counted in status); processes attached otherwise keep their settings;\n"
     "          a HotSpot JVM is asked to write its perf map (not with --no-jvm-map);\n"
     "          --calls adds exact mode: uprobes count every entry of the JIT functions\n"
     "          in the perf map (file-backed JIT code only), in bursts with --burst/--period;\n"
     "          --calls=NAME,... only those functions; those in anonymous memory (V8,\n"
     "          HotSpot) are counted by hardware breakpoints, 4 exactly, more in turns\n"
     "          (estimated counts, the share of the time each was counted shown);\n"
     "          --calls=hot:N: the N hottest JIT functions sampled (1-16), chosen after 1 s"},
    {"detach", verb_detach, "PID [--json] | --cgroup PATH | --unit NAME | --all",
     "stop sampling PID (or watching a cgroup or unit, or system-wide mode with --all:\n"
     "          its targets are detached); profiles are kept"},
    {"list", verb_list, "[--all] [--json]",
     "attached processes; --all adds the kept profiles of ended ones"},
    {"status", verb_status, "[--json]",
     "daemon version, targets, samples/s, ring-buffer drops, own CPU"},
    {"report", verb_report,
     "PID [--top N] [--session N] [--since T] [--until T] [--full-names] [--json]\n"
     "          | --cgroup PATH | --unit NAME | --all [--top N] [--since T] [--until T] [...]",
     "flat profile: self and total samples per function (default top 20, 0 = all);\n"
     "          C++ names without their parameter lists unless --full-names;\n"
     "          --cgroup/--unit: the processes of a watched cgroup or unit, merged;\n"
     "          --all: those of system-wide mode (attach --all), merged;\n"
     "          --since/--until: only the kept time windows in that range (10m, \"10m ago\",\n"
     "          11:05, \"2026-11-24 11:05\", @EPOCH, now); default: everything"},
    {"folded", verb_folded,
     "PID [--session N] [--since T] [--until T] [--json] | --cgroup PATH | --unit NAME | --all",
     "folded stacks (root;...;leaf count) for flame graphs"},
    {"top", verb_top, "[PID...] [--interval MS] [--iterations N] [--full-names] [--json]",
     "live view: functions by self time in the last interval (default 1000 ms), keys\n"
     "          q quit, s sort, p pause, t HCCT tree, / filter, arrows, PgUp/PgDn, Home/End\n"
     "          scroll; --json prints one JSON line per interval instead"},
    {"hcct", verb_hcct,
     "PID [--phi X] [--exact] [--session N] [--since T] [--until T] [--full-names] [--json]",
     "hot calling contexts: every context with at least phi of the samples (default\n"
     "          0.001, at least the target's eps, set at attach: default 0.0002), as a tree;\n"
     "          --exact: the contexts of the probed calls (attach --calls)"},
    {"paths", verb_paths,
     "PID FUNCTION [--k K] [--duration S] [--budget N] [--top N] [--force] [--json]\n"
     "          | PID --show [--session N] | PID --stop",
     "multi-iteration path profile of one JIT function (a perf-map name or an address\n"
     "          in it): uprobes on its basic blocks for S seconds (default 10) or N path\n"
     "          events, then the hottest sequences of up to K loop iterations (default 4)\n"
     "          and the plain Ball-Larus path profile, each path as its blocks; top N of\n"
     "          each (default 10, 0 = all). Attaches PID if needed. JIT code in anonymous\n"
     "          memory (V8, HotSpot): hardware breakpoints on its loops' branches, 4 at a\n"
     "          time in turns: exact taken/not-taken counts per branch over the time each\n"
     "          was covered, the paths of every loop whose branches fit (or, after\n"
     "          counting, whose branches that went both ways fit), what was not\n"
     "          covered; there --events gives the followed loops' event counts (no\n"
     "          function total), and --structural profiles one structure graph at a\n"
     "          time by breakpoints (no overlap figure; --events then estimates function\n"
     "          totals from it). --show prints the last trace, --stop ends the running one"},
    {"export", verb_export,
     "PID -o FILE [--format pprof|folded|json] [--force] [--session N] [--since T]\n"
     "          [--until T] [--base FILE --base-since T --base-until T --base-pid PID]\n"
     "          | --cgroup PATH | --unit NAME | --all -o FILE [--format ...] [--force]",
     "write the profile to FILE (- for stdout): pprof (gzip, for go tool pprof;\n"
     "          the default), folded stacks, or JSON (functions and per-thread stacks);\n"
     "          pprof is not written to a terminal without --force; --base FILE also\n"
     "          writes the base side (for go tool pprof -diff_base)"},
    {"diff", verb_diff,
     "PID [--since T] [--until T] [--session N] [--top N] [--json]\n"
     "          --base-since T [--base-until T] | --base-pid PID2",
     "function by function: self share of the samples in the base (another time range\n"
     "          or another process) and now, largest changes first (default top 20)"},
    {"record", verb_record,
     "[--freq HZ] [-o FILE] [--format pprof|folded|json|report] [--children] [--full-names]\n"
     "          -- CMD [ARG...]",
     "run CMD sampled from its first instruction and write its profile when it exits\n"
     "          (default pprof to kprof.pb.gz); --children follows the processes it\n"
     "          forks; CMD's exit status is kprofctl's"},
    {"watch", verb_watch,
     "list [--json] | add RULE | add --comm NAME | --exe PATH | --uid USER | --cgroup PATH\n"
     "          | --unit NAME [--freq HZ] [--no-jvm-map] [--children] [--json] | remove ID|RULE",
     "watch rules: every present and future process matching a comm, an executable, a\n"
     "          uid, a cgroup or a unit is attached by kprofd itself (kept across restarts);\n"
     "          RULE is KIND:VALUE [freq=N] [jvm=on|off] [children=on|off]"},
    {"annotate", verb_annotate, "PID FUNCTION [--top N] [--session N] [--json]",
     "where inside one sampled function its self samples fall: its code as it ran\n"
     "          (read when first sampled; a change since is said), disassembled, samples\n"
     "          per instruction and basic block, loops and back edges marked, the top N\n"
     "          blocks first (default 10, 0 = all); FUNCTION as report names it (or a\n"
     "          part of the name only one function has) or an address 0x... in it"},
    {"drift", verb_drift, "PID [--keys N] [--session N] [--json]",
     "profile drift of PID's JIT functions: each one's reference profile (offsets\n"
     "          sampled in it, functions it calls) against a sliding window of its newest\n"
     "          samples by overlap; a drift is logged by kprofd and shown in top; --keys:\n"
     "          keys shown per function (default 5, 1-16); a detached, exited or restored\n"
     "          target answers with the result kept with its profile"},
    {"help", verb_help_verb, "[VERB]",
     "this help, or the help of VERB (its section of kprofctl(1)), as VERB --help"},
};

/* `kprofctl help [VERB]`. */
static int verb_help_verb(int argc, char **argv)
{
	static const struct option opts[] = {{}};
	int st = -1;

	while (verb_getopt(&st, "help", argc, argv, "", opts) != -1)
		;
	if (st >= 0)
		return st;
	if (optind == argc) {
		usage(stdout);
		return 0;
	}
	if (argc - optind > 1)
		return usage_error("help", "too many arguments");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[optind], verbs[i].name))
			return verb_help(verbs[i].name);
	fprintf(stderr, "kprofctl help: unknown verb '%s' (see kprofctl --help)\n", argv[optind]);
	return KPROFCTL_EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: kprofctl [--socket PATH] VERB [ARGS]\n"
		   "Control kprofd, the kprof profiling daemon.\n"
		   "kprofctl VERB --help or kprofctl help VERB: the help of VERB.\n\nVerbs:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-7s %s\n          %s\n", verbs[i].name, verbs[i].args,
			verbs[i].help);
	fprintf(f,
		"\nOptions:\n"
		"  -s, --socket PATH  kprofd's socket (default $KPROF_SOCKET or %s)\n"
		"  -h, --help         this help (after a verb: the verb's help)\n"
		"  -V, --version      print the version\n\n"
		"Exit status: 0 ok, 1 kprofd refused or failed the request, 2 bad usage,\n"
		"3 kprofd not reachable.\n",
		DEFAULT_SOCKET);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {},
	};
	int c;

	if (getenv("KPROF_SOCKET") && *getenv("KPROF_SOCKET"))
		socket_path = getenv("KPROF_SOCKET");
	/* Every getopt error is reported by option_error, which names the verb. */
	opterr = 0;
	/* '+': stop at the verb, whose options are its own; ':': a missing argument is ':'. */
	while ((c = getopt_long(argc, argv, "+:s:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kprofctl %s\n", KPROF_VERSION);
			return 0;
		default:
			return option_error(c, argv, opts);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return KPROFCTL_EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (!strcmp(argv[optind], verbs[i].name)) {
			argc -= optind;
			argv += optind;
			optind = 0; /* 0: glibc re-initializes getopt (permuting again) */
			return verbs[i].run(argc, argv);
		}
	}
	fprintf(stderr, "kprofctl: unknown verb '%s' (see kprofctl --help)\n", argv[optind]);
	return KPROFCTL_EXIT_USAGE;
}
