// SPDX-License-Identifier: GPL-2.0-only
/* jvmattach.c: jcmd commands sent to a HotSpot JVM through its dynamic attach protocol.
 *
 * The protocol (jcmd's, HotSpot's attachListener): the JVM listens on the Unix socket
 * /tmp/.java_pidN of its own root, N its pid as it sees itself (NStgid). If the socket is not
 * there yet, the client creates the file .attach_pidN in the JVM's working directory (or /tmp)
 * and sends SIGQUIT: the JVM's signal thread finds the file, owned by its euid, and starts the
 * listener instead of printing a thread dump. The client connects, writes a request
 * (hsattach.c) and reads the result code and output until the JVM closes. The JVM takes a peer
 * only with its own effective uid and gid (or root), and the socket is mode 0600.
 *
 * kprofd does this as the JVM's user: it works for a JVM of any user and in a container (the
 * uids the host sees are what SO_PEERCRED gives the JVM, mapped into its namespace), and root's
 * rights never serve a file operation in a directory the target controls. The exchange runs in
 * a short-lived helper process forked from the loop (jvmhelper.c, which says what it does, step
 * by step): a process and not a thread, since kprofd's threads must never change credentials
 * (a thread with the target user's uid could be stopped or killed by that user with tgkill, and
 * kprofd with it). It writes its progress and the replies to a shared anonymous mapping, and
 * exits.
 * The loop watches the child's pidfd and a deadline timer; at the deadline it kills the child
 * and reports the step it was at. A cancel (the target ended) closes a pipe the child polls in
 * every wait: it removes its attach file and exits, and the loop, which owns the exchange's
 * sources from then on, reaps it. kprofd's own end closes that pipe too. Nothing the target does
 * blocks the loop: a FUSE directory, a JVM that never answers or a stopped one only keep a child
 * waiting until it is killed. The replies are parsed in kprofd by the pure hsattach module.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/hsattach.h"
#include "kprof/procmaps.h"
#include "os/clock.h"
#include "symbols/jvmattach.h"
#include "symbols/jvmhelper.h"
#include "os/procfs.h"

#define KILL_GRACE_MS 500 /* the helper's own deadline comes first */

_Static_assert(JVMATTACH_MAX_CMDS == JVMHELPER_MAX_CMDS, "the helper's commands");
_Static_assert(JVMATTACH_REPLY_MAX == JVMHELPER_REPLY_MAX, "the helper's replies");

static const char *const step_names[] = {
    [JVMHELPER_STEP_START] = "starting",
    [JVMHELPER_STEP_ARGS] = "reading its command line and environment",
    [JVMHELPER_STEP_PROC] = "opening its root and working directory",
    [JVMHELPER_STEP_CREDS] = "taking its uid and gid",
    [JVMHELPER_STEP_SOCKET] = "looking for its attach socket",
    [JVMHELPER_STEP_TRIGGER] = "creating its attach file",
    [JVMHELPER_STEP_SIGNAL] = "sending it SIGQUIT",
    [JVMHELPER_STEP_WAIT] = "waiting for its attach socket after SIGQUIT",
    [JVMHELPER_STEP_CONNECT] = "connecting to its attach socket",
    [JVMHELPER_STEP_SEND] = "sending",
    [JVMHELPER_STEP_REPLY] = "waiting for its reply to",
    [JVMHELPER_STEP_DONE] = "done",
};

/* Fair shares of the exchanges (security issue 25, item 9): one uid (the JVM's euid) runs at
 * most half of them, so that a user whose JVMs never answer (each holds its exchange until the
 * 10 s deadline) leaves the other half to everyone else; and when they are all taken, the uids
 * refused meanwhile get the next free ones in turn, the one served longest ago first. A refused
 * JVM asks again a second later (jvmmap.c): a uid not heard of for WAIT_FRESH_NS waits no more. */
#define SHARE_UIDS 64
#define WAIT_FRESH_NS (3 * 1000000000ULL)

struct uid_share {
	uid_t uid;
	unsigned running;
	uint64_t since_ns; /* refused for want of a free exchange since (0: not waiting) */
	uint64_t heard_ns; /* ... and refused again last then (a waiter asks every second) */
	uint64_t served_ns; /* its last exchange started (0: never) */
};

