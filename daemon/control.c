// SPDX-License-Identifier: GPL-2.0-only
/* control.c: the Unix control socket: clients, frames, authorization, request dispatch.
 *
 * Stream socket (default /run/kprofd/kprofd.sock, mode 0666: who may do what is decided per
 * request from SO_PEERCRED, not by file permissions). Each client has a frame reader capped at
 * FRAME_MAX_REQUEST and an output buffer; a client whose reply is not yet written is not read
 * from (backpressure), so one client cannot queue unbounded replies. A bad frame (oversized,
 * unparsable) gets an error reply, then the connection is closed; the daemon is unaffected.
 * A client silent for --client-timeout seconds (mid-frame or between requests) is closed, so idle
 * connections cannot hold the client slots forever, and so is one whose request frame is not
 * whole frame_timeout seconds after its first byte (a byte now and then does not keep it).
 * Authorization: uid 0 may do anything; any other uid may attach to, read and detach only
 * processes whose real uid is its own, and lists only those.
 *
 * What one unprivileged user can take from the others (and from root) is bounded: at most
 * max_clients_per_uid connections, never the last eighth of max_clients (root's); at most
 * reply_pending_per_uid_mb of replies waiting to be read by its clients, and no reply that would
 * pass reply_pending_mb in all (a refused reply becomes a small -ENOBUFS error); folded text is
 * built within FOLDED_MAX_BYTES, never whole first. When file descriptors run out, a reserve fd
 * lets the daemon accept and refuse the pending connection instead of spinning on the listening
 * socket. Refusals are logged at most once per 10 s per reason, with how many were not.
 * Kernel detail follows what the kernel itself would show the client (kallsyms_show_value,
 * perf_event_paranoid), read at each request: addresses zeroed, or every kernel frame shown as
 * "[kernel]" (the views are profile.c's).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "kprof/cleanup.h"
#include "kprof/frame.h"
#include "clock.h"
#include "control.h"
#include "live.h"
#include "loader.h"
#include "manager.h"
#include "store.h"
#include "symbolize.h"
#include "log.h"

/* The folded text of one reply: well under FRAME_MAX_REPLY, so building, packing and sending it
 * stay short steps of the event loop. */
#define FOLDED_MAX_BYTES (64u << 20)
/* Replies this small (errors, status) are always queued, whatever the reply budgets say. */
#define REPLY_SMALL 4096
#define LOG_EVERY_NS (10 * 1000000000ULL)
#define ACCEPT_PAUSE_USEC (250 * 1000ULL)

enum refusal {
	REFUSE_CLIENTS, /* max_clients, or the root reserve */
	REFUSE_UID,	/* max_clients_per_uid */
	REFUSE_FDS,	/* out of file descriptors */
	REFUSE_REPLY,	/* reply budgets */
	REFUSE_FRAME,	/* frame deadline */
	REFUSE_NR,
};

/* One log line per reason per LOG_EVERY_NS; the others are counted. */
struct ratelimit {
	uint64_t last_ns;
	unsigned suppressed;
};

struct client {
	struct client *next;
	struct control *c;
	int fd;
	uid_t uid;
	pid_t pid;
	bool reader; /* in the configured read group: may list and read every profile */
	sd_event_source *src;
	struct frame_reader rd;
	uint8_t *out;
	size_t out_len, out_off;
	bool closing;	   /* close once the output is flushed */
	struct live *live; /* a live subscription (kprofctl top), or NULL */
	sd_event_source *live_timer;
	uint64_t active_ns; /* last byte in or out (CLOCK_MONOTONIC) */
	uint64_t frame_ns;  /* when the request frame being read began; 0: none */
};

struct control {
	struct manager *m;
	int fd;
	char *path;
	sd_event_source *src;
	struct client *clients;
	unsigned nclients, max_clients;
	bool bound;	/* the socket file is ours to remove */
	int reserve_fd; /* /dev/null, given up to accept-and-refuse when fds run out */
	sd_event_source *accept_pause; /* re-enables src after a pause */
	struct ratelimit rl[REFUSE_NR];
};

/* Log this refusal now? *sfx gets ", N more since the last message" when some were not. */
static bool log_refusal(struct control *c, enum refusal r, char *sfx, size_t len)
{
	struct ratelimit *rl = &c->rl[r];
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (rl->last_ns && now - rl->last_ns < LOG_EVERY_NS) {
		rl->suppressed++;
		return false;
	}
	sfx[0] = '\0';
	if (rl->suppressed)
		snprintf(sfx, len, " (%u more in the last %llu s)", rl->suppressed,
			 LOG_EVERY_NS / 1000000000ULL);
	rl->suppressed = 0;
	rl->last_ns = now;
	return true;
}

/* The kernel view (PROFILE_VIEW_*) a client gets: what the kernel would show it. Kernel
 * addresses only if kallsyms_show_value would (kptr_restrict 0 and perf_event_paranoid <= 1;
 * a non-root client is taken to lack CAP_SYSLOG), kernel frames only if the kernel would let it
 * profile the kernel (perf_event_paranoid <= 1). Read at each request: the sysctls can change. */
static int read_sysctl(const char *path, int fallback)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return fallback;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return atoi(buf);
}

static unsigned client_view(const struct client *cl)
{
	int kptr, paranoid;

	if (cl->uid == 0)
		return 0;
	kptr = read_sysctl("/proc/sys/kernel/kptr_restrict", 2);
	paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2);
	if (paranoid >= 2)
		return PROFILE_VIEW_NO_KERNEL | PROFILE_VIEW_NO_KADDR;
	return kptr == 0 && paranoid <= 1 ? 0 : PROFILE_VIEW_NO_KADDR;
}

