// SPDX-License-Identifier: GPL-2.0-only
/* symbolize.c: turn sampled addresses into (function, module) names. This file follows each
 * target (struct tsym) and resolves; the sources all targets share (struct symbolizer: the ELF
 * cache, debug files, kallsyms, the vdso) are symbolize_elf.c's, the structures of both in
 * symbolize_internal.h. The design of the whole:
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
#include "os/clock.h"
#include "symbols/symbolize.h"
#include "symbols/jitfile.h"
#include "os/log.h"
#include "os/procfs.h"
#include "os/tfile.h"
#include "symbols/symbolize_internal.h"

/* The C++ ABI's demangler (libstdc++): C++ symbols (node, the JVM, ...) are shown readable. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* ---- per-target maps ---- */

static void maps_drop(struct tsym *ts)
{
	if (!ts->maps)
		return;
	for (size_t i = 0; i < procmaps_count(ts->maps); i++)
		symbolize_elf_put(ts->sz, ts->map_elf[i]);
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
	symbolize_root_update(ts);
	maps_open_elf(ts);
	return 0;
}

int tsym_open_mapped(struct tsym *ts, const struct procmaps_entry *m, struct stat *st)
{
	const struct tfile_want want = {
	    .check_id = true, .dev = makedev(m->dev_major, m->dev_minor), .ino = m->inode};
	char path[96], why[128] = "";
	int fd;

	if (m->path[0] != '/' || !m->inode)
		return -ENOENT;
	/* map_files reaches the very file mapped, even deleted or in another mount namespace. */
	procmaps_file_path(path, sizeof(path), ts->pid, m->start, m->end);
	fd = tfile_open(AT_FDCWD, path, false, &want, st, why, sizeof(why));
	/* map_files needs CAP_SYS_ADMIN; without it, the same path inside the target's root,
	 * unless the file was deleted (then only map_files reaches it). The target controls
	 * what that path is in its mount namespace: tfile_open checks it is the file mapped. */
	if (fd < 0 && !strstr(m->path, " (deleted)")) {
		_cleanup_close_ int root = tsym_root_now(ts);

		if (root >= 0)
			fd = tfile_open(root, m->path, true, &want, st, why, sizeof(why));
		if (fd < 0 && fd != -ENOENT)
			log_debug("pid %d: %s not read: %s", ts->pid, m->path, why);
	}
	return fd;
}

static struct elf_entry *mapping_elf(struct tsym *ts, size_t idx, const struct procmaps_entry *m)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (ts->map_elf[idx])
		return ts->map_elf[idx];
	ts->map_elf[idx] = &symbolize_elf_none;
	if (m->path[0] != '/' || !m->inode || ts->gone)
		return &symbolize_elf_none;
	fd = tsym_open_mapped(ts, m, &st);
	if (fd < 0)
		return &symbolize_elf_none;
	ts->map_elf[idx] = symbolize_elf_get(ts, fd, &st, m->path);
	if (ts->map_elf[idx] != &symbolize_elf_none && !ts->map_elf[idx]->failed)
		symbolize_debug_attach(ts, ts->map_elf[idx], m->path);
	return ts->map_elf[idx];
}

