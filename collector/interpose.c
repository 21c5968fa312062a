/*
 * Interposers: what the collector must see of the target's own calls.
 *
 * Symbols are defined without a version, so the dynamic linker binds a
 * reference to any version of them (pthread_create@GLIBC_2.2.5 from old
 * binaries, @GLIBC_2.34 from new ones) to these definitions.  The real
 * functions are found with dlsym(RTLD_NEXT) on first use, never from a
 * signal handler.
 */
#define _GNU_SOURCE
/* syscall() here is the target's: the interposer below. */
#define SONDE_TARGET_SYSCALL
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "collector.h"
#include "real.h"

struct sigaction g_chained_action;
_Atomic int g_chained_set;

void clock_pause_unwinding(int on);


REAL_DECL(pthread_create);
REAL_DECL(sigaction);
REAL_DECL(sigprocmask);
REAL_DECL(pthread_sigmask);
REAL_DECL(setitimer);
REAL_DECL(dlopen);
REAL_DECL(dlmopen);
REAL_DECL(dlclose);
REAL_DECL(close);
REAL_DECL(close_range);
REAL_DECL(closefrom);
REAL_DECL(_exit);
REAL_DECL(_Exit);
REAL_DECL(prctl);

static void note_once(_Atomic int *flag, const char *kind, const char *text)
{
	if (__sonde_vforked)
		return; /* a vfork child's doing, not the target's: and its flag is the parent's */
	if (!atomic_exchange(flag, 1))
		log_event_text(kind, text);
}

static void child_after_fork(void)
{
	/* A forked child shares the experiment's files with its parent; it
	 * must never write to them.  It may start its own experiment, from
	 * a handler registered later (follow.c). */
	if (atomic_load(&g_col.active))
		collector_fork_child();
}

void interpose_init(void)
{
	static int done;
	if (done) /* again in a followed fork child */
		return;
	done = 1;
	RESOLVE(pthread_create);
	RESOLVE(sigaction);
	RESOLVE(sigprocmask);
	RESOLVE(pthread_sigmask);
	RESOLVE(setitimer);
	RESOLVE(dlopen);
	RESOLVE(dlmopen);
	RESOLVE(dlclose);
	RESOLVE(_exit);
	RESOLVE(_Exit);
	RESOLVE(close);
	RESOLVE(close_range);
	RESOLVE(closefrom);
	RESOLVE(prctl);
	pthread_atfork(NULL, NULL, child_after_fork);
}

int real_sigaction_call(int sig, const struct sigaction *act, struct sigaction *old)
{
	RESOLVE(sigaction);
	return REAL(sigaction)(sig, act, old);
}

/* ---- threads ---- */

struct start {
	void *(*fn)(void *);
	void *arg;
	int ours_blocked; /* the creator's t_ours_blocked */
};

static TLS int t_ours_blocked;

static void *thread_start(void *p)
{
	struct start st = *(struct start *)p;
	/* The start routine sees the errno a new thread has, whatever the
	 * collector's set-up (opening its counters, reading its stack) left. */
	int saved = errno;
	t_ours_blocked = st.ours_blocked; /* a new thread's mask is its creator's */
	clock_thread_entry(); /* what the collector does from here is its own */
	__sonde_quiet++;
	free(p);
	__sonde_quiet--;
	cmod_thread_start((void *)st.fn); /* every module's, in their order */
	clock_thread_run();
	errno = saved;
	/* The end is recorded by a thread-specific-data destructor, which
	 * also runs on pthread_exit and cancellation; the return of the
	 * routine is marked here, so that the time from its last sample to
	 * its return is known to be the routine's. */
	void *r = st.fn(st.arg);
	saved = errno;
	clock_routine_returned();
	errno = saved;
	return r;
}

/* ---- main ----
 *
 * The initial thread's main is called through here, so that its start
 * (what ran before main) and its end (main's return) are known as a
 * thread's routine's are.  _start calls __libc_start_main through the
 * program's PLT, which the preloaded collector interposes; a collector
 * not recording passes main through untouched. */

typedef int (*main_fn)(int, char **, char **);
static main_fn g_main;

static int sonde_main(int argc, char **argv, char **envp)
{
	int saved = errno;
	clock_main_run((void *)g_main);
	errno = saved;
	int r = g_main(argc, argv, envp);
	saved = errno;
	clock_routine_returned();
	errno = saved;
	return r;
}

EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
			     void (*rtld_fini)(void), void *stack_end)
{
	typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
	start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	if (!real) /* cannot be: libc defines it; nothing else could run */
		real = (start_fn)dlsym(RTLD_DEFAULT, "__libc_start_main");
	if (atomic_load(&g_col.active) && getpid() == g_col.pid && main) {
		g_main = main;
		main = sonde_main;
	}
	return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}

int real_pthread_create_call(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	RESOLVE(pthread_create);
	return REAL(pthread_create) ? REAL(pthread_create)(thr, attr, fn, arg) : EAGAIN;
}

/* The collector's own threads (the sampler, the tracing clock's ticker),
 * joinable, with the process that started them: a process whose first
 * task ends by the exit system call rather than exit_group (a clone()
 * child whose function returns) takes its exit status from the last task
 * to end, and a helper ending after it would turn the function's status
 * into 0 (glibc's last-thread exit(0)).  collector_threads_join waits for
 * them there; elsewhere they are never joined (the process is ending). */
#define MAX_HELPERS 8
static pthread_t g_helpers[MAX_HELPERS];
static pid_t g_helpers_pid;
static int g_nhelpers;

int collector_thread(void *(*fn)(void *), const char *name)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_t t;
	__sonde_quiet++; /* its stack and TLS are not the target's allocations */
	int rc = real_pthread_create_call(&t, &attr, fn, NULL);
	__sonde_quiet--;
	pthread_attr_destroy(&attr);
	if (rc)
		return rc;
	pthread_setname_np(t, name);
	pid_t pid = getpid();
	if (g_helpers_pid != pid) { /* those of the parent are not this process's */
		g_helpers_pid = pid;
		g_nhelpers = 0;
	}
	if (g_nhelpers < MAX_HELPERS)
		g_helpers[g_nhelpers++] = t;
	else
		pthread_detach(t);
	return 0;
}

/* After collector_threads_quit: wait until the helpers this process
 * started have ended. */
void collector_threads_join(void)
{
	if (g_helpers_pid != getpid())
		return;
	int saved = errno;
	while (g_nhelpers > 0)
		pthread_join(g_helpers[--g_nhelpers], NULL);
	errno = saved;
}

EXPORT int pthread_create(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	RESOLVE(pthread_create);
	if (!REAL(pthread_create))
		return EAGAIN;
	if (!atomic_load(&g_col.active))
		return REAL(pthread_create)(thr, attr, fn, arg);
	__sonde_quiet++;
	struct start *st = malloc(sizeof *st);
	__sonde_quiet--;
	if (!st)
		return REAL(pthread_create)(thr, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	st->ours_blocked = t_ours_blocked;
	int rc = REAL(pthread_create)(thr, attr, thread_start, st);
	if (rc) {
		__sonde_quiet++;
		free(st);
		__sonde_quiet--;
	}
	return rc;
}

/* ---- signals ---- */

static _Atomic int g_noted_chain, g_noted_mask, g_noted_prof, g_noted_itimer;

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	RESOLVE(sigaction);
	/* A vfork child's dispositions are its own (only memory is shared):
	 * what it sets must not change the parent's chained handler. */
	if (__sonde_vforked)
		return real_sigaction_call(sig, act, old);
	if (sampling_sigaction(sig, act, old))
		return 0;
	if (clock_is_our_signal(sig)) {
		/* Keep our handler; remember the target's and call it for
		 * signals that are not samples. */
		if (old)
			*old = g_chained_action;
		if (act) {
			g_chained_action = *act;
			atomic_store(&g_chained_set, 1);
			note_once(&g_noted_chain, "warning",
				  "target installed a handler for the profiling signal; "
				  "sonde keeps its own and chains non-sample signals to it");
		}
		return 0;
	}
	if (sig == SIGPROF && act && act->sa_handler != SIG_DFL && atomic_load(&g_col.active))
		note_once(&g_noted_prof, "info",
			  "target installed its own SIGPROF handler; left alone "
			  "(sonde does not sample with SIGPROF)");
	return real_sigaction_call(sig, act, old);
}

