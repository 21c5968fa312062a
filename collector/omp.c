/*
 * OpenMP's thread states (include/sonde/states.h: OpenMP Work, and the
 * wait by cause: barrier, lock, taskwait, idle, overhead) with every clock
 * sample of a thread of an OpenMP program, and with its off-CPU samples
 * when it is blocked in an OpenMP wait (collect -w).  Two runtimes, two
 * ways (doc/sonde-collect.md, "OpenMP"):
 *
 *   - LLVM's libomp (clang -fopenmp): an OMPT tool.  The collector
 *     exports ompt_start_tool, which the runtime calls as it starts; the
 *     tool's initializer takes ompt_get_state, which the state provider
 *     (omp_state.c) calls in the sampling handler (the OpenMP
 *     specification allows it there).  With off-CPU sampling, the
 *     callbacks sync_region_wait, mutex_acquire/acquired and implicit_task
 *     also keep the thread's word (below), which the off-CPU sampler reads
 *     for a blocked thread (ompt_get_state answers for the calling thread
 *     only).  A tool of the user's wins: one that ompt_start_tool finds
 *     after the collector's (dlsym RTLD_NEXT) and that accepts, or
 *     OMP_TOOL_LIBRARIES; then sonde's OpenMP states are off (log.xml says
 *     so).  The region callbacks (parallel_begin/end) of a later regions
 *     view go into ompt_initialize's list.
 *   - GCC's libgomp (no OMPT): interposers of its GOMP_* entry points
 *     keep a word per thread (struct thread_slot's omp_state, omp.h): the
 *     outlined function of a parallel region and of a task is wrapped
 *     (work while it runs; at the region's end the thread has arrived at
 *     the implicit barrier, idle once its whole team has), and barriers,
 *     critical sections, atomics, ordered sections, locks, taskwait and
 *     taskgroup set their wait around the real call.  The real functions
 *     are looked up lazily with dlsym(RTLD_NEXT), in normal context.
 *
 * A program that uses neither runtime calls none of this: no cost, no
 * thread, no state (the provider is registered at the runtime's first
 * call).  A GCC program run on libomp (its GOMP_ compatibility entry
 * points) gets OMPT's states: when OMPT is active, the interposers pass
 * the calls through.  SONDE_OMP=0 in the environment turns all of it off
 * (overhead measurements).
 *
 * Normal context (the target's threads, inside OpenMP calls): the words
 * are plain relaxed stores of the thread's own slot.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/hooks.h>
#include <sonde/settings.h>
#include <sonde/states.h>

#include "clock_internal.h"
#include "omp.h"
#include "real.h"

/* ---- on or off ---- */

/* -1: not decided; 0: off (no clock profile, SONDE_OMP=0, a tool of the
 * user's); 1: on. */
static _Atomic int g_on = -1;
static _Atomic int g_offcpu;	      /* off-CPU sampling runs: OMPT keeps the words */
static _Atomic int g_hook;	      /* the provider's handle, 0: not registered */
static _Atomic int g_runtime;	      /* 1: libgomp's entry points seen; 2: OMPT */
static _Atomic int g_user_tool;	      /* the user's OMPT tool won */
static _Atomic uint64_t g_region_seq; /* the last region's seq */
static _Atomic int g_reg_lock;

static bool omp_on(void)
{
	int on = atomic_load_explicit(&g_on, memory_order_relaxed);
	if (on >= 0)
		return on;
	/* Before the collector's module opened (OMPT's start may come
	 * first): what its settings will be. */
	const char *v = getenv(SONDE_ENV_OMP);
	const char *c = getenv(SONDE_ENV_CLOCK_NS);
	return !(v && (!strcmp(v, "0") || !strcmp(v, "off"))) && !(c && !strcmp(c, "0"));
}

/* Register the state provider, once, at the runtime's first call. */
static void omp_register(void)
{
	if (atomic_load_explicit(&g_hook, memory_order_acquire))
		return;
	while (atomic_exchange_explicit(&g_reg_lock, 1, memory_order_acquire))
		;
	if (!atomic_load(&g_hook)) {
		int h = __sonde_hook_state_add(omp_state_provider, NULL);
		atomic_store(&g_hook, h > 0 ? h : -1);
		if (h <= 0)
			log_event_text("warning", "OpenMP states: the sampling handler has no room for their "
						  "provider; samples carry no OpenMP state");
	}
	atomic_store_explicit(&g_reg_lock, 0, memory_order_release);
}

