/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize_internal.h: what symbolize.c (per-target symbols: maps, the walk over the sources,
 * resolution) and symbolize_elf.c (the sources every target shares: the ELF cache, separate
 * debug files, kallsyms, the vdso) share, and nothing else includes: the structures of both
 * halves and the functions symbolize.c calls in symbolize_elf.c. The design is explained at
 * the top of symbolize.c. */
#ifndef KPROF_DAEMON_SYMBOLIZE_INTERNAL_H
#define KPROF_DAEMON_SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "kprof/allowance.h"
#include "kprof/elfsym.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "kprof/strpool.h"
#include "kprof/symtab.h"
#include "os/tfile.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"

#define ELF_CACHE_MAX 1024
/* The host-wide names' bytes (strpool.h). */
#define SHARED_NAMES_BYTES (32u << 20)
#define MAPS_MAX_BYTES (16u << 20)
#define MAPS_MAX_ENTRIES 65536
#define MAPS_RELOAD_NS (100 * 1000000ULL)
#define PERFMAP_REFRESH_MIN_NS (50 * 1000000ULL)
/* A re-read of the maps that finds another program is refused this long at most: longer than
 * any sample waits for its drain and run (manager_batch.c), so the exec's record came by then
 * unless it was lost. */
#define EXEC_WAIT_NS (5 * 1000000000ULL)
/* Reading the files of a target's sources (ARCHITECTURE.md §2.2, "Reading in steps"): per
 * target, at most READ_RATE_BYTES and READ_RATE_CPU_NS of CPU time a second (each held up to a
 * second's worth), at most READ_STEP_BYTES and READ_STEP_CPU_NS in one refresh; all targets
 * together at most READ_ALL_CPU_NS a second, READ_ALL_BURST_NS at once. */
#define READ_RATE_BYTES (16u << 20)
#define READ_RATE_CPU_NS (100 * 1000000ULL)
#define READ_STEP_BYTES (4u << 20)
#define READ_STEP_CPU_NS (25 * 1000000ULL)
#define READ_ALL_CPU_NS (300 * 1000000ULL)
#define READ_ALL_BURST_NS (50 * 1000000ULL)
/* A client's request that names a function (tsym_refresh_asked): steps past the allowances, up
 * to these in all. */
#define READ_ASKED_BYTES (64u << 20)
#define READ_ASKED_CPU_NS (250 * 1000000ULL)

/* Per symbol of a table (by its index), its name among the host-wide ones (demangled), made at
 * the first lookup that finds it: made when first needed, charged with the table. */
struct shared_names {
	const char **v; /* NULL: not made yet */
	size_t n;
	bool refused; /* no memory or budget: names are copied, as before */
};

struct elf_entry {
	dev_t dev;
	ino_t ino;
	struct timespec mtime, ctime; /* ctime: no user can set it back after writing the file */
	unsigned refs;
	uid_t uid;	/* charged to */
	uint64_t bytes; /* charged */
	int failed;	/* not an ELF file or no symbols: remembered so it is not parsed again */
	char *module;
	const char *shared_module;  /* module among the host-wide names (NULL: not there) */
	const char *shared_bracket; /* "[module]", the name of its code no symbol covers */
	struct elfsym es;
	struct shared_names names, dbg_names; /* of es's and dbg's symbols */
	struct elfsym dbg; /* its separate debug file's .symtab (dbg.syms NULL: none) */
	uid_t dbg_owner;   /* who owns that file: it names only that user's and root's targets */
	uid_t dbg_uid;	   /* charged to: the uid of the target that found it */
	uint64_t dbg_bytes;
	/* Its .eh_frame (tsym_frame_rule), read when a rule is first asked: eh_state 0 not yet,
	 * 1 read (charged to uid with the symbols), -1 none or refused. */
	uint8_t *eh;
	size_t eh_len;
	uint64_t eh_addr;
	int eh_state;
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
	/* The names of the files' and the kernel's symbols, once for all targets (symbolize_elf.c,
	 * "Host-wide names"); the profiles of all targets keep them (freed after those). */
	struct strpool *names;
	bool names_full_logged; /* the pool's cap reached: said once */
	struct shared_names kallsyms_names;
	const char *kallsyms_module;
	struct allowance read_cpu; /* of all targets' perf maps and jitdumps */
};

struct tsym {
	struct sym_ctx c; /* what its sources see: pid, uids, maps, root (sources.h) */
	struct symbolizer *sz;
	uid_t reader;	  /* who may read the names (tsym_set_reader): 0 root */
	uint64_t refused; /* ELF files left out for lack of budget */
	uint64_t gen;
	uint64_t serial; /* unique among all targets kprofd ever had */

