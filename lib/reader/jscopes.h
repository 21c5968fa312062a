/*
 * The compiled Java methods' scopes (the experiment's jvm.inline, written
 * by sonde's Java agent: doc/experiment-format.md): which Java methods, at
 * which bytecode indexes, an address of compiled code stands for.  The
 * reader gives a stack whose Java walk failed (native frames only) the
 * Java frames of its frames in compiled code from them (experiment.c,
 * materialize).
 */
#ifndef SONDE_READER_JSCOPES_H
#define SONDE_READER_JSCOPES_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/shared.h>

#include "reader/experiment.h"

struct sonde_jscopes;

/* Parse jvm.inline's text (and jvm.code's, for the compiled methods'
 * tiers; NULL for none).  NULL when the text has no scope (an empty file,
 * one without the format's first line) or out of memory (*oom set).
 * *bad gets the lines skipped as malformed. */
struct sonde_jscopes *sonde_jscopes_parse(const char *inl, size_t inl_len, const char *code, size_t code_len,
					  size_t *bad, bool *oom);
void sonde_jscopes_free(struct sonde_jscopes *s);

/* The Java frames that native frame fr stands for, innermost first (the
 * method its instruction is of, then those it was inlined into, out to the
 * compiled method), into out (at most max): their number, 0 when fr is not
 * in compiled code with scopes.  The innermost keeps fr's exactness. */
int sonde_jscopes_frames(const struct sonde_jscopes *s, const struct sonde_frame *fr, struct sonde_frame *out, int max);

#endif
