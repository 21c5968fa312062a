/* Shared by the reader and the model builder. */
#ifndef SONDE_U64MAP_H
#define SONDE_U64MAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * u64 -> index hash table, open addressing with linear probing.  val holds
 * index + 1 so that 0 marks an empty slot (any key, including 0, is valid).
 * Keys are mixed first: synthetic stack ids and tids are small integers.
 * A slot holds its key and value side by side: a lookup in a table larger
 * than the caches (a stack id per sample) costs one miss, not two.  tag is
 * the user's, 0 at insertion: 32 bits kept beside the value, read by the
 * same miss (the reader keeps a stack's flags there).
 */
struct u64map_slot {
	uint64_t key;
	uint32_t val, tag;
};

struct u64map {
	struct u64map_slot *s;
	size_t cap, n; /* cap is a power of two or 0 */
};

static inline size_t u64map_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* A string's 64-bit key (FNV-1a), for maps keyed by name. */
static inline uint64_t u64map_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The slot of key, NULL when absent; valid until the next insertion. */
static inline struct u64map_slot *u64map_find(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = u64map_mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->s[i].val)
			return NULL;
		if (m->s[i].key == key)
			return &m->s[i];
	}
}

static inline long u64map_get(const struct u64map *m, uint64_t key)
{
	const struct u64map_slot *s = u64map_find(m, key);

	return s ? (long)s->val - 1 : -1;
}

/* Inserts key -> val (the key must be absent).  Returns -1 out of memory. */
static inline int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct u64map_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->s[i].val)
				continue;
			size_t j = u64map_mix(m->s[i].key) & (ncap - 1);

			while (ns[j].val)
				j = (j + 1) & (ncap - 1);
			ns[j] = m->s[i];
		}
		free(m->s);
		m->s = ns;
		m->cap = ncap;
	}
	size_t i = u64map_mix(key) & (m->cap - 1);

	while (m->s[i].val)
		i = (i + 1) & (m->cap - 1);
	m->s[i].key = key;
	m->s[i].val = val + 1;
	m->s[i].tag = 0;
	m->n++;
	return 0;
}

static inline void u64map_release(struct u64map *m)
{
	free(m->s);
	memset(m, 0, sizeof(*m));
}

#endif
