/* Shared by the reader and the model builder. */
#ifndef SONDE_U64MAP_H
#define SONDE_U64MAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * u64 -> index hash table, open addressing with linear probing.  vals hold
 * index + 1 so that 0 marks an empty slot (any key, including 0, is valid).
 * Keys are mixed first: synthetic stack ids and tids are small integers.
 */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
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

static inline long u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	for (size_t i = u64map_mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return -1;
		if (m->keys[i] == key)
			return (long)m->vals[i] - 1;
	}
}

/* Inserts key -> val (the key must be absent).  Returns -1 out of memory. */
static inline int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint32_t *nv = calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->vals[i])
				continue;
			size_t j = u64map_mix(m->keys[i]) & (ncap - 1);

			while (nv[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	size_t i = u64map_mix(key) & (m->cap - 1);

	while (m->vals[i])
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val + 1;
	m->n++;
	return 0;
}

static inline void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

#endif
