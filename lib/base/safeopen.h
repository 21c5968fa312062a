#ifndef SONDE_SAFEOPEN_H
#define SONDE_SAFEOPEN_H

#include <stddef.h>

/*
 * Opening the files experiment data names (map.xml's objects, the line
 * tables' sources, the experiment's own files): any of them may be a FIFO,
 * a device or a socket, and open(2) of a FIFO for reading blocks until a
 * writer comes, forever.  sonde_open_regular() opens with O_NONBLOCK (which
 * does not block on a FIFO, and is harmless on a regular file), then
 * refuses what fstat() says is not a regular file.
 */

/* A read-only descriptor (O_CLOEXEC) on path, or -1 with errno set:
 * SONDE_ENOTREG when path is not a regular file (a directory, a FIFO, a
 * device, a socket), else open's errno. */
int sonde_open_regular(const char *path);

/* The errno sonde_open_regular() gives a file that is not regular. */
#define SONDE_ENOTREG 0x5e7 /* no errno value is that large */

/* strerror(), with "not a regular file" for SONDE_ENOTREG. */
const char *sonde_open_strerror(int err);

/* The whole of regular file path, malloc'ed and NUL-terminated (its
 * length in *len): NULL with errno set when it cannot be opened
 * (sonde_open_regular) or read, or ENOMEM.  The file's own NUL bytes stay
 * (*len counts them). */
char *sonde_read_regular(const char *path, size_t *len);

#endif
