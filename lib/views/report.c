/*
 * The HTML report (see report.h and doc/sonde-report.md).
 *
 * One build of the profile, as sonde print builds it, with its per-event
 * hook set: each event that passes the filters adds its values to the
 * time cells of its model stack and of its thread.  A cell is one number:
 * (stack or thread, experiment group, metric, bucket) -> value, kept in a
 * hash map while the events come; when the cells get too many, or a
 * bucket index too large, the bucket width doubles and the cells merge.
 * At the end the width doubles again until the cells fit the budget,
 * and they are written sorted, per stack and per thread, as bucket deltas
 * and values (each metric's values divided by their greatest common
 * divisor), so a 10 M sample profile of 3000 stacks stays a few MB.
 *
 * The rest of the data is the model (functions, stacks) and what the
 * views of sonde print write in json (-header, -source, the trace views),
 * written into the document as they are.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/u64map.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "views/kind.h"
#include "views/report.h"
#include "views/view.h"
#include "views/view_exp.h"
#include "views/view_table.h"

/* The page and its script (lib/views/report/), made C arrays by the
 * Makefile (scripts/embed.sh), each NUL-terminated. */
extern const unsigned char sonde_report_html[];
extern const unsigned long sonde_report_html_len;
extern const unsigned char sonde_report_js[];
extern const unsigned long sonde_report_js_len;

#ifndef SONDE_VERSION /* the Makefile defines it; not every build of lib/ */
#define SONDE_VERSION "unknown"
#endif

#define DATA_MARK "/*SONDE:DATA*/"
#define SCRIPT_MARK "/*SONDE:SCRIPT*/"

/* The first bucket width: the run in about this many buckets. */
#define FINE_BUCKETS 1000
/* Cells kept while the events come before the width doubles. */
#define CELLS_HARD (4u << 20)
/* Source documents written at most (bytes): a few files. */
#define SOURCE_BYTES (6u << 20)
/* Rows of the trace views (-leaks, -allocs, -iostacks ...). */
#define TRACE_LIMIT 200

/* A cell holds the values of four metrics of the table's order (an
 * event's metrics are neighbours there: a sample's CPU time and count
 * are one cell).  Its key: bucket (23 bits), the metrics' quad (5), group
 * (3), kind (1: a thread), id (32: the model stack or the thread's
 * index). */
#define K_BUCKET_BITS 23
#define K_BUCKET_MAX ((1ull << K_BUCKET_BITS) - 1)
#define GROUP_MAX 8
#define QUAD 4
_Static_assert(SONDE_MAX_METRICS <= 32 * QUAD, "a metric's quad fits the cell key's 5 bits");

static inline uint64_t cell_key(uint32_t id, unsigned thread, unsigned group, unsigned quad, uint64_t bucket)
{
	return (uint64_t)id << 32 | (uint64_t)thread << 31 | (uint64_t)group << 28 | (uint64_t)quad << 23 | bucket;
}
#define KEY_ID(k) ((uint32_t)((k) >> 32))
#define KEY_THREAD(k) ((unsigned)((k) >> 31) & 1u)
#define KEY_GROUP(k) ((unsigned)((k) >> 28) & 7u)
#define KEY_QUAD(k) ((unsigned)((k) >> 23) & 31u)
#define KEY_BUCKET(k) ((k) & K_BUCKET_MAX)

#define CACHE_SIZE 4096 /* a power of two */

struct cells {
	struct u64map map; /* key -> index */
	uint64_t *key;
	int64_t (*val)[QUAD];
	size_t n, cap;
	/* the last cells used, in front of the map: a thread's samples in
	 * one bucket, a hot stack's, hit the same cells */
	struct {
		uint64_t key;
		uint32_t idx; /* index + 1; 0: empty */
	} cache[CACHE_SIZE];
};

struct rep {
	const struct sonde_report_opts *o;
	const struct sonde_exp *const *exps;
	const uint32_t *group; /* per experiment, below GROUP_MAX */
	size_t nexps, ngroups;
	uint64_t w;	 /* bucket width, ns */
	struct cells *c;
	struct u64map tmap; /* exp << 32 | tid -> index into p->threads */
	/* each quad's last thread cell (on_event) */
	uint64_t tkey[SONDE_MAX_METRICS];
	long tidx[SONDE_MAX_METRICS]; /* -1: none */
	uint32_t last_exp, last_tid, last_thread;
	bool oom;
	/* after the build */
	struct sonde_profile p;
	int rm[SONDE_MAX_METRICS]; /* the metrics written, by model index */
	int nrm;
	int sort_rm; /* index into rm of the metric shown first */
	/* the view mode of this document, and whether the page holds one
	 * per mode (an OpenMP program's: the page switches between them) */
	enum sonde_stackmode mode;
	bool modes;
};

/* ---- the pure parts -------------------------------------------------------------------- */

void sonde_report_opts_init(struct sonde_report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sources = 8;
	o->max_cells = 1500000;
}

void sonde_report_script_json(FILE *f, const char *json, size_t len)
{
	const unsigned char *s = (const unsigned char *)json, *end = s + len, *run = s;

	for (const unsigned char *p = s; p < end; p++) {
		const char *rep = NULL;
		size_t skip = 1;

		if (*p == '<') {
			rep = "\\u003c";
		} else if (*p == 0xe2 && end - p >= 3 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			rep = p[2] == 0xa8 ? "\\u2028" : "\\u2029";
			skip = 3;
		}
		if (!rep)
			continue;
		fwrite(run, 1, (size_t)(p - run), f);
		fputs(rep, f);
		p += skip - 1;
		run = p + 1;
	}
	fwrite(run, 1, (size_t)(end - run), f);
}

uint64_t sonde_report_bucket_ns(uint64_t duration_ns, uint64_t nb)
{
	static const uint64_t step[] = { 1, 2, 5 };
	uint64_t pow = 1000;

	if (!nb)
		nb = 1;
	for (;;) {
		for (int i = 0; i < 3; i++) {
			uint64_t w = step[i] * pow;

			if (duration_ns / w < nb || w >= UINT64_MAX / 100)
				return w;
		}
		pow *= 10;
	}
}

/* ---- time cells -------------------------------------------------------------------------- */

