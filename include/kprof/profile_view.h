/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_view.h: what one reader may see of a profile (profile_view.c): views that hide kernel
 * addresses or the kernel, the flat profile and stacks through them, and folded text within a
 * byte cap. Included by profile.h. Pure: no I/O, no globals. */
#ifndef KPROF_PROFILE_VIEW_H
#define KPROF_PROFILE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/profile_func.h"

struct profile;

/* ---- What one reader may see ----
 * A reader the kernel would not show kernel addresses to gets them as 0 (PROFILE_VIEW_NO_KADDR);
 * one the kernel would not let profile the kernel sees every kernel frame as the single frame
 * "[kernel]" in "[kernel.kallsyms]" at address 0 (PROFILE_VIEW_NO_KERNEL): consecutive kernel
 * frames of a stack become one, and the flat profile has one kernel row (self: the kernel
 * functions' self counts summed; total: the samples whose stack holds any kernel frame). Which
 * view a reader gets is the caller's policy. */
#define PROFILE_VIEW_NO_KADDR 1u
#define PROFILE_VIEW_NO_KERNEL 2u /* implies PROFILE_VIEW_NO_KADDR */

/* f as seen through view (the strings are f's or static). */
struct profile_func profile_func_view(const struct profile_func *f, unsigned view);

/* One row of a flat profile as seen through a view: id is a function id, or PROFILE_ID_KERNEL
 * for the merged kernel row. */
struct profile_row {
	uint32_t id;
	struct profile_func f;
};
/* The flat profile through view, sorted as profile_sorted sorts. *ret is malloc'd. */
int profile_flat_view(const struct profile *p, unsigned view, struct profile_row **ret,
		      size_t *ret_n);

/* The stack ids[0..n) through view into out (room for n): with PROFILE_VIEW_NO_KERNEL each run
 * of kernel frames becomes the one id kid. Returns the length written. */
size_t profile_stack_view(const struct profile *p, unsigned view, const uint32_t *ids, size_t n,
			  uint32_t kid, uint32_t *out);

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
