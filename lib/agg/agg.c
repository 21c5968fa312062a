/*
 * agg: DTrace aggregations (see agg.h).
 *
 * Storage.  An aggregation keeps its elements in one array of fixed-size
 * records of 64-bit words:
 *
 *	w[0]                hash of the key (low 32 bits) | flags << 32
 *	w[1]                key column types, 4 bits each
 *	w[2 .. 2+nkeys)     key values (integers, or interned string pointers)
 *	w[2+nkeys ...]      the value record, DTrace's layout (agg.h)
 *
 * and finds them through an open-addressing table of record indexes
 * (linear probing, at most half full).  The keyless aggregation (@ = ...)
 * has at most one element and no table.  The element updated last is
 * checked before hashing, which makes runs of one key cheap.
 *
 * Strings are interned per set so that keys compare and hash as integers.
 */
#define _GNU_SOURCE
#include "base/grow.h"
#include "agg/agg.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define F_CLEARED 1u /* min/max: zeroed by clear(), no value since */

#define HDR_WORDS 2

/* ---- the set and its strings -------------------------------------------- */

struct strent {
	const char *s;
	uint32_t len, hash;
};

struct strchunk {
	struct strchunk *next;
	char data[];
};

struct sonde_aggset {
	struct sonde_agg **aggs;
	size_t naggs, capaggs;

	struct strent *str;
	size_t nstr, strcap; /* strcap: power of two */
	struct strchunk *chunks;
	char *cur;
	size_t left;
};

struct sonde_agg {
	struct sonde_aggset *set;
	unsigned id;
	char *name;
	enum sonde_agg_func func;
	uint64_t param;
	unsigned nkeys;
	size_t nwords;
	size_t recwords; /* HDR_WORDS + nkeys + nwords */

	uint64_t *recs;
	size_t nelem, capelem;
	uint32_t *table; /* record index + 1, 0 = empty */
	size_t tcap;	 /* power of two, 0 without a table */
	size_t last;	 /* index + 1 of the element updated last, 0 none */

	int64_t normal;
	bool printed;

	/* llquantize: parameters and bucket labels (nwords - 1 of them) */
	unsigned factor, low, high, steps;
	int64_t *labels;
};

static void seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;

		memcpy(&w, s, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 29));
}

struct sonde_aggset *sonde_aggset_new(void)
{
	struct sonde_aggset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->strcap = 64;
	set->str = calloc(set->strcap, sizeof(*set->str));
	if (!set->str) {
		free(set);
		return NULL;
	}
	return set;
}

static void agg_free(struct sonde_agg *a)
{
	if (!a)
		return;
	free(a->name);
	free(a->recs);
	free(a->table);
	free(a->labels);
	free(a);
}

void sonde_aggset_free(struct sonde_aggset *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->naggs; i++)
		agg_free(set->aggs[i]);
	free(set->aggs);
	free(set->str);
	while (set->chunks) {
		struct strchunk *c = set->chunks;

		set->chunks = c->next;
		free(c);
	}
	free(set);
}

static char *str_alloc(struct sonde_aggset *set, size_t n)
{
	if (n > set->left) {
		size_t sz = n > 65536 ? n : 65536;
		struct strchunk *c = malloc(sizeof(*c) + sz);

		if (!c)
			return NULL;
		c->next = set->chunks;
		set->chunks = c;
		set->cur = c->data;
		set->left = sz;
	}
	char *p = set->cur;

	set->cur += n;
	set->left -= n;
	return p;
}

static int str_grow(struct sonde_aggset *set)
{
	size_t cap = set->strcap * 2;
	struct strent *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < set->strcap; i++) {
		if (!set->str[i].s)
			continue;
		size_t j = set->str[i].hash & (cap - 1);

		while (t[j].s)
			j = (j + 1) & (cap - 1);
		t[j] = set->str[i];
	}
	free(set->str);
	set->str = t;
	set->strcap = cap;
	return 0;
}