/* ---- the words ---- */

/* The calling thread's slot, found once (the clock registered the
 * thread); NULL when it has none (then its states are not kept). */
static __thread struct thread_slot *t_slot;
static __thread int t_looked;

static struct thread_slot *my_slot(void)
{
	if (__builtin_expect(t_looked, 1))
		return t_slot;
	t_looked = 1;
	t_slot = slot_by_tid(t_state.tid);
	return t_slot;
}

/* The word and the region: saved, set, restored around a call. */
struct omp_saved {
	uint32_t w;
	uint64_t region;
};

static inline struct omp_saved word_set(struct thread_slot *s, uint32_t w)
{
	struct omp_saved old = { 0, 0 };
	if (!s)
		return old;
	old.w = atomic_load_explicit(&s->omp_state, memory_order_relaxed);
	old.region = atomic_load_explicit(&s->omp_region, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, w, memory_order_relaxed);
	return old;
}

static inline void word_restore(struct thread_slot *s, struct omp_saved old)
{
	if (!s)
		return;
	atomic_store_explicit(&s->omp_region, old.region, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, old.w, memory_order_relaxed);
}

/* Whether libgomp's interposers keep the words: on, and no OMPT. */
static inline bool gomp_keeps(void)
{
	if (__builtin_expect(atomic_load_explicit(&g_runtime, memory_order_relaxed) == 1, 1) &&
	    atomic_load_explicit(&g_on, memory_order_relaxed) == 1)
		return !atomic_load_explicit(&g_omp_get_state, memory_order_relaxed);
	return false;
}

/* libgomp's first call: decide, register the provider.  The thread that
 * makes it was doing serial work. */
static bool gomp_first(void)
{
	if (__builtin_expect(atomic_load_explicit(&g_runtime, memory_order_relaxed) != 0, 1))
		return gomp_keeps();
	int expect = 0;
	if (!atomic_compare_exchange_strong(&g_runtime, &expect, 1))
		return gomp_keeps();
	if (atomic_load(&g_on) < 0)
		atomic_store(&g_on, omp_on());
	if (atomic_load(&g_on) != 1 || atomic_load(&g_omp_get_state))
		return false;
	atomic_store(&g_omp_words, 1);
	struct thread_slot *s = my_slot();
	if (s && !atomic_load_explicit(&s->omp_state, memory_order_relaxed))
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
	omp_register();
	return true;
}

/* A wait of `state` around the real call CALL (libgomp's entry points). */
#define GOMP_WAIT(state, CALL)                                             \
	do {                                                               \
		if (!gomp_first()) {                                       \
			CALL;                                              \
			break;                                             \
		}                                                          \
		struct thread_slot *s_ = my_slot();                        \
		struct omp_saved o_ = word_set(s_, (state));               \
		CALL;                                                      \
		word_restore(s_, o_);                                      \
	} while (0)

/* ---- libgomp: parallel regions ---- */

typedef void gomp_fn(void *);

/* What the wrapped outlined function gets: the master's, on its stack,
 * which outlives every thread's run of fn (the master leaves the region
 * after the team's last barrier). */
struct region_ctx {
	gomp_fn *fn;
	void *data;
	uint64_t seq;
};

int omp_get_num_threads(void);
int omp_get_thread_num(void);
REAL_DECL(omp_get_num_threads);
REAL_DECL(omp_get_thread_num);

static void region_body(void *arg)
{
	struct region_ctx *c = arg;
	struct omp_region *r = &g_omp_regions[c->seq % OMP_REGIONS];
	int (*nthreads)(void) = RESOLVE(omp_get_num_threads);
	int (*thread_num)(void) = RESOLVE(omp_get_thread_num);
	int n = nthreads ? nthreads() : 1, me = thread_num ? thread_num() : 0;
	/* before its own arrival: the count is whole when the last arrives */
	atomic_store_explicit(&r->nthreads, (uint32_t)(n > 0 ? n : 1), memory_order_relaxed);
	struct thread_slot *s = my_slot();
	struct omp_saved o = word_set(s, SONDE_STATE_OMP_WORK);
	c->fn(c->data);
	atomic_fetch_add_explicit(&r->arrived, 1, memory_order_relaxed);
	if (me == 0) {
		/* the master waits at the barrier; its caller's word comes back
		 * when the real call returns */
		word_set(s, SONDE_STATE_OMP_BARRIER);
		(void)o;
	} else if (s) {
		atomic_store_explicit(&s->omp_region, c->seq, memory_order_relaxed);
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_BARRIER | OMP_W_REGION_END,
				      memory_order_relaxed);
	}
}

