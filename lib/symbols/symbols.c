/*
 * symbols: function names for the addresses of an experiment.  See
 * symbols.h for the contract.
 *
 * Load objects that are the same file (path, build id and copy) share one
 * *image*.  An image is read at the first lookup that lands in it: elfutils
 * (libdwfl) opens the file, finds the best symbol table (.symtab, the debug
 * file's .symtab, .dynsym), and we copy its function symbols, plus the PLT
 * entries we decode, into one array sorted by address, aliases merged.
 * Functions (struct sonde_func) are made only for symbols that a lookup or
 * a find hits, so a large library costs its symbol array, not thousands of
 * demangled names.
 *
 * Lookups go through a hash table keyed by the frame address (with the
 * SONDE_PC_EXACT bit for exact addresses).  Where different objects held
 * one address over time (dlclose, then another dlopen there) the entry
 * says "shared" and a second table keyed by (address, object) answers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/safeopen.h"
#include "base/arena.h"
#include "symbols/dynfunc.h"
#include "symbols/framekind.h"
#include "symbols/srcinfo.h"
#include "symbols/archive.h"
#include "symbols/symbols.h"
#include "base/partition.h"
#include "base/u64map.h"

/* The demangler is libiberty's, as in binutils and gdb: one library for
 * C++ (the Itanium ABI, the same code as libstdc++'s __cxa_demangle),
 * Rust's legacy mangling (which looks like C++'s and ends in a hash) and
 * Rust's v0 mangling ("_R..."), which the C++ runtime does not know.
 * Static: nothing to relocate at sonde's start. */
#include <libiberty/demangle.h>

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

/* ---- hash map: (key, key2) -> value ------------------------------------- */

/*
 * Open addressing, linear probing.  val 0 marks an empty slot, so callers
 * store id + 1.  One entry is 16 bytes so that a probe touches one line.
 */
struct map_entry {
	uint64_t key;
	uint32_t key2;
	uint32_t val;
};

struct map {
	struct map_entry *e;
	size_t cap, n; /* cap: a power of two, or 0 */
};

static inline size_t mix(uint64_t k, uint32_t k2)
{
	k ^= (uint64_t)k2 * 0x9e3779b97f4a7c15ull;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static inline uint32_t map_get(const struct map *m, uint64_t key, uint32_t key2)
{
	if (!m->cap)
		return 0;
	for (size_t i = mix(key, key2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct map_entry *e = &m->e[i];

		if (!e->val)
			return 0;
		if (e->key == key && e->key2 == key2)
			return e->val;
	}
}

/* Sets key -> val (val != 0), replacing an old value.  -1 out of memory
 * (the map is unchanged). */
static int map_put(struct map *m, uint64_t key, uint32_t key2, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		struct map_entry *ne = calloc(ncap, sizeof(*ne));

		if (!ne)
			return -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->e[i].val)
				continue;
			size_t j = mix(m->e[i].key, m->e[i].key2) & (ncap - 1);

			while (ne[j].val)
				j = (j + 1) & (ncap - 1);
			ne[j] = m->e[i];
		}
		free(m->e);
		m->e = ne;
		m->cap = ncap;
	}
	size_t i = mix(key, key2) & (m->cap - 1);

	while (m->e[i].val && !(m->e[i].key == key && m->e[i].key2 == key2))
		i = (i + 1) & (m->cap - 1);
	if (!m->e[i].val)
		m->n++;
	m->e[i].key = key;
	m->e[i].key2 = key2;
	m->e[i].val = val;
	return 0;
}

static void map_release(struct map *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

/* ---- the handle ---------------------------------------------------------- */

/* One function symbol (aliases merged); an image's symbols are sorted by
 * lo, all lo distinct. */
struct sym {
	uint64_t lo, hi;
	uint64_t maxend; /* the largest hi of this and every lower symbol */
	const char *name; /* arena; "puts@plt" for PLT entries */
	uint32_t func;	  /* function id + 1, 0 until one is made */
	bool plt;
};

enum image_state {
	IMG_UNREAD,
	IMG_SYMS,  /* symbols read: symbols and gap functions */
	IMG_ADDRS, /* symbols unusable: one function per address */
};

struct image {
	const struct sonde_object *obj; /* its first object */
	enum image_state state;
	uint64_t lo, hi;   /* the file's own address range (IMG_SYMS) */
	bool gap_addrs;	   /* only PLT symbols: gaps are named per address */
	struct sym *syms;
	size_t nsyms;
	struct map synth;  /* gap start or address -> function id + 1 */
	const char *file;  /* the file read, once it is known to be the one loaded */
	struct srcobj *src; /* its DWARF, opened at the first source lookup */
	bool src_tried;
	uint32_t *byname;  /* syms indices sorted by name, built at the first inline */
	struct map inl;    /* name hash -> function id + 1 of an inline-only function */
};

#define FUNC_CHUNK 1024u
#define CACHE_SHARED UINT32_MAX /* cache value: ask the (pc, object) table */

struct sonde_syms {
	const struct sonde_exp *exp;
	const struct sonde_object *objs;
	size_t nobjs;
	uint32_t *obj_image; /* object index -> image index */
	bool *obj_shared;    /* a different file held some of its addresses */
	struct image *images;
	size_t nimages;

	char *debug_path; /* elfutils' debuginfo_path: ":.debug:ROOT" */
	Dwfl_Callbacks cb;

	struct sonde_func **chunks; /* FUNC_CHUNK functions each */
	size_t nchunks, capchunks;
	uint32_t nfuncs;
	struct sonde_func *oom; /* the "<out of memory>" function, once needed */

	struct map cache;   /* pc | exact bit -> id + 1, or CACHE_SHARED */
	struct map cache2;  /* (pc | exact bit, object index) -> id + 1 */
	struct map unknown; /* address in no object -> id + 1; key2 1: dynamic
			     * function entry index -> id + 1 */
	struct sonde_dynfuncs *dyn; /* jit.map, read at the first address in no object */
	bool dyn_read;

	char **problems;
	size_t nproblems, capproblems;
	bool problems_oom;
	/* Objects read with no function symbols: not a problem of the numbers,
	 * so not among the problems (a stripped program and its plugins made
	 * a dozen warnings of them); sonde print says their count once. */
	char **unnamed;
	size_t nunnamed, capunnamed;
	/* Each list's strings by hash (strset_add) */
	struct u64map problem_set, unnamed_set;

	struct arena_chunk *arena;
	struct tailmemo *tailmemo; /* lib/symbols/tailcall.c's answers */

	/* Frames of kinds other than native (framekind.h): (pc, kind |
	 * exact << 8) -> id + 1; the kinds' states, by module; their
	 * functions by the hash of the mangled name xor the object's
	 * address -> id + 1 (the first of a hash), for sonde_syms_named. */
	struct map frames;
	struct kstate {
		const struct sonde_frame_module *k;
		void *state;
	} kst[8];
	size_t nkst;
	struct map knamed;
};

/*
 * Appends a copy of str to the list v (n strings, cap) unless it holds it:
 * found by hash in set (hash -> index + 1 of the first string with it),
 * by comparing only where two strings share a hash.  A scan of the list
 * made n objects that each cannot be read (a corrupted map.xml) n^2.
 * false out of memory.
 */
static bool strset_add(struct u64map *set, char ***v, size_t *n, size_t *cap, const char *str)
{
	uint64_t h = u64map_hash_str(str);
	long i = u64map_get(set, h);

	if (i >= 0 && !strcmp((*v)[i], str))
		return true;
	for (size_t j = 0; i >= 0 && j < *n; j++) /* another string with its hash */
		if (!strcmp((*v)[j], str))
			return true;
	char *p = strdup(str);

	if (!p || *n >= UINT32_MAX - 1 || sonde_grow(v, cap, *n + 1, sizeof(**v), 8) ||
	    (i < 0 && u64map_put(set, h, (uint32_t)*n) < 0)) {
		free(p);
		return false;
	}
	(*v)[(*n)++] = p;
	return true;
}

static void add_problem(struct sonde_syms *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_problem(struct sonde_syms *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!strset_add(&s->problem_set, &s->problems, &s->nproblems, &s->capproblems, buf))
		s->problems_oom = true;
}

static void add_unnamed(struct sonde_syms *s, const char *file)
{
	if (!strset_add(&s->unnamed_set, &s->unnamed, &s->nunnamed, &s->capunnamed, file))
		s->problems_oom = true;
}

void sonde_syms_problem(struct sonde_syms *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	add_problem(s, "%s", buf);
}

static inline struct sonde_func *slot(const struct sonde_syms *s, uint32_t id)
{
	return &s->chunks[id / FUNC_CHUNK][id % FUNC_CHUNK];
}

/* Makes sure the slot of function id exists. */
static int ensure_slot(struct sonde_syms *s, uint32_t id)
{
	while (id / FUNC_CHUNK >= s->nchunks) {
		if (sonde_grow(&s->chunks, &s->capchunks, s->nchunks + 1, sizeof(*s->chunks), 16))
			return -1;
		struct sonde_func *c = calloc(FUNC_CHUNK, sizeof(*c));

		if (!c)
			return -1;
		s->chunks[s->nchunks++] = c;
	}
	return 0;
}

/*
 * The fallback when memory runs out.  The slot of id nfuncs always exists
 * (new_func() keeps one spare), so this never allocates a slot.
 */
static const struct sonde_func *oom_func(struct sonde_syms *s)
{
	if (!s->oom) {
		struct sonde_func *f = slot(s, s->nfuncs);

		memset(f, 0, sizeof(*f));
		f->id = s->nfuncs++;
		f->mangled = f->name_long = f->name_short = "<out of memory>";
		f->synthesized = true;
		s->oom = f;
		add_problem(s, "out of memory while reading symbols; some functions are "
			       "shown as \"<out of memory>\"");
	}
	return s->oom;
}

/* A new zeroed function with the next id, or NULL out of memory (then no
 * more functions are made: every later new one is the oom function). */
static struct sonde_func *new_func(struct sonde_syms *s)
{
	if (s->oom || s->nfuncs >= UINT32_MAX - 2 || ensure_slot(s, s->nfuncs + 1))
		return NULL;
	struct sonde_func *f = slot(s, s->nfuncs);

	memset(f, 0, sizeof(*f));
	f->id = s->nfuncs++;
	return f;
}

/* A synthesized function: the name is all three names. */
static const struct sonde_func *synth_func(struct sonde_syms *s, const struct sonde_object *o,
					   uint64_t lo, uint64_t hi, const char *name)
{
	char *n = name ? arena_strdup(&s->arena, name) : NULL;
	struct sonde_func *f = n ? new_func(s) : NULL;

	if (!f)
		return oom_func(s);
	f->mangled = f->name_long = f->name_short = n;
	f->object = o;
	f->lo = lo;
	f->hi = hi;
	f->synthesized = true;
	return f;
}

/* ---- names ---------------------------------------------------------------- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool ends(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* snprintf-like output: what fits, and the length it would have. */
struct emit {
	char *buf;
	size_t size, len;
};

static void emit_str(struct emit *e, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, e->len++)
		if (e->len + 1 < e->size)
			e->buf[e->len] = s[i];
}

