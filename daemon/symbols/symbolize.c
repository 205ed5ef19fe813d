// SPDX-License-Identifier: GPL-2.0-only
/* symbolize.c: turn sampled addresses into (function, module) names. This file follows each
 * target (struct tsym): its maps, and one state per symbol source of the table in sources.c,
 * which it walks to read and to resolve; it names no source. The sources all targets share
 * (struct symbolizer: the ELF cache, debug files, kallsyms, the vdso) are symbolize_elf.c's, the
 * structures of both in symbolize_internal.h. The design of the whole:
 *
 * Per target (struct tsym): the executable mappings of /proc/PID/maps, re-read when an address
 * falls outside all of them (at most every 100 ms); and what each source keeps of it (a JIT's
 * perf map, perfmapfile.c; its jitdump, jitfile.c; a HotSpot JVM asked for its perf map,
 * jvmmap.c), read incrementally while the files grow, in bounded steps (ARCHITECTURE.md §2.2,
 * "Reading in steps").
 * Shared by all targets (struct symbolizer): ELF symbol tables keyed by (device, inode, mtime),
 * reference counted by the mappings that use them (an unused one is kept only if root's), read
 * with pread from the very file mapped (its device and inode checked against /proc/PID/maps),
 * and the kernel's /proc/kallsyms (or standard input, where systemd opened that file for the
 * hardened unit, which cannot open it). Symbol memory is charged to the target's uid in a budget
 * (a total and a per-uid limit); what does not fit stays unnamed and is counted.
 * Host-wide names (symbolize_elf.c, strpool.h): the name of an ELF or kernel symbol (demangled)
 * is interned once for all targets at its first lookup and kept per symbol of the shared table,
 * as are a file's module and "[module]"; a hit hands them out (sym_result.shared) and profiles
 * keep the pointers (profile_intern_shared) instead of copies, so a frame of libc another
 * process named costs a table search and no string work. They are keyed by the file kprofd
 * read (device, inode, mtime and ctime, never a path a target chose), are never freed before
 * the symbolizer (after every profile), and are capped (SHARED_NAMES_BYTES; past it names are
 * copied as before). JIT names (perf maps, jitdumps) stay per target and are always copied.
 * The ELF files of a target's executable mappings are read when its maps are (at attach, exec
 * and re-reads), not when a sample needs them, and its /proc/PID/root is kept open from then:
 * samples are read in batches, often after a short process has exited, when map_files and root
 * are gone with it. A stripped file's local names come from its separate debug file, found by
 * build id or .gnu_debuglink inside the target's root (through tfile.c, its build id or CRC32
 * checked). The vdso is named from kprofd's own, the same image in every process.
 * Resolution walks the table in its order (sources.c): a kernel address the kernel's symbols;
 * a user address first the ELF file of its mapping, whose symbol names it if it covers it, then
 * the JIT's jitdump and perf map (JIT code: a JIT that writes both, V8 with --perf-prof and
 * --perf-basic-prof, describes the same code in both, and the jitdump is the exact one: binary
 * names, sizes, moves), then the vdso; an ELF symbol that does not cover the address (the
 * nearest below it) stands if no JIT source names it. Nothing found: the sources' files are read
 * again (at most every 50 ms: the JIT may have written the symbol since; for code of an ELF file
 * whose symbols were read, only once a JIT source named something in the target, else the
 * housekeeping's refresh finds the first perf map), else a name made up from the mapping.
 * Parsing is done by the pure perfmap, jitdump, procmaps, symtab and elfsym modules; the sources
 * only do the I/O around them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kprof/budget.h"
#include "kprof/cleanup.h"
#include "kprof/ehframe.h"
#include "kprof/elfsym.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "os/clock.h"
#include "os/log.h"
#include "os/procfs.h"
#include "os/tfile.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"
#include "symbols/symbolize_internal.h"

/* Every source of the table, in its order: s the source, i its index (its state's in ts). */
#define for_each_source(i, s) for (size_t i = 0; ((s) = sym_sources[i]); i++)

/* ---- per-target maps ---- */

