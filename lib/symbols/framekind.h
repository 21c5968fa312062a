/*
 * framekind: how the symbol layer names the frames of a kind other than
 * native (enum sonde_frame_kind of sonde/format.h): one module per kind,
 * in its own file (kallsyms.c: kernel frames; javamethods.c: Java
 * frames), and one row each in the table of framekind.c.  Private to
 * lib/symbols/; the contract with the rest of lib/ is symbols.h
 * (sonde_syms_frame, sonde_syms_frame_srcpos, sonde_syms_frame_place,
 * sonde_frame_kind_info), which dispatch on a frame's kind through the
 * table; native frames never reach it (their path is the ELF/DWARF one of
 * symbols.c).
 *
 * A module reads what names its frames from the experiment directory
 * (sonde_exp_info(sonde_syms_exp(s))->dir) at the first frame of its kind,
 * as state of its own in the handle (sonde_syms_kind_state), and makes
 * its functions with sonde_syms_kind_func, in pseudo objects it owns in
 * that state.  Like every lookup it never fails: a frame it cannot name is
 * a synthesized function named after the frame ("<kernel>@0x...").
 */
#ifndef SONDE_SYMBOLS_FRAMEKIND_H
#define SONDE_SYMBOLS_FRAMEKIND_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/symbols.h"

struct sonde_frame_module {
	struct sonde_frame_kind_info info; /* its words (symbols.h) */
	/* Reads its state at the first frame of the kind: NULL when there
	 * is nothing to read (then func still names frames, as addresses);
	 * problems go to sonde_syms_problem.  close frees it.  Two kinds
	 * with the same open share one state (Java's interpreted and
	 * compiled frames: one method table). */
	void *(*open)(struct sonde_syms *s);
	void (*close)(void *state);
	/* The function of frame f (never NULL: a synthesized one when f is
	 * not known).  The handle caches the answer per (pc, kind, exact),
	 * so func is called once per distinct frame; it returns the same
	 * function for frames of one function. */
	const struct sonde_func *(*func)(struct sonde_syms *s, void *state, const struct sonde_frame *f);
	/* The source position of frame f in function fn (made by func):
	 * its levels in *out (owned by the state), 0 when unknown.  NULL:
	 * never known. */
	int (*srcpos)(struct sonde_syms *s, void *state, const struct sonde_frame *f, const struct sonde_func *fn,
		      const struct sonde_srcframe **out);
	/* Where f is in fn for -pcs (symbols.h, sonde_syms_frame_place);
	 * NULL: at its address, like a native frame (pc, or pc - 1 for a
	 * return address, less the object's base). */
	bool (*place)(const struct sonde_frame *f, const struct sonde_func *fn, uint64_t *at, const char **key);
};

/* The module of kind (framekind.c), NULL for native and for a kind that
 * has none (named "<kind N>@0x..."). */
const struct sonde_frame_module *sonde_frame_module_of(unsigned kind);

/* What a module asks of the handle (symbols.c). */

/* kind's state, opened at the first call (NULL: open gave none). */
void *sonde_syms_kind_state(struct sonde_syms *s, const struct sonde_frame_module *k);

/* A new function of a frame kind: the names are copied (name_long and
 * name_short NULL: the mangled name), object is the module's (NULL: in no
 * object, shown as "<unknown>"), [lo, hi) its extent as
 * sonde_func says.  Never NULL: the "<out of memory>" function when
 * memory runs out.  sonde_syms_named() finds it by its mangled name in
 * its object. */
const struct sonde_func *sonde_syms_kind_func(struct sonde_syms *s, uint8_t kind, const struct sonde_object *o,
					      uint64_t lo, uint64_t hi, const char *mangled, const char *name_long,
					      const char *name_short, bool synthesized);

/* A problem of the handle (sonde_syms_problems), each text once. */
void sonde_syms_problem(struct sonde_syms *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* (The handle's experiment: sonde_syms_exp() of srcinfo.h.) */

#endif
