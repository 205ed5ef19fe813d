/* SPDX-License-Identifier: GPL-2.0-only */
/* manager.h: the event loop and the targets' lifetimes (manager.c), and the settings loader.
 * The manager's other parts declare theirs in manager_targets.h, manager_attach.h,
 * manager_watch.h and manager_events.h (its subscribers), included here. */
#ifndef KPROF_DAEMON_MANAGER_H
#define KPROF_DAEMON_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include <systemd/sd-event.h>

#include "kprof/abi.h"
#include "kprof/config.h"
#include "os/cgroups.h"
#include "manager/manager_attach.h"
#include "manager/manager_events.h"
#include "manager/manager_targets.h"
#include "manager/manager_watch.h"
#include "target/target.h"
#include "manager/manager_offcpu.h"

struct jvmattach_ctx;
struct target_list;

/* attach --cgroup/--unit: a cgroup whose present and future processes are attached (each with
 * --children), kp_cgroups telling kprofd of those that enter it. */
#define MANAGER_MAX_WATCHES KP_MAX_CGROUPS
#define MANAGER_WATCHES_PER_USER 4 /* a user's; root's are the rest */
struct cgwatch {
	struct cgroup_ref ref;
	char name[PATH_MAX];	 /* what was asked: NAME.service, or the cgroup's path */
	struct attach_opts opts; /* for each member: children on, by the client */
	uint64_t since_ns;	 /* CLOCK_REALTIME */
	unsigned joined, refused;
	/* A unit's cgroup goes when the unit stops and comes back, another, when it starts
	 * again (a restart): its watch waits for it (unit), not ended (a cgroup path's, unless
	 * a watch rule's: opts.rule). A rule's watch may also start waiting (not there yet). */
	bool unit, waiting;
	unsigned restarts; /* the unit's cgroup found again after it had gone */
};
struct loader;
struct offcpu_bpf;
struct ringbuf;
struct syswide;
struct httpd;
/* The pprof endpoint's counts for `status`, written by http/ (a layer above) after each of its
 * steps, read by service/: the manager holds them so neither reaches up. */
struct http_stats {
	bool on; /* the endpoint runs */
	const char *listen;
	bool token;
	unsigned connections, waiting;
	uint64_t unauthorized, left, evicted, busy, served;
	uint64_t profiles, profile_cpu_ns; /* interval profiles answered, the CPU spent on them */
	uint64_t built_off_loop;	   /* pprof builds run in the build thread */
	unsigned building;		   /* builds handed to it, not back yet */
};
struct sampler;
struct store;
struct windows;
struct symbolizer;

/* Builds the settings from scratch (defaults, file, flags); manager_new gets one, and SIGHUP
 * calls it again. 0, or a negative errno with a message in err. */
typedef int (*config_load_fn)(struct config *conf, char *err, size_t errlen, void *userdata);