static void maps_drop(struct tsym *ts)
{
	if (!ts->c.maps)
		return;
	for (size_t i = 0; i < procmaps_count(ts->c.maps); i++)
		symbolize_elf_put(ts->sz, ts->map_elf[i]);
	free(ts->map_elf);
	procmaps_free(ts->c.maps);
	ts->map_elf = NULL;
	ts->c.maps = NULL;
}

static void maps_open_elf(struct tsym *ts);
static void maps_carry(struct tsym *ts, const struct procmaps *pm, struct elf_entry **map_elf);

/* Read the maps again; reload: for a sample (find_mapping), not at the start or an exec. */
static int maps_load(struct tsym *ts, bool reload)
{
	_cleanup_free_ char *buf = NULL;
	struct elf_entry **map_elf;
	struct procmaps *pm = NULL;
	uint64_t t = now_ns(CLOCK_MONOTONIC);
	char exe[64];
	struct stat st;
	bool known;
	ssize_t n;
	int err;

	/* Tried: not again for 100 ms. Loaded only when read: maps kept from before an exit
	 * (the read finds none) are not fresh, or a JIT's code mapped since would be junk. */
	ts->maps_tried_ns = t;
	/* The process exec'd since the maps kept, and its exec record is not handled yet: the
	 * samples resolved meanwhile were taken before it (a drain's, or kept for a run), and the
	 * new program's maps would make their addresses junk. The exec's handling reads them
	 * (tsym_exec). */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)ts->c.pid);
	known = stat(exe, &st) == 0;
	if (reload && known && ts->exe_known &&
	    (st.st_dev != ts->exe_dev || st.st_ino != ts->exe_ino)) {
		/* Unless no exec record came for EXEC_WAIT_NS (lost to a full ring buffer): the
		 * new program's maps then, as before. */
		if (!ts->exe_refused_ns)
			ts->exe_refused_ns = t;
		if (t - ts->exe_refused_ns < EXEC_WAIT_NS)
			return -ESTALE;
	}
	n = procfs_read(ts->c.pid, "maps", &buf, MAPS_MAX_BYTES);
	if (n < 0)
		return n;
	/* Empty maps: the process has exited (a zombie has no memory left). What it mapped while
	 * it ran still names the samples read after its exit. */
	if (n == 0)
		return -ESRCH;
	ts->maps_reread += reload;
	err = procmaps_parse(buf, n, MAPS_MAX_ENTRIES, &pm);
	if (err < 0)
		return err;
	/* Read again for an address no mapping held (a junk frame, most often) and nothing
	 * changed: the names stand, and so do the caches built on them (no new generation). */
	if (reload && procmaps_same(ts->c.maps, pm) && known == ts->exe_known &&
	    (!known || (st.st_dev == ts->exe_dev && st.st_ino == ts->exe_ino))) {
		procmaps_free(pm);
		ts->maps_loaded_ns = t;
		ts->exe_refused_ns = 0;
		ts->maps_same++;
		return 0;
	}
	map_elf = calloc(procmaps_count(pm) ? procmaps_count(pm) : 1, sizeof(*map_elf));
	if (!map_elf) {
		procmaps_free(pm);
		return -ENOMEM;
	}
	maps_carry(ts, pm, map_elf);
	maps_drop(ts);
	ts->map_elf = map_elf;
	ts->c.maps = pm;
	ts->maps_loaded_ns = t;
	ts->exe_known = known;
	ts->exe_refused_ns = 0;
	ts->exe_dev = known ? st.st_dev : 0;
	ts->exe_ino = known ? st.st_ino : 0;
	ts->c.maps_gen++;
	ts->gen++;
	symbolize_root_update(ts);
	maps_open_elf(ts);
	return 0;
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
	for (size_t i = 0; ts->c.maps && i < procmaps_count(pm); i++) {
		const struct procmaps_entry *m = procmaps_at(pm, i);
		const struct procmaps_entry *o = procmaps_find(ts->c.maps, m->start);
		struct elf_entry *e = o ? ts->map_elf[o - procmaps_at(ts->c.maps, 0)] : NULL;

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

	for (size_t i = 0; i < procmaps_count(ts->c.maps) && opened < MAPS_OPEN_MAX; i++) {
		const struct procmaps_entry *m = procmaps_at(ts->c.maps, i);

		if (ts->map_elf[i] || !procmaps_is_exec(m) || m->path[0] != '/' || !m->inode)
			continue;
		symbolize_mapping_elf(ts, i, m);
		opened++;
	}
}

