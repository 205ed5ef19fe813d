/* SPDX-License-Identifier: GPL-2.0-only */
/* hwstruct.h: structural path profiling (spp.h) of a JIT function in anonymous memory, one
 * structure graph at a time, by hardware breakpoints on that graph's own branches (hwstruct.c);
 * the branch tracer (hwpaths.c) runs it for `paths --structural`. */
#ifndef KPROF_DAEMON_HWSTRUCT_H
#define KPROF_DAEMON_HWSTRUCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/cfg.h"
#include "kprof/hwspp.h"
#include "kprof/spp.h"
#include "kprof/tidtab.h"
#include "kernel/hwbp.h"

#define HWSTRUCT_MAX_GRAPHS 64
#define HWSTRUCT_MAX_CONDS 64	 /* own conditional branches of one graph */
#define HWSTRUCT_THREADS 256	 /* threads walked per turn (open addressing, half used) */
#define HWSTRUCT_CHECK_MS 100	 /* turn limits and the code are checked this often */
#define HWSTRUCT_MIN_COUNT_MS 50 /* shortest counting turn */
#define HWSTRUCT_MIN_ON_MS 50	 /* a turn ends once it was on this long (or its whole limit) */

enum hwstruct_kind { HWSTRUCT_ENTRY = 1, HWSTRUCT_JCC, HWSTRUCT_ARRIVE };

struct hwstruct_slot {
	uint64_t addr;
	uint32_t block; /* CFG_NONE for the entry */
	uint8_t kind, cc;
};

/* What the reply shows of each structure graph. */
struct hwstruct_graph {
	bool planned, built, count; /* count: more own branches than slots: counted first */
	struct hwspp_graph *walk;   /* NULL: not profiled (note says why) */
	uint8_t *assume;	    /* per block (enum hwspp_cover) */
	uint32_t nconds, conds[HWSTRUCT_MAX_CONDS];
	uint8_t cc[HWSTRUCT_MAX_CONDS];
	uint64_t taken[HWSTRUCT_MAX_CONDS], not_taken[HWSTRUCT_MAX_CONDS];
	uint32_t nslots, nassumed;
	struct hwstruct_slot slots[HWBP_SLOTS];
	uint64_t ns, hits, paths, given_up, turns;
	char note[200];
};

struct hwstruct_thread {
	uint32_t tid; /* 0: free */
	bool synced;  /* a turn with the entry breakpoint: the thread's first call seen */
	struct hwspp_walk w;
};

struct hwstruct {
	pid_t pid;
	struct loader *loader;
	const struct cfg *cfg;
	struct spp *spp;
	const uint8_t *code; /* the function's bytes as read at the start (owned by the caller) */
	size_t len;
	uint64_t start;
	uint32_t id; /* events carry id << 10 | turn */
	/* turn_start: when the turn began (its time limit runs from there); turn_since: when its
	 * breakpoints last went on (its graph's time runs from there) */
	uint64_t duration_ns, turn_ns, count_ns, started_ns, turn_start, turn_since;
	bool paused;	  /* the budget took the breakpoints off (paths.c) */
	uint64_t turn_on; /* the turn's time on, its breakpoints in, before turn_since */
	void (*stop)(void *arg, const char *reason);
	void *stop_arg;
	sd_event_source *timer;
	struct hwbp_set *set;
	uint32_t ngraphs;
	struct hwstruct_graph gr[HWSTRUCT_MAX_GRAPHS];
	/* counting turns first (graph, first cond), then one graph at a time */
	uint32_t count_graph[HWSTRUCT_MAX_GRAPHS * HWSTRUCT_MAX_CONDS / HWBP_SLOTS + 1];
	uint32_t count_first[HWSTRUCT_MAX_GRAPHS * HWSTRUCT_MAX_CONDS / HWBP_SLOTS + 1];
	uint32_t ncount, count_turn;
	int cur;       /* graph on, -1 when a counting turn (or nothing) is */
	uint32_t turn; /* turns opened so far */
	uint32_t nslots;
	struct hwstruct_slot slots[HWBP_SLOTS]; /* the turn's breakpoints */
	struct hwstruct_thread *threads; /* HWSTRUCT_THREADS, by their slot in tids */
	struct tidtab tids;
	uint64_t hits, late, stray, lost_threads, paths, given_up, unsynced;
	bool next, has_entry;
	/* has_entry: the turn on has the function's entry breakpoint */ /* the graph on is
									    done: next turn
									    after this event */
	char stopped[256];
	char turn_desc[160];
};

/* Plan every graph and open the first turn; err says why not. */
int hwstruct_start(struct hwstruct *s, sd_event *event, char *err, size_t errlen);
void hwstruct_on_event(struct hwstruct *s, const struct kp_hwbp *ev);
/* Breakpoints off for now (the budget), and back on the same turn. */
void hwstruct_pause(struct hwstruct *s);
int hwstruct_resume(struct hwstruct *s, char *err, size_t errlen);
/* Breakpoints off; the profile stays in s->spp. */
void hwstruct_stop(struct hwstruct *s);
/* Free what start allocated (not s itself). */
void hwstruct_release(struct hwstruct *s);

#endif
