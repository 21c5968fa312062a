/*
 * Clock profiling: every thread is sampled on its own CPU time.
 *
 * Sample sources are pluggable (struct source).  The preferred one is a
 * per-thread perf_event software task-clock counter whose overflow the
 * kernel delivers to the thread as a SIGTRAP (attr.sigtrap), counting
 * kernel mode as well as user mode where the kernel allows it (root,
 * CAP_PERFMON, or perf_event_paranoid <= 1).  It is driven by a
 * high-resolution timer, so a 1 ms interval gives about 1000 samples per
 * CPU second.  An overflow in kernel mode (a system call, a page fault)
 * is delivered as task work on the thread's return to user space, where
 * the interrupted PC is the return of the system call (in pread64, say),
 * so the stack is the one that entered the kernel.
 *
 * When the kernel refuses to count kernel mode (paranoid 2 without
 * privilege), or SIGTRAP cannot be used (a debugger, SONDE_SIGNAL, an
 * old kernel), POSIX per-thread CPU timers are used: they count user and
 * system time, and a tick that finds the thread in the kernel signals it
 * on its return to user space, again at the stack that entered the
 * kernel.  They fire at most once per scheduler tick (4 ms here), so a
 * 1 ms interval gets fewer, heavier samples: the price of putting kernel
 * time in the right place without privilege (see clock_start).
 *
 * A user-mode-only perf counter (the fasync source, or SIGTRAP with
 * exclude_kernel where nothing better exists) drops every overflow that
 * falls in the kernel, and since a sample's weight is the thread's
 * CPU-clock time since its previous sample (see the handler), a system
 * call's time then goes to the next user-mode sample: the code that runs
 * after it.  Those are used only when asked for (SONDE_CLOCK_SOURCE), and
 * log.xml's kernel_time says which behaviour is in force.
 *
 * setitimer(ITIMER_PROF) is never used: it is per process, and its signal
 * lands on whichever thread is running, which skews per-thread time.
 *
 * The signal is SIGTRAP or a real-time signal rather than SIGPROF, so the
 * target's own SIGPROF handlers, masks and itimers are left completely
 * alone.  A debugger stops its debuggee at both; in a process traced
 * from its start (TracerPid: `sonde collect gdb --args PROG`, strace),
 * the CPU timers signal with SIGURG instead, which gdb passes silently
 * (see clock_start).  A tracer that attaches later is sonde collect's to
 * notice and tell about (cmd/collect_watch.c).
 *
 * This file arms and disarms sources and tracks threads (normal context);
 * the signal handler itself is in sample.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <ucontext.h>
#include <unistd.h>

#include <sonde/settings.h>
#include <sonde/shared.h>

#include "collector.h"
#include "clock_internal.h"
#include "sys_mmap.h"
#include "unwind.h"
#include "../tracers/tracer.h"


static struct source {
	const char *name;
	int (*arm)(struct thread_slot *s, pid_t tid);
	void (*disarm)(struct thread_slot *s);
} *g_src;

struct clock_settings g_cs;
static int g_sig;
static pid_t g_start_tracer; /* TracerPid at clock_start */
struct dfile *g_profile;
int g_timer_source_active;
int g_sigtrap_source_active;
/* A spin lock rather than a pthread mutex: tasks made by raw clone take
 * it too, and pthread_mutex_lock reads the caller's thread descriptor
 * through its thread pointer, which such a task may not have.  Held for
 * a few system calls at most. */
static _Atomic int g_reg_lock;
static void reg_lock(void)
{
	while (atomic_exchange_explicit(&g_reg_lock, 1, memory_order_acquire))
		syscall(SYS_sched_yield);
}
static void reg_unlock(void)
{
	atomic_store_explicit(&g_reg_lock, 0, memory_order_release);
}
/* The SIGTRAP counter counts kernel mode too (exclude_kernel = 0). */
static int g_sigtrap_kernel;
static int g_nlive; /* registered threads; under g_reg_lock */
/* Set once the profiling signal's action was found replaced behind
 * sonde's back (clock_stop_lost): no thread is armed from then on. */
static _Atomic int g_clock_lost_signal;
/* Set when the counters stopped for a seccomp filter that refuses reading
 * them (clock_filter_prepare): none is armed or enabled again. */
static int g_ncounters_off;
struct thread_slot g_slots[MAX_THREADS];
_Atomic int g_slots_used;
_Atomic uint16_t g_tid_slot[TID_LIMIT];
/* Free slots below g_slots_used, as a stack.  Under g_reg_lock. */
static uint16_t g_free_slots[MAX_THREADS];
static int g_nfree;
static pthread_key_t g_key;
_Atomic uint8_t g_our_fds[FD_BITS / 8];
_Atomic uint64_t g_samples;
_Atomic uint64_t g_sample_signals;
_Atomic uint64_t g_handler_cpu_ns, g_pseudo_samples;
_Atomic int g_inflight;
_Atomic int g_unwind_pause;
int g_timer_magic;


/* ---- perf_event source ---- */

/* Whether fd is still our counter `id`: the target may have closed the
 * number and put a file of its own there, maybe another anonymous-inode
 * one, which fstat cannot tell from a counter.  Only perf counters answer
 * the '$' ioctls.  Normal context. */
static int perf_fd_ours(int fd, uint64_t id)
{
	uint64_t got = 0;
	if (fd < 0 || !fd_still_ours(fd))
		return 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &got) == 0)
		return got == id;
	/* The target's seccomp filter refuses asking: a protected number
	 * only a bare system call could have taken is trusted. */
	return errno == EPERM && sysgate_active();
}

/* Note the counter's id, by which check_counters tells a counter
 * the target closed (and arms its thread again). */
static void perf_note(struct thread_slot *s)
{
	if (ioctl(s->fd, PERF_EVENT_IOC_ID, &s->perf_id) < 0)
		s->perf_id = 0;
}

/* Disable and close our counter, unless the target took the number (then
 * the file there is its own, and our counter ended when it was closed).
 * Normal context. */
static void perf_release(int fd, uint64_t id)
{
	if (fd < 0)
		return;
	if (perf_fd_ours(fd, id)) {
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		fd_release(fd);
	} else {
		fd_forget_taken(fd);
	}
}

static int perf_arm(struct thread_slot *s, pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = g_cs.interval_ns;
	/* User mode only, always: the fasync signal is sent from the
	 * overflow's irq_work at once, so an overflow counted in the kernel
	 * would make the signal pending in the middle of a system call, and
	 * a call about to sleep (epoll_wait, nanosleep, select, read of a
	 * pipe) would return EINTR, whatever SA_RESTART says for some of
	 * them.  A user-mode overflow is signalled on the return from the
	 * timer interrupt itself.  Hence kernel time is charged to the next
	 * user-mode sample with this source, which is why it is never
	 * chosen by default. */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.wakeup_events = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = fd_park(fd);
	struct f_owner_ex own = { F_OWNER_TID, tid };
	if (fd >= FD_BITS || fcntl(fd, F_SETOWN_EX, &own) < 0 || fcntl(fd, F_SETSIG, g_sig) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0) {
		int e = errno ? errno : EBADF;
		fd_release(fd);
		return -e;
	}
	atomic_fetch_or(&g_our_fds[fd / 8], (uint8_t)(1u << (fd % 8)));
	s->fd = fd;
	perf_note(s);
	return 0;
}

/* The same counter, but the kernel delivers the overflow as a SIGTRAP
 * (si_code TRAP_PERF, si_perf_data = our magic) queued as task work for
 * the counted thread itself.  Since Linux 6.10 that costs nothing beyond
 * setting a flag checked on return to user space, whereas the fasync path
 * raises an irq_work, which is a self-IPI: about 15 us per sample on a
 * VM, 1.5% of CPU at 1 kHz.  SIGTRAP is shared with debuggers and
 * breakpoints, so the handler chains every SIGTRAP that is not ours, and
 * this source is not used under ptrace.
 *
 * Each thread opens its own counter, as with the other sources.  An
 * inherited one would save a perf_event_open per thread and, between
 * threads holding copies of one parent context, the scheduler's stopping
 * of one thread's high-resolution timer and starting of the other's (it
 * swaps the contexts instead; each start reprograms the timer device, a
 * VM exit: 0.4% of CPU time on a 2-CPU VM running 4 busy threads).  But
 * after a swap the timer runs on for the other thread, and a thread's
 * samples stop coming at intervals of its own CPU time: an OpenMP worker
 * of 2 on 2 CPUs went 10 ms of its CPU without a sample in 1 run of 6,
 * its work at the end of one region given to its next sample, in the
 * next region (tests/t78).  The weight stayed exact; where it went did
 * not. */
static int sigtrap_arm(struct thread_slot *s, pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = g_cs.interval_ns;
	/* Counting kernel mode is what puts system-call time at the call:
	 * an overflow in the kernel queues the SIGTRAP as task work, run on
	 * the return to user space once the call has completed (it cannot
	 * interrupt a sleeping call or make it return EINTR: task work sets
	 * TIF_NOTIFY_RESUME, which no wait checks).  Several overflows in one
	 * long call make one sample, whose weight is all of their time.
	 * The kernel allows it with CAP_PERFMON or perf_event_paranoid <= 1
	 * (else EACCES, and clock_start chooses another source). */
	a.exclude_kernel = !g_sigtrap_kernel;
	a.exclude_hv = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1; /* required with sigtrap */
	a.sig_data = SONDE_SIGTRAP_MAGIC;
	if (g_kstacks && g_sigtrap_kernel) {
		/* -k on: each overflow's kernel stack, as a record in the
		 * counter's ring buffer (kstacks.c) */
		a.sample_type = PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_user = 1;
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	s->fd = fd_park(fd);
	perf_note(s);
	if (a.sample_type)
		kstacks_ring_open(s, s->fd);
	return 0;
}

int clock_kernel_counted(void)
{
	return g_sigtrap_source_active && g_sigtrap_kernel;
}

static void sigtrap_disarm(struct thread_slot *s)
{
	if (atomic_load_explicit(&s->kring, memory_order_relaxed)) {
		pid_t tid = atomic_load(&s->tid);
		kstacks_ring_close(s, !tid || tid == (pid_t)syscall(SYS_gettid));
	}
	if (s->fd < 0)
		return;
	perf_release(s->fd, s->perf_id);
	s->fd = -1;
}

static void perf_disarm(struct thread_slot *s)
{
	if (s->fd < 0)
		return;
	atomic_fetch_and(&g_our_fds[s->fd / 8], (uint8_t) ~(1u << (s->fd % 8)));
	perf_release(s->fd, s->perf_id);
	s->fd = -1;
}

/* ---- POSIX CPU-timer source ---- */

/* The timer is checked at every scheduler tick on the thread's CPU clock,
 * user and system time alike, so it places kernel time without privilege.
 * Where the kernel handles CPU-timer expiry as task work
 * (CONFIG_POSIX_CPU_TIMERS_TASK_WORK: x86-64 and others since Linux 5.10),
 * a tick in kernel mode only queues that work, which sends the signal on
 * the return to user space once the system call has completed: no EINTR,
 * and the signal frame's PC is the call's return.  Elsewhere the signal
 * is sent from the tick itself, and a call that was about to sleep when
 * the tick came can see it pending and return EINTR. */

static int timer_arm(struct thread_slot *s, pid_t tid)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = g_sig;
	sev.sigev_value.sival_ptr = &g_timer_magic;
	sev._sigev_un._tid = tid;
	if (!sysgate_may(SYS_timer_create) || !sysgate_may(SYS_timer_settime) || !sysgate_may(SYS_timer_delete))
		return -EPERM; /* refused by the target's seccomp filter */
	if (timer_create(thread_cpu_clock(tid), &sev, &s->timer) < 0)
		return -errno;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(g_cs.interval_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(g_cs.interval_ns % 1000000000ull);
	its.it_value = its.it_interval;
	if (timer_settime(s->timer, 0, &its, NULL) < 0) {
		int e = errno;
		timer_delete(s->timer);
		return -e;
	}
	s->has_timer = 1;
	return 0;
}

static void timer_disarm(struct thread_slot *s)
{
	if (s->has_timer && sysgate_may(SYS_timer_delete))
		timer_delete(s->timer);
	s->has_timer = 0;
}

/* No clock source: counter overflow profiling (-h) without clock
 * profiling (-p off) still needs the handler on SIGTRAP, which this
 * installs, arming nothing. */
static int none_arm(struct thread_slot *s, pid_t tid)
{
	(void)s;
	(void)tid;
	return 0;
}
static void none_disarm(struct thread_slot *s)
{
	(void)s;
}
static struct source g_none_source = { "off", none_arm, none_disarm };

static struct source g_perf_source = { "perf-task-clock", perf_arm, perf_disarm };
static struct source g_sigtrap_source = { "perf-task-clock-sigtrap", sigtrap_arm, sigtrap_disarm };
static struct source g_timer_source = { "posix-cpu-timer", timer_arm, timer_disarm };

/* ---- threads ---- */

/* The signal stack of slot `s`, mapped on its first use by a raw mmap
 * (no interposer sees it, and a task made by raw clone may call this),
 * with a guard page below: a handler that ever outgrew it would fault
 * rather than write into memory of the target's.  Never unmapped: the
 * stack stays with the slot.  Under g_reg_lock. */
static void slot_stack(struct thread_slot *s)
{
	if (s->sig_stack)
		return;
	size_t guard = 4096, len = guard + SIG_STACK_SIZE + sizeof(struct sig_stack);
	len = (len + 4095) & ~(size_t)4095;
	char *m = sonde_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
			     -1, 0);
	if (m == MAP_FAILED)
		return; /* the handler skips this thread's samples, counted */
	syscall(SYS_mprotect, m, guard, PROT_NONE);
	struct sig_stack *st = (struct sig_stack *)(m + len - sizeof(struct sig_stack));
	atomic_store(&st->busy, 0);
	st->slot = s;
	s->sig_stack = st;
}

