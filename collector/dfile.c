/*
 * Data files: a file header, then fixed-size blocks, each owned by one
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector.h"

#define CHUNK (1u << 20)
#define MAX_KINDS 8


struct dfile {
	int fd;
	uint32_t kind;
	char *base;		/* file offset 0 */
	size_t reserve;		/* bytes of address space reserved */
	_Atomic size_t mapped;	/* bytes of the file mapped at base */
	_Atomic uint32_t next_block;
	_Atomic int growing;
	_Atomic int dead;	/* fork child, finished, or error */
	_Atomic uint64_t lost;
};

/* Per thread and kind: the block being filled. */
struct tblock {
	struct sonde_block_header *blk; /* NULL: none, or pending */
	uint32_t pending;		/* claimed block index + 1, not yet mapped */
	uint32_t used;
};
static TLS struct tblock t_blocks[MAX_KINDS];

_Atomic uint64_t g_bytes_limit;
_Atomic int g_limit_hit;
static _Atomic uint64_t g_bytes_mapped;

struct dfile *dfile_create(const char *expdir, const char *name, uint32_t kind)
{
	char path[4200];
	if (kind >= MAX_KINDS) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", expdir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	fd = fd_park(fd);
	struct dfile *df = calloc(1, sizeof *df);
	if (!df)
		goto fail;
	df->fd = fd;
	df->kind = kind;
	uint64_t limit = atomic_load(&g_bytes_limit);
	df->reserve = limit ? (size_t)limit + CHUNK : (size_t)64 << 30;
	df->reserve = (df->reserve + CHUNK - 1) & ~(size_t)(CHUNK - 1);
	void *va = mmap(NULL, df->reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		goto fail;
	df->base = va;
	if (ftruncate(fd, CHUNK) < 0 ||
	    mmap(df->base, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		munmap(va, df->reserve);
		goto fail;
	}
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
fail:
	free(df);
	close(fd);
	return NULL;
}

/* Map one more chunk.  Only the thread that set df->growing calls this.
 * Async-signal-safe (ftruncate and mmap are plain system calls). */
static void grow(struct dfile *df)
{
	size_t cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
	uint64_t limit = atomic_load_explicit(&g_bytes_limit, memory_order_relaxed);
	if (cur + CHUNK > df->reserve ||
	    (limit && atomic_load(&g_bytes_mapped) + CHUNK > limit)) {
		atomic_store(&g_limit_hit, 1);
		return;
	}
	int saved = errno;
	if (ftruncate(df->fd, (off_t)(cur + CHUNK)) == 0 &&
	    mmap(df->base + cur, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, df->fd,
		 (off_t)cur) != MAP_FAILED) {
		atomic_fetch_add(&g_bytes_mapped, CHUNK);
		atomic_store_explicit(&df->mapped, cur + CHUNK, memory_order_release);
	} else {
		atomic_store(&df->dead, 1);
	}
	errno = saved;
}

/* Async-signal-safe. */
static void maybe_grow(struct dfile *df, size_t need_end)
{
	size_t cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
	if (need_end + CHUNK / 2 <= cur)
		return;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&df->growing, &expected, 1))
		return;
	/* Grow until the block is mapped with room ahead, or growth fails. */
	for (int i = 0; i < 64; i++) {
		cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
		if (need_end + CHUNK / 2 <= cur || atomic_load(&df->dead) || atomic_load(&g_limit_hit))
			break;
		grow(df);
		if (atomic_load_explicit(&df->mapped, memory_order_acquire) == cur)
			break;
	}
	atomic_store(&df->growing, 0);
}

static inline size_t block_off(uint32_t idx)
{
	return SONDE_FILE_HEADER_SIZE + (size_t)idx * SONDE_BLOCK_SIZE;
}

/* Async-signal-safe. */
static int claim(struct dfile *df, struct tblock *tb)
{
	uint32_t idx;
	if (tb->pending) {
		idx = tb->pending - 1;
	} else {
		if (atomic_load_explicit(&g_limit_hit, memory_order_relaxed))
			return -1;
		idx = atomic_fetch_add_explicit(&df->next_block, 1, memory_order_relaxed);
	}
	size_t end = block_off(idx) + SONDE_BLOCK_SIZE;
	if (end > df->reserve) {
		atomic_store(&g_limit_hit, 1);
		tb->pending = 0;
		return -1;
	}
	maybe_grow(df, end);
	if (end > atomic_load_explicit(&df->mapped, memory_order_acquire)) {
		tb->pending = idx + 1;
		return -1;
	}
	tb->pending = 0;
	struct sonde_block_header *bh = (struct sonde_block_header *)(df->base + block_off(idx));
	bh->kind = df->kind;
	bh->tid = (uint32_t)sys_gettid();
	bh->first_ns = now_ns();
	atomic_store_explicit((_Atomic uint32_t *)&bh->used, 0, memory_order_relaxed);
	atomic_store_explicit((_Atomic uint32_t *)&bh->magic, SONDE_BLOCK_MAGIC, memory_order_release);
	tb->blk = bh;
	tb->used = 0;
	return 0;
}

/* Async-signal-safe. */
void *dfile_reserve(struct dfile *df, size_t size)
{
	if (!df || atomic_load_explicit(&df->dead, memory_order_relaxed))
		return NULL;
	struct tblock *tb = &t_blocks[df->kind];
	if (!tb->blk || tb->used + size > SONDE_BLOCK_PAYLOAD) {
		tb->blk = NULL;
		if (size > SONDE_BLOCK_PAYLOAD || claim(df, tb) < 0) {
			atomic_fetch_add_explicit(&df->lost, 1, memory_order_relaxed);
			return NULL;
		}
	}
	return (char *)(tb->blk + 1) + tb->used;
}

/* Async-signal-safe. */
void dfile_commit(struct dfile *df, size_t size)
{
	struct tblock *tb = &t_blocks[df->kind];
	tb->used += (uint32_t)size;
	atomic_store_explicit((_Atomic uint32_t *)&tb->blk->used, tb->used, memory_order_release);
}

uint64_t dfile_lost(const struct dfile *df)
{
	return df ? atomic_load(&df->lost) : 0;
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

void dfile_forget(struct dfile *df)
{
	if (!df)
		return;
	atomic_store(&df->dead, 1);
	munmap(df->base, df->reserve);
	close(df->fd);
	memset(t_blocks, 0, sizeof t_blocks);
}
