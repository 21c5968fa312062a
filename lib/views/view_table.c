/*
 * The table renderers of the views (see view_table.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "views/view_table.h"

#include "sonde/utf8.h"

void vt_init(struct vt_table *t)
{
	memset(t, 0, sizeof(*t));
}

void vt_release(struct vt_table *t)
{
	for (size_t i = 0; i < t->nrows; i++) {
		free(t->rows[i].text);
		free(t->rows[i].c);
	}
	free(t->rows);
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	vt_init(t);
}

int vt_group(struct vt_table *t, const char *title, const char *top, bool sort)
{
	if (t->ngroups >= VT_MAX_GROUPS)
		return -1;
	struct vt_group *g = &t->g[t->ngroups];

	snprintf(g->title, sizeof(g->title), "%s%s", title, sort ? "*" : "");
	snprintf(g->top, sizeof(g->top), "%s", top ? top : "");
	g->sort = sort;
	g->width = 0;
	return t->ngroups++;
}

int vt_sub(struct vt_table *t, enum vt_kind kind, enum sonde_unit unit, bool text, const char *key)
{
	if (t->nsubs >= VT_MAX_SUBS || !t->ngroups || t->nrows)
		return -1;
	struct vt_sub *s = &t->s[t->nsubs];

	s->kind = kind;
	s->unit = unit;
	s->text = text;
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->group = t->ngroups - 1;
	s->width = 0;
	return t->nsubs++;
}

int vt_field_key(struct vt_table *t, const char *key)
{
	if (t->nfields >= VT_MAX_FIELDS || t->nrows)
		return -1;
	t->field[t->nfields] = key;
	return t->nfields++;
}

const char *vt_str(struct vt_table *t, const char *s)
{
	if (!s)
		return NULL;
	if (sonde_grow(&t->strs, &t->scap, t->nstrs + 1, sizeof(*t->strs), 64))
		return NULL;
	char *d = strdup(s);

	if (d)
		t->strs[t->nstrs++] = d;
	return d;
}

struct vt_row *vt_row(struct vt_table *t, char mark, const char *text)
{
	if (sonde_grow(&t->rows, &t->cap, t->nrows + 1, sizeof(*t->rows), 64))
		return NULL;
	struct vt_row *r = &t->rows[t->nrows];

	memset(r, 0, sizeof(*r));
	r->mark = mark;
	r->text = strdup(text ? text : "");
	r->c = calloc(t->nsubs ? (size_t)t->nsubs : 1, sizeof(*r->c));
	if (!r->text || !r->c) {
		free(r->text);
		free(r->c);
		return NULL;
	}
	for (int i = 0; i < t->nsubs; i++)
		r->c[i].null = true;
	for (int i = 0; i < VT_MAX_FIELDS; i++)
		r->f[i].null = true;
	t->nrows++;
	t->measured = false;
	return r;
}

/* ---- text ------------------------------------------------------------------ */

static const char *unit_label(const struct vt_sub *s)
{
	switch (s->kind) {
	case VT_PCT:
		return "%";
	case VT_DELTA:
		return "delta";
	case VT_RATIO:
		return "ratio";
	case VT_VAL:
		break;
	}
	switch (s->unit) {
	case SONDE_UNIT_NS:
		return "sec.";
	case SONDE_UNIT_BYTES:
		return "bytes";
	case SONDE_UNIT_COUNT:
	case SONDE_UNIT_RATIO:
		break;
	}
	return "";
}

/* "0." followed by as many spaces as the decimals it stands for, so that
 * zeros line up on the decimal point as er_print prints them. */
static int fmt_zero(char *buf, size_t len, const char *sign, int decimals)
{
	return snprintf(buf, len, "%s0.%*s", sign, decimals, "");
}

