/* SPDX-License-Identifier: GPL-2.0-only */
/* annotate_reply.h: an annotation as a kprof.AnnotateReply (annotate_reply.c). */
#ifndef KPROF_DAEMON_ANNOTATE_REPLY_H
#define KPROF_DAEMON_ANNOTATE_REPLY_H

#include "target/annotate.h"
#include "proto/kprof.pb-c.h"

/* An AnnotateReply and the arrays it points into. */
struct annotate_msg {
	Kprof__AnnotateReply r;
	Kprof__AnnotateInsn *iv, **ip;
	Kprof__AnnotateBlock *bv, **bp;
	Kprof__AnnotateBackEdge *ev, **ep;
	uint32_t *hot;
	char cfg_error[128];
};
/* The reply for res (which must outlive it); the caller fills r.target. 0 or -ENOMEM. */
int annotate_reply(const struct annotate_result *res, struct annotate_msg *m);
void annotate_msg_release(struct annotate_msg *m);

#endif
