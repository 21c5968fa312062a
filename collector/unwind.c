/*
 * DWARF CFI unwinder (see unwind.h for the contract).
 *
 * The object table is built by uw_refresh in unwind_tables.c (normal
 * context) and read by handlers through g_cur with a per-buffer user count.
 * This file holds only the async-signal-safe walk:
 *   2. bounded memory access for the walk (stack window, object segments,
 *      fault-free probes),
 *   3. .eh_frame parsing: pointer encodings, CIE/FDE, .eh_frame_hdr search,
 *   4. the CFA program interpreter and the DWARF expression evaluator,
 *   5. a lock-free cache of resolved rows keyed by lookup address,
 *   6. frame stepping, fallbacks (sigreturn trampoline, function entry,
 *      frame-pointer chain) and uw_backtrace.
 *
 * Everything reachable from uw_backtrace is marked "Async-signal-safe." and
 * uses only the stack, the published table and atomics: no malloc, no
 * locks, no stdio, no dl_* calls, no TLS other than errno (initial-exec).
 */
#define _GNU_SOURCE
#include "unwind.h"
#include "unwind_internal.h"

#include "sonde/format.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "sonde's unwinder supports x86_64 only"
#endif

_Atomic(struct uw_table *) g_cur;

/* ------------------------------------------------------------------ */
/* Walk state and bounded memory access                                */
/* ------------------------------------------------------------------ */

struct uw_walk {
	const struct uw_table *t;
	uintptr_t slo, slim;		/* trusted stack: 8-byte reads at
					 * slo <= a < slim (= stack_hi - 7) */
	uintptr_t wlo[UW_MAX_WINDOWS];		/* probe-validated windows */
	uintptr_t whi[UW_MAX_WINDOWS];
	int nwin;
	int probes_left;
	pid_t pid;				/* 0 until the first probe */
	int nsig;				/* signal frames crossed */
	struct uw_jitframe *jf;			/* the first JIT frame's registers,
						 * or NULL */
};

/* Async-signal-safe.  Binary search of sorted ranges; -1 when a is in none
 * (or [a, a+len) does not fit in the one holding a). */
static int range_find(const struct uw_range *r, int n, uintptr_t a, size_t len)
{
	int lo = 0, hi = n - 1, hit = -1;

	while (lo <= hi) {
		int mid = (lo + hi) >> 1;
		if (r[mid].lo <= a) {
			hit = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (hit < 0 || a >= r[hit].hi || r[hit].hi - a < len)
		return -1;
	return hit;
}

/* Async-signal-safe.  Validate the pages from addr's page upward with
 * process_vm_readv on ourselves: it copies one byte per page and stops at
 * the first unreadable one, returning EFAULT/short count instead of
 * faulting.  Adds (or extends) a window; returns false if addr's page is
 * unreadable or no probe is possible. */
static bool probe(struct uw_walk *w, uintptr_t addr)
{
	struct iovec remote[UW_PROBE_PAGES], local;
	char sink[UW_PROBE_PAGES];
	uintptr_t page = addr & ~(uintptr_t)(UW_PAGE - 1);
	int k;
	long n;

	if (w->probes_left <= 0 || page < UW_PAGE)
		return false;
	w->probes_left--;
	if (!w->pid)
		w->pid = (pid_t)syscall(SYS_getpid);
	for (k = 0; k < UW_PROBE_PAGES; k++) {
		uintptr_t p = page + (uintptr_t)k * UW_PAGE;
		if (p < page)
			break;	/* wrapped */
		remote[k].iov_base = (void *)p;
		remote[k].iov_len = 1;
	}
	local.iov_base = sink;
	local.iov_len = (size_t)k;
	n = syscall(SYS_process_vm_readv, w->pid, &local, 1UL, remote,
		    (unsigned long)k, 0UL);
	if (n <= 0) {
		/* Blocked (seccomp: EPERM/ENOSYS) or page unreadable. */
		if (n < 0 && errno != EFAULT)
			w->probes_left = 0;
		return false;
	}
	uintptr_t lo = page, hi = page + (uintptr_t)n * UW_PAGE;
	for (int i = 0; i < w->nwin; i++) {
		if (w->whi[i] == lo) {	/* grows upward: extend */
			w->whi[i] = hi;
			return true;
		}
	}
	if (w->nwin >= UW_MAX_WINDOWS)
		return false;
	w->wlo[w->nwin] = lo;
	w->whi[w->nwin] = hi;
	w->nwin++;
	return true;
}

/* Async-signal-safe.  Is [a, a+len) readable?  Stack window, object
 * segments, probed windows, then a new probe. */
static bool readable(struct uw_walk *w, uintptr_t a, size_t len)
{
	if (a + len < a)
		return false;
	if (w->slim && a >= w->slo && a + len <= w->slim + 7)
		return true;
	for (int i = 0; i < w->nwin; i++)
		if (a >= w->wlo[i] && a + len <= w->whi[i])
			return true;
	if (range_find(w->t->rd, w->t->nread, a, len) >= 0)
		return true;
	/* Try twice: the value may straddle the end of a window. */
	for (int tries = 0; tries < 2; tries++) {
		uintptr_t at = a;
		for (int i = 0; i < w->nwin; i++)
			if (at >= w->wlo[i] && at < w->whi[i])
				at = w->whi[i];
		if (!probe(w, at))
			return false;
		for (int i = 0; i < w->nwin; i++)
			if (a >= w->wlo[i] && a + len <= w->whi[i])
				return true;
	}
	return false;
}

/* Reads of foreign stack frames may touch AddressSanitizer redzones of an
 * instrumented target; they are bounded by our own checks instead. */
#if defined(__SANITIZE_ADDRESS__)
#define UW_NO_ASAN __attribute__((no_sanitize_address))
#else
#define UW_NO_ASAN
#endif

/* Async-signal-safe.  Bounded 8-byte read (any alignment); the common
 * case, a read inside the trusted stack, is inlined. */
UW_NO_ASAN static inline bool read_u64(struct uw_walk *w, uintptr_t a,
				       uint64_t *out)
{
	if (__builtin_expect(!(a >= w->slo && a < w->slim), 0) &&
	    !readable(w, a, 8))
		return false;
	memcpy(out, (const void *)a, 8);
	return true;
}

/* Async-signal-safe.  Bounded read of 1, 2, 4 or 8 bytes. */
UW_NO_ASAN static bool read_sized(struct uw_walk *w, uintptr_t a,
				  unsigned size, uint64_t *out)
{
	const void *p = (const void *)a;

	if (!(size == 1 || size == 2 || size == 4 || size == 8) ||
	    !readable(w, a, size))
		return false;
	switch (size) {	/* fixed sizes: plain loads, never a memcpy call */
	case 1: { uint8_t v; memcpy(&v, p, 1); *out = v; break; }
	case 2: { uint16_t v; memcpy(&v, p, 2); *out = v; break; }
	case 4: { uint32_t v; memcpy(&v, p, 4); *out = v; break; }
	default: memcpy(out, p, 8); break;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* 3. .eh_frame parsing                                                */
/* ------------------------------------------------------------------ */


/* Async-signal-safe. */
static inline bool c_need(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

/* Async-signal-safe. */
uint8_t c_u8(struct cur *c)
{
	return c_need(c, 1) ? *c->p++ : 0;
}

/* Async-signal-safe. */
static inline uint64_t c_uN(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (!c_need(c, n))
		return 0;
	memcpy(&v, c->p, n);	/* little-endian */
	c->p += n;
	return v;
}

/* Async-signal-safe. */
static uint64_t c_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b = c_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
		if (shift > 70) {	/* malformed: too long */
			c->bad = true;
			return 0;
		}
	}
}

/* Async-signal-safe. */
static int64_t c_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = c_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (shift > 70) {
			c->bad = true;
			return 0;
		}
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Async-signal-safe.  Read the raw value of a DW_EH_PE_* encoded field
 * (format bits only, no application); false for unknown formats. */
static bool c_raw(struct cur *c, uint8_t enc, uint64_t *out)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		*out = c_uN(c, 8);
		break;
	case DW_EH_PE_uleb128:
		*out = c_uleb(c);
		break;
	case DW_EH_PE_udata2:
		*out = c_uN(c, 2);
		break;
	case DW_EH_PE_udata4:
		*out = c_uN(c, 4);
		break;
	case DW_EH_PE_sleb128:
		*out = (uint64_t)c_sleb(c);
		break;
	case DW_EH_PE_sdata2:
		*out = (uint64_t)(int64_t)(int16_t)c_uN(c, 2);
		break;
	case DW_EH_PE_sdata4:
		*out = (uint64_t)(int64_t)(int32_t)c_uN(c, 4);
		break;
	default:
		return false;
	}
	return !c->bad;
}

/* Async-signal-safe.  Decode a DW_EH_PE_* encoded pointer.  datarel is the
 * base for DW_EH_PE_datarel (the .eh_frame_hdr address; 0: not allowed).
 * Indirect pointers are dereferenced through w (NULL: not allowed). */
bool c_encoded(struct cur *c, uint8_t enc, uintptr_t datarel, struct uw_walk *w,
	       uint64_t *out)
{
	uintptr_t field = (uintptr_t)c->p;
	uint64_t v;

	if (!c_raw(c, enc, &v))
		return false;
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	case DW_EH_PE_datarel:
		if (!datarel)
			return false;
		v += datarel;
		break;
	default:		/* textrel, funcrel, aligned: not used on x86_64 */
		return false;
	}
	if (enc & DW_EH_PE_indirect) {
		if (!w || !read_u64(w, (uintptr_t)v, &v))
			return false;
	}
	*out = v;
	return true;
}

