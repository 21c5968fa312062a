/* log.xml: one element per line, appended with single write() calls on an
 * O_APPEND descriptor, so concurrent writers (threads, a signal handler,
 * and `sonde collect` after the target ended) never interleave within a
 * line.  The collector never writes the closing tag; `sonde collect` does
 * once the target is gone, and readers accept a log without it.
 *
 * No descriptor of it stays in the target's table between writes: a
 * program that counts or closes its descriptors at main would see it
 * (the log is written a few dozen times a run, so each write opens it by
 * its absolute path, checks it is still the file created at the start
 * (device and inode), appends, and closes it).  Under a seccomp filter
 * that refuses opening it, a descriptor is kept from the moment the filter
 * is installed (log_filter_prepare).  A kept descriptor lives where the
 * target may take its number: dup2 onto it, or close it with a raw
 * close_range and open a file of its own that gets the number.  Every
 * write first checks that the descriptor still refers to log.xml (fstat);
 * when it does not, log.xml is opened again by its path and the event is
 * logged.  A write therefore never lands in the target's file, except in
 * the window between the check and the write, which only a target thread
 * racing the collector's write could hit. */
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

extern struct cfile g_log;

/* Set while a clone(CLONE_FILES) child forgets its parent's collector:
 * the parent's descriptors are in the one table they share, and closing
 * them there would cut off the parent's log, data files and sampling
 * counters (and let the child's own files take their numbers, so that
 * the parent writes into the child's experiment).  They stay protected in
 * the child too: the child's closefrom() must not close them either. */
int g_table_shared;

void fd_table_shared(int on)
{
	g_table_shared = on;
}

int cfile_open(struct cfile *f, const char *path, int flags, int per_write)
{
	if (strlen(path) >= sizeof f->path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	strcpy(f->path, path);
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	if (per_write) {
		syscall(SYS_close, fd);
		atomic_store(&f->fd, -1);
		atomic_store(&f->per_write, 1);
	} else {
		atomic_store(&f->fd, fd_park(fd));
	}
	return 0;
}

void cfile_keep(struct cfile *f)
{
	if (!atomic_load(&f->per_write) || atomic_load(&f->fd) >= 0)
		return;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, f->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (syscall(SYS_fstat, fd, &st) < 0 || (uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino)) {
		syscall(SYS_close, fd);
		fd = -1;
	}
	if (fd >= 0)
		atomic_store(&f->fd, fd_park(fd));
}

void cfile_close(struct cfile *f)
{
	atomic_store(&f->per_write, 0);
	int fd = atomic_exchange(&f->fd, -1);
	fd_release(fd);
}

int log_open(const char *expdir, int exclusive)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/log.xml", expdir);
	return cfile_open(&g_log, path, O_WRONLY | O_APPEND | (exclusive ? O_CREAT | O_EXCL : 0), 1);
}

void log_filter_prepare(void)
{
	fsize_limit_note();
	if (!sysgate_would_allow6(SYS_openat, AT_FDCWD, (long)g_log.path, O_WRONLY | O_APPEND | O_CLOEXEC, 0, 0, 0))
		cfile_keep(&g_log);
}

void log_close(void)
{
	cfile_close(&g_log);
}
