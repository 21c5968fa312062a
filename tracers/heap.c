/*
 * Heap tracing (sonde collect -H on): libsonde_heap.so interposes the
 * allocation functions and records each allocation (with its stack, size
 * and address) and each free (address only) in "heaptrace".  Leaks are
 * found by the reader: allocations never freed by the end of the run.
 *
 * The real functions are found with dlsym(RTLD_NEXT), so a target that
 * links another allocator (jemalloc, tcmalloc) is traced over that one.
 * dlsym itself allocates (calloc for its error buffer): calls made while
 * this thread resolves are served from a static bootstrap arena, whose
 * blocks are recognised and never passed to the real free.
 *
 * Cost: an allocation costs its stack (a per-thread cache, the unwinder
 * on a miss) and a record of about 7 bytes; a free about 4 bytes.  Times
 * come from the collector's millisecond tick, not a clock read.  Nothing is recorded while the collector is not collecting
 * (g_on), inside the collector's own allocations (__sonde_quiet), or
 * while this thread is already recording (t_busy: the recording path never
 * allocates, but a data-file growth maps memory).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracer.h"

extern __thread int __sonde_quiet __attribute__((tls_model("initial-exec")));

static _Atomic int g_on;
static SONDE_TLS int t_busy;	  /* recording, or resolving, on this thread */
static SONDE_TLS int t_resolving; /* inside dlsym on this thread */

REAL_DECL(malloc);
REAL_DECL(calloc);
REAL_DECL(realloc);
REAL_DECL(free);
REAL_DECL(valloc);
REAL_DECL(pvalloc);
REAL_DECL(memalign);
REAL_DECL(posix_memalign);
REAL_DECL(aligned_alloc);
REAL_DECL(mmap);
REAL_DECL(munmap);
REAL_DECL(mremap);

/* ---- bootstrap arena: allocations made before the real functions are
 * known (by dlsym itself).  Never freed; zero-filled (static storage). */

#define BOOT_SIZE (256u << 10)
static char g_boot[BOOT_SIZE] __attribute__((aligned(64)));
static _Atomic size_t g_boot_used;

struct boot_hdr {
	size_t size;
	size_t pad;
};

static void *boot_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	for (;;) {
		size_t used = atomic_load(&g_boot_used);
		size_t start = (used + sizeof(struct boot_hdr) + align - 1) & ~(align - 1);
		size_t end = start + size;
		if (end > BOOT_SIZE || end < start)
			return NULL;
		if (atomic_compare_exchange_weak(&g_boot_used, &used, end)) {
			((struct boot_hdr *)(g_boot + start))[-1].size = size;
			return g_boot + start;
		}
	}
}

static int is_boot(const void *p)
{
	return (const char *)p >= g_boot && (const char *)p < g_boot + BOOT_SIZE;
}

static size_t boot_size(const void *p)
{
	return ((const struct boot_hdr *)p)[-1].size;
}

static void resolve(void)
{
	t_resolving++;
	RESOLVE(malloc);
	RESOLVE(calloc);
	RESOLVE(realloc);
	RESOLVE(valloc);
	RESOLVE(pvalloc);
	RESOLVE(memalign);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(mmap);
	RESOLVE(munmap);
	RESOLVE(mremap);
	RESOLVE(free); /* last: ready() tells the other threads all are known */
	t_resolving--;
}

/* True when the real functions are usable; false while this thread is
 * inside dlsym (the caller then uses the arena). */
static inline int ready(void)
{
	if (__builtin_expect(REAL(free) != NULL, 1))
		return 1;
	if (t_resolving)
		return 0;
	resolve();
	return REAL(free) != NULL;
}

/* ---- time: the collector's tick (tracer.h, __sonde_trace_now) ----
 * A clock read per event (rdtsc 8 ns, clock_gettime 18 ns here) cost an
 * allocation-heavy program more than its allocator: two per malloc/free
 * pair.  The tick is one load; events get the time of the last tick
 * (millisecond resolution).  Each thread's events keep their order in
 * its stream, and a block freed on one thread and allocated on another
 * is never stamped earlier there, only maybe equal: the reader orders
 * equal times per address (lib/reader/heapleaks.c). */
