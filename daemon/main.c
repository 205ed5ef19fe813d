// SPDX-License-Identifier: GPL-2.0-only
/* main.c: kprofd's entry point: command line and config file into a struct config, then the
 * manager runs the loop. The flags are kept as (section, key, value) overrides, applied after
 * the file every time the settings are built, so a SIGHUP reload keeps them. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kprof/cleanup.h"
#include "http/http.h"
#include "manager/manager.h"
#include "service/requests.h"
#include "manager/watch.h"
#include "manager/windows.h"
#include "manager/syswide.h"
#include "os/transport.h"
#include "os/log.h"

#define CONFIG_MAX_BYTES (1u << 20)

struct override {
	const char *section, *key, *value;
};

struct settings {
	const char *config_path;
	int config_required; /* given with --config: it must exist */
	struct override ov[32];
	int nov;
	int verbose;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: kprofd [OPTIONS]\n"
	    "The kprof profiling daemon: samples attached processes with eBPF and serves their\n"
	    "profiles to kprofctl over a Unix socket. Runs as root. Flags override the config\n"
	    "file; SIGHUP re-reads it.\n\n"
	    "  -c, --config PATH       config file (default %s, if it exists)\n"
	    "  -s, --socket PATH       control socket (default %s) [daemon] socket\n"
	    "  -F, --freq HZ           default sampling frequency, 1-%d (default %d)\n"
	    "                          [daemon] frequency\n"
	    "      --max-targets N     processes attached at once (default 256, at most 8192)\n"
	    "                          [limits]\n"
	    "      --max-kept N        ended profiles kept in memory (default 64) [limits]\n"
	    "      --max-clients N     clients connected at once (default 64) [limits]\n"
	    "      --client-timeout S  close clients silent for S seconds (default 60) [limits]\n"
	    "      --ringbuf-size B    ring buffer bytes, rounded up to a power of two, at most\n"
	    "                          64 MiB (default: what every CPU at %d Hz sends in 500 ms,\n"
	    "                          1 MiB to ringbuf_max_mb, 8 MiB) [daemon] ringbuf_size\n"
	    "      --sampling HOW      threads: each thread of a target has its own sampling\n"
	    "                          event (default); cpus: per-CPU events [daemon]\n"
	    "      --max-threads N     thread events of one target (default 4096) [limits]\n"
	    "      --probe-slowdown PCT  a path trace stops once its target runs PCT%% of its\n"
	    "                          untraced CPU time per unit of work (default 110: 1.1x;\n"
	    "                          0: no default) [limits] probe_slowdown_pct\n"
	    "      --drain-ms MS       ring buffer drain period while probes are in (default\n"
	    "                          50; samples alone: 500 or MS if longer) [daemon]\n"
	    "      --read-group NAME   members may list and read every profile [access]\n"
	    "      --state-dir DIR     kept profiles are saved here (default %s;\n"
	    "                          \"\" keeps them in memory only) [daemon] state_dir\n"
	    "      --kept-max-age S    drop kept profiles older than S seconds (default 7 days,\n"
	    "                          0 never) [limits] kept_max_age\n"
	    "  -v, --verbose           debug logging\n"
	    "  -h, --help              this help\n"
	    "  -V, --version           print the version\n",
	    KPROF_DEFAULT_CONFIG, KPROF_DEFAULT_SOCKET, KPROF_MAX_FREQ, KPROF_DEFAULT_FREQ,
	    KPROF_MAX_FREQ, KPROF_DEFAULT_STATE_DIR);
}

