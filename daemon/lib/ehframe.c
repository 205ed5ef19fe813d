// SPDX-License-Identifier: GPL-2.0-only
/* ehframe.c: the call frame rule of one instruction, from an x86-64 .eh_frame section (see
 * kprof/ehframe.h).
 *
 * The section is a list of entries: CIEs (what a group of functions share: alignment factors,
 * the return address column, the pointer encoding of their FDEs, initial instructions) and
 * FDEs (one function's address range and its instructions). The FDE covering the address is
 * found by a scan (the few addresses asked are cached by the caller), then the CIE's initial
 * instructions and the FDE's run up to the address, as a DWARF unwinder does: each row gives
 * the CFA (a register plus an offset, or an expression) and where the registers were saved
 * (here only the return address and rbp). Only what x86-64 compilers emit into .eh_frame is
 * read: 32- and 64-bit entry lengths, the augmentations z, R, P, L, S, pointers absolute or
 * relative to their own place (pcrel), of the sizes DWARF has; anything else is -ENOTSUP.
 * Every read is bounded by its entry, every count by the section: a hostile file gets an
 * error, never a read past its bytes.
 */
#include <errno.h>
#include <string.h>

#include "kprof/ehframe.h"

#define REG_RBP 6
#define REG_RSP 7
#define MAX_REMEMBER 8 /* DW_CFA_remember_state nesting */

