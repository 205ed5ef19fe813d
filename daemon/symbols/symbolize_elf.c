// SPDX-License-Identifier: GPL-2.0-only
/* symbolize_elf.c: the symbol sources every target shares (struct symbolizer, symbolize_elf.h):
 * the cache of ELF symbol tables keyed by (device, inode, mtime, ctime) and charged to a
 * budget, the host-wide names of their symbols and the kernel's (strpool.h), their
 * separate debug files found inside a target's root, the kernel's symbols and kprofd's own
 * vdso, as the table's kernel, ELF and vdso sources (sources.h); and the target's root they
 * and the other sources open files through. Apart from symbolize.c because these are files
 * read once and kept for every target, where symbolize.c follows one target's maps and walks
 * its sources. The design is explained at the top of symbolize.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "kprof/budget.h"
#include "kprof/cleanup.h"
#include "kprof/ehframe.h"
#include "kprof/elfsym.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "kprof/symtab.h"
#include "os/clock.h"
#include "os/log.h"
#include "os/procfs.h"
#include "os/tfile.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"
#include "symbols/symbolize_elf.h"
#include "symbols/symbolize_internal.h"

/* The C++ ABI's demangler (libstdc++): C++ symbols (node, the JVM, ...) are shown readable. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct elf_entry symbolize_elf_none; /* marks "looked up, nothing usable" in map_elf */

static ssize_t read_file(const char *path, char **ret, size_t max)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return tfile_read(fd, 0, max, ret);
}

/* ---- kernel symbols ---- */

/* /proc/kallsyms as kprofd's standard input, opened for it by systemd (StandardInput=
 * file:/proc/kallsyms in kprofd.service): ProtectKernelTunables= hides the file from the service,
 * and the kernel decides whether it shows addresses by the credentials of whoever opened it,
 * here the service manager before the sandbox and the capability bounding set were applied.
 * Read once, then fd 0 is /dev/null again. -ENOENT if standard input is something else. */
static ssize_t kallsyms_stdin(char **buf, size_t max)
{
	static const char path[] = "/proc/kallsyms";
	char link[sizeof(path) + 1];
	struct statfs sfs;
	ssize_t n = readlink("/proc/self/fd/0", link, sizeof(link));
	int null;

	if (n != (ssize_t)strlen(path) || memcmp(link, path, n) || fstatfs(0, &sfs) < 0 ||
	    sfs.f_type != PROC_SUPER_MAGIC)
		return -ENOENT;
	n = tfile_read(0, 0, max, buf);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0); /* dup2 clears FD_CLOEXEC on 0 */
		close(null);
	}
	return n;
}

/* Once per kprofd, out of the lookup's way (not inlined into it: a sample's hot path). */
static __attribute__((noinline)) void kallsyms_load(struct symbolizer *sz)
{
	_cleanup_free_ char *buf = NULL;
	const char *from = "standard input (/proc/kallsyms opened by the service manager)";
	ssize_t n;
	char *p, *end;
	size_t added = 0;

	sz->kallsyms_tried = 1;
	n = kallsyms_stdin(&buf, 256u << 20);
	if (n == -ENOENT) {
		from = "/proc/kallsyms";
		n = read_file(from, &buf, 256u << 20);
	}
	if (n < 0 || symtab_new(1u << 22, &sz->kallsyms) < 0) {
		log_warn("kernel symbols: cannot read %s: %s", from, strerror(n < 0 ? -n : ENOMEM));
		return;
	}
	for (p = buf, end = buf + n; p < end;) {
		char *nl = memchr(p, '\n', end - p), *sp, *name;
		unsigned long long addr;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		addr = strtoull(p, &sp, 16);
		if (sp != p && sp[0] == ' ' && sp[1] && sp[2] == ' ') {
			type = sp[1];
			name = sp + 3;
			name[strcspn(name, "\t ")] = '\0';
			if (addr && (type == 't' || type == 'T' || type == 'w' || type == 'W') &&
			    symtab_add(sz->kallsyms, addr, 0, name, strlen(name)) == 0)
				added++;
		}
		p = nl + 1;
	}
	symtab_finish(sz->kallsyms, 1u << 20);
	sz->kallsyms_module = strpool_intern(sz->names, "[kernel.kallsyms]");
	if (!added)
		log_warn("kernel symbols: %s shows no addresses (kptr_restrict?)", from);
	else
		log_info("kernel symbols: %zu loaded from %s", added, from);
}

