// SPDX-License-Identifier: GPL-2.0-only
/* test_cxxname.c: unit tests for cxxname_short (links daemon/lib/cxxname.c alone).
 *
 * Real names first (node 20's V8, ICU, ada and libstdc++ symbols as __cxa_demangle prints them,
 * V8 and HotSpot perf-map names), then hostile ones, then random bytes and random mixes of C++
 * punctuation checked against the invariants: the output is never longer than the input, is
 * the input itself or made of its bytes in order, and is cut like snprintf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/cxxname.h"

#include "../prng.h"

static void expect_short(const char *name, const char *want)
{
	size_t n = strlen(name), len;
	char *out = malloc(n + 1);

	assert_non_null(out);
	len = cxxname_short(name, out, n + 1);
	if (strcmp(out, want))
		fail_msg("%s\n  gave %s\n  want %s", name, out, want);
	assert_int_equal(len, strlen(want));
	free(out);
}

static void expect_same(const char *name)
{
	expect_short(name, name);
}

static void test_v8(void **state)
{
	(void)state;
	expect_short("v8::internal::JsonParser<unsigned char>::ParseJsonValue(v8::internal::Handle<"
		     "v8::internal::Object>)",
		     "v8::internal::JsonParser<unsigned char>::ParseJsonValue");
	expect_short("v8::internal::JsonParser<unsigned char>::ExpectNext(v8::internal::JsonToken, "
		     "v8::base::Optional<v8::internal::MessageTemplate>)",
		     "v8::internal::JsonParser<unsigned char>::ExpectNext");
	/* A function template: its return type goes, its template arguments stay. */
	expect_short("v8::internal::Handle<v8::internal::Object> v8::internal::JsonParser<unsigned "
		     "char>::ParseJsonValue<false>(v8::internal::Handle<v8::internal::String>)",
		     "v8::internal::JsonParser<unsigned char>::ParseJsonValue<false>");
	expect_short("v8::internal::TaggedImpl<(v8::internal::HeapObjectReferenceType)1, unsigned "
		     "long>::GetHeapObjectAssumeStrong() const",
		     "v8::internal::TaggedImpl<(v8::internal::HeapObjectReferenceType)1, unsigned "
		     "long>::GetHeapObjectAssumeStrong");
	expect_short("v8::internal::RegExp::CreateCaptureNameMap(v8::internal::Isolate*, "
		     "v8::internal::ZoneVector<v8::internal::RegExpCapture*>*) [clone .part.0]",
		     "v8::internal::RegExp::CreateCaptureNameMap [clone .part.0]");
	/* A lambda as a template argument keeps its enclosing function whole. */
	expect_short(
	    "bool v8::internal::JSFinalizationRegistry::RemoveUnregisterToken<v8::internal::"
	    "JSFinalizationRegistry::Unregister(v8::internal::Handle<v8::internal::"
	    "JSFinalizationRegistry>)::{lambda(v8::internal::HeapObject)#1}>(v8::internal::"
	    "HeapObject, v8::internal::Isolate*)",
	    "v8::internal::JSFinalizationRegistry::RemoveUnregisterToken<v8::internal::"
	    "JSFinalizationRegistry::Unregister(v8::internal::Handle<v8::internal::"
	    "JSFinalizationRegistry>)::{lambda(v8::internal::HeapObject)#1}>");
	expect_short("v8::Function::Call(v8::Local<v8::Context>, v8::Local<v8::Value>, int, "
		     "v8::Local<v8::Value>*)",
		     "v8::Function::Call");
	expect_short("Builtins_JsonParse(int)", "Builtins_JsonParse");
}

