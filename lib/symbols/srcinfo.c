/*
 * srcinfo: source positions with inlining from DWARF.  See srcinfo.h.
 *
 * elfutils does the reading: dwfl_module_getsrc() walks the line table
 * (DWARF 4 and 5), dwarf_getscopes() finds the innermost scope of an
 * address and dwarf_getscopes_die() its enclosing DIEs, outward through
 * inlined instances to the subprogram, as eu-addr2line -i does.  Each
 * address is resolved once; answers are kept for the life of the object.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/safeopen.h"
#include "base/arena.h"
#include "symbols/plaindebug.h"
#include "symbols/srcinfo.h"
#include "base/strtab.h"
#include "base/u64map.h"
#include "base/partition.h"

#define MAX_LEVELS 64

struct chain {
	uint32_t n;
	struct sonde_srcframe f[];
};

struct srcobj {
	Dwfl_Callbacks cb; /* the caller's, finding debug files through plain_debuginfo */
	int (*find_debuginfo)(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *, const char *,
			      GElf_Word, char **); /* the caller's */
	bool main_dwarf;  /* the file has DWARF itself: no debug file is looked for */
	bool debug_asked; /* plain_debuginfo was called */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	bool lines;
	struct arena_chunk *arena;
	struct u64map cache; /* address -> chains index */
	struct chain **chains;
	size_t nchains, capchains;
	struct strtab strs;
	struct sonde_srcfunc *funcs;
	size_t nfuncs, capfuncs;
	/* CUs by address range, for files without .debug_aranges (clang
	 * emits none; elfutils before 0.191 then finds no CU by address). */
	struct curange { Dwarf_Addr lo, hi, bias; Dwarf_Die cu; } *cur;
	size_t ncur;
	bool cur_built;
	/* The call sites of the CUs read so far (cs_cus: their offsets), and
	 * two indices into them: by return address, and the tail calls by
	 * the function holding them. */
	struct srcobj_callsite *cs;
	size_t ncs, capcs;
	struct cusites { uint32_t *byret, *byfunc; size_t nbyret, nbyfunc; } *cus;
	size_t ncus, capcus;
	struct u64map cs_cus; /* CU offset -> index into cus */
	/* The subprograms of the CUs searched so far whose code holds an
	 * address dwarf_getscopes found no scope for (nested_chain): their
	 * ranges, sorted by start, by CU (nested_cus: CU offset -> index
	 * into nested). */
	struct nested {
		struct nrange { Dwarf_Addr lo, hi; Dwarf_Off off; } *v;
		size_t n, cap;
	} *nested;
	size_t nnested, capnested;
	struct u64map nested_cus;
};

static int cmp_cur(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void build_curanges(struct srcobj *so)
{
	size_t cap = 0;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	so->cur_built = true;
	while ((cu = dwfl_module_nextcu(so->mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (sonde_grow(&so->cur, &cap, so->ncur + 1, sizeof(*so->cur), 64))
				return;
			so->cur[so->ncur++] = (struct curange){ lo + bias, hi + bias, bias, *cu };
		}
	}
	if (so->ncur > 1)
		qsort(so->cur, so->ncur, sizeof(*so->cur), cmp_cur);
}

/* The CU holding addr by its ranges (the last range starting at or
 * below it that holds it), or NULL. */
static Dwarf_Die *cu_by_range(struct srcobj *so, uint64_t addr, Dwarf_Addr *bias)
{
	if (!so->cur_built)
		build_curanges(so);
	size_t lo = PARTITION_POINT(0, so->ncur, i, so->cur[i].lo <= addr);
	for (size_t j = lo; j-- > 0;)
		if (addr < so->cur[j].hi) {
			*bias = so->cur[j].bias;
			return &so->cur[j].cu;
		}
	return NULL;
}

/* One copy of each file and function name: views compare them by pointer
 * within an object.  NULL stays NULL (and when memory runs out). */
static const char *intern(struct srcobj *so, const char *s)
{
	return strtab_intern(&so->strs, s);
}

/* A file name of a CU made absolute with its compilation directory. */
static const char *abs_file(struct srcobj *so, const char *name, Dwarf_Die *cu)
{
	if (!name || name[0] == '/' || !cu)
		return intern(so, name);
	Dwarf_Attribute a;
	const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	char buf[PATH_MAX];

	if (!dir)
		return intern(so, name);
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return intern(so, buf);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

/* The file of an inlined instance's call site (DW_AT_call_file indexes its
 * CU's file table). */
static const char *call_file(struct srcobj *so, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nf;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) != 0 ||
	    !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nf) != 0 ||
	    idx >= nf)
		return NULL;
	return abs_file(so, dwarf_filesrc(files, idx, NULL, NULL), &cu);
}

