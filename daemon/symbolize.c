// SPDX-License-Identifier: GPL-2.0-only
/* symbolize.c: turn sampled addresses into (function, module) names.
 *
 * Per target (struct tsym): the executable mappings of /proc/PID/maps, re-read when an address
 * falls outside all of them (at most every 100 ms); the JIT perf map, found inside the target's
 * own root and /tmp under its namespaced PID (never the host's /tmp: a PID there may be another
 * process's), opened through tfile.c (no symlinks, regular file on an ordinary filesystem,
 * owned by the target's real or effective uid, so root's maps are trusted for root's targets
 * only), not older than the process, read incrementally while it grows and from scratch when
 * it shrinks or is replaced.
 * Shared by all targets (struct symbolizer): ELF symbol tables keyed by (device, inode, mtime),
 * reference counted by the mappings that use them (an unused one is kept only if root's), read
 * with pread from the very file mapped (its device and inode checked against /proc/PID/maps),
 * and the kernel's /proc/kallsyms (or standard input, where systemd opened that file for the
 * hardened unit, which cannot open it). Symbol memory is charged to the target's uid in a budget
 * (a total and a per-uid limit); what does not fit stays unnamed and is counted.
 * The jitdump (jit-PID.dump, perf's binary JIT file) is jitfile.c's, refreshed with the perf map.
 * The ELF files of a target's executable mappings are read when its maps are (at attach, exec
 * and re-reads), not when a sample needs them, and its /proc/PID/root is kept open from then:
 * samples are read in batches, often after a short process has exited, when map_files and root
 * are gone with it. A stripped file's local names come from its separate debug file, found by
 * build id or .gnu_debuglink inside the target's root (through tfile.c, its build id or CRC32
 * checked). The vdso is named from kprofd's own, the same image in every process.
 * Resolution order for a user address: the jitdump's code loads, then the perf map (both JIT
 * code: a JIT that writes both, V8 with --perf-prof and --perf-basic-prof, describes the same
 * code in both, and the jitdump is the exact one: binary names, sizes, moves), then the ELF file
 * of its mapping (its debug file first), then the vdso, else a name made up from the mapping.
 * Parsing is done by the pure perfmap, jitdump, procmaps, symtab and elfsym modules; this file
 * only does the I/O around them.
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
#include "clock.h"
#include "symbolize.h"
#include "jitfile.h"
#include "log.h"
#include "procfs.h"
#include "tfile.h"

#define ELF_CACHE_MAX 1024
#define MAPS_MAX_BYTES (16u << 20)
#define MAPS_MAX_ENTRIES 65536
#define MAPS_RELOAD_NS (100 * 1000000ULL)
#define PERFMAP_REFRESH_MIN_NS (50 * 1000000ULL)
#define PERFMAP_READ_PER_REFRESH (64u << 20)

struct elf_entry {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	unsigned refs;
	uid_t uid;	/* charged to */
	uint64_t bytes; /* charged */
	int failed;	/* not an ELF file or no symbols: remembered so it is not parsed again */
	char *module;
	struct elfsym es;
	struct elfsym dbg; /* its separate debug file's .symtab (dbg.syms NULL: none) */
	uid_t dbg_owner;   /* who owns that file: it names only that user's and root's targets */
	uid_t dbg_uid;	   /* charged to: the uid of the target that found it */
	uint64_t dbg_bytes;
	/* The target that last looked for it in vain: another one, which may see other files
	 * (another root or mount namespace), looks again. */
	uint64_t dbg_searched_by;
};

struct symbolizer {
	struct elf_entry *elf[ELF_CACHE_MAX];
	int nelf;
	struct budget *budget;
	struct symtab *kallsyms;
	int kallsyms_tried;
	struct elfsym vdso; /* kprofd's own vdso, the image every process of this kernel maps */
	uint64_t vdso_size;
	bool vdso_tried;
	uint64_t tsym_serial; /* of the last struct tsym made */
};

