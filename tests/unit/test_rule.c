// SPDX-License-Identifier: GPL-2.0-only
/* test_rule.c: unit tests of watch rules and their file (daemon/lib/rule.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/config.h"
#include "kprof/rule.h"

static int parse(const char *s, struct rule *r)
{
	char err[256];

	return rule_parse(s, strlen(s), r, err, sizeof(err));
}

static void test_parse_kinds(void **state)
{
	struct rule r;
	char t[RULE_TEXT_MAX], c[16];

	(void)state;
	assert_int_equal(parse("comm:node freq=19", &r), 0);
	assert_int_equal(r.kind, RULE_COMM);
	assert_string_equal(r.value, "node");
	assert_int_equal(r.freq, 19);
	assert_false(r.no_jvm_map);
	assert_false(r.children);
	assert_true(rule_comm(&r, c));
	assert_string_equal(c, "node");
	assert_int_equal(parse("  exe:/usr/lib/jvm/bin/a-very-long-java-name\tjvm=off ", &r), 0);
	assert_int_equal(r.kind, RULE_EXE);
	assert_true(r.no_jvm_map);
	assert_true(rule_comm(&r, c));
	assert_string_equal(c, "a-very-long-jav");
	assert_int_equal(parse("uid:0065534", &r), 0);
	assert_int_equal(r.uid, 65534);
	assert_int_equal(rule_format(&r, t, sizeof(t)), (int)strlen("uid:65534"));
	assert_string_equal(t, "uid:65534");
	assert_false(rule_comm(&r, c));
	assert_int_equal(parse("unit:foo@bar.service", &r), 0);
	assert_true(r.children);
	assert_int_equal(parse("cgroup:system.slice/x children=off", &r), 0);
	assert_true(r.children); /* always for cgroups */
	assert_int_equal(parse("comm:sh children=yes freq=4999", &r), 0);
	rule_format(&r, t, sizeof(t));
	assert_string_equal(t, "comm:sh freq=4999 children=on");
	assert_int_equal(parse("exe:/usr/bin/node offcpu=on", &r), 0);
	assert_true(r.off_cpu);
	rule_format(&r, t, sizeof(t));
	assert_string_equal(t, "exe:/usr/bin/node offcpu=on");
	assert_int_equal(parse("comm:x offcpu=off", &r), 0);
	assert_false(r.off_cpu);
	assert_int_not_equal(parse("comm:x offcpu=maybe", &r), 0);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
	    "",
	    "   ",
	    "comm",
	    "comm:",
	    "bogus:x",
	    "comm:abcdefghijklmnop",
	    "comm:a freq=0",
	    "comm:a freq=5000",
	    "comm:a freq=",
	    "comm:a freq=-1",
	    "comm:a jvm=maybe",
	    "comm:a x",
	    "exe:rel/path",
	    "exe:/a/../b",
	    "exe:/a/",
	    "uid:-1",
	    "uid:4294967295",
	    "uid:1x",
	    "uid:99999999999",
	    "cgroup:../x",
	    "cgroup:a/../../b",
	    "unit:foo",
	    "unit:.service",
	    "unit:a/b.service",
	    "unit:a$b.service",
	    "comm:a\"b",
	    "comm:a\x01",
	    "comm:a;b",
	    "comm:a#b",
	};
	struct rule r = {.freq = 77};
	char big[20000];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &r) != -EINVAL)
			fail_msg("accepted: '%s'", bad[i]);
		assert_int_equal(r.freq, 77); /* untouched */
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "comm:", 5);
	assert_int_equal(parse(big, &r), -EINVAL);
	memcpy(big, "exe:/", 5);
	big[300] = '\0';
	assert_int_equal(parse(big, &r), -EINVAL);
	{
		char err[8];

		/* A short error buffer is only cut, and a NUL inside is refused. */
		assert_int_equal(rule_parse("bogus:zzzzzzzzzzz", 17, &r, err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(rule_parse("comm:a\0b", 8, &r, err, sizeof(err)), -EINVAL);
	}
}

static void test_file_roundtrip(void **state)
{
	struct rule_entry e[3], back[8];
	char buf[4096], err[256];
	int len;

	(void)state;
	assert_int_equal(parse("comm:node freq=19", &e[0].rule), 0);
	e[0].owner = 0;
	assert_int_equal(parse("uid:1000 jvm=off", &e[1].rule), 0);
	e[1].owner = 1000;
	assert_int_equal(parse("unit:web.service", &e[2].rule), 0);
	e[2].owner = 0;
	len = rule_file_format(e, 3, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(rule_file_parse(buf, len, back, 8, err, sizeof(err)), 3);
	assert_int_equal(back[1].owner, 1000);
	assert_true(back[1].rule.no_jvm_map);
	assert_string_equal(back[2].rule.value, "web.service");
	/* Empty. */
	len = rule_file_format(e, 0, buf, sizeof(buf));
	assert_int_equal(rule_file_parse(buf, len, back, 8, err, sizeof(err)), 0);
	/* Too small a buffer. */
	assert_int_equal(rule_file_format(e, 3, buf, 40), -ENOSPC);
}

static void test_file_torn(void **state)
{
	struct rule_entry e[2], back[8];
	char buf[4096], err[256];
	int len;

	(void)state;
	parse("comm:node", &e[0].rule);
	parse("exe:/usr/bin/python3", &e[1].rule);
	e[0].owner = e[1].owner = 0;
	len = rule_file_format(e, 2, buf, sizeof(buf));
	/* Every prefix is refused whole; so is any byte changed. */
	for (int n = 0; n < len; n++)
		assert_true(rule_file_parse(buf, n, back, 8, err, sizeof(err)) < 0);
	for (int i = 0; i < len; i++) {
		char c = buf[i];

		buf[i] ^= 0x01;
		assert_true(rule_file_parse(buf, len, back, 8, err, sizeof(err)) < 0);
		buf[i] = c;
	}
	assert_int_equal(rule_file_parse(buf, len, back, 1, err, sizeof(err)), -EBADMSG);
	assert_int_equal(rule_file_parse("hello\n", 6, back, 8, err, sizeof(err)), -EBADMSG);
}

static void test_config_watch(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.max_auto_targets, 128);
	assert_int_equal(config_parse("[watch]\nrule = comm:node freq=19\nrule = uid:1000\n"
				      "[limits]\nmax_auto_targets = 5\n",
				      "k.conf", &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.n_watch_rules, 2);
	assert_int_equal(c.watch_rules[0].freq, 19);
	assert_int_equal(c.max_auto_targets, 5);
	assert_int_equal(config_parse("[watch]\nrule = comm:\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "k.conf:2: watch.rule"));
	assert_int_equal(c.n_watch_rules, 2); /* untouched */
	assert_int_equal(config_parse("[watch]\nfoo = 1\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_kinds),	   cmocka_unit_test(test_parse_bad),
	    cmocka_unit_test(test_file_roundtrip), cmocka_unit_test(test_file_torn),
	    cmocka_unit_test(test_config_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