/* A new region's record; its ctx. */
static void region_begin(struct region_ctx *c, gomp_fn *fn, void *data)
{
	c->fn = fn;
	c->data = data;
	c->seq = atomic_fetch_add(&g_region_seq, 1) + 1;
	struct omp_region *r = &g_omp_regions[c->seq % OMP_REGIONS];
	atomic_store_explicit(&r->nthreads, 1u << 30, memory_order_relaxed);
	atomic_store_explicit(&r->arrived, 0, memory_order_relaxed);
	atomic_store_explicit(&r->seq, c->seq, memory_order_release);
}

/* A parallel region's entry point: its fn wrapped, the master in
 * overhead until its own part starts, its word back after. */
#define GOMP_REGION(CALL_REAL, CALL_PLAIN)                                        \
	do {                                                                      \
		if (!gomp_first()) {                                              \
			CALL_PLAIN;                                               \
			break;                                                    \
		}                                                                 \
		struct region_ctx c_;                                             \
		region_begin(&c_, fn, data);                                      \
		struct thread_slot *s_ = my_slot();                               \
		struct omp_saved o_ = word_set(s_, SONDE_STATE_OMP_OVERHEAD);     \
		CALL_REAL;                                                        \
		word_restore(s_, o_);                                             \
	} while (0)

void GOMP_parallel(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags);
REAL_DECL(GOMP_parallel);
EXPORT void GOMP_parallel(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags)
{
	void (*real)(gomp_fn *, void *, unsigned, unsigned) = RESOLVE(GOMP_parallel);
	GOMP_REGION(real(region_body, &c_, num_threads, flags), real(fn, data, num_threads, flags));
}

unsigned GOMP_parallel_reductions(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags);
REAL_DECL(GOMP_parallel_reductions);
EXPORT unsigned GOMP_parallel_reductions(gomp_fn *fn, void *data, unsigned num_threads, unsigned flags)
{
	unsigned (*real)(gomp_fn *, void *, unsigned, unsigned) = RESOLVE(GOMP_parallel_reductions);
	unsigned r;
	GOMP_REGION(r = real(region_body, &c_, num_threads, flags), r = real(fn, data, num_threads, flags));
	return r;
}

void GOMP_parallel_sections(gomp_fn *fn, void *data, unsigned num_threads, unsigned count, unsigned flags);
REAL_DECL(GOMP_parallel_sections);
EXPORT void GOMP_parallel_sections(gomp_fn *fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
	void (*real)(gomp_fn *, void *, unsigned, unsigned, unsigned) = RESOLVE(GOMP_parallel_sections);
	GOMP_REGION(real(region_body, &c_, num_threads, count, flags), real(fn, data, num_threads, count, flags));
}

/* The combined parallel loops: with a chunk size, and the runtime
 * schedule's without. */
#define GOMP_PLOOP(NAME)                                                                                         \
	void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr, long chunk,    \
		  unsigned flags);                                                                               \
	REAL_DECL(NAME);                                                                                         \
	EXPORT void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr,         \
			 long chunk, unsigned flags)                                                             \
	{                                                                                                        \
		void (*real)(gomp_fn *, void *, unsigned, long, long, long, long, unsigned) = RESOLVE(NAME);     \
		GOMP_REGION(real(region_body, &c_, num_threads, start, end, incr, chunk, flags),                 \
			    real(fn, data, num_threads, start, end, incr, chunk, flags));                        \
	}
#define GOMP_PLOOP_RT(NAME)                                                                                      \
	void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr, unsigned flags); \
	REAL_DECL(NAME);                                                                                         \
	EXPORT void NAME(gomp_fn *fn, void *data, unsigned num_threads, long start, long end, long incr,         \
			 unsigned flags)                                                                         \
	{                                                                                                        \
		void (*real)(gomp_fn *, void *, unsigned, long, long, long, unsigned) = RESOLVE(NAME);           \
		GOMP_REGION(real(region_body, &c_, num_threads, start, end, incr, flags),                         \
			    real(fn, data, num_threads, start, end, incr, flags));                               \
	}
