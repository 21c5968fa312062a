/*
 * symbols: function names for the addresses of an experiment, read with
 * elfutils from the load objects that map.xml lists.
 *
 *	struct sonde_syms *s = sonde_syms_open(exp);
 *	const struct sonde_func *f = sonde_syms_frame(s, &stack->frame[k], sample_time);
 *	printf("%s\n", f->name_short);
 *	...
 *	sonde_syms_close(s);
 *
 * A frame is named after its kind (reader/experiment.h, struct
 * sonde_frame): a native frame by the ELF and DWARF of the load objects
 * (sonde_syms_lookup and everything below it, which take native
 * addresses); a kernel frame by the experiment's kallsyms file, a Java
 * frame by its method table (sonde_syms_frame and its siblings, "Frames of
 * every kind" below).
 *
 * Where the names come from, per load object:
 *
 *   - the object's file (map.xml's path; for the vDSO the copy the
 *     collector saved in the experiment, object->copy), which must still
 *     have the build id map.xml recorded (without one, the end of its
 *     segments must still be object->hi - object->base);
 *   - its .symtab, else the .symtab of its separate debug file, else its
 *     .dynsym (elfutils' choice, which also reads MiniDebugInfo).  The debug
 *     file is found as elfutils finds it: by build id in
 *     ROOT/.build-id/xx/rest.debug, then by .gnu_debuglink in the object's
 *     directory, in its .debug/ and in ROOT/<its directory>/, ROOT being
 *     /usr/lib/debug, or $SONDE_DEBUG_ROOT when set (read at open); and, as
 *     elfutils does, from debuginfod servers when $DEBUGINFOD_URLS is set;
 *   - PLT entries (.plt, .plt.sec, .plt.got), named "puts@plt" after the
 *     relocation of the GOT slot they jump through (x86-64); AArch64 by
 *     entry index in .plt; none on other machines;
 *   - function symbols only (STT_FUNC, STT_GNU_IFUNC).  Of several symbols
 *     at one address the best names the function: global over weak over
 *     local, sized over unsized, fewer leading underscores, shorter, then
 *     alphabetical.  Its size is the largest of theirs; an unsized symbol
 *     reaches to the next symbol (at most to the end of its section).
 *
 * Synthesized functions (synthesized = true, mangled = name_long =
 * name_short):
 *
 *   - an address in an object, but in no symbol: one function per gap
 *     between symbols, as gprofng does, named after the gap's first address
 *     "<static>@0x1c2 (libfoo.so)" (the object's own address, pc - base, and
 *     the object's name); lo/hi span the gap, the first and last gaps
 *     bounded by the file's segments (an address past them widens the last
 *     gap's hi).  Stable: it depends only on the symbol table.
 *   - an address in an object whose symbols cannot be used (file missing,
 *     build id differs, not ELF, no function symbols: stripped without a
 *     debug file, where only PLT entries keep their names): one function
 *     per address, "<static>@0x1c2 (libfoo.so)" with lo = that address,
 *     hi = lo + 1.  One problem says why (below); a file with no function
 *     symbols is listed apart (sonde_syms_unnamed()).
 *   - an address in no object: one function per address,
 *     "<unknown>@0x7f0012345678", object NULL, lo = the address, hi = lo + 1.
 *
 * Dynamic functions (JIT code): an address in no object that an entry of
 * the experiment's jit.map holds (lib/symbols/dynfunc.h) is in the function that
 * entry names (mangled = the name as written, demangled like a symbol),
 * object = the "<JIT>" pseudo object (base 0, owned by the handle), lo/hi
 * the entry's run-time range, synthesized false.  jit.map is read at the
 * first lookup of an address in no object, or at the first find.
 *
 * The address of a per-address function is the address looked up: the pc
 * for an exact pc, the return address - 1 for a return address.
 *
 * Functions of one file (same path, build id and copy) loaded more than once
 * (dlopen, dlclose, dlopen) are the same functions; their object is the
 * object of the first load (lowest map.xml order).
 *
 * Names: mangled is the symbol as in the ELF file ("_ZNK2ns6Widget3runEi");
 * name_long is it demangled (libiberty's demangler, as binutils'):
 * "ns::Widget::run(int) const"; name_short drops the parameter list, the
 * qualifiers after it and the return type of template instances, and
 * collapses long template argument lists: "ns::Widget::run",
 * "std::map<...>::find" (sonde_sym_short_name() below; clone suffixes
 * such as " [clone .cold]" are kept).  Rust symbols (legacy and v0) have
 * name_long and name_short without the compiler's hash
 * ("engine::Sim::step") and name_full with it.  Fortran procedures
 * compiled by gfortran are named as the language writes them, from DWARF
 * where it is ("physics::relax", an internal procedure under its host
 * "physics::relax::sweep", the main program by its name), else from the
 * symbol ("__physics_MOD_relax" is "physics::relax").  A name that does
 * not demangle (C) is the same in all of them.  PLT entries keep "@plt"
 * at the end ("std::ostream::put@plt").
 *
 * Problems: one-line messages (lower case, the file in quotes), one per
 * object file and reason, in the order found.  They are found lazily: an
 * object is read at the first lookup of an address in it.
 *
 * Ownership: every pointer returned (functions, names, problems) is owned
 * by the handle and stays valid until sonde_syms_close(); functions never
 * move.  The experiment must outlive the handle.
 *
 * Threads: lookups fill caches, so one handle must not be used by several
 * threads at once (sonde_syms_func() and sonde_syms_count() included, while
 * another thread looks up).  Separate handles on one experiment are
 * independent.  Nothing here prints or exits.
 */
