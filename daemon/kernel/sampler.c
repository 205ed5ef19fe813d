// SPDX-License-Identifier: GPL-2.0-only
/* sampler.c: kprofd's sampling perf events, the two kinds kp_sample runs on (ARCHITECTURE.md
 * §1.2).
 *
 * Per-thread events (the default for an attached process): one cpu-clock event per thread of
 * the target (pid = TID, cpu = -1, frequency mode), with inherit and inherit_thread, so the
 * threads it creates from then on get a copy with the sampler attached (child processes do
 * not). A thread costs an interrupt only while it runs: a sleeping target costs nothing.
 * A target that follows its children (attach --children) opens them without inherit_thread:
 * the processes it forks inherit them too and are sampled from their first instruction (a
 * child has no events of its own then; when the target that holds them ends, the children
 * still attached are scanned again and get their own).
 *
 * The threads come from kp_scan_threads, which lists those that lack the event; one is opened
 * on each (disabled, the sampler attached with PERF_EVENT_IOC_SET_BPF, then enabled) and the
 * scan runs again, since threads created meanwhile by a thread that had no event yet have
 * none, until none is missing. A thread created later without the event (its creator was
 * still being opened) is reported by kp_thread_new; sampler_target_report then opens one on
 * the creator and one on the thread, each only after checking that it still lacks one: a
 * thread inherits only when it is created, so no thread gets two.
 *
 * The fds stay open until the target ends, also those of threads that ended: closing an event
 * also removes the copies its threads' children inherited. Each event is one fd; a target
 * holds at most max_threads, all targets max_total; threads left out are counted.
 *
 * Per-CPU sets (kept for a system-wide mode, and for kernels without the thread programs): a
 * "frequency set" is one cpu-clock event per online CPU (pid = -1) with kp_sample attached and
 * the frequency as its attach cookie; a target sampled at F Hz is in kp_targets with freq = F,
 * so only set F samples it. Sets are reference counted by the targets using them. Every CPU is
 * interrupted at F Hz whether a target runs or not.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kernel/loader.h"
#include "os/log.h"
#include "kernel/sampler.h"

#define SCAN_ROUNDS 8 /* scans of a target at attach; each opens what the last found missing */

struct freq_set {
	unsigned freq;
	unsigned refs;
	int *fds;
	struct bpf_link **links;
};

struct sampler {
	struct loader *loader;
	int ncpus;   /* possible CPUs */
	int nonline; /* CPUs with an event in the last set opened */
	struct freq_set sets[KPROF_MAX_FREQ_SETS];
	unsigned thread_events, max_thread_events;
	time_t fd_warned; /* last "out of fds" message */
};

struct sampler_target {
	struct sampler *s;
	pid_t tgid;
	unsigned freq;
	struct sampler_limits lim;
	bool children; /* its events are inherited by the processes it forks too */
	int *fds;
	unsigned nfds, cap;
	struct sampler_stats st;
};

int sampler_new(struct loader *l, unsigned max_thread_events, struct sampler **ret)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->loader = l;
	s->ncpus = loader_ncpus(l);
	s->max_thread_events = max_thread_events;
	*ret = s;
	return 0;
}

static void set_close(struct freq_set *fs, int ncpus)
{
	for (int i = 0; fs->links && i < ncpus; i++)
		bpf_link__destroy(fs->links[i]);
	for (int i = 0; fs->fds && i < ncpus; i++)
		if (fs->fds[i] >= 0)
			close(fs->fds[i]);
	free(fs->links);
	free(fs->fds);
	memset(fs, 0, sizeof(*fs));
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++)
		set_close(&s->sets[i], s->ncpus);
	free(s);
}

unsigned sampler_thread_events(const struct sampler *s)
{
	return s->thread_events;
}

