/*
 * libsonde_sync.so: synchronization wait tracing (`sonde collect -s`).
 *
 * Preloaded ahead of the collector only when -s is given.  Interposes the
 * blocking calls of the thread library: mutex, condition variable, rwlock,
 * semaphore and barrier waits, and joins.  A call that waited at least the
 * threshold is written as one struct sonde_sync_packet (see format.h).
 *
 * Every interposer is defined without a symbol version, so the dynamic
 * linker binds references to any version of the symbol (pthread_join@
 * GLIBC_2.2.5 from binaries built before glibc 2.34, @GLIBC_2.34 from newer
 * ones) to it.  The real functions are found with dlsym(RTLD_NEXT) in the
 * constructor, or on first use when the target calls them earlier (from
 * the collector's constructor, say); an interposer whose real function
 * does not exist fails with ENOSYS (sem_*: -1, errno ENOSYS).
 * pthread_cond_* are looked up at GLIBC_2.3.2, the current condition
 * variables (a binary still bound to the pre-2002 GLIBC_2.2.5 condvars
 * is not supported).
 *
 * Threshold (log.xml <trace kind="sync" threshold_ns=... mode=.../>):
 *   all, 0  every call is recorded;
 *   N       calls that waited at least N microseconds;
 *   on      calibrated at start, as the Oracle Studio reference says:
 *           uncontended calls into the thread library (1000 lock/unlock
 *           pairs of a private mutex, each lock timed with the experiment's
 *           clock exactly as an interposer times a wait, best average of 3
 *           rounds) times a factor of 6 (also logged: calibration_ns).  On
 *           the development machine (glibc 2.36, vDSO clock) the average is
 *           20 ns, two clock reads included, so the threshold is 120 ns.
 *
 * Cost when nothing waits: with a threshold above 0, a mutex, rwlock or
 * semaphore wait first tries the non-blocking variant (trylock, trywait);
 * when that succeeds the call returns at once, without reading any clock
 * or even the on flag.  For a default mutex the try is inline (see
 * take_default): an uncontended pthread_mutex_lock then costs what
 * glibc's does, 0.1-0.2 ns more per call in bench/sync.sh (+0.7% on a
 * loop doing little but lock and unlock); other kinds try through
 * pthread_mutex_trylock, about 2.4 ns more.  Only a call that would block reads CLOCK_MONOTONIC
 * around the real blocking call.  Condition waits, barrier waits and
 * joins block in principle and are always timed.
 *
 * Semantics are those of the real call: a trylock result other than
 * success is never returned as such, the real blocking call is made
 * instead (it waits, or returns EDEADLK, EAGAIN, ENOTRECOVERABLE...
 * itself) -- except EOWNERDEAD from a robust mutex, which means trylock
 * did acquire the mutex and is what the blocking call would have
 * returned.  Where glibc checks arguments before it tries to take the
 * object (the clock of *_clocklock and sem_clockwait, the abstime of the
 * timed rwlock and semaphore waits), the fast path is skipped for
 * arguments it would refuse; sem_wait and sem_timedwait act on a pending
 * cancellation first, as glibc's do.  A failed sem_trywait's EAGAIN is
 * never seen by the caller: errno is restored before the real sem_*wait.
 * errno is preserved across the recording of an event.
 *
 * Calls made by sonde's own libraries (the collector's internal locks) are
 * not recorded.  No interposer allocates memory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer.h"

#define CAL_CALLS 1000
#define CAL_ROUNDS 3
#define CAL_FACTOR 6

static _Atomic int g_on;
/* Wait threshold in ns; 0 records every call.  UINT64_MAX until the
 * constructor has settled it (nothing is recorded meanwhile). */
static _Atomic uint64_t g_thr = UINT64_MAX;
static SONDE_TLS int t_busy;

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ON() (atomic_load_explicit(&g_on, memory_order_relaxed) && !__sonde_vforked)
#define THR() atomic_load_explicit(&g_thr, memory_order_relaxed)

/* ---- the real functions ------------------------------------------------ */

/* X(name, PARAMS, ARGS, version to look up or NULL, what its stand-in
 * does when the function does not exist).  Every real_* pointer is always
 * callable: first a stand-in that resolves all of them (a call before the
 * constructor ran), then the real function, or a stand-in that fails
 * (ENOSYS; for the try variants "would block", so the interposer goes on
 * to the blocking call). */
