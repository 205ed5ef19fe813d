// SPDX-License-Identifier: GPL-2.0-only
/* worker.c: one thread that runs kprofd's long builds off its event loop.
 *
 * kprofd is one event loop: while it builds an answer nothing drains the ring buffers, and a
 * whole-host pprof of 1,000 processes takes seconds of CPU, more than the ring holds on a large
 * host (BENCHMARKS.md, "A scrape off the loop"). A job that needs seconds is made
 * self-contained in the loop (its input copied or packed) and handed to this thread; its end
 * comes back to the loop through an eventfd, and done() runs there. One thread: the jobs are
 * rare and large, and one core is all the daemon's builds may take beside the loop.
 *
 * The queue is a list under a mutex, capped (max_jobs queued or running: -EBUSY past it, the
 * caller builds in the loop or answers busy). The thread blocks every signal (the loop takes
 * them through signalfd). worker_free stops the thread after its running job and hands every
 * job back through done().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "os/clock.h"
#include "os/log.h"
#include "os/worker.h"

struct worker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct worker_job *queue, *queue_tail; /* to run, in order */
	struct worker_job *ended;	       /* run, done() not called yet */
	bool stop, started;
	unsigned n, max; /* queued, running or ended: at most max */
	int efd;
	sd_event_source *io;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct worker_job *j;
	uint64_t one = 1, t0;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->stop && !w->queue)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		j = w->queue;
		w->queue = j->next;
		if (!w->queue)
			w->queue_tail = NULL;
		pthread_mutex_unlock(&w->mu);
		t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		j->run(j);
		j->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		pthread_mutex_lock(&w->mu);
		j->next = w->ended;
		w->ended = j;
		if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_warn("worker: eventfd: %m");
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* The jobs that ended, handed to their done() in the loop (outside the lock, in the order
 * they ended). */
static void deliver(struct worker *w)
{
	struct worker_job *list, *rev = NULL, *next;

	pthread_mutex_lock(&w->mu);
	list = w->ended;
	w->ended = NULL;
	for (struct worker_job *j = list; j; j = next) {
		next = j->next;
		j->next = rev;
		rev = j;
		w->n--;
	}
	pthread_mutex_unlock(&w->mu);
	for (struct worker_job *j = rev; j; j = next) {
		next = j->next;
		j->done(j, true);
	}
}

static int on_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	uint64_t v;

	(void)s;
	(void)revents;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("worker: eventfd: %m");
	deliver(userdata);
	return 0;
}

int worker_new(sd_event *e, unsigned max_jobs, struct worker **out)
{
	struct worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	if (!w)
		return -ENOMEM;
	w->max = max_jobs ? max_jobs : 1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		err = -errno;
		goto fail;
	}
	err = sd_event_add_io(e, &w->io, w->efd, EPOLLIN, on_event, w);
	if (err < 0)
		goto fail;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&w->th, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0)
		goto fail;
	w->started = true;
	pthread_setname_np(w->th, "kprofd-build");
	*out = w;
	return 0;
fail:
	worker_free(w);
	return err;
}

void worker_free(struct worker *w)
{
	struct worker_job *next;

	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th, NULL);
	}
	deliver(w);
	for (struct worker_job *j = w->queue; j; j = next) {
		next = j->next;
		j->done(j, false);
	}
	sd_event_source_disable_unref(w->io);
	if (w->efd >= 0)
		close(w->efd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

int worker_submit(struct worker *w, struct worker_job *j)
{
	if (!w || !j || !j->run || !j->done)
		return -EINVAL;
	pthread_mutex_lock(&w->mu);
	if (w->n >= w->max) {
		pthread_mutex_unlock(&w->mu);
		return -EBUSY;
	}
	j->next = NULL;
	j->cpu_ns = 0;
	if (w->queue_tail)
		w->queue_tail->next = j;
	else
		w->queue = j;
	w->queue_tail = j;
	w->n++;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}