static inline uint64_t stamp(void)
{
	uint64_t t = atomic_load_explicit(&__sonde_trace_now, memory_order_acquire);
	return __builtin_expect(t != 0, 1) ? t : sonde_now_ns();
}

static inline int recording(void)
{
	return atomic_load_explicit(&g_on, memory_order_relaxed) && !t_busy && !__sonde_quiet;
}

/* ---- recording ----
 *
 * Allocations and frees go into heap stream packets (format.h): a thread
 * appends byte-packed records to its current packet, so that a malloc/free
 * pair costs about 12 bytes of the file instead of 48.  The data volume,
 * not the encoding, is what an allocation-heavy program pays for: each
 * page of the file is a page fault and a page of the page cache. */

/* The calling thread's open stream packet and its coding state. */
struct hstream {
	struct sonde_block_header *blk; /* the block holding the packet */
	struct sonde_heap_stream_packet *pkt;
	uint32_t end;			/* tb->used while the packet is the block's last */
	uint32_t nbytes;
	uint64_t last_t, last_addr;
	uint64_t defined;		/* bit s: slot s holds slot_stack/func[s] */
	uint64_t slot_stack[SONDE_HEAP_STREAM_SLOTS];
	uint8_t slot_func[SONDE_HEAP_STREAM_SLOTS];
};
static SONDE_TLS struct hstream t_hs;

#define MAX_RECORD (1 + 1 + 8 + 3 * 10)

/* Where the next record of at most MAX_RECORD bytes goes: the end of the
 * thread's open packet when it is still the last of its block and has
 * room, else a new packet whose times count from t.  NULL: not recorded
 * (paused, or the data file is out of room; counted as lost there). */
static inline uint8_t *hs_begin(uint64_t t)
{
	struct hstream *h = &t_hs;
	struct sonde_tblock *tb = &__sonde_tblocks[SONDE_KIND_HEAP];
	if (__builtin_expect(tb->blk != NULL && tb->blk == h->blk && tb->used == h->end &&
				     (size_t)((uint8_t *)(h->pkt + 1) - (uint8_t *)(tb->blk + 1)) + h->nbytes +
						     MAX_RECORD <= SONDE_BLOCK_PAYLOAD &&
				     !atomic_load_explicit(&__sonde_paused, memory_order_relaxed),
			     1))
		return (uint8_t *)(h->pkt + 1) + h->nbytes;
	struct sonde_heap_stream_packet *k =
		sonde_reserve(SONDE_KIND_HEAP, (sizeof *k + MAX_RECORD + 7) & ~(size_t)7);
	if (!k)
		return NULL;
	k->type = SONDE_PKT_HEAP_STREAM;
	k->size = sizeof *k;
	k->nbytes = 0;
	k->reserved = 0;
	k->base_ns = t;
	h->blk = tb->blk;
	h->pkt = k;
	h->nbytes = 0;
	h->last_t = t;
	h->last_addr = 0;
	h->defined = 0;
	return (uint8_t *)(k + 1);
}

/* The record [p, q) is complete: publish it, the packet header first, then
 * the block's used size (a reader that finds the header ahead of the used
 * size takes the records up to it). */
static inline void hs_end(uint8_t *p, uint8_t *q)
{
	struct hstream *h = &t_hs;
	struct sonde_tblock *tb = &__sonde_tblocks[SONDE_KIND_HEAP];
	h->nbytes += (uint32_t)(q - p);
	uint32_t size = (uint32_t)(sizeof *h->pkt + h->nbytes + 7) & ~7u;
	h->pkt->nbytes = (uint16_t)h->nbytes;
	h->pkt->size = (uint16_t)size;
	h->end = (uint32_t)((uint8_t *)h->pkt - (uint8_t *)(tb->blk + 1)) + size;
	tb->used = h->end;
	__atomic_store_n(&tb->blk->used, tb->used, __ATOMIC_RELEASE);
}

