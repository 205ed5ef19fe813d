// SPDX-License-Identifier: GPL-2.0-only
/* http.c: the pprof HTTP endpoint for fleet back ends (go tool pprof, Parca, Grafana Alloy's
 * pyroscope.scrape, the OpenTelemetry Collector), off unless [http] listen is set.
 *
 * libmicrohttpd parses HTTP; it runs in its external-epoll mode on the manager's sd-event loop:
 * its epoll fd is one IO source, its timeout one timer, and every call into it is MHD_run from
 * the loop, so nothing here blocks on a client (MHD's sockets are non-blocking) and profiles
 * are built on the loop like every other reply. GET /debug/pprof/profile?seconds=N (every
 * target, or those pid=, unit=, cgroup=, comm= select) snapshots the targets' stack counts,
 * suspends the connection and answers N seconds later with the later profiles minus the
 * snapshots, merged and labelled per process (http_profile.c). With since=/until= it answers
 * from the kept time windows instead, merged in steps between other work (http_range.c).
 * GET /debug/pprof/targets lists the targets and watches as JSON.
 *
 * Bounds: MHD's connection limit and per-connection memory (the request line and headers:
 * a longer URL gets 414 from MHD), HTTPQ_MAX_ARGS/HTTPQ_MAX_QUERY, seconds <= max_seconds;
 * a connection whose request is not whole request_timeout seconds after it began (or after the
 * previous one ended) is shut down by a 1 s sweep (MHD's own idle timeout alone would let a
 * client sending a byte a second keep a connection for ever), and a response not taken within
 * HTTP_SEND_SEC is cut the same way. Over max_connections, the oldest connection that has not
 * passed the token check is cut (conn_evict); profile requests that wait are capped in all and
 * per client address (http_wait_check), and one whose client hangs up is released at once
 * (http_watch_client). A token ([http] token_file) is required on every address, loopback
 * too, unless insecure_no_auth (loopback only); without one the endpoint stays off and kprofd
 * runs on. It is checked before anything else, so no unauthenticated request waits.
 * HTTP readers see kernel frames by name, never their addresses.
 */
#include "http/http.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/cgroups.h"
#include "os/clock.h"
#include "kprof/cleanup.h"
#include "kprof/httpq.h"
#include "kprof/merge.h"
#include "kprof/pprof.h"
#include "kprof/profile.h"
#include "kprof/when.h"
#include "os/log.h"
#include "os/worker.h"
#include "manager/manager.h"
#include "wire/target_pb.h"
#include "http/http_internal.h"
#include "manager/windows.h"

#define HTTP_CONN_MEMORY (16u << 10) /* request line and headers of one connection */
#define HTTP_BUILD_JOBS 4  /* answers built or waiting in the build thread; more: in the loop */
#define HTTP_SPARE_CONNS 8 /* accepted above max_connections, to evict others for */

static void sweep_arm(struct httpd *h);

struct args {
	struct httpq q;
	unsigned max_seconds;
	int err;
	char msg[320];
};

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	struct args *a = cls;

	(void)kind;
	if (a->err)
		return MHD_NO;
	a->err = httpq_arg(&a->q, key, value, a->max_seconds, a->msg, sizeof(a->msg));
	return a->err ? MHD_NO : MHD_YES;
}

static enum MHD_Result start_profile(struct httpd *h, struct MHD_Connection *c, void **con_cls)
{
	struct manager *m = h->m;
	struct args a = {.max_seconds = m->conf.http_max_seconds};
	enum MHD_Result res = MHD_NO;

	httpq_init(&a.q);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &a);
	if (!a.err)
		a.err = httpq_check(&a.q, a.msg, sizeof(a.msg));
	if (a.err)
		return http_queue_text(c, MHD_HTTP_BAD_REQUEST, "%s", a.msg);
	if (http_wait_check(h, c, &res) < 0)
		return res;
	if (a.q.since[0] || a.q.until[0])
		return http_range_start(h, c, &a.q, con_cls);
	return http_profile_start(h, c, &a.q, con_cls);
}

