/*
 * Exact tests of the metrics engine (lib/model/metrics.c) on stacks whose metrics
 * are known: the reference's worked example, direct and mutual recursion,
 * a function in two non-adjacent places, load objects and the call tree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/metrics.h"

static int passed, failed;

#define CHECK(cond, ...)                                   \
	do {                                               \
		if (cond) {                                \
			passed++;                          \
		} else {                                   \
			failed++;                          \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);               \
			printf("\n");                      \
		}                                          \
	} while (0)

static const struct sonde_metric_def defs[] = {
	{ "units", "Units", "Units", SONDE_UNIT_COUNT },
	{ "events", "Events", "Events", SONDE_UNIT_COUNT },
};

static struct sonde_model *m;
static const char *names[16];
static int nnames;

static uint32_t fn(const char *name, const char *obj)
{
	uint32_t o = sonde_model_object(m, obj);
	uint32_t f = sonde_model_func(m, o, (uint64_t)(name[0]) * 16, name, name, name, false);
	names[f] = name;
	if ((int)f + 1 > nnames)
		nnames = (int)f + 1;
	return f;
}

/* add("C A main", 2): a stack written leaf first. */
static void add(const char *frames, int64_t units)
{
	uint32_t st[64];
	int d = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", frames);
	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
		int i;
		for (i = 0; i < nnames && strcmp(names[i], t); i++)
			;
		CHECK(i < nnames, "unknown function %s", t);
		st[d++] = (uint32_t)i;
	}
	int64_t v[2] = { units, 1 };
	CHECK(sonde_model_add(m, st, d, v) == 0, "add");
}

