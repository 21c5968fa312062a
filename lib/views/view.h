/*
 * view: the er_print views of a metrics model (lib/model/metrics.h) and the
 * command language's parsers, shared by `sonde print` and the tests.
 *
 *	struct sonde_view_opts o;
 *	sonde_view_opts_init(&o);			(e.%totalcpu:i.%totalcpu:name)
 *	sonde_mspec_parse(&o.metrics, "e.%totalcpu:i.totalcpu:name", err, sizeof err);
 *	sonde_sort_parse(&o.sort, "i.totalcpu", err, sizeof err);
 *	sonde_view_functions(stdout, model, &o, err, sizeof err);
 *
 * Metric specs (er_print's grammar): colon-separated items, each
 * FLAVOR VISIBILITY NAME or the word "name":
 *
 *   FLAVOR      one or more of e (exclusive), i (inclusive), a (attributed:
 *               callers-callees only; elsewhere such items are not shown)
 *   VISIBILITY  one or more of . (the value: time metrics in seconds),
 *               + (the value; for time metrics the same as .) and
 *               % (percent of <Total>)
 *   NAME        a metric's er_print name ("totalcpu", "samples"), or a
 *               derived metric's ("CPI", "IPC": a ratio, which has no %)
 *
 * "ei.%totalcpu" stands for "e.%totalcpu:i.%totalcpu".  "default" is the
 * default spec.  The name column is always shown, last.  A spec naming a
 * metric twice with one flavour, an unknown metric or a malformed item is
 * an error.  Metric names are checked against sonde_view_known_metrics()
 * when parsed and against the model's metrics when a view runs.
 *
 * Output: every view writes one of three forms, chosen by opts.mode, through
 * the emitter (views/emit.h), which alone looks at the mode:
 *
 *   text  er_print's layout: a title line ("Functions sorted by metric:
 *         Exclusive Total CPU Time"), column headers stacked over lines
 *         ("Excl. Total" / "CPU" / " sec.      %"), <Total> first, the name
 *         last; the sort column's title ends with '*'.  Times in seconds
 *         with 3 decimals, percentages with 2, zeros as "0." aligned on
 *         the decimal point.
 *   csv   one header line, then one line per row; the columns are the
 *         row's identity ("name", "object", ...) then, for every metric
 *         item, its raw value ("e.totalcpu", ns or a count) and, when the
 *         item shows a percentage, the percentage ("e.%totalcpu", not
 *         rounded).  Fields with a comma, quote or newline are quoted.
 *   json  one JSON document per view on one line (JSON Lines when several
 *         views run), with the same keys as the csv columns.
 *
 * Percentages are of <Total>, except the attributed columns of a
 * callers-callees block, which are percentages of the selected function's
 * inclusive metric (as gprofng shows them).
 *
 * Library code: views write to the FILE given and return 0, or a negated
 * code of base/error.h with a one-line message in err:
 * -SONDE_ERR_NOT_RECORDED for a metric this model lacks,
 * -SONDE_ERR_NO_MATCH for a -source name that names nothing with data,
 * -SONDE_ERR_FAILED (-1) for the rest (a write error, out of memory).
 * Nothing here exits.
 */
#ifndef SONDE_VIEW_H
#define SONDE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/timerange.h"
#include "reader/experiment.h"
#include "model/metrics.h"
#include "model/shape.h"
#include "views/emit.h"

struct sonde_tailcall_stats;

struct sonde_profile;

/* ---- metric and sort specs ------------------------------------------------ */

#define SONDE_VIS_VALUE 1u
#define SONDE_VIS_PCT 2u

#define SONDE_MSPEC_MAX 48
#define SONDE_MNAME_MAX 32

struct sonde_mitem {
	char flavor;  /* 'e', 'i' or 'a' */
	unsigned vis; /* SONDE_VIS_* bits, at least one */
	char metric[SONDE_MNAME_MAX];
};