static void client_free(struct client *cl)
{
	struct control *c = cl->c;

	for (struct client **pp = &c->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			c->nclients--;
			break;
		}
	}
	sd_event_source_disable_unref(cl->src);
	sd_event_source_disable_unref(cl->live_timer);
	live_free(cl->live);
	if (cl->fd >= 0)
		close(cl->fd);
	frame_reader_release(&cl->rd);
	free(cl->out);
	free(cl);
}

/* Write what is queued. 1 when everything is out, 0 if the socket is full, <0 on error. */
static int client_flush(struct client *cl)
{
	while (cl->out_off < cl->out_len) {
		ssize_t n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		cl->out_off += n;
		cl->active_ns = now_ns(CLOCK_MONOTONIC);
	}
	free(cl->out);
	cl->out = NULL;
	cl->out_len = cl->out_off = 0;
	return 1;
}

/* 0 if a reply of len bytes may wait for cl to read it, or -ENOBUFS with why in msg: one uid's
 * clients may have reply_pending_per_uid_mb waiting, and all clients reply_pending_mb, of which
 * the last eighth is root's. */
static int reply_budget(struct client *cl, size_t len, char *msg, size_t msglen)
{
	struct control *c = cl->c;
	const struct config *cfg = &c->m->cfg;
	uint64_t all = 0, mine = 0, lim_all = (uint64_t)cfg->reply_pending_mb << 20;
	uint64_t lim_uid = (uint64_t)cfg->reply_pending_per_uid_mb << 20;
	char sfx[64];

	if (len <= REPLY_SMALL)
		return 0;
	for (const struct client *o = c->clients; o; o = o->next) {
		all += o->out_len - o->out_off;
		if (o->uid == cl->uid)
			mine += o->out_len - o->out_off;
	}
	if (cl->uid != 0 && mine + len > lim_uid) {
		snprintf(msg, msglen,
			 "reply of %.1f MiB refused: %llu MiB of replies are waiting to be read by "
			 "uid %u's clients (limit %u MiB); read them or try later",
			 len / 1048576.0, (unsigned long long)(mine >> 20), cl->uid,
			 cfg->reply_pending_per_uid_mb);
	} else if (all + len > (cl->uid ? lim_all - lim_all / 8 : lim_all)) {
		snprintf(msg, msglen,
			 "reply of %.1f MiB refused: %llu MiB of replies are waiting to be read by "
			 "all clients (limit %u MiB%s); read them or try later",
			 len / 1048576.0, (unsigned long long)(all >> 20), cfg->reply_pending_mb,
			 cl->uid ? ", the last eighth kept for root" : "");
	} else {
		return 0;
	}
	if (log_refusal(c, REFUSE_REPLY, sfx, sizeof(sfx)))
		log_warn("client pid %d uid %u: %s%s", cl->pid, cl->uid, msg, sfx);
	return -ENOBUFS;
}

static void client_queue(struct client *cl, Kprof__Reply *rep)
{
	size_t n = protobuf_c_message_get_packed_size(&rep->base);
	char why[256];
	uint8_t *buf;
	size_t len;
	int err;

	if (n > FRAME_MAX_REPLY) {
		err = -EMSGSIZE;
		snprintf(why, sizeof(why), "reply too large for one frame");
	} else {
		err = reply_budget(cl, FRAME_HDR_SIZE + n, why, sizeof(why));
	}
	if (!err)
		err = frame_pack(&rep->base, FRAME_MAX_REPLY, &buf, &len);
	if (err < 0) {
		Kprof__Reply e = KPROF__REPLY__INIT;

		e.error = err;
		e.message = err == -ENOMEM ? "out of memory" : why;
		if (frame_pack(&e.base, FRAME_MAX_REPLY, &buf, &len) < 0) {
			cl->closing = true;
			return;
		}
	}
	/* Only one reply is ever pending: reading stops until it is flushed. */
	free(cl->out);
	cl->out = buf;
	cl->out_len = len;
	cl->out_off = 0;
}

static void reply_error(struct client *cl, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_error(struct client *cl, int err, const char *fmt, ...)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rep.error = err;
	rep.message = msg;
	client_queue(cl, &rep);
}

/* May cl attach to or detach a process of uid owner? */
static bool allowed(const struct client *cl, uid_t owner)
{
	return cl->uid == 0 || cl->uid == owner;
}

/* May cl read the profile of a process of uid owner? */
static bool may_read(const struct client *cl, uid_t owner)
{
	return allowed(cl, owner) || cl->reader;
}

/* Is the peer of fd (primary gid gid) a member of group `want`? SO_PEERGROUPS gives the
 * supplementary groups the peer had when it connected. */
static bool peer_in_group(int fd, gid_t gid, gid_t want)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (gid == want)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == want)
			return true;
	return false;
}

static bool visible_to(const struct target *t, void *arg)
{
	return may_read(arg, t->uid);
}

/* The target of a read (write = false) or detach request, or NULL after queueing the error
 * reply: the attached one or the newest kept one that cl may read (a PID reused by another
 * user's process keeps each user's sessions apart), else any, for the error. */
static struct target *request_target(struct client *cl, uint32_t pid, bool write)
{
	struct target *t = manager_find_for(cl->c->m, pid, visible_to, cl);

