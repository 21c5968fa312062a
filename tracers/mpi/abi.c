/*
 * One MPI ABI's half of libsonde_mpi.so: compiled twice, against Open
 * MPI's mpi.h (-DSM_ABI=ompi) and against MPICH's (-DSM_ABI=mpich), each
 * time with every name of its own prefixed (P(x)) and only `P(abi)`
 * visible to the core (mpi.c).  It holds what reads MPI's types: the
 * classes' recording (which parameters are peers, tags, counts; statuses;
 * the communicators' world ranks and ids; the requests), and includes the
 * wrappers gen.awk wrote for this ABI from the function list and this
 * mpi.h ($(B)/gen/mpi_wrap_ABI.c).
 *
 * Nothing here refers to a symbol of the MPI library: the real functions
 * (PMPI_*, and in Open MPI the Fortran bindings) are dlsym'd, and Open
 * MPI's predefined handles (MPI_COMM_WORLD is &ompi_mpi_comm_world) are
 * found by dlsym where they are used (OMPI_PREDEFINED_GLOBAL below), so
 * the library loads in any process, MPI or not (t00 and the Makefile
 * check the objects' undefined symbols).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "sm.h"

#define SM_CAT_(a, b) a##_##b
#define SM_CAT(a, b) SM_CAT_(a, b)
#define P(x) SM_CAT(SM_ABI, x)

#ifdef OMPI_MAJOR_VERSION
#define SM_IS_OMPI 1
/* A handle of Open MPI's is a pointer. */
#define KEY(h) ((uint64_t)(uintptr_t)(h))
/* Open MPI's predefined handles are the addresses of its globals: found
 * by name, once per place of use, instead of linked. */