static void test_operators(void **state)
{
	(void)state;
	expect_short("foo::operator()(int) const", "foo::operator()");
	expect_short("foo::operator()()", "foo::operator()");
	expect_short("foo::operator[](unsigned long)", "foo::operator[]");
	expect_short("icu_78::Collator::operator!=(icu_78::Collator const&) const",
		     "icu_78::Collator::operator!=");
	expect_short("v8::internal::compiler::operator<<(std::ostream&, v8::internal::compiler::"
		     "Node const&)",
		     "v8::internal::compiler::operator<<");
	expect_short("operator<(A const&, A const&)", "operator<");
	expect_short("operator>(A const&, A const&)", "operator>");
	expect_short("ns::operator<=>(A const&, A const&)", "ns::operator<=>");
	expect_short("ns::Ptr::operator->() const", "ns::Ptr::operator->");
	expect_short("ns::Ptr::operator->*(int)", "ns::Ptr::operator->*");
	expect_short("ns::X::operator,(ns::X)", "ns::X::operator,");
	expect_short("bool std::operator< <char>(std::basic_string<char> const&, char const*)",
		     "std::operator< <char>");
	expect_short("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char "
		     "const*)",
		     "std::operator<< <std::char_traits<char> >");
	expect_short("bool std::operator==<char, std::char_traits<char> >(std::basic_string_view<"
		     "char, std::char_traits<char> >, std::basic_string_view<char, "
		     "std::char_traits<char> >)",
		     "std::operator==<char, std::char_traits<char> >");
	expect_short("v8::HandleScope::operator new(unsigned long)",
		     "v8::HandleScope::operator new");
	expect_short("v8::HandleScope::operator delete[](void*, unsigned long)",
		     "v8::HandleScope::operator delete[]");
	expect_short("node::crypto::ManagedEVPPKey::operator bool() const",
		     "node::crypto::ManagedEVPPKey::operator bool");
	expect_short("Foo::operator std::vector<int, std::allocator<int> >() const &",
		     "Foo::operator std::vector<int, std::allocator<int> >");
	expect_short("Foo::operator char const*() const", "Foo::operator char const*");
	expect_short("operator\"\" _km(unsigned long long)", "operator\"\" _km");
	/* An operator as a template argument: its '<' is no bracket. */
	expect_short("Sorter<&operator<>::run(int)", "Sorter<&operator<>::run");
	expect_short("Sorter<&A::operator()>::run(int)", "Sorter<&A::operator()>::run");
	/* "operator" without a parameter list: the () are the operator's. */
	expect_same("foo::operator()");
	/* Only a whole word is the keyword. */
	expect_short("my_operator<int>::run(int)", "my_operator<int>::run");
}

static void test_local_and_lambdas(void **state)
{
	(void)state;
	expect_short("foo(int)::{lambda(int)#1}::operator()(int) const",
		     "foo::{lambda(int)#1}::operator()");
	expect_short("ada::idna::is_label_valid(std::basic_string_view<char32_t, std::char_traits<"
		     "char32_t> >)::{lambda(unsigned int)#1}::operator()(unsigned int) const "
		     "[clone .constprop.0]",
		     "ada::idna::is_label_valid::{lambda(unsigned int)#1}::operator() [clone "
		     ".constprop.0]");
	expect_short("Foo::bar(int) const::{lambda()#2}::operator()() const",
		     "Foo::bar::{lambda()#2}::operator()");
	expect_short("Foo::operator()(int) const::Local::run()", "Foo::operator()::Local::run");
	expect_short("Foo::operator bool() const::{lambda()#1}::operator()() const",
		     "Foo::operator bool::{lambda()#1}::operator()");
	expect_short("{lambda()#1}::operator()() const", "{lambda()#1}::operator()");
	expect_short("foo()::{unnamed type#1}::bar(int)", "foo::{unnamed type#1}::bar");
	expect_short("ada::url_search_params::has(std::basic_string_view<char, std::char_traits<"
		     "char> >)::{lambda(auto:1&)#1}::operator()<std::pair<int, int> >(std::pair<"
		     "int, int>&) const [clone .isra.0]",
		     "ada::url_search_params::has::{lambda(auto:1&)#1}::operator()<std::pair<int, "
		     "int> > [clone .isra.0]");
	/* A local entity that is not a function: the name is data, not shortened. */
	expect_same("(anonymous namespace)::GetRegionFromKey(char const*, UErrorCode&)::valid");
}

static void test_misc_cxx(void **state)
{
	(void)state;
	expect_short("(anonymous namespace)::uvimpl::Work::~Work()",
		     "(anonymous namespace)::uvimpl::Work::~Work");
	expect_short("icu_78::(anonymous namespace)::DecFmtSymDataSink::put(char const*)",
		     "icu_78::(anonymous namespace)::DecFmtSymDataSink::put");
	expect_short("void (anonymous namespace)::f<int>(int)", "(anonymous namespace)::f<int>");
	expect_short("ada::helpers::get_state[abi:cxx11](ada::state)",
		     "ada::helpers::get_state[abi:cxx11]");
	expect_short(
	    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
	    "> v8_inspector::toStdString[abi:cxx11]<int>(int)",
	    "v8_inspector::toStdString[abi:cxx11]<int>");
	expect_short("non-virtual thunk to cppgc::internal::Heap::CollectGarbage(cppgc::internal::"
		     "GCConfig)",
		     "non-virtual thunk to cppgc::internal::Heap::CollectGarbage");
	expect_short("virtual thunk to std::basic_ostringstream<char>::~basic_ostringstream()",
		     "virtual thunk to std::basic_ostringstream<char>::~basic_ostringstream");
	expect_short("Foo::bar() &&", "Foo::bar");
	expect_short("Foo::bar() const volatile &", "Foo::bar");
	expect_short("foo(int) [clone .isra.0] [clone .cold]", "foo [clone .isra.0] [clone .cold]");
	expect_short("std::vector<int, std::allocator<int> > const& get<0ul>(Tuple const&)",
		     "get<0ul>");
	expect_short("char const* name<(Kind)2>()", "name<(Kind)2>");
	expect_short("unsigned long long count<1.5f>(int)", "count<1.5f>");
	expect_short("f<((2)>(1))>(int)", "f<((2)>(1))>");
	expect_short("f<(1)<(2)>(int)", "f<(1)<(2)>");
	expect_short("Foo<void (int), foo()::{lambda(int)#1}>::_M_invoke(std::_Any_data const&)",
		     "Foo<void (int), foo()::{lambda(int)#1}>::_M_invoke");
	expect_short("f\xc3\xa9(int)", "f\xc3\xa9");
}