struct sonde_mspec {
	int n;
	struct sonde_mitem item[SONDE_MSPEC_MAX];
};

/* The metric names a spec may use: every metric of the table
 * (sonde_profile_metrics), then the derived metrics (CPI, IPC) whose parts
 * are in it: sonde_view_known_derived(i) is derived metric i's (of
 * sonde_derived_metrics) description when it is, else NULL.  A derived
 * metric is a ratio: an item that asks for its percentage ("e.%CPI") is
 * refused. */
const struct sonde_metric_def *sonde_view_known_metrics(int *n);
const struct sonde_metric_def *sonde_view_known_derived(int i);

/* Parses spec into *s.  Returns 0, or -1 with a message in err (and *s
 * unchanged). */
int sonde_mspec_parse(struct sonde_mspec *s, const char *spec, char *err, size_t errlen);

/* Writes the spec back in er_print's form: "e.%totalcpu:i.%totalcpu:name". */
void sonde_mspec_format(const struct sonde_mspec *s, char *buf, size_t len);

/* A sort key: a metric with a flavour, or the name (by_name). */
struct sonde_sortkey {
	bool by_name;
	char flavor; /* 'e', 'i' or 'a' */
	char metric[SONDE_MNAME_MAX];
};

/* Parses "e.totalcpu", "i.%totalcpu", "totalcpu" (exclusive) or "name"; a
 * visibility, when given, is ignored.  Returns 0, or -1 with a message. */
int sonde_sort_parse(struct sonde_sortkey *k, const char *spec, char *err, size_t errlen);

/* "Exclusive Total CPU Time", "Name"; the metric's name when unknown. */
void sonde_sort_title(const struct sonde_sortkey *k, char *buf, size_t len);

/* ---- options ---------------------------------------------------------------- */

/* DEFAULT, when no -name is given: the long name, but without what a
 * reader rarely wants (a Rust symbol's hash); LONG: everything. */
enum sonde_namefmt { SONDE_NAME_LONG, SONDE_NAME_SHORT, SONDE_NAME_MANGLED, SONDE_NAME_DEFAULT };
enum sonde_compare { SONDE_CMP_OFF, SONDE_CMP_ON, SONDE_CMP_DELTA, SONDE_CMP_RATIO };

struct sonde_view_opts {
	struct sonde_mspec metrics;
	struct sonde_sortkey sort;
	size_t limit; /* rows after <Total>; 0: all */
	enum sonde_namefmt names;
	enum sonde_printmode mode;
	enum sonde_compare compare;
	/* -sample_select: "all" (or NULL), or sample numbers and ranges;
	 * the views that read events themselves (-samples and the tracing
	 * views) filter with it; the metrics model is built filtered. */
	const char *sample_select;
	/* -time: only events from start_ns to end_ns (0: no end) after the
	 * experiment's start, in the same views. */
	uint64_t start_ns, end_ns;
	/* Annotated source and disassembly (lib/views/view_source.c): lines and
	 * instructions whose metric reaches this percentage of the largest
	 * in the view are marked hot ("## "); er_print's -sthresh, -dthresh. */
	double sthresh, dthresh;
	/* Where source files are looked for: -pathmap OLD NEW pairs
	 * (pathmap[2k] -> pathmap[2k + 1], prefixes of recorded paths) and
	 * -addpath directories, in the order given. */
	const char *const *pathmap;
	size_t npathmap;
	const char *const *addpath;
	size_t naddpath;
	/* -statistics: what restoring tail-call frames did in the profile
	 * (model/profile.h), shown after the experiments' figures; NULL:
	 * not shown. */
	const struct sonde_tailcall_stats *tailcalls;
	/* -calltree: the profile's marks of restored tail-call frames per
	 * model stack (model/profile.h, sonde_profile.tailmarks): json and
	 * csv then give each node a field tail_call, 1 when the node is such
	 * a frame on some stack through it.  NULL: no field. */
	const uint64_t *tailmarks;
	size_t ntailmarks;
	/* -fsummary, -lsummary, -psummary: the list views (-functions,
	 * -lines, -pcs) show each row as a block of its metrics (text; csv
	 * and json are the lists'), functions with their object, address and
	 * mangled name. */
	bool summary;
	/* -name ...:soname: function names followed by " [<object>]" in text
	 * (csv and json have the object in a field of its own). */
	bool soname;
	/* -viewmode: er_print's user, expert or machine view.  Machine mode
	 * shows inlined code as the function it was inlined into (the
	 * command folds inlines: see cmd/print.c); the profile builder shapes
	 * the stacks of a runtime that has a shaper (model/shape.h: OpenMP)
	 * in user and expert mode (sonde_profile_opts.viewmode, the same
	 * order).  Without such a runtime the modes show the same frames. */
	enum sonde_viewmode { SONDE_VIEW_USER, SONDE_VIEW_EXPERT, SONDE_VIEW_MACHINE } viewmode;
};
_Static_assert((int)SONDE_VIEW_USER == (int)SONDE_SHAPE_USER && (int)SONDE_VIEW_EXPERT == (int)SONDE_SHAPE_EXPERT &&
		       (int)SONDE_VIEW_MACHINE == (int)SONDE_SHAPE_MACHINE,
	       "the views' view modes are the profile builder's");

