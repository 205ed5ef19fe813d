/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_cache.h: a profile's address cache and the prefetch hints of the per-sample path
 * (profile_cache.c). Included by profile.h. Pure: no I/O, no globals. */
#ifndef KPROF_PROFILE_CACHE_H
#define KPROF_PROFILE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* Address cache: 1 and *id if addr is cached, 0 if not. */
int profile_cache_get(const struct profile *p, uint64_t addr, uint32_t *id);
void profile_cache_put(struct profile *p, uint64_t addr, uint32_t id);
/* The call from cached return address addr - 1 went to function callee: 1 if that is the callee
 * the last call of this function named for addr (with the same function cached at addr), so the
 * caller has recorded the call site already; else 0, and callee is remembered (an address not
 * cached: 0, nothing remembered). Lets a caller skip a call-site table for calls it has seen. */
int profile_cache_callee(struct profile *p, uint64_t addr, uint32_t callee);
/* Hints, no effect on results: start fetching what profile_cache_get(addr), and what
 * profile_add_hashed(tid, ids, n, hash), will read first. A sample whose tables are out of the
 * cache can issue them for all its frames at once instead of waiting for one miss after
 * another. */
void profile_cache_prefetch(const struct profile *p, uint64_t addr);
void profile_prefetch_stack(const struct profile *p, uint64_t hash, const uint32_t *ids, size_t n);
void profile_cache_clear(struct profile *p);

#endif