const char *sonde_aggset_intern(struct sonde_aggset *set, const char *s, size_t len)
{
	if (len > UINT32_MAX - 1)
		return NULL;
	uint32_t h = hash_bytes(s, len);
	size_t mask = set->strcap - 1, j = h & mask;

	for (; set->str[j].s; j = (j + 1) & mask)
		if (set->str[j].hash == h && set->str[j].len == len && !memcmp(set->str[j].s, s, len))
			return set->str[j].s;
	if ((set->nstr + 1) * 2 > set->strcap) {
		if (str_grow(set))
			return NULL;
		mask = set->strcap - 1;
		for (j = h & mask; set->str[j].s; j = (j + 1) & mask)
			;
	}
	char *p = str_alloc(set, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	set->str[j].s = p;
	set->str[j].len = (uint32_t)len;
	set->str[j].hash = h;
	set->nstr++;
	return p;
}

/* ---- parameters ------------------------------------------------------------ */

static const char *const func_names[] = {
	[SONDE_AGG_COUNT] = "count",	   [SONDE_AGG_MIN] = "min",
	[SONDE_AGG_MAX] = "max",	   [SONDE_AGG_AVG] = "avg",
	[SONDE_AGG_SUM] = "sum",	   [SONDE_AGG_STDDEV] = "stddev",
	[SONDE_AGG_QUANTIZE] = "quantize", [SONDE_AGG_LQUANTIZE] = "lquantize",
	[SONDE_AGG_LLQUANTIZE] = "llquantize",
};

const char *sonde_agg_func_name(enum sonde_agg_func func)
{
	if ((unsigned)func < sizeof(func_names) / sizeof(func_names[0]) && func_names[func])
		return func_names[func];
	return "?";
}

/* factor^e, or 0 when it exceeds INT64_MAX. */
static uint64_t ipow(uint64_t factor, unsigned e)
{
	uint64_t v = 1;

	while (e--) {
		if (v > (uint64_t)INT64_MAX / factor)
			return 0;
		v *= factor;
	}
	return v;
}

/* Encodes valid lquantize arguments, or returns -1 with DTrace's reason. */
static int lquantize_param(const int64_t *args, int nargs, uint64_t *param, char *err, size_t errlen)
{
	int64_t base, limit, step = 1, levels;

	if (nargs < 2 || nargs > 3) {
		seterr(err, errlen, "lquantize() takes a base, a limit and an optional step");
		return -1;
	}
	base = args[0];
	limit = args[1];
	if (base < INT32_MIN || base > INT32_MAX) {
		seterr(err, errlen, "lquantize() argument #1 must be a 32-bit quantity");
		return -1;
	}
	if (limit < INT32_MIN || limit > INT32_MAX) {
		seterr(err, errlen, "lquantize() argument #2 must be a 32-bit quantity");
		return -1;
	}
	if (limit < base) {
		seterr(err, errlen,
		       "lquantize() base (argument #1) must be less than limit (argument #2)");
		return -1;
	}
	if (nargs == 3) {
		step = args[2];
		if (step <= 0) {
			seterr(err, errlen,
			       "lquantize() argument #3 must be a non-zero positive integer constant");
			return -1;
		}
		if (step > UINT16_MAX) {
			seterr(err, errlen, "lquantize() argument #3 must be a 16-bit quantity");
			return -1;
		}
	}
	levels = (limit - base) / step;
	if (levels == 0) {
		seterr(err, errlen,
		       "lquantize() step (argument #3) too large: must have at least one "
		       "quantization level");
		return -1;
	}
	if (levels > UINT16_MAX) {
		seterr(err, errlen,
		       "lquantize() step (argument #3) too small: number of quantization levels "
		       "must be a 16-bit quantity");
		return -1;
	}
	*param = DTRACE_LQUANTIZE_ENCODE(base, levels, step);
	return 0;
}

static const char *const llq_argname[] = { "factor", "low magnitude", "high magnitude",
					   "linear steps per magnitude" };

static int llquantize_param(const int64_t *args, int nargs, uint64_t *param, char *err,
			    size_t errlen)
{
	uint64_t v[4], p;

	if (nargs != 4) {
		seterr(err, errlen,
		       "llquantize() takes a factor, a low magnitude, a high magnitude and a "
		       "number of steps");
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if ((uint64_t)args[i] > UINT16_MAX) {
			seterr(err, errlen,
			       "llquantize() argument #%d (%s) must be an unsigned 16-bit quantity",
			       i + 1, llq_argname[i]);
			return -1;
		}
		v[i] = (uint64_t)args[i];
	}
	if (v[0] < 2) {
		seterr(err, errlen, "llquantize() factor (argument #1) must be two or more");
		return -1;
	}
	if (v[1] >= v[2]) {
		seterr(err, errlen,
		       "llquantize() high magnitude (argument #3) must be greater than low "
		       "magnitude (argument #2)");
		return -1;
	}
	if (v[3] < v[0]) {
		seterr(err, errlen,
		       "llquantize() factor (argument #1) must be less than or equal to the number "
		       "of linear steps per magnitude (argument #4)");
		return -1;
	}
	for (p = v[0]; p < v[3]; p *= v[0])
		;
	if (v[3] % v[0] || p % v[3]) {
		seterr(err, errlen,
		       "llquantize() factor (argument #1) must evenly divide the number of steps "
		       "per magnitude (argument #4), and the number of steps per magnitude must "
		       "evenly divide a power of the factor");
		return -1;
	}
	/* factor^(high+1) must be a signed 64-bit value, so that the overflow
	 * bucket's label exists (DTrace implementations differ here; this is
	 * sonde's choice, doc/sonde-agg.md). */
	if (!ipow(v[0], (unsigned)v[2] + 1)) {
		seterr(err, errlen,
		       "llquantize() factor (%u) raised to power of high magnitude (%u) plus 1 "
		       "overflows 64-bits",
		       (unsigned)v[0], (unsigned)v[2]);
		return -1;
	}
	*param = DTRACE_LLQUANTIZE_ENCODE(v[0], v[1], v[2], v[3]);
	return 0;
}

unsigned sonde_agg_llquantize_nbuckets(uint64_t param)
{
	unsigned factor = DTRACE_LLQUANTIZE_FACTOR(param), low = DTRACE_LLQUANTIZE_LMAG(param);
	unsigned high = DTRACE_LLQUANTIZE_HMAG(param), steps = DTRACE_LLQUANTIZE_STEPS(param);
	unsigned nb = 2;
	uint64_t this = ipow(factor, low + 1);

	for (unsigned order = low; order <= high; order++) {
		uint64_t m = this > steps ? steps : this;

		nb += (unsigned)(m - m / factor);
		if (order < high)
			this *= factor;
	}
	return nb;
}

/*
 * Labels of the llquantize rows, walked as DTrace's printer walks them:
 * labels[0] = factor^low (printed "< N"), labels[b] the lowest value of
 * bucket b, labels[nb-1] = factor^(high+1) (printed ">= N").
 */
static void llq_labels(uint64_t param, int64_t *labels, unsigned nb)
{
	unsigned factor = DTRACE_LLQUANTIZE_FACTOR(param), low = DTRACE_LLQUANTIZE_LMAG(param);
	unsigned high = DTRACE_LLQUANTIZE_HMAG(param), steps = DTRACE_LLQUANTIZE_STEPS(param);
	uint64_t value = ipow(factor, low), next = value * factor;
	uint64_t step = next > steps ? next / steps : 1;
	unsigned order = low, bin = 1;

	labels[0] = (int64_t)value;
	while (order <= high && bin < nb - 1) {
		labels[bin++] = (int64_t)value;
		value += step;
		if (value != next)
			continue;
		if (++order > high)
			break;
		next = value * factor;
		step = next > steps ? next / steps : 1;
	}
	labels[nb - 1] = (int64_t)value;
}

/* ---- creation ---------------------------------------------------------------- */

struct sonde_agg *sonde_agg_create(struct sonde_aggset *set, const char *name,
				   enum sonde_agg_func func, const int64_t *args, int nargs,
				   unsigned nkeys, char *err, size_t errlen)
{
	uint64_t param = 0;
	size_t nwords;

	if (nkeys > SONDE_AGG_MAX_KEYS) {
		seterr(err, errlen, "too many keys (%u): at most %d", nkeys, SONDE_AGG_MAX_KEYS);
		return NULL;
	}
	switch (func) {
	case SONDE_AGG_COUNT:
	case SONDE_AGG_MIN:
	case SONDE_AGG_MAX:
	case SONDE_AGG_SUM:
		nwords = 1;
		break;
	case SONDE_AGG_AVG:
		nwords = 2;
		break;
	case SONDE_AGG_STDDEV:
		nwords = 4;
		break;
	case SONDE_AGG_QUANTIZE:
		nwords = DTRACE_QUANTIZE_NBUCKETS;
		break;
	case SONDE_AGG_LQUANTIZE:
		if (lquantize_param(args, nargs, &param, err, errlen))
			return NULL;
		nwords = (size_t)DTRACE_LQUANTIZE_LEVELS(param) + 3;
		break;
	case SONDE_AGG_LLQUANTIZE:
		if (llquantize_param(args, nargs, &param, err, errlen))
			return NULL;
		nwords = (size_t)sonde_agg_llquantize_nbuckets(param) + 1;
		break;
	default:
		seterr(err, errlen, "unknown aggregating function %d", (int)func);
		return NULL;
	}
	if (func != SONDE_AGG_LQUANTIZE && func != SONDE_AGG_LLQUANTIZE && nargs != 0) {
		seterr(err, errlen, "%s() takes no parameters", sonde_agg_func_name(func));
		return NULL;
	}

	struct sonde_agg *a = calloc(1, sizeof(*a));

	if (!a)
		goto oom;
	a->set = set;
	a->name = strdup(name ? name : "");
	a->func = func;
	a->param = param;
	a->nkeys = nkeys;
	a->nwords = nwords;
	a->recwords = HDR_WORDS + nkeys + nwords;
	a->normal = 1;
	if (!a->name)
		goto oom;
	if (func == SONDE_AGG_LLQUANTIZE) {
		a->factor = DTRACE_LLQUANTIZE_FACTOR(param);
		a->low = DTRACE_LLQUANTIZE_LMAG(param);
		a->high = DTRACE_LLQUANTIZE_HMAG(param);
		a->steps = DTRACE_LLQUANTIZE_STEPS(param);
		a->labels = malloc((nwords - 1) * sizeof(*a->labels));
		if (!a->labels)
			goto oom;
		llq_labels(param, a->labels, (unsigned)(nwords - 1));
	}
	if (sonde_grow(&set->aggs, &set->capaggs, set->naggs + 1, sizeof(*set->aggs), 8))
		goto oom;
	a->id = (unsigned)set->naggs;
	set->aggs[set->naggs++] = a;
	return a;
oom:
	agg_free(a);
	seterr(err, errlen, "out of memory");
	return NULL;
}

int sonde_agg_check_match(const struct sonde_agg *a, enum sonde_agg_func func,
			  const int64_t *args, int nargs, char *err, size_t errlen)
{
	uint64_t param = 0;

	if (func != a->func) {
		seterr(err, errlen, "aggregation @%s is %s(), not %s()", a->name,
		       sonde_agg_func_name(a->func), sonde_agg_func_name(func));
		return -1;
	}
	if (func == SONDE_AGG_LQUANTIZE) {
		if (lquantize_param(args, nargs, &param, err, errlen))
			return -1;
		if (param == a->param)
			return 0;
		int ob = DTRACE_LQUANTIZE_BASE(a->param), b = DTRACE_LQUANTIZE_BASE(param);
		int ol = DTRACE_LQUANTIZE_LEVELS(a->param), l = DTRACE_LQUANTIZE_LEVELS(param);
		int os = DTRACE_LQUANTIZE_STEP(a->param), s = DTRACE_LQUANTIZE_STEP(param);

		if (ob != b)
			seterr(err, errlen,
			       "lquantize() base (argument #1) doesn't match previous declaration: "
			       "expected %d, found %d",
			       ob, b);
		else if (ol * os != l * s)
			seterr(err, errlen,
			       "lquantize() limit (argument #2) doesn't match previous declaration: "
			       "expected %d, found %d",
			       ob + ol * os, b + l * s);
		else
			seterr(err, errlen,
			       "lquantize() step (argument #3) doesn't match previous declaration: "
			       "expected %d, found %d",
			       os, s);
		return -1;
	}
	if (func == SONDE_AGG_LLQUANTIZE) {
		if (llquantize_param(args, nargs, &param, err, errlen))
			return -1;
		if (param == a->param)
			return 0;
		static const int shift[] = { DTRACE_LLQUANTIZE_FACTORSHIFT, DTRACE_LLQUANTIZE_LMAGSHIFT,
					     DTRACE_LLQUANTIZE_HMAGSHIFT,
					     DTRACE_LLQUANTIZE_STEPSSHIFT };

		for (int i = 0; i < 4; i++) {
			unsigned e = (unsigned)(a->param >> shift[i]) & 0xffff;
			unsigned f = (unsigned)(param >> shift[i]) & 0xffff;

			if (e != f) {
				seterr(err, errlen,
				       "llquantize() %s (argument #%d) doesn't match previous "
				       "declaration: expected %u, found %u",
				       llq_argname[i], i + 1, e, f);
				break;
			}
		}
		return -1;
	}
	return 0;
}

enum sonde_agg_func sonde_agg_func(const struct sonde_agg *a)
{
	return a->func;
}

size_t sonde_agg_nwords(const struct sonde_agg *a)
{
	return a->nwords;
}

uint64_t sonde_agg_param(const struct sonde_agg *a)
{
	return a->param;
}

size_t sonde_agg_nelems(const struct sonde_agg *a)
{
	return a->nelem;
}

/* ---- buckets ------------------------------------------------------------------- */

static inline unsigned bitlen(uint64_t u)
{
	return u ? 64u - (unsigned)__builtin_clzll(u) : 0;
}

unsigned sonde_agg_quantize_bucket(int64_t v)
{
	if (v > 0) {
		unsigned b = bitlen((uint64_t)v);

		return DTRACE_QUANTIZE_ZEROBUCKET + (b < 63 ? b : 63);
	}
	if (v < 0) {
		unsigned b = bitlen(0 - (uint64_t)v); /* INT64_MIN: 2^63, 64 bits */

		return DTRACE_QUANTIZE_ZEROBUCKET - (b < 63 ? b : 63);
	}
	return DTRACE_QUANTIZE_ZEROBUCKET;
}

unsigned sonde_agg_lquantize_bucket(uint64_t param, int64_t v)
{
	int64_t base = DTRACE_LQUANTIZE_BASE(param);
	uint64_t levels = DTRACE_LQUANTIZE_LEVELS(param), step = DTRACE_LQUANTIZE_STEP(param);

	/* Full 64-bit comparison: 2^32 + 5 is overflow, not 5 (some DTraces
	 * truncate to 32 bits; doc/sonde-agg.md). */
	if (v < base)
		return 0;
	uint64_t level = ((uint64_t)v - (uint64_t)base) / step;

	return level < levels ? (unsigned)level + 1 : (unsigned)levels + 1;
}

static unsigned llq_bucket(unsigned factor, unsigned low, unsigned high, unsigned steps, int64_t v)
{
	uint64_t this = ipow(factor, low), last, base = 1;

	if (v < (int64_t)this)
		return 0;
	uint64_t u = (uint64_t)v;

	last = this;
	this *= factor;
	for (unsigned order = low; order <= high; order++) {
		uint64_t nb = this > steps ? steps : this;

		if (u < this)
			return (unsigned)(base + (u - last) / (this / nb));
		base += nb - nb / factor;
		last = this;
		if (order < high) /* factor^(high+1) <= INT64_MAX: no overflow */
			this *= factor;
	}
	return (unsigned)base;
}

unsigned sonde_agg_llquantize_bucket(uint64_t param, int64_t v)
{
	return llq_bucket(DTRACE_LLQUANTIZE_FACTOR(param), DTRACE_LLQUANTIZE_LMAG(param),
			  DTRACE_LLQUANTIZE_HMAG(param), DTRACE_LLQUANTIZE_STEPS(param), v);
}

/* ---- elements ------------------------------------------------------------------- */

static inline uint64_t key_word(const struct sonde_agg_key *k)
{
	return k->type == SONDE_AGG_KEY_STR ? (uint64_t)(uintptr_t)k->s : (uint64_t)k->i;
}

static inline uint64_t types_word(const struct sonde_agg_key *keys, unsigned n)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < n; i++)
		t |= (uint64_t)(keys[i].type & 0xf) << (4 * i);
	return t;
}

