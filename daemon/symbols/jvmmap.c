// SPDX-License-Identifier: GPL-2.0-only
/* jvmmap.c: a HotSpot target's perf map on demand, a symbol source that names nothing itself.
 * It makes the JVM write the perf map that the perf map's source reads: its refresh, in effect.
 *
 * A JIT's perf map names its code, but HotSpot writes one only when asked (jcmd PID
 * Compiler.perfmap, JDK 17 and later) or at its exit (-XX:+DumpPerfMapAtExit). So a target whose
 * maps show libjvm.so is asked through the attach protocol (jvmattach.c): at attach, and again
 * while samples keep landing in code nothing names (code compiled after the map was written:
 * the target counts samples whose leaf is such code): 0.25 s after the first answer, then
 * 0.5, 1, 2, 4 and 8 s after the next ones (a young JVM compiles its hot code after its first
 * answer, and a short one would keep it unnamed), then at most every 10 s, and less often (up to
 * every 5 min) while asking brings no new symbols. After each answer the perf map is read again at
 * once. The first exchange also asks VM.flags: a JVM without -XX:+PreserveFramePointer gets a hint,
 * since its compiled code keeps no frame pointers and a frame-pointer walk is lost after the first
 * Java frame. A JVM that does not answer, or answers an error, is counted, logged once, and asked
 * again with a growing back-off (20 s, 40 s ... 10 min) only while unnamed samples keep coming;
 * sampling never waits for it. One without Compiler.perfmap (before JDK 17) is not asked again.
 * Asking begins once the target is attached (start) and stops when it ends (done).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/config.h"
#include "kprof/hsattach.h"
#include "kprof/procmaps.h"
#include "os/clock.h"
#include "os/log.h"
#include "symbols/jvmattach.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"

#define SEC 1000000000ULL
#define ASK_TIMEOUT_MS 10000	 /* one exchange: the listener's start, the map written */
#define ASK_MIN_NS (10 * SEC)	 /* between two asks that were answered */
#define ASK_YOUNG_NS (SEC / 4)	 /* ... after the first answer, doubling up to ASK_MIN_NS */
#define ASK_STALE_NS (300 * SEC) /* ... while answers bring no new symbols */
#define BACKOFF_MAX_NS (600 * SEC)
#define LOOK_NS                                                                                    \
	(10 * SEC) /* a process that is no JVM (yet) is looked at again at most this often */
#define LOOK_EARLY_NS (10 * SEC)
#define LOOK_EARLY_EVERY_NS (SEC / 4)
#define UNNAMED_MIN 10	    /* samples in unnamed code since the last answer, and ... */
#define UNNAMED_PERMILLE 10 /* ... at least this share of all samples since */

struct jvmmap_stats {
	bool jvm;	   /* libjvm.so mapped: a HotSpot JVM */
	unsigned asks;	   /* Compiler.perfmap exchanges started */
	unsigned answers;  /* ... answered (the JVM wrote its map) */
	unsigned failures; /* ... not answered in time, refused or failed */
	char note[320];	   /* the frame-pointer hint, why it is not asked, the last failure */
};

struct jvmmap {
	struct sym_ctx *c;	   /* its target, whose perf map is read after each answer */
	struct jvmattach_ctx *ctx; /* NULL until started (or when no JVM is asked) */
	struct tsym_start t;	   /* the target's counters, [jvm] perfmap, --no-jvm-map */
	struct jvmattach *req;	   /* the exchange running, if any */
	bool asking;		   /* ... asks for the map (else it only reads the command line) */
	bool stopped;
	bool unsupported; /* no Compiler.perfmap in this JVM */
	bool flags_known; /* VM.flags answered */
	bool args_known;  /* its command line and environment were read */
	int preserve_fp;  /* 1 on, 0 off, -ENOENT not known */
	bool hint_logged, fail_logged;
	unsigned fails_in_row;
	uint64_t next_ask_ns, next_look_ns, interval_ns;
	uint64_t since_ns;    /* the last exec (0: none): a JVM's launcher loads libjvm.so after */
	unsigned early_looks; /* /proc/PID/maps read since it */
	uint64_t base_samples, base_unnamed; /* the target's counts at the last answer or look */
	uint64_t syms_before;		     /* JIT symbols when the running exchange began */
	uint64_t maps_seen; /* c->maps_gen + 1 of maps found without libjvm.so (0: none) */
	char fail[200];	    /* the last failure; "" after an answer */
	struct jvmmap_stats st;
};

