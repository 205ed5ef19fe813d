// SPDX-License-Identifier: GPL-2.0-only
/* http_answer.c: what the pprof HTTP endpoint's request handlers share (http_internal.h):
 * responses queued on a connection (text with a one-line reason, a 503 with Retry-After, a
 * profile), the connection's deadline for the sweep, a request's lifetime (linked in the
 * daemon's list until MHD says it completed), MHD runs from the event loop, and the lookups and
 * the hiding of kernel addresses that both profile kinds (http.c's intervals, http_range.c's
 * kept ranges) do, and pprof answers built off the loop.
 *
 * Off the loop: a whole-host interval's pprof takes seconds of CPU at 1,000 processes (merging,
 * then pprof_build's functions, samples, packing and gzip), and while the loop builds it the
 * ring buffers are not drained: on a large host they overflow (BENCHMARKS.md, "A scrape off
 * the loop"). The merged profile borrows the targets' names and stacks, which the loop goes on
 * changing, so it is packed (a SavedProfile, a deep copy) in the loop, and the build thread
 * unpacks it and makes the pprof from that alone. The request is not answered until the job
 * comes back; a client that leaves meanwhile frees its request, and the job then frees its
 * result alone.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/clock.h"
#include "http/http_internal.h"
#include "kprof/cleanup.h"
#include "kprof/merge.h"
#include "kprof/pprof.h"
#include "kprof/sdelta.h"
#include "os/log.h"
#include "os/worker.h"
#include "symbols/srclines.h"

void http_conn_deadline(struct MHD_Connection *c, unsigned sec)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct http_conn *hc = ci ? ci->socket_context : NULL;

	if (hc)
		hc->deadline = sec ? now_ns(CLOCK_MONOTONIC) + (uint64_t)sec * NSEC : 0;
}

/* A response; retry_sec: its Retry-After (0: none). */
static enum MHD_Result queue_retry(struct MHD_Connection *c, unsigned status, const char *type,
				   void *buf, size_t len, enum MHD_ResponseMemoryMode mode,
				   unsigned retry_sec)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, mode);
	enum MHD_Result ret;
	char retry[16];

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (retry_sec) {
		snprintf(retry, sizeof(retry), "%u", retry_sec);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_UNAUTHORIZED) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"kprofd\"");
		/* An unauthenticated client keeps no connection. */
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	if (!strcmp(type, "application/octet-stream"))
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	http_conn_deadline(c, HTTP_SEND_SEC);
	return ret;
}

enum MHD_Result http_queue_buf(struct MHD_Connection *c, unsigned status, const char *type,
			       void *buf, size_t len, enum MHD_ResponseMemoryMode mode)
{
	return queue_retry(c, status, type, buf, len, mode, 0);
}

static enum MHD_Result queue_vtext(struct MHD_Connection *c, unsigned status, unsigned retry_sec,
				   const char *fmt, va_list ap)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);

	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	return queue_retry(c, status, "text/plain; charset=utf-8", buf, n, MHD_RESPMEM_MUST_COPY,
			   retry_sec);
}

enum MHD_Result http_queue_text(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	enum MHD_Result ret;
	va_list ap;

	va_start(ap, fmt);
	ret = queue_vtext(c, status, 0, fmt, ap);
	va_end(ap);
	return ret;
}

enum MHD_Result http_queue_busy(struct MHD_Connection *c, unsigned retry_sec, const char *fmt, ...)
{
	enum MHD_Result ret;
	va_list ap;

	va_start(ap, fmt);
	ret = queue_vtext(c, MHD_HTTP_SERVICE_UNAVAILABLE, retry_sec, fmt, ap);
	va_end(ap);
	return ret;
}

struct target *http_find_target(struct manager *m, pid_t pid, uint64_t attached_ns)
{
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t))
		if (t->pid == pid && t->attached_ns == attached_ns)
			return t;
	return NULL;
}

/* ---- Profiles ---- */

/* c's client address, its port cleared, in ss (zeroed if MHD does not know it). */
static void client_source(struct MHD_Connection *c, struct sockaddr_storage *ss)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	memset(ss, 0, sizeof(*ss));
	if (!ci || !ci->client_addr)
		return;
	if (ci->client_addr->sa_family == AF_INET6) {
		memcpy(ss, ci->client_addr, sizeof(struct sockaddr_in6));
		((struct sockaddr_in6 *)ss)->sin6_port = 0;
		((struct sockaddr_in6 *)ss)->sin6_flowinfo = 0;
	} else if (ci->client_addr->sa_family == AF_INET) {
		memcpy(ss, ci->client_addr, sizeof(struct sockaddr_in));
		((struct sockaddr_in *)ss)->sin_port = 0;
	}
}

