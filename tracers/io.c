/*
 * libsonde_io.so: I/O tracing (`sonde collect -i on`).
 *
 * Interposes the read, write, open, close, dup, seek and sync system call
 * wrappers and the stdio functions that move data (fopen, fread, fwrite,
 * printf, fprintf, puts, fputs, putc, fgets, getc, getline, fflush,
 * fclose, ...), with the aliases programs actually bind to (open64,
 * pread64, __read_chk, fread_unlocked, __printf_chk, __fgets_chk, ...).  Each call made while the
 * collector collects becomes one struct sonde_io_packet in "iotrace":
 * function, descriptor, bytes moved, start time and duration, errno of a
 * failure, the file it touched and the call stack.
 *
 * Files.  A lock-free table maps descriptors below FD_TABLE to file ids.
 * Every open (and fopen, creat, ...) gets a new id, named by one struct
 * sonde_io_file_packet holding the path as given, written before the I/O
 * packet that uses it; dup copies an id, close clears it.  A descriptor the
 * table does not know (stdin, pipes, sockets, files opened before the
 * collector started) is named on first use by what /proc/self/fd says;
 * once the target installs a seccomp filter, which may kill readlink,
 * the descriptors open then are named first and later unknown ones from
 * fstat (pipe:[INO], socket:[INO], else "fd N").  A
 * few descriptor creators and closers that are not traced (pipe, socket,
 * accept, fcntl(F_DUPFD), freopen, pclose, close_range, closefrom) are
 * interposed only to keep the table right.  Descriptors at or above
 * FD_TABLE have no entry: their calls are recorded with file_id 0.
 *
 * Rules (tracers/tracer.h): errno and return values are preserved exactly;
 * nothing is recorded while g_on is 0; an interposer called while this
 * thread is already inside this library (dlsym resolving a real function,
 * the collector writing its log from reserve, a signal handler between
 * reserve and commit) goes straight to the real function; calls made by
 * sonde's own libraries (the collector writing log.xml through write(),
 * closing through close()) are not the target's I/O and are not traced.
 * No malloc anywhere: names are built in stack buffers.
 *
 * stdio functions reach the kernel through glibc's internal symbols, never
 * through these interposers, so a stdio call (fread, fwrite, printf,
 * fputs, fgets, ...: see "stdio" below) is counted once, at the call;
 * fclose closes its descriptor internally, so its table entry is cleared
 * here.
 *
 * Not handled: a vfork child shares g_on with its parent, so the few
 * traced calls it makes before exec (dup2, close) are recorded as the
 * parent's; descriptors closed behind the table's back (syscall(SYS_close))
 * keep their name until the number is opened again.
 */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* RESOLVE looks up through next_sym (below): with the recursion guard up. */
static void *next_sym(const char *name);
#define REAL_LOOKUP(name) next_sym(name)
#include "tracer.h"

/* <stdio.h> may define these as macros when optimizing. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc
#undef putc
#undef getc_unlocked
#undef putc_unlocked
#undef getchar_unlocked
#undef putchar_unlocked
#undef fgetc_unlocked
#undef fputc_unlocked

#define FD_TABLE 65536	 /* descriptors with a table entry */
#define NAME_MAX_LEN 4000 /* longest name written (packet size is 16 bits) */

static _Atomic int g_on;       /* recording (set by attach, cleared by the collector) */
static _Atomic int g_attached; /* the table is kept (from the module's start on, fork children too) */
static _Atomic uint64_t *g_tab; /* fd -> file_id, FD_TABLE entries, mmap'ed */
static _Atomic uint64_t g_next_id = 1;
static SONDE_TLS int t_busy; /* this thread is inside the library */
static SONDE_TLS int t_stdio; /* this thread is inside a traced stdio call */

/* ---- real functions ------------------------------------------------------ */

/* Declared by <unistd.h>/<stdio.h> only under _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int fcntl64(int fd, int cmd, ...);
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
char *__fgets_chk(char *s, size_t size, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f);
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);
int close_range(unsigned first, unsigned last, int flags);
void closefrom(int lowfd);

REAL_DECL(read);
REAL_DECL(write);
REAL_DECL(pread);
REAL_DECL(pwrite);
REAL_DECL(readv);
REAL_DECL(writev);
REAL_DECL(preadv);
REAL_DECL(pwritev);
REAL_DECL(preadv2);
REAL_DECL(pwritev2);
REAL_DECL(__read_chk);
REAL_DECL(__pread_chk);
REAL_DECL(open);
REAL_DECL(openat);
REAL_DECL(__open_2);
REAL_DECL(__openat_2);
REAL_DECL(creat);
REAL_DECL(close);
REAL_DECL(dup);
REAL_DECL(dup2);
REAL_DECL(dup3);
REAL_DECL(lseek);
REAL_DECL(fsync);
REAL_DECL(fdatasync);
REAL_DECL(fopen);
REAL_DECL(fdopen);
REAL_DECL(freopen);
REAL_DECL(fclose);
REAL_DECL(pclose);
REAL_DECL(fread);
REAL_DECL(fread_unlocked);
REAL_DECL(__fread_chk);
REAL_DECL(__fread_unlocked_chk);
REAL_DECL(fwrite);
REAL_DECL(fwrite_unlocked);
REAL_DECL(fflush);
REAL_DECL(vprintf);
REAL_DECL(__vprintf_chk);
REAL_DECL(vfprintf);
REAL_DECL(__vfprintf_chk);
REAL_DECL(vdprintf);
REAL_DECL(__vdprintf_chk);
REAL_DECL(puts);
REAL_DECL(fputs);
REAL_DECL(fputs_unlocked);
REAL_DECL(fputc);
REAL_DECL(putc);
REAL_DECL(putchar);
REAL_DECL(fputc_unlocked);
REAL_DECL(putc_unlocked);
REAL_DECL(putchar_unlocked);
REAL_DECL(fgetc);
REAL_DECL(getc);
REAL_DECL(getchar);
REAL_DECL(fgetc_unlocked);
REAL_DECL(getc_unlocked);
REAL_DECL(getchar_unlocked);
REAL_DECL(fgets);
REAL_DECL(fgets_unlocked);
REAL_DECL(__fgets_chk);
REAL_DECL(__fgets_unlocked_chk);
REAL_DECL(getline);
REAL_DECL(getdelim);
REAL_DECL(__getdelim);
REAL_DECL(pipe);
REAL_DECL(pipe2);
REAL_DECL(socket);
REAL_DECL(socketpair);
REAL_DECL(accept);
REAL_DECL(accept4);
REAL_DECL(fcntl);
REAL_DECL(close_range);
REAL_DECL(closefrom);

/* dlsym(RTLD_NEXT) with the recursion guard up: what dlsym calls itself
 * passes straight through.  NULL when called from inside the library. */
