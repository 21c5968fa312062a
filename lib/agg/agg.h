/*
 * agg: DTrace aggregations -- count, sum, min, max, avg, stddev, quantize,
 * lquantize, llquantize -- with DTrace's storage, bucket arithmetic,
 * sorting, merging, clear/trunc/normalize and its default printa() text,
 * byte for byte.  The rules are illumos', except where DTrace
 * implementations differ: sonde's choices there are listed in
 * doc/sonde-agg.md ("Choices where DTrace implementations differ").
 *
 *	struct sonde_aggset *set = sonde_aggset_new();
 *	int64_t lq[] = { 0, 100, 10 };
 *	struct sonde_agg *a = sonde_agg_create(set, "lat", SONDE_AGG_LQUANTIZE, lq, 3, 1,
 *					       err, sizeof(err));
 *	struct sonde_agg_key k = { .type = SONDE_AGG_KEY_STR,
 *				   .s = sonde_aggset_intern(set, "read", 4) };
 *	sonde_agg_update(a, &k, 42, 1);
 *	sonde_aggset_print_end(set, stdout, NULL);	// what dtrace prints at exit
 *	sonde_aggset_free(set);
 *
 * A set holds aggregations (numbered 0, 1, ... in creation order: DTrace's
 * aggregation variable ids, which order the end-of-run output) and the
 * strings their keys use.  An aggregation holds elements: a key tuple
 * (0 to SONDE_AGG_MAX_KEYS integers and strings) and a value record of
 * sonde_agg_nwords() 64-bit words laid out as DTrace lays them out:
 *
 *   count, sum, min, max  [v]            (min starts at INT64_MAX, max at INT64_MIN)
 *   avg                   [n, sum]
 *   stddev                [n, sum, sumsq_lo, sumsq_hi]   (sum of squares: 128 bits, low word first)
 *   quantize              [127 buckets], zero bucket 63
 *   lquantize             [param, underflow, levels buckets, overflow]
 *   llquantize            [param, underflow, buckets..., overflow]
 *
 * All arithmetic is unsigned 64-bit (two's complement wrap, never undefined
 * behaviour); the sum of squares is a true 128-bit sum.
 *
 * Strings: a string key must be a pointer returned by sonde_aggset_intern()
 * of the aggregation's set (keys compare strings by pointer).  Interned
 * strings live until the set is freed.
 *
 * Errors: functions that can fail return -1 or NULL; those that take an
 * err buffer put a one-line message there (DTrace's reason for invalid
 * lquantize/llquantize arguments).  The only other failure is running out
 * of memory, which leaves the aggregation as it was.  Nothing here prints
 * except the print functions, and nothing exits.
 *
 * Threads: a set and its aggregations are not thread-safe; aggregate per
 * thread into separate sets and merge them (sonde_agg_merge()), as DTrace
 * merges its per-CPU buffers.
 */
#ifndef SONDE_AGG_H
#define SONDE_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Aggregating functions: DTrace's DTRACEAGG_* codes less DTRACEACT_AGGREGATION. */
enum sonde_agg_func {
	SONDE_AGG_COUNT = 1,
	SONDE_AGG_MIN = 2,
	SONDE_AGG_MAX = 3,
	SONDE_AGG_AVG = 4,
	SONDE_AGG_SUM = 5,
	SONDE_AGG_STDDEV = 6,
	SONDE_AGG_QUANTIZE = 7,
	SONDE_AGG_LQUANTIZE = 8,
	SONDE_AGG_LLQUANTIZE = 9,
};

/* ---- the reference's macros ---------------------------------------------- */

#define DTRACE_QUANTIZE_NBUCKETS ((64 - 1) * 2 + 1) /* 127 */
#define DTRACE_QUANTIZE_ZEROBUCKET (64 - 1)	    /* 63 */
/* Label (lowest value) of quantize bucket b. */
#define DTRACE_QUANTIZE_BUCKETVAL(b)                                                     \
	((b) < DTRACE_QUANTIZE_ZEROBUCKET                                                \
		 ? -(int64_t)(1ULL << (DTRACE_QUANTIZE_ZEROBUCKET - 1 - (b)))             \
		 : (b) == DTRACE_QUANTIZE_ZEROBUCKET                                      \
			   ? (int64_t)0                                                   \
			   : (int64_t)(1ULL << ((b) - DTRACE_QUANTIZE_ZEROBUCKET - 1)))