static inline uint32_t key_hash(uint64_t types, const struct sonde_agg_key *keys, unsigned n)
{
	uint64_t h = types * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < n; i++) {
		h ^= key_word(&keys[i]);
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

static inline uint64_t *rec_at(const struct sonde_agg *a, size_t i)
{
	return a->recs + i * a->recwords;
}

static inline int64_t *rec_data(const struct sonde_agg *a, uint64_t *r)
{
	return (int64_t *)(r + HDR_WORDS + a->nkeys);
}

static inline bool rec_matches(const struct sonde_agg *a, const uint64_t *r, uint32_t h,
			       uint64_t types, const struct sonde_agg_key *keys)
{
	if ((uint32_t)r[0] != h || r[1] != types)
		return false;
	for (unsigned i = 0; i < a->nkeys; i++)
		if (r[HDR_WORDS + i] != key_word(&keys[i]))
			return false;
	return true;
}

static void record_init(const struct sonde_agg *a, int64_t *d)
{
	memset(d, 0, a->nwords * sizeof(*d));
	switch (a->func) {
	case SONDE_AGG_MIN:
		d[0] = INT64_MAX;
		break;
	case SONDE_AGG_MAX:
		d[0] = INT64_MIN;
		break;
	case SONDE_AGG_LQUANTIZE:
	case SONDE_AGG_LLQUANTIZE:
		d[0] = (int64_t)a->param;
		break;
	default:
		break;
	}
}

static void table_fill(struct sonde_agg *a, uint32_t *t, size_t cap)
{
	for (size_t i = 0; i < a->nelem; i++) {
		size_t j = (uint32_t)rec_at(a, i)[0] & (cap - 1);

		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)(i + 1);
	}
	free(a->table);
	a->table = t;
	a->tcap = cap;
}

