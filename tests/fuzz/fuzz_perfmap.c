// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_perfmap.c: libFuzzer target for the perf-map parser and index (daemon/lib/perfmap.c).
 *
 * The input is the text of a perf map. It is fed in pieces whose sizes come from the input's
 * hash (torn lines, as from a JIT still writing), with lookups between pieces so the index is
 * built incrementally (the merge path), and then checked against a slow oracle written from the
 * grammar in perfmap.h: the same lines, entries, bad, long and dropped counts, the same pending
 * bytes, and for every probe address the same symbol ("the later line wins"). Symbols returned
 * by early lookups must still be intact at the end (entries never move). This runs twice: with
 * the default limits, and with tight limits drawn from the hash (long lines, the entries cap,
 * the byte cap). Finally a reset must bring the map back to empty and a re-feed to the same
 * stats.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/perfmap.h"

#define MAX_PROBE_ENTRIES 64 /* probe around the first and last this many oracle entries */
#define MAX_KEPT 8

struct oent {
	uint64_t start, size;
	const char *name;
	size_t nlen;
};

struct oracle {
	struct perfmap_stats st;
	size_t pending;
	struct oent *v;
	size_t n;
};

static bool o_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int o_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* [0x|0X] 1-16 hex digits, then a blank must follow. Index after the digits, or 0 if bad. */
static size_t o_hex(const char *s, size_t i, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t d = 0;

	if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	while (i < n && o_hexval(s[i]) >= 0) {
		if (++d > 16)
			return 0;
		v = v << 4 | (uint64_t)o_hexval(s[i++]);
	}
	if (!d || i >= n || !o_blank(s[i]))
		return 0;
	*out = v;
	return i;
}

/* One line without '\n': 1 and *e if it is a symbol, 0 if bad. */
static int o_line(const char *s, size_t n, struct oent *e)
{
	size_t i = 0;

	if (memchr(s, '\0', n))
		return 0;
	if (n && s[n - 1] == '\r')
		n--;
	while (i < n && o_blank(s[i]))
		i++;
	if (!(i = o_hex(s, i, n, &e->start)))
		return 0;
	while (i < n && o_blank(s[i]))
		i++;
	if (!(i = o_hex(s, i, n, &e->size)))
		return 0;
	while (i < n && o_blank(s[i]))
		i++;
	if (i == n || e->size == 0 || e->size > UINT64_MAX - e->start)
		return 0;
	e->name = s + i;
	e->nlen = n - i;
	return 1;
}

static void oracle_run(const char *s, size_t len, const struct perfmap_limits *lim,
		       struct oracle *o)
{
	size_t fed = len, ls = 0;

	memset(o, 0, sizeof(*o));
	if (fed > lim->max_bytes) {
		fed = (size_t)lim->max_bytes;
		o->st.truncated = 1;
	}
	o->st.bytes = fed;
	o->v = malloc((fed / 2 + 1) * sizeof(*o->v)); /* a line is at least 2 bytes with '\n' */
	FUZZ_CHECK(o->v, "out of memory");
	for (size_t i = 0; i < fed; i++) {
		struct oent e;

		if (s[i] != '\n')
			continue;
		o->st.lines++;
		if (i - ls > lim->max_line) {
			o->st.long_lines++;
			o->st.bad_lines++;
		} else if (!o_line(s + ls, i - ls, &e)) {
			o->st.bad_lines++;
		} else if (o->n >= lim->max_entries) {
			o->st.dropped++;
		} else {
			o->v[o->n++] = e;
			o->st.entries++;
		}
		ls = i + 1;
	}
	o->pending = fed - ls;
}

static const struct oent *oracle_lookup(const struct oracle *o, uint64_t addr)
{
	for (size_t i = o->n; i-- > 0;)
		if (addr >= o->v[i].start && addr - o->v[i].start < o->v[i].size)
			return &o->v[i];
	return NULL;
}

static void check_stats(const struct perfmap *pm, const struct oracle *o, const char *what)
{
	struct perfmap_stats st;

	perfmap_get_stats(pm, &st);
	FUZZ_CHECK(st.lines == st.entries + st.bad_lines + st.dropped,
		   "%s: lines %llu != entries %llu + bad %llu + dropped %llu", what,
		   (unsigned long long)st.lines, (unsigned long long)st.entries,
		   (unsigned long long)st.bad_lines, (unsigned long long)st.dropped);
	FUZZ_CHECK(st.long_lines <= st.bad_lines, "%s", what);
	FUZZ_CHECK(st.bytes == o->st.bytes && st.lines == o->st.lines &&
		       st.entries == o->st.entries && st.bad_lines == o->st.bad_lines &&
		       st.long_lines == o->st.long_lines && st.dropped == o->st.dropped &&
		       st.truncated == o->st.truncated,
		   "%s: stats differ from the oracle: bytes %llu/%llu lines %llu/%llu entries "
		   "%llu/%llu bad %llu/%llu long %llu/%llu dropped %llu/%llu truncated %d/%d",
		   what, (unsigned long long)st.bytes, (unsigned long long)o->st.bytes,
		   (unsigned long long)st.lines, (unsigned long long)o->st.lines,
		   (unsigned long long)st.entries, (unsigned long long)o->st.entries,
		   (unsigned long long)st.bad_lines, (unsigned long long)o->st.bad_lines,
		   (unsigned long long)st.long_lines, (unsigned long long)o->st.long_lines,
		   (unsigned long long)st.dropped, (unsigned long long)o->st.dropped, st.truncated,
		   o->st.truncated);
	FUZZ_CHECK(perfmap_pending(pm) == o->pending, "%s: pending %zu, oracle %zu", what,
		   perfmap_pending(pm), o->pending);
}