static bool may_ask(const struct jvmmap *jm)
{
	return jm->st.jvm && !jm->stopped && !jm->unsupported && !jm->t.no_ask &&
	       jm->t.conf->jvm_perfmap;
}

static uint64_t jit_symbols(const struct jvmmap *jm)
{
	return jm->c->jit_symbols(jm->c);
}

/* The note of the stats: why it is not asked, or its last failure; the frame-pointer hint. */
static void update_note(struct jvmmap *jm)
{
	const char *why = jm->fail, *hint = "";

	if (jm->t.no_ask)
		why = "not asked for its perf map (--no-jvm-map)";
	else if (!jm->t.conf->jvm_perfmap)
		why = "not asked for its perf map ([jvm] perfmap = off)";
	if (jm->preserve_fp != 1 && jm->flags_known)
		hint = "no -XX:+PreserveFramePointer: Java stacks will be short";
	else if (jm->preserve_fp != 1 && jm->args_known)
		hint =
		    "no -XX:+PreserveFramePointer on its command line: Java stacks will be short";
	jm->st.note[0] = '\0';
	if (jm->st.jvm)
		snprintf(jm->st.note, sizeof(jm->st.note), "%s%s%s", why,
			 why[0] && hint[0] ? "; " : "", hint);
}

/* What a JVM said, made fit for a log line: printable ASCII, one line, at most len - 1 bytes. */
static void excerpt(const char *text, size_t n, char *out, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < len; i++) {
		char c = text[i];

		if (c == '\n' && i + 1 == n)
			break;
		out[k++] = c >= 0x20 && c < 0x7f ? c : c == '\n' ? '|' : '?';
	}
	out[k] = '\0';
}

static void rebase(struct jvmmap *jm)
{
	jm->base_samples = *jm->t.samples;
	jm->base_unnamed = *jm->t.unnamed;
}

static void log_hint(struct jvmmap *jm, const char *source)
{
	if (jm->hint_logged || jm->preserve_fp == 1)
		return;
	jm->hint_logged = true;
	log_warn("pid %d: the JVM runs without -XX:+PreserveFramePointer (%s): its compiled Java "
		 "code keeps no frame pointers, so its stacks will be short (lost after the first "
		 "Java frame); start it with -XX:+PreserveFramePointer",
		 jm->c->pid, source);
}

static void failed(struct jvmmap *jm, uint64_t now, const char *why)
{
	uint64_t backoff = ASK_MIN_NS << (jm->fails_in_row < 6 ? jm->fails_in_row + 1 : 7);

	if (backoff > BACKOFF_MAX_NS)
		backoff = BACKOFF_MAX_NS;
	jm->st.failures++;
	jm->fails_in_row++;
	jm->next_ask_ns = now + backoff;
	rebase(jm);
	snprintf(jm->fail, sizeof(jm->fail), "%s", why);
	if (jm->fail_logged)
		log_debug("pid %d: JVM perf map not obtained (%u times in a row): %s", jm->c->pid,
			  jm->fails_in_row, why);
	else
		log_warn(
		    "pid %d: the JVM did not give its perf map: %s; sampling goes on, its JIT "
		    "code stays unnamed (asked again in %llu s or later, while unnamed samples "
		    "keep coming)",
		    jm->c->pid, why, (unsigned long long)(backoff / SEC));
	jm->fail_logged = true;
	update_note(jm);
}

