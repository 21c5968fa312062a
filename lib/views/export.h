/*
 * export: the formats of `sonde export` (doc/sonde-export.md), one table of
 * writers.  Each format is one file that writes it from the profile of
 * the experiments (lib/model/profile.h) through a FILE *:
 *
 *   pprof       export_pprof.c       gzip-compressed profile.proto
 *   folded      export_folded.c      collapsed stacks, "root;...;leaf VALUE"
 *   speedscope  export_speedscope.c  speedscope's JSON file format
 *   chrome      export_chrome.c      the Trace Event Format (JSON object)
 *
 *	struct sonde_export_opts o;
 *	sonde_export_opts_init(&o);
 *	o.metric = "heapleakbytes";		(NULL: the experiments' default)
 *	o.filter.thread_select = "1,3";		(the filters of sonde print)
 *	sonde_export_write(f, sonde_export_find("pprof"), exps, n, &o, err, sizeof err);
 *
 * This file (export.c) builds what every writer reads, once: the profile
 * with sonde print's filters (the same sonde_profile_build), the chosen
 * metric and the metrics the experiments recorded, the functions' names
 * as valid UTF-8 (raw and JSON-quoted), and for the timelines (speedscope,
 * chrome) the filtered events one by one, by thread in time order, with
 * their runs (consecutive events of one stack merged) or, over a budget,
 * their bins (see sonde_export_runs).
 *
 * How to add a format: write its writer in lib/views/export_NAME.c, declare
 * it below, add one row to the table in export.c; a unit test that decodes
 * what it writes (tests/unit/test_export.c) and a real reader's check in
 * tests/t60-export.sh.
 *
 * Library code: a writer returns 0, or a negated enum sonde_err
 * (base/error.h) with a one-line message in err; notes for the user (a
 * timeline coarsened to fit its budget) go to opts.note.  Nothing here
 * exits or prints to stderr.
 */
#ifndef SONDE_EXPORT_H
#define SONDE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "reader/experiment.h"
#include "model/metrics.h"
#include "model/profile.h"
#include "views/view.h"

/* max_units: the format's own budget (a row of the table). */
#define SONDE_EXPORT_DEFAULT_UNITS SIZE_MAX

struct sonde_export_opts {
	const char *metric;		  /* a metric's name (sonde_profile_metrics); NULL: the default */
	struct sonde_profile_opts filter; /* sonde print's filters; its each is the export's */
	enum sonde_namefmt names;	  /* function names, as sonde print's -name */
	/* A timeline's budget (the format's units: speedscope's frames,
	 * chrome's events); SONDE_EXPORT_DEFAULT_UNITS: the format's default;
	 * 0: none, every event at its time however large the file. */
	size_t max_units;
	/* Called with notes for the user (a timeline's events merged into
	 * bins to fit its budget); NULL: none. */
	void (*note)(void *arg, const char *msg);
	void *note_arg;
};

/* Defaults: the default metric, no filter, long names, the default budget. */
void sonde_export_opts_init(struct sonde_export_opts *o);

/* One event of a timeline: its time, value and model stack. */
struct sonde_xev {
	uint64_t t;	/* ns, CLOCK_MONOTONIC: when it ended (a sample) or started (a traced call) */
	int64_t v;	/* the value it carries */
	uint32_t stack; /* the model's stack (sonde_model_stack_funcs) */
};

/* A thread of the timelines and its events, in time order. */
struct sonde_xthread {
	uint32_t exp, tid;
	uint32_t number; /* as -threads numbers it (1 = the first of its experiment) */
	const char *name; /* its own name, as -threads shows it; NULL none */
	struct sonde_xev *ev;
	size_t n, cap;
};

/* A traced call (chrome's duration events): an event of a kind whose
 * timeline part has spans (views/kind.h: sync waits, I/O calls). */
struct sonde_xcall {
	uint32_t exp, thread, stack;
	int kind;     /* its kind (sonde/kinds.h) */
	size_t index; /* in sonde_exp_KIND_events() */
	uint64_t t, dur;
};

/* An event's value of the chosen metric (chrome's counter). */
struct sonde_xpoint {
	uint64_t t;
	int64_t v;
	uint32_t exp;
};

/* What a writer reads (export.c builds it). */
struct sonde_export {
	const struct sonde_export_opts *o;
	size_t budget; /* the timeline's budget in force; 0: none */
	const struct sonde_exp *const *exps;
	size_t nexps;
	struct sonde_profile p;	   /* built with o->filter */
	int metric;		   /* the chosen metric: an index of sonde_profile_metrics */
	bool recorded[SONDE_MAX_METRICS]; /* what the experiments recorded (clock profiling, traced kinds) */
	uint64_t t0;		   /* the earliest experiment's start (ns) */
	/* Per model function: its name in o->names form as valid UTF-8
	 * (control characters '?', bytes that are not UTF-8 as U+F7XY as
	 * sonde/utf8.h says), and the same JSON-quoted. */
	char **name, **jname;
	/* Timelines only (the format's timeline flag): */
	struct sonde_xthread *threads; /* in experiment and thread number order */
	size_t nthreads;
	struct sonde_xcall *calls; /* chrome: in time order */
	size_t ncalls;
	struct sonde_xpoint *pts; /* chrome, a metric not of the events (below): its events' values */
	size_t npts;
};

/* Whether chrome's counter of metric m adds up the timeline's events,
 * which carry their CPU time (totalcpu; samples counts them); any other
 * metric's counter (a traced kind's, or a clock metric that is a part of
 * the CPU time or more than it: user, system, wait, a thread state's,
 * total) adds up points of its own, every event's value of m (pts). */
