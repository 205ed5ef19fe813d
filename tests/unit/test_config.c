// SPDX-License-Identifier: GPL-2.0-only
/* test_config.c: unit tests of the INI config parser (daemon/lib/config.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "kprof/config.h"

static void test_defaults(void **state)
{
	struct config c;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.socket_path, "/run/kprofd/kprofd.sock");
	assert_int_equal(c.default_freq, 99);
	assert_int_equal(c.max_targets, 256);
	assert_int_equal(c.batch_min_targets, 128);
	assert_int_equal(c.max_kept, 64);
	assert_int_equal(c.max_clients, 64);
	assert_int_equal(c.client_timeout_sec, 60);
	assert_int_equal(c.ringbuf_bytes, 0);
	assert_int_equal(c.ringbuf_max_mb, 8);
	assert_int_equal(c.sampling, CONFIG_SAMPLING_THREADS);
	assert_int_equal(c.max_threads, 4096);
	assert_int_equal(c.max_thread_fds, 32768);
	assert_string_equal(c.read_group, "");
	assert_int_equal(c.perfmap_max_mb, 512);
	assert_int_equal(c.max_stacks, 262144);
	assert_int_equal(c.hcct_max_nodes, 0);
	assert_int_equal(c.ksf_max_nodes, 1u << 20);
	assert_int_equal(c.max_paths, 0);
	assert_int_equal(c.probe_slowdown_pct, 110);
	assert_int_equal(c.max_targets_per_uid, 64);
	assert_int_equal(c.max_kept_per_uid, 16);
	assert_int_equal(c.max_clients_per_uid, 16);
	assert_int_equal(c.max_freqs_per_uid, 4);
	assert_int_equal(c.max_probes_per_uid, 1024);
	assert_int_equal(c.frame_timeout_sec, 10);
	assert_int_equal(c.reply_pending_mb, 1024);
	assert_int_equal(c.reply_pending_per_uid_mb, 256);
	assert_int_equal(c.symbols_mb, 2048);
	assert_int_equal(c.symbols_per_uid_mb, 512);
	assert_int_equal(c.profiles_mb, 8192);
	assert_int_equal(c.profiles_per_uid_mb, 2048);
	assert_true(c.hcct_phi == 1e-3 && c.hcct_eps == 2e-4);
	assert_true(c.jvm_perfmap);
}

static void test_limits_and_hcct(void **state)
{
	const char *text = "[limits]\nperfmap_max_mb = 8\nmax_stacks = 4096\nhcct_max_nodes = "
			   "999\nksf_max_nodes = 5000\nmax_paths = 4\n"
			   "max_targets_per_uid = 3\nmax_clients_per_uid = 2\nsymbols_mb = 64\n"
			   "[hcct]\nphi = 0.05\neps = 0.01\n";
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_parse(text, "k.conf", &c, err, sizeof(err)), 0);
	assert_int_equal(c.perfmap_max_mb, 8);
	assert_int_equal(c.max_stacks, 4096);
	assert_int_equal(c.hcct_max_nodes, 999);
	assert_int_equal(c.ksf_max_nodes, 5000);
	assert_int_equal(c.max_paths, 4);
	assert_int_equal(c.max_targets_per_uid, 3);
	assert_int_equal(c.max_clients_per_uid, 2);
	assert_int_equal(c.symbols_mb, 64);
	assert_true(c.hcct_phi == 0.05 && c.hcct_eps == 0.01);
	assert_int_equal(config_parse("[hcct]\neps = 0\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "k.conf:2: hcct.eps: '0' is not a number in [1e-7, 1]");
	assert_int_equal(
	    config_parse("[limits]\nmax_stacks = 10\n", "k.conf", &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(c.max_stacks, 4096);
}

static void test_jvm(void **state)
{
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_parse("[jvm]\nperfmap = off\n", "k.conf", &c, err, sizeof(err)), 0);
	assert_false(c.jvm_perfmap);
	assert_int_equal(config_parse("[jvm]\nperfmap = yes\n", "k.conf", &c, err, sizeof(err)), 0);
	assert_true(c.jvm_perfmap);
	assert_int_equal(config_set(&c, "jvm", "perfmap", "0", err, sizeof(err)), 0);
	assert_false(c.jvm_perfmap);
	/* Anything else is refused, the setting kept. */
	assert_int_equal(config_parse("[jvm]\nperfmap = maybe\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "k.conf:2: jvm.perfmap: 'maybe' is not on or off");
	assert_false(c.jvm_perfmap);
	assert_int_equal(config_set(&c, "jvm", "perfmap", "", err, sizeof(err)), -EINVAL);
}

/* daemon.system_wide (attach --all from the start): off by default, a frequency in range. */
static void test_system_wide(void **state)
{
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.system_wide, 0);
	assert_int_equal(
	    config_parse("[daemon]\nsystem_wide = 19\n", "k.conf", &c, err, sizeof(err)), 0);
	assert_int_equal(c.system_wide, 19);
	assert_int_equal(
	    config_parse("[daemon]\nsystem_wide = 5000\n", "k.conf", &c, err, sizeof(err)),
	    -EINVAL);
	assert_string_equal(err, "k.conf:2: daemon.system_wide: '5000' is not a number in 0-4999");
	assert_int_equal(c.system_wide, 19);
}