/* A free slot for `tid`, indexed, or NULL when all 16384 are in use.
 * Under g_reg_lock. */
static struct thread_slot *slot_take(pid_t tid)
{
	if (tid <= 0 || (unsigned)tid >= TID_LIMIT)
		return NULL;
	int i;
	if (g_nfree)
		i = g_free_slots[--g_nfree];
	else if (atomic_load(&g_slots_used) < MAX_THREADS)
		i = atomic_fetch_add(&g_slots_used, 1);
	else
		return NULL;
	atomic_store(&g_slots[i].raw_tp, NULL);
	atomic_store(&g_slots[i].omp_state, 0);
	atomic_store(&g_slots[i].omp_region, 0);
	atomic_store(&g_slots[i].wait_since, 0);
	atomic_store(&g_slots[i].wait_hit, 0);
	g_slots[i].own_process = g_slots[i].foreign_fds = 0;
	for (int c = 0; c < SONDE_MAX_COUNTERS; c++)
		g_slots[i].cfd[c] = -1;
	slot_stack(&g_slots[i]);
	atomic_store(&g_slots[i].tid, tid);
	atomic_store_explicit(&g_tid_slot[tid], (uint16_t)(i + 1), memory_order_release);
	return &g_slots[i];
}

/* Free the slot of `tid`.  Under g_reg_lock (or in a fork child). */
static void slot_free(struct thread_slot *s)
{
	pid_t tid = atomic_load(&s->tid);
	if (tid > 0 && (unsigned)tid < TID_LIMIT)
		atomic_store(&g_tid_slot[tid], 0);
	atomic_store(&s->tid, 0);
	atomic_store(&s->raw_tp, NULL);
	if (g_nfree < MAX_THREADS)
		g_free_slots[g_nfree++] = (uint16_t)(s - g_slots);
}

/* The CPU-clock time that the exec'ing thread (tid = pid in the new
 * image) brought from the images before this one, which recorded it:
 * its thread_end reports the CPU time of this image only, comparable
 * with what this image recorded. */
static uint64_t g_exec_base_ns;

/* The kernel's own accounting of a live thread's microstates, for
 * -statistics to set beside the recorded ones: user and system CPU time
 * (/proc's stat, in clock ticks) and run-queue delay (schedstat, exact).
 * Nothing for a thread whose files are gone or odd.  Of an exec'd
 * image's first thread, what it brought from before the exec is left
 * out, like its CPU time (g_exec_base_ns): the delay is not known then,
 * so it is not written. */
static long g_clk_tck; /* sysconf's, taken at clock_start */

static void kernel_states(struct xbuf *b, const struct thread_slot *s)
{
	pid_t tid = atomic_load(&s->tid);
	pid_t pid = s->own_process ? tid : getpid();
	char buf[1024];
	if (proc_task_read(pid, tid, "stat", buf, sizeof buf) > 0) {
		const char *p = strrchr(buf, ')');
		long tick = g_clk_tck;
		/* fields 14 and 15 (utime, stime) are the 12th and 13th
		 * after the ')' that ends the command name */
		int field = 2;
		uint64_t ut = 0, st = 0;
		/* By hand: a raw clone's task may end here on a thread
		 * pointer that is not libc's, and strtoull reads the
		 * locale through TLS. */
		for (; p && *p && field <= 15; p++) {
			if (*p == ' ') {
				field++;
				continue;
			}
			if (*p >= '0' && *p <= '9' && (field == 14 || field == 15)) {
				uint64_t *v = field == 14 ? &ut : &st;
				*v = *v * 10 + (uint64_t)(*p - '0');
			}
		}
		if (field > 15 && tick > 0 && !(g_exec_base_ns && tid == g_col.pid)) {
			xb_attr_u64(b, "utime_ns", ut * (1000000000ull / (uint64_t)tick));
			xb_attr_u64(b, "stime_ns", st * (1000000000ull / (uint64_t)tick));
		}
	}
	uint64_t v[3];
	int n = proc_task_read(pid, tid, "schedstat", buf, sizeof buf);
	if (n > 0 && ms_parse_schedstat(buf, n, v) == 0 && !(g_exec_base_ns && tid == g_col.pid))
		xb_attr_u64(b, "run_delay_ns", v[1]);
}

/* The CPU time of the process's registered threads since they were
 * registered, summed as they end, and the process's CPU clock when
 * recording started: what else the process ran was in tasks sonde never
 * saw (report_unseen). */
static _Atomic uint64_t g_seen_cpu_ns;
static _Atomic uint32_t g_seen_threads, g_seen_unknown;
static uint64_t g_process_cpu0;

static uint64_t process_cpu_now(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) < 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Thread tid's name as the kernel keeps it (what pthread_setname_np set:
 * the JVM's "GC Thread#0", "C2 CompilerThre"), "" when it cannot be read
 * (a thread gone, a seccomp filter that refuses the file).  Its own
 * thread asks prctl; another's is read from /proc.  errno kept. */
static void thread_name(pid_t tid, char *out, size_t n)
{
	int saved = errno;
	out[0] = 0;
	/* syscall() is the gate's (collector.h): a call a seccomp filter
	 * of the target's refuses is not made */
	if (tid == sys_gettid()) {
		char b[17] = "";
		if (syscall(SYS_prctl, PR_GET_NAME, (long)b, 0L, 0L, 0L) == 0)
			snprintf(out, n, "%s", b);
	} else {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r = syscall(SYS_read, fd, out, n - 1);
			syscall(SYS_close, fd);
			out[r > 0 ? r : 0] = 0;
		}
	}
	char *nl = strchr(out, '\n');
	if (nl)
		*nl = 0;
	errno = saved;
}

static void record_thread_end(struct thread_slot *s, uint64_t cpu_ns)
{
	char name[32];
	thread_name(atomic_load(&s->tid), name, sizeof name);
	if (cpu_ns == UINT64_MAX)
		atomic_store(&g_seen_unknown, 1);
	else if (!s->own_process) {
		atomic_fetch_add(&g_seen_threads, 1);
		if (cpu_ns > s->reg_cpu_ns)
			atomic_fetch_add(&g_seen_cpu_ns, cpu_ns - s->reg_cpu_ns);
	}
	if (cpu_ns != UINT64_MAX && g_exec_base_ns && atomic_load(&s->tid) == g_col.pid)
		cpu_ns = cpu_ns > g_exec_base_ns ? cpu_ns - g_exec_base_ns : 0;
	/* attached late: its time while recorded */
	if (cpu_ns != UINT64_MAX && atomic_load(&g_from_now))
		cpu_ns = cpu_ns > s->reg_cpu_ns ? cpu_ns - s->reg_cpu_ns : 0;
	char mem[384];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"thread_end\"");
	xb_attr_u64(&b, "tid", (uint64_t)atomic_load(&s->tid));
	xb_attr_u64(&b, "start_ns", s->start_ns);
	xb_attr_u64(&b, "time_ns", now_ns());
	if (cpu_ns != UINT64_MAX) /* unknown for a thread already gone */
		xb_attr_u64(&b, "cpu_ns", cpu_ns);
	if (cpu_ns != UINT64_MAX)
		kernel_states(&b, s);
	if (name[0])
		xb_attr_str(&b, "name", name);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
}

static uint64_t thread_cpu_ns(pid_t tid)
{
	struct timespec t;
	if (clock_gettime(thread_cpu_clock(tid), &t) < 0)
		return UINT64_MAX;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void forget_stray(pid_t tid);

static uint64_t slot_cpu_ns(const struct thread_slot *s)
{
	pid_t tid = atomic_load(&s->tid);
	if (!s->own_process)
		return thread_cpu_ns(tid);
	struct timespec t;
	if (clock_gettime(process_cpu_clock(tid), &t) < 0)
		return UINT64_MAX;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Register `tid` and, with `arm` set, arm its sampling source.  Returns 0,
 * or -errno when arming failed.  Normal context. */
static int register_thread(pid_t tid, int arm)
{
	reg_lock();
	struct thread_slot *s = slot_by_tid(tid);
	if (s && atomic_load(&s->raw_tp)) {
		/* A raw clone task that never returned to its wrapper (it
		 * exec'd or ended by system call): its tid is reused.  What it
		 * armed is not this thread's. */
		atomic_store(&s->raw_tp, NULL);
		s->own_process = s->foreign_fds = 0;
		s->fd = -1;
		s->has_timer = 0;
		s->start_ns = now_ns();
		s->reg_cpu_ns = thread_cpu_ns(tid);
	}
	if (!s) {
		s = slot_take(tid);
		if (s) {
			s->fd = -1;
			s->has_timer = 0;
			s->start_ns = now_ns();
			s->reg_cpu_ns = thread_cpu_ns(tid);
			atomic_store(&s->resume_gen, 0);
			g_nlive++;
			atomic_store(&g_dfile_writers, g_nlive);
		}
	}
	reg_unlock();
	if (s) {
		dfile_make_room(g_profile);
		dfile_make_room(stacks_dfile());
		dfile_make_room(g_counters);
	}
	if (!s) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			log_event_text("warning", "more than 16384 live threads; extra threads are not profiled");
		return -ENOSPC;
	}
	forget_stray(tid);
	int rc = 0;
	if (arm && g_src && s->fd < 0 && !s->has_timer && !atomic_load(&g_clock_lost_signal)) {
		rc = g_src->arm(s, tid);
		if (rc < 0) {
			static _Atomic int warned;
			if (!atomic_exchange(&warned, 1)) {
				char msg[160];
				snprintf(msg, sizeof msg, "clock profiling could not be armed on thread %d: %s",
					 (int)tid, strerror(-rc));
				log_event_text("warning", msg);
			}
		}
	}
	/* Counters are the thread's own, never inherited (counters.c). */
	if (g_ncounters && !atomic_load(&g_clock_lost_signal) && !g_ncounters_off)
		counters_arm(s, tid);
	return rc;
}

/* Every thread's clock and counter sampling stops for good: every counter
 * disabled, every timer disarmed, no thread armed from then on, and a
 * sample already queued for this thread or the process taken off the
 * queue.  Called with g_reg_lock held; returns with it released.  Runs
 * like a signal handler (clock_call_in) or in normal context. */
static void stop_sampling(void)
{
	atomic_store(&g_clock_lost_signal, 1);
	struct itimerspec off;
	memset(&off, 0, sizeof off);
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		struct thread_slot *s = &g_slots[i];
		if (!atomic_load(&s->tid))
			continue;
		/* What a raw clone task holds in a descriptor table or
		 * process of its own cannot be reached from here. */
		if (s->fd >= 0 && !s->foreign_fds && perf_fd_ours(s->fd, s->perf_id))
			ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
		counters_ioctl(s, PERF_EVENT_IOC_DISABLE);
		if (s->has_timer && !s->own_process)
			sonde_sys6(SYS_timer_settime, (long)s->timer, 0, (long)&off, 0, 0, 0);
	}
	reg_unlock();
	uint64_t set = 1ull << (g_sig - 1);
	struct timespec zero = { 0, 0 };
	for (int i = 0; i < 64; i++)
		if (sonde_sys6(SYS_rt_sigtimedwait, (long)&set, 0, (long)&zero, 8, 0, 0) != g_sig)
			break;
}

