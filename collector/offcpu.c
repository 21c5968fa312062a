/*
 * Off-CPU time (sonde collect -w): where each thread blocks, and for how
 * long, without disturbing it.
 *
 * A thread blocked in the kernel cannot be asked for its stack: any
 * signal, even one whose handler returns at once, makes nanosleep, poll,
 * read on a pipe and the like return EINTR (nanosleep even under
 * SA_RESTART), which changes the target.  So the collector looks at its
 * threads from outside, from a thread of its own (sonde-offcpu), once per
 * interval:
 *
 *   1. /proc/self/task/TID/schedstat: the thread's run time and the
 *      number of times it was switched in;
 *   2. /proc/self/task/TID/syscall: "running" for a thread that is
 *      running or runnable (it is not blocked: its time is CPU or Wait
 *      CPU, which the clock samples record), else the system call it is
 *      blocked in with the user stack pointer and program counter at the
 *      system call ("-1 sp pc" outside one: a page-in);
 *   3. the thread's user stack unwound from that pc and sp, by the same
 *      unwinder as the clock handler's, reading the blocked thread's
 *      stack memory (the same address space; unknown bounds are probed
 *      with process_vm_readv, so a stack that changes under it is read
 *      safely);
 *   4. schedstat again: if the thread was switched in meanwhile, its
 *      stack may have changed under the unwinder; the sample is kept if
 *      the thread is blocked again in the same system call with the same
 *      arguments, sp and pc (a loop of waits shorter than a look: it
 *      runs between any two reads), else discarded (counted in the end
 *      record).
 *
 * A blocked thread's sample stands for the time it spent blocked since
 * its previous sample: the wall time between them less what it ran and
 * waited for a CPU meanwhile (schedstat's run time and run delay, exact
 * for a thread that is blocked at both ends; the run delay is Wait CPU,
 * which the clock samples record), as a clock sample stands for the CPU
 * time since the thread's last one.  So off-CPU time is sampled like CPU
 * time is: the total per place converges on the time the threads spent
 * blocked there, and a thread's total is its blocked time.  Not the wall
 * time since the previous look: the sampler is late when the target's
 * threads keep its CPUs busy, and gets a CPU when one of them has just
 * blocked, so a long interval went to a thread that was blocked only at
 * its end (50 ms of 2 s of OpenMP barrier waits too many with 4 threads
 * on 2 CPUs).  The interval is the bound for a thread's first sample,
 * and after a pause, when the time since its last one is not known.  The state is User Lock for a futex
 * wait (pthread mutexes, conditions, rwlocks, barriers, joins, semaphores
 * all sleep in futex), Other Wait for anything else (sleep, I/O, poll, a
 * page-in); a futex wait of a thread in an OpenMP wait is that wait's
 * (OpenMP Barrier, Lock, Taskwait or Idle Off-CPU: the thread's word that
 * omp.c keeps, read by omp_offcpu_state).  No root is needed: a process may read its own threads'
 * /proc files.  Neither file needs anything of the thread; the target
 * never notices, except that it has one more thread (as with -t) and
 * that the sampler's CPU time (about 10 us per blocked thread and look)
 * is spent in its process.
 *
 * Normal context (its own thread, every signal blocked), but no malloc
 * and no stream: the target's allocator and FILEs are not the collector's
 * to use from a thread the target does not know (snprintf into a buffer on
 * the stack, for its one log line, is all of stdio it uses).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <sonde/settings.h>

#include "clock_internal.h"
#include "omp.h"
#include "unwind.h"

static uint64_t g_off_ns; /* the interval; 0: off */
static _Atomic int g_off_quit, g_off_running, g_off_throttled;
/* How late the latest look was (its wake-up after the time it asked
 * for), for log.xml: a late look gives the time a thread was blocked
 * since the previous one to the state it is in then, so this bounds what
 * the off-CPU states can have moved between a thread's waits (the
 * machine's doing: a busy CPU, a preempted virtual CPU). */
