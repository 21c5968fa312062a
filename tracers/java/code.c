/*
 * The JVM's compiled methods by time (java.h, agent.c): "jvm.code", a
 * line each time a compiled method's code appears in the code heaps, is
 * retired (made not entrant: its method was compiled again, or its
 * assumptions failed) and is freed (doc/experiment-format.md).
 *
 * JVMTI's CompiledMethodLoad events would tell the first, but HotSpot 17
 * posts them late from its service thread and one for a method whose
 * class was unloaded meanwhile kills the JVM (agent.c,
 * code_cache_bounds).  So a thread of the agent's own reads the code
 * heaps every POLL_MS, the way the sampling handler finds a method
 * (frames.c, nmethod_at): plain loads inside each heap's committed part,
 * the block headers from the heap's start, the offsets of vmStructs.  The
 * JVM changes the heaps meanwhile: a block it is carving may read as
 * garbage, so a method counts only when its Method* is one the agent was
 * told of (its jmethodID's; which also keeps out the stubs and adapters
 * of a heap that holds everything, -XX:-SegmentedCodeCache), and a
 * method is freed only when two scans in a row did not see it.  A line's time is the scan's: at most POLL_MS
 * after the event.  The thread is libc's, not the collector's (not
 * sampled: its work is the agent's, not the program's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../tracer.h"

#include "java.h"

#define POLL_MS 20

struct java_codelook java_code = { .length_off = -1 };
struct java_scopelook java_scope = { .pcdesc_size = -1 };

/* ---- Method* to jmethodID and name, as the agent was told of them ---- */

static pthread_mutex_t g_mid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mid {
	uint64_t method, id;
	char *name;
} * g_mids;
static size_t g_nmids, g_capmids; /* power of two */

static size_t mid_hash(uint64_t m)
{
	return (size_t)((m >> 3) * 0x9e3779b97f4a7c15ull);
}

/* The slot of method in t (cap slots): its own or a free one. */
static struct mid *mid_slot(struct mid *t, size_t cap, uint64_t method)
{
	for (size_t i = mid_hash(method) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].method || t[i].method == method)
			return &t[i];
}

void java_code_method(jmethodID id, const char *name)
{
	uint64_t method = id ? *(const uint64_t *)(uintptr_t)id : 0;
	if (!method)
		return;
	pthread_mutex_lock(&g_mid_lock);
	if ((g_nmids + 1) * 2 > g_capmids) {
		size_t cap = g_capmids ? g_capmids * 2 : 4096;
		struct mid *t = calloc(cap, sizeof *t);
		if (!t) {
			pthread_mutex_unlock(&g_mid_lock);
			return;
		}
		for (size_t i = 0; i < g_capmids; i++)
			if (g_mids[i].method)
				*mid_slot(t, cap, g_mids[i].method) = g_mids[i];
		free(g_mids);
		g_mids = t;
		g_capmids = cap;
	}
	struct mid *m = mid_slot(g_mids, g_capmids, method);
	g_nmids += !m->method;
	m->method = method;
	m->id = (uint64_t)(uintptr_t)id;
	if (!name || !*name)
		name = "?";
	if (!m->name || strcmp(m->name, name)) { /* a class redefined: the method's new name */
		free(m->name);
		m->name = strdup(name);
	}
	pthread_mutex_unlock(&g_mid_lock);
}

/* The jmethodID of a Method*, 0 when the agent was told of none; its
 * name in name (cap bytes), unless NULL. */
static uint64_t mid_of(uint64_t method, char *name, size_t cap)
{
	uint64_t id = 0;
	pthread_mutex_lock(&g_mid_lock);
	const struct mid *m = g_capmids ? mid_slot(g_mids, g_capmids, method) : NULL;
	if (m && m->method == method) {
		id = m->id;
		if (name)
			snprintf(name, cap, "%s", m->name ? m->name : "?");
	}
	pthread_mutex_unlock(&g_mid_lock);
	return id;
}

/* ---- the compiled methods alive, by their code's start ---- */

#define NAME_MAX_LEN 512

static struct live {
	uint64_t code, id;
	char *name;
	uint32_t size;
	int32_t compile_id, entry_bci;
	int8_t level, retired;
	uint8_t missed; /* scans in a row that did not see it */
	uint8_t used;
} * g_live;
static size_t g_caplive, g_nlive;
static int g_fd = -1;
static pthread_t g_thread;
static _Atomic int g_stop, g_running;
static char g_buf[1 << 16];
static size_t g_len;