static void *next_sym(const char *name)
{
	if (t_busy)
		return NULL;
	int e = errno;
	t_busy = 1;
	void *p = real_lookup(name, NULL);
	t_busy = 0;
	errno = e;
	return p;
}


/* ---- state of a call ----------------------------------------------------- */

/* Calls from sonde's own libraries (the collector writing log.xml) are
 * not the target's I/O. */
static inline int from_sonde(const void *ra)
{
	return __sonde_trace_from_sonde(ra);
}

#define RA __builtin_return_address(0)

/* Whether a data call (read, write, ...) is recorded. */
static inline int recording(const void *ra)
{
	return atomic_load_explicit(&g_on, memory_order_relaxed) && !t_busy && !t_stdio && !__sonde_vforked &&
	       !from_sonde(ra);
}

/* For calls that change the table: 0 pass through, 1 keep the table only
 * (attached but not recording: stopped, fork child), 2 record too. */
enum { ST_PASS = 0, ST_TABLE = 1, ST_RECORD = 2 };
static inline int call_state(const void *ra)
{
	if (!atomic_load_explicit(&g_attached, memory_order_relaxed) || t_busy || __sonde_vforked || from_sonde(ra))
		return ST_PASS;
	return atomic_load_explicit(&g_on, memory_order_relaxed) ? ST_RECORD : ST_TABLE;
}

/* ---- packets ------------------------------------------------------------- */

/* A new file id named `name` (len bytes); 0 when its packet was lost. */
static uint64_t new_file(const char *name, size_t len)
{
	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	size_t size = (sizeof(struct sonde_io_file_packet) + len + 1 + 7) & ~(size_t)7;
	if (!atomic_load_explicit(&g_on, memory_order_relaxed))
		return 0;
	struct sonde_io_file_packet *p = __sonde_trace_reserve(SONDE_KIND_IO, size);
	if (!p)
		return 0;
	uint64_t id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
	p->type = SONDE_PKT_IO_FILE;
	p->size = (uint16_t)size;
	p->name_len = (uint32_t)len;
	p->file_id = id;
	p->time_ns = sonde_now_ns();
	char *name_out = (char *)(p + 1);
	memcpy(name_out, name, len);
	memset(name_out + len, 0, size - sizeof *p - len);
	__sonde_trace_commit(SONDE_KIND_IO, size);
	return id;
}

static inline uint64_t tab_get(int fd)
{
	if (fd < 0 || fd >= FD_TABLE || !g_tab)
		return 0;
	return atomic_load_explicit(&g_tab[fd], memory_order_relaxed);
}

static inline void tab_set(int fd, uint64_t id)
{
	if (fd >= 0 && fd < FD_TABLE && g_tab)
		atomic_store_explicit(&g_tab[fd], id, memory_order_relaxed);
}

static inline uint64_t tab_take(int fd)
{
	if (fd < 0 || fd >= FD_TABLE || !g_tab)
		return 0;
	return atomic_exchange_explicit(&g_tab[fd], 0, memory_order_relaxed);
}

/* A descriptor's name from fstat alone, for use when the target's seccomp
 * filter refuses readlink: pipes and sockets as /proc/self/fd shows them,
 * anything else by its number. */
static size_t name_from_fstat(int fd, char *out, size_t cap)
{
	struct stat st;
	const char *pre = "fd ", *post = "";
	uint64_t v = (uint64_t)fd;
	if (sonde_own_syscall(SYS_fstat, fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		pre = S_ISFIFO(st.st_mode) ? "pipe:[" : "socket:[";
		post = "]";
		v = (uint64_t)st.st_ino;
	}
	char digits[24];
	int nd = 0;
	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) && nd < 24);
	size_t len = 0;
	while (*pre && len < cap)
		out[len++] = *pre++;
	while (nd && len < cap)
		out[len++] = digits[--nd];
	while (*post && len < cap)
		out[len++] = *post++;
	return len;
}

/* The file id of a descriptor, naming it on first use from what
 * /proc/self/fd says, or from fstat when the target's seccomp filter
 * refuses that.  Called with t_busy set; errno is the caller's to restore. */
static uint64_t file_of(int fd)
{
	if (fd < 0 || fd >= FD_TABLE || !g_tab)
		return 0;
	uint64_t id = atomic_load_explicit(&g_tab[fd], memory_order_relaxed);
	if (id)
		return id;
	char name[NAME_MAX_LEN + 1];
	char path[32] = "/proc/self/fd/";
	char digits[12];
	int nd = 0;
	for (unsigned v = (unsigned)fd; nd == 0 || v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	size_t pl = 14;
	while (nd)
		path[pl++] = digits[--nd];
	path[pl] = 0;
	ssize_t n = sonde_own_syscall(SYS_readlink, path, name, sizeof name);
	if (n < 0 && errno == EPERM) /* refused by the target's seccomp filter */
		n = (ssize_t)name_from_fstat(fd, name, sizeof name);
	if (n <= 0)
		return 0;
	id = new_file(name, (size_t)n);
	if (!id)
		return 0;
	uint64_t expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&g_tab[fd], &expected, id, memory_order_relaxed,
						     memory_order_relaxed))
		return expected; /* another thread named it first */
	return id;
}

/* The target is about to install a seccomp filter (the collector's hook,
 * in the installing thread): name every open descriptor the table does
 * not know yet, the inherited ones above all, while readlink may still
 * be called. */
static void io_before_filter(void)
{
	if (!g_tab || !atomic_load_explicit(&g_on, memory_order_relaxed))
		return;
	int e = errno;
	int busy = t_busy;
	t_busy = 1;
	int d = (int)sonde_own_syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		char buf[4096];
		long n;
		while ((n = sonde_own_syscall(SYS_getdents64, d, buf, sizeof buf)) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64 *de = (struct dirent64 *)(buf + off);
				off += de->d_reclen;
				if (de->d_name[0] < '0' || de->d_name[0] > '9')
					continue;
				int fd = 0;
				for (const char *c = de->d_name; *c >= '0' && *c <= '9'; c++)
					fd = fd * 10 + (*c - '0');
				if (fd != d && fd < FD_TABLE && !tab_get(fd))
					file_of(fd);
			}
		}
		sonde_own_syscall(SYS_close, d);
	}
	t_busy = busy;
	errno = e;
}

