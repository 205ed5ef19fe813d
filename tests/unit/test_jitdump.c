// SPDX-License-Identifier: GPL-2.0-only
/* test_jitdump.c: unit tests for the jitdump parser (links daemon/lib/jitdump.c alone).
 *
 * Files are written byte by byte by a small writer (either byte order), parsed, and the
 * callbacks logged as text: a test compares the log with the exact expected text, or the logs of
 * two ways of feeding the same file with each other.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/jitdump.h"

/* ---- the writer ---- */

struct w {
	uint8_t buf[1 << 16];
	size_t len;
	size_t rec; /* start of the record being written */
	bool swap;
};

static void put(struct w *w, const void *p, size_t n)
{
	assert_true(w->len + n <= sizeof(w->buf));
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put32(struct w *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	put(w, &v, sizeof(v));
}

static void put64(struct w *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	put(w, &v, sizeof(v));
}

static void put_str(struct w *w, const char *s)
{
	put(w, s, strlen(s) + 1);
}

static void put_header(struct w *w, uint32_t version, uint32_t total_size, uint64_t flags)
{
	put32(w, JITDUMP_MAGIC);
	put32(w, version);
	put32(w, total_size);
	put32(w, 62); /* EM_X86_64 */
	put32(w, 0);
	put32(w, 4242);
	put64(w, 1000);
	put64(w, flags);
}

static void rec_begin(struct w *w, uint32_t id, uint64_t ts)
{
	w->rec = w->len;
	put32(w, id);
	put32(w, 0); /* total_size, set by rec_end */
	put64(w, ts);
}

/* Set the total_size of the record at rec. */
static void set_size(struct w *w, size_t rec, uint32_t size)
{
	if (w->swap)
		size = __builtin_bswap32(size);
	memcpy(w->buf + rec + 4, &size, sizeof(size));
}

static void rec_end(struct w *w)
{
	set_size(w, w->rec, (uint32_t)(w->len - w->rec));
}

/* A load record with ncode bytes of code (and a code_size field of size). */
static void put_load_raw(struct w *w, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
			 const char *name, size_t ncode)
{
	rec_begin(w, JITDUMP_CODE_LOAD, ts);
	put32(w, 4242);
	put32(w, 4243);
	put64(w, addr); /* vma */
	put64(w, addr); /* code_addr */
	put64(w, size);
	put64(w, index);
	put_str(w, name);
	for (size_t i = 0; i < ncode; i++)
		put(w, &(uint8_t){(uint8_t)(0xc0 + i)}, 1);
	rec_end(w);
}

static void put_load(struct w *w, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
		     const char *name)
{
	put_load_raw(w, ts, addr, size, index, name, (size_t)size);
}

static void put_move(struct w *w, uint64_t ts, uint64_t from, uint64_t to, uint64_t size,
		     uint64_t index)
{
	rec_begin(w, JITDUMP_CODE_MOVE, ts);
	put32(w, 4242);
	put32(w, 4244);
	put64(w, to); /* vma */
	put64(w, from);
	put64(w, to);
	put64(w, size);
	put64(w, index);
	rec_end(w);
}

struct entry {
	uint64_t addr;
	uint32_t lineno, discrim;
	const char *file;
};

static void put_debug(struct w *w, uint64_t ts, uint64_t addr, uint64_t nr_entry,
		      const struct entry *e, size_t n)
{
	rec_begin(w, JITDUMP_CODE_DEBUG_INFO, ts);
	put64(w, addr);
	put64(w, nr_entry);
	for (size_t i = 0; i < n; i++) {
		put64(w, e[i].addr);
		put32(w, e[i].lineno);
		put32(w, e[i].discrim);
		put_str(w, e[i].file);
	}
	while ((w->len - w->rec) % 8) /* as perf's agent pads */
		put(w, "", 1);
	rec_end(w);
}

static void put_close(struct w *w, uint64_t ts)
{
	rec_begin(w, JITDUMP_CODE_CLOSE, ts);
	rec_end(w);
}

static void put_unwinding(struct w *w, uint64_t ts, uint64_t size, uint64_t hdr_size, size_t ndata)
{
	rec_begin(w, JITDUMP_CODE_UNWINDING_INFO, ts);
	put64(w, size);
	put64(w, hdr_size);
	put64(w, size); /* mapped_size */
	for (size_t i = 0; i < ndata; i++)
		put(w, "\x1b", 1);
	rec_end(w);
}

/* ---- the log of the callbacks ---- */

struct log {
	char text[1 << 16];
	size_t len;
	const uint8_t *buf; /* the buffer being parsed: every pointer handed out is inside it */
	size_t buf_len;
	int fail_load; /* the on_load call that fails with -ENOMEM (1 = the first), 0: none */
	int fail_header;
	int loads;
};

static void logf_(struct log *lg, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(lg->text + lg->len, sizeof(lg->text) - lg->len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(lg->text) - lg->len);
	lg->len += (size_t)n;
}

static void inside(const struct log *lg, const void *p, size_t n)
{
	const uint8_t *q = p;

	assert_true(q >= lg->buf && n <= lg->buf_len && (size_t)(q - lg->buf) <= lg->buf_len - n);
}

static int on_header(const struct jitdump_header *h, void *ud)
{
	struct log *lg = ud;

	if (lg->fail_header && !--lg->fail_header)
		return -EIO;
	logf_(lg, "header v%u size %u mach %u pid %u ts %llu flags %llx\n", h->version,
	      h->total_size, h->elf_mach, h->pid, (unsigned long long)h->timestamp,
	      (unsigned long long)h->flags);
	return 0;
}

static int on_load(const struct jitdump_load *l, void *ud)
{
	struct log *lg = ud;

	lg->loads++;
	if (lg->fail_load && lg->loads == lg->fail_load)
		return -ENOMEM;
	inside(lg, l->name, l->name_len);
	inside(lg, l->code, (size_t)l->code_size);
	assert_null(memchr(l->name, '\0', l->name_len));
	logf_(lg, "load ts %llu pid %u tid %u vma %llx addr %llx size %llu index %llu %.*s:",
	      (unsigned long long)l->timestamp, l->pid, l->tid, (unsigned long long)l->vma,
	      (unsigned long long)l->code_addr, (unsigned long long)l->code_size,
	      (unsigned long long)l->code_index, (int)l->name_len, l->name);
	for (uint64_t i = 0; i < l->code_size && i < 8; i++)
		logf_(lg, " %02x", l->code[i]);
	logf_(lg, "\n");
	return 0;
}

static int on_move(const struct jitdump_move *m, void *ud)
{
	logf_(ud, "move ts %llu pid %u tid %u vma %llx %llx -> %llx size %llu index %llu\n",
	      (unsigned long long)m->timestamp, m->pid, m->tid, (unsigned long long)m->vma,
	      (unsigned long long)m->old_code_addr, (unsigned long long)m->new_code_addr,
	      (unsigned long long)m->code_size, (unsigned long long)m->code_index);
	return 0;
}

static int on_debug(const struct jitdump_debug *d, void *ud)
{
	struct log *lg = ud;
	struct jitdump_line line = {0};
	uint64_t n = 0;

	logf_(lg, "debug ts %llu addr %llx n %llu:", (unsigned long long)d->timestamp,
	      (unsigned long long)d->code_addr, (unsigned long long)d->nr_entry);
	while (jitdump_debug_next(d, &line) == 1) {
		inside(lg, line.file, line.file_len);
		logf_(lg, " %llx %s:%u:%u", (unsigned long long)line.addr,
		      line.file_len > 40 ? "(long)" : "", line.lineno, line.discrim);
		if (line.file_len <= 40)
			logf_(lg, "%.*s", (int)line.file_len, line.file);
		n++;
	}
	assert_int_equal(n, d->nr_entry);
	assert_int_equal(jitdump_debug_next(d, &line), 0); /* stays at the end */
	logf_(lg, "\n");
	return 0;
}

static int on_close(uint64_t ts, void *ud)
{
	logf_(ud, "close ts %llu\n", (unsigned long long)ts);
	return 0;
}

static const struct jitdump_ops ops = {
    .on_header = on_header,
    .on_load = on_load,
    .on_move = on_move,
    .on_debug = on_debug,
    .on_close = on_close,
};

static int parse(struct jitdump *jd, struct log *lg, const uint8_t *buf, size_t len, size_t *off)
{
	lg->buf = buf;
	lg->buf_len = len;
	return jitdump_parse(jd, buf, len, off, &ops, lg);
}

/* The whole file in one call. */
static int parse_all(struct jitdump *jd, const struct jitdump_limits *lim, struct log *lg,
		     const struct w *w, size_t *off)
{
	jitdump_init(jd, lim);
	memset(lg, 0, sizeof(*lg));
	*off = 0;
	return parse(jd, lg, w->buf, w->len, off);
}

static void check_stats(const struct jitdump_stats *st)
{
	assert_int_equal(st->records, st->loads + st->moves + st->debug_infos + st->closes +
					  st->unwinding_infos + st->unknown + st->bad_records);
}

/* ---- a normal file ---- */

static const struct entry lines[] = {
    {0x7f0000001000, 12, 0, "/srv/app.js"},
    {0x7f0000001004, 13, 2, "\xff"},
    {0x7f0000001008, 40, 0, "lib.js"},
};

static void write_sample(struct w *w, bool swap)
{
	memset(w, 0, sizeof(*w));
	w->swap = swap;
	put_header(w, JITDUMP_VERSION, JITDUMP_HEADER_SIZE, JITDUMP_FLAG_ARCH_TIMESTAMP);
	put_debug(w, 2000, 0x7f0000001000, 3, lines, 3);
	put_load(w, 2001, 0x7f0000001000, 16, 1, "LazyCompile:~foo /srv/app.js:12");
	put_load(w, 2002, 0x7f0000002000, 5, 2, "bar");
	put_unwinding(w, 2003, 24, 8, 24);
	put_move(w, 2004, 0x7f0000002000, 0x7f0000003000, 5, 2);
	put_load(w, 2005, 0x7f0000004000, 1, 3, "b");
	put_close(w, 2006);
}

static const char sample_log[] =
    "header v1 size 40 mach 62 pid 4242 ts 1000 flags 1\n"
    "debug ts 2000 addr 7f0000001000 n 3: 7f0000001000 :12:0/srv/app.js 7f0000001004 "
    ":13:2/srv/app.js 7f0000001008 :40:0lib.js\n"
    "load ts 2001 pid 4242 tid 4243 vma 7f0000001000 addr 7f0000001000 size 16 index 1 "
    "LazyCompile:~foo /srv/app.js:12: c0 c1 c2 c3 c4 c5 c6 c7\n"
    "load ts 2002 pid 4242 tid 4243 vma 7f0000002000 addr 7f0000002000 size 5 index 2 bar: c0 c1 "
    "c2 c3 c4\n"
    "move ts 2004 pid 4242 tid 4244 vma 7f0000003000 7f0000002000 -> 7f0000003000 size 5 index "
    "2\n"
    "load ts 2005 pid 4242 tid 4243 vma 7f0000004000 addr 7f0000004000 size 1 index 3 b: c0\n"
    "close ts 2006\n";

static void expect_sample_stats(const struct jitdump *jd, size_t len)
{
	assert_int_equal(jd->err, 0);
	assert_true(jd->have_header);
	assert_int_equal(jd->st.bytes, len);
	assert_int_equal(jd->st.records, 7);
	assert_int_equal(jd->st.loads, 3);
	assert_int_equal(jd->st.moves, 1);
	assert_int_equal(jd->st.debug_infos, 1);
	assert_int_equal(jd->st.closes, 1);
	assert_int_equal(jd->st.unwinding_infos, 1);
	assert_int_equal(jd->st.unknown, 0);
	assert_int_equal(jd->st.bad_records, 0);
	assert_int_equal(jd->st.long_names, 0);
	check_stats(&jd->st);
}

static void test_normal(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off;

	(void)state;
	write_sample(&w, false);
	assert_int_equal(parse_all(&jd, NULL, &lg, &w, &off), 7);
	assert_string_equal(lg.text, sample_log);
	assert_int_equal(off, w.len);
	expect_sample_stats(&jd, w.len);
	assert_int_equal(jd.hdr.version, 1);
	assert_int_equal(jd.hdr.pid, 4242);
	assert_int_equal(jd.hdr.elf_mach, 62);
	assert_int_equal(jd.hdr.flags, JITDUMP_FLAG_ARCH_TIMESTAMP);
	assert_false(jd.hdr.swapped);
	assert_int_equal(jd.want, JITDUMP_PREFIX_SIZE);

	/* nothing more: nothing happens */
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), 0);
	assert_int_equal(off, w.len);
	assert_string_equal(lg.text, sample_log);

	/* no callbacks: the same counts */
	jitdump_init(&jd, NULL);
	off = 0;
	assert_int_equal(jitdump_parse(&jd, w.buf, w.len, &off, NULL, NULL), 7);
	expect_sample_stats(&jd, w.len);
}