struct tsym {
	struct symbolizer *sz;
	pid_t pid, nspid;
	uid_t uid, euid;
	uint64_t refused; /* symbol sources left out for lack of budget */
	uint64_t pm_charged;
	bool gone;
	uint64_t start_realtime_ns; /* process start, for the perf map's PID-reuse check */
	uint64_t gen;
	int root;  /* its /proc/PID/root as of the last maps read: still there once it is gone */
	bool done; /* no samples will come: root closed, /proc/PID no longer read */
	uint64_t serial; /* unique among all targets kprofd ever had */

	struct procmaps *maps;
	struct elf_entry **map_elf; /* per mapping: NULL = not looked up yet */
	uint64_t maps_loaded_ns;

	struct perfmap *pm;
	struct tfile_track pm_track; /* where reading stopped, and what was read */
	uint64_t pm_refreshed_ns;
	uint64_t pm_reloads;
	char pm_path[256];
	char pm_module[64];
	bool pm_warned;
	uint64_t perfmap_max_bytes;
	struct jitfile *jf; /* the jitdump */
	char *demangled;    /* last demangled name, valid until the next resolve */
};

/* The C++ ABI's demangler (libstdc++): C++ symbols (node, the JVM, ...) are shown readable. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static struct elf_entry elf_none; /* marks "looked up, nothing usable" in map_elf */

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

static void kallsyms_load(struct symbolizer *sz)
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
static void root_update(struct tsym *ts)
{
	int fd = tfile_proc_root(ts->pid);

	if (fd < 0)
		return; /* gone: keep the last one */
	if (ts->root >= 0)
		close(ts->root);
	ts->root = fd;
}