static int fmt_cell(char *buf, size_t len, const struct vt_sub *s, const struct vt_cell *c)
{
	if (c->null)
		return snprintf(buf, len, "%s", s->kind == VT_RATIO ? "x    -" : "-");
	switch (s->kind) {
	case VT_PCT:
		if (c->d == 0)
			return fmt_zero(buf, len, "", 2);
		return snprintf(buf, len, "%.2f", c->d);
	case VT_RATIO:
		if (isinf(c->d))
			return snprintf(buf, len, "x  inf");
		return snprintf(buf, len, "x %.3f", c->d);
	case VT_DELTA:
		if (s->unit == SONDE_UNIT_RATIO)
			return c->d == 0 ? fmt_zero(buf, len, "+", 3) : snprintf(buf, len, "%+.3f", c->d);
		if (s->unit == SONDE_UNIT_NS) {
			if (c->i == 0)
				return fmt_zero(buf, len, "+", 3);
			return snprintf(buf, len, "%+.3f", (double)c->i / 1e9);
		}
		return snprintf(buf, len, "%+" PRId64, c->i);
	case VT_VAL:
		if (s->unit == SONDE_UNIT_RATIO) /* a derived metric: a double */
			return c->d == 0 ? fmt_zero(buf, len, "", 3) : snprintf(buf, len, "%.3f", c->d);
		if (s->unit == SONDE_UNIT_NS) {
			if (c->i == 0)
				return fmt_zero(buf, len, "", 3);
			return snprintf(buf, len, "%.3f", (double)c->i / 1e9);
		}
		return snprintf(buf, len, "%" PRId64, c->i);
	}
	return snprintf(buf, len, "?");
}

static int longest_word(const char *s)
{
	int best = 0, cur = 0;

	for (; *s; s++) {
		if (*s == ' ') {
			cur = 0;
			continue;
		}
		if (++cur > best)
			best = cur;
	}
	return best;
}

static void measure(struct vt_table *t)
{
	char buf[128];

	if (t->measured)
		return;
	for (int i = 0; i < t->nsubs; i++) {
		t->s[i].width = t->s[i].text ? (int)strlen(unit_label(&t->s[i])) : 0;
		/* percentages as wide as "100.00", so views line up alike */
		if (t->s[i].text && t->s[i].kind == VT_PCT)
			t->s[i].width = 6;
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (int i = 0; i < t->nsubs; i++) {
			if (!t->s[i].text)
				continue;
			int w = fmt_cell(buf, sizeof(buf), &t->s[i], &t->rows[r].c[i]);

			if (w > t->s[i].width)
				t->s[i].width = w;
		}
	for (int g = 0; g < t->ngroups; g++) {
		int sum = 0, n = 0, first = -1;

		for (int i = 0; i < t->nsubs; i++)
			if (t->s[i].group == g && t->s[i].text) {
				sum += t->s[i].width;
				if (first < 0)
					first = i;
				n++;
			}
		if (n > 1)
			sum += n - 1;
		int w = sum, lw = longest_word(t->g[g].title), tw = (int)strlen(t->g[g].top);

		if (lw > w)
			w = lw;
		if (tw > w)
			w = tw;
		if (first >= 0)
			t->s[first].width += w - sum;
		t->g[g].width = w;
	}
	t->measured = true;
}

/* Line `line` (0-based) of title wrapped to width w, into buf; "" past the end. */
static void wrap_line(const char *title, int w, int line, char *buf, size_t len)
{
	const char *p = title;
	int cur = 0, used = 0;
	size_t bl = 0;

	buf[0] = '\0';
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *we = p;

		while (*we && *we != ' ')
			we++;
		int wl = (int)(we - p);

		if (used && used + 1 + wl > w) {
			if (cur == line)
				return;
			cur++;
			used = 0;
		}
		if (cur == line && bl + (size_t)wl + 2 < len) {
			if (used)
				buf[bl++] = ' ';
			memcpy(buf + bl, p, (size_t)wl);
			bl += (size_t)wl;
			buf[bl] = '\0';
		}
		used += (used ? 1 : 0) + wl;
		p = we;
	}
}

static int title_lines(const char *title, int w)
{
	char buf[128];
	int n = 0;

	for (;;) {
		wrap_line(title, w, n, buf, sizeof(buf));
		if (!buf[0])
			return n;
		n++;
	}
}

/* Writes a line without its trailing blanks. */
static void put_line(FILE *f, char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == ' ')
		n--;
	fprintf(f, "%.*s\n", (int)n, line);
}

struct linebuf {
	char *s;
	size_t n, cap;
};

static void lb_add(struct linebuf *b, const char *s, int width, bool right)
{
	int len = (int)strlen(s), pad = width > len ? width - len : 0;
	size_t need = b->n + (size_t)len + (size_t)pad + 1;

	if (sonde_grow(&b->s, &b->cap, need, 1, 256))
		return;
	if (right) {
		memset(b->s + b->n, ' ', (size_t)pad);
		b->n += (size_t)pad;
	}
	memcpy(b->s + b->n, s, (size_t)len);
	b->n += (size_t)len;
	if (!right) {
		memset(b->s + b->n, ' ', (size_t)pad);
		b->n += (size_t)pad;
	}
	b->s[b->n] = '\0';
}

