// SPDX-License-Identifier: GPL-2.0-only
/* loader.c: the BPF side of kprofd: skeleton open/load/attach, the ring buffer's size, the
 * targets map, the counters and the thread scan.
 *
 * One BPF object serves every target. The lifecycle programs (exit, exec) and the thread
 * watcher (task_newtask) are attached once at load; the sampler is attached to perf events by
 * sampler.c, exact mode's and the path tracer's uprobes by exact.c and paths.c. Nothing is
 * pinned: if kprofd dies, the kernel drops every event and link with its file descriptors.
 *
 * The ring buffer is sized by what can arrive in it (rbsize.h): the CPUs, the highest sampling
 * frequency and the drain interval, within a bound (daemon.ringbuf_max_mb, 8 MiB by default,
 * RBSIZE_LIMIT_MB at most), or set explicitly (daemon.ringbuf_size).
 *
 * A pid is not a process: a kp_targets entry also holds the process's start time (clock ticks
 * after boot, /proc/PID/stat field 22), which the BPF programs compare with the running task's, and
 * kp_exit deletes the entry when that process ends. A process that reuses the pid is then never
 * sampled, even while kprofd is stalled and has not handled the exit.
 *
 * What the kernel has is probed before the load (features.c), and what it lacks is left out or
 * replaced, down to Linux 5.10:
 *  - per-thread sampling needs kp_scan_threads and kp_thread_new (threads.bpf.c), which use the
 *    task iterator (Linux 6.7), the single perf context of a task (6.2) and syscall programs
 *    (5.14): on an older kernel they are left out and only the per-CPU sets sample;
 *  - without attach cookies (5.15) kp_has_cookie is 0: the sampler tells its sets apart by their
 *    events' frequency, and uprobes find their cookie by address in kp_probe_cookies, which
 *    loader_uprobe_attach fills (the map is left at one entry when the cookies serve);
 *  - the cgroup watch reads the layout of struct cgroup the kernel has (lifecycle.bpf.c).
 * A load that fails all the same is explained from libbpf's messages (bpferr.h): the program and
 * what this kernel lacks, with the version that has it; the privilege hint only for EPERM/EACCES.
 *
 * In a PID namespace other than the initial one (a container), the pids kprofd is given and
 * shows are its namespace's, which the kernel's BPF helpers do not give: the programs read them
 * from the tasks' struct pid at the level of kprofd's namespace (kprof.bpf.h, pidns.bpf.c). The
 * loader finds the namespace, refuses to start where that cannot work (no bpf_task_from_vpid,
 * Linux 6.13, or a /proc that is not the namespace's), and has kp_pidns_probe find its level
 * before anything is attached. In the initial namespace none of this is loaded or run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kprof/bpferr.h"
#include "kprof/cleanup.h"
#include "kprof/rbsize.h"
#include "kernel/features.h"
#include "kernel/loader.h"
#include "os/log.h"
#include "kprof.skel.h"

struct loader {
	struct kprof_bpf *skel;
	int ncpus; /* possible CPUs: size of per-CPU map values */
	unsigned rb_bytes;
	struct features feat;
	bool threads_ok;
	const uint64_t *scan_tids; /* kp_scan_tids, mmapped */
	size_t scan_len;
	/* Off-CPU time (offcpu.bpf.c): the sched_switch program, attached only while a target
	 * asks; tp_btf unless the kernel's BTF lacks the tracepoint or KPROF_OFFCPU=raw_tp. */
	struct bpf_link *offcpu_link;
	bool offcpu_btf;
	const char *offcpu_type; /* of the attached program, NULL while none is */
	uint32_t call_epoch; /* the last exact-mode epoch given (kp_call_epochs), any target's */
};

/* The initial PID namespace's inode number (the kernel's PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO 0xEFFFFFFCU

/* kprofd's PID namespace: *ino = 0 in the initial one, else its inode number, if the BPF
 * programs can give its pids (why, and -EOPNOTSUPP, if not). */