static int set_open(struct sampler *s, struct freq_set *fs, unsigned freq)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .freq = 1,
	    .sample_freq = freq,
	};
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = freq);
	int opened = 0, err = 0;

	fs->freq = freq;
	fs->fds = malloc(s->ncpus * sizeof(*fs->fds));
	fs->links = calloc(s->ncpus, sizeof(*fs->links));
	if (!fs->fds || !fs->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		fs->fds[cpu] = -1;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		fs->fds[cpu] =
		    syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fs->fds[cpu] < 0) {
			err = -errno;
			if (err == -ENODEV) /* offline CPU */
				continue;
			log_err("perf_event_open(cpu-clock, %u Hz, cpu %d): %s%s", freq, cpu,
				strerror(-err),
				err == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)"
					       : "");
			return err;
		}
		fs->links[cpu] = bpf_program__attach_perf_event_opts(loader_sample_prog(s->loader),
								     fs->fds[cpu], &opts);
		if (!fs->links[cpu]) {
			err = -errno;
			log_err("attaching the sampler to cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		opened++;
	}
	if (!opened)
		return err ? err : -ENODEV;
	s->nonline = opened;
	return 0;
}

int sampler_freq_get(struct sampler *s, unsigned freq)
{
	struct freq_set *free_slot = NULL;
	int err;

	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++) {
		if (s->sets[i].refs && s->sets[i].freq == freq) {
			s->sets[i].refs++;
			return 0;
		}
		if (!s->sets[i].refs && !free_slot)
			free_slot = &s->sets[i];
	}
	if (!free_slot)
		return -EBUSY;
	err = set_open(s, free_slot, freq);
	if (err < 0) {
		set_close(free_slot, s->ncpus);
		return err;
	}
	free_slot->refs = 1;
	log_info("sampling at %u Hz on %d CPUs (per-CPU events)", freq, s->nonline);
	return 0;
}

void sampler_freq_put(struct sampler *s, unsigned freq)
{
	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++) {
		if (s->sets[i].refs && s->sets[i].freq == freq) {
			if (--s->sets[i].refs == 0) {
				set_close(&s->sets[i], s->ncpus);
				log_info("stopped sampling at %u Hz (per-CPU events)", freq);
			}
			return;
		}
	}
}

int sampler_freqs(const struct sampler *s, unsigned *out, int max)
{
	int n = 0;

	for (int i = 0; i < KPROF_MAX_FREQ_SETS && n < max; i++)
		if (s->sets[i].refs)
			out[n++] = s->sets[i].freq;
	return n;
}

static bool at_limit(const struct sampler_target *st)
{
	const struct sampler *s = st->s;

	return st->nfds >= st->lim.max_threads || s->thread_events >= st->lim.max_total ||
	       s->thread_events >= s->max_thread_events;
}

/* One event on thread tid: 0, -ESRCH (the thread is gone), -EUSERS (a limit), -errno. */
static int thread_open(struct sampler_target *st, pid_t tid)
{
	struct sampler *s = st->s;
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .freq = 1,
	    .sample_freq = st->freq,
	    .disabled = 1,
	    .inherit = 1,
	    .inherit_thread = !st->children,
	};
	int fd, err;

	if (tid <= 0) /* pid 0 would be kprofd itself */
		return -EINVAL;
	if (at_limit(st))
		return -EUSERS;
	if (st->nfds == st->cap) {
		unsigned cap = st->cap ? st->cap * 2 : 16;
		int *fds;

		if (cap > st->lim.max_threads)
			cap = st->lim.max_threads;
		fds = realloc(st->fds, cap * sizeof(*fds));
		if (!fds)
			return -ENOMEM;
		st->fds = fds;
		st->cap = cap;
	}
	fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -EMFILE || err == -ENFILE) {
			time_t now = time(NULL);

			if (now - s->fd_warned >= 10) {
				log_warn(
				    "pid %d: no fd left for a sampling event (%d thread events "
				    "open): threads left unsampled",
				    st->tgid, s->thread_events);
				s->fd_warned = now;
			}
			return -EUSERS;
		}
		return err;
	}
	/* Threads created between the open and SET_BPF copy the event without the program:
	 * kp_scan_threads counts them as missing, and they get their own. */
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(loader_sample_prog(s->loader))) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	st->fds[st->nfds++] = fd;
	s->thread_events++;
	return 0;
}

/* Open events on the threads a scan found missing: the count opened, or -errno when none
 * could be and the reason is not a limit or a thread gone. */
