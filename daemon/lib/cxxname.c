// SPDX-License-Identifier: GPL-2.0-only
/* cxxname.c: short forms of demangled C++ names (see include/kprof/cxxname.h).
 *
 * How. From the end: GCC's clone suffixes (" [clone .cold]", kept for the output) and the
 * function's qualifiers (" const", " &&", ...) are set aside; what is left must end with ')',
 * whose '(' (counting parentheses only: a parameter list holds no unbalanced ones, while '<' and
 * '>' can be operators) starts the parameter list. The text before it is then read from the
 * left, at bracket depth 0, as
 *     [return type ' '] component ('::' component)*
 * where a component is an identifier (or "~identifier") with template arguments and ABI tags
 * ("<...>", "[abi:cxx11]"), "(anonymous namespace)", a braced "{lambda(int)#1}", or an operator
 * ("operator()", "operator< <int>", "operator new[]", "operator unsigned long"); a component
 * may be followed by the parameter list and qualifiers of an enclosing function, dropped from
 * the output. A space at depth 0 outside an operator ends a return type: what was written so far
 * is forgotten. Anything else at depth 0 ('.', '/', a single ':', ',', a stray '>') means the
 * name is not C++ (Java's "java.util.HashMap.get(java.lang.Object)", V8's "RegExp:(a)") and it
 * is copied unchanged; so is any name with a control byte. Inside brackets anything goes, but
 * the brackets must nest (an explicit stack, at most MAX_DEPTH deep, else unchanged); '<' opens
 * only after a name, and a '>' that closes nothing is a comparison.
 *
 * Bounds. Every index stays below the name's length (found once with the control-byte scan);
 * the output is pieces of the input in order, so it is never longer; it is written up to cap - 1
 * bytes and counted beyond, like snprintf. Each byte is looked at a constant number of times.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kprof/cxxname.h"

#define MAX_DEPTH 256

struct out {
	char *buf;
	size_t cap;  /* bytes that may be written, the NUL excluded */
	size_t len;  /* bytes of the short form so far, written or not */
	size_t base; /* where the name starts: after "non-virtual thunk to " */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap)
		memcpy(o->buf + o->len, s, o->cap - o->len < n ? o->cap - o->len : n);
	o->len += n;
}

/* Identifier bytes: ASCII letters, digits, '_', '$' (GCC allows it) and any byte of a UTF-8
 * sequence. */
static bool is_ident(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c >= 0x80;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool has_at(const char *s, size_t i, size_t lim, const char *word)
{
	size_t n = strlen(word);

	return n <= lim - i && !memcmp(s + i, word, n);
}

/* "operator" as a whole word at s[i]. */
static bool is_operator(const char *s, size_t i, size_t lim)
{
	return (i == 0 || !is_ident(s[i - 1])) && has_at(s, i, lim, "operator") &&
	       (i + 8 == lim || !is_ident(s[i + 8]));
}

/* A function's cv- and ref-qualifiers as the demangler prints them, after its ')'. " &&"
 * before " &". */
static const char *const quals[] = {" const", " volatile", " restrict",		" &&",
				    " &",     " noexcept", " transaction_safe", " throw()"};

/* The end of the text before the qualifiers that end s[0..end). */
static size_t strip_quals(const char *s, size_t end)
{
	for (bool again = true; again;) {
		again = false;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++) {
			size_t n = strlen(quals[q]);

			if (n <= end && !memcmp(s + end - n, quals[q], n)) {
				end -= n;
				again = true;
			}
		}
	}
	return end;
}

/* Past the qualifiers that start at s[i] (each a whole word), below lim. */
static size_t skip_quals(const char *s, size_t i, size_t lim)
{
	for (bool again = true; again;) {
		again = false;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++) {
			size_t n = strlen(quals[q]);

			if (has_at(s, i, lim, quals[q]) && (i + n == lim || !is_ident(s[i + n]))) {
				i += n;
				again = true;
				break;
			}
		}
	}
	return i;
}

