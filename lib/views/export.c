/*
 * The formats of sonde export (see export.h): the table, and what every
 * writer reads, built once: the profile with sonde print's filters, the
 * metric, the names, and for the timelines the events one by one.
 *
 * Cost: the profile is sonde print's (one pass over the events); a
 * timeline keeps 24 bytes per event it shows, sorts them by thread only
 * where a thread's events are out of time order (the reader gives them in
 * order), and makes runs in one pass per thread; over the budget, a few
 * more passes to find a bin width (each bin's stacks are merged with a
 * stamp per stack, so a pass costs one step per event).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/kinds.h>
#include <sonde/utf8.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "views/export.h"
#include "views/kind.h"
#include "views/view_table.h"

const struct sonde_export_format sonde_export_formats[] = {
	{ "pprof", "gzip-compressed profile.proto, for go tool pprof and every pprof reader", 0, 0,
	  sonde_export_pprof },
	{ "folded", "collapsed stacks, one line per stack: root;...;leaf VALUE (flamegraph.pl)", 0, 0,
	  sonde_export_folded },
	/* 4 M frames: about 15 MB of JSON */
	{ "speedscope", "speedscope's JSON file format, one sampled profile per thread", SONDE_XT_METRIC,
	  4000000, sonde_export_speedscope },
	/* 400 k complete events: about 35 MB of JSON */
	{ "chrome", "the Trace Event Format (chrome://tracing, Perfetto): a timeline per thread",
	  SONDE_XT_CHROME, 400000, sonde_export_chrome },
};
const size_t sonde_export_nformats = sizeof(sonde_export_formats) / sizeof(sonde_export_formats[0]);

const struct sonde_export_format *sonde_export_find(const char *name)
{
	for (size_t i = 0; i < sonde_export_nformats; i++)
		if (!strcmp(sonde_export_formats[i].name, name))
			return &sonde_export_formats[i];
	return NULL;
}

void sonde_export_opts_init(struct sonde_export_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->names = SONDE_NAME_DEFAULT;
	o->max_units = SONDE_EXPORT_DEFAULT_UNITS;
}

static void note(const struct sonde_export *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct sonde_export *x, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!x->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	x->o->note(x->o->note_arg, msg);
}

/* ---- the buffered writer --------------------------------------------------------- */

#define XB_FLUSH 65536

void xb_init(struct sonde_xbuf *b, FILE *f)
{
	memset(b, 0, sizeof(*b));
	b->f = f;
	b->cap = XB_FLUSH + 256;
	b->b = malloc(b->cap);
	if (!b->b)
		b->err = true;
}

static void xb_flush(struct sonde_xbuf *b)
{
	if (b->n && b->b && !b->err && fwrite(b->b, 1, b->n, b->f) != b->n)
		b->err = true;
	b->n = 0;
}

void xb_mem(struct sonde_xbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > XB_FLUSH)
		xb_flush(b);
	if (n > XB_FLUSH) {
		if (fwrite(p, 1, n, b->f) != n)
			b->err = true;
		return;
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

void xb_s(struct sonde_xbuf *b, const char *s)
{
	xb_mem(b, s, strlen(s));
}

void xb_c(struct sonde_xbuf *b, char c)
{
	if (b->err)
		return;
	if (b->n + 1 > XB_FLUSH)
		xb_flush(b);
	b->b[b->n++] = c;
}

void xb_u(struct sonde_xbuf *b, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	xb_mem(b, t + i, (size_t)(24 - i));
}

void xb_i(struct sonde_xbuf *b, int64_t v)
{
	if (v < 0) {
		xb_c(b, '-');
		xb_u(b, (uint64_t)0 - (uint64_t)v);
	} else {
		xb_u(b, (uint64_t)v);
	}
}

void xb_us(struct sonde_xbuf *b, uint64_t ns)
{
	char t[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10) };

	xb_u(b, ns / 1000);
	xb_mem(b, t, 4);
}

