// SPDX-License-Identifier: GPL-2.0-only
/* srclines.c: kprofd's source-line resolver (issue 32; docs/ARCHITECTURE.md §2.6a).
 *
 * kprofd never reads DWARF itself: libbfd is GPL-3.0-or-later (kprofd GPL-2.0-only) and its
 * DWARF reader has a long CVE history, so the lines of native code come from kprof-lines
 * (cli/helper/kprof-lines.c), a program of its own, one process per ELF file, spoken to over
 * pipes. Each is started sandboxed: forked from the loop, it takes the file found for it
 * (srcfile.c) as fd 3 and nothing else of kprofd's (close_range), no supplementary groups and
 * the uid and gid of nobody (65534), no_new_privs, RLIMIT_AS 1 GiB, RLIMIT_CPU 20 s, no core,
 * no file writes, 16 fds, an empty environment and kprofd's death as its own (PDEATHSIG); it
 * installs its own seccomp filter before it reads a byte of DWARF. What it writes is parsed as
 * hostile (srcline.c).
 *
 * The loop never waits on a helper. A request for lines (an export, the pprof endpoint) asks
 * srclines_get per address: the cache answers what was resolved before (lcache.c, keyed by the
 * file's build id and the ELF address, bounded in bytes); the rest is queued on its file and
 * the request waits (srclines_wait) until nothing is queued any more or its deadline passes,
 * then is built again from the cache. A deferred event starts helpers for files with work, at
 * most LINES_MAX_HELPERS at once; each gets up to LINES_WINDOW requests ahead of its answers, so
 * the pipe never fills. Each helper has a deadline: LINES_START_MS for its "R" line, then
 * LINES_ANSWER_MS from each answer to the next. A helper that is late, exits, or writes
 * anything but a well-formed answer is killed: the address it was answering is cached as
 * failed (it is never asked again, so an address that hangs libbfd cannot hang every export),
 * the others are asked again of a new helper; after LINES_RESTARTS restarts, or a helper that
 * says it cannot read the file, the file is given up for LINES_RETRY_NS (its addresses say
 * "not available"). A helper whose queue is empty is stopped (its stdin closed); helpers are
 * reaped through their pidfds. Every file's last problem is kept as a note that profiles quote.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "os/clock.h"
#include "os/log.h"
#include "symbols/srcfile.h"
#include "symbols/srclines.h"

#define LINES_MAX_FILES 64   /* files with work, or a recent failure */
#define LINES_MAX_HELPERS 4  /* running at once */
#define LINES_WINDOW 32	     /* requests written ahead of answers */
#define LINES_START_MS 10000 /* to open the file: libbfd reads its headers and symbols */
#define LINES_ANSWER_MS 3000
#define LINES_RESTARTS 2
#define LINES_RETRY_NS (60ULL * 1000000000ULL)
#define LINES_MAX_QUEUE 65536 /* addresses queued on one file */
#define LINES_BUF (64u << 10) /* more than the longest valid answer */
#define NOBODY 65534

struct lfile {
	struct srclines *sl;
	char key[LCACHE_MAX_KEY + 1];
	char used[256];		 /* the file read */
	char note[SRCFILE_NOTE]; /* its last problem */
	int fd;			 /* that file, while there is work */
	uint64_t *q;		 /* addresses to ask: q[qhead..qn) */
	size_t qn, qcap, qhead;
	uint64_t *set; /* addresses queued since it was idle, + 1 (0: empty slot) */
	size_t setn, setcap;
	uint64_t sent[LINES_WINDOW]; /* asked, not answered, in order */
	size_t nsent;
	/* Its helper (pid 0: none). */
	pid_t pid;
	int pidfd, to, from;
	sd_event_source *io, *timer;
	bool ready;
	char *buf;
	size_t len;
	unsigned restarts;
	uint64_t started, killed;
	int err;	    /* why it failed: -ENOENT (no debug information), -EIO */
	uint64_t failed_ns; /* when it failed (0: it did not) */
	uint64_t used_ns;
};

struct reaper {
	sd_event_source *s;
	struct reaper *next;
	struct srclines *sl;
};

