// SPDX-License-Identifier: GPL-2.0-only
/* replay.c: kprofd's own ingestion code fed the sample stream of a big host, in simulated time
 * (issue 34, "past this machine, by replay"). Driven by bench/replay.sh; usage: replay --help.
 *
 * What is real. A kprofd manager made by manager_new, as kprofd makes it: its BPF object
 * loaded (the ring buffer, the maps), its symbolizer, sampler and settings (defaults, no state
 * directory, no source lines). Every record goes through ringbuf_feed, the function a drain
 * hands each record to (validation by kind and size, then the manager's callbacks: manager_find
 * in the PID hash, target_add_sample: frame memo, address cache, symbolizer, profile, HCCT,
 * annotate store, call sites, thread names, drift; with daemon.batch_min_targets reached, kept
 * per target and added in runs as a drain does, manager_batch.c). Every half second of simulated
 * time manager_batch (a drain's end: captures, ended targets' symbols, perf-map steps); every
 * second manager_housekeeping (each attached target's /proc stat and credentials, its perf map
 * refreshed, late names, drift; watches; kept profiles; the profile budget) and one turn of the
 * event loop (targets dropped are freed there). Each simulated process is a real process (a
 * child forked here that sleeps), so /proc, its maps and its ELF files are real; an exit is a
 * KP_REC_EXIT record after the child is killed, as the BPF side sends it (manager_end_target:
 * the profile kept, the oldest kept dropped past limits.max_kept). The whole-host scrape runs
 * the endpoint's code for each target (target_since_take when asked, target_since_build_until
 * after the interval, target_since_build for targets attached meanwhile, merge_profiles and
 * pprof_build: the gzip'd answer).
 *
 * What is modelled. The records: no BPF program writes them (nothing on a 2-CPU VM can produce
 * 192 CPUs' samples); they are made here as bpf/sampler.bpf.c lays them out (abi.h), with
 * addresses in real code of the processes: functions of the ELF files every child maps (this
 * program, libc, libbpf, libcapstone...), kernel text symbols of /proc/kallsyms, and JIT code in
 * an anonymous executable mapping named by a perf map per JIT process that grows while it runs.
 * The attach: what manager_attach does for an --all target (procfs_stat, target_new, linking,
 * target_sources_start, the attach event) but not its kp_targets entry (a BPF map of 8,192:
 * kprofd attaches at most limits.max_targets <= 8,192 processes) nor the per-CPU set's reference
 * (one set serves every --all target); the limits (max_targets, max_auto_targets) are not
 * applied, so that 5,000 processes can be attached. Not run: the time windows (windows.c),
 * system-wide mode's idle eviction (syswide.c), the HTTP server itself (libmicrohttpd, the
 * cgroup read of each process for its labels, the socket). Time: the records carry simulated
 * time; the daemon's own clock reads (rate, expiry) see real time, which runs faster here.
 *
 * CPU is this thread's (CLOCK_THREAD_CPUTIME_ID) around the daemon's calls only: making the
 * records, forking and killing children and writing perf maps are not counted. A sample's CPU
 * is all it costs: as it comes, and when a drain's end adds the run it waits in (the replay
 * adds the runs due before the drain, manager_batch_flush, which then finds none). Memory: the
 * daemon's accounting (profile bytes of attached and kept targets, symbol bytes) and this
 * process's RSS. Nothing is asserted on time.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/ringbuf.h"
#include "kprof/codeshare.h"
#include "kprof/config.h"
#include "kprof/merge.h"
#include "kprof/pprof.h"
#include "kprof/rbsize.h"
#include "os/clock.h"
#include "manager/manager.h"
#include "manager/manager_internal.h"
#include "manager/syswide.h"
#include "os/procfs.h"
#include "symbols/symbolize_elf.h"
#include "wire/target_since.h"
#include "../tests/prng.h"

#define JIT_BYTES (8u << 20) /* the anonymous executable mapping JIT code is in */
#define JIT_SLOT 256u	     /* bytes a JIT function */
#define JIT_SLOTS (JIT_BYTES / JIT_SLOT)
#define MAX_RANGES 128
#define MAX_KSYMS 4096
#define MAX_PROCS 8192
#define FAKE_TID_BASE 5000000	  /* thread ids above any pid_max: never a real process */
#define HTTP_MAX_HOST_ 8192	  /* http_internal.h's HTTP_MAX_HOST: a whole-host scrape's bound */
#define RB_HDR 8		  /* the kernel's ring buffer record header (BPF_RINGBUF_HDR_SZ) */
#define WAKEUP_BYTES (256u << 10) /* bpf/shared.bpf.c kp_wakeup_bytes */

struct opts {
	unsigned procs, threads, cpus, hz, seconds, warmup, report_every;
	double churn, jit_frac, jit_rate, burst;
	unsigned jit_initial, scrape_period, scrape_seconds, stacks;
	unsigned run;  /* samples of one process fed in a row (1: each drawn alone) */
	bool no_batch; /* --no-batch: daemon.batch_min_targets = 0 */
	uint64_t seed;
};

struct proc {
	pid_t pid;
	uint64_t start_ticks;
	uint64_t seed; /* its call tree */
	uint32_t first_tid, nthreads;
	bool jit;
	uint32_t jit_n; /* functions in its perf map */
	double jit_acc;
	char comm[16];
};

struct range {
	uint64_t start, len;
};

static struct opts O = {
    .procs = 5000,
    .threads = 50000,
    .cpus = 192,
    .hz = 99,
    .seconds = 60,
    .warmup = 5,
    .report_every = 0,
    .churn = 2.0,
    .jit_frac = 0.05,
    .jit_rate = 0.5,
    .burst = 10,
    .jit_initial = 2000,
    .scrape_period = 15,
    .scrape_seconds = 10,
    .stacks = 2000,
    .run = 1,
    .seed = 1,
};

static struct proc *procs;
static double *cum_weight; /* cumulative CPU shares of procs */
static struct range ranges[MAX_RANGES];
static unsigned nranges;
static uint64_t ksyms[MAX_KSYMS];
static unsigned nksyms;
static uint64_t jit_base;
static uint32_t next_tid = FAKE_TID_BASE;
static uint64_t rng_s = 0x9e3779b97f4a7c15ULL;
static int fork_req = -1, fork_resp = -1;
static struct manager *M;

