// SPDX-License-Identifier: GPL-2.0-only
/* hwcalls.c: exact mode on JIT code uprobes cannot reach (anonymous memory: V8, HotSpot, ...):
 * a hardware execute breakpoint at each function's entry counts its calls (hwbp.c).
 *
 * A thread has four debug registers, so four functions are counted at once, exactly: the
 * events only count (no BPF program, no ring buffer), and the timer reads them back every
 * HWCALLS_SYNC_MS into exact mode's counts. More functions take turns of HWCALLS_ROTATE_MS in
 * groups of four (round robin): each one's count is then its count over its turns scaled to the
 * whole time (hwbranch_estimate), and marked estimated, with the fraction of the time covered.
 * At every turn the first bytes of the functions are read again: code that changed (recompiled,
 * freed and reused) stops the counting, saying so, and what was counted stays. Calls only:
 * breakpoints at returns would cost four more registers, so exact mode's calling contexts (the
 * exact HCCT) come from uprobes alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/hwbranch.h"
#include "os/clock.h"
#include "kernel/hwbp.h"
#include "exact/hwcalls.h"
#include "os/log.h"

static size_t ngroups(const struct hwcalls *h)
{
	return (h->n + HWBP_SLOTS - 1) / HWBP_SLOTS;
}

static size_t group_first(const struct hwcalls *h)
{
	return h->group * HWBP_SLOTS;
}

static size_t group_len(const struct hwcalls *h)
{
	size_t first = group_first(h);

	return h->n - first < HWBP_SLOTS ? h->n - first : HWBP_SLOTS;
}

int hwcalls_add(struct hwcalls *h, uint32_t id, uint64_t addr, const char *name, char *err,
		size_t errlen)
{
	struct hwcalls_func *v, *f;
	int r;

	if (h->n == HWCALLS_MAX) {
		snprintf(err, errlen,
			 "more than %d functions in anonymous memory to count with hardware "
			 "breakpoints",
			 HWCALLS_MAX);
		return -E2BIG;
	}
	v = realloc(h->f, (h->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->f = v;
	f = &h->f[h->n];
	*f = (struct hwcalls_func){.id = id, .addr = addr, .name = strdup(name)};
	if (!f->name)
		return -ENOMEM;
	r = hwbp_read_code(h->pid, addr, f->code, sizeof(f->code));
	if (r < 0) {
		snprintf(err, errlen, "cannot read the code of %s at 0x%" PRIx64 ": %s", name, addr,
			 strerror(-r));
		free(f->name);
		return r;
	}
	h->n++;
	return 0;
}

/* The functions of the group on still hold the bytes they had when planned? Else why. */
static bool code_same(struct hwcalls *h)
{
	for (size_t i = group_first(h); i < group_first(h) + group_len(h); i++) {
		uint8_t now[HWCALLS_CHECK_BYTES];
		int r = hwbp_read_code(h->pid, h->f[i].addr, now, sizeof(now));

		if (r == -ESRCH)
			return true; /* the process is gone: its end comes as such */
		if (r < 0 || memcmp(now, h->f[i].code, sizeof(now))) {
			snprintf(h->stopped, sizeof(h->stopped),
				 "the code of %s at 0x%" PRIx64
				 " changed (recompiled or freed): breakpoints taken away, the "
				 "counts so far kept",
				 h->f[i].name, h->f[i].addr);
			return false;
		}
	}
	return true;
}

/* Close the group on, adding its counts and time. */
static void group_close(struct hwcalls *h)
{
	uint64_t c[HWBP_SLOTS], now = now_ns(CLOCK_MONOTONIC);
	size_t first = group_first(h);

	if (!h->set)
		return;
	if (hwbp_set_read(h->set, c, HWBP_SLOTS) == 0)
		for (size_t i = 0; i < group_len(h); i++) {
			h->f[first + i].counted += c[i];
			h->f[first + i].covered_ns += now - h->on_since_ns;
		}
	hwbp_set_free(h->set);
	h->set = NULL;
	h->on_ns += now - h->on_since_ns;
	h->on_since_ns = 0;
}

static int group_open(struct hwcalls *h, char *err, size_t errlen)
{
	uint64_t addrs[HWBP_SLOTS];
	size_t first = group_first(h), n = group_len(h);
	int r;

	for (size_t i = 0; i < n; i++)
		addrs[i] = h->f[first + i].addr;
	r = hwbp_set_open(h->pid, addrs, n, -1, &h->set, err, errlen);
	if (r < 0)
		return r;
	h->on_since_ns = now_ns(CLOCK_MONOTONIC);
	h->turns++;
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct hwcalls *h = userdata;
	bool rotate = h->n > HWBP_SLOTS;
	char err[256];

	if (!h->set)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (!code_same(h)) {
		group_close(h);
		log_warn("pid %d: exact mode: %s", h->pid, h->stopped);
		hwcalls_sync(h, h->countsp, h->ncountsp);
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	}
	if (rotate) {
		group_close(h);
		h->group = hwbranch_rotate(ngroups(h), h->group + 1);
		if (group_open(h, err, sizeof(err)) < 0) {
			snprintf(h->stopped, sizeof(h->stopped), "%s", err);
			log_warn("pid %d: exact mode: hardware breakpoints stopped: %s", h->pid,
				 err);
			hwcalls_sync(h, h->countsp, h->ncountsp);
			return sd_event_source_set_enabled(s, SD_EVENT_OFF);
		}
	}
	hwcalls_sync(h, h->countsp, h->ncountsp);
	return sd_event_source_set_time(s, usec + (rotate ? HWCALLS_ROTATE_MS : HWCALLS_SYNC_MS) *
						      1000ULL);
}

