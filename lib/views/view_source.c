/*
 * Metrics per source line and per instruction: -lines, -pcs, -source,
 * -disasm (see view.h).
 *
 * One pass over the profile's distinct stacks (profile.h, ev) attributes
 * each stack's summed values to the lines and instructions on it: the
 * frames' source positions come from the symbol handles' DWARF (srcpos,
 * cached per address there), so the pass costs a hash probe per frame and
 * level, and its cost depends on the number of distinct stacks, not of
 * events.  Each view makes the pass again: views are rare, stacks few.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "reader/exptree.h"
#include "symbols/archive.h"
#include "symbols/disasm.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "base/strtab.h"
#include "base/grow.h"
#include "base/u64map.h"
#include "views/view.h"
#include "views/view_common.h"
#include "views/view_table.h"

#define TOTAL_NAME "<Total>"

/* ---- the pass over the stacks -------------------------------------------------- */

/* A source line with data. */
struct lrow {
	const char *file; /* interned */
	uint32_t line;
	const char *func;      /* the function at this line (mangled; interned), or NULL */
	const char *decl_file; /* where that function is defined (interned) */
	uint32_t exp;	       /* where it was first seen: for names */
	const struct sonde_object *obj;
	uint32_t stamp;	       /* the last stack counted in incl */
	int64_t e[SONDE_MAX_METRICS], i[SONDE_MAX_METRICS];
};

/* An instruction (or a call site, before disassembly) with data. */
struct prow {
	const char *objpath; /* interned */
	uint64_t addr;	     /* the object's own: the pc, or the return address - 1 */
	uint32_t exp;
	const struct sonde_object *obj;
	const struct sonde_func *fn; /* the function it is in (the experiment's handle) */
	uint32_t stamp;
	int64_t e[SONDE_MAX_METRICS], i[SONDE_MAX_METRICS];
};

/* A line where a function was inlined. */
struct site {
	const char *file;
	uint32_t line;
	const char *name; /* the inlined function (mangled; interned) */
	uint32_t exp;
	const struct sonde_object *obj;
};

struct agg {
	struct sonde_profile *p;
	int nm;
	struct strtab strs;
	/* -lines' rows: a (file, line) per function whose code is there (a
	 * macro can put two functions on one line); -source's: per (file,
	 * line), each stack counted once in a line's inclusive */
	struct lrow *l, *lt;
	size_t nl, capl, nlt, caplt;
	struct u64map lmap, ltmap; /* hash(file, line, function) -> l, hash(file, line) -> lt */
	struct prow *pc;
	size_t npc, cappc;
	struct u64map pmap; /* hash(object, addr) -> pc index */
	struct site *sites;
	size_t nsites, capsites;
	struct u64map smap;
	bool oom;
};

