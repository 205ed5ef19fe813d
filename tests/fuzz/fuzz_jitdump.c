// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_jitdump.c: libFuzzer target for the jitdump parser (daemon/lib/jitdump.c).
 *
 * The input is a jitdump file; it is parsed as is, and again behind a good header (in either
 * byte order, from the input's hash) so that inputs without the magic still reach the records.
 * Each file is parsed in one call (the reference), then fed in pieces whose sizes come from the
 * hash, the way the daemon reads a file that grows: once keeping the whole file read so far (the
 * cursor moves on), once keeping only the unconsumed tail (a fresh copy of exactly those bytes
 * each time, so ASan sees any read past it), and once with callbacks that fail now and then (the
 * record must come again on the next call, counted once). All must end with the same callbacks
 * (a digest of every field and byte delivered), the same stats, cursor and error. On every call:
 * the cursor never passes the bytes given, st.bytes follows it, the stats add up, an error is
 * sticky; on every callback: names, code and file names lie inside the buffer given and inside
 * their record (found back from the name: the load's fixed part is right before it), names have
 * no NUL and respect max_name, sizes are non-zero and do not overflow, a debug record yields
 * exactly nr_entry lines. The limits are the defaults, then tight ones drawn from the hash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/jitdump.h"

#define MAX_FILE (1u << 20)

struct ctx {
	const uint8_t *buf; /* the buffer of the current call */
	size_t len;
	const struct jitdump *jd;
	uint64_t digest;
	uint64_t calls;	  /* callbacks so far */
	uint64_t rng;	  /* for failures, when fail is set */
	bool fail;	  /* callbacks fail now and then */
	bool failed_last; /* the last callback failed: the next one must be the same record */
};

static void digest_bytes(struct ctx *c, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		c->digest = (c->digest ^ b[i]) * UINT64_C(0x100000001b3);
}

static void digest_u64(struct ctx *c, uint64_t v)
{
	digest_bytes(c, &v, sizeof(v));
}

static void check_inside(const struct ctx *c, const void *p, size_t n, const char *what)
{
	const uint8_t *q = p;

	FUZZ_CHECK(q >= c->buf && n <= c->len && (size_t)(q - c->buf) <= c->len - n,
		   "%s outside the buffer", what);
}

static uint32_t rd32(const struct ctx *c, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return c->jd->hdr.swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct ctx *c, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return c->jd->hdr.swapped ? __builtin_bswap64(v) : v;
}

/* Inject a failure? Never twice in a row, so that every call makes progress. */
static bool fail_now(struct ctx *c)
{
	c->calls++;
	if (!c->fail || c->failed_last || prng_next(&c->rng) % 4) {
		c->failed_last = false;
		return false;
	}
	c->failed_last = true;
	return true;
}

static int on_header(const struct jitdump_header *h, void *ud)
{
	struct ctx *c = ud;

	if (fail_now(c))
		return -EIO;
	FUZZ_CHECK(h->version == JITDUMP_VERSION, "version %u", h->version);
	FUZZ_CHECK(h->total_size >= JITDUMP_HEADER_SIZE && h->total_size <= c->jd->lim.max_record,
		   "header size %u", h->total_size);
	FUZZ_CHECK(!(h->flags & ~(uint64_t)JITDUMP_FLAG_ARCH_TIMESTAMP), "flags");
	digest_bytes(c, "H", 1);
	digest_u64(c, h->total_size ^ (uint64_t)h->elf_mach << 32);
	digest_u64(c, h->pid ^ (uint64_t)h->swapped << 32);
	digest_u64(c, h->timestamp);
	digest_u64(c, h->flags);
	return 0;
}

/* The load's record, found back from its name, holds what was delivered. */
static void check_load_record(const struct ctx *c, const struct jitdump_load *l)
{
	const uint8_t *name = (const uint8_t *)l->name, *rec = name - 56, *end;
	uint32_t size;

	FUZZ_CHECK(name - c->buf >= 56, "no room for the load's fixed part before its name");
	FUZZ_CHECK(rd32(c, rec) == JITDUMP_CODE_LOAD, "not a load record");
	size = rd32(c, rec + 4);
	FUZZ_CHECK(size <= c->jd->lim.max_record, "record size %u", size);
	check_inside(c, rec, size, "load record");
	end = rec + size;
	FUZZ_CHECK(rd64(c, rec + 24) == l->vma && rd64(c, rec + 32) == l->code_addr &&
		       rd64(c, rec + 40) == l->code_size && rd64(c, rec + 48) == l->code_index,
		   "the load's fields are not its record's");
	FUZZ_CHECK(l->code > name && l->code < end && l->code[-1] == '\0' &&
		       (size_t)(l->code - name) - 1 >= l->name_len,
		   "code does not follow the name's NUL");
	FUZZ_CHECK(memchr(name, '\0', (size_t)(l->code - name)) == l->code - 1,
		   "a NUL inside the name");
	FUZZ_CHECK(l->code_size <= (uint64_t)(end - l->code), "code past the record");
}

static int on_load(const struct jitdump_load *l, void *ud)
{
	struct ctx *c = ud;

	if (fail_now(c))
		return -ENOMEM;
	FUZZ_CHECK(l->name_len >= 1 && l->name_len <= c->jd->lim.max_name, "name_len %zu",
		   l->name_len);
	check_inside(c, l->name, l->name_len, "name");
	FUZZ_CHECK(!memchr(l->name, '\0', l->name_len), "NUL in a name");
	FUZZ_CHECK(l->code_size > 0, "empty code");
	FUZZ_CHECK(l->code_size <= UINT64_MAX - l->vma && l->code_size <= UINT64_MAX - l->code_addr,
		   "address overflow");
	check_inside(c, l->code, (size_t)l->code_size, "code");
	check_load_record(c, l);
	digest_bytes(c, "L", 1);
	digest_u64(c, l->timestamp);
	digest_u64(c, l->pid ^ (uint64_t)l->tid << 32);
	digest_u64(c, l->vma);
	digest_u64(c, l->code_addr);
	digest_u64(c, l->code_size);
	digest_u64(c, l->code_index);
	digest_bytes(c, l->name, l->name_len);
	digest_bytes(c, l->code, (size_t)l->code_size);
	return 0;
}

static int on_move(const struct jitdump_move *m, void *ud)
{
	struct ctx *c = ud;

	if (fail_now(c))
		return -ENOMEM;
	FUZZ_CHECK(m->code_size > 0, "empty move");
	FUZZ_CHECK(m->code_size <= UINT64_MAX - m->vma &&
		       m->code_size <= UINT64_MAX - m->old_code_addr &&
		       m->code_size <= UINT64_MAX - m->new_code_addr,
		   "move overflow");
	digest_bytes(c, "M", 1);
	digest_u64(c, m->timestamp);
	digest_u64(c, m->pid ^ (uint64_t)m->tid << 32);
	digest_u64(c, m->vma);
	digest_u64(c, m->old_code_addr);
	digest_u64(c, m->new_code_addr);
	digest_u64(c, m->code_size);
	digest_u64(c, m->code_index);
	return 0;
}

static int on_debug(const struct jitdump_debug *d, void *ud)
{
	struct ctx *c = ud;
	struct jitdump_line line = {0};
	uint64_t n = 0;

	if (fail_now(c))
		return -ENOMEM;
	FUZZ_CHECK(d->nr_entry >= 1, "no entry");
	digest_bytes(c, "D", 1);
	digest_u64(c, d->timestamp);
	digest_u64(c, d->code_addr);
	digest_u64(c, d->nr_entry);
	while (jitdump_debug_next(d, &line) == 1) {
		FUZZ_CHECK(line.file_len <= c->jd->lim.max_name, "file_len %zu", line.file_len);
		check_inside(c, line.file, line.file_len, "file");
		FUZZ_CHECK(!memchr(line.file, '\0', line.file_len), "NUL in a file name");
		digest_u64(c, line.addr);
		digest_u64(c, line.lineno ^ (uint64_t)line.discrim << 32);
		digest_bytes(c, line.file, line.file_len);
		n++;
	}
	FUZZ_CHECK(n == d->nr_entry, "%llu lines of %llu", (unsigned long long)n,
		   (unsigned long long)d->nr_entry);
	return 0;
}

static int on_close(uint64_t ts, void *ud)
{
	struct ctx *c = ud;

	if (fail_now(c))
		return -EIO;
	digest_bytes(c, "C", 1);
	digest_u64(c, ts);
	return 0;
}

static const struct jitdump_ops ops = {
    .on_header = on_header,
    .on_load = on_load,
    .on_move = on_move,
    .on_debug = on_debug,
    .on_close = on_close,
};

struct result {
	struct jitdump_stats st;
	uint64_t digest;
	int err;
};

static void check_stats(const struct jitdump *jd)
{
	const struct jitdump_stats *s = &jd->st;

	FUZZ_CHECK(s->records == s->loads + s->moves + s->debug_infos + s->closes +
				     s->unwinding_infos + s->unknown + s->bad_records,
		   "records do not add up");
	FUZZ_CHECK(jd->have_header || s->bytes == 0, "bytes without a header");
}

/* One call on buf[*off..len), with the checks that hold after any call. */
static int call(struct jitdump *jd, struct ctx *c, const uint8_t *buf, size_t len, size_t *off)
{
	uint64_t bytes = jd->st.bytes, records = jd->st.records;
	size_t before = *off;
	int err = jd->err, r;

	c->buf = buf;
	c->len = len;
	r = jitdump_parse(jd, buf, len, off, &ops, c);
	FUZZ_CHECK(*off >= before && *off <= len, "cursor %zu -> %zu, len %zu", before, *off, len);
	FUZZ_CHECK(jd->st.bytes - bytes == *off - before, "bytes and cursor disagree");
	FUZZ_CHECK(!err || (r == err && *off == before), "error not sticky");
	if (r >= 0)
		FUZZ_CHECK((uint64_t)r == jd->st.records - records, "returned %d, %llu records", r,
			   (unsigned long long)(jd->st.records - records));
	else
		FUZZ_CHECK(r == jd->err || (r == -ENOMEM || r == -EIO), "unexpected error %d", r);
	if (r >= 0 && !jd->err)
		FUZZ_CHECK(jd->want > len - *off && jd->want <= jd->lim.max_record,
			   "want %zu with %zu bytes left", jd->want, len - *off);
	check_stats(jd);
	return r;
}

static void finish(const struct jitdump *jd, const struct ctx *c, struct result *res)
{
	res->st = jd->st;
	res->digest = c->digest;
	res->err = jd->err;
}

static void same(const struct result *a, const struct result *b, const char *how)
{
	FUZZ_CHECK(a->err == b->err, "%s: error %d, reference %d", how, b->err, a->err);
	FUZZ_CHECK(!memcmp(&a->st, &b->st, sizeof(a->st)), "%s: stats differ", how);
	FUZZ_CHECK(a->digest == b->digest, "%s: callbacks differ", how);
}

/* The whole file read so far, the cursor moving on; with failing callbacks if fail. */
static void by_pieces(const uint8_t *f, size_t n, const struct jitdump_limits *lim, uint64_t *s,
		      bool fail, struct result *res)
{
	struct jitdump jd;
	struct ctx c = {.jd = &jd, .fail = fail, .rng = *s};
	size_t fed = 0, off = 0;

	jitdump_init(&jd, lim);
	while (fed < n) {
		fed += fuzz_piece(s, n - fed);
		while (call(&jd, &c, f, fed, &off) < 0 && !jd.err)
			; /* an injected failure: call again (never fails twice in a row) */
	}
	if (n == 0)
		call(&jd, &c, f, 0, &off);
	finish(&jd, &c, res);
}

/* Only the unconsumed tail, copied into a buffer of its exact size. */
static void by_tails(const uint8_t *f, size_t n, const struct jitdump_limits *lim, uint64_t *s,
		     struct result *res)
{
	struct jitdump jd;
	struct ctx c = {.jd = &jd};
	size_t fed = 0;

	jitdump_init(&jd, lim);
	while (fed < n && !jd.err) {
		size_t base = (size_t)jd.st.bytes, off = 0;
		uint8_t *tail;

		fed += fuzz_piece(s, n - fed);
		tail = malloc(fed - base);
		FUZZ_CHECK(tail, "out of memory");
		memcpy(tail, f + base, fed - base);
		call(&jd, &c, tail, fed - base, &off);
		free(tail);
	}
	finish(&jd, &c, res);
}

static void run(const uint8_t *f, size_t n, const struct jitdump_limits *lim, uint64_t seed)
{
	struct result ref, got;
	struct jitdump jd;
	struct ctx c = {.jd = &jd};
	size_t off = 0;

	jitdump_init(&jd, lim);
	call(&jd, &c, f, n, &off);
	finish(&jd, &c, &ref);

	by_pieces(f, n, lim, &seed, false, &got);
	same(&ref, &got, "pieces");
	by_tails(f, n, lim, &seed, &got);
	same(&ref, &got, "tails");
	by_pieces(f, n, lim, &seed, true, &got);
	same(&ref, &got, "failing callbacks");
}

static void put32(uint8_t *p, uint32_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);
	const struct jitdump_limits tight = {
	    .max_record = (uint32_t)(64 + (h >> 8) % 1024),
	    .max_name = 1 + (size_t)((h >> 24) % 64),
	};
	bool swap = h & 1;
	uint8_t *f;

	if (size > MAX_FILE)
		return 0;
	run(data, size, NULL, h);
	run(data, size, &tight, h ^ 1);

	/* behind a good header */
	f = malloc(JITDUMP_HEADER_SIZE + size);
	FUZZ_CHECK(f, "out of memory");
	memset(f, 0, JITDUMP_HEADER_SIZE);
	put32(f, JITDUMP_MAGIC, swap);
	put32(f + 4, JITDUMP_VERSION, swap);
	put32(f + 8, JITDUMP_HEADER_SIZE, swap);
	put32(f + 12, 62, swap);
	put32(f + 20, 4242, swap);
	if (size)
		memcpy(f + JITDUMP_HEADER_SIZE, data, size);
	run(f, JITDUMP_HEADER_SIZE + size, NULL, h ^ 2);
	run(f, JITDUMP_HEADER_SIZE + size, &tight, h ^ 3);
	free(f);
	return 0;
}
