/*
 * libsonde_mpi.so: MPI tracing through the profiling interface (`sonde
 * collect -m on`, on by default with -M), for Open MPI and MPICH with one
 * library and no recompilation.
 *
 * This file is the part that knows no MPI ABI: the module, the slots the
 * exported stubs jump through and their resolution, the packets, the
 * tables of communicators and requests, and the settings.  What reads an
 * MPI type (statuses, datatypes, handles) is in abi.c, compiled against
 * each library's mpi.h; the wrappers are generated (gen.awk) from
 * include/sonde/mpifuncs.h and those headers.
 *
 * The library links neither MPI: it finds the library the process loaded
 * at the first MPI call (never in its constructor: a launcher such as
 * mpirun loads it too and never calls MPI), by a symbol only that
 * library has (Open MPI's ompi_mpi_comm_world, MPICH's
 * MPIR_Err_create_code), confirmed by PMPI_Get_library_version.  Neither,
 * or a version the units were not written for: every MPI function is
 * forwarded to its PMPI_ twin unrecorded, and log.xml says so once.
 *
 * Settings (doc/sonde-collect.md), sonde's names first, the VampirTrace
 * names the reference documents accepted too:
 *   SONDE_MPI_STACKS, VT_STACKS            0: no call stacks (default 1)
 *   SONDE_MPI_BUFFER_SIZE, VT_BUFFER_SIZE  bytes (K, M, G suffixes) of
 *                                          MPI events per "flush"
 *                                          (default 64M)
 *   SONDE_MPI_MAX_FLUSHES, VT_MAX_FLUSHES  after that many buffers' worth
 *                                          of events, stop recording
 *                                          them (0, the default: never)
 *   SONDE_MPI_VERBOSE, VT_VERBOSE          2: more lines in log.xml
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/hooks.h>
#include <sonde/settings.h>

#include "sm.h"

static _Atomic int g_on;
static int g_stacks = 1;
static uint64_t g_limit; /* bytes of packets; 0: none */
static _Atomic uint64_t g_written;
static _Atomic int g_full;
int sm_verbose = 1;
int sm_my_rank = -1;

void *sm_slot[SM_NSLOTS];
static void *g_target[SM_NSLOTS]; /* the chosen ABI's wrappers */
static const struct sm_abi *g_abi;
static pthread_once_t g_detect_once = PTHREAD_ONCE_INIT;

#define ON() (atomic_load_explicit(&g_on, memory_order_relaxed) && !__sonde_vforked)

void sm_log_once(int *flag, const char *level, const char *text)
{
	if (__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED))
		return;
	__sonde_trace_log(level, text);
}

/* ---- which MPI ------------------------------------------------------------ */

static void detect(void)
{
	int e = errno;
	char lib[256] = "", buf[400];
	const struct sm_abi *cand = NULL;
	if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world"))
		cand = &ompi_abi;
	else if (dlsym(RTLD_DEFAULT, "MPIR_Err_create_code"))
		cand = &mpich_abi;
	if (cand && cand->check(lib, sizeof lib)) {
		cand->fill(g_target);
		g_abi = cand;
		if (ON()) {
			__sonde_trace_setting(SONDE_KIND_MPI, "abi", cand->name);
			__sonde_trace_setting(SONDE_KIND_MPI, "library", lib);
		}
	} else if (ON()) {
		if (cand)
			snprintf(buf, sizeof buf,
				 "MPI tracing: the MPI library (%.200s) is not a version sonde's %s wrappers know; "
				 "MPI calls are not recorded",
				 lib[0] ? lib : "unknown version", cand->name);
		else
			snprintf(buf, sizeof buf,
				 "MPI tracing: the MPI library loaded is neither Open MPI nor MPICH; "
				 "MPI calls are not recorded");
		__sonde_trace_log("warning", buf);
	}
	errno = e;
}

/* The stubs' first call through an empty slot (gen: sm_lazy, with every
 * argument register saved): what the slot is from now on. */
