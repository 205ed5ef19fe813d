// SPDX-License-Identifier: GPL-2.0-only
/* test_frame.c: unit tests for the framing module (links proto/frame.c and the protobuf-c code).
 *
 * Streams of frames are fed to the reader split at every byte boundary; the cap is checked on
 * headers alone; packed requests go through the reader and back through protobuf-c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/frame.h"
#include "proto/kprof.pb-c.h"

static uint8_t pattern(size_t frame, size_t i)
{
	return (uint8_t)(frame * 31 + i * 7 + 1);
}

/* A stream of frames with the given payload lengths; payload bytes follow pattern(). */
static uint8_t *make_stream(const size_t *lens, size_t nframes, size_t *ret_len)
{
	size_t total = 0, off = 0;
	uint8_t *buf;

	for (size_t f = 0; f < nframes; f++)
		total += FRAME_HDR_SIZE + lens[f];
	buf = malloc(total);
	assert_non_null(buf);
	for (size_t f = 0; f < nframes; f++) {
		frame_put_header(buf + off, (uint32_t)lens[f]);
		off += FRAME_HDR_SIZE;
		for (size_t i = 0; i < lens[f]; i++)
			buf[off++] = pattern(f, i);
	}
	*ret_len = total;
	return buf;
}

/* Take every complete frame out of r, checking each against the next expected one. */
static void drain(struct frame_reader *r, const size_t *lens, size_t nframes, size_t *got)
{
	const uint8_t *payload;
	size_t len;
	int ret;

	while ((ret = frame_reader_next(r, &payload, &len)) == 1) {
		if (*got >= nframes)
			fail_msg("more frames than the %zu sent", nframes);
		if (len != lens[*got])
			fail_msg("frame %zu: length %zu, expected %zu", *got, len, lens[*got]);
		for (size_t i = 0; i < len; i++)
			if (payload[i] != pattern(*got, i))
				fail_msg("frame %zu: byte %zu differs", *got, i);
		(*got)++;
	}
	assert_int_equal(ret, 0);
}

static void test_header(void **state)
{
	uint8_t h[FRAME_HDR_SIZE];
	static const uint32_t values[] = {
	    0,		 1,	      0xff, 0x100, 0x01020304, FRAME_MAX_REQUEST, FRAME_MAX_REPLY,
	    0x80000000u, 0xffffffffu,
	};

	(void)state;
	frame_put_header(h, 0x01020304);
	assert_int_equal(h[0], 0x01); /* big-endian on the wire */
	assert_int_equal(h[1], 0x02);
	assert_int_equal(h[2], 0x03);
	assert_int_equal(h[3], 0x04);
	frame_put_header(h, 0xfedcba98);
	assert_int_equal(h[0], 0xfe);
	assert_int_equal(h[3], 0x98);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		frame_put_header(h, values[i]);
		assert_int_equal(frame_get_header(h), values[i]);
	}
	{
		const uint8_t raw[FRAME_HDR_SIZE] = {0x00, 0x10, 0x00, 0x01};

		assert_int_equal(frame_get_header(raw), 0x100001);
	}
}

static void test_init_release(void **state)
{
	struct frame_reader r;
	const uint8_t *payload = NULL;
	size_t len = 99;

	(void)state;
	memset(&r, 0x5a, sizeof(r));
	frame_reader_init(&r, 100);
	assert_null(r.buf);
	assert_int_equal(r.max_frame, 100);
	assert_int_equal(frame_reader_pending(&r), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &len), 0);
	assert_null(payload);
	assert_int_equal(len, 99);
	assert_int_equal(frame_reader_feed(&r, "", 0), 0);
	assert_int_equal(frame_reader_pending(&r), 0);
	frame_reader_release(&r);
	assert_null(r.buf);
	frame_reader_release(&r); /* twice is fine */
}

static const size_t stream_lens[] = {5, 0, 300, 1, 0, 5000, 4};
#define STREAM_FRAMES (sizeof(stream_lens) / sizeof(stream_lens[0]))