/* lquantize's parameter word (first word of its record). */
#define DTRACE_LQUANTIZE_STEPSHIFT 48
#define DTRACE_LQUANTIZE_STEPMASK ((uint64_t)UINT16_MAX << 48)
#define DTRACE_LQUANTIZE_LEVELSHIFT 32
#define DTRACE_LQUANTIZE_LEVELMASK ((uint64_t)UINT16_MAX << 32)
#define DTRACE_LQUANTIZE_BASESHIFT 0
#define DTRACE_LQUANTIZE_BASEMASK UINT32_MAX
#define DTRACE_LQUANTIZE_STEP(x) \
	((uint16_t)(((uint64_t)(x) & DTRACE_LQUANTIZE_STEPMASK) >> DTRACE_LQUANTIZE_STEPSHIFT))
#define DTRACE_LQUANTIZE_STEPS(x) DTRACE_LQUANTIZE_STEP(x) /* the Solaris guide's name */
#define DTRACE_LQUANTIZE_LEVELS(x) \
	((uint16_t)(((uint64_t)(x) & DTRACE_LQUANTIZE_LEVELMASK) >> DTRACE_LQUANTIZE_LEVELSHIFT))
#define DTRACE_LQUANTIZE_BASE(x) ((int32_t)(uint32_t)((uint64_t)(x) & DTRACE_LQUANTIZE_BASEMASK))
#define DTRACE_LQUANTIZE_ENCODE(base, levels, step)                                      \
	(((uint64_t)(step) << DTRACE_LQUANTIZE_STEPSHIFT) |                              \
	 ((uint64_t)(levels) << DTRACE_LQUANTIZE_LEVELSHIFT) |                           \
	 ((uint64_t)(int64_t)(base) & DTRACE_LQUANTIZE_BASEMASK))

/* llquantize's parameter word, illumos layout (other DTraces order it otherwise):
 * factor << 48 | low magnitude << 32 | high magnitude << 16 | steps. */
#define DTRACE_LLQUANTIZE_FACTORSHIFT 48
#define DTRACE_LLQUANTIZE_LMAGSHIFT 32
#define DTRACE_LLQUANTIZE_HMAGSHIFT 16
#define DTRACE_LLQUANTIZE_STEPSSHIFT 0
#define DTRACE_LLQUANTIZE_FACTOR(x) ((uint16_t)((uint64_t)(x) >> DTRACE_LLQUANTIZE_FACTORSHIFT))
#define DTRACE_LLQUANTIZE_LMAG(x) ((uint16_t)((uint64_t)(x) >> DTRACE_LLQUANTIZE_LMAGSHIFT))
#define DTRACE_LLQUANTIZE_HMAG(x) ((uint16_t)((uint64_t)(x) >> DTRACE_LLQUANTIZE_HMAGSHIFT))
#define DTRACE_LLQUANTIZE_STEPS(x) ((uint16_t)((uint64_t)(x) >> DTRACE_LLQUANTIZE_STEPSSHIFT))
/* illumos' names for the same fields */
#define DTRACE_LLQUANTIZE_LOW(x) DTRACE_LLQUANTIZE_LMAG(x)
#define DTRACE_LLQUANTIZE_HIGH(x) DTRACE_LLQUANTIZE_HMAG(x)
#define DTRACE_LLQUANTIZE_NSTEP(x) DTRACE_LLQUANTIZE_STEPS(x)
#define DTRACE_LLQUANTIZE_ENCODE(factor, low, high, steps)                               \
	(((uint64_t)(uint16_t)(factor) << DTRACE_LLQUANTIZE_FACTORSHIFT) |               \
	 ((uint64_t)(uint16_t)(low) << DTRACE_LLQUANTIZE_LMAGSHIFT) |                    \
	 ((uint64_t)(uint16_t)(high) << DTRACE_LLQUANTIZE_HMAGSHIFT) |                   \
	 ((uint64_t)(uint16_t)(steps) << DTRACE_LLQUANTIZE_STEPSSHIFT))

