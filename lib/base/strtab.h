/*
 * strtab: one copy of each distinct string, so that strings from several
 * sources (DWARF file names, function names) compare by pointer.  Copies
 * live in an arena; all are freed by strtab_free.  Internal to lib/.
 */
#ifndef SONDE_STRTAB_H
#define SONDE_STRTAB_H

#include "base/arena.h"
#include "base/grow.h"
#include "base/u64map.h"

struct strtab {
	struct u64map map; /* hash -> index into v */
	const char **v;
	size_t n, cap;
	struct arena_chunk *arena;
};

/* The table's copy of s; NULL for NULL and when memory runs out. */
static inline const char *strtab_intern(struct strtab *t, const char *s)
{
	if (!s)
		return NULL;
	uint64_t h = u64map_hash_str(s);

	for (long i = u64map_get(&t->map, h); i >= 0; i = u64map_get(&t->map, h)) {
		if (!strcmp(t->v[i], s))
			return t->v[i];
		h = h * 31 + 7; /* another string has this hash: probe the next */
	}
	if (sonde_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
		return NULL;
	const char *c = arena_strdup(&t->arena, s);

	if (!c || u64map_put(&t->map, h, (uint32_t)t->n) < 0)
		return NULL;
	t->v[t->n++] = c;
	return c;
}

static inline void strtab_free(struct strtab *t)
{
	arena_free(&t->arena);
	free(t->v);
	u64map_release(&t->map);
	memset(t, 0, sizeof(*t));
}

#endif
