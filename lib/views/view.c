/*
 * The er_print views of a metrics model (see view.h).  Each view builds a
 * vt_table (view_table.h) and writes it in the print mode asked for.
 * -statistics, which reads the experiments rather than a model, is
 * view_statistics.c.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "views/view.h"
#include "views/view_table.h"
#include "views/view_common.h"
#include "base/u64map.h"

#define TOTAL_NAME "<Total>"

/* ---- metrics of the model ------------------------------------------------------ */

/* The index of a metric of the model, derived ones included (-1: none). */
static int metric_index(const struct sonde_model *m, const char *name)
{
	for (int i = 0; i < sonde_model_nall(m); i++)
		if (!strcmp(sonde_model_metric(m, i)->name, name))
			return i;
	return -1;
}

void vw_set_metric(struct vt_row *r, int s, const struct sonde_model *m, int mi, const int64_t *v)
{
	if (sonde_model_is_derived(m, mi))
		vt_set_d(r, s, sonde_model_value(m, mi, v));
	else
		vt_set_i(r, s, v[mi]);
}

/* Resolves the items of the flavours in `flavors` (NULL: all). */
int vw_resolve(struct cols *c, const struct sonde_model *m, const struct sonde_view_opts *o,
		   const char *flavors, char *err, size_t errlen)
{
	c->n = 0;
	c->m = m;
	for (int i = 0; i < o->metrics.n; i++) {
		const struct sonde_mitem *it = &o->metrics.item[i];
		int mi = metric_index(m, it->metric);

		if (mi < 0)
			return vw_not_recorded("metric", it->metric, err, errlen);
		if (flavors && !strchr(flavors, it->flavor))
			continue;
		c->it[c->n] = it;
		c->mi[c->n++] = mi;
	}
	c->sort_mi = -1;
	if (!o->sort.by_name) {
		c->sort_mi = metric_index(m, o->sort.metric);
		if (c->sort_mi < 0)
			return vw_not_recorded("sort metric", o->sort.metric, err, errlen);
	}
	return 0;
}

static const char *flavor_abbr(char fl)
{
	return fl == 'i' ? "Incl." : fl == 'a' ? "Attr." : "Excl.";
}

