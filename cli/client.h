/* SPDX-License-Identifier: GPL-2.0-only */
/* client.h: the connection to kprofd (client.c), and kprofctl's exit codes. */
#ifndef KPROF_CLI_CLIENT_H
#define KPROF_CLI_CLIENT_H

#include "proto/kprof.pb-c.h"

#define KPROFCTL_EXIT_ERROR 1	  /* kprofd refused or failed the request */
#define KPROFCTL_EXIT_USAGE 2	  /* bad command line */
#define KPROFCTL_EXIT_NO_DAEMON 3 /* kprofd is not running or not reachable */

#define CLIENT_TIMEOUT_SEC 30	 /* how long a reply may take, by default */
#define CLIENT_TIMEOUT_MAX 86400 /* the most $KPROF_TIMEOUT may say */

/* How long to wait for a reply, in seconds (0: no limit), from text ($KPROF_TIMEOUT): 0, or
 * -EINVAL for anything but a whole number up to CLIENT_TIMEOUT_MAX. */
int client_set_timeout(const char *text);
/* The timeout in force, in seconds (0: none). */
unsigned client_timeout(void);
/* Connect to path, with the timeout in force on its reads and writes. -errno. */
int client_connect(const char *path);
/* Why connecting to the socket at path was refused (EACCES), into buf (len bytes): the group
 * it is for, to join (the installed unit: SocketMode 0660, group kprof). */
const char *client_no_permission(const char *path, char *buf, size_t len);
/* Send req, wait for one reply (*ret, free with kprof__reply__free_unpacked). -errno; -EBADMSG
 * for a reply that is not a kprof.Reply; -EMSGSIZE above FRAME_MAX_REPLY. */
int client_call(int fd, const Kprof__Request *req, Kprof__Reply **ret);
/* The two halves of client_call, for streams (kprofctl top). */
int client_send(int fd, const Kprof__Request *req);
int client_recv(int fd, Kprof__Reply **ret);

#endif
