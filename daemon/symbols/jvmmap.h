/* SPDX-License-Identifier: GPL-2.0-only */
/* jvmmap.h: a HotSpot target's perf map on demand (jvmmap.c): when kprofd asks the JVM to write
 * it, and what it does with the answer. */
#ifndef KPROF_DAEMON_JVMMAP_H
#define KPROF_DAEMON_JVMMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct config;
struct jvmattach_ctx;
struct jvmmap;
struct tsym;

struct jvmmap_stats {
	bool jvm;	   /* libjvm.so mapped: a HotSpot JVM */
	unsigned asks;	   /* Compiler.perfmap exchanges started */
	unsigned answers;  /* ... answered (the JVM wrote its map) */
	unsigned failures; /* ... not answered in time, refused or failed */
	char note[320];	   /* the frame-pointer hint, why it is not asked, the last failure */
};

/* What jvmmap watches of its target (the target's, alive as long as the jvmmap). */
struct jvmmap_target {
	pid_t pid;
	uint64_t start_ticks;
	struct tsym *sym;	   /* refreshed after each answer */
	const uint64_t *samples;   /* the target's samples ... */
	const uint64_t *unnamed;   /* ... and those whose leaf is code nothing names */
	const struct config *conf; /* [jvm] perfmap, live */
	bool no_ask;		   /* attach --no-jvm-map */
};

/* Look at the process: a HotSpot JVM is asked for its perf map at once (unless turned off). */
int jvmmap_new(struct jvmattach_ctx *ctx, const struct jvmmap_target *t, struct jvmmap **ret);
/* Housekeeping (about every second): ask again, rate-limited, while samples keep landing in
 * unnamed code; look again for a JVM in a process that was none (exec, early attach). */
void jvmmap_tick(struct jvmmap *jm, uint64_t now_ns);
/* The process exec'd: what was known of it is void. */
void jvmmap_exec(struct jvmmap *jm);
/* The target ended: stop asking (an exchange running is cancelled); the counts stay. */
void jvmmap_stop(struct jvmmap *jm);
void jvmmap_free(struct jvmmap *jm);
/* Its counts and note, valid until it changes (the next tick or answer). */
const struct jvmmap_stats *jvmmap_get_stats(const struct jvmmap *jm);

#endif
