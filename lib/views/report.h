/*
 * report: the HTML report of `sonde report` (doc/sonde-report.md).
 *
 * One self-contained HTML file: the page (lib/views/report/report.html,
 * with its CSS), its script (lib/views/report/report.js), both built into
 * the program as C arrays, and the data as one JSON document inside a
 * <script type="application/json"> element.  Nothing is fetched: the file
 * opens offline from file://.
 *
 * The data (the script reads it; doc/sonde-report.md, "The data"):
 *
 *   - the metrics model of the experiments as `sonde print` builds it
 *     (lib/model/profile.h, the same filters): every metric with a
 *     non-zero total, every function with its exclusive and inclusive
 *     values, and the distinct call stacks with their values, as paths of
 *     a tree of call-path nodes (one node per distinct path from a root);
 *   - time cells: each stack's and each thread's values per time bucket
 *     (a fixed width from the experiment's start; a cell per stack,
 *     experiment group, bucket and metric with a non-zero value), from
 *     which the script recomputes every view for a time range;
 *   - what the views of sonde print say about the experiments, as their
 *     json documents: -header (and its text), annotated -source of the
 *     hottest functions, -leaks, -allocs, -heapstat, -sync, -io,
 *     -iostacks when those kinds were traced.
 *
 * Library code: writes to the FILE given, returns 0 or -1 with a one-line
 * message in err; nothing is printed, nothing exits.
 */
#ifndef SONDE_REPORT_H
#define SONDE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reader/experiment.h"
#include "model/profile.h"

struct sonde_report_opts {
	/* The filters of sonde print (lib/model/profile.h, parsed by
	 * lib/model/filter.h): a list NULL or "all" for none, start_ns and
	 * end_ns 0 for the whole run.  Its each is the report's own. */
	struct sonde_profile_opts filter;
	/* Where source files are looked for (sonde print's -pathmap OLD NEW
	 * pairs and -addpath directories). */
	const char *const *pathmap;
	size_t npathmap;
	const char *const *addpath;
	size_t naddpath;
	/* The hottest functions (by exclusive value of the first metric)
	 * shown with annotated source; default 8. */
	size_t sources;
	/* The most time cells written (a cell is one number); the bucket
	 * width doubles until the cells fit.  Default 1500000 (about 6 MB of
	 * the file at the worst). */
	size_t max_cells;
};

void sonde_report_opts_init(struct sonde_report_opts *o);

/*
 * Writes the report of exps[0..n) (names[i]: each as the user named it)
 * to f.  group[i] is the experiment group of exps[i]: the index of the
 * experiment given on the command line that it belongs to (a founder
 * and its descendants' sub-experiments are one group); gnames[0..ngroups)
 * name the groups.  All groups are added together, as sonde print adds
 * experiments; with two groups or more the report also compares them
 * (a differential flame graph, the -compare table).  Returns 0, or -1
 * with a message in err (a filter that names nothing, out of memory, a
 * write error).  warn(arg, msg), when not NULL, is told each warning
 * the report also shows (symbol problems).
 */
int sonde_report_write(FILE *f, const struct sonde_exp *const *exps, const char *const *names,
		       const uint32_t *group, size_t n, const char *const *gnames, size_t ngroups,
		       const struct sonde_report_opts *o, void (*warn)(void *arg, const char *msg),
		       void *warn_arg, char *err, size_t errlen);

/* ---- the pure parts (tests/unit/test_report.c) ---------------------------------------- */

/*
 * Writes JSON text json[0..len) so that it can stand inside an HTML
 * <script> element and still parse as the same JSON: every '<' becomes
 * \u003c (so no "</script>", "<!--" or "<script" can appear), U+2028 and
 * U+2029 become \u2028 and \u2029.  The text must be JSON (a '<' is only
 * ever inside a string there).
 */
void sonde_report_script_json(FILE *f, const char *json, size_t len);

/* The bucket width for a run of duration_ns in at most nb buckets: the
 * smallest 1, 2 or 5 times a power of ten of nanoseconds (at least 1 us)
 * with duration_ns / width < nb. */
uint64_t sonde_report_bucket_ns(uint64_t duration_ns, uint64_t nb);


#endif
