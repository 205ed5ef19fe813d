/* SPDX-License-Identifier: GPL-2.0-only */
/* tnames.h: the names (comm) of one target's threads, by tid, bounded (tnames.c).
 *
 * A sample carries its thread's comm; the profile keeps its stacks per tid, and exports name
 * each tid beside it (pprof's thread_name label). The table keeps the name the latest sample of
 * a thread saw (a thread may rename itself), at most max threads; the names of threads past the
 * cap are not kept and are counted. Pure: no I/O, no globals.
 */
#ifndef KPROF_TNAMES_H
#define KPROF_TNAMES_H

#include <stddef.h>
#include <stdint.h>

#define TNAMES_NAME_MAX 16 /* TASK_COMM_LEN, with the NUL */
#define TNAMES_DEFAULT_MAX 16384

struct tnames;

/* At most max threads (0: TNAMES_DEFAULT_MAX). 0 or -ENOMEM. */
int tnames_new(size_t max, struct tnames **ret);
void tnames_free(struct tnames *t);

/* Thread tid is named name (its first TNAMES_NAME_MAX - 1 bytes, up to a NUL): 1 if that is new
 * or changed, 0 if the same, -ENOSPC if tid is new and the table full (counted), -ENOMEM,
 * -EINVAL for tid 0. */
int tnames_set(struct tnames *t, uint32_t tid, const char *name, size_t len);
/* The name of tid, or NULL. Valid until the next tnames_set or free. */
const char *tnames_get(const struct tnames *t, uint32_t tid);
size_t tnames_count(const struct tnames *t);
uint64_t tnames_dropped(const struct tnames *t);

typedef int (*tnames_fn)(uint32_t tid, const char *name, void *userdata);
/* Every named thread, in the order first named; stops at and returns fn's first non-zero return. */
int tnames_foreach(const struct tnames *t, tnames_fn fn, void *userdata);

#endif
