// SPDX-License-Identifier: GPL-2.0-only
/* ringbuf.c: drain the BPF ring buffer and hand validated records to its consumer.
 *
 * Like libbpf's own ring_buffer__new, the reader takes callbacks and a context (struct
 * ringbuf_ops): it knows the record formats of include/kprof/abi.h and nothing of who uses them.
 *
 * The ring buffer is read from the event loop: its epoll fd wakes us when the BPF side forces
 * a wakeup (buffer past its fill threshold, or a lifecycle record), and a timer drains it every
 * few milliseconds otherwise (the BPF side submits samples without waking anyone, so one wakeup
 * pays for a batch). Every record is checked against its kind's size before use: the kernel is
 * trusted, but a mismatch between an old object and a new daemon must not read past a record.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kernel/ringbuf.h"

struct ringbuf {
	struct ringbuf_ops ops;
	void *ctx;
	struct ring_buffer *rb;
	bool draining;	 /* libbpf's consume is not reentrant: a record handler may ask to drain */
	unsigned budget; /* records left in this drain */
	uint64_t bad_records; /* too short for their kind, or of no known kind */
};

/* Records handled per drain: past it the drain stops (libbpf has already consumed the record
 * handed in) and the loop serves clients and timers before the next one, so a flood of samples
 * cannot starve the control socket. */
#define RINGBUF_DRAIN_BUDGET 8192

static int handle_record(struct ringbuf *s, void *data, size_t len);

static int on_record(void *ctx, void *data, size_t len)
{
	struct ringbuf *s = ctx;

	handle_record(s, data, len);
	return --s->budget ? 0 : -EAGAIN;
}

/* A sample record: false if it is shorter than its stacks say. */
static inline bool record_sample(struct ringbuf *s, const void *data, size_t len)
{
	const struct kp_sample *smp = data;
	size_t need;

	if (len < offsetof(struct kp_sample, ips))
		return false;
	need = offsetof(struct kp_sample, ips) + 8 * ((size_t)smp->n_kernel + smp->n_user);
	if (smp->n_kernel > KP_MAX_STACK || smp->n_user > KP_MAX_STACK || len < need)
		return false;
	s->ops.on_sample(s->ctx, smp);
	return true;
}

static inline bool record_thread(struct ringbuf *s, const void *data, size_t len)
{
	const struct kp_thread *th = data;

	if (len < sizeof(*th))
		return false;
	s->ops.on_thread(s->ctx, th->hdr.tgid, th->tid, th->creator);
	return true;
}

static inline bool record_fork(struct ringbuf *s, const void *data, size_t len)
{
	const struct kp_fork *f = data;

	if (len < sizeof(*f))
		return false;
	s->ops.on_fork(s->ctx, f->hdr.tgid, f->parent, f->start_ticks, f->added);
	return true;
}

static inline bool record_cgroup(struct ringbuf *s, const void *data, size_t len)
{
	const struct kp_cgjoin *c = data;

	if (len < sizeof(*c))
		return false;
	s->ops.on_cgroup(s->ctx, c->hdr.tgid, c->cgid, c->start_ticks);
	return true;
}

/* An exit or an exec record: the same layout, told apart by its kind. */
static inline bool record_lifecycle(struct ringbuf *s, const void *data, size_t len)
{
	const struct kp_lifecycle *lc = data;

	if (len < sizeof(*lc))
		return false;
	if (lc->hdr.kind == KP_REC_EXIT)
		s->ops.on_exit(s->ctx, lc->hdr.tgid, lc->start_ticks, lc->exit_code);
	else
		s->ops.on_exec(s->ctx, lc->hdr.tgid, lc->start_ticks, lc->comm);
	return true;
}

static int handle_record(struct ringbuf *s, void *data, size_t len)
{
	const struct kp_rec_hdr *h = data;

	if (len < sizeof(*h))
		goto bad;
	if (h->kind != KP_REC_SAMPLE && s->ops.on_other)
		s->ops.on_other(s->ctx, h->tgid);
	switch (h->kind) {
	case KP_REC_SAMPLE:
		if (!record_sample(s, data, len))
			goto bad;
		return 0;
	case KP_REC_CALL:
		if (len < sizeof(struct kp_call))
			goto bad;
		s->ops.on_call(s->ctx, data);
		return 0;
	case KP_REC_PATH:
		if (len < sizeof(struct kp_path))
			goto bad;
		s->ops.on_path(s->ctx, data);
		return 0;
	case KP_REC_HWBP:
		if (len < sizeof(struct kp_hwbp))
			goto bad;
		if (s->ops.on_hwbp)
			s->ops.on_hwbp(s->ctx, data);
		return 0;
	case KP_REC_THREAD:
		if (!record_thread(s, data, len))
			goto bad;
		return 0;
	case KP_REC_FORK:
		if (!record_fork(s, data, len))
			goto bad;
		return 0;
	case KP_REC_CGROUP:
		if (!record_cgroup(s, data, len))
			goto bad;
		return 0;
	case KP_REC_WATCH:
		if (len < sizeof(struct kp_execwatch))
			goto bad;
		s->ops.on_watch(s->ctx, data);
		return 0;
	case KP_REC_EXIT:
	case KP_REC_EXEC:
		if (!record_lifecycle(s, data, len))
			goto bad;
		return 0;
	}
bad:
	s->bad_records++;
	return 0;
}

int ringbuf_new(int ringbuf_fd, const struct ringbuf_ops *ops, void *ctx, struct ringbuf **ret)
{
	struct ringbuf *s;
	int err;

	if (!ops->on_sample || !ops->on_call || !ops->on_path || !ops->on_exit || !ops->on_exec ||
	    !ops->on_thread || !ops->on_fork || !ops->on_cgroup || !ops->on_watch)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = *ops;
	s->ctx = ctx;
	s->rb = ring_buffer__new(ringbuf_fd, on_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		free(s);
		return err;
	}
	*ret = s;
	return 0;
}

void ringbuf_free(struct ringbuf *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	free(s);
}

int ringbuf_epoll_fd(const struct ringbuf *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

uint64_t ringbuf_bad_records(const struct ringbuf *s)
{
	return s ? s->bad_records : 0;
}

void ringbuf_feed(struct ringbuf *s, void *data, size_t len)
{
	handle_record(s, data, len);
}

int ringbuf_drain(struct ringbuf *s)
{
	int n;

	if (s->draining)
		return 0;
	s->draining = true;
	s->budget = RINGBUF_DRAIN_BUDGET;
	n = ring_buffer__consume(s->rb);
	s->draining = false;
	if (n == -EAGAIN)
		return 1; /* budget spent: more records may wait */
	return n < 0 ? n : 0;
}
