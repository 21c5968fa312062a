/*
 * The sampling signal handler and everything it calls in this file.  Every
 * function here is async-signal-safe: the whole path (unwind, intern,
 * write) uses only stack memory, initial-exec TLS, atomics and system
 * calls; tests/t00-asyncsafe.sh checks this object's undefined symbols.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "clock_internal.h"
#include "unwind.h"

TLS struct tstate t_state;

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

/* Hooks are slow when they took at least half of the clock profile's
 * interval, or this without one (counters alone): see hooks_run. */
#define HOOK_SLOW_NS 100000

/* The kernel's si_perf_data (glibc's siginfo_t does not name it): the
 * word after si_addr in the fault layout. */
static uint64_t perf_data(const siginfo_t *si)
{
	const char *p = (const char *)&si->si_addr + sizeof(void *);
	uint64_t v;
	__builtin_memcpy(&v, p, sizeof v);
	return v;
}

/* What a signal is: SIG_CLOCK (a clock sample), SIG_COUNTER + i (an
 * overflow of counter i, -h), 0 not ours.  Async-signal-safe. */
int is_ours(const siginfo_t *si)
{
	if (g_ncounters && si->si_signo == SIGTRAP && si->si_code == TRAP_PERF) {
		uint64_t d = perf_data(si);
		if (d >= SONDE_COUNTER_MAGIC && d < SONDE_COUNTER_MAGIC + (uint64_t)g_ncounters)
			return SIG_COUNTER + (int)(d - SONDE_COUNTER_MAGIC);
	}
	if (g_sigtrap_source_active)
		return si->si_signo == SIGTRAP && si->si_code == TRAP_PERF &&
		       perf_data(si) == SONDE_SIGTRAP_MAGIC;
	if (g_timer_source_active)
		return si->si_code == SI_TIMER && si->si_value.sival_ptr == &g_timer_magic;
	if (!g_profile)
		return 0; /* no clock source of its own (-p off -h ...) */
	int fd = si->si_fd;
	return si->si_code > 0 && si->si_code <= POLL_HUP && fd >= 0 && fd < FD_BITS &&
	       (atomic_load_explicit(&g_our_fds[fd / 8], memory_order_relaxed) & (1u << (fd % 8)));
}

/* Hand a signal that is not ours to the target's own disposition.
 * Async-signal-safe. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *a = &g_chained_action;
	int set = atomic_load(&g_chained_set);
	if (sig == SIGTRAP && si->si_code == TRAP_PERF &&
	    (perf_data(si) == SONDE_SIGTRAP_MAGIC ||
	     (perf_data(si) >= SONDE_COUNTER_MAGIC && perf_data(si) < SONDE_COUNTER_MAGIC + SONDE_MAX_COUNTERS)))
		return; /* a sample of sonde's that outlived its counter: one
			   a thread held blocked across an exec, say */
	if (sig == SIGTRAP && (!set || (!(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL))) {
		/* A breakpoint or trace trap the target did not handle: its
		 * default action (core dump) happens as without sonde, once
		 * this handler returns and unblocks it. */
		struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { 0 };
		/* SIG_DFL, by the instruction: sonde's syscall(3)
		 * would keep its own handler.  Raw, past the seccomp gate:
		 * the target's own trap ends it, as it would without sonde. */
		sonde_raw_syscall6(SYS_rt_sigaction, SIGTRAP, (long)&dfl, 0, sizeof dfl.mask, 0, 0);
		sonde_raw_syscall6(SYS_tgkill, sonde_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0),
				   sonde_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0), SIGTRAP, 0, 0, 0);
		return;
	}
	if (!set)
		return; /* default action of a real-time signal is to terminate;
			   the target never asked for it, so ignoring it is the
			   least surprising choice */
	int flags = a->sa_flags;
	void (*action)(int, siginfo_t *, void *) = a->sa_sigaction;
	void (*handler)(int) = a->sa_handler;
	if ((flags & SA_RESETHAND) && ((flags & SA_SIGINFO) || (handler != SIG_IGN && handler != SIG_DFL))) {
		/* sysv_signal's one-shot handler: the action is SIG_DFL
		 * from now on, as the kernel would have made it */
		atomic_store(&g_chained_set, 0);
		a->sa_flags = 0;
		a->sa_handler = SIG_DFL;
	}
	if (flags & SA_SIGINFO) {
		if (action)
			action(sig, si, uc);
	} else if (handler != SIG_IGN && handler != SIG_DFL) {
		handler(sig);
	}
}

/* The CPU the caller runs on, as a packet holds it (0xffff unknown).
 * Async-signal-safe. */
static uint16_t this_cpu(void)
{
	unsigned cpuid = 0xffff;
	(void)getcpu(&cpuid, NULL);
	return (uint16_t)(cpuid > 0xffff ? 0xffff : cpuid);
}

/* Write one profile packet of stack id in thread state `state`.  Returns
 * 0, or -1 when the packet could not be written.  Must not be interrupted
 * by the sampling handler on the same thread (the handler runs with all
 * signals blocked; other callers block the profiling signal).
 * Async-signal-safe. */
static int write_profile(uint64_t id, uint16_t state, uint64_t now, uint64_t weight, uint64_t system_ns,
			 uint64_t wait_cpu_ns)
{
	struct sonde_profile_packet *p = dfile_reserve(g_profile, sizeof *p);
	if (!p)
		return -1; /* counted by the dfile */
	p->type = SONDE_PKT_PROFILE;
	p->size = sizeof *p;
	p->cpu = this_cpu();
	p->state = state;
	p->time_ns = now;
	p->weight_ns = weight;
	p->stack_id = id;
	p->system_ns = system_ns;
	p->wait_cpu_ns = wait_cpu_ns;
	dfile_commit(g_profile, sizeof *p);
	atomic_fetch_add_explicit(&g_samples, 1, memory_order_relaxed);
	return 0;
}