void *sm_resolve(int slot)
{
	int e = errno;
	pthread_once(&g_detect_once, detect);
	void *t = slot >= 0 && slot < SM_NSLOTS ? g_target[slot] : NULL;
	if (!t && slot > 0 && slot < SM_NSLOTS) {
		/* forward unrecorded: PMPI_X (C), or the library's own
		 * Fortran binding */
		int id = slot % SONDE_MPI_NFUNCS;
		const struct sonde_mpi_func_desc *d = sonde_mpi_func((unsigned)id);
		char name[80];
		if (d && slot < SONDE_MPI_NFUNCS) {
			snprintf(name, sizeof name, "P%s", d->name);
			t = dlsym(RTLD_NEXT, name);
			if (!t)
				t = dlsym(RTLD_NEXT, d->name);
		} else if (d) {
			size_t i;
			for (i = 0; d->name[i] && i < sizeof name - 2; i++)
				name[i] = (char)(d->name[i] >= 'A' && d->name[i] <= 'Z' ? d->name[i] + 32 : d->name[i]);
			name[i++] = '_';
			name[i] = 0;
			t = dlsym(RTLD_NEXT, name);
		}
	}
	if (!t) {
		extern int sm_missing(void) SM_HIDDEN;
		t = (void *)sm_missing;
	}
	__atomic_store_n(&sm_slot[slot], t, __ATOMIC_RELEASE);
	errno = e;
	return t;
}

/* A function the process's MPI library does not have (it was built
 * against another): what MPI_ERR_OTHER means in both ABIs' spirit, an
 * error code, rather than a crash through a null pointer. */
int sm_missing(void)
{
	static int logged;
	sm_log_once(&logged, "warning", "MPI tracing: a program called an MPI function its MPI library lacks");
	return 16;
}

/* ---- events ------------------------------------------------------------- */

static int room(size_t n)
{
	if (!g_limit)
		return 1;
	if (atomic_load_explicit(&g_full, memory_order_relaxed))
		return 0;
	if (atomic_fetch_add_explicit(&g_written, n, memory_order_relaxed) + n > g_limit) {
		if (!atomic_exchange(&g_full, 1))
			__sonde_trace_log("warning", "MPI tracing: the buffer limit (VT_BUFFER_SIZE times "
						     "VT_MAX_FLUSHES) is reached; later MPI events are not recorded");
		return 0;
	}
	return 1;
}

void sm_begin(struct sm_ev *e, int func, int flags, uint64_t ra, uint64_t cfa)
{
	e->rec = sm_depth == 0 && ON() && g_abi != NULL;
	sm_depth++;
	e->done = 0;
	e->func = func;
	e->flags = flags;
	e->peer = SONDE_MPI_NONE;
	e->tag = 0;
	e->comm = SONDE_MPI_COMM_NONE;
	e->coll = 0;
	e->dur = 0;
	e->stack = 0;
	e->ra = ra;
	e->cfa = cfa;
	if (e->rec) {
		int er = errno;
		e->t0 = sonde_now_ns();
		errno = er;
	}
}

void sm_after(struct sm_ev *e, int err)
{
	if (e->done)
		return;
	int er = errno;
	if (e->rec) {
		e->dur = sonde_now_ns() - e->t0;
		if (g_stacks)
			e->stack = __sonde_trace_stack_at(e->ra, e->cfa);
	}
	if (err)
		e->flags |= SONDE_MPIF_ERROR;
	errno = er;
}

static int g_provider = -1;
/* MPI_Init has succeeded; its wrapper has not returned yet. */
static int g_init_leaving;

static void sm_provider_start(void);

/* MPI_Finalize's CPU time is MPI Wait to its very end: the system time
 * of its teardown, which the clock does not sample, would otherwise go
 * to the process's exit, which has no MPI state.  MPI_Init's own CPU
 * time has none, to its wrapper's very end: what the wrapper does after
 * the real call (its packet, a first write to a fresh page of the data
 * file, 15 us on a virtual machine; the provider's registration) is
 * before the caller's clock says MPI_Init has returned. */
static void sm_leave(const struct sm_ev *e)
{
	if (e->func == SONDE_MPI_F_MPI_Finalize && sm_depth == 1 && g_provider >= 0) {
		int er = errno;
		__sonde_trace_clock_flush(SONDE_STATE_MPI_WAIT);
		errno = er;
	}
	if (g_init_leaving && sm_depth == 1) {
		g_init_leaving = 0;
		sm_provider_start();
	}
	sm_depth--;
}

/* The thread leaves the call here, not in sm_after: what the wrapper
 * does after the real call (the message's size and peer, the packets)
 * is inside the call for its caller's clock, so its samples are MPI
 * Wait, not MPI Work. */