/* "N.NNN s into the run", for log.xml.  Async-signal-safe. */
static void xb_run_time(struct xbuf *b)
{
	uint64_t ms = (now_ns() - g_col.start_ns) / 1000000ull;
	xb_u64(b, ms / 1000);
	char frac[5] = { '.', (char)('0' + ms % 1000 / 100), (char)('0' + ms % 100 / 10), (char)('0' + ms % 10), 0 };
	xb_str(b, frac);
	xb_str(b, " s into the run");
}

/* A seccomp filter is about to be installed (interpose.c): when it
 * refuses a system call that every sample needs (the handler's return,
 * rt_sigreturn; finding its thread, gettid; weighing the sample, the
 * thread's CPU clock), sampling stops now, before the filter can kill the
 * target at the next sample.  Counter samples need their counter's value
 * too (ioctl and read): without them counters stop.  Normal context. */
void clock_filter_prepare(void)
{
	if ((!g_src && !g_ncounters) || atomic_load(&g_clock_lost_signal) || !atomic_load(&g_col.active))
		return;
	const char *need = NULL;
	if (!sysgate_would_allow6(SYS_rt_sigreturn, 0, 0, 0, 0, 0, 0))
		need = "rt_sigreturn";
	else if (!sysgate_would_allow6(SYS_gettid, 0, 0, 0, 0, 0, 0))
		need = "gettid";
	else if (!sysgate_would_allow6(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, 0, 0, 0, 0, 0))
		need = "clock_gettime";
	if (!need && g_ncounters &&
	    (!sysgate_would_allow6(SYS_ioctl, 0, (long)PERF_EVENT_IOC_ID, 0, 0, 0, 0) ||
	     !sysgate_would_allow6(SYS_read, 0, 0, 8, 0, 0, 0))) {
		/* Clock samples can go on; counter samples cannot be weighed:
		 * the counters stop (their signals would be samples lost). */
		reg_lock();
		for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++)
			if (atomic_load(&g_slots[i].tid))
				counters_ioctl(&g_slots[i], PERF_EVENT_IOC_DISABLE);
		g_ncounters_off = 1;
		reg_unlock();
		log_event_text("warning", "the target's seccomp filter refuses reading a counter (ioctl or read): "
					  "counter overflow profiling stopped before the filter took effect");
	}
	if (!need)
		return;
	reg_lock();
	stop_sampling();
	char msg[400];
	struct xbuf b;
	xb_init(&b, msg, sizeof msg - 1);
	xb_str(&b, "the target's seccomp filter refuses ");
	xb_str(&b, need);
	xb_str(&b, ", which every sample needs: sampling stopped ");
	xb_run_time(&b);
	xb_str(&b, ", before the filter took effect; the profile ends there");
	msg[b.len < sizeof msg ? b.len : sizeof msg - 1] = 0;
	log_event_text("warning", msg);
}

/* Clock profiling when the profiling signal's action is no longer sonde's.
 * Every libc entry that sets an action goes through sonde's interposers,
 * and so does syscall(SYS_rt_sigaction, ...) (interpose.c), but a bare
 * syscall instruction (inline assembly, a runtime's own system-call
 * layer, a statically linked helper) replaces it unseen; typically to
 * reset every action to SIG_DFL, whose SIGTRAP or real-time signal kills
 * the target at its next sample.  That cannot be prevented short of a
 * seccomp filter or a tracer, so it is detected: `sonde collect` reads
 * the signals the process catches (SigCgt in /proc/PID/status) every 50
 * ms, outside the target, and when the profiling signal is no longer
 * among them it calls clock_call_in(SONDE_CALL_LOST) in the target
 * (cmd/collect_watch.c says how).  This stops clock profiling (every
 * counter is disabled, every timer disarmed, a sample signal already
 * pending is taken off the queue) and says so in log.xml.  The window
 * that remains is the time from the reset to the check: a sample due in
 * it (one interval of a thread's CPU time) still kills the target.
 * Returns 0, or -EBUSY when the registry lock is held (by the very thread
 * sonde collect interrupted: it tries again a moment later).  Runs like a
 * signal handler, at any point of the target's thread. */
static int clock_stop_lost(void)
{
	if (!g_src || atomic_load(&g_clock_lost_signal) || !atomic_load(&g_col.active) || g_col.pid != getpid())
		return 0;
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } cur;
	if (sonde_sys6(SYS_rt_sigaction, g_sig, 0, (long)&cur, 8, 0, 0) < 0 ||
	    cur.handler == (void *)clock_entry)
		return 0;
	if (atomic_exchange_explicit(&g_reg_lock, 1, memory_order_acquire))
		return -EBUSY;
	stop_sampling();
	char msg[400];
	struct xbuf b;
	xb_init(&b, msg, sizeof msg - 1);
	xb_str(&b, "the action of signal ");
	xb_u64(&b, (uint64_t)g_sig);
	xb_str(&b, ", which sonde samples with, was replaced by a bare rt_sigaction system call (handler ");
	xb_hex(&b, (uint64_t)(uintptr_t)cur.handler);
	xb_str(&b, "); clock profiling stopped ");
	xb_run_time(&b);
	xb_str(&b, " so that its next sample would not kill the target; the profile ends there");
	msg[b.len < sizeof msg ? b.len : sizeof msg - 1] = 0;
	log_event_text("warning", msg);
	return 0;
}
static void account_end_own(uint64_t cpu);

/* The handler records nothing on this thread until samples_release: a
 * sample that arrives meanwhile is skipped, its time the next write's.
 * For code that reads the thread's clock before it masks the signal: a
 * sample between the two would take the time up to it (a routine's last
 * stretch) to the collector's stack, which views show as its caller's
 * (start_thread's, 1.85% of a run of 200 short threads). */
static int samples_hold(void)
{
	int was = t_state.in_trace;
	t_state.in_trace = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static void samples_release(int was)
{
	atomic_signal_fence(memory_order_seq_cst);
	t_state.in_trace = was;
}

/* Returns the number of registered threads left.  The calling thread's
 * own: the collector's time up to its thread_end is <Collector>'s. */
static int unregister_thread(pid_t tid, int record)
{
	int was = samples_hold(); /* a sample already queued records nothing */
	dfile_make_room(g_profile);
	reg_lock();
	struct thread_slot *s = slot_by_tid(tid);
	if (s) {
		g_nlive--;
		atomic_store(&g_dfile_writers, g_nlive);
		if (g_src)
			g_src->disarm(s);
		counters_disarm(s);
		if (record) {
			uint64_t cpu = thread_cpu_ns(tid);
			if (tid == t_state.tid)
				account_end_own(cpu);
			record_thread_end(s, cpu);
		}
		slot_free(s);
	}
	samples_release(was);
	int left = g_nlive;
	reg_unlock();
	return left;
}

static void key_destructor(void *v)
{
	(void)v;
	/* every module's thread end, this one's last (the modules after it
	 * run theirs while the thread is still registered) */
	cmod_thread_end();
}

static int check_counters(void);

static int check_due(void)
{
	static _Atomic uint64_t last;
	uint64_t now = now_ns(), prev = atomic_load_explicit(&last, memory_order_relaxed);
	return now - prev >= 10000000ull && atomic_compare_exchange_strong(&last, &prev, now);
}

void clock_thread_begin(void)
{
	struct tstate *ts = &t_state;
	ts->tid = sys_gettid();
	pthread_attr_t attr;
	__sonde_quiet++; /* pthread_getattr_np allocates: not the target's */
	/* Under the target's seccomp filter, only if the filter allows what
	 * it calls (the CPU affinity; for the initial thread /proc/self/maps
	 * and the stack limit); else the bounds stay unknown and the
	 * unwinder probes. */
	int may = !sysgate_active() || (sysgate_may(SYS_sched_getaffinity) && sysgate_may(SYS_openat) &&
					sysgate_may(SYS_read) && sysgate_may(SYS_close) && sysgate_may(SYS_fstat) &&
					sysgate_may(SYS_prlimit64) && sysgate_may(SYS_mmap) && sysgate_may(SYS_munmap) &&
					sysgate_may(SYS_brk));
	if (may && pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			ts->stack_lo = (uintptr_t)addr;
			ts->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	__sonde_quiet--;
	if (!atomic_load(&g_col.active) && g_profile == NULL)
		return;
	stacks_thread_begin();
	pthread_setspecific(g_key, (void *)1);
	/* A starting thread checks (at most every 10 ms) that the target has
	 * not closed the other threads' counters: sonde collect notices only
	 * a process that takes no sample at all. */
	if (check_due())
		check_counters();
	register_thread(ts->tid, 1);
}

/* The calling thread's stack from its caller outward, sonde's own frames
 * left out: pcs + *skip, n frames (0: none).  Normal context. */
static int own_stack(uint64_t *pcs, int max, unsigned *flags, int *skip)
{
	struct tstate *ts = &t_state;
	ucontext_t uc;
	memset(&uc, 0, sizeof uc); /* a getcontext without its system call */
	sonde_capture_regs(uc.uc_mcontext.gregs);
	int n = uw_backtrace(&uc, ts->stack_lo, ts->stack_hi, pcs, max, flags);
	int k = 0;
	while (k < n && trace_own_pc(pcs[k] & ~SONDE_PC_EXACT))
		k++;
	if (k == n) /* all sonde's: keep them rather than lose the time */
		k = 0;
	else if (k)
		pcs[k] &= ~SONDE_PC_EXACT; /* a return address now */
	*skip = k;
	return n - k;
}

/* Record the calling thread's CPU time since its last sample as one
 * sample in state (a state of CPU samples).  At a thread's end (tail: all
 * of a thread shorter than the interval, which the counter never
 * signalled), so that its recorded time is its real CPU time: where the
 * time went is unknown, and it is charged to the thread's start routine
 * when the trampoline noted it, else to the current stack.  At a runtime's
 * change of state (__sonde_trace_clock_flush), to the current stack.
 * Normal context: the profiling signal is blocked so the handler cannot
 * interleave its own packet in this thread's block. */
static void clock_flush_split(int tail, uint16_t state, uint16_t before, uint64_t begin_ns, uint64_t leaf);

static void clock_flush(int tail, uint16_t state)
{
	clock_flush_split(tail, state, state, 0, 0);
}

/* The same, for a change of state from `before` to `state` at begin_ns
 * (CLOCK_MONOTONIC; 0: all of it is state's): the CPU time since the
 * thread's last sample is split there, by the wall time (the thread ran
 * until the change: what it did before is at most that long), or when the
 * time of the last sample is not known, by the wall time since the change
 * (what it did after).  leaf, when not 0, is the function the stack is
 * in below the caller (one that has returned). */
/* Writing the calling thread's packets in normal context: the profiling
 * signal is kept out so that the handler cannot interleave its own packet
 * in this thread's block.  guard_enter returns -1 when nothing is to be
 * recorded now. */
struct guard {
	sigset_t old;
	int masked, was, saved_errno;
};

static int guard_enter(struct guard *g)
{
	struct tstate *ts = &t_state;
	if (!g_profile || !atomic_load(&g_col.active))
		return -1;
	if (g_col.stop_ns && now_ns() > g_col.stop_ns)
		return -1; /* past -t: the time since the last sample is not ours */
	if (atomic_load(&g_clock_lost_signal))
		return -1; /* sampling stopped (clock_stop_lost, a seccomp
			      filter): the profile ends there, not at this stack */
	/* called from interposers after the real call: its errno stays */
	g->saved_errno = errno;
	/* A short thread's whole time may be this one packet: its block must
	 * not be lost to a growth another thread has not finished (normal
	 * context: this may wait for it). */
	dfile_make_room(g_profile);
	dfile_make_room(stacks_dfile());
	/* Under a seccomp filter that refuses rt_sigprocmask, the handler
	 * is kept out by in_trace instead: it then records nothing, and its
	 * time goes to the thread's next sample, as in a traced call. */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, g_sig);
	g->masked = sysgate_may(SYS_rt_sigprocmask);
	g->was = ts->in_trace;
	if (g->masked)
		real_pthread_sigmask_call(SIG_BLOCK, &block, &g->old);
	ts->in_trace = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return 0;
}

static void settle(struct tstate *ts, uint16_t state);

/* own: what the collector did after its last clock read, unmasking the
 * signal included, is its own (settle), in `state` (where the thread is
 * as it leaves); a sample that arrives meanwhile is skipped, its time the
 * next one's. */
static void guard_leave_own(struct guard *g, int own, uint16_t state)
{
	atomic_signal_fence(memory_order_seq_cst);
	if (!own)
		t_state.in_trace = g->was;
	if (g->masked)
		real_pthread_sigmask_call(SIG_SETMASK, &g->old, NULL);
	if (own) {
		settle(&t_state, state);
		atomic_signal_fence(memory_order_seq_cst);
		t_state.in_trace = g->was;
	}
	errno = g->saved_errno;
}

static void clock_flush_split(int tail, uint16_t state, uint16_t before, uint64_t begin_ns, uint64_t leaf)
{
	struct tstate *ts = &t_state;
	struct guard g;
	if (guard_enter(&g) < 0)
		return;
	int wrote = 0;
	struct timespec t;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) {
		uint64_t cpu = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
		if (!clock_paused_skip(ts, cpu) && cpu > ts->last_cpu_ns) {
			uint64_t pcs[64];
			unsigned flags = 0;
			int n = tail ? ts->tail_depth : 0, skip = 0;
			if (n) {
				memcpy(pcs, ts->tail_pcs, (size_t)n * sizeof *pcs);
			} else {
				n = own_stack(pcs, 63, &flags, &skip);
				if (n > 0 && leaf) {
					if (!skip) {
						memmove(pcs + 1, pcs, (size_t)n * sizeof *pcs);
						skip = 1;
					}
					pcs[--skip] = leaf | SONDE_PC_EXACT;
					n++;
				}
			}
			uint64_t weight = cpu - ts->last_cpu_ns, sys = 0, wcpu = 0, now = now_ns();
			struct ms_now ms;
			int have_ms = ms_read(ts, &ms) == 0;
			/* where the time went is unknown here: page faults
			 * since the last sample are what rusage's system
			 * time is given for */
			if (have_ms)
				ms_split(ts, &ms, weight, false, &sys, &wcpu);
			uint64_t head = 0;
			if (begin_ns && begin_ns < now) {
				if (ts->last_wall_ns)
					head = begin_ns > ts->last_wall_ns ? begin_ns - ts->last_wall_ns : 0;
				else
					head = weight > now - begin_ns ? weight - (now - begin_ns) : 0;
				if (head > weight)
					head = weight;
			}
			/* the run-queue delay and the system time go with the
			 * wait: the thread yields and sleeps in it */
			uint64_t sys_w = sys < weight - head ? sys : weight - head, sys_h = sys - sys_w;
			int ok = n > 0;
			if (ok && head)
				ok = clock_write_sample(pcs + skip, n, flags, before, now, head, sys_h, 0) == 0;
			if (ok && weight > head)
				ok = clock_write_sample(pcs + skip, n, flags, state, now, weight - head, sys_w, wcpu) == 0;
			if (ok) {
				ts->last_cpu_ns = cpu;
				ts->last_wall_ns = now;
				if (have_ms)
					ms_commit(ts, &ms, weight, sys);
				wrote = 1;
			}
		}
	}
	/* What it did after its clock read (the stack, the packets: a cold
	 * walk of a new stack is tens of microseconds) is the collector's,
	 * in the state the thread is still in: not the next sample's, which
	 * may be another state's (MPI_Init's return; the caller's own clock
	 * says the call had ended). */
	guard_leave_own(&g, wrote, state);
}

