// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_srcline.c: libFuzzer target for what kprofd reads from a kprof-lines helper (issue 32):
 * the helper's output (daemon/lib/srcline.c), parsed as hostile, and the cache its answers go to
 * (daemon/lib/lcache.c).
 *
 * The input is a helper's output. It is read as kprofd reads it (symbols/srclines.c): into a
 * buffer of 64 KiB, in torn pieces, the start line first, then one answer at a time, each taken
 * out of the buffer. The oracle is the same stream read whole: the same start, the same answers
 * (frame by frame) and the same first error. Every frame parsed has fields within
 * SRCLINE_MAX_FIELD bytes and without control characters; written back in the protocol's form and
 * parsed again it gives itself. Each answer is kept in a small cache under a key and address
 * drawn from the input's hash, with a shadow model of the last put of each (key, address): an
 * entry the cache still has is the shadow's, the one just put is there (unless too large for
 * the cache, -E2BIG), and the cache stays within its bound.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/lcache.h"
#include "kprof/srcline.h"

#define BUF (64u << 10)
#define MAX_ANSWERS 64
#define NKEYS 3
#define NADDRS 8
#define TEXT_MAX (SRCLINE_MAX_FRAMES * (2 * SRCLINE_MAX_FIELD + 16) + 4)

struct answer {
	int n; /* frames, or a negative error (the stream's end) */
	struct srcline_frame fr[SRCLINE_MAX_FRAMES];
	char text[TEXT_MAX];   /* the frames written back */
	char parsed[TEXT_MAX]; /* text parsed again: fr's strings */
	size_t text_len;
};

struct run {
	int start; /* srcline_start's answer */
	size_t nans;
	struct answer ans[MAX_ANSWERS];
	int end; /* what stopped the reading: -EAGAIN (out of input) or -EBADMSG */
};

/* The oracle: at most SRCLINE_MAX_FIELD bytes, none a control character (C locale). */
static bool field_ok(const char *s)
{
	bool ctl = false;

	for (const char *p = s; *p; p++)
		ctl |= iscntrl((unsigned char)*p) != 0;
	return strlen(s) <= SRCLINE_MAX_FIELD && !ctl;
}

static bool same_frames(const struct srcline_frame *a, const struct srcline_frame *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].func, b[i].func) || strcmp(a[i].file, b[i].file) ||
		    a[i].line != b[i].line)
			return false;
	return true;
}

/* The answer's frames, checked and written back as the helper would write them. */
static void keep(struct answer *a, const struct srcline_frame *fr, int n)
{
	size_t off = 0;

	a->n = n;
	FUZZ_CHECK(n >= 0 && n <= SRCLINE_MAX_FRAMES, "%d frames", n);
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(field_ok(fr[i].func) && field_ok(fr[i].file), "frame %d's fields", i);
		off += (size_t)snprintf(a->text + off, sizeof(a->text) - off, "F\t%s\t%s\t%" PRIu32 "\n",
					fr[i].func, fr[i].file, fr[i].line);
		FUZZ_CHECK(off < sizeof(a->text), "answer written back too long");
	}
	off += (size_t)snprintf(a->text + off, sizeof(a->text) - off, "E\n");
	a->text_len = off;
	/* Parse a copy: the same frames, which fr now points into (the input's buffer moves). */
	{
		size_t used = 0;
		int m;

		memcpy(a->parsed, a->text, off);
		m = srcline_parse(a->parsed, off, &used, a->fr, SRCLINE_MAX_FRAMES);
		FUZZ_CHECK(m == n && used == off, "written back: %d frames (%zu bytes) for %d (%zu)", m,
			   used, n, off);
		FUZZ_CHECK(same_frames(a->fr, fr, (size_t)n), "frames written back differ");
	}
}

