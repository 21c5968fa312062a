/*
 * view_index: gprofng's index objects other than threads (-cpus,
 * -seconds, -indxobj, -indxobj_list) and the views that say what a
 * profile is made of (-filters, -describe).  An index object's view is
 * -threads' layout: one row per object, one column per metric of the
 * spec whatever its flavour (an object's exclusive and inclusive totals
 * are the same), <Total> first.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg/dlang.h"
#include "agg/kind.h"
#include "model/profile.h"
#include "views/view_common.h"

#define TOTAL_NAME "<Total>"

/* One row of an index object's view. */
struct irow {
	uint64_t key;	  /* the CPU's or second's number */
	const int64_t *v; /* its totals */
};

struct isort {
	const struct sonde_model *m;
	int mi; /* -1: by key */
};

static int cmp_irows(const void *a, const void *b, void *arg)
{
	const struct isort *s = arg;
	const struct irow *x = a, *y = b;
	int c = s->mi >= 0 ? sonde_model_cmp(s->m, s->mi, y->v, x->v) : 0;

	if (c)
		return c;
	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * The view of n index objects rows (sorted here): a heading "TITLE sorted
 * by metric: ...", an optional note line, then the table: csv / json
 * columns KEY (the object's number), name, the metrics.  label makes a
 * row's name from its key.
 */
static int index_view(FILE *f, const struct sonde_model *m, const struct sonde_view_opts *o, const char *view,
		      const char *title, const char *keyname, struct irow *rows, size_t n, const char *note,
		      void (*label)(char *buf, size_t len, uint64_t key), char *err, size_t errlen)
{
	struct cols c;
	struct icols a;
	struct vt_table t;
	int first[SONDE_MSPEC_MAX];
	int64_t total[SONDE_MAX_METRICS] = { 0 };
	int r = vw_resolve(&c, m, o, NULL, err, errlen);

	if (r < 0)
		return r;
	vw_index_cols(&a, &c);
	vt_init(&t);
	vt_field_key(&t, keyname);
	vt_field_key(&t, "name");
	if (vw_index_fields(&t, m, &a, c.sort_mi, first) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < sonde_model_nmetrics(m); k++)
			total[k] = (int64_t)((uint64_t)total[k] + (uint64_t)rows[i].v[k]); /* wraps */
	struct isort is = { m, c.sort_mi };

	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_irows, &is);
	for (size_t i = 0; i <= n && (!o->limit || i <= o->limit); i++) {
		const struct irow *row = i ? &rows[i - 1] : NULL;
		char name[96];

		if (row)
			label(name, sizeof(name), row->key);
		else
			snprintf(name, sizeof(name), TOTAL_NAME);
		struct vt_row *vr = vt_row(&t, ' ', name);

		if (!vr)
			goto nomem;
		if (row)
			vt_set_n(vr, 0, (int64_t)row->key);
		vt_set_s(vr, 1, row ? vt_str(&t, name) : TOTAL_NAME);
		vw_index_values(vr, m, &a, first, row ? row->v : total, total);
	}
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_text(&em, "%s sorted by metric: %s\n", title,
		c.sort_mi < 0 ? keyname : sonde_model_metric(m, c.sort_mi)->title);
	if (note)
		em_text(&em, "%s\n", note);
	em_text(&em, "\n");
	vw_begin(&em, view, o);
	vw_table_body(&em, &t);
	vt_release(&t);
	return vw_finish(f, err, errlen);
nomem:
	vt_release(&t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

static void cpu_label(char *buf, size_t len, uint64_t key)
{
	if (key == SONDE_CPU_UNKNOWN)
		snprintf(buf, len, "CPU unknown (traced calls, off-CPU samples)");
	else
		snprintf(buf, len, "CPU %llu", (unsigned long long)key);
}

static void second_label(char *buf, size_t len, uint64_t key)
{
	snprintf(buf, len, "Second of execution %llu", (unsigned long long)key);
}

int sonde_view_cpus(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o, char *err,
		    size_t errlen)
{
	struct irow *rows = malloc((p->ncpus + 1) * sizeof(*rows));
	size_t n = 0;
	char note[96];

	if (!rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->ncpus; i++)
		if (p->cpus[i].selected)
			rows[n++] = (struct irow){ p->cpus[i].cpu, p->cpus[i].v };
	snprintf(note, sizeof(note), "%zu of %zu CPUs selected", n, p->ncpus);
	int r = index_view(f, p->model, o, "cpus", "CPUs", "cpu", rows, n, n < p->ncpus ? note : NULL,
			   cpu_label, err, errlen);

	free(rows);
	return r;
}

int sonde_view_seconds(FILE *f, const struct sonde_profile *p, const struct sonde_view_opts *o, char *err,
		       size_t errlen)
{
	struct irow *rows = malloc((p->nseconds + 1) * sizeof(*rows));

	if (!rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->nseconds; i++)
		rows[i] = (struct irow){ p->seconds[i].second, p->seconds[i].v };
	int r = index_view(f, p->model, o, "seconds", "Seconds", "second", rows, p->nseconds, NULL, second_label,
			   err, errlen);

	free(rows);
	return r;
}

/* ---- -indxobj_list ------------------------------------------------------------- */

static const struct sonde_indxobj indxobjs[] = {
	{ "Threads", SONDE_IDX_THREADS, "threads", "the threads, numbered per experiment by tid order" },
	{ "CPUs", SONDE_IDX_CPUS, "cpus", "the CPUs the samples were taken on" },
	{ "Samples", SONDE_IDX_SAMPLES, "samples", "the intervals between sample points" },
	{ "Seconds", SONDE_IDX_SECONDS, "seconds", "the seconds of the run, from each experiment's start" },
	{ "Processes", SONDE_IDX_PROCESSES, "processes", "the processes, one per experiment" },
	{ "Experiment_IDs", SONDE_IDX_EXPERIMENTS, "experiment_list", "the experiments loaded" },
};
#define NINDXOBJS (sizeof(indxobjs) / sizeof(indxobjs[0]))

const struct sonde_indxobj *sonde_indxobj_find(const char *name)
{
	for (size_t i = 0; i < NINDXOBJS; i++)
		if (!strcasecmp(indxobjs[i].name, name))
			return &indxobjs[i];
	return NULL;
}

void sonde_indxobj_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NINDXOBJS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", indxobjs[i].name);
}

void sonde_view_indxobj_list(FILE *f, const struct sonde_view_opts *o)
{
	struct sonde_emit e;

	em_init(&e, f, o->mode);
	em_text(&e, " Index Object Types Available:\n");
	em_csv(&e, "name,command,description\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "indxobj_list");
	em_arr(&e, "types");
	for (size_t i = 0; i < NINDXOBJS; i++) {
		char cmd[40];

		snprintf(cmd, sizeof(cmd), "-%s", indxobjs[i].command);
		em_text(&e, "  %-15s %-17s %s\n", indxobjs[i].name, cmd, indxobjs[i].what);
		em_row(&e);
		em_s(&e, "name", indxobjs[i].name);
		em_s(&e, "command", cmd);
		em_s(&e, "description", indxobjs[i].what);
		em_row_end(&e);
	}
	em_end(&e);
	em_end_doc(&e);
}

/* ---- -filters --------------------------------------------------------------------- */

static void filter_line(struct sonde_emit *e, const char *key, const char *title, const char *cmd,
			const char *value)
{
	bool all = !value || !strcmp(value, "all");

	em_text(e, "  %-12s %-26s %s\n", title, all ? "all" : value, cmd);
	em_row(e);
	em_s(e, "filter", key);
	em_s(e, "command", cmd);
	em_s(e, "value", all ? "all" : value);
	em_row_end(e);
}

void sonde_view_filters(FILE *f, const struct sonde_filters *fl, const struct sonde_view_opts *o)
{
	struct sonde_emit e;
	char buf[160];

	em_init(&e, f, o->mode);
	em_text(&e, "Filters in force (\"all\": none):\n");
	em_csv(&e, "filter,command,value\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "filters");
	em_arr(&e, "filters");
	if (fl->nsel == fl->nall)
		snprintf(buf, sizeof(buf), "all");
	else
		snprintf(buf, sizeof(buf), "%s (%zu of %zu)", fl->experiments ? fl->experiments : "?", fl->nsel,
			 fl->nall);
	filter_line(&e, "experiments", "Experiments", "-experiment_select", buf);
	filter_line(&e, "threads", "Threads", "-thread_select", fl->threads);
	filter_line(&e, "cpus", "CPUs", "-cpu_select", fl->cpus);
	filter_line(&e, "samples", "Samples", "-sample_select", fl->samples);
	if (fl->start_ns || fl->end_ns) {
		if (fl->end_ns)
			snprintf(buf, sizeof(buf), "%.9g-%.9g s", fl->start_ns / 1e9, fl->end_ns / 1e9);
		else
			snprintf(buf, sizeof(buf), "%.9g- s", fl->start_ns / 1e9);
	}
	filter_line(&e, "time", "Time", "-time_select", fl->start_ns || fl->end_ns ? buf : NULL);
	filter_line(&e, "objects", "Objects", "-object_select", fl->objects);
	filter_line(&e, "callpath", "Call path", "-callpath_select", fl->callpath);
	em_end(&e);
	em_end_doc(&e);
}

/* ---- -describe --------------------------------------------------------------------- */

static void describe_fields(struct sonde_emit *e, const char *exp, const char *kind, const char *title,
			    uint64_t events, const struct sonde_dl_kind *k)
{
	em_text(e, "\n%s (%llu events; sonde agg kind '%s')\n", title, (unsigned long long)events, kind);
	em_obj(e, NULL);
	em_s(e, "kind", kind);
	em_s(e, "title", title);
	em_u(e, "events", events);
	em_arr(e, "fields");
	for (size_t i = 0; k && i < k->nfields; i++) {
		const struct sonde_dl_field *fd = &k->fields[i];
		const char *type = fd->type == SONDE_DL_STR ? "string" : "integer";

		em_text(e, "   %-21s %-8s %s\n", fd->name, type, fd->doc);
		em_row(e);
		em_s_csv(e, "experiment", exp);
		em_s_csv(e, "kind", kind);
		em_s(e, "field", fd->name);
		em_s(e, "type", type);
		em_s(e, "description", fd->doc);
		em_row_end(e);
	}
	em_end(e);
	em_end(e);
}

/* Print filters, with what each keeps. */
static const char *const filter_cmds[][2] = {
	{ "-experiment_select all|LIST", "experiments, numbered as -experiment_list shows; rank=0,2-3: MPI ranks" },
	{ "-thread_select all|LIST", "threads, numbered as -threads shows" },
	{ "-cpu_select all|LIST", "CPUs, numbered from 0 as -cpus shows" },
	{ "-sample_select all|LIST", "samples (intervals between sample points), as -samples shows" },
	{ "-time_select START-END", "seconds after each experiment's start (also -time)" },
	{ "-object_select all|OBJ,...", "load objects; the others' functions folded per object" },
	{ "-callpath_select FUNC|A>B,...", "events whose stack holds FUNC, or A calling B directly" },
};

void sonde_view_describe(FILE *f, const struct sonde_exp *const *exps, const char *const *names, size_t n,
			 const struct sonde_view_opts *o)
{
	struct sonde_emit e;

	em_init(&e, f, o->mode);
	em_csv(&e, "experiment,kind,field,type,description\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "describe");
	em_arr(&e, "experiments");
	for (size_t x = 0; x < n; x++) {
		const struct sonde_exp *exp = exps[x];
		const struct sonde_exp_info *in = sonde_exp_info(exp);
		const struct sonde_exp_summary *su = sonde_exp_summary(exp);

		em_text(&e, "%s------ %s ------\n", x ? "\n" : "", names[x]);
		em_text(&e, "\nExperiment\n   %-21s %s, PID %u\n", "process", in->target.command ? in->target.command : "?",
			in->target.pid);
		em_obj(&e, NULL);
		em_s(&e, "experiment", names[x]);
		em_u(&e, "pid", in->target.pid);
		em_arr(&e, "kinds");
		if (sonde_metric_recorded(exp, SONDE_M_TOTALCPU))
			describe_fields(&e, names[x], "profile", "Clock Profiling", su->samples + su->offcpu_samples,
					sonde_dl_kind_of(SONDE_KIND_PROFILE));
		for (int id = 1; id <= SONDE_KIND_MAX; id++) {
			const struct sonde_dl_kind *k = sonde_dl_kind_of(id);

			if (!k || !sonde_kind_modular(id) || !sonde_exp_traced(exp, id))
				continue;
			describe_fields(&e, names[x], k->name, sonde_kind_desc(id)->title, sonde_exp_kind_events(exp, id),
					k);
		}
		em_end(&e);
		em_end(&e);
	}
	em_end(&e);
	em_text(&e, "\nFilters (sonde print; the fields above are sonde agg's, for its predicates)\n");
	em_arr(&e, "filters");
	for (size_t i = 0; i < sizeof(filter_cmds) / sizeof(filter_cmds[0]); i++) {
		em_text(&e, "   %-30s %s\n", filter_cmds[i][0], filter_cmds[i][1]);
		em_obj(&e, NULL);
		em_s(&e, "command", filter_cmds[i][0]);
		em_s(&e, "keeps", filter_cmds[i][1]);
		em_end(&e);
	}
	em_end(&e);
	em_end_doc(&e);
}