static void check_lookup(struct perfmap *pm, const struct oracle *o, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_lookup(pm, addr);
	const struct oent *e = oracle_lookup(o, addr);

	FUZZ_CHECK(!s == !e, "lookup %#llx: %s, oracle %s", (unsigned long long)addr,
		   s ? s->name : "none", e ? "a symbol" : "none");
	if (!s)
		return;
	FUZZ_CHECK(s->start == e->start && s->size == e->size && strlen(s->name) == e->nlen &&
		       !memcmp(s->name, e->name, e->nlen),
		   "lookup %#llx: got %#llx+%#llx '%s', oracle %#llx+%#llx",
		   (unsigned long long)addr, (unsigned long long)s->start,
		   (unsigned long long)s->size, s->name, (unsigned long long)e->start,
		   (unsigned long long)e->size);
}

static void check_lookups(struct perfmap *pm, const struct oracle *o, const uint8_t *data,
			  size_t size)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct oent *e;

		if (i == MAX_PROBE_ENTRIES && o->n > 2 * MAX_PROBE_ENTRIES)
			i = o->n - MAX_PROBE_ENTRIES;
		e = &o->v[i];
		check_lookup(pm, o, e->start);
		check_lookup(pm, o, e->start - 1);
		check_lookup(pm, o, e->start + e->size - 1);
		check_lookup(pm, o, e->start + e->size);
	}
	check_lookup(pm, o, 0);
	check_lookup(pm, o, UINT64_MAX);
	for (size_t i = 0; i < size && i < 16 * 8; i += 8)
		check_lookup(pm, o, fuzz_word(data + i, size - i));
}

/* A symbol handed out mid-stream, with a copy of what it said then. */
struct kept {
	const struct perfmap_sym *s;
	uint64_t start, size;
	char name[32];
	size_t nlen;
};

static void run(const uint8_t *data, size_t size, const struct perfmap_limits *lim, uint64_t seed,
		bool reset_again)
{
	const char *text = (const char *)data;
	struct perfmap *pm = NULL;
	struct oracle o;
	struct kept kept[MAX_KEPT];
	size_t nkept = 0, off = 0;
	int r;

	oracle_run(text, size, lim, &o);
	FUZZ_CHECK(perfmap_new(lim, &pm) == 0, "perfmap_new");
	while (off < size) {
		size_t n = fuzz_piece(&seed, size - off);
		uint64_t c = prng_next(&seed);

		r = perfmap_feed(pm, text + off, n);
		FUZZ_CHECK(r >= 0, "perfmap_feed: %d", r);
		off += n;
		if ((c & 7) == 0) {
			FUZZ_CHECK(perfmap_build_index(pm) == 0, "perfmap_build_index");
		} else if ((c & 7) == 1 && o.n) {
			/* An address inside some symbol: maybe one fed already. */
			const struct oent *e = &o.v[(c >> 8) % o.n];
			const struct perfmap_sym *s =
			    perfmap_lookup(pm, e->start + (c >> 32) % e->size);

			if (s && nkept < MAX_KEPT) {
				struct kept *k = &kept[nkept++];

				k->s = s;
				k->start = s->start;
				k->size = s->size;
				k->nlen = strlen(s->name);
				memcpy(k->name, s->name,
				       k->nlen < sizeof(k->name) ? k->nlen : sizeof(k->name));
			}
		}
	}
	check_stats(pm, &o, "pieces");
	check_lookups(pm, &o, data, size);
	FUZZ_CHECK(perfmap_memory(pm) > 0, "perfmap_memory");
	for (size_t i = 0; i < nkept; i++) {
		const struct kept *k = &kept[i];

		FUZZ_CHECK(k->s->start == k->start && k->s->size == k->size &&
			       strlen(k->s->name) == k->nlen &&
			       !memcmp(k->s->name, k->name,
				       k->nlen < sizeof(k->name) ? k->nlen : sizeof(k->name)),
			   "a symbol returned by an earlier lookup changed");
	}

	if (reset_again) {
		struct perfmap_stats st, zero = {0};

		perfmap_reset(pm);
		perfmap_get_stats(pm, &st);
		FUZZ_CHECK(!memcmp(&st, &zero, sizeof(st)), "stats not zero after reset");
		FUZZ_CHECK(perfmap_pending(pm) == 0, "pending after reset");
		FUZZ_CHECK(perfmap_lookup(pm, o.n ? o.v[0].start : 0) == NULL,
			   "symbol after reset");
		r = perfmap_feed(pm, text, size);
		FUZZ_CHECK(r >= 0, "perfmap_feed after reset: %d", r);
		FUZZ_CHECK((uint64_t)r == o.st.entries || r == INT_MAX,
			   "feed returned %d, oracle %llu", r, (unsigned long long)o.st.entries);
		check_stats(pm, &o, "after reset");
		if (o.n)
			check_lookup(pm, &o, o.v[o.n - 1].start);
	}
	perfmap_free(pm);
	free(o.v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	/* The documented defaults, spelled out so the oracle knows them. */
	const struct perfmap_limits def = {
	    .max_line = 4096, .max_entries = 4u << 20, .max_bytes = UINT64_C(512) << 20};
	const struct perfmap_limits tight = {
	    .max_line = 1 + (size_t)(h % 80),
	    .max_entries = 1 + (size_t)((h >> 8) % 32),
	    .max_bytes = 1 + (h >> 16) % (size + 16),
	};

	run(data, size, &def, h, true);
	run(data, size, &tight, h ^ UINT64_C(0x5bd1e995), false);
	return 0;
}
