/*
 * Build a metrics model from experiments (see profile.h).
 *
 * Cost: every sample costs one lookup of its stack id in a table of sums
 * (struct sacc: one cache line per distinct stack id, so a real program's
 * hundred thousand stacks cost one miss of the last-level cache a sample,
 * where the evstack, the model's stack and their values were three to six
 * misses to memory); the sums reach the evstacks and the model once per
 * distinct stack.  Symbolisation happens once per distinct frame address,
 * and interning once per distinct stack.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "model/kind.h"
#include "model/profile.h"
#include "symbols/symbols.h"

/* A u64map whose values may be any uint32_t but UINT32_MAX - 1 (stored
 * in its place: u64map keeps index-sized values). */
#define SKIP_STORED (UINT32_MAX - 1)

static inline bool map_get(const struct u64map *m, uint64_t k, uint32_t *v)
{
	long i = u64map_get(m, k);
	if (i < 0)
		return false;
	*v = (uint32_t)i == SKIP_STORED ? UINT32_MAX : (uint32_t)i;
	return true;
}

/* k must be absent. */
static int map_put(struct u64map *m, uint64_t k, uint32_t v)
{
	return u64map_put(m, k, v == UINT32_MAX ? SKIP_STORED : v);
}

int sonde_parse_list(const char *spec, bool *sel, size_t max, char *err, size_t errlen)
{
	for (size_t i = 0; i <= max; i++)
		sel[i] = !spec || !strcmp(spec, "all");
	if (!spec || !strcmp(spec, "all"))
		return 0;
	const char *p = spec;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b;
		if (end == p)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1)
				goto bad;
			p = end;
		}
		if (a < 1 || b < a)
			goto bad;
		for (unsigned long n = a; n <= b && n <= max; n++)
			sel[n] = true;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "invalid list '%s' (expected all, or numbers and ranges like 1,3-5)", spec);
	return -1;
}

/* Is object (path) selected by an object_select list?  NULL list: all. */
static bool object_selected(char *const *names, size_t n, const char *path)
{
	if (!names)
		return true;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], path) || !strcmp(names[i], base))
			return true;
	return false;
}

struct builder {
	struct sonde_profile *p;
	struct sonde_model *m;
	struct sonde_syms *syms;
	char **objsel;
	size_t nobjsel;
	/* Per mapping epoch (sonde_exp_map_epoch): pc (with EXACT bit) ->
	 * index into spans; an address reused after dlclose names different
	 * functions in different epochs. */
	struct u64map *pcfunc;
	struct u64map kindfunc;	/* a frame of another kind than native: its symbol
				 * function's id -> index into spans (released with
				 * the epochs' maps, per experiment) */
	struct u64map *stacks;	/* per epoch: stack id -> index into p->ev */
	size_t nepochs;
	uint32_t ep;		/* the epoch of the event being added */
	struct u64map *cur_stacks; /* &stacks[ep] */
	uint64_t ep_lo, ep_hi;	/* its extent */
	struct span { uint32_t off, n; } *spans; /* a frame's functions: fl[off .. off + n) */
	size_t nspans, capspans;
	uint32_t *fl;		/* model functions, innermost first */
	size_t nfl, capfl;
	bool inlines;
	uint32_t exp_index;	/* of the experiment being added */
	size_t capev;
	uint32_t *frames;
	size_t capframes;
	struct sonde_sample_sel *ssel; /* of the experiment being added; NULL: all */
	/* Tail calls: per epoch, a return address -> its first entry of
	 * tails, which chain the entries of one address (one per function
	 * found below it). */
	bool tailcalls;
	struct u64map *tailmap;
	struct tailent { uint64_t ret; uint32_t callee, next, span; bool amb; } *tails;
	size_t ntails, captails;
	uint16_t cur_restored, cur_amb; /* of the stack being built */
	uint64_t cur_marks;
	uint8_t *cpusel;	/* cpu_select's bitmap; NULL: all */
	/* The call-path filter: its terms and, per model function (lazily,
	 * up to nfm), the terms it matches, bit j for term j's func and bit
	 * 32 + j for its caller; seen: the bits some function matched. */
	struct sonde_callpath_term cp[SONDE_CALLPATH_MAX];
	size_t ncp;
	char *cpbuf;
	uint64_t cp_single, cp_pair; /* the terms without / with a caller */
	uint64_t *fmatch, seen;
	size_t nfm, capfm;
	/* index_cpus / index_seconds: key -> index into p->cpus / p->seconds,
	 * with the last one looked up (events come in runs of one CPU, and in
	 * time order within a thread). */
	struct u64map cpumap, secmap;
	uint32_t last_cpu, last_cpu_i, last_sec, last_sec_i;
	size_t capcpus, capsecs;
	struct sacc *acc;	/* the samples' sums, not yet in the evstacks */
	/* The stack-shaping view mode (shape.h): the shaper of the
	 * experiment being added and its state, NULL when its stacks are as
	 * recorded; the contexts of its events (ctx[0]: none), interned, and
	 * its shaped evstacks by (stack id, state, context, epoch). */
	enum sonde_stackmode vmode;
	const struct sonde_shaper *sh;
	void *shst;
	struct shctx { int n; struct sonde_shape_link l[SONDE_SHAPE_LEVELS]; } *ctx;
	size_t nctx, capctx;
	struct u64map ctxmap; /* a context's hash (probed on) -> index into ctx */
	struct shent { uint64_t stack_id; uint32_t ctx, state, ep, ev; } *shent;
	size_t nshent, capshent;
	struct u64map shmap;  /* an entry's hash (probed on) -> index into shent */
};

int sonde_parse_cpu_list(const char *spec, uint8_t *sel, char *err, size_t errlen)
{
	bool all = !spec || !strcmp(spec, "all");
	memset(sel, all ? 0xff : 0, SONDE_CPU_SEL_BYTES);
	if (all)
		return 0;
	const char *p = spec;
	if (!*p)
		goto bad;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		unsigned long a = strtoul(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				goto bad;
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (b < a || b >= SONDE_CPU_UNKNOWN)
			goto bad;
		for (unsigned long n = a; n <= b; n++)
			sel[n / 8] |= (uint8_t)(1u << (n % 8));
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not 'all' or a list of CPU numbers from 0 (like 0,2-3)", spec);
	return -1;
}

/* The end of a name in a call-path term: the first of stops at depth 0 of
 * <...> (C++ template arguments hold ',' and '>'). */
static const char *name_end(const char *s, const char *stops)
{
	int depth = 0;
	for (; *s; s++) {
		if (!depth && strchr(stops, *s))
			break;
		if (*s == '<')
			depth++;
		else if (*s == '>' && depth)
			depth--;
	}
	return s;
}

int sonde_cpu_list_check(const char *spec, char *err, size_t errlen)
{
	uint8_t *sel = malloc(SONDE_CPU_SEL_BYTES);
	int rc;

	if (!sel) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = sonde_parse_cpu_list(spec, sel, err, errlen);
	free(sel);
	return rc;
}

int sonde_callpath_check(const char *spec, char *err, size_t errlen)
{
	struct sonde_callpath_term t[SONDE_CALLPATH_MAX];
	size_t n;
	char *buf = NULL;
	int rc = sonde_callpath_parse(spec, t, &n, &buf, err, errlen);

	free(buf);
	return rc;
}

int sonde_callpath_parse(const char *spec, struct sonde_callpath_term *t, size_t *n, char **buf, char *err,
			 size_t errlen)
{
	*n = 0;
	*buf = NULL;
	if (!spec || !strcmp(spec, "all"))
		return 0;
	char *c = strdup(spec);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char *p = c;
	for (;;) {
		char *e = (char *)name_end(p, ",>"), *callee = NULL;
		if (*e == '>') {
			*e = '\0';
			callee = e + 1;
			e = (char *)name_end(callee, ",>");
			if (*e == '>')
				goto bad;
		}
		bool last = !*e;
		*e = '\0';
		if (!*p || (callee && !*callee))
			goto bad;
		if (*n == SONDE_CALLPATH_MAX) {
			snprintf(err, errlen, "'%s' has more than %d terms", spec, SONDE_CALLPATH_MAX);
			free(c);
			return -1;
		}
		t[*n].caller = callee ? p : NULL;
		t[*n].func = callee ? callee : p;
		(*n)++;
		if (last)
			break;
		p = e + 1;
	}
	*buf = c;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not 'all' or a list of FUNC and CALLER>CALLEE terms (like main>work,spin)",
		 spec);
	free(c);
	*n = 0;
	return -1;
}

static bool named(const struct sonde_mfunc *fi, const char *name)
{
	return !strcmp(fi->name_long, name) || !strcmp(fi->name_short, name) || !strcmp(fi->mangled, name) ||
	       (fi->name_full && !strcmp(fi->name_full, name));
}

/* Does a stack of model functions (leaf first) pass the call-path
 * filter?  false out of memory too (the build then fails on its next
 * allocation or the caller's check). */