static void cells_free(struct cells *c)
{
	u64map_release(&c->map);
	free(c->key);
	free(c->val);
	memset(c, 0, sizeof(*c));
}

static inline void add_wrap(int64_t *p, int64_t v)
{
	*p = (int64_t)((uint64_t)*p + (uint64_t)v); /* wrap, never overflow UB */
}

/* The index of the cell of key, made (zero) when new; -1 out of memory. */
static long cell_get(struct cells *c, uint64_t key)
{
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (CACHE_SIZE - 1);

	if (c->cache[h].idx && c->cache[h].key == key)
		return (long)c->cache[h].idx - 1;
	long i = u64map_get(&c->map, key);

	if (i < 0) {
		if (sonde_grow(&c->key, &c->cap, c->n + 1, sizeof(*c->key), 4096))
			return -1;
		int64_t(*nv)[QUAD] = realloc(c->val, c->cap * sizeof(*nv));

		if (!nv || u64map_put(&c->map, key, (uint32_t)c->n) < 0) {
			if (nv)
				c->val = nv;
			return -1;
		}
		c->val = nv;
		c->key[c->n] = key;
		memset(c->val[c->n], 0, sizeof(c->val[c->n]));
		i = (long)c->n++;
	}
	c->cache[h].key = key;
	c->cache[h].idx = (uint32_t)i + 1;
	return i;
}

/* Doubles the bucket width: merges every cell into bucket / 2. */
static int cells_coarsen(struct rep *r)
{
	struct cells *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	for (size_t i = 0; i < r->c->n; i++) {
		uint64_t k = r->c->key[i];
		long j = cell_get(c, (k & ~K_BUCKET_MAX) | (KEY_BUCKET(k) >> 1));

		if (j < 0) {
			cells_free(c);
			free(c);
			return -1;
		}
		for (int s = 0; s < QUAD; s++)
			add_wrap(&c->val[j][s], r->c->val[i][s]);
	}
	cells_free(r->c);
	free(r->c);
	r->c = c;
	r->w *= 2;
	for (int m = 0; m < SONDE_MAX_METRICS; m++)
		r->tidx[m] = -1;
	return 0;
}

/* The index of thread tid of experiment exp in p->threads, UINT32_MAX when
 * there is none. */
static uint32_t thread_index(struct rep *r, const struct sonde_profile *p, uint32_t exp, uint32_t tid)
{
	if (exp == r->last_exp && tid == r->last_tid)
		return r->last_thread;
	uint64_t k = (uint64_t)exp << 32 | tid;
	long i = u64map_get(&r->tmap, k);

	if (i < 0) {
		i = -1;
		for (size_t t = 0; t < p->nthreads && i < 0; t++)
			if (p->threads[t].exp == exp && p->threads[t].tid == tid)
				i = (long)t;
		if (i < 0)
			return UINT32_MAX;
		if (u64map_put(&r->tmap, k, (uint32_t)i) < 0) {
			r->oom = true;
			return UINT32_MAX;
		}
	}
	r->last_exp = exp;
	r->last_tid = tid;
	r->last_thread = (uint32_t)i;
	return (uint32_t)i;
}

static int on_event(void *arg, const struct sonde_pevent *pe)
{
	struct rep *r = arg;
	const struct sonde_profile *p = &r->p;
	uint32_t ev = pe->ev, tid = pe->tid;
	uint64_t time_ns = pe->time_ns;
	const int64_t *v = pe->v;

	if (r->oom)
		return 0;
	const struct sonde_evstack *e = &p->ev[ev];
	uint64_t t0 = sonde_exp_info(r->exps[e->exp])->start_ns;
	uint64_t rel = time_ns >= t0 ? time_ns - t0 : 0;

	while (rel / r->w > K_BUCKET_MAX)
		if (cells_coarsen(r) < 0) {
			r->oom = true;
			return 0;
		}
	uint64_t b = rel / r->w;
	unsigned g = r->group[e->exp];
	uint32_t th = thread_index(r, p, e->exp, tid);

	for (unsigned qd = 0; qd * QUAD < SONDE_MAX_METRICS; qd++) {
		const int64_t *vq = v + qd * QUAD;
		int nq = SONDE_MAX_METRICS - (int)(qd * QUAD) < QUAD ? SONDE_MAX_METRICS - (int)(qd * QUAD) : QUAD;
		bool any = false;

		for (int s = 0; s < nq; s++)
			any |= vq[s] != 0;
		if (!any)
			continue;
		long i = cell_get(r->c, cell_key(e->mstack, 0, g, qd, b));

		if (i < 0) {
			r->oom = true;
			return 0;
		}
		for (int s = 0; s < nq; s++)
			add_wrap(&r->c->val[i][s], vq[s]);
		if (th == UINT32_MAX)
			continue;
		/* each quad's last thread cell: a thread's events come in runs */
		uint64_t tk = cell_key(th, 1, g, qd, b);

		if (r->tidx[qd] < 0 || r->tkey[qd] != tk) {
			r->tidx[qd] = cell_get(r->c, tk);
			r->tkey[qd] = tk;
			if (r->tidx[qd] < 0) {
				r->oom = true;
				return 0;
			}
		}
		for (int s = 0; s < nq; s++)
			add_wrap(&r->c->val[r->tidx[qd]][s], vq[s]);
	}
	if (r->c->n > CELLS_HARD && cells_coarsen(r) < 0)
		r->oom = true;
	return 0; /* out of memory is r->oom, said after the build */
}

/* ---- writing the data ---------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	vt_json_str(f, s ? s : "");
}

/* A view's json document (one line) as a value; null when it wrote
 * nothing. */
static void json_doc(FILE *f, const char *doc, size_t len)
{
	while (len && (doc[len - 1] == '\n' || doc[len - 1] == ' '))
		len--;
	if (!len || (doc[0] != '{' && doc[0] != '['))
		fputs("null", f);
	else
		fwrite(doc, 1, len, f);
}