/* Defaults: e.%totalcpu:i.%totalcpu:name, sorted by e.totalcpu, no
 * limit, long names, text. */
void sonde_view_opts_init(struct sonde_view_opts *o);

/* Parsers of the other settings' words; 0, or -1 with a message. */
int sonde_namefmt_parse(enum sonde_namefmt *n, const char *s, char *err, size_t errlen);
/* -name's argument as er_print takes it: long|short|mangled, optionally
 * followed by ":soname" or ":nosoname" (*soname). */
int sonde_name_parse(enum sonde_namefmt *n, bool *soname, const char *s, char *err, size_t errlen);
int sonde_viewmode_parse(enum sonde_viewmode *v, const char *s, char *err, size_t errlen);
int sonde_compare_parse(enum sonde_compare *c, const char *s, char *err, size_t errlen);
int sonde_limit_parse(size_t *limit, const char *s, char *err, size_t errlen);

/* A function's name in the chosen form. */
const char *sonde_view_funcname(const struct sonde_mfunc *f, enum sonde_namefmt names);
struct sonde_func;
/* The same of a symbol table's function (lib/symbols/symbols.h). */
const char *sonde_view_symname(const struct sonde_func *f, enum sonde_namefmt names);

/* ---- finding a function by name (-fsingle, -csingle) ------------------------- */

/*
 * Looks name up among the model's functions: the functions whose name in
 * the chosen form equals name, else those whose long, short or mangled name
 * does.  "NAME:N" picks the N-th (1-based) of the candidates that NAME
 * alone finds, in the order listed.  Returns the number of candidates:
 * 1 with the function in *func; 0 when there is none; more than one when
 * the name is ambiguous, with up to max of them in cands (ordered by
 * object and address) when cands is not NULL.
 */
size_t sonde_view_find(const struct sonde_model *m, const char *name, enum sonde_namefmt names,
		       uint32_t *func, uint32_t *cands, size_t max);

/* ---- views -------------------------------------------------------------------- */

/* The function list: <Total>, then every function sorted, up to the limit. */
int sonde_view_functions(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			 char *err, size_t errlen);

/* The load objects, the same way (exclusive and inclusive metrics). */
int sonde_view_objects(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		       char *err, size_t errlen);

/* One function's summary: every metric item of the spec (e and i), its
 * load object, address and names. */
int sonde_view_fsingle(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		       uint32_t func, char *err, size_t errlen);

