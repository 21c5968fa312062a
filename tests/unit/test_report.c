/*
 * test_report: the pure parts of the HTML report's writer (lib/views/report.c)
 * and what it writes, decoded:
 *
 *   - the escaping of JSON inside a <script> element ('<', U+2028/9);
 *   - the bucket width, the -time parser;
 *   - a synthetic experiment of this program's functions (phase_a for the
 *     first second, a sample every ms, then phase_b; a third stack in an
 *     object whose name has '<', '&', quotes and a byte that is not UTF-8)
 *     written as a report, whose data is parsed back (a small JSON parser
 *     below) and checked: the functions' and stacks' values equal the
 *     model's, the time cells of every stack and thread add up to their
 *     totals exactly, a range of buckets adds up to the samples in it,
 *     the names come back as written, no '<' is left in the data, and the
 *     same holds when the cell budget forces wider buckets.
 *
 * And the experiment of frames of every kind (framesexp.h): every
 * function's name, load object and time as the truth says.
 *
 * `test_report --write DIR` only writes the experiments (phases.er,
 * frames.er, empty.er) for tests/t61-report.sh.
 *
 * Last line: "N passed, N failed".
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "framesexp.h"
#include "selfexe.h"
#include "reader/expwriter.h"
#include "model/profile.h"
#include "views/report.h"
#include "views/view.h"

int main(int argc, char **argv);

/* ---- the functions the synthetic experiment samples --------------------------------- */

static volatile int sink;
__attribute__((noinline)) void phase_a(void) { sink += 1; }
__attribute__((noinline)) void phase_b(void) { sink += 2; }

/* ---- a small JSON parser (enough for the report's data) ---------------------------------- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
	enum jtype t;
	double num;
	long long inum;
	char *str;	   /* J_STR: UTF-8 */
	struct jv **item;  /* J_ARR, J_OBJ (values) */
	char **key;	   /* J_OBJ */
	size_t n;
};

static const char *jp; /* the parser's place */
static bool jbad;

static void jws(void)
{
	while (*jp == ' ' || *jp == '\n' || *jp == '\t' || *jp == '\r')
		jp++;
}

static void put_utf8(char **o, unsigned c)
{
	char *p = *o;

	if (c < 0x80) {
		*p++ = (char)c;
	} else if (c < 0x800) {
		*p++ = (char)(0xc0 | c >> 6);
		*p++ = (char)(0x80 | (c & 0x3f));
	} else {
		*p++ = (char)(0xe0 | c >> 12);
		*p++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*p++ = (char)(0x80 | (c & 0x3f));
	}
	*o = p;
}

static char *jstring(void)
{
	/* at the opening quote */
	const char *s = ++jp;
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	while (*jp && *jp != '"') {
		if (*jp == '\\') {
			jp++;
			switch (*jp) {
			case 'n': *o++ = '\n'; break;
			case 't': *o++ = '\t'; break;
			case 'r': *o++ = '\r'; break;
			case 'b': *o++ = '\b'; break;
			case 'f': *o++ = '\f'; break;
			case 'u': {
				unsigned c = 0;

				for (int k = 1; k <= 4; k++)
					c = c * 16 + (unsigned)(jp[k] <= '9' ? jp[k] - '0' : (jp[k] | 0x20) - 'a' + 10);
				put_utf8(&o, c);
				jp += 4;
				break;
			}
			default: *o++ = *jp;
			}
			jp++;
			continue;
		}
		if (*jp == '<')
			jbad = true; /* the writer escapes every '<' */
		*o++ = *jp++;
	}
	if (*jp != '"')
		jbad = true;
	else
		jp++;
	*o = '\0';
	return out;
}

static struct jv *jvalue(void)
{
	struct jv *v = calloc(1, sizeof(*v));

