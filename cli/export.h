/* SPDX-License-Identifier: GPL-2.0-only */
/* export.h: a kept profile written out as a file (export.c). */
#ifndef KPROF_CLI_EXPORT_H
#define KPROF_CLI_EXPORT_H

#include <stdbool.h>

#include "proto/kprof.pb-c.h"

/* Whether a pprof export resolves source lines (kprofctl export --no-lines: not). */
extern bool export_lines;
/* Write sp as format ("pprof", "folded", "json") to path ("-": stdout). */
int export_profile(const Kprof__SavedProfile *sp, const char *format, const char *path);
/* With off (attach --off-cpu's profile, counts in nanoseconds): pprof has both, with the
 * sample types samples, cpu, off_cpu and wall; folded and json are off's alone. off NULL:
 * export_profile. */
int export_offcpu(const Kprof__SavedProfile *sp, const Kprof__SavedProfile *off,
		  const char *format, const char *path);

#endif
