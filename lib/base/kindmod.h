/*
 * A data kind's module on the analyzer's side: one structure per row of
 * the table of kinds (include/sonde/kinds.h), defined in the kind's own
 * file, lib/kinds/NAME.c, which holds all of the kind: how its packets are
 * read, the metrics it feeds, its `sonde agg` events, its -dump and its
 * -header line.
 *
 * The module is cut by layer.  Each part's type is declared by the layer
 * that uses it (reader/kind.h, model/kind.h, agg/kind.h, views/kind.h),
 * which loops over the kinds and calls the part it owns:
 *
 *     const struct sonde_kind_module *m = sonde_kind_module(id);
 *     if (m->model) m->model->feed(...);
 *
 * so a layer never names a kind, and a new kind is its row in kinds.h and
 * its file in lib/kinds/.  The parts are pointers to types this header
 * leaves incomplete: it belongs to the lowest layer and knows none of
 * them.  lib/kinds/ is the top of the include graph (it includes every
 * layer's kind.h and nothing includes it); the lower layers reach its
 * modules only through this table, at link time (the one place where a
 * call goes up; scripts/check-layers.sh keeps the include graph acyclic).
 *
 * A row of kinds.h without its module fails to link: the table below
 * names sonde_kind_module_NAME for every row.  The clock profile's module
 * (lib/kinds/profile.c) has its metrics (the first of the table), its agg
 * event kind and its -dump, while the reader scans its packets itself;
 * the stacks' and the sample points' modules are empty
 * (lib/kinds/builtin.c).  A layer that loops over the kinds for what only
 * the traced kinds have asks sonde_kind_modular(id).
 */
#ifndef SONDE_BASE_KINDMOD_H
#define SONDE_BASE_KINDMOD_H

#include <stddef.h>

#include "sonde/kinds.h"

struct sonde_reader_kind; /* reader/kind.h */
struct sonde_model_kind;  /* model/kind.h */
struct sonde_dl_kind;	  /* agg/dlang.h, with agg/kind.h's helpers */
struct sonde_view_kind;	  /* views/kind.h */

struct sonde_kind_module {
	/* Decodes its packets and holds its events; never NULL for a
	 * traced kind (an empty one for the collector's own files). */
	const struct sonde_reader_kind *reader;
	/* Its metrics and the function that feeds them; NULL: none. */
	const struct sonde_model_kind *model;
	/* Its `sonde agg` event kind (fields and the source of its events);
	 * NULL: agg has none. */
	const struct sonde_dl_kind *agg;
	/* Its -dump and -header; NULL: neither. */
	const struct sonde_view_kind *view;
};

#define SONDE_KINDMOD_DECLARE_(NAME, ...) extern const struct sonde_kind_module sonde_kind_module_##NAME;
SONDE_KINDS(SONDE_KINDMOD_DECLARE_)
#undef SONDE_KINDMOD_DECLARE_

/* The module of kind id; NULL for an id not in the table. */
static inline const struct sonde_kind_module *sonde_kind_module(int id)
{
	static const struct sonde_kind_module *const mods[SONDE_KIND_MAX + 1] = {
#define SONDE_KINDMOD_ROW_(NAME, id, ...) [id] = &sonde_kind_module_##NAME,
		SONDE_KINDS(SONDE_KINDMOD_ROW_)
#undef SONDE_KINDMOD_ROW_
	};
	return id >= 1 && id <= SONDE_KIND_MAX ? mods[id] : NULL;
}

#endif
