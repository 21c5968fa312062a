/*
 * chrome: the Trace Event Format of chrome://tracing (catapult's Trace
 * Viewer), which Perfetto's UI and speedscope also read: one JSON object,
 *
 *	{"traceEvents":[...],"displayTimeUnit":"ms","otherData":{...}}
 *
 * with times in microseconds (3 decimals: exact nanoseconds) from the
 * earliest experiment's start, one process per experiment (its pid):
 *
 *   M  process_name ("burn [4242]") and thread_name ("thread 1", as
 *      sonde print -threads numbers it) of every thread shown, and of each
 *      thread's traced calls' track ("thread 1: sync and I/O calls", the
 *      words of the kinds whose timeline part has spans, views/kind.h; tid
 *      2^30 + the thread's tid:
 *      a call and the samples taken during it cannot nest as one stack);
 *   X  the clock-profile samples of each thread on its timeline, as a
 *      flame chart: a sample stands for the CPU time before it (its
 *      weight), consecutive samples that touch share the frames their
 *      stacks share, and each frame is a complete event "cat":"cpu"
 *      named after its function (no args: speedscope names a frame by its
 *      name and args).  The durations of the outermost frames add up to
 *      the recorded CPU time exactly.  Over the budget (export.h) each
 *      thread's samples are merged by stack in bins of time (a note says
 *      the width);
 *   X  the traced calls of the kinds whose timeline part has spans
 *      (views/kind.h): sync waits ("cat":"sync") and I/O calls
 *      ("cat":"io"), named after the traced function, with their caller
 *      and what the kind adds (the lock; the file, fd and bytes) in args;
 *      over the budget the longest are kept;
 *   i  sample points (process scope): start, end, periodic, signal,
 *      pause, resume and the API's labelled points, "cat":"sample_point";
 *   C  the chosen metric's running total per process (at most 1000
 *      points, the last one the exact total), named after the metric;
 *   C  the counters of the kinds whose timeline part keeps one, for each
 *      process that has their events: "Live heap", the live bytes
 *      (args.bytes, as the leak matching counts them) in at most 1000 steps
 *      of the run, each step's largest at its first event, so that the
 *      peak shows exactly, and a last point with the value at the end.
 *
 * otherData says the exporter, the metric, its unit and its total.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/kinds.h>

#include "base/u64map.h"
#include "views/export.h"
#include "views/kind.h"
#include "views/view_exp.h"

#ifndef SONDE_VERSION
#define SONDE_VERSION "0.1.0"
#endif

#define CALL_TRACK 0x40000000u /* tid of a thread's traced-call track: this + tid */
#define OWN_TRACKS 8		  /* a kind's own track (views/kind.h): own_track << 24 above it */

/* The tid of the track of a kind's spans on thread tid. */
static uint32_t track_tid(int kind, uint32_t tid)
{
	return CALL_TRACK + (sonde_view_timeline(kind)->own_track % OWN_TRACKS << 24) + tid;
}
#define COUNTER_POINTS 1000

static uint64_t rel(const struct sonde_export *x, uint64_t t)
{
	return t > x->t0 ? t - x->t0 : 0;
}

static uint32_t pid_of(const struct sonde_export *x, uint32_t exp)
{
	return sonde_exp_info(x->exps[exp])->target.pid;
}

/* A process-scope event's place: its pid, its tid (the pid) and its
 * time, after the event's opening (which ends with "pid":). */
static void proc_at(const struct sonde_export *x, struct sonde_xbuf *b, uint32_t e, uint64_t t)
{
	xb_u(b, pid_of(x, e));
	xb_s(b, ",\"tid\":");
	xb_u(b, pid_of(x, e));
	xb_s(b, ",\"ts\":");
	xb_us(b, rel(x, t));
}

/* Frames the stacks of two runs share from the root. */
static int shared(const struct sonde_model *m, uint32_t a, uint32_t b)
{
	int da, db, i = 0;
	const uint32_t *fa = sonde_model_stack_funcs(m, a, &da), *fb = sonde_model_stack_funcs(m, b, &db);

	while (i < da && i < db && fa[da - 1 - i] == fb[db - 1 - i])
		i++;
	return i;
}