static void test_swapped(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off;

	(void)state;
	write_sample(&w, true);
	assert_int_equal(w.buf[0], 'J'); /* "JiTD" in the file's first bytes: big-endian */
	assert_int_equal(parse_all(&jd, NULL, &lg, &w, &off), 7);
	assert_true(jd.hdr.swapped);
	assert_string_equal(lg.text, sample_log);
	expect_sample_stats(&jd, w.len);
}

/* Feeding the file in two calls cut anywhere, or a byte at a time, gives the same log. The
 * caller either keeps the whole file (off moves on) or only the unconsumed tail (a fresh copy
 * each time, of exactly its bytes, so that ASan sees any read past it). */
static void test_splits(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off, cut, fed;

	(void)state;
	write_sample(&w, false);
	for (cut = 0; cut <= w.len; cut++) {
		jitdump_init(&jd, NULL);
		memset(&lg, 0, sizeof(lg));
		off = 0;
		assert_true(parse(&jd, &lg, w.buf, cut, &off) >= 0);
		assert_true(off <= cut);
		assert_int_equal(jd.st.bytes, off);
		assert_true(jd.want > cut - off);
		assert_true(parse(&jd, &lg, w.buf, w.len, &off) >= 0);
		assert_string_equal(lg.text, sample_log);
		expect_sample_stats(&jd, w.len);
	}

	for (int keep_all = 0; keep_all < 2; keep_all++) {
		jitdump_init(&jd, NULL);
		memset(&lg, 0, sizeof(lg));
		off = 0;
		for (fed = 1; fed <= w.len; fed++) {
			size_t base = (size_t)jd.st.bytes, o = 0;
			uint8_t *tail;

			if (keep_all) {
				assert_true(parse(&jd, &lg, w.buf, fed, &off) >= 0);
				continue;
			}
			tail = malloc(fed - base);
			assert_non_null(tail);
			memcpy(tail, w.buf + base, fed - base);
			assert_true(parse(&jd, &lg, tail, fed - base, &o) >= 0);
			assert_int_equal(jd.st.bytes, base + o);
			free(tail);
		}
		assert_string_equal(lg.text, sample_log);
		expect_sample_stats(&jd, w.len);
	}
}