static const char *unit_name(enum sonde_unit u)
{
	return u == SONDE_UNIT_NS ? "ns" : u == SONDE_UNIT_BYTES ? "bytes" : "count";
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* A cell to write: its sort key (thread << 63 | id << 31 | bucket << 8 |
 * group << 5 | slot of its metric among those written) and its index. */
struct ent {
	uint64_t sk;
	uint32_t idx;
};
#define SK_ROW(sk) ((sk) >> 5)
#define SK_THREAD(sk) ((unsigned)((sk) >> 63))
#define SK_ID(sk) ((uint32_t)((sk) >> 31))
#define SK_BUCKET(sk) (((sk) >> 8) & K_BUCKET_MAX)
#define SK_GROUP(sk) ((unsigned)((sk) >> 5) & 7u)
#define SK_SLOT(sk) ((int)((sk) & 31u))

static int cmp_ent(const void *x, const void *y)
{
	uint64_t a = ((const struct ent *)x)->sk, b = ((const struct ent *)y)->sk;

	return a < b ? -1 : a > b;
}

/* One row of cells: an id's values in one (bucket, group). */
struct row {
	uint64_t sk; /* its cells' sort key without the slot */
	int64_t *v;  /* nrm values */
};

/*
 * The rows of one kind (stacks or threads), ids 0..nids-1, as
 * "PREFIXb":[[bucket deltas] per id], "PREFIXg":[[groups] per id] (with
 * several groups), "PREFIXv":[[[values / q] or 0 per id] per metric].
 * rows[from..to) are the kind's, sorted by id, bucket and group.
 */
static void write_rows(FILE *f, const struct rep *r, const char *prefix, const struct row *rows, size_t from,
		       size_t to, uint32_t nids, const uint64_t *q)
{
	for (int pass = 0; pass < 2 + r->nrm; pass++) {
		bool groups = pass == 1;
		int k = pass - 2;

		if (groups && r->ngroups < 2)
			continue;
		if (pass == 0)
			fprintf(f, ",\"%sb\":[", prefix);
		else if (groups)
			fprintf(f, ",\"%sg\":[", prefix);
		else if (k)
			fputs(",[", f);
		else
			fprintf(f, ",\"%sv\":[[", prefix);
		size_t i = from;

		for (uint32_t id = 0; id < nids; id++) {
			size_t a = i;

			while (i < to && SK_ID(rows[i].sk) == id)
				i++;
			fputs(id ? "," : "", f);
			if (k >= 0) {
				bool any = false;

				for (size_t j = a; j < i && !any; j++)
					any = rows[j].v[k] != 0;
				if (!any) {
					fputc('0', f);
					continue;
				}
			}
			fputc('[', f);
			uint64_t prevb = 0;

			for (size_t j = a; j < i; j++) {
				uint64_t bk = SK_BUCKET(rows[j].sk);

				if (j > a)
					fputc(',', f);
				if (pass == 0)
					fprintf(f, "%" PRIu64, bk - prevb);
				else if (groups)
					fprintf(f, "%u", SK_GROUP(rows[j].sk));
				else if (!rows[j].v[k])
					fputc('0', f);
				else
					fprintf(f, "%" PRId64, q[k] > 1 ? rows[j].v[k] / (int64_t)q[k] : rows[j].v[k]);
				prevb = bk;
			}
			fputc(']', f);
		}
		fputs(k == r->nrm - 1 ? "]]" : "]", f);
	}
}

/* The time cells: "time":{...}. */
static int write_time(FILE *f, struct rep *r, uint32_t nstacks)
{
	const struct cells *c = r->c;
	struct ent *e = malloc((c->n ? c->n * QUAD : 1) * sizeof(*e));
	struct row *rows = NULL;
	int64_t *vals = NULL;
	uint64_t q[SONDE_MAX_METRICS] = { 0 }, maxb = 0;
	size_t n = 0, nrows = 0;
	int mslot[SONDE_MAX_METRICS];

	if (!e)
		return -1;
	for (int m = 0; m < SONDE_MAX_METRICS; m++)
		mslot[m] = -1;
	for (int k = 0; k < r->nrm; k++)
		mslot[r->rm[k]] = k;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t key = c->key[i];

		for (int j = 0; j < QUAD; j++) {
			unsigned m = KEY_QUAD(key) * QUAD + (unsigned)j;
			int s = m < SONDE_MAX_METRICS ? mslot[m] : -1;
			int64_t val = c->val[i][j];

			if (s < 0 || !val)
				continue;
			e[n].sk = (uint64_t)KEY_THREAD(key) << 63 | (uint64_t)KEY_ID(key) << 31 | KEY_BUCKET(key) << 8 |
				  (uint64_t)KEY_GROUP(key) << 5 | (uint64_t)s;
			e[n++].idx = (uint32_t)(i * QUAD + (size_t)j);
			q[s] = gcd64(q[s], val < 0 ? (uint64_t)0 - (uint64_t)val : (uint64_t)val);
			if (KEY_BUCKET(key) > maxb)
				maxb = KEY_BUCKET(key);
		}
	}
	qsort(e, n, sizeof(*e), cmp_ent);
	for (size_t i = 0; i < n; i++)
		nrows += !i || SK_ROW(e[i].sk) != SK_ROW(e[i - 1].sk);
	rows = malloc((nrows ? nrows : 1) * sizeof(*rows));
	vals = calloc((nrows ? nrows : 1) * (size_t)r->nrm, sizeof(*vals));
	if (!rows || !vals) {
		free(e);
		free(rows);
		free(vals);
		return -1;
	}
	size_t nr = 0, nst = 0;

	for (size_t i = 0; i < n; i++) {
		if (!i || SK_ROW(e[i].sk) != SK_ROW(e[i - 1].sk)) {
			rows[nr].sk = e[i].sk & ~(uint64_t)31;
			rows[nr].v = vals + nr * (size_t)r->nrm;
			nst += !SK_THREAD(e[i].sk);
			nr++;
		}
		rows[nr - 1].v[SK_SLOT(e[i].sk)] = c->val[e[i].idx / QUAD][e[i].idx % QUAD];
	}
	free(e);
	fprintf(f, ",\"time\":{\"w\":%" PRIu64 ",\"nb\":%" PRIu64 ",\"q\":[", r->w, n ? maxb + 1 : 0);
	for (int k = 0; k < r->nrm; k++) {
		if (!q[k])
			q[k] = 1;
		fprintf(f, "%s%" PRIu64, k ? "," : "", q[k]);
	}
	fputc(']', f);
	write_rows(f, r, "s", rows, 0, nst, nstacks, q);
	write_rows(f, r, "t", rows, nst, nr, (uint32_t)r->p.nthreads, q);
	fputc('}', f);
	free(rows);
	free(vals);
	return 0;
}