static uint32_t attr_line(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	return dwarf_formudata(dwarf_attr(die, name, &a), &w) == 0 && w <= UINT32_MAX ? (uint32_t)w : 0;
}

static void set_decl(struct srcobj *so, struct sonde_srcframe *f, Dwarf_Die *die)
{
	int line = 0;
	Dwarf_Die cu;
	/* (dwarf_decl_file integrates abstract origins; its name is relative
	 * to the CU of the DIE it was found on, which for C and C++ is this
	 * DIE's CU.) */
	if (!dwarf_diecu(die, &cu, NULL, NULL)) {
		f->decl_file = NULL;
	} else {
		const char *df = dwarf_decl_file(die);
		Dwarf_Attribute a;
		Dwarf_Word idx;

		/* DWARF 5 numbers the primary source file 0, which elfutils
		 * 0.188's dwarf_decl_file refuses (clang uses it): the CU's
		 * file table, else the CU's own name. */
		if (!df && dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &a), &idx) == 0) {
			Dwarf_Files *files;
			size_t nf;

			if (dwarf_getsrcfiles(&cu, &files, &nf) == 0 && idx < nf)
				df = dwarf_filesrc(files, idx, NULL, NULL);
			if (!df && idx == 0)
				df = dwarf_diename(&cu);
		}
		f->decl_file = abs_file(so, df, &cu);
	}
	f->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? (uint32_t)line : 0;
}

/* The separate debug file, uncompressed (plaindebug.h): libdw would inflate
 * all of it on opening.  dwfl's own lookup by build id opens the file as
 * ELF and keeps that, whatever descriptor the callback returns; so the
 * lookup by build id in the debug path (what dwfl tries first) is done
 * here, and the rest (.gnu_debuglink, debuginfod, the dwz file a debug file
 * names) is left to the caller's callback, whose answer is taken as is. */
static int plain_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			   char **debuginfo_file_name)
{
	struct srcobj *so = *userdata;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	if (!so) /* (srcobj_open sets it before anything asks) */
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						    debuglink_crc, debuginfo_file_name);
	if (!so->main_dwarf && !so->debug_asked && (n = dwfl_module_build_id(mod, &bits, &vaddr)) > 0) {
		const char *dirs = so->cb.debuginfo_path && *so->cb.debuginfo_path ? *so->cb.debuginfo_path
										   : "/usr/lib/debug";

		so->debug_asked = true; /* the next call is for the dwz file */
		while (*dirs) {
			size_t len = strcspn(dirs, ":");
			const char *d = dirs;

			dirs += len + (dirs[len] == ':');
			while (len && (*d == '+' || *d == '-'))
				d++, len--;
			char path[PATH_MAX];
			int w = snprintf(path, sizeof(path), "%.*s/.build-id/%02x/", (int)len, d, bits[0]);

			for (int i = 1; i < n && w > 0 && w < (int)sizeof(path) - 3; i++)
				w += sprintf(path + w, "%02x", bits[i]);
			if (!len || *d != '/' || w <= 0 || w + 7 > (int)sizeof(path))
				continue;
			strcpy(path + w, ".debug");
			int fd = sonde_open_regular(path);

			if (fd >= 0 && (fd = sonde_plain_debug(fd, NULL, bits, (size_t)n)) >= 0) {
				*debuginfo_file_name = strdup(path);
				return fd;
			}
		}
	}
	so->debug_asked = true;
	return so->find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
				  debuginfo_file_name);
}

