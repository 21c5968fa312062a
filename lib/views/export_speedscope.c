/*
 * speedscope: speedscope's own JSON file format
 * (https://www.speedscope.app/file-format-schema.json, its
 * src/lib/file-format-spec.ts):
 *
 *	{"$schema":"https://www.speedscope.app/file-format-schema.json",
 *	 "exporter":"sonde 0.1.0","name":"burn [4242]: Total CPU Time",
 *	 "shared":{"frames":[{"name":"main","file":"/usr/bin/burn"},...]},
 *	 "profiles":[{"type":"sampled","name":"burn [4242] thread 1 (tid 4242)",
 *		      "unit":"nanoseconds","startValue":0,"endValue":2000000000,
 *		      "samples":[[0,3,7],...],"weights":[1000000,...]},...],
 *	 "activeProfileIndex":2}
 *
 * One sampled profile per thread with events of the chosen metric (its
 * unit "nanoseconds", "bytes" or "none"), in experiment and thread order (speedscope opens the one
 * with the largest total);
 * a sample is a stack, root first, of indices into the frames (one frame
 * per function, its file the function's load object), weighed with the
 * metric's value.  Consecutive events of one stack are one sample whose
 * weight is their sum, so the time-order view shows the thread's events
 * in time order and every total is exact; over the budget (export.h) the
 * events of each bin of time are merged by stack.  Without any event, one
 * empty profile says so (speedscope refuses a file without profiles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/export.h"

#ifndef SONDE_VERSION
#define SONDE_VERSION "0.1.0"
#endif

static size_t cost(const struct sonde_export *x, const struct sonde_xrun *r, const struct sonde_xrun *prev)
{
	int depth;

	sonde_model_stack_funcs(x->p.model, r->stack, &depth);
	return (size_t)depth;
}

struct out {
	struct sonde_xbuf *b;
	size_t nprof;
	const char *unit;
	size_t busiest; /* the profile with the largest total, shown first */
	int64_t most;
};

static void profile_head(struct out *o, const char *name, int64_t total)
{
	struct sonde_xbuf *b = o->b;

	xb_s(b, o->nprof++ ? ",\n{" : "\n{");
	xb_s(b, "\"type\":\"sampled\",\"name\":");
	xb_json(b, name);
	xb_s(b, ",\"unit\":\"");
	xb_s(b, o->unit);
	xb_s(b, "\",\"startValue\":0,\"endValue\":");
	xb_i(b, total);
}

static int emit(struct sonde_export *x, size_t th, const struct sonde_xrun *runs, size_t n, uint64_t bin_ns,
		void *arg)
{
	struct out *o = arg;
	struct sonde_xbuf *b = o->b;
	const struct sonde_xthread *t = &x->threads[th];
	char name[400], proc[256];
	int64_t total = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		total = (int64_t)((uint64_t)total + (uint64_t)runs[i].v);
	int64_t order;

	sonde_export_process_known(x->exps[t->exp], proc, sizeof(proc), &order); /* "rank 2 (burn [4242])" */
	snprintf(name, sizeof(name), "%s thread %u (tid %u)%s%s", proc, t->number, t->tid, t->name ? " " : "",
		 t->name ? t->name : "");
	if (!o->nprof || total > o->most) {
		o->busiest = o->nprof;
		o->most = total;
	}
	profile_head(o, name, total);
	xb_s(b, ",\"samples\":[");
	for (size_t i = 0; i < n; i++) {
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(x->p.model, runs[i].stack, &depth);

		xb_s(b, i ? ",[" : "[");
		for (int k = depth - 1; k >= 0; k--) {
			xb_u(b, fr[k]);
			if (k)
				xb_c(b, ',');
		}
		xb_c(b, ']');
	}
	xb_s(b, "],\"weights\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			xb_c(b, ',');
		xb_i(b, runs[i].v);
	}
	xb_s(b, "]}");
	return b->err ? -1 : 0;
}

int sonde_export_speedscope(FILE *f, struct sonde_export *x, char *err, size_t errlen)
{
	const struct sonde_model *m = x->p.model;
	size_t nf = sonde_model_nfuncs(m);
	struct sonde_xbuf b;
	struct out o = { &b, 0, NULL, 0, 0 };
	char proc[256] = "sonde", name[400];
	const struct sonde_metric_def *md = sonde_metric(x->metric);

	o.unit = md->unit == SONDE_UNIT_NS ? "nanoseconds" : md->unit == SONDE_UNIT_BYTES ? "bytes" : "none";
	if (x->nexps)
		sonde_export_process(x->exps[0], proc, sizeof(proc));
	snprintf(name, sizeof(name), "%s: %s", proc, md->title);
	xb_init(&b, f);
	xb_s(&b, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"sonde "
		 SONDE_VERSION "\",\"name\":");
	xb_json(&b, name);
	xb_s(&b, ",\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i < nf; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, (uint32_t)i);
		const struct sonde_mobject *ob =
			fi->object < sonde_model_nobjects(m) ? sonde_model_objectinfo(m, fi->object) : NULL;

		xb_s(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
		xb_s(&b, x->jname[i]);
		if (ob && ob->path) {
			xb_s(&b, ",\"file\":");
			xb_json(&b, ob->path);
		}
		xb_c(&b, '}');
	}
	xb_s(&b, "]},\n\"profiles\":[");
	if (sonde_export_runs(x, false, cost, emit, &o) < 0) {
		xb_done(&b);
		snprintf(err, errlen, "%s", b.err ? "error writing the output" : "out of memory");
		return -SONDE_ERR_FAILED;
	}
	if (!o.nprof) {
		snprintf(name, sizeof(name), "%s: no events with a value of %s", proc, md->name);
		profile_head(&o, name, 0);
		xb_s(&b, ",\"samples\":[],\"weights\":[]}");
	}
	xb_s(&b, "],\n\"activeProfileIndex\":");
	xb_u(&b, o.busiest);
	xb_s(&b, "}\n");
	if (xb_done(&b) < 0) {
		snprintf(err, errlen, "error writing the output");
		return -SONDE_ERR_FAILED;
	}
	return 0;
}
