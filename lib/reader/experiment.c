/*
 * experiment: the experiment reader.  See experiment.h for the contract.
 *
 * Open reads log.xml first (its events, and which data files it declares:
 * logxml.c), then map.xml (the load objects: mapxml.c) and notes, then
 * the data files, which this file reads: "stacks" first, so that the
 * profile scan can check each sample's stack id, then "profile", then
 * "overview".  Every data file goes through one scanner, scan_file(), which
 * checks the file header, each block header and each packet's size, and
 * hands whole valid packets to a per-kind function.  The profile scan keeps
 * an index of valid byte ranges per block (struct blockref) so that the
 * sample iterator later walks packets without checking them again.
 */
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safeopen.h"
#include <sonde/shared.h>
#include "reader/experiment.h"
#include "reader/jscopes.h"
#include "reader/kind.h"
#include "reader/experiment_internal.h"
#include "base/xmlline.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the sonde reader reads little-endian fields directly; port it to this host first"
#endif

#include "base/grow.h"
#include "base/u64map.h"

/* ---- what the reader's files share (experiment_internal.h) ------------ */

/* Kind id's reading (reader/kind.h), from its module (base/kindmod.h);
 * the collector's own kinds' is empty: this file reads them. */
const struct sonde_reader_kind *exp_reader_kind(int id)
{
	static const struct sonde_reader_kind none;
	const struct sonde_kind_module *m = sonde_kind_module(id);

	return m && m->reader ? m->reader : &none;
}

/* The data file of traced kind id, NULL for a kind that is not traced. */
static struct datafile *traced_file(struct sonde_exp *exp, int kind)
{
	for (int i = DF_TRACED; i < exp->ndata; i++)
		if (exp->data[i].kind == (uint32_t)kind)
			return &exp->data[i];
	return NULL;
}

void exp_problem(struct sonde_exp *exp, enum sonde_problem_severity sev, const char *fmt, ...)
{
	if (sev == SONDE_PROBLEM_ERROR)
		exp->nerrors++;
	/* Keep one slot for the "and N more" line. */
	if (exp->nproblems >= SONDE_EXP_MAX_PROBLEMS - 1) {
		exp->dropped++;
		if (sev == SONDE_PROBLEM_ERROR)
			exp->dropped_errors++;
		return;
	}
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *msg = strdup(buf);

	if (!msg || sonde_grow(&exp->problems, &exp->capproblems, exp->nproblems + 1,
			       sizeof(*exp->problems), 16)) {
		free(msg);
		exp->oom = true;
		return;
	}
	exp->problems[exp->nproblems].severity = sev;
	exp->problems[exp->nproblems].msg = msg;
	exp->nproblems++;
}

void exp_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static char *path_in(const struct sonde_exp *exp, const char *file)
{
	size_t n = strlen(exp->dir) + strlen(file) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", exp->dir, file);
	return p;
}

/*
 * Reads file (in the experiment) whole, NUL-terminated.  Returns 0 and sets
 * *buf, *len; 1 when the file does not exist; -1 on another error, with
 * errno set.
 */
int exp_read_whole(struct sonde_exp *exp, const char *file, char **buf, size_t *len)
{
	char *path = path_in(exp, file);

	if (!path) {
		exp->oom = true;
		errno = ENOMEM;
		return -1;
	}
	size_t n;
	char *b = sonde_read_regular(path, &n);

	free(path);
	if (!b) {
		if (errno == ENOMEM)
			exp->oom = true;
		return errno == ENOENT ? 1 : -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* ---- data files -------------------------------------------------------- */

static struct sonde_thread *get_thread(struct sonde_exp *exp, uint32_t tid)
{
	long i = u64map_get(&exp->threadmap, tid);

	if (i >= 0)
		return &exp->threads[i];
	if (sonde_grow(&exp->threads, &exp->capthreads, exp->nthreads + 1, sizeof(*exp->threads), 16) ||
	    u64map_put(&exp->threadmap, tid, (uint32_t)exp->nthreads)) {
		exp->oom = true;
		return NULL;
	}
	struct sonde_thread *t = &exp->threads[exp->nthreads++];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* A packet of the profile file as a sample (both kinds: the scan at open
 * and the iterator judge it by this one function).  pkt's size is at
 * least its type's minimum (SONDE_PROFILE_V1_SIZE, the off-CPU packet's).
 * owner: the block's thread, a profile packet's. */
enum { PS_NONE, PS_OK, PS_BAD_WEIGHT, PS_BAD_MS, PS_BAD_OFFCPU };
static int profile_sample(const uint8_t *pkt, uint32_t owner, struct sonde_sample *s)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type == SONDE_PKT_PROFILE) {
		const struct sonde_profile_packet *p = (const void *)pkt;

		/* A state of CPU samples (sonde/states.h), or one only a
		 * newer collector knows: a CPU sample's weight is CPU time
		 * whatever its state.  An off-CPU state is no state of a
		 * profile packet: plain CPU then. */
		uint16_t st = sonde_state_offcpu(p->state) ? SONDE_STATE_CPU : p->state;
		*s = (struct sonde_sample){ .tid = owner, .cpu = p->cpu, .state = st,
					    .time_ns = p->time_ns, .weight_ns = p->weight_ns,
					    .stack_id = p->stack_id, .syscall = SONDE_OFFCPU_NO_SYSCALL };
		if (p->weight_ns > SONDE_MAX_SAMPLE_WEIGHT_NS)
			return PS_BAD_WEIGHT;
		if (h->size >= sizeof(*p)) { /* microstates; a 32-byte packet has none */
			if (p->system_ns > p->weight_ns || p->wait_cpu_ns > SONDE_MAX_SAMPLE_WEIGHT_NS)
				return PS_BAD_MS;
			s->system_ns = p->system_ns;
			s->wait_cpu_ns = p->wait_cpu_ns;
		}
		return PS_OK;
	}
	if (h->type == SONDE_PKT_OFFCPU) {
		const struct sonde_offcpu_packet *p = (const void *)pkt;

		*s = (struct sonde_sample){ .tid = p->tid, .cpu = 0xffff, .state = p->state,
					    .time_ns = p->time_ns, .weight_ns = p->weight_ns,
					    .stack_id = p->stack_id, .syscall = p->syscall };
		if (!sonde_state_offcpu(p->state) || !p->tid ||
		    p->weight_ns > SONDE_MAX_SAMPLE_WEIGHT_NS)
			return PS_BAD_OFFCPU;
		return PS_OK;
	}
	return PS_NONE;
}

/* Per-scan state passed to the packet handlers. */
struct scan {
	struct sonde_exp *exp;
	struct datafile *df;
	uint32_t tid;
	/* profile: the thread of the last sample taken (an index: threads
	 * move as off-CPU samples add them), -1 none; whether the block holds
	 * off-CPU samples (then it is the sampler's, not a thread's) */
	long thread_ix;
	uint32_t thread_tid;
	bool offcpu_block;
	uint64_t last_stack_id;
	long last_stack; /* index in exp->stacks, -1 when unknown */
	uint16_t last_flags; /* its flags */
	bool have_last;
	uint64_t block_first_ns; /* the block header's, base of short packets' times */
	uint32_t rest;		 /* bytes from the current packet to the block's used end */
	/* Heap events: appended to out when set (decoding again, quietly),
	 * else counted into hb (the scan at open). */
	struct heapbuf {
		struct sonde_heap_event *v;
		size_t n, cap;
		bool oom;
	} *out;
	struct heapblock *hb;
};

/* The thread tid of the profile file's sample being taken, made on first
 * sight; NULL out of memory. */
static struct sonde_thread *scan_thread(struct scan *sc, uint32_t tid)
{
	if (sc->thread_ix >= 0 && sc->thread_tid == tid)
		return &sc->exp->threads[sc->thread_ix];
	struct sonde_thread *t = get_thread(sc->exp, tid);

	if (t) {
		sc->thread_ix = t - sc->exp->threads;
		sc->thread_tid = tid;
	}
	return t;
}

/* A frame packet's frame (experiment.h, struct sonde_frame). */
static struct sonde_frame frame_of(const struct sonde_frame_packet *f)
{
	if (f->kind == SONDE_FRAME_NATIVE)
		return sonde_frame_native(f->pc);
	return (struct sonde_frame){ .pc = f->pc,
				     .kind = f->kind,
				     .exact = (f->fflags & SONDE_FRAMEF_EXACT) != 0,
				     .aux = f->aux,
				     .scoped = (f->kind == SONDE_FRAME_JAVA_COMPILED || f->kind == SONDE_FRAME_JAVA_INLINED ||
						f->kind == SONDE_FRAME_JAVA_COMPILED_C1) &&
					       (f->fflags & SONDE_FRAMEF_SCOPED),
				     .own = f->kind == SONDE_FRAME_JAVA_CODE && (f->fflags & SONDE_FRAMEF_OWN) };
}

/* Room for depth frames that the handle owns (freed at close); NULL out
 * of memory. */
static struct sonde_frame *own_frames(struct sonde_exp *exp, size_t depth)
{
	struct sonde_frame *fr = malloc((depth ? depth : 1) * sizeof(*fr));

	if (!fr || sonde_grow(&exp->owned, &exp->capowned, exp->nowned + 1, sizeof(*exp->owned), 16)) {
		free(fr);
		return NULL;
	}
	exp->owned[exp->nowned++] = fr;
	return fr;
}

