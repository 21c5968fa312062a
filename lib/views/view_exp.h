/*
 * view_exp: the views of experiments as the reader gives them, without a
 * metrics model: the summary (-header, view_header.c), the raw data
 * (-dump, view_dump.c), and the experiments loaded and their processes
 * (-experiment_list, -processes, view_processes.c).
 *
 *	const struct sonde_exp *one[1] = { exp };
 *	sonde_view_header(stdout, one, 1, &opts);
 *	sonde_view_dump(stdout, exp, SONDE_DUMP_STACKS, err, sizeof err);
 *
 * Library code: they write to the FILE given and keep no state between
 * calls; nothing here exits or writes to stderr.  A write error is left
 * in the FILE (ferror) for the caller to see.
 */
#ifndef SONDE_VIEW_EXP_H
#define SONDE_VIEW_EXP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "reader/experiment.h"
#include "reader/exptree.h"
#include "views/view.h"

/*
 * -header: each experiment's summary.  Text (-printmode text): the
 * experiment, target, host, settings, start, duration and exit, samples,
 * traced kinds' totals, data sizes, stacks, lost samples, load objects
 * that changed since, collector warnings and errors, read problems and
 * threads, a blank line between experiments.  csv: "key,value" lines
 * under a "key,value" heading, the keys dotted paths ("target.pid",
 * "threads.0.tid"); json: one document on one line per experiment, with
 * the same keys nested; every number unrounded in both.
 */
void sonde_view_header(FILE *f, const struct sonde_exp *const *exps, size_t n,
		       const struct sonde_view_opts *o);

/* The kinds of -dump, by their names. */
/* One per data kind of sonde/kinds.h, named as the kind (SONDE_DUMP_NAME
 * is id - 1): "profile", the samples by time, each with its stack;
 * "stacks", the distinct stacks, leaf first; "overview", the overview
 * samples; each traced kind ("sync", "heap", "io"), its events by time.
 * Then "objects": the load objects and dynamic functions. */
enum sonde_dump_kind {
#define SONDE_DUMP_KIND_(NAME, id, ...) SONDE_DUMP_##NAME = (id) - 1,
	SONDE_KINDS(SONDE_DUMP_KIND_)
#undef SONDE_DUMP_KIND_
	SONDE_DUMP_OBJECTS = SONDE_KIND_COUNT,
	SONDE_DUMP_NKINDS
};

/* The -dump arguments, joined with sep, into names (len bytes): the
 * collector's own kinds, objects, then the traced kinds. */
void sonde_dump_names(char *names, size_t len, const char *sep);

/* Parses a -dump argument ("profile", ...).  0, or -1 with a message. */
int sonde_dump_parse(enum sonde_dump_kind *k, const char *s, char *err, size_t errlen);

/* -dump KIND of one experiment, text only (whatever the print mode).
 * Returns 0, or -1 with a message in err (out of memory). */
int sonde_view_dump(FILE *f, const struct sonde_exp *exp, enum sonde_dump_kind kind, char *err,
		    size_t errlen);
/* The same; with tailcalls, the profile and stacks dumps also show the
 * frames that tail calls left off (symbols.h, sonde_syms_tailcalls)
 * between the recorded ones: "(tail call)  OBJECT+0xADDR  NAME", and a
 * line where several chains could have run. */
int sonde_view_dump_tc(FILE *f, const struct sonde_exp *exp, enum sonde_dump_kind kind, bool tailcalls,
		       char *err, size_t errlen);

/*
 * The experiments sonde print loaded: the tree (reader/exptree.h), its
 * experiments numbered from 1 in its order (each founder followed by its
 * sub-experiments), and the selected ones (-experiment_select: a subset of
 * the tree's, in the same order).
 */
struct sonde_exp_set {
	const struct sonde_exp_tree *tree;
	const struct sonde_exp *const *sel;
	size_t nsel;
};

/* The word -samples shows for a sample point's reason (enum
 * sonde_overview_reason): "start", "periodic", "pause", ...; "other" for
 * one it does not know. */
const char *sonde_view_point_reason(uint32_t reason);

/* -experiment_list: every experiment loaded, numbered, '*' marking the
 * selected ones; json {"experiments":[{"number","selected","path","pid"}]}
 * (csv is the text). */
void sonde_view_experiment_list(FILE *f, const struct sonde_exp_set *s,
				const struct sonde_view_opts *o);

/*
 * -processes: one row per selected experiment's process: its number (as
 * -experiment_list shows it), lineage ("(founder)" or the sub-experiment's
 * directory name), pid, parent pid, recorded CPU time, samples, how it ended (exit
 * status, signal name, "exec" when an exec replaced the image, what the
 * parent saw when it reaped it, "?" when nobody knows) and command; then
 * <Total> (text; json "total_cpu_sec").
 */
void sonde_view_processes(FILE *f, const struct sonde_exp_set *s,
			  const struct sonde_view_opts *o);

/*
 * -ranks (lib/views/view_mpi.c): a row per selected experiment that is an
 * MPI rank's (the tree's M_r<N>.er, else MPI tracing's rank in its
 * log.xml), by rank: its CPU time, MPI Time, MPI Work and MPI Wait (when
 * clock profiling recorded those states), calls and bytes; then per call
 * site (an MPI function and the function that called it) the slowest
 * rank's MPI time, which rank, the mean over every rank (0 for a rank that
 * never called there) and their ratio, sorted by max - mean.  The whole
 * run (no sample or time selection).  -SONDE_ERR_NOT_RECORDED when no
 * experiment is a rank's.
 */
int sonde_view_ranks(FILE *f, const struct sonde_exp_set *s, const struct sonde_view_opts *o, char *err,
		     size_t errlen);

/*
 * -omp_regions and -omp_region N (lib/views/view_omp.c): OpenMP's
 * parallel regions by source region (the function and line of the opening
 * call), in order of first execution: executions, threads, nesting
 * levels, their threads' time by OpenMP state inside the regions (the
 * clock profile's samples, each in the innermost region holding it),
 * OpenMP Wait, imbalance (the slowest thread number's work against the
 * mean) and explicit tasks created and run; -omp_region N, row N per
 * thread number with its mean arrival at the closing barrier after the
 * first thread's, and where its tasks were created.
 * -SONDE_ERR_NO_MATCH for an N not listed.
 */
int sonde_view_omp_regions(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
			   char *err, size_t errlen);
int sonde_view_omp_region(FILE *f, const struct sonde_exp *const *exps, size_t n, size_t which,
			  const struct sonde_view_opts *o, char *err, size_t errlen);

#endif
