// SPDX-License-Identifier: GPL-2.0-only
/* loader.c: the BPF side of kprofd: skeleton open/load/attach, sampling event sets, targets.
 *
 * One BPF object serves every target. A "frequency set" is one cpu-clock perf event per online
 * CPU (pid = -1, frequency mode) with kp_sample attached and the frequency as its attach cookie;
 * a target sampled at F Hz is in kp_targets with freq = F, so only set F samples it. Sets are
 * reference counted by the targets using them and closed with the last one. The lifecycle
 * programs (exit, exec) are attached once at load. Nothing is pinned: if kprofd dies, the
 * kernel drops every event and link with its file descriptors.
 *
 * The ring buffer is sized by what can arrive in it (rbsize.h): the CPUs, the highest sampling
 * frequency and the drain interval, within a bound (daemon.ringbuf_max_mb, 8 MiB by default,
 * RBSIZE_LIMIT_MB at most), or set explicitly (daemon.ringbuf_size).
 *
 * A pid is not a process: a kp_targets entry also holds the process's start time (clock ticks
 * after boot, /proc/PID/stat field 22), which the BPF programs compare with the running task's, and
 * kp_exit deletes the entry when that process ends. A process that reuses the pid is then never
 * sampled, even while kprofd is stalled and has not handled the exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kprof/config.h"
#include "kprof/rbsize.h"
#include "loader.h"
#include "log.h"
#include "kprof.skel.h"

struct freq_set {
	unsigned freq;
	unsigned refs;
	int *fds;
	struct bpf_link **links;
};

struct loader {
	struct kprof_bpf *skel;
	int ncpus;   /* possible CPUs: size of per-CPU map values */
	int nonline; /* CPUs with an event */
	unsigned rb_bytes;
	struct freq_set sets[KPROF_MAX_FREQ_SETS];
};

/* The ring buffer's size: explicit, or from what can arrive (both logged). */
static int ringbuf_size(const struct loader_opts *o, unsigned *bytes)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	struct rbsize_in in = {
	    .ncpus = online > 0 ? online : 1,
	    .max_freq = o->max_freq,
	    .record_bytes = RBSIZE_RECORD_BYTES,
	    .interval_ms = o->drain_ms,
	    .max_bytes = o->ringbuf_max_bytes,
	};
	uint64_t limit = (uint64_t)RBSIZE_LIMIT_MB << 20, b;
	struct rbsize r;
	int err;

	if (o->ringbuf_bytes) {
		err = rbsize_explicit(o->ringbuf_bytes, getpagesize(), limit, &b);
		if (err < 0) {
			log_err(
			    "ring buffer: %llu bytes asked (daemon.ringbuf_size), more than the %u "
			    "MiB of locked kernel memory kprofd may take",
			    (unsigned long long)o->ringbuf_bytes, RBSIZE_LIMIT_MB);
			return err;
		}
		*bytes = b;
		log_info("ring buffer: %llu KiB as configured (daemon.ringbuf_size)",
			 (unsigned long long)b >> 10);
		return 0;
	}
	err = rbsize_compute(&in, &r);
	if (err < 0) {
		log_err("ring buffer: cannot size it for %u CPUs, %u Hz, bound %llu bytes",
			in.ncpus, in.max_freq, (unsigned long long)in.max_bytes);
		return err;
	}
	*bytes = r.bytes;
	if (r.capped)
		log_info("ring buffer: %llu MiB, the bound (daemon.ringbuf_max_mb): %u CPUs at %u "
			 "Hz could send %.0f MiB in %u ms; kprofd is woken at an eighth full, and "
			 "loses (and counts) samples only when it falls %u ms behind that rate",
			 (unsigned long long)r.bytes >> 20, in.ncpus, in.max_freq,
			 r.need / 1048576.0, in.interval_ms, rbsize_hold_ms(&in, r.bytes * 7 / 8));
	else
		log_info("ring buffer: %llu KiB, what %u CPUs at %u Hz can send in %u ms",
			 (unsigned long long)r.bytes >> 10, in.ncpus, in.max_freq, in.interval_ms);
	return 0;
}