struct srcobj *srcobj_open(const char *path, const Dwfl_Callbacks *cb)
{
	struct srcobj *so = calloc(1, sizeof(*so));
	int fd = sonde_open_regular(path); /* a FIFO would block: regular files only */

	if (!so || fd < 0)
		goto fail;
	fd = sonde_plain_debug(fd, &so->main_dwarf, NULL, 0); /* its own DWARF may be compressed too */
	if (fd < 0)
		goto fail;
	so->cb = *cb;
	so->find_debuginfo = cb->find_debuginfo;
	so->cb.find_debuginfo = plain_debuginfo;
	so->dwfl = dwfl_begin(&so->cb);
	if (!so->dwfl)
		goto fail;
	so->mod = dwfl_report_elf(so->dwfl, path, path, fd, 0, true);
	if (!so->mod)
		goto fail;
	fd = -1; /* the module owns it now */
	dwfl_report_end(so->dwfl, NULL, NULL);
	void **ud = NULL;

	dwfl_module_info(so->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = so; /* for plain_debuginfo */
	Dwarf_Addr bias = 0, b2;

	so->dw = dwfl_module_getdwarf(so->mod, &bias);
	so->lines = so->dw && dwfl_module_nextcu(so->mod, NULL, &b2) != NULL;
	return so;
fail:
	if (fd >= 0)
		close(fd);
	srcobj_close(so);
	return NULL;
}

void srcobj_close(struct srcobj *so)
{
	if (!so)
		return;
	if (so->dwfl)
		dwfl_end(so->dwfl);
	arena_free(&so->arena);
	u64map_release(&so->cache);
	strtab_free(&so->strs);
	free(so->chains);
	free(so->funcs);
	free(so->cur);
	free(so->cs);
	for (size_t i = 0; i < so->nnested; i++)
		free(so->nested[i].v);
	free(so->nested);
	u64map_release(&so->nested_cus);
	for (size_t i = 0; i < so->ncus; i++) {
		free(so->cus[i].byret);
		free(so->cus[i].byfunc);
	}
	free(so->cus);
	u64map_release(&so->cs_cus);
	free(so);
}

bool srcobj_has_lines(struct srcobj *so)
{
	return so && so->lines;
}

/* ---- Fortran ------------------------------------------------------------------------ */

static bool fortran_cu(Dwarf_Die *cu)
{
	int l = dwarf_srclang(cu);

	return l == DW_LANG_Fortran77 || l == DW_LANG_Fortran90 || l == DW_LANG_Fortran95 || l == DW_LANG_Fortran03 ||
	       l == DW_LANG_Fortran08 || l == 0x2d /* DW_LANG_Fortran18 */;
}

/* A search of a CU's DIEs for a subprogram, at any depth: a Fortran
 * module's procedures are under its DW_TAG_module, an internal procedure
 * under its host, and a C++ lambda's operator() under its class under the
 * function that made it, whose code it is not in (dwarf_getscopes enters
 * a DIE with code only where the address is in it).  by_start: the one whose code starts at addr, else the
 * innermost whose code holds it.  path: the names of the scopes above
 * and of the found one (module, hosts, itself). */
#define FPATH 16
static bool holds_subprograms(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_module || tag == DW_TAG_namespace ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
	       tag == DW_TAG_union_type;
}

struct fsearch {
	Dwarf_Addr addr;
	Dwarf_Off off; /* not 0: the DIE at this offset, whatever its code */
	bool by_start, found;
	Dwarf_Die die;
	const char *path[FPATH], *best[FPATH];
	int nbest;
};

static void fsearch(Dwarf_Die *parent, struct fsearch *x, int depth, int level)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if (!holds_subprograms(tag))
			continue;
		int lv = level;