/* ---- keys ------------------------------------------------------------------- */

#define SONDE_AGG_MAX_KEYS 16

/*
 * Key column types.  The integer widths print as DTrace prints D integers
 * of that size (" %16lld", " %8d", " %5d" and " %3d", the last two as
 * unsigned: (char)-2 prints 254) and sort as unsigned numbers of that
 * size; strings print "  %-50s" and sort bytewise.  In one column integers
 * sort before strings, narrower integers before wider ones.
 */
enum sonde_agg_keytype {
	SONDE_AGG_KEY_I64 = 0,
	SONDE_AGG_KEY_I32,
	SONDE_AGG_KEY_I16,
	SONDE_AGG_KEY_I8,
	SONDE_AGG_KEY_STR,
};

struct sonde_agg_key {
	enum sonde_agg_keytype type;
	union {
		int64_t i;	/* integer types: the value (narrow types keep their low bits) */
		const char *s;	/* SONDE_AGG_KEY_STR: from sonde_aggset_intern() */
	};
};

/* ---- sets ------------------------------------------------------------------- */

struct sonde_aggset;
struct sonde_agg;

/* A new empty set, NULL when memory runs out. */
struct sonde_aggset *sonde_aggset_new(void);

/* Frees the set, its aggregations and its strings.  NULL is allowed. */
void sonde_aggset_free(struct sonde_aggset *set);

/*
 * The set's copy of the len bytes at s (NUL-terminated; equal strings give
 * the same pointer).  NULL when memory runs out.  Cost: one hash of s.
 */
const char *sonde_aggset_intern(struct sonde_aggset *set, const char *s, size_t len);

/* ---- aggregations ----------------------------------------------------------- */

/*
 * Creates aggregation `name` ("" for the anonymous @) in set, with id
 * the number of aggregations in set before the call, nkeys key columns and function
 * func.  args are the function's constant parameters:
 *
 *   lquantize   base, limit [, step]            (2 or 3)
 *   llquantize  factor, low, high, steps        (4)
 *   others      none                            (0)
 *
 * Invalid parameters fail with DTrace's reason in err ("lquantize() step
 * (argument #3) too large: must have at least one quantization level"),
 * as do nkeys > SONDE_AGG_MAX_KEYS and a wrong number of args.
 */
struct sonde_agg *sonde_agg_create(struct sonde_aggset *set, const char *name,
				   enum sonde_agg_func func, const int64_t *args, int nargs,
				   unsigned nkeys, char *err, size_t errlen);

/*
 * Checks that a second use of aggregation a with func and args matches its
 * creation, as the D compiler does: 0, or -1 with DTrace's reason in err
 * ("lquantize() base (argument #1) doesn't match previous declaration:
 * expected 0, found 10").  args must be valid (sonde_agg_create() rules).
 */
int sonde_agg_check_match(const struct sonde_agg *a, enum sonde_agg_func func,
			  const int64_t *args, int nargs, char *err, size_t errlen);

enum sonde_agg_func sonde_agg_func(const struct sonde_agg *a);
const char *sonde_agg_func_name(enum sonde_agg_func func); /* "count", ... */
size_t sonde_agg_nwords(const struct sonde_agg *a);	    /* value record words */
uint64_t sonde_agg_param(const struct sonde_agg *a);	    /* l/llquantize parameter word, else 0 */
size_t sonde_agg_nelems(const struct sonde_agg *a);

/*
 * Applies one data point: finds or creates the element of key tuple keys
 * (the nkeys given to sonde_agg_create(); NULL when there are none) and updates it
 * with value and incr (the quantize family's increment; count adds 1,
 * sum/min/max/avg/stddev ignore incr).  0, or -1 when memory runs out.
 */
int sonde_agg_update(struct sonde_agg *a, const struct sonde_agg_key *keys, int64_t value,
		     int64_t incr);

/*
 * The value record of the element with key tuple keys, NULL when there is
 * none.  Valid until the next change to a.
 */
const int64_t *sonde_agg_lookup(const struct sonde_agg *a, const struct sonde_agg_key *keys);

