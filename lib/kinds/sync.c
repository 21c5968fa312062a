/*
 * The sync kind (sonde collect -s): synchronization waits, one event per
 * traced wait (SONDE_PKT_SYNC, include/sonde/format.h).  The whole kind on
 * the analyzer's side (base/kindmod.h): its reading, its metrics (Sync
 * Wait Time and Count), its `sonde agg` events, its -dump and -header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "agg/kind.h"
#include "base/grow.h"
#include "model/kind.h"
#include "reader/kind.h"
#include "views/export.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

struct sync_state {
	struct sonde_sync_event *v;
	size_t n, cap;
};

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_SYNC)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	const struct sonde_sync_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct sync_state *s;

	if (h->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "sync", h->size, sizeof(*p));
	if (!(s = sonde_rk_state_new(exp, SONDE_KIND_SYNC, sizeof(*s))))
		return NULL;
	if (sonde_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->v[s->n++] = (struct sonde_sync_event){ sonde_rk_tid(sc), p->func,   p->result,  p->time_ns,
						  p->wait_ns,	    p->object, p->stack_id };
	sonde_rk_stack_ref(exp, p->stack_id);
	return NULL;
}

const struct sonde_sync_event *sonde_exp_sync_events(const struct sonde_exp *exp, size_t *n)
{
	const struct sync_state *s = sonde_rk_state(exp, SONDE_KIND_SYNC);

	*n = s ? s->n : 0;
	return s ? s->v : NULL;
}

static size_t events(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_sync_events(exp, &n);
	return n;
}

SONDE_RK_TIME_SORT(sort_sync, struct sonde_sync_event)

static void finish(struct sonde_exp *exp)
{
	struct sync_state *s = sonde_rk_state(exp, SONDE_KIND_SYNC);

	if (!s || s->n < 2)
		return;
	struct sonde_sync_event *tmp = malloc(s->n * sizeof(*tmp));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_sync(s->v, tmp, s->n);
	free(tmp);
}

static void free_state(void *state)
{
	struct sync_state *s = state;

	free(s->v);
	free(s);
}

const char *sonde_sync_func_name(unsigned func)
{
	static const char *const names[] = {
		[SONDE_SYNC_MUTEX_LOCK] = "pthread_mutex_lock",
		[SONDE_SYNC_MUTEX_TIMEDLOCK] = "pthread_mutex_timedlock",
		[SONDE_SYNC_MUTEX_CLOCKLOCK] = "pthread_mutex_clocklock",
		[SONDE_SYNC_COND_WAIT] = "pthread_cond_wait",
		[SONDE_SYNC_COND_TIMEDWAIT] = "pthread_cond_timedwait",
		[SONDE_SYNC_COND_CLOCKWAIT] = "pthread_cond_clockwait",
		[SONDE_SYNC_RWLOCK_RDLOCK] = "pthread_rwlock_rdlock",
		[SONDE_SYNC_RWLOCK_TIMEDRDLOCK] = "pthread_rwlock_timedrdlock",
		[SONDE_SYNC_RWLOCK_CLOCKRDLOCK] = "pthread_rwlock_clockrdlock",
		[SONDE_SYNC_RWLOCK_WRLOCK] = "pthread_rwlock_wrlock",
		[SONDE_SYNC_RWLOCK_TIMEDWRLOCK] = "pthread_rwlock_timedwrlock",
		[SONDE_SYNC_RWLOCK_CLOCKWRLOCK] = "pthread_rwlock_clockwrlock",
		[SONDE_SYNC_SEM_WAIT] = "sem_wait",
		[SONDE_SYNC_SEM_TIMEDWAIT] = "sem_timedwait",
		[SONDE_SYNC_SEM_CLOCKWAIT] = "sem_clockwait",
		[SONDE_SYNC_BARRIER_WAIT] = "pthread_barrier_wait",
		[SONDE_SYNC_JOIN] = "pthread_join",
		[SONDE_SYNC_TIMEDJOIN] = "pthread_timedjoin_np",
		[SONDE_SYNC_CLOCKJOIN] = "pthread_clockjoin_np",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), func);
}

/* <trace kind="sync" mode="on|all|N" threshold_ns="N"/>: the settings. */
static void log_trace(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e)
{
	struct sonde_exp_info *in = sonde_rk_info(exp);
	const char *m = sonde_xml_attr(e, "mode");

	if (m)
		in->settings.sync_mode = m;
	if (sonde_xml_attr(e, "threshold_ns"))
		sonde_rk_attr_u64(exp, file, e, "threshold_ns", &in->settings.sync_threshold_ns);
}

