/* The writing path of data files, reached from signal handlers: every
 * function here is async-signal-safe (plain stores, atomics, and the
 * ftruncate/mmap system calls).  See dfile.c for the design. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#include "dfile.h"

EXPORT __thread struct tblock __sonde_tblocks[MAX_KINDS] __attribute__((tls_model("initial-exec")));

/* Never written: reads as zeros, and costs no memory (the zero page). */
static const char g_zeros[CHUNK];

/* Give the file real blocks for [off, off+len): writing through a mapping
 * into a hole that the disk cannot fill raises SIGBUS in the target, so
 * space is allocated before it is mapped and a full disk is an error here.
 * Writing zeros does that and leaves the pages in the page cache, where
 * the mapping then finds them: faulting in a fallocated chunk instead
 * reads every page of it through the filesystem's read path (19 ms for
 * 40 MB on ext4 here, against 7 ms).  A raw system call: the I/O
 * tracer's pwrite must not see the collector's own.  Falls back to
 * fallocate, then ftruncate where neither is supported.
 * Async-signal-safe. */
int reserve_space(int fd, size_t off, size_t len)
{
	/* Past the target's RLIMIT_FSIZE the kernel would send SIGXFSZ,
	 * which kills it: the file stops growing instead. */
	uint64_t lim = fsize_limit();
	if (lim != (uint64_t)RLIM_INFINITY && (uint64_t)off + len > lim) {
		errno = EFBIG;
		return -1;
	}
	if (len <= sizeof g_zeros) {
		long n = syscall(SYS_pwrite64, fd, g_zeros, len, (off_t)off);
		if (n == (long)len)
			return 0;
		if (n >= 0 || errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			return n >= 0 ? (errno = ENOSPC, -1) : -1;
	}
	if (syscall(SYS_fallocate, fd, 0, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	return (int)syscall(SYS_ftruncate, fd, (off_t)(off + len));
}

/* reserve_space for [off, off+len) of a file that may hold blocks past
 * off already, written whole by dfile_put_blocks: zeros only where the
 * file ends before, fallocate (which keeps what is written) over the
 * rest.  Async-signal-safe. */
static int keep_and_reserve(int fd, size_t off, size_t len)
{
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) < 0 || (uint64_t)st.st_size <= off)
		return reserve_space(fd, off, len);
	if (syscall(SYS_fallocate, fd, 0, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	/* no fallocate: the blocks written are allocated; the holes between
	 * them are what a claimed block left, as without it */
	return (uint64_t)st.st_size >= off + len ? 0 : (int)syscall(SYS_ftruncate, fd, (off_t)(off + len));
}

/* Async-signal-safe (raw system calls). */
int dfile_open_again(const struct dfile *df)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, df->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) < 0 || (uint64_t)st.st_dev != df->dev || (uint64_t)st.st_ino != df->ino) {
		syscall(SYS_close, fd);
		errno = ESTALE; /* replaced: growing that file would write someone else's */
		return -1;
	}
	return fd;
}

/* Map one more chunk.  Only the thread that set df->growing calls this.
 * The file is opened for the growth and closed after it: the collector
 * keeps no descriptor of a data file, which the target could take (dup2
 * onto its number, or close it and open a file of its own there) and
 * have the collector extend and map its file.  One openat and close per
 * CHUNK: about 10 us, against a few hundred for writing the chunk.
 * Async-signal-safe (plain system calls). */
static void grow(struct dfile *df)
{
	size_t cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
	if (cur + CHUNK > df->reserve) {
		atomic_store(&g_limit_hit, 1);
		return;
	}
	int saved = errno;
	int fd = dfile_open_again(df);
	if (fd >= 0 && keep_and_reserve(fd, cur, CHUNK) == 0 &&
	    sonde_mmap(df->base + cur, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 (off_t)cur) != MAP_FAILED) {
		/* Fault the chunk in with one system call rather than a page
		 * fault per 4 KiB as packets reach it: 7% of the run time of
		 * an allocation-heavy program under -H on.  Linux 5.14 and
		 * later; elsewhere EINVAL, and the pages fault in as before. */
		syscall(SYS_madvise, df->base + cur, CHUNK, MADV_POPULATE_WRITE);
		atomic_fetch_add(&g_bytes_mapped, CHUNK);
		atomic_store_explicit(&df->mapped, cur + CHUNK, memory_order_release);
	} else {
		int e = errno ? errno : EIO;
		atomic_store(&df->grow_errno, e);
		atomic_store(&df->dead, 1);
		/* Said now, with its time: later data of this kind is lost. */
		char msg[160];
		struct xbuf b;
		xb_init(&b, msg, sizeof msg);
		xb_str(&b, "data file '");
		xb_str(&b, df->name);
		xb_str(&b, e == EFBIG ? "' would grow past the target's RLIMIT_FSIZE; that data stops here"
				      : "' cannot grow; that data stops here (errno ");
		if (e != EFBIG) {
			xb_u64(&b, (uint64_t)e);
			xb_str(&b, ")");
		}
		log_event_text("error", msg);
	}
	if (fd >= 0)
		syscall(SYS_close, fd);
	errno = saved;
}

