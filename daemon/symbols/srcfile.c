// SPDX-License-Identifier: GPL-2.0-only
/* srcfile.c: which file holds the source lines of a target's code (issue 32; see srcfile.h).
 *
 * The mapping's ELF file is the symbolizer's (tsym_elf_at: its build id, .gnu_debuglink and
 * whether it has DWARF, read when it was first sampled). A candidate debug file is opened the
 * way every file a target controls is (tfile_open), then only its identity is read
 * (elfsym_ident_fd: notes and section headers, no symbols): it must be ELF, carry DWARF and be
 * of the mapping's build (the same GNU build id, or for a file without one the CRC32 its
 * debuglink records), else it is refused and the refusal noted for the profile: a debug file of
 * another build would name wrong lines without any sign of it. A .gnu_debuglink is only ever a
 * file name (elfsym refuses one with a '/'), looked up inside the target's root, so it cannot
 * name a file out of the debug directories. The file found is handed to kprof-lines as an open
 * fd (srclines.c); kprofd itself reads no DWARF.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "symbols/srcfile.h"
#include "symbols/symbolize_internal.h"

struct search {
	uid_t uid;		/* the target's */
	const struct elfsym *es; /* the mapped file's build id, debuglink, has_dwarf */
	dev_t dev;		/* ... and identity (0 if unknown) */
	ino_t ino;
	int root; /* the target's root (O_PATH), or -1 */
	struct srcfile *out;
	bool stale; /* a debug file of another build was refused: its note stays */
};

static void note(struct search *s, bool stale, const char *fmt, ...)
{
	va_list ap;

	if (s->stale)
		return;
	s->stale = stale;
	va_start(ap, fmt);
	vsnprintf(s->out->note, sizeof(s->out->note), fmt, ap);
	va_end(ap);
}

/* Whether the debug file ds (open at fd, st) is of e's build: its build id, else the debuglink's
 * CRC32 when want_crc. */
static bool same_build(struct search *s, const struct elfsym *ds, int fd, const struct stat *st,
		       bool want_crc, const char *shown)
{
	const struct elfsym *es = s->es;
	char a[2 * ELFSYM_BUILD_ID_MAX + 1], b[2 * ELFSYM_BUILD_ID_MAX + 1];
	uint32_t crc = 0;

	if (es->build_id_len) {
		if (elfsym_same_build_id(es, ds))
			return true;
		elfsym_build_id_hex(ds, a, sizeof(a));
		elfsym_build_id_hex(es, b, sizeof(b));
		note(s, true, "debug file %s: build id %s, not the mapping's %s: not used", shown,
		     a[0] ? a : "(none)", b);
		return false;
	}
	if (!want_crc)
		return true;
	if (symbolize_file_crc32(fd, st->st_size, &crc) == 0 && crc == es->debuglink_crc)
		return true;
	note(s, true, "debug file %s: CRC32 %08x, not its .gnu_debuglink's %08x: not used", shown,
	     crc, es->debuglink_crc);
	return false;
}

/* rel under dirfd (inside it when in_root) as the debug file: 0 with s->out->fd set. */
static int try_debug(struct search *s, int dirfd, const char *rel, bool in_root, bool want_crc,
		     const char *shown)
{
	struct tfile_want want = {
	    .owners = {0, s->uid}, .nowners = in_root ? 2 : 0}; /* debug_dir: root's choice */
	_cleanup_close_ int fd = -1;
	struct elfsym ds;
	char why[128] = "";
	struct stat st;
	int err;

	if (dirfd < 0 && dirfd != AT_FDCWD)
		return -ENOENT; /* no root to look in */
	fd = tfile_open(dirfd, rel, in_root, &want, &st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT)
			note(s, false, "debug file %s not read: %s", shown, why);
		return fd;
	}
	if (st.st_dev == s->dev && st.st_ino == s->ino)
		return -ELOOP; /* the mapped file itself (a debuglink to itself) */
	err = elfsym_ident_fd(fd, &ds);
	if (err < 0) {
		note(s, false, "debug file %s: not an ELF file", shown);
		return -ENOEXEC;
	}
	if (!same_build(s, &ds, fd, &st, want_crc, shown))
		err = -ESTALE;
	else if (!ds.has_dwarf)
		err = -ENOENT;
	elfsym_release(&ds);
	if (err < 0)
		return err;
	snprintf(s->out->used, sizeof(s->out->used), "%s", shown);
	s->out->fd = TAKE_FD(fd);
	return 0;
}