GOMP_PLOOP(GOMP_parallel_loop_static)
GOMP_PLOOP(GOMP_parallel_loop_dynamic)
GOMP_PLOOP(GOMP_parallel_loop_guided)
GOMP_PLOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
GOMP_PLOOP(GOMP_parallel_loop_nonmonotonic_guided)
GOMP_PLOOP_RT(GOMP_parallel_loop_runtime)
GOMP_PLOOP_RT(GOMP_parallel_loop_nonmonotonic_runtime)
GOMP_PLOOP_RT(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* The old ABI (GCC before 4.9): the master runs fn itself between start
 * and end; one region per thread at a time (nesting starts another on a
 * worker, whose own TLS holds it). */
static __thread struct region_ctx *t_old_region;
static __thread struct omp_saved t_old_saved;

void GOMP_parallel_start(gomp_fn *fn, void *data, unsigned num_threads);
REAL_DECL(GOMP_parallel_start);
EXPORT void GOMP_parallel_start(gomp_fn *fn, void *data, unsigned num_threads)
{
	void (*real)(gomp_fn *, void *, unsigned) = RESOLVE(GOMP_parallel_start);
	struct region_ctx *c = gomp_first() && !t_old_region ? malloc(sizeof *c) : NULL;
	if (!c) {
		real(fn, data, num_threads);
		return;
	}
	region_begin(c, fn, data);
	t_old_region = c;
	t_old_saved = word_set(my_slot(), SONDE_STATE_OMP_WORK);
	real(region_body, c, num_threads);
}

void GOMP_parallel_end(void);
REAL_DECL(GOMP_parallel_end);
EXPORT void GOMP_parallel_end(void)
{
	void (*real)(void) = RESOLVE(GOMP_parallel_end);
	struct region_ctx *c = t_old_region;
	if (!c) {
		real();
		return;
	}
	word_set(my_slot(), SONDE_STATE_OMP_BARRIER);
	real();
	t_old_region = NULL;
	word_restore(my_slot(), t_old_saved);
	free(c);
}

/* ---- libgomp: waits ---- */

#define GOMP_VOID_WAIT(NAME, state)                          \
	void NAME(void);                                     \
	REAL_DECL(NAME);                                     \
	EXPORT void NAME(void)                               \
	{                                                    \
		void (*real)(void) = RESOLVE(NAME);          \
		GOMP_WAIT(state, real());                    \
	}
#define GOMP_BOOL_WAIT(NAME, state)                          \
	bool NAME(void);                                     \
	REAL_DECL(NAME);                                     \
	EXPORT bool NAME(void)                               \
	{                                                    \
		bool (*real)(void) = RESOLVE(NAME);          \
		bool r;                                      \
		GOMP_WAIT(state, r = real());                \
		return r;                                    \
	}
#define GOMP_PTR_WAIT(NAME, state)                           \
	void NAME(void *p);                                  \
	REAL_DECL(NAME);                                     \
	EXPORT void NAME(void *p)                            \
	{                                                    \
		void (*real)(void *) = RESOLVE(NAME);        \
		GOMP_WAIT(state, real(p));                   \
	}

GOMP_VOID_WAIT(GOMP_barrier, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_barrier_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_loop_end, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_loop_end_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_sections_end, SONDE_STATE_OMP_BARRIER)
GOMP_BOOL_WAIT(GOMP_sections_end_cancel, SONDE_STATE_OMP_BARRIER)
GOMP_VOID_WAIT(GOMP_critical_start, SONDE_STATE_OMP_LOCK)
GOMP_PTR_WAIT(GOMP_critical_name_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_atomic_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_ordered_start, SONDE_STATE_OMP_LOCK)
GOMP_VOID_WAIT(GOMP_taskwait, SONDE_STATE_OMP_TASKWAIT)
GOMP_VOID_WAIT(GOMP_taskgroup_end, SONDE_STATE_OMP_TASKWAIT)
GOMP_PTR_WAIT(omp_set_lock, SONDE_STATE_OMP_LOCK)
GOMP_PTR_WAIT(omp_set_nest_lock, SONDE_STATE_OMP_LOCK)

/* ---- libgomp: tasks ---- */

/* A task's data, as libgomp copies it: this header, then the program's
 * data at `off` (aligned as the program asked).  The wrapper runs the
 * program's fn on it as work and puts the thread's word back after (the
 * task may run in a taskwait, a barrier, or where it was created). */
struct task_hdr {
	gomp_fn *fn;
	void (*cpyfn)(void *, void *);
	void *src; /* the program's data, while GOMP_task copies it */
	long off;
};

static void task_body(void *arg)
{
	struct task_hdr *h = arg;
	struct thread_slot *s = my_slot();
	struct omp_saved o = word_set(s, SONDE_STATE_OMP_WORK);
	h->fn((char *)arg + h->off);
	word_restore(s, o);
}

/* libgomp's copy of a task with a copy function (firstprivate objects):
 * the header, then the program's copy from the program's data. */
static void task_copy(void *dst, void *src)
{
	struct task_hdr *h = src;
	memcpy(dst, h, sizeof *h);
	h->cpyfn((char *)dst + h->off, h->src);
}

void GOMP_task(gomp_fn *fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
	       bool if_clause, unsigned flags, void **depend, int priority, void *detach);
REAL_DECL(GOMP_task);
EXPORT void GOMP_task(gomp_fn *fn, void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		      bool if_clause, unsigned flags, void **depend, int priority, void *detach)
{
	void (*real)(gomp_fn *, void *, void (*)(void *, void *), long, long, bool, unsigned, void **, int,
		     void *) = RESOLVE(GOMP_task);
	long align = arg_align > (long)_Alignof(struct task_hdr) ? arg_align : (long)_Alignof(struct task_hdr);
	long off = ((long)sizeof(struct task_hdr) + align - 1) / align * align;
	/* a task's data is small (its shared variables' addresses and
	 * firstprivate values); past 64 KiB it goes unwrapped rather than
	 * on the stack */
	if (!gomp_first() || arg_size < 0 || arg_size > 65536 || align > 4096) {
		real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	char buf[off + arg_size + align];
	char *p = (char *)(((uintptr_t)buf + (uintptr_t)align - 1) / (uintptr_t)align * (uintptr_t)align);
	struct task_hdr *h = (struct task_hdr *)p;
	h->fn = fn;
	h->cpyfn = cpyfn;
	h->src = data;
	h->off = off;
	if (!cpyfn && arg_size)
		memcpy(p + off, data, (size_t)arg_size);
	real(task_body, p, cpyfn ? task_copy : NULL, off + arg_size, align, if_clause, flags, depend, priority,
	     detach);
}

/* ---- libomp: the OMPT tool (OpenMP 5.0's interface, declared here: no
 * build needs omp-tools.h) ---- */

typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);
typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);
typedef struct {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;
typedef ompt_start_tool_result_t *ompt_start_tool_t(unsigned int omp_version, const char *runtime_version);
typedef int (*ompt_set_callback_t)(int event, void (*callback)(void));

enum {
	OMPT_CB_PARALLEL_BEGIN = 3,
	OMPT_CB_PARALLEL_END = 4,
	OMPT_CB_TASK_CREATE = 5,
	OMPT_CB_TASK_SCHEDULE = 6,
	OMPT_CB_IMPLICIT_TASK = 7,
	OMPT_TASK_EXPLICIT = 4,
	OMPT_CB_SYNC_REGION_WAIT = 16,
	OMPT_CB_MUTEX_ACQUIRE = 26,
	OMPT_CB_MUTEX_ACQUIRED = 27,
	OMPT_SCOPE_BEGIN = 1,
	OMPT_SCOPE_END = 2,
	OMPT_SYNC_TASKWAIT = 5,
	OMPT_SYNC_TASKGROUP = 6,
	OMPT_SYNC_REDUCTION = 7,
	OMPT_TASK_INITIAL = 1,
	OMPT_SET_SOMETIMES = 3,
};

/* The callbacks that keep the words (omp.h): each region gets a record
 * (parallel_begin and _end, on the thread that opens it: once per region)
 * and each thread the region it takes part in (implicit_task, once per
 * thread and region), which tells a worker idle from one in the region's
 * barrier; an explicit task's run (task_create, task_schedule: twice a
 * task); a wait's cause from its begin to its end (sync_region_wait:
 * libomp has no state of its own for a taskwait; and for the off-CPU
 * sampler, which cannot ask ompt_get_state about another thread, also the
 * barriers and, with -w, the mutexes). */
static void cb_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel, unsigned n, int flags,
			      const void *ra)
{
	(void)task, (void)frame, (void)n, (void)flags, (void)ra;
	struct region_ctx c;
	region_begin(&c, NULL, NULL);
	parallel->value = c.seq;
}