/* Write one I/O packet with the given stack.  Called with t_busy set. */
static void emit_stack(int func, int failed, int err, int fd, uint64_t t0, uint64_t t1, int64_t bytes,
		       uint64_t file_id, uint64_t stack)
{
	if (!atomic_load_explicit(&g_on, memory_order_relaxed))
		return;
	struct sonde_io_packet *p = __sonde_trace_reserve(SONDE_KIND_IO, sizeof *p);
	if (!p)
		return;
	p->type = SONDE_PKT_IO;
	p->size = sizeof *p;
	p->func = (uint8_t)func;
	p->flags = failed ? SONDE_IOF_ERROR : 0;
	p->reserved = 0;
	p->fd = fd;
	p->err = failed ? err : 0;
	p->time_ns = t0;
	p->dur_ns = t1 - t0;
	p->bytes = bytes;
	p->file_id = file_id;
	p->stack_id = stack;
	__sonde_trace_commit(SONDE_KIND_IO, sizeof *p);
}

/* Write one I/O packet with the caller's stack.  Called with t_busy set. */
static void emit(int func, int failed, int err, int fd, uint64_t t0, uint64_t t1, int64_t bytes,
		 uint64_t file_id)
{
	if (!atomic_load_explicit(&g_on, memory_order_relaxed))
		return;
	emit_stack(func, failed, err, fd, t0, t1, bytes, file_id, __sonde_trace_stack());
}

/* After a read or write on fd that returned r (-1: failed). */
static void rw_done(int func, int fd, ssize_t r, uint64_t t0)
{
	int e = errno;
	uint64_t t1 = sonde_now_ns();
	t_busy = 1;
	emit(func, r < 0, e, fd, t0, t1, r < 0 ? 0 : (int64_t)r, file_of(fd));
	t_busy = 0;
	errno = e;
}

/* After a call on fd that moved no data and failed when r < 0. */
static void other_done(int func, int fd, int failed, uint64_t t0)
{
	rw_done(func, fd, failed ? -1 : 0, t0);
}

/* After an open of path that returned fd. */
static void opened(int st, int func, const char *path, int fd, uint64_t t0)
{
	int e = errno;
	uint64_t t1 = sonde_now_ns();
	t_busy = 1;
	uint64_t id = 0;
	/* A failed open is named too, so that its error has a file; the path
	 * is read only when the kernel could read it. */
	if (st == ST_RECORD && path && (fd >= 0 || e != EFAULT))
		id = new_file(path, strnlen(path, NAME_MAX_LEN));
	if (fd >= 0)
		tab_set(fd, id);
	if (st == ST_RECORD)
		emit(func, fd < 0, e, fd, t0, t1, 0, id);
	t_busy = 0;
	errno = e;
}

/* A descriptor created by a call that is not traced: forget what the
 * table knew of its number. */
static inline void fresh_fd(int fd)
{
	if (atomic_load_explicit(&g_attached, memory_order_relaxed))
		tab_set(fd, 0);
}

/* fileno without touching errno; -1 for streams with no descriptor. */
static int stream_fd(FILE *f)
{
	if (!f)
		return -1;
	int e = errno;
	int fd = fileno_unlocked(f);
	errno = e;
	return fd;
}

/* ---- reads and writes ----------------------------------------------------- */

#define RW_BODY(func, name, fd, sysno, ...)                                  \
	do {                                                                 \
		RESOLVE(name);                                               \
		if (!REAL(name))                                            \
			return syscall(sysno, __VA_ARGS__);                  \
		if (!recording(RA))                                          \
			return REAL(name)(__VA_ARGS__);                     \
		uint64_t t0 = sonde_now_ns();                                \
		ssize_t r = REAL(name)(__VA_ARGS__);                        \
		rw_done(func, fd, r, t0);                                    \
		return r;                                                    \
	} while (0)

SONDE_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	RW_BODY(SONDE_IO_READ, read, fd, SYS_read, fd, buf, n);
}

SONDE_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	RW_BODY(SONDE_IO_WRITE, write, fd, SYS_write, fd, buf, n);
}

SONDE_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	RW_BODY(SONDE_IO_PREAD, pread, fd, SYS_pread64, fd, buf, n, off);
}

SONDE_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	RW_BODY(SONDE_IO_PWRITE, pwrite, fd, SYS_pwrite64, fd, buf, n, off);
}

SONDE_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	RW_BODY(SONDE_IO_READV, readv, fd, SYS_readv, fd, iov, cnt);
}

SONDE_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	RW_BODY(SONDE_IO_WRITEV, writev, fd, SYS_writev, fd, iov, cnt);
}

/* The kernel takes the offset of preadv/pwritev as two longs, low and
 * high; on 64-bit the low one holds it all. */
SONDE_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	RW_BODY(SONDE_IO_PREADV, preadv, fd, SYS_preadv, fd, iov, cnt, off);
}

SONDE_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	RW_BODY(SONDE_IO_PWRITEV, pwritev, fd, SYS_pwritev, fd, iov, cnt, off);
}

/* preadv2/pwritev2: the kernel takes (lo, hi, flags). */
SONDE_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	RESOLVE(preadv2);
	if (!REAL(preadv2))
		return syscall(SYS_preadv2, fd, iov, cnt, off, 0, flags);
	if (!recording(RA))
		return REAL(preadv2)(fd, iov, cnt, off, flags);
	uint64_t t0 = sonde_now_ns();
	ssize_t r = REAL(preadv2)(fd, iov, cnt, off, flags);
	rw_done(SONDE_IO_PREADV, fd, r, t0);
	return r;
}

SONDE_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	RESOLVE(pwritev2);
	if (!REAL(pwritev2))
		return syscall(SYS_pwritev2, fd, iov, cnt, off, 0, flags);
	if (!recording(RA))
		return REAL(pwritev2)(fd, iov, cnt, off, flags);
	uint64_t t0 = sonde_now_ns();
	ssize_t r = REAL(pwritev2)(fd, iov, cnt, off, flags);
	rw_done(SONDE_IO_PWRITEV, fd, r, t0);
	return r;
}

/* The fortified reads check the buffer size themselves: the real function
 * is called with the caller's arguments. */
SONDE_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	RESOLVE(__read_chk);
	if (!REAL(__read_chk))
		return syscall(SYS_read, fd, buf, n);
	if (!recording(RA))
		return REAL(__read_chk)(fd, buf, n, buflen);
	uint64_t t0 = sonde_now_ns();
	ssize_t r = REAL(__read_chk)(fd, buf, n, buflen);
	rw_done(SONDE_IO_READ, fd, r, t0);
	return r;
}