/* Intern a stack of native frames and write one profile packet (plain
 * CPU).  As write_profile.  Async-signal-safe. */
int clock_write_sample(const uint64_t *pcs, int n, unsigned flags, uint16_t state, uint64_t now,
		       uint64_t weight, uint64_t system_ns, uint64_t wait_cpu_ns)
{
	uint64_t id = stacks_intern(pcs, n, flags);
	if (write_profile(id, state, now, weight, system_ns, wait_cpu_ns) < 0)
		return -1;
	t_state.last_stack_id = n < g_cs.depth ? id : 0;
	return 0;
}

/* One sample of weight ns, sys of it System CPU and wcpu its run-queue
 * delay, at pcs[0 .. n) (native frames, leaf first) below the pseudo
 * frame `pseudo` (enum sonde_pseudo; 0 none): with n 0 the pseudo frame
 * is the whole stack.  As write_profile.  Async-signal-safe. */
/* pseudo above pcs (either may be absent), in thread state `state`. */
static int write_pseudo(uint16_t state, uint32_t pseudo, const uint64_t *pcs, int n, uint64_t now, uint64_t weight,
			uint64_t sys, uint64_t wcpu)
{
	uint64_t p[72];
	uint32_t tags[72];
	int k = 0;
	if (pseudo) {
		p[k] = pseudo;
		tags[k++] = SONDE_FRAME_TAG(SONDE_FRAME_PSEUDO, 0, 0);
	}
	for (int i = 0; i < n && k < 72; i++) {
		p[k] = pcs[i];
		tags[k++] = 0;
	}
	if (!k || !weight)
		return -1;
	if (write_profile(stacks_intern_tagged(p, tags, k, 0), state, now, weight, sys < weight ? sys : weight, wcpu) <
	    0)
		return -1;
	atomic_fetch_add_explicit(&g_pseudo_samples, 1, memory_order_relaxed);
	return 0;
}

int clock_write_pseudo(uint32_t pseudo, const uint64_t *pcs, int n, uint64_t now, uint64_t weight, uint64_t sys,
		       uint64_t wcpu)
{
	return write_pseudo(SONDE_STATE_CPU, pseudo, pcs, n, now, weight, sys, wcpu);
}

int clock_write_below(uint64_t parent, uint32_t pseudo, uint64_t now, uint64_t weight, uint64_t sys, uint64_t wcpu)
{
	uint64_t id = stacks_intern_below(parent, pseudo, SONDE_FRAME_TAG(SONDE_FRAME_PSEUDO, 0, 0));
	if (!id || !weight || write_profile(id, SONDE_STATE_CPU, now, weight, sys < weight ? sys : weight, wcpu) < 0)
		return -1;
	atomic_fetch_add_explicit(&g_pseudo_samples, 1, memory_order_relaxed);
	return 0;
}

void clock_own_write(struct tstate *ts, uint64_t now)
{
	/* at the time of its last part: a pause or the end of -t's window
	 * since then leaves it in the window it was spent in */
	if (ts->own_at && ts->own_at < now)
		now = ts->own_at;
	if (ts->own_ns && write_pseudo(ts->own_state, SONDE_PSEUDO_COLLECTOR, NULL, 0, now, ts->own_ns, 0, 0) == 0)
		ts->own_ns = 0;
}

/* ---- microstates ---------------------------------------------------------
 *
 * Linux keeps per thread what table 6-1 of the reference needs, where a
 * thread can read it about itself without a signal or a lock: its run-
 * queue delay, exactly, in /proc/thread-self/schedstat, and its system
 * time in getrusage(RUSAGE_THREAD).  A sample's weight is the thread's CPU
 * time since its previous sample; its Wait CPU is the run-queue delay
 * since then.  The delay only grows when the thread is switched in, so
 * schedstat (a /proc file: three system calls) is read only when
 * rusage's context-switch counts moved.
 *
 * Its system part is decided by where the sample was taken.  A sample
 * whose pc stands at a system call (the clock fired while the thread was
 * in the kernel, and the signal came at the call's return) is System
 * CPU, all of it; any other is User CPU, unless the thread took page
 * faults since its previous sample: then the system time rusage gained
 * since then goes to System CPU (at most the weight).  rusage alone does
 * not do: its split is the scheduler tick's view of the thread's mode,
 * and with more runnable threads than CPUs the ticks line up with the
 * ends of slices (a slice ends at a clock read, a system call): a pure
 * user-mode loop was given 13-16% system time, a loop of reads of
 * /dev/zero 10% user time even on an idle machine. */

int ms_parse_schedstat(const char *buf, long len, uint64_t v[3])
{
	int k = 0;
	long i = 0;
	while (k < 3) {
		while (i < len && buf[i] == ' ')
			i++;
		if (i >= len || buf[i] < '0' || buf[i] > '9')
			return -1;
		uint64_t x = 0;
		while (i < len && buf[i] >= '0' && buf[i] <= '9')
			x = x * 10 + (uint64_t)(buf[i++] - '0');
		v[k++] = x;
	}
	return 0;
}

/* The calling thread's schedstat: 0, or -1 (no such file, no descriptor
 * left: the caller goes without).  The descriptor lives for three system
 * calls, with every signal blocked. */
static int schedstat_self(uint64_t v[3])
{
	long fd = sonde_sys6(SYS_openat, AT_FDCWD, (long)"/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC,
				     0, 0, 0);
	if (fd < 0)
		return -1;
	char buf[96];
	long n = sonde_sys6(SYS_read, fd, (long)buf, sizeof buf, 0, 0, 0);
	sonde_sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	return n > 0 ? ms_parse_schedstat(buf, n, v) : -1;
}

