/* SPDX-License-Identifier: GPL-2.0-only */
/* requests_func.h: paths, annotate and drift requests (requests_func.c). */
#ifndef KPROF_DAEMON_REQUESTS_FUNC_H
#define KPROF_DAEMON_REQUESTS_FUNC_H

#include "proto/kprof.pb-c.h"

struct client;

void requests_paths(struct client *cl, const Kprof__PathsRequest *req);
void requests_annotate(struct client *cl, const Kprof__AnnotateRequest *req);
/* kprofctl drift PID: an attached target's profile drift, or the result kept with an ended
 * one's profile. */
void requests_drift(struct client *cl, const Kprof__DriftRequest *req);

#endif
