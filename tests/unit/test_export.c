/*
 * test_export: sonde export's writers (lib/views/export*.c), each file
 * decoded back here and checked exactly on a synthetic experiment
 * (lib/reader/expwriter.h): pid 100, two threads, functions named by a
 * jit.map (names with '<', '&', '"', ';', a control character and bytes
 * that are not UTF-8), sample points with a pause and a resume.
 *
 *   thread 100: main;leaf_a at T0+1, +2, +3 ms (1 ms each), then
 *               main;w<e&i"rd;x;bad\xff\xfebytes at +4, +5 ms (1 ms each)
 *   thread 101: main;ctl\x01char at +10 ms (4 ms)
 *   points:     start T0, pause +2.5 ms, resume +3.5 ms, end +20 ms
 *
 * pprof is gunzipped with zlib and its protobuf decoded by a small decoder
 * here (field numbers from profile.proto); speedscope and chrome are parsed
 * by a small JSON parser here that also checks the text is valid UTF-8;
 * folded is compared as text.  Also: the timeline budget (bins keep the
 * totals), the filters, the metric errors, an empty experiment.
 *
 * The experiment of frames of every kind (framesexp.h: native, kernel and
 * Java frames in one stack) in every format: each function with its load
 * object, the stacks and their values.
 *
 *	test_export [--write DIR]   (--write: only write the experiments to
 *				     DIR/names.er and DIR/frames.er, for
 *				     tests/t60-export.sh)
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "check.h"
#include "framesexp.h"
#include "reader/expwriter.h"
#include "views/export.h"

#define T0 1000000000ull
#define MS 1000000ull

static char tmpdir[] = "/tmp/sonde-test-export-XXXXXX";

/* ---- the experiments ------------------------------------------------------------ */

#define WEIRD "w<e&i\"rd;x"
#define BAD "bad\xff\xfe" "bytes"
/* as the writers show them: ';' kept in JSON and pprof, ':' in folded;
 * bytes that are not UTF-8 as U+F7FF, U+F7FE (sonde/utf8.h) */
#define BAD_OUT "bad\xef\x9f\xbf\xef\x9f\xbe" "bytes"

static int write_file(const char *dir, const char *name, const char *text)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int write_names(const char *dir, bool empty)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));
	const uint64_t a[2] = { 0x2010 | SONDE_PC_EXACT, 0x1020 }, b[3] = { 0x4010 | SONDE_PC_EXACT, 0x3020, 0x1030 },
		       c[2] = { 0x5010 | SONDE_PC_EXACT, 0x1040 };
	struct sonde_overview_packet ov = { 0 };

	if (!w) {
		printf("# %s\n", err);
		return -1;
	}
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 1, 0, 2, a);
	sonde_expw_stack(w, 2, 0, 3, b);
	sonde_expw_stack(w, 3, 0, 2, c);
	if (!empty) {
		for (int i = 1; i <= 3; i++)
			sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, MS, 1);
		for (int i = 4; i <= 5; i++)
			sonde_expw_sample(w, 100, 0, T0 + (uint64_t)i * MS, MS, 2);
		sonde_expw_sample(w, 101, 1, T0 + 10 * MS, 4 * MS, 3);
	}
	const struct {
		uint32_t reason;
		uint64_t t;
	} pts[] = { { SONDE_OV_START, T0 }, { SONDE_OV_PAUSE, T0 + 2500000 }, { SONDE_OV_RESUME, T0 + 3500000 },
		    { SONDE_OV_END, T0 + 20 * MS } };

	for (size_t i = 0; i < 4; i++) {
		ov.reason = pts[i].reason;
		ov.time_ns = pts[i].t;
		sonde_expw_overview(w, &ov);
	}
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", T0 + 20 * MS);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return write_file(dir, "jit.map",
			  "1000 100 main\n2000 100 leaf_a\n3000 100 " WEIRD "\n4000 100 " BAD
			  "\n5000 100 ctl\x01"
			  "char\n");
}

/* ---- running a writer ------------------------------------------------------------ */

static char *outbuf;
static size_t outlen;
static int nnotes;

static void note(void *arg, const char *msg)
{
	nnotes++;
}

/* Exports exp in format name into outbuf; returns the writer's code. */
static int run(const struct sonde_exp *exp, const char *name, struct sonde_export_opts *o)
{
	char err[512];
	const struct sonde_exp *one[1] = { exp };

	free(outbuf);
	outbuf = NULL;
	FILE *f = open_memstream(&outbuf, &outlen);

	o->note = note;
	int rc = sonde_export_write(f, sonde_export_find(name), one, 1, o, err, sizeof(err));

	fclose(f);
	if (rc < 0 && getenv("SONDE_TEST_SHOW"))
		printf("# %s: %s\n", name, err);
	return rc;
}

/* ---- a small JSON parser --------------------------------------------------------- */

enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jt t;
	double num;
	char *str;	   /* J_STR: decoded UTF-8 */
	struct jv **v;	   /* J_ARR, J_OBJ: the values */
	char **k;	   /* J_OBJ: the keys */
	size_t n;
};

struct jp {
	const char *p, *end;
	bool bad;
};

static void jws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static void jput(char **s, size_t *n, unsigned cp)
{
	char *q = *s + *n;

	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xc0 | cp >> 6);
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xe0 | cp >> 12);
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (char)(0xf0 | cp >> 18);
		*q++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	}
	*n = (size_t)(q - *s);
}

static unsigned hex4(struct jp *j)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			j->bad = true;
	}
	return v;
}

static char *jstring(struct jp *j)
{
	size_t n = 0;
	char *s = malloc((size_t)(j->end - j->p) + 4);

	j->p++; /* the quote */
	while (!j->bad && j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20) {
			j->bad = true; /* a raw control character */
		} else if (c == '\\') {
			j->p++;
			char e = j->p < j->end ? *j->p++ : 0;
			const char *simple = strchr("\"\\/bfnrt", e);

			if (e && simple) {
				s[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
			} else if (e == 'u') {
				unsigned cp = hex4(j);

				if (cp >= 0xd800 && cp < 0xdc00 && j->p + 1 < j->end && j->p[0] == '\\' && j->p[1] == 'u') {
					j->p += 2;
					unsigned lo = hex4(j);

					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				jput(&s, &n, cp);
			} else {
				j->bad = true;
			}
		} else {
			/* raw bytes must be valid UTF-8 */
			size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

			if (!l || j->p + l > j->end)
				j->bad = true;
			for (size_t i = 1; i < l && !j->bad; i++)
				j->bad = ((unsigned char)j->p[i] & 0xc0) != 0x80;
			if (!j->bad) {
				memcpy(s + n, j->p, l);
				n += l;
				j->p += l;
			}
		}
	}
	if (j->p >= j->end)
		j->bad = true;
	j->p++;
	s[n] = '\0';
	return s;
}

static struct jv *jvalue(struct jp *j, int depth)
{
	struct jv *v = calloc(1, sizeof(*v));

	jws(j);
	if (j->bad || j->p >= j->end || depth > 64) {
		j->bad = true;
		return v;
	}
	char c = *j->p;

	if (c == '{' || c == '[') {
		v->t = c == '{' ? J_OBJ : J_ARR;
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == (c == '{' ? '}' : ']')) {
			j->p++;
			return v;
		}
		for (;;) {
			char *key = NULL;

			jws(j);
			if (v->t == J_OBJ) {
				if (j->p >= j->end || *j->p != '"') {
					j->bad = true;
					return v;
				}
				key = jstring(j);
				jws(j);
				if (j->p >= j->end || *j->p != ':') {
					free(key);
					j->bad = true;
					return v;
				}
				j->p++;
			}
			v->v = realloc(v->v, (v->n + 1) * sizeof(*v->v));
			v->k = realloc(v->k, (v->n + 1) * sizeof(*v->k));
			v->k[v->n] = key;
			v->v[v->n++] = jvalue(j, depth + 1);
			jws(j);
			if (j->bad || j->p >= j->end) {
				j->bad = true;
				return v;
			}
			if (*j->p == ',') {
				j->p++;
				continue;
			}
			if (*j->p == (v->t == J_OBJ ? '}' : ']')) {
				j->p++;
				return v;
			}
			j->bad = true;
			return v;
		}
	}
	if (c == '"') {
		v->t = J_STR;
		v->str = jstring(j);
		return v;
	}
	if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
		v->t = c == 't' ? J_BOOL : J_NULL;
		v->num = c == 't';
		j->p += 4;
		return v;
	}
	if (!strncmp(j->p, "false", 5)) {
		v->t = J_BOOL;
		j->p += 5;
		return v;
	}
	char *e;

	v->t = J_NUM;
	v->num = strtod(j->p, &e);
	if (e == j->p)
		j->bad = true;
	j->p = e;
	return v;
}

static void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->v[i]);
		if (v->k)
			free(v->k[i]);
	}
	free(v->v);
	free(v->k);
	free(v->str);
	free(v);
}

/* The whole text as one JSON value (NULL when it is not). */
static struct jv *jparse(const char *s, size_t n)
{
	struct jp j = { s, s + n, false };
	struct jv *v = jvalue(&j, 0);

	jws(&j);
	if (j.bad || j.p != j.end) {
		printf("# JSON error at byte %zu\n", (size_t)(j.p - s));
		jfree(v);
		return NULL;
	}
	return v;
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	for (size_t i = 0; o && o->t == J_OBJ && i < o->n; i++)
		if (!strcmp(o->k[i], key))
			return o->v[i];
	return NULL;
}

static const char *jstr(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->t == J_STR ? v->str : NULL;
}

static double jnum(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->t == J_NUM ? v->num : -1;
}