static void clock_thread_tail(void)
{
	clock_flush(1, SONDE_STATE_CPU);
}

/* ---- time no sample places, and the collector's own --------------------
 *
 * A thread's first sample would carry its time since its start (for the
 * initial thread: exec, the dynamic loader, the constructors, the
 * collector's own start), and its end, the time since its last sample,
 * would land where the collector ends it (glibc's _dl_call_fini for a
 * process, a key destructor for a thread).  Instead the time is placed
 * where it is known to have been spent, and named where it is not
 * (doc/sonde-collect.md, "Starts and ends"):
 *
 *   <Process start>, <Thread start>  before the collector began its work
 *				       at the start (the initial thread: up
 *				       to its constructor; then also what no
 *				       sample placed until main was called)
 *   <Collector>		       the collector's own: its start, its
 *				       handler's time after its clock reads,
 *				       its end up to the thread_end event's
 *				       CPU time
 *   ROUTINE -> <After last sample>    from the last sample to the return of
 *				       the routine that ran the whole time
 *				       (a thread's start routine, main): in
 *				       it, but in which of its callees no
 *				       sample says
 *   <Thread end>, <Process end>       after that routine returned: the
 *				       runtime's end (key destructors, exit
 *				       handlers, the destructors) up to the
 *				       collector's end
 *
 * Totals stay the kernel's: every nanosecond of a thread's CPU clock up to
 * its thread_end event is in exactly one sample. */

_Atomic uint64_t g_own_start_ns, g_own_end_ns;

/* What the collector's start in this process found (clock_mark_begin):
 * the calling thread's CPU clock and accounting. */
static struct {
	int have, have_ms, used;
	uint64_t cpu_ns;
	struct ms_now ms;
} g_begin;

static uint64_t self_cpu_ns(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) < 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void clock_mark_begin(void)
{
	g_begin.used = 0;
	g_begin.cpu_ns = self_cpu_ns();
	g_begin.have = g_begin.cpu_ns != 0;
	g_begin.have_ms = ms_read(&t_state, &g_begin.ms) == 0;
}

/* Inside a guard, at its end: what the collector did since its clock
 * read (its writes, its reads of the thread's accounting) is its own, for
 * the next <Collector> sample. */
static void settle(struct tstate *ts, uint16_t state)
{
	uint64_t cpu = self_cpu_ns(), now = now_ns();
	if (atomic_load_explicit(&__sonde_paused, memory_order_acquire) || (g_col.stop_ns && now > g_col.stop_ns)) {
		if (cpu > ts->last_cpu_ns) /* not recorded: nobody's */
			ts->last_cpu_ns = cpu;
		return;
	}
	if (ts->own_ns && ts->own_state != state)
		clock_own_write(ts, now);
	ts->own_state = state;
	if (cpu > ts->last_cpu_ns) {
		ts->own_ns += cpu - ts->last_cpu_ns;
		ts->own_at = now;
		ts->last_cpu_ns = cpu;
	}
}

/* The calling thread's time before cpu0 (when the collector began its
 * work at the thread's start; ms0 its accounting then, NULL unknown) as
 * `pseudo` alone, or at the current stack when pseudo is 0; and from cpu0
 * to now as <Collector>.  Its first sample then holds what the target did
 * after.  Normal context, the thread registered. */
static void account_start(uint32_t pseudo, uint64_t cpu0, const struct ms_now *ms0)
{
	struct tstate *ts = &t_state;
	struct guard g;
	if (!ts->tid || atomic_load(&g_from_now) || guard_enter(&g) < 0)
		return;
	uint64_t cpu = self_cpu_ns(), now = now_ns();
	struct ms_now ms;
	int have_ms = ms_read(ts, &ms) == 0;
	if (cpu && !clock_paused_skip(ts, cpu) && cpu > ts->last_cpu_ns) {
		if (cpu0 < ts->last_cpu_ns || cpu0 > cpu)
			cpu0 = ts->last_cpu_ns;
		uint64_t before = cpu0 - ts->last_cpu_ns, own = cpu - cpu0, sys0 = 0, sys1 = 0, wait0 = 0, wait1 = 0;
		/* the system time rusage gave each part (exec's page faults
		 * are System CPU of <Process start>, not of main's callee) */
		if (have_ms && ms0) {
			uint64_t at = ms0->stime_ns > ts->ms_stime_ns ? ms0->stime_ns : ts->ms_stime_ns;
			sys0 = at - ts->ms_stime_ns;
			sys1 = ms.stime_ns > at ? ms.stime_ns - at : 0;
		}
		/* and the run-queue delay (Wait CPU): a new thread's wait for
		 * its first slice, a process's starts under load, are in the
		 * kernel's count from the task's start, and the rebase below
		 * would drop them (a main thread 24-32 ms short with both
		 * CPUs busy) */
		if (have_ms && ms.have_rd) {
			uint64_t at = ms0 && ms0->have_rd && ms0->rdelay_ns > ts->ms_rdelay_ns ? ms0->rdelay_ns
											   : ts->ms_rdelay_ns;
			wait0 = at - ts->ms_rdelay_ns;
			wait1 = ms.rdelay_ns > at ? ms.rdelay_ns - at : 0;
			if (!before) /* one part only: all its */
				wait1 += wait0, wait0 = 0;
			else if (!own)
				wait0 += wait1, wait1 = 0;
		}
		int ok = 1;
		if (before) {
			if (pseudo)
				ok = clock_write_pseudo(pseudo, NULL, 0, now, before, sys0, wait0) == 0;
			else {
				uint64_t pcs[64];
				unsigned flags = 0;
				int skip = 0, n = own_stack(pcs, 63, &flags, &skip);
				ok = n > 0 && clock_write_sample(pcs + skip, n, flags, SONDE_STATE_CPU, now, before,
								 sys0 < before ? sys0 : before, wait0) == 0;
			}
		}
		if (ok && own && clock_write_pseudo(SONDE_PSEUDO_COLLECTOR, NULL, 0, now, own, sys1, wait1) == 0)
			atomic_fetch_add(&g_own_start_ns, own);
		if (ok) {
			ts->last_cpu_ns = cpu;
			ts->last_wall_ns = now;
			if (have_ms)
				ms_rebase(ts, &ms);
		}
	}
	guard_leave_own(&g, 1, SONDE_STATE_CPU);
}

/* The calling thread's time since its last sample, at `pseudo` alone,
 * or (pseudo 0) under its routine as <After last sample>; then the
 * collector's time not yet written.  Normal context. */
static void account_since_last(uint32_t pseudo)
{
	struct tstate *ts = &t_state;
	struct guard g;
	/* read first: the guard's work (a new thread's first block, the
	 * signal mask) is the collector's */
	int was = samples_hold();
	uint64_t cpu = self_cpu_ns(), now = now_ns();
	if (!ts->tid || guard_enter(&g) < 0) {
		samples_release(was);
		return;
	}
	g.was = was;
	if (cpu && !clock_paused_skip(ts, cpu) && cpu > ts->last_cpu_ns) {
		uint64_t weight = cpu - ts->last_cpu_ns, sys = 0, wcpu = 0;
		struct ms_now ms;
		int have_ms = ms_read(ts, &ms) == 0;
		if (have_ms)
			ms_split(ts, &ms, weight, false, &sys, &wcpu);
		/* Under the routine, the best estimate of where the time
		 * went is where the last sample found the thread (as the
		 * first sample of a thread stands for the interval before
		 * it), named as an estimate; with no sample in the routine,
		 * the routine itself (doc/sonde-collect.md says why). */
		int ok = -1;
		if (pseudo)
			ok = clock_write_pseudo(pseudo, NULL, 0, now, weight, sys, wcpu);
		else if (ts->last_stack_id)
			ok = clock_write_below(ts->last_stack_id, SONDE_PSEUDO_AFTER_LAST, now, weight, sys, wcpu);
		if (ok < 0 && !pseudo)
			ok = clock_write_pseudo(SONDE_PSEUDO_AFTER_LAST, ts->tail_pcs, ts->tail_depth, now, weight,
						sys, wcpu);
		if (ok == 0) {
			ts->last_cpu_ns = cpu;
			ts->last_wall_ns = now;
			if (have_ms)
				ms_commit(ts, &ms, weight, sys);
		}
	}
	clock_own_write(ts, now);
	guard_leave_own(&g, 1, SONDE_STATE_CPU);
}

/* A thread's end: its time since the last sample (under its routine while
 * that runs: pthread_exit, or exit called in it; after it returned, the
 * runtime's end; a thread whose routine the collector did not see, at
 * the routine noted or the current stack, as before). */
