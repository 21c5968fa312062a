/*
 * Start-up and shutdown of the collector.
 *
 * The library is inert unless `sonde collect` started this process or a
 * followed ancestor handed it the settings (follow.c says how): the founder
 * records into SONDE_EXPDIR, a descendant into a sub-experiment inside it.
 * An exec that sonde did not see finds log.xml already there and only
 * notes the exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sonde/settings.h>

#include "collector.h"

struct collector_state g_col;

static _Atomic int g_finished;

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = sonde_getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return *end ? dflt : (uint64_t)v;
}

static void line(struct xbuf *b)
{
	xb_str(b, "\n");
	log_line(b->p, b->len);
	xb_init(b, b->p, b->cap);
}

static void read_cmdline(char *out, size_t cap)
{
	out[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = 0;
}

/* The part of the header known before anything else starts, so that it
 * precedes any warning logged while starting. */
static void write_prolog(void)
{
	char mem[16384];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
	line(&b);
	xb_str(&b, "<experiment");
	xb_attr_u64(&b, "format", SONDE_FORMAT_VERSION);
	xb_attr_str(&b, "collector", "sonde " SONDE_COLLECTOR_VERSION);
	xb_str(&b, ">");
	line(&b);

	char cwd[PATH_MAX], exe[PATH_MAX], cmd[4096];
	if (!getcwd(cwd, sizeof cwd))
		strcpy(cwd, "?");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	read_cmdline(cmd, sizeof cmd);
	xb_str(&b, "<target");
	xb_attr_u64(&b, "pid", (uint64_t)getpid());
	xb_attr_u64(&b, "ppid", (uint64_t)getppid());
	xb_attr_str(&b, "cwd", cwd);
	xb_attr_str(&b, "exe", exe);
	xb_attr_str(&b, "command", cmd);
	xb_str(&b, "/>");
	line(&b);

	struct utsname u;
	uname(&u);
	char host[256];
	if (gethostname(host, sizeof host))
		strcpy(host, "?");
	host[sizeof host - 1] = 0;
	xb_str(&b, "<system");
	xb_attr_str(&b, "host", host);
	xb_attr_str(&b, "os", u.sysname);
	xb_attr_str(&b, "release", u.release);
	xb_attr_str(&b, "arch", u.machine);
	xb_attr_u64(&b, "cpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	xb_attr_u64(&b, "pagesize", (uint64_t)sysconf(_SC_PAGESIZE));
	xb_attr_u64(&b, "memory_kb",
		    (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
	xb_str(&b, "/>");
	line(&b);
}

/* <settings>: each module's part (its interval, signal, depth ...) and
 * the run's; <time>; the layout of each module's file. */
static void write_settings(const struct clock_settings *cs, uint64_t limit_mb, uint64_t duration_s)
{
	char mem[4096];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<settings");
	cmod_settings(&b, cs);
	xb_attr_u64(&b, "size_limit_mb", limit_mb);
	xb_attr_u64(&b, "duration_s", duration_s);
	const char *follow = sonde_getenv(SONDE_ENV_FOLLOW);
	xb_attr_str(&b, "follow", follow && *follow ? follow : "on");
	xb_str(&b, "/>");
	line(&b);

	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	xb_str(&b, "<time");
	xb_attr_u64(&b, "start_ns", g_col.start_ns);
	xb_str(&b, " realtime=\"");
	xb_u64(&b, (uint64_t)rt.tv_sec);
	xb_str(&b, ".");
	char frac[10];
	long ns = rt.tv_nsec;
	for (int i = 8; i >= 0; i--, ns /= 10)
		frac[i] = (char)('0' + ns % 10);
	frac[9] = 0;
	xb_str(&b, frac);
	xb_str(&b, "\"/>");
	line(&b);

	cmod_dataformat(&b);
}

static void note_exec_in_target(const char *dir)
{
	if (log_open(dir, 0) < 0)
		return;
	char cmd[1024], text[1200];
	read_cmdline(cmd, sizeof cmd);
	snprintf(text, sizeof text, "the target replaced itself by exec; the new image is not profiled: %s", cmd);
	log_event_text("warning", text);
	log_close();
}

/* Why a sub-experiment could not be made, into why (cap bytes), after a
 * failed `what` ("directory", "log.xml") with errno `err`. */
static void start_failed(char *why, size_t cap, const char *what, int err)
{
	if (err == ENAMETOOLONG)
		snprintf(why, cap, "its experiment's path is too long");
	else if (err == EEXIST)
		snprintf(why, cap, "its experiment's name is taken (log.xml exists)");
	else
		snprintf(why, cap, "cannot create its experiment's %s: %s", what, strerror(err));
}

/* Start recording into `dir` (created here for a sub-experiment).
 * Returns 0, or -1 when this process records nothing; then, for a
 * sub-experiment, why (cap bytes) says why, and no directory is left. */
static int collector_start(const char *dir, int subexp, char *why, size_t cap)
{
	if (strlen(dir) >= sizeof g_col.expdir) {
		start_failed(why, cap, "directory", ENAMETOOLONG);
		return -1;
	}
	strcpy(g_col.expdir, dir);
	g_col.pid = getpid();
	g_col.start_ns = now_ns();
	/* Find sonde's own code now, in normal context and before any fork:
	 * a clone child may not take the loader's lock (another thread of
	 * the parent may have held it at the clone) to find it later. */
	trace_own_pc(0);
	int made = 0;
	if (subexp) {
		made = mkdir(dir, 0777) == 0;
		if (!made && errno != EEXIST) {
			start_failed(why, cap, "directory", errno);
			return -1;
		}
	}
	if (log_open(dir, 1) < 0) {
		int err = errno;
		if (err == EEXIST && !subexp)
			note_exec_in_target(dir);
		start_failed(why, cap, "log.xml", err);
		if (made)
			rmdir(dir);
		return -1;
	}
	uint64_t interval_ns = env_u64(SONDE_ENV_CLOCK_NS, 10000000);
	uint64_t depth64 = env_u64(SONDE_ENV_DEPTH, SONDE_DEFAULT_DEPTH);
	int depth = depth64 >= 1 && depth64 <= SONDE_MAX_DEPTH_LIMIT ? (int)depth64 : SONDE_DEFAULT_DEPTH;
	uint64_t limit_mb = env_u64(SONDE_ENV_LIMIT_MB, 0);
	uint64_t duration_s = env_u64(SONDE_ENV_DURATION_S, 0);
	if (limit_mb)
		atomic_store(&g_bytes_limit, limit_mb << 20);
	if (duration_s)
		g_col.stop_ns = g_col.start_ns + duration_s * 1000000000ull;

	write_prolog();
	interpose_init();
	/* Each module opens (its files and settings), in their order
	 * (modules.c): the stacks, the clock, ... */
	struct clock_settings cs = { interval_ns, depth };
	cmod_open(&cs);
	write_settings(&cs, limit_mb, duration_s);
	sp_write(SONDE_OV_START, NULL);
	log_event_text("start", NULL);
	atomic_store(&g_finished, 0);
	atomic_store(&g_col.active, 1);
	cmod_start();
	/* After the start point: collect's periodic points come after it. */
	if (shared_register(follow_lineage()) < 0 && shared_period_ns())
		log_event_text("warning", "sonde collect has no room to sample this process (more than 128 "
					  "recording at once, or a lineage over 615 bytes); no periodic sample points");
	return 0;
}

__attribute__((constructor)) static void sonde_init(void)
{
	const char *founder = sonde_getenv(SONDE_ENV_EXPDIR);
	if (!founder || !*founder || !follow_identify())
		return;
	int saved = errno;
	clock_mark_begin(); /* from here the collector's own time */
	char dir[sizeof g_col.expdir], why[256];
	shared_attach();
	if (follow_init(founder, dir, sizeof dir)) {
		if (collector_start(dir, follow_lineage()[0] != 0, why, sizeof why) < 0)
			follow_unrecorded(why);
		else
			clock_process_started();
	} else
		interpose_init(); /* tracked, not recorded: still follow fork */
	/* Registered last, so that in a fork child it runs after the other
	 * child handlers (the unwinder's releases the lock that starting an
	 * experiment takes). */
	pthread_atfork(follow_fork_prepare, NULL, follow_fork_child);
	follow_register_exit();
	errno = saved;
}

/* In a followed child of fork or clone, after collector_fork_child().
 * Returns 0, or -1 with why (cap bytes) when it records nothing. */
int collector_restart(const char *dir, char *why, size_t cap)
{
	int saved = errno;
	int rc = collector_start(dir, 1, why, cap);
	cmod_restart();
	if (rc == 0)
		clock_process_started();
	errno = saved;
	return rc;
}

void collector_threads_quit(void)
{
	cmod_quit();
}

/* The records that close this image's experiment: the overview's last
 * point, the end event with each module's part (its counts; the JIT map
 * and errors about data that could not be written before it). */
static void write_end_records(void)
{
	sp_write(SONDE_OV_END, NULL);
	char mem[512];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"end\"");
	xb_attr_u64(&b, "time_ns", now_ns());
	cmod_end(&b);
	xb_str(&b, "/>\n");
	if (atomic_load(&g_limit_hit)) {
		char lim[256];
		struct xbuf lb;
		xb_init(&lb, lim, sizeof lim);
		xb_str(&lb, "<event kind=\"warning\"");
		xb_attr_u64(&lb, "time_ns", atomic_load(&g_limit_hit_ns) ? atomic_load(&g_limit_hit_ns) : now_ns());
		xb_str(&lb, " text=\"the experiment size limit (-L) was reached; later data was dropped\"/>\n");
		log_line(lim, lb.len);
	}
	if (g_col.stop_ns && now_ns() > g_col.stop_ns)
		log_event_text("info", "data collection stopped at the duration limit (-t)");
	log_line(mem, b.len);
}

/* Finish the experiment once.  Runs from the library destructor, or from
 * _exit/_Exit, in the process that owns the experiment only (never in a
 * vfork or fork child). */
void collector_exit_hook(void)
{
	if (!atomic_load(&g_col.active) || getpid() != g_col.pid)
		return;
	if (atomic_exchange(&g_finished, 1))
		return;
	int saved = errno;
	clock_exit_tail();
	shared_end();
	cmod_quit();
	cmod_stop();
	write_end_records();
	cmod_finish();
	errno = saved;
}

/* attach.c: a recording started in a running process (a late load), the
 * founder of the experiment sonde collect made: no lineage, no children
 * followed.  Its threads' time is counted from now (clock_from_now), not
 * from their start. */
int collector_attach_start(const char *dir, char *why, size_t cap)
{
	int saved = errno;
	clock_from_now();
	int rc = collector_start(dir, 0, why, cap);
	errno = saved;
	return rc;
}

/* A thread that began after the attach, on itself (no interposer of
 * pthread_create sees a late-loaded library). */
void collector_attach_thread(void)
{
	if (!atomic_load(&g_col.active) || getpid() != g_col.pid || atomic_load(&g_finished))
		return;
	int saved = errno;
	clock_thread_begin();
	errno = saved;
}

/* The end of an attached recording, on the thread that ends it; the
 * process runs on: the closing records as at an exit, then the sampling
 * signal's action put back. */
void collector_attach_stop(void)
{
	if (!atomic_load(&g_col.active) || getpid() != g_col.pid || atomic_load(&g_finished))
		return;
	int saved = errno;
	collector_exit_hook();
	clock_detach_signal();
	errno = saved;
}

/* An exec replaces the image, and nothing of this one runs after a
 * successful exec to close its experiment: write the closing records
 * now.  An exec can also fail (a shell tries every PATH entry), and then
 * the program goes on as if nothing had happened, so this stops nothing:
 * samples, tracing and the overview go on, and the next end records (a
 * later exec's, or the exit's) supersede these.  Only the exec'ing thread
 * holds its samples, so that the CPU time it hands the new image
 * (clock_thread_recorded_cpu) is exactly what was recorded.  Returns
 * whether an exec failure must be reported to collector_exec_failed. */
static uint64_t g_exec_ns;

int collector_exec_prepare(void)
{
	if (!atomic_load(&g_col.active) || getpid() != g_col.pid || atomic_load(&g_finished))
		return 0;
	int saved = errno;
	g_exec_ns = now_ns();
	cmod_exec_prepare();
	char mem[128];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"exec\"");
	xb_attr_u64(&b, "time_ns", g_exec_ns);
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	shared_end();
	write_end_records();
	errno = saved;
	return 1;
}

/* The exec failed with `err`: the records since collector_exec_prepare
 * are void (readers drop them, see doc/experiment-format.md), and the
 * exec'ing thread samples again. */
void collector_exec_failed(int err, const char *what)
{
	int saved = errno;
	char text[1200];
	snprintf(text, sizeof text, "exec of %s failed (%s); recording goes on", what, strerror(err));
	char mem[1600];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event kind=\"exec_failed\"");
	xb_attr_u64(&b, "time_ns", now_ns());
	xb_attr_u64(&b, "since_ns", g_exec_ns);
	xb_attr_u64(&b, "errno", (uint64_t)err);
	b.cap = sizeof mem - 8;
	xb_attr_str(&b, "text", text);
	b.cap = sizeof mem;
	b.overflow = 0;
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
	shared_register(follow_lineage());
	cmod_exec_failed();
	errno = saved;
}

static pid_t g_shares_table; /* the process that shares its parent's table */

void collector_shares_table(void)
{
	g_shares_table = getpid();
}

void collector_release_shared(void)
{
	if (!g_shares_table || g_shares_table != getpid() || g_col.pid != getpid() || !atomic_load(&g_finished))
		return;
	g_shares_table = 0;
	int saved = errno;
	cmod_close_fds();
	log_close();
	errno = saved;
}

void collector_fork_child(void)
{
	atomic_store(&g_col.active, 0);
	shared_fork_child();
	cmod_fork_child();
	log_close();
}

__attribute__((destructor)) static void sonde_fini(void)
{
	collector_exit_hook();
}
