/*
 * xmlline: in-place tokenizer for sonde's own XML files.  See xmlline.h.
 */
#include <stdio.h>
#include <string.h>

#include "base/xmlline.h"

#include "sonde/utf8.h"

void sonde_xml_init(struct sonde_xml *x, char *buf, size_t len)
{
	x->p = buf;
	x->end = buf + len;
	x->line = 1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_name_end(char c)
{
	return is_space(c) || c == '=' || c == '/' || c == '>' || c == '<' || c == '\0';
}

/* Appends code point cp as UTF-8 at *dst; returns 0 when cp is invalid. */
static int put_utf8(char **dst, unsigned long cp)
{
	unsigned char *d = (unsigned char *)*dst;

	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp < 0x80) {
		*d++ = cp;
	} else if (cp < 0x800) {
		*d++ = 0xc0 | (cp >> 6);
		*d++ = 0x80 | (cp & 0x3f);
	} else if (cp < 0x10000) {
		*d++ = 0xe0 | (cp >> 12);
		*d++ = 0x80 | ((cp >> 6) & 0x3f);
		*d++ = 0x80 | (cp & 0x3f);
	} else {
		*d++ = 0xf0 | (cp >> 18);
		*d++ = 0x80 | ((cp >> 12) & 0x3f);
		*d++ = 0x80 | ((cp >> 6) & 0x3f);
		*d++ = 0x80 | (cp & 0x3f);
	}
	*dst = (char *)d;
	return 1;
}

/*
 * Decodes entities of [s, e) in place and NUL-terminates the result (which
 * is never longer than the input, so the terminator fits at *e at the
 * latest).  An unknown or malformed entity is kept literally.
 */
static void decode(char *s, char *e)
{
	char *d = s;

	while (s < e) {
		if (*s != '&') {
			*d++ = *s++;
			continue;
		}
		char *semi = memchr(s, ';', e - s);
		size_t n = semi ? (size_t)(semi - s - 1) : 0;
		const char *ent = s + 1;
		char rep = 0;

		if (semi && n == 3 && !memcmp(ent, "amp", 3))
			rep = '&';
		else if (semi && n == 2 && !memcmp(ent, "lt", 2))
			rep = '<';
		else if (semi && n == 2 && !memcmp(ent, "gt", 2))
			rep = '>';
		else if (semi && n == 4 && !memcmp(ent, "quot", 4))
			rep = '"';
		else if (semi && n == 4 && !memcmp(ent, "apos", 4))
			rep = '\'';
		if (rep) {
			*d++ = rep;
			s = semi + 1;
			continue;
		}
		if (semi && n >= 2 && n <= 9 && ent[0] == '#') {
			int hex = ent[1] == 'x' || ent[1] == 'X';
			const char *q = ent + 1 + hex;
			unsigned long cp = 0;
			int ok = q < semi;

			for (; q < semi && ok; q++) {
				unsigned c = (unsigned char)*q, v;

				if (c >= '0' && c <= '9')
					v = c - '0';
				else if (hex && c >= 'a' && c <= 'f')
					v = c - 'a' + 10;
				else if (hex && c >= 'A' && c <= 'F')
					v = c - 'A' + 10;
				else
					ok = 0, v = 0;
				cp = cp * (hex ? 16 : 10) + v;
			}
			char *save = d;

			/* U+F7XY as a reference: the byte XY that the writer could
			 * not put in XML as it was (include/sonde/utf8.h) */
			if (ok && (cp & ~0xffu) == SONDE_BYTE_ESCAPE_BASE &&
			    ((cp & 0xff) >= 0x80 || ((cp & 0xff) && (cp & 0xff) < 0x20))) {
				*d++ = (char)(cp & 0xff);
				s = semi + 1;
				continue;
			}
			if (ok && put_utf8(&d, cp)) {
				s = semi + 1;
				continue;
			}
			d = save;
		}
		*d++ = *s++;
	}
	*d = '\0';
}

/* Skips the rest of a malformed element: to just past the next '>' on the
 * same line, or to the end of the line. */
static void skip_bad(struct sonde_xml *x, char *p)
{
	while (p < x->end && *p != '>' && *p != '\n')
		p++;
	if (p < x->end && *p == '>')
		p++;
	x->p = p;
}

static int bad(struct sonde_xml *x, char *p, unsigned line, const char *name, const char *what,
	       char *err, size_t errlen)
{
	if (errlen)
		snprintf(err, errlen, "line %u: element <%s> %s", line, name, what);
	skip_bad(x, p);
	return -1;
}

