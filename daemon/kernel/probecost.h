/* SPDX-License-Identifier: GPL-2.0-only */
/* probecost.h: the CPU time a probe hit costs a thread on this host, measured (probecost.c). */
#ifndef KPROF_DAEMON_PROBECOST_H
#define KPROF_DAEMON_PROBECOST_H

#include <stdint.h>

struct loader;

enum probecost_kind {
	PROBECOST_UPROBE, /* a uprobe with the path tracer's program (file-backed code) */
	PROBECOST_HWBP,	  /* a hardware execute breakpoint with its program (anonymous code) */
	PROBECOST_NR,
};

/* The cost of one hit of kind, ns of the hitting thread's CPU time: measured at the first call
 * (a child of kprofd runs a loop with and without the probe, in rounds; about 0.1 s of CPU),
 * then kept. 0 when it cannot be measured (logged once). */
uint64_t probecost_hit_ns(struct loader *l, enum probecost_kind kind);
/* "uprobe" or "hardware breakpoint". */
const char *probecost_name(enum probecost_kind kind);

#endif
