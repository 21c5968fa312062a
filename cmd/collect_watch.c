/*
 * Clock profiling's guard, kept by `sonde collect` outside the target.
 *
 * Two things must be noticed while the target runs, and with no thread of
 * the collector's own in the target (collect_clock.c says why) nothing in
 * it would notice them:
 *
 * - The profiling signal's action replaced behind the collector's back by
 *   a bare rt_sigaction system call (the libc entries and syscall(3) are
 *   interposed), typically a reset of every action to SIG_DFL: the next
 *   sample would kill the target.  Seen here in SigCgt of
 *   /proc/PID/status, the signals the process catches, every 50 ms.
 * - The sampling counters closed by the target (the raw close_range
 *   system call, dup2 onto their numbers): sampling stops silently.  Seen
 *   here as CPU time without samples: the process's CPU clock advanced by
 *   many intervals while the collector's count of sample signals (read
 *   with process_vm_readv; counted paused or not) did not.  Threads that
 *   start check too (clock.c).
 *
 * And one thing only told about: a tracer attached later (gdb -p) to a
 * process that samples with SIGTRAP or a real-time signal, at each of
 * which a debugger stops it.  Nothing can be switched from here, and no
 * call made while another tracer holds the process, so the warning names
 * the `handle` line that lets the debug session run (note_tracer).
 *
 * What has to be done about either can only be done inside the target: a
 * POSIX CPU timer cannot be disarmed from another process, and a counter
 * must be opened by (and for) the target's threads.  So collect calls the
 * collector: it attaches to one thread of the process with PTRACE_SEIZE,
 * stops it (PTRACE_INTERRUPT), saves its registers (general and extended
 * state), makes it run the collector's trampoline, which calls
 * clock_call_in(what) on a stack of the collector's own, posts the result
 * with the caller's token and spins; collect reads the post, interrupts
 * the spin, restores every register and detaches.  No signal is involved
 * (an int3 there once killed a target that blocked every signal: the
 * kernel forces such a trap by resetting its action).  The thread goes on
 * where it was; a system call it was in is restarted as after a signal's
 * handler.  Profiling signals that arrive while it is attached are
 * discarded (their weight goes to the thread's next sample); others are
 * delivered.  A call is a few ptrace round trips, and is made only when
 * one of the two things happened (the counter check backs off when it
 * finds nothing).
 *
 * The target is a child of this process: the kernel reports the ptrace
 * stops of a child traced by a thread of its parent's own process to any
 * waiter of the process (kernel/exit.c, "traced by its real parent's
 * group"), so the main thread waits for the target's end on a pidfd
 * instead of in waitpid (collect_clock_wait), and the waits here use
 * WNOWAIT for an exit, which is the main thread's to reap.
 *
 * x86-64 only (the registers); elsewhere the collector publishes nothing
 * to call and a lost action is not caught (doc/sonde-collect.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/shared.h>

#include "commands.h"

#define WATCH_NS 50000000ull
#define RETRY_NS 2000000ull
/* CPU time without a sample signal, in intervals, before the counters
 * are checked; doubled (up to 64 times) after each check that found them
 * whole, so that a process without samples for a reason of its own (the
 * collector stopped profiling at a -d limit or an internal error) does
 * not cost a call every 50 ms. */
#define STALL_INTERVALS 50

struct watch {
	uint32_t pid;
	uint64_t starttime, start_ns; /* the image, as its slot names it */
	int done;		      /* the action was lost and handled, or cannot be */
	int busy;		      /* the last call found the registry busy: again soon */
	uint64_t cpu0, samples0;      /* at the last sample seen */
	unsigned backoff;
	int held_noted;		      /* a thread holding the signal blocked was logged */
	int filter_noted;	      /* a seccomp filter the collector did not see was logged */
	uint32_t tracer;	      /* the tracer last told about */
};

