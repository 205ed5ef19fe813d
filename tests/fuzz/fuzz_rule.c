// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_rule.c: libFuzzer target for watch rules and their file (daemon/lib/rule.c).
 *
 * The input is parsed as one rule and as a rules file. A rule that parses must have a value
 * terminated in its field and in range, and its canonical text must parse back to the same
 * canonical text. A rules file that parses must hold at most the rules asked for; written again
 * it must parse to the same rules.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kprof/rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rule r, r2;
	struct rule_entry e[RULE_FILE_MAX], e2[RULE_FILE_MAX];
	char err[64], t[RULE_TEXT_MAX], t2[RULE_TEXT_MAX];
	static char buf[RULE_FILE_MAX * (RULE_TEXT_MAX + 16) + 64];
	int n, len;

	if (rule_parse((const char *)data, size, &r, err, sizeof(err)) == 0) {
		FUZZ_CHECK(memchr(r.value, '\0', sizeof(r.value)) != NULL, "value not terminated");
		FUZZ_CHECK(r.kind >= RULE_COMM && r.kind <= RULE_UNIT, "kind %d", r.kind);
		FUZZ_CHECK(r.freq <= RULE_MAX_FREQ, "freq %u", r.freq);
		FUZZ_CHECK(r.kind != RULE_COMM || strlen(r.value) <= RULE_COMM_MAX,
			   "comm too long");
		len = rule_format(&r, t, sizeof(t));
		FUZZ_CHECK(len > 0, "format failed");
		FUZZ_CHECK(rule_parse(t, len, &r2, err, sizeof(err)) == 0,
			   "canonical text refused");
		rule_format(&r2, t2, sizeof(t2));
		FUZZ_CHECK(!strcmp(t, t2), "canonical text changed: '%s' -> '%s'", t, t2);
	}
	n = rule_file_parse((const char *)data, size, e, RULE_FILE_MAX, err, sizeof(err));
	if (n >= 0) {
		FUZZ_CHECK(n <= RULE_FILE_MAX, "%d rules", n);
		len = rule_file_format(e, n, buf, sizeof(buf));
		FUZZ_CHECK(len > 0, "rewrite failed");
		FUZZ_CHECK(rule_file_parse(buf, len, e2, RULE_FILE_MAX, err, sizeof(err)) == n,
			   "rewritten file refused");
		for (int i = 0; i < n; i++) {
			rule_format(&e[i].rule, t, sizeof(t));
			rule_format(&e2[i].rule, t2, sizeof(t2));
			FUZZ_CHECK(e[i].owner == e2[i].owner && !strcmp(t, t2), "rule %d changed",
				   i);
		}
	}
	return 0;
}
