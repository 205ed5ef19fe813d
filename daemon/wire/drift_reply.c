// SPDX-License-Identifier: GPL-2.0-only
/* drift_reply.c: a target's profile drift (kprof/drift.h, fed by target.c) as kprof.proto
 * messages: the DriftReply of `kprofctl drift` and the newest events that `kprofctl top` shows.
 * Both detectors of a target go in: the samples' (per JIT function) and the path mix of its
 * path trace, if one ran ("FUNC (paths)", keys "path N"); events merged by time. Names and keys
 * are rendered by target_drift_name and target_drift_key. Monotonic times
 * are also given as CLOCK_REALTIME, by the offset between the two clocks now.
 *
 * Nothing is lost when a target ends: its detectors' reply, as it is saved with its profile
 * (SavedProfile.drift, drift_reply_keep, capped by saved.h), is packed into the target
 * (t->drift_kept, drift_reply_end) and the detectors, with their windows of keys (up to a few
 * hundred KB), are freed; from then on, and after a restart of kprofd (the saved reply
 * restored), that packed reply is the answer, cut to the keys asked, which gives what the
 * detectors would (keys come by share, descending), and its newest events are top's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/config.h"
#include "kprof/drift.h"
#include "kprof/saved.h"
#include "os/clock.h"
#include "wire/drift_reply.h"

/* One detector's event or function: the samples' (t->drift) or the traced paths' (t->drift_paths).
 */
struct src_event {
	const struct drift_event *e;
	bool paths;
};

static void event_fill(const struct target *t, const struct src_event *se, Kprof__DriftEvent *pb,
		       char names[3][128], int64_t real_minus_mono)
{
	const struct drift_event *e = se->e;

	kprof__drift_event__init(pb);
	target_drift_name(t, se->paths, e->func, names[2], 128);
	target_drift_key(t, se->paths, e->gained, names[0], 128);
	target_drift_key(t, se->paths, e->lost, names[1], 128);
	pb->seq = e->seq;
	pb->function = names[2];
	pb->time_ns = e->time_ns;
	pb->realtime_ns = (uint64_t)((int64_t)e->time_ns + real_minus_mono);
	pb->overlap = e->overlap;
	pb->window_samples = e->window;
	pb->reference_samples = e->ref;
	pb->function_samples = e->samples;
	pb->gained = names[0];
	pb->gained_reference = e->gained_ref;
	pb->gained_window = e->gained_win;
	pb->lost = names[1];
	pb->lost_reference = e->lost_ref;
	pb->lost_window = e->lost_win;
	pb->reference_ns = e->ref_ns;
}

static int cmp_time(const void *a, const void *b)
{
	const struct src_event *x = a, *y = b;

	return (x->e->time_ns > y->e->time_ns) - (x->e->time_ns < y->e->time_ns);
}

/* The newest max events of t's kept result (an ended target's), their strings copied. */
static int events_kept(const struct target *t, size_t max, struct drift_events_msg *m)
{
	Kprof__DriftReply *d = kprof__drift_reply__unpack(NULL, t->drift_kept_len, t->drift_kept);
	size_t first, n;

	if (!d)
		return -EBADMSG;
	first = d->n_events > max ? d->n_events - max : 0;
	n = d->n_events - first;
	m->ev = calloc(n + 1, sizeof(*m->ev));
	m->ep = calloc(n + 1, sizeof(*m->ep));
	m->names = calloc(n + 1, sizeof(*m->names));
	for (size_t i = first; m->ev && m->ep && m->names && i < d->n_events; i++) {
		Kprof__DriftEvent *e = &m->ev[m->n];
		char(*nm)[128] = m->names[m->n];

		*e = *d->events[i];
		e->base.n_unknown_fields = 0;
		e->base.unknown_fields = NULL;
		snprintf(nm[0], sizeof(nm[0]), "%s", e->gained ? e->gained : "");
		snprintf(nm[1], sizeof(nm[1]), "%s", e->lost ? e->lost : "");
		snprintf(nm[2], sizeof(nm[2]), "%s", e->function ? e->function : "");
		e->gained = nm[0];
		e->lost = nm[1];
		e->function = nm[2];
		m->ep[m->n++] = e;
	}
	kprof__drift_reply__free_unpacked(d, NULL);
	return m->ev && m->ep && m->names ? 0 : -ENOMEM;
}