	jws();
	if (*jp == '{' || *jp == '[') {
		bool obj = *jp == '{';

		v->t = obj ? J_OBJ : J_ARR;
		jp++;
		jws();
		size_t cap = 0;

		while (*jp && *jp != (obj ? '}' : ']')) {
			if (v->n == cap) {
				cap = cap ? 2 * cap : 8;
				v->item = realloc(v->item, cap * sizeof(*v->item));
				v->key = realloc(v->key, cap * sizeof(*v->key));
			}
			v->key[v->n] = NULL;
			if (obj) {
				jws();
				if (*jp != '"') {
					jbad = true;
					return v;
				}
				v->key[v->n] = jstring();
				jws();
				if (*jp++ != ':') {
					jbad = true;
					return v;
				}
			}
			v->item[v->n++] = jvalue();
			jws();
			if (*jp == ',')
				jp++;
			jws();
		}
		if (*jp)
			jp++;
		else
			jbad = true;
	} else if (*jp == '"') {
		v->t = J_STR;
		v->str = jstring();
	} else if (!strncmp(jp, "null", 4)) {
		jp += 4;
	} else if (!strncmp(jp, "true", 4) || !strncmp(jp, "false", 5)) {
		v->t = J_BOOL;
		v->inum = *jp == 't';
		jp += *jp == 't' ? 4 : 5;
	} else {
		char *e;

		v->t = J_NUM;
		v->inum = strtoll(jp, &e, 10);
		v->num = strtod(jp, &e);
		if (e == jp)
			jbad = true;
		jp = e;
	}
	return v;
}

static void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->item[i]);
		if (v->key)
			free(v->key[i]);
	}
	free(v->item);
	free(v->key);
	free(v->str);
	free(v);
}

static struct jv *jget(const struct jv *o, const char *key)
{
	for (size_t i = 0; o && o->t == J_OBJ && i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return o->item[i];
	return NULL;
}

static struct jv *jat(const struct jv *a, size_t i)
{
	return a && a->t == J_ARR && i < a->n ? a->item[i] : NULL;
}

static long long jint(const struct jv *v)
{
	return v && v->t == J_NUM ? v->inum : -1;
}

/* ---- the synthetic experiments ------------------------------------------------------------ */


/* The odd object: its name as map.xml writes it, and as it reads back. */
#define ODD_XML "/nonexistent/lib&lt;b&gt;&amp;&quot;&apos;&lt;!--&lt;script&gt;&#xF7FF;.so"
#define ODD_NAME "lib<b>&\"'<!--<script>\xef\x9f\xbf.so" /* U+F7FF: the byte 0xff */
#define ODD_BASE 0x7f0000000000ull

#define T0 1000000000ull
#define MS 1000000ull

/* phases.er: thread 100 samples every ms at k ms + 0.5 ms (k = 0..1999),
 * 1 ms each: main -> phase_a below 1 s, main -> phase_b after; thread 101
 * samples the odd object 10 times at 1.5 s.  With odd false, only thread
 * 100. */
static int write_phases(const char *dir, bool odd)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));

	if (!w) {
		printf("# %s\n", err);
		return -1;
	}
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_map(w, "<object id=\"1\" time_ns=\"%llu\" event=\"load\" path=\"%s\" base=\"0x%llx\" lo=\"0x%llx\" hi=\"0x%llx\"/>\n",
		       T0, exe, (unsigned long long)exe_base, (unsigned long long)exe_lo, (unsigned long long)exe_hi);
	if (odd) {
		sonde_expw_map(w, "<object id=\"2\" time_ns=\"%llu\" event=\"load\" path=\"" ODD_XML
				  "\" base=\"0x%llx\" lo=\"0x%llx\" hi=\"0x%llx\"/>\n",
			       T0, ODD_BASE, ODD_BASE, ODD_BASE + 0x10000);
		sonde_expw_log(w, "<event kind=\"thread_start\" time_ns=\"%llu\" tid=\"101\"/>\n", T0);
	}
	uint64_t pa[2] = { ((uint64_t)(uintptr_t)&phase_a + 1) | SONDE_PC_EXACT, (uint64_t)(uintptr_t)&main + 8 };
	uint64_t pb[2] = { ((uint64_t)(uintptr_t)&phase_b + 1) | SONDE_PC_EXACT, (uint64_t)(uintptr_t)&main + 8 };
	uint64_t po[2] = { (ODD_BASE + 0x100) | SONDE_PC_EXACT, (uint64_t)(uintptr_t)&main + 8 };

	sonde_expw_stack(w, 1, 0, 2, pa);
	sonde_expw_stack(w, 2, 0, 2, pb);
	if (odd)
		sonde_expw_stack(w, 3, 0, 2, po);
	for (int k = 0; k < 2000; k++)
		sonde_expw_sample(w, 100, 0, T0 + (uint64_t)k * MS + MS / 2, MS, k < 1000 ? 1 : 2);
	for (int k = 0; odd && k < 10; k++)
		sonde_expw_sample(w, 101, 1, T0 + 1500 * MS + (uint64_t)k, MS, 3);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", T0 + 2000 * MS);
	if (sonde_expw_finish(w, 0, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	return 0;
}

/* empty.er: an experiment without a sample or an event. */
static int write_empty(const char *dir)
{
	char err[512];
	struct sonde_expw *w = sonde_expw_create(dir, err, sizeof(err));

	if (!w)
		return -1;
	sonde_expw_log_preamble(w, 100, T0);
	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"%llu\" status=\"0\"/>\n", T0 + MS);
	return sonde_expw_finish(w, 0, err, sizeof(err));
}