static int pidns_find(uint32_t *ino, char *why, size_t len)
{
	char self[32], want[32];
	struct stat st;
	struct btf *btf;
	ssize_t n;
	bool vpid;

	if (stat("/proc/self/ns/pid", &st) < 0) {
		int err = -errno;

		snprintf(why, len, "cannot read /proc/self/ns/pid: %s", strerror(-err));
		return err;
	}
	*ino = st.st_ino == PIDNS_INIT_INO ? 0 : st.st_ino;
	if (!*ino)
		return 0;
	/* /proc must show this namespace's pids: every pid kprofd reads or is given is one. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "%d", getpid());
	if (n <= 0 || strcmp(self, want)) {
		snprintf(why, len,
			 "kprofd is in a PID namespace (pid:[%u]) but /proc is not mounted for it "
			 "(/proc/self is %s, kprofd is pid %s): mount a procfs of that namespace",
			 *ino, n > 0 ? self : "unreadable", want);
		return -EOPNOTSUPP;
	}
	btf = btf__load_vmlinux_btf();
	vpid = btf && btf__find_by_name_kind(btf, "bpf_task_from_vpid", BTF_KIND_FUNC) >= 0;
	btf__free(btf);
	if (!vpid) {
		snprintf(why, len,
			 "kprofd is in a PID namespace (pid:[%u]) and this kernel has no "
			 "bpf_task_from_vpid (Linux 6.13 or newer), which its BPF programs need to "
			 "give that namespace's pids",
			 *ino);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The boot time offset of kprofd's time namespace (0 outside one, or where the kernel has none):
 * /proc/PID/stat's start times, which the BPF programs compare with the tasks', include it. */
static int64_t boottime_offset_ns(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128], name[32];
	long long s, ns;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %lld %lld", name, &s, &ns) == 3 && !strcmp(name, "boottime"))
			return s * 1000000000LL + ns;
	return 0;
}

/* The level of kprofd's PID namespace into kp_pidns_level, by kp_pidns_probe. */
static int pidns_probe(struct loader *l)
{
	struct kp_pidns a = {.pid = getpid()};
	/* A syscall program's context is copied back into ctx_in. */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &a, .ctx_size_in = sizeof(a));

	if (bpf_prog_test_run_opts(bpf_program__fd(l->skel->progs.kp_pidns_probe), &opts) < 0)
		return -errno;
	if (a.err < 0) {
		log_err("BPF: kprofd's PID namespace not found from its own pid %u: level %u, "
			"namespace %u, expected %u",
			getpid(), a.level, a.inum, (unsigned)l->skel->rodata->kp_pidns_ino);
		return a.err;
	}
	log_info("PID namespace pid:[%u], level %u: pids are this namespace's",
		 (unsigned)l->skel->rodata->kp_pidns_ino, a.level);
	return 0;
}

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

/* Off-CPU time: neither sched_switch program is attached at load (loader_offcpu_set is); the
 * tp_btf one is loaded where the kernel's BTF has the tracepoint's type. */
static void offcpu_setup(struct loader *l)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *force = getenv("KPROF_OFFCPU");
	uint64_t seed = 0;

	l->offcpu_btf =
	    btf && btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) >= 0;
	btf__free(btf);
	if (force && !strcmp(force, "raw_tp"))
		l->offcpu_btf = false;
	bpf_program__set_autoattach(l->skel->progs.kp_offcpu_btf, false);
	bpf_program__set_autoattach(l->skel->progs.kp_offcpu_raw, false);
	if (!l->offcpu_btf)
		bpf_program__set_autoload(l->skel->progs.kp_offcpu_btf, false);
	/* The stacks' hash seed: a target that knew it could aim its stacks at one key. Without
	 * the entropy pool (early boot) the time stands in: its stacks only then are guessable. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	l->skel->rodata->kp_stack_seed = seed;
}

/* The opened object's settings before it is loaded: thread programs, namespaces, clock and
 * ring buffer. */
static void loader_setup(struct loader *l, uint32_t pidns)
{
	const struct feature *f = l->feat.f;

	for (int i = 0; i < FEAT_NR; i++)
		if (!f[i].on && (i != FEAT_TASK_FROM_VPID || pidns))
			log_info("kernel feature %s (Linux %s) is off: %s", f[i].name, f[i].kernel,
				 f[i].why);
	l->threads_ok = f[FEAT_THREAD_EVENTS].on;
	if (!l->threads_ok) {
		log_warn("per-thread sampling is not available (Linux 6.7 or newer): every target "
			 "is sampled by per-CPU events");
		bpf_program__set_autoload(l->skel->progs.kp_thread_new, false);
		bpf_program__set_autoload(l->skel->progs.kp_scan_threads, false);
		bpf_map__set_autocreate(l->skel->maps.kp_scan_tids, false);
	}
	l->skel->rodata->kp_has_cookie = f[FEAT_ATTACH_COOKIE].on;
	l->skel->rodata->kp_has_task_regs = f[FEAT_TASK_REGS].on;
	if (f[FEAT_ATTACH_COOKIE].on)
		bpf_map__set_max_entries(l->skel->maps.kp_probe_cookies, 64);
	l->skel->rodata->kp_pidns_ino = pidns;
	l->skel->rodata->kp_self_tgid = getpid(); /* the id current_ids() gives kprofd */
	l->skel->rodata->kp_boottime_offset_ns = boottime_offset_ns();
	if (l->skel->rodata->kp_boottime_offset_ns)
		log_info("time namespace: boot time offset %lld ns",
			 (long long)l->skel->rodata->kp_boottime_offset_ns);
	if (!pidns)
		bpf_program__set_autoload(l->skel->progs.kp_pidns_probe, false);
	offcpu_setup(l);
	l->skel->rodata->kp_wakeup_bytes = l->rb_bytes / 8;
	/* The kernel's nsec_to_clock_t for /proc/PID/stat: USER_HZ divides a second exactly. */
	l->skel->rodata->kp_nsec_per_tick = 1000000000ULL / sysconf(_SC_CLK_TCK);
}