	/* Credentials may have changed since the last check (a setuid exec). */
	if (t && t->state == TARGET_ATTACHED && manager_recheck(cl->c->m, t))
		t = manager_find_for(cl->c->m, pid, visible_to, cl);
	if (!t)
		t = manager_find(cl->c->m, pid);
	if (!t) {
		reply_error(cl, -ENOENT, "pid %u is not attached and no profile of it is kept",
			    pid);
		return NULL;
	}
	if (write ? !allowed(cl, t->uid) : !may_read(cl, t->uid)) {
		reply_error(cl, -EPERM,
			    "permission denied: pid %u belongs to uid %u; uid %u may only "
			    "profile its own processes",
			    pid, t->uid, cl->uid);
		return NULL;
	}
	return t;
}

/* The process pid may be attached by cl: 0, or an error reply queued. */
static int check_attachable(struct client *cl, uint32_t pid)
{
	uid_t owner;
	int err;

	if (pid == 0 || pid > INT32_MAX) {
		reply_error(cl, -EINVAL, "invalid pid %u", pid);
		return -EINVAL;
	}
	err = target_proc_uid(pid, &owner);
	if (err < 0) {
		if (err == -ESRCH && kill(pid, 0) == 0)
			reply_error(cl, err,
				    "pid %u has exited (a zombie its parent has not reaped)", pid);
		else if (err == -ESRCH)
			reply_error(cl, err, "no such process: %u", pid);
		else if (err == -EINVAL)
			reply_error(cl, err, "%u is a thread id, not a process id", pid);
		else
			reply_error(cl, err, "cannot read process %u: %s", pid, strerror(-err));
		return err;
	}
	if (!allowed(cl, owner)) {
		if (owner == 0)
			reply_error(
			    cl, -EPERM,
			    "permission denied: pid %u runs with root's or mixed "
			    "credentials (setuid, or not dumpable); only root may profile it",
			    pid);
		else
			reply_error(cl, -EPERM,
				    "permission denied: pid %u belongs to uid %u; uid %u may only "
				    "profile its own processes",
				    pid, owner, cl->uid);
		return -EPERM;
	}
	return 0;
}

static void do_attach(struct client *cl, const Kprof__AttachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__AttachReply ar = KPROF__ATTACH_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t;
	char err_msg[256] = "";
	int err;

	if (check_attachable(cl, req->pid) < 0)
		return;
	err = manager_attach(cl->c->m, req->pid,
			     &(struct attach_opts){.freq = req->freq_hz,
						   .duration_sec = req->duration_sec,
						   .eps = req->eps,
						   .hcct_kernel = req->hcct_kernel,
						   .calls = req->calls,
						   .force = req->force,
						   .burst_ms = req->burst_ms,
						   .period_ms = req->period_ms,
						   .by = cl->uid},
			     &t, err_msg, sizeof(err_msg));
	if (err < 0) {
		reply_error(cl, err, "%s", err_msg);
		return;
	}
	target_fill_pb(t, &tpb);
	ar.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	client_queue(cl, &rep);
}

static void do_detach(struct client *cl, const Kprof__DetachRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	struct target *t = request_target(cl, req->pid, true);

	if (!t)
		return;
	if (manager_detach(cl->c->m, t) < 0) {
		reply_error(cl, -ENOENT, "pid %u is not attached (its profile is kept: %s)",
			    req->pid,
			    t->state == TARGET_EXITED ? "the process exited" : "already detached");
		return;
	}
	client_queue(cl, &rep);
}

static void do_list(struct client *cl, const Kprof__ListRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ListReply lr = KPROF__LIST_REPLY__INIT;
	struct manager *m = cl->c->m;
	Kprof__Target *tv, **tp;
	size_t n = 0;

	for (struct target *t = m->targets; t; t = t->next)
		n++;
	tv = calloc(n ? n : 1, sizeof(*tv));
	tp = calloc(n ? n : 1, sizeof(*tp));
	if (!tv || !tp) {
		free(tv);
		free(tp);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	n = 0;
	for (struct target *t = m->targets; t; t = t->next) {
		if (!may_read(cl, t->uid) || (!req->all && t->state != TARGET_ATTACHED))
			continue;
		kprof__target__init(&tv[n]);
		target_fill_pb(t, &tv[n]);
		tp[n] = &tv[n];
		n++;
	}
	lr.n_targets = n;
	lr.targets = tp;
	rep.body_case = KPROF__REPLY__BODY_LIST;
	rep.list = &lr;
	client_queue(cl, &rep);
	free(tv);
	free(tp);
}

/* The daemon's status; *drops (malloc'd) and freqs back its arrays. */
static int fill_status(struct control *c, Kprof__StatusReply *sr, uint64_t **drops,
		       unsigned freqs[KPROF_MAX_FREQ_SETS])
{
	struct manager *m = c->m;
	int ncpus = loader_ncpus(m->loader);
	uint64_t ctr[KP_CTR_NR] = {0};

	*drops = calloc(ncpus, sizeof(**drops));
	if (!*drops || loader_counters(m->loader, ctr, *drops) < 0)
		return -EIO;
	kprof__status_reply__init(sr);
	sr->version = KPROF_VERSION;
	sr->pid = getpid();
	sr->uptime_ns = now_ns(CLOCK_MONOTONIC) - m->start_ns;
	sr->targets_attached = m->n_attached;
	sr->targets_kept = m->n_kept;
	sr->samples = m->samples;
	sr->samples_per_sec = m->rate;
	sr->drops = ctr[KP_CTR_DROPS];
	sr->n_drops_per_cpu = ncpus;
	sr->drops_per_cpu = *drops;
	sr->bad_records = m->bad_records;
	sr->ringbuf_bytes = loader_ringbuf_bytes(m->loader);
	sr->n_frequencies = loader_freqs(m->loader, freqs, KPROF_MAX_FREQ_SETS);
	sr->frequencies = freqs;
	sr->cpu_ns = manager_cpu_ns();
	sr->clients = c->nclients;
	symbolizer_get_stats(m->sym, &sr->symbol_bytes, &sr->symbol_refusals);
	sr->profile_bytes = m->profile_bytes;
	return 0;
}

static void do_status(struct client *cl)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[KPROF_MAX_FREQ_SETS];

	if (fill_status(cl->c, &sr, &drops, freqs) < 0) {
		reply_error(cl, -EIO, "cannot read the BPF counters");
		return;
	}
	rep.body_case = KPROF__REPLY__BODY_STATUS;
	rep.status = &sr;
	client_queue(cl, &rep);
}