struct jvmattach_ctx {
	sd_event *event;
	unsigned running, max;
	struct uid_share uids[SHARE_UIDS];
};

struct jvmattach {
	struct jvmattach_ctx *ctx;
	unsigned refs; /* one per source: the last one gone frees it */
	int child_fd;  /* pidfd of the helper */
	int cancel_fd; /* closed: the helper stops, cleaning up after itself */
	sd_event_source *exit_source, *timer;
	struct jvmhelper_shared *sh;
	uint64_t started_ns;
	unsigned timeout_ms;
	bool timed_out, cancelled;
	pid_t nspid;
	uid_t uid;
	size_t ncmds;
	char cmd[JVMATTACH_MAX_CMDS][64]; /* for messages */
	jvmattach_done_fn done;
	void *userdata;
};

int jvmattach_ctx_new(sd_event *e, unsigned max, struct jvmattach_ctx **ret)
{
	struct jvmattach_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return -ENOMEM;
	ctx->event = e;
	ctx->max = max;
	*ret = ctx;
	return 0;
}

void jvmattach_ctx_free(struct jvmattach_ctx *ctx)
{
	free(ctx);
}

static bool waiting(const struct uid_share *u, uint64_t now)
{
	return u->since_ns && now - u->heard_ns < WAIT_FRESH_NS;
}

/* Whether u's turn comes before me's: served longer ago, then waiting longer, then the uid. */
static bool before(const struct uid_share *u, const struct uid_share *me, uint64_t now)
{
	uint64_t my_since = waiting(me, now) ? me->since_ns : now;

	if (u->served_ns != me->served_ns)
		return u->served_ns < me->served_ns;
	if (u->since_ns != my_since)
		return u->since_ns < my_since;
	return u->uid < me->uid;
}

/* uid's entry, made if need be (NULL: the table is full of uids running or waiting). */
static struct uid_share *share_of(struct jvmattach_ctx *ctx, uid_t uid, uint64_t now)
{
	struct uid_share *free_one = NULL;

	for (size_t i = 0; i < SHARE_UIDS; i++) {
		struct uid_share *u = &ctx->uids[i];

		if (u->uid == uid && (u->running || u->since_ns || u->served_ns))
			return u;
		if (!u->running && !waiting(u, now) &&
		    (!free_one || u->served_ns < free_one->served_ns))
			free_one = u;
	}
	if (free_one)
		*free_one = (struct uid_share){.uid = uid};
	return free_one;
}

/* May uid start an exchange now? 0, or -EBUSY with why said. */
static int share_admit(struct jvmattach_ctx *ctx, uid_t uid, char *why, size_t whylen)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct uid_share *me = share_of(ctx, uid, now);
	unsigned per_uid = ctx->max > 1 ? ctx->max / 2 : 1, ahead = 0;

	if (me && me->running >= per_uid) {
		snprintf(why, whylen, "uid %u runs %u exchanges with JVMs already, its share", uid,
			 me->running);
		return -EBUSY;
	}
	/* Waiting uids whose turn comes first keep the free exchanges they need. */
	for (size_t i = 0; me && i < SHARE_UIDS; i++) {
		const struct uid_share *u = &ctx->uids[i];

		ahead += u != me && waiting(u, now) && u->running < per_uid && before(u, me, now);
	}
	if (ctx->running + ahead >= ctx->max) {
		if (me && !waiting(me, now))
			me->since_ns = now;
		if (me)
			me->heard_ns = now;
		snprintf(why, whylen, "%u exchanges with JVMs are running already%s", ctx->running,
			 ahead ? ", other users' JVMs wait first" : "");
		return -EBUSY;
	}
	if (me) {
		me->since_ns = 0;
		me->served_ns = now;
	}
	return 0;
}

static void share_add(struct jvmattach_ctx *ctx, uid_t uid, int n)
{
	for (size_t i = 0; i < SHARE_UIDS; i++)
		if (ctx->uids[i].uid == uid && (ctx->uids[i].running || n > 0)) {
			ctx->uids[i].running += n;
			return;
		}
}