static bool callpath_pass(struct builder *b, const uint32_t *fr, int d)
{
	size_t nf = sonde_model_nfuncs(b->m);
	if (nf > b->nfm) {
		if (sonde_grow(&b->fmatch, &b->capfm, nf, sizeof *b->fmatch, 256))
			return false;
		for (size_t f = b->nfm; f < nf; f++) {
			const struct sonde_mfunc *fi = sonde_model_funcinfo(b->m, (uint32_t)f);
			uint64_t m = 0;
			for (size_t j = 0; j < b->ncp; j++) {
				if (named(fi, b->cp[j].func))
					m |= 1ull << j;
				if (b->cp[j].caller && named(fi, b->cp[j].caller))
					m |= 1ull << (32 + j);
			}
			b->fmatch[f] = m;
			b->seen |= m;
		}
		b->nfm = nf;
	}
	for (int i = 0; i < d; i++) {
		uint64_t m = b->fmatch[fr[i]];
		if (m & b->cp_single)
			return true;
		if (i + 1 < d && (m & b->cp_pair) && ((b->fmatch[fr[i + 1]] >> 32) & m & b->cp_pair))
			return true;
	}
	return false;
}

static int push_fl(struct builder *b, uint32_t f)
{
	if (sonde_grow(&b->fl, &b->capfl, b->nfl + 1, sizeof(*b->fl), 1024))
		return -1;
	b->fl[b->nfl++] = f;
	return 0;
}

static uint32_t model_func(struct builder *b, uint32_t o, const struct sonde_func *sf)
{
	uint32_t f = sonde_model_func(b->m, o, sf->lo, sf->mangled, sf->name_long, sf->name_short,
				      sf->synthesized);
	if (f != UINT32_MAX && sf->name_full && sonde_model_func_set_full(b->m, f, sf->name_full) < 0)
		return UINT32_MAX;
	return f;
}

/* The model function of one frame, into b->fl: none for a collector frame
 * (folded away); with inlines, the functions inlined at pc first. */
static int frame_fl(struct builder *b, const struct sonde_frame *fr, uint64_t time_ns)
{
	const struct sonde_func *sf = sonde_syms_frame(b->syms, fr, time_ns);
	uint64_t pc = fr->pc;
	bool exact = fr->exact;
	const char *path = sf && sf->object ? sf->object->path : "<unknown>";
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sf && sf->object && sf->object->sonde)
		return 0; /* the collector or a tracer: charged to the code below */
	uint32_t o = sonde_model_object(b->m, path);
	if (!object_selected(b->objsel, b->nobjsel, path)) {
		char name[512];
		snprintf(name, sizeof name, "<%s>", base);
		return push_fl(b, sonde_model_func(b->m, o, 0, name, name, name, true));
	}
	if (!sf) {
		char name[64];
		snprintf(name, sizeof name, "<unknown>@0x%llx", (unsigned long long)pc);
		return push_fl(b, sonde_model_func(b->m, o, pc, name, name, name, true));
	}
	if (sf->kind != SONDE_FRAME_NATIVE) { /* named by its kind (symbols.h): no ELF, no inlines */
		uint32_t f = model_func(b, o, sf);

		if (f != UINT32_MAX)
			sonde_model_func_set_kind(b->m, f, sf->kind);
		return push_fl(b, f);
	}
	if (b->inlines && sf->object && !sf->synthesized && !sf->plt) {
		const struct sonde_srcframe *lv;
		int n = sonde_syms_srcpos(b->syms, pc, exact, time_ns, &lv);
		/* Every level but the last (the out-of-line function, which
		 * is sf under the name its symbol has) is an inlined call. */
		for (int k = 0; k + 1 < n; k++) {
			if (!lv[k].inlined || !lv[k].name)
				continue;
			const struct sonde_func *g = sonde_syms_named(b->syms, sf->object, lv[k].name);
			if (push_fl(b, model_func(b, o, g)) < 0)
				return -1;
		}
	}
	return push_fl(b, model_func(b, o, sf));
}

/* The model function of sf as a frame's: folded into its object's
 * pseudo-function when that object is not selected. */
static uint32_t selected_func(struct builder *b, const struct sonde_func *sf)
{
	const char *path = sf->object->path;
	const char *base = strrchr(path, '/');
	uint32_t o = sonde_model_object(b->m, path);

	base = base ? base + 1 : path;
	if (!object_selected(b->objsel, b->nobjsel, path)) {
		char name[512];
		snprintf(name, sizeof name, "<%s>", base);
		return sonde_model_func(b->m, o, 0, name, name, name, true);
	}
	return model_func(b, o, sf);
}

/* That of a function restored by a tail call, into b->fl. */
static int tail_fl(struct builder *b, const struct sonde_func *sf)
{
	return push_fl(b, selected_func(b, sf));
}

/* The model functions that tail calls left off between a native frame at
 * return address ret and the function callee of the frame below it: *fl (valid
 * until the next call), innermost first, and their number; -1 out of
 * memory.  *amb: several chains of tail calls lead there (none restored).
 * Once per (return address, callee) in an epoch. */
static int tail_funcs(struct builder *b, uint64_t ret, uint64_t time_ns, const struct sonde_func *callee,
		      const uint32_t **fl, bool *amb)
{
	struct u64map *m = &b->tailmap[b->ep];
	uint32_t head = UINT32_MAX, i;

	if (map_get(m, ret, &head))
		for (i = head; i != UINT32_MAX; i = b->tails[i].next)
			if (b->tails[i].callee == callee->id)
				goto found;
	const struct sonde_func *chain[SONDE_TAIL_MAX];
	int n = sonde_syms_tailcalls(b->syms, ret, time_ns, callee, chain, SONDE_TAIL_MAX);

	if (sonde_grow(&b->tails, &b->captails, b->ntails + 1, sizeof(*b->tails), 256) ||
	    sonde_grow(&b->spans, &b->capspans, b->nspans + 1, sizeof(*b->spans), 1024))
		return -1;
	size_t off = b->nfl;

	for (int k = n; k-- > 0;)
		if (tail_fl(b, chain[k]) < 0)
			return -1;
	for (size_t j = off; j < b->nfl; j++)
		if (b->fl[j] == UINT32_MAX)
			return -1;
	i = (uint32_t)b->ntails++;
	b->tails[i] = (struct tailent){ ret, callee->id, UINT32_MAX, (uint32_t)b->nspans, n == SONDE_TAIL_AMBIGUOUS };
	b->spans[b->nspans++] = (struct span){ (uint32_t)off, (uint32_t)(b->nfl - off) };
	if (head == UINT32_MAX) {
		if (map_put(m, ret, i) < 0)
			return -1;
	} else {
		b->tails[i].next = b->tails[head].next;
		b->tails[head].next = i;
	}
found:
	*amb = b->tails[i].amb;
	*fl = b->fl + b->spans[b->tails[i].span].off;
	return (int)b->spans[b->tails[i].span].n;
}

/* The model functions of one frame: *fl (valid until the next call) and
 * their number (0: a collector frame); -1 out of memory.  A native frame's
 * are cached by its address and exactness in the current epoch; a frame of
 * another kind's by its symbol function (which the symbol handle caches
 * by the whole frame), in every epoch: a key of one kind's is never taken
 * for another's. */
static int frame_funcs(struct builder *b, const struct sonde_frame *fr, uint64_t time_ns, const uint32_t **fl)
{
	struct u64map *map = &b->pcfunc[b->ep];
	uint64_t key = fr->pc | (fr->exact ? SONDE_PC_EXACT : 0);
	uint32_t si;

	if (fr->kind != SONDE_FRAME_NATIVE) {
		map = &b->kindfunc;
		key = sonde_syms_frame(b->syms, fr, time_ns)->id;
	}
	if (!map_get(map, key, &si)) {
		if (sonde_grow(&b->spans, &b->capspans, b->nspans + 1, sizeof(*b->spans), 1024))
			return -1;
		size_t off = b->nfl;
		if (frame_fl(b, fr, time_ns) < 0)
			return -1;
		for (size_t i = off; i < b->nfl; i++)
			if (b->fl[i] == UINT32_MAX)
				return -1; /* the model ran out of memory */
		si = (uint32_t)b->nspans;
		b->spans[b->nspans++] = (struct span){ (uint32_t)off, (uint32_t)(b->nfl - off) };
		if (map_put(map, key, si) < 0)
			return -1;
	}
	*fl = b->fl + b->spans[si].off;
	return (int)b->spans[si].n;
}

/* build_stack's answer for a stack the call-path filter leaves out. */
#define EXCLUDED_STACK (UINT32_MAX - 2)

/* Appends the model functions of frame fr (and those that tail calls left
 * off between it and the frame below, *below's function) to b->frames at
 * *d; rename (not UINT32_MAX): the function that stands for fr's own
 * (out-of-line) function.  The number appended, -1 out of memory. */
/* A shaped stack's renaming of outlined bodies (the shaping below): the
 * object of the frame being added, the codeptr that names its level's
 * bodies, and whether the last function appended stands for one (the
 * frame of its source function that called it is one with it). */
struct shren {
	const struct sonde_object *obj;
	uint64_t codeptr, t;
	bool last;
};
static void push_shaped(struct builder *b, int *d, uint32_t f, bool renamed, struct shren *ren);

