/* SPDX-License-Identifier: GPL-2.0-only */
/* drift.h: profile-drift detection per function (daemon/lib/drift.c, ALGORITHMS.md §12).
 *
 * Each function fed keeps a reference profile (a histogram over keys the caller chooses: an
 * offset inside the function, a callee) and a sliding window of its last samples. Once the
 * window holds min_samples samples since its last reset, it is compared with the reference by
 * the overlap percentage (sum over keys of the smaller of the two shares); an overlap below
 * threshold is a drift: an event is recorded, the window (polluted by the old behaviour) is
 * cleared and the reference is learned again from the new behaviour. A reference judged for
 * refresh samples without a drift is replaced by the window when they agree well, so what no
 * longer occurs does not stay in it. No I/O, no globals; every table is capped.
 */
#ifndef KPROF_DRIFT_H
#define KPROF_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct drift;

/* Zero fields take the defaults. */
struct drift_config {
	uint32_t window; /* W: samples in the sliding window and the reference, 16..4096: 256 */
	uint32_t min_samples; /* T1: a window is judged from this many samples on, 8..W: 128 */
	uint32_t refresh;     /* T2: reference refreshed after this many samples: 10 * T1 */
	double threshold;     /* overlap below this is a drift, (0, 1): 0.5 */
	uint32_t check_every; /* judge every this many samples, 1..64: 8 */
	uint32_t max_funcs;   /* functions followed, 1..4096: 64 (more are counted) */
	uint32_t max_events;  /* drift events kept (oldest dropped), 1..1024: 32 */
};

/* Keys below DRIFT_KEY_BLOCK are offsets in the function; with blocks set
 * (drift_func_set_blocks) each becomes DRIFT_KEY_BLOCK | the start offset of its block. */
#define DRIFT_KEY_BLOCK (1ULL << 61)
/* Keys past DRIFT_MAX_KEYS distinct ones of a function share this one. */
#define DRIFT_KEY_OTHER UINT64_MAX
#define DRIFT_MAX_KEYS 255

enum drift_state {
	DRIFT_LEARNING = 1, /* building the reference */
	DRIFT_WATCHING = 2, /* comparing windows with it */
	DRIFT_ENDED = 3,    /* no sample for a while (drift_end_idle): its code was replaced
			     * (a deoptimized copy) or no longer runs; a new sample starts over */
};

struct drift_event {
	uint64_t seq;		       /* 1, 2, ... over the detector */
	uint32_t func;		       /* the caller's function id */
	uint64_t time_ns;	       /* the time given with the sample that showed it */
	double overlap;		       /* window vs reference, 0..1 */
	uint32_t window;	       /* samples in the window */
	uint32_t ref;		       /* samples in the reference */
	uint64_t samples;	       /* samples of the function fed until then */
	uint64_t ref_ns;	       /* when the reference was complete */
	uint64_t gained;	       /* the key whose share grew most */
	double gained_ref, gained_win; /* its shares in the reference and the window */
	uint64_t lost;		       /* the key whose share fell most */
	double lost_ref, lost_win;
};

struct drift_func_info {
	uint32_t func;
	enum drift_state state;
	uint64_t samples;     /* fed since it was first seen */
	uint32_t ref, window; /* samples in the reference and the window now */
	double overlap;	      /* the last judgement, -1 if none since the reference was set */
	double min_overlap;   /* the lowest since the reference was set, -1 if none */
	uint32_t keys;	      /* distinct keys (DRIFT_MAX_KEYS at most, then "other") */
	uint32_t drifts;      /* drifts reported */
	uint32_t refreshes;   /* references refreshed by the T2 rule */
	uint32_t blocks;      /* basic blocks its offsets are mapped to, 0: offsets as they are */
	uint64_t first_ns, last_ns; /* times of its first and last samples */
	uint64_t ended_ns;	    /* when it was ended (DRIFT_ENDED), else 0 */
};

/* One key of a function with its shares. */
struct drift_key {
	uint64_t key;
	double ref, win;
};

struct drift_stats {
	uint64_t samples;    /* fed */
	uint64_t funcs_over; /* samples of functions left out: max_funcs reached */
	uint64_t keys_over;  /* samples filed under DRIFT_KEY_OTHER */
	uint64_t events;     /* drifts reported (more than kept, perhaps) */
	size_t funcs;	     /* functions followed */
	uint64_t ended;	     /* functions ended for want of samples (drift_end_idle) */
	uint64_t recycled;   /* ended functions whose place a new one took (max_funcs reached) */
	size_t memory;	     /* bytes held */
};

/* -EINVAL for a config out of range, -ENOMEM. */
int drift_new(const struct drift_config *c, struct drift **ret);
void drift_free(struct drift *d);
/* The config in use, defaults filled in. */
const struct drift_config *drift_get_config(const struct drift *d);

/* One sample of function func at key, at time_ns (any monotonic clock). 1 if it showed a drift
 * (the newest event), 0 if not, -E2BIG if func is new and max_funcs are followed (counted),
 * -ENOMEM (nothing changed). */
int drift_add(struct drift *d, uint32_t func, uint64_t key, uint64_t time_ns);

/* From now on, func's offset keys are mapped to the basic block holding them: starts[0..n) are
 * the blocks' start offsets, ascending (copied); an offset below starts[0] stays as it is. The
 * function starts over (learning), so its reference holds blocks only. 0, -ENOENT (func is not
 * followed), -EINVAL (n is 0 or above 4096, starts not ascending), -ENOMEM. */
int drift_func_set_blocks(struct drift *d, uint32_t func, const uint64_t *starts, size_t n);

/* End the functions without a sample for idle_ns before now_ns (the clock of drift_add): their
 * reference and window are dropped, their counts kept; one that gets a sample again starts over
 * (learning). When max_funcs are followed, a new function takes the place of an ended one. The
 * number ended now. */
size_t drift_end_idle(struct drift *d, uint64_t now_ns, uint64_t idle_ns);
/* Events kept, oldest first: i in [0, drift_nevents). */
size_t drift_nevents(const struct drift *d);
const struct drift_event *drift_event_get(const struct drift *d, size_t i);

/* Functions followed, in the order first seen: i in [0, drift_nfuncs). */
size_t drift_nfuncs(const struct drift *d);
int drift_func_get(const struct drift *d, size_t i, struct drift_func_info *out);
/* Up to max keys of function i, by reference share plus window share, descending. The count. */
size_t drift_func_keys(const struct drift *d, size_t i, struct drift_key *out, size_t max);

void drift_get_stats(const struct drift *d, struct drift_stats *st);

/* The overlap percentage of two histograms over the same n keys (counts a[], b[] with sums
 * na, nb): sum of min(a[k]/na, b[k]/nb), 0..1; 0 if either sum is 0. */
double drift_overlap(const uint32_t *a, uint64_t na, const uint32_t *b, uint64_t nb, size_t n);

#endif