SONDE_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	RESOLVE(__pread_chk);
	if (!REAL(__pread_chk))
		return syscall(SYS_pread64, fd, buf, n, off);
	if (!recording(RA))
		return REAL(__pread_chk)(fd, buf, n, off, buflen);
	uint64_t t0 = sonde_now_ns();
	ssize_t r = REAL(__pread_chk)(fd, buf, n, off, buflen);
	rw_done(SONDE_IO_PREAD, fd, r, t0);
	return r;
}

/* ---- seek and sync ---------------------------------------------------------- */

SONDE_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	RESOLVE(lseek);
	if (!REAL(lseek))
		return syscall(SYS_lseek, fd, off, whence);
	if (!recording(RA))
		return REAL(lseek)(fd, off, whence);
	uint64_t t0 = sonde_now_ns();
	off_t r = REAL(lseek)(fd, off, whence);
	other_done(SONDE_IO_LSEEK, fd, r == (off_t)-1, t0);
	return r;
}

SONDE_EXPORT int fsync(int fd)
{
	RESOLVE(fsync);
	if (!REAL(fsync))
		return (int)syscall(SYS_fsync, fd);
	if (!recording(RA))
		return REAL(fsync)(fd);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(fsync)(fd);
	other_done(SONDE_IO_FSYNC, fd, r < 0, t0);
	return r;
}

SONDE_EXPORT int fdatasync(int fd)
{
	RESOLVE(fdatasync);
	if (!REAL(fdatasync))
		return (int)syscall(SYS_fdatasync, fd);
	if (!recording(RA))
		return REAL(fdatasync)(fd);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(fdatasync)(fd);
	other_done(SONDE_IO_FDATASYNC, fd, r < 0, t0);
	return r;
}

/* ---- opens ------------------------------------------------------------------ */

/* open and openat take a mode only when they may create a file. */
#define GET_MODE(flags, last, mode)                   \
	do {                                          \
		if (__OPEN_NEEDS_MODE(flags)) {       \
			va_list ap;                   \
			va_start(ap, last);           \
			mode = va_arg(ap, mode_t);    \
			va_end(ap);                   \
		}                                     \
	} while (0)

#define OPEN_BODY(func, name, path, fallback, ...)                 \
	do {                                                       \
		RESOLVE(name);                                     \
		if (!REAL(name))                                  \
			return (int)(fallback);                    \
		int st = call_state(RA);                           \
		if (st == ST_PASS)                                 \
			return REAL(name)(__VA_ARGS__);           \
		uint64_t t0 = sonde_now_ns();                      \
		int fd = REAL(name)(__VA_ARGS__);                 \
		opened(st, func, path, fd, t0);                    \
		return fd;                                         \
	} while (0)

SONDE_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	GET_MODE(flags, flags, mode);
	OPEN_BODY(SONDE_IO_OPEN, open, path, syscall(SYS_openat, AT_FDCWD, path, flags, mode), path, flags,
		  mode);
}

SONDE_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	GET_MODE(flags, flags, mode);
	OPEN_BODY(SONDE_IO_OPENAT, openat, path, syscall(SYS_openat, dirfd, path, flags, mode), dirfd, path,
		  flags, mode);
}

/* The fortified opens: what open(path, flags) becomes when the compiler
 * cannot prove that flags need no mode. */
SONDE_EXPORT int __open_2(const char *path, int flags)
{
	OPEN_BODY(SONDE_IO_OPEN, __open_2, path, syscall(SYS_openat, AT_FDCWD, path, flags), path, flags);
}

SONDE_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	OPEN_BODY(SONDE_IO_OPENAT, __openat_2, path, syscall(SYS_openat, dirfd, path, flags), dirfd, path,
		  flags);
}

SONDE_EXPORT int creat(const char *path, mode_t mode)
{
	OPEN_BODY(SONDE_IO_CREAT, creat, path,
		  syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode), path, mode);
}

/* ---- close and dup -------------------------------------------------------------- */

SONDE_EXPORT int close(int fd)
{
	/* Always the next close (the collector's, which protects its own
	 * descriptors); the system call only while dlsym itself closes. */
	RESOLVE(close);
	if (!REAL(close))
		return (int)syscall(SYS_close, fd);
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(close)(fd);
	uint64_t id = 0;
	if (st == ST_RECORD) {
		int e = errno;
		t_busy = 1;
		id = file_of(fd); /* named now: after the close it is gone */
		t_busy = 0;
		errno = e;
	}
	tab_take(fd); /* before the close, which frees the number for others */
	uint64_t t0 = sonde_now_ns();
	int r = REAL(close)(fd);
	if (st == ST_RECORD) {
		int e = errno;
		uint64_t t1 = sonde_now_ns();
		t_busy = 1;
		emit(SONDE_IO_CLOSE, r < 0, e, fd, t0, t1, 0, id);
		t_busy = 0;
		errno = e;
	}
	return r;
}

/* After a dup of oldfd that returned r (-1: failed). */
static void duped(int st, int func, int oldfd, int r, uint64_t t0)
{
	int e = errno;
	uint64_t t1 = sonde_now_ns();
	t_busy = 1;
	uint64_t id = st == ST_RECORD ? file_of(oldfd) : tab_get(oldfd);
	if (r >= 0 && r != oldfd)
		tab_set(r, id);
	if (st == ST_RECORD)
		emit(func, r < 0, e, r >= 0 ? r : oldfd, t0, t1, 0, id);
	t_busy = 0;
	errno = e;
}

SONDE_EXPORT int dup(int oldfd)
{
	RESOLVE(dup);
	if (!REAL(dup))
		return (int)syscall(SYS_dup, oldfd);
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(dup)(oldfd);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(dup)(oldfd);
	duped(st, SONDE_IO_DUP, oldfd, r, t0);
	return r;
}

SONDE_EXPORT int dup2(int oldfd, int newfd)
{
	RESOLVE(dup2);
	if (!REAL(dup2))
		return (int)syscall(SYS_dup2, oldfd, newfd);
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(dup2)(oldfd, newfd);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(dup2)(oldfd, newfd);
	duped(st, SONDE_IO_DUP2, oldfd, r, t0);
	return r;
}

SONDE_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	RESOLVE(dup3);
	if (!REAL(dup3))
		return (int)syscall(SYS_dup3, oldfd, newfd, flags);
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(dup3)(oldfd, newfd, flags);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(dup3)(oldfd, newfd, flags);
	duped(st, SONDE_IO_DUP3, oldfd, r, t0);
	return r;
}

/* ---- stdio ---------------------------------------------------------------------- */

