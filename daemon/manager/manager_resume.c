// SPDX-License-Identifier: GPL-2.0-only
/* manager_resume.c: profiling goes on through a restart of kprofd (issue 29, item 1).
 *
 * When kprofd stops, each process a client attached (by PID, not through a watch, a rule or
 * --all, which come back with their watches) ends as detached and is saved with a SavedResume:
 * its start time, who attached it and its options (manager_mark_resume). At the next start,
 * once the kept profiles are read back, each such profile whose process still runs is attached
 * again (manager_resume_kept): the same pid *and* start time (a reused pid is another process),
 * and the rule of the first attach (a non-root client's process must still be its, and
 * dumpable), within today's quotas. The new target continues the kept profile: it takes over
 * its stacks, functions, mappings, thread names, counts, its attach time (so `list`, the
 * saved file and the time windows go on under the same session), its file in the state
 * directory, its off-CPU profile (attach --off-cpu: attached again with it) and, with drift
 * off, its kept drift result; the old entry goes. What is not
 * carried: the hot-context tree and the drift detectors start afresh (their saved snapshots
 * cannot be continued by the streaming structures), and exact mode and path traces are not
 * restarted (they cost the target; the log says so). A profile not attached again
 * stays kept, with the reason in its resume_note (list --all shows it) and the log.
 *
 * A kprofd that dies without stopping (a watchdog's SIGABRT, SIGKILL, a crash) saves nothing at
 * its end, so each such attach also leaves a small record in the state directory from the
 * start (PID-ATTACHNS.resume: a SavedProfile with the target's settings and a SavedResume, no
 * samples), removed when the target ends other than by kprofd's stop. At start, a record whose
 * target came back neither as a kept profile nor as one attached again is attached again from
 * it: the profile starts afresh (what was sampled since the last time window was cut is lost
 * with the process that held it), under the same session, so its saved time windows go on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "manager/manager_resume.h"
#include "manager/manager.h"
#include "manager/manager_attach.h"
#include "manager/manager_internal.h"
#include "manager/manager_targets.h"
#include "kprof/cleanup.h"
#include "os/clock.h"
#include "os/log.h"
#include "os/procfs.h"
#include "os/store.h"
#include "wire/target_pb.h"
#include "target/offcpu.h"
#include "target/target.h"

static bool resumable(const struct target *t)
{
	return !t->cgroup && !t->rule && !t->all && !t->parent;
}

void manager_mark_resume(struct target *t)
{
	uint64_t now = now_ns(CLOCK_REALTIME), ran;

	if (t->state != TARGET_ATTACHED || !resumable(t))
		return;
	t->duration_left = 0;
	if (t->duration_sec) {
		ran = now > t->attached_ns ? (now - t->attached_ns) / 1000000000ULL : 0;
		if (ran >= t->duration_sec)
			return; /* its --duration is over: it would have ended now anyway */
		t->duration_left = t->duration_sec - (unsigned)ran;
	}
	t->resume = true;
}

#define RECORD_SUFFIX ".resume"

static void record_name(const struct target *t, char *buf, size_t len)
{
	snprintf(buf, len, "%d-%llu" RECORD_SUFFIX, t->pid, (unsigned long long)t->attached_ns);
}

void manager_resume_track(struct manager *m, struct target *t)
{
	Kprof__SavedProfile sp;
	Kprof__SavedResume r;
	Kprof__Target pb;
	char name[64];
	uint8_t *buf;
	size_t len;
	int err;

	if (!m->store || !resumable(t) || t->state != TARGET_ATTACHED)
		return;
	kprof__saved_profile__init(&sp);
	kprof__target__init(&pb);
	target_fill_pb(t, &pb);
	pb.resume_note = (char *)"";
	target_resume_pb(t, t->duration_sec, &r);
	sp.format = 1;
	sp.target = &pb;
	sp.resume = &r;
	len = kprof__saved_profile__get_packed_size(&sp);
	buf = malloc(len ? len : 1);
	if (!buf) {
		log_warn("pid %d: out of memory: not attached again if kprofd dies", t->pid);
		return;
	}
	kprof__saved_profile__pack(&sp, buf);
	record_name(t, name, sizeof(name));
	err = store_write(m->store, name, buf, len);
	free(buf);
	if (err < 0)
		log_warn("pid %d: cannot write %s/%s: %s; not attached again if kprofd dies",
			 t->pid, store_path(m->store), name, strerror(-err));
}

