/* SPDX-License-Identifier: GPL-2.0-only */
/* manager.h: the event loop and the targets' lifetimes (manager.c), and the settings loader.
 * The manager's other parts declare theirs in manager_targets.h, manager_attach.h and
 * manager_watch.h, included here. */
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
#include "cgroups.h"
#include "manager_attach.h"
#include "manager_targets.h"
#include "manager_watch.h"
#include "target.h"

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
/* What the watch rules (watch.c, a layer above) are told of: set with manager_set_hooks. */
struct manager_hooks {
	/* A process that is no target exec'd with a comm or uid a rule names (KP_REC_WATCH). */
	void (*on_exec)(void *ud, const struct kp_execwatch *w);
	/* The settings were read again (SIGHUP): m->conf holds the new ones. */
	void (*on_reload)(void *ud);
};
struct loader;
struct ringbuf;
struct syswide;
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
	struct target_env env;	   /* what targets get of the daemon (target.h) */
	struct target_list *list;  /* private to manager_targets.c: manager_for_each_target */
	unsigned n_attached, n_kept;
	uint64_t start_ns;
	uint64_t samples, unknown_tgid;
	/* samples/s over the last rate window */
	uint64_t rate_prev_samples, rate_prev_ns;
	double rate;
	sd_event_source *drain_timer, *refresh_timer, *rb_source;
	uint64_t drained_ns;	 /* last drain (CLOCK_MONOTONIC) */
	uint64_t profile_bytes;	 /* all targets' profiles, at the last housekeeping */
	bool per_cpu;		 /* targets are sampled by the per-CPU sets */
	unsigned max_thread_fds; /* conf.max_thread_fds, within the fd limit */
	uint64_t thread_drops;	 /* KP_CTR_THREAD_DROPS at the last housekeeping */
	struct cgwatch *watches[MANAGER_MAX_WATCHES];
	unsigned n_watches;
	const struct manager_hooks *hooks;
	void *hooks_ud;
	uint64_t auto_refused;		   /* attaches refused by limits.max_auto_targets */
	uint64_t rt_window_ns, rt_used_ns; /* attaches run SCHED_FIFO: this second's, and time */
	/* The time windows (windows.c), NULL until set up. */
	struct windows *windows;
	/* System-wide mode (syswide.c, a layer above, sets these): a sample of a process that
	 * is no target (KP_SF_STRANGER) goes to on_stranger, which makes it one (returned) or
	 * counts it (NULL). */
	struct target *(*on_stranger)(void *ud, const struct kp_sample *s);
	void *stranger_ud;
	struct syswide *sw;
	uint64_t all_taken_over;   /* --all targets ended by another attach of their process */
	uint64_t all_kept_dropped; /* --all ended profiles dropped by limits.max_kept */
	uint64_t all_samples;	   /* samples added to --all targets */
};

#define MANAGER_MAX_FREQS 64 /* distinct frequencies a status lists */

int manager_new(config_load_fn load, void *userdata, struct manager **ret);
void manager_free(struct manager *m);
int manager_run(struct manager *m);
/* Hand what the ring buffer holds to the builders now (bounded, like a timer drain): replies
 * and live views then include samples taken up to the request, whatever drain_ms is. */
void manager_drain(struct manager *m);
uint64_t manager_cpu_ns(void);
void manager_set_hooks(struct manager *m, const struct manager_hooks *h, void *ud);
/* The distinct sampling frequencies of the attached targets, at most max. */
int manager_freqs(const struct manager *m, unsigned *out, int max);

#endif