static FILE *fopen_common(FILE *(*real)(const char *, const char *), int st, const char *path,
			  const char *mode)
{
	uint64_t t0 = sonde_now_ns();
	FILE *f = real(path, mode);
	opened(st, SONDE_IO_FOPEN, path, stream_fd(f), t0);
	return f;
}

SONDE_EXPORT FILE *fopen(const char *path, const char *mode)
{
	RESOLVE(fopen);
	if (!REAL(fopen)) {
		errno = ENOSYS;
		return NULL;
	}
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(fopen)(path, mode);
	return fopen_common(REAL(fopen), st, path, mode);
}

SONDE_EXPORT FILE *fdopen(int fd, const char *mode)
{
	RESOLVE(fdopen);
	if (!REAL(fdopen)) {
		errno = ENOSYS;
		return NULL;
	}
	if (!recording(RA))
		return REAL(fdopen)(fd, mode);
	uint64_t t0 = sonde_now_ns();
	FILE *f = REAL(fdopen)(fd, mode);
	other_done(SONDE_IO_FDOPEN, fd, !f, t0);
	return f;
}

/* freopen is not traced, but it closes the stream's descriptor and opens
 * another (not always the same number): keep the table right. */
static FILE *freopen_common(FILE *(*real)(const char *, const char *, FILE *), int st, const char *path,
			    const char *mode, FILE *f)
{
	tab_take(stream_fd(f));
	FILE *r = real(path, mode, f);
	int fd = stream_fd(r);
	if (fd >= 0) {
		int e = errno;
		t_busy = 1;
		uint64_t id = st == ST_RECORD && path ? new_file(path, strnlen(path, NAME_MAX_LEN)) : 0;
		tab_set(fd, id);
		t_busy = 0;
		errno = e;
	}
	return r;
}

SONDE_EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
	RESOLVE(freopen);
	if (!REAL(freopen)) {
		errno = ENOSYS;
		return NULL;
	}
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(freopen)(path, mode, f);
	return freopen_common(REAL(freopen), st, path, mode, f);
}

SONDE_EXPORT int fclose(FILE *f)
{
	RESOLVE(fclose);
	if (!REAL(fclose)) {
		errno = ENOSYS;
		return EOF;
	}
	int st = call_state(RA);
	if (st == ST_PASS)
		return REAL(fclose)(f);
	int fd = stream_fd(f); /* taken before: fclose frees f */
	uint64_t id = 0;
	if (st == ST_RECORD) {
		int e = errno;
		t_busy = 1;
		id = file_of(fd);
		t_busy = 0;
		errno = e;
	}
	tab_take(fd);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(fclose)(f);
	if (st == ST_RECORD) {
		int e = errno;
		uint64_t t1 = sonde_now_ns();
		t_busy = 1;
		emit(SONDE_IO_FCLOSE, r == EOF, e, fd, t0, t1, 0, id);
		t_busy = 0;
		errno = e;
	}
	return r;
}

/* pclose closes the pipe's descriptor internally; not traced. */
SONDE_EXPORT int pclose(FILE *f)
{
	RESOLVE(pclose);
	if (!REAL(pclose)) {
		errno = ENOSYS;
		return -1;
	}
	if (call_state(RA) != ST_PASS)
		tab_take(stream_fd(f));
	return REAL(pclose)(f);
}

/*
 * The stdio calls that move data are traced as the program made them, as
 * the reference's I/O tracing does: one event per fread, fwrite, printf,
 * fputs, fgets ..., with the bytes the call took or gave (for the printf
 * family its return value), on the stream's descriptor.  stdio buffers:
 * the kernel sees the bytes later, at a flush, by a write glibc makes
 * through its internal symbols, which no interposer sees.  So the bytes
 * are counted once, at the call that the program's code made and whose
 * stack shows where they came from; fflush is an "other" event of its
 * own, without bytes.  t_stdio is set across the real call: whatever it
 * calls through interposable symbols (a printf handler's fputs, the write
 * of a fopencookie stream's function) is part of it and not an event.
 *
 * These calls are the hot ones of a program that prints (a printf costs
 * about a microsecond): the stack comes from the per-thread cache keyed by
 * the call site (__sonde_trace_stack_at), the clock is read twice.
 */

/* A call on stream f (or descriptor fd when f is NULL) that moved bytes
 * (>= 0), or failed (-1: errno e is its error), or met the end of its
 * input (-2: 0 bytes, no error). */
static void stdio_event(int func, FILE *f, int fd, int64_t bytes, int e, uint64_t t0, uint64_t ra, uint64_t cfa)
{
	uint64_t t1 = sonde_now_ns();
	t_busy = 1;
	if (f)
		fd = stream_fd(f);
	emit_stack(func, bytes == -1, e, fd, t0, t1, bytes < 0 ? 0 : bytes, file_of(fd),
		   __sonde_trace_stack_at(ra, cfa));
	t_busy = 0;
}

/* The body of a stdio interposer: r = the real call; then bytes_expr (an
 * int64_t: bytes, -1 failed, -2 end of input) from r.  Within the
 * exported function, for its call site's stack. */
#define STDIO_CALL(func, name, rtype, fail_value, f, fd, bytes_expr, ...)                    \
	do {                                                                                  \
		RESOLVE(name);                                                                \
		if (!REAL(name)) {                                                           \
			errno = ENOSYS;                                                       \
			return fail_value;                                                    \
		}                                                                             \
		if (!recording(RA))                                                           \
			return REAL(name)(__VA_ARGS__);                                      \
		uint64_t t0 = sonde_now_ns();                                                 \
		t_stdio = 1;                                                                  \
		rtype r = REAL(name)(__VA_ARGS__);                                           \
		t_stdio = 0;                                                                  \
		int e = errno;                                                                \
		stdio_event(func, f, fd, (bytes_expr), e, t0, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA()); \
		errno = e;                                                                    \
		return r;                                                                     \
	} while (0)

/* A failure of a stream call is its error flag set: a short fread, an
 * fgets or getc that returns at the end of the input, is no error. */
static inline int64_t short_read(FILE *f, int64_t bytes)
{
	return ferror_unlocked(f) ? -1 : bytes;
}

#define ITEMS(r, n, size, f) ((r) < (n) && ferror_unlocked(f) ? -1 : (int64_t)((r) * (size)))

SONDE_EXPORT size_t fread(void *ptr, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FREAD, fread, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, size, n, f);
}

SONDE_EXPORT size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FREAD, fread_unlocked, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, size, n, f);
}

SONDE_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FREAD, __fread_chk, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, ptrlen, size, n, f);
}

