/*
 * `sonde collect`'s side of the page it shares with the collectors
 * (include/sonde/shared.h): the tracing clock's millisecond tick, and the
 * periodic sample points (-S) of every recording process.
 *
 * Both used to be threads in the target (sonde-ticker, sonde-sampler),
 * which made a single-threaded target multithreaded: it counted them at
 * main, unshare(CLONE_NEWUSER) failed, and glibc took its cancellable
 * system call path (__pthread_enable/disable_asynccancel around every
 * read and write: 2% of a syscall-heavy loop).  The other way out, starting
 * them only when the target starts a thread of its own, leaves a
 * single-threaded target with neither: no tick (a clock read per heap
 * event, more than the allocator costs) and no periodic points.  So this
 * thread in `sonde collect`, outside the target, keeps both.
 *
 * A periodic point holds the process's usage as getrusage(RUSAGE_SELF)
 * would give it, read from /proc/PID by the kernel's own process-wide
 * sums: CPU time from the process's CPU clock (nanoseconds, every thread,
 * live or gone), split into user and system in the ratio of stat's utime
 * and stime (as getrusage splits it); page faults from stat; blocks in and
 * out from io (read_bytes and write_bytes in 512-byte blocks, getrusage's
 * units); the resident set from statm and its peak from status (VmHWM).
 * Context switches are counted by the kernel per thread only: the sum
 * over the live threads (task/TID/status), kept from decreasing when a
 * thread ends; the points the collector writes itself (start, end, -l,
 * -y, the API) count the ended threads' switches too.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/format.h>
#include <sonde/shared.h>

#include "commands.h"

#define TICK_NS 1000000ull

struct proc {
	int fd;		     /* its "periodic" file, -1 none */
	uint32_t pid;
	uint64_t starttime, start_ns;
	off_t blk;	     /* offset of the current block, 0 none */
	uint32_t used;
	uint64_t nvcsw, nivcsw; /* the last written: never decreasing */
	int failed;	     /* its file could not be written: no more points */
};

static struct sonde_shared_head *g_head;
static char g_expdir[PATH_MAX];
static pthread_t g_thread;
static int g_running;
static _Atomic int g_quit;
static struct proc g_procs[SONDE_SHARED_SLOTS];
static long g_hz;

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sonde_shared_slot *slot_at(unsigned i)
{
	return (struct sonde_shared_slot *)((char *)g_head + SONDE_SHARED_PAGE + (size_t)i * SONDE_SHARED_SLOT_SIZE);
}

/* Raise the tick word to t; collectors raise it too (a sample point at t
 * raises it to t + 1), so never lower it. */
