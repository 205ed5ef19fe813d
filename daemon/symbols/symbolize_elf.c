// SPDX-License-Identifier: GPL-2.0-only
/* symbolize_elf.c: the symbol sources every target shares (struct symbolizer, symbolize_elf.h):
 * the cache of ELF symbol tables keyed by (device, inode, mtime) and charged to a budget, their
 * separate debug files found inside a target's root, the kernel's symbols and kprofd's own
 * vdso; and the target's root they are opened through. Apart from symbolize.c because these are
 * files read once and kept for every target, where symbolize.c follows one target's maps, perf
 * map and jitdump and resolves addresses. The design is explained at the top of symbolize.c.
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
#include "kprof/elfsym.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "kprof/symtab.h"
#include "os/clock.h"
#include "symbols/symbolize.h"
#include "symbols/jitfile.h"
#include "os/log.h"
#include "os/procfs.h"
#include "os/tfile.h"
#include "symbols/symbolize_elf.h"
#include "symbols/symbolize_internal.h"

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

void symbolize_kallsyms_load(struct symbolizer *sz)
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
	if (!added)
		log_warn("kernel symbols: %s shows no addresses (kptr_restrict?)", from);
	else
		log_info("kernel symbols: %zu loaded from %s", added, from);
}

/* ---- the target's root ---- */

/* Kept from the last read of the maps (attach, exec, re-reads), not opened when needed: the
 * files of a process that exited before its samples were read are still reached through it,
 * and a PID reused meanwhile cannot send kprofd into another process's root. */
void symbolize_root_update(struct tsym *ts)
{
	int fd = tfile_proc_root(ts->pid);

	if (fd < 0)
		return; /* gone: keep the last one */
	if (ts->root >= 0)
		close(ts->root);
	ts->root = fd;
}

