/* SPDX-License-Identifier: GPL-2.0-only */
/* annotate.h: per-instruction samples of one target's functions (annotate.c). */
#ifndef KPROF_DAEMON_ANNOTATE_H
#define KPROF_DAEMON_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symbolize.h"
#include "kprof/annot.h"
#include "kprof/annview.h"
#include "kprof/profile.h"

/* Limits of a target's store (annot.h): 64K sampled addresses, 2 MiB of code. */
#define ANNOTATE_MAX_ADDRS 65536
#define ANNOTATE_MAX_CODE (2u << 20)
#define ANNOTATE_MAX_FUNC (64u << 10) /* a function's code read at once; more: a page */

/* Copies of code asked for by the samples of one drain, made at its end (see annotate.c). */
struct annotate_queue;
int annotate_queue_new(struct annotate_queue **ret);
void annotate_queue_free(struct annotate_queue *q);

/* One sample's user leaf: addr in function id (the profile's), below when its self went to a
 * frame under it. On the first sample of (id, addr) the function's extent is looked up (sym,
 * NULL once the target's symbols are gone) and a copy of its code is queued on q unless held. */
void annotate_sample(struct annot *a, struct annotate_queue *q, struct tsym *sym, uint32_t id,
		     uint64_t addr, bool below);
/* The process exec'd: the queued copies are of code that is gone; they are dropped. */
void annotate_exec(struct annotate_queue *q);
/* The queued copies made from process pid, each only while uid may read its memory
 * (procfs_read_mem_for); the queue is empty after. A file's code is shared through cs (NULL:
 * not shared) with uid's other targets: taken from there when one of them read it, else read
 * and put there. */
struct codeshare;
void annotate_flush(struct annot *a, struct annotate_queue *q, pid_t pid, uid_t uid,
		    struct codeshare *cs);

struct annotate_src {
	struct annot *a;
	struct profile *p;
	struct tsym *sym; /* NULL once the target's symbols are gone */
	pid_t pid;
	uid_t uid;  /* who may read the reply: the process is read only while it is its */
	bool alive; /* the process may still be read (its code compared) */
};

struct annotate_result {
	uint32_t id; /* the profile's function */
	const struct profile_func *f;
	uint64_t lo, hi;
	bool extent_known; /* a symbol gave the extent (else: from the lowest sample on) */
	struct annview *view;
	size_t captured;       /* bytes as kept from the first samples */
	size_t read_now;       /* bytes not kept, read from the process now */
	bool compared;	       /* the kept bytes were compared with the process's code now */
	size_t changed;	       /* kept bytes that differ now */
	uint64_t first_change; /* address of the first of them */
	size_t breakpoints;    /* bytes that differ because they are int3 now (a probe) */
	unsigned others;       /* other sampled functions of that name (the hottest is shown) */
	struct annot_stats st;
};

/* Annotate function: an exact name, else a whole word of function names (the hottest of those),
 * else the one sampled function whose name contains it; or an address 0x... inside a sampled
 * function. -ENOENT (err says which functions come close),
 * -ENOMEM, or annview_build's error; err says why. */
int annotate_query(const struct annotate_src *src, const char *function,
		   struct annotate_result *res, char *err, size_t errlen);
void annotate_result_release(struct annotate_result *res);

#endif
