/* The writing side of log.xml and map.xml and the collector's parked
 * descriptors, reached from signal handlers: every function here is
 * async-signal-safe (raw system calls, atomics).  log.c opens and closes;
 * it says why every write checks its descriptor first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"

HIDDEN struct cfile g_log = { .fd = -1 };
/* log.c: set while a clone(CLONE_FILES) child forgets its parent's
 * collector (fd_release then leaves descriptors open). */
extern int g_table_shared;

int log_is_open(void)
{
	return atomic_load(&g_log.fd) >= 0 || atomic_load(&g_log.per_write);
}

#define FD_MAX_PROTECTED 65536
static _Atomic uint8_t g_protected[FD_MAX_PROTECTED / 8];
/* What each protected descriptor referred to when it was parked (device
 * and inode mixed into one word), so that a number the target took is
 * told apart from ours. */
static _Atomic uint64_t g_identity[FD_MAX_PROTECTED];

static uint64_t identity_of(const struct stat *st)
{
	return (uint64_t)st->st_ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)st->st_dev;
}

/* Async-signal-safe. */
int fd_is_protected(int fd)
{
	return fd >= 0 && fd < FD_MAX_PROTECTED &&
	       (atomic_load_explicit(&g_protected[fd / 8], memory_order_relaxed) & (1u << (fd % 8)));
}

static void unprotect(int fd)
{
	if (fd >= 0 && fd < FD_MAX_PROTECTED)
		atomic_fetch_and(&g_protected[fd / 8], (uint8_t) ~(1u << (fd % 8)));
}

/* Whether a protected descriptor still refers to what was parked there:
 * 0 once the target closed it or put a file of its own on the number.
 * A sampling counter shares its inode with every anonymous-inode
 * descriptor, so the check cannot tell it from the target's eventfd put
 * on its number.  Async-signal-safe. */
int fd_still_ours(int fd)
{
	if (!fd_is_protected(fd))
		return 0;
	struct stat st;
	long rc = sonde_sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
	if (rc == -EPERM && sysgate_active())
		return 1; /* the target's filter refuses fstat: protected is all we know */
	if (rc < 0)
		return 0;
	return identity_of(&st) == atomic_load_explicit(&g_identity[fd], memory_order_relaxed);
}

/* The target took a protected number: forget the protection, so that its
 * own close() of that number closes its file.  Async-signal-safe. */
void fd_forget_taken(int fd)
{
	unprotect(fd);
}

static void protect(int fd)
{
	struct stat st;
	if (fd < 0 || fd >= FD_MAX_PROTECTED || syscall(SYS_fstat, fd, &st) < 0)
		return;
	atomic_store(&g_identity[fd], identity_of(&st));
	atomic_fetch_or(&g_protected[fd / 8], (uint8_t)(1u << (fd % 8)));
}

/* Move a descriptor out of the range programs use for themselves (some
 * dup2() onto 3..9 without looking), close-on-exec, and protect it from
 * the target's close()/closefrom() (daemons close every descriptor).
 * Async-signal-safe (raw fcntl). */
int fd_park(int fd)
{
	if (fd < 0)
		return fd;
	int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 900);
	if (nfd < 0)
		nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 100);
	if (nfd < 0)
		nfd = fd;
	else
		syscall(SYS_close, fd);
	protect(nfd);
	return nfd;
}

/* Close one of our parked descriptors, unless the target took its number
 * (then the file there is the target's to close).  Async-signal-safe. */
void fd_release(int fd)
{
	if (fd < 0 || g_table_shared)
		return;
	int ours = fd_still_ours(fd);
	unprotect(fd);
	if (ours)
		syscall(SYS_close, fd);
}

/* The target's RLIMIT_FSIZE, RLIM_INFINITY when none.  A write that
 * starts at or beyond it raises SIGXFSZ, which kills the target: the
 * collector checks it before every write that extends a file.
 * Async-signal-safe (one system call). */
static _Atomic uint64_t g_fsize_noted = (uint64_t)RLIM_INFINITY;

uint64_t fsize_limit(void)
{
	struct rlimit r;
	long rc = sonde_sys6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, (long)&r, 0, 0);
	if (rc == -EPERM && sysgate_active())
		return atomic_load(&g_fsize_noted); /* the filter refuses asking */
	if (rc < 0)
		return (uint64_t)RLIM_INFINITY;
	return (uint64_t)r.rlim_cur;
}

/* Before a seccomp filter that may refuse prlimit64: the limit as it is
 * now stands for it from then on.  Normal context. */
void fsize_limit_note(void)
{
	atomic_store(&g_fsize_noted, fsize_limit());
}

/* Taken: open the file again by its path (only the same file: one that
 * replaced it there is not ours either) and install the new descriptor
 * unless another thread did first.  Async-signal-safe. */