static int add_frame(struct builder *b, const struct sonde_frame *fr, uint64_t time_ns,
		     const struct sonde_func **below, int *d, struct shren *ren)
{
	bool native = fr->kind == SONDE_FRAME_NATIVE;
	const uint32_t *fl;
	int d0 = *d;
	if (*below && !fr->exact && native) {
		/* the functions that jumped to `below` on behalf of this
		 * frame's call: between the two, innermost first */
		bool amb;
		int tn = tail_funcs(b, fr->pc, time_ns, *below, &fl, &amb);
		if (tn < 0 || sonde_grow(&b->frames, &b->capframes, (size_t)(*d + tn + 1), sizeof *b->frames, 64))
			return -1;
		for (int i = 0; i < tn; i++) {
			if (*d < 64)
				b->cur_marks |= 1ull << *d;
			b->frames[(*d)++] = fl[i];
		}
		b->cur_restored += (uint16_t)tn;
		b->cur_amb += amb;
	}
	int n = frame_funcs(b, fr, time_ns, &fl);
	if (n < 0)
		return -1;
	*below = NULL;
	if (b->tailcalls && n > 0 && native) {
		*below = sonde_syms_lookup(b->syms, fr->pc, fr->exact, time_ns);
		if (!(*below)->object || (*below)->synthesized || (*below)->plt)
			*below = NULL;
	}
	if (sonde_grow(&b->frames, &b->capframes, (size_t)(*d + n + 2), sizeof *b->frames, 64))
		return -1;
	for (int i = 0; i < n; i++) {
		uint32_t f = fl[i];
		/* Consecutive frames folded into one object
		 * pseudo-function are one call. */
		if (*d && b->frames[*d - 1] == f && sonde_model_funcinfo(b->m, f)->lo == 0 &&
		    sonde_model_funcinfo(b->m, f)->name_long[0] == '<')
			continue;
		if (ren) /* a shaped stack: its source function's frame after a body is one with it */
			push_shaped(b, d, f, false, ren);
		else
			b->frames[(*d)++] = f;
	}
	return *d - d0;
}

static uint32_t finish_stack(struct builder *b, uint16_t flags, int d);

/* Intern the model stack for an experiment stack; UINT32_MAX on OOM,
 * EXCLUDED_STACK when the call-path filter leaves it out. */
static uint32_t build_stack(struct builder *b, const struct sonde_exp *exp, uint64_t stack_id, uint64_t time_ns,
			    bool leaf_exact)
{
	const struct sonde_stack *st = sonde_exp_stack(exp, stack_id);
	b->cur_restored = b->cur_amb = 0;
	b->cur_marks = 0;
	if (!st || !st->depth) {
		uint32_t o = sonde_model_object(b->m, "<unknown>");
		uint32_t f = sonde_model_func(b->m, o, 0, "<no stack>", "<no stack>", "<no stack>", true);
		if (b->ncp && !callpath_pass(b, &f, 1))
			return EXCLUDED_STACK;
		return sonde_model_stack(b->m, &f, 1);
	}
	int d = 0;
	const struct sonde_func *below = NULL; /* the function of the frame below, for tail calls */
	for (int k = 0; k < st->depth; k++) {
		struct sonde_frame fr = st->frame[k];
		fr.exact |= k == 0 && leaf_exact;
		if (add_frame(b, &fr, time_ns, &below, &d, NULL) < 0)
			return UINT32_MAX;
	}
	return finish_stack(b, st->flags, d);
}

/* The model stack of b->frames[0 .. d) (the caller left room for one more
 * frame): a root pseudo-function for a stack cut at the depth limit (st's
 * flags), the call-path filter, the tail-call marks. */
static uint32_t finish_stack(struct builder *b, uint16_t flags, int d)
{
	if (!d) {
		uint32_t o = sonde_model_object(b->m, "<unknown>");
		b->frames[d++] = sonde_model_func(b->m, o, 0, "<no stack>", "<no stack>", "<no stack>", true);
	}
	if (flags & SONDE_STACK_TRUNCATED) {
		/* Cut at the depth limit: its callers, the root among them,
		 * are unknown.  A pseudo-function stands for them as the
		 * outermost frame (gprofng's name), so the time is seen to
		 * have no known root instead of silently missing from main's
		 * inclusive time.  The loop above left room for one more. */
		uint32_t o = sonde_model_object(b->m, "<unknown>");
		b->frames[d++] = sonde_model_func(b->m, o, 0, SONDE_TRUNCATED_STACK, SONDE_TRUNCATED_STACK,
						  SONDE_TRUNCATED_STACK, true);
	}
	/* A stack the call-path filter leaves out is not interned: the
	 * model (its tree, its callers) never sees it. */
	if (b->ncp && !callpath_pass(b, b->frames, d))
		return EXCLUDED_STACK;
	uint32_t ms = sonde_model_stack(b->m, b->frames, d);
	if (b->cur_marks && ms != UINT32_MAX) {
		struct sonde_profile *p = b->p;
		if (ms >= p->ntailmarks) {
			size_t cap = p->ntailmarks, old = p->ntailmarks;
			if (sonde_grow(&p->tailmarks, &cap, (size_t)ms + 1, sizeof *p->tailmarks, 64))
				return UINT32_MAX;
			memset(p->tailmarks + old, 0, (cap - old) * sizeof *p->tailmarks);
			p->ntailmarks = cap;
		}
		p->tailmarks[ms] |= b->cur_marks;
	}
	return ms;
}

/* ---- the stack-shaping view modes (model/shape.h) ----------------------------------------
 *
 * A shaped stack is made of levels: the event's own stack, then, for each
 * link of its context (b->ctx[c]), the stack its frames continue in (a
 * worker's under the stack that opened its region).  In each level the
 * runtime's frames are dropped, but at the leaf of the event's own stack:
 * there the runtime's frames (with the system's it called) are one
 * pseudo-function named by the event's state in user mode, and kept in
 * expert mode; a level that continues in another drops its root part (the
 * runtime's thread start and the system's below it); outlined bodies are
 * their source function, merged with the frame of that function that
 * called them (the opener: the body is part of its source).
 */

enum { F_USER, F_SYSTEM, F_RUNTIME, F_SONDE };

static int frame_class(struct builder *b, const struct sonde_frame *fr, uint64_t t, const struct sonde_func **sfp)
{
	const struct sonde_func *sf = sonde_syms_frame(b->syms, fr, t);
	*sfp = sf;
	if (sf && sf->object && sf->object->sonde)
		return F_SONDE;
	if (fr->kind == SONDE_FRAME_KERNEL)
		return F_SYSTEM;
	if (fr->kind != SONDE_FRAME_NATIVE)
		return F_USER;
	if (b->sh->runtime_object(sf ? sf->object : NULL))
		return F_RUNTIME;
	return sonde_shape_system_object(sf ? sf->object : NULL) ? F_SYSTEM : F_USER;
}

/* The model function an outlined body sf stands for, UINT32_MAX when sf is
 * none or its source function is not known. */
static uint32_t outlined_source(struct builder *b, const struct sonde_object *obj, const char *mangled,
				uint64_t codeptr, uint64_t t)
{
	size_t len;
	const struct sonde_func *g = NULL;
	if (!mangled || !b->sh->outlined(mangled, &len))
		return UINT32_MAX;
	if (len) {
		char name[512];
		if (len >= sizeof name)
			return UINT32_MAX;
		memcpy(name, mangled, len);
		name[len] = 0;
		g = sonde_syms_named(b->syms, obj, name);
	} else if (codeptr) {
		g = sonde_syms_lookup(b->syms, codeptr, false, t);
		if (g && (!g->object || g->synthesized || g->plt))
			g = NULL;
	}
	if (!g)
		return UINT32_MAX;
	return selected_func(b, g);
}

/* Appends f to a shaped stack: an outlined body's source function
 * (renamed) once, and the frame of that function next to it not again. */
static void push_shaped(struct builder *b, int *d, uint32_t f, bool renamed, struct shren *ren)
{
	if (renamed) {
		if (!*d || b->frames[*d - 1] != f)
			b->frames[(*d)++] = f;
		ren->last = true;
		return;
	}
	if (ren->last && *d && b->frames[*d - 1] == f) {
		ren->last = false;
		return;
	}
	b->frames[(*d)++] = f;
	ren->last = false;
}

/* The functions of a frame in an outlined body sf (its inlined levels,
 * innermost first, then its own), each an outlined body renamed: made
 * here, uncached (the names depend on the level's codeptr), so that the
 * model never holds the bodies' own functions.  -1 out of memory. */
static int outlined_frame(struct builder *b, const struct sonde_frame *fr, uint64_t t, int *d, struct shren *ren,
			  const struct sonde_func *sf)
{
	uint32_t o = sonde_model_object(b->m, sf->object->path);
	const struct sonde_srcframe *lv = NULL;
	int n = b->inlines && !sf->plt ? sonde_syms_srcpos(b->syms, fr->pc, fr->exact, t, &lv) : 0;
	if (sonde_grow(&b->frames, &b->capframes, (size_t)(*d + n + 2), sizeof *b->frames, 64))
		return -1;
	for (int k = 0; k + 1 < n; k++) {
		if (!lv[k].inlined || !lv[k].name)
			continue;
		uint32_t f = outlined_source(b, sf->object, lv[k].name, ren->codeptr, t);
		bool renamed = f != UINT32_MAX;
		if (!renamed)
			f = model_func(b, o, sonde_syms_named(b->syms, sf->object, lv[k].name));
		if (f == UINT32_MAX)
			return -1;
		push_shaped(b, d, f, renamed, ren);
	}
	uint32_t f = outlined_source(b, sf->object, sf->mangled, ren->codeptr, t);
	bool renamed = f != UINT32_MAX;
	if (!renamed)
		f = model_func(b, o, sf); /* a body the name and codeptr do not place */
	if (f == UINT32_MAX)
		return -1;
	push_shaped(b, d, f, renamed, ren);
	return 0;
}