static uint64_t key2(const char *s, uint64_t x)
{
	return ((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) ^ (x * 0xff51afd7ed558ccdull) ^ (x >> 29);
}

/* The row of (file, line, func) among rows[0..*n) (func NULL: the line's
 * total row), made when missing. */
static struct lrow *lrow_in(struct agg *a, struct lrow **rows, size_t *n, size_t *cap, struct u64map *map,
			    const char *file, uint32_t line, const char *func, uint32_t exp,
			    const struct sonde_object *obj)
{
	uint64_t k = key2(file, line) ^ ((uint64_t)(uintptr_t)func * 0xc2b2ae3d27d4eb4full);

	for (long i = u64map_get(map, k); i >= 0; i = u64map_get(map, ++k))
		if ((*rows)[i].file == file && (*rows)[i].line == line && (*rows)[i].func == func)
			return &(*rows)[i];
	while (u64map_get(map, k) >= 0)
		k++;
	if (sonde_grow(rows, cap, *n + 1, sizeof(**rows), 256) || u64map_put(map, k, (uint32_t)*n) < 0) {
		a->oom = true;
		return NULL;
	}
	struct lrow *r = &(*rows)[(*n)++];

	memset(r, 0, sizeof(*r));
	r->file = file;
	r->line = line;
	r->func = func;
	r->exp = exp;
	r->obj = obj;
	r->stamp = UINT32_MAX;
	return r;
}

static struct prow *prow_get(struct agg *a, const char *objpath, uint64_t addr)
{
	uint64_t k = key2(objpath, addr);

	for (long i = u64map_get(&a->pmap, k); i >= 0; i = u64map_get(&a->pmap, ++k))
		if (a->pc[i].objpath == objpath && a->pc[i].addr == addr)
			return &a->pc[i];
	while (u64map_get(&a->pmap, k) >= 0)
		k++;
	if (sonde_grow(&a->pc, &a->cappc, a->npc + 1, sizeof(*a->pc), 256) ||
	    u64map_put(&a->pmap, k, (uint32_t)a->npc) < 0) {
		a->oom = true;
		return NULL;
	}
	struct prow *r = &a->pc[a->npc++];

	memset(r, 0, sizeof(*r));
	r->objpath = objpath;
	r->addr = addr;
	r->stamp = UINT32_MAX;
	return r;
}

static void add_site(struct agg *a, const char *file, uint32_t line, const char *name, uint32_t exp,
		     const struct sonde_object *obj)
{
	uint64_t k = key2(file, line) ^ key2(name, 1);

	for (long i = u64map_get(&a->smap, k); i >= 0; i = u64map_get(&a->smap, ++k))
		if (a->sites[i].file == file && a->sites[i].line == line && a->sites[i].name == name)
			return;
	while (u64map_get(&a->smap, k) >= 0)
		k++;
	if (sonde_grow(&a->sites, &a->capsites, a->nsites + 1, sizeof(*a->sites), 256) ||
	    u64map_put(&a->smap, k, (uint32_t)a->nsites) < 0) {
		a->oom = true;
		return;
	}
	a->sites[a->nsites++] = (struct site){ file, line, name, exp, obj };
}

static void add_v(int64_t *dst, const int64_t *v, int n)
{
	for (int k = 0; k < n; k++) /* wrap, never overflow UB */
		dst[k] = (int64_t)((uint64_t)dst[k] + (uint64_t)v[k]);
}

/* Stack s's values v to a row's exclusive e when its leaf is there, and
 * to its inclusive i once per stack (*stamp: the last stack counted). */
static void add_row(int64_t *e, int64_t *i, uint32_t *stamp, bool leaf, size_t s, const int64_t *v, int nm)
{
	if (leaf)
		add_v(e, v, nm);
	if (*stamp != s) {
		*stamp = (uint32_t)s;
		add_v(i, v, nm);
	}
}

/* One recorded stack's frames to their lines and instructions: the values
 * of evstack s, exclusive at the leaf when leaf (its own stack), inclusive
 * once per evstack (the stamps). */
static void walk(struct agg *a, size_t s, const struct sonde_evstack *ev, const struct sonde_stack *st,
		 uint64_t time_ns, bool leaf)
{
	struct sonde_profile *p = a->p;
	struct sonde_syms *sy = p->syms[ev->exp];
	bool own = leaf;

	for (int k = 0; st && k < st->depth && !a->oom; k++) {
		struct sonde_frame fr = st->frame[k];

		fr.exact |= k == 0 && own && ev->leaf_exact;
		const struct sonde_func *fn = sonde_syms_frame(sy, &fr, time_ns);
		const struct sonde_object *o = fn->object;
		uint64_t at;
		const char *where;

		if (o && o->sonde)
			continue; /* the collector's frames, as in the function list */
		if (o && fn->lo != fn->hi && sonde_syms_frame_place(&fr, fn, &at, &where)) {
			struct prow *r = prow_get(a, strtab_intern(&a->strs, where), at);

			if (r) {
				if (!r->fn) {
					r->fn = fn;
					r->exp = ev->exp;
					r->obj = o;
				}
				add_row(r->e, r->i, &r->stamp, leaf, s, ev->v, a->nm);
			}
		}
		const struct sonde_srcframe *lv;
		int n = o ? sonde_syms_frame_srcpos(sy, &fr, time_ns, &lv) : 0;

		for (int j = 0; j < n && !a->oom; j++) {
			if (!lv[j].file || !lv[j].line)
				continue;
			const char *file = strtab_intern(&a->strs, lv[j].file);
			const char *func = lv[j].name ? strtab_intern(&a->strs, lv[j].name) : NULL;
			struct lrow *r = file ? lrow_in(a, &a->l, &a->nl, &a->capl, &a->lmap, file, lv[j].line, func,
							ev->exp, o)
					      : NULL;
			struct lrow *rt = r ? lrow_in(a, &a->lt, &a->nlt, &a->caplt, &a->ltmap, file, lv[j].line, NULL,
						      ev->exp, o)
					    : NULL;

			if (!r || !rt) {
				a->oom = true;
				break;
			}
			if (func && !r->decl_file)
				r->decl_file = strtab_intern(&a->strs, lv[j].decl_file);
			add_row(r->e, r->i, &r->stamp, leaf && j == 0, s, ev->v, a->nm);
			add_row(rt->e, rt->i, &rt->stamp, leaf && j == 0, s, ev->v, a->nm);
			if (j > 0 && lv[j - 1].inlined && lv[j - 1].name)
				add_site(a, file, lv[j].line, strtab_intern(&a->strs, lv[j - 1].name), ev->exp, o);
		}
		leaf = false;
	}
}

/* The pass: every stack's values to its lines and instructions; a shaped
 * stack's (a worker's in an OpenMP region, model/shape.h) inclusive values
 * also to the lines of the stacks it continues in (the region's opening
 * line). */
static int aggregate(struct agg *a, struct sonde_profile *p)
{
	memset(a, 0, sizeof(*a));
	a->p = p;
	a->nm = sonde_model_nmetrics(p->model);
	for (size_t s = 0; s < p->nev && !a->oom; s++) {
		const struct sonde_evstack *ev = &p->ev[s];
		if (ev->excluded)
			continue; /* the call-path filter's: no values */
		const struct sonde_exp *exp = p->exps[ev->exp];

		walk(a, s, ev, sonde_exp_stack(exp, ev->stack_id), ev->time_ns, true);
		for (int c = 0; c < ev->ncont && !a->oom; c++)
			walk(a, s, ev, sonde_exp_stack(exp, ev->cont[c].stack_id), ev->cont[c].time_ns, false);
	}
	return a->oom ? -1 : 0;
}

static void agg_free(struct agg *a)
{
	strtab_free(&a->strs);
	free(a->l);
	free(a->lt);
	free(a->pc);
	free(a->sites);
	u64map_release(&a->lmap);
	u64map_release(&a->ltmap);
	u64map_release(&a->pmap);
	u64map_release(&a->smap);
}

/* ---- shared pieces of the views --------------------------------------------------- */

static int fail_oom(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* A function's name (mangled as DWARF gives it) in the chosen form. */
static const char *fname(struct sonde_profile *p, uint32_t exp, const struct sonde_object *o,
			 const char *mangled, enum sonde_namefmt names)
{
	if (!mangled)
		return "<unknown>";
	if (!o)
		return mangled;
	return sonde_view_symname(sonde_syms_named(p->syms[exp], o, mangled), names);
}

/* -name ...:soname: " [<libc.so.6>]" after a function's name, as er_print
 * writes it in these lists too; "" otherwise. */
static const char *soname(char *buf, size_t len, const struct sonde_view_opts *o, const struct sonde_object *obj)
{
	if (!o->soname || !obj)
		return "";
	snprintf(buf, len, " [<%s>]", obj->name ? obj->name : obj->path ? obj->path : "?");
	return buf;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Sort context for the flat lists: rows of values by the sort key. */
struct rsort {
	const struct sonde_view_opts *o;
	const struct sonde_model *m;
	int mi; /* a derived metric: the ratio of the row's sums */
	const int64_t *(*excl)(const void *row);
	const int64_t *(*incl)(const void *row);
	const char *(*name)(const void *row);
	const void *rows;
	size_t size;
};

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct rsort *c = arg;
	const void *a = (const char *)c->rows + *(const uint32_t *)x * c->size;
	const void *b = (const char *)c->rows + *(const uint32_t *)y * c->size;

	if (c->mi >= 0) {
		bool e = c->o->sort.flavor == 'e';
		int d = sonde_model_cmp(c->m, c->mi, e ? c->excl(b) : c->incl(b), e ? c->excl(a) : c->incl(a));

		if (d)
			return d;
	}
	int r = strcmp(c->name(a), c->name(b));

	return r ? r : *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/*
 * A flat list (-lines, -pcs): <Total>, then rows sorted, limited.  names[i]
 * is row i's text name; fields(): its csv / json identity fields.
 */
static int flat_view(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o, const char *view,
		     const char *title, const char *const *fkeys, int nfkeys, struct rsort *rs, size_t n,
		     char **names, void (*fields)(struct vt_table *t, struct vt_row *r, const void *row, void *arg), void *arg,
		     char *err, size_t errlen)
{
	struct cols c;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(p->model);
	uint32_t *ids = NULL;

	int resolved = vw_resolve(&c, p->model, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	vt_init(&t);
	vt_field_key(&t, "name");
	for (int k = 0; k < nfkeys; k++)
		vt_field_key(&t, fkeys[k]);
	if (vw_item_columns(&t, p->model, &c, o, first, o->sort.flavor == 'a' ? 'i' : 0) < 0)
		goto nomem;
	ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		goto nomem;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const void *row = (const char *)rs->rows + i * rs->size;
		const int64_t *iv = rs->incl(row);
		bool any = false;

		for (int k = 0; k < sonde_model_nmetrics(p->model); k++)
			any |= iv[k] != 0;
		if (any)
			ids[m++] = (uint32_t)i;
	}
	rs->o = o;
	rs->m = p->model;
	rs->mi = c.sort_mi;
	if (m > 1)
		qsort_r(ids, m, sizeof(*ids), cmp_rows, rs);
	struct vt_row *r = vt_row(&t, ' ', o->soname ? TOTAL_NAME " [" TOTAL_NAME "]" : TOTAL_NAME);

	if (!r)
		goto nomem;
	vt_set_s(r, 0, TOTAL_NAME);
	vw_fill_items(r, &t, &c, first, total, total, total);
	for (size_t i = 0; i < m && (!o->limit || i < o->limit); i++) {
		const void *row = (const char *)rs->rows + ids[i] * rs->size;

		r = vt_row(&t, ' ', names[ids[i]]);
		if (!r)
			goto nomem;
		vt_set_s(r, 0, vt_str(&t, names[ids[i]]));
		fields(&t, r, row, arg);
		vw_fill_items(r, &t, &c, first, rs->excl(row), rs->incl(row), total);
	}
	free(ids);
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	vw_list_out(&em, &t, o, view, title);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	free(ids);
	vt_release(&t);
	return fail_oom(err, errlen);
}

/* ---- -lines ------------------------------------------------------------------------ */

static const int64_t *l_excl(const void *r) { return ((const struct lrow *)r)->e; }
static const int64_t *l_incl(const void *r) { return ((const struct lrow *)r)->i; }
static const char *l_name(const void *r) { return ((const struct lrow *)r)->file; }

struct lfields {
	struct agg *a;
	const struct sonde_view_opts *o;
};

static void line_fields(struct vt_table *t, struct vt_row *r, const void *row, void *arg)
{
	const struct lrow *l = row;
	struct lfields *x = arg;

	vt_set_s(r, 1, l->func ? vt_str(t, fname(x->a->p, l->exp, l->obj, l->func, x->o->names)) : NULL);
	vt_set_s(r, 2, vt_str(t, l->file));
	vt_set_n(r, 3, l->line);
}

int sonde_view_lines(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o,
		     char *err, size_t errlen)
{
	struct agg a;
	char **names = NULL;
	int rc = -1;

	if (aggregate(&a, p) < 0 || !(names = calloc(a.nl + 1, sizeof(*names)))) {
		rc = fail_oom(err, errlen);
		goto out;
	}
	for (size_t i = 0; i < a.nl; i++) {
		const struct lrow *l = &a.l[i];
		char so[300];

		if (asprintf(&names[i], "%s%s, line %u in \"%s\"",
			     l->func ? fname(p, l->exp, l->obj, l->func, o->names) : "<unknown>",
			     l->func ? soname(so, sizeof(so), o, l->obj) : "", l->line, base_name(l->file)) < 0) {
			names[i] = NULL;
			rc = fail_oom(err, errlen);
			goto out;
		}
	}
	static const char *const keys[] = { "function", "file", "line" };
	struct rsort rs = { .excl = l_excl, .incl = l_incl, .name = l_name, .rows = a.l, .size = sizeof(*a.l) };
	struct lfields lf = { &a, o };

	rc = flat_view(f, p, o, "lines", "Lines", keys, 3, &rs, a.nl, names, line_fields, &lf, err, errlen);
out:
	for (size_t i = 0; names && i < a.nl; i++)
		free(names[i]);
	free(names);
	agg_free(&a);
	return rc;
}

/* ---- instructions: call sites to call instructions ------------------------------------ */

/* Disassembly of the functions met, one each (a function's instructions
 * are needed for every pc in it). */
struct dcache {
	struct sonde_profile *p;
	struct strtab files;
	struct dfile {
		const char *path; /* interned */
		struct sonde_disasm *d;
		char why[256];
	} *df;
	size_t ndf, capdf;
	struct dfunc {
		const struct sonde_func *fn;
		struct sonde_insn *v;
		long n;		/* -1: could not */
		char why[256];	/* then why */
	} *dfn;
	size_t ndfn, capdfn;
	struct u64map byfn; /* function -> dfn index */
};

static struct sonde_disasm *dc_file(struct dcache *c, uint32_t exp, const struct sonde_object *o,
				    const char **why)
{
	const char *file = sonde_syms_object_file(c->p->syms[exp], o);

	*why = NULL;
	if (!file) {
		*why = "its file could not be read (see the warning above)";
		return NULL;
	}
	file = strtab_intern(&c->files, file);
	for (size_t i = 0; i < c->ndf; i++)
		if (c->df[i].path == file) {
			*why = c->df[i].d ? NULL : c->df[i].why;
			return c->df[i].d;
		}
	if (!file || sonde_grow(&c->df, &c->capdf, c->ndf + 1, sizeof(*c->df), 256))
		return NULL;
	struct dfile *d = &c->df[c->ndf++];

	d->path = file;
	d->d = sonde_disasm_open(file, d->why, sizeof(d->why));
	*why = d->d ? NULL : d->why;
	return d->d;
}

/* fn's code: its symbol's extent, or for a function named after a single
 * address (an object without symbols) the extent its call-frame
 * information gives. */
static void code_range(struct sonde_profile *p, uint32_t exp, const struct sonde_func *fn, uint64_t *lo,
		       uint64_t *hi)
{
	*lo = fn->lo;
	*hi = fn->hi;
	if (fn->synthesized && fn->hi - fn->lo <= 1 && fn->object)
		sonde_syms_code_range(p->syms[exp], fn->object, fn->lo, lo, hi);
}

/* fn's instructions (*v, their number), or -1 with a reason in *why (valid
 * until the next call). */
static long dc_func(struct dcache *c, uint32_t exp, const struct sonde_func *fn, const struct sonde_insn **v,
		    const char **why)
{
	*v = NULL;
	long i = u64map_get(&c->byfn, (uint64_t)(uintptr_t)fn);

	if (i >= 0) {
		*v = c->dfn[i].v;
		*why = c->dfn[i].n < 0 ? c->dfn[i].why : NULL;
		return c->dfn[i].n;
	}
	struct sonde_disasm *d = dc_file(c, exp, fn->object, why);
	struct sonde_insn *ins = NULL;
	char e[256];
	uint64_t lo, hi;

	code_range(c->p, exp, fn, &lo, &hi);
	long n = d ? sonde_disasm_range(d, lo, hi, &ins, e, sizeof(e)) : -1;

	if (sonde_grow(&c->dfn, &c->capdfn, c->ndfn + 1, sizeof(*c->dfn), 256) ||
	    u64map_put(&c->byfn, (uint64_t)(uintptr_t)fn, (uint32_t)c->ndfn) < 0) {
		free(ins);
		*why = "out of memory";
		return -1;
	}
	struct dfunc *x = &c->dfn[c->ndfn++];

	x->fn = fn;
	x->v = ins;
	x->n = n;
	snprintf(x->why, sizeof(x->why), "%s", n >= 0 ? "" : d ? e : *why ? *why : "out of memory");
	*v = ins;
	*why = n < 0 ? x->why : NULL;
	return n;
}

static void dc_free(struct dcache *c)
{
	for (size_t i = 0; i < c->ndf; i++)
		sonde_disasm_close(c->df[i].d);
	for (size_t i = 0; i < c->ndfn; i++)
		free(c->dfn[i].v);
	free(c->df);
	free(c->dfn);
	u64map_release(&c->byfn);
	strtab_free(&c->files);
}

/* Moves every call site's values to its call instruction (the one holding
 * the return address - 1), merging rows that land on one instruction.
 * Rows of functions that cannot be disassembled stay as they are. */
static void to_instructions(struct agg *a, struct dcache *c)
{
	size_t m = 0;
	struct u64map seen = { 0 };

	for (size_t i = 0; i < a->npc; i++) {
		struct prow r = a->pc[i];
		const struct sonde_insn *v;
		const char *why;
		long n = dc_func(c, r.exp, r.fn, &v, &why);
		long k = n > 0 ? sonde_disasm_find(v, (size_t)n, r.addr) : -1;

		if (k >= 0)
			r.addr = v[k].addr;
		uint64_t key = key2(r.objpath, r.addr);
		long j;

		for (j = u64map_get(&seen, key); j >= 0; j = u64map_get(&seen, ++key))
			if (a->pc[j].objpath == r.objpath && a->pc[j].addr == r.addr)
				break;
		if (j >= 0) {
			add_v(a->pc[j].e, r.e, a->nm);
			add_v(a->pc[j].i, r.i, a->nm);
			continue;
		}
		while (u64map_get(&seen, key) >= 0)
			key++;
		if (u64map_put(&seen, key, (uint32_t)m) < 0) {
			a->oom = true;
			break;
		}
		a->pc[m++] = r;
	}
	u64map_release(&seen);
	if (!a->oom)
		a->npc = m;
}

/* ---- -pcs ------------------------------------------------------------------------- */

static const int64_t *p_excl(const void *r) { return ((const struct prow *)r)->e; }
static const int64_t *p_incl(const void *r) { return ((const struct prow *)r)->i; }
static const char *p_name(const void *r) { return ((const struct prow *)r)->fn->mangled; }

static void pc_fields(struct vt_table *t, struct vt_row *r, const void *row, void *arg)
{
	const struct prow *x = row;
	const struct sonde_view_opts *o = arg;
	const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(x->fn->kind);
	char hex[64];

	vt_set_s(r, 1, vt_str(t, sonde_view_symname(x->fn, o->names)));
	vt_set_s(r, 2, vt_str(t, x->obj->name ? x->obj->name : x->obj->path));
	if (ki && ki->place) /* a place that is not an address (a Java bytecode index) */
		snprintf(hex, sizeof(hex), "%s %" PRIu64, ki->place, x->addr);
	else
		snprintf(hex, sizeof(hex), "0x%" PRIx64, x->addr);
	vt_set_s(r, 3, vt_str(t, hex));
}

int sonde_view_pcs(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o,
		   char *err, size_t errlen)
{
	struct agg a;
	struct dcache c = { .p = p };
	char **names = NULL;
	int rc = -1;

	if (aggregate(&a, p) < 0)
		goto nomem;
	to_instructions(&a, &c);
	if (a.oom || !(names = calloc(a.npc + 1, sizeof(*names))))
		goto nomem;
	for (size_t i = 0; i < a.npc; i++) {
		const struct prow *x = &a.pc[i];
		char so[300];
		const char *sn = soname(so, sizeof(so), o, x->obj);
		const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(x->fn->kind);
		int r = ki && ki->place ? asprintf(&names[i], "%s%s + %s %" PRIu64, sonde_view_symname(x->fn, o->names), sn,
						   ki->place, x->addr)
			: x->fn->synthesized
				? asprintf(&names[i], "%s%s + 0x%" PRIx64, sonde_view_symname(x->fn, o->names), sn,
					   x->addr - x->fn->lo)
				: asprintf(&names[i], "%s%s + 0x%08" PRIx64, sonde_view_symname(x->fn, o->names), sn,
					   x->addr - x->fn->lo);

		if (r < 0) {
			names[i] = NULL;
			goto nomem;
		}
	}
	static const char *const keys[] = { "function", "object", "address" };
	struct rsort rs = { .excl = p_excl, .incl = p_incl, .name = p_name, .rows = a.pc, .size = sizeof(*a.pc) };

	rc = flat_view(f, p, o, "pcs", "PCs", keys, 3, &rs, a.npc, names, pc_fields, (void *)o, err, errlen);
	goto out;
nomem:
	rc = fail_oom(err, errlen);
out:
	for (size_t i = 0; names && i < a.npc; i++)
		free(names[i]);
	free(names);
	dc_free(&c);
	agg_free(&a);
	return rc;
}

/* ---- finding a function's code and file ------------------------------------------------ */

/* The experiment's function for model function fid, with the experiment
 * index in *exp; NULL when it has no code of its own (inlined only, or a
 * folded object) or no experiment holds it. */
static const struct sonde_func *code_of(struct sonde_profile *p, uint32_t fid, uint32_t *exp)
{
	const struct sonde_model *m = p->model;
	const struct sonde_mfunc *fi = sonde_model_funcinfo(m, fid);
	const struct sonde_mobject *mo = sonde_model_objectinfo(m, fi->object);

	if (!fi->lo)
		return NULL;
	for (size_t e = 0; e < p->nexps; e++) {
		size_t n;
		const struct sonde_object *ob = sonde_exp_objects(p->exps[e], &n);

		for (size_t i = 0; i < n; i++) {
			if (strcmp(ob[i].path, mo->path))
				continue;
			/* At the object's own load time: another object may
			 * have held its addresses before or after it. */
			const struct sonde_func *fn = sonde_syms_lookup(p->syms[e], ob[i].base + fi->lo, true,
									ob[i].load_ns);

			if (fn->object == &ob[i] || (fn->object && !strcmp(fn->object->path, mo->path))) {
				if (fn->lo != fi->lo || strcmp(fn->mangled, fi->mangled))
					continue;
				*exp = (uint32_t)e;
				return fn;
			}
		}
	}
	return NULL;
}

/* ---- source text -------------------------------------------------------------------- */

struct text {
	char *buf;
	char **line; /* line[k]: line k + 1, NUL-terminated */
	size_t n;
	char path[PATH_MAX]; /* where it was read */
};

static void text_free(struct text *t)
{
	free(t->buf);
	free(t->line);
	memset(t, 0, sizeof(*t));
}

static int text_read(struct text *t, const char *path)
{
	/* the line table can name a FIFO: reading one would block forever */
	int fd = sonde_open_regular(path);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t cap = 0, len = 0;
	char *buf = NULL;

	for (;;) {
		/* a source file of 256 MiB or more is not one to show */
		if (len + 65536 + 1 > cap &&
		    (cap >= ((size_t)128 << 20) || sonde_grow(&buf, &cap, len + 65536 + 1, 1, 131072))) {
			free(buf);
			fclose(f);
			return -1;
		}
		size_t r = fread(buf + len, 1, 65536, f);

		len += r;
		if (r < 65536)
			break;
	}
	bool bad = ferror(f);

	fclose(f);
	if (bad || memchr(buf, '\0', len)) { /* not text */
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	t->line = malloc(n * sizeof(*t->line));
	if (!t->line) {
		free(buf);
		return -1;
	}
	t->buf = buf;
	t->n = 0;
	for (char *s = buf; *s || s == buf;) {
		char *nl = strchr(s, '\n');

		t->line[t->n++] = s;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > s && nl[-1] == '\r')
			nl[-1] = '\0';
		s = nl + 1;
		if (!*s)
			break;
	}
	/* shown only; a longer path is cut (spelled out: snprintf's "%s"
	 * drew a truncation warning at -O1) */
	size_t plen = strnlen(path, sizeof(t->path) - 1);

	memcpy(t->path, path, plen);
	t->path[plen] = '\0';
	return 0;
}

/* Reads the source file recorded as `rec` for experiment exp: the archived
 * copy, -pathmap's paths, the recorded path, then the -addpath
 * directories.  Returns 0, or -1 with what was tried in err. */
static int source_text(struct text *t, struct sonde_profile *p, uint32_t exp, const struct sonde_view_opts *o,
		       const char *rec, char *err, size_t errlen)
{
	char cand[2 * PATH_MAX + 32], tried[1024] = "";
	size_t tl = 0;
	const char *dir = sonde_exp_info(p->exps[exp])->dir;
	char founder[PATH_MAX];

	/* Archived sources are in the founder's archives/src/ (a
	 * sub-experiment is a directory inside it, reader/exptree.h). */
	snprintf(founder, sizeof(founder), "%s", dir);
	char *slash = strrchr(founder, '/');

	if (sonde_subexp_kind_of(slash ? slash + 1 : founder)) {
		if (slash)
			*slash = '\0';
		else
			snprintf(founder, sizeof(founder), ".");
	}
	for (int k = 0; k < 3 + (int)o->npathmap + (int)o->naddpath; k++) {
		cand[0] = '\0';
		if (k == 0) {
			snprintf(cand, sizeof(cand), "%s/archives/src%s", founder, rec);
		} else if (k == 1) {
			char real[PATH_MAX];

			if (realpath(rec, real))
				snprintf(cand, sizeof(cand), "%s/archives/src%s", founder, real);
		} else if (k < 2 + (int)o->npathmap) {
			const char *old = o->pathmap[2 * (k - 2)], *new = o->pathmap[2 * (k - 2) + 1];
			size_t ol = strlen(old);

			if (!strncmp(rec, old, ol) && (rec[ol] == '/' || !rec[ol] || (ol && old[ol - 1] == '/')))
				snprintf(cand, sizeof(cand), "%s%s", new, rec + ol);
		} else if (k == 2 + (int)o->npathmap) {
			snprintf(cand, sizeof(cand), "%s", rec);
		} else {
			snprintf(cand, sizeof(cand), "%s/%s", o->addpath[k - 3 - (int)o->npathmap], base_name(rec));
		}
		if (!cand[0])
			continue;
		if (text_read(t, cand) == 0)
			return 0;
		if (k > 1 && tl < sizeof(tried) - 1)
			tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl, "%s'%s'", tl ? ", " : "", cand);
	}
	snprintf(err, errlen,
		 "cannot find source file '%s' (tried %s%s); give its place with -pathmap OLD NEW or -addpath DIR, "
		 "or archive sources at collection (sonde archive -a src)",
		 rec, tried, o->npathmap || o->naddpath ? "" : " and no -pathmap or -addpath");
	return -1;
}

/* ---- hot marking ---------------------------------------------------------------------- */

/* Marks rows [from, n) of t hot where a shown value reaches thresh% of the
 * column's largest (and is not zero); derived metrics' columns mark none. */
static void mark_hot(struct vt_table *t, size_t from, double thresh)
{
	for (int s = 0; s < t->nsubs; s++) {
		/* a ratio (CPI) says nothing of where the time goes */
		if (t->s[s].kind != VT_VAL || !t->s[s].text || t->s[s].unit == SONDE_UNIT_RATIO)
			continue;
		int64_t max = 0;

		for (size_t r = from; r < t->nrows; r++)
			if (!t->rows[r].c[s].null && t->rows[r].c[s].i > max)
				max = t->rows[r].c[s].i;
		if (max <= 0)
			continue;
		for (size_t r = from; r < t->nrows; r++)
			if (!t->rows[r].c[s].null && t->rows[r].c[s].i > 0 &&
			    (double)t->rows[r].c[s].i >= thresh / 100.0 * (double)max)
				t->rows[r].hot = true;
	}
}

/* Writes an annotated table (source, disassembly): a heading, then rows. */
static void annotated_out(FILE *f, struct vt_table *t, const struct sonde_view_opts *o, const char *view,
			  const char *const *head, int nhead)
{
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	for (int k = 0; k + 1 < nhead; k += 2)
		if (head[k + 1])
			em_text(&em, "%s: %s\n", head[k], head[k + 1]);
	em_text(&em, "\n");
	vw_begin(&em, view, o);
	for (int k = 0; k + 1 < nhead; k += 2) {
		char key[64];
		size_t j = 0;

		for (const char *c = head[k]; *c && j < sizeof(key) - 1; c++)
			key[j++] = *c == ' ' ? '_' : (char)(*c | 0x20);
		key[j] = '\0';
		em_s(&em, key, head[k + 1]);
	}
	vw_table_body(&em, t);
}

/* ---- -source ------------------------------------------------------------------------- */

static int cmp_sites(const void *x, const void *y)
{
	const struct site *a = x, *b = y;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The file a -source argument names among the files with data: the whole
 * path, a trailing part of one ("src/x.c"), or a base name.  NULL when
 * none or several (*amb set). */
static const char *file_named(struct agg *a, const char *what, bool *amb)
{
	const char *hit = NULL;
	size_t wl = strlen(what);

	*amb = false;
	for (int pass = 0; pass < 2 && !hit; pass++)
		for (size_t i = 0; i < a->nl; i++) {
			const char *fl = a->l[i].file;
			size_t l = strlen(fl);
			bool ok = pass == 0 ? !strcmp(fl, what)
					    : l > wl && fl[l - wl - 1] == '/' && !strcmp(fl + l - wl, what);

			if (!ok || fl == hit)
				continue;
			if (hit)
				*amb = true;
			hit = fl;
		}
	return *amb ? NULL : hit;
}

int sonde_view_source(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o, uint32_t func,
		      const char *file, char *err, size_t errlen)
{
	struct agg a;
	struct text tx = { 0 };
	struct vt_table t;
	struct cols c;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(p->model);
	const char *target = NULL, *objname = NULL, *objpath = NULL;
	uint32_t exp = 0;
	const struct sonde_object *obj = NULL;
	int rc = -1;

	vt_init(&t);
	int resolved = vw_resolve(&c, p->model, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	if (aggregate(&a, p) < 0) {
		agg_free(&a);
		return fail_oom(err, errlen);
	}
	if (func != UINT32_MAX) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(p->model, func);
		const struct sonde_func *fn = code_of(p, func, &exp);

		if (fn) {
			const struct sonde_srcframe *lv;
			int n = sonde_syms_srcpos_at(p->syms[exp], fn->object, fn->lo, &lv);

			obj = fn->object;
			if (n > 0)
				target = lv[n - 1].decl_file ? lv[n - 1].decl_file : lv[0].file;
			else if (!sonde_syms_has_lines(p->syms[exp], obj)) {
				snprintf(err, errlen,
					 "'%s' has no line information (built without -g, or stripped and no "
					 "debug file found); -disasm shows its instructions",
					 sonde_syms_object_file(p->syms[exp], obj)
						 ? sonde_syms_object_file(p->syms[exp], obj)
						 : obj->path);
				goto out;
			}
		} else {
			/* inlined only: where a line of it says it is defined */
			for (size_t i = 0; i < a.nl && !target; i++)
				if (a.l[i].func && !strcmp(a.l[i].func, fi->mangled)) {
					target = a.l[i].decl_file ? a.l[i].decl_file : a.l[i].file;
					exp = a.l[i].exp;
					obj = a.l[i].obj;
				}
		}
		if (!target) {
			const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(fi->kind);

			if (fi->kind != SONDE_FRAME_NATIVE)
				snprintf(err, errlen, "no source line of '%s' is recorded (it is %s)",
					 sonde_view_funcname(fi, o->names), ki ? ki->noun : "a frame of an unknown kind");
			else
				snprintf(err, errlen, "no source line of '%s' is recorded (no line information)",
					 sonde_view_funcname(fi, o->names));
			goto out;
		}
		target = strtab_intern(&a.strs, target);
	} else {
		bool amb;

		target = file_named(&a, file, &amb);
		if (!target) {
			snprintf(err, errlen,
				 amb ? "source file name '%s' is ambiguous; give more of its path"
				     : "no function or source file '%s' with data (see -functions, -lines)",
				 file);
			rc = amb ? -SONDE_ERR_FAILED : -SONDE_ERR_NO_MATCH;
			goto out;
		}
	}
	for (size_t i = 0; i < a.nl && !obj; i++)
		if (a.l[i].file == target) {
			exp = a.l[i].exp;
			obj = a.l[i].obj;
		}
	if (source_text(&tx, p, exp, o, target, err, errlen) < 0)
		goto out;
	if (obj) {
		objname = obj->name ? obj->name : obj->path;
		objpath = sonde_syms_object_file(p->syms[exp], obj);
	}

	/* The file's lines with data, by number; the last line with data
	 * may be past the end of a file changed since. */
	uint32_t maxline = (uint32_t)tx.n;

	for (size_t i = 0; i < a.nlt; i++)
		if (a.lt[i].file == target && a.lt[i].line > maxline)
			maxline = a.lt[i].line;
	struct lrow **byline = calloc((size_t)maxline + 2, sizeof(*byline));
	const struct sonde_srcfunc *fns = NULL;
	size_t nfns = obj ? sonde_syms_file_funcs(p->syms[exp], obj, target, &fns) : 0, fk = 0;
	struct site *sites = malloc((a.nsites + 1) * sizeof(*sites));
	size_t nsites = 0, sk = 0;

	if (!byline || !sites) {
		free(byline);
		free(sites);
		fail_oom(err, errlen);
		goto out;
	}
	for (size_t i = 0; i < a.nlt; i++)
		if (a.lt[i].file == target)
			byline[a.lt[i].line] = &a.lt[i];
	for (size_t i = 0; i < a.nsites; i++)
		if (a.sites[i].file == target)
			sites[nsites++] = a.sites[i];
	if (nsites > 1)
		qsort(sites, nsites, sizeof(*sites), cmp_sites);

	t.hotcol = true;
	t.namecol = "Source";
	vt_field_key(&t, "kind");
	vt_field_key(&t, "line");
	vt_field_key(&t, "text");
	vt_field_key(&t, "hot");
	if (vw_item_columns(&t, p->model, &c, o, first, '-') < 0)
		goto nomem;
	static const int64_t zero[SONDE_MAX_METRICS];
	char buf[8192];

	for (uint32_t ln = 1; ln <= maxline; ln++) {
		for (; fk < nfns && fns[fk].decl_line <= ln; fk++) {
			if (fns[fk].decl_line < ln)
				continue;
			snprintf(buf, sizeof(buf), "<Function: %s>",
				 fname(p, exp, obj, fns[fk].name, o->names));
			struct vt_row *r = vt_row(&t, ' ', buf);

			if (!r)
				goto nomem;
			vt_set_s(r, 0, "function");
			vt_set_n(r, 1, ln);
			vt_set_s(r, 2, vt_str(&t, fname(p, exp, obj, fns[fk].name, o->names)));
		}
		const char *text = ln <= tx.n ? tx.line[ln - 1] : "<line not in the file: changed since?>";

		snprintf(buf, sizeof(buf), "%5u. %s", ln, text);
		struct vt_row *r = vt_row(&t, ' ', buf);

		if (!r)
			goto nomem;
		vt_set_s(r, 0, "line");
		vt_set_n(r, 1, ln);
		vt_set_s(r, 2, vt_str(&t, text));
		vw_fill_items(r, &t, &c, first, byline[ln] ? byline[ln]->e : zero, byline[ln] ? byline[ln]->i : zero,
			      total);
		for (; sk < nsites && sites[sk].line <= ln; sk++) {
			if (sites[sk].line < ln)
				continue;
			const char *nm = fname(p, sites[sk].exp, sites[sk].obj, sites[sk].name, o->names);

			snprintf(buf, sizeof(buf), "       <inlined: %s>", nm);
			r = vt_row(&t, ' ', buf);
			if (!r)
				goto nomem;
			vt_set_s(r, 0, "inlined");
			vt_set_n(r, 1, ln);
			vt_set_s(r, 2, vt_str(&t, nm));
		}
	}
	mark_hot(&t, 0, o->sthresh);
	for (size_t r = 0; r < t.nrows; r++)
		vt_set_n(&t.rows[r], 3, t.rows[r].hot);
	const char *head[] = { "Source file", target, "Read from", strcmp(tx.path, target) ? tx.path : NULL,
			       "Object file", objpath, "Load Object", objname };

	annotated_out(f, &t, o, "source", head, 8);
	rc = vw_finish(f, err, errlen);
	free(byline);
	free(sites);
	goto out;
nomem:
	free(byline);
	free(sites);
	fail_oom(err, errlen);
out:
	vt_release(&t);
	text_free(&tx);
	agg_free(&a);
	return rc;
}

/* ---- -disasm ------------------------------------------------------------------------- */

/* Source texts read for one disassembly (an inlined line may be in another
 * file); a file that cannot be read is remembered as such. */
struct texts {
	struct { const char *file; struct text t; bool ok; } v[16];
	int n;
};

static const char *text_line(struct texts *ts, struct sonde_profile *p, uint32_t exp,
			     const struct sonde_view_opts *o, const char *file, uint32_t line)
{
	int k;
	char e[64];

	for (k = 0; k < ts->n && strcmp(ts->v[k].file, file); k++)
		;
	if (k == ts->n) {
		if (k == (int)(sizeof(ts->v) / sizeof(ts->v[0])))
			return NULL;
		ts->v[k].file = file;
		ts->v[k].ok = source_text(&ts->v[k].t, p, exp, o, file, e, sizeof(e)) == 0;
		ts->n++;
	}
	return ts->v[k].ok && line >= 1 && line <= ts->v[k].t.n ? ts->v[k].t.line[line - 1] : NULL;
}

/* "0x1139 <hot_loop+0x19>": a branch or call target named. */
static void target_text(char *buf, size_t len, struct sonde_profile *p, uint32_t exp,
			const struct sonde_func *fn, uint64_t target, const struct sonde_view_opts *o)
{
	const struct sonde_func *tf = fn;

	if (target < fn->lo || target >= fn->hi)
		tf = sonde_syms_lookup(p->syms[exp], fn->object->base + target, true, fn->object->load_ns);
	uint64_t off = tf->object == fn->object ? target - tf->lo : 0;

	if (tf->object != fn->object || (tf->synthesized && tf != fn))
		snprintf(buf, len, "0x%" PRIx64, target);
	else if (off)
		snprintf(buf, len, "0x%" PRIx64 " <%s+0x%" PRIx64 ">", target, sonde_view_symname(tf, o->names), off);
	else
		snprintf(buf, len, "0x%" PRIx64 " <%s>", target, sonde_view_symname(tf, o->names));
}

int sonde_view_disasm(FILE *f, struct sonde_profile *p, const struct sonde_view_opts *o, uint32_t func,
		      char *err, size_t errlen)
{
	struct agg a;
	struct dcache dc = { .p = p };
	struct texts ts = { .n = 0 };
	struct u64map ofobj = { 0 };
	struct vt_table t;
	struct cols c;
	int first[SONDE_MSPEC_MAX];
	const int64_t *total = sonde_model_total(p->model);
	const struct sonde_mfunc *fi = sonde_model_funcinfo(p->model, func);
	uint32_t exp = 0;
	const struct sonde_func *fn = code_of(p, func, &exp);
	int rc = -1;

	vt_init(&t);
	memset(&a, 0, sizeof(a));
	if (!fn && fi->kind != SONDE_FRAME_NATIVE) {
		const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(fi->kind);

		snprintf(err, errlen, "'%s' is %s, not code of a load object: there is no ELF file to disassemble",
			 sonde_view_funcname(fi, o->names), ki ? ki->noun : "a frame of an unknown kind");
		return -1;
	}
	if (!fn) {
		snprintf(err, errlen, fi->lo || fi->synthesized
					      ? "'%s' has no code to disassemble"
					      : "'%s' has no code of its own: it is inlined (see -disasm of its callers)",
			 sonde_view_funcname(fi, o->names));
		return -1;
	}
	int resolved = vw_resolve(&c, p->model, o, "ei", err, errlen);

	if (resolved < 0)
		return resolved;
	if (aggregate(&a, p) < 0)
		goto nomem;
	to_instructions(&a, &dc);
	if (a.oom)
		goto nomem;
	const struct sonde_insn *v;
	const char *why;
	long n = dc_func(&dc, exp, fn, &v, &why);

	if (n < 0) {
		snprintf(err, errlen, "cannot disassemble '%s': %s", sonde_view_funcname(fi, o->names),
			 why ? why : "out of memory");
		goto out;
	}
	const char *objpath = strtab_intern(&a.strs, fn->object->path);
	bool lines = sonde_syms_has_lines(p->syms[exp], fn->object);

	/* this object's instructions with data, by address (one row each
	 * after to_instructions) */
	for (size_t j = 0; j < a.npc; j++)
		if (a.pc[j].objpath == objpath && u64map_put(&ofobj, a.pc[j].addr, (uint32_t)j) < 0)
			goto nomem;

	t.hotcol = true;
	t.namecol = "Instruction";
	static const char *const keys[] = { "kind", "address", "file", "line", "text", "call", "target", "hot" };

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		vt_field_key(&t, keys[k]);
	if (vw_item_columns(&t, p->model, &c, o, first, '-') < 0)
		goto nomem;
	static const int64_t zero[SONDE_MAX_METRICS];
	const char *lastfile = NULL;
	uint32_t lastline = 0;
	size_t from = 0;
	char buf[512], tgt[320];

	for (long k = 0; k < n; k++) {
		const struct sonde_insn *in = &v[k];
		const struct sonde_srcframe *lv;
		int nl = lines ? sonde_syms_srcpos_at(p->syms[exp], fn->object, in->addr, &lv) : 0;
		const char *file = nl > 0 ? lv[0].file : NULL;
		uint32_t line = nl > 0 ? lv[0].line : 0;
		struct vt_row *r;

		if (file && line && (file != lastfile || line != lastline)) {
			const char *src = text_line(&ts, p, exp, o, file, line);

			if (file != lastfile && lastfile)
				snprintf(buf, sizeof(buf), "%5u. %s   [%s]", line, src ? src : "", base_name(file));
			else
				snprintf(buf, sizeof(buf), "%5u. %s", line, src ? src : "");
			r = vt_row(&t, ' ', buf);
			if (!r)
				goto nomem;
			vt_set_s(r, 0, "source");
			vt_set_s(r, 2, vt_str(&t, file));
			vt_set_n(r, 3, line);
			vt_set_s(r, 4, src ? vt_str(&t, src) : NULL);
			lastfile = file;
			lastline = line;
		}
		const char *ops = in->operands;

		tgt[0] = '\0';
		if (in->has_target) {
			target_text(tgt, sizeof(tgt), p, exp, fn, in->target, o);
			ops = tgt;
		}
		if (line)
			snprintf(buf, sizeof(buf), "[%5u] %8" PRIx64 ":  %-7s %s", line, in->addr, in->mnemonic, ops);
		else
			snprintf(buf, sizeof(buf), "[    ?] %8" PRIx64 ":  %-7s %s", in->addr, in->mnemonic, ops);
		r = vt_row(&t, ' ', buf);
		if (!r)
			goto nomem;
		if (!from)
			from = t.nrows - 1;
		char hex[32];
		const int64_t *e = zero, *i = zero;

		long j = u64map_get(&ofobj, in->addr);

		if (j >= 0) {
			e = a.pc[j].e;
			i = a.pc[j].i;
		}
		snprintf(hex, sizeof(hex), "0x%" PRIx64, in->addr);
		vt_set_s(r, 0, "insn");
		vt_set_s(r, 1, vt_str(&t, hex));
		vt_set_s(r, 2, file ? vt_str(&t, file) : NULL);
		if (line)
			vt_set_n(r, 3, line);
		snprintf(buf, sizeof(buf), "%s %s", in->mnemonic, in->operands);
		vt_set_s(r, 4, vt_str(&t, buf));
		vt_set_n(r, 5, in->is_call);
		vt_set_s(r, 6, tgt[0] ? vt_str(&t, tgt) : NULL);
		vw_fill_items(r, &t, &c, first, e, i, total);
	}
	mark_hot(&t, 0, o->dthresh);
	for (size_t r = 0; r < t.nrows; r++)
		vt_set_n(&t.rows[r], 7, t.rows[r].hot);
	const char *file = sonde_syms_object_file(p->syms[exp], fn->object);
	char range[64];

	uint64_t clo, chi;

	code_range(p, exp, fn, &clo, &chi);
	snprintf(range, sizeof(range), "0x%" PRIx64 "-0x%" PRIx64 "%s", clo, chi,
		 chi - clo > fn->hi - fn->lo ? " (by its call-frame information)" : "");
	const char *head[] = { "Function", sonde_view_funcname(fi, o->names), "Address", range,
			       "Object file", file, "Load Object", fn->object->name ? fn->object->name : fn->object->path,
			       "Note", lines ? NULL : "no line information (built without -g, or stripped and no debug file "
						     "found): instructions only" };

	annotated_out(f, &t, o, "disasm", head, 10);
	rc = vw_finish(f, err, errlen);
	goto out;
nomem:
	fail_oom(err, errlen);
	rc = -1;
out:
	u64map_release(&ofobj);
	for (int k = 0; k < ts.n; k++)
		text_free(&ts.v[k].t);
	vt_release(&t);
	dc_free(&dc);
	agg_free(&a);
	return rc;
}
