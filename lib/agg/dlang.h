/*
 * dlang: the small D-like language of `sonde agg` (doc/sonde-agg.md).
 *
 *	stdin /$2 > 0/ { @[$1] = sum($2); @lat = quantize($2); }
 *	END { normalize(@, 10); printa(@); }
 *
 * A program is clauses `KIND [/predicate/] { statements }`.  KIND is an
 * event kind (`stdin`, `profile`, ...), `BEGIN` (before the first event)
 * or `END` (after the last).  Statements are `@name[key, ...] = func(args);`
 * (count, sum, min, max, avg, stddev, quantize, lquantize, llquantize; `@`
 * alone is the anonymous aggregation) and, in BEGIN and END,
 * `printa(@a[, @b...])`, `normalize(@a, n)`, `denormalize(@a)`,
 * `trunc(@a[, n])` and `clear(@a)`.  Expressions: integers (decimal, 0x),
 * "strings", fields (`$1`, `$0` the whole line, or a kind's named fields),
 * `( )`, unary `! -`, `* / %`, `+ -`, `< <= > >=`, `== !=`, `&&`, `||`.
 * Comments: slash-star, //, and # at the start of a line.
 *
 * Types are checked when the program is compiled; an error names the line
 * and column and what was expected.  stdin fields are typed at run time: a
 * field that is a decimal 64-bit integer is an integer, otherwise a
 * string.  Integer arithmetic wraps (two's complement).  An event whose
 * evaluation fails (a string where an integer is needed, division by zero)
 * is skipped and counted; sonde_dl_problems() reports them.
 *
 * Ownership and threads: a program owns its aggregation set (and every
 * string it interns); it is not thread-safe.  Nothing here exits; only the
 * END output is printed (to the FILE given to sonde_dl_end()).
 */
#ifndef SONDE_DLANG_H
#define SONDE_DLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agg/agg.h"
#include "reader/experiment.h"

/* ---- event kinds and their fields ------------------------------------------- */

enum sonde_dl_type {
	SONDE_DL_INT = 1,
	SONDE_DL_STR,
	SONDE_DL_ANY, /* integer or string, decided per event (stdin fields) */
};

struct sonde_dl_field {
	const char *name;
	enum sonde_dl_type type;
	const char *doc;
};

struct sonde_dl_prog;

/*
 * Names a frame for the profile fields func and caller (and object).
 * frame is a frame of a stack (reader/experiment.h, struct sonde_frame: of
 * any kind; for a native or kernel frame, exact says whether pc is the
 * address of an instruction (leaf, signal frame) or a return address, then
 * pc - 1 is the address to look up).  time_ns is the event's: which object
 * held an address reused after dlclose (sonde_exp_find_object); names are
 * cached per stack and mapping epoch (sonde_exp_map_epoch), so it is a
 * time of that epoch.  Returns a NUL-terminated name that needs to stay
 * valid only until the next call (it is interned at once); NULL means
 * "unknown".  callee, when not NULL, is the frame below: frame is then a
 * caller's and the name wanted is the function that called the callee's,
 * which is not frame's when tail calls left frames off between them (sonde
 * print restores those frames: the innermost of them).  object, when not
 * NULL, gets the name of the load object of frame's function (valid as the
 * name is; NULL: unknown): asked only for frames of other kinds than
 * native, whose objects are the symbol layer's (symbols.h).
 */
typedef const char *(*sonde_dl_name_fn)(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *frame,
					uint64_t time_ns, const struct sonde_frame *callee, const char **object);

struct sonde_dl_kind {
	const char *name;
	bool positional; /* fields are $0, $1, ... (type SONDE_DL_ANY) */
	const struct sonde_dl_field *fields;
	size_t nfields;
	const char *doc;
	/* A data kind's (agg/kind.h): feeds exp's events of the kind to p,
	 * in time order; the number fed, or -1 with a message in err. */
	int64_t (*run)(struct sonde_dl_prog *p, const struct sonde_exp *exp, sonde_dl_name_fn name_of_pc, void *ctx,
		       char *err, size_t errlen);
};

