// SPDX-License-Identifier: GPL-2.0-only
/* httpq.c: what kprofd's pprof endpoint decides without I/O (see kprof/httpq.h).
 *
 * The listen address is numeric only: a name would need a resolver in the daemon, and whether
 * it is loopback (no token needed) must not depend on DNS. The query of a profile is checked
 * key by key against a short list, every value fully parsed and bounded, so that a client gets
 * a 400 naming what is wrong instead of a profile it did not ask for; keys it does not know are
 * ignored, as Go's net/http/pprof does. The token comparison looks at every byte whatever the
 * first difference. The cgroup helpers turn /proc/PID/cgroup text into the labels and filters
 * of a whole-host profile.
 */
#include "kprof/httpq.h"
#include "kprof/when.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The numeric address host (of the text s) and port p into a, as a->ipv6 says. */
static int listen_addr(const char *s, const char *host, unsigned long p, struct httpq_addr *a,
		       char *err, size_t errlen)
{
	if (a->ipv6) {
		struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&a->ss;

		if (inet_pton(AF_INET6, host, &sa->sin6_addr) != 1) {
			snprintf(err, errlen, "'%s': '%s' is not a numeric IPv6 address", s, host);
			return -EINVAL;
		}
		sa->sin6_family = AF_INET6;
		sa->sin6_port = htons(p);
		a->len = sizeof(*sa);
		a->loopback = IN6_IS_ADDR_LOOPBACK(&sa->sin6_addr);
	} else {
		struct sockaddr_in *sa = (struct sockaddr_in *)&a->ss;

		if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
			snprintf(err, errlen, "'%s': '%s' is not a numeric IPv4 address", s, host);
			return -EINVAL;
		}
		sa->sin_family = AF_INET;
		sa->sin_port = htons(p);
		a->len = sizeof(*sa);
		a->loopback = (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

int httpq_listen(const char *s, struct httpq_addr *a, char *err, size_t errlen)
{
	char host[64];
	const char *colon, *h = s, *port;
	size_t hlen;
	unsigned long p;
	char *end;

	memset(a, 0, sizeof(*a));
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':') {
			snprintf(err, errlen, "'%s': expected [IPV6]:PORT", s);
			return -EINVAL;
		}
		h = s + 1;
		hlen = rb - h;
		port = rb + 2;
		a->ipv6 = true;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) {
			snprintf(err, errlen, "'%s': expected ADDRESS:PORT (IPv6 in brackets)", s);
			return -EINVAL;
		}
		hlen = colon - s;
		port = colon + 1;
	}
	if (!hlen || hlen >= sizeof(host)) {
		snprintf(err, errlen, "'%s': no address before the port", s);
		return -EINVAL;
	}
	memcpy(host, h, hlen);
	host[hlen] = 0;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || end == port || *end || port[0] == '-' || p < 1 || p > 65535) {
		snprintf(err, errlen, "'%s': the port must be a number in 1-65535", s);
		return -EINVAL;
	}
	return listen_addr(s, host, p, a, err, errlen);
}

void httpq_init(struct httpq *q)
{
	memset(q, 0, sizeof(*q));
	q->seconds = HTTPQ_DEFAULT_SECONDS;
}