static void answered(struct jvmmap *jm, const struct jvmattach_result *r, uint64_t now)
{
	uint64_t syms;

	jm->st.answers++;
	jm->c->refresh(jm->c);
	syms = jit_symbols(jm);
	/* Asking again pays only while it brings new code: else ask less often. A young JVM
	 * compiles its hot methods after its first answer: soon asked again (0.25, 0.5 ... 8 s). */
	if (syms > jm->syms_before || jm->st.answers == 1)
		jm->interval_ns =
		    jm->st.answers > 6 ? ASK_MIN_NS : ASK_YOUNG_NS << (jm->st.answers - 1);
	else if ((jm->interval_ns *= 2) > ASK_STALE_NS)
		jm->interval_ns = ASK_STALE_NS;
	jm->next_ask_ns = now + jm->interval_ns;
	rebase(jm);
	if (jm->st.answers == 1 || jm->fail_logged)
		log_info(
		    "pid %d: the JVM wrote its perf map on request (Compiler.perfmap, %u ms%s%s):"
		    " %llu JIT symbols",
		    jm->c->pid, r->ms, r->triggered ? ", attach listener started" : "",
		    jm->fail_logged ? ", after failures" : "", (unsigned long long)syms);
	else
		log_debug("pid %d: JVM perf map asked again (%u ms): %llu JIT symbols", jm->c->pid,
			  r->ms, (unsigned long long)syms);
	jm->fails_in_row = 0;
	jm->fail_logged = false;
	jm->fail[0] = '\0';
	if (r->nreplies > 1 && r->replies[1].code == 0) {
		jm->flags_known = true;
		jm->preserve_fp = hsattach_flag(r->replies[1].text, r->replies[1].text_len,
						"PreserveFramePointer") == 1;
		log_hint(jm, "VM.flags");
	}
	update_note(jm);
}

/* Its command line and environment, read by the helper: the frame-pointer flag, until VM.flags
 * says better. */
static void args_read(struct jvmmap *jm, const struct jvmattach_result *r)
{
	if (!r->args_read || jm->flags_known)
		return;
	jm->args_known = true;
	jm->preserve_fp = r->preserve_fp == 1;
}

/* Compiler.perfmap answered, with an error. */
static void refused(struct jvmmap *jm, const struct jvmattach_result *r, uint64_t now)
{
	char text[160], why[256];

	excerpt(r->replies[0].text, r->replies[0].text_len, text, sizeof(text));
	if (strstr(text, "Unknown diagnostic command") || strstr(text, "not supported")) {
		jm->unsupported = true;
		log_warn("pid %d: this JVM has no Compiler.perfmap (JDK 17 or later has): not "
			 "asked again; run it with -XX:+UnlockDiagnosticVMOptions "
			 "-XX:+DumpPerfMapAtExit or a perf-map agent",
			 jm->c->pid);
		snprintf(jm->fail, sizeof(jm->fail), "no Compiler.perfmap in this JVM (JDK < 17)");
		return;
	}
	snprintf(why, sizeof(why), "Compiler.perfmap answered %d: %s", r->replies[0].code, text);
	failed(jm, now, why);
}

static void on_done(const struct jvmattach_result *r, void *userdata)
{
	struct jvmmap *jm = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	jm->req = NULL;
	args_read(jm, r);
	if (jm->asking && r->err < 0)
		failed(jm, now, r->why);
	else if (jm->asking && r->replies[0].code == 0)
		answered(jm, r, now);
	else if (jm->asking)
		refused(jm, r, now);
	/* No word from VM.flags: its command line and environment are what there is. */
	if (!jm->flags_known && jm->args_known)
		log_hint(jm, "as far as its command line and environment show");
	update_note(jm);
}

static void ask(struct jvmmap *jm, uint64_t now)
{
	static const char *const cmds[] = {"Compiler.perfmap", "VM.flags"};
	const struct jvmattach_req rq = {
	    .pid = jm->c->pid,
	    .start_ticks = jm->c->start_ticks,
	    .cmds = cmds,
	    .ncmds = jm->flags_known ? 1 : 2,
	    .args = !jm->flags_known && !jm->args_known,
	    .timeout_ms = ASK_TIMEOUT_MS,
	};
	char why[256] = "";
	int err;

	jm->syms_before = jit_symbols(jm);
	err = jvmattach_start(jm->ctx, &rq, on_done, jm, &jm->req, why, sizeof(why));
	if (err == -EBUSY) { /* other JVMs are being asked: in a second */
		jm->next_ask_ns = now + SEC;
		return;
	}
	jm->asking = true;
	jm->st.asks++;
	if (err < 0)
		failed(jm, now, why);
}