/* ---- host-wide names ---- */

/* The host-wide name of symbol s of table st (demangled if cxx and a C++ one), kept in sn from
 * its first lookup on; sn is made at the first one, charged to uid (and added to *bytes) if
 * bytes is set. NULL when there is no room (the pool's cap, the budget, memory): the caller
 * names s as before, with a copy in each profile. */
static const char *shared_name(struct symbolizer *sz, struct shared_names *sn,
			       const struct symtab *st, const struct symtab_sym *s, bool cxx,
			       uid_t uid, uint64_t *bytes)
{
	size_t i = symtab_index(st, s);
	char *d = NULL;
	int status = 0;

	if (!sn->v && !sn->refused) {
		size_t n = symtab_count(st), b = n * sizeof(*sn->v);

		if (bytes && budget_charge(sz->budget, uid, b) < 0) {
			sn->refused = true;
			return NULL;
		}
		sn->v = calloc(n, sizeof(*sn->v));
		sn->n = sn->v ? n : 0;
		sn->refused = !sn->v;
		if (bytes && sn->v)
			*bytes += b;
		else if (bytes)
			budget_release(sz->budget, uid, b);
	}
	if (i >= sn->n)
		return NULL;
	if (sn->v[i])
		return sn->v[i];
	if (cxx && s->name[0] == '_' && s->name[1] == 'Z')
		d = __cxa_demangle(s->name, NULL, NULL, &status);
	sn->v[i] = strpool_intern(sz->names, d && status == 0 ? d : s->name);
	free(d);
	if (!sn->v[i] && !sz->names_full_logged) {
		struct strpool_stats ps;

		strpool_get_stats(sz->names, &ps);
		log_warn(
		    "host-wide symbol names: %zu names in %.1f MiB, at the pool's cap: names are "
		    "copied into each profile from now on (slower, more memory; counted in "
		    "symbol memory)",
		    ps.strs, ps.bytes / 1048576.0);
		sz->names_full_logged = true;
	}
	return sn->v[i];
}

static void shared_names_release(struct shared_names *sn)
{
	free(sn->v);
	*sn = (struct shared_names){0};
}

/* Kernel addresses, from /proc/kallsyms (read at the first one). */
static enum sym_hit kernel_lookup(struct sym_ctx *c, void *state, const struct sym_where *w,
				  struct sym_result *r)
{
	struct symbolizer *sz = tsym_of(c)->sz;
	const struct symtab_sym *s;
	const char *name;

	(void)state;
	if (!sz->kallsyms_tried)
		kallsyms_load(sz);
	r->module = "[kernel.kallsyms]";
	s = sz->kallsyms ? symtab_lookup(sz->kallsyms, w->addr) : NULL;
	if (!s)
		return SYM_MISS;
	r->name = s->name;
	r->start = s->start;
	r->kind = PROFILE_KIND_KERNEL;
	name = sz->kallsyms_module
		   ? shared_name(sz, &sz->kallsyms_names, sz->kallsyms, s, false, 0, NULL)
		   : NULL;
	if (name) {
		r->name = name;
		r->module = sz->kallsyms_module;
		r->shared = true;
	}
	return SYM_HIT;
}

const struct sym_source sym_source_kernel = {
    .name = "kernel", .space = SYM_SPACE_KERNEL, .lookup = kernel_lookup};

/* ---- the target's root ---- */

/* Kept from the last read of the maps (attach, exec, re-reads), not opened when needed: the
 * files of a process that exited before its samples were read are still reached through it,
 * and a PID reused meanwhile cannot send kprofd into another process's root. */
void symbolize_root_update(struct tsym *ts)
{
	int fd = tfile_proc_root(ts->c.pid);

	if (fd < 0)
		return; /* gone: keep the last one */
	if (ts->c.root >= 0)
		close(ts->c.root);
	ts->c.root = fd;
}