static int table_rebuild(struct sonde_agg *a, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	table_fill(a, t, cap);
	return 0;
}

/* Finds the element of keys; creates it (initial record) when create is
 * set.  Returns its index, or SIZE_MAX (absent, or out of memory). */
static size_t elem_find(struct sonde_agg *a, const struct sonde_agg_key *keys, bool create,
			bool *created)
{
	if (created)
		*created = false;
	if (a->nkeys == 0) {
		if (a->nelem)
			return 0;
		if (!create)
			return SIZE_MAX;
	}
	uint64_t types = a->nkeys ? types_word(keys, a->nkeys) : 0;
	uint32_t h = a->nkeys ? key_hash(types, keys, a->nkeys) : 0;

	if (a->last && rec_matches(a, rec_at(a, a->last - 1), h, types, keys))
		return a->last - 1;
	size_t j = 0;

	if (a->tcap) {
		size_t mask = a->tcap - 1;

		for (j = h & mask; a->table[j]; j = (j + 1) & mask) {
			size_t i = a->table[j] - 1;

			if (rec_matches(a, rec_at(a, i), h, types, keys)) {
				a->last = i + 1;
				return i;
			}
		}
	}
	if (!create)
		return SIZE_MAX;
	if (a->nelem >= UINT32_MAX - 1)
		return SIZE_MAX;
	if (sonde_grow(&a->recs, &a->capelem, a->nelem + 1, a->recwords * sizeof(*a->recs), a->nkeys ? 16 : 1))
		return SIZE_MAX;
	if (a->nkeys && (a->nelem + 1) * 2 > a->tcap) {
		if (table_rebuild(a, a->tcap ? a->tcap * 2 : 32))
			return SIZE_MAX;
		size_t mask = a->tcap - 1;

		for (j = h & mask; a->table[j]; j = (j + 1) & mask)
			;
	}
	size_t i = a->nelem++;
	uint64_t *r = rec_at(a, i);

	r[0] = h;
	r[1] = types;
	for (unsigned k = 0; k < a->nkeys; k++)
		r[HDR_WORDS + k] = key_word(&keys[k]);
	record_init(a, rec_data(a, r));
	if (a->nkeys)
		a->table[j] = (uint32_t)(i + 1);
	a->last = i + 1;
	if (created)
		*created = true;
	return i;
}

static inline void add128(int64_t *d, u128 x)
{
	u128 s = ((u128)(uint64_t)d[1] << 64 | (uint64_t)d[0]) + x;

	d[0] = (int64_t)(uint64_t)s;
	d[1] = (int64_t)(uint64_t)(s >> 64);
}

static inline void apply(struct sonde_agg *a, uint64_t *r, int64_t v, int64_t incr)
{
	int64_t *d = rec_data(a, r);
	uint64_t *u = (uint64_t *)d;

	switch (a->func) {
	case SONDE_AGG_COUNT:
		u[0]++;
		break;
	case SONDE_AGG_SUM:
		u[0] += (uint64_t)v;
		break;
	case SONDE_AGG_MIN:
		if (r[0] >> 32 & F_CLEARED) {
			d[0] = v;
			r[0] &= UINT32_MAX;
		} else if (v < d[0]) {
			d[0] = v;
		}
		break;
	case SONDE_AGG_MAX:
		if (r[0] >> 32 & F_CLEARED) {
			d[0] = v;
			r[0] &= UINT32_MAX;
		} else if (v > d[0]) {
			d[0] = v;
		}
		break;
	case SONDE_AGG_AVG:
		u[0]++;
		u[1] += (uint64_t)v;
		break;
	case SONDE_AGG_STDDEV: {
		uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

		u[0]++;
		u[1] += (uint64_t)v;
		add128(d + 2, (u128)m * m);
		break;
	}
	case SONDE_AGG_QUANTIZE:
		u[sonde_agg_quantize_bucket(v)] += (uint64_t)incr;
		break;
	case SONDE_AGG_LQUANTIZE:
		u[1 + sonde_agg_lquantize_bucket(a->param, v)] += (uint64_t)incr;
		break;
	case SONDE_AGG_LLQUANTIZE:
		u[1 + llq_bucket(a->factor, a->low, a->high, a->steps, v)] += (uint64_t)incr;
		break;
	}
}

int sonde_agg_update(struct sonde_agg *a, const struct sonde_agg_key *keys, int64_t value,
		     int64_t incr)
{
	size_t i = elem_find(a, keys, true, NULL);

	if (i == SIZE_MAX)
		return -1;
	apply(a, rec_at(a, i), value, incr);
	return 0;
}

