/*
 * dynfunc: perf map files (jit.map) as dynamic functions.  See dynfunc.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/safeopen.h"
#include "symbols/dynfunc.h"
#include "base/partition.h"

struct sonde_dynfuncs {
	struct sonde_object object, jvm_object;
	struct sonde_dynfunc *v;
	uint64_t *maxhi; /* the largest hi of v[0..i] */
	size_t n;
	size_t ignored;
	char *names; /* every name, NUL-terminated, back to back */
};

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number at *p (optional 0x), at most 64 bits; advances *p.  false
 * when there is no digit or it overflows. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int nd = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexval(s[2]) >= 0)
		s += 2;
	for (; s < end && hexval(*s) >= 0; s++, nd++) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)hexval(*s);
	}
	*p = s;
	*out = v;
	return nd > 0;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct sonde_dynfunc *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Whether a jvm.map entry is the JVM's own code: not a compiled Java
 * method (tracers/java/agent.c names those "NAME [compiled]"). */
static bool jvm_own(const char *s, const char *e)
{
	static const char sfx[] = " [compiled]";
	size_t n = sizeof sfx - 1;
	return !((size_t)(e - s) > n && !memcmp(e - n, sfx, n));
}

static void pseudo_object(struct sonde_object *o, const char *name)
{
	o->id = 0;
	o->path = o->name = name;
	o->base = 0;
	o->lo = UINT64_MAX;
	o->hi = 0;
	o->load_ns = 0;
	o->unload_ns = SONDE_TIME_NEVER;
}

/* The text's first jvm_lines lines are jvm.map's. */
static struct sonde_dynfuncs *parse(const char *text, size_t len, unsigned jvm_lines)
{
	struct sonde_dynfuncs *d = calloc(1, sizeof(*d));
	size_t cap = 0;
	size_t used = 0;

	if (!d)
		return NULL;
	/* Names are at most the text itself plus one NUL per line. */
	d->names = malloc(len + 1);
	if (!d->names)
		goto oom;
	unsigned line = 0;

	for (const char *p = text, *end = text + len; p < end; ) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *next = eol ? eol + 1 : end;

		if (!eol)
			eol = end;
		line++;
		const char *s = p;
		const char *e = eol;

		p = next;
		while (e > s && (blank(e[-1]) || e[-1] == '\r'))
			e--;
		while (s < e && blank(*s))
			s++;
		if (s == e)
			continue; /* blank line */
		uint64_t lo, size;

		if (!parse_hex(&s, e, &lo) || s == e || !blank(*s)) {
			d->ignored++;
			continue;
		}
		while (s < e && blank(*s))
			s++;
		if (!parse_hex(&s, e, &size) || s == e || !blank(*s) || size == 0 ||
		    lo + size < lo) {
			d->ignored++;
			continue;
		}
		while (s < e && blank(*s))
			s++;
		if (s == e) {
			d->ignored++;
			continue;
		}
		if (sonde_grow(&d->v, &cap, d->n + 1, sizeof(*d->v), 64))
			goto oom;
		char *name = d->names + used;

		for (const char *c = s; c < e; c++)
			d->names[used++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
		d->names[used++] = 0;
		d->v[d->n++] = (struct sonde_dynfunc){ lo, lo + size, name, line, line <= jvm_lines && jvm_own(s, e) };
	}

	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), cmp_entry);
	d->maxhi = malloc((d->n ? d->n : 1) * sizeof(*d->maxhi));
	if (!d->maxhi)
		goto oom;
	for (size_t i = 0; i < d->n; i++)
		d->maxhi[i] = i && d->maxhi[i - 1] > d->v[i].hi ? d->maxhi[i - 1] : d->v[i].hi;

	pseudo_object(&d->object, SONDE_JIT_OBJECT);
	pseudo_object(&d->jvm_object, SONDE_JVM_OBJECT);
	for (size_t i = 0; i < d->n; i++) {
		struct sonde_object *o = d->v[i].jvm ? &d->jvm_object : &d->object;
		if (d->v[i].lo < o->lo)
			o->lo = d->v[i].lo;
		if (d->v[i].hi > o->hi)
			o->hi = d->v[i].hi;
	}
	if (d->object.lo > d->object.hi)
		d->object.lo = d->object.hi = 0;
	if (d->jvm_object.lo > d->jvm_object.hi)
		d->jvm_object.lo = d->jvm_object.hi = 0;
	return d;