/* glibc's other entries that set an action call its internal
 * __sigaction directly, past the interposer above: each is defined here
 * in terms of sigaction, with glibc's flags, so that none can take the
 * profiling signal (or the -l/-y signals) from sonde.  __libc_sigaction
 * is GLIBC_PRIVATE (libc's own use only). */
EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction(sig, act, old);
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics (glibc's signal, bsd_signal and ssignal): restarting
 * system calls, the signal blocked while its handler runs. */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t ssignal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

/* System V semantics: the action resets to SIG_DFL when the handler is
 * called, and the signal is not blocked while it runs. */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

EXPORT int sigignore(int sig)
{
	return set_handler(sig, SIG_IGN, 0) == SIG_ERR ? -1 : 0;
}

EXPORT int siginterrupt(int sig, int flag)
{
	struct sigaction a;
	if (sigaction(sig, NULL, &a) < 0)
		return -1;
	if (flag)
		a.sa_flags &= ~SA_RESTART;
	else
		a.sa_flags |= SA_RESTART;
	return sigaction(sig, &a, NULL);
}

/* System V sigset: SIG_HOLD blocks the signal; any other disposition is
 * installed and the signal unblocked.  Returns SIG_HOLD if the signal
 * was blocked, else its previous action.  The mask goes through
 * sigprocmask below, which keeps the profiling signal deliverable. */
EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	if (disp == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigset_t set, oset;
	sigemptyset(&set);
	sigaddset(&set, sig);
	struct sigaction old;
	if (disp == SIG_HOLD) {
		if (sigaction(sig, NULL, &old) < 0 || sigprocmask(SIG_BLOCK, &set, &oset) < 0)
			return SIG_ERR;
	} else {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = disp;
		sigemptyset(&sa.sa_mask);
		if (sigaction(sig, &sa, &old) < 0 || sigprocmask(SIG_UNBLOCK, &set, &oset) < 0)
			return SIG_ERR;
	}
	return sigismember(&oset, sig) ? SIG_HOLD : old.sa_handler;
}

/* 4.2BSD sigvec (a compatibility symbol of glibc, for old binaries). */
struct sonde_sigvec {
	sighandler_t sv_handler;
	int sv_mask;
	int sv_flags;
};

EXPORT int sigvec(int sig, const struct sonde_sigvec *vec, struct sonde_sigvec *ovec)
{
	struct sigaction sa, old;
	if (vec) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = vec->sv_handler;
		sigemptyset(&sa.sa_mask);
		for (int i = 1; i < 32; i++)
			if (vec->sv_mask & (1 << (i - 1)))
				sigaddset(&sa.sa_mask, i);
		sa.sa_flags = (vec->sv_flags & 1 ? SA_ONSTACK : 0) | (vec->sv_flags & 2 ? 0 : SA_RESTART) |
			      (vec->sv_flags & 4 ? SA_RESETHAND : 0);
	}
	if (sigaction(sig, vec ? &sa : NULL, &old) < 0)
		return -1;
	if (ovec) {
		ovec->sv_handler = old.sa_handler;
		ovec->sv_mask = 0;
		for (int i = 1; i < 32; i++)
			if (sigismember(&old.sa_mask, i) == 1)
				ovec->sv_mask |= 1 << (i - 1);
		ovec->sv_flags = (old.sa_flags & SA_ONSTACK ? 1 : 0) | (old.sa_flags & SA_RESTART ? 0 : 2) |
				 (old.sa_flags & SA_RESETHAND ? 4 : 0);
	}
	return 0;
}

