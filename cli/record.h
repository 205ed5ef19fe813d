/* SPDX-License-Identifier: GPL-2.0-only */
/* record.h: kprofctl record, a command sampled from its first instruction (record.c). */
#ifndef KPROF_CLI_RECORD_H
#define KPROF_CLI_RECORD_H

#include <stdbool.h>

#include "proto/kprof.pb-c.h"

struct record_opts {
	/* Send a request to kprofd, print its error if any: 0 with *rep, else an exit code. */
	int (*call)(const Kprof__Request *req, Kprof__Reply **rep);
	unsigned freq;	    /* 0: the daemon's default */
	bool children;	    /* follow the processes it forks (the default; --no-children) */
	bool no_jvm_map;    /* attach --no-jvm-map */
	bool off_cpu;	    /* attach --off-cpu: the export has its off-CPU profile too */
	const char *format; /* pprof, folded, json or report */
	const char *output; /* a path, or "-" for stdout */
	unsigned top;	    /* report: functions shown (0: all) */
	bool full_names;    /* report: C++ names with their parameter lists */
};

/* Run argv (argv[0] looked up in PATH) sampled from its first instruction, then write its
 * profile as o says. Returns kprofctl's exit code: the command's status, 128 + N after signal
 * N, 126/127 if it could not be run; a failure of kprofd or of the writing when the command
 * itself succeeded. */
int record_run(const struct record_opts *o, char **argv);

#endif
