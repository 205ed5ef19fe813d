// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_frame.c: libFuzzer target for the control channel's decoding path: the frame reader
 * (proto/frame.c) and the protobuf-c decoding of every payload (build/proto/kprof.pb-c.c).
 *
 * The input is a byte stream as a client could send it. It is fed to a frame reader in pieces
 * whose sizes come from the input's hash, draining complete frames after every feed as
 * kprofd's control loop does, and checked against a direct walk over the stream: the same
 * frames with the same bytes, -EMSGSIZE exactly when a header announces more than the cap, the
 * same pending bytes at the end. Each payload is decoded as a kprof.Request (what kprofd
 * reads from clients), a kprof.SavedProfile (what it reads from its state directory; replayed
 * into a profile as target_restore() does) and a kprof.Reply (what kprofctl reads); every
 * decoded message is walked (fuzz_pb.h), re-encoded, and re-framed with frame_pack(). A second
 * pass with a tiny cap drawn from the hash exercises the refusal of oversized frames.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_pb.h"
#include "kprof/frame.h"
#include "proto/kprof.pb-c.h"

/* frame_pack() the message, read it back with a reader in one feed: the same payload. */
static void check_reframe(const ProtobufCMessage *m)
{
	struct frame_reader r;
	const uint8_t *payload;
	uint8_t *buf = NULL;
	size_t len = 0, plen;
	size_t n = protobuf_c_message_get_packed_size(m);
	int err;

	err = frame_pack(m, FRAME_MAX_REQUEST, &buf, &len);
	if (n > FRAME_MAX_REQUEST) {
		FUZZ_CHECK(err == -EMSGSIZE, "frame_pack of %zu bytes: %d", n, err);
		return;
	}
	FUZZ_CHECK(err == 0 && len == FRAME_HDR_SIZE + n, "frame_pack: %d", err);
	frame_reader_init(&r, FRAME_MAX_REQUEST);
	FUZZ_CHECK(frame_reader_feed(&r, buf, len) == 0, "feed of a packed frame");
	FUZZ_CHECK(frame_reader_next(&r, &payload, &plen) == 1 && plen == n &&
		       !memcmp(payload, buf + FRAME_HDR_SIZE, n),
		   "packed frame does not read back");
	FUZZ_CHECK(frame_reader_pending(&r) == 0, "bytes left after a packed frame");
	frame_reader_release(&r);
	free(buf);
}

static void decode_payload(const uint8_t *p, size_t n)
{
	Kprof__Request *req = kprof__request__unpack(NULL, n, p);
	Kprof__SavedProfile *sp = kprof__saved_profile__unpack(NULL, n, p);
	Kprof__Reply *rep = kprof__reply__unpack(NULL, n, p);

	if (req) {
		pb_check_roundtrip(&req->base);
		check_reframe(&req->base);
		kprof__request__free_unpacked(req, NULL);
	}
	if (sp) {
		pb_check_roundtrip(&sp->base);
		saved_replay(sp);
		kprof__saved_profile__free_unpacked(sp, NULL);
	}
	if (rep) {
		pb_check_roundtrip(&rep->base);
		kprof__reply__free_unpacked(rep, NULL);
	}
}

/* Feed data in pieces to a reader capped at max_frame, compare with a direct walk. */
static void run(const uint8_t *data, size_t size, size_t max_frame, uint64_t seed, bool decode)
{
	struct frame_reader r;
	size_t fed = 0, off = 0; /* off: start of the next frame in data, per the walk */
	bool refused = false;

	frame_reader_init(&r, max_frame);
	while (fed < size && !refused) {
		size_t n = fuzz_piece(&seed, size - fed);
		int err = frame_reader_feed(&r, data + fed, n);

		fed += n;
		if (err == -EMSGSIZE) {
			FUZZ_CHECK(fed - off >= FRAME_HDR_SIZE &&
				       frame_get_header(data + off) > max_frame,
				   "feed refused a frame the walk accepts (offset %zu)", off);
			break;
		}
		FUZZ_CHECK(err == 0, "frame_reader_feed: %d", err);
		for (;;) {
			const uint8_t *payload = NULL;
			size_t plen = 0;
			uint32_t want;

			err = frame_reader_next(&r, &payload, &plen);
			if (fed - off < FRAME_HDR_SIZE) {
				FUZZ_CHECK(err == 0, "next: %d with a partial header", err);
				break;
			}
			want = frame_get_header(data + off);
			if (want > max_frame) {
				FUZZ_CHECK(err == -EMSGSIZE,
					   "next: %d for a %u-byte frame, cap %zu", err, want,
					   max_frame);
				refused = true;
				break;
			}
			if (fed - off - FRAME_HDR_SIZE < want) {
				FUZZ_CHECK(err == 0, "next: %d with a partial payload", err);
				break;
			}
			FUZZ_CHECK(err == 1 && plen == want &&
				       !memcmp(payload, data + off + FRAME_HDR_SIZE, want),
				   "next: %d, %zu bytes, expected frame at %zu of %u bytes", err,
				   plen, off, want);
			off += FRAME_HDR_SIZE + want;
			if (decode)
				decode_payload(payload, plen);
		}
	}
	if (!refused && fed == size)
		FUZZ_CHECK(frame_reader_pending(&r) == size - off, "pending %zu, expected %zu",
			   frame_reader_pending(&r), size - off);
	frame_reader_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fuzz_hash(data, size);

	run(data, size, FRAME_MAX_REQUEST, h, true);
	run(data, size, (size_t)(h % 64), h ^ UINT64_C(0x5bd1e995), false);
	return 0;
}