/* The end of s[0..n) without GCC's clone suffixes (" [clone .cold]", " [clone .isra.0]"). */
static size_t strip_clones(const char *s, size_t n)
{
	while (n && s[n - 1] == ']') {
		size_t i = n - 1;

		while (i &&
		       (s[i - 1] == '.' || (is_ident(s[i - 1]) && (unsigned char)s[i - 1] < 0x80)))
			i--;
		if (i < 8 || s[i] != '.' || memcmp(s + i - 8, " [clone ", 8))
			break;
		n = i - 8;
	}
	return n;
}

/* The operators' symbols, longest first: "operator==<char>" is "==" and its template
 * arguments. */
static const char *const op_tokens[] = {
    "->*", "<<=", ">>=", "<=>", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "++",  "--",  "+=",	 "-=",	"*=", "/=", "%=", "^=", "&=", "|=", "()", "[]", "+",
    "-",   "*",	  "/",	 "%",	"^",  "&",  "|",  "~",	"!",  "=",  "<",  ">",	",",
};

/* The length of the operator symbol at s[i], 0 if none. */
static size_t op_token(const char *s, size_t i, size_t lim)
{
	for (size_t t = 0; t < sizeof(op_tokens) / sizeof(op_tokens[0]); t++)
		if (has_at(s, i, lim, op_tokens[t]))
			return strlen(op_tokens[t]);
	return 0;
}

/* The end of the operator whose text starts at s[i], just after "operator", in a name that
 * ends at lim; 0 if it is none. A conversion operator's type runs to the first '(' outside
 * brackets (the parameter list). "operator< <int>": the index of the '<' of the arguments. */
static size_t operator_end(const char *s, size_t i, size_t lim)
{
	size_t d = 0, n = 0;

	if (i >= lim)
		return 0;
	if ((n = op_token(s, i, lim))) {
		i += n;
		return has_at(s, i, lim, " <") ? i + 1 : i;
	}
	if (has_at(s, i, lim, "\"\" ")) { /* a literal operator: operator"" _km */
		for (i += 3; i < lim && is_ident(s[i]); i++)
			n++;
		return n ? i : 0;
	}
	if (s[i] != ' ' || i + 1 >= lim || s[i + 1] == ' ')
		return 0;
	/* new, delete[], co_await, or a conversion to a type */
	for (i++; i < lim; i++) {
		char c = s[i];

		if (c == '(' && !d) {
			if (!has_at(s, i, lim, "(anonymous namespace)"))
				break;
			i += 20;
		} else if (c == '<' || c == '[' || c == '{' || c == '(') {
			d++;
		} else if (d && (c == '>' || c == ']' || c == '}' || c == ')')) {
			d--;
		} else if (!d && !is_ident(c) && c != ' ' && c != ':' && c != '*' && c != '&') {
			return 0;
		}
	}
	return d ? 0 : i;
}

/* The index after the ')' that closes the '(' at s[i], below lim; 0 if none. */
static size_t match_paren(const char *s, size_t i, size_t lim)
{
	size_t d = 0;

	for (; i < lim; i++) {
		if (s[i] == '(')
			d++;
		else if (s[i] == ')' && !--d)
			return i + 1;
	}
	return 0;
}

static char opener(char c)
{
	return c == ')' ? '(' : c == ']' ? '[' : '{';
}

/* Inside brackets (depth > 0): nesting only. Returns the next index, or 0 if the brackets do
 * not nest or nest too deep. */