int ms_read(const struct tstate *ts, struct ms_now *m)
{
	struct rusage ru;
	if (sonde_sys6(SYS_getrusage, RUSAGE_THREAD, (long)&ru, 0, 0, 0, 0) < 0)
		return -1;
	m->stime_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
	m->csw = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	m->flt = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	m->have_rd = 0;
	m->rdelay_ns = ts->ms_rdelay_ns;
	uint64_t v[3];
	if ((m->csw != ts->ms_csw || !ts->nrecorded) && schedstat_self(v) == 0) {
		m->rdelay_ns = v[1];
		m->have_rd = 1;
	}
	return 0;
}

static uint64_t ms_avail(const struct tstate *ts, const struct ms_now *m)
{
	return ts->ms_sys_carry + (m->stime_ns > ts->ms_stime_ns ? m->stime_ns - ts->ms_stime_ns : 0);
}

void ms_split(const struct tstate *ts, const struct ms_now *m, uint64_t weight, bool in_syscall, uint64_t *sys,
	      uint64_t *wcpu)
{
	uint64_t avail = ms_avail(ts, m);
	if (in_syscall)
		*sys = weight;
	else if (m->flt != ts->ms_flt)
		*sys = avail < weight ? avail : weight;
	else
		*sys = 0;
	*wcpu = m->have_rd && m->rdelay_ns > ts->ms_rdelay_ns ? m->rdelay_ns - ts->ms_rdelay_ns : 0;
}

void ms_commit(struct tstate *ts, const struct ms_now *m, uint64_t weight, uint64_t sys)
{
	/* What rusage gained and no sample took waits for the next page
	 * faults, but no more than a sample's worth: the tick's errors must
	 * not pile up into one sample. */
	uint64_t avail = ms_avail(ts, m);
	uint64_t carry = avail > sys ? avail - sys : 0;
	ts->ms_sys_carry = carry < weight ? carry : weight;
	if (m->stime_ns > ts->ms_stime_ns)
		ts->ms_stime_ns = m->stime_ns;
	ts->ms_csw = m->csw;
	ts->ms_flt = m->flt;
	if (m->have_rd)
		ts->ms_rdelay_ns = m->rdelay_ns;
}

void ms_rebase(struct tstate *ts, const struct ms_now *m)
{
	ts->ms_sys_carry = 0;
	ts->ms_stime_ns = m->stime_ns;
	ts->ms_csw = m->csw;
	ts->ms_flt = m->flt;
	if (m->have_rd)
		ts->ms_rdelay_ns = m->rdelay_ns;
}

/* Async-signal-safe. */
int clock_paused_skip(struct tstate *ts, uint64_t cpu_now)
{
	/* paused first: a resume stores the generation before clearing it */
	if (atomic_load_explicit(&__sonde_paused, memory_order_acquire)) {
		ts->last_cpu_ns = cpu_now;
		ts->last_wall_ns = 0;
		ts->pause_gen = atomic_load_explicit(&g_pause_gen, memory_order_acquire);
		return 1;
	}
	uint32_t gen = atomic_load_explicit(&g_pause_gen, memory_order_acquire);
	if (__builtin_expect(ts->pause_gen == gen, 1))
		return 0;
	ts->pause_gen = gen;
	/* Once per thread and resume: find the CPU clock the resumer read
	 * for this thread.  A thread that was not registered then (adopted
	 * late, or started after the resume) has none, and its time since
	 * its last sample is all recorded time. */
	struct thread_slot *s = slot_by_tid(ts->tid ? ts->tid : sys_gettid());
	if (s && atomic_load_explicit(&s->resume_gen, memory_order_acquire) == gen) {
		uint64_t at = atomic_load_explicit(&s->resume_cpu_ns, memory_order_relaxed);
		if (at > ts->last_cpu_ns) {
			ts->last_cpu_ns = at < cpu_now ? at : cpu_now;
			ts->last_wall_ns = 0;
		}
	}
	return 0;
}