/* One live update for a subscribed client; skipped while its last one is still unsent (a
 * slow client gets fewer updates, never a growing queue). */
static int on_live_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct client *cl = userdata;
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[KPROF_MAX_FREQ_SETS];
	struct live_msg msg = {0};

	sd_event_source_set_time(src, usec + live_interval_ms(cl->live) * 1000ULL);
	if (cl->out || cl->closing)
		return 0;
	manager_drain(cl->c->m); /* the interval's samples, not those of the last timer drain */
	if (fill_status(cl->c, &sr, &drops, freqs) < 0 ||
	    live_update(cl->live, client_view(cl), &msg) < 0) {
		live_msg_release(&msg);
		reply_error(cl, -ENOMEM, "cannot build the live update");
	} else {
		msg.up.status = &sr;
		rep.body_case = KPROF__REPLY__BODY_UPDATE;
		rep.update = &msg.up;
		client_queue(cl, &rep);
		live_msg_release(&msg);
	}
	if (client_flush(cl) < 0) {
		client_free(cl);
		return 0;
	}
	sd_event_source_set_io_events(cl->src, cl->out ? EPOLLOUT : EPOLLIN);
	return 0;
}

static void live_stop(struct client *cl)
{
	cl->live_timer = sd_event_source_disable_unref(cl->live_timer);
	live_free(cl->live);
	cl->live = NULL;
}

static void do_subscribe(struct client *cl, const Kprof__SubscribeRequest *req)
{
	int err;

	live_stop(cl);
	for (size_t i = 0; i < req->n_pids; i++) {
		struct target *t = manager_find_for(cl->c->m, req->pids[i], visible_to, cl);

		if (!t)
			t = manager_find(cl->c->m, req->pids[i]);

		if (!t) {
			reply_error(cl, -ENOENT,
				    "pid %u is not attached and no profile of it is kept",
				    req->pids[i]);
			return;
		}
		if (!may_read(cl, t->uid)) {
			reply_error(cl, -EPERM, "permission denied: pid %u belongs to uid %u",
				    req->pids[i], t->uid);
			return;
		}
	}
	err = live_new(cl->c->m, req, cl->uid, cl->reader, &cl->live);
	if (err < 0) {
		reply_error(cl, err,
			    err == -E2BIG    ? "too many pids (at most 64)"
			    : err == -ERANGE ? "interval must be 100-60000 ms"
					     : "out of memory");
		return;
	}
	/* The first update comes at once: it carries the counts so far. */
	err = sd_event_add_time_relative(cl->c->m->event, &cl->live_timer, CLOCK_MONOTONIC, 0, 1000,
					 on_live_tick, cl);
	if (err >= 0) /* a repeating timer, not a one-shot: each tick moves it on */
		err = sd_event_source_set_enabled(cl->live_timer, SD_EVENT_ON);
	if (err < 0) {
		live_stop(cl);
		reply_error(cl, err, "cannot start the live timer: %s", strerror(-err));
	}
}

static Kprof__FrameKind pb_kind(enum profile_kind k)
{
	switch (k) {
	case PROFILE_KIND_NATIVE:
		return KPROF__FRAME_KIND__FRAME_KIND_NATIVE;
	case PROFILE_KIND_JIT:
		return KPROF__FRAME_KIND__FRAME_KIND_JIT;
	case PROFILE_KIND_KERNEL:
		return KPROF__FRAME_KIND__FRAME_KIND_KERNEL;
	default:
		return KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
	}
}

static void do_report(struct client *cl, const Kprof__ReportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ReportReply rr = KPROF__REPORT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_target(cl, req->pid, false);
	_cleanup_free_ struct profile_row *rows = NULL;
	_cleanup_free_ Kprof__FlatEntry *ev = NULL;
	_cleanup_free_ Kprof__FlatEntry **ep = NULL;
	struct profile_stats ps;
	size_t n, shown;

	if (!t)
		return;
	if (profile_flat_view(t->profile, client_view(cl), &rows, &n) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	shown = req->top && req->top < n ? req->top : n;
	ev = calloc(shown ? shown : 1, sizeof(*ev));
	ep = calloc(shown ? shown : 1, sizeof(*ep));
	if (!ev || !ep) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < shown; i++) {
		const struct profile_func *f = &rows[i].f;
		uint32_t id = rows[i].id;

		kprof__flat_entry__init(&ev[i]);
		ev[i].function = (char *)f->name;
		ev[i].module = (char *)f->module;
		ev[i].kind = pb_kind(f->kind);
		ev[i].self = f->self;
		ev[i].total = f->total;
		ev[i].address = f->start;
		ev[i].calls = id < t->calls.ncounts ? t->calls.counts[id] : 0;
		ep[i] = &ev[i];
	}
	profile_get_stats(t->profile, &ps);
	target_fill_pb(t, &tpb);
	rr.target = &tpb;
	rr.total_samples = ps.samples;
	rr.n_entries = shown;
	rr.entries = ep;
	rr.functions = n;
	rep.body_case = KPROF__REPLY__BODY_REPORT;
	rep.report = &rr;
	client_queue(cl, &rep);
}

