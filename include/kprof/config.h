/* SPDX-License-Identifier: GPL-2.0-only */
/* config.h: kprofd's settings and the pure parser of its INI config file.
 *
 * Settings come from three places, later ones winning: built-in defaults (config_defaults),
 * the config file (/etc/kprofd/kprofd.conf, INI, parsed here from its text with inih), and
 * command-line flags. config_parse rejects unknown sections and keys and out-of-range values
 * with a message naming the file, the line and the key, and leaves *conf untouched on error,
 * so a failed reload keeps the old settings. No I/O: the glue reads the file.
 */
#ifndef KPROF_CONFIG_H
#define KPROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "kprof/rule.h"

#define KPROF_DEFAULT_SOCKET "/run/kprofd/kprofd.sock"
#define KPROF_DEFAULT_CONFIG "/etc/kprofd/kprofd.conf"
#define KPROF_DEFAULT_STATE_DIR "/var/lib/kprofd"
#define KPROF_DEFAULT_FREQ 99
#define KPROF_MAX_FREQ 4999
/* limits.max_targets's hard cap: the entries of the BPF map kp_targets (KP_MAX_TARGETS). */
#define KPROF_MAX_TARGETS 8192
#define CONFIG_MAX_RULES 32 /* [watch] rule lines */

/* daemon.sampling: how an attached process is sampled */
enum config_sampling {
	CONFIG_SAMPLING_THREADS = 0, /* its own per-thread events (the default) */
	CONFIG_SAMPLING_CPUS = 1,    /* per-CPU events that fire whatever runs */
};

struct config {
	char socket_path[108];
	char read_group[64]; /* members may list and read every profile; "" = nobody */
	char state_dir[256]; /* kept profiles are written here; "" = memory only */
	unsigned default_freq;
	unsigned max_targets;	   /* attached at once */
	unsigned max_kept;	   /* ended (exited or detached) profiles kept */
	unsigned kept_max_age_sec; /* kept profiles older than this are dropped; 0 = never */
	unsigned max_clients;
	unsigned client_timeout_sec; /* a client silent this long is closed */
	unsigned ringbuf_bytes;	     /* 0: sized from what can arrive (rbsize.h) */
	unsigned ringbuf_max_mb;     /* the bound of a computed size */
	unsigned drain_ms;	     /* ring buffer drain period */
	unsigned batch_min_targets; /* samples added a target at a time from this many (0: never) */
	unsigned sampling;	    /* enum config_sampling */
	unsigned system_wide; /* daemon.system_wide: attach --all at this frequency (0: off) */
	unsigned perfmap_refresh_ms;
	unsigned perfmap_max_mb; /* bytes of one perf map read, in MiB */
	unsigned max_stacks;	 /* distinct stacks per profile */
	unsigned hcct_max_nodes; /* MCCT nodes per HCCT; 0: 32 m + 1024 for m = ceil(1/eps) */
	unsigned ksf_max_nodes;	 /* k-SF nodes of a path trace (32 bytes each) */
	unsigned max_paths;	 /* acyclic paths numbered per traced function; 0: 2^40 */
	/* A path trace stops once its target runs this many percent of its untraced CPU time
	 * per unit of work (110: 1.1x), unless its request says otherwise; 0: no default. */
	unsigned probe_slowdown_pct;
	/* What one non-root uid may hold (root is held only by the global limits, and the last
	 * eighth of each global limit is kept for root). */
	unsigned max_targets_per_uid;
	unsigned max_kept_per_uid;
	unsigned max_clients_per_uid;
	unsigned max_freqs_per_uid;  /* distinct sampling frequencies */
	unsigned max_probes_per_uid; /* exact-mode functions probed (4 fds each) */
	unsigned max_threads;	     /* per-thread events (one fd each) of one target */
	unsigned max_thread_fds;     /* per-thread events of all targets */
	unsigned frame_timeout_sec;  /* a request frame must be whole this long after it began */
	unsigned reply_pending_mb;   /* reply bytes queued for all clients */
	unsigned reply_pending_per_uid_mb; /* reply bytes queued for one uid's clients */
	unsigned symbols_mb;		   /* symbols, perf maps and ELF tables of all targets */
	unsigned symbols_per_uid_mb;	   /* the same, for one uid's targets */
	unsigned profiles_mb;		   /* profiles and HCCTs of all targets, kept ones too */
	unsigned profiles_per_uid_mb;	   /* the same, for one uid's targets */
	double hcct_phi;		   /* default phi of hcct queries */
	double hcct_eps;  /* default eps of new targets: m = ceil(1/eps) counters */
	bool jvm_perfmap; /* ask HotSpot JVMs to write their perf maps ([jvm] perfmap) */
	/* Processes attached by watch rules (kprofctl watch, [watch] rule), children included. */
	unsigned max_auto_targets;
	/* [watch] rule = KIND:VALUE ...: one line each (rule.h), root's rules. */
	struct rule watch_rules[CONFIG_MAX_RULES];
	unsigned n_watch_rules;
	/* [http]: the pprof endpoint (daemon/http/http.c), off when listen is "" */
	char http_listen[64];	    /* ADDRESS:PORT, numeric (httpq_listen) */
	char http_token_file[256];  /* "Authorization: Bearer" token; required unless the opt-out */
	bool http_insecure_no_auth; /* loopback without a token: every local user reads all */
	unsigned http_max_connections;
	unsigned http_max_per_source;	      /* connections from one address (off loopback) */
	unsigned http_max_waiting;	      /* profile requests waiting at once */
	unsigned http_max_waiting_per_source; /* ... of them from one address */
	unsigned http_max_seconds;	      /* bound of seconds= */
	unsigned http_request_timeout;	      /* seconds from connect to a whole request */
	/* [drift]: profile drift of JIT functions (drift.h), for targets attached from then on */
	bool drift_enabled;
	unsigned drift_window;	    /* W */
	unsigned drift_min_samples; /* T1 */
	unsigned drift_end_after;   /* s without a sample that end a function (0: never) */
	double drift_threshold;	    /* overlap below this is a drift, < 1 */
	int verbose;
	/* [windows]: each target's samples also in windows of window_sec (ARCHITECTURE.md §1.6) */
	unsigned window_sec;
	unsigned window_max_age_sec; /* 0: no age limit */
	unsigned window_memory_mb;
	unsigned window_disk_mb; /* 0: windows are not written */
	/* One non-root uid's windows at most (the users' together never the last eighth) */
	unsigned window_memory_per_uid_mb, window_disk_per_uid_mb;
	unsigned window_step_ms; /* a range query's step between other work (0: one window) */
	/* [lines]: source lines of native code through kprof-lines (srclines.c, issue 32) */
	bool lines_enabled;
	char lines_helper[256];	   /* the kprof-lines program; "": beside kprofd, then ../bin */
	char lines_debug_dir[256]; /* a host directory of debug files, before the targets' own */
	unsigned lines_cache_mb;   /* resolved lines kept across exports */
};

void config_defaults(struct config *conf);

/* Parse INI text over *conf (keys not in the text keep their values). 0, or -EINVAL with a
 * message in err ("FILE:LINE: unknown key 'x' in section [daemon]"), or -ENOMEM. */
int config_parse(const char *text, const char *filename, struct config *conf, char *err,
		 size_t errlen);

/* One setting by its INI name ("daemon.frequency"), as on the command line; same checks. */
int config_set(struct config *conf, const char *section, const char *key, const char *value,
	       char *err, size_t errlen);

#endif
