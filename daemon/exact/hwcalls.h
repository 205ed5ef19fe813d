/* SPDX-License-Identifier: GPL-2.0-only */
/* hwcalls.h: exact call counts of JIT functions in anonymous memory, by hardware execute
 * breakpoints at their entries (hwcalls.c), for exact mode (exact.c). */
#ifndef KPROF_DAEMON_HWCALLS_H
#define KPROF_DAEMON_HWCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#define HWCALLS_MAX 64	       /* functions counted by breakpoints per target */
#define HWCALLS_ROTATE_MS 100  /* a group's turn when there are more than four */
#define HWCALLS_SYNC_MS 250    /* counts read back this often when they fit at once */
#define HWCALLS_CHECK_BYTES 16 /* code bytes compared at every turn: recompiled or freed? */

struct hwcalls_func {
	uint32_t id; /* profile function id */
	uint64_t addr;
	char *name;
	uint8_t code[HWCALLS_CHECK_BYTES]; /* as when planned */
	uint64_t counted, covered_ns;	   /* closed turns */
};

struct hwcalls {
	pid_t pid;
	struct hwcalls_func *f;
	size_t n;
	size_t group; /* the group on (or next) */
	uint64_t turns;
	struct hwbp_set *set;
	uint64_t on_since_ns, on_ns; /* hardware counting: since when (0: off), and before */
	sd_event_source *timer;
	uint64_t **countsp; /* where the timer writes the counts (exact mode's, per id) */
	size_t *ncountsp;
	char stopped[256]; /* why counting stopped for good ("" while it goes on) */
};

/* A new function to count (-E2BIG above HWCALLS_MAX, -EFAULT if its code cannot be read). */
int hwcalls_add(struct hwcalls *h, uint32_t id, uint64_t addr, const char *name, char *err,
		size_t errlen);
/* Breakpoints on (the current group), and its turn or sync timer on event, which writes the
 * counts to *countsp; err says why not. */
int hwcalls_on(struct hwcalls *h, sd_event *event, char *err, size_t errlen);
/* Breakpoints off; the counts of the turn kept. */
void hwcalls_off(struct hwcalls *h);
/* Write every function's count (exact, or estimated from its share of the time) to
 * counts[id] (growing *counts up to nfuncs). */
void hwcalls_sync(struct hwcalls *h, uint64_t **counts, size_t *ncounts);
/* Estimated (more functions than registers, taken in turns)? The mean fraction of the
 * counting time each function was counted. */
bool hwcalls_estimated(const struct hwcalls *h);
/* The breakpoints' hits so far (what they cost the target: each one a debug trap). */
uint64_t hwcalls_hits(const struct hwcalls *h);
double hwcalls_covered(const struct hwcalls *h);
void hwcalls_free(struct hwcalls *h);

#endif
