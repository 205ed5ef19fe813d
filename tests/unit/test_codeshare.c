// SPDX-License-Identifier: GPL-2.0-only
/* test_codeshare.c: the copies of file-backed code shared by a owner's targets
 * (daemon/lib/codeshare.c) alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/codeshare.h"

static struct codeshare_key key(uid_t uid, uint64_t ino, uint64_t off, uint32_t len)
{
	return (struct codeshare_key){
	    .uid = uid, .dev = 8ULL << 32 | 1, .ino = ino, .off = off, .len = len};
}

/* A key put once is found with its bytes (a copy: the caller's buffer may change); another
 * owner, file, offset or length is another key; each get and put takes a reference and the
 * entry goes with the last one. */
static void test_share(void **state)
{
	struct codeshare *cs;
	struct codeshare_stats st;
	struct codeshare_key k = key(1000, 42, 0x1000, 16), o;
	uint8_t buf[16];
	const uint8_t *a, *b;

	(void)state;
	assert_int_equal(codeshare_new(0, &cs), 0);
	for (int i = 0; i < 16; i++)
		buf[i] = (uint8_t)(0x90 + i);
	assert_null(codeshare_get(cs, &k));
	a = codeshare_put(cs, &k, buf);
	assert_non_null(a);
	assert_ptr_not_equal(a, buf);
	buf[0] = 0xcc;
	assert_int_equal(a[0], 0x90);
	assert_int_equal(a[15], 0x9f);
	b = codeshare_get(cs, &k);
	assert_ptr_equal(a, b);
	assert_ptr_equal(codeshare_put(cs, &k, buf), a); /* put of a held key: the held copy */
	assert_int_equal(a[0], 0x90);
	o = k, o.uid = 1001;
	assert_null(codeshare_get(cs, &o));
	o = k, o.ino = 43;
	assert_null(codeshare_get(cs, &o));
	o = k, o.off = 0x1001;
	assert_null(codeshare_get(cs, &o));
	o = k, o.len = 15;
	assert_null(codeshare_get(cs, &o));
	o = k, o.dev = 9;
	assert_null(codeshare_get(cs, &o));
	codeshare_get_stats(cs, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.refs, 3);
	assert_int_equal(st.hits, 1);
	assert_true(st.bytes >= 16);
	codeshare_unref(cs, a);
	codeshare_unref(cs, b);
	assert_ptr_equal(codeshare_get(cs, &k), a);
	codeshare_unref(cs, a);
	codeshare_unref(cs, a);
	codeshare_get_stats(cs, &st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.refs, 0);
	assert_int_equal(st.bytes, 0);
	assert_null(codeshare_get(cs, &k));
	o = k, o.len = 0;
	assert_null(codeshare_put(cs, &o, buf));
	codeshare_free(cs);
}

/* Thousands of keys across table growth keep their bytes; past the cap a new key is refused
 * and counted, and room comes back as entries go. */
static void test_many_and_cap(void **state)
{
	struct codeshare *cs;
	struct codeshare_stats st;
	static const uint8_t *v[3000];
	uint8_t buf[64];
	size_t held = 0;

	(void)state;
	assert_int_equal(codeshare_new(100000, &cs), 0);
	for (unsigned i = 0; i < 3000; i++) {
		struct codeshare_key k = key(0, i / 7, i * 64, 64);

		memset(buf, (int)(i & 0xff), sizeof(buf));
		v[i] = codeshare_put(cs, &k, buf);
		if (v[i])
			held++;
	}
	codeshare_get_stats(cs, &st);
	assert_true(held > 500 && held < 3000);
	assert_int_equal(st.entries, held);
	assert_int_equal(st.full, 3000 - held);
	assert_true(st.bytes <= 100000);
	for (unsigned i = 0; i < 3000; i++) {
		struct codeshare_key k = key(0, i / 7, i * 64, 64);
		const uint8_t *g = codeshare_get(cs, &k);

		assert_ptr_equal(g, v[i]);
		if (g) {
			assert_int_equal(g[63], i & 0xff);
			codeshare_unref(cs, g);
		}
	}
	for (unsigned i = 0; i < 3000; i += 2)
		if (v[i])
			codeshare_unref(cs, v[i]);
	{
		struct codeshare_key k = key(0, 999999, 0, 64);
		const uint8_t *g = codeshare_put(cs, &k, buf);

		assert_non_null(g);
		codeshare_unref(cs, g);
	}
	codeshare_free(cs); /* the rest freed with it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share),
	    cmocka_unit_test(test_many_and_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