static const struct sonde_reader_kind reader = {
	.take = take, .events = events, .finish = finish, .free = free_state, .log_trace = log_trace,
};

/* ---- metrics ------------------------------------------------------------------------- */

enum { M_WAIT, M_COUNT, M_N };

static const struct sonde_metric_def metrics[M_N] = {
	[M_WAIT] = { "sync", "Sync Wait Time", "Sync Wait", SONDE_UNIT_NS },
	[M_COUNT] = { "syncn", "Sync Wait Count", "Sync Waits", SONDE_UNIT_COUNT },
};

static int feed(struct sonde_model_feed *f, const struct sonde_exp *exp)
{
	size_t n;
	const struct sonde_sync_event *e = sonde_exp_sync_events(exp, &n);

	for (size_t i = 0; i < n; i++) {
		int64_t v[M_N] = { [M_WAIT] = (int64_t)e[i].wait_ns, [M_COUNT] = 1 };

		if (sonde_model_feed_event(f, i, e[i].tid, e[i].time_ns, e[i].stack_id, v) < 0)
			return -1;
	}
	return 0;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = M_N,
	.default_metrics = "e.sync:i.sync:e.syncn:",
	.sort = "sync",
	.feed = feed,
};

/* ---- sonde agg ----------------------------------------------------------------------- */

enum {
	F_TID,
	F_TIME,	    /* ns since the experiment start */
	F_WAIT,	    /* ns waited */
	F_OBJECT,   /* the object waited on, a string "0x55d0c0ffee40" */
	F_FUNC,	    /* function that called the sync function */
	F_CALLER,   /* its caller */
	F_SYNCFUNC, /* "pthread_mutex_lock", ... */
	F_RESULT,   /* the call's result */
	F_N
};

static const struct sonde_dl_field fields[F_N] = {
	[F_TID] = { "tid", SONDE_DL_INT, "thread id" },
	[F_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started (the call's start)" },
	[F_WAIT] = { "wait", SONDE_DL_INT, "nanoseconds the call waited" },
	[F_OBJECT] = { "object", SONDE_DL_STR, "the mutex, condition variable, ... or joined thread, as \"0x...\"" },
	[F_FUNC] = { "func", SONDE_DL_STR, "function that made the call (the stack's leaf)" },
	[F_CALLER] = { "caller", SONDE_DL_STR, "function that called func" },
	[F_SYNCFUNC] = { "syncfunc", SONDE_DL_STR, "the traced function: \"pthread_mutex_lock\", ..." },
	[F_RESULT] = { "result", SONDE_DL_INT, "the call's result (0, ETIMEDOUT, ...; sem_*: errno)" },
};

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen);

static const struct sonde_dl_kind agg = {
	.name = "sync",
	.fields = fields,
	.nfields = F_N,
	.doc = "one event per traced synchronization wait (sonde collect -s)",
	.run = run,
};

struct run {
	const struct sonde_sync_event *e;
	bool want_obj;
};

static int fill(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals, uint64_t *stack_id,
		uint64_t *time_ns)
{
	const struct run *r = arg;
	const struct sonde_sync_event *e = &r->e[i];

	vals[F_TID].i = e->tid;
	vals[F_TIME].i = (int64_t)(e->time_ns - t->start);
	vals[F_WAIT].i = (int64_t)e->wait_ns;
	vals[F_RESULT].i = e->result;
	*stack_id = e->stack_id;
	*time_ns = e->time_ns;
	if (r->want_obj) {
		char buf[32];

		snprintf(buf, sizeof(buf), "0x%" PRIx64, e->object);
		if (sonde_dl_trace_str(t, &vals[F_OBJECT], buf) < 0)
			return -1;
	}
	return sonde_dl_trace_fname(t, &vals[F_SYNCFUNC], e->func, sonde_sync_func_name);
}

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen)
{
	size_t n;
	struct run r = { sonde_exp_sync_events(exp, &n), sonde_dl_uses_field(p, &agg, F_OBJECT) };

	return sonde_dl_trace_run(p, exp, &agg, n, F_FUNC, F_CALLER, name_of_pc, ctx, fill, &r, err, errlen);
}

