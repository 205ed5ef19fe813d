// SPDX-License-Identifier: GPL-2.0-only
/* cgroups.c: the cgroup2 side of attach --cgroup and --unit: a cgroup's directory and id, the
 * processes in it and its descendants, a systemd unit's cgroup.
 *
 * Paths are taken inside kprofd's cgroup2 mount (the first cgroup2 file system in its
 * /proc/self/mountinfo: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid v1 host; a path
 * given with that prefix is taken as it is), without "..", and must name a directory of the
 * cgroup2 file system. The id of a cgroup is its directory's inode number, the kernfs id the BPF
 * side sees (cgroup->kn->id). A unit NAME.service (or .scope, .slice) is the directory of that
 * name: first under system.slice, then found by a bounded breadth-first walk of the hierarchy (no
 * D-Bus: the same whether or not systemd runs, and inside a container it is the container's
 * own hierarchy). Every walk is bounded: depth, directories, pids.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/rule.h"
#include "os/cgroups.h"

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CG_ROOT "/sys/fs/cgroup"
#define CG_MOUNTINFO_MAX (1 << 20)
#define CG_WALK_DIRS 20000 /* directories looked at to find a unit */
#define CG_WALK_DEPTH 8

static int check_dir(const char *path, uint64_t *id)
{
	struct statfs fs;
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (statfs(path, &fs) < 0)
		return -errno;
	if ((unsigned long)fs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	*id = st.st_ino;
	return 0;
}

/* A relative or absolute path without "..": the hierarchy is not left. */
static bool path_ok(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '/' || !s[2]))
			return false;
	return true;
}

int cgroup_root(char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t read = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPEROPTS" */
	while (err == -ENOENT && read < CG_MOUNTINFO_MAX && fgets(line, sizeof(line), f)) {
		char mnt[4096], *dash = strstr(line, " - ");

		read += strlen(line);
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || strchr(mnt, '\\'))
			continue;
		err = snprintf(buf, len, "%s", mnt) < (int)len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return err;
}

int cgroup_resolve(const char *path, struct cgroup_ref *ref)
{
	char root[PATH_MAX];
	const char *rel = path;
	size_t rl;
	int n, err;

	if (!path[0] || !path_ok(path))
		return -EINVAL;
	err = cgroup_root(root, sizeof(root));
	if (err < 0)
		return err == -ENOENT ? -EMEDIUMTYPE : err;
	rl = strlen(root);
	if (!strncmp(rel, root, rl) && (rel[rl] == '/' || !rel[rl])) {
		rel += rl;
	} else if (path[0] == '/') {
		/* Elsewhere: a cgroup2 directory is taken as it is (another mount of it), anything
		 * else is refused (a v1 hierarchy's path: -EMEDIUMTYPE). */
		if (snprintf(ref->path, sizeof(ref->path), "%s", path) >= (int)sizeof(ref->path))
			return -ENAMETOOLONG;
		return check_dir(ref->path, &ref->id);
	}
	while (*rel == '/')
		rel++;
	n = snprintf(ref->path, sizeof(ref->path), "%s%s%s", root, *rel ? "/" : "", rel);
	if (n < 0 || (size_t)n >= sizeof(ref->path))
		return -ENAMETOOLONG;
	/* No trailing slash: the path is also the watch's name. */
	while (n > (int)rl && ref->path[n - 1] == '/')
		ref->path[--n] = '\0';
	return check_dir(ref->path, &ref->id);
}

static bool unit_name_ok(const char *u)
{
	return strlen(u) <= 255 && rule_unit_ok(u);
}

/* The breadth-first walk of cgroup_of_unit: directories still to read, and how many seen. */
struct cg_walk {
	char *queue; /* paths, NUL-separated, breadth first */
	size_t qlen, qcap;
	unsigned dirs;
};

static void walk_free(struct cg_walk *w)
{
	free(w->queue);
}

/* Appends p to the queue: false if it cannot grow. */
static bool walk_push(struct cg_walk *w, const char *p)
{
	size_t need = strlen(p) + 1;

	if (w->qlen + need > w->qcap) {
		size_t ncap = (w->qlen + need) * 2;
		char *nq = realloc(w->queue, ncap);

		if (!nq)
			return false;
		w->queue = nq;
		w->qcap = ncap;
	}
	memcpy(w->queue + w->qlen, p, need);
	w->qlen += need;
	return true;
}

