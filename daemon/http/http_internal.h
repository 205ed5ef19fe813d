/* SPDX-License-Identifier: GPL-2.0-only */
/* http_internal.h: what the pprof HTTP endpoint's files share (http.c: the daemon, its
 * connections and the interval profiles; http_range.c: since=/until= merged in steps;
 * http_answer.c: responses and requests, for both). Not for other files. */
#ifndef KPROF_DAEMON_HTTP_INTERNAL_H
#define KPROF_DAEMON_HTTP_INTERNAL_H

#include <limits.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "kprof/httpq.h"
#include "kprof/profile.h"
#include "manager/manager.h"
#include "wire/target_pb.h"
#include "wire/target_since.h"

#define HTTP_SEND_SEC 60    /* to take a response */
#define HTTP_MAX_MEMBERS 64 /* targets of one since=/until= range of a unit */
/* Targets of one interval profile (the whole host): as many as kprofd may attach. */
#define HTTP_MAX_HOST KP_MAX_TARGETS
#define NSEC 1000000000ULL

struct http_range;

/* A connection, newest first in httpd.conns. */
struct http_conn {
	struct http_conn *prev, *next;
	struct MHD_Connection *c;
	uint64_t deadline; /* CLOCK_MONOTONIC; 0: none (suspended) */
	bool authed;	   /* a whole request of it passed the token check: not evicted */
	bool cut;	   /* shut down by us, closed by MHD at its next run */
};

struct http_member {
	pid_t pid;
	uint64_t attached_ns;
	struct target_since since; /* its counts at the start */
	struct sdelta *od;	   /* its off-CPU profile's (type=off_cpu|wall), NULL: none */
	/* The interval's end, while the answer waits for source lines (NULL: not kept): the
	 * interval's profile and off-CPU profile then, the later build cut back to them. */
	struct sdelta *e, *oe;
};

/* A profile request, from its snapshot (or its range's first step) to its answer. */
struct http_req {
	struct httpd *h;
	struct http_req *prev, *next;
	struct MHD_Connection *c;
	struct http_conn *hc;
	sd_event_source *timer;
	sd_event_source *gone;	     /* the client's socket hung up while r waits */
	struct sockaddr_storage src; /* the client's address (its port 0) */
	/* The selection (http_profile.c): all that are set must match; none: the whole host. */
	char unit[PATH_MAX]; /* a watch's name (unit_watch) or a systemd unit; "": none */
	char cgroup[256];    /* a cgroup and those under it; "": none */
	char comm[16];
	pid_t pid;
	bool unit_watch, whole;
	enum httpq_type type;
	struct http_member *mv; /* the targets snapshotted, malloc'd */
	size_t nm, cap;
	uint64_t start_real;
	bool answered;
	unsigned status;
	char *body; /* malloc'd */
	size_t len;
	bool pprof;
	struct http_range *rg; /* since=/until= being merged (http_range.c), or NULL */
	/* The interval's new leaf addresses being resolved by kprof-lines (http_profile.c):
	 * answered when they are (lines_done), or at the wait's deadline. */
	struct srclines_waiter *lines_wait;
	bool lines_done;
	uint64_t lines_since;		  /* srclines_seq when the answer was first built */
	uint64_t end_real;		  /* ... and its end (CLOCK_REALTIME) */
	void (*stop)(struct http_req *r); /* frees rg (and stops its merge) */
	struct http_build *build;	  /* its pprof being built off the loop, or NULL */
	struct http_collect *col;	  /* its interval's profiles being gathered, or NULL */
};

struct httpd {
	struct manager *m;
	struct MHD_Daemon *d;
	sd_event_source *io, *timer, *sweep;
	struct http_conn *conns;
	unsigned nconns;
	struct http_req *reqs;
	unsigned nranges; /* range jobs being merged (http_range.c) */
	char token[HTTPQ_MAX_TOKEN + 1];
	size_t token_len;
	bool per_source; /* connections capped per address (not on loopback: all share it) */
	uint64_t unauthorized, left, evicted, busy, served; /* counts for status */
	uint64_t profiles, profile_cpu_ns; /* interval profiles answered, kprofd's CPU on them */
	struct worker *worker;		   /* builds the large answers off the loop, or NULL */
	uint64_t built_off_loop;	   /* builds run there (a client may have left) */
	unsigned building;		   /* builds handed there and not back yet */
};