/* The flag in environment variable name: 1, 0 or -ENOENT. */
static int env_flag(const char *env, size_t len, const char *name)
{
	const char *v;
	size_t vlen;

	if (hsattach_getenv(env, len, name, &v, &vlen) < 0)
		return -ENOENT;
	return hsattach_flag(v, vlen, "PreserveFramePointer");
}

/* -XX:[+-]PreserveFramePointer as the JVM reads its options, the last mention winning:
 * JAVA_TOOL_OPTIONS, the command line (where the launcher puts JDK_JAVA_OPTIONS first),
 * _JAVA_OPTIONS. */
static int args_flag(const struct jvmhelper_shared *sh)
{
	size_t clen = sh->cmdline_len < JVMHELPER_ARGS_MAX ? sh->cmdline_len : JVMHELPER_ARGS_MAX;
	size_t elen = sh->environ_len < JVMHELPER_ARGS_MAX ? sh->environ_len : JVMHELPER_ARGS_MAX;
	int f[3], flag = -ENOENT;

	f[0] = env_flag(sh->environ, elen, "JAVA_TOOL_OPTIONS");
	f[1] = hsattach_flag(sh->cmdline, clen, "PreserveFramePointer");
	if (f[1] < 0)
		f[1] = env_flag(sh->environ, elen, "JDK_JAVA_OPTIONS");
	f[2] = env_flag(sh->environ, elen, "_JAVA_OPTIONS");
	for (int i = 0; i < 3; i++)
		if (f[i] >= 0)
			flag = f[i];
	return flag;
}

int jvmattach_is_hotspot(pid_t pid)
{
	_cleanup_free_ char *maps = NULL;
	struct procmaps *pm = NULL;
	ssize_t n = procfs_read(pid, "maps", &maps, 16u << 20);
	int hotspot = 0;

	if (n < 0)
		return n;
	if (procmaps_parse(maps, n, 65536, &pm) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < procmaps_count(pm) && !hotspot; i++)
		hotspot = hsattach_is_libjvm(procmaps_at(pm, i)->path);
	procmaps_free(pm);
	return hotspot;
}

/* Why a failed step failed, in words a user of jcmd knows. */
static void describe(const struct jvmattach *ja, int step, int err, char *why, size_t len)
{
	const char *cmd =
	    ja->cmd[ja->sh->cmd >= 0 && (size_t)ja->sh->cmd < ja->ncmds ? ja->sh->cmd : 0];

	if (step == JVMHELPER_STEP_SIGNAL && err == -EPERM)
		snprintf(why, len,
			 "its attach listener is not running and it does not catch SIGQUIT "
			 "(-Xrs, or still starting): not signalled");
	else if (step == JVMHELPER_STEP_WAIT && err == -ETIMEDOUT)
		snprintf(why, len,
			 "no attach socket /tmp/.java_pid%d within %u ms of SIGQUIT "
			 "(-XX:+DisableAttachMechanism, or not a HotSpot JVM that answers)",
			 ja->nspid, JVMHELPER_SOCKET_WAIT_MS);
	else if ((step == JVMHELPER_STEP_SOCKET || step == JVMHELPER_STEP_WAIT) && err == -EPERM)
		snprintf(why, len, "/tmp/.java_pid%d is not a socket owned by uid %u: not used",
			 ja->nspid, ja->uid);
	else if (step == JVMHELPER_STEP_TRIGGER)
		snprintf(
		    why, len,
		    "cannot create .attach_pid%d in its working directory or /tmp as uid %u: %s",
		    ja->nspid, ja->uid, strerror(-err));
	else if (step == JVMHELPER_STEP_CREDS)
		snprintf(why, len,
			 "cannot take its uid %u: %s (kprofd needs CAP_SETUID and CAP_SETGID)",
			 ja->uid, strerror(-err));
	else if (step >= JVMHELPER_STEP_CONNECT && step <= JVMHELPER_STEP_REPLY)
		snprintf(why, len, "%s %s: %s", step_names[step], cmd, strerror(-err));
	else
		snprintf(why, len, "%s: %s", step_names[step], strerror(-err));
}

