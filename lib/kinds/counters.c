/*
 * The counters kind (sonde collect -h): counter overflow samples, one
 * event per overflow of a thread's counter (SONDE_PKT_COUNTER,
 * include/sonde/format.h), weighed with the events since the thread's
 * previous sample of that counter.  The whole kind on the analyzer's side
 * (base/kindmod.h): its reading, its metrics (one per counter, named as
 * the counter), its `sonde agg` events, its -dump and -header.
 *
 * Metrics per counter.  The table of every metric is assembled once at
 * start-up (model/profile.c) while counters are named at collection time,
 * so the kind has SONDE_MAX_COUNTERS metric slots, "counter1" to
 * "counter4" until an experiment names them: each distinct counter name
 * met in log.xml (<trace kind="counters" name=...>) takes the next free
 * slot, whose name, title and column header become the counter's (the
 * strings live here, the table holds pointers to them).  Experiments
 * opened together share a slot per counter name, so -compare and the
 * descendants add up the same counter; a fifth distinct name is a read
 * problem and its samples are not counted.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/kind.h"
#include "base/grow.h"
#include "model/kind.h"
#include "reader/kind.h"
#include "views/kind.h"

/* ---- metric slots ------------------------------------------------------------------------ */

#define SLOT_NAME 64
static char slot_name[SONDE_MAX_COUNTERS][SLOT_NAME] = { "counter1", "counter2", "counter3", "counter4" };
static char slot_title[SONDE_MAX_COUNTERS][SLOT_NAME + 8] = { "Counter 1", "Counter 2", "Counter 3", "Counter 4" };
static char slot_abbr[SONDE_MAX_COUNTERS][SLOT_NAME + 8] = { "Counter 1", "Counter 2", "Counter 3", "Counter 4" };
static int nslots;
/* "e.NAME:i.NAME:" for each slot in use, and the first one's name. */
static char default_spec[SONDE_MAX_COUNTERS * (2 * SLOT_NAME + 8)];
static char default_sort[SLOT_NAME] = "counter1";

_Static_assert(SONDE_MAX_COUNTERS == 4, "a slot name per counter");

static struct sonde_metric_def metrics[SONDE_MAX_COUNTERS] = {
	{ slot_name[0], slot_title[0], slot_abbr[0], SONDE_UNIT_COUNT },
	{ slot_name[1], slot_title[1], slot_abbr[1], SONDE_UNIT_COUNT },
	{ slot_name[2], slot_title[2], slot_abbr[2], SONDE_UNIT_COUNT },
	{ slot_name[3], slot_title[3], slot_abbr[3], SONDE_UNIT_COUNT },
};

/* The slot of counter name (taken when new, with its title), -1 when all
 * are taken. */
static int slot_of(const char *name, const char *title)
{
	for (int i = 0; i < nslots; i++)
		if (!strcmp(slot_name[i], name))
			return i;
	if (nslots == SONDE_MAX_COUNTERS)
		return -1;
	int i = nslots++;
	snprintf(slot_name[i], sizeof(slot_name[i]), "%s", name);
	snprintf(slot_title[i], sizeof(slot_title[i]), "%s", title && *title ? title : name);
	snprintf(slot_abbr[i], sizeof(slot_abbr[i]), "%s", title && *title ? title : name);
	size_t used = 0;
	default_spec[0] = '\0';
	for (int k = 0; k < nslots; k++)
		used += (size_t)snprintf(default_spec + used, sizeof(default_spec) - used, "e.%s:i.%s:",
					 slot_name[k], slot_name[k]);
	snprintf(default_sort, sizeof(default_sort), "%s", slot_name[0]);
	return i;
}

/* Names the slots of the counters of the experiment at dir from its
 * log.xml alone, before it is opened: `sonde print` checks -metrics and
 * -sort (e.page-faults) while it parses its arguments, before it opens
 * the experiments. */
