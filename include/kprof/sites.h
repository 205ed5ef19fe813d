/* SPDX-License-Identifier: GPL-2.0-only */
/* sites.h: a profile's call sites by (caller, callee) pair (sites.c; issue 32), for the views
 * that put a caller frame at its call site: pprof's locations, folded and hcct --lines. kprof
 * knows which sites a caller called a callee from, not which stack came from which: only a pair
 * seen from one site has one. Pure. */
#ifndef KPROF_SITES_H
#define KPROF_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

struct sites {
	const Kprof__SavedCallSite **v; /* sp's, by (caller, callee, address) */
	size_t n;
};

/* 0, -EINVAL (a call site of a function that does not exist), -ENOMEM. */
int sites_init(struct sites *st, const Kprof__SavedProfile *sp);
void sites_release(struct sites *st);
/* The end of the pair starting at v[a] (the first index past it), and in *one whether all its
 * sites are one address. */
size_t sites_pair_end(const struct sites *st, size_t a, bool *one);
/* The call site of caller calling callee when the pair was seen from one site, else NULL. */
const Kprof__SavedCallSite *sites_one(const struct sites *st, uint32_t caller, uint32_t callee);

#endif
