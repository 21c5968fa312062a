/*
 * The tracing views of `sonde print` (see view.h): -leaks, -allocs,
 * -heapstat, -io, -iostacks and -sync, read straight from the traced
 * events of the experiments (lib/reader/experiment.h), not from the metrics
 * model: they group events by allocation stack, file or lock object.
 *
 * Stacks are named with the symbol layer as the other views name them
 * (lib/model/profile.c): every frame of a trace stack is a return address (the
 * leaf is the call site of the traced function), the collector's own
 * frames are folded away, and a missing stack is "<no stack>".
 *
 * Groups are per experiment (stack ids and lock addresses mean nothing
 * across processes); files are merged across experiments by name.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "base/u64map.h"
#include "views/view.h"
#include "views/view_table.h"
#include "views/view_common.h"

#define TOTAL_NAME "<Total>"
#define IOSTACKS_TOP 20

/* ---- checks ------------------------------------------------------------------- */

/* Whether e has data of traced kind: its file, or events. */
static bool has_kind(const struct sonde_exp *e, int kind)
{
	return sonde_exp_traced(e, kind) || sonde_exp_kind_events(e, kind) != 0;
}

int sonde_view_trace_check(const struct sonde_exp *const *exps, const char *const *names, size_t n,
			   int kind, char *err, size_t errlen)
{
	const struct sonde_kind_desc *d = sonde_kind_modular(kind) ? sonde_kind_desc(kind) : NULL;

	if (!d) {
		snprintf(err, errlen, "no view for data kind %d", kind);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (has_kind(exps[i], kind))
			return 0;
	char how[64];

	/* a kind the collector records without an option of its own (OpenMP
	 * regions, with clock profiling of an OpenMP program) */
	if (d->opt)
		snprintf(how, sizeof(how), "collect with -%c on", d->opt);
	else
		snprintf(how, sizeof(how), "recorded with clock profiling");
	if (n == 1)
		snprintf(err, errlen, "%s has no %s data (%s)",
			 names && names[0] ? names[0] : sonde_exp_info(exps[0])->name, d->title, how);
	else
		snprintf(err, errlen, "none of the %zu experiments has %s data (%s)", n, d->title, how);
	return -1;
}

/* ---- helpers ------------------------------------------------------------------ */

static int oom(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Sums of values read from the trace (any 64-bit value a damaged file
 * holds) wrap around, as the metrics engine's do, never overflow. */
static inline void add_wrap(int64_t *x, int64_t v)
{
	*x = (int64_t)((uint64_t)*x + (uint64_t)v);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static uint64_t rel_time(const struct sonde_exp *e, uint64_t t)
{
	uint64_t t0 = sonde_exp_info(e)->start_ns;

	return t >= t0 ? t - t0 : 0;
}

/* A group of events: one allocation stack, file, I/O stack or object. */
#define NV 12
struct grp {
	uint32_t exp;
	uint64_t key;	  /* stack id, object, file id */
	uint64_t time_ns; /* of its first event (for symbol lookups) */
	size_t order;	  /* creation order: the last tie-break */
	int64_t v[NV];
	uint32_t funcs; /* sync: bit per enum sonde_sync_func */
	const char *name;
	char *stack; /* owned: the stack's function names, leaf first, '\n'-separated */
};

struct grouping {
	struct grp *v;
	size_t n, cap;
	struct u64map map[2]; /* key -> index, for the current experiment */
	uint32_t exp;
};

static void grouping_release(struct grouping *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].stack);
	free(g->v);
	u64map_release(&g->map[0]);
	u64map_release(&g->map[1]);
	memset(g, 0, sizeof(*g));
}

/* The group of (exp, key, epoch) in map `which`, made when new; NULL
 * when out of memory.  Experiments must come in order.  epoch: the mapping
 * epoch of a stack group's events (sonde_exp_map_epoch), 0 for others: a
 * stack id names different functions in different epochs when a library
 * was unloaded and another loaded at its address, so its events are
 * grouped (and named) per epoch.  The map key mixes the epoch into the
 * stack id, itself a 64-bit hash of the frames. */
static struct grp *group(struct grouping *g, uint32_t exp, int which, uint64_t key, uint32_t epoch,
			 uint64_t time_ns)
{
	if (exp != g->exp) {
		u64map_release(&g->map[0]);
		u64map_release(&g->map[1]);
		g->exp = exp;
	}
	uint64_t mkey = epoch ? key ^ ((uint64_t)epoch * 0x9e3779b97f4a7c15ull) : key;
	long i = u64map_get(&g->map[which], mkey);

	if (i >= 0)
		return &g->v[i];
	if (sonde_grow(&g->v, &g->cap, g->n + 1, sizeof(*g->v), 64))
		return NULL;
	if (u64map_put(&g->map[which], mkey, (uint32_t)g->n) < 0)
		return NULL;
	struct grp *r = &g->v[g->n];

	memset(r, 0, sizeof(*r));
	r->exp = exp;
	r->key = key;
	r->time_ns = time_ns;
	r->order = g->n++;
	return r;
}

/* Sorts by v[a], then v[b] (both descending; -1: none), then creation. */
struct grpsort {
	int a, b;
};

static int cmp_grp(const void *x, const void *y, void *arg)
{
	const struct grp *p = x, *q = y;
	const struct grpsort *s = arg;

	if (s->a >= 0 && p->v[s->a] != q->v[s->a])
		return p->v[s->a] > q->v[s->a] ? -1 : 1;
	if (s->b >= 0 && p->v[s->b] != q->v[s->b])
		return p->v[s->b] > q->v[s->b] ? -1 : 1;
	return p->order < q->order ? -1 : p->order > q->order;
}

static void sort_groups(struct grouping *g, int a, int b)
{
	struct grpsort s = { a, b };

	if (g->n > 1)
		qsort_r(g->v, g->n, sizeof(*g->v), cmp_grp, &s);
}

/* ---- stacks as function names ------------------------------------------------ */

struct namer {
	const struct sonde_exp *const *exps;
	struct sonde_syms **syms; /* per experiment, opened at first use */
	size_t nexps;
	enum sonde_namefmt names;
	const char **frames;
	size_t cap;
};

static int namer_init(struct namer *nm, const struct sonde_exp *const *exps, size_t n,
		      enum sonde_namefmt names)
{
	memset(nm, 0, sizeof(*nm));
	nm->exps = exps;
	nm->nexps = n;
	nm->names = names;
	nm->syms = calloc(n ? n : 1, sizeof(*nm->syms));
	return nm->syms ? 0 : -1;
}

static void namer_release(struct namer *nm)
{
	for (size_t i = 0; nm->syms && i < nm->nexps; i++)
		sonde_syms_close(nm->syms[i]);
	free(nm->syms);
	free(nm->frames);
	memset(nm, 0, sizeof(*nm));
}

static bool collector_object(const struct sonde_func *sf)
{
	return sf->object && sf->object->sonde;
}

static const char *func_name(const struct sonde_func *sf, enum sonde_namefmt names)
{
	return sonde_view_symname(sf, names);
}

/*
 * The function names of a stack, leaf first, in nm->frames (valid until
 * the next call); returns their number (at least 1: "<no stack>"), or -1
 * when out of memory.
 */
static long stack_names(struct namer *nm, uint32_t exp, uint64_t stack_id, uint64_t time_ns)
{
	const struct sonde_exp *e = nm->exps[exp];
	const struct sonde_stack *st = stack_id ? sonde_exp_stack(e, stack_id) : NULL;
	size_t need = st && st->depth ? st->depth + 1 : 1, d = 0;

	if (sonde_grow(&nm->frames, &nm->cap, need, sizeof(*nm->frames), 64))
		return -1;
	if (st && st->depth && !nm->syms[exp] && !(nm->syms[exp] = sonde_syms_open(e)))
		return -1;
	for (size_t k = 0; st && k < st->depth; k++) {
		/* the leaf is a call site: a return address like the others */
		const struct sonde_func *sf = sonde_syms_frame(nm->syms[exp], &st->frame[k], time_ns);

		if (collector_object(sf))
			continue;
		nm->frames[d++] = func_name(sf, nm->names);
	}
	if (!d)
		nm->frames[d++] = "<no stack>";
	if (st && st->depth && (st->flags & SONDE_STACK_TRUNCATED))
		nm->frames[d++] = SONDE_TRUNCATED_STACK; /* its callers are unknown (profile.c) */
	return (long)d;
}

/* The names of a stack joined by '\n' (malloc'ed), NULL out of memory. */
static char *stack_joined(struct namer *nm, uint32_t exp, uint64_t stack_id, uint64_t time_ns)
{
	long d = stack_names(nm, exp, stack_id, time_ns);
	size_t len = 1;

	if (d < 0)
		return NULL;
	for (long k = 0; k < d; k++)
		len += strlen(nm->frames[k]) + 1;
	char *s = malloc(len), *p = s;

	if (!s)
		return NULL;
	*p = '\0';
	for (long k = 0; k < d; k++)
		p += sprintf(p, "%s%s", k ? "\n" : "", nm->frames[k]);
	return s;
}

static int cmp_stack(const void *x, const void *y)
{
	const struct grp *p = x, *q = y;
	int c = strcmp(p->stack, q->stack);

	if (c)
		return c;
	return p->order < q->order ? -1 : p->order > q->order;
}

/*
 * Names every group's stack (key: a stack id) and merges the groups whose
 * stacks read the same (call sites in the same functions, the same code
 * in several experiments): what the view shows is function names, as the
 * other views add up per function.  -1 out of memory.
 */
static int merge_stacks(struct grouping *g, struct namer *nm)
{
	for (size_t i = 0; i < g->n; i++)
		if (!(g->v[i].stack = stack_joined(nm, g->v[i].exp, g->v[i].key, g->v[i].time_ns)))
			return -1;
	if (g->n > 1)
		qsort(g->v, g->n, sizeof(*g->v), cmp_stack);
	size_t m = 0;

	for (size_t i = 0; i < g->n; i++) {
		struct grp *last = m ? &g->v[m - 1] : NULL;

		if (last && !strcmp(last->stack, g->v[i].stack)) {
			for (int k = 0; k < NV; k++)
				add_wrap(&last->v[k], g->v[i].v[k]);
			if (g->v[i].order < last->order)
				last->order = g->v[i].order;
			free(g->v[i].stack);
			continue;
		}
		g->v[m++] = g->v[i];
	}
	g->n = m;
	return 0;
}

/* Text: the frames one a line, indented. */
static void text_stack(FILE *f, const void *frames)
{
	for (const char *c = frames; *c;) {
		const char *e = strchr(c, '\n');
		int len = e ? (int)(e - c) : (int)strlen(c);

		fprintf(f, "        %.*s\n", len, c);
		c += len + (e ? 1 : 0);
	}
}

/* ---- -leaks and -allocs ------------------------------------------------------- */

enum { H_COUNT, H_BYTES };

/* -sample_select: one selection per experiment (NULL entries: all).
 * NULL out of memory. */
static struct sonde_sample_sel **sels_new(const struct sonde_exp *const *exps, size_t n,
					  const struct sonde_view_opts *o)
{
	struct sonde_sample_sel **v = calloc(n ? n : 1, sizeof(*v));
	char err[256];

	for (size_t e = 0; v && e < n; e++)
		if (sonde_sample_sel_new(&v[e], exps[e], o->sample_select, err, sizeof(err)) < 0) {
			while (e-- > 0)
				sonde_sample_sel_free(v[e]);
			free(v);
			return NULL;
		}
	return v;
}

static void sels_free(struct sonde_sample_sel **v, size_t n)
{
	for (size_t e = 0; v && e < n; e++)
		sonde_sample_sel_free(v[e]);
	free(v);
}

/* The end of a view over grouped events: what it holds released (nm, t:
 * NULL when it has none), then its output finished, or the out-of-memory
 * error when !ok. */
/* -time: whether time t of exp is in the window (o->start_ns, o->end_ns). */
static bool in_window(const struct sonde_view_opts *o, const struct sonde_exp *exp, uint64_t t)
{
	uint64_t t0 = sonde_exp_info(exp)->start_ns, rel = t >= t0 ? t - t0 : 0;

	return rel >= o->start_ns && (!o->end_ns || rel < o->end_ns);
}

static int view_end(struct sonde_sample_sel **sels, size_t n, struct grouping *g, struct namer *nm,
		    struct vt_table *t, FILE *f, bool ok, char *err, size_t errlen)
{
	sels_free(sels, n);
	grouping_release(g);
	if (nm)
		namer_release(nm);
	if (t)
		vt_release(t);
	return ok ? vw_finish(f, err, errlen) : oom(err, errlen);
}

/* The group of heap event i of experiment e when it is an allocation that
 * the heap views count (made, in the selected samples and the time
 * window), else NULL; *oom when memory runs out. */
static struct grp *alloc_group(struct grouping *g, const struct sonde_exp *const *exps, size_t e,
			       const struct sonde_heap_event *he, const struct sonde_sample_sel *sel,
			       const struct sonde_view_opts *o, bool *oom)
{
	*oom = false;
	if (!(he->flags & SONDE_HEAPF_ALLOC) || (he->flags & SONDE_HEAPF_FAILED) ||
	    !sonde_sample_sel_has(sel, he->time_ns) || !in_window(o, exps[e], he->time_ns))
		return NULL;
	struct grp *r = group(g, (uint32_t)e, 0, he->stack_id, sonde_exp_map_epoch(exps[e], he->time_ns, NULL, NULL),
			      he->time_ns);

	*oom = r == NULL;
	return r;
}

/* The end of a view of stacks: how many were not shown, and the document's. */
static void stacks_end(struct sonde_emit *em, size_t shown, size_t n)
{
	if (shown < n)
		em_text(em, "\n(%zu more %s; -limit 0 shows all)\n", n - shown, plural(n - shown, "stack", "stacks"));
	em_end(em);
	em_end_doc(em);
}

int sonde_view_heap_stacks(FILE *f, const struct sonde_exp *const *exps, size_t n, bool leaks,
			   const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);

	if (!sels)
		return oom(err, errlen);
	struct grouping g = { 0 };
	struct namer nm;
	uint64_t total_n = 0, total_b = 0;
	const char *one = leaks ? "leak" : "allocation", *many = leaks ? "leaks" : "allocations";
	const char *title = leaks ? "Leak" : "Allocation";

	if (namer_init(&nm, exps, n, o->names) < 0) {
		sels_free(sels, n);
		return oom(err, errlen);
	}
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_heap_event *he = sonde_exp_heap_events(exps[e], &ne);
		bool *leaked = NULL;
		uint64_t *left = NULL;

		if (!he || !ne)
			continue;
		if (leaks && (!(leaked = malloc(ne * sizeof(*leaked))) || !(left = malloc(ne * sizeof(*left))) ||
			      sonde_heap_leaks_left(exps[e], leaked, left, NULL) < 0)) {
			free(leaked);
			free(left);
			goto nomem;
		}
		for (size_t i = 0; i < ne; i++) {
			bool oom;
			struct grp *r = !leaks || leaked[i] ? alloc_group(&g, exps, e, &he[i], sels[e], o, &oom) : NULL;

			if (!r && !oom)
				continue;
			if (!r) {
				free(leaked);
				free(left);
				goto nomem;
			}
			/* a leak is what is left: a mapping unmapped in part, the rest */
			uint64_t bytes = leaks ? left[i] : he[i].bytes;

			r->v[H_COUNT]++;
			add_wrap(&r->v[H_BYTES], (int64_t)bytes);
			total_n++;
			total_b += bytes;
		}
		free(leaked);
		free(left);
	}
	if (merge_stacks(&g, &nm) < 0)
		goto nomem;
	sort_groups(&g, H_BYTES, H_COUNT);
	size_t shown = o->limit && o->limit < g.n ? o->limit : g.n;

	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "%" PRIu64 " %s, %" PRIu64 " bytes\n", total_n, plural(total_n, one, many), total_b);
	em_csv(&em, "%s,bytes,stack\n", many);
	em_csv(&em, "%" PRIu64 ",%" PRIu64 ",%s\n", total_n, total_b, TOTAL_NAME);
	em_obj(&em, NULL);
	em_s(&em, "view", leaks ? "leaks" : "allocs");
	em_u(&em, many, total_n);
	em_u(&em, "bytes", total_b);
	em_u(&em, "stacks", g.n);
	em_arr(&em, "rows");
	for (size_t i = 0; i < shown; i++) {
		const struct grp *r = &g.v[i];

		em_text(&em, "\n%s #%zu: %" PRId64 " %s, %" PRId64 " bytes (%.2f%%)\n", title, i + 1, r->v[H_COUNT],
			plural((uint64_t)r->v[H_COUNT], one, many), r->v[H_BYTES],
			total_b ? 100.0 * (double)r->v[H_BYTES] / (double)total_b : 0.0);
		em_text_with(&em, text_stack, r->stack);
		em_row(&em);
		em_i(&em, many, r->v[H_COUNT]);
		em_i(&em, "bytes", r->v[H_BYTES]);
		em_lines(&em, "stack", r->stack, ";");
		em_row_end(&em);
	}
	stacks_end(&em, shown, g.n);
	return view_end(sels, n, &g, &nm, NULL, f, true, err, errlen);
