/*
 * profile: build a metrics model (lib/model/metrics.h) from one or more
 * experiments: symbolise every distinct frame once (lib/symbols/symbols.h), fold
 * away the collector's own frames, apply the thread / object / time
 * filters, and feed the clock-profile samples to the engine with the
 * metrics Total CPU Time (ns), samples, the microstates (User CPU, System
 * CPU, Wait CPU: from the CPU samples), a metric per thread state that has
 * one (sonde/states.h: User Lock and Other Wait from the off-CPU samples)
 * and Total Thread Time.
 *
 * Several experiments in one profile are added together; functions and
 * load objects are matched across them by (object path, mangled name).
 *
 * Library code: errors come back as one-line messages, nothing is printed.
 */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/experiment.h"
#include "model/metrics.h"
#include "model/shape.h"

struct sonde_syms;
struct sonde_pevent;

/* The pseudo-function at the root of a stack cut at the depth limit
 * (SONDE_STACK_TRUNCATED): it stands for the callers that were not
 * recorded.  gprofng's name for it. */
#define SONDE_TRUNCATED_STACK "<Truncated-stack>"

struct sonde_profile_opts {
	/* er_print thread list: "all" (or NULL), or numbers and ranges
	 * "1,3-5" of the thread numbers shown by the -threads view (1 = the
	 * first thread of an experiment to appear, by tid order). */
	const char *thread_select;
	/* "all" (or NULL), or a comma list of load-object names (basename
	 * or full path): functions of other objects are folded into one
	 * function per object named "<libc.so.6>". */
	const char *object_select;
	/* Only samples with start_ns <= time since the experiment's start <
	 * end_ns (end_ns 0: no end). */
	uint64_t start_ns, end_ns;
	/* "all" (or NULL), or sample numbers and ranges ("3", "1,4-6"):
	 * only events in those samples (experiment.h, samples). */
	const char *sample_select;
	/* "all" (or NULL), or CPU numbers and ranges from 0 ("0,2-3"): only
	 * events taken on those CPUs (events that recorded none, as traced
	 * calls and off-CPU samples, are left out by a list). */
	const char *cpu_select;
	/* "all" (or NULL), or comma-separated terms (sonde_callpath_parse):
	 * only events whose stack holds one of them. */
	const char *callpath_select;
	/* Keep the totals per CPU (p->cpus) and per second of the run
	 * (p->seconds): each costs a lookup per event, so only when a view
	 * asks for them. */
	bool index_cpus, index_seconds;
	/* -inlines off (and machine mode, below): a frame in inlined code is
	 * its out-of-line function's only (by default it is the inlined
	 * functions, innermost first, then that function). */
	bool no_inlines;
	/* -tailcalls off: stacks as recorded.  By default the frames that tail
	 * calls left off a stack are restored from DWARF's call sites where
	 * one chain of tail calls explains the gap (symbols.h,
	 * sonde_syms_tailcalls), and counted in sonde_profile.tail. */
	bool no_tailcalls;
	/* -viewmode (model/shape.h): an experiment that ran a runtime with a
	 * shaper (OpenMP) has its stacks shaped in user mode (the default) and
	 * expert mode; machine mode, and every other experiment, keeps them as
	 * recorded. */
	enum sonde_stackmode viewmode;
	/* When not NULL: called with each event that passes the filters, as
	 * it is added to the model (an experiment's clock-profile samples in
	 * file order, then its traced events kind by kind in time order), for
	 * the views that need events one by one (the timelines of
	 * lib/views/export*.c and of the HTML report).  A return of -1 stops the build (out of
	 * memory). */
	int (*each)(void *arg, const struct sonde_pevent *ev);
	void *each_arg;
};