static struct watch g_watch[SONDE_SHARED_SLOTS];
static pid_t g_child; /* the target: this process's child, reaped by the main thread */
static int g_calls_ok;
/* The token of the last call, which its trampoline posts back. */
static unsigned long long g_token;

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void collect_watch_init(pid_t child, int calls_ok)
{
	g_child = child;
	g_calls_ok = calls_ok;
}

/* An event in the image's log.xml (one line, one write, O_APPEND). */
static void log_event(const char *expdir, const struct sonde_shared_slot *s, const char *kind, const char *text)
{
	char path[PATH_MAX + 1100], line[1024];
	if (s->lineage[0])
		snprintf(path, sizeof path, "%s/%.1000s.er/log.xml", expdir, s->lineage);
	else
		snprintf(path, sizeof path, "%s/log.xml", expdir);
	int n = snprintf(line, sizeof line, "<event kind=\"%s\" time_ns=\"%llu\" text=\"", kind,
			 (unsigned long long)mono());
	for (const char *p = text; *p && n < (int)sizeof line - 16; p++) {
		const char *esc = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;" : NULL;
		if (esc)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s", esc);
		else
			line[n++] = *p;
	}
	n += snprintf(line + n, sizeof line - (size_t)n, "\"/>\n");
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* nothing more to do */
	}
	close(fd);
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* 1: the process catches `sig`; 0: it does not; -1: gone or unreadable.
 * Also checks that the pid is still the slot's process (starttime), and
 * gives its tracer (TracerPid) in *tracer. */
static int catches(uint32_t pid, uint64_t starttime, int sig, uint32_t *tracer, uint32_t *filters)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return -1;
	p += 2;
	for (int field = 3; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	if (strtoull(p, NULL, 10) != starttime)
		return -1;
	snprintf(path, sizeof path, "/proc/%u/status", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	const char *t = strstr(buf, "\nTracerPid:");
	*tracer = t ? (uint32_t)strtoul(t + 11, NULL, 10) : 0;
	const char *f = strstr(buf, "\nSeccomp_filters:");
	*filters = f ? (uint32_t)strtoul(f + 17, NULL, 10) : 0;
	p = strstr(buf, "\nSigCgt:");
	if (!p)
		return -1;
	uint64_t mask = strtoull(p + 8, NULL, 16);
	return (mask >> (sig - 1)) & 1;
}

#if defined(__x86_64__)
/* Wait for the next stop of the attached `tid` (with `nohang`, only look
 * for one).  Returns the waitpid-style status of a stop, 0 when nohang
 * found none, or -1 when it ended (not reaped when it is the target: the
 * main thread reaps it). */
static int wait_stop(pid_t tid, int nohang)
{
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)tid, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL | (nohang ? WNOHANG : 0)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (si.si_pid == 0) {
			if (nohang)
				return 0;
			continue;
		}
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
			/* A descendant that is not our child waits to be
			 * released to its parent by its tracer's wait. */
			if (tid != g_child)
				waitpid(tid, NULL, __WALL | WNOHANG);
			return -1;
		}
		if (si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED)
			return (si.si_status << 8) | 0x7f; /* as waitpid: stopped, signal and event */
	}
}

/* Resume from a stop, passing on a signal other than the profiling one. */
static void resume(pid_t tid, int status, int sig)
{
	int s = WSTOPSIG(status);
	int event = status >> 16;
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)(event || s == sig ? 0 : s));
}

/* Stop the attached `tid` (PTRACE_INTERRUPT) and wait for that stop,
 * passing on the signals met on the way (the profiling one discarded).
 * 0, or -errno of the interrupt; *ended set when the thread ended. */
static long interrupt(pid_t tid, int sig, int *ended)
{
	*ended = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		int status = wait_stop(tid, 0);
		if (status < 0) {
			*ended = 1;
			return -ESRCH;
		}
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		resume(tid, status, sig);
	}
}

/* Call clock_call_in(what) in thread `tid`.  Returns its result, or
 * -errno when it could not be called. */
