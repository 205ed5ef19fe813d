// SPDX-License-Identifier: GPL-2.0-only
/* config.c: defaults and the INI parser of kprofd's settings (see include/kprof/config.h).
 *
 * A table lists every key: section, name, type, range and where it goes in struct config.
 * Parsing works on a copy, so *conf changes only when the whole text is valid.
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "kprof/config.h"
#include "kprof/httpq.h"
#include "kprof/rbsize.h"

enum key_type { KEY_UINT, KEY_STRING, KEY_FRACTION, KEY_BOOL, KEY_CHOICE };

struct key {
	const char *section, *name;
	enum key_type type;
	size_t offset, size;
	unsigned long min, max;
	const char *const *choices; /* KEY_CHOICE: the values, stored as their index */
};

static const char *const sampling_choices[] = {"threads", "cpus", NULL};

#define UINT_KEY(sec, key, field, lo, hi)                                                          \
	{                                                                                          \
		sec, key, KEY_UINT, offsetof(struct config, field), 0, lo, hi, NULL                \
	}
#define CHOICE_KEY(sec, key, field, list)                                                          \
	{                                                                                          \
		sec, key, KEY_CHOICE, offsetof(struct config, field), 0, 0, 0, list                \
	}
#define STR_KEY(sec, key, field)                                                                   \
	{                                                                                          \
		sec, key, KEY_STRING, offsetof(struct config, field),                              \
		    sizeof(((struct config *)0)->field), 0, 0, NULL                                \
	}

