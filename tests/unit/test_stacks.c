/*
 * Unit test of the collector's stack interning (collector/stacks.c), built
 * with small tables (FIRST_BITS, NTABLES) so that growing to a new table
 * and running out of tables both happen, against a fake data file that
 * keeps every frame packet.
 *
 *  1. Every node of every stack is written, a node's parent before it, and
 *     exactly once while the tables have room, across table growth.
 *  2. Interning the same stacks again writes nothing.
 *  3. With every table full, new nodes are written every time (never
 *     lost) and known ones still not.
 *  4. Four threads interning the same stacks write every node and no
 *     other (its parent too, in any order across threads); each exactly
 *     once when no table change is ahead, and a few twice when threads
 *     race the change to a new table (readers keep one copy).
 *  5. A failed write (file full) leaves the node unclaimed: the next
 *     occurrence writes it.
 *  6. Frames of other kinds (stacks_intern_tagged): their packets carry
 *     kind, flags and aux, which make other nodes than a native frame's
 *     at the same pc; a native frame's node is the same either way.
 */
#define _GNU_SOURCE
#define FIRST_BITS 10
#define NTABLES 3
#include "../../collector/stacks.c"

#include "check.h"

#include <pthread.h>
#include <stdlib.h>

/* The fake dfile: frame packets appended to one big array under a lock
 * (the real one is per-thread blocks; the order checks below need one
 * global order, which a lock gives). */
static struct sonde_frame_packet *g_pk;
static size_t g_npk, g_cap;
static int g_fail_next;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread struct sonde_frame_packet t_pending;

void *dfile_reserve(struct dfile *df, size_t size)
{
	(void)df;
	if (size != sizeof(struct sonde_frame_packet) || g_fail_next) {
		g_fail_next = 0;
		return NULL;
	}
	return &t_pending;
}

void dfile_commit(struct dfile *df, size_t size)
{
	(void)df;
	(void)size;
	pthread_mutex_lock(&g_mu);
	if (g_npk == g_cap) {
		g_cap = g_cap ? g_cap * 2 : 1 << 16;
		g_pk = realloc(g_pk, g_cap * sizeof *g_pk);
	}
	g_pk[g_npk++] = t_pending;
	pthread_mutex_unlock(&g_mu);
}

/* Stack s of depth 4: three shared callers, then a leaf of its own, so
 * stack s adds one node (more for the first few). */