const struct elf_entry *tsym_elf_at(struct tsym *ts, uint64_t addr,
				    const struct procmaps_entry **m)
{
	const struct elf_entry *e;

	*m = ts->maps ? procmaps_find(ts->maps, addr) : NULL;
	if (!*m)
		return NULL;
	e = mapping_elf(ts, *m - procmaps_at(ts->maps, 0), *m);
	return e == &symbolize_elf_none || e->failed ? NULL : e;
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
		if (e != &symbolize_elf_none)
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

/* Read what the perf map gained, as far as the step allows; whether its symbols changed. */
static bool perfmap_refresh(struct tsym *ts, struct tfile_step *step)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
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
	for (;;) {
		size_t req = tfile_step_take(step, sizeof(buf), false);
		ssize_t n;
		int r;

		if (!req)
			break;
		n = pread(fd, buf, req, ts->pm_track.off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tfile_step_done(step, (size_t)n);
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
		if ((size_t)n < req)
			break;
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

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

void tsym_refresh(struct tsym *ts)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), cpu0, cpu;
	struct tfile_step step = {.bytes = READ_STEP_BYTES < allowance_avail(&ts->read_bytes, now)
					       ? READ_STEP_BYTES
					       : allowance_avail(&ts->read_bytes, now)};
	bool changed;

	ts->pm_refreshed_ns = now;
	cpu = min3(READ_STEP_CPU_NS, allowance_avail(&ts->read_cpu, now),
		   allowance_avail(&ts->sz->read_cpu, now));
	if (!step.bytes || !cpu) {
		ts->read_deferred++; /* the next refresh with an allowance goes on */
		ts->behind = true;
		return;
	}
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	step.cpu_end_ns = cpu0 + cpu;
	changed = perfmap_refresh(ts, &step);
	/* Gone: its /proc/PID may be another process's already. */
	if (ts->jf && !ts->gone &&
	    jitfile_refresh(ts->jf, ts->exiting ? NULL : ts->maps, &step, ts->exiting) > 0)
		changed = true;
	/* The lookup indexes now, inside the step's measured CPU time, not at the next lookup
	 * (a sort of every symbol: a file of 350,000 code loads costs tens of ms each time). */
	if (changed) {
		perfmap_build_index(ts->pm);
		if (ts->jf)
			jitfile_index(ts->jf);
	}
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	allowance_spend(&ts->read_bytes, step.read);
	allowance_spend(&ts->read_cpu, cpu);
	allowance_spend(&ts->sz->read_cpu, cpu);
	ts->read_total += step.read;
	ts->read_deferred += step.cut;
	ts->behind = step.cut;
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
	allowance_init(&ts->read_bytes, READ_RATE_BYTES, READ_RATE_BYTES, now_ns(CLOCK_MONOTONIC));
	allowance_init(&ts->read_cpu, READ_RATE_CPU_NS, READ_RATE_CPU_NS, now_ns(CLOCK_MONOTONIC));
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

void tsym_set_reader(struct tsym *ts, uid_t uid)
{
	if (ts)
		ts->reader = uid;
}

bool tsym_behind(const struct tsym *ts)
{
	return ts->behind && !ts->done;
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

/* The last reads after an exit: the steps the target's allowance has left (16 MiB and 100 ms of
 * CPU at most), the jitdump through its fd kept open (V8 writes its last records at exit). */
#define GONE_STEPS 4

void tsym_gone(struct tsym *ts)
{
	if (ts->gone)
		return;
	ts->exiting = true;
	for (int i = 0; i < GONE_STEPS; i++) {
		tsym_refresh(ts); /* last chance for symbols written just before the exit */
		if (!ts->behind)
			break;
	}
	ts->exiting = false;
	ts->gone = true;
}

void tsym_resume(struct tsym *ts)
{
	ts->gone = ts->done = false;
	symbolize_root_update(ts);
}

void tsym_done(struct tsym *ts)
{
	ts->gone = true;
	ts->done = true;
	jitfile_close(ts->jf);
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

		if (procmaps_is_exec(m) && procmaps_is_anon(m))
			n++;
	}
	return n;
}

bool tsym_maps_any(const struct tsym *ts, bool (*pred)(const char *path))
{
	for (size_t i = 0; ts->maps && i < procmaps_count(ts->maps); i++)
		if (pred(procmaps_at(ts->maps, i)->path))
			return true;
	return false;
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
	st->symbol_read_bytes = ts->read_total;
	st->symbol_read_deferred = ts->read_deferred;
}

/* ---- resolution ---- */

/* The mapping of addr. The maps are read again (at most every 100 ms, while the process lives)
 * when addr is in none of them or in one that was not executable: code may have been mapped or
 * made executable since (V8 commits its code space inside a reserved "---p" region). *fresh:
 * the maps were read while the process lived, within the last 100 ms (after the sample was
 * taken, as samples are named when drained): what they say of addr holds for the sample. */
static const struct procmaps_entry *find_mapping(struct tsym *ts, uint64_t addr, size_t *idx,
						 bool *fresh)
{
	const struct procmaps_entry *m = ts->maps ? procmaps_find(ts->maps, addr) : NULL;
	uint64_t age = now_ns(CLOCK_MONOTONIC) - ts->maps_loaded_ns;

	/* Maps read again only while the reader may read the process, checked before and after
	 * (an exec not yet reported may have replaced it by a program the reader cannot read:
	 * its names are not read for it). */
	if ((!m || !procmaps_is_exec(m)) && !ts->gone && age > MAPS_RELOAD_NS &&
	    procfs_may_read(ts->pid, ts->reader) && maps_load(ts) == 0) {
		if (!procfs_may_read(ts->pid, ts->reader)) {
			maps_drop(ts);
			*fresh = false;
			return NULL;
		}
		m = procmaps_find(ts->maps, addr);
		age = 0;
	}
	*fresh = !ts->gone && ts->maps && age <= MAPS_RELOAD_NS;
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
		s = perfmap_lookup_frame(ts->pm, addr);
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

	if (e == &symbolize_elf_none || e->failed)
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

/* Code no symbol covers is named after its mapping, one name in every view and export (the
 * "[libc.so.6]" of flame graph tools): "[libc.so.6]" and kind native for a file, "[vdso]" for
 * the kernel's; anonymous memory (procmaps_is_anon: no path, "[anon_shmem]", "/dev/zero
 * (deleted)", System V shared memory, a memfd...) is what a process wrote itself, JIT code
 * without a perf map: "[anon]" (or "[memfd:NAME]") and kind unknown, kept by address to be
 * named later. Only executable memory: an address in data or in no mapping at all is a junk
 * frame pointer, "[unknown]" as perf shows it. */
static void name_by_mapping(const struct procmaps_entry *m, struct sym_result *r)
{
	const char *base;

	if (!procmaps_is_exec(m))
		return; /* "[unknown]" */
	if (procmaps_is_anon(m)) {
		base = strncmp(m->path, "/memfd:", 7) ? "[anon]" : symbolize_base_name(m->path);
		if (base[0] != '[') {
			snprintf(r->buf, sizeof(r->buf), "[%s]", base);
			base = r->buf;
		}
		r->name = r->module = base;
		r->kind = PROFILE_KIND_UNKNOWN;
		r->jit_memory = true;
		return;
	}
	base = m->path[0] ? symbolize_base_name(m->path) : "[anon]";
	r->module = base;
	if (base[0] == '[') {
		r->name = base;
		r->kind = strcmp(base, "[vdso]") ? PROFILE_KIND_UNKNOWN : PROFILE_KIND_NATIVE;
		return;
	}
	snprintf(r->buf, sizeof(r->buf), "[%s]", base);
	r->name = r->buf;
	r->kind = PROFILE_KIND_NATIVE;
}

void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r)
{
	const struct procmaps_entry *m;
	size_t idx = 0;
	bool elf, fresh;

	*r = (struct sym_result){
	    .name = "[unknown]", .module = "[unknown]", .kind = PROFILE_KIND_UNKNOWN};
	if (kernel) {
		const struct symtab_sym *s;

		if (!ts->sz->kallsyms_tried)
			symbolize_kallsyms_load(ts->sz);
		r->module = "[kernel.kallsyms]";
		s = ts->sz->kallsyms ? symtab_lookup(ts->sz->kallsyms, addr) : NULL;
		if (s) {
			r->name = s->name;
			r->start = s->start;
			r->kind = PROFILE_KIND_KERNEL;
		}
		return;
	}
	/* One rule, whatever was read first: inside a file mapping, an ELF symbol that covers the
	 * address names it (perf's choice: V8's embedded builtins are both in node's .text and in
	 * its perf map, as Builtins_X and Builtin:X); then the JIT's files; then the ELF file's
	 * nearest symbol. */
	m = find_mapping(ts, addr, &idx, &fresh);
	elf = m && m->path[0] == '/' && elf_lookup(ts, m, idx, addr, r);
	if (elf && r->hi > addr && r->lo <= addr)
		return;
	if (jit_lookup(ts, addr, r))
		return;
	if (elf)
		return;
	if (m && symbolize_vdso_lookup(ts->sz, m, addr, r))
		return;
	/* Not found: maybe the JIT wrote the symbol since the last read. */
	if (!ts->gone && now_ns(CLOCK_MONOTONIC) - ts->pm_refreshed_ns > PERFMAP_REFRESH_MIN_NS) {
		tsym_refresh(ts);
		if (jit_lookup(ts, addr, r))
			return;
	}
	if (m && !strcmp(r->name, "[unknown]"))
		name_by_mapping(m, r);
	/* Where maps read after the sample show nothing executable, the address is junk (a frame
	 * pointer that was none): "[unknown]", never named. Maps read before it (the process is
	 * gone) may miss code mapped or made executable since: anonymous memory or no mapping is
	 * then kept by address, to be named by what the JIT's files say at its exit. Outside user
	 * space (non-canonical) or in the first 64 KiB, always junk. */
	if (!r->jit_memory && r->kind == PROFILE_KIND_UNKNOWN && !fresh && addr >= 0x10000 &&
	    addr < 0x800000000000ULL && (!m || procmaps_is_anon(m))) {
		r->jit_memory = true;
		if (m)
			r->name = r->module = "[anon]";
	}
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
		if (e && e != &symbolize_elf_none && !e->failed) {
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

bool tsym_jit_line(struct tsym *ts, uint64_t addr, const char **file, uint32_t *line)
{
	return ts->jf && jitfile_line(ts->jf, addr, file, line);
}

/* The source of the JIT function starting at start, when its jitdump said it. */
bool tsym_jit_source(const struct tsym *ts, uint64_t start, const char **file, uint32_t *line)
{
	return ts->jf && jitfile_source(ts->jf, start, file, line);
}
