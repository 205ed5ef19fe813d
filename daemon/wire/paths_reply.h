/* SPDX-License-Identifier: GPL-2.0-only */
/* paths_reply.h: a path trace's results as a kprof.PathsReply, and back (paths_reply.c). */
#ifndef KPROF_DAEMON_PATHS_REPLY_H
#define KPROF_DAEMON_PATHS_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"
#include "target/target.h"

/* A PathsReply and the arrays it points into. */
struct paths_msg {
	Kprof__PathsReply r;
	Kprof__PathBlock *bv, **bp;
	Kprof__PathInfo *pv, **pp;
	Kprof__PathStep *sv, **sp;
	Kprof__PathSeq *qv, **qp;
	Kprof__EdgeCount *ev, **ep;
	uint64_t *ids, *levels;
	/* anonymous code (hardware breakpoints): branches, loops, what was not covered */
	Kprof__BranchCount *bcv, **bcp;
	Kprof__HwLoop *hlv, **hlp;
	uint32_t *lblocks;
	uint64_t *assumed;
	char **nc, *ncbuf;
	/* Events and structural profiling (paths_spp.c). */
	uint64_t *evfunc, *evloops;
	Kprof__LoopEvents *lv, **lp;
	uint32_t *evblocks; /* anonymous code: the followed loops' blocks, their runs, and */
	uint64_t *evruns;   /* what the event counts leave out */
	char **evnc, *evncbuf;
	Kprof__SppReply spp;
	Kprof__SppGraph *gv, **gp;
	Kprof__SppPath *spv, **spp_p;
	int32_t *nodes;
};

struct path_trace;
struct ksf_ipf;
/* Event counts of the function and its loops from the 1-grams of ipf (paths_spp.c). */
int paths_events_fill(const struct path_trace *tr, const struct ksf_ipf *ipf, struct paths_msg *pm);
/* The SPP section, at most top paths (0: all). */
int paths_spp_fill(const struct path_trace *tr, uint32_t top, struct paths_msg *pm);
void paths_extra_release(struct paths_msg *pm);
/* The trace's results, at most top sequences and paths of each kind (0: all); brief: the state
 * and counters only (no k-IPF is built). -ENODATA if the target has no trace. The caller fills
 * r.target. */
int paths_reply(const struct target *t, uint32_t top, bool brief, struct paths_msg *pm);
void paths_msg_release(struct paths_msg *pm);
/* A running trace's cost in its target's message (list, status); nothing if none runs. */
void paths_fill_target(const struct path_trace *tr, Kprof__Target *pb);
/* A kept target's last trace, from its saved profile. */
int paths_restore(struct target *t, const Kprof__PathsReply *saved);

#endif
