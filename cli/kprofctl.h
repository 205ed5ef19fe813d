/* SPDX-License-Identifier: GPL-2.0-only */
/* kprofctl.h: the CLI's pieces: client.c talks to kprofd, render.c turns replies into text or
 * JSON (no I/O besides the FILE it is given, so it is unit-tested on canned replies). */
#ifndef KPROF_KPROFCTL_H
#define KPROF_KPROFCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/kprof.pb-c.h"

#define KPROFCTL_EXIT_ERROR 1	  /* kprofd refused or failed the request */
#define KPROFCTL_EXIT_USAGE 2	  /* bad command line */
#define KPROFCTL_EXIT_NO_DAEMON 3 /* kprofd is not running or not reachable */

/* Connect to path. -errno. */
int client_connect(const char *path);
/* Send req, wait for one reply (*ret, free with kprof__reply__free_unpacked). -errno; -EBADMSG
 * for a reply that is not a kprof.Reply; -EMSGSIZE above FRAME_MAX_REPLY. */
int client_call(int fd, const Kprof__Request *req, Kprof__Reply **ret);
/* The two halves of client_call, for streams (kprofctl top). */
int client_send(int fd, const Kprof__Request *req);
int client_recv(int fd, Kprof__Reply **ret);

/* top.c: the live view. pids may be empty (every attached target). */
struct top_opts {
	const char *socket_path;
	uint32_t *pids;
	size_t npids;
	unsigned interval_ms;
	unsigned iterations; /* 0: until q */
	bool json;	     /* NDJSON updates on stdout instead of the screen */
};
int top_run(const struct top_opts *o);

/* The one filter between a terminal and any string from kprofd or a target: writes the len
 * bytes at s to f with '?' for each C0 control (TAB, CR, LF included), DEL and C1 control
 * (U+0080-U+009F) and for each byte that is not part of valid UTF-8 (stray or raw 0x80-0xFF,
 * overlong, surrogate, above U+10FFFF, truncated); valid printable UTF-8 passes. At most max
 * characters (code points or '?'); returns how many were written. s NULL: nothing. */
size_t render_sanitize(FILE *f, const char *s, size_t len, size_t max);
/* render_sanitize of all of the NUL-terminated s (NULL: nothing). */
void render_text(FILE *f, const char *s);
/* Text made of lines (folded stacks): each line sanitized, the '\n' between lines kept. */
void render_lines(FILE *f, const char *s);
/* render_sanitize into a malloc'd string (for printf-style and ncurses output); NULL: no memory. */
char *render_sanitize_dup(const char *s, size_t max);
/* A JSON string literal (RFC 8259) of the len bytes at s: C0, DEL and C1 controls as \u00XX,
 * bytes that are not valid UTF-8 as \ufffd, so the output is valid UTF-8 JSON. */
void render_json_strn(FILE *f, const char *s, size_t len);
void render_json_string(FILE *f, const char *s);
const char *render_state(Kprof__TargetState s);
const char *render_kind(Kprof__FrameKind k);
void render_target_line(FILE *f, const Kprof__Target *t);
void render_list(FILE *f, const Kprof__ListReply *r, bool json);
void render_status(FILE *f, const Kprof__StatusReply *r, bool json);
void render_report(FILE *f, const Kprof__ReportReply *r, bool json);
void render_hcct(FILE *f, const Kprof__HcctReply *r, bool json);
void render_target_json(FILE *f, const Kprof__Target *t);
void render_paths(FILE *f, const Kprof__PathsReply *r, bool json);

/* export.c: write sp as format ("pprof", "folded", "json") to path ("-": stdout). */
int export_profile(const Kprof__SavedProfile *sp, const char *format, const char *path);

#endif
