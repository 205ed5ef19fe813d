// SPDX-License-Identifier: GPL-2.0-only
/* jvmhelper.c: the helper process of jvmattach.c: the attach protocol's side that runs with the
 * JVM's credentials, in a child forked from kprofd's loop (jvmattach.c says why a process and
 * not a thread). In order:
 *  - it reads the JVM's command line and environment if asked (their pages are the target's: a
 *    read of them waits for ever if it mapped a FUSE file over them, so not in kprofd);
 *  - it opens /proc/PID/root and /proc/PID/cwd while still root, then checks on the target's
 *    pidfd (taken in kprofd after the start time was checked) that the process has not exited,
 *    so the PID named that process;
 *  - it takes the JVM's euid and egid and no supplementary groups, by raw system calls; the
 *    kernel makes it non-dumpable, so the JVM's user cannot ptrace it or read its fds;
 *  - it finds the socket with openat2(RESOLVE_IN_ROOT) inside the JVM's root, the last
 *    component never a symbolic link, and takes it only if it is a socket owned by the JVM's
 *    euid; it connects to that very inode through /proc/self/fd/N;
 *  - without a socket, it creates the attach file by openat(O_CREAT | O_EXCL | O_NOFOLLOW) on a
 *    directory fd (the cwd, else tmp inside the root), checks it is owned by the JVM's euid,
 *    signals through the pidfd (only a process that catches SIGQUIT: its default action would
 *    kill it), polls for the socket for at most 3 s, and removes the file if it is still the
 *    one it created;
 *  - it sends each request on its own connection and keeps each reply (at most 64 KiB) in the
 *    shared mapping, with its progress, for kprofd to read once it is gone.
 * Every wait also polls the cancel fd: kprofd hangs it up to stop the helper (or by exiting),
 * and the helper removes its attach file and exits. Every step is bounded by the exchange's
 * deadline; one stuck in a system call (a FUSE directory) is killed by kprofd.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "os/clock.h"
#include "symbols/jvmhelper.h"

#define POLL_FIRST_MS 10
#define POLL_MAX_MS 100

static unsigned left_ms(const struct jvmhelper_args *a)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	return now >= a->deadline_ns ? 0 : (a->deadline_ns - now + 999999) / 1000000;
}

/* Wait up to ms for fd (-1: none) to be ready for events: 1 ready, 0 not in time, -ECANCELED
 * if kprofd wants the child to stop. */