void xb_json(struct sonde_xbuf *b, const char *s)
{
	/* vt_json_str is the analyzer's one JSON string writer (the same
	 * escapes, the same U+F7XY for bytes that are not UTF-8). */
	if (b->err)
		return;
	xb_flush(b);
	vt_json_str(b->f, s ? s : "");
}

int xb_done(struct sonde_xbuf *b)
{
	xb_flush(b);
	free(b->b);
	b->b = NULL;
	return b->err || ferror(b->f) ? -1 : 0;
}

/* ---- names ------------------------------------------------------------------------ */

/* s as valid UTF-8 without control characters: those become '?', a byte
 * that starts no valid sequence U+F700 + byte (sonde/utf8.h).  malloc'd. */
static char *safe_name(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(3 * n + 1), *q = o;

	if (!o)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t l = sonde_utf8_len(p);

		if (*p < 0x20 || *p == 0x7f) {
			*q++ = '?';
			p++;
		} else if (!l) {
			unsigned cp = SONDE_BYTE_ESCAPE_BASE + *p++;

			*q++ = (char)(0xe0 | (cp >> 12));
			*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
			*q++ = (char)(0x80 | (cp & 0x3f));
		} else {
			memcpy(q, p, l);
			q += l;
			p += l;
		}
	}
	*q = '\0';
	return o;
}

static char *json_quoted(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	vt_json_str(f, s);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int make_names(struct sonde_export *x)
{
	const struct sonde_model *m = x->p.model;
	size_t n = sonde_model_nfuncs(m);

	x->name = calloc(n + 1, sizeof(*x->name));
	x->jname = calloc(n + 1, sizeof(*x->jname));
	if (!x->name || !x->jname)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *raw = sonde_view_funcname(sonde_model_funcinfo(m, (uint32_t)i), x->o->names);

		x->name[i] = safe_name(raw ? raw : "?");
		if (!x->name[i] || !(x->jname[i] = json_quoted(x->name[i])))
			return -1;
	}
	return 0;
}

/* ---- metrics ------------------------------------------------------------------------ */

static void find_recorded(struct sonde_export *x)
{
	for (int m = 0; m < sonde_nmetrics(); m++)
		for (size_t i = 0; i < x->nexps && !x->recorded[m]; i++)
			x->recorded[m] = sonde_metric_recorded(x->exps[i], m);
}

/* As sonde print sorts by default: clock-profile time when there is any,
 * else the first traced kind's main metric. */
static int default_metric(const struct sonde_export *x)
{
	if (x->recorded[SONDE_M_TOTALCPU])
		return SONDE_M_TOTALCPU;
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const char *sort;

		if (!sonde_kind_default_metrics(id, &sort))
			continue;
		for (int m = 0; m < sonde_nmetrics(); m++)
			if (x->recorded[m] && sonde_metric_kind(m) == id && !strcmp(sonde_metric(m)->name, sort))
				return m;
	}
	return SONDE_M_TOTALCPU;
}

static int choose_metric(struct sonde_export *x, char *err, size_t errlen)
{
	if (!x->o->metric) {
		x->metric = default_metric(x);
		return 0;
	}
	for (int m = 0; m < sonde_nmetrics(); m++) {
		if (strcmp(sonde_metric(m)->name, x->o->metric))
			continue;
		x->metric = m;
		if (x->recorded[m])
			return 0;
		char have[512] = "";
		size_t n = 0;

		for (int k = 0; k < sonde_nmetrics() && n < sizeof(have); k++)
			if (x->recorded[k])
				n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s", n ? ", " : "",
						      sonde_metric(k)->name);
		snprintf(err, errlen, "metric '%s' was not recorded in the experiment%s (recorded: %s)",
			 x->o->metric, x->nexps == 1 ? "" : "s", n ? have : "nothing");
		return -SONDE_ERR_NOT_RECORDED;
	}
	char all[600] = "";
	size_t n = 0;

	for (int k = 0; k < sonde_nmetrics() && n < sizeof(all); k++)
		n += (size_t)snprintf(all + n, sizeof(all) - n, "%s%s", k ? ", " : "", sonde_metric(k)->name);
	snprintf(err, errlen, "unknown metric '%s' (metrics: %s)", x->o->metric, all);
	return -SONDE_ERR_NO_MATCH;
}

