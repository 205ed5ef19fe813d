/* SPDX-License-Identifier: GPL-2.0-only */
/* httpq.h: the pure parts of kprofd's pprof HTTP endpoint (httpq.c): the listen address of
 * [http] listen, the query of /debug/pprof/profile, the bearer token check. No I/O. */
#ifndef KPROF_HTTPQ_H
#define KPROF_HTTPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define HTTPQ_DEFAULT_SECONDS 30 /* Go's net/http/pprof default */
#define HTTPQ_MAX_ARGS 16
#define HTTPQ_MAX_QUERY 2048 /* bytes of all keys and values together */
#define HTTPQ_MAX_TOKEN 1024

struct httpq_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool ipv6, loopback;
};

/* "HOST:PORT" or "[V6]:PORT", HOST a numeric address (no name lookups), PORT 1-65535.
 * 0 or -EINVAL with err saying why. */
int httpq_listen(const char *s, struct httpq_addr *a, char *err, size_t errlen);

/* type=: which sample type the profile shows first. cpu (the default) is the CPU samples alone
 * (samples/count, cpu/nanoseconds); off_cpu and wall answer with the four types of an off-CPU
 * profile (samples, cpu, off_cpu, wall, as kprofctl export --off-cpu writes), that one the
 * default_sample_type. */
enum httpq_type { HTTPQ_TYPE_CPU, HTTPQ_TYPE_OFF_CPU, HTTPQ_TYPE_WALL };

struct httpq {
	unsigned seconds;
	enum httpq_type type;
	pid_t pid;		   /* 0: none */
	char unit[256];		   /* "": none */
	char cgroup[256];	   /* a cgroup v2 path: it and the cgroups under it; "": none */
	char comm[16];		   /* a process name (comm); "": none */
	char since[64], until[64]; /* a time range of kept windows (when.h syntax); "": none */
	unsigned nargs;
	size_t bytes;
};

/* Before the first argument. */
void httpq_init(struct httpq *q);
/* One decoded query argument of /debug/pprof/profile (value NULL for "?key"). 0, or -EINVAL
 * (a bad value, too many or too long arguments) with err saying why, for a 400. Unknown keys
 * are ignored, as Go's net/http/pprof does (scrapers add their own). since=/until= take
 * kprofctl's times (when.h): then the answer is the kept windows of that range at once, and
 * seconds= does not apply. */
int httpq_arg(struct httpq *q, const char *key, const char *value, unsigned max_seconds, char *err,
	      size_t errlen);
/* After the last argument: since=/until= need pid= or unit= (a range is one target's or one
 * watch's). 0 or -EINVAL with err. Without pid=, unit=, cgroup= or comm=, a profile covers
 * every target; with several, the targets that match them all. */
int httpq_check(const struct httpq *q, char *err, size_t errlen);

/* The cgroup v2 path ("0::/PATH") of a /proc/PID/cgroup text into out: 0, or -ENOENT (none:
 * cgroup v1 only) or -ENAMETOOLONG. */
int httpq_cgroup_path(const char *text, size_t len, char *out, size_t outlen);
/* The systemd unit of a cgroup path: its innermost component naming a unit (.service, .scope,
 * .socket, .mount, .swap, .timer), "" if none. */
void httpq_unit_of(const char *cgroup, char *out, size_t outlen);
/* Whether cgroup is path or a cgroup under it. */
bool httpq_cgroup_under(const char *cgroup, const char *path);

/* The Authorization header (NULL if none) against the token, "Bearer TOKEN", in time that does
 * not depend on where they differ. */
bool httpq_bearer_ok(const char *header, const char *token, size_t token_len);

/* The token file's text: trailing white space cut, then 16 to HTTPQ_MAX_TOKEN printable
 * characters without spaces. Returns its length, or -EINVAL with err. */
int httpq_token(const char *text, size_t len, char *err, size_t errlen);

#endif
