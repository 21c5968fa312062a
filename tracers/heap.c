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
 * Cost: an allocation costs its stack (the unwinder and the stack table),
 * a clock read and a 40-byte packet; a free a clock read and a 24-byte
 * packet.  Nothing is recorded while the collector is not collecting
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
#include <stdio.h>
#include <unistd.h>
#include <x86intrin.h>

#include "tracer.h"

extern __thread int __sonde_quiet __attribute__((tls_model("initial-exec")));

static _Atomic int g_on;
static SONDE_TLS int t_busy;	  /* recording, or resolving, on this thread */
static SONDE_TLS int t_resolving; /* inside dlsym on this thread */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static void *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

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

#define RESOLVE(var, name) (var) = (__typeof__(var))dlsym(RTLD_NEXT, name)

static void resolve(void)
{
	t_resolving++;
	RESOLVE(real_malloc, "malloc");
	RESOLVE(real_calloc, "calloc");
	RESOLVE(real_realloc, "realloc");
	RESOLVE(real_free, "free");
	RESOLVE(real_valloc, "valloc");
	RESOLVE(real_pvalloc, "pvalloc");
	RESOLVE(real_memalign, "memalign");
	RESOLVE(real_posix_memalign, "posix_memalign");
	RESOLVE(real_aligned_alloc, "aligned_alloc");
	RESOLVE(real_mmap, "mmap");
	RESOLVE(real_munmap, "munmap");
	t_resolving--;
}

/* True when the real functions are usable; false while this thread is
 * inside dlsym (the caller then uses the arena). */
static inline int ready(void)
{
	if (__builtin_expect(real_free != NULL, 1))
		return 1;
	if (t_resolving)
		return 0;
	resolve();
	return real_free != NULL;
}

/* ---- time: the TSC, scaled to CLOCK_MONOTONIC ns ----
 * rdtsc costs half a vDSO clock_gettime (8 vs 18 ns here), and an
 * allocation-heavy program makes two reads per malloc/free pair.  Used when the kernel's own
 * clocksource is the TSC (so it is invariant and synchronised across
 * CPUs); the scale is measured over 2 ms at start-up.  rdtsc is not
 * serialising (rdtscp+lfence would cost as much as the clock), but a
 * block freed by one thread reaches another only through the allocator's
 * locks and lists, microseconds later, so a free is still stamped before
 * the block's next allocation. */
static int g_use_tsc;
static uint64_t g_tsc0, g_ns0, g_mult; /* ns = ns0 + ((tsc - tsc0) * mult >> 32) */

static inline uint64_t stamp(void)
{
	if (__builtin_expect(g_use_tsc, 1)) {
		uint64_t t = __rdtsc();
		return g_ns0 + (uint64_t)(((unsigned __int128)(t - g_tsc0) * g_mult) >> 32);
	}
	return sonde_now_ns();
}

static void calibrate(void)
{
	char buf[32] = "";
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/sys/devices/system/clocksource/clocksource0/current_clocksource",
			      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n < 3 || strncmp(buf, "tsc", 3) || (n > 3 && buf[3] != '\n'))
		return;
	unsigned aux;
	uint64_t t0 = __rdtscp(&aux), n0 = sonde_now_ns(), t1, n1;
	do {
		n1 = sonde_now_ns();
		t1 = __rdtscp(&aux);
	} while (n1 - n0 < 2000000);
	if (t1 <= t0)
		return;
	g_tsc0 = t0;
	g_ns0 = n0;
	g_mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
	g_use_tsc = 1;
	char msg[96];
	snprintf(msg, sizeof msg, "%.6f", (double)(t1 - t0) / (double)(n1 - n0));
	__sonde_trace_setting(SONDE_KIND_HEAP, "tsc_ghz", msg);
}

static inline int recording(void)
{
	return atomic_load_explicit(&g_on, memory_order_relaxed) && !t_busy && !__sonde_quiet;
}

/* ---- recording ---- */

/* The short packet forms when the time is within 2 s of the block's start
 * and the size fits 32 bits (nearly always), else the long ones.  A free
 * is reserved at its long size so that a new block (whose start is known
 * only after the reserve) never leaves it without room. */