static size_t scan_nested(const char *s, size_t i, size_t lim, char *stack, size_t *depth)
{
	char c = s[i];

	if (is_ident(c) && is_operator(s, i, lim)) {
		/* &A::operator< or operator() as a template argument: its symbols are no brackets
		 */
		size_t e = i + 8, n = op_token(s, e, lim);

		if (!n)
			return e; /* new, delete, a conversion: words */
		e += n + has_at(s, e + n, lim, " <");
		if (e < lim && s[e] == '<') { /* its template arguments */
			if (*depth == MAX_DEPTH)
				return 0;
			stack[(*depth)++] = '<';
			e++;
		}
		return e;
	}
	switch (c) {
	case '<':
		if (!is_ident(s[i - 1]) && s[i - 1] != '>' && s[i - 1] != ']')
			break; /* (1)<(2): a comparison */
			       /* fallthrough */
	case '(':
	case '[':
	case '{':
		if (*depth == MAX_DEPTH)
			return 0;
		stack[(*depth)++] = c;
		break;
	case '>':
		if (stack[*depth - 1] == '<')
			(*depth)--;
		break;
	case ')':
	case ']':
	case '}':
		while (*depth && stack[*depth - 1] == '<') /* '<' taken for a bracket was a '<' */
			(*depth)--;
		if (!*depth || stack[*depth - 1] != opener(c))
			return 0;
		(*depth)--;
		break;
	}
	return i + 1;
}

/* scan_name's state: the name s[0..p), the next byte i, where what is still to be written
 * starts (run), the bytes of the component being read (comp), the brackets open. */
struct scan {
	const char *s;
	size_t p, i, run, comp, depth;
	bool type_only; /* '*' or '&' since the last space: a return type */
	struct out *o;
	char stack[MAX_DEPTH];
};

/* An identifier's byte or an operator at depth 0. false: not C++. */
static bool scan_ident(struct scan *sc)
{
	const char *s = sc->s;
	size_t i = sc->i, p = sc->p;

	if (is_operator(s, i, p)) {
		size_t e = sc->comp ? 0 : operator_end(s, i + 8, p);

		if (!e)
			return false;
		sc->comp += e - i;
		sc->i = e;
		return true;
	}
	if (!sc->comp && is_digit(s[i]))
		return false;
	sc->comp++;
	sc->i++;
	return true;
}

/* '(' at depth 0: "(anonymous namespace)" as a component, or after a component the parameters
 * and qualifiers of an enclosing function, then "::", left out of the short form. false: not
 * C++. */
static bool scan_paren(struct scan *sc)
{
	const char *s = sc->s;
	size_t i = sc->i, p = sc->p, j;

	if (!sc->comp) {
		if (!has_at(s, i, p, "(anonymous namespace)"))
			return false;
		sc->comp = 21;
		sc->i += 21;
		return true;
	}
	/* An enclosing function's parameters and qualifiers, then "::". */
	j = match_paren(s, i, p);
	if (!j || sc->type_only)
		return false;
	j = skip_quals(s, j, p);
	if (!has_at(s, j, p, "::"))
		return false;
	put(sc->o, s + sc->run, i - sc->run);
	sc->run = sc->i = j;
	return true;
}

/* Any other byte at depth 0. false: not C++. */
static bool scan_punct(struct scan *sc)
{
	unsigned char c = sc->s[sc->i];

	switch (c) {
	case ':':
		if (!sc->comp || !has_at(sc->s, sc->i, sc->p, "::"))
			return false;
		sc->comp = 0;
		sc->i += 2;
		return true;
	case '~':
		if (sc->comp)
			return false;
		break;
	case ' ':
		/* The end of a return type: the name starts after it. */
		if (!sc->comp)
			return false;
		sc->o->len = sc->o->base;
		sc->run = sc->i + 1;
		sc->comp = 0;
		sc->type_only = false;
		sc->i++;
		return true;
	case '*':
	case '&':
		if (!sc->comp)
			return false;
		sc->type_only = true;
		break;
	case '(':
		return scan_paren(sc);
	case '<':
	case '[':
	case '{':
		/* Template arguments and ABI tags follow a name; a brace starts one. */
		if ((c == '{') != !sc->comp)
			return false;
		sc->stack[sc->depth++] = c;
		break;
	default:
		return false;
	}
	sc->comp++;
	sc->i++;
	return true;
}