#ifndef SONDE_SYMBOLS_H
#define SONDE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/experiment.h"

struct sonde_syms; /* opaque */

struct sonde_func {
	uint32_t id;		/* dense 0..n-1, in order of creation, stable for the handle's life */
	const char *mangled;	/* symbol as in the ELF file, or the synthesized name */
	const char *name_long;	/* demangled with parameters; = mangled when it does not demangle */
	const char *name_short; /* demangled without parameters or return type */
	const char *name_full;	/* with what name_long leaves out (a Rust symbol's hash);
				 * NULL: name_long */
	const struct sonde_object *object; /* NULL for an address in no object */
	uint64_t lo, hi;	/* [lo, hi): the object's own addresses (pc - object->base);
				 * absolute addresses when object is NULL */
	bool synthesized;	/* no symbol: "<static>@0x..." or "<unknown>@0x..." */
	bool plt;		/* a PLT entry: "puts@plt" */
	bool inlined;		/* only inlined, no code of its own: lo = hi = 0 */
	uint8_t kind;		/* enum sonde_frame_kind of its frames: native for
				 * every function of sonde_syms_lookup */
};

/* One level of a source position (lib/symbols/srcinfo.h explains the levels). */
struct sonde_srcframe {
	const char *name;      /* the function at this level; NULL when DWARF has none */
	const char *file;      /* the position at this level; NULL when unknown */
	uint32_t line;	       /* 0 when unknown */
	bool inlined;	       /* the function at this level is an inlined instance */
	const char *decl_file; /* where that function is defined; NULL when unknown */
	uint32_t decl_line;
};

/* A function defined in a source file (srcobj_file_funcs). */
struct sonde_srcfunc {
	const char *name;  /* linkage name or DW_AT_name */
	uint32_t decl_line;
	uint64_t lo;	    /* its entry address; 0 when it has no code of its own (only inlined) */
};


/*
 * Makes a symbol handle for exp.  Reads no file yet: each object is read
 * at the first lookup of an address in it.  Never fails because a file is
 * missing or changed (those become problems).  NULL only when memory runs
 * out.  Free with sonde_syms_close().
 */
struct sonde_syms *sonde_syms_open(const struct sonde_exp *exp);

/* Frees the handle and everything it returned.  NULL is allowed. */
void sonde_syms_close(struct sonde_syms *s);

/*
 * The function holding a frame address.  exact: pc is the address of an
 * instruction (a leaf, a frame interrupted by a signal: SONDE_PC_EXACT was
 * set on the frame); otherwise pc is a return address and pc - 1 is looked
 * up.  The SONDE_PC_EXACT bit of pc itself is ignored.  time_ns picks the
 * object loaded at that time where addresses were reused (after dlclose);
 * SONDE_TIME_NEVER means any time (sonde_exp_find_object()).
 *
 * Never NULL.  Repeated lookups of one (pc, exact) cost one hash probe,
 * except for an address that several different objects held over time
 * (then one object search as well).  When memory runs out the answer is a
 * function named "<out of memory>" (and a problem says so).
 */
const struct sonde_func *sonde_syms_lookup(struct sonde_syms *s, uint64_t pc, bool exact,
					   uint64_t time_ns);

/* The function with that id, NULL when id >= sonde_syms_count(). */
const struct sonde_func *sonde_syms_func(const struct sonde_syms *s, uint32_t id);

/* Number of functions created so far (by lookups and finds). */
size_t sonde_syms_count(const struct sonde_syms *s);

/*
 * Functions by name, for -fsingle and -csingle: every function whose short,
 * long or mangled name equals name.  Searches the functions created so far
 * and every function symbol of the objects read so far (those a lookup has
 * touched), creating functions for the matches.  Stores up to max of them
 * in out (ordered by id) and returns how many there are (more than max:
 * the rest were left out; more than one: the name is ambiguous).
 */
size_t sonde_syms_find(struct sonde_syms *s, const char *name, const struct sonde_func **out,
		       size_t max);