/*
 * Callers-callees blocks: for each selected function (all functions in
 * sort order, up to the limit, preceded by <Total>, when func is
 * UINT32_MAX; else only func), its callers, itself marked with '*', and
 * its callees.  Columns: the attributed items of the spec (when it has
 * none, one attributed item per metric of its e and i items, with their
 * visibility), then its e and i items, which show each listed function's
 * own exclusive and inclusive metrics.  The selected function's
 * attributed value is its exclusive metric.  A function that starts some
 * stacks has <Total> as a caller.  Rows sorted by the attributed value of
 * the sort metric.
 */
int sonde_view_callers_callees(FILE *f, const struct sonde_model *m,
			       const struct sonde_view_opts *o, uint32_t func, char *err,
			       size_t errlen);

/*
 * A callers-callees stack fragment (er_print's cprepend, cappend,
 * crmfirst, crmlast after csingle): frag[0..n) a call path, caller
 * first.  The stacks that hold it (its lowest occurrence, nearest the
 * leaf, once per stack) give its callers (the function before frag[0],
 * <Total> when it starts the stack), its own value (stacks that end at
 * frag[n-1]) and its callees (the function after frag[n-1]), all as
 * attributed metrics, percentages of the fragment's total.  Text in
 * gprofng's layout: Callers, Stack Fragment and Callees sections.
 */
int sonde_view_fragment(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			const uint32_t *frag, size_t n, char *err, size_t errlen);

/* The call tree: <Total>, then every call path depth first, children in
 * order of their inclusive sort metric; each node shows the e and i items
 * of the spec (its own exclusive and inclusive metrics).  The limit caps
 * the nodes printed. */
int sonde_view_calltree(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			char *err, size_t errlen);

/* -calltree -inverted: the bottom-up tree (metrics.h,
 * sonde_model_tree_inverted), printed the same way: the leaf functions as
 * roots, each with the callers of its path under it; a node's inclusive
 * items show the events whose stack begins, leaf first, with its path,
 * its exclusive items those whose whole stack it is. */
int sonde_view_calltree_inverted(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
				 char *err, size_t errlen);

/*
 * Per-thread totals of a profile (lib/model/profile.h): the selected threads,
 * each with its experiment, thread number and tid, one column per metric
 * of the spec (its e, i and a items alike: a thread's exclusive and
 * inclusive totals are the same).
 */
int sonde_view_threads(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o,
		       char *err, size_t errlen);

/* ---- index objects and filters (lib/views/view_index.c) ----------------------------------
 *
 * -cpus and -seconds: the totals of a profile built with index_cpus /
 * index_seconds (profile.h), laid out as -threads: one row per selected
 * CPU ("CPU 3"; events that recorded none: "CPU unknown") or per second of
 * the run with events ("Second of execution 2", gprofng's names), a column
 * per metric of the spec, sorted by the sort metric (by name: by number),
 * <Total> first.  csv / json: cpu or second, name, the metrics. */
int sonde_view_cpus(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o, char *err,
		    size_t errlen);
int sonde_view_seconds(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o, char *err,
		       size_t errlen);

/* gprofng's index object types and the view each is (-indxobj TYPE). */
enum sonde_indxobj_kind {
	SONDE_IDX_THREADS, SONDE_IDX_CPUS, SONDE_IDX_SAMPLES, SONDE_IDX_SECONDS, SONDE_IDX_PROCESSES,
	SONDE_IDX_EXPERIMENTS,
};
struct sonde_indxobj {
	const char *name; /* gprofng's: "Threads" */
	enum sonde_indxobj_kind kind;
	const char *command; /* the view's command: "threads" */
	const char *what;
};
/* The type named name (any case), or NULL; its names joined by ", ". */
const struct sonde_indxobj *sonde_indxobj_find(const char *name);
void sonde_indxobj_names(char *buf, size_t len);
/* -indxobj_list: the types, with their commands. */
void sonde_view_indxobj_list(FILE *f, const struct sonde_view_opts *o);