SONDE_EXPORT size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FREAD, __fread_unlocked_chk, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, ptrlen,
		   size, n, f);
}

SONDE_EXPORT size_t fwrite(const void *ptr, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FWRITE, fwrite, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, size, n, f);
}

SONDE_EXPORT size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FWRITE, fwrite_unlocked, size_t, 0, f, -1, ITEMS(r, n, size, f), ptr, size, n, f);
}

/* ---- formatted output: the variadic forms call the v* ones, the
 * fortified (_FORTIFY_SOURCE) the fortified v* ones, with the flag. */

#define PRINTED(r) ((r) < 0 ? -1 : (int64_t)(r))

SONDE_EXPORT int vprintf(const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_PRINTF, vprintf, int, -1, stdout, -1, PRINTED(r), fmt, ap);
}

SONDE_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_PRINTF, __vprintf_chk, int, -1, stdout, -1, PRINTED(r), flag, fmt, ap);
}

SONDE_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_FPRINTF, vfprintf, int, -1, f, -1, PRINTED(r), f, fmt, ap);
}

SONDE_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_FPRINTF, __vfprintf_chk, int, -1, f, -1, PRINTED(r), f, flag, fmt, ap);
}

SONDE_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_DPRINTF, vdprintf, int, -1, NULL, fd, PRINTED(r), fd, fmt, ap);
}

SONDE_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	STDIO_CALL(SONDE_IO_DPRINTF, __vdprintf_chk, int, -1, NULL, fd, PRINTED(r), fd, flag, fmt, ap);
}

/* The variadic ones make a va_list and call the v* function with it (the
 * only way to pass their arguments on); kind says which signature. */
enum { V_PRINTF, V_PRINTF_CHK, V_FPRINTF, V_FPRINTF_CHK, V_DPRINTF, V_DPRINTF_CHK };

static inline __attribute__((always_inline)) int call_v(int kind, void (*real)(void), FILE *f, int fd, int flag,
							 const char *fmt, va_list ap)
{
	switch (kind) {
	case V_PRINTF:
		return ((int (*)(const char *, va_list))real)(fmt, ap);
	case V_PRINTF_CHK:
		return ((int (*)(int, const char *, va_list))real)(flag, fmt, ap);
	case V_FPRINTF:
		return ((int (*)(FILE *, const char *, va_list))real)(f, fmt, ap);
	case V_FPRINTF_CHK:
		return ((int (*)(FILE *, int, const char *, va_list))real)(f, flag, fmt, ap);
	case V_DPRINTF:
		return ((int (*)(int, const char *, va_list))real)(fd, fmt, ap);
	default:
		return ((int (*)(int, int, const char *, va_list))real)(fd, flag, fmt, ap);
	}
}

#define VPRINT(func, name, kind, f, fd, flag, fmt)                                                     \
	do {                                                                                          \
		RESOLVE(name);                                                                        \
		if (!REAL(name)) {                                                                   \
			errno = ENOSYS;                                                               \
			return -1;                                                                    \
		}                                                                                     \
		va_list ap;                                                                           \
		va_start(ap, fmt);                                                                    \
		int r_;                                                                               \
		if (!recording(RA)) {                                                                 \
			r_ = call_v(kind, (void (*)(void))REAL(name), f, fd, flag, fmt, ap);         \
		} else {                                                                              \
			uint64_t t0 = sonde_now_ns();                                                 \
			t_stdio = 1;                                                                  \
			r_ = call_v(kind, (void (*)(void))REAL(name), f, fd, flag, fmt, ap);         \
			t_stdio = 0;                                                                  \
			int e = errno;                                                                \
			stdio_event(func, f, fd, PRINTED(r_), e, t0, SONDE_CALL_SITE_RA(),            \
				    SONDE_CALL_SITE_CFA());                                           \
			errno = e;                                                                    \
		}                                                                                     \
		va_end(ap);                                                                           \
		return r_;                                                                            \
	} while (0)

SONDE_EXPORT int printf(const char *fmt, ...)
{
	VPRINT(SONDE_IO_PRINTF, vprintf, V_PRINTF, stdout, -1, 0, fmt);
}

SONDE_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	VPRINT(SONDE_IO_PRINTF, __vprintf_chk, V_PRINTF_CHK, stdout, -1, flag, fmt);
}

SONDE_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	VPRINT(SONDE_IO_FPRINTF, vfprintf, V_FPRINTF, f, -1, 0, fmt);
}

SONDE_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	VPRINT(SONDE_IO_FPRINTF, __vfprintf_chk, V_FPRINTF_CHK, f, -1, flag, fmt);
}

SONDE_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	VPRINT(SONDE_IO_DPRINTF, vdprintf, V_DPRINTF, NULL, fd, 0, fmt);
}

SONDE_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	VPRINT(SONDE_IO_DPRINTF, __vdprintf_chk, V_DPRINTF_CHK, NULL, fd, flag, fmt);
}

/* ---- strings and characters ---- */

/* puts writes the string and a newline; fputs the string.  Their return
 * values are only "not EOF". */
#define STRING(r, s, extra) ((r) == EOF ? -1 : (int64_t)strlen(s) + (extra))
#define CHAR_OUT(r) ((r) == EOF ? -1 : 1)
#define CHAR_IN(r, f) ((r) == EOF ? short_read(f, -2) : 1)

SONDE_EXPORT int puts(const char *s)
{
	STDIO_CALL(SONDE_IO_PUTS, puts, int, EOF, stdout, -1, STRING(r, s, 1), s);
}

SONDE_EXPORT int fputs(const char *s, FILE *f)
{
	STDIO_CALL(SONDE_IO_FPUTS, fputs, int, EOF, f, -1, STRING(r, s, 0), s, f);
}

SONDE_EXPORT int fputs_unlocked(const char *s, FILE *f)
{
	STDIO_CALL(SONDE_IO_FPUTS, fputs_unlocked, int, EOF, f, -1, STRING(r, s, 0), s, f);
}

SONDE_EXPORT int fputc(int c, FILE *f)
{
	STDIO_CALL(SONDE_IO_PUTC, fputc, int, EOF, f, -1, CHAR_OUT(r), c, f);
}

SONDE_EXPORT int putc(int c, FILE *f)
{
	STDIO_CALL(SONDE_IO_PUTC, putc, int, EOF, f, -1, CHAR_OUT(r), c, f);
}

SONDE_EXPORT int putchar(int c)
{
	STDIO_CALL(SONDE_IO_PUTC, putchar, int, EOF, stdout, -1, CHAR_OUT(r), c);
}

