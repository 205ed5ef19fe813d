// SPDX-License-Identifier: GPL-2.0-only
/* verbs.c: what kprofctl's verbs share: options parsed with errors that name the verb and the
 * option ("kprofctl VERB: ... (see kprofctl VERB --help)"), numbers, sessions and time ranges,
 * a verb's help, and the one call to kprofd (connect, send, wait out a busy uprobe removal,
 * print the daemon's error). Apart from kprofctl.c (main and the verb table) so that the verbs,
 * in verbs_targets.c, verbs_profile.c and verbs_export.c, call down into this file and the
 * table calls down into them: no cycle between the files.
 */
#include "verbs.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
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
#include "render.h"

/* kprofd's socket: DEFAULT_SOCKET, $KPROF_SOCKET or --socket (set by main). */
const char *socket_path = DEFAULT_SOCKET;
/* The verb being run, for messages ("kprofctl VERB: ..."). */
static const char *verb_name;

/* A bad command line: "kprofctl VERB: MESSAGE (see kprofctl VERB --help)" on stderr. Returns
 * the exit code. */
__attribute__((format(printf, 1, 2))) int verbs_usage_errorf(const char *fmt, ...)
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

int verbs_usage_error(const char *verb, const char *msg)
{
	verb_name = verb;
	return verbs_usage_errorf("%s", msg);
}

int verbs_parse_uint(const char *what, const char *s, unsigned long min, unsigned long max,
		     unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		verbs_usage_errorf("%s: '%s' is not a number in %lu-%lu", what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A number in (0, 1] and at least min; range says which numbers these are, for the message. */
int verbs_parse_fraction(const char *what, const char *s, double min, const char *range,
			 double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 1 && v >= min)) {
		verbs_usage_errorf("%s: '%s' is not a number in %s", what, s, range);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int verbs_parse_slowdown(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v == 0 || (v >= 1.01 && v <= 100))) {
		verbs_usage_errorf("--max-slowdown: '%s' is not 0 or a factor in 1.01-100", s);
		return -EINVAL;
	}
	*out = v == 0 ? -1 : v; /* no limit (0 asks for kprofd's default) */
	return 0;
}

/* Print verb's help (its section of kprofctl(1)) on stdout. Returns the exit code. */
int verbs_help(const char *verb)
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
int verbs_option_error(int c, char **argv, const struct option *opts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	size_t len = strcspn(arg, "=");
	char name[64], which[256] = "";
	int n = 0;

	if (!strncmp(arg, "--", 2) && arg[2] && (c == ':' || !optopt || arg[len])) {
		snprintf(name, sizeof(name), "%.*s", (int)len, arg);
		if (c == ':')
			return verbs_usage_errorf("option '%s' needs an argument", name);
		if (optopt)
			return verbs_usage_errorf("option '%s' takes no argument", name);
		for (const struct option *o = opts; o->name; o++) {
			if (strncmp(o->name, name + 2, len - 2))
				continue;
			snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s--%s",
				 n++ ? ", " : "", o->name);
		}
		if (n > 1)
			return verbs_usage_errorf("option '%s' is ambiguous (%s)", name, which);
		return verbs_usage_errorf("unknown option '%s'", name);
	}
	if (c == ':')
		return verbs_usage_errorf("option '-%c' needs an argument", optopt);
	return verbs_usage_errorf("unknown option '-%c'", optopt);
}

/* getopt_long over a verb's options, and -h/--help besides them. Returns the next option, or
 * -1 when there is none left or the verb is to stop: *status is then the exit code, 0 after
 * printing the verb's help, KPROFCTL_EXIT_USAGE after an unknown option or a missing argument
 * (both reported). */
int verbs_getopt(int *status, const char *verb, int argc, char **argv, const char *shortopts,
		 const struct option *opts)
{
	struct option all[24];
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
		*status = verbs_help(verb);
	else if (c == '?' || c == ':')
		*status = verbs_option_error(c, argv, all);
	else
		return c;
	return -1;
}