/* Async-signal-safe: plain loads and stores, and clock_gettime. */
void clock_mark_resume(uint32_t gen)
{
	for (int i = 0, n = atomic_load_explicit(&g_slots_used, memory_order_acquire); i < n; i++) {
		struct thread_slot *s = &g_slots[i];
		pid_t tid = atomic_load_explicit(&s->tid, memory_order_relaxed);
		if (!tid)
			continue;
		struct timespec t;
		if (clock_gettime(s->own_process ? process_cpu_clock(tid) : thread_cpu_clock(tid), &t) < 0)
			continue; /* gone */
		atomic_store_explicit(&s->resume_cpu_ns, (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec,
				      memory_order_relaxed);
		atomic_store_explicit(&s->resume_gen, gen, memory_order_release);
	}
}

struct stray g_strays[MAX_STRAYS];

/* Async-signal-safe: atomics only, no TLS. */
void clock_note_stray(pid_t tid)
{
	for (int i = 0; i < MAX_STRAYS; i++) {
		pid_t cur = atomic_load_explicit(&g_strays[i].tid, memory_order_relaxed);
		if (cur == 0 && atomic_compare_exchange_strong(&g_strays[i].tid, &cur, tid))
			cur = tid;
		if (cur == tid) {
			atomic_fetch_add_explicit(&g_strays[i].n, 1, memory_order_relaxed);
			return;
		}
	}
}

/* Write one counter packet of counter idx, with stack id.
 * Async-signal-safe. */
static int counter_write(uint64_t id, uint64_t now, int idx, uint64_t weight)
{
	struct sonde_counter_packet *p = dfile_reserve(g_counters, sizeof *p);
	if (!p)
		return -1; /* counted by the dfile */
	p->type = SONDE_PKT_COUNTER;
	p->size = sizeof *p;
	p->counter = (uint16_t)idx;
	p->cpu = this_cpu();
	p->time_ns = now;
	p->weight = weight;
	p->stack_id = id;
	dfile_commit(g_counters, sizeof *p);
	atomic_fetch_add_explicit(&g_counter_samples, 1, memory_order_relaxed);
	return 0;
}

/* A thread's stack at a signal, unwound once for every packet it goes in:
 * its frames (pcs, with tags when a stack source added frames of other
 * kinds; NULL: all native) and their id once interned. */
struct at {
	uint64_t *pcs;
	uint32_t *tags;
	int n;
	unsigned flags;
	uint64_t id;
	struct uw_jitframe jf; /* the first JIT frame's registers */
};

static void unwind_at(void *uc, const struct tstate *ts, struct at *a)
{
	a->flags = 0;
	a->tags = NULL;
	a->n = uw_backtrace_jit(uc, ts->stack_lo, ts->stack_hi, a->pcs, g_cs.depth, &a->flags, &a->jf);
	if (a->n <= 0) {
		a->pcs[0] = (uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] | SONDE_PC_EXACT;
		a->n = 1;
		a->flags |= SONDE_STACK_INCOMPLETE;
	}
}

/* ---- hooks (sonde/hooks.h; hooks.c registers them) ----------------------- */

/* Call a slot's hook if it holds one of `type`: the caller counts itself
 * among the slot's users before it loads fn (hooks.c's remove then waits
 * for it), and the thread's in_hook is set meanwhile.  The call is
 * CALL, with f the hook.  Async-signal-safe. */
#define WITH_HOOK(h, type_, ts, f, CALL)                                                     \
	do {                                                                                 \
		atomic_fetch_add(&(h)->users, 1);                                            \
		uintptr_t f = atomic_load(&(h)->fn);                                         \
		if (f && (h)->type == (type_)) {                                             \
			(ts)->in_hook = 1;                                                   \
			atomic_signal_fence(memory_order_seq_cst);                           \
			CALL;                                                                \
			atomic_signal_fence(memory_order_seq_cst);                           \
			(ts)->in_hook = 0;                                                   \
		}                                                                            \
		atomic_fetch_sub(&(h)->users, 1);                                            \
	} while (0)

/* The thread's state by the state providers: the first answer that is a
 * state of CPU samples (sonde/states.h), else SONDE_STATE_CPU; another
 * answer is counted and passed over.  Async-signal-safe. */
static uint16_t hooks_state(struct tstate *ts, const struct sonde_hook_sample *hs)
{
	for (int i = 0; i < SONDE_HOOK_MAX; i++) {
		struct hook_slot *h = &g_hooks[i];
		int r = SONDE_HOOK_NO_STATE;
		if (h->type != HOOK_STATE || !atomic_load_explicit(&h->fn, memory_order_relaxed))
			continue;
		WITH_HOOK(h, HOOK_STATE, ts, f, r = ((sonde_state_provider *)f)(hs, h->arg));
		if (r == SONDE_HOOK_NO_STATE)
			continue;
		if (r >= 0 && sonde_state_cpu((unsigned)r))
			return (uint16_t)r;
		atomic_fetch_add_explicit(&g_hook_bad_states, 1, memory_order_relaxed);
	}
	return SONDE_STATE_CPU;
}

/* The stack sources' frames added to a (whose pcs and tags have room for
 * cap frames): each source writes its own into one buffer and says where
 * they go in the native stack; then the splices are made, the one
 * furthest from the leaf first so that the native indices of the others
 * hold, and the stack is cut at the depth limit.  A result that cannot be
 * taken is counted and left out.  Async-signal-safe. */
static void hooks_frames(struct tstate *ts, const struct sonde_hook_sample *hs, struct at *a, uint32_t *tags,
			 int cap)
{
	struct sonde_hook_frame out[SONDE_HOOK_MAX_FRAMES];
	struct {
		int at, drop, off, m;
	} sp[SONDE_HOOK_MAX];
	int nsp = 0, used = 0, native = a->n, whole = 0;
	for (int i = 0; i < SONDE_HOOK_MAX && used < SONDE_HOOK_MAX_FRAMES; i++) {
		struct hook_slot *h = &g_hooks[i];
		if (h->type != HOOK_STACK || !atomic_load_explicit(&h->fn, memory_order_relaxed))
			continue;
		int max = SONDE_HOOK_MAX_FRAMES - used, m = 0;
		struct sonde_hook_splice where = { 0, 0, 0, 0 };
		WITH_HOOK(h, HOOK_STACK, ts, f, m = ((sonde_stack_source *)f)(hs, out + used, max, &where, h->arg));
		if (m == 0)
			continue;
		int ok = m > 0 && m <= max && where.at >= 0 && where.at <= native && where.drop >= 0 &&
			 where.drop <= native - where.at;
		/* over a splice taken before: their native ranges overlap, or
		 * one's insertion point is inside the other's range */
		for (int k = 0; ok && k < nsp; k++) {
			int lo = where.at > sp[k].at ? where.at : sp[k].at;
			int hi = where.at + where.drop < sp[k].at + sp[k].drop ? where.at + where.drop
										 : sp[k].at + sp[k].drop;
			if (lo < hi || (!where.drop && sp[k].at < where.at && where.at < sp[k].at + sp[k].drop) ||
			    (!sp[k].drop && where.at < sp[k].at && sp[k].at < where.at + where.drop))
				ok = 0;
		}
		if (!ok) {
			atomic_fetch_add_explicit(&g_hook_bad_frames, 1, memory_order_relaxed);
			continue;
		}
		/* in order of at, the later-added after the earlier at one place */
		int k = nsp++;
		for (; k > 0 && sp[k - 1].at > where.at; k--)
			sp[k] = sp[k - 1];
		sp[k].at = where.at;
		sp[k].drop = where.drop;
		sp[k].off = used;
		sp[k].m = m;
		used += m;
		if ((where.flags & SONDE_SPLICE_ROOT) && where.at + where.drop == native)
			whole = 1;
	}
	if (!nsp)
		return;
	if (whole)
		a->flags &= ~(uint32_t)SONDE_STACK_INCOMPLETE;
	for (int i = 0; i < a->n; i++)
		tags[i] = 0;
	/* From the root end: a splice never moves the native frames before
	 * its place, where the ones still to make are (at one place, the
	 * later-added first, so that the earlier-added ends up leaf side). */
	for (int k = nsp - 1; k >= 0; k--) {
		int at = sp[k].at, drop = sp[k].drop, m = sp[k].m, rest = a->n - at - drop;
		if (a->n - drop + m > cap)
			break; /* cannot happen: cap has room for every frame added */
		__builtin_memmove(a->pcs + at + m, a->pcs + at + drop, (size_t)rest * sizeof *a->pcs);
		__builtin_memmove(tags + at + m, tags + at + drop, (size_t)rest * sizeof *tags);
		for (int j = 0; j < m; j++) {
			const struct sonde_hook_frame *fr = &out[sp[k].off + j];
			a->pcs[at + j] = fr->pc;
			/* a native frame's flags and aux are 0 (format.h); a
			 * kind readers do not know is written as given */
			tags[at + j] = fr->kind == SONDE_FRAME_NATIVE ? 0 : SONDE_FRAME_TAG(fr->kind, fr->fflags, fr->aux);
		}
		a->n += m - drop;
	}
	if (a->n > g_cs.depth) {
		a->n = g_cs.depth;
		a->flags |= SONDE_STACK_TRUNCATED;
	}
	if (a->n <= 0) { /* every frame dropped for none */
		a->n = 1;
		a->pcs[0] = hs->pcs[0];
		tags[0] = 0;
		a->flags |= SONDE_STACK_INCOMPLETE;
	}
	a->tags = tags;
}

/* Run the hooks for a sample of kind `what` (SONDE_HOOK_*) at uc whose
 * native stack is a: the stack sources may add frames to a (room for cap
 * frames, tags as many), and for a clock sample the state providers give
 * the state, which it returns.  cpu_at: the thread's CPU clock when the
 * handler began, 0 when not read.  Async-signal-safe. */
static uint16_t hooks_run(void *uc, const struct thread_slot *s, struct tstate *ts, struct at *a, uint32_t *tags,
			  int cap, uint32_t what, uint64_t now, uint64_t cpu_at)
{
	struct sonde_hook_sample hs = { uc, a->pcs, a->n, atomic_load_explicit(&s->tid, memory_order_relaxed), now,
					what, 0, a->jf.sp, a->jf.fp };
	uint16_t state = SONDE_STATE_CPU;
	int ns = (what == SONDE_HOOK_CLOCK && atomic_load_explicit(&g_hook_n[HOOK_STATE], memory_order_relaxed));
	int nf = atomic_load_explicit(&g_hook_n[HOOK_STACK], memory_order_relaxed) != 0;
	if (!ns && !nf)
		return state;
	/* A hook slower than the interval would run again as soon as it
	 * returned, and the thread would do nothing else: after two samples
	 * whose hooks took at least d, d at least half the interval, the
	 * samples of the next d skip them (the hooks take at most about half
	 * of the thread's time).  Not after one:
	 * a single slow measurement is the machine's (a preempted VM, a page
	 * fault), and the state it would cost is a whole sample's. */
	if (now < ts->hook_quiet_until) {
		atomic_fetch_add_explicit(&g_hook_skipped, 1, memory_order_relaxed);
		return state;
	}
	/* Their cost in wall time, two reads of the vDSO's clock: the
	 * thread's CPU clock is a system call (0.5 us each here, a sixth of
	 * a sample's whole cost with OpenMP's states).  A thread preempted
	 * in a hook (more runnable threads than CPUs) measures long: the
	 * thread's CPU clock is read then, below. */
	uint64_t h0 = now_ns();
	if (ns)
		state = hooks_state(ts, &hs);
	if (nf) {
		/* the sources see the native stack as it was unwound: a copy
		 * would cost 8 bytes a frame of the signal stack, so they
		 * see a's frames, which change only once they all ran */
		hooks_frames(ts, &hs, a, tags, cap);
	}
	uint64_t h1 = now_ns();
	uint64_t took = h1 > h0 ? h1 - h0 : 0, slow = g_cs.interval_ns ? g_cs.interval_ns / 2 : HOOK_SLOW_NS;
	/* A long one may be the machine's: the thread preempted in the hooks
	 * (a loaded machine, where the thread that just ran a slow hook is
	 * the one the scheduler takes the CPU from).  The thread's CPU time
	 * since the handler began bounds what the hooks really took; read
	 * only then, so the quick hooks pay nothing. */
	struct timespec c;
	if (took >= slow && cpu_at && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) == 0) {
		uint64_t cpu = (uint64_t)c.tv_sec * 1000000000ull + (uint64_t)c.tv_nsec;
		if (cpu >= cpu_at && cpu - cpu_at < took)
			took = cpu - cpu_at;
	}
	/* Quick hooks are never skipped, however close the next sample: a
	 * signal that fell due during a slow hook comes as soon as the
	 * handler returns, microseconds later, and once was skipped for the
	 * quick hooks' few microseconds before it (t58 hiccup in CI). */
	uint64_t quiet = took < ts->hook_last_ns ? took : ts->hook_last_ns;
	ts->hook_last_ns = took;
	ts->hook_quiet_until = quiet >= slow ? h1 + quiet : 0;
	return state;
}

