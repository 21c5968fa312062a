/*
 * Frames that tail calls erased, restored from DWARF's call sites (see
 * symbols.h, sonde_syms_tailcalls).  The call sites are read per CU by
 * srcinfo.c; here a call site's callee becomes a function of the handle
 * (by address, else by name: the PLT case, where the callee is a
 * declaration and its code is in another object) and the tail calls are
 * searched depth first from the call site's callee for the frame's
 * function.  The model builder asks once per distinct (return address,
 * function) pair, and each call site's callee is resolved once.
 */
#include <string.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "symbols/srcinfo.h"
#include "symbols/symbols.h"

/* A function with more tail calls than this (an interpreter's dispatch)
 * is not searched: its chain would be a guess anyway. */
#define MAX_EDGES 64
/* Depth-first steps per question, whatever the graph. */
#define MAX_STEPS 4096

static bool usable(const struct sonde_func *f)
{
	return f && f->object && !f->synthesized && !f->inlined && !f->plt;
}

/* The function that call site idx of so (in object o) calls, NULL when
 * unknown: memoised in the site. */
static const struct sonde_func *site_callee(struct sonde_syms *s, const struct sonde_object *o,
					    struct srcobj *so, uint32_t idx, uint64_t time_ns)
{
	struct srcobj_callsite *c = srcobj_callsite(so, idx);

	if (!c)
		return NULL;
	if (c->resolved)
		return c->resolved == UINT32_MAX ? NULL : sonde_syms_func(s, c->resolved - 1);
	uint64_t target = c->target;
	const char *name = c->name;
	const struct sonde_func *f = NULL;

	if (target) {
		f = sonde_syms_lookup(s, o->base + target, true, time_ns);
		if (!usable(f) || f->lo != target)
			f = NULL;
	}
	if (!f && name) {
		/* a declaration: the function of that name in o, else the
		 * one function of that name elsewhere (a jump through o's
		 * PLT lands in another object) */
		f = sonde_syms_symbol_in(s, o, name);
		if (!usable(f)) {
			const struct sonde_func *cand[4];
			size_t n = sonde_syms_symbol_any(s, name, cand, 4);

			f = NULL;
			for (size_t i = 0; i < n && i < 4; i++) {
				if (!usable(cand[i]) || strcmp(cand[i]->mangled, name))
					continue;
				if (f && f != cand[i]) {
					f = NULL; /* two of that name: unknown */
					break;
				}
				f = cand[i];
			}
		}
	}
	c = srcobj_callsite(so, idx);
	c->resolved = f ? f->id + 1 : UINT32_MAX;
	return f;
}

struct search {
	struct sonde_syms *s;
	uint64_t time_ns;
	const struct sonde_func *callee;
	const struct sonde_func *path[SONDE_TAIL_MAX];
	int depth;
	const struct sonde_func *chain[SONDE_TAIL_MAX];
	int nchain;
	int chains;	/* found so far; the search stops at 2 */
	bool uncertain; /* an indirect tail call, or the search was cut */
	int steps;
};

/* The tail calls from the function at the end of the path. */
static void dfs(struct search *x)
{
	const struct sonde_func *f = x->path[x->depth - 1];
	struct srcobj *so = sonde_syms_srcobj(x->s, f->object);
	uint32_t idx[MAX_EDGES];
	size_t n = so ? srcobj_tailcalls(so, f->lo, idx, MAX_EDGES) : 0;

	if (n > MAX_EDGES || ++x->steps > MAX_STEPS) {
		x->uncertain = true;
		return;
	}
	for (size_t i = 0; i < n && x->chains < 2; i++) {
		struct srcobj_callsite *c = srcobj_callsite(so, idx[i]);
		bool indirect = c && !c->target && !c->name;
		const struct sonde_func *g = site_callee(x->s, f->object, so, idx[i], x->time_ns);

		if (!g) {
			x->uncertain |= indirect;
			continue;
		}
		if (g->id == x->callee->id) {
			if (++x->chains == 1) {
				memcpy(x->chain, x->path, (size_t)x->depth * sizeof(*x->path));
				x->nchain = x->depth;
			}
			continue;
		}
		bool seen = false;

		for (int k = 0; k < x->depth && !seen; k++)
			seen = x->path[k]->id == g->id;
		if (seen)
			continue; /* a cycle of tail calls */
		if (x->depth == SONDE_TAIL_MAX) {
			x->uncertain = true;
			continue;
		}
		x->path[x->depth++] = g;
		dfs(x);
		x->depth--;
	}
}