/* The child is gone: tell the caller what came of it. */
static void report(struct jvmattach *ja, const siginfo_t *si)
{
	const struct jvmhelper_shared *sh = ja->sh;
	struct jvmattach_result r = {0};
	int step = sh->step >= JVMHELPER_STEP_START && sh->step <= JVMHELPER_STEP_DONE
		       ? sh->step
		       : JVMHELPER_STEP_START;

	r.ms = (now_ns(CLOCK_MONOTONIC) - ja->started_ns) / 1000000;
	r.triggered = sh->triggered;
	r.args_read = sh->args_read;
	r.preserve_fp = sh->args_read ? args_flag(sh) : -ENOENT;
	if (!sh->done) {
		r.err = ja->timed_out ? -ETIMEDOUT : -ECHILD;
		if (ja->timed_out)
			snprintf(
			    r.why, sizeof(r.why), "no answer within %u ms (%s%s%s)", ja->timeout_ms,
			    step_names[step],
			    step >= JVMHELPER_STEP_CONNECT && step <= JVMHELPER_STEP_REPLY ? " "
											   : "",
			    step >= JVMHELPER_STEP_CONNECT && step <= JVMHELPER_STEP_REPLY
				? ja->cmd[sh->cmd >= 0 && (size_t)sh->cmd < ja->ncmds ? sh->cmd : 0]
				: "");
		else
			snprintf(r.why, sizeof(r.why), "the helper process ended (%s %d) while %s",
				 si->si_code == CLD_EXITED ? "status" : "signal", si->si_status,
				 step_names[step]);
	} else if (sh->err) {
		r.err = sh->err < 0 && sh->err > -4096 ? sh->err : -EIO;
		describe(ja, step, r.err, r.why, sizeof(r.why));
	} else {
		size_t n = sh->nreplies < ja->ncmds ? sh->nreplies : ja->ncmds;

		for (size_t i = 0; i < n; i++) {
			size_t len =
			    sh->len[i] < JVMATTACH_REPLY_MAX ? sh->len[i] : JVMATTACH_REPLY_MAX;
			int err = hsattach_reply(sh->reply[i], len, &r.replies[i]);

			if (err < 0) {
				r.err = err;
				snprintf(r.why, sizeof(r.why),
					 err == -ENODATA
					     ? "it closed the connection without a reply to %s (it "
					       "takes only its own euid and egid)"
					     : "its reply to %s has no result code",
					 ja->cmd[i]);
				break;
			}
			r.nreplies = i + 1;
		}
		if (!r.err && r.nreplies < ja->ncmds) {
			r.err = -EIO;
			snprintf(r.why, sizeof(r.why), "the helper answered %zu of %zu commands",
				 r.nreplies, ja->ncmds);
		}
	}
	ja->done(&r, ja->userdata);
}

static void ja_free(struct jvmattach *ja)
{
	if (ja->child_fd >= 0)
		close(ja->child_fd);
	if (ja->cancel_fd >= 0)
		close(ja->cancel_fd);
	munmap(ja->sh, sizeof(*ja->sh));
	ja->ctx->running--;
	share_add(ja->ctx, ja->uid, -1);
	free(ja);
}

/* The sources' destroy callbacks: each holds a reference to ja (they may go in either order,
 * also when the loop is freed with them floating after a cancel). */
static void exit_gone(void *userdata)
{
	struct jvmattach *ja = userdata;

	ja->exit_source = NULL;
	if (!--ja->refs)
		ja_free(ja);
}

static void timer_gone(void *userdata)
{
	struct jvmattach *ja = userdata;

	ja->timer = NULL;
	if (!--ja->refs)
		ja_free(ja);
}

/* Drop a source: ours to unref, or the loop's (floating) after a cancel. */
static void drop_source(struct jvmattach *ja, sd_event_source *s)
{
	if (!s)
		return;
	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (ja->cancelled)
		sd_event_source_set_floating(s, false);
	else
		sd_event_source_unref(s);
}

static int on_child_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct jvmattach *ja = userdata;
	siginfo_t si = {0};

	(void)revents;
	if (waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG) < 0 && errno != ECHILD)
		return 0;
	if (!ja->cancelled && ja->done)
		report(ja, &si);
	drop_source(ja, ja->timer);
	drop_source(ja, s); /* freed once this callback returns: then ja too */
	return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct jvmattach *ja = userdata;

	(void)s;
	(void)usec;
	ja->timed_out = true;
	pidfd_send_signal(ja->child_fd, SIGKILL, NULL, 0);
	return 0;
}