void sonde_counters_from_log(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/log.xml", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (!strstr(line, "<trace kind=\"counters\""))
			continue;
		struct sonde_xml x;
		struct sonde_xml_elem e;
		char err[128];
		sonde_xml_init(&x, line, (size_t)len);
		if (sonde_xml_next(&x, &e, err, sizeof(err)) == 1 && sonde_xml_attr(&e, "name") &&
		    *sonde_xml_attr(&e, "name"))
			slot_of(sonde_xml_attr(&e, "name"), sonde_xml_attr(&e, "title"));
	}
	free(line);
	fclose(f);
}

/* ---- reading ------------------------------------------------------------------------- */

struct counter_info {
	char name[SLOT_NAME], title[SLOT_NAME], unit[16];
	uint64_t interval, type, config;
	int slot; /* -1: no slot left */
	bool set;
};

/* One overflow sample: its thread, the counter's index in log.xml, the
 * CPU, time, events and stack. */
struct sonde_counter_event {
	uint32_t tid;
	uint16_t counter, cpu;
	uint64_t time_ns, weight, stack_id;
};

struct counters_state {
	struct sonde_counter_event *v;
	size_t n, cap;
	struct counter_info c[SONDE_MAX_COUNTERS];
	int nc;
	uint64_t unknown; /* samples of a counter log.xml does not name */
};

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_COUNTER)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	const struct sonde_counter_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct counters_state *s;

	if (h->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "counter", h->size, sizeof(*p));
	if (p->counter >= SONDE_MAX_COUNTERS) {
		snprintf(why, whylen, "counter packet of counter %u (at most %d)", p->counter, SONDE_MAX_COUNTERS);
		return why;
	}
	if (!(s = sonde_rk_state_new(exp, SONDE_KIND_COUNTERS, sizeof(*s))))
		return NULL;
	if (sonde_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->v[s->n++] = (struct sonde_counter_event){ sonde_rk_tid(sc), p->counter, p->cpu, p->time_ns, p->weight,
						     p->stack_id };
	sonde_rk_stack_ref(exp, p->stack_id);
	return NULL;
}

static const struct sonde_counter_event *sonde_exp_counter_events(const struct sonde_exp *exp, size_t *n)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);

	*n = s ? s->n : 0;
	return s ? s->v : NULL;
}

/* The name of counter i of exp as log.xml names it, NULL when it does not. */
static const char *sonde_exp_counter_name(const struct sonde_exp *exp, unsigned i)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);

	return s && i < SONDE_MAX_COUNTERS && s->c[i].set ? s->c[i].name : NULL;
}

static size_t events(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_counter_events(exp, &n);
	return n;
}

SONDE_RK_TIME_SORT(sort_counters, struct sonde_counter_event)

static void finish(struct sonde_exp *exp)
{
	struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);

	if (!s || s->n < 2)
		return;
	struct sonde_counter_event *tmp = malloc(s->n * sizeof(*tmp));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_counters(s->v, tmp, s->n);
	free(tmp);
}

static void free_state(void *state)
{
	struct counters_state *s = state;

	free(s->v);
	free(s);
}

static void copy_attr(char *dst, size_t cap, const struct sonde_xml_elem *e, const char *attr)
{
	const char *v = sonde_xml_attr(e, attr);

	snprintf(dst, cap, "%s", v ? v : "");
}

/* <trace kind="counters" index="I" name="page-faults" title="Page Faults"
 * unit="events" type="1" config="2" interval="1"/>: one counter. */