static void do_folded(struct client *cl, const Kprof__FoldedRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__FoldedReply fr = KPROF__FOLDED_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_target(cl, req->pid, false);
	struct profile_folded_opts o = {.max_bytes = FOLDED_MAX_BYTES, .view = client_view(cl)};
	struct profile_folded_info fi;
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (!t)
		return;
	if (profile_folded_view(t->profile, &o, &text, &len, &fi) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	target_fill_pb(t, &tpb);
	fr.target = &tpb;
	fr.folded = text;
	fr.truncated = fi.stacks_omitted > 0;
	fr.stacks_omitted = fi.stacks_omitted;
	fr.samples_omitted = fi.samples_omitted;
	fr.max_bytes = FOLDED_MAX_BYTES;
	rep.body_case = KPROF__REPLY__BODY_FOLDED;
	rep.folded = &fr;
	client_queue(cl, &rep);
}

/* An export through a kernel view: kernel functions renamed and without addresses; with
 * PROFILE_VIEW_NO_KERNEL every kernel frame is one function's ("[kernel]") and each run of them
 * in a stack one frame. *arena (the rewritten stacks' ids) is the caller's to free. */
static int export_view(const struct target *t, unsigned view, struct saved_msg *m, uint32_t **arena)
{
	uint32_t kid = UINT32_MAX;
	size_t nids = 0, off = 0;

	*arena = NULL;
	if (!view)
		return 0;
	for (size_t i = 0; i < m->msg.n_functions; i++) {
		const struct profile_func *f = profile_func_get(t->profile, i);
		struct profile_func v = profile_func_view(f, view);

		if (!profile_func_is_kernel(f))
			continue;
		if (kid == UINT32_MAX)
			kid = i;
		m->fv[i].name = (char *)v.name;
		m->fv[i].module = (char *)v.module;
		m->fv[i].start = v.start;
		m->fv[i].kind = pb_kind(v.kind);
	}
	if (!(view & PROFILE_VIEW_NO_KERNEL) || kid == UINT32_MAX)
		return 0;
	for (size_t i = 0; i < m->msg.n_stacks; i++)
		nids += m->sv[i].n_ids;
	*arena = malloc((nids ? nids : 1) * sizeof(**arena));
	if (!*arena)
		return -ENOMEM;
	for (size_t i = 0; i < m->msg.n_stacks; i++) {
		Kprof__SavedStack *s = &m->sv[i];
		size_t n =
		    profile_stack_view(t->profile, view, s->ids, s->n_ids, kid, *arena + off);

		s->ids = *arena + off;
		s->n_ids = n;
		off += n;
	}
	return 0;
}

static void do_export(struct client *cl, const Kprof__ExportRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__ExportReply er = KPROF__EXPORT_REPLY__INIT;
	struct target *t = request_target(cl, req->pid, false);
	_cleanup_free_ uint32_t *arena = NULL;
	struct saved_msg m;

	if (!t)
		return;
	if (saved_msg_build(t, &m) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	if (export_view(t, client_view(cl), &m, &arena) < 0) {
		saved_msg_release(&m);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	er.profile = &m.msg;
	rep.body_case = KPROF__REPLY__BODY_EXPORT;
	rep.export = &er;
	client_queue(cl, &rep);
	saved_msg_release(&m);
}

static void do_hcct(struct client *cl, const Kprof__HcctRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__HcctReply hr = KPROF__HCCT_REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct target *t = request_target(cl, req->pid, false);
	double phi = req->phi ? req->phi : cl->c->m->cfg.hcct_phi;
	struct hcct_tree *tree = NULL;
	_cleanup_free_ Kprof__HcctNode *nv = NULL;
	_cleanup_free_ Kprof__HcctNode **np = NULL;
	struct hcct_stats hs;
	const struct hcct *tree_src;
	uint64_t num, den;
	unsigned view = client_view(cl);

	if (!t)
		return;
	tree_src = req->exact ? t->calls.exact : t->hcct;
	if (req->exact && !tree_src) {
		reply_error(cl, -ENODATA, "pid %u: exact mode is off (attach with --calls)",
			    req->pid);
		return;
	}
	if (!tree_src && !t->saved_hcct) {
		reply_error(cl, -ENODATA, "pid %u: no HCCT in this profile", req->pid);
		return;
	}
	if (!(phi > 0 && phi <= 1) || hcct_ratio_from_double(phi, &num, &den) < 0) {
		reply_error(cl, -EINVAL, "phi %g is not in (0, 1]", phi);
		return;
	}
	if (phi < t->eps) {
		reply_error(
		    cl, -EINVAL,
		    "phi %g is below the target's eps %g: the HCCT guarantees nothing there "
		    "(attach with a smaller --eps)",
		    phi, t->eps);
		return;
	}
	if ((tree_src ? hcct_query(tree_src, num, den, &tree)
		      : target_saved_hcct_query(t, num, den, &tree)) < 0) {
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	nv = calloc(tree->len ? tree->len : 1, sizeof(*nv));
	np = calloc(tree->len ? tree->len : 1, sizeof(*np));
	if (!nv || !np) {
		hcct_tree_free(tree);
		reply_error(cl, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < tree->len; i++) {
		const struct hcct_entry *e = &tree->entries[i];
		const struct profile_func *pf = profile_func_get(t->profile, e->id);
		struct profile_func v = pf ? profile_func_view(pf, view) : (struct profile_func){0};
		const struct profile_func *f = pf ? &v : NULL;

		kprof__hcct_node__init(&nv[i]);
		nv[i].function = f ? (char *)f->name : "[?]";
		nv[i].module = f ? (char *)f->module : "[?]";
		nv[i].kind = f ? pb_kind(f->kind) : KPROF__FRAME_KIND__FRAME_KIND_UNKNOWN;
		nv[i].count = e->count;
		nv[i].err = e->err;
		nv[i].parent = e->parent == HCCT_NONE ? -1 : (int32_t)e->parent;
		nv[i].depth = e->depth;
		nv[i].hot = e->flags & HCCT_ENTRY_HOT;
		nv[i].monitored = e->flags & HCCT_ENTRY_MONITORED;
		np[i] = &nv[i];
	}
	memset(&hs, 0, sizeof(hs));
	if (tree_src)
		hcct_get_stats(tree_src, &hs);
	else
		hs.nodes = t->n_saved_hcct;
	target_fill_pb(t, &tpb);
	hr.target = &tpb;
	hr.n = tree->n;
	hr.phi = phi;
	hr.eps = t->eps;
	hr.threshold = tree->threshold;
	hr.n_nodes = tree->len;
	hr.nodes = np;
	hr.mcct_nodes = hs.nodes;
	hr.mcct_bytes = hs.bytes;
	hr.lost = hs.lost;
	rep.body_case = KPROF__REPLY__BODY_HCCT;
	rep.hcct = &hr;
	client_queue(cl, &rep);
	hcct_tree_free(tree);
}

static void do_paths(struct client *cl, const Kprof__PathsRequest *req)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__Target tpb = KPROF__TARGET__INIT;
	struct manager *m = cl->c->m;
	struct paths_msg pm;
	struct target *t = manager_find(m, req->pid);
	char err_msg[512] = "";
	int err;

	if (req->op == KPROF__PATHS_OP__PATHS_OP_START) {
		bool attached_here = false;

		if (check_attachable(cl, req->pid) < 0)
			return;
		if (!t || t->state != TARGET_ATTACHED) {
			/* Tracing needs the target's symbols: attach it with the defaults. */
			err = manager_attach(m, req->pid, &(struct attach_opts){.by = cl->uid}, &t,
					     err_msg, sizeof(err_msg));
			if (err < 0) {
				reply_error(cl, err, "%s", err_msg);
				return;
			}
			attached_here = true;
		}
		if (!(paths_tracing(t) && paths_is_function(t, req->function))) {
			err = paths_start(t, req, err_msg, sizeof(err_msg));
			if (err < 0) {
				if (attached_here) /* a failed request leaves nothing behind */
					manager_forget(m, t);
				reply_error(cl, err, "%s", err_msg);
				return;
			}
		}
	} else {
		t = request_target(cl, req->pid, req->op == KPROF__PATHS_OP__PATHS_OP_STOP);
		if (!t)
			return;
		if (req->op == KPROF__PATHS_OP__PATHS_OP_STOP)
			paths_stop(t, "stopped");
	}
	err = paths_reply(t, req->top, req->brief, &pm);
	if (err < 0) {
		reply_error(cl, err,
			    err == -ENODATA
				? "pid %u: no path trace (start one with kprofctl paths "
				  "PID FUNCTION)"
				: "pid %u: out of memory",
			    req->pid);
		return;
	}
	target_fill_pb(t, &tpb);
	pm.r.target = &tpb;
	rep.body_case = KPROF__REPLY__BODY_PATHS;
	rep.paths = &pm.r;
	client_queue(cl, &rep);
	paths_msg_release(&pm);
}

static void dispatch(struct client *cl, const uint8_t *data, size_t len)
{
	Kprof__Request *req = kprof__request__unpack(NULL, len, data);

	if (!req) {
		reply_error(cl, -EBADMSG, "malformed request: not a kprof.Request message");
		cl->closing = true;
		return;
	}
	manager_drain(cl->c->m);
	switch (req->body_case) {
	case KPROF__REQUEST__BODY_ATTACH:
		do_attach(cl, req->attach);
		break;
	case KPROF__REQUEST__BODY_DETACH:
		do_detach(cl, req->detach);
		break;
	case KPROF__REQUEST__BODY_LIST:
		do_list(cl, req->list);
		break;
	case KPROF__REQUEST__BODY_STATUS:
		do_status(cl);
		break;
	case KPROF__REQUEST__BODY_REPORT:
		do_report(cl, req->report);
		break;
	case KPROF__REQUEST__BODY_FOLDED:
		do_folded(cl, req->folded);
		break;
	case KPROF__REQUEST__BODY_SUBSCRIBE:
		do_subscribe(cl, req->subscribe);
		break;
	case KPROF__REQUEST__BODY_HCCT:
		do_hcct(cl, req->hcct);
		break;
	case KPROF__REQUEST__BODY_EXPORT:
		do_export(cl, req->export);
		break;
	case KPROF__REQUEST__BODY_PATHS:
		do_paths(cl, req->paths);
		break;
	default:
		reply_error(cl, -EOPNOTSUPP, "unknown request (a newer kprofctl than kprofd?)");
		break;
	}
	kprof__request__free_unpacked(req, NULL);
}

/* Flush, read, handle complete frames, one at a time. 0 to wait for the socket (in the
 * direction the caller then asks for), negative to drop the client. The step count bounds the
 * work done for one client before others get a turn (epoll is level-triggered: it comes back). */
static int client_step(struct client *cl)
{
	uint8_t buf[65536];
	const uint8_t *payload;
	size_t len;
	ssize_t n;
	int r;

	for (int steps = 0; steps < 64; steps++) {
		if (cl->out) {
			r = client_flush(cl);
			if (r <= 0)
				return r;
		}
		if (cl->closing)
			return -ECONNRESET;
		r = frame_reader_next(&cl->rd, &payload, &len);
		if (r < 0) {
			reply_error(cl, -EMSGSIZE, "frame too large: the limit is %u bytes",
				    FRAME_MAX_REQUEST);
			cl->closing = true;
			continue;
		}
		if (r > 0) {
			cl->frame_ns = 0;
			dispatch(cl, payload, len);
			continue;
		}
		/* The frame deadline runs from the first byte of a frame held in part. */
		if (!frame_reader_pending(&cl->rd))
			cl->frame_ns = 0;
		else if (!cl->frame_ns)
			cl->frame_ns = now_ns(CLOCK_MONOTONIC);
		n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET;
		cl->active_ns = now_ns(CLOCK_MONOTONIC);
		r = frame_reader_feed(&cl->rd, buf, n);
		if (r == -ENOMEM)
			return r;
		/* -EMSGSIZE shows up in frame_reader_next on the next turn. */
	}
	return 0;
}

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct client *cl = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	if (client_step(cl) < 0) {
		client_free(cl);
		return 0;
	}
	/* Wait for room to write while a reply is pending, for requests otherwise. */
	sd_event_source_set_io_events(cl->src, cl->out ? EPOLLOUT : EPOLLIN);
	return 0;
}

/* Send one error reply on a connection that is not (or not yet) a client, best effort: the
 * reply is small enough for an empty socket buffer. */
static void refuse_fd(int fd, int err, const char *msg)
{
	Kprof__Reply rep = KPROF__REPLY__INIT;
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;

	rep.error = err;
	rep.message = (char *)msg;
	if (frame_pack(&rep.base, FRAME_MAX_REPLY, &buf, &len) == 0)
		(void)!send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* May uid connect now? If not, *why and the message for the client in msg. Root is held by
 * max_clients alone; any other uid by max_clients_per_uid, and never gets the last eighth (at
 * least one) of max_clients. */
static bool admit(const struct control *c, uid_t uid, enum refusal *why, char *msg, size_t len)
{
	unsigned reserve = c->max_clients / 8 ? c->max_clients / 8 : 1;
	unsigned per_uid = c->m->cfg.max_clients_per_uid, mine = 0;

	if (c->nclients >= c->max_clients) {
		snprintf(msg, len, "too many clients (limit %u), try again later", c->max_clients);
		*why = REFUSE_CLIENTS;
		return false;
	}
	if (uid == 0)
		return true;
	if (c->nclients + reserve >= c->max_clients) {
		snprintf(msg, len,
			 "too many clients (limit %u, the last %u kept for root), try again later",
			 c->max_clients, reserve);
		*why = REFUSE_CLIENTS;
		return false;
	}
	for (const struct client *cl = c->clients; cl; cl = cl->next)
		mine += cl->uid == uid;
	if (mine >= per_uid) {
		snprintf(msg, len, "too many clients of uid %u (limit %u per uid), try again later",
			 uid, per_uid);
		*why = REFUSE_UID;
		return false;
	}
	return true;
}

static int on_accept_resume(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct control *c = userdata;

	(void)s;
	(void)usec;
	sd_event_source_set_enabled(c->src, SD_EVENT_ON);
	return 0;
}

/* accept failed for want of file descriptors. The listening socket stays readable (epoll is
 * level-triggered), so doing nothing would spin: give up the reserve fd to accept the pending
 * connection and refuse it, and without a reserve stop accepting for a moment. */
static void accept_no_fds(struct control *c, int lfd, int err)
{
	char sfx[64];
	int cfd;

	if (log_refusal(c, REFUSE_FDS, sfx, sizeof(sfx)))
		log_warn("refusing clients: out of file descriptors (%s)%s", strerror(err), sfx);
	if (c->reserve_fd >= 0) {
		close(c->reserve_fd);
		cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			refuse_fd(cfd, -EMFILE,
				  "kprofd is out of file descriptors, try again later");
			close(cfd);
		}
		c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (c->reserve_fd >= 0)
			return;
	}
	if (sd_event_source_set_enabled(c->src, SD_EVENT_OFF) < 0)
		return;
	if (c->accept_pause)
		sd_event_source_set_time_relative(c->accept_pause, ACCEPT_PAUSE_USEC);
	else if (sd_event_add_time_relative(c->m->event, &c->accept_pause, CLOCK_MONOTONIC,
					    ACCEPT_PAUSE_USEC, 0, on_accept_resume, c) < 0)
		goto resume;
	if (sd_event_source_set_enabled(c->accept_pause, SD_EVENT_ONESHOT) >= 0)
		return;
resume:
	sd_event_source_set_enabled(c->src, SD_EVENT_ON);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct control *c = userdata;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct client *cl;
	enum refusal why;
	char msg[160], sfx[64];
	int cfd, err;

	(void)s;
	(void)revents;
	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			accept_no_fds(c, fd, errno);
		return 0;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		close(cfd);
		return 0;
	}
	if (!admit(c, cred.uid, &why, msg, sizeof(msg))) {
		if (log_refusal(c, why, sfx, sizeof(sfx)))
			log_warn("refusing client pid %d uid %u: %s (%u clients connected)%s",
				 cred.pid, cred.uid, msg, c->nclients, sfx);
		refuse_fd(cfd, -EUSERS, msg);
		close(cfd);
		return 0;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(cfd);
		return 0;
	}
	cl->c = c;
	cl->fd = cfd;
	cl->uid = cred.uid;
	cl->pid = cred.pid;
	cl->active_ns = now_ns(CLOCK_MONOTONIC);
	cl->reader = c->m->read_gid != (gid_t)-1 && peer_in_group(cfd, cred.gid, c->m->read_gid);
	frame_reader_init(&cl->rd, FRAME_MAX_REQUEST);
	cl->next = c->clients;
	c->clients = cl;
	c->nclients++;
	err = sd_event_add_io(c->m->event, &cl->src, cfd, EPOLLIN, on_client, cl);
	if (err < 0)
		client_free(cl);
	return 0;
}

/* The listening socket systemd passed (kprofd.socket): use it as it is, never unlink it. */
static int control_new_activated(struct manager *m, unsigned max_clients, struct control **ret)
{
	int fd = SD_LISTEN_FDS_START, err;
	struct control *c;

	if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
		log_err("socket activation: fd %d is not a listening Unix stream socket", fd);
		return -EINVAL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->m = m;
	c->fd = fd;
	c->max_clients = max_clients;
	c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	c->path = strdup("(socket activation)");
	err = c->path ? sd_event_add_io(m->event, &c->src, c->fd, EPOLLIN, on_accept, c) : -ENOMEM;
	if (err < 0) {
		control_free(c);
		return err;
	}
	log_info("listening on the socket passed by systemd");
	*ret = c;
	return 0;
}

int control_new(struct manager *m, const char *path, unsigned max_clients, struct control **ret)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct control *c;
	_cleanup_free_ char *dir = NULL;
	char *slash;
	int err, n;

	n = sd_listen_fds(1);
	if (n < 0 || n > 1) {
		log_err("socket activation: %s",
			n < 0 ? strerror(-n) : "more than one socket passed");
		return n < 0 ? n : -EINVAL;
	}
	if (n == 1)
		return control_new_activated(m, max_clients, ret);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_err("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->m = m;
	c->fd = -1;
	c->max_clients = max_clients;
	c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	c->path = strdup(path);
	dir = strdup(path);
	if (!c->path || !dir) {
		err = -ENOMEM;
		goto fail;
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			err = -errno;
			log_err("cannot create %s: %s", dir, strerror(-err));
			goto fail;
		}
	}
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto fail;
	}
	/* A socket file left by a kprofd that was killed: replace it, unless one still answers. */
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_err("%s: another kprofd is already listening there", path);
		err = -EADDRINUSE;
		goto fail;
	}
	close(c->fd);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto fail;
	}
	unlink(path);
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		c->bound = true;
	if (!c->bound || chmod(path, 0666) < 0 || listen(c->fd, 64) < 0) {
		err = -errno;
		log_err("cannot listen on %s: %s", path, strerror(-err));
		goto fail;
	}
	err = sd_event_add_io(m->event, &c->src, c->fd, EPOLLIN, on_accept, c);
	if (err < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	control_free(c);
	return err;
}

