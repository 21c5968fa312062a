/*
 * dlang: lexer, parser, type checks and evaluator of the sonde agg
 * language, and its event sources (stdin lines, experiment profile
 * samples).  See dlang.h and doc/sonde-agg.md.
 *
 * The parser is recursive descent over a one-token lookahead lexer; errors
 * longjmp back to sonde_dl_compile() with the line and column.  Constant
 * subexpressions are folded while parsing (lquantize's and llquantize's
 * parameters must fold to integer constants).  Evaluation walks the tree.
 *
 * Both recurse, so both are bounded (MAX_NEST): the parser's nesting of
 * parentheses and unary operators, and the depth of the tree it builds (a
 * chain of 50,000 '+' is parsed by a loop but makes a tree 50,000 deep,
 * which the evaluator would recurse down).  Past the bound the program is
 * refused with an error at the place; before it, neither overflows the
 * stack.
 */
#define _GNU_SOURCE
#include "base/grow.h"
#include "base/timerange.h"
#include "agg/dlang.h"
#include "agg/kind.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- kinds ------------------------------------------------------------------ */

const struct sonde_dl_kind sonde_dl_kind_stdin = {
	.name = "stdin",
	.positional = true,
	.doc = "one event per line of standard input; $0 is the line, $1, $2, ... its "
	       "blank-separated fields",
};

static const struct sonde_dl_field profile_fields[SONDE_DL_P_NFIELDS] = {
	[SONDE_DL_P_THREAD] = { "thread", SONDE_DL_INT, "thread id" },
	[SONDE_DL_P_CPU] = { "cpu", SONDE_DL_INT, "CPU the sample was taken on, -1 when unknown" },
	[SONDE_DL_P_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started" },
	[SONDE_DL_P_WEIGHT] = { "weight", SONDE_DL_INT,
				"nanoseconds of CPU time the sample stands for (off-CPU: of blocked wall time)" },
	[SONDE_DL_P_OBJECT] = { "object", SONDE_DL_STR, "load object of the leaf frame (file name)" },
	[SONDE_DL_P_FUNC] = { "func", SONDE_DL_STR, "function of the leaf frame" },
	[SONDE_DL_P_CALLER] = { "caller", SONDE_DL_STR, "function of the leaf's caller (tail calls restored)" },
	[SONDE_DL_P_PC] = { "pc", SONDE_DL_INT, "address of the leaf frame" },
	[SONDE_DL_P_DEPTH] = { "depth", SONDE_DL_INT, "number of frames in the call stack" },
	[SONDE_DL_P_STATE] = { "state", SONDE_DL_STR,
			       "cpu (a CPU sample), user-lock or other-wait (an off-CPU sample)" },
	[SONDE_DL_P_USER] = { "user", SONDE_DL_INT, "nanoseconds of User CPU time of the sample (weight - system)" },
	[SONDE_DL_P_SYSTEM] = { "system", SONDE_DL_INT, "nanoseconds of System CPU time of the sample" },
	[SONDE_DL_P_WAITCPU] = { "waitcpu", SONDE_DL_INT,
				 "nanoseconds the thread waited for a CPU (run queue) before the sample" },
	[SONDE_DL_P_SYSCALL] = { "syscall", SONDE_DL_INT,
				 "off-CPU: the x86-64 system call it blocked in; -1 none (a page-in, or a CPU sample)" },
};

const struct sonde_dl_kind sonde_dl_kind_profile = {
	.name = "profile",
	.fields = profile_fields,
	.nfields = SONDE_DL_P_NFIELDS,
	.doc = "one event per clock-profile sample of the experiment, and per off-CPU sample (state not cpu)",
};

const struct sonde_dl_kind *sonde_dl_kind_of(int kind)
{
	const struct sonde_kind_module *m = sonde_kind_module(kind);

	return m ? m->agg : NULL;
}

int64_t sonde_dl_run_kind(struct sonde_dl_prog *p, int kind, const struct sonde_exp *exp,
			  sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen)
{
	const struct sonde_dl_kind *k = sonde_dl_kind_of(kind);

	return k && k->run ? k->run(p, exp, name_of_pc, ctx, err, errlen) : 0;
}

#define MAX_KINDS 8
#define MAX_POSITIONAL 1000

/* ---- program representation --------------------------------------------------- */

enum nkind { N_INT, N_STR, N_FIELD, N_UNARY, N_BINARY };

enum op {
	OP_NEG = 1, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
	OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR,
};

/* Nesting of parentheses and unary operators, and depth of an expression
 * tree; each level costs a few hundred bytes of stack in the parser (8
 * frames) or the evaluator (2 frames), so 1000 stays far below any stack
 * limit and far above any program written by hand. */
#define MAX_NEST 1000

struct node {
	uint8_t kind;	/* enum nkind */
	uint8_t op;	/* enum op */
	uint8_t type;	/* enum sonde_dl_type */
	uint32_t depth;	/* levels of the tree below and including this node */
	unsigned line, col;
	int64_t i;	/* N_INT value, N_FIELD index */
	const char *s;	/* N_STR: interned */
	uint32_t len;
	struct node *a, *b;
	struct node *next_alloc;
};

enum skind { S_AGG, S_PRINTA, S_NORMALIZE, S_DENORMALIZE, S_TRUNC, S_CLEAR };

struct aggvar {
	char *name;
	struct sonde_agg *agg;	/* NULL until its first definition */
	unsigned line, col;	/* first definition, or first reference */
	unsigned nkeys;
	uint8_t ktype[SONDE_AGG_MAX_KEYS]; /* static key types of the first definition */
};

struct stmt {
	enum skind kind;
	unsigned line, col;
	struct aggvar *var;
	struct node *keys[SONDE_AGG_MAX_KEYS];
	unsigned nkeys;
	enum sonde_agg_func func;
	struct node *val, *incr;
	struct aggvar **vars; /* printa */
	unsigned nvars;
	struct node *arg; /* normalize, trunc */
};

enum special { CL_EVENT, CL_BEGIN, CL_END };

struct clause {
	enum special special;
	const struct sonde_dl_kind *kind;
	struct node *pred;
	struct stmt *stmts;
	size_t nstmts, capstmts;
};

struct kindinfo {
	const struct sonde_dl_kind *kind;
	size_t *clauses; /* indexes into prog->clauses */
	size_t nclauses;
	uint64_t used;	 /* bit i: field i used */
};

struct sonde_dl_prog {
	struct sonde_aggset *set;
	struct sonde_agg_opts opts;
	struct clause *clauses;
	size_t nclauses, capclauses;
	struct aggvar **vars;
	size_t nvars, capvars;
	struct node *nodes; /* allocation list */
	struct kindinfo kinds[MAX_KINDS];
	size_t nkinds;
	unsigned maxpos;

	/* run-time problems */
	uint64_t nproblems;
	char problem[400];
	const char *cur_kind;
	uint64_t cur_ordinal;
};

/* ---- errors -------------------------------------------------------------------- */

struct parser {
	const char *src, *p;
	unsigned line, col;
	struct sonde_dl_prog *prog;
	struct sonde_dl_error *e;
	jmp_buf jb;

	/* current token */
	int t;
	const char *tp;
	size_t tlen;
	unsigned tline, tcol;
	uint64_t tint;
	char *tstr;
	size_t tstrlen;
	bool tendpred; /* '/' followed by '{' */
	unsigned nest; /* parentheses and unary operators open */

	struct clause *cl;
};

static void fail(struct parser *ps, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));

static void fail(struct parser *ps, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	ps->e->line = line;
	ps->e->col = col;
	va_start(ap, fmt);
	vsnprintf(ps->e->msg, sizeof(ps->e->msg), fmt, ap);
	va_end(ap);
	longjmp(ps->jb, 1);
}

static void *xalloc(struct parser *ps, size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		fail(ps, 0, 0, "out of memory");
	return p;
}

/* ---- lexer -------------------------------------------------------------------- */

enum tok {
	T_EOF, T_IDENT, T_INT, T_STR, T_DOLLAR, T_AGG,
	T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_COMMA, T_SEMI,
	T_SLASH, T_ASSIGN, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_NOT,
	T_PLUS, T_MINUS, T_STAR, T_PCT,
};

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
				fail(ps, l, c, "unterminated comment");
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