/* ---- per-target sources ---- */

static int read_nspid(pid_t pid, pid_t *nspid, uint64_t *start_realtime_ns, uint64_t *start_ticks)
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
		*start_ticks = pt.start_ticks;
	}
	return 0;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* One step of reading, at most bytes and cpu ns, charged to the allowances; its CPU time. */
static uint64_t refresh_step(struct tsym *ts, uint64_t bytes, uint64_t cpu)
{
	struct tfile_step step = {.bytes = bytes};
	const struct sym_source *s;
	bool changed = false;
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

	step.cpu_end_ns = cpu0 + cpu;
	for_each_source(i, s)
		if (s->refresh && s->refresh(&ts->c, ts->state[i], &step) > 0)
			changed = true;
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	allowance_spend(&ts->read_bytes, step.read);
	allowance_spend(&ts->read_cpu, cpu);
	allowance_spend(&ts->sz->read_cpu, cpu);
	ts->read_total += step.read;
	ts->read_deferred += step.cut;
	ts->behind = step.cut;
	if (changed)
		ts->gen++;
	return cpu;
}

void tsym_refresh(struct tsym *ts)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), cpu;
	uint64_t bytes = READ_STEP_BYTES < allowance_avail(&ts->read_bytes, now)
			     ? READ_STEP_BYTES
			     : allowance_avail(&ts->read_bytes, now);

	ts->refreshed_ns = now;
	cpu = min3(READ_STEP_CPU_NS, allowance_avail(&ts->read_cpu, now),
		   allowance_avail(&ts->sz->read_cpu, now));
	if (!bytes || !cpu) {
		ts->read_deferred++; /* the next refresh with an allowance goes on */
		ts->behind = true;
		return;
	}
	refresh_step(ts, bytes, cpu);
}

void tsym_refresh_asked(struct tsym *ts)
{
	uint64_t spent = 0, steps = 0;

	ts->refreshed_ns = now_ns(CLOCK_MONOTONIC);
	do
		spent += refresh_step(ts, READ_STEP_BYTES, READ_STEP_CPU_NS);
	while (ts->behind && ++steps < READ_ASKED_BYTES / READ_STEP_BYTES &&
	       spent < READ_ASKED_CPU_NS);
}

/* What a source that makes its runtime write names (jvmmap.c) asks of the target. */
static void ctx_refresh(struct sym_ctx *c)
{
	tsym_refresh(tsym_of(c));
}

/* tsym_get_stats' jit_symbols, without the rest of the statistics. */
static uint64_t ctx_jit_symbols(struct sym_ctx *c)
{
	struct tsym *ts = tsym_of(c);
	const struct sym_source *s;
	uint64_t n = 0;

	for_each_source(i, s)
		if (s->jit_symbols)
			n += s->jit_symbols(ts->state[i]);
	return n;
}

static void lookups_put(struct tsym_lookups *l, const struct sym_source *s, void *state)
{
	l->v[l->n].fn = s->lookup;
	l->v[l->n++].state = state;
}

/* The lists of lookups a resolve walks: source s, whose state is state, in those it is for. */
static void lookups_add(struct tsym *ts, const struct sym_source *s, void *state)
{
	if (!s->lookup)
		return;
	if (s->space == SYM_SPACE_KERNEL) {
		lookups_put(&ts->kernel, s, state);
		return;
	}
	lookups_put(&ts->file, s, state);
	if (s->space != SYM_SPACE_USER)
		return;
	lookups_put(&ts->anon, s, state);
	if (s->refresh)
		lookups_put(&ts->again, s, state);
}

int tsym_new(struct symbolizer *sz, pid_t pid, uid_t uid, uid_t euid, uint64_t perfmap_max_bytes,
	     struct tsym **ret)
{
	struct tsym *ts = calloc(1, sizeof(*ts));
	const struct sym_source *s;
	int err;

