/*
 * Leak matching for heap traces: which allocations were never freed.
 *
 * Events come sorted by time (a free is stamped before its call and an
 * allocation after, so a block freed by one thread and handed out again
 * to another is seen freed first).  A free releases the live block at its
 * address; an munmap releases every live mapping it overlaps.  An
 * allocation at an address that is still live means the free was not seen
 * (made before tracing started, or by a path not interposed): the older
 * block is taken as freed, since the allocator reused it.
 */
#include <stdlib.h>

#include "experiment.h"
#include "u64map.h"

#define NOT_LIVE (UINT32_MAX - 1)

/* key -> val, inserting or replacing.  Returns -1 out of memory. */
static int set(struct u64map *m, uint64_t key, uint32_t val)
{
	if (m->cap) {
		for (size_t i = u64map_mix(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1))
			if (m->keys[i] == key) {
				m->vals[i] = val + 1;
				return 0;
			}
	}
	return u64map_put(m, key, val);
}

struct mapping {
	uint64_t lo, hi;
	uint32_t ev;
};

long sonde_heap_leaks(const struct sonde_exp *exp, bool *leaked, struct sonde_heap_match *st)
{
	size_t n;
	const struct sonde_heap_event *e = sonde_exp_heap_events(exp, &n);
	struct u64map live = { 0 };
	struct mapping *maps = NULL;
	size_t nmaps = 0, capmaps = 0;
	struct sonde_heap_match s = { 0 };

	for (size_t i = 0; i < n; i++) {
		leaked[i] = false;
		if (e[i].flags & SONDE_HEAPF_FAILED)
			continue;
		if (e[i].func == SONDE_HEAP_MMAP && (e[i].flags & SONDE_HEAPF_ALLOC)) {
			if (nmaps == capmaps) {
				size_t nc = capmaps ? capmaps * 2 : 16;
				struct mapping *nm = realloc(maps, nc * sizeof(*nm));
				if (!nm)
					goto oom;
				maps = nm;
				capmaps = nc;
			}
			maps[nmaps++] = (struct mapping){ e[i].addr, e[i].addr + e[i].bytes, (uint32_t)i };
			leaked[i] = true;
			continue;
		}
		if (e[i].func == SONDE_HEAP_MUNMAP) {
			uint64_t lo = e[i].addr, hi = e[i].addr + e[i].bytes;
			for (size_t k = 0; k < nmaps;) {
				if (maps[k].lo < hi && lo < maps[k].hi) {
					leaked[maps[k].ev] = false;
					maps[k] = maps[--nmaps];
				} else {
					k++;
				}
			}
			continue;
		}
		if (e[i].flags & SONDE_HEAPF_ALLOC) {
			long prev = u64map_get(&live, e[i].addr);
			if (prev >= 0 && (uint32_t)prev != NOT_LIVE) {
				leaked[prev] = false;
				s.reused_live++;
			}
			if (set(&live, e[i].addr, (uint32_t)i) < 0)
				goto oom;
			leaked[i] = true;
		} else if (e[i].flags & SONDE_HEAPF_FREE) {
			long prev = u64map_get(&live, e[i].addr);
			if (prev < 0 || (uint32_t)prev == NOT_LIVE) {
				s.unmatched_frees++;
				continue;
			}
			leaked[prev] = false;
			if (set(&live, e[i].addr, NOT_LIVE) < 0)
				goto oom;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (leaked[i]) {
			s.leaks++;
			s.leaked_bytes += e[i].bytes;
		}
	u64map_release(&live);
	free(maps);
	if (st)
		*st = s;
	return (long)s.leaks;
oom:
	u64map_release(&live);
	free(maps);
	return -1;
}