/* [http]: off by default; a listen address is checked when it is set. */
static void test_http(void **state)
{
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.http_listen, "");
	assert_int_equal(c.http_max_seconds, 300);
	assert_int_equal(config_parse("[http]\nlisten = 127.0.0.1:6060\ntoken_file = /etc/t\n"
				      "max_connections = 8\nmax_seconds = 60\n",
				      "k.conf", &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.http_listen, "127.0.0.1:6060");
	assert_string_equal(c.http_token_file, "/etc/t");
	assert_int_equal(c.http_max_connections, 8);
	assert_int_equal(c.http_max_seconds, 60);
	assert_int_equal(
	    config_parse("[http]\nlisten = localhost:6060\n", "k.conf", &c, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "k.conf:2: http.listen: 'localhost:6060'"));
	assert_string_equal(c.http_listen, "127.0.0.1:6060");
	assert_int_equal(config_set(&c, "http", "listen", "", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "http", "max_seconds", "0", err, sizeof(err)), -EINVAL);
	/* The opt-out from the token is off unless said; the caps on waiting requests. */
	assert_false(c.http_insecure_no_auth);
	assert_int_equal(c.http_max_waiting, 16);
	assert_int_equal(c.http_max_waiting_per_source, 4);
	assert_int_equal(c.http_max_per_source, 16);
	assert_int_equal(config_set(&c, "http", "insecure_no_auth", "yes", err, sizeof(err)), 0);
	assert_true(c.http_insecure_no_auth);
	assert_int_equal(config_set(&c, "http", "max_waiting", "0", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "http", "max_waiting_per_source", "2", err, sizeof(err)),
			 0);
	assert_int_equal(c.http_max_waiting_per_source, 2);
}