static uint32_t build_shaped(struct builder *b, const struct sonde_exp *exp, uint64_t stack_id, uint64_t time_ns,
			     bool leaf_exact, unsigned state, uint32_t c)
{
	const struct shctx *cx = &b->ctx[c];
	b->cur_restored = b->cur_amb = 0;
	b->cur_marks = 0;
	int d = 0;
	uint16_t flags = 0;
	struct shren ren = { NULL, 0, 0, false }; /* ren.last: b->frames[d - 1] stands for an outlined body */
	for (int lv = 0; lv <= cx->n; lv++) {
		uint64_t sid = lv ? cx->l[lv - 1].stack_id : stack_id;
		uint64_t t = lv ? cx->l[lv - 1].time_ns : time_ns;
		uint64_t codeptr = lv < cx->n ? cx->l[lv].codeptr : 0;
		bool cut = lv < cx->n && cx->l[lv].stack_id;
		if (lv && !sid)
			break;
		const struct sonde_stack *st = sonde_exp_stack(exp, sid);
		if (!st || !st->depth)
			continue;
		int n = st->depth;
		int cls[n];
		const struct sonde_func *sfs[n];
		for (int k = 0; k < n; k++) {
			struct sonde_frame fr = st->frame[k];
			fr.exact |= k == 0 && !lv && leaf_exact;
			cls[k] = frame_class(b, &fr, t, &sfs[k]);
		}
		/* the leaf's run in the runtime: [0, run) */
		int run = 0;
		if (!lv) {
			int k = 0, last = -1;
			while (k < n && cls[k] != F_USER) {
				if (cls[k] == F_RUNTIME)
					last = k;
				k++;
			}
			run = last + 1;
		}
		/* a continued level's root part: [tail, n) */
		int tail = n;
		if (cut)
			while (tail > 0 && cls[tail - 1] != F_USER)
				tail--;
		if (tail < run)
			tail = run; /* nothing of the user's in this level: its leaf run is all */
		bool user = false;
		for (int k = 0; k < n && !user; k++)
			user = cls[k] == F_USER;
		/* a thread of the runtime's own: <OMP-idle> is all it shows (a
		 * stack of system code alone, the loader's start, stays) */
		if (!user && run && b->vmode == SONDE_SHAPE_USER)
			tail = run;
		const struct sonde_func *below = NULL;
		if (run && b->vmode == SONDE_SHAPE_USER) {
			/* in a pseudo-object of the runtime's name ("<OpenMP>"):
			 * user mode shows nothing of the runtime's object */
			char oname[64];
			snprintf(oname, sizeof oname, "<%s>", b->sh->name);
			const char *name = b->sh->pseudo(state);
			uint32_t o = sonde_model_object(b->m, oname);
			uint32_t f = sonde_model_func(b->m, o, 0, name, name, name, true);
			if (f == UINT32_MAX ||
			    sonde_grow(&b->frames, &b->capframes, (size_t)(d + 2), sizeof *b->frames, 64))
				return UINT32_MAX;
			b->frames[d++] = f;
			ren.last = false;
		}
		for (int k = b->vmode == SONDE_SHAPE_USER ? run : 0; k < tail; k++) {
			struct sonde_frame fr = st->frame[k];
			fr.exact |= k == 0 && !lv && leaf_exact;
			if (cls[k] == F_SONDE)
				continue;
			if (cls[k] == F_RUNTIME && k >= run) {
				below = NULL; /* a gap: no tail calls across it */
				continue;
			}
			const struct sonde_func *sf = sfs[k];
			ren.obj = k >= run && sf && sf->kind == SONDE_FRAME_NATIVE && sf->object && !sf->synthesized
					  ? sf->object
					  : NULL;
			ren.codeptr = codeptr;
			ren.t = t;
			if (!ren.obj)
				ren.last = false;
			size_t len;
			if (ren.obj && object_selected(b->objsel, b->nobjsel, ren.obj->path) &&
			    b->sh->outlined(sf->mangled, &len)) {
				below = NULL; /* no tail calls restored into an outlined body */
				if (outlined_frame(b, &fr, t, &d, &ren, sf) < 0)
					return UINT32_MAX;
				continue;
			}
			if (add_frame(b, &fr, t, &below, &d, ren.obj ? &ren : NULL) < 0)
				return UINT32_MAX;
		}
		flags = st->flags;
		if (tail < n)
			flags &= (uint16_t)~SONDE_STACK_TRUNCATED;
	}
	if (sonde_grow(&b->frames, &b->capframes, (size_t)(d + 2), sizeof *b->frames, 64))
		return UINT32_MAX;
	return finish_stack(b, flags, d);
}

static void release_epochs(struct builder *b)
{
	for (size_t i = 0; i < b->nepochs; i++) {
		if (b->tailmap)
			u64map_release(&b->tailmap[i]);
		if (b->pcfunc)
			u64map_release(&b->pcfunc[i]);
		if (b->stacks)
			u64map_release(&b->stacks[i]);
	}
	u64map_release(&b->kindfunc); /* the symbol handle's ids: per experiment */
	free(b->pcfunc);
	free(b->stacks);
	free(b->tailmap);
	b->pcfunc = b->stacks = b->tailmap = NULL;
	b->nepochs = 0;
}

static int parse_objsel(const char *spec, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!spec || !strcmp(spec, "all"))
		return 0;
	char *copy = strdup(spec);
	if (!copy)
		return -1;
	size_t cap = 1;
	for (const char *c = spec; *c; c++)
		cap += *c == ',';
	char **v = calloc(cap + 1, sizeof *v);
	if (!v) {
		free(copy);
		return -1;
	}
	for (char *t = strtok(copy, ","); t; t = strtok(NULL, ","))
		v[(*n)++] = t;
	v[cap] = copy; /* freed with the list */
	*out = v;
	return (int)cap;
}

static void free_objsel(char **v, int cap)
{
	if (v)
		free(v[cap]);
	free(v);
}

/* Sets b->ep to the mapping epoch of time t: one comparison while events
 * stay in the same epoch (always, in a run that reused no address). */
static void set_epoch(struct builder *b, const struct sonde_exp *exp, uint64_t t)
{
	if (b->nepochs > 1 && (t < b->ep_lo || t >= b->ep_hi)) {
		b->ep = sonde_exp_map_epoch(exp, t, &b->ep_lo, &b->ep_hi);
		b->cur_stacks = &b->stacks[b->ep];
	}
}

/* Fills the event stack ev (zeroed, its continuations set) for the
 * model's stack ms of stack_id, and counts it. */
static uint32_t evstack_fill(struct builder *b, struct sonde_evstack *ev, uint32_t e, uint32_t ms, uint64_t stack_id,
			     uint64_t time_ns, bool leaf_exact)
{
	ev->exp = e;
	ev->mstack = ms;
	ev->stack_id = stack_id;
	ev->time_ns = time_ns;
	ev->leaf_exact = leaf_exact;
	ev->tail_restored = b->cur_restored;
	ev->tail_ambiguous = b->cur_amb;
	if (ms == EXCLUDED_STACK) {
		ev->mstack = UINT32_MAX;
		ev->excluded = true;
	}
	return (uint32_t)b->p->nev++;
}

/* The evstack of an experiment stack in the current epoch, made (with its
 * model stack) at its first event there: its index, or UINT32_MAX out of
 * memory.  Stacks are interned by their addresses, so one id is shared by
 * events of different epochs whose frames are different functions. */
static __attribute__((noinline)) uint32_t evstack_new(struct builder *b, uint32_t e, const struct sonde_exp *exp,
						      uint64_t stack_id, uint64_t time_ns, bool leaf_exact)
{
	struct u64map *stacks = &b->stacks[b->ep];
	struct sonde_profile *p = b->p;
	if (sonde_grow(&p->ev, &b->capev, p->nev + 1, sizeof(*p->ev), 256))
		return UINT32_MAX;
	uint32_t ms = build_stack(b, exp, stack_id, time_ns, leaf_exact);
	if (ms == UINT32_MAX || map_put(stacks, stack_id, (uint32_t)p->nev) < 0)
		return UINT32_MAX;
	struct sonde_evstack *ev = &p->ev[p->nev];
	memset(ev, 0, sizeof(*ev));
	return evstack_fill(b, ev, e, ms, stack_id, time_ns, leaf_exact);
}

static inline bool cpu_selected(const struct builder *b, uint32_t cpu)
{
	return !b->cpusel || (cpu < SONDE_CPU_UNKNOWN && (b->cpusel[cpu / 8] >> (cpu % 8) & 1));
}

static void vsum(int64_t *dst, const int64_t *v, int lo, int hi)
{
	for (int k = lo; k < hi; k++) /* wrap, never overflow UB */
		dst[k] = (int64_t)((uint64_t)dst[k] + (uint64_t)v[k]);
}

/* Adds v's metrics [lo, hi) to the totals of CPU cpu and to those of the
 * second of the run at rel ns (each when the options keep it); -1 out of
 * memory. */
