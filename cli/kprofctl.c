// SPDX-License-Identifier: GPL-2.0-only
/* kprofctl.c: the command line of kprof: one verb, one request to kprofd, one rendered reply.
 *
 * A table maps each verb to its handler and usage line; every handler parses its own options
 * with verbs_getopt (getopt_long, plus -h/--help and errors that name the verb and the option).
 * A verb's help is its section of kprofctl(1), turned into text at build time by
 * cli/manhelp.py (manhelp.h), so `kprofctl VERB --help` and the man page say the same. Exit
 * codes: 0 ok, 1 kprofd refused or failed the request (its message is printed), 2 bad command
 * line, 3 kprofd not reachable.
 *
 * This file holds main, the table, `kprofctl --help` and `kprofctl help`. The verbs are in
 * verbs_targets.c (attach, detach, watch, list, status), verbs_profile.c (report, hcct, folded,
 * top, drift, paths, annotate) and verbs_export.c (export, diff, record); what they share
 * (options, help, the call to kprofd) in verbs.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "client.h"
#include "render.h"
#include "verbs.h"
#include "verbs_export.h"
#include "verbs_profile.h"
#include "verbs_targets.h"

struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;
	const char *help;
};

static void usage(FILE *f);
static int verb_help_verb(int argc, char **argv);

static const struct verb verbs[] = {
    {"attach", verb_attach,
     "PID [--freq HZ] [--duration SEC] [--eps E] [--hcct-kernel] [--no-jvm-map] [--json]\n"
     "          [--children] [--off-cpu] [--calls[=NAME,...|=hot:N] [--burst MS --period MS]\n"
     "          [--force] [--max-slowdown X]]\n"
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
     "          --calls=hot:N: the N hottest JIT functions sampled (1-16), chosen after 1 s;\n"
     "          its probes go off while the target runs over kprofd's budget (1.1x) or\n"
     "          --max-slowdown X (0: none), and back once its work has paid for them"},
    {"detach", verb_detach, "PID [--json] | --cgroup PATH | --unit NAME | --all",
     "stop sampling PID (or watching a cgroup or unit, or system-wide mode with --all:\n"
     "          its targets are detached); profiles are kept"},
    {"list", verb_list, "[--all] [--json]",
     "attached processes; --all adds the kept profiles of ended ones"},
    {"status", verb_status, "[--json]",
     "daemon version, targets, samples/s, ring-buffer drops, own CPU"},
    {"report", verb_report,
     "PID [--top N] [--session N] [--since T] [--until T] [--full-names] [--json]\n"
     "          [--off-cpu | --wall] | --cgroup PATH | --unit NAME | --all [--top N] [...]",
     "flat profile: self and total samples per function (default top 20, 0 = all);\n"
     "          C++ names without their parameter lists unless --full-names;\n"
     "          --cgroup/--unit: the processes of a watched cgroup or unit, merged;\n"
     "          --all: those of system-wide mode (attach --all), merged;\n"
     "          --since/--until: only the kept time windows in that range (10m, \"10m ago\",\n"
     "          11:05, \"2026-11-24 11:05\", @EPOCH, now); default: everything"},
    {"folded", verb_folded,
     "PID [--session N] [--since T] [--until T] [--json] [--off-cpu | --wall]\n"
     "          | PID --lines [--session N] | --cgroup PATH | --unit NAME | --all",
     "folded stacks (root;...;leaf count) for flame graphs (--off-cpu, --wall: in ns)"},
    {"top", verb_top, "[PID...] [--interval MS] [--iterations N] [--full-names] [--json]",
     "live view: functions by self time in the last interval (default 1000 ms), keys\n"
     "          q quit, s sort, p pause, t HCCT tree, / filter, arrows, PgUp/PgDn, Home/End\n"
     "          scroll; --json prints one JSON line per interval instead"},
    {"hcct", verb_hcct,
     "PID [--phi X] [--exact | --off-cpu] [--session N] [--full-names] [--json]\n"
     "          [--lines] [--since T] [--until T]",
     "hot calling contexts: every context with at least phi of the samples (default\n"
     "          0.001, at least the target's eps, set at attach: default 0.0002), as a tree;\n"
     "          --exact: the contexts of the probed calls (attach --calls), --off-cpu: waits"},
    {"paths", verb_paths,
     "PID FUNCTION [--k K] [--duration S] [--budget N] [--top N] [--force] [--json]\n"
     "          [--max-slowdown X]\n"
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
     "          totals from it). A budget keeps the target at most X times slower over\n"
     "          the trace (measured hit cost x hits; --max-slowdown X, default kprofd's\n"
     "          1.1x, 0 for none): the probes go off until its work has paid for them,\n"
     "          then back; the reply says the part of the time they were in. --show\n"
     "          prints the last trace, --stop ends the running one"},
    {"export", verb_export,
     "PID -o FILE [--format pprof|folded|json] [--force] [--session N] [--since T]\n"
     "          [--until T] [--off-cpu] [--base FILE --base-since T --base-until T\n"
     "          --base-pid PID]\n"
     "          | --cgroup PATH | --unit NAME | --all -o FILE [--format ...] [--force]",
     "write the profile to FILE (- for stdout): pprof (gzip, for go tool pprof;\n"
     "          the default), folded stacks, or JSON (functions and per-thread stacks);\n"
     "          pprof is not written to a terminal without --force; --base FILE also\n"
     "          writes the base side (for go tool pprof -diff_base); --off-cpu: off_cpu, wall"},
    {"diff", verb_diff,
     "PID [--since T] [--until T] [--session N] [--top N] [--json]\n"
     "          --base-since T [--base-until T] | --base-pid PID2",
     "function by function: self share of the samples in the base (another time range\n"
     "          or another process) and now, largest changes first (default top 20)"},
    {"record", verb_record,
     "[--freq HZ] [-o FILE] [--format pprof|folded|json|report] [--children] [--full-names]\n"
     "          [--off-cpu] -- CMD [ARG...]",
     "run CMD sampled from its first instruction and write its profile when it exits\n"
     "          (default pprof to kprof.pb.gz); --children follows the processes it\n"
     "          forks; CMD's exit status is kprofctl's"},
    {"watch", verb_watch,
     "list [--json] | add RULE | add --comm NAME | --exe PATH | --uid USER | --cgroup PATH\n"
     "          | --unit NAME [--freq HZ] [--no-jvm-map] [--children] [--off-cpu] [--json]\n       "
     "   | remove ID|RULE",
     "watch rules: every present and future process matching a comm, an executable, a\n"
     "          uid, a cgroup or a unit is attached by kprofd itself (kept across restarts);\n"
     "          RULE is KIND:VALUE [freq=N] [jvm=on|off] [children=on|off] [offcpu=on|off]"},
    {"annotate", verb_annotate, "PID FUNCTION [--top N] [--session N] [--lines] [--json]",
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

	while (verbs_getopt(&st, "help", argc, argv, "", opts) != -1)
		;
	if (st >= 0)
		return st;
	if (optind == argc) {
		usage(stdout);
		return 0;
	}
	if (argc - optind > 1)
		return verbs_usage_error("help", "too many arguments");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[optind], verbs[i].name))
			return verbs_help(verbs[i].name);
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
		"A reply may take %u s, or $KPROF_TIMEOUT seconds (0: no limit).\n"
		"Exit status: 0 ok, 1 kprofd refused or failed the request, 2 bad usage,\n"
		"3 kprofd not reachable.\n",
		DEFAULT_SOCKET, CLIENT_TIMEOUT_SEC);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {},
	};
	struct winsize ws;
	int c;

	/* Text for a terminal fits its width (report's rows). */
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		render_set_columns(ws.ws_col);
	if (getenv("KPROF_SOCKET") && *getenv("KPROF_SOCKET"))
		socket_path = getenv("KPROF_SOCKET");
	if (getenv("KPROF_TIMEOUT") && *getenv("KPROF_TIMEOUT") &&
	    client_set_timeout(getenv("KPROF_TIMEOUT")) < 0) {
		fprintf(stderr,
			"kprofctl: KPROF_TIMEOUT: '%s' is not a number of seconds from 0 (no "
			"limit) to %u\n",
			getenv("KPROF_TIMEOUT"), CLIENT_TIMEOUT_MAX);
		return KPROFCTL_EXIT_USAGE;
	}
	/* Every getopt error is reported by verbs_option_error, which names the verb. */
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
			return verbs_option_error(c, argv, opts);
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