const int64_t *sonde_agg_lookup(const struct sonde_agg *a, const struct sonde_agg_key *keys)
{
	size_t i = elem_find((struct sonde_agg *)a, keys, false, NULL);

	return i == SIZE_MAX ? NULL : rec_data(a, rec_at(a, i));
}

static void rec_keys(const struct sonde_agg *a, const uint64_t *r, struct sonde_agg_key *keys)
{
	for (unsigned k = 0; k < a->nkeys; k++) {
		keys[k].type = (enum sonde_agg_keytype)(r[1] >> (4 * k) & 0xf);
		if (keys[k].type == SONDE_AGG_KEY_STR)
			keys[k].s = (const char *)(uintptr_t)r[HDR_WORDS + k];
		else
			keys[k].i = (int64_t)r[HDR_WORDS + k];
	}
}

const int64_t *sonde_agg_elem(const struct sonde_agg *a, size_t i, struct sonde_agg_key *keys)
{
	if (i >= a->nelem)
		return NULL;
	uint64_t *r = rec_at(a, i);

	if (keys)
		rec_keys(a, r, keys);
	return rec_data(a, r);
}

/* ---- merge, clear, trunc, normalize ------------------------------------------------ */

int sonde_agg_merge(struct sonde_agg *dst, const struct sonde_agg *src, char *err, size_t errlen)
{
	struct sonde_agg_key keys[SONDE_AGG_MAX_KEYS];

	if (dst->func != src->func || dst->param != src->param || dst->nkeys != src->nkeys) {
		seterr(err, errlen,
		       "cannot merge @%s (%s(), %u keys) into @%s (%s(), %u keys): they differ",
		       src->name, sonde_agg_func_name(src->func), src->nkeys, dst->name,
		       sonde_agg_func_name(dst->func), dst->nkeys);
		return -1;
	}
	for (size_t i = 0; i < src->nelem; i++) {
		const uint64_t *sr = rec_at(src, i);
		const int64_t *s = rec_data(src, (uint64_t *)sr);
		bool created;

		rec_keys(src, sr, keys);
		if (src->set != dst->set)
			for (unsigned k = 0; k < src->nkeys; k++)
				if (keys[k].type == SONDE_AGG_KEY_STR &&
				    !(keys[k].s = sonde_aggset_intern(dst->set, keys[k].s,
								      strlen(keys[k].s))))
					goto oom;
		size_t j = elem_find(dst, keys, true, &created);

		if (j == SIZE_MAX)
			goto oom;
		uint64_t *dr = rec_at(dst, j);
		int64_t *d = rec_data(dst, dr);
		uint64_t *du = (uint64_t *)d;
		const uint64_t *su = (const uint64_t *)s;
		bool s_clr = sr[0] >> 32 & F_CLEARED, d_clr = dr[0] >> 32 & F_CLEARED;

		if (created) {
			memcpy(d, s, dst->nwords * sizeof(*d));
			dr[0] = (uint32_t)dr[0] | (sr[0] >> 32 << 32);
			continue;
		}
		switch (dst->func) {
		case SONDE_AGG_MIN:
		case SONDE_AGG_MAX:
			if (s_clr)
				break;
			if (d_clr || (dst->func == SONDE_AGG_MIN ? s[0] < d[0] : s[0] > d[0]))
				d[0] = s[0];
			dr[0] &= UINT32_MAX;
			break;
		case SONDE_AGG_STDDEV:
			du[0] += su[0];
			du[1] += su[1];
			add128(d + 2, (u128)su[3] << 64 | su[2]); /* with its carry: a true 128-bit sum */
			break;
		case SONDE_AGG_LQUANTIZE:
		case SONDE_AGG_LLQUANTIZE:
			for (size_t w = 1; w < dst->nwords; w++)
				du[w] += su[w];
			break;
		default:
			for (size_t w = 0; w < dst->nwords; w++)
				du[w] += su[w];
			break;
		}
	}
	return 0;
oom:
	seterr(err, errlen, "out of memory");
	return -1;
}

void sonde_agg_clear(struct sonde_agg *a)
{
	for (size_t i = 0; i < a->nelem; i++) {
		uint64_t *r = rec_at(a, i);
		int64_t *d = rec_data(a, r);
		size_t from = a->func == SONDE_AGG_LQUANTIZE || a->func == SONDE_AGG_LLQUANTIZE;

		memset(d + from, 0, (a->nwords - from) * sizeof(*d));
		if (a->func == SONDE_AGG_MIN || a->func == SONDE_AGG_MAX)
			r[0] |= (uint64_t)F_CLEARED << 32;
	}
}

int sonde_agg_normalize(struct sonde_agg *a, int64_t n)
{
	if (n == 0)
		return -1;
	a->normal = n;
	return 0;
}

void sonde_agg_denormalize(struct sonde_agg *a)
{
	a->normal = 1;
}

int64_t sonde_agg_normal(const struct sonde_agg *a)
{
	return a->normal;
}

/* ---- value arithmetic ------------------------------------------------------------ */

/* C division truncating toward zero, b != 0, without the INT64_MIN / -1 trap. */
static inline int64_t sdiv(int64_t a, int64_t b)
{
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}

int64_t sonde_agg_avg_value(const int64_t *d, int64_t normal)
{
	return d[0] ? sdiv(sdiv(d[1], normal), d[0]) : 0;
}

static uint64_t isqrt128(u128 x)
{
	u128 res = 0, bit = (u128)1 << 126;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= res + bit) {
			x -= res + bit;
			res = (res >> 1) + bit;
		} else {
			res >>= 1;
		}
		bit >>= 2;
	}
	return (uint64_t)res;
}

uint64_t sonde_agg_stddev_value(const int64_t *d, int64_t normal)
{
	if (d[0] == 0)
		return 0;
	/* illumos dt_stddev(): floor divisions by normal twice (Σv² / normal²) and by
	 * the count; the mean is truncated before it is squared. */
	uint64_t un = normal < 0 ? 0 - (uint64_t)normal : (uint64_t)normal;
	u128 aos = ((u128)(uint64_t)d[3] << 64) | (uint64_t)d[2];

	aos = aos / un / un / (uint64_t)d[0];
	int64_t m = sdiv(sdiv(d[1], normal), d[0]);
	uint64_t um = m < 0 ? 0 - (uint64_t)m : (uint64_t)m;

	return isqrt128(aos - (u128)um * um);
}

/* ---- comparisons ------------------------------------------------------------------ */

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

