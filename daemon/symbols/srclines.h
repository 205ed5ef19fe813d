/* SPDX-License-Identifier: GPL-2.0-only */
/* srclines.h: kprofd's source-line resolver (srclines.c; issue 32): the kprof-lines helpers,
 * run sandboxed, and the cache of what they answered. */
#ifndef KPROF_SRCLINES_H
#define KPROF_SRCLINES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "kprof/lcache.h"
#include "kprof/srcline.h"
#include "symbols/srcfile.h"
#include "symbols/symbolize.h"

struct srclines;
struct srclines_waiter;

/* [lines] of kprofd's settings. */
struct srclines_conf {
	bool enabled;
	char helper[PATH_MAX];	/* kprof-lines; "": beside kprofd's executable, then PREFIX/bin */
	char debug_dir[PATH_MAX]; /* a host directory of debug files (.build-id/, paths); "" none */
	uint64_t cache_bytes;
};

/* What one lookup says beyond its frames. */
struct srclines_res {
	bool cached;	/* answered by the cache */
	uint64_t seq;	/* then: when its answer came (srclines_seq) */
	char key[LCACHE_MAX_KEY + 1]; /* the file's key ("" when none was made) */
};

/* Counts since kprofd started (kprofctl status). */
struct srclines_stats {
	uint64_t started, killed, answers, queued_now;
	struct lcache_stats cache;
};

int srclines_new(sd_event *e, const struct srclines_conf *conf, struct srclines **ret);
void srclines_free(struct srclines *sl);
/* New settings (a reload): a new cache when its size or the files it reads change. */
int srclines_configure(struct srclines *sl, const struct srclines_conf *conf);

/* The source frames at ELF address elf_addr of mapping m (of the profile's table) at runtime
 * address rt_addr, of the target whose symbols are ts (NULL once they are gone: then the file
 * is found by m's build id). The frame count (0: the file has no line there) with fr[0..)
 * filled (valid until the next call), or -EINPROGRESS: queued for a helper (queue true), its
 * answer cached when it comes; -EAGAIN: not cached and not queued (queue false); -ENOENT: no
 * debug information for that file (or lines are off); -EIO: it could not be resolved (a
 * helper died or hung on it, or its file failed lately); -EBUSY: too much is queued already. */
int srclines_get(struct srclines *sl, struct tsym *ts, const struct srcfile_map *m,
		 uint64_t rt_addr, uint64_t elf_addr, bool queue, struct srcline_frame *fr,
		 size_t max, struct srclines_res *res);

/* JIT code's lines (issue 32) are kprofd's own, from a target's jitdump, not a file's: kept in
 * the same cache under a key of the target (srclines_jit_key) when its symbols are dropped, so
 * that its later exports still have them. */
void srclines_jit_key(pid_t pid, uint64_t attached_ns, char key[LCACHE_MAX_KEY + 1]);
/* Keep fr[0..n) for (key, addr): 0 or a negative errno (lcache_put's). */
int srclines_put(struct srclines *sl, const char *key, uint64_t addr,
		 const struct srcline_frame *fr, size_t n);
/* What the cache holds for (key, addr): the frame count, or -ENOENT. */
int srclines_cached(struct srclines *sl, const char *key, uint64_t addr, struct srcline_frame *fr,
		    size_t max);

/* Where the answers stand: an answer cached later has a higher seq (srclines_res.seq). */
uint64_t srclines_seq(const struct srclines *sl);

/* What happened to the file of key since it was last opened for new addresses: helpers started
 * and killed for it, its note ("" if none). false if no such file is known. */
bool srclines_file_info(const struct srclines *sl, const char *key, uint64_t *started,
			uint64_t *killed, const char **note);

/* Call fn(userdata) from the loop once nothing is queued or being resolved any more, or after ms
 * milliseconds, whichever is first (once). 0 with *ret set (cancel it with srclines_unwait
 * before fn runs, never after), or a negative errno. */
typedef void (*srclines_done_fn)(void *userdata);
int srclines_wait(struct srclines *sl, unsigned ms, srclines_done_fn fn, void *userdata,
		  struct srclines_waiter **ret);
void srclines_unwait(struct srclines_waiter *w);

/* Whether anything is queued or being resolved. */
bool srclines_busy(const struct srclines *sl);
void srclines_get_stats(const struct srclines *sl, struct srclines_stats *st);

#endif