/* The id of a's stack, interned now.  Async-signal-safe. */
static uint64_t intern_at(struct at *a)
{
	return a->id = a->tags ? stacks_intern_tagged(a->pcs, a->tags, a->n, a->flags)
			       : stacks_intern(a->pcs, a->n, a->flags);
}

/* Overflows whose signal was merged into this one.  SIGTRAP is not a
 * queued signal: one pending absorbs the next, and a clock sample and a
 * counter overflow (or two counters' overflows) that fall due before the
 * same return to user space (a page fault's overflow, and the clock's
 * timer firing during that fault) make one signal.  The kernel delivers
 * it at the faulting instruction, the stack all of them were taken at:
 * every counter whose value on entry (in[i]) has grown by a whole period
 * since its last sample overflowed without a sample of its own, and gets
 * it here, with this stack.  A period-1 counter (-h page-faults,1) is then
 * exact whatever meets it; t63 lost one page fault of 2200 in 9 runs
 * before.  skip: the counter this signal is a sample of.
 * Async-signal-safe. */
static void merged_overflows(const struct at *a, struct thread_slot *s, const uint64_t *in, int skip, uint64_t now)
{
	for (int i = 0; i < g_ncounters; i++) {
		if (i == skip || in[i] == UINT64_MAX || in[i] <= s->clast[i] || in[i] - s->clast[i] < g_counter_period[i])
			continue;
		if (counter_write(a->id, now, i, in[i] - s->clast[i]) == 0)
			s->clast[i] = in[i];
	}
}