/*
 * Problems found so far, oldest first, *n of them.  The strings live until
 * sonde_syms_close(); the array itself only until the next lookup or find.
 * For example:
 *   "'/usr/lib/libx.so' has changed since the experiment (build id 1a2b...,
 *    recorded 3c4d...); its functions are shown as addresses"
 *   "cannot open '/opt/app/bin/app': No such file or directory; its
 *    functions are shown as addresses"
 */
const char *const *sonde_syms_problems(const struct sonde_syms *s, size_t *n);

/*
 * The files read so far that have no function symbols (stripped, and no
 * debug file found): their functions are shown as addresses.  Not among
 * the problems, since no number is wrong for it; each file once.  Lives
 * as the problems do.
 */
const char *const *sonde_syms_unnamed(const struct sonde_syms *s, size_t *n);

/* Reads object o (one of sonde_exp_objects() of the handle's experiment)
 * now, as its first lookup would: -header lists what that finds. */
void sonde_syms_read_object(struct sonde_syms *s, const struct sonde_object *o);

/*
 * The short form of a demangled name, as name_short is made: drops the
 * parameter list and what follows it (" const", " &&", ...), and a return
 * type ("int ns::twice<int>(int)" -> "ns::twice<int>"); keeps template
 * arguments, "(anonymous namespace)", lambdas, operators, thunk prefixes
 * ("virtual thunk to X::f") and clone suffixes ("f [clone .cold]").
 * Writes at most size bytes (NUL-terminated when size > 0) and returns the
 * length of the whole short name, like snprintf.
 */
size_t sonde_sym_short_name(const char *name_long, char *buf, size_t size);

/*
 * A symbol's names as functions get them (see Names above): malloc'ed
 * long, short and full (*full NULL when it is the long one).  1 when it
 * demangles, 0 when it does not (all three NULL), -1 out of memory.
 */
int sonde_sym_demangle(const char *mangled, char **lng, char **shrt, char **full);

/* ---- source lines (DWARF, lib/symbols/srcinfo.h) --------------------------------------
 *
 * The DWARF of an object is read (with its separate debug file, found as
 * for symbols) at the first of these calls that needs it, only from a file
 * that passed the checks above (build id, or segments).  Objects without
 * line information answer 0 / false / NULL; nothing is reported for them
 * (the views say it for the functions asked for).
 */

/* The source position of a frame address (exact or a return address, as
 * for sonde_syms_lookup), inlined levels first: their number and *out
 * (owned by the handle until close), 0 when no line information covers it. */
int sonde_syms_srcpos(struct sonde_syms *s, uint64_t pc, bool exact, uint64_t time_ns,
		      const struct sonde_srcframe **out);

/* The same for an address of o's own (pc - o->base), exact. */
int sonde_syms_srcpos_at(struct sonde_syms *s, const struct sonde_object *o, uint64_t addr,
			 const struct sonde_srcframe **out);

/* The extent [*lo, *hi) of o's code around addr (o's own addresses) by
 * its call-frame information: a function's bounds where symbols are
 * missing (stripped).  False when unknown. */
bool sonde_syms_code_range(struct sonde_syms *s, const struct sonde_object *o, uint64_t addr,
			   uint64_t *lo, uint64_t *hi);

/* Whether object o has a line table. */
bool sonde_syms_has_lines(struct sonde_syms *s, const struct sonde_object *o);

/* The file read for o's symbols (its path, its archived copy, ...), or
 * NULL when it could not be used; for disassembly. */
const char *sonde_syms_object_file(struct sonde_syms *s, const struct sonde_object *o);

/* The functions defined in source file `file` (as srcpos names files) by
 * o's DWARF, sorted by line: their number, *out valid until the next call. */
size_t sonde_syms_file_funcs(struct sonde_syms *s, const struct sonde_object *o, const char *file,
			     const struct sonde_srcfunc **out);

/* The function of o named name (a mangled name, as srcpos gives inlined
 * levels): o's symbol of that name when there is one, so that inlined and
 * out-of-line time of a function are one function; else a function of its
 * own (inlined = true, lo = hi = 0), the same one for every call. */
const struct sonde_func *sonde_syms_named(struct sonde_syms *s, const struct sonde_object *o,
					  const char *name);

