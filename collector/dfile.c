/*
 * Data files (set-up and shutdown; the writing path is dfile_write.c): a file header, then fixed-size blocks, each owned by one
 * thread (see include/sonde/format.h).
 *
 * Why blocks: a thread appends to its own block without any lock; the only
 * shared write is one atomic increment to claim the next block.  Why
 * memory-mapped: a packet is written with plain stores and published by a
 * release store of the block's `used` count, which makes it visible to a
 * reader of the live file and keeps it in the page cache if the target is
 * killed.
 *
 * The file grows in chunks.  A virtual range as large as the size limit is
 * reserved up front (PROT_NONE, no memory), and chunks of the file are
 * mapped into it with MAP_FIXED as the file grows, so block addresses never
 * move.  Growth is started ahead of need (when a claimed block lies in the
 * last half of the mapped range) by whichever thread wins a flag; a thread
 * whose block is not mapped yet drops its packet (counted) and retries with
 * the same block next time rather than wait inside a signal handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dfile.h"

_Atomic uint64_t g_bytes_limit;
_Atomic int g_limit_hit;
_Atomic uint64_t g_bytes_mapped;

/* The files' absolute paths, for growth (dfile.h says why not in the
 * struct).  One data file per kind per process. */
static char g_paths[MAX_KINDS][4200];
/* The files of this process, for dfile_filter_prepare. */
static struct dfile *g_files[MAX_KINDS];

struct dfile *dfile_create(const char *expdir, const char *name, uint32_t kind)
{
	char path[4200];
	struct dfile *df = NULL;
	if (kind >= MAX_KINDS) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", expdir, name);
	if (strlen(path) >= sizeof g_paths[0]) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	struct stat st;
	__sonde_quiet++;
	df = calloc(1, sizeof *df);
	__sonde_quiet--;
	if (!df || syscall(SYS_fstat, fd, &st) < 0)
		goto fail;
	strcpy(g_paths[kind], path);
	g_files[kind] = df;
	df->path = g_paths[kind];
	df->dev = (uint64_t)st.st_dev;
	df->ino = (uint64_t)st.st_ino;
	df->kind = kind;
	snprintf(df->name, sizeof df->name, "%s", name);
	uint64_t limit = atomic_load(&g_bytes_limit);
	df->reserve = limit ? (size_t)limit + CHUNK : (size_t)64 << 30;
	df->reserve = (df->reserve + CHUNK - 1) & ~(size_t)(CHUNK - 1);
	void *va = sonde_mmap(NULL, df->reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		goto fail;
	df->base = va;
	if (reserve_space(fd, 0, CHUNK) < 0 ||
	    sonde_mmap(df->base, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		sonde_munmap(va, df->reserve);
		goto fail;
	}
	/* The mapping keeps the file; growth opens it again. */
	syscall(SYS_close, fd);
	atomic_store(&df->mapped, CHUNK);
	atomic_fetch_add(&g_bytes_mapped, CHUNK);

	struct sonde_file_header *h = (struct sonde_file_header *)df->base;
	memcpy(h->magic, SONDE_DATA_MAGIC, 8);
	h->version = SONDE_FORMAT_VERSION;
	h->kind = kind;
	h->header_size = SONDE_FILE_HEADER_SIZE;
	h->block_size = SONDE_BLOCK_SIZE;
	h->pid = (uint32_t)getpid();
	h->start_ns = g_col.start_ns;
	memcpy(h->kind_name, name, strnlen(name, sizeof h->kind_name));
	return df;
fail:;
	int e = errno;
	__sonde_quiet++;
	free(df);
	__sonde_quiet--;
	syscall(SYS_close, fd);
	unlink(path); /* leave no file without a header behind */
	errno = e;
	return NULL;
}

void dfile_finish(struct dfile *df)
{
	if (!df)
		return;
	/* Other threads may still be inside dfile_reserve(); truncating the
	 * file under their mapping would raise SIGBUS in the target.  The
	 * unused tail (zero blocks, sparse) is trimmed by `sonde collect`
	 * after the target has ended. */
	atomic_store(&df->dead, 1);
}

void dfile_close_fd(struct dfile *df)
{
	if (!df)
		return;
	atomic_store(&df->dead, 1);
	/* Taking the growth flag for good: a growth under way holds a
	 * descriptor of the file; none is opened after this. */
	for (int i = 0; i < 100000; i++) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&df->growing, &expected, 1))
			return;
		syscall(SYS_sched_yield);
	}
}

/* How much further each data file is mapped when a seccomp filter will
 * refuse growing it: 8 MiB, 170,000 clock samples.  What comes after
 * that is counted as lost, as after a full disk. */
#define FILTER_AHEAD ((size_t)8 << 20)

void dfile_filter_prepare(void)
{
	/* dfile_put_blocks' own writes: refused, it writes through the
	 * mapping (grown ahead below); with every count of vectors it may
	 * write */
	int pw = sysgate_would_allow6(SYS_openat, AT_FDCWD, 0, O_RDWR | O_CLOEXEC, 0, 0, 0) &&
		  sysgate_would_allow6(SYS_fstat, 0, 0, 0, 0, 0, 0) && sysgate_would_allow6(SYS_close, 0, 0, 0, 0, 0, 0) &&
		  sysgate_would_allow6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, 0, 0, 0);
	for (int nv = 2; pw && nv <= 3 * DFILE_PUT_MAX; nv++)
		pw = sysgate_would_allow6(SYS_pwritev, 0, 0, nv, 0, 0, 0);
	if (!pw)
		atomic_store(&g_dfile_pwrite_ok, 0);
	/* The calls grow() makes, with the arguments it makes them with. */
	int ok = sysgate_would_allow6(SYS_openat, AT_FDCWD, 0, O_RDWR | O_CLOEXEC, 0, 0, 0) &&
		 sysgate_would_allow6(SYS_fstat, 0, 0, 0, 0, 0, 0) &&
		 sysgate_would_allow6(SYS_close, 0, 0, 0, 0, 0, 0) &&
		 sysgate_would_allow6(SYS_mmap, 0, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, 0, 0) &&
		 sysgate_would_allow6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, 0, 0, 0) &&
		 (sysgate_would_allow6(SYS_pwrite64, 0, 0, CHUNK, 0, 0, 0) ||
		  sysgate_would_allow6(SYS_fallocate, 0, 0, 0, CHUNK, 0, 0));
	if (ok)
		return;
	for (int k = 0; k < MAX_KINDS; k++) {
		struct dfile *df = g_files[k];
		if (!df || atomic_load(&df->dead))
			continue;
		size_t need = block_off(atomic_load(&df->next_block)) + FILTER_AHEAD;
		for (int i = 0; i < 2000 && atomic_load(&df->mapped) < need && !atomic_load(&df->dead); i++)
			if (!dfile_grow_to(df, need))
				syscall(SYS_sched_yield);
	}
	log_event_text("info", "the seccomp filter refuses growing the data files: each was mapped 8 MiB further "
			       "ahead; what they take after that is counted as lost");
}

void dfile_forget(struct dfile *df)
{
	if (!df)
		return;
	g_files[df->kind] = NULL;
	atomic_store(&df->dead, 1);
	sonde_munmap(df->base, df->reserve);
	memset(t_blocks, 0, sizeof t_blocks);
}
