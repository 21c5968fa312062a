/*
 * javamethods: Java frames (SONDE_FRAME_JAVA_INTERP, _COMPILED) named by
 * the experiment's method table, the text file "methods"
 * (doc/experiment-format.md), one method a line:
 *
 *	# ID CLASS METHOD SIGNATURE SOURCEFILE [BCI:LINE ...]
 *	0x7f3a1c004a10 com/example/Main work (I[Ljava/lang/String;)J Main.java 0:12 4:13 9:15
 *
 * A frame's pc is the method's ID; its function is named as Java profilers
 * show a method: name_long "com.example.Main.work(int, java.lang.String[])"
 * (the class's binary name with dots, the descriptor's parameter types in
 * Java's spelling), name_short "com.example.Main.work", mangled the
 * table's own spelling "com/example/Main.work(I[Ljava/lang/String;)J";
 * its object the class file, the pseudo object "com/example/Main.class"
 * (one per class); its source line the line of the largest BCI at or
 * below the frame's bytecode index.  An ID the table does not hold is the
 * function "<unknown method>@0xID" in the pseudo object "<JAVA>".  Read at
 * the first Java frame; a missing or unreadable table, and lines that are
 * not methods, are problems.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/grow.h"
#include "base/safeopen.h"
#include "base/u64map.h"
#include "symbols/framekind.h"
#include "symbols/srcinfo.h"

#define METHODS_FILE "methods"
#define JAVA_OBJECT "<JAVA>"

struct bciline {
	uint32_t bci, line;
};

struct method {
	uint64_t id;
	const char *clsname; /* binary name with '/': "com/example/Main" */
	const char *name, *sig;
	const char *source; /* NULL when the table says "-" */
	struct bciline *lines; /* sorted by bci */
	uint32_t nlines;
	uint32_t cls;	    /* index in classes */
	const struct sonde_func *fn;
};

