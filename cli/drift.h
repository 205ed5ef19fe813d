/* SPDX-License-Identifier: GPL-2.0-only */
/* drift.h: kprofctl drift's output (drift.c). */
#ifndef KPROF_CLI_DRIFT_H
#define KPROF_CLI_DRIFT_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* The reply of `kprofctl drift PID`, as text or one JSON object. */
void drift_render(FILE *f, const Kprof__DriftReply *r, bool json);
/* The reply as one JSON object (no newline), also the "drift" member of export --format json. */
void drift_render_json(FILE *f, const Kprof__DriftReply *r);
/* One drift event on one line (no newline), for the text output and `kprofctl top`. */
void drift_render_event(FILE *f, const Kprof__DriftEvent *e);
/* A drift event as a JSON object. */
void drift_render_event_json(FILE *f, const Kprof__DriftEvent *e);

#endif