/* ---- checks -------------------------------------------------------------------------------- */

static char *script_json(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sonde_report_script_json(f, in, strlen(in));
	fclose(f);
	return buf;
}

static void test_escaping(void)
{
	group = "script_json";
	char *s = script_json("{\"n\":\"</script><!--<script>\"}");

	CHECK_S(s, "{\"n\":\"\\u003c/script>\\u003c!--\\u003cscript>\"}");
	free(s);
	s = script_json("[\"a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xe2\x80\xaa\"]");
	CHECK_S(s, "[\"a\\u2028b\\u2029c\xe2\x80\xaa\"]"); /* U+202A stays */
	free(s);
	s = script_json("{\"plain\":[1,2,3],\"s\":\"&'\\\"\"}");
	CHECK_S(s, "{\"plain\":[1,2,3],\"s\":\"&'\\\"\"}");
	free(s);
	s = script_json("\"<\xe2\x80\"");
	CHECK_S(s, "\"\\u003c\xe2\x80\""); /* a cut sequence stays as it was */
	free(s);
}

static void test_parsers(void)
{
	char err[256];
	uint64_t a, b;

	group = "bucket width";
	CHECK_U(sonde_report_bucket_ns(0, 1000), 1000);
	CHECK_U(sonde_report_bucket_ns(551775072, 1000), 1000000);
	CHECK_U(sonde_report_bucket_ns(2000000000, 1000), 5000000);
	CHECK_U(sonde_report_bucket_ns(999999, 1000), 1000);
	CHECK_U(sonde_report_bucket_ns(10000000000000ull, 1000), 20000000000ull);
	group = "-time";
	CHECK(sonde_time_parse("0.5-1.25", &a, &b, err, sizeof(err)) == 0);
	CHECK_U(a, 500000000);
	CHECK_U(b, 1250000000);
	CHECK(sonde_time_parse("0.1-0.3", &a, &b, err, sizeof(err)) == 0);
	CHECK_U(a, 100000000);
	CHECK_U(b, 300000000);
	CHECK(sonde_time_parse("2-", &a, &b, err, sizeof(err)) == 0);
	CHECK_U(a, 2000000000);
	CHECK_U(b, 0);
	CHECK(sonde_time_parse("-0.000000001", &a, &b, err, sizeof(err)) == 0);
	CHECK_U(a, 0);
	CHECK_U(b, 1);
	CHECK(sonde_time_parse("1.0000000001-2", &a, &b, err, sizeof(err)) < 0);
	CHECK(sonde_time_parse("2-1", &a, &b, err, sizeof(err)) < 0);
	CHECK(strstr(err, "ends before it starts") != NULL);
	CHECK(sonde_time_parse("-", &a, &b, err, sizeof(err)) < 0);
	CHECK(sonde_time_parse("abc", &a, &b, err, sizeof(err)) < 0);
	CHECK(sonde_time_parse("1", &a, &b, err, sizeof(err)) < 0);
	CHECK(sonde_time_parse("1-2x", &a, &b, err, sizeof(err)) < 0);
}

