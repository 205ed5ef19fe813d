/* SPDX-License-Identifier: GPL-2.0-only */
/* probecost.h: the CPU time a probe hit costs a thread on this host, measured (probecost.c). */
#ifndef KPROF_DAEMON_PROBECOST_H
#define KPROF_DAEMON_PROBECOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loader;

enum probecost_kind {
	PROBECOST_UPROBE, /* a uprobe with the path tracer's program (file-backed code) */
	PROBECOST_HWBP,	  /* a hardware execute breakpoint with its program (anonymous code) */
	PROBECOST_CALL,	  /* exact mode's entry uprobe or return probe, on a JIT-like entry */
	PROBECOST_NR,
};

/* The cost of one hit of kind, ns of the hitting thread's CPU time: measured at the first call
 * (a child of kprofd runs a loop with and without the probe, in rounds; about 0.1 s of CPU),
 * then kept. 0 when it cannot be measured (logged once). */
uint64_t probecost_hit_ns(struct loader *l, enum probecost_kind kind);
/* A probing mode's budget (pcost.h), from the slowdown asked for (0: kprofd's default dflt,
 * < 0: none, else 1.01 to PCOST_MAX_SLOWDOWN) and the cost of a hit of its kind (measured now
 * if not yet). No cost measured: kprofd's default goes (logged when the measure failed). */
struct probecost_budget {
	uint64_t hit_ns; /* 0: could not be measured */
	double max;	 /* 0: none */
	bool max_default;
};
/* 0, or -EINVAL (out of range), -EOPNOTSUPP (asked for, but no cost measured): err says. */
int probecost_budget(struct loader *l, enum probecost_kind kind, double asked, double dflt,
		     struct probecost_budget *b, char *err, size_t errlen);
/* 0 when hardware breakpoints count hits on this host (or it could not be told), -EOPNOTSUPP
 * with err when the measure's breakpoint was on the CPU and counted none: some hypervisors do
 * not pass debug traps to their guests. Measures as probecost_hit_ns does. */
int probecost_hwbp_check(struct loader *l, char *err, size_t errlen);
/* "uprobe", "hardware breakpoint" or "call probe". */
const char *probecost_name(enum probecost_kind kind);

#endif