/* Not asking it for its map: its command line and environment still tell whether its stacks
 * will be whole. */
static void read_args(struct jvmmap *jm)
{
	const struct jvmattach_req rq = {.pid = jm->c->pid,
					 .start_ticks = jm->c->start_ticks,
					 .args = true,
					 .timeout_ms = ASK_TIMEOUT_MS};
	char why[256];

	jm->asking = false;
	if (jvmattach_start(jm->ctx, &rq, on_done, jm, &jm->req, why, sizeof(why)) < 0)
		log_debug("pid %d: its command line is not read: %s", jm->c->pid, why);
}

static bool maps_libjvm(const struct procmaps *maps)
{
	for (size_t i = 0; maps && i < procmaps_count(maps); i++)
		if (hsattach_is_libjvm(procmaps_at(maps, i)->path))
			return true;
	return false;
}

/*  * Is the process a HotSpot JVM? From its symbols' maps (read at attach, exec and whenever a
 * sample lands outside them: libjvm.so's first samples bring it in), else from /proc/PID/maps:
 * in the first LOOK_EARLY_NS after an exec (the java launcher loads libjvm.so then) at
 * LOOK_EARLY_EVERY_NS, doubling each time (5 reads, not 40: at a host's fork rate every new
 * process is one), later at most every LOOK_NS while its samples land in unnamed code (proc).
 * An attach is no such moment: its maps were just read (a process attached by --all is rarely
 * a launcher mid-start, and if it is, libjvm.so's first samples bring the maps in again). */
static void look(struct jvmmap *jm, uint64_t now, bool proc)
{
	/* The same maps as at the last look hold no libjvm.so either: not walked again (every
	 * tick, for every target that is no JVM). */
	bool seen = jm->maps_seen == jm->c->maps_gen + 1;

	if (seen || !maps_libjvm(jm->c->maps)) {
		jm->maps_seen = jm->c->maps_gen + 1;
		bool early = jm->since_ns && now - jm->since_ns < LOOK_EARLY_NS;

		if (!(proc || early) || now < jm->next_look_ns)
			return;
		if (early)
			jm->next_look_ns = now + (LOOK_EARLY_EVERY_NS << jm->early_looks++);
		else
			jm->next_look_ns = now + LOOK_NS;
		if (jvmattach_is_hotspot(jm->c->pid) <= 0)
			return;
	}
	jm->st.jvm = true;
	update_note(jm);
}

static int jvmmap_open(struct sym_ctx *c, void **ret)
{
	struct jvmmap *jm = calloc(1, sizeof(*jm));

	if (!jm)
		return -ENOMEM;
	jm->c = c;
	*ret = jm;
	return 0;
}

/* Look at the process: a HotSpot JVM is asked for its perf map at once (unless turned off). */
static void jvmmap_start(struct sym_ctx *c, void *state, const struct tsym_start *o)
{
	struct jvmmap *jm = state;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	(void)c;
	if (jm->ctx || jm->stopped || !o->jvmattach)
		return;
	jm->ctx = o->jvmattach;
	jm->t = *o;
	jm->interval_ns = ASK_MIN_NS;
	jm->preserve_fp = -ENOENT;
	rebase(jm);
	look(jm, now, !jm->c->maps); /* else the maps the attach just read */
	if (jm->st.jvm && may_ask(jm)) {
		log_info("pid %d: a HotSpot JVM: asking it for its perf map (Compiler.perfmap)",
			 jm->c->pid);
		ask(jm, now);
	} else if (jm->st.jvm) {
		log_info("pid %d: a HotSpot JVM: its perf map is not asked for (%s)", jm->c->pid,
			 o->no_ask ? "attach --no-jvm-map" : "[jvm] perfmap = off");
		read_args(jm);
	}
}

/* Housekeeping (about every second): ask again, rate-limited, while samples keep landing in
 * unnamed code; look again for a JVM in a process that was none (after an exec). */