struct manager {
	struct config conf;
	config_load_fn load_config;
	void *load_userdata;
	gid_t read_gid;	     /* conf.read_group resolved, (gid_t)-1 if none */
	struct store *store; /* NULL: profiles are kept in memory only */
	sd_event *event;
	struct loader *loader;
	struct sampler *sampler;
	struct ringbuf *ringbuf;
	struct symbolizer *sym;
	struct jvmattach_ctx *jvm; /* exchanges with HotSpot JVMs (jvmattach.c) */
	struct srclines *lines;	   /* source lines through kprof-lines, and their cache */
	struct codeshare *code;	   /* file-backed code copies shared by a owner's targets */
	struct target_env env;	   /* what targets get of the daemon (target.h) */
	struct target_list *list;  /* private to manager_targets.c: manager_for_each_target */
	unsigned n_attached, n_kept;
	uint64_t start_ns;
	uint64_t samples, unknown_tgid;
	/* samples/s over the last rate window */
	uint64_t rate_prev_samples, rate_prev_ns;
	double rate;
	sd_event_source *drain_timer, *refresh_timer, *rb_source;
	uint64_t drained_ns; /* last drain (CLOCK_MONOTONIC) */
	/* Samples added a target at a time (manager.c): on while a drain keeps them, the targets
	 * holding some, their bytes; counts of the samples kept and of the runs added. */
	bool batching, batch_on, batch_said; /* batch_on: manager_batch_wanted's last answer */
	struct target *batch_head;
	uint64_t batch_bytes, batch_kept, batch_runs;
	uint64_t profile_bytes; /* all targets' profiles, at the last housekeeping */
	bool over_total;	/* profile_bytes over limits.profiles_mb (logged when it changes) */
	uint64_t spent_bytes; /* profile_bytes when the budget was found spent (the floors' base) */
	bool per_cpu;	      /* targets are sampled by the per-CPU sets */
	unsigned max_thread_fds; /* conf.max_thread_fds, within the fd limit */
	uint64_t thread_drops;	 /* KP_CTR_THREAD_DROPS at the last housekeeping */
	uint64_t lc_drops;	 /* KP_CTR_LC_DROPS at the last housekeeping */
	uint64_t alive_checks;	 /* /proc reads for a lost exit (housekeeping) */
	/* Credential checks of attached targets by the housekeeping (cred_ticks), and the full
	 * reads of /proc/PID/status among all checks (cred_reads): a debug counter (status). */
	uint64_t cred_ticks, cred_reads;
	uint64_t quiet_skips; /* housekeeping ticks of quiet targets left out (status) */
	struct cgwatch *watches[MANAGER_MAX_WATCHES];
	unsigned n_watches;
	/* The modules built on the manager, told of its events (manager_events.h). */
	struct manager_sub subs[MANAGER_MAX_SUBSCRIBERS];
	unsigned n_subs;
	bool stopping;			   /* no new target from a stranger's sample */
	uint64_t auto_refused;		   /* attaches refused by limits.max_auto_targets */
	uint64_t rt_window_ns, rt_used_ns; /* attaches run SCHED_FIFO: this second's, and time */
	/* The time windows (windows.c) and system-wide mode (syswide.c), for the requests that
	 * use them: set by main.c, which creates them, NULL before. */
	struct windows *windows;
	struct syswide *sw;
	struct httpd *http; /* the pprof endpoint (http.c, a layer above), NULL when off */
	struct http_stats http_stats; /* its counts (http_publish) */
	uint64_t all_taken_over;      /* --all targets ended by another attach of their process */
	uint64_t all_kept_dropped;    /* --all ended profiles dropped by limits.max_kept */
	uint64_t all_samples;	      /* samples added to --all targets */
	/* Off-CPU time (manager_offcpu.c): its maps' reader, made at the first target that
	 * asks; sums of no such target. */
	struct offcpu_bpf *offcpu;
	uint64_t offcpu_unknown;
	unsigned offcpu_attached; /* attached targets that ask for it */
	bool offcpu_all;	  /* system-wide mode asks for it (attach --all --off-cpu) */
	uint64_t offcpu_callers_found, offcpu_callers_lost; /* sums of frameless user leaves */
};

#define MANAGER_MAX_FREQS 64 /* distinct frequencies a status lists */

int manager_new(config_load_fn load, void *userdata, struct manager **ret);
void manager_free(struct manager *m);
int manager_run(struct manager *m);
/* Hand what the ring buffer holds to the builders now (bounded, like a timer drain): replies
 * and live views then include samples taken up to the request, whatever drain_ms is. */
void manager_drain(struct manager *m);
/* Samples alone wait this long in the ring buffer for a batch (manager.c). */
#define MANAGER_BATCH_MS 500
/* What the drain timer does: a drain when asked (drain), then a step of the symbol files of
 * the targets whose last read stopped short. The timer calls it; so does bench/replay.c, in
 * simulated time. */
void manager_batch(struct manager *m, bool drain);
/* Whether a drain now keeps samples to add them a target at a time (daemon.batch_min_targets
 * reached): what the drain timer and the ring buffer's wakeup set m->batching to (and
 * bench/replay.c around what it feeds). */
bool manager_batch_wanted(struct manager *m);
/* Add the samples waiting in runs: every target's (all), or those of targets with a run's worth
 * or waiting since BATCH_MAX_MS. */
void manager_batch_flush(struct manager *m, bool all);
/* What runs once a second (the housekeeping timer): lost exits, credentials, symbol files,
 * watches, kept profiles' expiry and saves, the profile budget, the samples/s rate. */
void manager_housekeeping(struct manager *m);
uint64_t manager_cpu_ns(void);
/* The distinct sampling frequencies of the attached targets, at most max. */
int manager_freqs(const struct manager *m, unsigned *out, int max);

#endif
