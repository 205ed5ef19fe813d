// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_elfsym.c: libFuzzer target for ELF symbol loading (daemon/lib/elfsym.c and symtab.c).
 *
 * The input is an ELF file, as kprofd could find one in a target's mount namespace. It is loaded
 * from memory (elfsym_load_mem) and from a file descriptor (elfsym_load_fd on a memfd, the
 * glue's path through libelf's pread reader, ELF_C_READ); both must agree. A loaded table must
 * be consistent: symbols sorted, sized, named (no name longer than ELFSYM_MAX_NAME), inside the
 * address space, each found by a lookup at its start and its last byte; load segments at most
 * ELFSYM_MAX_LOADS; elfsym_vaddr maps the start of each segment to its vaddr; at most one
 * symbol starts at an address (aliases give one name); what points to a debug file is sane: a
 * build id of at most ELFSYM_BUILD_ID_MAX bytes, a debuglink that is a plain file name (no '/',
 * not "." or "..", NUL-terminated within ELFSYM_DEBUGLINK_MAX), its hex form as long as it.
 *
 * Then both paths run again with a memory budget drawn from the input's hash (0 = none, or a
 * few bytes to a few MiB) and must again agree: -ENOSPC only when a budget was given; otherwise
 * the same result as without one, and on success the same table, whose symtab_memory is within
 * the budget, its lookup index included.
 * libelf itself is not instrumented: ASan sees its libc calls and what it hands back, not its
 * own loads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "kprof/elfsym.h"

static int memfd = -1;

/* The fd and memory paths agree, except that libelf refuses a file too short for its ELF header
 * in elf_memory (NULL: -EINVAL) but opens it with ELF_C_READ as ELF_K_NONE (-ENOEXEC): both
 * mean "not an ELF file we can read", and callers treat them alike. */
static bool same_result(int a, int b)
{
	return a == b || ((a == -EINVAL || a == -ENOEXEC) && (b == -EINVAL || b == -ENOEXEC));
}

#define NAIVE_MAX 512 /* symbols up to which lookups are compared with a linear scan */

/* The symbol with the greatest start <= addr that contains addr, ties to the last in order. */
static const struct symtab_sym *naive_lookup(const struct symtab *st, uint64_t addr)
{
	for (size_t i = symtab_count(st); i-- > 0;) {
		const struct symtab_sym *s = symtab_at(st, i);

		if (s->start <= addr && addr - s->start < s->size)
			return s;
	}
	return NULL;
}

static void check_lookup(const struct symtab *st, uint64_t addr)
{
	const struct symtab_sym *a = symtab_lookup(st, addr);

	if (symtab_count(st) <= NAIVE_MAX)
		FUZZ_CHECK(a == naive_lookup(st, addr), "lookup %#llx: %s, linear scan: %s",
			   (unsigned long long)addr, a ? a->name : "none",
			   naive_lookup(st, addr) ? naive_lookup(st, addr)->name : "none");
	else if (a)
		FUZZ_CHECK(a->start <= addr && addr - a->start < a->size, "lookup %#llx",
			   (unsigned long long)addr);
}

static bool is_plt(const char *name)
{
	size_t n = strlen(name);

	return n >= 4 && !strcmp(name + n - 4, "@plt");
}

static void check_debug_refs(const struct elfsym *es)
{
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1];
	size_t len = strnlen(es->debuglink, sizeof(es->debuglink));

	FUZZ_CHECK(es->build_id_len <= ELFSYM_BUILD_ID_MAX, "build id of %u bytes",
		   es->build_id_len);
	elfsym_build_id_hex(es, hex, sizeof(hex));
	FUZZ_CHECK(strlen(hex) == 2u * es->build_id_len, "build id hex '%s'", hex);
	FUZZ_CHECK(len < sizeof(es->debuglink), "debuglink not terminated");
	FUZZ_CHECK(!memchr(es->debuglink, '/', len) && strcmp(es->debuglink, ".") &&
		       strcmp(es->debuglink, ".."),
		   "debuglink '%s' is not a plain file name", es->debuglink);
}

