/* SPDX-License-Identifier: GPL-2.0-only */
/* render.h: what kprofctl's output shares (render.c): the sanitizer, JSON strings, names, a
 * target's line and JSON object; no I/O besides the FILE it is given, so it is unit-tested on
 * canned replies. The views of whole replies have their own headers: render_targets.h,
 * render_profile.h, render_paths.h, render_spp.h, render_annotate.h. */
#ifndef KPROF_CLI_RENDER_H
#define KPROF_CLI_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

/* The one filter between a terminal and any string from kprofd or a target: writes the len
 * bytes at s to f with '?' for each C0 control (TAB, CR, LF included), DEL and C1 control
 * (U+0080-U+009F) and for each byte that is not part of valid UTF-8 (stray or raw 0x80-0xFF,
 * overlong, surrogate, above U+10FFFF, truncated); valid printable UTF-8 passes. At most max
 * characters (code points or '?'); returns how many were written. s NULL: nothing. */
size_t render_sanitize(FILE *f, const char *s, size_t len, size_t max);
/* render_sanitize of all of the NUL-terminated s (NULL: nothing). */
void render_text(FILE *f, const char *s);
/* kprofd's error in rep, "kprofctl: MESSAGE" on one line, sanitized. */
void render_reply_error(FILE *f, const Kprof__Reply *rep);
/* ,"KEY":[{"function","file","line"},...] of source lines (issue 32); nothing if there are none. */
void render_json_lines(FILE *f, const char *key, Kprof__SavedLine *const *v, size_t n);
/* Text made of lines (folded stacks): each line sanitized, the '\n' between lines kept. */
void render_lines(FILE *f, const char *s);
/* render_sanitize into a malloc'd string (for printf-style and ncurses output); NULL: no memory. */
char *render_sanitize_dup(const char *s, size_t max);
/* A JSON string literal (RFC 8259) of the len bytes at s: C0, DEL and C1 controls as \u00XX,
 * bytes that are not valid UTF-8 as \ufffd, so the output is valid UTF-8 JSON. */
void render_json_strn(FILE *f, const char *s, size_t len);
void render_json_string(FILE *f, const char *s);
/* The width of the terminal the text goes to (0: not a terminal, lines whole). kprofctl sets
 * it from standard output; report fits its rows in it. */
void render_set_columns(unsigned cols);
/* The columns s takes once sanitized (its characters). */
int render_width(const char *s);
unsigned render_columns(void);
/* Print the sanitized s in at most w columns, padded to w when pad: a longer name loses its
 * least useful part, marked "..": a path after a space (a JS function's "NAME /path/f.js:3:9"
 * keeps NAME and the path's end), else a path's start, else its end. */
void render_fit(FILE *f, const char *s, int w, bool pad);
/* "s" unless n is 1, for counted nouns: printf("%u target%s", n, render_plural(n)). */
const char *render_plural(uint64_t n);
const char *render_state(Kprof__TargetState s);
const char *render_kind(Kprof__FrameKind k);
void render_target_line(FILE *f, const Kprof__Target *t);
/* The names to show for the n function names (NULL is ""): each in its short form
 * (cxxname_short: no parameter list, return type or qualifiers), but whole where two different
 * names have one short form (overloads, foo(int) and foo(double)), so that no two rows look
 * alike. One allocation to free(); NULL when out of memory (show the names whole then). */
const char **render_names(const char *const *names, size_t n);
void render_target_json(FILE *f, const Kprof__Target *t);
/* The costs of t's probing modes (exact mode; a path trace running), a line each after lead. */
void render_probe_costs(FILE *f, const Kprof__Target *t, const char *lead);
/* The start of a reply's JSON object, its target first: {"target":{...} (t NULL: null). */
void render_json_open_target(FILE *f, const Kprof__Target *t);

#endif
