/* SPDX-License-Identifier: GPL-2.0-only */
/* tview.h: a kept profile by thread (tview.c): the samples of each thread with its name and
 * hottest function, and the profile cut to some threads (report --threads, --tid, --comm). */
#ifndef KPROF_TVIEW_H
#define KPROF_TVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

#define TVIEW_NO_FUNC UINT32_MAX

/* Which threads: tid (0: any) and comm, a thread's name exactly (NULL: any; a thread the
 * profile kept no name of matches none); both must hold. */
struct tview_filter {
	uint32_t tid;
	const char *comm;
};

/* The profile cut to the stacks of the threads f lets through: sp is the original's fields
 * (pointing into it, which must outlive the view) with its own array of stacks; target is a
 * copy of the original's with samples set to the stacks' sum. */
struct tview {
	Kprof__SavedProfile sp;
	Kprof__Target target;
	Kprof__SavedStack **stacks;
};

/* One thread of the profile: its tid, its name ("" when the profile kept none), its samples,
 * and its function with the most self samples (index in sp->functions, TVIEW_NO_FUNC when its
 * stacks are empty) with those samples. */
struct tview_thread {
	uint32_t tid;
	const char *name;
	uint64_t samples;
	uint32_t top_func;
	uint64_t top_self;
};

/* The name the profile kept for tid, or "" (never NULL). */
const char *tview_name(const Kprof__SavedProfile *sp, uint32_t tid);
/* sp cut to the threads f lets through, into v (freed with tview_free). 0 or -ENOMEM. */
int tview_filter(const Kprof__SavedProfile *sp, const struct tview_filter *f, struct tview *v);
void tview_free(struct tview *v);
/* The threads of sp's stacks, sorted by samples (descending), then tid: *ret (free()d by the
 * caller; NULL when none) of *n. 0 or -ENOMEM. */
int tview_threads(const Kprof__SavedProfile *sp, struct tview_thread **ret, size_t *n);

#endif
