/*
 * The command language's parsers: metric specs, sort keys, the settings'
 * words, and function lookup by name (see view.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "views/view.h"
#include "symbols/symbols.h"
#include "views/view_common.h"

const struct sonde_metric_def *sonde_view_known_metrics(int *n)
{
	return sonde_profile_metrics(n);
}

const struct sonde_metric_def *sonde_view_known_derived(int i)
{
	int n;
	const struct sonde_derived_def *d = sonde_derived_metrics(&n);

	return i < n && sonde_derived_known(&d[i]) ? &d[i].def : NULL;
}

/* The derived metric named name (known or not), NULL for none. */
static const struct sonde_derived_def *derived_named(const char *name)
{
	int n;
	const struct sonde_derived_def *d = sonde_derived_metrics(&n);

	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].def.name, name))
			return &d[i];
	return NULL;
}

int vw_not_recorded(const char *what, const char *name, char *err, size_t errlen)
{
	const struct sonde_derived_def *d = derived_named(name);

	if (d)
		snprintf(err, errlen,
			 "%s '%s' is not recorded in this experiment (it needs both %s and %s: "
			 "sonde collect -h %s,on,%s,on)",
			 what, name, d->num, d->den, d->num, d->den);
	else
		snprintf(err, errlen, "%s '%s' is not recorded in this experiment", what, name);
	return -SONDE_ERR_NOT_RECORDED;
}

/* A metric of the table, or a derived one whose parts are in it. */
static const struct sonde_metric_def *known(const char *name)
{
	int n;
	const struct sonde_metric_def *d = sonde_view_known_metrics(&n);

	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return &d[i];
	sonde_derived_metrics(&n);
	for (int i = 0; i < n; i++)
		if (sonde_view_known_derived(i) && !strcmp(sonde_view_known_derived(i)->name, name))
			return sonde_view_known_derived(i);
	return NULL;
}

static void known_list(char *buf, size_t len)
{
	int n, nd;
	const struct sonde_metric_def *d = sonde_view_known_metrics(&n);
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", d[i].name);
	sonde_derived_metrics(&nd);
	for (int i = 0; i < nd && used < len; i++)
		if (sonde_view_known_derived(i))
			used += (size_t)snprintf(buf + used, len - used, ", %s", sonde_view_known_derived(i)->name);
}

static const char DEFAULT_SPEC[] = "e.%totalcpu:i.%totalcpu:name";

int sonde_mspec_parse(struct sonde_mspec *s, const char *spec, char *err, size_t errlen)
{
	struct sonde_mspec out = { 0 };
	char list[256];
	const char *p = spec;

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty metric spec");
		return -1;
	}
	if (!strcmp(spec, "default"))
		spec = p = DEFAULT_SPEC;
	while (*p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[128];

		if (!len || len >= sizeof(item)) {
			snprintf(err, errlen, "%s item in metric spec '%s'", len ? "overlong" : "empty",
				 spec);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		p += len + (end != NULL);
		if (end && !*p) {
			snprintf(err, errlen, "empty item in metric spec '%s'", spec);
			return -1;
		}
		if (!strcmp(item, "name"))
			continue;

		const char *q = item, *flavors = item;
		size_t nfl = 0;
		unsigned vis = 0;

		while (*q == 'e' || *q == 'i' || *q == 'a')
			q++, nfl++;
		/* "item" could be a bare metric name that starts with e/i/a */
		if (!nfl) {
			snprintf(err, errlen,
				 "metric item '%s' needs a flavour: e (exclusive), i (inclusive) or a "
				 "(attributed), as in 'e.%%%s'",
				 item, item);
			return -1;
		}
		while (*q == '.' || *q == '+' || *q == '%') {
			vis |= *q == '%' ? SONDE_VIS_PCT : SONDE_VIS_VALUE;
			q++;
		}
		if (!vis) {
			snprintf(err, errlen,
				 "metric item '%s' needs a visibility: . (time), + (value) or %% "
				 "(percent), as in '%.*s.%%%s'",
				 item, (int)nfl, flavors, q);
			return -1;
		}
		if (!known(q) && derived_named(q)) {
			vw_not_recorded("metric", q, err, errlen);
			return -1;
		}
		if (!known(q)) {
			known_list(list, sizeof(list));
			snprintf(err, errlen, "unknown metric '%s' in '%s' (metrics: %s)", q, spec, list);
			return -1;
		}
		if ((vis & SONDE_VIS_PCT) && known(q)->unit == SONDE_UNIT_RATIO) {
			snprintf(err, errlen,
				 "metric '%s' is a ratio and has no percentage of <Total> (give %.*s+%s, not %s)", q,
				 (int)nfl, flavors, q, item);
			return -1;
		}
		for (size_t k = 0; k < nfl; k++) {
			for (int j = 0; j < out.n; j++)
				if (out.item[j].flavor == flavors[k] && !strcmp(out.item[j].metric, q)) {
					snprintf(err, errlen, "metric '%c.%s' appears twice in '%s'",
						 flavors[k], q, spec);
					return -1;
				}
			if (out.n >= SONDE_MSPEC_MAX) {
				snprintf(err, errlen, "too many items in metric spec '%s'", spec);
				return -1;
			}
			struct sonde_mitem *it = &out.item[out.n++];

			it->flavor = flavors[k];
			it->vis = vis;
			snprintf(it->metric, sizeof(it->metric), "%.*s", SONDE_MNAME_MAX - 1, q);
		}
	}
	*s = out;
	return 0;
}