/* A record cut short waits for its bytes; jd->want says how many. */
static void test_truncated(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off, last;

	(void)state;
	memset(&w, 0, sizeof(w));
	put_header(&w, JITDUMP_VERSION, JITDUMP_HEADER_SIZE, 0);
	put_load(&w, 1, 0x1000, 4, 1, "one");
	last = w.len;
	put_load(&w, 2, 0x2000, 4, 2, "two");

	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	assert_int_equal(parse(&jd, &lg, w.buf, w.len - 1, &off), 1);
	assert_int_equal(off, last);
	assert_int_equal(jd.want, w.len - last);
	assert_int_equal(jd.err, 0);
	assert_int_equal(jd.st.loads, 1);
	assert_int_equal(parse(&jd, &lg, w.buf, last + 3, &off), 0); /* a torn prefix */
	assert_int_equal(jd.want, JITDUMP_PREFIX_SIZE);
	assert_int_equal(off, last);
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), 1);
	assert_int_equal(off, w.len);
	assert_string_equal(lg.text,
			    "header v1 size 40 mach 62 pid 4242 ts 1000 flags 0\n"
			    "load ts 1 pid 4242 tid 4243 vma 1000 addr 1000 size 4 index 1 one: "
			    "c0 c1 c2 c3\n"
			    "load ts 2 pid 4242 tid 4243 vma 2000 addr 2000 size 4 index 2 two: "
			    "c0 c1 c2 c3\n");

	/* a torn header */
	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	assert_int_equal(parse(&jd, &lg, w.buf, 0, &off), 0);
	assert_int_equal(jd.want, JITDUMP_HEADER_SIZE);
	assert_int_equal(parse(&jd, &lg, w.buf, JITDUMP_HEADER_SIZE - 1, &off), 0);
	assert_int_equal(off, 0);
	assert_false(jd.have_header);
	assert_int_equal(jd.want, JITDUMP_HEADER_SIZE);
	assert_int_equal(lg.len, 0);
	assert_int_equal(parse(&jd, &lg, w.buf, JITDUMP_HEADER_SIZE, &off), 0);
	assert_true(jd.have_header);
	assert_int_equal(off, JITDUMP_HEADER_SIZE);
	assert_int_equal(jd.st.bytes, JITDUMP_HEADER_SIZE);
}

