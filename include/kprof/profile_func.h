/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_func.h: what a profile says of one function (a name, module, kind and counts) and
 * whether it is a kernel frame: the vocabulary of profile.h and profile_view.h, which both
 * include it. Types and one inline test only; no I/O, no globals. */
#ifndef KPROF_PROFILE_FUNC_H
#define KPROF_PROFILE_FUNC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum profile_kind {
	PROFILE_KIND_NATIVE = 1,
	PROFILE_KIND_JIT = 2,
	PROFILE_KIND_KERNEL = 3,
	PROFILE_KIND_UNKNOWN = 4,
};

struct profile_func {
	const char *name;
	const char *module;
	uint64_t start;
	enum profile_kind kind;
	uint64_t self;
	uint64_t total;
	const char *file; /* its source file, NULL if unknown (profile_set_source) */
	uint32_t line;	  /* and line there, 0 if unknown */
	/* name and module are not the profile's copies but strings that outlive it (the
	 * host-wide names: profile_intern_shared); in the padding, at no cost */
	bool shared;
};

#define PROFILE_KERNEL_NAME "[kernel]"
#define PROFILE_KERNEL_MODULE "[kernel.kallsyms]"
#define PROFILE_ID_KERNEL                                                                          \
	UINT32_MAX /* the id of the one kernel frame of PROFILE_VIEW_NO_KERNEL                     \
		    */

/* A kernel frame: kind PROFILE_KIND_KERNEL, or unresolved in the kernel's module. */
static inline bool profile_func_is_kernel(const struct profile_func *f)
{
	return f->kind == PROFILE_KIND_KERNEL ||
	       (f->kind == PROFILE_KIND_UNKNOWN && !strcmp(f->module, PROFILE_KERNEL_MODULE));
}

#endif
