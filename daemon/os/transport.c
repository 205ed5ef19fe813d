// SPDX-License-Identifier: GPL-2.0-only
/* transport.c: the Unix control socket: listening, clients, frames, quotas and deadlines.
 *
 * Stream socket (default /run/kprofd/kprofd.sock, mode 0666: who may do what is decided per
 * request from SO_PEERCRED, not by file permissions), or the one systemd passes
 * (kprofd.socket). The transport knows frames and protobuf-c messages in general, not kprof's
 * requests: each whole request frame goes to the handler's on_frame (requests.c), which answers
 * with transport_reply. Errors the transport makes itself (refusals, deadlines) are packed by the
 * handler's pack_error.
 *
 * Each client has a frame reader capped at FRAME_MAX_REQUEST and one pending reply; a client
 * whose reply is not yet written is not read from (backpressure), so one client cannot queue
 * unbounded replies. A bad frame (oversized) gets an error reply, then the connection is closed;
 * the daemon is unaffected. A client silent for client_timeout seconds (mid-frame or between
 * requests) is closed, so idle connections cannot hold the client slots forever, and so is one
 * whose request frame is not whole frame_timeout seconds after its first byte (a byte now and
 * then does not keep it).
 *
 * What one unprivileged user can take from the others (and from root) is bounded: at most
 * max_clients_per_uid connections, never the last eighth of max_clients (root's); at most
 * reply_pending_per_uid_mb of replies waiting to be read by its clients, and no reply that would
 * pass reply_pending_mb in all (a refused reply becomes a small -ENOBUFS error). When file
 * descriptors run out, a reserve fd lets the daemon accept and refuse the pending connection
 * instead of spinning on the listening socket. Refusals are logged at most once per 10 s per
 * reason, with how many were not. The limits are read from the settings at each use, so a
 * reload applies at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "kprof/cleanup.h"
#include "kprof/frame.h"
#include "os/clock.h"
#include "os/transport.h"
#include "os/log.h"

/* Replies this small (errors) are always queued, whatever the reply budgets say. */
#define REPLY_SMALL 4096
#define LOG_EVERY_NS (10 * 1000000000ULL)
#define ACCEPT_PAUSE_USEC (250 * 1000ULL)
#define REAP_USEC (1000 * 1000ULL)
#define ACCEPT_BATCH 64

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

struct transport_client {
	struct transport_client *next;
	struct transport *c;
	int fd;
	uid_t uid;
	pid_t pid;
	gid_t gid;
	void *data; /* the handler's (on_connect, on_disconnect) */
	sd_event_source *src;
	struct frame_reader rd;
	uint8_t *out;
	size_t out_len, out_off;
	bool closing;	    /* close once the output is flushed */
	bool held;	    /* its request is still being answered: read nothing more */
	uint64_t active_ns; /* last byte in or out (CLOCK_MONOTONIC) */
	uint64_t frame_ns;  /* when the request frame being read began; 0: none */
};

struct transport {
	const struct config *conf; /* the daemon's settings: limits, read at each use */
	sd_event *event;
	struct transport_ops ops;
	void *ctx;
	int fd;
	char *path;
	sd_event_source *src;
	struct transport_client *clients;
	unsigned nclients;
	bool bound;	/* the socket file is ours to remove */
	int reserve_fd; /* /dev/null, given up to accept-and-refuse when fds run out */
	sd_event_source *accept_pause; /* re-enables src after a pause */
	sd_event_source *reap_timer;
	struct ratelimit rl[REFUSE_NR];
};

/* Log this refusal now? *sfx gets ", N more since the last message" when some were not. */
static bool log_refusal(struct transport *c, enum refusal r, char *sfx, size_t len)
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

static void client_free(struct transport_client *cl)
{
	struct transport *c = cl->c;

	for (struct transport_client **pp = &c->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			c->nclients--;
			break;
		}
	}
	if (c->ops.on_disconnect)
		c->ops.on_disconnect(c->ctx, cl);
	sd_event_source_disable_unref(cl->src);
	if (cl->fd >= 0)
		close(cl->fd);
	frame_reader_release(&cl->rd);
	free(cl->out);
	free(cl);
}

