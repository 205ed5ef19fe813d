// SPDX-License-Identifier: GPL-2.0-only
/* pidns.c: a client's PIDs, given in its own PID namespace, as kprofd's (issue 25, item 10).
 *
 * SO_PEERCRED gives the client's pid in kprofd's namespace. When /proc/PEER/ns/pid is not
 * kprofd's namespace, the client's PIDs are another namespace's: its NStgid line says how deep
 * that namespace lies below kprofd's (its number of values - 1). A PID P of the client is the
 * process whose NStgid has P at that level and whose namespace at that level is the client's:
 * its own (/proc/N/ns/pid) when it lies at that level, else the ancestor NS_GET_PARENT reaches.
 * A client kprofd cannot see into (pid 0: an ancestor's namespace) has no PID translated: its
 * requests by PID are refused. Cost: a scan of /proc (one status read per process, at most
 * SCAN_MAX) per PID of a request, for clients in another namespace only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "kprof/cleanup.h"
#include "os/pidns.h"
#include "os/procfs.h"

#define SCAN_MAX 1000000 /* /proc entries looked at per PID */

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)

static int ns_of(const char *path, struct stat *st)
{
	return stat(path, st) < 0 ? -errno : 0;
}

void pidns_client_init(pid_t peer, struct pidns_client *c)
{
	struct procinfo_status ps;
	struct stat self, their;
	char path[64];

	memset(c, 0, sizeof(*c));
	if (ns_of("/proc/self/ns/pid", &self) < 0)
		return; /* no namespaces to tell apart */
	if (peer <= 0 || procfs_status(peer, &ps) < 0) {
		c->foreign = c->unknown = true;
		return;
	}
	/* One NStgid value: the client is in the namespace of kprofd's /proc, kprofd's own (this
	 * needs no ptrace right over the client, which a kprofd without CAP_SYS_PTRACE lacks). */
	if (ps.ns_levels <= 1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", peer);
	if (ns_of(path, &their) < 0) {
		c->foreign = c->unknown = true;
		return;
	}
	if (their.st_dev == self.st_dev && their.st_ino == self.st_ino)
		return;
	c->foreign = true;
	c->level = ps.ns_levels - 1;
	c->dev = their.st_dev;
	c->ino = their.st_ino;
	if (c->level <= 0)
		c->unknown = true;
}

/* Whether process n (levels deep) is in the client's namespace or one below it. */
static bool under(const struct pidns_client *c, pid_t n, int levels)
{
	_cleanup_close_ int fd = -1;
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", n);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (int l = levels - 1; fd >= 0 && l > c->level; l--) {
		int parent = ioctl(fd, NS_GET_PARENT);

		close(fd);
		fd = parent;
	}
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino;
}

int pidns_translate(const struct pidns_client *c, pid_t pid, pid_t *ret)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *e;
	long seen = 0;

	if (!c->foreign) {
		*ret = pid;
		return 0;
	}
	if (c->unknown)
		return -EXDEV;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d)) && seen++ < SCAN_MAX) {
		struct procinfo_status ps;
		char *end;
		long n = strtol(e->d_name, &end, 10);

		if (*end || n <= 0 || procfs_status(n, &ps) < 0 || ps.tgid != n)
			continue;
		if (ps.ns_levels > c->level && ps.ns_tgid[c->level] == pid &&
		    under(c, n, ps.ns_levels)) {
			*ret = n;
			return 0;
		}
	}
	return -ESRCH;
}
