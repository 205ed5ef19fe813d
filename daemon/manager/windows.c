// SPDX-License-Identifier: GPL-2.0-only
/* windows.c: each target's samples in time windows, kept in memory and in the state directory,
 * and the profile of a time range built from them (ARCHITECTURE.md §1.6).
 *
 * Every [windows] seconds a timer cuts a window of every target that got samples: the stacks
 * whose counts grew since the last cut (profile_take_recent: the per-sample path pays one add)
 * and the functions they name, packed as a kprof.SavedProfile, framed with a CRC (window.h),
 * handed to the pure index (daemon/lib/window.c). Then the windows of the tick (of every
 * target) are written to the state directory as one batch file, wb-SEQ.kpw (SEQ: its first
 * window's), their frames one after the other: one write and one fsync a tick whatever the
 * targets (atomically: temporary file, fsync, rename; a crash loses at most the tick being
 * written, one window a target). A tick looks at what changed, not at what is kept: the
 * attached targets and the ended ones with samples not cut yet (manager_window_pending: they
 * ended, or a late sample came), never every kept profile; the writer starts at the first
 * unsaved window, and retention walks the index only when something is due (window.c). ticks
 * and steps (targets and index entries looked at) are debug counters in status --json, which
 * a test checks for staying flat as kept profiles pile up. Files of one window each, w-SEQ-PID.kpw
 * (kprofd before batches), are still read. A failed write (a full disk) leaves the windows in
 * memory, counted, and they are tried again (in the next batch) at the next tick. A range query
 * cuts the target's window at once (so "the last minute" includes the last second), then
 * decodes the windows whose middle lies in the range, from memory or from their files, and
 * merges them: stacks into one profile (equal functions and stacks added up), and each
 * window's summary (its m heaviest contexts, exact: window_summary_exact) into one HCCT
 * (window_hcct_merge); a window not in memory is read from its file at its offset. At start
 * every window file is read and checked; one with a frame whose CRC or content is wrong (a
 * torn write) is renamed .bad, said in the log and counted (all its windows with it); the
 * others are kept in the index, on disk until a range reads them.
 *
 * Windows are ordered, aged and measured by CLOCK_BOOTTIME (with the boot's id: a window of
 * an earlier boot is aged by CLOCK_REALTIME), and shown and selected by the CLOCK_REALTIME
 * read when they were cut: a clock set back or forward changes no window's length and no
 * order, only the wall time the next windows carry.
 *
 * A target attached with --off-cpu has its off-CPU time in its windows too: the off-CPU
 * stacks whose time grew since the last cut, as the window's SavedProfile.off_cpu, and a
 * range merges them into an off-CPU profile of its own (wrange.off), so that report, folded
 * and export --off-cpu take --since/--until.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "os/clock.h"
#include "kprof/array.h"
#include "kprof/cleanup.h"
#include "kprof/saved.h"
#include "kprof/window.h"
#include "os/log.h"
#include "manager/manager.h"
#include "os/store.h"
#include "target/offcpu.h"
#include "target/target.h"
#include "manager/windows.h"

#define WINDOW_SUFFIX ".kpw"
#define BATCH_PREFIX "wb-"
#define BATCH_MAX (64u << 20) /* bytes of one batch file: more windows go to another */
#define NS 1000000000ULL
#define QUERY_CUT_MIN_NS (NS / 2) /* a query cuts a window at least this long */

struct windows {
	struct manager *m;
	struct window_store *ws;
	sd_event_source *timer;
	uint64_t seq;
	uint64_t boot_id;
	uint64_t bad_files, write_failures, batches;
	uint64_t ticks, target_steps; /* cuts of every target, and the targets they looked at */
	uint64_t range_queries, range_sliced, range_slices;
};