/* libbpf's messages during the load, for an explanation if it fails (libbpf's own printing,
 * to stderr, goes on): the last ones, which say why (a verifier log can be long). */
static char load_log[32768];
static size_t load_log_len;
static libbpf_print_fn_t load_log_next;

static int load_log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *m = NULL;
	va_list copy;
	size_t n;
	int r;

	va_copy(copy, ap);
	/* One message may be a whole verifier log, whose end says why: its tail is kept. */
	r = level != LIBBPF_DEBUG ? vasprintf(&m, fmt, copy) : -1;
	va_end(copy);
	if (r < 0)
		m = NULL; /* undefined after a failure */
	if (r > 0) {
		const char *tail = m;

		n = (size_t)r;
		if (n > sizeof(load_log) / 2) {
			tail = m + n - sizeof(load_log) / 2;
			n = sizeof(load_log) / 2;
		}
		if (load_log_len + n >= sizeof(load_log)) { /* keep the newer half */
			size_t keep = load_log_len < sizeof(load_log) / 2 - 1
					  ? load_log_len
					  : sizeof(load_log) / 2 - 1;

			memmove(load_log, load_log + load_log_len - keep, keep);
			load_log_len = keep;
		}
		memcpy(load_log + load_log_len, tail, n);
		load_log_len += n;
		load_log[load_log_len] = '\0';
	}
	free(m);
	return load_log_next ? load_log_next(level, fmt, ap) : 0;
}

/* Whether the kernel lacks the program type of program name (a failed load's); why says so. */
static bool prog_type_missing(struct loader *l, const char *name, char *why, size_t len)
{
	char prog[64];
	size_t n = strnlen(name, sizeof(prog) - 1);
	struct bpf_program *p;
	enum bpf_prog_type t;
	const char *s, *v;

	memcpy(prog, name, n); /* name may be in why */
	prog[n] = '\0';
	p = bpf_object__find_program_by_name(l->skel->obj, prog);
	t = p ? bpf_program__type(p) : BPF_PROG_TYPE_UNSPEC;
	s = p ? libbpf_bpf_prog_type_str(t) : NULL;
	if (!s || libbpf_probe_bpf_prog_type(t, NULL) != 0)
		return false;
	v = bpferr_prog_type(s);
	snprintf(why, len, "program %s: this kernel has no BPF program type %s%s%s%s", prog, s,
		 v ? " (Linux " : "", v ? v : "", v ? " and newer have it)" : "");
	return true;
}

/* kprof_bpf__load; a failure logged with the program and what the kernel lacks, when libbpf's
 * messages say, and the privilege hint only when the kernel refused for lack of privileges. */
static int load_explained(struct loader *l)
{
	char why[320];
	int err;

	load_log_len = 0;
	load_log[0] = '\0';
	load_log_next = libbpf_set_print(load_log_print);
	err = kprof_bpf__load(l->skel);
	libbpf_set_print(load_log_next);
	if (err >= 0)
		return 0;
	if (err == -EPERM || err == -EACCES) {
		log_err("BPF: cannot load the BPF programs: %s (root, or CAP_BPF and CAP_PERFMON, "
			"are needed)",
			strerror(-err));
		return err;
	}
	if (bpferr_explain(load_log, why, sizeof(why)) == 0)
		log_err("BPF: cannot load the BPF programs: %s", why);
	else if (!strncmp(why, "program ", 8) && prog_type_missing(l, why + 8, why, sizeof(why)))
		log_err("BPF: cannot load the BPF programs: %s", why);
	else
		log_err("BPF: cannot load the BPF programs: %s%s%s (libbpf's messages above say "
			"more)",
			why, why[0] ? ": " : "", strerror(-err));
	return err;
}