/* Two feeds, split at every byte boundary of the stream (including 0 and the end). */
static void test_split_every_byte(void **state)
{
	size_t len, got;
	uint8_t *s = make_stream(stream_lens, STREAM_FRAMES, &len);

	(void)state;
	for (size_t k = 0; k <= len; k++) {
		struct frame_reader r;

		frame_reader_init(&r, FRAME_MAX_REQUEST);
		got = 0;
		assert_int_equal(frame_reader_feed(&r, s, k), 0);
		drain(&r, stream_lens, STREAM_FRAMES, &got);
		assert_int_equal(frame_reader_feed(&r, s + k, len - k), 0);
		drain(&r, stream_lens, STREAM_FRAMES, &got);
		if (got != STREAM_FRAMES)
			fail_msg("split at %zu: %zu frames, expected %zu", k, got, STREAM_FRAMES);
		assert_int_equal(frame_reader_pending(&r), 0);
		frame_reader_release(&r);
	}
	free(s);
}

/* One byte at a time: a frame comes out exactly when its last byte is in, never before. */
static void test_byte_at_a_time(void **state)
{
	size_t len, got = 0, end = 0, due = 0;
	uint8_t *s = make_stream(stream_lens, STREAM_FRAMES, &len);
	struct frame_reader r;

	(void)state;
	frame_reader_init(&r, FRAME_MAX_REQUEST);
	for (size_t b = 0; b < len; b++) {
		assert_int_equal(frame_reader_feed(&r, s + b, 1), 0);
		/* frames whose last byte is at or before b */
		while (due < STREAM_FRAMES && end + FRAME_HDR_SIZE + stream_lens[due] <= b + 1)
			end += FRAME_HDR_SIZE + stream_lens[due++];
		drain(&r, stream_lens, STREAM_FRAMES, &got);
		if (got != due)
			fail_msg("after byte %zu: %zu frames out, expected %zu", b, got, due);
		assert_int_equal(frame_reader_pending(&r), b + 1 - end);
	}
	assert_int_equal(got, STREAM_FRAMES);
	frame_reader_release(&r);
	free(s);
}

/* Three feeds at every pair of split points of a small stream, without draining in between. */
static void test_split_pairs(void **state)
{
	static const size_t lens[] = {3, 0, 2, 1, 0};
	size_t len, got;
	uint8_t *s = make_stream(lens, 5, &len);

	(void)state;
	for (size_t i = 0; i <= len; i++) {
		for (size_t j = i; j <= len; j++) {
			struct frame_reader r;

			frame_reader_init(&r, 16);
			got = 0;
			assert_int_equal(frame_reader_feed(&r, s, i), 0);
			assert_int_equal(frame_reader_feed(&r, s + i, j - i), 0);
			drain(&r, lens, 5, &got);
			assert_int_equal(frame_reader_feed(&r, s + j, len - j), 0);
			drain(&r, lens, 5, &got);
			assert_int_equal(got, 5);
			assert_int_equal(frame_reader_pending(&r), 0);
			frame_reader_release(&r);
		}
	}
	free(s);
}

/* Many small frames through one reader: consumed space is reused, the buffer does not grow. */
static void test_reuse(void **state)
{
	static const size_t lens[] = {100, 7, 0, 1000};
	size_t len, cap = 0;
	uint8_t *s = make_stream(lens, 4, &len);
	struct frame_reader r;

	(void)state;
	frame_reader_init(&r, 2000);
	for (int round = 0; round < 2000; round++) {
		size_t got = 0, cut = (size_t)round % len;

		assert_int_equal(frame_reader_feed(&r, s, cut), 0);
		drain(&r, lens, 4, &got);
		assert_int_equal(frame_reader_feed(&r, s + cut, len - cut), 0);
		drain(&r, lens, 4, &got);
		assert_int_equal(got, 4);
		if (round == 0)
			cap = r.cap;
	}
	assert_int_equal(r.cap, cap);
	assert_true(cap <= 4096);
	frame_reader_release(&r);
	free(s);
}

