/* SPDX-License-Identifier: GPL-2.0-only */
/* render_spp.h: a `paths` reply with its event counts and structural profile (render_spp.c). */
#ifndef KPROF_CLI_RENDER_SPP_H
#define KPROF_CLI_RENDER_SPP_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* render_paths, then the event counts (text: with events, `paths --events`; JSON: always) and
 * the structural profile when the reply has one. */
void render_paths_ex(FILE *f, const Kprof__PathsReply *r, bool json, bool events);

#endif