/* The call-path nodes of the model's stacks, root first: "nodes":{"f":
 * [function per node],"p":[parent node per node, -1 for a root]} and in
 * *snode each stack's leaf node. */
static int write_nodes(FILE *f, const struct sonde_model *m, uint32_t **snode)
{
	size_t ns = sonde_model_nstacks(m), nn = 0, cap = 0;
	struct u64map ix = { 0 };
	uint32_t *nf = NULL;
	int32_t *np = NULL;
	size_t capp = 0;

	*snode = malloc((ns ? ns : 1) * sizeof(**snode));
	if (!*snode)
		return -1;
	for (size_t s = 0; s < ns; s++) {
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(m, (uint32_t)s, &depth);
		int32_t parent = -1;

		for (int i = depth - 1; i >= 0; i--) {
			uint64_t k = (uint64_t)(uint32_t)(parent + 1) << 32 | fr[i];
			long id = u64map_get(&ix, k);

			if (id < 0) {
				if (sonde_grow(&nf, &cap, nn + 1, sizeof(*nf), 1024) ||
				    sonde_grow(&np, &capp, nn + 1, sizeof(*np), 1024) || u64map_put(&ix, k, (uint32_t)nn) < 0)
					goto oom;
				nf[nn] = fr[i];
				np[nn] = parent;
				id = (long)nn++;
			}
			parent = (int32_t)id;
		}
		(*snode)[s] = (uint32_t)parent;
	}
	fputs(",\"nodes\":{\"f\":[", f);
	for (size_t i = 0; i < nn; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", nf[i]);
	fputs("],\"p\":[", f);
	for (size_t i = 0; i < nn; i++)
		fprintf(f, "%s%" PRId32, i ? "," : "", np[i]);
	fputs("]}", f);
	u64map_release(&ix);
	free(nf);
	free(np);
	return 0;
oom:
	u64map_release(&ix);
	free(nf);
	free(np);
	return -1;
}

/* An array of one metric's values of every function / stack. */
static void write_values(FILE *f, const char *key, const struct rep *r, size_t n,
			 const int64_t *(*get)(const struct sonde_model *, uint32_t))
{
	fprintf(f, ",\"%s\":[", key);
	for (int k = 0; k < r->nrm; k++) {
		fputs(k ? ",[" : "[", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", get(r->p.model, (uint32_t)i)[r->rm[k]]);
		fputc(']', f);
	}
	fputc(']', f);
}

/* What a view writes into a string (open_memstream); NULL out of memory.
 * *len gets its length. */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *capture_begin(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	return c->f;
}

static int capture_end(struct capture *c)
{
	if (!c->f)
		return -1;
	int bad = ferror(c->f);

	if (fclose(c->f) || bad) {
		free(c->buf);
		c->buf = NULL;
		return -1;
	}
	return 0;
}

static const char *mode_name(enum sonde_stackmode m)
{
	return m == SONDE_SHAPE_EXPERT ? "expert" : m == SONDE_SHAPE_MACHINE ? "machine" : "user";
}

/* The view options of the views whose json documents the report holds. */
static void view_opts(const struct rep *r, struct sonde_view_opts *vo)
{
	char e[64];

	sonde_view_opts_init(vo);
	/* the print mode by its name: only the output layer names modes */
	sonde_printmode_parse(&vo->mode, "json", e, sizeof(e));
	vo->sample_select = r->o->filter.sample_select;
	vo->pathmap = r->o->pathmap;
	vo->npathmap = r->o->npathmap;
	vo->addpath = r->o->addpath;
	vo->naddpath = r->o->naddpath;
}

/* "headers":[{"json":{-header},"text":"..."}] of every experiment. */
static int write_headers(FILE *f, const struct rep *r)
{
	struct sonde_view_opts vo;

	view_opts(r, &vo);
	fputs(",\"headers\":[", f);
	for (size_t i = 0; i < r->nexps; i++) {
		struct capture cj, ct;

		if (!capture_begin(&cj) || !capture_begin(&ct)) {
			if (cj.f)
				capture_end(&cj);
			free(cj.buf);
			return -1;
		}
		char e[64];

		sonde_printmode_parse(&vo.mode, "json", e, sizeof(e));
		sonde_view_header(cj.f, &r->exps[i], 1, &vo);
		sonde_printmode_parse(&vo.mode, "text", e, sizeof(e));
		sonde_view_header(ct.f, &r->exps[i], 1, &vo);
		int bad = capture_end(&cj) | capture_end(&ct);

		if (!bad) {
			fprintf(f, "%s{\"json\":", i ? "," : "");
			json_doc(f, cj.buf, cj.len);
			fputs(",\"text\":", f);
			json_str(f, ct.buf);
			fputc('}', f);
		}
		free(cj.buf);
		free(ct.buf);
		if (bad)
			return -1;
	}
	fputc(']', f);
	return 0;
}

static int cmp_hot(const void *x, const void *y, void *arg)
{
	const struct rep *r = arg;
	int m = r->rm[r->sort_rm];
	int64_t a = sonde_model_excl(r->p.model, *(const uint32_t *)x)[m];
	int64_t b = sonde_model_excl(r->p.model, *(const uint32_t *)y)[m];

	if (a != b)
		return a > b ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* The "source_file" of a -source json document ("" without). */
static void source_key(const char *doc, char *key, size_t len)
{
	const char *s = strstr(doc, "\"source_file\":");
	const char *e = s ? strstr(s, ",\"read_from\"") : NULL;
	size_t n = s && e ? (size_t)(e - s) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(key, s ? s : "", n);
	key[n] = '\0';
}

/* "sources":[{"funcs":[f...],"doc":{-source}} or {"funcs":[f],"error":".."}]
 * of the hottest functions, one document per source file. */
static int write_sources(FILE *f, struct rep *r)
{
	const struct sonde_model *m = r->p.model;
	size_t nf = sonde_model_nfuncs(m), nh = 0, bytes = 0;
	uint32_t *ids = malloc((nf ? nf : 1) * sizeof(*ids));
	struct {
		char key[1024];
		uint32_t funcs[16];
		int nfuncs;
		char *doc;
		size_t len;
		char err[512];
	} *hot = calloc(2 * r->o->sources + 1, sizeof(*hot));
	struct sonde_view_opts vo;
	int rc = -1;

	if (!ids || !hot)
		goto out;
	view_opts(r, &vo);
	/* the metrics of the annotation: each metric's exclusive and
	 * inclusive values, the first metric first, at most three */
	char spec[512] = "";
	size_t sl = 0;

	for (int k = 0, n = 0; k < r->nrm && n < 3; k++) {
		int mi = r->rm[(k + r->sort_rm) % r->nrm];

		if (mi == SONDE_M_SAMPLES && r->nrm > 1)
			continue;
		sl += (size_t)snprintf(spec + sl, sizeof(spec) - sl, "e+%s:i+%s:", sonde_model_metric(r->p.model, mi)->name,
				       sonde_model_metric(r->p.model, mi)->name);
		n++;
	}
	snprintf(spec + sl, sizeof(spec) - sl, "name");
	char e[512];

	if (sonde_mspec_parse(&vo.metrics, spec, e, sizeof(e)) < 0)
		goto out;
	for (uint32_t i = 0; i < nf; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, i);

		if (fi->lo && !fi->synthesized && sonde_model_excl(m, i)[r->rm[r->sort_rm]] > 0)
			ids[nh++] = i;
	}
	qsort_r(ids, nh, sizeof(*ids), cmp_hot, r);
	size_t nhot = 0, nread = 0, nerr = 0;

	/* the hottest functions whose source can be read, up to o->sources;
	 * a few of those whose cannot, to say why */
	for (size_t i = 0; i < nh && i < 2 * r->o->sources && nread < r->o->sources; i++) {
		struct capture c;

		if (!capture_begin(&c))
			goto out;
		char err[512] = "";
		int v = sonde_view_source(c.f, &r->p, &vo, ids[i], NULL, err, sizeof(err));

		if (capture_end(&c) < 0)
			goto out;
		char key[1024];

		if (v < 0) {
			snprintf(key, sizeof(key), "error:%s", err);
		} else {
			source_key(c.buf, key, sizeof(key));
		}
		size_t k;

		for (k = 0; k < nhot; k++)
			if (!strcmp(hot[k].key, key))
				break;
		if (k < nhot) {
			if (hot[k].nfuncs < 16)
				hot[k].funcs[hot[k].nfuncs++] = ids[i];
			free(c.buf);
			continue;
		}
		if ((v == 0 && bytes + c.len > SOURCE_BYTES) || (v < 0 && nerr >= r->o->sources)) {
			free(c.buf);
			continue;
		}
		if (v < 0)
			nerr++;
		else
			nread++;
		snprintf(hot[nhot].key, sizeof(hot[nhot].key), "%s", key);
		hot[nhot].funcs[0] = ids[i];
		hot[nhot].nfuncs = 1;
		if (v < 0) {
			snprintf(hot[nhot].err, sizeof(hot[nhot].err), "%s", err);
			free(c.buf);
		} else {
			hot[nhot].doc = c.buf;
			hot[nhot].len = c.len;
			bytes += c.len;
		}
		nhot++;
	}
	fputs(",\"sources\":[", f);
	for (size_t k = 0; k < nhot; k++) {
		fputs(k ? ",{\"funcs\":[" : "{\"funcs\":[", f);
		for (int j = 0; j < hot[k].nfuncs; j++)
			fprintf(f, "%s%" PRIu32, j ? "," : "", hot[k].funcs[j]);
		fputc(']', f);
		if (hot[k].doc) {
			fputs(",\"doc\":", f);
			json_doc(f, hot[k].doc, hot[k].len);
		} else {
			fputs(",\"error\":", f);
			json_str(f, hot[k].err);
		}
		fputc('}', f);
	}
	fputc(']', f);
	rc = 0;
out:
	for (size_t k = 0; hot && k < 2 * r->o->sources; k++)
		free(hot[k].doc);
	free(hot);
	free(ids);
	return rc;
}

/* One view of a kind's (views/kind.h) as "KEY":{...}, its json document
 * or {"error":...}; -1 out of memory. */
static int write_kind_view(FILE *f, const struct rep *r, const struct sonde_view_opts *vo,
			   const struct sonde_view_report_view *v, bool *first)
{
	char err[512];
	struct capture c;

	if (!capture_begin(&c))
		return -1;
	int rc = v->run(c.f, r->exps, r->nexps, vo, err, sizeof(err));

	if (capture_end(&c) < 0)
		return -1;
	fprintf(f, "%s\"%s\":", *first ? "" : ",", v->key);
	*first = false;
	if (rc < 0) {
		fputs("{\"error\":", f);
		json_str(f, err);
		fputc('}', f);
	} else {
		json_doc(f, c.buf, c.len);
	}
	free(c.buf);
	return 0;
}

/* "views":{"leaks":{...},...}: the views of the kinds traced, each kind's
 * in its module's order, the kinds by their report_place. */
static int write_trace_views(FILE *f, const struct rep *r, const char *const *names)
{
	struct sonde_view_opts vo;
	bool first = true;

	view_opts(r, &vo);
	vo.limit = TRACE_LIMIT;
	fputs(",\"views\":{", f);
	for (int place = 1; place <= SONDE_KIND_MAX; place++)
		for (int id = 1; id <= SONDE_KIND_MAX; id++) {
			const struct sonde_kind_module *m = sonde_kind_module(id);
			const struct sonde_view_kind *vk = m ? m->view : NULL;
			char err[512];

			if (!vk || !vk->report || vk->report_place != place ||
			    sonde_view_trace_check(r->exps, names, r->nexps, id, err, sizeof(err)) < 0)
				continue;
			for (const struct sonde_view_report_view *v = vk->report; v->key; v++)
				if (write_kind_view(f, r, &vo, v, &first) < 0)
					return -1;
		}
	fputc('}', f);
	return 0;
}

/* The metrics written: every one with a non-zero total (the clock's
 * first), at least one; the first shown is sonde print's default sort
 * metric. */
static void choose_metrics(struct rep *r)
{
	const int64_t *tot = sonde_model_total(r->p.model);
	const char *sort = NULL;

	r->nrm = 0;
	for (int m = 0; m < sonde_model_nmetrics(r->p.model); m++) {
		bool rec = false;

		for (size_t i = 0; i < r->p.nexps && !rec; i++)
			rec = sonde_metric_recorded(r->p.exps[i], m);
		if (tot[m] && rec)
			r->rm[r->nrm++] = m;
	}
	if (!r->nrm)
		r->rm[r->nrm++] = SONDE_M_TOTALCPU;
	r->sort_rm = 0;
	/* With off-CPU time, as sonde print: Total Thread Time leads. */
	for (size_t i = 0; i < r->p.nexps; i++)
		if (sonde_exp_has_offcpu(r->p.exps[i]))
			for (int k = 0; k < r->nrm; k++)
				if (r->rm[k] == SONDE_M_TOTAL) {
					r->sort_rm = k;
					return;
				}
	if (tot[SONDE_M_TOTALCPU])
		return;
	for (int id = 1; id <= SONDE_KIND_MAX && !sort; id++) {
		const char *ks;

		if (sonde_kind_default_metrics(id, &ks) && ks)
			for (int k = 0; k < r->nrm; k++)
				if (!strcmp(sonde_model_metric(r->p.model, r->rm[k])->name, ks) && tot[r->rm[k]]) {
					sort = ks;
					r->sort_rm = k;
				}
	}
}

static int write_data(FILE *f, struct rep *r, const char *const *names, const char *const *gnames,
		      void (*warn)(void *, const char *), void *warn_arg)
{
	const struct sonde_model *m = r->p.model;
	size_t nf = sonde_model_nfuncs(m), no = sonde_model_nobjects(m), ns = sonde_model_nstacks(m);
	uint32_t *snode = NULL;
	const struct sonde_report_opts *o = r->o;

	fprintf(f, "{\"format\":1,\"generator\":\"sonde %s\",\"groups\":[", SONDE_VERSION);
	for (size_t g = 0; g < r->ngroups; g++) {
		fputs(g ? "," : "", f);
		json_str(f, gnames[g]);
	}
	const struct sonde_profile_opts *fl = &o->filter;

	fputs("],\"filters\":{\"threads\":", f);
	json_str(f, fl->thread_select ? fl->thread_select : "all");
	fputs(",\"objects\":", f);
	json_str(f, fl->object_select ? fl->object_select : "all");
	fputs(",\"samples\":", f);
	json_str(f, fl->sample_select ? fl->sample_select : "all");
	fputs(",\"cpus\":", f);
	json_str(f, fl->cpu_select ? fl->cpu_select : "all");
	fputs(",\"callpath\":", f);
	json_str(f, fl->callpath_select ? fl->callpath_select : "all");
	fprintf(f, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"inlines\":%s,\"tailcalls\":%s", fl->start_ns,
		fl->end_ns, fl->no_inlines || r->mode == SONDE_SHAPE_MACHINE ? "false" : "true",
		fl->no_tailcalls ? "false" : "true");
	/* the view mode of a runtime's shaped stacks (OpenMP): only then, so
	 * that other reports' data stays as it was */
	if (r->modes)
		fprintf(f, ",\"viewmode\":\"%s\"", mode_name(r->mode));
	fputc('}', f);
	fputs(",\"exps\":[", f);
	for (size_t i = 0; i < r->nexps; i++) {
		const struct sonde_exp_info *in = sonde_exp_info(r->exps[i]);

		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, names[i]);
		fprintf(f, ",\"group\":%" PRIu32 ",\"duration_ns\":%" PRIu64 ",\"pid\":%" PRIu32 "}", r->group[i],
			in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0, in->target.pid);
	}
	fputc(']', f);
	/* problems: read errors and symbol problems */
	fputs(",\"notes\":[", f);
	bool first = true;

	for (size_t i = 0; i < r->nexps; i++) {
		size_t np;
		const struct sonde_problem *pr = sonde_exp_problems(r->exps[i], &np);

		for (size_t k = 0; k < np; k++) {
			if (pr[k].severity != SONDE_PROBLEM_ERROR)
				continue;
			char *msg;

			if (asprintf(&msg, "'%s': %s", names[i], pr[k].msg) < 0)
				return -1;
			fputs(first ? "" : ",", f);
			first = false;
			json_str(f, msg);
			free(msg);
		}
		const char *const *sp = r->p.syms && r->p.syms[i] ? sonde_syms_problems(r->p.syms[i], &np) : NULL;

		for (size_t k = 0; sp && k < np; k++) {
			char *msg;

			if (asprintf(&msg, "'%s': %s", names[i], sp[k]) < 0)
				return -1;
			if (warn)
				warn(warn_arg, msg);
			fputs(first ? "" : ",", f);
			first = false;
			json_str(f, msg);
			free(msg);
		}
	}
	/* The objects with no function symbols: one note and one warning for
	 * all experiments (each file once), as sonde print says it: no number
	 * is wrong. */
	char *unnamed = NULL;
	size_t len = 0, nun = 0;
	FILE *ms = open_memstream(&unnamed, &len);

	if (!ms)
		return -1;
	for (size_t i = 0; i < r->nexps; i++) {
		size_t nu;
		const char *const *u = r->p.syms && r->p.syms[i] ? sonde_syms_unnamed(r->p.syms[i], &nu) : NULL;

		for (size_t k = 0; u && k < nu; k++) {
			bool seen = false;

			for (size_t a = 0; a < i && !seen; a++) {
				size_t na;
				const char *const *ua = r->p.syms[a] ? sonde_syms_unnamed(r->p.syms[a], &na) : NULL;

				for (size_t b = 0; ua && b < na && !seen; b++)
					seen = !strcmp(ua[b], u[k]);
			}
			if (!seen)
				fprintf(ms, "%s %s", nun++ ? "," : "", u[k]);
		}
	}
	if (fclose(ms))
		return -1;
	if (nun) {
		char *msg;

		if (asprintf(&msg, "%zu load object%s with no function symbols (stripped, and no debug "
				   "file found), shown as addresses:%s",
			     nun, nun == 1 ? "" : "s", unnamed) < 0) {
			free(unnamed);
			return -1;
		}
		if (warn) {
			char one[160];

			snprintf(one, sizeof(one), "%zu load object%s ha%s no function symbols (stripped, and no "
				 "debug file found); the report's notes list them", nun, nun == 1 ? "" : "s",
				 nun == 1 ? "s" : "ve");
			warn(warn_arg, one);
		}
		fputs(first ? "" : ",", f);
		first = false;
		json_str(f, msg);
		free(msg);
	}
	free(unnamed);
	fputc(']', f);

	fputs(",\"metrics\":[", f);
	for (int k = 0; k < r->nrm; k++) {
		const struct sonde_metric_def *d = sonde_model_metric(m, r->rm[k]);

		fputs(k ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, d->name);
		fputs(",\"title\":", f);
		json_str(f, d->title);
		fputs(",\"abbr\":", f);
		json_str(f, d->abbr);
		fprintf(f, ",\"unit\":\"%s\"}", unit_name(d->unit));
	}
	fprintf(f, "],\"first\":%d,\"total\":[", r->sort_rm);
	for (int k = 0; k < r->nrm; k++)
		fprintf(f, "%s%" PRId64, k ? "," : "", sonde_model_total(m)[r->rm[k]]);
	fprintf(f, "],\"samples_used\":%" PRIu64 ",\"samples_filtered\":%" PRIu64, r->p.samples_used,
		r->p.samples_filtered);
	fputs(",\"objects\":[", f);
	for (size_t i = 0; i < no; i++) {
		const struct sonde_mobject *ob = sonde_model_objectinfo(m, (uint32_t)i);

		fputs(i ? "," : "", f);
		json_str(f, ob->name ? ob->name : ob->path);
	}
	fputs("],\"funcs\":{\"name\":[", f);
	for (size_t i = 0; i < nf; i++) {
		fputs(i ? "," : "", f);
		json_str(f, sonde_view_funcname(sonde_model_funcinfo(m, (uint32_t)i), SONDE_NAME_DEFAULT));
	}
	fputs("],\"obj\":[", f);
	for (size_t i = 0; i < nf; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", sonde_model_funcinfo(m, (uint32_t)i)->object);
	fputc(']', f);
	write_values(f, "e", r, nf, sonde_model_excl);
	write_values(f, "i", r, nf, sonde_model_incl);
	fputc('}', f);
	if (write_nodes(f, m, &snode) < 0)
		return -1;
	fputs(",\"stacks\":{\"n\":[", f);
	for (size_t s = 0; s < ns; s++)
		fprintf(f, "%s%" PRIu32, s ? "," : "", snode[s]);
	fputc(']', f);
	free(snode);
	write_values(f, "v", r, ns, sonde_model_stack_values);
	fputc('}', f);
	fputs(",\"threads\":[", f);
	for (size_t t = 0; t < r->p.nthreads; t++) {
		const struct sonde_pthread *pt = &r->p.threads[t];

		fprintf(f, "%s{\"exp\":%" PRIu32 ",\"num\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"sel\":%s", t ? "," : "",
			pt->exp, pt->number, pt->tid, pt->selected ? "true" : "false");
		if (pt->name) { /* the thread's own name (-threads') */
			fputs(",\"name\":", f);
			json_str(f, pt->name);
		}
		fputc('}', f);
	}
	fputc(']', f);
	if (write_time(f, r, (uint32_t)ns) < 0 || write_headers(f, r) < 0 || write_sources(f, r) < 0 ||
	    write_trace_views(f, r, names) < 0)
		return -1;
	fputs("}", f);
	return 0;
}

/* ---- the page -------------------------------------------------------------------------- */

/* Whether the report holds view v's document: its kind is traced by one
 * of the experiments (as write_trace_views writes them). */
static bool holds_view(const struct sonde_exp *const *exps, size_t n, int kind)
{
	char err[512];

	return sonde_view_trace_check(exps, NULL, n, kind, err, sizeof(err)) == 0;
}

/* The script of the kinds' views that have one (views/kind.h), after the
 * page's own: only in a report that holds the view. */
static int write_view_scripts(FILE *f, const struct sonde_exp *const *exps, size_t n, char *err, size_t errlen)
{
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const struct sonde_kind_module *m = sonde_kind_module(id);
		const struct sonde_view_kind *vk = m ? m->view : NULL;

		const struct sonde_view_report_script *s = vk ? vk->report_script : NULL;

		if (!s || !vk->report || !vk->report_place || !holds_view(exps, n, id))
			continue;
		if (strstr((const char *)s->text, "</script") || strstr((const char *)s->text, "<!--")) {
			snprintf(err, errlen, "the report's script of the %s kind holds '</script' or '<!--' (a build error)",
				 sonde_kind_desc(id)->name);
			return -1;
		}
		fputc('\n', f);
		fwrite(s->text, 1, *s->len, f);
	}
	return 0;
}

/* A data document of the page (the caller's, freed by it), and the view
 * mode it is in. */
struct page_doc {
	char *json;
	size_t len;
	enum sonde_stackmode mode;
};

/* The page with its documents: the first in the data element the script
 * reads by default, each other in an element of its own named by its
 * mode (sonde-data-expert), which the script reads when the page is
 * opened in that mode. */
static int write_page(FILE *f, const struct page_doc *docs, int ndocs, const struct sonde_exp *const *exps,
		      size_t n, char *err, size_t errlen)
{
	const char *html = (const char *)sonde_report_html;
	const char *dm = strstr(html, DATA_MARK), *sm = dm ? strstr(dm, SCRIPT_MARK) : NULL;
	const char *js = (const char *)sonde_report_js;

	if (!dm || !sm) {
		snprintf(err, errlen, "the report's page has no place for its data (a build error)");
		return -1;
	}
	if (strstr(js, "</script") || strstr(js, "<!--")) {
		snprintf(err, errlen, "the report's script holds '</script' or '<!--' (a build error)");
		return -1;
	}
	fwrite(html, 1, (size_t)(dm - html), f);
	for (int i = 0; i < ndocs; i++) {
		if (i)
			fprintf(f, "</script>\n<script type=\"application/json\" id=\"sonde-data-%s\">",
				mode_name(docs[i].mode));
		sonde_report_script_json(f, docs[i].json, docs[i].len);
	}
	dm += strlen(DATA_MARK);
	fwrite(dm, 1, (size_t)(sm - dm), f);
	fwrite(js, 1, sonde_report_js_len, f);
	if (write_view_scripts(f, exps, n, err, errlen) < 0)
		return -1;
	sm += strlen(SCRIPT_MARK);
	fwrite(sm, 1, sonde_report_html_len - (size_t)(sm - html), f);
	return 0;
}

/* The page's data document in view mode `mode` (modes: the page holds one
 * per mode) into *json, *len (the caller frees it).  Returns 0, or -1
 * with a message in err. */
static int report_data(const struct sonde_exp *const *exps, const char *const *names, const uint32_t *group,
		       size_t n, const char *const *gnames, size_t ngroups, const struct sonde_report_opts *o,
		       enum sonde_stackmode mode, bool modes, void (*warn)(void *arg, const char *msg),
		       void *warn_arg, char **json, size_t *len, char *err, size_t errlen)
{
	struct rep r = { .o = o, .exps = exps, .nexps = n, .ngroups = ngroups, .last_exp = UINT32_MAX,
			 .mode = mode, .modes = modes };
	uint32_t *grp = calloc(n + 1, sizeof(*grp));
	struct capture c = { 0 };
	int rc = -1;
	bool built = false;

	if (!grp)
		goto oom;
	/* per-group cells for the comparison of a few experiments */
	if (ngroups > GROUP_MAX)
		r.ngroups = 1;
	for (size_t i = 0; i < n; i++)
		grp[i] = r.ngroups > 1 && group ? group[i] : 0;
	r.group = grp;
	/* the first width: the longest run in about FINE_BUCKETS buckets */
	uint64_t dur = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sonde_exp_info *in = sonde_exp_info(exps[i]);
		const struct sonde_exp_summary *su = sonde_exp_summary(exps[i]);
		uint64_t end = in->end_ns > su->last_ns ? in->end_ns : su->last_ns;

		if (end > in->start_ns && end - in->start_ns > dur)
			dur = end - in->start_ns;
	}
	/* fewer buckets to start with when many stacks would fill them:
	 * the cells end within the budget anyway, and the map stays small */
	uint64_t nstk = 0, nb = FINE_BUCKETS;

	for (size_t i = 0; i < n; i++)
		nstk += sonde_exp_summary(exps[i])->stacks;
	if (nstk && nstk * 2 * nb > 4 * (uint64_t)o->max_cells)
		nb = 4 * (uint64_t)o->max_cells / (nstk * 2);
	if (nb < 50)
		nb = 50;
	r.w = sonde_report_bucket_ns(dur, nb);
	r.c = calloc(1, sizeof(*r.c));
	if (!r.c)
		goto oom;
	for (int m = 0; m < SONDE_MAX_METRICS; m++)
		r.tidx[m] = -1;

	struct sonde_profile_opts po = o->filter;

	po.viewmode = mode;
	po.each = on_event;
	po.each_arg = &r;

	if (sonde_profile_build(&r.p, exps, n, &po, err, errlen) < 0)
		goto out;
	built = true;
	if (r.oom)
		goto oom;
	choose_metrics(&r);
	/* the cells to the budget (counting only the metrics written) */
	for (;;) {
		size_t cells = 0;
		uint64_t maxb = 0;

		const int64_t *tot = sonde_model_total(r.p.model);

		for (size_t i = 0; i < r.c->n; i++) {
			uint64_t k = r.c->key[i];

			for (int j = 0; j < QUAD; j++) {
				unsigned m = KEY_QUAD(k) * QUAD + (unsigned)j;

				if (m < SONDE_MAX_METRICS && tot[m] && r.c->val[i][j]) {
					cells++;
					if (KEY_BUCKET(k) > maxb)
						maxb = KEY_BUCKET(k);
				}
			}
		}
		if ((cells <= o->max_cells && maxb < 4 * FINE_BUCKETS) || maxb == 0)
			break;
		if (cells_coarsen(&r) < 0)
			goto oom;
	}
	if (!capture_begin(&c))
		goto oom;
	int wr = write_data(c.f, &r, names, gnames, warn, warn_arg);

	if (capture_end(&c) < 0 || wr < 0)
		goto oom;
	*json = c.buf;
	*len = c.len;
	c.buf = NULL;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(c.buf);
	if (built)
		sonde_profile_release(&r.p);
	if (r.c)
		cells_free(r.c);
	free(r.c);
	u64map_release(&r.tmap);
	free(grp);
	return rc;
}