/* A raw system call through glibc's syscall(3): the way C programs reach
 * rt_sigaction without a wrapper, e.g. to reset every action to SIG_DFL
 * after a fork.  An action for the profiling signal set that way would
 * replace sonde's handler, and the next sample would kill the target
 * (SIGTRAP's or a real-time signal's default action).  Such calls go
 * through sigaction above; every other system call is made as glibc
 * makes it, by a system call instruction of our own (this is reached
 * from signal handlers and before dlsym can be used).  A bare syscall
 * instruction is not seen here: see clock_stop_lost.  Async-signal-safe
 * (sonde's own code calls it too). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int rt_sigaction_ours(long sig, long sigsetsize)
{
	return sigsetsize == 8 && sig > 0 && sig < NSIG && atomic_load(&g_col.active) &&
	       (clock_is_our_signal((int)sig) || sampling_sigaction((int)sig, NULL, NULL));
}

static int before_filter(int strict, const void *prog);
static void after_filter(int idx, long rc);

EXPORT long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	/* The seccomp and prctl system calls made through syscall()
	 * (libseccomp's way): see "seccomp filters" below. */
	if ((n == SYS_seccomp && (a1 == SECCOMP_SET_MODE_FILTER || a1 == SECCOMP_SET_MODE_STRICT)) ||
	    (n == SYS_prctl && a1 == PR_SET_SECCOMP)) {
		int strict = n == SYS_seccomp ? a1 == SECCOMP_SET_MODE_STRICT : a2 == SECCOMP_MODE_STRICT;
		int idx = before_filter(strict, (const void *)a3);
		long r = sonde_raw_syscall6(n, a1, a2, a3, a4, a5, a6);
		after_filter(idx, r);
		if ((unsigned long)r > -4096ul) {
			errno = (int)-r;
			return -1;
		}
		return r;
	}
	if (n == SYS_rt_sigaction && rt_sigaction_ours(a1, a4)) {
		const struct ksigaction *ka = (const struct ksigaction *)a2;
		struct ksigaction *ko = (struct ksigaction *)a3;
		struct sigaction sa, old;
		if (ka) {
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = (sighandler_t)ka->handler;
			sa.sa_flags = (int)(ka->flags & ~(unsigned long)0x04000000); /* SA_RESTORER: glibc's own */
			sigemptyset(&sa.sa_mask);
			for (int i = 1; i <= 64 && i < NSIG; i++)
				if (ka->mask & (1ull << (i - 1)))
					sigaddset(&sa.sa_mask, i);
		}
		if (sigaction((int)a1, ka ? &sa : NULL, ko ? &old : NULL) < 0)
			return -1;
		if (ko) {
			memset(ko, 0, sizeof *ko);
			ko->handler = (void *)old.sa_handler;
			ko->flags = (unsigned long)(unsigned)old.sa_flags;
			for (int i = 1; i <= 64 && i < NSIG; i++)
				if (sigismember(&old.sa_mask, i) == 1)
					ko->mask |= 1ull << (i - 1);
		}
		return 0;
	}
	long r = sonde_raw_syscall6(n, a1, a2, a3, a4, a5, a6);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* Old BSD and System V mask calls, which glibc makes through its
 * internal sigprocmask: the profiling signal stays deliverable. */
EXPORT int sighold(int sig)
{
	sigset_t set;
	sigemptyset(&set);
	if (sigaddset(&set, sig) < 0)
		return -1;
	return sigprocmask(SIG_BLOCK, &set, NULL);
}

static int bsd_mask_call(int how, int mask)
{
	sigset_t set, old;
	sigemptyset(&set);
	for (int i = 1; i < 32; i++)
		if (mask & (1 << (i - 1)))
			sigaddset(&set, i);
	if (sigprocmask(how, &set, &old) < 0)
		return -1;
	int r = 0;
	for (int i = 1; i < 32; i++)
		if (sigismember(&old, i) == 1)
			r |= 1 << (i - 1);
	return r;
}

EXPORT int sigblock(int mask)
{
	return bsd_mask_call(SIG_BLOCK, mask);
}

EXPORT int sigsetmask(int mask)
{
	return bsd_mask_call(SIG_SETMASK, mask);
}

static _Atomic int g_noted_perfoff;

/* ---- seccomp filters ----
 *
 * A filter the target installs applies to the collector's system calls
 * too, and a kill filter for a call the collector makes but the target
 * never does ends the target.  The collector sees each filter before the
 * kernel does, through prctl and the seccomp system call (which libseccomp
 * makes through syscall()), and from then on asks it before every system
 * call of its own (sysgate.c): a call it would refuse is not made.  What
 * cannot do without its calls is settled before the filter takes effect:
 * clock profiling stops when the filter refuses a call every sample needs
 * (clock_filter_prepare), the data files are mapped further ahead when it
 * refuses the calls that grow them (dfile_filter_prepare), log.xml is
 * kept open when it refuses opening it (log_filter_prepare), the I/O
 * tracer names the descriptors open then (its hook).  log.xml says which
 * of the collector's calls the filter refuses.  A filter installed by a
 * bare system call instruction is not seen (doc/sonde-collect.md). */