/* [drift]: on with the detector's defaults; window and min_samples are checked together. */
static void test_drift(void **state)
{
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_true(c.drift_enabled);
	assert_int_equal(c.drift_window, 256);
	assert_int_equal(c.drift_min_samples, 128);
	assert_float_equal(c.drift_threshold, 0.5, 0);
	assert_int_equal(config_parse("[drift]\nenabled = off\nwindow = 512\nmin_samples = 64\n"
				      "threshold = 0.4\n",
				      "k.conf", &c, err, sizeof(err)),
			 0);
	assert_false(c.drift_enabled);
	assert_int_equal(c.drift_window, 512);
	assert_int_equal(c.drift_min_samples, 64);
	assert_float_equal(c.drift_threshold, 0.4, 0);
	assert_int_equal(config_parse("[drift]\nwindow = 32\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "k.conf: [drift] min_samples (64) must not exceed window (32), "
				 "and threshold (0.4) must be below 1");
	assert_int_equal(c.drift_window, 512); /* nothing changed */
	assert_int_equal(config_parse("[drift]\nthreshold = 1\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(config_parse("[drift]\nwindow = 8\n", "k.conf", &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "k.conf:2: drift.window: '8' is not a number in 16-4096");
}

static void test_full_file(void **state)
{
	const char *text = "; kprofd.conf\n"
			   "[daemon]\n"
			   "socket = /run/k/k.sock\n"
			   "frequency = 999\n"
			   "ringbuf_size = 4194304\n"
			   "ringbuf_max_mb = 64\n"
			   "sampling = cpus\n"
			   "drain_ms = 20\n"
			   "batch_min_targets = 0\n"
			   "\n"
			   "[limits]\n"
			   "max_targets = 10\n"
			   "max_kept = 0\n"
			   "max_clients = 5\n"
			   "client_timeout = 7\n"
			   "max_threads = 100\n"
			   "max_thread_fds = 1000\n"
			   "[access]\n"
			   "read_group = kprof\n";
	struct config c;
	char err[256] = "";

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_parse(text, "k.conf", &c, err, sizeof(err)), 0);
	assert_string_equal(c.socket_path, "/run/k/k.sock");
	assert_int_equal(c.default_freq, 999);
	assert_int_equal(c.ringbuf_bytes, 4194304);
	assert_int_equal(c.ringbuf_max_mb, 64);
	assert_int_equal(c.sampling, CONFIG_SAMPLING_CPUS);
	assert_int_equal(c.max_threads, 100);
	assert_int_equal(c.max_thread_fds, 1000);
	assert_int_equal(c.drain_ms, 20);
	assert_int_equal(c.batch_min_targets, 0);
	assert_int_equal(c.max_targets, 10);
	assert_int_equal(c.max_kept, 0);
	assert_int_equal(c.max_clients, 5);
	assert_int_equal(c.client_timeout_sec, 7);
	assert_string_equal(c.read_group, "kprof");
}

/* Each bad text: the error names file, line and key, and the config is untouched. */
static void test_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"[daemon]\nfrequency = 99\nfrequncy = 5\n",
	     "k.conf:3: unknown key 'frequncy' in section [daemon]"},
	    {"[daemon]\nfrequency = 5000\n",
	     "k.conf:2: daemon.frequency: '5000' is not a number in 1-4999"},
	    {"[daemon]\nfrequency = 0\n",
	     "k.conf:2: daemon.frequency: '0' is not a number in 1-4999"},
	    {"[daemon]\nfrequency = 12abc\n",
	     "k.conf:2: daemon.frequency: '12abc' is not a number"},
	    {"[daemon]\nfrequency = -1\n", "k.conf:2: daemon.frequency: '-1' is not a number"},
	    {"[limits]\nmax_targets =\n", "k.conf:2: limits.max_targets: '' is not a number"},
	    /* The BPF map kp_targets holds 8192: no more targets, whatever asks for it. */
	    {"[limits]\nmax_targets = 8193\n",
	     "k.conf:2: limits.max_targets: '8193' is not a number in 1-8192"},
	    {"[limits]\nmax_auto_targets = 8193\n",
	     "k.conf:2: limits.max_auto_targets: '8193' is not a number in 0-8192"},
	    {"[nope]\nx = 1\n", "k.conf:2: unknown section [nope]"},
	    {"frequency = 9\n", "k.conf:1: unknown section []"},
	    {"[daemon]\nthis is not ini\n", "k.conf:2: syntax error"},
	    {"[access]\nread_group = "
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	     "k.conf:2: access.read_group: value longer than 63 bytes"},
	    {"[daemon]\nfrequency = 99999999999999999999999\n", "k.conf:2: daemon.frequency:"},
	    /* A ring buffer is locked kernel memory: at most 64 MiB, whatever asks for it. */
	    {"[daemon]\nringbuf_size = 67108865\n",
	     "k.conf:2: daemon.ringbuf_size: '67108865' is not a number in 0-67108864"},
	    {"[daemon]\nringbuf_max_mb = 65\n",
	     "k.conf:2: daemon.ringbuf_max_mb: '65' is not a number in 1-64"},
	    {"[daemon]\nsampling = both\n",
	     "k.conf:2: daemon.sampling: 'both' is not one of 'threads' or 'cpus'"},
	    {"[limits]\nmax_threads = 0\n",
	     "k.conf:2: limits.max_threads: '0' is not a number in 1-65536"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c, before;
		char err[256] = "";

		config_defaults(&c);
		c.default_freq = 123;
		before = c;
		assert_int_equal(config_parse(cases[i].text, "k.conf", &c, err, sizeof(err)),
				 -EINVAL);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
		assert_memory_equal(&c, &before, sizeof(c));
	}
}

static void test_set(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_set(&c, "daemon", "frequency", "4999", err, sizeof(err)), 0);
	assert_int_equal(c.default_freq, 4999);
	assert_int_equal(config_set(&c, "daemon", "frequency", "5000", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.default_freq, 4999);
	assert_int_equal(config_set(&c, "limits", "bogus", "1", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown key 'bogus' in section [limits]");
}

static void test_empty(void **state)
{
	struct config c, before;
	char err[256];

	(void)state;
	config_defaults(&c);
	before = c;
	assert_int_equal(config_parse("", "k.conf", &c, err, sizeof(err)), 0);
	assert_int_equal(config_parse("; only a comment\n\n", "k.conf", &c, err, sizeof(err)), 0);
	assert_memory_equal(&c, &before, sizeof(c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults), cmocka_unit_test(test_full_file),
	    cmocka_unit_test(test_errors),   cmocka_unit_test(test_set),
	    cmocka_unit_test(test_empty),    cmocka_unit_test(test_limits_and_hcct),
	    cmocka_unit_test(test_jvm),	     cmocka_unit_test(test_http),
	    cmocka_unit_test(test_drift),    cmocka_unit_test(test_system_wide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
