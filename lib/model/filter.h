/*
 * filter: the slicing filters of sonde print, sonde export and sonde
 * report, parsed in one place.  One row per filter: its name as the
 * commands take it ("thread_select", after the dashes), another name it
 * goes by, its argument for the help, how a value is checked and how it is
 * set into struct sonde_profile_opts (lib/model/profile.h), which the
 * profile builder applies.
 *
 *	struct sonde_profile_opts po = { 0 };
 *	switch (sonde_filter_parse(&po, "time", "0.5-1", err, sizeof err)) {
 *	case 1:  set;  case 0:  not a filter;  case -1:  bad value (err)
 *	}
 *
 * A list filter keeps the value by pointer: it must outlive po.  Every
 * filter takes "all" for none, the time range included.  Nothing is
 * printed; a message names the value, not the option (the caller says
 * "-NAME: " before it).
 */
#ifndef SONDE_FILTER_H
#define SONDE_FILTER_H

#include <stddef.h>

#include "model/profile.h"

struct sonde_filter {
	const char *name;  /* "thread_select" */
	const char *alias; /* another name ("time_select"), or NULL */
	const char *arg;   /* its argument ("all|LIST") */
	/* 0, or -1 with a message in err, for a value that is none. */
	int (*check)(const char *v, char *err, size_t errlen);
	/* Sets a checked value into po. */
	void (*set)(struct sonde_profile_opts *po, const char *v);
};

/* The filters, and how many. */
extern const struct sonde_filter sonde_filters[];
extern const size_t sonde_nfilters;

/* The filter called name (or by its alias), NULL for none. */
const struct sonde_filter *sonde_filter_find(const char *name);

/* When name is a filter's: checks v and sets it into po, 1; -1 with a
 * message in err (po unchanged) for a bad value.  0 when name is no
 * filter's. */
int sonde_filter_parse(struct sonde_profile_opts *po, const char *name, const char *v, char *err, size_t errlen);

#endif