/* ---- a small protobuf decoder ---------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t varint(struct rd *r)
{
	uint64_t v = 0;

	for (int s = 0; s < 64; s += 7) {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return v;
}

/* The next field: its number, and its varint or its bytes (as a reader). */
static bool field(struct rd *r, unsigned *num, uint64_t *v, struct rd *sub)
{
	if (r->bad || r->p >= r->end)
		return false;
	uint64_t key = varint(r);

	*num = (unsigned)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = varint(r);
		return !r->bad;
	case 2: {
		uint64_t n = varint(r);

		if (r->bad || n > (uint64_t)(r->end - r->p)) {
			r->bad = true;
			return false;
		}
		*sub = (struct rd){ r->p, r->p + n, false };
		r->p += n;
		return true;
	}
	default:
		r->bad = true; /* the writer uses no other wire type */
		return false;
	}
}

#define MAXN 64

struct prof {
	char *str[MAXN];
	size_t nstr;
	uint64_t type[MAXN], unit[MAXN];
	size_t ntypes;
	struct {
		uint64_t loc[16];
		size_t nloc;
		int64_t val[MAXN];
		size_t nval;
	} sample[MAXN];
	size_t nsamples;
	uint64_t loc_id[MAXN], loc_fn[MAXN], loc_map[MAXN];
	size_t nlocs;
	uint64_t fn_id[MAXN], fn_name[MAXN];
	size_t nfns;
	size_t nmaps;
	uint64_t map_file[MAXN];
	uint64_t dflt;
	bool bad;
};

static void packed(struct rd *s, uint64_t *out, size_t *n, size_t max)
{
	while (s->p < s->end && !s->bad && *n < max)
		out[(*n)++] = varint(s);
}

static void decode_profile(const uint8_t *d, size_t len, struct prof *pr)
{
	struct rd r = { d, d + len, false }, s, t;
	unsigned num, n2;
	uint64_t v, v2;

	memset(pr, 0, sizeof(*pr));
	while (field(&r, &num, &v, &s)) {
		switch (num) {
		case 1: /* sample_type */
			while (field(&s, &n2, &v2, &t))
				if (n2 == 1)
					pr->type[pr->ntypes] = v2;
				else if (n2 == 2)
					pr->unit[pr->ntypes] = v2;
			pr->ntypes++;
			break;
		case 2: /* sample */
			if (pr->nsamples >= MAXN)
				break;
			while (field(&s, &n2, &v2, &t)) {
				if (n2 == 1)
					packed(&t, pr->sample[pr->nsamples].loc, &pr->sample[pr->nsamples].nloc, 16);
				else if (n2 == 2)
					packed(&t, (uint64_t *)pr->sample[pr->nsamples].val, &pr->sample[pr->nsamples].nval,
					       MAXN);
			}
			pr->nsamples++;
			break;
		case 3: /* mapping */
			while (field(&s, &n2, &v2, &t))
				if (n2 == 5 && pr->nmaps < MAXN)
					pr->map_file[pr->nmaps] = v2;
			pr->nmaps++;
			break;
		case 4: /* location */
			while (field(&s, &n2, &v2, &t) && pr->nlocs < MAXN) {
				if (n2 == 1)
					pr->loc_id[pr->nlocs] = v2;
				else if (n2 == 2)
					pr->loc_map[pr->nlocs] = v2;
				else if (n2 == 4) {
					struct rd u;
					unsigned n3;
					uint64_t v3;

					while (field(&t, &n3, &v3, &u))
						if (n3 == 1)
							pr->loc_fn[pr->nlocs] = v3;
				}
			}
			pr->nlocs++;
			break;
		case 5: /* function */
			while (field(&s, &n2, &v2, &t) && pr->nfns < MAXN)
				if (n2 == 1)
					pr->fn_id[pr->nfns] = v2;
				else if (n2 == 2)
					pr->fn_name[pr->nfns] = v2;
			pr->nfns++;
			break;
		case 6: /* string_table */
			if (pr->nstr < MAXN)
				pr->str[pr->nstr++] = strndup((const char *)s.p, (size_t)(s.end - s.p));
			break;
		case 14:
			pr->dflt = v;
			break;
		}
	}
	pr->bad = r.bad;
}

static const char *pstr(const struct prof *pr, uint64_t i)
{
	return i < pr->nstr ? pr->str[i] : "(bad string index)";
}

/* The function name of location id. */
static const char *loc_name(const struct prof *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->nlocs; i++)
		if (pr->loc_id[i] == id)
			for (size_t k = 0; k < pr->nfns; k++)
				if (pr->fn_id[k] == pr->loc_fn[i])
					return pstr(pr, pr->fn_name[k]);
	return "(no function)";
}

static int type_index(const struct prof *pr, const char *name)
{
	for (size_t i = 0; i < pr->ntypes; i++)
		if (!strcmp(pstr(pr, pr->type[i]), name))
			return (int)i;
	return -1;
}

