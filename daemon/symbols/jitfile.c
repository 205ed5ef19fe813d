// SPDX-License-Identifier: GPL-2.0-only
/* jitfile.c: a target's jitdump, perf's binary JIT file (jit-PID.dump), as a symbol source.
 *
 * Finding it, the way perf does. A JIT that writes a jitdump maps it (V8 maps its first page
 * read+exec, so that perf sees the mapping and `perf inject --jit` finds the file): the first
 * mapping of the target whose file is named jit-NSPID.dump (NSPID: the PID in the target's own
 * namespace, what the JIT puts in the name) is opened as /proc/PID/map_files/START-END, or by its
 * path inside the target's root with its device and inode checked against the mapping. Without
 * such a mapping: jit-NSPID.dump in the target's working directory (where `node --perf-prof`
 * writes it), then tmp/jit-NSPID.dump inside the target's root (never the host's /tmp). Every
 * candidate goes through tfile_open (no symbolic link, a regular file on an ordinary filesystem)
 * and must be owned by the target's real or effective uid and not be older than the process.
 * A candidate refused is logged once and named in the stats; the next one is tried.
 *
 * Reading it. The file found is kept open from one refresh to the next (V8 buffers its records
 * and writes the last ones at its exit, when /proc/PID/cwd and map_files are gone): after the
 * exit only that fd is read, to its end, never a path through /proc/PID (another process may
 * have the PID by then); it is closed when the target's symbols are done. Like the perf map,
 * while it grows: struct tfile_track keeps the offset reached and
 * tells when the file was replaced, shrunk or rewritten (read from scratch, its symbols dropped).
 * The bytes go to the pure parser (daemon/lib/jitdump.c) in chunks; a record torn at the end of
 * the file waits for its bytes, one larger than the chunk gets a buffer its size (at most the
 * parser's 16 MiB record cap, and only once the file holds it all). At most max_bytes of a file
 * are read (perfmap_max_mb); a refresh reads what its step allows (struct tfile_step: bytes and
 * CPU time, set by symbolize.c from the target's allowance) and the next one goes on from
 * there, a record cut by the step is read whole at the next; a file the parser rejects (bad magic,
 * a record size out of bounds) is read no further. Each stop is logged once and named.
 *
 * Its symbols. Code loads go into a perf-map symbol table (perfmap_add: the load read last wins
 * where loads overlap), charged to the target's uid per symbol kept (its name and SYM_COST bytes
 * for the entry, its index and the table below); a refused charge stops reading until the next
 * refresh. A code move adds the moved function at its new address under the name of the load
 * at its old one, found in a hash table of load addresses (a lookup in the symbol table would
 * rebuild its index at every move); the old range keeps its name until code is loaded over it,
 * as perf keeps it. Of a debug-info record (written just before the load it describes) every
 * line is kept with that load (16 bytes each, charged, at most MAX_LINES per file), as an offset
 * into its code, for exports: a JIT address's source line is the last entry at or before it
 * (jitfile_line), a function's first line its source (jitfile_source); a moved function keeps its
 * lines. File names are stored once while they repeat (the last few reused), charged like names.
 * Unwinding records are checked and counted, not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kprof/arena.h"
#include "kprof/array.h"
#include "kprof/budget.h"
#include "kprof/cleanup.h"
#include "kprof/hash.h"
#include "kprof/jitdump.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "os/log.h"
#include "os/tfile.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"
#include "symbols/symbolize_elf.h"

#define DEFAULT_MAX_BYTES (UINT64_C(512) << 20)
#define CHUNK (64u << 10)
#define SYM_COST 128 /* bytes charged per symbol besides its name */
#define ADDRS_MIN 1024
#define MAX_LINES (1u << 20)	  /* source lines kept per file (16 bytes each, charged) */
#define MAX_RECORD_LINES 65536 /* of one debug record */
#define RECENT_FILES 8	  /* file names reused while they repeat */

enum where { WHERE_MAPS, WHERE_CWD, WHERE_TMP, WHERE_N };

struct jitfile_params {
	pid_t pid;
	pid_t nspid;	 /* the file is jit-NSPID.dump: the PID the JIT knows itself by */
	uid_t uid, euid; /* the file must be owned by one of them; memory is charged to uid */
	uint64_t start_realtime_ns; /* process start: an older file is another process's */
	uint64_t max_bytes;	    /* of the file read at most (0: 512 MiB) */
	struct budget *budget;	    /* symbol memory, charged to uid */
};