/* Element i (0 <= i < sonde_agg_nelems(), in no particular order): its
 * keys are copied to keys (may be NULL), its record is returned. */
const int64_t *sonde_agg_elem(const struct sonde_agg *a, size_t i, struct sonde_agg_key *keys);

/*
 * Merges the elements of src into dst (a partial aggregation of another
 * thread, process or MPI rank; src may belong to another set) as DTrace
 * merges per-CPU buffers, the stddev sum of squares with a true 128-bit
 * add (no carry lost).  Merging is associative and commutative: partials
 * merged in any order give the same aggregation as one buffer.  dst and
 * src must have the same function, parameters and number of keys (-1 with
 * a message otherwise); -1 too when memory runs out (dst is then partly
 * merged).
 */
int sonde_agg_merge(struct sonde_agg *dst, const struct sonde_agg *src, char *err, size_t errlen);

/*
 * clear(): every element stays, its value becomes zero (the lquantize and
 * llquantize parameter word stays).  A cleared min/max prints 0 and takes
 * the next value as it is, rather than comparing it with the 0.
 */
void sonde_agg_clear(struct sonde_agg *a);

/*
 * trunc(@a, n): n > 0 keeps the n elements with the largest values, n < 0
 * the -n smallest, n == 0 none (ties: by key, as the printing order).
 * 0, or -1 when memory runs out (a unchanged).
 */
int sonde_agg_trunc(struct sonde_agg *a, int64_t n);

/* normalize(@a, n): divide what is printed by n (not 0: -1).  The
 * records are unchanged.  denormalize() sets the divisor back to 1. */
int sonde_agg_normalize(struct sonde_agg *a, int64_t n);
void sonde_agg_denormalize(struct sonde_agg *a);
int64_t sonde_agg_normal(const struct sonde_agg *a);

/* ---- arithmetic ---------------------------------------------------------------- */

/* Bucket index of value in the record (quantize: 0..126; lquantize and
 * llquantize: index after the parameter word, 0 = underflow). */
unsigned sonde_agg_quantize_bucket(int64_t v);
unsigned sonde_agg_lquantize_bucket(uint64_t param, int64_t v);
unsigned sonde_agg_llquantize_bucket(uint64_t param, int64_t v);
/* Number of llquantize buckets (underflow and overflow included). */
unsigned sonde_agg_llquantize_nbuckets(uint64_t param);

/* The printed value of an avg or stddev record under divisor normal. */
int64_t sonde_agg_avg_value(const int64_t *rec, int64_t normal);
uint64_t sonde_agg_stddev_value(const int64_t *rec, int64_t normal);

/* ---- sorting and printing -------------------------------------------------------- */

/* DTrace's sort options; all zero (or a NULL pointer) is the default:
 * by value, then by key. */
struct sonde_agg_opts {
	bool sortkey;	    /* aggsortkey: by key, then by value */
	bool sortrev;	    /* aggsortrev: reverse the whole order */
	unsigned sortpos;   /* aggsortpos: sort a multi-aggregation printa by this one */
	unsigned sortkeypos; /* aggsortkeypos: compare key columns from this one on */
};

/*
 * printa(@a, @b, ...) without a format: "\n", then one line per key tuple
 * (the keys, then each aggregation's value; a tuple missing from one
 * aggregation shows that aggregation's zero record) in sort order.  Marks
 * the aggregations printed.  All must have the same number of keys and
 * belong to one set (-1 otherwise, nothing printed); -1 too when memory
 * runs out.  Write errors are the caller's to check (ferror(f)).
 */
int sonde_agg_printa(FILE *f, struct sonde_agg *const *aggs, size_t n,
		     const struct sonde_agg_opts *opts);

/*
 * What dtrace prints at the end of a run: "\n", then every aggregation of
 * the set that no printa() printed, in id order, each sorted.  0 or -1
 * (memory).
 */
int sonde_aggset_print_end(FILE *f, struct sonde_aggset *set, const struct sonde_agg_opts *opts);

/* The text of one value record as printed after the keys (" %16lld" or a
 * distribution starting with "\n"), under divisor normal. */
void sonde_agg_print_value(FILE *f, const struct sonde_agg *a, const int64_t *rec, int64_t normal);

#endif