void vt_text_header(FILE *f, struct vt_table *t)
{
	struct linebuf b = { 0 };
	char buf[128];
	bool top = false;
	int nlines = 1;

	measure(t);
	for (int g = 0; g < t->ngroups; g++) {
		int n = title_lines(t->g[g].title, t->g[g].width);

		if (n > nlines)
			nlines = n;
		if (t->g[g].top[0])
			top = true;
	}
	if (top) {
		b.n = 0;
		lb_add(&b, t->hotcol ? "   " : "", 0, false);
		for (int g = 0; g < t->ngroups; g++) {
			lb_add(&b, t->g[g].top, t->g[g].width, false);
			lb_add(&b, "  ", 0, false);
		}
		if (b.s)
			put_line(f, b.s);
	}
	for (int l = 0; l < nlines; l++) {
		b.n = 0;
		lb_add(&b, t->hotcol ? "   " : "", 0, false);
		for (int g = 0; g < t->ngroups; g++) {
			wrap_line(t->g[g].title, t->g[g].width, l, buf, sizeof(buf));
			lb_add(&b, buf, t->g[g].width, false);
			lb_add(&b, "  ", 0, false);
		}
		if (l == 0) {
			lb_add(&b, " ", 0, false);
			lb_add(&b, t->namecol ? t->namecol : "Name", 0, false);
		}
		if (b.s)
			put_line(f, b.s);
	}
	/* units */
	if (!t->ngroups) {
		free(b.s);
		return;
	}
	b.n = 0;
	lb_add(&b, t->hotcol ? "   " : "", 0, false);
	for (int g = 0; g < t->ngroups; g++) {
		bool first = true;

		for (int i = 0; i < t->nsubs; i++) {
			if (t->s[i].group != g || !t->s[i].text)
				continue;
			if (!first)
				lb_add(&b, " ", 0, false);
			lb_add(&b, unit_label(&t->s[i]), t->s[i].width, true);
			first = false;
		}
		lb_add(&b, "  ", 0, false);
	}
	if (b.s)
		put_line(f, b.s);
	free(b.s);
}

void vt_text_rows(FILE *f, struct vt_table *t, size_t from, size_t to)
{
	struct linebuf b = { 0 };
	char buf[128];

	measure(t);
	for (size_t r = from; r < to && r < t->nrows; r++) {
		const struct vt_row *row = &t->rows[r];

		b.n = 0;
		lb_add(&b, t->hotcol ? row->hot ? "## " : "   " : "", 0, false);
		for (int g = 0; g < t->ngroups; g++) {
			bool first = true;

			for (int i = 0; i < t->nsubs; i++) {
				if (t->s[i].group != g || !t->s[i].text)
					continue;
				if (!first)
					lb_add(&b, " ", 0, false);
				if ((t->hotcol || t->blanks) && row->c[i].null) /* annotations: no value, no mark */
					buf[0] = '\0';
				else
					fmt_cell(buf, sizeof(buf), &t->s[i], &row->c[i]);
				lb_add(&b, buf, t->s[i].width, true);
				first = false;
			}
			lb_add(&b, "  ", 0, false);
		}
		buf[0] = row->mark ? row->mark : ' ';
		buf[1] = '\0';
		lb_add(&b, buf, 0, false);
		lb_add(&b, row->text, 0, false);
		if (b.s)
			put_line(f, b.s);
	}
	free(b.s);
}

/* ---- summary blocks ------------------------------------------------------- */