static void flush(void)
{
	size_t off = 0;
	while (g_fd >= 0 && off < g_len) {
		long w = __sonde_syscall(SYS_write, g_fd, (long)(g_buf + off), (long)(g_len - off), 0, 0, 0);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	g_len = 0;
}

static void line(uint64_t t, const char *what, const struct live *l)
{
	if (g_len + 160 + NAME_MAX_LEN > sizeof g_buf)
		flush();
	int n = snprintf(g_buf + g_len, sizeof g_buf - g_len,
			 "%" PRIu64 " %s 0x%" PRIx64 " %x 0x%" PRIx64 " %d %d %d %s\n", t, what, l->code, l->size,
			 l->id, l->level, l->compile_id, l->entry_bci, l->name ? l->name : "?");
	if (n > 0 && (size_t)n < sizeof g_buf - g_len)
		g_len += (size_t)n;
}

static struct live *live_find(uint64_t code, int insert)
{
	if (insert && (g_nlive + 1) * 2 > g_caplive) {
		size_t cap = g_caplive ? g_caplive * 2 : 1024;
		struct live *t = calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < g_caplive; i++)
			if (g_live[i].used)
				for (size_t j = mid_hash(g_live[i].code) & (cap - 1);; j = (j + 1) & (cap - 1))
					if (!t[j].used) {
						t[j] = g_live[i];
						break;
					}
		free(g_live);
		g_live = t;
		g_caplive = cap;
	}
	if (!g_caplive)
		return NULL;
	for (size_t i = mid_hash(code) & (g_caplive - 1);; i = (i + 1) & (g_caplive - 1)) {
		if (g_live[i].used && g_live[i].code == code)
			return &g_live[i];
		if (!g_live[i].used) {
			if (!insert)
				return NULL;
			g_live[i].used = 1;
			g_live[i].code = code;
			g_nlive++;
			return &g_live[i];
		}
	}
}

/* Removes e, keeping the probe chains whole. */
static void live_remove(struct live *e)
{
	size_t i = (size_t)(e - g_live);
	free(g_live[i].name);
	g_live[i].name = NULL;
	g_live[i].used = 0;
	g_nlive--;
	for (size_t j = (i + 1) & (g_caplive - 1); g_live[j].used; j = (j + 1) & (g_caplive - 1)) {
		struct live m = g_live[j];
		g_live[j].used = 0;
		g_live[j].name = NULL; /* it moves with m */
		g_nlive--;
		struct live *n = live_find(m.code, 1);
		if (n)
			*n = m;
	}
}

#define LOAD(T, a) (*(const volatile T *)(uintptr_t)(a))

/* ---- the scopes of the compiled methods it sees load ----
 *
 * jvm.inline's lines for a compiled method (agent.c, inline_records),
 * read from the method's own debug information, as HotSpot's
 * CompiledMethodLoad event would give them: its PcDescs, each the offset
 * of an address from the code's start (a call's return address) and
 * where its scope is in the scopes' stream; a scope is the method's index
 * in the nmethod's Method* table, its bytecode index and the scope it was
 * inlined into, compressed (HotSpot's CompressedReadStream).  The events
 * are posted late (agent.c: only for the methods alive at the end), so
 * a method retired and freed before the end had no scopes; read here, at
 * the first scan that sees the method, every compiled method has them.
 * The method may be freed and its space reused while it is read: every
 * read is inside its block, a Method* is only looked up (never followed),
 * and a scope whose method the agent was not told of ends the method's
 * lines. */
#define SCOPE_DEPTH 64
struct scope_lv {
	uint64_t id;
	int32_t bci;
};

/* The codes whose scopes were written, by address (for java_code_scoped,
 * which the agent's end asks from its own thread). */
static pthread_mutex_t g_scoped_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scoped {
	uint64_t code, id;
} * g_scoped;
static size_t g_nscoped, g_capscoped;

static struct scoped *scoped_slot(struct scoped *t, size_t cap, uint64_t code)
{
	for (size_t i = mid_hash(code) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].code || t[i].code == code)
			return &t[i];
}

