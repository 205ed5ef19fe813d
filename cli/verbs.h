/* SPDX-License-Identifier: GPL-2.0-only */
/* verbs.h: what kprofctl's verbs share (verbs.c), private to kprofctl: option parsing and its
 * errors, a verb's help, the call to kprofd. Exit codes are client.h's KPROFCTL_EXIT_*. */
#ifndef KPROF_CLI_VERBS_H
#define KPROF_CLI_VERBS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

#define DEFAULT_SOCKET "/run/kprofd/kprofd.sock"

/* kprofd's socket (main sets it from $KPROF_SOCKET or --socket). */
extern const char *socket_path;

/* A bad command line: "kprofctl VERB: MESSAGE (see kprofctl VERB --help)" on stderr, VERB the
 * verb being run (verbs_usage_error sets it). Return the exit code. */
__attribute__((format(printf, 1, 2))) int verbs_usage_errorf(const char *fmt, ...);
int verbs_usage_error(const char *verb, const char *msg);
/* A number in min-max (a usage error if not); a fraction in (0, 1] and at least min. */
int verbs_parse_uint(const char *what, const char *s, unsigned long min, unsigned long max,
		     unsigned *out);
int verbs_parse_fraction(const char *what, const char *s, double min, const char *range,
			 double *out);
/* A duration in whole seconds, min-max: a number of seconds, or with a unit ("10s", "5m",
 * "2 hours": when_duration). A usage error if not. */
/* --max-slowdown X: a factor in 1.01-100, or 0 for none (-1 in the request: 0 there asks for
 * kprofd's default). 0, or -EINVAL (reported). */
int verbs_parse_slowdown(const char *s, double *out);
int verbs_parse_seconds(const char *what, const char *s, unsigned long min, unsigned long max,
			unsigned *out);
/* A unit's name as systemctl takes it: NAME without a suffix is NAME.service (a static buffer,
 * or name itself). */
const char *verbs_unit_name(const char *name);
/* Print verb's help (its section of kprofctl(1)) on stdout. Returns the exit code. */
int verbs_help(const char *verb);
/* getopt_long's '?' or ':': which option, and why, as a usage error. */
int verbs_option_error(int c, char **argv, const struct option *opts);
/* getopt_long over a verb's options and -h/--help: the next option, or -1 with *status the
 * exit code (0 after the help, KPROFCTL_EXIT_USAGE after a bad option). */
int verbs_getopt(int *status, const char *verb, int argc, char **argv, const char *shortopts,
		 const struct option *opts);
/* --session N. */
int verbs_parse_session(const char *s, uint32_t *out);
/* Send req, print kprofd's error if any. Returns the exit code; *ret is the reply on success. */
int verbs_call(const Kprof__Request *req, Kprof__Reply **ret);
/* The same, but a reply that is kprofd's error is returned as it is, not printed (0). */
int verbs_call_raw(const Kprof__Request *req, Kprof__Reply **ret);
/* "PID" as the one positional argument after options. */
int verbs_one_pid(const char *verb, int argc, char **argv, unsigned *pid);
/* --cgroup PATH, --unit NAME or --all (GROUP_OPTS) instead of a PID: merged processes. */
struct verbs_group {
	const char *cgroup, *unit;
	bool all;
};
/* c into g if it is one of GROUP_OPTS' options; true if it was. */
bool verbs_group_opt(int c, struct verbs_group *g);
/* The group's name for group_load_range (--all: group_all, g->cgroup set to it), or NULL for one
 * PID; *err: the exit code of a bad combination (two of them, or with a PID or --session). */
const char *verbs_group_name(const char *verb, struct verbs_group *g, int argc, bool session,
			     int *err);
/* The merged profile of name (of [since, until), both 0: whole) written as export does. */
int verbs_group_export(const char *name, uint64_t since, uint64_t until, const char *format,
		       const char *out);
/* --since/--until T: CLOCK_REALTIME ns (kprof/when.h). */
int verbs_parse_when(const char *opt, const char *s, uint64_t *out);
/* One --since or --until option (RANGE_OPTS) into since or until; an exit code on bad input. */
int verbs_range_opt(int c, uint64_t *since, uint64_t *until);

#define GROUP_OPTS                                                                                 \
	{"cgroup", required_argument, NULL, 'G'}, {"unit", required_argument, NULL, 'U'},          \
	{                                                                                          \
		"all", no_argument, NULL, 'A'                                                      \
	}
#define OPT_SINCE 1001
#define OPT_UNTIL 1002
/* --lines: source lines (issue 32), of report, folded, hcct and annotate. */
#define LINES_OPT                                                                                  \
	{                                                                                          \
		"lines", no_argument, NULL, 'L'                                                    \
	}

#define RANGE_OPTS                                                                                 \
	{"since", required_argument, NULL, OPT_SINCE},                                             \
	{                                                                                          \
		"until", required_argument, NULL, OPT_UNTIL                                        \
	}

#endif
