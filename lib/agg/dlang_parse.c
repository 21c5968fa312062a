/*
 * dlang_parse: the parser of the sonde agg language, and the compiled
 * program's life (sonde_dl_compile, sonde_dl_free).  Recursive descent
 * over the lexer's tokens (dlang_lex.c); it checks types as it goes and
 * folds constant subexpressions (lquantize's and llquantize's parameters
 * must fold to integer constants), so that what it hands the evaluator
 * (dlang_eval.c) is a tree that cannot fail to type.  Apart from the
 * evaluator because it runs once per program, the evaluator once per
 * event.
 */
#define _GNU_SOURCE
#include "base/grow.h"
#include "base/timerange.h"
#include "agg/dlang_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- nodes ----------------------------------------------------------------------- */

static struct node *mknode(struct parser *ps, int kind, unsigned line, unsigned col)
{
	struct node *n = dl_xalloc(ps, sizeof(*n));

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

static void check_depth(struct parser *ps, const struct node *n)
{
	if (n->depth > MAX_NEST)
		dl_fail(ps, n->line, n->col,
			"expression too deep: more than %d operators nested or chained (the limit keeps "
			"evaluation off the stack's end)",
			MAX_NEST);
}

/* Enters one more level of parentheses or unary operators. */
static void nest_in(struct parser *ps)
{
	if (++ps->nest > MAX_NEST)
		dl_fail(ps, ps->tline, ps->tcol,
			"expression nested too deeply: more than %d levels of parentheses or unary "
			"operators",
			MAX_NEST);
}

static struct node *unary(struct parser *ps, int op, struct node *a, unsigned line, unsigned col)
{
	if (a->type == SONDE_DL_STR)
		dl_fail(ps, line, col, "operator %s needs an integer operand, not a string", op_name(op));
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
			dl_fail(ps, line, col, "operator %s cannot compare %s with %s", op_name(op),
				type_name(a->type), type_name(b->type));
	} else {
		if (a->type == SONDE_DL_STR)
			dl_fail(ps, a->line, a->col,
				"operator %s needs integer operands; the left one is a string",
				op_name(op));
		if (b->type == SONDE_DL_STR)
			dl_fail(ps, b->line, b->col,
				"operator %s needs integer operands; the right one is a string",
				op_name(op));
	}
	if (a->kind == N_INT && b->kind == N_INT) {
		if ((op == OP_DIV || op == OP_MOD) && b->i == 0)
			dl_fail(ps, line, col, "division by zero in a constant expression");
		a->i = dl_arith(op, a->i, b->i);
		return a;
	}
	if (a->kind == N_STR && b->kind == N_STR && cmp) {
		int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

		if (!c)
			c = (a->len > b->len) - (a->len < b->len);
		a->kind = N_INT;
		a->type = SONDE_DL_INT;
		a->i = dl_arith(op, c, 0);
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
		dl_fail(ps, line, col, "time_select() is not available in %s clauses", clause_name(ps->cl));
	while (!k->positional && fi < k->nfields && strcmp(k->fields[fi].name, "time"))
		fi++;
	if (k->positional || fi == k->nfields)
		dl_fail(ps, line, col, "time_select(): %s events have no field 'time'", k->name);
	dl_lex(ps); /* ( */
	if (ps->t != T_STR)
		dl_fail(ps, ps->tline, ps->tcol, "time_select() takes a string of seconds like \"1.5-3\", found %s",
			dl_found(ps));
	snprintf(range, sizeof(range), "%.*s", (int)ps->tstrlen, ps->tstr);
	if (strlen(range) != ps->tstrlen || sonde_time_parse(range, &a, &b, err, sizeof(err)) < 0)
		dl_fail(ps, ps->tline, ps->tcol, "time_select(): %s", err);
	dl_lex(ps);
	dl_expect(ps, T_RPAREN, "')'");
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
		dl_lex(ps);
		return n;
	case T_STR:
		n = mknode(ps, N_STR, line, col);
		n->type = SONDE_DL_STR;
		n->s = sonde_aggset_intern(ps->prog->set, ps->tstr, ps->tstrlen);
		if (!n->s)
			dl_fail(ps, 0, 0, "out of memory");
		n->len = (uint32_t)ps->tstrlen;
		dl_lex(ps);
		return n;
	case T_LPAREN:
		nest_in(ps);
		dl_lex(ps);
		n = expr(ps);
		dl_expect(ps, T_RPAREN, "')'");
		ps->nest--;
		return n;
	case T_DOLLAR:
		if (ps->cl->special != CL_EVENT)
			dl_fail(ps, line, col, "field $%" PRIu64 " is not available in %s clauses",
				ps->tint, clause_name(ps->cl));
		if (!ps->cl->kind->positional) {
			char f[256];

			list_fields(ps->cl->kind, f, sizeof(f));
			dl_fail(ps, line, col, "%s events have no field $%" PRIu64 " (their fields: %s)",
				ps->cl->kind->name, ps->tint, f);
		}
		n = mknode(ps, N_FIELD, line, col);
		n->type = SONDE_DL_ANY;
		n->i = (int64_t)ps->tint;
		if (ps->tint > ps->prog->maxpos)
			ps->prog->maxpos = (unsigned)ps->tint;
		dl_lex(ps);
		return n;
	case T_IDENT: {
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)ps->tlen, ps->tp);
		dl_lex(ps);
		if (ps->t == T_LPAREN && !strcmp(name, "time_select"))
			return time_select_call(ps, line, col);
		if (ps->t == T_LPAREN)
			dl_fail(ps, line, col, "unknown function '%s()' (expressions have no functions but "
				 "time_select(\"START-END\"))", name);
		if (ps->cl->special != CL_EVENT)
			dl_fail(ps, line, col, "field '%s' is not available in %s clauses", name,
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
			dl_fail(ps, line, col,
				"unknown field '%s' for %s events (their fields are $0, $1, $2, ...)", name,
				k->name);
		/* an event's own field of that name wins (none has one) */
		if (!strcmp(name, "pid") || !strcmp(name, "rank")) {
			n = mknode(ps, N_PROC, line, col);
			n->type = SONDE_DL_INT;
			n->i = name[0] == 'p' ? PROC_PID : PROC_RANK;
			return n;
		}
		char f[256];

		list_fields(k, f, sizeof(f));
		dl_fail(ps, line, col, "unknown field '%s' for %s events (their fields: %s; and pid, rank)",
			name, k->name, f);
	}
	case T_AGG:
		dl_fail(ps, line, col, "an aggregation cannot be used in an expression");
	default:
		dl_fail(ps, line, col, "expected an expression, found %s", dl_found(ps));
	}
}