static int lq_cmp(const int64_t *l, const int64_t *r)
{
	uint64_t param = (uint64_t)l[0];
	int64_t base0 = DTRACE_LQUANTIZE_BASE(param), step = DTRACE_LQUANTIZE_STEP(param);
	unsigned levels = DTRACE_LQUANTIZE_LEVELS(param);
	const int64_t *lq = l + 1, *rq = r + 1;
	int64_t base = base0;
	long double lt = (long double)lq[0] * (long double)(base - 1);
	long double rt = (long double)rq[0] * (long double)(base - 1);

	for (unsigned i = 0; i < levels; base += step, i++) {
		lt += (long double)lq[i + 1] * (long double)base;
		rt += (long double)rq[i + 1] * (long double)base;
	}
	lt += (long double)lq[levels + 1] * (long double)(base + 1);
	rt += (long double)rq[levels + 1] * (long double)(base + 1);
	if (lt != rt)
		return lt < rt ? -1 : 1;

	/* tie: the count at the bucket holding zero */
	int zi = -1;

	base = base0;
	if (base - 1 == 0)
		zi = 0;
	for (unsigned i = 0; zi < 0 && i < levels; base += step, i++)
		if (base == 0)
			zi = (int)i + 1;
	if (zi < 0 && base + 1 == 0)
		zi = (int)levels + 1;
	return zi < 0 ? 0 : CMP(lq[zi], rq[zi]);
}

static int llq_cmp(const struct sonde_agg *a, const int64_t *l, const int64_t *r)
{
	size_t nb = a->nwords - 1;
	const int64_t *lq = l + 1, *rq = r + 1;
	long double lt = (long double)lq[0] * (long double)(a->labels[0] - 1);
	long double rt = (long double)rq[0] * (long double)(a->labels[0] - 1);

	for (size_t b = 1; b < nb; b++) {
		lt += (long double)lq[b] * (long double)a->labels[b];
		rt += (long double)rq[b] * (long double)a->labels[b];
	}
	if (lt != rt)
		return lt < rt ? -1 : 1;
	return CMP(lq[0], rq[0]);
}

static int val_cmp(const struct sonde_agg *a, const int64_t *l, const int64_t *r)
{
	switch (a->func) {
	case SONDE_AGG_AVG: {
		int64_t la = l[0] ? sdiv(l[1], l[0]) : 0, ra = r[0] ? sdiv(r[1], r[0]) : 0;

		return CMP(la, ra);
	}
	case SONDE_AGG_STDDEV: {
		uint64_t ls = sonde_agg_stddev_value(l, 1), rs = sonde_agg_stddev_value(r, 1);

		return CMP(ls, rs);
	}
	case SONDE_AGG_QUANTIZE: {
		long double lt = 0, rt = 0;

		for (int i = 0; i < DTRACE_QUANTIZE_NBUCKETS; i++) {
			long double bv = (long double)DTRACE_QUANTIZE_BUCKETVAL(i);

			lt += bv * (long double)l[i];
			rt += bv * (long double)r[i];
		}
		if (lt != rt)
			return lt < rt ? -1 : 1;
		return CMP(l[DTRACE_QUANTIZE_ZEROBUCKET], r[DTRACE_QUANTIZE_ZEROBUCKET]);
	}
	case SONDE_AGG_LQUANTIZE:
		return lq_cmp(l, r);
	case SONDE_AGG_LLQUANTIZE:
		return llq_cmp(a, l, r);
	default:
		return CMP(l[0], r[0]);
	}
}

/* Key order (illumos dt_aggregate_keycmp): per column, narrower records
 * first; integers as unsigned numbers of their width, strings bytewise. */
static const unsigned key_size[] = { 8, 4, 2, 1, 256 };

static int key_col_cmp(const uint64_t *l, const uint64_t *r, unsigned k)
{
	unsigned tl = (unsigned)(l[1] >> (4 * k) & 0xf), tr = (unsigned)(r[1] >> (4 * k) & 0xf);
	uint64_t vl = l[HDR_WORDS + k], vr = r[HDR_WORDS + k];

	if (key_size[tl] != key_size[tr])
		return key_size[tl] < key_size[tr] ? -1 : 1;
	switch (tl) {
	case SONDE_AGG_KEY_STR:
		if (vl == vr)
			return 0;
		int c = strcmp((const char *)(uintptr_t)vl, (const char *)(uintptr_t)vr);

		return c < 0 ? -1 : c > 0;
	case SONDE_AGG_KEY_I32:
		return CMP((uint32_t)vl, (uint32_t)vr);
	case SONDE_AGG_KEY_I16:
		return CMP((uint16_t)vl, (uint16_t)vr);
	case SONDE_AGG_KEY_I8:
		return CMP((uint8_t)vl, (uint8_t)vr);
	default:
		return CMP(vl, vr);
	}
}

static int key_cmp(const uint64_t *l, const uint64_t *r, unsigned nkeys, unsigned keypos)
{
	if (keypos >= nkeys)
		keypos = 0;
	for (unsigned n = 0; n < nkeys; n++) {
		int c = key_col_cmp(l, r, (keypos + n) % nkeys);

		if (c)
			return c;
	}
	return 0;
}

/* ---- printing -------------------------------------------------------------------- */