/* The value of the calling thread's counter fd (id: its perf id), or
 * UINT64_MAX when the descriptor is no longer that counter (the target
 * closed it and may have put a file of its own there: never read from
 * that).  Async-signal-safe: two system calls. */
static uint64_t counter_read(int fd, uint64_t id)
{
	uint64_t got = 0, v = 0;
	if (fd < 0 || sonde_sys6(SYS_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&got, 0, 0, 0) < 0 ||
	    got != id || sonde_sys6(SYS_read, fd, (long)&v, sizeof v, 0, 0, 0) != sizeof v)
		return UINT64_MAX;
	return v;
}

/* A sample of counter idx of the calling task (slot s), whose counters'
 * values on the handler's entry were in[]: its weight is the events since
 * the end of the thread's previous sample of it.  The counter is read
 * again when the sample is written, so that the handler's own events (its
 * page faults on the signal stack and the data files) are never weighed.
 * Runs where sample_body runs (on the thread's own TLS).
 * Async-signal-safe. */
static void counter_sample(void *uc, struct thread_slot *s, int idx, const uint64_t *in)
{
	struct tstate *ts = &t_state;
	uint64_t value = in[idx];
	if (value == UINT64_MAX || !g_counters)
		return;
	if (!atomic_load_explicit(&g_col.active, memory_order_acquire))
		return;
	uint64_t now = now_ns();
	if (g_col.stop_ns && now > g_col.stop_ns)
		return;
	if (atomic_load_explicit(&__sonde_paused, memory_order_acquire)) {
		s->clast[idx] = value; /* paused: not weighed */
		return;
	}
	if (atomic_load_explicit(&g_unwind_pause, memory_order_acquire) || ts->in_trace)
		return; /* the next sample carries these events */
	if (value <= s->clast[idx])
		return; /* an overflow by the handler's own events */
	int hooks = atomic_load_explicit(&g_hook_n[HOOK_STACK], memory_order_relaxed);
	int cap = g_cs.depth + (hooks ? SONDE_HOOK_MAX_FRAMES : 0);
	uint64_t pcs[cap];
	uint32_t tags[hooks ? cap : 1];
	struct at a = { pcs, NULL, 0, 0, 0, { 0, 0 } };
	unwind_at(uc, ts, &a);
	if (hooks)
		hooks_run(uc, s, ts, &a, tags, cap, SONDE_HOOK_COUNTER, now, 0);
	intern_at(&a);
	if (counter_write(a.id, now, idx, value - s->clast[idx]) == 0) {
		merged_overflows(&a, s, in, idx, now);
		uint64_t end = counter_read(s->cfd[idx], s->cid[idx]);
		s->clast[idx] = end != UINT64_MAX && end > value ? end : value;
	}
}

/* Write a clock sample at uc, and the counter overflows merged into its
 * signal, with the same stack.  0, or -1 when the packet was lost.
 * Async-signal-safe. */