static void cb_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *ra)
{
	(void)task, (void)flags, (void)ra;
	uint64_t seq = parallel->value;
	struct omp_region *r = &g_omp_regions[seq % OMP_REGIONS];
	if (seq && atomic_load(&r->seq) == seq) {
		atomic_store_explicit(&r->nthreads, 1, memory_order_relaxed);
		atomic_store_explicit(&r->arrived, 1, memory_order_relaxed);
	}
}

/* Explicit tasks: work while one runs (in a taskwait or a barrier too),
 * the thread's word back when it switches back to a task that is not
 * one.  A task's tool data marks it explicit (task_create). */
#define TASK_MARK 0x5ead7a5cull
static __thread uint32_t t_task_saved;
static __thread int t_in_task;

static void cb_task_create(ompt_data_t *enc, const void *frame, ompt_data_t *task, int flags, int deps,
			   const void *ra)
{
	(void)enc, (void)frame, (void)deps, (void)ra;
	if (flags & OMPT_TASK_EXPLICIT)
		task->value = TASK_MARK;
}

static void cb_task_schedule(ompt_data_t *prior, int prior_status, ompt_data_t *next)
{
	(void)prior, (void)prior_status;
	struct thread_slot *s = my_slot();
	if (!s)
		return;
	if (next && next->value == TASK_MARK) {
		if (!t_in_task)
			t_task_saved = atomic_load_explicit(&s->omp_state, memory_order_relaxed);
		t_in_task = 1;
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
	} else if (t_in_task) {
		t_in_task = 0;
		atomic_store_explicit(&s->omp_state, t_task_saved, memory_order_relaxed);
	}
}

