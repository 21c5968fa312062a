/*
 * The Java agent's stack source (java.h, agent.c): at each clock and
 * counter sample of a Java thread, its Java frames from
 * AsyncGetCallTrace, which replace the native frames from the first one
 * in the JVM's code cache to the root (the native unwinder cannot walk
 * compiled Java code; the frames above it, a JNI method's C code or the
 * JVM's runtime, stay).  Async-signal-safe, on tests/t00-asyncsafe.sh's
 * list: loads of the tables agent.c fills, AsyncGetCallTrace (made for a
 * signal handler), stores into the handler's arrays.  The Java threads
 * by tid live here too: the handler reads them, agent.c writes them.
 */
#define _GNU_SOURCE
#include "java.h"

const char *const java_reasons[JAVA_NREASONS] = {
	"no Java frame",	 "no class loaded",	"GC active",	"in unknown native code",
	"not walkable (native)", "in unknown Java code", "not walkable (Java)", "unknown thread state",
	"thread exiting",	 "deoptimising",	"at a safepoint",	"other",
};

asgct_fn *java_asgct;
_Atomic uint64_t java_walks, java_walked, java_failed[JAVA_NREASONS];
_Atomic uint64_t java_code_lo = UINT64_MAX, java_code_hi;

/* Open addressing by tid; a slot's tid, once set, stays (a thread that
 * ends clears its env; a later thread with its tid takes the slot
 * back). */
#define NTHREADS 8192
static struct jthread {
	_Atomic int32_t tid;
	_Atomic(JNIEnv *) env;
} g_threads[NTHREADS];

void java_thread_set(pid_t tid, JNIEnv *env)
{
	uint32_t h = (uint32_t)tid * 2654435761u;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		struct jthread *t = &g_threads[(h + i) & (NTHREADS - 1)];
		int32_t cur = atomic_load_explicit(&t->tid, memory_order_acquire);
		if (cur == 0) {
			if (!env)
				return; /* clearing a thread never set */
			int32_t zero = 0;
			if (!atomic_compare_exchange_strong(&t->tid, &zero, tid) && zero != tid)
				continue;
			cur = tid;
		}
		if (cur == tid) {
			atomic_store_explicit(&t->env, env, memory_order_release);
			return;
		}
	}
}

static JNIEnv *thread_env(pid_t tid)
{
	uint32_t h = (uint32_t)tid * 2654435761u;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		const struct jthread *t = &g_threads[(h + i) & (NTHREADS - 1)];
		int32_t cur = atomic_load_explicit(&t->tid, memory_order_acquire);
		if (cur == tid)
			return atomic_load_explicit(&t->env, memory_order_acquire);
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

static inline int in_code_cache(uint64_t pc)
{
	pc &= ~SONDE_PC_EXACT;
	return pc >= atomic_load_explicit(&java_code_lo, memory_order_relaxed) &&
	       pc < atomic_load_explicit(&java_code_hi, memory_order_relaxed);
}

int java_frames(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		struct sonde_hook_splice *where, void *arg)
{
	(void)arg;
	JNIEnv *env = thread_env(s->tid);
	if (!env)
		return 0; /* not a Java thread: its native frames are all */
	asgct_frame fr[SONDE_HOOK_MAX_FRAMES];
	asgct_trace t = { env, 0, fr };
	if (max > SONDE_HOOK_MAX_FRAMES)
		max = SONDE_HOOK_MAX_FRAMES;
	atomic_fetch_add_explicit(&java_walks, 1, memory_order_relaxed);
	java_asgct(&t, max, (void *)s->ucontext);
	if (t.num_frames <= 0) {
		int r = -t.num_frames;
		atomic_fetch_add_explicit(&java_failed[r >= 0 && r < JAVA_NREASONS - 1 ? r : JAVA_NREASONS - 1], 1,
					  memory_order_relaxed);
		return 0;
	}
	int n = t.num_frames < max ? t.num_frames : max;
	for (int i = 0; i < n; i++) {
		/* AsyncGetCallTrace does not say whether a frame is
		 * interpreted or compiled: one kind for both (format.h) */
		out[i].pc = (uint64_t)(uintptr_t)fr[i].method_id;
		out[i].kind = SONDE_FRAME_JAVA_INTERP;
		out[i].fflags = 0;
		out[i].aux = fr[i].lineno >= 0 && fr[i].lineno < (jint)SONDE_FRAME_NO_BCI ? (uint16_t)fr[i].lineno
											: SONDE_FRAME_NO_BCI;
		out[i].reserved = 0;
	}
	/* from the first native frame in the code cache to the root: the
	 * Java frames (none there: below the native frames) */
	int at = 0;
	while (at < s->npcs && !in_code_cache(s->pcs[at]))
		at++;
	where->at = at;
	where->drop = s->npcs - at;
	if (t.num_frames < max) /* the walk reached the thread's first Java frame */
		where->flags = SONDE_SPLICE_ROOT;
	atomic_fetch_add_explicit(&java_walked, 1, memory_order_relaxed);
	return n;
}
