/* SPDX-License-Identifier: GPL-2.0-only */
/* hash.h: mix64, the integer mixer behind kprof's hash tables.
 *
 * mix64 is MurmurHash3's 64-bit finalizer (fmix64): a bijection on 64-bit values in which every
 * input bit flips every output bit with probability close to 1/2. Keys that differ in a few bits
 * (sequential ids, nearby addresses) therefore spread over the low bits a power-of-two table
 * masks, and two distinct keys never collide before the mask. static inline: the sampling hot
 * path (profile, k-SF, HCCT) hashes every frame.
 */
#ifndef KPROF_HASH_H
#define KPROF_HASH_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