/* ---- errors of the file ---- */

static void expect_file_error(const struct w *w, size_t len, int err, uint64_t at)
{
	static struct log lg;
	struct jitdump jd;
	size_t off = 0;

	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	assert_int_equal(parse(&jd, &lg, w->buf, len, &off), err);
	assert_int_equal(jd.err, err);
	assert_int_equal(jd.st.bytes, at);
	assert_int_equal(off, at);
	/* sticky, even with more bytes */
	assert_int_equal(parse(&jd, &lg, w->buf, w->len, &off), err);
	assert_int_equal(off, at);
}

static void test_bad_header(void **state)
{
	static struct w w;

	(void)state;
	memset(&w, 0, sizeof(w));
	put(&w, "JITD", 4); /* bad magic, seen with 4 bytes */
	put32(&w, 1);
	expect_file_error(&w, 4, -EBADMSG, 0);
	memset(&w, 0, sizeof(w));
	put(&w,
	    "\x7f"
	    "ELF\x02\x01\x01\x00",
	    8);
	expect_file_error(&w, 4, -EBADMSG, 0);

	memset(&w, 0, sizeof(w));
	put_header(&w, 2, JITDUMP_HEADER_SIZE, 0); /* version 2, seen with 8 bytes */
	expect_file_error(&w, 8, -EPROTONOSUPPORT, 0);
	memset(&w, 0, sizeof(w));
	put_header(&w, 0, JITDUMP_HEADER_SIZE, 0);
	expect_file_error(&w, w.len, -EPROTONOSUPPORT, 0);
	memset(&w, 0, sizeof(w));
	w.swap = true;
	put_header(&w, 2, JITDUMP_HEADER_SIZE, 0);
	expect_file_error(&w, w.len, -EPROTONOSUPPORT, 0);

	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 2); /* an unknown flag */
	expect_file_error(&w, w.len, -EPROTONOSUPPORT, 0);

	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE - 1, 0); /* header smaller than its fields */
	expect_file_error(&w, w.len, -EBADMSG, 0);
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_MAX_RECORD + 1, 0); /* fails without the bytes */
	expect_file_error(&w, JITDUMP_HEADER_SIZE, -EBADMSG, 0);
}

