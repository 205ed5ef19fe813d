// SPDX-License-Identifier: GPL-2.0-only
/* syswide.c: system-wide mode, kprofctl attach --all: every process on the host that gets a
 * sample becomes a target of its own (ARCHITECTURE.md §1.2.5).
 *
 * One per-CPU set (sampler.c) at the mode's frequency (19 Hz by default) interrupts every CPU
 * whatever runs; kp_all_freq tells the sampler that this set also takes the samples of
 * processes that are no target, flagged KP_SF_STRANGER with the process's start. The manager
 * hands such a sample here (on_stranger): the process is attached as an automatic target
 * (attach_opts.all: per-CPU sampled by the same set, within limits.max_auto_targets and
 * max_targets, never a JVM asked for its perf map) and the sample is its first. A process that
 * gets no profile is remembered (pmemo.h) and its samples counted: refused by a limit (then also
 * put in the BPF map kp_all_skip, so that its next samples are counted there and never sent), or
 * gone before kprofd could read it (a short process of a storm). What never gets a profile is
 * counted by the sampler alone: the idle task, kernel threads, kprofd, processes outside
 * kprofd's PID namespace. Every sample of the set is thus in a profile or in a count.
 *
 * A process attached otherwise (a PID, --children, a cgroup, a watch rule) keeps its own
 * settings: its kp_targets entry makes the sampler drop this set's samples of it, and an attach
 * of an --all target takes it over (manager_attach). The automatic targets' bound is shared with
 * the watch rules; the ended ones are kept like any target and dropped first (kept_victim). A
 * storm of short processes costs what the samples cost: at most freq x CPUs attaches a second,
 * most of them failing cheaply on /proc (gone), and counted.
 *
 * The bound holds the processes that run: at a limit, the --all target idle longest (no
 * sample for SYSWIDE_IDLE_SEC) is detached, its profile kept, to make room. Refusals are not
 * forever either: each second, when a limit has room again, the refused processes
 * are forgotten and get a profile at their next sample (a refusal counted again if it happens
 * again).
 *
 * daemon.system_wide = HZ starts the mode with kprofd; a reload that changes it is applied
 * within a second, by the same timer (a detach --all holds until the value changes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/pmemo.h"
#include "os/clock.h"
#include "kernel/loader.h"
#include "os/log.h"
#include "manager/manager.h"
#include "kernel/sampler.h"
#include "manager/syswide.h"

/* Each second: the refused processes are tried again when there is room, and a reload's
 * daemon.system_wide is applied. */
#define RETRY_USEC 1000000ULL
#define WARN_EVERY_NS (10 * 1000000000ULL)

struct syswide {
	struct manager *m;
	struct pmemo *memo;
	sd_event_source *timer;
	bool on, off_cpu;
	unsigned freq, cpus;
	uint64_t waiters; /* processes made targets from a wait (KP_SF_WAITER) */
	uint64_t since_ns;
	uint64_t profiled, refused, refused_samples, gone, gone_samples, late_samples, evicted;
	uint64_t ctr0[KP_CTR_NR];	  /* the BPF counters when it started */
	uint64_t taken0, kept0, samples0; /* the manager's counters when it started */
	uint64_t warned_ns;		  /* last "no profile" warning (CLOCK_MONOTONIC) */
	unsigned conf_freq;		  /* daemon.system_wide as last applied */
};

static bool has_room(const struct manager *m)
{
	return manager_auto_targets(m, NULL) < m->conf.max_auto_targets &&
	       m->n_attached < m->conf.max_targets;
}

