/*
 * expwriter: synthetic experiments for tests.  See expwriter.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "reader/expwriter.h"
#include "sonde/kinds.h"

/* SONDE_KIND_PROFILE .. SONDE_KIND_OVERVIEW, always written, and the
 * counters (SONDE_KIND_COUNTERS), MPI tracing (SONDE_KIND_MPI) and
 * OpenMP regions (SONDE_KIND_OMP), written when they have packets. */
#define NKINDS SONDE_KIND_OMP

struct cur {
	uint32_t tid;
	size_t block; /* current block of the thread, or SIZE_MAX for none */
};

struct wfile {
	uint8_t *blocks; /* nblocks * SONDE_BLOCK_SIZE */
	size_t nblocks, cap;
	struct cur *cur;
	size_t ncur, capcur;
};

struct sonde_expw {
	char *dir;
	FILE *log, *map;
	uint32_t pid;
	uint64_t start_ns;
	struct wfile f[NKINDS];
	char err[256];
};

static const char *const kind_names[NKINDS] = { "profile", "stacks", "overview", NULL,
						 NULL,	    NULL,     "counters", "mpitrace", "omptrace" };

static int fail(struct sonde_expw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct sonde_expw *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->err[0]) {
		va_start(ap, fmt);
		vsnprintf(w->err, sizeof(w->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static FILE *open_in(struct sonde_expw *w, const char *name)
{
	size_t n = strlen(w->dir) + strlen(name) + 2;
	char *path = malloc(n);
	FILE *f;

	if (!path)
		return NULL;
	snprintf(path, n, "%s/%s", w->dir, name);
	f = fopen(path, "w");
	if (!f)
		fail(w, "cannot create '%s': %s", path, strerror(errno));
	free(path);
	return f;
}

struct sonde_expw *sonde_expw_create(const char *dir, char *err, size_t errlen)
{
	struct sonde_expw *w = calloc(1, sizeof(*w));

	if (!w || !(w->dir = strdup(dir))) {
		free(w);
		if (errlen)
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		if (errlen)
			snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		free(w->dir);
		free(w);
		return NULL;
	}
	w->log = open_in(w, "log.xml");
	if (!w->log) {
		if (errlen)
			snprintf(err, errlen, "%s", w->err);
		free(w->dir);
		free(w);
		return NULL;
	}
	return w;
}

int sonde_expw_log(struct sonde_expw *w, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfprintf(w->log, fmt, ap);
	va_end(ap);
	return r < 0 ? fail(w, "cannot write log.xml") : 0;
}

static int vmap(struct sonde_expw *w, const char *fmt, va_list ap)
{
	if (!w->map) {
		w->map = open_in(w, "map.xml");
		if (!w->map)
			return -1;
		fprintf(w->map, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<map>\n");
	}
	return vfprintf(w->map, fmt, ap) < 0 ? fail(w, "cannot write map.xml") : 0;
}

int sonde_expw_map(struct sonde_expw *w, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vmap(w, fmt, ap);
	va_end(ap);
	return r;
}

int sonde_expw_log_preamble(struct sonde_expw *w, uint32_t pid, uint64_t start_ns)
{
	w->pid = pid;
	w->start_ns = start_ns;
	return sonde_expw_log(
		w,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<experiment format=\"%d\" collector=\"sonde test\">\n"
		"<target pid=\"%u\" ppid=\"1\" cwd=\"/tmp\" exe=\"/tmp/prog\" command=\"./prog\"/>\n"
		"<system host=\"testhost\" os=\"Linux\" release=\"6.1.0\" arch=\"x86_64\" cpus=\"4\" "
		"pagesize=\"4096\" memory_kb=\"8000000\"/>\n"
		"<settings clock_source=\"perf-task-clock\" clock_interval_ns=\"1000000\" "
		"depth_limit=\"256\" size_limit_mb=\"2000\" duration_s=\"0\"/>\n"
		"<time start_ns=\"%llu\" realtime=\"1763700000.500000000\"/>\n"
		"<dataformat file=\"profile\" kind=\"1\"/>\n"
		"<dataformat file=\"stacks\" kind=\"2\"/>\n"
		"<dataformat file=\"overview\" kind=\"3\"/>\n"
		"<packet type=\"1\" name=\"profile\" size=\"32\" fields=\"type:0:u16 size:2:u16 "
		"cpu:4:u16 state:6:u16 time_ns:8:u64 weight_ns:16:u64 stack_id:24:u64\"/>\n"
		"<packet type=\"2\" name=\"stack\" size=\"16\" fields=\"type:0:u16 size:2:u16 "
		"depth:4:u16 flags:6:u16 stack_id:8:u64 pc:16:u64[depth]\"/>\n"
		"<event kind=\"start\" time_ns=\"%llu\"/>\n",
		SONDE_FORMAT_VERSION, pid, (unsigned long long)start_ns,
		(unsigned long long)start_ns);
}

const char *sonde_expw_dir(const struct sonde_expw *w)
{
	return w->dir;
}

void sonde_expw_process(struct sonde_expw *w, uint32_t pid, uint64_t start_ns)
{
	w->pid = pid;
	w->start_ns = start_ns;
}

int sonde_expw_object(struct sonde_expw *w, uint32_t id, const char *path, uint64_t base,
		      uint64_t lo, uint64_t hi, uint64_t time_ns)
{
	return sonde_expw_map(w,
			      "<object id=\"%u\" time_ns=\"%llu\" event=\"load\" path=\"%s\" "
			      "base=\"0x%llx\" lo=\"0x%llx\" hi=\"0x%llx\" buildid=\"0123abcd\"/>\n",
			      id, (unsigned long long)time_ns, path, (unsigned long long)base,
			      (unsigned long long)lo, (unsigned long long)hi);
}

int sonde_expw_unload(struct sonde_expw *w, uint32_t id, uint64_t time_ns)
{
	return sonde_expw_map(w, "<object id=\"%u\" time_ns=\"%llu\" event=\"unload\"/>\n", id,
			      (unsigned long long)time_ns);
}

static struct wfile *wfile(struct sonde_expw *w, enum sonde_kind kind)
{
	if (kind < SONDE_KIND_PROFILE || (int)kind > NKINDS || !kind_names[kind - 1]) {
		fail(w, "unknown data kind %d", (int)kind);
		return NULL;
	}
	return &w->f[kind - 1];
}

static int64_t block_offset(size_t b)
{
	return (int64_t)SONDE_FILE_HEADER_SIZE + (int64_t)b * SONDE_BLOCK_SIZE;
}

/* Appends a zeroed block; returns its index or SIZE_MAX. */
static size_t add_block(struct sonde_expw *w, struct wfile *f)
{
	if (sonde_grow(&f->blocks, &f->cap, f->nblocks + 1, SONDE_BLOCK_SIZE, 8)) {
		fail(w, "out of memory");
		return SIZE_MAX;
	}
	memset(f->blocks + f->nblocks * SONDE_BLOCK_SIZE, 0, SONDE_BLOCK_SIZE);
	return f->nblocks++;
}

static struct cur *cur_of(struct sonde_expw *w, struct wfile *f, uint32_t tid)
{
	for (size_t i = 0; i < f->ncur; i++)
		if (f->cur[i].tid == tid)
			return &f->cur[i];
	if (sonde_grow(&f->cur, &f->capcur, f->ncur + 1, sizeof(*f->cur), 8)) {
		fail(w, "out of memory");
		return NULL;
	}
	f->cur[f->ncur] = (struct cur){ tid, SIZE_MAX };
	return &f->cur[f->ncur++];
}

static size_t claim(struct sonde_expw *w, struct wfile *f, enum sonde_kind kind, struct cur *c,
		    uint64_t first_ns)
{
	size_t b = add_block(w, f);

	if (b == SIZE_MAX)
		return b;
	struct sonde_block_header *h = (void *)(f->blocks + b * SONDE_BLOCK_SIZE);

	h->magic = SONDE_BLOCK_MAGIC;
	h->kind = kind;
	h->tid = c->tid;
	h->used = 0;
	h->first_ns = first_ns;
	c->block = b;
	return b;
}

static int64_t put(struct sonde_expw *w, enum sonde_kind kind, uint32_t tid, const void *pkt,
		   size_t size, uint64_t time_ns)
{
	struct wfile *f = wfile(w, kind);
	struct cur *c;

	if (!f || !(c = cur_of(w, f, tid)))
		return -1;
	if (size == 0 || size % 8 || size > SONDE_BLOCK_PAYLOAD)
		return fail(w, "packet size %zu cannot be written", size);
	struct sonde_block_header *h =
		c->block == SIZE_MAX ? NULL : (void *)(f->blocks + c->block * SONDE_BLOCK_SIZE);

	if (!h || h->used + size > SONDE_BLOCK_PAYLOAD) {
		if (claim(w, f, kind, c, time_ns) == SIZE_MAX)
			return -1;
		h = (void *)(f->blocks + c->block * SONDE_BLOCK_SIZE);
	}
	int64_t off = block_offset(c->block) + (int64_t)sizeof(*h) + h->used;

	memcpy((uint8_t *)(h + 1) + h->used, pkt, size);
	h->used += (uint32_t)size;
	return off;
}

/* A profile packet of size bytes (SONDE_PROFILE_V1_SIZE: without the
 * microstates, which are then 0). */
static int64_t put_sample(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint16_t state, uint64_t time_ns,
			  uint64_t weight_ns, uint64_t system_ns, uint64_t wait_cpu_ns, uint64_t stack_id,
			  size_t size)
{
	struct sonde_profile_packet p = {
		.type = SONDE_PKT_PROFILE,
		.size = (uint16_t)size,
		.cpu = cpu,
		.state = state,
		.time_ns = time_ns,
		.weight_ns = weight_ns,
		.stack_id = stack_id,
		.system_ns = system_ns,
		.wait_cpu_ns = wait_cpu_ns,
	};

	return put(w, SONDE_KIND_PROFILE, tid, &p, size, time_ns);
}

int64_t sonde_expw_sample(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint64_t time_ns,
			  uint64_t weight_ns, uint64_t stack_id)
{
	return put_sample(w, tid, cpu, SONDE_STATE_CPU, time_ns, weight_ns, 0, 0, stack_id, SONDE_PROFILE_V1_SIZE);
}

int64_t sonde_expw_sample_state(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint16_t state, uint64_t time_ns,
				uint64_t weight_ns, uint64_t stack_id)
{
	return put_sample(w, tid, cpu, state, time_ns, weight_ns, 0, 0, stack_id, SONDE_PROFILE_V1_SIZE);
}

int64_t sonde_expw_sample_state_ms(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint16_t state,
				   uint64_t time_ns, uint64_t weight_ns, uint64_t system_ns, uint64_t wait_cpu_ns,
				   uint64_t stack_id)
{
	return put_sample(w, tid, cpu, state, time_ns, weight_ns, system_ns, wait_cpu_ns, stack_id,
			  sizeof(struct sonde_profile_packet));
}

int64_t sonde_expw_sample_ms(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint64_t time_ns,
			     uint64_t weight_ns, uint64_t system_ns, uint64_t wait_cpu_ns, uint64_t stack_id)
{
	return put_sample(w, tid, cpu, SONDE_STATE_CPU, time_ns, weight_ns, system_ns, wait_cpu_ns, stack_id,
			  sizeof(struct sonde_profile_packet));
}

int64_t sonde_expw_offcpu(struct sonde_expw *w, uint32_t sampler, uint32_t tid, uint16_t state,
			  uint16_t syscall, uint64_t time_ns, uint64_t weight_ns, uint64_t stack_id)
{
	struct sonde_offcpu_packet p = {
		.type = SONDE_PKT_OFFCPU,
		.size = sizeof(p),
		.state = state,
		.syscall = syscall,
		.tid = tid,
		.time_ns = time_ns,
		.weight_ns = weight_ns,
		.stack_id = stack_id,
	};

	return put(w, SONDE_KIND_PROFILE, sampler, &p, sizeof(p), time_ns);
}

int sonde_expw_thread_end(struct sonde_expw *w, uint32_t tid, uint64_t time_ns, uint64_t start_ns,
			  uint64_t cpu_ns, uint64_t utime_ns, uint64_t stime_ns, uint64_t run_delay_ns)
{
	return sonde_expw_log(w,
			      "<event kind=\"thread_end\" time_ns=\"%llu\" tid=\"%u\" start_ns=\"%llu\" "
			      "cpu_ns=\"%llu\" utime_ns=\"%llu\" stime_ns=\"%llu\" run_delay_ns=\"%llu\"/>\n",
			      (unsigned long long)time_ns, tid, (unsigned long long)start_ns,
			      (unsigned long long)cpu_ns, (unsigned long long)utime_ns,
			      (unsigned long long)stime_ns, (unsigned long long)run_delay_ns);
}

int64_t sonde_expw_stack(struct sonde_expw *w, uint64_t stack_id, uint16_t flags, uint16_t depth,
			 const uint64_t *pc)
{
	uint64_t buf[2 + SONDE_MAX_DEPTH_LIMIT];
	struct sonde_stack_packet *p = (void *)buf;

	if (depth > SONDE_MAX_DEPTH_LIMIT)
		return fail(w, "stack depth %u is above %d", depth, SONDE_MAX_DEPTH_LIMIT);
	p->type = SONDE_PKT_STACK;
	p->size = (uint16_t)(sizeof(*p) + 8u * depth);
	p->depth = depth;
	p->flags = flags;
	p->stack_id = stack_id;
	if (depth)
		memcpy(buf + 2, pc, 8u * depth);
	return put(w, SONDE_KIND_STACKS, w->pid, p, p->size, 0);
}

/* A frame node's id as the collector makes it (collector/stacks.c:
 * wyhash-style multiply-fold of parent and pc), folded once more with the
 * kind, fflags and aux for a frame of another kind than native. */
static uint64_t node_hash(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)(a ^ 0xa0761d6478bd642full) * (b ^ 0xe7037ed1a0b428dbull);
	uint64_t h = (uint64_t)r ^ (uint64_t)(r >> 64);

	return h < SONDE_FRAME_ROOT_LIMIT ? h + SONDE_FRAME_ROOT_LIMIT : h;
}

int64_t sonde_expw_frames(struct sonde_expw *w, uint16_t flags, uint16_t depth, const struct sonde_frame *frames,
			  uint64_t *stack_id)
{
	uint64_t parent = flags;
	int64_t off = -1;

	if (flags >= SONDE_FRAME_ROOT_LIMIT)
		return fail(w, "stack flags 0x%x do not fit a root frame's parent", flags);
	if (!depth || depth > SONDE_MAX_DEPTH_LIMIT)
		return fail(w, "frame stack depth %u is not 1 to %d", depth, SONDE_MAX_DEPTH_LIMIT);
	for (unsigned k = depth; k-- > 0;) { /* the root first, as the collector writes them */
		const struct sonde_frame *f = &frames[k];
		struct sonde_frame_packet p = {
			.type = SONDE_PKT_FRAME,
			.size = sizeof(p),
			.kind = f->kind,
			.fflags = (f->kind != SONDE_FRAME_NATIVE && f->exact ? SONDE_FRAMEF_EXACT : 0) |
				  (f->kind == SONDE_FRAME_JAVA_CODE && f->own ? SONDE_FRAMEF_OWN : 0) |
				  (f->kind != SONDE_FRAME_NATIVE && f->kind != SONDE_FRAME_JAVA_CODE && f->scoped
					   ? SONDE_FRAMEF_SCOPED
					   : 0),
			.aux = f->kind != SONDE_FRAME_NATIVE ? f->aux : 0,
			.parent_id = parent,
			.pc = f->kind == SONDE_FRAME_NATIVE && f->exact ? f->pc | SONDE_PC_EXACT : f->pc,
		};

		p.node_id = node_hash(parent, p.pc);
		if (p.kind != SONDE_FRAME_NATIVE)
			p.node_id = node_hash(p.node_id, (uint64_t)p.kind << 32 | (uint64_t)p.fflags << 16 | p.aux);
		off = put(w, SONDE_KIND_STACKS, w->pid, &p, sizeof(p), 0);
		if (off < 0)
			return -1;
		parent = p.node_id;
	}
	*stack_id = parent;
	return off;
}

int sonde_expw_text(struct sonde_expw *w, const char *name, const char *fmt, ...)
{
	size_t n = strlen(w->dir) + strlen(name) + 2;
	char *path = malloc(n);
	FILE *f;
	va_list ap;
	int r;

	if (!path)
		return fail(w, "out of memory");
	snprintf(path, n, "%s/%s", w->dir, name);
	f = fopen(path, "a");
	if (!f) {
		fail(w, "cannot open '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	va_start(ap, fmt);
	r = vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0 || r < 0)
		r = fail(w, "cannot write '%s'", path);
	free(path);
	return r < 0 ? -1 : 0;
}

int64_t sonde_expw_overview(struct sonde_expw *w, const struct sonde_overview_packet *p)
{
	struct sonde_overview_packet q = *p;

	q.type = SONDE_PKT_OVERVIEW;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_OVERVIEW, w->pid, &q, sizeof(q), q.time_ns);
}

int64_t sonde_expw_packet(struct sonde_expw *w, enum sonde_kind kind, uint32_t tid, const void *pkt,
			  size_t size)
{
	return put(w, kind, tid, pkt, size, 0);
}

int sonde_expw_counter_decl(struct sonde_expw *w, unsigned index, const char *name, const char *title,
			    uint64_t interval)
{
	if (index >= SONDE_MAX_COUNTERS)
		return fail(w, "counter index %u (at most %d counters)", index, SONDE_MAX_COUNTERS);
	if (!index) {
		sonde_expw_log(w, "<dataformat file=\"%s\" kind=\"%d\" block_size=\"%d\"/>\n",
			       sonde_kind_desc(SONDE_KIND_COUNTERS)->file, SONDE_KIND_COUNTERS, SONDE_BLOCK_SIZE);
		sonde_expw_log(w, "<packet type=\"%d\" name=\"counter\" size=\"%zu\" fields=\"type:0:u16 size:2:u16 "
			       "counter:4:u16 cpu:6:u16 time_ns:8:u64 weight:16:u64 stack_id:24:u64\"/>\n",
			       SONDE_PKT_COUNTER, sizeof(struct sonde_counter_packet));
	}
	return sonde_expw_log(w,
			      "<trace kind=\"counters\" index=\"%u\" name=\"%s\" title=\"%s\" unit=\"events\" "
			      "type=\"0\" config=\"0\" interval=\"%llu\" kernel=\"excluded\"/>\n",
			      index, name, title, (unsigned long long)interval);
}

int64_t sonde_expw_counter(struct sonde_expw *w, uint32_t tid, uint16_t counter, uint64_t time_ns, uint64_t weight,
			   uint64_t stack_id)
{
	struct sonde_counter_packet p = {
		.type = SONDE_PKT_COUNTER,
		.size = sizeof(p),
		.counter = counter,
		.cpu = 0,
		.time_ns = time_ns,
		.weight = weight,
		.stack_id = stack_id,
	};

	return put(w, SONDE_KIND_COUNTERS, tid, &p, sizeof(p), time_ns);
}

int sonde_expw_mpi_decl(struct sonde_expw *w, int64_t rank, int64_t size, const char *abi, const char *library)
{
	sonde_expw_log(w, "<dataformat file=\"%s\" kind=\"%d\" block_size=\"%d\"/>\n",
		       sonde_kind_desc(SONDE_KIND_MPI)->file, SONDE_KIND_MPI, SONDE_BLOCK_SIZE);
	sonde_expw_log(w, "<packet type=\"%d\" name=\"mpi_call\" size=\"%zu\" fields=\"type:0:u16 size:2:u16 "
		       "func:4:u16 flags:6:u16 peer:8:i32 tag:12:i32 comm:16:u64 time_ns:24:u64 dur_ns:32:u64 "
		       "coll_bytes:40:u64 stack_id:48:u64\"/>\n",
		       SONDE_PKT_MPI_CALL, sizeof(struct sonde_mpi_call_packet));
	sonde_expw_log(w, "<packet type=\"%d\" name=\"mpi_msg\" size=\"%zu\" fields=\"type:0:u16 size:2:u16 "
		       "dir:4:u8 func:6:u16 peer:8:i32 tag:12:i32 comm:24:u64 time_ns:32:u64 bytes:40:u64 "
		       "stack_id:48:u64\"/>\n",
		       SONDE_PKT_MPI_MSG, sizeof(struct sonde_mpi_msg_packet));
	if (rank >= 0)
		sonde_expw_log(w, "<trace kind=\"mpi\" name=\"rank\" value=\"%lld\"/>\n", (long long)rank);
	if (size >= 0)
		sonde_expw_log(w, "<trace kind=\"mpi\" name=\"size\" value=\"%lld\"/>\n", (long long)size);
	if (abi)
		sonde_expw_log(w, "<trace kind=\"mpi\" name=\"abi\" value=\"%s\"/>\n", abi);
	if (library)
		return sonde_expw_log(w, "<trace kind=\"mpi\" name=\"library\" value=\"%s\"/>\n", library);
	return w->err[0] ? -1 : 0;
}

int64_t sonde_expw_mpi_call(struct sonde_expw *w, uint32_t tid, const struct sonde_mpi_call_packet *p)
{
	struct sonde_mpi_call_packet q = *p;

	q.type = SONDE_PKT_MPI_CALL;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_MPI, tid, &q, sizeof(q), q.time_ns);
}

int64_t sonde_expw_mpi_msg(struct sonde_expw *w, uint32_t tid, const struct sonde_mpi_msg_packet *p)
{
	struct sonde_mpi_msg_packet q = *p;

	q.type = SONDE_PKT_MPI_MSG;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_MPI, tid, &q, sizeof(q), q.time_ns);
}

int64_t sonde_expw_zero_block(struct sonde_expw *w, enum sonde_kind kind)
{
	struct wfile *f = wfile(w, kind);
	size_t b;

	if (!f || (b = add_block(w, f)) == SIZE_MAX)
		return -1;
	return block_offset(b);
}

static int write_data(struct sonde_expw *w, enum sonde_kind kind)
{
	struct wfile *f = &w->f[kind - 1];
	uint8_t *hdr = calloc(1, SONDE_FILE_HEADER_SIZE);
	struct sonde_file_header fh;
	FILE *out;
	int r = 0;

	if (!hdr)
		return fail(w, "out of memory");
	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, SONDE_DATA_MAGIC, 8);
	fh.version = SONDE_FORMAT_VERSION;
	fh.kind = kind;
	fh.header_size = SONDE_FILE_HEADER_SIZE;
	fh.block_size = SONDE_BLOCK_SIZE;
	fh.pid = w->pid;
	fh.start_ns = w->start_ns;
	memcpy(fh.kind_name, kind_names[kind - 1], strlen(kind_names[kind - 1])); /* NUL-padded */
	memcpy(hdr, &fh, sizeof(fh));
	out = open_in(w, kind_names[kind - 1]);
	if (!out) {
		free(hdr);
		return -1;
	}
	if (fwrite(hdr, 1, SONDE_FILE_HEADER_SIZE, out) != SONDE_FILE_HEADER_SIZE ||
	    (f->nblocks &&
	     fwrite(f->blocks, SONDE_BLOCK_SIZE, f->nblocks, out) != f->nblocks))
		r = fail(w, "cannot write '%s'", kind_names[kind - 1]);
	if (fclose(out) && !r)
		r = fail(w, "cannot write '%s'", kind_names[kind - 1]);
	free(hdr);
	return r;
}