static inline uint8_t *put_u(uint8_t *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	return q;
}

/* The time and address fields common to all records: times never
 * decrease within a packet (a thread's stamp read from the clock while no
 * tick runs may be ahead of the next tick's). */
static inline uint8_t *put_dt(uint8_t *q, uint64_t t)
{
	struct hstream *h = &t_hs;
	uint64_t dt = t > h->last_t ? t - h->last_t : 0;
	h->last_t += dt;
	return put_u(q, dt);
}

static inline uint8_t *put_addr(uint8_t *q, uint64_t addr)
{
	struct hstream *h = &t_hs;
	int64_t d = (int64_t)(addr - h->last_addr);
	h->last_addr = addr;
	return put_u(q, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
}

/* ra, cfa: the interposer's return address and CFA (the stack cache key). */
static __attribute__((noinline)) void record_alloc(int func, void *p, size_t bytes, uint64_t ra, uint64_t cfa)
{
	t_busy = 1;
	uint64_t t = stamp();
	uint64_t stack = __sonde_trace_stack_at(ra, cfa);
	uint8_t *w = hs_begin(t);
	if (w) {
		struct hstream *h = &t_hs;
		unsigned slot = (unsigned)(((stack ^ (uint64_t)func) * 0x9e3779b97f4a7c15ull) >> 58);
		uint8_t *q = w;
		if ((h->defined >> slot & 1) && h->slot_stack[slot] == stack && h->slot_func[slot] == func) {
			*q++ = (uint8_t)slot;
		} else {
			*q++ = (uint8_t)(0x80 | slot);
			*q++ = (uint8_t)func;
			memcpy(q, &stack, 8);
			q += 8;
			h->slot_stack[slot] = stack;
			h->slot_func[slot] = (uint8_t)func;
			h->defined |= 1ull << slot;
		}
		q = put_dt(q, t);
		q = put_u(q, bytes);
		q = put_addr(q, (uint64_t)(uintptr_t)p);
		hs_end(w, q);
	}
	t_busy = 0;
}

/* A free that happened at `t` (read before the real call, so that a block
 * reused by another thread is always allocated after it was freed).
 * Nothing here touches errno (the block is mapped by system calls that
 * restore it). */
static __attribute__((noinline)) void record_free(int func, void *p, uint64_t t)
{
	t_busy = 1;
	uint8_t *w = hs_begin(t);
	if (w) {
		uint8_t *q = w;
		*q++ = (uint8_t)(0x40 | func);
		q = put_dt(q, t);
		q = put_addr(q, (uint64_t)(uintptr_t)p);
		hs_end(w, q);
	}
	t_busy = 0;
}

/* ---- the interposers ---- */

SONDE_EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 16);
	void *p = REAL(malloc)(n);
	if (recording())
		record_alloc(SONDE_HEAP_MALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *calloc(size_t nm, size_t sz)
{
	if (__builtin_expect(!ready(), 0)) {
		size_t n;
		if (__builtin_mul_overflow(nm, sz, &n))
			return NULL;
		return boot_alloc(n, 16); /* static storage: already zero */
	}
	void *p = REAL(calloc)(nm, sz);
	if (recording())
		record_alloc(SONDE_HEAP_CALLOC, p, nm * sz, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void free(void *p)
{
	if (!p || is_boot(p))
		return;
	if (__builtin_expect(!ready(), 0))
		return; /* cannot happen: p came from somewhere */
	if (recording()) {
		record_free(SONDE_HEAP_FREE, p, stamp());
	}
	REAL(free)(p);
}

/* realloc and reallocarray: a free of the old block (when it is released)
 * and an allocation of the new one. */
static inline __attribute__((always_inline)) void *do_realloc(int func, void *old, size_t nm, size_t sz)
{
	size_t n;
	if (__builtin_mul_overflow(nm, sz, &n)) {
		if (func == SONDE_HEAP_REALLOCARRAY) {
			errno = ENOMEM;
			return NULL;
		}
		n = SIZE_MAX;
	}
	if (is_boot(old)) {
		/* A block from the arena moves to the real heap (or stays in
		 * the arena before the real functions are known). */
		void *p = ready() ? malloc(n) : boot_alloc(n, 16);
		if (p) {
			size_t keep = boot_size(old);
			memcpy(p, old, keep < n ? keep : n);
		}
		return p;
	}
	if (__builtin_expect(!ready(), 0))
		return old ? NULL : boot_alloc(n, 16);
	/* reallocarray is realloc after the overflow check above; glibc's
	 * calls realloc through the PLT, which would be recorded twice. */
	if (!recording())
		return REAL(realloc)(old, n);
	uint64_t t0 = stamp();
	void *p = REAL(realloc)(old, n);
	if (old && (p || n == 0))
		record_free(func, old, t0); /* moved, resized in place, or freed by realloc(p, 0) */
	if (p || !old || n != 0)
		record_alloc(func, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA()); /* realloc(NULL, n), a new block, or a failure */
	return p;
}

SONDE_EXPORT void *realloc(void *old, size_t n)
{
	return do_realloc(SONDE_HEAP_REALLOC, old, n, 1);
}

SONDE_EXPORT void *reallocarray(void *old, size_t nm, size_t sz)
{
	return do_realloc(SONDE_HEAP_REALLOCARRAY, old, nm, sz);
}

SONDE_EXPORT void *memalign(size_t align, size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, align);
	void *p = REAL(memalign)(align, n);
	if (recording())
		record_alloc(SONDE_HEAP_MEMALIGN, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, align);
	void *p = REAL(aligned_alloc)(align, n);
	if (recording())
		record_alloc(SONDE_HEAP_ALIGNED_ALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (__builtin_expect(!ready(), 0)) {
		void *p = boot_alloc(n, align);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	int rc = REAL(posix_memalign)(out, align, n);
	if (recording())
		record_alloc(SONDE_HEAP_POSIX_MEMALIGN, rc == 0 ? *out : NULL, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return rc;
}

SONDE_EXPORT void *valloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 4096);
	void *p = REAL(valloc)(n);
	if (recording())
		record_alloc(SONDE_HEAP_VALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *pvalloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 4096);
	void *p = REAL(pvalloc)(n);
	if (recording())
		record_alloc(SONDE_HEAP_PVALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

/* ---- mappings ----
 *
 * Only anonymous private mappings (MAP_PRIVATE | MAP_ANONYMOUS) are heap:
 * memory the process asked for and owns alone, what an allocator (or a
 * program acting as one) gets from the kernel.  A mapping of a file,
 * private or shared, is a view of the file (git maps its pack files; an
 * image of gigabytes is no leak for being left mapped until exit); a
 * device (/dev/zero, a GPU) is the device's; shared anonymous memory is a
 * shared memory object like shm_open's, mapped to share it with fork
 * children, who hold the same pages: counting it in each process would
 * count it once per process, and its end is the last process's unmap, not
 * this one's.
 *
 * So that an munmap or mremap of a mapping that is not heap records
 * nothing (no free, no unmatched free), the heap mappings recorded and
 * still mapped are kept in a table, sorted by address, highest first
 * (mmap hands out addresses downwards, so a new mapping usually goes at
 * the end).  A range that an munmap, an mremap or a new mapping (MAP_FIXED,
 * or one the kernel placed where a mapping was unmapped behind our back)
 * overlaps releases what it covers of the heap mappings it touches (a
 * mapping unmapped in part keeps the rest: it shrinks, or a hole splits
 * it in two), and records one munmap of the range: what the reader does
 * with that munmap (lib/reader/heapleaks.c) is the same.  The table is in memory mapped by system
 * call; a spin lock guards it, held only for the search and the move of
 * entries (never across a system call but the table's own growth); a
 * signal handler that maps memory while its thread holds the lock gets its
 * mapping untracked rather than a deadlock. */

struct maprange {
	uintptr_t lo, hi;
};

#define MAPTAB_MAX (1u << 22) /* entries (64 MB of table): then mappings go untracked */

static struct maprange *g_maps; /* g_nmaps entries, lo descending, disjoint */
static size_t g_nmaps, g_capmaps;
static atomic_flag g_maplock = ATOMIC_FLAG_INIT;
static SONDE_TLS int t_maplocked;
static _Atomic int g_maptab_full; /* logged once */
static _Atomic int g_maptab_lost; /* a part left by a partial munmap found no room */

static int maps_lock(void)
{
	if (t_maplocked)
		return 0; /* a signal handler interrupted this thread inside */
	t_maplocked = 1;
	while (atomic_flag_test_and_set_explicit(&g_maplock, memory_order_acquire))
		sched_yield();
	return 1;
}

static void maps_unlock(void)
{
	atomic_flag_clear_explicit(&g_maplock, memory_order_release);
	t_maplocked = 0;
}

/* The first entry that starts below hi (entries before it lie at or above
 * hi). */
static size_t maps_below(uintptr_t hi)
{
	size_t a = 0, b = g_nmaps;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (g_maps[m].lo >= hi)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Room for one more entry.  0 when the table cannot grow.  Called locked. */
static int maps_room(void)
{
	if (g_nmaps < g_capmaps)
		return 1;
	size_t cap = g_capmaps ? 2 * g_capmaps : 1024;
	if (cap > MAPTAB_MAX)
		return 0;
	void *p = (void *)sonde_own_syscall(SYS_mmap, NULL, cap * sizeof *g_maps, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	if (g_maps) {
		memcpy(p, g_maps, g_nmaps * sizeof *g_maps);
		sonde_own_syscall(SYS_munmap, g_maps, g_capmaps * sizeof *g_maps);
	}
	g_maps = p;
	g_capmaps = cap;
	return 1;
}

/* Puts [lo, hi) at position i (the order is the caller's).  0 when the
 * table cannot grow.  Called locked. */
static int maps_insert(size_t i, uintptr_t lo, uintptr_t hi)
{
	if (!maps_room())
		return 0;
	memmove(g_maps + i + 1, g_maps + i, (g_nmaps - i) * sizeof *g_maps);
	g_maps[i] = (struct maprange){ lo, hi };
	g_nmaps++;
	return 1;
}

/* Takes [lo, hi) out of the entries; how many it touched.  Only what it
 * covers goes: an entry that reaches past it keeps that part (shrinks at
 * an end, or, with a hole in its middle, becomes two), as the kernel's
 * mapping does.  Called locked. */
static size_t maps_release(uintptr_t lo, uintptr_t hi)
{
	size_t i = maps_below(hi), j = i;
	while (j < g_nmaps && g_maps[j].hi > lo) /* disjoint: they end in order too */
		j++;
	if (j == i)
		return 0;
	struct maprange top = g_maps[i], bottom = g_maps[j - 1];
	memmove(g_maps + i, g_maps + j, (g_nmaps - j) * sizeof *g_maps);
	g_nmaps -= j - i;
	/* highest first: the part above hi goes before the part below lo */
	if (bottom.lo < lo && !maps_insert(i, bottom.lo, lo))
		atomic_store(&g_maptab_lost, 1);
	if (top.hi > hi && !maps_insert(i, hi, top.hi))
		atomic_store(&g_maptab_lost, 1);
	return j - i;
}

/* Adds [lo, hi), which overlaps no entry (maps_release was called for
 * it).  0 when the table cannot grow: the mapping is then not recorded.
 * Called locked. */
static int maps_add(uintptr_t lo, uintptr_t hi)
{
	return maps_insert(maps_below(hi), lo, hi);
}

static inline uintptr_t page_end(const void *p, size_t len)
{
	uintptr_t hi = (uintptr_t)p + len;
	return hi < (uintptr_t)p ? UINTPTR_MAX : (hi + 4095) & ~(uintptr_t)4095;
}

static int is_heap_mapping(int flags, int fd)
{
	(void)fd; /* MAP_ANONYMOUS ignores it */
	return (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE;
}

static void maptab_full(void)
{
	atomic_store(&g_maptab_lost, 0);
	if (!atomic_exchange(&g_maptab_full, 1))
		__sonde_trace_log("warning", "heap tracing: more anonymous mappings than the table holds; "
					     "later ones are not recorded");
}

/* A mapping [p, p + len) was made (flags, fd as given to mmap): whether it
 * is a heap allocation to record, and whether it replaced heap mappings
 * (an munmap of its range to record first).  2 bits: 1 alloc, 2 unmap. */
enum { MAP_ALLOC = 1, MAP_REPLACED = 2 };
static int mapped(void *p, size_t len, int flags, int fd)
{
	if (!maps_lock())
		return 0;
	int r = 0, full = 0;
	uintptr_t hi = page_end(p, len);
	if (maps_release((uintptr_t)p, hi))
		r |= MAP_REPLACED;
	if (is_heap_mapping(flags, fd)) {
		if (maps_add((uintptr_t)p, hi))
			r |= MAP_ALLOC;
		else
			full = 1;
	}
	maps_unlock();
	if (full || atomic_load(&g_maptab_lost))
		maptab_full();
	return r;
}

static __attribute__((noinline)) void record_unmap(int func, void *p, size_t len, uint64_t t)
{
	int saved = errno;
	t_busy = 1;
	uint64_t stack = __sonde_trace_stack();
	struct sonde_heap_packet *k = __sonde_trace_reserve(SONDE_KIND_HEAP, sizeof *k);
	if (k) {
		k->type = SONDE_PKT_HEAP;
		k->size = sizeof *k;
		k->func = (uint8_t)func;
		k->flags = SONDE_HEAPF_FREE;
		k->reserved = 0;
		k->time_ns = t;
		k->addr = (uint64_t)(uintptr_t)p;
		k->bytes = len;
		k->stack_id = stack;
		__sonde_trace_commit(SONDE_KIND_HEAP, sizeof *k);
	}
	t_busy = 0;
	errno = saved;
}

SONDE_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (__builtin_expect(!ready(), 0))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (!recording())
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	uint64_t t0 = stamp();
	void *p = REAL(mmap)(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		/* a failed allocation; a failed mapping of a file is nothing */
		if (is_heap_mapping(flags, fd))
			record_alloc(SONDE_HEAP_MMAP, NULL, len, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
		return p;
	}
	int e = errno;
	int r = mapped(p, len, flags, fd);
	errno = e;
	if (r & MAP_REPLACED)
		record_unmap(SONDE_HEAP_MUNMAP, p, len, t0);
	if (r & MAP_ALLOC)
		record_alloc(SONDE_HEAP_MMAP, p, len, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

SONDE_EXPORT int munmap(void *addr, size_t len)
{
	if (__builtin_expect(!ready(), 0))
		return (int)syscall(SYS_munmap, addr, len);
	if (!recording())
		return REAL(munmap)(addr, len);
	uint64_t t0 = stamp();
	int rc = REAL(munmap)(addr, len);
	if (rc == 0 && len) {
		int e = errno;
		size_t n = 0;
		if (maps_lock()) {
			n = maps_release((uintptr_t)addr, page_end(addr, len));
			maps_unlock();
		}
		if (atomic_load(&g_maptab_lost))
			maptab_full();
		errno = e;
		if (n)
			record_unmap(SONDE_HEAP_MUNMAP, addr, len, t0);
	}
	return rc;
}

/* mremap of a heap mapping is a realloc: a free of the old range and an
 * allocation of the new (even in place, as realloc).  Of any other
 * mapping it is nothing, unless its new place replaced heap mappings
 * (MREMAP_FIXED): an munmap there.  MREMAP_DONTUNMAP leaves the old range
 * mapped, and a heap mapping, and makes a new one. */
SONDE_EXPORT void *mremap(void *old, size_t oldlen, size_t len, int flags, ...)
{
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (__builtin_expect(!ready(), 0) || !REAL(mremap))
		return (void *)syscall(SYS_mremap, old, oldlen, len, flags, want);
	if (!recording())
		return REAL(mremap)(old, oldlen, len, flags, want);
	uint64_t t0 = stamp();
	void *p = REAL(mremap)(old, oldlen, len, flags, want);
	if (p == MAP_FAILED)
		return p;
	int e = errno;
	int was_heap = 0, replaced = 0, added = 0, full = 0;
	if (maps_lock()) {
		uintptr_t olo = (uintptr_t)old, ohi = page_end(old, oldlen);
		size_t i = maps_below(ohi);
		was_heap = i < g_nmaps && g_maps[i].hi > olo;
		if (was_heap && !(flags & MREMAP_DONTUNMAP))
			maps_release(olo, ohi);
		replaced = maps_release((uintptr_t)p, page_end(p, len)) != 0;
		if (was_heap) {
			if (maps_add((uintptr_t)p, page_end(p, len)))
				added = 1;
			else
				full = 1;
		}
		maps_unlock();
	}
	errno = e;
	if (full || atomic_load(&g_maptab_lost))
		maptab_full();
	if (replaced)
		record_unmap(SONDE_HEAP_MUNMAP, p, len, t0);
	if (was_heap && !(flags & MREMAP_DONTUNMAP))
		record_unmap(SONDE_HEAP_MREMAP, old, oldlen, t0);
	if (added)
		record_alloc(SONDE_HEAP_MREMAP, p, len, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

/* ---- the module (tracer.h) ------------------------------------------------ */

static void heap_start(const char *setting)
{
	int e = errno;
	__sonde_trace_setting(SONDE_KIND_HEAP, "mode", setting ? setting : "on");
	char tick[32];
	snprintf(tick, sizeof tick, "%llu", (unsigned long long)__sonde_trace_clock());
	__sonde_trace_setting(SONDE_KIND_HEAP, "tick_ns", tick);
	errno = e;
}

static const struct sonde_packet_format heap_packets[] = {
	{ SONDE_PKT_HEAP, "heap", 40,
	  "type:0:u16 size:2:u16 func:4:u8 flags:5:u8 reserved:6:u16 time_ns:8:u64 addr:16:u64 "
	  "bytes:24:u64 stack_id:32:u64" },
	{ SONDE_PKT_HEAP_FREE, "heap_free", 24,
	  "type:0:u16 size:2:u16 func:4:u8 flags:5:u8 reserved:6:u16 time_ns:8:u64 addr:16:u64" },
	{ SONDE_PKT_HEAP_SHORT, "heap_short", 32,
	  "type:0:u16 size:2:u16 func:4:u8 flags:5:u8 reserved:6:u16 dt_ns:8:i32 bytes:12:u32 addr:16:u64 "
	  "stack_id:24:u64" },
	{ SONDE_PKT_HEAP_FREE_SHORT, "heap_free_short", 16, "type:0:u16 size:2:u16 dt_ns:4:i32 addr:8:u64" },
	{ SONDE_PKT_HEAP_STREAM, "heap_stream", 16,
	  "type:0:u16 size:2:u16 nbytes:4:u16 reserved:6:u16 base_ns:8:u64 records:16:byte[nbytes]" },
};

static const struct sonde_module heap_module = {
	.kind = SONDE_KIND_HEAP,
	.on = &g_on,
	.packets = heap_packets,
	.npackets = sizeof heap_packets / sizeof heap_packets[0],
	.start = heap_start,
};

__attribute__((constructor)) static void heap_init(void)
{
	int e = errno;
	ready();
	__sonde_module_register(&heap_module);
	errno = e;
}
