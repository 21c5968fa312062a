/* mmap and munmap by system call, never through an interposable symbol
 * (see collector.h).  Async-signal-safe. */
#ifndef SONDE_COLLECTOR_SYS_MMAP_H
#define SONDE_COLLECTOR_SYS_MMAP_H

#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline void *sonde_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static inline int sonde_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

#endif
