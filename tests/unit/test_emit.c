/*
 * test_emit: the output layer (lib/views/emit.h), its exact output in
 * text, csv, json and html: a document of rows, a key-value document, a
 * table, the free text of each mode and the separator between views.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "views/emit.h"

static char *buf;
static size_t len;

static FILE *open_out(struct sonde_emit *e, enum sonde_printmode m)
{
	FILE *f = open_memstream(&buf, &len);

	em_init(e, f, m);
	return f;
}

static const char *close_out(FILE *f)
{
	fclose(f);
	return buf;
}

#define CHECK_OUT(got, want)                                       \
	do {                                                       \
		const char *g_ = (got);                            \
		if (strcmp(g_, want))                              \
			printf("got:\n%s\nwant:\n%s\n", g_, want); \
		CHECK(!strcmp(g_, want));                          \
	} while (0)

/* A view with a heading, two rows in an array and a field json alone has. */
static const char *rows(enum sonde_printmode m)
{
	struct sonde_emit e;
	FILE *f = open_out(&e, m);

	em_text(&e, "Two rows\n");
	em_csv(&e, "name,n,x,ok,none,stack\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "rows");
	em_arr(&e, "rows");
	for (int i = 0; i < 2; i++) {
		em_row(&e);
		em_s(&e, "name", i ? "a,b" : "q\"");
		em_u(&e, "n", (uint64_t)i + 18446744073709551614u);
		em_f(&e, "x", "%.3f", 1.5 * i);
		em_b(&e, "ok", i);
		em_null(&e, "none");
		em_lines(&e, "stack", "f\ng", ";");
		em_row_end(&e);
		em_text(&e, "row %d\n", i);
	}
	em_end(&e);
	em_json(&e, ",\"more\":-1");
	em_i(&e, "i", -3);
	em_end_doc(&e);
	return close_out(f);
}

static void hello(FILE *f, const void *who)
{
	fprintf(f, "hello %s\n", (const char *)who);
}

static const char *with(enum sonde_printmode m)
{
	struct sonde_emit e;
	FILE *f = open_out(&e, m);

	em_text_with(&e, hello, "text");
	return close_out(f);
}

/* A document built by a function: only the structured forms call it. */
static int doc_calls;

static void doc(const struct sonde_emit *out, const void *arg)
{
	struct sonde_emit k = *out;

	doc_calls++;
	em_kv_begin(&k);
	em_obj(&k, NULL);
	em_s(&k, "view", arg);
	em_end_doc(&k);
}

static const char *doc_with(enum sonde_printmode m)
{
	struct sonde_emit e;
	FILE *f = open_out(&e, m);

	em_text_with(&e, hello, "text");
	em_doc_with(&e, doc, "d");
	return close_out(f);
}

static const char *kv(enum sonde_printmode m)
{
	struct sonde_emit e;
	FILE *f = open_out(&e, m);

	em_kv_begin(&e);
	em_obj(&e, NULL);
	em_s(&e, "view", "header");
	em_s(&e, "notes", NULL);
	em_obj(&e, "target");
	em_u(&e, "pid", 7);
	em_end(&e);
	em_arr(&e, "threads");
	for (int i = 0; i < 2; i++) {
		em_obj(&e, NULL);
		em_u(&e, "tid", 10 + (unsigned)i);
		em_null(&e, "cpu");
		em_end(&e);
	}
	em_end(&e);
	em_arr(&e, "words");
	em_s(&e, NULL, "x y");
	em_end(&e);
	em_end_doc(&e);
	em_between(&e);
	return close_out(f);
}

static const char *table(enum sonde_printmode m)
{
	struct sonde_emit e;
	struct vt_table t;
	FILE *f = open_out(&e, m);

	vt_init(&t);
	vt_group(&t, "Excl. Total CPU", "", true);
	int s = vt_sub(&t, VT_VAL, SONDE_UNIT_NS, true, "e.totalcpu");
	vt_field_key(&t, "name");
	struct vt_row *r = vt_row(&t, ' ', "<Total>");

	vt_set_i(r, s, 1500000000);
	vt_set_s(r, 0, "<Total>");
	r = vt_row(&t, ' ', "main");
	vt_set_i(r, s, 0);
	vt_set_s(r, 0, "main");
	em_obj(&e, NULL);
	em_s(&e, "view", "t");
	em_table(&e, "rows", &t);
	em_table_row(&e, "first", &t, 0);
	em_end_doc(&e);
	vt_release(&t);
	return close_out(f);
}

int main(void)
{
	group = "rows";
	CHECK_OUT(rows(SONDE_PM_TEXT), "Two rows\nrow 0\nrow 1\n");
	CHECK_OUT(rows(SONDE_PM_CSV), "name,n,x,ok,none,stack\n"
				      "\"q\"\"\",18446744073709551614,0.000,false,,f;g\n"
				      "\"a,b\",18446744073709551615,1.500,true,,f;g\n");
	CHECK_OUT(rows(SONDE_PM_JSON),
		  "{\"view\":\"rows\",\"rows\":["
		  "{\"name\":\"q\\\"\",\"n\":18446744073709551614,\"x\":0.000,\"ok\":false,\"none\":null,"
		  "\"stack\":[\"f\",\"g\"]},"
		  "{\"name\":\"a,b\",\"n\":18446744073709551615,\"x\":1.500,\"ok\":true,\"none\":null,"
		  "\"stack\":[\"f\",\"g\"]}],\"more\":-1,\"i\":-3}\n");

	group = "key-value";
	CHECK_OUT(kv(SONDE_PM_TEXT), "\n");
	CHECK_OUT(kv(SONDE_PM_CSV), "key,value\nview,header\nnotes,\ntarget.pid,7\n"
				    "threads.0.tid,10\nthreads.0.cpu,\nthreads.1.tid,11\nthreads.1.cpu,\n"
				    "words.0,x y\n\n");
	CHECK_OUT(kv(SONDE_PM_JSON), "{\"view\":\"header\",\"notes\":null,\"target\":{\"pid\":7},"
				     "\"threads\":[{\"tid\":10,\"cpu\":null},{\"tid\":11,\"cpu\":null}],"
				     "\"words\":[\"x y\"]}\n");

	group = "table";
	const char *t = table(SONDE_PM_TEXT);

	CHECK(strstr(t, "<Total>") && strstr(t, "1.500") && strstr(t, "main"));
	CHECK_OUT(table(SONDE_PM_CSV), "name,e.totalcpu\n<Total>,1500000000\nmain,0\n");
	t = table(SONDE_PM_JSON);
	CHECK(!strncmp(t, "{\"view\":\"t\",\"rows\":[{", 21));
	CHECK(strstr(t, "],\"first\":{") && !strcmp(t + strlen(t) - 3, "}}\n"));

	group = "html";
	/* free text in <pre> blocks, escaped; no structure; the table as a
	 * <table> with its two header rows, the sort column marked */
	CHECK_OUT(rows(SONDE_PM_HTML), "<pre>\nTwo rows\n</pre>\n<pre>\nrow 0\n</pre>\n<pre>\nrow 1\n</pre>\n");
	CHECK_OUT(kv(SONDE_PM_HTML), "\n");
	CHECK_OUT(table(SONDE_PM_HTML),
		  "<table class=\"sonde\">\n"
		  "<tr><th colspan=\"1\" class=\"sort\">Excl. Total CPU*</th><th rowspan=\"2\">Name</th></tr>\n"
		  "<tr><th class=\"sort\">sec.</th></tr>\n"
		  "<tr><td class=\"num sort\">1.500</td><td class=\"name\">&lt;Total&gt;</td></tr>\n"
		  "<tr><td class=\"num sort\">0.   </td><td class=\"name\">main</td></tr>\n"
		  "</table>\n");
	CHECK_OUT(with(SONDE_PM_HTML), "<pre>\nhello text\n</pre>\n");
	doc_calls = 0;
	CHECK_OUT(doc_with(SONDE_PM_HTML), "<pre>\nhello text\n</pre>\n");
	CHECK(doc_calls == 0);
	{
		struct sonde_emit h;
		FILE *f = open_out(&h, SONDE_PM_HTML);

		em_doc_begin(&h, "a <b> & \"c\"");
		FILE *tf = em_text_open(&h);

		fputs("x < y && z\n", tf);
		em_text_close(&h, tf);
		em_doc_finish(&h);
		const char *o = close_out(f);

		const char *head = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>a &lt;b&gt; &amp; &quot;c&quot;</title>";

		CHECK(!strncmp(o, head, strlen(head)));
		CHECK(strstr(o, "</style></head><body>\n<pre>\nx &lt; y &amp;&amp; z\n</pre>\n</body></html>\n") != NULL);
		f = open_out(&h, SONDE_PM_TEXT); /* nothing around text */
		em_doc_begin(&h, "t");
		tf = em_text_open(&h);
		CHECK(tf == f);
		fputs("plain\n", tf);
		em_text_close(&h, tf);
		em_doc_finish(&h);
		CHECK_OUT(close_out(f), "plain\n");
	}

	group = "modes";
	CHECK_OUT(with(SONDE_PM_TEXT), "hello text\n");
	CHECK_OUT(with(SONDE_PM_CSV), "");
	CHECK_OUT(with(SONDE_PM_JSON), "");
	doc_calls = 0;
	CHECK_OUT(doc_with(SONDE_PM_TEXT), "hello text\n");
	CHECK(doc_calls == 0); /* text never computes the document */
	CHECK_OUT(doc_with(SONDE_PM_CSV), "key,value\nview,d\n");
	CHECK_OUT(doc_with(SONDE_PM_JSON), "{\"view\":\"d\"}\n");
	CHECK(doc_calls == 2);
	struct sonde_emit e;

	em_init(&e, stdout, SONDE_PM_TEXT);
	CHECK(em_is_text(&e));
	em_init(&e, stdout, SONDE_PM_JSON);
	CHECK(!em_is_text(&e));
	free(buf);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