static long call_in(pid_t tid, const struct sonde_shared_slot *s, uint64_t start_ns, long what)
{
	int sig = (int)s->watch_sig;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return -errno;
	long rc = -EIO;
	int status, ended;
	if ((rc = interrupt(tid, sig, &ended)) < 0) {
		if (ended)
			return rc;
		goto detach;
	}
	rc = -EIO;
	/* Stopped now: the image it runs must still be the one whose slot
	 * named the addresses (an exec ends the slot first). */
	if (atomic_load(&((struct sonde_shared_slot *)s)->state) != SONDE_SLOT_LIVE || s->start_ns != start_ns) {
		rc = -ESRCH;
		goto detach;
	}
	struct user_regs_struct saved, r;
	static char xstate[32768];
	struct iovec xv = { xstate, sizeof xstate };
	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0 || ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xv) < 0) {
		rc = -errno;
		goto detach;
	}
	r = saved;
	r.rip = s->call_entry;
	r.rsp = s->call_sp;
	r.rdi = (unsigned long long)what;
	r.rsi = ++g_token;
	r.rax = s->call_fn;
	r.orig_rax = (unsigned long long)-1; /* not in a system call: nothing to restart */
	r.eflags &= ~0x400ull;		     /* the direction flag clear, as at any call */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0) {
		rc = -errno;
		goto restore;
	}
	ptrace(PTRACE_CONT, tid, 0, 0);
	/* The trampoline posts the token and the result, then spins (see
	 * "calls from sonde collect" in collector/clock.c: no int3, no
	 * signal).  Stops on the way are signals to pass on. */
	for (unsigned us = 20;;) {
		if ((status = wait_stop(tid, 1)) < 0)
			return -ESRCH;
		if (status) {
			resume(tid, status, sig);
			continue;
		}
		/* A running tracee's memory: process_vm_readv, not PEEKDATA
		 * (which wants it stopped). */
		uint64_t post[2];
		struct iovec l = { post, sizeof post }, rv = { (void *)(uintptr_t)s->call_done, sizeof post };
		if (process_vm_readv(tid, &l, 1, &rv, 1, 0) == (ssize_t)sizeof post && post[0] == r.rsi) {
			rc = (long)post[1];
			break;
		}
		struct timespec ts = { 0, (long)us * 1000 };
		nanosleep(&ts, NULL);
		if (us < 1000)
			us *= 2;
	}
	/* Out of the spin: the interrupt's stop. */
	long irc = interrupt(tid, sig, &ended);
	if (irc < 0) {
		if (ended)
			return irc;
		rc = irc;
		goto detach;
	}
restore:
	ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xv);
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
detach:
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return rc;
}
#endif

/* Call into some thread of the process: the main one, else any. */
static long call_process(uint32_t pid, const struct sonde_shared_slot *s, uint64_t start_ns, long what)
{
#if defined(__x86_64__)
	long rc = call_in((pid_t)pid, s, start_ns, what);
	if (rc != -EPERM && rc != -ESRCH)
		return rc;
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return rc;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || (uint32_t)tid == pid)
			continue;
		rc = call_in(tid, s, start_ns, what);
		if (rc != -EPERM && rc != -ESRCH)
			break;
	}
	closedir(d);
	return rc;
#else
	(void)pid, (void)s, (void)start_ns, (void)what;
	return -ENOSYS;
#endif
}

/* A thread of the process that holds the profiling signal blocked and
 * pending (a raw rt_sigprocmask: the libc calls are interposed and keep
 * it deliverable), or 0.  Such a thread is not sampled until it unblocks
 * the signal, and its counters are whole: calling in would not help. */
static pid_t signal_held(uint32_t pid, int sig)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	pid_t held = 0;
	struct dirent *e;
	while (!held && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%u/task/%d/status", pid, (int)tid);
		if (read_small(path, buf, sizeof buf) <= 0)
			continue;
		const char *blk = strstr(buf, "\nSigBlk:"), *pnd = strstr(buf, "\nSigPnd:");
		if (blk && pnd && (strtoull(blk + 8, NULL, 16) >> (sig - 1) & 1) &&
		    (strtoull(pnd + 8, NULL, 16) >> (sig - 1) & 1))
			held = tid;
	}
	closedir(d);
	return held;
}