static uint64_t read_boot_id(void)
{
	char buf[64] = "";
	uint64_t h = 1469598103934665603ULL;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	for (const char *p = buf; *p && *p != '\n'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

static void limits_of(const struct config *c, struct window_limits *l)
{
	*l = (struct window_limits){.max_age_ns = (uint64_t)c->window_max_age_sec * NS,
				    .mem_bytes = (uint64_t)c->window_memory_mb << 20,
				    .disk_bytes = (uint64_t)c->window_disk_mb << 20,
				    .mem_per_uid = (uint64_t)c->window_memory_per_uid_mb << 20,
				    .disk_per_uid = (uint64_t)c->window_disk_per_uid_mb << 20};
}

static void file_name(const struct window_entry *e, char *buf, size_t len)
{
	if (e->file)
		snprintf(buf, len, BATCH_PREFIX "%016llx" WINDOW_SUFFIX,
			 (unsigned long long)e->file);
	else
		snprintf(buf, len, "w-%016llx-%u" WINDOW_SUFFIX, (unsigned long long)e->seq,
			 e->pid);
}

/* ---- Cutting ---- */

struct cut {
	const struct profile *p;
	uint32_t *fmap; /* profile id -> window function + 1 */
	uint32_t *used; /* window function -> profile id */
	size_t nused, cap_used;
	struct cstack {
		size_t off, n;
		uint32_t tid;
		uint64_t count;
	} * st;
	size_t ns, cap_st;
	uint32_t *ids;
	size_t nids, cap_ids;
	uint64_t samples;
};

static int take(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count, void *ud)
{
	struct cut *c = ud;

	if (array_grow((void **)&c->st, &c->cap_st, c->ns + 1, sizeof(*c->st), 64) < 0 ||
	    array_grow((void **)&c->ids, &c->cap_ids, c->nids + n + 1, sizeof(*c->ids), 1024) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];

		if (!c->fmap[id]) {
			if (array_grow((void **)&c->used, &c->cap_used, c->nused + 1,
				       sizeof(*c->used), 64) < 0)
				return -ENOMEM;
			c->used[c->nused++] = id;
			c->fmap[id] = c->nused;
		}
		c->ids[c->nids + i] = c->fmap[id] - 1;
	}
	c->st[c->ns++] = (struct cstack){.off = c->nids, .n = n, .tid = tid, .count = count};
	c->nids += n;
	c->samples += count;
	return 0;
}

static void cut_release(struct cut *c)
{
	free(c->fmap);
	free(c->used);
	free(c->st);
	free(c->ids);
}

static void pack_target(const struct target *t, const struct cut *c, const struct window_entry *e,
			Kprof__Target *tg)
{
	tg->pid = t->pid;
	tg->uid = t->uid;
	tg->comm = (char *)t->comm;
	tg->state = KPROF__TARGET_STATE__TARGET_STATE_ATTACHED;
	tg->freq_hz = t->freq;
	tg->samples = c->samples;
	tg->attached_at_ns = t->attached_ns;
	tg->eps = t->eps;
	tg->hcct_kernel = t->hcct_kernel;
	tg->window_start_ns = e->start_real;
	tg->window_end_ns = e->end_real;
	tg->windows = 1;
}

/* A cut's functions and stacks as a SavedProfile's (sp points into them until cut_msg_free). */
struct cut_msg {
	Kprof__SavedFunction *fv, **fp;
	Kprof__SavedStack *sv, **spp;
};

static void cut_msg_free(struct cut_msg *cm)
{
	free(cm->fv);
	free(cm->fp);
	free(cm->sv);
	free(cm->spp);
}

static int cut_msg_build(const struct cut *c, struct cut_msg *cm, Kprof__SavedProfile *sp)
{
	cm->fv = calloc(c->nused + 1, sizeof(*cm->fv));
	cm->fp = calloc(c->nused + 1, sizeof(*cm->fp));
	cm->sv = calloc(c->ns + 1, sizeof(*cm->sv));
	cm->spp = calloc(c->ns + 1, sizeof(*cm->spp));
	if (!cm->fv || !cm->fp || !cm->sv || !cm->spp)
		return -ENOMEM;
	saved_functions(c->p, c->used, c->nused, cm->fv, cm->fp);
	for (size_t i = 0; i < c->ns; i++) { /* their ids c's */
		saved_stack(&cm->sv[i], c->st[i].tid, c->ids + c->st[i].off, c->st[i].n,
			    c->st[i].count);
		cm->spp[i] = &cm->sv[i];
	}
	sp->format = SAVED_FORMAT;
	sp->n_functions = c->nused;
	sp->functions = cm->fp;
	sp->n_stacks = c->ns;
	sp->stacks = cm->spp;
	return 0;
}

/* The window as a packed SavedProfile: c's samples, and oc's off-CPU time (NULL: none). */
static int cut_pack(const struct target *t, const struct cut *c, const struct cut *oc,
		    const struct window_entry *e, uint8_t **ret, size_t *ret_len)
{
	Kprof__SavedProfile sp = KPROF__SAVED_PROFILE__INIT, off = KPROF__SAVED_PROFILE__INIT;
	Kprof__Target tg = KPROF__TARGET__INIT;
	_cleanup_(cut_msg_free) struct cut_msg cm = {0}, ocm = {0};
	uint32_t m = hcct_slots_for_eps(t->eps);

	if (cut_msg_build(c, &cm, &sp) < 0 || (oc && cut_msg_build(oc, &ocm, &off) < 0))
		return -ENOMEM;
	/* Its summary is built from its exact stacks when a range needs it (summary_of_stacks). */
	sp.hcct_from_stacks = m != 0;
	sp.hcct_slots = m;
	pack_target(t, c, e, &tg);
	sp.target = &tg;
	if (oc) {
		off.target = &tg;
		sp.off_cpu = &off;
	}
	sp.window_start_boot = e->start_boot;
	sp.window_end_boot = e->end_boot;
	sp.boot_id = e->boot_id;
	sp.window_seq = e->seq;
	*ret_len = kprof__saved_profile__get_packed_size(&sp);
	*ret = malloc(*ret_len ? *ret_len : 1);
	if (*ret)
		kprof__saved_profile__pack(&sp, *ret);
	return *ret ? 0 : -ENOMEM;
}

/* One batch file of the windows not on disk from index *i on (at most BATCH_MAX bytes, or one
 * window): written, and marked saved; *i moves past them. 0 or a negative errno (they stay
 * unsaved, tried again at the next tick). */
static int write_batch(struct windows *w, size_t *i)
{
	const size_t n = window_store_count(w->ws);
	_cleanup_free_ struct placed {
		uint64_t seq;
		size_t off;
	} *pl = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	size_t k = 0, bytes = 0, j;
	uint64_t id = 0;
	char name[64];
	int err;

	for (j = *i; j < n; j++) {
		const struct window_entry *e = window_store_at(w->ws, j);

		if (e->on_disk || !e->blob)
			continue;
		if (k && bytes + e->len > BATCH_MAX)
			break;
		bytes += e->len, k++;
	}
	if (!k) {
		*i = n;
		return 0;
	}
	pl = malloc(k * sizeof(*pl));
	buf = malloc(bytes);
	if (!pl || !buf)
		return -ENOMEM;
	for (k = 0, bytes = 0; *i < j; (*i)++) {
		const struct window_entry *e = window_store_at(w->ws, *i);

		if (e->on_disk || !e->blob)
			continue;
		memcpy(buf + bytes, e->blob, e->len);
		pl[k++] = (struct placed){.seq = e->seq, .off = bytes};
		bytes += e->len;
	}
	id = pl[0].seq;
	snprintf(name, sizeof(name), BATCH_PREFIX "%016llx" WINDOW_SUFFIX, (unsigned long long)id);
	err = store_write(w->m->store, name, buf, bytes);
	if (err < 0) {
		if (!w->write_failures++ || err != -ENOSPC)
			log_warn("windows %s/%s: cannot write them (%s): kept in memory, tried "
				 "again",
				 store_path(w->m->store), name, strerror(-err));
		return err;
	}
	w->batches++;
	for (size_t x = 0; x < k; x++)
		window_store_saved(w->ws, pl[x].seq, id, pl[x].off);
	return 0;
}

/* Every window not on disk yet, in batch files. */
static void persist(struct windows *w)
{
	size_t i = window_store_first_unsaved(w->ws);

	if (!w->m->store || !w->m->conf.window_disk_mb)
		return;
	window_store_count_steps(w->ws, window_store_count(w->ws) - i);
	while (i < window_store_count(w->ws))
		if (write_batch(w, &i) < 0)
			return;
}

/* The stacks of p whose counts grew since the last cut, into c: how many, or a negative
 * errno. */
static int cut_take(struct profile *p, struct cut *c)
{
	c->p = p;
	if (!profile_has_recent(p))
		return 0; /* an idle target's cut allocates nothing */
	c->fmap = calloc(profile_nfuncs(p) + 1, sizeof(*c->fmap));
	return c->fmap ? profile_take_recent(p, take, c) : -ENOMEM;
}

/* Cut t's window [t->win_start, now): 1 if one was kept, 0 if it had no samples (nor off-CPU
 * time: attach --off-cpu's waits are in its windows too). */
static int cut_target(struct windows *w, struct target *t, uint64_t now_boot, uint64_t now_real)
{
	struct profile *off = t->offcpu ? t->offcpu->prof : NULL;
	struct cut c = {0}, oc = {0};
	struct window_entry e = {0};
	_cleanup_free_ uint8_t *payload = NULL;
	size_t plen = 0;
	int err, oerr = 0;

	if (!t->win_start_boot) { /* restored, or attached before windows: from now on */
		profile_take_recent(t->profile, NULL, NULL);
		if (off)
			profile_take_recent(off, NULL, NULL);
		t->win_start_boot = now_boot, t->win_start_real = now_real;
		return 0;
	}
	err = cut_take(t->profile, &c);
	if (err >= 0 && off)
		oerr = cut_take(off, &oc);
	if (err < 0 || oerr < 0 || (!err && !oerr)) {
		cut_release(&c);
		cut_release(&oc);
		return err < 0 ? err : oerr;
	}
	e = (struct window_entry){.seq = w->seq++,
				  .pid = t->pid,
				  .uid = t->uid,
				  .attached_ns = t->attached_ns,
				  .boot_id = w->boot_id,
				  .start_boot = t->win_start_boot,
				  .end_boot = now_boot,
				  .end_real = now_real,
				  .samples = c.samples};
	/* Wall time of the start through the window's length: a clock step moves no window. */
	e.start_real =
	    now_real > now_boot - e.start_boot ? now_real - (now_boot - e.start_boot) : 0;
	t->win_start_boot = now_boot, t->win_start_real = now_real;
	err = cut_pack(t, &c, oerr > 0 ? &oc : NULL, &e, &payload, &plen);
	cut_release(&c);
	cut_release(&oc);
	if (err >= 0)
		err = window_frame(payload, plen, &e.blob, &e.len);
	if (err >= 0)
		err = window_store_add(w->ws, &e);
	if (err < 0) {
		log_warn("pid %d: a window of %llu samples is lost: %s", t->pid,
			 (unsigned long long)e.samples, strerror(-err));
		return err;
	}
	return 1;
}

static void on_drop(void *ud, const struct window_entry *e)
{
	struct windows *w = ud;
	char name[64];

	file_name(e, name, sizeof(name));
	if (w->m->store)
		store_remove(w->m->store, name);
}

static void retain(struct windows *w)
{
	struct window_limits l;

	limits_of(&w->m->conf, &l);
	window_store_set_limits(w->ws, &l);
	window_store_retain(w->ws, now_ns(CLOCK_BOOTTIME), now_ns(CLOCK_REALTIME), w->boot_id,
			    on_drop, w);
}

void windows_cut_all(struct windows *w)
{
	uint64_t boot = now_ns(CLOCK_BOOTTIME), real = now_ns(CLOCK_REALTIME);

	struct target *t;

	manager_drain(w->m);
	w->ticks++;
	manager_for_each_attached(w->m, t) {
		w->target_steps++;
		cut_target(w, t, boot, real);
	}
	while ((t = manager_window_pop(w->m))) { /* ended, with samples not cut yet */
		w->target_steps++;
		cut_target(w, t, boot, real);
	}
	persist(w); /* this tick's windows, and any a failed write left: one file */
	retain(w);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct windows *w = userdata;

	windows_cut_all(w);
	return sd_event_source_set_time(s, usec + w->m->conf.window_sec * 1000000ULL);
}

/* ---- Start ---- */

/* The window of one frame (file: its batch, at byte off; 0: a file of its own) into *e:
 * 0, or -EBADMSG when it is not a window. */
static int restore_frame(const uint8_t *payload, size_t plen, uint64_t file, size_t off, size_t len,
			 struct window_entry *e)
{
	Kprof__SavedProfile *sp = kprof__saved_profile__unpack(NULL, plen, payload);

	if (!sp || saved_check(sp) < 0 || !sp->window_seq || !sp->target->window_end_ns ||
	    sp->window_end_boot < sp->window_start_boot) {
		if (sp)
			kprof__saved_profile__free_unpacked(sp, NULL);
		return -EBADMSG;
	}
	*e = (struct window_entry){.seq = sp->window_seq,
				   .pid = sp->target->pid,
				   .uid = sp->target->uid,
				   .attached_ns = sp->target->attached_at_ns,
				   .boot_id = sp->boot_id,
				   .start_boot = sp->window_start_boot,
				   .end_boot = sp->window_end_boot,
				   .start_real = sp->target->window_start_ns,
				   .end_real = sp->target->window_end_ns,
				   .samples = sp->target->samples,
				   .len = len,
				   .on_disk = true, /* read again when a range needs it */
				   .file = file,
				   .off = off};
	kprof__saved_profile__free_unpacked(sp, NULL);
	return 0;
}

/* A window file: a batch (wb-ID.kpw, its frames one after the other) or one window. Every
 * frame is checked before any window of it is kept: a bad one makes the file unusable. */
static int restore_one(void *ctx, const char *name, const uint8_t *buf, size_t len)
{
	struct windows *w = ctx;
	_cleanup_free_ struct window_entry *v = NULL;
	size_t n = 0, cap = 0, off = 0;
	uint64_t file = 0;
	int err = 0;

	if (!strncmp(name, BATCH_PREFIX, strlen(BATCH_PREFIX))) {
		char *end = NULL;

		file = strtoull(name + strlen(BATCH_PREFIX), &end, 16);
		if (!file || strcmp(end, WINDOW_SUFFIX))
			err = -EBADMSG; /* not a name kprofd writes: on_drop could not remove it */
	}
	while (err >= 0 && off < len) {
		const uint8_t *payload;
		size_t plen, used;

		err = file ? window_unframe_next(buf + off, len - off, &payload, &plen, &used)
			   : window_unframe(buf, len, &payload, &plen);
		if (err < 0)
			break;
		if (!file)
			used = len;
		err = array_grow((void **)&v, &cap, n + 1, sizeof(*v), 16);
		if (err >= 0)
			err = restore_frame(payload, plen, file, off, used, &v[n]);
		if (err >= 0)
			n++, off += used;
	}
	if (err < 0 || !n) {
		w->bad_files++;
		log_warn("window file %s: %s", name,
			 err == -EPIPE	   ? "torn (shorter than its header says)"
			 : err == -EILSEQ  ? "corrupt (CRC mismatch)"
			 : err == -EBADMSG ? "not a window file, or its CRC holds but its content "
					     "is not a window"
			 : err < 0	   ? strerror(-err)
					   : "empty");
		return err < 0 ? err : -EBADMSG;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].seq >= w->seq)
			w->seq = v[i].seq + 1;
		if (window_store_add(w->ws, &v[i]) == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

int windows_new(struct manager *m, struct windows **ret)
{
	struct windows *w = calloc(1, sizeof(*w));
	struct window_limits l;
	int err, n = 0;

	if (!w)
		return -ENOMEM;
	w->m = m;
	w->seq = 1;
	w->boot_id = read_boot_id();
	limits_of(&m->conf, &l);
	err = window_store_new(&l, &w->ws);
	if (err < 0)
		goto fail;
	if (m->store) {
		n = store_foreach(m->store, WINDOW_SUFFIX, restore_one, w);
		window_store_sort(w->ws);
		retain(w);
		n = n < 0 ? 0 : (int)window_store_count(w->ws); /* windows, not files */
	}
	for (struct target *t = manager_targets_first(m); t; t = manager_targets_next(t)) {
		profile_take_recent(t->profile, NULL, NULL); /* restored: no new samples */
		if (t->offcpu)
			profile_take_recent(t->offcpu->prof, NULL, NULL);
	}
	err = sd_event_add_time_relative(m->event, &w->timer, CLOCK_MONOTONIC,
					 m->conf.window_sec * 1000000ULL, 10000, on_timer, w);
	if (err >= 0)
		err = sd_event_source_set_enabled(w->timer, SD_EVENT_ON);
	if (err < 0)
		goto fail;
	if (n > 0 || w->bad_files)
		log_info("time windows: %d restored, %llu unusable files (renamed .bad)", n,
			 (unsigned long long)w->bad_files);
	*ret = w;
	return 0;
fail:
	window_store_free(w->ws);
	free(w);
	return err;
}

void windows_free(struct windows *w)
{
	if (!w)
		return;
	windows_cut_all(w); /* the last partial windows, so that a restart loses none */
	sd_event_source_disable_unref(w->timer);
	window_store_free(w->ws);
	free(w);
}

void windows_get_stats(const struct windows *w, struct windows_stats *st)
{
	window_store_stats(w->ws, &st->s);
	if (!w->m->store || !w->m->conf.window_disk_mb)
		st->s.unsaved = 0; /* memory only by choice: nothing waits to be written */
	st->bad_files = w->bad_files;
	st->write_failures = w->write_failures;
	st->files = w->batches;
	st->ticks = w->ticks;
	st->tick_steps = w->target_steps + st->s.steps;
	st->range_queries = w->range_queries;
	st->range_sliced = w->range_sliced;
	st->range_slices = w->range_slices;
	st->window_sec = w->m->conf.window_sec;
}

/* ---- Ranges ---- */

void wrange_free(struct wrange *r)
{
	profile_free(r->prof);
	profile_free(r->off);
	hcct_tree_free(r->tree);
	memset(r, 0, sizeof(*r));
}

struct rbuild {
	struct wrange *r;
	struct window_merge *mg; /* the windows' summaries, merged as they come */
};

/* The summary of a window (hcct_from_stacks) from its exact stacks: its m heaviest user
 * contexts (all frames with hcct_kernel), as the target's HCCT sees samples
 * (window_summary_exact). Ids are the window's; kernel frames are told by the range's
 * functions (map). */
static int summary_of_stacks(const Kprof__SavedProfile *sp, const struct profile *prof,
			     const uint32_t *map, struct hcct_tree **ret, uint64_t *min)
{
	_cleanup_free_ struct window_stack *v = calloc(sp->n_stacks + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];
		size_t n = s->n_ids;

		if (!sp->target->hcct_kernel)
			for (n = 0; n < s->n_ids; n++)
				if (profile_func_is_kernel(profile_func_get(prof, map[s->ids[n]])))
					break;
		if (n && s->count)
			v[k++] = (struct window_stack){.ids = s->ids, .n = n, .count = s->count};
	}
	return window_summary_exact(v, k, sp->hcct_slots ? sp->hcct_slots : 1, ret, min);
}

/* The functions and stacks of a window's sp added to p (equal ones added up; a full p loses
 * stacks, counted by it); map gets each saved function's id in p. */
static int range_merge(struct profile *p, const Kprof__SavedProfile *sp, uint32_t *map)
{
	uint32_t ids[KP_MAX_FRAMES];

	for (size_t i = 0; i < sp->n_functions; i++) {
		const Kprof__SavedFunction *f = sp->functions[i];
		int id =
		    profile_intern(p, f->name, f->module, f->start, (enum profile_kind)f->kind);

		if (id < 0)
			return id;
		map[i] = id;
		if (f->file && f->file[0])
			profile_set_source(p, id, f->file, f->line);
	}
	for (size_t i = 0; i < sp->n_stacks; i++) {
		const Kprof__SavedStack *s = sp->stacks[i];

		for (size_t k = 0; k < s->n_ids && k < KP_MAX_FRAMES; k++) /* saved_check'd */
			ids[k] = map[s->ids[k]];
		profile_add_tid(p, s->tid, ids, s->n_ids, s->count); /* full: lost */
	}
	return 0;
}

/* A window's off-CPU time (attach --off-cpu) added to the range's off-CPU profile. */
static int range_add_offcpu(struct wrange *r, const Kprof__SavedProfile *off)
{
	_cleanup_free_ uint32_t *map = calloc(off->n_functions + 1, sizeof(*map));
	int err;

	if (!map)
		return -ENOMEM;
	if (!r->off &&
	    (err = profile_new(&(struct profile_limits){.max_stacks = r->max_stacks}, &r->off)) < 0)
		return err;
	return range_merge(r->off, off, map);
}

/* Add one window (its packed SavedProfile) to the range. */
static int range_add(struct rbuild *b, const Kprof__SavedProfile *sp)
{
	struct wrange *r = b->r;
	_cleanup_free_ uint32_t *map = calloc(sp->n_functions + 1, sizeof(*map));
	struct hcct_tree *tr = NULL;
	uint64_t min = sp->hcct_min;
	int err;

	if (!map)
		return -ENOMEM;
	if ((err = range_merge(r->prof, sp, map)) < 0 ||
	    (sp->off_cpu && (err = range_add_offcpu(r, sp->off_cpu)) < 0))
		return err;
	r->samples += sp->target->samples;
	if (!r->start || sp->target->window_start_ns < r->start)
		r->start = sp->target->window_start_ns;
	if (sp->target->window_end_ns > r->end)
		r->end = sp->target->window_end_ns;
	r->windows++;
	if (sp->hcct_from_stacks)
		err = summary_of_stacks(sp, r->prof, map, &tr, &min);
	else if (sp->n_hcct)
		err = saved_hcct_tree(sp->hcct, sp->n_hcct, sp->hcct_n, NULL, &tr);
	else
		return 0;
	if (err < 0)
		return err;
	err = window_merge_add(
	    b->mg,
	    &(struct window_summary){.tree = tr, .map = map, .nmap = sp->n_functions, .min = min});
	hcct_tree_free(tr);
	return err;
}

/* The file bytes of window i: its blob, else read from its file (*tmp then holds them). */
static int window_bytes(struct windows *w, size_t i, const uint8_t **buf, size_t *len,
			uint8_t **tmp)
{
	const struct window_entry *e = window_store_at(w->ws, i);
	char name[64];
	int err;

	*tmp = NULL;
	if (e->blob) {
		*buf = e->blob, *len = e->len;
		return 0;
	}
	if (!w->m->store)
		return -ENOENT;
	file_name(e, name, sizeof(name));
	if (e->file) {
		*len = e->len;
		err = store_read_at(w->m->store, name, e->off, e->len, tmp);
	} else {
		err = store_read(w->m->store, name, tmp, len);
	}
	*buf = *tmp;
	return err;
}

static int range_one(struct windows *w, struct rbuild *b, size_t i)
{
	_cleanup_free_ uint8_t *tmp = NULL;
	const uint8_t *buf, *payload;
	size_t len, plen;
	Kprof__SavedProfile *sp;
	int err;

	err = window_bytes(w, i, &buf, &len, &tmp);
	if (err >= 0)
		err = window_unframe(buf, len, &payload, &plen);
	if (err < 0)
		return err;
	sp = kprof__saved_profile__unpack(NULL, plen, payload);
	if (!sp || saved_check(sp) < 0) {
		if (sp)
			kprof__saved_profile__free_unpacked(sp, NULL);
		return -EBADMSG;
	}
	err = range_add(b, sp);
	kprof__saved_profile__free_unpacked(sp, NULL);
	return err;
}

/* A range being built: the windows chosen at its start (by seq: the store's indexes move as
 * windows age out), the next one to merge, and what is merged so far. */
struct wrange_job {
	struct rbuild b;
	struct wrange r;
	uint64_t *seq;
	size_t n, next, skipped;
	uint32_t pid, uid;
	uint64_t slices;
};

void wrange_job_free(struct wrange_job *j)
{
	if (!j)
		return;
	window_merge_free(j->b.mg);
	wrange_free(&j->r);
	free(j->seq);
	free(j);
}

int windows_range_begin(struct windows *w, struct target *t, bool session, uint64_t since,
			uint64_t until, struct wrange_job **ret, char *msg, size_t msglen)
{
	_cleanup_free_ size_t *sel = NULL;
	struct wrange_job *j;
	uint64_t boot = now_ns(CLOCK_BOOTTIME);
	size_t n = 0;
	int err;

	*ret = NULL;
	if (until && until <= since) {
		snprintf(msg, msglen, "the range is empty: --until is not after --since");
		return -EINVAL;
	}
	/* The current window up to now, so that a range ending now has the last samples (of an
	 * ended target too: its last window would wait for the next tick). */
	if (t->win_start_boot &&
	    (t->state != TARGET_ATTACHED || boot - t->win_start_boot >= QUERY_CUT_MIN_NS)) {
		manager_drain(w->m);
		if (cut_target(w, t, boot, now_ns(CLOCK_REALTIME)) > 0)
			persist(w);
	}
	err = window_store_select(w->ws, t->pid, session ? t->attached_ns : 0, since, until, &sel,
				  &n);
	if (err < 0)
		goto fail;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->seq = calloc(n + 1, sizeof(*j->seq)))) {
		free(j);
		err = -ENOMEM;
		goto fail;
	}
	j->b.r = &j->r;
	j->pid = t->pid;
	j->uid = t->uid;
	for (size_t i = 0; i < n; i++) {
		const struct window_entry *e = window_store_at(w->ws, sel[i]);

		if (e->uid == t->uid) /* else another user's process had this pid */
			j->seq[j->n++] = e->seq;
	}
	/* A range's profile is bounded as a target's (its off-CPU one too). */
	j->r.max_stacks = w->m->conf.max_stacks;
	err =
	    profile_new(&(struct profile_limits){.max_stacks = w->m->conf.max_stacks}, &j->r.prof);
	if (err >= 0)
		err = window_merge_new(&j->b.mg);
	if (err < 0) {
		wrange_job_free(j);
		goto fail;
	}
	*ret = j;
	return 0;
