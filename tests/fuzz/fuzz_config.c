// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_config.c: libFuzzer target for kprofd's config parser (daemon/lib/config.c over libinih).
 *
 * The input is the text of a config file, NUL-terminated as the glue hands it over (bytes past
 * an embedded NUL are not seen, as in the daemon). The parse must succeed with every value in
 * its range and every string terminated inside its field, or fail with a message and leave the
 * settings untouched (a failed reload keeps the old ones). Parsing the same text again over the
 * result must give the same settings. The input is also split at its first two NUL bytes into a
 * key ("section.name"), a value and the rest, for config_set, with a small error buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/config.h"
#include "kprof/rbsize.h"

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_config(const struct config *c)
{
	FUZZ_CHECK(TERMINATED(c->socket_path) && TERMINATED(c->read_group) &&
		       TERMINATED(c->state_dir),
		   "a string setting is not terminated");
	FUZZ_CHECK(c->default_freq >= 1 && c->default_freq <= KPROF_MAX_FREQ, "frequency %u",
		   c->default_freq);
	FUZZ_CHECK(c->drain_ms >= 1 && c->drain_ms <= 10000, "drain_ms %u", c->drain_ms);
	FUZZ_CHECK(c->ringbuf_bytes <= RBSIZE_LIMIT_MB << 20, "ringbuf_size %u", c->ringbuf_bytes);
	FUZZ_CHECK(c->ringbuf_max_mb >= 1 && c->ringbuf_max_mb <= RBSIZE_LIMIT_MB,
		   "ringbuf_max_mb %u", c->ringbuf_max_mb);
	FUZZ_CHECK(c->sampling == CONFIG_SAMPLING_THREADS || c->sampling == CONFIG_SAMPLING_CPUS,
		   "sampling %u", c->sampling);
	FUZZ_CHECK(c->max_threads >= 1 && c->max_threads <= 1u << 16, "max_threads %u",
		   c->max_threads);
	FUZZ_CHECK(c->max_targets >= 1 && c->max_targets <= 8192, "max_targets %u", c->max_targets);
	FUZZ_CHECK(c->max_kept <= 100000, "max_kept %u", c->max_kept);
	FUZZ_CHECK(c->kept_max_age_sec <= 10u * 365 * 86400, "kept_max_age %u",
		   c->kept_max_age_sec);
	FUZZ_CHECK(c->max_clients >= 1 && c->max_clients <= 10000, "max_clients %u",
		   c->max_clients);
	FUZZ_CHECK(c->client_timeout_sec >= 1 && c->client_timeout_sec <= 86400,
		   "client_timeout %u", c->client_timeout_sec);
}

static void check_parse(const char *text)
{
	struct config conf, before, again;
	char err[256] = "";
	int r;

	config_defaults(&conf);
	check_config(&conf);
	before = conf;
	r = config_parse(text, "fuzz.conf", &conf, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "config_parse: %d", r);
	if (r < 0) {
		FUZZ_CHECK(!memcmp(&conf, &before, sizeof(conf)),
			   "a failed parse changed the settings");
		FUZZ_CHECK(err[0] && memchr(err, '\0', sizeof(err)),
			   "a failed parse gave no message");
		return;
	}
	check_config(&conf);
	again = conf;
	r = config_parse(text, "fuzz.conf", &again, err, sizeof(err));
	FUZZ_CHECK(r == 0 && !memcmp(&conf, &again, sizeof(conf)), "a second parse differs: %d", r);
}

/* "section.name\0value\0...": one config_set with a short error buffer. text[len] is a NUL,
 * so the value is always terminated. */
static void check_set(const char *text, size_t len)
{
	const char *value = memchr(text, '\0', len), *dot;
	char key[128], err[24];
	struct config conf, before;
	size_t klen = value ? (size_t)(value - text) : len;
	int r;

	if (!value || klen >= sizeof(key))
		return;
	memcpy(key, text, klen);
	key[klen] = '\0';
	dot = strchr(key, '.');
	if (!dot)
		return;
	key[dot - key] = '\0';
	config_defaults(&conf);
	before = conf;
	r = config_set(&conf, key, dot + 1, value + 1, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL, "config_set: %d", r);
	if (r < 0)
		FUZZ_CHECK(!memcmp(&conf, &before, sizeof(conf)) && memchr(err, '\0', sizeof(err)),
			   "a failed config_set changed the settings");
	else
		check_config(&conf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	FUZZ_CHECK(text, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	check_parse(text);
	check_set(text, size);
	free(text);
	return 0;
}