static uint8_t *gunzip(const char *d, size_t n, size_t *out)
{
	z_stream z;
	size_t cap = 1 << 20;
	uint8_t *b = malloc(cap);

	memset(&z, 0, sizeof(z));
	if (!b || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	z.next_in = (Bytef *)d;
	z.avail_in = (uInt)n;
	z.next_out = b;
	z.avail_out = (uInt)cap;
	int rc = inflate(&z, Z_FINISH);

	*out = cap - z.avail_out;
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(b);
		return NULL;
	}
	return b;
}

/* ---- the checks -------------------------------------------------------------------- */

static void test_pprof(const struct sonde_exp *e)
{
	struct sonde_export_opts o;
	struct prof pr;
	size_t n;

	group = "pprof";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "pprof", &o), 0);
	CHECK(outlen > 18 && (uint8_t)outbuf[0] == 0x1f && (uint8_t)outbuf[1] == 0x8b); /* gzip */
	uint8_t *d = gunzip(outbuf, outlen, &n);

	CHECK(d != NULL);
	if (!d)
		return;
	decode_profile(d, n, &pr);
	free(d);
	CHECK(!pr.bad);
	CHECK(pr.nstr > 0 && !strcmp(pr.str[0], ""));
	CHECK_I(pr.ntypes, 2); /* clock profiling only: totalcpu, samples */
	CHECK_S(pstr(&pr, pr.type[0]), "totalcpu");
	CHECK_S(pstr(&pr, pr.unit[0]), "nanoseconds");
	CHECK_S(pstr(&pr, pr.type[1]), "samples");
	CHECK_S(pstr(&pr, pr.unit[1]), "count");
	CHECK_S(pstr(&pr, pr.dflt), "totalcpu");
	CHECK_I(pr.nsamples, 3);
	CHECK_I(pr.nmaps, 1);
	CHECK_S(pstr(&pr, pr.map_file[0]), "<JIT>");
	/* per leaf function: its exclusive time and count; every total */
	int64_t total = 0, count = 0, leaf_a = 0, bad = 0, ctl = 0;
	bool roots = true;

	for (size_t i = 0; i < pr.nsamples; i++) {
		if (pr.sample[i].nval != 2 || !pr.sample[i].nloc) {
			CHECK(!"a sample has two values and a stack");
			continue;
		}
		int64_t v = pr.sample[i].val[0];
		const char *leaf = loc_name(&pr, pr.sample[i].loc[0]);

		total += v;
		count += pr.sample[i].val[1];
		roots &= !strcmp(loc_name(&pr, pr.sample[i].loc[pr.sample[i].nloc - 1]), "main");
		if (!strcmp(leaf, "leaf_a"))
			leaf_a += v;
		else if (!strcmp(leaf, BAD_OUT))
			bad += v;
		else if (!strcmp(leaf, "ctl?char"))
			ctl += v;
		if (!strcmp(leaf, BAD_OUT)) {
			CHECK_I(pr.sample[i].nloc, 3);
			CHECK_S(loc_name(&pr, pr.sample[i].loc[1]), WEIRD);
		}
	}
	CHECK(roots);
	CHECK_I(total, 9 * MS);
	CHECK_I(count, 6);
	CHECK_I(leaf_a, 3 * MS);
	CHECK_I(bad, 2 * MS);
	CHECK_I(ctl, 4 * MS);
	for (size_t i = 0; i < pr.nstr; i++)
		free(pr.str[i]);

	/* one thread, the count as the default type */
	o.filter.thread_select = "2";
	o.metric = "samples";
	CHECK_I(run(e, "pprof", &o), 0);
	d = gunzip(outbuf, outlen, &n);
	CHECK(d != NULL);
	if (!d)
		return;
	decode_profile(d, n, &pr);
	free(d);
	CHECK_I(pr.nsamples, 1);
	CHECK_S(pstr(&pr, pr.dflt), "samples");
	CHECK(type_index(&pr, "totalcpu") == 0 && pr.sample[0].val[0] == (int64_t)(4 * MS));
	CHECK_S(loc_name(&pr, pr.sample[0].loc[0]), "ctl?char");
	for (size_t i = 0; i < pr.nstr; i++)
		free(pr.str[i]);
}

static void test_folded(const struct sonde_exp *e)
{
	struct sonde_export_opts o;

	group = "folded";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_S(outbuf, "main;ctl?char 4000000\n"
			"main;leaf_a 3000000\n"
			"main;w<e&i\"rd:x;" BAD_OUT " 2000000\n");
	o.metric = "samples";
	o.names = SONDE_NAME_SHORT;
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_S(outbuf, "main;ctl?char 1\n"
			"main;leaf_a 3\n"
			"main;w<e&i\"rd:x;" BAD_OUT " 2\n");
	/* the time filter: the first 3.5 ms (samples at 1, 2, 3 ms) */
	sonde_export_opts_init(&o);
	o.filter.end_ns = 3500000;
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_S(outbuf, "main;leaf_a 3000000\n");
	/* -sample_select: the samples are the intervals between the points
	 * (start, pause, resume, end): 2 is (2.5 ms, 3.5 ms] */
	sonde_export_opts_init(&o);
	o.filter.sample_select = "2";
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_S(outbuf, "main;leaf_a 1000000\n");
}