fail:
	snprintf(msg, msglen, "pid %d: the range's profile: %s", t->pid, strerror(-err));
	return err;
}

int windows_range_step(struct windows *w, struct wrange_job *j, uint64_t budget_ns, char *msg,
		       size_t msglen)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int err = 0;

	j->slices++;
	/* At least one window a step; more while the step is within its budget. */
	while (j->next < j->n) {
		int i = window_store_find(w->ws, j->seq[j->next++]);

		err = i < 0 ? i : range_one(w, &j->b, (size_t)i);
		if (err == -ENOENT || err == -EBADMSG || err == -EILSEQ || err == -EPIPE) {
			j->skipped++; /* aged out, or a file gone or damaged since: said */
			err = 0;
		}
		if (err < 0) {
			snprintf(msg, msglen, "pid %u: the range's profile: %s", j->pid,
				 strerror(-err));
			return err;
		}
		if (now_ns(CLOCK_MONOTONIC) - t0 >= budget_ns)
			break;
	}
	return j->next < j->n;
}

int windows_range_end(struct windows *w, struct wrange_job *j, struct wrange *r, char *msg,
		      size_t msglen)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!j->r.windows) {
		snprintf(msg, msglen,
			 "pid %u: no kept time window in that range (windows are cut every %u s; "
			 "kprofctl status says how many are kept)",
			 j->pid, w->m->conf.window_sec);
		return -ENODATA;
	}
	err = window_merge_finish(j->b.mg, &j->r.tree);
	if (err < 0) {
		snprintf(msg, msglen, "pid %u: the range's profile: %s", j->pid, strerror(-err));
		return err;
	}
	j->r.skipped = j->skipped;
	w->range_queries++;
	if (j->slices > 1) {
		w->range_sliced++;
		w->range_slices += j->slices;
	}
	*r = j->r;
	memset(&j->r, 0, sizeof(j->r));
	return 0;
}

int windows_range_run(struct windows *w, struct wrange_job **jp, struct target *t, bool session,
		      uint64_t since, uint64_t until, uint64_t budget_ns, struct wrange *r,
		      char *msg, size_t msglen)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!*jp)
		err = windows_range_begin(w, t, session, since, until, jp, msg, msglen);
	if (err >= 0)
		err = windows_range_step(w, *jp, budget_ns, msg, msglen);
	if (err > 0)
		return 1;
	if (err == 0)
		err = windows_range_end(w, *jp, r, msg, msglen);
	wrange_job_free(*jp);
	*jp = NULL;
	return err;
}

int windows_range(struct windows *w, struct target *t, bool session, uint64_t since, uint64_t until,
		  struct wrange *r, char *msg, size_t msglen)
{
	struct wrange_job *j = NULL;
	int err;

	while ((err = windows_range_run(w, &j, t, session, since, until, UINT64_MAX, r, msg,
					msglen)) > 0)
		;
	return err;
}
