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
#include <unistd.h>

#include "collector.h"

static int g_log_fd = -1;

int log_fd(void)
{
	return g_log_fd;
}

/* Move a descriptor out of the range programs use for themselves (some
 * dup2() onto 3..9 without looking), close-on-exec. */
int fd_park(int fd)
{
	if (fd < 0)
		return fd;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	if (nfd < 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
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
	if (g_log_fd >= 0)
		close(g_log_fd);
	g_log_fd = -1;
}