#define SEM_FAIL(e)        \
	do {               \
		errno = e; \
		return -1; \
	} while (0)
#define REAL_LIST(X)                                                                                          \
	X(pthread_mutex_lock, (pthread_mutex_t * m), (m), NULL, return ENOSYS)                                 \
	X(pthread_mutex_trylock, (pthread_mutex_t * m), (m), NULL, return EBUSY)                               \
	X(pthread_mutex_timedlock, (pthread_mutex_t * m, const struct timespec *at), (m, at), NULL, return ENOSYS) \
	X(pthread_mutex_clocklock, (pthread_mutex_t * m, clockid_t c, const struct timespec *at), (m, c, at), NULL, \
	  return ENOSYS)                                                                                       \
	X(pthread_cond_wait, (pthread_cond_t * cv, pthread_mutex_t *m), (cv, m), "GLIBC_2.3.2", return ENOSYS) \
	X(pthread_cond_timedwait, (pthread_cond_t * cv, pthread_mutex_t *m, const struct timespec *at), (cv, m, at), \
	  "GLIBC_2.3.2", return ENOSYS)                                                                        \
	X(pthread_cond_clockwait, (pthread_cond_t * cv, pthread_mutex_t *m, clockid_t c, const struct timespec *at), \
	  (cv, m, c, at), "GLIBC_2.3.2", return ENOSYS)                                                        \
	X(pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l), NULL, return ENOSYS)                             \
	X(pthread_rwlock_tryrdlock, (pthread_rwlock_t * l), (l), NULL, return EBUSY)                           \
	X(pthread_rwlock_timedrdlock, (pthread_rwlock_t * l, const struct timespec *at), (l, at), NULL, return ENOSYS) \
	X(pthread_rwlock_clockrdlock, (pthread_rwlock_t * l, clockid_t c, const struct timespec *at), (l, c, at), \
	  NULL, return ENOSYS)                                                                                 \
	X(pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l), NULL, return ENOSYS)                             \
	X(pthread_rwlock_trywrlock, (pthread_rwlock_t * l), (l), NULL, return EBUSY)                           \
	X(pthread_rwlock_timedwrlock, (pthread_rwlock_t * l, const struct timespec *at), (l, at), NULL, return ENOSYS) \
	X(pthread_rwlock_clockwrlock, (pthread_rwlock_t * l, clockid_t c, const struct timespec *at), (l, c, at), \
	  NULL, return ENOSYS)                                                                                 \
	X(sem_wait, (sem_t * s), (s), NULL, SEM_FAIL(ENOSYS))                                                  \
	X(sem_trywait, (sem_t * s), (s), NULL, SEM_FAIL(EAGAIN))                                               \
	X(sem_timedwait, (sem_t * s, const struct timespec *at), (s, at), NULL, SEM_FAIL(ENOSYS))              \
	X(sem_clockwait, (sem_t * s, clockid_t c, const struct timespec *at), (s, c, at), NULL, SEM_FAIL(ENOSYS)) \
	X(pthread_barrier_wait, (pthread_barrier_t * b), (b), NULL, return ENOSYS)                             \
	X(pthread_join, (pthread_t t, void **ret), (t, ret), NULL, return ENOSYS)                              \
	X(pthread_timedjoin_np, (pthread_t t, void **ret, const struct timespec *at), (t, ret, at), NULL, return ENOSYS) \
	X(pthread_clockjoin_np, (pthread_t t, void **ret, clockid_t c, const struct timespec *at), (t, ret, c, at), \
	  NULL, return ENOSYS)

static void resolve_all(void);

/* Per function: real_NAME (REAL_DECL of tracer.h's real.h), first the
 * lazy stand-in, and the failing one. */
#define DEFINE_STANDINS(name, PARAMS, ARGS, ver, fail) \
	static int missing_##name PARAMS               \
	{                                              \
		fail;                                  \
	}                                              \
	static int lazy_##name PARAMS;                 \
	REAL_DECL(name) = lazy_##name;                 \
	static int lazy_##name PARAMS                  \
	{                                              \
		resolve_all();                         \
		return REAL(name) ARGS;                \
	}
