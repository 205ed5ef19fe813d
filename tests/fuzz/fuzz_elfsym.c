/* fuzz_elfsym.c: libFuzzer target for ELF symbol loading (daemon/elfsym.c, daemon/symtab.c).
 *
 * The input is an ELF file, as kprofd could find one in a target's mount namespace. It is loaded
 * from memory (elfsym_load_mem) and from a file descriptor (elfsym_load_fd on a memfd, the
 * glue's path through libelf's mmap reader); both must agree. A loaded table must be consistent:
 * symbols sorted, sized, named, inside the address space, each found by a lookup at its start
 * and its last byte; load segments at most ELFSYM_MAX_LOADS; elfsym_vaddr maps the start of
 * each segment to its vaddr. libelf itself is not instrumented: ASan sees its libc calls and
 * what it hands back, not its own loads.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "kprof/elfsym.h"

static int memfd = -1;

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

static void check_table(const struct elfsym *es)
{
	size_t n = symtab_count(es->syms);
	uint64_t prev = 0;

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
		FUZZ_CHECK(s->start >= prev, "symbols not sorted at %zu", i);
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
	FUZZ_CHECK(n == symtab_count(b->syms), "mem and fd: %zu and %zu symbols", n,
		   symtab_count(b->syms));
	for (size_t i = 0; i < n; i++) {
		const struct symtab_sym *x = symtab_at(a->syms, i), *y = symtab_at(b->syms, i);

		FUZZ_CHECK(x->start == y->start && x->size == y->size && !strcmp(x->name, y->name),
			   "mem and fd: symbol %zu differs", i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym es, ef;
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
	FUZZ_CHECK(rf == r, "elfsym_load_fd %d, elfsym_load_mem %d", rf, r);
	if (rf == 0) {
		check_same(&es, &ef);
		elfsym_release(&ef);
	}
	if (r == 0)
		elfsym_release(&es);
	return 0;
}
