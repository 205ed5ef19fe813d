/* SPDX-License-Identifier: GPL-2.0-only */
/* pmemo.h: a bounded memo of processes that got no profile in system-wide mode (pmemo.c).
 *
 * kprofctl attach --all makes every process that gets a sample a target. A process kprofd could
 * not make one (a limit refused it, or it was gone before kprofd could read it) keeps sending
 * samples until kprofd knows: the memo says so at the next one without a new try, and counts
 * them. Processes are named by pid and start (a pid alone may be reused). A fixed table of slots,
 * direct-mapped by a hash of both: a new entry takes the slot of whatever was there (that process
 * is tried again at its next sample, and counted again). Pure: no I/O, no globals.
 */
#ifndef KPROF_PMEMO_H
#define KPROF_PMEMO_H

#include <stddef.h>
#include <stdint.h>

#define PMEMO_DEFAULT_SLOTS 4096

enum pmemo_why {
	PMEMO_NONE = 0,
	PMEMO_REFUSED = 1, /* a limit: no profile was given */
	PMEMO_GONE = 2,	   /* exited before kprofd could read it */
	PMEMO_NR = 3,
};

struct pmemo;

/* slots: a power of two, 1 to 1 << 20 (0: PMEMO_DEFAULT_SLOTS). 0, -EINVAL or -ENOMEM. */
int pmemo_new(size_t slots, struct pmemo **ret);
void pmemo_free(struct pmemo *p);
/* Why pid (started at start) is in the memo, PMEMO_NONE if not; a hit counts one sample. */
enum pmemo_why pmemo_hit(struct pmemo *p, uint32_t pid, uint64_t start);
/* Remember pid (started at start) for why: 0, 1 when it took the slot of another process,
 * -EINVAL for pid 0 or a bad why. */
int pmemo_put(struct pmemo *p, uint32_t pid, uint64_t start, enum pmemo_why why);
/* Forget every entry of why (PMEMO_NONE: all). */
void pmemo_forget(struct pmemo *p, enum pmemo_why why);
/* Entries of why now (PMEMO_NONE: all). */
size_t pmemo_count(const struct pmemo *p, enum pmemo_why why);

#endif