static int clock_sample(void *uc, struct sig_stack *st, struct tstate *ts, uint64_t now, uint64_t cpu_at,
			uint64_t weight, uint64_t sys, uint64_t wcpu)
{
	/* the -D limit, 1024 by default: 8 KiB; with hooks, room for the
	 * frames stack sources add, and their tags */
	int hooks = atomic_load_explicit(&g_hook_n[0], memory_order_relaxed);
	int cap = g_cs.depth + (hooks ? SONDE_HOOK_MAX_FRAMES : 0);
	uint64_t pcs[cap];
	uint32_t tags[hooks ? cap : 1];
	struct at a = { pcs, NULL, 0, 0, 0, { 0, 0 } };
	uint16_t state = SONDE_STATE_CPU;
	unwind_at(uc, ts, &a);
	if (hooks)
		state = hooks_run(uc, st->slot, ts, &a, tags, cap, SONDE_HOOK_CLOCK, now, cpu_at);
	intern_at(&a);
	/* The first sample in a wait that began since the last one (omp.c):
	 * the thread worked until the wait began, so the CPU time of that
	 * stretch of wall time, at most, is the state's it was in before, not
	 * the wait's.  Without it each wait took half an interval of the work
	 * before it (the last stretch of a wait goes back to it at the wait's
	 * end, clock_wait_end). */
	/* A short wait that the last sample fell in ended since (omp.c,
	 * clock_wait_mark): its time up to its end is the wait's, at the
	 * last sample's stack, the wait's.  Without it the rest of each
	 * such wait went to the state after it: 12 ms of 70 ms of lock
	 * waits as work, 4 threads spinning on 2 CPUs (t78). */
	uint64_t from_wall = ts->last_wall_ns, wend = ts->wait_end_cpu;
	if (wend) {
		ts->wait_end_cpu = 0;
		atomic_signal_fence(memory_order_seq_cst);
		if (wend > ts->last_cpu_ns && wend - ts->last_cpu_ns < weight && ts->last_stack_id &&
		    write_profile(ts->last_stack_id, ts->wait_end_state, now, wend - ts->last_cpu_ns, 0, 0) == 0) {
			weight -= wend - ts->last_cpu_ns;
			from_wall = ts->wait_end_wall;
		}
	}
	uint64_t since = atomic_load_explicit(&st->slot->wait_since, memory_order_relaxed);
	if (since)
		atomic_store_explicit(&st->slot->wait_hit, 1, memory_order_relaxed);
	if (since && from_wall && since > from_wall && since < now) {
		/* the CPU time of that stretch: the weight's share of the wall
		 * time since the last sample (a thread preempted meanwhile ran
		 * for less than the wall time; taking all of it gave work up
		 * to 7 ms of 60 ms of lock waits, 4 threads on 2 CPUs) */
		uint64_t head = (uint64_t)((double)weight * (double)(since - from_wall) / (double)(now - from_wall));
		if (head >= weight)
			head = weight - 1;
		uint16_t before = (uint16_t)atomic_load_explicit(&st->slot->wait_before, memory_order_relaxed);
		if (head && write_profile(a.id, before, now, head, 0, 0) == 0)
			weight -= head;
	}
	if (write_profile(a.id, state, now, weight, sys < weight ? sys : weight, wcpu) < 0)
		return -1;
	/* (a stack at the depth limit has no room for a frame below) */
	ts->last_stack_id = a.n < g_cs.depth ? a.id : 0;
	ts->last_state = state;
	if (g_ncounters)
		merged_overflows(&a, st->slot, st->counters_in, -1, now);
	return 0;
}

/* Record one sample of the calling task, whose slot is registered.  Not
 * inlined: for a task made by raw clone it runs on the private thread
 * pointer the caller switched to, and the compiler must not compute a TLS
 * address before the switch.  Async-signal-safe: the whole sampling path
 * (unwind, intern, write) uses only stack memory, TLS (initial-exec),
 * atomics and system calls. */
__attribute__((noinline)) static void sample_body(void *uc, struct sig_stack *st)
{
	int saved_errno = errno;
	atomic_fetch_add(&g_inflight, 1);
	struct tstate *ts = &t_state;
	if (st->what >= SIG_COUNTER) {
		counter_sample(uc, st->slot, st->what - SIG_COUNTER, st->counters_in);
		goto out;
	}
	if (!atomic_load_explicit(&g_col.active, memory_order_acquire))
		goto out;
	uint64_t now = now_ns();
	if (g_col.stop_ns && now > g_col.stop_ns)
		goto out;
	if (atomic_load_explicit(&g_unwind_pause, memory_order_acquire) || ts->in_trace)
		goto out; /* a dlclose is unmapping code; the next sample
			     carries this one's weight */
	/* The weight is the thread's CPU time since its previous recorded
	 * sample (since its start for the first one), user and system alike:
	 * the counter only decides when to sample.  Signals the kernel did
	 * not send (a task-clock overflow in kernel mode, a timer overrun)
	 * therefore cost no time, and the recorded total matches the
	 * thread's real CPU time. */
	struct timespec cpu;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) < 0)
		goto out;
	uint64_t cpu_now = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	struct ms_now ms;
	int have_ms = ms_read(ts, &ms) == 0;
	if (clock_paused_skip(ts, cpu_now)) {
		if (have_ms) /* the paused time is not weighed: nor its states */
			ms_rebase(ts, &ms);
		goto out;
	}
	/* attached late: a thread's time before its registration is not
	 * the recording's */
	if (__builtin_expect(!ts->last_cpu_ns, 0) && atomic_load_explicit(&g_from_now, memory_order_relaxed))
		ts->last_cpu_ns = st->slot->reg_cpu_ns;
	if (cpu_now <= ts->last_cpu_ns)
		goto out;

	uint64_t weight = cpu_now - ts->last_cpu_ns, sys = 0, wcpu = 0;
	uint32_t fresh = dfile_fresh_pages();
	if (have_ms)
		ms_split(ts, &ms, weight,
			 uw_at_syscall((uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP], (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RCX], (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_R11]), &sys, &wcpu);
	if (clock_sample(uc, st, ts, now, cpu_now, weight, sys, wcpu) == 0) {
		ts->last_wall_ns = now;
		if (have_ms)
			ms_commit(ts, &ms, weight, sys);
		/* The handler's own time, from its clock read to its last
		 * write, is the collector's (<Collector>), not the next
		 * sample's.  The thread's CPU clock again: a system call
		 * (1.6 us on a virtual machine), but the wall clock is not
		 * the thread's time when the thread is preempted in here,
		 * and the totals must stay exact. */
		if ((++ts->nrecorded & 63) == 0 || (ts->own_ns && ts->own_state != ts->last_state))
			clock_own_write(ts, now);
		ts->own_state = ts->last_state;
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
			uint64_t end = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
			uint64_t own = end > cpu_now ? end - cpu_now : 0;
			ts->last_cpu_ns = cpu_now + own;
			ts->own_ns += own;
			ts->own_at = now;
			atomic_fetch_add_explicit(&g_handler_cpu_ns, own, memory_order_relaxed);
		} else {
			ts->last_cpu_ns = cpu_now;
		}
		/* The handler's first writes to fresh pages of its files
		 * fault, and so do a thread's first samples (its signal
		 * stack, the unwinder's and the stack table's caches): those
		 * faults and their system time are its own, not the next
		 * sample's (40 runs of a 25 ms user-mode loop got 3% to 10%
		 * of System CPU from them).  One more rusage read, about
		 * every 80 samples. */
		struct ms_now after;
		if (have_ms && (dfile_fresh_pages() != fresh || ts->nrecorded <= 8) && ms_read(ts, &after) == 0) {
			ts->ms_flt = after.flt;
			if (after.stime_ns > ts->ms_stime_ns)
				ts->ms_stime_ns = after.stime_ns;
		}
	}
