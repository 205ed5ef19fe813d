/* SPDX-License-Identifier: GPL-2.0-only */
/* lines_pb.h: source lines into a target's SavedProfile (lines_pb.c; issue 32). */
#ifndef KPROF_DAEMON_LINES_PB_H
#define KPROF_DAEMON_LINES_PB_H

#include <stdbool.h>

#include "symbols/srclines.h"
#include "target/target.h"

struct saved_msg;

/* The source lines of the leaf addresses of m (built from t by saved_msg_build): each found in
 * kprofd's cache, else (queue true) queued on its kprof-lines helper. m->msg.lines says what was
 * found; answers cached after since (srclines_seq when the request came) are not counted as the
 * cache's. The number of addresses queued, not resolved yet, or -ENOMEM: the caller may wait
 * for them (srclines_wait) and build m again, not queueing, with the same since. The lines live
 * in m->lines (saved_msg_release frees them). */
int lines_pb_fill(struct saved_msg *m, const struct target *t, struct srclines *sl, bool queue,
		  uint64_t since);

/* The same for the instructions of an annotate reply of t (each insn's lines, r->lines), with
 * m (saved_msg_build_tables of t) for t's mapping table: the lines live in m->lines until it is
 * released (after the reply is sent). The number queued, or -ENOMEM. */
int lines_pb_annotate(Kprof__AnnotateReply *r, const struct target *t, struct srclines *sl,
		      bool queue, uint64_t since, struct saved_msg *m);

#endif