/* The length of an operator's own characters at s[i] ("operator<<",
 * "operator()", "operator< <int>"'s "operator< "), 0 when no operator
 * starts there. */
static size_t operator_len(const char *s, size_t i, size_t n)
{
	if (s[i] != 'o' || (i > 0 && ident_char(s[i - 1])) || n - i < 8 || memcmp(s + i, "operator", 8) ||
	    (i + 8 < n && ident_char(s[i + 8])))
		return 0;
	size_t j = i + 8;

	if (j + 1 < n && ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']')))
		return j + 2 - i;
	while (j < n && strchr("+-*/%^&|~!=<>,", s[j]))
		j++;
	return j - i;
}

/* Template argument lists longer than this are shown as "<...>". */
#define SHORT_TEMPLATE_ARGS 16

/* s[0..n) with every template argument list longer than
 * SHORT_TEMPLATE_ARGS characters collapsed to "<...>" (the outermost such:
 * "std::map<...>::find"), operators' own '<' and '>' kept. */
static void collapse(struct emit *e, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t op = operator_len(s, i, n);

		if (op) {
			emit_str(e, s + i, op);
			i += op;
			continue;
		}
		if (s[i] != '<') {
			emit_str(e, s + i, 1);
			i++;
			continue;
		}
		/* the matching '>' (brackets of every kind nest) */
		int depth = 0;
		size_t j = i;

		for (; j < n; j++) {
			size_t inner = operator_len(s, j, n);

			if (inner) {
				j += inner - 1;
				continue;
			}
			if (strchr("<([{", s[j]))
				depth++;
			else if (strchr(">)]}", s[j]) && --depth == 0)
				break;
		}
		if (j < n && j - i - 1 > SHORT_TEMPLATE_ARGS) {
			emit_str(e, "<...>", 5);
			i = j + 1;
		} else {
			emit_str(e, s + i, 1);
			i++;
		}
	}
}

size_t sonde_sym_short_name(const char *name_long, char *buf, size_t size)
{
	static const char *const prefixes[] = {
		"non-virtual thunk to ",
		"virtual thunk to ",
		"covariant return thunk to ",
		"transaction clone for ",
	};
	static const char *const quals[] = {
		" const", " volatile", " restrict", " &&", " &", " noexcept", " transaction_safe",
	};
	const char *s = name_long;
	const char *prefix = "";

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts(s, prefixes[i])) {
			prefix = prefixes[i];
			s += strlen(prefix);
			break;
		}

	/* Clone suffixes ("[clone .cold]") stay; they end the name. */
	size_t n = strlen(s);
	const char *clone = strstr(s, " [clone ");
	const char *suffix = "";

	if (clone) {
		suffix = clone;
		n = (size_t)(clone - s);
	}

	/* Qualifiers after the parameter list. */
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			if (ends(s, n, quals[i])) {
				n -= strlen(quals[i]);
				again = true;
			}
	}

	/* The parameter list: the '(' matching the last ')'. */
	if (n > 0 && s[n - 1] == ')') {
		int depth = 0;

		for (size_t i = n; i-- > 0;) {
			if (s[i] == ')')
				depth++;
			else if (s[i] == '(' && --depth == 0) {
				if (i > 0)
					n = i;
				break;
			}
		}
	}

	/* The return type: up to the last space outside brackets. */
	size_t start = 0;
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == 'o' && (i == 0 || !ident_char(s[i - 1])) && n - i >= 8 &&
		    !memcmp(s + i, "operator", 8) && (i + 8 == n || !ident_char(s[i + 8]))) {
			size_t j = i + 8;

			if (j < n && s[j] == ' ') {
				if (depth == 0)
					break; /* "operator new", "operator int": the rest is the name */
				i = j;
				continue;
			}
			bool pair = j + 1 < n && ((s[j] == '(' && s[j + 1] == ')') ||
						  (s[j] == '[' && s[j + 1] == ']'));

			if (pair)
				j += 2;
			else
				while (j < n && strchr("+-*/%^&|~!=<>,", s[j]))
					j++;
			if (j + 1 < n && s[j] == ' ' && s[j + 1] == '<')
				j++; /* "operator< <int>" */
			i = j - 1;
			continue;
		}
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0)
			start = i + 1;
	}
	if (start >= n)
		start = 0;
	struct emit e = { buf, size, 0 };

	emit_str(&e, prefix, strlen(prefix));
	collapse(&e, s + start, n - start);
	emit_str(&e, suffix, strlen(suffix));
	if (size)
		buf[e.len < size ? e.len : size - 1] = '\0';
	return e.len;
}