oom:
	sonde_dynfuncs_free(d);
	return NULL;
}

/* The map file name of experiment exp, read whole: NULL with errno
 * (ENOENT: none). */
static char *read_map(const struct sonde_exp *exp, const char *name, size_t *n)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", sonde_exp_info(exp)->dir, name) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return sonde_read_regular(path, n);
}

/* jvm.code's loads (len bytes at c) as perf map lines before jvm.map's
 * text (*n bytes at v, or NULL), in a new text of *n bytes; NULL when
 * memory runs out.  Lines of another shape are left out. */
static char *code_then_map(const char *c, size_t len, char *v, size_t *n)
{
	size_t cap = len + *n + 2, used = 0;
	char *b = malloc(cap);
	if (!b)
		return NULL;
	for (const char *p = c, *end = c + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		/* fields: TIME EVENT CODE SIZE ID LEVEL CID BCI NAME */
		const char *f[9];
		int k = 0;
		for (const char *q = p; q < e && k < 9;) {
			while (q < e && blank(*q))
				q++;
			if (q < e)
				f[k++] = q;
			while (q < e && !blank(*q))
				q++;
		}
		if (k == 9 && e - f[1] > 5 && !memcmp(f[1], "load ", 5)) {
			/* "CODE SIZE " and the name to the line's end: each
			 * no longer than its field in the line */
			size_t a = (size_t)(f[4] - f[2]), m = (size_t)(e - f[8]);
			memcpy(b + used, f[2], a);
			used += a;
			memcpy(b + used, f[8], m);
			used += m;
			memcpy(b + used, " [compiled]\n", 12);
			used += 12;
		}
		p = nl ? nl + 1 : end;
	}
	if (v) {
		memcpy(b + used, v, *n);
		used += *n;
	}
	*n = used;
	return b;
}

struct sonde_dynfuncs *sonde_dynfuncs_read(const struct sonde_exp *exp, bool *present)
{
	size_t nj = 0, nv = 0, nc = 0;
	*present = false;
	/* The Java agent's map first: a perf map of the JVM's own
	 * (-XX:+DumpPerfMapAtExit) names the same code, and is written
	 * last. */
	char *v = read_map(exp, SONDE_JVM_MAP_FILE, &nv);
	if (!v && errno != ENOENT) {
		*present = true;
		return NULL;
	}
	char *c = read_map(exp, SONDE_JVM_CODE_FILE, &nc);
	if (c) {
		char *cv = code_then_map(c, nc, v, &nv);
		free(c);
		free(v);
		if (!cv) {
			*present = true;
			errno = ENOMEM;
			return NULL;
		}
		v = cv;
	}
	char *j = read_map(exp, SONDE_JIT_MAP_FILE, &nj);
	if (!j && errno != ENOENT) {
		free(v);
		*present = true;
		return NULL;
	}
	if (!v && !j)
		return NULL;
	*present = true;
	char *b = v ? v : j;
	size_t n = v ? nv : nj;
	/* the JVM's map's lines, first in b */
	unsigned jvm_lines = v && !j ? UINT_MAX : 0;
	if (v && j) {
		jvm_lines = 1; /* and the separator ends its last */
		for (size_t i = 0; i < nv; i++)
			jvm_lines += v[i] == '\n';
		b = malloc(nv + nj + 2);
		if (b) {
			memcpy(b, v, nv);
			b[nv] = '\n';
			memcpy(b + nv + 1, j, nj);
			n = nv + 1 + nj;
		}
		free(v);
		free(j);
		if (!b) {
			errno = ENOMEM;
			return NULL;
		}
	}
	struct sonde_dynfuncs *d = parse(b, n, jvm_lines);

