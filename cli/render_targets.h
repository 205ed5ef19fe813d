/* SPDX-License-Identifier: GPL-2.0-only */
/* render_targets.h: `list` and `status` replies as text or JSON (render_targets.c). */
#ifndef KPROF_CLI_RENDER_TARGETS_H
#define KPROF_CLI_RENDER_TARGETS_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

void render_list(FILE *f, const Kprof__ListReply *r, bool json);
void render_status(FILE *f, const Kprof__StatusReply *r, bool json);

#endif