struct srclines_waiter {
	struct srclines *sl;
	srclines_done_fn fn;
	void *userdata;
	sd_event_source *timer;
	struct srclines_waiter *next;
};

struct srclines {
	sd_event *e;
	struct srclines_conf conf;
	char helper[PATH_MAX]; /* resolved, "" if none was found */
	char helper_why[256];
	struct lcache *cache;
	struct lfile *files[LINES_MAX_FILES];
	size_t nfiles;
	unsigned running;
	sd_event_source *pump;
	struct reaper *reapers;
	struct srclines_waiter *waiters;
	uint64_t started, killed, answers;
};

/* ---- the helper program ---- */

/* Whether path is a program kprofd may run: a regular executable file owned by root (or kprofd's
 * user), writable by nobody else. */
static bool trusted(const char *path, char *why, size_t len)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len,
			 "%s: not a program kprofd runs (it must be a regular file executable by "
			 "all, owned by root and writable by root alone)",
			 path);
		return false;
	}
	return true;
}

/* conf->helper, else kprof-lines beside kprofd's executable, in ../bin (make install puts
 * kprofd in sbin), in /usr/libexec/kprof. */
static void find_helper(struct srclines *sl)
{
	static const char *const rel[] = {"%s/kprof-lines", "%s/../bin/kprof-lines"};
	char self[PATH_MAX], *slash;
	ssize_t n;

	sl->helper[0] = sl->helper_why[0] = 0;
	if (sl->conf.helper[0]) {
		if (trusted(sl->conf.helper, sl->helper_why, sizeof(sl->helper_why)))
			snprintf(sl->helper, sizeof(sl->helper), "%s", sl->conf.helper);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	for (size_t i = 0; slash && i < ARRAY_SIZE(rel); i++)
		if ((size_t)snprintf(sl->helper, sizeof(sl->helper), rel[i], self) < sizeof(sl->helper) &&
		    access(sl->helper, F_OK) == 0)
			break;
	if (!slash || access(sl->helper, F_OK) < 0)
		snprintf(sl->helper, sizeof(sl->helper), "/usr/libexec/kprof/kprof-lines");
	if (!trusted(sl->helper, sl->helper_why, sizeof(sl->helper_why)))
		sl->helper[0] = 0;
}

/* In the child: the sandbox the helper starts in, then the helper. Never returns. */
static void child(const char *helper, int elf, int in, int out)
{
	static char *const argv[] = {"kprof-lines", NULL}, *const envp[] = {NULL};
	struct rlimit as = {1UL << 30, 1UL << 30}, cpu = {20, 20}, zero = {0, 0}, nf = {16, 16};
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* kprofd blocks the signals its loop handles */
	signal(SIGPIPE, SIG_DFL);
	/* Above 3 first, so that no dup2 is onto itself (which would keep O_CLOEXEC). */
	elf = fcntl(elf, F_DUPFD_CLOEXEC, 10);
	in = fcntl(in, F_DUPFD_CLOEXEC, 10);
	out = fcntl(out, F_DUPFD_CLOEXEC, 10);
	if (elf < 0 || in < 0 || out < 0 || dup2(elf, 3) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
		_exit(127);
	syscall(SYS_close_range, 4, ~0U, 0);
	if (setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0 ||
	    setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0 ||
	    setrlimit(RLIMIT_NOFILE, &nf) < 0)
		_exit(127);
	if (getuid() == 0 || geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(127);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    getppid() == 1)
		_exit(127);
	execve(helper, argv, envp);
	_exit(127);
}

/* ---- files and their queues ---- */

static uint64_t now(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static bool set_add(struct lfile *f, uint64_t addr)
{
	size_t i;

	if ((f->setn + 1) * 2 > f->setcap) {
		size_t cap = f->setcap ? f->setcap * 2 : 256;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false;
		for (size_t k = 0; k < f->setcap; k++)
			if (f->set[k])
				for (i = mix64(f->set[k]) & (cap - 1);; i = (i + 1) & (cap - 1))
					if (!v[i]) {
						v[i] = f->set[k];
						break;
					}
		free(f->set);
		f->set = v;
		f->setcap = cap;
	}
	for (i = mix64(addr + 1) & (f->setcap - 1); f->set[i]; i = (i + 1) & (f->setcap - 1))
		if (f->set[i] == addr + 1)
			return false;
	f->set[i] = addr + 1;
	f->setn++;
	return true;
}

static bool set_has(const struct lfile *f, uint64_t addr)
{
	for (size_t i = f->setcap ? mix64(addr + 1) & (f->setcap - 1) : 0; f->setcap && f->set[i];
	     i = (i + 1) & (f->setcap - 1))
		if (f->set[i] == addr + 1)
			return true;
	return false;
}

static bool has_work(const struct lfile *f)
{
	return f->qhead < f->qn || f->nsent;
}

/* Nothing left to ask: the queue, the set of what was queued and the file are let go. */
static void idle(struct lfile *f)
{
	f->qn = f->qhead = 0;
	free(f->set);
	f->set = NULL;
	f->setn = f->setcap = 0;
	if (f->fd >= 0 && !f->pid)
		close(f->fd);
	if (!f->pid)
		f->fd = -1;
}

static void file_free(struct lfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->q);
	free(f->set);
	free(f->buf);
	free(f);
}

static struct lfile *file_find(struct srclines *sl, const char *key)
{
	for (size_t i = 0; i < sl->nfiles; i++)
		if (!strcmp(sl->files[i]->key, key))
			return sl->files[i];
	return NULL;
}

/* A new file entry, making room by dropping the least recently used idle one. */
static struct lfile *file_new(struct srclines *sl, const char *key)
{
	struct lfile *f;

	if (sl->nfiles == LINES_MAX_FILES) {
		size_t old = LINES_MAX_FILES;

		for (size_t i = 0; i < sl->nfiles; i++)
			if (!sl->files[i]->pid && !has_work(sl->files[i]) &&
			    (old == LINES_MAX_FILES || sl->files[i]->used_ns < sl->files[old]->used_ns))
				old = i;
		if (old == LINES_MAX_FILES)
			return NULL;
		file_free(sl->files[old]);
		sl->files[old] = sl->files[--sl->nfiles];
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->sl = sl;
	f->fd = f->pidfd = f->to = f->from = -1;
	snprintf(f->key, sizeof(f->key), "%s", key);
	sl->files[sl->nfiles++] = f;
	return f;
}

/* The file gives up: its queue is dropped, its addresses say "not available" for a while. */
static void file_fail(struct lfile *f, int err)
{
	f->err = err;
	f->failed_ns = now();
	f->qn = f->qhead = 0;
	idle(f);
}

static int enqueue(struct lfile *f, uint64_t addr)
{
	if (f->qn - f->qhead >= LINES_MAX_QUEUE)
		return -EBUSY;
	if (!set_add(f, addr))
		return f->setcap ? 0 : -ENOMEM; /* queued already */
	if (f->qhead && f->qn == f->qcap) { /* reuse the front before growing */
		memmove(f->q, f->q + f->qhead, (f->qn - f->qhead) * sizeof(*f->q));
		f->qn -= f->qhead;
		f->qhead = 0;
	}
	if (array_grow((void **)&f->q, &f->qcap, f->qn + 1, sizeof(*f->q), 256) < 0)
		return -ENOMEM;
	f->q[f->qn++] = addr;
	return 0;
}

/* Put v[0..n) back at the front of the queue (asked of a helper that was killed). Out of
 * memory, they are dropped (they say "not available"). */
static void requeue(struct lfile *f, const uint64_t *v, size_t n)
{
	size_t left = f->qn - f->qhead;

	if (!n)
		return;
	if (f->qhead < n) {
		if (array_grow((void **)&f->q, &f->qcap, left + n, sizeof(*f->q), 256) < 0)
			return;
		memmove(f->q + n, f->q + f->qhead, left * sizeof(*f->q));
		f->qhead = n;
		f->qn = left + n;
	}
	f->qhead -= n;
	memcpy(f->q + f->qhead, v, n * sizeof(*v));
}

/* ---- helpers ---- */

static int on_reap(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct reaper *r = userdata, **pp;
	siginfo_t si = {0};

	(void)revents;
	waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG);
	for (pp = &r->sl->reapers; *pp != r; pp = &(*pp)->next)
		;
	*pp = r->next;
	sd_event_source_disable_unref(s); /* closes the pidfd */
	free(r);
	return 0;
}

/* Reap the helper of pidfd once it exits (it was killed, or its stdin closed). */
static void reap_later(struct srclines *sl, int pidfd)
{
	struct reaper *r = calloc(1, sizeof(*r));
	siginfo_t si = {0};

	if (r && sd_event_add_io(sl->e, &r->s, pidfd, EPOLLIN, on_reap, r) >= 0) {
		sd_event_source_set_io_fd_own(r->s, true);
		r->sl = sl;
		r->next = sl->reapers;
		sl->reapers = r;
		return;
	}
	free(r);
	waitid(P_PIDFD, pidfd, &si, WEXITED); /* no memory: wait for it now (it is ending) */
	close(pidfd);
}

/* The helper ends: stopped (why NULL: its queue is empty) or killed. A killed helper's first
 * address asked is the one it failed on: cached as failed; the others are asked again. */
static void helper_end(struct lfile *f, const char *why)
{
	struct srclines *sl = f->sl;

	if (!f->pid)
		return;
	if (why) {
		pidfd_send_signal(f->pidfd, SIGKILL, NULL, 0);
		f->killed++;
		sl->killed++;
		snprintf(f->note, sizeof(f->note), "kprof-lines on %s %s%s", f->used, why,
			 f->nsent ? "" : " before it was ready");
		log_info("lines: %s", f->note);
	}
	/* The sources first: an fd closed while epoll still watches it leaves a stale entry. */
	f->io = sd_event_source_disable_unref(f->io);
	f->timer = sd_event_source_disable_unref(f->timer);
	close(f->to);
	close(f->from);
	reap_later(sl, f->pidfd);
	free(f->buf);
	f->buf = NULL;
	f->len = 0;
	f->pid = 0;
	f->pidfd = f->to = f->from = -1;
	sl->running--;
	if (why && f->nsent) {
		lcache_put(sl->cache, f->key, f->sent[0], NULL, 0, true);
		requeue(f, f->sent + 1, f->nsent - 1);
	}
	f->nsent = 0;
	f->ready = false;
	if (why && ++f->restarts > LINES_RESTARTS)
		file_fail(f, -EIO);
	if (!has_work(f))
		idle(f);
	sd_event_source_set_enabled(sl->pump, SD_EVENT_ONESHOT); /* a restart, or waiters */
}

static void arm(struct lfile *f, unsigned ms)
{
	sd_event_source_set_time_relative(f->timer, (uint64_t)ms * 1000);
	sd_event_source_set_enabled(f->timer, SD_EVENT_ONESHOT);
}

/* Ask the next addresses, up to the window. false if the helper is gone. */
static bool send_more(struct lfile *f)
{
	while (f->nsent < LINES_WINDOW && f->qhead < f->qn) {
		char req[SRCLINE_REQUEST_MAX];
		size_t len = srcline_request(f->q[f->qhead], req);

		if (write(f->to, req, len) != (ssize_t)len) {
			helper_end(f, "stopped reading its requests");
			return false;
		}
		f->sent[f->nsent++] = f->q[f->qhead++];
	}
	if (!has_work(f)) {
		helper_end(f, NULL);
		return false;
	}
	return true;
}

/* The answers in f->buf, each cached; false if the helper is gone. */
static bool take_answers(struct lfile *f)
{
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	size_t used = 0;
	int n = 0;

	if (!f->ready) {
		char why[200];

		n = srcline_start(f->buf, f->len, &used, why, sizeof(why));
		if (n == -EAGAIN)
			return true;
		if (n == -ENOEXEC) {
			snprintf(f->note, sizeof(f->note), "kprof-lines cannot read %s: %s", f->used,
				 why);
			f->nsent = 0;
			file_fail(f, -ENOENT);
			helper_end(f, NULL);
			return false;
		}
		if (n < 0) {
			helper_end(f, "did not start as it should");
			return false;
		}
		f->ready = true;
		memmove(f->buf, f->buf + used, f->len -= used);
	}
	while (f->nsent && (n = srcline_parse(f->buf, f->len, &used, fr, SRCLINE_MAX_FRAMES)) >= 0) {
		if (lcache_put(f->sl->cache, f->key, f->sent[0], fr, n, false) == -E2BIG)
			lcache_put(f->sl->cache, f->key, f->sent[0], NULL, 0, false);
		f->sl->answers++;
		memmove(f->sent, f->sent + 1, --f->nsent * sizeof(*f->sent));
		memmove(f->buf, f->buf + used, f->len -= used);
	}
	if (f->nsent && n == -EBADMSG) {
		helper_end(f, "answered nonsense");
		return false;
	}
	if (!f->nsent && f->len) {
		helper_end(f, "wrote more than it was asked");
		return false;
	}
	return true;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct lfile *f = userdata;
	ssize_t n;

	(void)s;
	(void)revents;
	for (;;) {
		if (f->len == LINES_BUF - 1) {
			helper_end(f, "answered nonsense (too long)");
			return 0;
		}
		n = read(fd, f->buf + f->len, LINES_BUF - 1 - f->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			helper_end(f, n == 0 ? "exited" : "could not be read");
			return 0;
		}
		f->len += n;
		if (!take_answers(f))
			return 0;
	}
	if (f->ready && send_more(f))
		arm(f, LINES_ANSWER_MS);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct lfile *f = userdata;
	char why[64];

	(void)s;
	(void)usec;
	snprintf(why, sizeof(why), "was killed: no answer in %u ms",
		 f->ready ? LINES_ANSWER_MS : LINES_START_MS);
	helper_end(f, why);
	return 0;
}

static int helper_start(struct srclines *sl, struct lfile *f)
{
	int in[2], out[2], err;
	pid_t pid;

	if (!sl->helper[0]) {
		snprintf(f->note, sizeof(f->note), "no kprof-lines to run: %s",
			 sl->helper_why[0] ? sl->helper_why : "not found (set [lines] helper)");
		file_fail(f, -ENOENT);
		return -ENOENT;
	}
	if (!f->buf && !(f->buf = malloc(LINES_BUF)))
		return -ENOMEM;
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		err = -errno;
		close(in[0]);
		close(in[1]);
		return err;
	}
	pid = fork();
	if (pid == 0)
		child(sl->helper, f->fd, in[0], out[1]);
	close(in[0]);
	close(out[1]);
	f->to = in[1];
	f->from = out[0];
	f->pidfd = pid > 0 ? pidfd_open(pid, 0) : -1;
	if (pid < 0 || f->pidfd < 0) {
		err = pid < 0 ? -EAGAIN : -errno;
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(f->to);
		close(f->from);
		f->to = f->from = -1;
		return err;
	}
	f->pid = pid;
	sl->running++;
	sl->started++;
	f->started++;
	fcntl(f->from, F_SETFL, O_NONBLOCK);
	fcntl(f->to, F_SETFL, O_NONBLOCK);
	err = sd_event_add_io(sl->e, &f->io, f->from, EPOLLIN, on_io, f);
	if (err >= 0)
		err = sd_event_add_time_relative(sl->e, &f->timer, CLOCK_MONOTONIC,
						 LINES_START_MS * 1000ULL, 1000, on_timer, f);
	if (err < 0)
		helper_end(f, "could not be watched");
	return err;
}

static void check_waiters(struct srclines *sl);

/* Start helpers for the files with work, as many as may run; call the waiters whose work is
 * done. Deferred (never from inside a helper's callback), so that a waiter's callback, which may
 * ask for more lines, finds no file half-changed. */
static int on_pump(sd_event_source *s, void *userdata)
{
	struct srclines *sl = userdata;

	(void)s;
	for (size_t i = 0; i < sl->nfiles && sl->running < LINES_MAX_HELPERS; i++) {
		struct lfile *f = sl->files[i];

		if (f->pid || !has_work(f))
			continue;
		if (helper_start(sl, f) < 0 && !f->failed_ns) {
			snprintf(f->note, sizeof(f->note), "kprof-lines could not be started");
			file_fail(f, -EIO);
		}
	}
	check_waiters(sl);
	return 0;
}

/* ---- waiting ---- */

bool srclines_busy(const struct srclines *sl)
{
	for (size_t i = 0; i < sl->nfiles; i++)
		if (has_work(sl->files[i]))
			return true;
	return false;
}

static void fire(struct srclines_waiter *w)
{
	srclines_done_fn fn = w->fn;
	void *userdata = w->userdata;

	srclines_unwait(w);
	fn(userdata);
}

static void check_waiters(struct srclines *sl)
{
	if (!sl->waiters || srclines_busy(sl))
		return;
	while (sl->waiters)
		fire(sl->waiters);
}

static int on_wait_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	fire(userdata); /* the deadline: whatever is resolved by now */
	return 0;
}