/* Write what is queued. 1 when everything is out, 0 if the socket is full, <0 on error. */
static int client_flush(struct transport_client *cl)
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
static int reply_budget(struct transport_client *cl, size_t len, char *msg, size_t msglen)
{
	struct transport *c = cl->c;
	const struct config *conf = c->conf;
	uint64_t all = 0, mine = 0, lim_all = (uint64_t)conf->reply_pending_mb << 20;
	uint64_t lim_uid = (uint64_t)conf->reply_pending_per_uid_mb << 20;
	char sfx[64];

	if (len <= REPLY_SMALL)
		return 0;
	for (const struct transport_client *o = c->clients; o; o = o->next) {
		all += o->out_len - o->out_off;
		if (o->uid == cl->uid)
			mine += o->out_len - o->out_off;
	}
	if (cl->uid != 0 && mine + len > lim_uid) {
		snprintf(msg, msglen,
			 "reply of %.1f MiB refused: %llu MiB of replies are waiting to be read by "
			 "uid %u's clients (limit %u MiB); read them or try later",
			 len / 1048576.0, (unsigned long long)(mine >> 20), cl->uid,
			 conf->reply_pending_per_uid_mb);
	} else if (all + len > (cl->uid ? lim_all - lim_all / 8 : lim_all)) {
		snprintf(msg, msglen,
			 "reply of %.1f MiB refused: %llu MiB of replies are waiting to be read by "
			 "all clients (limit %u MiB%s); read them or try later",
			 len / 1048576.0, (unsigned long long)(all >> 20), conf->reply_pending_mb,
			 cl->uid ? ", the last eighth kept for root" : "");
	} else {
		return 0;
	}
	if (log_refusal(c, REFUSE_REPLY, sfx, sizeof(sfx)))
		log_warn("client pid %d uid %u: %s%s", cl->pid, cl->uid, msg, sfx);
	return -ENOBUFS;
}

/* Queue a packed frame as cl's reply (only one is ever pending: reading stops until it is
 * flushed). */
static void client_set_out(struct transport_client *cl, uint8_t *buf, size_t len)
{
	free(cl->out);
	cl->out = buf;
	cl->out_len = len;
	cl->out_off = 0;
}

void transport_reply_error(struct transport_client *cl, int err, const char *msg)
{
	uint8_t *buf;
	size_t len;

	if (cl->c->ops.pack_error(err, msg, &buf, &len) < 0) {
		cl->closing = true;
		return;
	}
	client_set_out(cl, buf, len);
}

void transport_reply(struct transport_client *cl, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
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
		err = frame_pack(msg, FRAME_MAX_REPLY, &buf, &len);
	if (err < 0) {
		transport_reply_error(cl, err, err == -ENOMEM ? "out of memory" : why);
		return;
	}
	client_set_out(cl, buf, len);
}

/* Wait for room to write while a reply is pending; for nothing while the request is held (the
 * socket stays readable: level-triggered epoll would spin); for requests otherwise. */
