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

/* kprofctl folded --lines: sp's stacks (checked) as folded text with function:line frames, a
 * caller at its call site's line, a leaf at each sampled address's, inlined functions frames of
 * their own; equal lines merged. 0 or a negative errno. */
int lines_folded(FILE *f, const Kprof__SavedProfile *sp);

/* kprofctl hcct --lines: each context of r whose (parent, context) pair sp's call sites say was
 * called from one site gets that site's lines (HcctNode.call_site, pointing into sp). 0 or
 * -ENOMEM. */
int lines_call_sites(Kprof__HcctReply *r, const Kprof__SavedProfile *sp);

/* annotate --lines: source files read for their lines' text, the last one kept. */
struct lines_src {
	char path[4096];
	char *text;
	size_t len;
	char line[512];
};
int lines_source_open(struct lines_src *ls);
void lines_source_close(struct lines_src *ls);
/* The text of line of file (an absolute path; ud: a struct lines_src), or NULL if it cannot be
 * read; valid until the next call. */
const char *lines_source(const char *file, uint32_t line, void *ud);

#endif