static void jvmmap_tick(struct sym_ctx *c, void *state, uint64_t now)
{
	struct jvmmap *jm = state;
	uint64_t samples, unnamed;

	(void)c;
	if (!jm->ctx || jm->stopped)
		return;
	update_note(jm); /* [jvm] perfmap may have changed (SIGHUP) */
	if (jm->req)
		return;
	samples = *jm->t.samples - jm->base_samples;
	unnamed = *jm->t.unnamed - jm->base_unnamed;
	if (!jm->st.jvm) {
		/* An exec (kprofctl record -- java ...: libjvm.so is loaded after the exec), or
		 * attached before the JVM was loaded: look at every tick, in the maps kprofd has.
		 */
		look(jm, now,
		     unnamed >= UNNAMED_MIN && unnamed * 1000 >= samples * UNNAMED_PERMILLE);
		if (!jm->st.jvm)
			return;
		log_info("pid %d: now a HotSpot JVM (libjvm.so mapped)%s", jm->c->pid,
			 may_ask(jm) ? ": asking it for its perf map once its code runs" : "");
		jm->next_ask_ns = 0;
		/* Its unnamed samples so far are its code's already (the launcher's are named):
		 * a short JVM may be gone by the next tick, so ask now if there are any. */
		if (!unnamed) {
			rebase(jm);
			return;
		}
	}
	/* Ask only while samples keep landing in code nothing names; the first time as soon as
	 * one does (a short JVM exits before a second ask could be answered). */
	if (jm->st.answers || jm->st.asks) {
		if (unnamed < UNNAMED_MIN || unnamed * 1000 < samples * UNNAMED_PERMILLE)
			return;
	} else if (!unnamed) {
		return;
	}
	if (may_ask(jm) && now >= jm->next_ask_ns)
		ask(jm, now);
}

/* The process exec'd: what was known of it is void. */
static void jvmmap_exec(struct sym_ctx *c, void *state)
{
	struct jvmmap *jm = state;

	(void)c;
	if (!jm->ctx || jm->stopped)
		return;
	jvmattach_cancel(jm->req);
	jm->req = NULL;
	jm->st.jvm = false;
	jm->unsupported = jm->flags_known = jm->args_known = false;
	jm->hint_logged = jm->fail_logged = false;
	jm->preserve_fp = -ENOENT;
	jm->fails_in_row = 0;
	jm->fail[0] = '\0';
	jm->next_look_ns = 0;
	jm->since_ns = now_ns(CLOCK_MONOTONIC);
	jm->early_looks = 0;
	rebase(jm);
	update_note(jm);
}

/* The target ended: stop asking (an exchange running is cancelled); the counts stay. */
static void jvmmap_stop(struct sym_ctx *c, void *state)
{
	struct jvmmap *jm = state;

	(void)c;
	if (jm->stopped)
		return;
	jvmattach_cancel(jm->req);
	jm->req = NULL;
	jm->stopped = true;
	/* A JVM that ended before it could answer (a short run: its listener and the map take a
	 * moment) and wrote no map: how to get one. Its map written at exit is read by then. */
	if (jm->st.jvm && !jm->st.answers && !jit_symbols(jm) && !jm->unsupported) {
		snprintf(
		    jm->fail, sizeof(jm->fail),
		    "it ended before it wrote its perf map on request: run it with "
		    "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit (read at its exit)");
		update_note(jm);
	}
}

static void jvmmap_free(struct sym_ctx *c, void *state)
{
	struct jvmmap *jm = state;

	(void)c;
	if (!jm)
		return;
	jvmattach_cancel(jm->req);
	free(jm);
}

static void jvmmap_stats(const void *state, struct tsym_stats *st)
{
	const struct jvmmap *jm = state;

	st->jvm = jm->st.jvm;
	st->jvm_asks = jm->st.asks;
	st->jvm_answers = jm->st.answers;
	st->jvm_failures = jm->st.failures;
	snprintf(st->jvm_note, sizeof(st->jvm_note), "%s", jm->st.note);
}

const struct sym_source sym_source_jvm = {
    .name = "JVM perf map on request",
    .open = jvmmap_open,
    .free = jvmmap_free,
    .exec = jvmmap_exec,
    .start = jvmmap_start,
    .tick = jvmmap_tick,
    .done = jvmmap_stop,
    .stats = jvmmap_stats,
};