/* An event as sonde_profile_opts.each sees it. */
struct sonde_pevent {
	uint32_t exp;	  /* index of the experiment */
	uint32_t ev;	  /* its stack: the profile's ev[ev] (p->ev may move until the build returns) */
	uint32_t tid;
	int kind;	  /* 0: a clock-profile sample; else the traced kind (sonde/kinds.h) */
	size_t index;	  /* traced: the event's index in sonde_exp_KIND_events() */
	uint64_t time_ns; /* the event's time (CLOCK_MONOTONIC) */
	const int64_t *v; /* its values: SONDE_MAX_METRICS of them, the table's
			   * metrics (sonde_profile_metrics) and zeros past them */
};

/* The events of one distinct experiment stack that passed the filters,
 * summed: what the per-line and per-instruction views (lib/views/view_source.c)
 * attribute to source lines and instructions. */
struct sonde_evstack {
	uint32_t exp;	    /* index of the experiment */
	uint32_t mstack;    /* the model's stack (sonde_model_stack) */
	uint64_t stack_id;  /* the experiment's stack id */
	uint64_t time_ns;   /* its first event's: which object held an address
			     * reused after dlclose, as for the model's stack */
	bool leaf_exact;    /* a sample's stack (leaf: the pc interrupted), not a trace's
			     * (leaf: a return address) */
	uint16_t tail_restored;	 /* frames restored in it (tail calls) */
	uint16_t tail_ambiguous; /* its gaps left alone: several chains of tail calls */
	bool excluded;	    /* the call-path filter leaves it out: v is 0 and mstack
			     * UINT32_MAX (it has no model stack) */
	/* A shaped stack's continuation (model/shape.h): the experiment's
	 * stacks its frames continue in, innermost first (a worker's: the
	 * stack that opened its region, at the fork), for the line and
	 * instruction views' inclusive values; ncont 0: none. */
	uint8_t ncont;
	struct sonde_evcont {
		uint64_t stack_id, time_ns;
	} cont[SONDE_SHAPE_LEVELS];
	int64_t v[SONDE_MAX_METRICS];
};

/* What restoring tail-call frames did (-statistics): over the distinct
 * stacks of the events used, and over the clock-profile samples on them. */
struct sonde_tailcall_stats {
	bool enabled;			 /* built with -tailcalls on */
	uint64_t stacks, samples;	 /* with at least one frame restored */
	uint64_t frames;		 /* frames restored, summed over those stacks */
	uint64_t amb_stacks, amb_samples; /* with a gap left alone: several chains */
};

/* A thread of one experiment, for the -threads view. */
struct sonde_pthread {
	uint32_t exp;	   /* index of the experiment */
	uint32_t number;   /* 1-based thread number within the experiment */
	uint32_t tid;
	/* its name when it had one of its own (not the process's: a thread
	 * the program or its runtime named, the JVM's "GC Thread#0"), NULL */
	const char *name;
	bool selected;	   /* passes thread_select */
	int64_t v[SONDE_MAX_METRICS]; /* its totals, selected or not, of the events
				       * that pass every other filter */
};

/* The totals of one CPU (sonde_profile_opts.index_cpus): the events that
 * pass every filter but the CPU selection. */
struct sonde_pcpu {
	uint32_t cpu;	   /* SONDE_CPU_UNKNOWN: events that recorded none */
	bool selected;	   /* passes cpu_select */
	int64_t v[SONDE_MAX_METRICS];
};
#define SONDE_CPU_UNKNOWN 0xffffu
/* A bitmap of the CPUs 0 .. SONDE_CPU_UNKNOWN - 1 (rounded up: CPU
 * 0xfffe's bit is in byte 8191). */
#define SONDE_CPU_SEL_BYTES ((SONDE_CPU_UNKNOWN + 7) / 8)

/* The totals of one second of the run (sonde_profile_opts.index_seconds):
 * the events that pass every filter from second s to s + 1 after their
 * experiment's start (several experiments: added by second). */
struct sonde_psecond {
	uint32_t second;
	int64_t v[SONDE_MAX_METRICS];
};