static void client_wait(struct transport_client *cl)
{
	if (cl->held && !cl->out) {
		sd_event_source_set_enabled(cl->src, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_io_events(cl->src, cl->out ? EPOLLOUT : EPOLLIN);
	sd_event_source_set_enabled(cl->src, SD_EVENT_ON);
}

void transport_close(struct transport_client *cl)
{
	cl->closing = true;
}

bool transport_busy(const struct transport_client *cl)
{
	return cl->out || cl->closing;
}

bool transport_flush(struct transport_client *cl)
{
	if (client_flush(cl) < 0) {
		client_free(cl);
		return false;
	}
	client_wait(cl);
	return true;
}

void transport_hold(struct transport_client *cl)
{
	cl->held = true;
}

static int client_step(struct transport_client *cl);

bool transport_resume(struct transport_client *cl)
{
	cl->held = false;
	cl->active_ns = now_ns(CLOCK_MONOTONIC);
	/* Frames that came while it was held are read now, not at the next byte. */
	if (client_step(cl) < 0) {
		client_free(cl);
		return false;
	}
	client_wait(cl);
	return true;
}

uid_t transport_client_uid(const struct transport_client *cl)
{
	return cl->uid;
}

pid_t transport_client_pid(const struct transport_client *cl)
{
	return cl->pid;
}

void *transport_client_data(const struct transport_client *cl)
{
	return cl->data;
}

void transport_client_set_data(struct transport_client *cl, void *data)
{
	cl->data = data;
}

unsigned transport_clients(const struct transport *c)
{
	return c->nclients;
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

bool transport_client_in_group(const struct transport_client *cl, gid_t want)
{
	return want != (gid_t)-1 && peer_in_group(cl->fd, cl->gid, want);
}

/* Flush, read, handle complete frames, one at a time. 0 to wait for the socket (in the
 * direction the caller then asks for), negative to drop the client. The step count bounds the
 * work done for one client before others get a turn (epoll is level-triggered: it comes back). */
static int client_step(struct transport_client *cl)
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
		if (cl->held)
			return 0;
		r = frame_reader_next(&cl->rd, &payload, &len);
		if (r < 0) {
			char msg[64];

			snprintf(msg, sizeof(msg), "frame too large: the limit is %u bytes",
				 FRAME_MAX_REQUEST);
			transport_reply_error(cl, -EMSGSIZE, msg);
			cl->closing = true;
			continue;
		}
		if (r > 0) {
			cl->frame_ns = 0;
			cl->c->ops.on_frame(cl->c->ctx, cl, payload, len);
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
	struct transport_client *cl = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	if (client_step(cl) < 0) {
		client_free(cl);
		return 0;
	}
	client_wait(cl);
	return 0;
}

/* Send one error reply on a connection that is not (or not yet) a client, best effort: the
 * reply is small enough for an empty socket buffer. */
static void refuse_fd(const struct transport *c, int fd, int err, const char *msg)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;

	if (c->ops.pack_error(err, msg, &buf, &len) == 0)
		(void)!send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* May uid connect now? If not, *why and the message for the client in msg. Root is held by
 * max_clients alone; any other uid by max_clients_per_uid, and never gets the last eighth (at
 * least one) of max_clients. */
static bool admit(const struct transport *c, uid_t uid, enum refusal *why, char *msg, size_t len)
{
	unsigned max_clients = c->conf->max_clients;
	unsigned reserve = max_clients / 8 ? max_clients / 8 : 1;
	unsigned per_uid = c->conf->max_clients_per_uid, mine = 0;

	if (c->nclients >= max_clients) {
		snprintf(msg, len, "too many clients (limit %u), try again later", max_clients);
		*why = REFUSE_CLIENTS;
		return false;
	}
	if (uid == 0)
		return true;
	if (c->nclients + reserve >= max_clients) {
		snprintf(msg, len,
			 "too many clients (limit %u, the last %u kept for root), try again later",
			 max_clients, reserve);
		*why = REFUSE_CLIENTS;
		return false;
	}
	for (const struct transport_client *cl = c->clients; cl; cl = cl->next)
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
	struct transport *c = userdata;

	(void)s;
	(void)usec;
	sd_event_source_set_enabled(c->src, SD_EVENT_ON);
	return 0;
}

/* accept failed for want of file descriptors. The listening socket stays readable (epoll is
 * level-triggered), so doing nothing would spin: give up the reserve fd to accept the pending
 * connection and refuse it, and without a reserve stop accepting for a moment. */
static void accept_no_fds(struct transport *c, int lfd, int err)
{
	char sfx[64];
	int cfd;

	if (log_refusal(c, REFUSE_FDS, sfx, sizeof(sfx)))
		log_warn("refusing clients: out of file descriptors (%s)%s", strerror(err), sfx);
	if (c->reserve_fd >= 0) {
		close(c->reserve_fd);
		cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			refuse_fd(c, cfd, -EMFILE,
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
	else if (sd_event_add_time_relative(c->event, &c->accept_pause, CLOCK_MONOTONIC,
					    ACCEPT_PAUSE_USEC, 0, on_accept_resume, c) < 0)
		goto resume;
	if (sd_event_source_set_enabled(c->accept_pause, SD_EVENT_ONESHOT) >= 0)
		return;
resume:
	sd_event_source_set_enabled(c->src, SD_EVENT_ON);
}

/* Clients whose peer has closed its end but whose hang-up the loop has not reached yet still
 * count against the limits. Before refusing anyone for them, finish those clients now: what
 * they sent is still read and answered (on_client), so no request is lost. */
static void close_gone(struct transport *c)
{
	struct transport_client *cl, *next;

	for (cl = c->clients; cl; cl = next) {
		struct pollfd p = {.fd = cl->fd, .events = POLLIN};

		next = cl->next;
		if (cl->held || poll(&p, 1, 0) != 1 || !(p.revents & (POLLHUP | POLLERR)))
			continue;
		on_client(NULL, cl->fd, 0, cl); /* may free cl */
	}
}

/* Accepts one pending connection: false when there is none (or accept failed). *swept: whether
 * close_gone ran already for this batch (once a batch: it polls every client). */
static bool accept_one(struct transport *c, int fd, bool *swept)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct transport_client *cl;
	enum refusal why;
	char msg[160], sfx[64];
	int cfd, err;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		err = errno;
		if (err == EMFILE || err == ENFILE)
			accept_no_fds(c, fd, err);
		return err == EINTR || err == ECONNABORTED;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		close(cfd);
		return true;
	}
	if (!admit(c, cred.uid, &why, msg, sizeof(msg)) && !*swept) {
		*swept = true;
		close_gone(c);
	}
	if (!admit(c, cred.uid, &why, msg, sizeof(msg))) {
		if (log_refusal(c, why, sfx, sizeof(sfx)))
			log_warn("refusing client pid %d uid %u: %s (%u clients connected)%s",
				 cred.pid, cred.uid, msg, c->nclients, sfx);
		refuse_fd(c, cfd, -EUSERS, msg);
		close(cfd);
		return true;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(cfd);
		return false;
	}
	cl->c = c;
	cl->fd = cfd;
	cl->uid = cred.uid;
	cl->pid = cred.pid;
	cl->active_ns = now_ns(CLOCK_MONOTONIC);
	cl->gid = cred.gid;
	frame_reader_init(&cl->rd, FRAME_MAX_REQUEST);
	cl->next = c->clients;
	c->clients = cl;
	c->nclients++;
	err = sd_event_add_io(c->event, &cl->src, cfd, EPOLLIN, on_client, cl);
	if (err >= 0 && c->ops.on_connect)
		err = c->ops.on_connect(c->ctx, cl);
	if (err < 0)
		client_free(cl);
	return true;
}

/* Every pending connection (up to ACCEPT_BATCH) at once: the event loop dispatches one source
 * a turn, so accepting one a turn made each new connection wait for every busy client to be
 * served first (a client connecting for each request got 1/150 of the replies of one that
 * keeps its connection, test_faults). */
static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct transport *c = userdata;
	bool swept = false;

	(void)s;
	(void)revents;
	for (int i = 0; i < ACCEPT_BATCH && accept_one(c, fd, &swept); i++)
		;
	return 0;
}

static int on_reap(sd_event_source *s, uint64_t usec, void *userdata);

/* What every constructor does once the listening fd is there. */
static int transport_start(struct transport *c)
{
	int err;

	err = sd_event_add_io(c->event, &c->src, c->fd, EPOLLIN, on_accept, c);
	if (err >= 0)
		err = sd_event_add_time_relative(c->event, &c->reap_timer, CLOCK_MONOTONIC,
						 REAP_USEC, 10000, on_reap, c);
	if (err >= 0)
		err = sd_event_source_set_enabled(c->reap_timer, SD_EVENT_ON);
	return err;
}

static struct transport *transport_alloc(sd_event *ev, const struct config *conf,
					 const struct transport_ops *ops, void *ctx)
{
	struct transport *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->conf = conf;
	c->event = ev;
	c->ops = *ops;
	c->ctx = ctx;
	c->fd = -1;
	c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return c;
}

/* The listening socket systemd passed (kprofd.socket): use it as it is, never unlink it. */
static int transport_new_activated(struct transport *c)
{
	int fd = SD_LISTEN_FDS_START, err;

	if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
		log_err("socket activation: fd %d is not a listening Unix stream socket", fd);
		return -EINVAL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	c->fd = fd;
	c->path = strdup("(socket activation)");
	err = c->path ? transport_start(c) : -ENOMEM;
	if (err < 0)
		return err;
	log_info("listening on the socket passed by systemd");
	return 0;
}

static int transport_listen(struct transport *c, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = NULL;
	char *slash;
	int err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_err("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	c->path = strdup(path);
	dir = strdup(path);
	if (!c->path || !dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			err = -errno;
			log_err("cannot create %s: %s", dir, strerror(-err));
			return err;
		}
	}
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* A socket file left by a kprofd that was killed: replace it, unless one still answers. */
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_err("%s: another kprofd is already listening there", path);
		return -EADDRINUSE;
	}
	close(c->fd);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	unlink(path);
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		c->bound = true;
	if (!c->bound || chmod(path, 0666) < 0 || listen(c->fd, 64) < 0) {
		err = -errno;
		log_err("cannot listen on %s: %s", path, strerror(-err));
		return err;
	}
	return transport_start(c);
}

int transport_check_free(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;

	if (sd_listen_fds(0) > 0 || strlen(path) >= sizeof(sa.sun_path))
		return 0; /* systemd's socket, or an error transport_new reports */
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? -EADDRINUSE : 0;
}

int transport_new(sd_event *ev, const struct config *conf, const struct transport_ops *ops,
		  void *ctx, struct transport **ret)
{
	struct transport *c;
	int err, n;

	if (!ops->on_frame || !ops->pack_error)
		return -EINVAL;
	n = sd_listen_fds(1);
	if (n < 0 || n > 1) {
		log_err("socket activation: %s",
			n < 0 ? strerror(-n) : "more than one socket passed");
		return n < 0 ? n : -EINVAL;
	}
	c = transport_alloc(ev, conf, ops, ctx);
	if (!c)
		return -ENOMEM;
	err = n == 1 ? transport_new_activated(c) : transport_listen(c, conf->socket_path);
	if (err < 0) {
		transport_free(c);
		return err;
	}
	*ret = c;
	return 0;
}

void transport_free(struct transport *c)
{
	if (!c)
		return;
	while (c->clients)
		client_free(c->clients);
	sd_event_source_disable_unref(c->src);
	sd_event_source_disable_unref(c->accept_pause);
	sd_event_source_disable_unref(c->reap_timer);
	if (c->fd >= 0)
		close(c->fd);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	if (c->bound)
		unlink(c->path);
	free(c->path);
	free(c);
}

/* Close clients silent for client_timeout, and those whose request frame is not whole
 * frame_timeout seconds after its first byte. */
static int on_reap(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct transport *c = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t idle_ns = c->conf->client_timeout_sec * 1000000000ULL;
	uint64_t frame_ns = c->conf->frame_timeout_sec * 1000000000ULL;
	struct transport_client *cl = c->clients, *next;
	char sfx[64], msg[96];

	for (; cl; cl = next) {
		next = cl->next;
		if (now - cl->active_ns > idle_ns && !cl->held) {
			log_info("closing idle client pid %d uid %u (%.0f s without a byte)",
				 cl->pid, cl->uid, (now - cl->active_ns) / 1e9);
			client_free(cl);
		} else if (cl->frame_ns && !cl->out && now - cl->frame_ns > frame_ns) {
			/* A byte now and then keeps the idle timeout away, not this one. */
			if (log_refusal(c, REFUSE_FRAME, sfx, sizeof(sfx)))
				log_warn("closing client pid %d uid %u: its request is not whole "
					 "after %u s%s",
					 cl->pid, cl->uid, c->conf->frame_timeout_sec, sfx);
			snprintf(msg, sizeof(msg),
				 "request not whole after %u s (frame_timeout), closing",
				 c->conf->frame_timeout_sec);
			transport_reply_error(cl, -ETIMEDOUT, msg);
			client_flush(cl);
			client_free(cl);
		}
	}
	return sd_event_source_set_time(s, usec + REAP_USEC);
}