		if (tag != DW_TAG_lexical_block && level < FPATH) {
			const char *n = dwarf_diename(&c);

			x->path[lv++] = n ? n : "?";
		}
		if (tag == DW_TAG_subprogram && lv > level) {
			Dwarf_Addr lo;
			bool hit = x->off	   ? dwarf_dieoffset(&c) == x->off
				   : x->by_start ? dwarf_lowpc(&c, &lo) == 0 && lo == x->addr
						 : dwarf_haspc(&c, x->addr) == 1;

			if (hit) {
				x->found = true;
				x->die = c;
				x->nbest = lv;
				memcpy(x->best, x->path, (size_t)lv * sizeof(x->path[0]));
			}
		}
		fsearch(&c, x, depth + 1, lv);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static const char *qualified(struct srcobj *so, Dwarf_Die *cu, struct fsearch *x);

const char *srcobj_fortran_name(struct srcobj *so, uint64_t addr)
{
	if (!so || !so->lines)
		return NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(so->mod, addr, &bias);

	if (!cu || !fortran_cu(cu))
		return NULL;
	struct fsearch x = { .addr = addr - bias, .by_start = true };

	return qualified(so, cu, &x);
}

/* The name of the procedure x finds in cu, with its module's and hosts'
 * ("physics::relax::sweep"); NULL when not found. */
static const char *qualified(struct srcobj *so, Dwarf_Die *cu, struct fsearch *x)
{
	fsearch(cu, x, 0, 0);
	if (!x->found || !x->nbest)
		return NULL;
	char buf[1024];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < x->nbest && len < sizeof(buf); i++) {
		int k = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "::" : "", x->best[i]);

		if (k < 0)
			return NULL;
		len += (size_t)k;
	}
	return intern(so, buf);
}

/* The ELF symbol that starts at a subprogram DIE's code, the name the
 * function list has for it (a Fortran procedure's DIE names "relax" what
 * the symbol calls "__physics_MOD_relax"; an internal procedure's symbol
 * is "sweep.0"); NULL when none starts there. */
static const char *symbol_at(struct srcobj *so, Dwarf_Die *die, Dwarf_Addr bias)
{
	Dwarf_Addr lo;
	GElf_Sym sym;

	if (dwarf_lowpc(die, &lo) != 0)
		return NULL;
	const char *n = dwfl_module_addrsym(so->mod, lo + bias, &sym, NULL);

	return n && sym.st_value == lo + bias ? n : NULL;
}

static void nested_collect(Dwarf_Die *parent, struct nested *ns, int depth, bool *oom)
{
	Dwarf_Die c;

	if (depth > 32 || *oom || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if (!holds_subprograms(tag))
			continue;
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0) {
				if (sonde_grow(&ns->v, &ns->cap, ns->n + 1, sizeof(*ns->v), 64)) {
					*oom = true;
					return;
				}
				ns->v[ns->n++] = (struct nrange){ lo, hi, dwarf_dieoffset(&c) };
			}
		}
		nested_collect(&c, ns, depth + 1, oom);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int nrange_cmp(const void *a, const void *b)
{
	const struct nrange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The CU's subprograms by range, read at its first search; NULL out of
 * memory. */
static struct nested *nested_of(struct srcobj *so, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	long i = u64map_get(&so->nested_cus, key);

	if (i >= 0)
		return &so->nested[i];
	if (sonde_grow(&so->nested, &so->capnested, so->nnested + 1, sizeof(*so->nested), 8) ||
	    u64map_put(&so->nested_cus, key, (uint32_t)so->nnested) < 0)
		return NULL;
	struct nested *ns = &so->nested[so->nnested++];
	bool oom = false;

	memset(ns, 0, sizeof(*ns));
	nested_collect(cu, ns, 0, &oom);
	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), nrange_cmp);
	return ns;
}

/* The innermost subprogram holding addr where dwarf_getscopes found no
 * scope (see fsearch), and the inlined instances in it down to addr:
 * innermost first in chain; the count. */