static void test_unchanged(void **state)
{
	(void)state;
	/* C, data, kernel and empty names. */
	expect_same("");
	expect_same("main");
	expect_same("mj_hot");
	expect_same("__x64_sys_read");
	expect_same("foo.cold");
	expect_same("[kernel]");
	expect_same("[unknown]");
	expect_same("(anonymous namespace)::COUNTRIES");
	expect_same("v8::internal::JsonParser<unsigned char>::ParseJsonValue");
	/* V8's perf maps. */
	expect_same("JS:*foo /path/x.js:12:3");
	expect_same("JS:~parse /app/node_modules/x (copy).js:1:2");
	expect_same("LazyCompile:*foo file.js:1");
	expect_same("LazyCompile:~<anonymous> /x.js:3");
	expect_same("Function:~ /x.js:1:1");
	expect_same("Builtin:JsonParse");
	expect_same("BytecodeHandler:Ldar");
	expect_same("RegExp:(a)(b)");
	expect_same("RegExp:^(\\d+)$");
	expect_same("Script:~ node:internal/main/run_main_module(1)");
	expect_same("JS:*foo (x.js:1)");
	/* HotSpot and other JITs. */
	expect_same("void Hot$Alpha.run()");
	expect_same("void java.util.HashMap.get(java.lang.Object)");
	expect_same("java.lang.String::hashCode()");
	expect_same("Ljava/lang/Thread;::run");
	expect_same("StubRoutines (1)");
	expect_same("Interpreter");
	expect_same(
	    "instance void [System.Private.CoreLib] System.Threading.Thread::StartCallback()");
	expect_same("[jit] foo(int)");
	expect_same("main.(*T).Method");
	expect_same("py::f:/x.py");
	/* Not the shape of a C++ function. */
	expect_same("foo(int");
	expect_same("foo int)");
	expect_same("(int)");
	expect_same("foo ()");
	expect_same("foo  bar(int)");
	expect_same(" foo(int)");
	expect_same("::foo(int)");
	expect_same("foo::(int)");
	expect_same("foo:bar(int)");
	expect_same("a.b(int)");
	expect_same("1foo(int)");
	expect_same("foo<int(int)");
	expect_same("foo<int>>(int)");
	expect_same("foo(int)::bar");
	expect_same("int (*foo(int))(double)");
	expect_same("foo*(int)");
	expect_same("Foo::operator");
	expect_same("Foo::operator(int)");
	expect_same("foo(int) [clone]");
	/* Control bytes: never touched (the sanitizer shows them). */
	expect_same("foo\x1b[31m(int)");
	expect_same("foo(int\n)");
	expect_same("foo\x7f(int)");
}

/* cap: cut like snprintf, the length returned always whole. */
static void test_cap(void **state)
{
	const char *name = "v8::internal::JsonParser<unsigned char>::ParseJsonValue(int)";
	const char *want = "v8::internal::JsonParser<unsigned char>::ParseJsonValue";
	char buf[128];

	(void)state;
	for (size_t cap = 0; cap < sizeof(buf); cap++) {
		size_t len;

		memset(buf, 'X', sizeof(buf));
		len = cxxname_short(name, buf, cap);
		assert_int_equal(len, strlen(want));
		if (!cap) {
			assert_int_equal(buf[0], 'X');
			continue;
		}
		size_t w = len < cap - 1 ? len : cap - 1;

		assert_memory_equal(buf, want, w);
		assert_int_equal(buf[w], '\0');
		assert_int_equal(buf[w + 1], 'X');
	}
	/* Unchanged names are cut the same way. */
	assert_int_equal(cxxname_short("JS:*foo x.js:1", buf, 5), 14);
	assert_string_equal(buf, "JS:*");
	assert_int_equal(cxxname_short("", buf, 1), 0);
	assert_string_equal(buf, "");
}