struct methods {
	struct sonde_object java; /* "<JAVA>": methods the table does not hold */
	struct method *v;
	size_t n;
	struct u64map byid;	      /* id -> index in v (the last line of an id) */
	struct jclass {
		const char *cls;	  /* "com/example/Main" */
		struct sonde_object *obj; /* its class file "com/example/Main.class" */
	} *classes;
	size_t nclasses, capclasses;
	struct u64map bycls;	      /* class name hash -> the first of its index in classes */
	struct u64map unknown;	      /* an id the table does not hold -> function id */
	struct u64map pos;	      /* (method index, bci) -> index in srcpos */
	struct sonde_srcframe **srcpos; /* in the arena: they never move */
	size_t nsrcpos, capsrcpos;
	struct arena_chunk *arena;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next blank-separated word of *p, NUL-terminated in place; NULL at
 * the end of the line. */
static char *word(char **p)
{
	char *s = *p;

	while (blank(*s))
		s++;
	if (!*s)
		return NULL;
	char *w = s;

	while (*s && !blank(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return w;
}

/* Appends the string t to b (len bytes, at *n), cut at its end. */
static void put(char *b, size_t len, size_t *n, const char *t)
{
	for (; *t && *n + 1 < len; t++)
		b[(*n)++] = *t;
	b[*n] = '\0';
}

/* One Java type of a descriptor at *d in Java's spelling ("int[]",
 * "java.lang.String"), appended to b (len bytes, at *n); advances *d.
 * false when it is not one. */
static bool java_type(const char **d, char *b, size_t len, size_t *n)
{
	static const char *const prim[26] = {
		['B' - 'A'] = "byte", ['C' - 'A'] = "char",  ['D' - 'A'] = "double", ['F' - 'A'] = "float",
		['I' - 'A'] = "int",  ['J' - 'A'] = "long",  ['S' - 'A'] = "short",  ['Z' - 'A'] = "boolean",
		['V' - 'A'] = "void",
	};
	int dims = 0;

	while (**d == '[') {
		dims++;
		(*d)++;
	}
	char c = **d;

	if (c == 'L') {
		const char *e = strchr(*d, ';');
		char cls[512];
		size_t k = 0;

		if (!e || e == *d + 1)
			return false;
		for (const char *q = *d + 1; q < e && k + 1 < sizeof(cls); q++)
			cls[k++] = *q == '/' ? '.' : *q;
		cls[k] = '\0';
		put(b, len, n, cls);
		*d = e + 1;
	} else if (c >= 'A' && c <= 'Z' && prim[c - 'A']) {
		put(b, len, n, prim[c - 'A']);
		(*d)++;
	} else {
		return false;
	}
	while (dims--)
		put(b, len, n, "[]");
	return true;
}

/* "(int, java.lang.String[])" of descriptor "(I[Ljava/lang/String;)J" into
 * b (len bytes); false when sig is not a method descriptor. */
static bool java_params(const char *sig, char *b, size_t len)
{
	size_t n = 0;
	const char *d = sig;
	char ret[512];
	size_t m = 0;

	if (*d++ != '(')
		return false;
	put(b, len, &n, "(");
	for (int k = 0; *d != ')'; k++) {
		if (k)
			put(b, len, &n, ", ");
		if (!java_type(&d, b, len, &n))
			return false;
	}
	put(b, len, &n, ")");
	d++;
	return java_type(&d, ret, sizeof(ret), &m) && !*d; /* a return type, and nothing after it */
}

static int cmp_bci(const void *pa, const void *pb)
{
	const struct bciline *a = pa, *b = pb;

	return a->bci < b->bci ? -1 : a->bci > b->bci;
}

/* Line l of the table into m; false when it is not a method. */
static bool parse_method(struct methods *t, char *l, struct method *m)
{
	char *id = word(&l), *cls = word(&l), *name = word(&l), *sig = word(&l), *src = word(&l), *end;

	if (!src)
		return false;
	errno = 0;
	m->id = strtoull(id, &end, 0);
	if (errno || *end || *id == '-')
		return false;
	size_t cl = strlen(cls);

	if (cls[0] == 'L' && cl > 2 && cls[cl - 1] == ';') { /* JVMTI's class signature */
		cls[cl - 1] = '\0';
		cls++;
	}
	for (char *c = cls; *c; c++)
		if (*c == '.')
			*c = '/';
	m->clsname = cls;
	m->name = name;
	m->sig = sig;
	m->source = strcmp(src, "-") ? src : NULL;
	m->lines = NULL;
	m->nlines = 0;
	m->fn = NULL;
	size_t cap = 0;

	for (char *w; (w = word(&l));) {
		char *colon = strchr(w, ':');
		unsigned long bci, line;

		if (!colon)
			return false;
		*colon = '\0';
		errno = 0;
		bci = strtoul(w, &end, 10);
		if (errno || *end || end == w || bci > 0xffff)
			return false;
		line = strtoul(colon + 1, &end, 10);
		if (errno || *end || end == colon + 1 || line > UINT32_MAX)
			return false;
		if (m->nlines == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			struct bciline *v = (struct bciline *)arena_alloc(&t->arena, ncap * sizeof(*v));

			if (!v)
				return false;
			if (m->nlines)
				memcpy(v, m->lines, m->nlines * sizeof(*v));
			m->lines = v;
			cap = ncap;
		}
		m->lines[m->nlines++] = (struct bciline){ (uint32_t)bci, (uint32_t)line };
	}
	if (m->nlines > 1)
		qsort(m->lines, m->nlines, sizeof(*m->lines), cmp_bci);
	return true;
}

/* The pseudo object of class cls, its class file (made at its first
 * method): its index in classes, -1 out of memory. */
static long class_object(struct methods *t, const char *cls)
{
	uint64_t h = u64map_hash_str(cls);
	long i = u64map_get(&t->bycls, h);

	if (i >= 0 && !strcmp(t->classes[i].cls, cls))
		return i;
	for (size_t j = 0; i >= 0 && j < t->nclasses; j++) /* another class with its hash */
		if (!strcmp(t->classes[j].cls, cls))
			return (long)j;
	struct sonde_object *o = (struct sonde_object *)arena_alloc(&t->arena, sizeof(*o));
	char *path = arena_printf(&t->arena, "%s.class", cls);

	if (!o || !path || sonde_grow(&t->classes, &t->capclasses, t->nclasses + 1, sizeof(*t->classes), 16) ||
	    (i < 0 && u64map_put(&t->bycls, h, (uint32_t)t->nclasses) < 0))
		return -1;
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	o->unload_ns = SONDE_TIME_NEVER;
	t->classes[t->nclasses] = (struct jclass){ cls, o };
	return (long)t->nclasses++;
}

static void methods_close(void *state)
{
	struct methods *t = state;

	free(t->v);
	free(t->classes);
	free(t->srcpos);
	u64map_release(&t->byid);
	u64map_release(&t->bycls);
	u64map_release(&t->unknown);
	u64map_release(&t->pos);
	arena_free(&t->arena);
	free(t);
}

static void *methods_open(struct sonde_syms *s)
{
	const char *dir = sonde_exp_info(sonde_syms_exp(s))->dir;
	struct methods *t = calloc(1, sizeof(*t));
	char path[PATH_MAX];
	size_t len = 0, cap = 0, bad = 0;
	char *text = NULL;

	if (!t)
		return NULL;
	t->java.path = t->java.name = JAVA_OBJECT;
	t->java.unload_ns = SONDE_TIME_NEVER;
	if (snprintf(path, sizeof(path), "%s/%s", dir, METHODS_FILE) >= (int)sizeof(path))
		errno = ENAMETOOLONG;
	else
		text = sonde_read_regular(path, &len);
	if (!text) {
		if (errno == ENOENT)
			sonde_syms_problem(s, "the experiment has Java frames but no '%s' file; Java methods are "
					      "shown as their ids", METHODS_FILE);
		else
			sonde_syms_problem(s, "cannot read '%s': %s; Java methods are shown as their ids",
					   METHODS_FILE, sonde_open_strerror(errno));
		return t;
	}
	/* the words stay in the arena, the text goes */
	char *keep = arena_alloc(&t->arena, len + 1);

	if (keep)
		memcpy(keep, text, len + 1);
	free(text);
	if (!keep)
		goto oom;
	for (char *p = keep, *end = keep + len; p < end;) {
		char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		*eol = '\0';
		char *l = p;

		p = eol + 1;
		l += strspn(l, " \t\r");
		if (!*l || *l == '#')
			continue; /* blank, or a comment */
		struct method m;

		if (strlen(l) != (size_t)(eol - l)) { /* a NUL byte */
			bad++;
			continue;
		}
		for (char *c = l; *c; c++) /* control characters in names (blanks separate) */
			if (((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r') || *c == 0x7f)
				*c = '?';
		if (!parse_method(t, l, &m)) {
			bad++;
			continue;
		}
		long o = class_object(t, m.clsname);

		if (o < 0 || sonde_grow(&t->v, &cap, t->n + 1, sizeof(*t->v), 256))
			goto oom;
		m.cls = (uint32_t)o;
		long i = u64map_get(&t->byid, m.id);

		if (i >= 0) { /* an id written again: the last line counts */
			t->v[i] = m;
			continue;
		}
		if (u64map_put(&t->byid, m.id, (uint32_t)t->n) < 0)
			goto oom;
		t->v[t->n++] = m;
	}
	if (bad)
		sonde_syms_problem(s, "'%s': %zu lines are not methods (ID CLASS METHOD SIGNATURE SOURCEFILE "
				      "[BCI:LINE ...]); skipped", METHODS_FILE, bad);
	return t;
oom:
	sonde_syms_problem(s, "out of memory reading '%s'; Java methods are shown as their ids", METHODS_FILE);
	t->n = 0;
	u64map_release(&t->byid);
	return t;
}

static const struct sonde_func *methods_func(struct sonde_syms *s, void *state, const struct sonde_frame *f)
{
	struct methods *t = state;
	long i = t ? u64map_get(&t->byid, f->pc) : -1;

	if (i >= 0) {
		struct method *m = &t->v[i];

		if (!m->fn) {
			const struct jclass *c = &t->classes[m->cls];
			char lng[1024], shrt[768], mangled[1024], params[512];
			size_t n = 0;

			put(shrt, sizeof(shrt), &n, c->cls);
			for (char *q = shrt; *q; q++)
				if (*q == '/')
					*q = '.';
			put(shrt, sizeof(shrt), &n, ".");
			put(shrt, sizeof(shrt), &n, m->name);
			if (!java_params(m->sig, params, sizeof(params)))
				snprintf(params, sizeof(params), "%s", m->sig); /* not a descriptor: as written */
			n = 0;
			put(lng, sizeof(lng), &n, shrt);
			put(lng, sizeof(lng), &n, params);
			n = 0;
			put(mangled, sizeof(mangled), &n, c->cls);
			put(mangled, sizeof(mangled), &n, ".");
			put(mangled, sizeof(mangled), &n, m->name);
			put(mangled, sizeof(mangled), &n, m->sig);
			m->fn = sonde_syms_kind_func(s, f->kind, c->obj, m->id, m->id + 1, mangled, lng, shrt, false);
		}
		return m->fn;
	}
	long id = t ? u64map_get(&t->unknown, f->pc) : -1;

	if (id >= 0)
		return sonde_syms_func(s, (uint32_t)id);
	char name[64];

	snprintf(name, sizeof(name), "<unknown method>@0x%" PRIx64, f->pc);
	const struct sonde_func *fn = sonde_syms_kind_func(s, f->kind, t ? &t->java : NULL, f->pc, f->pc + 1, name,
							   NULL, NULL, true);

	if (t && fn->kind == f->kind)
		u64map_put(&t->unknown, f->pc, fn->id); /* out of memory: made again next time */
	return fn;
}

/* The line of bytecode index bci in m: that of the largest BCI at or below
 * it; 0 when none is. */
static uint32_t line_of(const struct method *m, uint32_t bci)
{
	uint32_t line = 0;

	for (uint32_t k = 0; k < m->nlines && m->lines[k].bci <= bci; k++)
		line = m->lines[k].line;
	return line;
}

static int methods_srcpos(struct sonde_syms *s, void *state, const struct sonde_frame *f, const struct sonde_func *fn,
			  const struct sonde_srcframe **out)
{
	struct methods *t = state;
	long i = t ? u64map_get(&t->byid, f->pc) : -1;

	(void)s;
	if (i < 0 || t->v[i].fn != fn)
		return 0;
	const struct method *m = &t->v[i];
	uint32_t line = f->aux == SONDE_FRAME_NO_BCI ? 0 : line_of(m, f->aux);

	if (!m->source && !line)
		return 0;
	uint64_t key = (uint64_t)i << 16 | f->aux;
	long k = u64map_get(&t->pos, key);

	if (k < 0) {
		struct sonde_srcframe *sf = (struct sonde_srcframe *)arena_alloc(&t->arena, sizeof(*sf));
		uint32_t decl = 0;

		if (!sf || sonde_grow(&t->srcpos, &t->capsrcpos, t->nsrcpos + 1, sizeof(*t->srcpos), 64) ||
		    u64map_put(&t->pos, key, (uint32_t)t->nsrcpos) < 0)
			return 0;
		for (uint32_t j = 0; j < m->nlines; j++) /* where it starts: its first line */
			if (m->lines[j].line && (!decl || m->lines[j].line < decl))
				decl = m->lines[j].line;
		*sf = (struct sonde_srcframe){
			.name = fn->mangled, .file = m->source, .line = line, .decl_file = m->source, .decl_line = decl
		};
		t->srcpos[t->nsrcpos] = sf;
		k = (long)t->nsrcpos++;
	}
	*out = t->srcpos[k];
	return 1;
}

static bool methods_place(const struct sonde_frame *f, const struct sonde_func *fn, uint64_t *at, const char **key)
{
	if (f->aux == SONDE_FRAME_NO_BCI)
		return false;
	*at = f->aux;
	*key = fn->mangled;
	return true;
}

const struct sonde_frame_module sonde_fk_java_interp = {
	.info = { "java-interpreted", "a Java method", "bci" },
	.open = methods_open,
	.close = methods_close,
	.func = methods_func,
	.srcpos = methods_srcpos,
	.place = methods_place,
};

const struct sonde_frame_module sonde_fk_java_compiled = {
	.info = { "java-compiled", "a Java method", "bci" },
	.open = methods_open,
	.close = methods_close,
	.func = methods_func,
	.srcpos = methods_srcpos,
	.place = methods_place,
};

/* The Java kinds share the method table: one module each for its word. */
#define JAVA_KIND(NAME, WORD)                                                                                     \
	const struct sonde_frame_module NAME = {                                                                 \
		.info = { WORD, "a Java method", "bci" },                                                        \
		.open = methods_open,                                                                            \
		.close = methods_close,                                                                          \
		.func = methods_func,                                                                            \
		.srcpos = methods_srcpos,                                                                        \
		.place = methods_place,                                                                          \
	};
JAVA_KIND(sonde_fk_java, "java")
JAVA_KIND(sonde_fk_java_inlined, "java-inlined")
JAVA_KIND(sonde_fk_java_compiled_c1, "java-compiled-c1")