/* The names of a speedscope sample (root first). */
static void stack_names(const struct jv *frames, const struct jv *stack, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; stack && i < stack->n && n < len; i++) {
		size_t k = (size_t)stack->v[i]->num;
		const char *name = k < frames->n ? jstr(frames->v[k], "name") : NULL;

		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ";" : "", name ? name : "?");
	}
}

static void test_speedscope(const struct sonde_exp *e)
{
	struct sonde_export_opts o;
	char s[512];

	group = "speedscope";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "speedscope", &o), 0);
	struct jv *j = jparse(outbuf, outlen);

	CHECK(j != NULL);
	if (!j)
		return;
	CHECK_S(jstr(j, "$schema"), "https://www.speedscope.app/file-format-schema.json");
	const struct jv *frames = jget(jget(j, "shared"), "frames"), *profs = jget(j, "profiles");

	CHECK(frames && frames->t == J_ARR && profs && profs->t == J_ARR && profs->n == 2);
	if (!frames || !profs || profs->n != 2) {
		jfree(j);
		return;
	}
	const struct jv *p1 = profs->v[0], *p2 = profs->v[1];

	CHECK_S(jstr(p1, "type"), "sampled");
	CHECK_S(jstr(p1, "unit"), "nanoseconds");
	CHECK_S(jstr(p1, "name"), "prog [100] thread 1 (tid 100)");
	CHECK_S(jstr(p2, "name"), "prog [100] thread 2 (tid 101)");
	CHECK(jnum(p1, "endValue") == 5e6 && jnum(p2, "endValue") == 4e6);
	const struct jv *sm = jget(p1, "samples"), *w = jget(p1, "weights");

	CHECK(sm && w && sm->n == 2 && w->n == 2);
	if (sm && w && sm->n == 2 && w->n == 2) {
		stack_names(frames, sm->v[0], s, sizeof(s));
		CHECK_S(s, "main;leaf_a");
		stack_names(frames, sm->v[1], s, sizeof(s));
		CHECK_S(s, "main;" WEIRD ";" BAD_OUT);
		CHECK(w->v[0]->num == 3e6 && w->v[1]->num == 2e6);
	}
	stack_names(frames, jget(p2, "samples") ? jget(p2, "samples")->v[0] : NULL, s, sizeof(s));
	CHECK_S(s, "main;ctl?char");
	CHECK(jnum(j, "activeProfileIndex") == 0);
	jfree(j);

	/* over the budget: bins, totals kept, a note */
	nnotes = 0;
	o.max_units = 2;
	CHECK_I(run(e, "speedscope", &o), 0);
	CHECK(nnotes == 1);
	j = jparse(outbuf, outlen);
	CHECK(j != NULL);
	profs = jget(j, "profiles");
	double sum = 0;

	for (size_t i = 0; profs && i < profs->n; i++) {
		const struct jv *ws = jget(profs->v[i], "weights");

		for (size_t k = 0; ws && k < ws->n; k++)
			sum += ws->v[k]->num;
	}
	CHECK(sum == 9e6);
	jfree(j);
}

static void test_chrome(const struct sonde_exp *e)
{
	struct sonde_export_opts o;

	group = "chrome";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "chrome", &o), 0);
	struct jv *j = jparse(outbuf, outlen);

	CHECK(j != NULL);
	if (!j)
		return;
	const struct jv *ev = jget(j, "traceEvents");

	CHECK(ev && ev->t == J_ARR);
	CHECK_S(jstr(jget(j, "otherData"), "metric"), "totalcpu");
	CHECK(jnum(jget(j, "otherData"), "total") == 9e6);
	int nx = 0, ni = 0, nm = 0, nc = 0;
	double main1_ts = -1, main1_dur = -1, main2_ts = -1, main2_dur = -1, roots = 0, leaf_a = -1;
	bool fields = true;
	char points[200] = "";

	for (size_t i = 0; ev && i < ev->n; i++) {
		const struct jv *x = ev->v[i];
		const char *ph = jstr(x, "ph"), *name = jstr(x, "name");

		fields &= ph && name && jget(x, "pid") && jget(x, "tid");
		if (!ph || !name)
			continue;
		if (!strcmp(ph, "X")) {
			nx++;
			fields &= jnum(x, "ts") >= 0 && jnum(x, "dur") >= 0;
			if (!strcmp(name, "main")) {
				roots += jnum(x, "dur");
				if (jnum(x, "tid") == 100) {
					main1_ts = jnum(x, "ts");
					main1_dur = jnum(x, "dur");
				} else {
					main2_ts = jnum(x, "ts");
					main2_dur = jnum(x, "dur");
				}
			}
			if (!strcmp(name, "leaf_a"))
				leaf_a = jnum(x, "dur");
		} else if (!strcmp(ph, "i")) {
			ni++;
			fields &= jstr(x, "s") && jnum(x, "ts") >= 0;
			snprintf(points + strlen(points), sizeof(points) - strlen(points), "%s@%.1f ", name,
				 jnum(x, "ts"));
		} else if (!strcmp(ph, "M")) {
			nm++;
			fields &= jstr(jget(x, "args"), "name") != NULL;
		} else if (!strcmp(ph, "C")) {
			nc++;
		}
	}
	CHECK(fields);
	/* main, leaf_a, weird, bad on thread 100 (one run, 0 to 5 ms); main,
	 * ctl?char on thread 101 (6 to 10 ms) */
	CHECK_I(nx, 6);
	CHECK(main1_ts == 0 && main1_dur == 5000);
	CHECK(main2_ts == 6000 && main2_dur == 4000);
	CHECK(roots == 9000);
	CHECK(leaf_a == 3000);
	CHECK_S(points, "start@0.0 pause@2500.0 resume@3500.0 end@20000.0 ");
	CHECK_I(ni, 4);
	CHECK_I(nm, 3); /* process_name, two thread_names */
	CHECK(nc >= 2);
	jfree(j);
}