/* A stack's frames in compiled Java code, each replaced by the Java
 * frames its compiled method's scopes give (jscopes.h), as the walk would
 * have given them: its SONDE_FRAME_JAVA_CODE frames (the collector's,
 * where its walk did not give Java frames for them: each with its code's
 * compile id), and in a stack whose walk failed (no Java frame) its
 * native frames in the JIT's code.  A JAVA_CODE frame without scopes is
 * read as the native frame it is.  Its new depth; *flags gets
 * SONDE_STACK_TRUNCATED when the Java frames took it past the depth
 * limit. */
static uint16_t java_from_scopes(struct sonde_exp *exp, struct sonde_frame *buf, uint16_t depth, uint16_t *flags)
{
	bool walked = false, code = false;
	for (uint16_t k = 0; k < depth; k++)
		switch (buf[k].kind) {
		case SONDE_FRAME_JAVA_INTERP:
		case SONDE_FRAME_JAVA_COMPILED:
		case SONDE_FRAME_JAVA:
		case SONDE_FRAME_JAVA_INLINED:
		case SONDE_FRAME_JAVA_COMPILED_C1:
			walked = true;
			break;
		case SONDE_FRAME_JAVA_CODE:
			code = true;
			break;
		}
	if (!code && (walked || !exp->jscopes))
		return depth;
	struct sonde_frame out[SONDE_MAX_DEPTH_LIMIT], lv[64];
	size_t n = 0;
	bool any = false;
	for (uint16_t k = 0; k < depth; k++) {
		int m = 0;
		if (buf[k].kind == SONDE_FRAME_JAVA_CODE || (!walked && buf[k].kind == SONDE_FRAME_NATIVE))
			m = sonde_jscopes_frames(exp->jscopes, &buf[k], lv, 64);
		any |= m > 0;
		if (m <= 0) {
			lv[0] = buf[k].kind == SONDE_FRAME_JAVA_CODE
					? sonde_frame_native(buf[k].pc | (buf[k].exact ? SONDE_PC_EXACT : 0))
					: buf[k];
			m = 1;
		}
		for (int j = 0; j < m; j++) {
			if (n == SONDE_MAX_DEPTH_LIMIT) {
				*flags |= SONDE_STACK_TRUNCATED;
				break;
			}
			out[n++] = lv[j];
		}
	}
	if (!any && !code)
		return depth;
	memcpy(buf, out, n * sizeof *out);
	return (uint16_t)n;
}

/* Build the stack whose leaf node is `id` from the frame nodes, add it to
 * exp->stacks and return its index; -1 when no node has that id. */
static long materialize(struct sonde_exp *exp, uint64_t id)
{
	long ni = u64map_get(&exp->nodemap, id);
	if (ni < 0)
		return -1;
	struct sonde_frame buf[SONDE_MAX_DEPTH_LIMIT];
	uint16_t depth = 0, flags = 0;
	uint64_t cur = id;
	for (;;) {
		if (depth == SONDE_MAX_DEPTH_LIMIT) { /* a cycle or absurd depth */
			flags |= SONDE_STACK_INCOMPLETE;
			break;
		}
		const struct node *n = &exp->nodes[ni];
		buf[depth++] = n->fr;
		if (n->parent < SONDE_FRAME_ROOT_LIMIT) {
			flags |= (uint16_t)n->parent;
			break;
		}
		cur = n->parent;
		ni = u64map_get(&exp->nodemap, cur);
		if (ni < 0) {
			flags |= SONDE_STACK_INCOMPLETE;
			if (!exp->warned_missing_node) {
				exp->warned_missing_node = true;
				exp_problem(exp, SONDE_PROBLEM_WARNING,
					    "'stacks': frame node 0x%llx is missing (target killed while "
					    "writing it?); stacks through it are cut there",
					    (unsigned long long)cur);
			}
			break;
		}
	}
	depth = java_from_scopes(exp, buf, depth, &flags);
	/* (a merged experiment's stacks have theirs already) */
	for (uint16_t k = 0; k < depth; k++)
		if (buf[k].scoped) {
			exp->sum.stacks_java_scoped++;
			break;
		}
	struct sonde_frame *fr = own_frames(exp, depth);
	if (fr)
		memcpy(fr, buf, depth * sizeof(*fr));
	if (!fr || sonde_grow(&exp->stacks, &exp->capstacks, exp->nstacks + 1, sizeof(*exp->stacks), 16) ||
	    u64map_put(&exp->stackmap, id, (uint32_t)exp->nstacks)) {
		exp->oom = true;
		return -1;
	}
	struct sonde_stack *st = &exp->stacks[exp->nstacks];
	u64map_find(&exp->stackmap, id)->tag = flags;
	st->id = id;
	st->depth = depth;
	st->flags = flags;
	st->frame = fr;
	st->offset = exp->nodes[u64map_get(&exp->nodemap, id)].off;
	exp->sum.stacks++;
	exp->sum.stacks_truncated += !!(flags & SONDE_STACK_TRUNCATED);
	exp->sum.stacks_incomplete += !!(flags & SONDE_STACK_INCOMPLETE);
	return (long)exp->nstacks++;
}

/* Make sure a trace event's stack is materialised (as for samples), and
 * count events whose stack is missing. */
static void trace_stack_ref(struct sonde_exp *exp, uint64_t id)
{
	if (!id || u64map_get(&exp->stackmap, id) >= 0)
		return;
	if (materialize(exp, id) < 0)
		exp->sum.trace_unknown_stack++;
}

static const char *too_small(char *why, size_t whylen, const char *what, unsigned size, size_t min)
{
	snprintf(why, whylen, "%s packet size %u is below %zu", what, size, min);
	return why;
}

static bool ev_is_mmap(const struct sonde_heap_event *e)
{
	return !(e->flags & SONDE_HEAPF_FAILED) && (e->flags & SONDE_HEAPF_ALLOC) &&
	       (e->func == SONDE_HEAP_MMAP || e->func == SONDE_HEAP_MUNMAP || e->func == SONDE_HEAP_MREMAP);
}

/* One decoded heap event: appended to sc->out, or at open counted into
 * the block's summary (and an mmap kept for the leak matching's map of
 * ranges).  false out of memory. */
static inline __attribute__((always_inline)) bool heap_emit(struct scan *sc, const struct sonde_heap_event *e)
{
	struct sonde_exp *exp = sc->exp;

	if (sc->out) {
		struct heapbuf *o = sc->out;

		if (__builtin_expect(o->n < o->cap, 1)) {
			o->v[o->n++] = *e;
			return true;
		}
		if (sonde_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 16)) {
			o->oom = true;
			return false;
		}
		o->v[o->n++] = *e;
		return true;
	}
	struct heapblock *b = sc->hb;

	if (!b->nev)
		b->tfirst = e->time_ns;
	else if (e->time_ns < b->tlast)
		b->unsorted = true;
	b->tlast = e->time_ns;
	b->nev++;
	if (ev_is_mmap(e)) {
		if (sonde_grow(&exp->mmaps, &exp->capmmaps, exp->nmmaps + 1, sizeof(*exp->mmaps), 16)) {
			exp->oom = true;
			return false;
		}
		exp->mmaps[exp->nmmaps++] = (struct sonde_heap_mmap){ e->time_ns, exp->nheapev, e->addr, e->bytes };
	}
	exp->nheapev++;
	return true;
}

/* ---- the kinds (reader/kind.h) ----------------------------------------- */

const char sonde_rk_not_mine[] = "not mine";

struct sonde_exp *sonde_rk_exp(const struct scan *sc)
{
	return sc->exp;
}

uint32_t sonde_rk_tid(const struct scan *sc)
{
	return sc->tid;
}

bool sonde_rk_again(const struct scan *sc)
{
	return sc->out != NULL;
}

void *sonde_rk_state(const struct sonde_exp *exp, int kind)
{
	return exp->kstate[kind];
}

void *sonde_rk_state_new(struct sonde_exp *exp, int kind, size_t size)
{
	if (!exp->kstate[kind] && !(exp->kstate[kind] = calloc(1, size)))
		exp->oom = true;
	return exp->kstate[kind];
}

void sonde_rk_oom(struct sonde_exp *exp)
{
	exp->oom = true;
}

void sonde_rk_problem(struct sonde_exp *exp, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	exp_problem(exp, SONDE_PROBLEM_WARNING, "%s", msg);
}

struct sonde_exp_info *sonde_rk_info(struct sonde_exp *exp)
{
	return &exp->info;
}

bool sonde_rk_attr_u64(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		       const char *attr, uint64_t *out)
{
	return exp_attr_u64(exp, file, e, attr, out);
}

void sonde_rk_stack_ref(struct sonde_exp *exp, uint64_t stack_id)
{
	trace_stack_ref(exp, stack_id);
}

const char *sonde_rk_too_small(char *why, size_t whylen, const char *what, unsigned size, size_t min)
{
	return too_small(why, whylen, what, size, min);
}

const char *sonde_rk_name_in(const char *const *names, size_t n, unsigned i)
{
	return i < n && names[i] ? names[i] : "?";
}

/* The heap kind's events are kept here, not in its module's state: a
 * heap-traced run writes tens of millions of them, so the scan at open
 * only counts them per block (struct heapblock) and they are decoded again
 * when asked for.  Its module (lib/kinds/heap.c) decodes each packet's
 * events into the room sonde_rk_heap_room gives. */