nomem:
	return view_end(sels, n, &g, &nm, NULL, f, false, err, errlen);
}

/* ---- -heap_peak and -heap_temporary (heaptrack's views) ------------------------ */

enum { HP_PEAK, HP_BLOCKS, HP_CALLS, HP_TEMP };

/* Drops the groups whose v[k] is 0 (stacks with no part in the view). */
static void keep_nonzero(struct grouping *g, int k)
{
	size_t m = 0;

	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i].v[k]) {
			g->v[m++] = g->v[i];
			continue;
		}
		free(g->v[i].stack);
	}
	g->n = m;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/*
 * Both group every allocation by stack (its calls, as heaptrack's "over N
 * calls"), peak: with the bytes and blocks of it live at the peak of its
 * experiment; temporary: with its temporary allocations.
 */
static int heaptrack_view(FILE *f, const struct sonde_exp *const *exps, size_t n, bool peak,
			  const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);

	if (!sels)
		return oom(err, errlen);
	struct grouping g = { 0 };
	struct namer nm;
	uint64_t total = 0, calls = 0, peak_bytes = 0, peak_ns = 0, nexp = 0;
	const char *peak_exp = NULL;
	int key = peak ? HP_PEAK : HP_TEMP;

	if (namer_init(&nm, exps, n, o->names) < 0) {
		sels_free(sels, n);
		return oom(err, errlen);
	}
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_heap_event *he = sonde_exp_heap_events(exps[e], &ne);
		uint64_t *left = NULL;
		bool *temp = NULL;
		struct sonde_heap_match m;

		if (!he || !ne)
			continue;
		nexp++;
		if (peak ? !(left = malloc(ne * sizeof(*left))) || sonde_heap_peak_left(exps[e], left, &m) < 0
			 : !(temp = malloc(ne * sizeof(*temp))) || sonde_heap_temporary(exps[e], temp) < 0) {
			free(left);
			free(temp);
			goto nomem;
		}
		if (peak && (m.peak_bytes > peak_bytes || !peak_exp)) {
			peak_bytes = m.peak_bytes;
			peak_ns = rel_time(exps[e], m.peak_ns);
			peak_exp = sonde_exp_info(exps[e])->name;
		}
		for (size_t i = 0; i < ne; i++) {
			bool oom;
			struct grp *r = alloc_group(&g, exps, e, &he[i], sels[e], o, &oom);

			if (!r && !oom)
				continue;
			if (!r) {
				free(left);
				free(temp);
				goto nomem;
			}
			r->v[HP_CALLS]++;
			calls++;
			if (peak && left[i]) {
				add_wrap(&r->v[HP_PEAK], (int64_t)left[i]);
				r->v[HP_BLOCKS]++;
				total += left[i];
			} else if (!peak && temp[i]) {
				r->v[HP_TEMP]++;
				total++;
			}
		}
		free(left);
		free(temp);
	}
	if (merge_stacks(&g, &nm) < 0)
		goto nomem;
	keep_nonzero(&g, key);
	sort_groups(&g, key, HP_CALLS);
	size_t shown = o->limit && o->limit < g.n ? o->limit : g.n;
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	if (peak) {
		em_text(&em, "Peak of the live heap: %" PRIu64 " bytes", peak_bytes);
		if (peak_bytes)
			em_text(&em, " at %.3f s%s%s", (double)peak_ns / 1e9, nexp > 1 ? " in " : "",
				nexp > 1 ? peak_exp : "");
		em_text(&em, "; %" PRIu64 " bytes of it allocated by %zu %s%s\n", total, g.n,
			plural(g.n, "stack", "stacks"),
			nexp > 1 ? " (each process's own peak, added together)" : "");
		em_csv(&em, "bytes,blocks,allocations,stack\n");
		em_csv(&em, "%" PRIu64 ",,%" PRIu64 ",%s\n", total, calls, TOTAL_NAME);
	} else {
		em_text(&em, "%" PRIu64 " temporary %s of %" PRIu64 " (%.2f%%)\n", total,
			plural(total, "allocation", "allocations"), calls, pct(total, calls));
		em_csv(&em, "temporary,allocations,stack\n");
		em_csv(&em, "%" PRIu64 ",%" PRIu64 ",%s\n", total, calls, TOTAL_NAME);
	}
	em_obj(&em, NULL);
	em_s(&em, "view", peak ? "heap_peak" : "heap_temporary");
	if (peak) {
		em_u(&em, "peak_bytes", peak_bytes);
		em_u(&em, "peak_ns", peak_ns);
		em_u(&em, "bytes", total);
	} else {
		em_u(&em, "temporary", total);
	}
	em_u(&em, "allocations", calls);
	em_u(&em, "stacks", g.n);
	em_arr(&em, "rows");
	for (size_t i = 0; i < shown; i++) {
		const struct grp *r = &g.v[i];

		if (peak)
			em_text(&em, "\nPeak #%zu: %" PRId64 " bytes (%.2f%%) in %" PRId64 " %s, of %" PRId64
				     " %s\n",
				i + 1, r->v[HP_PEAK], pct((uint64_t)r->v[HP_PEAK], peak_bytes), r->v[HP_BLOCKS],
				plural((uint64_t)r->v[HP_BLOCKS], "block", "blocks"), r->v[HP_CALLS],
				plural((uint64_t)r->v[HP_CALLS], "allocation", "allocations"));
		else
			em_text(&em, "\nTemporary #%zu: %" PRId64 " of %" PRId64 " %s (%.2f%%)\n", i + 1,
				r->v[HP_TEMP], r->v[HP_CALLS], plural((uint64_t)r->v[HP_CALLS], "allocation", "allocations"),
				pct((uint64_t)r->v[HP_TEMP], (uint64_t)r->v[HP_CALLS]));
		em_text_with(&em, text_stack, r->stack);
		em_row(&em);
		if (peak) {
			em_i(&em, "bytes", r->v[HP_PEAK]);
			em_i(&em, "blocks", r->v[HP_BLOCKS]);
		} else {
			em_i(&em, "temporary", r->v[HP_TEMP]);
		}
		em_i(&em, "allocations", r->v[HP_CALLS]);
		em_lines(&em, "stack", r->stack, ";");
		em_row_end(&em);
	}
	stacks_end(&em, shown, g.n);
	return view_end(sels, n, &g, &nm, NULL, f, true, err, errlen);