/* A first sample whose weight is more than the time since the start (the
 * CPU time the loader used before the collector started): its frames
 * start at the timeline's origin and the next samples follow it, so every
 * thread's complete events nest and the roots add up to the total (the
 * first sample was drawn from before the origin, clamped, and overlapped
 * the next one: t60 found it on a real run). */
static int write_early(const char *dir)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));
	const uint64_t a[2] = { 0x2010 | SONDE_PC_EXACT, 0x1020 }, b[2] = { 0x5010 | SONDE_PC_EXACT, 0x1040 };

	if (!w)
		return -1;
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_stack(w, 1, 0, 2, a);
	sonde_expw_stack(w, 2, 0, 2, b);
	sonde_expw_sample(w, 100, 0, T0 + 1 * MS, 3 * MS, 1);
	sonde_expw_sample(w, 100, 0, T0 + 2 * MS, MS, 2);
	sonde_expw_sample(w, 100, 0, T0 + 3 * MS, MS, 1);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", T0 + 20 * MS);
	return sonde_expw_finish(w, 0, err, sizeof(err));
}

static void test_chrome_early(const struct sonde_exp *e)
{
	struct sonde_export_opts o;
	double ts[16], end[16], roots = 0;
	int n = 0, nest = 1;

	group = "chrome, a first sample heavier than its time";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "chrome", &o), 0);
	struct jv *j = jparse(outbuf, outlen);
	const struct jv *ev = j ? jget(j, "traceEvents") : NULL;

	CHECK(ev != NULL);
	for (size_t i = 0; ev && i < ev->n && n < 16; i++) {
		const char *ph = jstr(ev->v[i], "ph");

		if (ph && !strcmp(ph, "X")) {
			ts[n] = jnum(ev->v[i], "ts");
			end[n++] = jnum(ev->v[i], "ts") + jnum(ev->v[i], "dur");
		}
	}
	/* in time order, longest first; each event inside the innermost open one */
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (ts[k] < ts[i] || (ts[k] == ts[i] && end[k] > end[i])) {
				double t = ts[i], x = end[i];

				ts[i] = ts[k], end[i] = end[k], ts[k] = t, end[k] = x;
			}
	double open[16];
	int depth = 0;

	for (int i = 0; i < n; i++) {
		while (depth && open[depth - 1] <= ts[i])
			depth--;
		if (depth && end[i] > open[depth - 1])
			nest = 0;
		if (!depth)
			roots += end[i] - ts[i];
		open[depth++] = end[i];
	}
	CHECK(n > 0);
	CHECK(nest);
	CHECK(roots == 5000); /* 3 + 1 + 1 ms, in microseconds */
	jfree(j);
}

static void test_errors(const struct sonde_exp *e)
{
	struct sonde_export_opts o;

	group = "errors";
	sonde_export_opts_init(&o);
	o.metric = "heapleakbytes";
	CHECK_I(run(e, "folded", &o), -SONDE_ERR_NOT_RECORDED);
	o.metric = "nosuch";
	CHECK_I(run(e, "pprof", &o), -SONDE_ERR_NO_MATCH);
	o.metric = NULL;
	o.filter.object_select = "nosuch.so";
	CHECK_I(run(e, "speedscope", &o), -SONDE_ERR_NO_MATCH);
	sonde_export_opts_init(&o);
	o.filter.thread_select = "1-";
	CHECK_I(run(e, "chrome", &o), -SONDE_ERR_NO_MATCH);
	CHECK(sonde_export_find("nosuch") == NULL);
}