static void cb_sync_wait(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task, (void)ra;
	struct thread_slot *s = my_slot();
	if (!s)
		return;
	uint32_t st = kind == OMPT_SYNC_TASKWAIT || kind == OMPT_SYNC_TASKGROUP ? SONDE_STATE_OMP_TASKWAIT
		      : kind == OMPT_SYNC_REDUCTION				   ? SONDE_STATE_OMP_WORK
						     : SONDE_STATE_OMP_BARRIER | OMP_W_REGION_END;
	atomic_store_explicit(&s->omp_state, endpoint == OMPT_SCOPE_BEGIN ? st : SONDE_STATE_OMP_WORK,
			      memory_order_relaxed);
}

static void cb_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra)
{
	(void)kind, (void)hint, (void)impl, (void)wait_id, (void)ra;
	struct thread_slot *s = my_slot();
	if (s)
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_LOCK, memory_order_relaxed);
}

static void cb_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	(void)kind, (void)wait_id, (void)ra;
	struct thread_slot *s = my_slot();
	if (s)
		atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
}

static void cb_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned n, unsigned index,
			     int flags)
{
	(void)task, (void)n, (void)index;
	struct thread_slot *s = my_slot();
	/* its end: libomp may say it only at the next region's fork */
	if (!s || (flags & OMPT_TASK_INITIAL) || endpoint != OMPT_SCOPE_BEGIN)
		return;
	atomic_store_explicit(&s->omp_region, parallel ? parallel->value : 0, memory_order_relaxed);
	atomic_store_explicit(&s->omp_state, SONDE_STATE_OMP_WORK, memory_order_relaxed);
}

