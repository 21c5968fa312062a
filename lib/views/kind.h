/*
 * The views' part of a data kind (base/kindmod.h): its -dump and its part
 * of -header.  For the kinds' modules, lib/kinds/NAME.c.  Views of a
 * kind's own (-leaks, -iofiles, ...) are views like any other
 * (doc/internals.md).
 */
#ifndef SONDE_VIEWS_KIND_H
#define SONDE_VIEWS_KIND_H

#include <stdint.h>
#include <stdio.h>

#include "base/kindmod.h"
#include "symbols/dynfunc.h"
#include "views/emit.h"
#include "views/view_exp.h"

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
};

/* -dump profile (view_dump.c): the clock profile module's dump. */
int sonde_dump_profile(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err,
		       size_t errlen);

/* For dumps: seconds of t since the experiment's start (negative before
 * it), and an event's stack: its flags, the end of the event's line, then
 * a line per frame. */
double sonde_dump_since(const struct sonde_exp_info *in, uint64_t t);
void sonde_dump_stack(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, uint64_t stack_id,
		      uint64_t time_ns);

/* For -header lines: the label column's width. */
#define SONDE_HEADER_LABEL_W 19

#endif
