/*
 * dlang_lex: the lexer of the sonde agg language, a one-token lookahead
 * over the source for the parser (dlang_parse.c).  Apart from the parser
 * because what counts as a token (numbers, strings and their escapes,
 * comments, the '/' that ends a predicate) is a question of its own; the
 * parser sees only struct parser's current token.  Errors go through
 * dl_fail, which longjmps back to sonde_dl_compile() with the line and
 * column.  See dlang_internal.h for how the parts fit.
 */
#include "base/grow.h"
#include "agg/dlang_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------------- */

void dl_fail(struct parser *ps, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	ps->e->line = line;
	ps->e->col = col;
	va_start(ap, fmt);
	vsnprintf(ps->e->msg, sizeof(ps->e->msg), fmt, ap);
	va_end(ap);
	longjmp(ps->jb, 1);
}

void *dl_xalloc(struct parser *ps, size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		dl_fail(ps, 0, 0, "out of memory");
	return p;
}

/* ---- lexer -------------------------------------------------------------------- */

static void adv(struct parser *ps, size_t n)
{
	while (n--) {
		if (*ps->p == '\n') {
			ps->line++;
			ps->col = 1;
		} else {
			ps->col++;
		}
		ps->p++;
	}
}

static bool is_id0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_id(char c)
{
	return is_id0(c) || (c >= '0' && c <= '9');
}

static void skip_space(struct parser *ps)
{
	for (;;) {
		const char *p = ps->p;

		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
			adv(ps, 1);
		} else if (p[0] == '/' && p[1] == '*') {
			unsigned l = ps->line, c = ps->col;
			const char *end = strstr(p + 2, "*/");

			if (!end)
				dl_fail(ps, l, c, "unterminated comment");
			adv(ps, (size_t)(end + 2 - p));
		} else if ((p[0] == '/' && p[1] == '/') || (p[0] == '#' && ps->col == 1)) {
			while (*ps->p && *ps->p != '\n')
				adv(ps, 1);
		} else {
			return;
		}
	}
}

/* Whether the next thing after the current position (blanks and comments
 * skipped) is '{'. */
static bool next_is_lbrace(struct parser *ps)
{
	const char *p = ps->p;

	for (;;) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
			p++;
		else if (p[0] == '/' && p[1] == '*' && strstr(p + 2, "*/"))
			p = strstr(p + 2, "*/") + 2;
		else
			return *p == '{';
	}
}