static struct node *unary_expr(struct parser *ps)
{
	unsigned line = ps->tline, col = ps->tcol;

	if (ps->t == T_MINUS || ps->t == T_NOT) {
		int op = ps->t == T_MINUS ? OP_NEG : OP_NOT;

		nest_in(ps);
		dl_lex(ps);
		struct node *a = unary_expr(ps);

		ps->nest--;
		return unary(ps, op, a, line, col);
	}
	if (ps->t == T_PLUS) {
		nest_in(ps);
		dl_lex(ps);
		struct node *n = unary_expr(ps);

		ps->nest--;
		if (n->type == SONDE_DL_STR)
			dl_fail(ps, line, col, "operator + needs an integer operand, not a string");
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
		dl_lex(ps);
		n = binary(ps, op, n, unary_expr(ps), line, col);
	}
}

static struct node *add_expr(struct parser *ps)
{
	struct node *n = mul_expr(ps);

	while (ps->t == T_PLUS || ps->t == T_MINUS) {
		int op = ps->t == T_PLUS ? OP_ADD : OP_SUB;
		unsigned line = ps->tline, col = ps->tcol;

		dl_lex(ps);
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
		dl_lex(ps);
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
			dl_fail(ps, line, col, "'=' assigns; use '==' to compare");
		if (!op)
			return n;
		dl_lex(ps);
		n = binary(ps, op, n, rel_expr(ps), line, col);
	}
}

static struct node *logic(struct parser *ps, int op, struct node *a, struct node *b, unsigned line,
			  unsigned col)
{
	if (a->type == SONDE_DL_STR)
		dl_fail(ps, a->line, a->col, "operator %s needs integer operands; the left one is a string",
			op_name(op));
	if (b->type == SONDE_DL_STR)
		dl_fail(ps, b->line, b->col,
			"operator %s needs integer operands; the right one is a string", op_name(op));
	return binary(ps, op, a, b, line, col);
}

static struct node *and_expr(struct parser *ps)
{
	struct node *n = eq_expr(ps);

	while (ps->t == T_AND) {
		unsigned line = ps->tline, col = ps->tcol;

		dl_lex(ps);
		n = logic(ps, OP_AND, n, eq_expr(ps), line, col);
	}
	return n;
}

static struct node *expr(struct parser *ps)
{
	struct node *n = and_expr(ps);