static void test_truncated(void **state)
{
	static const size_t lens[] = {10};
	const uint8_t *payload = NULL;
	size_t len, plen = 0;
	uint8_t *s = make_stream(lens, 1, &len);
	struct frame_reader r;

	(void)state;
	frame_reader_init(&r, 100);
	/* part of the header */
	assert_int_equal(frame_reader_feed(&r, s, 3), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	assert_int_equal(frame_reader_pending(&r), 3);
	/* header only */
	assert_int_equal(frame_reader_feed(&r, s + 3, 1), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	assert_int_equal(frame_reader_pending(&r), 4);
	/* all but the last payload byte */
	assert_int_equal(frame_reader_feed(&r, s + 4, 9), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen),
			 0); /* asking again changes nothing */
	assert_int_equal(frame_reader_pending(&r), 13);
	assert_null(payload);
	assert_int_equal(plen, 0);
	/* complete */
	assert_int_equal(frame_reader_feed(&r, s + 13, 1), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 1);
	assert_int_equal(plen, 10);
	assert_memory_equal(payload, s + 4, 10);
	assert_int_equal(frame_reader_pending(&r), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	frame_reader_release(&r);
	free(s);
}

static void test_oversized(void **state)
{
	uint8_t hdr[FRAME_HDR_SIZE], junk[64];
	const uint8_t *payload;
	size_t len;
	struct frame_reader r;
	static const uint32_t bad[] = {FRAME_MAX_REQUEST + 1, 0x7fffffffu, 0xffffffffu};

	(void)state;
	memset(junk, 'x', sizeof(junk));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		frame_reader_init(&r, FRAME_MAX_REQUEST);
		frame_put_header(hdr, bad[i]);
		assert_int_equal(frame_reader_feed(&r, hdr, sizeof(hdr)), -EMSGSIZE);
		assert_int_equal(frame_reader_next(&r, &payload, &len), -EMSGSIZE);
		/* refused before the payload: nothing near the announced size was allocated */
		assert_true(r.cap <= 4096);
		assert_int_equal(frame_reader_feed(&r, junk, sizeof(junk)), -EMSGSIZE);
		assert_int_equal(frame_reader_next(&r, &payload, &len), -EMSGSIZE);
		assert_true(r.cap <= 4096);
		frame_reader_release(&r);
	}

	/* the header arriving in pieces: refused once its 4th byte is in */
	frame_reader_init(&r, 100);
	frame_put_header(hdr, 101);
	assert_int_equal(frame_reader_feed(&r, hdr, 1), 0);
	assert_int_equal(frame_reader_feed(&r, hdr + 1, 2), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &len), 0);
	assert_int_equal(frame_reader_feed(&r, hdr + 3, 1), -EMSGSIZE);
	assert_int_equal(frame_reader_next(&r, &payload, &len), -EMSGSIZE);
	frame_reader_release(&r);

	/* good frames before an oversized one still come out, then the error */
	{
		static const size_t lens[] = {3, 0};
		size_t slen;
		uint8_t *s = make_stream(lens, 2, &slen), *all = malloc(slen + 4);

		assert_non_null(all);
		memcpy(all, s, slen);
		frame_put_header(all + slen, 1000);
		frame_reader_init(&r, 100);
		assert_int_equal(frame_reader_feed(&r, all, slen + 4), 0);
		assert_int_equal(frame_reader_next(&r, &payload, &len), 1);
		assert_int_equal(len, 3);
		assert_int_equal(frame_reader_next(&r, &payload, &len), 1);
		assert_int_equal(len, 0);
		assert_int_equal(frame_reader_next(&r, &payload, &len), -EMSGSIZE);
		assert_int_equal(frame_reader_feed(&r, junk, 1), -EMSGSIZE);
		frame_reader_release(&r);
		free(all);
		free(s);
	}
}