nomem:
	return view_end(sels, n, &g, &nm, NULL, f, false, err, errlen);
}

int sonde_view_heap_peak(FILE *f, const struct sonde_exp *const *exps, size_t n,
			 const struct sonde_view_opts *o, char *err, size_t errlen)
{
	return heaptrack_view(f, exps, n, true, o, err, errlen);
}

int sonde_view_heap_temporary(FILE *f, const struct sonde_exp *const *exps, size_t n,
			      const struct sonde_view_opts *o, char *err, size_t errlen)
{
	return heaptrack_view(f, exps, n, false, o, err, errlen);
}

/* ---- -heap_timeline ------------------------------------------------------------- */

#define TL_ROWS 40 /* at most, as -overview's timeline */

struct tl_bucket {
	uint64_t allocs, bytes, frees, live, max_live; /* live: at its end */
};

struct tl_walk {
	uint64_t t0, width, nb;
	struct tl_bucket *b;
	uint64_t live, last; /* the live bytes after the last event, its bucket */
};

static void tl_each(void *arg, const struct sonde_heap_event *e, uint64_t live)
{
	struct tl_walk *w = arg;
	uint64_t k = e->time_ns > w->t0 ? (e->time_ns - w->t0) / w->width : 0;

	if (k >= w->nb)
		k = w->nb - 1;
	/* the buckets without events between two that have some hold
	 * what was live */
	for (uint64_t j = w->last + 1; j <= k && j < w->nb; j++)
		w->b[j].live = w->b[j].max_live = w->live;
	if (k > w->last)
		w->last = k;
	struct tl_bucket *b = &w->b[k];

	if (!(e->flags & SONDE_HEAPF_FAILED)) {
		if (e->flags & SONDE_HEAPF_ALLOC) {
			b->allocs++;
			b->bytes += e->bytes;
		} else if (e->flags & SONDE_HEAPF_FREE) {
			b->frees++;
		}
	}
	b->live = live;
	if (live > b->max_live)
		b->max_live = live;
	w->live = live;
}