static const struct key keys[] = {
    STR_KEY("daemon", "socket", socket_path),
    STR_KEY("daemon", "state_dir", state_dir),
    UINT_KEY("daemon", "frequency", default_freq, 1, KPROF_MAX_FREQ),
    UINT_KEY("daemon", "ringbuf_size", ringbuf_bytes, 0, RBSIZE_LIMIT_MB << 20),
    UINT_KEY("daemon", "ringbuf_max_mb", ringbuf_max_mb, 1, RBSIZE_LIMIT_MB),
    UINT_KEY("daemon", "drain_ms", drain_ms, 1, 10000),
    UINT_KEY("daemon", "batch_min_targets", batch_min_targets, 0, KPROF_MAX_TARGETS),
    CHOICE_KEY("daemon", "sampling", sampling, sampling_choices),
    UINT_KEY("daemon", "system_wide", system_wide, 0, KPROF_MAX_FREQ),
    UINT_KEY("limits", "max_targets", max_targets, 1, KPROF_MAX_TARGETS),
    UINT_KEY("limits", "max_kept", max_kept, 0, 100000),
    UINT_KEY("limits", "kept_max_age", kept_max_age_sec, 0, 10u * 365 * 86400),
    UINT_KEY("limits", "max_clients", max_clients, 1, 10000),
    UINT_KEY("limits", "client_timeout", client_timeout_sec, 1, 86400),
    UINT_KEY("limits", "perfmap_max_mb", perfmap_max_mb, 1, 4096),
    UINT_KEY("limits", "max_stacks", max_stacks, 1024, 1u << 24),
    UINT_KEY("limits", "hcct_max_nodes", hcct_max_nodes, 0, 1u << 28),
    UINT_KEY("limits", "ksf_max_nodes", ksf_max_nodes, 64, 1u << 28),
    UINT_KEY("limits", "max_paths", max_paths, 0, 4294967295u),
    UINT_KEY("limits", "probe_slowdown_pct", probe_slowdown_pct, 0, 10000),
    UINT_KEY("limits", "max_auto_targets", max_auto_targets, 0, KPROF_MAX_TARGETS),
    UINT_KEY("limits", "max_targets_per_uid", max_targets_per_uid, 1, 1024),
    UINT_KEY("limits", "max_kept_per_uid", max_kept_per_uid, 0, 100000),
    UINT_KEY("limits", "max_clients_per_uid", max_clients_per_uid, 1, 10000),
    UINT_KEY("limits", "max_freqs_per_uid", max_freqs_per_uid, 1, 8),
    UINT_KEY("limits", "max_probes_per_uid", max_probes_per_uid, 0, 1u << 20),
    UINT_KEY("limits", "max_threads", max_threads, 1, 1u << 16),
    UINT_KEY("limits", "max_thread_fds", max_thread_fds, 1, 1u << 20),
    UINT_KEY("limits", "frame_timeout", frame_timeout_sec, 1, 86400),
    UINT_KEY("limits", "reply_pending_mb", reply_pending_mb, 1, 1u << 20),
    UINT_KEY("limits", "reply_pending_per_uid_mb", reply_pending_per_uid_mb, 1, 1u << 20),
    UINT_KEY("limits", "symbols_mb", symbols_mb, 16, 1u << 20),
    UINT_KEY("limits", "symbols_per_uid_mb", symbols_per_uid_mb, 16, 1u << 20),
    UINT_KEY("limits", "profiles_mb", profiles_mb, 16, 1u << 20),
    UINT_KEY("limits", "profiles_per_uid_mb", profiles_per_uid_mb, 16, 1u << 20),
    STR_KEY("access", "read_group", read_group),
    {"hcct", "phi", KEY_FRACTION, offsetof(struct config, hcct_phi), 0, 0, 0, NULL},
    {"hcct", "eps", KEY_FRACTION, offsetof(struct config, hcct_eps), 0, 0, 0, NULL},
    {"jvm", "perfmap", KEY_BOOL, offsetof(struct config, jvm_perfmap), 0, 0, 0, NULL},
    STR_KEY("http", "listen", http_listen),
    STR_KEY("http", "token_file", http_token_file),
    {"http", "insecure_no_auth", KEY_BOOL, offsetof(struct config, http_insecure_no_auth), 0, 0, 0,
     NULL},
    UINT_KEY("http", "max_connections", http_max_connections, 1, 1024),
    UINT_KEY("http", "max_per_source", http_max_per_source, 1, 1024),
    UINT_KEY("http", "max_waiting", http_max_waiting, 1, 1024),
    UINT_KEY("http", "max_waiting_per_source", http_max_waiting_per_source, 1, 1024),
    UINT_KEY("http", "max_seconds", http_max_seconds, 1, 3600),
    UINT_KEY("http", "request_timeout", http_request_timeout, 1, 300),
    UINT_KEY("windows", "seconds", window_sec, 1, 3600),
    UINT_KEY("windows", "max_age", window_max_age_sec, 0, 10u * 365 * 86400),
    UINT_KEY("windows", "memory_mb", window_memory_mb, 1, 1u << 20),
    UINT_KEY("windows", "disk_mb", window_disk_mb, 0, 1u << 24),
    UINT_KEY("windows", "memory_per_uid_mb", window_memory_per_uid_mb, 1, 1u << 20),
    UINT_KEY("windows", "disk_per_uid_mb", window_disk_per_uid_mb, 1, 1u << 24),
    UINT_KEY("windows", "step_ms", window_step_ms, 0, 1000),
    {"drift", "enabled", KEY_BOOL, offsetof(struct config, drift_enabled), 0, 0, 0, NULL},
    UINT_KEY("drift", "window", drift_window, 16, 4096),
    UINT_KEY("drift", "min_samples", drift_min_samples, 8, 4096),
    UINT_KEY("drift", "end_after", drift_end_after, 0, 86400),
    {"drift", "threshold", KEY_FRACTION, offsetof(struct config, drift_threshold), 0, 0, 0, NULL},
    {"lines", "enabled", KEY_BOOL, offsetof(struct config, lines_enabled), 0, 0, 0, NULL},
    STR_KEY("lines", "helper", lines_helper),
    STR_KEY("lines", "debug_dir", lines_debug_dir),
    UINT_KEY("lines", "cache_mb", lines_cache_mb, 1, 4096),
};

