/* SPDX-License-Identifier: GPL-2.0-only */
/* store.h: kept profiles on disk (store.c) and the SavedProfile message built from a target. */
#ifndef KPROF_DAEMON_STORE_H
#define KPROF_DAEMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "paths.h"
#include "proto/kprof.pb-c.h"

struct manager;
struct target;

/* A target's profile as a kprof.SavedProfile message (for the state directory and for export);
 * it points into the target's profile, so use it before the target changes. */
struct saved_msg {
	Kprof__SavedProfile msg;
	Kprof__Target target;
	Kprof__SavedFunction *fv, **fp;
	Kprof__SavedStack *sv, **sp;
	Kprof__SavedHcctNode *hv, **hp;
	struct paths_msg pm; /* the last path trace, if any */
};
int saved_msg_build(const struct target *t, struct saved_msg *m);
void saved_msg_release(struct saved_msg *m);

struct store;
/* Open (creating) the state directory; profiles go to DIR/profiles. */
int store_open(const char *dir, struct store **ret);
void store_free(struct store *st);
/* Write t's profile (atomically: temporary file, then rename); sets t->saved_name. */
int store_save(struct store *st, struct target *t);
/* Delete t's file, if it has one. */
void store_remove(struct store *st, struct target *t);
/* Rebuild every saved profile as a kept target; returns how many. */
int store_load(struct store *st, struct manager *m);

#endif