	free(b);
	if (!d)
		errno = ENOMEM;
	return d;
}

void sonde_dynfuncs_free(struct sonde_dynfuncs *d)
{
	if (!d)
		return;
	free(d->v);
	free(d->maxhi);
	free(d->names);
	free(d);
}

long sonde_dynfuncs_find(const struct sonde_dynfuncs *d, uint64_t pc)
{
	long best = -1;
	/* First entry whose lo is above pc. */
	size_t lo = PARTITION_POINT(0, d->n, i, d->v[i].lo <= pc);

	for (size_t j = lo; j-- > 0 && d->maxhi[j] > pc;)
		if (pc < d->v[j].hi && (best < 0 || d->v[j].line > d->v[best].line))
			best = (long)j;
	return best;
}

const struct sonde_dynfunc *sonde_dynfuncs_entries(const struct sonde_dynfuncs *d, size_t *n)
{
	*n = d->n;
	return d->v;
}

size_t sonde_dynfuncs_ignored(const struct sonde_dynfuncs *d)
{
	return d->ignored;
}

const struct sonde_object *sonde_dynfuncs_object(const struct sonde_dynfuncs *d)
{
	return &d->object;
}

const struct sonde_object *sonde_dynfuncs_entry_object(const struct sonde_dynfuncs *d, size_t i)
{
	return i < d->n && d->v[i].jvm ? &d->jvm_object : &d->object;
}

struct sonde_dynfuncs *sonde_dynfuncs_parse(const char *text, size_t len)
{
	return parse(text, len, 0);
}

/* ---- copying the perf map (sonde collect) ------------------------------- */

/* Opens the perf map of pid in dir, as perf would trust it: a regular file,
 * not through a symlink (the directory is world-writable), owned by us or
 * by root.  -1 with errno. */
static int open_perf_map(const char *dir, pid_t pid, char *path, size_t size)
{
	if (snprintf(path, size, "%s/perf-%ld.map", dir, (long)pid) >= (int)size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int sonde_jitmap_copy(pid_t pid, time_t since, const char *expdir, char *err, size_t errlen)
{
	char dst[PATH_MAX], tmp[PATH_MAX], src[PATH_MAX];

	if (snprintf(dst, sizeof(dst), "%s/%s", expdir, SONDE_JIT_MAP_FILE) >= (int)sizeof(dst) ||
	    snprintf(tmp, sizeof(tmp), "%s/%s.part", expdir, SONDE_JIT_MAP_FILE) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "experiment path too long");
		return -1;
	}
	if (access(dst, F_OK) == 0)
		return 0; /* the collector copied it */
	const char *tmpdir = getenv("TMPDIR");
	int in = open_perf_map("/tmp", pid, src, sizeof(src));

	if (in < 0 && errno == ENOENT && tmpdir && *tmpdir && strcmp(tmpdir, "/tmp"))
		in = open_perf_map(tmpdir, pid, src, sizeof(src));
	if (in < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot read '%s': %s", src, strerror(errno));
		return -1;
	}
	struct stat st;

	if (fstat(in, &st) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", src, strerror(errno));
		close(in);
		return -1;
	}
	/* A second of slack: file times come from the coarse kernel clock. */
	if (st.st_mtime < since - 1) {
		close(in);
		return 0;
	}
	/* never readable by more than the original (the JIT's symbol names) */
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (out >= 0)
		fchmod(out, st.st_mode & 0644);
	if (out < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		close(in);
		return -1;
	}
	char buf[65536];
	int rc = 1;

	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", src, strerror(errno));
			rc = -1;
			break;
		}
		if (r == 0)
			break;
		for (ssize_t w = 0; w < r;) {
			ssize_t k = write(out, buf + w, (size_t)(r - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
				rc = -1;
				break;
			}
			w += k;
		}
		if (rc < 0)
			break;
	}
	close(in);
	if (close(out) < 0 && rc > 0) {
		snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc > 0 && rename(tmp, dst) < 0) {
		snprintf(err, errlen, "cannot rename '%s': %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	return rc;
}
