/* Opening only regular files for reading: see safeopen.h. */
#define _GNU_SOURCE
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sonde_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -1;
	int r = fstat(fd, &st);

	if (r < 0 || !S_ISREG(st.st_mode)) {
		int e = r < 0 ? errno : SONDE_ENOTREG;

		close(fd);
		errno = e;
		return -1;
	}
	/* back to blocking reads: they are what every caller expects */
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

const char *sonde_open_strerror(int err)
{
	return err == SONDE_ENOTREG ? "not a regular file" : strerror(err);
}

char *sonde_read_regular(const char *path, size_t *len)
{
	int fd = sonde_open_regular(path);
	size_t n = 0, cap = 0;
	char *b = NULL;

	if (fd < 0)
		return NULL;
	/* The file's size now, as a first guess: it may still grow. */
	struct stat st;
	size_t first = fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 4 ?
			       (size_t)st.st_size + 1 :
			       65536;

	for (;;) {
		if (n + 1 >= cap) {
			char *nb = cap > SIZE_MAX / 4 ? NULL : realloc(b, cap = cap ? cap * 2 : first);

			if (!nb) {
				free(b);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n - 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(b);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*len = n;
	return b;
}
