/* SPDX-License-Identifier: GPL-2.0-only */
/* target_drift.h: a target's drift work outside its samples (target_drift.c). */
#ifndef KPROF_TARGET_DRIFT_H
#define KPROF_TARGET_DRIFT_H

#include "kernel/sampler.h"
#include "target/target.h"

/* Housekeeping: look for the basic blocks of the functions the drift detector began following
 * (file-backed JIT code only, driftcode.c), up to 8 a call. */
void target_drift_tick(struct target *t);
/* A path trace's event: its path id to the path-mix detector (ALGORITHMS.md §12.1). */
void target_drift_path(struct target *t, const struct kp_path *p);

#endif