void sonde_mspec_format(const struct sonde_mspec *s, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = 0; i < s->n && used < len; i++) {
		const struct sonde_mitem *it = &s->item[i];
		const struct sonde_metric_def *d = known(it->metric);
		const char *v = d && d->unit != SONDE_UNIT_NS ? "+" : ".";

		used += (size_t)snprintf(buf + used, len - used, "%c%s%s%s:", it->flavor,
					 it->vis & SONDE_VIS_VALUE ? v : "",
					 it->vis & SONDE_VIS_PCT ? "%" : "", it->metric);
	}
	if (used < len)
		snprintf(buf + used, len - used, "name");
}

int sonde_sort_parse(struct sonde_sortkey *k, const char *spec, char *err, size_t errlen)
{
	struct sonde_sortkey out = { 0 };
	const char *q = spec;
	char list[256];

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty sort spec");
		return -1;
	}
	if (!strcmp(spec, "name")) {
		out.by_name = true;
		out.flavor = 'e';
		*k = out;
		return 0;
	}
	out.flavor = 'e';
	if ((q[0] == 'e' || q[0] == 'i' || q[0] == 'a') && !known(q)) {
		out.flavor = q[0];
		q++;
	}
	while (*q == '.' || *q == '+' || *q == '%')
		q++;
	if (!known(q) && derived_named(q)) {
		vw_not_recorded("sort metric", q, err, errlen);
		return -1;
	}
	if (!known(q)) {
		known_list(list, sizeof(list));
		snprintf(err, errlen, "unknown sort metric '%s' (give e.METRIC, i.METRIC or name; "
				      "metrics: %s)",
			 spec, list);
		return -1;
	}
	snprintf(out.metric, sizeof(out.metric), "%.*s", SONDE_MNAME_MAX - 1, q);
	*k = out;
	return 0;
}

static const char *flavor_word(char fl)
{
	return fl == 'i' ? "Inclusive" : fl == 'a' ? "Attributed" : "Exclusive";
}

void sonde_sort_title(const struct sonde_sortkey *k, char *buf, size_t len)
{
	if (k->by_name) {
		snprintf(buf, len, "Name");
		return;
	}
	const struct sonde_metric_def *d = known(k->metric);

	snprintf(buf, len, "%s %s", flavor_word(k->flavor), d ? d->title : k->metric);
}

/* ---- options ---------------------------------------------------------------- */

void sonde_view_opts_init(struct sonde_view_opts *o)
{
	char err[16];

	memset(o, 0, sizeof(*o));
	sonde_mspec_parse(&o->metrics, DEFAULT_SPEC, err, sizeof(err));
	o->sort.flavor = 'e';
	snprintf(o->sort.metric, sizeof(o->sort.metric), "totalcpu");
	o->names = SONDE_NAME_DEFAULT;
	sonde_printmode_parse(&o->mode, "text", err, sizeof(err));
	o->compare = SONDE_CMP_OFF;
	o->sthresh = o->dthresh = 75.0; /* er_print's defaults */
}

static int word(const char *s, const char *const *words, int n, const char *what, char *err,
		size_t errlen)
{
	char list[128];
	size_t used = 0;

	for (int i = 0; i < n; i++)
		if (s && !strcmp(s, words[i]))
			return i;
	list[0] = '\0';
	for (int i = 0; i < n; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 words[i]);
	snprintf(err, errlen, "unknown %s '%s' (%s)", what, s ? s : "", list);
	return -1;
}

int sonde_namefmt_parse(enum sonde_namefmt *n, const char *s, char *err, size_t errlen)
{
	static const char *const w[] = { "long", "short", "mangled" };
	int i = word(s, w, 3, "name format", err, errlen);

	if (i < 0)
		return -1;
	*n = (enum sonde_namefmt)i;
	return 0;
}

int sonde_name_parse(enum sonde_namefmt *n, bool *soname, const char *s, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	char base[16];

	if (!colon) {
		*soname = false;
		return sonde_namefmt_parse(n, s, err, errlen);
	}
	if (colon - s >= (long)sizeof(base) || (strcmp(colon + 1, "soname") && strcmp(colon + 1, "nosoname"))) {
		snprintf(err, errlen, "unknown name format '%s' (long, short or mangled, optionally with "
			 ":soname or :nosoname)", s);
		return -1;
	}
	snprintf(base, sizeof(base), "%.*s", (int)(colon - s), s);
	if (sonde_namefmt_parse(n, base, err, errlen) < 0)
		return -1;
	*soname = !strcmp(colon + 1, "soname");
	return 0;
}