/* A decimal number in [lo, hi], nothing else. */
static int parse_num(const char *v, unsigned long lo, unsigned long hi, unsigned long *ret)
{
	unsigned long n;
	char *end;

	if (!v || !v[0] || v[0] < '0' || v[0] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -EINVAL;
	*ret = n;
	return 0;
}

int httpq_arg(struct httpq *q, const char *key, const char *value, unsigned max_seconds, char *err,
	      size_t errlen)
{
	unsigned long n;

	q->bytes += strlen(key) + (value ? strlen(value) : 0);
	if (++q->nargs > HTTPQ_MAX_ARGS || q->bytes > HTTPQ_MAX_QUERY) {
		snprintf(err, errlen, "query too long: at most %d arguments, %d bytes",
			 HTTPQ_MAX_ARGS, HTTPQ_MAX_QUERY);
		return -EINVAL;
	}
	if (!strcmp(key, "seconds")) {
		if (parse_num(value, 1, max_seconds, &n) < 0) {
			snprintf(err, errlen, "seconds must be a whole number in 1-%u",
				 max_seconds);
			return -EINVAL;
		}
		q->seconds = n;
		return 0;
	}
	if (!strcmp(key, "pid")) {
		if (parse_num(value, 1, 4194304, &n) < 0) {
			snprintf(err, errlen, "pid must be a process id (1-4194304)");
			return -EINVAL;
		}
		q->pid = n;
		return 0;
	}
	if (!strcmp(key, "unit") || !strcmp(key, "cgroup") || !strcmp(key, "comm")) {
		char *dst = key[0] == 'u' ? q->unit : key[1] == 'g' ? q->cgroup : q->comm;
		size_t cap = key[0] == 'u' ? sizeof(q->unit) : key[1] == 'g' ? sizeof(q->cgroup) :
					    sizeof(q->comm);
		size_t len = value ? strlen(value) : 0;

		if (!len || len >= cap || (key[1] == 'g' && value[0] != '/')) {
			snprintf(err, errlen, "%s must be %s (1-%zu bytes)", key,
				 key[0] == 'u'	 ? "a unit or a watched cgroup"
				 : key[1] == 'g' ? "a cgroup path from the cgroup2 root (/...)"
						 : "a process name",
				 cap - 1);
			return -EINVAL;
		}
		memcpy(dst, value, len + 1);
		return 0;
	}
	if (!strcmp(key, "type")) {
		static const char *const names[] = {"cpu", "off_cpu", "wall"};

		for (size_t i = 0; value && i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(value, names[i])) {
				q->type = (enum httpq_type)i;
				return 0;
			}
		snprintf(err, errlen, "type must be cpu, off_cpu or wall");
		return -EINVAL;
	}
	if (!strcmp(key, "since") || !strcmp(key, "until")) {
		char *dst = key[0] == 's' ? q->since : q->until;
		uint64_t t;

		/* The syntax only (in UTC); the caller converts with the present and local time. */
		if (!value || strlen(value) >= sizeof(q->since) ||
		    when_parse(value, UINT64_C(4000000000) * 1000000000, timegm, &t) == -EINVAL) {
			snprintf(err, errlen,
				 "%s= is not a time (10m, 2h, @EPOCH, 2026-11-24T11:05:00Z, now)",
				 key);
			return -EINVAL;
		}
		strcpy(dst, value);
		return 0;
	}
	return 0; /* unknown: ignored */
}

int httpq_check(const struct httpq *q, char *err, size_t errlen)
{
	if ((q->since[0] || q->until[0]) && !q->pid == !q->unit[0]) {
		snprintf(err, errlen,
			 "since=/until= need exactly one of pid= and unit= (GET "
			 "/debug/pprof/targets lists them)");
		return -EINVAL;
	}
	return 0;
}

int httpq_cgroup_path(const char *text, size_t len, char *out, size_t outlen)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = (nl ? nl : end) - p;

		if (n >= 3 && !memcmp(p, "0::", 3)) {
			if (n - 3 >= outlen)
				return -ENAMETOOLONG;
			memcpy(out, p + 3, n - 3);
			out[n - 3] = 0;
			return 0;
		}
		p += n + 1;
	}
	return -ENOENT;
}

void httpq_unit_of(const char *cgroup, char *out, size_t outlen)
{
	static const char *const kinds[] = {".service", ".scope",	".socket",
					    ".mount",	".swap",	".timer"};
	const char *best = NULL, *p = cgroup;
	size_t best_len = 0;

	while (p && *p) {
		const char *c = *p == '/' ? p + 1 : p, *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			size_t k = strlen(kinds[i]);

			if (n > k && !memcmp(c + n - k, kinds[i], k)) {
				best = c;
				best_len = n;
			}
		}
		p = slash;
	}
	if (!outlen)
		return;
	if (best_len >= outlen)
		best_len = 0; /* too long for out: none rather than a cut name */
	memcpy(out, best ? best : "", best_len);
	out[best_len] = 0;
}

bool httpq_cgroup_under(const char *cgroup, const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 1 && path[0] == '/')
		return cgroup[0] == '/';
	return !strncmp(cgroup, path, n) && (cgroup[n] == 0 || cgroup[n] == '/');
}

bool httpq_bearer_ok(const char *header, const char *token, size_t token_len)
{
	static const char prefix[] = "Bearer ";
	unsigned char diff = 0;
	size_t hlen;

	if (!header || strncasecmp(header, prefix, sizeof(prefix) - 1))
		return false;
	header += sizeof(prefix) - 1;
	hlen = strlen(header);
	/* Compare token_len bytes whatever the header's length; a different length fails. */
	for (size_t i = 0; i < token_len; i++)
		diff |= (unsigned char)(i < hlen ? header[i] : 0) ^ (unsigned char)token[i];
	return !diff && hlen == token_len;
}

int httpq_token(const char *text, size_t len, char *err, size_t errlen)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
		       text[len - 1] == '\t'))
		len--;
	if (len < 16 || len > HTTPQ_MAX_TOKEN) {
		snprintf(err, errlen, "the token must be 16-%d characters, not %zu",
			 HTTPQ_MAX_TOKEN, len);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] <= ' ' || text[i] > '~') {
			snprintf(err, errlen,
				 "the token must be printable ASCII without spaces (byte %zu)", i);
			return -EINVAL;
		}
	}
	return (int)len;
}