struct cie {
	uint64_t caf;		/* code alignment factor */
	int64_t daf;		/* data alignment factor */
	uint32_t ra_col;
	uint8_t fde_enc;
	bool has_z;
	bool signal;		/* 'S': frames of this CIE are signal frames */
	const uint8_t *insns, *insns_end;
};

/* Async-signal-safe.  Read an .eh_frame record header at p: returns the
 * cursor over its body (after the length field) or bad. */
static struct cur record(const struct uw_object *o, uintptr_t p)
{
	struct cur c = { (const uint8_t *)p, (const uint8_t *)o->eh_hi, false };
	uint64_t len;

	if (p < o->eh_lo || p >= o->eh_hi) {
		c.bad = true;
		return c;
	}
	len = c_uN(&c, 4);
	if (len == 0xffffffffu)
		len = c_uN(&c, 8);
	if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p)) {
		c.bad = true;
		return c;
	}
	c.end = c.p + len;
	return c;
}

/* Async-signal-safe.  Parse the CIE at address p. */
static bool parse_cie(const struct uw_object *o, uintptr_t p, struct cie *cie)
{
	struct cur c = record(o, p);
	char aug[8];
	int na = 0;
	uint8_t version;

	if (c.bad || c_uN(&c, 4) != 0)	/* CIE id is 0 in .eh_frame */
		return false;
	version = c_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return false;
	for (;;) {
		uint8_t ch = c_u8(&c);
		if (c.bad)
			return false;
		if (!ch)
			break;
		if (na == (int)sizeof(aug) - 1)
			return false;
		aug[na++] = (char)ch;
	}
	aug[na] = 0;
	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = DW_EH_PE_absptr;
	int ai = 0;
	if (aug[0] == 'e' && aug[1] == 'h') {	/* old GCC: eh_ptr follows */
		c_uN(&c, 8);
		ai = 2;
	}
	if (version == 4) {
		if (c_u8(&c) != 8)	/* address size */
			return false;
		c_u8(&c);		/* segment selector size */
	}
	cie->caf = c_uleb(&c);
	cie->daf = c_sleb(&c);
	cie->ra_col = version == 1 ? c_u8(&c) : (uint32_t)c_uleb(&c);
	if (c.bad)
		return false;
	if (aug[ai] == 'z') {
		uint64_t alen = c_uleb(&c);
		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return false;
		const uint8_t *aend = c.p + alen;
		cie->has_z = true;
		for (ai++; aug[ai]; ai++) {
			uint64_t dummy;
			uint8_t e;
			switch (aug[ai]) {
			case 'R':
				cie->fde_enc = c_u8(&c);
				break;
			case 'L':
				c_u8(&c);	/* LSDA encoding: not needed */
				break;
			case 'P':	/* personality: skip, never deref */
				e = c_u8(&c);
				if (!c_raw(&c, e, &dummy))
					return false;
				break;
			case 'S':
				cie->signal = true;
				break;
			case 'B':	/* AArch64 BTI; harmless */
				break;
			default:
				/* Unknown letter: 'z' lets us skip the rest. */
				goto aug_done;
			}
			if (c.bad || c.p > aend)
				return false;
		}
aug_done:
		c.p = aend;
	} else {
		for (; aug[ai]; ai++)	/* without 'z' only 'S' is known */
			if (aug[ai] != 'S')
				return false;
			else
				cie->signal = true;
	}
	cie->insns = c.p;
	cie->insns_end = c.end;
	return !c.bad;
}

/* Async-signal-safe.  Binary search of the .eh_frame_hdr table for the FDE
 * whose initial location is the greatest one <= a; then parse it and its
 * CIE.  Returns 1 (FDE covers a), 0 (no FDE for a) or -1 (malformed). */
static int find_fde(const struct uw_object *o, uintptr_t a, struct cie *cie,
		    uint64_t *pc_begin, const uint8_t **ins,
		    const uint8_t **ins_end)
{
	const int32_t *tab = (const int32_t *)o->table;
	int64_t rel = (int64_t)(a - o->hdr);
	uint32_t lo = 0, hi = o->nfde;

	if (rel < INT32_MIN || rel > INT32_MAX || !o->nfde)
		return 0;
	if (tab[0] > rel)
		return 0;
	/* Invariant: tab[2*lo] <= rel, answer in [lo, hi). */
	while (hi - lo > 1) {
		uint32_t mid = lo + ((hi - lo) >> 1);
		if (tab[2 * mid] <= rel)
			lo = mid;
		else
			hi = mid;
	}
	uintptr_t fde = o->hdr + (uintptr_t)(int64_t)tab[2 * lo + 1];

	struct cur c = record(o, fde);
	if (c.bad)
		return -1;
	uintptr_t idfield = (uintptr_t)c.p;
	uint32_t cie_off = (uint32_t)c_uN(&c, 4);
	if (c.bad || cie_off == 0 || cie_off > idfield)
		return -1;
	if (!parse_cie(o, idfield - cie_off, cie))
		return -1;
	uint64_t begin, range;
	if (!c_encoded(&c, cie->fde_enc, 0, NULL, &begin) ||
	    !c_encoded(&c, cie->fde_enc & 0x0f, 0, NULL, &range))
		return -1;
	if (a < begin || a - begin >= range)
		return 0;	/* gap between FDEs */
	if (cie->has_z) {
		uint64_t alen = c_uleb(&c);
		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		c.p += alen;
	}
	*pc_begin = begin;
	*ins = c.p;
	*ins_end = c.end;
	return 1;
}