static void scoped_add(uint64_t code, uint64_t id)
{
	pthread_mutex_lock(&g_scoped_lock);
	if ((g_nscoped + 1) * 2 > g_capscoped) {
		size_t cap = g_capscoped ? g_capscoped * 2 : 1024;
		struct scoped *t = calloc(cap, sizeof *t);
		if (!t) {
			pthread_mutex_unlock(&g_scoped_lock);
			return;
		}
		for (size_t i = 0; i < g_capscoped; i++)
			if (g_scoped[i].code)
				*scoped_slot(t, cap, g_scoped[i].code) = g_scoped[i];
		free(g_scoped);
		g_scoped = t;
		g_capscoped = cap;
	}
	struct scoped *e = scoped_slot(g_scoped, g_capscoped, code);
	g_nscoped += !e->code;
	*e = (struct scoped){ code, id };
	pthread_mutex_unlock(&g_scoped_lock);
}

bool java_code_scoped(uint64_t code, uint64_t size, uint64_t id)
{
	(void)size;
	pthread_mutex_lock(&g_scoped_lock);
	const struct scoped *e = g_capscoped ? scoped_slot(g_scoped, g_capscoped, code) : NULL;
	bool r = e && e->code == code && e->id == id;
	pthread_mutex_unlock(&g_scoped_lock);
	return r;
}

/* HotSpot's CompressedReadStream::read_int: a byte below 192 is the
 * number; above, up to 4 more bytes of 6 bits' weight each.  false past
 * end. */
static bool read_u5(uint64_t *p, uint64_t end, uint32_t *v)
{
	if (*p >= end)
		return false;
	uint32_t b = LOAD(uint8_t, (*p)++), sum = b;
	for (int i = 1, shift = 6; b >= 192 && i <= 4; i++, shift += 6) {
		if (*p >= end)
			return false;
		b = LOAD(uint8_t, (*p)++);
		sum += b << shift;
	}
	*v = sum;
	return true;
}

/* The scope at decode offset dec and those it was inlined into, into lv
 * (innermost first): their number, 0 when one cannot be read or its
 * method is not one the agent knows. */
static int scope_chain(uint64_t data, uint64_t data_end, uint64_t md, uint64_t nmd, uint32_t dec,
		       struct scope_lv *lv, uint64_t *last_m, uint64_t *last_id)
{
	int n = 0;
	while (dec && n < SCOPE_DEPTH) {
		uint64_t p = data + dec;
		uint32_t sender, mi, bci;
		if (p >= data_end || !read_u5(&p, data_end, &sender) || !read_u5(&p, data_end, &mi) ||
		    !read_u5(&p, data_end, &bci) || !mi || mi > nmd)
			return 0;
		uint64_t m = LOAD(uint64_t, md + (uint64_t)(mi - 1) * 8), id = m == *last_m ? *last_id : 0;
		if (!id && m && (id = mid_of(m, NULL, 0))) {
			*last_m = m;
			*last_id = id;
		}
		if (!id)
			return 0;
		lv[n++] = (struct scope_lv){ id, (int32_t)bci - 1 }; /* InvocationEntryBci is -1 */
		dec = sender;
	}
	return dec ? 0 : n;
}

static void scope_line(char *buf, size_t cap, size_t *len, uint32_t off, const struct scope_lv *lv, int n)
{
	if (*len + 32 + (size_t)n * 40 > cap) {
		java_inline_put(buf, *len);
		*len = 0;
	}
	int k = snprintf(buf + *len, cap - *len, "+%" PRIx32, off);
	*len += k > 0 ? (size_t)k : 0;
	for (int i = 0; i < n; i++) {
		k = snprintf(buf + *len, cap - *len, " 0x%" PRIx64 ":%d", lv[i].id, (int)lv[i].bci);
		*len += k > 0 ? (size_t)k : 0;
	}
	buf[(*len)++] = '\n';
}

/* The scopes of the compiled method at blob (its block ends at end), its
 * code [cb, ce), its method id and compile id, into jvm.inline. */