/* A bucket width of 1, 2 or 5 times a power of ten ns, at least the
 * tracing clock's millisecond, that puts span into TL_ROWS buckets. */
static uint64_t tl_width(uint64_t span)
{
	static const uint64_t steps[] = { 1, 2, 5 };

	for (uint64_t p = 1000000;; p *= 10)
		for (int i = 0; i < 3; i++)
			if (span / (steps[i] * p) < TL_ROWS || p >= UINT64_MAX / 50)
				return steps[i] * p;
}

int sonde_view_heap_timeline(FILE *f, const struct sonde_exp *const *exps, size_t n,
			     const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_emit em;
	size_t nexp = 0;

	em_init(&em, f, o->mode);
	em_csv(&em, "experiment,start_ns,end_ns,allocations,bytes,frees,live_bytes,max_live_bytes\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "heap_timeline");
	em_arr(&em, "experiments");
	for (size_t e = 0; e < n; e++) {
		const struct sonde_exp_info *in = sonde_exp_info(exps[e]);
		struct sonde_heap_match m;
		struct tl_walk w = { 0 };

		if (!sonde_exp_heap_count(exps[e]))
			continue;
		w.t0 = in->start_ns;
		uint64_t span = in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0;

		w.width = tl_width(span);
		w.nb = span / w.width + 1;
		if (!(w.b = calloc(w.nb, sizeof(*w.b))))
			return oom(err, errlen);
		if (sonde_heap_walk(exps[e], tl_each, &w, &m) < 0) {
			free(w.b);
			return oom(err, errlen);
		}
		for (uint64_t j = w.last + 1; j < w.nb; j++)
			w.b[j].live = w.b[j].max_live = w.live;
		em_text(&em, "%sLive heap of %s over time (every %.3f s): peak %" PRIu64 " bytes at %.3f s\n\n",
			nexp ? "\n" : "", in->name, (double)w.width / 1e9, m.peak_bytes,
			(double)rel_time(exps[e], m.peak_ns) / 1e9);
		em_text(&em, "%10s  %10s  %12s  %14s  %10s  %14s  %14s\n", "Start (s)", "End (s)", "Allocations",
			"Bytes", "Frees", "Live Bytes", "Max Live Bytes");
		em_obj(&em, NULL);
		em_s(&em, "experiment", in->name);
		em_u(&em, "bucket_ns", w.width);
		em_u(&em, "peak_bytes", m.peak_bytes);
		em_u(&em, "peak_ns", rel_time(exps[e], m.peak_ns));
		em_arr(&em, "rows");
		for (uint64_t j = 0; j < w.nb; j++) {
			const struct tl_bucket *b = &w.b[j];
			uint64_t lo = j * w.width, hi = lo + w.width;

			em_text(&em, "%10.3f  %10.3f  %12" PRIu64 "  %14" PRIu64 "  %10" PRIu64 "  %14" PRIu64
				     "  %14" PRIu64 "\n",
				(double)lo / 1e9, (double)hi / 1e9, b->allocs, b->bytes, b->frees, b->live,
				b->max_live);
			em_row(&em);
			em_s_csv(&em, "experiment", in->name);
			em_u(&em, "start_ns", lo);
			em_u(&em, "end_ns", hi);
			em_u(&em, "allocations", b->allocs);
			em_u(&em, "bytes", b->bytes);
			em_u(&em, "frees", b->frees);
			em_u(&em, "live_bytes", b->live);
			em_u(&em, "max_live_bytes", b->max_live);
			em_row_end(&em);
		}
		em_end(&em);
		em_end(&em);
		free(w.b);
		nexp++;
	}
	if (!nexp)
		em_text(&em, "No heap events\n");
	em_end(&em);
	em_end_doc(&em);
	return vw_finish(f, err, errlen);
}

/* ---- -heapstat ------------------------------------------------------------------ */

#define NBUCKETS SONDE_HEAP_NBUCKETS

struct heapstat {
	uint64_t allocs, bytes, leaks, leaked, frees, unmatched, failed, temporary;
	uint64_t peak, peak_ns; /* peak_ns: since its experiment's start */
	const char *peak_exp;
	uint64_t largest, smallest; /* smallest: UINT64_MAX without allocations */
	uint64_t hcount[NBUCKETS], hbytes[NBUCKETS];
};

static const struct {
	const char *key, *label;
	size_t off;
} hs_rows[] = {
#define S(k, l, f) { k, l, offsetof(struct heapstat, f) }
	S("allocations", "Allocations", allocs),
	S("bytes", "Bytes Allocated", bytes),
	S("leaks", "Leaks", leaks),
	S("leaked_bytes", "Bytes Leaked", leaked),
	S("frees", "Frees", frees),
	S("unmatched_frees", "Unmatched Frees", unmatched),
	S("failed", "Failed Allocations", failed),
	S("peak_bytes", "Peak Live Bytes", peak),
	S("largest", "Largest Allocation", largest),
	S("smallest", "Smallest Allocation", smallest),
	S("temporary", "Temporary Allocations", temporary), /* last: csv columns keep their places */
#undef S
};
#define NHS (sizeof(hs_rows) / sizeof(hs_rows[0]))

static uint64_t hs_get(const struct heapstat *s, size_t i)
{
	return *(const uint64_t *)((const char *)s + hs_rows[i].off);
}

int sonde_view_heapstat(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct heapstat s;
	size_t nexp = 0;
	const char *last = NULL; /* the last experiment with heap data */

	memset(&s, 0, sizeof(s));
	s.smallest = UINT64_MAX;
	for (size_t e = 0; e < n; e++) {
		struct sonde_heap_stats hs;

		if (!has_kind(exps[e], SONDE_KIND_HEAP))
			continue;
		nexp++;
		last = sonde_exp_info(exps[e])->name;
		if (!sonde_exp_heap_count(exps[e]))
			continue;
		/* streamed: memory grows with the live blocks, not the events */
		if (sonde_heap_stats(exps[e], &hs) < 0)
			return oom(err, errlen);
		const struct sonde_heap_match *m = &hs.m;

		s.leaks += m->leaks;
		s.leaked += m->leaked_bytes;
		s.unmatched += m->unmatched_frees;
		/* the peak of live bytes, as the leak matching sees the events */
		if (m->peak_bytes > s.peak || !s.peak_exp) {
			s.peak = m->peak_bytes;
			s.peak_ns = rel_time(exps[e], m->peak_ns);
			s.peak_exp = sonde_exp_info(exps[e])->name;
		}
		s.failed += hs.failed;
		s.temporary += hs.temporary;
		s.allocs += hs.allocs;
		s.bytes += hs.bytes;
		s.frees += hs.frees;
		if (hs.largest > s.largest)
			s.largest = hs.largest;
		if (hs.smallest < s.smallest)
			s.smallest = hs.smallest;
		for (int k = 0; k < NBUCKETS; k++) {
			s.hcount[k] += hs.hcount[k];
			s.hbytes[k] += hs.hbytes[k];
		}
	}
	if (s.smallest == UINT64_MAX)
		s.smallest = 0;
	int lo = NBUCKETS, hi = -1;

	for (int k = 0; k < NBUCKETS; k++)
		if (s.hcount[k]) {
			if (k < lo)
				lo = k;
			hi = k;
		}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	if (nexp == 1)
		em_text(&em, "Heap statistics of %s\n\n", last ? last : "?");
	else
		em_text(&em, "Heap statistics of %zu experiments (added together; the peak is the "
			     "largest of theirs)\n\n",
			nexp);
	for (size_t i = 0; i < NHS; i++) {
		em_text(&em, "%40s: %" PRIu64, hs_rows[i].label, hs_get(&s, i));
		if (!strcmp(hs_rows[i].key, "peak_bytes") && s.peak)
			em_text(&em, " (at %.3f s%s%s)", (double)s.peak_ns / 1e9, nexp > 1 ? " in " : "",
				nexp > 1 ? s.peak_exp : "");
		if (!strcmp(hs_rows[i].key, "temporary") && s.allocs)
			em_text(&em, " (%.2f%% of the allocations)", pct(s.temporary, s.allocs));
		em_text(&em, "\n");
	}
	em_text(&em, "\nAllocations by size (bytes):\n\n");
	em_text(&em, "%22s  %12s  %14s\n", "Size", "Allocations", "Bytes");
	/* csv: the statistics as one row under their keys, then the histogram */
	for (size_t i = 0; i < NHS; i++)
		em_csv(&em, "%s%s", i ? "," : "", hs_rows[i].key);
	em_csv(&em, ",peak_ns\n");
	for (size_t i = 0; i < NHS; i++)
		em_csv(&em, "%s%" PRIu64, i ? "," : "", hs_get(&s, i));
	em_csv(&em, ",%" PRIu64 "\n", s.peak_ns);
	em_csv(&em, "\nsize_lo,size_hi,allocations,bytes\n");
	/* json: the statistics as the document's fields */
	em_obj(&em, NULL);
	em_s(&em, "view", "heapstat");
	em_u(&em, "experiments", nexp);
	for (size_t i = 0; i < NHS; i++)
		em_u(&em, hs_rows[i].key, hs_get(&s, i));
	em_u(&em, "peak_ns", s.peak_ns);
	em_arr(&em, "histogram");
	for (int k = lo; k <= hi; k++) {
		char range[64];

		if (k == 0)
			snprintf(range, sizeof(range), "0");
		else if (k == 64)
			snprintf(range, sizeof(range), "%" PRIu64 " -", (uint64_t)1 << 63);
		else
			snprintf(range, sizeof(range), "%" PRIu64 " - %" PRIu64, (uint64_t)1 << (k - 1),
				 ((uint64_t)1 << k) - 1);
		em_text(&em, "%22s  %12" PRIu64 "  %14" PRIu64 "\n", range, s.hcount[k], s.hbytes[k]);
		em_row(&em);
		em_u(&em, "size_lo", k ? (uint64_t)1 << (k - 1) : 0);
		em_u(&em, "size_hi", k ? ((uint64_t)1 << (k - 1)) * 2 - 1 : 0);
		em_u(&em, "allocations", s.hcount[k]);
		em_u(&em, "bytes", s.hbytes[k]);
		em_row_end(&em);
	}
	em_end(&em);
	em_end_doc(&em);
	return vw_finish(f, err, errlen);
}

/* ---- -io and -iostacks -------------------------------------------------------------- */

/* Values of an I/O group, in the order of the io kind's metrics
 * ioreadbytes ... ioerrortime (lib/kinds/io.c); then the group's bytes and
 * calls. */
enum {
	IO_RB,
	IO_RC,
	IO_RT,
	IO_WB,
	IO_WC,
	IO_WT,
	IO_OC,
	IO_OT,
	IO_EC,
	IO_ET,
	IO_BYTES,
	IO_CALLS,
};

static void io_add(struct grp *r, const struct sonde_io_event *e)
{
	int64_t t = (int64_t)e->dur_ns;

	if (e->flags & SONDE_IOF_ERROR) {
		r->v[IO_EC]++;
		add_wrap(&r->v[IO_ET], t);
	} else if (SONDE_IO_IS_READ(e->func)) {
		add_wrap(&r->v[IO_RB], e->bytes);
		r->v[IO_RC]++;
		add_wrap(&r->v[IO_RT], t);
		add_wrap(&r->v[IO_BYTES], e->bytes);
	} else if (SONDE_IO_IS_WRITE(e->func)) {
		add_wrap(&r->v[IO_WB], e->bytes);
		r->v[IO_WC]++;
		add_wrap(&r->v[IO_WT], t);
		add_wrap(&r->v[IO_BYTES], e->bytes);
	} else {
		r->v[IO_OC]++;
		add_wrap(&r->v[IO_OT], t);
	}
	r->v[IO_CALLS]++;
}

/* A group's time in all its calls (wrapping, as its parts). */
static int64_t io_time(const struct grp *r)
{
	return (int64_t)((uint64_t)r->v[IO_RT] + (uint64_t)r->v[IO_WT] + (uint64_t)r->v[IO_OT] +
			 (uint64_t)r->v[IO_ET]);
}

static int cmp_name(const void *x, const void *y)
{
	const struct grp *p = x, *q = y;
	int c = strcmp(p->name, q->name);

	if (c)
		return c;
	return p->order < q->order ? -1 : p->order > q->order;
}

static int io_view(FILE *f, const struct sonde_exp *const *exps, size_t n,
		   const struct sonde_view_opts *o, bool by_fd, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);

	if (!sels)
		return oom(err, errlen);
	struct grouping g = { 0 };
	struct vt_table t;
	struct grp total;
	int first[IO_ET + 1];

	memset(&total, 0, sizeof(total));
	vt_init(&t);
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_io_event *ie = sonde_exp_io_events(exps[e], &ne);

		for (size_t i = 0; ie && i < ne; i++) {
			if (!sonde_sample_sel_has(sels[e], ie[i].time_ns) || !in_window(o, exps[e], ie[i].time_ns))
				continue;
			bool known = ie[i].file_id != 0;
			/* -iodetail: a group per file and descriptor (the
			 * descriptor mixed into the key as an epoch is) */
			struct grp *r = group(&g, (uint32_t)e, known ? 0 : 1,
					      known ? ie[i].file_id : (uint64_t)(uint32_t)ie[i].fd,
					      by_fd && known ? (uint32_t)ie[i].fd + 1 : 0, ie[i].time_ns);

			if (!r)
				goto nomem;
			if (!r->name) {
				const char *name = known ? sonde_exp_io_file(exps[e], ie[i].file_id) : NULL;
				char buf[32], *full = NULL;

				if (!name) {
					snprintf(buf, sizeof(buf), "<fd %d>", (int)ie[i].fd);
					name = buf;
				} else if (by_fd && ie[i].fd >= 0 && asprintf(&full, "%s (FD=%d)", name, (int)ie[i].fd) >= 0) {
					name = full;
				}
				r->name = vt_str(&t, name);
				free(full);
				if (!r->name)
					goto nomem;
			}
			io_add(r, &ie[i]);
			io_add(&total, &ie[i]);
		}
	}
	/* one row per name */
	if (g.n > 1)
		qsort(g.v, g.n, sizeof(*g.v), cmp_name);
	size_t m = 0;

	for (size_t i = 0; i < g.n; i++) {
		if (m && !strcmp(g.v[m - 1].name, g.v[i].name)) {
			for (int k = 0; k < NV; k++)
				add_wrap(&g.v[m - 1].v[k], g.v[i].v[k]);
			continue;
		}
		g.v[m++] = g.v[i];
	}
	g.n = m;
	sort_groups(&g, IO_BYTES, IO_CALLS);

	vt_field_key(&t, "file");
	int nm;
	const struct sonde_metric_def *defs = sonde_profile_metrics(&nm);
	int m0 = sonde_profile_metric_index("ioreadbytes");

	for (int k = IO_RB; k <= IO_ET; k++) {
		const struct sonde_metric_def *d = &defs[m0 + k];

		if (vt_group(&t, d->abbr, NULL, false) < 0 ||
		    (first[k] = vt_sub(&t, VT_VAL, d->unit, true, d->name)) < 0)
			goto nomem;
	}
	for (size_t i = 0; i <= g.n && (!o->limit || i <= o->limit); i++) {
		const struct grp *r = i ? &g.v[i - 1] : &total;
		struct vt_row *row = vt_row(&t, ' ', i ? r->name : TOTAL_NAME);

		if (!row)
			goto nomem;
		vt_set_s(row, 0, i ? r->name : TOTAL_NAME);
		for (int k = IO_RB; k <= IO_ET; k++)
			vt_set_i(row, first[k], r->v[k]);
	}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "I/O by file%s, sorted by bytes read and written\n\n", by_fd ? " and descriptor" : "");
	em_obj(&em, NULL);
	em_s(&em, "view", by_fd ? "iodetail" : "io");
	em_u(&em, "files", g.n);
	vw_table_body(&em, &t);
	return view_end(sels, n, &g, NULL, &t, f, true, err, errlen);