	while (ps->t == T_OR) {
		unsigned line = ps->tline, col = ps->tcol;

		dl_lex(ps);
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
		dl_fail(ps, 0, 0, "out of memory");
	struct aggvar *v = dl_xalloc(ps, sizeof(*v));

	p->vars[p->nvars++] = v;
	v->name = strndup(name, len);
	if (!v->name)
		dl_fail(ps, 0, 0, "out of memory");
	v->line = line;
	v->col = col;
	return v;
}

static struct aggvar *agg_ref(struct parser *ps, const char *fn, int argno)
{
	if (ps->t != T_AGG)
		dl_fail(ps, ps->tline, ps->tcol, "%s() argument #%d must be an aggregation (@name), found %s",
			fn, argno, dl_found(ps));
	struct aggvar *v = find_var(ps, ps->tp + 1, ps->tlen - 1, ps->tline, ps->tcol);

	dl_lex(ps);
	return v;
}

static struct stmt *new_stmt(struct parser *ps, enum skind kind, unsigned line, unsigned col)
{
	struct clause *cl = ps->cl;

	if (sonde_grow(&cl->stmts, &cl->capstmts, cl->nstmts + 1, sizeof(*cl->stmts), 4))
		dl_fail(ps, 0, 0, "out of memory");
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

	dl_lex(ps);
	if (ps->t == T_LBRACK) {
		dl_lex(ps);
		for (;;) {
			if (nkeys == SONDE_AGG_MAX_KEYS)
				dl_fail(ps, ps->tline, ps->tcol, "too many keys (at most %d)",
					SONDE_AGG_MAX_KEYS);
			keys[nkeys++] = expr(ps);
			if (ps->t == T_RBRACK)
				break;
			dl_expect(ps, T_COMMA, "',' or ']' after a key");
		}
		dl_lex(ps);
	}
	dl_expect(ps, T_ASSIGN, "'=' after the aggregation");
	if (ps->t != T_IDENT)
		dl_fail(ps, ps->tline, ps->tcol,
			"expected an aggregating function (count, sum, min, max, avg, stddev, quantize, "
			"lquantize, llquantize), found %s",
			dl_found(ps));
	unsigned fline = ps->tline, fcol = ps->tcol;
	size_t fi;

	for (fi = 0; fi < sizeof(funcs) / sizeof(funcs[0]); fi++)
		if (dl_tok_is(ps, funcs[fi].name))
			break;
	if (fi == sizeof(funcs) / sizeof(funcs[0]))
		dl_fail(ps, fline, fcol,
			"unknown aggregating function '%.*s' (count, sum, min, max, avg, stddev, "
			"quantize, lquantize, llquantize)",
			(int)ps->tlen, ps->tp);
	const char *fn = funcs[fi].name;

