/* SPDX-License-Identifier: GPL-2.0-only */
/* hwpaths.h: branch and loop-path profiles of JIT code in anonymous memory, by hardware
 * breakpoints on the conditional branches of its loops (hwpaths.c); the path tracer (paths.c)
 * runs it for code uprobes cannot reach. */
#ifndef KPROF_DAEMON_HWPATHS_H
#define KPROF_DAEMON_HWPATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/cfg.h"
#include "kprof/hwbranch.h"
#include "kprof/ksf.h"
#include "kprof/tidtab.h"

#define HWPATHS_THREAD_SLOTS 2048 /* open addressing; at most half used */
#define HWPATHS_MAX_LOCAL 4096	  /* distinct iterations that leave a loop */
#define HWPATHS_CHECK_MS 250	  /* the code is compared this often */
#define HWPATHS_MIN_ON_MS 50	  /* a turn ends once it was on this long (or its whole time) */

struct hwpaths_thread {
	uint32_t tid;  /* 0: free */
	uint32_t turn; /* the stretch and turn of its last hit (the low 18 bits of a record) */
	struct ksf_ctx ctx;
	struct hwbranch_walk walk;
};

struct hwpaths_local { /* an iteration that leaves its loop: no Ball-Larus id */
	uint32_t n;
	struct cfg_step *steps;
};

/* A turn: the branches whose breakpoints are on together; loop != CFG_NONE: that loop's
 * paths are followed, with the branches of assume[] (per block; NULL: none) taken as constant. */
struct hwpaths_turn {
	uint32_t n, br[HWBRANCH_SLOTS]; /* plan indices */
	uint32_t loop;
	uint8_t *assume;
};

struct hwpaths {
	pid_t pid;
	struct loader *loader;
	const struct cfg *cfg;
	struct ksf *ksf;
	uint8_t *code; /* as read when the trace began */
	size_t len;
	uint64_t start;
	uint32_t id; /* events carry id << 18 | stretch << 10 | turn (id: 14 bits) */
	struct hwbranch_plan plan;
	struct hwbp_set *set;
	/* Turns in order: one per group of the plan (counting), then, for the loops with more
	 * branches than registers, one per loop whose branches that went both ways fit, the
	 * others assumed (the second half of the duration and budget). */
	struct hwpaths_turn turns[HWBRANCH_MAX];
	size_t turn, nturns, ncount;
	bool second_half; /* loops that did not fit: half the time is kept for assumed turns */
	/* turn_start: when the turn began (its time runs from there); turn_since: when its
	 * breakpoints last went on (its covered time runs from there) */
	uint64_t turn_ns, turn_budget, turn_events, turn_start, turn_since;
	bool paused;	  /* the budget took the breakpoints off (paths.c) */
	uint32_t stretch; /* times the breakpoints went on */
	uint64_t duration_ns, budget, started_ns;
	sd_event_source *timer;
	void (*stop)(void *arg, const char *reason); /* ends the trace (paths_stop) */
	void *stop_arg;
	/* per branch of the plan */
	uint64_t taken[HWBRANCH_MAX], not_taken[HWBRANCH_MAX], covered_ns[HWBRANCH_MAX];
	/* per turn: its loop's activations while on, and how long it was on */
	uint64_t group_acts[HWBRANCH_MAX], group_ns[HWBRANCH_MAX];
	/* per turn that follows a loop: executions of each block (cfg index) in the iterations it
	 * followed (allocated at its first path), for the loop's event counts (events.h) */
	uint64_t *runs[HWBRANCH_MAX];
	struct hwpaths_thread **threads; /* HWPATHS_THREAD_SLOTS, by their slot in tids */
	struct tidtab tids;
	struct hwpaths_local *local;
	size_t nlocal;
	uint64_t events, stray, late, lost_threads, activations, path_events, aborted;
	char stopped[256];   /* why the breakpoints went early (code changed, ...) */
	char turn_desc[128]; /* what the turn on does */
	/* paths --structural: the structure graphs take the turns instead (hwstruct.c) */
	struct hwstruct *st;
};

/* Plan and start: breakpoints on the first group; err says why not (no loop with a flag
 * branch, debug registers taken, ...). */
int hwpaths_start(struct hwpaths *h, sd_event *event, char *err, size_t errlen);
void hwpaths_on_event(struct hwpaths *h, const struct kp_hwbp *ev);
/* Breakpoints off for now (the budget), and back: the turns' clock goes on meanwhile, the
 * covered time stops; each thread starts afresh when they are back. */
void hwpaths_pause(struct hwpaths *h);
int hwpaths_resume(struct hwpaths *h, char *err, size_t errlen);
/* Breakpoints off (the trace ended); the counts stay. */
void hwpaths_stop(struct hwpaths *h);
/* The steps of path id (a Ball-Larus id of the function, or one of the loop-leaving
 * iterations above it): n, or a negative errno. */
int hwpaths_decode(const struct hwpaths *h, uint64_t id, struct cfg_step *steps, size_t cap);
/* How long branch i of the plan was covered, the running turn included. */
uint64_t hwpaths_covered(const struct hwpaths *h, size_t i);
void hwpaths_free(struct hwpaths *h);

#endif