void sm_end(struct sm_ev *e)
{
	if (e->done) {
		if (e->done == SM_DONE_REARMED) { /* an MPI_Abort that returned */
			e->done = 1;
			sm_leave(e);
		}
		return;
	}
	e->done = 1;
	if (!e->rec || !room(sizeof(struct sonde_mpi_call_packet))) {
		sm_leave(e);
		return;
	}
	int er = errno;
	struct sonde_mpi_call_packet *p = sonde_reserve(SONDE_KIND_MPI, sizeof *p);
	if (p) {
		p->type = SONDE_PKT_MPI_CALL;
		p->size = sizeof *p;
		p->func = (uint16_t)e->func;
		p->flags = (uint16_t)e->flags;
		p->peer = e->peer;
		p->tag = e->tag;
		p->comm = e->comm;
		p->time_ns = e->t0;
		p->dur_ns = e->dur;
		p->coll_bytes = e->coll;
		p->stack_id = e->stack;
		sonde_commit(SONDE_KIND_MPI, sizeof *p);
	}
	sm_leave(e);
	errno = er;
}

void sm_message(const struct sm_ev *e, int dir, int peer, int tag, uint64_t comm, uint64_t bytes, uint64_t t)
{
	if (!e->rec || !room(sizeof(struct sonde_mpi_msg_packet)))
		return;
	int er = errno;
	struct sonde_mpi_msg_packet *p = sonde_reserve(SONDE_KIND_MPI, sizeof *p);
	if (p) {
		p->type = SONDE_PKT_MPI_MSG;
		p->size = sizeof *p;
		p->dir = (uint8_t)dir;
		p->reserved = 0;
		p->func = (uint16_t)e->func;
		p->peer = peer;
		p->tag = tag;
		p->reserved2 = 0;
		p->comm = comm;
		p->time_ns = t;
		p->bytes = bytes;
		p->stack_id = e->stack;
		sonde_commit(SONDE_KIND_MPI, sizeof *p);
	}
	errno = er;
}

void sm_started(const char *abi, int rank, int size)
{
	char buf[32];
	sm_my_rank = rank;
	atomic_store(&sm_active, 1);
	if (!ON())
		return;
	snprintf(buf, sizeof buf, "%d", rank);
	__sonde_trace_setting(SONDE_KIND_MPI, "rank", buf);
	snprintf(buf, sizeof buf, "%d", size);
	__sonde_trace_setting(SONDE_KIND_MPI, "size", buf);
	(void)abi;
	/* the states start as the Init call's wrapper leaves (sm_leave) */
	if (g_provider < 0)
		g_init_leaving = 1;
}

/* MPI_Init's own CPU time has no MPI state: recorded now, it is not the
 * first MPI Work or Wait sample's.  The flush last: the provider's
 * registration is MPI_Init's too (a sample in it, MPI Work by then, is
 * undone by the flush, which gives the time since the last sample). */
static void sm_provider_start(void)
{
	int er = errno;
	g_provider = __sonde_hook_state_add(sm_state, NULL);
	__sonde_trace_clock_flush(SONDE_STATE_CPU);
	if (g_provider < 0)
		__sonde_trace_log("warning", "MPI tracing: no room for the MPI Work/Wait state provider");
	errno = er;
}

void sm_stopping(void)
{
	atomic_store(&sm_active, 0);
}

/* ---- tables --------------------------------------------------------------- */

#define NBUCKETS 4096
static struct sm_comm *g_comms[NBUCKETS];
static struct sm_req *g_reqs[NBUCKETS];
static pthread_mutex_t g_comm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_req_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned bucket(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (unsigned)(k % NBUCKETS);
}

struct sm_comm *sm_comm_find(uint64_t key)
{
	pthread_mutex_lock(&g_comm_lock);
	struct sm_comm *c = g_comms[bucket(key)];
	while (c && c->key != key)
		c = c->next;
	pthread_mutex_unlock(&g_comm_lock);
	return c;
}

struct sm_comm *sm_comm_add(struct sm_comm *n)
{
	unsigned b = bucket(n->key);
	pthread_mutex_lock(&g_comm_lock);
	struct sm_comm *c = g_comms[b];
	while (c && c->key != n->key)
		c = c->next;
	if (!c) {
		n->next = g_comms[b];
		g_comms[b] = n;
		c = n;
	}
	pthread_mutex_unlock(&g_comm_lock);
	return c;
}

/* A freed communicator leaves the table (its handle may be reused) but
 * stays in memory: requests still point at it. */
void sm_comm_forget(uint64_t key)
{
	unsigned b = bucket(key);
	pthread_mutex_lock(&g_comm_lock);
	for (struct sm_comm **pc = &g_comms[b]; *pc; pc = &(*pc)->next)
		if ((*pc)->key == key) {
			*pc = (*pc)->next;
			break;
		}
	pthread_mutex_unlock(&g_comm_lock);
}