/* A reader over [p, end): a read past end sets bad and returns 0. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++) /* little-endian */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !r->bad; shift += 7) {
		uint8_t b = (uint8_t)rd_fixed(r, 1);

		if (shift >= 64) {
			r->bad = true;
			break;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;

	while (!r->bad && (b & 0x80)) {
		b = (uint8_t)rd_fixed(r, 1);
		if (shift >= 64) {
			r->bad = true;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* A pointer of encoding enc (DW_EH_PE_*); base: the address of the field itself (pcrel). */
static uint64_t rd_enc(struct rd *r, uint8_t enc, uint64_t base, int *err)
{
	uint64_t v;

	if (enc == 0xff) /* omitted */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = rd_fixed(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_fixed(r, 2); break;
	case 0x03: v = rd_fixed(r, 4); break;
	case 0x04: v = rd_fixed(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
	case 0x0c: v = rd_fixed(r, 8); break;
	default: *err = -ENOTSUP; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: return v;
	case 0x10: return v + base; /* pcrel */
	default: *err = -ENOTSUP; return 0; /* textrel, datarel, funcrel, aligned */
	}
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool z, signal;
	const uint8_t *insns, *end;
};

/* The entry at off: its body (after the length) up to *end, whether it uses 64-bit fields, and
 * where the next starts. 0, 1 at the section's end (or its zero terminator), -EBADMSG. */
static int entry_at(const uint8_t *sec, size_t len, size_t off, struct rd *body, bool *is64,
		    size_t *next)
{
	struct rd r = {sec + off, sec + len, false};
	uint64_t n;

	if (off >= len)
		return 1;
	n = rd_fixed(&r, 4);
	*is64 = n == 0xffffffff;
	if (*is64)
		n = rd_fixed(&r, 8);
	if (r.bad)
		return -EBADMSG;
	if (!n)
		return 1;
	if (n > (uint64_t)(r.end - r.p))
		return -EBADMSG;
	*body = (struct rd){r.p, r.p + n, false};
	*next = (size_t)(r.p + n - sec);
	return 0;
}

/* The CIE at off. */
static int cie_at(const uint8_t *sec, size_t len, uint64_t sec_vaddr, size_t off, struct cie *c)
{
	struct rd r, aug;
	bool is64;
	size_t next;
	uint8_t version;
	const char *s;
	int err = entry_at(sec, len, off, &r, &is64, &next);

	if (err)
		return -EBADMSG;
	if (rd_fixed(&r, is64 ? 8 : 4) != 0) /* not a CIE */
		return -EBADMSG;
	version = (uint8_t)rd_fixed(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return -ENOTSUP;
	s = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return -EBADMSG;
	r.p++; /* the NUL */
	if (s[0] && s[0] != 'z')
		return -ENOTSUP; /* "eh" and older forms */
	if (version == 4 && (rd_fixed(&r, 1) != 8 || rd_fixed(&r, 1) != 0))
		return -ENOTSUP; /* address size, segment size */
	memset(c, 0, sizeof(*c));
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
	c->fde_enc = 0; /* absolute, 8 bytes */
	c->z = s[0] == 'z';
	if (c->z) {
		uint64_t n = rd_uleb(&r);

		if (r.bad || n > (uint64_t)(r.end - r.p))
			return -EBADMSG;
		aug = (struct rd){r.p, r.p + n, false};
		r.p += n;
		for (s++; *s && !aug.bad && !err; s++) {
			if (*s == 'R')
				c->fde_enc = (uint8_t)rd_fixed(&aug, 1);
			else if (*s == 'P') {
				uint8_t enc = (uint8_t)rd_fixed(&aug, 1);

				rd_enc(&aug, enc & 0x7f, sec_vaddr + (aug.p - sec), &err);
			} else if (*s == 'L')
				rd_fixed(&aug, 1);
			else if (*s == 'S')
				c->signal = true;
			else if (*s != 'B')
				return -ENOTSUP;
		}
		if (err || aug.bad)
			return err ? err : -EBADMSG;
	}
	if (r.bad)
		return -EBADMSG;
	c->insns = r.p;
	c->end = r.end;
	return 0;
}

struct row {
	uint64_t reg;
	int64_t off;
	bool expr;
	bool ra_set, ra_other;
	int64_t ra_off;
	bool rbp_saved;
	int64_t rbp_off; /* where, from the CFA; 0: not a place (other) */
};

struct cfa_run {
	const struct cie *c;
	const uint8_t *sec;
	uint64_t sec_vaddr, loc, pc;
	struct row row, init;
	struct row stack[MAX_REMEMBER];
	unsigned depth;
};

/* A register's rule set by an instruction: a place relative to the CFA (off), or something
 * else (other: a register, an expression, a value). */
static void set_reg(struct cfa_run *x, uint64_t reg, int64_t off, bool other)
{
	if (reg == x->c->ra_reg) {
		x->row.ra_set = !other;
		x->row.ra_other = other;
		x->row.ra_off = off;
	} else if (reg == REG_RBP) {
		x->row.rbp_saved = true;
		x->row.rbp_off = other ? 0 : off;
	}
}

static void restore_reg(struct cfa_run *x, uint64_t reg)
{
	if (reg == x->c->ra_reg) {
		x->row.ra_set = x->init.ra_set;
		x->row.ra_other = x->init.ra_other;
		x->row.ra_off = x->init.ra_off;
	} else if (reg == REG_RBP) {
		x->row.rbp_saved = x->init.rbp_saved;
		x->row.rbp_off = x->init.rbp_off;
	}
}

/* Move to loc + delta: 1 if that is past pc (the row before holds there). */
static int advance(struct cfa_run *x, uint64_t delta)
{
	x->loc += delta * x->c->code_align;
	return x->loc > x->pc;
}

/* One instruction of r: 0, 1 when the address is passed, or a negative errno. */
static int step(struct cfa_run *x, struct rd *r)
{
	const int64_t da = x->c->data_align;
	uint8_t op = (uint8_t)rd_fixed(r, 1);
	uint64_t reg, n;
	int err = 0;

	switch (op >> 6) {
	case 1: return advance(x, op & 0x3f);
	case 2: set_reg(x, op & 0x3f, (int64_t)rd_uleb(r) * da, false); return 0;
	case 3: restore_reg(x, op & 0x3f); return 0;
	}
	switch (op) {
	case 0x00: break; /* nop */
	case 0x01: /* set_loc */
		x->loc = rd_enc(r, x->c->fde_enc, x->sec_vaddr + (r->p - x->sec), &err);
		return err ? err : x->loc > x->pc;
	case 0x02: return advance(x, rd_fixed(r, 1));
	case 0x03: return advance(x, rd_fixed(r, 2));
	case 0x04: return advance(x, rd_fixed(r, 4));
	case 0x05: reg = rd_uleb(r); set_reg(x, reg, (int64_t)rd_uleb(r) * da, false); break;
	case 0x06: restore_reg(x, rd_uleb(r)); break;
	case 0x07: set_reg(x, rd_uleb(r), 0, true); break; /* undefined */
	case 0x08: /* same_value */
		reg = rd_uleb(r);
		if (reg == REG_RBP)
			x->row.rbp_saved = false, x->row.rbp_off = 0;
		else
			set_reg(x, reg, 0, true);
		break;
	case 0x09: reg = rd_uleb(r); rd_uleb(r); set_reg(x, reg, 0, true); break; /* register */
	case 0x0a: /* remember_state */
		if (x->depth == MAX_REMEMBER)
			return -ENOTSUP;
		x->stack[x->depth++] = x->row;
		break;
	case 0x0b: /* restore_state: the whole row, the CFA too (as GCC's and libunwind's) */
		if (!x->depth)
			return -EBADMSG;
		x->row = x->stack[--x->depth];
		break;
	case 0x0c: x->row.reg = rd_uleb(r); x->row.off = (int64_t)rd_uleb(r); x->row.expr = false; break;
	case 0x0d: x->row.reg = rd_uleb(r); x->row.expr = false; break;
	case 0x0e: x->row.off = (int64_t)rd_uleb(r); break;
	case 0x0f: /* def_cfa_expression */
		n = rd_uleb(r);
		if (n > (uint64_t)(r->end - r->p))
			return -EBADMSG;
		r->p += n;
		x->row.expr = true;
		break;
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		reg = rd_uleb(r);
		n = rd_uleb(r);
		if (n > (uint64_t)(r->end - r->p))
			return -EBADMSG;
		r->p += n;
		set_reg(x, reg, 0, true);
		break;
	case 0x11: reg = rd_uleb(r); set_reg(x, reg, rd_sleb(r) * da, false); break;
	case 0x12: x->row.reg = rd_uleb(r); x->row.off = rd_sleb(r) * da; x->row.expr = false; break;
	case 0x13: x->row.off = rd_sleb(r) * da; break;
	case 0x14: reg = rd_uleb(r); rd_uleb(r); set_reg(x, reg, 0, true); break; /* val_offset */
	case 0x15: reg = rd_uleb(r); rd_sleb(r); set_reg(x, reg, 0, true); break;
	case 0x2e: rd_uleb(r); break; /* GNU_args_size */
	case 0x2f: reg = rd_uleb(r); set_reg(x, reg, -(int64_t)rd_uleb(r) * da, false); break;
	default: return -ENOTSUP;
	}
	return r->bad ? -EBADMSG : 0;
}

/* Run [p, end): 0 at its end, 1 when the address is passed, or a negative errno. */
static int run(struct cfa_run *x, const uint8_t *p, const uint8_t *end)
{
	struct rd r = {p, end, false};
	int err = 0;

	while (r.p < r.end && !err)
		err = step(x, &r);
	return err;
}

/* The rule at pc of the FDE whose instructions are [p, end), of CIE c, starting at loc. */
static int fde_rule(const struct cie *c, const uint8_t *sec, uint64_t sec_vaddr, uint64_t loc,
		    uint64_t pc, const uint8_t *p, const uint8_t *end, struct ehframe_rule *out)
{
	struct cfa_run x = {.c = c, .sec = sec, .sec_vaddr = sec_vaddr, .loc = loc, .pc = UINT64_MAX};
	int err = run(&x, c->insns, c->end);

	if (err < 0)
		return err;
	x.init = x.row;
	x.depth = 0;
	x.pc = pc;
	err = run(&x, p, end);
	if (err < 0)
		return err;
	memset(out, 0, sizeof(*out));
	out->cfa = x.row.expr || !x.row.ra_set ? EHFRAME_CFA_OTHER
		   : x.row.reg == REG_RSP	  ? EHFRAME_CFA_SP
		   : x.row.reg == REG_RBP	  ? EHFRAME_CFA_FP
						  : EHFRAME_CFA_OTHER;
	out->cfa_off = x.row.off;
	out->ra_off = x.row.ra_off;
	out->rbp_saved = x.row.rbp_saved;
	out->rbp_off = x.row.rbp_saved ? x.row.rbp_off : 0;
	out->signal = c->signal;
	return 0;
}

int ehframe_rule_at(const uint8_t *sec, size_t len, uint64_t sec_vaddr, uint64_t pc,
		    struct ehframe_rule *out)
{
	struct cie c;
	size_t off = 0, next, cie_off = SIZE_MAX;
	int err;

	if (len > EHFRAME_MAX_BYTES)
		return -E2BIG;
	for (;;) {
		struct rd r;
		bool is64;
		uint64_t id, begin, range;
		const uint8_t *idp;

		err = entry_at(sec, len, off, &r, &is64, &next);
		if (err)
			return err > 0 ? -ENOENT : err;
		idp = r.p;
		id = rd_fixed(&r, is64 ? 8 : 4);
		off = next;
		if (!id)
			continue; /* a CIE */
		if (id > (uint64_t)(idp - sec))
			return -EBADMSG;
		if ((size_t)(idp - sec - id) != cie_off) {
			cie_off = idp - sec - id;
			if ((err = cie_at(sec, len, sec_vaddr, cie_off, &c)) < 0) {
				cie_off = SIZE_MAX;
				continue; /* a CIE it cannot read: its FDEs are skipped */
			}
		}
		err = 0;
		begin = rd_enc(&r, c.fde_enc, sec_vaddr + (r.p - sec), &err);
		range = rd_enc(&r, c.fde_enc & 0x0f, 0, &err);
		if (err || r.bad)
			return err ? err : -EBADMSG;
		if (pc < begin || pc - begin >= range)
			continue;
		if (c.z) {
			uint64_t n = rd_uleb(&r);

			if (r.bad || n > (uint64_t)(r.end - r.p))
				return -EBADMSG;
			r.p += n;
		}
		return fde_rule(&c, sec, sec_vaddr, begin, pc, r.p, r.end, out);
	}
}