/*
 * Demangles mangled (with "@plt" kept at the end) into malloc'ed long,
 * short and full names.  Rust's: long and short without the hash of a
 * legacy symbol or the crate disambiguators of a v0 one, full with them;
 * C++'s full is its long (*full NULL).  1 when it demangles, 0 when it
 * does not (C names: all three NULL), -1 out of memory.
 */
static int demangle_tmp(const char *mangled, char **lng, char **shrt, char **full)
{
	*lng = *shrt = *full = NULL;
	if (mangled[0] != '_' || (mangled[1] != 'Z' && mangled[1] != 'R'))
		return 0;

	size_t n = strlen(mangled);
	bool plt = ends(mangled, n, "@plt");
	char *sym = strndup(mangled, plt ? n - 4 : n);

	if (!sym)
		return -1;
	char *d = rust_demangle(sym, DMGL_PARAMS | DMGL_ANSI), *v = NULL;

	if (d)
		v = rust_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE);
	else if (mangled[1] == 'Z')
		d = cplus_demangle_v3(sym, DMGL_PARAMS | DMGL_ANSI);
	free(sym);
	if (!d) {
		free(v);
		return 0;
	}
	if (v && !strcmp(v, d)) {
		free(v);
		v = NULL;
	}
	size_t dn = strlen(d), sn = sonde_sym_short_name(d, NULL, 0), vn = v ? strlen(v) : 0;
	char *l = malloc(dn + 5), *sh = malloc(sn + 5), *fl = v ? malloc(vn + 5) : NULL;

	if (!l || !sh || (v && !fl)) {
		free(d);
		free(v);
		free(l);
		free(sh);
		free(fl);
		return -1;
	}
	memcpy(l, d, dn);
	strcpy(l + dn, plt ? "@plt" : "");
	sonde_sym_short_name(d, sh, sn + 1);
	strcpy(sh + sn, plt ? "@plt" : "");
	if (v) {
		memcpy(fl, v, vn);
		strcpy(fl + vn, plt ? "@plt" : "");
	}
	free(d);
	free(v);
	*lng = l;
	*shrt = sh;
	*full = fl;
	return 1;
}

int sonde_sym_demangle(const char *mangled, char **lng, char **shrt, char **full)
{
	return demangle_tmp(mangled, lng, shrt, full);
}

/* The names of mangled in the arena; all three are mangled itself when it
 * does not demangle, *full NULL when it is the long name.  -1 out of
 * memory. */
static int demangle(struct sonde_syms *s, const char *mangled, const char **lng, const char **shrt,
		    const char **full)
{
	char *l, *sh, *fl;
	int r = demangle_tmp(mangled, &l, &sh, &fl);

	*lng = *shrt = mangled;
	*full = NULL;
	if (r <= 0)
		return r;
	*lng = arena_strdup(&s->arena, l);
	*shrt = arena_strdup(&s->arena, sh);
	*full = fl ? arena_strdup(&s->arena, fl) : NULL;
	bool oom = !*lng || !*shrt || (fl && !*full);
	free(l);
	free(sh);
	free(fl);
	return oom ? -1 : 0;
}

/* ---- reading an image ------------------------------------------------------ */

/* A symbol as read, before aliases are merged. */
struct rawsym {
	uint64_t lo, size;
	uint64_t cap; /* end of its section (unsized symbols stop there), 0 unknown */
	const char *name; /* valid while the Dwfl lives, or arena */
	int rank;	  /* binding: 0 global, 1 weak, 2 local */
	bool plt;
};

struct rawvec {
	struct rawsym *v;
	size_t n, cap;
	bool oom;
};

static void raw_push(struct rawvec *r, const struct rawsym *x)
{
	if (sonde_grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v), 256)) {
		r->oom = true;
		return;
	}
	r->v[r->n++] = *x;
}

static int underscores(const char *s)
{
	int k = 0;

	while (s[k] == '_')
		k++;
	return k;
}

/* Orders by address, the best alias first. */
static int cmp_raw(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	int ua = underscores(a->name), ub = underscores(b->name);

	if (ua != ub)
		return ua - ub;
	size_t la = strlen(a->name), lb = strlen(b->name);

	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

struct gotname {
	uint64_t got;
	const char *name;
};

static int cmp_got(const void *pa, const void *pb)
{
	const struct gotname *a = pa, *b = pb;

	return a->got < b->got ? -1 : a->got > b->got;
}

static const char *got_lookup(const struct gotname *g, size_t n, uint64_t addr)
{
	size_t lo = PARTITION_POINT(0, n, i, g[i].got < addr);

	return lo < n && g[lo].got == addr ? g[lo].name : NULL;
}

/*
 * PLT entries of the main file, as "name@plt".  x86-64: each entry of
 * .plt, .plt.sec and .plt.got jumps through a GOT slot (jmp *disp(%rip),
 * ff 25) that a JUMP_SLOT or GLOB_DAT relocation names.  AArch64: .plt
 * entries after the 32-byte header follow .rela.plt in order.
 */
static void read_plt(struct sonde_syms *s, Elf *elf, struct rawvec *raw)
{
	GElf_Ehdr eh;
	size_t shstrndx;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	bool x86 = eh.e_machine == EM_X86_64;
	bool arm = eh.e_machine == EM_AARCH64;

	if (!x86 && !arm)
		return;

	/* GOT slot -> symbol name, from the relocations against .dynsym. */
	struct gotname *g = NULL, *jslots = NULL;
	size_t ng = 0, capg = 0, nj = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *rd = elf_getdata(scn, NULL), *sd = symscn ? elf_getdata(symscn, NULL) : NULL;

		if (!rd || !sd || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		size_t nrel = sh.sh_size / sh.sh_entsize;

		for (size_t i = 0; i < nrel; i++) {
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(rd, (int)i, &r))
				break;
			unsigned type = (unsigned)GELF_R_TYPE(r.r_info);
			size_t si = GELF_R_SYM(r.r_info);
			bool want = x86 ? (type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT)
					: type == R_AARCH64_JUMP_SLOT;

			if (!want || !si || !gelf_getsym(sd, (int)si, &sym))
				continue;
			const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);

			if (!name || !*name)
				continue;
			if (sonde_grow(&g, &capg, ng + 1, sizeof(*g), 64)) {
				raw->oom = true;
				goto out;
			}
			g[ng].got = r.r_offset;
			g[ng].name = name;
			ng++;
		}
	}
	if (!ng)
		goto out;
	if (arm) {
		/* JUMP_SLOTs in relocation order, before sorting by GOT. */
		jslots = malloc(ng * sizeof(*jslots));
		if (!jslots) {
			raw->oom = true;
			goto out;
		}
		memcpy(jslots, g, ng * sizeof(*g));
		nj = ng;
	}
	qsort(g, ng, sizeof(*g), cmp_got);

	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(sname = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") && strcmp(sname, ".plt.got"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);

		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		const unsigned char *p = d->d_buf;

		/* The lazy-binding header of .plt (x86-64: push GOT+8; jmp
		 * *GOT+16; AArch64: its first 32 bytes): a call's first way
		 * into the dynamic linker's resolver, sampled now and then at
		 * a program's first call of a function. */
		if (!strcmp(sname, ".plt") &&
		    ((arm && sh.sh_size >= 32) || (!arm && sh.sh_size >= 16 && p[0] == 0xff && p[1] == 0x35))) {
			struct rawsym x = {
				.lo = sh.sh_addr, .size = arm ? 32 : 16, .name = "_dl_runtime_resolve@plt", .plt = true
			};

			raw_push(raw, &x);
		}
		if (arm) {
			if (strcmp(sname, ".plt"))
				continue;
			for (size_t k = 0; 32 + 16 * k + 16 <= sh.sh_size && k < nj; k++) {
				char *name = arena_printf(&s->arena, "%s@plt", jslots[k].name);
				struct rawsym x = {
					.lo = sh.sh_addr + 32 + 16 * k, .size = 16, .name = name, .plt = true
				};

				if (name)
					raw_push(raw, &x);
			}
			continue;
		}
		uint64_t es = sh.sh_entsize ? sh.sh_entsize : 16;

		for (uint64_t off = 0; off + es <= sh.sh_size; off += es) {
			for (uint64_t k = off; k + 6 <= off + es; k++) {
				if (p[k] != 0xff || p[k + 1] != 0x25)
					continue;
				int32_t disp;

				memcpy(&disp, p + k + 2, 4);
				const char *sym = got_lookup(g, ng, sh.sh_addr + k + 6 + (int64_t)disp);

				if (!sym)
					continue;
				char *name = arena_printf(&s->arena, "%s@plt", sym);
				struct rawsym x = {
					.lo = sh.sh_addr + off, .size = es, .name = name, .plt = true
				};

				if (name)
					raw_push(raw, &x);
				else
					raw->oom = true;
				break;
			}
		}
	}