nomem:
	return view_end(sels, n, &g, NULL, &t, f, false, err, errlen);
}

int sonde_view_io(FILE *f, const struct sonde_exp *const *exps, size_t n,
		  const struct sonde_view_opts *o, char *err, size_t errlen)
{
	return io_view(f, exps, n, o, false, err, errlen);
}

int sonde_view_iodetail(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen)
{
	return io_view(f, exps, n, o, true, err, errlen);
}

/* -iostat's size ranges (er_print's): [lo, next lo) bytes. */
static const struct {
	uint64_t lo;
	const char *label;
} io_ranges[] = {
	{ 0, "0KB - 1KB" },	      { 1024, "1KB - 8KB" },	       { 8192, "8KB - 32KB" },
	{ 32768, "32KB - 128KB" },    { 131072, "128KB - 256KB" },    { 262144, "256KB - 512KB" },
	{ 524288, "512KB - 1000KB" }, { 1024000, "1000KB - 10MB" },   { 10485760, "10MB - 100MB" },
	{ 104857600, "100MB - 1GB" }, { 1073741824, "1GB - 10GB" },   { 10737418240ull, "10GB - 100GB" },
	{ 107374182400ull, "100GB - 1TB" }, { 1099511627776ull, "1TB - 10TB" },
};
#define NRANGES (sizeof(io_ranges) / sizeof(io_ranges[0]))