/* ------------------------------------------------------------------ */
/* 4. CFA program and DWARF expressions                                */
/* ------------------------------------------------------------------ */

enum {
	RULE_SAME = 0,		/* default: callee did not touch it */
	RULE_UNDEF,
	RULE_OFFSET,		/* saved at CFA + val */
	RULE_VAL_OFFSET,	/* value is CFA + val */
	RULE_REG,		/* in register val */
	RULE_EXPR,		/* saved at eval(expr at eh_lo + val) */
	RULE_VAL_EXPR,		/* value is eval(expr) */
};
enum { CFA_REG = 0, CFA_EXPR = 1 };

struct rule {
	uint8_t how;
	int32_t val;
};

struct row {
	struct rule reg[UW_NREG];
	uint8_t cfa_how;
	uint8_t cfa_reg;	/* 0xff: a register we do not track */
	int32_t cfa_val;	/* offset, or expression position from eh_lo */
};

/* Async-signal-safe.  Offsets/positions must fit the compact row. */
static inline bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Async-signal-safe.  Execute CFA instructions [p, end) starting at
 * location loc, stopping before the first row that starts beyond target.
 * init is the row after the CIE's initial instructions (NULL while running
 * those).  Returns false on malformed or unsupported input. */
static bool run_cfa(const struct uw_object *o, const struct cie *cie,
		    const uint8_t *p, const uint8_t *end, uint64_t loc,
		    uint64_t target, const struct row *init, struct row *row)
{
	struct row stack[UW_REMEMBER_DEPTH];
	int depth = 0, ops = 0;
	struct cur c = { p, end, false };

	while (c.p < c.end) {
		uint8_t op = c_u8(&c);
		uint64_t reg = 0, delta = 0;
		int64_t off = 0;
		bool set_rule = false;
		struct rule r = { RULE_SAME, 0 };

		if (++ops > UW_CFA_OPS)
			return false;
		switch (op >> 6) {
		case 1:		/* DW_CFA_advance_loc */
			delta = (uint64_t)(op & 0x3f) * cie->caf;
			goto advance;
		case 2:		/* DW_CFA_offset */
			reg = op & 0x3f;
			off = (int64_t)(c_uleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_OFFSET;
			set_rule = true;
			goto setreg;
		case 3:		/* DW_CFA_restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00:	/* DW_CFA_nop */
			continue;
		case 0x01: {	/* DW_CFA_set_loc */
			uint64_t nl;
			if (!c_encoded(&c, cie->fde_enc, 0, NULL, &nl))
				return false;
			if (nl > target)
				return true;
			loc = nl;
			continue;
		}
		case 0x02:	/* DW_CFA_advance_loc1 */
			delta = c_uN(&c, 1) * cie->caf;
			goto advance;
		case 0x03:	/* DW_CFA_advance_loc2 */
			delta = c_uN(&c, 2) * cie->caf;
			goto advance;
		case 0x04:	/* DW_CFA_advance_loc4 */
			delta = c_uN(&c, 4) * cie->caf;
			goto advance;
		case 0x05:	/* DW_CFA_offset_extended */
			reg = c_uleb(&c);
			off = (int64_t)(c_uleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_OFFSET;
			set_rule = true;
			goto setreg;
		case 0x06:	/* DW_CFA_restore_extended */
			reg = c_uleb(&c);
			goto restore;
		case 0x07:	/* DW_CFA_undefined */
			reg = c_uleb(&c);
			r.how = RULE_UNDEF;
			set_rule = true;
			goto setreg;
		case 0x08:	/* DW_CFA_same_value */
			reg = c_uleb(&c);
			r.how = RULE_SAME;
			set_rule = true;
			goto setreg;
		case 0x09:	/* DW_CFA_register */
			reg = c_uleb(&c);
			off = (int64_t)c_uleb(&c);
			r.how = RULE_REG;
			set_rule = true;
			goto setreg;
		case 0x0a:	/* DW_CFA_remember_state */
			if (depth == UW_REMEMBER_DEPTH)
				return false;
			stack[depth++] = *row;
			continue;
		case 0x0b:	/* DW_CFA_restore_state */
			if (depth == 0)
				return false;
			/* The CFA rule is part of the state too (DWARF 5
			 * says only registers, but GCC, libgcc and glibc's
			 * CFI all rely on the CFA being restored). */
			*row = stack[--depth];
			continue;
		case 0x0c:	/* DW_CFA_def_cfa */
			reg = c_uleb(&c);
			off = (int64_t)c_uleb(&c);
			goto defcfa;
		case 0x12:	/* DW_CFA_def_cfa_sf */
			reg = c_uleb(&c);
			off = (int64_t)((uint64_t)c_sleb(&c) * (uint64_t)cie->daf);
			goto defcfa;
		case 0x0d:	/* DW_CFA_def_cfa_register */
			reg = c_uleb(&c);
			row->cfa_how = CFA_REG;
			row->cfa_reg = reg < UW_NREG ? (uint8_t)reg : 0xff;
			continue;
		case 0x0e:	/* DW_CFA_def_cfa_offset */
			off = (int64_t)c_uleb(&c);
			goto defoff;
		case 0x13:	/* DW_CFA_def_cfa_offset_sf */
			off = (int64_t)((uint64_t)c_sleb(&c) * (uint64_t)cie->daf);
			goto defoff;
		case 0x0f: {	/* DW_CFA_def_cfa_expression */
			int64_t pos = (int64_t)((uintptr_t)c.p - o->eh_lo);
			uint64_t len = c_uleb(&c);
			if (c.bad || len > (uint64_t)(c.end - c.p) ||
			    !fits32(pos))
				return false;
			c.p += len;
			row->cfa_how = CFA_EXPR;
			row->cfa_val = (int32_t)pos;
			continue;
		}
		case 0x10:	/* DW_CFA_expression */
		case 0x16: {	/* DW_CFA_val_expression */
			reg = c_uleb(&c);
			off = (int64_t)((uintptr_t)c.p - o->eh_lo);
			uint64_t len = c_uleb(&c);
			if (c.bad || len > (uint64_t)(c.end - c.p))
				return false;
			c.p += len;
			r.how = op == 0x10 ? RULE_EXPR : RULE_VAL_EXPR;
			set_rule = true;
			goto setreg;
		}
		case 0x11:	/* DW_CFA_offset_extended_sf */
			reg = c_uleb(&c);
			off = (int64_t)((uint64_t)c_sleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_OFFSET;
			set_rule = true;
			goto setreg;
		case 0x14:	/* DW_CFA_val_offset */
			reg = c_uleb(&c);
			off = (int64_t)(c_uleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_VAL_OFFSET;
			set_rule = true;
			goto setreg;
		case 0x15:	/* DW_CFA_val_offset_sf */
			reg = c_uleb(&c);
			off = (int64_t)((uint64_t)c_sleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_VAL_OFFSET;
			set_rule = true;
			goto setreg;
		case 0x2e:	/* DW_CFA_GNU_args_size: no effect on CFA */
			c_uleb(&c);
			continue;
		case 0x2f:	/* DW_CFA_GNU_negative_offset_extended */
			reg = c_uleb(&c);
			off = (int64_t)(-c_uleb(&c) * (uint64_t)cie->daf);
			r.how = RULE_OFFSET;
			set_rule = true;
			goto setreg;
		default:	/* incl. GNU_window_save: not x86_64 */
			return false;
		}
advance:
		if (c.bad)
			return false;
		if (loc + delta > target || loc + delta < loc)
			return true;	/* target lies in the current row */
		loc += delta;
		continue;
setreg:
		if (c.bad || !set_rule || !fits32(off))
			return false;
		if (reg < UW_NREG) {
			r.val = (int32_t)off;
			row->reg[reg] = r;
		}
		continue;
restore:
		if (c.bad)
			return false;
		if (reg < UW_NREG)
			row->reg[reg] = init ? init->reg[reg]
					     : (struct rule){ RULE_SAME, 0 };
		continue;
defcfa:
		if (c.bad || !fits32(off))
			return false;
		row->cfa_how = CFA_REG;
		row->cfa_reg = reg < UW_NREG ? (uint8_t)reg : 0xff;
		row->cfa_val = (int32_t)off;
		continue;
defoff:
		if (c.bad || !fits32(off))
			return false;
		/* Only meaningful for a register rule; keep the register. */
		if (row->cfa_how != CFA_REG)
			return false;
		row->cfa_val = (int32_t)off;
		continue;
	}
	return !c.bad;
}

/* Register values of one frame.  r[16] is the pc, r[7] the sp. */
struct frame {
	uint64_t r[UW_NREG];
	uint32_t valid;		/* bit i: r[i] is known */
	bool exact;		/* pc is the interrupted instruction */
};

/* Async-signal-safe.  Evaluate the DWARF expression block at p (uleb length
 * then ops), with `push` (if any) pushed first, registers from f. */
static bool eval_expr(struct uw_walk *w, const struct uw_object *o,
		      const uint8_t *p, const struct frame *f, bool has_push,
		      uint64_t push, uint64_t *out)
{
	struct cur c = { p, (const uint8_t *)o->eh_hi, false };
	uint64_t st[UW_EXPR_STACK];
	int sp = 0, steps = 0;
	uint64_t len = c_uleb(&c);

	if (c.bad || len > (uint64_t)(c.end - c.p))
		return false;
	const uint8_t *start = c.p;
	c.end = c.p + len;
	if (has_push)
		st[sp++] = push;

#define NEED(n) do { if (sp < (n)) return false; } while (0)
#define PUSH(v) do {						\
		uint64_t v_ = (v);					\
		if (sp == UW_EXPR_STACK)				\
			return false;					\
		st[sp++] = v_;						\
	} while (0)
	while (c.p < c.end) {
		uint8_t op = c_u8(&c);
		uint64_t a, b;
		int64_t s;

		if (++steps > UW_EXPR_STEPS)
			return false;
		if (op >= 0x30 && op <= 0x4f) {		/* DW_OP_lit0..31 */
			PUSH((uint64_t)(op - 0x30));
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) {		/* DW_OP_breg0..31 */
			unsigned r = op - 0x70;
			s = c_sleb(&c);
			if (c.bad || r >= UW_NREG || !(f->valid & (1u << r)))
				return false;
			PUSH(f->r[r] + (uint64_t)s);
			continue;
		}
		switch (op) {
		case 0x03:	/* DW_OP_addr */
			a = c_uN(&c, 8);
			PUSH(a);
			break;
		case 0x06:	/* DW_OP_deref */
			NEED(1);
			if (!read_u64(w, st[sp - 1], &st[sp - 1]))
				return false;
			break;
		case 0x94:	/* DW_OP_deref_size */
			NEED(1);
			a = c_u8(&c);
			if (!read_sized(w, st[sp - 1], (unsigned)a, &st[sp - 1]))
				return false;
			break;
		case 0x08: PUSH(c_uN(&c, 1)); break;			/* const1u */
		case 0x09: PUSH((uint64_t)(int8_t)c_uN(&c, 1)); break;	/* const1s */
		case 0x0a: PUSH(c_uN(&c, 2)); break;			/* const2u */
		case 0x0b: PUSH((uint64_t)(int16_t)c_uN(&c, 2)); break;	/* const2s */
		case 0x0c: PUSH(c_uN(&c, 4)); break;			/* const4u */
		case 0x0d: PUSH((uint64_t)(int32_t)c_uN(&c, 4)); break;	/* const4s */
		case 0x0e:						/* const8u */
		case 0x0f: PUSH(c_uN(&c, 8)); break;			/* const8s */
		case 0x10: PUSH(c_uleb(&c)); break;			/* constu */
		case 0x11: PUSH((uint64_t)c_sleb(&c)); break;		/* consts */
		case 0x12: NEED(1); PUSH(st[sp - 1]); break;		/* dup */
		case 0x13: NEED(1); sp--; break;			/* drop */
		case 0x14: NEED(2); PUSH(st[sp - 2]); break;		/* over */
		case 0x15:						/* pick */
			a = c_u8(&c);
			if (a >= (uint64_t)sp)
				return false;
			PUSH(st[sp - 1 - (int)a]);
			break;
		case 0x16:						/* swap */
			NEED(2);
			a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a;
			break;
		case 0x17:						/* rot */
			NEED(3);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = a;
			break;
		case 0x19:						/* abs */
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case 0x1f: NEED(1); st[sp - 1] = -st[sp - 1]; break;	/* neg */
		case 0x20: NEED(1); st[sp - 1] = ~st[sp - 1]; break;	/* not */
		case 0x23:						/* plus_uconst */
			NEED(1);
			st[sp - 1] += c_uleb(&c);
			break;
		case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e:
		case 0x21: case 0x22: case 0x24: case 0x25: case 0x26:
		case 0x27: case 0x29: case 0x2a: case 0x2b: case 0x2c:
		case 0x2d: case 0x2e:
			NEED(2);
			b = st[--sp];	/* top */
			a = st[sp - 1];	/* second */
			switch (op) {
			case 0x1a: a &= b; break;			/* and */
			case 0x1b:					/* div */
				if (b == 0 || ((int64_t)b == -1 &&
					       (int64_t)a == INT64_MIN))
					return false;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c: a -= b; break;			/* minus */
			case 0x1d:					/* mod */
				if (b == 0)
					return false;
				a %= b;
				break;
			case 0x1e: a *= b; break;			/* mul */
			case 0x21: a |= b; break;			/* or */
			case 0x22: a += b; break;			/* plus */
			case 0x24: a = b >= 64 ? 0 : a << b; break;	/* shl */
			case 0x25: a = b >= 64 ? 0 : a >> b; break;	/* shr */
			case 0x26:					/* shra */
				a = (uint64_t)((int64_t)a >> (b >= 64 ? 63 : b));
				break;
			case 0x27: a ^= b; break;			/* xor */
			case 0x29: a = a == b; break;			/* eq */
			case 0x2a: a = (int64_t)a >= (int64_t)b; break;	/* ge */
			case 0x2b: a = (int64_t)a > (int64_t)b; break;	/* gt */
			case 0x2c: a = (int64_t)a <= (int64_t)b; break;	/* le */
			case 0x2d: a = (int64_t)a < (int64_t)b; break;	/* lt */
			case 0x2e: a = a != b; break;			/* ne */
			}
			st[sp - 1] = a;
			break;
		case 0x2f:	/* DW_OP_skip */
		case 0x28: {	/* DW_OP_bra */
			int16_t d = (int16_t)c_uN(&c, 2);
			bool jump = true;
			if (op == 0x28) {
				NEED(1);
				jump = st[--sp] != 0;
			}
			if (jump) {
				const uint8_t *to = c.p + d;
				if (c.bad || to < start || to > c.end)
					return false;
				c.p = to;
			}
			break;
		}
		case 0x92: {	/* DW_OP_bregx */
			uint64_t r = c_uleb(&c);
			s = c_sleb(&c);
			if (c.bad || r >= UW_NREG || !(f->valid & (1u << r)))
				return false;
			PUSH(f->r[r] + (uint64_t)s);
			break;
		}
		case 0x96:	/* DW_OP_nop */
			break;
		default:	/* unknown or not valid in CFI: give up */
			return false;
		}
		if (c.bad)
			return false;
	}
#undef NEED
#undef PUSH
	if (c.bad || sp < 1)
		return false;
	*out = st[sp - 1];
	return true;
}

/* ------------------------------------------------------------------ */
/* 5. Row cache                                                        */
/* ------------------------------------------------------------------ */

/*
 * Most rows of compiled code are "simple": CFA = tracked register + offset,
 * every register SAME except rbx, rbp, r12-r15 and the RA, whose rules are
 * SAME, UNDEF or OFFSET by a non-zero multiple of 8 in [-1016, 1016] bytes;
 * not a signal frame; RA column 16.  Such a row fits in 12 bytes, is
 * applied in place by apply_simple (no 17-register copy), and is what the
 * cache holds.
 */
#define UW_SIMPLE_NREG 7
#define UW_SIMPLE_UNDEF (-128)
static const uint8_t g_simple_regs[UW_SIMPLE_NREG] = { 3, 6, 12, 13, 14, 15,
						       UW_REG_RA };

struct simple {
	int32_t cfa_off;
	uint8_t cfa_reg;
	int8_t rule[UW_SIMPLE_NREG];	/* 0 SAME, -128 UNDEF, else off/8 */
};

/* Async-signal-safe.  Compact row into s if it is simple. */
static bool row_to_simple(const struct row *row, const struct cie *cie,
			  struct simple *s)
{
	if (cie->signal || cie->ra_col != UW_REG_RA ||
	    row->cfa_how != CFA_REG || row->cfa_reg >= UW_NREG)
		return false;
	s->cfa_reg = row->cfa_reg;
	s->cfa_off = row->cfa_val;
	for (int i = 0, j = 0; i < UW_NREG; i++) {
		const struct rule *r = &row->reg[i];
		if (j < UW_SIMPLE_NREG && g_simple_regs[j] == i) {
			int8_t v;
			if (r->how == RULE_SAME)
				v = 0;
			else if (r->how == RULE_UNDEF)
				v = UW_SIMPLE_UNDEF;
			else if (r->how == RULE_OFFSET && r->val &&
				 !(r->val & 7) && r->val >= -127 * 8 &&
				 r->val <= 127 * 8)
				v = (int8_t)(r->val / 8);
			else
				return false;
			s->rule[j++] = v;
		} else if (r->how != RULE_SAME) {
			return false;
		}
	}
	return true;
}

/*
 * Row cache: direct-mapped, global, lock-free, keyed by lookup address.
 * Each entry is a little seqlock: a writer claims it by CAS of seq from
 * even to odd, stores the payload and releases with seq + 2; a reader
 * trusts the payload only if seq was even and unchanged around its reads,
 * so torn entries are never used.  A writer that loses the CAS (another
 * thread, or a handler nested in one mid-write) just skips caching.
 * Entries carry the table generation, so uw_refresh invalidates all of
 * them by bumping it.  The payload is read with relaxed atomics (plain
 * moves on x86_64).
 */
#ifndef UW_CACHE_BITS
#define UW_CACHE_BITS 12
#endif
#define UW_CACHE_SIZE (1u << UW_CACHE_BITS)

/* What a cache entry holds (0: nothing). */
enum { KIND_SIMPLE = 1, KIND_SIGFRAME = 2 };

struct uw_centry {
	atomic_uint_fast64_t seq;
	atomic_uint_fast64_t key;	/* cache_key() */
	atomic_uint_fast64_t w1;	/* gen:24 | kind:3 | cfa_reg:5 |
					 * cfa_off:32 */
	atomic_uint_fast64_t w2;	/* rule[0..6] in bytes 0..6 */
} __attribute__((aligned(32)));	/* 4096 x 32 bytes = 128 KiB */

static struct uw_centry g_cache[UW_CACHE_SIZE];

/* Async-signal-safe.  The key is the lookup address plus the frame kind:
 * a row depends only on the address, but KIND_SIGFRAME entries come from
 * the pc (return address) next to the lookup address, which an exact pc
 * (say, a ret right before a CFI-less trampoline) may equal. */
static inline uintptr_t cache_key(uintptr_t a, bool exact)
{
	return exact ? a : a | SONDE_PC_EXACT;
}

/* Async-signal-safe. */
static inline struct uw_centry *cache_slot(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
	return &g_cache[h >> (64 - UW_CACHE_BITS)];
}

/* Async-signal-safe.  Look a up; returns its kind (0 on a miss) and, for
 * KIND_SIMPLE, fills s. */
static inline int cache_get(uint32_t gen, uintptr_t a, struct simple *s)
{
#ifdef UW_NO_CACHE	/* for measuring the uncached path */
	(void)gen, (void)a, (void)s;
	return 0;
#else
	struct uw_centry *e = cache_slot(a);
	uint64_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
	uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
	uint64_t w1 = atomic_load_explicit(&e->w1, memory_order_relaxed);
	uint64_t w2 = atomic_load_explicit(&e->w2, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	uint64_t s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);

	if ((s1 & 1) || s1 != s2 || k != a ||
	    (uint32_t)(w1 >> 40) != (gen & 0xffffff))
		return 0;
	int kind = (w1 >> 37) & 7;
	if (kind == KIND_SIMPLE) {
		s->cfa_reg = (w1 >> 32) & 31;
		s->cfa_off = (int32_t)(uint32_t)w1;
		memcpy(s->rule, &w2, UW_SIMPLE_NREG);
	}
	return kind;
#endif
}

/* Async-signal-safe.  Remember a's row: s (KIND_SIMPLE) or nothing more
 * than the kind (KIND_SIGFRAME). */
static void cache_put(uint32_t gen, uintptr_t a, int kind,
		      const struct simple *s)
{
	struct uw_centry *e = cache_slot(a);
	uint64_t w1 = (uint64_t)(gen & 0xffffff) << 40 | (uint64_t)kind << 37;
	uint64_t w2 = 0;
	uint64_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);

	if (s) {	/* cfa_reg < UW_NREG fits 5 bits */
		w1 |= (uint64_t)s->cfa_reg << 32 | (uint32_t)s->cfa_off;
		memcpy(&w2, s->rule, UW_SIMPLE_NREG);
	}
	if ((seq & 1) ||
	    !atomic_compare_exchange_strong_explicit(&e->seq, &seq, seq + 1,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&e->key, a, memory_order_relaxed);
	atomic_store_explicit(&e->w1, w1, memory_order_relaxed);
	atomic_store_explicit(&e->w2, w2, memory_order_relaxed);
	atomic_store_explicit(&e->seq, seq + 2, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* 6. Stepping                                                         */
/* ------------------------------------------------------------------ */

enum { STEP_OK, STEP_END, STEP_FAIL };

/* Async-signal-safe.  Is pc inside an executable segment of a known
 * object? */
static inline bool known_code(const struct uw_walk *w, uint64_t pc)
{
	return range_find(w->t->exec, w->t->nexec, (uintptr_t)pc, 1) >= 0;
}

/* Async-signal-safe.  Apply a simple row to f in place: only the saved
 * registers change, the sp becomes the CFA, which must grow. */
static int apply_simple(struct uw_walk *w, const struct simple *s,
			struct frame *f)
{
	uint64_t sp = f->r[UW_REG_RSP], cfa;

	if (s->rule[UW_SIMPLE_NREG - 1] == UW_SIMPLE_UNDEF)
		return STEP_END;	/* outermost frame (_start, clone) */
	if (!(f->valid & (1u << s->cfa_reg)))
		return STEP_FAIL;
	cfa = f->r[s->cfa_reg] + (uint64_t)(int64_t)s->cfa_off;
	for (int i = 0; i < UW_SIMPLE_NREG; i++) {
		int v = s->rule[i];
		unsigned reg = g_simple_regs[i];
		if (!v)
			continue;
		if (v == UW_SIMPLE_UNDEF) {
			f->valid &= ~(1u << reg);
			continue;
		}
		if (!read_u64(w, cfa + (uint64_t)(int64_t)(v * 8), &f->r[reg]))
			return STEP_FAIL;
		f->valid |= 1u << reg;
	}
	if (!(cfa > sp))
		return STEP_FAIL;	/* no progress: would loop */
	f->r[UW_REG_RSP] = cfa;
	f->valid |= 1u << UW_REG_RSP;
	f->exact = false;
	if (!(f->valid & (1u << UW_REG_RA)))
		return STEP_FAIL;
	if (f->r[UW_REG_RA] == 0)
		return STEP_END;	/* zero return address: outermost */
	return STEP_OK;
}

/* Async-signal-safe.  Compute the caller's frame from a row. */
static int apply_row(struct uw_walk *w, const struct uw_object *o,
		     const struct row *row, uint32_t ra_col,
		     const struct frame *f, struct frame *nf)
{
	uint64_t cfa;

	if (ra_col >= UW_NREG)
		return STEP_FAIL;
	if (row->reg[ra_col].how == RULE_UNDEF)
		return STEP_END;	/* outermost frame (_start, clone) */
	if (row->cfa_how == CFA_REG) {
		if (row->cfa_reg >= UW_NREG ||
		    !(f->valid & (1u << row->cfa_reg)))
			return STEP_FAIL;
		cfa = f->r[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_val;
	} else {
		if (!o || !eval_expr(w, o, (const uint8_t *)(o->eh_lo +
				     (uintptr_t)(int64_t)row->cfa_val),
				     f, false, 0, &cfa))
			return STEP_FAIL;
	}

	nf->valid = 0;
	for (int i = 0; i < UW_NREG; i++) {
		const struct rule *r = &row->reg[i];
		uint64_t v = 0;

		switch (r->how) {
		case RULE_SAME:
			if (!(f->valid & (1u << i)))
				continue;
			v = f->r[i];
			break;
		case RULE_UNDEF:
			continue;
		case RULE_OFFSET:
			if (!read_u64(w, cfa + (uint64_t)(int64_t)r->val, &v))
				return STEP_FAIL;
			break;
		case RULE_VAL_OFFSET:
			v = cfa + (uint64_t)(int64_t)r->val;
			break;
		case RULE_REG:
			if (r->val < 0 || r->val >= UW_NREG ||
			    !(f->valid & (1u << r->val)))
				continue;
			v = f->r[r->val];
			break;
		case RULE_EXPR:
		case RULE_VAL_EXPR:
			if (!o || !eval_expr(w, o, (const uint8_t *)(o->eh_lo +
					     (uintptr_t)(int64_t)r->val),
					     f, true, cfa, &v))
				return STEP_FAIL;
			if (r->how == RULE_EXPR && !read_u64(w, v, &v))
				return STEP_FAIL;
			break;
		}
		nf->r[i] = v;
		nf->valid |= 1u << i;
	}
	/* The caller's sp is the CFA unless the frame restores it (signal
	 * frames do). */
	if (row->reg[UW_REG_RSP].how == RULE_SAME) {
		nf->r[UW_REG_RSP] = cfa;
		nf->valid |= 1u << UW_REG_RSP;
	}
	if (!(nf->valid & (1u << ra_col)))
		return STEP_FAIL;
	nf->r[UW_REG_RA] = nf->r[ra_col];
	nf->valid |= 1u << UW_REG_RA;
	if (nf->r[UW_REG_RA] == 0)
		return STEP_END;	/* zero return address: outermost */
	return STEP_OK;
}

/* Async-signal-safe.  The x86_64 rt_sigreturn trampoline:
 * mov $15,%rax; syscall.  True if pc is at its first or second insn. */
static bool is_sigreturn(struct uw_walk *w, uint64_t pc, bool exact)
{
	static const uint8_t code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
					 0x00, 0x00, 0x0f, 0x05 };

	if (range_find(w->t->exec, w->t->nexec, (uintptr_t)pc, 9) >= 0 &&
	    memcmp((const void *)pc, code, 9) == 0)
		return true;
	/* Interrupted on the syscall itself (exact pc only). */
	return exact && pc >= 7 &&
	       range_find(w->t->exec, w->t->nexec, (uintptr_t)pc - 7, 9) >= 0 &&
	       memcmp((const void *)(pc - 7), code, 9) == 0;
}

/* Async-signal-safe.  Restore all registers from the ucontext_t the
 * kernel left at sp when the handler returned into the trampoline. */
static int step_sigframe(struct uw_walk *w, struct frame *f)
{
	static const uint8_t map[UW_NREG] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
		REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
		REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	uintptr_t gregs = (uintptr_t)f->r[UW_REG_RSP] +
			  offsetof(ucontext_t, uc_mcontext.gregs);
	struct frame nf;

	if (!(f->valid & (1u << UW_REG_RSP)) || ++w->nsig > UW_MAX_SIGFRAMES)
		return STEP_FAIL;
	for (int i = 0; i < UW_NREG; i++)
		if (!read_u64(w, gregs + 8u * map[i], &nf.r[i]))
			return STEP_FAIL;
	nf.valid = (1u << UW_NREG) - 1;
	nf.exact = true;
	if (nf.r[UW_REG_RA] == 0)
		return STEP_END;
	*f = nf;
	return STEP_OK;
}

static int step_slow(struct uw_walk *w, struct frame *f, uintptr_t a);

/* A JIT's code (uw_jit_region): no object describes it, and its frames
 * need not keep a frame pointer (HotSpot's compiled code uses rbp as it
 * likes), so the walk cannot step through them.  It crosses them to the
 * entry stub the JIT's code was called from, which made a frame-pointer
 * frame before the call: the nearest slot above sp that holds a return
 * address into the stub is that call's, and the slot below it the stub's
 * rbp, saved by the callee's prologue (HotSpot's interpreter and compiled
 * code both push it right below their return address).  A stale value in
 * a frame's unwritten slot would fail the check of the stub's frame (a
 * saved rbp above the slot whose return address is known code). */
#define UW_MAX_JIT 4
#define UW_JIT_SCAN (256u << 10) /* bytes of stack searched at most */
static struct uw_jit {
	_Atomic uint64_t lo, hi, elo, ehi;
} g_jit[UW_MAX_JIT];
static _Atomic int g_njit;

int uw_jit_region(uint64_t lo, uint64_t hi, uint64_t elo, uint64_t ehi)
{
	if (lo >= hi || elo >= ehi)
		return -1;
	int n = atomic_load(&g_njit), i = 0;
	while (i < n && !(atomic_load(&g_jit[i].elo) == elo && atomic_load(&g_jit[i].ehi) == ehi))
		i++;
	int r = 0;
	if (i < UW_MAX_JIT) {
		/* a reader may see the new lo with the old hi: either is a
		 * range of the JIT's code */
		atomic_store(&g_jit[i].lo, lo);
		atomic_store(&g_jit[i].hi, hi);
		if (i == n) {
			atomic_store(&g_jit[i].elo, elo);
			atomic_store(&g_jit[i].ehi, ehi);
			atomic_store_explicit(&g_njit, n + 1, memory_order_release);
		}
	} else {
		r = -1;
	}
	return r;
}

/* Async-signal-safe.  f's pc is in a JIT's code: f becomes the entry
 * stub's frame (its pc the return address into it, exact no more), whose
 * frame pointer the next step follows.  false: not a JIT's code, or no
 * entry found in the trusted stack. */
UW_NO_ASAN static bool jit_cross(struct uw_walk *w, struct frame *f, uint64_t pc)
{
	int n = atomic_load_explicit(&g_njit, memory_order_acquire);
	for (int i = 0; i < n; i++) {
		const struct uw_jit *j = &g_jit[i];
		uint64_t elo = atomic_load_explicit(&j->elo, memory_order_relaxed);
		uint64_t ehi = atomic_load_explicit(&j->ehi, memory_order_relaxed);
		if (pc < atomic_load_explicit(&j->lo, memory_order_relaxed) ||
		    pc >= atomic_load_explicit(&j->hi, memory_order_relaxed) || (pc >= elo && pc < ehi))
			continue; /* in the stub itself: its frame pointer is the way */
		uintptr_t sp = (uintptr_t)f->r[UW_REG_RSP];
		if (!(f->valid & (1u << UW_REG_RSP)) || sp < w->slo + 8 || sp >= w->slim)
			return false;
		if (w->jf && !w->jf->sp) {
			w->jf->sp = sp;
			w->jf->fp = f->valid & (1u << UW_REG_RBP) ? f->r[UW_REG_RBP] : 0;
		}
		uintptr_t end = w->slim - sp > UW_JIT_SCAN ? sp + UW_JIT_SCAN : w->slim;
		for (uintptr_t a = (sp + 7) & ~(uintptr_t)7; a < end; a += 8) {
			uint64_t v = *(const uint64_t *)a, bp, ra;
			if (v < elo || v >= ehi)
				continue;
			bp = *(const uint64_t *)(a - 8);
			if (bp <= a || (bp & 7) || !read_u64(w, bp + 8, &ra) || !known_code(w, ra))
				continue;
			f->r[UW_REG_RSP] = a + 8;
			f->r[UW_REG_RBP] = bp;
			f->r[UW_REG_RA] = v;
			f->valid = (1u << UW_REG_RSP) | (1u << UW_REG_RBP) | (1u << UW_REG_RA);
			f->exact = false;
			return true;
		}
		return false;
	}
	return false;
}

/* Async-signal-safe.  One frame up.  f->exact selects the lookup address:
 * the pc itself for the interrupted instruction, pc - 1 (inside the call)
 * for return addresses. */
static inline int step(struct uw_walk *w, struct frame *f)
{
	uint64_t pc = f->r[UW_REG_RA];
	uintptr_t a = f->exact ? pc : pc - 1;
	struct simple simple;

	switch (cache_get(w->t->gen, cache_key(a, f->exact), &simple)) {
	case KIND_SIMPLE:
		return apply_simple(w, &simple, f);
	case KIND_SIGFRAME:
		return step_sigframe(w, f);
	}
	return step_slow(w, f, a);
}

/* Async-signal-safe.  step() after a cache miss: find the row through
 * .eh_frame_hdr, or fall back.  Kept out of line so the cached path stays
 * small (the walk runs with cold caches right after signal delivery). */
__attribute__((noinline)) static int step_slow(struct uw_walk *w,
					       struct frame *f, uintptr_t a)
{
	const struct uw_table *t = w->t;
	uint64_t pc = f->r[UW_REG_RA];
	uintptr_t key = cache_key(a, f->exact);
	struct simple simple;
	struct frame nf;
	int r;

	int ri = range_find(t->exec, t->nexec, a, 1);
	if (ri >= 0 && t->obj[t->exec[ri].obj].hdr) {
		const struct uw_object *o = &t->obj[t->exec[ri].obj];
		const uint8_t *ins, *ins_end;
		uint64_t begin;
		struct row init, row;
		struct cie cie;

		r = find_fde(o, a, &cie, &begin, &ins, &ins_end);
		if (r < 0)
			return STEP_FAIL;
		if (r > 0 && cie.signal && is_sigreturn(w, pc, f->exact)) {
			/* glibc's __restore_rt: its CFI says "registers are in
			 * the ucontext_t at sp", which the trampoline bytes
			 * guarantee; restoring them directly is ~20x cheaper
			 * than evaluating its 18 expressions. */
			cache_put(t->gen, key, KIND_SIGFRAME, NULL);
			return step_sigframe(w, f);
		}
		if (r > 0) {
			memset(&init, 0, sizeof(init));
			init.cfa_reg = 0xff;
			if (!run_cfa(o, &cie, cie.insns, cie.insns_end, 0,
				     UINT64_MAX, NULL, &init))
				return STEP_FAIL;
			row = init;
			if (!run_cfa(o, &cie, ins, ins_end, begin, a, &init,
				     &row))
				return STEP_FAIL;
			if (row_to_simple(&row, &cie, &simple)) {
				cache_put(t->gen, key, KIND_SIMPLE, &simple);
				return apply_simple(w, &simple, f);
			}
			r = apply_row(w, o, &row, cie.ra_col, f, &nf);
			if (r != STEP_OK)
				return r;
			if (cie.signal) {
				/* The interrupted sp may be anywhere
				 * (sigaltstack): no progress check. */
				if (++w->nsig > UW_MAX_SIGFRAMES)
					return STEP_FAIL;
			} else if (!(nf.r[UW_REG_RSP] > f->r[UW_REG_RSP])) {
				return STEP_FAIL;	/* would loop */
			}
			nf.exact = cie.signal;
			*f = nf;
			return STEP_OK;
		}
	}

	/* No CFI for this pc. */
	if (is_sigreturn(w, pc, f->exact)) {
		cache_put(t->gen, key, KIND_SIGFRAME, NULL);
		return step_sigframe(w, f);
	}
	if (atomic_load_explicit(&g_njit, memory_order_relaxed) && jit_cross(w, f, pc))
		return STEP_OK;

	uint64_t sp = f->r[UW_REG_RSP], ra;
	if (f->exact && read_u64(w, sp, &ra) && known_code(w, ra)) {
		/* Interrupted at a function's first instruction (or in code
		 * that has not touched the stack): RA is at [sp]. */
		f->r[UW_REG_RSP] = sp + 8;
		f->r[UW_REG_RA] = ra;
		f->exact = false;
		return STEP_OK;
	}
	uint64_t bp = f->r[UW_REG_RBP], nbp;
	if ((f->valid & (1u << UW_REG_RBP)) && bp >= sp && !(bp & 7) &&
	    bp + 16 > bp && read_u64(w, bp + 8, &ra) && known_code(w, ra) &&
	    read_u64(w, bp, &nbp)) {
		/* Frame-pointer chain: [rbp] = caller's rbp, [rbp+8] = RA. */
		f->r[UW_REG_RBP] = nbp;
		f->r[UW_REG_RSP] = bp + 16;
		f->r[UW_REG_RA] = ra;
		f->exact = false;
		return STEP_OK;
	}
	return STEP_FAIL;
}

/* Async-signal-safe.  Take a reference on the current table so uw_refresh
 * does not rewrite it under us (see uw_refresh). */
static struct uw_table *table_get(void)
{
	for (int tries = 0; tries < 8; tries++) {
		struct uw_table *t = atomic_load(&g_cur);
		if (!t)
			return NULL;
		atomic_fetch_add(&t->users, 1);
		if (atomic_load(&g_cur) == t)
			return t;
		atomic_fetch_sub(&t->users, 1);
	}
	return NULL;
}

/* Async-signal-safe. */
int uw_backtrace(const void *ucv, uintptr_t stack_lo, uintptr_t stack_hi,
		 uint64_t *pcs, int max, unsigned *flags)
{
	return uw_backtrace_sp(ucv, stack_lo, stack_hi, pcs, NULL, max, flags);
}

/* Async-signal-safe. */
static int backtrace(const void *ucv, uintptr_t stack_lo, uintptr_t stack_hi,
		     uint64_t *pcs, uint64_t *sps, int max, unsigned *flags,
		     struct uw_jitframe *jf);

int uw_backtrace_sp(const void *ucv, uintptr_t stack_lo, uintptr_t stack_hi,
		    uint64_t *pcs, uint64_t *sps, int max, unsigned *flags)
{
	return backtrace(ucv, stack_lo, stack_hi, pcs, sps, max, flags, NULL);
}

int uw_backtrace_jit(const void *uc, uintptr_t stack_lo, uintptr_t stack_hi,
		     uint64_t *pcs, int max, unsigned *flags,
		     struct uw_jitframe *jf)
{
	if (jf)
		jf->sp = jf->fp = 0;
	return backtrace(uc, stack_lo, stack_hi, pcs, NULL, max, flags, jf);
}

static int backtrace(const void *ucv, uintptr_t stack_lo, uintptr_t stack_hi,
		     uint64_t *pcs, uint64_t *sps, int max, unsigned *flags,
		     struct uw_jitframe *jf)
{
	const ucontext_t *uc = ucv;
	int saved_errno = errno;
	unsigned fl = 0;
	int n = 0;

	if (!uc || max <= 0 || !pcs) {
		if (flags)
			*flags = SONDE_STACK_INCOMPLETE;
		return 0;
	}

	static const uint8_t map[UW_NREG] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
		REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
		REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	struct frame f;
	for (int i = 0; i < UW_NREG; i++)
		f.r[i] = (uint64_t)uc->uc_mcontext.gregs[map[i]];
	f.valid = (1u << UW_NREG) - 1;
	f.exact = true;
	if (sps)
		sps[n] = f.r[UW_REG_RSP];
	pcs[n++] = f.r[UW_REG_RA] | SONDE_PC_EXACT;

	struct uw_walk w;
	struct uw_table *t = table_get();
	if (!t) {
		fl = SONDE_STACK_INCOMPLETE;
		goto out;
	}
	w.t = t;
	if (stack_hi > stack_lo && stack_hi - stack_lo >= 8) {
		w.slo = stack_lo;
		w.slim = stack_hi - 7;
	} else {
		w.slo = 1;	/* empty */
		w.slim = 0;
	}
	w.nwin = 0;
	w.probes_left = UW_MAX_PROBES;
	w.pid = 0;
	w.nsig = 0;
	w.jf = jf;
	if (stack_lo == 0 && stack_hi == 0) {
		/* Unknown bounds.  When this frame (a getcontext of the
		 * caller) or the context (the kernel's signal frame: the
		 * sampling handler runs on a stack of its own, sample.c) lies
		 * a little below sp and sp is not at a page start, the page
		 * holding sp is in use as stack, hence mapped: trust [sp, end
		 * of its page) and probe the rest.  Otherwise (sigaltstack, a
		 * wild sp) everything is probed. */
		uintptr_t sp = (uintptr_t)f.r[UW_REG_RSP];
		uintptr_t here = (uintptr_t)__builtin_frame_address(0), ctx = (uintptr_t)uc;
		if ((sp & (UW_PAGE - 1)) &&
		    ((here < sp && sp - here <= 65536) || (ctx < sp && sp - ctx <= 65536))) {
			w.wlo[0] = sp;
			w.whi[0] = (sp | (UW_PAGE - 1)) + 1;
			w.nwin = 1;
		}
	}

	for (;;) {
		int r = step(&w, &f);
		if (r == STEP_END)
			break;
		/* A pc with bit 63 set cannot be user code; it also would
		 * collide with SONDE_PC_EXACT. */
		if (r == STEP_FAIL || (f.r[UW_REG_RA] & SONDE_PC_EXACT)) {
			fl |= SONDE_STACK_INCOMPLETE;
			break;
		}
		if (n == max) {
			fl |= SONDE_STACK_TRUNCATED;
			break;
		}
		if (sps)
			sps[n] = f.r[UW_REG_RSP];
		pcs[n++] = f.r[UW_REG_RA] | (f.exact ? SONDE_PC_EXACT : 0);
	}
	atomic_fetch_sub(&t->users, 1);
out:
	if (flags)
		*flags = fl;
	errno = saved_errno;
	return n;
}

static bool ends_syscall(struct uw_table *t, uintptr_t a)
{
	uint8_t b[2];
	if (a < 2 || range_find(t->exec, t->nexec, a - 2, 2) < 0)
		return false;
	memcpy(b, (const void *)(a - 2), 2);
	return b[0] == 0x0f && b[1] == 0x05;
}

/* Async-signal-safe.  Whether the interrupted pc stands at a system call:
 * just after a `syscall` instruction (0f 05: the call completed, or was
 * going on, when the signal came) or on one (a call the kernel will
 * restart).  Code is read only inside the executable segments of the
 * objects in the table: a pc elsewhere (JIT code) is not at one.
 *
 * Or a few instructions past one: where a guest kernel gets its timer
 * interrupts only at its transitions to and from user mode (measured on
 * a paravirtualised guest: perf's own hrtimer samples put 8.7% of a loop
 * of reads of /dev/zero in user mode, the kernel's tick accounting 2-9%),
 * the interrupt that fell in a system call often lands a handful of
 * instructions after its return.  The return leaves its own trace: the
 * `syscall` instruction put the return address in rcx and the flags in
 * r11, and the kernel gives them back so.  While rcx still names the end
 * of a `syscall` and r11 still looks like flags (IF and the always-one bit
 * set, nothing above bit 21), a pc at most 32 bytes past rcx is taken as
 * still in the call: the straight-line code of the call's wrapper (its
 * error check, the cancellation epilogue).  User work that small, right
 * after a system call and not touching rcx or r11, would be taken for
 * system time. */
bool uw_at_syscall(uintptr_t pc, uintptr_t rcx, uintptr_t r11)
{
	struct uw_table *t = table_get();
	if (!t)
		return false;
	bool at = false;
	uint8_t b[4];
	if (pc >= 2 && range_find(t->exec, t->nexec, pc - 2, 4) >= 0) {
		memcpy(b, (const void *)(pc - 2), 4);
		at = (b[0] == 0x0f && b[1] == 0x05) || (b[2] == 0x0f && b[3] == 0x05);
	} else if (pc >= 2 && range_find(t->exec, t->nexec, pc - 2, 2) >= 0) {
		memcpy(b, (const void *)(pc - 2), 2); /* pc ends its segment */
		at = b[0] == 0x0f && b[1] == 0x05;
	}
	if (!at && pc > rcx && pc - rcx <= 32 && (r11 & 0x202) == 0x202 && r11 < (1u << 22))
		at = ends_syscall(t, rcx);
	atomic_fetch_sub(&t->users, 1);
	return at;
}