int sym_root(const struct sym_ctx *c)
{
	int fd;

	if (c->root < 0)
		return c->done ? -ESRCH : tfile_proc_root(c->pid);
	fd = fcntl(c->root, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

int tsym_root_now(struct tsym *ts)
{
	return ts->c.root >= 0 ? sym_root(&ts->c) : tfile_proc_root(ts->c.pid);
}

/* ---- separate debug files ---- */

#define DEBUG_CRC_MAX (256u << 20) /* a debuglink'ed file larger than this is not summed */

int symbolize_file_crc32(int fd, uint64_t size, uint32_t *ret)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	char buf[65536];

	if (size > DEBUG_CRC_MAX)
		return -EFBIG;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		crc = crc32(crc, (const Bytef *)buf, n);
		off += n;
	}
	*ret = crc;
	return 0;
}

/* Load rel (inside the target's root) as e's debug file if it is one: a regular file of root
 * or the target, not e's file itself, an ELF file with a .symtab, of e's build id when e has
 * one, of the debuglink's CRC32 when want_crc. 0, or a negative errno. */
static int debug_try(struct tsym *ts, int root, const char *rel, struct elf_entry *e, bool want_crc)
{
	_cleanup_close_ int fd = -1;
	struct elfsym ds;
	char why[128] = "";
	struct stat st;
	uint32_t crc = 0;
	uint64_t room = budget_room(ts->sz->budget, ts->c.uid);
	int err;

	fd = tfile_open(root, rel, true, NULL, &st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT)
			log_debug("pid %d: debug file %s not read: %s", ts->c.pid, rel, why);
		return fd;
	}
	if (st.st_dev == e->dev && st.st_ino == e->ino)
		return -ELOOP;
	if (st.st_uid != 0 && st.st_uid != ts->c.uid && st.st_uid != ts->c.euid) {
		log_debug("pid %d: debug file %s ignored: owned by uid %u", ts->c.pid, rel,
			  (unsigned)st.st_uid);
		return -EPERM;
	}
	if (want_crc &&
	    (symbolize_file_crc32(fd, st.st_size, &crc) < 0 || crc != e->es.debuglink_crc)) {
		log_debug("pid %d: debug file %s: CRC32 %08x, the debuglink's %08x", ts->c.pid, rel,
			  crc, e->es.debuglink_crc);
		return -ESTALE;
	}
	err = room ? elfsym_load_fd(fd, room, &ds) : -ENOSPC;
	if (err == 0 &&
	    (!ds.has_symtab || (e->es.build_id_len && !elfsym_same_build_id(&e->es, &ds)))) {
		log_debug("pid %d: debug file %s: %s", ts->c.pid, rel,
			  ds.has_symtab ? "another build id" : "no .symtab");
		elfsym_release(&ds);
		err = -ESTALE;
	}
	if (err == 0 && budget_charge(ts->sz->budget, ts->c.uid, symtab_memory(ds.syms)) < 0) {
		elfsym_release(&ds);
		err = -ENOSPC;
	}
	if (err == -ENOSPC)
		ts->refused++;
	if (err < 0)
		return err;
	e->dbg = ds;
	e->dbg_owner = st.st_uid;
	e->dbg_uid = ts->c.uid;
	e->dbg_bytes = symtab_memory(ds.syms);
	log_debug("pid %d: symbols of %s from /proc/%d/root/%s", ts->c.pid, e->module, ts->c.pid,
		  rel);
	return 0;
}

/* A stripped file's names from its debug file, looked for as gdb and perf do, inside the
 * target's root (where the debug files of its libraries are; the host's for a host process):
 * by build id, DEBUG_DIR/.build-id/xx/rest.debug; by .gnu_debuglink NAME, in the file's
 * directory, its .debug/ and DEBUG_DIR/<directory>/. path is the file's in the target. Once
 * per target: a file shared by targets of several roots or mount namespaces (a host library
 * bind-mounted into a container) is looked for again by the next one (neither a root's inode
 * nor a namespace's inode number tells them apart: both are reused). */