	if (!ts)
		return -ENOMEM;
	ts->sz = sz;
	ts->serial = ++sz->tsym_serial;
	ts->c = (struct sym_ctx){.pid = pid,
				 .uid = uid,
				 .euid = euid,
				 .max_bytes = perfmap_max_bytes,
				 .budget = sz->budget,
				 .root = -1,
				 .refresh = ctx_refresh,
				 .jit_symbols = ctx_jit_symbols};
	err = read_nspid(pid, &ts->c.nspid, &ts->c.start_realtime_ns, &ts->c.start_ticks);
	if (err < 0)
		goto fail;
	err = maps_load(ts, false);
	if (err < 0)
		goto fail;
	allowance_init(&ts->read_bytes, READ_RATE_BYTES, READ_RATE_BYTES, now_ns(CLOCK_MONOTONIC));
	allowance_init(&ts->read_cpu, READ_RATE_CPU_NS, READ_RATE_CPU_NS, now_ns(CLOCK_MONOTONIC));
	for_each_source(i, s) {
		err = s->open ? s->open(&ts->c, &ts->state[i]) : 0;
		if (err < 0)
			goto fail;
		lookups_add(ts, s, ts->state[i]);
	}
	tsym_refresh(ts);
	*ret = ts;
	return 0;
fail:
	tsym_free(ts);
	return err;
}

void tsym_free(struct tsym *ts)
{
	const struct sym_source *s;

	if (!ts)
		return;
	for_each_source(i, s)
		if (s->free)
			s->free(&ts->c, ts->state[i]);
	maps_drop(ts);
	free(ts->demangled);
	if (ts->c.root >= 0)
		close(ts->c.root);
	free(ts);
}

void tsym_sample_time(struct tsym *ts, uint64_t taken_ns)
{
	if (ts)
		ts->taken_ns = taken_ns;
}

void tsym_set_reader(struct tsym *ts, uid_t uid)
{
	if (ts)
		ts->reader = uid;
}

bool tsym_behind(const struct tsym *ts)
{
	return ts->behind && !ts->c.done;
}

uint64_t tsym_generation(const struct tsym *ts)
{
	return ts->gen;
}

uint64_t tsym_maps_read_ns(const struct tsym *ts)
{
	return ts->maps_loaded_ns;
}

void tsym_start(struct tsym *ts, const struct tsym_start *o)
{
	const struct sym_source *s;

	for_each_source(i, s)
		if (s->start)
			s->start(&ts->c, ts->state[i], o);
}

void tsym_tick(struct tsym *ts, uint64_t now)
{
	const struct sym_source *s;

	for_each_source(i, s)
		if (s->tick)
			s->tick(&ts->c, ts->state[i], now);
}

void tsym_exec(struct tsym *ts)
{
	const struct sym_source *s;
	uint64_t dummy, ticks;

	maps_drop(ts);
	read_nspid(ts->c.pid, &ts->c.nspid, &dummy, &ticks);
	for_each_source(i, s)
		if (s->exec)
			s->exec(&ts->c, ts->state[i]);
	maps_load(ts, false);
	tsym_refresh(ts);
	ts->gen++;
}

/* The last reads after an exit: the steps the target's allowance has left (16 MiB and 100 ms of
 * CPU at most), the jitdump through its fd kept open (V8 writes its last records at exit). */
#define GONE_STEPS 4

void tsym_gone(struct tsym *ts)
{
	if (ts->c.gone)
		return;
	ts->c.exiting = true;
	for (int i = 0; i < GONE_STEPS; i++) {
		tsym_refresh(ts); /* last chance for symbols written just before the exit */
		if (!ts->behind)
			break;
	}
	ts->c.exiting = false;
	ts->c.gone = true;
}

void tsym_resume(struct tsym *ts)
{
	ts->c.gone = ts->c.done = false;
	symbolize_root_update(ts);
}

void tsym_done(struct tsym *ts)
{
	const struct sym_source *s;

	ts->c.gone = true;
	ts->c.done = true;
	for_each_source(i, s)
		if (s->done)
			s->done(&ts->c, ts->state[i]);
	if (ts->c.root >= 0)
		close(ts->c.root);
	ts->c.root = -1;
}

int tsym_foreach_jit(const struct tsym *ts, int (*fn)(const struct perfmap_sym *, void *),
		     void *userdata)
{
	const struct sym_source *s;
	int r;

	for_each_source(i, s) {
		r = s->each ? s->each(ts->state[i], fn, userdata) : 0;
		if (r)
			return r;
	}
	return 0;
}