static void die(const char *what, int err)
{
	fprintf(stderr, "replay: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t rnd(void)
{
	return prng_next(&rng_s);
}

static double rnd01(void)
{
	return prng_unit(&rng_s);
}

/* A hash of two words: the generator's mix of them (the same pair, the same value). */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b + (a << 6) + (a >> 2));

	return prng_next(&z);
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (uint64_t)res * getpagesize();
}

/* ---- The processes: real children of a forker made before anything big is loaded ---- */

static void forker_loop(int req, int resp)
{
	char name[16];

	signal(SIGCHLD, SIG_IGN); /* children reaped by the kernel */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (read(req, name, sizeof(name)) == (ssize_t)sizeof(name)) {
		pid_t pid;

		/* The child's name is the forker's when it forks: right from the start. */
		name[15] = '\0';
		prctl(PR_SET_NAME, name);
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(req);
			close(resp);
			for (;;)
				pause();
		}
		if (write(resp, &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
			_exit(1);
	}
	_exit(0);
}

static void forker_start(void)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a) < 0 || pipe(b) < 0)
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		forker_loop(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	fork_req = a[1];
	fork_resp = b[0];
}

static pid_t spawn(const char *comm)
{
	char name[16] = {0};
	pid_t pid;

	snprintf(name, sizeof(name), "%s", comm);
	if (write(fork_req, name, sizeof(name)) != (ssize_t)sizeof(name) ||
	    read(fork_resp, &pid, sizeof(pid)) != (ssize_t)sizeof(pid) || pid <= 0)
		die("forker", EIO);
	return pid;
}

/* ---- Addresses: real code the children map ---- */

static void read_ranges(void)
{
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		die("/proc/self/maps", errno);
	while (fgets(line, sizeof(line), f) && nranges < MAX_RANGES) {
		unsigned long lo, hi, off;
		char perm[8];

		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &lo, &hi, perm, &off, path) < 4)
			continue;
		if (perm[2] != 'x' || path[0] != '/')
			continue;
		ranges[nranges++] = (struct range){lo, hi - lo};
	}
	fclose(f);
	if (!nranges)
		die("no executable file mapping", ENOENT);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Up to MAX_KSYMS text symbols of the kernel, spread over its text (root sees addresses). */
static void read_ksyms(void)
{
	static uint64_t all[1 << 18];
	unsigned n = 0;
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < (1u << 18)) {
		unsigned long a;
		char type;

		if (sscanf(line, "%lx %c", &a, &type) == 2 && a && (type == 't' || type == 'T') &&
		    !strchr(line, '['))
			all[n++] = a;
	}
	fclose(f);
	qsort(all, n, sizeof(all[0]), cmp_u64);
	for (unsigned i = 0; n && i < MAX_KSYMS; i++)
		ksyms[nksyms++] = all[(uint64_t)i * n / MAX_KSYMS];
}

/* A native function of the children: an address in one of the executable file mappings. */
static uint64_t native_fn(uint64_t h)
{
	const struct range *r = &ranges[h % nranges];

	return r->start + ((h >> 16) % r->len & ~15ULL);
}

/* ---- Perf maps of the JIT processes ---- */

static void perfmap_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)pid);
}

static void perfmap_append(struct proc *p, uint32_t upto)
{
	char path[64];
	FILE *f;

	perfmap_path(p->pid, path, sizeof(path));
	f = fopen(path, "a");
	if (!f)
		die(path, errno);
	for (; p->jit_n < upto && p->jit_n < JIT_SLOTS; p->jit_n++)
		fprintf(f, "%lx %x LFn%u_%llx;::run\n",
			(unsigned long)(jit_base + (uint64_t)p->jit_n * JIT_SLOT), JIT_SLOT - 32,
			p->jit_n, (unsigned long long)(p->seed & 0xffff));
	fclose(f);
}

/* ---- The population ---- */

static void proc_start(struct proc *p, unsigned slot)
{
	struct procinfo_stat pst;
	char comm[16];

	snprintf(comm, sizeof(comm), "%s%u", p->jit ? "jvm" : "svc", slot);
	memcpy(p->comm, comm, sizeof(p->comm));
	p->pid = spawn(comm);
	if (procfs_stat(p->pid, &pst) < 0)
		die("child's stat", ESRCH);
	p->start_ticks = pst.start_ticks;
	p->seed = rnd();
	p->first_tid = next_tid;
	next_tid += p->nthreads;
	p->jit_n = 0;
	p->jit_acc = 0;
	if (p->jit)
		perfmap_append(p, O.jit_initial);
}

/* What manager_attach does for a process system-wide mode samples (see the file's comment for
 * what it leaves out). */
static int attach(struct proc *p)
{
	struct attach_opts o = {
	    .freq = O.hz, .eps = SYSWIDE_EPS, .no_jvm_map = true, .all = true, .by = 0};
	struct procinfo_stat pst;
	struct target *t = NULL;
	int err;

	err = procfs_stat(p->pid, &pst);
	if (err >= 0)
		err = target_new(&M->env, p->pid, &o, &t);
	if (err < 0)
		return err;
	t->by = 0;
	t->start_ticks = pst.start_ticks;
	t->per_cpu = true;
	manager_targets_link(M, t);
	M->n_attached++;
	target_sources_start(t, &o);
	manager_emit_target_attach(M, t);
	return 0;
}

static void proc_exit_record(struct proc *p, uint64_t now)
{
	struct kp_lifecycle lc = {.hdr = {.kind = KP_REC_EXIT, .tgid = p->pid},
				  .pid = p->pid,
				  .exit_code = SIGKILL,
				  .time_ns = now,
				  .start_ticks = p->start_ticks};

	memcpy(lc.comm, p->comm, sizeof(lc.comm));
	ringbuf_feed(M->ringbuf, &lc, sizeof(lc));
}

static void proc_kill(struct proc *p)
{
	char path[64];

	kill(p->pid, SIGKILL);
	if (p->jit) {
		perfmap_path(p->pid, path, sizeof(path));
		unlink(path);
	}
}