void vt_text_summary(FILE *f, struct vt_table *t, size_t from, size_t to)
{
	char buf[128];

	for (size_t r = from; r < to && r < t->nrows; r++) {
		const struct vt_row *row = &t->rows[r];

		if (r > from)
			fputc('\n', f);
		fprintf(f, "%s\n", row->text);
		for (int g = 0; g < t->ngroups; g++) {
			const char *label = t->g[g].ltitle[0] ? t->g[g].ltitle : t->g[g].title;
			fprintf(f, "\t%24s:", label);
			for (int i = 0; i < t->nsubs; i++) {
				const struct vt_sub *s = &t->s[i];
				const struct vt_cell *c = &row->c[i];

				if (s->group != g || !s->text)
					continue;
				/* a percentage in parentheses after the value, as er_print's */
				if (s->kind == VT_PCT && !c->null && c->d == 0)
					snprintf(buf, sizeof(buf), "(  0. %%)");
				else if (s->kind == VT_PCT && !c->null)
					snprintf(buf, sizeof(buf), "(%5.1f%%)", c->d);
				else
					fmt_cell(buf, sizeof(buf), s, c);
				fprintf(f, " %s", buf);
			}
			fputc('\n', f);
		}
		for (int i = 0; i < t->nfields; i++) {
			if (!t->flabel[i] || row->f[i].null)
				continue;
			fprintf(f, "\t%24s: ", t->flabel[i]);
			if (!row->f[i].null && row->f[i].s)
				fputs(row->f[i].s, f);
			else if (!row->f[i].null)
				fprintf(f, "0x%" PRIx64, (uint64_t)row->f[i].i);
			fputc('\n', f);
		}
	}
}

/* ---- html ------------------------------------------------------------------ */

void vt_html_bytes(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(s[i], f);
		}
	}
}

void vt_html_str(FILE *f, const char *s)
{
	if (s)
		vt_html_bytes(f, s, strlen(s));
}

/* The text subcolumns of group g. */
static int group_subs(const struct vt_table *t, int g)
{
	int n = 0;

	for (int i = 0; i < t->nsubs; i++)
		n += t->s[i].group == g && t->s[i].text;
	return n;
}

void vt_html(FILE *f, struct vt_table *t, size_t from, size_t to)
{
	char buf[128];

	fputs("<table class=\"sonde\">\n<tr>", f);
	if (t->hotcol)
		fputs("<th rowspan=\"2\"></th>", f);
	for (int g = 0; g < t->ngroups; g++) {
		int n = group_subs(t, g);

		if (!n)
			continue;
		fprintf(f, "<th colspan=\"%d\"%s>", n, t->g[g].sort ? " class=\"sort\"" : "");
		if (t->g[g].top[0]) {
			vt_html_str(f, t->g[g].top);
			fputs("<br>", f);
		}
		vt_html_str(f, t->g[g].title);
		fputs("</th>", f);
	}
	fputs("<th rowspan=\"2\">", f);
	vt_html_str(f, t->namecol ? t->namecol : "Name");
	fputs("</th></tr>\n<tr>", f);
	for (int g = 0; g < t->ngroups; g++)
		for (int i = 0; i < t->nsubs; i++)
			if (t->s[i].group == g && t->s[i].text) {
				fprintf(f, "<th%s>", t->g[g].sort ? " class=\"sort\"" : "");
				vt_html_str(f, unit_label(&t->s[i]));
				fputs("</th>", f);
			}
	fputs("</tr>\n", f);
	for (size_t r = from; r < to && r < t->nrows; r++) {
		const struct vt_row *row = &t->rows[r];

		fputs("<tr>", f);
		if (t->hotcol)
			fprintf(f, "<td>%s</td>", row->hot ? "##" : "");
		for (int g = 0; g < t->ngroups; g++)
			for (int i = 0; i < t->nsubs; i++) {
				if (t->s[i].group != g || !t->s[i].text)
					continue;
				if ((t->hotcol || t->blanks) && row->c[i].null)
					buf[0] = '\0';
				else
					fmt_cell(buf, sizeof(buf), &t->s[i], &row->c[i]);
				fprintf(f, "<td class=\"num%s\">", t->g[g].sort ? " sort" : "");
				vt_html_str(f, buf);
				fputs("</td>", f);
			}
		fputs("<td class=\"name\">", f);
		if (row->mark == '*')
			fputs("*", f);
		vt_html_str(f, row->text);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* ---- csv and json ----------------------------------------------------------- */

/* A byte that is not UTF-8 as U+F7XY's UTF-8 (sonde/utf8.h): csv has no
 * escapes, and a csv reader decoding UTF-8 must not fail on a name. */
static void csv_bytes(FILE *f, const char *s)
{
	for (; *s; s++) {
		size_t ul = sonde_utf8_len((const unsigned char *)s);

		if (*s == '"') {
			fputs("\"\"", f);
		} else if (ul) {
			fwrite(s, 1, ul, f);
			s += ul - 1;
		} else {
			unsigned cp = SONDE_BYTE_ESCAPE_BASE + (unsigned char)*s;

			fputc(0xe0 | (cp >> 12), f);
			fputc(0x80 | ((cp >> 6) & 0x3f), f);
			fputc(0x80 | (cp & 0x3f), f);
		}
	}
}

void vt_csv_str(FILE *f, const char *s)
{
	vt_csv_str_sep(f, s, ',');
}

void vt_csv_str_sep(FILE *f, const char *s, char sep)
{
	bool quote = strpbrk(s, "\"\n\r") != NULL || strchr(s, sep) != NULL;

	if (quote)
		fputc('"', f);
	csv_bytes(f, s);
	if (quote)
		fputc('"', f);
}

static void print_double(FILE *f, double d)
{
	char buf[64];

	/* A short form that reads back as the same double: 15 significant
	 * digits are exact for any decimal that has them, 17 always are. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, f);
}

void vt_json_double(FILE *f, double d)
{
	if (isnan(d) || isinf(d)) {
		fputs("null", f);
		return;
	}
	print_double(f, d);
}

void vt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default: {
			size_t ul = sonde_utf8_len(p);

			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
			} else if (!ul) { /* not UTF-8: the byte as U+F7XY (sonde/utf8.h) */
				fprintf(f, "\\u%04x", SONDE_BYTE_ESCAPE_BASE + *p);
			} else {
				fwrite(p, 1, ul, f);
				p += ul - 1;
			}
		}
		}
	}
	fputc('"', f);
}