static bool same_source(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return a->ss_family == AF_INET && ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
					      ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

int http_wait_check(struct httpd *h, struct MHD_Connection *c, enum MHD_Result *res)
{
	const struct config *conf = &h->m->conf;
	struct sockaddr_storage src;
	unsigned all = 0, mine = 0;

	client_source(c, &src);
	for (const struct http_req *r = h->reqs; r; r = r->next) {
		if (r->answered)
			continue;
		all++;
		mine += same_source(&r->src, &src);
	}
	if (all < conf->http_max_waiting && mine < conf->http_max_waiting_per_source)
		return 0;
	h->busy++;
	if (all >= conf->http_max_waiting)
		*res = http_queue_busy(c, 5,
				       "%u profile requests are waiting already ([http] "
				       "max_waiting): try again later",
				       all);
	else
		*res = http_queue_busy(c, 5,
				       "%u profile requests of this address are waiting "
				       "already ([http] max_waiting_per_source)",
				       mine);
	return -EBUSY;
}

struct http_req *http_req_new(struct httpd *h, struct MHD_Connection *c)
{
	struct http_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->h = h;
	r->c = c;
	client_source(c, &r->src);
	r->next = h->reqs;
	if (h->reqs)
		h->reqs->prev = r;
	h->reqs = r;
	return r;
}

void http_req_free(struct http_req *r)
{
	if (!r)
		return;
	http_build_forget(r);
	if (r->stop)
		r->stop(r);
	if (r->prev)
		r->prev->next = r->next;
	else if (r->h->reqs == r)
		r->h->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	sd_event_source_disable_unref(r->timer);
	sd_event_source_disable_unref(r->gone);
	srclines_unwait(r->lines_wait);
	http_members_free(r);
	free(r->mv);
	free(r->body);
	free(r);
}

void http_members_free(struct http_req *r)
{
	for (size_t i = 0; i < r->nm; i++) {
		target_since_release(&r->mv[i].since);
		sdelta_free(r->mv[i].od);
		sdelta_free(r->mv[i].e);
		sdelta_free(r->mv[i].oe);
	}
	r->nm = 0;
}

void http_answer(struct http_req *r, unsigned status, const char *msg)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
	if (asprintf(&r->body, "%s\n", msg) >= 0)
		r->len = strlen(r->body);
	r->status = status;
	r->pprof = false;
}

/* The client hung up (EPOLLRDHUP, or the socket's error): nothing will read r's answer, so r's
 * snapshots and timer go now, not seconds later, and its place counts no more. */
static int on_client_gone(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct http_req *r = userdata;

	(void)fd;
	(void)revents;
	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (r->answered)
		return 0;
	log_debug("http: a client left while its profile was waiting: released");
	r->h->left++;
	http_build_forget(r);
	sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
	if (r->stop)
		r->stop(r);
	http_members_free(r);
	http_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, "the client left");
	r->answered = true;
	MHD_resume_connection(r->c);
	http_run(r->h);
	return 0;
}

int http_watch_client(struct http_req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (!ci || ci->connect_fd < 0)
		return -EBADF;
	return sd_event_add_io(r->h->m->event, &r->gone, ci->connect_fd, EPOLLRDHUP, on_client_gone,
			       r);
}

enum MHD_Result http_queue_answer(struct http_req *r)
{
	if (r->status == MHD_HTTP_OK)
		r->h->served++;
	if (r->pprof) {
		char *body = TAKE_PTR(r->body);

		return http_queue_buf(r->c, r->status, "application/octet-stream", body, r->len,
				      MHD_RESPMEM_MUST_FREE);
	}
	return http_queue_buf(r->c, r->status, "text/plain; charset=utf-8", r->body, r->len,
			      MHD_RESPMEM_MUST_COPY);
}

/* A pprof built in the build thread, from parts it owns. */
struct http_build {
	struct worker_job job;
	struct httpd *h;
	struct http_req *r; /* NULL: the request went meanwhile */
	void (*finish)(struct http_req *r, int err);
	struct http_part *parts; /* packed profiles: CPU ones, then off-CPU ones */
	size_t n;
	const struct http_merge *mg; /* merged and labelled as it says; NULL: parts[0] as it is */
	struct http_merge mgv;
	enum httpq_type type;
	size_t off_from; /* without mg: where parts[0]'s off-CPU stacks start */
	uint64_t end;
	uint8_t *out; /* the answer */
	size_t out_len;
	int err;
};

