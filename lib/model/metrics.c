/*
 * The metrics engine (see metrics.h for the semantics).
 *
 * Events are merged by stack first: sonde_model_stack() interns a sequence
 * of function ids in a hash table, and values accumulate per distinct
 * stack.  sonde_model_finish() then walks the distinct stacks once to
 * compute exclusive, inclusive and attributed metrics, the load-object
 * metrics and the call tree, so its cost depends on the number of distinct
 * stacks times their depth, never on the number of events.
 */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/metrics.h"

/* ---- a small open-addressing index: hash -> uint32 id, compared by a
 * callback, so one structure serves functions, stacks, edges and tree
 * nodes. ---- */

struct index {
	uint32_t *slot; /* id + 1, 0 = empty */
	uint64_t *hash;
	size_t cap, n;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return mix64(h);
}

typedef bool (*eq_fn)(const void *ctx, uint32_t id, const void *key);

/* Find key; returns id or UINT32_MAX, and where it would go in *pos. */
static uint32_t index_find(const struct index *ix, uint64_t h, eq_fn eq, const void *ctx, const void *key,
			   size_t *pos)
{
	if (!ix->cap) {
		*pos = 0;
		return UINT32_MAX;
	}
	size_t i = h & (ix->cap - 1);
	while (ix->slot[i]) {
		if (ix->hash[i] == h && eq(ctx, ix->slot[i] - 1, key))
			return ix->slot[i] - 1;
		i = (i + 1) & (ix->cap - 1);
	}
	*pos = i;
	return UINT32_MAX;
}

static int index_grow(struct index *ix)
{
	size_t ncap = ix->cap ? ix->cap * 2 : 256;
	uint32_t *ns = calloc(ncap, sizeof *ns);
	uint64_t *nh = malloc(ncap * sizeof *nh);
	if (!ns || !nh) {
		free(ns);
		free(nh);
		return -1;
	}
	for (size_t i = 0; i < ix->cap; i++) {
		if (!ix->slot[i])
			continue;
		size_t j = ix->hash[i] & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = ix->slot[i];
		nh[j] = ix->hash[i];
	}
	free(ix->slot);
	free(ix->hash);
	ix->slot = ns;
	ix->hash = nh;
	ix->cap = ncap;
	return 0;
}