/* http_answer.c */
void http_run(struct httpd *h);
/* The connection's deadline: sec from now (0: none, while it is suspended). */
void http_conn_deadline(struct MHD_Connection *c, unsigned sec);
enum MHD_Result http_queue_buf(struct MHD_Connection *c, unsigned status, const char *type,
			       void *buf, size_t len, enum MHD_ResponseMemoryMode mode);
/* A text answer: the status and why, one line (503: with Retry-After: retry_sec, if not 0). */
enum MHD_Result http_queue_text(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result http_queue_busy(struct MHD_Connection *c, unsigned retry_sec, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct target *http_find_target(struct manager *m, pid_t pid, uint64_t attached_ns);
bool http_in_unit(const struct target *t, const char *unit);
/* HTTP readers see kernel functions' names, not their addresses. */
void http_hide_kaddr(const struct profile *p, struct saved_msg *sm);
/* A new request of h on c, linked (answered later: its http_answer, then resumed). */
struct http_req *http_req_new(struct httpd *h, struct MHD_Connection *c);
/* 0 if a request of c may wait now, else -EBUSY with a 503 queued (its result in *res, counted):
 * [http] max_waiting in all, max_waiting_per_source from c's address. */
int http_wait_check(struct httpd *h, struct MHD_Connection *c, enum MHD_Result *res);
/* r's client is watched while r waits: when it hangs up, r is answered at once (nobody reads
 * it), its connection resumed and closed, r freed by MHD's completion. 0 or a negative errno. */
int http_watch_client(struct http_req *r);
void http_req_free(struct http_req *r);
/* r's snapshots freed (r->nm 0). */
void http_members_free(struct http_req *r);
void http_answer(struct http_req *r, unsigned status, const char *msg);
/* r's answer queued (r->answered); r keeps nothing of it. */
enum MHD_Result http_queue_answer(struct http_req *r);
/* One process's profile of an answer, packed (a deep copy: the loop goes on changing the
 * target), and where it runs, for the answer's labels. */
struct http_part {
	uint8_t *buf;
	size_t len;
	bool offcpu; /* an off-CPU profile: every one comes after the CPU ones */
	char cgroup[256];
	char unit[256];
};
/* How the parts of an interval answer are merged: the interval's start, the samples of all,
 * and the comment's name for a selection of several processes ("": the one process's own). */
struct http_merge {
	uint64_t start, samples;
	char host_comm[PATH_MAX];
};
int http_part_pack(const Kprof__SavedProfile *sp, struct http_part *part);
void http_parts_free(struct http_part *v, size_t n);
/* sp as r's gzip'd pprof answer (with type=off_cpu|wall its stacks from off_from on are
 * off-CPU ones), or parts[0..n) merged and labelled as mg says (http_build_merged, which takes
 * the parts). Packed here and built in kprofd's build thread (os/worker.h), so that the loop
 * drains the ring buffers meanwhile: 1, and finish(r, err) runs in the loop once it is built
 * (not if r was freed first). Else (no thread, or its queue full) built here: 0 or a negative
 * errno, r's answer set. */
int http_build_pprof(struct http_req *r, const Kprof__SavedProfile *sp, size_t off_from,
		     uint64_t end, void (*finish)(struct http_req *r, int err));
int http_build_merged(struct http_req *r, struct http_part *parts, size_t n,
		      const struct http_merge *mg, uint64_t end,
		      void (*finish)(struct http_req *r, int err));
/* r freed or answered otherwise: its build, if any, is left to end alone. */
void http_build_forget(struct http_req *r);

/* http_profile.c */
/* GET /debug/pprof/profile?seconds=N (q checked, no since=/until=): the selected targets
 * snapshotted and the connection suspended with *con_cls set, answered N seconds later; or a
 * 404 (nothing selected) or 503 at once. */
enum MHD_Result http_profile_start(struct httpd *h, struct MHD_Connection *c, const struct httpq *q,
				   void **con_cls);

/* http_range.c */
/* GET ...?since=&until= (q checked): answered at once if the range is merged in one step, else
 * the connection suspended with *con_cls set, and answered when the merge is done. */
enum MHD_Result http_range_start(struct httpd *h, struct MHD_Connection *c, const struct httpq *q,
				 void **con_cls);

/* The endpoint's counts into the manager's http_stats (for status), after each step. */
void http_publish(const struct httpd *h);

#endif
