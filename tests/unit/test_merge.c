/*
 * test_merge: sonde merge's merge (lib/reader/expmerge.h) against the
 * truth of a synthetic MPI job (tests/tools/mergegen.h: 7 ranks whose
 * objects sit at different addresses, 12 stacks missing on some ranks,
 * CPU, MPI work and off-CPU samples): per stack and state the merged
 * samples' weight, System and Wait CPU, and the merged file's count of
 * ranks, samples, min, max and sum of squares, exactly; any order and
 * any partition of the ranks (packed, unpacked, combined in any order)
 * writes the same bytes; bad input says what and where.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "reader/experiment.h"
#include "reader/expmerge.h"
#include "../tools/mergegen.h"

#define NR 7
#define NS 500
#define NST 12

static char tmpdir[] = "/tmp/sonde-test-merge-XXXXXX";
static char job[4200];
static struct mg_cell truth[NST * MG_NKEYS];
static char *sub[NR];

static char *path(const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", tmpdir, name) < 0)
		abort();
	return p;
}

/* The merge of the ranks order[0..n) as partitions: parts[k] ranks each,
 * merged apart, packed and unpacked, then combined in the order comb. */
static int merge_parts(const int *order, const int *parts, int nparts, const int *comb, const char *out)
{
	struct sonde_merge *pm[NR] = { 0 }, *all = sonde_merge_new();
	char err[1024];
	int at = 0, rc = 0;

	for (int k = 0; k < nparts; k++) {
		pm[k] = sonde_merge_new();
		for (int i = 0; i < parts[k]; i++, at++)
			if (sonde_merge_add(pm[k], sub[order[at]], "x", err, sizeof(err)) != 0)
				rc = -1;
		uint8_t *buf;
		size_t len;

		if (sonde_merge_pack(pm[k], &buf, &len) < 0)
			rc = -1;
		sonde_merge_free(pm[k]);
		pm[k] = sonde_merge_unpack(buf, len, err, sizeof(err));
		free(buf);
		if (!pm[k])
			rc = -1;
	}
	for (int k = 0; k < nparts && !rc; k++)
		if (sonde_merge_combine(all, pm[comb[k]]) < 0)
			rc = -1;
	if (!rc && sonde_merge_output(all, job, out, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		rc = -1;
	}
	for (int k = 0; k < nparts; k++)
		sonde_merge_free(pm[k]);
	sonde_merge_free(all);
	return rc;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char p[4400];
	FILE *f;
	char *buf = NULL;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "r")))
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	if (fread(buf, 1, *len, f) != *len)
		*len = 0;
	buf[*len] = 0;
	fclose(f);
	return buf;
}

static bool same_files(const char *a, const char *b)
{
	static const char *const names[] = { "log.xml", "map.xml", "profile", "stacks", "overview", "merged" };
	bool same = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t la = 0, lb = 0;
		char *x = slurp(a, names[i], &la), *y = slurp(b, names[i], &lb);

		if (!x || !y || la != lb || memcmp(x, y, la)) {
			printf("# %s differs between %s and %s\n", names[i], a, b);
			same = false;
		}
		free(x);
		free(y);
	}
	return same;
}

/* The stack s of a merged stack: its leaf's offset in its object, the
 * callers in the executable where mergegen put them; -1 otherwise. */
static int stack_s(const struct sonde_exp *e, uint64_t id)
{
	const struct sonde_stack *st = sonde_exp_stack(e, id);

	if (!st || !st->depth)
		return -1;
	const struct sonde_object *o = sonde_exp_find_object(e, st->frame[0].pc, SONDE_TIME_NEVER);

	if (!o || !st->frame[0].exact)
		return -1;
	uint64_t off = st->frame[0].pc - o->base;
	int s = (int)((off - 0x1000) / 16);

	if (s < 0 || s >= NST || off != 0x1000 + 16u * (unsigned)s || strcmp(o->path, s % 2 ? MG_LIB : MG_EXE) ||
	    st->depth != 2 + s % 6)
		return -1;
	for (unsigned d = 1; d < st->depth; d++) {
		const struct sonde_object *c = sonde_exp_find_object(e, st->frame[d].pc, SONDE_TIME_NEVER);

		if (!c || strcmp(c->path, MG_EXE) || st->frame[d].pc - c->base != 0x100000 + 0x100u * d + 8u * (s % 5) + 5)
			return -1;
	}
	return s;
}

