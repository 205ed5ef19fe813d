/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_pb.h: checks on protobuf-c messages decoded from fuzzed bytes, for fuzz_frame and
 * fuzz_saved.
 *
 * pb_check() walks a decoded message through its descriptor and checks what kprofd's code takes
 * for granted without looking: a oneof case that is set has its message; proto3 strings are never
 * NULL; repeated fields with n > 0 have their array and no NULL element. pb_check_roundtrip()
 * also packs the message, decodes the result and packs again: both encodings must be equal. Generic
 * over the descriptors, so new messages and fields are covered without touching the fuzzers.
 *
 * One quirk of protobuf-c 1.4 is left out of the round trip: it accepts field number 0 when the
 * tag is written in a non-minimal varint (0x80 0x00 ...), keeps it as an unknown field, and
 * re-encodes it minimally, which it then rejects. kprofd never re-encodes what it decodes (it
 * ignores unknown fields), so messages holding such a field skip the round trip.
 *
 * saved_replay() is what target_restore() (daemon/target/target.c) does with a kprof.SavedProfile read
 * from the state directory, minus the daemon: the same code (proto/saved.c: saved_check, then
 * saved_profile, saved_hcct_tree), and the profile is then folded and sorted as a report would.
 */
#ifndef KPROF_FUZZ_PB_H
#define KPROF_FUZZ_PB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "fuzz.h"
#include "kprof/hcct.h"
#include "kprof/profile.h"
#include "kprof/saved.h"
#include "proto/kprof.pb-c.h"

static bool pb_check(const ProtobufCMessage *m);

/* true if the value is a message holding an unknown field number 0. */
static bool pb_check_value(const ProtobufCFieldDescriptor *f, const void *slot)
{
	if (f->type == PROTOBUF_C_TYPE_STRING) {
		const char *s = *(const char *const *)slot;

		FUZZ_CHECK(s, "%s: NULL string", f->name);
		(void)strlen(s); /* ASan: the string is readable up to its NUL */
	} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)slot;

		if (sub) {
			FUZZ_CHECK(sub->descriptor == f->descriptor, "%s: wrong descriptor",
				   f->name);
			return pb_check(sub);
		}
	}
	return false;
}

/* Walk m; true if it or a message inside holds an unknown field number 0. */
static bool pb_check(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	bool tag0 = false;

	FUZZ_CHECK(d && d->magic == PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "bad descriptor");
	FUZZ_CHECK(!m->n_unknown_fields || m->unknown_fields, "unknown fields without an array");
	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		tag0 |= m->unknown_fields[i].tag == 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;
		const void *slot = base + f->offset;

		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t c = *(const uint32_t *)(base + f->quantifier_offset);

			if (c != f->id)
				continue;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				FUZZ_CHECK(*(void *const *)slot,
					   "%s.%s: oneof case set, no message", d->name, f->name);
			tag0 |= pb_check_value(f, slot);
		} else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			const char *arr = *(const char *const *)slot;
			size_t esz =
			    f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING
				? sizeof(void *)
				: 0;

			FUZZ_CHECK(!n || arr, "%s.%s: %zu elements, no array", d->name, f->name, n);
			for (size_t k = 0; esz && k < n; k++) {
				if (f->type == PROTOBUF_C_TYPE_MESSAGE)
					FUZZ_CHECK(*(void *const *)(arr + k * esz),
						   "%s.%s[%zu]: NULL", d->name, f->name, k);
				tag0 |= pb_check_value(f, arr + k * esz);
			}
		} else if (f->type == PROTOBUF_C_TYPE_STRING && f->label != PROTOBUF_C_LABEL_NONE) {
			if (*(const char *const *)slot) /* proto2 optional: NULL is allowed */
				tag0 |= pb_check_value(f, slot);
		} else {
			tag0 |= pb_check_value(f, slot);
		}
	}
	return tag0;
}

