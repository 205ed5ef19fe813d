// SPDX-License-Identifier: GPL-2.0-only
/* rule.c: watch rules as text, and the rules file of the state directory (see rule.h).
 *
 * A rule is parsed token by token from a bounded buffer: the first token KIND:VALUE, then
 * key=value options, each checked against its range; anything else is an error that names the
 * token. Values are bounded (RULE_VALUE_MAX) and restricted to printable bytes without white
 * space or quotes, so a rule's text is also a safe line of the config file, of the rules file and
 * of a log message. The rules file carries its rule count and a CRC-32 of its body in its first
 * line: a write cut short by a crash, or any byte changed, is refused as a whole rather than
 * half-read (the store renames such a file .bad).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/rule.h"

#define FILE_MAGIC "kprof-rules 1 "

static const char *const kind_names[] = {
    [RULE_COMM] = "comm",     [RULE_EXE] = "exe",   [RULE_UID] = "uid",
    [RULE_CGROUP] = "cgroup", [RULE_UNIT] = "unit",
};

const char *rule_kind_name(enum rule_kind k)
{
	return k >= RULE_COMM && k <= RULE_UNIT ? kind_names[k] : "?";
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Printable ASCII without white space, quotes, backslashes or '#'/';' (comments in the INI). */
static bool value_byte_ok(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\' && c != '#' && c != ';';
}

static bool no_dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '/' || !s[2]))
			return false;
	return true;
}