static int by_build_id(struct search *s, const char *debug_dir)
{
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1], rel[PATH_MAX], shown[PATH_MAX] = "/";

	if (s->es->build_id_len < 2)
		return -ENOENT;
	elfsym_build_id_hex(s->es, hex, sizeof(hex));
	if (debug_dir[0] &&
	    (size_t)snprintf(rel, sizeof(rel), "%s/.build-id/%.2s/%s.debug", debug_dir, hex,
			     hex + 2) < sizeof(rel) &&
	    try_debug(s, AT_FDCWD, rel, false, false, rel) == 0)
		return 0;
	/* shown: the path in the target's root, rel inside it: the same without the '/'. */
	snprintf(shown + 1, sizeof(shown) - 1, DEBUG_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2);
	return try_debug(s, s->root, shown + 1, true, false, shown);
}

static int by_debuglink(struct search *s, const char *path, const char *debug_dir)
{
	const struct elfsym *es = s->es;
	const char *slash = strrchr(path, '/');
	char rel[PATH_MAX], shown[PATH_MAX] = "/";

	if (es->debuglink_bad)
		note(s, false, "%s: its .gnu_debuglink names a path, not a file name: ignored", path);
	if (!es->debuglink[0] || path[0] != '/' || !slash || strstr(path, " (deleted)"))
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(symbolize_debuglink_fmt); i++) {
		int n = snprintf(shown + 1, sizeof(shown) - 1, symbolize_debuglink_fmt[i],
				 (int)(slash - path), path + 1, es->debuglink);

		if (n > 0 && (size_t)n < sizeof(shown) - 1 &&
		    try_debug(s, s->root, shown + 1, true, true, shown) == 0)
			return 0;
	}
	if (!debug_dir[0] || (size_t)snprintf(rel, sizeof(rel), "%s%.*s%s", debug_dir,
					      (int)(slash - path + 1), path, es->debuglink) >= sizeof(rel))
		return -ENOENT;
	return try_debug(s, AT_FDCWD, rel, false, true, rel);
}

int srcfile_key(struct tsym *ts, uint64_t addr, const struct srcfile_map *m,
		char key[LCACHE_MAX_KEY + 1])
{
	const struct procmaps_entry *pm;
	const struct elf_entry *e;

	if (m->build_id[0] && strlen(m->build_id) <= LCACHE_MAX_KEY) {
		snprintf(key, LCACHE_MAX_KEY + 1, "%s", m->build_id);
		return 0;
	}
	e = ts ? tsym_elf_at(ts, addr, &pm) : NULL;
	if (!e)
		return -ENOENT;
	snprintf(key, LCACHE_MAX_KEY + 1, "ino:%llx:%llx:%lld.%ld", (unsigned long long)e->dev,
		 (unsigned long long)e->ino, (long long)e->mtime.tv_sec, e->mtime.tv_nsec);
	return 0;
}

/* The debug file, else the mapped file (self, open, or -1: not readable), else its debuglink. */
static int search(struct search *s, int self, const char *path, const char *debug_dir)
{
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	int err = by_build_id(s, debug_dir);

	if (err < 0 && s->es->has_dwarf && self >= 0) {
		s->out->fd = fcntl(self, F_DUPFD_CLOEXEC, 3);
		err = s->out->fd < 0 ? -errno : 0;
		if (err == 0)
			snprintf(s->out->used, sizeof(s->out->used), "%s", path);
	}
	if (err < 0)
		err = by_debuglink(s, path, debug_dir);
	if (err < 0 && !s->out->note[0]) {
		elfsym_build_id_hex(s->es, hex, sizeof(hex));
		note(s, false, "%s: no DWARF, and no debug file found (build id %s)", path,
		     hex[0] ? hex : "none");
	}
	return err < 0 ? -ENOENT : 0;
}