void control_free(struct control *c)
{
	if (!c)
		return;
	while (c->clients)
		client_free(c->clients);
	sd_event_source_disable_unref(c->src);
	sd_event_source_disable_unref(c->accept_pause);
	if (c->fd >= 0)
		close(c->fd);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	if (c->bound)
		unlink(c->path);
	free(c->path);
	free(c);
}

void control_reap_idle(struct control *c, uint64_t now, uint64_t idle_ns)
{
	uint64_t frame_ns = c->m->cfg.frame_timeout_sec * 1000000000ULL;
	struct client *cl = c->clients, *next;
	char sfx[64];

	for (; cl; cl = next) {
		next = cl->next;
		if (now - cl->active_ns > idle_ns) {
			log_info("closing idle client pid %d uid %u (%.0f s without a byte)",
				 cl->pid, cl->uid, (now - cl->active_ns) / 1e9);
			client_free(cl);
		} else if (cl->frame_ns && !cl->out && now - cl->frame_ns > frame_ns) {
			/* A byte now and then keeps the idle timeout away, not this one. */
			if (log_refusal(c, REFUSE_FRAME, sfx, sizeof(sfx)))
				log_warn("closing client pid %d uid %u: its request is not whole "
					 "after %u s%s",
					 cl->pid, cl->uid, c->m->cfg.frame_timeout_sec, sfx);
			reply_error(cl, -ETIMEDOUT,
				    "request not whole after %u s (frame_timeout), closing",
				    c->m->cfg.frame_timeout_sec);
			client_flush(cl);
			client_free(cl);
		}
	}
}

void control_set_limits(struct control *c, unsigned max_clients)
{
	c->max_clients = max_clients;
}

unsigned control_clients(const struct control *c)
{
	return c->nclients;
}
