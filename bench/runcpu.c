/*
 * runcpu: run a command and print the CPU time (user + system) of it and
 * all its waited-for descendants, and its wall time:
 *     "cpu_s 1.234567 wall_s 1.300000 status 0"
 * Output of the command goes to /dev/null unless RUNCPU_OUT names a file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: runcpu COMMAND [ARGS]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		const char *out = getenv("RUNCPU_OUT");
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec * 1e-6;
	printf("cpu_s %.6f wall_s %.6f status %d\n", cpu,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