	dl_lex(ps);
	dl_expect(ps, T_LPAREN, "'(' after the function name");
	if (ps->t != T_RPAREN) {
		for (;;) {
			if (nargs == 8)
				dl_fail(ps, ps->tline, ps->tcol, "%s() prototype mismatch: too many arguments",
					fn);
			aline[nargs] = ps->tline;
			acol[nargs] = ps->tcol;
			args[nargs++] = expr(ps);
			if (ps->t == T_RPAREN)
				break;
			dl_expect(ps, T_COMMA, "',' or ')' after an argument");
		}
	}
	dl_lex(ps);
	if ((int)nargs < funcs[fi].minargs || (int)nargs > funcs[fi].maxargs) {
		if (funcs[fi].minargs == funcs[fi].maxargs)
			dl_fail(ps, fline, fcol, "%s() prototype mismatch: %u arg%s passed, %d expected", fn,
				nargs, nargs == 1 ? "" : "s", funcs[fi].minargs);
		dl_fail(ps, fline, fcol, "%s() prototype mismatch: %u arg%s passed, %s %d expected", fn,
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
			dl_fail(ps, aline[0], acol[0], "%s() argument #1 must be of scalar type, not a string",
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
				dl_fail(ps, aline[first_param + i], acol[first_param + i],
					"lquantize() argument #%u must be %sinteger constant", i + 1,
					i == 2 ? "a non-zero positive " : "an ");
			static const char *const names[] = { "factor", "low magnitude", "high magnitude",
							     "linear steps per magnitude" };
			dl_fail(ps, aline[first_param + i], acol[first_param + i],
				"llquantize() argument #%u (%s) must be an integer constant", i + 1,
				names[i]);
		}
		params[nparams++] = a->i;
	}
	if (incr_at && nargs > incr_at) {
		s->incr = args[incr_at];
		if (s->incr->type == SONDE_DL_STR)
			dl_fail(ps, aline[incr_at], acol[incr_at],
				"%s() increment value (argument #%u) must be of scalar type, not a string",
				fn, incr_at + 1);
	}

	char err[256];

	if (!v->agg) {
		v->agg = sonde_agg_create(ps->prog->set, v->name, func, params, nparams, nkeys, err,
					  sizeof(err));
		if (!v->agg)
			dl_fail(ps, fline, fcol, "%s", err);
		v->line = line;
		v->col = col;
		v->nkeys = nkeys;
		for (unsigned k = 0; k < nkeys; k++)
			v->ktype[k] = keys[k]->type;
		return;
	}
	if (sonde_agg_func(v->agg) != func)
		dl_fail(ps, fline, fcol, "aggregation @%s redefined: it is %s() at %u:%u, here %s()",
			v->name, sonde_agg_func_name(sonde_agg_func(v->agg)), v->line, v->col, fn);
	if (v->nkeys != nkeys)
		dl_fail(ps, line, col, "aggregation @%s has %u key%s at %u:%u, %u here", v->name,
			v->nkeys, v->nkeys == 1 ? "" : "s", v->line, v->col, nkeys);
	for (unsigned k = 0; k < nkeys; k++)
		if (v->ktype[k] != SONDE_DL_ANY && keys[k]->type != SONDE_DL_ANY &&
		    v->ktype[k] != keys[k]->type)
			dl_fail(ps, keys[k]->line, keys[k]->col,
				"key #%u of @%s is %s at %u:%u, %s here", k + 1, v->name,
				type_name(v->ktype[k]), v->line, v->col, type_name(keys[k]->type));
	if (sonde_agg_check_match(v->agg, func, params, nparams, err, sizeof(err)))
		dl_fail(ps, fline, fcol, "%s", err);
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
		if (dl_tok_is(ps, acts[ai].name))
			break;
	if (ai == sizeof(acts) / sizeof(acts[0]))
		dl_fail(ps, line, col,
			"unknown action '%.*s' (expected @name = func(...), printa, normalize, "
			"denormalize, trunc or clear)",
			(int)ps->tlen, ps->tp);
	const char *fn = acts[ai].name;

	if (ps->cl->special == CL_EVENT)
		dl_fail(ps, line, col, "%s() may only be used in BEGIN and END clauses", fn);
	dl_lex(ps);
	dl_expect(ps, T_LPAREN, "'(' after the action name");

	struct stmt *s = new_stmt(ps, acts[ai].kind, line, col);

	switch (acts[ai].kind) {
	case S_PRINTA:
		if (ps->t == T_STR)
			dl_fail(ps, ps->tline, ps->tcol, "printa() with a format string is not supported");
		for (;;) {
			struct aggvar **vv = realloc(s->vars, (s->nvars + 1) * sizeof(*vv));

			if (!vv)
				dl_fail(ps, 0, 0, "out of memory");
			s->vars = vv;
			s->vars[s->nvars] = agg_ref(ps, fn, (int)s->nvars + 1);
			s->nvars++;
			if (ps->t != T_COMMA)
				break;
			dl_lex(ps);
		}
		break;
	case S_NORMALIZE:
	case S_TRUNC:
		s->var = agg_ref(ps, fn, 1);
		if (acts[ai].kind == S_TRUNC && ps->t != T_COMMA)
			break;
		dl_expect(ps, T_COMMA, acts[ai].kind == S_TRUNC ? "',' or ')'" : "',' and a normalization factor");
		{
			unsigned aline = ps->tline, acol = ps->tcol;

			s->arg = expr(ps);
			if (s->arg->type == SONDE_DL_STR)
				dl_fail(ps, aline, acol, "%s() argument #2 must be an integer, not a string", fn);
			if (acts[ai].kind == S_NORMALIZE && s->arg->kind == N_INT && s->arg->i == 0)
				dl_fail(ps, aline, acol, "normalize() needs a non-zero normalization factor");
		}
		break;
	default:
		s->var = agg_ref(ps, fn, 1);
		break;
	}
	dl_expect(ps, T_RPAREN, "')'");
}

static void statement(struct parser *ps)
{
	if (ps->t == T_AGG)
		agg_stmt(ps);
	else if (ps->t == T_IDENT)
		action_stmt(ps);
	else
		dl_fail(ps, ps->tline, ps->tcol,
			"expected a statement (@name = func(...); or an action), found %s", dl_found(ps));
	if (ps->t == T_RBRACE)
		return;
	dl_expect(ps, T_SEMI, "';' or '}' after the statement");
}

static void clause(struct parser *ps, const struct sonde_dl_kind *const *kinds, size_t nkinds)
{
	struct sonde_dl_prog *p = ps->prog;
	unsigned line = ps->tline, col = ps->tcol;
	struct clause cl = { 0 };

	if (ps->t != T_IDENT)
		dl_fail(ps, line, col, "expected an event kind (BEGIN, END, %s), found %s",
			nkinds ? kinds[0]->name : "stdin", dl_found(ps));
	if (dl_tok_is(ps, "BEGIN")) {
		cl.special = CL_BEGIN;
	} else if (dl_tok_is(ps, "END")) {
		cl.special = CL_END;
	} else {
		for (size_t i = 0; i < nkinds && !cl.kind; i++)
			if (dl_tok_is(ps, kinds[i]->name))
				cl.kind = kinds[i];
		if (!cl.kind) {
			char have[200];
			size_t n = 0;

			have[0] = '\0';
			for (size_t i = 0; i < nkinds; i++)
				n += (size_t)snprintf(have + n, sizeof(have) - n, ", %s", kinds[i]->name);
			if (dl_tok_is(ps, "stdin"))
				dl_fail(ps, line, col,
					"stdin events come only without an experiment (this input has "
					"BEGIN, END%s)",
					have);
			for (int i = 1; i <= SONDE_KIND_MAX; i++) {
				/* profile (the clock profile's module), then the
				 * traced kinds */
				const struct sonde_dl_kind *known = sonde_dl_kind_of(i);

				if (known && dl_tok_is(ps, known->name))
					dl_fail(ps, line, col,
						"%s events need an experiment that has them (this input "
						"has BEGIN, END%s)",
						known->name, have);
			}
			dl_fail(ps, line, col, "unknown event kind '%.*s' (this input has BEGIN, END%s)",
				(int)ps->tlen, ps->tp, have);
		}
	}
	if (sonde_grow(&p->clauses, &p->capclauses, p->nclauses + 1, sizeof(*p->clauses), 4))
		dl_fail(ps, 0, 0, "out of memory");
	p->clauses[p->nclauses] = cl;
	ps->cl = &p->clauses[p->nclauses++];
	dl_lex(ps);
	if (ps->t == T_SLASH) {
		dl_lex(ps);
		unsigned pl = ps->tline, pc = ps->tcol;

		ps->cl->pred = expr(ps);
		if (ps->cl->pred->type == SONDE_DL_STR)
			dl_fail(ps, pl, pc, "a predicate must be an integer expression, not a string");
		if (ps->t != T_SLASH)
			dl_fail(ps, ps->tline, ps->tcol, "expected '/' to end the predicate, found %s",
				dl_found(ps));
		dl_lex(ps);
	}
	dl_expect(ps, T_LBRACE, "'{' to start the clause's statements");
	while (ps->t != T_RBRACE) {
		if (ps->t == T_EOF)
			dl_fail(ps, ps->tline, ps->tcol, "expected '}' to end the clause begun at %u:%u",
				line, col);
		if (ps->t == T_SEMI) {
			dl_lex(ps);
			continue;
		}
		statement(ps);
	}
	dl_lex(ps);
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

	dl_lex(ps);
	if (ps->t == T_EOF)
		dl_fail(ps, 1, 1, "the program is empty (expected clauses like: stdin { @ = count(); })");
	while (ps->t != T_EOF)
		clause(ps, kinds, nkinds);

	/* every aggregation referenced must be assigned somewhere */
	for (size_t i = 0; i < p->nvars; i++)
		if (!p->vars[i]->agg)
			dl_fail(ps, p->vars[i]->line, p->vars[i]->col,
				"aggregation @%s is used but never assigned (@%s = func(...))",
				p->vars[i]->name, p->vars[i]->name);
	for (size_t c = 0; c < p->nclauses; c++)
		for (size_t j = 0; j < p->clauses[c].nstmts; j++) {
			struct stmt *s = &p->clauses[c].stmts[j];

			for (unsigned k = 1; k < s->nvars; k++)
				if (s->vars[k]->nkeys != s->vars[0]->nkeys)
					dl_fail(ps, s->line, s->col,
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
			dl_fail(ps, 0, 0, "out of memory");
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
	p->proc[PROC_PID] = p->proc[PROC_RANK] = -1;
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

bool sonde_dl_uses_field(const struct sonde_dl_prog *p, const struct sonde_dl_kind *kind, size_t i)
{
	const struct kindinfo *ki = dl_kind_info(p, kind);

	return ki && i < 64 && (ki->used >> i & 1);
}