int tsym_root(struct tsym *ts)
{
	int fd;

	if (ts->root < 0)
		return ts->done ? -ESRCH : tfile_proc_root(ts->pid);
	fd = fcntl(ts->root, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

int tsym_root_now(struct tsym *ts)
{
	return ts->root >= 0 ? tsym_root(ts) : tfile_proc_root(ts->pid);
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
	uint64_t room = budget_room(ts->sz->budget, ts->uid);
	int err;

	fd = tfile_open(root, rel, true, NULL, &st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT)
			log_debug("pid %d: debug file %s not read: %s", ts->pid, rel, why);
		return fd;
	}
	if (st.st_dev == e->dev && st.st_ino == e->ino)
		return -ELOOP;
	if (st.st_uid != 0 && st.st_uid != ts->uid && st.st_uid != ts->euid) {
		log_debug("pid %d: debug file %s ignored: owned by uid %u", ts->pid, rel,
			  (unsigned)st.st_uid);
		return -EPERM;
	}
	if (want_crc && (symbolize_file_crc32(fd, st.st_size, &crc) < 0 || crc != e->es.debuglink_crc)) {
		log_debug("pid %d: debug file %s: CRC32 %08x, the debuglink's %08x", ts->pid, rel,
			  crc, e->es.debuglink_crc);
		return -ESTALE;
	}
	err = room ? elfsym_load_fd(fd, room, &ds) : -ENOSPC;
	if (err == 0 &&
	    (!ds.has_symtab || (e->es.build_id_len && !elfsym_same_build_id(&e->es, &ds)))) {
		log_debug("pid %d: debug file %s: %s", ts->pid, rel,
			  ds.has_symtab ? "another build id" : "no .symtab");
		elfsym_release(&ds);
		err = -ESTALE;
	}
	if (err == 0 && budget_charge(ts->sz->budget, ts->uid, symtab_memory(ds.syms)) < 0) {
		elfsym_release(&ds);
		err = -ENOSPC;
	}
	if (err == -ENOSPC)
		ts->refused++;
	if (err < 0)
		return err;
	e->dbg = ds;
	e->dbg_owner = st.st_uid;
	e->dbg_uid = ts->uid;
	e->dbg_bytes = symtab_memory(ds.syms);
	log_debug("pid %d: symbols of %s from /proc/%d/root/%s", ts->pid, e->module, ts->pid, rel);
	return 0;
}

/* A stripped file's names from its debug file, looked for as gdb and perf do, inside the
 * target's root (where the debug files of its libraries are; the host's for a host process):
 * by build id, DEBUG_DIR/.build-id/xx/rest.debug; by .gnu_debuglink NAME, in the file's
 * directory, its .debug/ and DEBUG_DIR/<directory>/. path is the file's in the target. Once
 * per target: a file shared by targets of several roots or mount namespaces (a host library
 * bind-mounted into a container) is looked for again by the next one (neither a root's inode
 * nor a namespace's inode number tells them apart: both are reused). */
void symbolize_debug_attach(struct tsym *ts, struct elf_entry *e, const char *path)
{
	char rel[4096], hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	const struct elfsym *es = &e->es;
	_cleanup_close_ int root = -1;
	const char *slash = strrchr(path, '/');

	if (e->dbg.syms || es->has_symtab || (es->build_id_len < 2 && !es->debuglink[0]) ||
	    e->dbg_searched_by == ts->serial)
		return;
	e->dbg_searched_by = ts->serial;
	root = tsym_root(ts);
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
	e->dbg_bytes = 0;
	e->dbg_searched_by = 0;
}

/* ---- ELF cache ---- */

static void elf_entry_free(struct symbolizer *sz, struct elf_entry *e)
{
	if (!e)
		return;
	budget_release(sz->budget, e->uid, e->bytes);
	elfsym_release(&e->es);
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

/* The cached symbols of the file open at fd (a mapping of path, checked by tfile_open),
 * loading them on first use, charged to the target's uid. */
struct elf_entry *symbolize_elf_get(struct tsym *ts, int fd, const struct stat *sp,
				    const char *path)
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
		    e->mtime.tv_nsec == st.st_mtim.tv_nsec) {
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
	e->module = strdup(symbolize_base_name(path));
	e->uid = ts->uid;
	room = budget_room(sz->budget, ts->uid);
	err = room ? elfsym_load_fd(fd, room, &e->es) : -ENOSPC;
	if (err == 0 && budget_charge(sz->budget, ts->uid, symtab_memory(e->es.syms)) == 0)
		e->bytes = symtab_memory(e->es.syms);
	else if (err == 0)
		err = -ENOSPC;
	if (err < 0 || !e->module) {
		e->failed = 1;
		elfsym_release(&e->es);
		if (err == -ENOSPC) {
			ts->refused++;
			log_warn("pid %d: symbols of %s left out: uid %u's symbol budget is spent",
				 ts->pid, path, ts->uid);
		} else {
			log_debug("ELF %s: no symbols (%s)", path,
				  strerror(err < 0 ? -err : ENOMEM));
		}
	}
	e->refs = 1;
	sz->elf[slot] = e;
	return e;
}

int symbolizer_new(uint64_t total_bytes, uint64_t per_uid_bytes, struct symbolizer **ret)
{
	struct symbolizer *sz;
	int err;

	sz = calloc(1, sizeof(*sz));
	if (!sz)
		return -ENOMEM;
	err = budget_new(total_bytes, per_uid_bytes, &sz->budget);
	if (err < 0) {
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
	*bytes = budget_total_used(sz->budget);
	*refusals = budget_refusals(sz->budget);
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
	free(sz);
}
/* ---- vdso ---- */

/* kprofd's own vdso, parsed once: the kernel maps the same image into every process (of one
 * ABI: a mapping of another size, a 32-bit process's, is not named from it). It is copied out
 * of memory first and parsed as any ELF image. */
static void vdso_load(struct symbolizer *sz)
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

bool symbolize_vdso_lookup(struct symbolizer *sz, const struct procmaps_entry *m, uint64_t addr,
			   struct sym_result *r)
{
	const struct symtab_sym *s;

	if (strcmp(m->path, "[vdso]"))
		return false;
	if (!sz->vdso_tried)
		vdso_load(sz);
	if (!sz->vdso.syms || m->end - m->start != sz->vdso_size)
		return false;
	s = symtab_lookup(sz->vdso.syms, elfsym_vaddr(&sz->vdso, addr - m->start));
	if (!s)
		return false;
	r->name = s->name;
	r->module = "[vdso]";
	r->start = s->start;
	r->kind = PROFILE_KIND_NATIVE;
	{
		uint64_t vaddr = elfsym_vaddr(&sz->vdso, addr - m->start);

		if (s->size && vaddr - s->start < s->size) {
			r->lo = addr - (vaddr - s->start);
			r->hi = r->lo + s->size;
		}
	}
	return true;
}
