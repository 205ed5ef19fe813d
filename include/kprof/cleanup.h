/* SPDX-License-Identifier: GPL-2.0-only */
/* cleanup.h: scope-bound cleanup in the style of systemd's macros.
 *
 * _cleanup_(fn) runs fn(&var) when var leaves scope; TAKE_PTR / TAKE_FD hand ownership
 * out of such a variable so the cleanup becomes a no-op.
 */
#ifndef KPROF_CLEANUP_H
#define KPROF_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Declare a cleanup function for a type whose destructor takes a pointer (x_free(struct x *)). */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                    \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		if (*p)                                                                            \
			func(*p);                                                                  \
	}

#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _tp = (p);                                                           \
		(p) = NULL;                                                                        \
		_tp;                                                                               \
	})

#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _tf = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_tf;                                                                               \
	})

/* Exchange two variables' values (ownership moves with them). */
#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) _sw = (a);                                                           \
		(a) = (b);                                                                         \
		(b) = _sw;                                                                         \
	} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