/* A new fd of the target's root (O_PATH), or a negative errno. */
static int tsym_root(struct tsym *ts)
{
	int fd;

	if (ts->root < 0)
		return ts->done ? -ESRCH : tfile_proc_root(ts->pid);
	fd = fcntl(ts->root, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

/* ---- separate debug files ---- */

#define DEBUG_DIR "usr/lib/debug"
#define DEBUG_CRC_MAX (256u << 20) /* a debuglink'ed file larger than this is not summed */

/* The CRC32 of the whole file, as .gnu_debuglink records it (zlib's crc32). */
static int file_crc32(int fd, uint64_t size, uint32_t *ret)
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

/* Whether the debug file's names may be shown for ts: the file is root's or the target's. */
static bool debug_trusted(const struct tsym *ts, const struct elf_entry *e)
{
	return e->dbg.syms &&
	       (e->dbg_owner == 0 || e->dbg_owner == ts->uid || e->dbg_owner == ts->euid);
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
	if (want_crc && (file_crc32(fd, st.st_size, &crc) < 0 || crc != e->es.debuglink_crc)) {
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
static void debug_attach(struct tsym *ts, struct elf_entry *e, const char *path)
{
	static const char *const link_fmt[] = {"%.*s%s", "%.*s.debug/%s", DEBUG_DIR "/%.*s%s"};
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
	for (size_t i = 0; i < ARRAY_SIZE(link_fmt); i++) {
		int n = snprintf(rel, sizeof(rel), link_fmt[i], (int)(slash - path), path + 1,
				 es->debuglink);

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
static void elf_put(struct symbolizer *sz, struct elf_entry *e)
{
	if (!e || e == &elf_none || --e->refs)
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

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
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
		return &elf_none; /* every cached file is in use: leave this one unsymbolized */
	else
		elf_entry_free(sz, sz->elf[slot]);
	e = calloc(1, sizeof(*e));
	if (!e) {
		sz->elf[slot] = sz->elf[--sz->nelf];
		return &elf_none;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->mtime = st.st_mtim;
	e->module = strdup(base_name(path));
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

/* ---- per-target maps ---- */

static void maps_drop(struct tsym *ts)
{
	if (!ts->maps)
		return;
	for (size_t i = 0; i < procmaps_count(ts->maps); i++)
		elf_put(ts->sz, ts->map_elf[i]);
	free(ts->map_elf);
	procmaps_free(ts->maps);
	ts->map_elf = NULL;
	ts->maps = NULL;
}

static void maps_open_elf(struct tsym *ts);
static void maps_carry(struct tsym *ts, const struct procmaps *pm, struct elf_entry **map_elf);

static int maps_load(struct tsym *ts)
{
	_cleanup_free_ char *buf = NULL;
	struct elf_entry **map_elf;
	struct procmaps *pm = NULL;
	ssize_t n;
	int err;

	ts->maps_loaded_ns = now_ns(CLOCK_MONOTONIC);
	n = procfs_read(ts->pid, "maps", &buf, MAPS_MAX_BYTES);
	if (n < 0)
		return n;
	/* Empty maps: the process has exited (a zombie has no memory left). What it mapped while
	 * it ran still names the samples read after its exit. */
	if (n == 0)
		return -ESRCH;
	err = procmaps_parse(buf, n, MAPS_MAX_ENTRIES, &pm);
	if (err < 0)
		return err;
	map_elf = calloc(procmaps_count(pm) ? procmaps_count(pm) : 1, sizeof(*map_elf));
	if (!map_elf) {
		procmaps_free(pm);
		return -ENOMEM;
	}
	maps_carry(ts, pm, map_elf);
	maps_drop(ts);
	ts->map_elf = map_elf;
	ts->maps = pm;
	ts->gen++;
	root_update(ts);
	maps_open_elf(ts);
	return 0;
}

static struct elf_entry *mapping_elf(struct tsym *ts, size_t idx, const struct procmaps_entry *m)
{
	const struct tfile_want want = {
	    .check_id = true, .dev = makedev(m->dev_major, m->dev_minor), .ino = m->inode};
	_cleanup_close_ int fd = -1;
	char path[96], why[128] = "";
	struct stat st;

	if (ts->map_elf[idx])
		return ts->map_elf[idx];
	ts->map_elf[idx] = &elf_none;
	if (m->path[0] != '/' || !m->inode || ts->gone)
		return &elf_none;
	/* map_files reaches the very file mapped, even deleted or in another mount namespace. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", ts->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = tfile_open(AT_FDCWD, path, false, &want, &st, why, sizeof(why));
	/* map_files needs CAP_SYS_ADMIN; without it, the same path inside the target's root,
	 * unless the file was deleted (then only map_files reaches it). The target controls
	 * what that path is in its mount namespace: tfile_open checks it is the file mapped. */
	if (fd < 0 && !strstr(m->path, " (deleted)")) {
		_cleanup_close_ int root = tsym_root(ts);

		if (root >= 0)
			fd = tfile_open(root, m->path, true, &want, &st, why, sizeof(why));
		if (fd < 0 && fd != -ENOENT)
			log_debug("pid %d: %s not read: %s", ts->pid, m->path, why);
	}
	if (fd < 0)
		return &elf_none;
	ts->map_elf[idx] = elf_get(ts, fd, &st, m->path);
	if (ts->map_elf[idx] != &elf_none && !ts->map_elf[idx]->failed)
		debug_attach(ts, ts->map_elf[idx], m->path);
	return ts->map_elf[idx];
}

/* At most this many files are opened at one read of the maps; the rest when sampled. */
#define MAPS_OPEN_MAX 256

static bool maps_same(const struct procmaps_entry *a, const struct procmaps_entry *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && !strcmp(a->path, b->path);
}

/* Mappings that did not change between two reads keep their files' symbols (and their
 * failures): a re-read costs no open. */
static void maps_carry(struct tsym *ts, const struct procmaps *pm, struct elf_entry **map_elf)
{
	for (size_t i = 0; ts->maps && i < procmaps_count(pm); i++) {
		const struct procmaps_entry *m = procmaps_at(pm, i);
		const struct procmaps_entry *o = procmaps_find(ts->maps, m->start);
		struct elf_entry *e = o ? ts->map_elf[o - procmaps_at(ts->maps, 0)] : NULL;

		if (!e || !maps_same(m, o))
			continue;
		if (e != &elf_none)
			e->refs++;
		map_elf[i] = e;
	}
}

/* The symbols of every mapped executable file, read now and not when a sample needs them:
 * samples are read in batches, and those of a process that has exited by then name its code
 * from what was read while it ran (its /proc/PID/map_files are gone with it). The files are
 * cached by identity, so this costs one open per mapping the first time, none after. */
static void maps_open_elf(struct tsym *ts)
{
	size_t opened = 0;

	for (size_t i = 0; i < procmaps_count(ts->maps) && opened < MAPS_OPEN_MAX; i++) {
		const struct procmaps_entry *m = procmaps_at(ts->maps, i);

		if (ts->map_elf[i] || !procmaps_is_exec(m) || m->path[0] != '/' || !m->inode)
			continue;
		mapping_elf(ts, i, m);
		opened++;
	}
}

/* ---- per-target perf map ---- */

static int read_nspid(pid_t pid, pid_t *nspid, uint64_t *start_realtime_ns)
{
	struct procinfo_status ps;
	struct procinfo_stat pt;
	int err = procfs_status(pid, &ps);

	if (err < 0)
		return err;
	*nspid = ps.nstgid;
	if (procfs_stat(pid, &pt) == 0 && pt.start_ticks) {
		uint64_t boot = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_BOOTTIME);

		*start_realtime_ns = boot + pt.start_ticks * (1000000000ULL / sysconf(_SC_CLK_TCK));
	}
	return 0;
}

/* Open the target's perf map by the rules in the header comment. -ENOENT if there is none. */
static int perfmap_open(struct tsym *ts, struct stat *st)
{
	const struct tfile_want want = {.owners = {ts->uid, ts->euid}, .nowners = 2};
	_cleanup_close_ int fd = -1, root = -1;
	char rel[64], why[128] = "";

	if (ts->gone)
		return -ENOENT;
	snprintf(rel, sizeof(rel), "tmp/perf-%d.map", ts->nspid);
	root = tsym_root(ts);
	if (root < 0)
		return root;
	fd = tfile_open(root, rel, true, &want, st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT && !ts->pm_warned)
			log_warn("pid %d: perf map %s ignored: %s", ts->pid, ts->pm_path, why);
		ts->pm_warned |= fd != -ENOENT;
		return fd;
	}
	if (ts->start_realtime_ns &&
	    (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + st->st_mtim.tv_nsec + 2000000000ULL <
		ts->start_realtime_ns) {
		if (!ts->pm_warned)
			log_warn(
			    "pid %d: perf map %s is older than the process (PID reuse?), ignored",
			    ts->pid, ts->pm_path);
		ts->pm_warned = true;
		return -ESTALE;
	}
	return TAKE_FD(fd);
}

/* Read what the perf map gained; whether its symbols changed. */
static bool perfmap_refresh(struct tsym *ts)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint64_t budget = PERFMAP_READ_PER_REFRESH;
	char buf[65536];
	int added = 0;
	bool reset = false, had = ts->pm_track.ino != 0;

	fd = perfmap_open(ts, &st);
	if (fd < 0)
		return false;
	/* Replaced, shrunk or rewritten in place (jcmd Compiler.perfmap truncates and writes
	 * again): read from the start, never glue the middle of a new line to an old one. */
	if (tfile_track_check(fd, &st, &ts->pm_track)) {
		if (had)
			ts->pm_reloads++;
		perfmap_reset(ts->pm);
		budget_release(ts->sz->budget, ts->uid, ts->pm_charged);
		ts->pm_charged = 0;
		reset = true;
	}
	while (budget > 0) {
		ssize_t n = pread(fd, buf, sizeof(buf), ts->pm_track.off);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* A parsed line costs about its bytes plus an entry: charge twice the bytes. */
		if (budget_charge(ts->sz->budget, ts->uid, 2 * (uint64_t)n) < 0) {
			if (!ts->refused++)
				log_warn(
				    "pid %d: perf map %s read up to %llu bytes: uid %u's symbol "
				    "budget is spent",
				    ts->pid, ts->pm_path, (unsigned long long)ts->pm_track.off,
				    ts->uid);
			break;
		}
		ts->pm_charged += 2 * (uint64_t)n;
		r = perfmap_feed(ts->pm, buf, n);
		if (r < 0)
			break;
		added += r;
		tfile_track_advance(&ts->pm_track, buf, n);
		budget -= (uint64_t)n > budget ? budget : (uint64_t)n;
	}
	return added || reset;
}

static int jitfile_start(struct tsym *ts)
{
	const struct jitfile_params p = {.pid = ts->pid,
					 .nspid = ts->nspid,
					 .uid = ts->uid,
					 .euid = ts->euid,
					 .start_realtime_ns = ts->start_realtime_ns,
					 .max_bytes = ts->perfmap_max_bytes,
					 .budget = ts->sz->budget};

	return jitfile_new(&p, &ts->jf);
}

void tsym_refresh(struct tsym *ts)
{
	bool changed;

	ts->pm_refreshed_ns = now_ns(CLOCK_MONOTONIC);
	changed = perfmap_refresh(ts);
	/* Gone: its /proc/PID may be another process's already. */
	if (ts->jf && !ts->gone && jitfile_refresh(ts->jf, ts->maps) > 0)
		changed = true;
	if (changed)
		ts->gen++;
}

int tsym_new(struct symbolizer *sz, pid_t pid, uid_t uid, uid_t euid, uint64_t perfmap_max_bytes,
	     struct tsym **ret)
{
	struct tsym *ts = calloc(1, sizeof(*ts));
	int err;

	if (!ts)
		return -ENOMEM;
	ts->sz = sz;
	ts->root = -1;
	ts->serial = ++sz->tsym_serial;
	ts->pid = pid;
	ts->uid = uid;
	ts->euid = euid;
	err = read_nspid(pid, &ts->nspid, &ts->start_realtime_ns);
	if (err < 0)
		goto fail;
	err = perfmap_new(&(struct perfmap_limits){.max_bytes = perfmap_max_bytes}, &ts->pm);
	if (err < 0)
		goto fail;
	err = maps_load(ts);
	if (err < 0)
		goto fail;
	ts->perfmap_max_bytes = perfmap_max_bytes;
	err = jitfile_start(ts);
	if (err < 0)
		goto fail;
	snprintf(ts->pm_module, sizeof(ts->pm_module), "perf-%d.map", ts->nspid);
	/* One form whether or not the map exists: a path that names it from kprofd's side. */
	snprintf(ts->pm_path, sizeof(ts->pm_path), "/proc/%d/root/tmp/perf-%d.map", ts->pid,
		 ts->nspid);
	tsym_refresh(ts);
	*ret = ts;
	return 0;
fail:
	tsym_free(ts);
	return err;
}

void tsym_free(struct tsym *ts)
{
	if (!ts)
		return;
	maps_drop(ts);
	budget_release(ts->sz->budget, ts->uid, ts->pm_charged);
	perfmap_free(ts->pm);
	jitfile_free(ts->jf);
	free(ts->demangled);
	if (ts->root >= 0)
		close(ts->root);
	free(ts);
}

uint64_t tsym_generation(const struct tsym *ts)
{
	return ts->gen;
}

void tsym_exec(struct tsym *ts)
{
	uint64_t dummy;

	maps_drop(ts);
	perfmap_reset(ts->pm);
	budget_release(ts->sz->budget, ts->uid, ts->pm_charged);
	ts->pm_charged = 0;
	memset(&ts->pm_track, 0, sizeof(ts->pm_track));
	ts->pm_warned = false;
	read_nspid(ts->pid, &ts->nspid, &dummy);
	jitfile_free(ts->jf);
	ts->jf = NULL;
	if (jitfile_start(ts) < 0)
		log_warn("pid %d: jitdump not read after exec: out of memory", ts->pid);
	maps_load(ts);
	tsym_refresh(ts);
	ts->gen++;
}

void tsym_gone(struct tsym *ts)
{
	if (!ts->gone)
		tsym_refresh(ts); /* last chance for symbols written just before the exit */
	ts->gone = true;
}

void tsym_done(struct tsym *ts)
{
	ts->gone = true;
	ts->done = true;
	if (ts->root >= 0)
		close(ts->root);
	ts->root = -1;
}

const char *tsym_perfmap_module(const struct tsym *ts)
{
	return ts->pm_module;
}

int tsym_foreach_jit(const struct tsym *ts, int (*fn)(const struct perfmap_sym *, void *),
		     void *userdata)
{
	return perfmap_foreach(ts->pm, fn, userdata);
}

size_t tsym_anon_exec(const struct tsym *ts)
{
	size_t n = 0;

	for (size_t i = 0; ts->maps && i < procmaps_count(ts->maps); i++) {
		const struct procmaps_entry *m = procmaps_at(ts->maps, i);

		if (procmaps_is_exec(m) && (!m->path[0] || !strncmp(m->path, "/memfd:", 7)))
			n++;
	}
	return n;
}

const char *tsym_perfmap_path(const struct tsym *ts)
{
	return ts->pm_path;
}

const char *tsym_jitdump_path(const struct tsym *ts)
{
	return ts->jf ? jitfile_path(ts->jf) : "";
}

const char *tsym_jitdump_problem(const struct tsym *ts)
{
	return ts->jf ? jitfile_problem(ts->jf) : "";
}

void tsym_get_stats(const struct tsym *ts, struct tsym_stats *st)
{
	struct perfmap_stats ps;
	struct jitfile_stats js = {0};

	perfmap_get_stats(ts->pm, &ps);
	if (ts->jf)
		jitfile_get_stats(ts->jf, &js);
	memset(st, 0, sizeof(*st));
	snprintf(st->perfmap_path, sizeof(st->perfmap_path), "%s", ts->pm_path);
	st->jit_symbols = ps.entries;
	st->perfmap_bad_lines = ps.bad_lines;
	st->perfmap_reloads = ts->pm_reloads;
	st->refused = ts->refused + js.refused;
	snprintf(st->jitdump_path, sizeof(st->jitdump_path), "%s", tsym_jitdump_path(ts));
	snprintf(st->jitdump_problem, sizeof(st->jitdump_problem), "%s", tsym_jitdump_problem(ts));
	st->jitdump_symbols = js.symbols;
	st->jitdump_bad_records = js.bad_records;
	st->jitdump_bytes = js.bytes;
	st->jitdump_reloads = js.reloads;
}

/* ---- resolution ---- */

static const struct procmaps_entry *find_mapping(struct tsym *ts, uint64_t addr, size_t *idx)
{
	const struct procmaps_entry *m = ts->maps ? procmaps_find(ts->maps, addr) : NULL;

	if (!m && !ts->gone && now_ns(CLOCK_MONOTONIC) - ts->maps_loaded_ns > MAPS_RELOAD_NS &&
	    maps_load(ts) == 0)
		m = procmaps_find(ts->maps, addr);
	if (m)
		*idx = m - procmaps_at(ts->maps, 0);
	return m;
}

/* JIT code: the jitdump first, then the perf map (see the top of this file). */
static bool jit_lookup(struct tsym *ts, uint64_t addr, struct sym_result *r)
{
	const struct perfmap_sym *s = ts->jf ? jitfile_lookup(ts->jf, addr) : NULL;
	const char *module = s ? jitfile_module(ts->jf) : ts->pm_module;

	if (!s)
		s = perfmap_lookup(ts->pm, addr);
	if (!s)
		return false;
	r->name = s->name;
	r->module = module;
	r->start = s->start;
	r->kind = PROFILE_KIND_JIT;
	if (s->size && s->start + s->size > s->start) {
		r->lo = s->start;
		r->hi = s->start + s->size;
	}
	return true;
}

static bool elf_lookup(struct tsym *ts, const struct procmaps_entry *m, size_t idx, uint64_t addr,
		       struct sym_result *r)
{
	struct elf_entry *e = mapping_elf(ts, idx, m);
	const struct symtab_sym *s = NULL;
	uint64_t vaddr;

	if (e == &elf_none || e->failed)
		return false;
	/* The debug file's program headers are the file's: one vaddr for both. Its names win,
	 * unless the file's own symbol is the closer one: the PLT entries are named from the
	 * file's relocations, which a debug file does not keep. */
	vaddr = elfsym_vaddr(&e->es, addr - m->start + m->offset);
	s = symtab_lookup(e->es.syms, vaddr);
	if (debug_trusted(ts, e)) {
		const struct symtab_sym *d = symtab_lookup(e->dbg.syms, vaddr);

		if (d && (!s || d->start >= s->start))
			s = d;
	}
	r->module = e->module;
	if (!s)
		return false;
	r->name = s->name;
	r->start = s->start;
	r->kind = PROFILE_KIND_NATIVE;
	if (s->size && vaddr - s->start < s->size) {
		r->lo = addr - (vaddr - s->start);
		r->hi = r->lo + s->size;
	}
	if (s->name[0] == '_' && s->name[1] == 'Z') {
		int status = 0;
		char *d = __cxa_demangle(s->name, NULL, NULL, &status);

		if (d && status == 0) {
			free(ts->demangled);
			ts->demangled = d;
			r->name = d;
		} else {
			free(d);
		}
	}
	return true;
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

static bool vdso_lookup(struct symbolizer *sz, const struct procmaps_entry *m, uint64_t addr,
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

/* Code no symbol covers is named after its mapping, one name in every view and export (the
 * "[libc.so.6]" of flame graph tools): "[libc.so.6]" and kind native for a file, "[vdso]" for
 * the kernel's, "[anon]" (anonymous memory) or "[memfd:NAME]" and kind unknown for what a
 * process wrote itself (JIT code without a perf map). */
static void name_by_mapping(const struct procmaps_entry *m, struct sym_result *r)
{
	const char *base = m->path[0] ? base_name(m->path) : "[anon]";

	r->module = base;
	if (base[0] == '[') {
		r->name = base;
		r->kind = strcmp(base, "[vdso]") ? PROFILE_KIND_UNKNOWN : PROFILE_KIND_NATIVE;
		return;
	}
	snprintf(r->buf, sizeof(r->buf), "[%s]", base);
	r->name = r->buf;
	/* A memfd holds what its process put there (JIT code, most often): not native code. */
	r->kind = strncmp(base, "memfd:", 6) ? PROFILE_KIND_NATIVE : PROFILE_KIND_UNKNOWN;
}

void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r)
{
	const struct procmaps_entry *m;
	size_t idx = 0;

	*r = (struct sym_result){
	    .name = "[unknown]", .module = "[unknown]", .kind = PROFILE_KIND_UNKNOWN};
	if (kernel) {
		const struct symtab_sym *s;

		if (!ts->sz->kallsyms_tried)
			kallsyms_load(ts->sz);
		r->module = "[kernel.kallsyms]";
		s = ts->sz->kallsyms ? symtab_lookup(ts->sz->kallsyms, addr) : NULL;
		if (s) {
			r->name = s->name;
			r->start = s->start;
			r->kind = PROFILE_KIND_KERNEL;
		}
		return;
	}
	if (jit_lookup(ts, addr, r))
		return;
	m = find_mapping(ts, addr, &idx);
	if (m && m->path[0] == '/' && elf_lookup(ts, m, idx, addr, r))
		return;
	if (m && vdso_lookup(ts->sz, m, addr, r))
		return;
	/* Not found: maybe the JIT wrote the symbol since the last read. */
	if (!ts->gone && now_ns(CLOCK_MONOTONIC) - ts->pm_refreshed_ns > PERFMAP_REFRESH_MIN_NS) {
		tsym_refresh(ts);
		if (jit_lookup(ts, addr, r))
			return;
	}
	if (m && !strcmp(r->name, "[unknown]"))
		name_by_mapping(m, r);
}

/* ---- mappings, for exports ---- */

/* The executable file mappings as last read, with what their ELF files said (build id,
 * program headers), for a target's mapping table (maptab.h). Only what is loaded already: no
 * file is opened here. */
int tsym_foreach_mapping(const struct tsym *ts, tsym_mapping_fn fn, void *userdata)
{
	for (size_t i = 0; ts->maps && i < procmaps_count(ts->maps); i++) {
		const struct procmaps_entry *m = procmaps_at(ts->maps, i);
		const struct elf_entry *e = ts->map_elf[i];
		struct tsym_mapping tm = {
		    .start = m->start, .end = m->end, .offset = m->offset, .path = m->path};
		int r;

		if (!procmaps_is_exec(m) || m->path[0] != '/')
			continue;
		if (e && e != &elf_none && !e->failed) {
			elfsym_build_id_hex(&e->es, tm.build_id, sizeof(tm.build_id));
			tm.has_vaddr = e->es.nloads > 0;
			tm.vaddr = elfsym_vaddr(&e->es, m->offset);
		}
		r = fn(&tm, userdata);
		if (r)
			return r;
	}
	return 0;
}

/* The source of the JIT function starting at start, when its jitdump said it. */
bool tsym_jit_source(const struct tsym *ts, uint64_t start, const char **file, uint32_t *line)
{
	return ts->jf && jitfile_source(ts->jf, start, file, line);
}
