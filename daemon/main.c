/* main.c: kprofd's entry point: options into a struct config, then the manager runs the loop. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprofd.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: kprofd [OPTIONS]\n"
	    "The kprof profiling daemon: samples attached processes with eBPF and serves their\n"
	    "profiles to kprofctl over a Unix socket. Runs as root.\n\n"
	    "  -s, --socket PATH       control socket (default %s)\n"
	    "  -F, --freq HZ           default sampling frequency, 1-%d (default %d)\n"
	    "      --max-targets N     processes attached at once (default 256)\n"
	    "      --max-kept N        ended profiles kept in memory (default 64)\n"
	    "      --max-clients N     clients connected at once (default 64)\n"
	    "      --ringbuf-size B    ring buffer bytes, rounded up to a power of two\n"
	    "                          (default: one second of %d Hz on every CPU, >= 1 MiB)\n"
	    "      --drain-ms MS       ring buffer drain period (default 50)\n"
	    "      --client-timeout S  close clients silent for S seconds (default 60)\n"
	    "  -v, --verbose           debug logging\n"
	    "  -h, --help              this help\n"
	    "  -V, --version           print the version\n",
	    KPROF_DEFAULT_SOCKET, KPROF_MAX_FREQ, KPROF_DEFAULT_FREQ, KPROF_MAX_FREQ);
}

static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "kprofd: %s: '%s' is not a number in %u-%u\n", opt, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"freq", required_argument, NULL, 'F'},
	    {"max-targets", required_argument, NULL, 1},
	    {"max-kept", required_argument, NULL, 2},
	    {"max-clients", required_argument, NULL, 3},
	    {"ringbuf-size", required_argument, NULL, 4},
	    {"drain-ms", required_argument, NULL, 5},
	    {"client-timeout", required_argument, NULL, 6},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {},
	};
	struct config cfg = {
	    .socket_path = KPROF_DEFAULT_SOCKET,
	    .default_freq = KPROF_DEFAULT_FREQ,
	    .max_targets = 256,
	    .max_kept = 64,
	    .max_clients = 64,
	    .drain_ms = 50,
	    .perfmap_refresh_ms = 1000,
	    .client_timeout_sec = 60,
	};
	struct manager *m = NULL;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "s:F:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.socket_path = optarg;
			break;
		case 'F':
			err = parse_uint("--freq", optarg, 1, KPROF_MAX_FREQ, &cfg.default_freq);
			break;
		case 1:
			err = parse_uint("--max-targets", optarg, 1, KP_MAX_TARGETS,
					 &cfg.max_targets);
			break;
		case 2:
			err = parse_uint("--max-kept", optarg, 0, 100000, &cfg.max_kept);
			break;
		case 3:
			err = parse_uint("--max-clients", optarg, 1, 10000, &cfg.max_clients);
			break;
		case 4:
			err = parse_uint("--ringbuf-size", optarg, 4096, 1u << 30,
					 &cfg.ringbuf_bytes);
			break;
		case 5:
			err = parse_uint("--drain-ms", optarg, 1, 10000, &cfg.drain_ms);
			break;
		case 6:
			err = parse_uint("--client-timeout", optarg, 1, 86400,
					 &cfg.client_timeout_sec);
			break;
		case 'v':
			cfg.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kprofd %s\n", KPROF_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (err < 0)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "kprofd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	log_init();
	if (cfg.verbose)
		log_max_level = LOG_DEBUG;
	if (geteuid() != 0)
		log_warn("not running as root: loading BPF programs will most likely fail");
	err = manager_new(&cfg, &m);
	if (err < 0) {
		log_err("cannot start: %s", strerror(-err));
		return 1;
	}
	err = manager_run(m);
	manager_free(m);
	if (err < 0) {
		log_err("event loop failed: %s", strerror(-err));
		return 1;
	}
	log_info("stopped");
	return 0;
}