out:
	free(g);
	free(jslots);
}

static char *hex(const unsigned char *b, int n, char *buf, size_t size)
{
	size_t k = 0;

	for (int i = 0; i < n && k + 3 <= size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%02x", b[i]);
	buf[k] = 0;
	return buf;
}

/* Reads img's symbols; on any failure the image falls back to addresses
 * with a problem saying why. */
static void image_load(struct sonde_syms *s, struct image *img)
{
	const struct sonde_object *o = img->obj;
	char file[4096];
	const char *why = "its functions are shown as addresses";
	Dwfl *dwfl = NULL;
	bool archived = false; /* file is a copy in the experiment's archives/ */
	struct rawvec raw = { 0 };

	img->state = IMG_ADDRS;
	/* An archived copy is the file that was loaded (it is named by the
	 * recorded build id), even when the recorded path was rebuilt since. */
	if (!o->copy && o->path[0] == '/' &&
	    sonde_archive_find(sonde_exp_info(s->exp)->dir, o->path, o->buildid, file,
			       sizeof(file))) {
		archived = true;
	} else if (o->copy) {
		snprintf(file, sizeof(file), "%s/%s", sonde_exp_info(s->exp)->dir, o->copy);
	} else if (o->path[0] != '/') {
		add_problem(s, "'%s' is not a file; %s", o->path, why);
		return;
	} else {
		snprintf(file, sizeof(file), "%s", o->path);
	}
	int fd = sonde_open_regular(file); /* a FIFO would block: regular files only */

	if (fd < 0) {
		add_problem(s, "cannot open '%s': %s; %s", file, sonde_open_strerror(errno), why);
		return;
	}
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		close(fd);
		add_problem(s, "cannot read '%s': %s; %s", file, dwfl_errmsg(-1), why);
		return;
	}
	Dwfl_Module *m = dwfl_report_elf(dwfl, o->name ? o->name : o->path, file, fd, 0, true);

	if (!m) {
		close(fd); /* not consumed on failure */
		add_problem(s, "cannot read '%s': %s; %s", file, dwfl_errmsg(-1), why);
		goto out;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(m, &bias);

	/* The file must be the one that was loaded. */
	if (o->buildid && *o->buildid) {
		/* Says how the user could have kept it readable. */
		const char *no_copy = ", and the experiment has no archived copy";
		const unsigned char *bits = NULL;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(m, &bits, &vaddr);
		char h[256];

		if (n <= 0) {
			add_problem(s, "'%s' has changed since the experiment "
				       "(it has no build id, recorded %s)%s; %s",
				    file, o->buildid, archived ? "" : no_copy, why);
			goto out;
		}
		if (strcasecmp(hex(bits, n, h, sizeof(h)), o->buildid)) {
			add_problem(s, "'%s' has changed since the experiment "
				       "(build id %s, recorded %s)%s; %s",
				    file, h, o->buildid, archived ? "" : no_copy, why);
			goto out;
		}
	}
	Dwarf_Addr mlo = 0, mhi = 0;

	dwfl_module_info(m, NULL, &mlo, &mhi, NULL, NULL, NULL, NULL);
	img->lo = mlo;
	img->hi = mhi;
	/* Without a build id, the end of the segments must still match. */
	if ((!o->buildid || !*o->buildid) && o->hi > o->base && mhi != o->hi - o->base) {
		add_problem(s, "'%s' has changed since the experiment (its segments end at 0x%" PRIx64
			       ", recorded 0x%" PRIx64 "); %s",
			    file, (uint64_t)mhi, o->hi - o->base, why);
		goto out;
	}

	img->file = arena_strdup(&s->arena, file);
	int nsym = dwfl_module_getsymtab(m);

	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *symelf = NULL;
		Dwarf_Addr sbias = 0;
		const char *name = dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, &symelf, &sbias);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    shndx == SHN_UNDEF || shndx == (GElf_Word)-1 || !addr)
			continue;
		int rank = bind == STB_GLOBAL || bind == STB_GNU_UNIQUE ? 0 : bind == STB_WEAK ? 1 : 2;
		/* .symtab spells versioned definitions "__libc_start_main@@GLIBC_2.34";
		 * the version is not part of the function's name. */
		const char *at = strchr(name, '@');
		if (at && at > name) {
			name = arena_printf(&s->arena, "%.*s", (int)(at - name), name);
			if (!name)
				goto oom;
		}
		struct rawsym x = { .lo = addr, .size = sym.st_size, .name = name, .rank = rank };

		if (!x.size && symelf && shndx < SHN_LORESERVE) {
			/* (Not dwfl_module_address_section(): it loads DWARF.) */
			Elf_Scn *scn = elf_getscn(symelf, shndx);
			GElf_Shdr sh;

			if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC))
				x.cap = sh.sh_addr + sbias + sh.sh_size;
		}
		raw_push(&raw, &x);
	}
	size_t nfunc = raw.n;

	read_plt(s, elf, &raw);
	if (raw.oom)
		goto oom;
	if (!nfunc) {
		/* Stripped, no debug file: the PLT may still be named. */
		add_unnamed(s, file);
		if (!raw.n)
			goto out;
		img->gap_addrs = true;
	}

	/* Merge aliases: the first of each address is the best. */
	qsort(raw.v, raw.n, sizeof(*raw.v), cmp_raw);
	img->syms = calloc(raw.n, sizeof(*img->syms));
	if (!img->syms)
		goto oom;
	size_t n = 0;

	for (size_t i = 0; i < raw.n;) {
		size_t j = i;
		uint64_t size = 0, cap = 0;

		for (; j < raw.n && raw.v[j].lo == raw.v[i].lo; j++) {
			if (raw.v[j].size > size)
				size = raw.v[j].size;
			if (raw.v[j].cap > cap)
				cap = raw.v[j].cap;
		}
		struct sym *y = &img->syms[n];
		uint64_t last = img->hi > raw.v[i].lo ? img->hi : raw.v[i].lo + 1;
		uint64_t next = j < raw.n ? raw.v[j].lo : last;

		y->lo = raw.v[i].lo;
		if (size)
			y->hi = y->lo + size;
		else {
			y->hi = next;
			if (cap > y->lo && cap < y->hi)
				y->hi = cap;
		}
		y->name = arena_strdup(&s->arena, raw.v[i].name);
		if (!y->name)
			goto oom;
		y->plt = raw.v[i].plt;
		y->maxend = n && img->syms[n - 1].maxend > y->hi ? img->syms[n - 1].maxend : y->hi;
		n++;
		i = j;
	}
	img->nsyms = n;
	img->state = IMG_SYMS;
	goto out;