int sonde_report_write(FILE *f, const struct sonde_exp *const *exps, const char *const *names,
		       const uint32_t *group, size_t n, const char *const *gnames, size_t ngroups,
		       const struct sonde_report_opts *o, void (*warn)(void *arg, const char *msg),
		       void *warn_arg, char *err, size_t errlen)
{
	/* An experiment whose stacks a runtime's shaper shapes (OpenMP) gets
	 * a document per view mode, the one asked for first: the page
	 * switches between them as sonde print's -viewmode does. */
	bool oom = false, modes = sonde_shape_any(exps, n, &oom);
	struct page_doc d[3] = { { NULL, 0, o->filter.viewmode } };
	int nd = 1, rc = -1;

	if (oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int m = SONDE_SHAPE_USER; modes && m <= SONDE_SHAPE_MACHINE; m++)
		if (m != (int)o->filter.viewmode)
			d[nd++].mode = (enum sonde_stackmode)m;
	for (int i = 0; i < nd; i++)
		/* the warnings are the same in every mode: told once */
		if (report_data(exps, names, group, n, gnames, ngroups, o, d[i].mode, modes, i ? NULL : warn,
				warn_arg, &d[i].json, &d[i].len, err, errlen) < 0)
			goto out;
	if (write_page(f, d, nd, exps, n, err, errlen) < 0)
		goto out;
	if (fflush(f) || ferror(f)) {
		snprintf(err, errlen, "error writing the report");
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < nd; i++)
		free(d[i].json);
	return rc;
}
