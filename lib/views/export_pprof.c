/*
 * pprof: the profile.proto of github.com/google/pprof (proto/profile.proto),
 * gzip-compressed, as `go tool pprof`, pprof, speedscope, Pyroscope and
 * Perfetto read it.
 *
 * The protobuf is encoded here by hand: the message is small (varints and
 * length-delimited fields of a dozen message types), and encoding it
 * ourselves adds no run-time dependency (libprotobuf-c and a generated
 * profile.pb-c.c would be one more library for sonde to link and its
 * users to install); zlib, which the symbol layer links already, makes the
 * gzip stream.
 *
 * What is written:
 *
 *   sample_type  one per metric the experiments recorded, in the order of
 *                sonde_profile_metrics, named as sonde print names them
 *                ("totalcpu"/"nanoseconds", "samples"/"count",
 *                "heapleakbytes"/"bytes", ...); default_sample_type is
 *                the chosen metric (go tool pprof shows it first);
 *   sample       one per distinct stack of the profile (the model's
 *                stacks: function-level call paths, after sonde print's
 *                filters) with a value for every sample type: the exact
 *                sums sonde print adds up, so pprof's totals equal
 *                sonde print's <Total>;
 *   location     one per function (a function-level profile: the model
 *                merges the frames of a function): id, its mapping, its
 *                address in its object, and one line naming it;
 *   function     name as -name chooses (long by default, as sonde print
 *                shows), system_name the mangled name (none for a
 *                name made for an address);
 *   mapping      one per load object (the founder's executable first):
 *                its path, build id, and has_functions set, so that
 *                pprof does not try to symbolize; addresses are the
 *                objects' own (pc - base), from 0;
 *   period       the clock-profiling interval, time_nanos the wall clock
 *                at the start, duration_nanos the experiments' span,
 *                comments naming the experiments and the metric.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "views/export.h"

/* ---- the encoder ------------------------------------------------------------------- */

struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

enum { WT_VARINT = 0, WT_LEN = 2 };

static uint8_t *pb_room(struct pb *p, size_t k)
{
	if (p->oom || sonde_grow(&p->b, &p->cap, p->n + k, 1, 4096) < 0) {
		p->oom = true;
		return NULL;
	}
	return p->b + p->n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t *q = pb_room(p, 10);

	if (!q)
		return;
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
		p->n++;
	}
	*q = (uint8_t)v;
	p->n++;
}

static void pb_key(struct pb *p, unsigned field, unsigned wt)
{
	pb_varint(p, (uint64_t)field << 3 | wt);
}

/* A varint field; proto3 leaves zeros out. */
static void pb_u(struct pb *p, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(p, field, WT_VARINT);
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, unsigned field, const void *d, size_t n)
{
	pb_key(p, field, WT_LEN);
	pb_varint(p, n);
	uint8_t *q = pb_room(p, n);

	if (q && n) {
		memcpy(q, d, n);
		p->n += n;
	}
}

static void pb_msg(struct pb *p, unsigned field, const struct pb *sub)
{
	if (sub->oom)
		p->oom = true;
	pb_bytes(p, field, sub->b, sub->n);
}

/* Packed repeated varints (int64 values as their two's complement). */
static void pb_packed(struct pb *p, struct pb *tmp, unsigned field, const uint64_t *v, size_t n)
{
	tmp->n = 0;
	for (size_t i = 0; i < n; i++)
		pb_varint(tmp, v[i]);
	pb_msg(p, field, tmp);
}

/* ---- the string table --------------------------------------------------------------- */

struct strings {
	struct u64map map; /* hash (probed) -> index */
	const char **v;	   /* not owned */
	size_t n, cap;
	bool oom;
};

static uint64_t str_id(struct strings *t, const char *s)
{
	if (!s)
		s = "";
	uint64_t h = u64map_hash_str(s);

	for (long i = u64map_get(&t->map, h); i >= 0; i = u64map_get(&t->map, h)) {
		if (!strcmp(t->v[i], s))
			return (uint64_t)i;
		h = h * 31 + 7;
	}
	if (sonde_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256) < 0 ||
	    u64map_put(&t->map, h, (uint32_t)t->n) < 0) {
		t->oom = true;
		return 0;
	}
	t->v[t->n] = s;
	return t->n++;
}