static void test_exact_max(void **state)
{
	struct frame_reader r;
	const uint8_t *payload;
	size_t len, slen, got = 0;
	uint8_t hdr[FRAME_HDR_SIZE];

	(void)state;
	/* a payload of exactly max_frame bytes */
	{
		static const size_t lens[] = {100};
		uint8_t *s = make_stream(lens, 1, &slen);

		frame_reader_init(&r, 100);
		assert_int_equal(frame_reader_feed(&r, s, slen), 0);
		drain(&r, lens, 1, &got);
		assert_int_equal(got, 1);
		frame_reader_release(&r);
		free(s);
	}

	/* the real request cap, fed in socket-sized pieces */
	{
		static const size_t lens[] = {FRAME_MAX_REQUEST, 2};
		uint8_t *s = make_stream(lens, 2, &slen);

		got = 0;
		frame_reader_init(&r, FRAME_MAX_REQUEST);
		for (size_t off = 0; off < slen; off += 65536) {
			size_t n = slen - off < 65536 ? slen - off : 65536;

			assert_int_equal(frame_reader_feed(&r, s + off, n), 0);
			drain(&r, lens, 2, &got);
		}
		assert_int_equal(got, 2);
		assert_true(r.cap <= 2 * (FRAME_MAX_REQUEST + FRAME_HDR_SIZE));
		frame_reader_release(&r);
		free(s);
	}

	/* a cap of 0 still passes empty frames */
	frame_reader_init(&r, 0);
	frame_put_header(hdr, 0);
	assert_int_equal(frame_reader_feed(&r, hdr, 4), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &len), 1);
	assert_int_equal(len, 0);
	frame_put_header(hdr, 1);
	assert_int_equal(frame_reader_feed(&r, hdr, 4), -EMSGSIZE);
	frame_reader_release(&r);
}

/* Pack req, feed the frame to a reader in two pieces, unpack what comes out. */
static Kprof__Request *round_trip(const Kprof__Request *req, size_t cut)
{
	struct frame_reader r;
	const uint8_t *payload;
	uint8_t *buf = NULL;
	size_t len = 0, plen, packed = kprof__request__get_packed_size(req);
	Kprof__Request *out;

	assert_int_equal(frame_pack(&req->base, FRAME_MAX_REQUEST, &buf, &len), 0);
	assert_non_null(buf);
	assert_int_equal(len, FRAME_HDR_SIZE + packed);
	assert_int_equal(frame_get_header(buf), packed);
	if (cut > len)
		cut = len;
	frame_reader_init(&r, FRAME_MAX_REQUEST);
	assert_int_equal(frame_reader_feed(&r, buf, cut), 0);
	if (cut < len)
		assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	assert_int_equal(frame_reader_feed(&r, buf + cut, len - cut), 0);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 1);
	assert_int_equal(plen, packed);
	out = kprof__request__unpack(NULL, plen, payload);
	assert_non_null(out);
	assert_int_equal(frame_reader_next(&r, &payload, &plen), 0);
	frame_reader_release(&r);
	free(buf);
	return out;
}

static void test_pack_request(void **state)
{
	Kprof__Request req = KPROF__REQUEST__INIT, *out;
	Kprof__AttachRequest at = KPROF__ATTACH_REQUEST__INIT;
	Kprof__ReportRequest rr = KPROF__REPORT_REQUEST__INIT;
	Kprof__ListRequest lr = KPROF__LIST_REQUEST__INIT;

	(void)state;
	at.pid = 4242;
	at.freq_hz = 997;
	at.duration_sec = 30;
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &at;
	for (size_t cut = 0; cut <= 12; cut++) {
		out = round_trip(&req, cut);
		assert_int_equal(out->body_case, KPROF__REQUEST__BODY_ATTACH);
		assert_non_null(out->attach);
		assert_int_equal(out->attach->pid, 4242);
		assert_int_equal(out->attach->freq_hz, 997);
		assert_int_equal(out->attach->duration_sec, 30);
		kprof__request__free_unpacked(out, NULL);
	}

	rr.pid = 0xffffffffu;
	rr.top = 20;
	req.body_case = KPROF__REQUEST__BODY_REPORT;
	req.report = &rr;
	out = round_trip(&req, 5);
	assert_int_equal(out->body_case, KPROF__REQUEST__BODY_REPORT);
	assert_int_equal(out->report->pid, 0xffffffffu);
	assert_int_equal(out->report->top, 20);
	kprof__request__free_unpacked(out, NULL);

	/* an empty submessage still selects its oneof case */
	req.body_case = KPROF__REQUEST__BODY_LIST;
	req.list = &lr;
	out = round_trip(&req, 1);
	assert_int_equal(out->body_case, KPROF__REQUEST__BODY_LIST);
	assert_non_null(out->list);
	kprof__request__free_unpacked(out, NULL);

	/* no body at all: a 0-length frame, which decodes to an empty request */
	req.body_case = KPROF__REQUEST__BODY__NOT_SET;
	assert_int_equal(kprof__request__get_packed_size(&req), 0);
	out = round_trip(&req, 2);
	assert_int_equal(out->body_case, KPROF__REQUEST__BODY__NOT_SET);
	kprof__request__free_unpacked(out, NULL);
}

