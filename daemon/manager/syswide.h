/* SPDX-License-Identifier: GPL-2.0-only */
/* syswide.h: system-wide mode, kprofctl attach --all (syswide.c). */
#ifndef KPROF_DAEMON_SYSWIDE_H
#define KPROF_DAEMON_SYSWIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The default frequency: perf's and Parca's habit, off the beat of timers at round rates. */
#define SYSWIDE_DEFAULT_FREQ 19
/* The HCCT bound of its targets: 1000 counters, not 5000 ([hcct] eps): a process profiled at
 * 19 Hz rarely has more samples than that, and a busy host has hundreds of them. */
#define SYSWIDE_EPS 0.001
/* At a limit, an --all target without a sample for this long is detached (its profile kept)
 * to make room for a process that runs: the bound holds the processes that run, not the first
 * ones seen. */
#define SYSWIDE_IDLE_SEC 60

struct manager;
struct syswide;

/* What system-wide mode did since it last started (all zero before). */
struct syswide_stats {
	bool on;
	unsigned freq, cpus;
	uint64_t since_ns;		   /* CLOCK_REALTIME */
	unsigned targets;		   /* its targets attached now */
	uint64_t profiled;		   /* processes made targets */
	uint64_t refused, refused_samples; /* a limit refused them a profile */
	uint64_t gone, gone_samples;	   /* gone before kprofd could read them */
	uint64_t kernel_samples, idle_samples, self_samples, foreign_samples;
	uint64_t taken_over, kept_dropped;
	uint64_t evicted;      /* idle targets detached to make room (SYSWIDE_IDLE_SEC) */
	uint64_t samples;      /* added to its targets' profiles */
	uint64_t runs;	       /* runs of the sampler on its set: every sample below is one */
	uint64_t own_samples;  /* in processes attached otherwise (their own settings) */
	uint64_t drops;	       /* lost to a full ring buffer (all of kprofd's, not only its) */
	uint64_t late_samples; /* of no target, after it stopped */
	bool off_cpu;	       /* attach --all --off-cpu */
	uint64_t waiters;      /* processes made targets when they left a CPU (off_cpu) */
};

/* Subscribes to m's strangers (manager_events.h: on_stranger); off until syswide_start.
 * main.c sets m->sw for the requests. */
int syswide_new(struct manager *m, struct syswide **ret);
void syswide_free(struct syswide *sw);
/* Start at freq Hz (0: SYSWIDE_DEFAULT_FREQ), its targets with off-CPU time if off_cpu (and
 * then also the processes that wait without being sampled): -EALREADY, -ERANGE, -EBUSY (the
 * per-CPU sets in use), -errno, with why in err. */
int syswide_start(struct syswide *sw, unsigned freq, bool off_cpu, char *err, size_t errlen);
/* Stop: its targets are detached (profiles kept), how many; -ENOENT if it is off. */
int syswide_stop(struct syswide *sw);
void syswide_get_stats(const struct syswide *sw, struct syswide_stats *out);

#endif