/* The output is the input or a subsequence of it, never longer; exact size and +1 agree. */
static void check_invariants(const char *name, size_t n)
{
	char *out = malloc(n + 1), *small = malloc(n + 1);
	size_t len, i = 0, j = 0;

	assert_non_null(out);
	assert_non_null(small);
	len = cxxname_short(name, out, n + 1);
	assert_true(len <= n);
	assert_int_equal(strlen(out), len);
	for (; i < n && j < len; i++)
		j += name[i] == out[j];
	if (j != len)
		fail_msg("output is not made of the input's bytes in order: '%s' -> '%s'", name,
			 out);
	/* A short form of a short form is itself (it has no parameter list left) or shorter. */
	assert_true(cxxname_short(out, small, len + 1) <= len);
	if (len) {
		assert_int_equal(cxxname_short(name, small, len), len);
		assert_memory_equal(small, out, len - 1);
		assert_int_equal(small[len - 1], '\0');
	}
	free(out);
	free(small);
}

static void test_random_bytes(void **state)
{
	uint64_t s = 42;
	char buf[257];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t n = prng_next(&s) % 256;

		for (size_t i = 0; i < n; i++) {
			char c;

			do
				c = (char)prng_next(&s);
			while (!c);
			buf[i] = c;
		}
		buf[n] = '\0';
		check_invariants(buf, n);
	}
}

/* clang-format off */
static const char *const pieces[] = {
    "foo", "Bar", "::", "<", ">", "(", ")", "[", "]", "{", "}", " ", ",", "*", "&", "~", "$",
    "operator", "operator()", "operator<", "operator<<", " const", " &&", " [clone .cold]",
    "{lambda(int)#1}", "(anonymous namespace)", "[abi:cxx11]", "int", ".", ":", "0", "\"\" ",
    "new", "JS:*", "\xc3", "\xa9",
};
/* clang-format on */

static const char *pick(uint64_t *s, const char *const *from, size_t n)
{
	return from[prng_next(s) % n];
}

/* A plausible demangled name: [type ] comp(::comp)* (params)[quals][clone]. */
static size_t make_name(uint64_t *s, char *buf)
{
	static const char *const comps[] = {"v8",
					    "internal",
					    "Foo<int>",
					    "~Bar",
					    "(anonymous namespace)",
					    "{lambda(int)#1}",
					    "operator()",
					    "operator< <char>",
					    "f[abi:cxx11]",
					    "g(int) const",
					    "Vec<std::pair<int, int> >"};
	static const char *const tails[] = {"(int)", "() const", "(A<B>, C*) &&",
					    "(int) [clone .cold]", "()"};
	size_t n = 0, k = 1 + prng_next(s) % 5;

	if (prng_next(s) & 1)
		n += (size_t)sprintf(buf, "%s ", pick(s, comps, 11));
	for (size_t i = 0; i < k; i++)
		n += (size_t)sprintf(buf + n, "%s%s", i ? "::" : "", pick(s, comps, 11));
	n += (size_t)sprintf(buf + n, "%s", pick(s, tails, 5));
	return n;
}

/* Random plausible names, some with a random piece put in or a byte cut out: the invariants
 * always hold, and most come out shorter. */
static void test_random_cxx(void **state)
{
	uint64_t s = 7;
	char buf[1024], out[1024];
	unsigned changed = 0, rounds = 50000;

	(void)state;
	for (unsigned round = 0; round < rounds; round++) {
		size_t n = make_name(&s, buf), at = prng_next(&s) % (n + 1);
		uint64_t r = prng_next(&s) % 4;

		if (r == 1) { /* a piece put in */
			const char *p = pick(&s, pieces, sizeof(pieces) / sizeof(pieces[0]));
			size_t l = strlen(p);

			memmove(buf + at + l, buf + at, n - at);
			memcpy(buf + at, p, l);
			n += l;
		} else if (r == 2 && at < n) { /* a byte cut out */
			memmove(buf + at, buf + at + 1, n - at - 1);
			n--;
		}
		buf[n] = '\0';
		check_invariants(buf, n);
		changed += cxxname_short(buf, out, sizeof(out)) != n;
	}
	/* Most reach the end of the shortening code, not only its refusals. */
	assert_true(changed > rounds / 2);
}