static void log_trace(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e)
{
	uint64_t idx;
	struct counters_state *s;

	if (!sonde_xml_attr(e, "index") || !sonde_xml_attr(e, "name"))
		return;
	if (!sonde_rk_attr_u64(exp, file, e, "index", &idx) || idx >= SONDE_MAX_COUNTERS)
		return;
	if (!(s = sonde_rk_state_new(exp, SONDE_KIND_COUNTERS, sizeof(*s))))
		return;
	struct counter_info *c = &s->c[idx];

	copy_attr(c->name, sizeof(c->name), e, "name");
	copy_attr(c->title, sizeof(c->title), e, "title");
	copy_attr(c->unit, sizeof(c->unit), e, "unit");
	if (sonde_xml_attr(e, "interval"))
		sonde_rk_attr_u64(exp, file, e, "interval", &c->interval);
	if (sonde_xml_attr(e, "type"))
		sonde_rk_attr_u64(exp, file, e, "type", &c->type);
	if (sonde_xml_attr(e, "config"))
		sonde_rk_attr_u64(exp, file, e, "config", &c->config);
	if (!c->name[0]) {
		snprintf(c->name, sizeof(c->name), "counter%u", (unsigned)idx + 1);
	}
	c->slot = slot_of(c->name, c->title);
	c->set = true;
	if (idx + 1 > (uint64_t)s->nc)
		s->nc = (int)idx + 1;
}

static const struct sonde_reader_kind reader = {
	.take = take, .events = events, .finish = finish, .free = free_state, .log_trace = log_trace,
};

/* ---- metrics ------------------------------------------------------------------------- */

static int feed(struct sonde_model_feed *f, const struct sonde_exp *exp)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);

	if (!s)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct sonde_counter_event *e = &s->v[i];
		int slot = e->counter < SONDE_MAX_COUNTERS && s->c[e->counter].set ? s->c[e->counter].slot : -1;

		if (slot < 0)
			continue; /* a counter without its log.xml line, or past the slots */
		int64_t v[SONDE_MAX_COUNTERS] = { 0 };

		v[slot] = (int64_t)e->weight;
		sonde_model_feed_cpu(f, e->cpu);
		if (sonde_model_feed_event(f, i, e->tid, e->time_ns, e->stack_id, v) < 0)
			return -1;
	}
	return 0;
}

/* Slot i is recorded by exp when its log.xml names that slot's counter. */
static bool recorded(const struct sonde_exp *exp, int i)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);

	for (int k = 0; s && k < s->nc; k++)
		if (s->c[k].set && s->c[k].slot == i)
			return true;
	return false;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = SONDE_MAX_COUNTERS,
	.default_metrics = default_spec,
	.sort = default_sort,
	.feed = feed,
	.recorded = recorded,
};

/* ---- sonde agg ----------------------------------------------------------------------- */

enum {
	F_TID,
	F_TIME,	   /* ns since the experiment start */
	F_COUNTER, /* "page-faults" */
	F_WEIGHT,  /* events the sample stands for */
	F_FUNC,	   /* the stack's leaf function */
	F_CALLER,  /* its caller */
	F_N
};

static const struct sonde_dl_field fields[F_N] = {
	[F_TID] = { "tid", SONDE_DL_INT, "thread id" },
	[F_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started" },
	[F_COUNTER] = { "counter", SONDE_DL_STR, "the counter's name: \"page-faults\", \"cycles\", ..." },
	[F_WEIGHT] = { "weight", SONDE_DL_INT, "events of the counter the sample stands for" },
	[F_FUNC] = { "func", SONDE_DL_STR, "function the counter overflowed in (the stack's leaf)" },
	[F_CALLER] = { "caller", SONDE_DL_STR, "function that called func" },
};

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen);

static const struct sonde_dl_kind agg = {
	.name = "counters",
	.fields = fields,
	.nfields = F_N,
	.doc = "one event per counter overflow sample (sonde collect -h)",
	.run = run,
};

static int fill(struct sonde_dl_trace *t, void *arg, size_t i, struct sonde_dl_val *vals, uint64_t *stack_id,
		uint64_t *time_ns)
{
	const struct sonde_exp *exp = arg;
	size_t n;
	const struct sonde_counter_event *e = &sonde_exp_counter_events(exp, &n)[i];
	const char *name = sonde_exp_counter_name(exp, e->counter);

	vals[F_TID].i = e->tid;
	vals[F_TIME].i = (int64_t)(e->time_ns - t->start);
	vals[F_WEIGHT].i = (int64_t)e->weight;
	*stack_id = e->stack_id;
	*time_ns = e->time_ns;
	return sonde_dl_trace_str(t, &vals[F_COUNTER], name ? name : "?");
}