void config_defaults(struct config *conf)
{
	*conf = (struct config){
	    .default_freq = KPROF_DEFAULT_FREQ,
	    .max_targets = 256,
	    .max_kept = 64,
	    .kept_max_age_sec = 7 * 86400,
	    .perfmap_max_mb = 512,
	    .max_stacks = 1u << 18,
	    .ksf_max_nodes = 1u << 20,
	    .probe_slowdown_pct = 110,
	    .hcct_phi = 1e-3,
	    .hcct_eps = 2e-4,
	    .max_clients = 64,
	    .client_timeout_sec = 60,
	    .max_targets_per_uid = 64,
	    .max_kept_per_uid = 16,
	    .max_clients_per_uid = 16,
	    .max_freqs_per_uid = 4,
	    .max_probes_per_uid = 1024,
	    .frame_timeout_sec = 10,
	    .reply_pending_mb = 1024,
	    .reply_pending_per_uid_mb = 256,
	    .symbols_mb = 2048,
	    .symbols_per_uid_mb = 512,
	    .profiles_mb = 8192,
	    .profiles_per_uid_mb = 2048,
	    .drain_ms = 50,
	    .batch_min_targets = 128,
	    .ringbuf_max_mb = RBSIZE_DEFAULT_MAX_MB,
	    .sampling = CONFIG_SAMPLING_THREADS,
	    .max_threads = 4096,
	    .max_thread_fds = 32768,
	    .perfmap_refresh_ms = 1000,
	    .jvm_perfmap = true,
	    .max_auto_targets = 128,
	    .http_max_connections = 32,
	    .http_max_per_source = 16,
	    .http_max_waiting = 16,
	    .http_max_waiting_per_source = 4,
	    .http_max_seconds = 300,
	    .http_request_timeout = 10,
	    .window_sec = 10,
	    .window_max_age_sec = 86400,
	    .window_memory_mb = 64,
	    .window_disk_mb = 1024,
	    .window_memory_per_uid_mb = 16,
	    .window_disk_per_uid_mb = 256,
	    .window_step_ms = 10,
	    .drift_enabled = true,
	    .drift_window = 256,
	    .drift_min_samples = 128,
	    .drift_end_after = 30,
	    .drift_threshold = 0.5,
	    .lines_enabled = true,
	    .lines_cache_mb = 32,
	};
	strcpy(conf->socket_path, KPROF_DEFAULT_SOCKET);
	strcpy(conf->state_dir, KPROF_DEFAULT_STATE_DIR);
}

/* [watch] rule = ...: each line adds a rule. */
static int set_watch_rule(struct config *conf, const char *key, const char *value, char *err,
			  size_t errlen)
{
	struct rule r;
	char why[200];

	if (strcmp(key, "rule")) {
		snprintf(err, errlen, "unknown key '%s' in section [watch] (only rule)", key);
		return -EINVAL;
	}
	if (rule_parse(value, strlen(value), &r, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "watch.rule: %s", why);
		return -EINVAL;
	}
	if (conf->n_watch_rules >= CONFIG_MAX_RULES) {
		snprintf(err, errlen, "watch.rule: more than %d rules", CONFIG_MAX_RULES);
		return -EINVAL;
	}
	conf->watch_rules[conf->n_watch_rules++] = r;
	return 0;
}

static int set_fraction(struct config *conf, const struct key *k, const char *value, char *err,
			size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	/* eps >= 1e-7: at most 10M counters (400 MB) per target. */
	if (errno || end == value || *end || !(v >= 1e-7 && v <= 1)) {
		snprintf(err, errlen, "%s.%s: '%s' is not a number in [1e-7, 1]", k->section,
			 k->name, value);
		return -EINVAL;
	}
	*(double *)((char *)conf + k->offset) = v;
	return 0;
}

static int set_bool(struct config *conf, const struct key *k, const char *value, char *err,
		    size_t errlen)
{
	static const char *const on[] = {"on", "yes", "true", "1"};
	static const char *const off[] = {"off", "no", "false", "0"};

	for (size_t i = 0; i < ARRAY_SIZE(on); i++) {
		if (!strcmp(value, on[i]) || !strcmp(value, off[i])) {
			*(bool *)((char *)conf + k->offset) = !strcmp(value, on[i]);
			return 0;
		}
	}
	snprintf(err, errlen, "%s.%s: '%s' is not on or off", k->section, k->name, value);
	return -EINVAL;
}

