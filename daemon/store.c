// SPDX-License-Identifier: GPL-2.0-only
/* store.c: kept profiles on disk, so they outlive kprofd itself.
 *
 * When a target ends (exit, detach, duration, kprofd stopping) its profile is written to
 * STATE_DIR/profiles/PID-ATTACHTIME.kprof as one kprof.SavedProfile protobuf message: the target's
 * facts, the function table and the distinct stacks with counts. Writes are atomic (a temporary
 * file in the same directory, fsync, rename), so a crash leaves the old file or the new one,
 * never half of one. At start every file is read back, checked (ids in range, sizes capped) and
 * rebuilt into a kept target; a file that fails the checks is renamed *.bad and reported.
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
#include "manager.h"
#include "store.h"
#include "log.h"

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

static int pack_stack(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *userdata)
{
	struct saved_msg *m = userdata;
	Kprof__SavedStack *s = &m->sv[m->msg.n_stacks];

	kprof__saved_stack__init(s);
	s->ids = (uint32_t *)ids;
	s->n_ids = n;
	s->count = count;
	s->tid = tid;
	m->sp[m->msg.n_stacks++] = s;
	return 0;
}

int saved_msg_build(const struct target *t, struct saved_msg *m)
{
	struct profile_stats ps;
	size_t nf = profile_nfuncs(t->profile);

	memset(m, 0, sizeof(*m));
	kprof__saved_profile__init(&m->msg);
	kprof__target__init(&m->target);
	profile_get_stats(t->profile, &ps);
	m->fv = calloc(nf ? nf : 1, sizeof(*m->fv));
	m->fp = calloc(nf ? nf : 1, sizeof(*m->fp));
	m->sv = calloc(ps.stacks ? ps.stacks : 1, sizeof(*m->sv));
	m->sp = calloc(ps.stacks ? ps.stacks : 1, sizeof(*m->sp));
	if (!m->fv || !m->fp || !m->sv || !m->sp) {
		saved_msg_release(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct profile_func *f = profile_func_get(t->profile, i);

		kprof__saved_function__init(&m->fv[i]);
		m->fv[i].name = (char *)f->name;
		m->fv[i].module = (char *)f->module;
		m->fv[i].start = f->start;
		m->fv[i].kind = (Kprof__FrameKind)f->kind;
		m->fp[i] = &m->fv[i];
	}
	profile_foreach_stack(t->profile, pack_stack, m);
	if (t->hcct || t->saved_hcct) {
		struct hcct_tree *tree = NULL;
		size_t n = t->hcct ? 0 : t->n_saved_hcct;

		if (t->hcct && hcct_snapshot(t->hcct, &tree) == 0)
			n = tree->len;
		m->hv = calloc(n ? n : 1, sizeof(*m->hv));
		m->hp = calloc(n ? n : 1, sizeof(*m->hp));
		if (!m->hv || !m->hp) {
			hcct_tree_free(tree);
			saved_msg_release(m);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			kprof__saved_hcct_node__init(&m->hv[i]);
			if (tree) {
				const struct hcct_entry *e = &tree->entries[i];

				m->hv[i].func = e->id;
				m->hv[i].parent = e->parent == HCCT_NONE ? -1 : (int32_t)e->parent;
				m->hv[i].count = e->count;
				m->hv[i].err = e->err;
				m->hv[i].monitored = e->flags & HCCT_ENTRY_MONITORED;
			} else {
				m->hv[i] = t->saved_hcct[i];
			}
			m->hp[i] = &m->hv[i];
		}
		m->msg.hcct_n = tree ? tree->n : t->saved_hcct_n;
		m->msg.n_hcct = n;
		m->msg.hcct = m->hp;
		hcct_tree_free(tree);
	}
	target_fill_pb(t, &m->target);
	if (t->paths && paths_reply(t, 0, false, &m->pm) == 0) {
		m->pm.r.target = NULL; /* the profile's target says it */
		m->msg.paths = &m->pm.r;
	}
	m->msg.format = 1;
	m->msg.target = &m->target;
	m->msg.n_functions = nf;
	m->msg.functions = m->fp;
	m->msg.stacks = m->sp;
	return 0;
}

void saved_msg_release(struct saved_msg *m)
{
	free(m->fv);
	free(m->fp);
	free(m->sv);
	free(m->sp);
	free(m->hv);
	free(m->hp);
	paths_msg_release(&m->pm);
	memset(m, 0, sizeof(*m));
}

int store_save(struct store *st, struct target *t)
{
	struct saved_msg m;
	_cleanup_free_ uint8_t *buf = NULL;
	_cleanup_free_ char *name = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;
	int err;

	err = saved_msg_build(t, &m);
	if (err < 0)
		goto out;
	len = kprof__saved_profile__get_packed_size(&m.msg);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	kprof__saved_profile__pack(&m.msg, buf);
	if (asprintf(&name, "%d-%llu.kprof", t->pid, (unsigned long long)t->attached_ns) < 0 ||
	    asprintf(&tmp, ".%s.tmp", name) < 0) {
		err = -ENOMEM;
		goto out;
	}
	fd = openat(st->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, buf, len, false);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (!err && renameat(st->dirfd, tmp, st->dirfd, name) < 0)
		err = -errno;
	if (err < 0) {
		unlinkat(st->dirfd, tmp, 0);
		goto out;
	}
	free(t->saved_name);
	t->saved_name = TAKE_PTR(name);
	log_debug("pid %d: profile saved to %s/%s (%zu bytes)", t->pid, st->path, t->saved_name,
		  len);
out:
	saved_msg_release(&m);
	if (err < 0)
		log_err("pid %d: cannot save the profile in %s: %s", t->pid, st->path,
			strerror(-err));
	return err;
}

void store_remove(struct store *st, struct target *t)
{
	if (t->saved_name && unlinkat(st->dirfd, t->saved_name, 0) < 0 && errno != ENOENT)
		log_warn("cannot remove %s/%s: %m", st->path, t->saved_name);
}

static int load_one(struct store *st, struct manager *m, const char *name)
{
	_cleanup_close_ int fd = openat(st->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_free_ uint8_t *buf = NULL;
	Kprof__SavedProfile *sp;
	struct target *t = NULL;
	struct stat sb;
	size_t off = 0;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode) || sb.st_size > STORE_MAX_FILE)
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
	sp = kprof__saved_profile__unpack(NULL, off, buf);
	if (!sp)
		return -EBADMSG;
	err = target_restore(m, sp, &t);
	kprof__saved_profile__free_unpacked(sp, NULL);
	if (err < 0)
		return err;
	t->saved_name = strdup(name);
	manager_add_kept(m, t);
	return 0;
}

int store_load(struct store *st, struct manager *m)
{
	DIR *d = fdopendir(dup(st->dirfd));
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		int err;

		if (de->d_name[0] == '.' || len < 7 || strcmp(de->d_name + len - 6, ".kprof"))
			continue;
		err = load_one(st, m, de->d_name);
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
