/* SPDX-License-Identifier: GPL-2.0-only */
/* http.h: the pprof HTTP endpoint for fleet back ends (http.c), off unless [http] listen is
 * set. */
#ifndef KPROF_DAEMON_HTTP_H
#define KPROF_DAEMON_HTTP_H

struct manager;
struct httpd;

/* Listen on conf.http_listen, served from m's event loop. *ret is NULL (and 0 returned) when
 * the endpoint is off. A negative errno, logged with why: a bad or missing token file, no token
 * for an address other than loopback, the address in use. */
int httpd_new(struct manager *m, struct httpd **ret);
/* Answers waiting profiles with 503 and closes every connection. */
void httpd_free(struct httpd *h);

#endif
