/*
 * view_table: the table behind every metric view (internal to lib/view*.c).
 *
 * A table has column groups (one per metric item: its title words, an
 * optional line above them, whether it is the sort column) made of
 * subcolumns (a value, a percentage, a delta or a ratio), identity fields
 * per row ("name", "object", ... for csv and json) and rows.  The renderers
 * write it as er_print text (headers stacked over lines, widths fitted to
 * the whole table, so that blocks printed piecewise still line up), as csv,
 * or as JSON objects.
 *
 * Memory: rows and their strings are owned by the table; vt_release()
 * frees them.  Adding returns NULL / -1 when memory runs out.
 */
#ifndef SONDE_VIEW_TABLE_H
#define SONDE_VIEW_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/metrics.h"

enum vt_kind { VT_VAL, VT_PCT, VT_DELTA, VT_RATIO };

#define VT_MAX_SUBS 192
#define VT_MAX_GROUPS 96
#define VT_MAX_FIELDS 8

struct vt_sub {
	enum vt_kind kind;
	enum sonde_unit unit; /* VT_VAL and VT_DELTA */
	bool text;	      /* shown in text (csv and json show every subcolumn) */
	char key[96];	      /* csv / json key */
	int group;
	int width; /* text, computed */
};

struct vt_group {
	char title[96]; /* words, wrapped to the width */
	char top[64];	/* a line above the title (compare: the experiment), may be "" */
	char ltitle[96]; /* summary blocks' label ("Exclusive Total CPU Time"); "": title */
	bool sort;	/* the sort column: its title ends with '*' */
	int width;	/* computed */
};

struct vt_cell {
	int64_t i; /* VT_VAL, VT_DELTA */
	double d;  /* VT_PCT, VT_RATIO, and VT_VAL, VT_DELTA of SONDE_UNIT_RATIO */
	bool null; /* no value (a ratio to zero, a function absent from an experiment) */
};

struct vt_field {
	const char *s; /* a string, or NULL for a number */
	int64_t i;
	bool null;
};

struct vt_row {
	char mark;	/* ' ' or '*' (the selected function of a callers-callees block) */
	bool hot;	/* text with hotcol: "## " before the metrics */
	char *text;	/* what text shows in the name column (a tree prefix and the name) */
	struct vt_field f[VT_MAX_FIELDS];
	struct vt_cell *c; /* nsubs cells */
};

struct vt_table {
	int ngroups, nsubs, nfields;
	struct vt_group g[VT_MAX_GROUPS];
	struct vt_sub s[VT_MAX_SUBS];
	const char *field[VT_MAX_FIELDS]; /* identity keys: "name", "object", ... */
	const char *flabel[VT_MAX_FIELDS]; /* summary blocks' label of a field; NULL: not shown */
	struct vt_row *rows;
	size_t nrows, cap;
	char **strs; /* strings owned by the table */
	size_t nstrs, scap;
	bool measured;
	bool blanks; /* text: a cell without a value is blank, not "-" */
	bool hotcol; /* text rows start with "## " (hot) or "   " (annotated source) */
	const char *namecol; /* text: the last column's title; NULL: "Name" */
};

void vt_init(struct vt_table *t);
void vt_release(struct vt_table *t);

/* Adds a group / a subcolumn of the last group / an identity field key.
 * Return the index, or -1 when the table is full. */
int vt_group(struct vt_table *t, const char *title, const char *top, bool sort);
int vt_sub(struct vt_table *t, enum vt_kind kind, enum sonde_unit unit, bool text, const char *key);
int vt_field_key(struct vt_table *t, const char *key);

/* Adds a row whose text name is text (copied); its cells start null and
 * its fields NULL-strings; NULL when out of memory. */
struct vt_row *vt_row(struct vt_table *t, char mark, const char *text);
/* A string the table keeps until vt_release (copied); NULL when out of memory. */
const char *vt_str(struct vt_table *t, const char *s);

static inline void vt_set_i(struct vt_row *r, int sub, int64_t v)
{
	r->c[sub].i = v;
	r->c[sub].null = false;
}
static inline void vt_set_d(struct vt_row *r, int sub, double v)
{
	r->c[sub].d = v;
	r->c[sub].null = false;
}
static inline void vt_set_s(struct vt_row *r, int field, const char *s)
{
	r->f[field].s = s;
	r->f[field].null = s == NULL;
}
static inline void vt_set_n(struct vt_row *r, int field, int64_t v)
{
	r->f[field].s = NULL;
	r->f[field].i = v;
	r->f[field].null = false;
}

/* Text: the stacked header lines (top, title, units), then rows [from, to). */
void vt_text_header(FILE *f, struct vt_table *t);
void vt_text_rows(FILE *f, struct vt_table *t, size_t from, size_t to);

/* Text, er_print's fsummary form: rows [from, to) each as a block, its
 * name, then a line per column group ("Exclusive Total CPU Time: 0.130
 * ( 65.0%)") and per labelled field ("Load Object: /bin/x"). */
void vt_text_summary(FILE *f, struct vt_table *t, size_t from, size_t to);
/* The rows [from, to) as an HTML <table> under the column headers
 * (-printmode html): the sort column's cells marked class "sort", numbers
 * class "num", the name class "name"; the cells as text prints them. */
void vt_html(FILE *f, struct vt_table *t, size_t from, size_t to);
/* s (n bytes of s) with HTML's special characters escaped. */
void vt_html_str(FILE *f, const char *s);
void vt_html_bytes(FILE *f, const char *s, size_t n);

/* CSV: the header line and every row, fields separated by sep (',', or
 * the delimiter of a delimited text form). */
void vt_csv(FILE *f, const struct vt_table *t, char sep);

/* JSON: one row as an object; rows [from, to) as an array. */
void vt_json_row(FILE *f, const struct vt_table *t, size_t r);
void vt_json_rows(FILE *f, const struct vt_table *t, size_t from, size_t to);

/* JSON string and number helpers. */
void vt_json_str(FILE *f, const char *s);
void vt_json_double(FILE *f, double d);
void vt_csv_str(FILE *f, const char *s);
/* The same with sep as the separator: quoted when it holds sep. */
void vt_csv_str_sep(FILE *f, const char *s, char sep);

#endif