struct sonde_heap_event *sonde_rk_heap_room(struct scan *sc, size_t n)
{
	struct heapbuf *o = sc->out;
	struct sonde_exp *exp = sc->exp;

	if (o) { /* decoding again: straight into the events */
		if (o->n + n > o->cap && sonde_grow(&o->v, &o->cap, o->n + n, sizeof(*o->v), 16)) {
			o->oom = true;
			return NULL;
		}
		return o->v + o->n;
	}
	if (n > exp->caphroom && sonde_grow(&exp->hroom, &exp->caphroom, n, sizeof(*exp->hroom), 64)) {
		exp->oom = true;
		return NULL;
	}
	return exp->hroom;
}

bool sonde_rk_heap_commit(struct scan *sc, size_t n)
{
	struct heapbuf *o = sc->out;

	if (o) {
		o->n += n;
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (!heap_emit(sc, &sc->exp->hroom[i]))
			return false;
	return true;
}

uint64_t sonde_rk_block_first_ns(const struct scan *sc)
{
	return sc->block_first_ns;
}

uint32_t sonde_rk_rest(const struct scan *sc)
{
	return sc->rest;
}

uint64_t sonde_rk_heap_count(const struct sonde_exp *exp)
{
	return exp->nheapev;
}

/* Packets of the traced files: offered to the file's kind, then to the
 * other traced kinds; one that no kind takes is counted as unknown.
 * Returns NULL, or what is wrong. */
static const char *take_trace_packet(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const char *r = exp_reader_kind(sc->df->kind)->take(sc, pkt, why, whylen);

	for (int id = 1; r == sonde_rk_not_mine && id <= SONDE_KIND_MAX; id++)
		if (id != (int)sc->df->kind && exp_reader_kind(id)->take)
			r = exp_reader_kind(id)->take(sc, pkt, why, whylen);
	if (r != sonde_rk_not_mine)
		return r;
	if (!sc->out)
		sc->exp->sum.unknown_packets++;
	return NULL;
}

/*
 * Checks one packet of the file's own type beyond the generic size rules
 * and takes it in.  Returns NULL, or what is wrong with it.
 */
static const char *take_packet(struct scan *sc, const uint8_t *pkt, uint64_t off, char *why,
			       size_t whylen)
{
	struct sonde_exp *exp = sc->exp;
	const struct sonde_packet *h = (const void *)pkt;

	switch (sc->df->kind) {
	case SONDE_KIND_PROFILE: {
		unsigned min = h->type == SONDE_PKT_PROFILE  ? SONDE_PROFILE_V1_SIZE
			       : h->type == SONDE_PKT_OFFCPU ? (unsigned)sizeof(struct sonde_offcpu_packet)
							     : 0;
		if (!min)
			break;
		if (h->type == SONDE_PKT_OFFCPU)
			sc->offcpu_block = true; /* the sampler's, good packet or bad */
		if (h->size < min) {
			snprintf(why, whylen, "%s packet size %u is below %u",
				 h->type == SONDE_PKT_PROFILE ? "profile" : "off-CPU", h->size, min);
			return why;
		}
		struct sonde_exp_summary *s = &exp->sum;
		struct sonde_sample smp;

		switch (profile_sample(pkt, sc->tid, &smp)) { /* the bad ones: said once, in finish() */
		case PS_BAD_WEIGHT:
			if (!s->samples_bad_weight++)
				s->first_bad_weight = smp.weight_ns;
			return NULL;
		case PS_BAD_MS:
			s->samples_bad_ms++;
			return NULL;
		case PS_BAD_OFFCPU:
			s->offcpu_bad++;
			return NULL;
		default:
			break;
		}
		struct sonde_thread *t = scan_thread(sc, smp.tid);

		bool offcpu = sonde_state_offcpu(smp.state);

		if (smp.state < SONDE_STATE_COUNT) { /* the reader checked an off-CPU one */
			s->state_samples[smp.state]++;
			s->state_ns[smp.state] += smp.weight_ns;
			if (t)
				t->state_ns[smp.state] += smp.weight_ns;
		}
		if (offcpu) {
			s->offcpu_samples++;
			if (t)
				t->offcpu_samples++;
		} else {
			if (!s->samples || smp.time_ns < s->first_ns)
				s->first_ns = smp.time_ns;
			if (smp.time_ns > s->last_ns)
				s->last_ns = smp.time_ns;
			s->samples++;
			s->weight_ns += smp.weight_ns;
			s->samples_ms += h->size >= sizeof(struct sonde_profile_packet);
			s->system_ns += smp.system_ns;
			s->wait_cpu_ns += smp.wait_cpu_ns;
			if (t) {
				if (!t->samples || smp.time_ns < t->first_ns)
					t->first_ns = smp.time_ns;
				if (smp.time_ns > t->last_ns)
					t->last_ns = smp.time_ns;
				t->samples++;
				t->weight_ns += smp.weight_ns;
				t->system_ns += smp.system_ns;
				t->wait_cpu_ns += smp.wait_cpu_ns;
			}
		}
		/* the stack map's slot of a sample further on, prefetched:
		 * the lookups' misses overlap */
		if (sc->rest >= 9u * h->size && exp->stackmap.cap) {
			const struct sonde_profile_packet *ahead = (const void *)(pkt + 8u * h->size);

			if (ahead->type == SONDE_PKT_PROFILE)
				__builtin_prefetch(&exp->stackmap.s[u64map_mix(ahead->stack_id) & (exp->stackmap.cap - 1)]);
		}
		if (!sc->have_last || sc->last_stack_id != smp.stack_id) {
			/* the flags from the map's slot: the stacks array is
			 * another miss per sample in a large experiment */
			const struct u64map_slot *sl = u64map_find(&exp->stackmap, smp.stack_id);

			sc->last_stack = sl ? (long)sl->val - 1 : materialize(exp, smp.stack_id);
			sc->last_flags = sl ? (uint16_t)sl->tag
					 : sc->last_stack >= 0 ? exp->stacks[sc->last_stack].flags : 0;
			sc->last_stack_id = smp.stack_id;
			sc->have_last = true;
		}
		if (offcpu)
			return NULL; /* the stack statistics are the CPU samples' */
		if (sc->last_stack < 0)
			s->samples_unknown_stack++;
		else {
			s->samples_truncated += !!(sc->last_flags & SONDE_STACK_TRUNCATED);
			s->samples_incomplete += !!(sc->last_flags & SONDE_STACK_INCOMPLETE);
		}
		return NULL;
	}
	case SONDE_KIND_STACKS: {
		if (h->type == SONDE_PKT_FRAME) {
			if (h->size < sizeof(struct sonde_frame_packet)) {
				snprintf(why, whylen, "frame packet size %u is below %zu", h->size,
					 sizeof(struct sonde_frame_packet));
				return why;
			}
			const struct sonde_frame_packet *f = (const void *)pkt;
			struct sonde_frame fr = frame_of(f);
			exp->sum.stack_packets++;
			long i = u64map_get(&exp->nodemap, f->node_id);
			if (i >= 0) {
				const struct node *n = &exp->nodes[i];
				if (n->parent != f->parent_id || memcmp(&n->fr, &fr, sizeof fr)) {
					exp->sum.stack_conflicts++;
					exp_problem(exp, SONDE_PROBLEM_WARNING,
						    "'stacks' offset %llu: frame node 0x%llx was already used "
						    "for a different frame (offset %llu); the first one is kept",
						    (unsigned long long)off, (unsigned long long)f->node_id,
						    (unsigned long long)n->off);
				}
				return NULL;
			}
			if (sonde_grow(&exp->nodes, &exp->capnodes, exp->nnodes + 1, sizeof(*exp->nodes), 16) ||
			    u64map_put(&exp->nodemap, f->node_id, (uint32_t)exp->nnodes)) {
				exp->oom = true;
				return NULL;
			}
			exp->nodes[exp->nnodes++] = (struct node){ f->parent_id, fr, off };
			exp->sum.frame_nodes++;
			return NULL;
		}
		if (h->type != SONDE_PKT_STACK)
			break;
		if (h->size < sizeof(struct sonde_stack_packet)) {
			snprintf(why, whylen, "stack packet size %u is below %zu", h->size,
				 sizeof(struct sonde_stack_packet));
			return why;
		}
		const struct sonde_stack_packet *p = (const void *)pkt;

		if ((size_t)h->size != sizeof(*p) + 8u * p->depth) {
			snprintf(why, whylen, "stack packet depth %u does not match its size %u",
				 p->depth, h->size);
			return why;
		}
		exp->sum.stack_packets++;
		const uint64_t *pc = (const uint64_t *)(pkt + sizeof(*p));
		long i = u64map_get(&exp->stackmap, p->stack_id);

		if (i >= 0) {
			const struct sonde_stack *st = &exp->stacks[i];
			bool same = st->depth == p->depth && st->flags == p->flags;

			for (unsigned k = 0; same && k < p->depth; k++) {
				struct sonde_frame fr = sonde_frame_native(pc[k]);

				same = !memcmp(&st->frame[k], &fr, sizeof fr);
			}
			if (!same) {
				exp->sum.stack_conflicts++;
				exp_problem(exp, SONDE_PROBLEM_WARNING,
					    "'stacks' offset %llu: stack id 0x%llx was already used for a "
					    "different stack (offset %llu); the first one is kept",
					    (unsigned long long)off, (unsigned long long)p->stack_id,
					    (unsigned long long)st->offset);
			}
			return NULL;
		}
		/* the old whole-stack form: native frames only */
		struct sonde_frame *fr = own_frames(exp, p->depth);

		for (unsigned k = 0; fr && k < p->depth; k++)
			fr[k] = sonde_frame_native(pc[k]);
		if (!fr || sonde_grow(&exp->stacks, &exp->capstacks, exp->nstacks + 1, sizeof(*exp->stacks), 16) ||
		    u64map_put(&exp->stackmap, p->stack_id, (uint32_t)exp->nstacks)) {
			exp->oom = true;
			return NULL;
		}
		struct sonde_stack *st = &exp->stacks[exp->nstacks++];

		u64map_find(&exp->stackmap, p->stack_id)->tag = p->flags;
		st->id = p->stack_id;
		st->depth = p->depth;
		st->flags = p->flags;
		st->frame = fr;
		st->offset = off;
		exp->sum.stacks++;
		exp->sum.stacks_truncated += !!(p->flags & SONDE_STACK_TRUNCATED);
		exp->sum.stacks_incomplete += !!(p->flags & SONDE_STACK_INCOMPLETE);
		return NULL;
	}
	case SONDE_KIND_OVERVIEW: {
		if (h->type != SONDE_PKT_OVERVIEW)
			break;
		if (h->size < SONDE_OVERVIEW_V1_SIZE) {
			snprintf(why, whylen, "overview packet size %u is below %u", h->size,
				 SONDE_OVERVIEW_V1_SIZE);
			return why;
		}
		if (sonde_grow(&exp->ov, &exp->capov, exp->nov + 1, sizeof(*exp->ov), 16) ||
		    sonde_grow(&exp->ovlabel, &exp->capovlabel, exp->nov + 1, sizeof(*exp->ovlabel), 16)) {
			exp->oom = true;
			return NULL;
		}
		/* Older writers' packets are shorter: their missing fields read 0. */
		struct sonde_overview_packet *o = &exp->ov[exp->nov];
		size_t have = h->size < sizeof(*o) ? h->size : sizeof(*o);
		memset(o, 0, sizeof(*o));
		memcpy(o, pkt, have);
		const char *label = NULL;
		if (have == sizeof(*o) && o->label_len) {
			if (o->label_len > SONDE_LABEL_MAX || sizeof(*o) + o->label_len + 1 > h->size ||
			    pkt[sizeof(*o) + o->label_len] != 0) {
				snprintf(why, whylen, "overview packet label of %u bytes does not fit size %u",
					 o->label_len, h->size);
				return why;
			}
			label = (const char *)pkt + sizeof(*o);
		} else {
			o->label_len = 0;
		}
		exp->ovlabel[exp->nov++] = label;
		exp->sum.overview_packets++;
		return NULL;
	}
	default:
		if (exp_reader_kind(sc->df->kind)->take)
			return take_trace_packet(sc, pkt, why, whylen);
	}
	exp->sum.unknown_packets++;
	return NULL;
}

/* Maps the data file; returns false when there is nothing to scan. */
static bool map_data(struct sonde_exp *exp, struct datafile *df)
{
	char *path = path_in(exp, df->name);

	if (!path) {
		exp->oom = true;
		return false;
	}
	int fd = sonde_open_regular(path);

	free(path);
	if (fd < 0) {
		if (errno != ENOENT)
			exp_problem(exp, SONDE_PROBLEM_ERROR, "cannot open '%s': %s", df->name,
				    sonde_open_strerror(errno));
		else if (df->declared)
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' is missing, although log.xml declares it", df->name);
		return false;
	}
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' is not a regular file", df->name);
		close(fd);
		return false;
	}
	if (st.st_size == 0) {
		close(fd);
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' is empty (no file header)", df->name);
		return false;
	}
	/* A finished experiment's file is mapped; one still being written
	 * is copied: sonde collect trims a data file's unused tail once the
	 * program has ended, and a mapped page past the new end would fault
	 * (SIGBUS) as it was read (t06 read a live experiment's trimming
	 * once in a make check).  Its log.xml is closed after the trim. */
	bool copy = !exp->info.log_complete;
	void *m = copy ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		       : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

	/* A sparse file (a size limit's preallocation, a file extended by
	 * truncate) reads as zeros in its holes; they hold no blocks. */
	if (m != MAP_FAILED && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size) {
		size_t cap = 0;
		off_t off = 0;

		for (;;) {
			off_t d = lseek(fd, off, SEEK_DATA), h;

			if (d < 0) {
				if (errno != ENXIO) { /* cannot tell: read it all */
					free(df->ext);
					df->ext = NULL;
					df->next = 0;
				} else if (!df->ext) { /* no data at all */
					df->ext = calloc(1, sizeof(*df->ext));
				}
				break;
			}
			if ((h = lseek(fd, d, SEEK_HOLE)) < 0 || h <= d ||
			    (df->next == cap &&
			     (cap >= 65536 || sonde_grow(&df->ext, &cap, df->next + 1, sizeof(*df->ext), 16)))) {
				free(df->ext); /* too fragmented to bother: read it all */
				df->ext = NULL;
				df->next = 0;
				break;
			}
			df->ext[df->next++] = (struct extent){ (uint64_t)d, (uint64_t)h };
			off = h;
		}
	}
	if (copy && m != MAP_FAILED) {
		/* its data (the extents of a sparse file), the rest zeros; a
		 * file cut shorter meanwhile reads as far as it goes */
		size_t n = df->ext ? df->next : 1;
		for (size_t i = 0; i < n; i++) {
			uint64_t lo = df->ext ? df->ext[i].lo : 0, hi = df->ext ? df->ext[i].hi : (uint64_t)st.st_size;
			if (hi > (uint64_t)st.st_size)
				hi = (uint64_t)st.st_size;
			while (lo < hi) {
				ssize_t r = pread(fd, (uint8_t *)m + lo, (size_t)(hi - lo), (off_t)lo);
				if (r <= 0)
					break;
				lo += (uint64_t)r;
			}
		}
	}
	close(fd);
	if (m == MAP_FAILED) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "cannot map '%s': %s", df->name, strerror(errno));
		return false;
	}
	df->map = m;
	df->maplen = (size_t)st.st_size;
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The packets of one block's payload: each checked and taken.  Returns
 * the bytes of whole good packets; *bad says what stopped the walk before
 * the used size (NULL: the file ended, or nothing). */