struct sonde_profile {
	struct sonde_model *model;
	size_t nexps;
	const struct sonde_exp *const *exps; /* as given; not owned */
	struct sonde_syms **syms;	     /* one per experiment; owned */
	struct sonde_pthread *threads;
	size_t nthreads;
	uint64_t samples_used, samples_filtered;
	struct sonde_evstack *ev;
	size_t nev;
	bool inlines; /* built with inlined functions in stacks */
	/* An experiment's stacks were shaped by a runtime's shaper
	 * (model/shape.h: OpenMP's, in user or expert mode). */
	bool shaped;
	struct sonde_tailcall_stats tail;
	/* Per model stack (sonde_model_stack's handle): bit k set when its
	 * function k (leaf first, k < 64) is a frame restored by a tail call
	 * ("(tail call)" in -dump and json).  NULL when none was. */
	uint64_t *tailmarks;
	size_t ntailmarks;
	struct sonde_pcpu *cpus;	/* index_cpus: by CPU number, unknown last */
	size_t ncpus;
	struct sonde_psecond *seconds;	/* index_seconds: by second, those with events */
	size_t nseconds;
	bool has_cpus, has_seconds;	/* built with index_cpus, index_seconds */
};

/* Every metric an experiment can give (gprofng's names), in value order:
 * each data kind's (model/kind.h), kind after kind in id order: the
 * clock profile's first (its module, lib/kinds/profile.c), at the
 * constants below, then the traced kinds'; *n gets their number.
 * sonde_profile_metric_index: the index of metric name, -1 for none. */
enum {
	SONDE_M_TOTALCPU, /* CPU time: user and system */
	SONDE_M_SAMPLES,  /* clock-profile samples (CPU samples) */
	/* Microstates (Oracle's names); a sample without them is all User CPU */
	SONDE_M_USER,	  /* User CPU Time: totalcpu - system */
	SONDE_M_SYSTEM,	  /* System CPU Time */
	SONDE_M_WAIT,	  /* Wait CPU Time: runnable, waiting for a CPU */
	/* A metric per thread state that has one (sonde/states.h), in id
	 * order: SONDE_M_STATE_NAME.  An off-CPU state's (User Lock Time:
	 * off-CPU samples blocked on a lock; Other Wait Time: blocked
	 * otherwise) is the weight of its samples; a CPU state's the CPU
	 * time of its samples, also in totalcpu. */
#define SONDE_M_STATE_(NAME, id, flags, M, ...) SONDE_STATE_METRIC_IF_(M, SONDE_M_STATE_##NAME, )
	SONDE_STATES(SONDE_M_STATE_)
#undef SONDE_M_STATE_
	/* A summed metric per SONDE_STATE_SUMS row (sonde/states.h):
	 * SONDE_M_SUM_NAME, the time of its member states' samples (OpenMP
	 * Wait Time). */
#define SONDE_M_SUM_(NAME, ...) SONDE_M_SUM_##NAME,
	SONDE_STATE_SUMS(SONDE_M_SUM_)
#undef SONDE_M_SUM_
	SONDE_M_TOTAL,	  /* Total Thread Time: totalcpu + wait + the off-CPU states' */
	SONDE_M_CLOCK_N
};
#define SONDE_M_ULOCK SONDE_M_STATE_USER_LOCK
#define SONDE_M_OWAIT SONDE_M_STATE_OTHER_WAIT
/* The clock-profile values of one sample (SONDE_M_CLOCK_N of them, into v). */
void sonde_clock_values(const struct sonde_sample *s, int64_t *v);
/* The metric of thread state st (sonde/states.h), -1 for a state without
 * one or not in the table. */
int sonde_state_metric(unsigned st);
const struct sonde_metric_def *sonde_profile_metrics(int *n);
int sonde_profile_metric_index(const char *name);
/* The same table a row at a time: how many, and metric i of them. */
int sonde_nmetrics(void);
const struct sonde_metric_def *sonde_metric(int i);

/* The derived metrics (metrics.h: CPI = cycles / insts, IPC = insts /
 * cycles), *n of them.  A profile's model has those that one of its
 * experiments recorded both parts of (sonde_derived_recorded), after its
 * other metrics (sonde_model_nall).  sonde_derived_known: whether both its
 * parts are metrics of the table (the counters' slots are named by the
 * experiments' log.xml: what -metrics and -sort accept before the
 * experiments are read). */
