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

#endif