static inline bool sonde_export_counter_of_events(int m)
{
	return m == SONDE_M_TOTALCPU || m == SONDE_M_SAMPLES;
}

/* What a timeline writes for one thread: a run is one stack over a span
 * of the thread's events.  At full resolution a run is consecutive events
 * of one stack (start: its first event's time minus its value for a time
 * metric, else its first event's time; end: its last event's); in a
 * binned timeline a run is all the events of one stack in a bin, the
 * bin's runs in call-path order (shared callers together). */
struct sonde_xrun {
	uint32_t stack;
	int64_t v;	/* the events' values summed */
	uint64_t start; /* ns */
	uint64_t end;
};

/* The runs of every thread, given to emit in thread order.  timed
 * (chrome): the events are clock samples placed in time, each its CPU
 * time before it, and a run merges only samples that touch (a gap of
 * more than a tenth of a sample starts a new run, and a run never starts
 * before the previous one ends); else a run is consecutive events
 * whatever their times.  cost(run, prev, arg) is what a run adds to the file (speedscope:
 * its depth; chrome: the frames it does not share with the previous run);
 * when the full-resolution runs of all threads cost more than the budget
 * (o->max_units, when not 0), events are merged in bins of a width chosen
 * to fit it (doubled until they do, a note says which width).  Returns 0,
 * or -1 out of memory or when emit returned -1. */
int sonde_export_runs(struct sonde_export *x, bool timed,
		      size_t (*cost)(const struct sonde_export *x, const struct sonde_xrun *r,
							      const struct sonde_xrun *prev),
		      int (*emit)(struct sonde_export *x, size_t thread, const struct sonde_xrun *runs, size_t n,
				  uint64_t bin_ns, void *arg),
		      void *arg);

struct sonde_export_format {
	const char *name;
	const char *help;     /* one line of the usage */
	unsigned timeline;    /* SONDE_XT_* */
	size_t budget;	      /* a timeline's default budget, in its units */
	int (*write)(FILE *f, struct sonde_export *x, char *err, size_t errlen);
};

#define SONDE_XT_METRIC 1u /* the events with a value of the chosen metric */
#define SONDE_XT_CHROME 2u /* the clock samples (their CPU time) and the traced calls */

/* The table, in usage order, and its length. */
extern const struct sonde_export_format sonde_export_formats[];
extern const size_t sonde_export_nformats;

/* The format called name, or NULL. */
const struct sonde_export_format *sonde_export_find(const char *name);

/* Writes the experiments (which must outlive the call) in format fmt to f.
 * Returns 0; or -SONDE_ERR_NOT_RECORDED when the metric is none the
 * experiments recorded, -SONDE_ERR_NO_MATCH for an unknown metric or a
 * filter that selects nothing that exists (a bad list, an object list
 * naming no object), -SONDE_ERR_FAILED for the rest (out of memory, a write error),
 * with a message in err. */
int sonde_export_write(FILE *f, const struct sonde_export_format *fmt, const struct sonde_exp *const *exps,
		       size_t nexps, const struct sonde_export_opts *o, char *err, size_t errlen);

/* The writers. */
int sonde_export_pprof(FILE *f, struct sonde_export *x, char *err, size_t errlen);
int sonde_export_folded(FILE *f, struct sonde_export *x, char *err, size_t errlen);
int sonde_export_speedscope(FILE *f, struct sonde_export *x, char *err, size_t errlen);
int sonde_export_chrome(FILE *f, struct sonde_export *x, char *err, size_t errlen);

/* ---- helpers of the writers --------------------------------------------------- */

/* A growing output buffer: the writers format numbers by hand into it
 * (printf costs more than the rest of a 10 M-event export); flushed to
 * its FILE * every 64 KiB.  err is set on a write error. */
struct sonde_xbuf {
	FILE *f;
	char *b;
	size_t n, cap;
	bool err;
};
void xb_init(struct sonde_xbuf *b, FILE *f);
void xb_mem(struct sonde_xbuf *b, const void *p, size_t n);
void xb_s(struct sonde_xbuf *b, const char *s);
void xb_c(struct sonde_xbuf *b, char c);
void xb_u(struct sonde_xbuf *b, uint64_t v);
void xb_i(struct sonde_xbuf *b, int64_t v);
/* ns as microseconds with 3 decimals ("1234.567"), exactly. */
void xb_us(struct sonde_xbuf *b, uint64_t ns);
/* A JSON string (the bytes made valid UTF-8 as the names are). */
void xb_json(struct sonde_xbuf *b, const char *s);
/* Flushes and frees; -1 when a write failed. */
int xb_done(struct sonde_xbuf *b);

/* The chosen metric's unit as the formats name it: "nanoseconds",
 * "bytes" or "count". */
const char *sonde_export_unit(int metric);
/* A short label of an experiment's process: its command's first word's
 * last component and pid ("burn [1234]"), into buf. */
void sonde_export_process(const struct sonde_exp *e, char *buf, size_t len);
/* The same with what a kind knows of the process first (views/kind.h's
 * timeline part: "rank 2 (burn [1234])"), and its place among the
 * processes in *order; returns false (buf as sonde_export_process, *order
 * untouched) when no kind knows anything of it. */
bool sonde_export_process_known(const struct sonde_exp *e, char *buf, size_t len, int64_t *order);

#endif
