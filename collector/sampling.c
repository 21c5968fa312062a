/*
 * Global sampling: sample points at a wall-clock period (-S), on a
 * signal (-l), around pause/resume (-y, the collector API, -t START-END),
 * and the collector API's entry points (include/sonde/collector.h).
 *
 * The periodic points are written by `sonde collect`, outside the target
 * (cmd/collect.c, sonde/shared.h): it reads each recording process's
 * usage from /proc/PID at every period and writes the point into the
 * experiment's "periodic" file.  A timer signal would cut the target's
 * sleeps and blocking calls short (nanosleep returns EINTR even under
 * SA_RESTART), and a thread of the collector's own, which kept the period
 * before, made the target multithreaded (unshare(CLONE_NEWUSER) failed,
 * /proc/self/status counted it, glibc took its cancellable system call
 * path).  Because collect sleeps on wall-clock time, periodic points
 * advance while the target sleeps too (gprofng's are driven by the
 * profiling signal and only advance while it burns CPU).
 *
 * The -t START-END window is the one thing that needs a thread in the
 * target: pausing and resuming change the process's own state (every
 * thread's CPU clock is read at a resume) at a time the target may spend
 * asleep.  Only with -t does the collector start one (sonde-sampler),
 * and it returns at the window's end.
 *
 * The packet writing and the pause switch are in sample_point.c
 * (async-signal-safe, used by the -l/-y handler too).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sonde/settings.h>

#include "collector.h"
#include "../tracers/tracer.h"

static uint64_t g_period_ns;
static uint64_t g_start_at_ns, g_stop_at_ns; /* absolute; 0: none */
static int g_start_paused;
static _Atomic int g_quit;
static int g_thread_running;

static uint64_t env_num(const char *name, uint64_t dflt)
{
	const char *s = sonde_getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	return errno || *end ? dflt : (uint64_t)v;
}

static int env_sig(const char *name)
{
	uint64_t v = env_num(name, 0);
	return v >= 1 && v < (uint64_t)NSIG && v != SIGKILL && v != SIGSTOP ? (int)v : 0;
}

void sampling_signals(void)
{
	g_sp_sample_sig = env_sig(SONDE_ENV_SAMPLE_SIG);
	g_sp_pause_sig = env_sig(SONDE_ENV_PAUSE_SIG);
	if (g_sp_pause_sig == g_sp_sample_sig)
		g_sp_pause_sig = 0; /* collect refuses this; never two meanings */
}

void sampling_init(struct dfile *overview)
{
	g_sp_overview = overview;
	long page = sysconf(_SC_PAGESIZE);
	if (page >= 1024)
		g_sp_page_kb = (uint64_t)page / 1024;
	g_period_ns = env_num(SONDE_ENV_SAMPLE_NS, 1000000000ull);
	sampling_signals();
	g_start_paused = g_sp_pause_sig && env_num(SONDE_ENV_PAUSE_START, 0);
	uint64_t start = env_num(SONDE_ENV_START_NS, 0), stop = env_num(SONDE_ENV_STOP_NS, 0);
	if (stop && stop <= start)
		stop = 0;
	g_start_at_ns = start ? g_col.start_ns + start : 0;
	g_stop_at_ns = stop ? g_col.start_ns + stop : 0;
	if (g_stop_at_ns && (!g_col.stop_ns || g_stop_at_ns < g_col.stop_ns))
		g_col.stop_ns = g_stop_at_ns; /* the clock handler's own check */
	if (g_start_paused || g_start_at_ns) {
		/* before any thread is profiled or traced: nothing to rebase */
		atomic_store(&g_sp_state, 1);
		atomic_store(&__sonde_paused, 1);
	}

	char mem[512];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<sampling");
	xb_attr_u64(&b, "period_ns", g_period_ns);
	xb_attr_u64(&b, "signal", (uint64_t)g_sp_sample_sig);
	xb_attr_u64(&b, "pause_signal", (uint64_t)g_sp_pause_sig);
	xb_attr_u64(&b, "start_paused", (uint64_t)(g_start_paused || g_start_at_ns));
	xb_attr_u64(&b, "start_ns", start);
	xb_attr_u64(&b, "stop_ns", stop);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
}