static int index_add(struct builder *b, const struct sonde_profile_opts *o, uint32_t cpu, uint64_t rel,
		     const int64_t *v, int lo, int hi)
{
	struct sonde_profile *p = b->p;
	uint32_t i;
	if (o->index_cpus) {
		if (!p->ncpus || cpu != b->last_cpu) {
			if (!map_get(&b->cpumap, cpu, &i)) {
				if (sonde_grow(&p->cpus, &b->capcpus, p->ncpus + 1, sizeof *p->cpus, 16))
					return -1;
				i = (uint32_t)p->ncpus;
				if (map_put(&b->cpumap, cpu, i) < 0)
					return -1;
				memset(&p->cpus[i], 0, sizeof *p->cpus);
				p->cpus[i].cpu = cpu;
				p->cpus[i].selected = cpu_selected(b, cpu);
				p->ncpus++;
			}
			b->last_cpu = cpu;
			b->last_cpu_i = i;
		}
		vsum(p->cpus[b->last_cpu_i].v, v, lo, hi);
	}
	if (o->index_seconds && cpu_selected(b, cpu)) {
		uint64_t sec64 = rel / 1000000000u;
		uint32_t sec = sec64 > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)sec64;
		if (!p->nseconds || sec != b->last_sec) {
			if (!map_get(&b->secmap, sec, &i)) {
				if (sonde_grow(&p->seconds, &b->capsecs, p->nseconds + 1, sizeof *p->seconds, 16))
					return -1;
				i = (uint32_t)p->nseconds;
				if (map_put(&b->secmap, sec, i) < 0)
					return -1;
				memset(&p->seconds[i], 0, sizeof *p->seconds);
				p->seconds[i].second = sec;
				p->nseconds++;
			}
			b->last_sec = sec;
			b->last_sec_i = i;
		}
		vsum(p->seconds[b->last_sec_i].v, v, lo, hi);
	}
	return 0;
}

static int cmp_pcpu(const void *a, const void *b)
{
	uint32_t x = ((const struct sonde_pcpu *)a)->cpu, y = ((const struct sonde_pcpu *)b)->cpu;
	return x < y ? -1 : x > y;
}

static int cmp_psecond(const void *a, const void *b)
{
	uint32_t x = ((const struct sonde_psecond *)a)->second, y = ((const struct sonde_psecond *)b)->second;
	return x < y ? -1 : x > y;
}

/* Once per sample whose stack differs from the previous one: inline. */
static inline uint32_t evstack(struct builder *b, uint32_t e, const struct sonde_exp *exp, uint64_t stack_id,
			       uint64_t time_ns, bool leaf_exact)
{
	uint32_t i;
	if (map_get(b->cur_stacks, stack_id, &i))
		return i;
	return evstack_new(b, e, exp, stack_id, time_ns, leaf_exact);
}

/* The context of an event of thread tid at time_ns (b->sh's links),
 * interned: its index into b->ctx, UINT32_MAX out of memory. */
static uint32_t shape_ctx(struct builder *b, uint32_t tid, uint64_t time_ns)
{
	struct shctx c;
	memset(&c, 0, sizeof c);
	c.n = b->sh->links(b->shst, tid, time_ns, c.l, SONDE_SHAPE_LEVELS);
	if (c.n <= 0)
		return 0;
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < c.n; i++)
		h = ((h ^ c.l[i].codeptr) * 0x100000001b3ull ^ c.l[i].stack_id) * 0x100000001b3ull;
	for (;; h++) {
		uint32_t i;
		if (!map_get(&b->ctxmap, h, &i))
			break;
		if (!memcmp(&b->ctx[i], &c, sizeof c))
			return i;
	}
	if (sonde_grow(&b->ctx, &b->capctx, b->nctx + 1, sizeof *b->ctx, 16) ||
	    map_put(&b->ctxmap, h, (uint32_t)b->nctx) < 0)
		return UINT32_MAX;
	b->ctx[b->nctx] = c;
	return (uint32_t)b->nctx++;
}

/* evstack for a shaped experiment: keyed by the stack id, the event's
 * state and context in the current epoch; UINT32_MAX out of memory. */
static uint32_t evstack_shaped(struct builder *b, uint32_t e, const struct sonde_exp *exp, uint64_t stack_id,
			       uint64_t time_ns, bool leaf_exact, unsigned state, uint32_t c)
{
	uint64_t h = (((stack_id * 0x9e3779b97f4a7c15ull) ^ state) * 0x100000001b3ull ^ c) * 0x100000001b3ull ^ b->ep;
	for (;; h++) {
		uint32_t i;
		if (!map_get(&b->shmap, h, &i))
			break;
		const struct shent *x = &b->shent[i];
		if (x->stack_id == stack_id && x->state == state && x->ctx == c && x->ep == b->ep)
			return x->ev;
	}
	struct sonde_profile *p = b->p;
	if (sonde_grow(&p->ev, &b->capev, p->nev + 1, sizeof(*p->ev), 256) ||
	    sonde_grow(&b->shent, &b->capshent, b->nshent + 1, sizeof *b->shent, 256) ||
	    map_put(&b->shmap, h, (uint32_t)b->nshent) < 0)
		return UINT32_MAX;
	uint32_t ms = build_shaped(b, exp, stack_id, time_ns, leaf_exact, state, c);
	if (ms == UINT32_MAX)
		return UINT32_MAX;
	b->shent[b->nshent++] = (struct shent){ stack_id, c, state, b->ep, (uint32_t)p->nev };
	struct sonde_evstack *ev = &p->ev[p->nev];
	memset(ev, 0, sizeof(*ev));
	for (int i = 0; i < b->ctx[c].n && b->ctx[c].l[i].stack_id; i++)
		ev->cont[ev->ncont++] = (struct sonde_evcont){ b->ctx[c].l[i].stack_id, b->ctx[c].l[i].time_ns };
	return evstack_fill(b, ev, e, ms, stack_id, time_ns, leaf_exact);
}

/* Ends the shaping of the experiment just added. */
static void shape_end(struct builder *b)
{
	if (b->sh)
		b->sh->close(b->shst);
	b->sh = NULL;
	b->shst = NULL;
	free(b->ctx);
	free(b->shent);
	b->ctx = NULL;
	b->shent = NULL;
	b->nctx = b->capctx = b->nshent = b->capshent = 0;
	u64map_release(&b->ctxmap);
	u64map_release(&b->shmap);
}

/* Starts shaping experiment exp when a shaper knows its runtime (not in
 * machine mode); -1 out of memory. */
static int shape_begin(struct builder *b, const struct sonde_exp *exp)
{
	shape_end(b);
	if (b->vmode == SONDE_SHAPE_MACHINE)
		return 0;
	for (int i = 0; sonde_shapers[i]; i++) {
		bool oom;
		void *st = sonde_shapers[i]->open(exp, &oom);
		if (oom)
			return -1;
		if (st) {
			b->sh = sonde_shapers[i];
			b->shst = st;
			break;
		}
	}
	if (b->sh) { /* ctx[0]: no context */
		b->p->shaped = true;
		if (sonde_grow(&b->ctx, &b->capctx, 1, sizeof *b->ctx, 16))
			return -1;
		memset(&b->ctx[0], 0, sizeof b->ctx[0]);
		b->nctx = 1;
	}
	return 0;
}

static inline int state_metric(unsigned st)
{
	switch (st) {
#define STATE_CASE_(NAME, id, flags, M, ...) SONDE_STATE_METRIC_IF_(M, case id: return SONDE_M_STATE_##NAME;)
		SONDE_STATES(STATE_CASE_)
#undef STATE_CASE_
	}
	return -1;
}

/* The clock metrics of n samples of thread state st that weigh w in all,
 * system of it System CPU, after a run-queue delay of wait (both 0 for an
 * off-CPU state's).  A CPU state's weight is CPU time (a state this build
 * does not know too), an off-CPU state's blocked time; each in its state's
 * metric too, when it has one. */