/* Read what the child needs of the target: -ESRCH if pid is not the process of start_ticks. */
static int target_args(pid_t pid, uint64_t start_ticks, struct jvmhelper_args *a, pid_t *nspid,
		       char *why, size_t whylen)
{
	struct procinfo_status ps;
	struct procinfo_stat pst;

	a->target_fd = pidfd_open(pid, 0);
	if (a->target_fd < 0) {
		snprintf(why, whylen, "pidfd_open: %s", strerror(errno));
		return errno == ESRCH ? -ESRCH : -errno;
	}
	/* The pidfd names the process that has the PID now: the target if it started then. */
	if (procfs_stat(pid, &pst) < 0 || pst.start_ticks != start_ticks ||
	    procfs_status(pid, &ps) < 0) {
		snprintf(why, whylen, "the process is gone");
		return -ESRCH;
	}
	a->uid = ps.euid;
	a->gid = ps.egid;
	a->may_signal = ps.sigcgt & (1ULL << (SIGQUIT - 1));
	*nspid = ps.nstgid;
	snprintf(a->proc_cmdline, sizeof(a->proc_cmdline), "/proc/%d/cmdline", pid);
	snprintf(a->proc_environ, sizeof(a->proc_environ), "/proc/%d/environ", pid);
	snprintf(a->proc_root, sizeof(a->proc_root), "/proc/%d/root", pid);
	snprintf(a->proc_cwd, sizeof(a->proc_cwd), "/proc/%d/cwd", pid);
	snprintf(a->sock_rel, sizeof(a->sock_rel), "tmp/.java_pid%d", ps.nstgid);
	snprintf(a->trigger, sizeof(a->trigger), ".attach_pid%d", ps.nstgid);
	return 0;
}

/* Fork the child that runs the exchange a describes; its pidfd, or a negative errno. */
static int spawn(struct jvmhelper_args *a)
{
	pid_t child = fork();
	int fd;

	if (child < 0)
		return -errno;
	if (child == 0) {
		int err;

		/* Nothing of kprofd's but the target's pidfd and the cancel fd (and stdio), as 3
		 * and 4 (moved above every fd first, so that neither overwrites the other). */
		int t = fcntl(a->target_fd, F_DUPFD, 64), c = fcntl(a->cancel_fd, F_DUPFD, 64);

		if (t < 0 || c < 0 || dup2(t, 3) < 0 || dup2(c, 4) < 0)
			_exit(1);
		a->target_fd = 3;
		a->cancel_fd = 4;
		close_range(5, ~0U, 0);
		err = jvmhelper_run(a);
		a->sh->err = err;
		a->sh->done = 1;
		_exit(0);
	}
	fd = pidfd_open(child, 0);
	if (fd < 0) {
		int err = -errno;

		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return err;
	}
	return fd;
}

