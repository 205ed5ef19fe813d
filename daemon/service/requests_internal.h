/* SPDX-License-Identifier: GPL-2.0-only */
/* requests_internal.h: what the parts of the request side share and nothing else includes: the
 * request handlers' state (struct requests) and a connected client as they see it (struct
 * client). The parts are listed at the top of requests.c; requests.h is the interface to the
 * rest of kprofd. */
#ifndef KPROF_DAEMON_REQUESTS_INTERNAL_H
#define KPROF_DAEMON_REQUESTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "os/pidns.h"
#include "manager/windows.h"
#include "proto/kprof.pb-c.h"

struct live;
struct manager;
struct srclines_waiter;
struct transport;
struct transport_client;
struct watch;

struct requests {
	struct manager *m;
	struct watch *ws;
	struct transport *tr;
};

/* One connected client, as the request side sees it. */
struct client {
	struct requests *rq;
	struct transport_client *tc;
	uid_t uid;
	pid_t pid;
	struct pidns_client pidns; /* its PIDs: kprofd's, or another namespace's (pidns.h) */
	bool reader;	   /* in the configured read group: may list and read every profile */
	struct live *live; /* a live subscription (kprofctl top), or NULL */
	sd_event_source *live_timer;
	Kprof__Request *req; /* the request being handled (dispatch) */
	/* A --since/--until range being merged in steps (range_defer): the request is held,
	 * decoded, and its handler resumes with the range ready (not dispatched again). */
	struct wrange_job *job;
	sd_event_source *job_src;
	Kprof__Request *job_req;
	struct wrange job_range;
	bool job_ready;
	/* A request waiting for kprof-lines (an export, annotate): its handler found addresses
	 * being resolved and set want_lines instead of replying (requests_want_lines); the
	 * dispatch then holds it, decoded, and handles it again once they are in kprofd's cache
	 * (lines_ready: not held a second time). */
	bool want_lines;
	struct srclines_waiter *lines_wait;
	Kprof__Request *lines_req;
	bool lines_ready;
	uint64_t lines_since; /* srclines_seq when it came */
};

#endif
