/* SPDX-License-Identifier: GPL-2.0-only */
/* transport.h: the control socket (transport.c): clients, frames and quotas; what a frame asks
 * is the handler's business (requests.c). */
#ifndef KPROF_DAEMON_TRANSPORT_H
#define KPROF_DAEMON_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>
#include <systemd/sd-event.h>

#include "kprof/config.h"

struct transport;
struct transport_client;

/* The handler of the frames. on_frame and pack_error are required. */
struct transport_ops {
	/* A client connected: 0, or a negative errno to drop it. */
	int (*on_connect)(void *ctx, struct transport_client *cl);
	/* One whole request frame's payload; answer with transport_reply (at most one reply is
	 * pending per client: the next frame is read once it is written). */
	void (*on_frame)(void *ctx, struct transport_client *cl, const uint8_t *data, size_t len);
	/* The client is going: free what on_connect set up. */
	void (*on_disconnect)(void *ctx, struct transport_client *cl);
	/* A malloc'd frame carrying the error reply (err, msg), for the transport's own refusals.
	 */
	int (*pack_error)(int err, const char *msg, uint8_t **buf, size_t *len);
};

/* -EADDRINUSE if a daemon already answers on path (not asked when systemd passes the socket):
 * checked before anything is loaded, so a second kprofd leaves no trace. */
int transport_check_free(const char *path);
/* Listen on the socket systemd passed, else on conf->socket_path. conf (the limits: clients,
 * reply budgets, timeouts) is read at each use, so it must outlive the transport. */
int transport_new(sd_event *ev, const struct config *conf, const struct transport_ops *ops,
		  void *ctx, struct transport **ret);
void transport_free(struct transport *tr);
unsigned transport_clients(const struct transport *tr);

/* Queue msg as cl's reply, one frame; a reply past the size limit or the reply budgets goes as
 * an error reply instead (-EMSGSIZE, -ENOBUFS). */
void transport_reply(struct transport_client *cl, const ProtobufCMessage *msg);
void transport_reply_error(struct transport_client *cl, int err, const char *msg);
/* A request answered later (built in steps, requests.c): hold cl (read no further request,
 * no idle timeout) from its on_frame until transport_resume, after its reply is queued; resume
 * writes it and reads on: false if cl was dropped (freed) for a write error. */
void transport_hold(struct transport_client *cl);
bool transport_resume(struct transport_client *cl);
/* Close cl once its reply is written. */
void transport_close(struct transport_client *cl);
/* Is a reply waiting to be written (or cl closing)? */
bool transport_busy(const struct transport_client *cl);
/* Write what is queued now, outside a frame's handling (a timer's reply): false if cl was
 * dropped (freed) for a write error. */
bool transport_flush(struct transport_client *cl);
uid_t transport_client_uid(const struct transport_client *cl);
pid_t transport_client_pid(const struct transport_client *cl);
/* Was the peer in group gid when it connected (primary or supplementary)? (gid_t)-1: no. */
bool transport_client_in_group(const struct transport_client *cl, gid_t gid);
void *transport_client_data(const struct transport_client *cl);
void transport_client_set_data(struct transport_client *cl, void *data);

#endif
