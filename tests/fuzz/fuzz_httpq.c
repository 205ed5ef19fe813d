// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_httpq.c: libFuzzer target for the pure parts of the pprof HTTP endpoint
 * (daemon/lib/httpq.c): the Authorization header's bearer check, the token file's text, the
 * listen address and the query arguments.
 *
 * The input, as a string, is the Authorization header: httpq_bearer_ok must accept exactly
 * "Bearer " (any case) followed by the token, nothing more or less. It is also a token file
 * (a token accepted is printable, within bounds, and then matches itself as a header), a listen
 * address (one that parses has a length and family that agree), and a query split at '&' and
 * '=' (arguments accepted are in their bounds and terminated), and a /proc/PID/cgroup text (the
 * path, its systemd unit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <stdio.h>
#include <strings.h>

#include "fuzz.h"
#include "kprof/httpq.h"

static const char token[] = "s3cret-Token_0123456789";

/* The reference: the bearer check without the constant-time trick. */
static int bearer_ref(const char *h)
{
	return !strncasecmp(h, "Bearer ", 7) && !strcmp(h + 7, token);
}

static void check_args(char *s)
{
	struct httpq q;
	char err[320];
	char *save = NULL;

	httpq_init(&q);
	for (char *kv = strtok_r(s, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		if (eq)
			*eq = 0;
		if (httpq_arg(&q, kv, eq ? eq + 1 : NULL, 300, err, sizeof(err)) < 0) {
			FUZZ_CHECK(err[0] && memchr(err, 0, sizeof(err)), "no reason");
			return;
		}
		FUZZ_CHECK(q.seconds >= 1 && q.seconds <= 300, "seconds %u", q.seconds);
		FUZZ_CHECK(q.pid >= 0 && q.pid <= 4194304, "pid %d", (int)q.pid);
		FUZZ_CHECK(memchr(q.unit, 0, sizeof(q.unit)) && memchr(q.since, 0, sizeof(q.since)) &&
			       memchr(q.until, 0, sizeof(q.until)),
			   "not terminated");
		FUZZ_CHECK(q.nargs <= HTTPQ_MAX_ARGS && q.bytes <= HTTPQ_MAX_QUERY, "bounds");
	}
	/* No selector: the whole host; a range needs exactly one of pid= and unit=. */
	if (httpq_check(&q, err, sizeof(err)) == 0 && (q.since[0] || q.until[0]))
		FUZZ_CHECK(!q.pid != !q.unit[0], "selector of a range");
}

/* /proc/PID/cgroup text: a path found is terminated and within bounds; its unit is one of its
 * components; a path is under itself. */
static void check_cgroup(const uint8_t *data, size_t size)
{
	char cg[256], unit[64];

	if (httpq_cgroup_path((const char *)data, size, cg, sizeof(cg)) < 0)
		return;
	FUZZ_CHECK(memchr(cg, 0, sizeof(cg)) != NULL, "path not terminated");
	httpq_unit_of(cg, unit, sizeof(unit));
	FUZZ_CHECK(memchr(unit, 0, sizeof(unit)) != NULL, "unit not terminated");
	FUZZ_CHECK(!unit[0] || strstr(cg, unit), "unit '%s' not in '%s'", unit, cg);
	FUZZ_CHECK(!cg[0] || httpq_cgroup_under(cg, cg), "'%s' not under itself", cg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), why[160];
	struct httpq_addr a;
	int len;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	FUZZ_CHECK(httpq_bearer_ok(s, token, strlen(token)) == bearer_ref(s), "bearer '%s'", s);
	len = httpq_token((const char *)data, size, why, sizeof(why));
	if (len >= 0) {
		char t[HTTPQ_MAX_TOKEN + 1], h[HTTPQ_MAX_TOKEN + 8];

		FUZZ_CHECK(len >= 16 && len <= HTTPQ_MAX_TOKEN && (size_t)len <= size, "len %d", len);
		for (int i = 0; i < len; i++)
			FUZZ_CHECK(data[i] > ' ' && data[i] <= '~', "byte %d", i);
		memcpy(t, data, len);
		t[len] = 0;
		snprintf(h, sizeof(h), "bearer %s", t);
		FUZZ_CHECK(httpq_bearer_ok(h, t, len), "own token refused");
		h[strlen(h) - 1] ^= 1;
		FUZZ_CHECK(!httpq_bearer_ok(h, t, len), "changed token accepted");
	}
	if (httpq_listen(s, &a, why, sizeof(why)) == 0)
		FUZZ_CHECK(a.ipv6 ? a.len == sizeof(struct sockaddr_in6) &&
					a.ss.ss_family == AF_INET6
				  : a.len == sizeof(struct sockaddr_in) && a.ss.ss_family == AF_INET,
			   "address");
	check_args(s);
	check_cgroup(data, size);
	free(s);
	return 0;
}
