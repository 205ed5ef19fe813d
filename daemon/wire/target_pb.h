/* SPDX-License-Identifier: GPL-2.0-only */
/* target_pb.h: a target as protobuf messages, and back (target_pb.c). */
#ifndef KPROF_DAEMON_TARGET_PB_H
#define KPROF_DAEMON_TARGET_PB_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/arena.h"
#include "kprof/saved.h"
#include "wire/drift_reply.h"
#include "wire/paths_reply.h"
#include "proto/kprof.pb-c.h"
#include "target/target.h"

/* The target's facts (pointers into t: use pb before t changes). */
void target_fill_pb(const struct target *t, Kprof__Target *pb);
/* Only those that say which process it is and how it was sampled (pid, uid, comm, state,
 * frequency, samples, times, cgroup, rule, all, and the runtime's: JIT symbols, jitdump, JVM):
 * what a pprof of it needs, without the statistics that walk its tables. */
void target_fill_pb_brief(const struct target *t, Kprof__Target *pb);
/* A frame kind of the profile as kprof.proto's. */
Kprof__FrameKind target_pb_kind(enum profile_kind k);

/* What attaches t again after kprofd's restart (its --duration left: duration_left seconds). */
void target_resume_pb(const struct target *t, unsigned duration_left, Kprof__SavedResume *r);
/* The source lines of a message's addresses (lines_pb.c): their strings and structures, and
 * what the resolver did (SavedProfile.lines, AnnotateReply.lines). */
struct lines_store {
	struct arena a;
	Kprof__SavedLinesInfo info;
	char *notes[SAVED_MAX_LINES_NOTES];
};

/* A target's profile as a kprof.SavedProfile message (for the state directory and for export);
 * it points into the target's profile, so use it before the target changes. */
struct saved_msg {
	Kprof__SavedProfile msg;
	Kprof__Target target;
	Kprof__SavedFunction *fv, **fp;
	Kprof__SavedStack *sv, **sp;
	Kprof__SavedHcctNode *hv, **hp;
	Kprof__SavedHcctNode *xv, **xp; /* the exact tree */
	struct paths_msg pm;		/* the last path trace, if any */
	Kprof__SavedMapping *mv, **mp;
	Kprof__SavedThread *tv, **tp;
	struct drift_reply_msg dm; /* the drift result kept (drift_reply_keep) */
	Kprof__DriftReply *dk;	   /* ... or the one a restored profile kept */
	Kprof__SavedResume resume; /* t->resume: kprofd attaches it again at its next start */
	Kprof__SavedLeafAddr *lv, **lp; /* the sampled leaf addresses (annotate store) */
	uint32_t *ids;	/* the stacks' ids, when they are not the profile's (target_since.c) */
	uint32_t *fids; /* the profile's id of each function, or NULL: function i is id i */
	Kprof__SavedCallSite *cv, **cp; /* the call sites (t->csite) */
	struct lines_store lines;	/* their source lines (lines_pb.c), when asked */
};
int saved_msg_build(const struct target *t, struct saved_msg *m);
/* The same with the stacks and functions of range and the HCCT snapshot tree instead of t's (a
 * time range's, windows.c; range NULL: t's whole profile); no exact-mode calls or path trace
 * then. The caller sets the range's Target fields (samples, window span). */
int saved_msg_build_range(const struct target *t, const struct profile *range,
			  const struct hcct_tree *tree, struct saved_msg *m);
/* The off-CPU profile of t (attach --off-cpu) as a SavedProfile, counts in nanoseconds: its
 * target's samples the nanoseconds in all. -ENODATA if t has none, -ENOMEM. */
int saved_msg_build_offcpu(const struct target *t, struct saved_msg *m);
void saved_msg_release(struct saved_msg *m);
/* Parts of saved_msg_build, for the messages of target_since.c. The target's mapping and
 * thread-name tables into m. Leaf addresses into m: v[0..n) with ids that are m's function
 * indexes (those >= nf and those with no samples are left out), sorted in place, the heaviest
 * SAVED_MAX_LEAF_ADDRS kept and the others' samples counted as dropped. 0 or -ENOMEM. */
int saved_msg_tables(const struct target *t, struct saved_msg *m);
int saved_msg_leaf_addrs(struct saved_msg *m, struct annot_addr *v, size_t n, size_t nf);
/* A message of only t's mapping table and thread names (for source lines of addresses that
 * are not the profile's: annotate's instructions). */
int saved_msg_build_tables(const struct target *t, struct saved_msg *m);

/* The SavedProfile of t, packed (malloc'd). */
int target_pack(const struct target *t, uint8_t **buf, size_t *len);
/* A kept target rebuilt from a saved profile (validated by saved_check: -EBADMSG if it is not
 * a SavedProfile or is inconsistent). */
int target_restore(const struct target_env *env, const Kprof__SavedProfile *sp,
		   struct target **ret);
int target_unpack(const struct target_env *env, const uint8_t *buf, size_t len,
		  struct target **ret);

#endif