static void test_header_extra(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off;

	(void)state;
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, 56, 0);
	put(&w, "sixteen bytes...", 16); /* of a future header, skipped */
	put_load(&w, 7, 0x10, 2, 9, "x");
	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	assert_int_equal(parse(&jd, &lg, w.buf, 50, &off), 0);
	assert_int_equal(jd.want, 56);
	assert_false(jd.have_header);
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), 1);
	assert_string_equal(lg.text, "header v1 size 56 mach 62 pid 4242 ts 1000 flags 0\n"
				     "load ts 7 pid 4242 tid 4243 vma 10 addr 10 size 2 index 9 x: "
				     "c0 c1\n");
}

static void test_record_size(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump_limits lim = {.max_record = 100};
	struct jitdump jd;
	size_t off, at;

	(void)state;
	/* below the prefix: the file is broken from here */
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	put_load(&w, 1, 0x1000, 4, 1, "one");
	at = w.len;
	put_close(&w, 2);
	set_size(&w, at, 8);
	put_load(&w, 3, 0x2000, 4, 2, "two");
	expect_file_error(&w, w.len, -EBADMSG, at);
	set_size(&w, at, 0);
	expect_file_error(&w, w.len, -EBADMSG, at);

	/* above the cap: fails as soon as the prefix is there, without the bytes */
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	put_load(&w, 1, 0x1000, 4, 1, "one");
	at = w.len;
	rec_begin(&w, JITDUMP_CODE_LOAD, 2);
	set_size(&w, at, JITDUMP_MAX_RECORD + 1);
	expect_file_error(&w, w.len, -EBADMSG, at);
	set_size(&w, at, UINT32_MAX);
	expect_file_error(&w, w.len, -EBADMSG, at);
	set_size(&w, at, JITDUMP_MAX_RECORD); /* at the cap: waits for it */
	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), 1);
	assert_int_equal(jd.want, JITDUMP_MAX_RECORD);
	assert_int_equal(jd.err, 0);

	/* a tighter cap */
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	put_load(&w, 1, 0x1000, 100 - 56 - 4, 1, "one"); /* exactly 100 */
	at = w.len;
	assert_int_equal(at, 140);
	put_load(&w, 1, 0x1000, 100 - 56 - 3, 1, "one"); /* 101 */
	jitdump_init(&jd, &lim);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), -EBADMSG);
	assert_int_equal(jd.st.loads, 1);
	assert_int_equal(jd.st.bytes, at);
	assert_int_equal(off, at);
}

/* ---- bad records: counted, skipped, and the next one is read ---- */

static void bad_short_load(struct w *w)
{
	rec_begin(w, JITDUMP_CODE_LOAD, 5);
	put32(w, 1);
	rec_end(w);
}

static void bad_short_move(struct w *w)
{
	rec_begin(w, JITDUMP_CODE_MOVE, 5);
	put64(w, 1);
	put64(w, 2);
	rec_end(w);
}

static void bad_short_debug(struct w *w)
{
	rec_begin(w, JITDUMP_CODE_DEBUG_INFO, 5);
	put64(w, 0x1000);
	rec_end(w);
}

static void bad_short_unwinding(struct w *w)
{
	rec_begin(w, JITDUMP_CODE_UNWINDING_INFO, 5);
	put64(w, 0);
	put64(w, 0);
	rec_end(w);
}

/* A record of kind id, one byte shorter than its fixed part. */
static void one_short(struct w *w, uint32_t id, size_t fixed)
{
	rec_begin(w, id, 5);
	while (w->len - w->rec < fixed - 1)
		put(w, "\x01", 1);
	rec_end(w);
}

static void bad_load_one_short(struct w *w)
{
	one_short(w, JITDUMP_CODE_LOAD, 56);
}

static void bad_move_one_short(struct w *w)
{
	one_short(w, JITDUMP_CODE_MOVE, 64);
}

static void bad_debug_one_short(struct w *w)
{
	one_short(w, JITDUMP_CODE_DEBUG_INFO, 32);
}

static void bad_unwinding_one_short(struct w *w)
{
	one_short(w, JITDUMP_CODE_UNWINDING_INFO, 40);
}

static void bad_load_fixed_only(struct w *w)
{
	put_load_raw(w, 5, 0x1000, 1, 1, "", 0); /* its NUL ... */
	w->len--;				 /* ... taken back: 56 bytes, no name */
	rec_end(w);
}

static void bad_name_unterminated(struct w *w)
{
	put_load_raw(w, 5, 0x1000, 2, 1, "abc", 0);
	w->len--;	       /* no NUL: the name runs to the end of the record, */
	put(w, "\xc0\xc1", 2); /* its code included */
	rec_end(w);
}

static void bad_name_empty(struct w *w)
{
	put_load(w, 5, 0x1000, 4, 1, "");
}