static int ompt_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
	(void)device, (void)data;
	omp_get_state_fn *get = (omp_get_state_fn *)lookup("ompt_get_state");
	if (!get) {
		log_event_text("warning", "OpenMP states: the runtime's OMPT interface has no ompt_get_state; "
					  "samples carry no OpenMP state");
		return 0;
	}
	atomic_store(&g_runtime, 2);
	atomic_store(&g_omp_get_state, get);
	/* The callbacks of regions and waits (above): a call per region and
	 * thread, and per barrier or taskwait.  The mutexes' (a call per lock
	 * taken) only for the off-CPU sampler, which cannot ask ompt_get_state
	 * about another thread.  Later views of regions add theirs here. */
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	int ok = set && set(OMPT_CB_PARALLEL_BEGIN, (void (*)(void))cb_parallel_begin) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_PARALLEL_END, (void (*)(void))cb_parallel_end) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_IMPLICIT_TASK, (void (*)(void))cb_implicit_task) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_SYNC_REGION_WAIT, (void (*)(void))cb_sync_wait) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_TASK_CREATE, (void (*)(void))cb_task_create) >= OMPT_SET_SOMETIMES &&
		 set(OMPT_CB_TASK_SCHEDULE, (void (*)(void))cb_task_schedule) >= OMPT_SET_SOMETIMES;
	if (ok && atomic_load(&g_offcpu))
		ok = set(OMPT_CB_MUTEX_ACQUIRE, (void (*)(void))cb_mutex_acquire) >= OMPT_SET_SOMETIMES &&
		     set(OMPT_CB_MUTEX_ACQUIRED, (void (*)(void))cb_mutex_acquired) >= OMPT_SET_SOMETIMES;
	if (ok)
		atomic_store(&g_omp_words, 1);
	else
		log_event_text("warning", "OpenMP states: the runtime refused OMPT's region and wait callbacks; "
					  "idle workers count as barrier waits, taskwaits as work, and off-CPU "
					  "samples carry no OpenMP wait");
	omp_register();
	return 1;
}

static void ompt_fini(ompt_data_t *data)
{
	(void)data;
	atomic_store(&g_omp_get_state, NULL);
}

static ompt_start_tool_result_t g_tool = { ompt_init, ompt_fini, { 0 } };

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	/* A tool of the user's further down the lookup order (a library the
	 * program links; the runtime's own fallback answers NULL): it wins
	 * when it accepts. */
	ompt_start_tool_t *next = (ompt_start_tool_t *)dlsym(RTLD_NEXT, "ompt_start_tool");
	if (next && next != ompt_start_tool) {
		ompt_start_tool_result_t *r = next(omp_version, runtime_version);
		if (r) {
			atomic_store(&g_user_tool, 1);
			atomic_store(&g_on, 0);
			return r;
		}
	}
	/* OMP_TOOL_LIBRARIES: the runtime loads the user's tools when no
	 * tool in the process accepted. */
	const char *libs = getenv("OMP_TOOL_LIBRARIES");
	if (libs && *libs) {
		atomic_store(&g_user_tool, 2);
		atomic_store(&g_on, 0);
		return NULL;
	}
	if (atomic_load(&g_on) < 0)
		atomic_store(&g_on, omp_on());
	return atomic_load(&g_on) == 1 ? &g_tool : NULL;
}

/* ---- the module (collector.h) ---- */

static void omp_open(struct clock_settings *cs)
{
	const char *v = getenv(SONDE_ENV_OMP);
	bool off = v && (!strcmp(v, "0") || !strcmp(v, "off"));
	/* a tool of the user's decided before the collector opened */
	if (atomic_load(&g_user_tool))
		off = true;
	atomic_store(&g_on, cs->interval_ns && !off ? 1 : 0);
	atomic_store(&g_offcpu, offcpu_interval_ns() != 0);
}

static void omp_end(struct xbuf *b)
{
	(void)b;
	int rt = atomic_load(&g_runtime), user = atomic_load(&g_user_tool);
	if (user)
		log_event_text("info", user == 1 ? "OpenMP states: off, the program's own OMPT tool (ompt_start_tool) "
						   "is active"
						 : "OpenMP states: off, OMP_TOOL_LIBRARIES names the program's OMPT tools");
	else if (rt == 2)
		log_event_text("info", "OpenMP states: from OMPT (ompt_get_state)");
	else if (rt == 1 && atomic_load(&g_on) == 1)
		log_event_text("info", "OpenMP states: from libgomp's entry points (GOMP_*)");
}

static void omp_fork_child(void)
{
	/* the child's one thread has another tid: find its slot again */
	t_looked = 0;
	t_slot = NULL;
}

const struct collector_module omp_module = {
	.name = "omp",
	.open = omp_open,
	.end = omp_end,
	.fork_child = omp_fork_child,
};