/* Without the symbolizer: the file mapped at m now (map_files, else its path inside the
 * process's root; the process gone, its path in kprofd's own root if anyone may read that
 * file, so that it tells the target's user nothing new), if it is m's build. Its fd, its
 * identity in *es and *st. */
static int open_by_id(const struct srcfile_map *m, int root, struct elfsym *es, struct stat *st)
{
	char path[96], why[128];
	_cleanup_close_ int fd = -1;
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1];

	procmaps_file_path(path, sizeof(path), m->pid, m->start, m->limit);
	fd = tfile_open(AT_FDCWD, path, false, NULL, st, why, sizeof(why));
	if (fd < 0 && root >= 0 && m->path[0] == '/')
		fd = tfile_open(root, m->path, true, NULL, st, why, sizeof(why));
	if (fd < 0 && root < 0 && m->path[0] == '/' && !strstr(m->path, " (deleted)")) {
		fd = tfile_open(AT_FDCWD, m->path, false, NULL, st, why, sizeof(why));
		if (fd >= 0 && !(st->st_mode & S_IROTH))
			close(TAKE_FD(fd));
	}
	if (fd < 0 || elfsym_ident_fd(fd, es) < 0)
		return -ESRCH;
	elfsym_build_id_hex(es, hex, sizeof(hex));
	if (strcmp(hex, m->build_id)) {
		elfsym_release(es);
		return -ESTALE;
	}
	return TAKE_FD(fd);
}

int srcfile_open(struct tsym *ts, uint64_t addr, const struct srcfile_map *m,
		 const char *debug_dir, struct srcfile *out)
{
	const struct procmaps_entry *pm;
	const struct elf_entry *e = ts ? tsym_elf_at(ts, addr, &pm) : NULL;
	struct search s = {.uid = ts ? ts->c.uid : 0, .root = -1, .out = out};
	_cleanup_close_ int self = -1;
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	struct elfsym id = {0};
	struct stat st;
	int err;

	out->fd = -1;
	out->used[0] = out->note[0] = 0;
	debug_dir = debug_dir ? debug_dir : "";
	/* Every file found is checked: a root of another process by the PID is harmless. */
	s.root = ts ? tsym_root_now(ts) : tfile_proc_root(m->pid);
	if (e) {
		s.es = &e->es;
		s.dev = e->dev;
		s.ino = e->ino;
		elfsym_build_id_hex(s.es, hex, sizeof(hex));
		if (m->build_id[0] && strcmp(m->build_id, hex)) {
			note(&s, true, "%s: build id %s now, the profile's %s: not read", m->path,
			     hex[0] ? hex : "(none)", m->build_id);
			err = -ESTALE;
			goto out;
		}
		if (s.es->has_dwarf)
			self = tsym_open_mapped(ts, pm, &st);
	} else if (m->build_id[0]) {
		self = open_by_id(m, s.root, &id, &st);
		if (self >= 0) {
			s.es = &id;
			s.dev = st.st_dev;
			s.ino = st.st_ino;
		} else {
			/* The file is gone or another: its debug file by build id still serves. */
			size_t n = strlen(m->build_id) / 2;

			id.build_id_len = n < ELFSYM_BUILD_ID_MAX ? n : ELFSYM_BUILD_ID_MAX;
			for (size_t i = 0; i < id.build_id_len; i++)
				sscanf(m->build_id + 2 * i, "%2hhx", &id.build_id[i]);
			s.es = &id;
		}
	} else {
		note(&s, false, "%s: the process's files are gone", m->path);
		err = -ESRCH;
		goto out;
	}
	err = search(&s, self, m->path, debug_dir);
out:
	if (s.root >= 0)
		close(s.root);
	elfsym_release(&id);
	return err;
}
