// SPDX-License-Identifier: GPL-2.0-only
/* test_hsattach.c: HotSpot attach protocol bytes (daemon/lib/hsattach.c): the request jcmd
 * sends, replies as JDK 17 writes them and as a broken or hostile peer could, flags in VM.flags
 * output and command lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/hsattach.h"

static void test_request(void **state)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0"; /* + the literal's NUL */
	char buf[HSATTACH_REQUEST_MAX], big[HSATTACH_ARG_MAX + 2];

	(void)state;
	assert_int_equal(hsattach_request(buf, sizeof(buf), "jcmd", "Compiler.perfmap", NULL, NULL),
			 sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	/* Exactly the room needed is enough; one byte less is not. */
	assert_int_equal(hsattach_request(buf, sizeof(want), "jcmd", "Compiler.perfmap", "", ""),
			 sizeof(want));
	assert_int_equal(
	    hsattach_request(buf, sizeof(want) - 1, "jcmd", "Compiler.perfmap", "", ""), -ENOSPC);
	assert_int_equal(hsattach_request(buf, sizeof(buf), "jcmd", "VM.flags", "a", "b"), 20);
	assert_memory_equal(buf, "1\0jcmd\0VM.flags\0a\0b\0", 20);
	/* HotSpot's limits: a name of 16 bytes, arguments of 1024. */
	assert_int_equal(hsattach_request(buf, sizeof(buf), "0123456789abcdefg", NULL, NULL, NULL),
			 -ENAMETOOLONG);
	assert_int_equal(hsattach_request(buf, sizeof(buf), "", NULL, NULL, NULL), -ENAMETOOLONG);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(hsattach_request(buf, sizeof(buf), "jcmd", big, NULL, NULL),
			 -ENAMETOOLONG);
	big[HSATTACH_ARG_MAX] = '\0';
	assert_int_equal(hsattach_request(buf, sizeof(buf), "jcmd", big, big, big),
			 2 + 5 + 3 * (HSATTACH_ARG_MAX + 1));
}

static void test_reply(void **state)
{
	static const char ok[] = "0\n", flags[] = "0\n-XX:CICompilerCount=2 -XX:+UseSerialGC\n";
	static const char err[] = "-1\njava.lang.IllegalArgumentException: Unknown diagnostic "
				  "command\n";
	struct hsattach_reply r;

	(void)state;
	assert_int_equal(hsattach_reply(ok, 2, &r), 0);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.text_len, 0);
	assert_int_equal(hsattach_reply(flags, sizeof(flags) - 1, &r), 0);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.text_len, sizeof(flags) - 3);
	assert_ptr_equal(r.text, flags + 2);
	assert_int_equal(hsattach_reply(err, sizeof(err) - 1, &r), 0);
	assert_int_equal(r.code, -1);
	assert_true(r.text_len > 0 && r.text[0] == 'j');
	assert_int_equal(hsattach_reply("2147483647\n", 11, &r), 0);
	assert_int_equal(r.code, 2147483647);
	assert_int_equal(hsattach_reply("-2147483648\n", 12, &r), 0);
	assert_int_equal(r.code, -2147483647 - 1);
	/* Closed without a word (credentials refused), cut, or not a code. */
	assert_int_equal(hsattach_reply("", 0, &r), -ENODATA);
	assert_int_equal(hsattach_reply("0", 1, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("-\n", 2, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("\n", 1, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("x\n", 2, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("0 \n", 3, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("2147483648\n", 11, &r), -EBADMSG);
	assert_int_equal(hsattach_reply("99999999999999999999\n", 21, &r), -EBADMSG);
	/* The length is the caller's: a NUL is just a byte, nothing is read past len. */
	assert_int_equal(hsattach_reply("0\n\0x", 4, &r), 0);
	assert_int_equal(r.text_len, 2);
	for (size_t i = 0; i < sizeof(err) - 1; i++) {
		char *cut = malloc(i ? i : 1);
		int rc;

		memcpy(cut, err, i);
		rc = hsattach_reply(cut, i, &r);
		assert_true(rc == (i == 0 ? -ENODATA : i < 3 ? -EBADMSG : 0));
		free(cut);
	}
}

static void test_flag(void **state)
{
	/* VM.flags output on one line, a command line with NULs, JAVA_TOOL_OPTIONS. */
	static const char vmflags[] = "-XX:CICompilerCount=2 -XX:+PreserveFramePointer "
				      "-XX:+UseSerialGC\n";
	static const char cmdline[] = "java\0-XX:+PreserveFramePointer\0-XX:-PreserveFramePointer"
				      "\0Hot";
	static const char tricky[] = "-XX:+PreserveFramePointerX -XX:+Preserve "
				     "--XX:+PreserveFramePointer -XX:=PreserveFramePointer "
				     "-Dx=-XX:+PreserveFramePointer";

	(void)state;
	assert_int_equal(hsattach_flag(vmflags, sizeof(vmflags) - 1, "PreserveFramePointer"), 1);
	assert_int_equal(hsattach_flag(vmflags, sizeof(vmflags) - 1, "UseSerialGC"), 1);
	assert_int_equal(hsattach_flag(vmflags, sizeof(vmflags) - 1, "UseG1GC"), -ENOENT);
	/* The last mention wins, as in the JVM. */
	assert_int_equal(hsattach_flag(cmdline, sizeof(cmdline) - 1, "PreserveFramePointer"), 0);
	assert_int_equal(hsattach_flag(cmdline, 30, "PreserveFramePointer"), 1);
	/* Cut inside the flag: not there. */
	assert_int_equal(hsattach_flag(cmdline, 29, "PreserveFramePointer"), -ENOENT);
	assert_int_equal(hsattach_flag(tricky, sizeof(tricky) - 1, "PreserveFramePointer"),
			 -ENOENT);
	assert_int_equal(hsattach_flag("", 0, "PreserveFramePointer"), -ENOENT);
}

static void test_getenv_libjvm(void **state)
{
	static const char env[] = "PATH=/bin\0JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer\0"
				  "JAVA=\0X";
	const char *v;
	size_t n;

	(void)state;
	assert_int_equal(hsattach_getenv(env, sizeof(env) - 1, "JAVA_TOOL_OPTIONS", &v, &n), 0);
	assert_int_equal(n, strlen("-XX:+PreserveFramePointer"));
	assert_memory_equal(v, "-XX:+PreserveFramePointer", n);
	assert_int_equal(hsattach_getenv(env, sizeof(env) - 1, "JAVA", &v, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(hsattach_getenv(env, sizeof(env) - 1, "JAVA_TOOL", &v, &n), -ENOENT);
	assert_int_equal(hsattach_getenv(env, sizeof(env) - 1, "X", &v, &n), -ENOENT);
	/* Cut in the middle of the value: what is there. */
	assert_int_equal(hsattach_getenv(env, 30, "JAVA_TOOL_OPTIONS", &v, &n), 0);
	assert_int_equal(n, 2);
	assert_true(hsattach_is_libjvm("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"));
	assert_true(hsattach_is_libjvm("/opt/jdk/lib/server/libjvm.so (deleted)"));
	assert_true(hsattach_is_libjvm("libjvm.so"));
	assert_false(hsattach_is_libjvm("/opt/jdk/lib/server/libjvm.so.bak"));
	assert_false(hsattach_is_libjvm("/opt/libjvm.so/x"));
	assert_false(hsattach_is_libjvm(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_request),
	    cmocka_unit_test(test_reply),
	    cmocka_unit_test(test_flag),
	    cmocka_unit_test(test_getenv_libjvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