static int set_choice(struct config *conf, const struct key *k, const char *value, char *err,
		      size_t errlen)
{
	for (unsigned i = 0; k->choices[i]; i++) {
		if (!strcmp(value, k->choices[i])) {
			*(unsigned *)((char *)conf + k->offset) = i;
			return 0;
		}
	}
	snprintf(err, errlen, "%s.%s: '%s' is not one of", k->section, k->name, value);
	for (unsigned i = 0; k->choices[i]; i++) {
		size_t n = strlen(err);

		snprintf(err + n, errlen - n, "%s '%s'", i ? " or" : "", k->choices[i]);
	}
	return -EINVAL;
}

static int set_string(struct config *conf, const struct key *k, const char *value, char *err,
		      size_t errlen)
{
	if (strlen(value) >= k->size) {
		snprintf(err, errlen, "%s.%s: value longer than %zu bytes", k->section, k->name,
			 k->size - 1);
		return -EINVAL;
	}
	/* The address is checked here, so a bad one fails the start or the reload. */
	if (k->offset == offsetof(struct config, http_listen) && value[0]) {
		struct httpq_addr a;
		char why[160];

		if (httpq_listen(value, &a, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s.%s: %s", k->section, k->name, why);
			return -EINVAL;
		}
	}
	strcpy((char *)conf + k->offset, value);
	return 0;
}

static int set_uint(struct config *conf, const struct key *k, const char *value, char *err,
		    size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || end == value || *end || value[0] == '-' || v < k->min || v > k->max) {
		snprintf(err, errlen, "%s.%s: '%s' is not a number in %lu-%lu", k->section, k->name,
			 value, k->min, k->max);
		return -EINVAL;
	}
	*(unsigned *)((char *)conf + k->offset) = v;
	return 0;
}

int config_set(struct config *conf, const char *section, const char *key, const char *value,
	       char *err, size_t errlen)
{
	const struct key *k = NULL;
	int known_section = 0;

	if (!strcmp(section, "watch"))
		return set_watch_rule(conf, key, value, err, errlen);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		known_section |= !strcmp(keys[i].section, section);
		if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, key))
			k = &keys[i];
	}
	if (!known_section) {
		snprintf(err, errlen, "unknown section [%s]", section);
		return -EINVAL;
	}
	if (!k) {
		snprintf(err, errlen, "unknown key '%s' in section [%s]", key, section);
		return -EINVAL;
	}
	switch (k->type) {
	case KEY_FRACTION:
		return set_fraction(conf, k, value, err, errlen);
	case KEY_BOOL:
		return set_bool(conf, k, value, err, errlen);
	case KEY_CHOICE:
		return set_choice(conf, k, value, err, errlen);
	case KEY_STRING:
		return set_string(conf, k, value, err, errlen);
	case KEY_UINT:
		break;
	}
	return set_uint(conf, k, value, err, errlen);
}

struct parse_ctx {
	struct config conf;
	char msg[256];
	int failed;
};

/* Debian's inih passes no line number to handlers; ini_parse_string returns the line of the
 * first handler failure instead. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;

	if (ctx->failed)
		return 0;
	if (config_set(&ctx->conf, section, name, value, ctx->msg, sizeof(ctx->msg)) < 0) {
		ctx->failed = 1;
		return 0;
	}
	return 1;
}

int config_parse(const char *text, const char *filename, struct config *conf, char *err,
		 size_t errlen)
{
	struct parse_ctx ctx = {.conf = *conf};
	int r = ini_parse_string(text, on_key, &ctx);

	if (r == -2) {
		snprintf(err, errlen, "%s: out of memory", filename);
		return -ENOMEM;
	}
	if (ctx.failed) {
		snprintf(err, errlen, "%s:%d: %s", filename, r, ctx.msg);
		return -EINVAL;
	}
	if (r != 0) {
		snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)",
			 filename, r);
		return -EINVAL;
	}
	/* [drift]: keys that are valid alone but not together (ALGORITHMS.md §12). */
	if (ctx.conf.drift_min_samples > ctx.conf.drift_window || ctx.conf.drift_threshold >= 1) {
		snprintf(err, errlen,
			 "%s: [drift] min_samples (%u) must not exceed window (%u), and threshold "
			 "(%g) must be below 1",
			 filename, ctx.conf.drift_min_samples, ctx.conf.drift_window,
			 ctx.conf.drift_threshold);
		return -EINVAL;
	}
	*conf = ctx.conf;
	return 0;
}