const char *sonde_export_unit(int metric)
{
	switch (sonde_metric(metric)->unit) {
	case SONDE_UNIT_NS:
		return "nanoseconds";
	case SONDE_UNIT_BYTES:
		return "bytes";
	default:
		return "count";
	}
}

void sonde_export_process(const struct sonde_exp *e, char *buf, size_t len)
{
	const struct sonde_exp_info *in = sonde_exp_info(e);
	const char *cmd = in->target.command && *in->target.command ? in->target.command
			  : in->target.exe				    ? in->target.exe
									    : in->name;
	size_t w = strcspn(cmd, " ");
	const char *base = cmd;

	for (size_t i = 0; i < w; i++)
		if (cmd[i] == '/')
			base = cmd + i + 1;
	snprintf(buf, len, "%.*s [%u]", (int)(cmd + w - base), base, in->target.pid);
}

bool sonde_export_process_known(const struct sonde_exp *e, char *buf, size_t len, int64_t *order)
{
	char what[64], proc[256];

	sonde_export_process(e, proc, sizeof(proc));
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_view_timeline *tl = sonde_view_timeline(id);

		if (tl && tl->process && tl->process(e, what, sizeof(what), order)) {
			snprintf(buf, len, "%s (%s)", what, proc);
			return true;
		}
	}
	snprintf(buf, len, "%s", proc);
	return false;
}

/* ---- the events of the timelines ------------------------------------------------------ */

struct collect {
	struct sonde_export *x;
	unsigned flags;
	struct u64map tmap; /* exp << 32 | tid -> thread index */
	uint64_t last_key;
	uint32_t last_thread;
	size_t capcalls, capthreads, cappts;
};

static long thread_of(struct collect *c, uint32_t exp, uint32_t tid)
{
	struct sonde_export *x = c->x;
	uint64_t key = (uint64_t)exp << 32 | tid;

	if (x->nthreads && key == c->last_key)
		return c->last_thread;
	long i = u64map_get(&c->tmap, key);

	if (i < 0) {
		if (sonde_grow(&x->threads, &c->capthreads, x->nthreads + 1, sizeof(*x->threads), 16) < 0 ||
		    u64map_put(&c->tmap, key, x->nthreads) < 0)
			return -1;
		struct sonde_xthread *t = &x->threads[x->nthreads];

		*t = (struct sonde_xthread){ .exp = exp, .tid = tid };
		/* its clock samples: the reader counted them (the events kept
		 * are those or fewer) */
		if ((c->flags & SONDE_XT_CHROME) || !sonde_metric_kind(x->metric)) {
			size_t nt;
			const struct sonde_thread *th = sonde_exp_threads(x->exps[exp], &nt);

			for (size_t k = 0; k < nt; k++)
				if (th[k].tid == tid && th[k].samples && th[k].samples < SIZE_MAX / sizeof(*t->ev)) {
					t->ev = malloc((size_t)th[k].samples * sizeof(*t->ev));
					t->cap = t->ev ? (size_t)th[k].samples : 0;
				}
		}
		i = (long)x->nthreads++;
	}
	c->last_key = key;
	c->last_thread = (uint32_t)i;
	return i;
}

