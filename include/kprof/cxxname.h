/* SPDX-License-Identifier: GPL-2.0-only */
/* cxxname.h: short, readable forms of demangled C++ function names, for text output.
 *
 * A demangled name carries its parameter list, its cv- and ref-qualifiers and, for function
 * templates, its return type:
 *     v8::internal::Handle<v8::internal::Object> v8::internal::JsonParser<unsigned char>::
 *         ParseJsonValue<false>(v8::internal::Handle<v8::internal::String>) const
 * The short form keeps the qualified name with every template argument and drops the rest:
 *     v8::internal::JsonParser<unsigned char>::ParseJsonValue<false>
 * The parameter lists of enclosing functions (local classes, lambdas) go too:
 *     foo(int)::{lambda(int)#1}::operator()(int) const   ->   foo::{lambda(int)#1}::operator()
 * and GCC's clone suffixes stay, since a clone is other code: "f(int) [clone .cold]" -> "f
 * [clone .cold]". Only names that parse as a demangled C++ function with a parameter list are
 * shortened; anything else (C, JS and Java names from perf maps, "JS:*foo /x.js:1:2",
 * "void java.util.HashMap.get(java.lang.Object)", "RegExp:(a)", unbalanced or control bytes)
 * comes back unchanged. Pure: no I/O, no allocation, linear time.
 */
#ifndef KPROF_CXXNAME_H
#define KPROF_CXXNAME_H

#include <stddef.h>

/* Write the short form of the NUL-terminated name into out (cap bytes, NUL-terminated when cap
 * > 0, cut at cap - 1 bytes like snprintf) and return its length. The short form is never longer
 * than name: cap = strlen(name) + 1 always holds it whole. out must not overlap name. */
size_t cxxname_short(const char *name, char *out, size_t cap);

/* The short form of any function name, for flame-graph boxes (pprof's Function.name): a Java
 * method as HotSpot names it in perf maps, "RET QUALIFIED.NAME(PARAMS)", without its return type
 * and parameters ("void java.util.DualPivotQuicksort.sort(java.util.DualPivotQuicksort$Sorter,
 * double[], int, int, int)" -> "java.util.DualPivotQuicksort.sort"); else cxxname_short. Same
 * contract as cxxname_short. */
size_t funcname_short(const char *name, char *out, size_t cap);

#endif
