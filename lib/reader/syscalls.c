/*
 * syscalls: the names of the x86-64 system calls that off-CPU samples
 * (include/sonde/format.h, struct sonde_offcpu_packet) most often block
 * in.  Not every call: the others are shown by number.
 */
#include <stddef.h>

#include "reader/experiment.h"

static const struct {
	unsigned short nr;
	const char *name;
} calls[] = {
	{ 0, "read" },		 { 1, "write" },	 { 2, "open" },		{ 3, "close" },
	{ 7, "poll" },		 { 9, "mmap" },		 { 16, "ioctl" },	{ 17, "pread64" },
	{ 18, "pwrite64" },	 { 19, "readv" },	 { 20, "writev" },	{ 23, "select" },
	{ 24, "sched_yield" },	 { 34, "pause" },	 { 35, "nanosleep" },	{ 42, "connect" },
	{ 43, "accept" },	 { 44, "sendto" },	 { 45, "recvfrom" },	{ 46, "sendmsg" },
	{ 47, "recvmsg" },	 { 61, "wait4" },	 { 72, "fcntl" },	{ 73, "flock" },
	{ 74, "fsync" },	 { 75, "fdatasync" },	 { 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" },
	{ 202, "futex" },	 { 208, "io_getevents" }, { 230, "clock_nanosleep" }, { 232, "epoll_wait" },
	{ 247, "waitid" },	 { 257, "openat" },	 { 270, "pselect6" },	{ 271, "ppoll" },
	{ 281, "epoll_pwait" },	 { 288, "accept4" },	 { 295, "preadv" },	{ 296, "pwritev" },
	{ 299, "recvmmsg" },	 { 307, "sendmmsg" },	 { 426, "io_uring_enter" }, { 441, "epoll_pwait2" },
};

const char *sonde_syscall_name(unsigned nr)
{
	if (nr == SONDE_OFFCPU_NO_SYSCALL)
		return "none";
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i].nr == nr)
			return calls[i].name;
	return NULL;
}