static void bad_code_past_record(struct w *w)
{
	put_load_raw(w, 5, 0x1000, 11, 1, "abc", 10);
}

static void bad_code_huge(struct w *w)
{
	put_load_raw(w, 5, 0x1000, UINT64_MAX, 1, "abc", 10);
}

static void bad_code_zero(struct w *w)
{
	put_load_raw(w, 5, 0x1000, 0, 1, "abc", 0);
}

static void bad_load_overflow(struct w *w)
{
	put_load(w, 5, UINT64_MAX - 2, 4, 1, "abc"); /* vma and code_addr */
}

static void bad_load_overflow_vma(struct w *w)
{
	uint64_t vma = UINT64_MAX - 2;

	put_load(w, 5, 0x1000, 4, 1, "abc");
	if (w->swap)
		vma = __builtin_bswap64(vma);
	memcpy(w->buf + w->rec + 24, &vma, sizeof(vma)); /* code_addr stays good */
}

static void bad_move_zero(struct w *w)
{
	put_move(w, 5, 0x1000, 0x2000, 0, 1);
}

static void bad_move_overflow(struct w *w)
{
	put_move(w, 5, 0x1000, UINT64_MAX - 2, 4, 1);
}

static void bad_move_overflow_old(struct w *w)
{
	put_move(w, 5, UINT64_MAX, 0x1000, 1, 1);
}

static void bad_debug_nr_past(struct w *w)
{
	put_debug(w, 5, 0x1000, 4, lines, 3); /* 4 announced, 3 there (and padding) */
}

static void bad_debug_nr_huge(struct w *w)
{
	put_debug(w, 5, 0x1000, UINT64_MAX, lines, 3);
}

static void bad_debug_nr_zero(struct w *w)
{
	put_debug(w, 5, 0x1000, 0, lines, 3);
}

static void bad_debug_unterminated(struct w *w)
{
	put_debug(w, 5, 0x1000, 1, lines, 1);
	while (w->buf[w->len - 1] == '\0')
		w->len--; /* the padding and the file's NUL */
	rec_end(w);
}

static void bad_debug_same_first(struct w *w)
{
	put_debug(w, 5, 0x1000, 2, lines + 1, 2);
}

static void bad_unwinding_size(struct w *w)
{
	put_unwinding(w, 5, 25, 8, 24);
}

static void bad_unwinding_hdr(struct w *w)
{
	put_unwinding(w, 5, 8, 9, 24);
}

static void good_unknown(struct w *w)
{
	rec_begin(w, 99, 5);
	put_str(w, "from the future");
	rec_end(w);
}

static void good_unknown_empty(struct w *w)
{
	rec_begin(w, JITDUMP_CODE_UNWINDING_INFO + 1, 5);
	rec_end(w);
}

static const struct bad_case {
	const char *what;
	void (*write)(struct w *w);
	bool bad; /* false: a good record of a kind that is skipped */
} bad_cases[] = {
    {"load below its fixed part", bad_short_load, true},
    {"move below its fixed part", bad_short_move, true},
    {"debug below its fixed part", bad_short_debug, true},
    {"unwinding below its fixed part", bad_short_unwinding, true},
    {"load one byte short", bad_load_one_short, true},
    {"move one byte short", bad_move_one_short, true},
    {"debug one byte short", bad_debug_one_short, true},
    {"unwinding one byte short", bad_unwinding_one_short, true},
    {"load without a name", bad_load_fixed_only, true},
    {"name not terminated", bad_name_unterminated, true},
    {"empty name", bad_name_empty, true},
    {"code_size past the record", bad_code_past_record, true},
    {"code_size UINT64_MAX", bad_code_huge, true},
    {"code_size 0", bad_code_zero, true},
    {"addr + size overflows", bad_load_overflow, true},
    {"vma + size overflows", bad_load_overflow_vma, true},
    {"move of size 0", bad_move_zero, true},
    {"move: new + size overflows", bad_move_overflow, true},
    {"move: old + size overflows", bad_move_overflow_old, true},
    {"nr_entry past the record", bad_debug_nr_past, true},
    {"nr_entry UINT64_MAX", bad_debug_nr_huge, true},
    {"nr_entry 0", bad_debug_nr_zero, true},
    {"debug file not terminated", bad_debug_unterminated, true},
    {"first file \"the previous\"", bad_debug_same_first, true},
    {"unwinding_size past the record", bad_unwinding_size, true},
    {"eh_frame_hdr_size past unwinding_size", bad_unwinding_hdr, true},
    {"unknown kind", good_unknown, false},
    {"unknown kind, empty", good_unknown_empty, false},
};