static uint64_t process_cpu(uint32_t pid)
{
	clockid_t cid;
	struct timespec ts;
	if (clock_getcpuclockid((pid_t)pid, &cid) != 0 || clock_gettime(cid, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int read_samples(uint32_t pid, uint64_t addr, uint64_t *out)
{
	struct iovec l = { out, sizeof *out }, r = { (void *)(uintptr_t)addr, sizeof *out };
	return process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof *out ? 0 : -1;
}

/* A tracer other than sonde collect (a debugger attached with gdb -p,
 * strace -p) on a process sampled with a signal a debugger stops at:
 * the one line that lets the session run, on stderr and in log.xml (where
 * the collector has said it already when the tracer was there from its
 * start).  A process traced from its start samples with SIGURG, which
 * gdb passes silently (collector/clock.c); SIGTRAP cannot be passed
 * (gdb's own breakpoints and steps are SIGTRAP), only dropped. */
static void note_tracer(const char *expdir, const struct sonde_shared_slot *s, struct watch *w, uint32_t tracer)
{
	if (tracer == w->tracer || s->watch_sig == SIGURG)
		return;
	w->tracer = tracer;
	char comm[2][64], path[64];
	uint32_t who[2] = { s->pid, tracer };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "/proc/%u/comm", who[i]);
		if (read_small(path, comm[i], sizeof comm[i]) <= 0)
			snprintf(comm[i], sizeof comm[i], "?");
		comm[i][strcspn(comm[i], "\n")] = 0;
	}
	char msg[400];
	if (s->watch_sig == SIGTRAP)
		snprintf(msg, sizeof msg,
			 "process %u (%s) is traced by process %u (%s), which stops it at every sample (SIGTRAP): "
			 "in gdb, handle SIGTRAP nostop noprint nopass (samples are dropped while it is attached)",
			 who[0], comm[0], who[1], comm[1]);
	else
		snprintf(msg, sizeof msg,
			 "process %u (%s) is traced by process %u (%s), which stops it at every sample (SIG%u): "
			 "in gdb, handle SIG%u nostop noprint pass",
			 who[0], comm[0], who[1], comm[1], s->watch_sig, s->watch_sig);
	fprintf(stderr, "sonde collect: warning: %s\n", msg);
	if (tracer != s->start_tracer)
		log_event(expdir, s, "warning", msg);
}

static void watch_one(const char *expdir, struct sonde_shared_slot *s, struct watch *w, int *soon)
{
	uint32_t pid = s->pid;
	if (w->pid != pid || w->starttime != s->starttime || w->start_ns != s->start_ns) {
		memset(w, 0, sizeof *w);
		w->pid = pid;
		w->starttime = s->starttime;
		w->start_ns = s->start_ns;
		w->cpu0 = process_cpu(pid);
		if (s->samples_addr)
			read_samples(pid, s->samples_addr, &w->samples0);
	}
	if (w->done || !s->watch_sig || !s->call_entry)
		return;
	uint32_t tracer = 0, filters = 0;
	int c = catches(pid, s->starttime, (int)s->watch_sig, &tracer, &filters);
	if (c < 0 || atomic_load(&s->state) != SONDE_SLOT_LIVE)
		return;
	/* A seccomp filter the collector did not see go in (a bare system
	 * call instruction): it cannot keep its calls to what the filter
	 * allows (collector/sysgate.c).  Said once; nothing more can be done
	 * from here, and a call into the process could be what it kills. */
	if (filters > atomic_load(&s->filters_seen) && !w->filter_noted) {
		w->filter_noted = 1;
		log_event(expdir, s, "warning",
			  "the process installed a seccomp filter that sonde did not see (by a bare system call "
			  "instruction): a system call of sonde's that the filter kills for may end the process");
	}
	/* Our own calls detach before they return: a tracer seen here is
	 * someone else's. */
	int foreign = tracer && tracer != (uint32_t)getpid();
	if (foreign)
		note_tracer(expdir, s, w, tracer);
	char msg[400];
	if (!c) {
		if (!g_calls_ok) {
			w->done = 1;
			log_event(expdir, s, "warning", "the action of the profiling signal was replaced by a bare "
							"rt_sigaction system call, and sonde collect cannot call into the "
							"process to stop clock profiling (no pidfd); its next sample may kill it");
			return;
		}
		long rc = call_process(pid, s, w->start_ns, SONDE_CALL_LOST);
		if (rc == -EBUSY) {
			*soon = 1;
			return;
		}
		w->done = 1;
		if (rc < 0 && rc != -ESRCH) {
			snprintf(msg, sizeof msg,
				 "the action of signal %u, which sonde samples with, was replaced by a bare "
				 "rt_sigaction system call, and sonde collect could not call into the process to stop "
				 "clock profiling (ptrace: %s); its next sample may kill it",
				 s->watch_sig, strerror((int)-rc));
			log_event(expdir, s, "warning", msg);
		}
		return;
	}
	/* A debugger told to drop SIGTRAP leaves CPU time without samples,
	 * and no call can be made while it holds the process. */
	if (!s->watch_counters || !s->samples_addr || !g_calls_ok || foreign)
		return;
	uint64_t n, cpu = process_cpu(pid);
	if (!cpu || read_samples(pid, s->samples_addr, &n) < 0)
		return;
	if (n != w->samples0 || cpu < w->cpu0) {
		w->samples0 = n;
		w->cpu0 = cpu;
		return;
	}
	uint64_t need = (uint64_t)STALL_INTERVALS * s->interval_ns << w->backoff;
	if (!s->interval_ns || cpu - w->cpu0 < need)
		return;
	pid_t held = signal_held(pid, (int)s->watch_sig);
	if (held) {
		if (!w->held_noted) {
			w->held_noted = 1;
			snprintf(msg, sizeof msg,
				 "thread %d blocks signal %u, which sonde samples with, by a raw rt_sigprocmask system "
				 "call: its CPU time from then on goes to its first sample after it unblocks the signal, "
				 "and is not recorded if it never does",
				 (int)held, s->watch_sig);
			log_event(expdir, s, "warning", msg);
		}
		w->cpu0 = cpu;
		return;
	}
	long rc = call_process(pid, s, w->start_ns, SONDE_CALL_COUNTERS);
	if (rc == -EBUSY) {
		*soon = 1;
		return;
	}
	w->cpu0 = process_cpu(pid);
	read_samples(pid, s->samples_addr, &w->samples0);
	if (rc == 0 && w->backoff < 6)
		w->backoff++;
	else if (rc > 0)
		w->backoff = 0;
	else if (rc < 0 && rc != -ESRCH) {
		w->done = 1; /* cannot call in: the counters are not checked again */
		snprintf(msg, sizeof msg,
			 "the process took no samples for %.3f s of CPU time, and sonde collect could not call "
			 "into it to check the sampling counters (ptrace: %s)",
			 (double)need / 1e9, strerror((int)-rc));
		log_event(expdir, s, "warning", msg);
	}
}

uint64_t collect_watch(void *head, const char *expdir)
{
	int soon = 0;
	for (unsigned i = 0; i < SONDE_SHARED_SLOTS; i++) {
		struct sonde_shared_slot *s =
			(struct sonde_shared_slot *)((char *)head + SONDE_SHARED_PAGE + (size_t)i * SONDE_SHARED_SLOT_SIZE);
		if (atomic_load(&s->state) != SONDE_SLOT_LIVE) {
			g_watch[i].pid = 0;
			continue;
		}
		watch_one(expdir, s, &g_watch[i], &soon);
	}
	return soon ? RETRY_NS : WATCH_NS;
}
