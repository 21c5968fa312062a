/*
 * jit.map: the target's perf map file, copied into the experiment when
 * collection ends.
 *
 * JITs announce the code they generate by appending "START SIZE NAME"
 * lines to /tmp/perf-PID.map (perf's convention; perf reads the file from
 * /tmp at report time).  sonde copies it instead of reading it later: by
 * then the pid may belong to another process, the file may be gone (tmp
 * cleaners, reboots), or the experiment may have moved to another machine.
 * The file is complete only when the target stops generating code, hence
 * the copy at the end.  `sonde collect` makes the same copy after the
 * target ended when this one could not (SIGKILL, exec): lib/symbols/dynfunc.c.
 *
 * Only plain system calls: this runs from _exit too, possibly on a thread
 * with a small stack (buffers are mapped, not on the stack), and never
 * touches stdio or the heap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "collector.h"

/* This runs at the target's exit, perhaps under its seccomp filter: every
 * call goes through the collector's gate (sysgate.c), which refuses what
 * the filter would. */
#define open(...) ((int)syscall(SYS_open, __VA_ARGS__))
#define fstat(fd, st) ((int)syscall(SYS_fstat, fd, st))
#define geteuid() ((uid_t)syscall(SYS_geteuid))
#define read(fd, b, n) ((ssize_t)syscall(SYS_read, fd, b, n))
#define write(fd, b, n) ((ssize_t)syscall(SYS_write, fd, b, n))
#define close(fd) syscall(SYS_close, fd)
#define rename(a, b) ((int)syscall(SYS_rename, a, b))
#define unlink(a) syscall(SYS_unlink, a)

/* When this process started, by the wall clock file times use.  Perf maps
 * are left behind by convention and pids are reused: a map last written
 * before the target started belongs to another process. */
static time_t g_start_sec;

__attribute__((constructor)) static void jitmap_init(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_REALTIME, &t) == 0)
		g_start_sec = t.tv_sec;
}

/* Opens DIR/perf-PID.map as perf would trust it: a regular file, not
 * through a symlink (the directory is world-writable), owned by us or by
 * root.  -1 with errno. */
static int open_perf_map(const char *dir, pid_t pid, char *path, size_t size)
{
	struct xbuf b;

	xb_init(&b, path, size);
	xb_str(&b, dir);
	xb_str(&b, "/perf-");
	xb_u64(&b, (uint64_t)pid);
	xb_str(&b, ".map");
	if (b.overflow || b.len >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	path[b.len] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

#define PATH_CAP 4200

struct scratch {
	char src[PATH_CAP], tmp[PATH_CAP], dst[PATH_CAP];
	char msg[PATH_CAP + 400];
	char buf[16384];
};

static void warn(char *mem, size_t cap, const char *what, const char *path, int err)
{
	struct xbuf b;

	xb_init(&b, mem, cap - 1);
	xb_str(&b, what);
	xb_str(&b, " '");
	xb_str(&b, path);
	xb_str(&b, "': ");
	xb_str(&b, strerror(err));
	xb_str(&b, "; JIT code is shown as addresses");
	mem[b.len] = 0;
	log_event_text("warning", mem);
}

static int path_in(char *out, size_t size, const char *expdir, const char *name)
{
	struct xbuf b;

	xb_init(&b, out, size);
	xb_str(&b, expdir);
	xb_str(&b, "/");
	xb_str(&b, name);
	if (b.overflow || b.len >= size)
		return -1;
	out[b.len] = 0;
	return 0;
}

static void save(struct scratch *m, const char *expdir, pid_t pid)
{
	char *src = m->src, *tmp = m->tmp, *dst = m->dst, *buf = m->buf;

	if (path_in(tmp, PATH_CAP, expdir, "jit.map.part") < 0 ||
	    path_in(dst, PATH_CAP, expdir, "jit.map") < 0)
		return;
	/* /tmp is where perf looks and where JITs write whatever TMPDIR says;
	 * $TMPDIR only for a JIT that honours it. */
	int in = open_perf_map("/tmp", pid, src, PATH_CAP);
	const char *tmpdir = getenv("TMPDIR");

	if (in < 0 && errno == ENOENT && tmpdir && *tmpdir && strcmp(tmpdir, "/tmp"))
		in = open_perf_map(tmpdir, pid, src, PATH_CAP);
	if (in < 0) {
		if (errno != ENOENT)
			warn(m->msg, sizeof m->msg, "cannot read the perf map", src, errno);
		return;
	}
	struct stat st;

	/* A second of slack: file times come from the coarse kernel clock. */
	if (fstat(in, &st) == 0 && st.st_mtime < g_start_sec - 1) {
		close(in);
		struct xbuf b;

		xb_init(&b, m->msg, sizeof m->msg - 1);
		xb_str(&b, "perf map '");
		xb_str(&b, src);
		xb_str(&b, "' is older than the target (left by an earlier process with its pid); ignored");
		m->msg[b.len] = 0;
		log_event_text("info", m->msg);
		return;
	}
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (out < 0) {
		warn(m->msg, sizeof m->msg, "cannot create", tmp, errno);
		close(in);
		return;
	}
	uint64_t total = 0;
	int err = 0;
	const char *failed = src;

	for (;;) {
		ssize_t r = read(in, buf, sizeof m->buf);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				err = errno;
			break;
		}
		for (ssize_t w = 0; w < r && !err;) {
			ssize_t k = write(out, buf + w, (size_t)(r - w));

			if (k < 0 && errno != EINTR)
				err = errno, failed = tmp;
			else if (k > 0)
				w += k;
		}
		if (err)
			break;
		total += (uint64_t)r;
	}
	close(in);
	if (close(out) < 0 && !err)
		err = errno, failed = tmp;
	/* Renamed whole, so that sonde collect never mistakes a copy cut
	 * short by SIGKILL for a finished one. */
	if (!err && rename(tmp, dst) < 0)
		err = errno, failed = dst;
	if (err) {
		unlink(tmp);
		warn(m->msg, sizeof m->msg, "cannot copy the perf map", failed, err);
		return;
	}
	char *mem = m->msg;
	struct xbuf b;

	xb_init(&b, mem, sizeof m->msg - 1);
	xb_str(&b, "perf map '");
	xb_str(&b, src);
	xb_str(&b, "' copied to jit.map (");
	xb_u64(&b, total);
	xb_str(&b, " bytes)");
	mem[b.len] = 0;
	log_event_text("info", mem);
}

void jitmap_save(const char *expdir, pid_t pid)
{
	struct scratch *m = sonde_mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		if (errno == EPERM && sysgate_active())
			log_event_text("info", "perf map not copied: the target's seccomp filter refuses the calls "
					       "that take; JIT code (if any) is shown as addresses");
		else
			log_event_text("warning", "cannot map memory to copy the perf map; JIT code is shown as addresses");
		return;
	}
	save(m, expdir, pid);
	sonde_munmap(m, sizeof *m);
}
