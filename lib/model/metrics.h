/*
 * metrics: the metrics engine.  Turns events (a call stack of functions and
 * a value per metric) into function-level metrics as gprofng defines them:
 *
 *   exclusive   events whose leaf is in the function;
 *   inclusive   events with the function anywhere on the stack, counted
 *               once per stack however often the function appears;
 *   attributed  per caller/callee pair.  Under recursion the inclusive
 *               metric of all but the lowest (nearest the leaf) invocation
 *               of a function counts zero, so:
 *                 callers(f)[c] += v  where c calls f's lowest invocation,
 *                 callees(g)[d] += v  where g's lowest invocation calls d.
 *               Hence incl(f) = sum of callers(f) (when f is not a root)
 *               and incl(g) = excl(g) + sum of callees(g), always.
 *
 * plus the same for load objects (exclusive: the leaf's object; inclusive:
 * once per stack per object) and a call tree of call paths (no recursion
 * folding: each path is a node).
 *
 * The engine knows nothing of experiments or symbols: functions and load
 * objects are interned by the caller (lib/model/profile.c builds models from
 * experiments), and metrics are described by a table, so later data kinds
 * (heap bytes, sync wait time, counter events) add rows, not code.
 *
 * Values are int64_t in the metric's unit (ns for times).  Events with the
 * same stack are merged first, so the cost of the views depends on the
 * number of distinct stacks, not of events.
 *
 * Ownership: the model owns every string and array it returns; pointers stay
 * valid until sonde_model_free(), except that sonde_model_add() may move the
 * arrays returned before sonde_model_finish().  Not thread-safe.
 */
#ifndef SONDE_METRICS_H
#define SONDE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/states.h>

/* The most metrics a model holds: the clock profile's (six, and one per
 * thread state that has one: sonde/states.h) and the data kinds' (27:
 * sync's, heap's, I/O's, the counters' slots and MPI's).  A new state's
 * metric makes room for itself; a new kind's metrics raise the 27. */
#define SONDE_MAX_METRICS (33 + SONDE_STATE_NMETRICS + SONDE_STATE_NSUMS)

enum sonde_unit {
	SONDE_UNIT_NS,	  /* a time in nanoseconds, shown in seconds */
	SONDE_UNIT_COUNT, /* a plain count */
	SONDE_UNIT_BYTES,
	SONDE_UNIT_RATIO, /* a derived metric: a ratio, shown with 3 decimals */
};

struct sonde_metric_def {
	const char *name;  /* er_print name in -metrics: "totalcpu" */
	const char *title; /* "Total CPU Time" */
	const char *abbr;  /* column header words: "Total CPU" */
	enum sonde_unit unit;
};

/*
 * A derived metric (gprofng's CPI and IPC): scale * num / den of the same
 * row's values of two metrics of the model, named num and den (exclusive
 * from exclusive, inclusive from inclusive, attributed from attributed,
 * <Total> from the totals), 0 when den is 0.  It is never stored: a row's
 * value is computed from the row's vector of values when shown or sorted,
 * so a view that sums vectors (source lines, threads) gets the ratio of
 * the sums, never a sum of ratios; and what reads the values themselves
 * (the exports, the report's data) never sees one.  Its unit is
 * SONDE_UNIT_RATIO; it has no percentage of <Total> (a ratio does not
 * add up).
 */
struct sonde_derived_def {
	struct sonde_metric_def def; /* def.unit: SONDE_UNIT_RATIO */
	const char *num, *den;	     /* the metrics' names: "cycles", "insts" */
	double scale;
};

#define SONDE_MAX_DERIVED 8

struct sonde_mobject {
	uint32_t id;
	const char *path; /* as interned */
	const char *name; /* last component of path */
};

struct sonde_mfunc {
	uint32_t id;
	uint32_t object;	/* sonde_mobject id */
	uint64_t lo;		/* address in the object (identity with object+mangled) */
	const char *mangled, *name_long, *name_short;
	const char *name_full; /* NULL: name_long (sonde_model_func_set_full) */
	bool synthesized;	/* no symbol: "<static>@0x..." style */
	uint8_t kind;		/* enum sonde_frame_kind of its frames (native
				 * unless sonde_model_func_set_kind said) */
};

/* One row of a callers or callees list, or of an object list. */
struct sonde_edge {
	uint32_t func; /* the other function */
	int64_t v[SONDE_MAX_METRICS];
};

struct sonde_tnode {
	uint32_t func;
	int32_t parent;		/* -1 for roots */
	uint32_t first_child;	/* index of the first child, or UINT32_MAX */
	uint32_t next_sibling;	/* or UINT32_MAX */
	int64_t incl[SONDE_MAX_METRICS], excl[SONDE_MAX_METRICS];
};

struct sonde_model;

/* A model for nmetrics metrics described by defs (copied).  NULL when out
 * of memory or nmetrics is 0 or above SONDE_MAX_METRICS. */
struct sonde_model *sonde_model_new(const struct sonde_metric_def *defs, int nmetrics);
void sonde_model_free(struct sonde_model *m);

/* Intern a load object by path / a function by (object, mangled, lo).
 * Returns its id, or UINT32_MAX when out of memory.  Strings are copied. */
uint32_t sonde_model_object(struct sonde_model *m, const char *path);
uint32_t sonde_model_func(struct sonde_model *m, uint32_t object, uint64_t lo, const char *mangled,
			  const char *name_long, const char *name_short, bool synthesized);
/* Says that function f (a valid id) is named by a frame kind other than
 * native (sonde/format.h): views explain it as such (no ELF code). */
void sonde_model_func_set_kind(struct sonde_model *m, uint32_t f, uint8_t kind);
/* A function's full name, where its long name leaves something out (a
 * Rust symbol's hash): kept once.  -1 out of memory. */