static void check_table(const struct elfsym *es)
{
	size_t n = symtab_count(es->syms);
	uint64_t prev = 0;

	check_debug_refs(es);

	FUZZ_CHECK(es->nloads >= 0 && es->nloads <= ELFSYM_MAX_LOADS, "nloads %d", es->nloads);
	for (int i = 0; i < es->nloads; i++) {
		const struct elfsym_load *l = &es->loads[i];
		uint64_t v = elfsym_vaddr(es, l->offset);

		/* An earlier segment covering the same offset wins. */
		if (l->filesz) {
			int first = i;

			for (int j = 0; j < i; j++)
				if (l->offset >= es->loads[j].offset &&
				    l->offset - es->loads[j].offset < es->loads[j].filesz) {
					first = j;
					break;
				}
			if (first == i)
				FUZZ_CHECK(v == l->vaddr, "vaddr of segment %d", i);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct symtab_sym *s = symtab_at(es->syms, i), *l;

		FUZZ_CHECK(s, "symtab_at(%zu) of %zu", i, n);
		FUZZ_CHECK(s->size > 0 && s->size <= UINT64_MAX - s->start, "symbol %zu size", i);
		FUZZ_CHECK(s->name && s->name[0], "symbol %zu has no name", i);
		FUZZ_CHECK(strnlen(s->name, ELFSYM_MAX_NAME + 1) <= ELFSYM_MAX_NAME,
			   "symbol %zu: name longer than ELFSYM_MAX_NAME", i);
		FUZZ_CHECK(s->start >= prev, "symbols not sorted at %zu", i);
		/* A PLT entry may start where a (hostile) symbol does; two symbols never do. */
		FUZZ_CHECK(i == 0 || s->start != prev || is_plt(s->name) ||
			       is_plt(symtab_at(es->syms, i - 1)->name),
			   "two names at %#llx: %s and %s", (unsigned long long)s->start,
			   symtab_at(es->syms, i - 1)->name, s->name);
		prev = s->start;
		l = symtab_lookup(es->syms, s->start);
		FUZZ_CHECK(l && l->start <= s->start && s->start - l->start < l->size,
			   "lookup of symbol %zu's start", i);
		l = symtab_lookup(es->syms, s->start + s->size - 1);
		FUZZ_CHECK(l && l->start <= s->start + s->size - 1 &&
			       s->start + s->size - 1 - l->start < l->size,
			   "lookup of symbol %zu's last byte", i);
		check_lookup(es->syms, s->start);
		check_lookup(es->syms, s->start - 1);
		check_lookup(es->syms, s->start + s->size - 1);
		check_lookup(es->syms, s->start + s->size);
	}
	FUZZ_CHECK(symtab_at(es->syms, n) == NULL, "symtab_at past the end");
}

static void check_same(const struct elfsym *a, const struct elfsym *b)
{
	size_t n = symtab_count(a->syms);

	FUZZ_CHECK(a->nloads == b->nloads && !memcmp(a->loads, b->loads, sizeof(a->loads)),
		   "mem and fd loads differ");
	FUZZ_CHECK(a->has_symtab == b->has_symtab && a->build_id_len == b->build_id_len &&
		       !memcmp(a->build_id, b->build_id, a->build_id_len) &&
		       !strcmp(a->debuglink, b->debuglink) && a->debuglink_crc == b->debuglink_crc,
		   "mem and fd: debug references differ");
	FUZZ_CHECK(n == symtab_count(b->syms), "mem and fd: %zu and %zu symbols", n,
		   symtab_count(b->syms));
	for (size_t i = 0; i < n; i++) {
		const struct symtab_sym *x = symtab_at(a->syms, i), *y = symtab_at(b->syms, i);

		FUZZ_CHECK(x->start == y->start && x->size == y->size && !strcmp(x->name, y->name),
			   "mem and fd: symbol %zu differs", i);
	}
}

/* The table, its lookup index included, fits in max_bytes exactly. */
#define BUDGET_SLACK(max) 0

static uint64_t pick_budget(uint64_t h, size_t size)
{
	switch (h & 3) {
	case 0:
		return 0;
	case 1: /* below an empty table's size, to around it */
		return 1 + (h >> 8) % 512;
	case 2: /* around the size of the input's tables */
		return 1 + (h >> 8) % (4 * size + 4096);
	default:
		return 1 + (h >> 8) % (UINT64_C(8) << 20);
	}
}

/* Load with max_bytes by both paths; r0 is the result without a budget, e0 its table. */
static void check_budget(const uint8_t *data, size_t size, uint64_t max, int r0,
			 const struct elfsym *e0)
{
	struct elfsym es, ef;
	int r, rf;

	r = elfsym_load_mem(data, size, max, &es);
	rf = elfsym_load_fd(memfd, max, &ef);
	FUZZ_CHECK(same_result(rf, r), "max_bytes %llu: elfsym_load_fd %d, elfsym_load_mem %d",
		   (unsigned long long)max, rf, r);
	if (!max)
		FUZZ_CHECK(r == r0, "max_bytes 0: %d, without a budget %d", r, r0);
	else
		FUZZ_CHECK(r == r0 || r == -ENOSPC, "max_bytes %llu: %d, without a budget %d",
			   (unsigned long long)max, r, r0);
	if (r == 0) {
		size_t mem = symtab_memory(es.syms);

		check_table(&es);
		check_same(&es, e0);
		check_same(&es, &ef);
		FUZZ_CHECK(!max || mem <= max + BUDGET_SLACK(max),
			   "max_bytes %llu: the table takes %zu bytes", (unsigned long long)max,
			   mem);
		FUZZ_CHECK(!max || symtab_memory(ef.syms) <= max + BUDGET_SLACK(max),
			   "max_bytes %llu: the fd table takes %zu bytes", (unsigned long long)max,
			   symtab_memory(ef.syms));
		elfsym_release(&es);
		elfsym_release(&ef);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym es, ef;
	uint64_t h = fuzz_hash(data, size);
	int r, rf;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_elfsym", MFD_CLOEXEC);
		FUZZ_CHECK(memfd >= 0, "memfd_create: %d", errno);
	}
	r = elfsym_load_mem(data, size, 0, &es);
	FUZZ_CHECK(r == 0 || r == -ENOEXEC || r == -EINVAL || r == -ENOMEM || r == -E2BIG,
		   "elfsym_load_mem: unexpected %d", r);
	if (r == 0)
		check_table(&es);

	FUZZ_CHECK(ftruncate(memfd, 0) == 0 && pwrite(memfd, data, size, 0) == (ssize_t)size,
		   "memfd write: %d", errno);
	rf = elfsym_load_fd(memfd, 0, &ef);
	FUZZ_CHECK(same_result(rf, r), "elfsym_load_fd %d, elfsym_load_mem %d", rf, r);
	if (rf == 0) {
		check_same(&es, &ef);
		elfsym_release(&ef);
	}
	/* Only ELF files reach the budget checks: the rest fail before any table exists. */
	if (r != -ENOEXEC && r != -EINVAL)
		check_budget(data, size, pick_budget(h, size), r, &es);
	if (r == 0)
		elfsym_release(&es);
	return 0;
}