/* ---- frames of every kind (lib/symbols/framekind.[ch]) --------------------------------
 *
 * Symbolisation dispatches on the frame's kind:
 *
 *   native          sonde_syms_lookup(s, f->pc, f->exact, time_ns): the ELF
 *                   and DWARF path above;
 *   kernel          the experiment's kallsyms file (kallsyms.c): the
 *                   function is the text symbol at or below the address
 *                   (pc, or pc - 1 for a return address), up to the next
 *                   symbol; object the "<kernel>" pseudo object;
 *   Java            the experiment's method table, "methods"
 *   (interpreted,   (javamethods.c): the method of id pc, named
 *    compiled)      "pkg.Class.method(int, java.lang.String)" (name_long;
 *                   name_short without the parameters; mangled
 *                   "pkg/Class.method(ILjava/lang/String;)V"), in the pseudo
 *                   object of its class file ("pkg/Class.class"); its
 *                   source line from the table's bytecode index -> line
 *                   pairs;
 *   any other kind  "<kind N>@0x..." in no object.
 *
 * A frame that its kind's file does not name (no file, an address in no
 * symbol, an unknown method id) is a synthesized function named after it:
 * "<kernel>@0xffffffff81000000" (object "<kernel>"), "<unknown
 * method>@0x7f00" (object "<JAVA>").  The files' problems (cannot be read,
 * lines skipped) are the handle's problems.  doc/experiment-format.md
 * describes both files; doc/sonde-print.md how the views name them.
 *
 * The pseudo objects are owned by the handle, not by the experiment:
 * sonde_syms_object_file(), _has_lines() and the source and disassembly
 * calls answer NULL, false or 0 for them, as for an object no file could
 * be read for.
 */

/* How a frame kind is shown, for views that name or explain it. */
struct sonde_frame_kind_info {
	const char *word;  /* -dump's: "kernel", "java-interpreted", ... */
	const char *noun;  /* for messages: "a kernel function", "a Java method" */
	const char *place; /* what -pcs calls a frame's place in its function
			    * ("bci"); NULL: an address offset, like native code */
};

/* The info of a frame kind (native's, or a kind module's), NULL for a kind
 * this sonde does not know (shown as "kind N"). */
const struct sonde_frame_kind_info *sonde_frame_kind_info(unsigned kind);

/* The function of frame f (of any kind; f->exact says whether a native or
 * kernel pc is a return address).  Never NULL.  One hash probe for a frame
 * seen before. */
const struct sonde_func *sonde_syms_frame(struct sonde_syms *s, const struct sonde_frame *f, uint64_t time_ns);

/* The source position of frame f, as sonde_syms_srcpos() gives a native
 * one's: a Java frame's file and line (one level), 0 when unknown. */
int sonde_syms_frame_srcpos(struct sonde_syms *s, const struct sonde_frame *f, uint64_t time_ns,
			    const struct sonde_srcframe **out);

/* Where frame f is in its function fn (sonde_syms_frame's), for the
 * per-instruction view: *at, the instruction's address in fn's object (the
 * pc, or the return address - 1, less the object's base), or for a kind
 * whose frames have no address its place (a Java frame's bytecode index);
 * *key, a string (owned by the handle) that with *at names the place
 * uniquely: fn's object's path for addresses, fn's mangled name for
 * places.  false when f has no place (in no object, or a bytecode index
 * that is not known). */
bool sonde_syms_frame_place(const struct sonde_frame *f, const struct sonde_func *fn, uint64_t *at,
			    const char **key);

/* ---- tail calls (lib/symbols/tailcall.c) ------------------------------------------------
 *
 * A function that ends in a call may jump to its callee instead (a tail
 * call, -O2's sibling-call optimisation): its frame is gone while the
 * callee runs, so a sampled stack goes from the callee straight to its
 * caller's caller.  DWARF describes every call instruction
 * (DW_TAG_call_site: its return address, its callee, whether it is a
 * jump), which tells the missing frames where they are certain:
 *
 *   the caller frame's return address R is at a call site whose callee T
 *   is not the function G the frame below it is in: T (and what it jumped
 *   through) tail-called its way to G.  Following the tail calls of T's
 *   DWARF (and of the functions they reach, across load objects, up to
 *   SONDE_TAIL_MAX deep, no function twice) from T to G: when exactly one
 *   chain T -> X1 -> ... -> G exists, T, X1, ... are the frames missing.
 *
 * When several chains exist, or an indirect tail call (an unknown callee)
 * is met on the way to G, which one ran is unknown: nothing is restored
 * (SONDE_TAIL_AMBIGUOUS).  gdb restores frames the same way (its
 * frame-tailcall.c). */

#define SONDE_TAIL_MAX 8
#define SONDE_TAIL_AMBIGUOUS (-1)

/* The functions missing between a frame whose return address is ret_pc
 * and the function callee that the frame below it is in (time_ns as for
 * sonde_syms_lookup): their number n > 0, with out[0 .. n) outermost first
 * (the call site's callee first); 0 when none is missing or nothing is
 * known (no call-site information, an indirect call, no chain);
 * SONDE_TAIL_AMBIGUOUS when several chains lead to callee.  max:
 * out's room (SONDE_TAIL_MAX suffices). */
int sonde_syms_tailcalls(struct sonde_syms *s, uint64_t ret_pc, uint64_t time_ns,
			 const struct sonde_func *callee, const struct sonde_func **out, int max);

#endif