int sonde_expw_finish(struct sonde_expw *w, unsigned flags, char *err, size_t errlen)
{
	int r = 0;

	if (!(flags & SONDE_EXPW_OPEN_LOG))
		sonde_expw_log(w, "</experiment>\n");
	if (fclose(w->log))
		fail(w, "cannot write log.xml");
	if (!(flags & SONDE_EXPW_NO_MAP)) {
		sonde_expw_map(w, "</map>\n");
		if (w->map && fclose(w->map))
			fail(w, "cannot write map.xml");
	} else if (w->map) {
		/* Written by the caller, then not wanted: remove it. */
		size_t n = strlen(w->dir) + 9;
		char *path = malloc(n);

		fclose(w->map);
		if (path) {
			snprintf(path, n, "%s/map.xml", w->dir);
			unlink(path);
			free(path);
		}
	}
	if (!(flags & SONDE_EXPW_NO_DATA))
		for (int k = SONDE_KIND_PROFILE; k <= NKINDS; k++)
			if (k <= SONDE_KIND_OVERVIEW || (kind_names[k - 1] && w->f[k - 1].nblocks))
				write_data(w, k);
	if (w->err[0]) {
		if (errlen)
			snprintf(err, errlen, "%s", w->err);
		r = -1;
	}
	for (int k = 0; k < NKINDS; k++) {
		free(w->f[k].blocks);
		free(w->f[k].cur);
	}
	free(w->dir);
	free(w);
	return r;
}