static inline void clock_vals(unsigned st, uint64_t n, uint64_t w, uint64_t system, uint64_t wait, int64_t *v)
{
	memset(v, 0, SONDE_M_CLOCK_N * sizeof *v);
	int m = state_metric(st);
	if (!sonde_state_offcpu(st)) {
		v[SONDE_M_TOTALCPU] = (int64_t)w;
		v[SONDE_M_SAMPLES] = (int64_t)n;
		v[SONDE_M_USER] = (int64_t)(w - system); /* the reader: system <= weight */
		v[SONDE_M_SYSTEM] = (int64_t)system;
		v[SONDE_M_WAIT] = (int64_t)wait;
		v[SONDE_M_TOTAL] = (int64_t)(w + wait);
	} else {
		v[SONDE_M_TOTAL] = (int64_t)w;
	}
	if (m >= 0)
		v[m] = (int64_t)w;
	/* the sums its state is a member of (sonde/states.h) */
#define SUM_ADD_(NAME, members, ...) \
	if (st < 64 && ((members) >> st & 1)) \
		v[SONDE_M_SUM_##NAME] += (int64_t)w;
	SONDE_STATE_SUMS(SUM_ADD_)
#undef SUM_ADD_
}

int sonde_state_metric(unsigned st)
{
	return state_metric(st);
}

void sonde_clock_values(const struct sonde_sample *s, int64_t *v)
{
	clock_vals(s->state, 1, s->weight_ns, s->system_ns, s->wait_cpu_ns, v);
}

/*
 * Clock-profile sums per stack id and thread state: an open-addressing
 * table of one cache line per (id, state), so that a sample costs one
 * miss, and that miss is prefetched a batch of samples ahead
 * (SACC_PREFETCH); order keeps the entries in the order they first came
 * (a stack's first entry is the one of its first sample, whatever its
 * state).  Flushed into the evstacks (of the current epoch) and the model
 * before the epoch changes and at the end of an experiment.  The metrics
 * follow from the sums as from one sample's (clock_vals).
 */
struct sacc_entry {
	uint64_t stack_id;
	uint64_t first; /* the first sample's time | SACC_USED; 0: an empty slot */
	uint64_t samples, weight, system, wait;
	uint64_t state; /* sonde/states.h */
	uint64_t pad;
};
/* A monotonic clock's time in ns is below 2^63 (292 years of uptime). */
#define SACC_USED (1ull << 63)
_Static_assert(sizeof(struct sacc_entry) == 64, "one cache line");

struct sacc {
	struct sacc_entry *t; /* cap slots, cap a power of two */
	uint32_t *order;      /* the slots in use, in the order their ids came */
	size_t n, cap;
};

static void sacc_free(struct sacc *a)
{
	if (!a)
		return;
	free(a->t);
	free(a->order);
	free(a);
}

static inline size_t sacc_slot(const struct sacc *a, uint64_t id, uint64_t state)
{
	return (size_t)(((id ^ state) * 0x9e3779b97f4a7c15ull) >> 32) & (a->cap - 1);
}

/* A macro: gcc drops a call to a function that only prefetches (it finds
 * it has no effect) before it would inline it.  A write hint (rw 1) is no
 * instruction at the x86-64 baseline. */
#define SACC_PREFETCH(a, id, state)                                            \
	do {                                                                   \
		if ((a)->cap)                                                  \
			__builtin_prefetch(&(a)->t[sacc_slot((a), (id), (state))]); \
	} while (0)

/* Doubles the table (load at most 1/2), keeping the order. */
static int sacc_grow(struct sacc *a)
{
	size_t cap = a->cap ? a->cap * 2 : 4096;
	/* in huge pages where the kernel gives them on request: a table of
	 * 100k ids spans 4000 small pages, more than the TLB holds */
	size_t bytes = cap * sizeof(struct sacc_entry), align = bytes >= (2u << 20) ? (2u << 20) : 64;
	struct sacc_entry *t = aligned_alloc(align, bytes);
	if (t && align > 64)
		madvise(t, bytes, MADV_HUGEPAGE);
	uint32_t *order = malloc(cap / 2 * sizeof(*order));
	if (!t || !order) {
		free(t);
		free(order);
		return -1;
	}
	memset(t, 0, cap * sizeof(*t));
	struct sacc old = *a;
	a->t = t;
	a->cap = cap;
	for (size_t i = 0; i < a->n; i++) {
		const struct sacc_entry *x = &old.t[old.order[i]];
		size_t h = sacc_slot(a, x->stack_id, x->state);
		while (t[h].first)
			h = (h + 1) & (cap - 1);
		t[h] = *x;
		order[i] = (uint32_t)h;
	}
	free(old.t);
	free(old.order);
	a->order = order;
	return 0;
}

/* Adds sample s; -1 out of memory. */
static inline int sacc_add(struct sacc *a, const struct sonde_sample *s)
{
	if ((a->n + 1) * 2 > a->cap && sacc_grow(a) < 0)
		return -1;
	size_t h = sacc_slot(a, s->stack_id, s->state);
	struct sacc_entry *e;
	for (;; h = (h + 1) & (a->cap - 1)) {
		e = &a->t[h];
		if (!e->first) {
			e->stack_id = s->stack_id;
			e->state = s->state;
			e->first = s->time_ns | SACC_USED;
			a->order[a->n++] = (uint32_t)h;
			break;
		}
		if (e->stack_id == s->stack_id && e->state == s->state)
			break;
	}
	/* as sonde_clock_values: wrap, never overflow UB (an off-CPU
	 * sample's system and wait are 0) */
	e->samples++;
	e->weight += s->weight_ns;
	e->system += s->system_ns;
	e->wait += s->wait_cpu_ns;
	return 0;
}

/* Samples a batch at a time, their table slots prefetched: the misses of
 * a batch overlap instead of following one another. */
struct sbatch {
	struct sonde_sample s[16];
	int n, i;
};

static inline bool next_sample(struct sacc *a, struct sonde_sample_iter *it, struct sbatch *q,
			       struct sonde_sample *out)
{
	if (q->i == q->n) {
		q->i = q->n = 0;
		for (; q->n < 16 && sonde_sample_iter_next(it, &q->s[q->n]); q->n++)
			SACC_PREFETCH(a, q->s[q->n].stack_id, q->s[q->n].state);
		if (!q->n)
			return false;
	}
	*out = q->s[q->i++];
	return true;
}

/* The sums into the evstacks of the current epoch and the model, in the
 * order the ids came (the order in which adding each sample made them);
 * empties the table.  -1 out of memory. */
static int sacc_flush(struct builder *b, uint32_t e, const struct sonde_exp *exp)
{
	struct sacc *a = b->acc;
	for (size_t i = 0; i < a->n; i++) {
		struct sacc_entry *x = &a->t[a->order[i]];
		uint32_t st = evstack(b, e, exp, x->stack_id, x->first & ~SACC_USED, true);
		if (st == UINT32_MAX)
			return -1;
		int64_t v[SONDE_M_CLOCK_N];
		clock_vals((unsigned)x->state, x->samples, x->weight, x->system, x->wait, v);
		struct sonde_evstack *ev = &b->p->ev[st];
		sonde_model_add_some(b->m, ev->mstack, v, SONDE_M_CLOCK_N);
		for (int k = 0; k < SONDE_M_CLOCK_N; k++)
			ev->v[k] = (int64_t)((uint64_t)ev->v[k] + (uint64_t)v[k]);
		memset(x, 0, sizeof(*x));
	}
	a->n = 0;
	return 0;
}


static struct {
	struct sonde_metric_def defs[SONDE_MAX_METRICS];
	int n;
	int base[SONDE_KIND_MAX + 1]; /* a kind's first metric, -1: it has none */
} mtable;
static pthread_once_t mtable_once = PTHREAD_ONCE_INIT;

/* The table of every metric: each kind's (model/kind.h), in kind id
 * order: the clock profile's first (lib/kinds/profile.c, at the
 * SONDE_M_* constants), then the traced kinds'; built once, on first
 * use. */
static void mtable_build(void)
{
	mtable.n = 0;
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_model_kind *k = sonde_kind_module(id)->model;
		mtable.base[id] = -1;
		if (!k || k->nmetrics <= 0)
			continue;
		if (mtable.n + k->nmetrics > SONDE_MAX_METRICS) {
			/* a build that cannot hold its kinds' metrics: say so at once */
			fprintf(stderr, "sonde: the kinds have more than SONDE_MAX_METRICS (%d) metrics\n",
				SONDE_MAX_METRICS);
			abort();
		}
		mtable.base[id] = mtable.n;
		memcpy(&mtable.defs[mtable.n], k->metrics, (size_t)k->nmetrics * sizeof *k->metrics);
		mtable.n += k->nmetrics;
	}
}

const struct sonde_metric_def *sonde_profile_metrics(int *n)
{
	pthread_once(&mtable_once, mtable_build);
	*n = mtable.n;
	return mtable.defs;
}

int sonde_nmetrics(void)
{
	int n;
	sonde_profile_metrics(&n);
	return n;
}

const struct sonde_metric_def *sonde_metric(int i)
{
	int n;
	return &sonde_profile_metrics(&n)[i];
}

int sonde_profile_metric_index(const char *name)
{
	int n;
	const struct sonde_metric_def *d = sonde_profile_metrics(&n);
	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return i;
	return -1;
}

/* The derived metrics (metrics.h, sonde_derived_def): gprofng's, where
 * both parts exist. */
static const struct sonde_derived_def derived[] = {
	{ { "CPI", "Cycles Per Instruction", "CPI", SONDE_UNIT_RATIO }, "cycles", "insts", 1.0 },
	{ { "IPC", "Instructions Per Cycle", "IPC", SONDE_UNIT_RATIO }, "insts", "cycles", 1.0 },
};

const struct sonde_derived_def *sonde_derived_metrics(int *n)
{
	*n = (int)(sizeof derived / sizeof derived[0]);
	return derived;
}

bool sonde_derived_known(const struct sonde_derived_def *d)
{
	return sonde_profile_metric_index(d->num) >= 0 && sonde_profile_metric_index(d->den) >= 0;
}

bool sonde_derived_recorded(const struct sonde_exp *exp, const struct sonde_derived_def *d)
{
	int num = sonde_profile_metric_index(d->num), den = sonde_profile_metric_index(d->den);
	return num >= 0 && den >= 0 && sonde_metric_recorded(exp, num) && sonde_metric_recorded(exp, den);
}

/* The builder while it feeds one kind's events of one experiment. */
struct sonde_model_feed {
	struct builder *b;
	const struct sonde_exp *exp;
	const struct u64map *tidnum;
	const struct sonde_profile_opts *o;
	int kind;		     /* its id (sonde/kinds.h) */
	int base, n;		     /* the kind's metrics in the table */
	int64_t v[SONDE_MAX_METRICS]; /* zero but for the event being added */
	uint32_t cpu;		     /* of the next event (sonde_model_feed_cpu) */
};

void sonde_model_feed_cpu(struct sonde_model_feed *f, uint16_t cpu)
{
	f->cpu = cpu;
}

/* One traced event: its thread's totals always, the model when the thread
 * and time filters pass. */