void sm_req_put(const struct sm_req *r)
{
	unsigned b = bucket(r->key);
	pthread_mutex_lock(&g_req_lock);
	struct sm_req *q = g_reqs[b];
	while (q && q->key != r->key)
		q = q->next;
	if (!q) {
		q = malloc(sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&g_req_lock);
			return;
		}
		q->next = g_reqs[b];
		g_reqs[b] = q;
	}
	struct sm_req *next = q->next;
	*q = *r;
	q->next = next;
	pthread_mutex_unlock(&g_req_lock);
}

int sm_req_get(uint64_t key, struct sm_req *out, int take)
{
	unsigned b = bucket(key);
	int found = 0;
	pthread_mutex_lock(&g_req_lock);
	for (struct sm_req **pq = &g_reqs[b]; *pq; pq = &(*pq)->next)
		if ((*pq)->key == key) {
			struct sm_req *q = *pq;
			*out = *q;
			found = 1;
			if (take) {
				*pq = q->next;
				free(q);
			}
			break;
		}
	pthread_mutex_unlock(&g_req_lock);
	return found;
}

void sm_req_forget(uint64_t key)
{
	struct sm_req r;
	sm_req_get(key, &r, 1);
}

/* ---- the module -------------------------------------------------------------- */

static uint64_t size_setting(const char *s, uint64_t dflt)
{
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return dflt;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	return *end ? dflt : v;
}

/* sonde's name, else the VampirTrace one. */
static const char *setting(const char *sonde, const char *vt)
{
	const char *v = getenv(sonde);
	return v && *v ? v : getenv(vt);
}

static void mpi_start(const char *value)
{
	int e = errno;
	char buf[64];
	const char *s = setting(SONDE_ENV_MPI_STACKS, "VT_STACKS");
	g_stacks = !(s && !strcmp(s, "0"));
	uint64_t bsize = size_setting(setting(SONDE_ENV_MPI_BUFFER_SIZE, "VT_BUFFER_SIZE"), 64ull << 20);
	uint64_t flushes = size_setting(setting(SONDE_ENV_MPI_MAX_FLUSHES, "VT_MAX_FLUSHES"), 0);
	g_limit = flushes ? bsize * flushes : 0;
	s = setting(SONDE_ENV_MPI_VERBOSE, "VT_VERBOSE");
	if (s && *s >= '0' && *s <= '9')
		sm_verbose = atoi(s);
	__sonde_trace_setting(SONDE_KIND_MPI, "stacks", g_stacks ? "1" : "0");
	snprintf(buf, sizeof buf, "%" PRIu64, bsize);
	__sonde_trace_setting(SONDE_KIND_MPI, "buffer_size", buf);
	snprintf(buf, sizeof buf, "%" PRIu64, flushes);
	__sonde_trace_setting(SONDE_KIND_MPI, "max_flushes", buf);
	snprintf(buf, sizeof buf, "%d", sm_verbose);
	__sonde_trace_setting(SONDE_KIND_MPI, "verbose", buf);
	(void)value;
	errno = e;
}

static void mpi_fork_child(void)
{
	/* MPI does not live on in a fork child; its events are not ours */
	atomic_store(&sm_active, 0);
}

static const struct sonde_packet_format mpi_packets[] = {
	{ SONDE_PKT_MPI_CALL, "mpi_call", 56,
	  "type:0:u16 size:2:u16 func:4:u16 flags:6:u16 peer:8:i32 tag:12:i32 comm:16:u64 "
	  "time_ns:24:u64 dur_ns:32:u64 coll_bytes:40:u64 stack_id:48:u64" },
	{ SONDE_PKT_MPI_MSG, "mpi_msg", 56,
	  "type:0:u16 size:2:u16 dir:4:u8 reserved:5:u8 func:6:u16 peer:8:i32 tag:12:i32 "
	  "reserved2:16:u32 comm:24:u64 time_ns:32:u64 bytes:40:u64 stack_id:48:u64" },
};

static const struct sonde_module mpi_module = {
	.kind = SONDE_KIND_MPI,
	.on = &g_on,
	.packets = mpi_packets,
	.npackets = sizeof mpi_packets / sizeof mpi_packets[0],
	.start = mpi_start,
	.fork_child = mpi_fork_child,
};

__attribute__((constructor)) static void mpi_init(void)
{
	int e = errno;
	__sonde_module_register(&mpi_module);
	errno = e;
}
