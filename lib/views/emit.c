/*
 * emit: the output layer (see emit.h).  The only code that looks at the
 * print mode.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "views/emit.h"

int sonde_printmode_parse(enum sonde_printmode *m, const char *s, char *err, size_t errlen)
{
	static const char *const w[] = { "text", "csv", "json", "html" };

	for (int i = 0; i < 4; i++)
		if (s && !strcmp(s, w[i])) {
			*m = (enum sonde_printmode)i;
			return 0;
		}
	/* er_print: any other single character delimits the fields; a
	 * letter, digit, quote or blank would make the output unreadable */
	if (s && s[0] && !s[1] && ispunct((unsigned char)s[0]) && s[0] != '"') {
		*m = (enum sonde_printmode)(SONDE_PM_CSV | ((unsigned char)s[0] << 8));
		return 0;
	}
	snprintf(err, errlen, "unknown print mode '%s' (text, csv, json, html, or one punctuation character "
		 "as the delimiter)", s ? s : "");
	return -1;
}

void em_init(struct sonde_emit *e, FILE *f, enum sonde_printmode mode)
{
	memset(e, 0, sizeof(*e));
	e->f = f;
	e->mode = (enum sonde_printmode)(mode & 0xff);
	e->sep = (char)((unsigned)mode >> 8);
	if (!e->sep)
		e->sep = ',';
	e->first[0] = true;
}

void em_between(struct sonde_emit *e)
{
	if (e->mode != SONDE_PM_JSON)
		fputc('\n', e->f);
}

bool em_is_text(const struct sonde_emit *e)
{
	return e->mode == SONDE_PM_TEXT;
}

/* The forms that show the free text and the tables as text lays them out:
 * text, and html (which wraps them). */
static bool textish(const struct sonde_emit *e)
{
	return e->mode == SONDE_PM_TEXT || e->mode == SONDE_PM_HTML;
}

void em_doc_begin(struct sonde_emit *e, const char *title)
{
	if (e->mode != SONDE_PM_HTML)
		return;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", e->f);
	vt_html_str(e->f, title);
	fputs("</title>\n<style>\n"
	      "body { font-family: sans-serif; font-size: 13px; }\n"
	      "pre { margin: 0; }\n"
	      "table.sonde { border-collapse: collapse; margin: 0.4em 0; }\n"
	      "table.sonde th, table.sonde td { border: 1px solid #bbb; padding: 1px 6px; }\n"
	      "table.sonde th { background: #f3f0d8; font-weight: normal; }\n"
	      "table.sonde td.num { text-align: right; font-family: monospace; white-space: pre; }\n"
	      "table.sonde td.name { white-space: pre; font-family: monospace; }\n"
	      "table.sonde .sort { background: #ffff99; }\n"
	      "</style></head><body>\n",
	      e->f);
}

void em_doc_finish(struct sonde_emit *e)
{
	if (e->mode == SONDE_PM_HTML)
		fputs("</body></html>\n", e->f);
}

/* Html: text as a <pre> block, escaped. */
static void html_pre(struct sonde_emit *e, const char *s)
{
	fputs("<pre>\n", e->f); /* (a parser drops the newline after <pre>, not the text's own) */
	vt_html_str(e->f, s);
	fputs("</pre>\n", e->f);
}

static ssize_t html_cookie_write(void *c, const char *buf, size_t n)
{
	vt_html_bytes(c, buf, n);
	return (ssize_t)n;
}

static int html_cookie_close(void *c)
{
	fputs("</pre>\n", c);
	return 0;
}

FILE *em_text_open(struct sonde_emit *e)
{
	if (e->mode != SONDE_PM_HTML)
		return e->f;
	cookie_io_functions_t io = { .write = html_cookie_write, .close = html_cookie_close };
	FILE *f = fopencookie(e->f, "w", io);

	if (f)
		fputs("<pre>\n", e->f);
	return f;
}

void em_text_close(struct sonde_emit *e, FILE *f)
{
	if (f && f != e->f)
		fclose(f);
}

static void vput(struct sonde_emit *e, enum sonde_printmode m, const char *fmt, va_list ap)
{
	if (e->mode == m) {
		vfprintf(e->f, fmt, ap);
	} else if (m == SONDE_PM_TEXT && e->mode == SONDE_PM_HTML) {
		char *s = NULL;

		if (vasprintf(&s, fmt, ap) >= 0)
			html_pre(e, s);
		free(s);
	}
}

void em_text(struct sonde_emit *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(e, SONDE_PM_TEXT, fmt, ap);
	va_end(ap);
}

/* Csv that a view formats itself, with ',' between fields: another
 * delimiter replaces the commas outside double quotes. */
void em_csv(struct sonde_emit *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (e->mode == SONDE_PM_CSV && e->sep != ',') {
		char *s = NULL;
		bool quoted = false;

		if (vasprintf(&s, fmt, ap) >= 0) {
			for (char *c = s; *c; c++) {
				if (*c == '"')
					quoted = !quoted;
				else if (*c == ',' && !quoted)
					*c = e->sep;
			}
			fputs(s, e->f);
		}
		free(s);
	} else {
		vput(e, SONDE_PM_CSV, fmt, ap);
	}
	va_end(ap);
}