int drift_events_build(const struct target *t, size_t max, struct drift_events_msg *m)
{
	size_t na = t->drift ? drift_nevents(t->drift) : 0;
	size_t nb = t->drift_paths ? drift_nevents(t->drift_paths) : 0, first;
	int64_t off = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
	_cleanup_free_ struct src_event *all = calloc(na + nb + 1, sizeof(*all));

	memset(m, 0, sizeof(*m));
	if (!all)
		return -ENOMEM;
	if (!t->drift && t->drift_kept)
		return events_kept(t, max, m);
	for (size_t i = 0; i < na; i++)
		all[i] = (struct src_event){drift_event_get(t->drift, i), false};
	for (size_t i = 0; i < nb; i++)
		all[na + i] = (struct src_event){drift_event_get(t->drift_paths, i), true};
	qsort(all, na + nb, sizeof(*all), cmp_time);
	first = na + nb > max ? na + nb - max : 0;
	m->ev = calloc(na + nb - first + 1, sizeof(*m->ev));
	m->ep = calloc(na + nb - first + 1, sizeof(*m->ep));
	m->names = calloc(na + nb - first + 1, sizeof(*m->names));
	if (!m->ev || !m->ep || !m->names)
		return -ENOMEM;
	for (size_t i = first; i < na + nb; i++) {
		event_fill(t, &all[i], &m->ev[m->n], m->names[m->n], off);
		m->ep[m->n] = &m->ev[m->n];
		m->n++;
	}
	return 0;
}