/* The sum of the time cells of id of one kind ("s" or "t") for metric k,
 * over buckets [lo, hi). */
static long long cell_sum(const struct jv *time, const char *kind, size_t id, int k, long long lo, long long hi)
{
	char kb[4], kv[4];

	snprintf(kb, sizeof(kb), "%sb", kind);
	snprintf(kv, sizeof(kv), "%sv", kind);
	const struct jv *b = jat(jget(time, kb), id), *v = jat(jat(jget(time, kv), (size_t)k), id);
	long long q = jint(jat(jget(time, "q"), (size_t)k)), sum = 0, bk = 0;

	if (!b || !v || v->t != J_ARR)
		return 0;
	for (size_t i = 0; i < b->n && i < v->n; i++) {
		bk += jint(b->item[i]);
		if (bk >= lo && bk < hi)
			sum += jint(v->item[i]) * q;
	}
	return sum;
}

/* Writes the report of dir with o; returns its data, parsed (NULL on
 * failure), and in *html the page. */
static struct jv *report_of(const char *dir, const struct sonde_report_opts *o, char **html)
{
	char err[512];
	struct sonde_exp *e = sonde_exp_open(dir, err, sizeof(err));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint32_t g = 0;
	const char *name = "phases.er";

	CHECK(e != NULL);
	if (!e) {
		fclose(f);
		free(buf);
		return NULL;
	}
	int rc = sonde_report_write(f, (const struct sonde_exp *const *)&e, &name, &g, 1, &name, 1, o, NULL, NULL, err,
				    sizeof(err));
	fclose(f);
	sonde_exp_close(e);
	CHECK(rc == 0);
	if (rc) {
		printf("# %s\n", err);
		free(buf);
		return NULL;
	}
	*html = buf;
	const char *open = strstr(buf, "<script type=\"application/json\" id=\"sonde-data\">");
	const char *close = open ? strstr(open, "</script>") : NULL;

	CHECK(open && close);
	if (!open || !close)
		return NULL;
	open += strlen("<script type=\"application/json\" id=\"sonde-data\">");
	char *json = strndup(open, (size_t)(close - open));

	jp = json;
	jbad = false;
	struct jv *d = jvalue();

	jws();
	CHECK(!jbad && !*jp);
	free(json);
	return d;
}