static uint32_t scan_packets(struct scan *sc, const uint8_t *pay, uint32_t used, uint32_t lim,
			     uint32_t payload, uint64_t boff, char *why, size_t whylen, const char **bad)
{
	uint32_t pos = 0;

	*bad = NULL;
	while (pos < used) {
		uint32_t rest = used - pos;

		if (rest < 8) {
			snprintf(why, whylen, "used size %u leaves %u bytes that are not a packet",
				 used, rest);
			*bad = why;
			break;
		}
		if (pos + 8 > lim)
			break; /* truncated file */
		const struct sonde_packet *h = (const void *)(pay + pos);
		uint32_t psize = h->size;

		if (psize < 8 || psize % 8) {
			snprintf(why, whylen, "packet size %u is invalid", psize);
			*bad = why;
			break;
		}
		/* A heap stream packet's size runs ahead of the used size
		 * while it is being extended (a process killed then). */
		if (psize > rest && h->type == SONDE_PKT_HEAP_STREAM && pos + psize <= payload)
			psize = rest;
		if (psize > rest) {
			snprintf(why, whylen,
				 "packet size %u exceeds the rest of the used area (%u bytes)", psize,
				 rest);
			*bad = why;
			break;
		}
		if (pos + psize > lim)
			break; /* truncated file */
		sc->rest = rest;
		*bad = take_packet(sc, pay + pos, boff + sizeof(struct sonde_block_header) + pos, why, whylen);
		if (*bad)
			break;
		pos += psize;
	}
	return pos;
}