#define DEPTH 4
static void stack_of(uint64_t s, uint64_t pcs[DEPTH])
{
	pcs[0] = 0x400000 + s * 16;	/* leaf: one per stack */
	pcs[1] = 0x500000 + (s % 7) * 16;
	pcs[2] = 0x600000 + (s % 3) * 16;
	pcs[3] = 0x700000;		/* main */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Checks that ids[] of stacks [0, n) were all written, and every written
 * node's parent too: earlier in the file when `ordered` (one thread), or
 * anywhere (several threads: a thread that finds a node claimed writes its
 * children while the claimer may not have committed it yet; the reader
 * resolves nodes after reading the whole file, so that is fine).  Returns
 * how many ids were written more than once. */
static size_t verify(int ordered, const uint64_t *leaf, size_t n, int *all_found)
{
	size_t m = g_npk;
	uint64_t *ids = malloc(m * sizeof *ids);
	for (size_t i = 0; i < m; i++)
		ids[i] = g_pk[i].node_id;
	qsort(ids, m, sizeof *ids, cmp_u64);
	size_t dup = 0;
	for (size_t i = 1; i < m; i++)
		dup += ids[i] == ids[i - 1];
	/* Parents first: every non-root parent appears at an earlier index. */
	int order_ok = 1;
	uint64_t *seen = calloc(m, sizeof *seen);
	size_t nseen = 0;
	for (size_t i = 0; i < m && order_ok; i++) {
		uint64_t par = g_pk[i].parent_id;
		if (par >= SONDE_FRAME_ROOT_LIMIT) {
			int found;
			if (ordered) {
				found = 0;
				for (size_t k = nseen; k-- > 0 && !found;)
					found = seen[k] == par;
			} else {
				found = bsearch(&par, ids, m, sizeof *ids, cmp_u64) != NULL;
			}
			order_ok = found;
		}
		seen[nseen++] = g_pk[i].node_id;
	}
	CHECK(order_ok);
	*all_found = 1;
	for (size_t s = 0; s < n; s++)
		if (!bsearch(&leaf[s], ids, m, sizeof *ids, cmp_u64))
			*all_found = 0;
	free(seen);
	free(ids);
	return dup;
}

struct job {
	uint64_t from, to;
	uint64_t *leaf;
};

static void *intern_range(void *v)
{
	struct job *j = v;
	uint64_t pcs[DEPTH];
	for (uint64_t s = j->from; s < j->to; s++) {
		stack_of(s, pcs);
		j->leaf[s] = stacks_intern(pcs, DEPTH, 0);
	}
	return NULL;
}

int main(void)
{
	/* Capacity: 3/4 of 1024 and of 2048 slots, 7/8 of 4096 (the last): 5888 nodes. */
	group = "grow";
	CHECK(stacks_init(NULL, 1) == 0);
	CHECK_I(atomic_load(&g_ntables), 1);
	enum { N1 = 2000 };
	static uint64_t leaf[20000];
	struct job j = { 0, N1, leaf };
	intern_range(&j);
	CHECK_I(atomic_load(&g_ntables), 2);
	int all;
	CHECK_U(verify(1, leaf, N1, &all), 0);
	CHECK(all);
	/* 2000 leaves, 21 (s % 7, s % 3) callers, 3 callers of those, main */
	CHECK_U(g_npk, N1 + 21 + 3 + 1);
	CHECK_U(stacks_count(), g_npk);

	group = "again";
	size_t before = g_npk;
	intern_range(&j);
	CHECK_U(g_npk, before);

	group = "full";
	struct job j2 = { N1, 9000, leaf };
	intern_range(&j2);
	CHECK_I(atomic_load(&g_ntables), 3);
	size_t mid = g_npk;
	CHECK_U(verify(1, leaf, 9000, &all), 0);
	CHECK(all);
	/* Tables full: unknown nodes are written again each time... */
	struct job j3 = { 8000, 9000, leaf };
	intern_range(&j3);
	CHECK(g_npk > mid);
	CHECK(verify(1, leaf, 9000, &all) > 0);
	CHECK(all);
	/* ...and the earliest stacks, which are in the tables, are not. */
	before = g_npk;
	intern_range(&j);
	CHECK_U(g_npk, before);

	/* Fresh tables for the threaded and failure checks. */
	stacks_reset();
	g_npk = 0;
	CHECK(stacks_init(NULL, 1) == 0);

	group = "threads";
	pthread_t th[4];
	struct job jt[4];
	for (int i = 0; i < 4; i++) {
		jt[i] = (struct job){ 0, 4000, leaf };
		pthread_create(&th[i], NULL, intern_range, &jt[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	size_t dup = verify(0, leaf, 4000, &all);
	CHECK(all);
	/* Every node, and no other, is written; duplicates come only from
	 * threads racing a table change, as many as the scheduler makes
	 * (thousands with these tiny tables when the CPUs are oversubscribed
	 * and the thread mapping a table is preempted). */
	CHECK_U(g_npk - dup, 4000 + 21 + 3 + 1);
	printf("# %zu nodes written twice while tables grew\n", dup);

	/* No table change ahead (the last table is mapped and has room):
	 * claiming by compare-and-swap lets exactly one thread write each
	 * new node. */
	group = "threads, no growth";
	CHECK_I(atomic_load(&g_ntables), 3);
	before = g_npk;
	for (int i = 0; i < 4; i++) {
		jt[i] = (struct job){ 4000, 4400, leaf };
		pthread_create(&th[i], NULL, intern_range, &jt[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_U(verify(0, leaf, 4400, &all), dup);
	CHECK(all);
	CHECK_U(g_npk - before, 400);

	group = "failed write";
	uint64_t pcs[DEPTH];
	stack_of(4401, pcs);
	before = g_npk;
	g_fail_next = 1;
	stacks_intern(pcs, DEPTH, 0);
	CHECK_U(g_npk, before);
	stacks_intern(pcs, DEPTH, 0);
	CHECK_U(g_npk, before + 1);
	stacks_intern(pcs, DEPTH, 0);
	CHECK_U(g_npk, before + 1);

	/* Frames of other kinds (a stack source's): a native frame's node
	 * is the same with a zero tag; a kernel frame, a Java frame and
	 * another bytecode index of it are other nodes, even at the same pc;
	 * each frame packet says its kind, flags and aux. */
	group = "kinds";
	uint64_t kp[3] = { 0xffffffff81001234ull, 42, 0x700000 };
	uint32_t kt[3] = { SONDE_FRAME_TAG(SONDE_FRAME_KERNEL, SONDE_FRAMEF_EXACT, 0),
			   SONDE_FRAME_TAG(SONDE_FRAME_JAVA_INTERP, 0, 7), 0 };
	uint32_t zero[DEPTH] = { 0 };
	stack_of(4402, pcs);
	CHECK_U(stacks_intern_tagged(pcs, zero, DEPTH, 0), stacks_intern(pcs, DEPTH, 0));
	before = g_npk;
	uint64_t k1 = stacks_intern_tagged(kp, kt, 3, 0);
	CHECK_U(g_npk, before + 2); /* main is known: the Java and kernel frames */
	CHECK(g_npk >= 2 && g_pk[g_npk - 1].node_id == k1 && g_pk[g_npk - 1].kind == SONDE_FRAME_KERNEL &&
	      g_pk[g_npk - 1].fflags == SONDE_FRAMEF_EXACT && g_pk[g_npk - 1].aux == 0 &&
	      g_pk[g_npk - 1].pc == kp[0]);
	CHECK(g_npk >= 2 && g_pk[g_npk - 2].kind == SONDE_FRAME_JAVA_INTERP && g_pk[g_npk - 2].aux == 7 &&
	      g_pk[g_npk - 2].fflags == 0 && g_pk[g_npk - 2].pc == 42 && g_pk[g_npk - 1].parent_id == g_pk[g_npk - 2].node_id);
	CHECK_U(stacks_intern_tagged(kp, kt, 3, 0), k1);
	CHECK(stacks_intern(kp, 3, 0) != k1); /* the same pcs, native */
	kt[1] = SONDE_FRAME_TAG(SONDE_FRAME_JAVA_INTERP, 0, 8);
	CHECK(stacks_intern_tagged(kp, kt, 3, 0) != k1); /* another bytecode index */
	kt[1] = SONDE_FRAME_TAG(SONDE_FRAME_JAVA_COMPILED, 0, 7);
	CHECK(stacks_intern_tagged(kp, kt, 3, 0) != k1); /* compiled, not interpreted */
	kt[1] = SONDE_FRAME_TAG(SONDE_FRAME_JAVA_INTERP, 0, 7);
	kt[0] = SONDE_FRAME_TAG(SONDE_FRAME_KERNEL, 0, 0);
	CHECK(stacks_intern_tagged(kp, kt, 3, 0) != k1); /* not the exact pc */
	kt[0] = SONDE_FRAME_TAG(200, 0, 0);
	before = g_npk;
	uint64_t k2 = stacks_intern_tagged(kp, kt, 3, 0);
	CHECK(k2 != k1 && g_npk == before + 1 && g_pk[g_npk - 1].kind == 200); /* a kind readers do not know */

	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