REAL_LIST(DEFINE_STANDINS)

/* Resolve every real function, once (the stand-ins that call this are
 * gone afterwards, and a missing function gets its failing stand-in, so
 * a failed look-up, which may allocate dlerror's message, is not
 * repeated). */
static void resolve_all(void)
{
	int e = errno;
#define RESOLVE_ONE(name, PARAMS, ARGS, ver, fail)                      \
	{                                                               \
		void *p_ = real_lookup(#name, ver);                     \
		REAL_SET(name, p_ ? p_ : (void *)missing_##name);       \
	}
	REAL_LIST(RESOLVE_ONE)
	errno = e;
}

/* ---- recording ----------------------------------------------------------- */

/* Calls from sonde's own libraries are not the target's waits. */
static int from_sonde(const void *ra)
{
	return __sonde_trace_from_sonde(ra);
}

/* Write one event: a call of func on obj that started at t0, waited wait
 * ns and returned result; ra is the interposer's return address (the
 * caller).  errno is preserved. */
static __attribute__((noinline)) void record(int func, int result, uint64_t t0, uint64_t wait, uint64_t obj,
					     const void *ra)
{
	if (!ON() || t_busy || from_sonde(ra))
		return;
	int e = errno;
	t_busy = 1;
	uint64_t stack = __sonde_trace_stack();
	struct sonde_sync_packet *p = __sonde_trace_reserve(SONDE_KIND_SYNC, sizeof *p);
	if (p) {
		p->type = SONDE_PKT_SYNC;
		p->size = (uint16_t)sizeof *p;
		p->func = (uint16_t)func;
		p->reserved = 0;
		p->result = result;
		p->reserved2 = 0;
		p->time_ns = t0;
		p->wait_ns = wait;
		p->object = obj;
		p->stack_id = stack;
		__sonde_trace_commit(SONDE_KIND_SYNC, sizeof *p);
	}
	t_busy = 0;
	errno = e;
}

/* Time `call` (an int expression) into r; record it when it waited at
 * least thr.  ra is the interposer's return address. */
#define TIMED(func, obj, thr, ra, call)                                                      \
	do {                                                                                 \
		uint64_t t0_ = sonde_now_ns();                                               \
		r = (call);                                                                  \
		uint64_t w_ = sonde_now_ns() - t0_;                                          \
		if (UNLIKELY(w_ >= (thr)))                                                   \
			record((func), r, t0_, w_, (uint64_t)(uintptr_t)(obj), (ra));        \
	} while (0)

/* The same for sem_*: result is errno when the call returned -1; errno
 * as the real call left it. */
#define TIMED_SEM(func, obj, thr, ra, call)                                                  \
	do {                                                                                 \
		uint64_t t0_ = sonde_now_ns();                                               \
		r = (call);                                                                  \
		int e_ = errno;                                                              \
		uint64_t w_ = sonde_now_ns() - t0_;                                          \
		if (UNLIKELY(w_ >= (thr)))                                                   \
			record((func), r ? e_ : 0, t0_, w_, (uint64_t)(uintptr_t)(obj), (ra)); \
		errno = e_;                                                                  \
	} while (0)

/* Interposers are split in two: a small fast part (threshold above 0 and
 * the try variant succeeded: return) that touches neither a clock nor the
 * on flag -- it is right whether tracing is on or not -- and the rest,
 * kept out of line so that the fast part has a short prologue: not
 * tracing, the real call; else the timed real call.
 *
 *   PARAMS: the parameter list; ARGS: the same names as call arguments;
 *   KIND: which fast part (MUTEX, RD, WR, SEM, SEMCANCEL, ALWAYS);
 *   PRE: a condition for trying the fast part at all: where glibc checks
 *        the arguments before it tries to take the object, the fast part
 *        must not succeed where the real call fails (e.g. clocklock with
 *        an unsupported clock is EINVAL even on a free mutex);
 *   SLOW: the out-of-line part's body, which has thr, ra and r. */
/* The uncontended lock of a default mutex, inline.  A trylock through a
 * pointer costs about 2.4 ns more than the plain lock (glibc's trylock is
 * itself slower than its lock), 15% of a loop that does little but lock
 * and unlock.  For the default kind (0: PTHREAD_MUTEX_TIMED_NP, no
 * elision, not robust, not shared) glibc's protocol is public ABI in
 * practice (pthread_mutex_t's fields, nptl/pthread_mutex_lock.c): the lock
 * word goes 0 -> 1 by compare-and-swap with acquire order, then the owner
 * tid and the user count are recorded; unlock and the waiters' futex
 * protocol (2 = contended) are glibc's own.  sync_init checks this
 * against the real functions before enabling it (g_inline_ok); any other
 * kind, or a taken lock word, takes the general path. */
static int g_inline_ok;
static SONDE_TLS pid_t t_tid;

static void forget_tid(void)
{
	t_tid = 0; /* a fork child is a new thread */
}

static inline int take_default(pthread_mutex_t *m)
{
	if (m->__data.__kind != 0)
		return 0;
	pid_t tid = t_tid;
	if (UNLIKELY(!tid)) {
		long t = sonde_own_syscall(SYS_gettid, 0);
		if (t <= 0) /* refused by the target's seccomp filter */
			return 0;
		tid = t_tid = (pid_t)t;
	}
	int z = 0;
	if (!__atomic_compare_exchange_n(&m->__data.__lock, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	m->__data.__owner = tid;
	++m->__data.__nusers;
	return 1;
}

/* Does glibc's default mutex behave as take_default assumes? */
static int check_inline(void)
{
	pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int ok = 1;
	if (REAL(pthread_mutex_lock)(&a) != 0)
		return 0;
	ok &= a.__data.__lock == 1 && a.__data.__owner == tid && a.__data.__nusers == 1 && a.__data.__kind == 0;
	ok &= pthread_mutex_unlock(&a) == 0;
	ok &= a.__data.__lock == 0 && a.__data.__owner == 0 && a.__data.__nusers == 0;
	if (!ok)
		return 0;
	t_tid = tid;
	if (!take_default(&b))
		return 0;
	ok &= REAL(pthread_mutex_trylock)(&b) == EBUSY;
	ok &= pthread_mutex_unlock(&b) == 0;
	ok &= b.__data.__lock == 0 && b.__data.__owner == 0 && b.__data.__nusers == 0;
	ok &= REAL(pthread_mutex_trylock)(&b) == 0 && pthread_mutex_unlock(&b) == 0;
	return ok && b.__data.__kind == 0; /* no elision flag set by the real calls */
}

#define RA() __builtin_return_address(0)
#define UNPAREN(...) __VA_ARGS__
#define FIRST(a, ...) a
#define INTERPOSE(name, PARAMS, ARGS, KIND, PRE, SLOW)                                   \
	static __attribute__((noinline)) int slow_##name(uint64_t thr, const void *ra,   \
							  UNPAREN PARAMS)                \
	{                                                                                \
		if (!ON())                                                               \
			return REAL(name) ARGS;                                          \
		int r;                                                                   \
		SLOW;                                                                    \
		return r;                                                                \
	}                                                                                \
	SONDE_EXPORT int name PARAMS                                                     \
	{                                                                                \
		uint64_t thr = THR();                                                    \
		if (LIKELY(thr) && (PRE)) {                                              \
			FAST_##KIND(FIRST ARGS);                                         \
		}                                                                        \
		return slow_##name(thr, RA(), UNPAREN ARGS);                             \
	}

/* glibc's own argument checks (futex_abstimed_supported_clockid,
 * valid_nanoseconds). */
#define CLOCK_OK(clk) ((clk) == CLOCK_REALTIME || (clk) == CLOCK_MONOTONIC)
#define ABS_OK(at) abs_ok(at)
static inline int abs_ok(const struct timespec *at)
{
	/* glibc declares abstime nonnull, so the compiler would drop a NULL
	 * check on it; glibc's rwlocks do check (NULL: no timeout), and a
	 * NULL here must reach the real call, not crash in the interposer. */
	__asm__("" : "+r"(at));
	return at && at->tv_nsec >= 0 && at->tv_nsec < 1000000000;
}

/* The fast parts.  MUTEX: trylock acquired the mutex: 0, or EOWNERDEAD
 * (a robust mutex whose owner died: acquired, and what the blocking call
 * returns too).  Any other result goes to the real blocking call, which
 * gives the right answer (waits, or fails with EDEADLK, EAGAIN,
 * ENOTRECOVERABLE, EINVAL... itself).  glibc checks a timed mutex lock's
 * abstime only when it would block, as trylock-first does. */
#define FAST_MUTEX(obj)                                            \
	{                                                          \
		if (LIKELY(g_inline_ok) && take_default(obj))      \
			return 0;                                  \
		int t_ = REAL(pthread_mutex_trylock)(obj);         \
		if (LIKELY(t_ == 0) || t_ == EOWNERDEAD)           \
			return t_;                                 \
	}
/* RD, WR: only success returns at once; a failed try (EBUSY, EAGAIN for
 * too many readers, ...) goes to the real blocking call.  glibc checks a
 * timed rwlock lock's clock and abstime first: PRE does the same. */
#define FAST_RD(obj)                                               \
	if (LIKELY(REAL(pthread_rwlock_tryrdlock)(obj) == 0))      \
		return 0;
#define FAST_WR(obj)                                               \
	if (LIKELY(REAL(pthread_rwlock_trywrlock)(obj) == 0))      \
		return 0;
/* SEM: sem_trywait succeeded: done (errno untouched).  It failed: put
 * back the caller's errno (trywait set EAGAIN) and make the real call.
 * SEMCANCEL: sem_wait and sem_timedwait are cancellation points even when
 * they do not block (glibc calls __pthread_testcancel before trying);
 * sem_trywait is not, so the fast part acts on a pending cancellation
 * first, as they do. */
#define FAST_SEM_(obj)                                             \
	{                                                          \
		int e0_ = errno;                                   \
		if (LIKELY(REAL(sem_trywait)(obj) == 0))           \
			return 0;                                  \
		errno = e0_;                                       \
	}
#define FAST_SEMCANCEL(obj)        \
	pthread_testcancel();      \
	FAST_SEM_(obj)
/* ALWAYS: condition waits, barriers, joins block in principle: timed. */
#define FAST_ALWAYS(obj)

/* ---- mutexes ------------------------------------------------------------ */

INTERPOSE(pthread_mutex_lock, (pthread_mutex_t * m), (m), MUTEX, 1,
	  TIMED(SONDE_SYNC_MUTEX_LOCK, m, thr, ra, REAL(pthread_mutex_lock)(m)))
INTERPOSE(pthread_mutex_timedlock, (pthread_mutex_t *restrict m, const struct timespec *restrict at), (m, at), MUTEX,
	  1, TIMED(SONDE_SYNC_MUTEX_TIMEDLOCK, m, thr, ra, REAL(pthread_mutex_timedlock)(m, at)))
INTERPOSE(pthread_mutex_clocklock,
	  (pthread_mutex_t *restrict m, clockid_t clk, const struct timespec *restrict at), (m, clk, at), MUTEX,
	  CLOCK_OK(clk), TIMED(SONDE_SYNC_MUTEX_CLOCKLOCK, m, thr, ra, REAL(pthread_mutex_clocklock)(m, clk, at)))

/* ---- condition variables (always timed) ---------------------------------- */

INTERPOSE(pthread_cond_wait, (pthread_cond_t *restrict c, pthread_mutex_t *restrict m), (c, m), ALWAYS, 0,
	  TIMED(SONDE_SYNC_COND_WAIT, c, thr, ra, REAL(pthread_cond_wait)(c, m)))
INTERPOSE(pthread_cond_timedwait,
	  (pthread_cond_t *restrict c, pthread_mutex_t *restrict m, const struct timespec *restrict at), (c, m, at),
	  ALWAYS, 0, TIMED(SONDE_SYNC_COND_TIMEDWAIT, c, thr, ra, REAL(pthread_cond_timedwait)(c, m, at)))
INTERPOSE(pthread_cond_clockwait,
	  (pthread_cond_t *restrict c, pthread_mutex_t *restrict m, clockid_t clk, const struct timespec *restrict at),
	  (c, m, clk, at), ALWAYS, 0,
	  TIMED(SONDE_SYNC_COND_CLOCKWAIT, c, thr, ra, REAL(pthread_cond_clockwait)(c, m, clk, at)))

/* ---- rwlocks ------------------------------------------------------------ */

INTERPOSE(pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l), RD, 1,
	  TIMED(SONDE_SYNC_RWLOCK_RDLOCK, l, thr, ra, REAL(pthread_rwlock_rdlock)(l)))
INTERPOSE(pthread_rwlock_timedrdlock, (pthread_rwlock_t *restrict l, const struct timespec *restrict at), (l, at),
	  RD, ABS_OK(at), TIMED(SONDE_SYNC_RWLOCK_TIMEDRDLOCK, l, thr, ra, REAL(pthread_rwlock_timedrdlock)(l, at)))
INTERPOSE(pthread_rwlock_clockrdlock,
	  (pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict at), (l, clk, at), RD,
	  CLOCK_OK(clk) && ABS_OK(at),
	  TIMED(SONDE_SYNC_RWLOCK_CLOCKRDLOCK, l, thr, ra, REAL(pthread_rwlock_clockrdlock)(l, clk, at)))
INTERPOSE(pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l), WR, 1,
	  TIMED(SONDE_SYNC_RWLOCK_WRLOCK, l, thr, ra, REAL(pthread_rwlock_wrlock)(l)))
INTERPOSE(pthread_rwlock_timedwrlock, (pthread_rwlock_t *restrict l, const struct timespec *restrict at), (l, at),
	  WR, ABS_OK(at), TIMED(SONDE_SYNC_RWLOCK_TIMEDWRLOCK, l, thr, ra, REAL(pthread_rwlock_timedwrlock)(l, at)))
INTERPOSE(pthread_rwlock_clockwrlock,
	  (pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict at), (l, clk, at), WR,
	  CLOCK_OK(clk) && ABS_OK(at),
	  TIMED(SONDE_SYNC_RWLOCK_CLOCKWRLOCK, l, thr, ra, REAL(pthread_rwlock_clockwrlock)(l, clk, at)))

/* ---- semaphores --------------------------------------------------------- */

INTERPOSE(sem_wait, (sem_t * s), (s), SEMCANCEL, 1, TIMED_SEM(SONDE_SYNC_SEM_WAIT, s, thr, ra, REAL(sem_wait)(s)))
INTERPOSE(sem_timedwait, (sem_t *restrict s, const struct timespec *restrict at), (s, at), SEMCANCEL, ABS_OK(at),
	  TIMED_SEM(SONDE_SYNC_SEM_TIMEDWAIT, s, thr, ra, REAL(sem_timedwait)(s, at)))
INTERPOSE(sem_clockwait, (sem_t *restrict s, clockid_t clk, const struct timespec *restrict at), (s, clk, at),
	  SEM_, CLOCK_OK(clk) && ABS_OK(at),
	  TIMED_SEM(SONDE_SYNC_SEM_CLOCKWAIT, s, thr, ra, REAL(sem_clockwait)(s, clk, at)))

/* ---- barriers and joins (always timed) ----------------------------------- */

INTERPOSE(pthread_barrier_wait, (pthread_barrier_t * b), (b), ALWAYS, 0,
	  TIMED(SONDE_SYNC_BARRIER_WAIT, b, thr, ra, REAL(pthread_barrier_wait)(b)))
INTERPOSE(pthread_join, (pthread_t t, void **ret), (t, ret), ALWAYS, 0,
	  TIMED(SONDE_SYNC_JOIN, t, thr, ra, REAL(pthread_join)(t, ret)))
INTERPOSE(pthread_timedjoin_np, (pthread_t t, void **ret, const struct timespec *at), (t, ret, at), ALWAYS, 0,
	  TIMED(SONDE_SYNC_TIMEDJOIN, t, thr, ra, REAL(pthread_timedjoin_np)(t, ret, at)))
INTERPOSE(pthread_clockjoin_np, (pthread_t t, void **ret, clockid_t clk, const struct timespec *at),
	  (t, ret, clk, at), ALWAYS, 0,
	  TIMED(SONDE_SYNC_CLOCKJOIN, t, thr, ra, REAL(pthread_clockjoin_np)(t, ret, clk, at)))

/* ---- start -------------------------------------------------------------- */

/* The "on" threshold: the average time of an uncontended lock of a
 * private mutex, measured with the experiment's clock as an interposer
 * measures a wait (so the two clock reads are part of it), best of
 * CAL_ROUNDS rounds of CAL_CALLS calls (a round that was preempted or
 * migrated says nothing about the call), times CAL_FACTOR. */
static uint64_t calibrate(uint64_t *avg_ns)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	uint64_t best = UINT64_MAX;
	for (int round = 0; round < CAL_ROUNDS; round++) {
		uint64_t sum = 0;
		for (int i = 0; i < CAL_CALLS; i++) {
			uint64_t t0 = sonde_now_ns();
			REAL(pthread_mutex_lock)(&m);
			uint64_t t1 = sonde_now_ns();
			pthread_mutex_unlock(&m);
			sum += t1 - t0;
		}
		uint64_t avg = (sum + CAL_CALLS / 2) / CAL_CALLS;
		if (avg < best)
			best = avg;
	}
	pthread_mutex_destroy(&m);
	if (best == 0)
		best = 1;
	*avg_ns = best;
	return best * CAL_FACTOR;
}

