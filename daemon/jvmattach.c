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
 * a short-lived child process forked from the loop, which
 *  - reads the JVM's command line and environment if asked (their pages are the target's: a
 *    read of them waits for ever if it mapped a FUSE file over them, so not in kprofd);
 *  - opens /proc/PID/root and /proc/PID/cwd while still root, then checks on the target's
 *    pidfd (taken in kprofd after the start time was checked) that the process has not exited,
 *    so the PID named that process;
 *  - takes the JVM's euid and egid and no supplementary groups, by raw system calls in a
 *    process of its own: kprofd's threads never change credentials (a thread with the target
 *    user's uid could be stopped or killed by that user with tgkill, and with it kprofd); the
 *    kernel makes the child non-dumpable, so that user cannot ptrace it or read its fds;
 *  - finds the socket with openat2(RESOLVE_IN_ROOT) inside the JVM's root, the last component
 *    never a symbolic link, and takes it only if it is a socket owned by the JVM's euid; it
 *    connects to that very inode through /proc/self/fd/N;
 *  - without a socket, creates the attach file by openat(O_CREAT | O_EXCL | O_NOFOLLOW) on a
 *    directory fd (the cwd, else tmp inside the root), checks it is owned by the JVM's euid,
 *    signals through the pidfd (only a process that catches SIGQUIT: its default action would
 *    kill it), polls for the socket for at most 3 s, and removes the file if it is still the
 *    one it created;
 *  - writes its progress and the replies (at most 64 KiB each) to a shared anonymous mapping,
 *    and exits.
 * The loop watches the child's pidfd and a deadline timer; at the deadline it kills the child
 * and reports the step it was at. A cancel (the target ended) closes a pipe the child polls in
 * every wait: it removes its attach file and exits, and the loop, which owns the exchange's
 * sources from then on, reaps it. kprofd's own end closes that pipe too. Nothing the target does
 * blocks the loop: a FUSE directory, a JVM that never answers or a stopped one only keep a child
 * waiting until it is killed. The replies are parsed in kprofd by the pure hsattach module. The
 * child calls nothing but system calls (kprofd has other threads: no malloc or stdio after the
 * fork).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/hsattach.h"
#include "kprof/procmaps.h"
#include "clock.h"
#include "jvmattach.h"
#include "procfs.h"

#define SOCKET_WAIT_MS 3000 /* for the listener after SIGQUIT */
#define POLL_FIRST_MS 10
#define POLL_MAX_MS 100
#define KILL_GRACE_MS 500 /* the child's own deadline comes first */

enum step {
	STEP_START,
	STEP_ARGS,
	STEP_PROC,
	STEP_CREDS,
	STEP_SOCKET,
	STEP_TRIGGER,
	STEP_SIGNAL,
	STEP_WAIT,
	STEP_CONNECT,
	STEP_SEND,
	STEP_REPLY,
	STEP_DONE,
};

static const char *const step_names[] = {
    [STEP_START] = "starting",
    [STEP_ARGS] = "reading its command line and environment",
    [STEP_PROC] = "opening its root and working directory",
    [STEP_CREDS] = "taking its uid and gid",
    [STEP_SOCKET] = "looking for its attach socket",
    [STEP_TRIGGER] = "creating its attach file",
    [STEP_SIGNAL] = "sending it SIGQUIT",
    [STEP_WAIT] = "waiting for its attach socket after SIGQUIT",
    [STEP_CONNECT] = "connecting to its attach socket",
    [STEP_SEND] = "sending",
    [STEP_REPLY] = "waiting for its reply to",
    [STEP_DONE] = "done",
};

/* Written by the child, read by kprofd once the child is gone (so never while it writes). */
struct shared {
	int step;  /* enum step reached */
	int cmd;   /* the command of STEP_CONNECT .. STEP_REPLY */
	int err;   /* negative errno of the step that failed, or 0 */
	int done;  /* the child got to its end (err says how) */
	int where; /* the attach file: 0 none, 1 in the cwd, 2 in tmp */
	int triggered;
	int args_read;
	uint32_t nreplies;
	uint32_t len[JVMATTACH_MAX_CMDS];
	uint32_t cmdline_len, environ_len;
	char reply[JVMATTACH_MAX_CMDS][JVMATTACH_REPLY_MAX];
	char cmdline[JVMATTACH_ARGS_MAX], environ[JVMATTACH_ARGS_MAX];
};