static int nested_chain(struct srcobj *so, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *chain, int max)
{
	struct nested *ns = nested_of(so, cu);
	const struct nrange *best = NULL;

	/* the ranges that start at or before addr; the smallest holding it
	 * is the innermost (a nested procedure's code is its own) */
	size_t lo = 0, hi = ns ? ns->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ns->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k-- > 0;) {
		const struct nrange *r = &ns->v[k];

		if (addr < r->hi && (!best || r->hi - r->lo < best->hi - best->lo))
			best = r;
		if (lo - k > 64)
			break; /* ranges far before addr: nesting is never that deep */
	}
	Dwarf_Die found;

	if (!best || max < 1 || !dwarf_offdie(so->dw, best->off, &found))
		return 0;
	Dwarf_Die out[MAX_LEVELS], cur = found, c;
	int n = 0;

	out[n++] = cur;
	for (bool deeper = true; deeper && n < max && n < MAX_LEVELS;) {
		deeper = false;
		if (dwarf_child(&cur, &c) != 0)
			break;
		do {
			int tag = dwarf_tag(&c);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && dwarf_haspc(&c, addr) == 1) {
				if (tag == DW_TAG_inlined_subroutine)
					out[n++] = c;
				cur = c;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	for (int i = 0; i < n; i++)
		chain[i] = out[n - 1 - i];
	return n;
}

/* A level's function as the function list names it: the symbol its code
 * starts at, for an out-of-line function (a Fortran procedure's DIE says
 * "relax", its symbol "__physics_MOD_relax"; a clone's symbol is
 * "f.constprop.0"); an inlined Fortran procedure by its qualified name
 * (it has no symbol); else the DIE's linkage name or name. */
static const char *level_name(struct srcobj *so, Dwarf_Die *cu, Dwarf_Die *die, int tag, Dwarf_Addr bias)
{
	if (tag == DW_TAG_subprogram) {
		const char *s = symbol_at(so, die, bias);

		if (s)
			return intern(so, s);
	} else if (tag == DW_TAG_inlined_subroutine && cu && fortran_cu(cu)) {
		Dwarf_Attribute a;
		Dwarf_Die origin;

		if (dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &a), &origin)) {
			struct fsearch x = { .off = dwarf_dieoffset(&origin) };
			const char *q = qualified(so, cu, &x);

			if (q)
				return q;
		}
	}
	return intern(so, die_name(die));
}

/* Resolves addr into lv (at most MAX_LEVELS); returns the count. */
static int resolve(struct srcobj *so, uint64_t addr, struct sonde_srcframe *lv)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(so->mod, addr, &bias);
	Dwfl_Line *l = cu ? dwfl_module_getsrc(so->mod, addr) : NULL;
	int lineno = 0;
	const char *lf = l ? dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;

	if (!cu && (cu = cu_by_range(so, addr, &bias))) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, addr - bias);

		if (dl && dwarf_lineno(dl, &lineno) == 0)
			lf = dwarf_linesrc(dl, NULL, NULL);
	}
	const char *file = lf ? abs_file(so, lf, cu) : NULL;
	uint32_t line = lineno > 0 ? (uint32_t)lineno : 0;
	int n = 0;
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;

	Dwarf_Die fchain[MAX_LEVELS];
	int nf = ns <= 0 && cu ? nested_chain(so, cu, addr - bias, fchain, MAX_LEVELS) : 0;

	if (ns > 0 || nf > 0) {
		/* The chain of DIEs enclosing the innermost scope, outward
		 * through inlined instances (dwarf_getscopes itself continues
		 * into the abstract origin's scopes instead). */
		Dwarf_Die inner, *chain = NULL;
		int nc = nf > 0 ? nf
			 : dwarf_offdie(so->dw, dwarf_dieoffset(&scopes[0]), &inner) ? dwarf_getscopes_die(&inner, &chain)
										  : 0;
		Dwarf_Die *ch = nf > 0 ? fchain : chain;

		for (int i = 0; i < nc && n < MAX_LEVELS; i++) {
			int tag = dwarf_tag(&ch[i]);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
			    tag != DW_TAG_entry_point)
				continue;
			struct sonde_srcframe *f = &lv[n++];

			f->name = level_name(so, cu, &ch[i], tag, bias);
			f->file = file;
			f->line = line;
			f->inlined = tag == DW_TAG_inlined_subroutine;
			set_decl(so, f, &ch[i]);
			if (tag != DW_TAG_inlined_subroutine)
				break; /* the out-of-line function */
			file = call_file(so, &ch[i]);
			line = attr_line(&ch[i], DW_AT_call_line);
		}
		free(chain);
	}
	free(scopes);
	if (!n && file) {
		/* A line but no function DIE (assembly, or DWARF without
		 * DIEs for this code). */
		memset(&lv[0], 0, sizeof(lv[0]));
		lv[0].file = file;
		lv[0].line = line;
		n = 1;
	}
	return n;
}