/* Sizes the ring buffer, loads the programs, finds the PID namespace's level, attaches. */
static int loader_load(struct loader *l, uint32_t pidns)
{
	int err;

	err = bpf_map__set_max_entries(l->skel->maps.kp_events, l->rb_bytes);
	if (err < 0)
		return err;
	err = load_explained(l);
	if (err < 0)
		return err;
	if (pidns) {
		err = pidns_probe(l);
		if (err < 0) {
			log_err("BPF: cannot find the level of kprofd's PID namespace: %s",
				strerror(-err));
			return err;
		}
	}
	err = kprof_bpf__attach(l->skel);
	if (err < 0) {
		log_err("BPF: cannot attach the exit/exec/thread programs: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Per-thread sampling: the sampler's program id for the thread programs, and the thread
 * scan's results mapped. */
static int loader_threads(struct loader *l)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	size_t page = getpagesize();
	void *p;
	int err;

	/* The thread programs know kp_sample's events by its id. */
	err = bpf_obj_get_info_by_fd(bpf_program__fd(l->skel->progs.kp_sample), &info, &len);
	if (err < 0) {
		err = -errno;
		log_err("BPF: cannot read the sampler's id: %s", strerror(-err));
		return err;
	}
	l->skel->bss->kp_sample_id = info.id;

	l->scan_len = (KP_SCAN_MAX * sizeof(uint64_t) + page - 1) / page * page;
	p = mmap(NULL, l->scan_len, PROT_READ, MAP_SHARED, bpf_map__fd(l->skel->maps.kp_scan_tids),
		 0);
	if (p == MAP_FAILED) {
		err = -errno;
		log_err("BPF: cannot map the thread scan's results: %s", strerror(-err));
		return err;
	}
	l->scan_tids = p;
	return 0;
}

int loader_new(const struct loader_opts *o, struct loader **ret)
{
	struct loader *l = calloc(1, sizeof(*l));
	uint32_t pidns;
	char why[256];
	int err;

	if (!l)
		return -ENOMEM;
	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0) {
		err = l->ncpus ? l->ncpus : -ENODEV;
		goto fail;
	}
	err = features_probe(&l->feat, why, sizeof(why));
	if (err < 0) {
		log_err("BPF: %s", why);
		goto fail;
	}
	err = pidns_find(&pidns, why, sizeof(why));
	if (err < 0) {
		log_err("BPF: %s", why);
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
	loader_setup(l, pidns);
	err = loader_load(l, pidns);
	if (err < 0)
		goto fail;
	if (l->threads_ok) {
		err = loader_threads(l);
		if (err < 0)
			goto fail;
	}
	*ret = l;
	return 0;
fail:
	loader_free(l);
	return err;
}

void loader_free(struct loader *l)
{
	if (!l)
		return;
	bpf_link__destroy(l->offcpu_link);
	if (l->scan_tids)
		munmap((void *)l->scan_tids, l->scan_len);
	kprof_bpf__destroy(l->skel);
	free(l);
}

struct bpf_program *loader_sample_prog(const struct loader *l)
{
	return l->skel->progs.kp_sample;
}

struct bpf_program *loader_call_prog(const struct loader *l, bool ret)
{
	return ret ? l->skel->progs.kp_call_return : l->skel->progs.kp_call_enter;
}

struct bpf_program *loader_path_prog(const struct loader *l)
{
	return l->skel->progs.kp_path_block;
}

int loader_hwbp_prog_fd(const struct loader *l)
{
	return bpf_program__fd(l->skel->progs.kp_hwbp_hit);
}

struct bpf_map *loader_hwbp_traces(const struct loader *l)
{
	return l->skel->maps.kp_hwbp_traces;
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

bool loader_threads_supported(const struct loader *l)
{
	return l->threads_ok;
}

const struct features *loader_features(const struct loader *l)
{
	return &l->feat;
}

struct bpf_link *loader_uprobe_attach(struct loader *l, bool ret, struct bpf_program *prog,
				      pid_t pid, const char *path, uint64_t offset, uint64_t addr,
				      uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = cookie);

	if (!l->feat.f[FEAT_ATTACH_COOKIE].on) {
		struct kp_probe_key k = {
		    .tgid = pid,
		    .kind = prog == l->skel->progs.kp_path_block ? KP_PROBE_PATH : KP_PROBE_CALL,
		    .addr = addr,
		};

		if (bpf_map__update_elem(l->skel->maps.kp_probe_cookies, &k, sizeof(k), &cookie,
					 sizeof(cookie), BPF_ANY) < 0)
			return NULL; /* errno set */
		o.bpf_cookie = 0;
	}
	return bpf_program__attach_uprobe_opts(prog, pid, path, offset, &o);
}

uint64_t loader_event_cookie(const struct loader *l, uint64_t cookie)
{
	return l->feat.f[FEAT_ATTACH_COOKIE].on ? cookie : 0;
}

int loader_scan_threads(struct loader *l, pid_t tgid, pid_t tid, struct kp_scan *res,
			const uint64_t **tids)
{
	struct kp_scan a = {.tgid = tgid, .tid = tid > 0 ? tid : 0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &a, .ctx_size_in = sizeof(a));

	if (!l->threads_ok)
		return -EOPNOTSUPP;
	if (bpf_prog_test_run_opts(bpf_program__fd(l->skel->progs.kp_scan_threads), &opts) < 0)
		return -errno;
	if (a.err < 0)
		return a.err;
	*res = a;
	*tids = l->scan_tids;
	return 0;
}

int loader_target_add(struct loader *l, pid_t tgid, unsigned freq, uint64_t start_ticks,
		      uint32_t flags)
{
	struct kp_target v = {.freq = freq, .flags = flags, .start_ticks = start_ticks};
	__u32 key = tgid;

	if (bpf_map__update_elem(l->skel->maps.kp_targets, &key, sizeof(key), &v, sizeof(v),
				 BPF_ANY) < 0)
		return -errno;
	return 0;
}
int loader_calls_open(struct loader *l, pid_t tgid, uint32_t *epoch)
{
	__u32 key = tgid, v = ++l->call_epoch;

	if (!v) /* 0 stamps a set not all in: skipped when the count wraps */
		v = ++l->call_epoch;
	if (bpf_map__update_elem(l->skel->maps.kp_call_epochs, &key, sizeof(key), &v, sizeof(v),
				 BPF_ANY) < 0)
		return -errno;
	*epoch = v;
	return 0;
}

void loader_calls_close(struct loader *l, pid_t tgid)
{
	__u32 key = tgid;

	bpf_map__delete_elem(l->skel->maps.kp_call_epochs, &key, sizeof(key), 0);
}

int loader_target_del(struct loader *l, pid_t tgid)
{
	__u32 key = tgid;

	if (bpf_map__delete_elem(l->skel->maps.kp_targets, &key, sizeof(key), 0) < 0 &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

int loader_cgroup_watch(struct loader *l, uint64_t cgid, bool on)
{
	__u32 one = 1;
	int err;

	if (on)
		err = bpf_map__update_elem(l->skel->maps.kp_cgroups, &cgid, sizeof(cgid), &one,
					   sizeof(one), BPF_NOEXIST);
	else
		err = bpf_map__delete_elem(l->skel->maps.kp_cgroups, &cgid, sizeof(cgid), 0);
	if (err < 0)
		return -errno;
	if (on)
		l->skel->bss->kp_cgroups_n++;
	else if (l->skel->bss->kp_cgroups_n)
		l->skel->bss->kp_cgroups_n--;
	return 0;
}

/* Delete the keys of map that keep() refuses. */
static void map_prune(struct bpf_map *map, size_t ksize, bool (*keep)(const void *k, void *arg),
		      void *arg)
{
	char key[16], next[16];
	void *prev = NULL;

	while (bpf_map__get_next_key(map, prev, next, ksize) == 0) {
		if (!keep(next, arg) && bpf_map__delete_elem(map, next, ksize, 0) == 0)
			continue; /* the walk starts over: next is gone */
		memcpy(key, next, ksize);
		prev = key;
	}
}

struct watch_keys {
	const char (*comms)[16];
	unsigned ncomms;
	const uint32_t *uids;
	unsigned nuids;
};

static bool keep_comm(const void *k, void *arg)
{
	const struct watch_keys *w = arg;

	for (unsigned i = 0; i < w->ncomms; i++)
		if (!memcmp(k, w->comms[i], 16))
			return true;
	return false;
}

static bool keep_uid(const void *k, void *arg)
{
	const struct watch_keys *w = arg;

	for (unsigned i = 0; i < w->nuids; i++)
		if (!memcmp(k, &w->uids[i], sizeof(uint32_t)))
			return true;
	return false;
}

int loader_watch_sync(struct loader *l, const char (*comms)[16], unsigned ncomms,
		      const uint32_t *uids, unsigned nuids)
{
	struct watch_keys w = {comms, ncomms, uids, nuids};
	__u32 one = 1;
	int err = 0;

	if (ncomms > KP_MAX_WATCH_KEYS || nuids > KP_MAX_WATCH_KEYS)
		return -E2BIG;
	/* The new keys first, then the old ones go: a rule kept meanwhile never misses an exec. */
	if (ncomms + nuids)
		l->skel->bss->kp_watch_n = ncomms + nuids;
	for (unsigned i = 0; i < ncomms && !err; i++)
		if (bpf_map__update_elem(l->skel->maps.kp_watch_comms, comms[i], 16, &one,
					 sizeof(one), BPF_ANY) < 0)
			err = -errno;
	for (unsigned i = 0; i < nuids && !err; i++)
		if (bpf_map__update_elem(l->skel->maps.kp_watch_uids, &uids[i], sizeof(uids[i]),
					 &one, sizeof(one), BPF_ANY) < 0)
			err = -errno;
	map_prune(l->skel->maps.kp_watch_comms, 16, keep_comm, &w);
	map_prune(l->skel->maps.kp_watch_uids, sizeof(uint32_t), keep_uid, &w);
	l->skel->bss->kp_watch_n = ncomms + nuids;
	return err;
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

void loader_all_set(struct loader *l, unsigned freq)
{
	l->skel->bss->kp_all_freq = freq;
}

int loader_all_skip(struct loader *l, pid_t tgid, uint64_t start_ticks)
{
	__u32 key = tgid;
	__u64 val = start_ticks;

	if (bpf_map__update_elem(l->skel->maps.kp_all_skip, &key, sizeof(key), &val, sizeof(val),
				 BPF_ANY) < 0)
		return -errno;
	return 0;
}

void loader_all_skip_clear(struct loader *l)
{
	__u32 key;

	while (bpf_map__get_next_key(l->skel->maps.kp_all_skip, NULL, &key, sizeof(key)) == 0)
		if (bpf_map__delete_elem(l->skel->maps.kp_all_skip, &key, sizeof(key), 0) < 0)
			break;
}

int loader_offcpu_set(struct loader *l, bool on)
{
	struct bpf_link *link = NULL;
	int err = 0;

	if (!on) {
		bpf_link__destroy(l->offcpu_link);
		l->offcpu_link = NULL;
		l->offcpu_type = NULL;
		return 0;
	}
	if (l->offcpu_link)
		return 0;
	if (l->offcpu_btf) {
		link = bpf_program__attach(l->skel->progs.kp_offcpu_btf);
		if (!link)
			log_warn(
			    "BPF: cannot attach the tp_btf off-CPU program (%s); trying raw_tp",
			    strerror(errno));
		else
			l->offcpu_type = "tp_btf";
	}
	if (!link) {
		link = bpf_program__attach(l->skel->progs.kp_offcpu_raw);
		if (!link) {
			err = -errno;
			log_err("BPF: cannot attach the off-CPU program to sched_switch: %s",
				strerror(-err));
			return err;
		}
		l->offcpu_type = "raw_tp";
	}
	l->offcpu_link = link;
	log_info("off-CPU time: %s/sched_switch attached", l->offcpu_type);
	return 0;
}

void loader_all_offcpu_set(struct loader *l, bool on)
{
	l->skel->bss->kp_all_offcpu = on;
}

void loader_offcpu_waiter_done(struct loader *l, pid_t tgid)
{
	__u32 key = tgid;

	bpf_map__delete_elem(l->skel->maps.kp_offcpu_waiters, &key, sizeof(key), 0);
}

const char *loader_offcpu_type(const struct loader *l)
{
	return l->offcpu_type;
}

void loader_offcpu_fds(const struct loader *l, struct loader_offcpu_fds *fds)
{
	fds->start = bpf_map__fd(l->skel->maps.kp_offcpu_start);
	fds->sums = bpf_map__fd(l->skel->maps.kp_offcpu_sums);
	fds->stacks = bpf_map__fd(l->skel->maps.kp_offcpu_stacks);
	fds->counters = bpf_map__fd(l->skel->maps.kp_offcpu_ctrs);
	fds->rules = bpf_map__fd(l->skel->maps.kp_offcpu_rules);
}
