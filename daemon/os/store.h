/* SPDX-License-Identifier: GPL-2.0-only */
/* store.h: named blobs in the state directory (store.c). */
#ifndef KPROF_DAEMON_STORE_H
#define KPROF_DAEMON_STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;
/* Open (creating) the state directory; blobs go to DIR/profiles. */
int store_open(const char *dir, struct store **ret);
void store_free(struct store *st);
/* The directory the blobs are in (for messages). */
const char *store_path(const struct store *st);
/* Write the blob name (a plain file name) atomically: temporary file, fsync, rename. */
int store_write(struct store *st, const char *name, const void *buf, size_t len);
/* Delete the blob name, if there is one (NULL: nothing). */
void store_remove(struct store *st, const char *name);
/* Read the blob name (malloc'd into *ret): 0, -ENOENT, -EFBIG, -ENODEV (not a regular file:
 * never opened for blocking), another negative errno. */
int store_read(struct store *st, const char *name, uint8_t **ret, size_t *retlen);
/* Bytes [off, off + len) of the blob name (malloc'd into *ret): 0, -ENOENT, -EPIPE (the blob
 * is shorter), -EFBIG (len over the largest blob), -ENODEV (not a regular file), -errno. */
int store_read_at(struct store *st, const char *name, uint64_t off, size_t len, uint8_t **ret);
/* Rename the blob name NAME.bad: unusable, kept for a look, never read again. */
void store_quarantine(struct store *st, const char *name);
/* Each blob: 0 to keep it, a negative errno when it is unusable (it is then renamed
 * NAME.bad, with the reason logged). */
typedef int (*store_blob_fn)(void *ctx, const char *name, const uint8_t *buf, size_t len);
/* Hand every blob whose name ends in suffix to fn; returns how many it kept. An entry that is
 * not a regular file is skipped and logged. */
int store_foreach(struct store *st, const char *suffix, store_blob_fn fn, void *ctx);

#endif
