/*
 * dlang_internal: what the parts of the sonde agg language share, and
 * nobody else may use: the compiled program (the tree the parser builds
 * and the evaluator walks), the parser's state (which the lexer advances),
 * and the few calls that cross between the parts.  Private to
 * lib/agg/dlang_*.c; the contract is dlang.h.
 *
 *	dlang_lex.c	source text -> tokens
 *	dlang_parse.c	tokens -> a checked, constant-folded program
 *	dlang_eval.c	the program run on one event, BEGIN and END
 *	dlang_events.c	the event kinds and the sources that feed them
 *
 * The parser and the evaluator both recurse, so both are bounded
 * (MAX_NEST): the parser's nesting of parentheses and unary operators, and
 * the depth of the tree it builds (a chain of 50,000 '+' is parsed by a
 * loop but makes a tree 50,000 deep, which the evaluator would recurse
 * down).  Past the bound the program is refused with an error at the
 * place; before it, neither overflows the stack.
 */
#ifndef SONDE_AGG_DLANG_INTERNAL_H
#define SONDE_AGG_DLANG_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agg/agg.h"
#include "agg/dlang.h"

#define MAX_KINDS 16
#define MAX_POSITIONAL 1000

/* ---- program representation --------------------------------------------------- */

/* N_PROC: a variable of the process whose events run (PROC_PID,
 * PROC_RANK), the same for all of its events. */
enum nkind { N_INT, N_STR, N_FIELD, N_UNARY, N_BINARY, N_PROC };
enum { PROC_PID, PROC_RANK };

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
	int64_t i;	/* N_INT value, N_FIELD index, N_PROC variable */
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

	/* the process whose events run now (sonde_dl_set_process) */
	int64_t proc[2];
};

/* The program's clauses of kind k, NULL when the input has no such kind.
 * Inline: the evaluator and the sources look it up per event. */
static inline const struct kindinfo *dl_kind_info(const struct sonde_dl_prog *p, const struct sonde_dl_kind *k)
{
	for (size_t i = 0; i < p->nkinds; i++)
		if (p->kinds[i].kind == k)
			return &p->kinds[i];
	return NULL;
}

/* ---- the parser's state, and the lexer (dlang_lex.c) -------------------------- */

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

enum tok {
	T_EOF, T_IDENT, T_INT, T_STR, T_DOLLAR, T_AGG,
	T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_COMMA, T_SEMI,
	T_SLASH, T_ASSIGN, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_NOT,
	T_PLUS, T_MINUS, T_STAR, T_PCT,
};

/* A compile error at line:col: fills the caller's sonde_dl_error and
 * longjmps back to sonde_dl_compile(). */
void dl_fail(struct parser *ps, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));
/* calloc, or dl_fail "out of memory". */
void *dl_xalloc(struct parser *ps, size_t n);
/* Reads the next token into ps (t, tp, tlen, tline, tcol; tint, tstr). */
void dl_lex(struct parser *ps);
/* The current token, for messages: "'foo'", "the end of the program". */
const char *dl_found(struct parser *ps);
/* Whether the current token is the identifier ident. */
bool dl_tok_is(struct parser *ps, const char *ident);
/* Reads past a token of type t, or fails "expected WHAT, found ...". */
void dl_expect(struct parser *ps, int t, const char *what);

/* ---- the evaluator (dlang_eval.c) ----------------------------------------------- */

/* One operator of enum op on two integers, wrapping; the parser folds
 * constants with it, so a folded expression gives what evaluating it
 * would. */
int64_t dl_arith(int op, int64_t x, int64_t y);

/* An event being evaluated: its field values. */
struct evctx {
	struct sonde_dl_prog *p;
	struct sonde_dl_val *vals;
	size_t nvals;
};

/* Runs one clause: 0, 1 (event skipped, problem recorded), -1 (memory).
 * The sources call it directly when a kind has one clause. */
int dl_run_clause(struct evctx *c, const struct clause *cl, FILE *out);

#endif