/* Insert id under h (absent).  Returns 0 or -1. */
static int index_put(struct index *ix, uint64_t h, uint32_t id)
{
	if ((ix->n + 1) * 4 > ix->cap * 3 && index_grow(ix) < 0)
		return -1;
	size_t i = h & (ix->cap - 1);
	while (ix->slot[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = id + 1;
	ix->hash[i] = h;
	ix->n++;
	return 0;
}

static void index_free(struct index *ix)
{
	free(ix->slot);
	free(ix->hash);
	memset(ix, 0, sizeof *ix);
}

/* ---- the model ---- */

struct edge_rec {
	uint32_t f, other;
	int64_t v[SONDE_MAX_METRICS];
};

struct edges {
	struct edge_rec *e;
	size_t n, cap;
	struct index ix;
	/* After finish: per function, a contiguous run in `sorted`. */
	struct sonde_edge *sorted;
	uint32_t *start; /* nfuncs + 1 offsets */
};

struct sonde_model {
	struct sonde_metric_def defs[SONDE_MAX_METRICS];
	int nm;
	/* Derived metrics: indices nm .. nm + nder - 1. */
	struct derived {
		struct sonde_metric_def def;
		int num, den;
		double scale;
	} der[SONDE_MAX_DERIVED];
	int nder;

	struct sonde_mobject *objs;
	size_t nobjs, capobjs;
	struct index objix;

	struct sonde_mfunc *funcs;
	size_t nfuncs, capfuncs;
	struct index funcix;

	/* Stacks: frames in one pool, each stack an (offset, depth). */
	uint32_t *pool;
	size_t npool, cappool;
	struct {
		uint32_t off, depth;
	} *stacks;
	size_t nstacks, capstacks;
	int64_t *svals; /* nstacks * nm */
	size_t capsvals;
	struct index stackix;

	bool finished;
	int64_t total[SONDE_MAX_METRICS];
	int64_t *excl, *incl;	      /* nfuncs * nm */
	int64_t *oexcl, *oincl;	      /* nobjs * nm */
	struct edges callers, callees;
	struct sonde_tnode *tree;
	size_t ntree, captree;
	struct index treeix;
	uint32_t first_root;
};

struct sonde_model *sonde_model_new(const struct sonde_metric_def *defs, int nmetrics)
{
	if (nmetrics <= 0 || nmetrics > SONDE_MAX_METRICS)
		return NULL;
	struct sonde_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	memcpy(m->defs, defs, (size_t)nmetrics * sizeof *defs);
	m->nm = nmetrics;
	m->first_root = UINT32_MAX;
	return m;
}

static void edges_free(struct edges *e)
{
	free(e->e);
	index_free(&e->ix);
	free(e->sorted);
	free(e->start);
}

void sonde_model_free(struct sonde_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nobjs; i++)
		free((char *)m->objs[i].path);
	free(m->objs);
	index_free(&m->objix);
	for (size_t i = 0; i < m->nfuncs; i++) {
		free((char *)m->funcs[i].mangled);
		free((char *)m->funcs[i].name_long);
		free((char *)m->funcs[i].name_short);
		free((char *)m->funcs[i].name_full);
	}
	free(m->funcs);
	index_free(&m->funcix);
	free(m->pool);
	free(m->stacks);
	free(m->svals);
	index_free(&m->stackix);
	free(m->excl);
	free(m->incl);
	free(m->oexcl);
	free(m->oincl);
	edges_free(&m->callers);
	edges_free(&m->callees);
	free(m->tree);
	index_free(&m->treeix);
	free(m);
}

static bool obj_eq(const void *ctx, uint32_t id, const void *key)
{
	return !strcmp(((const struct sonde_model *)ctx)->objs[id].path, key);
}

uint32_t sonde_model_object(struct sonde_model *m, const char *path)
{
	uint64_t h = hash_bytes(path, strlen(path), 0xcbf29ce484222325ull);
	size_t pos;
	uint32_t id = index_find(&m->objix, h, obj_eq, m, path, &pos);
	if (id != UINT32_MAX)
		return id;
	if (sonde_grow(&m->objs, &m->capobjs, m->nobjs + 1, sizeof *m->objs, 64))
		return UINT32_MAX;
	char *p = strdup(path);
	if (!p || index_put(&m->objix, h, (uint32_t)m->nobjs) < 0) {
		free(p);
		return UINT32_MAX;
	}
	const char *slash = strrchr(p, '/');
	m->objs[m->nobjs] = (struct sonde_mobject){ (uint32_t)m->nobjs, p, slash ? slash + 1 : p };
	return (uint32_t)m->nobjs++;
}

struct fkey {
	uint32_t object;
	uint64_t lo;
	const char *mangled;
};

static bool func_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct sonde_mfunc *f = &((const struct sonde_model *)ctx)->funcs[id];
	const struct fkey *k = key;
	return f->object == k->object && f->lo == k->lo && !strcmp(f->mangled, k->mangled);
}

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

uint32_t sonde_model_func(struct sonde_model *m, uint32_t object, uint64_t lo, const char *mangled,
			  const char *name_long, const char *name_short, bool synthesized)
{
	struct fkey k = { object, lo, mangled ? mangled : "?" };
	uint64_t h = hash_bytes(k.mangled, strlen(k.mangled), mix64(((uint64_t)object << 40) ^ lo));
	size_t pos;
	uint32_t id = index_find(&m->funcix, h, func_eq, m, &k, &pos);
	if (id != UINT32_MAX)
		return id;
	if (sonde_grow(&m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof *m->funcs, 64))
		return UINT32_MAX;
	struct sonde_mfunc *f = &m->funcs[m->nfuncs];
	f->id = (uint32_t)m->nfuncs;
	f->object = object;
	f->lo = lo;
	f->mangled = dup_or(mangled, "?");
	f->name_long = dup_or(name_long, f->mangled);
	f->name_short = dup_or(name_short, f->name_long);
	f->name_full = NULL;
	f->synthesized = synthesized;
	f->kind = 0;
	if (!f->mangled || !f->name_long || !f->name_short || index_put(&m->funcix, h, f->id) < 0) {
		free((char *)f->mangled);
		free((char *)f->name_long);
		free((char *)f->name_short);
		return UINT32_MAX;
	}
	return (uint32_t)m->nfuncs++;
}