/* t ended other than by kprofd's stop: nothing to attach again. */
static void on_target_end(void *ud, struct target *t)
{
	struct manager *m = ud;
	char name[64];

	if (m->stopping || !m->store || !resumable(t))
		return;
	record_name(t, name, sizeof(name));
	store_remove(m->store, name);
}

/* t was attached: its record, so that it is attached again if kprofd dies. */
static void on_target_attach(void *ud, struct target *t)
{
	manager_resume_track(ud, t);
}

static const struct manager_events resume_events = {.on_target_end = on_target_end,
						    .on_target_attach = on_target_attach};

int manager_resume_init(struct manager *m)
{
	return manager_subscribe(m, &resume_events, m);
}

/* Why old's process cannot be attached again ("" if it can). */
static const char *resume_refusal(const struct target *old)
{
	struct procinfo_stat pst;
	struct procfs_ident id;

	if (procfs_stat(old->pid, &pst) < 0)
		return "not attached again after kprofd's restart: the process had exited";
	if (pst.start_ticks != old->start_ticks)
		return "not attached again after kprofd's restart: the pid is another process's "
		       "now";
	if (procfs_ident_read(old->pid, &id) < 0)
		return "not attached again after kprofd's restart: the process had exited";
	if (old->by != 0 && procfs_ident_owner(&id) != old->by)
		return "not attached again after kprofd's restart: the process changed credentials";
	return "";
}

/* n, just attached and not sampled yet, continues old's profile. */
static void continue_profile(struct target *n, struct target *old)
{
	SWAP(n->profile, old->profile);
	SWAP(n->maps, old->maps);
	SWAP(n->tnames, old->tnames);
	n->samples += old->samples;
	n->truncated += old->truncated;
	n->bad_frames += old->bad_frames;
	n->unnamed_leaf += old->unnamed_leaf;
	n->unknown_samples += old->unknown_samples;
	n->samples_refused += old->samples_refused;
	n->samples_cut += old->samples_cut;
	/* Judged again for the new target at the next housekeeping, its profile thawed now (the
	 * old one's "[over budget]" id is not looked for in it). */
	n->over_budget = false;
	n->over_id1 = 0;
	profile_freeze(n->profile, false);
	n->unknown_id = 0; /* re-interned in the profile taken over */
	/* With drift off now, its drift result as kept (drift_reply shows it); with drift on, the
	 * detectors start again. */
	if (!n->drift && !n->drift_kept) {
		SWAP(n->drift_kept, old->drift_kept);
		SWAP(n->drift_kept_len, old->drift_kept_len);
		n->drift_kept_at_end = false;
		n->drift_kept_ns = old->ended_ns;
	}
	if (n->offcpu && old->offcpu)
		offcpu_take(n->offcpu, old->offcpu);
	n->attached_ns = old->attached_ns;
	n->resumes = old->resumes + 1;
	SWAP(n->saved_name, old->saved_name);
	n->dirty = true;
}

/* Attach old's process again; 0, or a negative errno with old's resume_note set. */
static int resume_one(struct manager *m, struct target *old)
{
	const char *why = resume_refusal(old);
	struct attach_opts o = {
	    .freq = old->freq,
	    .duration_sec = old->duration_left,
	    .eps = old->eps,
	    .hcct_kernel = old->hcct_kernel,
	    .no_jvm_map = old->no_jvm_map,
	    .children = old->children,
	    .parent = old->parent,
	    .by = old->by,
	    .off_cpu = old->offcpu || old->resume_off_cpu,
	};
	struct target *n = NULL;
	char err[256];
	int r;

	if (why[0]) {
		snprintf(old->resume_note, sizeof(old->resume_note), "%s", why);
		log_info("pid %d (%s): %s; its profile stays kept", old->pid, old->comm, why);
		return -ESRCH;
	}
	r = manager_attach(m, old->pid, &o, &n, err, sizeof(err));
	if (r < 0) {
		snprintf(old->resume_note, sizeof(old->resume_note),
			 "not attached again after kprofd's restart: %.50s", err);
		log_warn("pid %d (%s): not attached again after the restart: %s; its profile stays "
			 "kept",
			 old->pid, old->comm, err);
		return r;
	}
	{
		char tmp[64];

		record_name(n, tmp, sizeof(tmp)); /* manager_attach's, under its own attach time */
		if (m->store)
			store_remove(m->store, tmp);
	}
	if (old->profile)
		continue_profile(n, old);
	else /* from a record: a fresh profile, the same session */
		n->attached_ns = old->attached_ns, n->resumes = old->resumes + 1;
	n->duration_sec = old->duration_sec; /* the timer has what is left of it */
	manager_resume_track(m, n);
	log_info("pid %d (%s): attached again after kprofd's restart at %u Hz (by uid %u), %s "
		 "(%llu samples before; exact mode and path traces are not restarted)",
		 n->pid, n->comm, n->freq, (unsigned)n->by,
		 old->profile ? "its profile continued" : "a new profile in the same session",
		 (unsigned long long)old->samples);
	return 0;
}