struct jvmattach_ctx {
	sd_event *event;
	unsigned running, max;
};

struct jvmattach {
	struct jvmattach_ctx *ctx;
	unsigned refs; /* one per source: the last one gone frees it */
	int child_fd;  /* pidfd of the child */
	int cancel_fd; /* closed: the child stops, cleaning up after itself */
	sd_event_source *exit_source, *timer;
	struct shared *sh;
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

/* What the child needs, all prepared before the fork. */
struct child_args {
	pid_t parent;
	uid_t uid;
	gid_t gid;
	int target_fd;	 /* pidfd of the target */
	int cancel_fd;	 /* readable (hung up) when kprofd wants the child to stop */
	bool may_signal; /* it catches SIGQUIT */
	bool args;	 /* read its command line and environment */
	char proc_cmdline[32], proc_environ[32];
	uint64_t deadline_ns;
	char proc_root[32], proc_cwd[32];
	char sock_rel[32]; /* tmp/.java_pidN */
	char trigger[32];  /* .attach_pidN */
	const char *req[JVMATTACH_MAX_CMDS];
	size_t reqlen[JVMATTACH_MAX_CMDS];
	size_t ncmds;
	struct shared *sh;
};

/* ---- the child: system calls only ---- */

static unsigned left_ms(const struct child_args *a)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	return now >= a->deadline_ns ? 0 : (a->deadline_ns - now + 999999) / 1000000;
}

/* Wait up to ms for fd (-1: none) to be ready for events: 1 ready, 0 not in time, -ECANCELED
 * if kprofd wants the child to stop. */
static int wait_fd(int fd, short events, unsigned ms, const struct child_args *a)
{
	struct pollfd p[2] = {{.fd = a->cancel_fd, .events = POLLIN}, {.fd = fd, .events = events}};
	uint64_t end = now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int n = poll(p, fd >= 0 ? 2 : 1, now >= end ? 0 : (int)((end - now) / 1000000));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (p[0].revents)
			return -ECANCELED;
		return n > 0;
	}
}

