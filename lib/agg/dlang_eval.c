/*
 * dlang_eval: the evaluator of the sonde agg language: it walks the tree
 * the parser made (dlang_parse.c) on one event's field values and updates
 * the aggregations, and runs BEGIN and END.  Apart from the parser because
 * it is the per-event path: an event whose evaluation fails (a string
 * where an integer is needed, division by zero) is skipped and counted,
 * never an error of the program.  Its arithmetic (dl_arith) is the
 * parser's constant folding too.
 */
#include "agg/dlang_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arithmetic ------------------------------------------------------------------ */

static int64_t sdiv64(int64_t a, int64_t b)
{
	return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

static int64_t smod64(int64_t a, int64_t b)
{
	return b == -1 ? 0 : a % b;
}

int64_t dl_arith(int op, int64_t x, int64_t y)
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

/* ---- evaluation ------------------------------------------------------------------------ */

struct dv {
	uint8_t t; /* SONDE_DL_V_INT (s may hold its text) or SONDE_DL_V_STR / ISTR */
	uint32_t len;
	int64_t i;
	const char *s;
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
	case N_PROC:
		out->t = SONDE_DL_V_INT;
		out->i = c->p->proc[n->i];
		out->s = NULL;
		out->len = 0;
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
		out->i = dl_arith(n->op, r, 0);
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
	out->i = dl_arith(n->op, x, y);
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
int dl_run_clause(struct evctx *c, const struct clause *cl, FILE *out)
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
	const struct kindinfo *ki = dl_kind_info(p, kind);
	struct evctx c = { p, vals, nvals };

	if (!ki)
		return 0;
	p->cur_kind = kind->name;
	p->cur_ordinal = ordinal;
	for (size_t i = 0; i < ki->nclauses; i++) {
		int r = dl_run_clause(&c, &p->clauses[ki->clauses[i]], NULL);

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
		if (dl_run_clause(&c, &p->clauses[i], out) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

void sonde_dl_set_process(struct sonde_dl_prog *p, int64_t pid, int64_t rank)
{
	p->proc[PROC_PID] = pid;
	p->proc[PROC_RANK] = rank;
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