#undef OMPI_PREDEFINED_GLOBAL
#define OMPI_PREDEFINED_GLOBAL(type, global)                                 \
	({                                                                   \
		static void *g_;                                             \
		void *p_ = __atomic_load_n(&g_, __ATOMIC_RELAXED);           \
		if (!p_)                                                     \
			__atomic_store_n(&g_, p_ = dlsym(RTLD_DEFAULT, #global), \
					 __ATOMIC_RELAXED);                  \
		(type) p_;                                                   \
	})
#else
#define SM_IS_OMPI 0
/* MPICH's handles are ints. */
#define KEY(h) ((uint64_t)(uint32_t)(h))
#endif

/* ---- the library's own functions the classes use (dlsym'd) ---- */

#define SM_PMPI(X)                                                                          \
	X(Type_size_x, (MPI_Datatype, MPI_Count *))                                         \
	X(Get_elements_x, (const MPI_Status *, MPI_Datatype, MPI_Count *))                  \
	X(Test_cancelled, (const MPI_Status *, int *))                                      \
	X(Comm_group, (MPI_Comm, MPI_Group *))                                              \
	X(Comm_remote_group, (MPI_Comm, MPI_Group *))                                       \
	X(Comm_test_inter, (MPI_Comm, int *))                                               \
	X(Comm_rank, (MPI_Comm, int *))                                                     \
	X(Comm_size, (MPI_Comm, int *))                                                     \
	X(Comm_remote_size, (MPI_Comm, int *))                                              \
	X(Group_size, (MPI_Group, int *))                                                   \
	X(Group_free, (MPI_Group *))                                                        \
	X(Group_translate_ranks, (MPI_Group, int, const int[], MPI_Group, int[]))           \
	X(Get_library_version, (char *, int *))                                             \
	X(Status_f2c, (const MPI_Fint *, MPI_Status *))

#define SM_PMPI_DECL(name, params) static int(*P(p_##name)) params;
SM_PMPI(SM_PMPI_DECL)
#undef SM_PMPI_DECL
/* Handle conversions (MPICH's are macros; Open MPI's, functions) */
#define SM_F2C(X) X(Comm, MPI_Comm) X(Type, MPI_Datatype) X(Request, MPI_Request) X(Message, MPI_Message)
#define SM_F2C_DECL(name, type) static __attribute__((unused)) type (*P(p_##name##_f2c))(MPI_Fint);
SM_F2C(SM_F2C_DECL)
#undef SM_F2C_DECL
#define PM(name) P(p_##name)

/* ---- the classes' recording ---- */

static struct sm_comm P(world_c), P(self_c);

/* The world ranks of a group (MPI_Group_translate_ranks), malloc'd. */
static int *P(group_world)(MPI_Group g, int *n)
{
	MPI_Group wg;
	*n = 0;
	if (PM(Group_size)(g, n) != MPI_SUCCESS || *n <= 0)
		return NULL;
	int *in = malloc(2 * (size_t)*n * sizeof(int));
	if (!in)
		return NULL;
	for (int i = 0; i < *n; i++)
		in[i] = i;
	if (PM(Comm_group)(MPI_COMM_WORLD, &wg) != MPI_SUCCESS) {
		free(in);
		return NULL;
	}
	int ok = PM(Group_translate_ranks)(g, *n, in, wg, in + *n) == MPI_SUCCESS;
	PM(Group_free)(&wg);
	if (!ok) {
		free(in);
		return NULL;
	}
	memmove(in, in + *n, (size_t)*n * sizeof(int));
	return in;
}

static uint64_t P(mix)(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* Size, world ranks and id of a communicator, on its first use: the id
 * mixes its parent's id, its place among the parent's creations and its
 * members' world ranks, which each member computes alike (format.h). */
static void P(comm_fill)(struct sm_comm *c, MPI_Comm comm)
{
	MPI_Group g;
	int inter = 0;
	PM(Comm_test_inter)(comm, &inter);
	if (PM(Comm_group)(comm, &g) == MPI_SUCCESS) {
		c->world = P(group_world)(g, &c->size);
		PM(Group_free)(&g);
	}
	if (inter && PM(Comm_remote_group)(comm, &g) == MPI_SUCCESS) {
		c->rworld = P(group_world)(g, &c->rsize);
		PM(Group_free)(&g);
	}
	uint64_t h = P(mix)(c->parent_id, c->seq);
	/* both groups, smaller first lowest rank first, so that the two
	 * sides of an intercommunicator agree */
	int *a = c->world, *b = c->rworld, na = c->size, nb = c->rsize;
	if (b && nb && (!a || !na || b[0] < a[0])) {
		int *t = a; a = b; b = t;
		int tn = na; na = nb; nb = tn;
	}
	for (int i = 0; a && i < na; i++)
		h = P(mix)(h, (uint64_t)a[i]);
	for (int i = 0; b && i < nb; i++)
		h = P(mix)(h, (uint64_t)b[i] | 1ull << 40);
	if (h <= SONDE_MPI_COMM_SELF || h == SONDE_MPI_COMM_NONE)
		h += 2;
	c->id = h;
	__atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
}

/* The tracer's communicator of a handle, made on first sight. */
static struct sm_comm *P(cm)(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		return &P(world_c);
	if (comm == MPI_COMM_SELF)
		return &P(self_c);
	if (comm == MPI_COMM_NULL)
		return NULL;
	struct sm_comm *c = sm_comm_find(KEY(comm));
	if (!c) {
		/* made before tracing, or by a function not traced: its
		 * members' ranks alone name it */
		c = calloc(1, sizeof *c);
		if (!c)
			return NULL;
		c->key = KEY(comm);
		c->parent_id = SONDE_MPI_COMM_NONE;
		c = sm_comm_add(c);
	}
	if (!__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE))
		P(comm_fill)(c, comm);
	return c;
}
#define CM(c) (e_.rec ? P(cm)(c) : NULL)

/* A rank of c as a rank of MPI_COMM_WORLD (an intercommunicator's peers
 * are in its remote group). */
static int P(world)(const struct sm_comm *c, int r)
{
	if (r == MPI_ANY_SOURCE)
		return SONDE_MPI_ANY;
	if (r == MPI_PROC_NULL)
		return SONDE_MPI_PROC_NULL;
	if (!c || r < 0)
		return SONDE_MPI_NONE;
	if (c == &P(world_c))
		return r < c->size ? r : SONDE_MPI_NONE;
	if (c->rworld)
		return r < c->rsize ? c->rworld[r] : SONDE_MPI_NONE;
	return c->world && r < c->size ? c->world[r] : SONDE_MPI_NONE;
}

/* The sizes of the predefined types a message is most often made of,
 * asked once after MPI_Init (a predefined type is never freed, so its
 * handle cannot come to name another type): a send of one of them costs
 * no call into the library. */
#define SM_NTYPES 10
static uint64_t P(type_key)[SM_NTYPES], P(type_size)[SM_NTYPES];
static int P(ntypes);

static uint64_t P(tsize_asked)(MPI_Datatype t)
{
	MPI_Count n = 0;
	if (t == MPI_DATATYPE_NULL || PM(Type_size_x)(t, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return (uint64_t)n;
}

static void P(types_init)(void)
{
	MPI_Datatype v[SM_NTYPES] = { MPI_BYTE, MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_FLOAT,
				      MPI_LONG, MPI_UNSIGNED_CHAR, MPI_INT64_T, MPI_LONG_LONG, MPI_PACKED };
	int n = 0, er = errno; /* the program's, whatever the library does */
	for (int i = 0; i < SM_NTYPES; i++)
		if (KEY(v[i]) && v[i] != MPI_DATATYPE_NULL) { /* Open MPI's found by dlsym */
			P(type_key)[n] = KEY(v[i]);
			P(type_size)[n++] = P(tsize_asked)(v[i]);
		}
	__atomic_store_n(&P(ntypes), n, __ATOMIC_RELEASE);
	errno = er;
}

static uint64_t P(tsize)(MPI_Datatype t)
{
	int n = __atomic_load_n(&P(ntypes), __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (P(type_key)[i] == KEY(t))
			return P(type_size)[i];
	return P(tsize_asked)(t);
}

/* A status's byte count and its cancelled flag, read from the fields
 * where this ABI's library keeps them (what MPI_Get_elements_x(st,
 * MPI_BYTE, ...) and MPI_Test_cancelled return): two calls into the
 * library fewer per message received. */
#if SM_IS_OMPI
#define SM_ST_BYTES(st) ((uint64_t)(st)->_ucount)
#define SM_ST_CANCELLED(st) ((st)->_cancelled != 0)
#elif defined(MPICH)
#define SM_ST_BYTES(st) \
	((uint64_t)(unsigned)(st)->count_lo | (uint64_t)((unsigned)(st)->count_hi_and_cancelled >> 1) << 32)
#define SM_ST_CANCELLED(st) (((st)->count_hi_and_cancelled & 1) != 0)
#endif

/* Whether st is a cancelled request's; else its bytes into *bytes. */
static int P(status_read)(const MPI_Status *st, uint64_t *bytes)
{
#ifdef SM_ST_BYTES
	*bytes = SM_ST_BYTES(st);
	return SM_ST_CANCELLED(st);
#else
	MPI_Count n = 0;
	int cancelled = 0;
	PM(Test_cancelled)(st, &cancelled);
	if (cancelled)
		return 1;
	if (PM(Get_elements_x)(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0 || n == MPI_UNDEFINED)
		n = 0;
	*bytes = (uint64_t)n;
	return 0;
#endif
}

static void P(set_peer)(struct sm_ev *e, int peer, int tag, uint64_t comm, int *seen)
{
	if ((*seen)++ == 0) {
		e->peer = peer;
		e->tag = tag;
		e->comm = comm;
	} else {
		e->peer = SONDE_MPI_SEVERAL;
	}
}

/* A send started (a failed call starts none). */
static void sm_send(struct sm_ev *e, int r, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	if (!e->rec)
		return;
	struct sm_comm *c = P(cm)(comm);
	int peer = P(world)(c, dest);
	e->peer = peer;
	e->tag = tag;
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	if (r != MPI_SUCCESS || dest == MPI_PROC_NULL || count < 0)
		return;
	sm_message(e, SONDE_MPI_SEND, peer, tag, e->comm, (uint64_t)count * P(tsize)(dt), e->t0);
}

/* A receive completed, its status st: counted unless cancelled or from
 * MPI_PROC_NULL. */
static int P(received)(struct sm_ev *e, const MPI_Status *st, struct sm_comm *c, int func)
{
	uint64_t bytes = 0;
	if (st->MPI_SOURCE == MPI_PROC_NULL || P(status_read)(st, &bytes))
		return 0;
	int peer = P(world)(c, st->MPI_SOURCE);
	struct sm_ev m = *e;
	m.func = func;
	sm_message(&m, SONDE_MPI_RECV, peer, st->MPI_TAG, c ? c->id : SONDE_MPI_COMM_NONE, bytes, e->t0 + e->dur);
	return 1;
}

static void sm_recv(struct sm_ev *e, int r, const MPI_Status *st, struct sm_comm *c, int source, int tag)
{
	if (!e->rec)
		return;
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	e->peer = P(world)(c, source);
	e->tag = tag;
	if (r != MPI_SUCCESS)
		return;
	if (st->MPI_SOURCE != MPI_PROC_NULL) {
		e->peer = P(world)(c, st->MPI_SOURCE);
		e->tag = st->MPI_TAG;
	}
	P(received)(e, st, c, e->func);
}

static void sm_irecv(struct sm_ev *e, uint64_t req, struct sm_comm *c, int source, int tag, int sent)
{
	if (!e->rec)
		return;
	if (!sent) {
		e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
		e->peer = P(world)(c, source);
		e->tag = tag;
	}
	struct sm_req q = { .key = req, .kind = SM_RQ_RECV, .func = e->func, .comm = c };
	sm_req_put(&q);
}

static void sm_psend_init(struct sm_ev *e, uint64_t req, MPI_Count count, MPI_Datatype dt, int dest, int tag,
			  MPI_Comm comm)
{
	if (!e->rec)
		return;
	struct sm_comm *c = P(cm)(comm);
	e->peer = P(world)(c, dest);
	e->tag = tag;
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	struct sm_req q = { .key = req,
			    .kind = SM_RQ_PSEND,
			    .func = e->func,
			    .peer = dest == MPI_PROC_NULL ? SONDE_MPI_PROC_NULL : e->peer,
			    .tag = tag,
			    .comm = c,
			    .bytes = count < 0 ? 0 : (uint64_t)count * P(tsize)(dt) };
	sm_req_put(&q);
}

static void sm_precv_init(struct sm_ev *e, uint64_t req, struct sm_comm *c, int source, int tag)
{
	if (!e->rec)
		return;
	e->peer = P(world)(c, source);
	e->tag = tag;
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	struct sm_req q = { .key = req, .kind = SM_RQ_PRECV, .func = e->func, .comm = c };
	sm_req_put(&q);
}

/* A persistent send starts: its message (the MPI_Start's). */
static void sm_start(struct sm_ev *e, uint64_t req)
{
	struct sm_req q;
	if (!e->rec || !sm_req_get(req, &q, 0) || q.kind != SM_RQ_PSEND || q.peer == SONDE_MPI_PROC_NULL)
		return;
	e->peer = e->peer == SONDE_MPI_NONE ? q.peer : SONDE_MPI_SEVERAL;
	sm_message(e, SONDE_MPI_SEND, q.peer, q.tag, q.comm ? q.comm->id : SONDE_MPI_COMM_NONE, q.bytes, e->t0);
}

/* A request completed by a Wait or Test, its status st: a receive's
 * message. */
static void sm_complete(struct sm_ev *e, uint64_t req, const MPI_Status *st)
{
	struct sm_req q;
	if (!e->rec || req == KEY(MPI_REQUEST_NULL) || !sm_req_get(req, &q, 0))
		return;
	if (q.kind == SM_RQ_RECV)
		sm_req_forget(req);
	if (q.kind != SM_RQ_RECV && q.kind != SM_RQ_PRECV)
		return;
	if (P(received)(e, st, q.comm, e->func)) {
		int seen = e->peer == SONDE_MPI_NONE ? 0 : 1;
		P(set_peer)(e, P(world)(q.comm, st->MPI_SOURCE), st->MPI_TAG, q.comm ? q.comm->id : SONDE_MPI_COMM_NONE,
			    &seen);
	}
}

static void sm_probe(struct sm_ev *e, const MPI_Status *st, struct sm_comm *c)
{
	if (!e->rec)
		return;
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	e->peer = P(world)(c, st->MPI_SOURCE);
	e->tag = st->MPI_TAG;
}

static void sm_msg_put(uint64_t msg, struct sm_comm *c)
{
	if (msg == KEY(MPI_MESSAGE_NULL) || msg == KEY(MPI_MESSAGE_NO_PROC))
		return;
	struct sm_req q = { .key = msg, .kind = SM_RQ_MSG, .comm = c };
	sm_req_put(&q);
}

static struct sm_comm *sm_msg_take(uint64_t msg)
{
	struct sm_req q;
	if (sm_req_get(msg, &q, 1) && q.kind == SM_RQ_MSG)
		return q.comm;
	return NULL;
}

/* A communicator made by the call, from parent. */
static void sm_newcomm(struct sm_ev *e, struct sm_comm *parent, uint64_t key, int pending)
{
	if (!e->rec)
		return;
	MPI_Comm nc;
	memcpy(&nc, &key, sizeof nc); /* the handle back (little-endian) */
	if (nc == MPI_COMM_NULL)
		return;
	struct sm_comm *c = calloc(1, sizeof *c);
	if (!c)
		return;
	c->key = key;
	c->parent_id = parent ? parent->id : SONDE_MPI_COMM_NONE;
	c->seq = parent ? __atomic_fetch_add(&parent->nchild, 1, __ATOMIC_RELAXED) : 0;
	sm_comm_forget(key); /* a handle freed untraced and reused */
	c = sm_comm_add(c);
	/* an MPI_Comm_idup's communicator is usable once completed: its
	 * ranks are read at its first use */
	if (!pending)
		P(comm_fill)(c, nc);
	e->comm = c->id;
}

/* ---- collectives: their bytes on this rank ---- */

struct sm_cargs {
	int func, rooted, root, wide;
	MPI_Count count, sendcount, recvcount;
	const void *sendcounts, *recvcounts;
	MPI_Datatype datatype, sendtype, recvtype;
	const MPI_Datatype *sendtypes, *recvtypes;
	const void *sendbuf;
	MPI_Comm comm;
};

enum { CF_NONE, CF_BCAST, CF_REDUCE, CF_ALLREDUCE, CF_RSCAT, CF_RSCATB, CF_GATHER, CF_GATHERV, CF_SCATTER,
       CF_SCATTERV, CF_ALLGATHER, CF_ALLGATHERV, CF_ALLTOALL, CF_ALLTOALLV, CF_ALLTOALLW };

static int P(family)(int func)
{
	static const struct {
		const char *name;
		int fam;
	} fams[] = {
		{ "Bcast", CF_BCAST }, { "Reduce", CF_REDUCE }, { "Allreduce", CF_ALLREDUCE }, { "Scan", CF_ALLREDUCE },
		{ "Exscan", CF_ALLREDUCE }, { "Reduce_scatter", CF_RSCAT }, { "Reduce_scatter_block", CF_RSCATB },
		{ "Gather", CF_GATHER }, { "Gatherv", CF_GATHERV }, { "Scatter", CF_SCATTER },
		{ "Scatterv", CF_SCATTERV }, { "Allgather", CF_ALLGATHER }, { "Allgatherv", CF_ALLGATHERV },
		{ "Alltoall", CF_ALLTOALL }, { "Alltoallv", CF_ALLTOALLV }, { "Alltoallw", CF_ALLTOALLW },
	};
	static signed char cache[SONDE_MPI_NFUNCS];
	if (func <= 0 || func >= SONDE_MPI_NFUNCS)
		return CF_NONE;
	if (cache[func])
		return cache[func] - 1;
	const char *n = sonde_mpi_func((unsigned)func)->name + 4;
	size_t len = strlen(n);
	if (len > 2 && !strcmp(n + len - 2, "_c"))
		len -= 2;
	int fam = CF_NONE;
	for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
		if (strlen(fams[i].name) == len && !strncmp(fams[i].name, n, len))
			fam = fams[i].fam;
	cache[func] = (signed char)(fam + 1);
	return fam;
}

static uint64_t P(cnt)(const struct sm_cargs *a, const void *counts, int i)
{
	if (!counts)
		return 0;
	int64_t v = a->wide ? ((const MPI_Count *)counts)[i] : ((const int *)counts)[i];
	return v < 0 ? 0 : (uint64_t)v;
}

static uint64_t P(sum)(const struct sm_cargs *a, const void *counts, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += P(cnt)(a, counts, i);
	return s;
}

static uint64_t P(ucount)(MPI_Count c)
{
	return c < 0 ? 0 : (uint64_t)c;
}

static void sm_coll(struct sm_ev *e, const struct sm_cargs *a)
{
	if (!e->rec)
		return;
	struct sm_comm *c = P(cm)(a->comm);
	e->comm = c ? c->id : SONDE_MPI_COMM_NONE;
	if (a->rooted)
		e->peer = a->root == MPI_ROOT ? sm_my_rank : P(world)(c, a->root);
	int n = 0, me = 0, inter = 0;
	PM(Comm_test_inter)(a->comm, &inter);
	if (inter)
		PM(Comm_remote_size)(a->comm, &n);
	else
		PM(Comm_size)(a->comm, &n);
	PM(Comm_rank)(a->comm, &me);
	int root = a->rooted && (inter ? a->root == MPI_ROOT : a->root == me);
	int inplace = a->sendbuf == MPI_IN_PLACE;
	uint64_t s = 0, r = 0, dt = 0, st = 0, rt = 0;
	int fam = P(family)(a->func);
	if (fam == CF_BCAST || fam == CF_REDUCE || fam == CF_ALLREDUCE || fam == CF_RSCAT || fam == CF_RSCATB)
		dt = P(tsize)(a->datatype);
	if (a->sendtype != 0 && fam >= CF_GATHER && fam <= CF_ALLTOALLV)
		st = P(tsize)(a->sendtype);
	if (a->recvtype != 0 && fam >= CF_GATHER && fam <= CF_ALLTOALLV)
		rt = P(tsize)(a->recvtype);
	switch (fam) {
	case CF_BCAST:
		s = P(ucount)(a->count) * dt;
		break;
	case CF_REDUCE:
		s = P(ucount)(a->count) * dt;
		r = root ? s : 0;
		break;
	case CF_ALLREDUCE:
		s = r = P(ucount)(a->count) * dt;
		break;
	case CF_RSCATB:
		r = P(ucount)(a->recvcount) * dt;
		s = r * (uint64_t)n;
		break;
	case CF_RSCAT:
		s = P(sum)(a, a->recvcounts, n) * dt;
		r = P(cnt)(a, a->recvcounts, me) * dt;
		break;
	case CF_GATHER:
		r = root ? (uint64_t)n * P(ucount)(a->recvcount) * rt : 0;
		s = inplace ? P(ucount)(a->recvcount) * rt : P(ucount)(a->sendcount) * st;
		break;
	case CF_GATHERV:
		r = root ? P(sum)(a, a->recvcounts, n) * rt : 0;
		s = inplace ? P(cnt)(a, a->recvcounts, me) * rt : P(ucount)(a->sendcount) * st;
		break;
	case CF_SCATTER:
		s = root ? (uint64_t)n * P(ucount)(a->sendcount) * st : 0;
		r = P(ucount)(a->recvcount) * rt;
		break;
	case CF_SCATTERV:
		s = root ? P(sum)(a, a->sendcounts, n) * st : 0;
		r = P(ucount)(a->recvcount) * rt;
		break;
	case CF_ALLGATHER:
		r = (uint64_t)n * P(ucount)(a->recvcount) * rt;
		s = inplace ? P(ucount)(a->recvcount) * rt : P(ucount)(a->sendcount) * st;
		break;
	case CF_ALLGATHERV:
		r = P(sum)(a, a->recvcounts, n) * rt;
		s = inplace ? P(cnt)(a, a->recvcounts, me) * rt : P(ucount)(a->sendcount) * st;
		break;
	case CF_ALLTOALL:
		r = (uint64_t)n * P(ucount)(a->recvcount) * rt;
		s = inplace ? r : (uint64_t)n * P(ucount)(a->sendcount) * st;
		break;
	case CF_ALLTOALLV:
		r = P(sum)(a, a->recvcounts, n) * rt;
		s = inplace ? r : P(sum)(a, a->sendcounts, n) * st;
		break;
	case CF_ALLTOALLW:
		for (int i = 0; i < n; i++) {
			if (a->recvtypes)
				r += P(cnt)(a, a->recvcounts, i) * P(tsize)(a->recvtypes[i]);
			if (a->sendtypes && !inplace)
				s += P(cnt)(a, a->sendcounts, i) * P(tsize)(a->sendtypes[i]);
		}
		if (inplace)
			s = r;
		break;
	}
	e->coll = s + r;
}

/* ---- life ---- */

static void sm_init_done(struct sm_ev *e)
{
	int rank = -1, size = 0;
	PM(Comm_rank)(MPI_COMM_WORLD, &rank);
	PM(Comm_size)(MPI_COMM_WORLD, &size);
	P(types_init)();
	P(world_c).id = SONDE_MPI_COMM_WORLD;
	P(world_c).size = size;
	P(world_c).ready = 1;
	static int me;
	me = rank;
	P(self_c).id = SONDE_MPI_COMM_SELF;
	P(self_c).size = 1;
	P(self_c).world = &me;
	P(self_c).ready = 1;
	e->comm = SONDE_MPI_COMM_WORLD;
	sm_started(SM_IS_OMPI ? "openmpi" : "mpich", rank, size);
}

static void sm_finalize(struct sm_ev *e)
{
	(void)e;
	sm_stopping();
}

/* MPI_Abort does not return: its call is written before. */
static void sm_abort(struct sm_ev *e)
{
	sm_after(e, 0);
	sm_end(e);
	/* inside the call again; the wrapper's SM_END leaves it, were
	 * MPI_Abort to return */
	sm_depth++;
	e->done = SM_DONE_REARMED;
}

/* ---- the wrappers' frame ---- */

#define SM_BEGIN(id, fl) \
	struct sm_ev e_; \
	sm_begin(&e_, id, fl, SONDE_CALL_SITE_RA(), SONDE_CALL_SITE_CFA())
#define SM_AFTER(r) sm_after(&e_, (r) != MPI_SUCCESS)
#define SM_END() sm_end(&e_)
#define SM_COMM(c) ((void)0)

static void P(freep)(void *p)
{
	free(*(void **)p);
}

/* The status the class reads, the caller's or ours in place of
 * MPI_STATUS_IGNORE (which the caller sees no difference from). */
#define SM_STATUS(st)        \
	MPI_Status st_;      \
	MPI_Status *stp_ = (st) == MPI_STATUS_IGNORE ? &st_ : (MPI_Status *)(st)
#define SM_STATUSES(sts, n)                                                                              \
	MPI_Status stsb_[16];                                                                            \
	void *stsm_ __attribute__((cleanup(P(freep)))) = NULL;                                           \
	MPI_Status *sts_ = (sts);                                                                        \
	if (sts_ == MPI_STATUSES_IGNORE && e_.rec)                                                       \
		sts_ = (n) <= 16 ? stsb_ : (MPI_Status *)(stsm_ = malloc((size_t)(n) * sizeof(MPI_Status))); \
	if (!sts_) {                                                                                     \
		sts_ = MPI_STATUSES_IGNORE;                                                              \
		e_.rec = 0;                                                                              \
	}
/* The requests' handles before the call completes (and frees) them. */
#define SM_REQS(reqs, n)                                                                             \
	uint64_t rqb_[16];                                                                           \
	void *rqm_ __attribute__((cleanup(P(freep)))) = NULL;                                        \
	uint64_t *rq_ = rqb_;                                                                        \
	if (e_.rec && (n) > 16 && !(rq_ = rqm_ = malloc((size_t)(n) * sizeof(uint64_t))))           \
		e_.rec = 0;                                                                          \
	for (int i_ = 0; e_.rec && i_ < (n); i_++)                                                   \
		rq_[i_] = KEY((reqs)[i_]);
#define SM_REQS_END() ((void)0)

/* ---- Fortran (gfortran's bindings; Open MPI's call PMPI_ themselves) ---- */

#define F_INT(p) (*(const MPI_Fint *)(p))
#define F_Comm(p) PM(Comm_f2c)(F_INT(p))
#define F_Datatype(p) PM(Type_f2c)(F_INT(p))
#define F_Request(p) PM(Request_f2c)(F_INT(p))
#define F_Message(p) PM(Message_f2c)(F_INT(p))
static __attribute__((unused)) void *P(f_status_ignore), *P(f_statuses_ignore), *P(f_in_place);
#define F_FSTATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint) + 2)
#define F_BUF(p) ((p) == P(f_in_place) && (p) ? MPI_IN_PLACE : (const void *)(p))
#define F_STATUS(f)                        \
	MPI_Fint fstb_[F_FSTATUS_INTS];    \
	void *fst_ = (f) == P(f_status_ignore) ? (void *)fstb_ : (f)
#define F_STATUS_C()          \
	MPI_Status st_;       \
	memset(&st_, 0, sizeof st_); \
	if (e_.rec)           \
		PM(Status_f2c)(fst_, &st_); \
	MPI_Status *stp_ = &st_
#define F_STATUSES(f, n)                                                                                   \
	MPI_Fint fstsb_[16 * F_FSTATUS_INTS];                                                              \
	void *fstsm_ __attribute__((cleanup(P(freep)))) = NULL;                                            \
	void *fsts_ = (f);                                                                                 \
	if (fsts_ == P(f_statuses_ignore))                                                                 \
		fsts_ = (n) <= 16 ? (void *)fstsb_ : (fstsm_ = malloc((size_t)(n) * F_FSTATUS_INTS * sizeof(MPI_Fint))); \
	if (!fsts_) {                                                                                      \
		fsts_ = (f);                                                                               \
		e_.rec = 0;                                                                                \
	}
#define F_STATUSES_C(n)                                                                                    \
	MPI_Status stsb_[16];                                                                              \
	void *stsm_ __attribute__((cleanup(P(freep)))) = NULL;                                             \
	MPI_Status *sts_ = stsb_;                                                                          \
	if (e_.rec && (n) > 16 && !(sts_ = stsm_ = malloc((size_t)(n) * sizeof(MPI_Status))))             \
		e_.rec = 0;                                                                                \
	for (int i_ = 0; e_.rec && i_ < (n); i_++)                                                         \
		PM(Status_f2c)((const MPI_Fint *)fsts_ + (size_t)i_ * (sizeof(MPI_Status) / sizeof(MPI_Fint)), &sts_[i_]);
/* Fortran's request arrays as C handles, and its 1-based indices. */
static __thread MPI_Request *P(freqs);
static __thread int P(nfreqs);
static __attribute__((unused)) MPI_Request *P(f_reqs)(const void *f, int n)
{
	if (n > P(nfreqs)) {
		MPI_Request *p = realloc(P(freqs), (size_t)n * sizeof *p);
		if (!p)
			return NULL;
		P(freqs) = p;
		P(nfreqs) = n;
	}
	for (int i = 0; i < n; i++)
		P(freqs)[i] = PM(Request_f2c)(((const MPI_Fint *)f)[i]);
	return P(freqs);
}
#define F_REQS(f, n) P(f_reqs)(f, n)
static __thread int *P(findx);
static __thread int P(nfindx);
static __attribute__((unused)) int *P(f_indices)(const void *f, int n)
{
	if (n == MPI_UNDEFINED || n <= 0)
		return NULL;
	if (n > P(nfindx)) {
		int *p = realloc(P(findx), (size_t)n * sizeof *p);
		if (!p)
			return NULL;
		P(findx) = p;
		P(nfindx) = n;
	}
	for (int i = 0; i < n; i++)
		P(findx)[i] = ((const MPI_Fint *)f)[i] - 1;
	return P(findx);
}
#define F_INDICES(f, n) P(f_indices)(f, n)

/* ---- the generated wrappers ---- */

static void **P(targets);
#define SM_SLOT(id, name, pname, w, r)                                          \
	do {                                                                    \
		void *p_ = dlsym(RTLD_NEXT, pname);                             \
		if (p_) {                                                       \
			__atomic_store_n(&(r), (__typeof__(r))p_, __ATOMIC_RELAXED); \
			P(targets)[id] = (void *)(w);                           \
		}                                                               \
	} while (0)
#define SM_FSLOT(id, fname, w, r)                                               \
	do {                                                                    \
		void *p_ = dlsym(RTLD_NEXT, fname);                             \
		if (p_) {                                                       \
			__atomic_store_n(&(r), (__typeof__(r))p_, __ATOMIC_RELAXED); \
			P(targets)[SONDE_MPI_NFUNCS + (id)] = (void *)(w);      \
		}                                                               \
	} while (0)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#include SM_GEN
#pragma GCC diagnostic pop

/* ---- the unit as the core sees it ---- */

static int P(check)(char *lib, int size)
{
	int (*version)(char *, int *) = (int (*)(char *, int *))dlsym(RTLD_NEXT, "PMPI_Get_library_version");
	char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
	int len = 0;
	if (!version || version(v, &len) != MPI_SUCCESS)
		return 0;
	v[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = 0;
	size_t n = strcspn(v, "\n");
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == ','))
		n--;
	snprintf(lib, (size_t)size, "%.*s", (int)n, v);
	for (char *p = lib; *p; p++)
		if (*p == '\t')
			*p = ' ';
	int major = 0;
#if SM_IS_OMPI
	/* Open MPI 4's ABI (libmpi.so.40): the one these wrappers are for */
	if (sscanf(v, "Open MPI v%d.", &major) != 1)
		return 0;
	return major == 4;
#else
	/* MPICH 3.x and 4.x keep the ABI (libmpich.so.12) */
	if (sscanf(v, "MPICH Version: %d.", &major) != 1 && sscanf(v, "MPICH Version:\t%d.", &major) != 1)
		return 0;
	return major == 3 || major == 4;
#endif
}

static void P(fill)(void);

static void P(fill_all)(void **targets)
{
#define SM_PMPI_RESOLVE(name, params) P(p_##name) = (__typeof__(P(p_##name)))dlsym(RTLD_NEXT, "PMPI_" #name);
	SM_PMPI(SM_PMPI_RESOLVE)
#undef SM_PMPI_RESOLVE
#define SM_F2C_RESOLVE(name, type) \
	P(p_##name##_f2c) = (__typeof__(P(p_##name##_f2c)))dlsym(RTLD_NEXT, "PMPI_" #name "_f2c");
	SM_F2C(SM_F2C_RESOLVE)
#undef SM_F2C_RESOLVE
	if (!PM(Comm_remote_size))
		PM(Comm_remote_size) = PM(Comm_size);
	P(targets) = targets;
#if SM_IS_OMPI
	/* gfortran's MPI_STATUS_IGNORE etc. in Open MPI: common blocks */
	P(f_status_ignore) = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
	P(f_statuses_ignore) = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
	P(f_in_place) = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
#endif
	/* the classes need these; without one, forward everything */
	if (!PM(Type_size_x) || !PM(Get_elements_x) || !PM(Test_cancelled) || !PM(Comm_group) ||
	    !PM(Group_translate_ranks) || !PM(Comm_rank) || !PM(Comm_size) || !PM(Group_size) || !PM(Group_free) ||
	    !PM(Comm_test_inter))
		return;
	P(fill)();
}

static void P(world_size)(int *rank, int *size)
{
	PM(Comm_rank)(MPI_COMM_WORLD, rank);
	PM(Comm_size)(MPI_COMM_WORLD, size);
}

const struct sm_abi P(abi) = {
	.name = SM_IS_OMPI ? "openmpi" : "mpich",
	.check = P(check),
	.fill = P(fill_all),
	.world = P(world_size),
};