static void debug_attach(struct tsym *ts, struct elf_entry *e, const char *path)
{
	char rel[4096], hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	const struct elfsym *es = &e->es;
	_cleanup_close_ int root = -1;
	const char *slash = strrchr(path, '/');

	if (e->dbg.syms || es->has_symtab || (es->build_id_len < 2 && !es->debuglink[0]) ||
	    e->dbg_searched_by == ts->serial)
		return;
	e->dbg_searched_by = ts->serial;
	root = sym_root(&ts->c);
	if (root < 0)
		return;
	if (es->build_id_len >= 2) {
		elfsym_build_id_hex(es, hex, sizeof(hex));
		snprintf(rel, sizeof(rel), DEBUG_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2);
		if (debug_try(ts, root, rel, e, false) == 0)
			return;
	}
	/* The directory as the target sees it, without the leading '/', with a trailing one. */
	if (!es->debuglink[0] || path[0] != '/' || strstr(path, " (deleted)"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(symbolize_debuglink_fmt); i++) {
		int n = snprintf(rel, sizeof(rel), symbolize_debuglink_fmt[i], (int)(slash - path),
				 path + 1, es->debuglink);

		if (n > 0 && (size_t)n < sizeof(rel) && debug_try(ts, root, rel, e, true) == 0)
			return;
	}
}

static void debug_drop(struct symbolizer *sz, struct elf_entry *e)
{
	budget_release(sz->budget, e->dbg_uid, e->dbg_bytes);
	elfsym_release(&e->dbg);
	shared_names_release(&e->dbg_names);
	e->dbg_bytes = 0;
	e->dbg_searched_by = 0;
}

/* ---- ELF cache ---- */

static void elf_entry_free(struct symbolizer *sz, struct elf_entry *e)
{
	if (!e)
		return;
	budget_release(sz->budget, e->uid, e->bytes + e->eh_len);
	free(e->eh);
	elfsym_release(&e->es);
	shared_names_release(&e->names);
	debug_drop(sz, e);
	free(e->module);
	free(e);
}

/* An unused entry stays cached (libc's symbols serve the next target) only if it is charged
 * to root: a user's budget is not held by files none of its targets maps any more. */
void symbolize_elf_put(struct symbolizer *sz, struct elf_entry *e)
{
	if (!e || e == &symbolize_elf_none || --e->refs)
		return;
	if (e->uid == 0 && e->dbg_uid != 0)
		debug_drop(sz, e); /* a user's debug file: looked for again by the next target */
	if (e->uid == 0)
		return;
	for (int i = 0; i < sz->nelf; i++) {
		if (sz->elf[i] == e) {
			sz->elf[i] = sz->elf[--sz->nelf];
			break;
		}
	}
	elf_entry_free(sz, e);
}

const char *symbolize_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* e's module and "[module]" among the host-wide names (left NULL when there is no room). */
static void elf_shared_names(struct symbolizer *sz, struct elf_entry *e)
{
	char buf[PATH_MAX + 3];

	e->shared_module = strpool_intern(sz->names, e->module);
	if (e->shared_module && (size_t)snprintf(buf, sizeof(buf), "[%s]", e->module) < sizeof(buf))
		e->shared_bracket = strpool_intern(sz->names, buf);
}

/* The cached symbols of the file open at fd (a mapping of path, checked by tfile_open),
 * loading them on first use, charged to the target's uid. */
static struct elf_entry *elf_get(struct tsym *ts, int fd, const struct stat *sp, const char *path)
{
	struct symbolizer *sz = ts->sz;
	struct elf_entry *e;
	struct stat st = *sp;
	uint64_t room;
	int slot = -1, err;

	for (int i = 0; i < sz->nelf; i++) {
		e = sz->elf[i];
		if (e->dev == st.st_dev && e->ino == st.st_ino &&
		    e->mtime.tv_sec == st.st_mtim.tv_sec &&
		    e->mtime.tv_nsec == st.st_mtim.tv_nsec &&
		    e->ctime.tv_sec == st.st_ctim.tv_sec &&
		    e->ctime.tv_nsec == st.st_ctim.tv_nsec) {
			e->refs++;
			return e;
		}
		if (!e->refs && slot < 0)
			slot = i;
	}
	if (sz->nelf < ELF_CACHE_MAX)
		slot = sz->nelf++;
	else if (slot < 0)
		return &symbolize_elf_none; /* every cached file is in use: leave this one
					       unsymbolized */
	else
		elf_entry_free(sz, sz->elf[slot]);
	e = calloc(1, sizeof(*e));
	if (!e) {
		sz->elf[slot] = sz->elf[--sz->nelf];
		return &symbolize_elf_none;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->mtime = st.st_mtim;
	e->ctime = st.st_ctim;
	e->module = strdup(symbolize_base_name(path));
	if (e->module)
		elf_shared_names(sz, e);
	e->uid = ts->c.uid;
	room = budget_room(sz->budget, ts->c.uid);
	err = room ? elfsym_load_fd(fd, room, &e->es) : -ENOSPC;
	if (err == 0 && budget_charge(sz->budget, ts->c.uid, symtab_memory(e->es.syms)) == 0)
		e->bytes = symtab_memory(e->es.syms);
	else if (err == 0)
		err = -ENOSPC;
	if (err < 0 || !e->module) {
		e->failed = 1;
		elfsym_release(&e->es);
		if (err == -ENOSPC) {
			ts->refused++;
			log_warn("pid %d: symbols of %s left out: uid %u's symbol budget is spent",
				 ts->c.pid, path, ts->c.uid);
		} else {
			log_debug("ELF %s: no symbols (%s)", path,
				  strerror(err < 0 ? -err : ENOMEM));
		}
	}
	e->refs = 1;
	sz->elf[slot] = e;
	return e;
}

/* ---- a target's ELF files ---- */

int symbolize_elf_eh(struct tsym *ts, struct elf_entry *e, int fd)
{
	uint64_t room = budget_room(ts->sz->budget, e->uid);
	int err =
	    elfsym_section_fd(fd, ".eh_frame", room < EHFRAME_MAX_BYTES ? room : EHFRAME_MAX_BYTES,
			      &e->eh, &e->eh_len, &e->eh_addr);

	if (err == 0 && budget_charge(ts->sz->budget, e->uid, e->eh_len) < 0) {
		free(e->eh);
		e->eh = NULL;
		e->eh_len = 0;
		err = -ENOSPC;
	}
	e->eh_state = err == 0 ? 1 : -1;
	if (err == -ENOSPC || err == -E2BIG) {
		ts->refused++;
		log_warn(
		    "pid %d: the call frame information of %s left out: uid %u's symbol budget "
		    "is spent",
		    ts->c.pid, e->module, e->uid);
	}
	return err;
}

int tsym_open_mapped(struct tsym *ts, const struct procmaps_entry *m, struct stat *stp)
{
	const struct tfile_want want = {
	    .check_id = true, .dev = makedev(m->dev_major, m->dev_minor), .ino = m->inode};
	int fd;
	char path[96], why[128] = "";
	struct stat st;

	if (m->path[0] != '/' || !m->inode)
		return -ENOENT;
	/* map_files reaches the very file mapped, even deleted or in another mount namespace. */
	procmaps_file_path(path, sizeof(path), ts->c.pid, m->start, m->end);
	fd = tfile_open(AT_FDCWD, path, false, &want, &st, why, sizeof(why));
	/* map_files needs CAP_SYS_ADMIN; without it, the same path inside the target's root,
	 * unless the file was deleted (then only map_files reaches it). The target controls
	 * what that path is in its mount namespace: tfile_open checks it is the file mapped. */
	if (fd < 0 && !strstr(m->path, " (deleted)")) {
		/* once the target is done, the identity check alone tells it is that file */
		_cleanup_close_ int root = tsym_root_now(ts);

		if (root >= 0)
			fd = tfile_open(root, m->path, true, &want, &st, why, sizeof(why));
		if (fd < 0 && fd != -ENOENT)
			log_debug("pid %d: %s not read: %s", ts->c.pid, m->path, why);
	}
	if (fd >= 0)
		*stp = st;
	return fd;
}

struct elf_entry *symbolize_mapping_elf(struct tsym *ts, size_t idx, const struct procmaps_entry *m)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (ts->map_elf[idx])
		return ts->map_elf[idx];
	ts->map_elf[idx] = &symbolize_elf_none;
	if (m->path[0] != '/' || !m->inode || ts->c.gone)
		return &symbolize_elf_none;
	fd = tsym_open_mapped(ts, m, &st);
	if (fd < 0)
		return &symbolize_elf_none;
	ts->map_elf[idx] = elf_get(ts, fd, &st, m->path);
	if (ts->map_elf[idx] != &symbolize_elf_none && !ts->map_elf[idx]->failed)
		debug_attach(ts, ts->map_elf[idx], m->path);
	return ts->map_elf[idx];
}

/* Whether the debug file's names may be shown for ts: the file is root's or the target's. */
static bool debug_trusted(const struct tsym *ts, const struct elf_entry *e)
{
	return e->dbg.syms &&
	       (e->dbg_owner == 0 || e->dbg_owner == ts->c.uid || e->dbg_owner == ts->c.euid);
}

/* A C++ name made readable; the copy is the target's until its next resolve. */
static void demangle(struct tsym *ts, struct sym_result *r)
{
	int status = 0;
	char *d = __cxa_demangle(r->name, NULL, NULL, &status);

	if (d && status == 0) {
		free(ts->demangled);
		ts->demangled = d;
		r->name = d;
	} else {
		free(d);
	}
}

/* An address in a file mapping: the symbol of the file (its debug file first) that covers it
 * is a hit; the nearest one below it, without a size that says it covers it, only near (a JIT
 * symbol may name it better, perf's rule: see tsym_resolve). r->module is set to the file even
 * when nothing names the address. */
static enum sym_hit elf_lookup(struct sym_ctx *c, void *state, const struct sym_where *w,
			       struct sym_result *r)
{
	struct tsym *ts = tsym_of(c);
	const struct procmaps_entry *m = w->m;
	const struct symtab_sym *s = NULL;
	const struct symtab *st;
	struct shared_names *sn;
	struct elf_entry *e;
	const char *name;
	uint64_t vaddr, *bytes;
	uid_t uid;
	bool hit;

	(void)state;
	e = symbolize_mapping_elf(ts, w->idx, m);
	if (e == &symbolize_elf_none || e->failed)
		return SYM_MISS;
	/* The debug file's program headers are the file's: one vaddr for both. Its names win,
	 * unless the file's own symbol is the closer one: the PLT entries are named from the
	 * file's relocations, which a debug file does not keep. */
	vaddr = elfsym_vaddr(&e->es, w->addr - m->start + m->offset);
	s = symtab_lookup(st = e->es.syms, vaddr);
	sn = &e->names;
	uid = e->uid;
	bytes = &e->bytes;
	if (debug_trusted(ts, e)) {
		const struct symtab_sym *d = symtab_lookup(e->dbg.syms, vaddr);

		if (d && (!s || d->start >= s->start)) {
			s = d;
			st = e->dbg.syms;
			sn = &e->dbg_names;
			uid = e->dbg_uid;
			bytes = &e->dbg_bytes;
		}
	}
	r->module = e->module;
	if (!s)
		return SYM_MISS;
	r->name = s->name;
	r->start = s->start;
	r->kind = PROFILE_KIND_NATIVE;
	if (s->size && vaddr - s->start < s->size) {
		r->lo = w->addr - (vaddr - s->start);
		r->hi = r->lo + s->size;
	}
	hit = r->hi > w->addr && r->lo <= w->addr;
	/* A hit's names are the host-wide ones (nothing later in the walk replaces them). */
	name = e->shared_module ? shared_name(ts->sz, sn, st, s, true, uid, bytes) : NULL;
	if (name) {
		r->name = name;
		r->module = e->shared_module;
		r->shared = hit;
	} else if (s->name[0] == '_' && s->name[1] == 'Z') {
		demangle(ts, r);
	}
	return hit ? SYM_HIT : SYM_NEAR;
}

const struct sym_source sym_source_elf = {
    .name = "ELF", .space = SYM_SPACE_FILE, .lookup = elf_lookup};

/* ---- what the sources share ---- */

enum sym_hit sym_lookup_jit(struct sym_ctx *c, void *state, const struct sym_where *w,
			    struct sym_result *r)
{
	struct sym_jit *j = state;
	const struct perfmap_sym *s = perfmap_lookup_frame(j->syms, w->addr);

	(void)c;
	if (!s)
		return SYM_MISS;
	r->name = s->name;
	r->module = j->module;
	r->start = s->start;
	r->kind = PROFILE_KIND_JIT;
	if (s->size && s->start + s->size > s->start) {
		r->lo = s->start;
		r->hi = s->start + s->size;
	}
	return SYM_HIT;
}

int symbolizer_new(uint64_t total_bytes, uint64_t per_uid_bytes, struct symbolizer **ret)
{
	struct symbolizer *sz;
	int err;

	sz = calloc(1, sizeof(*sz));
	if (!sz)
		return -ENOMEM;
	err = budget_new(total_bytes, per_uid_bytes, &sz->budget);
	if (err == 0)
		err = strpool_new(SHARED_NAMES_BYTES, &sz->names);
	if (err < 0) {
		budget_free(sz->budget);
		free(sz);
		return err;
	}
	allowance_init(&sz->read_cpu, READ_ALL_CPU_NS, READ_ALL_BURST_NS, now_ns(CLOCK_MONOTONIC));
	*ret = sz;
	return 0;
}

void symbolizer_set_budget(struct symbolizer *sz, uint64_t total_bytes, uint64_t per_uid_bytes)
{
	budget_set_limits(sz->budget, total_bytes, per_uid_bytes);
}

void symbolizer_get_stats(const struct symbolizer *sz, uint64_t *bytes, uint64_t *refusals)
{
	struct strpool_stats ps;

	strpool_get_stats(sz->names, &ps);
	/* The host-wide names are charged to no user: counted here, in what status shows. */
	*bytes = budget_total_used(sz->budget) + ps.bytes;
	*refusals = budget_refusals(sz->budget);
}

void symbolizer_names_stats(const struct symbolizer *sz, uint64_t *names, uint64_t *full)
{
	struct strpool_stats ps;

	strpool_get_stats(sz->names, &ps);
	*names = ps.strs;
	*full = ps.full;
}

void symbolizer_free(struct symbolizer *sz)
{
	if (!sz)
		return;
	for (int i = 0; i < sz->nelf; i++)
		elf_entry_free(sz, sz->elf[i]);
	symtab_free(sz->kallsyms);
	elfsym_release(&sz->vdso);
	budget_free(sz->budget);
	shared_names_release(&sz->kallsyms_names);
	strpool_free(sz->names); /* after the profiles that keep its names: the targets' */
	free(sz);
}
/* ---- vdso ---- */

/* kprofd's own vdso, parsed once: the kernel maps the same image into every process (of one
 * ABI: a mapping of another size, a 32-bit process's, is not named from it). It is copied out
 * of memory first and parsed as any ELF image. */
static __attribute__((noinline)) void vdso_load(struct symbolizer *sz)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	_cleanup_free_ char *maps = NULL;
	_cleanup_free_ void *img = NULL;
	struct procmaps *pm = NULL;
	const struct procmaps_entry *m;
	ssize_t n;
	int err = -ENOENT;

	sz->vdso_tried = true;
	n = base ? read_file("/proc/self/maps", &maps, MAPS_MAX_BYTES) : -ENOENT;
	if (n >= 0 && procmaps_parse(maps, n, MAPS_MAX_ENTRIES, &pm) == 0 &&
	    (m = procmaps_find(pm, base)) && m->start == base && !strcmp(m->path, "[vdso]") &&
	    (img = malloc(m->end - m->start))) {
		memcpy(img, (const void *)base, m->end - m->start);
		err = elfsym_load_mem(img, m->end - m->start, 0, &sz->vdso);
		sz->vdso_size = m->end - m->start;
	}
	procmaps_free(pm);
	if (err < 0)
		log_warn("vdso: kprofd's own cannot be read (%s): [vdso] frames stay unnamed",
			 strerror(-err));
	else
		log_debug("vdso: %zu functions", symtab_count(sz->vdso.syms));
}

static enum sym_hit vdso_lookup(struct sym_ctx *c, void *state, const struct sym_where *w,
				struct sym_result *r)
{
	struct symbolizer *sz = tsym_of(c)->sz;
	const struct procmaps_entry *m = w->m;
	const struct symtab_sym *s;
	uint64_t vaddr;

	(void)state;
	if (!m || strcmp(m->path, "[vdso]"))
		return SYM_MISS;
	if (!sz->vdso_tried)
		vdso_load(sz);
	if (!sz->vdso.syms || m->end - m->start != sz->vdso_size)
		return SYM_MISS;
	vaddr = elfsym_vaddr(&sz->vdso, w->addr - m->start);
	s = symtab_lookup(sz->vdso.syms, vaddr);
	if (!s)
		return SYM_MISS;
	r->name = s->name;
	r->module = "[vdso]";
	r->start = s->start;
	r->kind = PROFILE_KIND_NATIVE;
	if (s->size && vaddr - s->start < s->size) {
		r->lo = w->addr - (vaddr - s->start);
		r->hi = r->lo + s->size;
	}
	return SYM_HIT;
}

const struct sym_source sym_source_vdso = {.name = "vdso", .lookup = vdso_lookup};