static double pct(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/*
 * Adds one column group for an item: its value (always, shown in text
 * when the item's visibility has it) and its percentage (when it has it).
 * top: a line above the title; suffix: appended to the keys ("[2]").
 * Returns the index of the value subcolumn; the percentage is the next.
 */
static int add_item_cols(struct vt_table *t, const struct sonde_metric_def *d, char flavor,
			 unsigned vis, bool sort, const char *top, const char *suffix,
			 enum vt_kind valkind)
{
	char title[96], key[96];

	snprintf(title, sizeof(title), "%s %s", flavor_abbr(flavor), d->abbr);
	int g = vt_group(t, title, top, sort);

	if (g < 0)
		return -1;
	snprintf(t->g[g].ltitle, sizeof(t->g[g].ltitle), "%s %s",
		 flavor == 'i' ? "Inclusive" : flavor == 'a' ? "Attributed" : "Exclusive", d->title);
	snprintf(key, sizeof(key), "%c.%s%s", flavor, d->name, suffix ? suffix : "");
	int v = vt_sub(t, VT_VAL, d->unit, valkind == VT_VAL && (vis & SONDE_VIS_VALUE), key);

	if (v < 0)
		return -1;
	if (valkind != VT_VAL) {
		snprintf(key, sizeof(key), "%c.%s.%s%s", flavor, d->name,
			 valkind == VT_DELTA ? "delta" : "ratio", suffix ? suffix : "");
		if (vt_sub(t, valkind, d->unit, (vis & SONDE_VIS_VALUE) != 0, key) < 0)
			return -1;
	}
	if ((vis & SONDE_VIS_PCT) && d->unit != SONDE_UNIT_RATIO) { /* the parser refuses e.%CPI */
		snprintf(key, sizeof(key), "%c.%%%s%s", flavor, d->name, suffix ? suffix : "");
		if (vt_sub(t, VT_PCT, d->unit, true, key) < 0)
			return -1;
	}
	return v;
}

static bool is_sort(const struct sonde_view_opts *o, char flavor, const char *metric)
{
	return !o->sort.by_name && o->sort.flavor == flavor && !strcmp(o->sort.metric, metric);
}

/* Columns for the e and i items of c; first[k] gets each item's first
 * subcolumn.  The column of the sort metric with flavour markfl (the sort's
 * own flavour when markfl is 0, none when it is '-') is marked. */
int vw_item_columns(struct vt_table *t, const struct sonde_model *m, const struct cols *c,
			const struct sonde_view_opts *o, int *first, char markfl)
{
	for (int k = 0; k < c->n; k++) {
		const struct sonde_mitem *it = c->it[k];
		bool mark = markfl == '-' ? false
			    : markfl	  ? !o->sort.by_name && it->flavor == markfl &&
					   !strcmp(o->sort.metric, it->metric)
					  : is_sort(o, it->flavor, it->metric);

		first[k] = add_item_cols(t, sonde_model_metric(m, c->mi[k]), it->flavor, it->vis,
					 mark, NULL, NULL, VT_VAL);
		if (first[k] < 0)
			return -1;
	}
	return 0;
}

/* Fills the item columns of a row from exclusive and inclusive vectors. */
void vw_fill_items(struct vt_row *r, const struct vt_table *t, const struct cols *c,
		       const int *first, const int64_t *excl, const int64_t *incl,
		       const int64_t *total)
{
	for (int k = 0; k < c->n; k++) {
		const int64_t *src = c->it[k]->flavor == 'e' ? excl : incl;
		int s = first[k];

		vw_set_metric(r, s, c->m, c->mi[k], src);
		if (s + 1 < t->nsubs && t->s[s + 1].kind == VT_PCT && t->s[s + 1].group == t->s[s].group)
			vt_set_d(r, s + 1, pct(src[c->mi[k]], total[c->mi[k]]));
	}
}

/* ---- sorting ------------------------------------------------------------------- */

/* qsort_r, which must not be given a NULL base even for no elements. */
static void sort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
		   void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

struct sortctx {
	const struct sonde_model *m;
	enum sonde_namefmt names;
	int mi; /* -1: by name */
	/* the values compared: base[id * stride + mi] */
	const int64_t *(*vec)(const struct sonde_model *m, uint32_t id);
	const char *(*name)(const struct sortctx *s, uint32_t id);
};

static const char *func_name(const struct sortctx *s, uint32_t id)
{
	return sonde_view_funcname(sonde_model_funcinfo(s->m, id), s->names);
}

static const char *obj_name(const struct sortctx *s, uint32_t id)
{
	const char *n = sonde_model_objectinfo(s->m, id)->name;

	return n ? n : "";
}

static int cmp_ids(const void *a, const void *b, void *arg)
{
	const struct sortctx *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (s->mi >= 0) {
		int c = sonde_model_cmp(s->m, s->mi, s->vec(s->m, y), s->vec(s->m, x));

		if (c)
			return c;
	}
	int c = strcmp(s->name(s, x), s->name(s, y));

	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/* Edges sorted by their value of metric mi (or by the other function's name). */
struct edgesort {
	const struct sonde_model *m;
	enum sonde_namefmt names;
	int mi;
};

static int cmp_edges(const void *a, const void *b, void *arg)
{
	const struct edgesort *s = arg;
	const struct sonde_edge *x = *(const struct sonde_edge *const *)a;
	const struct sonde_edge *y = *(const struct sonde_edge *const *)b;

	int c = s->mi >= 0 ? sonde_model_cmp(s->m, s->mi, y->v, x->v) : 0;

	if (c)
		return c;
	/* UINT32_MAX is <Total>, listed first among equals */
	if (x->func == UINT32_MAX || y->func == UINT32_MAX)
		return (y->func == UINT32_MAX) - (x->func == UINT32_MAX);
	c = strcmp(sonde_view_funcname(sonde_model_funcinfo(s->m, x->func), s->names),
		   sonde_view_funcname(sonde_model_funcinfo(s->m, y->func), s->names));

	if (c)
		return c;
	return x->func < y->func ? -1 : x->func > y->func;
}

static const int64_t *excl_vec(const struct sonde_model *m, uint32_t f)
{
	return sonde_model_excl(m, f);
}
static const int64_t *incl_vec(const struct sonde_model *m, uint32_t f)
{
	return sonde_model_incl(m, f);
}
static const int64_t *oexcl_vec(const struct sonde_model *m, uint32_t o)
{
	return sonde_model_object_excl(m, o);
}
static const int64_t *oincl_vec(const struct sonde_model *m, uint32_t o)
{
	return sonde_model_object_incl(m, o);
}

/* Whether any metric of v is non-zero. */
static bool nonzero(const struct sonde_model *m, const int64_t *v)
{
	for (int k = 0; k < sonde_model_nmetrics(m); k++)
		if (v[k])
			return true;
	return false;
}

/* ids 0..n-1 with any non-zero inclusive metric (the others have no
 * events: functions interned but filtered away), sorted by the sort key;
 * *n gets their count.  NULL when out of memory. */
static uint32_t *sorted_ids(const struct sonde_model *m, const struct sonde_view_opts *o, int sort_mi,
			    size_t *np, bool objects)
{
	size_t n = 0, all = *np;
	uint32_t *ids = malloc((all ? all : 1) * sizeof(*ids));
	struct sortctx s = { m, o->names, sort_mi, NULL, objects ? obj_name : func_name };

	if (!ids)
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (nonzero(m, objects ? sonde_model_object_incl(m, (uint32_t)i)
				       : sonde_model_incl(m, (uint32_t)i)))
			ids[n++] = (uint32_t)i;
	*np = n;
	if (objects)
		s.vec = o->sort.flavor == 'e' ? oexcl_vec : oincl_vec;
	else
		s.vec = o->sort.flavor == 'e' ? excl_vec : incl_vec;
	sort_r(ids, n, sizeof(*ids), cmp_ids, &s);
	return ids;
}

/* ---- output helpers -------------------------------------------------------------- */

void vw_begin(struct sonde_emit *e, const char *view, const struct sonde_view_opts *o)
{
	char spec[512];

	sonde_mspec_format(&o->metrics, spec, sizeof(spec));
	em_obj(e, NULL);
	em_s(e, "view", view);
	em_s(e, "metrics", spec);
	if (o->sort.by_name) {
		em_s(e, "sort", "name");
	} else {
		char k[64];

		snprintf(k, sizeof(k), "%c.%s", o->sort.flavor, o->sort.metric);
		em_s(e, "sort", k);
	}
}

void vw_table_body(struct sonde_emit *e, struct vt_table *t)
{
	em_table(e, "rows", t);
	em_end_doc(e);
}

void vw_list_out(struct sonde_emit *e, struct vt_table *t, const struct sonde_view_opts *o, const char *view,
		 const char *title)
{
	char stitle[128];

	sonde_sort_title(&o->sort, stitle, sizeof(stitle));
	em_text(e, "%s sorted by metric: %s\n\n", title, stitle);
	if (!o->summary) {
		vw_begin(e, view, o);
		vw_table_body(e, t);
		return;
	}
	em_table_summary(e, t, 0, t->nrows);
	em_table_csv(e, t);
	vw_begin(e, view, o);
	em_table_rows(e, "rows", t, 0, t->nrows);
	em_end_doc(e);
}

int vw_finish(FILE *f, char *err, size_t errlen)
{
	if (ferror(f)) {
		snprintf(err, errlen, "error writing the output");
		return -1;
	}
	return 0;
}

static int oom(struct vt_table *t, char *err, size_t errlen)
{
	if (t)
		vt_release(t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

static const char *object_name(const struct sonde_model *m, uint32_t o)
{
	if (o >= sonde_model_nobjects(m))
		return NULL;
	return sonde_model_objectinfo(m, o)->name;
}

/* A function's name as text shows it: with -name ...:soname followed by
 * its load object, " [<libc.so.6>]", as er_print writes it.  In buf. */
static const char *text_name(char *buf, size_t len, const struct sonde_model *m, uint32_t f,
			     const struct sonde_view_opts *o)
{
	const char *name = f == UINT32_MAX ? TOTAL_NAME : sonde_view_funcname(sonde_model_funcinfo(m, f), o->names);
	const char *obj = f == UINT32_MAX ? TOTAL_NAME : object_name(m, sonde_model_funcinfo(m, f)->object);

	if (!o->soname)
		snprintf(buf, len, "%s", name);
	else if (f == UINT32_MAX)
		snprintf(buf, len, "%s [%s]", name, obj);
	else
		snprintf(buf, len, "%s [<%s>]", name, obj ? obj : "?");
	return buf;
}

/* Identity fields of a function row: name, object. */
static void func_fields(struct vt_row *r, const struct sonde_model *m, uint32_t f,
			enum sonde_namefmt names)
{
	if (f == UINT32_MAX) {
		vt_set_s(r, 0, TOTAL_NAME);
		return;
	}
	const struct sonde_mfunc *fi = sonde_model_funcinfo(m, f);

	vt_set_s(r, 0, sonde_view_funcname(fi, names));
	vt_set_s(r, 1, object_name(m, fi->object));
}

/* ---- -functions and -objects ------------------------------------------------------ */

static int list_view(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		     bool objects, char *err, size_t errlen)
{
	struct cols c;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(m);
	size_t n = objects ? sonde_model_nobjects(m) : sonde_model_nfuncs(m);

	int resolved = vw_resolve(&c, m, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	vt_init(&t);
	vt_field_key(&t, "name");
	vt_field_key(&t, objects ? "path" : "object");
	bool more = o->summary && !objects; /* fsummary's details */

	if (more) {
		t.flabel[vt_field_key(&t, "address")] = "PC Address";
		t.flabel[vt_field_key(&t, "path")] = "Load Object";
		t.flabel[vt_field_key(&t, "mangled")] = "Mangled Name";
	}
	if (vw_item_columns(&t, m, &c, o, first, o->sort.flavor == 'a' ? 'i' : 0) < 0)
		return oom(&t, err, errlen);

	uint32_t *ids = sorted_ids(m, o, c.sort_mi, &n, objects);
	char tname[1024];

	if (!ids)
		return oom(&t, err, errlen);
	struct vt_row *r = vt_row(&t, ' ', objects ? TOTAL_NAME : text_name(tname, sizeof tname, m, UINT32_MAX, o));

	if (!r)
		goto nomem;
	vt_set_s(r, 0, TOTAL_NAME);
	vw_fill_items(r, &t, &c, first, total, total, total);
	for (size_t i = 0; i < n && (!o->limit || i < o->limit); i++) {
		uint32_t id = ids[i];

		if (objects) {
			const struct sonde_mobject *ob = sonde_model_objectinfo(m, id);

			r = vt_row(&t, ' ', ob->name ? ob->name : "?");
			if (!r)
				goto nomem;
			vt_set_s(r, 0, ob->name);
			vt_set_s(r, 1, ob->path);
			vw_fill_items(r, &t, &c, first, sonde_model_object_excl(m, id),
				   sonde_model_object_incl(m, id), total);
		} else {
			const struct sonde_mfunc *fi = sonde_model_funcinfo(m, id);

			r = vt_row(&t, ' ', text_name(tname, sizeof tname, m, id, o));
			if (!r)
				goto nomem;
			func_fields(r, m, id, o->names);
			if (more) {
				const struct sonde_mobject *ob = fi->object < sonde_model_nobjects(m)
									 ? sonde_model_objectinfo(m, fi->object)
									 : NULL;

				vt_set_n(r, 2, (int64_t)fi->lo);
				vt_set_s(r, 3, ob ? ob->path : NULL);
				vt_set_s(r, 4, fi->mangled);
			}
			vw_fill_items(r, &t, &c, first, sonde_model_excl(m, id), sonde_model_incl(m, id),
				   total);
		}
	}
	free(ids);
	ids = NULL;

	struct sonde_emit em;

	em_init(&em, f, o->mode);
	vw_list_out(&em, &t, o, objects ? "objects" : "functions", objects ? "Load Objects" : "Functions");
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(ids);
	return oom(&t, err, errlen);
}

int sonde_view_functions(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			 char *err, size_t errlen)
{
	return list_view(f, m, o, false, err, errlen);
}

int sonde_view_objects(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		       char *err, size_t errlen)
{
	return list_view(f, m, o, true, err, errlen);
}

/* ---- -fsingle ------------------------------------------------------------------- */

static void fmt_value(char *buf, size_t len, const struct sonde_model *m, int mi, const int64_t *vec)
{
	enum sonde_unit u = sonde_model_metric(m, mi)->unit;
	int64_t v = u == SONDE_UNIT_RATIO ? 0 : vec[mi];

	if (u == SONDE_UNIT_RATIO) {
		snprintf(buf, len, "%.3f", sonde_model_value(m, mi, vec));
	} else if (u == SONDE_UNIT_NS) {
		if (v == 0)
			snprintf(buf, len, "0.   ");
		else
			snprintf(buf, len, "%.3f", (double)v / 1e9);
	} else {
		snprintf(buf, len, "%" PRId64, v);
	}
}

int sonde_view_fsingle(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		       uint32_t func, char *err, size_t errlen)
{
	struct cols c;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(m);

	if (func >= sonde_model_nfuncs(m)) {
		snprintf(err, errlen, "no function %u", func);
		return -1;
	}
	int resolved = vw_resolve(&c, m, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	vt_init(&t);
	vt_field_key(&t, "name");
	vt_field_key(&t, "object");
	vt_field_key(&t, "path");
	vt_field_key(&t, "address");
	vt_field_key(&t, "mangled");
	vt_field_key(&t, "name_long");
	vt_field_key(&t, "name_short");
	if (vw_item_columns(&t, m, &c, o, first, '-') < 0)
		return oom(&t, err, errlen);

	const struct sonde_mfunc *fi = sonde_model_funcinfo(m, func);
	const struct sonde_mobject *ob =
		fi->object < sonde_model_nobjects(m) ? sonde_model_objectinfo(m, fi->object) : NULL;
	const char *name = sonde_view_funcname(fi, o->names);
	const int64_t *ex = sonde_model_excl(m, func), *in = sonde_model_incl(m, func);
	struct vt_row *r = vt_row(&t, ' ', name);

	if (!r)
		return oom(&t, err, errlen);
	vt_set_s(r, 0, name);
	vt_set_s(r, 1, ob ? ob->name : NULL);
	vt_set_s(r, 2, ob ? ob->path : NULL);
	vt_set_n(r, 3, (int64_t)fi->lo);
	vt_set_s(r, 4, fi->mangled);
	vt_set_s(r, 5, fi->name_long);
	vt_set_s(r, 6, fi->name_short);
	vw_fill_items(r, &t, &c, first, ex, in, total);

	struct sonde_emit em;

	char tname[1024];

	em_init(&em, f, o->mode);
	em_text(&em, "%s\n", text_name(tname, sizeof tname, m, func, o));
	for (int k = 0; k < c.n; k++) {
		const struct sonde_metric_def *d = sonde_model_metric(m, c.mi[k]);
		const int64_t *vec = c.it[k]->flavor == 'e' ? ex : in;
		char label[128], val[64];

		snprintf(label, sizeof(label), "%s %s",
			 c.it[k]->flavor == 'e' ? "Exclusive" : "Inclusive", d->title);
		fmt_value(val, sizeof(val), m, c.mi[k], vec);
		em_text(&em, "\t%24s: ", label);
		if (c.it[k]->vis & SONDE_VIS_VALUE)
			em_text(&em, "%s", val);
		if ((c.it[k]->vis & SONDE_VIS_PCT) && !sonde_model_is_derived(m, c.mi[k])) {
			double p = pct(vec[c.mi[k]], total[c.mi[k]]);

			em_text(&em, "%s(", c.it[k]->vis & SONDE_VIS_VALUE ? " " : "");
			if (p == 0)
				em_text(&em, "  0. %%)");
			else
				em_text(&em, "%5.1f%%)", p);
		}
		em_text(&em, "\n");
	}
	em_text(&em, "\t%24s: 0x%" PRIx64 "\n", "Address", fi->lo);
	em_text(&em, "\t%24s: %s\n", "Load Object", ob && ob->path ? ob->path : "(unknown)");
	em_text(&em, "\t%24s: %s\n", "Mangled Name", fi->mangled ? fi->mangled : "");
	if (fi->kind != SONDE_FRAME_NATIVE) {
		const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(fi->kind);

		em_text(&em, "\t%24s: %s%s, not code of a load object\n", "Note",
			ki ? ki->noun : "a frame of an unknown kind", fi->synthesized ? " that no name covers" : "");
	} else if (fi->synthesized)
		em_text(&em, "\t%24s: no symbol covers this address\n", "Note");
	else if (!fi->lo)
		em_text(&em, "\t%24s: inlined only: no code of its own (its time is in the "
			   "functions it was inlined into; -inlines off folds it there)\n", "Note");
	em_table_csv(&em, &t);
	vw_begin(&em, "fsingle", o);
	em_table_row(&em, "function", &t, 0);
	em_end_doc(&em);
	vt_release(&t);
	return vw_finish(f, err, errlen);
}

/* ---- -callers-callees / -csingle -------------------------------------------------- */

/* The attributed columns: the spec's a items, or one per metric of its
 * e and i items (with their visibility merged). */
struct acols {
	int n;
	int mi[SONDE_MSPEC_MAX];
	unsigned vis[SONDE_MSPEC_MAX];
};

static void attributed_items(struct acols *a, const struct sonde_model *m,
			     const struct sonde_view_opts *o)
{
	bool any = false;

	a->n = 0;
	for (int i = 0; i < o->metrics.n; i++)
		any |= o->metrics.item[i].flavor == 'a';
	for (int i = 0; i < o->metrics.n; i++) {
		const struct sonde_mitem *it = &o->metrics.item[i];
		int mi = metric_index(m, it->metric), k;

		if (mi < 0 || (any && it->flavor != 'a'))
			continue;
		for (k = 0; k < a->n; k++)
			if (a->mi[k] == mi)
				break;
		if (k == a->n) {
			a->mi[a->n] = mi;
			a->vis[a->n++] = 0;
		}
		a->vis[k] |= it->vis;
	}
}

struct block {
	uint32_t center; /* UINT32_MAX: <Total> */
	size_t first, ncallers, ncallees;
};

/* One row of a block: attributed values then the function's own. */
static struct vt_row *cc_row(struct vt_table *t, const struct sonde_model *m,
			     const struct sonde_view_opts *o, const struct acols *a, const int *afirst,
			     const struct cols *c, const int *first, char mark, uint32_t func,
			     const int64_t *attr, const int64_t *center_incl, const char *role,
			     const char *center)
{
	const int64_t *total = sonde_model_total(m);
	const char *name = func == UINT32_MAX ? TOTAL_NAME
					      : sonde_view_funcname(sonde_model_funcinfo(m, func),
								    o->names);
	char tname[1024];
	struct vt_row *r = vt_row(t, mark, text_name(tname, sizeof tname, m, func, o));

	if (!r)
		return NULL;
	vt_set_s(r, 0, center);
	vt_set_s(r, 1, role);
	vt_set_s(r, 2, name);
	if (func != UINT32_MAX)
		vt_set_s(r, 3, object_name(m, sonde_model_funcinfo(m, func)->object));
	for (int k = 0; k < a->n; k++) {
		int s = afirst[k];

		vw_set_metric(r, s, m, a->mi[k], attr);
		if ((a->vis[k] & SONDE_VIS_PCT) && !sonde_model_is_derived(m, a->mi[k]))
			vt_set_d(r, s + 1, pct(attr[a->mi[k]], center_incl[a->mi[k]]));
	}
	if (func == UINT32_MAX)
		vw_fill_items(r, t, c, first, total, total, total);
	else
		vw_fill_items(r, t, c, first, sonde_model_excl(m, func), sonde_model_incl(m, func),
			   total);
	return r;
}

int sonde_view_callers_callees(FILE *f, const struct sonde_model *m,
			       const struct sonde_view_opts *o, uint32_t func, char *err,
			       size_t errlen)
{
	struct cols c;
	struct acols a;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX], afirst[SONDE_MSPEC_MAX];
	size_t nf = sonde_model_nfuncs(m), nblocks = 0;
	const int64_t *total = sonde_model_total(m);
	char title[128];
	uint32_t *centers = NULL;
	struct block *blocks = NULL;
	const struct sonde_edge **list = NULL;
	struct sonde_edge *roots = NULL;
	int64_t zero[SONDE_MAX_METRICS] = { 0 };

	if (func != UINT32_MAX && func >= nf) {
		snprintf(err, errlen, "no function %u", func);
		return -1;
	}
	int resolved = vw_resolve(&c, m, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	attributed_items(&a, m, o);
	vt_init(&t);
	vt_field_key(&t, "function");
	vt_field_key(&t, "role");
	vt_field_key(&t, "name");
	vt_field_key(&t, "object");
	for (int k = 0; k < a.n; k++) {
		afirst[k] = add_item_cols(&t, sonde_model_metric(m, a.mi[k]), 'a', a.vis[k],
					  !o->sort.by_name && a.mi[k] == c.sort_mi, NULL, NULL, VT_VAL);
		if (afirst[k] < 0)
			return oom(&t, err, errlen);
	}
	/* rows are sorted by the attributed column, which is marked */
	if (vw_item_columns(&t, m, &c, o, first, '-') < 0)
		return oom(&t, err, errlen);

	/* The centers: <Total> and every function, or the one asked for. */
	size_t ncenters = 0;

	centers = malloc((nf + 1) * sizeof(*centers));
	blocks = malloc((nf + 1) * sizeof(*blocks));
	list = malloc((nf + 1) * sizeof(*list));
	roots = calloc(nf + 1, sizeof(*roots));
	if (!centers || !blocks || !list || !roots)
		goto nomem;
	/* What <Total> calls: the part of each function's inclusive metric not
	 * attributed to a caller (the stacks whose root is its lowest
	 * invocation).  roots[g].func is UINT32_MAX when there is none. */
	for (uint32_t g = 0; g < nf; g++) {
		size_t ne;
		const struct sonde_edge *e = sonde_model_callers(m, g, &ne);
		const int64_t *in = sonde_model_incl(m, g);
		bool any = false;

		for (int k = 0; k < sonde_model_nmetrics(m); k++) {
			roots[g].v[k] = in[k];
			for (size_t j = 0; j < ne; j++)
				roots[g].v[k] -= e[j].v[k];
			any |= roots[g].v[k] != 0;
		}
		roots[g].func = any ? g : UINT32_MAX;
	}
	if (func == UINT32_MAX) {
		size_t nids = nf;
		uint32_t *ids = sorted_ids(m, o, c.sort_mi, &nids, false);

		if (!ids)
			goto nomem;
		centers[ncenters++] = UINT32_MAX;
		for (size_t i = 0; i < nids && (!o->limit || i < o->limit); i++)
			centers[ncenters++] = ids[i];
		free(ids);
	} else {
		centers[ncenters++] = func;
	}

	struct edgesort es = { m, o->names, c.sort_mi };

	for (size_t b = 0; b < ncenters; b++) {
		uint32_t ctr = centers[b];
		const char *cname = ctr == UINT32_MAX
					    ? TOTAL_NAME
					    : sonde_view_funcname(sonde_model_funcinfo(m, ctr), o->names);
		const int64_t *cin = ctr == UINT32_MAX ? total : sonde_model_incl(m, ctr);
		size_t ne = 0, nl = 0;
		const struct sonde_edge *e;
		struct sonde_edge tot;
		struct block *bl = &blocks[nblocks++];

		bl->center = ctr;
		bl->first = t.nrows;
		/* callers, with <Total> for the stacks the function starts */
		if (ctr != UINT32_MAX) {
			e = sonde_model_callers(m, ctr, &ne);
			for (size_t j = 0; j < ne; j++)
				list[nl++] = &e[j];
			if (roots[ctr].func != UINT32_MAX) {
				tot = roots[ctr];
				tot.func = UINT32_MAX;
				list[nl++] = &tot;
			}
		}
		sort_r(list, nl, sizeof(*list), cmp_edges, &es);
		for (size_t q = 0; q < nl; q++)
			if (!cc_row(&t, m, o, &a, afirst, &c, first, ' ', list[q]->func, list[q]->v,
				    cin, "caller", cname))
				goto nomem;
		bl->ncallers = nl;
		/* the function itself: attributed = its exclusive metric */
		if (!cc_row(&t, m, o, &a, afirst, &c, first, '*', ctr,
			    ctr == UINT32_MAX ? zero : sonde_model_excl(m, ctr), cin, "function", cname))
			goto nomem;
		/* callees; <Total> calls the functions that start stacks */
		nl = 0;
		if (ctr == UINT32_MAX) {
			for (uint32_t g = 0; g < nf; g++)
				if (roots[g].func != UINT32_MAX)
					list[nl++] = &roots[g];
		} else {
			e = sonde_model_callees(m, ctr, &ne);
			for (size_t j = 0; j < ne; j++)
				list[nl++] = &e[j];
		}
		sort_r(list, nl, sizeof(*list), cmp_edges, &es);
		for (size_t q = 0; q < nl; q++)
			if (!cc_row(&t, m, o, &a, afirst, &c, first, ' ', list[q]->func, list[q]->v,
				    cin, "callee", cname))
				goto nomem;
		bl->ncallees = nl;
	}

	sonde_sort_title(&o->sort, title, sizeof(title));
	struct sonde_emit em;
	char atitle[128];
	struct sonde_sortkey ak = o->sort;

	em_init(&em, f, o->mode);
	ak.flavor = 'a';
	sonde_sort_title(&ak, atitle, sizeof(atitle));
	if (func == UINT32_MAX)
		em_text(&em, "Functions sorted by metric: %s\n", title);
	em_text(&em, "Callers and callees sorted by metric: %s\n", atitle);
	em_table_csv(&em, &t);
	vw_begin(&em, func == UINT32_MAX ? "callers-callees" : "csingle", o);
	em_arr(&em, "blocks");
	for (size_t b = 0; b < nblocks; b++) {
		size_t s = blocks[b].first, nc = blocks[b].ncallers, end = s + nc + 1 + blocks[b].ncallees;

		em_text(&em, "\n");
		em_table_text(&em, &t, s, end);
		em_obj(&em, NULL);
		em_table_row(&em, "function", &t, s + nc);
		em_table_rows(&em, "callers", &t, s, s + nc);
		em_table_rows(&em, "callees", &t, s + nc + 1, end);
		em_end(&em);
	}
	em_end(&em);
	em_end_doc(&em);
	free(centers);
	free(blocks);
	free(list);
	free(roots);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(centers);
	free(blocks);
	free(list);
	free(roots);
	return oom(&t, err, errlen);
}

/* ---- stack fragments (cprepend, cappend, crmfirst, crmlast) ------------------------- */

/* Adds the values v to the edge of func in list (n used, at most cap). */
static void frag_add(struct sonde_edge *list, size_t *n, uint32_t func, const int64_t *v, int nm)
{
	size_t i = 0;

	while (i < *n && list[i].func != func)
		i++;
	if (i == *n) {
		memset(&list[i], 0, sizeof(list[i]));
		list[i].func = func;
		(*n)++;
	}
	for (int k = 0; k < nm; k++)
		list[i].v[k] += v[k];
}

/* Rows of a fragment view for edges (attributed values, percentages of
 * the fragment's total). */
static int frag_rows(struct vt_table *t, const struct sonde_model *m, const struct sonde_view_opts *o,
		     const struct acols *a, const int *afirst, const char *role, uint32_t func,
		     const int64_t *v, const int64_t *ftotal)
{
	char tname[1024];
	struct vt_row *r = vt_row(t, ' ', text_name(tname, sizeof tname, m, func, o));

	if (!r)
		return -1;
	vt_set_s(r, 0, role);
	vt_set_s(r, 1, func == UINT32_MAX ? TOTAL_NAME
					  : sonde_view_funcname(sonde_model_funcinfo(m, func), o->names));
	if (func != UINT32_MAX)
		vt_set_s(r, 2, object_name(m, sonde_model_funcinfo(m, func)->object));
	for (int k = 0; v && k < a->n; k++) {
		vw_set_metric(r, afirst[k], m, a->mi[k], v);
		if ((a->vis[k] & SONDE_VIS_PCT) && !sonde_model_is_derived(m, a->mi[k]))
			vt_set_d(r, afirst[k] + 1, pct(v[a->mi[k]], ftotal[a->mi[k]]));
	}
	return 0;
}

int sonde_view_fragment(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			const uint32_t *frag, size_t n, char *err, size_t errlen)
{
	struct cols c;
	struct acols a;
	struct vt_table t;
	int afirst[SONDE_MSPEC_MAX];
	int nm = sonde_model_nmetrics(m);
	size_t nf = sonde_model_nfuncs(m), ncr = 0, nce = 0;
	int64_t self[SONDE_MAX_METRICS] = { 0 }, ftotal[SONDE_MAX_METRICS] = { 0 };
	struct sonde_edge *callers = NULL, *callees = NULL;
	const struct sonde_edge **list = NULL;

	if (!n) {
		snprintf(err, errlen, "the stack fragment is empty");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (frag[i] >= nf) {
			snprintf(err, errlen, "no function %u", frag[i]);
			return -1;
		}
	int resolved = vw_resolve(&c, m, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	attributed_items(&a, m, o);
	vt_init(&t);
	t.blanks = true; /* the fragment's callers of its last function */
	vt_field_key(&t, "role");
	vt_field_key(&t, "name");
	vt_field_key(&t, "object");
	for (int k = 0; k < a.n; k++) {
		afirst[k] = add_item_cols(&t, sonde_model_metric(m, a.mi[k]), 'a', a.vis[k],
					  !o->sort.by_name && a.mi[k] == c.sort_mi, NULL, NULL, VT_VAL);
		if (afirst[k] < 0)
			return oom(&t, err, errlen);
	}
	callers = malloc((nf + 1) * sizeof(*callers));
	callees = malloc((nf + 1) * sizeof(*callees));
	list = malloc((nf + 1) * sizeof(*list));
	if (!callers || !callees || !list)
		goto nomem;
	/* Each stack that holds the fragment counts once, at its lowest
	 * occurrence, as the model attributes a recursive function's calls. */
	for (uint32_t s = 0; s < sonde_model_nstacks(m); s++) {
		int depth;
		const uint32_t *fu = sonde_model_stack_funcs(m, s, &depth); /* leaf first */
		const int64_t *v = sonde_model_stack_values(m, s);

		for (size_t j = 0; j + n <= (size_t)depth; j++) {
			size_t k = 0;

			while (k < n && fu[j + k] == frag[n - 1 - k])
				k++;
			if (k < n)
				continue;
			for (int q = 0; q < nm; q++)
				ftotal[q] += v[q];
			if (j == 0)
				for (int q = 0; q < nm; q++)
					self[q] += v[q];
			else
				frag_add(callees, &nce, fu[j - 1], v, nm);
			frag_add(callers, &ncr, j + n < (size_t)depth ? fu[j + n] : UINT32_MAX, v, nm);
			break;
		}
	}

	struct edgesort es = { m, o->names, c.sort_mi };
	size_t nl = 0;

	for (size_t i = 0; i < ncr; i++)
		list[nl++] = &callers[i];
	sort_r(list, nl, sizeof(*list), cmp_edges, &es);
	for (size_t i = 0; i < nl; i++)
		if (frag_rows(&t, m, o, &a, afirst, "caller", list[i]->func, list[i]->v, ftotal) < 0)
			goto nomem;
	/* the fragment: its last function holds the value of the stacks that
	 * end there (its exclusive value in this context) */
	for (size_t i = 0; i < n; i++)
		if (frag_rows(&t, m, o, &a, afirst, "fragment", frag[i], i + 1 == n ? self : NULL, ftotal) < 0)
			goto nomem;
	nl = 0;
	for (size_t i = 0; i < nce; i++)
		list[nl++] = &callees[i];
	sort_r(list, nl, sizeof(*list), cmp_edges, &es);
	for (size_t i = 0; i < nl; i++)
		if (frag_rows(&t, m, o, &a, afirst, "callee", list[i]->func, list[i]->v, ftotal) < 0)
			goto nomem;

	struct sonde_emit em;
	char atitle[128];
	struct sonde_sortkey ak = o->sort;

	em_init(&em, f, o->mode);
	ak.flavor = 'a';
	sonde_sort_title(&ak, atitle, sizeof(atitle));
	em_text(&em, "Callers and callees sorted by metric: %s\n\n", atitle);
	em_table_text(&em, &t, 0, 0);
	em_text(&em, "============== %s\n", ncr ? "Callers" : "No Callers");
	em_table_text_rows(&em, &t, 0, ncr);
	em_text(&em, "\n============== Stack Fragment\n");
	em_table_text_rows(&em, &t, ncr, ncr + n);
	em_text(&em, "\n============== %s\n", nce ? "Callees" : "No Callees");
	em_table_text_rows(&em, &t, ncr + n, t.nrows);
	em_table_csv(&em, &t);
	vw_begin(&em, "fragment", o);
	em_table_rows(&em, "callers", &t, 0, ncr);
	em_table_rows(&em, "fragment", &t, ncr, ncr + n);
	em_table_rows(&em, "callees", &t, ncr + n, t.nrows);
	em_end_doc(&em);
	free(callers);
	free(callees);
	free(list);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(callers);
	free(callees);
	free(list);
	return oom(&t, err, errlen);
}

/* ---- -calltree -------------------------------------------------------------------- */

#define TREE_INDENT_MAX 30 /* levels drawn; deeper nodes say their depth */

struct treesort {
	const struct sonde_model *m;
	const struct sonde_tnode *nodes;
	enum sonde_namefmt names;
	int mi;
};

static int cmp_tnodes(const void *a, const void *b, void *arg)
{
	const struct treesort *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct sonde_tnode *nx = &s->nodes[x], *ny = &s->nodes[y];

	int c = s->mi >= 0 ? sonde_model_cmp(s->m, s->mi, ny->incl, nx->incl) : 0;

	if (c)
		return c;
	c = strcmp(sonde_view_funcname(sonde_model_funcinfo(s->m, nx->func), s->names),
		   sonde_view_funcname(sonde_model_funcinfo(s->m, ny->func), s->names));

	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/* Depth-first walk of the tree: a stack of nodes still to print. */
struct dfs {
	struct dfs_item {
		uint32_t node;
		uint32_t depth;
		int64_t parent; /* row of the parent */
		bool last;	/* the last of its siblings */
	} *stack;
	size_t sp, scap;
	uint32_t *kids;
	size_t kcap;
};

/* Pushes the sibling chain starting at first, sorted, so that the first
 * in order is popped first.  Returns 0 or -1 when out of memory. */
static int dfs_push(struct dfs *d, const struct sonde_tnode *nodes, uint32_t first, uint32_t depth,
		    int64_t parent, struct treesort *ts)
{
	size_t nk = 0;

	for (uint32_t k = first; k != UINT32_MAX; k = nodes[k].next_sibling) {
		if (sonde_grow(&d->kids, &d->kcap, nk + 1, sizeof(*d->kids), 64))
			return -1;
		d->kids[nk++] = k;
	}
	sort_r(d->kids, nk, sizeof(*d->kids), cmp_tnodes, ts);
	if (sonde_grow(&d->stack, &d->scap, d->sp + nk, sizeof(*d->stack), 64))
		return -1;
	for (size_t i = nk; i-- > 0;)
		d->stack[d->sp++] = (struct dfs_item){ d->kids[i], depth, parent, i == nk - 1 };
	return 0;
}

/* The tree nodes that are a restored tail-call frame on some stack through
 * them: each marked stack followed from its root.  NULL out of memory. */
static bool *tree_tailmarks(const struct sonde_model *m, const struct sonde_tnode *nodes, size_t nn,
			    const uint64_t *marks, size_t nmarks)
{
	bool *on = calloc(nn + 1, sizeof(*on));

	for (size_t s = 0; on && s < nmarks && s < sonde_model_nstacks(m); s++) {
		if (!marks[s])
			continue;
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(m, (uint32_t)s, &depth);
		uint32_t n = sonde_model_tree_roots(m);

		for (int k = depth; k-- > 0;) {
			while (n != UINT32_MAX && nodes[n].func != fr[k])
				n = nodes[n].next_sibling;
			if (n == UINT32_MAX)
				break;
			if (k < 64 && (marks[s] >> k & 1))
				on[n] = true;
			n = nodes[n].first_child;
		}
	}
	return on;
}

/* The tree of nodes (the model's, or its inverted tree) from roots. */
static int calltree(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
		    const struct sonde_tnode *nodes, uint32_t roots, bool inverted, char *err, size_t errlen)
{
	struct cols c;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(m);
	char title[128];
	struct dfs d = { 0 };
	bool *more = NULL; /* more[k]: the ancestor at depth k has later siblings */
	size_t mcap = 0;
	char *line = NULL;
	size_t lcap = 0;
	struct treesort ts = { m, nodes, o->names, -1 };
	size_t printed = 0;

	int resolved = vw_resolve(&c, m, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	ts.mi = c.sort_mi;
	vt_init(&t);
	vt_field_key(&t, "node");
	vt_field_key(&t, "parent");
	vt_field_key(&t, "depth");
	vt_field_key(&t, "name");
	vt_field_key(&t, "object");
	/* restored tail-call frames: marked on the call paths from a root
	 * (the inverted tree's nodes are not such paths) */
	bool marks = o->tailmarks && !inverted;
	size_t nn = 0;

	if (marks)
		sonde_model_tree(m, &nn);
	bool *tailnode = marks ? tree_tailmarks(m, nodes, nn, o->tailmarks, o->ntailmarks) : NULL;

	if (marks && !tailnode)
		return oom(NULL, err, errlen);
	if (tailnode)
		vt_field_key(&t, "tail_call");
	/* An item of a tree node shows the node's own exclusive / inclusive
	 * metric; children are sorted by the inclusive one, which is marked. */
	if (vw_item_columns(&t, m, &c, o, first, 'i') < 0)
		return oom(&t, err, errlen);
	struct vt_row *r = vt_row(&t, ' ', TOTAL_NAME);

	if (!r)
		goto nomem;
	vt_set_n(r, 0, 0);
	vt_set_n(r, 2, 0);
	vt_set_s(r, 3, TOTAL_NAME);
	vw_fill_items(r, &t, &c, first, total, total, total);

	if (dfs_push(&d, nodes, roots, 1, 0, &ts) < 0)
		goto nomem;
	while (d.sp > 0 && (!o->limit || printed < o->limit)) {
		struct dfs_item it = d.stack[--d.sp];
		const struct sonde_tnode *nd = &nodes[it.node];

		if (sonde_grow(&more, &mcap, (size_t)it.depth + 1, sizeof(*more), 64))
			goto nomem;
		more[it.depth] = !it.last;
		/* the prefix: "| " or "  " per ancestor level, then "+-" */
		char tname[1024];
		const char *name = text_name(tname, sizeof tname, m, nd->func, o);
		size_t need = 2 * TREE_INDENT_MAX + 64 + strlen(name);

		if (sonde_grow(&line, &lcap, need, 1, 256))
			goto nomem;
		size_t p = 0;
		uint32_t levels = it.depth - 1 < TREE_INDENT_MAX ? it.depth - 1 : TREE_INDENT_MAX;

		for (uint32_t k = 1; k <= levels; k++) {
			line[p++] = more[k] ? '|' : ' ';
			line[p++] = ' ';
		}
		if (it.depth - 1 > TREE_INDENT_MAX)
			snprintf(line + p, lcap - p, "+-[%u] %s", it.depth, name);
		else
			snprintf(line + p, lcap - p, "+-%s", name);
		int64_t row = (int64_t)t.nrows;

		r = vt_row(&t, ' ', line);
		if (!r)
			goto nomem;
		vt_set_n(r, 0, row);
		vt_set_n(r, 1, it.parent);
		vt_set_n(r, 2, it.depth);
		vt_set_s(r, 3, sonde_view_funcname(sonde_model_funcinfo(m, nd->func), o->names));
		vt_set_s(r, 4, object_name(m, sonde_model_funcinfo(m, nd->func)->object));
		if (tailnode)
			vt_set_n(r, 5, tailnode[it.node]);
		vw_fill_items(r, &t, &c, first, nd->excl, nd->incl, total);
		printed++;
		if (dfs_push(&d, nodes, nd->first_child, it.depth + 1, row, &ts) < 0)
			goto nomem;
	}

	sonde_sort_title(&o->sort, title, sizeof(title));
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "Functions Call Tree%s. Children sorted by metric: %s%s\n\n",
		inverted ? ", inverted: leaf functions, their callers under them" : "",
		o->sort.by_name ? "" : "Inclusive ", o->sort.by_name ? "Name" : strchr(title, ' ') + 1);
	vw_begin(&em, inverted ? "calltree_inverted" : "calltree", o);
	em_table(&em, "nodes", &t);
	em_end_doc(&em);
	free(d.stack);
	free(d.kids);
	free(more);
	free(line);
	free(tailnode);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(tailnode);
	free(d.stack);
	free(d.kids);
	free(more);
	free(line);
	return oom(&t, err, errlen);
}

int sonde_view_calltree(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			char *err, size_t errlen)
{
	size_t nn;
	const struct sonde_tnode *nodes = sonde_model_tree(m, &nn);

	return calltree(f, m, o, nodes, sonde_model_tree_roots(m), false, err, errlen);
}

int sonde_view_calltree_inverted(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
				 char *err, size_t errlen)
{
	struct sonde_tnode *nodes;
	size_t nn;
	uint32_t roots;

	if (sonde_model_tree_inverted(m, &nodes, &nn, &roots) < 0)
		return oom(NULL, err, errlen);
	int r = calltree(f, m, o, nodes, roots, true, err, errlen);

	free(nodes);
	return r;
}

/* ---- -threads ------------------------------------------------------------------------ */

struct thsort {
	const struct sonde_model *m;
	int mi;
};

static int cmp_threads(const void *a, const void *b, void *arg)
{
	const struct thsort *s = arg;
	const struct sonde_pthread *x = *(const struct sonde_pthread *const *)a;
	const struct sonde_pthread *y = *(const struct sonde_pthread *const *)b;
	int c = s->mi >= 0 ? sonde_model_cmp(s->m, s->mi, y->v, x->v) : 0;

	if (c)
		return c;
	if (x->exp != y->exp)
		return x->exp < y->exp ? -1 : 1;
	return x->number < y->number ? -1 : x->number > y->number;
}

void vw_index_cols(struct icols *a, const struct cols *c)
{
	a->n = 0;
	for (int i = 0; i < c->n; i++) {
		int k;

		for (k = 0; k < a->n; k++)
			if (a->mi[k] == c->mi[i])
				break;
		if (k == a->n) {
			a->mi[a->n] = c->mi[i];
			a->vis[a->n++] = 0;
		}
		a->vis[k] |= c->it[i]->vis;
	}
}

int vw_index_fields(struct vt_table *t, const struct sonde_model *m, const struct icols *a, int sort_mi,
		    int *first)
{
	for (int k = 0; k < a->n; k++) {
		const struct sonde_metric_def *d = sonde_model_metric(m, a->mi[k]);
		char key[64];

		if (vt_group(t, d->abbr, NULL, a->mi[k] == sort_mi) < 0)
			return -1;
		first[k] = vt_sub(t, VT_VAL, d->unit, (a->vis[k] & SONDE_VIS_VALUE) != 0, d->name);
		snprintf(key, sizeof(key), "%%%s", d->name);
		if (first[k] < 0 || ((a->vis[k] & SONDE_VIS_PCT) && d->unit != SONDE_UNIT_RATIO &&
				     vt_sub(t, VT_PCT, d->unit, true, key) < 0))
			return -1;
	}
	return 0;
}

void vw_index_values(struct vt_row *r, const struct sonde_model *m, const struct icols *a, const int *first,
		     const int64_t *v, const int64_t *total)
{
	for (int k = 0; k < a->n; k++) {
		vw_set_metric(r, first[k], m, a->mi[k], v);
		if ((a->vis[k] & SONDE_VIS_PCT) && !sonde_model_is_derived(m, a->mi[k]))
			vt_set_d(r, first[k] + 1, pct(v[a->mi[k]], total[a->mi[k]]));
	}
}

int sonde_view_threads(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o,
		       char *err, size_t errlen)
{
	const struct sonde_model *m = p->model;
	struct icols a;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	int64_t total[SONDE_MAX_METRICS] = { 0 };
	const struct sonde_pthread **sel = malloc((p->nthreads + 1) * sizeof(*sel));
	size_t ns = 0;
	struct cols c;
	char title[128];

	if (!sel)
		return oom(NULL, err, errlen);
	int resolved = vw_resolve(&c, m, o, NULL, err, errlen);

	if (resolved < 0) {
		free(sel);
		return resolved;
	}
	vw_index_cols(&a, &c);
	vt_init(&t);
	vt_field_key(&t, "experiment");
	vt_field_key(&t, "thread");
	vt_field_key(&t, "tid");
	vt_field_key(&t, "name");
	if (vw_index_fields(&t, m, &a, c.sort_mi, first) < 0)
		goto nomem;
	for (size_t i = 0; i < p->nthreads; i++) {
		if (!p->threads[i].selected)
			continue;
		sel[ns++] = &p->threads[i];
		for (int k = 0; k < sonde_model_nmetrics(m); k++)
			total[k] = (int64_t)((uint64_t)total[k] + (uint64_t)p->threads[i].v[k]); /* wraps */
	}
	struct thsort ths = { m, c.sort_mi };

	sort_r(sel, ns, sizeof(*sel), cmp_threads, &ths);
	for (size_t i = 0; i <= ns && (!o->limit || i <= o->limit); i++) {
		const struct sonde_pthread *th = i ? sel[i - 1] : NULL;
		char name[160];

		if (!th)
			snprintf(name, sizeof(name), TOTAL_NAME);
		else if (p->nexps > 1)
			snprintf(name, sizeof(name), "Experiment %u, Thread %u (tid %u)%s%s", th->exp + 1,
				 th->number, th->tid, th->name ? " " : "", th->name ? th->name : "");
		else
			snprintf(name, sizeof(name), "Thread %u (tid %u)%s%s", th->number, th->tid, th->name ? " " : "",
				 th->name ? th->name : "");
		/* a thread's name is the program's to choose: no control
		 * character of it reaches a terminal */
		for (char *q = name; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		struct vt_row *r = vt_row(&t, ' ', name);

		if (!r)
			goto nomem;
		if (th) {
			vt_set_n(r, 0, th->exp + 1);
			vt_set_n(r, 1, th->number);
			vt_set_n(r, 2, th->tid);
		}
		vt_set_s(r, 3, th ? vt_str(&t, name) : TOTAL_NAME);
		vw_index_values(r, m, &a, first, th ? th->v : total, total);
	}
	if (o->sort.by_name)
		snprintf(title, sizeof(title), "Thread number");
	else
		snprintf(title, sizeof(title), "%s", sonde_model_metric(m, c.sort_mi)->title);
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "Threads sorted by metric: %s\n", title);
	if (ns < p->nthreads)
		em_text(&em, "%zu of %zu threads selected\n", ns, p->nthreads);
	em_text(&em, "\n");
	vw_begin(&em, "threads", o);
	em_u(&em, "threads_total", p->nthreads);
	vw_table_body(&em, &t);
	free(sel);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(sel);
	return oom(&t, err, errlen);
}

/* ---- -metric_list ----------------------------------------------------------------------- */

int sonde_view_metric_list(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o,
			   char *err, size_t errlen)
{
	char spec[512], title[128];
	int n, nd;
	const struct sonde_metric_def *known = sonde_view_known_metrics(&n);
	const struct sonde_metric_def *all[SONDE_MAX_METRICS + SONDE_MAX_DERIVED];
	static const char fl[] = "eia";

	/* the model's metrics, derived ones included; or every known one */
	if (m) {
		n = sonde_model_nall(m);
		for (int i = 0; i < n; i++)
			all[i] = sonde_model_metric(m, i);
	} else {
		for (int i = 0; i < n; i++)
			all[i] = &known[i];
		sonde_derived_metrics(&nd);
		for (int i = 0; i < nd && n < (int)(sizeof all / sizeof all[0]); i++)
			if (sonde_view_known_derived(i))
				all[n++] = sonde_view_known_derived(i);
	}
	sonde_mspec_format(&o->metrics, spec, sizeof(spec));
	sonde_sort_title(&o->sort, title, sizeof(title));
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "Current metrics: %s\n", spec);
	if (o->sort.by_name)
		em_text(&em, "Current Sort Metric: Name ( name )\n");
	else
		em_text(&em, "Current Sort Metric: %s ( %c.%s )\n", title, o->sort.flavor,
			o->sort.metric);
	em_text(&em, "Available metrics:\n");
	for (int i = 0; i < n; i++) {
		const struct sonde_metric_def *d = all[i];

		for (int k = 0; k < 3; k++) {
			char label[160];

			snprintf(label, sizeof(label), "%s %s",
				 k == 0	  ? "Exclusive"
				 : k == 1 ? "Inclusive"
					  : "Attributed",
				 d->title);
			/* a ratio has no percentage */
			em_text(&em, "%36s: %c%s%s%s\n", label, fl[k], d->unit == SONDE_UNIT_NS ? "." : "+",
				d->unit == SONDE_UNIT_RATIO ? "" : "%", d->name);
		}
	}
	em_text(&em, "%36s: name\n", "Name");
	em_csv(&em, "name,title,unit,flavors\n");
	vw_begin(&em, "metric_list", o);
	em_arr(&em, "available");
	for (int i = 0; i < n; i++) {
		const struct sonde_metric_def *d = all[i];

		em_row(&em);
		em_s(&em, "name", d->name);
		em_s(&em, "title", d->title);
		em_s(&em, "unit", d->unit == SONDE_UNIT_NS	   ? "ns"
				  : d->unit == SONDE_UNIT_BYTES ? "bytes"
				  : d->unit == SONDE_UNIT_RATIO ? "ratio"
								: "count");
		em_s(&em, "flavors", "eia");
		em_row_end(&em);
	}
	em_end(&em);
	em_end_doc(&em);
	return vw_finish(f, err, errlen);
}

/* ---- -compare ----------------------------------------------------------------------------- */

struct cset {
	size_t n, nm;	     /* rows, models */
	size_t capids, capkeys;
	uint32_t *ids;	     /* rows * nm */
	char **keys;	     /* per row */
	uint32_t *slot;	     /* hash: row + 1 */
	size_t nslot;
};

static uint64_t hstr(const char *s)
{
	uint64_t h = u64map_hash_str(s);

	return h ^ (h >> 29); /* (slots are its low bits) */
}

static int cset_grow(struct cset *s)
{
	size_t nslot = s->nslot ? 2 * s->nslot : 1024;
	uint32_t *ns = calloc(nslot, sizeof(*ns));

	if (!ns)
		return -1;
	for (size_t r = 0; r < s->n; r++) {
		size_t i = hstr(s->keys[r]) & (nslot - 1);

		while (ns[i])
			i = (i + 1) & (nslot - 1);
		ns[i] = (uint32_t)r + 1;
	}
	free(s->slot);
	s->slot = ns;
	s->nslot = nslot;
	return 0;
}

/* The row of key (added when new); -1 when out of memory. */
static int64_t cset_row(struct cset *s, const char *key)
{
	if (2 * (s->n + 1) > s->nslot && cset_grow(s) < 0)
		return -1;
	size_t i = hstr(key) & (s->nslot - 1);

	while (s->slot[i]) {
		if (!strcmp(s->keys[s->slot[i] - 1], key))
			return s->slot[i] - 1;
		i = (i + 1) & (s->nslot - 1);
	}
	if (sonde_grow(&s->ids, &s->capids, s->n + 1, s->nm * sizeof(*s->ids), 256) ||
	    sonde_grow(&s->keys, &s->capkeys, s->n + 1, sizeof(*s->keys), 256))
		return -1;
	s->keys[s->n] = strdup(key);
	if (!s->keys[s->n])
		return -1;
	for (size_t k = 0; k < s->nm; k++)
		s->ids[s->n * s->nm + k] = UINT32_MAX;
	s->slot[i] = (uint32_t)s->n + 1;
	return (int64_t)s->n++;
}

static void cset_free(struct cset *s)
{
	for (size_t r = 0; r < s->n; r++)
		free(s->keys[r]);
	free(s->keys);
	free(s->ids);
	free(s->slot);
}

struct csort {
	const struct cset *s;
	const struct sonde_model *m0;
	bool objects;
	char flavor;
	int mi;
	enum sonde_namefmt names;
	const char **name; /* per row */
};

/* The first model's vector of a row (zeros when it lacks the row). */
static const int64_t *cvec(const struct csort *c, size_t row)
{
	static const int64_t zero[SONDE_MAX_METRICS];
	uint32_t id = c->s->ids[row * c->s->nm];

	if (id == UINT32_MAX)
		return zero;
	if (c->objects)
		return c->flavor == 'e' ? sonde_model_object_excl(c->m0, id) : sonde_model_object_incl(c->m0, id);
	return c->flavor == 'e' ? sonde_model_excl(c->m0, id) : sonde_model_incl(c->m0, id);
}

static int cmp_crows(const void *a, const void *b, void *arg)
{
	const struct csort *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = c->mi >= 0 ? sonde_model_cmp(c->m0, c->mi, cvec(c, y), cvec(c, x)) : 0;

	if (r)
		return r;
	r = strcmp(c->name[x], c->name[y]);

	if (r)
		return r;
	return x < y ? -1 : x > y;
}

int sonde_view_compare(FILE *f, const struct sonde_model *const *models, const char *const *names,
		       size_t n, bool objects, const struct sonde_view_opts *o, char *err,
		       size_t errlen)
{
	struct cols c;
	struct vt_table t;
	struct cset s = { .nm = n };
	int first[SONDE_MSPEC_MAX][8];
	const char **rname = NULL;
	uint32_t *order = NULL;
	char title[128], key[1024];

	if (n < 1 || n > 8) {
		snprintf(err, errlen, "compare takes 1 to 8 experiments, not %zu", n);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		int resolved = vw_resolve(&c, models[k], o, "ei", err, errlen);

		if (resolved < 0)
			return resolved;
	}
	vw_resolve(&c, models[0], o, "ei", err, errlen);
	vt_init(&t);
	vt_field_key(&t, "name");
	vt_field_key(&t, objects ? "path" : "object");
	for (int i = 0; i < c.n; i++)
		for (size_t k = 0; k < n; k++) {
			char suffix[16];
			enum vt_kind kind = k == 0 || o->compare == SONDE_CMP_ON ? VT_VAL
					    : o->compare == SONDE_CMP_DELTA  ? VT_DELTA
									     : VT_RATIO;

			snprintf(suffix, sizeof(suffix), "[%zu]", k + 1);
			first[i][k] = add_item_cols(&t, sonde_model_metric(models[0], c.mi[i]),
						    c.it[i]->flavor, c.it[i]->vis,
						    k == 0 && is_sort(o, c.it[i]->flavor, c.it[i]->metric),
						    names[k], suffix, kind);
			if (first[i][k] < 0)
				return oom(&t, err, errlen);
		}
	/* align: key = object name + mangled name */
	for (size_t k = 0; k < n; k++) {
		const struct sonde_model *m = models[k];
		size_t cnt = objects ? sonde_model_nobjects(m) : sonde_model_nfuncs(m);

		for (uint32_t id = 0; id < cnt; id++) {
			if (!nonzero(m, objects ? sonde_model_object_incl(m, id) : sonde_model_incl(m, id)))
				continue;
			if (objects) {
				const char *on = sonde_model_objectinfo(m, id)->name;

				snprintf(key, sizeof(key), "%s", on ? on : "");
			} else {
				const struct sonde_mfunc *fi = sonde_model_funcinfo(m, id);
				const char *on = object_name(m, fi->object);

				snprintf(key, sizeof(key), "%s\001%s", on ? on : "",
					 fi->mangled ? fi->mangled : "");
			}
			int64_t r = cset_row(&s, key);

			if (r < 0)
				goto nomem;
			if (s.ids[(size_t)r * n + k] == UINT32_MAX)
				s.ids[(size_t)r * n + k] = id;
		}
	}
	rname = calloc(s.n + 1, sizeof(*rname));
	order = malloc((s.n + 1) * sizeof(*order));
	if (!rname || !order)
		goto nomem;
	for (size_t r = 0; r < s.n; r++) {
		order[r] = (uint32_t)r;
		for (size_t k = 0; k < n && !rname[r]; k++) {
			uint32_t id = s.ids[r * n + k];

			if (id == UINT32_MAX)
				continue;
			rname[r] = objects ? sonde_model_objectinfo(models[k], id)->name
					   : sonde_view_funcname(sonde_model_funcinfo(models[k], id),
								 o->names);
		}
		if (!rname[r])
			rname[r] = "?";
	}
	struct csort cs = { &s, models[0], objects, o->sort.flavor, c.sort_mi, o->names, rname };

	sort_r(order, s.n, sizeof(*order), cmp_crows, &cs);

	for (size_t i = 0; i <= s.n && (!o->limit || i <= o->limit); i++) {
		size_t row = i ? order[i - 1] : 0;
		const char *name = i ? rname[row] : TOTAL_NAME;
		struct vt_row *r = vt_row(&t, ' ', name);
		if (!r)
			goto nomem;
		vt_set_s(r, 0, name);
		for (int it = 0; it < c.n; it++) {
			int64_t base = 0;
			double dbase = 0;
			/* a derived metric (a ratio) is shown, compared and
			 * differenced as a double */
			bool derived = sonde_model_is_derived(models[0], c.mi[it]);

			for (size_t k = 0; k < n; k++) {
				static const int64_t zero[SONDE_MAX_METRICS];
				const struct sonde_model *m = models[k];
				const int64_t *total = sonde_model_total(m);
				const int64_t *vec = zero;
				int sub = first[it][k];
				if (!i) {
					vec = total;
				} else {
					uint32_t id = s.ids[row * n + k];
					bool present = id != UINT32_MAX;

					if (present && objects) {
						vec = c.it[it]->flavor == 'e' ? sonde_model_object_excl(m, id)
									      : sonde_model_object_incl(m, id);
						if (!k || !r->f[1].s)
							vt_set_s(r, 1, sonde_model_objectinfo(m, id)->path);
					} else if (present) {
						vec = c.it[it]->flavor == 'e' ? sonde_model_excl(m, id)
									      : sonde_model_incl(m, id);
						if (!r->f[1].s)
							vt_set_s(r, 1, object_name(m, sonde_model_funcinfo(m, id)->object));
					}
				}
				int64_t v = derived ? 0 : vec[c.mi[it]];
				double dv = sonde_model_value(models[0], c.mi[it], vec);

				if (k == 0) {
					base = v;
					dbase = dv;
				}
				vw_set_metric(r, sub, models[0], c.mi[it], vec);
				int next = sub + 1;

				if (t.s[sub].kind == VT_VAL && next < t.nsubs &&
				    t.s[next].group == t.s[sub].group &&
				    (t.s[next].kind == VT_DELTA || t.s[next].kind == VT_RATIO)) {
					if (t.s[next].kind == VT_DELTA && derived)
						vt_set_d(r, next, dv - dbase);
					else if (t.s[next].kind == VT_DELTA)
						vt_set_i(r, next, v - base);
					else if (dbase)
						vt_set_d(r, next, dv / dbase);
					else if (dv == 0)
						vt_set_d(r, next, 1.0);
					else
						vt_set_d(r, next, 1.0 / 0.0);
					next++;
				}
				if (next < t.nsubs && t.s[next].group == t.s[sub].group &&
				    t.s[next].kind == VT_PCT)
					vt_set_d(r, next, pct(v, total[c.mi[it]]));
			}
		}
	}

	sonde_sort_title(&o->sort, title, sizeof(title));
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "%s sorted by metric: %s\n\n", objects ? "Load Objects" : "Functions", title);
	vw_begin(&em, objects ? "objects" : "functions", o);
	em_s(&em, "compare",
	     o->compare == SONDE_CMP_DELTA   ? "delta"
	     : o->compare == SONDE_CMP_RATIO ? "ratio"
					     : "on");
	em_arr(&em, "experiments");
	for (size_t k = 0; k < n; k++)
		em_s(&em, NULL, names[k]);
	em_end(&em);
	vw_table_body(&em, &t);
	free(rname);
	free(order);
	cset_free(&s);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(rname);
	free(order);
	cset_free(&s);
	return oom(&t, err, errlen);
}
