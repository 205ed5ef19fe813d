/* SPDX-License-Identifier: GPL-2.0-only */
/* render_offcpu.h: off-CPU and wall-clock views (render_offcpu.c): `report --off-cpu`,
 * `report --wall`, their `--threads` and `folded --wall`. */
#ifndef KPROF_CLI_RENDER_OFFCPU_H
#define KPROF_CLI_RENDER_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kprof/tview.h"
#include "proto/kprof.pb-c.h"

/* A duration in a unit that fits: "812 us", "12.5 ms", "3.20 s". buf of 32 bytes. */
const char *render_offcpu_time(uint64_t ns, char buf[32]);
/* report --off-cpu: off is the reply of an off-CPU report (counts: nanoseconds). report
 * --wall: cpu the reply of the sample report too, its counts weighted by the sampling period
 * and added to the off-CPU times of the same functions. */
void render_offcpu_report(FILE *f, const Kprof__ReportReply *off, const Kprof__ReportReply *cpu,
			  unsigned top, bool json);
/* The state of an off-CPU stack (its root frame "[sleeping]", ...: enum kp_offcpu_state's
 * order), -1 if it has none. */
int render_offcpu_state(const Kprof__SavedProfile *off, const Kprof__SavedStack *s);
#define RENDER_OFFCPU_NSTATES 5
/* The states of off's stacks added up into ns[RENDER_OFFCPU_NSTATES]: t (a copy of off's
 * target, for a view of some of its threads) says off's own off-CPU time, not the process's. */
void render_offcpu_view_target(const Kprof__SavedProfile *off, Kprof__Target *t, uint64_t *ns);
/* report --threads --off-cpu (cpu NULL) or --wall: one row a thread, heaviest first, from
 * tview_threads of the off-CPU profile off (nanoseconds) and of the CPU one (samples, each
 * period_ns): its tid, wall (CPU + off-CPU), CPU and off-CPU times, share, name, the state it
 * waited in most and the function it waited in most (the leaf of its waits). */
struct render_offcpu_threads {
	const Kprof__Target *target; /* its line; NULL: none */
	const Kprof__SavedProfile *off;
	const struct tview_thread *ot, *ct;
	size_t not, nct;
	uint64_t period_ns;
	bool wall;
};
void render_offcpu_threads(FILE *f, const struct render_offcpu_threads *r, unsigned top,
			   bool json);
/* folded --wall: the CPU stacks under "[running]" with count * period nanoseconds, then the
 * off-CPU stacks (each under its state). */
void render_offcpu_wall_folded(FILE *f, const char *cpu, uint32_t freq_hz, const char *off);

#endif