static void raise_now(uint64_t t)
{
	uint64_t cur = atomic_load(&g_head->now);
	while (cur < t && !atomic_compare_exchange_weak(&g_head->now, &cur, t))
		;
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

/* Field `want` (1-based, as in proc(5)) of /proc/PID/stat after the name. */
static uint64_t stat_field(const char *after_name, int want)
{
	const char *p = after_name;
	for (int field = 3; field < want && *p; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

static uint64_t status_kb(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void ctxt_switches(uint32_t pid, uint64_t *vol, uint64_t *invol)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	DIR *d = opendir(path);
	*vol = *invol = 0;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p2[128];
		snprintf(p2, sizeof p2, "/proc/%u/task/%.20s/status", pid, e->d_name);
		if (read_small(p2, buf, sizeof buf) <= 0)
			continue;
		*vol += status_kb(buf, "\nvoluntary_ctxt_switches:");
		*invol += status_kb(buf, "\nnonvoluntary_ctxt_switches:");
	}
	closedir(d);
}

static void close_proc(struct proc *pr)
{
	if (pr->fd >= 0)
		close(pr->fd);
	memset(pr, 0, sizeof *pr);
	pr->fd = -1;
}

/* An event in the image's log.xml: one whole line by one write on an
 * O_APPEND descriptor, as the collector writes its own. */
static void warn(const struct sonde_shared_slot *s, const char *what, int err)
{
	char path[PATH_MAX + 1100], line[512];
	if (s->lineage[0])
		snprintf(path, sizeof path, "%s/%.1000s.er/log.xml", g_expdir, s->lineage);
	else
		snprintf(path, sizeof path, "%s/log.xml", g_expdir);
	int n = snprintf(line, sizeof line,
			 "<event kind=\"error\" time_ns=\"%llu\" text=\"%s (%s); sonde collect writes no more "
			 "periodic sample points for this process\"/>\n",
			 (unsigned long long)mono(), what, strerror(err));
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* nothing more to do */
	}
	close(fd);
}

/* Start writing the slot's process: open its experiment's periodic file
 * (kept when an exec failed and the same image registers again). */
static int open_proc(struct proc *pr, const struct sonde_shared_slot *s)
{
	pr->pid = s->pid;
	pr->starttime = s->starttime;
	pr->start_ns = s->start_ns;
	pr->failed = 1; /* until the file is open */
	char path[PATH_MAX + 1100];
	if (s->lineage[0])
		snprintf(path, sizeof path, "%s/%.1000s.er/%s", g_expdir, s->lineage, SONDE_PERIODIC_FILE);
	else
		snprintf(path, sizeof path, "%s/%s", g_expdir, SONDE_PERIODIC_FILE);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		warn(s, "cannot create the periodic data file", errno);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (st.st_size < (off_t)SONDE_FILE_HEADER_SIZE) {
		char hdr[SONDE_FILE_HEADER_SIZE];
		memset(hdr, 0, sizeof hdr);
		struct sonde_file_header *h = (struct sonde_file_header *)hdr;
		memcpy(h->magic, SONDE_DATA_MAGIC, 8);
		h->version = SONDE_FORMAT_VERSION;
		h->kind = SONDE_KIND_OVERVIEW;
		h->header_size = SONDE_FILE_HEADER_SIZE;
		h->block_size = SONDE_BLOCK_SIZE;
		h->pid = s->pid;
		h->start_ns = s->start_ns;
		memcpy(h->kind_name, SONDE_PERIODIC_FILE, sizeof SONDE_PERIODIC_FILE);
		if (pwrite(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
			int e = errno ? errno : ENOSPC;
			close(fd);
			unlink(path); /* no file without a header */
			warn(s, "cannot write the periodic data file", e);
			return -1;
		}
		st.st_size = SONDE_FILE_HEADER_SIZE;
	}
	pr->fd = fd;
	pr->failed = 0;
	pr->blk = 0;
	pr->used = 0;
	return 0;
}

/* Append one packet; a new block (the whole block's length at once, so
 * the file is always whole blocks) when it does not fit. */
static void append(struct proc *pr, const struct sonde_shared_slot *s, const struct sonde_overview_packet *p)
{
	if (!pr->blk || pr->used + sizeof *p > SONDE_BLOCK_PAYLOAD) {
		struct stat st;
		if (fstat(pr->fd, &st) < 0)
			goto fail;
		off_t end = st.st_size < (off_t)SONDE_FILE_HEADER_SIZE ? (off_t)SONDE_FILE_HEADER_SIZE : st.st_size;
		end = SONDE_FILE_HEADER_SIZE +
		      (end - SONDE_FILE_HEADER_SIZE + SONDE_BLOCK_SIZE - 1) / SONDE_BLOCK_SIZE * SONDE_BLOCK_SIZE;
		/* The whole block's space first (a full disk fails here, not
		 * in a reader's mapping), then its header. */
		if (fallocate(pr->fd, 0, end, SONDE_BLOCK_SIZE) < 0 &&
		    (errno != EOPNOTSUPP || ftruncate(pr->fd, end + SONDE_BLOCK_SIZE) < 0))
			goto fail;
		struct sonde_block_header bh = { SONDE_BLOCK_MAGIC, SONDE_KIND_OVERVIEW, pr->pid, 0, p->time_ns, 0 };
		if (pwrite(pr->fd, &bh, sizeof bh, end) != (ssize_t)sizeof bh)
			goto fail;
		pr->blk = end;
		pr->used = 0;
	}
	if (pwrite(pr->fd, p, sizeof *p, pr->blk + (off_t)sizeof(struct sonde_block_header) + pr->used) !=
	    (ssize_t)sizeof *p)
		goto fail;
	/* Published after the packet, as the collector's release store does. */
	uint32_t used = pr->used + (uint32_t)sizeof *p;
	if (pwrite(pr->fd, &used, sizeof used, pr->blk + (off_t)offsetof(struct sonde_block_header, used)) !=
	    (ssize_t)sizeof used)
		goto fail;
	pr->used = used;
	return;
fail:
	warn(s, "cannot write the periodic data file", errno ? errno : ENOSPC);
	pr->failed = 1;
}

/* One periodic point for the process, or 0 when it is gone (or its pid now
 * names another process). */
static int sample(struct proc *pr, struct sonde_shared_slot *s)
{
	char path[64], stat[1024], status[4096], buf[1024];
	snprintf(path, sizeof path, "/proc/%u/stat", pr->pid);
	if (read_small(path, stat, sizeof stat) <= 0)
		return 0;
	const char *p = strrchr(stat, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	p += 2; /* field 3, the state */
	if (stat_field(p, 22) != pr->starttime)
		return 0;
	struct sonde_overview_packet o;
	memset(&o, 0, sizeof o);
	o.type = SONDE_PKT_OVERVIEW;
	o.size = sizeof o;
	o.reason = SONDE_OV_PERIODIC;
	uint64_t ut = stat_field(p, 14), st = stat_field(p, 15);
	o.minflt = stat_field(p, 10);
	o.majflt = stat_field(p, 12);
	clockid_t cid;
	struct timespec ts;
	uint64_t cpu;
	if (clock_getcpuclockid((pid_t)pr->pid, &cid) == 0 && clock_gettime(cid, &ts) == 0)
		cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	else
		cpu = (ut + st) * (1000000000ull / (uint64_t)g_hz);
	o.stime_ns = ut + st ? (uint64_t)((unsigned __int128)cpu * st / (ut + st)) : 0;
	o.utime_ns = cpu - o.stime_ns;
	snprintf(path, sizeof path, "/proc/%u/io", pr->pid);
	if (read_small(path, buf, sizeof buf) > 0) {
		o.inblock = status_kb(buf, "\nread_bytes:") / 512;
		o.oublock = status_kb(buf, "\nwrite_bytes:") / 512;
	}
	snprintf(path, sizeof path, "/proc/%u/status", pr->pid);
	if (read_small(path, status, sizeof status) > 0)
		o.maxrss_kb = status_kb(status, "\nVmHWM:");
	snprintf(path, sizeof path, "/proc/%u/statm", pr->pid);
	if (read_small(path, buf, sizeof buf) > 0) {
		const char *q = strchr(buf, ' ');
		o.rss_kb = q ? strtoull(q + 1, NULL, 10) * (uint64_t)(sysconf(_SC_PAGESIZE) / 1024) : 0;
	}
	ctxt_switches(pr->pid, &o.nvcsw, &o.nivcsw);
	if (o.nvcsw < pr->nvcsw)
		o.nvcsw = pr->nvcsw;
	if (o.nivcsw < pr->nivcsw)
		o.nivcsw = pr->nivcsw;
	pr->nvcsw = o.nvcsw;
	pr->nivcsw = o.nivcsw;
	/* Stamped after the counters were read: the process's usage up to
	 * this time.  Events after the point are stamped after it. */
	o.time_ns = mono();
	raise_now(o.time_ns + 1);
	/* An image whose collector has ended since (and written its end
	 * point, which is stamped after it said so) gets no point after its
	 * end point. */
	if (atomic_load(&s->state) == SONDE_SLOT_LIVE && s->start_ns == pr->start_ns)
		append(pr, s, &o);
	return 1;
}

/* A point for each process image recording now. */
static void points(void)
{
	for (unsigned i = 0; i < SONDE_SHARED_SLOTS; i++) {
		struct sonde_shared_slot *s = slot_at(i);
		struct proc *pr = &g_procs[i];
		uint32_t state = atomic_load(&s->state);
		if (pr->pid && (state != SONDE_SLOT_LIVE || pr->pid != s->pid || pr->starttime != s->starttime ||
				pr->start_ns != s->start_ns))
			close_proc(pr); /* ended, or the slot is another image's now */
		if (state != SONDE_SLOT_LIVE)
			continue;
		if (!pr->pid)
			open_proc(pr, s);
		if (pr->failed)
			continue;
		if (!sample(pr, s)) {
			/* Killed before its collector could say so. */
			close_proc(pr);
			uint32_t live = SONDE_SLOT_LIVE;
			atomic_compare_exchange_strong(&s->state, &live, SONDE_SLOT_FREE);
		}
	}
}

/* Readable when the thread is to end: an eventfd (-1: none, naps of at
 * most 50 ms then). */
static int g_wake = -1;

static void *run(void *arg)
{
	(void)arg;
	uint64_t tick = g_head->tick_ns, period = g_head->period_ns;
	uint64_t next = period ? mono() + period : UINT64_MAX;
	uint64_t next_watch = mono();
	while (!atomic_load(&g_quit)) {
		uint64_t now = mono();
		if (tick)
			raise_now(now);
		if (now >= next) {
			points();
			while (next <= now)
				next += period; /* missed periods are skipped, not caught up */
		}
		if (now >= next_watch)
			next_watch = mono() + collect_watch(g_head, g_expdir);
		uint64_t wake = tick ? now + tick : next;
		if (wake > next)
			wake = next;
		if (wake > next_watch)
			wake = next_watch;
		if (wake > now + 50 * TICK_NS)
			wake = now + 50 * TICK_NS;
		if (g_wake >= 0) {
			/* the end wakes it (collect_clock_stop): a nap's
			 * length would be every run's wait at its end */
			uint64_t d = wake > now ? wake - now : 0;
			struct timespec rel = { (time_t)(d / 1000000000ull), (long)(d % 1000000000ull) };
			struct pollfd p = { g_wake, POLLIN, 0 };
			ppoll(&p, 1, &rel, NULL);
		} else {
			struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	return NULL;
}

int collect_clock_start(const char *expdir, uint64_t period_ns, int tick, char *path_out, size_t cap)
{
	g_hz = sysconf(_SC_CLK_TCK);
	if (g_hz <= 0)
		g_hz = 100;
	for (unsigned i = 0; i < SONDE_SHARED_SLOTS; i++)
		g_procs[i].fd = -1;
	snprintf(g_expdir, sizeof g_expdir, "%s", expdir);
	snprintf(path_out, cap, "%s/%s", expdir, SONDE_SHARED_FILE);
	int fd = open(path_out, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	/* Real blocks, not a hole: a store into a hole that a full disk
	 * cannot fill raises SIGBUS, here and in the target. */
	static const char zeros[SONDE_SHARED_SIZE];
	void *p = MAP_FAILED;
	errno = 0;
	if (pwrite(fd, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros)
		p = mmap(NULL, SONDE_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	else if (!errno)
		errno = ENOSPC;
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		unlink(path_out);
		path_out[0] = 0;
		errno = e;
		return -1;
	}
	g_head = p;
	g_head->tick_ns = tick ? TICK_NS : 0;
	g_head->period_ns = period_ns;
	atomic_store(&g_head->now, tick ? mono() : 0);
	g_head->magic = SONDE_SHARED_MAGIC; /* last: a collector checks it */
	return 0;
}

static int g_pidfd = -1;

/* After the fork: the target's child is made by a single-threaded
 * process.  The thread runs whatever the options: it also keeps clock
 * profiling's guard (collect_watch.c). */
int collect_clock_run(pid_t target)
{
	if (!g_head)
		return 0;
	/* The guard calls into the target only when the main thread can wait
	 * for its end without waitpid (collect_clock_wait). */
	g_pidfd = (int)syscall(SYS_pidfd_open, target, 0);
	collect_watch_init(target, g_pidfd >= 0);
	g_wake = eventfd(0, EFD_CLOEXEC);
	if (pthread_create(&g_thread, NULL, run, NULL) != 0) {
		atomic_store(&g_head->now, 0);
		g_head->tick_ns = g_head->period_ns = 0;
		return -1;
	}
	g_running = 1;
	return 0;
}

void collect_clock_wait(pid_t target, int *status)
{
	if (g_pidfd >= 0) {
		/* Readable once the target has ended; its ptrace stops (the
		 * guard's calls) are not reported here. */
		struct pollfd p = { g_pidfd, POLLIN, 0 };
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
	while (waitpid(target, status, 0) < 0 && errno == EINTR)
		;
	if (g_pidfd >= 0)
		close(g_pidfd);
	g_pidfd = -1;
}

void collect_clock_stop(void)
{
	if (!g_head)
		return;
	if (g_running) {
		atomic_store(&g_quit, 1);
		if (g_wake >= 0) {
			uint64_t one = 1;
			(void)!write(g_wake, &one, sizeof one);
		}
		pthread_join(g_thread, NULL);
		g_running = 0;
	}
	if (g_wake >= 0)
		close(g_wake);
	g_wake = -1;
	/* Descendants that outlive us read the clock themselves from now on,
	 * and take no more periodic points. */
	atomic_store(&g_head->now, 0);
	g_head->tick_ns = g_head->period_ns = 0;
	for (unsigned i = 0; i < SONDE_SHARED_SLOTS; i++)
		close_proc(&g_procs[i]);
	munmap(g_head, SONDE_SHARED_SIZE);
	g_head = NULL;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", g_expdir, SONDE_SHARED_FILE);
	unlink(path);
}