/* Threads and CPU shares: both skewed (log-normal), the threads summing to about O.threads. */
static void population(void)
{
	double *w = calloc(O.procs, sizeof(*w)), sum = 0, total = 0;

	procs = calloc(O.procs, sizeof(*procs));
	cum_weight = calloc(O.procs, sizeof(*cum_weight));
	if (!w || !procs || !cum_weight)
		die("population", ENOMEM);
	for (unsigned i = 0; i < O.procs; i++) {
		double g = sqrt(-2 * log(rnd01() + 1e-12)) * cos(6.283185307 * rnd01());

		w[i] = exp(1.2 * g);
		sum += w[i];
	}
	for (unsigned i = 0; i < O.procs; i++) {
		double g = sqrt(-2 * log(rnd01() + 1e-12)) * cos(6.283185307 * rnd01());
		double n = O.threads * w[i] / sum;

		procs[i].nthreads = n < 1 ? 1 : n > 4096 ? 4096 : (uint32_t)(n + 0.5);
		procs[i].jit = rnd01() < O.jit_frac;
		total += exp(2.0 * g); /* CPU share: most processes nearly idle, a few hot */
		cum_weight[i] = total;
	}
	for (unsigned i = 0; i < O.procs; i++)
		cum_weight[i] /= total;
	free(w);
}