static void *sampler(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	real_pthread_sigmask_call(SIG_BLOCK, &all, NULL);
	while (!atomic_load(&g_quit)) {
		uint64_t wake = UINT64_MAX;
		if (g_start_at_ns && g_start_at_ns < wake)
			wake = g_start_at_ns;
		if (g_stop_at_ns && g_stop_at_ns < wake)
			wake = g_stop_at_ns;
		if (wake == UINT64_MAX)
			break;
		/* A futex wait on g_quit, so that sampling_stop wakes it:
		 * FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time. */
		struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
		if (syscall(SYS_futex, &g_quit, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts, NULL,
			    FUTEX_BITSET_MATCH_ANY) < 0 &&
		    errno != ETIMEDOUT && errno != EINTR && errno != EAGAIN) {
			/* cannot sleep: stop rather than spin */
			if (errno == EPERM && sysgate_active()) {
				log_event_text("warning", "the -t window is not kept: the target's seccomp filter "
							  "refuses the futex its thread sleeps in");
				sysgate_thread_exit();
			}
			break;
		}
		if (atomic_load(&g_quit))
			break;
		uint64_t now = now_ns();
		if (g_start_at_ns && now >= g_start_at_ns) {
			g_start_at_ns = 0;
			sp_set_paused(0, SONDE_OV_RESUME, "-t start");
		}
		if (g_stop_at_ns && now >= g_stop_at_ns) {
			g_stop_at_ns = 0;
			atomic_store(&g_sp_stopped, 1);
			sp_set_paused(1, SONDE_OV_PAUSE, "-t end");
			log_event_text("info", "data collection stopped at the end of the -t window");
		}
	}
	return NULL;
}

static void install_signal(int sig, int which)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sp_signal_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (real_sigaction_call(sig, &sa, &old) < 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "cannot install the handler of signal %d (%s); %s disabled", sig,
			 strerror(errno), which ? "-y pause/resume" : "-l sampling");
		log_event_text("error", msg);
		if (which)
			g_sp_pause_sig = 0;
		else
			g_sp_sample_sig = 0;
		return;
	}
	if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
		g_sp_chained[which] = old;
		atomic_store(&g_sp_chained_set[which], 1);
	}
}

void sampling_start(void)
{
	if (g_sp_sample_sig)
		install_signal(g_sp_sample_sig, 0);
	if (g_sp_pause_sig)
		install_signal(g_sp_pause_sig, 1);
	if (g_period_ns && !shared_period_ns())
		log_event_text("warning", "sonde collect does not sample this process (it has ended, or the "
					  "page it shares is missing); no periodic sample points");
	if (!g_start_at_ns && !g_stop_at_ns)
		return;
	int rc = collector_thread(sampler, "sonde-sampler");
	if (rc) {
		char msg[160];
		snprintf(msg, sizeof msg, "cannot start the sampling thread (%s); -t START-END disabled",
			 strerror(rc));
		log_event_text("error", msg);
		/* a window that cannot open must not leave recording paused */
		if (g_start_at_ns && !g_start_paused)
			sp_set_paused(0, SONDE_OV_RESUME, "-t start");
		return;
	}
	g_thread_running = 1;
}

