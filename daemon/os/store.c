// SPDX-License-Identifier: GPL-2.0-only
/* store.c: named blobs in a directory, so kept profiles outlive kprofd itself.
 *
 * The store knows files, not profiles: the manager names each blob (PID-ATTACHTIME.kprof) and
 * hands over its bytes (a kprof.SavedProfile, packed by target_pb.c). Writes are atomic (a
 * temporary file in the same directory, fsync, rename), so a crash leaves the old file or the new
 * one, never half of one. At start every blob with the suffix asked for is read back (at most
 * STORE_MAX_FILE bytes, never through a symlink) and handed to a callback; one the callback
 * refuses is renamed NAME.bad and reported, so it is neither lost nor read again. A blob is
 * opened O_NONBLOCK and read only if it is a regular file: a FIFO, socket or device put in the
 * directory never blocks a start (an open of a FIFO would wait for a writer for ever); such an
 * entry is skipped, left where it is, and logged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "kprof/io.h"
#include "os/store.h"
#include "os/log.h"

#define STORE_MAX_FILE (512u << 20)

struct store {
	int dirfd;
	char *path;
};

static int mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int store_open(const char *dir, struct store **ret)
{
	_cleanup_free_ char *path = NULL;
	struct store *st;
	int err;

	if (asprintf(&path, "%s/profiles", dir) < 0)
		return -ENOMEM;
	err = mkdir_p(path, 0700);
	if (err < 0)
		return err;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->dirfd < 0) {
		err = -errno;
		free(st);
		return err;
	}
	st->path = TAKE_PTR(path);
	*ret = st;
	return 0;
}

void store_free(struct store *st)
{
	if (!st)
		return;
	close(st->dirfd);
	free(st->path);
	free(st);
}

/* Names are plain file names made by kprofd: no path, no hidden or temporary files. */
static bool name_ok(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) < 256;
}

int store_write(struct store *st, const char *name, const void *buf, size_t len)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int err;

	if (!name_ok(name))
		return -EINVAL;
	if (asprintf(&tmp, ".%s.tmp", name) < 0)
		return -ENOMEM;
	fd = openat(st->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, buf, len, false);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (!err && renameat(st->dirfd, tmp, st->dirfd, name) < 0)
		err = -errno;
	if (err < 0)
		unlinkat(st->dirfd, tmp, 0);
	return err;
}

void store_remove(struct store *st, const char *name)
{
	if (name && name_ok(name) && unlinkat(st->dirfd, name, 0) < 0 && errno != ENOENT)
		log_warn("cannot remove %s/%s: %m", st->path, name);
}

const char *store_path(const struct store *st)
{
	return st->path;
}

/* -EFTYPE is BSD's: what is not a regular file. */
#define NOT_REGULAR (-ENODEV)

/* The blob name opened for reading (never through a symlink, never blocking): its fd, or
 * NOT_REGULAR, or -errno. */
static int open_regular(struct store *st, const char *name, struct stat *sb)
{
	int fd = openat(st->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	int err = 0;

	if (fd < 0)
		return errno == ENXIO ? NOT_REGULAR : -errno; /* ENXIO: a FIFO, or a socket */
	if (fstat(fd, sb) < 0)
		err = -errno;
	else if (!S_ISREG(sb->st_mode))
		err = NOT_REGULAR;
	if (err < 0) {
		close(fd);
		return err;
	}
	return fd;
}

static int read_one(struct store *st, const char *name, uint8_t **ret, size_t *retlen)
{
	struct stat sb = {0};
	_cleanup_close_ int fd = open_regular(st, name, &sb);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t off = 0;

	if (fd < 0)
		return fd;
	if (sb.st_size > STORE_MAX_FILE)
		return -EFBIG;
	buf = malloc(sb.st_size ? sb.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (off < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + off, sb.st_size - off);

		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += n;
	}
	*ret = TAKE_PTR(buf);
	*retlen = off;
	return 0;
}

int store_read(struct store *st, const char *name, uint8_t **ret, size_t *retlen)
{
	if (!name_ok(name))
		return -EINVAL;
	return read_one(st, name, ret, retlen);
}

int store_read_at(struct store *st, const char *name, uint64_t off, size_t len, uint8_t **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *buf = NULL;
	struct stat sb = {0};
	size_t got = 0;

	if (!name_ok(name))
		return -EINVAL;
	if (len > STORE_MAX_FILE || off > STORE_MAX_FILE)
		return -EFBIG;
	fd = open_regular(st, name, &sb);
	if (fd < 0)
		return fd;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, off + got);

		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		got += n;
	}
	*ret = TAKE_PTR(buf);
	return 0;
}

void store_quarantine(struct store *st, const char *name)
{
	char bad[300];

	if (!name_ok(name))
		return;
	snprintf(bad, sizeof(bad), "%s.bad", name);
	if (renameat(st->dirfd, name, st->dirfd, bad) < 0)
		log_warn("cannot rename %s/%s to %s: %m", st->path, name, bad);
}

int store_foreach(struct store *st, const char *suffix, store_blob_fn fn, void *ctx)
{
	DIR *d = fdopendir(dup(st->dirfd));
	size_t slen = strlen(suffix);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	rewinddir(d); /* the dup shares the offset an earlier walk left at the end */
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		_cleanup_free_ uint8_t *buf = NULL;
		size_t blen = 0;
		int err;

		if (de->d_name[0] == '.' || len <= slen || strcmp(de->d_name + len - slen, suffix))
			continue;
		err = read_one(st, de->d_name, &buf, &blen);
		if (err == NOT_REGULAR) {
			log_warn("%s/%s is not a regular file: skipped (kept profiles are files "
				 "kprofd writes)",
				 st->path, de->d_name);
			continue;
		}
		if (err >= 0)
			err = fn(ctx, de->d_name, buf, blen);
		if (err < 0) {
			char bad[300];

			snprintf(bad, sizeof(bad), "%s.bad", de->d_name);
			log_warn("kept profile %s/%s is unreadable (%s): renamed to %s", st->path,
				 de->d_name, strerror(-err), bad);
			renameat(st->dirfd, de->d_name, st->dirfd, bad);
			continue;
		}
		n++;
	}
	closedir(d);
	return n;
}