int srcobj_lookup(struct srcobj *so, uint64_t addr, const struct sonde_srcframe **out)
{
	*out = NULL;
	if (!so || !so->lines)
		return 0;
	long i = u64map_get(&so->cache, addr);

	if (i < 0) {
		struct sonde_srcframe lv[MAX_LEVELS];
		int n = resolve(so, addr, lv);
		struct chain *c = (struct chain *)arena_alloc(&so->arena, sizeof(*c) + (size_t)n * sizeof(lv[0]));

		if (!c)
			return 0;
		c->n = (uint32_t)n;
		memcpy(c->f, lv, (size_t)n * sizeof(lv[0]));
		if (sonde_grow(&so->chains, &so->capchains, so->nchains + 1, sizeof(*so->chains), 256))
			return 0;
		if (u64map_put(&so->cache, addr, (uint32_t)so->nchains) < 0)
			return 0;
		i = (long)so->nchains;
		so->chains[so->nchains++] = c;
	}
	*out = so->chains[i]->f;
	return (int)so->chains[i]->n;
}

struct funcs_ctx {
	struct srcobj *so;
	const char *file; /* interned */
	Dwarf_Die *cu;
	bool oom;
};

static int add_func(Dwarf_Die *fn, void *arg)
{
	struct funcs_ctx *x = arg;
	struct srcobj *so = x->so;
	struct sonde_srcframe f;

	set_decl(so, &f, fn);
	if (f.decl_file != x->file || !f.decl_line)
		return DWARF_CB_OK;
	const char *name = intern(so, die_name(fn));
	Dwarf_Addr lo = 0;

	if (dwarf_lowpc(fn, &lo) != 0)
		lo = 0;
	/* One entry per function: the abstract and the concrete DIEs of an
	 * inlined function, or a declaration and its definition, meet here. */
	for (size_t i = 0; i < so->nfuncs; i++) {
		struct sonde_srcfunc *g = &so->funcs[i];

		if (g->name == name && g->decl_line == f.decl_line) {
			if (!g->lo)
				g->lo = lo;
			return DWARF_CB_OK;
		}
	}
	if (sonde_grow(&so->funcs, &so->capfuncs, so->nfuncs + 1, sizeof(*so->funcs), 64)) {
		x->oom = true;
		return DWARF_CB_ABORT;
	}
	so->funcs[so->nfuncs++] = (struct sonde_srcfunc){ name, f.decl_line, lo };
	return DWARF_CB_OK;
}

