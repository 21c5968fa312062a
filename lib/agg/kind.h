/*
 * agg's part of a data kind (base/kindmod.h): its `sonde agg` event kind,
 * a struct sonde_dl_kind (agg/dlang.h) with its fields and its run
 * function, and the helpers a run function feeds its events with.  For
 * the kinds' modules, lib/kinds/NAME.c.
 *
 * A kind's fields include a func and a caller: the function that made the
 * traced call (a call site) and the one above it, the collector's own
 * frames skipped; "<unknown>" for both without a stack, caller "<none>"
 * for a one-frame stack.  Its run function gives sonde_dl_trace_run the
 * number of its events and a function that sets one event's other
 * fields; sonde_dl_trace_run does the rest (lib/kinds/sync.c is the
 * model).
 */
#ifndef SONDE_AGG_KIND_H
#define SONDE_AGG_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agg/dlang.h"
#include "base/kindmod.h"

/* The state of one kind's events being fed (its fields are the helpers'). */
struct sonde_dl_trace {
	struct sonde_dl_prog *p;
	const struct sonde_exp *exp;
	sonde_dl_name_fn name_of_pc;
	void *ctx;
	const struct sonde_stack *stacks;
	size_t nst;
	struct sonde_dl_stack_names *cache;
	size_t nepochs;
	const char *unknown, *none;
	bool want_func, want_caller;
	uint64_t start;	       /* the experiment's start: times are since it */
	const char *fname[64]; /* interned names of the traced functions */
	uint32_t fnamelen[64];
};

/* The most fields a kind has. */
#define SONDE_DL_MAX_FIELDS 32

/* Sets the fields of event i of the kind but func and caller (vals: its
 * nfields values, strings set with sonde_dl_trace_str or _fname), and the
 * event's stack id and time.  0, or -1 out of memory. */
typedef int sonde_dl_fill_fn(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals,
			     uint64_t *stack_id, uint64_t *time_ns);

/* Feeds the n events of kind k of exp to p, in order, each set by fill
 * (with arg): nothing when the program has no clause of k.  ffunc and
 * fcaller: the kind's func and caller fields.  Returns the number of
 * events fed (0 when none), or -1 with a message in err (out of
 * memory). */
int64_t sonde_dl_trace_run(struct sonde_dl_prog *p, const struct sonde_exp *exp, const struct sonde_dl_kind *k,
			   size_t n, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc, void *ctx,
			   sonde_dl_fill_fn *fill, void *arg, char *err, size_t errlen);

/* The steps of sonde_dl_trace_run, for a kind that needs more.
 *
 * Begins feeding kind k of exp to p: 1, go on (vals, the kind's nfields
 * values, are set to 0 and ""); 0, the program has no clause of k
 * (nothing to do); -1 out of memory.  ffunc and fcaller: the kind's func
 * and caller fields. */
int sonde_dl_trace_begin(struct sonde_dl_trace *t, struct sonde_dl_prog *p, const struct sonde_exp *exp,
			 const struct sonde_dl_kind *k, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc,
			 void *ctx, struct sonde_dl_val *vals);
/* Sets func and caller for stack stack_id at time_ns, when the program
 * uses them.  0, or -1 out of memory. */
int sonde_dl_trace_names(struct sonde_dl_trace *t, uint64_t stack_id, uint64_t time_ns, struct sonde_dl_val *func,
			 struct sonde_dl_val *caller);
/* A string value (interned); 0, or -1 out of memory. */
int sonde_dl_trace_str(struct sonde_dl_trace *t, struct sonde_dl_val *v, const char *s);
/* The traced function's name (name(func)), interned once per function;
 * 0, or -1 out of memory. */
int sonde_dl_trace_fname(struct sonde_dl_trace *t, struct sonde_dl_val *v, unsigned func,
			 const char *(*name)(unsigned));
/* Whether the program's clauses of the kind use field i. */
bool sonde_dl_trace_uses(const struct sonde_dl_trace *t, const struct sonde_dl_kind *k, size_t i);
/* s interned in the program's set (NULL out of memory). */
const char *sonde_dl_trace_intern(struct sonde_dl_trace *t, const char *s);
/* Ends: frees what begin took. */
void sonde_dl_trace_end(struct sonde_dl_trace *t);
/* Ends, writes "out of memory" in err and returns -1. */
int64_t sonde_dl_trace_oom(struct sonde_dl_trace *t, char *err, size_t errlen);

#endif
