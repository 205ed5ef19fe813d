// SPDX-License-Identifier: GPL-2.0-only
/* requests_live.c: a live subscription (kprofctl top): a timer per client that sends live.c's
 * update each interval, skipped while the last one is unsent. Apart from the one-reply requests
 * because it outlives its request: the client holds the timer until it subscribes again or goes.
 */
#include <errno.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "service/requests_internal.h"
#include "service/requests_access.h"
#include "service/requests_targets.h"
#include "service/requests_live.h"
#include "service/live.h"
#include "manager/manager.h"
#include "os/transport.h"

/* One live update for a subscribed client; skipped while its last one is still unsent (a
 * slow client gets fewer updates, never a growing queue). */
static int on_live_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct client *cl = userdata;
	Kprof__Reply rep = KPROF__REPLY__INIT;
	Kprof__StatusReply sr;
	_cleanup_free_ uint64_t *drops = NULL;
	unsigned freqs[MANAGER_MAX_FREQS];
	struct live_msg msg = {0};

	sd_event_source_set_time(src, usec + live_interval_ms(cl->live) * 1000ULL);
	if (transport_busy(cl->tc))
		return 0;
	manager_drain(cl->rq->m); /* the interval's samples, not those of the last timer drain */
	if (requests_fill_status(cl->rq, &sr, &drops, freqs) < 0 ||
	    live_update(cl->live, requests_view(cl), &msg) < 0) {
		live_msg_release(&msg);
		requests_error(cl, -ENOMEM, "cannot build the live update");
	} else {
		msg.up.status = &sr;
		rep.body_case = KPROF__REPLY__BODY_UPDATE;
		rep.update = &msg.up;
		requests_queue(cl, &rep);
		live_msg_release(&msg);
	}
	transport_flush(cl->tc); /* may free cl (a write error) */
	return 0;
}

void requests_live_stop(struct client *cl)
{
	cl->live_timer = sd_event_source_disable_unref(cl->live_timer);
	live_free(cl->live);
	cl->live = NULL;
}

void requests_subscribe(struct client *cl, const Kprof__SubscribeRequest *req)
{
	int err;

	requests_live_stop(cl);
	for (size_t i = 0; i < req->n_pids; i++) {
		struct target *t =
		    manager_find_for(cl->rq->m, req->pids[i], requests_visible_to, cl);

		if (!t)
			t = manager_find(cl->rq->m, req->pids[i]);

		if (!t) {
			requests_error(cl, -ENOENT,
				       "pid %u is not attached and no profile of it is kept",
				       req->pids[i]);
			return;
		}
		if (!requests_may_read(cl, t->uid)) {
			requests_error(cl, -EPERM, "permission denied: pid %u belongs to uid %u",
				       req->pids[i], t->uid);
			return;
		}
	}
	err = live_new(cl->rq->m, req, cl->uid, cl->reader, &cl->live);
	if (err < 0) {
		requests_error(cl, err,
			       err == -E2BIG	? "too many pids (at most 64)"
			       : err == -ERANGE ? "interval must be 100-60000 ms"
						: "out of memory");
		return;
	}
	/* The counts so far are the baseline: the first update, one interval from now, shows
	 * that interval, as every other one does. */
	manager_drain(cl->rq->m);
	err = live_baseline(cl->live, requests_view(cl));
	if (err < 0) {
		requests_live_stop(cl);
		requests_error(cl, err, "out of memory");
		return;
	}
	err = sd_event_add_time_relative(cl->rq->m->event, &cl->live_timer, CLOCK_MONOTONIC,
					 live_interval_ms(cl->live) * 1000ULL, 1000, on_live_tick,
					 cl);
	if (err >= 0) /* a repeating timer, not a one-shot: each tick moves it on */
		err = sd_event_source_set_enabled(cl->live_timer, SD_EVENT_ON);
	if (err < 0) {
		requests_live_stop(cl);
		requests_error(cl, err, "cannot start the live timer: %s", strerror(-err));
	}
}