static void test_bad_records(void **state)
{
	static struct w w;
	static struct log lg;
	static const char want[] =
	    "header v1 size 40 mach 62 pid 4242 ts 1000 flags 0\n"
	    "load ts 1 pid 4242 tid 4243 vma 1000 addr 1000 size 2 index 1 before: c0 c1\n"
	    "load ts 9 pid 4242 tid 4243 vma 2000 addr 2000 size 2 index 2 after: c0 c1\n";
	struct jitdump jd;
	size_t off;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];

		for (int swap = 0; swap < 2; swap++) {
			memset(&w, 0, sizeof(w));
			w.swap = swap;
			put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
			put_load(&w, 1, 0x1000, 2, 1, "before");
			c->write(&w);
			put_load(&w, 9, 0x2000, 2, 2, "after");
			if (parse_all(&jd, NULL, &lg, &w, &off) != 3 || jd.err ||
			    jd.st.bad_records != c->bad || jd.st.unknown != !c->bad ||
			    strcmp(lg.text, want))
				fail_msg("%s (swap %d): %d bad, %d unknown, err %d, log:\n%s",
					 c->what, swap, (int)jd.st.bad_records, (int)jd.st.unknown,
					 jd.err, lg.text);
			assert_int_equal(jd.st.loads, 2);
			assert_int_equal(jd.st.records, 3);
			assert_int_equal(jd.st.bytes, w.len);
			assert_int_equal(off, w.len);
			check_stats(&jd.st);
		}
	}
}

/* ---- names ---- */

static void test_long_names(void **state)
{
	static struct w w;
	static struct log lg;
	static char name[5000];
	struct jitdump_limits lim = {.max_name = 8};
	struct entry e[3] = {{0x10, 1, 0, "short.js"}, {0x11, 2, 0, name}, {0x12, 3, 0, "\xff"}};
	struct jitdump jd;
	size_t off;

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	name[JITDUMP_MAX_NAME] = '\0';
	put_load(&w, 1, 0x1000, 1, 1, name); /* 1024: whole */
	name[JITDUMP_MAX_NAME] = 'n';
	name[JITDUMP_MAX_NAME + 1] = '\0';
	put_load(&w, 2, 0x2000, 1, 2, name); /* 1025: cut */
	name[JITDUMP_MAX_NAME + 1] = 'n';
	put_load(&w, 3, 0x3000, 1, 3, name); /* 4999: cut */
	put_debug(&w, 4, 0x10, 3, e, 3);     /* 4999 and "\xff": cut once */

	assert_int_equal(parse_all(&jd, NULL, &lg, &w, &off), 4);
	assert_int_equal(jd.st.loads, 3);
	assert_int_equal(jd.st.long_names, 3);
	assert_int_equal(jd.st.bad_records, 0);
	assert_int_equal(off, w.len);
	/* the loads' names are in the log whole (1024 bytes at most); the debug's line: */
	assert_non_null(strstr(lg.text, "debug ts 4 addr 10 n 3: 10 :1:0short.js 11 (long):2:0 "
					"12 (long):3:0\n"));

	assert_int_equal(parse_all(&jd, &lim, &lg, &w, &off), 4);
	assert_int_equal(jd.st.long_names, 4); /* every load, and the debug's long file */
	assert_string_equal(
	    lg.text, "header v1 size 40 mach 62 pid 4242 ts 1000 flags 0\n"
		     "load ts 1 pid 4242 tid 4243 vma 1000 addr 1000 size 1 index 1 nnnnnnnn: "
		     "c0\n"
		     "load ts 2 pid 4242 tid 4243 vma 2000 addr 2000 size 1 index 2 nnnnnnnn: "
		     "c0\n"
		     "load ts 3 pid 4242 tid 4243 vma 3000 addr 3000 size 1 index 3 nnnnnnnn: "
		     "c0\n"
		     "debug ts 4 addr 10 n 3: 10 :1:0short.js 11 :2:0nnnnnnnn 12 "
		     ":3:0nnnnnnnn\n");
}

static int name_len_of_load(const struct jitdump_load *l, void *ud)
{
	*(size_t *)ud = l->name_len;
	return 0;
}

static void test_name_lengths(void **state)
{
	static struct w w;
	static char name[JITDUMP_MAX_NAME + 2];
	const struct jitdump_ops o = {.on_load = name_len_of_load};
	const size_t lens[] = {1, 2, JITDUMP_MAX_NAME - 1, JITDUMP_MAX_NAME, JITDUMP_MAX_NAME + 1};
	struct jitdump jd;
	size_t off, got;

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(&w, 0, sizeof(w));
		memset(name, 'a', lens[i]);
		name[lens[i]] = '\0';
		put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
		put_load(&w, 1, 0x1000, 3, 1, name);
		jitdump_init(&jd, NULL);
		off = 0;
		got = 0;
		assert_int_equal(jitdump_parse(&jd, w.buf, w.len, &off, &o, &got), 1);
		assert_int_equal(got, lens[i] > JITDUMP_MAX_NAME ? JITDUMP_MAX_NAME : lens[i]);
		assert_int_equal(jd.st.long_names, lens[i] > JITDUMP_MAX_NAME);
	}
}

/* ---- callbacks that fail, arguments ---- */

