/* SPDX-License-Identifier: GPL-2.0-only */
/* top_draw.h: the screen of kprofctl top (top_draw.c). */
#ifndef KPROF_CLI_TOP_DRAW_H
#define KPROF_CLI_TOP_DRAW_H

#include "top_internal.h"

/* The whole screen from v: the header, the rows or the hot-context tree, the key line. */
void top_draw(struct view *v);

#endif
