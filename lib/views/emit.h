/*
 * emit: the output layer.  Every view writes through one emitter, made
 * from the print mode and a FILE *; only this file and emit.c look at
 * the mode (scripts/check-layers.sh checks that nothing else names
 * SONDE_PM_).
 *
 * A view writes its output once, as structure, and the emitter renders
 * it in the mode chosen:
 *
 *   - free text (em_text): only text shows it.  Headings, er_print's
 *     prose, text tables formatted by hand;
 *   - structure (em_obj, em_arr, em_end): JSON objects and arrays; in a
 *     key-value document (em_kv_begin, -header) CSV "path,value" lines
 *     whose paths are the dotted keys ("target.pid", "threads.0.tid");
 *     text shows nothing;
 *   - rows (em_row ... em_row_end): one CSV line, or one JSON object in
 *     the enclosing array; their fields (em_s, em_u, em_i, em_f, em_b,
 *     em_null, em_lines) are CSV values or JSON "key":value pairs;
 *   - tables (em_table*): a vt_table (view_table.h) as er_print text,
 *     CSV, or JSON objects;
 *   - what only one structured form has (a CSV header line, a JSON
 *     field that CSV leaves out): em_csv, em_json.
 *
 * A new output form (sonde export's formats) is a mode here and its
 * rendering in emit.c; the views do not change.
 */
#ifndef SONDE_EMIT_H
#define SONDE_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "views/view_table.h"

/* A delimited text form (er_print's "printmode ;") is the csv form with
 * another delimiter: SONDE_PM_CSV with the character in the bits above
 * the low byte, which only emit.c reads. */
/* SONDE_PM_HTML is er_print's "printmode html": the text form as an HTML
 * document per view, its free text in <pre> blocks and its tables as
 * <table>s (every piece of a table with its header). */
enum sonde_printmode { SONDE_PM_TEXT, SONDE_PM_CSV, SONDE_PM_JSON, SONDE_PM_HTML };

/* "text", "csv", "json", "html", or a single character (the delimiter of
 * the delimited form; ',' is csv) (-printmode); 0, or -1 with a message. */
int sonde_printmode_parse(enum sonde_printmode *m, const char *s, char *err, size_t errlen);

#define EM_DEPTH 16

struct sonde_emit {
	FILE *f;
	enum sonde_printmode mode;
	char sep;      /* csv: the delimiter */
	bool kv;       /* csv: fields outside a row are "path,value" lines */
	bool inrow;    /* csv: between em_row and em_row_end */
	bool rowfirst; /* csv: in a row, before its first field */
	int depth;
	bool first[EM_DEPTH]; /* json: no comma before the first member */
	bool array[EM_DEPTH];
	unsigned index[EM_DEPTH]; /* csv key-value paths: the array index */
	char path[EM_DEPTH][64];
};

void em_init(struct sonde_emit *e, FILE *f, enum sonde_printmode mode);

/* Around a view's whole output: in html, the document's head (titled
 * title) and its end; nothing in the other forms. */
void em_doc_begin(struct sonde_emit *e, const char *title);
void em_doc_finish(struct sonde_emit *e);

/* Between two views' outputs: a blank line in text and csv; nothing in
 * json (its documents are one a line). */
void em_between(struct sonde_emit *e);
/* True when the output is the text form: for a caller that says a view
 * has only that form (-dump).  Not for choosing what to write. */
bool em_is_text(const struct sonde_emit *e);

/* Free text, written only in that mode. */
void em_text(struct sonde_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void em_csv(struct sonde_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void em_json(struct sonde_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text and csv: a view with no csv form of its own (-experiment_list). */
void em_textcsv(struct sonde_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Csv only: a string value, quoted when needed. */
void em_csv_str(struct sonde_emit *e, const char *s);
/* A FILE * for free text that a function writes itself (a long text
 * layout kept as one function, -dump's text in every form): e's own, or
 * in html one that escapes what it is given into a <pre> block, which
 * em_text_close ends.  NULL when memory runs out. */
FILE *em_text_open(struct sonde_emit *e);
void em_text_close(struct sonde_emit *e, FILE *f);
/* Free text that a function writes to a FILE * (a long text layout kept
 * as one function): calls write(f, arg) in text (and html) only. */
void em_text_with(struct sonde_emit *e, void (*write)(FILE *f, const void *arg), const void *arg);

/* ---- structure ------------------------------------------------------------------- */

/* A key-value document that a function builds through the emitter:
 * calls write(e, arg) in csv and json only.  Text has no key-value form,
 * and a document can cost as much to compute as the view itself (-header's
 * trace totals match every heap event), so text never computes it. */
void em_doc_with(struct sonde_emit *e, void (*write)(const struct sonde_emit *e, const void *arg), const void *arg);

/* A key-value document: csv writes "key,value" and then a line per
 * field, its dotted path and its value; json the same fields nested. */
void em_kv_begin(struct sonde_emit *e);
/* An object or array (key NULL at the top or inside an array); em_end
 * closes the innermost. */
void em_obj(struct sonde_emit *e, const char *key);
void em_arr(struct sonde_emit *e, const char *key);
void em_end(struct sonde_emit *e);
/* em_end, then json's newline after a top-level document. */
void em_end_doc(struct sonde_emit *e);

/* A row: csv one line, json an object (the member of an array). */
void em_row(struct sonde_emit *e);
void em_row_end(struct sonde_emit *e);

/* Fields: strings (NULL: json null, csv empty; csv quotes when needed),
 * unsigned and signed integers, a double in printf's fmt, booleans, null,
 * and a list of strings given one a line (json an array, csv one field
 * joined with sep). */
void em_s(struct sonde_emit *e, const char *key, const char *s);
void em_u(struct sonde_emit *e, const char *key, uint64_t v);
void em_i(struct sonde_emit *e, const char *key, int64_t v);
void em_f(struct sonde_emit *e, const char *key, const char *fmt, double v);
void em_b(struct sonde_emit *e, const char *key, bool v);
void em_null(struct sonde_emit *e, const char *key);
void em_lines(struct sonde_emit *e, const char *key, const char *lines, const char *sep);
/* A field of a row that only csv has (csv is flat: a row repeats what
 * json says once in the enclosing object) / that only json has. */
void em_s_csv(struct sonde_emit *e, const char *key, const char *s);
void em_u_csv(struct sonde_emit *e, const char *key, uint64_t v);
void em_f_json(struct sonde_emit *e, const char *key, const char *fmt, double v);

/* ---- tables ---------------------------------------------------------------------- */

/* The whole table: text its column headers and rows, csv its header line
 * and rows, json "key":[rows] in the enclosing object. */
void em_table(struct sonde_emit *e, const char *key, struct vt_table *t);
/* Text only: the column headers and rows [from, to) (a block of a table
 * printed piecewise). */
void em_table_text(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to);
/* Text only: rows [from, to) without the headers (a block printed under
 * headers written before). */
void em_table_text_rows(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to);
/* Text only: rows [from, to) as er_print's summary blocks (fsummary). */
void em_table_summary(struct sonde_emit *e, struct vt_table *t, size_t from, size_t to);
/* Csv only: the whole table. */
void em_table_csv(struct sonde_emit *e, const struct vt_table *t);
/* Json only: "key":{row r} / "key":[rows from..to) in the enclosing object. */
void em_table_row(struct sonde_emit *e, const char *key, const struct vt_table *t, size_t r);
void em_table_rows(struct sonde_emit *e, const char *key, const struct vt_table *t, size_t from, size_t to);

#endif
