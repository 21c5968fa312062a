/*
 * srcinfo: source positions of code addresses from DWARF (elfutils' libdw),
 * inlined functions included.  Internal to lib/: lib/symbols/symbols.c opens one
 * per load-object file it has verified, and answers through
 * sonde_syms_srcpos() (symbols.h).
 *
 * A position is a chain of levels, innermost first.  Level 0 is the code at
 * the address: the innermost function there (an inlined function when the
 * address is in inlined code) and the line table's file and line for the
 * address.  Each further level is the function that the level below was
 * inlined into, at the call site (DW_AT_call_file, DW_AT_call_line) of the
 * inlined instance.  The last level is the out-of-line function (the
 * DW_TAG_subprogram).  So an address in `sq` inlined into `norm` at
 * vec.c:12, itself inlined into `main` at main.c:40, gives
 *
 *	0  sq    vec.c:3      (the line of the code)
 *	1  norm  vec.c:12     (where sq was inlined)
 *	2  main  main.c:40    (where norm was inlined)
 *
 * Names are the linkage (mangled) names where DWARF has one, else DW_AT_name:
 * the names symbol tables use, so an inlined instance and the out-of-line
 * copy of a function can be matched by name.
 *
 * File names are as the compiler recorded them, made absolute with the
 * compilation directory when they are relative.
 */
#ifndef SONDE_SRCINFO_H
#define SONDE_SRCINFO_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"

struct srcobj;

/* Opens the debug information of the ELF file at path (reported at its own
 * addresses, bias 0), finding separate debug files with cb.  Returns NULL
 * only when memory runs out or the file cannot be read as ELF; an object
 * without DWARF is returned and says so with srcobj_has_lines(). */
struct srcobj *srcobj_open(const char *path, const Dwfl_Callbacks *cb);
void srcobj_close(struct srcobj *so);

/* Whether the file (or its separate debug file) has a line table. */
bool srcobj_has_lines(struct srcobj *so);

/* The name of the Fortran procedure whose code starts at addr, as the
 * language writes it: "physics::relax" (a module procedure),
 * "physics::relax::sweep" (an internal procedure under its host), "sim"
 * (the main program by its name); NULL when addr starts no procedure of
 * a Fortran compile unit.  Owned by so. */
const char *srcobj_fortran_name(struct srcobj *so, uint64_t addr);

/* The position of address addr (the object's own address): the number of
 * levels, stored in *out (owned by so, valid until srcobj_close); 0 when
 * no line information covers addr. */
int srcobj_lookup(struct srcobj *so, uint64_t addr, const struct sonde_srcframe **out);

/* The functions defined in source file `file` (as srcobj_lookup names
 * files), sorted by decl_line: *out (owned by so, valid until the next call
 * or close) and their number. */
size_t srcobj_file_funcs(struct srcobj *so, const char *file, const struct sonde_srcfunc **out);

/* The bounds [*lo, *hi) of the code around addr that one call-frame
 * description covers (.eh_frame, else .debug_frame): a function's extent
 * where no symbol gives it (stripped code).  False when none does. */
bool srcobj_code_range(struct srcobj *so, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* ---- call sites (DW_TAG_call_site, DWARF 4's DW_TAG_GNU_call_site) ----------------
 *
 * What the compiler says about each call instruction, read per CU at the
 * first question about an address in it: lib/symbols/tailcall.c restores
 * the frames that tail calls (jumps) left off a stack with them. */
struct srcobj_callsite {
	uint64_t ret;	     /* the return address (object's own); 0 when DWARF has none
			      * (clang's tail calls give DW_AT_call_pc instead) */
	uint64_t func;	     /* entry of the out-of-line function whose code holds it */
	uint64_t target;     /* entry of the function called, when DWARF gives one; else 0 */
	const char *name;    /* that function's linkage name or name; NULL: unknown (indirect) */
	bool tail;	     /* DW_AT_call_tail_call / DW_AT_GNU_tail_call: a jump */
	uint32_t resolved;   /* the caller's memo (lib/symbols/tailcall.c): 0 not yet */
};

/* The call site whose return address is ret (the object's own), NULL when
 * DWARF has none there; valid until the next call-site question. */
struct srcobj_callsite *srcobj_callsite_at(struct srcobj *so, uint64_t ret);

/* The tail calls of the function whose entry is func: their number, and
 * the first max of them in idx, for srcobj_callsite (indices stay valid
 * while the sites move: reading another CU reallocates them). */
size_t srcobj_tailcalls(struct srcobj *so, uint64_t func, uint32_t *idx, size_t max);
struct srcobj_callsite *srcobj_callsite(struct srcobj *so, uint32_t idx);

/* The DWARF (with a line table) of o's file as the handle opened it, or
 * NULL (lib/symbols/symbols.c, for lib/symbols/tailcall.c). */
struct srcobj *sonde_syms_srcobj(struct sonde_syms *s, const struct sonde_object *o);
/* The functions of the symbols named name exactly (no PLT entries) in all
 * of the handle's objects, each read here if no address read it before:
 * their number, the first max in out.  A binary search per object
 * (sonde_syms_find demangles every symbol). */
size_t sonde_syms_symbol_any(struct sonde_syms *s, const char *name, const struct sonde_func **out,
			     size_t max);
/* The same in o only: the function of its symbol named name, or NULL
 * (unlike sonde_syms_named, which makes an inlined-only function). */
const struct sonde_func *sonde_syms_symbol_in(struct sonde_syms *s, const struct sonde_object *o,
					      const char *name);
/* The handle's slot for lib/symbols/tailcall.c's answers (freed with the
 * handle by tailmemo_free). */
struct tailmemo;
struct tailmemo **sonde_syms_tailmemo(struct sonde_syms *s);
void tailmemo_free(struct tailmemo *m);
/* The experiment of the handle. */
const struct sonde_exp *sonde_syms_exp(const struct sonde_syms *s);

#endif