int sonde_viewmode_parse(enum sonde_viewmode *v, const char *s, char *err, size_t errlen)
{
	static const char *const w[] = { "user", "expert", "machine" };
	int i = word(s, w, 3, "view mode", err, errlen);

	if (i < 0)
		return -1;
	*v = (enum sonde_viewmode)i;
	return 0;
}

int sonde_compare_parse(enum sonde_compare *c, const char *s, char *err, size_t errlen)
{
	static const char *const w[] = { "off", "on", "delta", "ratio" };
	int i = word(s, w, 4, "compare mode", err, errlen);

	if (i < 0)
		return -1;
	*c = (enum sonde_compare)i;
	return 0;
}

int sonde_limit_parse(size_t *limit, const char *s, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = s && isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
	if (!s || !isdigit((unsigned char)*s) || *end || errno) {
		snprintf(err, errlen, "bad limit '%s' (a number of rows; 0 for no limit)",
			 s ? s : "");
		return -1;
	}
	*limit = (size_t)v;
	return 0;
}

static const char *pick_name(const char *mangled, const char *lng, const char *shrt, const char *full,
			     enum sonde_namefmt names)
{
	const char *s = names == SONDE_NAME_SHORT     ? shrt
			: names == SONDE_NAME_MANGLED ? mangled
			: names == SONDE_NAME_LONG && full ? full
							   : lng;

	if (!s || !*s)
		s = lng && *lng ? lng : mangled;
	return s ? s : "?";
}

const char *sonde_view_funcname(const struct sonde_mfunc *f, enum sonde_namefmt names)
{
	return pick_name(f->mangled, f->name_long, f->name_short, f->name_full, names);
}

const char *sonde_view_symname(const struct sonde_func *f, enum sonde_namefmt names)
{
	return pick_name(f->mangled, f->name_long, f->name_short, f->name_full, names);
}

/* ---- finding functions -------------------------------------------------------- */

static const struct sonde_model *cmp_model;

static int cmp_cand(const void *a, const void *b)
{
	const struct sonde_mfunc *x = sonde_model_funcinfo(cmp_model, *(const uint32_t *)a);
	const struct sonde_mfunc *y = sonde_model_funcinfo(cmp_model, *(const uint32_t *)b);
	const char *ox = sonde_model_objectinfo(cmp_model, x->object)->path;
	const char *oy = sonde_model_objectinfo(cmp_model, y->object)->path;
	int c = strcmp(ox ? ox : "", oy ? oy : "");

	if (c)
		return c;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* All candidates for name, sorted; returns the count (stores up to max). */
static size_t candidates(const struct sonde_model *m, const char *name, enum sonde_namefmt names,
			 uint32_t *out, size_t max)
{
	size_t n = sonde_model_nfuncs(m), k = 0;

	for (int pass = 0; pass < 2 && !k; pass++)
		for (uint32_t f = 0; f < n; f++) {
			const struct sonde_mfunc *fi = sonde_model_funcinfo(m, f);
			bool hit = pass == 0 ? eq(sonde_view_funcname(fi, names), name)
					     : eq(fi->name_long, name) || eq(fi->name_short, name) ||
						       eq(fi->mangled, name) || eq(fi->name_full, name);

			if (!hit)
				continue;
			if (k < max)
				out[k] = f;
			k++;
		}
	if (k > 1) {
		cmp_model = m;
		qsort(out, k < max ? k : max, sizeof(*out), cmp_cand);
		cmp_model = NULL;
	}
	return k;
}

size_t sonde_view_find(const struct sonde_model *m, const char *name, enum sonde_namefmt names,
		       uint32_t *func, uint32_t *cands, size_t max)
{
	size_t nf = sonde_model_nfuncs(m);
	uint32_t *all = malloc((nf ? nf : 1) * sizeof(*all));
	size_t k;

	if (!all)
		return 0;
	k = candidates(m, name, names, all, nf);
	if (!k) {
		/* "NAME:N" picks the N-th candidate of NAME. */
		const char *colon = strrchr(name, ':');
		char *end;
		unsigned long sel;

		if (colon && colon > name && colon[1] && isdigit((unsigned char)colon[1])) {
			sel = strtoul(colon + 1, &end, 10);
			if (!*end && sel >= 1) {
				char *base = strndup(name, (size_t)(colon - name));

				if (base) {
					size_t kb = candidates(m, base, names, all, nf);

					free(base);
					if (sel <= kb) {
						*func = all[sel - 1];
						free(all);
						return 1;
					}
				}
			}
		}
	}
	if (k == 1)
		*func = all[0];
	if (cands)
		memcpy(cands, all, (k < max ? k : max) * sizeof(*cands));
	free(all);
	return k;
}