static const char ats40[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
static const char sp40[] = "                                        ";

/* Bar length: round half up of |count| * len / total. */
static unsigned depth(uint64_t count, unsigned len, u128 total)
{
	return (unsigned)(((u128)2 * count * len + total) / (2 * total));
}

static void quantline(FILE *f, int64_t val, int64_t normal, u128 total, bool positives,
		      bool negatives)
{
	uint64_t mag = val < 0 ? 0 - (uint64_t)val : (uint64_t)val;
	long long shown = (long long)sdiv(val, normal);
	unsigned d;

	if (!negatives) {
		d = positives ? depth(mag, 40, total) : 0;
		fprintf(f, "|%s%s %-9lld\n", ats40 + 40 - d, sp40 + d, shown);
		return;
	}
	if (!positives) {
		d = depth(mag, 40, total);
		fprintf(f, "%s%s| %-9lld\n", sp40 + d, ats40 + 40 - d, shown);
		return;
	}
	d = depth(mag, 20, total);
	if (val <= 0)
		fprintf(f, "%s%s|%20s %-9lld\n", sp40 + 20 + d, ats40 + 40 - d, "", shown);
	else
		fprintf(f, "%20s|%s%s %-9lld\n", "", ats40 + 40 - d, sp40 + 20 + d, shown);
}

/* First and last rows to print of buckets q[0..n-1]: one zero row around
 * the non-zero ones; [nf, nl] when all are zero. */
static void trim(const int64_t *q, size_t n, size_t nf, size_t nl, size_t *first, size_t *last)
{
	size_t lo = 0, hi = n - 1;

	while (lo < n && q[lo] == 0)
		lo++;
	if (lo == n) { /* every bucket scanned: data only in the last one is still printed */
		*first = nf;
		*last = nl;
		return;
	}
	while (q[hi] == 0)
		hi--;
	*first = lo > 0 ? lo - 1 : 0;
	*last = hi < n - 1 ? hi + 1 : n - 1;
}

static void scan(const int64_t *q, size_t first, size_t last, u128 *total, bool *pos, bool *neg)
{
	*total = 0;
	*pos = *neg = false;
	for (size_t i = first; i <= last; i++) {
		*pos |= q[i] > 0;
		*neg |= q[i] < 0;
		*total += q[i] < 0 ? 0 - (uint64_t)q[i] : (uint64_t)q[i];
	}
}

static void print_hdr(FILE *f)
{
	fprintf(f, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------",
		"count");
}

static void print_quantize(FILE *f, const int64_t *q, int64_t normal)
{
	size_t first, last;
	u128 total;
	bool pos, neg;

	trim(q, DTRACE_QUANTIZE_NBUCKETS, DTRACE_QUANTIZE_ZEROBUCKET - 1,
	     DTRACE_QUANTIZE_ZEROBUCKET + 1, &first, &last);
	scan(q, first, last, &total, &pos, &neg);
	print_hdr(f);
	for (size_t i = first; i <= last; i++) {
		fprintf(f, "%16lld ", (long long)DTRACE_QUANTIZE_BUCKETVAL(i));
		quantline(f, q[i], normal, total, pos, neg);
	}
}

static void print_lquantize(FILE *f, const int64_t *d, int64_t normal)
{
	uint64_t param = (uint64_t)d[0];
	int64_t base = DTRACE_LQUANTIZE_BASE(param), step = DTRACE_LQUANTIZE_STEP(param);
	size_t levels = DTRACE_LQUANTIZE_LEVELS(param), first, last;
	const int64_t *q = d + 1;
	u128 total;
	bool pos, neg;
	char c[32];

	trim(q, levels + 2, 0, 2, &first, &last);
	scan(q, first, last, &total, &pos, &neg);
	print_hdr(f);
	for (size_t i = first; i <= last; i++) {
		if (i == 0) {
			snprintf(c, sizeof(c), "< %lld", (long long)base);
			fprintf(f, "%16s ", c);
		} else if (i == levels + 1) {
			snprintf(c, sizeof(c), ">= %lld", (long long)(base + (int64_t)levels * step));
			fprintf(f, "%16s ", c);
		} else {
			fprintf(f, "%16lld ", (long long)(base + (int64_t)(i - 1) * step));
		}
		quantline(f, q[i], normal, total, pos, neg);
	}
}

static void print_llquantize(FILE *f, const struct sonde_agg *a, const int64_t *d, int64_t normal)
{
	size_t nb = a->nwords - 1, first, last;
	const int64_t *q = d + 1;
	u128 total;
	bool pos, neg;
	char c[40];

	trim(q, nb, 0, 1, &first, &last);
	scan(q, first, last, &total, &pos, &neg);
	print_hdr(f);
	for (size_t i = first; i <= last; i++) {
		if (i == 0) {
			snprintf(c, sizeof(c), "< %lld", (long long)a->labels[0]);
			fprintf(f, "%16s ", c);
		} else if (i == nb - 1) {
			snprintf(c, sizeof(c), ">= %lld", (long long)a->labels[nb - 1]);
			fprintf(f, "%16s ", c);
		} else {
			fprintf(f, "%16lld ", (long long)a->labels[i]);
		}
		quantline(f, q[i], normal, total, pos, neg);
	}
}

void sonde_agg_print_value(FILE *f, const struct sonde_agg *a, const int64_t *d, int64_t normal)
{
	switch (a->func) {
	case SONDE_AGG_COUNT:
	case SONDE_AGG_SUM:
	case SONDE_AGG_MIN:
	case SONDE_AGG_MAX:
		fprintf(f, " %16lld", (long long)sdiv(d[0], normal));
		break;
	case SONDE_AGG_AVG:
		fprintf(f, " %16lld", (long long)sonde_agg_avg_value(d, normal));
		break;
	case SONDE_AGG_STDDEV:
		fprintf(f, " %16llu", (unsigned long long)sonde_agg_stddev_value(d, normal));
		break;
	case SONDE_AGG_QUANTIZE:
		print_quantize(f, d, normal);
		break;
	case SONDE_AGG_LQUANTIZE:
		print_lquantize(f, d, normal);
		break;
	case SONDE_AGG_LLQUANTIZE:
		print_llquantize(f, a, d, normal);
		break;
	}
}

static void print_keys(FILE *f, const struct sonde_agg *a, const uint64_t *r)
{
	struct sonde_agg_key k[SONDE_AGG_MAX_KEYS];

	rec_keys(a, r, k);
	for (unsigned i = 0; i < a->nkeys; i++) {
		switch (k[i].type) {
		case SONDE_AGG_KEY_STR:
			fprintf(f, "  %-50s", k[i].s);
			break;
		case SONDE_AGG_KEY_I32:
			fprintf(f, " %8d", (int)(int32_t)k[i].i);
			break;
		case SONDE_AGG_KEY_I16:
			fprintf(f, " %5d", (int)(uint16_t)k[i].i);
			break;
		case SONDE_AGG_KEY_I8:
			fprintf(f, " %3d", (int)(uint8_t)k[i].i);
			break;
		default:
			fprintf(f, " %16lld", (long long)k[i].i);
			break;
		}
	}
}

/* ---- joined rows, sorted ------------------------------------------------------------ */

struct rows {
	struct sonde_agg *const *aggs;
	size_t naggs, nrows;
	size_t *idx;	  /* nrows x naggs element indexes, SIZE_MAX: absent */
	const uint64_t **key; /* nrows representative key records */
	int64_t **zero;	  /* per aggregation: its zero record */
	unsigned *order;  /* value comparison order: sortpos first */
	const struct sonde_agg_opts *o;
};

static const int64_t *row_data(const struct rows *R, size_t row, size_t j)
{
	size_t i = R->idx[row * R->naggs + j];

	return i == SIZE_MAX ? R->zero[j] : rec_data(R->aggs[j], rec_at(R->aggs[j], i));
}

static int row_cmp(const void *pl, const void *pr, void *ctx)
{
	const struct rows *R = ctx;
	size_t l = *(const size_t *)pl, r = *(const size_t *)pr;
	unsigned nkeys = R->aggs[0]->nkeys, keypos = R->o ? R->o->sortkeypos : 0;
	bool bykey = R->o && R->o->sortkey;
	int c = 0;

	if (bykey)
		c = key_cmp(R->key[l], R->key[r], nkeys, keypos);
	for (size_t n = 0; !c && n < R->naggs; n++) {
		size_t j = R->order[n];

		c = val_cmp(R->aggs[j], row_data(R, l, j), row_data(R, r, j));
	}
	if (!c && !bykey)
		c = key_cmp(R->key[l], R->key[r], nkeys, keypos);
	if (R->o && R->o->sortrev)
		c = -c;
	return c;
}

static void rows_free(struct rows *R)
{
	free(R->idx);
	free(R->key);
	if (R->zero)
		for (size_t j = 0; j < R->naggs; j++)
			free(R->zero[j]);
	free(R->zero);
	free(R->order);
}

/* Builds the sorted rows of aggs (one set, same nkeys); sorted[] gets the
 * row order. */
static int rows_build(struct rows *R, struct sonde_agg *const *aggs, size_t n,
		      const struct sonde_agg_opts *o, size_t **sorted)
{
	size_t max = 0;
	struct sonde_agg_key keys[SONDE_AGG_MAX_KEYS];

	memset(R, 0, sizeof(*R));
	R->aggs = aggs;
	R->naggs = n;
	R->o = o;
	*sorted = NULL;
	for (size_t j = 0; j < n; j++)
		max += aggs[j]->nelem;
	R->idx = malloc((max ? max : 1) * n * sizeof(*R->idx));
	R->key = malloc((max ? max : 1) * sizeof(*R->key));
	R->zero = calloc(n, sizeof(*R->zero));
	R->order = malloc(n * sizeof(*R->order));
	if (!R->idx || !R->key || !R->zero || !R->order)
		goto oom;
	for (size_t j = 0; j < n; j++) {
		if (!(R->zero[j] = calloc(aggs[j]->nwords, sizeof(int64_t))))
			goto oom;
		if (aggs[j]->func == SONDE_AGG_LQUANTIZE || aggs[j]->func == SONDE_AGG_LLQUANTIZE)
			R->zero[j][0] = (int64_t)aggs[j]->param;
	}
	unsigned pos = o && o->sortpos < n ? o->sortpos : 0;

	R->order[0] = pos;
	for (size_t j = 0, k = 1; j < n; j++)
		if (j != pos)
			R->order[k++] = (unsigned)j;

	for (size_t j = 0; j < n; j++) {
		struct sonde_agg *a = aggs[j];

		for (size_t e = 0; e < a->nelem; e++) {
			const uint64_t *r = rec_at(a, e);
			bool seen = false;

			rec_keys(a, r, keys);
			for (size_t p = 0; p < j && !seen; p++)
				seen = elem_find(aggs[p], keys, false, NULL) != SIZE_MAX;
			if (seen)
				continue;
			size_t row = R->nrows++;

			R->key[row] = r;
			for (size_t p = 0; p < n; p++)
				R->idx[row * n + p] = p == j ? e : p < j ? SIZE_MAX
									 : elem_find(aggs[p], keys, false, NULL);
		}
	}
	*sorted = malloc((R->nrows ? R->nrows : 1) * sizeof(**sorted));
	if (!*sorted)
		goto oom;
	for (size_t i = 0; i < R->nrows; i++)
		(*sorted)[i] = i;
	qsort_r(*sorted, R->nrows, sizeof(**sorted), row_cmp, R);
	return 0;
oom:
	rows_free(R);
	return -1;
}

static int print_rows(FILE *f, struct sonde_agg *const *aggs, size_t n,
		      const struct sonde_agg_opts *o)
{
	struct rows R;
	size_t *sorted;

	if (rows_build(&R, aggs, n, o, &sorted))
		return -1;
	for (size_t s = 0; s < R.nrows; s++) {
		size_t row = sorted[s];

		print_keys(f, aggs[0], R.key[row]);
		for (size_t j = 0; j < n; j++)
			sonde_agg_print_value(f, aggs[j], row_data(&R, row, j), aggs[j]->normal);
		fputc('\n', f);
	}
	free(sorted);
	rows_free(&R);
	return 0;
}

int sonde_agg_printa(FILE *f, struct sonde_agg *const *aggs, size_t n,
		     const struct sonde_agg_opts *opts)
{
	if (!n)
		return -1;
	for (size_t j = 1; j < n; j++)
		if (aggs[j]->nkeys != aggs[0]->nkeys || aggs[j]->set != aggs[0]->set)
			return -1;
	fputc('\n', f);
	if (print_rows(f, aggs, n, opts))
		return -1;
	for (size_t j = 0; j < n; j++)
		aggs[j]->printed = true;
	return 0;
}

int sonde_aggset_print_end(FILE *f, struct sonde_aggset *set, const struct sonde_agg_opts *opts)
{
	fputc('\n', f);
	for (size_t i = 0; i < set->naggs; i++) {
		struct sonde_agg *a = set->aggs[i];

		if (a->printed || !a->nelem)
			continue;
		if (print_rows(f, &set->aggs[i], 1, opts))
			return -1;
		a->printed = true;
	}
	return 0;
}

int sonde_agg_trunc(struct sonde_agg *a, int64_t n)
{
	struct rows R;
	size_t *sorted, keep_from, keep_to;

	if (n == 0) {
		a->nelem = 0;
		a->last = 0;
		if (a->tcap)
			memset(a->table, 0, a->tcap * sizeof(*a->table));
		return 0;
	}
	uint64_t mag = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;

	if (mag >= a->nelem)
		return 0;
	struct sonde_agg *self = a;

	if (rows_build(&R, &self, 1, NULL, &sorted))
		return -1;
	/* sorted ascending by value then key; keep the largest or smallest */
	keep_from = n > 0 ? a->nelem - (size_t)mag : 0;
	keep_to = n > 0 ? a->nelem : (size_t)mag;

	uint64_t *recs = malloc((size_t)mag * a->recwords * sizeof(*recs));
	bool *keep = calloc(a->nelem, sizeof(*keep));
	uint32_t *t = a->tcap ? calloc(a->tcap, sizeof(*t)) : NULL;

	if (!recs || !keep || (a->tcap && !t)) {
		free(recs);
		free(keep);
		free(t);
		free(sorted);
		rows_free(&R);
		return -1;
	}
	/* keep the survivors in their old relative order */
	for (size_t s = keep_from; s < keep_to; s++)
		keep[R.idx[sorted[s]]] = true;
	size_t m = 0;

	for (size_t i = 0; i < a->nelem; i++)
		if (keep[i])
			memcpy(recs + m++ * a->recwords, rec_at(a, i), a->recwords * sizeof(*recs));
	free(keep);
	free(sorted);
	rows_free(&R);
	memcpy(a->recs, recs, m * a->recwords * sizeof(*recs));
	free(recs);
	a->nelem = m;
	a->last = 0;
	if (t)
		table_fill(a, t, a->tcap);
	return 0;
}
