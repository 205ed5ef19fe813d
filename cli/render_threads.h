/* SPDX-License-Identifier: GPL-2.0-only */
/* render_threads.h: `report --threads`, a profile's samples per thread, as text or JSON
 * (render_threads.c). */
#ifndef KPROF_CLI_RENDER_THREADS_H
#define KPROF_CLI_RENDER_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kprof/tview.h"
#include "proto/kprof.pb-c.h"

/* The threads t[0..n) of sp (tview_threads), at most top rows (0: all), out of total samples
 * (the profile's, all threads): TID, SAMPLES, SHARE, the hottest function's share of the
 * thread and name, the thread's name; after target's line (NULL: none, a merged profile).
 * JSON: one object, every row shown. */
void render_threads(FILE *f, const Kprof__Target *target, const Kprof__SavedProfile *sp,
		    const struct tview_thread *t, size_t n, unsigned top, uint64_t total,
		    bool json);

#endif