/* Several packed requests back to back in one stream, fed a byte at a time. */
static void test_pack_stream(void **state)
{
	Kprof__Request req[4];
	Kprof__DetachRequest dt = KPROF__DETACH_REQUEST__INIT;
	Kprof__FoldedRequest fo = KPROF__FOLDED_REQUEST__INIT;
	Kprof__StatusRequest st = KPROF__STATUS_REQUEST__INIT;
	uint8_t *stream = NULL;
	size_t slen = 0, n = 0;
	struct frame_reader r;
	const uint8_t *payload;
	size_t plen;

	(void)state;
	for (int i = 0; i < 4; i++)
		kprof__request__init(&req[i]);
	dt.pid = 1;
	fo.pid = 77777;
	req[0].body_case = KPROF__REQUEST__BODY_DETACH;
	req[0].detach = &dt;
	req[1].body_case = KPROF__REQUEST__BODY_STATUS;
	req[1].status = &st;
	req[3].body_case = KPROF__REQUEST__BODY_FOLDED;
	req[3].folded = &fo;
	for (int i = 0; i < 4; i++) {
		uint8_t *buf;
		size_t len;

		assert_int_equal(frame_pack(&req[i].base, FRAME_MAX_REQUEST, &buf, &len), 0);
		stream = realloc(stream, slen + len);
		assert_non_null(stream);
		memcpy(stream + slen, buf, len);
		slen += len;
		free(buf);
	}
	frame_reader_init(&r, FRAME_MAX_REQUEST);
	for (size_t b = 0; b < slen; b++) {
		assert_int_equal(frame_reader_feed(&r, stream + b, 1), 0);
		while (frame_reader_next(&r, &payload, &plen) == 1) {
			Kprof__Request *out = kprof__request__unpack(NULL, plen, payload);

			assert_non_null(out);
			assert_true(n < 4);
			assert_int_equal(out->body_case, req[n].body_case);
			if (n == 0)
				assert_int_equal(out->detach->pid, 1);
			if (n == 3)
				assert_int_equal(out->folded->pid, 77777);
			kprof__request__free_unpacked(out, NULL);
			n++;
		}
	}
	assert_int_equal(n, 4);
	frame_reader_release(&r);
	free(stream);
}

static void test_pack_max(void **state)
{
	Kprof__Request req = KPROF__REQUEST__INIT;
	Kprof__AttachRequest at = KPROF__ATTACH_REQUEST__INIT;
	uint8_t *buf = (uint8_t *)&req; /* sentinels: not written on failure */
	size_t len = 12345, packed;

	(void)state;
	at.pid = 123456;
	at.freq_hz = 99;
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &at;
	packed = kprof__request__get_packed_size(&req);
	assert_true(packed > 4);

	assert_int_equal(frame_pack(&req.base, packed - 1, &buf, &len), -EMSGSIZE);
	assert_ptr_equal(buf, (uint8_t *)&req);
	assert_int_equal(len, 12345);
	assert_int_equal(frame_pack(&req.base, 0, &buf, &len), -EMSGSIZE);
	assert_ptr_equal(buf, (uint8_t *)&req);

	assert_int_equal(frame_pack(&req.base, packed, &buf, &len), 0);
	assert_int_equal(len, packed + FRAME_HDR_SIZE);
	assert_int_equal(frame_get_header(buf), packed);
	free(buf);

	/* an empty message fits any cap */
	req.body_case = KPROF__REQUEST__BODY__NOT_SET;
	assert_int_equal(frame_pack(&req.base, 0, &buf, &len), 0);
	assert_int_equal(len, FRAME_HDR_SIZE);
	assert_int_equal(frame_get_header(buf), 0);
	free(buf);
}