static int wait_fd(int fd, short events, unsigned ms, const struct jvmhelper_args *a)
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
static int find_socket(int root, const struct jvmhelper_args *a, const struct stat *old)
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
static int set_timeouts(int s, const struct jvmhelper_args *a)
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
static int connect_fd(int pathfd, const struct jvmhelper_args *a)
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
static int exchange(int pathfd, const struct jvmhelper_args *a, size_t i)
{
	struct jvmhelper_shared *sh = a->sh;
	size_t off = 0, len = 0;
	int s, err = 0;

	sh->cmd = i;
	sh->step = JVMHELPER_STEP_CONNECT;
	s = connect_fd(pathfd, a);
	if (s < 0)
		return s;
	sh->step = JVMHELPER_STEP_SEND;
	while (off < a->reqlen[i] && !err) {
		ssize_t n = send(s, a->req[i] + off, a->reqlen[i] - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n == 0 ? -EIO : errno == EAGAIN ? -ETIMEDOUT : -errno;
		else
			off += n;
	}
	sh->step = JVMHELPER_STEP_REPLY;
	while (!err && len < JVMHELPER_REPLY_MAX) {
		ssize_t n;
		int ready = wait_fd(s, POLLIN, left_ms(a), a);

		if (ready <= 0) {
			err = ready < 0 ? ready : -ETIMEDOUT;
			break;
		}
		n = read(s, sh->reply[i] + len, JVMHELPER_REPLY_MAX - len);
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
static int make_trigger(int dir, const struct jvmhelper_args *a, struct stat *made)
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
static void remove_trigger(int dir, const struct jvmhelper_args *a, const struct stat *made)
{
	struct stat st;

	if (fstatat(dir, a->trigger, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == made->st_dev &&
	    st.st_ino == made->st_ino)
		unlinkat(dir, a->trigger, 0);
}

/* No socket (or a stale one, *stale): start the JVM's listener and wait for its socket. */
static int trigger(int root, int cwd, const struct jvmhelper_args *a, const struct stat *stale)
{
	struct jvmhelper_shared *sh = a->sh;
	_cleanup_close_ int tmp = -1;
	struct stat made;
	int dir = cwd, err, sock = -ENOENT;
	unsigned ms = POLL_FIRST_MS, waited = 0;

	sh->step = JVMHELPER_STEP_SIGNAL;
	if (!a->may_signal)
		return -EPERM;
	sh->step = JVMHELPER_STEP_TRIGGER;
	err = make_trigger(cwd, a, &made);
	if (err < 0) {
		/* The JVM looks in its cwd first, then in /tmp. */
		tmp = in_root(root, "tmp", O_PATH | O_DIRECTORY);
		dir = tmp;
		err = make_trigger(tmp, a, &made);
	}
	if (err < 0)
		return err;
	sh->step = JVMHELPER_STEP_SIGNAL;
	if (pidfd_send_signal(a->target_fd, SIGQUIT, NULL, 0) < 0) {
		err = -errno;
		remove_trigger(dir, a, &made);
		return err;
	}
	sh->triggered = 1;
	sh->step = JVMHELPER_STEP_WAIT;
	for (;;) {
		err = wait_fd(-1, 0, ms, a);
		if (err < 0) {
			remove_trigger(dir, a, &made);
			return err;
		}
		waited += ms;
		sock = find_socket(root, a, stale);
		if (sock != -ENOENT || waited >= JVMHELPER_SOCKET_WAIT_MS || !left_ms(a))
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

/* The target's command line and environment into the shared page: -ESRCH if it exited
 * meanwhile (its PID may be another's then). */
static int read_args(const struct jvmhelper_args *a)
{
	struct jvmhelper_shared *sh = a->sh;
	int err;

	/* Pages of the target: a read may wait for ever, here and not in kprofd. */
	sh->step = JVMHELPER_STEP_ARGS;
	err = read_proc(a->proc_cmdline, sh->cmdline, sizeof(sh->cmdline));
	sh->cmdline_len = err > 0 ? err : 0;
	err = read_proc(a->proc_environ, sh->environ, sizeof(sh->environ));
	sh->environ_len = err > 0 ? err : 0;
	if (poll(&(struct pollfd){.fd = a->target_fd, .events = POLLIN}, 1, 0) != 0)
		return -ESRCH;
	sh->args_read = 1;
	return 0;
}

/* The target's user and group, no supplementary groups. */
static int take_creds(const struct jvmhelper_args *a)
{
	a->sh->step = JVMHELPER_STEP_CREDS;
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, a->gid, a->gid, a->gid) < 0 ||
	    syscall(SYS_setresuid, a->uid, a->uid, a->uid) < 0)
		return -errno;
	return 0;
}

int jvmhelper_run(const struct jvmhelper_args *a)
{
	struct jvmhelper_shared *sh = a->sh;
	_cleanup_close_ int root = -1, cwd = -1, sock = -1;
	struct stat stale;
	int err;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent)
		return -ECHILD; /* kprofd is gone */
	if (a->args && (err = read_args(a)) < 0)
		return err;
	if (!a->ncmds) {
		sh->step = JVMHELPER_STEP_DONE;
		return 0;
	}
	sh->step = JVMHELPER_STEP_PROC;
	root = open(a->proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	cwd = open(a->proc_cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* A pidfd is readable once its process has exited: then the PID may be another's. */
	if (poll(&(struct pollfd){.fd = a->target_fd, .events = POLLIN}, 1, 0) != 0)
		return -ESRCH;
	err = take_creds(a);
	if (err < 0)
		return err;
	/* New credentials cleared the parent-death signal: from here on the child has files to
	 * clean up, and stops on the cancel fd, which kprofd's end closes too. */
	sh->step = JVMHELPER_STEP_SOCKET;
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
	sh->step = JVMHELPER_STEP_DONE;
	return 0;
}