/* ---- Listing ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const char *state_name(enum target_state s)
{
	return s == TARGET_ATTACHED ? "attached" : s == TARGET_EXITED ? "exited" : "detached";
}

static enum MHD_Result list_targets(struct httpd *h, struct MHD_Connection *c)
{
	struct manager *m = h->m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool first = true;

	if (!f)
		return http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	fputs("{\"targets\":[", f);
	for (const struct target *t = manager_targets_first(m); t; t = manager_targets_next(t)) {
		fprintf(f, "%s{\"pid\":%d,\"comm\":", first ? "" : ",", (int)t->pid);
		json_str(f, t->comm);
		fprintf(f,
			",\"uid\":%u,\"state\":\"%s\",\"freq_hz\":%u,\"samples\":%" PRIu64
			",\"attached_at_ns\":%" PRIu64 ",\"unit\":",
			(unsigned)t->uid, state_name(t->state), t->freq, t->samples,
			t->attached_ns);
		json_str(f, t->cgroup ? t->cgroup : "");
		fputs(",\"rule\":", f);
		json_str(f, t->rule ? t->rule : "");
		fprintf(f, ",\"all\":%s}", t->all ? "true" : "false"); /* attach --all's */
		first = false;
	}
	fputs("],\"units\":[", f);
	for (unsigned i = 0; i < m->n_watches; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, m->watches[i]->name);
		fputs(",\"cgroup\":", f);
		json_str(f, m->watches[i]->ref.path);
		fputc('}', f);
	}
	fputs("]}\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return http_queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
	}
	return http_queue_buf(c, MHD_HTTP_OK, "application/json", buf, len, MHD_RESPMEM_MUST_FREE);
}

static const char index_text[] =
    "kprofd pprof endpoint (every request needs Authorization: Bearer TOKEN)\n"
    "\n"
    "GET /debug/pprof/profile?seconds=N          CPU profile of every profiled process over the\n"
    "                                            next N seconds (default 30), gzip'd pprof; each\n"
    "                                            sample labelled pid, comm, exe, unit, cgroup,\n"
    "                                            runtime, thread_id, thread_name, kind\n"
    "    &pid=PID &unit=UNIT &cgroup=PATH &comm=NAME  only the processes matching all of these\n"
    "    &since=TIME&until=TIME                   kept windows of one pid= or unit= instead\n"
    "GET /debug/pprof/targets                    targets and watched units (JSON)\n"
    "GET /debug/pprof/                           this page\n"
    "\n"
    "Other arguments are ignored. No heap, goroutine, mutex, block or trace profiles: 404.\n";

/* ---- MHD's callbacks ---- */

/* The *con_cls of a request whose headers passed the checks, until MHD's next call. */
static const char headers_checked;

static enum MHD_Result dispatch(struct httpd *h, struct MHD_Connection *c, const char *url,
				void **con_cls);

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *upload_data,
				 size_t *upload_data_size, void **con_cls)
{
	struct httpd *h = cls;
	struct http_req *r = *con_cls;
	const union MHD_ConnectionInfo *ci;

	(void)version;
	(void)upload_data;
	if (r == (void *)&headers_checked) { /* the request is whole: answer it */
		*con_cls = NULL;
		if (*upload_data_size)
			return http_queue_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
					       "no request body is accepted");
		return dispatch(h, c, url, con_cls);
	}
	if (r) /* resumed: the answer is ready */
		return r->answered ? http_queue_answer(r) : MHD_YES;
	/* MHD's first call, with the headers: refusals are queued now (MHD then closes the
	 * connection), anything else on its next call, once the request is whole, so that the
	 * connection can be kept alive for the next scrape. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_queue_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served");
	/* Before anything is looked at or waited for. */
	if (h->token_len && !httpq_bearer_ok(MHD_lookup_connection_value(
						 c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
					     h->token, h->token_len)) {
		h->unauthorized++;
		return http_queue_text(c, MHD_HTTP_UNAUTHORIZED,
				       "a bearer token is required (Authorization: Bearer TOKEN, "
				       "[http] token_file)");
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context)
		((struct http_conn *)ci->socket_context)->authed = true;
	*con_cls = (void *)&headers_checked;
	return MHD_YES;
}