static void (*_Atomic g_filter_hook)(void);

EXPORT void __sonde_trace_on_filter(void (*fn)(void))
{
	atomic_store(&g_filter_hook, fn);
}

/* The system calls the collector may make once a filter is in force,
 * with typical arguments, for log.xml's list of those it refuses. */
static const struct {
	long nr;
	const char *name;
} g_own_calls[] = {
	{ SYS_rt_sigreturn, "rt_sigreturn" }, { SYS_gettid, "gettid" },
	{ SYS_clock_gettime, "clock_gettime" }, { SYS_getpid, "getpid" },
	{ SYS_getrusage, "getrusage" },
	{ SYS_openat, "openat" },	      { SYS_read, "read" },
	{ SYS_write, "write" },		      { SYS_close, "close" },
	{ SYS_fstat, "fstat" },		      { SYS_prlimit64, "prlimit64" },
	{ SYS_ioctl, "ioctl" },		      { SYS_fcntl, "fcntl" },
	{ SYS_mmap, "mmap" },		      { SYS_madvise, "madvise" },
	{ SYS_pwrite64, "pwrite64" },	      { SYS_pwritev, "pwritev" },
	{ SYS_fallocate, "fallocate" },
	{ SYS_perf_event_open, "perf_event_open" }, { SYS_timer_settime, "timer_settime" },
	{ SYS_rt_sigtimedwait, "rt_sigtimedwait" }, { SYS_sched_yield, "sched_yield" },
};

/* A filter is about to be installed (strict mode, or the target's struct
 * sock_fprog at prog).  Returns sysgate_add's index for after_filter. */
static int before_filter(int strict, const void *prog)
{
	if (!atomic_load(&g_col.active))
		return -2;
	int saved = errno;
	int idx = sysgate_add(strict, prog);
	if (idx == -2) { /* the kernel will refuse it (EFAULT, EINVAL) */
		errno = saved;
		return idx;
	}
	void (*hook)(void) = atomic_load(&g_filter_hook);
	if (hook && !atomic_load(&__sonde_filtered))
		hook();
	char msg[1024];
	struct xbuf b;
	xb_init(&b, msg, sizeof msg - 1);
	xb_str(&b, strict ? "the target enters seccomp's strict mode" : "the target installs a seccomp filter");
	int first = 1;
	for (size_t i = 0; i < sizeof g_own_calls / sizeof g_own_calls[0]; i++) {
		long nr = g_own_calls[i].nr;
		long a1 = nr == SYS_clock_gettime ? CLOCK_THREAD_CPUTIME_ID : nr == SYS_getrusage ? 1 /* RUSAGE_THREAD */ : 0;
		if (sysgate_would_allow6(nr, a1, 0, 0, 0, 0, 0))
			continue;
		xb_str(&b, first ? "; it refuses these system calls of sonde's, which sonde no longer makes: " : ", ");
		xb_str(&b, g_own_calls[i].name);
		first = 0;
	}
	if (first)
		xb_str(&b, "; it allows every system call sonde makes");
	msg[b.len < sizeof msg ? b.len : sizeof msg - 1] = 0;
	log_event_text("info", msg);
	clock_filter_prepare();
	dfile_filter_prepare();
	log_filter_prepare();
	if (strict) /* 2: no clock reads from now on (see sysgate.c) */
		atomic_store(&__sonde_filtered, 2);
	else
		atomic_compare_exchange_strong(&__sonde_filtered, &(int){ 0 }, 1);
	sysgate_commit(idx);
	errno = saved;
	return idx;
}

/* The kernel's answer to the filter before_filter saw: one that failed
 * never counted. */
static void after_filter(int idx, long rc)
{
	if (idx >= 0 && rc < 0)
		sysgate_drop(idx);
	if (idx >= 0)
		shared_note_filters((uint32_t)sysgate_count());
}

/* PR_TASK_PERF_EVENTS_DISABLE disables every perf counter the calling
 * thread opened: its own sampling counter, and in the initial thread
 * those of the threads adopted at start-up.  The target's own counters
 * stay disabled as it asked; sonde's are enabled again. */
EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP) {
		int idx = before_filter(a2 == SECCOMP_MODE_STRICT, (const void *)a3);
		long r = sonde_raw_syscall6(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
		after_filter(idx, r);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return (int)r;
	}
	RESOLVE(prctl);
	if (!REAL(prctl))
		return (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	int rc = REAL(prctl)(option, a2, a3, a4, a5);
	if (rc == 0 && option == PR_TASK_PERF_EVENTS_DISABLE && atomic_load(&g_col.active)) {
		int saved = errno;
		clock_reenable();
		note_once(&g_noted_perfoff, "info",
			  "target disabled its perf counters (PR_TASK_PERF_EVENTS_DISABLE); "
			  "sonde's sampling counters were enabled again");
		errno = saved;
	}
	return rc;
}

/* Keep the profiling signal deliverable when the target blocks "all"
 * signals; it is ours, not the target's.  What the target asked for is
 * what it reads back: the thread's mask as the target set it has the
 * profiling signal blocked (t_ours_blocked), and every old mask returned
 * shows it so (a program that blocks all signals and reads its mask back
 * counts them all).  A thread starts with its creator's (thread_start). */
static int mask_call(int how, const sigset_t *set, sigset_t *old, int (*real)(int, const sigset_t *, sigset_t *))
{
	int sig = clock_signal();
	if (!sig || !atomic_load(&g_col.active) || __sonde_vforked)
		return real(how, set, old);
	int was = t_ours_blocked, now = was;
	const sigset_t *use = set;
	sigset_t tmp;
	if (set) {
		int in = sigismember(set, sig) == 1;
		if (how == SIG_BLOCK)
			now = was || in;
		else if (how == SIG_UNBLOCK)
			now = was && !in;
		else if (how == SIG_SETMASK)
			now = in;
		if (in && how != SIG_UNBLOCK) {
			tmp = *set;
			sigdelset(&tmp, sig);
			use = &tmp;
			int saved = errno;
			note_once(&g_noted_mask, "info",
				  "target blocked the profiling signal (e.g. sigfillset); it stays unblocked");
			errno = saved;
		}
	}
	int rc = real(how, use, old);
	if (rc == 0) { /* both conventions: 0 is success (else -1 with errno, or the error) */
		t_ours_blocked = now;
		if (old && was)
			sigaddset(old, sig);
	}
	return rc;
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(sigprocmask);
	return mask_call(how, set, old, REAL(sigprocmask));
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(pthread_sigmask);
	return mask_call(how, set, old, REAL(pthread_sigmask));
}

int real_pthread_sigmask_call(int how, const sigset_t *set, sigset_t *old)
{
	RESOLVE(pthread_sigmask);
	return REAL(pthread_sigmask)(how, set, old);
}

EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	RESOLVE(setitimer);
	if (which == ITIMER_PROF && nv && atomic_load(&g_col.active))
		note_once(&g_noted_itimer, "info",
			  "target uses setitimer(ITIMER_PROF); left alone (sonde does not use it)");
	return REAL(setitimer)(which, nv, ov);
}

/* ---- load objects ---- */

EXPORT void *dlopen(const char *file, int mode)
{
	RESOLVE(dlopen);
	/* The library's code may run (constructors) before dlopen returns:
	 * its load is logged at the start, and the tracing clock raised to
	 * it so that events of those constructors are not stamped before. */
	uint64_t t0 = now_ns();
	trace_clock_raise(t0 + 1);
	void *h = REAL(dlopen)(file, mode);
	if (h && atomic_load(&g_col.active)) {
		int saved = errno; /* the scan's realpath leaves EINVAL from readlink */
		maps_update_since(t0);
		errno = saved;
	}
	return h;
}

EXPORT void *dlmopen(Lmid_t lm, const char *file, int mode)
{
	RESOLVE(dlmopen);
	/* The library's code may run (constructors) before dlopen returns:
	 * its load is logged at the start, and the tracing clock raised to
	 * it so that events of those constructors are not stamped before. */
	uint64_t t0 = now_ns();
	trace_clock_raise(t0 + 1);
	void *h = REAL(dlmopen)(lm, file, mode);
	if (h && atomic_load(&g_col.active)) {
		int saved = errno;
		maps_update_since(t0);
		errno = saved;
	}
	return h;
}