/* Read data[0..size) as kprofd does, pieces of the sizes prng *s draws (whole: one piece). */
static void read_stream(const uint8_t *data, size_t size, uint64_t *s, bool whole, struct run *r)
{
	char *buf = malloc(BUF);
	size_t len = 0, pos = 0, used;
	bool ready = false;

	FUZZ_CHECK(buf != NULL, "malloc");
	r->start = -EAGAIN;
	r->nans = 0;
	r->end = -EAGAIN;
	while (pos < size) {
		size_t piece = whole ? size - pos : fuzz_piece(s, size - pos);

		if (len == BUF - 1) {
			r->end = -EBADMSG; /* kprofd: "answered nonsense (too long)" */
			break;
		}
		if (piece > BUF - 1 - len)
			piece = BUF - 1 - len;
		memcpy(buf + len, data + pos, piece);
		len += piece;
		pos += piece;
		if (!ready) {
			char why[200];

			r->start = srcline_start(buf, len, &used, why, sizeof(why));
			if (r->start == -EAGAIN)
				continue;
			if (r->start == -ENOEXEC)
				FUZZ_CHECK(memchr(why, 0, sizeof(why)) && field_ok(why), "reason");
			if (r->start < 0)
				break;
			FUZZ_CHECK(used <= len, "start used %zu of %zu", used, len);
			ready = true;
			memmove(buf, buf + used, len -= used);
		}
		for (;;) {
			struct srcline_frame fr[SRCLINE_MAX_FRAMES];
			int n = srcline_parse(buf, len, &used, fr, SRCLINE_MAX_FRAMES);

			if (n < 0) {
				FUZZ_CHECK(n == -EAGAIN || n == -EBADMSG, "error %d", n);
				r->end = n;
				break;
			}
			FUZZ_CHECK(used >= 2 && used <= len, "used %zu of %zu", used, len);
			if (r->nans < MAX_ANSWERS)
				keep(&r->ans[r->nans++], fr, n);
			memmove(buf, buf + used, len -= used);
		}
		if (r->end == -EBADMSG || r->nans == MAX_ANSWERS)
			break;
	}
	free(buf);
}

/* The answers kept in a cache with a shadow of the last put of each (key, address). */
static void cache_answers(const struct run *r, uint64_t *s)
{
	static const char *const keys[NKEYS] = {"0123456789abcdef", "dev:1:ino:2", "jit:42"};
	const struct answer *shadow[NKEYS][NADDRS] = {{0}};
	bool failed[NKEYS][NADDRS] = {{0}};
	struct lcache *c;
	struct lcache_stats st;

	FUZZ_CHECK(lcache_new((64u << 10) + (prng_next(s) % 4) * (16u << 10), &c) == 0, "new");
	for (size_t i = 0; i < r->nans; i++) {
		uint64_t v = prng_next(s);
		size_t k = v % NKEYS, a = (v >> 8) % NADDRS;
		bool fail = ((v >> 16) & 7) == 0;
		int err = lcache_put(c, keys[k], 0x1000 + a, r->ans[i].fr, fail ? 0 : r->ans[i].n,
				     fail);

		FUZZ_CHECK(err == 0 || err == -E2BIG, "put: %d", err);
		if (err == 0) {
			shadow[k][a] = &r->ans[i];
			failed[k][a] = fail;
		}
		for (size_t kk = 0; kk < NKEYS; kk++)
			for (size_t aa = 0; aa < NADDRS; aa++) {
				struct srcline_frame fr[SRCLINE_MAX_FRAMES];
				size_t n = 0;
				bool f = false;
				uint64_t seq = 0;
				int got = lcache_get(c, keys[kk], 0x1000 + aa, fr, SRCLINE_MAX_FRAMES, &n,
						     &f, &seq);

				FUZZ_CHECK(got == 0 || got == 1, "get: %d", got);
				if (kk == k && aa == a && err == 0)
					FUZZ_CHECK(got == 1 && seq == lcache_seq(c), "the entry just put");
				if (!got)
					continue;
				FUZZ_CHECK(shadow[kk][aa], "an entry never put");
				FUZZ_CHECK(f == failed[kk][aa], "failed mark");
				if (!f)
					FUZZ_CHECK(n == (size_t)shadow[kk][aa]->n &&
							   same_frames(fr, shadow[kk][aa]->fr, n),
						   "entry differs from the last put");
			}
		lcache_get_stats(c, &st);
		FUZZ_CHECK(st.bytes <= st.max_bytes, "%" PRIu64 " bytes of %" PRIu64, st.bytes,
			   st.max_bytes);
	}
	lcache_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run whole, pieces;
	uint64_t s = fuzz_hash(data, size);

	read_stream(data, size, &s, true, &whole);
	read_stream(data, size, &s, false, &pieces);
	FUZZ_CHECK(whole.start == pieces.start, "start %d whole, %d in pieces", whole.start,
		   pieces.start);
	FUZZ_CHECK(whole.nans == pieces.nans, "%zu answers whole, %zu in pieces", whole.nans,
		   pieces.nans);
	for (size_t i = 0; i < whole.nans; i++)
		FUZZ_CHECK(whole.ans[i].n == pieces.ans[i].n &&
				   whole.ans[i].text_len == pieces.ans[i].text_len &&
				   !memcmp(whole.ans[i].text, pieces.ans[i].text, whole.ans[i].text_len),
			   "answer %zu differs in pieces", i);
	if (whole.nans < MAX_ANSWERS)
		FUZZ_CHECK(whole.end == pieces.end, "end %d whole, %d in pieces", whole.end,
			   pieces.end);
	cache_answers(&whole, &s);
	return 0;
}