static void scopes_of(uint64_t blob, uint64_t end, uint64_t cb, uint64_t ce, uint64_t id, int32_t cid)
{
	const struct java_scopelook *S = &java_scope;
	if (S->pcdesc_size <= 0)
		return;
	int32_t po = LOAD(int32_t, blob + (uint64_t)S->pcs_off), dpo = LOAD(int32_t, blob + (uint64_t)S->deps_off),
		mo = LOAD(int32_t, blob + (uint64_t)S->metadata_off);
	uint64_t data = LOAD(uint64_t, blob + (uint64_t)S->data_begin), psz = (uint64_t)S->pcdesc_size;
	if (po <= 0 || dpo < po || mo <= 0)
		return;
	uint64_t pcs = blob + (uint64_t)po, pcs_end = blob + (uint64_t)dpo, md = blob + (uint64_t)mo;
	/* the metadata, then the scopes' stream, then the PcDescs, all in
	 * the block */
	if (md > data || data > pcs || pcs_end > end || (pcs_end - pcs) % psz || (data - md) % 8)
		return;
	static char buf[1 << 16];
	size_t len = 0;
	int k = snprintf(buf, sizeof buf, "0x%" PRIx64 " %" PRIx64 " 0x%" PRIx64 " %" PRId32 "\n", cb, ce - cb, id, cid);
	len = k > 0 ? (size_t)k : 0;
	struct scope_lv prev[SCOPE_DEPTH], cur[SCOPE_DEPTH];
	int nprev = 0, lines = 0;
	uint32_t prev_off = 0;
	uint64_t last_m = 0, last_id = 0;
	for (uint64_t p = pcs; p < pcs_end; p += psz) {
		int32_t off = LOAD(int32_t, p + (uint64_t)S->pc_offset);
		uint32_t dec = LOAD(uint32_t, p + (uint64_t)S->decode_offset);
		if (off < 0 || (uint64_t)off >= ce - cb || !dec) /* the sentinels, and no scope */
			continue;
		int n = scope_chain(data, pcs, md, (data - md) / 8, dec, cur, &last_m, &last_id);
		if (!n)
			continue;
		if (nprev && (uint32_t)off <= prev_off)
			break; /* not in order: being overwritten */
		/* a run of addresses with one scope: its last address only */
		if (nprev && (n != nprev || memcmp(cur, prev, (size_t)n * sizeof *cur))) {
			scope_line(buf, sizeof buf, &len, prev_off, prev, nprev);
			lines++;
		}
		memcpy(prev, cur, (size_t)n * sizeof *cur);
		nprev = n;
		prev_off = (uint32_t)off;
	}
	if (nprev) {
		scope_line(buf, sizeof buf, &len, prev_off, prev, nprev);
		lines++;
	}
	if (!lines)
		return;
	java_inline_put(buf, len);
	scoped_add(cb, id);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


/* One scan of the heaps: 1 when it went through every block of each. */
static int scan(uint64_t now)
{
	const struct java_nmlook *L = &java_nm;
	const struct java_codelook *C = &java_code;
	int nh = atomic_load_explicit(&java_nmheaps, memory_order_acquire), whole = 1;
	uint64_t seg = 1ull << L->log2_seg;
	for (int h = 0; h < nh && h < JAVA_NMHEAPS; h++) {
		uint64_t lo = atomic_load_explicit(&java_nm_lo[h], memory_order_relaxed);
		uint64_t high = LOAD(uint64_t, L->heap[h] + (uint64_t)L->high_off);
		uint64_t b = lo;
		while (b + (uint64_t)L->block_hdr <= high) {
			uint64_t len = LOAD(uint64_t, b + (uint64_t)C->length_off);
			if (!len || len > (high - b) / seg) {
				whole = 0; /* a block being carved: the rest next time */
				break;
			}
			uint64_t end = b + len * seg, blob = b + (uint64_t)L->block_hdr;
			if (LOAD(uint8_t, b + (uint64_t)L->used_off) && blob + (uint64_t)L->blob_size <= end) {
				uint64_t cb = LOAD(uint64_t, blob + (uint64_t)L->code_begin),
					 ce = LOAD(uint64_t, blob + (uint64_t)L->code_end),
					 m = LOAD(uint64_t, blob + (uint64_t)L->method), id = 0;
				if (cb > blob && cb < ce && ce <= end && m && (id = mid_of(m, NULL, 0))) {
					struct live *e = live_find(cb, 0);
					int8_t state = LOAD(int8_t, blob + (uint64_t)C->state);
					int32_t cid = LOAD(int32_t, blob + (uint64_t)C->compile_id);
					if (e && (e->id != id || e->size != (uint32_t)(ce - cb) || e->compile_id != cid)) {
						line(now, "unload", e); /* its space went to another */
						live_remove(e);
						e = NULL;
					}
					/* installed (one retired before a scan saw it: both now) */
					if (!e && state >= 0 && state <= 2 && (e = live_find(cb, 1))) {
						char name[NAME_MAX_LEN];
						mid_of(m, name, sizeof name); /* only for a new one */
						e->id = id;
						e->name = strdup(name);
						e->size = (uint32_t)(ce - cb);
						e->level = (int8_t)LOAD(int32_t, blob + (uint64_t)L->level);
						e->compile_id = cid;
						e->entry_bci = LOAD(int32_t, blob + (uint64_t)C->entry_bci);
						e->retired = 0;
						line(now, "load", e);
						scopes_of(blob, end, cb, ce, id, cid);
					}
					if (e) {
						e->missed = 0;
						if (state >= 2 && !e->retired) {
							e->retired = 1;
							line(now, "retire", e);
						}
					}
				}
			}
			b = end;
		}
	}
	return whole;
}

/* After a whole scan: the methods not seen in two of them are gone. */
static void sweep(uint64_t now)
{
	for (size_t i = 0; i < g_caplive; i++)
		if (g_live[i].used && g_live[i].missed < 255)
			g_live[i].missed++;
	for (size_t i = 0; i < g_caplive; i++)
		while (g_live[i].used && g_live[i].missed > 2) { /* another may move here */
			line(now, "unload", &g_live[i]);
			live_remove(&g_live[i]);
		}
}

/* The poller's sleep, cut short at the stop (the JVM's exit waits for
 * it). */
static pthread_mutex_t g_wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake;

static void *poller(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		uint64_t now = mono_ns(), cpu = thread_cpu_ns();
		if (scan(now))
			sweep(now);
		flush();
		/* at most 2% of a CPU: a heap of many methods is read less
		 * often.  By the thread's CPU time, not the wall's: on a busy
		 * machine a scan preempted for 7 ms put the next one 350 ms
		 * later, and a method loaded meanwhile was seen that late
		 * (t82 with two CPU hogs) */
		uint64_t took = thread_cpu_ns() - cpu, wait = POLL_MS * 1000000ull;
		if (took * 50 > wait)
			wait = took * 50 < 1000000000ull ? took * 50 : 1000000000ull;
		uint64_t until = mono_ns() + wait;
		struct timespec d = { (time_t)(until / 1000000000ull), (long)(until % 1000000000ull) };
		pthread_mutex_lock(&g_wake_lock);
		while (!atomic_load(&g_stop) && pthread_cond_timedwait(&g_wake, &g_wake_lock, &d) == 0)
			;
		pthread_mutex_unlock(&g_wake_lock);
	}
	return NULL;
}