/* ---- the module (tracer.h) ------------------------------------------------ */

/* The threshold from the setting, calibrated for "on"; logged. */
static void sync_start(const char *setting)
{
	int e = errno;
	char mode[32], buf[160];
	uint64_t thr;
	char *end = NULL;
	unsigned long long us = 0;
	int numeric = setting && *setting >= '0' && *setting <= '9';
	if (numeric) {
		errno = 0;
		us = strtoull(setting, &end, 10);
		numeric = !errno && end && !*end && us <= UINT64_MAX / 1000;
	}
	if (setting && !strcmp(setting, "all")) {
		thr = 0;
		snprintf(mode, sizeof mode, "all");
	} else if (numeric && us == 0) {
		thr = 0;
		snprintf(mode, sizeof mode, "all");
	} else if (numeric) {
		thr = us * 1000;
		snprintf(mode, sizeof mode, "%llu", us);
	} else {
		if (setting && strcmp(setting, "on")) {
			snprintf(buf, sizeof buf, "invalid sync tracing setting '%.40s'; calibrating as for 'on'",
				 setting);
			__sonde_trace_log("warning", buf);
		}
		if (REAL(pthread_mutex_lock) == missing_pthread_mutex_lock) {
			__sonde_trace_log("error", "pthread_mutex_lock not found; sync tracing disabled");
			atomic_store(&g_on, 0);
			errno = e;
			return;
		}
		uint64_t avg = 0;
		thr = calibrate(&avg);
		snprintf(mode, sizeof mode, "on");
		snprintf(buf, sizeof buf, "%" PRIu64, avg);
		__sonde_trace_setting(SONDE_KIND_SYNC, "calibration_ns", buf);
	}
	atomic_store(&g_thr, thr);
	snprintf(buf, sizeof buf, "%" PRIu64, thr);
	__sonde_trace_setting(SONDE_KIND_SYNC, "threshold_ns", buf);
	__sonde_trace_setting(SONDE_KIND_SYNC, "mode", mode);
	__sonde_trace_setting(SONDE_KIND_SYNC, "inline_mutex", g_inline_ok ? "1" : "0");
	errno = e;
}

static const struct sonde_packet_format sync_packets[] = {
	{ SONDE_PKT_SYNC, "sync", 48,
	  "type:0:u16 size:2:u16 func:4:u16 reserved:6:u16 result:8:i32 reserved2:12:u32 "
	  "time_ns:16:u64 wait_ns:24:u64 object:32:u64 stack_id:40:u64" },
};

static const struct sonde_module sync_module = {
	.kind = SONDE_KIND_SYNC,
	.on = &g_on,
	.packets = sync_packets,
	.npackets = sizeof sync_packets / sizeof sync_packets[0],
	.start = sync_start,
};

__attribute__((constructor)) static void sync_init(void)
{
	int e = errno;
	resolve_all();
	/* Not the module's fork_child: the inline mutex path uses t_tid in
	 * every fork child, recording or not. */
	pthread_atfork(NULL, NULL, forget_tid);
	g_inline_ok = check_inline();
	__sonde_module_register(&sync_module);
	errno = e;
}