static size_t cost(const struct sonde_export *x, const struct sonde_xrun *r, const struct sonde_xrun *prev)
{
	int depth;

	sonde_model_stack_funcs(x->p.model, r->stack, &depth);
	if (prev && prev->end == r->start)
		return (size_t)(depth - shared(x->p.model, prev->stack, r->stack));
	return (size_t)depth;
}

struct out {
	struct sonde_xbuf *b;
	bool first;
	uint32_t *open;	   /* the open frames, root first */
	uint64_t *openat;  /* when each opened */
	size_t capopen;
};

static void sep(struct out *o)
{
	xb_s(o->b, o->first ? "\n" : ",\n");
	o->first = false;
}

static void meta(struct out *o, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	sep(o);
	xb_s(o->b, "{\"ph\":\"M\",\"name\":\"");
	xb_s(o->b, what);
	xb_s(o->b, "\",\"pid\":");
	xb_u(o->b, pid);
	xb_s(o->b, ",\"tid\":");
	xb_u(o->b, tid);
	xb_s(o->b, ",\"args\":{\"name\":");
	xb_json(o->b, name);
	xb_s(o->b, "}}");
}

/* The complete event of an open frame closed at t. */
static void close_frame(struct sonde_export *x, struct out *o, const char *head, size_t headlen, uint32_t f,
			uint64_t from, uint64_t to)
{
	struct sonde_xbuf *b = o->b;

	sep(o);
	xb_mem(b, head, headlen);
	xb_us(b, rel(x, from));
	xb_s(b, ",\"dur\":");
	xb_us(b, to - from);
	xb_s(b, ",\"name\":");
	xb_s(b, x->jname[f]);
	xb_c(b, '}');
}

static int emit(struct sonde_export *x, size_t th, const struct sonde_xrun *runs, size_t n, uint64_t bin_ns,
		void *arg)
{
	struct out *o = arg;
	const struct sonde_model *m = x->p.model;
	const struct sonde_xthread *t = &x->threads[th];
	char head[128];
	int headlen = snprintf(head, sizeof(head), "{\"ph\":\"X\",\"cat\":\"cpu\",\"pid\":%u,\"tid\":%u,\"ts\":",
			       pid_of(x, t->exp), t->tid);
	size_t nopen = 0;

	for (size_t i = 0; i < n; i++) {
		int depth, keep = 0;
		const uint32_t *fr = sonde_model_stack_funcs(m, runs[i].stack, &depth);

		if (i && runs[i - 1].end == runs[i].start)
			keep = shared(m, runs[i - 1].stack, runs[i].stack);
		uint64_t at = i ? runs[i - 1].end : 0; /* the previous run's frames end with it */

		while (nopen > (size_t)keep) {
			nopen--;
			close_frame(x, o, head, (size_t)headlen, o->open[nopen], o->openat[nopen], at);
		}
		if ((size_t)depth > o->capopen) {
			size_t nc = (size_t)depth * 2;
			uint32_t *no = realloc(o->open, nc * sizeof(*no));

			if (no)
				o->open = no;
			uint64_t *na = realloc(o->openat, nc * sizeof(*na));

			if (na)
				o->openat = na;
			if (!no || !na)
				return -1;
			o->capopen = nc;
		}
		for (int k = keep; k < depth; k++) {
			o->open[nopen] = fr[depth - 1 - k];
			o->openat[nopen++] = runs[i].start;
		}
	}
	while (nopen > 0) {
		nopen--;
		close_frame(x, o, head, (size_t)headlen, o->open[nopen], o->openat[nopen], runs[n - 1].end);
	}
	return o->b->err ? -1 : 0;
}

static int cmp_dur_desc(const void *a, const void *b)
{
	const struct sonde_xcall *x = a, *y = b;

	return (x->dur < y->dur) - (x->dur > y->dur);
}

