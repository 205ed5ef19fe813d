// SPDX-License-Identifier: GPL-2.0-only
/* ringbuf.c: drain the BPF ring buffer and hand validated records to the manager.
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

#include "manager.h"
#include "ringbuf.h"
#include "log.h"

struct ringbuf {
	struct manager *m;
	struct ring_buffer *rb;
	bool draining;	 /* libbpf's consume is not reentrant: a record handler may ask to drain */
	unsigned budget; /* records left in this drain */
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

static int handle_record(struct ringbuf *s, void *data, size_t len)
{
	const struct kp_rec_hdr *h = data;

	if (len < sizeof(*h))
		goto bad;
	switch (h->kind) {
	case KP_REC_SAMPLE: {
		const struct kp_sample *smp = data;
		size_t need;

		if (len < offsetof(struct kp_sample, ips))
			goto bad;
		need = offsetof(struct kp_sample, ips) + 8 * ((size_t)smp->n_kernel + smp->n_user);
		if (smp->n_kernel > KP_MAX_STACK || smp->n_user > KP_MAX_STACK || len < need)
			goto bad;
		manager_on_sample(s->m, smp);
		return 0;
	}
	case KP_REC_CALL:
		if (len < sizeof(struct kp_call))
			goto bad;
		manager_on_call(s->m, data);
		return 0;
	case KP_REC_PATH:
		if (len < sizeof(struct kp_path))
			goto bad;
		manager_on_path(s->m, data);
		return 0;
	case KP_REC_EXIT:
	case KP_REC_EXEC: {
		const struct kp_lifecycle *lc = data;

		if (len < sizeof(*lc))
			goto bad;
		if (h->kind == KP_REC_EXIT)
			manager_on_exit(s->m, h->tgid, lc->start_ticks, lc->exit_code);
		else
			manager_on_exec(s->m, h->tgid, lc->start_ticks);
		return 0;
	}
	}
bad:
	s->m->bad_records++;
	return 0;
}

int ringbuf_new(struct manager *m, int ringbuf_fd, struct ringbuf **ret)
{
	struct ringbuf *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->m = m;
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