void dl_lex(struct parser *ps)
{
	skip_space(ps);
	ps->tp = ps->p;
	ps->tline = ps->line;
	ps->tcol = ps->col;
	ps->tendpred = false;

	const char *p = ps->p;
	char c = *p;

	if (!c) {
		ps->t = T_EOF;
		ps->tlen = 0;
		return;
	}
	if (is_id0(c)) {
		size_t n = 1;

		while (is_id(p[n]))
			n++;
		ps->t = T_IDENT;
		ps->tlen = n;
		adv(ps, n);
		return;
	}
	if (c >= '0' && c <= '9') {
		uint64_t v = 0;
		size_t n = 0;
		bool over = false;

		if (c == '0' && (p[1] == 'x' || p[1] == 'X')) {
			n = 2;
			if (!((p[n] >= '0' && p[n] <= '9') || ((p[n] | 32) >= 'a' && (p[n] | 32) <= 'f')))
				dl_fail(ps, ps->tline, ps->tcol, "expected hexadecimal digits after '0x'");
			for (;; n++) {
				char d = p[n];
				unsigned x;

				if (d >= '0' && d <= '9')
					x = (unsigned)(d - '0');
				else if ((d | 32) >= 'a' && (d | 32) <= 'f')
					x = (unsigned)((d | 32) - 'a' + 10);
				else
					break;
				over |= v >> 60 != 0;
				v = v << 4 | x;
			}
		} else {
			for (; p[n] >= '0' && p[n] <= '9'; n++) {
				unsigned x = (unsigned)(p[n] - '0');

				over |= v > (UINT64_MAX - x) / 10;
				v = v * 10 + x;
			}
		}
		if (is_id(p[n]))
			dl_fail(ps, ps->tline, ps->tcol, "invalid character '%c' in the number '%.*s'",
				p[n], (int)n + 1, p);
		if (over)
			dl_fail(ps, ps->tline, ps->tcol, "integer constant '%.*s' is too large (64 bits at most)",
				(int)n, p);
		ps->t = T_INT;
		ps->tint = v;
		ps->tlen = n;
		adv(ps, n);
		return;
	}
	if (c == '"') {
		size_t n = 1, cap = 16, len = 0;
		char *s = dl_xalloc(ps, cap);

		for (;;) {
			char d = p[n];

			if (!d || d == '\n') {
				free(s);
				dl_fail(ps, ps->tline, ps->tcol, "unterminated string");
			}
			n++;
			if (d == '"')
				break;
			if (d == '\\') {
				char x = p[n++];

				switch (x) {
				case 'n': d = '\n'; break;
				case 't': d = '\t'; break;
				case 'r': d = '\r'; break;
				case '\\': d = '\\'; break;
				case '"': d = '"'; break;
				default:
					free(s);
					dl_fail(ps, ps->tline, ps->tcol + (unsigned)n - 2,
						"unknown escape '\\%c' in a string (\\n \\t \\r \\\\ \\\" are known)",
						x ? x : ' ');
				}
			}
			if (sonde_grow(&s, &cap, len + 2, 1, 16)) {
				free(s);
				dl_fail(ps, 0, 0, "out of memory");
			}
			s[len++] = d;
		}
		s[len] = '\0';
		free(ps->tstr);
		ps->tstr = s;
		ps->tstrlen = len;
		ps->t = T_STR;
		ps->tlen = n;
		adv(ps, n);
		return;
	}
	if (c == '$') {
		size_t n = 1;
		uint64_t v = 0;

		if (!(p[1] >= '0' && p[1] <= '9'))
			dl_fail(ps, ps->tline, ps->tcol, "expected a field number after '$' ($0, $1, ...)");
		for (; p[n] >= '0' && p[n] <= '9'; n++) {
			v = v * 10 + (uint64_t)(p[n] - '0');
			if (v > MAX_POSITIONAL)
				dl_fail(ps, ps->tline, ps->tcol, "field number too large (at most $%d)",
					MAX_POSITIONAL);
		}
		ps->t = T_DOLLAR;
		ps->tint = v;
		ps->tlen = n;
		adv(ps, n);
		return;
	}
	if (c == '@') {
		size_t n = 1;

		while (is_id(p[n]))
			n++;
		ps->t = T_AGG;
		ps->tlen = n;
		adv(ps, n);
		return;
	}

	static const struct {
		const char *s;
		int t;
	} ops[] = {
		{ "==", T_EQ }, { "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE }, { "&&", T_AND },
		{ "||", T_OR }, { "{", T_LBRACE }, { "}", T_RBRACE }, { "(", T_LPAREN },
		{ ")", T_RPAREN }, { "[", T_LBRACK }, { "]", T_RBRACK }, { ",", T_COMMA },
		{ ";", T_SEMI }, { "/", T_SLASH }, { "=", T_ASSIGN }, { "<", T_LT }, { ">", T_GT },
		{ "!", T_NOT }, { "+", T_PLUS }, { "-", T_MINUS }, { "*", T_STAR }, { "%", T_PCT },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].s);

		if (!strncmp(p, ops[i].s, n)) {
			ps->t = ops[i].t;
			ps->tlen = n;
			adv(ps, n);
			if (ps->t == T_SLASH)
				ps->tendpred = next_is_lbrace(ps);
			return;
		}
	}
	if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
		dl_fail(ps, ps->tline, ps->tcol, "unexpected byte 0x%02x", (unsigned char)c);
	dl_fail(ps, ps->tline, ps->tcol, "unexpected character '%c'", c);
}

/* The current token, for messages: "'foo'", "end of program". */
const char *dl_found(struct parser *ps)
{
	static char buf[64];

	if (ps->t == T_EOF)
		return "the end of the program";
	if (ps->t == T_STR)
		return "a string";
	snprintf(buf, sizeof(buf), "'%.*s'", ps->tlen > 40 ? 40 : (int)ps->tlen, ps->tp);
	return buf;
}

bool dl_tok_is(struct parser *ps, const char *ident)
{
	return ps->t == T_IDENT && ps->tlen == strlen(ident) && !strncmp(ps->tp, ident, ps->tlen);
}

void dl_expect(struct parser *ps, int t, const char *what)
{
	if (ps->t != t)
		dl_fail(ps, ps->tline, ps->tcol, "expected %s, found %s", what, dl_found(ps));
	dl_lex(ps);
}
