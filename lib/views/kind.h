/*
 * The views' part of a data kind (base/kindmod.h): its -dump, its part of
 * -header, its part of a timeline (the chrome export) and its views in the
 * HTML report.  For the kinds' modules, lib/kinds/NAME.c.  Views of a
 * kind's own (-leaks, -iofiles, ...) are views like any other
 * (doc/internals.md).
 */
#ifndef SONDE_VIEWS_KIND_H
#define SONDE_VIEWS_KIND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/kindmod.h"
#include "symbols/dynfunc.h"
#include "views/emit.h"
#include "views/view_exp.h"

struct sonde_xbuf; /* views/export.h */

/* A flow of a kind's timeline: an arrow from one of its spans to another,
 * in the same experiment or another (a message, from the call that sent
 * it to the call that received it).  Experiments are indices into the
 * list given to flows(), spans indices as the timeline's (dur, name). */
struct sonde_view_flow {
	uint32_t from_exp, to_exp;
	size_t from, to;
	char name[64]; /* the arrow's ("4096 bytes, tag 5") */
};

/*
 * The kind's part of a timeline (sonde export's chrome format): its
 * events as spans, each a complete event on its thread's call track (a
 * traced call: a sync wait, an I/O call), and a counter over the run
 * (the live heap).  Either may be absent (NULL functions).
 */
struct sonde_view_timeline {
	/* Spans: "cat" of its complete events ("sync"), its word in the
	 * name of the call track ("thread 1: sync and I/O calls"), and, for
	 * its event index of exp (sonde_exp_KIND_events()): its duration in
	 * ns, its name (the traced function; "?" for an index past the
	 * events), and its arguments after "caller" as JSON members
	 * (",\"fd\":3", nothing for an index past the events).  dur NULL:
	 * no spans. */
	const char *cat, *track;
	uint64_t (*dur)(const struct sonde_exp *exp, size_t index);
	const char *(*name)(const struct sonde_exp *exp, size_t index);
	void (*args)(struct sonde_xbuf *b, const struct sonde_exp *exp, size_t index);
	/* A counter: its name and its argument's ("Live heap", "bytes"), and
	 * walk, which gives its value after each of exp's events, in time
	 * order (step(arg, time_ns, value)), and returns how many (0: exp has
	 * none, the counter is not drawn for it), or -1 out of memory.  walk
	 * NULL: no counter. */
	const char *counter, *counter_arg;
	long (*walk)(const struct sonde_exp *exp, void (*step)(void *arg, uint64_t t, uint64_t value), void *arg);
	/* Whether event index of exp is a span (NULL: every event of the
	 * kind is): a kind may have events that are not calls (MPI's
	 * messages, which flows draw). */
	bool (*is_span)(const struct sonde_exp *exp, size_t index);
	/* The spans on a track of their own (tid own_track << 24 + the
	 * thread's tid above the shared call track's; "thread 1: MPI calls"),
	 * not on the shared one ("thread 1: sync and I/O calls"): 0 shared. */
	unsigned own_track;
	/* Flows between its spans across the experiments exps[0..n): calls
	 * arrow(arg, flow) for each (arrow returns -1 to stop: out of
	 * memory), and returns how many of its events that should have an
	 * arrow have none (a send whose receive is not there), or -1 when
	 * arrow or it failed.  NULL: no flows. */
	long (*flows)(const struct sonde_exp *const *exps, size_t n,
		      int (*arrow)(void *arg, const struct sonde_view_flow *f), void *arg);
	const char *flow_what; /* what a flow is, for notes: "MPI messages" */
	/* What the kind knows of the experiment's process, for its name in a
	 * timeline ("rank 2") into buf, and its place among the processes
	 * (*order, a sort index): false when nothing.  NULL: nothing. */
	bool (*process)(const struct sonde_exp *exp, char *buf, size_t len, int64_t *order);
};

/* A view of the kind that the HTML report embeds: its json document (a
 * view of lib/views/view.h of the experiments, in json), as "views":
 * {"KEY": ...}, for the report's page to show. */
struct sonde_view_report_view {
	const char *key; /* "leaks"; NULL ends a list */
	int (*run)(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
		   char *err, size_t errlen);
};

/* A kind's own part of the report's script (lib/views/report/NAME.js,
 * built in as report.js is: scripts/embed.sh), run after report.js and
 * written only into the reports that hold the kind's views, so that a
 * report without them stays what it was. */
struct sonde_view_report_script {
	const unsigned char *text;
	const unsigned long *len;
};

struct sonde_view_kind {
	/* -dump NAME (the kind's name): one line per event by time, each
	 * followed by its stack (sonde_dump_stack).  0, or -1 with a
	 * message in err.  NULL: the kind has no dump. */
	int (*dump)(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err,
		    size_t errlen);
	/* -header of an experiment that traced the kind: its line in text
	 * ("Sync tracing:      ..."), and its totals as the fields of the
	 * object "NAME" in csv and json (the caller opens and closes it; an
	 * experiment without the kind has "NAME": null).  NULL: none. */
	void (*header_text)(FILE *out, const struct sonde_exp *exp);
	void (*header_doc)(struct sonde_emit *e, const struct sonde_exp *exp);
	/* The object is left out, not null, for an experiment without the
	 * kind: a kind added after the header's form was settled (MPI) does
	 * not change the header of every experiment recorded without it. */
	bool header_omit_untraced;
	/* Its part of a timeline.  NULL: none. */
	const struct sonde_view_timeline *timeline;
	/* Its views in the HTML report, in order, ended by a NULL key
	 * (NULL: none), and their place among the kinds' (the report writes
	 * the kinds' views by this number: the order of its page's sections,
	 * lib/views/report/report.html). */
	const struct sonde_view_report_view *report;
	int report_place;
	/* Its part of the page's script (above); NULL: report.js draws its
	 * views. */
	const struct sonde_view_report_script *report_script;
};

/* -dump profile (view_dump.c): the clock profile module's dump. */
int sonde_dump_profile(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err,
		       size_t errlen);

/* Kind id's timeline part, NULL for none. */
static inline const struct sonde_view_timeline *sonde_view_timeline(int id)
{
	const struct sonde_kind_module *m = sonde_kind_module(id);

	return m && m->view ? m->view->timeline : NULL;
}

/* For dumps: seconds of t since the experiment's start (negative before
 * it), and an event's stack: its flags, the end of the event's line, then
 * a line per frame. */
double sonde_dump_since(const struct sonde_exp_info *in, uint64_t t);
void sonde_dump_stack(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, uint64_t stack_id,
		      uint64_t time_ns);

/* For -header lines: the label column's width. */
#define SONDE_HEADER_LABEL_W 19

#endif
