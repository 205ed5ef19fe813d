/* SPDX-License-Identifier: GPL-2.0-only */
/* ringbuf.h: draining the BPF ring buffer into the manager (ringbuf.c). */
#ifndef KPROF_DAEMON_RINGBUF_H
#define KPROF_DAEMON_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct manager;

struct ringbuf;
int ringbuf_new(struct manager *m, int ringbuf_fd, struct ringbuf **ret);
void ringbuf_free(struct ringbuf *s);
int ringbuf_epoll_fd(const struct ringbuf *s);
/* Handle what the ring buffer holds, at most a budget of records: 1 if the budget ran out
 * (call again), 0 when empty, negative errno. */
int ringbuf_drain(struct ringbuf *s);

#endif