const struct sonde_derived_def *sonde_derived_metrics(int *n);
bool sonde_derived_known(const struct sonde_derived_def *d);
bool sonde_derived_recorded(const struct sonde_exp *exp, const struct sonde_derived_def *d);

/* The default metrics of traced kind id (sonde/kinds.h) when an experiment
 * has it: an -metrics spec of its main metrics, each ending in ':'
 * ("e.sync:i.sync:e.syncn:"), and in *sort (when sort is not NULL) the
 * metric to sort by when the kind leads.  NULL when the model has no
 * metrics for the kind. */
const char *sonde_kind_default_metrics(int kind, const char **sort);

/* Whether experiment exp recorded metric m: totalcpu and samples when it
 * was clock-profiled; user, system and wait when it has microstates;
 * an off-CPU state's (ulock, owait) when it recorded off-CPU time; a CPU
 * state's when it has samples in that state; total with microstates or
 * off-CPU time; a
 * traced kind's metrics when it traced the kind (the counters: only the
 * slots its log.xml names, model/kind.h's recorded).  (A profile without
 * microstates still gives user and total their values, all its CPU time:
 * views that list what was recorded leave them out.) */
bool sonde_metric_recorded(const struct sonde_exp *exp, int m);

/* The traced kind (sonde/kinds.h) whose events feed metric (an index of
 * sonde_metrics), or 0 for the clock-profiling metrics (whose module is
 * the profile kind's, but whose samples the builder feeds itself). */
int sonde_metric_kind(int metric);

/* Builds p from nexps experiments (which must outlive p).  Returns 0, or -1
 * with a message in err: a malformed thread or object list, an object list
 * naming no load object, a malformed sample list, or out of memory. */
int sonde_profile_build(struct sonde_profile *p, const struct sonde_exp *const *exps, size_t nexps,
			const struct sonde_profile_opts *o, char *err, size_t errlen);
void sonde_profile_release(struct sonde_profile *p);

/* Parse an er_print number list ("all", "3", "1,3-5") into a bitmap of
 * 1-based numbers up to max: sel[n] for n in 1..max.  Returns 0, or -1 with
 * a message in err. */
int sonde_parse_list(const char *spec, bool *sel, size_t max, char *err, size_t errlen);

/* Parse a CPU list ("all", "0", "0,2-5") into a bitmap of CPU numbers
 * 0 .. SONDE_CPU_UNKNOWN - 1 (sel: SONDE_CPU_SEL_BYTES bytes); NULL or
 * "all" sets every bit.  Returns 0, or -1 with a message in err. */
int sonde_parse_cpu_list(const char *spec, uint8_t *sel, char *err, size_t errlen);

/*
 * A call-path filter: comma-separated terms, each FUNC (the stack holds a
 * frame of FUNC) or CALLER>CALLEE (a frame of CALLER directly calls one of
 * CALLEE); a stack passes when one term holds.  A function is named by its
 * long, short or mangled name.  ',' and '>' inside <...> (C++ template
 * arguments) belong to the name.  Parsed into n terms of names (pointers
 * into one allocation, *buf, to free); 0, or -1 with a message.
 */
#define SONDE_CALLPATH_MAX 32
struct sonde_callpath_term {
	const char *caller; /* NULL for a FUNC term */
	const char *func;
};
int sonde_callpath_parse(const char *spec, struct sonde_callpath_term *t, size_t *n, char **buf, char *err,
			 size_t errlen);

/* Whether spec is a valid CPU list / call-path filter, for the commands that
 * take them as options (a function no experiment has is found at the build).
 * 0, or -1 with a message in err. */
int sonde_cpu_list_check(const char *spec, char *err, size_t errlen);
int sonde_callpath_check(const char *spec, char *err, size_t errlen);

#endif