/* Read the name s[0..p) that precedes the parameter list (see the top of the file) and write
 * its short form. false: not C++. */
static bool scan_name(const char *s, size_t p, struct out *o)
{
	struct scan sc = {.s = s, .p = p, .o = o};

	while (sc.i < p) {
		unsigned char c = s[sc.i];

		if (sc.depth) {
			sc.i = scan_nested(s, sc.i, p, sc.stack, &sc.depth);
			if (!sc.i)
				return false;
			continue;
		}
		if (!(is_ident(c) ? scan_ident(&sc) : scan_punct(&sc)))
			return false;
	}
	if (sc.depth || !sc.comp || sc.type_only)
		return false;
	put(o, s + sc.run, p - sc.run);
	return true;
}

/* The short form of s[0..n) into o; false if it is not a C++ function's name. */
static bool shorten(const char *s, size_t n, struct out *o)
{
	size_t sfx = strip_clones(s, n), end = strip_quals(s, sfx), p = end, d = 0;

	if (!end || s[end - 1] != ')')
		return false;
	/* The '(' of the parameter list. */
	do {
		p--;
		if (s[p] == ')')
			d++;
		else if (s[p] == '(')
			d--;
	} while (d && p);
	if (d || !p || !scan_name(s, p, o))
		return false;
	put(o, s + sfx, n - sfx);
	return true;
}

/* What the demangler puts before a thunk's function: kept, the function shortened. */
static const char *const thunks[] = {"non-virtual thunk to ", "virtual thunk to ",
				     "covariant return thunk to "};

size_t cxxname_short(const char *name, char *out, size_t cap)
{
	struct out o = {out, cap ? cap - 1 : 0, 0, 0};
	size_t n = 0, skip = 0;
	bool ctl = false;

	for (; name[n]; n++)
		ctl |= (unsigned char)name[n] < 0x20 || name[n] == 0x7f;
	for (size_t t = 0; t < sizeof(thunks) / sizeof(thunks[0]) && !skip; t++)
		if (has_at(name, 0, n, thunks[t]))
			skip = strlen(thunks[t]);
	put(&o, name, skip);
	o.base = skip;
	if (ctl || !shorten(name + skip, n - skip, &o)) {
		o.len = 0;
		put(&o, name, n);
	}
	if (cap)
		out[o.len < o.cap ? o.len : o.cap] = '\0';
	return o.len;
}

/* A Java identifier character of HotSpot's names: letters, digits, _ and $ (ASCII; a name with
 * other bytes is left alone). */
static bool java_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* "RET Q.NAME(PARAMS)": the offset and length of Q.NAME, or false. RET is one token of
 * identifier characters, dots and [] (a type); Q.NAME holds a dot and identifier characters
 * (<init> and <clinit> too); the name ends at the ')' closing its parameters. */
static bool java_method(const char *name, size_t n, size_t *at, size_t *len)
{
	size_t i = 0, q, dots = 0;

	while (i < n && (java_char(name[i]) || name[i] == '.' || name[i] == '[' || name[i] == ']'))
		i++;
	if (!i || i >= n || name[i] != ' ' || !java_char(name[0]))
		return false;
	q = ++i;
	while (i < n &&
	       (java_char(name[i]) || name[i] == '.' || name[i] == '<' || name[i] == '>')) {
		dots += name[i] == '.';
		i++;
	}
	if (i == q || !dots || i >= n || name[i] != '(' || name[n - 1] != ')' ||
	    memchr(name + i + 1, '(', n - i - 1))
		return false;
	*at = q;
	*len = i - q;
	return true;
}

size_t funcname_short(const char *name, char *out, size_t cap)
{
	size_t n = strlen(name), at, len;

	if (!java_method(name, n, &at, &len))
		return cxxname_short(name, out, cap);
	if (cap) {
		size_t k = len < cap - 1 ? len : cap - 1;

		memcpy(out, name + at, k);
		out[k] = '\0';
	}
	return len;
}