/* A random index into a cumulative distribution cum[0..n) (its last entry 1). */
static unsigned pick_cum(const double *cum, unsigned n)
{
	double u = rnd01();
	unsigned lo = 0, hi = n - 1;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (cum[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static unsigned pick_proc(void)
{
	return pick_cum(cum_weight, O.procs);
}

/* ---- Records ---- */

/* The skewed choice among a frame's callees, from a hash: half the time the first. */
static unsigned fanout_choice(uint64_t h)
{
	unsigned u = h % 100;

	return u < 50 ? 0 : u < 75 ? 1 : u < 90 ? 2 : 3 + (h >> 8) % 6;
}

/* Stacks per process: a Zipf (s = 1) choice among O.stacks, the same table for every process
 * (each process its own stacks: its seed). */
static double *zipf_cum;

static void zipf_table(void)
{
	double sum = 0;

	zipf_cum = calloc(O.stacks, sizeof(*zipf_cum));
	if (!zipf_cum)
		die("zipf", ENOMEM);
	for (unsigned i = 0; i < O.stacks; i++)
		zipf_cum[i] = sum += 1.0 / (i + 1);
	for (unsigned i = 0; i < O.stacks; i++)
		zipf_cum[i] /= sum;
}

static unsigned zipf(void)
{
	return pick_cum(zipf_cum, O.stacks);
}

/* A user frame at depth k on the path node: native code, or (a JIT process, past its runtime's
 * first frames) one of its JIT functions: mostly among the map's first ones, a fifth among the
 * 64 newest (they change as the map grows), one in a hundred code the map does not name yet. */
static uint64_t user_frame(const struct proc *p, uint64_t node, unsigned k, bool leaf)
{
	uint64_t off = leaf ? rnd() % 48 : 5 + mix(node, 2) % 40;

	if (p->jit && k >= 6 && p->jit_n) {
		uint64_t h = mix(node, 3), slot,
			 old = p->jit_n < O.jit_initial ? p->jit_n : O.jit_initial;

		if (h % 100 == 0)
			slot = p->jit_n + h % 4;
		else if (h % 10 < 2)
			slot = p->jit_n - 1 - (h >> 8) % (p->jit_n < 64 ? p->jit_n : 64);
		else
			slot = (h >> 8) % (old ? old : 1);
		if (slot >= JIT_SLOTS)
			slot = JIT_SLOTS - 1;
		return jit_base + slot * JIT_SLOT + off * 4;
	}
	return native_fn(mix(node, 1)) + off;
}

/* One sample of p at time now into buf: its length. Its user stack is one of the process's
 * stacks (zipf); the path from the root shares most of its frames with the others (each
 * level's callee is a skewed choice), 10 to 60 frames (10 + an exponential of mean 10); a third
 * of the samples are in the kernel, 4 to 24 frames more. */
static size_t make_sample(const struct proc *p, uint64_t now, void *buf)
{
	struct kp_sample *s = buf;
	uint64_t user[64], kern[32], node = p->seed, sid = zipf();
	unsigned nu, nk = 0, th;
	double u = rnd01();

	nu = 10 +
	     (unsigned)(-log((mix(p->seed ^ sid, 999) >> 11) * (1.0 / 9007199254740992.0) + 1e-12) *
			10);
	if (nu > 60)
		nu = 60;
	for (unsigned k = 0; k < nu; k++) {
		user[k] = user_frame(p, node, k, k == nu - 1);
		node = mix(node, fanout_choice(mix(sid, k)));
	}
	if (nksyms && rnd01() < 0.35) { /* in the kernel: a system call's or an interrupt's path */
		uint64_t kid = zipf() % 200, kn = mix(kid % 16, 77); /* fewer kernel paths */

		nk = 4 +
		     (unsigned)(-log((mix(kid, 998) >> 11) * (1.0 / 9007199254740992.0) + 1e-12) *
				3);
		if (nk > 24)
			nk = 24;
		for (unsigned k = 0; k < nk; k++) {
			kern[k] = ksyms[mix(kn, 5) % nksyms] + (k == nk - 1 ? rnd() % 32 : 8);
			kn = mix(kn, fanout_choice(mix(kid, k)));
		}
	}
	memset(s, 0, offsetof(struct kp_sample, ips));
	s->hdr.kind = KP_REC_SAMPLE;
	s->hdr.tgid = p->pid;
	th = (unsigned)(u * u * p->nthreads);
	s->tid = th == 0 ? (uint32_t)p->pid : p->first_tid + th;
	s->cpu = rnd() % O.cpus;
	s->time_ns = now;
	s->n_kernel = nk;
	s->n_user = nu;
	if (th == 0)
		memcpy(s->comm, p->comm, sizeof(s->comm));
	else
		snprintf(s->comm, sizeof(s->comm), "w%u", th % 64);
	for (unsigned k = 0; k < nk; k++) /* leaf first */
		s->ips[k] = kern[nk - 1 - k];
	for (unsigned k = 0; k < nu; k++)
		s->ips[nk + k] = user[nu - 1 - k];
	return offsetof(struct kp_sample, ips) + 8 * (nk + nu);
}

/* ---- Measurements ---- */

struct cpu {
	/* feed: the samples' (as they come, and the runs the drain's end adds: flush) */
	uint64_t feed, flush, batch, house, churn, loop, scrape_take, scrape_answer;
	uint64_t scrape_build, scrape_hold_max, scrape_was_max; /* off the loop; the loop's hold */
	uint64_t scrape_merge;					/* part of the build's */
	uint64_t samples, records_bytes, exits, starts, scrapes, scrape_targets, scrape_bytes;
	uint64_t scrape_samples;
};

struct scrape {
	bool on;
	unsigned at;   /* simulated second it was asked */
	uint64_t real; /* CLOCK_REALTIME then: targets attached since are the interval's */
	unsigned n;
	pid_t *pid;
	uint64_t *attached_ns;
	struct target_since *since;
};

static bool same_session(const struct target *t, void *arg)
{
	return t->attached_ns == *(const uint64_t *)arg;
}

/* The target a member of the scrape was (as http_find_target: its pid and attach time). */
static struct target *member_target(const struct scrape *sc, unsigned i)
{
	return manager_find_for(M, sc->pid[i], same_session, &sc->attached_ns[i]);
}

static void scrape_take(struct scrape *sc, unsigned now_s, struct cpu *c)
{
	uint64_t t0 = thread_ns();
	struct target *t;
	unsigned cap = M->n_attached;

	sc->pid = calloc(cap + 1, sizeof(*sc->pid));
	sc->attached_ns = calloc(cap + 1, sizeof(*sc->attached_ns));
	sc->since = calloc(cap + 1, sizeof(*sc->since));
	if (!sc->pid || !sc->attached_ns || !sc->since)
		die("scrape", ENOMEM);
	sc->n = 0;
	sc->real = 0;
	manager_for_each_attached(M, t) {
		if (sc->n >= cap || target_since_take(t, &sc->since[sc->n]) < 0)
			continue;
		sc->pid[sc->n] = t->pid;
		sc->attached_ns[sc->n] = t->attached_ns;
		if (t->attached_ns > sc->real)
			sc->real = t->attached_ns;
		sc->n++;
	}
	sc->on = true;
	sc->at = now_s;
	c->scrape_take += thread_ns() - t0;
}

/* A part of the answer, as the endpoint gathers it (http_profile.c's collect_one): t's message
 * built, packed (a deep copy for the build thread) and released, in the loop. */
struct rpart {
	uint8_t *buf;
	size_t len;
};

static void scrape_part(struct saved_msg *sm, struct rpart *pt, uint64_t *samples)
{
	*samples += sm->target.samples;
	pt->len = kprof__saved_profile__get_packed_size(&sm->msg);
	pt->buf = malloc(pt->len ? pt->len : 1);
	if (!pt->buf)
		die("scrape", ENOMEM);
	kprof__saved_profile__pack(&sm->msg, pt->buf);
	saved_msg_release(sm);
}

/* The loop's steps: each about [windows] step_ms of gathering (at least one target), the
 * longest kept. */
struct steps {
	uint64_t budget, at, longest;
};

static void step_end(struct steps *st, uint64_t now)
{
	if (now - st->at >= st->budget) {
		if (now - st->at > st->longest)
			st->longest = now - st->at;
		st->at = now;
	}
}

static void scrape_answer(struct scrape *sc, struct cpu *c)
{
	uint64_t t0 = thread_ns(), samples = 0, t_loop, t1;
	size_t n = 0, cap = sc->n + M->n_attached + M->n_kept + 1, len = 0;
	struct rpart *parts = calloc(cap, sizeof(*parts));
	Kprof__SavedProfile **pv = calloc(cap, sizeof(*pv));
	struct steps st = {.budget = M->conf.window_step_ms * 1000000ULL, .at = t0};
	struct merged mg = {0};
	struct saved_msg sm;
	uint8_t *out = NULL;
	struct target *t;

	if (!parts || !pv)
		die("scrape", ENOMEM);
	/* In the loop, a step at a time: each target's message, packed. */
	for (unsigned i = 0; i < sc->n; i++) {
		t = member_target(sc, i);
		if (t && target_since_build_until(t, &sc->since[i], NULL, &sm) > 0)
			scrape_part(&sm, &parts[n++], &samples);
		target_since_release(&sc->since[i]);
		step_end(&st, thread_ns());
	}
	/* Attached during the interval (ended since or not): their whole profile. */
	manager_for_each_target(M, t) {
		if (t->attached_ns <= sc->real || n >= cap)
			continue;
		if (target_since_build(t, NULL, &sm) > 0)
			scrape_part(&sm, &parts[n++], &samples);
		step_end(&st, thread_ns());
	}
	t_loop = thread_ns();
	if (t_loop - st.at > st.longest)
		st.longest = t_loop - st.at;
	/* In the build thread (its CPU timed apart here): unpacked, merged, made pprof. */
	for (size_t i = 0; i < n; i++) {
		pv[i] = kprof__saved_profile__unpack(NULL, parts[i].len, parts[i].buf);
		free(parts[i].buf);
		if (!pv[i])
			die("scrape", ENOMEM);
	}
	t1 = thread_ns();
	if (n && merge_profiles(pv, n, &mg) == 0) {
		c->scrape_merge += thread_ns() - t1;
		mg.target.pid = 0;
		mg.target.comm = (char *)"the host";
		if (pprof_build(&mg.sp, 1, "replay", &out, &len) < 0)
			len = 0;
		merge_free(&mg);
	}
	for (size_t i = 0; i < n; i++)
		kprof__saved_profile__free_unpacked(pv[i], NULL);
	free(out);
	free(parts);
	free(pv);
	t1 = thread_ns();
	c->scrape_answer += t_loop - t0;
	c->scrape_build += t1 - t_loop;
	if (st.longest > c->scrape_hold_max)
		c->scrape_hold_max = st.longest;
	if (t1 - t0 > c->scrape_was_max)
		c->scrape_was_max = t1 - t0;
	c->scrapes++;
	c->scrape_targets += n;
	c->scrape_bytes += len;
	c->scrape_samples += samples;
	free(sc->pid);
	free(sc->attached_ns);
	free(sc->since);
	sc->on = false;
}

/* The ring buffer at a burst: the size kprofd's formula picks for O.cpus, and what a burst of
 * O.burst times the rate for 1 s loses. Modelled (no BPF program writes these records): the
 * producer fills the ring at the burst rate with records of the replay's mean size (each
 * rounded up to 8 bytes plus the kernel's 8-byte header); kprofd is woken once
 * kp_wakeup_bytes (256 KiB) wait, or by its MANAGER_BATCH_MS timer, after a wake-up latency, and
 * then consumes at the CPU cost per record measured in this replay (one core) until the ring is
 * empty; a record that does not fit is lost (KP_CTR_DROPS). */
static void burst_model(double rec_bytes, double us_per_rec, double latency_ms, const struct cpu *c)
{
	struct rbsize_in in = {.ncpus = O.cpus,
			       .max_freq = KPROF_MAX_FREQ,
			       .record_bytes = RBSIZE_RECORD_BYTES,
			       .interval_ms = MANAGER_BATCH_MS,
			       .max_bytes = (uint64_t)RBSIZE_DEFAULT_MAX_MB << 20};
	struct rbsize r;
	double slot = ceil(rec_bytes / 8) * 8 + RB_HDR;

	if (rbsize_compute(&in, &r) < 0)
		return;
	printf("ring_bytes %llu need %llu capped %d (%u CPUs, max %u Hz, %u B a record, %u ms, "
	       "bound %u MiB)\n",
	       (unsigned long long)r.bytes, (unsigned long long)r.need, r.capped, O.cpus,
	       KPROF_MAX_FREQ, RBSIZE_RECORD_BYTES, MANAGER_BATCH_MS, RBSIZE_DEFAULT_MAX_MB);
	for (int pass = 0; pass < 2; pass++) {
		double mult = pass ? O.burst : 1, rate = (double)O.cpus * O.hz * mult;
		double dt = 1e-5, fill = 0, wake_at = -1, lost = 0, sent = 0, max_fill = 0;
		double since_drain = 0, busy_left = 0;
		bool busy = false;

		for (double t = 0; t < 3.0; t += dt) {
			double in_recs = t < 1.0 ? rate * dt : 0;

			sent += in_recs;
			if (fill + in_recs * slot > r.bytes) {
				double fit = (r.bytes - fill) / slot;

				lost += in_recs - (fit > 0 ? fit : 0);
				in_recs = fit > 0 ? fit : 0;
			}
			fill += in_recs * slot;
			max_fill = fill > max_fill ? fill : max_fill;
			since_drain += dt;
			if (!busy && wake_at < 0 &&
			    (fill >= WAKEUP_BYTES || since_drain >= MANAGER_BATCH_MS / 1000.0))
				wake_at = t + latency_ms / 1000;
			if (!busy && wake_at >= 0 && t >= wake_at)
				busy = true, wake_at = -1;
			if (busy) {
				busy_left += dt / (us_per_rec * 1e-6); /* records it can take */
				double take = busy_left < fill / slot ? busy_left : fill / slot;

				fill -= take * slot;
				busy_left -= take;
				if (fill < slot) {
					busy = false, busy_left = 0, since_drain = 0;
				}
			}
		}
		printf("burst x%.0f: %.0f records/s for 1 s, %.0f B each in the ring, kprofd at "
		       "%.2f us a record (%.1f%% of a core at that rate): %.0f lost (%.3f%%), the "
		       "ring at most %.0f%% full, holds %.2f s of that rate\n",
		       mult, rate, slot, us_per_rec, rate * us_per_rec / 1e4, lost,
		       sent ? 100 * lost / sent : 0, 100 * max_fill / r.bytes,
		       r.bytes / (rate * slot));
	}
	/* While an answer holds the loop nothing is drained: past what the ring holds at the
	 * stream's rate (drained just before: the best case), every record is lost. */
	if (c->scrapes) {
		double rate = (double)O.cpus * O.hz, holds = r.bytes / (rate * slot);
		double now = c->scrape_hold_max / 1e9, was = c->scrape_was_max / 1e9;

		printf(
		    "scrape hold: the ring holds %.2f s of the stream; the longest answer held the "
		    "loop %.3f s: %.0f records lost (with the build in the loop: %.3f s, %.0f "
		    "lost)\n",
		    holds, now, now > holds ? (now - holds) * rate : 0, was,
		    was > holds ? (was - holds) * rate : 0);
	}
}

static int load_conf(struct config *c, char *err, size_t errlen, void *ud)
{
	(void)err;
	(void)errlen;
	(void)ud;
	config_defaults(c);
	c->state_dir[0] = '\0'; /* profiles in memory only: nothing written */
	c->lines_enabled = false;
	if (O.no_batch)
		c->batch_min_targets = 0;
	snprintf(c->socket_path, sizeof(c->socket_path), "/nonexistent/replay.sock");
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: replay [--procs N] [--threads N] [--cpus N] [--hz N] [--seconds S]\n"
		"              [--warmup S] [--churn PER_S] [--jit-frac F] [--jit-rate PER_S]\n"
		"              [--jit-initial N] [--scrape-period S] [--scrape-seconds S]\n"
		"              [--report-every S] [--burst X] [--stacks N] [--seed N]\n"
		"              [--run N] [--no-batch]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"procs", 1, 0, 'p'},	  {"threads", 1, 0, 't'},
	    {"cpus", 1, 0, 'c'},	  {"hz", 1, 0, 'z'},
	    {"seconds", 1, 0, 's'},	  {"warmup", 1, 0, 'w'},
	    {"churn", 1, 0, 'C'},	  {"jit-frac", 1, 0, 'j'},
	    {"jit-rate", 1, 0, 'J'},	  {"jit-initial", 1, 0, 'I'},
	    {"scrape-period", 1, 0, 'P'}, {"scrape-seconds", 1, 0, 'S'},
	    {"report-every", 1, 0, 'r'},  {"burst", 1, 0, 'b'},
	    {"seed", 1, 0, 'x'},	  {"stacks", 1, 0, 'k'},
	    {"run", 1, 0, 'u'},		  {"no-batch", 0, 0, 'B'},
	    {"help", 0, 0, 'h'},	  {0, 0, 0, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end = NULL;
		double v = optarg ? strtod(optarg, &end) : 0;

		if (c == 'B') { /* the one option without a value */
			O.no_batch = true;
			continue;
		}

		if (c == 'h' || c == '?' || !end || *end || v < 0 || v > 1e7)
			usage();
		switch (c) {
		case 'p':
			O.procs = v;
			break;
		case 't':
			O.threads = v;
			break;
		case 'c':
			O.cpus = v;
			break;
		case 'z':
			O.hz = v;
			break;
		case 's':
			O.seconds = v;
			break;
		case 'w':
			O.warmup = v;
			break;
		case 'C':
			O.churn = v;
			break;
		case 'j':
			O.jit_frac = v;
			break;
		case 'J':
			O.jit_rate = v;
			break;
		case 'I':
			O.jit_initial = v;
			break;
		case 'P':
			O.scrape_period = v;
			break;
		case 'S':
			O.scrape_seconds = v;
			break;
		case 'r':
			O.report_every = v;
			break;
		case 'b':
			O.burst = v;
			break;
		case 'x':
			O.seed = v;
			break;
		case 'k':
			O.stacks = v;
			break;
		case 'u':
			O.run = v;
			break;
		}
	}
	if (!O.procs || O.procs > MAX_PROCS || O.threads < O.procs || !O.cpus || !O.hz ||
	    !O.seconds || O.jit_frac > 1 || O.jit_initial > JIT_SLOTS || !O.scrape_period ||
	    O.scrape_seconds >= O.scrape_period || !O.stacks || !O.run)
		usage();
}

static uint64_t cpu_total(const struct cpu *c)
{
	return c->feed + c->batch + c->house + c->churn + c->loop;
}

/* Memory now, and the CPU per simulated second since the last report. */
static void report_memory(unsigned s, uint64_t rss0, const struct cpu *c, bool cpu_line)
{
	static uint64_t prev_ns, prev_samples, prev_house;
	static unsigned prev_s;
	uint64_t sym = 0, refused = 0, over = 0, cut = 0, taken = 0;
	struct codeshare_stats cs;
	struct target *t;

	uint64_t all = 0, part[4] = {0}; /* target_memory, profile, HCCT, annotate, call sites */

	manager_for_each_target(M, t) {
		struct profile_stats ps;
		struct hcct_stats hs;
		struct annot_stats as;
		struct csite_stats ss;

		over += t->samples_refused;
		cut += t->samples_cut;
		taken += t->samples;
		all += target_memory(t);
		profile_get_stats(t->profile, &ps);
		part[0] += ps.memory;
		if (t->hcct) {
			hcct_get_stats(t->hcct, &hs);
			part[1] += hs.bytes;
		}
		if (t->annot) {
			annot_get_stats(t->annot, &as);
			part[2] += as.memory;
		}
		if (t->csite) {
			csite_get_stats(t->csite, &ss);
			part[3] += ss.memory;
		}
	}
	printf("parts t=%us of the targets' memory: profile %llu hcct %llu annotate %llu "
	       "call_sites %llu other %llu\n",
	       s, (unsigned long long)part[0], (unsigned long long)part[1],
	       (unsigned long long)part[2], (unsigned long long)part[3],
	       (unsigned long long)(all - part[0] - part[1] - part[2] - part[3]));
	if (cpu_line && s > prev_s) {
		uint64_t all = cpu_total(c) - prev_ns, house = c->house - prev_house;
		uint64_t n = c->samples - prev_samples;

		printf("cpu t=%us..%us %.2f%% of a core; besides housekeeping %.2f us a sample; "
		       "housekeeping %.2f%%\n",
		       prev_s, s, all / 1e7 / (s - prev_s), n ? (all - house) / 1e3 / n : 0,
		       house / 1e7 / (s - prev_s));
	}
	prev_ns = cpu_total(c);
	prev_samples = c->samples;
	prev_house = c->house;
	prev_s = s;

	symbolizer_get_stats(M->sym, &sym, &refused);
	codeshare_get_stats(M->code, &cs);
	printf("memory t=%us attached %u kept %u profile_bytes %llu (%.0f a process) "
	       "symbol_bytes %llu shared_code_bytes %zu (%zu copies, %llu found) rss %llu (+%llu "
	       "since the attaches) samples refused by the profile budget %llu; of the targets "
	       "held, samples %llu, counted as [over budget] %llu\n",
	       s, M->n_attached, M->n_kept, (unsigned long long)M->profile_bytes,
	       (double)M->profile_bytes /
		   (M->n_attached + M->n_kept ? M->n_attached + M->n_kept : 1),
	       (unsigned long long)sym, cs.memory, cs.entries, (unsigned long long)cs.hits,
	       (unsigned long long)rss_bytes(), (unsigned long long)(rss_bytes() - rss0),
	       (unsigned long long)over, (unsigned long long)taken, (unsigned long long)cut);
	fflush(stdout);
}

/* The records of one simulated second, half a second at a time. */
struct batch {
	unsigned per_batch;
	uint8_t *buf;
	size_t *len;
};

/* A batch of samples made (not counted), fed to the ring buffer's handler, then what the
 * drain timer does. With --run N the process is drawn once for N samples in a row: the same
 * samples a process gets over the run, fed as a per-target batching of N would feed them
 * (what the locality of a target's state is worth). */
static void feed_batch(struct batch *bt, uint64_t base_ns, unsigned b, struct cpu *c)
{
	uint64_t step = 1000000000ULL / (O.cpus * O.hz), t0;
	size_t off = 0;

	unsigned cur = 0;

	for (unsigned i = 0; i < bt->per_batch; i++) {
		uint64_t now = base_ns + (b * bt->per_batch + i) * step;

		if (i % O.run == 0)
			cur = pick_proc();
		bt->len[i] = make_sample(&procs[cur], now, bt->buf + off);
		off += (bt->len[i] + 7) & ~(size_t)7;
		c->records_bytes += bt->len[i];
	}
	t0 = thread_ns();
	off = 0;
	M->batching = manager_batch_wanted(M); /* as a drain sets it */
	for (unsigned i = 0; i < bt->per_batch; i++) {
		ringbuf_feed(M->ringbuf, bt->buf + off, bt->len[i]);
		off += (bt->len[i] + 7) & ~(size_t)7;
	}
	M->batching = false;
	c->feed += thread_ns() - t0;
	c->samples += bt->per_batch;
	/* The runs due, added as the drain's end adds them (its own flush then finds none):
	 * samples' work, counted as theirs. */
	t0 = thread_ns();
	manager_batch_flush(M, false);
	t0 = thread_ns() - t0;
	c->feed += t0;
	c->flush += t0;
	t0 = thread_ns();
	manager_batch(M, true);
	c->batch += thread_ns() - t0;
}

/* Processes end and start (O.churn a second): an exit record once the child is gone, a new
 * process in its place, attached. */
static void churn(uint64_t base_ns, struct cpu *c)
{
	double n = O.churn;
	uint64_t t0;

	while (n >= 1 || rnd01() < n) {
		struct proc *p = &procs[rnd() % O.procs];

		n -= 1;
		proc_kill(p);
		t0 = thread_ns();
		proc_exit_record(p, base_ns + 999000000ULL);
		c->churn += thread_ns() - t0;
		c->exits++;
		proc_start(p, p - procs);
		t0 = thread_ns();
		if (attach(p) < 0)
			fprintf(stderr, "replay: attach of %d failed\n", (int)p->pid);
		c->churn += thread_ns() - t0;
		c->starts++;
		if (n <= 0)
			break;
	}
}

/* JIT code appears: the JIT processes' perf maps grow. */
static void jit_grow(void)
{
	for (unsigned i = 0; i < O.procs; i++) {
		struct proc *p = &procs[i];

		if (!p->jit)
			continue;
		p->jit_acc += O.jit_rate;
		if (p->jit_acc >= 1) {
			perfmap_append(p, p->jit_n + (uint32_t)p->jit_acc);
			p->jit_acc -= (uint32_t)p->jit_acc;
		}
	}
}

static void one_second(unsigned s, struct batch *bt, struct cpu *c, struct scrape *sc)
{
	uint64_t base_ns = (uint64_t)s * 1000000000ULL, t0;

	for (unsigned b = 0; b < 1000 / MANAGER_BATCH_MS; b++)
		feed_batch(bt, base_ns, b, c);
	churn(base_ns, c);
	jit_grow();
	t0 = thread_ns();
	manager_housekeeping(M);
	c->house += thread_ns() - t0;
	t0 = thread_ns();
	while (sd_event_run(M->event, 0) > 0) /* targets dropped are freed here */
		;
	c->loop += thread_ns() - t0;
	if (s >= O.warmup && !sc->on && (s - O.warmup) % O.scrape_period == 0 &&
	    s + O.scrape_seconds < O.warmup + O.seconds)
		scrape_take(sc, s, c);
	else if (sc->on && s - sc->at >= O.scrape_seconds)
		scrape_answer(sc, c);
}

struct totals {
	uint64_t attach_ns, rss0, lookups0, steps0;
	uint64_t real_ns; /* the main loop's real time */
};

static void summary(const struct cpu *cpu, const struct cpu *warm, const struct totals *tt)
{
	double secs = O.seconds;
	uint64_t feed = cpu->feed - warm->feed, batch = cpu->batch - warm->batch;
	uint64_t flush = cpu->flush - warm->flush;
	uint64_t house = cpu->house - warm->house, ch = cpu->churn - warm->churn;
	uint64_t loop = cpu->loop - warm->loop, samples = cpu->samples - warm->samples;
	uint64_t total = feed + batch + house + ch + loop, exits = cpu->exits - warm->exits;
	uint64_t lookups, steps, scrape = cpu->scrape_take + cpu->scrape_answer;
	double spl, per = cpu->scrapes ? cpu->scrapes : 1;

	manager_lookup_stats(M, &lookups, &steps);
	spl = lookups > tt->lookups0 ? (double)(steps - tt->steps0) / (lookups - tt->lookups0) : 0;
	printf("cpu per simulated second (after the warm-up, %u s): %.2f%% of a core = "
	       "samples %.2f%% (%.2f us a sample, %.2f%% of a core of it in runs added at a "
	       "drain's end), drains %.2f%%, housekeeping %.2f%%, "
	       "exits and attaches %.2f%% (%llu processes ended and started: %.0f us each), "
	       "loop %.2f%%\n",
	       O.seconds, total / secs / 1e7, feed / secs / 1e7, samples ? feed / 1e3 / samples : 0,
	       flush / secs / 1e7, batch / secs / 1e7, house / secs / 1e7, ch / secs / 1e7,
	       (unsigned long long)exits, exits ? ch / 1e3 / exits : 0, loop / secs / 1e7);
	printf("lookups %llu steps %llu steps_per_lookup %.3f unknown_tgid %llu bad_records %llu\n",
	       (unsigned long long)(lookups - tt->lookups0),
	       (unsigned long long)(steps - tt->steps0), spl, (unsigned long long)M->unknown_tgid,
	       (unsigned long long)ringbuf_bad_records(M->ringbuf));
	{ /* the attached targets' re-reads of their maps (symbolize.c find_mapping) */
		uint64_t reread = 0, same = 0, samples = 0, stacks = 0, funcs = 0, n = 0;
		struct target *t;

		manager_for_each_attached(M, t) {
			const struct tsym_stats *st = t->sym ? tsym_get_stats(t->sym) : NULL;
			struct profile_stats ps;

			reread += st ? st->maps_reread : 0;
			same += st ? st->maps_same : 0;
			profile_get_stats(t->profile, &ps);
			samples += ps.samples;
			stacks += ps.stacks;
			funcs += ps.funcs;
			n++;
		}
		/* How new the stream stays: what each sample brings the profiles */
		printf("novelty: the attached targets' profiles hold %llu samples in %llu distinct "
		       "stacks (%.2f a sample) of %llu functions (%.0f a process, %.2f a sample)\n",
		       (unsigned long long)samples, (unsigned long long)stacks,
		       samples ? (double)stacks / samples : 0, (unsigned long long)funcs,
		       n ? (double)funcs / n : 0, samples ? (double)funcs / samples : 0);
		printf("maps read again for an address none held: %llu, unchanged %llu (attached "
		       "targets)\n",
		       (unsigned long long)reread, (unsigned long long)same);
	}
	/* Targets the housekeeping left out, quiet since its last second (manager_housekeeping) */
	printf("housekeeping: %llu credential checks, %llu quiet target-seconds left out\n",
	       (unsigned long long)M->cred_ticks, (unsigned long long)M->quiet_skips);
	/* The alive sweep (every 10 s a target) and the other per-target timers follow the
	 * daemon's clock, which is real time here: run faster than simulated time, they are
	 * less often per simulated second than on a host, and slower, more often. */
	printf("clock: %.1f s real for %u s simulated (x%.2f): the 10 s alive sweep ran %llu "
	       "checks, %.0f at the simulated rate\n",
	       tt->real_ns / 1e9, O.warmup + O.seconds, tt->real_ns / 1e9 / (O.warmup + O.seconds),
	       (unsigned long long)M->alive_checks,
	       (double)M->alive_checks * (O.warmup + O.seconds) / (tt->real_ns / 1e9));
	printf("runs: %llu samples kept for a run, %llu runs added (%.1f samples a run)%s\n",
	       (unsigned long long)M->batch_kept, (unsigned long long)M->batch_runs,
	       M->batch_runs ? (double)M->batch_kept / M->batch_runs : 0,
	       O.no_batch ? " (--no-batch)" : "");
	if (cpu->scrapes)
		printf(
		    "scrape: %llu whole-host scrapes of %u s, %.1f targets each (%s), %.0f "
		    "samples, %.0f KB gzip'd pprof: %.2f ms to snapshot, %.2f ms to answer in the "
		    "loop's steps (each target's message, packed) + %.2f ms in the build thread "
		    "(unpack, "
		    "merge %.2f, pprof) (%.2f ms a scrape); the loop held at most %.0f ms by a "
		    "step "
		    "(%.0f ms with the answer whole in the loop)\n",
		    (unsigned long long)cpu->scrapes, O.scrape_seconds, cpu->scrape_targets / per,
		    O.procs > HTTP_MAX_HOST_ ? "over the endpoint's 8192: it refuses"
					     : "within the endpoint's 8192",
		    cpu->scrape_samples / per, cpu->scrape_bytes / 1e3 / per,
		    cpu->scrape_take / 1e6 / per, cpu->scrape_answer / 1e6 / per,
		    cpu->scrape_build / 1e6 / per, cpu->scrape_merge / 1e6 / per,
		    (scrape + cpu->scrape_build) / 1e6 / per, cpu->scrape_hold_max / 1e6,
		    cpu->scrape_was_max / 1e6);
	report_memory(O.seconds, tt->rss0, cpu, false);
	burst_model((double)cpu->records_bytes / cpu->samples,
		    samples ? (feed + batch) / 1e3 / samples : 1, 1.0, cpu);
	printf("RESULT procs=%u threads=%u cpu_pct=%.2f us_per_sample=%.2f steps_per_lookup=%.3f "
	       "profile_bytes_per_proc=%.0f rss_mb=%.1f scrape_ms=%.2f scrape_hold_ms=%.0f "
	       "attach_us=%.0f\n",
	       O.procs, O.threads, total / secs / 1e7, samples ? feed / 1e3 / samples : 0, spl,
	       (double)M->profile_bytes /
		   (M->n_attached + M->n_kept ? M->n_attached + M->n_kept : 1),
	       rss_bytes() / 1048576.0, cpu->scrapes ? (scrape + cpu->scrape_build) / 1e6 / per : 0,
	       cpu->scrape_hold_max / 1e6, tt->attach_ns / 1e3 / O.procs);
}

/* The manager as kprofd makes it, its loop's timers off: the replay calls what they call, in
 * simulated time. */
static void manager_setup(void)
{
	int err = manager_new(load_conf, NULL, &M);

	if (err < 0)
		die("manager_new (run as root: it loads kprofd's BPF object)", -err);
	sd_event_source_set_enabled(M->drain_timer, SD_EVENT_OFF);
	sd_event_source_set_enabled(M->refresh_timer, SD_EVENT_OFF);
	sd_event_source_set_enabled(M->rb_source, SD_EVENT_OFF);
}

int main(int argc, char **argv)
{
	size_t rec_max = offsetof(struct kp_sample, ips) + 8 * 84;
	struct cpu cpu = {0}, warm = {0};
	struct scrape sc = {0};
	struct totals tt = {0};
	struct batch bt;
	uint64_t t0;
	void *jit;
	int err;

	parse(argc, argv);
	rng_s ^= mix(O.seed, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Before anything big is loaded: the children the forker makes are small. */
	jit = mmap(NULL, JIT_BYTES, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		die("mmap", errno);
	jit_base = (uintptr_t)jit;
	read_ranges();
	read_ksyms();
	forker_start();
	population();
	zipf_table();
	manager_setup();
	bt.per_batch = O.cpus * O.hz / (1000 / MANAGER_BATCH_MS);
	bt.buf = malloc(bt.per_batch * rec_max);
	bt.len = calloc(bt.per_batch, sizeof(*bt.len));
	if (!bt.buf || !bt.len)
		die("batch", ENOMEM);
	printf("replay: %u processes, %u threads, %u CPUs at %u Hz (%u samples/s), %u s "
	       "simulated (+%u warm-up), churn %.2f processes/s, %.0f%% JIT processes (perf maps "
	       "of %u functions, +%.2f/s each), %u stacks a process, %u kernel symbols, %u code "
	       "mappings\n",
	       O.procs, O.threads, O.cpus, O.hz, O.cpus * O.hz, O.seconds, O.warmup, O.churn,
	       O.jit_frac * 100, O.jit_initial, O.jit_rate, O.stacks, nksyms, nranges);
	for (unsigned i = 0; i < O.procs; i++)
		proc_start(&procs[i], i);
	t0 = thread_ns();
	for (unsigned i = 0; i < O.procs; i++)
		if ((err = attach(&procs[i])) < 0)
			die("attach", -err);
	tt.attach_ns = thread_ns() - t0;
	tt.rss0 = rss_bytes();
	printf("attach: %u processes in %.3f s of CPU (%.0f us each), rss %llu\n", O.procs,
	       tt.attach_ns / 1e9, tt.attach_ns / 1e3 / O.procs, (unsigned long long)tt.rss0);
	tt.real_ns = now_ns(CLOCK_MONOTONIC);
	for (unsigned s = 0; s < O.warmup + O.seconds; s++) {
		if (s == O.warmup) {
			warm = cpu;
			manager_lookup_stats(M, &tt.lookups0, &tt.steps0);
		}
		one_second(s, &bt, &cpu, &sc);
		if (O.report_every && s >= O.warmup && (s - O.warmup) % O.report_every == 0)
			report_memory(s - O.warmup, tt.rss0, &cpu, true);
	}
	tt.real_ns = now_ns(CLOCK_MONOTONIC) - tt.real_ns;
	summary(&cpu, &warm, &tt);
	for (unsigned i = 0; i < O.procs; i++)
		proc_kill(&procs[i]);
	manager_free(M);
	close(fork_req); /* the forker ends */
	close(fork_resp);
	free(bt.buf);
	free(bt.len);
	free(zipf_cum);
	free(cum_weight);
	free(procs);
	munmap(jit, JIT_BYTES);
	return 0;
}