bool rule_unit_ok(const char *u)
{
	static const char *const kinds[] = {".service", ".scope", ".slice"};
	size_t n = strlen(u);

	if (u[0] == '.' || strchr(u, '/'))
		return false;
	for (const char *s = u; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(":_.@-", *s)))
			return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t k = strlen(kinds[i]);

		if (n > k && !strcmp(u + n - k, kinds[i]))
			return true;
	}
	return false;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 10)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "on") || !strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1"))
		*out = true;
	else if (!strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* r's value v (vlen bytes, copied to r->value) checked for r's kind. */
static int match_check(struct rule *r, const char *v, size_t vlen, char *err, size_t errlen)
{
	switch (r->kind) {
	case RULE_COMM:
		if (vlen > RULE_COMM_MAX) {
			snprintf(err, errlen,
				 "comm: '%.40s' is longer than %d bytes (the kernel keeps %d: use "
				 "exe:PATH for the full name)",
				 v, RULE_COMM_MAX, RULE_COMM_MAX);
			return -EINVAL;
		}
		return 0;
	case RULE_EXE: {
		const char *base = strrchr(v, '/');

		if (v[0] != '/' || !no_dotdot(v) || !base || !base[1]) {
			snprintf(err, errlen,
				 "exe: '%.60s' is not an absolute path of a file (no '..', no "
				 "trailing '/')",
				 v);
			return -EINVAL;
		}
		return 0;
	}
	case RULE_UID: {
		unsigned long u;

		if (parse_uint(v, 4294967294ul, &u) < 0) {
			snprintf(err, errlen, "uid: '%.40s' is not a number in 0-4294967294", v);
			return -EINVAL;
		}
		r->uid = (uint32_t)u;
		/* Canonical: no leading zeros. */
		snprintf(r->value, sizeof(r->value), "%lu", u);
		return 0;
	}
	case RULE_CGROUP:
		if (!no_dotdot(v)) {
			snprintf(err, errlen, "cgroup: '%.60s' holds a '..' component", v);
			return -EINVAL;
		}
		return 0;
	case RULE_UNIT:
		if (!rule_unit_ok(v)) {
			snprintf(
			    err, errlen,
			    "unit: '%.60s' is not a unit name (NAME.service, .scope or .slice; "
			    "letters, digits and :_.@-)",
			    v);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

/* KIND:VALUE into r. */
static int parse_match(const char *tok, struct rule *r, char *err, size_t errlen)
{
	const char *colon = strchr(tok, ':');
	const char *v;
	size_t klen, vlen;

	if (!colon) {
		snprintf(err, errlen, "'%.40s': expected KIND:VALUE (comm, exe, uid, cgroup, unit)",
			 tok);
		return -EINVAL;
	}
	klen = colon - tok;
	v = colon + 1;
	vlen = strlen(v);
	r->kind = 0;
	for (int k = RULE_COMM; k <= RULE_UNIT; k++)
		if (strlen(kind_names[k]) == klen && !strncmp(tok, kind_names[k], klen))
			r->kind = k;
	if (!r->kind) {
		snprintf(err, errlen, "'%.*s': not a kind of rule (comm, exe, uid, cgroup, unit)",
			 (int)(klen > 40 ? 40 : klen), tok);
		return -EINVAL;
	}
	if (!vlen || vlen >= RULE_VALUE_MAX) {
		snprintf(err, errlen, "%s: the value must be 1 to %d bytes", kind_names[r->kind],
			 RULE_VALUE_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < vlen; i++)
		if (!value_byte_ok((unsigned char)v[i])) {
			snprintf(
			    err, errlen,
			    "%s: the value holds a byte 0x%02x (white space, quotes, '#', ';', "
			    "'\\' and control bytes are not allowed)",
			    kind_names[r->kind], (unsigned char)v[i]);
			return -EINVAL;
		}
	memcpy(r->value, v, vlen + 1);
	return match_check(r, v, vlen, err, errlen);
}

/* The on|off options: the field of struct rule each sets (inverted: off sets it). */
static const struct {
	const char *name;
	size_t field;
	bool inverted;
} switches[] = {
    {"jvm", offsetof(struct rule, no_jvm_map), true},
    {"children", offsetof(struct rule, children), false},
    {"offcpu", offsetof(struct rule, off_cpu), false},
};

static int parse_option(const char *tok, struct rule *r, char *err, size_t errlen)
{
	const char *eq = strchr(tok, '=');
	unsigned long f;
	bool b;

	if (eq && !strncmp(tok, "freq=", 5)) {
		if (parse_uint(eq + 1, RULE_MAX_FREQ, &f) < 0 || f == 0) {
			snprintf(err, errlen, "freq: '%.20s' is not a frequency in 1-%d Hz", eq + 1,
				 RULE_MAX_FREQ);
			return -EINVAL;
		}
		r->freq = f;
		return 0;
	}
	for (size_t i = 0; eq && i < sizeof(switches) / sizeof(switches[0]); i++) {
		size_t n = strlen(switches[i].name);

		if ((size_t)(eq - tok) != n || strncmp(tok, switches[i].name, n))
			continue;
		if (parse_bool(eq + 1, &b) < 0) {
			snprintf(err, errlen, "%s: '%.20s' is not on or off", switches[i].name, eq + 1);
			return -EINVAL;
		}
		*(bool *)((char *)r + switches[i].field) = b != switches[i].inverted;
		return 0;
	}
	snprintf(err, errlen,
		 "'%.40s': unknown option (freq=N, jvm=on|off, children=on|off, offcpu=on|off)",
		 tok);
	return -EINVAL;
}

int rule_parse(const char *text, size_t len, struct rule *r, char *err, size_t errlen)
{
	struct rule out = {0};
	char tok[RULE_VALUE_MAX + 16];
	size_t i = 0;
	int n = 0, e;

	if (len >= RULE_TEXT_MAX) {
		snprintf(err, errlen, "a rule is at most %d bytes", RULE_TEXT_MAX - 1);
		return -EINVAL;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "a rule holds a NUL byte");
		return -EINVAL;
	}
	for (;;) {
		size_t start, tlen;

		while (i < len && is_space(text[i]))
			i++;
		if (i >= len)
			break;
		start = i;
		while (i < len && !is_space(text[i]))
			i++;
		tlen = i - start;
		if (tlen >= sizeof(tok)) {
			snprintf(err, errlen, "a word of the rule is longer than %zu bytes",
				 sizeof(tok) - 1);
			return -EINVAL;
		}
		memcpy(tok, text + start, tlen);
		tok[tlen] = '\0';
		e = n++ ? parse_option(tok, &out, err, errlen)
			: parse_match(tok, &out, err, errlen);
		if (e < 0)
			return e;
	}
	if (!n) {
		snprintf(err, errlen, "an empty rule (expected KIND:VALUE [freq=N] [jvm=on|off])");
		return -EINVAL;
	}
	if (out.kind == RULE_CGROUP || out.kind == RULE_UNIT)
		out.children = true;
	*r = out;
	return 0;
}

int rule_format(const struct rule *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s:%s", rule_kind_name(r->kind), r->value);

	if (n >= 0 && r->freq)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, " freq=%u", r->freq);
	if (n >= 0 && r->no_jvm_map)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, " jvm=off");
	if (n >= 0 && r->children && r->kind != RULE_CGROUP && r->kind != RULE_UNIT)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, " children=on");
	if (n >= 0 && r->off_cpu)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, " offcpu=on");
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

bool rule_comm(const struct rule *r, char comm[16])
{
	const char *base = r->value;

	if (r->kind == RULE_EXE)
		base = strrchr(r->value, '/') + 1;
	else if (r->kind != RULE_COMM)
		return false;
	size_t n = strnlen(base, RULE_COMM_MAX);

	memset(comm, 0, 16);
	memcpy(comm, base, n);
	return true;
}

uint32_t rule_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

int rule_file_format(const struct rule_entry *e, size_t n, char *buf, size_t len)
{
	char head[64], text[RULE_TEXT_MAX];
	size_t hlen, off;
	int w;

	/* The body first, after room for the header (fixed width: 8 hex digits, count <= 64). */
	w = snprintf(head, sizeof(head), FILE_MAGIC "%zu %08x\n", n, 0u);
	hlen = (size_t)w;
	if (n > RULE_FILE_MAX || hlen >= len)
		return -ENOSPC;
	off = hlen;
	for (size_t i = 0; i < n; i++) {
		if (rule_format(&e[i].rule, text, sizeof(text)) < 0)
			return -ENOSPC;
		w = snprintf(buf + off, len - off, "%u %s\n", e[i].owner, text);
		if (w < 0 || (size_t)w >= len - off)
			return -ENOSPC;
		off += w;
	}
	snprintf(head, sizeof(head), FILE_MAGIC "%zu %08x\n", n,
		 rule_crc32(0, buf + hlen, off - hlen));
	memcpy(buf, head, hlen);
	return (int)off;
}

/* The header line "FILE_MAGIC N CRC" of a rules file, and the CRC of what follows it: *count
 * is N, *body the byte after the line. */
static int file_header(const char *buf, size_t len, const char **body, unsigned long *count,
		       char *err, size_t errlen)
{
	const char *nl = memchr(buf, '\n', len < 64 ? len : 64), *end = buf + len;
	char head[64], *q;
	unsigned long crc;

	if (!nl || (size_t)(nl - buf) < strlen(FILE_MAGIC) ||
	    memcmp(buf, FILE_MAGIC, strlen(FILE_MAGIC))) {
		snprintf(err, errlen, "not a rules file (no \"" FILE_MAGIC "N CRC\" line)");
		return -EBADMSG;
	}
	memcpy(head, buf, nl - buf);
	head[nl - buf] = '\0';
	q = head + strlen(FILE_MAGIC);
	*count = strtoul(q, &q, 10);
	if (*q != ' ' || *count > RULE_FILE_MAX || strlen(q + 1) != 8) {
		snprintf(err, errlen, "bad header line");
		return -EBADMSG;
	}
	crc = strtoul(q + 1, &q, 16);
	if (*q) {
		snprintf(err, errlen, "bad header line");
		return -EBADMSG;
	}
	if (rule_crc32(0, nl + 1, end - (nl + 1)) != crc) {
		snprintf(err, errlen, "CRC mismatch: the file is torn or was changed");
		return -EBADMSG;
	}
	*body = nl + 1;
	return 0;
}

int rule_file_parse(const char *buf, size_t len, struct rule_entry *e, size_t max, char *err,
		    size_t errlen)
{
	const char *p, *end = buf + len;
	unsigned long count;
	size_t n = 0;
	int r;

	r = file_header(buf, len, &p, &count, err, errlen);
	if (r < 0)
		return r;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *sp;
		unsigned long owner;
		char num[16];

		if (!eol) {
			snprintf(err, errlen, "rule %zu: no newline at its end", n + 1);
			return -EBADMSG;
		}
		sp = memchr(p, ' ', eol - p);
		if (!sp || (size_t)(sp - p) >= sizeof(num)) {
			snprintf(err, errlen, "rule %zu: expected \"UID RULE\"", n + 1);
			return -EINVAL;
		}
		memcpy(num, p, sp - p);
		num[sp - p] = '\0';
		if (parse_uint(num, 4294967294ul, &owner) < 0) {
			snprintf(err, errlen, "rule %zu: bad owner uid", n + 1);
			return -EINVAL;
		}
		if (n >= max || n >= count) {
			snprintf(err, errlen, "more rules than the header's %lu", count);
			return -EBADMSG;
		}
		e[n].owner = owner;
		if (rule_parse(sp + 1, eol - (sp + 1), &e[n].rule, err, errlen) < 0)
			return -EINVAL;
		n++;
		p = eol + 1;
	}
	if (n != count) {
		snprintf(err, errlen, "%zu rules, the header says %lu", n, count);
		return -EBADMSG;
	}
	return (int)n;
}
