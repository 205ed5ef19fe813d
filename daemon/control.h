/* SPDX-License-Identifier: GPL-2.0-only */
/* control.h: the control socket (control.c). */
#ifndef KPROF_DAEMON_CONTROL_H
#define KPROF_DAEMON_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct manager;

struct control;
int control_new(struct manager *m, const char *path, unsigned max_clients, struct control **ret);
void control_free(struct control *c);
unsigned control_clients(const struct control *c);
void control_set_limits(struct control *c, unsigned max_clients);
/* Close clients silent for idle_ns, and those whose request frame is not whole frame_timeout
 * seconds after its first byte. */
void control_reap_idle(struct control *c, uint64_t now, uint64_t idle_ns);

#endif