static void lex(struct parser *ps)
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
				fail(ps, ps->tline, ps->tcol, "expected hexadecimal digits after '0x'");
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
			fail(ps, ps->tline, ps->tcol, "invalid character '%c' in the number '%.*s'",
			     p[n], (int)n + 1, p);
		if (over)
			fail(ps, ps->tline, ps->tcol, "integer constant '%.*s' is too large (64 bits at most)",
			     (int)n, p);
		ps->t = T_INT;
		ps->tint = v;
		ps->tlen = n;
		adv(ps, n);
		return;
	}
	if (c == '"') {
		size_t n = 1, cap = 16, len = 0;
		char *s = xalloc(ps, cap);

		for (;;) {
			char d = p[n];

			if (!d || d == '\n') {
				free(s);
				fail(ps, ps->tline, ps->tcol, "unterminated string");
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
					fail(ps, ps->tline, ps->tcol + (unsigned)n - 2,
					     "unknown escape '\\%c' in a string (\\n \\t \\r \\\\ \\\" are known)",
					     x ? x : ' ');
				}
			}
			if (sonde_grow(&s, &cap, len + 2, 1, 16)) {
				free(s);
				fail(ps, 0, 0, "out of memory");
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
			fail(ps, ps->tline, ps->tcol, "expected a field number after '$' ($0, $1, ...)");
		for (; p[n] >= '0' && p[n] <= '9'; n++) {
			v = v * 10 + (uint64_t)(p[n] - '0');
			if (v > MAX_POSITIONAL)
				fail(ps, ps->tline, ps->tcol, "field number too large (at most $%d)",
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
		fail(ps, ps->tline, ps->tcol, "unexpected byte 0x%02x", (unsigned char)c);
	fail(ps, ps->tline, ps->tcol, "unexpected character '%c'", c);
}

/* The current token, for messages: "'foo'", "end of program". */
static const char *found(struct parser *ps)
{
	static char buf[64];

	if (ps->t == T_EOF)
		return "the end of the program";
	if (ps->t == T_STR)
		return "a string";
	snprintf(buf, sizeof(buf), "'%.*s'", ps->tlen > 40 ? 40 : (int)ps->tlen, ps->tp);
	return buf;
}

static bool tok_is(struct parser *ps, const char *ident)
{
	return ps->t == T_IDENT && ps->tlen == strlen(ident) && !strncmp(ps->tp, ident, ps->tlen);
}

static void expect(struct parser *ps, int t, const char *what)
{
	if (ps->t != t)
		fail(ps, ps->tline, ps->tcol, "expected %s, found %s", what, found(ps));
	lex(ps);
}

/* ---- nodes ----------------------------------------------------------------------- */

static struct node *mknode(struct parser *ps, int kind, unsigned line, unsigned col)
{
	struct node *n = xalloc(ps, sizeof(*n));

	n->kind = (uint8_t)kind;
	n->line = line;
	n->col = col;
	n->depth = 1;
	n->next_alloc = ps->prog->nodes;
	ps->prog->nodes = n;
	return n;
}

static const char *type_name(int t)
{
	return t == SONDE_DL_STR ? "a string" : "an integer";
}

static const char *op_name(int op)
{
	static const char *const names[] = {
		[OP_NEG] = "-",	 [OP_NOT] = "!",  [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*",
		[OP_DIV] = "/",	 [OP_MOD] = "%",  [OP_LT] = "<",  [OP_LE] = "<=", [OP_GT] = ">",
		[OP_GE] = ">=",	 [OP_EQ] = "==",  [OP_NE] = "!=", [OP_AND] = "&&", [OP_OR] = "||",
	};
	return names[op];
}

static int64_t sdiv64(int64_t a, int64_t b)
{
	return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

static int64_t smod64(int64_t a, int64_t b)
{
	return b == -1 ? 0 : a % b;
}

static int64_t arith(int op, int64_t x, int64_t y)
{
	uint64_t a = (uint64_t)x, b = (uint64_t)y;

	switch (op) {
	case OP_ADD: return (int64_t)(a + b);
	case OP_SUB: return (int64_t)(a - b);
	case OP_MUL: return (int64_t)(a * b);
	case OP_DIV: return sdiv64(x, y);
	case OP_MOD: return smod64(x, y);
	case OP_LT: return x < y;
	case OP_LE: return x <= y;
	case OP_GT: return x > y;
	case OP_GE: return x >= y;
	case OP_EQ: return x == y;
	case OP_NE: return x != y;
	case OP_AND: return x && y;
	case OP_OR: return x || y;
	}
	return 0;
}

static void check_depth(struct parser *ps, const struct node *n)
{
	if (n->depth > MAX_NEST)
		fail(ps, n->line, n->col,
		     "expression too deep: more than %d operators nested or chained (the limit keeps "
		     "evaluation off the stack's end)",
		     MAX_NEST);
}

/* Enters one more level of parentheses or unary operators. */
static void nest_in(struct parser *ps)
{
	if (++ps->nest > MAX_NEST)
		fail(ps, ps->tline, ps->tcol,
		     "expression nested too deeply: more than %d levels of parentheses or unary "
		     "operators",
		     MAX_NEST);
}

static struct node *unary(struct parser *ps, int op, struct node *a, unsigned line, unsigned col)
{
	if (a->type == SONDE_DL_STR)
		fail(ps, line, col, "operator %s needs an integer operand, not a string", op_name(op));
	if (a->kind == N_INT) {
		a->i = op == OP_NEG ? (int64_t)(0 - (uint64_t)a->i) : !a->i;
		a->line = line;
		a->col = col;
		return a;
	}
	struct node *n = mknode(ps, N_UNARY, line, col);

	n->op = (uint8_t)op;
	n->type = SONDE_DL_INT;
	n->a = a;
	n->depth = a->depth + 1;
	check_depth(ps, n);
	return n;
}

static struct node *binary(struct parser *ps, int op, struct node *a, struct node *b,
			   unsigned line, unsigned col)
{
	bool cmp = op >= OP_LT && op <= OP_NE;

	if (cmp) {
		if ((a->type == SONDE_DL_STR && b->type == SONDE_DL_INT) ||
		    (a->type == SONDE_DL_INT && b->type == SONDE_DL_STR))
			fail(ps, line, col, "operator %s cannot compare %s with %s", op_name(op),
			     type_name(a->type), type_name(b->type));
	} else {
		if (a->type == SONDE_DL_STR)
			fail(ps, a->line, a->col,
			     "operator %s needs integer operands; the left one is a string",
			     op_name(op));
		if (b->type == SONDE_DL_STR)
			fail(ps, b->line, b->col,
			     "operator %s needs integer operands; the right one is a string",
			     op_name(op));
	}
	if (a->kind == N_INT && b->kind == N_INT) {
		if ((op == OP_DIV || op == OP_MOD) && b->i == 0)
			fail(ps, line, col, "division by zero in a constant expression");
		a->i = arith(op, a->i, b->i);
		return a;
	}
	if (a->kind == N_STR && b->kind == N_STR && cmp) {
		int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

		if (!c)
			c = (a->len > b->len) - (a->len < b->len);
		a->kind = N_INT;
		a->type = SONDE_DL_INT;
		a->i = arith(op, c, 0);
		return a;
	}
	struct node *n = mknode(ps, N_BINARY, line, col);

	n->op = (uint8_t)op;
	n->type = SONDE_DL_INT;
	n->a = a;
	n->b = b;
	n->depth = (a->depth > b->depth ? a->depth : b->depth) + 1;
	check_depth(ps, n);
	return n;
}

/* ---- expressions ------------------------------------------------------------------ */

static struct node *expr(struct parser *ps);

static void use_field(struct parser *ps, size_t i)
{
	for (size_t k = 0; k < ps->prog->nkinds; k++)
		if (ps->prog->kinds[k].kind == ps->cl->kind && i < 64)
			ps->prog->kinds[k].used |= 1ull << i;
}

static const char *clause_name(const struct clause *cl)
{
	return cl->special == CL_BEGIN ? "BEGIN" : cl->special == CL_END ? "END" : cl->kind->name;
}

static void list_fields(const struct sonde_dl_kind *k, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < k->nfields && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", k->fields[i].name);
}

static struct node *int_node(struct parser *ps, int64_t v, unsigned line, unsigned col)
{
	struct node *n = mknode(ps, N_INT, line, col);

	n->type = SONDE_DL_INT;
	n->i = v;
	return n;
}

/*
 * time_select("START-END"): sonde print's -time_select in a predicate, the
 * range in seconds since the experiment's start ("1.5-3", "2-", "-0.5"),
 * made at compile time into time >= START && time < END (time: ns).  The
 * identifier and '(' are read.
 */
static struct node *time_select_call(struct parser *ps, unsigned line, unsigned col)
{
	const struct sonde_dl_kind *k = ps->cl->kind;
	size_t fi = 0;
	uint64_t a, b;
	char err[200], range[128];

	if (ps->cl->special != CL_EVENT)
		fail(ps, line, col, "time_select() is not available in %s clauses", clause_name(ps->cl));
	while (!k->positional && fi < k->nfields && strcmp(k->fields[fi].name, "time"))
		fi++;
	if (k->positional || fi == k->nfields)
		fail(ps, line, col, "time_select(): %s events have no field 'time'", k->name);
	lex(ps); /* ( */
	if (ps->t != T_STR)
		fail(ps, ps->tline, ps->tcol, "time_select() takes a string of seconds like \"1.5-3\", found %s",
		     found(ps));
	snprintf(range, sizeof(range), "%.*s", (int)ps->tstrlen, ps->tstr);
	if (strlen(range) != ps->tstrlen || sonde_time_parse(range, &a, &b, err, sizeof(err)) < 0)
		fail(ps, ps->tline, ps->tcol, "time_select(): %s", err);
	lex(ps);
	expect(ps, T_RPAREN, "')'");
	use_field(ps, fi);

	struct node *t = mknode(ps, N_FIELD, line, col);

	t->type = SONDE_DL_INT;
	t->i = (int64_t)fi;
	struct node *n = binary(ps, OP_GE, t, int_node(ps, (int64_t)a, line, col), line, col);

	if (b) {
		struct node *t2 = mknode(ps, N_FIELD, line, col);

		t2->type = SONDE_DL_INT;
		t2->i = (int64_t)fi;
		n = binary(ps, OP_AND, n, binary(ps, OP_LT, t2, int_node(ps, (int64_t)b, line, col), line, col),
			   line, col);
	}
	return n;
}

static struct node *primary(struct parser *ps)
{
	unsigned line = ps->tline, col = ps->tcol;
	struct node *n;

	switch (ps->t) {
	case T_INT:
		n = mknode(ps, N_INT, line, col);
		n->type = SONDE_DL_INT;
		n->i = (int64_t)ps->tint;
		lex(ps);
		return n;
	case T_STR:
		n = mknode(ps, N_STR, line, col);
		n->type = SONDE_DL_STR;
		n->s = sonde_aggset_intern(ps->prog->set, ps->tstr, ps->tstrlen);
		if (!n->s)
			fail(ps, 0, 0, "out of memory");
		n->len = (uint32_t)ps->tstrlen;
		lex(ps);
		return n;
	case T_LPAREN:
		nest_in(ps);
		lex(ps);
		n = expr(ps);
		expect(ps, T_RPAREN, "')'");
		ps->nest--;
		return n;
	case T_DOLLAR:
		if (ps->cl->special != CL_EVENT)
			fail(ps, line, col, "field $%" PRIu64 " is not available in %s clauses",
			     ps->tint, clause_name(ps->cl));
		if (!ps->cl->kind->positional) {
			char f[256];

			list_fields(ps->cl->kind, f, sizeof(f));
			fail(ps, line, col, "%s events have no field $%" PRIu64 " (their fields: %s)",
			     ps->cl->kind->name, ps->tint, f);
		}
		n = mknode(ps, N_FIELD, line, col);
		n->type = SONDE_DL_ANY;
		n->i = (int64_t)ps->tint;
		if (ps->tint > ps->prog->maxpos)
			ps->prog->maxpos = (unsigned)ps->tint;
		lex(ps);
		return n;
	case T_IDENT: {
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)ps->tlen, ps->tp);
		lex(ps);
		if (ps->t == T_LPAREN && !strcmp(name, "time_select"))
			return time_select_call(ps, line, col);
		if (ps->t == T_LPAREN)
			fail(ps, line, col, "unknown function '%s()' (expressions have no functions but "
				 "time_select(\"START-END\"))", name);
		if (ps->cl->special != CL_EVENT)
			fail(ps, line, col, "field '%s' is not available in %s clauses", name,
			     clause_name(ps->cl));
		const struct sonde_dl_kind *k = ps->cl->kind;

		for (size_t i = 0; i < k->nfields; i++) {
			if (strcmp(k->fields[i].name, name))
				continue;
			n = mknode(ps, N_FIELD, line, col);
			n->type = (uint8_t)k->fields[i].type;
			n->i = (int64_t)i;
			use_field(ps, i);
			return n;
		}
		if (k->positional)
			fail(ps, line, col,
			     "unknown field '%s' for %s events (their fields are $0, $1, $2, ...)", name,
			     k->name);
		char f[256];

		list_fields(k, f, sizeof(f));
		fail(ps, line, col, "unknown field '%s' for %s events (their fields: %s)", name,
		     k->name, f);
	}
	case T_AGG:
		fail(ps, line, col, "an aggregation cannot be used in an expression");
	default:
		fail(ps, line, col, "expected an expression, found %s", found(ps));
	}
}

static struct node *unary_expr(struct parser *ps)
{
	unsigned line = ps->tline, col = ps->tcol;

	if (ps->t == T_MINUS || ps->t == T_NOT) {
		int op = ps->t == T_MINUS ? OP_NEG : OP_NOT;

		nest_in(ps);
		lex(ps);
		struct node *a = unary_expr(ps);

		ps->nest--;
		return unary(ps, op, a, line, col);
	}
	if (ps->t == T_PLUS) {
		nest_in(ps);
		lex(ps);
		struct node *n = unary_expr(ps);

		ps->nest--;
		if (n->type == SONDE_DL_STR)
			fail(ps, line, col, "operator + needs an integer operand, not a string");
		return n;
	}
	return primary(ps);
}

static struct node *mul_expr(struct parser *ps)
{
	struct node *n = unary_expr(ps);

	for (;;) {
		int op = ps->t == T_STAR ? OP_MUL
			 : ps->t == T_PCT ? OP_MOD
			 : ps->t == T_SLASH && !ps->tendpred ? OP_DIV
							    : 0;
		unsigned line = ps->tline, col = ps->tcol;

		if (!op)
			return n;
		lex(ps);
		n = binary(ps, op, n, unary_expr(ps), line, col);
	}
}

static struct node *add_expr(struct parser *ps)
{
	struct node *n = mul_expr(ps);

	while (ps->t == T_PLUS || ps->t == T_MINUS) {
		int op = ps->t == T_PLUS ? OP_ADD : OP_SUB;
		unsigned line = ps->tline, col = ps->tcol;

		lex(ps);
		n = binary(ps, op, n, mul_expr(ps), line, col);
	}
	return n;
}

static struct node *rel_expr(struct parser *ps)
{
	struct node *n = add_expr(ps);

	for (;;) {
		int op = ps->t == T_LT ? OP_LT : ps->t == T_LE ? OP_LE : ps->t == T_GT ? OP_GT
									: ps->t == T_GE ? OP_GE : 0;
		unsigned line = ps->tline, col = ps->tcol;

		if (!op)
			return n;
		lex(ps);
		n = binary(ps, op, n, add_expr(ps), line, col);
	}
}

static struct node *eq_expr(struct parser *ps)
{
	struct node *n = rel_expr(ps);

	for (;;) {
		int op = ps->t == T_EQ ? OP_EQ : ps->t == T_NE ? OP_NE : 0;
		unsigned line = ps->tline, col = ps->tcol;

		if (ps->t == T_ASSIGN)
			fail(ps, line, col, "'=' assigns; use '==' to compare");
		if (!op)
			return n;
		lex(ps);
		n = binary(ps, op, n, rel_expr(ps), line, col);
	}
}

static struct node *logic(struct parser *ps, int op, struct node *a, struct node *b, unsigned line,
			  unsigned col)
{
	if (a->type == SONDE_DL_STR)
		fail(ps, a->line, a->col, "operator %s needs integer operands; the left one is a string",
		     op_name(op));
	if (b->type == SONDE_DL_STR)
		fail(ps, b->line, b->col,
		     "operator %s needs integer operands; the right one is a string", op_name(op));
	return binary(ps, op, a, b, line, col);
}

static struct node *and_expr(struct parser *ps)
{
	struct node *n = eq_expr(ps);

	while (ps->t == T_AND) {
		unsigned line = ps->tline, col = ps->tcol;

		lex(ps);
		n = logic(ps, OP_AND, n, eq_expr(ps), line, col);
	}
	return n;
}

static struct node *expr(struct parser *ps)
{
	struct node *n = and_expr(ps);

	while (ps->t == T_OR) {
		unsigned line = ps->tline, col = ps->tcol;

		lex(ps);
		n = logic(ps, OP_OR, n, and_expr(ps), line, col);
	}
	return n;
}

/* ---- statements -------------------------------------------------------------------- */

static struct aggvar *find_var(struct parser *ps, const char *name, size_t len, unsigned line,
			       unsigned col)
{
	struct sonde_dl_prog *p = ps->prog;

	for (size_t i = 0; i < p->nvars; i++)
		if (strlen(p->vars[i]->name) == len && !strncmp(p->vars[i]->name, name, len))
			return p->vars[i];
	if (sonde_grow(&p->vars, &p->capvars, p->nvars + 1, sizeof(*p->vars), 8))
		fail(ps, 0, 0, "out of memory");
	struct aggvar *v = xalloc(ps, sizeof(*v));

	p->vars[p->nvars++] = v;
	v->name = strndup(name, len);
	if (!v->name)
		fail(ps, 0, 0, "out of memory");
	v->line = line;
	v->col = col;
	return v;
}

static struct aggvar *agg_ref(struct parser *ps, const char *fn, int argno)
{
	if (ps->t != T_AGG)
		fail(ps, ps->tline, ps->tcol, "%s() argument #%d must be an aggregation (@name), found %s",
		     fn, argno, found(ps));
	struct aggvar *v = find_var(ps, ps->tp + 1, ps->tlen - 1, ps->tline, ps->tcol);

	lex(ps);
	return v;
}

static struct stmt *new_stmt(struct parser *ps, enum skind kind, unsigned line, unsigned col)
{
	struct clause *cl = ps->cl;

	if (sonde_grow(&cl->stmts, &cl->capstmts, cl->nstmts + 1, sizeof(*cl->stmts), 4))
		fail(ps, 0, 0, "out of memory");
	struct stmt *s = &cl->stmts[cl->nstmts++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->line = line;
	s->col = col;
	return s;
}

static const struct {
	const char *name;
	enum sonde_agg_func func;
	int minargs, maxargs;
} funcs[] = {
	{ "count", SONDE_AGG_COUNT, 0, 0 },	  { "sum", SONDE_AGG_SUM, 1, 1 },
	{ "min", SONDE_AGG_MIN, 1, 1 },		  { "max", SONDE_AGG_MAX, 1, 1 },
	{ "avg", SONDE_AGG_AVG, 1, 1 },		  { "stddev", SONDE_AGG_STDDEV, 1, 1 },
	{ "quantize", SONDE_AGG_QUANTIZE, 1, 2 }, { "lquantize", SONDE_AGG_LQUANTIZE, 3, 5 },
	{ "llquantize", SONDE_AGG_LLQUANTIZE, 5, 6 },
};

static void agg_stmt(struct parser *ps)
{
	unsigned line = ps->tline, col = ps->tcol;
	struct aggvar *v = find_var(ps, ps->tp + 1, ps->tlen - 1, line, col);
	struct node *keys[SONDE_AGG_MAX_KEYS], *args[8];
	unsigned nkeys = 0, nargs = 0, aline[8], acol[8];

	lex(ps);
	if (ps->t == T_LBRACK) {
		lex(ps);
		for (;;) {
			if (nkeys == SONDE_AGG_MAX_KEYS)
				fail(ps, ps->tline, ps->tcol, "too many keys (at most %d)",
				     SONDE_AGG_MAX_KEYS);
			keys[nkeys++] = expr(ps);
			if (ps->t == T_RBRACK)
				break;
			expect(ps, T_COMMA, "',' or ']' after a key");
		}
		lex(ps);
	}
	expect(ps, T_ASSIGN, "'=' after the aggregation");
	if (ps->t != T_IDENT)
		fail(ps, ps->tline, ps->tcol,
		     "expected an aggregating function (count, sum, min, max, avg, stddev, quantize, "
		     "lquantize, llquantize), found %s",
		     found(ps));
	unsigned fline = ps->tline, fcol = ps->tcol;
	size_t fi;

	for (fi = 0; fi < sizeof(funcs) / sizeof(funcs[0]); fi++)
		if (tok_is(ps, funcs[fi].name))
			break;
	if (fi == sizeof(funcs) / sizeof(funcs[0]))
		fail(ps, fline, fcol,
		     "unknown aggregating function '%.*s' (count, sum, min, max, avg, stddev, "
		     "quantize, lquantize, llquantize)",
		     (int)ps->tlen, ps->tp);
	const char *fn = funcs[fi].name;

	lex(ps);
	expect(ps, T_LPAREN, "'(' after the function name");
	if (ps->t != T_RPAREN) {
		for (;;) {
			if (nargs == 8)
				fail(ps, ps->tline, ps->tcol, "%s() prototype mismatch: too many arguments",
				     fn);
			aline[nargs] = ps->tline;
			acol[nargs] = ps->tcol;
			args[nargs++] = expr(ps);
			if (ps->t == T_RPAREN)
				break;
			expect(ps, T_COMMA, "',' or ')' after an argument");
		}
	}
	lex(ps);
	if ((int)nargs < funcs[fi].minargs || (int)nargs > funcs[fi].maxargs) {
		if (funcs[fi].minargs == funcs[fi].maxargs)
			fail(ps, fline, fcol, "%s() prototype mismatch: %u arg%s passed, %d expected", fn,
			     nargs, nargs == 1 ? "" : "s", funcs[fi].minargs);
		fail(ps, fline, fcol, "%s() prototype mismatch: %u arg%s passed, %s %d expected", fn,
		     nargs, nargs == 1 ? "" : "s", (int)nargs < funcs[fi].minargs ? "at least" : "at most",
		     (int)nargs < funcs[fi].minargs ? funcs[fi].minargs : funcs[fi].maxargs);
	}

	struct stmt *s = new_stmt(ps, S_AGG, line, col);
	enum sonde_agg_func func = funcs[fi].func;
	int64_t params[4];
	int nparams = 0;
	unsigned first_param = 1, nparam_args = 0, incr_at = 0;

	s->var = v;
	s->func = func;
	s->nkeys = nkeys;
	memcpy(s->keys, keys, nkeys * sizeof(*keys));
	if (nargs) {
		s->val = args[0];
		if (args[0]->type == SONDE_DL_STR)
			fail(ps, aline[0], acol[0], "%s() argument #1 must be of scalar type, not a string",
			     fn);
	}
	switch (func) {
	case SONDE_AGG_QUANTIZE:
		incr_at = 1;
		break;
	case SONDE_AGG_LQUANTIZE:
		nparam_args = nargs >= 4 ? 3 : 2;
		incr_at = 4;
		break;
	case SONDE_AGG_LLQUANTIZE:
		nparam_args = 4;
		incr_at = 5;
		break;
	default:
		break;
	}
	for (unsigned i = 0; i < nparam_args; i++) {
		struct node *a = args[first_param + i];

		if (a->kind != N_INT) {
			if (func == SONDE_AGG_LQUANTIZE)
				fail(ps, aline[first_param + i], acol[first_param + i],
				     "lquantize() argument #%u must be %sinteger constant", i + 1,
				     i == 2 ? "a non-zero positive " : "an ");
			static const char *const names[] = { "factor", "low magnitude", "high magnitude",
							     "linear steps per magnitude" };
			fail(ps, aline[first_param + i], acol[first_param + i],
			     "llquantize() argument #%u (%s) must be an integer constant", i + 1,
			     names[i]);
		}
		params[nparams++] = a->i;
	}
	if (incr_at && nargs > incr_at) {
		s->incr = args[incr_at];
		if (s->incr->type == SONDE_DL_STR)
			fail(ps, aline[incr_at], acol[incr_at],
			     "%s() increment value (argument #%u) must be of scalar type, not a string",
			     fn, incr_at + 1);
	}

	char err[256];

	if (!v->agg) {
		v->agg = sonde_agg_create(ps->prog->set, v->name, func, params, nparams, nkeys, err,
					  sizeof(err));
		if (!v->agg)
			fail(ps, fline, fcol, "%s", err);
		v->line = line;
		v->col = col;
		v->nkeys = nkeys;
		for (unsigned k = 0; k < nkeys; k++)
			v->ktype[k] = keys[k]->type;
		return;
	}
	if (sonde_agg_func(v->agg) != func)
		fail(ps, fline, fcol, "aggregation @%s redefined: it is %s() at %u:%u, here %s()",
		     v->name, sonde_agg_func_name(sonde_agg_func(v->agg)), v->line, v->col, fn);
	if (v->nkeys != nkeys)
		fail(ps, line, col, "aggregation @%s has %u key%s at %u:%u, %u here", v->name,
		     v->nkeys, v->nkeys == 1 ? "" : "s", v->line, v->col, nkeys);
	for (unsigned k = 0; k < nkeys; k++)
		if (v->ktype[k] != SONDE_DL_ANY && keys[k]->type != SONDE_DL_ANY &&
		    v->ktype[k] != keys[k]->type)
			fail(ps, keys[k]->line, keys[k]->col,
			     "key #%u of @%s is %s at %u:%u, %s here", k + 1, v->name,
			     type_name(v->ktype[k]), v->line, v->col, type_name(keys[k]->type));
	if (sonde_agg_check_match(v->agg, func, params, nparams, err, sizeof(err)))
		fail(ps, fline, fcol, "%s", err);
}

static void action_stmt(struct parser *ps)
{
	unsigned line = ps->tline, col = ps->tcol;
	static const struct {
		const char *name;
		enum skind kind;
	} acts[] = { { "printa", S_PRINTA },   { "normalize", S_NORMALIZE },
		     { "denormalize", S_DENORMALIZE }, { "trunc", S_TRUNC },
		     { "clear", S_CLEAR } };
	size_t ai;

	for (ai = 0; ai < sizeof(acts) / sizeof(acts[0]); ai++)
		if (tok_is(ps, acts[ai].name))
			break;
	if (ai == sizeof(acts) / sizeof(acts[0]))
		fail(ps, line, col,
		     "unknown action '%.*s' (expected @name = func(...), printa, normalize, "
		     "denormalize, trunc or clear)",
		     (int)ps->tlen, ps->tp);
	const char *fn = acts[ai].name;

	if (ps->cl->special == CL_EVENT)
		fail(ps, line, col, "%s() may only be used in BEGIN and END clauses", fn);
	lex(ps);
	expect(ps, T_LPAREN, "'(' after the action name");

	struct stmt *s = new_stmt(ps, acts[ai].kind, line, col);

	switch (acts[ai].kind) {
	case S_PRINTA:
		if (ps->t == T_STR)
			fail(ps, ps->tline, ps->tcol, "printa() with a format string is not supported");
		for (;;) {
			struct aggvar **vv = realloc(s->vars, (s->nvars + 1) * sizeof(*vv));

			if (!vv)
				fail(ps, 0, 0, "out of memory");
			s->vars = vv;
			s->vars[s->nvars] = agg_ref(ps, fn, (int)s->nvars + 1);
			s->nvars++;
			if (ps->t != T_COMMA)
				break;
			lex(ps);
		}
		break;
	case S_NORMALIZE:
	case S_TRUNC:
		s->var = agg_ref(ps, fn, 1);
		if (acts[ai].kind == S_TRUNC && ps->t != T_COMMA)
			break;
		expect(ps, T_COMMA, acts[ai].kind == S_TRUNC ? "',' or ')'" : "',' and a normalization factor");
		{
			unsigned aline = ps->tline, acol = ps->tcol;

			s->arg = expr(ps);
			if (s->arg->type == SONDE_DL_STR)
				fail(ps, aline, acol, "%s() argument #2 must be an integer, not a string", fn);
			if (acts[ai].kind == S_NORMALIZE && s->arg->kind == N_INT && s->arg->i == 0)
				fail(ps, aline, acol, "normalize() needs a non-zero normalization factor");
		}
		break;
	default:
		s->var = agg_ref(ps, fn, 1);
		break;
	}
	expect(ps, T_RPAREN, "')'");
}

static void statement(struct parser *ps)
{
	if (ps->t == T_AGG)
		agg_stmt(ps);
	else if (ps->t == T_IDENT)
		action_stmt(ps);
	else
		fail(ps, ps->tline, ps->tcol,
		     "expected a statement (@name = func(...); or an action), found %s", found(ps));
	if (ps->t == T_RBRACE)
		return;
	expect(ps, T_SEMI, "';' or '}' after the statement");
}

static void clause(struct parser *ps, const struct sonde_dl_kind *const *kinds, size_t nkinds)
{
	struct sonde_dl_prog *p = ps->prog;
	unsigned line = ps->tline, col = ps->tcol;
	struct clause cl = { 0 };

	if (ps->t != T_IDENT)
		fail(ps, line, col, "expected an event kind (BEGIN, END, %s), found %s",
		     nkinds ? kinds[0]->name : "stdin", found(ps));
	if (tok_is(ps, "BEGIN")) {
		cl.special = CL_BEGIN;
	} else if (tok_is(ps, "END")) {
		cl.special = CL_END;
	} else {
		for (size_t i = 0; i < nkinds && !cl.kind; i++)
			if (tok_is(ps, kinds[i]->name))
				cl.kind = kinds[i];
		if (!cl.kind) {
			char have[200];
			size_t n = 0;

			have[0] = '\0';
			for (size_t i = 0; i < nkinds; i++)
				n += (size_t)snprintf(have + n, sizeof(have) - n, ", %s", kinds[i]->name);
			if (tok_is(ps, "stdin"))
				fail(ps, line, col,
				     "stdin events come only without an experiment (this input has "
				     "BEGIN, END%s)",
				     have);
			for (int i = 0; i <= SONDE_KIND_MAX; i++) {
				/* profile, then the traced kinds */
				const struct sonde_dl_kind *known = i ? sonde_dl_kind_of(i) : &sonde_dl_kind_profile;

				if (known && tok_is(ps, known->name))
					fail(ps, line, col,
					     "%s events need an experiment that has them (this input "
					     "has BEGIN, END%s)",
					     known->name, have);
			}
			fail(ps, line, col, "unknown event kind '%.*s' (this input has BEGIN, END%s)",
			     (int)ps->tlen, ps->tp, have);
		}
	}
	if (sonde_grow(&p->clauses, &p->capclauses, p->nclauses + 1, sizeof(*p->clauses), 4))
		fail(ps, 0, 0, "out of memory");
	p->clauses[p->nclauses] = cl;
	ps->cl = &p->clauses[p->nclauses++];
	lex(ps);
	if (ps->t == T_SLASH) {
		lex(ps);
		unsigned pl = ps->tline, pc = ps->tcol;

		ps->cl->pred = expr(ps);
		if (ps->cl->pred->type == SONDE_DL_STR)
			fail(ps, pl, pc, "a predicate must be an integer expression, not a string");
		if (ps->t != T_SLASH)
			fail(ps, ps->tline, ps->tcol, "expected '/' to end the predicate, found %s",
			     found(ps));
		lex(ps);
	}
	expect(ps, T_LBRACE, "'{' to start the clause's statements");
	while (ps->t != T_RBRACE) {
		if (ps->t == T_EOF)
			fail(ps, ps->tline, ps->tcol, "expected '}' to end the clause begun at %u:%u",
			     line, col);
		if (ps->t == T_SEMI) {
			lex(ps);
			continue;
		}
		statement(ps);
	}
	lex(ps);
}

/* ---- compile ------------------------------------------------------------------------ */

static void free_clauses(struct sonde_dl_prog *p)
{
	for (size_t i = 0; i < p->nclauses; i++) {
		for (size_t j = 0; j < p->clauses[i].nstmts; j++)
			free(p->clauses[i].stmts[j].vars);
		free(p->clauses[i].stmts);
	}
	free(p->clauses);
}

void sonde_dl_free(struct sonde_dl_prog *p)
{
	if (!p)
		return;
	free_clauses(p);
	for (size_t i = 0; i < p->nvars; i++) {
		free(p->vars[i]->name);
		free(p->vars[i]);
	}
	free(p->vars);
	while (p->nodes) {
		struct node *n = p->nodes;

		p->nodes = n->next_alloc;
		free(n);
	}
	for (size_t i = 0; i < p->nkinds; i++)
		free(p->kinds[i].clauses);
	sonde_aggset_free(p->set);
	free(p);
}

static void compile(struct parser *ps, const struct sonde_dl_kind *const *kinds, size_t nkinds)
{
	struct sonde_dl_prog *p = ps->prog;

	lex(ps);
	if (ps->t == T_EOF)
		fail(ps, 1, 1, "the program is empty (expected clauses like: stdin { @ = count(); })");
	while (ps->t != T_EOF)
		clause(ps, kinds, nkinds);

	/* every aggregation referenced must be assigned somewhere */
	for (size_t i = 0; i < p->nvars; i++)
		if (!p->vars[i]->agg)
			fail(ps, p->vars[i]->line, p->vars[i]->col,
			     "aggregation @%s is used but never assigned (@%s = func(...))",
			     p->vars[i]->name, p->vars[i]->name);
	for (size_t c = 0; c < p->nclauses; c++)
		for (size_t j = 0; j < p->clauses[c].nstmts; j++) {
			struct stmt *s = &p->clauses[c].stmts[j];

			for (unsigned k = 1; k < s->nvars; k++)
				if (s->vars[k]->nkeys != s->vars[0]->nkeys)
					fail(ps, s->line, s->col,
					     "printa() aggregations must have the same keys: @%s has "
					     "%u, @%s has %u",
					     s->vars[0]->name, s->vars[0]->nkeys, s->vars[k]->name,
					     s->vars[k]->nkeys);
		}
	/* clauses per kind */
	for (size_t k = 0; k < nkinds; k++) {
		struct kindinfo *ki = &p->kinds[k];

		ki->clauses = calloc(p->nclauses + 1, sizeof(*ki->clauses));
		if (!ki->clauses)
			fail(ps, 0, 0, "out of memory");
		for (size_t c = 0; c < p->nclauses; c++)
			if (p->clauses[c].special == CL_EVENT && p->clauses[c].kind == ki->kind)
				ki->clauses[ki->nclauses++] = c;
	}
}

struct sonde_dl_prog *sonde_dl_compile(const char *src, const struct sonde_dl_kind *const *kinds,
				       size_t nkinds, const struct sonde_agg_opts *opts,
				       struct sonde_dl_error *e)
{
	struct parser ps;
	struct sonde_dl_prog *p = calloc(1, sizeof(*p));

	memset(e, 0, sizeof(*e));
	if (!p || !(p->set = sonde_aggset_new()) || nkinds > MAX_KINDS) {
		snprintf(e->msg, sizeof(e->msg), nkinds > MAX_KINDS ? "too many kinds" : "out of memory");
		sonde_dl_free(p);
		return NULL;
	}
	if (opts)
		p->opts = *opts;
	p->nkinds = nkinds;
	for (size_t i = 0; i < nkinds; i++)
		p->kinds[i].kind = kinds[i];

	memset(&ps, 0, sizeof(ps));
	ps.src = ps.p = src;
	ps.line = ps.col = 1;
	ps.prog = p;
	ps.e = e;
	if (setjmp(ps.jb)) {
		free(ps.tstr);
		sonde_dl_free(ps.prog);
		return NULL;
	}
	compile(&ps, kinds, nkinds);
	free(ps.tstr);
	return ps.prog;
}

static const struct kindinfo *kind_info(const struct sonde_dl_prog *p, const struct sonde_dl_kind *k)
{
	for (size_t i = 0; i < p->nkinds; i++)
		if (p->kinds[i].kind == k)
			return &p->kinds[i];
	return NULL;
}

bool sonde_dl_uses_field(const struct sonde_dl_prog *p, const struct sonde_dl_kind *kind, size_t i)
{
	const struct kindinfo *ki = kind_info(p, kind);

	return ki && i < 64 && (ki->used >> i & 1);
}

/* ---- evaluation ------------------------------------------------------------------------ */

struct dv {
	uint8_t t; /* SONDE_DL_V_INT (s may hold its text) or SONDE_DL_V_STR / ISTR */
	uint32_t len;
	int64_t i;
	const char *s;
};

struct evctx {
	struct sonde_dl_prog *p;
	struct sonde_dl_val *vals;
	size_t nvals;
};

static struct sonde_dl_val empty_val = { .type = SONDE_DL_V_STR, .len = 0, .s = "" };

static void problem(struct sonde_dl_prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct sonde_dl_prog *p, const char *fmt, ...)
{
	if (p->nproblems++)
		return;
	va_list ap;
	const char *k = p->cur_kind ? p->cur_kind : "?";
	int n;

	if (p->cur_ordinal)
		n = snprintf(p->problem, sizeof(p->problem), "%s %s %" PRIu64 ": ", k,
			     !strcmp(k, "stdin") ? "line" : "event", p->cur_ordinal);
	else
		n = snprintf(p->problem, sizeof(p->problem), "in %s: ", k);
	va_start(ap, fmt);
	vsnprintf(p->problem + n, sizeof(p->problem) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Decimal 64-bit integer with an optional sign, the whole text. */
static bool parse_int(const char *s, uint32_t len, int64_t *out)
{
	const char *e = s + len;
	bool neg = false;
	uint64_t v = 0;

	if (s < e && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	if (s == e)
		return false;
	for (; s < e; s++) {
		unsigned d = (unsigned)(unsigned char)*s - '0';

		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*out = (int64_t)(neg ? 0 - v : v);
	return true;
}

static inline void field_value(struct sonde_dl_val *v, struct dv *out)
{
	if (v->type == SONDE_DL_V_TEXT)
		v->type = parse_int(v->s, v->len, &v->i) ? SONDE_DL_V_TINT : SONDE_DL_V_STR;
	out->len = v->len;
	out->s = v->s;
	out->i = v->i;
	out->t = v->type == SONDE_DL_V_TINT ? SONDE_DL_V_INT : v->type;
}

static void describe(const struct node *n, const struct dv *v, char *buf, size_t len)
{
	unsigned l = v->len > 40 ? 40 : v->len;

	if (n->kind == N_FIELD && n->type == SONDE_DL_ANY)
		snprintf(buf, len, "$%" PRId64 " is '%.*s'%s", n->i, (int)l, v->s, v->len > 40 ? "..." : "");
	else
		snprintf(buf, len, "'%.*s'%s", (int)l, v->s, v->len > 40 ? "..." : "");
}

static int eval(struct evctx *c, const struct node *n, struct dv *out);

static int eval_int(struct evctx *c, const struct node *n, int64_t *out, const char *what)
{
	struct dv v;

	if (n->kind == N_INT) {
		*out = n->i;
		return 0;
	}
	if (eval(c, n, &v))
		return -1;
	if (v.t != SONDE_DL_V_INT) {
		char d[80];

		describe(n, &v, d, sizeof(d));
		problem(c->p, "%s needs an integer, and %s", what, d);
		return -1;
	}
	*out = v.i;
	return 0;
}

static int truth(struct evctx *c, const struct node *n, bool *out)
{
	struct dv v;

	if (eval(c, n, &v))
		return -1;
	*out = v.t == SONDE_DL_V_INT ? v.i != 0 : v.len != 0;
	return 0;
}

static int str_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c)
		return c < 0 ? -1 : 1;
	return (la > lb) - (la < lb);
}

static int eval(struct evctx *c, const struct node *n, struct dv *out)
{
	switch (n->kind) {
	case N_INT:
		out->t = SONDE_DL_V_INT;
		out->i = n->i;
		out->s = NULL;
		out->len = 0;
		return 0;
	case N_STR:
		out->t = SONDE_DL_V_ISTR;
		out->s = n->s;
		out->len = n->len;
		return 0;
	case N_FIELD:
		field_value((size_t)n->i < c->nvals ? &c->vals[n->i] : &empty_val, out);
		return 0;
	case N_UNARY: {
		if (n->op == OP_NOT) {
			bool b;

			if (truth(c, n->a, &b))
				return -1;
			out->t = SONDE_DL_V_INT;
			out->i = !b;
			out->s = NULL;
			return 0;
		}
		int64_t x;

		if (eval_int(c, n->a, &x, "operator -"))
			return -1;
		out->t = SONDE_DL_V_INT;
		out->i = (int64_t)(0 - (uint64_t)x);
		out->s = NULL;
		return 0;
	}
	case N_BINARY:
		break;
	}
	out->t = SONDE_DL_V_INT;
	out->s = NULL;
	if (n->op == OP_AND || n->op == OP_OR) {
		bool a, b;

		if (truth(c, n->a, &a))
			return -1;
		if (n->op == OP_AND ? !a : a) {
			out->i = a;
			return 0;
		}
		if (truth(c, n->b, &b))
			return -1;
		out->i = b;
		return 0;
	}
	if (n->op >= OP_LT && n->op <= OP_NE) {
		struct dv a, b;
		int r;

		if (eval(c, n->a, &a) || eval(c, n->b, &b))
			return -1;
		if (a.t == SONDE_DL_V_INT && b.t == SONDE_DL_V_INT) {
			r = a.i < b.i ? -1 : a.i > b.i;
		} else {
			/* a string against an integer: compared as text */
			char ab[24], bb[24];

			if (a.t == SONDE_DL_V_INT && !a.s) {
				a.len = (uint32_t)snprintf(ab, sizeof(ab), "%" PRId64, a.i);
				a.s = ab;
			}
			if (b.t == SONDE_DL_V_INT && !b.s) {
				b.len = (uint32_t)snprintf(bb, sizeof(bb), "%" PRId64, b.i);
				b.s = bb;
			}
			r = str_cmp(a.s, a.len, b.s, b.len);
		}
		out->i = arith(n->op, r, 0);
		return 0;
	}
	int64_t x, y;
	const char *what = n->op == OP_ADD ? "operator +" : n->op == OP_SUB ? "operator -"
						 : n->op == OP_MUL ? "operator *" : n->op == OP_DIV ? "operator /"
													: "operator %";

	if (eval_int(c, n->a, &x, what) || eval_int(c, n->b, &y, what))
		return -1;
	if ((n->op == OP_DIV || n->op == OP_MOD) && y == 0) {
		problem(c->p, "division by zero");
		return -1;
	}
	out->i = arith(n->op, x, y);
	return 0;
}

static int run_agg(struct evctx *c, const struct stmt *s)
{
	struct sonde_agg_key keys[SONDE_AGG_MAX_KEYS];
	int64_t val = 0, incr = 1;

	for (unsigned k = 0; k < s->nkeys; k++) {
		struct dv v;

		if (eval(c, s->keys[k], &v))
			return 1;
		if (v.t == SONDE_DL_V_INT) {
			keys[k].type = SONDE_AGG_KEY_I64;
			keys[k].i = v.i;
		} else {
			keys[k].type = SONDE_AGG_KEY_STR;
			keys[k].s = v.t == SONDE_DL_V_ISTR ? v.s : sonde_aggset_intern(c->p->set, v.s, v.len);
			if (!keys[k].s)
				return -1;
		}
	}
	if (s->val) {
		static const char *const what[] = {
			[SONDE_AGG_COUNT] = "count()",	     [SONDE_AGG_MIN] = "min()",
			[SONDE_AGG_MAX] = "max()",	     [SONDE_AGG_AVG] = "avg()",
			[SONDE_AGG_SUM] = "sum()",	     [SONDE_AGG_STDDEV] = "stddev()",
			[SONDE_AGG_QUANTIZE] = "quantize()", [SONDE_AGG_LQUANTIZE] = "lquantize()",
			[SONDE_AGG_LLQUANTIZE] = "llquantize()",
		};
		if (eval_int(c, s->val, &val, what[s->func]))
			return 1;
	}
	if (s->incr && eval_int(c, s->incr, &incr, "the increment"))
		return 1;
	return sonde_agg_update(s->var->agg, s->nkeys ? keys : NULL, val, incr) ? -1 : 0;
}

/* Runs one clause: 0, 1 (event skipped, problem recorded), -1 (memory). */
static int run_clause(struct evctx *c, const struct clause *cl, FILE *out)
{
	if (cl->pred) {
		bool b;

		if (truth(c, cl->pred, &b))
			return 1;
		if (!b)
			return 0;
	}
	for (size_t i = 0; i < cl->nstmts; i++) {
		const struct stmt *s = &cl->stmts[i];
		int r = 0;
		int64_t n;

		switch (s->kind) {
		case S_AGG:
			r = run_agg(c, s);
			break;
		case S_PRINTA: {
			struct sonde_agg *aggs[32], **v = aggs;

			if (s->nvars > 32 && !(v = malloc(s->nvars * sizeof(*v))))
				return -1;
			for (unsigned k = 0; k < s->nvars; k++)
				v[k] = s->vars[k]->agg;
			r = sonde_agg_printa(out, v, s->nvars, &c->p->opts) ? -1 : 0;
			if (v != aggs)
				free(v);
			break;
		}
		case S_NORMALIZE:
			if (eval_int(c, s->arg, &n, "normalize()"))
				return 1;
			if (sonde_agg_normalize(s->var->agg, n)) {
				problem(c->p, "normalize() needs a non-zero normalization factor");
				return 1;
			}
			break;
		case S_DENORMALIZE:
			sonde_agg_denormalize(s->var->agg);
			break;
		case S_TRUNC:
			n = 0;
			if (s->arg && eval_int(c, s->arg, &n, "trunc()"))
				return 1;
			r = sonde_agg_trunc(s->var->agg, n) ? -1 : 0;
			break;
		case S_CLEAR:
			sonde_agg_clear(s->var->agg);
			break;
		}
		if (r)
			return r;
	}
	return 0;
}

int sonde_dl_event(struct sonde_dl_prog *p, const struct sonde_dl_kind *kind,
		   struct sonde_dl_val *vals, size_t nvals, uint64_t ordinal)
{
	const struct kindinfo *ki = kind_info(p, kind);
	struct evctx c = { p, vals, nvals };

	if (!ki)
		return 0;
	p->cur_kind = kind->name;
	p->cur_ordinal = ordinal;
	for (size_t i = 0; i < ki->nclauses; i++) {
		int r = run_clause(&c, &p->clauses[ki->clauses[i]], NULL);

		if (r < 0)
			return -1;
	}
	return 0;
}

static int run_special(struct sonde_dl_prog *p, enum special which, FILE *out, char *err,
		       size_t errlen)
{
	struct evctx c = { p, NULL, 0 };

	p->cur_kind = which == CL_BEGIN ? "BEGIN" : "END";
	p->cur_ordinal = 0;
	for (size_t i = 0; i < p->nclauses; i++) {
		if (p->clauses[i].special != which)
			continue;
		if (run_clause(&c, &p->clauses[i], out) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

int sonde_dl_begin(struct sonde_dl_prog *p, FILE *out, char *err, size_t errlen)
{
	return run_special(p, CL_BEGIN, out, err, errlen);
}

int sonde_dl_end(struct sonde_dl_prog *p, FILE *out, char *err, size_t errlen)
{
	if (run_special(p, CL_END, out, err, errlen))
		return -1;
	if (sonde_aggset_print_end(out, p->set, &p->opts)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

uint64_t sonde_dl_problems(const struct sonde_dl_prog *p, char *buf, size_t len)
{
	if (p->nproblems && len)
		snprintf(buf, len, "%" PRIu64 " event%s skipped; the first: %s", p->nproblems,
			 p->nproblems == 1 ? "" : "s", p->problem);
	else if (len)
		buf[0] = '\0';
	return p->nproblems;
}

/* ---- stdin -------------------------------------------------------------------------- */

static inline bool blank(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int64_t sonde_dl_run_stdin(struct sonde_dl_prog *p, int fd, char *err, size_t errlen)
{
	const struct kindinfo *ki = kind_info(p, &sonde_dl_kind_stdin);

	if (!ki || !ki->nclauses)
		return 0;
	size_t nf = p->maxpos + 1, cap = 1 << 20, have = 0;
	struct sonde_dl_val *vals = calloc(nf, sizeof(*vals));
	char *buf = malloc(cap);
	int64_t lines = 0;
	bool eof = false;

	if (!vals || !buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	const struct clause *only = ki->nclauses == 1 ? &p->clauses[ki->clauses[0]] : NULL;
	struct evctx c = { p, vals, nf };

	p->cur_kind = "stdin";
	while (!eof) {
		if (sonde_grow(&buf, &cap, have + 1, 1, 1 << 20)) {
			snprintf(err, errlen, "out of memory (a line longer than %zu bytes)", cap);
			goto fail;
		}
		ssize_t n = read(fd, buf + have, cap - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "cannot read standard input: %s", strerror(errno));
			goto fail;
		}
		if (n == 0) {
			eof = true;
			if (have == 0)
				break;
			buf[have++] = '\n'; /* the last line had no newline; have < cap here */
		} else {
			have += (size_t)n;
		}
		char *s = buf, *end = buf + have;

		for (;;) {
			char *nl = memchr(s, '\n', (size_t)(end - s));

			if (!nl)
				break;
			char *e = nl;

			if (e > s && e[-1] == '\r')
				e--;
			lines++;
			vals[0].type = SONDE_DL_V_TEXT;
			vals[0].s = s;
			vals[0].len = (uint32_t)(e - s);
			const char *q = s;

			for (size_t f = 1; f < nf; f++) {
				while (q < e && blank((unsigned char)*q))
					q++;
				const char *b = q;

				while (q < e && !blank((unsigned char)*q))
					q++;
				vals[f].type = q > b ? SONDE_DL_V_TEXT : SONDE_DL_V_STR;
				vals[f].s = b;
				vals[f].len = (uint32_t)(q - b);
			}
			p->cur_ordinal = (uint64_t)lines;
			if (only) {
				if (run_clause(&c, only, NULL) < 0)
					goto oom;
			} else if (sonde_dl_event(p, &sonde_dl_kind_stdin, vals, nf, (uint64_t)lines) < 0) {
				goto oom;
			}
			s = nl + 1;
		}
		have = (size_t)(end - s);
		memmove(buf, s, have);
		if (eof && have) /* cannot happen: a newline was appended */
			break;
	}
	free(vals);
	free(buf);
	return lines;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(vals);
	free(buf);
	return -1;
}

/* ---- profile ---------------------------------------------------------------------------- */

const char *sonde_dl_pc_name_fallback(void *ctx, const struct sonde_exp *exp, uint64_t pc,
				      int exact, uint64_t time_ns, uint64_t callee)
{
	(void)callee; /* no symbols, no call sites: pc's object and offset */
	static char buf[512];
	uint64_t a = exact ? pc : pc - 1;
	const struct sonde_object *o = sonde_exp_find_object(exp, a, time_ns);

	(void)ctx;
	if (o)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, o->name, a - o->base);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return buf;
}

/* A stack's names, made at its first event in a mapping epoch
 * (sonde_exp_map_epoch): one stack id names different functions before
 * and after a library at its addresses was replaced.  Events come nearly
 * in time order, so one entry per stack, remade when the epoch changes,
 * costs nothing where no address was reused (one epoch). */
struct sonde_dl_stack_names {
	const char *func, *caller, *object;
	uint32_t flen, clen, olen;
	uint32_t epoch;
	bool done;
};

int64_t sonde_dl_run_profile(struct sonde_dl_prog *p, const struct sonde_exp *exp,
			     sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen)
{
	const struct kindinfo *ki = kind_info(p, &sonde_dl_kind_profile);

	if (!ki || !ki->nclauses)
		return 0;
	if (!name_of_pc)
		name_of_pc = sonde_dl_pc_name_fallback;

	bool want_func = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_FUNC);
	bool want_caller = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_CALLER);
	bool want_object = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_OBJECT);
	bool want_names = want_func || want_caller || want_object;
	size_t nst;
	const struct sonde_stack *stacks = sonde_exp_stacks(exp, &nst);
	struct sonde_dl_stack_names *cache = calloc(nst ? nst : 1, sizeof(*cache));
	size_t nepochs = sonde_exp_map_epochs(exp);
	const char *unknown = sonde_aggset_intern(p->set, "<unknown>", 9);
	const char *none = sonde_aggset_intern(p->set, "<none>", 6);
	struct sonde_dl_stack_names unk = { unknown, unknown, unknown, 9, 9, 9, 0, true };
	uint64_t start = sonde_exp_info(exp)->start_ns;
	struct sonde_dl_val vals[SONDE_DL_P_NFIELDS];
	struct sonde_sample_iter it;
	struct sonde_sample smp;
	int64_t n = 0;
	uint64_t last_id = 0;
	const struct sonde_stack *last_st = NULL;
	bool have_last = false;

	const char *states[3] = { sonde_aggset_intern(p->set, "cpu", 3), sonde_aggset_intern(p->set, "user-lock", 9),
				  sonde_aggset_intern(p->set, "other-wait", 10) };

	if (!cache || !unknown || !none || !states[0] || !states[1] || !states[2])
		goto oom;
	memset(vals, 0, sizeof(vals));
	for (int f = 0; f < SONDE_DL_P_NFIELDS; f++)
		vals[f].type = profile_fields[f].type == SONDE_DL_STR ? SONDE_DL_V_ISTR : SONDE_DL_V_INT;

	const struct clause *only = ki->nclauses == 1 ? &p->clauses[ki->clauses[0]] : NULL;
	struct evctx c = { p, vals, SONDE_DL_P_NFIELDS };

	p->cur_kind = "profile";
	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &smp)) {
		const struct sonde_stack *st;

		if (have_last && smp.stack_id == last_id) {
			st = last_st;
		} else {
			st = sonde_exp_stack(exp, smp.stack_id);
			last_id = smp.stack_id;
			last_st = st;
			have_last = true;
		}
		n++;
		vals[SONDE_DL_P_THREAD].i = smp.tid;
		vals[SONDE_DL_P_CPU].i = smp.cpu == 0xffff ? -1 : smp.cpu;
		vals[SONDE_DL_P_TIME].i = (int64_t)(smp.time_ns - start);
		vals[SONDE_DL_P_WEIGHT].i = (int64_t)smp.weight_ns;
		unsigned sti = smp.state <= SONDE_STATE_OTHER_WAIT ? smp.state : 0; /* the reader checked it */
		vals[SONDE_DL_P_STATE].s = states[sti];
		vals[SONDE_DL_P_STATE].len = (uint32_t)strlen(states[sti]);
		vals[SONDE_DL_P_USER].i = sti ? 0 : (int64_t)(smp.weight_ns - smp.system_ns);
		vals[SONDE_DL_P_SYSTEM].i = (int64_t)smp.system_ns;
		vals[SONDE_DL_P_WAITCPU].i = (int64_t)smp.wait_cpu_ns;
		vals[SONDE_DL_P_SYSCALL].i = !sti || smp.syscall == SONDE_OFFCPU_NO_SYSCALL ? -1 : smp.syscall;
		vals[SONDE_DL_P_PC].i = st && st->depth ? (int64_t)(st->pc[0] & ~SONDE_PC_EXACT) : 0;
		vals[SONDE_DL_P_DEPTH].i = st ? st->depth : 0;
		if (want_names) {
			const struct sonde_dl_stack_names *nm = &unk;

			if (st && st->depth && st >= stacks && st < stacks + nst) {
				struct sonde_dl_stack_names *e = &cache[st - stacks];
				uint32_t ep = nepochs > 1 ? sonde_exp_map_epoch(exp, smp.time_ns, NULL, NULL) : 0;

				if (!e->done || e->epoch != ep) {
					e->epoch = ep;
					uint64_t pc0 = st->pc[0] & ~SONDE_PC_EXACT;
					int x0 = (st->pc[0] & SONDE_PC_EXACT) != 0;
					const char *s;

					if (want_func) {
						s = name_of_pc(ctx, exp, pc0, x0, smp.time_ns, 0);
						e->func = s ? sonde_aggset_intern(p->set, s, strlen(s)) : unknown;
						if (!e->func)
							goto oom;
					}
					if (want_caller) {
						if (st->depth > 1) {
							uint64_t pc1 = st->pc[1] & ~SONDE_PC_EXACT;

							s = name_of_pc(ctx, exp, pc1,
								       (st->pc[1] & SONDE_PC_EXACT) != 0,
								       smp.time_ns, st->pc[0]);
							e->caller = s ? sonde_aggset_intern(p->set, s, strlen(s))
								      : unknown;
							if (!e->caller)
								goto oom;
						} else {
							e->caller = none;
						}
					}
					if (want_object) {
						const struct sonde_object *o = sonde_exp_find_object(
							exp, x0 ? pc0 : pc0 - 1, smp.time_ns);

						e->object = o ? sonde_aggset_intern(p->set, o->name,
										    strlen(o->name))
							      : unknown;
						if (!e->object)
							goto oom;
					}
					e->flen = e->func ? (uint32_t)strlen(e->func) : 0;
					e->clen = e->caller ? (uint32_t)strlen(e->caller) : 0;
					e->olen = e->object ? (uint32_t)strlen(e->object) : 0;
					e->done = true;
				}
				nm = e;
			}
			if (want_func) {
				vals[SONDE_DL_P_FUNC].s = nm->func;
				vals[SONDE_DL_P_FUNC].len = nm->flen;
			}
			if (want_caller) {
				vals[SONDE_DL_P_CALLER].s = nm->caller;
				vals[SONDE_DL_P_CALLER].len = nm->clen;
			}
			if (want_object) {
				vals[SONDE_DL_P_OBJECT].s = nm->object;
				vals[SONDE_DL_P_OBJECT].len = nm->olen;
			}
		}
		p->cur_ordinal = (uint64_t)n;
		if (only) {
			if (run_clause(&c, only, NULL) < 0)
				goto oom;
		} else if (sonde_dl_event(p, &sonde_dl_kind_profile, vals, SONDE_DL_P_NFIELDS,
					  (uint64_t)n) < 0) {
			goto oom;
		}
	}
	free(cache);
	return n;
oom:
	free(cache);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- traced events: the helpers of the kinds' run functions (agg/kind.h) ---------------- */

/* The collector's own frames (an interposer above the traced call) are
 * not the program's. */
static bool collector_frame(const struct sonde_exp *exp, uint64_t pc, bool exact, uint64_t time_ns)
{
	const struct sonde_object *o = sonde_exp_find_object(exp, exact ? pc : pc - 1, time_ns);

	return o && o->sonde;
}

static bool runs_kind(const struct sonde_dl_prog *p, const struct sonde_dl_kind *k)
{
	const struct kindinfo *ki = kind_info(p, k);

	return ki && ki->nclauses;
}

int sonde_dl_trace_begin(struct sonde_dl_trace *t, struct sonde_dl_prog *p, const struct sonde_exp *exp,
			 const struct sonde_dl_kind *k, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc,
			 void *ctx, struct sonde_dl_val *vals)
{
	memset(t, 0, sizeof(*t));
	if (!runs_kind(p, k))
		return 0;
	t->p = p;
	t->exp = exp;
	t->name_of_pc = name_of_pc ? name_of_pc : sonde_dl_pc_name_fallback;
	t->ctx = ctx;
	t->want_func = sonde_dl_uses_field(p, k, ffunc);
	t->want_caller = sonde_dl_uses_field(p, k, fcaller);
	t->start = sonde_exp_info(exp)->start_ns;
	t->nepochs = sonde_exp_map_epochs(exp);
	t->unknown = sonde_aggset_intern(p->set, "<unknown>", 9);
	t->none = sonde_aggset_intern(p->set, "<none>", 6);
	if (!t->unknown || !t->none)
		return -1;
	if (t->want_func || t->want_caller) {
		t->stacks = sonde_exp_stacks(exp, &t->nst);
		t->cache = calloc(t->nst ? t->nst : 1, sizeof(*t->cache));
		if (!t->cache)
			return -1;
	}
	memset(vals, 0, k->nfields * sizeof(*vals));
	for (size_t f = 0; f < k->nfields; f++) {
		vals[f].type = k->fields[f].type == SONDE_DL_STR ? SONDE_DL_V_ISTR : SONDE_DL_V_INT;
		if (k->fields[f].type == SONDE_DL_STR) {
			vals[f].s = "";
			vals[f].len = 0;
		}
	}
	return 1;
}

void sonde_dl_trace_end(struct sonde_dl_trace *t)
{
	free(t->cache);
	t->cache = NULL;
}

int64_t sonde_dl_trace_oom(struct sonde_dl_trace *t, char *err, size_t errlen)
{
	sonde_dl_trace_end(t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

bool sonde_dl_trace_uses(const struct sonde_dl_trace *t, const struct sonde_dl_kind *k, size_t i)
{
	return sonde_dl_uses_field(t->p, k, i);
}

const char *sonde_dl_trace_intern(struct sonde_dl_trace *t, const char *s)
{
	return sonde_aggset_intern(t->p->set, s, strlen(s));
}

/* callee: 0, or the frame below (sonde_dl_name_fn). */
static const char *src_name(struct sonde_dl_trace *t, uint64_t frame, uint64_t time_ns, uint64_t callee)
{
	const char *s = t->name_of_pc(t->ctx, t->exp, frame & ~SONDE_PC_EXACT, (frame & SONDE_PC_EXACT) != 0,
				      time_ns, callee);

	return s ? sonde_aggset_intern(t->p->set, s, strlen(s)) : t->unknown;
}

int sonde_dl_trace_names(struct sonde_dl_trace *t, uint64_t stack_id, uint64_t time_ns, struct sonde_dl_val *func,
			 struct sonde_dl_val *caller)
{
	if (!t->want_func && !t->want_caller)
		return 0;
	const struct sonde_stack *st = stack_id ? sonde_exp_stack(t->exp, stack_id) : NULL;
	struct sonde_dl_stack_names unk = { t->unknown, t->unknown, NULL, 9, 9, 0, 0, true };
	struct sonde_dl_stack_names *nm = &unk;

	if (st && st->depth && st >= t->stacks && st < t->stacks + t->nst) {
		nm = &t->cache[st - t->stacks];
		uint32_t ep = t->nepochs > 1 ? sonde_exp_map_epoch(t->exp, time_ns, NULL, NULL) : 0;
		if (!nm->done || nm->epoch != ep) {
			int k0 = -1, k1 = -1;

			nm->epoch = ep;

			for (int k = 0; k < st->depth; k++) {
				uint64_t pc = st->pc[k];

				if (collector_frame(t->exp, pc & ~SONDE_PC_EXACT, (pc & SONDE_PC_EXACT) != 0, time_ns))
					continue;
				if (k0 < 0) {
					k0 = k;
				} else {
					k1 = k;
					break;
				}
			}
			nm->func = k0 < 0 ? t->unknown : src_name(t, st->pc[k0], time_ns, 0);
			nm->caller = k0 < 0 ? t->unknown
				   : k1 < 0    ? t->none
					       : src_name(t, st->pc[k1], time_ns, st->pc[k0]);
			if (!nm->func || !nm->caller)
				return -1;
			nm->flen = (uint32_t)strlen(nm->func);
			nm->clen = (uint32_t)strlen(nm->caller);
			nm->done = true;
		}
	}
	func->s = nm->func;
	func->len = nm->flen;
	caller->s = nm->caller;
	caller->len = nm->clen;
	return 0;
}

int sonde_dl_trace_str(struct sonde_dl_trace *t, struct sonde_dl_val *v, const char *s)
{
	size_t len = strlen(s);

	v->s = sonde_aggset_intern(t->p->set, s, len);
	v->len = (uint32_t)len;
	return v->s ? 0 : -1;
}

int sonde_dl_trace_fname(struct sonde_dl_trace *t, struct sonde_dl_val *v, unsigned func,
			 const char *(*name)(unsigned))
{
	if (func >= 64)
		return sonde_dl_trace_str(t, v, name(func));
	if (!t->fname[func]) {
		const char *s = name(func);

		t->fnamelen[func] = (uint32_t)strlen(s);
		if (!(t->fname[func] = sonde_aggset_intern(t->p->set, s, t->fnamelen[func])))
			return -1;
	}
	v->s = t->fname[func];
	v->len = t->fnamelen[func];
	return 0;
}

int64_t sonde_dl_trace_run(struct sonde_dl_prog *p, const struct sonde_exp *exp, const struct sonde_dl_kind *k,
			   size_t n, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc, void *ctx,
			   sonde_dl_fill_fn *fill, void *arg, char *err, size_t errlen)
{
	struct sonde_dl_val vals[SONDE_DL_MAX_FIELDS];
	struct sonde_dl_trace t;
	int r;

	if (k->nfields > SONDE_DL_MAX_FIELDS) { /* a kind this build cannot feed */
		snprintf(err, errlen, "event kind %s has more than %d fields", k->name, SONDE_DL_MAX_FIELDS);
		return -1;
	}
	if (!n || (r = sonde_dl_trace_begin(&t, p, exp, k, ffunc, fcaller, name_of_pc, ctx, vals)) == 0)
		return 0;
	if (r < 0)
		return sonde_dl_trace_oom(&t, err, errlen);
	for (size_t i = 0; i < n; i++) {
		uint64_t stack_id = 0, time_ns = 0;

		if (fill(&t, arg, i, vals, &stack_id, &time_ns) < 0 ||
		    sonde_dl_trace_names(&t, stack_id, time_ns, &vals[ffunc], &vals[fcaller]) < 0 ||
		    sonde_dl_event(p, k, vals, k->nfields, (uint64_t)i + 1) < 0)
			return sonde_dl_trace_oom(&t, err, errlen);
	}
	sonde_dl_trace_end(&t);
	return (int64_t)n;
}