/* ---- views --------------------------------------------------------------------------- */

static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_sync_event *e = sonde_exp_sync_events(exp, &n);

	fprintf(out, "# %zu sync wait events of %s, by time; time in seconds since the start\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		fprintf(out,
			"sync %zu  time %.9f  tid %u  func %s  wait %" PRIu64 " ns  object 0x%" PRIx64
			"  result %d  stack 0x%" PRIx64,
			i, sonde_dump_since(in, e[i].time_ns), e[i].tid, sonde_sync_func_name(e[i].func),
			e[i].wait_ns, e[i].object, e[i].result, e[i].stack_id);
		sonde_dump_stack(out, dyn, exp, e[i].stack_id, e[i].time_ns);
	}
	return 0;
}

static uint64_t total_wait(const struct sonde_exp *exp, size_t *n)
{
	const struct sonde_sync_event *e = sonde_exp_sync_events(exp, n);
	uint64_t w = 0;

	for (size_t i = 0; i < *n; i++)
		w += e[i].wait_ns; /* wraps like the metrics */
	return w;
}

static void header_text(FILE *out, const struct sonde_exp *exp)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	uint64_t w = total_wait(exp, &n);

	fprintf(out, "%-*s%zu waits, %.6f s waited, threshold %.3f us (%s)\n", SONDE_HEADER_LABEL_W,
		"Sync tracing:", n, (double)w / 1e9, (double)in->settings.sync_threshold_ns / 1e3,
		in->settings.sync_mode && *in->settings.sync_mode ? in->settings.sync_mode : "?");
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	size_t n;
	uint64_t w = total_wait(exp, &n);

	em_u(k, "events", n);
	em_u(k, "wait_ns", w);
	em_u(k, "threshold_ns", sonde_exp_info(exp)->settings.sync_threshold_ns);
}

/* ---- its timeline and report ---- */

/* A wait is a span: the function, the lock or condition it waited on. */
static uint64_t span_dur(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_sync_event *se = sonde_exp_sync_events(exp, &n);

	return i < n ? se[i].wait_ns : 0;
}

static const char *span_name(const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_sync_event *se = sonde_exp_sync_events(exp, &n);

	return i < n ? sonde_sync_func_name(se[i].func) : "?";
}

static void span_args(struct sonde_xbuf *b, const struct sonde_exp *exp, size_t i)
{
	size_t n;
	const struct sonde_sync_event *se = sonde_exp_sync_events(exp, &n);
	char a[40];

	if (i >= n)
		return;
	snprintf(a, sizeof(a), "0x%llx", (unsigned long long)se[i].object);
	xb_s(b, ",\"object\":\"");
	xb_s(b, a);
	xb_c(b, '"');
}

static const struct sonde_view_timeline timeline = {
	.cat = "sync",
	.track = "sync",
	.dur = span_dur,
	.name = span_name,
	.args = span_args,
};

static const struct sonde_view_report_view report[] = {
	{ "sync", sonde_view_sync },
	{ NULL, NULL },
};

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
	.timeline = &timeline,
	.report = report,
	.report_place = 2,
};

const struct sonde_kind_module sonde_kind_module_SYNC = {
	.reader = &reader,
	.model = &model,
	.agg = &agg,
	.view = &view,
};