static void account_end(uint32_t after)
{
	int r = t_state.routine;
	if (r == ROUTINE_LIVE)
		account_since_last(0);
	else if (r == ROUTINE_DONE)
		account_since_last(after);
	else
		clock_thread_tail();
}

/* The collector's end on the calling thread, up to cpu (the CPU time its
 * thread_end event gives): its time since the last packet, with what the
 * handler left, as <Collector>.  The sampling signal must already be
 * kept out (disarmed, in_trace). */
static void account_end_own(uint64_t cpu)
{
	struct tstate *ts = &t_state;
	if (!g_profile || cpu == UINT64_MAX || atomic_load(&g_clock_lost_signal))
		return;
	uint64_t now = now_ns();
	if (ts->own_ns && ts->own_state != SONDE_STATE_CPU)
		clock_own_write(ts, now);
	ts->own_state = SONDE_STATE_CPU;
	if (g_col.stop_ns && now > g_col.stop_ns)
		ts->own_at = ts->own_at ? ts->own_at : g_col.stop_ns; /* past -t: only what was spent before */
	else if (cpu > ts->last_cpu_ns && !clock_paused_skip(ts, cpu)) {
		atomic_fetch_add(&g_own_end_ns, cpu - ts->last_cpu_ns);
		ts->own_ns += cpu - ts->last_cpu_ns;
		ts->own_at = now;
		ts->last_cpu_ns = cpu;
	}
	clock_own_write(ts, now);
}

/* The initial thread: the collector has started (its begin marked by
 * clock_mark_begin). */
void clock_process_started(void)
{
	if (g_begin.used) /* the rest of the start, since the clock's */
		account_start(0, t_state.last_cpu_ns, NULL);
	g_begin.have = g_begin.used = 0;
}

/* interpose.c's thread_start, before and after the modules' thread
 * starts, and around the start routine. */
static TLS uint64_t t_entry_cpu;
static TLS struct ms_now t_entry_ms;
static TLS int t_entry_have_ms;

void clock_thread_entry(void)
{
	t_entry_cpu = self_cpu_ns();
	t_entry_have_ms = ms_read(&t_state, &t_entry_ms) == 0;
}

void clock_thread_run(void)
{
	if (!t_state.tid || g_col.pid != getpid())
		return;
	account_start(SONDE_PSEUDO_THREAD_START, t_entry_cpu, t_entry_have_ms ? &t_entry_ms : NULL);
	t_state.last_stack_id = 0;
	if (t_state.tail_depth)
		t_state.routine = ROUTINE_LIVE;
}

void clock_routine_returned(void)
{
	if (!t_state.tid || t_state.routine != ROUTINE_LIVE)
		return;
	int was = samples_hold(); /* from the routine's return: getpid is a system call */
	if (g_col.pid == getpid()) {
		account_since_last(0);
		t_state.routine = ROUTINE_DONE;
	}
	samples_release(was);
}

/* The initial thread calls main (interpose.c's __libc_start_main): what
 * no sample placed since the collector's start (the constructors after
 * it) is the process's start; main's tail is main's. */
void clock_main_run(void *fn)
{
	struct tstate *ts = &t_state;
	if (!ts->tid || g_col.pid != getpid())
		return;
	uint64_t pcs[16];
	unsigned flags = 0;
	int skip = 0, n = own_stack(pcs, 15, &flags, &skip);
	if (n > 0 && !(flags & SONDE_STACK_INCOMPLETE)) {
		if (n > 7)
			n = 7;
		ts->tail_pcs[0] = (uint64_t)(uintptr_t)fn | SONDE_PC_EXACT;
		memcpy(ts->tail_pcs + 1, pcs + skip, (size_t)n * sizeof *pcs);
		ts->tail_depth = n + 1;
	}
	account_since_last(SONDE_PSEUDO_PROCESS_START);
	ts->last_stack_id = 0;
	if (ts->tail_depth)
		ts->routine = ROUTINE_LIVE;
}

/* A tracing library's mark of its thread's change of state (tracer.h):
 * the CPU time since the thread's last sample is the state's that is
 * ending, not the next sample's. */
EXPORT void __sonde_trace_clock_flush(int state)
{
	const struct sonde_state_desc *d = sonde_state_desc((unsigned)state);

	if (!t_state.tid || g_col.pid != getpid())
		return;
	clock_flush(0, d && (d->flags & SONDE_STATEF_CPU) ? (uint16_t)state : SONDE_STATE_CPU);
}

/* omp.c: a long OpenMP wait in `wait` that began at begin_ns ends, the
 * thread having been in `before` until then (clock_internal.h). */
void clock_wait_end(uint16_t before, uint16_t wait, uint64_t begin_ns, const void *leaf)
{
	if (!t_state.tid || g_col.pid != getpid())
		return;
	clock_flush_split(0, wait, before, begin_ns, (uint64_t)(uintptr_t)leaf);
}

void clock_wait_mark(uint16_t wait, uint64_t now_wall)
{
	struct tstate *ts = &t_state;
	struct timespec t;
	int saved = errno;
	if (ts->tid && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) {
		ts->wait_end_state = wait;
		ts->wait_end_wall = now_wall;
		/* the handler reads the state and wall clock after the CPU
		 * clock: they are in place before it is */
		atomic_signal_fence(memory_order_seq_cst);
		ts->wait_end_cpu = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	}
	errno = saved;
}

void clock_thread_start_routine(void *fn)
{
	struct tstate *ts = &t_state;
	ucontext_t uc;
	unsigned flags = 0;
	memset(&uc, 0, sizeof uc); /* a getcontext without its system call */
	sonde_capture_regs(uc.uc_mcontext.gregs);
	int n = uw_backtrace(&uc, ts->stack_lo, ts->stack_hi, ts->tail_pcs, 8, &flags);
	/* Frame 0 is this function, frame 1 the trampoline: replace them by
	 * the start routine itself, called from where the trampoline was. */
	if (n >= 3 && !(flags & SONDE_STACK_INCOMPLETE)) {
		ts->tail_pcs[1] = (uint64_t)(uintptr_t)fn | SONDE_PC_EXACT;
		memmove(ts->tail_pcs, ts->tail_pcs + 1, (size_t)(n - 1) * sizeof ts->tail_pcs[0]);
		ts->tail_depth = n - 1;
	}
}

static _Atomic int g_detached; /* an attached recording ended (clock_detach_signal) */

void clock_thread_end(void)
{
	if (!t_state.tid || g_col.pid != getpid())
		return;
	/* after an attached recording's end, its threads' key destructors:
	 * the recording is closed, the thread's stack cache is all to free */
	if (atomic_load(&g_detached)) {
		stacks_thread_end();
		return;
	}
	account_end(SONDE_PSEUDO_THREAD_END);
	int last = unregister_thread(t_state.tid, 1) == 0;
	stacks_thread_end();
	if (last)
		collector_threads_quit();
}

void clock_adopt_existing_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	pid_t self = sys_gettid();
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == self)
			continue;
		register_thread(tid, 1);
		n++;
	}
	closedir(d);
	if (n) {
		char msg[128];
		snprintf(msg, sizeof msg, "%d thread(s) existed before the collector started; adopted", n);
		log_event_text("info", msg);
	}
}

/* ---- tasks made by raw clone (rawclone.c has the wrapper) ---- */

/* In a task made by clone(CLONE_VM ...) with `flags`, on its private
 * thread pointer `tp` (so t_state, errno and sonde's data blocks are its
 * own): register it, arm its sampling source, and note its start
 * routine for its tail.  Uses no pthread call that reads
 * the thread descriptor, no malloc and no stdio: the task may share its
 * creator's thread pointer, and the creator may hold the malloc lock. */
void clock_raw_begin(int flags, void *fn, char *tp)
{
	struct tstate *ts = &t_state;
	ts->tid = sys_gettid();
	ts->stack_lo = ts->stack_hi = 0; /* unknown: the unwinder probes */
	stacks_thread_forget();
	if (!atomic_load(&g_col.active) || !g_profile || !g_src)
		return;
	reg_lock();
	struct thread_slot *s = slot_by_tid(ts->tid);
	if (!s)
		s = slot_take(ts->tid);
	if (s) {
		s->fd = -1;
		s->has_timer = 0;
		s->start_ns = now_ns();
		s->reg_cpu_ns = thread_cpu_ns(ts->tid);
		atomic_store(&s->resume_gen, 0);
		s->own_process = !(flags & CLONE_THREAD);
		s->foreign_fds = !(flags & CLONE_FILES);
		atomic_store_explicit(&s->raw_tp, tp, memory_order_release);
	}
	reg_unlock();
	forget_stray(ts->tid);
	if (!s) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			log_event_text("warning", "more than 16384 live threads; extra threads are not profiled");
		return;
	}
	if (!atomic_load(&g_clock_lost_signal) && g_src->arm(s, ts->tid) < 0) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			log_event_text("warning", "clock profiling could not be armed on a task made by "
						  "clone(CLONE_VM); it is not sampled");
	}
	clock_thread_start_routine(fn);
}

/* The same task, its start routine returned, again on its private thread
 * pointer: record its tail and end, and release what it armed. */
void clock_raw_end(void)
{
	pid_t tid = t_state.tid;
	if (!tid)
		return;
	clock_thread_tail();
	reg_lock();
	struct thread_slot *s = slot_by_tid(tid);
	if (s && atomic_load(&s->raw_tp)) {
		if (g_src)
			g_src->disarm(s);
		record_thread_end(s, slot_cpu_ns(s));
		slot_free(s);
	}
	reg_unlock();
	t_state.tid = 0;
}

/* A registered task's samples before it registered are not strays. */
static void forget_stray(pid_t tid)
{
	for (int i = 0; i < MAX_STRAYS; i++)
		if (atomic_load_explicit(&g_strays[i].tid, memory_order_relaxed) == tid) {
			atomic_store(&g_strays[i].n, 0);
			atomic_store(&g_strays[i].tid, 0);
		}
}

/* The process's CPU time that none of its registered threads ran: a
 * task made by a bare clone or clone3 system call, which sonde cannot
 * wrap, has no counter and is never sampled.  Each thread runs a little
 * after it records its end (its exit): 100 us a thread are allowed for
 * that.  Not said when a registered task's end was not readable (a raw
 * clone task that ended by system call). */
static void report_unseen(void)
{
	uint64_t cpu = process_cpu_now(), seen = atomic_load(&g_seen_cpu_ns);
	uint64_t allow = (uint64_t)atomic_load(&g_seen_threads) * 100000ull;
	if (!g_src || g_src == &g_none_source || !g_cs.interval_ns || !cpu || !g_process_cpu0 ||
	    atomic_load(&g_seen_unknown) || cpu < g_process_cpu0)
		return;
	uint64_t ran = cpu - g_process_cpu0, unseen = ran > seen + allow ? ran - seen - allow : 0;
	if (unseen < 20 * g_cs.interval_ns || unseen < ran / 20)
		return;
	char msg[300];
	snprintf(msg, sizeof msg,
		 "about %llu ms of the process's CPU time ran unsampled, in tasks sonde did not see made "
		 "(a bare clone or clone3 system call?)",
		 (unsigned long long)(unseen / 1000000ull));
	log_event_text("warning", msg);
}

static void report_strays(void)
{
	uint64_t skipped = atomic_exchange(&g_sig_stack_skips, 0);
	if (skipped) {
		char msg[200];
		snprintf(msg, sizeof msg,
			 "%llu samples were skipped (their time went to the next sample): the thread had no "
			 "signal stack of sonde's (it could not be mapped)",
			 (unsigned long long)skipped);
		log_event_text("warning", msg);
	}
	for (int i = 0; i < MAX_STRAYS; i++) {
		pid_t tid = atomic_load(&g_strays[i].tid);
		uint32_t n = atomic_load(&g_strays[i].n);
		atomic_store(&g_strays[i].n, 0);
		atomic_store(&g_strays[i].tid, 0);
		/* 20 intervals of CPU time: more than a thread spends
		 * between its start and its registration. */
		if (!tid || n < 20)
			continue;
		char msg[300];
		snprintf(msg, sizeof msg,
			 "task %d ran about %llu ms of CPU time unsampled: it was not made through a call "
			 "sonde sees (a bare clone or clone3 system call?)",
			 (int)tid, (unsigned long long)(n * g_cs.interval_ns / 1000000ull));
		log_event_text("warning", msg);
	}
}