void sonde_model_func_set_kind(struct sonde_model *m, uint32_t f, uint8_t kind)
{
	m->funcs[f].kind = kind;
}

int sonde_model_func_set_full(struct sonde_model *m, uint32_t f, const char *full)
{
	if (!full || m->funcs[f].name_full)
		return 0;
	m->funcs[f].name_full = strdup(full);
	return m->funcs[f].name_full ? 0 : -1;
}

struct skey {
	const uint32_t *funcs;
	int depth;
};

static bool stack_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct sonde_model *m = ctx;
	const struct skey *k = key;
	return m->stacks[id].depth == (uint32_t)k->depth &&
	       !memcmp(m->pool + m->stacks[id].off, k->funcs, (size_t)k->depth * sizeof *k->funcs);
}

uint32_t sonde_model_stack(struct sonde_model *m, const uint32_t *funcs, int depth)
{
	if (depth <= 0 || m->finished)
		return UINT32_MAX;
	struct skey k = { funcs, depth };
	uint64_t h = hash_bytes(funcs, (size_t)depth * sizeof *funcs, 0x9e3779b97f4a7c15ull);
	size_t pos;
	uint32_t id = index_find(&m->stackix, h, stack_eq, m, &k, &pos);
	if (id != UINT32_MAX)
		return id;
	if (sonde_grow(&m->stacks, &m->capstacks, m->nstacks + 1, sizeof *m->stacks, 64) ||
	    sonde_grow(&m->pool, &m->cappool, m->npool + (size_t)depth, sizeof *m->pool, 64) ||
	    sonde_grow(&m->svals, &m->capsvals, (m->nstacks + 1) * (size_t)m->nm, sizeof *m->svals, 64) ||
	    index_put(&m->stackix, h, (uint32_t)m->nstacks) < 0)
		return UINT32_MAX;
	memcpy(m->pool + m->npool, funcs, (size_t)depth * sizeof *funcs);
	m->stacks[m->nstacks].off = (uint32_t)m->npool;
	m->stacks[m->nstacks].depth = (uint32_t)depth;
	m->npool += (size_t)depth;
	memset(m->svals + m->nstacks * (size_t)m->nm, 0, (size_t)m->nm * sizeof *m->svals);
	return (uint32_t)m->nstacks++;
}

void sonde_model_add_to(struct sonde_model *m, uint32_t stack, const int64_t *values)
{
	sonde_model_add_some(m, stack, values, m->nm);
}

void sonde_model_add_some(struct sonde_model *m, uint32_t stack, const int64_t *values, int n)
{
	int64_t *v = m->svals + (size_t)stack * (size_t)m->nm;
	if (n > m->nm)
		n = m->nm;
	for (int i = 0; i < n; i++) /* wrap, never overflow UB */
		v[i] = (int64_t)((uint64_t)v[i] + (uint64_t)values[i]);
}

int sonde_model_add(struct sonde_model *m, const uint32_t *funcs, int depth, const int64_t *values)
{
	uint32_t s = sonde_model_stack(m, funcs, depth);
	if (s == UINT32_MAX)
		return -1;
	sonde_model_add_to(m, s, values);
	return 0;
}

/* ---- finish ---- */

static void vadd(int64_t *dst, const int64_t *src, int n)
{
	for (int i = 0; i < n; i++)
		dst[i] = (int64_t)((uint64_t)dst[i] + (uint64_t)src[i]);
}

static bool edge_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct edge_rec *e = &((const struct edges *)ctx)->e[id];
	const uint32_t *k = key;
	return e->f == k[0] && e->other == k[1];
}

static int edge_add(struct edges *E, uint32_t f, uint32_t other, const int64_t *v, int nm)
{
	uint32_t k[2] = { f, other };
	uint64_t h = mix64(((uint64_t)f << 32) | other);
	size_t pos;
	uint32_t id = index_find(&E->ix, h, edge_eq, E, k, &pos);
	if (id == UINT32_MAX) {
		if (sonde_grow(&E->e, &E->cap, E->n + 1, sizeof *E->e, 64) || index_put(&E->ix, h, (uint32_t)E->n) < 0)
			return -1;
		id = (uint32_t)E->n++;
		memset(&E->e[id], 0, sizeof E->e[id]);
		E->e[id].f = f;
		E->e[id].other = other;
	}
	vadd(E->e[id].v, v, nm);
	return 0;
}

