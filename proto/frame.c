// SPDX-License-Identifier: GPL-2.0-only
/* frame.c: length-prefixed protobuf frames (see include/kprof/frame.h).
 *
 * The reader keeps one growable buffer. Consumed frames advance `off`; the buffer is compacted
 * lazily when more room is needed, so a burst of small frames costs no copying per frame.
 * The header is checked against the cap as soon as its 4 bytes are in, before the payload; as
 * the caller drains complete frames after every feed, the buffer stays below cap + one read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/frame.h"

void frame_reader_init(struct frame_reader *r, size_t max_frame)
{
	memset(r, 0, sizeof(*r));
	r->max_frame = max_frame;
}

void frame_reader_release(struct frame_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

void frame_put_header(uint8_t hdr[FRAME_HDR_SIZE], uint32_t len)
{
	hdr[0] = len >> 24;
	hdr[1] = len >> 16;
	hdr[2] = len >> 8;
	hdr[3] = len;
}

uint32_t frame_get_header(const uint8_t hdr[FRAME_HDR_SIZE])
{
	return (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
}

static int check_header(const struct frame_reader *r)
{
	if (r->len - r->off >= FRAME_HDR_SIZE && frame_get_header(r->buf + r->off) > r->max_frame)
		return -EMSGSIZE;
	return 0;
}

int frame_reader_feed(struct frame_reader *r, const void *data, size_t n)
{
	int err = check_header(r);

	if (err < 0)
		return err;
	if (n == 0)
		return 0;
	if (r->len + n > r->cap && r->off > 0) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		uint8_t *p;

		while (cap < r->len + n)
			cap *= 2;
		p = realloc(r->buf, cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return check_header(r);
}

int frame_reader_next(struct frame_reader *r, const uint8_t **payload, size_t *len)
{
	size_t avail = r->len - r->off;
	uint32_t n;

	if (avail < FRAME_HDR_SIZE)
		return 0;
	n = frame_get_header(r->buf + r->off);
	if (n > r->max_frame)
		return -EMSGSIZE;
	if (avail - FRAME_HDR_SIZE < n)
		return 0;
	*payload = r->buf + r->off + FRAME_HDR_SIZE;
	*len = n;
	r->off += FRAME_HDR_SIZE + n;
	if (r->off == r->len)
		r->off = r->len = 0;
	return 1;
}

size_t frame_reader_pending(const struct frame_reader *r)
{
	return r->len - r->off;
}

int frame_pack(const ProtobufCMessage *msg, size_t max, uint8_t **ret, size_t *ret_len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf;

	if (n > max || n > UINT32_MAX)
		return -EMSGSIZE;
	buf = malloc(FRAME_HDR_SIZE + n);
	if (!buf)
		return -ENOMEM;
	frame_put_header(buf, n);
	protobuf_c_message_pack(msg, buf + FRAME_HDR_SIZE);
	*ret = buf;
	*ret_len = FRAME_HDR_SIZE + n;
	return 0;
}