static void scan_file(struct sonde_exp *exp, struct datafile *df)
{
	if (!map_data(exp, df))
		return;

	const uint8_t *m = df->map;
	size_t size = df->maplen;
	const char *name = df->name;
	struct sonde_file_header fh;

	if (size < sizeof(fh)) {
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'%s' is %zu bytes, shorter than its file header (%zu); nothing read", name,
			    size, sizeof(fh));
		return;
	}
	memcpy(&fh, m, sizeof(fh));
	if (memcmp(fh.magic, SONDE_DATA_MAGIC, 8)) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' is not a sonde data file (bad magic); nothing read",
			    name);
		return;
	}
	if (fh.version < SONDE_FORMAT_MIN_READABLE || fh.version > SONDE_FORMAT_VERSION) {
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'%s' has format version %u; this sonde reads %d to %d; nothing read", name,
			    fh.version, SONDE_FORMAT_MIN_READABLE, SONDE_FORMAT_VERSION);
		return;
	}
	if (fh.kind != df->kind) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' holds data kind %u, not %u; nothing read", name,
			    fh.kind, df->kind);
		return;
	}
	if (fh.header_size < sizeof(fh) || fh.header_size % 8 || fh.header_size > (1u << 20)) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' has an invalid header size %u; nothing read",
			    name, fh.header_size);
		return;
	}
	if (fh.block_size < sizeof(struct sonde_block_header) + 8 || fh.block_size % 8 ||
	    fh.block_size > (1u << 26)) {
		exp_problem(exp, SONDE_PROBLEM_ERROR, "'%s' has an invalid block size %u; nothing read",
			    name, fh.block_size);
		return;
	}
	df->start_ns = fh.start_ns;
	if (size < fh.header_size) {
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'%s' ends at offset %zu, inside its file header (%u bytes)", name, size,
			    fh.header_size);
		return;
	}

	struct scan sc = { .exp = exp, .df = df };
	const uint32_t bsize = fh.block_size;
	const uint32_t payload = bsize - (uint32_t)sizeof(struct sonde_block_header);
	char why[160];

	size_t ei = 0;

	for (uint64_t boff = fh.header_size, b = 0; boff < size; boff += bsize, b++) {
		if (df->ext) {
			/* a block whose header lies in a hole is unused (magic 0) */
			while (ei < df->next && df->ext[ei].hi < boff + sizeof(struct sonde_block_header))
				ei++;
			if (ei == df->next)
				break;
			if (df->ext[ei].lo >= boff + sizeof(struct sonde_block_header)) {
				uint64_t nb = (df->ext[ei].lo - fh.header_size) / bsize;

				if (nb > b) {
					b = nb - 1; /* the loop steps to block nb */
					boff = fh.header_size + (nb - 1) * (uint64_t)bsize;
					continue;
				}
				continue; /* this block's header is a hole */
			}
		}
		size_t avail = size - boff < bsize ? (size_t)(size - boff) : bsize;
		const struct sonde_block_header *bh = (const void *)(m + boff);

		if (avail < sizeof(*bh)) {
			if (!all_zero(m + boff, avail))
				exp_problem(exp, SONDE_PROBLEM_ERROR,
					    "'%s' ends at offset %zu, inside the header of block %llu", name,
					    size, (unsigned long long)b);
			break;
		}
		uint32_t magic = bh->magic;

		if (magic == 0)
			continue; /* claimed but unwritten, or a sparse tail */
		if (magic != SONDE_BLOCK_MAGIC) {
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' offset %llu (block %llu): bad block magic 0x%08x; block skipped",
				    name, (unsigned long long)boff, (unsigned long long)b, magic);
			continue;
		}
		if (bh->kind != df->kind) {
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' offset %llu (block %llu): block of data kind %u in a file of kind "
				    "%u; block skipped",
				    name, (unsigned long long)boff, (unsigned long long)b, bh->kind, df->kind);
			continue;
		}
		uint32_t used = __atomic_load_n(&bh->used, __ATOMIC_ACQUIRE);

		if (used > payload) {
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' offset %llu (block %llu): used size %u exceeds the block payload "
				    "(%u); block skipped",
				    name, (unsigned long long)boff, (unsigned long long)b, used, payload);
			continue;
		}
		uint32_t lim = used; /* bytes of this block present in the file */

		if (avail - sizeof(*bh) < used)
			lim = (uint32_t)(avail - sizeof(*bh));

		const uint8_t *pay = m + boff + sizeof(*bh);
		const char *bad = NULL;
		bool trace = sonde_kind_modular((int)df->kind);
		struct heapblock hb = { .pay = pay, .used = used, .lim = lim, .payload = payload,
					.tid = bh->tid, .first_ns = bh->first_ns, .boff = boff };

		sc.tid = bh->tid;
		sc.block_first_ns = bh->first_ns;
		sc.thread_ix = -1;
		sc.offcpu_block = false;
		sc.hb = trace ? &hb : NULL;
		uint32_t pos = scan_packets(&sc, pay, used, lim, payload, boff, why, sizeof(why), &bad);

		/* A profile block's owner is a thread of the experiment (even
		 * without a good sample), but for the off-CPU sampler's blocks:
		 * their samples are other threads'. */
		if (df->kind == SONDE_KIND_PROFILE && !sc.offcpu_block)
			scan_thread(&sc, bh->tid);

		/* Heap events (in any trace file: their file order is kept) */
		if (hb.nev) {
			if (sonde_grow(&exp->hblocks, &exp->caphblocks, exp->nhblocks + 1, sizeof(*exp->hblocks),
				       16)) {
				exp->oom = true;
				return;
			}
			exp->hblocks[exp->nhblocks++] = hb;
		}
		exp->files[df->file].written += sizeof(*bh) + pos;
		if (bad)
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' offset %llu (block %llu, tid %u): %s; the rest of the block (%u bytes) "
				    "is skipped",
				    name, (unsigned long long)(boff + sizeof(*bh) + pos), (unsigned long long)b,
				    bh->tid, bad, used - pos);
		else if (pos < used)
			exp_problem(exp, SONDE_PROBLEM_ERROR,
				    "'%s' is truncated: it ends at offset %zu inside block %llu (tid %u); %u "
				    "bytes of packets are lost",
				    name, size, (unsigned long long)b, bh->tid, used - pos);
		if (df->kind == SONDE_KIND_PROFILE && pos > 0) {
			if (sonde_grow(&exp->blocks, &exp->capblocks, exp->nblocks + 1, sizeof(*exp->blocks), 16)) {
				exp->oom = true;
				return;
			}
			exp->blocks[exp->nblocks++] = (struct blockref){ pay, pos, bh->tid };
		}
		if (exp->oom)
			return;
	}
}

/* ---- open / close ------------------------------------------------------ */

static int cmp_thread(const void *a, const void *b)
{
	uint32_t x = ((const struct sonde_thread *)a)->tid, y = ((const struct sonde_thread *)b)->tid;

	return x < y ? -1 : x > y;
}

static void stat_file(struct sonde_exp *exp, int i, const char *name)
{
	char *path = path_in(exp, name);
	struct stat st;

	exp->files[i].name = name;
	if (!path) {
		exp->oom = true;
		return;
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		exp->files[i].present = true;
		exp->files[i].size = (uint64_t)st.st_size;
	}
	free(path);
}

SONDE_RK_TIME_SORT(sort_heap, struct sonde_heap_event)

/* Each kind's events in time order (the heap's are sorted when decoded). */
static void sort_traces(struct sonde_exp *exp)
{
	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (exp_reader_kind(id)->finish)
			exp_reader_kind(id)->finish(exp);
}

/* Threads write sample points into their own blocks, so file order is
 * not time order; the samples between points need time order. */
struct ovsort {
	struct sonde_overview_packet p;
	const char *label;
	size_t seq;
};