/* No sample: valid files, nothing in them. */
static void test_empty(const struct sonde_exp *e)
{
	struct sonde_export_opts o;
	struct jv *j;

	group = "empty";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_I(outlen, 0);
	CHECK_I(run(e, "speedscope", &o), 0);
	CHECK((j = jparse(outbuf, outlen)) != NULL);
	CHECK(jget(j, "profiles") && jget(j, "profiles")->n == 1);
	jfree(j);
	CHECK_I(run(e, "chrome", &o), 0);
	CHECK((j = jparse(outbuf, outlen)) != NULL);
	CHECK(jnum(jget(j, "otherData"), "total") == 0);
	jfree(j);
	CHECK_I(run(e, "pprof", &o), 0);
	size_t n;
	uint8_t *d = gunzip(outbuf, outlen, &n);
	struct prof pr;

	CHECK(d != NULL);
	if (d) {
		decode_profile(d, n, &pr);
		CHECK(!pr.bad && pr.nsamples == 0 && pr.ntypes == 2);
		for (size_t i = 0; i < pr.nstr; i++)
			free(pr.str[i]);
	}
	free(d);
}

/* ---- frames of every kind (framesexp.h) --------------------------------------------- */

/* The file of location id's mapping. */
static const char *loc_file(const struct prof *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->nlocs; i++)
		if (pr->loc_id[i] == id)
			return pr->loc_map[i] >= 1 && pr->loc_map[i] <= pr->nmaps ? pstr(pr, pr->map_file[pr->loc_map[i] - 1])
										  : "(no mapping)";
	return "(no location)";
}

/* The function of every frame, and its load object, as framesexp.h says. */
static const struct {
	const char *name, *file;
} fx_funcs[] = {
	{ "do_syscall_64", "<kernel>" },
	{ "entry_SYSCALL_64", "<kernel>" },
	{ "kfunc_low", "<kernel>" },
	{ "<kernel>@0xffffffff81003010", "<kernel>" },
	{ "leaf_native", "<JIT>" },
	{ "work", "<JIT>" },
	{ "main", "<JIT>" },
	{ "com.example.Util.hash(java.lang.Object)", "com/example/Util.class" },
	{ "com.example.Main.run(int, java.lang.String[])", "com/example/Main.class" },
	{ "com.example.Main.<init>()", "com/example/Main.class" },
	{ "<unknown method>@0x9999", "<JAVA>" },
	{ "<kind 200>@0x1010", "<unknown>" },
};
#define FX_NFUNCS (sizeof(fx_funcs) / sizeof(fx_funcs[0]))
#define FX_S1 "main;work;com.example.Main.run(int, java.lang.String[]);com.example.Util.hash(java.lang.Object);" \
	      "leaf_native;entry_SYSCALL_64;do_syscall_64"