/* Group edge records by function into E->sorted with offsets E->start. */
static int edges_group(struct edges *E, size_t nfuncs)
{
	E->start = calloc(nfuncs + 1, sizeof *E->start);
	E->sorted = malloc((E->n ? E->n : 1) * sizeof *E->sorted);
	if (!E->start || !E->sorted)
		return -1;
	for (size_t i = 0; i < E->n; i++)
		E->start[E->e[i].f + 1]++;
	for (size_t f = 0; f < nfuncs; f++)
		E->start[f + 1] += E->start[f];
	uint32_t *fill = calloc(nfuncs + 1, sizeof *fill);
	if (!fill)
		return -1;
	for (size_t i = 0; i < E->n; i++) {
		uint32_t f = E->e[i].f;
		struct sonde_edge *d = &E->sorted[E->start[f] + fill[f]++];
		d->func = E->e[i].other;
		memcpy(d->v, E->e[i].v, sizeof d->v);
	}
	free(fill);
	return 0;
}

static bool tnode_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct sonde_tnode *n = &((const struct sonde_model *)ctx)->tree[id];
	const int64_t *k = key; /* parent, func */
	return n->parent == k[0] && n->func == (uint32_t)k[1];
}

/* The child of parent (-1: a root) for func, created when absent. */
static uint32_t tree_child(struct sonde_model *m, int32_t parent, uint32_t func)
{
	int64_t k[2] = { parent, func };
	uint64_t h = mix64(((uint64_t)(uint32_t)parent << 32) | func);
	size_t pos;
	uint32_t id = index_find(&m->treeix, h, tnode_eq, m, k, &pos);
	if (id != UINT32_MAX)
		return id;
	if (sonde_grow(&m->tree, &m->captree, m->ntree + 1, sizeof *m->tree, 64) ||
	    index_put(&m->treeix, h, (uint32_t)m->ntree) < 0)
		return UINT32_MAX;
	id = (uint32_t)m->ntree++;
	struct sonde_tnode *n = &m->tree[id];
	memset(n, 0, sizeof *n);
	n->func = func;
	n->parent = parent;
	n->first_child = UINT32_MAX;
	/* Link as the first child (or root); views sort children anyway. */
	if (parent < 0) {
		n->next_sibling = m->first_root;
		m->first_root = id;
	} else {
		n->next_sibling = m->tree[parent].first_child;
		m->tree[parent].first_child = id;
	}
	return id;
}

int sonde_model_finish(struct sonde_model *m)
{
	if (m->finished)
		return 0;
	int nm = m->nm;
	size_t nf = m->nfuncs, no = m->nobjs;
	m->excl = calloc(nf ? nf * (size_t)nm : 1, sizeof *m->excl);
	m->incl = calloc(nf ? nf * (size_t)nm : 1, sizeof *m->incl);
	m->oexcl = calloc(no ? no * (size_t)nm : 1, sizeof *m->oexcl);
	m->oincl = calloc(no ? no * (size_t)nm : 1, sizeof *m->oincl);
	/* Per-stack marks: the stamp of the last stack that counted a
	 * function / object, so each is counted once per stack. */
	uint32_t *fmark = calloc(nf ? nf : 1, sizeof *fmark);
	uint32_t *omark = calloc(no ? no : 1, sizeof *omark);
	if (!m->excl || !m->incl || !m->oexcl || !m->oincl || !fmark || !omark)
		goto oom;

	for (size_t s = 0; s < m->nstacks; s++) {
		const uint32_t *fr = m->pool + m->stacks[s].off;
		int depth = (int)m->stacks[s].depth;
		const int64_t *v = m->svals + s * (size_t)nm;
		uint32_t stamp = (uint32_t)s + 1;
		vadd(m->total, v, nm);
		vadd(m->excl + (size_t)fr[0] * (size_t)nm, v, nm);
		vadd(m->oexcl + (size_t)m->funcs[fr[0]].object * (size_t)nm, v, nm);
		/* Leaf upward: the first time a function is met is its lowest
		 * invocation, the only one whose inclusive metric counts. */
		for (int i = 0; i < depth; i++) {
			uint32_t f = fr[i];
			uint32_t o = m->funcs[f].object;
			if (omark[o] != stamp) {
				omark[o] = stamp;
				vadd(m->oincl + (size_t)o * (size_t)nm, v, nm);
			}
			if (fmark[f] == stamp)
				continue;
			fmark[f] = stamp;
			vadd(m->incl + (size_t)f * (size_t)nm, v, nm);
			if (i + 1 < depth && edge_add(&m->callers, f, fr[i + 1], v, nm) < 0)
				goto oom;
			if (i > 0 && edge_add(&m->callees, f, fr[i - 1], v, nm) < 0)
				goto oom;
		}
		/* Call tree: root first. */
		int32_t parent = -1;
		for (int i = depth - 1; i >= 0; i--) {
			uint32_t n = tree_child(m, parent, fr[i]);
			if (n == UINT32_MAX)
				goto oom;
			vadd(m->tree[n].incl, v, nm);
			if (i == 0)
				vadd(m->tree[n].excl, v, nm);
			parent = (int32_t)n;
		}
	}
	free(fmark);
	free(omark);
	fmark = omark = NULL;
	if (edges_group(&m->callers, nf) < 0 || edges_group(&m->callees, nf) < 0)
		goto oom;
	m->finished = true;
	return 0;
oom:
	free(fmark);
	free(omark);
	return -1;
}