/* How far ahead of the furthest claimed block the file stays mapped: two
 * blocks per thread that may claim one from a signal handler.  A handler
 * whose block is not mapped yet drops its packet rather than wait, and
 * the thread that grows the file can be preempted in the middle of it for
 * a long while: 64 busy threads on 2 CPUs claimed the half chunk ahead
 * while it was off CPU and lost 25 samples in one run of 8 (tests/t57).
 * At most 64 chunks, the most one growth maps. */
_Atomic int g_dfile_writers;

static size_t headroom(void)
{
	size_t h = (size_t)atomic_load_explicit(&g_dfile_writers, memory_order_relaxed) * 2 * SONDE_BLOCK_SIZE;
	if (h < CHUNK / 2)
		h = CHUNK / 2;
	return h < 32 * (size_t)CHUNK ? h : 32 * (size_t)CHUNK;
}

/* Returns 0 when another thread is growing the file.  Async-signal-safe. */
static int maybe_grow(struct dfile *df, size_t need_end)
{
	size_t room = headroom();
	size_t cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
	if (need_end + room <= cur)
		return 1;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&df->growing, &expected, 1))
		return 0;
	/* Grow until the block is mapped with room ahead, or growth fails. */
	for (int i = 0; i < 64; i++) {
		cur = atomic_load_explicit(&df->mapped, memory_order_acquire);
		if (need_end + room <= cur || atomic_load(&df->dead))
			break;
		grow(df);
		if (atomic_load_explicit(&df->mapped, memory_order_acquire) == cur)
			break;
	}
	atomic_store(&df->growing, 0);
	return 1;
}

/* Map df up to at least `end` (normal context).  Returns 0 when another
 * thread is growing it. */
int dfile_grow_to(struct dfile *df, size_t end)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&df->growing, &expected, 1))
		return 0;
	for (int i = 0; i < 4096 && atomic_load(&df->mapped) < end && !atomic_load(&df->dead); i++) {
		size_t cur = atomic_load(&df->mapped);
		grow(df);
		if (atomic_load(&df->mapped) == cur)
			break;
	}
	atomic_store(&df->growing, 0);
	return 1;
}

/* A thread that may write to df from a signal handler starts: the file is
 * grown now, in normal context where waiting for another grower is
 * allowed, so that its first packets (64 threads starting at once claim
 * 64 blocks) find their blocks mapped.  Bounded. */
void dfile_make_room(struct dfile *df)
{
	if (!df)
		return;
	for (int i = 0; i < 2000 && !atomic_load(&df->dead); i++) {
		size_t need = block_off(atomic_load_explicit(&df->next_block, memory_order_relaxed)) + SONDE_BLOCK_SIZE;
		if (maybe_grow(df, need))
			return;
		syscall(SYS_sched_yield);
	}
}

/* The -L limit counts the blocks claimed in all data files, the data
 * the experiment keeps (`sonde collect` trims what was mapped ahead), less
 * LIMIT_RESERVE for file headers and the XML files, so that the whole
 * experiment ends near the limit.  Sample points may take OVERVIEW_EXTRA
 * more, so that a run stopped by the limit still has its end point and
 * its samples.  Async-signal-safe. */
#define LIMIT_RESERVE (64u << 10)
#define OVERVIEW_EXTRA (4u * SONDE_BLOCK_SIZE)
_Atomic uint64_t g_bytes_claimed;
_Atomic uint64_t g_limit_hit_ns;

static int within_limit(const struct dfile *df)
{
	uint64_t limit = atomic_load_explicit(&g_bytes_limit, memory_order_relaxed);
	if (!limit)
		return 1;
	uint64_t budget = limit > LIMIT_RESERVE ? limit - LIMIT_RESERVE : 0;
	if (df->kind == SONDE_KIND_OVERVIEW)
		budget += OVERVIEW_EXTRA;
	else if (atomic_load_explicit(&g_limit_hit, memory_order_relaxed))
		return 0;
	uint64_t used = atomic_fetch_add_explicit(&g_bytes_claimed, SONDE_BLOCK_SIZE, memory_order_relaxed);
	if (used + SONDE_BLOCK_SIZE <= budget)
		return 1;
	atomic_fetch_sub_explicit(&g_bytes_claimed, SONDE_BLOCK_SIZE, memory_order_relaxed);
	uint64_t zero = 0;
	atomic_compare_exchange_strong(&g_limit_hit_ns, &zero, now_ns());
	atomic_store(&g_limit_hit, 1);
	return 0;
}

