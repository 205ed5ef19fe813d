/* SPDX-License-Identifier: GPL-2.0-only */
/* exact.h: exact mode (exact.c): uprobes at every JIT function entry and return, and hardware
 * breakpoints at the entries of those in anonymous memory; an opaque object with its timers. */
#ifndef KPROF_DAEMON_EXACT_H
#define KPROF_DAEMON_EXACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/hcct.h"

struct calls;
struct loader;
struct profile;
struct tsym;

/* What exact mode needs of its target and of the daemon, given at creation; the pointers are
 * the target's and the daemon's and outlive it. */
struct calls_env {
	pid_t pid;
	struct tsym *sym;	 /* its perf map: the functions to probe */
	struct profile *profile; /* their ids (the probes' cookies), the samples hot:N picks from */
	struct loader *loader;
	sd_event *event;     /* the loop of the burst, warm-up and breakpoint timers */
	uint32_t hcct_slots; /* of the exact HCCT */
	double max_slowdown; /* the budget unless the attach gives one (pcost.h); 0: none */
	/* Probes went in (the caller drains their events sooner); ctx is given back. */
	void (*probes_in)(void *ctx);
	void *ctx;
};

/* What an attach asks of exact mode. */
struct calls_opts {
	/* NULL or "": every JIT function of the perf map; "NAME,...": those; "hot:N": the N
	 * hottest JIT functions sampled, chosen after a warm-up. */
	const char *functions;
	bool force;		      /* probe even where the code file is also mapped writable */
	unsigned burst_ms, period_ms; /* probes in for burst_ms of every period_ms; 0: always */
	double max_slowdown;	      /* the budget: 1.01-100; 0: the env's; < 0: none */
};

/* Plan exact mode for a target (the probes are not in yet: calls_start); err says why not. */
int calls_new(const struct calls_env *env, const struct calls_opts *o, struct calls **ret,
	      char *err, size_t errlen);
/* The functions planned to be probed by uprobes (0 before hot:N's choice). */
size_t calls_nprobes(const struct calls *c);
/* Probes in and the burst timer armed, or hot:N's warm-up begun; err says why not. */
int calls_start(struct calls *c, char *err, size_t errlen);
/* The target ended: probes off for good, the timers stopped; the results stay. */
void calls_end(struct calls *c);
/* Everything freed (NULL: nothing). */
void calls_free(struct calls *c);

/* A probe hit; nfuncs: the profile's functions (ids at or above are ignored). */
void calls_on_event(struct calls *c, const struct kp_call *ev, size_t nfuncs);

/* The calls counted per function id (*n of them; NULL when none). */
const uint64_t *calls_counts(const struct calls *c, size_t *n);
/* The exact HCCT: live (NULL for a restored profile), or a restored profile's snapshot. */
const struct hcct *calls_tree(const struct calls *c);
const struct hcct_tree *calls_saved_tree(const struct calls *c);
/* Whether hardware breakpoints count (or counted) some of the functions. */
bool calls_by_breakpoints(const struct calls *c);
/* Is addr one of its hardware breakpoints now (a sample there is the cost of its trap)? */
bool calls_breakpoint_at(const struct calls *c, uint64_t addr);
/* Memory of its trees. */
uint64_t calls_memory(const struct calls *c);

/* What exact mode did: its replies' figures, and what a saved profile keeps. */
struct calls_stats {
	uint64_t events, unmatched_exits;
	/* Events lost on the way (ring buffer full: gaps in a thread's numbers), received but
	 * left out of the tree (their thread in frames a loss hid, or over the thread table), and
	 * of a probe set not all in (attaching or being removed: neither counted nor in the tree).
	 */
	uint64_t lost, skipped, outside;
	uint64_t bursts;	/* 0 without --burst */
	size_t probes;		/* functions probed by uprobes */
	unsigned hot;		/* hot:N still warming up: N */
	double duty;		/* the fraction of the time the probes were in */
	uint32_t hw_functions;	/* counted by hardware breakpoints, */
	bool hw_estimated;	/* estimated (they took turns), */
	double hw_covered;	/* each counted this fraction of the time, */
	const char *hw_stopped; /* why the breakpoints stopped ("": they did not); the object's */
	/* What the probes cost (pcost.h): their hits since the first went in, a hit's cost as
	 * measured on this host (the mean over the kinds hit; 0: unknown), the hits a second of
	 * that time, the slowdown they imply over it (0: unknown); the budget (0: none), and how
	 * often it took the probes off (and whether they are off for it now). */
	uint64_t hits;
	uint64_t hit_ns;
	const char *cost_kind;
	double hits_per_s;
	double slowdown;
	double max_slowdown;
	bool max_slowdown_default; /* kprofd's, not the attach's */
	uint64_t budget_offs;
	bool budget_off;
};
void calls_get_stats(const struct calls *c, struct calls_stats *s);
/* Exact mode of a restored profile: its figures, counts (ncounts of them) and tree, which it
 * takes (on success). */
int calls_restore(const struct calls_stats *s, uint64_t *counts, size_t ncounts,
		  struct hcct_tree *tree, struct calls **ret);

#endif