	struct elf_entry **map_elf; /* per mapping of c.maps: NULL = not looked up yet */
	/* The program the maps are of (/proc/PID/exe's file, when it could be read): a re-read
	 * that finds another one is refused (an exec whose record is not handled yet). */
	dev_t exe_dev;
	ino_t exe_ino;
	bool exe_known;
	uint64_t exe_refused_ns; /* the first re-read refused for another program (0: none) */
	uint64_t maps_tried_ns;	 /* the last read of the maps, whether it found them or not */
	uint64_t maps_loaded_ns; /* the last read that found them (an exited process has none) */
	uint64_t maps_reread;	 /* reads for a sample's address no mapping held ... */
	uint64_t maps_same;	 /* ... that found the maps unchanged (no new generation) */
	uint64_t taken_ns;	 /* when the sample being resolved was taken (tsym_sample_time) */
	uint64_t anon_exec_gen;	 /* c.maps_gen + 1 of anon_exec_n (0: not counted) */
	size_t anon_exec_n;

	void *state[SYM_SOURCES_MAX]; /* each source's, in the order of sym_sources[] */
	/* The lookups a resolve walks, in the table's order, for each kind of address: made once
	 * (tsym_new), so that a sample's hot path asks no source that cannot name it. */
	struct tsym_lookups {
		size_t n;
		struct {
			enum sym_hit (*fn)(struct sym_ctx *c, void *state,
					   const struct sym_where *w, struct sym_result *r);
			void *state;
		} v[SYM_SOURCES_MAX];
	} kernel, file, anon;
	struct tsym_lookups again; /* the SYM_SPACE_USER sources a refresh reads: asked again */
	uint64_t refreshed_ns;
	/* What reading the sources' files may still cost, what it read (every byte, files read
	 * again included) and how often a bound deferred the rest to a later step. */
	struct allowance read_bytes, read_cpu;
	uint64_t read_total, read_deferred;
	bool behind;	      /* the last refresh was cut short: more may be waiting */
	char *demangled;      /* last demangled name, valid until the next resolve */
	struct tsym_stats st; /* tsym_get_stats's */
};

/* The target of a source's context. */
static inline struct tsym *tsym_of(struct sym_ctx *c)
{
	return (struct tsym *)((char *)c - offsetof(struct tsym, c));
}

/* Marks "looked up, nothing usable" in map_elf (symbolize_elf.c). */
extern struct elf_entry symbolize_elf_none;

/* Kept from the last read of the maps (attach, exec, re-reads), not opened when needed: the
 * files of a process that exited before its samples were read are still reached through it,
 * and a PID reused meanwhile cannot send kprofd into another process's root. */
void symbolize_root_update(struct tsym *ts);

/* An unused entry stays cached (libc's symbols serve the next target) only if it is charged
 * to root: a user's budget is not held by files none of its targets maps any more. */
void symbolize_elf_put(struct symbolizer *sz, struct elf_entry *e);
const char *symbolize_base_name(const char *path);

/* The ELF symbols of mapping idx (m), opened on first use: symbolize_elf_none if there are
 * none (not a file, not readable, no symbols). */
struct elf_entry *symbolize_mapping_elf(struct tsym *ts, size_t idx,
					const struct procmaps_entry *m);
/* sym_root(&ts->c), or once the target is done (its root let go) the root of the process that
 * has its PID now, maybe another one: only for reads that check what they find (a file's
 * identity, a debug file's build id). */
int tsym_root_now(struct tsym *ts);
/* The file mapped at m, the very one (its device and inode checked): through map_files, else
 * its path inside the target's root (tsym_root_now: once the target is done, the identity
 * check alone tells it is that file). An fd (st filled), or a negative errno. */
int tsym_open_mapped(struct tsym *ts, const struct procmaps_entry *m, struct stat *st);
/* The ELF file mapped at addr as the maps were last read (no re-read), loaded if it was not
 * yet, and its mapping in *m: NULL if no file is mapped there or it is not ELF. */
const struct elf_entry *tsym_elf_at(struct tsym *ts, uint64_t addr,
				    const struct procmaps_entry **m);
/* The CRC32 of the whole file (size bytes, at most 256 MiB: -EFBIG), as .gnu_debuglink records
 * it (zlib's crc32). 0 or a negative errno. */
int symbolize_file_crc32(int fd, uint64_t size, uint32_t *ret);

/* Separate debug files, as gdb and perf look for them: DEBUG_DIR/.build-id/xx/rest.debug by
 * build id; by .gnu_debuglink NAME, each of these formats of (directory length, directory
 * without its leading '/' and with a trailing one, NAME), inside the target's root. */
#define DEBUG_DIR "usr/lib/debug"
static __attribute__((unused))
const char *const symbolize_debuglink_fmt[] = {"%.*s%s", "%.*s.debug/%s", DEBUG_DIR "/%.*s%s"};
/* e's .eh_frame read from the file open at fd (mapped by ts), charged to e's uid: 0 or a
 * negative errno (e->eh_state says so after). */
int symbolize_elf_eh(struct tsym *ts, struct elf_entry *e, int fd);

#endif