/* The process's tracer (TracerPid in /proc/self/status: a debugger,
 * strace, rr), 0 when none or unknown.  A debugger stops the target at
 * every signal it does not pass silently: at every SIGTRAP, which it
 * cannot pass (its breakpoints and steps are SIGTRAP too), and at every
 * real-time signal by default.  No stdio: the target's allocator is not
 * to see the collector's reads. */
static pid_t tracer_pid(void)
{
	char buf[1024];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strstr(buf, "\nTracerPid:");
	return p ? (pid_t)atol(p + 11) : 0;
}

/* The sampling signal SONDE_SIGNAL names: a real-time signal by number,
 * or SIGURG (23, URG, SIGURG); 0 when unset, -1 when it names another. */
static int env_signal(void)
{
	const char *v = sonde_getenv(SONDE_ENV_SIGNAL);
	if (!v)
		return 0;
	if (!strcmp(v, "URG") || !strcmp(v, "SIGURG"))
		return SIGURG;
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || (n != SIGURG && (n < SIGRTMIN || n > SIGRTMAX)))
		return -1;
	return (int)n;
}

/* "SIGURG", or gdb's name of a real-time signal ("SIG61"), for the
 * `handle` line log.xml names. */
static void gdb_signal_name(int sig, char *buf, size_t len)
{
	if (sig == SIGURG)
		snprintf(buf, len, "SIGURG");
	else if (sig == SIGTRAP)
		snprintf(buf, len, "SIGTRAP");
	else
		snprintf(buf, len, "SIG%d", sig);
}

/* Say in log.xml how sampling goes with a tracer attached at the start. */
static void note_tracer(pid_t tracer, int sig, int why_rt)
{
	char comm[64] = "?", path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)tracer);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof comm - 1);
		close(fd);
		comm[n > 0 ? n : 0] = 0;
		char *nl = strchr(comm, '\n');
		if (nl)
			*nl = 0;
	}
	char msg[400], name[16];
	gdb_signal_name(sig, name, sizeof name);
	if (sig == SIGURG)
		snprintf(msg, sizeof msg,
			 "traced by process %d (%s) from the start: sonde samples with SIGURG, which debuggers "
			 "pass to the program without stopping (gdb: nostop noprint pass), not with SIGTRAP or "
			 "a real-time signal",
			 (int)tracer, comm);
	else
		snprintf(msg, sizeof msg,
			 "traced by process %d (%s) from the start, and sonde samples with signal %d (%s): a "
			 "debugger stops the program at every sample; in gdb: handle %s nostop noprint pass",
			 (int)tracer, comm, sig, why_rt ? "the -l or -y signal is SIGURG" : SONDE_ENV_SIGNAL, name);
	log_event_text(sig == SIGURG ? "info" : "warning", msg);
}

/* Make `src`, signalling with `sig`, the sample source: install the
 * handler, then check that the source can be armed on this thread.  On
 * failure the signal's previous action is restored.  Returns 0 or -errno. */
static int try_source(struct source *src, int sig)
{
	g_sig = sig;
	g_sigtrap_source_active = src == &g_sigtrap_source;
	g_timer_source_active = src == &g_timer_source;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = clock_entry;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* nothing interrupts a sample half-written */
	if (real_sigaction_call(sig, &sa, &old) < 0)
		return -errno;
	if (src != &g_timer_source) {
		struct thread_slot probe = { .fd = -1 };
		int rc = src->arm(&probe, 0);
		if (rc < 0) {
			real_sigaction_call(sig, &old, NULL);
			return rc;
		}
		src->disarm(&probe);
	}
	/* A handler installed before us (another library's constructor) is
	 * chained like one installed later.  Ours already (a followed fork
	 * child sampling with its parent's signal): the parent's chained
	 * action stands. */
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == clock_entry) {
		/* kept */
	} else if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
		g_chained_action = old;
		atomic_store(&g_chained_set, 1);
	} else {
		atomic_store(&g_chained_set, 0);
	}
	g_src = src;
	return 0;
}

/* In a followed child of fork or clone, once its experiment has started:
 * the child's CPU time so far (the return from fork or clone, and the
 * collector's own start-up there) as one sample at the call of fork or
 * clone, not in the first sample of whatever the child runs next.  The
 * child's clock starts at zero. */
void clock_child_started(void)
{
	if (!g_begin.used)
		clock_thread_tail();
}

/* The CPU-clock time of the calling thread recorded so far (its last
 * sample or tail): do_exec passes it on to the image it execs. */
uint64_t clock_thread_recorded_cpu(void)
{
	return t_state.last_cpu_ns;
}

/* In an image exec'd by a followed process (same pid, SONDE_TARGET_PID):
 * the thread that called exec keeps its CPU clock, whose time up to the
 * exec the previous image recorded in its tail.  Counting from zero would
 * record that time a second time in this image's first sample. */
static void exec_cpu_base(void)
{
	const char *v = sonde_getenv(SONDE_ENV_EXEC_CPU_NS), *pid = sonde_getenv(SONDE_ENV_TARGET_PID);
	if (!v)
		return;
	uint64_t at = strtoull(v, NULL, 10);
	int mine = pid && (pid_t)atol(pid) == getpid();
	unsetenv(SONDE_ENV_EXEC_CPU_NS);
	struct timespec t;
	if (!mine || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
		return;
	uint64_t cpu = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	t_state.last_cpu_ns = at < cpu ? at : cpu;
	t_state.last_wall_ns = 0;
	g_exec_base_ns = t_state.last_cpu_ns;
	/* The states before the exec are the previous image's too. */
	struct ms_now ms;
	if (ms_read(&t_state, &ms) == 0)
		ms_rebase(&t_state, &ms);
}

int clock_start(const struct clock_settings *cs)
{
	g_clk_tck = sysconf(_SC_CLK_TCK);
	g_process_cpu0 = process_cpu_now();
	atomic_store(&g_seen_cpu_ns, 0);
	atomic_store(&g_seen_threads, 0);
	atomic_store(&g_seen_unknown, 0);
	exec_cpu_base();
	g_cs = *cs;
	if (g_cs.depth <= 0 || g_cs.depth > SONDE_MAX_DEPTH_LIMIT)
		g_cs.depth = SONDE_DEFAULT_DEPTH;
	static int have_key; /* clock_start runs again in a followed fork child */
	if (!have_key && pthread_key_create(&g_key, key_destructor) != 0)
		return -1;
	have_key = 1;
	if (counters_parse() < 0) {
		log_event_text("error", "SONDE_COUNTERS is malformed; counter overflow profiling disabled");
		g_ncounters = 0;
	}
	if (!g_cs.interval_ns && !g_ncounters)
		return 0;
	if (g_cs.interval_ns) {
		g_profile = dfile_create(g_col.expdir, sonde_kind_desc(SONDE_KIND_PROFILE)->file, SONDE_KIND_PROFILE);
		if (!g_profile) {
			log_event_text("error", "cannot create the profile data file; clock profiling disabled");
			g_cs.interval_ns = 0;
			if (!g_ncounters)
				return -1;
		}
	}
	/* Intervals of 10 ms and more are coarser than the scheduler tick, so
	 * the tick-driven CPU timers sample them as densely as the perf
	 * counter, at a fraction of its cost (no high-resolution timer to
	 * program per sample and per context switch).  Finer intervals need
	 * the perf counter, delivered as SIGTRAP task work and counting
	 * kernel mode, where the kernel allows both and no debugger is
	 * attached.  Otherwise CPU timers again, not a user-mode-only perf
	 * counter: that one samples more often, but charges every system
	 * call's time to the user code that runs after it (about 1% instead of
	 * 50% for a function that spends half its time in pread), and nothing
	 * available without privilege can split a sample's weight into its
	 * user and system parts any finer than the tick (the kernel's own
	 * utime/stime are tick samples), so the tick is the best resolution
	 * at which kernel time can be placed; the CPU timers place it there.
	 * SONDE_CLOCK_SOURCE=perf|perf-fasync|timer overrides the choice
	 * (perf: SIGTRAP delivery counting the kernel, else user mode only,
	 * else fasync), and SONDE_SIGNAL picks the real-time signal (which
	 * rules out SIGTRAP delivery). */
	int envsig = env_signal();
	int sigenv = envsig != 0;
	int rtsig = envsig > 0 ? envsig : SIGRTMAX - 3;
	/* Traced from the start (`sonde collect gdb --args PROG`, strace,
	 * rr, gdb following sonde collect's child): SIGURG, which gdb passes
	 * to the program silently by default (as it does SIGPROF, SIGALRM,
	 * SIGCHLD, SIGWINCH, SIGIO, SIGVTALRM), with the CPU timers; a
	 * real-time signal would stop the debuggee at every sample.  Not
	 * SIGPROF: the target's own profilers use it.  SIGURG is raised for
	 * out-of-band socket data (F_SETOWN) and by Go's runtime, both
	 * chained to the target's handler like any signal that is not a
	 * sample, and its default action is to ignore: a sample left
	 * queued after sonde's handler is gone does no harm.  Not done for
	 * an untraced target: a standard signal does not queue (the target's
	 * own SIGURG sent while a sample is pending would be merged with
	 * it), and a real-time one or SIGTRAP does. */
	pid_t tracer = tracer_pid();
	g_start_tracer = tracer;
	int rt_why = 0;
	sampling_signals(); /* the sample points' module opens after this one */
	if (tracer && !sigenv) {
		if (g_sp_sample_sig == SIGURG || g_sp_pause_sig == SIGURG)
			rt_why = 1;
		else
			rtsig = SIGURG;
	}
	int prev_sig = g_sig; /* a followed fork child's: its parent's handler */
	struct sigaction prev_chained = g_chained_action;
	int prev_chained_set = atomic_load(&g_chained_set);
	const char *want = sonde_getenv(SONDE_ENV_CLOCK_SOURCE);
	struct {
		struct source *src;
		int kernel; /* with g_sigtrap_source: count kernel mode */
	} order[6];
	memset(order, 0, sizeof order);
	int n = 0;
	int sigtrap_ok = !sigenv && !tracer;
	/* Below 1024 queued signals for the user (defaults scale with
	 * memory and are tens of thousands), the budget was sized on
	 * purpose: sonde's timers would be felt there. */
	struct rlimit rl;
	int sigq_tight = getrlimit(RLIMIT_SIGPENDING, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024;
	if (g_ncounters && sigtrap_ok) {
		/* Counters signal with SIGTRAP (counters.c): the clock's
		 * counter then does too, so that one handler and one signal
		 * serve both. */
		if (g_cs.interval_ns) {
			order[n].src = &g_sigtrap_source, order[n++].kernel = 1;
			order[n].src = &g_sigtrap_source, order[n++].kernel = 0;
		} else {
			order[n++].src = &g_none_source;
		}
	} else if (want && !strcmp(want, "timer")) {
		order[n++].src = &g_timer_source;
	} else if (want && !strcmp(want, "perf-fasync")) {
		order[n++].src = &g_perf_source;
	} else if (want && !strcmp(want, "perf")) {
		if (sigtrap_ok) {
			order[n].src = &g_sigtrap_source, order[n++].kernel = 1;
			order[n].src = &g_sigtrap_source, order[n++].kernel = 0;
		}
		order[n++].src = &g_perf_source;
		order[n++].src = &g_timer_source;
	} else if (sigq_tight) {
		/* A POSIX timer holds one of its user's queued signals
		 * (RLIMIT_SIGPENDING) from timer_create to timer_delete: one
		 * per thread would come out of the target's own budget, and
		 * its sigqueue and timer_create would fail that much sooner.
		 * A perf counter's signal is queued only from the overflow
		 * to its delivery, microseconds later. */
		if (sigtrap_ok) {
			order[n].src = &g_sigtrap_source, order[n++].kernel = 1;
			order[n].src = &g_sigtrap_source, order[n++].kernel = 0;
		}
		order[n++].src = &g_perf_source;
		order[n++].src = &g_timer_source;
	} else {
		/* -k on: kernel stacks come with the counter that counts
		 * kernel mode, whatever the interval */
		if (sigtrap_ok && (g_cs.interval_ns < 10000000ull || g_kstacks))
			order[n].src = &g_sigtrap_source, order[n++].kernel = 1;
		order[n++].src = &g_timer_source;
	}
	if (sigq_tight && (!want || strcmp(want, "timer"))) {
		char msg[240];
		snprintf(msg, sizeof msg,
			 "RLIMIT_SIGPENDING is %llu: POSIX CPU timers would hold one queued signal of the target's "
			 "budget per thread, so a perf counter is preferred",
			 (unsigned long long)rl.rlim_cur);
		log_event_text("info", msg);
	}
	if (g_ncounters && !sigtrap_ok) {
		log_event_text("error", tracer ? "counter overflow profiling needs SIGTRAP, which a debugger "
							 "attached to the target takes; counters disabled"
						       : "counter overflow profiling needs SIGTRAP delivery, which "
							 "SONDE_SIGNAL rules out; counters disabled");
		g_ncounters = 0;
		if (!g_cs.interval_ns)
			return -1;
	}
	int rc = -ENOSYS;
	for (int i = 0; i < n; i++) {
		g_sigtrap_kernel = order[i].kernel;
		rc = try_source(order[i].src,
				order[i].src == &g_sigtrap_source || order[i].src == &g_none_source ? SIGTRAP : rtsig);
		if (rc == 0)
			break;
		if (i + 1 == n)
			continue;
		char msg[240];
		if (order[i].src == &g_sigtrap_source && order[i].kernel)
			snprintf(msg, sizeof msg,
				 "perf task-clock counting kernel mode with SIGTRAP delivery refused (%s%s); "
				 "using %s",
				 strerror(-rc),
				 rc == -EACCES || rc == -EPERM ? ": perf_event_paranoid > 1 and no CAP_PERFMON" : "",
				 order[i + 1].src == &g_timer_source
					 ? "POSIX CPU timers, which place kernel time right at the resolution "
					   "of one scheduler tick"
					 : "a user-mode-only counter");
		else
			snprintf(msg, sizeof msg, "%s refused (%s); trying %s", order[i].src->name, strerror(-rc),
				 order[i + 1].src->name);
		log_event_text(order[i + 1].src == &g_timer_source && want ? "warning" : "info", msg);
	}
	if (rc < 0) {
		g_src = NULL;
		log_event_text("error", "cannot install the profiling signal handler; clock profiling disabled");
		g_ncounters = 0;
		return -1;
	}
	if (g_src == &g_none_source)
		g_sigtrap_source_active = 0; /* only the counters signal */
	if (prev_sig && prev_sig != g_sig) {
		/* A fork child that samples with another signal than its
		 * parent (one of them traced): the parent's signal is the
		 * target's again, with the action the target gave it. */
		struct sigaction back;
		memset(&back, 0, sizeof back);
		back.sa_handler = SIG_DFL;
		real_sigaction_call(prev_sig, prev_chained_set ? &prev_chained : &back, NULL);
	}
	if (tracer && g_src != &g_none_source)
		note_tracer(tracer, g_sig, rt_why);
	counters_start(g_col.expdir);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, g_sig);
	real_pthread_sigmask_call(SIG_UNBLOCK, &set, NULL);
	rawclone_init();
	return 0;
}

void clock_exit_tail(void)
{
	/* Other threads' blocks are theirs alone: their tails after the
	 * last sample stay unrecorded. */
	if (!t_state.tid || g_col.pid != getpid())
		return;
	account_end(SONDE_PSEUDO_PROCESS_END);
	/* The handler skips this thread's samples from now on (their time
	 * would be the collector's teardown: up to milliseconds when the
	 * machine is loaded, as much as the target's exit itself). */
	t_state.in_trace = 1;
}

void clock_stop_all(void)
{
	atomic_store(&g_col.active, 0);
	report_strays();
	reg_lock();
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		pid_t tid = atomic_load(&g_slots[i].tid);
		if (!tid)
			continue;
		struct thread_slot *s = &g_slots[i];
		/* What a raw clone task armed in its own descriptor table
		 * or process is its to release (when it returns, or ends). */
		if (s->foreign_fds)
			s->fd = -1;
		if (s->own_process)
			s->has_timer = 0;
		if (g_src)
			g_src->disarm(s);
		if (!s->foreign_fds)
			counters_disarm(s);
		uint64_t cpu = slot_cpu_ns(s);
		if (tid == t_state.tid && !s->own_process && g_col.pid == getpid())
			account_end_own(cpu); /* the teardown so far */
		record_thread_end(s, cpu);
		slot_free(s);
	}
	g_nlive = 0;
	atomic_store(&g_dfile_writers, 0);
	reg_unlock();
	report_unseen();
	/* Let samples already being written finish before files are closed. */
	for (int i = 0; i < 1000 && atomic_load(&g_inflight); i++)
		syscall(SYS_sched_yield);
	dfile_finish(g_profile);
	counters_finish();
}

