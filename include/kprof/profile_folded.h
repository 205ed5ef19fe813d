/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_folded.h: a profile as folded text (profile_folded.c), whole or through a view
 * (PROFILE_VIEW_*, profile.h) and within a byte cap. Included by profile.h. Pure: no I/O, no
 * globals. */
#ifndef KPROF_PROFILE_FOLDED_H
#define KPROF_PROFILE_FOLDED_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* Folded stacks "root;...;leaf count\n", one line per stack; ';' and control characters in
 * names are replaced so lines stay parseable, and an unresolved frame is named after its module
 * ("[libc.so.6]"). *ret is malloc'd and NUL-terminated. */
int profile_folded(const struct profile *p, char **ret, size_t *ret_len);

struct profile_folded_opts {
	size_t max_bytes; /* of the text; 0: no cap */
	unsigned view;
};
struct profile_folded_info {
	uint64_t stacks;	  /* lines the whole text would have */
	uint64_t stacks_omitted;  /* of them, left out to stay within max_bytes */
	uint64_t samples_omitted; /* their samples */
};
/* profile_folded through a view and within a byte cap. When the whole text would not fit, the
 * lines are taken heaviest first, as many as fit; info says how many were left out. The text
 * is never built beyond the cap. o and info may be NULL. */
int profile_folded_view(const struct profile *p, const struct profile_folded_opts *o, char **ret,
			size_t *ret_len, struct profile_folded_info *info);

#endif
