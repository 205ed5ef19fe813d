// SPDX-License-Identifier: GPL-2.0-only
/* test_httpq.c: the pure parts of the pprof endpoint (daemon/lib/httpq.c): listen addresses,
 * profile queries (good, bad, hostile), bearer tokens and token files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/httpq.h"

static void test_listen(void **state)
{
	struct httpq_addr a;
	char err[256];

	(void)state;
	assert_int_equal(httpq_listen("127.0.0.1:6060", &a, err, sizeof(err)), 0);
	assert_true(a.loopback);
	assert_false(a.ipv6);
	assert_int_equal(httpq_listen("127.1.2.3:1", &a, err, sizeof(err)), 0);
	assert_true(a.loopback);
	assert_int_equal(httpq_listen("0.0.0.0:6060", &a, err, sizeof(err)), 0);
	assert_false(a.loopback);
	assert_int_equal(httpq_listen("10.1.2.3:65535", &a, err, sizeof(err)), 0);
	assert_false(a.loopback);
	assert_int_equal(httpq_listen("[::1]:6060", &a, err, sizeof(err)), 0);
	assert_true(a.loopback && a.ipv6);
	assert_int_equal(httpq_listen("[::]:6060", &a, err, sizeof(err)), 0);
	assert_false(a.loopback);
	const char *bad[] = {"",
			     "6060",
			     "localhost:6060",
			     "127.0.0.1",
			     "127.0.0.1:0",
			     "127.0.0.1:65536",
			     "127.0.0.1:-1",
			     "::1:6060",
			     "[::1]6060",
			     "[::1]:",
			     ":6060",
			     "127.0.0.1:60x",
			     "[zz]:1",
			     "1.2.3.4.5:1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(httpq_listen(bad[i], &a, err, sizeof(err)), -EINVAL);
}

static void test_query(void **state)
{
	struct httpq q;
	char err[256], big[HTTPQ_MAX_QUERY + 100];

	(void)state;
	httpq_init(&q);
	assert_int_equal(q.seconds, HTTPQ_DEFAULT_SECONDS);
	assert_int_equal(httpq_check(&q, err, sizeof(err)), 0); /* no selector: every target */
	assert_int_equal(httpq_arg(&q, "seconds", "3", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_arg(&q, "pid", "4242", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_check(&q, err, sizeof(err)), 0);
	assert_int_equal(q.seconds, 3);
	assert_int_equal(q.pid, 4242);
	assert_int_equal(httpq_arg(&q, "unit", "x.service", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_check(&q, err, sizeof(err)), 0); /* both: the targets of both */
	assert_int_equal(httpq_arg(&q, "since", "10m", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_check(&q, err, sizeof(err)), -EINVAL); /* a range: one of them */
	httpq_init(&q);
	assert_int_equal(httpq_arg(&q, "cgroup", "/system.slice", 300, err, sizeof(err)), 0);
	assert_string_equal(q.cgroup, "/system.slice");
	assert_int_equal(httpq_arg(&q, "cgroup", "system.slice", 300, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_arg(&q, "comm", "node", 300, err, sizeof(err)), 0);
	assert_string_equal(q.comm, "node");
	assert_int_equal(httpq_arg(&q, "comm", "0123456789abcdef", 300, err, sizeof(err)), -EINVAL);

	const char *bad_seconds[] = {"0",  "-1", "100000", "301", "",
				     "3s", " 3", "+3",	   "1e3", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad_seconds) / sizeof(*bad_seconds); i++) {
		httpq_init(&q);
		assert_int_equal(httpq_arg(&q, "seconds", bad_seconds[i], 300, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "1-300"));
	}
	httpq_init(&q);
	assert_int_equal(httpq_arg(&q, "seconds", NULL, 300, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_arg(&q, "pid", "0", 300, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_arg(&q, "pid", "abc", 300, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_arg(&q, "unit", "", 300, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_arg(&q, "since", "10m", 300, err, sizeof(err)), 0);
	assert_string_equal(q.since, "10m");
	assert_int_equal(httpq_arg(&q, "until", "@1700000000", 300, err, sizeof(err)), 0);
	assert_string_equal(q.until, "@1700000000");
	assert_int_equal(httpq_arg(&q, "since", "garbage", 300, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "since= is not a time"));
	assert_int_equal(httpq_arg(&q, "until", NULL, 300, err, sizeof(err)), -EINVAL);
	/* type=: cpu (the default), off_cpu or wall, nothing else */
	httpq_init(&q);
	assert_int_equal(q.type, HTTPQ_TYPE_CPU);
	assert_int_equal(httpq_arg(&q, "type", "off_cpu", 300, err, sizeof(err)), 0);
	assert_int_equal(q.type, HTTPQ_TYPE_OFF_CPU);
	assert_int_equal(httpq_arg(&q, "type", "wall", 300, err, sizeof(err)), 0);
	assert_int_equal(q.type, HTTPQ_TYPE_WALL);
	assert_int_equal(httpq_arg(&q, "type", "cpu", 300, err, sizeof(err)), 0);
	assert_int_equal(q.type, HTTPQ_TYPE_CPU);
	const char *bad_types[] = {"", "offcpu", "WALL", "wall ", "off_cpu,wall"};
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(*bad_types); i++) {
		assert_int_equal(httpq_arg(&q, "type", bad_types[i], 300, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "cpu, off_cpu or wall"));
	}
	assert_int_equal(httpq_arg(&q, "type", NULL, 300, err, sizeof(err)), -EINVAL);
	httpq_init(&q); /* unknown keys are ignored, as Go's net/http/pprof does */
	assert_int_equal(httpq_arg(&q, "debug", "1", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_arg(&q, "gc", NULL, 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_check(&q, err, sizeof(err)), 0);

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	httpq_init(&q);
	assert_int_equal(httpq_arg(&q, "unit", big, 300, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "query too long"));
	httpq_init(&q);
	for (int i = 0; i < HTTPQ_MAX_ARGS; i++)
		assert_int_equal(httpq_arg(&q, "seconds", "1", 300, err, sizeof(err)), 0);
	assert_int_equal(httpq_arg(&q, "seconds", "1", 300, err, sizeof(err)), -EINVAL);
}

static void test_cgroup(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(httpq_cgroup_path("0::/system.slice/a.service\n", 27, out, sizeof(out)), 0);
	assert_string_equal(out, "/system.slice/a.service");
	assert_int_equal(httpq_cgroup_path("12:cpu:/x\n0::/\n", 15, out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(httpq_cgroup_path("12:cpu:/x\n", 10, out, sizeof(out)), -ENOENT);
	assert_int_equal(httpq_cgroup_path("0::/aaaaaaaaaa", 14, out, 5), -ENAMETOOLONG);
	httpq_unit_of("/system.slice/nginx.service", out, sizeof(out));
	assert_string_equal(out, "nginx.service");
	httpq_unit_of("/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope", out,
		      sizeof(out));
	assert_string_equal(out, "x.scope");
	httpq_unit_of("/user.slice/user-1000.slice/session-3.scope/sub", out, sizeof(out));
	assert_string_equal(out, "session-3.scope");
	httpq_unit_of("/kprof-test/.service", out, sizeof(out));
	assert_string_equal(out, "");
	httpq_unit_of("/", out, sizeof(out));
	assert_string_equal(out, "");
	httpq_unit_of("/a/averyveryverylongname.service", out, 8);
	assert_string_equal(out, "");
	assert_true(httpq_cgroup_under("/system.slice/a.service", "/system.slice"));
	assert_true(httpq_cgroup_under("/system.slice", "/system.slice/"));
	assert_false(httpq_cgroup_under("/system.slice2", "/system.slice"));
	assert_true(httpq_cgroup_under("/x", "/"));
}

static void test_token(void **state)
{
	const char *tok = "0123456789abcdef";
	char err[256];

	(void)state;
	assert_true(httpq_bearer_ok("Bearer 0123456789abcdef", tok, 16));
	assert_true(httpq_bearer_ok("bearer 0123456789abcdef", tok, 16));
	assert_false(httpq_bearer_ok(NULL, tok, 16));
	assert_false(httpq_bearer_ok("", tok, 16));
	assert_false(httpq_bearer_ok("Basic 0123456789abcdef", tok, 16));
	assert_false(httpq_bearer_ok("Bearer 0123456789abcdeX", tok, 16));
	assert_false(httpq_bearer_ok("Bearer 0123456789abcde", tok, 16));
	assert_false(httpq_bearer_ok("Bearer 0123456789abcdef0", tok, 16));
	assert_int_equal(httpq_token("0123456789abcdef\n", 17, err, sizeof(err)), 16);
	assert_int_equal(httpq_token("short\n", 6, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_token("0123456789 abcdef", 17, err, sizeof(err)), -EINVAL);
	assert_int_equal(httpq_token("", 0, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listen),
	    cmocka_unit_test(test_query),
	    cmocka_unit_test(test_token),
	    cmocka_unit_test(test_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