/* The filters sonde print has in force; a NULL or "all" list is none. */
struct sonde_filters {
	const char *experiments; /* -experiment_select's list */
	size_t nsel, nall;	 /* experiments selected, loaded */
	const char *threads, *cpus, *samples, *objects, *callpath;
	uint64_t start_ns, end_ns; /* -time_select; both 0: none */
};
/* -filters: one line per filter, "all" for none; csv / json: filter,
 * command, value. */
void sonde_view_filters(FILE *f, const struct sonde_filters *fl, const struct sonde_view_opts *o);

/* -describe: per experiment, the data it recorded (the clock profile, each
 * traced kind) with its number of events and its fields (the fields of
 * sonde agg's event kinds, which its predicates filter on), then sonde
 * print's filters.  csv: experiment, kind, field, type, description. */
void sonde_view_describe(FILE *f, const struct sonde_exp *const *exps, const char *const *names, size_t n,
			 const struct sonde_view_opts *o);

/* Process statistics of each experiment from its overview packets (first
 * to last): user and system time, page faults, block I/O, context
 * switches, maximum resident size; with the duration, recorded CPU time,
 * threads and samples.  Several experiments: each, then their sum. */
int sonde_view_statistics(FILE *f, const struct sonde_exp *const *exps, size_t n,
			  const struct sonde_view_opts *o, char *err, size_t errlen);

/* The current metrics and sort, and the metrics available (of the model,
 * or the known metrics when m is NULL), in er_print's form. */
int sonde_view_metric_list(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			   char *err, size_t errlen);

/*
 * -compare: the function list (objects: the load-object list) of n
 * models side by side, one column per experiment for every metric item
 * (names[i] above each).  Functions are matched by load object name and
 * mangled name.  Delta: the second and later experiments show the
 * difference from the first; ratio: the quotient ("x 1.250").  Sorted by
 * the first experiment's sort metric.
 */
int sonde_view_compare(FILE *f, const struct sonde_model *const *models, const char *const *names,
		       size_t n, bool objects, const struct sonde_view_opts *o, char *err,
		       size_t errlen);

/* ---- global (sampling) data (lib/views/view_samples.c) ---------------------------------------
 *
 * -samples: one row per sample (the interval between two sample points)
 * of each experiment, only those -sample_select picks: its number, start
 * and end (seconds from the experiment's start), the reason and label of
 * the point that ends it, the clock-profile CPU time and samples in it,
 * the traced sync wait, heap bytes allocated and I/O bytes in it, and the
 * process's usage counters over it (user and system time, minor and major
 * faults, blocks in and out, voluntary and involuntary context switches)
 * with the resident size at its end.  csv columns / json keys:
 * experiment, sample, start, end, reason, label, totalcpu, samples, sync,
 * heapallocbytes, iobytes, user, system, minflt, majflt, inblock, oublock,
 * nvcsw, nivcsw, rss_kb, maxrss_kb (times in ns).
 *
 * -overview: per experiment, the sample points by reason, the usage over
 * the run, and a timeline of CPU use per sample (at most 40 lines).
 */
int sonde_view_samples(FILE *f, const struct sonde_exp *const *exps, size_t n,
		       const struct sonde_view_opts *o, char *err, size_t errlen);
int sonde_view_overview(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen);

/* ---- tracing views (lib/views/view_trace.c) ------------------------------------------------ */

/*
 * These read the traced events of the experiments themselves (not the
 * metrics model): the -metrics and -sort settings do not apply; -limit
 * caps the groups shown, -name picks the form of function names and
 * -printmode the output.  Several experiments are added together; stacks
 * and objects are grouped per experiment, files by name.  Stacks are
 * shown as function names, leaf (the traced function's caller) first,
 * the collector's frames folded away.  Experiments without data of the
 * kind contribute nothing.
 */

