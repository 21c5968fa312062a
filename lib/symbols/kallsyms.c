/*
 * kallsyms: kernel frames (SONDE_FRAME_KERNEL) named by the experiment's
 * "kallsyms" file, a copy of /proc/kallsyms (doc/experiment-format.md):
 *
 *	ffffffff81000000 T _stext
 *	ffffffff810012a0 t do_one_initcall
 *	ffffffffc0a01040 t ext4_file_write_iter	[ext4]
 *
 * A frame's address (pc, or pc - 1 for a return address) is in the
 * symbol at or below it, up to the next symbol's address (the last one:
 * one page); it names a function when that symbol is code (type t, T, w or
 * W, as perf keeps them), else the frame is "<kernel>@0x...".  Every
 * kernel function is in the pseudo object "<kernel>" (module symbols too:
 * the module's name is dropped).  Read at the first kernel frame; a file
 * that is missing, unreadable, or whose addresses are all 0 (written under
 * kptr_restrict) is one problem, and kernel frames are then named by
 * their addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/partition.h"
#include "base/safeopen.h"
#include "base/u64map.h"
#include "symbols/framekind.h"
#include "symbols/srcinfo.h"

#define KALLSYMS_FILE "kallsyms"
#define KERNEL_OBJECT "<kernel>"

struct ksym {
	uint64_t lo, hi;
	const char *name; /* into text */
	const struct sonde_func *fn; /* made at its first frame */
	bool code;
	uint32_t line;
};

struct kallsyms {
	struct sonde_object obj;
	char *text;
	struct ksym *v;
	size_t n;
	struct u64map unknown; /* an address in no code symbol -> its function's id */
};

static int cmp_ksym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->code != b->code) /* of two at one address, code names it */
		return a->code ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* One line: "ADDRESS TYPE NAME[\t[MODULE]]"; false when it is not one. */
static bool parse_line(char *s, struct ksym *y)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
		return false;
	errno = 0;
	unsigned long long a = strtoull(s, &end, 16);

	if (errno || (*end != ' ' && *end != '\t'))
		return false;
	s = end;
	while (*s == ' ' || *s == '\t')
		s++;
	char type = *s;

	if (!type || (s[1] != ' ' && s[1] != '\t'))
		return false;
	s += 2;
	while (*s == ' ' || *s == '\t')
		s++;
	char *name = s;

	while (*s && *s != ' ' && *s != '\t' && *s != '\r')
		s++;
	*s = '\0';
	if (!*name)
		return false;
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	y->lo = a;
	y->name = name;
	y->code = type == 't' || type == 'T' || type == 'w' || type == 'W';
	return true;
}

static void *kallsyms_open(struct sonde_syms *s)
{
	const char *dir = sonde_exp_info(sonde_syms_exp(s))->dir;
	struct kallsyms *k = calloc(1, sizeof(*k));
	char path[PATH_MAX];
	size_t len = 0, cap = 0, bad = 0, zero = 0;

	if (!k)
		return NULL;
	k->obj.path = k->obj.name = KERNEL_OBJECT;
	k->obj.hi = UINT64_MAX;
	k->obj.unload_ns = SONDE_TIME_NEVER;
	if (snprintf(path, sizeof(path), "%s/%s", dir, KALLSYMS_FILE) >= (int)sizeof(path))
		errno = ENAMETOOLONG;
	else
		k->text = sonde_read_regular(path, &len);
	if (!k->text) {
		if (errno == ENOENT)
			sonde_syms_problem(s, "the experiment has kernel frames but no '%s' file; kernel "
					      "functions are shown as addresses", KALLSYMS_FILE);
		else
			sonde_syms_problem(s, "cannot read '%s': %s; kernel functions are shown as addresses",
					   KALLSYMS_FILE, sonde_open_strerror(errno));
		return k;
	}
	uint32_t line = 0;

	for (char *p = k->text, *end = k->text + len; p < end;) {
		char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		*eol = '\0';
		line++;
		struct ksym y = { .line = line };
		char *l = p;

		p = eol + 1;
		if (strspn(l, " \t\r") == strlen(l))
			continue; /* blank */
		if (strlen(l) != (size_t)(eol - l) || !parse_line(l, &y)) {
			bad++;
			continue;
		}
		if (sonde_grow(&k->v, &cap, k->n + 1, sizeof(*k->v), 4096)) {
			sonde_syms_problem(s, "out of memory reading '%s'; kernel functions are shown as addresses",
					   KALLSYMS_FILE);
			k->n = 0;
			return k;
		}
		zero += y.lo == 0;
		k->v[k->n++] = y;
	}
	if (bad)
		sonde_syms_problem(s, "'%s': %zu lines are not symbols (ADDRESS TYPE NAME); skipped", KALLSYMS_FILE,
				   bad);
	if (k->n && zero == k->n) {
		sonde_syms_problem(s, "'%s' gives every address as 0 (written under kptr_restrict); kernel "
				      "functions are shown as addresses", KALLSYMS_FILE);
		k->n = 0;
	}
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	/* one symbol per address (the first after sorting), each up to the next */
	size_t m = 0;

	for (size_t i = 0; i < k->n; i++)
		if (!m || k->v[m - 1].lo != k->v[i].lo)
			k->v[m++] = k->v[i];
	k->n = m;
	for (size_t i = 0; i < k->n; i++)
		k->v[i].hi = i + 1 < k->n ? k->v[i + 1].lo : k->v[i].lo + 4096 > k->v[i].lo ? k->v[i].lo + 4096 : UINT64_MAX;
	return k;
}

static void kallsyms_close(void *state)
{
	struct kallsyms *k = state;

	free(k->text);
	free(k->v);
	u64map_release(&k->unknown);
	free(k);
}

static const struct sonde_func *kallsyms_func(struct sonde_syms *s, void *state, const struct sonde_frame *f)
{
	struct kallsyms *k = state;
	uint64_t a = f->exact || !f->pc ? f->pc : f->pc - 1;

	if (k) {
		size_t i = PARTITION_POINT(0, k->n, j, k->v[j].lo <= a);

		if (i > 0 && a < k->v[i - 1].hi && k->v[i - 1].code) {
			struct ksym *y = &k->v[i - 1];

			if (!y->fn)
				y->fn = sonde_syms_kind_func(s, SONDE_FRAME_KERNEL, &k->obj, y->lo, y->hi, y->name, NULL,
							     NULL, false);
			return y->fn;
		}
		long id = u64map_get(&k->unknown, a);

		if (id >= 0)
			return sonde_syms_func(s, (uint32_t)id);
	}
	char name[64];

	snprintf(name, sizeof(name), KERNEL_OBJECT "@0x%" PRIx64, a);
	const struct sonde_func *fn =
		sonde_syms_kind_func(s, SONDE_FRAME_KERNEL, k ? &k->obj : NULL, a, a + 1, name, NULL, NULL, true);

	if (k && fn->kind == SONDE_FRAME_KERNEL)
		u64map_put(&k->unknown, a, fn->id); /* out of memory: made again next time */
	return fn;
}

const struct sonde_frame_module sonde_fk_kernel = {
	.info = { "kernel", "a kernel function", NULL },
	.open = kallsyms_open,
	.close = kallsyms_close,
	.func = kallsyms_func,
};