SONDE_EXPORT int fputc_unlocked(int c, FILE *f)
{
	STDIO_CALL(SONDE_IO_PUTC, fputc_unlocked, int, EOF, f, -1, CHAR_OUT(r), c, f);
}

SONDE_EXPORT int putc_unlocked(int c, FILE *f)
{
	STDIO_CALL(SONDE_IO_PUTC, putc_unlocked, int, EOF, f, -1, CHAR_OUT(r), c, f);
}

SONDE_EXPORT int putchar_unlocked(int c)
{
	STDIO_CALL(SONDE_IO_PUTC, putchar_unlocked, int, EOF, stdout, -1, CHAR_OUT(r), c);
}

SONDE_EXPORT int fgetc(FILE *f)
{
	STDIO_CALL(SONDE_IO_GETC, fgetc, int, EOF, f, -1, CHAR_IN(r, f), f);
}

SONDE_EXPORT int getc(FILE *f)
{
	STDIO_CALL(SONDE_IO_GETC, getc, int, EOF, f, -1, CHAR_IN(r, f), f);
}

SONDE_EXPORT int getchar(void)
{
	STDIO_CALL(SONDE_IO_GETC, getchar, int, EOF, stdin, -1, CHAR_IN(r, stdin));
}

SONDE_EXPORT int fgetc_unlocked(FILE *f)
{
	STDIO_CALL(SONDE_IO_GETC, fgetc_unlocked, int, EOF, f, -1, CHAR_IN(r, f), f);
}

SONDE_EXPORT int getc_unlocked(FILE *f)
{
	STDIO_CALL(SONDE_IO_GETC, getc_unlocked, int, EOF, f, -1, CHAR_IN(r, f), f);
}

SONDE_EXPORT int getchar_unlocked(void)
{
	STDIO_CALL(SONDE_IO_GETC, getchar_unlocked, int, EOF, stdin, -1, CHAR_IN(r, stdin));
}

/* fgets: the bytes up to the string's end (a line holding a NUL byte is
 * counted up to it). */
#define LINE_IN(r, f) ((r) ? (int64_t)strlen(r) : short_read(f, -2))

SONDE_EXPORT char *fgets(char *s, int n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FGETS, fgets, char *, NULL, f, -1, LINE_IN(r, f), s, n, f);
}

SONDE_EXPORT char *fgets_unlocked(char *s, int n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FGETS, fgets_unlocked, char *, NULL, f, -1, LINE_IN(r, f), s, n, f);
}

SONDE_EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FGETS, __fgets_chk, char *, NULL, f, -1, LINE_IN(r, f), s, size, n, f);
}

SONDE_EXPORT char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f)
{
	STDIO_CALL(SONDE_IO_FGETS, __fgets_unlocked_chk, char *, NULL, f, -1, LINE_IN(r, f), s, size, n, f);
}

#define GOT_LINE(r, f) ((r) >= 0 ? (int64_t)(r) : short_read(f, -2))

SONDE_EXPORT ssize_t getline(char **line, size_t *n, FILE *f)
{
	STDIO_CALL(SONDE_IO_GETLINE, getline, ssize_t, -1, f, -1, GOT_LINE(r, f), line, n, f);
}

SONDE_EXPORT ssize_t getdelim(char **line, size_t *n, int delim, FILE *f)
{
	STDIO_CALL(SONDE_IO_GETLINE, getdelim, ssize_t, -1, f, -1, GOT_LINE(r, f), line, n, delim, f);
}

SONDE_EXPORT ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f)
{
	STDIO_CALL(SONDE_IO_GETLINE, __getdelim, ssize_t, -1, f, -1, GOT_LINE(r, f), line, n, delim, f);
}

SONDE_EXPORT int fflush(FILE *f)
{
	RESOLVE(fflush);
	if (!REAL(fflush)) {
		errno = ENOSYS;
		return EOF;
	}
	if (!recording(RA))
		return REAL(fflush)(f);
	uint64_t t0 = sonde_now_ns();
	int r = REAL(fflush)(f);
	other_done(SONDE_IO_FFLUSH, stream_fd(f), r == EOF, t0); /* fflush(NULL): fd -1 */
	return r;
}

/* ---- descriptor creators and closers that are not traced ---------------------- */

SONDE_EXPORT int pipe(int fds[2])
{
	RESOLVE(pipe);
	int r = REAL(pipe) ? REAL(pipe)(fds) : (int)syscall(SYS_pipe2, fds, 0);
	if (r == 0) {
		fresh_fd(fds[0]);
		fresh_fd(fds[1]);
	}
	return r;
}

SONDE_EXPORT int pipe2(int fds[2], int flags)
{
	RESOLVE(pipe2);
	int r = REAL(pipe2) ? REAL(pipe2)(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
	if (r == 0) {
		fresh_fd(fds[0]);
		fresh_fd(fds[1]);
	}
	return r;
}

SONDE_EXPORT int socket(int domain, int type, int protocol)
{
	RESOLVE(socket);
	int r = REAL(socket) ? REAL(socket)(domain, type, protocol)
			    : (int)syscall(SYS_socket, domain, type, protocol);
	fresh_fd(r);
	return r;
}

SONDE_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	RESOLVE(socketpair);
	int r = REAL(socketpair) ? REAL(socketpair)(domain, type, protocol, fds)
				: (int)syscall(SYS_socketpair, domain, type, protocol, fds);
	if (r == 0) {
		fresh_fd(fds[0]);
		fresh_fd(fds[1]);
	}
	return r;
}

SONDE_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	RESOLVE(accept);
	int r = REAL(accept) ? REAL(accept)(fd, addr, len) : (int)syscall(SYS_accept, fd, addr, len);
	fresh_fd(r);
	return r;
}

SONDE_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	RESOLVE(accept4);
	int r = REAL(accept4) ? REAL(accept4)(fd, addr, len, flags)
			     : (int)syscall(SYS_accept4, fd, addr, len, flags);
	fresh_fd(r);
	return r;
}

/* fcntl(F_DUPFD) is a dup: the copy keeps the file's id. */
static void fcntl_done(int fd, int cmd, int r, const void *ra)
{
	if (r < 0 || (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || call_state(ra) == ST_PASS)
		return;
	tab_set(r, tab_get(fd));
}

SONDE_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	RESOLVE(fcntl);
	int r = REAL(fcntl) ? REAL(fcntl)(fd, cmd, arg) : (int)syscall(SYS_fcntl, fd, cmd, arg);
	int e = errno;
	fcntl_done(fd, cmd, r, RA);
	errno = e;
	return r;
}