/* A new exchange of rq, counted as running, with its shared mapping; NULL if out of memory. */
static struct jvmattach *ja_new(struct jvmattach_ctx *ctx, const struct jvmattach_req *rq,
				uid_t uid, jvmattach_done_fn done, void *userdata)
{
	struct jvmattach *ja = calloc(1, sizeof(*ja));

	if (!ja)
		return NULL;
	ja->sh =
	    mmap(NULL, sizeof(*ja->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ja->sh == MAP_FAILED) {
		free(ja);
		return NULL;
	}
	ja->ctx = ctx;
	ja->child_fd = -1;
	ja->cancel_fd = -1;
	ja->ncmds = rq->ncmds;
	ja->timeout_ms = rq->timeout_ms;
	ja->done = done;
	ja->userdata = userdata;
	for (size_t i = 0; i < rq->ncmds; i++)
		snprintf(ja->cmd[i], sizeof(ja->cmd[i]), "%s", rq->cmds[i]);
	ja->started_ns = now_ns(CLOCK_MONOTONIC);
	ja->uid = uid;
	ctx->running++;
	share_add(ctx, uid, 1);
	return ja;
}

/* Start the helper and watch it: its pidfd for its end, a timer for its deadline. */
static int ja_run(struct jvmattach *ja, struct jvmhelper_args *a)
{
	sd_event *e = ja->ctx->event;
	int cancel[2], err;

	if (pipe2(cancel, O_CLOEXEC) < 0)
		return -errno;
	a->cancel_fd = cancel[0];
	ja->cancel_fd = cancel[1];
	ja->child_fd = spawn(a);
	err = ja->child_fd < 0 ? ja->child_fd : 0;
	if (err == 0)
		err =
		    sd_event_add_io(e, &ja->exit_source, ja->child_fd, EPOLLIN, on_child_exit, ja);
	if (err < 0) {
		if (ja->child_fd >= 0) {
			pidfd_send_signal(ja->child_fd, SIGKILL, NULL, 0);
			waitid(P_PIDFD, ja->child_fd, &(siginfo_t){0}, WEXITED);
		}
		return err;
	}
	ja->refs++;
	sd_event_source_set_destroy_callback(ja->exit_source, exit_gone);
	/* Without a deadline timer (out of memory) the helper's own deadline must do. */
	if (sd_event_add_time(e, &ja->timer, CLOCK_MONOTONIC,
			      (a->deadline_ns + KILL_GRACE_MS * 1000000ULL) / 1000, 0, on_deadline,
			      ja) >= 0) {
		ja->refs++;
		sd_event_source_set_destroy_callback(ja->timer, timer_gone);
	}
	return 0;
}

int jvmattach_start(struct jvmattach_ctx *ctx, const struct jvmattach_req *rq,
		    jvmattach_done_fn done, void *userdata, struct jvmattach **ret, char *why,
		    size_t whylen)
{
	char req[JVMATTACH_MAX_CMDS][HSATTACH_REQUEST_MAX];
	struct jvmhelper_args a = {.parent = getpid(),
				   .target_fd = -1,
				   .cancel_fd = -1,
				   .ncmds = rq->ncmds,
				   .args = rq->args};
	struct jvmattach *ja = NULL;
	pid_t nspid = 0;
	int err = 0;

	if ((rq->ncmds == 0 && !rq->args) || rq->ncmds > JVMATTACH_MAX_CMDS)
		return -EINVAL;
	for (size_t i = 0; i < rq->ncmds; i++) {
		ssize_t len =
		    hsattach_request(req[i], sizeof(req[i]), "jcmd", rq->cmds[i], NULL, NULL);

		if (len < 0) {
			snprintf(why, whylen, "jcmd %s: %s", rq->cmds[i], strerror((int)-len));
			return (int)len;
		}
		a.req[i] = req[i];
		a.reqlen[i] = len;
	}
	err = target_args(rq->pid, rq->start_ticks, &a, &nspid, why, whylen);
	if (err == 0)
		err = share_admit(ctx, a.uid, why, whylen);
	if (err == 0 && !(ja = ja_new(ctx, rq, a.uid, done, userdata))) {
		snprintf(why, whylen, "out of memory");
		err = -ENOMEM;
	}
	if (err == 0) {
		ja->nspid = nspid;
		a.deadline_ns = ja->started_ns + rq->timeout_ms * 1000000ULL;
		a.sh = ja->sh;
		err = ja_run(ja, &a);
		if (err < 0) {
			snprintf(why, whylen, "cannot start the helper: %s", strerror(-err));
			ja_free(ja); /* no source yet */
		} else {
			*ret = ja;
		}
	}
	if (a.target_fd >= 0)
		close(a.target_fd);
	if (a.cancel_fd >= 0)
		close(a.cancel_fd);
	return err;
}

void jvmattach_cancel(struct jvmattach *ja)
{
	sd_event_source *s[2];

	if (!ja)
		return;
	ja->cancelled = true;
	ja->done = NULL;
	/* The child sees the hangup in its next wait, removes its attach file and exits; one
	 * stuck in a system call is killed at the deadline. The loop owns the sources from here:
	 * it reaps the child, and ja goes with the last of them. */
	close(ja->cancel_fd);
	ja->cancel_fd = -1;
	s[0] = ja->exit_source;
	s[1] = ja->timer;
	for (int i = 0; i < 2; i++) {
		if (!s[i])
			continue;
		sd_event_source_set_floating(s[i], true);
		sd_event_source_unref(s[i]);
	}
}