static void test_truth(const char *m)
{
	char err[512];
	struct sonde_exp *e = sonde_exp_open(m, err, sizeof(err));
	struct mg_cell got[NST * MG_NKEYS] = { 0 };
	int bad = 0;

	group = "truth";
	CHECK(e != NULL);
	if (!e)
		return;
	struct sonde_sample_iter it;
	struct sonde_sample s;

	sonde_sample_iter_init(&it, e);
	while (sonde_sample_iter_next(&it, &s)) {
		int k = s.state == SONDE_STATE_OTHER_WAIT && s.syscall == 7 ? 2 : s.state == 3 ? 1 : s.state == 0 ? 0 : -1;
		int st = stack_s(e, s.stack_id);

		if (k < 0 || st < 0) {
			bad++;
			continue;
		}
		got[st * MG_NKEYS + k].weight += s.weight_ns;
		got[st * MG_NKEYS + k].system += s.system_ns;
		got[st * MG_NKEYS + k].wait += s.wait_cpu_ns;
	}
	CHECK_I(bad, 0);
	for (int i = 0; i < NST * MG_NKEYS; i++) {
		CHECK_U(got[i].weight, truth[i].weight);
		CHECK_U(got[i].system, truth[i].system);
		CHECK_U(got[i].wait, truth[i].wait);
	}
	/* The merged file: ranks, samples, min, max, sum of squares. */
	size_t len;
	char *txt = slurp(m, "merged", &len), *save = NULL;
	int lines = 0;

	CHECK(txt != NULL);
	for (char *l = txt ? strtok_r(txt, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long id, nexp, samples, weight, min, max, sys, wait;
		unsigned state, sc;
		char sq[64];

		if (l[0] == '#')
			continue;
		lines++;
		if (sscanf(l, "%llx %u %u %llu %llu %llu %llu %llu %63s %llu %llu", &id, &state, &sc, &nexp, &samples,
			   &weight, &min, &max, sq, &sys, &wait) != 11) {
			CHECK(!"a line of 'merged' has 11 fields");
			continue;
		}
		int st = stack_s(e, id), k = state == 2 ? 2 : state == 3 ? 1 : 0;
		const struct mg_cell *t = st >= 0 ? &truth[st * MG_NKEYS + k] : NULL;

		CHECK(t != NULL);
		if (!t)
			continue;
		char want[64], *p = want + 63;
		unsigned __int128 v = t->sumsq;

		*p = 0;
		do
			*--p = (char)('0' + (int)(v % 10));
		while (v /= 10);
		CHECK_U(nexp, t->nexp);
		CHECK_U(samples, t->samples);
		CHECK_U(weight, t->weight);
		CHECK_U(min, t->min);
		CHECK_U(max, t->max);
		CHECK_S(sq, p);
	}
	int cells = 0;

	for (int i = 0; i < NST * MG_NKEYS; i++)
		cells += truth[i].samples > 0;
	CHECK_I(lines, cells);
	free(txt);
	const struct sonde_exp_summary *sum = sonde_exp_summary(e);

	CHECK_U(sonde_exp_nerrors(e), 0);
	CHECK_U(sum->stacks, NST);
	sonde_exp_close(e);
}

static void test_orders(const char *ref)
{
	static const int fwd[NR] = { 0, 1, 2, 3, 4, 5, 6 }, rev[NR] = { 6, 5, 4, 3, 2, 1, 0 },
			 mix[NR] = { 3, 0, 6, 2, 5, 1, 4 };
	static const int one[1] = { NR }, three[3] = { 2, 3, 2 }, seven[NR] = { 1, 1, 1, 1, 1, 1, 1 };
	static const int c1[1] = { 0 }, c3[3] = { 2, 0, 1 }, c7[NR] = { 6, 3, 0, 5, 1, 4, 2 };
	char *b = path("rev.er"), *c = path("three.er"), *d = path("seven.er");

	group = "orders";
	CHECK_I(merge_parts(rev, one, 1, c1, b), 0);
	CHECK(same_files(ref, b));
	CHECK_I(merge_parts(mix, three, 3, c3, c), 0);
	CHECK(same_files(ref, c));
	CHECK_I(merge_parts(fwd, seven, NR, c7, d), 0);
	CHECK(same_files(ref, d));
	free(b);
	free(c);
	free(d);
}

static bool has(const char *s, const char *w)
{
	if (!strstr(s, w))
		printf("# \"%s\" lacks \"%s\"\n", s, w);
	return strstr(s, w) != NULL;
}

static void test_bad(void)
{
	char err[1024] = "", **paths;
	size_t n;
	char *notexp = path("notexp"), *empty = path("empty.er"), *dmg = path("dmg.er"), *out = path("dmg-m.er");

	group = "bad input";
	mkdir(notexp, 0777);
	CHECK_I(sonde_merge_list(notexp, &paths, &n, err, sizeof(err)), -1);
	CHECK(has(err, "notexp' is not an experiment"));
	CHECK_I(sonde_merge_list("/nonexistent/x.er", &paths, &n, err, sizeof(err)), -1);
	CHECK(has(err, "'/nonexistent/x.er'"));
	CHECK(mg_founder(empty, err, sizeof(err)) == 0);
	CHECK_I(sonde_merge_list(empty, &paths, &n, err, sizeof(err)), -1);
	CHECK(has(err, "has no sub-experiments"));
	CHECK_I(sonde_merge_check_out(job, err, sizeof(err)), -1);
	CHECK(has(err, "exists"));

	/* A damaged rank: the size of its first profile packet zeroed; a
	 * directory named like one that is no experiment. */
	char s0[4400], s1[4400], s2[4500];

	CHECK(mg_founder(dmg, err, sizeof(err)) == 0);
	mg_subname(s0, sizeof(s0), dmg, 0, 0);
	mg_subname(s1, sizeof(s1), dmg, 1, 0);
	CHECK(mg_rank(s0, 0, NS, NST, NULL, err, sizeof(err)) == 0);
	CHECK(mg_rank(s1, 1, NS, NST, NULL, err, sizeof(err)) == 0);
	snprintf(s2, sizeof(s2), "%s/profile", s1);
	int fd = open(s2, O_WRONLY);
	uint16_t zero = 0;

	CHECK(fd >= 0 && pwrite(fd, &zero, 2, SONDE_FILE_HEADER_SIZE + sizeof(struct sonde_block_header) + 2) == 2);
	close(fd);
	struct sonde_merge *m = sonde_merge_new();

	CHECK_I(sonde_merge_add(m, s0, "_f1.er", err, sizeof(err)), 0);
	CHECK_I(sonde_merge_add(m, s1, "_f2.er", err, sizeof(err)), 1);
	CHECK(has(err, "sub-experiment '_f2.er' is damaged"));
	CHECK(!strchr(err, '\n'));
	CHECK_I(sonde_merge_output(m, dmg, out, err, sizeof(err)), 0);
	size_t len;
	char *log = slurp(out, "log.xml", &len);

	CHECK(log && has(log, "<event kind=\"warning\" time_ns=\"1000000000\" text=\"sub-experiment '_f2.er' is damaged"));
	free(log);
	snprintf(s2, sizeof(s2), "%s/_f3.er", dmg);
	mkdir(s2, 0777);
	CHECK_I(sonde_merge_add(m, s2, "_f3.er", err, sizeof(err)), -1);
	CHECK(has(err, "sub-experiment '_f3.er': ") && has(err, "log.xml"));
	sonde_merge_free(m);

	/* Bytes that are no partial merge. */
	uint8_t junk[64] = "SDMERG01 but not really";

	CHECK(sonde_merge_unpack(junk, sizeof(junk), err, sizeof(err)) == NULL);
	m = sonde_merge_new();
	uint8_t *buf;

	sonde_merge_add(m, sub[0], "_f1.er", err, sizeof(err));
	CHECK(sonde_merge_pack(m, &buf, &len) == 0);
	for (size_t cut = 0; cut < len; cut += len / 50 + 1) {
		struct sonde_merge *u = sonde_merge_unpack(buf, cut, err, sizeof(err));

		CHECK(u == NULL);
		sonde_merge_free(u);
	}
	CHECK(has(err, "damaged"));
	free(buf);
	sonde_merge_free(m);
	free(notexp);
	free(empty);
	free(dmg);
	free(out);
}

int main(void)
{
	char err[512] = "";

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(job, sizeof(job), "%s/job.er", tmpdir);
	if (mg_founder(job, err, sizeof(err)) < 0) {
		printf("not ok - %s\n", err);
		return 1;
	}
	for (unsigned r = 0; r < NR; r++) {
		char p[4400];

		mg_subname(p, sizeof(p), job, r, 0);
		sub[r] = strdup(p);
		if (mg_rank(p, r, NS, NST, truth, err, sizeof(err)) < 0) {
			printf("not ok - %s\n", err);
			return 1;
		}
	}
	/* The serial merge, as sonde merge does it. */
	char **paths, *ref = path("m.er");
	size_t n;
	struct sonde_merge *m = sonde_merge_new();

	group = "serial";
	CHECK_I(sonde_merge_list(job, &paths, &n, err, sizeof(err)), 0);
	CHECK_U(n, NR);
	for (size_t i = 0; i < n; i++) {
		CHECK_S(paths[i], sub[i]);
		CHECK_I(sonde_merge_add(m, paths[i], "x", err, sizeof(err)), 0);
		free(paths[i]);
	}
	free(paths);
	CHECK_U(sonde_merge_count(m), NR);
	CHECK_I(sonde_merge_output(m, job, ref, err, sizeof(err)), 0);
	sonde_merge_free(m);
	test_truth(ref);
	test_orders(ref);
	test_bad();
	free(ref);
	for (unsigned r = 0; r < NR; r++)
		free(sub[r]);
	if (!getenv("SONDE_TEST_KEEP")) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