void http_parts_free(struct http_part *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].buf);
	free(v);
}

int http_part_pack(const Kprof__SavedProfile *sp, struct http_part *part)
{
	part->len = kprof__saved_profile__get_packed_size(sp);
	part->buf = malloc(part->len ? part->len : 1);
	if (!part->buf)
		return -ENOMEM;
	kprof__saved_profile__pack(sp, part->buf);
	return 0;
}

static int build_pprof(const Kprof__SavedProfile *sp, enum httpq_type type, size_t off_from,
		       uint64_t end, uint8_t **buf, size_t *len)
{
	return type == HTTPQ_TYPE_CPU
		   ? pprof_build(sp, end, KPROF_VERSION, buf, len)
		   : pprof_build_wall(sp, off_from, type == HTTPQ_TYPE_WALL ? "wall" : "off_cpu",
				      end, KPROF_VERSION, buf, len);
}

/* The parts pv[0..n) merged into one profile labelled as b says (each input's cgroup and
 * systemd unit; the interval and the samples of all), then made pprof. */
static int build_merged(struct http_build *b, Kprof__SavedProfile **pv)
{
	const struct http_merge *mi = b->mg;
	struct merged mg = {0};
	size_t off_from = 0;
	int err = merge_profiles(pv, b->n, &mg);

	if (err < 0)
		goto out;
	for (size_t i = 0; i < b->n; i++) /* merging keeps the inputs' order */
		if (!b->parts[i].offcpu)
			off_from += pv[i]->n_stacks;
	/* One origin per input, in order (the inputs have none of their own). */
	for (size_t i = 0; i < b->n && i < mg.sp.n_origins; i++) {
		Kprof__Origin *o = mg.sp.origins[i];
		struct http_part *pt = &b->parts[i];

		o->cgroup = pt->cgroup;
		if (pt->unit[0] || (o->unit && o->unit[0] == '/'))
			o->unit = pt->unit; /* the systemd unit, not a watched cgroup's path */
	}
	mg.target.attached_at_ns = mi->start;
	mg.target.ended_at_ns = b->end;
	mg.target.samples = mi->samples;
	if (mi->host_comm[0]) { /* the comment names no single process */
		mg.target.pid = 0;
		mg.target.comm = (char *)mi->host_comm;
	}
	err = build_pprof(&mg.sp, b->type, off_from, b->end, &b->out, &b->out_len);
out:
	merge_free(&mg);
	return err;
}

/* In the build thread (or the loop, when it has no room): the job's own parts in, its pprof
 * out. */
static void build_run(struct worker_job *j)
{
	struct http_build *b = (struct http_build *)j;
	_cleanup_free_ Kprof__SavedProfile **pv = calloc(b->n ? b->n : 1, sizeof(*pv));
	size_t k = 0;

	b->err = pv ? 0 : -ENOMEM;
	for (; b->err >= 0 && k < b->n; k++) {
		pv[k] = kprof__saved_profile__unpack(NULL, b->parts[k].len, b->parts[k].buf);
		free(TAKE_PTR(b->parts[k].buf));
		if (!pv[k])
			b->err = -ENOMEM; /* its own packing: only memory can fail it */
	}
	if (b->err >= 0)
		b->err =
		    b->mg ? build_merged(b, pv)
			  : build_pprof(pv[0], b->type, b->off_from, b->end, &b->out, &b->out_len);
	for (size_t i = 0; pv && i < k; i++)
		if (pv[i])
			kprof__saved_profile__free_unpacked(pv[i], NULL);
}

/* r's answer from b's result (err: why there is none). */
static void build_answer(struct http_req *r, struct http_build *b)
{
	if (b->err < 0)
		return;
	free(r->body);
	r->body = (char *)TAKE_PTR(b->out);
	r->len = b->out_len;
	r->status = MHD_HTTP_OK;
	r->pprof = true;
}

static void build_free(struct http_build *b)
{
	http_parts_free(b->parts, b->n);
	free(b->out);
	free(b);
}