/* The element reaches the end of the buffer: report it, consume the rest. */
static int cut_off(struct sonde_xml *x, unsigned line, const char *what, char *err, size_t errlen)
{
	if (errlen)
		snprintf(err, errlen, "line %u: %s is cut off", line, what);
	x->p = x->end;
	return -1;
}

int sonde_xml_next(struct sonde_xml *x, struct sonde_xml_elem *e, char *err, size_t errlen)
{
	char what[96];

	char *p = x->p, *end = x->end;

	/* Find the next '<', counting lines. */
	for (;;) {
		if (p >= end) {
			x->p = end;
			return 0;
		}
		if (*p == '<')
			break;
		if (*p == '\n')
			x->line++;
		p++;
	}
	e->line = x->line;
	e->nattr = 0;
	e->name = "";
	p++;

	if (p < end && (*p == '?' || *p == '!')) {
		/* Declaration, comment or doctype: skip it whole. */
		const char *stop = "-->";
		size_t stoplen = 3;

		if (!(end - p >= 3 && p[0] == '!' && p[1] == '-' && p[2] == '-'))
			stop = ">", stoplen = 1;
		for (char *q = p; q + stoplen <= end; q++) {
			if (*q == '\n')
				x->line++;
			if (!memcmp(q, stop, stoplen)) {
				x->p = q + stoplen;
				e->kind = SONDE_XML_OTHER;
				return 1;
			}
		}
		return cut_off(x, e->line, "declaration or comment", err, errlen);
	}

	int closing = p < end && *p == '/';

	if (closing)
		p++;
	char *name = p;

	while (p < end && !is_name_end(*p))
		p++;
	if (p >= end)
		return cut_off(x, e->line, "element", err, errlen);
	if (p == name)
		return bad(x, p, e->line, "", "has no name", err, errlen);
	char c = *p; /* what ended the name, before it is overwritten */

	*p = '\0';
	e->name = name;
	if (closing) {
		while (p < end && c != '>') {
			if (!is_space(c))
				return bad(x, p, e->line, name, "(closing) is malformed", err, errlen);
			if (c == '\n')
				x->line++;
			c = ++p < end ? *p : '\0';
		}
		if (p >= end) {
			snprintf(what, sizeof(what), "element </%.80s>", name);
			return cut_off(x, e->line, what, err, errlen);
		}
		x->p = p + 1;
		e->kind = SONDE_XML_CLOSE;
		return 1;
	}

	/* Attributes.  c is the character at p (already overwritten). */
	snprintf(what, sizeof(what), "element <%.80s>", name);
	for (;;) {
		while (is_space(c)) {
			if (c == '\n')
				x->line++;
			c = ++p < end ? *p : '\0';
		}
		if (p >= end)
			return cut_off(x, e->line, what, err, errlen);
		if (c == '>') {
			x->p = p + 1;
			e->kind = SONDE_XML_OPEN;
			return 1;
		}
		if (c == '/') {
			if (p + 1 >= end)
				return cut_off(x, e->line, what, err, errlen);
			if (p[1] != '>')
				return bad(x, p, e->line, name, "is malformed", err, errlen);
			x->p = p + 2;
			e->kind = SONDE_XML_EMPTY;
			return 1;
		}
		if (c == '<' || c == '=')
			return bad(x, p, e->line, name, "is malformed", err, errlen);

		char *an = p;

		while (p < end && !is_name_end(*p))
			p++;
		char *anend = p;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			return cut_off(x, e->line, what, err, errlen);
		if (*p != '=')
			return bad(x, p, e->line, name, "has an attribute without a value", err,
				   errlen);
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			return cut_off(x, e->line, what, err, errlen);
		if (*p != '"' && *p != '\'')
			return bad(x, p, e->line, name, "has an unquoted attribute value", err,
				   errlen);
		char quote = *p++;
		char *val = p;
		char *q = memchr(p, quote, end - p);

		if (!q)
			return cut_off(x, e->line, what, err, errlen);
		for (char *n = val; n < q; n++)
			if (*n == '\n')
				x->line++;
		*anend = '\0';
		decode(val, q); /* writes its terminator at q at the latest */
		if (e->nattr < SONDE_XML_MAX_ATTR) {
			e->attr[e->nattr].name = an;
			e->attr[e->nattr].value = val;
			e->nattr++;
		}
		p = q + 1;
		c = p < end ? *p : '\0';
		if (p < end && !is_space(c) && c != '/' && c != '>')
			return bad(x, p, e->line, name, "is malformed", err, errlen);
	}
}

const char *sonde_xml_attr(const struct sonde_xml_elem *e, const char *name)
{
	for (size_t i = 0; i < e->nattr; i++)
		if (!strcmp(e->attr[i].name, name))
			return e->attr[i].value;
	return NULL;
}