void em_json(struct sonde_emit *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(e, SONDE_PM_JSON, fmt, ap);
	va_end(ap);
}

void em_textcsv(struct sonde_emit *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (e->mode == SONDE_PM_HTML)
		vput(e, SONDE_PM_TEXT, fmt, ap);
	else if (e->mode != SONDE_PM_JSON)
		vfprintf(e->f, fmt, ap);
	va_end(ap);
}

void em_csv_str(struct sonde_emit *e, const char *s)
{
	if (e->mode == SONDE_PM_CSV)
		vt_csv_str_sep(e->f, s, e->sep);
}

void em_text_with(struct sonde_emit *e, void (*write)(FILE *f, const void *arg), const void *arg)
{
	if (!textish(e))
		return;
	FILE *f = em_text_open(e);

	if (f)
		write(f, arg);
	em_text_close(e, f);
}

/* ---- structure ------------------------------------------------------------------- */

void em_doc_with(struct sonde_emit *e, void (*write)(const struct sonde_emit *e, const void *arg), const void *arg)
{
	if (!textish(e))
		write(e, arg);
}

/* csv: inside a row (set by em_row) */
static bool csv_row(const struct sonde_emit *e)
{
	return e->mode == SONDE_PM_CSV && e->inrow;
}

void em_kv_begin(struct sonde_emit *e)
{
	e->kv = true;
	if (e->mode == SONDE_PM_CSV)
		fprintf(e->f, "key%cvalue\n", e->sep);
}

/* A field's key: json ",\"key\":", csv a row's comma or a key-value
 * document's path and comma.  False when the mode writes no value. */
static bool key(struct sonde_emit *e, const char *k)
{
	switch (e->mode) {
	case SONDE_PM_TEXT:
	case SONDE_PM_HTML: return false;
	case SONDE_PM_JSON:
		if (!e->first[e->depth])
			fputc(',', e->f);
		e->first[e->depth] = false;
		if (!e->array[e->depth]) {
			vt_json_str(e->f, k);
			fputc(':', e->f);
		}
		return true;
	case SONDE_PM_CSV: break;
	}
	if (csv_row(e)) {
		if (!e->rowfirst)
			fputc(e->sep, e->f);
		e->rowfirst = false;
		return true;
	}
	if (!e->kv)
		return false;
	char full[1200] = "";
	size_t used = 0;

	for (int d = 1; d <= e->depth && used < sizeof(full); d++)
		if (e->path[d][0])
			used += (size_t)snprintf(full + used, sizeof(full) - used, "%s.", e->path[d]);
	if (e->array[e->depth])
		snprintf(full + used, sizeof(full) - used, "%u", e->index[e->depth]++);
	else
		snprintf(full + used, sizeof(full) - used, "%s", k);
	vt_csv_str_sep(e->f, full, e->sep);
	fputc(e->sep, e->f);
	return true;
}

/* After a value: a key-value document's line ends. */
static void value_end(struct sonde_emit *e)
{
	if (e->mode == SONDE_PM_CSV && !csv_row(e))
		fputc('\n', e->f);
}

static void nest(struct sonde_emit *e, const char *k, bool array)
{
	char name[64];

	if (textish(e) || (e->mode == SONDE_PM_CSV && !e->kv))
		return;
	if (e->array[e->depth])
		snprintf(name, sizeof(name), "%u", e->index[e->depth]);
	else
		snprintf(name, sizeof(name), "%s", k ? k : "");
	if (e->mode == SONDE_PM_JSON) {
		if (k || e->array[e->depth])
			key(e, k);
		fputc(array ? '[' : '{', e->f);
	} else if (e->array[e->depth]) {
		e->index[e->depth]++;
	}
	if (e->depth + 1 >= EM_DEPTH)
		return;
	e->depth++;
	e->first[e->depth] = true;
	e->array[e->depth] = array;
	e->index[e->depth] = 0;
	snprintf(e->path[e->depth], sizeof(e->path[e->depth]), "%s", name);
}

void em_obj(struct sonde_emit *e, const char *k)
{
	nest(e, k, false);
}

void em_arr(struct sonde_emit *e, const char *k)
{
	nest(e, k, true);
}

void em_end(struct sonde_emit *e)
{
	if (textish(e) || (e->mode == SONDE_PM_CSV && !e->kv))
		return;
	if (e->mode == SONDE_PM_JSON)
		fputc(e->array[e->depth] ? ']' : '}', e->f);
	if (e->depth > 0)
		e->depth--;
	if (e->depth == 0)
		e->kv = false;
}

void em_end_doc(struct sonde_emit *e)
{
	em_end(e);
	if (e->mode == SONDE_PM_JSON)
		fputc('\n', e->f);
	e->kv = false;
}

void em_row(struct sonde_emit *e)
{
	if (e->mode == SONDE_PM_CSV) {
		e->inrow = true;
		e->rowfirst = true;
	} else {
		em_obj(e, NULL);
	}
}