size_t tsym_anon_exec(struct tsym *ts)
{
	size_t n = 0;

	if (!ts->c.maps)
		return 0;
	/* Counted once for each read of the maps (every target's note asks each second). */
	if (ts->anon_exec_gen == ts->c.maps_gen + 1)
		return ts->anon_exec_n;
	for (size_t i = 0; i < procmaps_count(ts->c.maps); i++) {
		const struct procmaps_entry *m = procmaps_at(ts->c.maps, i);

		if (procmaps_is_exec(m) && procmaps_is_anon(m))
			n++;
	}
	ts->anon_exec_gen = ts->c.maps_gen + 1;
	ts->anon_exec_n = n;
	return n;
}

const struct tsym_stats *tsym_get_stats(struct tsym *ts)
{
	struct tsym_stats *st = &ts->st;
	const struct sym_source *s;

	memset(st, 0, sizeof(*st));
	st->refused = ts->refused;
	for_each_source(i, s)
		if (s->stats)
			s->stats(ts->state[i], st);
	st->symbol_read_bytes = ts->read_total;
	st->symbol_read_deferred = ts->read_deferred;
	st->maps_reread = ts->maps_reread;
	st->maps_same = ts->maps_same;
	return st;
}

/* ---- resolution ---- */

/* The mapping of addr. The maps are read again (at most every 100 ms, while the process lives)
 * when addr is in none of them or in one that was not executable: code may have been mapped or
 * made executable since (V8 commits its code space inside a reserved "---p" region). The clock
 * is read only then: a sample's hot path finds its code mapped. */
static const struct procmaps_entry *find_mapping(struct tsym *ts, uint64_t addr, size_t *idx)
{
	const struct procmaps_entry *m = ts->c.maps ? procmaps_find(ts->c.maps, addr) : NULL;

	/* Maps read again only while the reader may read the process, checked before and after
	 * (an exec not yet reported may have replaced it by a program the reader cannot read:
	 * its names are not read for it). */
	if ((!m || !procmaps_is_exec(m)) && !ts->c.gone &&
	    now_ns(CLOCK_MONOTONIC) - ts->maps_tried_ns > MAPS_RELOAD_NS) {
		if (!procfs_may_read(ts->c.pid, ts->reader))
			ts->maps_tried_ns = now_ns(CLOCK_MONOTONIC); /* a try: see maps_retry */
		else if (maps_load(ts, true) == 0) {
			if (!procfs_may_read(ts->c.pid, ts->reader)) {
				maps_drop(ts);
				return NULL;
			}
			m = procmaps_find(ts->c.maps, addr);
		}
	}
	if (m)
		*idx = m - procmaps_at(ts->c.maps, 0);
	return m;
}

/* The maps were read while the process lived, within the last 100 ms and after the sample was
 * taken (tsym_sample_time): what they say of an address holds for the sample. Maps read just
 * before it may lack code the JIT mapped in between (a JVM's code cache): not fresh, so its
 * address is kept to be named, not called junk. */
static bool maps_fresh(const struct tsym *ts)
{
	return !ts->c.gone && ts->c.maps && ts->maps_loaded_ns >= ts->taken_ns &&
	       now_ns(CLOCK_MONOTONIC) - ts->maps_loaded_ns <= MAPS_RELOAD_NS;
}

/* Maps not fresh may still be read for the sample: not when the process is gone, nor when a
 * read was tried since the sample and failed (not readable by the reader any more, an exec
 * not handled yet, an exit: what ends those reads the maps, or names at the end). Otherwise
 * the caller looks again (tsym_resolve's maps_stale), at most once per try. */
static bool maps_retry(const struct tsym *ts)
{
	return !ts->c.gone &&
	       !(ts->maps_tried_ns >= ts->taken_ns && ts->maps_loaded_ns < ts->maps_tried_ns);
}

/* Ask the sources of l in the table's order: the first hit names the address, a near one
 * stands unless a later source hits. Inlined into tsym_resolve: a sample's hot path. */