static int collect_one(void *arg, const struct sonde_pevent *pe)
{
	struct collect *c = arg;
	struct sonde_export *x = c->x;
	bool keep_ev, keep_call = false;
	int64_t v;

	if (c->flags & SONDE_XT_METRIC) {
		v = pe->v[x->metric];
		keep_ev = v != 0;
	} else {
		v = pe->v[SONDE_M_TOTALCPU];
		keep_ev = pe->kind == 0 && pe->v[SONDE_M_SAMPLES]; /* CPU samples, not off-CPU ones */
		const struct sonde_view_timeline *tl = pe->kind ? sonde_view_timeline(pe->kind) : NULL;

		keep_call = tl && tl->dur && (!tl->is_span || tl->is_span(x->exps[pe->exp], pe->index));
	}
	if ((c->flags & SONDE_XT_CHROME) && !sonde_export_counter_of_events(x->metric) && pe->v[x->metric]) {
		if (sonde_grow(&x->pts, &c->cappts, x->npts + 1, sizeof(*x->pts), 256) < 0)
			return -1;
		x->pts[x->npts++] = (struct sonde_xpoint){ pe->time_ns, pe->v[x->metric], pe->exp };
	}
	if (!keep_ev && !keep_call)
		return 0;
	long th = thread_of(c, pe->exp, pe->tid);

	if (th < 0)
		return -1;
	if (keep_ev) {
		struct sonde_xthread *t = &x->threads[th];

		if (t->n == t->cap && sonde_grow(&t->ev, &t->cap, t->n + 1, sizeof(*t->ev), 1024) < 0)
			return -1;
		/* the stack is the evstack's until the build ends */
		t->ev[t->n++] = (struct sonde_xev){ pe->time_ns, v, pe->ev };
	}
	if (keep_call) {
		if (sonde_grow(&x->calls, &c->capcalls, x->ncalls + 1, sizeof(*x->calls), 256) < 0)
			return -1;
		uint64_t dur = sonde_view_timeline(pe->kind)->dur(x->exps[pe->exp], pe->index);

		x->calls[x->ncalls++] = (struct sonde_xcall){ pe->exp, (uint32_t)th, pe->ev, pe->kind, pe->index,
							      pe->time_ns, dur };
	}
	return 0;
}