static int cmp_ovsort(const void *a, const void *b)
{
	const struct ovsort *x = a, *y = b;

	if (x->p.time_ns != y->p.time_ns)
		return x->p.time_ns < y->p.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_overview(struct sonde_exp *exp)
{
	size_t n = exp->nov;
	bool sorted = true;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = exp->ov[i - 1].time_ns <= exp->ov[i].time_ns;
	if (sorted)
		return;
	struct ovsort *t = malloc(n * sizeof(*t));

	if (!t) {
		exp->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		t[i] = (struct ovsort){ exp->ov[i], exp->ovlabel[i], i };
	qsort(t, n, sizeof(*t), cmp_ovsort);
	for (size_t i = 0; i < n; i++) {
		exp->ov[i] = t[i].p;
		exp->ovlabel[i] = t[i].label;
	}
	free(t);
}

static int cmp_mmap(const void *a, const void *b)
{
	const struct sonde_heap_mmap *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Heap events carry the tracing clock's tick (sonde/shared.h), which only
 * sonde collect advances.  Killed while the target ran on, it leaves
 * every later event of the target stamped with its last tick: one run of
 * equal times to the end, whose order the leak matching can only guess.
 * A block's header has the real time it was claimed, and every event of
 * a block but its first is stamped after the claim, so a block whose last
 * event is far older than the block itself shows the clock stopped.
 * Further than any scheduling delay of collect's tick: a second.
 */
#define HEAP_TICK_STOPPED_NS 1000000000ull

static void check_heap_tick(struct sonde_exp *exp)
{
	uint64_t stopped = UINT64_MAX, late = 0, nev = 0;

	for (size_t i = 0; i < exp->nhblocks; i++) {
		const struct heapblock *b = &exp->hblocks[i];

		if (b->nev < 2 || b->first_ns <= b->tlast || b->first_ns - b->tlast <= HEAP_TICK_STOPPED_NS)
			continue;
		nev += b->nev;
		if (b->tlast < stopped)
			stopped = b->tlast;
		if (b->first_ns - b->tlast > late)
			late = b->first_ns - b->tlast;
	}
	if (!nev)
		return;
	uint64_t t0 = exp->info.start_ns;
	const struct datafile *df = traced_file(exp, SONDE_KIND_HEAP);

	exp_problem(exp, SONDE_PROBLEM_WARNING,
		    "'%s': the tracing clock stopped at %.3f s (sonde collect killed while the target ran?): "
		    "%llu heap events in blocks written up to %.1f s later carry its last tick; their order "
		    "within it is a guess",
		    df ? df->name : "heaptrace", stopped > t0 ? (double)(stopped - t0) / 1e9 : 0.0,
		    (unsigned long long)nev, (double)late / 1e9);
}

/*
 * The threads whose end is recorded, for an exec that failed: the end
 * records written for it, from its since_ns on, are void.  A max-heap of
 * the ends, each entry with its thread's version, stale once a later end
 * record replaced it: an exec_failed takes the threads that ended at or
 * after since_ns off the top, O(log n) each, where looking at every
 * thread for every exec_failed made a log.xml of both n^2.
 */
struct ended {
	struct endent {
		uint64_t end;
		uint32_t thread, ver;
	} *h;
	size_t n, cap;
	uint32_t *ver; /* per thread: its entry's version */
	size_t capver;
};

static void ended_release(struct ended *e)
{
	free(e->h);
	free(e->ver);
	memset(e, 0, sizeof(*e));
}

/* Thread k (of nthreads) ended at end (0: not recorded, no entry).
 * -1 out of memory. */
static int ended_push(struct ended *e, uint64_t end, size_t k, size_t nthreads)
{
	size_t had = e->capver;

	if (sonde_grow(&e->ver, &e->capver, nthreads, sizeof(*e->ver), 16))
		return -1;
	memset(e->ver + had, 0, (e->capver - had) * sizeof(*e->ver));
	e->ver[k]++; /* its older entry, if any, is stale */
	if (!end)
		return 0;
	if (sonde_grow(&e->h, &e->cap, e->n + 1, sizeof(*e->h), 16))
		return -1;
	size_t i = e->n++;

	for (; i && e->h[(i - 1) / 2].end < end; i = (i - 1) / 2)
		e->h[i] = e->h[(i - 1) / 2];
	e->h[i] = (struct endent){ end, (uint32_t)k, e->ver[k] };
	return 0;
}

/* A thread whose recorded end is at or after since, taken off (its end
 * record is void now), or -1 when there is none. */
static long ended_pop(struct ended *e, uint64_t since)
{
	while (e->n && e->h[0].end >= since) {
		struct endent top = e->h[0], last = e->h[--e->n];
		size_t i = 0;

		for (;;) { /* last sifted down from the root */
			size_t c = 2 * i + 1;

			if (c >= e->n)
				break;
			if (c + 1 < e->n && e->h[c + 1].end > e->h[c].end)
				c++;
			if (e->h[c].end <= last.end)
				break;
			e->h[i] = e->h[c];
			i = c;
		}
		if (e->n)
			e->h[i] = last;
		if (top.ver == e->ver[top.thread]) {
			e->ver[top.thread]++;
			return top.thread;
		}
	}
	return -1;
}

static void finish(struct sonde_exp *exp)
{
	sort_traces(exp);
	if (exp->nmmaps > 1)
		qsort(exp->mmaps, exp->nmmaps, sizeof(*exp->mmaps), cmp_mmap);
	sort_overview(exp);
	struct sonde_exp_info *in = &exp->info;
	const struct sonde_exp_summary *s = &exp->sum;

	/* Threads from log events. */
	struct ended ends = { 0 };

	for (size_t i = 0; i < exp->nevents; i++) {
		const struct sonde_event *ev = &exp->events[i];
		struct sonde_thread *t;

		if (ev->kind == SONDE_EV_THREAD_START && (t = get_thread(exp, ev->tid)))
			t->start_ns = ev->time_ns;
		else if (ev->kind == SONDE_EV_THREAD_END && (t = get_thread(exp, ev->tid))) {
			t->end_ns = ev->time_ns;
			if (ended_push(&ends, t->end_ns, (size_t)(t - exp->threads), exp->nthreads) < 0)
				exp->oom = true;
			if (!t->start_ns)
				t->start_ns = ev->start_ns;
			if (ev->signame && *ev->signame)
				t->name = ev->signame;
			if (ev->has_cpu_ns) {
				t->has_cpu_ns = true;
				t->cpu_ns = ev->cpu_ns;
			}
			if (ev->has_times) {
				t->has_times = true;
				t->utime_ns = ev->utime_ns;
				t->stime_ns = ev->stime_ns;
			}
			if (ev->has_run_delay) {
				t->has_run_delay = true;
				t->run_delay_ns = ev->run_delay_ns;
			}
		} else if (ev->kind == SONDE_EV_EXIT || ev->kind == SONDE_EV_SIGNAL)
			in->exit_event = ev;
		else if (ev->kind == SONDE_EV_END)
			in->end_event = ev;
		else if (ev->kind == SONDE_EV_EXEC)
			in->exec_event = ev;
		else if (ev->kind == SONDE_EV_EXEC_FAILED) {
			/* The process goes on: the end records written for
			 * the exec (from since_ns) are void. */
			in->exec_event = NULL;
			if (in->end_event && in->end_event->time_ns >= ev->since_ns)
				in->end_event = NULL;
			for (long k; (k = ended_pop(&ends, ev->since_ns)) >= 0;) {
				struct sonde_thread *th = &exp->threads[k];

				th->end_ns = 0;
				th->name = NULL;
				th->has_cpu_ns = th->has_times = th->has_run_delay = false;
				th->cpu_ns = th->utime_ns = th->stime_ns = th->run_delay_ns = 0;
			}
		}
	}
	ended_release(&ends);
	if (exp->nthreads > 1)
		qsort(exp->threads, exp->nthreads, sizeof(*exp->threads), cmp_thread);
	u64map_release(&exp->threadmap); /* indices are stale after sorting */

	if (!in->start_ns)
		for (int i = 0; i < exp->ndata && !in->start_ns; i++)
			in->start_ns = exp->data[i].start_ns;
	for (size_t i = 0; i < exp->nevents && !in->start_ns; i++)
		if (exp->events[i].kind == SONDE_EV_START)
			in->start_ns = exp->events[i].time_ns;

	uint64_t last_ev = 0;

	for (size_t i = 0; i < exp->nevents; i++)
		if (exp->events[i].time_ns > last_ev)
			last_ev = exp->events[i].time_ns;
	if (in->exit_event && in->exit_event->time_ns) {
		in->end_ns = in->exit_event->time_ns;
		in->end_source = in->exit_event->kind == SONDE_EV_EXIT ? "exit" : "signal";
	} else if (in->end_event && in->end_event->time_ns) {
		in->end_ns = in->end_event->time_ns;
		in->end_source = "end";
	} else if (s->samples) {
		in->end_ns = s->last_ns;
		in->end_source = "last sample";
	} else if (last_ev) {
		in->end_ns = last_ev;
		in->end_source = "last event";
	} else {
		in->end_ns = in->start_ns;
		in->end_source = "start";
	}

	check_heap_tick(exp);
	if (in->end_event && in->end_event->has_offcpu &&
	    in->end_event->offcpu_samples > s->offcpu_samples + s->offcpu_bad)
		exp_problem(exp, SONDE_PROBLEM_WARNING,
			    "the collector reported %llu off-CPU samples at its end, but only %llu were read",
			    (unsigned long long)in->end_event->offcpu_samples,
			    (unsigned long long)s->offcpu_samples);
	if (in->end_event && in->end_event->samples > s->samples)
		exp_problem(exp, SONDE_PROBLEM_WARNING,
			    "the collector reported %llu samples at its end, but only %llu were read",
			    (unsigned long long)in->end_event->samples, (unsigned long long)s->samples);
	if (s->samples_unknown_stack)
		exp_problem(exp, SONDE_PROBLEM_WARNING,
			    "%llu samples refer to stacks that are not in 'stacks'",
			    (unsigned long long)s->samples_unknown_stack);
	if (exp->dropped) {
		size_t d = exp->dropped, de = exp->dropped_errors;
		char buf[128];

		/* Into the slot exp_problem() keeps free for it. */

		snprintf(buf, sizeof(buf), "... and %zu more problems (%zu of them errors)", d, de);
		char *msg = strdup(buf);

		if (msg && !sonde_grow(&exp->problems, &exp->capproblems, exp->nproblems + 1,
				       sizeof(*exp->problems), 16)) {
			exp->problems[exp->nproblems].severity =
				de ? SONDE_PROBLEM_ERROR : SONDE_PROBLEM_WARNING;
			exp->problems[exp->nproblems++].msg = msg;
		} else {
			free(msg);
		}
	}
}

/* The compiled Java methods' scopes (jscopes.h), before any stack is
 * built; jvm.code gives their tiers. */
static void read_jscopes(struct sonde_exp *exp)
{
	char *inl = NULL, *code = NULL;
	size_t ni = 0, nc = 0, bad = 0;
	int r = exp_read_whole(exp, SONDE_JVM_INLINE_FILE, &inl, &ni);
	if (r < 0 && !exp->oom)
		exp_problem(exp, SONDE_PROBLEM_WARNING,
			    "cannot read 'jvm.inline': %s; stacks whose Java walk failed keep their native frames",
			    strerror(errno));
	if (r == 0) {
		if (exp_read_whole(exp, "jvm.code", &code, &nc) != 0)
			code = NULL, nc = 0; /* without tiers: compiled, C2's */
		bool oom;
		exp->jscopes = sonde_jscopes_parse(inl, ni, code, nc, &bad, &oom);
		if (oom)
			exp->oom = true;
		else if (bad)
			exp_problem(exp, SONDE_PROBLEM_WARNING, "'jvm.inline': %zu malformed line%s skipped", bad,
				    bad == 1 ? "" : "s");
	}
	free(inl);
	free(code);
}

struct sonde_exp *sonde_exp_open(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (errlen)
		err[0] = '\0';
	if (stat(dir, &st) < 0) {
		exp_set_err(err, errlen, "cannot open experiment '%s': %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		exp_set_err(err, errlen, "'%s' is not a sonde experiment (not a directory)", dir);
		return NULL;
	}

	struct sonde_exp *exp = calloc(1, sizeof(*exp));

	if (!exp || !(exp->dir = strdup(dir))) {
		free(exp);
		exp_set_err(err, errlen, "out of memory opening '%s'", dir);
		return NULL;
	}
	pthread_mutex_init(&exp->heap_lock, NULL);
	for (size_t n = strlen(exp->dir); n > 1 && exp->dir[n - 1] == '/'; n--)
		exp->dir[n - 1] = '\0';
	const char *slash = strrchr(exp->dir, '/');

	exp->info.dir = exp->dir;
	exp->info.name = slash && slash[1] ? slash + 1 : exp->dir;
	exp->data[DF_STACKS] = (struct datafile){ .name = "stacks", .kind = SONDE_KIND_STACKS,
						  .file = F_STACKS };
	exp->data[DF_PROFILE] = (struct datafile){ .name = "profile", .kind = SONDE_KIND_PROFILE,
						   .file = F_PROFILE };
	exp->data[DF_OVERVIEW] = (struct datafile){ .name = "overview",
						    .kind = SONDE_KIND_OVERVIEW, .file = F_OVERVIEW };
	/* The periodic points, which `sonde collect` writes from outside the
	 * target (include/sonde/shared.h): merged with the overview's by time. */
	exp->data[DF_PERIODIC] = (struct datafile){ .name = SONDE_PERIODIC_FILE,
						    .kind = SONDE_KIND_OVERVIEW, .file = F_PERIODIC };
	/* Each traced kind of the table has its reader here. */
	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (sonde_kind_modular(id) && !exp_reader_kind(id)->take) {
			exp_set_err(err, errlen, "no reader for data kind %d ('%s')", id, sonde_kind_desc(id)->file);
			sonde_exp_close(exp);
			return NULL;
		}
	exp->ndata = DF_TRACED;
	exp->nfiles = F_TRACED;
	/* Then a data file per traced kind, named by the table of kinds. */
	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (sonde_kind_modular(id))
			exp->data[exp->ndata++] = (struct datafile){ .name = sonde_kind_desc(id)->file,
								     .kind = (uint32_t)id,
								     .file = exp->nfiles++ };

	if (exp_read_log(exp, err, errlen) < 0) {
		if (exp->oom)
			exp_set_err(err, errlen, "out of memory opening '%s'", dir);
		sonde_exp_close(exp);
		return NULL;
	}
	exp_read_map(exp);
	read_jscopes(exp);

	size_t len;
	int r = exp_read_whole(exp, "notes", &exp->notes, &len);

	if (r < 0 && !exp->oom)
		exp_problem(exp, SONDE_PROBLEM_WARNING, "cannot read 'notes': %s", strerror(errno));
	if (r == 0)
		exp->info.notes = exp->notes;

	stat_file(exp, F_LOG, "log.xml");
	stat_file(exp, F_MAP, "map.xml");
	stat_file(exp, F_NOTES, "notes");
	stat_file(exp, F_PROFILE, "profile");
	stat_file(exp, F_STACKS, "stacks");
	stat_file(exp, F_OVERVIEW, "overview");
	stat_file(exp, F_PERIODIC, SONDE_PERIODIC_FILE);
	for (int i = DF_TRACED; i < exp->ndata; i++)
		stat_file(exp, exp->data[i].file, exp->data[i].name);

	for (int i = 0; i < exp->ndata && !exp->oom; i++)
		scan_file(exp, &exp->data[i]);
	if (exp->sum.samples_bad_weight)
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'profile': %" PRIu64 " sample%s with an impossible weight (above 2^48 ns of CPU "
			    "in one sample; the first: %" PRIu64 " ns) skipped",
			    exp->sum.samples_bad_weight, exp->sum.samples_bad_weight == 1 ? "" : "s",
			    exp->sum.first_bad_weight);
	if (exp->sum.samples_bad_ms)
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'profile': %" PRIu64 " sample%s with impossible microstates (system time above "
			    "the sample's CPU time, or a run-queue delay above 2^48 ns) skipped",
			    exp->sum.samples_bad_ms, exp->sum.samples_bad_ms == 1 ? "" : "s");
	if (exp->sum.offcpu_bad)
		exp_problem(exp, SONDE_PROBLEM_ERROR,
			    "'profile': %" PRIu64 " off-CPU sample%s with a bad state, thread 0 or an "
			    "impossible weight skipped",
			    exp->sum.offcpu_bad, exp->sum.offcpu_bad == 1 ? "" : "s");
	if (!exp->oom)
		finish(exp);
	if (exp->oom) {
		exp_set_err(err, errlen, "out of memory opening '%s'", dir);
		sonde_exp_close(exp);
		return NULL;
	}
	return exp;
}

void sonde_exp_close(struct sonde_exp *exp)
{
	if (!exp)
		return;
	for (int i = 0; i < exp->ndata; i++) {
		if (exp->data[i].map)
			munmap(exp->data[i].map, exp->data[i].maplen);
		free(exp->data[i].ext);
	}
	for (size_t i = 0; i < exp->nproblems; i++)
		free((char *)exp->problems[i].msg);
	free(exp->problems);
	free(exp->events);
	free(exp->descs);
	free(exp->objects);
	free(exp->byaddr);
	free(exp->hitree);
	free(exp->epoch_at);
	free(exp->stacks);
	u64map_release(&exp->stackmap);
	for (size_t i = 0; i < exp->nowned; i++)
		free(exp->owned[i]);
	free(exp->owned);
	free(exp->nodes);
	u64map_release(&exp->nodemap);
	free(exp->threads);
	u64map_release(&exp->threadmap);
	free(exp->blocks);
	free(exp->ov);
	free(exp->ovlabel);
	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (exp->kstate[id] && exp_reader_kind(id)->free)
			exp_reader_kind(id)->free(exp->kstate[id]);
	free(exp->heap);
	free(exp->hblocks);
	free(exp->mmaps);
	free(exp->hroom);
	pthread_mutex_destroy(&exp->heap_lock);
	free(exp->logbuf);
	free(exp->mapbuf);
	free(exp->notes);
	sonde_jscopes_free(exp->jscopes);
	free(exp->dir);
	free(exp);
}

/* ---- accessors --------------------------------------------------------- */

const struct sonde_exp_info *sonde_exp_info(const struct sonde_exp *exp)
{
	return &exp->info;
}

const struct sonde_event *sonde_exp_events(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nevents;
	return exp->events;
}

const struct sonde_packet_desc *sonde_exp_packet_descs(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->ndescs;
	return exp->descs;
}

const struct sonde_exp_file *sonde_exp_files(const struct sonde_exp *exp, size_t *n)
{
	*n = (size_t)exp->nfiles;
	return exp->files;
}

const struct sonde_problem *sonde_exp_problems(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nproblems;
	return exp->problems;
}

size_t sonde_exp_nerrors(const struct sonde_exp *exp)
{
	return exp->nerrors;
}

const struct sonde_object *sonde_exp_objects(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nobjects;
	return exp->objects;
}

const struct sonde_stack *sonde_exp_stack(const struct sonde_exp *exp, uint64_t stack_id)
{
	long i = u64map_get(&exp->stackmap, stack_id);

	return i < 0 ? NULL : &exp->stacks[i];
}

const struct sonde_stack *sonde_exp_stacks(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nstacks;
	return exp->stacks;
}

const struct sonde_exp_summary *sonde_exp_summary(const struct sonde_exp *exp)
{
	return &exp->sum;
}

const struct sonde_thread *sonde_exp_threads(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nthreads;
	return exp->threads;
}

const struct sonde_overview_packet *sonde_exp_overview(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nov;
	return exp->ov;
}

const char *sonde_exp_overview_label(const struct sonde_exp *exp, size_t i)
{
	return i < exp->nov ? exp->ovlabel[i] : NULL;
}

bool sonde_exp_has_microstates(const struct sonde_exp *exp)
{
	return exp->info.settings.microstates || exp->sum.samples_ms > 0;
}

bool sonde_exp_has_offcpu(const struct sonde_exp *exp)
{
	return exp->info.settings.offcpu_interval_ns > 0 || exp->sum.offcpu_samples > 0;
}

void sonde_sample_iter_init(struct sonde_sample_iter *it, const struct sonde_exp *exp)
{
	it->exp = exp;
	it->block = 0;
	it->p = it->end = NULL;
	it->tid = 0;
}

bool sonde_sample_iter_next(struct sonde_sample_iter *it, struct sonde_sample *s)
{
	for (;;) {
		while (it->p < it->end) {
			const struct sonde_packet *h = (const void *)it->p;
			const uint8_t *pkt = it->p;
			uint16_t size = h->size;

			if (size < 8) /* cannot happen after validation; never loop */
				break;
			it->p += size;
			if ((h->type == SONDE_PKT_PROFILE && size < SONDE_PROFILE_V1_SIZE) ||
			    (h->type == SONDE_PKT_OFFCPU && size < sizeof(struct sonde_offcpu_packet)))
				break; /* as above: the scan ended the block there */
			if (profile_sample(pkt, it->tid, s) == PS_OK)
				return true; /* the others: as the scan skipped them */
		}
		if (it->block >= it->exp->nblocks)
			return false;
		const struct blockref *b = &it->exp->blocks[it->block++];

		it->p = b->p;
		it->end = b->p + b->len;
		it->tid = b->tid;
	}
}

/* ---- traced events ------------------------------------------------------ */

/* Decodes heap block hb's events again (they were checked at open) and
 * appends them to out.  false out of memory. */
static bool decode_heap_block(struct sonde_exp *exp, const struct heapblock *hb, struct heapbuf *out)
{
	struct scan sc = { .exp = exp, .df = traced_file(exp, SONDE_KIND_HEAP), .tid = hb->tid,
			   .block_first_ns = hb->first_ns, .out = out };
	char why[160];
	const char *bad;

	/* as many as open counted: the buffer never grows */
	if (sonde_grow(&out->v, &out->cap, out->n + hb->nev, sizeof(*out->v), 16)) {
		out->oom = true;
		return false;
	}
	scan_packets(&sc, hb->pay, hb->used, hb->lim, hb->payload, hb->boff, why, sizeof(why), &bad);
	return !out->oom;
}

const struct sonde_heap_event *sonde_exp_heap_events(const struct sonde_exp *exp, size_t *n)
{
	struct sonde_exp *x = (struct sonde_exp *)exp; /* filled once, under the lock */

	if (!__atomic_load_n(&x->heap_done, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&x->heap_lock);
		if (!x->heap_done && x->nheapev) {
			struct heapbuf out = { 0 };
			bool ok = true;

			out.cap = x->nheapev;
			out.v = malloc(out.cap * sizeof(*out.v));
			ok = out.v != NULL;
			for (size_t i = 0; ok && i < x->nhblocks; i++)
				ok = decode_heap_block(x, &x->hblocks[i], &out);
			void *tmp = ok && out.n > 1 ? malloc(out.n * sizeof(*out.v)) : NULL;

			if (ok && out.n > 1 && !tmp)
				ok = false;
			if (ok) {
				sort_heap(out.v, tmp, out.n);
				x->heap = out.v;
				x->nheap = out.n;
			} else {
				free(out.v);
				x->heap_failed = true;
			}
			free(tmp);
		}
		__atomic_store_n(&x->heap_done, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&x->heap_lock);
	}
	*n = exp->nheap;
	return exp->heap;
}

size_t sonde_exp_heap_count(const struct sonde_exp *exp)
{
	return exp->nheapev;
}

const struct sonde_heap_mmap *sonde_exp_heap_mmaps(const struct sonde_exp *exp, size_t *n)
{
	*n = exp->nmmaps;
	return exp->mmaps;
}

/*
 * The streaming iterator.  Each thread's events are in time order in its
 * blocks (a block's events, and a thread's blocks in file order), so the
 * time order of all events, with ties in file order (that of
 * sonde_exp_heap_events()), is a merge of a few runs, one per thread:
 * a run is a chain of one thread's blocks whose times never go back; the
 * merge takes the smallest (time, block index).  Each run keeps one
 * decoded block.  When a block's own events are out of time order (not
 * written by this collector), the iterator walks the sorted array
 * instead.
 */
struct run {
	size_t blk;  /* current block (index in hblocks) */
	size_t pos;  /* next event in buf */
	struct heapbuf buf;
};

struct sonde_heap_iter {
	struct sonde_exp *exp;
	const struct sonde_heap_event *arr; /* fallback: the sorted array */
	size_t narr, iarr;
	size_t *next;	  /* next[b]: the run's block after b, SIZE_MAX at its end */
	bool failed;	  /* out of memory while decoding */
	struct run *runs; /* a binary min-heap of the runs that have events left */
	size_t nruns;
};

static bool run_before(const struct run *a, const struct run *b)
{
	uint64_t x = a->buf.v[a->pos].time_ns, y = b->buf.v[b->pos].time_ns;

	return x != y ? x < y : a->blk < b->blk;
}

static void sift_down(struct sonde_heap_iter *it, size_t i)
{
	struct run *r = it->runs;
	size_t n = it->nruns;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && run_before(&r[l], &r[m]))
			m = l;
		if (l + 1 < n && run_before(&r[l + 1], &r[m]))
			m = l + 1;
		if (m == i)
			return;
		struct run t = r[i];
		r[i] = r[m];
		r[m] = t;
		i = m;
	}
}

/* Loads the run's block blk (skipping none: every listed block has
 * events).  false out of memory. */
static bool run_load(struct sonde_heap_iter *it, struct run *r, size_t blk)
{
	r->blk = blk;
	r->pos = 0;
	r->buf.n = 0;
	return decode_heap_block(it->exp, &it->exp->hblocks[blk], &r->buf) && r->buf.n;
}

void sonde_heap_iter_free(struct sonde_heap_iter *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->nruns; i++)
		free(it->runs[i].buf.v);
	free(it->runs);
	free(it->next);
	free(it);
}

struct sonde_heap_iter *sonde_heap_iter_new(const struct sonde_exp *exp)
{
	struct sonde_exp *x = (struct sonde_exp *)exp; /* only read */
	struct sonde_heap_iter *it = calloc(1, sizeof(*it));
	size_t nb = x->nhblocks;
	bool sorted = true;

	if (!it)
		return NULL;
	it->exp = x;
	for (size_t b = 0; b < nb && sorted; b++)
		sorted = !x->hblocks[b].unsorted;
	if (!sorted) {
		it->arr = sonde_exp_heap_events(exp, &it->narr);
		if (x->heap_failed) {
			free(it);
			return NULL;
		}
		return it;
	}
	/* tid -> slot; tail[slot]: the last block of the tid's current run */
	struct u64map tids = { 0 };
	size_t *first = malloc((nb ? nb : 1) * sizeof(*first)), nfirst = 0;
	size_t *tail = malloc((nb ? nb : 1) * sizeof(*tail)), ntail = 0;

	it->next = malloc((nb ? nb : 1) * sizeof(*it->next));
	if (!first || !tail || !it->next)
		goto oom;
	for (size_t b = 0; b < nb; b++) {
		const struct heapblock *hb = &x->hblocks[b];
		long sl = u64map_get(&tids, hb->tid);

		it->next[b] = SIZE_MAX;
		if (sl >= 0 && x->hblocks[tail[sl]].tlast <= hb->tfirst) {
			it->next[tail[sl]] = b;
		} else {
			first[nfirst++] = b;
			if (sl < 0) {
				sl = (long)ntail++;
				if (u64map_put(&tids, hb->tid, (uint32_t)sl) < 0)
					goto oom;
			}
		}
		tail[sl] = b;
	}
	u64map_release(&tids);
	free(tail);
	tail = NULL;
	if (!(it->runs = calloc(nfirst ? nfirst : 1, sizeof(*it->runs))))
		goto oom2;
	for (size_t k = 0; k < nfirst; k++) {
		struct run *r = &it->runs[it->nruns];

		if (!run_load(it, r, first[k])) {
			bool oom = r->buf.oom;

			free(r->buf.v);
			r->buf = (struct heapbuf){ 0 };
			if (oom)
				goto oom2;
			continue; /* cannot happen: the block had events at open */
		}
		it->nruns++;
	}
	free(first);
	for (size_t i = it->nruns / 2; i-- > 0;)
		sift_down(it, i);
	return it;
oom:
	u64map_release(&tids);
oom2:
	free(first);
	free(tail);
	sonde_heap_iter_free(it);
	return NULL;
}

bool sonde_heap_iter_next(struct sonde_heap_iter *it, struct sonde_heap_event *e)
{
	if (it->arr || !it->runs) {
		if (it->iarr >= it->narr)
			return false;
		*e = it->arr[it->iarr++];
		return true;
	}
	if (!it->nruns || it->failed)
		return false;
	struct run *r = &it->runs[0];

	*e = r->buf.v[r->pos++];
	if (r->pos == r->buf.n) {
		size_t nb = it->next[r->blk];

		if (nb == SIZE_MAX || !run_load(it, r, nb)) {
			if (r->buf.oom) { /* decoding again ran out of memory */
				it->failed = true;
				return true; /* this event is good; the next call ends */
			}
			free(r->buf.v);
			it->runs[0] = it->runs[--it->nruns];
		}
	}
	/* the same run usually stays first: check before sifting */
	if (it->nruns > 1)
		sift_down(it, 0);
	return true;
}

bool sonde_heap_iter_failed(const struct sonde_heap_iter *it)
{
	return it->failed;
}

size_t sonde_exp_kind_events(const struct sonde_exp *exp, int kind)
{
	return kind >= 1 && kind <= SONDE_KIND_MAX && exp_reader_kind(kind)->events ? exp_reader_kind(kind)->events(exp)
										    : 0;
}

bool sonde_exp_traced(const struct sonde_exp *exp, int kind)
{
	const struct datafile *df = traced_file((struct sonde_exp *)exp, kind);

	return df && (df->declared || exp->files[df->file].present);
}

const char *sonde_heap_func_name(unsigned func)
{
	static const char *const names[] = {
		[SONDE_HEAP_MALLOC] = "malloc",
		[SONDE_HEAP_CALLOC] = "calloc",
		[SONDE_HEAP_REALLOC] = "realloc",
		[SONDE_HEAP_REALLOCARRAY] = "reallocarray",
		[SONDE_HEAP_VALLOC] = "valloc",
		[SONDE_HEAP_PVALLOC] = "pvalloc",
		[SONDE_HEAP_MEMALIGN] = "memalign",
		[SONDE_HEAP_POSIX_MEMALIGN] = "posix_memalign",
		[SONDE_HEAP_ALIGNED_ALLOC] = "aligned_alloc",
		[SONDE_HEAP_FREE] = "free",
		[SONDE_HEAP_MMAP] = "mmap",
		[SONDE_HEAP_MUNMAP] = "munmap",
		[SONDE_HEAP_MREMAP] = "mremap",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), func);
}