/* The answers given, per (object, return address, callee): a view that
 * asks per event (-dump profile) asks the same questions again and again.
 * Keyed by a hash of the three; an entry that another question's hash
 * already holds is not kept (asked again, not answered wrong). */
struct tailmemo {
	struct u64map map; /* hash -> index into e */
	struct memo {
		const struct sonde_object *o;
		uint64_t ret;
		uint32_t callee;
		int n;
		uint32_t chain[SONDE_TAIL_MAX]; /* function ids */
	} *e;
	size_t ne, cap;
};

void tailmemo_free(struct tailmemo *m)
{
	if (!m)
		return;
	u64map_release(&m->map);
	free(m->e);
	free(m);
}

static uint64_t memo_key(const struct sonde_object *o, uint64_t ret, uint32_t callee)
{
	return ((uint64_t)(uintptr_t)o * 0x9e3779b97f4a7c15ull) ^ (ret * 0xff51afd7ed558ccdull) ^ callee;
}

static int search(struct sonde_syms *s, const struct sonde_object *o, uint64_t ret_pc, uint64_t time_ns,
		  const struct sonde_func *callee, const struct sonde_func **out);

int sonde_syms_tailcalls(struct sonde_syms *s, uint64_t ret_pc, uint64_t time_ns,
			 const struct sonde_func *callee, const struct sonde_func **out, int max)
{
	ret_pc &= ~SONDE_PC_EXACT;
	if (!usable(callee) || !ret_pc)
		return 0;
	const struct sonde_object *o = sonde_exp_find_object(sonde_syms_exp(s), ret_pc - 1, time_ns);

	if (!o)
		return 0;
	struct tailmemo **mp = sonde_syms_tailmemo(s);
	uint64_t key = memo_key(o, ret_pc, callee->id);
	long i = *mp ? u64map_get(&(*mp)->map, key) : -1;
	const struct sonde_func *chain[SONDE_TAIL_MAX];
	int n;

	if (i >= 0 && (*mp)->e[i].o == o && (*mp)->e[i].ret == ret_pc && (*mp)->e[i].callee == callee->id) {
		const struct memo *e = &(*mp)->e[i];

		n = e->n;
		for (int k = 0; k < n; k++)
			chain[k] = sonde_syms_func(s, e->chain[k]);
	} else {
		n = search(s, o, ret_pc, time_ns, callee, chain);
		if (!*mp)
			*mp = calloc(1, sizeof(**mp));
		struct tailmemo *m = *mp;

		if (m && i < 0 && !sonde_grow(&m->e, &m->cap, m->ne + 1, sizeof(*m->e), 64) &&
		    u64map_put(&m->map, key, (uint32_t)m->ne) == 0) {
			struct memo *e = &m->e[m->ne++];

			*e = (struct memo){ o, ret_pc, callee->id, n, { 0 } };
			for (int k = 0; k < n; k++)
				e->chain[k] = chain[k]->id;
		}
	}
	if (n > max)
		return 0;
	if (n > 0)
		memcpy(out, chain, (size_t)n * sizeof(*out));
	return n;
}

/* sonde_syms_tailcalls without its memo: chain has room for SONDE_TAIL_MAX. */
static int search(struct sonde_syms *s, const struct sonde_object *o, uint64_t ret_pc, uint64_t time_ns,
		  const struct sonde_func *callee, const struct sonde_func **chain)
{
	struct srcobj *so = sonde_syms_srcobj(s, o);
	struct srcobj_callsite *c = so ? srcobj_callsite_at(so, ret_pc - o->base) : NULL;

	if (!c)
		return 0;
	uint32_t ci = (uint32_t)(c - srcobj_callsite(so, 0));
	const struct sonde_func *t = site_callee(s, o, so, ci, time_ns);

	if (!t || t->id == callee->id)
		return 0;
	struct search x = { .s = s, .time_ns = time_ns, .callee = callee, .depth = 1 };

	x.path[0] = t;
	dfs(&x);
	if (x.chains > 1 || (x.chains == 1 && x.uncertain))
		return SONDE_TAIL_AMBIGUOUS;
	if (!x.chains)
		return 0;
	memcpy(chain, x.chain, (size_t)x.nchain * sizeof(*chain));
	return x.nchain;
}