static void test_report(const char *tmp)
{
	char dir[4200];
	char *html = NULL;
	struct sonde_report_opts o;

	group = "report";
	snprintf(dir, sizeof(dir), "%s/phases.er", tmp);
	CHECK(write_phases(dir, true) == 0);
	sonde_report_opts_init(&o);
	struct jv *d = report_of(dir, &o, &html);

	if (!d)
		return;
	CHECK(!strncmp(html, "<!DOCTYPE html>", 15));
	CHECK(strstr(html, "</html>") != NULL);
	/* the marks replaced (spelled in two pieces: this file's source is in
	 * the report, annotated) */
	CHECK(strstr(html, "id=\"sonde-data\">/*SONDE" ":DATA*/") == NULL);
	CHECK(strstr(html, "<script>/*SONDE" ":SCRIPT*/") == NULL);
	free(html);

	/* metrics: totalcpu and samples */
	const struct jv *metrics = jget(d, "metrics"), *total = jget(d, "total");

	CHECK_I(metrics ? metrics->n : 0, 2);
	CHECK_S(jget(jat(metrics, 0), "name")->str, "totalcpu");
	CHECK_I(jint(jat(total, 0)), 2010 * MS);
	CHECK_I(jint(jat(total, 1)), 2010);
	/* functions: phase_a 1 s, phase_b 1 s, main 2 s inclusive */
	const struct jv *funcs = jget(d, "funcs"), *names = jget(funcs, "name");
	long long want_e[3] = { 1000 * MS, 1000 * MS, 0 }, want_i[3] = { 1000 * MS, 1000 * MS, 2010 * MS };
	const char *fn[3] = { "phase_a", "phase_b", "main" };
	bool odd_seen = false;

	for (int k = 0; k < 3; k++) {
		size_t f;

		for (f = 0; f < (names ? names->n : 0); f++)
			if (!strcmp(names->item[f]->str, fn[k]))
				break;
		CHECK(names && f < names->n);
		if (!names || f >= names->n)
			continue;
		CHECK_I(jint(jat(jat(jget(funcs, "e"), 0), f)), want_e[k]);
		CHECK_I(jint(jat(jat(jget(funcs, "i"), 0), f)), want_i[k]);
	}
	for (size_t i = 0; i < jget(d, "objects")->n; i++)
		odd_seen |= !strcmp(jat(jget(d, "objects"), i)->str, ODD_NAME);
	CHECK(odd_seen); /* the odd object's name as it was written */

	/* stacks: 3, each with its values; nodes: main, and a child each */
	const struct jv *stacks = jget(d, "stacks"), *sn = jget(stacks, "n"), *sv = jget(stacks, "v");
	const struct jv *time = jget(d, "time");

	CHECK_I(sn->n, 3);
	CHECK_I(jget(jget(d, "nodes"), "f")->n, 4);
	CHECK_I(jint(jget(time, "w")), 5 * MS);
	CHECK_I(jint(jget(time, "nb")), 400);
	/* every stack's and every thread's cells add up to its values */
	for (size_t s = 0; s < sn->n; s++)
		for (int k = 0; k < 2; k++)
			CHECK_I(cell_sum(time, "s", s, k, 0, 1 << 30), jint(jat(jat(sv, (size_t)k), s)));
	const struct jv *threads = jget(d, "threads");

	CHECK_I(threads->n, 2);
	long long th[2] = { 2000 * (long long)MS, 10 * (long long)MS };

	for (size_t t = 0; t < 2; t++)
		CHECK_I(cell_sum(time, "t", t, 0, 0, 1 << 30), th[jint(jget(jat(threads, t), "tid")) == 101]);
	/* a range: buckets [100, 300) are 0.5 s to 1.5 s: 500 samples of each
	 * phase (thread 101's are at 1.5 s, out) */
	long long ra = 0, rb = 0;

	for (size_t s = 0; s < sn->n; s++) {
		long long v = cell_sum(time, "s", s, 0, 100, 300);
		long long node = jint(jat(sn, s)), f = jint(jat(jget(jget(d, "nodes"), "f"), (size_t)node));

		if (!strcmp(names->item[f]->str, "phase_a"))
			ra += v;
		else if (!strcmp(names->item[f]->str, "phase_b"))
			rb += v;
		else
			CHECK_I(v, 0);
	}
	CHECK_I(ra, 500 * MS);
	CHECK_I(rb, 500 * MS);
	jfree(d);

	/* the same with a budget of 20 cells: wider buckets, the same sums */
	group = "report, small budget";
	o.max_cells = 20;
	d = report_of(dir, &o, &html);
	if (!d)
		return;
	free(html);
	time = jget(d, "time");
	sn = jget(jget(d, "stacks"), "n");
	sv = jget(jget(d, "stacks"), "v");
	CHECK(jint(jget(time, "w")) > (long long)(5 * MS));
	size_t cells = 0;

	for (const char *k = "st"; *k; k++) {
		char kv[3] = { *k, 'v', 0 };

		for (int m = 0; m < 2; m++) {
			const struct jv *a = jat(jget(time, kv), (size_t)m);

			for (size_t i = 0; a && i < a->n; i++)
				cells += a->item[i]->t == J_ARR ? a->item[i]->n : 0;
		}
	}
	CHECK(cells <= 20);
	for (size_t s = 0; s < sn->n; s++)
		for (int k = 0; k < 2; k++)
			CHECK_I(cell_sum(time, "s", s, k, 0, 1 << 30), jint(jat(jat(sv, (size_t)k), s)));
	jfree(d);

	/* -time 0.5-1.5: the model filtered as sonde print filters */
	group = "report, -time";
	sonde_report_opts_init(&o);
	o.filter.start_ns = 500 * MS;
	o.filter.end_ns = 1500 * MS;
	d = report_of(dir, &o, &html);
	if (!d)
		return;
	free(html);
	CHECK_I(jint(jat(jget(d, "total"), 0)), 1000 * MS);
	CHECK_I(jint(jget(jget(d, "filters"), "start_ns")), 500 * MS);
	jfree(d);

	/* an experiment with no data: a valid report, the clock metric */
	group = "report, empty";
	snprintf(dir, sizeof(dir), "%s/empty.er", tmp);
	CHECK(write_empty(dir) == 0);
	sonde_report_opts_init(&o);
	d = report_of(dir, &o, &html);
	if (!d)
		return;
	free(html);
	CHECK_I(jget(jget(d, "stacks"), "n")->n, 0);
	CHECK_I(jget(d, "metrics")->n, 1);
	CHECK_I(jint(jget(jget(d, "time"), "nb")), 0);
	jfree(d);
}