/* ---- the inverted call tree ---- */

struct itree {
	struct sonde_tnode *nodes;
	size_t n, cap;
	struct index ix;
	uint32_t first_root;
};

static bool inode_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct sonde_tnode *n = &((const struct itree *)ctx)->nodes[id];
	const int64_t *k = key; /* parent, func */
	return n->parent == k[0] && n->func == (uint32_t)k[1];
}

static uint32_t itree_child(struct itree *t, int32_t parent, uint32_t func)
{
	int64_t k[2] = { parent, func };
	uint64_t h = mix64(((uint64_t)(uint32_t)parent << 32) | func);
	size_t pos;
	uint32_t id = index_find(&t->ix, h, inode_eq, t, k, &pos);
	if (id != UINT32_MAX)
		return id;
	if (sonde_grow(&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes, 64) || index_put(&t->ix, h, (uint32_t)t->n) < 0)
		return UINT32_MAX;
	id = (uint32_t)t->n++;
	struct sonde_tnode *n = &t->nodes[id];
	memset(n, 0, sizeof *n);
	n->func = func;
	n->parent = parent;
	n->first_child = UINT32_MAX;
	uint32_t *head = parent < 0 ? &t->first_root : &t->nodes[parent].first_child;
	n->next_sibling = *head;
	*head = id;
	return id;
}

int sonde_model_tree_inverted(const struct sonde_model *m, struct sonde_tnode **nodes, size_t *n, uint32_t *roots)
{
	struct itree t = { .first_root = UINT32_MAX };
	int nm = m->nm;
	for (size_t s = 0; s < m->nstacks; s++) {
		const uint32_t *fr = m->pool + m->stacks[s].off;
		int depth = (int)m->stacks[s].depth;
		const int64_t *v = m->svals + s * (size_t)nm;
		int32_t parent = -1;
		/* Leaf first: the leaf is the root, its caller its child. */
		for (int i = 0; i < depth; i++) {
			uint32_t k = itree_child(&t, parent, fr[i]);
			if (k == UINT32_MAX) {
				free(t.nodes);
				index_free(&t.ix);
				return -1;
			}
			vadd(t.nodes[k].incl, v, nm);
			if (i == depth - 1)
				vadd(t.nodes[k].excl, v, nm);
			parent = (int32_t)k;
		}
	}
	index_free(&t.ix);
	*nodes = t.nodes;
	*n = t.n;
	*roots = t.first_root;
	return 0;
}

/* ---- results ---- */

int sonde_model_nmetrics(const struct sonde_model *m) { return m->nm; }
int sonde_model_nall(const struct sonde_model *m) { return m->nm + m->nder; }

const struct sonde_metric_def *sonde_model_metric(const struct sonde_model *m, int i)
{
	return i < m->nm ? &m->defs[i] : &m->der[i - m->nm].def;
}

static int index_of(const struct sonde_model *m, const char *name)
{
	for (int i = 0; i < m->nm; i++)
		if (m->defs[i].name && !strcmp(m->defs[i].name, name))
			return i;
	return -1;
}