out:;
	/* The events this sample made (its page faults on the signal stack
	 * and in the data files) are the collector's: taken out of each other
	 * counter's next weight (the sampled counter's was, above). */
	struct thread_slot *s = st->slot;
	for (int i = 0; i < g_ncounters; i++) {
		uint64_t in = st->counters_in[i], end;
		if (st->what == SIG_COUNTER + i)
			continue;
		if (in != UINT64_MAX && (end = counter_read(s->cfd[i], s->cid[i])) != UINT64_MAX && end > in)
			s->clast[i] += end - in;
	}
	atomic_fetch_sub(&g_inflight, 1);
	errno = saved_errno;
}

/* The handler proper, on the slot's own signal stack (clock_entry).
 * Touches no TLS until it knows whose TLS it is: a task made by raw clone
 * may run on its creator's thread pointer (whose t_state and errno
 * another thread is using) or on a foreign runtime's, where sonde's TLS
 * offsets may not even be mapped.  Such a task is sampled on the private
 * block its slot names (rawclone.c).  Async-signal-safe. */
__attribute__((used)) void clock_sample_on_stack(int sig, siginfo_t *si, void *uc, struct sig_stack *st)
{
	(void)sig;
	(void)si;
	struct thread_slot *s = st->slot;
	uintptr_t tp = (uintptr_t)atomic_load_explicit(&s->raw_tp, memory_order_acquire);
	if (!tp) {
		sample_body(uc, st);
	} else {
		/* The kernel does not restore the FS base at sigreturn: put
		 * the task's own back. */
		uintptr_t own = tp_get();
		tp_set(tp);
		sample_body(uc, st);
		tp_set(own);
	}
	atomic_store_explicit(&st->busy, 0, memory_order_release);
}

_Atomic uint64_t g_sig_stack_skips;

/* The part of the handler that runs on the interrupted stack, below the
 * kernel's signal frame: a coroutine's or green thread's stack may have
 * little more room than that frame (a handler of the target's own fits
 * there, so sonde's must too).  It chains signals that are not samples
 * to the target's action there, as the target's handler would have run
 * without sonde, and for a sample returns the top of the thread's signal
 * stack, where clock_entry runs the rest (the unwinder, 16 KiB of
 * program counters at the default depth, the writer).  NULL: nothing
 * more to do.  A few dozen bytes of stack.  Async-signal-safe. */
__attribute__((used)) struct sig_stack *clock_entry_prepare(int sig, siginfo_t *si, void *uc)
{
	int what = is_ours(si);
	if (!what) {
		struct thread_slot *s = slot_by_tid(sys_gettid());
		if (s && atomic_load_explicit(&s->raw_tp, memory_order_acquire)) {
			chain(sig, si, uc); /* its errno is not ours to keep */
			return NULL;
		}
		int saved_errno = errno;
		chain(sig, si, uc);
		errno = saved_errno;
		return NULL;
	}
	/* Every sample signal, paused or not: `sonde collect` tells lost
	 * counters by CPU time without any (cmd/collect_watch.c). */
	if (what == SIG_CLOCK)
		atomic_fetch_add_explicit(&g_sample_signals, 1, memory_order_relaxed);
	/* The time of a thread not registered yet goes to its first
	 * recorded sample (see g_tid_slot). */
	pid_t tid = sys_gettid();
	struct thread_slot *s = slot_by_tid(tid);
	if (!s) {
		clock_note_stray(tid);
		return NULL;
	}
	/* No stack (its mmap failed), or the stack in use: the handler
	 * blocks every signal, so only a slot freed and taken again while
	 * a sample of its previous thread was still running could find it
	 * busy.  Skipping costs the sample's place, not its time: the next
	 * sample's weight carries it. */
	struct sig_stack *st = s->sig_stack;
	if (!st || atomic_exchange_explicit(&st->busy, 1, memory_order_acquire)) {
		atomic_fetch_add_explicit(&g_sig_stack_skips, 1, memory_order_relaxed);
		return NULL;
	}
	st->slot = s;
	st->what = what;
	/* Read here, before the signal stack and the data files are touched:
	 * their page faults are the collector's. */
	for (int i = 0; i < g_ncounters; i++)
		st->counters_in[i] = counter_read(s->cfd[i], s->cid[i]);
	return st;
}

/* The action installed for the sampling signal.  The kernel calls it
 * with the signal frame on the interrupted stack (or the target's
 * sigaltstack: SA_ONSTACK is not set, so the target's alternate stack is
 * never taken from it, and a signal arriving while the target's handler
 * runs on it lands below that handler's frame, as any signal would).
 * clock_entry_prepare runs there; the sample itself runs on the
 * thread's own stack from the collector, and the stack pointer is put
 * back before the return to the kernel's restorer. */
__asm__(".text\n"
	".globl clock_entry\n"
	".hidden clock_entry\n"
	".type clock_entry,@function\n"
	"clock_entry:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	subq $8, %rsp\n" /* 16-byte aligned at the call */
	"	call clock_entry_prepare\n"
	"	addq $8, %rsp\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	movq %rax, %rcx\n"
	"	movq %rax, %rsp\n" /* the header is 64-byte aligned */
	"	call clock_sample_on_stack\n"
	"1:	movq %rbp, %rsp\n"
	"	popq %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size clock_entry, .-clock_entry\n");