int srclines_wait(struct srclines *sl, unsigned ms, srclines_done_fn fn, void *userdata,
		  struct srclines_waiter **ret)
{
	struct srclines_waiter *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	*w = (struct srclines_waiter){.sl = sl, .fn = fn, .userdata = userdata};
	err = sd_event_add_time_relative(sl->e, &w->timer, CLOCK_MONOTONIC,
					 srclines_busy(sl) ? (uint64_t)ms * 1000 : 0, 1000,
					 on_wait_timer, w);
	if (err < 0) {
		free(w);
		return err;
	}
	w->next = sl->waiters;
	sl->waiters = w;
	*ret = w;
	return 0;
}

void srclines_unwait(struct srclines_waiter *w)
{
	struct srclines_waiter **pp;

	if (!w)
		return;
	for (pp = &w->sl->waiters; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	sd_event_source_disable_unref(w->timer);
	free(w);
}

/* ---- lookups ---- */

/* The file of key, opened for its first address (the file a target maps, its debug file). */
static int file_ready(struct srclines *sl, struct tsym *ts, const char *key,
		      const struct srcfile_map *m, uint64_t rt_addr, struct lfile **ret)
{
	struct lfile *f = file_find(sl, key);
	struct srcfile sf;
	int err;

	if (f && f->failed_ns && now() - f->failed_ns < LINES_RETRY_NS)
		return f->err;
	if (!f && !(f = file_new(sl, key)))
		return -EBUSY;
	f->used_ns = now();
	*ret = f;
	if (f->failed_ns) { /* tried again after a while: a debug file may have come */
		f->failed_ns = 0;
		f->restarts = 0;
	}
	if (f->fd >= 0)
		return 0;
	/* Opened again for new addresses: what the profiles of this episode say starts here. */
	f->started = f->killed = 0;
	f->note[0] = 0;
	err = srcfile_open(ts, rt_addr, m, sl->conf.debug_dir, &sf);
	if (sf.note[0])
		snprintf(f->note, sizeof(f->note), "%s", sf.note);
	if (err < 0) {
		file_fail(f, err == -ENOENT ? -ENOENT : -EIO);
		return f->err;
	}
	f->fd = sf.fd;
	snprintf(f->used, sizeof(f->used), "%s", sf.used);
	return 0;
}

int srclines_get(struct srclines *sl, struct tsym *ts, const struct srcfile_map *m,
		 uint64_t rt_addr, uint64_t elf_addr, bool queue, struct srcline_frame *fr,
		 size_t max, struct srclines_res *res)
{
	struct lfile *f = NULL;
	bool failed = false;
	size_t n = 0;
	int err;

	res->cached = false;
	res->key[0] = 0;
	if (!sl->conf.enabled || elf_addr == UINT64_MAX ||
	    srcfile_key(ts, rt_addr, m, res->key) < 0)
		return -ENOENT;
	if (lcache_get(sl->cache, res->key, elf_addr, fr, max, &n, &failed, &res->seq)) {
		res->cached = true;
		return failed ? -EIO : (int)n;
	}
	f = file_find(sl, res->key);
	if (f && set_has(f, elf_addr) && has_work(f))
		return queue ? -EINPROGRESS : -EAGAIN;
	if (f && f->failed_ns && now() - f->failed_ns < LINES_RETRY_NS)
		return f->err;
	if (!queue)
		return -EAGAIN;
	err = file_ready(sl, ts, res->key, m, rt_addr, &f);
	if (err < 0)
		return err;
	err = enqueue(f, elf_addr);
	if (err < 0)
		return err;
	if (!f->pid)
		sd_event_source_set_enabled(sl->pump, SD_EVENT_ONESHOT);
	return -EINPROGRESS;
}

void srclines_jit_key(pid_t pid, uint64_t attached_ns, char key[LCACHE_MAX_KEY + 1])
{
	snprintf(key, LCACHE_MAX_KEY + 1, "jit:%d:%llu", (int)pid, (unsigned long long)attached_ns);
}

int srclines_put(struct srclines *sl, const char *key, uint64_t addr,
		 const struct srcline_frame *fr, size_t n)
{
	return sl->conf.enabled ? lcache_put(sl->cache, key, addr, fr, n, false) : -ENOENT;
}

int srclines_cached(struct srclines *sl, const char *key, uint64_t addr, struct srcline_frame *fr,
		    size_t max)
{
	uint64_t seq;
	bool failed;
	size_t n;

	if (!lcache_get(sl->cache, key, addr, fr, max, &n, &failed, &seq) || failed)
		return -ENOENT;
	return (int)n;
}

uint64_t srclines_seq(const struct srclines *sl)
{
	return lcache_seq(sl->cache);
}

bool srclines_file_info(const struct srclines *sl, const char *key, uint64_t *started,
			uint64_t *killed, const char **note)
{
	for (size_t i = 0; i < sl->nfiles; i++)
		if (!strcmp(sl->files[i]->key, key)) {
			*started = sl->files[i]->started;
			*killed = sl->files[i]->killed;
			*note = sl->files[i]->note;
			return true;
		}
	return false;
}

/* ---- the resolver ---- */

int srclines_configure(struct srclines *sl, const struct srclines_conf *conf)
{
	bool again = !sl->cache || conf->cache_bytes != sl->conf.cache_bytes ||
		     strcmp(conf->debug_dir, sl->conf.debug_dir) || strcmp(conf->helper, sl->conf.helper);
	struct lcache *c = NULL;

	if (again) {
		int err = lcache_new(conf->cache_bytes, &c);

		if (err < 0)
			return err;
		lcache_free(sl->cache);
		sl->cache = c;
		/* What failed for want of a debug file or a helper may work now. */
		for (size_t i = 0; i < sl->nfiles; i++)
			sl->files[i]->failed_ns = 0;
	}
	sl->conf = *conf;
	find_helper(sl);
	if (conf->enabled && !sl->helper[0])
		log_warn("lines: %s: native code will have no source lines", sl->helper_why[0] ? sl->helper_why : "kprof-lines not found");
	return 0;
}

int srclines_new(sd_event *e, const struct srclines_conf *conf, struct srclines **ret)
{
	struct srclines *sl = calloc(1, sizeof(*sl));
	int err;

	if (!sl)
		return -ENOMEM;
	sl->e = e;
	err = srclines_configure(sl, conf);
	if (err >= 0)
		err = sd_event_add_defer(e, &sl->pump, on_pump, sl);
	if (err >= 0)
		err = sd_event_source_set_enabled(sl->pump, SD_EVENT_OFF);
	if (err < 0) {
		srclines_free(sl);
		return err;
	}
	*ret = sl;
	return 0;
}

void srclines_free(struct srclines *sl)
{
	if (!sl)
		return;
	while (sl->waiters)
		srclines_unwait(sl->waiters);
	for (size_t i = 0; i < sl->nfiles; i++) {
		struct lfile *f = sl->files[i];

		f->nsent = 0;
		helper_end(f, NULL);
		file_free(f);
	}
	while (sl->reapers) {
		struct reaper *r = sl->reapers;

		sl->reapers = r->next;
		sd_event_source_disable_unref(r->s);
		free(r);
	}
	sd_event_source_disable_unref(sl->pump);
	lcache_free(sl->cache);
	free(sl);
}

void srclines_get_stats(const struct srclines *sl, struct srclines_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->started = sl->started;
	st->killed = sl->killed;
	st->answers = sl->answers;
	for (size_t i = 0; i < sl->nfiles; i++)
		st->queued_now += sl->files[i]->qn - sl->files[i]->qhead + sl->files[i]->nsent;
	if (sl->cache)
		lcache_get_stats(sl->cache, &st->cache);
}