/* In the loop: the answer to its request, if that is still there. */
static void build_done(struct worker_job *j, bool ran)
{
	struct http_build *b = (struct http_build *)j;
	struct http_req *r = b->r;

	b->h->profile_cpu_ns += j->cpu_ns;
	b->h->built_off_loop += ran; /* a request that went meanwhile's too */
	b->h->building--;
	if (r) {
		r->build = NULL;
		if (!ran)
			b->err = -ECANCELED;
		build_answer(r, b);
		b->finish(r, b->err);
	}
	http_publish(b->h); /* the counts above, for status */
	build_free(b);
}

void http_build_forget(struct http_req *r)
{
	if (r->build)
		r->build->r = NULL;
	r->build = NULL;
}

/* b handed to the build thread (1), or, without one or with its queue full, built here (0 or
 * a negative errno, r's answer set). b is freed either way. */
static int build_start(struct http_req *r, struct http_build *b)
{
	int err;

	b->job.run = build_run;
	b->job.done = build_done;
	b->h = r->h;
	b->r = r;
	b->type = r->type;
	if (r->h->worker && worker_submit(r->h->worker, &b->job) == 0) {
		r->build = b;
		r->h->building++;
		http_publish(r->h); /* status shows it building */
		return 1;
	}
	build_run(&b->job);
	build_answer(r, b);
	err = b->err;
	build_free(b);
	return err;
}

int http_build_pprof(struct http_req *r, const Kprof__SavedProfile *sp, size_t off_from,
		     uint64_t end, void (*finish)(struct http_req *r, int err))
{
	struct http_build *b = calloc(1, sizeof(*b));

	if (!b || !(b->parts = calloc(1, sizeof(*b->parts))) || http_part_pack(sp, b->parts) < 0) {
		if (b)
			free(b->parts);
		free(b);
		return -ENOMEM;
	}
	b->n = 1;
	b->finish = finish;
	b->off_from = off_from;
	b->end = end;
	return build_start(r, b);
}

int http_build_merged(struct http_req *r, struct http_part *parts, size_t n,
		      const struct http_merge *mg, uint64_t end,
		      void (*finish)(struct http_req *r, int err))
{
	struct http_build *b = calloc(1, sizeof(*b));

	if (!b) {
		http_parts_free(parts, n);
		return -ENOMEM;
	}
	b->parts = parts;
	b->n = n;
	b->mgv = *mg;
	b->mg = &b->mgv;
	b->finish = finish;
	b->end = end;
	return build_start(r, b);
}

bool http_in_unit(const struct target *t, const char *unit)
{
	return t->cgroup && !strcmp(t->cgroup, unit);
}

/* HTTP readers see kernel functions' names, not their addresses. */
void http_hide_kaddr(const struct profile *p, struct saved_msg *sm)
{
	for (size_t i = 0; i < sm->msg.n_functions; i++)
		if (profile_func_is_kernel(profile_func_get(p, sm->fids ? sm->fids[i] : i)))
			sm->fv[i].start = 0;
}

/* MHD_run, again while a run closes connections: at its connection limit MHD takes its listen
 * socket out of its epoll set, and puts it back only at the start of a later run, so a run that
 * made room must be followed by one that listens again (else nothing would wake the loop for
 * the connections waiting in the backlog). */
void http_publish(const struct httpd *h)
{
	struct http_stats *st = &h->m->http_stats;

	memset(st, 0, sizeof(*st));
	st->on = true;
	st->listen = h->m->conf.http_listen;
	st->token = h->token_len > 0;
	st->connections = h->nconns;
	for (const struct http_req *r = h->reqs; r; r = r->next)
		st->waiting += !r->answered;
	st->unauthorized = h->unauthorized;
	st->left = h->left;
	st->evicted = h->evicted;
	st->busy = h->busy;
	st->served = h->served;
	st->profiles = h->profiles;
	st->profile_cpu_ns = h->profile_cpu_ns;
	st->built_off_loop = h->built_off_loop;
	st->building = h->building;
}

void http_run(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	for (unsigned i = 0; i < 64; i++) {
		unsigned before = h->nconns;

		MHD_run(h->d);
		if (h->nconns >= before)
			break;
	}
	if (MHD_get_timeout(h->d, &ms) == MHD_YES) {
		sd_event_source_set_time_relative(h->timer, ms * 1000);
		sd_event_source_set_enabled(h->timer, SD_EVENT_ONESHOT);
	} else {
		sd_event_source_set_enabled(h->timer, SD_EVENT_OFF);
	}
	http_publish(h);
}