/* The experiment of frames of every kind (framesexp.h): each function's
 * name, load object and exclusive time in the report's data. */
static void test_frames_report(const char *tmp)
{
	static const struct {
		const char *name, *object;
		long long excl;
	} want[] = {
		{ "do_syscall_64", "<kernel>", 5 },
		{ "entry_SYSCALL_64", "<kernel>", 0 },
		{ "kfunc_low", "<kernel>", 2 },
		{ "<kernel>@0xffffffff81003010", "<kernel>", 1 },
		{ "main", "<JIT>", 3 },
		{ "com.example.Main.run(int, java.lang.String[])", "Main.class", 0 },
		{ "com.example.Util.hash(java.lang.Object)", "Util.class", 0 },
		{ "com.example.Main.<init>()", "Main.class", 0 },
		{ "<unknown method>@0x9999", "<JAVA>", 1 },
		{ "<kind 200>@0x1010", "<unknown>", 1 },
	};
	char dir[4200];
	char *html = NULL;
	struct sonde_report_opts o;

	group = "report, frames of every kind";
	snprintf(dir, sizeof(dir), "%s/frames.er", tmp);
	CHECK(write_frames_exp(dir) == 0);
	sonde_report_opts_init(&o);
	struct jv *d = report_of(dir, &o, &html);

	if (!d)
		return;
	free(html);
	const struct jv *funcs = jget(d, "funcs"), *names = jget(funcs, "name"), *obj = jget(funcs, "obj");
	const struct jv *objects = jget(d, "objects");

	CHECK_I(jint(jat(jget(d, "total"), 0)), FX_TOTAL_MS * MS);
	CHECK_I(names ? names->n : 0, 12);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		size_t f;

		for (f = 0; names && f < names->n; f++)
			if (!strcmp(names->item[f]->str, want[k].name))
				break;
		CHECK(names && f < names->n);
		if (!names || f >= names->n) {
			printf("# no function %s in the report\n", want[k].name);
			continue;
		}
		const struct jv *o2 = jat(objects, (size_t)jint(jat(obj, f)));

		CHECK_S(o2 ? o2->str : NULL, want[k].object);
		CHECK_I(jint(jat(jat(jget(funcs, "e"), 0), f)), want[k].excl * (long long)MS);
	}
	jfree(d);
}

int main(int argc, char **argv)
{
	if (find_exe() < 0) {
		printf("not ok - cannot find this program's own mapping\n0 passed, 1 failed\n");
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		char p[4200];

		snprintf(p, sizeof(p), "%s/phases.er", argv[2]);
		if (write_phases(p, false) < 0)
			return 1;
		snprintf(p, sizeof(p), "%s/frames.er", argv[2]);
		if (write_frames_exp(p) < 0)
			return 1;
		snprintf(p, sizeof(p), "%s/empty.er", argv[2]);
		return write_empty(p) < 0;
	}
	char tmp[] = "/tmp/sonde-test-report.XXXXXX";

	if (!mkdtemp(tmp)) {
		printf("not ok - mkdtemp\n0 passed, 1 failed\n");
		return 1;
	}
	test_escaping();
	test_parsers();
	test_report(tmp);
	test_frames_report(tmp);
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