/* daemon.system_wide changed (at start, or by a reload): start, stop or restart the mode. */
static void apply_config(struct syswide *sw)
{
	unsigned want = sw->m->conf.system_wide;
	char err[256];

	if (want == sw->conf_freq)
		return;
	sw->conf_freq = want;
	if (sw->on && want != sw->freq)
		syswide_stop(sw);
	if (want && !sw->on && syswide_start(sw, want, false, err, sizeof(err)) < 0)
		log_err("daemon.system_wide = %u: %s", want, err);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct syswide *sw = userdata;

	apply_config(sw);
	if (sw->on && pmemo_count(sw->memo, PMEMO_REFUSED) && has_room(sw->m)) {
		pmemo_forget(sw->memo, PMEMO_REFUSED);
		loader_all_skip_clear(sw->m->loader);
	}
	return sd_event_source_set_time(s, usec + RETRY_USEC);
}

static void refuse(struct syswide *sw, const struct kp_sample *s, int e, const char *why)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	sw->refused++;
	sw->refused_samples++;
	pmemo_put(sw->memo, s->hdr.tgid, s->start_ticks, PMEMO_REFUSED);
	if (loader_all_skip(sw->m->loader, s->hdr.tgid, s->start_ticks) < 0)
		log_debug("system-wide: cannot skip pid %u in BPF", s->hdr.tgid);
	if (!sw->warned_ns || now - sw->warned_ns >= WARN_EVERY_NS) {
		log_warn("system-wide: pid %u (%.16s) gets no profile: %s (%s; counted, see "
			 "kprofctl status)",
			 s->hdr.tgid, s->comm, why, strerror(-e));
		sw->warned_ns = now;
	}
}

/* At a limit: detach the --all target idle longest, if for SYSWIDE_IDLE_SEC or more (its
 * profile is kept; it gets a new session if it runs again). true if one was. */
static bool evict_idle(struct syswide *sw)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), idle = SYSWIDE_IDLE_SEC * 1000000000ULL;
	struct target *victim = NULL;

	for (struct target *t = manager_attached_first(sw->m); t; t = manager_attached_next(t)) {
		uint64_t last = t->last_sample_ns;

		if (!t->all || now < last || now - last < idle)
			continue;
		if (!victim || last < victim->last_sample_ns)
			victim = t;
	}
	if (!victim)
		return false;
	log_debug("system-wide: pid %d (%s) idle for %llu s: detached to make room", victim->pid,
		  victim->comm,
		  (unsigned long long)((now - victim->last_sample_ns) / 1000000000ULL));
	if (manager_detach(sw->m, victim) < 0)
		return false;
	sw->evicted++;
	return true;
}

/* A sample of a process that is no target: make it one, or count the sample. */
static struct target *on_stranger(void *ud, const struct kp_sample *s)
{
	struct syswide *sw = ud;
	struct attach_opts o = {.freq = sw->freq,
				.eps = SYSWIDE_EPS,
				.no_jvm_map = true,
				.all = true,
				.off_cpu = sw->off_cpu,
				.by = 0};
	const bool sample = !(s->flags & KP_SF_WAITER); /* else a wait: no sample to count */
	struct target *t = NULL;
	char err[256] = "";
	int e;

	if (!sw->on) {
		sw->late_samples += sample;
		return NULL;
	}
	switch (pmemo_hit(sw->memo, s->hdr.tgid, s->start_ticks)) {
	case PMEMO_REFUSED:
		sw->refused_samples += sample;
		return NULL;
	case PMEMO_GONE:
		sw->gone_samples += sample;
		return NULL;
	default:
		break;
	}
	e = manager_attach(sw->m, s->hdr.tgid, &o, &t, err, sizeof(err));
	/* A limit (max_auto_targets, max_targets): room from an idle target, once. */
	if ((e == -EUSERS || e == -EMFILE) && evict_idle(sw))
		e = manager_attach(sw->m, s->hdr.tgid, &o, &t, err, sizeof(err));
	if (e == 0 && t->start_ticks != s->start_ticks) { /* gone, and the pid taken since */
		manager_forget(sw->m, t);
		e = -ESRCH;
	}
	if (e == 0) {
		sw->profiled++;
		sw->waiters += !sample;
		return t;
	}
	if (e == -ESRCH || e == -ECHILD || e == -ENOENT) {
		sw->gone++;
		sw->gone_samples += sample;
		pmemo_put(sw->memo, s->hdr.tgid, s->start_ticks, PMEMO_GONE);
		return NULL;
	}
	refuse(sw, s, e, err);
	return NULL;
}