int sonde_model_feed_event(struct sonde_model_feed *f, size_t index, uint32_t tid, uint64_t time_ns,
			   uint64_t stack_id, const int64_t *kv)
{
	struct builder *b = f->b;
	struct sonde_profile *p = b->p;
	const struct sonde_profile_opts *o = f->o;
	int lo = f->base, hi = f->base + f->n;
	uint32_t ti, cpu = f->cpu;
	f->cpu = SONDE_CPU_UNKNOWN;
	struct sonde_pthread *pt = map_get(f->tidnum, tid, &ti) ? &p->threads[ti] : NULL;
	uint64_t t0 = sonde_exp_info(f->exp)->start_ns;
	uint64_t rel = time_ns >= t0 ? time_ns - t0 : 0;
	if (o && (rel < o->start_ns || (o->end_ns && rel >= o->end_ns)))
		return 0;
	if (!sonde_sample_sel_has(b->ssel, time_ns))
		return 0;
	if (pt && !pt->selected && !b->ncp) { /* as for clock samples */
		if (cpu_selected(b, cpu))
			for (int k = lo; k < hi; k++)
				pt->v[k] = (int64_t)((uint64_t)pt->v[k] + (uint64_t)kv[k - lo]);
		return 0;
	}
	/* Trace stacks have no exact leaf (it is a call site), so their ids
	 * never collide with sample stacks'; id 0 (no stack) is cached too. */
	set_epoch(b, f->exp, time_ns);
	uint32_t st;
	if (b->sh) {
		uint32_t c = shape_ctx(b, tid, time_ns);
		st = c == UINT32_MAX ? UINT32_MAX : evstack_shaped(b, b->exp_index, f->exp, stack_id, time_ns, false, 0, c);
	} else {
		st = evstack(b, b->exp_index, f->exp, stack_id, time_ns, false);
	}
	if (st == UINT32_MAX)
		return -1;
	struct sonde_evstack *ev = &p->ev[st];
	if (ev->excluded)
		return 0;
	memcpy(&f->v[lo], kv, (size_t)f->n * sizeof *kv);
	if ((!pt || pt->selected) && o && (o->index_cpus || o->index_seconds) &&
	    index_add(b, o, cpu, rel, f->v, lo, hi) < 0)
		return -1;
	if (!cpu_selected(b, cpu)) {
		memset(&f->v[lo], 0, (size_t)f->n * sizeof *kv);
		return 0;
	}
	/* A thread's totals pass every filter but the thread selection. */
	if (pt) {
		for (int k = lo; k < hi; k++) /* wrap, never overflow UB */
			pt->v[k] = (int64_t)((uint64_t)pt->v[k] + (uint64_t)kv[k - lo]);
		if (!pt->selected) {
			memset(&f->v[lo], 0, (size_t)f->n * sizeof *kv);
			return 0;
		}
	}
	sonde_model_add_to(b->m, ev->mstack, f->v);
	int rc = 0;
	if (o && o->each) {
		struct sonde_pevent pe = { b->exp_index, st, tid, f->kind, index, time_ns, f->v };
		rc = o->each(o->each_arg, &pe);
	}
	memset(&f->v[lo], 0, (size_t)f->n * sizeof *kv);
	for (int k = lo; k < hi; k++)
		ev->v[k] = (int64_t)((uint64_t)ev->v[k] + (uint64_t)kv[k - lo]);
	return rc;
}

/* The kind whose module has metric (any kind: the clock profile's too),
 * 0 for none. */
static int metric_module(int metric)
{
	int n;
	sonde_profile_metrics(&n);
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_model_kind *k = sonde_kind_module(id)->model;
		if (k && mtable.base[id] >= 0 && metric >= mtable.base[id] && metric < mtable.base[id] + k->nmetrics)
			return id;
	}
	return 0;
}

int sonde_metric_kind(int metric)
{
	int id = metric_module(metric);
	return sonde_kind_modular(id) ? id : 0;
}

bool sonde_metric_recorded(const struct sonde_exp *exp, int m)
{
	int kind = metric_module(m);
	if (!kind)
		return false;
	const struct sonde_model_kind *k = sonde_kind_module(kind)->model;
	/* a traced kind's when the experiment traced it; the clock
	 * profile's by its module alone */
	if (sonde_kind_modular(kind) && !sonde_exp_traced(exp, kind))
		return false;
	return !k->recorded || k->recorded(exp, m - mtable.base[kind]);
}

const char *sonde_kind_default_metrics(int kind, const char **sort)
{
	const struct sonde_kind_module *m = sonde_kind_module(kind);
	if (!m || !m->model || !m->model->default_metrics)
		return NULL;
	if (sort)
		*sort = m->model->sort;
	return m->model->default_metrics;
}

/* The traced kinds' events of one experiment, kind by kind in id order.
 * Returns -1 out of memory. */
static int add_traces(struct builder *b, const struct sonde_exp *exp, const struct u64map *tidnum,
		      const struct sonde_profile_opts *o)
{
	int nm;
	sonde_profile_metrics(&nm);
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_model_kind *k = sonde_kind_module(id)->model;
		if (!k || !k->feed)
			continue;
		struct sonde_model_feed f = { b, exp, tidnum, o, id, mtable.base[id], k->nmetrics, { 0 },
					      SONDE_CPU_UNKNOWN };
		if (k->feed(&f, exp) < 0)
			return -1;
	}
	return 0;
}

static void builder_free_filters(struct builder *b)
{
	free(b->cpusel);
	free(b->cpbuf);
	free(b->fmatch);
	u64map_release(&b->cpumap);
	u64map_release(&b->secmap);
}