oom:
	free(img->syms);
	img->syms = NULL;
	img->nsyms = 0;
	add_problem(s, "out of memory reading '%s'; %s", file, why);
out:
	free(raw.v);
	if (dwfl)
		dwfl_end(dwfl);
}

/* ---- lookups --------------------------------------------------------------- */

static struct srcobj *image_src(struct sonde_syms *s, struct image *img);

/* Whether a symbol may be gfortran's: a module procedure
 * ("__physics_MOD_relax"), the main program ("MAIN__"), an internal
 * procedure ("sweep.0": a name and a number; GNU C's nested functions are
 * named so too, and their compile unit says C). */
static bool fortranish(const char *n)
{
	if (!strcmp(n, "MAIN__") || (starts(n, "__") && strstr(n, "_MOD_")))
		return true;
	const char *dot = strchr(n, '.');

	if (!dot || dot == n || !dot[1])
		return false;
	for (const char *p = dot + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* A Fortran procedure's name as its language writes it (srcinfo.h),
 * from DWARF, else from the symbol ("__physics_MOD_relax" is
 * "physics::relax"); NULL when the symbol is none of gfortran's. */
static const char *fortran_name(struct sonde_syms *s, struct image *img, const struct sym *y)
{
	if (!fortranish(y->name))
		return NULL;
	struct srcobj *so = image_src(s, img);
	const char *q = so ? srcobj_fortran_name(so, y->lo) : NULL;

	if (q)
		return arena_strdup(&s->arena, q);
	const char *mod = strstr(y->name, "_MOD_");

	if (!starts(y->name, "__") || !mod || mod == y->name + 2 || !mod[5])
		return NULL;
	char buf[512];
	int k = snprintf(buf, sizeof(buf), "%.*s::%s", (int)(mod - y->name - 2), y->name + 2, mod + 5);

	return k > 0 && (size_t)k < sizeof(buf) ? arena_strdup(&s->arena, buf) : NULL;
}

static const struct sonde_func *func_of_sym(struct sonde_syms *s, struct image *img, struct sym *y)
{
	if (y->func)
		return slot(s, y->func - 1);
	const char *lng, *shrt, *full;

	if (demangle(s, y->name, &lng, &shrt, &full))
		return oom_func(s);
	struct sonde_func *f = new_func(s);

	if (!f)
		return oom_func(s);
	f->mangled = y->name;
	f->name_long = lng;
	f->name_short = shrt;
	f->name_full = full;
	if (lng == y->name) {
		const char *fn = fortran_name(s, img, y);

		if (fn)
			f->name_long = f->name_short = fn;
	}
	f->object = img->obj;
	f->lo = y->lo;
	f->hi = y->hi;
	f->plt = y->plt;
	y->func = f->id + 1;
	return f;
}

/* The function of the single address a in img. */
static const struct sonde_func *addr_func(struct sonde_syms *s, struct image *img, uint64_t a)
{
	const struct sonde_object *o = img->obj;
	uint32_t v = map_get(&img->synth, a, 0);
	char name[512];

	if (v)
		return slot(s, v - 1);
	snprintf(name, sizeof(name), "<static>@0x%" PRIx64 " (%s)", a, o->name ? o->name : o->path);
	const struct sonde_func *f = synth_func(s, o, a, a + 1, name);

	if (f != s->oom)
		map_put(&img->synth, a, 0, f->id + 1);
	return f;
}

/* The function of address a (the object's own address) in img. */
static const struct sonde_func *image_func(struct sonde_syms *s, struct image *img, uint64_t a)
{
	const struct sonde_object *o = img->obj;
	char name[512];

	if (img->state == IMG_UNREAD)
		image_load(s, img);
	if (img->state == IMG_ADDRS)
		return addr_func(s, img, a);

	/* The last symbol starting at or below a. */
	size_t lo = PARTITION_POINT(0, img->nsyms, i, img->syms[i].lo <= a);
	if (lo > 0 && a < img->syms[lo - 1].maxend) {
		/* Some symbol at or below lo - 1 holds a: the nearest one. */
		for (size_t j = lo; j-- > 0;)
			if (a < img->syms[j].hi)
				return func_of_sym(s, img, &img->syms[j]);
	}

	if (img->gap_addrs)
		return addr_func(s, img, a);

	/* A gap: [end of the symbols below, start of the next). */
	uint64_t glo = lo > 0 ? img->syms[lo - 1].maxend : (img->lo < a ? img->lo : a);
	uint64_t ghi = lo < img->nsyms ? img->syms[lo].lo : (img->hi > a ? img->hi : a + 1);
	uint32_t v = map_get(&img->synth, glo, 0);

	if (v) {
		struct sonde_func *f = slot(s, v - 1);

		if (f->hi <= a) /* past the file's end: the last gap grows */
			f->hi = a + 1;
		return f;
	}
	snprintf(name, sizeof(name), "<static>@0x%" PRIx64 " (%s)", glo, o->name ? o->name : o->path);
	const struct sonde_func *f = synth_func(s, o, glo, ghi, name);

	if (f != s->oom)
		map_put(&img->synth, glo, 0, f->id + 1);
	return f;
}

/* A new function named name (copied, demangled) in object o; NULL when
 * memory runs out. */
static struct sonde_func *named_func(struct sonde_syms *s, const char *name, const struct sonde_object *o)
{
	const char *mangled = arena_strdup(&s->arena, name), *lng, *shrt, *full;
	struct sonde_func *f = mangled && demangle(s, mangled, &lng, &shrt, &full) == 0 ? new_func(s) : NULL;

	if (f) {
		f->mangled = mangled;
		f->name_long = lng;
		f->name_short = shrt;
		f->name_full = full;
		f->object = o;
	}
	return f;
}

/* The function of dynamic function entry i (lib/symbols/dynfunc.h). */
static const struct sonde_func *dyn_func(struct sonde_syms *s, long i)
{
	uint32_t v = map_get(&s->unknown, (uint64_t)i, 1);

	if (v)
		return slot(s, v - 1);
	size_t n;
	const struct sonde_dynfunc *e = &sonde_dynfuncs_entries(s->dyn, &n)[i];
	struct sonde_func *f = named_func(s, e->name, sonde_dynfuncs_entry_object(s->dyn, (size_t)i));

	if (!f)
		return oom_func(s);
	f->lo = e->lo;
	f->hi = e->hi;
	map_put(&s->unknown, (uint64_t)i, 1, f->id + 1);
	return f;
}

/* Reads jit.map once; its problems become ours. */
static void dyn_open(struct sonde_syms *s)
{
	bool present;

	s->dyn_read = true;
	s->dyn = sonde_dynfuncs_read(s->exp, &present);
	if (!s->dyn && present)
		add_problem(s, "cannot read '%s': %s; dynamic functions are shown as addresses",
			    SONDE_JIT_MAP_FILE, strerror(errno));
	if (s->dyn && sonde_dynfuncs_ignored(s->dyn))
		add_problem(s, "'%s': %zu lines are not perf map entries (START SIZE NAME); ignored",
			    SONDE_JIT_MAP_FILE, sonde_dynfuncs_ignored(s->dyn));
}

static const struct sonde_func *resolve(struct sonde_syms *s, const struct sonde_object *o, uint64_t a)
{
	if (o)
		return image_func(s, &s->images[s->obj_image[o - s->objs]], a - o->base);
	if (!s->dyn_read)
		dyn_open(s);
	long di = s->dyn ? sonde_dynfuncs_find(s->dyn, a) : -1;

	if (di >= 0)
		return dyn_func(s, di);
	uint32_t v = map_get(&s->unknown, a, 0);

	if (v)
		return slot(s, v - 1);
	char name[64];

	snprintf(name, sizeof(name), "<unknown>@0x%" PRIx64, a);
	const struct sonde_func *f = synth_func(s, NULL, a, a + 1, name);

	if (f != s->oom)
		map_put(&s->unknown, a, 0, f->id + 1);
	return f;
}

const struct sonde_func *sonde_syms_lookup(struct sonde_syms *s, uint64_t pc, bool exact,
					   uint64_t time_ns)
{
	pc &= ~SONDE_PC_EXACT;
	uint64_t key = pc | (exact ? SONDE_PC_EXACT : 0);
	uint32_t v = map_get(&s->cache, key, 0);

	if (v && v != CACHE_SHARED)
		return slot(s, v - 1);

	uint64_t a = exact || !pc ? pc : pc - 1;
	const struct sonde_object *o = sonde_exp_find_object(s->exp, a, time_ns);
	const struct sonde_func *f;

	if (v == CACHE_SHARED || (o && s->obj_shared[o - s->objs])) {
		uint32_t oi = o ? (uint32_t)(o - s->objs) + 1 : 0;
		uint32_t v2 = map_get(&s->cache2, key, oi);

		if (v2)
			return slot(s, v2 - 1);
		f = resolve(s, o, a);
		if (f != s->oom) {
			map_put(&s->cache2, key, oi, f->id + 1);
			if (!v)
				map_put(&s->cache, key, 0, CACHE_SHARED);
		}
		return f;
	}
	f = resolve(s, o, a);
	if (f != s->oom)
		map_put(&s->cache, key, 0, f->id + 1);
	return f;
}

const struct sonde_func *sonde_syms_func(const struct sonde_syms *s, uint32_t id)
{
	return id < s->nfuncs ? slot(s, id) : NULL;
}

size_t sonde_syms_count(const struct sonde_syms *s)
{
	return s->nfuncs;
}

size_t sonde_syms_find(struct sonde_syms *s, const char *name, const struct sonde_func **out,
		       size_t max)
{
	/* Symbols of the images read so far that have no function yet. */
	for (size_t i = 0; i < s->nimages; i++) {
		struct image *img = &s->images[i];

		if (img->state != IMG_SYMS)
			continue;
		for (size_t j = 0; j < img->nsyms; j++) {
			struct sym *y = &img->syms[j];

			if (y->func)
				continue;
			bool match = !strcmp(y->name, name);
			char *lng = NULL, *shrt = NULL, *full = NULL;

			if (!match && demangle_tmp(y->name, &lng, &shrt, &full) > 0)
				match = !strcmp(lng, name) || !strcmp(shrt, name) || (full && !strcmp(full, name));
			free(lng);
			free(shrt);
			free(full);
			if (match)
				func_of_sym(s, img, y);
		}
	}

	/* Dynamic functions not looked up yet. */
	if (!s->dyn_read)
		dyn_open(s);
	size_t nd;
	const struct sonde_dynfunc *de = s->dyn ? sonde_dynfuncs_entries(s->dyn, &nd) : NULL;

	for (size_t i = 0; de && i < nd; i++) {
		bool match = !strcmp(de[i].name, name);
		char *lng = NULL, *shrt = NULL, *full = NULL;

		if (!match && demangle_tmp(de[i].name, &lng, &shrt, &full) > 0)
			match = !strcmp(lng, name) || !strcmp(shrt, name) || (full && !strcmp(full, name));
		free(lng);
		free(shrt);
		free(full);
		if (match)
			dyn_func(s, (long)i);
	}

	size_t k = 0;

	for (uint32_t id = 0; id < s->nfuncs; id++) {
		const struct sonde_func *f = slot(s, id);

		if (strcmp(f->name_short, name) && strcmp(f->name_long, name) && strcmp(f->mangled, name))
			continue;
		if (k < max)
			out[k] = f;
		k++;
	}
	return k;
}

const char *const *sonde_syms_problems(const struct sonde_syms *s, size_t *n)
{
	*n = s->nproblems;
	return (const char *const *)s->problems;
}

const char *const *sonde_syms_unnamed(const struct sonde_syms *s, size_t *n)
{
	*n = s->nunnamed;
	return (const char *const *)s->unnamed;
}

/* ---- open / close ------------------------------------------------------------ */

static uint64_t hash_str(uint64_t h, const char *str)
{
	if (!str || !*str) /* as same_str(): absent = empty */
		return h * 31 + 1;
	for (const unsigned char *p = (const unsigned char *)str; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static bool same_str(const char *a, const char *b)
{
	if (!a || !*a)
		return !b || !*b;
	return b && !strcmp(a, b);
}

static bool same_file(const struct sonde_object *a, const struct sonde_object *b)
{
	return !strcmp(a->path, b->path) && same_str(a->buildid, b->buildid) &&
	       same_str(a->copy, b->copy);
}

static int cmp_obj_lo(const void *pa, const void *pb, void *objs)
{
	const struct sonde_object *a = (const struct sonde_object *)objs + *(const uint32_t *)pa;
	const struct sonde_object *b = (const struct sonde_object *)objs + *(const uint32_t *)pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

struct sonde_syms *sonde_syms_open(const struct sonde_exp *exp)
{
	struct sonde_syms *s = calloc(1, sizeof(*s));
	uint32_t *order = NULL;
	struct map byfile = { 0 };

	if (!s)
		return NULL;
	s->exp = exp;
	s->objs = sonde_exp_objects(exp, &s->nobjs);

	const char *root = getenv("SONDE_DEBUG_ROOT");

	if (!root || !*root)
		root = DEFAULT_DEBUG_ROOT;
	/* Separate debug files archived with the experiment come after the
	 * system's: same build id, same file. */
	char adirs[2 * PATH_MAX + 4];

	sonde_archive_debug_dirs(sonde_exp_info(exp)->dir, adirs, sizeof(adirs));
	if (asprintf(&s->debug_path, ":.debug:%s%s", root, adirs) < 0) {
		s->debug_path = NULL;
		goto fail;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debug_path;

	if (ensure_slot(s, 0))
		goto fail;

	/* Images: one per file. */
	size_t n = s->nobjs;

	s->obj_image = calloc(n ? n : 1, sizeof(*s->obj_image));
	s->obj_shared = calloc(n ? n : 1, sizeof(*s->obj_shared));
	s->images = calloc(n ? n : 1, sizeof(*s->images));
	order = calloc(n ? n : 1, sizeof(*order));
	if (!s->obj_image || !s->obj_shared || !s->images || !order)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct sonde_object *o = &s->objs[i];
		uint64_t h = hash_str(0xcbf29ce484222325ull, o->path);

		h = hash_str(hash_str(h, o->buildid), o->copy);
		uint32_t v = map_get(&byfile, h, 0);

		if (v && same_file(s->images[v - 1].obj, o)) {
			s->obj_image[i] = v - 1;
			continue;
		}
		s->obj_image[i] = (uint32_t)s->nimages;
		s->images[s->nimages].obj = o;
		if (!v && map_put(&byfile, h, 0, (uint32_t)s->nimages + 1))
			goto fail;
		s->nimages++;
	}

	/* Objects whose addresses a different file (or the same file at another
	 * base) also held: their lookups depend on time. */
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_obj_lo, (void *)s->objs);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_object *a = &s->objs[order[i]];

		for (size_t j = i + 1; j < n && s->objs[order[j]].lo < a->hi; j++) {
			const struct sonde_object *b = &s->objs[order[j]];

			if (s->obj_image[order[i]] != s->obj_image[order[j]] || a->base != b->base)
				s->obj_shared[order[i]] = s->obj_shared[order[j]] = true;
		}
	}
	free(order);
	map_release(&byfile);
	return s;
fail:
	free(order);
	map_release(&byfile);
	sonde_syms_close(s);
	return NULL;
}

/* ---- source positions (lib/symbols/srcinfo.h) --------------------------------------- */

/* Whether o is one of the experiment's objects (not a frame kind's or the
 * JIT's pseudo object, which have no image). */
static bool own_object(const struct sonde_syms *s, const struct sonde_object *o)
{
	return o && o >= s->objs && o < s->objs + s->nobjs;
}

static struct image *image_of(struct sonde_syms *s, const struct sonde_object *o)
{
	struct image *img = &s->images[s->obj_image[o - s->objs]];

	if (img->state == IMG_UNREAD)
		image_load(s, img);
	return img;
}

void sonde_syms_read_object(struct sonde_syms *s, const struct sonde_object *o)
{
	if (own_object(s, o))
		image_of(s, o);
}

/* The image's DWARF with a line table, or NULL. */
static struct srcobj *image_src(struct sonde_syms *s, struct image *img)
{
	if (!img->src_tried) {
		img->src_tried = true;
		if (img->file)
			img->src = srcobj_open(img->file, &s->cb);
	}
	return srcobj_has_lines(img->src) ? img->src : NULL;
}

struct tailmemo **sonde_syms_tailmemo(struct sonde_syms *s)
{
	return &s->tailmemo;
}

const struct sonde_exp *sonde_syms_exp(const struct sonde_syms *s)
{
	return s->exp;
}

struct srcobj *sonde_syms_srcobj(struct sonde_syms *s, const struct sonde_object *o)
{
	return own_object(s, o) ? image_src(s, image_of(s, o)) : NULL;
}

int sonde_syms_srcpos(struct sonde_syms *s, uint64_t pc, bool exact, uint64_t time_ns,
		      const struct sonde_srcframe **out)
{
	pc &= ~SONDE_PC_EXACT;
	uint64_t a = exact || !pc ? pc : pc - 1;
	const struct sonde_object *o = sonde_exp_find_object(s->exp, a, time_ns);
	struct srcobj *so = o ? image_src(s, image_of(s, o)) : NULL;

	*out = NULL;
	return so ? srcobj_lookup(so, a - o->base, out) : 0;
}

int sonde_syms_srcpos_at(struct sonde_syms *s, const struct sonde_object *o, uint64_t addr,
			 const struct sonde_srcframe **out)
{
	struct srcobj *so = own_object(s, o) ? image_src(s, image_of(s, o)) : NULL;

	*out = NULL;
	return so ? srcobj_lookup(so, addr, out) : 0;
}

bool sonde_syms_code_range(struct sonde_syms *s, const struct sonde_object *o, uint64_t addr,
			   uint64_t *lo, uint64_t *hi)
{
	if (!own_object(s, o))
		return false;
	image_src(s, image_of(s, o)); /* opens it, lines or not */
	return srcobj_code_range(image_of(s, o)->src, addr, lo, hi);
}

bool sonde_syms_has_lines(struct sonde_syms *s, const struct sonde_object *o)
{
	return own_object(s, o) && image_src(s, image_of(s, o)) != NULL;
}

const char *sonde_syms_object_file(struct sonde_syms *s, const struct sonde_object *o)
{
	return own_object(s, o) ? image_of(s, o)->file : NULL;
}

size_t sonde_syms_file_funcs(struct sonde_syms *s, const struct sonde_object *o, const char *file,
			     const struct sonde_srcfunc **out)
{
	struct srcobj *so = own_object(s, o) ? image_src(s, image_of(s, o)) : NULL;

	*out = NULL;
	return so ? srcobj_file_funcs(so, file, out) : 0;
}

static int cmp_byname(const void *a, const void *b, void *arg)
{
	const struct image *img = arg;

	return strcmp(img->syms[*(const uint32_t *)a].name, img->syms[*(const uint32_t *)b].name);
}

/* The symbol of img named name exactly (by binary search on an index
 * built at the first call), NULL when none; *oom when the index could not
 * be made. */
static struct sym *sym_by_name(struct image *img, const char *name, bool *oom)
{
	if (img->state != IMG_SYMS || !img->nsyms)
		return NULL;
	if (!img->byname) {
		img->byname = malloc(img->nsyms * sizeof(*img->byname));
		if (!img->byname) {
			*oom = true;
			return NULL;
		}
		for (size_t i = 0; i < img->nsyms; i++)
			img->byname[i] = (uint32_t)i;
		qsort_r(img->byname, img->nsyms, sizeof(*img->byname), cmp_byname, img);
	}
	size_t lo = 0, hi = img->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(img->syms[img->byname[mid]].name, name);

		if (!c)
			return &img->syms[img->byname[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct sonde_func *sonde_syms_symbol_in(struct sonde_syms *s, const struct sonde_object *o,
					      const char *name)
{
	struct image *img = image_of(s, o);
	bool oom = false;
	struct sym *y = sym_by_name(img, name, &oom);

	return y && !y->plt ? func_of_sym(s, img, y) : NULL;
}

size_t sonde_syms_symbol_any(struct sonde_syms *s, const char *name, const struct sonde_func **out,
			     size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nimages; i++) {
		bool oom = false;
		struct sym *y;

		/* An image no address has led to yet may hold the name: which
		 * ones were read depends on the order the questions came in. */
		if (s->images[i].state == IMG_UNREAD)
			image_load(s, &s->images[i]);
		y = sym_by_name(&s->images[i], name, &oom);
		if (!y || y->plt)
			continue;
		if (k < max)
			out[k] = func_of_sym(s, &s->images[i], y);
		k++;
	}
	return k;
}

/* The function of a frame kind's pseudo object o named name (knamed);
 * made, synthesized, when there is none. */
static const struct sonde_func *kind_named(struct sonde_syms *s, const struct sonde_object *o, const char *name)
{
	uint64_t h = hash_str(0xcbf29ce484222325ull, name) ^ (uint64_t)(uintptr_t)o;
	uint32_t v = map_get(&s->knamed, h, 0);

	if (v && slot(s, v - 1)->object == o && !strcmp(slot(s, v - 1)->mangled, name))
		return slot(s, v - 1);
	for (uint32_t id = 0; id < s->nfuncs; id++) /* another one with its hash, or not in the map */
		if (slot(s, id)->object == o && !strcmp(slot(s, id)->mangled, name))
			return slot(s, id);
	return sonde_syms_kind_func(s, 0, o, 0, 0, name, NULL, NULL, true);
}

const struct sonde_func *sonde_syms_named(struct sonde_syms *s, const struct sonde_object *o,
					  const char *name)
{
	if (!own_object(s, o))
		return kind_named(s, o, name);
	struct image *img = image_of(s, o);
	bool oom = false;
	struct sym *y = sym_by_name(img, name, &oom);

	if (oom)
		return oom_func(s);
	if (y)
		return func_of_sym(s, img, y);
	/* Only inlined: a function of its own, found again by name. */
	uint64_t h = hash_str(0xcbf29ce484222325ull, name);
	uint32_t v = map_get(&img->inl, h, 0);

	if (v && !strcmp(slot(s, v - 1)->mangled, name))
		return slot(s, v - 1);
	struct sonde_func *f = named_func(s, name, img->obj);

	if (!f)
		return oom_func(s);
	f->inlined = true;
	if (!v)
		map_put(&img->inl, h, 0, f->id + 1);
	return f;
}

/* ---- frames of every kind ------------------------------------------------------ */

const struct sonde_func *sonde_syms_kind_func(struct sonde_syms *s, uint8_t kind, const struct sonde_object *o,
					      uint64_t lo, uint64_t hi, const char *mangled, const char *name_long,
					      const char *name_short, bool synthesized)
{
	const char *m = arena_strdup(&s->arena, mangled);
	const char *l = m && name_long ? arena_strdup(&s->arena, name_long) : m;
	const char *sh = l && name_short ? arena_strdup(&s->arena, name_short) : l;
	struct sonde_func *f = sh ? new_func(s) : NULL;

	if (!f)
		return oom_func(s);
	f->mangled = m;
	f->name_long = l;
	f->name_short = sh;
	f->object = o;
	f->lo = lo;
	f->hi = hi;
	f->synthesized = synthesized;
	f->kind = kind;
	if (o) {
		uint64_t h = hash_str(0xcbf29ce484222325ull, m) ^ (uint64_t)(uintptr_t)o;

		if (!map_get(&s->knamed, h, 0))
			map_put(&s->knamed, h, 0, f->id + 1); /* out of memory: found by a scan */
	}
	return f;
}

void *sonde_syms_kind_state(struct sonde_syms *s, const struct sonde_frame_module *k)
{
	for (size_t i = 0; i < s->nkst; i++)
		if (s->kst[i].k->open == k->open)
			return s->kst[i].state;
	void *st = k->open ? k->open(s) : NULL;

	if (s->nkst == sizeof(s->kst) / sizeof(s->kst[0])) { /* more modules than room */
		if (st && k->close)
			k->close(st);
		return NULL;
	}
	s->kst[s->nkst++] = (struct kstate){ k, st };
	return st;
}

/* A frame of a kind that has no module: "<kind N>@0x...", one per (kind,
 * pc). */
static const struct sonde_func *other_kind_func(struct sonde_syms *s, const struct sonde_frame *f)
{
	char name[64];

	snprintf(name, sizeof(name), "<kind %u>@0x%" PRIx64, f->kind, f->pc);
	return sonde_syms_kind_func(s, f->kind, NULL, f->pc, f->pc + 1, name, NULL, NULL, true);
}

const struct sonde_func *sonde_syms_frame(struct sonde_syms *s, const struct sonde_frame *f, uint64_t time_ns)
{
	if (f->kind == SONDE_FRAME_NATIVE)
		return sonde_syms_lookup(s, f->pc, f->exact, time_ns);
	uint32_t key2 = f->kind | (uint32_t)f->exact << 8;
	uint32_t v = map_get(&s->frames, f->pc, key2);

	if (v)
		return slot(s, v - 1);
	const struct sonde_frame_module *k = sonde_frame_module_of(f->kind);
	const struct sonde_func *fn = k ? k->func(s, sonde_syms_kind_state(s, k), f) : other_kind_func(s, f);

	if (fn != s->oom)
		map_put(&s->frames, f->pc, key2, fn->id + 1);
	return fn;
}

int sonde_syms_frame_srcpos(struct sonde_syms *s, const struct sonde_frame *f, uint64_t time_ns,
			    const struct sonde_srcframe **out)
{
	if (f->kind == SONDE_FRAME_NATIVE)
		return sonde_syms_srcpos(s, f->pc, f->exact, time_ns, out);
	const struct sonde_frame_module *k = sonde_frame_module_of(f->kind);

	*out = NULL;
	if (!k || !k->srcpos)
		return 0;
	const struct sonde_func *fn = sonde_syms_frame(s, f, time_ns);

	return fn->kind != SONDE_FRAME_NATIVE ? k->srcpos(s, sonde_syms_kind_state(s, k), f, fn, out) : 0;
}

bool sonde_syms_frame_place(const struct sonde_frame *f, const struct sonde_func *fn, uint64_t *at,
			    const char **key)
{
	const struct sonde_frame_module *k = f->kind == SONDE_FRAME_NATIVE ? NULL : sonde_frame_module_of(f->kind);

	if (k && k->place)
		return k->place(f, fn, at, key);
	if (!fn->object)
		return false;
	*at = (f->exact || !f->pc ? f->pc : f->pc - 1) - fn->object->base;
	*key = fn->object->path;
	return true;
}

void sonde_syms_close(struct sonde_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nkst; i++)
		if (s->kst[i].state && s->kst[i].k->close)
			s->kst[i].k->close(s->kst[i].state);
	map_release(&s->frames);
	map_release(&s->knamed);
	for (size_t i = 0; i < s->nimages; i++) {
		free(s->images[i].syms);
		map_release(&s->images[i].synth);
		free(s->images[i].byname);
		map_release(&s->images[i].inl);
		srcobj_close(s->images[i].src);
	}
	free(s->images);
	free(s->obj_image);
	free(s->obj_shared);
	free(s->debug_path);
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	map_release(&s->cache);
	map_release(&s->cache2);
	map_release(&s->unknown);
	sonde_dynfuncs_free(s->dyn);
	for (size_t i = 0; i < s->nproblems; i++)
		free(s->problems[i]);
	free(s->problems);
	for (size_t i = 0; i < s->nunnamed; i++)
		free(s->unnamed[i]);
	free(s->unnamed);
	u64map_release(&s->problem_set);
	u64map_release(&s->unnamed_set);
	arena_free(&s->arena);
	tailmemo_free(s->tailmemo);
	free(s);
}
