/* Private to the data-file code: dfile.c (set-up, normal context) and
 * dfile_write.c (the writing path, async-signal-safe). */
#ifndef SONDE_COLLECTOR_DFILE_H
#define SONDE_COLLECTOR_DFILE_H

#include "collector.h"

#define CHUNK (256u << 10)
#define MAX_KINDS (SONDE_KIND_MAX + 1) /* arrays indexed by kind id */


struct dfile {
	uint32_t kind;
	char *base;		/* file offset 0 */
	size_t reserve;		/* bytes of address space reserved */
	_Atomic size_t mapped;	/* bytes of the file mapped at base */
	_Atomic uint32_t next_block;
	_Atomic int growing;
	_Atomic int dead;	/* fork child, finished, or error */
	_Atomic int grow_errno;	/* why the file could not grow, 0 if it could */
	char name[16];
	_Atomic uint64_t lost;
	/* No descriptor is kept: the target could take its number.  Growth
	 * opens the file by its absolute path and checks it is the same file
	 * (device, inode) before extending it.  The path lives in a table
	 * of dfile.c, one per kind, not in this struct: with it the struct
	 * is over 4 KiB, and allocating that in the target's heap made a
	 * heap-churning target 13% slower under -H on. */
	const char *path;
	uint64_t dev, ino;
};

/* Per thread and kind: the block being filled.  Exported (as
 * __sonde_tblocks): the tracing libraries append to the current block
 * inline (tracers/tracer.h, struct sonde_tblock, the same layout). */
struct tblock {
	struct sonde_block_header *blk; /* NULL: none, or pending */
	uint32_t pending;		/* claimed block index + 1, not yet mapped */
	uint32_t used;
};
extern __thread struct tblock __sonde_tblocks[MAX_KINDS] __attribute__((tls_model("initial-exec")));
#define t_blocks __sonde_tblocks

extern _Atomic uint64_t g_bytes_mapped;

int reserve_space(int fd, size_t off, size_t len);
/* Open the data file for growth: a descriptor, or -1 with errno. */
int dfile_open_again(const struct dfile *df);
/* Map df up to `end`; 0 when another thread is growing it. */
int dfile_grow_to(struct dfile *df, size_t end);

static inline size_t block_off(uint32_t idx)
{
	return SONDE_FILE_HEADER_SIZE + (size_t)idx * SONDE_BLOCK_SIZE;
}

#endif