int sonde_profile_build(struct sonde_profile *p, const struct sonde_exp *const *exps, size_t nexps,
			const struct sonde_profile_opts *o, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	p->exps = exps;
	p->nexps = nexps;
	struct builder b = { .p = p, .inlines = !(o && (o->no_inlines || o->viewmode == SONDE_SHAPE_MACHINE)), .tailcalls = !(o && o->no_tailcalls),
			     .vmode = o ? o->viewmode : SONDE_SHAPE_USER };
	p->inlines = b.inlines;
	p->tail.enabled = b.tailcalls;
	int selcap = 0;
	bool *tsel = NULL;
	int nmetrics;
	const struct sonde_metric_def *defs = sonde_profile_metrics(&nmetrics);
	p->model = b.m = sonde_model_new(defs, nmetrics);
	p->syms = calloc(nexps ? nexps : 1, sizeof *p->syms);
	b.acc = calloc(1, sizeof *b.acc);
	if (!b.m || !p->syms || !b.acc)
		goto oom;
	selcap = parse_objsel(o ? o->object_select : NULL, &b.objsel, &b.nobjsel);
	if (selcap < 0)
		goto oom;
	p->has_cpus = o && o->index_cpus;
	p->has_seconds = o && o->index_seconds;
	if (o && o->cpu_select && strcmp(o->cpu_select, "all")) {
		if (!(b.cpusel = malloc(SONDE_CPU_SEL_BYTES)))
			goto oom;
		if (sonde_parse_cpu_list(o->cpu_select, b.cpusel, err, errlen) < 0)
			goto fail;
	}
	if (o && sonde_callpath_parse(o->callpath_select, b.cp, &b.ncp, &b.cpbuf, err, errlen) < 0)
		goto fail;
	for (size_t j = 0; j < b.ncp; j++)
		*(b.cp[j].caller ? &b.cp_pair : &b.cp_single) |= 1ull << j;
	/* Every name in an object list must name a load object. */
	for (size_t i = 0; i < b.nobjsel; i++) {
		bool found = false;
		for (size_t e = 0; e < nexps && !found; e++) {
			size_t n;
			const struct sonde_object *obj = sonde_exp_objects(exps[e], &n);
			for (size_t k = 0; k < n && !found; k++)
				found = object_selected(&b.objsel[i], 1, obj[k].path);
		}
		if (!found) {
			snprintf(err, errlen, "no load object '%s' in the experiment", b.objsel[i]);
			goto fail;
		}
	}

	for (size_t e = 0; e < nexps; e++) {
		const struct sonde_exp *exp = exps[e];
		size_t nt;
		const struct sonde_thread *th = sonde_exp_threads(exp, &nt);
		free(tsel);
		tsel = calloc(nt + 1, sizeof *tsel);
		struct sonde_pthread *npt = realloc(p->threads, (p->nthreads + nt + 1) * sizeof *npt);
		if (!tsel || !npt)
			goto oom;
		p->threads = npt;
		if (sonde_parse_list(o ? o->thread_select : NULL, tsel, nt, err, errlen) < 0)
			goto fail;
		struct u64map tidnum = { 0 }; /* tid -> index into p->threads */
		/* the process's own name (its first thread's) names no thread */
		const char *pname = NULL;
		for (size_t i = 0; i < nt; i++)
			if (th[i].tid == sonde_exp_info(exp)->target.pid)
				pname = th[i].name;
		for (size_t i = 0; i < nt; i++) {
			struct sonde_pthread *pt = &p->threads[p->nthreads];
			memset(pt, 0, sizeof *pt);
			pt->exp = (uint32_t)e;
			pt->number = (uint32_t)i + 1;
			pt->tid = th[i].tid;
			pt->name = th[i].name && (!pname || strcmp(th[i].name, pname)) ? th[i].name : NULL;
			pt->selected = tsel[i + 1];
			if (map_put(&tidnum, th[i].tid, (uint32_t)p->nthreads) < 0) {
				u64map_release(&tidnum);
				goto oom;
			}
			p->nthreads++;
		}
		sonde_sample_sel_free(b.ssel);
		if (sonde_sample_sel_new(&b.ssel, exp, o ? o->sample_select : NULL, err, errlen) < 0) {
			u64map_release(&tidnum);
			goto fail;
		}
		b.exp_index = (uint32_t)e;
		b.syms = p->syms[e] = sonde_syms_open(exp);
		if (!b.syms) {
			u64map_release(&tidnum);
			goto oom;
		}
		release_epochs(&b);
		b.nepochs = sonde_exp_map_epochs(exp);
		b.pcfunc = calloc(b.nepochs, sizeof *b.pcfunc);
		b.stacks = calloc(b.nepochs, sizeof *b.stacks);
		b.tailmap = calloc(b.nepochs, sizeof *b.tailmap);
		b.ep = sonde_exp_map_epoch(exp, 0, &b.ep_lo, &b.ep_hi);
		if (!b.pcfunc || !b.stacks || !b.tailmap) {
			u64map_release(&tidnum);
			goto oom;
		}
		b.cur_stacks = &b.stacks[b.ep];
		b.nspans = b.nfl = b.ntails = 0;
		if (shape_begin(&b, exp) < 0) {
			u64map_release(&tidnum);
			goto oom;
		}
		uint64_t t0 = sonde_exp_info(exp)->start_ns;
		struct sonde_sample_iter it;
		struct sonde_sample s;
		uint64_t last_id = 0;
		uint32_t last_stack = UINT32_MAX, last_tid = UINT32_MAX, last_thread = 0;
		uint32_t last_state = 0, last_ctx = 0;
		struct sbatch q = { .n = 0 };
		sonde_sample_iter_init(&it, exp);
		while (next_sample(b.acc, &it, &q, &s)) {
			if (s.tid != last_tid) {
				if (!map_get(&tidnum, s.tid, &last_thread)) {
					u64map_release(&tidnum);
					goto oom; /* every sampled tid is a thread */
				}
				last_tid = s.tid;
			}
			struct sonde_pthread *pt = &p->threads[last_thread];
			int64_t v[SONDE_MAX_METRICS]; /* the clock's here; the rest zeroed for each */
			sonde_clock_values(&s, v);
			uint64_t rel = s.time_ns >= t0 ? s.time_ns - t0 : 0;
			if ((o && (rel < o->start_ns || (o->end_ns && rel >= o->end_ns))) ||
			    !sonde_sample_sel_has(b.ssel, s.time_ns)) {
				p->samples_filtered++;
				continue;
			}
			/* An unselected thread's stacks are resolved only for the
			 * call-path filter: its functions stay out of the model. */
			if (!pt->selected && !b.ncp) {
				if (cpu_selected(&b, s.cpu))
					for (int k = 0; k < SONDE_M_CLOCK_N; k++)
						pt->v[k] = (int64_t)((uint64_t)pt->v[k] + (uint64_t)v[k]);
				p->samples_filtered++;
				continue;
			}
			if (b.nepochs > 1 && (s.time_ns < b.ep_lo || s.time_ns >= b.ep_hi)) {
				if (sacc_flush(&b, (uint32_t)e, exp) < 0) {
					u64map_release(&tidnum);
					goto oom;
				}
				set_epoch(&b, exp, s.time_ns);
				last_stack = UINT32_MAX; /* the same id may be another stack now */
			}
			/* The sums per stack id, unless a filter or the callback
			 * needs each sample's evstack (call path, CPU, the index
			 * views, an unselected thread's totals). */
			if (!(o && o->each) && pt->selected && !b.ncp && !b.cpusel && !b.sh &&
			    !(o && (o->index_cpus || o->index_seconds))) {
				for (int k = 0; k < SONDE_M_CLOCK_N; k++) /* wrap, never overflow UB */
					pt->v[k] = (int64_t)((uint64_t)pt->v[k] + (uint64_t)v[k]);
				if (sacc_add(b.acc, &s) < 0) {
					u64map_release(&tidnum);
					goto oom;
				}
				p->samples_used++;
				continue;
			}
			memset(v + SONDE_M_CLOCK_N, 0, sizeof(v) - SONDE_M_CLOCK_N * sizeof(*v));
			if (b.sh) {
				/* shaped: the stack depends on the sample's state and context too */
				uint32_t c = shape_ctx(&b, s.tid, s.time_ns);
				if (c == UINT32_MAX) {
					u64map_release(&tidnum);
					goto oom;
				}
				if (last_stack == UINT32_MAX || s.stack_id != last_id || s.state != last_state ||
				    c != last_ctx) {
					last_stack = evstack_shaped(&b, (uint32_t)e, exp, s.stack_id, s.time_ns, true,
								    s.state, c);
					if (last_stack == UINT32_MAX) {
						u64map_release(&tidnum);
						goto oom;
					}
					last_id = s.stack_id;
					last_state = s.state;
					last_ctx = c;
				}
			} else if (last_stack == UINT32_MAX || s.stack_id != last_id) {
				last_stack = evstack(&b, (uint32_t)e, exp, s.stack_id, s.time_ns, true);
				if (last_stack == UINT32_MAX) {
					u64map_release(&tidnum);
					goto oom;
				}
				last_id = s.stack_id;
			}
			struct sonde_evstack *ev = &p->ev[last_stack];
			if (ev->excluded) {
				p->samples_filtered++;
				continue;
			}
			if (pt->selected && o && (o->index_cpus || o->index_seconds) &&
			    index_add(&b, o, s.cpu, rel, v, 0, SONDE_M_CLOCK_N) < 0) {
				u64map_release(&tidnum);
				goto oom;
			}
			if (!cpu_selected(&b, s.cpu)) {
				p->samples_filtered++;
				continue;
			}
			/* A thread's totals pass every filter but the thread
			 * selection (-threads shows the threads not selected too). */
			for (int k = 0; k < SONDE_M_CLOCK_N; k++) /* wrap, never overflow UB */
				pt->v[k] = (int64_t)((uint64_t)pt->v[k] + (uint64_t)v[k]);
			if (!pt->selected) {
				p->samples_filtered++;
				continue;
			}
			sonde_model_add_some(b.m, ev->mstack, v, SONDE_M_CLOCK_N);
			for (int k = 0; k < SONDE_M_CLOCK_N; k++)
				ev->v[k] = (int64_t)((uint64_t)ev->v[k] + (uint64_t)v[k]);
			p->samples_used++;
			if (o && o->each) {
				struct sonde_pevent pe = { (uint32_t)e, last_stack, s.tid, 0, 0, s.time_ns, v };
				if (o->each(o->each_arg, &pe) < 0) {
					u64map_release(&tidnum);
					goto oom;
				}
			}
		}
		if (sacc_flush(&b, (uint32_t)e, exp) < 0) {
			u64map_release(&tidnum);
			goto oom;
		}
		int tr = add_traces(&b, exp, &tidnum, o);
		u64map_release(&tidnum);
		if (tr < 0)
			goto oom;
	}
	/* Every name of the call-path filter names a function: one on a
	 * stack, or one the symbol tables know (which has no events). */
	for (size_t j = 0; j < b.ncp; j++)
		for (int part = 0; part < 2; part++) {
			const char *name = part ? b.cp[j].caller : b.cp[j].func;
			bool known = !name || (b.seen >> (part * 32 + (int)j) & 1);
			for (size_t e = 0; e < nexps && !known; e++) {
				const struct sonde_func *sf;
				known = p->syms[e] && sonde_syms_find(p->syms[e], name, &sf, 1) > 0;
			}
			if (!known) {
				snprintf(err, errlen, "call-path filter: no function '%s' in the experiments", name);
				goto fail;
			}
		}
	if (p->ncpus)
		qsort(p->cpus, p->ncpus, sizeof *p->cpus, cmp_pcpu);
	if (p->nseconds)
		qsort(p->seconds, p->nseconds, sizeof *p->seconds, cmp_psecond);
	if (sonde_model_finish(b.m) < 0)
		goto oom;
	for (size_t i = 0; i < p->nev; i++) {
		const struct sonde_evstack *ev = &p->ev[i];
		uint64_t n = (uint64_t)ev->v[SONDE_M_SAMPLES];
		if (ev->excluded)
			continue; /* (the call-path filter's: not in the profile) */
		if (ev->tail_restored) {
			p->tail.stacks++;
			p->tail.frames += ev->tail_restored;
			p->tail.samples += n;
		}
		if (ev->tail_ambiguous) {
			p->tail.amb_stacks++;
			p->tail.amb_samples += n;
		}
	}
	/* A derived metric exists when one experiment recorded both its parts. */
	for (size_t d = 0; d < sizeof derived / sizeof derived[0]; d++)
		for (size_t e = 0; e < nexps; e++)
			if (sonde_derived_recorded(exps[e], &derived[d])) {
				sonde_model_add_derived(b.m, &derived[d]);
				break;
			}
	shape_end(&b);
	release_epochs(&b);
	free(b.frames);
	free(b.spans);
	free(b.fl);
	free(b.tails);
	free(tsel);
	free_objsel(b.objsel, selcap);
	sonde_sample_sel_free(b.ssel);
	builder_free_filters(&b);
	sacc_free(b.acc);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	shape_end(&b);
	release_epochs(&b);
	free(b.frames);
	free(b.spans);
	free(b.fl);
	free(b.tails);
	free(tsel);
	free_objsel(b.objsel, selcap);
	sonde_sample_sel_free(b.ssel);
	builder_free_filters(&b);
	sacc_free(b.acc);
	sonde_profile_release(p);
	return -1;
}

void sonde_profile_release(struct sonde_profile *p)
{
	sonde_model_free(p->model);
	for (size_t i = 0; p->syms && i < p->nexps; i++)
		if (p->syms[i])
			sonde_syms_close(p->syms[i]);
	free(p->syms);
	free(p->threads);
	free(p->ev);
	free(p->tailmarks);
	free(p->cpus);
	free(p->seconds);
	memset(p, 0, sizeof *p);
}