static int cmp_funcs(const void *a, const void *b)
{
	const struct sonde_srcfunc *x = a, *y = b;

	if (x->decl_line != y->decl_line)
		return x->decl_line < y->decl_line ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t srcobj_file_funcs(struct srcobj *so, const char *file, const struct sonde_srcfunc **out)
{
	*out = NULL;
	if (!so || !so->lines)
		return 0;
	so->nfuncs = 0;
	struct funcs_ctx x = { so, intern(so, file), NULL, false };
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while (!x.oom && (cu = dwfl_module_nextcu(so->mod, cu, &bias))) {
		x.cu = cu;
		dwarf_getfuncs(cu, add_func, &x, 0);
	}
	if (so->nfuncs > 1)
		qsort(so->funcs, so->nfuncs, sizeof(*so->funcs), cmp_funcs);
	*out = so->funcs;
	return so->nfuncs;
}

bool srcobj_code_range(struct srcobj *so, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	if (!so)
		return false;
	for (int k = 0; k < 2; k++) {
		Dwarf_Addr bias = 0;
		Dwarf_CFI *cfi = k == 0 ? dwfl_module_eh_cfi(so->mod, &bias) : dwfl_module_dwarf_cfi(so->mod, &bias);
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr start, end;

		if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &fr) != 0)
			continue;
		bool ok = dwarf_frame_info(fr, &start, &end, NULL) >= 0 && start < end;

		free(fr);
		if (ok) {
			*lo = start + bias;
			*hi = end + bias;
			return true;
		}
	}
	return false;
}

/* ---- call sites ------------------------------------------------------------------------ */

/* A DIE's entry address (the module's), 0 when it has no code: a
 * declaration or an abstract instance.  dwarf_entrypc reads DW_AT_entry_pc
 * or DW_AT_low_pc; a function in several ranges (hot and cold parts)
 * enters at its first. */
static uint64_t die_entry(Dwarf_Die *d, Dwarf_Addr bias)
{
	Dwarf_Addr a, base, lo, hi;

	if (dwarf_entrypc(d, &a) == 0 && a)
		return a + bias;
	if (dwarf_hasattr(d, DW_AT_ranges) && dwarf_ranges(d, 0, &base, &lo, &hi) > 0 && lo)
		return lo + bias;
	return 0;
}

static bool die_flag(Dwarf_Die *d, int name)
{
	Dwarf_Attribute a;
	bool f = false;

	return dwarf_attr(d, name, &a) && dwarf_formflag(&a, &f) == 0 && f;
}

/* Adds the call site at DIE d, in the function entered at func. */
static int add_callsite(struct srcobj *so, Dwarf_Die *d, uint64_t func, Dwarf_Addr bias)
{
	struct srcobj_callsite c = { .func = func };
	Dwarf_Attribute a;
	Dwarf_Addr ret;
	Dwarf_Die o;

	if ((dwarf_attr(d, DW_AT_call_return_pc, &a) || dwarf_attr(d, DW_AT_low_pc, &a)) &&
	    dwarf_formaddr(&a, &ret) == 0 && ret)
		c.ret = ret + bias;
	c.tail = die_flag(d, DW_AT_call_tail_call) || die_flag(d, DW_AT_GNU_tail_call);
	if ((dwarf_attr(d, DW_AT_call_origin, &a) || dwarf_attr(d, DW_AT_abstract_origin, &a)) &&
	    dwarf_formref_die(&a, &o)) {
		c.name = intern(so, die_name(&o));
		c.target = die_entry(&o, bias);
	} else if (dwarf_attr(d, DW_AT_call_target, &a) || dwarf_attr(d, DW_AT_GNU_call_site_target, &a)) {
		/* a location: a constant address is a known callee, anything
		 * else (a register, memory) an indirect call */
		Dwarf_Op *ops;
		size_t nops;

		if (dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_addr &&
		    ops[0].number)
			c.target = ops[0].number + bias;
	}
	if (!c.ret && !c.tail)
		return 0; /* nothing to ask it */
	if (sonde_grow(&so->cs, &so->capcs, so->ncs + 1, sizeof(*so->cs), 256))
		return -1;
	so->cs[so->ncs++] = c;
	return 0;
}

/* The call sites under die, in the function entered at func (0: none, as
 * in an abstract instance, whose sites are not code). */
