/* SPDX-License-Identifier: GPL-2.0-only */
/* render_profile.h: `report` and `hcct` replies as text or JSON (render_profile.c). */
#ifndef KPROF_CLI_RENDER_PROFILE_H
#define KPROF_CLI_RENDER_PROFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* Text (json false) shows names as render_names does, or whole with full_names; JSON always
 * shows them whole. */
void render_report(FILE *f, const Kprof__ReportReply *r, bool json, bool full_names);
void render_hcct(FILE *f, const Kprof__HcctReply *r, bool json, bool full_names);

#endif
