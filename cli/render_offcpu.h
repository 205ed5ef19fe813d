/* SPDX-License-Identifier: GPL-2.0-only */
/* render_offcpu.h: off-CPU and wall-clock views (render_offcpu.c): `report --off-cpu`,
 * `report --wall` and `folded --wall`. */
#ifndef KPROF_CLI_RENDER_OFFCPU_H
#define KPROF_CLI_RENDER_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* A duration in a unit that fits: "812 us", "12.5 ms", "3.20 s". buf of 32 bytes. */
const char *render_offcpu_time(uint64_t ns, char buf[32]);
/* report --off-cpu: off is the reply of an off-CPU report (counts: nanoseconds). report
 * --wall: cpu the reply of the sample report too, its counts weighted by the sampling period
 * and added to the off-CPU times of the same functions. */
void render_offcpu_report(FILE *f, const Kprof__ReportReply *off, const Kprof__ReportReply *cpu,
			  unsigned top, bool json);
/* folded --wall: the CPU stacks under "[running]" with count * period nanoseconds, then the
 * off-CPU stacks (each under its state). */
void render_offcpu_wall_folded(FILE *f, const char *cpu, uint32_t freq_hz, const char *off);

#endif