static const struct manager_events events = {
    .on_stranger = on_stranger,
};

int syswide_new(struct manager *m, struct syswide **ret)
{
	struct syswide *sw = calloc(1, sizeof(*sw));
	int err;

	if (!sw)
		return -ENOMEM;
	sw->m = m;
	err = pmemo_new(PMEMO_DEFAULT_SLOTS, &sw->memo);
	if (err >= 0)
		err = sd_event_add_time_relative(m->event, &sw->timer, CLOCK_MONOTONIC, RETRY_USEC,
						 100000, on_retry, sw);
	if (err >= 0)
		err = sd_event_source_set_enabled(sw->timer, SD_EVENT_ON);
	if (err < 0) {
		syswide_free(sw);
		return err;
	}
	err = manager_subscribe(m, &events, sw);
	if (err < 0) {
		syswide_free(sw);
		return err;
	}
	apply_config(sw);
	*ret = sw;
	return 0;
}

void syswide_free(struct syswide *sw)
{
	if (!sw)
		return;
	if (sw->on) {
		loader_all_set(sw->m->loader, 0);
		sampler_freq_put(sw->m->sampler, sw->freq);
		manager_offcpu_all(sw->m, false, NULL, 0);
	}
	manager_unsubscribe(sw->m, &events, sw);
	sd_event_source_disable_unref(sw->timer);
	pmemo_free(sw->memo);
	free(sw);
}

int syswide_start(struct syswide *sw, unsigned freq, bool off_cpu, char *err, size_t errlen)
{
	struct manager *m = sw->m;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int e;

	if (!freq)
		freq = SYSWIDE_DEFAULT_FREQ;
	if (sw->on) {
		snprintf(
		    err, errlen,
		    "system-wide sampling is on already, at %u Hz: kprofctl detach --all first",
		    sw->freq);
		return -EALREADY;
	}
	if (freq > KPROF_MAX_FREQ) {
		snprintf(err, errlen, "frequency %u Hz out of range 1-%u", freq, KPROF_MAX_FREQ);
		return -ERANGE;
	}
	e = sampler_freq_get(m->sampler, freq);
	if (e < 0) {
		snprintf(err, errlen,
			 e == -EBUSY ? "too many distinct per-CPU frequencies in use (%d)"
				     : "cannot open the per-CPU events at %u Hz: %s",
			 e == -EBUSY ? KPROF_MAX_FREQ_SETS : freq, strerror(-e));
		return e;
	}
	if (off_cpu && (e = manager_offcpu_all(m, true, err, errlen)) < 0) {
		sampler_freq_put(m->sampler, freq);
		return e;
	}
	if (loader_counters(m->loader, sw->ctr0, NULL) < 0)
		memset(sw->ctr0, 0, sizeof(sw->ctr0));
	sw->profiled = sw->refused = sw->refused_samples = sw->gone = sw->gone_samples = 0;
	sw->late_samples = sw->evicted = sw->waiters = 0;
	sw->off_cpu = off_cpu;
	sw->taken0 = m->all_taken_over;
	sw->kept0 = m->all_kept_dropped;
	sw->samples0 = m->all_samples;
	pmemo_forget(sw->memo, PMEMO_NONE);
	loader_all_skip_clear(m->loader);
	sw->freq = freq;
	sw->cpus = cpus > 0 ? (unsigned)cpus : 0;
	sw->since_ns = now_ns(CLOCK_REALTIME);
	sw->on = true;
	loader_all_set(m->loader, freq);
	log_info("system-wide sampling on: %u Hz on %u CPUs, at most %u automatic targets "
		 "(limits.max_auto_targets)%s",
		 freq, sw->cpus, m->conf.max_auto_targets,
		 off_cpu ? ", with off-CPU time (processes that wait become targets too)" : "");
	return 0;
}

