/* SPDX-License-Identifier: GPL-2.0-only */
/* ringbuf.h: draining the BPF ring buffer into callbacks (ringbuf.c). */
#ifndef KPROF_DAEMON_RINGBUF_H
#define KPROF_DAEMON_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kprof/abi.h"

/* What a drain hands on: each record validated against its kind's size (all required). */
struct ringbuf_ops {
	void (*on_sample)(void *ctx, const struct kp_sample *s);
	void (*on_call)(void *ctx, const struct kp_call *c);
	void (*on_path)(void *ctx, const struct kp_path *p);
	/* A breakpoint of the branch tracer was hit (KP_REC_HWBP); NULL: such records dropped. */
	void (*on_hwbp)(void *ctx, const struct kp_hwbp *b);
	/* Lifecycle records of the process tgid that started at start_ticks. */
	void (*on_exit)(void *ctx, pid_t tgid, uint64_t start_ticks, int code);
	/* comm: the new program's (16 bytes, NUL-terminated unless all 16 are used). */
	void (*on_exec)(void *ctx, pid_t tgid, uint64_t start_ticks, const char comm[16]);
	/* Thread tid of tgid started without a sampling event, cloned by thread creator
	 * (KP_REC_THREAD). */
	void (*on_thread)(void *ctx, pid_t tgid, pid_t tid, pid_t creator);
	/* Target parent (attach --children) forked process child, which started at start_ticks;
	 * added: kp_fork put it in kp_targets (KP_REC_FORK). */
	void (*on_fork)(void *ctx, pid_t child, pid_t parent, uint64_t start_ticks, bool added);
	/* Process tgid (started at start_ticks) entered watched cgroup cgid (KP_REC_CGROUP). */
	void (*on_cgroup)(void *ctx, pid_t tgid, uint64_t cgid, uint64_t start_ticks);
	/* Process tgid (no target) exec'd with a comm or uid a watch rule names (KP_REC_WATCH). */
	void (*on_watch)(void *ctx, const struct kp_execwatch *w);
	/* Before any record but a sample, with its tgid (NULL: nothing): what waits to be added
	 * of that process's samples goes first. */
	void (*on_other)(void *ctx, pid_t tgid);
};

struct ringbuf;
/* -EINVAL if an op is missing. */
int ringbuf_new(int ringbuf_fd, const struct ringbuf_ops *ops, void *ctx, struct ringbuf **ret);
void ringbuf_free(struct ringbuf *s);
int ringbuf_epoll_fd(const struct ringbuf *s);
/* Handle what the ring buffer holds, at most a budget of records: 1 if the budget ran out
 * (call again), 0 when empty, negative errno. */
int ringbuf_drain(struct ringbuf *s);
/* One record handled as a drain hands it on (validated, then to its op): for bench/replay.c,
 * which feeds kprofd's ingestion records that no BPF program wrote. */
void ringbuf_feed(struct ringbuf *s, void *data, size_t len);
/* Records dropped as malformed so far. */
uint64_t ringbuf_bad_records(const struct ringbuf *s);

#endif
