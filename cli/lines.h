/* SPDX-License-Identifier: GPL-2.0-only */
/* lines.h: kprofctl report --lines (lines.c). */
#ifndef KPROF_CLI_LINES_H
#define KPROF_CLI_LINES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* sp's self samples per source line (the innermost frame's file:line of each sampled leaf
 * address, as kprofd resolved them; perf report -s srcline), the top of them (0: all), as text
 * or JSON, then the notes of kprofd's resolver. 0, or a negative errno. */
int lines_report(FILE *f, const Kprof__SavedProfile *sp, uint32_t top, bool json);

#endif