static int64_t run(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		   char *err, size_t errlen)
{
	size_t n;

	sonde_exp_counter_events(exp, &n);
	return sonde_dl_trace_run(p, exp, &agg, n, F_FUNC, F_CALLER, name_of_pc, ctx, fill, (void *)exp, err,
				  errlen);
}

/* ---- views --------------------------------------------------------------------------- */

static int dump(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_counter_event *e = sonde_exp_counter_events(exp, &n);

	fprintf(out, "# %zu counter overflow samples of %s, by time; time in seconds since the start\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		const char *name = sonde_exp_counter_name(exp, e[i].counter);

		fprintf(out, "counter %zu  time %.9f  tid %u  cpu %u  counter %s  weight %" PRIu64 "  stack 0x%" PRIx64,
			i, sonde_dump_since(in, e[i].time_ns), e[i].tid, (unsigned)e[i].cpu, name ? name : "?",
			e[i].weight, e[i].stack_id);
		sonde_dump_stack(out, dyn, exp, e[i].stack_id, e[i].time_ns);
	}
	return 0;
}

/* Each counter's samples and events. */
static void totals(const struct sonde_exp *exp, uint64_t *samples, uint64_t *sum)
{
	size_t n;
	const struct sonde_counter_event *e = sonde_exp_counter_events(exp, &n);

	for (size_t i = 0; i < n; i++)
		if (e[i].counter < SONDE_MAX_COUNTERS) {
			samples[e[i].counter]++;
			sum[e[i].counter] += e[i].weight; /* wraps like the metrics */
		}
}

static void header_text(FILE *out, const struct sonde_exp *exp)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);
	uint64_t samples[SONDE_MAX_COUNTERS] = { 0 }, sum[SONDE_MAX_COUNTERS] = { 0 };

	totals(exp, samples, sum);
	if (!s || !s->nc) {
		fprintf(out, "%-*s(no counter named in log.xml)\n", SONDE_HEADER_LABEL_W, "Counters:");
		return;
	}
	for (int i = 0; i < s->nc; i++) {
		const struct counter_info *c = &s->c[i];

		if (!c->set)
			continue;
		fprintf(out, "%-*s%s, interval %" PRIu64 " (%s): %" PRIu64 " samples, %" PRIu64 " %s\n",
			SONDE_HEADER_LABEL_W, i ? "" : "Counters:", c->name, c->interval, c->title[0] ? c->title : "?",
			samples[i], sum[i], c->unit[0] ? c->unit : "events");
	}
}

static void header_doc(struct sonde_emit *k, const struct sonde_exp *exp)
{
	const struct counters_state *s = sonde_rk_state(exp, SONDE_KIND_COUNTERS);
	uint64_t samples[SONDE_MAX_COUNTERS] = { 0 }, sum[SONDE_MAX_COUNTERS] = { 0 };
	size_t n;

	totals(exp, samples, sum);
	sonde_exp_counter_events(exp, &n);
	em_u(k, "events", n);
	for (int i = 0; s && i < s->nc; i++) {
		const struct counter_info *c = &s->c[i];
		char key[SLOT_NAME + 16];

		if (!c->set)
			continue;
		snprintf(key, sizeof(key), "%s.interval", c->name);
		em_u(k, key, c->interval);
		snprintf(key, sizeof(key), "%s.samples", c->name);
		em_u(k, key, samples[i]);
		snprintf(key, sizeof(key), "%s.events", c->name);
		em_u(k, key, sum[i]);
	}
}

static const struct sonde_view_kind view = {
	.dump = dump,
	.header_text = header_text,
	.header_doc = header_doc,
};

const struct sonde_kind_module sonde_kind_module_COUNTERS = {
	.reader = &reader,
	.model = &model,
	.agg = &agg,
	.view = &view,
};