static _Atomic uint64_t g_off_late_max;
static _Atomic uint64_t g_off_samples, g_off_discarded;

/* "/proc/PID/task/TID/NAME" into buf (at least 64 bytes). */
static void task_path(char *buf, pid_t pid, pid_t tid, const char *name)
{
	struct xbuf b;
	xb_init(&b, buf, 64);
	xb_str(&b, "/proc/");
	xb_u64(&b, (uint64_t)pid);
	xb_str(&b, "/task/");
	xb_u64(&b, (uint64_t)tid);
	xb_str(&b, "/");
	xb_str(&b, name);
	buf[b.len < 63 ? b.len : 63] = 0;
}

int proc_task_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap)
{
	char path[64];
	task_path(path, pid, tid, name);
	long fd = sonde_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return -1;
	long n = sonde_sys6(SYS_read, fd, (long)buf, (long)cap - 1, 0, 0, 0);
	sonde_sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

/* A decimal or 0x-hexadecimal number (with an optional '-') at *p,
 * which moves past it and the blanks after it.  0, or -1. */
static int take_num(const char **p, int64_t *v)
{
	const char *s = *p;
	int neg = 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	uint64_t x = 0;
	const char *start = s;
	if (s[0] == '0' && s[1] == 'x') {
		for (s += 2, start = s;; s++) {
			int d = *s >= '0' && *s <= '9'	 ? *s - '0'
				: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
							 : -1;
			if (d < 0)
				break;
			x = x * 16 + (uint64_t)d;
		}
	} else {
		while (*s >= '0' && *s <= '9')
			x = x * 10 + (uint64_t)(*s++ - '0');
	}
	if (s == start)
		return -1;
	while (*s == ' ' || *s == '\n')
		s++;
	*p = s;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

int offcpu_parse_syscall(const char *buf, int64_t *nr, uint64_t *sp, uint64_t *pc)
{
	int64_t v[9];
	int n = 0;
	const char *p = buf;
	if (!strncmp(buf, "running", 7))
		return 1;
	while (n < 9 && *p && take_num(&p, &v[n]) == 0)
		n++;
	if (n == 3 && v[0] == -1) { /* blocked outside a system call */
		*nr = -1;
		*sp = (uint64_t)v[1];
		*pc = (uint64_t)v[2];
		return 0;
	}
	if (n != 9 || v[0] < 0)
		return -1;
	*nr = v[0];
	*sp = (uint64_t)v[7];
	*pc = (uint64_t)v[8];
	return 0;
}

/* Each slot's thread at its last sample (the sampler's alone): when, its
 * run time and its run delay; valid in the generation it was taken in
 * (a pause, whose blocked time is not recorded, starts another). */
static struct last_sample {
	pid_t tid;
	uint32_t gen;
	uint64_t at, run, delay;
} g_last[MAX_THREADS];
static uint32_t g_gen = 1;

/* The time a thread blocked at `now` (with schedstat `ss` then) was
 * blocked since its last sample; `span` when that sample is unknown. */
static uint64_t blocked_since(const struct last_sample *ls, pid_t tid, uint64_t now, const uint64_t *ss,
			      uint64_t span)
{
	if (ls->tid != tid || ls->gen != g_gen || now < ls->at || ss[0] < ls->run || ss[1] < ls->delay)
		return span;
	uint64_t used = (ss[0] - ls->run) + (ss[1] - ls->delay), wall = now - ls->at;
	return used < wall ? wall - used : 0;
}

/* Look at one thread: a sample of it if it is blocked, standing for the
 * time it was blocked since its last sample (`span` ns when that is not
 * known).  Returns 1 written, 0 not blocked (or unreadable), -1
 * discarded (it ran while its stack was read). */
static int look(const struct thread_slot *s, struct last_sample *ls, pid_t pid, pid_t tid, uint64_t span)
{
	static uint64_t pcs[SONDE_MAX_DEPTH_LIMIT]; /* one sampler thread */
	char buf[320], call[320];
	uint64_t before[3], after[3];
	uint64_t now = now_ns();
	/* Without schedstat (a kernel without CONFIG_SCHED_INFO) the check
	 * is weaker: the same system call, arguments, sp and pc after. */
	int have_ss = proc_task_read(pid, tid, "schedstat", buf, sizeof buf) > 0 &&
		      ms_parse_schedstat(buf, (long)strlen(buf), before) == 0;
	int64_t nr;
	uint64_t sp, pc;
	if (proc_task_read(pid, tid, "syscall", call, sizeof call) < 0 ||
	    offcpu_parse_syscall(call, &nr, &sp, &pc) != 0)
		return 0;
	if (!pc || !sp)
		return 0; /* a kernel thread's, or a task on its way out */
	ucontext_t uc;
	memset(&uc, 0, sizeof uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	unsigned flags = 0;
	int n = 0;
	/* As a handler does: a dlclose unmapping code waits for us. */
	atomic_fetch_add(&g_inflight, 1);
	if (!atomic_load_explicit(&g_unwind_pause, memory_order_acquire))
		n = uw_backtrace(&uc, 0, 0, pcs, g_cs.depth, &flags);
	atomic_fetch_sub(&g_inflight, 1);
	if (n <= 0)
		return 0;
	/* A thread blocked inside sonde (an interposer calling the real
	 * function) blocks where the target called it. */
	int k = 0;
	for (int i = 0; i < n; i++)
		if (!trace_own_pc(pcs[i] & ~SONDE_PC_EXACT))
			pcs[k++] = pcs[i];
	if (!k)
		return 0;
	n = k;
	/* The thread may have run while its stack was read: then the stack
	 * holds if it is blocked again in the same call with the same
	 * arguments, stack pointer and pc (a loop of short waits, whose
	 * thread runs between every two reads of its files: discarding
	 * those would lose exactly the waits shorter than a look). */
	int ran = !have_ss || proc_task_read(pid, tid, "schedstat", buf, sizeof buf) < 0 ||
		  ms_parse_schedstat(buf, (long)strlen(buf), after) < 0 || after[0] != before[0] ||
		  after[2] != before[2];
	if (ran && (proc_task_read(pid, tid, "syscall", buf, sizeof buf) < 0 || strcmp(buf, call)))
		return -1;
	uint64_t weight = have_ss ? blocked_since(ls, tid, now, before, span) : span;
	if (!weight)
		return 0;
	uint64_t id = stacks_intern(pcs, n, flags);
	struct sonde_offcpu_packet *p = dfile_reserve(g_profile, sizeof *p);
	if (!p)
		return 0; /* counted by the dfile */
	p->type = SONDE_PKT_OFFCPU;
	p->size = sizeof *p;
	int futex = nr == SYS_futex
#ifdef SYS_futex_waitv
		    || nr == SYS_futex_waitv
#endif
		;
	/* A futex wait that is an OpenMP wait is that wait's (omp.h: the
	 * word its runtime's entry points or OMPT's callbacks keep). */
	int omp = futex ? omp_offcpu_state(s) : -1;
	p->state = omp >= 0 ? (uint16_t)omp : futex ? SONDE_STATE_USER_LOCK : SONDE_STATE_OTHER_WAIT;
	p->syscall = nr >= 0 && nr < 0xffff ? (uint16_t)nr : SONDE_OFFCPU_NO_SYSCALL;
	p->tid = (uint32_t)tid;
	p->reserved = 0;
	p->time_ns = now;
	p->weight_ns = weight;
	p->stack_id = id;
	dfile_commit(g_profile, sizeof *p);
	if (have_ss)
		*ls = (struct last_sample){ tid, g_gen, now, before[0], before[1] };
	return 1;
}

static void sweep(uint64_t now, uint64_t span)
{
	pid_t pid = getpid(), self = sys_gettid();
	for (int i = 0, n = atomic_load_explicit(&g_slots_used, memory_order_acquire); i < n; i++) {
		if (atomic_load_explicit(&g_off_quit, memory_order_relaxed))
			return;
		struct thread_slot *s = &g_slots[i];
		pid_t tid = atomic_load_explicit(&s->tid, memory_order_acquire);
		if (!tid || tid == self)
			continue;
		/* A task made by clone(CLONE_VM) without CLONE_THREAD is a
		 * process of its own: its files are under its own pid. */
		pid_t owner = s->own_process ? tid : pid;
		/* A thread younger than the span stands for its life only. */
		uint64_t w = span;
		if (s->start_ns && now > s->start_ns && now - s->start_ns < w)
			w = now - s->start_ns;
		int r = look(s, &g_last[i], owner, tid, w);
		if (r > 0)
			atomic_fetch_add_explicit(&g_off_samples, 1, memory_order_relaxed);
		else if (r < 0)
			atomic_fetch_add_explicit(&g_off_discarded, 1, memory_order_relaxed);
	}
}

static void *offcpu_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	real_pthread_sigmask_call(SIG_BLOCK, &all, NULL);
	/* A look stands for the time a thread was blocked since its previous
	 * one, given to the state the thread is in then: a late look gives a
	 * wait's time to the next (an OpenMP barrier's to idle).  With every
	 * CPU busy (a team of 4 on 2 CPUs) looks at normal priority came up
	 * to 13 ms late, at real-time priority 1 at most 3.6 ms.  Where the
	 * process may (root, CAP_SYS_NICE, RLIMIT_RTPRIO): its duty stays at
	 * most a tenth of a CPU (below), and any real-time thread of the
	 * target's is above it. */
	struct sched_param sp = { .sched_priority = 1 };
	int rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	log_event_text("info", rt == 0 ? "off-CPU sampling: the sampler runs at real-time priority 1"
				       : "off-CPU sampling: the sampler runs at normal priority (no CAP_SYS_NICE or "
					 "RLIMIT_RTPRIO): when the target keeps every CPU busy its looks can be late "
					 "by milliseconds, and a late look gives a thread's blocked time since the "
					 "previous one to the state it is in then");
	uint64_t last = now_ns(), next = last + g_off_ns;
	while (!atomic_load(&g_off_quit)) {
		/* A futex wait on g_off_quit, so that offcpu_stop wakes it. */
		struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
		if (syscall(SYS_futex, &g_off_quit, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts, NULL,
			    FUTEX_BITSET_MATCH_ANY) < 0 &&
		    errno != ETIMEDOUT && errno != EINTR && errno != EAGAIN) {
			/* cannot sleep: stop rather than spin */
			if (errno == EPERM && sysgate_active()) {
				log_event_text("warning", "off-CPU sampling stopped: the target's seccomp filter "
							  "refuses the futex its thread sleeps in");
				atomic_store(&g_off_running, 0);
				sysgate_thread_exit();
			}
			break;
		}
		if (atomic_load(&g_off_quit))
			break;
		uint64_t now = now_ns(), span = now - last;
		if (now > next && now - next > atomic_load_explicit(&g_off_late_max, memory_order_relaxed))
			atomic_store_explicit(&g_off_late_max, now - next, memory_order_relaxed);
		last = now;
		next += g_off_ns;
		if (next <= now) /* late: the next span carries the time */
			next = now + g_off_ns;
		/* After a seccomp filter, what it refuses is not done
		 * (sysgate.c): the filter may reach this thread too
		 * (SECCOMP_FILTER_FLAG_TSYNC). */
		if (!atomic_load_explicit(&g_col.active, memory_order_acquire) ||
		    atomic_load_explicit(&__sonde_paused, memory_order_acquire) || (g_col.stop_ns && now > g_col.stop_ns)) {
			g_gen++; /* the time since the last samples is not all recorded */
			continue;
		}
		sweep(now, span);
		/* A look costs about 20 us a thread: with hundreds of threads a
		 * sweep would take the whole interval.  The sampler keeps to a
		 * tenth of a CPU by waiting nine times its sweep's length; the
		 * next samples stand for the longer span (span above). */
		uint64_t end = now_ns(), took = end - now;
		if (end + 9 * took > next) {
			next = end + 9 * took;
			if (!atomic_exchange(&g_off_throttled, 1)) {
				char msg[200];
				snprintf(msg, sizeof msg,
					 "off-CPU sampling: a look at every thread took %.3f ms; it looks at most "
					 "every %.3f ms (a tenth of a CPU), its samples standing for that long",
					 (double)took / 1e6, (double)(10 * took) / 1e6);
				log_event_text("info", msg);
			}
		}
	}
	atomic_store(&g_off_running, 0);
	syscall(SYS_futex, &g_off_running, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	return NULL;
}

void offcpu_init(void)
{
	const char *v = sonde_getenv(SONDE_ENV_OFFCPU_NS);
	g_off_ns = v && *v ? strtoull(v, NULL, 10) : 0;
	if (g_off_ns && g_off_ns < 100000)
		g_off_ns = 100000; /* 0.1 ms: below that the looks are all it does */
}

uint64_t offcpu_interval_ns(void)
{
	return g_off_ns;
}

void offcpu_start(void)
{
	if (!g_off_ns || !g_profile)
		return;
	atomic_store(&g_off_quit, 0);
	atomic_store(&g_off_running, 1);
	int rc = collector_thread(offcpu_main, "sonde-offcpu");
	if (rc) {
		atomic_store(&g_off_running, 0);
		char msg[160];
		snprintf(msg, sizeof msg, "cannot start the off-CPU sampling thread (%s); off-CPU time (-w) is not recorded",
			 strerror(rc));
		log_event_text("error", msg);
		g_off_ns = 0;
	}
}

void offcpu_stop(void)
{
	atomic_store(&g_off_quit, 1);
	syscall(SYS_futex, &g_off_quit, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	/* Wait (at most 1 s) until it is out of the data files, which are
	 * finished after this. */
	for (int i = 0; i < 100 && atomic_load(&g_off_running); i++) {
		struct timespec ts = { 0, 10000000 };
		syscall(SYS_futex, &g_off_running, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, &ts, NULL, 0);
	}
}

void offcpu_fork_child(void)
{
	/* The thread does not exist in the child; a followed child starts
	 * its own (collector_start). */
	atomic_store(&g_off_running, 0);
	atomic_store(&g_off_quit, 1);
	atomic_store(&g_off_samples, 0);
	atomic_store(&g_off_discarded, 0);
	atomic_store(&g_off_late_max, 0);
}

uint64_t offcpu_samples(void)
{
	return atomic_load(&g_off_samples);
}

uint64_t offcpu_discarded(void)
{
	return atomic_load(&g_off_discarded);
}

/* ---- the module (collector.h) ---- */

static int g_off_clock; /* clock profiling runs: off-CPU time needs it */

static void offcpu_open(struct clock_settings *cs)
{
	offcpu_init();
	g_off_clock = cs->interval_ns != 0;
}

static void offcpu_settings(struct xbuf *b, const struct clock_settings *cs)
{
	if (cs->interval_ns)
		xb_attr_u64(b, "offcpu_interval_ns", offcpu_interval_ns());
}

static void offcpu_module_start(void)
{
	if (g_off_clock)
		offcpu_start();
}

static void offcpu_end(struct xbuf *b)
{
	if (!offcpu_interval_ns())
		return;
	xb_attr_u64(b, "offcpu_samples", offcpu_samples());
	xb_attr_u64(b, "offcpu_discarded", offcpu_discarded());
	xb_attr_u64(b, "offcpu_late_ns", atomic_load(&g_off_late_max));
}

const struct collector_module offcpu_module = {
	.name = "offcpu",
	.open = offcpu_open,
	.settings = offcpu_settings,
	.start = offcpu_module_start,
	.quit = offcpu_stop,
	.end = offcpu_end,
	.fork_child = offcpu_fork_child,
};