static int read_text(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = malloc(CONFIG_MAX_BYTES + 1);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (!buf)
		return -ENOMEM;
	while ((n = read(fd, buf + len, CONFIG_MAX_BYTES - len)) > 0)
		len += n;
	if (n < 0)
		return -errno;
	if (len == CONFIG_MAX_BYTES)
		return -EFBIG;
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

/* config_load_fn: defaults, then the file, then the flags. */
static int load_settings(struct config *conf, char *err, size_t errlen, void *userdata)
{
	struct settings *st = userdata;
	_cleanup_free_ char *text = NULL;
	struct config c;
	int r;

	config_defaults(&c);
	r = read_text(st->config_path, &text);
	if (r == -ENOENT && !st->config_required) {
		/* no config file: defaults */
	} else if (r < 0) {
		snprintf(err, errlen, "%s: %s", st->config_path,
			 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		return r;
	} else if ((r = config_parse(text, st->config_path, &c, err, errlen)) < 0) {
		return r;
	}
	for (int i = 0; i < st->nov; i++) {
		char msg[200];

		r = config_set(&c, st->ov[i].section, st->ov[i].key, st->ov[i].value, msg,
			       sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "command line: %s", msg);
			return r;
		}
	}
	c.verbose = st->verbose;
	*conf = c;
	return 0;
}

static int add_override(struct settings *st, const char *section, const char *key,
			const char *value)
{
	if (st->nov >= (int)ARRAY_SIZE(st->ov)) {
		fprintf(stderr, "kprofd: too many options\n");
		return -E2BIG;
	}
	st->ov[st->nov++] = (struct override){section, key, value};
	return 0;
}

/* kprofd never has a controlling terminal: every file a target controls is opened
 * O_NOCTTY, and one inherited from a shell is given up here (its SIGHUP ignored meanwhile;
 * a session leader's TIOCNOTTY sends one). A terminal's keys cannot signal kprofd then. */
static void drop_tty(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return;
	signal(SIGHUP, SIG_IGN);
	if (ioctl(fd, TIOCNOTTY) < 0)
		log_debug("cannot give up the controlling terminal: %m");
	close(fd);
	signal(SIGHUP, SIG_DFL);
}

/* Exact mode holds four fds per probed function, each client one, each per-thread sampling
 * event one: the soft limit (systemd's default is 1024) is raised to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("cannot raise the open files limit: %m");
	}
}

static const struct option opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"socket", required_argument, NULL, 's'},
    {"freq", required_argument, NULL, 'F'},
    {"max-targets", required_argument, NULL, 1},
    {"max-kept", required_argument, NULL, 2},
    {"max-clients", required_argument, NULL, 3},
    {"ringbuf-size", required_argument, NULL, 4},
    {"drain-ms", required_argument, NULL, 5},
    {"client-timeout", required_argument, NULL, 6},
    {"read-group", required_argument, NULL, 7},
    {"state-dir", required_argument, NULL, 8},
    {"kept-max-age", required_argument, NULL, 9},
    {"sampling", required_argument, NULL, 10},
    {"max-threads", required_argument, NULL, 11},
    {"probe-slowdown", required_argument, NULL, 12},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {},
};

/* The long options that only set a config key: option code to (section, key). */
static const struct {
	int opt;
	const char *section, *key;
} opt_map[] = {
    {'s', "daemon", "socket"},	   {'F', "daemon", "frequency"},
    {1, "limits", "max_targets"},  {2, "limits", "max_kept"},
    {3, "limits", "max_clients"},  {4, "daemon", "ringbuf_size"},
    {5, "daemon", "drain_ms"},	   {6, "limits", "client_timeout"},
    {7, "access", "read_group"},   {8, "daemon", "state_dir"},
    {9, "limits", "kept_max_age"}, {10, "daemon", "sampling"},
    {11, "limits", "max_threads"}, {12, "limits", "probe_slowdown_pct"},
};

/* The daemon's parts, started in this order and freed in the reverse one. */
struct daemon {
	struct manager *m;
	struct syswide *sw;
	struct watch *ws;
	struct windows *wn;
	struct requests *rq;
	struct httpd *hd;
};

/* Option c into st if it only sets a config key: 1 if it did, 0 if not, -1 on error. */
static int map_option(struct settings *st, int c)
{
	bool mapped = false;

	for (size_t i = 0; i < ARRAY_SIZE(opt_map); i++) {
		if (opt_map[i].opt == c) {
			if (add_override(st, opt_map[i].section, opt_map[i].key, optarg) < 0)
				return -1;
			mapped = true;
		}
	}
	return mapped;
}

/* The command line into st: -1 to go on, otherwise the exit status to return at once. */
static int parse_args(int argc, char **argv, struct settings *st)
{
	int c, r;

	while ((c = getopt_long(argc, argv, "c:s:F:vhV", opts, NULL)) != -1) {
		r = map_option(st, c);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (c) {
		case 'c':
			st->config_path = optarg;
			st->config_required = 1;
			break;
		case 'v':
			st->verbose = 1;
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
	}
	if (optind < argc) {
		fprintf(stderr, "kprofd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* Logging, terminal, fd limit and the root check, once the settings are known good. */
static void setup_process(const struct settings *st)
{
	log_init();
	if (st->verbose)
		log_max_level = LOG_DEBUG;
	drop_tty();
	raise_nofile();
	if (geteuid() != 0)
		log_warn("not running as root: loading BPF programs will most likely fail");
}

static void daemon_stop(struct daemon *d)
{
	httpd_free(d->hd);
	requests_free(d->rq);
	if (d->m) /* what the requests found through the manager goes first */
		d->m->windows = NULL, d->m->sw = NULL;
	windows_free(d->wn);
	watch_free(d->ws);
	syswide_free(d->sw);
	manager_free(d->m);
}

/* Creates the parts in order; on failure logs which one and returns the error, the parts
 * created so far left in d for daemon_stop. */
static int daemon_start(struct daemon *d, struct settings *st)
{
	int r;

	r = manager_new(load_settings, st, &d->m);
	if (r < 0) {
		log_err("cannot start: %s", strerror(-r));
		return r;
	}
	r = syswide_new(d->m, &d->sw);
	if (r < 0) {
		log_err("cannot start: system-wide mode: %s", strerror(-r));
		return r;
	}
	d->m->sw = d->sw;
	r = watch_new(d->m, &d->ws);
	if (r < 0) {
		log_err("cannot start: watch rules: %s", strerror(-r));
		return r;
	}
	r = windows_new(d->m, &d->wn);
	if (r < 0) {
		log_err("cannot start: time windows: %s", strerror(-r));
		return r;
	}
	d->m->windows = d->wn;
	r = requests_new(d->m, d->ws, &d->rq);
	if (r < 0) {
		log_err("cannot start: control socket: %s", strerror(-r));
		return r;
	}
	r = httpd_new(d->m, &d->hd);
	if (r < 0) {
		log_err("cannot start: http endpoint: %s", strerror(-r));
		return r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct settings st = {.config_path = KPROF_DEFAULT_CONFIG};
	struct daemon d = {};
	struct config probe;
	char err[512];
	int r;

	r = parse_args(argc, argv, &st);
	if (r >= 0)
		return r;
	/* Bad flags and config errors are reported before anything is loaded. */
	if (load_settings(&probe, err, sizeof(err), &st) < 0) {
		fprintf(stderr, "kprofd: %s\n", err);
		return 2;
	}
	setup_process(&st);
	/* Before anything is loaded or read: a second kprofd on the socket leaves no trace. */
	if (transport_check_free(probe.socket_path) < 0) {
		log_err("%s: another kprofd is already listening there", probe.socket_path);
		return 1;
	}
	if (daemon_start(&d, &st) < 0) {
		daemon_stop(&d);
		return 1;
	}
	r = manager_run(d.m);
	daemon_stop(&d);
	if (r < 0) {
		log_err("event loop failed: %s", strerror(-r));
		return 1;
	}
	log_info("stopped");
	return 0;
}