static void test_callback_error(void **state)
{
	static struct w w;
	static struct log lg, ref;
	struct jitdump jd;
	size_t off, second;

	(void)state;
	write_sample(&w, false);
	assert_int_equal(parse_all(&jd, NULL, &ref, &w, &off), 7);

	jitdump_init(&jd, NULL);
	memset(&lg, 0, sizeof(lg));
	off = 0;
	lg.fail_header = 1;
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), -EIO);
	assert_int_equal(off, 0);
	assert_false(jd.have_header);
	assert_int_equal(jd.err, 0);

	lg.fail_load = 2;
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), -ENOMEM);
	assert_int_equal(jd.err, 0);
	assert_int_equal(jd.st.loads, 1);
	assert_int_equal(jd.st.debug_infos, 1);
	assert_int_equal(jd.st.records, 2);
	second = off;
	assert_int_equal(jd.st.bytes, second);
	assert_int_equal(parse(&jd, &lg, w.buf, w.len, &off), 5); /* delivered again */
	assert_string_equal(lg.text, ref.text);
	expect_sample_stats(&jd, w.len);
}

static void test_args(void **state)
{
	static const uint8_t b[4] = "JiT";
	struct jitdump jd;
	size_t off = 0;

	(void)state;
	jitdump_init(&jd, NULL);
	assert_int_equal(jd.lim.max_record, JITDUMP_MAX_RECORD);
	assert_int_equal(jd.lim.max_name, JITDUMP_MAX_NAME);
	assert_int_equal(jd.want, JITDUMP_HEADER_SIZE);
	assert_int_equal(jitdump_parse(NULL, b, 1, &off, NULL, NULL), -EINVAL);
	assert_int_equal(jitdump_parse(&jd, b, 1, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(jitdump_parse(&jd, NULL, 1, &off, NULL, NULL), -EINVAL);
	off = 2;
	assert_int_equal(jitdump_parse(&jd, b, 1, &off, NULL, NULL), -EINVAL);
	off = 0;
	assert_int_equal(jitdump_parse(&jd, NULL, 0, &off, NULL, NULL), 0);
	assert_int_equal(jitdump_parse(&jd, b, 3, &off, NULL, NULL), 0);
	assert_int_equal(jd.err, 0);
	assert_int_equal(off, 0);
	assert_int_equal(jitdump_debug_next(NULL, NULL), 0);

	/* a tiny max_record is raised so that every fixed part fits */
	jitdump_init(&jd, &(struct jitdump_limits){.max_record = 1});
	assert_int_equal(jd.lim.max_record, 64);
}

/* Bytes after the nr_entry entries of a debug record are not entries, even when they look like
 * one; an entry may have an empty file name. */
static void test_debug_trailing(void **state)
{
	static struct w w;
	static struct log lg;
	const struct entry e[] = {{0x20, 7, 1, ""}, {0x21, 8, 0, "b.js"}};
	struct jitdump jd;
	size_t off;

	(void)state;
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	put_debug(&w, 1, 0x20, 1, e, 2);
	put_debug(&w, 2, 0x1000, 2, lines, 3);
	assert_int_equal(parse_all(&jd, NULL, &lg, &w, &off), 2);
	assert_int_equal(jd.st.debug_infos, 2);
	assert_string_equal(lg.text, "header v1 size 40 mach 62 pid 4242 ts 1000 flags 0\n"
				     "debug ts 1 addr 20 n 1: 20 :7:1\n"
				     "debug ts 2 addr 1000 n 2: 7f0000001000 :12:0/srv/app.js "
				     "7f0000001004 :13:2/srv/app.js\n");
}

/* Records after a close are still read (the close is only a marker). */
static void test_after_close(void **state)
{
	static struct w w;
	static struct log lg;
	struct jitdump jd;
	size_t off;

	(void)state;
	memset(&w, 0, sizeof(w));
	put_header(&w, 1, JITDUMP_HEADER_SIZE, 0);
	put_close(&w, 1);
	put_load(&w, 2, 0x1000, 1, 1, "late");
	assert_int_equal(parse_all(&jd, NULL, &lg, &w, &off), 2);
	assert_string_equal(
	    lg.text, "header v1 size 40 mach 62 pid 4242 ts 1000 flags 0\n"
		     "close ts 1\n"
		     "load ts 2 pid 4242 tid 4243 vma 1000 addr 1000 size 1 index 1 late: c0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_normal),	   cmocka_unit_test(test_swapped),
	    cmocka_unit_test(test_splits),	   cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_bad_header),	   cmocka_unit_test(test_header_extra),
	    cmocka_unit_test(test_record_size),	   cmocka_unit_test(test_bad_records),
	    cmocka_unit_test(test_long_names),	   cmocka_unit_test(test_name_lengths),
	    cmocka_unit_test(test_callback_error), cmocka_unit_test(test_args),
	    cmocka_unit_test(test_debug_trailing), cmocka_unit_test(test_after_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