int loader_new(const struct loader_opts *o, struct loader **ret)
{
	struct loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0) {
		err = l->ncpus ? l->ncpus : -ENODEV;
		goto fail;
	}
	err = ringbuf_size(o, &l->rb_bytes);
	if (err < 0)
		goto fail;
	l->skel = kprof_bpf__open();
	if (!l->skel) {
		err = -errno;
		log_err("BPF: cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	l->skel->rodata->kp_wakeup_bytes = l->rb_bytes / 8;
	/* The kernel's nsec_to_clock_t for /proc/PID/stat: USER_HZ divides a second exactly. */
	l->skel->rodata->kp_nsec_per_tick = 1000000000ULL / sysconf(_SC_CLK_TCK);
	err = bpf_map__set_max_entries(l->skel->maps.kp_events, l->rb_bytes);
	if (err < 0)
		goto fail;
	err = kprof_bpf__load(l->skel);
	if (err < 0) {
		log_err("BPF: cannot load the BPF programs: %s (root, CAP_BPF and CAP_PERFMON "
			"are needed)",
			strerror(-err));
		goto fail;
	}
	err = kprof_bpf__attach(l->skel);
	if (err < 0) {
		log_err("BPF: cannot attach the exit/exec programs: %s", strerror(-err));
		goto fail;
	}
	*ret = l;
	return 0;
fail:
	loader_free(l);
	return err;
}

static void set_close(struct freq_set *s, int ncpus)
{
	for (int i = 0; s->links && i < ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (int i = 0; s->fds && i < ncpus; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->links);
	free(s->fds);
	memset(s, 0, sizeof(*s));
}

void loader_free(struct loader *l)
{
	if (!l)
		return;
	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++)
		set_close(&l->sets[i], l->ncpus);
	kprof_bpf__destroy(l->skel);
	free(l);
}

struct bpf_program *loader_call_prog(const struct loader *l, bool ret)
{
	return ret ? l->skel->progs.kp_call_return : l->skel->progs.kp_call_enter;
}

struct bpf_program *loader_path_prog(const struct loader *l)
{
	return l->skel->progs.kp_path_block;
}

struct bpf_map *loader_path_edges(const struct loader *l)
{
	return l->skel->maps.kp_path_edges;
}

struct bpf_map *loader_path_threads(const struct loader *l)
{
	return l->skel->maps.kp_path_threads;
}

int loader_ringbuf_fd(const struct loader *l)
{
	return bpf_map__fd(l->skel->maps.kp_events);
}

unsigned loader_ringbuf_bytes(const struct loader *l)
{
	return l->rb_bytes;
}

int loader_ncpus(const struct loader *l)
{
	return l->ncpus;
}

static int set_open(struct loader *l, struct freq_set *s, unsigned freq)
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

	s->freq = freq;
	s->fds = malloc(l->ncpus * sizeof(*s->fds));
	s->links = calloc(l->ncpus, sizeof(*s->links));
	if (!s->fds || !s->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < l->ncpus; cpu++) {
		s->fds[cpu] =
		    syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (s->fds[cpu] < 0) {
			err = -errno;
			if (err == -ENODEV) /* offline CPU */
				continue;
			log_err("perf_event_open(cpu-clock, %u Hz, cpu %d): %s%s", freq, cpu,
				strerror(-err),
				err == -EINVAL ? " (above kernel.perf_event_max_sample_rate?)"
					       : "");
			return err;
		}
		s->links[cpu] = bpf_program__attach_perf_event_opts(l->skel->progs.kp_sample,
								    s->fds[cpu], &opts);
		if (!s->links[cpu]) {
			err = -errno;
			log_err("attaching the sampler to cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		opened++;
	}
	if (!opened)
		return err ? err : -ENODEV;
	l->nonline = opened;
	return 0;
}

int loader_freq_get(struct loader *l, unsigned freq)
{
	struct freq_set *free_slot = NULL;
	int err;

	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++) {
		if (l->sets[i].refs && l->sets[i].freq == freq) {
			l->sets[i].refs++;
			return 0;
		}
		if (!l->sets[i].refs && !free_slot)
			free_slot = &l->sets[i];
	}
	if (!free_slot)
		return -EBUSY;
	err = set_open(l, free_slot, freq);
	if (err < 0) {
		set_close(free_slot, l->ncpus);
		return err;
	}
	free_slot->refs = 1;
	log_info("sampling at %u Hz on %d CPUs", freq, l->nonline);
	return 0;
}

void loader_freq_put(struct loader *l, unsigned freq)
{
	for (int i = 0; i < KPROF_MAX_FREQ_SETS; i++) {
		if (l->sets[i].refs && l->sets[i].freq == freq) {
			if (--l->sets[i].refs == 0) {
				set_close(&l->sets[i], l->ncpus);
				log_info("stopped sampling at %u Hz", freq);
			}
			return;
		}
	}
}

int loader_freqs(const struct loader *l, unsigned *out, int max)
{
	int n = 0;

	for (int i = 0; i < KPROF_MAX_FREQ_SETS && n < max; i++)
		if (l->sets[i].refs)
			out[n++] = l->sets[i].freq;
	return n;
}

int loader_target_add(struct loader *l, pid_t tgid, unsigned freq, uint64_t start_ticks)
{
	struct kp_target v = {.freq = freq, .start_ticks = start_ticks};
	__u32 key = tgid;

	if (bpf_map__update_elem(l->skel->maps.kp_targets, &key, sizeof(key), &v, sizeof(v),
				 BPF_ANY) < 0)
		return -errno;
	return 0;
}

int loader_target_del(struct loader *l, pid_t tgid)
{
	__u32 key = tgid;

	if (bpf_map__delete_elem(l->skel->maps.kp_targets, &key, sizeof(key), 0) < 0 &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

int loader_counters(const struct loader *l, uint64_t ctr[KP_CTR_NR], uint64_t *per_cpu_drops)
{
	__u64 *vals = calloc(l->ncpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < KP_CTR_NR; k++) {
		ctr[k] = 0;
		if (bpf_map__lookup_elem(l->skel->maps.kp_counters, &k, sizeof(k), vals,
					 l->ncpus * sizeof(*vals), 0) < 0) {
			int err = -errno;

			free(vals);
			return err;
		}
		for (int c = 0; c < l->ncpus; c++) {
			ctr[k] += vals[c];
			if (k == KP_CTR_DROPS && per_cpu_drops)
				per_cpu_drops[c] = vals[c];
		}
	}
	free(vals);
	return 0;
}