/* The kinds this sonde knows: stdin (lines of text), profile (clock
 * profile samples of an experiment: the clock profile's kind, whose
 * module, lib/kinds/profile.c, points here), and the traced events of an
 * experiment, one kind per traced data kind (sonde_dl_kind_of below:
 * sync (waits), heap (allocations and frees), io (I/O calls)).  Field
 * indexes below are positions in kind->fields. */
extern const struct sonde_dl_kind sonde_dl_kind_stdin;
extern const struct sonde_dl_kind sonde_dl_kind_profile;

enum sonde_dl_profile_field {
	SONDE_DL_P_THREAD, /* tid */
	SONDE_DL_P_CPU,	   /* CPU, -1 when unknown */
	SONDE_DL_P_TIME,   /* ns since the experiment start */
	SONDE_DL_P_WEIGHT, /* ns of CPU time the sample stands for (off-CPU: blocked time) */
	SONDE_DL_P_OBJECT, /* load object (basename) of the leaf frame */
	SONDE_DL_P_FUNC,   /* function of the leaf frame */
	SONDE_DL_P_CALLER, /* function of the frame above it */
	SONDE_DL_P_PC,	   /* leaf address */
	SONDE_DL_P_DEPTH,  /* frames in the call stack */
	SONDE_DL_P_STATE,  /* the state's agg word, sonde/states.h */
	SONDE_DL_P_USER,   /* ns of User CPU (cpu samples) */
	SONDE_DL_P_SYSTEM, /* ns of System CPU (cpu samples) */
	SONDE_DL_P_WAITCPU, /* ns of run-queue delay before it (cpu samples) */
	SONDE_DL_P_SYSCALL, /* off-CPU: the system call number, -1 none */
	SONDE_DL_P_OMPSTATE, /* the OpenMP state: work, barrier, ..., none */
	SONDE_DL_P_JAVAFRAME, /* how the top Java frame ran: interpreted, compiled, ..., none */
	SONDE_DL_P_NFIELDS
};

/* ---- compiling -------------------------------------------------------------- */

struct sonde_dl_prog;

struct sonde_dl_error {
	unsigned line, col; /* 1-based; 0 when the error has no place */
	char msg[512];
};

/*
 * Compiles src for an input that holds the given kinds (stdin: just
 * &sonde_dl_kind_stdin; an experiment: the kinds it has data for).
 * Clauses of a kind this sonde knows but the input lacks, and of unknown
 * kinds, are errors.  Returns NULL with *e filled when src is not a valid
 * program (or memory runs out).  opts: sort options for every printa and
 * the end-of-run output (copied; NULL for the default).
 */
struct sonde_dl_prog *sonde_dl_compile(const char *src, const struct sonde_dl_kind *const *kinds,
				       size_t nkinds, const struct sonde_agg_opts *opts,
				       struct sonde_dl_error *e);

void sonde_dl_free(struct sonde_dl_prog *p);

/* Whether the program's clauses for kind use field i (a source need not
 * compute fields nobody uses). */
bool sonde_dl_uses_field(const struct sonde_dl_prog *p, const struct sonde_dl_kind *kind,
			 size_t i);

/* ---- running ------------------------------------------------------------------ */

/*
 * One field value of an event.  A source fills an array of them, one per
 * field of the kind (positional kinds: $0, $1, ...).  SONDE_DL_V_TEXT is
 * text not yet classified (stdin): the evaluator decides at first use
 * whether it is an integer and rewrites the value.  A string already
 * interned in the program's aggregation set should be SONDE_DL_V_ISTR,
 * which saves interning it again for every key.
 */
enum sonde_dl_vtype {
	SONDE_DL_V_INT = 1,
	SONDE_DL_V_STR,	 /* s, len (not necessarily NUL-terminated) */
	SONDE_DL_V_ISTR, /* s interned in the program's set, len */
	SONDE_DL_V_TEXT, /* s, len: integer or string, not decided yet */
	SONDE_DL_V_TINT, /* TEXT found to be the integer i (s, len kept) */
};

struct sonde_dl_val {
	uint8_t type; /* enum sonde_dl_vtype */
	uint32_t len;
	int64_t i;
	const char *s;
};

