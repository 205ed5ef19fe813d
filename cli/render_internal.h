/* SPDX-License-Identifier: GPL-2.0-only */
/* render_internal.h: the small text helpers the render*.c files share and nothing else uses
 * (render.c, render_targets.c, render_profile.c, render_paths.c). Inline, so that the files of
 * kprofctl's output depend on render.c only through render.h. */
#ifndef KPROF_CLI_RENDER_INTERNAL_H
#define KPROF_CLI_RENDER_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

/* Print s left-justified in width columns (characters), through render_sanitize. */
static inline void put_text(FILE *f, const char *s, int width)
{
	size_t n = s ? render_sanitize(f, s, strlen(s), SIZE_MAX) : 0;

	for (; n < (size_t)width; n++)
		fputc(' ', f);
}

static inline double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

#endif