/* Walk m (pb_check), then pack, unpack, pack again: the same bytes. */
static void pb_check_roundtrip(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	ProtobufCMessage *m2;
	uint8_t *b1, *b2;
	size_t n1, n2;

	if (pb_check(m))
		return;
	n1 = protobuf_c_message_get_packed_size(m);
	b1 = malloc(n1 ? n1 : 1);
	FUZZ_CHECK(b1, "out of memory");
	FUZZ_CHECK(protobuf_c_message_pack(m, b1) == n1, "%s: packed size", d->name);
	m2 = protobuf_c_message_unpack(d, NULL, n1, b1);
	FUZZ_CHECK(m2, "%s: its own encoding does not decode", d->name);
	FUZZ_CHECK(!pb_check(m2), "%s: field 0 after a round trip", d->name);
	n2 = protobuf_c_message_get_packed_size(m2);
	FUZZ_CHECK(n2 == n1, "%s: re-encoded size %zu != %zu", d->name, n2, n1);
	b2 = malloc(n2 ? n2 : 1);
	FUZZ_CHECK(b2, "out of memory");
	FUZZ_CHECK(protobuf_c_message_pack(m2, b2) == n2, "%s: packed size", d->name);
	FUZZ_CHECK(!memcmp(b1, b2, n1), "%s: re-encoding differs", d->name);
	protobuf_c_message_free_unpacked(m2, NULL);
	free(b1);
	free(b2);
}

static int saved_stack_cb(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count,
			  void *userdata)
{
	const struct profile *p = userdata;

	(void)tid;
	(void)count;
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(ids[i] < profile_nfuncs(p), "stack id %u out of range", ids[i]);
	return 0;
}

/* A checked saved HCCT as target_restore() rebuilds it (saved_hcct_tree, ids mapped), then
 * filtered as a report's query would: every id a function of p, parents first. */
static void saved_replay_hcct(Kprof__SavedHcctNode *const *v, size_t n, uint64_t hcct_n,
			      const uint32_t *map, const struct profile *p)
{
	struct hcct_tree *tr = NULL, *hot = NULL;
	int err = saved_hcct_tree(v, n, hcct_n, map, &tr);

	FUZZ_CHECK(err == 0 || err == -ENOMEM, "saved_hcct_tree of a checked message: %d", err);
	if (err < 0)
		return;
	for (size_t i = 0; i < tr->len; i++) {
		const struct hcct_entry *e = &tr->entries[i];

		FUZZ_CHECK(e->id < profile_nfuncs(p), "hcct id %u out of range", e->id);
		FUZZ_CHECK(e->parent == HCCT_NONE || e->parent < i, "parent %u of %zu", e->parent,
			   i);
	}
	err = hcct_tree_filter(tr, 1, 100, &hot);
	FUZZ_CHECK(err == 0 || err == -ENOMEM, "hcct_tree_filter of a saved HCCT: %d", err);
	hcct_tree_free(hot);
	hcct_tree_free(tr);
}

/* target_restore()'s checks and profile building; 0 if the daemon would keep the profile. */
static int saved_replay(const Kprof__SavedProfile *sp)
{
	struct profile *p = NULL;
	uint32_t *map = NULL;
	int err = saved_check(sp);

	if (err < 0)
		return err;
	err = saved_profile(sp, NULL, &p, &map);
	if (err >= 0) {
		saved_replay_hcct(sp->hcct, sp->n_hcct, sp->hcct_n, map, p);
		saved_replay_hcct(sp->exact_hcct, sp->n_exact_hcct, sp->exact_hcct_n, map, p);
		struct profile_stats st;
		uint32_t *sorted = NULL;
		size_t nsorted = 0, len = 0;
		char *folded = NULL;

		err = profile_folded(p, &folded, &len);
		FUZZ_CHECK(err == 0, "profile_folded: %d", err);
		FUZZ_CHECK(strlen(folded) == len, "folded text: length %zu, strlen %zu", len,
			   strlen(folded));
		free(folded);
		err = profile_sorted(p, &sorted, &nsorted);
		FUZZ_CHECK(err == 0, "profile_sorted: %d", err);
		FUZZ_CHECK(nsorted == profile_nfuncs(p), "sorted %zu of %zu functions", nsorted,
			   profile_nfuncs(p));
		for (size_t i = 0; i < nsorted; i++)
			FUZZ_CHECK(sorted[i] < nsorted && profile_func_get(p, sorted[i]),
				   "sorted id %u", sorted[i]);
		free(sorted);
		FUZZ_CHECK(profile_foreach_stack(p, saved_stack_cb, p) == 0, "foreach_stack");
		profile_get_stats(p, &st);
		FUZZ_CHECK(st.funcs == profile_nfuncs(p), "stats.funcs");
	}
	profile_free(p);
	free(map);
	return err;
}

#endif