/* The fields of the omp kind's packets, as the collector writes them in
 * log.xml (collector/omp.c). */
static const char omp_region_fields[] = "type:0:u16 size:2:u16 flags:4:u16 level:6:u16 requested:8:u32 "
				       "nthreads:12:u32 region_id:16:u64 parent_id:24:u64 codeptr:32:u64 "
				       "start_ns:40:u64 end_ns:48:u64 stack_id:56:u64 master_part:64:u64";
static const char omp_itask_fields[] = "type:0:u16 size:2:u16 thread_num:4:u32 region_id:8:u64 begin_ns:16:u64 "
				      "arrive_ns:24:u64 end_ns:32:u64";
static const char omp_task_fields[] = "type:0:u16 size:2:u16 flags:4:u32 region_id:8:u64 create_ns:16:u64 "
				     "begin_ns:24:u64 end_ns:32:u64 create_stack:40:u64 codeptr:48:u64";

int sonde_expw_omp_decl(struct sonde_expw *w)
{
	sonde_expw_log(w, "<dataformat file=\"%s\" kind=\"%d\" block_size=\"%d\"/>\n",
		       sonde_kind_desc(SONDE_KIND_OMP)->file, SONDE_KIND_OMP, SONDE_BLOCK_SIZE);
	sonde_expw_log(w, "<packet type=\"%d\" name=\"omp_region\" size=\"%zu\" fields=\"%s\"/>\n",
		       SONDE_PKT_OMP_REGION, sizeof(struct sonde_omp_region_packet), omp_region_fields);
	sonde_expw_log(w, "<packet type=\"%d\" name=\"omp_itask\" size=\"%zu\" fields=\"%s\"/>\n",
		       SONDE_PKT_OMP_ITASK, sizeof(struct sonde_omp_itask_packet), omp_itask_fields);
	return sonde_expw_log(w, "<packet type=\"%d\" name=\"omp_task\" size=\"%zu\" fields=\"%s\"/>\n",
			      SONDE_PKT_OMP_TASK, sizeof(struct sonde_omp_task_packet), omp_task_fields);
}

int64_t sonde_expw_omp_region(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_region_packet *p)
{
	struct sonde_omp_region_packet q = *p;

	q.type = SONDE_PKT_OMP_REGION;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_OMP, tid, &q, sizeof(q), q.end_ns);
}

int64_t sonde_expw_omp_itask(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_itask_packet *p)
{
	struct sonde_omp_itask_packet q = *p;

	q.type = SONDE_PKT_OMP_ITASK;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_OMP, tid, &q, sizeof(q), q.end_ns);
}

int64_t sonde_expw_omp_task(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_task_packet *p)
{
	struct sonde_omp_task_packet q = *p;

	q.type = SONDE_PKT_OMP_TASK;
	q.size = sizeof(q);
	return put(w, SONDE_KIND_OMP, tid, &q, sizeof(q), q.end_ns);
}