/* An attached target of system-wide mode, looked for from the start each time (a detach may
 * drop kept targets). */
static struct target *all_target(struct manager *m)
{
	for (struct target *t = manager_attached_first(m); t; t = manager_attached_next(t))
		if (t->all)
			return t;
	return NULL;
}

int syswide_stop(struct syswide *sw)
{
	struct manager *m = sw->m;
	struct target *t;
	int n = 0;

	if (!sw->on)
		return -ENOENT;
	/* The processes whose samples are in the ring buffer become targets first; from then
	 * on a sample of a process that is no target is late (counted) until the set stops
	 * taking them, after its targets are detached: each run of the set counted once. */
	manager_drain(m);
	sw->on = false;
	while ((t = all_target(m)) && manager_detach(m, t) == 0)
		n++;
	loader_all_set(m->loader, 0);
	manager_offcpu_all(m, false, NULL, 0);
	manager_drain(m);
	sampler_freq_put(m->sampler, sw->freq);
	pmemo_forget(sw->memo, PMEMO_NONE);
	loader_all_skip_clear(m->loader);
	log_info("system-wide sampling off: %d processes detached (profiles kept); %llu "
		 "processes profiled, %llu refused, %llu gone before they could be read",
		 n, (unsigned long long)sw->profiled, (unsigned long long)sw->refused,
		 (unsigned long long)sw->gone);
	return n;
}

void syswide_get_stats(const struct syswide *sw, struct syswide_stats *out)
{
	const struct manager *m = sw->m;
	uint64_t ctr[KP_CTR_NR];

	memset(out, 0, sizeof(*out));
	if (!sw->since_ns)
		return;
	if (loader_counters(m->loader, ctr, NULL) < 0)
		memcpy(ctr, sw->ctr0, sizeof(ctr));
	out->on = sw->on;
	out->freq = sw->freq;
	out->cpus = sw->cpus;
	out->since_ns = sw->since_ns;
	out->profiled = sw->profiled;
	out->refused = sw->refused;
	out->refused_samples =
	    sw->refused_samples + ctr[KP_CTR_ALL_SKIPPED] - sw->ctr0[KP_CTR_ALL_SKIPPED];
	out->gone = sw->gone;
	out->gone_samples = sw->gone_samples;
	out->kernel_samples = ctr[KP_CTR_ALL_KTHREAD] - sw->ctr0[KP_CTR_ALL_KTHREAD];
	out->idle_samples = ctr[KP_CTR_ALL_IDLE] - sw->ctr0[KP_CTR_ALL_IDLE];
	out->self_samples = ctr[KP_CTR_ALL_SELF] - sw->ctr0[KP_CTR_ALL_SELF];
	out->foreign_samples = ctr[KP_CTR_ALL_FOREIGN] - sw->ctr0[KP_CTR_ALL_FOREIGN];
	out->taken_over = m->all_taken_over - sw->taken0;
	out->kept_dropped = m->all_kept_dropped - sw->kept0;
	out->late_samples = sw->late_samples;
	out->evicted = sw->evicted;
	out->off_cpu = sw->off_cpu;
	out->waiters = sw->waiters;
	out->samples = m->all_samples - sw->samples0;
	out->runs = ctr[KP_CTR_ALL_TICKS] - sw->ctr0[KP_CTR_ALL_TICKS];
	out->own_samples = ctr[KP_CTR_ALL_OWN] - sw->ctr0[KP_CTR_ALL_OWN];
	out->drops = ctr[KP_CTR_DROPS] - sw->ctr0[KP_CTR_DROPS];
	for (const struct target *t = manager_attached_first(m); t; t = manager_attached_next(t))
		out->targets += t->all;
}
