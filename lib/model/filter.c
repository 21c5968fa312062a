/*
 * The slicing filters' parser (filter.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timerange.h"
#include "model/filter.h"

static int check_threads(const char *v, char *err, size_t errlen)
{
	enum { MAXT = 1 << 20 };
	bool *sel = calloc(MAXT + 1, sizeof(*sel));
	int rc;

	if (!sel) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = sonde_parse_list(v, sel, MAXT, err, errlen);
	free(sel);
	return rc;
}

static int check_objects(const char *v, char *err, size_t errlen)
{
	if (!*v) {
		snprintf(err, errlen, "-object_select needs a non-empty argument");
		return -1;
	}
	return 0;
}

static int check_time(const char *v, char *err, size_t errlen)
{
	uint64_t a, b;

	return strcmp(v, "all") ? sonde_time_parse(v, &a, &b, err, errlen) : 0;
}

static int check_on_off(const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "on") && strcmp(v, "off")) {
		snprintf(err, errlen, "'%s' is not on or off", v);
		return -1;
	}
	return 0;
}

static void set_threads(struct sonde_profile_opts *po, const char *v)
{
	po->thread_select = v;
}

static void set_objects(struct sonde_profile_opts *po, const char *v)
{
	po->object_select = v;
}

static void set_samples(struct sonde_profile_opts *po, const char *v)
{
	po->sample_select = v;
}

static void set_cpus(struct sonde_profile_opts *po, const char *v)
{
	po->cpu_select = v;
}

static void set_callpath(struct sonde_profile_opts *po, const char *v)
{
	po->callpath_select = v;
}

static void set_time(struct sonde_profile_opts *po, const char *v)
{
	char err[200];

	po->start_ns = po->end_ns = 0;
	if (strcmp(v, "all") && sonde_time_parse(v, &po->start_ns, &po->end_ns, err, sizeof(err)) < 0)
		po->start_ns = po->end_ns = 0; /* checked before */
}

static void set_inlines(struct sonde_profile_opts *po, const char *v)
{
	po->no_inlines = !strcmp(v, "off");
}

static void set_tailcalls(struct sonde_profile_opts *po, const char *v)
{
	po->no_tailcalls = !strcmp(v, "off");
}

static int check_viewmode(const char *v, char *err, size_t errlen)
{
	if (!strcmp(v, "user") || !strcmp(v, "expert") || !strcmp(v, "machine"))
		return 0;
	snprintf(err, errlen, "'%s' is not user, expert or machine", v);
	return -1;
}

/* (Machine mode shows no inlined functions: the profile builder's rule.) */
static void set_viewmode(struct sonde_profile_opts *po, const char *v)
{
	po->viewmode = !strcmp(v, "expert") ? SONDE_SHAPE_EXPERT
		       : !strcmp(v, "machine") ? SONDE_SHAPE_MACHINE
					       : SONDE_SHAPE_USER;
}

const struct sonde_filter sonde_filters[] = {
	{ "thread_select", NULL, "all|LIST", check_threads, set_threads },
	{ "object_select", NULL, "all|OBJ,...", check_objects, set_objects },
	{ "sample_select", NULL, "all|LIST", sonde_sample_list_check, set_samples },
	{ "cpu_select", NULL, "all|LIST", sonde_cpu_list_check, set_cpus },
	{ "callpath_select", NULL, "all|FUNC|A>B,...", sonde_callpath_check, set_callpath },
	{ "time", "time_select", "all|START-END", check_time, set_time },
	{ "inlines", NULL, "on|off", check_on_off, set_inlines },
	{ "tailcalls", NULL, "on|off", check_on_off, set_tailcalls },
	{ "viewmode", NULL, "user|expert|machine", check_viewmode, set_viewmode },
};
const size_t sonde_nfilters = sizeof(sonde_filters) / sizeof(sonde_filters[0]);

const struct sonde_filter *sonde_filter_find(const char *name)
{
	for (size_t i = 0; i < sonde_nfilters; i++)
		if (!strcmp(name, sonde_filters[i].name) ||
		    (sonde_filters[i].alias && !strcmp(name, sonde_filters[i].alias)))
			return &sonde_filters[i];
	return NULL;
}

int sonde_filter_parse(struct sonde_profile_opts *po, const char *name, const char *v, char *err, size_t errlen)
{
	const struct sonde_filter *f = sonde_filter_find(name);

	if (!f)
		return 0;
	if (f->check(v, err, errlen) < 0)
		return -1;
	f->set(po, v);
	return 1;
}