/* "a<" depth times, "int", "> " depth times, "::f(int)". */
static char *nested(size_t depth)
{
	char *s = malloc(4 * depth + 16), *p = s;

	assert_non_null(s);
	for (size_t i = 0; i < depth; i++, p += 2)
		memcpy(p, "a<", 2);
	memcpy(p, "int", 3);
	p += 3;
	for (size_t i = 0; i < depth; i++, p += 2)
		memcpy(p, "> ", 2);
	strcpy(p - 1, "::f(int)");
	return s;
}

/* Ten megabytes of brackets, parentheses, components: linear, bounded, no recursion. */
static void test_huge(void **state)
{
	size_t n = 10u << 20, k = (n / 2) / 3;
	char *s = malloc(n + 1), *out = malloc(n + 1);

	(void)state;
	assert_non_null(s);
	assert_non_null(out);
	memset(s, '<', n);
	s[n] = '\0';
	assert_int_equal(cxxname_short(s, out, n + 1), n);
	memset(s, '(', n);
	s[n - 1] = ')';
	assert_int_equal(cxxname_short(s, out, n + 1), n);
	memset(s, ')', n);
	assert_int_equal(cxxname_short(s, out, n + 1), n);
	memset(s, '[', n - 1);
	assert_int_equal(cxxname_short(s, out, n + 1), n);
	/* A::A::...::f(iii...i): shortened, the parameters dropped */
	for (size_t i = 0; i < k; i++)
		memcpy(s + 3 * i, "A::", 3);
	s[3 * k] = 'f';
	s[3 * k + 1] = '(';
	memset(s + 3 * k + 2, 'i', n - 3 * k - 3);
	s[n - 1] = ')';
	assert_int_equal(cxxname_short(s, out, n + 1), 3 * k + 1);
	assert_int_equal(out[3 * k], 'f');
	assert_int_equal(out[3 * k + 1], '\0');
	free(s);
	free(out);
	/* Template arguments nested 200 deep are read; deeper than the stack, left alone. */
	s = nested(200);
	out = malloc(strlen(s) + 1);
	assert_int_equal(cxxname_short(s, out, strlen(s) + 1), strlen(s) - 5);
	free(s);
	free(out);
	s = nested(100000);
	out = malloc(strlen(s) + 1);
	assert_int_equal(cxxname_short(s, out, strlen(s) + 1), strlen(s));
	free(s);
	free(out);
}

static void expect_func(const char *name, const char *want)
{
	size_t n = strlen(name), len;
	char *out = malloc(n + 1);

	assert_non_null(out);
	len = funcname_short(name, out, n + 1);
	if (strcmp(out, want))
		fail_msg("%s\n  gave %s\n  want %s", name, out, want);
	assert_int_equal(len, strlen(want));
	free(out);
}

/* Java names as HotSpot writes them in perf maps (issue 30, item 8), and what is not one. */
static void test_java(void **state)
{
	char small[8];

	(void)state;
	expect_func("void java.util.DualPivotQuicksort.sort(java.util.DualPivotQuicksort$Sorter, "
		    "double[], int, int, int)",
		    "java.util.DualPivotQuicksort.sort");
	expect_func("long Hot$Alpha.run(long, int)", "Hot$Alpha.run");
	expect_func("java.lang.Object[] java.util.ArrayList.toArray()",
		    "java.util.ArrayList.toArray");
	expect_func("void java.lang.Object.<init>()", "java.lang.Object.<init>");
	/* Not Java methods: unchanged (or C++'s short form). */
	expect_func("Interpreter", "Interpreter");
	expect_func("StubRoutines (1)", "StubRoutines (1)");
	expect_func("NullPointerException at call throw_exception",
		    "NullPointerException at call throw_exception");
	expect_func("JS:*hotFunction /x.js:11:21", "JS:*hotFunction /x.js:11:21");
	expect_func("foo(int)", "foo");
	expect_func("v8::internal::Handle<v8::internal::Object> v8::internal::Foo::Bar(int) const",
		    "v8::internal::Foo::Bar");
	expect_func("int main(int, char**)", "main");
	expect_func("long noqualifier(long)", "noqualifier"); /* C++ rules: no dot */
	/* Cut like snprintf. */
	assert_int_equal(funcname_short("long Hot$Alpha.run(long, int)", small, sizeof(small)), 13);
	assert_string_equal(small, "Hot$Alp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v8),
	    cmocka_unit_test(test_operators),
	    cmocka_unit_test(test_local_and_lambdas),
	    cmocka_unit_test(test_misc_cxx),
	    cmocka_unit_test(test_unchanged),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_random_bytes),
	    cmocka_unit_test(test_random_cxx),
	    cmocka_unit_test(test_huge),
	    cmocka_unit_test(test_java),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