static int cmp_time(const void *a, const void *b)
{
	const struct sonde_xcall *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* Writes the traced calls (over the budget, the longest) and returns how
 * many: x->calls[0..that) are those written. */
static size_t calls(struct sonde_export *x, struct out *o)
{
	struct sonde_xbuf *b = o->b;
	size_t n = x->ncalls, budget = x->budget;

	if (budget && n > budget) {
		qsort(x->calls, n, sizeof(*x->calls), cmp_dur_desc);
		qsort(x->calls, budget, sizeof(*x->calls), cmp_time);
		if (x->o->note) {
			char msg[200];

			snprintf(msg, sizeof(msg),
				 "%zu traced calls: the %zu longest are written (--max-units 0 writes every one)", n,
				 budget);
			x->o->note(x->o->note_arg, msg);
		}
		n = budget;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sonde_xcall *c = &x->calls[i];
		const struct sonde_exp *e = x->exps[c->exp];
		const struct sonde_view_timeline *tl = sonde_view_timeline(c->kind);
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(x->p.model, c->stack, &depth);

		sep(o);
		xb_s(b, "{\"ph\":\"X\",\"cat\":\"");
		xb_s(b, tl->cat);
		xb_s(b, "\",\"pid\":");
		xb_u(b, pid_of(x, c->exp));
		xb_s(b, ",\"tid\":");
		xb_u(b, track_tid(c->kind, x->threads[c->thread].tid));
		xb_s(b, ",\"ts\":");
		xb_us(b, rel(x, c->t));
		xb_s(b, ",\"dur\":");
		xb_us(b, c->dur);
		xb_s(b, ",\"name\":");
		xb_json(b, tl->name(e, c->index));
		xb_s(b, ",\"args\":{\"caller\":");
		xb_s(b, x->jname[fr[0]]);
		tl->args(b, e, c->index);
		xb_s(b, "}}");
	}
	return n;
}

/* ---- flows: arrows between calls (views/kind.h), as flow events "s" and
 * "f" bound to the calls' complete events: each at its call's start, which
 * the call encloses, and "f" with "bp":"e" (bound to the enclosing
 * event, not the next one). */

struct flowctx {
	struct sonde_export *x;
	struct out *o;
	const struct sonde_view_timeline *tl;
	int kind;
	struct u64map written; /* exp << 36 | index -> written call */
	uint64_t id;	       /* the last flow's id */
	size_t drawn, unwritten;
};

static uint64_t span_key(uint32_t exp, size_t index)
{
	return (uint64_t)exp << 36 | (uint64_t)index;
}

static void flow_end(struct flowctx *fc, const char *ph, const struct sonde_xcall *c, const char *name)
{
	struct sonde_xbuf *b = fc->o->b;

	sep(fc->o);
	xb_s(b, "{\"ph\":\"");
	xb_s(b, ph);
	xb_s(b, "\",\"cat\":\"");
	xb_s(b, fc->tl->cat);
	xb_s(b, "\",\"id\":");
	xb_u(b, fc->id);
	xb_s(b, ",\"pid\":");
	xb_u(b, pid_of(fc->x, c->exp));
	xb_s(b, ",\"tid\":");
	xb_u(b, track_tid(c->kind, fc->x->threads[c->thread].tid));
	xb_s(b, ",\"ts\":");
	xb_us(b, rel(fc->x, c->t));
	xb_s(b, ",\"name\":");
	xb_json(b, name);
	xb_c(b, '}');
}

static int arrow(void *arg, const struct sonde_view_flow *f)
{
	struct flowctx *fc = arg;
	long a = -1, z = -1;

	if (f->from_exp < fc->x->nexps && f->to_exp < fc->x->nexps && f->from < (1ull << 36) && f->to < (1ull << 36)) {
		a = u64map_get(&fc->written, span_key(f->from_exp, f->from));
		z = u64map_get(&fc->written, span_key(f->to_exp, f->to));
	}
	if (a < 0 || z < 0) { /* filtered out, or past the budget */
		fc->unwritten++;
		return 0;
	}
	char name[sizeof(f->name)];

	memcpy(name, f->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	fc->id++;
	flow_end(fc, "s", &fc->x->calls[a], name);
	flow_end(fc, "f\",\"bp\":\"e", &fc->x->calls[z], name);
	fc->drawn++;
	return fc->o->b->err ? -1 : 0;
}

/* The flows of the kinds that have them, between the ncalls calls
 * written; -1 out of memory. */
static int flows(struct sonde_export *x, struct out *o, size_t ncalls)
{
	struct flowctx fc = { .x = x, .o = o };
	int rc = 0;

	for (int id = 1; id <= SONDE_KIND_MAX && !rc; id++) {
		const struct sonde_view_timeline *tl = sonde_view_timeline(id);

		if (!tl || !tl->flows)
			continue;
		u64map_release(&fc.written);
		fc.tl = tl;
		fc.kind = id;
		fc.drawn = fc.unwritten = 0;
		bool any = false;

		for (size_t i = 0; i < ncalls && !rc; i++)
			if (x->calls[i].kind == id && x->calls[i].exp < (1u << 27) && x->calls[i].index < (1ull << 36)) {
				any = true;
				rc = u64map_put(&fc.written, span_key(x->calls[i].exp, x->calls[i].index), (uint32_t)i);
			}
		if (rc || !any)
			continue;
		long lost = tl->flows(x->exps, x->nexps, arrow, &fc);

		if (lost < 0) {
			rc = -1;
			break;
		}
		char msg[300];

		if (lost && x->o->note) {
			snprintf(msg, sizeof(msg), "%ld %s matched nothing in the experiments: no arrow", lost,
				 tl->flow_what);
			x->o->note(x->o->note_arg, msg);
		}
		if (fc.unwritten && x->o->note) {
			snprintf(msg, sizeof(msg), "%zu %s join calls that are not written (filtered, or past the budget): no arrow",
				 fc.unwritten, tl->flow_what);
			x->o->note(x->o->note_arg, msg);
		}
	}
	u64map_release(&fc.written);
	return rc;
}

static void points(struct sonde_export *x, struct out *o)
{
	struct sonde_xbuf *b = o->b;

	for (size_t e = 0; e < x->nexps; e++) {
		size_t n;
		const struct sonde_overview_packet *ov = sonde_exp_overview(x->exps[e], &n);

		for (size_t i = 0; i < n; i++) {
			const char *label = sonde_exp_overview_label(x->exps[e], i);

			sep(o);
			xb_s(b, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"sample_point\",\"pid\":");
			proc_at(x, b, (uint32_t)e, ov[i].time_ns);
			xb_s(b, ",\"name\":");
			xb_json(b, sonde_view_point_reason(ov[i].reason));
			if (label) {
				xb_s(b, ",\"args\":{\"label\":");
				xb_json(b, label);
				xb_c(b, '}');
			}
			xb_c(b, '}');
		}
	}
}

/* The chosen metric's running total of one experiment, in at most
 * COUNTER_POINTS steps of time. */
struct steps {
	uint64_t lo, hi;
	bool any;
	int64_t sum[COUNTER_POINTS];
};

static void step_add(struct steps *st, int pass, uint64_t t, int64_t v)
{
	if (!pass) {
		st->lo = t < st->lo ? t : st->lo;
		st->hi = t > st->hi ? t : st->hi;
		st->any = true;
		return;
	}
	size_t k = (size_t)((double)(t - st->lo) / (double)(st->hi - st->lo + 1) * COUNTER_POINTS);

	k = k < COUNTER_POINTS ? k : COUNTER_POINTS - 1;
	st->sum[k] = (int64_t)((uint64_t)st->sum[k] + (uint64_t)v);
}

/* The counters of every experiment; returns the total of all. */
static int64_t counter(struct sonde_export *x, struct out *o)
{
	struct sonde_xbuf *b = o->b;
	const struct sonde_metric_def *md = sonde_metric(x->metric);
	bool clock = sonde_export_counter_of_events(x->metric);
	int64_t all = 0;
	struct steps *st = malloc(sizeof(*st));

	if (!st)
		return 0;
	for (size_t e = 0; e < x->nexps; e++) {
		memset(st, 0, sizeof(*st));
		st->lo = UINT64_MAX;
		/* pass 0: the span; pass 1: the sums per step */
		for (int pass = 0; pass < 2 && (!pass || st->any); pass++) {
			if (clock) {
				for (size_t i = 0; i < x->nthreads; i++)
					for (size_t k = 0; x->threads[i].exp == e && k < x->threads[i].n; k++)
						step_add(st, pass, x->threads[i].ev[k].t,
							 x->metric == SONDE_M_SAMPLES ? 1 : x->threads[i].ev[k].v);
			} else {
				for (size_t i = 0; i < x->npts; i++)
					if (x->pts[i].exp == e)
						step_add(st, pass, x->pts[i].t, x->pts[i].v);
			}
		}
		if (!st->any)
			continue;
		uint64_t span = st->hi - st->lo + 1;
		int64_t run = 0;

		for (size_t k = 0; k < COUNTER_POINTS; k++) {
			if (!st->sum[k] && k + 1 < COUNTER_POINTS)
				continue;
			run = (int64_t)((uint64_t)run + (uint64_t)st->sum[k]);
			uint64_t at = k + 1 == COUNTER_POINTS
					      ? st->hi
					      : st->lo + (uint64_t)((double)span * (double)(k + 1) / COUNTER_POINTS);

			sep(o);
			xb_s(b, "{\"ph\":\"C\",\"pid\":");
			proc_at(x, b, (uint32_t)e, at);
			xb_s(b, ",\"name\":");
			xb_json(b, md->title);
			xb_s(b, ",\"args\":{\"");
			xb_s(b, md->name);
			xb_s(b, "\":");
			xb_i(b, run);
			xb_s(b, "}}");
		}
		all = (int64_t)((uint64_t)all + (uint64_t)run);
	}
	free(st);
	return all;
}

/* A kind's counter (views/kind.h) over one experiment in COUNTER_POINTS
 * steps of its run: the largest value of each step that has events, at its
 * first event (so the peak shows at its full height however many events a
 * step merges), then the value after the last event. */
struct ksteps {
	uint64_t lo, span;
	uint64_t max[COUNTER_POINTS], at[COUNTER_POINTS];
	bool any[COUNTER_POINTS];
	uint64_t last_value, last_t;
};

static void kstep(void *arg, uint64_t time_ns, uint64_t value)
{
	struct ksteps *h = arg;
	uint64_t t = time_ns > h->lo ? time_ns - h->lo : 0;
	size_t k = (size_t)((double)t / (double)h->span * COUNTER_POINTS);

	k = k < COUNTER_POINTS ? k : COUNTER_POINTS - 1;
	if (!h->any[k]) {
		h->any[k] = true;
		h->at[k] = time_ns;
		h->max[k] = value;
	} else if (value > h->max[k]) {
		h->max[k] = value;
	}
	h->last_value = value;
	h->last_t = time_ns;
}

/* The counters of the kinds that keep one ("Live heap"), for each
 * experiment that has their events; -1 out of memory. */
static int kind_counters(struct sonde_export *x, struct out *o)
{
	struct sonde_xbuf *b = o->b;
	struct ksteps *h = malloc(sizeof(*h));

	if (!h)
		return -1;
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_view_timeline *tl = sonde_view_timeline(id);

		for (size_t e = 0; tl && tl->walk && e < x->nexps; e++) {
			const struct sonde_exp_info *in = sonde_exp_info(x->exps[e]);

			memset(h, 0, sizeof(*h));
			h->lo = in->start_ns;
			h->span = in->end_ns > in->start_ns ? in->end_ns - in->start_ns + 1 : 1;
			long nev = tl->walk(x->exps[e], kstep, h);

			if (nev < 0) {
				free(h);
				return -1;
			}
			for (size_t k = 0; nev && k <= COUNTER_POINTS; k++) {
				if (k < COUNTER_POINTS && !h->any[k])
					continue;
				sep(o);
				xb_s(b, "{\"ph\":\"C\",\"pid\":");
				proc_at(x, b, (uint32_t)e, k < COUNTER_POINTS ? h->at[k] : h->last_t);
				xb_s(b, ",\"name\":");
				xb_json(b, tl->counter);
				xb_s(b, ",\"args\":{\"");
				xb_s(b, tl->counter_arg);
				xb_s(b, "\":");
				xb_u(b, k < COUNTER_POINTS ? h->max[k] : h->last_value);
				xb_s(b, "}}");
			}
		}
	}
	free(h);
	return 0;
}

/* The call track's words: the kinds' whose events are spans, "sync and
 * I/O" (into buf, cap bytes). */
static void track_words(char *buf, size_t cap)
{
	int ids[SONDE_KIND_MAX + 1], n = 0;
	size_t used = 0;

	buf[0] = '\0';
	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (sonde_view_timeline(id) && sonde_view_timeline(id)->dur && !sonde_view_timeline(id)->own_track)
			ids[n++] = id;
	for (int i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ",
					 sonde_view_timeline(ids[i])->track);
}

int sonde_export_chrome(FILE *f, struct sonde_export *x, char *err, size_t errlen)
{
	struct sonde_xbuf b;
	struct out o = { &b, true, NULL, NULL, 0 };
	char name[400], proc[256], track[200];
	uint8_t *has_calls = calloc(x->nthreads + 1, sizeof(*has_calls)); /* bit: a track's */
	int rc = -SONDE_ERR_FAILED;

	if (!has_calls) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	for (size_t i = 0; i < x->ncalls; i++)
		has_calls[x->calls[i].thread] |= (uint8_t)(1u << sonde_view_timeline(x->calls[i].kind)->own_track % OWN_TRACKS);
	track_words(track, sizeof(track));
	xb_init(&b, f);
	xb_s(&b, "{\"traceEvents\":[");
	for (size_t e = 0; e < x->nexps; e++) {
		uint32_t pid = pid_of(x, (uint32_t)e);
		int64_t order = 0;

		/* what a kind knows of it first: "rank 2 (burn [4242])", in its order */
		if (sonde_export_process_known(x->exps[e], proc, sizeof(proc), &order)) {
			meta(&o, "process_name", pid, pid, proc);
			sep(&o);
			xb_s(&b, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
			xb_u(&b, pid);
			xb_s(&b, ",\"tid\":");
			xb_u(&b, pid);
			xb_s(&b, ",\"args\":{\"sort_index\":");
			xb_i(&b, order);
			xb_s(&b, "}}");
		} else {
			meta(&o, "process_name", pid, pid, proc);
		}
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		const struct sonde_xthread *t = &x->threads[i];
		uint32_t pid = pid_of(x, t->exp);

		snprintf(name, sizeof(name), "thread %u%s%s", t->number, t->name ? " " : "", t->name ? t->name : "");
		if (t->n)
			meta(&o, "thread_name", pid, t->tid, name);
		if (has_calls[i] & 1) {
			snprintf(name, sizeof(name), "thread %u: %s calls", t->number, track);
			meta(&o, "thread_name", pid, CALL_TRACK + t->tid, name);
		}
		for (int id = 1; id <= SONDE_KIND_MAX; id++) {
			const struct sonde_view_timeline *tl = sonde_view_timeline(id);

			if (!tl || !tl->dur || !tl->own_track || !(has_calls[i] >> tl->own_track % OWN_TRACKS & 1))
				continue;
			snprintf(name, sizeof(name), "thread %u: %s calls", t->number, tl->track);
			meta(&o, "thread_name", pid, track_tid(id, t->tid), name);
		}
	}
	free(has_calls);
	if (sonde_export_runs(x, true, cost, emit, &o) < 0) {
		snprintf(err, errlen, "%s", b.err ? "error writing the output" : "out of memory");
		goto out;
	}
	size_t written = calls(x, &o);

	if (flows(x, &o, written) < 0) {
		snprintf(err, errlen, "%s", b.err ? "error writing the output" : "out of memory");
		goto out;
	}
	points(x, &o);
	int64_t total = counter(x, &o);

	if (kind_counters(x, &o) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	const struct sonde_metric_def *md = sonde_metric(x->metric);

	xb_s(&b, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"exporter\":\"sonde " SONDE_VERSION
		 "\",\"metric\":\"");
	xb_s(&b, md->name);
	xb_s(&b, "\",\"unit\":\"");
	xb_s(&b, sonde_export_unit(x->metric));
	xb_s(&b, "\",\"total\":");
	xb_i(&b, total);
	xb_s(&b, "}}\n");
	rc = 0;
out:
	if (xb_done(&b) < 0 && !rc) {
		snprintf(err, errlen, "error writing the output");
		rc = -SONDE_ERR_FAILED;
	}
	free(o.open);
	free(o.openat);
	return rc;
}