static inline int short_dt(uint64_t t, int64_t *dt)
{
	int64_t d = (int64_t)(t - sonde_block_first_ns(SONDE_KIND_HEAP));
	*dt = d;
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* ra, cfa: the interposer's return address and CFA (the stack cache key). */
static __attribute__((noinline)) void record_alloc(int func, void *p, size_t bytes, uint64_t ra, uint64_t cfa)
{
	t_busy = 1;
	uint64_t t = stamp();
	uint64_t stack = __sonde_trace_stack_at(ra, cfa);
	void *v = sonde_reserve(SONDE_KIND_HEAP, sizeof(struct sonde_heap_packet));
	int64_t dt;
	if (v && bytes <= UINT32_MAX && short_dt(t, &dt)) {
		struct sonde_heap_short_packet *k = v;
		k->type = SONDE_PKT_HEAP_SHORT;
		k->size = sizeof *k;
		k->func = (uint8_t)func;
		k->flags = p ? SONDE_HEAPF_ALLOC : SONDE_HEAPF_FAILED;
		k->reserved = 0;
		k->dt_ns = (int32_t)dt;
		k->bytes = (uint32_t)bytes;
		k->addr = (uint64_t)(uintptr_t)p;
		k->stack_id = stack;
		sonde_commit(SONDE_KIND_HEAP, sizeof *k);
	} else if (v) {
		struct sonde_heap_packet *k = v;
		k->type = SONDE_PKT_HEAP;
		k->size = sizeof *k;
		k->func = (uint8_t)func;
		k->flags = p ? SONDE_HEAPF_ALLOC : SONDE_HEAPF_FAILED;
		k->reserved = 0;
		k->time_ns = t;
		k->addr = (uint64_t)(uintptr_t)p;
		k->bytes = bytes;
		k->stack_id = stack;
		sonde_commit(SONDE_KIND_HEAP, sizeof *k);
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
	void *v = sonde_reserve(SONDE_KIND_HEAP, sizeof(struct sonde_heap_free_packet));
	int64_t dt;
	if (v && func == SONDE_HEAP_FREE && short_dt(t, &dt)) {
		struct sonde_heap_free_short_packet *k = v;
		k->type = SONDE_PKT_HEAP_FREE_SHORT;
		k->size = sizeof *k;
		k->dt_ns = (int32_t)dt;
		k->addr = (uint64_t)(uintptr_t)p;
		sonde_commit(SONDE_KIND_HEAP, sizeof *k);
	} else if (v) {
		struct sonde_heap_free_packet *k = v;
		k->type = SONDE_PKT_HEAP_FREE;
		k->size = sizeof *k;
		k->func = (uint8_t)func;
		k->flags = SONDE_HEAPF_FREE;
		k->reserved = 0;
		k->time_ns = t;
		k->addr = (uint64_t)(uintptr_t)p;
		sonde_commit(SONDE_KIND_HEAP, sizeof *k);
	}
	t_busy = 0;
}

static __attribute__((noinline)) void record_munmap(void *p, size_t len, uint64_t t)
{
	int saved = errno;
	t_busy = 1;
	uint64_t stack = __sonde_trace_stack();
	struct sonde_heap_packet *k = __sonde_trace_reserve(SONDE_KIND_HEAP, sizeof *k);
	if (k) {
		k->type = SONDE_PKT_HEAP;
		k->size = sizeof *k;
		k->func = SONDE_HEAP_MUNMAP;
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

/* ---- the interposers ---- */

SONDE_EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 16);
	void *p = real_malloc(n);
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
	void *p = real_calloc(nm, sz);
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
	real_free(p);
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
		return real_realloc(old, n);
	uint64_t t0 = stamp();
	void *p = real_realloc(old, n);
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
	void *p = real_memalign(align, n);
	if (recording())
		record_alloc(SONDE_HEAP_MEMALIGN, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, align);
	void *p = real_aligned_alloc(align, n);
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
	int rc = real_posix_memalign(out, align, n);
	if (recording())
		record_alloc(SONDE_HEAP_POSIX_MEMALIGN, rc == 0 ? *out : NULL, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return rc;
}

SONDE_EXPORT void *valloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 4096);
	void *p = real_valloc(n);
	if (recording())
		record_alloc(SONDE_HEAP_VALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *pvalloc(size_t n)
{
	if (__builtin_expect(!ready(), 0))
		return boot_alloc(n, 4096);
	void *p = real_pvalloc(n);
	if (recording())
		record_alloc(SONDE_HEAP_PVALLOC, p, n, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

/* mmap and munmap are allocations and frees too, as in the reference
 * (every mapping, anonymous or of a file). */
SONDE_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (__builtin_expect(!ready(), 0))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	if (recording())
		record_alloc(SONDE_HEAP_MMAP, p == MAP_FAILED ? NULL : p, len, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA());
	return p;
}

SONDE_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

SONDE_EXPORT int munmap(void *addr, size_t len)
{
	if (__builtin_expect(!ready(), 0))
		return (int)syscall(SYS_munmap, addr, len);
	if (!recording())
		return real_munmap(addr, len);
	uint64_t t0 = stamp();
	int rc = real_munmap(addr, len);
	if (rc == 0)
		record_munmap(addr, len, t0);
	return rc;
}

__attribute__((constructor)) static void heap_init(void)
{
	int e = errno;
	ready();
	const char *setting;
	if (__sonde_trace_attach(SONDE_KIND_HEAP, &g_on, &setting) == 0) {
		__sonde_trace_setting(SONDE_KIND_HEAP, "mode", setting ? setting : "on");
		atomic_store(&g_on, 0); /* until the clock is calibrated */
		calibrate();
		atomic_store(&g_on, 1);
	}
	errno = e;
}