void sampling_stop(void)
{
	atomic_store(&g_quit, 1);
	syscall(SYS_futex, &g_quit, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

void sampling_fork_child(void)
{
	/* The thread does not exist in the child, and the file is the
	 * parent's. */
	g_sp_overview = NULL;
	g_thread_running = 0;
	atomic_store(&g_quit, 1);
}

static _Atomic int g_noted_sig;

int sampling_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int which = sig && sig == g_sp_sample_sig ? 0 : sig && sig == g_sp_pause_sig ? 1 : -1;
	if (which < 0 || !atomic_load(&g_col.active))
		return 0;
	if (old) {
		if (atomic_load(&g_sp_chained_set[which])) {
			*old = g_sp_chained[which];
		} else {
			memset(old, 0, sizeof *old);
			old->sa_handler = SIG_DFL;
		}
	}
	if (act) {
		/* The target's handler runs after sonde's: it is not
		 * stolen from the target, and the signal still samples. */
		atomic_store(&g_sp_chained_set[which], 0);
		g_sp_chained[which] = *act;
		if ((act->sa_flags & SA_SIGINFO) || (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN))
			atomic_store(&g_sp_chained_set[which], 1);
		if (!atomic_exchange(&g_noted_sig, 1)) {
			char msg[200];
			snprintf(msg, sizeof msg,
				 "target set an action for signal %d, which sonde uses for %s; sonde keeps its "
				 "handler and runs the target's after it",
				 sig, which ? "-y pause/resume" : "-l sampling");
			log_event_text("warning", msg);
		}
	}
	return 1;
}

/* ---- the collector API (include/sonde/collector.h, api/sonde_api.c) ----
 *
 * Exported under internal names that libsonde_api looks up with dlsym:
 * without the collector in the process, the API is a no-op.  A process
 * that is not the one being collected (a forked child) does nothing. */

static int api_ok(void)
{
	return atomic_load(&g_col.active) && getpid() == g_col.pid;
}

EXPORT void __sonde_api_sample(const char *label)
{
	if (api_ok())
		sp_write(SONDE_OV_API, label);
}

EXPORT void __sonde_api_pause(void)
{
	if (api_ok())
		sp_set_paused(1, SONDE_OV_PAUSE, NULL);
}

EXPORT void __sonde_api_resume(void)
{
	if (api_ok())
		sp_set_paused(0, SONDE_OV_RESUME, NULL);
}

void collector_exit_hook(void);

EXPORT void __sonde_api_terminate(void)
{
	if (!api_ok())
		return;
	atomic_store(&g_sp_stopped, 1);
	atomic_store(&__sonde_paused, 1);
	log_event_text("info", "data collection terminated by sonde_terminate()");
	collector_exit_hook();
}

/* ---- the module (collector.h) ---- */

static struct dfile *g_overview; /* the sample points' file */

static void sampling_open(struct clock_settings *cs)
{
	(void)cs;
	g_overview = dfile_create(g_col.expdir, sonde_kind_desc(SONDE_KIND_OVERVIEW)->file, SONDE_KIND_OVERVIEW);
	sampling_init(g_overview);
}

static void sampling_end(struct xbuf *b)
{
	(void)b;
	dfile_end_errors(g_overview);
}

static void sampling_finish(void)
{
	dfile_finish(g_overview);
}

static void sampling_module_fork_child(void)
{
	sampling_fork_child();
	dfile_forget(g_overview);
	g_overview = NULL;
}

static void sampling_close_fds(void)
{
	dfile_close_fd(g_overview);
}

static const struct sonde_packet_format sampling_packets[] = {
	{ SONDE_PKT_OVERVIEW, "overview", 104,
	  "type:0:u16 size:2:u16 reason:4:u32 time_ns:8:u64 utime_ns:16:u64 stime_ns:24:u64 "
	  "minflt:32:u64 majflt:40:u64 inblock:48:u64 oublock:56:u64 nvcsw:64:u64 nivcsw:72:u64 "
	  "maxrss_kb:80:u64 rss_kb:88:u64 label_len:96:u32 reserved:100:u32 label:104:char[label_len]" },
};

const struct collector_module sampling_module = {
	.name = "sampling",
	.kind = SONDE_KIND_OVERVIEW,
	.packets = sampling_packets,
	.npackets = 1,
	.open = sampling_open,
	.start = sampling_start,
	.quit = sampling_stop,
	.end = sampling_end,
	.finish = sampling_finish,
	.fork_child = sampling_module_fork_child,
	.close_fds = sampling_close_fds,
};