/* Async-signal-safe. */
/* A mapped block's header, its magic last: a reader takes the block
 * from then on, with `used` bytes of packets. */
static void block_open(struct sonde_block_header *bh, uint32_t kind, uint32_t tid, uint64_t first_ns, uint32_t used)
{
	bh->kind = kind;
	bh->tid = tid;
	bh->first_ns = first_ns;
	atomic_store_explicit((_Atomic uint32_t *)&bh->used, used, memory_order_relaxed);
	atomic_store_explicit((_Atomic uint32_t *)&bh->magic, SONDE_BLOCK_MAGIC, memory_order_release);
}

static int claim(struct dfile *df, struct tblock *tb)
{
	uint32_t idx;
	if (tb->pending) {
		idx = tb->pending - 1;
	} else {
		if (!within_limit(df))
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
	block_open(bh, df->kind, (uint32_t)sys_gettid(), now_ns(), 0);
	tb->blk = bh;
	tb->used = 0;
	return 0;
}

/* wait: the caller is in normal context and may yield while another
 * thread maps the block it claimed (tracing interposers), instead of
 * losing the packet.  Async-signal-safe. */
/* The pages of data files the calling thread wrote first (each block's
 * pages are fresh, and their first write faults): the page faults are the
 * writer's, and sample.c keeps the handler's own out of the next sample's
 * System CPU. */
static TLS uint32_t t_fresh;

uint32_t dfile_fresh_pages(void)
{
	return t_fresh;
}

static void *reserve(struct dfile *df, size_t size, int wait)
{
	if (!df)
		return NULL;
	if (atomic_load_explicit(&df->dead, memory_order_relaxed)) {
		if (atomic_load_explicit(&df->grow_errno, memory_order_relaxed))
			atomic_fetch_add_explicit(&df->lost, 1, memory_order_relaxed);
		return NULL;
	}
	struct tblock *tb = &t_blocks[df->kind];
	if (!tb->blk || tb->used + size > SONDE_BLOCK_PAYLOAD) {
		tb->blk = NULL;
		int ok = size <= SONDE_BLOCK_PAYLOAD && claim(df, tb) == 0;
		/* Bounded: about a millisecond of yields, then the packet is
		 * lost and counted like a handler's. */
		for (int i = 0; !ok && wait && tb->pending && i < 2000 && !atomic_load(&df->dead); i++) {
			syscall(SYS_sched_yield);
			ok = claim(df, tb) == 0;
		}
		if (!ok) {
			atomic_fetch_add_explicit(&df->lost, 1, memory_order_relaxed);
			return NULL;
		}
		t_fresh++; /* the header's page */
	}
	char *p = (char *)(tb->blk + 1) + tb->used;
	uintptr_t in_page = (uintptr_t)p & 4095;
	if (in_page == 0 || in_page + size > 4096)
		t_fresh++;
	return p;
}

/* Async-signal-safe. */
void *dfile_reserve(struct dfile *df, size_t size)
{
	return reserve(df, size, 0);
}

/* Whether dfile_put_blocks may write with system calls of its own (a
 * seccomp filter of the target's may refuse them: dfile_filter_prepare). */
_Atomic int g_dfile_pwrite_ok = 1;

/* One block of pieces[] through the mapping (growing it as far as
 * needed): 1 when written. */
static int put_mapped(struct dfile *df, uint32_t tid, const struct dfile_piece *p, size_t off)
{
	size_t end = off + SONDE_BLOCK_SIZE;
	for (int i = 0; i < 2000 && end > atomic_load_explicit(&df->mapped, memory_order_acquire) && !atomic_load(&df->dead);
	     i++)
		if (!maybe_grow(df, end))
			syscall(SYS_sched_yield);
	if (end > atomic_load_explicit(&df->mapped, memory_order_acquire))
		return 0;
	struct sonde_block_header *bh = (struct sonde_block_header *)(df->base + off);
	memcpy(bh + 1, p->data, p->len);
	block_open(bh, df->kind, tid, p->first_ns, p->len);
	return 1;
}

int dfile_put_blocks(struct dfile *df, uint32_t tid, const struct dfile_piece *pieces, unsigned n)
{
	if (!df || !n)
		return 0;
	if (n > DFILE_PUT_MAX) {
		atomic_fetch_add_explicit(&df->lost, n, memory_order_relaxed);
		return -1;
	}
	/* the blocks the byte limit allows, in order */
	unsigned m = 0;
	while (m < n && pieces[m].len && pieces[m].len <= SONDE_BLOCK_PAYLOAD &&
	       !atomic_load_explicit(&df->dead, memory_order_relaxed) && within_limit(df))
		m++;
	/* consecutive blocks: one write for all of them */
	uint32_t idx = m ? atomic_fetch_add_explicit(&df->next_block, m, memory_order_relaxed) : 0;
	size_t off = block_off(idx);
	unsigned fit = 0;
	while (fit < m && off + (size_t)(fit + 1) * SONDE_BLOCK_SIZE <= df->reserve)
		fit++;
	if (fit < m)
		atomic_store(&g_limit_hit, 1);
	int saved = errno;
	unsigned done = 0; /* pieces[0..done) are in the file */
	if (fit && off + (size_t)fit * SONDE_BLOCK_SIZE > atomic_load_explicit(&df->mapped, memory_order_acquire) &&
	    atomic_load_explicit(&g_dfile_pwrite_ok, memory_order_relaxed)) {
		/* past the mapping: written by the kernel, whose copy touches no
		 * page of the target's for the first time (a fresh page's first
		 * write is a trap to the hypervisor on some guests: 6 us); a
		 * block's unused end written as zeros, so that the next block
		 * follows in the same write (the fixed cost of the write, its
		 * open and its checks, was half of a block's on 2 busy CPUs) */
		struct sonde_block_header h[DFILE_PUT_MAX];
		struct iovec v[3 * DFILE_PUT_MAX];
		int nv = 0;
		size_t total = 0;
		for (unsigned i = 0; i < fit; i++) {
			h[i] = (struct sonde_block_header){ SONDE_BLOCK_MAGIC, df->kind, tid, pieces[i].len,
							    pieces[i].first_ns, 0 };
			v[nv++] = (struct iovec){ &h[i], sizeof h[i] };
			v[nv++] = (struct iovec){ (void *)(uintptr_t)pieces[i].data, pieces[i].len };
			total += sizeof h[i] + pieces[i].len;
			if (i + 1 < fit && pieces[i].len < SONDE_BLOCK_PAYLOAD) {
				v[nv++] = (struct iovec){ (void *)(uintptr_t)g_zeros, SONDE_BLOCK_PAYLOAD - pieces[i].len };
				total += SONDE_BLOCK_PAYLOAD - pieces[i].len;
			}
		}
		uint64_t lim = fsize_limit();
		int fd = lim == (uint64_t)RLIM_INFINITY || (uint64_t)off + total <= lim ? dfile_open_again(df) : -1;
		if (fd >= 0) {
			long w = syscall(SYS_pwritev, fd, v, nv, (long)off, 0L);
			syscall(SYS_close, fd);
			/* a short write: the blocks it wrote whole count */
			while (done < fit && w >= 0 &&
			       (size_t)w >= (size_t)done * SONDE_BLOCK_SIZE + sizeof h[0] + pieces[done].len)
				done++;
		}
	}
	/* within the mapping, or no system call may write it */
	unsigned lost = m < n ? n - m : 0;
	for (unsigned i = done; i < fit; i++)
		if (!put_mapped(df, tid, &pieces[i], off + (size_t)i * SONDE_BLOCK_SIZE))
			lost++;
	lost += m - fit;
	errno = saved;
	if (lost)
		atomic_fetch_add_explicit(&df->lost, lost, memory_order_relaxed);
	return lost ? -1 : 0;
}

/* Normal context only. */
void *dfile_reserve_wait(struct dfile *df, size_t size)
{
	return reserve(df, size, 1);
}

/* Async-signal-safe. */
void dfile_commit(struct dfile *df, size_t size)
{
	struct tblock *tb = &t_blocks[df->kind];
	tb->used += (uint32_t)size;
	atomic_store_explicit((_Atomic uint32_t *)&tb->blk->used, tb->used, memory_order_release);
}

/* Async-signal-safe. */
int dfile_grow_errno(const struct dfile *df)
{
	return df ? atomic_load(&df->grow_errno) : 0;
}

/* Async-signal-safe. */
const char *dfile_name(const struct dfile *df)
{
	return df ? df->name : "?";
}

/* Async-signal-safe. */
uint64_t dfile_lost(const struct dfile *df)
{
	return df ? atomic_load(&df->lost) : 0;
}