void java_code_start(void)
{
	if (atomic_load(&g_running) || !atomic_load(&java_nm_at) || java_code.length_off < 0)
		return;
	g_fd = __sonde_trace_file("jvm.code");
	if (g_fd < 0)
		return;
	/* libc's pthread_create: the collector's would sample the thread as
	 * the program's */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		libc ? (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(libc,
												      "pthread_create")
		     : NULL;
	if (libc)
		dlclose(libc);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	atomic_store(&g_stop, 0);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g_wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!create || create(&g_thread, &attr, poller, NULL) != 0) {
		__sonde_trace_log("warning", "Java: no thread to follow the compiled methods; jvm.code is empty");
		close(g_fd);
		g_fd = -1;
	} else {
		pthread_setname_np(g_thread, "sonde-jcode");
		atomic_store(&g_running, 1);
	}
	pthread_attr_destroy(&attr);
}

void java_code_stop(void)
{
	if (!atomic_exchange(&g_running, 0))
		return;
	pthread_mutex_lock(&g_wake_lock);
	atomic_store(&g_stop, 1);
	pthread_cond_signal(&g_wake);
	pthread_mutex_unlock(&g_wake_lock);
	pthread_join(g_thread, NULL);
	pthread_cond_destroy(&g_wake);
	/* a last look, then the methods alive at the end stay loaded; a
	 * block a compiler is carving ends a scan early: again, a few
	 * times */
	uint64_t now = mono_ns();
	for (int i = 0; i < 8 && !scan(now); i++) {
		struct timespec d = { 0, 1000000 };
		nanosleep(&d, NULL);
	}
	flush();
	close(g_fd);
	g_fd = -1;
	for (size_t i = 0; i < g_caplive; i++)
		if (g_live[i].used)
			free(g_live[i].name);
	free(g_live);
	g_live = NULL;
	g_caplive = g_nlive = 0;
}