/* Load addresses to their symbols, for code moves: open addressing, sym NULL = empty. */
struct addr_slot {
	uint64_t addr;
	const struct perfmap_sym *sym;
	const char *file; /* the first source line of the load (NULL: none said) */
	uint32_t line;
	uint32_t lt_start, lt_n; /* its source lines: lines[lt_start, lt_start + lt_n) */
};

/* A source line of JIT code: from off bytes into its load on (to the next entry's off). */
struct jline {
	uint32_t off, line;
	const char *file;
};

/* One of a debug-info record, waiting for its load. */
struct pend_line {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

struct jitfile {
	struct sym_jit j; /* first: its symbols ("jit-NSPID.dump"), looked up by sym_lookup_jit */
	struct jitfile_params p;
	struct jitdump jd;
	struct addr_slot *addrs;
	size_t naddrs, addrs_cap;
	struct tfile_track track;
	int fd; /* the file being read, kept open: read to its end after the process exits */
	uint64_t charged;
	uint64_t reloads, refused;
	bool budget_short; /* the last charge was refused: said once */
	bool changed;	   /* symbols added during this refresh */
	bool warned[WHERE_N];
	char path[256];	   /* of the file being read */
	char stopped[512]; /* "PATH read no further than ...": why this file is read no further */
	char refusal[512]; /* "PATH ignored: ...": the last candidate refused */
	char problem[512]; /* what its stats call its problem */
	/* The lines of the last debug-info record, for the load that follows it (as perf takes
	 * them: V8's record names its code object, the load the instructions after its header). */
	bool pend;
	struct pend_line *pend_v;
	size_t pend_n, pend_cap;
	struct arena files; /* source file names, the recent ones reused while they repeat */
	const char *recent[RECENT_FILES];
	unsigned recent_at;
	struct jline *lines; /* of all loads (addr_slot.lt_start) */
	size_t nlines, lines_cap;
	uint64_t lines_dropped; /* not kept: MAX_LINES or the budget */
};

/* A jitfile that has read nothing (its symbol table kept, empty). */
static void init(struct jitfile *jf, const struct sym_ctx *c)
{
	struct perfmap *syms = jf->j.syms;

	memset(jf, 0, sizeof(*jf));
	jf->j.syms = syms;
	jf->p = (struct jitfile_params){.pid = c->pid,
					.nspid = c->nspid,
					.uid = c->uid,
					.euid = c->euid,
					.start_realtime_ns = c->start_realtime_ns,
					.max_bytes = c->max_bytes,
					.budget = c->budget};
	jf->fd = -1;
	if (!jf->p.max_bytes)
		jf->p.max_bytes = DEFAULT_MAX_BYTES;
	snprintf(jf->j.module, sizeof(jf->j.module), "jit-%d.dump", jf->p.nspid);
	jitdump_init(&jf->jd, NULL);
}

static int jitfile_new(struct sym_ctx *c, void **ret)
{
	struct jitfile *jf = calloc(1, sizeof(*jf));
	int err;

	if (!jf)
		return -ENOMEM;
	err = perfmap_new(NULL, &jf->j.syms);
	if (err < 0) {
		free(jf);
		return err;
	}
	init(jf, c);
	*ret = jf;
	return 0;
}

/* Forget the file's symbols: it is read from its start again. */
static void drop_symbols(struct jitfile *jf)
{
	perfmap_reset(jf->j.syms);
	free(jf->addrs);
	jf->addrs = NULL;
	jf->naddrs = jf->addrs_cap = 0;
	budget_release(jf->p.budget, jf->p.uid, jf->charged);
	jf->charged = 0;
	arena_release(&jf->files);
	memset(jf->recent, 0, sizeof(jf->recent));
	jf->pend = false;
	jf->pend_n = 0;
	free(jf->lines);
	jf->lines = NULL;
	jf->nlines = jf->lines_cap = 0;
	jitdump_init(&jf->jd, NULL);
	jf->stopped[0] = '\0';
}

/* Close the file kept open (nothing more will be read); the symbols stay. */
static void jitfile_close(struct jitfile *jf)
{
	if (jf && jf->fd >= 0)
		close(jf->fd);
	if (jf)
		jf->fd = -1;
}

static void jitfile_free(struct sym_ctx *c, void *state)
{
	struct jitfile *jf = state;

	(void)c;
	if (!jf)
		return;
	jitfile_close(jf);
	drop_symbols(jf);
	perfmap_free(jf->j.syms);
	free(jf->pend_v);
	free(jf);
}

static struct addr_slot *addr_find(const struct jitfile *jf, uint64_t addr)
{
	size_t mask = jf->addrs_cap - 1, i = mix64(addr) & mask;

