/*
 * folded: Brendan Gregg's collapsed stacks, as stackcollapse-perf.pl writes
 * them and flamegraph.pl, speedscope, inferno and most flame-graph tools
 * read them: one line per distinct stack,
 *
 *	main;parse;strtod 1234567
 *
 * the functions from the root to the leaf joined by ';', a space, and the
 * stack's value of the chosen metric (an integer in its unit: ns for
 * times, bytes, counts).  Stacks whose value is 0 are left out; lines are
 * sorted (the order stackcollapse writes, so two exports compare with
 * diff).  A ';' in a name would split it, so it is written as ':'; names
 * are valid UTF-8 (export.h).  Two stacks whose names read the same (two
 * functions of one name in different objects) are one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "views/export.h"

struct line {
	char *s;
	int64_t v;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->s, ((const struct line *)b)->s);
}

int sonde_export_folded(FILE *f, struct sonde_export *x, char *err, size_t errlen)
{
	const struct sonde_model *m = x->p.model;
	size_t ns = sonde_model_nstacks(m), n = 0, cap = 0;
	struct line *lines = NULL;
	int rc = 0;

	for (size_t s = 0; s < ns; s++) {
		int64_t v = sonde_model_stack_values(m, (uint32_t)s)[x->metric];
		int depth;
		const uint32_t *fr = sonde_model_stack_funcs(m, (uint32_t)s, &depth);

		if (!v)
			continue;
		size_t len = 1;

		for (int i = 0; i < depth; i++)
			len += strlen(x->name[fr[i]]) + 1;
		char *buf = malloc(len), *q = buf;

		if (!buf || sonde_grow(&lines, &cap, n + 1, sizeof(*lines), 256) < 0) {
			free(buf);
			rc = -SONDE_ERR_FAILED;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		for (int i = depth - 1; i >= 0; i--) {
			for (const char *p = x->name[fr[i]]; *p; p++)
				*q++ = *p == ';' ? ':' : *p;
			if (i)
				*q++ = ';';
		}
		*q = '\0';
		lines[n++] = (struct line){ buf, v };
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_line);
	struct sonde_xbuf b;

	xb_init(&b, f);
	for (size_t i = 0; i < n;) {
		int64_t v = lines[i].v;
		size_t k = i + 1;

		for (; k < n && !strcmp(lines[k].s, lines[i].s); k++)
			v = (int64_t)((uint64_t)v + (uint64_t)lines[k].v);
		xb_s(&b, lines[i].s);
		xb_c(&b, ' ');
		xb_i(&b, v);
		xb_c(&b, '\n');
		i = k;
	}
	if (xb_done(&b) < 0) {
		rc = -SONDE_ERR_FAILED;
		snprintf(err, errlen, "error writing the output");
	}
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].s);
	free(lines);
	return rc;
}
