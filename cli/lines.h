/* SPDX-License-Identifier: GPL-2.0-only */
/* lines.h: source lines for kprofctl's pprof export through the kprof-lines helper (lines.c). */
#ifndef KPROF_CLI_LINES_H
#define KPROF_CLI_LINES_H

#include <stdbool.h>
#include <stdio.h>

#include "kprof/pprof.h"

struct lines;

/* A resolver for pprof_build_lines (lines->pl), for the profile of process pid (0: unknown).
 * -ENOENT when the helper program is not found, -ENOMEM. */
int lines_new(uint32_t pid, struct lines **ret, struct pprof_lines *pl);
void lines_free(struct lines *l);

/* kprofctl report --lines: sp's self samples per source line (the innermost frame's file:line
 * of each sampled leaf address; perf report -s srcline), the top of them (0: all), as text or
 * JSON. 0, or a negative errno. */
int lines_report(FILE *f, const Kprof__SavedProfile *sp, uint32_t top, bool json);

#endif