/* 0 when at least one experiment traced kind (a traced kind of
 * sonde/kinds.h); else -1 with "test.1.er has no heap tracing data
 * (collect with -H on)" in err, from the kind's title and option (names:
 * the experiments as the user gave them, or NULL). */
int sonde_view_trace_check(const struct sonde_exp *const *exps, const char *const *names, size_t n,
			   int kind, char *err, size_t errlen);

/*
 * -leaks (leaks true) and -allocs: allocations never freed (lib/reader/heapleaks.c)
 * or all allocations, grouped by allocation stack, largest bytes first
 * (then count): text "N leaks, B bytes", then per stack "Leak #1: 2 leaks,
 * 4000 bytes (44.44%)" and its functions one a line; csv "leaks,bytes,stack"
 * (stack: names joined by ';', the first row <Total>); json {"view":"leaks",
 * "leaks":N,"bytes":B,"stacks":S,"rows":[{"leaks":..,"bytes":..,"stack":[..]}]}.
 */
int sonde_view_heap_stacks(FILE *f, const struct sonde_exp *const *exps, size_t n, bool leaks,
			   const struct sonde_view_opts *o, char *err, size_t errlen);

/*
 * -heapstat: allocations, bytes allocated, leaks, bytes leaked, frees,
 * unmatched frees (of blocks allocated before tracing), failed
 * allocations, the peak of live bytes (events in time order, frees
 * matched to their allocations as lib/reader/heapleaks.c matches them; several
 * experiments: the largest peak), the largest and smallest allocation,
 * and the allocations (count and bytes) in power-of-two size buckets.
 */
int sonde_view_heapstat(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen);

/*
 * heaptrack's views, from the heap trace as -leaks reads it.
 *
 * -heap_peak: the peak of live bytes (the first event that reached the
 * largest total, as -heapstat finds it) and, per allocation stack, the
 * bytes and blocks of it live at that moment and the stack's
 * allocations, largest bytes first (heaptrack's "peak memory consumers";
 * several experiments: each one's own peak).
 *
 * -heap_temporary: per allocation stack, the temporary allocations (freed
 * by the thread's next heap event, no allocation or free in between:
 * heaptrack's definition, per thread; lib/reader/heapleaks.c) of its
 * allocations, most first.  Both show only stacks with a part in them.
 *
 * -heap_timeline: per experiment, the run in at most 40 buckets (1, 2 or
 * 5 times a power of ten, at least 1 ms): allocations, bytes allocated,
 * frees, the live bytes at the bucket's end and the most within it (the
 * largest of which is the peak).
 */
int sonde_view_heap_peak(FILE *f, const struct sonde_exp *const *exps, size_t n,
			 const struct sonde_view_opts *o, char *err, size_t errlen);
int sonde_view_heap_temporary(FILE *f, const struct sonde_exp *const *exps, size_t n,
			      const struct sonde_view_opts *o, char *err, size_t errlen);
int sonde_view_heap_timeline(FILE *f, const struct sonde_exp *const *exps, size_t n,
			     const struct sonde_view_opts *o, char *err, size_t errlen);

/*
 * -mpi (lib/views/view_mpi.c): over every experiment given (the ranks of a
 * job), the traced MPI calls by function (calls, MPI Time, the sends and
 * receives they moved and their bytes, collective bytes; <Total> first,
 * sorted by MPI Time), by peer (the calls naming a rank, and the messages
 * to and from it) and the messages by size (buckets of powers of 4).  The
 * sample selection and -time window apply, by each call's or message's
 * time.  json {"view":"mpi","functions":[...],"peers":[...],"sizes":[...]};
 * csv one header, rows "function", "peer", "size".
 */
int sonde_view_mpi(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
		   char *err, size_t errlen);

/*
 * -io: per file (the name the trace recorded, "<fd N>" when unknown) read
 * bytes, count and time, write bytes, count and time, other calls and
 * their time, failed calls and their time (the metrics ioreadbytes ...
 * ioerrortime: a failed call counts only as an error), sorted by bytes read
 * and written, then calls; <Total> first.
 */