static enum MHD_Result dispatch(struct httpd *h, struct MHD_Connection *c, const char *url,
				void **con_cls)
{
	if (!strcmp(url, "/debug/pprof/profile"))
		return start_profile(h, c, con_cls);
	if (!strcmp(url, "/debug/pprof/targets") || !strcmp(url, "/targets"))
		return list_targets(h, c);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof") || !strcmp(url, "/"))
		return http_queue_buf(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
				      (void *)index_text, sizeof(index_text) - 1,
				      MHD_RESPMEM_PERSISTENT);
	return http_queue_text(
	    c, MHD_HTTP_NOT_FOUND,
	    "no such page: only /debug/pprof/profile (CPU) and /debug/pprof/targets "
	    "are served");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct httpd *h = cls;

	(void)toe;
	if (*con_cls != (void *)&headers_checked)
		http_req_free(*con_cls);
	*con_cls = NULL;
	/* The next request on a kept-alive connection has request_timeout again. */
	http_conn_deadline(c, h->m->conf.http_request_timeout);
}

/* hc shut down: MHD sees the end and closes it on its next run. */
static void conn_cut(struct http_conn *hc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(hc->c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (ci && ci->connect_fd >= 0)
		shutdown(ci->connect_fd, SHUT_RDWR);
	hc->deadline = 0;
	hc->cut = true;
}

/* Over max_connections, the oldest connection that has not passed the token check is cut (the
 * new one if it is the only one): clients that stall or have no token cannot keep a scraper
 * with the token out, and the scraper's connection, the newest, is the last to go while it
 * sends its request. MHD's own limit, HTTP_SPARE_CONNS higher, bounds the descriptors. */
static void conn_evict(struct httpd *h)
{
	struct http_conn *oldest = NULL;
	unsigned live = 0;

	for (struct http_conn *hc = h->conns; hc; hc = hc->next) {
		if (hc->cut)
			continue;
		live++;
		if (!hc->authed)
			oldest = hc; /* newest first: the last one seen is the oldest */
	}
	if (live <= h->m->conf.http_max_connections || !oldest)
		return;
	conn_cut(oldest);
	h->evicted++;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct httpd *h = cls;
	struct http_conn *hc = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		hc = calloc(1, sizeof(*hc));
		if (!hc) /* no deadline of ours: MHD's idle timeout still holds */
			return;
		hc->c = c;
		hc->deadline =
		    now_ns(CLOCK_MONOTONIC) + (uint64_t)h->m->conf.http_request_timeout * NSEC;
		hc->next = h->conns;
		if (h->conns)
			h->conns->prev = hc;
		h->conns = hc;
		h->nconns++;
		*socket_context = hc;
		conn_evict(h);
		sweep_arm(h);
		return;
	}
	if (!hc)
		return;
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	h->nconns--;
	free(hc);
	*socket_context = NULL;
}

/* The sweep runs each second while there are connections. */
static void sweep_arm(struct httpd *h)
{
	int on = 0;

	if (sd_event_source_get_enabled(h->sweep, &on) >= 0 && on != SD_EVENT_OFF)
		return;
	sd_event_source_set_time_relative(h->sweep, NSEC / 1000);
	sd_event_source_set_enabled(h->sweep, SD_EVENT_ONESHOT);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[256];

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	log_debug("http: %s", buf);
}

/* ---- The loop ---- */

static int on_mhd_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s;
	(void)fd;
	(void)revents;
	http_run(userdata);
	return 0;
}

static int on_mhd_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	http_run(userdata);
	return 0;
}

/* Each second: connections past their deadline are shut down (MHD sees the end and closes
 * them on its next run). */