EXPORT int dlclose(void *h)
{
	RESOLVE(dlclose);
	if (!atomic_load(&g_col.active))
		return REAL(dlclose)(h);
	/* No handler may be reading the unwind tables of an object while it
	 * is unmapped: pause unwinding (samples keep their weight) around
	 * the real dlclose and the table refresh. */
	clock_pause_unwinding(1);
	int rc = REAL(dlclose)(h);
	int saved = errno;
	maps_update();
	clock_pause_unwinding(0);
	errno = saved;
	return rc;
}

/* ---- descriptors ---- */

/* Programs that close every descriptor (daemons, sandboxes) must not close
 * the collector's: the close is refused, once noted in log.xml, and fails
 * with EBADF, as it does without sonde, where that number holds nothing
 * the target opened (a refusal as a success told the target that it had
 * a file there).  Async-signal-safe, like close itself (the real
 * functions are resolved at start-up; before that the system call is
 * used). */
static _Atomic int g_noted_close;

/* A protected number the target took (dup2 onto it, or a raw close and
 * an open that reused it) holds the target's file: its close is real. */
static int keep_open(int fd)
{
	if (!fd_is_protected(fd))
		return 0;
	if (fd_still_ours(fd))
		return 1;
	fd_forget_taken(fd);
	return 0;
}

EXPORT int close(int fd)
{
	if (keep_open(fd)) {
		if (!atomic_exchange(&g_noted_close, 1))
			log_event_text("info", "target closed a descriptor of the collector; it was kept open");
		errno = EBADF;
		return -1;
	}
	return REAL(close) ? REAL(close)(fd) : (int)syscall(SYS_close, fd);
}

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Close [first, last] around the protected descriptors. */
static int close_range_around(unsigned first, unsigned last, int flags)
{
	int rc = 0, calls = 0;
	unsigned lo = first;
	for (unsigned fd = first; fd <= last && fd < 65536; fd++) {
		if (!keep_open((int)fd))
			continue;
		if (!atomic_exchange(&g_noted_close, 1))
			log_event_text("info", "target closed a descriptor of the collector; it was kept open");
		if (fd > lo) {
			calls++;
			if ((int)syscall(SYS_close_range, lo, fd - 1, flags) < 0)
				rc = -1;
		}
		lo = fd + 1;
	}
	if (lo <= last && lo >= first) {
		calls++;
		if ((int)syscall(SYS_close_range, lo, last, flags) < 0)
			rc = -1;
	}
	/* Every number was protected: no call unshared the table yet. */
	if (!calls && (flags & CLOSE_RANGE_UNSHARE) && (int)syscall(SYS_close_range, ~0u, ~0u, CLOSE_RANGE_UNSHARE) < 0)
		rc = -1;
	return rc;
}

/* Only a call that closes needs to go around the protected descriptors.
 * What the kernel refuses (first > last, a flag it does not know) it
 * refuses whole, before closing anything: made as it is, it fails as it
 * would without sonde (split around a protected number that ends the
 * range, it made no call at all and "succeeded").  CLOSE_RANGE_CLOEXEC
 * closes nothing, and the collector's descriptors are close-on-exec
 * already.  CLOSE_RANGE_UNSHARE is the caller's even when every number in
 * the range is protected: its table is unshared by a call on a range
 * that holds no descriptor. */
EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first > last || ((unsigned)flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) ||
	    (flags & CLOSE_RANGE_CLOEXEC))
		return REAL(close_range) ? REAL(close_range)(first, last, flags)
					: (int)syscall(SYS_close_range, first, last, flags);
	return close_range_around(first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	if (lowfd < 0)
		lowfd = 0;
	if (close_range_around((unsigned)lowfd, ~0u, 0) < 0) {
		/* close_range is missing: close one by one, as glibc would. */
		for (int fd = lowfd; fd < 65536; fd++)
			if (!keep_open(fd))
				syscall(SYS_close, fd);
	}
}

/* ---- exit paths that skip destructors ---- */

EXPORT void _exit(int status)
{
	RESOLVE(_exit);
	if (__sonde_vforked) /* a vfork child: nothing of sonde's is its own */
		REAL(_exit)(status);
	follow_note_exit(status);
	collector_exit_hook();
	collector_release_shared();
	REAL(_exit)(status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	RESOLVE(_Exit);
	if (__sonde_vforked)
		REAL(_Exit)(status);
	follow_note_exit(status);
	collector_exit_hook();
	collector_release_shared();
	REAL(_Exit)(status);
	__builtin_unreachable();
}