static uint32_t id(const char *name)
{
	for (int i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return (uint32_t)i;
	return UINT32_MAX;
}

static int64_t excl(const char *f) { return sonde_model_excl(m, id(f))[0]; }
static int64_t incl(const char *f) { return sonde_model_incl(m, id(f))[0]; }

static int64_t edge(int callers, const char *f, const char *other)
{
	size_t n;
	const struct sonde_edge *e = callers ? sonde_model_callers(m, id(f), &n) : sonde_model_callees(m, id(f), &n);
	for (size_t i = 0; i < n; i++)
		if (e[i].func == id(other))
			return e[i].v[0];
	return 0;
}

static size_t nedges(int callers, const char *f)
{
	size_t n;
	if (callers)
		sonde_model_callers(m, id(f), &n);
	else
		sonde_model_callees(m, id(f), &n);
	return n;
}

/* incl(f) = excl(f) + sum of callees(f), for every function. */
static void check_identities(const char *what)
{
	for (int i = 0; i < nnames; i++) {
		size_t n;
		const struct sonde_edge *e = sonde_model_callees(m, (uint32_t)i, &n);
		int64_t s = sonde_model_excl(m, (uint32_t)i)[0];
		for (size_t k = 0; k < n; k++)
			s += e[k].v[0];
		CHECK(s == sonde_model_incl(m, (uint32_t)i)[0], "%s: incl(%s) %" PRId64 " != excl + callees %" PRId64,
		      what, names[i], sonde_model_incl(m, (uint32_t)i)[0], s);
	}
}

static void fresh(void)
{
	sonde_model_free(m);
	m = sonde_model_new(defs, 2);
	nnames = 0;
}

static void worked_example(void)
{
	fresh();
	fn("main", "a.out"), fn("A", "a.out"), fn("B", "a.out");
	fn("C", "libc.so"), fn("E", "libc.so"), fn("F", "libc.so"), fn("G", "libc.so");
	/* main() { A(); 2 units; B(); }  A() { C(10); }
	 * B() { C(7.5); 5 units; C(7.5); }
	 * C(arg): 20% in C, 40% in E, 40% in F, half of F's in G. */
	add("main", 2);
	add("C A main", 2);
	add("E C A main", 4);
	add("F C A main", 2);
	add("G F C A main", 2);
	add("B main", 5);
	add("C B main", 3);
	add("E C B main", 6);
	add("F C B main", 3);
	add("G F C B main", 3);
	CHECK(sonde_model_finish(m) == 0, "finish");
	CHECK(sonde_model_total(m)[0] == 32, "<Total> 32, got %" PRId64, sonde_model_total(m)[0]);
	CHECK(sonde_model_total(m)[1] == 10, "<Total> events 10");
	CHECK(incl("main") == 32 && excl("main") == 2, "main incl 32 excl 2");
	CHECK(edge(0, "main", "A") == 10 && edge(0, "main", "B") == 20, "main attributes A 10, B 20");
	CHECK(excl("A") == 0 && incl("A") == 10, "A excl 0 incl 10");
	CHECK(incl("C") == 25 && excl("C") == 5, "C incl 25 excl 5, got %" PRId64 " %" PRId64, incl("C"), excl("C"));
	CHECK(edge(1, "C", "A") == 10 && edge(1, "C", "B") == 15, "C callers A 10, B 15");
	CHECK(nedges(1, "C") == 2, "C has two callers");
	CHECK(edge(0, "C", "E") == 10 && edge(0, "C", "F") == 10, "C callees E 10, F 10");
	CHECK(excl("E") == 10 && incl("E") == 10, "E excl = incl = 10");
	CHECK(incl("F") == 10 && excl("F") == 5 && edge(0, "F", "G") == 5, "F incl 10 excl 5 calls G 5");
	CHECK(edge(1, "A", "main") == 10 && edge(1, "B", "main") == 20, "callers of A and B");
	CHECK(nedges(1, "main") == 0, "main has no callers");
	/* Second metric: events counted the same way. */
	CHECK(sonde_model_incl(m, id("C"))[1] == 8, "C incl events 8");
	check_identities("worked example");
	/* Load objects: exclusive sums, inclusive once per stack. */
	uint32_t ao = 0, lo = 1;
	CHECK(sonde_model_object_excl(m, ao)[0] == 7 && sonde_model_object_excl(m, lo)[0] == 25, "object excl 7 / 25");
	CHECK(sonde_model_object_incl(m, ao)[0] == 32 && sonde_model_object_incl(m, lo)[0] == 25, "object incl 32 / 25");
	/* Call tree: main -> A -> C (10) and main -> B -> C (15). */
	size_t nn;
	const struct sonde_tnode *t = sonde_model_tree(m, &nn);
	uint32_t root = sonde_model_tree_roots(m);
	CHECK(root != UINT32_MAX && t[root].func == id("main") && t[root].next_sibling == UINT32_MAX, "one root: main");
	CHECK(t[root].incl[0] == 32 && t[root].excl[0] == 2, "tree main 32/2");
	int found = 0;
	for (uint32_t c = t[root].first_child; c != UINT32_MAX; c = t[c].next_sibling)
		for (uint32_t g = t[c].first_child; g != UINT32_MAX; g = t[g].next_sibling)
			if (t[g].func == id("C"))
				found += (t[c].func == id("A") && t[g].incl[0] == 10) ||
					 (t[c].func == id("B") && t[g].incl[0] == 15 && t[g].excl[0] == 3);
	CHECK(found == 2, "tree has A/C 10 and B/C 15 (excl 3)");
}

static void recursion(void)
{
	/* Direct recursion, all work in the deepest call. */
	fresh();
	fn("main", "x"), fn("R", "x");
	add("R R R R main", 10);
	CHECK(sonde_model_finish(m) == 0, "finish");
	CHECK(incl("R") == 10 && excl("R") == 10, "R incl = excl = 10 (counted once)");
	CHECK(edge(1, "R", "R") == 10 && edge(1, "R", "main") == 0, "callers of R: itself 10, not main");
	CHECK(edge(0, "main", "R") == 10, "main still attributes 10 to R as callee");
	CHECK(nedges(0, "R") == 0, "the lowest R calls nothing");
	check_identities("direct recursion");

	/* Direct recursion with work at two levels. */
	fresh();
	fn("main", "x"), fn("R", "x"), fn("W", "x");
	add("W R R main", 6);
	add("R R main", 4);
	CHECK(sonde_model_finish(m) == 0, "finish");
	CHECK(incl("R") == 10 && excl("R") == 4, "R incl 10 excl 4");
	CHECK(edge(1, "R", "R") == 10, "R's inclusive is attributed to itself");
	CHECK(edge(0, "R", "W") == 6 && edge(0, "main", "R") == 10, "R calls W 6; main calls R 10");
	check_identities("recursion with work");

	/* Mutual recursion A -> B -> A. */
	fresh();
	fn("main", "x"), fn("A", "x"), fn("B", "x");
	add("B A B A main", 6);
	add("A B A main", 2);
	CHECK(sonde_model_finish(m) == 0, "finish");
	CHECK(incl("A") == 8 && incl("B") == 8, "A and B incl 8 each, got %" PRId64 " %" PRId64, incl("A"), incl("B"));
	CHECK(excl("B") == 6 && excl("A") == 2, "excl B 6, A 2");
	CHECK(edge(1, "A", "B") == 8 && edge(1, "A", "main") == 0, "callers of A: B 8");
	CHECK(edge(1, "B", "A") == 8, "callers of B: A 8");
	CHECK(edge(0, "A", "B") == 6 && edge(0, "main", "A") == 8, "A calls B 6; main calls A 8");
	check_identities("mutual recursion");

	/* One function in two non-adjacent places. */
	fresh();
	fn("main", "x"), fn("X", "x"), fn("Y", "x"), fn("Z", "x");
	add("Z X Y X main", 4);
	CHECK(sonde_model_finish(m) == 0, "finish");
	CHECK(incl("X") == 4 && incl("Y") == 4 && incl("Z") == 4 && incl("main") == 4, "each counted once");
	CHECK(edge(1, "X", "Y") == 4 && edge(1, "X", "main") == 0, "callers of X: Y (lowest invocation)");
	CHECK(edge(0, "X", "Z") == 4 && edge(0, "X", "Y") == 0, "callees of X: Z");
	CHECK(edge(1, "Y", "X") == 4 && edge(0, "Y", "X") == 4, "Y called by X, calls X");
	check_identities("non-adjacent");
	size_t nn;
	sonde_model_tree(m, &nn);
	CHECK(nn == 5, "tree keeps the path: 5 nodes, got %zu", nn);
}

int main(void)
{
	worked_example();
	recursion();
	sonde_model_free(m);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