static int open_missing(struct sampler_target *st, const struct kp_scan *r, const uint64_t *tids)
{
	unsigned n = r->missing < KP_SCAN_MAX ? r->missing : KP_SCAN_MAX;
	int opened = 0, err = 0;

	for (unsigned i = 0; i < n; i++) {
		int e = thread_open(st, (pid_t)tids[i]);

		if (e == 0)
			opened++;
		else if (e == -ESRCH)
			st->st.gone++;
		else if (e == -EUSERS)
			break;
		else if (!err)
			err = e;
	}
	return opened || !err ? opened : err;
}

/* Scan and open until nothing is missing, nothing more can be opened, or SCAN_ROUNDS. */
static int scan_open(struct sampler_target *st)
{
	const uint64_t *tids;
	struct kp_scan r;
	int err;

	for (int round = 0;; round++) {
		err = loader_scan_threads(st->s->loader, st->tgid, 0, &r, &tids);
		if (err < 0)
			return err;
		st->st.scans++;
		st->st.threads = r.threads;
		st->st.unsampled = r.missing;
		log_debug("pid %d: scan %d: %u threads, %u without an event (first %u)", st->tgid,
			  round, r.threads, r.missing, r.missing ? (unsigned)tids[0] : 0);
		if (!r.missing || round == SCAN_ROUNDS)
			return 0;
		err = open_missing(st, &r, tids);
		if (err < 0)
			return err;
		if (err == 0) /* nothing opened: limits, or every missing thread gone */
			return 0;
	}
}

int sampler_target_new(struct sampler *s, pid_t tgid, unsigned freq, bool children,
		       const struct sampler_limits *lim, struct sampler_target **ret, char *errbuf,
		       size_t errlen)
{
	struct sampler_target *st = calloc(1, sizeof(*st));
	int err;

	if (!st) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	*st = (struct sampler_target){
	    .s = s, .tgid = tgid, .freq = freq, .lim = *lim, .children = children};
	err = scan_open(st);
	/* None opened for threads that lack one; a followed child may need none: it inherited
	 * its parent's. */
	if (err >= 0 && !st->nfds && st->st.unsampled)
		err = -EUSERS;
	if (err == -ESRCH)
		snprintf(errbuf, errlen, "pid %d exited while its threads were being set up", tgid);
	else if (err == -EUSERS)
		snprintf(errbuf, errlen,
			 "pid %d: no sampling event could be opened (%u thread events open, "
			 "limit %u)",
			 tgid, s->thread_events, lim->max_total);
	else if (err < 0)
		snprintf(errbuf, errlen, "pid %d: cannot open its sampling events: %s%s", tgid,
			 strerror(-err),
			 err == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)" : "");
	if (err < 0) {
		sampler_target_free(st);
		return err;
	}
	*ret = st;
	return 0;
}

/* Open an event on thread tid of the target if it still lacks one: 0 (opened, nothing to do,
 * or the thread is gone), -EUSERS (a limit), -errno. */
static int thread_add(struct sampler_target *st, pid_t tid)
{
	const uint64_t *tids;
	struct kp_scan r;
	int err;

	err = loader_scan_threads(st->s->loader, st->tgid, tid, &r, &tids);
	if (err == -ESRCH) {
		st->st.gone++;
		return 0;
	}
	if (err < 0 || !r.missing)
		return err;
	err = thread_open(st, tid);
	if (err == -ESRCH) {
		st->st.gone++;
		return 0;
	}
	return err;
}

int sampler_target_report(struct sampler_target *st, pid_t tid, pid_t creator)
{
	int err;

	/* The creator first: the threads it creates next then inherit. Its refusal was
	 * counted when a scan left it out. */
	err = thread_add(st, creator);
	if (err < 0 && err != -EUSERS)
		return err;
	err = thread_add(st, tid);
	if (err == -EUSERS)
		st->st.unsampled++;
	return err;
}

int sampler_target_rescan(struct sampler_target *st)
{
	return scan_open(st);
}

void sampler_target_stats(const struct sampler_target *st, struct sampler_stats *out)
{
	*out = st->st;
	out->events = st->nfds;
}

void sampler_target_free(struct sampler_target *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < st->nfds; i++)
		close(st->fds[i]);
	st->s->thread_events -= st->nfds;
	free(st->fds);
	free(st);
}
