// SPDX-License-Identifier: GPL-2.0-only
/* requests_access.c: what every request handler of requests.c's parts asks first: replying
 * (a reply, an error), the kernel view a client gets, whether a client may attach to or read a
 * target, and which target or session of a pid a request names (the error replied when there
 * is none, or it is not the client's). Apart from the handlers because every part uses it and
 * it calls none of them; the rules themselves are summed up at the top of requests.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "service/requests_internal.h"
#include "service/requests_access.h"
#include "symbols/srclines.h"
#include "manager/manager.h"
#include "wire/target_pb.h"
#include "os/transport.h"

void requests_queue(struct client *cl, Kprof__Reply *rep)
{
	transport_reply(cl->tc, &rep->base);
}

void requests_error(struct client *cl, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	transport_reply_error(cl->tc, err, msg);
}

/* The kernel view (PROFILE_VIEW_*) a client gets: what the kernel would show it. Kernel
 * addresses only if kallsyms_show_value would (kptr_restrict 0 and perf_event_paranoid <= 1;
 * a non-root client is taken to lack CAP_SYSLOG), kernel frames only if the kernel would let it
 * profile the kernel (perf_event_paranoid <= 1). Read at each request: the sysctls can change. */
static int read_sysctl(const char *path, int fallback)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return fallback;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return atoi(buf);
}

unsigned requests_view(const struct client *cl)
{
	int kptr, paranoid;

	if (cl->uid == 0)
		return 0;
	kptr = read_sysctl("/proc/sys/kernel/kptr_restrict", 2);
	paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2);
	if (paranoid >= 2)
		return PROFILE_VIEW_NO_KERNEL | PROFILE_VIEW_NO_KADDR;
	return kptr == 0 && paranoid <= 1 ? 0 : PROFILE_VIEW_NO_KADDR;
}

/* May cl attach to or detach a process of uid owner? */
bool requests_allowed(const struct client *cl, uid_t owner)
{
	return cl->uid == 0 || cl->uid == owner;
}

/* May cl read the profile of a process of uid owner? */
bool requests_may_read(const struct client *cl, uid_t owner)
{
	return requests_allowed(cl, owner) || cl->reader;
}

bool requests_visible_to(const struct target *t, void *arg)
{
	return requests_may_read(arg, t->uid);
}

/* The target of a read (write = false) or detach request, or NULL after queueing the error
 * reply: the attached one or the newest kept one that cl may read (a PID reused by another
 * user's process keeps each user's sessions apart), else any, for the error. */
/* The sessions of a pid (one per attach; a PID reused by another process is another session)
 * are numbered from 1, oldest first, among those cl may read. The place of t among them, and
 * (ret) how many there are. */
uint32_t requests_session_of(const struct client *cl, const struct target *t, uint32_t *n)
{
	uint32_t rank = 1, count = 0;

	for (const struct target *o = manager_targets_first(cl->rq->m); o;
	     o = manager_targets_next(o)) {
		if (o->pid != t->pid || !requests_may_read(cl, o->uid))
			continue;
		count++;
		if (o != t && (o->attached_ns < t->attached_ns ||
			       (o->attached_ns == t->attached_ns && o < t)))
			rank++;
	}
	*n = count;
	return rank;
}

/* Session number session of pid (requests_session_of), or NULL; *n: how many there are. */
static struct target *nth_session(const struct client *cl, uint32_t pid, uint32_t session,
				  uint32_t *n)
{
	struct target *found = NULL;

	*n = 0;
	for (struct target *o = manager_targets_first(cl->rq->m); o; o = manager_targets_next(o)) {
		uint32_t count;

		if ((uint32_t)o->pid == pid && requests_may_read(cl, o->uid)) {
			if (requests_session_of(cl, o, &count) == session)
				found = o;
			*n = count;
		}
	}
	return found;
}

/* A target's facts as cl sees them: with its session number among those cl may read. */
void requests_fill_target(const struct client *cl, const struct target *t, Kprof__Target *pb)
{
	target_fill_pb(t, pb);
	pb->session = requests_session_of(cl, t, &pb->sessions);
}

/* As requests_target, for a read of one session (0: the attached or newest one). */
struct target *requests_session(struct client *cl, uint32_t pid, uint32_t session)
{
	struct target *t;
	uint32_t n;

	if (!session)
		return requests_target(cl, pid, false);
	t = nth_session(cl, pid, session, &n);
	if (!t && n)
		requests_error(cl, -ENOENT,
			       "pid %u has %u session%s (kprofctl list --all): no session %u", pid,
			       n, n == 1 ? "" : "s", session);
	else if (!t)
		requests_error(cl, -ENOENT, "pid %u is not attached and no profile of it is kept",
			       pid);
	return t;
}

struct target *requests_target(struct client *cl, uint32_t pid, bool write)
{
	struct target *t = manager_find_for(cl->rq->m, pid, requests_visible_to, cl);

	/* Credentials may have changed since the last check (a setuid exec). */
	if (t && t->state == TARGET_ATTACHED && manager_recheck(cl->rq->m, t))
		t = manager_find_for(cl->rq->m, pid, requests_visible_to, cl);
	if (!t)
		t = manager_find(cl->rq->m, pid);
	if (!t) {
		requests_error(cl, -ENOENT, "pid %u is not attached and no profile of it is kept",
			       pid);
		return NULL;
	}
	if (write ? !requests_allowed(cl, t->uid) : !requests_may_read(cl, t->uid)) {
		requests_error(cl, -EPERM,
			       "permission denied: pid %u belongs to uid %u; uid %u may only "
			       "profile its own processes",
			       pid, t->uid, cl->uid);
		return NULL;
	}
	return t;
}

/* The process pid may be attached by cl: 0, or an error reply queued. */
int requests_check_attachable(struct client *cl, uint32_t pid)
{
	uid_t owner;
	int err;

	if (pid == 0 || pid > INT32_MAX) {
		requests_error(cl, -EINVAL, "invalid pid %u", pid);
		return -EINVAL;
	}
	err = target_proc_uid(pid, &owner);
	if (err < 0) {
		if (err == -ESRCH && kill(pid, 0) == 0)
			requests_error(
			    cl, err, "pid %u has exited (a zombie its parent has not reaped)", pid);
		else if (err == -ESRCH)
			requests_error(cl, err, "no such process: %u", pid);
		else if (err == -EINVAL)
			requests_error(cl, err, "%u is a thread id, not a process id", pid);
		else
			requests_error(cl, err, "cannot read process %u: %s", pid, strerror(-err));
		return err;
	}
	if (!requests_allowed(cl, owner)) {
		if (owner == 0)
			requests_error(
			    cl, -EPERM,
			    "permission denied: pid %u runs with root's or mixed "
			    "credentials (setuid, or not dumpable); only root may profile it",
			    pid);
		else
			requests_error(
			    cl, -EPERM,
			    "permission denied: pid %u belongs to uid %u; uid %u may only "
			    "profile its own processes",
			    pid, owner, cl->uid);
		return -EPERM;
	}
	return 0;
}

uint64_t requests_lines_since(struct client *cl)
{
	if (!cl->lines_ready)
		cl->lines_since = srclines_seq(cl->rq->m->lines);
	return cl->lines_since;
}

bool requests_want_lines(struct client *cl, int pending)
{
	if (pending <= 0 || cl->lines_ready || !cl->req)
		return false;
	cl->want_lines = true;
	return true;
}
