/* SPDX-License-Identifier: GPL-2.0-only */
/* sampler.h: kprofd's sampling perf events (sampler.c): a target's per-thread events, and the
 * per-CPU frequency sets. */
#ifndef KPROF_DAEMON_SAMPLER_H
#define KPROF_DAEMON_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KPROF_MAX_FREQ_SETS 8 /* distinct per-CPU sampling frequencies in use at once */

struct loader;
struct sampler;
struct sampler_target;

/* max_thread_events: per-thread events (one fd each) of all targets together. */
int sampler_new(struct loader *l, unsigned max_thread_events, struct sampler **ret);
void sampler_free(struct sampler *s);
/* Per-thread events open now, all targets. */
unsigned sampler_thread_events(const struct sampler *s);

/* Per-CPU sets: make sure a set of per-CPU events at freq exists (reference counted). */
int sampler_freq_get(struct sampler *s, unsigned freq);
void sampler_freq_put(struct sampler *s, unsigned freq);
int sampler_freqs(const struct sampler *s, unsigned *out, int max);

struct sampler_limits {
	unsigned max_threads; /* events of this target */
	unsigned max_total;   /* events of all targets, as far as this target may take them */
};

struct sampler_stats {
	unsigned events;    /* per-thread events open (one fd each) */
	unsigned threads;   /* threads at the last scan */
	unsigned unsampled; /* threads without an event because a limit was reached */
	uint64_t gone;	    /* threads that ended before their event was opened */
	uint64_t scans;
};

/* Open an event on every thread of tgid (in kp_targets with KP_TF_THREADS already, so threads
 * created meanwhile are reported), scanning again until none is missing. Threads beyond the
 * limits are left out and counted. On error errbuf says why. */
int sampler_target_new(struct sampler *s, pid_t tgid, unsigned freq, bool children,
		       const struct sampler_limits *lim, struct sampler_target **ret, char *errbuf,
		       size_t errlen);
/* A KP_REC_THREAD record: thread tid, cloned by creator, started without an event; open one
 * on each that still lacks it (a thread cannot gain an inherited event after its creation, so
 * checking first never gives a thread two). 0 (opened, or nothing to do), -EUSERS (a limit:
 * counted in unsampled), -errno. */
int sampler_target_report(struct sampler_target *st, pid_t tid, pid_t creator);
/* Scan the target's threads again (after reports were lost) and open what is missing. */
int sampler_target_rescan(struct sampler_target *st);
void sampler_target_stats(const struct sampler_target *st, struct sampler_stats *out);
/* Close the target's events (inherited ones go with them). */
void sampler_target_free(struct sampler_target *st);

#endif
