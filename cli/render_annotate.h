/* SPDX-License-Identifier: GPL-2.0-only */
/* render_annotate.h: kprofctl annotate's text and JSON (render_annotate.c). */
#ifndef KPROF_CLI_RENDER_ANNOTATE_H
#define KPROF_CLI_RENDER_ANNOTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* The annotation; top: blocks in the hottest-first summary (0: every block with samples). */
void render_annotate(FILE *f, const Kprof__AnnotateReply *r, bool json, uint32_t top);
/* The same, the text of a source line from src (NULL, or it returns NULL: none shown). */
typedef const char *(*annotate_src_fn)(const char *file, uint32_t line, void *ud);
void render_annotate_src(FILE *f, const Kprof__AnnotateReply *r, bool json, uint32_t top,
			 annotate_src_fn src, void *ud);

#endif