	while (jf->addrs[i].sym && jf->addrs[i].addr != addr)
		i = (i + 1) & mask;
	return &jf->addrs[i];
}

static int addr_put(struct jitfile *jf, const struct perfmap_sym *sym)
{
	struct addr_slot *s;

	if (2 * (jf->naddrs + 1) > jf->addrs_cap) {
		struct addr_slot *old = jf->addrs;
		size_t n = jf->addrs_cap, cap = n ? 2 * n : ADDRS_MIN;

		jf->addrs = calloc(cap, sizeof(*jf->addrs));
		if (!jf->addrs) {
			jf->addrs = old;
			return -ENOMEM;
		}
		jf->addrs_cap = cap;
		for (size_t i = 0; i < n; i++)
			if (old[i].sym)
				*addr_find(jf, old[i].addr) = old[i];
		free(old);
	}
	s = addr_find(jf, sym->start);
	jf->naddrs += !s->sym;
	*s = (struct addr_slot){.addr = sym->start, .sym = sym};
	return 0;
}

/* A source file name, stored once while it repeats (one of the recent ones), charged: NULL if
 * there is no room. */
static const char *store_file(struct jitfile *jf, const char *name, size_t len)
{
	char *copy;

	for (unsigned i = 0; i < RECENT_FILES; i++)
		if (jf->recent[i] && !strncmp(jf->recent[i], name, len) && !jf->recent[i][len])
			return jf->recent[i];
	if (budget_charge(jf->p.budget, jf->p.uid, len + 1) < 0)
		return NULL;
	copy = arena_alloc(&jf->files, len + 1);
	if (!copy) {
		budget_release(jf->p.budget, jf->p.uid, len + 1);
		return NULL;
	}
	jf->charged += len + 1;
	memcpy(copy, name, len);
	copy[len] = '\0';
	jf->recent[jf->recent_at++ % RECENT_FILES] = copy;
	return copy;
}

static int by_off(const void *a, const void *b)
{
	const struct jline *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The pending lines inside the code loaded at addr (size bytes), kept for it: their place in
 * jf->lines, charged (none if the budget or MAX_LINES refuses them, counted). */
static void take_lines(struct jitfile *jf, uint64_t addr, uint64_t size, uint32_t *start,
		       uint32_t *n)
{
	size_t k = 0;

	*start = *n = 0;
	if (!jf->pend || !jf->pend_n)
		return;
	jf->pend = false;
	if (jf->nlines + jf->pend_n > MAX_LINES ||
	    budget_charge(jf->p.budget, jf->p.uid, jf->pend_n * sizeof(struct jline)) < 0) {
		jf->lines_dropped += jf->pend_n;
		return;
	}
	if (array_grow((void **)&jf->lines, &jf->lines_cap, jf->nlines + jf->pend_n,
		       sizeof(*jf->lines), 1024) < 0) {
		budget_release(jf->p.budget, jf->p.uid, jf->pend_n * sizeof(struct jline));
		jf->lines_dropped += jf->pend_n;
		return;
	}
	jf->charged += jf->pend_n * sizeof(struct jline);
	for (size_t i = 0; i < jf->pend_n; i++) {
		const struct pend_line *p = &jf->pend_v[i];

		if (p->addr >= addr && p->addr - addr < size)
			jf->lines[jf->nlines + k++] =
			    (struct jline){(uint32_t)(p->addr - addr), p->line, p->file};
	}
	/* Entries come in address order; sorted (stably enough: ties are one address) if not. */
	qsort(jf->lines + jf->nlines, k, sizeof(*jf->lines), by_off);
	*start = jf->nlines;
	*n = k;
	jf->nlines += k;
}

/* One symbol into the table, charged first, with its source lines (lt: lines[lt[0], +lt[1])).
 * 0, or -ENOSPC (budget), -ENOMEM. */
static int add_symbol(struct jitfile *jf, uint64_t start, uint64_t size, const char *name,
		      size_t len, const uint32_t lt[2])
{
	uint64_t cost = len + SYM_COST;
	int r;

	if (budget_charge(jf->p.budget, jf->p.uid, cost) < 0)
		return -ENOSPC;
	r = perfmap_add(jf->j.syms, start, size, name, len);
	if (r <= 0) { /* 0: over the table's entries cap, counted there */
		budget_release(jf->p.budget, jf->p.uid, cost);
		return r;
	}
	jf->charged += cost;
	jf->changed = true;
	/* Out of memory here only costs a later move of this code its name and lines. */
	if (addr_put(jf, perfmap_last(jf->j.syms)) == 0 && lt[1]) {
		struct addr_slot *s = addr_find(jf, start);

		s->lt_start = lt[0];
		s->lt_n = lt[1];
		/* Its first line that names a file: the function's source. */
		for (uint32_t i = lt[0]; i < lt[0] + lt[1] && !s->file; i++)
			if (jf->lines[i].file[0]) {
				s->file = jf->lines[i].file;
				s->line = jf->lines[i].line;
			}
	}
	return 0;
}

static int on_load(const struct jitdump_load *l, void *userdata)
{
	struct jitfile *jf = userdata;
	uint32_t lt[2];

	take_lines(jf, l->code_addr, l->code_size, &lt[0], &lt[1]);
	return add_symbol(jf, l->code_addr, l->code_size, l->name, l->name_len, lt);
}

/* A file name worth showing: UTF-8 text without control characters. V8 (node 20) writes
 * garbage bytes for the files of user scripts in some entries (perf shows them too); such an
 * entry keeps its line with no file (an export takes the file from V8's name, "JS:*f
 * /app/x.js:12:3"). */
static bool plausible_file(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = c < 0x80		? 1
			   : (c & 0xe0) == 0xc0 ? 2
			   : (c & 0xf0) == 0xe0 ? 3
			   : (c & 0xf8) == 0xf0 ? 4
						: 0;

		if (!n || (n == 1 && (c < 0x20 || c == 0x7f)) || (n == 2 && c < 0xc2) ||
		    i + n > len)
			return false;
		for (size_t k = 1; k < n; k++)
			if (((unsigned char)s[i + k] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return len > 0;
}

/* A debug-info record: its lines (with a line number) kept for the load that follows, with
 * their files stored. */
static int on_debug(const struct jitdump_debug *d, void *userdata)
{
	struct jitfile *jf = userdata;
	struct jitdump_line line = {0};

	jf->pend = false;
	jf->pend_n = 0;
	while (jitdump_debug_next(d, &line) == 1 && jf->pend_n < MAX_RECORD_LINES) {
		const char *file;

		if (!line.lineno)
			continue;
		/* file_len is at most the parser's max_name (JITDUMP_MAX_NAME); no NUL inside. A
		 * file name that is not (V8's junk) is kept as none: the line stays. */
		file = plausible_file(line.file, line.file_len)
			   ? store_file(jf, line.file, line.file_len)
			   : "";
		if (!file || array_grow((void **)&jf->pend_v, &jf->pend_cap, jf->pend_n + 1,
					sizeof(*jf->pend_v), 64) < 0)
			break;
		jf->pend_v[jf->pend_n++] = (struct pend_line){line.addr, line.lineno, file};
	}
	jf->pend = jf->pend_n > 0;
	return 0;
}

static int on_move(const struct jitdump_move *m, void *userdata)
{
	struct jitfile *jf = userdata;
	const struct addr_slot *old;

	if (!jf->addrs_cap)
		return 0;
	old = addr_find(jf, m->old_code_addr);
	if (!old->sym)
		return 0; /* code never loaded: nothing to name it by */
	return add_symbol(jf, m->new_code_addr, m->code_size, old->sym->name,
			  strlen(old->sym->name), (uint32_t[2]){old->lt_start, old->lt_n});
}

static const struct jitdump_ops ops = {
    .on_load = on_load, .on_move = on_move, .on_debug = on_debug};

/* ---- finding the file ---- */

static bool older_than_process(const struct jitfile *jf, const struct stat *st)
{
	uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + st->st_mtim.tv_nsec;

	return jf->p.start_realtime_ns && mtime + 2000000000ULL < jf->p.start_realtime_ns;
}

/* A candidate that exists but may not be read: say why, once per place. */
static int refuse(struct jitfile *jf, enum where w, const char *path, const char *why)
{
	snprintf(jf->refusal, sizeof(jf->refusal), "%s ignored: %s", path, why);
	if (!jf->warned[w])
		log_warn("pid %d: jitdump %s ignored: %s", jf->p.pid, path, why);
	jf->warned[w] = true;
	return -EPERM;
}

/* Check the age of a candidate tfile_open gave (fd, or its error with why). The fd, -ENOENT
 * (none there) or -EPERM (refused, said). */
static int check_candidate(struct jitfile *jf, enum where w, int fd, const char *why,
			   const char *shown, const struct stat *st)
{
	if (fd == -ENOENT || fd == -ESRCH)
		return -ENOENT; /* ESRCH: the process is gone, its /proc entries with it */
	if (fd < 0)
		return refuse(jf, w, shown, why);
	if (older_than_process(jf, st)) {
		close(fd);
		return refuse(jf, w, shown, "it is older than the process (PID reuse?)");
	}
	return fd;
}

/* The first mapping of a file named jit-NSPID.dump: its very file, through map_files
 * (CAP_SYS_ADMIN), else its path inside the target's root, checked to be the file mapped. */
static int open_mapped(struct jitfile *jf, const struct procmaps *maps, int root, char *shown,
		       size_t shownlen, struct stat *st)
{
	size_t n = maps ? procmaps_count(maps) : 0, len = strlen(jf->j.module);

	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *m = procmaps_at(maps, i);
		const char *base = strrchr(m->path, '/');
		const struct tfile_want want = {.check_id = true,
						.dev = makedev(m->dev_major, m->dev_minor),
						.ino = m->inode,
						.owners = {jf->p.uid, jf->p.euid},
						.nowners = 2};
		bool deleted;
		char mf[96], why[160] = "";
		int fd;

		if (!base || !m->inode || strncmp(base + 1, jf->j.module, len))
			continue;
		deleted = !strcmp(base + 1 + len, " (deleted)");
		if (base[1 + len] && !deleted)
			continue;
		snprintf(shown, shownlen, "/proc/%d/root%s", jf->p.pid, m->path);
		procmaps_file_path(mf, sizeof(mf), jf->p.pid, m->start, m->end);
		fd = tfile_open(AT_FDCWD, mf, false, &want, st, why, sizeof(why));
		if (fd < 0 && deleted)
			return -ENOENT; /* only map_files reaches it: look elsewhere */
		if (fd < 0 && root >= 0)
			fd = tfile_open(root, m->path, true, &want, st, why, sizeof(why));
		return check_candidate(jf, WHERE_MAPS, fd, why, shown, st);
	}
	return -ENOENT;
}

/* Open the target's jitdump by the rules at the top of this file; on success jf->path names
 * it. The fd, -ENOENT if there is none, or another negative errno. */
static int open_jitdump(struct jitfile *jf, const struct procmaps *maps, struct stat *st)
{
	const struct tfile_want want = {.owners = {jf->p.uid, jf->p.euid}, .nowners = 2};
	_cleanup_close_ int root = tfile_proc_root(jf->p.pid), cwd = -1;
	char shown[sizeof(jf->path)], rel[80], why[160] = "";
	int fd;

	jf->refusal[0] = '\0';
	fd = open_mapped(jf, maps, root, shown, sizeof(shown), st);
	if (fd < 0) {
		snprintf(shown, sizeof(shown), "/proc/%d/cwd", jf->p.pid);
		cwd = open(shown, O_PATH | O_DIRECTORY | O_CLOEXEC);
		snprintf(shown, sizeof(shown), "/proc/%d/cwd/%s", jf->p.pid, jf->j.module);
		fd = cwd < 0 ? -ENOENT
			     : tfile_open(cwd, jf->j.module, true, &want, st, why, sizeof(why));
		fd = check_candidate(jf, WHERE_CWD, fd, why, shown, st);
	}
	if (fd < 0 && root >= 0) {
		snprintf(rel, sizeof(rel), "tmp/%s", jf->j.module);
		snprintf(shown, sizeof(shown), "/proc/%d/root/%s", jf->p.pid, rel);
		fd = tfile_open(root, rel, true, &want, st, why, sizeof(why));
		fd = check_candidate(jf, WHERE_TMP, fd, why, shown, st);
	}
	if (fd >= 0)
		snprintf(jf->path, sizeof(jf->path), "%s", shown);
	return fd;
}

/* ---- reading it ---- */

static void stop(struct jitfile *jf, const char *why)
{
	snprintf(jf->stopped, sizeof(jf->stopped), "%s read no further than byte %llu: %s",
		 jf->path, (unsigned long long)jf->track.off, why);
	log_warn("pid %d: jitdump %s", jf->p.pid, jf->stopped);
}

static void stop_at_cap(struct jitfile *jf)
{
	char why[96];

	snprintf(why, sizeof(why), "the cap of %llu MiB (perfmap_max_mb) is reached",
		 (unsigned long long)(jf->p.max_bytes >> 20));
	stop(jf, why);
}

/* jitdump_parse returned r < 0: a file to read no further, the budget, or memory. */
static void parse_failed(struct jitfile *jf, int r)
{
	if (jf->jd.err == -EPROTONOSUPPORT) {
		stop(jf, "not a jitdump version or flags kprofd reads");
	} else if (jf->jd.err) {
		stop(jf, "malformed (bad magic, or a record size out of bounds)");
	} else if (r == -ENOSPC) {
		if (!jf->budget_short) {
			jf->refused++;
			log_warn(
			    "pid %d: jitdump %s read up to byte %llu: uid %u's symbol budget is "
			    "spent",
			    jf->p.pid, jf->path, (unsigned long long)jf->track.off, jf->p.uid);
		}
		jf->budget_short = true;
	} else {
		log_warn("pid %d: jitdump %s: %s", jf->p.pid, jf->path, strerror(-r));
	}
}

/* Read and parse what the file (size bytes when opened) gained, within the caps and the step. */
static void read_more(struct jitfile *jf, int fd, uint64_t size, struct tfile_step *step)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t cap = CHUNK;

	buf = malloc(cap);
	if (!buf)
		return;
	while (!jf->stopped[0]) {
		uint64_t room =
		    jf->p.max_bytes > jf->track.off ? jf->p.max_bytes - jf->track.off : 0;
		size_t want = room < cap ? (size_t)room : cap, req, pos = 0;
		ssize_t n;
		int r;

		if (!want) {
			stop_at_cap(jf);
			break;
		}
		req = tfile_step_take(step, want, cap > CHUNK);
		if (!req)
			break; /* the step is over: the next one goes on from here */
		n = pread(fd, buf, req, (off_t)jf->track.off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tfile_step_done(step, (size_t)n);
		r = jitdump_parse(&jf->jd, buf, (size_t)n, &pos, &ops, jf);
		if (pos)
			tfile_track_advance(&jf->track, buf, pos);
		if (r < 0) {
			parse_failed(jf, r);
			break;
		}
		jf->budget_short = false;
		if ((size_t)n < req)
			break; /* the end of the file, for now */
		if (pos)
			continue;
		if (req < want)
			break; /* the step's bound cut the record: it is read whole at the next */
		/* Not one whole record in a full buffer: a record larger than it, or the cap. */
		if (jf->jd.want > room) {
			stop_at_cap(jf);
			break;
		}
		if (jf->jd.want <= cap)
			break; /* cannot happen: the parser consumes a whole record it has */
		if (jf->track.off + jf->jd.want > size)
			break; /* not all written yet: no buffer for it before it is */
		cap = jf->jd.want;
		free(buf);
		buf = malloc(cap);
		if (!buf)
			break;
	}
}

/* Find the file (a mapping of jit-NSPID.dump in maps, which may be NULL; then the target's
 * working directory; then /tmp inside its root) and read what it gained, as far as the step
 * allows. exited: the process is gone, only read on in the file kept open since the last
 * refresh. 1 if the symbols changed (new ones, or all dropped for a file replaced), else 0. */
static int jitfile_read(struct jitfile *jf, const struct procmaps *maps, struct tfile_step *step,
			bool exited)
{
	struct stat st;
	bool had = jf->track.ino != 0, reset = false;
	int fd;

	jf->changed = false;
	if (exited) {
		/* Its /proc/PID is gone (or another process's): only the file kept open. */
		if (jf->fd < 0 || fstat(jf->fd, &st) < 0)
			return 0;
		fd = jf->fd;
	} else {
		fd = open_jitdump(jf, maps, &st);
		if (fd == -ENOENT && jf->fd >= 0 && fstat(jf->fd, &st) == 0) {
			fd = jf->fd; /* no longer reached (the process exiting): the file kept */
		} else {
			memcpy(jf->problem, jf->refusal, sizeof(jf->problem));
			if (fd < 0)
				return 0;
			jitfile_close(jf);
			jf->fd = fd;
		}
	}
	if (tfile_track_check(fd, &st, &jf->track)) {
		if (had)
			jf->reloads++;
		reset = had;
		drop_symbols(jf);
		log_info("pid %d: reading jitdump %s", jf->p.pid, jf->path);
	}
	if (!jf->stopped[0])
		read_more(jf, fd, (uint64_t)st.st_size, step);
	if (jf->stopped[0])
		memcpy(jf->problem, jf->stopped, sizeof(jf->problem));
	return jf->changed || reset;
}

/* ---- the source ---- */

static int jitfile_refresh(struct sym_ctx *c, void *state, struct tfile_step *step)
{
	struct jitfile *jf = state;

	/* Gone: its /proc/PID may be another process's already. */
	if (c->gone || jitfile_read(jf, c->exiting ? NULL : c->maps, step, c->exiting) <= 0)
		return 0;
	/* Indexed now, inside the step's measured CPU time, not at the next lookup (a sort of
	 * every symbol: a file of 350,000 code loads costs tens of ms each time). */
	perfmap_build_index(jf->j.syms); /* out of memory: the next lookup tries again */
	return 1;
}

/* The process exec'd: the new program's file, from scratch. */
static void jitfile_exec(struct sym_ctx *c, void *state)
{
	struct jitfile *jf = state;

	jitfile_close(jf);
	drop_symbols(jf);
	init(jf, c);
}

static void jitfile_done(struct sym_ctx *c, void *state)
{
	(void)c;
	jitfile_close(state);
}

/* The first source line of the code loaded (or moved) at start, if its debug info said it. */
static bool jitfile_source(const void *state, uint64_t start, const char **file, uint32_t *line)
{
	const struct jitfile *jf = state;
	const struct addr_slot *s;

	if (!jf->addrs_cap)
		return false;
	s = addr_find(jf, start);
	if (!s->sym || !s->file)
		return false;
	*file = s->file;
	*line = s->line;
	return true;
}

/* The source line of JIT code at addr, when the debug info of its load said it (the last entry
 * at or before addr): its file (valid while the symbols are; "" when the JIT wrote no usable
 * name) and line. */
static bool jitfile_line(const void *state, uint64_t addr, const char **file, uint32_t *line)
{
	const struct jitfile *jf = state;
	const struct perfmap_sym *sym = perfmap_lookup_frame(jf->j.syms, addr);
	const struct addr_slot *s;
	size_t lo, hi;

	if (!sym || !jf->addrs_cap)
		return false;
	s = addr_find(jf, sym->start);
	if (!s->sym || !s->lt_n || addr - sym->start > UINT32_MAX)
		return false;
	/* The last entry at or before the address (its code's line until the next entry). */
	lo = s->lt_start;
	hi = s->lt_start + s->lt_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (jf->lines[mid].off <= addr - sym->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->lt_start)
		return false; /* before its first line */
	*file = jf->lines[lo - 1].file;
	*line = jf->lines[lo - 1].line;
	return true;
}

/* The file read, as kprofd reaches it ("" while none was found), why a jitdump was refused or
 * read no further ("" if neither), and its counts. */
static void jitfile_stats(const void *state, struct tsym_stats *st)
{
	const struct jitfile *jf = state;
	struct perfmap_stats ps;

	perfmap_get_stats(jf->j.syms, &ps);
	snprintf(st->jitdump_path, sizeof(st->jitdump_path), "%s", jf->track.ino ? jf->path : "");
	snprintf(st->jitdump_problem, sizeof(st->jitdump_problem), "%s", jf->problem);
	st->jitdump_symbols = ps.entries;
	st->jitdump_bad_records = jf->jd.st.bad_records;
	st->jitdump_bytes = jf->jd.st.bytes;
	st->jitdump_reloads = jf->reloads;
	st->refused += jf->refused;
}

const struct sym_source sym_source_jitdump = {
    .name = "jitdump",
    .open = jitfile_new,
    .free = jitfile_free,
    .refresh = jitfile_refresh,
    .lookup = sym_lookup_jit, /* the load read last wins */
    .exec = jitfile_exec,
    .done = jitfile_done,
    .stats = jitfile_stats,
    .line = jitfile_source,
    .addr_line = jitfile_line,
};