void em_row_end(struct sonde_emit *e)
{
	if (e->mode == SONDE_PM_CSV) {
		fputc('\n', e->f);
		e->inrow = false;
	} else {
		em_end(e);
	}
}

/* ---- fields ---------------------------------------------------------------------- */

void em_s(struct sonde_emit *e, const char *k, const char *s)
{
	if (!key(e, k))
		return;
	if (e->mode == SONDE_PM_JSON) {
		if (s)
			vt_json_str(e->f, s);
		else
			fputs("null", e->f);
	} else if (s) {
		vt_csv_str_sep(e->f, s, e->sep);
	}
	value_end(e);
}

void em_u(struct sonde_emit *e, const char *k, uint64_t v)
{
	if (!key(e, k))
		return;
	fprintf(e->f, "%" PRIu64, v);
	value_end(e);
}

void em_i(struct sonde_emit *e, const char *k, int64_t v)
{
	if (!key(e, k))
		return;
	fprintf(e->f, "%" PRId64, v);
	value_end(e);
}

void em_f(struct sonde_emit *e, const char *k, const char *fmt, double v)
{
	if (!key(e, k))
		return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(e->f, fmt, v);
#pragma GCC diagnostic pop
	value_end(e);
}

void em_b(struct sonde_emit *e, const char *k, bool v)
{
	if (!key(e, k))
		return;
	fputs(v ? "true" : "false", e->f);
	value_end(e);
}

void em_null(struct sonde_emit *e, const char *k)
{
	if (!key(e, k))
		return;
	if (e->mode == SONDE_PM_JSON)
		fputs("null", e->f);
	value_end(e);
}

void em_lines(struct sonde_emit *e, const char *k, const char *lines, const char *sep)
{
	if (!key(e, k))
		return;
	if (e->mode == SONDE_PM_JSON) {
		fputc('[', e->f);
		for (const char *c = lines; *c;) {
			const char *nl = strchr(c, '\n');
			size_t len = nl ? (size_t)(nl - c) : strlen(c);
			char *one = strndup(c, len);

			if (one) {
				vt_json_str(e->f, one);
				free(one);
			}
			c += len;
			if (*c) {
				fputc(',', e->f);
				c++;
			}
		}
		fputc(']', e->f);
	} else {
		char *s = malloc(strlen(lines) * (strlen(sep) + 1) + 1), *p = s;

		if (s) {
			for (const char *c = lines; *c; c++)
				if (*c == '\n')
					p += sprintf(p, "%s", sep);
				else
					*p++ = *c;
			*p = '\0';
			vt_csv_str_sep(e->f, s, e->sep);
			free(s);
		}
	}
	value_end(e);
}

void em_s_csv(struct sonde_emit *e, const char *k, const char *s)
{
	if (e->mode == SONDE_PM_CSV)
		em_s(e, k, s);
}

void em_u_csv(struct sonde_emit *e, const char *k, uint64_t v)
{
	if (e->mode == SONDE_PM_CSV)
		em_u(e, k, v);
}

void em_f_json(struct sonde_emit *e, const char *k, const char *fmt, double v)
{
	if (e->mode == SONDE_PM_JSON)
		em_f(e, k, fmt, v);
}

/* ---- tables ---------------------------------------------------------------------- */

void em_table(struct sonde_emit *e, const char *k, struct vt_table *t)
{
	em_table_text(e, t, 0, t->nrows);
	em_table_csv(e, t);
	em_table_rows(e, k, t, 0, t->nrows);
}

/* (html: every piece of a table is a <table> with its header; the
 * header alone, which text prints above pieces to come, is nothing) */
void em_table_text(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to)
{
	if (e->mode == SONDE_PM_HTML && from < to) {
		vt_html(e->f, t, from, to);
	} else if (e->mode == SONDE_PM_TEXT) {
		vt_text_header(e->f, t);
		vt_text_rows(e->f, t, from, to);
	}
}

void em_table_text_rows(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to)
{
	if (e->mode == SONDE_PM_TEXT)
		vt_text_rows(e->f, t, from, to);
	else if (e->mode == SONDE_PM_HTML && from < to)
		vt_html(e->f, t, from, to);
}

void em_table_summary(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to)
{
	if (!textish(e))
		return;
	FILE *f = em_text_open(e);

	if (f)
		vt_text_summary(f, t, from, to);
	em_text_close(e, f);
}

void em_table_csv(struct sonde_emit *e, const struct vt_table *t)
{
	if (e->mode == SONDE_PM_CSV)
		vt_csv(e->f, t, e->sep);
}

void em_table_row(struct sonde_emit *e, const char *k, const struct vt_table *t, size_t r)
{
	if (e->mode != SONDE_PM_JSON)
		return;
	key(e, k);
	vt_json_row(e->f, t, r);
}

void em_table_rows(struct sonde_emit *e, const char *k, const struct vt_table *t, size_t from, size_t to)
{
	if (e->mode != SONDE_PM_JSON)
		return;
	key(e, k);
	vt_json_rows(e->f, t, from, to);
}