static int walk_callsites(struct srcobj *so, Dwarf_Die *die, uint64_t func, Dwarf_Addr bias, int depth)
{
	Dwarf_Die c;

	if (depth > 128 || dwarf_child(die, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c), rc = 0;

		switch (tag) {
		case DW_TAG_subprogram:
			rc = walk_callsites(so, &c, die_entry(&c, bias), bias, depth + 1);
			break;
		case DW_TAG_call_site:
		case DW_TAG_GNU_call_site:
			if (func)
				rc = add_callsite(so, &c, func, bias);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			rc = walk_callsites(so, &c, func, bias, depth + 1);
			break;
		}
		if (rc < 0)
			return -1;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int cmp_byret(const void *a, const void *b, void *arg)
{
	const struct srcobj_callsite *cs = arg, *x = &cs[*(const uint32_t *)a], *y = &cs[*(const uint32_t *)b];

	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

static int cmp_byfunc(const void *a, const void *b, void *arg)
{
	const struct srcobj_callsite *cs = arg, *x = &cs[*(const uint32_t *)a], *y = &cs[*(const uint32_t *)b];
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return (i > j) - (i < j); /* DIE order */
}

/* The call sites of the CU holding addr, read at the first question
 * about it, with their two indices; NULL when no CU holds addr (or memory
 * ran out). */
static struct cusites *cu_callsites(struct srcobj *so, uint64_t addr)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(so->mod, addr, &bias);

	if (!cu)
		cu = cu_by_range(so, addr, &bias);
	if (!cu)
		return NULL;
	uint64_t off = dwarf_dieoffset(cu);
	long i = u64map_get(&so->cs_cus, off);

	if (i >= 0)
		return &so->cus[i];
	if (sonde_grow(&so->cus, &so->capcus, so->ncus + 1, sizeof(*so->cus), 16) ||
	    u64map_put(&so->cs_cus, off, (uint32_t)so->ncus) < 0)
		return NULL;
	struct cusites *c = &so->cus[so->ncus++];
	size_t first = so->ncs;

	memset(c, 0, sizeof(*c));
	walk_callsites(so, cu, 0, bias, 0); /* (out of memory: what was read is used) */
	size_t n = so->ncs - first;

	c->byret = malloc((n ? n : 1) * sizeof(*c->byret));
	c->byfunc = malloc((n ? n : 1) * sizeof(*c->byfunc));
	if (!c->byret || !c->byfunc)
		return c; /* no sites */
	for (size_t k = first; k < so->ncs; k++) {
		if (so->cs[k].ret && !so->cs[k].tail)
			c->byret[c->nbyret++] = (uint32_t)k;
		if (so->cs[k].tail)
			c->byfunc[c->nbyfunc++] = (uint32_t)k;
	}
	qsort_r(c->byret, c->nbyret, sizeof(*c->byret), cmp_byret, so->cs);
	qsort_r(c->byfunc, c->nbyfunc, sizeof(*c->byfunc), cmp_byfunc, so->cs);
	return c;
}

struct srcobj_callsite *srcobj_callsite_at(struct srcobj *so, uint64_t ret)
{
	if (!so || !so->dw || !ret)
		return NULL;
	/* the call instruction is before the return address: its CU is ret - 1's */
	struct cusites *c = cu_callsites(so, ret - 1);

	if (!c)
		return NULL;
	size_t i = PARTITION_POINT(0, c->nbyret, k, so->cs[c->byret[k]].ret < ret);

	return i < c->nbyret && so->cs[c->byret[i]].ret == ret ? &so->cs[c->byret[i]] : NULL;
}

size_t srcobj_tailcalls(struct srcobj *so, uint64_t func, uint32_t *idx, size_t max)
{
	struct cusites *c = so && so->dw && func ? cu_callsites(so, func) : NULL;

	if (!c)
		return 0;
	size_t lo = PARTITION_POINT(0, c->nbyfunc, k, so->cs[c->byfunc[k]].func < func);
	size_t hi = PARTITION_POINT(lo, c->nbyfunc, k, so->cs[c->byfunc[k]].func <= func);

	for (size_t k = lo; k < hi && k - lo < max; k++)
		idx[k - lo] = c->byfunc[k];
	return hi - lo;
}

struct srcobj_callsite *srcobj_callsite(struct srcobj *so, uint32_t idx)
{
	return idx < so->ncs ? &so->cs[idx] : NULL;
}