static int on_sweep(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct httpd *h = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	unsigned cut = 0;

	(void)usec;
	for (struct http_conn *hc = h->conns; hc; hc = hc->next) {
		if (!hc->deadline || hc->deadline > now)
			continue;
		conn_cut(hc);
		cut++;
	}
	if (cut) {
		log_debug("http: %u connection%s past its deadline closed", cut,
			  cut > 1 ? "s" : "");
		http_run(h);
	}
	if (h->nconns) {
		sd_event_source_set_time_relative(s, NSEC / 1000);
		sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

/* The token file: a regular file of kprofd's user that others can neither read nor write (a
 * group may read it: a scraper's), its text checked by httpq_token. */
static int read_token(struct httpd *h, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	char buf[HTTPQ_MAX_TOKEN + 64], why[160];
	struct stat st;
	ssize_t n;
	int len;

	if (fd < 0) {
		log_err("http: token file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IROTH)) {
		log_err("http: token file %s: must be a regular file not readable by others", path);
		return -EPERM;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_err("http: token file %s: must be owned by uid %u and writable by it alone",
			path, (unsigned)geteuid());
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		log_err("http: token file %s: %s", path, strerror(errno));
		return -errno;
	}
	len = httpq_token(buf, n, why, sizeof(why));
	if (len < 0) {
		log_err("http: token file %s: %s", path, why);
		return len;
	}
	memcpy(h->token, buf, len);
	h->token[len] = 0;
	h->token_len = len;
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* [http] listen parsed into addr: 0, or -EINVAL logged. */
static int check_listen(const struct config *conf, struct httpq_addr *addr)
{
	char why[160];

	if (httpq_listen(conf->http_listen, addr, why, sizeof(why)) < 0) {
		log_err("http: listen %s", why);
		return -EINVAL;
	}
	return 0;
}

/* The token, or the opt-out from it on loopback: 0, or -EPERM with the endpoint to stay off,
 * logged with how to turn it on. Any local user can connect to loopback, so loopback needs
 * the token as much as any other address. */
static int check_auth(struct httpd *h, const struct config *conf, const struct httpq_addr *addr)
{
	static const char how[] = "set [http] token_file = FILE (16-1024 printable characters, "
				  "mode 0600 or 0640, owned by root; scrapers send "
				  "\"Authorization: Bearer TOKEN\"; docs/SERVICE.md)";

	if (conf->http_token_file[0]) {
		if (read_token(h, conf->http_token_file) < 0) {
			log_err("http: endpoint %s OFF: its token file is unusable (above): %s",
				conf->http_listen, how);
			return -EPERM;
		}
		return 0;
	}
	if (!conf->http_insecure_no_auth) {
		log_err("http: endpoint %s OFF: no token: without one every local user could read "
			"every profile: %s",
			conf->http_listen, how);
		return -EPERM;
	}
	if (!addr->loopback) {
		log_err("http: endpoint %s OFF: insecure_no_auth applies to loopback addresses "
			"only: %s",
			conf->http_listen, how);
		return -EPERM;
	}
	log_warn("http: INSECURE: insecure_no_auth = yes: every local user can read every "
		 "profile (of every user, with kernel function names) from %s without a token",
		 conf->http_listen);
	return 0;
}

/* MHD listening on addr in its external-epoll mode: 0 or a negative errno, logged. */
static int start_mhd(struct httpd *h, const struct config *conf, const struct httpq_addr *addr)
{
	int err;

	/* The logger first: MHD logs through it only from the option after it on. */
	h->d = MHD_start_daemon(
	    MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
		(addr->ipv6 ? MHD_USE_IPv6 : 0),
	    0, NULL, NULL, on_access, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr->ss, MHD_OPTION_CONNECTION_LIMIT,
	    conf->http_max_connections + HTTP_SPARE_CONNS,
	    /* 0: none. Every local client is 127.0.0.1: on loopback a cap by
	     * address would be one user's to fill. */
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, addr->loopback ? 0u : conf->http_max_per_source,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, conf->http_max_connections,
	    MHD_OPTION_CONNECTION_TIMEOUT, conf->http_request_timeout,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, h, MHD_OPTION_END);
	if (!h->d) {
		err = errno ? -errno : -EIO;
		if (err == -EAFNOSUPPORT) /* the unit's RestrictAddressFamilies=AF_UNIX */
			log_err("http: endpoint %s OFF: no network sockets here (%s): under "
				"kprofd.service install the drop-in kprofd-http.conf "
				"($PREFIX/share/kprof/, PREFIX /usr/local by default) as "
				"/etc/systemd/system/kprofd.service.d/http.conf, then "
				"`systemctl daemon-reload && systemctl restart kprofd` "
				"(docs/SERVICE.md); kprofd runs on without the endpoint",
				conf->http_listen, strerror(-err));
		else
			log_err("http: cannot listen on %s: %s", conf->http_listen, strerror(-err));
		return err;
	}
	return 0;
}

/* MHD's epoll fd, its timer and the sweep on the manager's loop (timer and sweep off): 0 or a
 * negative errno, logged. */
static int add_sources(struct httpd *h)
{
	sd_event *event = h->m->event;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	int err;

	if (!di ||
	    (err = sd_event_add_io(event, &h->io, di->epoll_fd, EPOLLIN, on_mhd_io, h)) < 0 ||
	    /* Accuracy 1 us, not sd-event's default 250 ms: MHD asks for a run "now" (timeout 0)
	     * for every step of a request that did not fit its first read buffer. */
	    (err = sd_event_add_time_relative(event, &h->timer, CLOCK_MONOTONIC, NSEC / 1000, 1,
					      on_mhd_timer, h)) < 0 ||
	    (err = sd_event_add_time_relative(event, &h->sweep, CLOCK_MONOTONIC, NSEC / 1000, 0,
					      on_sweep, h)) < 0) {
		err = di ? err : -EIO;
		log_err("http: event sources: %s", strerror(-err));
		return err;
	}
	sd_event_source_set_enabled(h->timer, SD_EVENT_OFF);
	sd_event_source_set_enabled(h->sweep, SD_EVENT_OFF);
	return 0;
}

int httpd_new(struct manager *m, struct httpd **ret)
{
	const struct config *conf = &m->conf;
	struct httpq_addr addr;
	struct httpd *h;
	int err, werr;

	*ret = NULL;
	if (!conf->http_listen[0])
		return 0;
	err = check_listen(conf, &addr);
	if (err < 0)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->m = m;
	h->per_source = !addr.loopback;
	if (check_auth(h, conf, &addr) < 0) {
		httpd_free(h);
		return 0; /* kprofd runs on, the endpoint off */
	}
	err = start_mhd(h, conf, &addr);
	if (err == -EAFNOSUPPORT) {
		httpd_free(h);
		return 0; /* an optional endpoint: the profiler runs on, logged how to enable */
	}
	if (err >= 0)
		err = add_sources(h);
	if (err >= 0 && (werr = worker_new(m->event, HTTP_BUILD_JOBS, &h->worker)) < 0)
		log_warn("http: no build thread (%s): answers are built in the loop",
			 strerror(-werr));
	if (err < 0) {
		httpd_free(h);
		return err;
	}
	log_info("http: pprof endpoint on %s%s", conf->http_listen,
		 h->token_len ? " (bearer token required)" : " (NO AUTHENTICATION)");
	m->http = h;
	http_publish(h);
	*ret = h;
	return 0;
}

void httpd_free(struct httpd *h)
{
	if (!h)
		return;
	if (h->m->http == h)
		h->m->http = NULL;
	if (h->d) {
		/* Waiting profiles are answered, then MHD ends every connection. */
		for (struct http_req *r = h->reqs; r; r = r->next) {
			if (r->answered)
				continue;
			http_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, "kprofd is stopping");
			r->answered = true;
			sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
			sd_event_source_set_enabled(r->gone, SD_EVENT_OFF);
			if (r->stop)
				r->stop(r);
			http_build_forget(r);
			MHD_resume_connection(r->c);
		}
		MHD_run(h->d);
		MHD_stop_daemon(h->d);
	}
	worker_free(h->worker); /* after the requests: a build ending now answers none */
	sd_event_source_disable_unref(h->io);
	sd_event_source_disable_unref(h->timer);
	sd_event_source_disable_unref(h->sweep);
	explicit_bzero(h->token, sizeof(h->token));
	if (!h->m->http) /* it was the endpoint, not one that failed to start */
		memset(&h->m->http_stats, 0, sizeof(h->m->http_stats));
	free(h);
}
