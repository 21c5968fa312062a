/* log.xml: one element per line, appended with single write() calls on an
 * O_APPEND descriptor, so concurrent writers (threads, a signal handler,
 * and `sonde collect` after the target ended) never interleave within a
 * line.  The collector never writes the closing tag; `sonde collect` does
 * once the target is gone, and readers accept a log without it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"

static int g_log_fd = -1;

int log_fd(void)
{
	return g_log_fd;
}

#define FD_MAX_PROTECTED 65536
static _Atomic uint8_t g_protected[FD_MAX_PROTECTED / 8];

/* Async-signal-safe. */
int fd_is_protected(int fd)
{
	return fd >= 0 && fd < FD_MAX_PROTECTED &&
	       (atomic_load_explicit(&g_protected[fd / 8], memory_order_relaxed) & (1u << (fd % 8)));
}

/* Move a descriptor out of the range programs use for themselves (some
 * dup2() onto 3..9 without looking), close-on-exec, and protect it from
 * the target's close()/closefrom() (daemons close every descriptor). */
int fd_park(int fd)
{
	if (fd < 0)
		return fd;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	if (nfd < 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (nfd < 0)
		nfd = fd;
	else
		close(fd);
	if (nfd < FD_MAX_PROTECTED)
		atomic_fetch_or(&g_protected[nfd / 8], (uint8_t)(1u << (nfd % 8)));
	return nfd;
}

/* Set while a clone(CLONE_FILES) child forgets its parent's collector:
 * the parent's descriptors are in the one table they share, and closing
 * them there would cut off the parent's log, data files and sampling
 * counters (and let the child's own files take their numbers, so that
 * the parent writes into the child's experiment).  They stay protected in
 * the child too: the child's closefrom() must not close them either. */
static int g_table_shared;

void fd_table_shared(int on)
{
	g_table_shared = on;
}

/* Close one of our parked descriptors.  Async-signal-safe. */
void fd_release(int fd)
{
	if (fd < 0 || g_table_shared)
		return;
	if (fd < FD_MAX_PROTECTED)
		atomic_fetch_and(&g_protected[fd / 8], (uint8_t) ~(1u << (fd % 8)));
	syscall(SYS_close, fd);
}

int log_open(const char *expdir, int exclusive)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/log.xml", expdir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (exclusive ? O_CREAT | O_EXCL : 0), 0644);
	if (fd < 0)
		return -1;
	g_log_fd = fd_park(fd);
	return 0;
}

/* Async-signal-safe. */
void log_line(const char *line, size_t len)
{
	if (g_log_fd < 0)
		return;
	int saved = errno;
	while (len) {
		ssize_t n = write(g_log_fd, line, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		line += n;
		len -= (size_t)n;
	}
	errno = saved;
}

/* Async-signal-safe. */
void log_event_text(const char *kind, const char *text)
{
	char mem[2048];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<event");
	xb_attr_str(&b, "kind", kind);
	xb_attr_u64(&b, "time_ns", now_ns());
	if (text) {
		xb_str(&b, " text=\"");
		b.cap = sizeof mem - 8; /* a long text is cut; the line stays whole */
		xb_xml(&b, text);
		b.cap = sizeof mem;
		b.overflow = 0;
		xb_str(&b, "\"");
	}
	xb_str(&b, "/>\n");
	log_line(mem, b.len);
}

void log_close(void)
{
	fd_release(g_log_fd);
	g_log_fd = -1;
}