int sonde_model_func_set_full(struct sonde_model *m, uint32_t f, const char *full);

/* Intern a call stack of function ids, leaf first (depth >= 1), returning a
 * handle for sonde_model_add_to(); UINT32_MAX when out of memory. */
uint32_t sonde_model_stack(struct sonde_model *m, const uint32_t *funcs, int depth);
/* Add values (nmetrics of them) to an interned stack. */
void sonde_model_add_to(struct sonde_model *m, uint32_t stack, const int64_t *values);
/* The same for the first n metrics only (the others of values are 0):
 * what a clock-profile sample costs does not grow with the kinds' metrics. */
void sonde_model_add_some(struct sonde_model *m, uint32_t stack, const int64_t *values, int n);
/* Both in one call.  Returns 0, or -1 when out of memory. */
int sonde_model_add(struct sonde_model *m, const uint32_t *funcs, int depth, const int64_t *values);

/* Compute every metric from the stacks added.  Returns 0, or -1 when out
 * of memory.  After this, sonde_model_add() must not be called again. */
int sonde_model_finish(struct sonde_model *m);

/* ---- results (after sonde_model_finish) ---- */

/* The metrics whose values the vectors hold (nmetrics of them: every
 * vector below has that length). */
int sonde_model_nmetrics(const struct sonde_model *m);
/* Metric i's description: a metric of the vectors (i < nmetrics) or a
 * derived one (nmetrics <= i < sonde_model_nall). */
const struct sonde_metric_def *sonde_model_metric(const struct sonde_model *m, int i);

/* ---- derived metrics (see struct sonde_derived_def) ---- */

/* Adds derived metric d (copied, strings included by pointer) when the
 * model has metrics named d->num and d->den; it takes index
 * sonde_model_nall() (after the metrics of the vectors and the derived
 * metrics added before).  Returns its index, or -1 when one of its parts
 * is not a metric of the model or SONDE_MAX_DERIVED are there.  Any time
 * before or after sonde_model_finish(). */
int sonde_model_add_derived(struct sonde_model *m, const struct sonde_derived_def *d);
/* Every metric: the vectors' then the derived ones. */
int sonde_model_nall(const struct sonde_model *m);
static inline bool sonde_model_is_derived(const struct sonde_model *m, int i)
{
	return i >= sonde_model_nmetrics(m);
}
/* Metric i's value in a row's vector v (any of the model's vectors, or a
 * sum of them): v[i] for a metric of the vectors, the ratio for a derived
 * one (0 when its denominator is 0). */
double sonde_model_value(const struct sonde_model *m, int i, const int64_t *v);
/* Compares metric i's values in two vectors, exactly (ratios by cross
 * multiplication): -1, 0 or 1 as a's is below, equal to or above b's. */
int sonde_model_cmp(const struct sonde_model *m, int i, const int64_t *a, const int64_t *b);
const int64_t *sonde_model_total(const struct sonde_model *m); /* <Total>: nmetrics values */

size_t sonde_model_nfuncs(const struct sonde_model *m);
const struct sonde_mfunc *sonde_model_funcinfo(const struct sonde_model *m, uint32_t f);
const int64_t *sonde_model_excl(const struct sonde_model *m, uint32_t f);
const int64_t *sonde_model_incl(const struct sonde_model *m, uint32_t f);
/* Attributed metrics: callers of f (who called f's lowest invocation) and
 * callees of f (what f's lowest invocation called), in no particular
 * order; *n gets the count. */
const struct sonde_edge *sonde_model_callers(const struct sonde_model *m, uint32_t f, size_t *n);
const struct sonde_edge *sonde_model_callees(const struct sonde_model *m, uint32_t f, size_t *n);

size_t sonde_model_nobjects(const struct sonde_model *m);
const struct sonde_mobject *sonde_model_objectinfo(const struct sonde_model *m, uint32_t o);
const int64_t *sonde_model_object_excl(const struct sonde_model *m, uint32_t o);
const int64_t *sonde_model_object_incl(const struct sonde_model *m, uint32_t o);

/* The distinct call stacks added (sonde_model_stack's handles, 0 ..
 * nstacks - 1): each one's functions, leaf first (*depth of them), and
 * its summed values (nmetrics).  What writers of stacks read (the HTML
 * report, the exports); the tree below is their merged form.  Valid after
 * sonde_model_finish() too. */
size_t sonde_model_nstacks(const struct sonde_model *m);
const uint32_t *sonde_model_stack_funcs(const struct sonde_model *m, uint32_t s, int *depth);
const int64_t *sonde_model_stack_values(const struct sonde_model *m, uint32_t s);

/* The call tree: nodes[0..n), roots are the nodes with parent -1 (linked
 * from sonde_model_tree_roots as a sibling chain). */
const struct sonde_tnode *sonde_model_tree(const struct sonde_model *m, size_t *n);
uint32_t sonde_model_tree_roots(const struct sonde_model *m); /* first root, or UINT32_MAX */

/* The inverted (bottom-up) call tree, made on demand from the distinct
 * stacks: the roots are the leaf functions, a node's children the callers
 * of its path.  A node's incl holds the values of the stacks that begin,
 * leaf first, with its path (a root's: its function's exclusive metric,
 * recursion aside); its excl those of the stacks that are its path
 * exactly (the node is their outermost frame).  *nodes (n of them, the
 * first root in *roots, UINT32_MAX with none) is the caller's to free.
 * Returns 0, or -1 out of memory. */
int sonde_model_tree_inverted(const struct sonde_model *m, struct sonde_tnode **nodes, size_t *n,
			      uint32_t *roots);

#endif
