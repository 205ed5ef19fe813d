// SPDX-License-Identifier: GPL-2.0-only
/* perfmapfile.c: a target's JIT perf map (/tmp/perf-PID.map) as a symbol source.
 *
 * The file is found inside the target's own root and /tmp under its namespaced PID (never the
 * host's /tmp: a PID there may be another process's), through the root fd kept since the last
 * read of its maps (so it is still read after the process exited), opened through tfile.c (no
 * symlinks, a regular file on an ordinary filesystem, owned by the target's real or effective
 * uid, so root's maps are trusted for root's targets only), not older than the process. It is
 * read incrementally while it grows and from scratch when it shrinks or is replaced or
 * rewritten in place (struct tfile_track), as far as the step of the refresh allows; the text
 * goes to the pure perfmap module in 64 KiB pieces, each charged twice its bytes to the uid's
 * symbol budget first (a refused charge stops reading until a later refresh). Its functions
 * are also the ones exact mode probes and the path tracer follows (each).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kprof/budget.h"
#include "kprof/cleanup.h"
#include "kprof/perfmap.h"
#include "os/log.h"
#include "os/tfile.h"
#include "symbols/sources.h"
#include "symbols/symbolize.h"
#include "symbols/symbolize_elf.h"

struct pmfile {
	struct sym_jit j;	  /* first: its symbols, looked up by sym_lookup_jit */
	struct tfile_track track; /* where reading stopped, and what was read */
	uint64_t reloads;
	uint64_t charged;
	uint64_t refused; /* times the budget stopped the reading */
	char path[256];	  /* as kprofd reaches it, whether or not it exists */
	bool warned;
};

static int pm_open(struct sym_ctx *c, void **ret)
{
	struct pmfile *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	err = perfmap_new(&(struct perfmap_limits){.max_bytes = c->max_bytes}, &f->j.syms);
	if (err < 0) {
		free(f);
		return err;
	}
	snprintf(f->j.module, sizeof(f->j.module), "perf-%d.map", c->nspid);
	/* One form whether or not the map exists: a path that names it from kprofd's side. */
	snprintf(f->path, sizeof(f->path), "/proc/%d/root/tmp/perf-%d.map", c->pid, c->nspid);
	*ret = f;
	return 0;
}

static void pm_drop(struct sym_ctx *c, struct pmfile *f)
{
	perfmap_reset(f->j.syms);
	budget_release(c->budget, c->uid, f->charged);
	f->charged = 0;
}

static void pm_free(struct sym_ctx *c, void *state)
{
	struct pmfile *f = state;

	if (!f)
		return;
	budget_release(c->budget, c->uid, f->charged);
	perfmap_free(f->j.syms);
	free(f);
}

/* Open the target's perf map by the rules at the top of this file. -ENOENT if there is none. */
static int pm_file(struct sym_ctx *c, struct pmfile *f, struct stat *st)
{
	const struct tfile_want want = {.owners = {c->uid, c->euid}, .nowners = 2};
	_cleanup_close_ int fd = -1, root = -1;
	char rel[64], why[128] = "";

	if (c->gone)
		return -ENOENT;
	snprintf(rel, sizeof(rel), "tmp/perf-%d.map", c->nspid);
	root = sym_root(c);
	if (root < 0)
		return root;
	fd = tfile_open(root, rel, true, &want, st, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT && !f->warned)
			log_warn("pid %d: perf map %s ignored: %s", c->pid, f->path, why);
		f->warned |= fd != -ENOENT;
		return fd;
	}
	if (c->start_realtime_ns &&
	    (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + st->st_mtim.tv_nsec + 2000000000ULL <
		c->start_realtime_ns) {
		if (!f->warned)
			log_warn(
			    "pid %d: perf map %s is older than the process (PID reuse?), ignored",
			    c->pid, f->path);
		f->warned = true;
		return -ESTALE;
	}
	return TAKE_FD(fd);
}

/* Read what the perf map gained, as far as the step allows; 1 if its symbols changed. */
static int pm_refresh(struct sym_ctx *c, void *state, struct tfile_step *step)
{
	struct pmfile *f = state;
	_cleanup_close_ int fd = -1;
	struct stat st;
	char buf[65536];
	int added = 0;
	bool reset = false, had = f->track.ino != 0;

	fd = pm_file(c, f, &st);
	if (fd < 0)
		return 0;
	/* Replaced, shrunk or rewritten in place (jcmd Compiler.perfmap truncates and writes
	 * again): read from the start, never glue the middle of a new line to an old one. */
	if (tfile_track_check(fd, &st, &f->track)) {
		if (had)
			f->reloads++;
		pm_drop(c, f);
		reset = true;
	}
	for (;;) {
		size_t req = tfile_step_take(step, sizeof(buf), false);
		ssize_t n;
		int r;

		if (!req)
			break;
		n = pread(fd, buf, req, f->track.off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tfile_step_done(step, (size_t)n);
		/* A parsed line costs about its bytes plus an entry: charge twice the bytes. */
		if (budget_charge(c->budget, c->uid, 2 * (uint64_t)n) < 0) {
			if (!f->refused++)
				log_warn(
				    "pid %d: perf map %s read up to %llu bytes: uid %u's symbol "
				    "budget is spent",
				    c->pid, f->path, (unsigned long long)f->track.off, c->uid);
			break;
		}
		f->charged += 2 * (uint64_t)n;
		r = perfmap_feed(f->j.syms, buf, n);
		if (r < 0)
			break;
		added += r;
		tfile_track_advance(&f->track, buf, n);
		if ((size_t)n < req)
			break;
	}
	if (added || reset)
		perfmap_build_index(f->j.syms); /* out of memory: the next lookup tries again */
	return added || reset;
}

static void pm_exec(struct sym_ctx *c, void *state)
{
	struct pmfile *f = state;

	pm_drop(c, f);
	memset(&f->track, 0, sizeof(f->track));
	f->warned = false;
}

static void pm_stats(const void *state, struct tsym_stats *st)
{
	const struct pmfile *f = state;
	struct perfmap_stats ps;

	perfmap_get_stats(f->j.syms, &ps);
	snprintf(st->perfmap_path, sizeof(st->perfmap_path), "%s", f->path);
	snprintf(st->perfmap_module, sizeof(st->perfmap_module), "%s", f->j.module);
	st->jit_symbols = ps.entries;
	st->perfmap_bad_lines = ps.bad_lines;
	st->perfmap_reloads = f->reloads;
	st->refused += f->refused;
}

static uint64_t pm_jit_symbols(const void *state)
{
	const struct pmfile *f = state;
	struct perfmap_stats ps;

	perfmap_get_stats(f->j.syms, &ps);
	return ps.entries;
}

static int pm_each(const void *state, int (*fn)(const struct perfmap_sym *, void *), void *userdata)
{
	const struct pmfile *f = state;

	return perfmap_foreach(f->j.syms, fn, userdata);
}

const struct sym_source sym_source_perfmap = {
    .name = "perf map",
    .open = pm_open,
    .free = pm_free,
    .refresh = pm_refresh,
    .lookup = sym_lookup_jit,
    .exec = pm_exec,
    .stats = pm_stats,
    .jit_symbols = pm_jit_symbols,
    .each = pm_each,
};
