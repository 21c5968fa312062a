/*
 * pseudo: the collector's pseudo frames (SONDE_FRAME_PSEUDO): time whose
 * place no sample shows, and the collector's own, each a function of its
 * own, in the pseudo object "<sonde>" (the collector's) or "<unknown>"
 * (the others: the time is the target's, its code unknown).  A pc that is
 * not one of enum sonde_pseudo is "<pseudo N>".
 */
#include <stdio.h>
#include <stdlib.h>

#include "symbols/framekind.h"

static const char *const names[SONDE_PSEUDO_MAX + 1] = {
	[SONDE_PSEUDO_PROCESS_START] = "<Process start>",
	[SONDE_PSEUDO_THREAD_START] = "<Thread start>",
	[SONDE_PSEUDO_AFTER_LAST] = "<After last sample>",
	[SONDE_PSEUDO_PROCESS_END] = "<Process end>",
	[SONDE_PSEUDO_THREAD_END] = "<Thread end>",
	[SONDE_PSEUDO_COLLECTOR] = "<Collector>",
};

struct pseudo_state {
	struct sonde_object unknown, collector;
};

static void *pseudo_open(struct sonde_syms *s)
{
	(void)s;
	static const struct sonde_object proto = { .hi = UINT64_MAX, .unload_ns = SONDE_TIME_NEVER };
	struct pseudo_state *p = calloc(1, sizeof *p);

	if (!p)
		return NULL;
	p->unknown = p->collector = proto;
	p->unknown.path = p->unknown.name = "<unknown>";
	p->collector.path = p->collector.name = "<sonde>";
	return p;
}

static void pseudo_close(void *state)
{
	free(state);
}

static const struct sonde_func *pseudo_func(struct sonde_syms *s, void *state, const struct sonde_frame *f)
{
	struct pseudo_state *p = state;
	char other[32];
	const char *name = f->pc <= SONDE_PSEUDO_MAX ? names[f->pc] : NULL;

	if (!name) {
		snprintf(other, sizeof other, "<pseudo %llu>", (unsigned long long)(f->pc & 0xffffffffu));
		name = other;
	}
	const struct sonde_object *o = !p ? NULL : f->pc == SONDE_PSEUDO_COLLECTOR ? &p->collector : &p->unknown;
	/* the handle caches it per frame: one function per id */
	return sonde_syms_kind_func(s, SONDE_FRAME_PSEUDO, o, f->pc, f->pc + 1, name, NULL, NULL, name == other);
}

const struct sonde_frame_module sonde_fk_pseudo = {
	.info = { "pseudo", "a pseudo-function of time no sample placed", NULL },
	.open = pseudo_open,
	.close = pseudo_close,
	.func = pseudo_func,
};