int sonde_view_io(FILE *f, const struct sonde_exp *const *exps, size_t n,
		  const struct sonde_view_opts *o, char *err, size_t errlen);

/* -iodetail: -io with a row per file and descriptor, "FILE (FD=N)"
 * (er_print's iodetail, by file descriptor). */
int sonde_view_iodetail(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen);

/* -iostat: er_print's I/O statistics: writes and reads (calls per size
 * range, longest time, smallest and largest bytes, total time, calls and
 * bytes), other calls and failed calls (longest and total time, calls),
 * classed as -io classes them. */
int sonde_view_iostat(FILE *f, const struct sonde_exp *const *exps, size_t n,
		      const struct sonde_view_opts *o, char *err, size_t errlen);

/* -iostacks: I/O by call stack, sorted by bytes, then calls: the top 20
 * (or -limit) stacks with their calls, bytes, time and calls by class. */
int sonde_view_iostacks(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen);

/* -sync: sync waits by object (lock, condition variable, ..., joined
 * thread): total wait time, count, longest wait and the functions used,
 * sorted by wait time; the heading gives each experiment's threshold. */
int sonde_view_sync(FILE *f, const struct sonde_exp *const *exps, size_t n,
		    const struct sonde_view_opts *o, char *err, size_t errlen);

/* ---- source lines and instructions (lib/views/view_source.c) --------------------------------
 *
 * Metrics per source line and per instruction, from the distinct stacks
 * of a profile (profile.h, ev): a line's or an instruction's exclusive
 * metric is that of the events whose leaf is there; its inclusive metric
 * that of the events with it anywhere on the stack, once per stack.  A
 * caller's frame is the call instruction (the return address - 1) and
 * its source line; code inlined at a line counts for the inlined
 * function's own line (exclusive) and, inclusive, for the line of every
 * call it was inlined at.  The collector's own frames are left out, as in
 * the function list.
 */

/* -lines: every source line with data, as "hot_loop, line 27 in \"srclines.c\""
 * (the function at that line, innermost when inlined), sorted and limited
 * like -functions.  csv / json: name, function, file, line. */
int sonde_view_lines(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o,
		     char *err, size_t errlen);

/* -pcs: every instruction with data, as "hot_loop + 0x1a", sorted and
 * limited like -functions.  csv / json: name, function, object, address
 * (the object's own, hex). */
int sonde_view_pcs(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o,
		   char *err, size_t errlen);

/*
 * -source FUNC|FILE: the source file that defines model function func
 * (when not UINT32_MAX), or `file` (a path, a trailing
 * part of one, or a base name of a file with data), every line with its
 * exclusive and inclusive metrics, lines at or above -sthresh marked,
 * "<Function: NAME>" before each function's first line and "<inlined:
 * NAME>" after the lines where NAME was inlined.  The text is read from
 * the experiment's archived copy (sonde archive -a src), then the paths
 * -pathmap makes of the recorded one, the recorded path, and the
 * -addpath directories; when none can be read the error names the file
 * and where it looked.
 */
int sonde_view_source(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o, uint32_t func,
		      const char *file, char *err, size_t errlen);

/*
 * -disasm FUNC: model function func's instructions (capstone; lib/symbols/disasm.h) with their
 * exclusive and inclusive metrics (a call's inclusive metric is the time
 * of the calls made there), each run of instructions of one source line
 * preceded by that line, branch and call targets named ("<hot_loop+0x1a>",
 * "<printf@plt>"), instructions at or above -dthresh marked.  Works on
 * stripped objects (without the source lines, a note says so).
 */
int sonde_view_disasm(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o, uint32_t func,
		      char *err, size_t errlen);

/* sonde_time_parse (-time of sonde print, export and report): base/timerange.h. */

#endif