/*
 * The process whose events the sources feed next: the values of the
 * variables pid and rank (-1: not an MPI rank) in the clauses of every
 * kind but stdin.  Both -1 until set.
 */
void sonde_dl_set_process(struct sonde_dl_prog *p, int64_t pid, int64_t rank);

/* Runs the BEGIN clauses (printa output to out).  0, or -1 with a message
 * in err (out of memory). */
int sonde_dl_begin(struct sonde_dl_prog *p, FILE *out, char *err, size_t errlen);

/*
 * Runs the clauses of kind (in program order) on one event whose fields
 * are vals[0 .. nvals-1] (missing positional fields are empty strings).
 * ordinal numbers the event in problem reports (stdin: the line number).
 * 0, or -1 when memory runs out (the event may be partly applied).
 */
int sonde_dl_event(struct sonde_dl_prog *p, const struct sonde_dl_kind *kind,
		   struct sonde_dl_val *vals, size_t nvals, uint64_t ordinal);

/* Runs the END clauses, then prints what dtrace prints at exit: "\n" and
 * every aggregation no printa() printed.  0, or -1 (out of memory). */
int sonde_dl_end(struct sonde_dl_prog *p, FILE *out, char *err, size_t errlen);

/*
 * Events skipped because their evaluation failed: their number, and a
 * one-line summary in buf ("3 events skipped: line 7: sum() needs an
 * integer; $2 is 'abc'") when there were any.
 */
uint64_t sonde_dl_problems(const struct sonde_dl_prog *p, char *buf, size_t len);

/* ---- event sources ---------------------------------------------------------- */

/*
 * Feeds the lines read from fd to the program as `stdin` events ($0 the
 * line without its newline, $1... its fields split at blanks).  Reads in
 * large blocks; a line may be of any length.  Returns the number of lines,
 * or -1 with a message in err (read error, out of memory).
 */
int64_t sonde_dl_run_stdin(struct sonde_dl_prog *p, int fd, char *err, size_t errlen);


/* The stand-in namer until symbols are available: "object+0xoffset" of
 * the looked-up address (pc, or pc - 1 for a return address), as
 * `sonde print -dump profile` names frames; "0x..." outside every object;
 * a frame of another kind "KIND@0x..." (its kind's -dump word, "kernel",
 * or "kind N"), in no object.  Not thread-safe (one static buffer). */
const char *sonde_dl_pc_name_fallback(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *frame,
				      uint64_t time_ns, const struct sonde_frame *callee, const char **object);

/*
 * Feeds every profile sample of exp to the program as a `profile` event.
 * Names come from name_of_pc(ctx, ...) (sonde_dl_pc_name_fallback when
 * NULL); they are computed once per distinct stack, not per sample, and
 * only when the program uses func, caller or object.  A sample whose stack
 * is missing has func, caller and object "<unknown>"; the caller of a
 * one-frame stack is "<none>".  Returns the number of samples, or -1 with
 * a message in err (out of memory).
 */
int64_t sonde_dl_run_profile(struct sonde_dl_prog *p, const struct sonde_exp *exp,
			     sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen);

/*
 * agg's part of each data kind (sonde/kinds.h): its event kind (name and
 * fields) and how its events are fed, both by kind id; the clock
 * profile's (id SONDE_KIND_PROFILE) is sonde_dl_kind_profile, fed by
 * sonde_dl_run_profile.
 *
 * sonde_dl_kind_of: the event kind of data kind id, NULL when agg has none.
 * sonde_dl_run_kind: feeds the traced events of kind id of exp (in time
 * order) to the program, the way sonde_dl_run_profile does: names from
 * name_of_pc, once per distinct stack and only when func or caller is
 * used.  Returns the number of events fed (0 when the program has no
 * clause of the kind, exp none of its events or agg no event kind for
 * it), or -1 with a message in err (out of memory).
 */
const struct sonde_dl_kind *sonde_dl_kind_of(int kind);
int64_t sonde_dl_run_kind(struct sonde_dl_prog *p, int kind, const struct sonde_exp *exp,
			  sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen);

#endif
