/* SPDX-License-Identifier: GPL-2.0-only */
/* http.h: the pprof HTTP endpoint for fleet back ends (http.c), off unless [http] listen is
 * set. */
#ifndef KPROF_DAEMON_HTTP_H
#define KPROF_DAEMON_HTTP_H

#include <stdbool.h>
#include <stdint.h>

struct manager;
struct httpd;

/* Listen on conf.http_listen, served from m's event loop (m->http set). *ret is NULL (and 0
 * returned) when the endpoint is off: listen unset, or no usable token (no token_file without
 * insecure_no_auth, or a bad token file: logged with how to enable it; kprofd runs on). A
 * negative errno, logged: the address in use, out of memory. */
int httpd_new(struct manager *m, struct httpd **ret);

/* Answers waiting profiles with 503 and closes every connection. */
void httpd_free(struct httpd *h);

#endif