/* Reads directory d (at dir): true with its path in found (PATH_MAX bytes) if it holds the
 * unit's directory, otherwise its subdirectories queued. */
static bool walk_scan(struct cg_walk *w, DIR *d, const char *dir, const char *unit, char *found)
{
	struct dirent *de;

	while ((de = readdir(d)) && w->dirs < CG_WALK_DIRS) {
		char p[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		w->dirs++;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
			continue;
		if (!strcmp(de->d_name, unit)) {
			memcpy(found, p, sizeof(p));
			return true;
		}
		if (!walk_push(w, p))
			break;
	}
	return false;
}

int cgroup_of_unit(const char *unit, struct cgroup_ref *ref)
{
	_cleanup_(walk_free) struct cg_walk w = {};
	size_t head = 0;
	char want[300];

	if (!unit_name_ok(unit))
		return -EINVAL;
	if (snprintf(want, sizeof(want), "system.slice/%s", unit) < (int)sizeof(want) &&
	    cgroup_resolve(want, ref) == 0)
		return 0;
	/* Breadth first from the root: units nest as slices do (user.slice/user-0.slice/...). */
	if (cgroup_root(want, sizeof(want)) < 0)
		return -ENOENT;
	w.qcap = 4096 + sizeof(want);
	w.queue = malloc(w.qcap);
	if (!w.queue)
		return -ENOMEM;
	w.qlen = strlen(want) + 1;
	memcpy(w.queue, want, w.qlen);
	while (head < w.qlen && w.dirs < CG_WALK_DIRS) {
		char dir[PATH_MAX], found[PATH_MAX];
		unsigned depth = 0;
		bool hit;
		DIR *d;

		/* A copy: the queue moves when it grows. */
		snprintf(dir, sizeof(dir), "%s", w.queue + head);
		head += strlen(w.queue + head) + 1;
		for (const char *s = dir + strlen(w.queue); *s; s++)
			depth += *s == '/';
		if (depth >= CG_WALK_DEPTH || !(d = opendir(dir)))
			continue;
		hit = walk_scan(&w, d, dir, unit, found);
		closedir(d);
		if (hit)
			return cgroup_resolve(found, ref);
	}
	return -ENOENT;
}

int unit_file_find(const char *unit, char *path, size_t len)
{
	static const char *const dirs[] = {"/etc/systemd/system", "/run/systemd/system",
					   "/usr/local/lib/systemd/system",
					   "/usr/lib/systemd/system", "/lib/systemd/system"};
	char tmpl[300];
	const char *at, *dot;

	if (!unit_name_ok(unit))
		return -EINVAL;
	/* NAME@INSTANCE.service comes from NAME@.service. */
	tmpl[0] = '\0';
	at = strchr(unit, '@');
	dot = strrchr(unit, '.');
	if (at && dot > at && (size_t)(at - unit) + 1 + strlen(dot) < sizeof(tmpl))
		snprintf(tmpl, sizeof(tmpl), "%.*s@%s", (int)(at - unit), unit, dot);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		for (int k = 0; k < 2; k++) {
			struct stat st;

			if (k && !tmpl[0])
				continue;
			if (snprintf(path, len, "%s/%s", dirs[i], k ? tmpl : unit) >= (int)len)
				continue;
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				return 0;
		}
	return -ENOENT;
}

bool cgroup_exists(const struct cgroup_ref *ref)
{
	uint64_t id;

	return check_dir(ref->path, &id) == 0 && id == ref->id;
}

/* The pids of dir's cgroup.procs, then of its descendants, depth first, into out. */
static int procs_walk(const char *dir, unsigned depth, pid_t *out, size_t max, size_t *n)
{
	char p[PATH_MAX], line[32];
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (snprintf(p, sizeof(p), "%s/cgroup.procs", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	f = fopen(p, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno; /* removed meanwhile */
	while (*n < max && fgets(line, sizeof(line), f)) {
		long v = strtol(line, NULL, 10);

		if (v > 0 && v <= INT_MAX)
			out[(*n)++] = (pid_t)v;
	}
	fclose(f);
	if (depth >= CG_WALK_DEPTH || *n >= max || !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) && *n < max) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
			continue;
		procs_walk(p, depth + 1, out, max, n);
	}
	closedir(d);
	return 0;
}

int cgroup_procs(const struct cgroup_ref *ref, pid_t *out, size_t max, size_t *n)
{
	*n = 0;
	return procs_walk(ref->path, 0, out, max, n);
}
