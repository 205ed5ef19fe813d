// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_procmaps.c: libFuzzer target for the /proc/PID/maps parser (daemon/lib/procmaps.c).
 *
 * The input is the text of a maps file. It is parsed with a generous cap and with a small one
 * drawn from the input's hash. Every entry must be well formed (start < end, perms a 4-byte
 * string, path a string within one line), entries sorted by start, count + bad lines no more
 * than the lines, the count within the cap. procmaps_find must return a mapping containing the
 * address whenever one does, and only then. Overlapping lines are possible in real input: the
 * glue reads the file in several read()s while the target maps and unmaps (a JIT does so all
 * the time), and a mapping that grew between two reads is printed again. When the mappings are
 * disjoint (the usual case) find must also agree with a linear scan exactly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/procmaps.h"

static const struct procmaps_entry *naive_find(const struct procmaps *pm, uint64_t addr)
{
	for (size_t i = 0; i < procmaps_count(pm); i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);

		if (e->start <= addr && addr < e->end)
			return e;
	}
	return NULL;
}

static void check_find(const struct procmaps *pm, uint64_t addr, bool disjoint)
{
	const struct procmaps_entry *e = procmaps_find(pm, addr);

	if (e)
		FUZZ_CHECK(e->start <= addr && addr < e->end, "find %#llx: wrong mapping",
			   (unsigned long long)addr);
	else
		FUZZ_CHECK(!naive_find(pm, addr), "find %#llx: NULL, but a mapping contains it",
			   (unsigned long long)addr);
	if (disjoint)
		FUZZ_CHECK(e == naive_find(pm, addr), "find %#llx differs from a linear scan",
			   (unsigned long long)addr);
}

static void run(const uint8_t *data, size_t size, size_t max)
{
	const char *text = (const char *)data;
	struct procmaps *pm = NULL;
	size_t lines = 1, n;
	bool disjoint = true;
	int r;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	r = procmaps_parse(text, size, max, &pm);
	FUZZ_CHECK(r == 0 && pm, "procmaps_parse: %d", r);
	n = procmaps_count(pm);
	FUZZ_CHECK(n <= max, "%zu entries, cap %zu", n, max);
	FUZZ_CHECK(n + procmaps_bad_lines(pm) <= lines, "%zu entries + %zu bad > %zu lines", n,
		   procmaps_bad_lines(pm), lines);
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);
		size_t plen;

		FUZZ_CHECK(e, "procmaps_at(%zu)", i);
		FUZZ_CHECK(e->start < e->end, "entry %zu: empty range", i);
		FUZZ_CHECK(strlen(e->perms) == 4, "entry %zu: perms", i);
		FUZZ_CHECK(e->path, "entry %zu: NULL path", i);
		plen = strlen(e->path);
		FUZZ_CHECK(!memchr(e->path, '\n', plen) && plen <= size, "entry %zu: path", i);
		FUZZ_CHECK(procmaps_is_exec(e) == (e->perms[2] == 'x'), "is_exec");
		if (i) {
			const struct procmaps_entry *p = procmaps_at(pm, i - 1);

			FUZZ_CHECK(p->start <= e->start, "entries not sorted at %zu", i);
			if (p->end > e->start)
				disjoint = false;
		}
	}
	FUZZ_CHECK(procmaps_at(pm, n) == NULL, "procmaps_at past the end");
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(pm, i);

		check_find(pm, e->start, disjoint);
		check_find(pm, e->end - 1, disjoint);
		check_find(pm, e->end, disjoint);
		check_find(pm, e->start - 1, disjoint);
		if (disjoint)
			FUZZ_CHECK(procmaps_find(pm, e->start) == e &&
				       procmaps_find(pm, e->end - 1) == e,
				   "entry %zu not found at its own addresses", i);
	}
	for (size_t i = 0; i < size && i < 16 * 8; i += 8)
		check_find(pm, fuzz_word(data + i, size - i), disjoint);
	procmaps_free(pm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);

	run(data, size, 1u << 16);
	run(data, size, (size_t)(h % 8));
	return 0;
}