/* The target may close a sampling counter's descriptor behind the
 * collector's back (the raw close_range system call, or dup2 onto its
 * number): the counter ends with it, and its thread's sampling silently
 * stops.  Checked when a thread starts and when sonde collect calls in
 * (clock_call_in; the number and the counter's id, two system calls per
 * counter): the threads whose counters are gone are armed again.
 * Returns how many were lost.  Normal context. */
static int check_counters(void)
{
	if (!g_src || g_src == &g_timer_source || !atomic_load(&g_col.active) || getpid() != g_col.pid ||
	    atomic_load(&g_clock_lost_signal))
		return 0;
	int lost = 0, armed = 0, failed = 0, first_err = 0;
	/* called in at any point of a thread, perhaps one holding it */
	if (atomic_exchange_explicit(&g_reg_lock, 1, memory_order_acquire))
		return -EBUSY;
	int n = atomic_load(&g_slots_used);
	for (int i = 0; i < n; i++) {
		struct thread_slot *s = &g_slots[i];
		if (atomic_load(&s->tid) && s->fd >= 0 && !s->foreign_fds && !atomic_load(&s->raw_tp) &&
		    !perf_fd_ours(s->fd, s->perf_id))
			lost++;
	}
	if (lost) {
		for (int i = 0; i < n; i++) {
			struct thread_slot *s = &g_slots[i];
			pid_t tid = atomic_load(&s->tid);
			if (!tid || s->foreign_fds || atomic_load(&s->raw_tp))
				continue;
			if (s->fd < 0 || perf_fd_ours(s->fd, s->perf_id))
				continue;
			fd_forget_taken(s->fd);
			if (g_src == &g_perf_source)
				atomic_fetch_and(&g_our_fds[s->fd / 8], (uint8_t) ~(1u << (s->fd % 8)));
			s->fd = -1;
			int rc = g_src->arm(s, tid);
			if (rc == 0)
				armed++;
			else if (!failed++)
				first_err = -rc;
		}
	}
	reg_unlock();
	if (lost) {
		/* Built without stdio: this also runs called in by sonde collect
		 * at any point of a thread (clock_call_in). */
		char msg[400];
		struct xbuf b;
		xb_init(&b, msg, sizeof msg);
		xb_str(&b, "the target closed ");
		xb_u64(&b, (uint64_t)lost);
		xb_str(&b, " of the collector's sampling counters, or put files of its own on their descriptors; ");
		xb_u64(&b, (uint64_t)armed);
		xb_str(&b, " thread(s) were armed again");
		if (failed) {
			xb_str(&b, ", ");
			xb_u64(&b, (uint64_t)failed);
			xb_str(&b, " could not be (errno ");
			xb_u64(&b, (uint64_t)first_err);
			xb_str(&b, ")");
		}
		xb_str(&b, " (their samples since the last check carry the time in between)");
		log_event_text("warning", msg);
	}
	return lost;
}

void clock_reenable(void)
{
	if (atomic_load(&g_clock_lost_signal))
		return; /* stopped for good: enabled, it would signal again */
	reg_lock();
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		if (atomic_load(&g_slots[i].tid) && g_slots[i].fd >= 0 && !g_slots[i].foreign_fds &&
		    perf_fd_ours(g_slots[i].fd, g_slots[i].perf_id))
			ioctl(g_slots[i].fd, PERF_EVENT_IOC_ENABLE, 0);
		if (atomic_load(&g_slots[i].tid) && !g_ncounters_off)
			counters_ioctl(&g_slots[i], PERF_EVENT_IOC_ENABLE);
	}
	reg_unlock();
}

/* Sampling stops around an exec and starts again if it fails.  A
 * sample's signal that the kernel queues during the exec itself (the
 * SIGTRAP counter counts the call's kernel time; a CPU timer fires at a
 * tick in it) is delivered to the new image, before any handler is
 * installed there, and its default action kills it: 1 ms sampling killed
 * about half of the images a 0.2 s process exec'd.  Disabling the counters
 * (and timers) is synchronous, and a signal queued until then is taken on
 * the return from that call, here.  The weights stay exact: a sample's is
 * its thread's CPU time since its previous one. */
static void exec_quiesce(int stop)
{
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		struct thread_slot *s = &g_slots[i];
		if (!atomic_load(&s->tid))
			continue;
		if (s->fd >= 0 && !s->foreign_fds && perf_fd_ours(s->fd, s->perf_id))
			ioctl(s->fd, stop ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0);
		if (stop || !g_ncounters_off)
			counters_ioctl(s, stop ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE);
		if (s->has_timer) {
			struct itimerspec its;
			memset(&its, 0, sizeof its);
			if (!stop) {
				its.it_interval.tv_sec = (time_t)(g_cs.interval_ns / 1000000000ull);
				its.it_interval.tv_nsec = (long)(g_cs.interval_ns % 1000000000ull);
				its.it_value = its.it_interval;
			}
			if (sysgate_may(SYS_timer_settime))
				timer_settime(s->timer, 0, &its, NULL);
		}
	}
}

/* A sample the exec'ing thread holds pending, because it blocks the
 * signal by a raw system call, would be delivered to the new image once
 * it unblocks it, and there the action may be the default one, which
 * kills (an image not followed, -F off).  Dequeued here; a signal of the
 * target's own taken on the way is queued again, to the same thread.
 * Raw system calls: the libc ones are interposed. */
static void exec_drop_held(void)
{
	uint64_t pend = 0, one;
	if (!g_sig || sonde_sys6(SYS_rt_sigpending, (long)&pend, 8, 0, 0, 0, 0) < 0 ||
	    !(pend >> (g_sig - 1) & 1))
		return;
	one = 1ull << (g_sig - 1);
	struct timespec zero = { 0, 0 };
	for (int i = 0; i < 64; i++) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (sonde_sys6(SYS_rt_sigtimedwait, (long)&one, (long)&si, (long)&zero, 8, 0, 0) != g_sig)
			return;
		if (!is_ours(&si)) {
			sonde_sys6(SYS_rt_tgsigqueueinfo, getpid(), sys_gettid(), g_sig, (long)&si, 0, 0);
			return;
		}
	}
}

/* Before an exec (collector_exec_prepare): the exec'ing thread stops
 * recording samples (the handler skips them while in_trace is set, and
 * their time stays with the thread) and records its time so far; every
 * thread's end is noted with its CPU time, for the case that the exec
 * succeeds and they all vanish with this image.  Sampling stops
 * (exec_quiesce) until the exec fails. */
void clock_exec_prepare(void)
{
	t_state.in_trace = 1;
	clock_thread_tail();
	reg_lock();
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		pid_t tid = atomic_load(&g_slots[i].tid);
		if (!tid)
			continue;
		uint64_t cpu = slot_cpu_ns(&g_slots[i]);
		if (tid == t_state.tid && !g_slots[i].own_process)
			account_end_own(cpu); /* the exec's preparation so far */
		record_thread_end(&g_slots[i], cpu);
	}
	exec_quiesce(1);
	reg_unlock();
	exec_drop_held();
}

/* The exec failed: its time (the failed system call) goes to the call of
 * exec, and the thread samples again. */
void clock_exec_failed(void)
{
	reg_lock();
	exec_quiesce(0);
	reg_unlock();
	clock_thread_tail();
	t_state.in_trace = 0;
}

/* Wait (bounded) until no handler is unwinding; used around dlclose. */
void clock_pause_unwinding(int on)
{
	atomic_store(&g_unwind_pause, on);
	if (on)
		for (int i = 0; i < 100000 && atomic_load(&g_inflight); i++)
			syscall(SYS_sched_yield);
}

