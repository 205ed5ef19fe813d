/* SPDX-License-Identifier: GPL-2.0-only */
/* render_paths.h: a `paths` reply as text or JSON (render_paths.c). */
#ifndef KPROF_CLI_RENDER_PATHS_H
#define KPROF_CLI_RENDER_PATHS_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

void render_paths(FILE *f, const Kprof__PathsReply *r, bool json);
/* The paths JSON object of render_paths without its closing brace (for render_spp.c). */
void render_paths_json_open(FILE *f, const Kprof__PathsReply *r);

#endif