static void forget_range(unsigned first, unsigned last)
{
	if (!atomic_load_explicit(&g_attached, memory_order_relaxed) || !g_tab)
		return;
	for (unsigned fd = first; fd <= last && fd < FD_TABLE; fd++)
		if (atomic_load_explicit(&g_tab[fd], memory_order_relaxed))
			atomic_store_explicit(&g_tab[fd], 0, memory_order_relaxed);
}

SONDE_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	RESOLVE(close_range);
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last && !t_busy)
		forget_range(first, last);
	return REAL(close_range) ? REAL(close_range)(first, last, flags)
				: (int)syscall(SYS_close_range, first, last, flags);
}

SONDE_EXPORT void closefrom(int lowfd)
{
	RESOLVE(closefrom);
	if (!t_busy)
		forget_range(lowfd < 0 ? 0u : (unsigned)lowfd, ~0u);
	if (REAL(closefrom))
		REAL(closefrom)(lowfd);
	else
		syscall(SYS_close_range, lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
}

/* ---- the module (tracer.h) and start ---------------------------------------------- */

/* A followed fork child records into its own experiment, where the
 * parent's file ids were never named: forget them all, so that each
 * descriptor is named again (from /proc/self/fd) on its first use. */
static void io_fork_child(void)
{
	if (g_tab)
		sonde_own_syscall(SYS_madvise, g_tab, FD_TABLE * sizeof(uint64_t), MADV_DONTNEED);
}

static void io_start(const char *setting)
{
	(void)setting; /* "on" */
	atomic_store(&g_attached, 1);
}

static const struct sonde_packet_format io_packets[] = {
	{ SONDE_PKT_IO, "io", 56,
	  "type:0:u16 size:2:u16 func:4:u8 flags:5:u8 reserved:6:u16 fd:8:i32 err:12:i32 "
	  "time_ns:16:u64 dur_ns:24:u64 bytes:32:i64 file_id:40:u64 stack_id:48:u64" },
	{ SONDE_PKT_IO_FILE, "io_file", 24,
	  "type:0:u16 size:2:u16 name_len:4:u32 file_id:8:u64 time_ns:16:u64 name:24:char[name_len]" },
};

/* A fork child records into its own experiment (when followed), where
 * the parent's file ids were never named. */
static const struct sonde_module io_module = {
	.kind = SONDE_KIND_IO,
	.on = &g_on,
	.packets = io_packets,
	.npackets = sizeof io_packets / sizeof io_packets[0],
	.start = io_start,
	.fork_child = io_fork_child,
};

__attribute__((constructor)) static void io_init(void)
{
	int e = errno;
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(pread);
	RESOLVE(pwrite);
	RESOLVE(readv);
	RESOLVE(writev);
	RESOLVE(preadv);
	RESOLVE(pwritev);
	RESOLVE(preadv2);
	RESOLVE(pwritev2);
	RESOLVE(__read_chk);
	RESOLVE(__pread_chk);
	RESOLVE(open);
	RESOLVE(openat);
	RESOLVE(__open_2);
	RESOLVE(__openat_2);
	RESOLVE(creat);
	RESOLVE(close);
	RESOLVE(dup);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(lseek);
	RESOLVE(fsync);
	RESOLVE(fdatasync);
	RESOLVE(fopen);
	RESOLVE(fdopen);
	RESOLVE(freopen);
	RESOLVE(fclose);
	RESOLVE(pclose);
	RESOLVE(fread);
	RESOLVE(fread_unlocked);
	RESOLVE(__fread_chk);
	RESOLVE(__fread_unlocked_chk);
	RESOLVE(fwrite);
	RESOLVE(fwrite_unlocked);
	RESOLVE(fflush);
	RESOLVE(vprintf);
	RESOLVE(__vprintf_chk);
	RESOLVE(vfprintf);
	RESOLVE(__vfprintf_chk);
	RESOLVE(vdprintf);
	RESOLVE(__vdprintf_chk);
	RESOLVE(puts);
	RESOLVE(fputs);
	RESOLVE(fputs_unlocked);
	RESOLVE(fputc);
	RESOLVE(putc);
	RESOLVE(putchar);
	RESOLVE(fputc_unlocked);
	RESOLVE(putc_unlocked);
	RESOLVE(putchar_unlocked);
	RESOLVE(fgetc);
	RESOLVE(getc);
	RESOLVE(getchar);
	RESOLVE(fgetc_unlocked);
	RESOLVE(getc_unlocked);
	RESOLVE(getchar_unlocked);
	RESOLVE(fgets);
	RESOLVE(fgets_unlocked);
	RESOLVE(__fgets_chk);
	RESOLVE(__fgets_unlocked_chk);
	RESOLVE(getline);
	RESOLVE(getdelim);
	RESOLVE(__getdelim);
	RESOLVE(pipe);
	RESOLVE(pipe2);
	RESOLVE(socket);
	RESOLVE(socketpair);
	RESOLVE(accept);
	RESOLVE(accept4);
	RESOLVE(fcntl);
	RESOLVE(close_range);
	RESOLVE(closefrom);

	/* By system call: with -H on, mmap is the heap tracer's, which must
	 * not count sonde's own memory as the target's. */
	void *tab = (void *)syscall(SYS_mmap, NULL, FD_TABLE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (tab != MAP_FAILED)
		g_tab = tab;
	__sonde_trace_on_filter(io_before_filter);
	/* The table is ready before g_on can become 1. */
	__sonde_module_register(&io_module);
	errno = e;
}

/* ---- 64-bit-offset entry points ---------------------------------------------- */

/* On LP64 off64_t is off_t, and glibc's open64, pread64, lseek64, fopen64,
 * ... are aliases of the plain functions; ours are too. */
_Static_assert(sizeof(off_t) == sizeof(off64_t), "an LP64 ABI");
#define ALIAS(name, target) extern __typeof__(target) name SONDE_EXPORT __attribute__((alias(#target)))
ALIAS(pread64, pread);
ALIAS(pwrite64, pwrite);
ALIAS(preadv64, preadv);
ALIAS(pwritev64, pwritev);
ALIAS(preadv64v2, preadv2);
ALIAS(pwritev64v2, pwritev2);
ALIAS(__pread64_chk, __pread_chk);
ALIAS(lseek64, lseek);
ALIAS(open64, open);
ALIAS(openat64, openat);
ALIAS(__open64_2, __open_2);
ALIAS(__openat64_2, __openat_2);
ALIAS(creat64, creat);
ALIAS(fopen64, fopen);
ALIAS(freopen64, freopen);
ALIAS(fcntl64, fcntl);
