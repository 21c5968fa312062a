/*
 * Tasks made by glibc's clone() with CLONE_VM: threads of other runtimes,
 * gprofng's mttest -DCLONE, and processes that share their creator's
 * memory.  They are sampled like pthreads, in the experiment of the
 * process whose memory they share (a task without CLONE_THREAD is shown
 * as a thread with its own tid).
 *
 * Such a task's thread pointer is whatever its creator chose: its own
 * (no CLONE_SETTLS), which another thread is using, or a block laid out
 * by a foreign runtime (CLONE_SETTLS), where sonde's initial-exec TLS
 * offsets may point at nothing.  So sonde never uses that thread pointer:
 * each task gets a private block laid out like the creator's static TLS
 * (sonde's own TLS block and errno, zeroed, under a thread control block
 * whose self pointers point at itself), and sonde switches the FS base
 * to it while its own code runs in the task: the start and end of the
 * task here, and every sample in the signal handler (sample.c).  The
 * target's code always runs on the thread pointer it chose.
 *
 * The child function is wrapped (raw_child_start), as pthread_create's
 * start routine is: it registers the task, arms its sampling source
 * and, when the function returns, records the task's tail and
 * end.  A task that never returns there (it exec'd, or ended by system
 * call) leaves its slot until recording stops.  The wrapper runs on the
 * caller's small stack, perhaps while the creator holds the malloc lock
 * (CLONE_VM shares the heap): it allocates nothing, and its block comes
 * from a pool the creator fills before the clone.
 *
 * What sonde cannot wrap, a bare clone system call or clone3, is not
 * sampled; the handler counts the samples such a task drops and the end
 * of recording logs a warning (clock.c, report_strays).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock_internal.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

int g_fsgsbase;

/* The private block, relative to its thread pointer: [g_tls_lo, g_tls_hi).
 * 0x1000 above covers the thread control block and glibc's thread
 * descriptor after it (which some glibc calls read through the self
 * pointer at 0x10: they find zeros). */
static intptr_t g_tls_lo, g_tls_hi;
static int g_raw_ok;

struct raw_rec {
	struct raw_rec *next; /* on the free list */
	int (*fn)(void *);
	void *arg;
	int flags;
	char *tp;
	size_t size; /* of the mapping, this header included */
};

static struct raw_rec *g_free;
static _Atomic int g_pool_lock;

static void pool_lock(void)
{
	while (atomic_exchange_explicit(&g_pool_lock, 1, memory_order_acquire))
		syscall(SYS_sched_yield);
}

static void pool_unlock(void)
{
	atomic_store_explicit(&g_pool_lock, 0, memory_order_release);
}

struct tls_find {
	uintptr_t addr;
	uintptr_t lo, hi;
};

static int find_tls_block(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	struct tls_find *f = p;
	if (!info->dlpi_tls_data)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_TLS)
			continue;
		uintptr_t lo = (uintptr_t)info->dlpi_tls_data, hi = lo + info->dlpi_phdr[i].p_memsz;
		if (f->addr >= lo && f->addr < hi) {
			f->lo = lo;
			f->hi = hi;
			return 1;
		}
	}
	return 0;
}

/* Where the private blocks' TLS lies: sonde's whole TLS block and errno,
 * as offsets from the thread pointer of the calling (normal) thread,
 * which are the same in every thread.  Normal context, at clock_start. */
void rawclone_init(void)
{
	g_fsgsbase = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	uintptr_t tp = tp_get();
	struct tls_find f = { (uintptr_t)&t_state, 0, 0 };
	if (!tp || !dl_iterate_phdr(find_tls_block, &f)) {
		log_event_text("warning", "sonde's TLS block was not found; tasks made by clone(CLONE_VM) "
					  "will not be sampled");
		return;
	}
	uintptr_t e = (uintptr_t)&errno;
	uintptr_t lo = f.lo < e ? f.lo : e, hi = f.hi > e + sizeof(int) ? f.hi : e + sizeof(int);
	g_tls_lo = ((intptr_t)(lo - tp)) & ~(intptr_t)63;
	g_tls_hi = (intptr_t)(hi - tp);
	if (g_tls_hi < 0x1000)
		g_tls_hi = 0x1000;
	/* Sanity: static TLS lies below the thread pointer, within a few
	 * hundred KiB of it. */
	g_raw_ok = g_tls_lo < 0 && g_tls_lo > -(16 << 20) && g_tls_hi <= (16 << 20);
	if (!g_raw_ok)
		log_event_text("warning", "sonde's TLS is not where it was expected; tasks made by "
					  "clone(CLONE_VM) will not be sampled");
}

/* A record with its private block, ready for a new task.  In the creator,
 * normal context. */
static struct raw_rec *rec_get(void)
{
	size_t hdr = (sizeof(struct raw_rec) + 63) & ~(size_t)63;
	size_t need = hdr + (size_t)(g_tls_hi - g_tls_lo);
	pool_lock();
	struct raw_rec *r = g_free;
	if (r)
		g_free = r->next;
	pool_unlock();
	if (!r) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t size = (need + page - 1) & ~(page - 1);
		void *m = sonde_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		r = m;
		r->size = size;
	} else {
		memset((char *)r + hdr, 0, r->size - hdr); /* a previous task's state */
	}
	r->next = NULL;
	r->tp = (char *)r + hdr - g_tls_lo;
	/* The thread control block: tcb and self point at it; the stack
	 * guard and pointer guard are the creator's, for code built with
	 * -fstack-protector and for glibc's pointer mangling. */
	uintptr_t own = tp_get();
	((uintptr_t *)r->tp)[0] = (uintptr_t)r->tp;
	((uintptr_t *)r->tp)[2] = (uintptr_t)r->tp;
	((uintptr_t *)r->tp)[5] = ((const uintptr_t *)own)[5];
	((uintptr_t *)r->tp)[6] = ((const uintptr_t *)own)[6];
	return r;
}

/* No TLS, no malloc: any task may return its record. */
static void rec_put(struct raw_rec *r)
{
	pool_lock();
	r->next = g_free;
	g_free = r;
	pool_unlock();
}

/* The child side: the task's own thread pointer is left alone except
 * around sonde's calls, which run on the private block.  No stack
 * protector (its canary is read through the thread pointer). */
__attribute__((noinline, optimize("no-stack-protector"))) static int raw_child_start(void *p)
{
	struct raw_rec *r = p;
	int (*fn)(void *) = r->fn;
	void *arg = r->arg;
	uintptr_t own = tp_get();
	tp_set((uintptr_t)r->tp);
	clock_raw_begin(r->flags, (void *)fn, r->tp);
	tp_set(own);
	int rc = fn(arg);
	tp_set((uintptr_t)r->tp);
	clock_raw_end();
	tp_set(own);
	/* Unregistered: a sample now finds no slot and touches nothing, so
	 * the block may go to the next task. */
	rec_put(r);
	return rc;
}

int clock_raw_clone(int (*real)(int (*)(void *), void *, int, void *, ...), int (*fn)(void *), void *stack,
		    int flags, void *arg, void *ptid, void *tls, void *ctid)
{
	if (!g_raw_ok || !fn || !stack || !atomic_load(&g_col.active) || !g_profile)
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	int saved = errno;
	struct raw_rec *r = rec_get();
	errno = saved;
	if (!r)
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	r->fn = fn;
	r->arg = arg;
	r->flags = flags;
	int rc = real(raw_child_start, stack, flags, r, ptid, tls, ctid);
	if (rc < 0) {
		int e = errno;
		rec_put(r);
		errno = e;
	}
	return rc;
}