struct iost {
	uint64_t calls, bytes, time, longest, smallest, largest;
	uint64_t range[NRANGES];
};

static void iost_add(struct iost *s, const struct sonde_io_event *e, bool sized)
{
	uint64_t b = e->bytes > 0 ? (uint64_t)e->bytes : 0;

	s->calls++;
	s->time += e->dur_ns;
	if (e->dur_ns > s->longest)
		s->longest = e->dur_ns;
	if (!sized)
		return;
	s->bytes += b;
	if (s->calls == 1 || b < s->smallest)
		s->smallest = b;
	if (b > s->largest)
		s->largest = b;
	size_t k = NRANGES - 1;

	while (k > 0 && b < io_ranges[k].lo)
		k--;
	s->range[k]++;
}

static void iost_out(struct sonde_emit *em, const char *key, const char *title, const char *what,
		     const struct iost *s, bool sized)
{
	em_obj(em, key);
	em_text(em, "%s\n", title);
	if (sized) {
		em_text(em, "%-33s %s Calls\n", "I/O Size Range", what);
		em_text(em, "-------------------------------------------------------\n");
		em_arr(em, "ranges");
		for (size_t k = 0; k < NRANGES; k++) {
			if (!s->range[k])
				continue;
			em_text(em, "  %-31s %" PRIu64 "\n", io_ranges[k].label, s->range[k]);
			em_row(em);
			em_s_csv(em, "kind", key);
			em_u(em, "size_lo", io_ranges[k].lo);
			em_u(em, "calls", s->range[k]);
			em_row_end(em);
		}
		em_end(em);
		em_text(em, "\n");
	} else {
		em_text(em, "-----------------------------------------------------\n");
	}
	em_text(em, "%-33s %.6f (secs.)\n", "Longest time", (double)s->longest / 1e9);
	if (sized) {
		em_text(em, "%-33s %" PRIu64 "\n", "Smallest bytes", s->smallest);
		em_text(em, "%-33s %" PRIu64 "\n", "Largest bytes", s->largest);
	}
	em_text(em, "%-33s %.6f (secs.)\n", "Total time", (double)s->time / 1e9);
	em_text(em, "%-33s %" PRIu64 "\n", "Total calls", s->calls);
	if (sized)
		em_text(em, "%-33s %" PRIu64 "\n", "Total bytes", s->bytes);
	em_text(em, "\n");
	em_row(em);
	em_s_csv(em, "kind", key);
	em_u(em, "calls", s->calls);
	em_u(em, "bytes", s->bytes);
	em_u(em, "time_ns", s->time);
	em_u(em, "longest_ns", s->longest);
	em_u(em, "smallest", s->smallest);
	em_u(em, "largest", s->largest);
	em_row_end(em);
	em_end(em);
}