/* ---- gzip ------------------------------------------------------------------------------ */

static int gzip_out(FILE *f, const uint8_t *d, size_t n)
{
	z_stream z;
	uint8_t out[65536];
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)d;
	z.avail_in = (uInt)n; /* a profile over 4 GiB is not a case */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, Z_FINISH);
		size_t got = sizeof(out) - z.avail_out;

		if (rc == Z_STREAM_ERROR || (got && fwrite(out, 1, got, f) != got)) {
			deflateEnd(&z);
			return -1;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

/* ---- the profile ----------------------------------------------------------------------- */

int sonde_export_pprof(FILE *f, struct sonde_export *x, char *err, size_t errlen)
{
	const struct sonde_model *m = x->p.model;
	size_t nf = sonde_model_nfuncs(m), no = sonde_model_nobjects(m), ns = sonde_model_nstacks(m);
	struct pb p = { 0 }, sub = { 0 }, tmp = { 0 }, line = { 0 };
	struct strings st = { 0 };
	int types[SONDE_MAX_METRICS], nt = 0, rc = -SONDE_ERR_FAILED;
	bool *used = calloc(nf + 1, sizeof(*used));
	uint64_t *vals = malloc((SONDE_MAX_METRICS + 1) * sizeof(*vals)), *locs = NULL;
	uint64_t *olimit = calloc(no + 1, sizeof(*olimit));
	uint32_t *omap = calloc(no + 1, sizeof(*omap)); /* object -> mapping id */
	size_t caplocs = 0;

	if (!used || !vals || !olimit || !omap)
		goto oom;
	str_id(&st, ""); /* string_table[0] */
	for (int k = 0; k < sonde_nmetrics(); k++)
		if (x->recorded[k] || k == x->metric)
			types[nt++] = k;

	/* sample_type */
	for (int k = 0; k < nt; k++) {
		sub.n = 0;
		pb_u(&sub, 1, str_id(&st, sonde_metric(types[k])->name));
		pb_u(&sub, 2, str_id(&st, sonde_export_unit(types[k])));
		pb_msg(&p, 1, &sub);
	}
	/* samples: every stack with a value */
	for (size_t s = 0; s < ns; s++) {
		const int64_t *v = sonde_model_stack_values(m, (uint32_t)s);
		bool any = false;

		for (int k = 0; k < nt; k++)
			any |= (vals[k] = (uint64_t)v[types[k]]) != 0;
		if (!any)
			continue;
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(m, (uint32_t)s, &depth);

		if (sonde_grow(&locs, &caplocs, (size_t)depth + 1, sizeof(*locs), 64) < 0)
			goto oom;
		for (int i = 0; i < depth; i++) {
			locs[i] = (uint64_t)fr[i] + 1;
			used[fr[i]] = true;
		}
		sub.n = 0;
		pb_packed(&sub, &tmp, 1, locs, (size_t)depth);
		pb_packed(&sub, &tmp, 2, vals, (size_t)nt);
		pb_msg(&p, 2, &sub);
	}
	/* mappings: the objects of the functions used, the executable first */
	const char *exe = x->nexps ? sonde_exp_info(x->exps[0])->target.exe : NULL;
	uint32_t nmap = 0;

	for (size_t i = 0; i < nf; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, (uint32_t)i);

		if (used[i] && fi->object < no && fi->lo + 1 > olimit[fi->object])
			olimit[fi->object] = fi->lo + 1;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t o = 0; o < no; o++) {
			const struct sonde_mobject *ob = sonde_model_objectinfo(m, (uint32_t)o);
			bool is_exe = exe && ob->path && !strcmp(ob->path, exe);

			if (!olimit[o] || omap[o] || (pass == 0) != is_exe)
				continue;
			omap[o] = ++nmap;
			const char *bid = NULL;

			for (size_t e = 0; e < x->nexps && !bid; e++) {
				size_t nobj;
				const struct sonde_object *obj = sonde_exp_objects(x->exps[e], &nobj);

				for (size_t k = 0; k < nobj && !bid; k++)
					if (obj[k].buildid && !strcmp(obj[k].path, ob->path))
						bid = obj[k].buildid;
			}
			sub.n = 0;
			pb_u(&sub, 1, nmap);
			pb_u(&sub, 3, olimit[o]); /* memory_start 0: the object's own addresses */
			pb_u(&sub, 5, str_id(&st, ob->path));
			pb_u(&sub, 6, str_id(&st, bid));
			pb_u(&sub, 7, 1); /* has_functions */
			pb_u(&sub, 10, x->p.inlines);
			pb_msg(&p, 3, &sub);
		}
	/* a location and a function per function used */
	for (size_t i = 0; i < nf; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, (uint32_t)i);

		if (!used[i])
			continue;
		line.n = 0;
		pb_u(&line, 1, i + 1);
		sub.n = 0;
		pb_u(&sub, 1, i + 1);
		pb_u(&sub, 2, fi->object < no ? omap[fi->object] : 0);
		pb_u(&sub, 3, fi->lo);
		pb_msg(&sub, 4, &line);
		pb_msg(&p, 4, &sub);
	}
	for (size_t i = 0; i < nf; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, (uint32_t)i);

		if (!used[i])
			continue;
		sub.n = 0;
		pb_u(&sub, 1, i + 1);
		pb_u(&sub, 2, str_id(&st, x->name[i]));
		/* A name made for an address, or a pseudo-function's, has no
		 * system name. Given one equal to the name, pprof takes
		 * "<static>@0x1c2 (libfoo.so)" or "<Collector>" for a demangled
		 * C++ name and cuts its "<...>" and "(...)". */
		pb_u(&sub, 3, fi->synthesized || fi->kind == SONDE_FRAME_PSEUDO ? 0 : str_id(&st, fi->mangled));
		pb_msg(&p, 5, &sub);
	}
	/* the informational fields */
	uint64_t end = 0;
	char c1[600], c2[200];

	for (size_t e = 0; e < x->nexps; e++)
		if (sonde_exp_info(x->exps[e])->end_ns > end)
			end = sonde_exp_info(x->exps[e])->end_ns;
	if (x->nexps) {
		const struct sonde_exp_info *in = sonde_exp_info(x->exps[0]);

		if (in->has_realtime && in->realtime_sec > 0)
			pb_u(&p, 9, (uint64_t)in->realtime_sec * 1000000000u + in->realtime_nsec);
		pb_u(&p, 10, end > x->t0 ? end - x->t0 : 0);
		if (x->recorded[SONDE_M_TOTALCPU] && in->settings.clock_interval_ns) {
			sub.n = 0;
			pb_u(&sub, 1, str_id(&st, sonde_metric(SONDE_M_TOTALCPU)->name));
			pb_u(&sub, 2, str_id(&st, "nanoseconds"));
			pb_msg(&p, 11, &sub);
			pb_u(&p, 12, in->settings.clock_interval_ns);
		}
		snprintf(c1, sizeof(c1), "sonde export of %s%s", in->dir,
			 x->nexps > 1 ? " and its other experiments" : "");
		snprintf(c2, sizeof(c2), "metric: %s (%s)", sonde_metric(x->metric)->name,
			 sonde_metric(x->metric)->title);
		pb_u(&p, 13, str_id(&st, c1));
		pb_u(&p, 13, str_id(&st, c2));
	}
	pb_u(&p, 14, str_id(&st, sonde_metric(x->metric)->name));
	/* the string table last: every string is known now */
	for (size_t i = 0; i < st.n; i++)
		pb_bytes(&p, 6, st.v[i], strlen(st.v[i]));
	if (p.oom || sub.oom || tmp.oom || line.oom || st.oom)
		goto oom;
	if (gzip_out(f, p.b, p.n) < 0) {
		snprintf(err, errlen, "error writing the output");
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(p.b);
	free(sub.b);
	free(tmp.b);
	free(line.b);
	free(st.v);
	u64map_release(&st.map);
	free(used);
	free(vals);
	free(locs);
	free(olimit);
	free(omap);
	return rc;
}