static int cmp_thread(const void *a, const void *b, void *arg)
{
	const struct sonde_xthread *th = arg;
	const struct sonde_xthread *x = &th[*(const size_t *)a], *y = &th[*(const size_t *)b];

	if (x->exp != y->exp)
		return x->exp < y->exp ? -1 : 1;
	return x->number != y->number ? (x->number < y->number ? -1 : 1) : (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_ev_time(const void *a, const void *b)
{
	const struct sonde_xev *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

static int cmp_call_time(const void *a, const void *b)
{
	const struct sonde_xcall *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

/* After the build: model stacks for evstacks, threads numbered and in
 * order (experiment, number), each thread's events in time order. */
static int finish_timeline(struct sonde_export *x)
{
	struct sonde_profile *p = &x->p;
	size_t nt = x->nthreads;

	for (size_t i = 0; i < nt; i++) {
		struct sonde_xthread *t = &x->threads[i];

		for (size_t k = 0; k < t->n; k++)
			t->ev[k].stack = p->ev[t->ev[k].stack].mstack;
		for (size_t k = 0; k < p->nthreads; k++)
			if (p->threads[k].exp == t->exp && p->threads[k].tid == t->tid) {
				t->number = p->threads[k].number;
				t->name = p->threads[k].name;
				break;
			}
		/* the reader gives each thread's samples in time order, its
		 * traced events too; several kinds of one thread (a metric of
		 * two kinds) or a damaged file may not be */
		bool in_order = true;

		for (size_t k = 1; k < t->n && in_order; k++)
			in_order = t->ev[k - 1].t <= t->ev[k].t;
		if (!in_order)
			qsort(t->ev, t->n, sizeof(*t->ev), cmp_ev_time);
	}
	for (size_t i = 0; i < x->ncalls; i++)
		x->calls[i].stack = p->ev[x->calls[i].stack].mstack;
	/* order the threads: old index -> new */
	uint32_t *map = malloc((nt + 1) * sizeof(*map));
	size_t *ord = malloc((nt + 1) * sizeof(*ord));
	struct sonde_xthread *sorted = malloc((nt + 1) * sizeof(*sorted));

	if (!map || !ord || !sorted) {
		free(map);
		free(ord);
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < nt; i++)
		ord[i] = i;
	qsort_r(ord, nt, sizeof(*ord), cmp_thread, x->threads);
	for (size_t i = 0; i < nt; i++) {
		sorted[i] = x->threads[ord[i]];
		map[ord[i]] = (uint32_t)i;
	}
	free(x->threads);
	x->threads = sorted;
	for (size_t i = 0; i < x->ncalls; i++)
		x->calls[i].thread = map[x->calls[i].thread];
	free(map);
	free(ord);
	if (x->ncalls)
		qsort(x->calls, x->ncalls, sizeof(*x->calls), cmp_call_time);
	return 0;
}

/* ---- runs ----------------------------------------------------------------------------- */

/* The stacks in call-path order: root first, compared function by
 * function (a caller before its callees' longer paths). */
static int cmp_path(const void *a, const void *b, void *arg)
{
	const struct sonde_model *m = arg;
	uint32_t sa = *(const uint32_t *)a, sb = *(const uint32_t *)b;
	int da, db;
	const uint32_t *fa = sonde_model_stack_funcs(m, sa, &da), *fb = sonde_model_stack_funcs(m, sb, &db);

	for (int i = 0; i < da && i < db; i++)
		if (fa[da - 1 - i] != fb[db - 1 - i])
			return fa[da - 1 - i] < fb[db - 1 - i] ? -1 : 1;
	return (da > db) - (da < db);
}

struct runctx {
	struct sonde_export *x;
	bool timed;
	uint32_t *rank;	 /* per stack: its place in call-path order */
	uint32_t *stamp; /* per stack: the bin that last met it */
	int64_t *acc;	 /* per stack: its values in that bin */
	uint32_t *list;	 /* the bin's stacks */
	uint32_t *ord;	 /* the stacks in call-path order */
	uint32_t gen;
	struct sonde_xrun *runs;
	size_t n;
};

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const uint32_t *rank = arg;
	uint32_t ra = rank[*(const uint32_t *)a], rb = rank[*(const uint32_t *)b];

	return (ra > rb) - (ra < rb);
}

static int bin_prepare(struct runctx *c)
{
	const struct sonde_model *m = c->x->p.model;
	size_t ns = sonde_model_nstacks(m);

	if (c->rank)
		return 0;
	uint32_t *ord = c->ord = malloc((ns + 1) * sizeof(*ord));

	c->rank = malloc((ns + 1) * sizeof(*c->rank));
	c->stamp = calloc(ns + 1, sizeof(*c->stamp));
	c->acc = malloc((ns + 1) * sizeof(*c->acc));
	c->list = malloc((ns + 1) * sizeof(*c->list));
	if (!ord || !c->rank || !c->stamp || !c->acc || !c->list)
		return -1;
	for (size_t i = 0; i < ns; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, ns, sizeof(*ord), cmp_path, (void *)m);
	for (size_t i = 0; i < ns; i++)
		c->rank[ord[i]] = (uint32_t)i;
	return 0;
}

/* One bin's stacks as runs, in call-path order, from start on. */
static void flush_bin(struct runctx *c, size_t nd, uint64_t start, uint64_t end)
{
	size_t ns = sonde_model_nstacks(c->x->p.model);

	if (nd > ns / 16) { /* many: pick them from the stacks in order */
		size_t k = 0;

		for (size_t i = 0; i < ns && k < nd; i++)
			if (c->stamp[c->ord[i]] == c->gen)
				c->list[k++] = c->ord[i];
	} else {
		qsort_r(c->list, nd, sizeof(*c->list), cmp_rank, c->rank);
	}
	for (size_t i = 0; i < nd; i++) {
		uint32_t s = c->list[i];
		struct sonde_xrun *r = &c->runs[c->n++];
		uint64_t at = start;

		if (c->timed && c->n > 1 && r[-1].end > at)
			at = r[-1].end; /* a bin fuller than its width: no overlap */
		*r = (struct sonde_xrun){ s, c->acc[s], at, c->timed ? at + (uint64_t)c->acc[s] : end };
		if (c->timed)
			start = r->end;
	}
}

/* The runs of thread th into c->runs (c->n of them): full resolution
 * when width is 0, else bins of width ns from the thread's first event. */
static void thread_runs(struct runctx *c, size_t th, uint64_t width)
{
	const struct sonde_xthread *t = &c->x->threads[th];
	const struct sonde_xev *e = t->ev;

	c->n = 0;
	if (!t->n)
		return;
	if (!width) {
		for (size_t i = 0; i < t->n; i++) {
			struct sonde_xrun *prev = c->n ? &c->runs[c->n - 1] : NULL;

			if (!c->timed) {
				if (prev && prev->stack == e[i].stack) {
					prev->v += e[i].v;
					prev->end = e[i].t;
				} else {
					c->runs[c->n++] = (struct sonde_xrun){ e[i].stack, e[i].v, e[i].t, e[i].t };
				}
				continue;
			}
			/* a sample stands for the CPU time before it */
			uint64_t w = e[i].v > 0 ? (uint64_t)e[i].v : 0;
			uint64_t nat = e[i].t > w ? e[i].t - w : 0, start;

			/* a first sample's CPU time from before the experiment's
			 * start (the loader's) starts at the timeline's origin,
			 * as the rest is pushed after it: nothing overlaps */
			if (nat < c->x->t0)
				nat = c->x->t0;
			start = nat;

			if (prev) {
				bool touching = nat <= prev->end + w / 10;

				if (touching && prev->stack == e[i].stack) {
					prev->v += e[i].v;
					prev->end += w;
					continue;
				}
				if (touching || nat < prev->end)
					start = prev->end;
			}
			c->runs[c->n++] = (struct sonde_xrun){ e[i].stack, e[i].v, start, start + w };
		}
		return;
	}
	uint64_t t0 = e[0].t, bin = UINT64_MAX;
	size_t nd = 0;

	for (size_t i = 0; i < t->n; i++) {
		uint64_t b = (e[i].t - t0) / width;

		if (b != bin) {
			if (nd)
				flush_bin(c, nd, t0 + bin * width, t0 + (bin + 1) * width);
			nd = 0;
			bin = b;
			if (++c->gen == 0) { /* wrapped: no stamp may look current */
				memset(c->stamp, 0, sonde_model_nstacks(c->x->p.model) * sizeof(*c->stamp));
				c->gen = 1;
			}
		}
		uint32_t s = e[i].stack;

		if (c->stamp[s] != c->gen) {
			c->stamp[s] = c->gen;
			c->acc[s] = 0;
			c->list[nd++] = s;
		}
		c->acc[s] += e[i].v;
	}
	if (nd)
		flush_bin(c, nd, t0 + bin * width, t0 + (bin + 1) * width);
}

static size_t runs_cost(struct runctx *c, uint64_t width,
			size_t (*cost)(const struct sonde_export *x, const struct sonde_xrun *r,
				       const struct sonde_xrun *prev))
{
	size_t total = 0;

	for (size_t th = 0; th < c->x->nthreads; th++) {
		thread_runs(c, th, width);
		for (size_t i = 0; i < c->n; i++)
			total += cost(c->x, &c->runs[i], i ? &c->runs[i - 1] : NULL);
	}
	return total;
}

int sonde_export_runs(struct sonde_export *x, bool timed,
		      size_t (*cost)(const struct sonde_export *x, const struct sonde_xrun *r,
				     const struct sonde_xrun *prev),
		      int (*emit)(struct sonde_export *x, size_t thread, const struct sonde_xrun *runs, size_t n,
				  uint64_t bin_ns, void *arg),
		      void *arg)
{
	struct runctx c = { .x = x, .timed = timed };
	size_t most = 0;
	uint64_t span = 1, width = 0;
	int rc = -1;

	for (size_t th = 0; th < x->nthreads; th++) {
		const struct sonde_xthread *t = &x->threads[th];

		if (t->n > most)
			most = t->n;
		if (t->n && t->ev[t->n - 1].t - t->ev[0].t + 1 > span)
			span = t->ev[t->n - 1].t - t->ev[0].t + 1;
	}
	c.runs = malloc((most + 1) * sizeof(*c.runs));
	if (!c.runs)
		return -1;
	size_t budget = x->budget, total = runs_cost(&c, 0, cost);

	if (budget && total > budget) {
		if (bin_prepare(&c) < 0)
			goto out;
		size_t full = total;

		width = span / (total / budget + 1);
		if (width < 1000)
			width = 1000;
		for (;;) {
			total = runs_cost(&c, width, cost);
			if (total <= budget || width >= span)
				break;
			width *= total > 4 * budget ? 4 : 2;
			if (width > span)
				width = span; /* one bin a thread: its flame graph */
		}
		note(x,
		     "each thread's events are merged by stack in bins of %.3f ms to fit the budget of %zu "
		     "(%zu at full resolution, %zu in bins; --max-units 0 keeps every event at its time)",
		     (double)width / 1e6, budget, full, total);
	}
	for (size_t th = 0; th < x->nthreads; th++) {
		thread_runs(&c, th, width);
		if (emit(x, th, c.runs, c.n, width, arg) < 0)
			goto out;
	}
	rc = 0;
out:
	free(c.runs);
	free(c.rank);
	free(c.stamp);
	free(c.acc);
	free(c.list);
	free(c.ord);
	return rc;
}

/* ---- building and writing ---------------------------------------------------------------- */

static void release(struct sonde_export *x)
{
	size_t nf = x->p.model ? sonde_model_nfuncs(x->p.model) : 0;

	for (size_t i = 0; i < nf; i++) {
		if (x->name)
			free(x->name[i]);
		if (x->jname)
			free(x->jname[i]);
	}
	free(x->name);
	free(x->jname);
	for (size_t i = 0; i < x->nthreads; i++)
		free(x->threads[i].ev);
	free(x->threads);
	free(x->calls);
	free(x->pts);
	if (x->p.model)
		sonde_profile_release(&x->p);
}

int sonde_export_write(FILE *f, const struct sonde_export_format *fmt, const struct sonde_exp *const *exps,
		       size_t nexps, const struct sonde_export_opts *o, char *err, size_t errlen)
{
	struct sonde_export x;
	struct collect c;
	struct sonde_profile_opts po = o->filter;
	int rc;

	memset(&x, 0, sizeof(x));
	memset(&c, 0, sizeof(c));
	x.o = o;
	x.budget = o->max_units == SONDE_EXPORT_DEFAULT_UNITS ? fmt->budget : o->max_units;
	x.exps = exps;
	x.nexps = nexps;
	x.t0 = UINT64_MAX;
	for (size_t i = 0; i < nexps; i++)
		if (sonde_exp_info(exps[i])->start_ns < x.t0)
			x.t0 = sonde_exp_info(exps[i])->start_ns;
	if (x.t0 == UINT64_MAX)
		x.t0 = 0;
	find_recorded(&x);
	if ((rc = choose_metric(&x, err, errlen)) < 0)
		return rc;
	po.each = NULL;
	po.each_arg = NULL;
	if (fmt->timeline) {
		c.x = &x;
		c.flags = fmt->timeline;
		po.each = collect_one;
		po.each_arg = &c;
	}
	if (sonde_profile_build(&x.p, exps, nexps, &po, err, errlen) < 0) {
		u64map_release(&c.tmap);
		release(&x);
		return strcmp(err, "out of memory") ? -SONDE_ERR_NO_MATCH : -SONDE_ERR_FAILED;
	}
	u64map_release(&c.tmap);
	if (make_names(&x) < 0 || (fmt->timeline && finish_timeline(&x) < 0)) {
		snprintf(err, errlen, "out of memory");
		release(&x);
		return -SONDE_ERR_FAILED;
	}
	rc = fmt->write(f, &x, err, errlen);
	if (!rc && (fflush(f) || ferror(f))) {
		snprintf(err, errlen, "error writing the output");
		rc = -SONDE_ERR_FAILED;
	}
	release(&x);
	return rc;
}