/* A record found at start: its target came back (kept or attached again), or is attached
 * again from it. */
static int resume_record(void *ctx, const char *name, const uint8_t *buf, size_t len)
{
	Kprof__SavedProfile *sp = kprof__saved_profile__unpack(NULL, len, buf);
	struct manager *m = ctx;
	struct target rec = {0}, *t;
	const Kprof__Target *pb;
	uint64_t now = now_ns(CLOCK_REALTIME), ran;

	if (!sp || !sp->target || !sp->resume || !sp->target->pid || sp->target->pid > INT32_MAX) {
		if (sp)
			kprof__saved_profile__free_unpacked(sp, NULL);
		return -EBADMSG; /* renamed NAME.bad by the store */
	}
	pb = sp->target;
	manager_for_each_target(m, t)
		if (t->pid == (pid_t)pb->pid && t->attached_ns == pb->attached_at_ns)
			break;
	if (t) { /* came back with its profile: attached again, or kept with the reason */
		if (t->state != TARGET_ATTACHED) {
			store_remove(m->store, name);
		}
		kprof__saved_profile__free_unpacked(sp, NULL);
		return 0;
	}
	rec.pid = pb->pid;
	snprintf(rec.comm, sizeof(rec.comm), "%s", pb->comm ? pb->comm : "");
	rec.freq = pb->freq_hz;
	rec.eps = pb->eps;
	rec.hcct_kernel = pb->hcct_kernel;
	rec.children = pb->children;
	rec.attached_ns = pb->attached_at_ns;
	rec.start_ticks = sp->resume->start_ticks;
	rec.by = sp->resume->by;
	rec.no_jvm_map = sp->resume->no_jvm_map;
	rec.duration_sec = sp->resume->duration_left_sec;
	rec.resumes = sp->resume->resumes;
	rec.resume_off_cpu = sp->resume->off_cpu;
	kprof__saved_profile__free_unpacked(sp, NULL);
	ran = now > rec.attached_ns ? (now - rec.attached_ns) / 1000000000ULL : 0;
	if (rec.duration_sec && ran >= rec.duration_sec) {
		store_remove(m->store, name);
		return 0;
	}
	rec.duration_left = rec.duration_sec ? rec.duration_sec - (unsigned)ran : 0;
	log_info("pid %d (%s): was attached when kprofd ended without stopping (its profile since "
		 "the last saved time window is lost)",
		 rec.pid, rec.comm);
	if (resume_one(m, &rec) < 0)
		store_remove(m->store, name);
	return 0;
}

/* A kept profile older than t's record (kprofd died after an earlier resume, so its last
 * saved profile is the one before): the record's count of resumes. */
static void record_resumes(struct manager *m, struct target *t)
{
	_cleanup_free_ uint8_t *buf = NULL;
	Kprof__SavedProfile *sp;
	char name[64];
	size_t len;

	record_name(t, name, sizeof(name));
	if (!m->store || store_read(m->store, name, &buf, &len) < 0)
		return;
	sp = kprof__saved_profile__unpack(NULL, len, buf);
	if (sp && sp->resume && sp->resume->resumes > t->resumes)
		t->resumes = sp->resume->resumes;
	if (sp)
		kprof__saved_profile__free_unpacked(sp, NULL);
}

unsigned manager_resume_kept(struct manager *m)
{
	unsigned n = 0, tried = 0;
	struct target *t;

	manager_for_each_target(m, t) {
		if (!t->resume || t->state == TARGET_ATTACHED)
			continue;
		t->resume = false; /* once: a kept profile is not attached again at later starts */
		tried++;
		record_resumes(m, t);
		if (resume_one(m, t) == 0) {
			n++;
			manager_drop_target(m, t);
		}
	}
	if (tried)
		log_info("restart: %u of %u processes attached when kprofd stopped are profiled "
			 "again",
			 n, tried);
	if (m->store)
		store_foreach(m->store, RECORD_SUFFIX, resume_record, m);
	return n;
}
