/* SPDX-License-Identifier: GPL-2.0-only */
/* frame.h: length-prefixed framing of control messages, shared by kprofd and kprofctl.
 *
 * A frame is a 4-byte big-endian payload length followed by the payload (one protobuf message).
 * struct frame_reader accumulates bytes from a stream and hands out complete frames; a length
 * above the reader's cap is refused before any of the payload is buffered, so a client cannot
 * make the daemon allocate more than the cap. No I/O: the caller reads and writes the socket.
 */
#ifndef KPROF_FRAME_H
#define KPROF_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define FRAME_HDR_SIZE 4
#define FRAME_MAX_REQUEST (1u << 20) /* daemon's inbound cap: requests are small */
#define FRAME_MAX_REPLY (256u << 20) /* client's inbound cap: profiles can be large */

struct frame_reader {
	uint8_t *buf;
	size_t len; /* bytes held */
	size_t off; /* start of the unconsumed bytes */
	size_t cap; /* allocated */
	size_t max_frame;
};

void frame_reader_init(struct frame_reader *r, size_t max_frame);
void frame_reader_release(struct frame_reader *r);

/* Append n bytes. -ENOMEM; -EMSGSIZE when a pending header announces a frame above the cap
 * (the reader is then unusable: the caller replies and closes). */
int frame_reader_feed(struct frame_reader *r, const void *data, size_t n);

/* 1 and the next complete payload (valid until the next feed or next call), 0 when more bytes
 * are needed, -EMSGSIZE for an oversized frame. */
int frame_reader_next(struct frame_reader *r, const uint8_t **payload, size_t *len);

/* Bytes held that do not yet form a complete frame. */
size_t frame_reader_pending(const struct frame_reader *r);

void frame_put_header(uint8_t hdr[FRAME_HDR_SIZE], uint32_t len);
uint32_t frame_get_header(const uint8_t hdr[FRAME_HDR_SIZE]);

/* Pack msg into a new buffer holding header + payload. -EMSGSIZE above max, -ENOMEM. */
int frame_pack(const ProtobufCMessage *msg, size_t max, uint8_t **ret, size_t *ret_len);

#endif