int sonde_view_iostat(FILE *f, const struct sonde_exp *const *exps, size_t n,
		      const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);
	struct iost w, r, oth, er;

	if (!sels)
		return oom(err, errlen);
	memset(&w, 0, sizeof(w));
	memset(&r, 0, sizeof(r));
	memset(&oth, 0, sizeof(oth));
	memset(&er, 0, sizeof(er));
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_io_event *ie = sonde_exp_io_events(exps[e], &ne);

		for (size_t i = 0; ie && i < ne; i++) {
			if (!sonde_sample_sel_has(sels[e], ie[i].time_ns) || !in_window(o, exps[e], ie[i].time_ns))
				continue;
			/* classed as -io classes them: a failed call is only an error */
			if (ie[i].flags & SONDE_IOF_ERROR)
				iost_add(&er, &ie[i], false);
			else if (SONDE_IO_IS_WRITE(ie[i].func))
				iost_add(&w, &ie[i], true);
			else if (SONDE_IO_IS_READ(ie[i].func))
				iost_add(&r, &ie[i], true);
			else
				iost_add(&oth, &ie[i], false);
		}
	}
	sels_free(sels, n);

	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_csv(&em, "kind,calls,bytes,time_ns,longest_ns,smallest,largest\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "iostat");
	iost_out(&em, "write", "Write Statistics", "Write", &w, true);
	iost_out(&em, "read", "Read Statistics", "Read", &r, true);
	iost_out(&em, "other", "Other I/O Statistics", "", &oth, false);
	iost_out(&em, "error", "I/O Error Statistics", "", &er, false);
	em_end_doc(&em);
	return vw_finish(f, err, errlen);
}

int sonde_view_iostacks(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);

	if (!sels)
		return oom(err, errlen);
	struct grouping g = { 0 };
	struct namer nm;
	struct grp total;

	memset(&total, 0, sizeof(total));
	if (namer_init(&nm, exps, n, o->names) < 0) {
		sels_free(sels, n);
		return oom(err, errlen);
	}
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_io_event *ie = sonde_exp_io_events(exps[e], &ne);

		for (size_t i = 0; ie && i < ne; i++) {
			if (!sonde_sample_sel_has(sels[e], ie[i].time_ns) || !in_window(o, exps[e], ie[i].time_ns))
				continue;
			struct grp *r = group(&g, (uint32_t)e, 0, ie[i].stack_id,
						 sonde_exp_map_epoch(exps[e], ie[i].time_ns, NULL, NULL),
						 ie[i].time_ns);

			if (!r)
				goto nomem;
			io_add(r, &ie[i]);
			io_add(&total, &ie[i]);
		}
	}
	if (merge_stacks(&g, &nm) < 0)
		goto nomem;
	sort_groups(&g, IO_BYTES, IO_CALLS);
	size_t top = o->limit ? o->limit : IOSTACKS_TOP, shown = g.n < top ? g.n : top;

	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "I/O by call stack, sorted by bytes, then calls (%zu of %zu stacks)\n\n", shown, g.n);
	em_text(&em, "%" PRId64 " %s, %" PRId64 " bytes, %.6f s\n", total.v[IO_CALLS],
		plural((uint64_t)total.v[IO_CALLS], "call", "calls"), total.v[IO_BYTES],
		(double)io_time(&total) / 1e9);
	em_csv(&em, "calls,bytes,time,reads,writes,other,errors,stack\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "iostacks");
	em_u(&em, "stacks", g.n);
	em_arr(&em, "rows");
	for (size_t i = 0; i <= shown; i++) {
		const struct grp *r = i ? &g.v[i - 1] : &total;

		if (i) {
			em_text(&em, "\nStack #%zu: %" PRId64 " %s, %" PRId64 " bytes, %.6f s (%" PRId64 " read, %" PRId64
				     " write, %" PRId64 " other, %" PRId64 " failed)\n",
				i, r->v[IO_CALLS], plural((uint64_t)r->v[IO_CALLS], "call", "calls"), r->v[IO_BYTES],
				(double)io_time(r) / 1e9, r->v[IO_RC], r->v[IO_WC], r->v[IO_OC], r->v[IO_EC]);
			em_text_with(&em, text_stack, r->stack);
		}
		em_row(&em);
		em_i(&em, "calls", r->v[IO_CALLS]);
		em_i(&em, "bytes", r->v[IO_BYTES]);
		em_i(&em, "time", io_time(r));
		em_i(&em, "reads", r->v[IO_RC]);
		em_i(&em, "writes", r->v[IO_WC]);
		em_i(&em, "other", r->v[IO_OC]);
		em_i(&em, "errors", r->v[IO_EC]);
		if (i)
			em_lines(&em, "stack", r->stack, ";");
		else
			em_s(&em, "stack", TOTAL_NAME);
		em_row_end(&em);
	}
	em_end(&em);
	em_end_doc(&em);
	return view_end(sels, n, &g, &nm, NULL, f, true, err, errlen);
nomem:
	return view_end(sels, n, &g, &nm, NULL, f, false, err, errlen);
}