/* rel inside the root dirfd, never out of it, the last component not a symbolic link. */
static int in_root(int root, const char *rel, int flags)
{
	struct open_how how = {
	    .flags = flags | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* The JVM's attach socket: an O_PATH fd of a socket owned by the JVM's euid (and not the stale
 * inode *old, if given); -ENOENT if there is none, -EPERM if something else is there. */
static int find_socket(int root, const struct child_args *a, const struct stat *old)
{
	struct stat st;
	int fd = in_root(root, a->sock_rel, O_PATH);

	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != a->uid) {
		close(fd);
		return -EPERM;
	}
	if (old && st.st_dev == old->st_dev && st.st_ino == old->st_ino) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* "/proc/self/fd/N" without stdio. */
static void fd_path(char *buf, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[12];
	int n = 0;

	memcpy(buf, pre, sizeof(pre) - 1);
	do
		digits[n++] = '0' + fd % 10;
	while ((fd /= 10) > 0);
	for (int i = 0; i < n; i++)
		buf[sizeof(pre) - 1 + i] = digits[n - 1 - i];
	buf[sizeof(pre) - 1 + n] = '\0';
}

/* Send and receive time out when the exchange's time is up (0 would mean never). */
static int set_timeouts(int s, const struct child_args *a)
{
	unsigned ms = left_ms(a);
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (!ms)
		return -ETIMEDOUT;
	if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

/* Connect to the socket inode pathfd holds. */
static int connect_fd(int pathfd, const struct child_args *a)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (s < 0)
		return -errno;
	err = set_timeouts(s, a);
	fd_path(sa.sun_path, pathfd);
	if (err == 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err = errno == EAGAIN ? -ETIMEDOUT : -errno;
	if (err < 0) {
		close(s);
		return err;
	}
	return s;
}

/* Command i on its own connection: its reply, up to the JVM's close, into the shared page. */
static int exchange(int pathfd, const struct child_args *a, size_t i)
{
	struct shared *sh = a->sh;
	size_t off = 0, len = 0;
	int s, err = 0;

	sh->cmd = i;
	sh->step = STEP_CONNECT;
	s = connect_fd(pathfd, a);
	if (s < 0)
		return s;
	sh->step = STEP_SEND;
	while (off < a->reqlen[i] && !err) {
		ssize_t n = send(s, a->req[i] + off, a->reqlen[i] - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n == 0 ? -EIO : errno == EAGAIN ? -ETIMEDOUT : -errno;
		else
			off += n;
	}
	sh->step = STEP_REPLY;
	while (!err && len < JVMATTACH_REPLY_MAX) {
		ssize_t n;
		int ready = wait_fd(s, POLLIN, left_ms(a), a);

		if (ready <= 0) {
			err = ready < 0 ? ready : -ETIMEDOUT;
			break;
		}
		n = read(s, sh->reply[i] + len, JVMATTACH_REPLY_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n <= 0)
			break;
		len += n;
	}
	sh->len[i] = len;
	close(s);
	return err;
}

static bool is_kernel_fs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC ||
	       sf.f_type == CGROUP2_SUPER_MAGIC || sf.f_type == DEVPTS_SUPER_MAGIC;
}

/* Create the attach file in directory dir: 0 (its identity in *made), or a negative errno. */
static int make_trigger(int dir, const struct child_args *a, struct stat *made)
{
	struct stat st;
	int fd;

	if (dir < 0)
		return dir;
	if (fstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || is_kernel_fs(dir))
		return -ENOTDIR;
	fd = openat(dir, a->trigger,
		    O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, made) < 0 || made->st_uid != a->uid) {
		/* A filesystem that gives new files another owner: the JVM would not trust it. */
		close(fd);
		unlinkat(dir, a->trigger, 0);
		return -EPERM;
	}
	close(fd);
	return 0;
}

/* Remove the attach file if it is still the one made (the JVM leaves it; jcmd removes it). */
static void remove_trigger(int dir, const struct child_args *a, const struct stat *made)
{
	struct stat st;

	if (fstatat(dir, a->trigger, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == made->st_dev &&
	    st.st_ino == made->st_ino)
		unlinkat(dir, a->trigger, 0);
}

/* No socket (or a stale one, *stale): start the JVM's listener and wait for its socket. */
static int trigger(int root, int cwd, const struct child_args *a, const struct stat *stale)
{
	struct shared *sh = a->sh;
	_cleanup_close_ int tmp = -1;
	struct stat made;
	int dir = cwd, err, sock = -ENOENT;
	unsigned ms = POLL_FIRST_MS, waited = 0;

	sh->step = STEP_SIGNAL;
	if (!a->may_signal)
		return -EPERM;
	sh->step = STEP_TRIGGER;
	err = make_trigger(cwd, a, &made);
	if (err < 0) {
		/* The JVM looks in its cwd first, then in /tmp. */
		tmp = in_root(root, "tmp", O_PATH | O_DIRECTORY);
		dir = tmp;
		err = make_trigger(tmp, a, &made);
	}
	if (err < 0)
		return err;
	sh->where = dir == cwd ? 1 : 2;
	sh->step = STEP_SIGNAL;
	if (pidfd_send_signal(a->target_fd, SIGQUIT, NULL, 0) < 0) {
		err = -errno;
		remove_trigger(dir, a, &made);
		return err;
	}
	sh->triggered = 1;
	sh->step = STEP_WAIT;
	for (;;) {
		err = wait_fd(-1, 0, ms, a);
		if (err < 0) {
			remove_trigger(dir, a, &made);
			return err;
		}
		waited += ms;
		sock = find_socket(root, a, stale);
		if (sock != -ENOENT || waited >= SOCKET_WAIT_MS || !left_ms(a))
			break;
		ms = ms * 2 > POLL_MAX_MS ? POLL_MAX_MS : ms * 2;
	}
	remove_trigger(dir, a, &made);
	return sock == -ENOENT ? -ETIMEDOUT : sock;
}

/* At most cap bytes of a /proc file into buf: its length, or a negative errno. */
static int read_proc(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	return len;
}

static int child_run(const struct child_args *a)
{
	struct shared *sh = a->sh;
	_cleanup_close_ int root = -1, cwd = -1, sock = -1;
	struct stat stale;
	int err;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent)
		return -ECHILD; /* kprofd is gone */
	if (a->args) {
		/* Pages of the target: a read may wait for ever, here and not in kprofd. */
		sh->step = STEP_ARGS;
		err = read_proc(a->proc_cmdline, sh->cmdline, sizeof(sh->cmdline));
		sh->cmdline_len = err > 0 ? err : 0;
		err = read_proc(a->proc_environ, sh->environ, sizeof(sh->environ));
		sh->environ_len = err > 0 ? err : 0;
		if (poll(&(struct pollfd){.fd = a->target_fd, .events = POLLIN}, 1, 0) != 0)
			return -ESRCH;
		sh->args_read = 1;
	}
	if (!a->ncmds) {
		sh->step = STEP_DONE;
		return 0;
	}
	sh->step = STEP_PROC;
	root = open(a->proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	cwd = open(a->proc_cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* A pidfd is readable once its process has exited: then the PID may be another's. */
	if (poll(&(struct pollfd){.fd = a->target_fd, .events = POLLIN}, 1, 0) != 0)
		return -ESRCH;
	sh->step = STEP_CREDS;
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, a->gid, a->gid, a->gid) < 0 ||
	    syscall(SYS_setresuid, a->uid, a->uid, a->uid) < 0)
		return -errno;
	/* New credentials cleared the parent-death signal: from here on the child has files to
	 * clean up, and stops on the cancel fd, which kprofd's end closes too. */
	sh->step = STEP_SOCKET;
	sock = find_socket(root, a, NULL);
	if (sock == -ENOENT)
		sock = trigger(root, cwd, a, NULL);
	if (sock < 0)
		return sock;
	for (size_t i = 0; i < a->ncmds; i++) {
		err = exchange(sock, a, i);
		/* A socket left by an earlier JVM with the same PID: start this one's listener. */
		if (err == -ECONNREFUSED && i == 0 && !sh->triggered && fstat(sock, &stale) == 0) {
			close(sock);
			sock = trigger(root, cwd, a, &stale);
			if (sock < 0)
				return sock;
			err = exchange(sock, a, i);
		}
		if (err < 0)
			return err;
		sh->nreplies = i + 1;
	}
	sh->step = STEP_DONE;
	return 0;
}

/* ---- kprofd's side ---- */

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
static int args_flag(const struct shared *sh)
{
	size_t clen = sh->cmdline_len < JVMATTACH_ARGS_MAX ? sh->cmdline_len : JVMATTACH_ARGS_MAX;
	size_t elen = sh->environ_len < JVMATTACH_ARGS_MAX ? sh->environ_len : JVMATTACH_ARGS_MAX;
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

	if (step == STEP_SIGNAL && err == -EPERM)
		snprintf(why, len,
			 "its attach listener is not running and it does not catch SIGQUIT "
			 "(-Xrs, or still starting): not signalled");
	else if (step == STEP_WAIT && err == -ETIMEDOUT)
		snprintf(why, len,
			 "no attach socket /tmp/.java_pid%d within %u ms of SIGQUIT "
			 "(-XX:+DisableAttachMechanism, or not a HotSpot JVM that answers)",
			 ja->nspid, SOCKET_WAIT_MS);
	else if ((step == STEP_SOCKET || step == STEP_WAIT) && err == -EPERM)
		snprintf(why, len, "/tmp/.java_pid%d is not a socket owned by uid %u: not used",
			 ja->nspid, ja->uid);
	else if (step == STEP_TRIGGER)
		snprintf(
		    why, len,
		    "cannot create .attach_pid%d in its working directory or /tmp as uid %u: %s",
		    ja->nspid, ja->uid, strerror(-err));
	else if (step == STEP_CREDS)
		snprintf(why, len,
			 "cannot take its uid %u: %s (kprofd needs CAP_SETUID and CAP_SETGID)",
			 ja->uid, strerror(-err));
	else if (step >= STEP_CONNECT && step <= STEP_REPLY)
		snprintf(why, len, "%s %s: %s", step_names[step], cmd, strerror(-err));
	else
		snprintf(why, len, "%s: %s", step_names[step], strerror(-err));
}

/* The child is gone: tell the caller what came of it. */
static void report(struct jvmattach *ja, const siginfo_t *si)
{
	const struct shared *sh = ja->sh;
	struct jvmattach_result r = {0};
	int step = sh->step >= STEP_START && sh->step <= STEP_DONE ? sh->step : STEP_START;

	r.ms = (now_ns(CLOCK_MONOTONIC) - ja->started_ns) / 1000000;
	r.triggered = sh->triggered;
	r.args_read = sh->args_read;
	r.preserve_fp = sh->args_read ? args_flag(sh) : -ENOENT;
	if (!sh->done) {
		r.err = ja->timed_out ? -ETIMEDOUT : -ECHILD;
		if (ja->timed_out)
			snprintf(
			    r.why, sizeof(r.why), "no answer within %u ms (%s%s%s)", ja->timeout_ms,
			    step_names[step], step >= STEP_CONNECT && step <= STEP_REPLY ? " " : "",
			    step >= STEP_CONNECT && step <= STEP_REPLY
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
static int target_args(pid_t pid, uint64_t start_ticks, struct child_args *a, pid_t *nspid,
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
static int spawn(struct child_args *a)
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
		err = child_run(a);
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

int jvmattach_start(struct jvmattach_ctx *ctx, const struct jvmattach_req *rq,
		    jvmattach_done_fn done, void *userdata, struct jvmattach **ret, char *why,
		    size_t whylen)
{
	char req[JVMATTACH_MAX_CMDS][HSATTACH_REQUEST_MAX];
	const char *const *cmds = rq->cmds;
	size_t n = rq->ncmds;
	unsigned timeout_ms = rq->timeout_ms;
	struct child_args a = {
	    .parent = getpid(), .target_fd = -1, .cancel_fd = -1, .ncmds = n, .args = rq->args};
	struct jvmattach *ja;
	pid_t nspid = 0;
	int err, cancel[2];

	if ((n == 0 && !rq->args) || n > JVMATTACH_MAX_CMDS)
		return -EINVAL;
	if (ctx->running >= ctx->max) {
		snprintf(why, whylen, "%u exchanges with JVMs are running already", ctx->running);
		return -EBUSY;
	}
	for (size_t i = 0; i < n; i++) {
		ssize_t len = hsattach_request(req[i], sizeof(req[i]), "jcmd", cmds[i], NULL, NULL);

		if (len < 0) {
			snprintf(why, whylen, "jcmd %s: %s", cmds[i], strerror((int)-len));
			return (int)len;
		}
		a.req[i] = req[i];
		a.reqlen[i] = len;
	}
	err = target_args(rq->pid, rq->start_ticks, &a, &nspid, why, whylen);
	if (err < 0)
		goto out;
	ja = calloc(1, sizeof(*ja));
	if (!ja) {
		err = -ENOMEM;
		goto out;
	}
	ja->sh =
	    mmap(NULL, sizeof(*ja->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ja->sh == MAP_FAILED) {
		err = -errno;
		free(ja);
		snprintf(why, whylen, "mmap: %s", strerror(-err));
		goto out;
	}
	ja->ctx = ctx;
	ja->child_fd = -1;
	ja->cancel_fd = -1;
	ja->nspid = nspid;
	ja->uid = a.uid;
	ja->ncmds = n;
	ja->timeout_ms = timeout_ms;
	ja->done = done;
	ja->userdata = userdata;
	for (size_t i = 0; i < n; i++)
		snprintf(ja->cmd[i], sizeof(ja->cmd[i]), "%s", cmds[i]);
	ja->started_ns = now_ns(CLOCK_MONOTONIC);
	a.deadline_ns = ja->started_ns + timeout_ms * 1000000ULL;
	a.sh = ja->sh;
	ctx->running++;
	err = pipe2(cancel, O_CLOEXEC) < 0 ? -errno : 0;
	if (err == 0) {
		a.cancel_fd = cancel[0];
		ja->cancel_fd = cancel[1];
		ja->child_fd = spawn(&a);
		err = ja->child_fd < 0 ? ja->child_fd : 0;
	}
	if (err == 0)
		err = sd_event_add_io(ctx->event, &ja->exit_source, ja->child_fd, EPOLLIN,
				      on_child_exit, ja);
	if (err < 0) {
		/* No source yet: free by hand (a child, if any, is killed first). */
		if (ja->child_fd >= 0) {
			pidfd_send_signal(ja->child_fd, SIGKILL, NULL, 0);
			waitid(P_PIDFD, ja->child_fd, &(siginfo_t){0}, WEXITED);
		}
		snprintf(why, whylen, "cannot start the helper: %s", strerror(-err));
		ja_free(ja);
		goto out;
	}
	ja->refs++;
	sd_event_source_set_destroy_callback(ja->exit_source, exit_gone);
	/* Without a deadline timer (out of memory) the child's own deadline must do. */
	if (sd_event_add_time(ctx->event, &ja->timer, CLOCK_MONOTONIC,
			      (a.deadline_ns + KILL_GRACE_MS * 1000000ULL) / 1000, 0, on_deadline,
			      ja) >= 0) {
		ja->refs++;
		sd_event_source_set_destroy_callback(ja->timer, timer_gone);
	}
	*ret = ja;
	err = 0;
out:
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
