/*
 * The cost of kernel call stacks (bench/kstacks.sh): fixed work, half of
 * it in the kernel.  ROUNDS rounds, each reading a cached 2 MiB file
 * with pread (the kernel copies its pages) and doing as much user
 * arithmetic.
 *	kbench FILE [ROUNDS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE (2u << 20)

static volatile double sink;

__attribute__((noinline)) static void compute(long n)
{
	double x = 1;
	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

__attribute__((noinline)) static void read_file(int fd, char *buf)
{
	for (size_t off = 0; off < SIZE; off += 65536)
		if (pread(fd, buf, 65536, (off_t)off) != 65536)
			exit(1);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long rounds = argc > 2 ? atol(argv[2]) : 6000;
	char *buf = malloc(SIZE);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf)
		return 1;
	memset(buf, 'x', SIZE);
	if (write(fd, buf, SIZE) != SIZE)
		return 1;
	for (long r = 0; r < rounds; r++) {
		read_file(fd, buf);
		compute(50000);
	}
	close(fd);
	unlink(argv[1]);
	return 0;
}