static int cfile_reopen(struct cfile *f, int old)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, f->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (syscall(SYS_fstat, fd, &st) < 0 || (uint64_t)st.st_dev != f->dev ||
			(uint64_t)st.st_ino != f->ino)) {
		syscall(SYS_close, fd);
		fd = -1;
	}
	if (fd >= 0)
		fd = fd_park(fd);
	int expected = old;
	if (!atomic_compare_exchange_strong(&f->fd, &expected, fd)) {
		if (fd >= 0)
			fd_release(fd);
		return expected;
	}
	/* The old number is the target's now (or closed): never close it. */
	fd_forget_taken(old);
	atomic_fetch_add(&f->taken, 1);
	return fd;
}

/* The size of the file behind fd, for the RLIMIT_FSIZE check; 0 where the
 * limit is none.  -1 when it cannot be known (fstat refused by a seccomp
 * filter, with a limit set): the write is dropped.  With check set, also
 * that fd is still f's file: else -2.  Async-signal-safe. */
static int64_t file_size(const struct cfile *f, int fd, uint64_t lim, int check)
{
	struct stat st;
	long rc = sonde_sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
	if (rc == -EPERM && sysgate_active()) {
		/* Refused by the target's filter: a kept descriptor is
		 * trusted as long as no close() of the target's touched
		 * its number (only a bare system call can take it). */
		if (check && !fd_is_protected(fd))
			return -2;
		return lim == (uint64_t)RLIM_INFINITY ? 0 : -1;
	}
	if (rc < 0 || (check && ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino)))
		return -2;
	return st.st_size;
}

/* The descriptor to write `len` more bytes through, -1 when the file is
 * closed, lost, or the write would start past the target's RLIMIT_FSIZE.
 * *transient: a descriptor opened for this write only, to close after it.
 * Async-signal-safe. */
static int cfile_writable(struct cfile *f, size_t len, int *reopened, int *transient)
{
	uint64_t lim = fsize_limit();
	int fd = atomic_load(&f->fd);
	int64_t size;
	if (fd < 0) {
		if (!atomic_load(&f->per_write))
			return -1;
		fd = (int)syscall(SYS_openat, AT_FDCWD, f->path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			return -1;
		*transient = 1;
		size = file_size(f, fd, lim, 1);
	} else {
		size = file_size(f, fd, lim, 1);
		if (size == -2) {
			fd = cfile_reopen(f, fd);
			*reopened = 1;
			if (fd < 0)
				return -1;
			size = file_size(f, fd, lim, 0);
		}
	}
	if (size < 0 || (lim != (uint64_t)RLIM_INFINITY && (uint64_t)size + len > lim)) {
		if (*transient)
			syscall(SYS_close, fd);
		*transient = 0;
		return -1; /* dropped: SIGXFSZ would kill the target */
	}
	return fd;
}

/* Append buf whole; 0, or -1 when it was not written.  Async-signal-safe. */
int cfile_write(struct cfile *f, const char *buf, size_t len)
{
	int saved = errno;
	int reopened = 0, transient = 0;
	int fd = cfile_writable(f, len, &reopened, &transient);
	int rc = fd < 0 ? -1 : 0;
	while (fd >= 0 && len) {
		ssize_t n = (ssize_t)syscall(SYS_write, fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	if (transient)
		syscall(SYS_close, fd);
	if (reopened && f != &g_log) {
		char msg[600];
		struct xbuf b;
		xb_init(&b, msg, sizeof msg);
		xb_str(&b, "the target took the descriptor of ");
		xb_str(&b, f->path);
		xb_str(&b, fd >= 0 ? " (closed it, or put a file of its own on its number); it was opened again"
				   : " (closed it, or put a file of its own on its number) and it cannot be opened again");
		log_event_text("warning", msg);
	}
	errno = saved;
	return rc;
}

/* Async-signal-safe. */
void log_line(const char *line, size_t len)
{
	unsigned before = atomic_load(&g_log.taken);
	cfile_write(&g_log, line, len);
	/* Said after the line, in log.xml itself, once per taking. */
	if (atomic_load(&g_log.taken) != before && atomic_load(&g_log.fd) >= 0) {
		static const char msg[] = "the target took the descriptor of log.xml (closed it, or put a file of "
					  "its own on its number); it was opened again";
		char mem[400];
		struct xbuf b;
		xb_init(&b, mem, sizeof mem);
		xb_str(&b, "<event kind=\"warning\"");
		xb_attr_u64(&b, "time_ns", now_ns());
		xb_attr_str(&b, "text", msg);
		xb_str(&b, "/>\n");
		cfile_write(&g_log, mem, b.len);
	}
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