/* ---- -sync ------------------------------------------------------------------------ */

enum { S_WAIT, S_COUNT, S_MAX };

/* Names of the functions in mask, ", "-separated, into buf. */
static void func_list(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned k = 0; k < 32 && k < SONDE_SYNC_NFUNCS; k++)
		if (mask & (1u << k)) {
			int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", sonde_sync_func_name(k));

			if (w < 0 || (size_t)w >= len - n)
				return;
			n += (size_t)w;
		}
}

static void threshold_text(const struct sonde_exp_info *in, char *buf, size_t len)
{
	uint64_t t = in->settings.sync_threshold_ns;
	const char *mode = in->settings.sync_mode;

	if (t % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 " us", t / 1000);
	else
		snprintf(buf, len, "%.3f us", (double)t / 1e3);
	if (mode && !strcmp(mode, "all"))
		snprintf(buf + strlen(buf), len - strlen(buf), " (every call)");
	else if (mode && !strcmp(mode, "on"))
		snprintf(buf + strlen(buf), len - strlen(buf), " (calibrated)");
}

int sonde_view_sync(FILE *f, const struct sonde_exp *const *exps, size_t n,
		    const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_sample_sel **sels = sels_new(exps, n, o);

	if (!sels)
		return oom(err, errlen);
	struct grouping g = { 0 };
	struct vt_table t;
	struct grp total;
	char buf[512];
	int cw, cn, cm;

	memset(&total, 0, sizeof(total));
	vt_init(&t);
	for (size_t e = 0; e < n; e++) {
		size_t ne;
		const struct sonde_sync_event *se = sonde_exp_sync_events(exps[e], &ne);

		for (size_t i = 0; se && i < ne; i++) {
			if (!sonde_sample_sel_has(sels[e], se[i].time_ns) || !in_window(o, exps[e], se[i].time_ns))
				continue;
			struct grp *r = group(&g, (uint32_t)e, 0, se[i].object, 0, se[i].time_ns);

			if (!r)
				goto nomem;
			for (struct grp *x = r;; x = &total) {
				add_wrap(&x->v[S_WAIT], (int64_t)se[i].wait_ns);
				x->v[S_COUNT]++;
				if ((int64_t)se[i].wait_ns > x->v[S_MAX])
					x->v[S_MAX] = (int64_t)se[i].wait_ns;
				if (se[i].func < 32)
					x->funcs |= 1u << se[i].func;
				if (x == &total)
					break;
			}
		}
	}
	sort_groups(&g, S_WAIT, S_COUNT);
	vt_field_key(&t, "object");
	vt_field_key(&t, "functions");
	if (n > 1)
		vt_field_key(&t, "experiment");
	int nm;
	const struct sonde_metric_def *defs = sonde_profile_metrics(&nm);

	if (vt_group(&t, defs[sonde_profile_metric_index("sync")].abbr, NULL, true) < 0 ||
	    (cw = vt_sub(&t, VT_VAL, SONDE_UNIT_NS, true, "sync")) < 0 ||
	    vt_group(&t, defs[sonde_profile_metric_index("syncn")].abbr, NULL, false) < 0 ||
	    (cn = vt_sub(&t, VT_VAL, SONDE_UNIT_COUNT, true, "syncn")) < 0 ||
	    vt_group(&t, "Longest Wait", NULL, false) < 0 ||
	    (cm = vt_sub(&t, VT_VAL, SONDE_UNIT_NS, true, "max")) < 0)
		goto nomem;
	for (size_t i = 0; i <= g.n && (!o->limit || i <= o->limit); i++) {
		const struct grp *r = i ? &g.v[i - 1] : &total;
		char obj[32], funcs[400];

		func_list(r->funcs, funcs, sizeof(funcs));
		snprintf(obj, sizeof(obj), "0x%" PRIx64, r->key);
		if (i)
			snprintf(buf, sizeof(buf), "%s%s%s  %s", n > 1 ? sonde_exp_info(exps[r->exp])->name : "",
				 n > 1 ? ": " : "", obj, funcs);
		else
			snprintf(buf, sizeof(buf), "%s", TOTAL_NAME);
		struct vt_row *row = vt_row(&t, ' ', buf);

		if (!row)
			goto nomem;
		vt_set_s(row, 0, i ? vt_str(&t, obj) : TOTAL_NAME);
		vt_set_s(row, 1, vt_str(&t, funcs));
		if (n > 1 && i)
			vt_set_s(row, 2, sonde_exp_info(exps[r->exp])->name);
		vt_set_i(row, cw, r->v[S_WAIT]);
		vt_set_i(row, cn, r->v[S_COUNT]);
		vt_set_i(row, cm, r->v[S_MAX]);
	}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "Synchronization waits by object, sorted by wait time\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "sync");
	em_arr(&em, "threshold_ns");
	for (size_t e = 0; e < n; e++) {
		if (!has_kind(exps[e], SONDE_KIND_SYNC))
			continue;
		threshold_text(sonde_exp_info(exps[e]), buf, sizeof(buf));
		if (n > 1)
			em_text(&em, "%s: ", sonde_exp_info(exps[e])->name);
		em_text(&em, "Sync wait threshold: %s\n", buf);
		em_u(&em, NULL, sonde_exp_info(exps[e])->settings.sync_threshold_ns);
	}
	em_text(&em, "\n");
	em_end(&em);
	em_u(&em, "objects", g.n);
	vw_table_body(&em, &t);
	return view_end(sels, n, &g, NULL, &t, f, true, err, errlen);
nomem:
	return view_end(sels, n, &g, NULL, &t, f, false, err, errlen);
}