int sonde_model_add_derived(struct sonde_model *m, const struct sonde_derived_def *d)
{
	int num = index_of(m, d->num), den = index_of(m, d->den);

	if (num < 0 || den < 0 || m->nder == SONDE_MAX_DERIVED)
		return -1;
	m->der[m->nder] = (struct derived){ d->def, num, den, d->scale };
	return m->nm + m->nder++;
}

double sonde_model_value(const struct sonde_model *m, int i, const int64_t *v)
{
	if (i < m->nm)
		return (double)v[i];
	const struct derived *d = &m->der[i - m->nm];

	return v[d->den] ? d->scale * (double)v[d->num] / (double)v[d->den] : 0.0;
}

/* A derived value as an exact fraction n / q with q > 0 (0 / 1 when its
 * denominator is 0). */
static void fraction(const struct derived *d, const int64_t *v, __int128 *n, __int128 *q)
{
	*n = v[d->num];
	*q = v[d->den];
	if (!*q) {
		*n = 0;
		*q = 1;
	} else if (*q < 0) {
		*n = -*n;
		*q = -*q;
	}
}

int sonde_model_cmp(const struct sonde_model *m, int i, const int64_t *a, const int64_t *b)
{
	if (i < m->nm)
		return (a[i] > b[i]) - (a[i] < b[i]);
	const struct derived *d = &m->der[i - m->nm];
	__int128 na, qa, nb, qb;

	fraction(d, a, &na, &qa);
	fraction(d, b, &nb, &qb);
	/* the scale multiplies both alike: its sign alone can turn the order */
	__int128 x = na * qb, y = nb * qa;
	int c = (x > y) - (x < y);

	return d->scale < 0 ? -c : c;
}
const int64_t *sonde_model_total(const struct sonde_model *m) { return m->total; }
size_t sonde_model_nfuncs(const struct sonde_model *m) { return m->nfuncs; }
const struct sonde_mfunc *sonde_model_funcinfo(const struct sonde_model *m, uint32_t f) { return &m->funcs[f]; }
const int64_t *sonde_model_excl(const struct sonde_model *m, uint32_t f) { return m->excl + (size_t)f * (size_t)m->nm; }
const int64_t *sonde_model_incl(const struct sonde_model *m, uint32_t f) { return m->incl + (size_t)f * (size_t)m->nm; }

static const struct sonde_edge *edges_of(const struct edges *E, uint32_t f, size_t *n)
{
	if (!E->start) {
		*n = 0;
		return NULL;
	}
	*n = E->start[f + 1] - E->start[f];
	return E->sorted + E->start[f];
}

const struct sonde_edge *sonde_model_callers(const struct sonde_model *m, uint32_t f, size_t *n)
{
	return edges_of(&m->callers, f, n);
}

const struct sonde_edge *sonde_model_callees(const struct sonde_model *m, uint32_t f, size_t *n)
{
	return edges_of(&m->callees, f, n);
}

size_t sonde_model_nstacks(const struct sonde_model *m) { return m->nstacks; }

const uint32_t *sonde_model_stack_funcs(const struct sonde_model *m, uint32_t s, int *depth)
{
	*depth = (int)m->stacks[s].depth;
	return m->pool + m->stacks[s].off;
}

const int64_t *sonde_model_stack_values(const struct sonde_model *m, uint32_t s)
{
	return m->svals + (size_t)s * (size_t)m->nm;
}

size_t sonde_model_nobjects(const struct sonde_model *m) { return m->nobjs; }
const struct sonde_mobject *sonde_model_objectinfo(const struct sonde_model *m, uint32_t o) { return &m->objs[o]; }
const int64_t *sonde_model_object_excl(const struct sonde_model *m, uint32_t o) { return m->oexcl + (size_t)o * (size_t)m->nm; }
const int64_t *sonde_model_object_incl(const struct sonde_model *m, uint32_t o) { return m->oincl + (size_t)o * (size_t)m->nm; }

const struct sonde_tnode *sonde_model_tree(const struct sonde_model *m, size_t *n)
{
	*n = m->ntree;
	return m->tree;
}

uint32_t sonde_model_tree_roots(const struct sonde_model *m) { return m->first_root; }