int hwcalls_on(struct hwcalls *h, sd_event *event, char *err, size_t errlen)
{
	unsigned ms = h->n > HWBP_SLOTS ? HWCALLS_ROTATE_MS : HWCALLS_SYNC_MS;
	int r;

	if (!h->n || h->set)
		return 0;
	if (h->stopped[0]) {
		snprintf(err, errlen, "%s", h->stopped);
		return -ESTALE;
	}
	r = group_open(h, err, errlen);
	if (r < 0)
		return r;
	if (!h->timer)
		r = sd_event_add_time_relative(event, &h->timer, CLOCK_MONOTONIC, ms * 1000ULL,
					       1000, on_timer, h);
	else
		r = sd_event_source_set_time_relative(h->timer, ms * 1000ULL);
	if (r >= 0)
		r = sd_event_source_set_enabled(h->timer, SD_EVENT_ON);
	if (r < 0) {
		snprintf(err, errlen, "cannot arm the breakpoints' timer: %s", strerror(-r));
		group_close(h);
	}
	return r;
}

void hwcalls_off(struct hwcalls *h)
{
	group_close(h);
	if (h->timer)
		sd_event_source_set_enabled(h->timer, SD_EVENT_OFF);
	if (h->countsp)
		hwcalls_sync(h, h->countsp, h->ncountsp);
}

void hwcalls_sync(struct hwcalls *h, uint64_t **counts, size_t *ncounts)
{
	uint64_t live[HWBP_SLOTS] = {0}, now = now_ns(CLOCK_MONOTONIC), total, on = 0;
	size_t first = group_first(h), need = 0;

	if (!counts || !ncounts)
		return;
	for (size_t i = 0; i < h->n; i++)
		if (h->f[i].id + 1 > need)
			need = h->f[i].id + 1;
	if (need > *ncounts) {
		uint64_t *v = realloc(*counts, need * sizeof(*v));

		if (!v)
			return;
		memset(v + *ncounts, 0, (need - *ncounts) * sizeof(*v));
		*counts = v;
		*ncounts = need;
	}
	if (h->set) {
		hwbp_set_read(h->set, live, HWBP_SLOTS);
		on = now - h->on_since_ns;
	}
	total = h->on_ns + on;
	for (size_t i = 0; i < h->n; i++) {
		bool in = h->set && i >= first && i < first + group_len(h);
		uint64_t c = h->f[i].counted + (in ? live[i - first] : 0);
		uint64_t cov = h->f[i].covered_ns + (in ? on : 0);

		(*counts)[h->f[i].id] = h->n > HWBP_SLOTS ? hwbranch_estimate(c, cov, total) : c;
	}
}

bool hwcalls_estimated(const struct hwcalls *h)
{
	return h && h->n > HWBP_SLOTS;
}

uint64_t hwcalls_hits(const struct hwcalls *h)
{
	uint64_t live[HWBP_SLOTS] = {0}, n = 0;

	if (!h)
		return 0;
	if (h->set)
		hwbp_set_read(h->set, live, HWBP_SLOTS);
	for (size_t i = 0; i < h->n; i++)
		n += h->f[i].counted;
	for (size_t i = 0; i < HWBP_SLOTS; i++)
		n += live[i];
	return n;
}

double hwcalls_covered(const struct hwcalls *h)
{
	uint64_t on = h && h->set ? now_ns(CLOCK_MONOTONIC) - h->on_since_ns : 0, total;
	size_t first;
	double sum = 0;

	if (!h || !h->n)
		return 0;
	total = h->on_ns + on;
	if (!total)
		return h->n > HWBP_SLOTS ? 0 : 1.0;
	first = group_first(h);
	for (size_t i = 0; i < h->n; i++) {
		bool in = h->set && i >= first && i < first + group_len(h);

		sum += (double)(h->f[i].covered_ns + (in ? on : 0)) / (double)total;
	}
	return sum / (double)h->n;
}

void hwcalls_free(struct hwcalls *h)
{
	if (!h)
		return;
	group_close(h);
	h->timer = sd_event_source_disable_unref(h->timer);
	for (size_t i = 0; i < h->n; i++)
		free(h->f[i].name);
	free(h->f);
	free(h);
}