void drift_events_release(struct drift_events_msg *m)
{
	free(m->ev);
	free(m->ep);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

static void func_fill(const struct target *t, bool paths, const struct drift_func_info *fi,
		      Kprof__DriftFunction *pb, char *name, size_t len)
{
	const struct profile_func *f =
	    paths ? NULL : profile_func_get(t->profile, profile_canon(t->profile, fi->func));

	kprof__drift_function__init(pb);
	target_drift_name(t, paths, fi->func, name, len);
	pb->function = name;
	pb->module = (char *)(f ? f->module : "");
	pb->address = f ? f->start : 0;
	pb->state = (char *)(fi->state == DRIFT_LEARNING   ? "learning"
			     : fi->state == DRIFT_ENDED ? "ended"
							: "watching");
	pb->samples = fi->samples;
	pb->reference_samples = fi->ref;
	pb->window_samples = fi->window;
	pb->overlap = fi->overlap;
	pb->min_overlap = fi->min_overlap;
	pb->drifts = fi->drifts;
	pb->refreshes = fi->refreshes;
	pb->keys = fi->keys;
}

/* The functions of one detector from m->fv[*nf] on, their keys from m->kv[*nk] on. */
static void funcs_fill(const struct target *t, const struct drift *d, bool paths, unsigned keys,
		       struct drift_reply_msg *m, size_t *nf, size_t *nk)
{
	struct drift_key dk[DRIFT_REPLY_MAX_KEYS];

	for (size_t i = 0; d && i < drift_nfuncs(d); i++) {
		Kprof__DriftFunction *pb = &m->fv[*nf];
		struct drift_func_info fi;
		size_t n;

		if (drift_func_get(d, i, &fi) < 0)
			continue;
		func_fill(t, paths, &fi, pb, m->fnames[*nf], sizeof(m->fnames[*nf]));
		n = drift_func_keys(d, i, dk, keys);
		pb->top_keys = &m->kp[*nk];
		pb->n_top_keys = n;
		for (size_t j = 0; j < n; j++, (*nk)++) {
			kprof__drift_key__init(&m->kv[*nk]);
			target_drift_key(t, paths, dk[j].key, m->keys[*nk], sizeof(m->keys[*nk]));
			m->kv[*nk].key = m->keys[*nk];
			m->kv[*nk].reference = dk[j].ref;
			m->kv[*nk].window = dk[j].win;
			m->kp[*nk] = &m->kv[*nk];
		}
		m->fp[(*nf)++] = pb;
	}
}

int drift_reply_build(const struct target *t, unsigned keys, struct drift_reply_msg *m)
{
	const struct drift_config *c = drift_get_config(t->drift);
	size_t nf = drift_nfuncs(t->drift), done = 0, nk = 0;
	struct drift_stats st, sp = {0};
	int err;

	memset(m, 0, sizeof(*m));
	kprof__drift_reply__init(&m->r);
	if (t->drift_paths)
		nf += drift_nfuncs(t->drift_paths);
	keys = keys < 1 ? 1 : keys > DRIFT_REPLY_MAX_KEYS ? DRIFT_REPLY_MAX_KEYS : keys;
	err = drift_events_build(t, SIZE_MAX, &m->events);
	if (err < 0)
		return err;
	m->fv = calloc(nf + 1, sizeof(*m->fv));
	m->fp = calloc(nf + 1, sizeof(*m->fp));
	m->fnames = calloc(nf + 1, sizeof(*m->fnames));
	m->kv = calloc(nf * keys + 1, sizeof(*m->kv));
	m->kp = calloc(nf * keys + 1, sizeof(*m->kp));
	m->keys = calloc(nf * keys + 1, sizeof(*m->keys));
	if (!m->fv || !m->fp || !m->fnames || !m->kv || !m->kp || !m->keys)
		return -ENOMEM;
	funcs_fill(t, t->drift, false, keys, m, &done, &nk);
	funcs_fill(t, t->drift_paths, true, keys, m, &done, &nk);
	drift_get_stats(t->drift, &st);
	if (t->drift_paths)
		drift_get_stats(t->drift_paths, &sp);
	m->r.window = c->window;
	m->r.min_samples = c->min_samples;
	m->r.refresh = c->refresh;
	m->r.threshold = c->threshold;
	m->r.n_functions = done;
	m->r.functions = m->fp;
	m->r.n_events = m->events.n;
	m->r.events = m->events.ep;
	m->r.samples = st.samples;
	m->r.functions_over = st.funcs_over;
	m->r.keys_over = st.keys_over + sp.keys_over;
	m->r.events_total = st.events + sp.events;
	m->r.end_after = t->env->conf->drift_end_after;
	m->r.functions_ended = st.ended;
	m->r.functions_recycled = st.recycled;
	return 0;
}

void drift_reply_release(struct drift_reply_msg *m)
{
	drift_events_release(&m->events);
	free(m->fv);
	free(m->fp);
	free(m->fnames);
	free(m->kv);
	free(m->kp);
	free(m->keys);
	if (m->saved)
		kprof__drift_reply__free_unpacked(m->saved, NULL);
	memset(m, 0, sizeof(*m));
}

_Static_assert(DRIFT_REPLY_MAX_KEYS <= SAVED_MAX_DRIFT_KEYS, "a saved reply has every key asked");
_Static_assert(sizeof(((struct drift_reply_msg *)0)->fnames[0]) <= SAVED_MAX_DRIFT_NAME &&
		   sizeof(((struct drift_reply_msg *)0)->keys[0]) <= SAVED_MAX_DRIFT_NAME &&
		   sizeof(((struct drift_events_msg *)0)->names[0][0]) <= SAVED_MAX_DRIFT_NAME,
	       "names fit a saved reply");

/* The first SAVED_MAX_DRIFT_FUNCS functions and the newest SAVED_MAX_DRIFT_EVENTS events of a
 * built reply, the rest counted. */
static void reply_cut(struct drift_reply_msg *m)
{
	if (m->r.n_functions > SAVED_MAX_DRIFT_FUNCS) {
		m->r.functions_left_out = (uint32_t)(m->r.n_functions - SAVED_MAX_DRIFT_FUNCS);
		m->r.n_functions = SAVED_MAX_DRIFT_FUNCS;
	}
	if (m->r.n_events > SAVED_MAX_DRIFT_EVENTS) {
		m->r.events_left_out = m->r.n_events - SAVED_MAX_DRIFT_EVENTS;
		m->r.events += m->r.events_left_out;
		m->r.n_events = SAVED_MAX_DRIFT_EVENTS;
	}
}

/* The answer for an ended target: its result, kept since it ended. */
static void mark_kept(const struct target *t, struct drift_reply_msg *m)
{
	m->r.kept = true;
	m->r.kept_ended_ns = t->state == TARGET_ATTACHED ? t->drift_kept_ns : t->ended_ns;
	m->r.kept_reason = (char *)(t->state == TARGET_ATTACHED ? "kprofd stopped"
				    : t->state == TARGET_EXITED ? "exited"
								: "detached");
}

int drift_reply_keep(const struct target *t, struct drift_reply_msg *m)
{
	int err = drift_reply_build(t, SAVED_MAX_DRIFT_KEYS, m);

	if (err < 0)
		return err;
	reply_cut(m);
	if (t->state != TARGET_ATTACHED)
		mark_kept(t, m);
	return 0;
}

/* The result restored with t's profile, its functions copied with at most keys keys each. */
static int reply_restored(const struct target *t, unsigned keys, struct drift_reply_msg *m)
{
	Kprof__DriftReply *d = kprof__drift_reply__unpack(NULL, t->drift_kept_len, t->drift_kept);
	size_t n;

	if (!d)
		return -EBADMSG;
	m->saved = d;
	n = d->n_functions;
	m->fv = calloc(n + 1, sizeof(*m->fv));
	m->fp = calloc(n + 1, sizeof(*m->fp));
	if (!m->fv || !m->fp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		m->fv[i] = *d->functions[i];
		if (m->fv[i].n_top_keys > keys)
			m->fv[i].n_top_keys = keys;
		m->fp[i] = &m->fv[i];
	}
	m->r = *d;
	m->r.functions = m->fp;
	m->r.target = NULL;
	return 0;
}

int drift_reply_answer(const struct target *t, unsigned keys, struct drift_reply_msg *m)
{
	int err;

	keys = keys < 1 ? 1 : keys > DRIFT_REPLY_MAX_KEYS ? DRIFT_REPLY_MAX_KEYS : keys;
	if (t->drift) {
		err = drift_reply_build(t, keys, m);
		if (err < 0 || t->state == TARGET_ATTACHED)
			return err;
		reply_cut(m); /* as it is saved */
	} else {
		memset(m, 0, sizeof(*m));
		/* Attached without detectors: a result kept across a restart of kprofd, if any. */
		if (!t->drift_kept)
			return -ENODATA;
		err = reply_restored(t, keys, m);
		if (err < 0)
			return err;
		m->r.kept_restored = !t->drift_kept_at_end;
	}
	mark_kept(t, m);
	return 0;
}

int drift_reply_end(struct target *t)
{
	struct drift_reply_msg m;
	uint8_t *buf;
	size_t len;
	int err;

	if (!t->drift || t->drift_kept)
		return 0;
	err = drift_reply_keep(t, &m);
	if (err < 0) {
		drift_reply_release(&m);
		return err;
	}
	len = kprof__drift_reply__get_packed_size(&m.r);
	buf = malloc(len ? len : 1);
	if (buf)
		len = kprof__drift_reply__pack(&m.r, buf);
	drift_reply_release(&m);
	if (!buf)
		return -ENOMEM;
	t->drift_kept = buf;
	t->drift_kept_len = len;
	t->drift_kept_at_end = true;
	drift_free(t->drift);
	drift_free(t->drift_paths);
	t->drift = t->drift_paths = NULL;
	t->drift_code_tried = 0;
	return 0;
}
