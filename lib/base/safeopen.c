/* Opening only regular files for reading: see safeopen.h. */
#define _GNU_SOURCE
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
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