static void csv_cell(FILE *f, const struct vt_sub *s, const struct vt_cell *c)
{
	if (c->null)
		return;
	if ((s->kind == VT_VAL || s->kind == VT_DELTA) && s->unit != SONDE_UNIT_RATIO)
		fprintf(f, "%" PRId64, c->i);
	else if (!isnan(c->d) && !isinf(c->d))
		print_double(f, c->d);
	else if (isinf(c->d))
		fputs("inf", f);
}

void vt_csv(FILE *f, const struct vt_table *t, char sep)
{
	for (int i = 0; i < t->nfields; i++) {
		if (i)
			fputc(sep, f);
		vt_csv_str_sep(f, t->field[i], sep);
	}
	for (int i = 0; i < t->nsubs; i++) {
		if (i || t->nfields)
			fputc(sep, f);
		vt_csv_str_sep(f, t->s[i].key, sep);
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		const struct vt_row *row = &t->rows[r];

		for (int i = 0; i < t->nfields; i++) {
			if (i)
				fputc(sep, f);
			if (row->f[i].null)
				continue;
			if (row->f[i].s)
				vt_csv_str_sep(f, row->f[i].s, sep);
			else
				fprintf(f, "%" PRId64, row->f[i].i);
		}
		for (int i = 0; i < t->nsubs; i++) {
			if (i || t->nfields)
				fputc(sep, f);
			csv_cell(f, &t->s[i], &row->c[i]);
		}
		fputc('\n', f);
	}
}

void vt_json_row(FILE *f, const struct vt_table *t, size_t r)
{
	const struct vt_row *row = &t->rows[r];
	bool first = true;

	fputc('{', f);
	for (int i = 0; i < t->nfields; i++) {
		if (!first)
			fputc(',', f);
		first = false;
		vt_json_str(f, t->field[i]);
		fputc(':', f);
		if (row->f[i].null)
			fputs("null", f);
		else if (row->f[i].s)
			vt_json_str(f, row->f[i].s);
		else
			fprintf(f, "%" PRId64, row->f[i].i);
	}
	for (int i = 0; i < t->nsubs; i++) {
		const struct vt_cell *c = &row->c[i];

		if (!first)
			fputc(',', f);
		first = false;
		vt_json_str(f, t->s[i].key);
		fputc(':', f);
		if (c->null)
			fputs("null", f);
		else if ((t->s[i].kind == VT_VAL || t->s[i].kind == VT_DELTA) && t->s[i].unit != SONDE_UNIT_RATIO)
			fprintf(f, "%" PRId64, c->i);
		else
			vt_json_double(f, c->d);
	}
	fputc('}', f);
}

void vt_json_rows(FILE *f, const struct vt_table *t, size_t from, size_t to)
{
	fputc('[', f);
	for (size_t r = from; r < to && r < t->nrows; r++) {
		if (r > from)
			fputc(',', f);
		vt_json_row(f, t, r);
	}
	fputc(']', f);
}