/* --session N: which kept session of the pid (kprofctl list --all numbers them from 1). */
int verbs_parse_session(const char *s, uint32_t *out)
{
	unsigned v;

	if (verbs_parse_uint("--session", s, 1, 0x7fffffff, &v) < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Replies kprofd gives while something it needs is still under way: asked again every 250 ms
 * for up to max_ms, said once. */
static const struct retryable {
	int error;
	const char *says; /* in the reply's message */
	unsigned max_ms;
	const char *note; /* said once; NULL: the reply's own message, then "waiting..." */
} retryable[] = {
    /* The kernel is still removing earlier uprobes in the same code: kprofd refuses rather
     * than stall (a removal takes about a second per 32 probes). */
    {-EBUSY, "still being removed", 60000,
     "waiting for the kernel to remove earlier uprobes in the same code..."},
    /* A target's symbol files are not read in full yet: kprofd reads them in steps, within a
     * CPU allowance. */
    {-EAGAIN, "not read in full yet", 15000, NULL},
};

#define RETRY_STEP_MS 250

/* The entry of retryable that rep is, NULL if none. */
static const struct retryable *retryable_reply(const Kprof__Reply *rep)
{
	for (size_t i = 0; i < ARRAY_SIZE(retryable); i++)
		if (rep->error == retryable[i].error && rep->message &&
		    strstr(rep->message, retryable[i].says))
			return &retryable[i];
	return NULL;
}

/* Send req; *ret is the reply (its error field included). Returns 0, or the exit code when
 * kprofd could not be reached or answered garbage. */
int verbs_call_raw(const Kprof__Request *req, Kprof__Reply **ret)
{
	static unsigned waited_ms[ARRAY_SIZE(retryable)];
	const struct retryable *again;
	Kprof__Reply *rep = NULL;
	int err;

	for (;;) {
		_cleanup_close_ int fd = client_connect(socket_path);

		if (fd < 0) {
			char why[256];

			fprintf(stderr, "kprofctl: cannot connect to kprofd at %s: %s%s\n",
				socket_path, strerror(-fd),
				fd == -ENOENT || fd == -ECONNREFUSED ? " (is kprofd running?)"
				: fd == -EACCES
				    ? client_no_permission(socket_path, why, sizeof(why))
				    : "");
			return KPROFCTL_EXIT_NO_DAEMON;
		}
		err = client_call(fd, req, &rep);
		if (err < 0) {
			if (err == -ETIMEDOUT)
				fprintf(stderr,
					"kprofctl: talking to kprofd at %s: no reply in %u s "
					"(KPROF_TIMEOUT=SECONDS waits longer, 0 without limit)\n",
					socket_path, client_timeout());
			else
				fprintf(stderr, "kprofctl: talking to kprofd at %s: %s\n",
					socket_path,
					err == -EBADMSG ? "malformed reply" : strerror(-err));
			return KPROFCTL_EXIT_NO_DAEMON;
		}
		again = retryable_reply(rep);
		if (!again || waited_ms[again - retryable] >= again->max_ms)
			break;
		if (!waited_ms[again - retryable] && again->note)
			fprintf(stderr, "kprofctl: %s\n", again->note);
		else if (!waited_ms[again - retryable])
			fprintf(stderr, "kprofctl: %s: waiting...\n", rep->message);
		waited_ms[again - retryable] += RETRY_STEP_MS;
		kprof__reply__free_unpacked(rep, NULL);
		rep = NULL;
		usleep(RETRY_STEP_MS * 1000);
	}
	*ret = rep;
	return 0;
}

int verbs_call(const Kprof__Request *req, Kprof__Reply **ret)
{
	Kprof__Reply *rep = NULL;
	int r = verbs_call_raw(req, &rep);

	if (r)
		return r;
	if (rep->error) {
		render_reply_error(stderr, rep);
		kprof__reply__free_unpacked(rep, NULL);
		return KPROFCTL_EXIT_ERROR;
	}
	*ret = rep;
	return 0;
}

/* Parse "PID" as the one positional argument after options. */
int verbs_parse_seconds(const char *what, const char *s, unsigned long min, unsigned long max,
			unsigned *out)
{
	uint64_t ns;

	if (s[0] >= '0' && s[0] <= '9' && s[strspn(s, "0123456789")] == '\0')
		return verbs_parse_uint(what, s, min, max, out);
	if (when_duration(s, &ns) < 0 || ns % 1000000000ULL || ns / 1000000000ULL < min ||
	    ns / 1000000000ULL > max) {
		verbs_usage_errorf("%s: '%s' is not a duration of %lu s to %lu s in whole seconds "
				   "(e.g. 90, 90s, 10m, 2h)",
				   what, s, min, max);
		return -1;
	}
	*out = ns / 1000000000ULL;
	return 0;
}

const char *verbs_unit_name(const char *name)
{
	static char buf[512];

	if (!name || !name[0] || strchr(name, '.') || strchr(name, '/') ||
	    strlen(name) + 9 > sizeof(buf))
		return name;
	snprintf(buf, sizeof(buf), "%s.service", name);
	return buf;
}

int verbs_one_pid(const char *verb, int argc, char **argv, unsigned *pid)
{
	if (optind != argc - 1)
		return verbs_usage_error(verb, optind >= argc ? "a PID is required"
							      : "too many arguments");
	if (verbs_parse_uint("PID", argv[optind], 1, 0x7fffffff, pid) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}

/* --cgroup PATH / --unit NAME instead of a PID: the watch's name, or NULL. Sets *err to an exit
 * code on a bad command line. */
bool verbs_group_opt(int c, struct verbs_group *g)
{
	if (c == 'G')
		g->cgroup = optarg;
	else if (c == 'U')
		g->unit = verbs_unit_name(optarg);
	else if (c == 'A')
		g->all = true;
	return c == 'G' || c == 'U' || c == 'A';
}

const char *verbs_group_name(const char *verb, struct verbs_group *g, int argc, bool session,
			     int *err)
{
	*err = 0;
	if (g->all && (g->cgroup || g->unit)) {
		*err = verbs_usage_error(verb, "--all, --cgroup or --unit: one of them");
		return NULL;
	}
	if (g->all)
		g->cgroup = group_all;
	if (!g->cgroup && !g->unit)
		return NULL;
	if ((g->cgroup && g->unit) || optind < argc || session) {
		*err = verbs_usage_error(verb,
					 "--cgroup, --unit or --all, alone: no PID or --session");
		return NULL;
	}
	return g->cgroup ? g->cgroup : g->unit;
}

int verbs_group_export(const char *name, uint64_t since, uint64_t until, const char *format,
		       const char *out)
{
	struct group g;
	int r = group_load_range(verbs_call_raw, name, since, until, &g);

	if (r == 0 && export_profile(g.sp, format, out) < 0)
		r = KPROFCTL_EXIT_ERROR;
	group_free(&g);
	return r;
}

/* --since/--until T: CLOCK_REALTIME ns (kprof/when.h). */
int verbs_parse_when(const char *opt, const char *s, uint64_t *out)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (when_parse(s, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec, mktime, out) < 0) {
		verbs_usage_errorf("%s: '%s' is not a time kprofctl reads (10m, \"10m ago\", "
				   "11:05, \"2026-11-24 11:05\", @EPOCH, now)",
				   opt, s);
		return -1;
	}
	if (!*out)
		*out = 1; /* the epoch itself: still a range */
	return 0;
}

/* One --since or --until option into since or until; an exit code on bad input. */
int verbs_range_opt(int c, uint64_t *since, uint64_t *until)
{
	if (c == OPT_SINCE && verbs_parse_when("--since", optarg, since) < 0)
		return KPROFCTL_EXIT_USAGE;
	if (c == OPT_UNTIL && verbs_parse_when("--until", optarg, until) < 0)
		return KPROFCTL_EXIT_USAGE;
	return 0;
}