static void test_frames_exports(const struct sonde_exp *e)
{
	struct sonde_export_opts o;
	struct prof pr;
	size_t n;

	group = "frames: pprof";
	sonde_export_opts_init(&o);
	CHECK_I(run(e, "pprof", &o), 0);
	uint8_t *d = gunzip(outbuf, outlen, &n);

	CHECK(d != NULL);
	if (!d)
		return;
	decode_profile(d, n, &pr);
	free(d);
	CHECK(!pr.bad);
	/* a location per function, each in its object's mapping */
	CHECK_I(pr.nlocs, FX_NFUNCS);
	for (size_t k = 0; k < FX_NFUNCS; k++) {
		size_t i;

		for (i = 0; i < pr.nlocs; i++)
			if (!strcmp(loc_name(&pr, pr.loc_id[i]), fx_funcs[k].name))
				break;
		CHECK(i < pr.nlocs);
		if (i == pr.nlocs) {
			printf("# no location of %s\n", fx_funcs[k].name);
			continue;
		}
		CHECK_S(loc_file(&pr, pr.loc_id[i]), fx_funcs[k].file);
	}
	CHECK_I(pr.nmaps, 6); /* <kernel>, <JIT>, the two classes, <JAVA>, <unknown> */
	/* the samples: the stacks' values, S1 in its order (root last) */
	int64_t total = 0, s1 = 0;

	for (size_t i = 0; i < pr.nsamples; i++) {
		char stack[1024] = "";

		for (size_t k = pr.sample[i].nloc; k-- > 0;)
			snprintf(stack + strlen(stack), sizeof(stack) - strlen(stack), "%s%s",
				 k + 1 == pr.sample[i].nloc ? "" : ";", loc_name(&pr, pr.sample[i].loc[k]));
		total += pr.sample[i].val[0];
		if (!strcmp(stack, FX_S1))
			s1 += pr.sample[i].val[0];
	}
	CHECK_I(total, FX_TOTAL_MS * MS);
	CHECK_I(s1, 5 * MS);
	for (size_t i = 0; i < pr.nstr; i++)
		free(pr.str[i]);

	group = "frames: folded";
	CHECK_I(run(e, "folded", &o), 0);
	CHECK_S(outbuf, "<kernel>@0xffffffff81003010 1000000\n"
			"main 3000000\n"
			"main;<unknown method>@0x9999 1000000\n"
			"main;com.example.Main.<init>();<kind 200>@0x1010 1000000\n"
			"main;kfunc_low 2000000\n"
			"main;work 2000000\n"
			FX_S1 " 5000000\n");

	group = "frames: speedscope";
	CHECK_I(run(e, "speedscope", &o), 0);
	struct jv *j = jparse(outbuf, outlen);

	CHECK(j != NULL);
	if (!j)
		return;
	const struct jv *frames = jget(jget(j, "shared"), "frames"), *profs = jget(j, "profiles");

	CHECK(frames && frames->t == J_ARR && frames->n == FX_NFUNCS && profs && profs->n == 1);
	for (size_t k = 0; frames && k < FX_NFUNCS; k++) {
		bool found = false;

		for (size_t i = 0; i < frames->n; i++)
			if (!strcmp(jstr(frames->v[i], "name"), fx_funcs[k].name))
				found = !strcmp(jstr(frames->v[i], "file"), fx_funcs[k].file);
		CHECK(found);
		if (!found)
			printf("# no frame %s in %s\n", fx_funcs[k].name, fx_funcs[k].file);
	}
	if (frames && profs && profs->n == 1) {
		const struct jv *sm = jget(profs->v[0], "samples"), *w = jget(profs->v[0], "weights");
		double sum = 0, s1w = 0;
		char st[1024];

		for (size_t i = 0; sm && w && i < sm->n && i < w->n; i++) {
			stack_names(frames, sm->v[i], st, sizeof(st));
			sum += w->v[i]->num;
			if (!strcmp(st, FX_S1))
				s1w += w->v[i]->num;
		}
		CHECK(sum == FX_TOTAL_MS * 1e6);
		CHECK(s1w == 5e6);
	}
	jfree(j);

	group = "frames: chrome";
	CHECK_I(run(e, "chrome", &o), 0);
	j = jparse(outbuf, outlen);
	CHECK(j != NULL);
	if (!j)
		return;
	const struct jv *ev = jget(j, "traceEvents");
	double sys = 0, mainsum = 0, kplace = 0, run_ = 0;

	for (size_t i = 0; ev && i < ev->n; i++) {
		const char *ph = jstr(ev->v[i], "ph"), *name = jstr(ev->v[i], "name");

		if (!ph || !name || strcmp(ph, "X"))
			continue;
		if (!strcmp(name, "do_syscall_64"))
			sys += jnum(ev->v[i], "dur");
		else if (!strcmp(name, "main"))
			mainsum += jnum(ev->v[i], "dur");
		else if (!strcmp(name, "<kernel>@0xffffffff81003010"))
			kplace += jnum(ev->v[i], "dur");
		else if (!strcmp(name, "com.example.Main.run(int, java.lang.String[])"))
			run_ += jnum(ev->v[i], "dur");
	}
	CHECK(sys == 5000);
	CHECK(mainsum == 14000); /* all but S6, whose only frame is the kernel's */
	CHECK(kplace == 1000);
	CHECK(run_ == 5000);
	jfree(j);
}

int main(int argc, char **argv)
{
	char dir[4200], edir[4300];
	char err[512];

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		snprintf(dir, sizeof(dir), "%s/names.er", argv[2]);
		snprintf(edir, sizeof(edir), "%s/frames.er", argv[2]);
		return write_names(dir, false) < 0 || write_frames_exp(edir) < 0;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/names.er", tmpdir);
	snprintf(edir, sizeof(edir), "%s/empty.er", tmpdir);
	struct sonde_exp *e = NULL, *empty = NULL;

	if (write_names(dir, false) < 0 || write_names(edir, true) < 0 ||
	    !(e = sonde_exp_open(dir, err, sizeof(err))) || !(empty = sonde_exp_open(edir, err, sizeof(err)))) {
		printf("not ok - cannot write and read the experiments: %s\n", err);
		return 1;
	}
	test_pprof(e);
	test_folded(e);
	test_speedscope(e);
	test_chrome(e);
	test_errors(e);
	test_empty(empty);
	sonde_exp_close(e);
	sonde_exp_close(empty);
	snprintf(dir, sizeof(dir), "%s/early.er", tmpdir);
	if (write_early(dir) < 0 || !(e = sonde_exp_open(dir, err, sizeof(err)))) {
		printf("not ok - cannot write and read early.er: %s\n", err);
		nfail++;
	} else {
		test_chrome_early(e);
		sonde_exp_close(e);
	}
	snprintf(dir, sizeof(dir), "%s/frames.er", tmpdir);
	if (write_frames_exp(dir) < 0 || !(e = sonde_exp_open(dir, err, sizeof(err)))) {
		printf("not ok - cannot write and read frames.er: %s\n", err);
		nfail++;
	} else {
		test_frames_exports(e);
		sonde_exp_close(e);
	}
	free(outbuf);
	char cmd[4400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
