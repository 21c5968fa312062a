/*
 * jvm.inline, read (jscopes.h).  The agent writes, for each compiled
 * method alive at the JVM's end, a line for the method and a line for the
 * last address of each run of addresses with one scope:
 *
 *	# sonde jvm.inline 2
 *	0xCODE SIZE 0xMETHODID
 *	+OFFSET 0xMETHODID:BCI 0xMETHODID:BCI ...
 *
 * An address belongs to the first scope at or after it: HotSpot's own
 * lookup of a pc's scope (nmethod::pc_desc_near) takes the first PcDesc
 * whose offset is at or above the pc's, since a PcDesc marks the end of
 * the instructions it describes (a call's is at its return address).
 * The first version of the file gave a run's first address, which cannot
 * tell the run an address between two runs belongs to: it is not read.
 * The third gives a method's line its code's compile id (HotSpot's) as a
 * fourth field, where the agent knows it:
 *
 *	0xCODE SIZE 0xMETHODID CID
 *
 * which a SONDE_FRAME_JAVA_CODE frame carries (its low 16 bits), so that
 * the code that held an address at the sample is told from the others
 * that held it over the run.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/format.h>

#include "base/grow.h"
#include "base/partition.h"
#include "reader/jscopes.h"

struct level {
	uint64_t method;
	uint16_t bci;
};
struct scope {
	uint32_t off;	   /* the run's last address, from the code's start */
	uint32_t first, n; /* levels[first .. first + n), innermost first */
};
struct code {
	uint64_t addr;
	uint32_t size;
	uint8_t kind;	   /* the compiled method's frame kind (its tier) */
	uint32_t first, n; /* scopes[first .. first + n), by offset */
	uint32_t seq;	   /* its place in the file: later, loaded later */
	int32_t cid;	   /* its compile id; -1: not told */
	uint8_t drop;	   /* SHADOWED, DAMAGED */
};
#define SHADOWED 1 /* a later one overlaps it */
#define DAMAGED 2  /* over thousands of others: not a method */
struct sonde_jscopes {
	/* every code, by address; the last ones, those no later one
	 * overlaps (a native frame's, which carries no compile id), by
	 * address; the largest end of codes[0..i] */
	struct code *codes, *last;
	uint64_t *maxend;
	size_t ncodes, capcodes, nlast;
	struct scope *scopes;
	size_t nscopes, capscopes;
	struct level *levels;
	size_t nlevels, caplevels;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex number (with or without 0x) at *p, up to e: false when none. */
static bool hexnum(const char **p, const char *e, uint64_t *v)
{
	const char *s = *p;
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t x = 0;
	int nd = 0;
	for (; s < e; s++, nd++) {
		int d = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
						 : -1;
		if (d < 0)
			break;
		if (nd >= 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	if (!nd)
		return false;
	*p = s;
	*v = x;
	return true;
}

/* A decimal number, maybe negative, at *p. */
static bool decnum(const char **p, const char *e, int64_t *v)
{
	const char *s = *p;
	bool neg = s < e && *s == '-';
	s += neg;
	int64_t x = 0;
	int nd = 0;
	for (; s < e && *s >= '0' && *s <= '9'; s++, nd++) {
		if (nd >= 12)
			return false;
		x = x * 10 + (*s - '0');
	}
	if (!nd)
		return false;
	*p = s;
	*v = neg ? -x : x;
	return true;
}

static void skip_blanks(const char **p, const char *e)
{
	while (*p < e && blank(**p))
		(*p)++;
}

#define OVERLAP_MAX 4096

static int cmp_code(const void *a, const void *b)
{
	const struct code *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* jvm.code's loads (doc/experiment-format.md: TIME load 0xCODE SIZE 0xID
 * LEVEL ...): the code's address and HotSpot's tier, in file order. */
struct load {
	uint64_t addr;
	size_t seq;
	int level;
	int64_t cid;
};

static int cmp_load(const void *a, const void *b)
{
	const struct load *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int read_loads(const char *code, size_t len, struct load **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (const char *p = code, *end = code + len; p && p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *s = p, *e = eol ? eol : end;
		p = eol ? eol + 1 : NULL;
		while (s < e && !blank(*s))
			s++; /* TIME */
		skip_blanks(&s, e);
		if (e - s < 5 || memcmp(s, "load", 4) || !blank(s[4]))
			continue;
		s += 4;
		skip_blanks(&s, e);
		uint64_t a, size;
		int64_t lv;
		if (!hexnum(&s, e, &a) || (skip_blanks(&s, e), !hexnum(&s, e, &size)))
			continue;
		skip_blanks(&s, e);
		while (s < e && !blank(*s))
			s++; /* the method id */
		skip_blanks(&s, e);
		if (!decnum(&s, e, &lv))
			continue;
		int64_t cid = -1;
		skip_blanks(&s, e);
		if (!decnum(&s, e, &cid))
			cid = -1;
		if (sonde_grow(out, &cap, *n + 1, sizeof **out, 256))
			return -1;
		(*out)[*n] = (struct load){ a, *n, (int)lv, cid };
		(*n)++;
	}
	qsort(*out, *n, sizeof **out, cmp_load);
	return 0;
}

/* The frame kind of the compiled method at addr with compile id cid (-1:
 * not told): C1's for tiers 1 to 3 by its load there (the last load
 * there when cid is not told, or none is of it), else C2's (the tier not
 * told is the default). */
static uint8_t tier_kind(const struct load *v, size_t n, uint64_t addr, int32_t cid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first load above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t at = lo;
	for (size_t k = lo; cid >= 0 && k-- > 0 && v[k].addr == addr;)
		if (v[k].cid == cid) {
			at = k + 1;
			break;
		}
	if (at && v[at - 1].addr == addr && v[at - 1].level >= 1 && v[at - 1].level <= 3)
		return SONDE_FRAME_JAVA_COMPILED_C1;
	return SONDE_FRAME_JAVA_COMPILED;
}

void sonde_jscopes_free(struct sonde_jscopes *s)
{
	if (!s)
		return;
	free(s->codes);
	free(s->last);
	free(s->maxend);
	free(s->scopes);
	free(s->levels);
	free(s);
}

struct sonde_jscopes *sonde_jscopes_parse(const char *inl, size_t len, const char *code, size_t code_len, size_t *bad,
					  bool *oom)
{
	*bad = 0;
	*oom = false;
	/* the second version's lines are the third's without compile ids */
	static const char v2[] = "# sonde jvm.inline 2";
	size_t hl = strlen(SONDE_JVM_INLINE_HEADER);
	_Static_assert(sizeof v2 - 1 == sizeof SONDE_JVM_INLINE_HEADER - 1, "the versions' first lines");
	if (!inl || len < hl || (memcmp(inl, SONDE_JVM_INLINE_HEADER, hl) && memcmp(inl, v2, hl)) ||
	    (len > hl && inl[hl] != '\n'))
		return NULL;
	struct sonde_jscopes *s = calloc(1, sizeof *s);
	if (!s)
		goto oom;
	struct code *cur = NULL; /* the method the scope lines are of */
	for (const char *p = inl + hl, *end = inl + len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *e = eol ? eol : end;
		p = eol ? eol + 1 : end;
		while (e > q && (blank(e[-1]) || e[-1] == '\r'))
			e--;
		if (q == e)
			continue;
		if (*q != '+') { /* 0xCODE SIZE 0xMETHODID [CID] */
			uint64_t addr, size, m;
			int64_t cid = -1;
			cur = NULL;
			if (!hexnum(&q, e, &addr) || (skip_blanks(&q, e), !hexnum(&q, e, &size)) ||
			    (skip_blanks(&q, e), !hexnum(&q, e, &m)) || (skip_blanks(&q, e), q != e && !decnum(&q, e, &cid)) ||
			    q != e || !size || size > UINT32_MAX || addr + size < addr || cid < -1 || cid > INT32_MAX) {
				(*bad)++;
				continue;
			}
			if (sonde_grow(&s->codes, &s->capcodes, s->ncodes + 1, sizeof *s->codes, 64))
				goto oom;
			cur = &s->codes[s->ncodes++];
			*cur = (struct code){ addr,	(uint32_t)size, SONDE_FRAME_JAVA_COMPILED, (uint32_t)s->nscopes, 0,
					      (uint32_t)(s->ncodes - 1), (int32_t)cid, 0 };
			continue;
		}
		q++;
		uint64_t off;
		if (!cur || !hexnum(&q, e, &off) || off >= cur->size ||
		    (cur->n && off <= s->scopes[s->nscopes - 1].off)) {
			(*bad)++;
			continue;
		}
		size_t first = s->nlevels;
		bool ok = true;
		while (ok && q < e) {
			uint64_t m;
			int64_t bci;
			skip_blanks(&q, e);
			if (q == e)
				break;
			ok = hexnum(&q, e, &m) && q < e && *q++ == ':' && decnum(&q, e, &bci) && (q == e || blank(*q));
			if (!ok)
				break;
			if (sonde_grow(&s->levels, &s->caplevels, s->nlevels + 1, sizeof *s->levels, 256))
				goto oom;
			s->levels[s->nlevels++] =
				(struct level){ m, bci < 0 || bci >= SONDE_FRAME_NO_BCI ? SONDE_FRAME_NO_BCI
											: (uint16_t)bci };
		}
		if (!ok || s->nlevels == first) {
			s->nlevels = first;
			(*bad)++;
			continue;
		}
		if (sonde_grow(&s->scopes, &s->capscopes, s->nscopes + 1, sizeof *s->scopes, 256))
			goto oom;
		s->scopes[s->nscopes++] =
			(struct scope){ (uint32_t)off, (uint32_t)first, (uint32_t)(s->nlevels - first) };
		cur->n++;
	}
	/* By address.  Two that overlap were there at different times (a
	 * method's code freed, its place reused).  A frame with a compile
	 * id takes its own code's (find_code).  A native frame has none:
	 * it takes the last code, and a code that a later one overlaps is
	 * left out for it, whole, so that the one there at the end is taken
	 * where there is one.  Taking neither lost the scopes of a third of
	 * javac's compiled methods (1,277 of 4,229 overlap another): 252 of
	 * its stacks got Java frames from them, 303 with the last. */
	qsort(s->codes, s->ncodes, sizeof *s->codes, cmp_code);
	for (size_t i = 0; i < s->ncodes; i++) {
		struct code *c = &s->codes[i];
		/* a code over thousands of others is a damaged line, not a
		 * method: dropped, the others left as they are, and the scan
		 * bounded */
		size_t end = i + 1;
		while (end < s->ncodes && end - i <= OVERLAP_MAX && s->codes[end].addr < c->addr + c->size)
			end++;
		if (end - i > OVERLAP_MAX) {
			c->drop |= DAMAGED;
			continue;
		}
		for (size_t j = i + 1; j < end; j++) {
			struct code *d = &s->codes[j];
			if (d->seq > c->seq)
				c->drop |= SHADOWED;
			else
				d->drop |= SHADOWED;
		}
	}
	size_t kept = 0, nlast = 0;
	for (size_t i = 0; i < s->ncodes; i++)
		if (!(s->codes[i].drop & DAMAGED)) {
			nlast += !s->codes[i].drop;
			s->codes[kept++] = s->codes[i];
		}
	s->ncodes = kept;
	struct load *loads = NULL;
	size_t nloads = 0;
	if (code && read_loads(code, code_len, &loads, &nloads) < 0) {
		free(loads);
		goto oom;
	}
	for (size_t i = 0; i < s->ncodes; i++)
		s->codes[i].kind = tier_kind(loads, nloads, s->codes[i].addr, s->codes[i].cid);
	free(loads);
	s->last = malloc((nlast ? nlast : 1) * sizeof *s->last);
	s->maxend = malloc((s->ncodes ? s->ncodes : 1) * sizeof *s->maxend);
	if (!s->last || !s->maxend)
		goto oom;
	for (size_t i = 0; i < s->ncodes; i++) {
		uint64_t end = s->codes[i].addr + s->codes[i].size;
		s->maxend[i] = i && s->maxend[i - 1] > end ? s->maxend[i - 1] : end;
		if (!s->codes[i].drop)
			s->last[s->nlast++] = s->codes[i];
	}
	return s;
oom:
	*oom = true;
	sonde_jscopes_free(s);
	return NULL;
}

/* The code a frame at a is in: for a native frame (cid < 0), the last
 * code there (s->last); for a SONDE_FRAME_JAVA_CODE frame, the code there
 * whose compile id's low 16 bits are cid (the latest such), else one whose
 * compile id is not told (the end's, JVMTI's: the latest), else none. */
static const struct code *find_code(const struct sonde_jscopes *s, uint64_t a, int cid)
{
	if (cid < 0) {
		size_t lo = PARTITION_POINT(0, s->nlast, i, s->last[i].addr <= a);
		const struct code *c = lo ? &s->last[lo - 1] : NULL;
		return c && a - c->addr < c->size ? c : NULL;
	}
	const struct code *own = NULL, *untold = NULL;
	/* back from the last code at or below a, while one may cover it */
	for (size_t j = PARTITION_POINT(0, s->ncodes, i, s->codes[i].addr <= a); j-- > 0 && s->maxend[j] > a;) {
		const struct code *c = &s->codes[j];
		if (a - c->addr >= c->size)
			continue;
		if (c->cid >= 0 && (c->cid & 0xffff) == cid) {
			if (!own || c->seq > own->seq)
				own = c;
		} else if (c->cid < 0 && (!untold || c->seq > untold->seq)) {
			untold = c;
		}
	}
	return own ? own : untold;
}

int sonde_jscopes_frames(const struct sonde_jscopes *s, const struct sonde_frame *fr, struct sonde_frame *out, int max)
{
	if (!s || !s->ncodes || !fr->pc || max < 1 ||
	    (fr->kind != SONDE_FRAME_NATIVE && fr->kind != SONDE_FRAME_JAVA_CODE))
		return 0;
	/* a return address is where its call's scope is (not pc - 1, as for
	 * a native frame's line: HotSpot records the call's scope at it) */
	uint64_t a = fr->pc;
	const struct code *c = find_code(s, a, fr->kind == SONDE_FRAME_JAVA_CODE ? fr->aux : -1);
	if (!c || !c->n)
		return 0;
	if (fr->kind == SONDE_FRAME_JAVA_CODE && fr->own) {
		/* its prologue or epilogue: the compiled method's own
		 * instructions, which every scope ends with */
		const struct scope *x = &s->scopes[c->first];
		const struct level *v = &s->levels[x->first + x->n - 1];
		out[0] = (struct sonde_frame){
			.pc = v->method, .kind = c->kind, .exact = fr->exact, .aux = SONDE_FRAME_NO_BCI, .scoped = 1
		};
		return 1;
	}
	uint32_t off = (uint32_t)(a - c->addr);
	const struct scope *sc = s->scopes + c->first;
	size_t l = 0, h = c->n;
	while (l < h) { /* the first scope whose run ends at or after off */
		size_t mid = l + (h - l) / 2;
		if (sc[mid].off < off)
			l = mid + 1;
		else
			h = mid;
	}
	if (l == c->n)
		return 0; /* past the last scope: the method's stubs */
	const struct scope *x = &sc[l];
	int n = 0;
	for (uint32_t k = 0; k < x->n && n < max; k++) {
		const struct level *v = &s->levels[x->first + k];
		out[n++] = (struct sonde_frame){
			.pc = v->method,
			.kind = k + 1 < x->n ? SONDE_FRAME_JAVA_INLINED : c->kind,
			.exact = k == 0 && fr->exact,
			.aux = v->bci,
			.scoped = 1,
		};
	}
	return n;
}
