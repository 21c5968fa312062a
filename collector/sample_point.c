/*
 * Sample points and the pause switch: the parts of global sampling that
 * run in signal handlers (-l, -y) as well as in normal context (the
 * sampling thread, the collector API, start and end).  Every function here
 * is async-signal-safe: system calls through syscall(), atomics, and the
 * data-file writing path; tests/t00-asyncsafe.sh checks it.  The rest of
 * global sampling (settings, the thread, the API) is sampling.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"

EXPORT _Atomic int __sonde_paused;
_Atomic uint32_t g_pause_gen;
struct dfile *g_sp_overview;
int g_sp_sample_sig, g_sp_pause_sig;
_Atomic int g_sp_stopped;
struct sigaction g_sp_chained[2];
_Atomic int g_sp_chained_set[2];
uint64_t g_sp_page_kb = 4;

/* 0 recording, 1 paused, 2 a resume in progress: a pause and a resume
 * racing (two threads, or a -y signal during sonde_resume) never both
 * act, and the thread clocks are marked before anyone sees "recording". */
_Atomic int g_sp_state;

/* Resident set size in kB from /proc/self/statm, 0 when unreadable.
 * Opened each time: the path then names the process that asks, also in
 * a forked child.  Async-signal-safe. */
static uint64_t rss_kb(void)
{
	int fd = (int)syscall(SYS_open, "/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[128];
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "size resident shared ...": the second number, in pages */
	const char *p = buf;
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	uint64_t pages = 0;
	while (*p >= '0' && *p <= '9')
		pages = pages * 10 + (uint64_t)(*p++ - '0');
	return pages * g_sp_page_kb;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000;
}

/* Async-signal-safe. */
void sp_write(uint32_t reason, const char *label)
{
	struct dfile *df = g_sp_overview;
	if (!df)
		return;
	int saved = errno;
	uint64_t all = ~0ull, old = 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof all);
	struct rusage ru;
	if (syscall(SYS_getrusage, RUSAGE_SELF, &ru) < 0)
		__builtin_memset(&ru, 0, sizeof ru);
	size_t len = 0;
	while (label && label[len] && len < SONDE_LABEL_MAX)
		len++;
	size_t size = sizeof(struct sonde_overview_packet) + (len ? (len + 1 + 7) & ~(size_t)7 : 0);
	struct sonde_overview_packet *p = dfile_reserve(df, size);
	if (p) {
		p->type = SONDE_PKT_OVERVIEW;
		p->size = (uint16_t)size;
		p->reason = reason;
		p->time_ns = now_ns();
		trace_clock_raise(p->time_ns + 1);
		p->utime_ns = tv_ns(&ru.ru_utime);
		p->stime_ns = tv_ns(&ru.ru_stime);
		p->minflt = (uint64_t)ru.ru_minflt;
		p->majflt = (uint64_t)ru.ru_majflt;
		p->inblock = (uint64_t)ru.ru_inblock;
		p->oublock = (uint64_t)ru.ru_oublock;
		p->nvcsw = (uint64_t)ru.ru_nvcsw;
		p->nivcsw = (uint64_t)ru.ru_nivcsw;
		p->maxrss_kb = (uint64_t)ru.ru_maxrss;
		p->rss_kb = rss_kb();
		p->label_len = (uint32_t)len;
		p->reserved = 0;
		if (len) {
			char *l = (char *)(p + 1);
			__builtin_memcpy(l, label, len);
			__builtin_memset(l + len, 0, size - sizeof *p - len);
		}
		dfile_commit(df, size);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
	errno = saved;
}

/* Async-signal-safe. */
int sp_set_paused(int paused, uint32_t reason, const char *label)
{
	if (paused) {
		int expect = 0;
		if (!atomic_compare_exchange_strong(&g_sp_state, &expect, 1))
			return 0;
		atomic_store_explicit(&__sonde_paused, 1, memory_order_release);
		sp_write(reason ? reason : SONDE_OV_PAUSE, label);
		return 1;
	}
	if (atomic_load(&g_sp_stopped))
		return 0; /* terminated, or past -t END: for good */
	int expect = 1;
	if (!atomic_compare_exchange_strong(&g_sp_state, &expect, 2))
		return 0;
	sp_write(reason ? reason : SONDE_OV_RESUME, label);
	/* Each thread's recorded CPU time restarts now: read every clock,
	 * then publish the generation, then let samples be weighed again
	 * (clock_paused_skip reads in the opposite order). */
	uint32_t gen = atomic_load(&g_pause_gen) + 1;
	clock_mark_resume(gen);
	atomic_store_explicit(&g_pause_gen, gen, memory_order_release);
	atomic_store_explicit(&__sonde_paused, 0, memory_order_release);
	atomic_store(&g_sp_state, 0);
	return 1;
}

/* The -l (sample) and -y (pause/resume) signals.  The target's own action
 * for the signal, when it set one, runs after ours.  Async-signal-safe. */
void sp_signal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	int which = -1;
	if (sig == g_sp_sample_sig) {
		which = 0;
		sp_write(SONDE_OV_SIGNAL, NULL);
	} else if (sig == g_sp_pause_sig) {
		which = 1;
		sp_set_paused(atomic_load(&g_sp_state) == 0, 0, NULL);
	}
	errno = saved;
	if (which >= 0 && atomic_load(&g_sp_chained_set[which])) {
		struct sigaction *a = &g_sp_chained[which];
		if (a->sa_flags & SA_SIGINFO) {
			if (a->sa_sigaction)
				a->sa_sigaction(sig, si, uc);
		} else if (a->sa_handler != SIG_IGN && a->sa_handler != SIG_DFL) {
			a->sa_handler(sig);
		}
	}
}