static inline __attribute__((always_inline)) enum sym_hit
walk(struct tsym *ts, const struct tsym_lookups *l, const struct sym_where *w, struct sym_result *r)
{
	enum sym_hit best = SYM_MISS, h;

	for (size_t i = 0; i < l->n; i++) {
		h = l->v[i].fn(&ts->c, l->v[i].state, w, r);
		if (h == SYM_HIT)
			return h;
		if (h == SYM_NEAR)
			best = h;
	}
	return best;
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

	if (!procmaps_is_exec(m)) { /* data: "[unknown]", not the file's (a junk frame) */
		r->name = r->module = "[unknown]";
		return;
	}
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

#define FRAME_MAX_CFA (1u << 20) /* a larger frame is taken for a rule misread */

void tsym_frame_rule(struct tsym *ts, uint64_t addr, bool ret, struct tsym_frame_rule *r)
{
	uint64_t pc = ret ? addr - 1 : addr;
	const struct procmaps_entry *m;
	struct ehframe_rule er;
	struct elf_entry *e;
	struct stat st;
	size_t idx = 0;

	memset(r, 0, sizeof(*r));
	m = find_mapping(ts, pc, &idx);
	if (!m || !procmaps_is_exec(m))
		return;
	e = symbolize_mapping_elf(ts, idx, m);
	if (e == &symbolize_elf_none || e->failed)
		return;
	if (!e->eh_state) {
		_cleanup_close_ int fd = tsym_open_mapped(ts, m, &st);

		if (fd < 0)
			return; /* tried again at the next rule asked */
		symbolize_elf_eh(ts, e, fd);
	}
	if (e->eh_state < 0 ||
	    ehframe_rule_at(e->eh, e->eh_len, e->eh_addr,
			    elfsym_vaddr(&e->es, pc - m->start + m->offset), &er) < 0)
		return;
	r->rbp_saved = er.rbp_saved;
	if (er.rbp_saved && er.rbp_off < 0 && er.rbp_off > -(int64_t)FRAME_MAX_CFA)
		r->rbp_off = (uint32_t)-er.rbp_off;
	if (er.cfa == EHFRAME_CFA_FP)
		r->kind = TSYM_FRAME_FP;
	else if (er.cfa == EHFRAME_CFA_SP && er.ra_off == -8 && er.cfa_off >= 8 &&
		 er.cfa_off < FRAME_MAX_CFA && !er.signal) {
		r->kind = TSYM_FRAME_SP;
		r->cfa = (uint32_t)er.cfa_off;
	}
}

void tsym_resolve(struct tsym *ts, uint64_t addr, bool kernel, struct sym_result *r)
{
	struct sym_where w = {.addr = addr};
	struct elf_entry *e;
	bool file_data;
	enum sym_hit h;

	/* Field by field: the name buffer (272 bytes) is written only when a name is made up. */
	r->name = r->module = "[unknown]";
	r->start = r->lo = r->hi = 0;
	r->kind = PROFILE_KIND_UNKNOWN;
	r->jit_memory = r->shared = r->maps_stale = false;
	if (kernel) {
		walk(ts, &ts->kernel, &w, r);
		return;
	}
	/* One rule, whatever was read first: inside a file mapping, an ELF symbol that covers the
	 * address names it (perf's choice: V8's embedded builtins are both in node's .text and in
	 * its perf map, as Builtins_X and Builtin:X); then the JIT's files; then the ELF file's
	 * nearest symbol (the table's order and SYM_NEAR, sources.c). */
	w.m = find_mapping(ts, addr, &w.idx);
	/* A file's symbols name its code only: in its data (not executable) an address is junk
	 * or code mapped since the maps were read (the rule at the end), never the function the
	 * file holds at that offset. */
	file_data = w.m && w.m->path[0] == '/' && !procmaps_is_exec(w.m);
	h = walk(ts, w.m && w.m->path[0] == '/' && !file_data ? &ts->file : &ts->anon, &w, r);
	if (h != SYM_MISS)
		return;
	/* Not found: maybe the JIT wrote the symbol since the last read. Not asked again for code
	 * of an ELF file whose symbols were read, in a target no JIT source named anything of
	 * yet: the housekeeping's refresh (every second) finds its first perf map or jitdump. */
	e = w.m ? ts->map_elf[w.idx] : NULL;
	if (e == &symbolize_elf_none || (e && e->failed))
		e = NULL;
	/* A file's data (junk, or code mapped since: the maps' re-read) is no JIT's either. */
	if (!ts->c.gone && now_ns(CLOCK_MONOTONIC) - ts->refreshed_ns > PERFMAP_REFRESH_MIN_NS &&
	    (!(e || file_data) || ctx_jit_symbols(&ts->c))) {
		tsym_refresh(ts);
		h = walk(ts, &ts->again, &w, r);
		if (h == SYM_HIT)
			return;
	}
	if (w.m && h == SYM_MISS) { /* r->name is still "[unknown]" */
		name_by_mapping(w.m, r);
		/* The file's own "[libc.so.6]", the host-wide one, when the path names it so. */
		if (e && e->shared_bracket && r->kind == PROFILE_KIND_NATIVE &&
		    !strcmp(r->module, e->module)) {
			r->name = e->shared_bracket;
			r->module = e->shared_module;
			r->shared = true;
		}
	}
	/* Where maps read after the sample show nothing executable, the address is junk (a frame
	 * pointer that was none): "[unknown]", never named. Maps read before it (the process is
	 * gone, or they were read just before it: at its exec's handling, while the new program
	 * was still loading) may miss code mapped or made executable since, also over what was
	 * then a file's data or a loader's reservation: anonymous memory, memory not executable
	 * or no mapping is then kept by address, to be named once the maps are read again or by
	 * what the JIT's files say at its exit. Outside user space (non-canonical) or in the
	 * first 64 KiB, always junk. */
	if (!r->jit_memory && r->kind == PROFILE_KIND_UNKNOWN && addr >= 0x10000 &&
	    addr < 0x800000000000ULL && (!w.m || !procmaps_is_exec(w.m) || procmaps_is_anon(w.m)) &&
	    !maps_fresh(ts)) {
		r->jit_memory = true;
		r->maps_stale = maps_retry(ts);
		if (w.m && procmaps_is_anon(w.m))
			r->name = r->module = "[anon]";
	}
}

bool tsym_file_code(const struct tsym *ts, uint64_t start, size_t len, struct tsym_file_span *f)
{
	const struct procmaps_entry *m =
	    ts->c.maps && len ? procmaps_find(ts->c.maps, start) : NULL;

	/* A file's code as the file holds it: mapped from a path, not writable, not memory
	 * only the process fills (a memfd, shared anonymous memory) */
	if (!m || m->path[0] != '/' || !m->inode || m->perms[1] == 'w' || procmaps_is_anon(m) ||
	    len > m->end - start)
		return false;
	*f = (struct tsym_file_span){.dev = (uint64_t)m->dev_major << 32 | m->dev_minor,
				     .ino = m->inode,
				     .off = m->offset + (start - m->start)};
	return true;
}

/* ---- mappings, for exports ---- */

/* The executable file mappings as last read, with what their ELF files said (build id,
 * program headers), for a target's mapping table (maptab.h). Only what is loaded already: no
 * file is opened here. */
int tsym_foreach_mapping(const struct tsym *ts, tsym_mapping_fn fn, void *userdata)
{
	for (size_t i = 0; ts->c.maps && i < procmaps_count(ts->c.maps); i++) {
		const struct procmaps_entry *m = procmaps_at(ts->c.maps, i);
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
	const struct sym_source *s;

	for_each_source(i, s)
		if (s->addr_line && s->addr_line(ts->state[i], addr, file, line))
			return true;
	return false;
}

const struct elf_entry *tsym_elf_at(struct tsym *ts, uint64_t addr, const struct procmaps_entry **m)
{
	const struct elf_entry *e;

	*m = ts->c.maps ? procmaps_find(ts->c.maps, addr) : NULL;
	if (!*m)
		return NULL;
	e = symbolize_mapping_elf(ts, *m - procmaps_at(ts->c.maps, 0), *m);
	return e == &symbolize_elf_none || e->failed ? NULL : e;
}

/* The source of the JIT function starting at start, when a source said it. */
bool tsym_jit_source(const struct tsym *ts, uint64_t start, const char **file, uint32_t *line)
{
	const struct sym_source *s;

	for_each_source(i, s)
		if (s->line && s->line(ts->state[i], start, file, line))
			return true;
	return false;
}
