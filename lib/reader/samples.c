/*
 * Samples: the intervals between an experiment's sample points (its
 * overview packets), and the -sample_select filter built on them (see
 * experiment.h).
 *
 * A selection is kept as time ranges, not sample numbers, because every
 * view filters events by time: a binary search over the selected ranges
 * per event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/experiment.h"
#include "base/partition.h"

size_t sonde_exp_nsamples(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_overview(exp, &n);
	return n >= 2 ? n - 1 : 0;
}

size_t sonde_exp_sample_of(const struct sonde_exp *exp, uint64_t time_ns)
{
	size_t n;
	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &n);

	if (n < 2)
		return 0;
	/* the first point at or after time_ns ends its sample */
	return PARTITION_POINT(1, n - 1, i, ov[i].time_ns < time_ns);
}

struct range {
	unsigned long a, b;
};

/* Parses "all" (returns 0 ranges and *all) or "3", "1,4-6".  ranges may be
 * NULL to count only. */
static int parse_spec(const char *spec, struct range *ranges, size_t *nr, bool *all, char *err,
		      size_t errlen)
{
	*nr = 0;
	*all = !spec || !strcmp(spec, "all");
	if (*all)
		return 0;
	const char *p = spec;

	while (*p) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		a = strtoul(p, &end, 10);
		if (errno)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				goto bad;
			b = strtoul(p + 1, &end, 10);
			if (errno)
				goto bad;
			p = end;
		}
		if (a < 1 || b < a)
			goto bad;
		if (ranges)
			ranges[*nr] = (struct range){ a, b };
		(*nr)++;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (*nr)
		return 0;
bad:
	snprintf(err, errlen, "invalid sample list '%s' (expected all, or sample numbers and ranges like 1,4-6)",
		 spec);
	return -1;
}

int sonde_sample_list_check(const char *spec, char *err, size_t errlen)
{
	size_t n;
	bool all;

	return parse_spec(spec, NULL, &n, &all, err, errlen);
}

struct sonde_sample_sel {
	size_t n;
	struct {
		uint64_t lo, hi; /* (lo, hi] */
	} *r;
};

int sonde_sample_sel_new(struct sonde_sample_sel **out, const struct sonde_exp *exp, const char *spec,
			 char *err, size_t errlen)
{
	size_t nr, nov;
	bool all;

	*out = NULL;
	if (parse_spec(spec, NULL, &nr, &all, err, errlen) < 0)
		return -1;
	if (all)
		return 0;
	struct range *rg = calloc(nr, sizeof(*rg));
	struct sonde_sample_sel *sel = calloc(1, sizeof(*sel));
	const struct sonde_overview_packet *ov = sonde_exp_overview(exp, &nov);
	size_t ns = nov >= 2 ? nov - 1 : 0;
	bool *on = calloc(ns + 1, sizeof(*on));

	if (!rg || !sel || !on)
		goto oom;
	parse_spec(spec, rg, &nr, &all, err, errlen);
	for (size_t i = 0; i < nr; i++)
		for (unsigned long k = rg[i].a; k <= rg[i].b && k <= ns; k++)
			on[k] = true;
	sel->r = calloc(ns + 1, sizeof(*sel->r));
	if (!sel->r)
		goto oom;
	/* adjacent selected samples merge into one range */
	for (size_t k = 1; k <= ns; k++) {
		if (!on[k])
			continue;
		uint64_t lo = k == 1 ? 0 : ov[k - 1].time_ns;
		uint64_t hi = k == ns ? UINT64_MAX : ov[k].time_ns;

		if (sel->n && sel->r[sel->n - 1].hi == lo)
			sel->r[sel->n - 1].hi = hi;
		else
			sel->r[sel->n++] = (typeof(*sel->r)){ lo, hi };
	}
	free(rg);
	free(on);
	*out = sel;
	return 0;
oom:
	free(rg);
	free(on);
	sonde_sample_sel_free(sel);
	snprintf(err, errlen, "out of memory");
	return -1;
}

bool sonde_sample_sel_has(const struct sonde_sample_sel *sel, uint64_t t)
{
	if (!sel)
		return true;
	/* the first range whose end is at or after t */
	size_t lo = PARTITION_POINT(0, sel->n, i, sel->r[i].hi < t);
	if (lo == sel->n)
		return false;
	/* sample 1 is closed at its start: it holds everything up to P1 */
	return t > sel->r[lo].lo || (sel->r[lo].lo == 0 && t == 0);
}

void sonde_sample_sel_free(struct sonde_sample_sel *sel)
{
	if (!sel)
		return;
	free(sel->r);
	free(sel);
}