void clock_fork_child(void)
{
	/* perf fds and their signals belong to the parent's threads, and
	 * POSIX timers are not inherited; just drop everything. */
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++) {
		pid_t tid = atomic_load(&g_slots[i].tid);
		/* Closed without being disabled: in a clone(CLONE_FILES)
		 * child it is the parent's counter still (fd_release then
		 * leaves it open). */
		if (g_slots[i].fd >= 0 && tid && !g_slots[i].foreign_fds) {
			if (perf_fd_ours(g_slots[i].fd, g_slots[i].perf_id))
				fd_release(g_slots[i].fd);
			else
				fd_forget_taken(g_slots[i].fd);
		}
		if (tid && !g_slots[i].foreign_fds)
			counters_fork_child(&g_slots[i]);
		kstacks_fork_child_slot(&g_slots[i]);
		if (tid > 0 && (unsigned)tid < TID_LIMIT)
			atomic_store(&g_tid_slot[tid], 0);
		atomic_store(&g_slots[i].tid, 0);
	}
	/* A stack another thread of the parent was sampling on at the fork
	 * is free in the child, where that thread does not exist. */
	for (int i = 0, n = atomic_load(&g_slots_used); i < n; i++)
		if (g_slots[i].sig_stack)
			atomic_store(&g_slots[i].sig_stack->busy, 0);
	/* The lock may have been held by another thread of the parent at the
	 * fork: start the child's slots afresh rather than take it. */
	atomic_store(&g_reg_lock, 0);
	g_nfree = 0;
	atomic_store(&g_slots_used, 0);
	g_nlive = 0;
	atomic_store(&g_dfile_writers, 0);
	memset((void *)g_our_fds, 0, sizeof g_our_fds);
	memset((void *)g_strays, 0, sizeof g_strays);
	dfile_forget(g_profile);
	g_profile = NULL;
	counters_forget();
	/* The counts written in the child's end event are its own: the
	 * parent's samples are not in the child's profile, and a reader
	 * would take the difference for samples lost. */
	atomic_store(&g_samples, 0);
	atomic_store(&g_handler_cpu_ns, 0);
	atomic_store(&g_pseudo_samples, 0);
	atomic_store(&g_own_start_ns, 0);
	atomic_store(&g_own_end_ns, 0);
	t_state.own_ns = 0; /* the parent's */
	t_state.last_stack_id = 0; /* a node of the parent's experiment */
	g_exec_base_ns = 0;
	t_state.tid = 0;
	/* The child's thread is a new task: its CPU clock starts at zero. */
	t_state.last_cpu_ns = 0;
	t_state.last_wall_ns = 0;
	t_state.nrecorded = 0;
	t_state.in_trace = 0;
}

uint64_t clock_samples(void) { return atomic_load(&g_samples); }

uint64_t clock_handler_ns(void) { return atomic_load(&g_handler_cpu_ns); }
uint64_t clock_lost(void) { return dfile_lost(g_profile); }
struct dfile *clock_dfile(void) { return g_profile; }
const char *clock_source_name(void) { return g_src ? g_src->name : "off"; }

/* How the source accounts for time spent in the kernel, for log.xml:
 * "sampled" (the counter samples kernel mode too, at the interval),
 * "sampled-at-tick" (CPU timers: in place, at the scheduler tick) or
 * "next-user-sample" (a user-mode-only counter: charged to the next
 * sample taken in user mode). */
const char *clock_kernel_time(void)
{
	if (!g_src)
		return "off";
	if (g_src == &g_timer_source)
		return "sampled-at-tick";
	if (g_src == &g_sigtrap_source && g_sigtrap_kernel)
		return "sampled";
	return "next-user-sample";
}
int clock_signal(void) { return g_sig; }
int clock_is_our_signal(int sig) { return (g_profile || g_ncounters) && sig == g_sig; }
int clock_counters(void) { return g_ncounters; }

/* ---- calls from `sonde collect` (cmd/collect_watch.c) ----
 *
 * Without a thread of its own in the target, the collector has nothing
 * that runs when the target's own code does not call into it.  `sonde
 * collect` watches from outside and, when something must be done in the
 * target (a lost action, lost counters), stops one thread of it with
 * ptrace, saves its registers, and makes it run sonde_call_tramp with the
 * stack pointer at the top of a stack of the collector's own
 * (g_call_stack), clock_call_in in %rax and a token of the caller's in
 * %rsi: the trampoline calls it, posts the token and the result in
 * g_call_post, and spins there until collect, which polls g_call_post
 * with process_vm_readv, interrupts it (PTRACE_INTERRUPT) and restores
 * every register.  A real call and return, so a shadow stack (CET) stays
 * balanced.
 *
 * The end is posted, not trapped: an int3 there raised a SIGTRAP by force,
 * and the kernel forces a signal that the thread blocks (a raw
 * rt_sigprocmask of every signal) or ignores by resetting its action to
 * SIG_DFL and unblocking it.  collect discarded that SIGTRAP, but the next
 * sample, a SIGTRAP of the perf counter, then killed the target.  The
 * spin involves no signal at all, so the thread's mask and actions are
 * exactly as they were.
 *
 * The thread goes on where it was, a system call it was in is restarted as
 * after a signal.  It runs like a signal handler, at any point of the
 * thread: async-signal-safe, and errno is kept. */
__attribute__((used, aligned(16))) _Atomic uint64_t g_call_post[2]; /* the token, then the result */
__asm__(".pushsection .text\n"
	".globl sonde_call_tramp\n"
	".hidden sonde_call_tramp\n"
	".type sonde_call_tramp, @function\n"
	"sonde_call_tramp:\n"
	"\tmovq %rsi, %rbx\n" /* callee-saved: the token outlives the call */
	"\tcall *%rax\n"
	"\tmovq %rax, g_call_post+8(%rip)\n"
	"\tmovq %rbx, g_call_post(%rip)\n" /* after the result: x86 keeps stores in order */
	"1:\tpause\n"
	"\tjmp 1b\n"
	".size sonde_call_tramp, . - sonde_call_tramp\n"
	".popsection\n");
extern const char sonde_call_tramp[];
static char g_call_stack[65536] __attribute__((aligned(16)));

static long clock_call_in(long what)
{
	int saved = errno;
	long rc = 0;
	if (what == SONDE_CALL_LOST)
		rc = clock_stop_lost();
	else if (what == SONDE_CALL_COUNTERS)
		rc = check_counters();
	errno = saved;
	return rc;
}

int clock_call_info(struct clock_call *c)
{
	memset(c, 0, sizeof *c);
#if defined(__x86_64__)
	if (!g_src || atomic_load(&g_clock_lost_signal))
		return -1;
	c->sig = g_sig;
	c->counters = g_src != &g_timer_source && g_src != &g_none_source;
	c->interval_ns = g_cs.interval_ns;
	c->entry = (uint64_t)(uintptr_t)sonde_call_tramp;
	c->fn = (uint64_t)(uintptr_t)clock_call_in;
	c->sp = (uint64_t)(uintptr_t)(g_call_stack + sizeof g_call_stack); /* 16-aligned, as before a call */
	c->done = (uint64_t)(uintptr_t)g_call_post;
	c->samples = (uint64_t)(uintptr_t)&g_sample_signals;
	c->tracer = g_start_tracer;
	return 0;
#else
	return -1;
#endif
}

/* ---- the module (collector.h) ---- */

/* The clock interval in force once the clock started: 0 when it is off or
 * could not start (its profile file may still exist, for -h alone). */
static uint64_t g_clock_on;

static void clock_open(struct clock_settings *cs)
{
	if (clock_start(cs) < 0)
		cs->interval_ns = 0;
	g_clock_on = cs->interval_ns;
}

static int clock_file(void)
{
	return g_profile != NULL;
}

static void clock_settings_attrs(struct xbuf *b, const struct clock_settings *cs)
{
	xb_attr_str(b, "clock_source", cs->interval_ns ? clock_source_name() : "off");
	if (cs->interval_ns)
		xb_attr_str(b, "kernel_time", clock_kernel_time());
	xb_attr_u64(b, "clock_interval_ns", cs->interval_ns);
	xb_attr_u64(b, "clock_signal", (uint64_t)clock_signal());
	if (cs->interval_ns)
		xb_attr_u64(b, "microstates", 1);
}

/* The initial thread (also the stack bounds that tracing unwinds within)
 * and the threads that existed before the collector. */
static void clock_module_start(void)
{
	clock_thread_begin();
	/* The process's CPU time before the collector started (the loader,
	 * the constructors that ran first) is <Process start>, and the
	 * collector's own start so far <Collector>, not the first sample's:
	 * that one's state and place are the program's (an OpenMP region's
	 * master took 1.5 to 10 ms of work that was never its own).  Without
	 * a mark of the collector's begin, one sample at the current stack.
	 * Attached late, that time was never recorded. */
	if (atomic_load(&g_from_now)) {
		struct timespec cpu;
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
			t_state.last_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	} else if (g_begin.have) {
		account_start(SONDE_PSEUDO_PROCESS_START, g_begin.cpu_ns, g_begin.have_ms ? &g_begin.ms : NULL);
		g_begin.used = 1;
	} else {
		clock_flush(0, SONDE_STATE_CPU);
	}
	if (g_clock_on || clock_counters())
		clock_adopt_existing_threads();
}

/* An attached recording: a thread's first sample weighs its CPU time
 * since its registration (the slot's reg_cpu_ns), not since its start:
 * a JVM's compiler threads had seconds of it before the attach. */
_Atomic int g_from_now;

void clock_from_now(void)
{
	atomic_store(&g_from_now, 1);
}

/* After clock_stop_all closed every thread's counter: a signal the kernel
 * raised before its counter closed is delivered when its thread next runs
 * in user mode, and the default action of SIGTRAP or SIGPROF would end
 * the process; so the handler (inert now: it records nothing once the
 * collection is not active) stays until each thread has run once, about:
 * 50 ms, then the action the signal had before sonde is put back. */
void clock_detach_signal(void)
{
	atomic_store(&g_detached, 1);
	if (!g_src || !g_sig)
		return;
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
	struct sigaction sa;
	if (atomic_load(&g_chained_set)) {
		sa = g_chained_action;
	} else {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
	}
	real_sigaction_call(g_sig, &sa, NULL);
	g_src = NULL;
}

static void clock_module_thread_start(void *fn)
{
	clock_thread_begin();
	clock_thread_start_routine(fn);
}

static void clock_end(struct xbuf *b)
{
	xb_attr_u64(b, "samples", clock_samples());
	xb_attr_u64(b, "lost", clock_lost());
	xb_attr_u64(b, "handler_ns", clock_handler_ns());
	xb_attr_u64(b, "start_cost_ns", atomic_load(&g_own_start_ns));
	xb_attr_u64(b, "end_cost_ns", atomic_load(&g_own_end_ns));
	xb_attr_u64(b, "pseudo_samples", atomic_load(&g_pseudo_samples));
	dfile_end_errors(g_profile);
}

static void clock_close_fds(void)
{
	dfile_close_fd(g_profile);
}

static const struct sonde_packet_format clock_packets[] = {
	{ SONDE_PKT_PROFILE, "profile", 48,
	  "type:0:u16 size:2:u16 cpu:4:u16 state:6:u16 time_ns:8:u64 weight_ns:16:u64 stack_id:24:u64 "
	  "system_ns:32:u64 wait_cpu_ns:40:u64" },
	{ SONDE_PKT_OFFCPU, "offcpu", 40,
	  "type:0:u16 size:2:u16 state:4:u16 syscall:6:u16 tid:8:u32 reserved:12:u32 time_ns:16:u64 "
	  "weight_ns:24:u64 stack_id:32:u64" },
};

const struct collector_module clock_module = {
	.name = "clock",
	.kind = SONDE_KIND_PROFILE,
	.packets = clock_packets,
	.npackets = 2,
	.file = clock_file,
	.open = clock_open,
	.settings = clock_settings_attrs,
	.start = clock_module_start,
	.thread_start = clock_module_thread_start,
	.thread_end = clock_thread_end,
	.stop = clock_stop_all,
	.end = clock_end,
	.fork_child = clock_fork_child,
	.restart = clock_child_started,
	.exec_prepare = clock_exec_prepare,
	.exec_failed = clock_exec_failed,
	.close_fds = clock_close_fds,
};