/* The daemon relies on unpack failing for a payload that is not a kprof.Request. */
static void test_garbage(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[8];
		size_t len;
	} bad[] = {
	    {"all ones", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8},
	    {"varint for a message field", {0x08, 0x01}, 2},
	    {"length past the end", {0x0a, 0x05, 0x08, 0x01}, 4},
	    {"bad inner message", {0x0a, 0x02, 0xff, 0xff}, 4},
	    {"tag 0", {0x00, 0x01}, 2},
	    {"unterminated varint", {0x0a, 0x02, 0x08, 0x80}, 4},
	    {"lone tag", {0x0a}, 1},
	};
	Kprof__Request req = KPROF__REQUEST__INIT, *out;
	Kprof__AttachRequest at = KPROF__ATTACH_REQUEST__INIT;
	uint8_t *buf;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct frame_reader r;
		uint8_t hdr[FRAME_HDR_SIZE];
		const uint8_t *payload;
		size_t plen;

		/* the reader passes it through: framing does not look inside */
		frame_reader_init(&r, FRAME_MAX_REQUEST);
		frame_put_header(hdr, (uint32_t)bad[i].len);
		assert_int_equal(frame_reader_feed(&r, hdr, sizeof(hdr)), 0);
		assert_int_equal(frame_reader_feed(&r, bad[i].bytes, bad[i].len), 0);
		assert_int_equal(frame_reader_next(&r, &payload, &plen), 1);
		assert_int_equal(plen, bad[i].len);
		out = kprof__request__unpack(NULL, plen, payload);
		if (out)
			fail_msg("%s: unpacked as a request", bad[i].what);
		frame_reader_release(&r);
	}

	/* a valid request cut short */
	at.pid = 4242;
	at.freq_hz = 99;
	req.body_case = KPROF__REQUEST__BODY_ATTACH;
	req.attach = &at;
	assert_int_equal(frame_pack(&req.base, FRAME_MAX_REQUEST, &buf, &len), 0);
	out = kprof__request__unpack(NULL, len - FRAME_HDR_SIZE, buf + FRAME_HDR_SIZE);
	assert_non_null(out);
	kprof__request__free_unpacked(out, NULL);
	for (size_t cut = 1; cut < len - FRAME_HDR_SIZE; cut++)
		assert_null(kprof__request__unpack(NULL, cut, buf + FRAME_HDR_SIZE));
	free(buf);

	/* an unknown field is not an error: the daemon answers such a request as unknown */
	{
		static const uint8_t unknown[] = {0xf8, 0x06, 0x01}; /* field 111, varint 1 */

		out = kprof__request__unpack(NULL, sizeof(unknown), unknown);
		assert_non_null(out);
		assert_int_equal(out->body_case, KPROF__REQUEST__BODY__NOT_SET);
		kprof__request__free_unpacked(out, NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_header),	     cmocka_unit_test(test_init_release),
	    cmocka_unit_test(test_split_every_byte), cmocka_unit_test(test_byte_at_a_time),
	    cmocka_unit_test(test_split_pairs),	     cmocka_unit_test(test_reuse),
	    cmocka_unit_test(test_truncated),	     cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_exact_max),	     cmocka_unit_test(test_pack_request),
	    cmocka_unit_test(test_pack_stream),	     cmocka_unit_test(test_pack_max),
	    cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
