/*
 * The experiment tree: a founder and its sub-experiments (exptree.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader/exptree.h"

/* ---- the kinds of sub-experiments ------------------------------------------- */

/* The rank of a name that starts "M_r<digits>", and where the digits end;
 * -1 for another name. */
static long rank_prefix(const char *name, const char **end)
{
	char *e;

	if (strncmp(name, "M_r", 3) || name[3] < '0' || name[3] > '9')
		return -1;
	errno = 0;
	long r = strtol(name + 3, &e, 10);

	if (errno || r > INT32_MAX || (name[3] == '0' && e != name + 4))
		return -1; /* "M_r01" would be a second name of rank 1 */
	*end = e;
	return r;
}

/* An MPI rank's experiment, M_r<rank>.er, as the reference names them
 * (sonde-collect.md, "MPI programs"). */
static bool rank_match(const char *name, struct sonde_exp_node *id)
{
	const char *end;
	long r = rank_prefix(name, &end);

	if (r < 0 || strcmp(end, ".er"))
		return false;
	if (id)
		id->rank = r;
	return true;
}

/* A descendant process's experiment, named by its lineage: "_f1.er",
 * "_f2_x1.er", "_C1.er" (sonde-collect.md, "Descendant processes"); a
 * rank's descendants' lineages start with the rank's ("M_r3_f1.er"),
 * whose rank they carry. */
static bool descendant_match(const char *name, struct sonde_exp_node *id)
{
	size_t l = strlen(name);
	const char *end;
	long r = rank_prefix(name, &end);

	if (l <= 4 || strcmp(name + l - 3, ".er"))
		return false;
	if (r >= 0 && end[0] == '_' && end + 4 < name + l) {
		if (id)
			id->rank = r;
		return true;
	}
	return name[0] == '_';
}

/* A process that a kernel profile followed (sonde kernel -F), named as the
 * reference names them: "_NAME_PID_1234.1.er" (NAME without '.'). */
static bool kprocess_match(const char *name, struct sonde_exp_node *id)
{
	size_t l = strlen(name);
	if (name[0] != '_' || l < 5 || strcmp(name + l - 5, ".1.er"))
		return false;
	/* the last "_PID_" of the stem, digits after it to the end */
	const char *pid = NULL;
	for (const char *p = name + 1; (p = strstr(p, "_PID_")) && p < name + l - 5; p++)
		pid = p;
	if (!pid || pid == name + 1 || pid + 5 == name + l - 5)
		return false;
	for (const char *d = pid + 5; d < name + l - 5; d++)
		if (*d < '0' || *d > '9')
			return false;
	if (id)
		id->kernel = true;
	return true;
}

/* One row per kind; a directory is of the first kind that claims its name. */
const struct sonde_subexp_kind sonde_subexp_kinds[] = {
	{ "rank", rank_match, false },
	{ "kernel process", kprocess_match, true },
	{ "descendant", descendant_match, false },
};
const size_t sonde_subexp_nkinds = sizeof(sonde_subexp_kinds) / sizeof(sonde_subexp_kinds[0]);

static const struct sonde_subexp_kind *kind_in(const struct sonde_subexp_kind *kinds, size_t nkinds,
					       const char *name, struct sonde_exp_node *id)
{
	for (size_t i = 0; i < nkinds; i++)
		if (kinds[i].match(name, id))
			return &kinds[i];
	return NULL;
}

const struct sonde_subexp_kind *sonde_subexp_kind_of(const char *name)
{
	return kind_in(sonde_subexp_kinds, sonde_subexp_nkinds, name, NULL);
}

/* ---- the walk over a founder's directory ------------------------------------ */

/* scandir's filter has no argument: the kinds of the walk in progress
 * (one walk at a time per thread). */
static __thread const struct sonde_subexp_kind *scan_kinds;
static __thread size_t scan_nkinds;

static int scan_filter(const struct dirent *d)
{
	return kind_in(scan_kinds, scan_nkinds, d->d_name, NULL) != NULL;
}

int sonde_subexp_scan(const char *dir, const struct sonde_subexp_kind *kinds, size_t nkinds,
		      int (*fn)(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k),
		      void *arg, size_t *nskipped, char *skipped, size_t cap)
{
	struct dirent **list = NULL;
	int rc = 0;

	if (nskipped)
		*nskipped = 0;
	if (skipped && cap)
		skipped[0] = '\0';
	scan_kinds = kinds;
	scan_nkinds = nkinds;
	int nl = scandir(dir, &list, scan_filter, versionsort);

	if (nl < 0)
		return -1;
	/* The collector makes each sub-experiment a directory of its own: a
	 * symbolic link (_f9.er -> .) or a second name of one directory would
	 * count its samples twice, so those are skipped, by lstat() and by
	 * device and inode. */
	struct stat fst;
	dev_t *seen_dev = calloc((size_t)nl + 1, sizeof(*seen_dev));
	ino_t *seen_ino = calloc((size_t)nl + 1, sizeof(*seen_ino));
	size_t nseen = 0;

	if (seen_dev && seen_ino && stat(dir, &fst) == 0) {
		seen_dev[nseen] = fst.st_dev;
		seen_ino[nseen++] = fst.st_ino;
	}
	for (int i = 0; i < nl; i++) {
		char sub[PATH_MAX];
		struct stat sst;
		const char *name = list[i]->d_name;

		snprintf(sub, sizeof(sub), "%s/%s", dir, name);
		bool isdir = lstat(sub, &sst) == 0 && S_ISDIR(sst.st_mode), dup = false;

		for (size_t k = 0; isdir && k < nseen && !dup; k++)
			dup = seen_dev[k] == sst.st_dev && seen_ino[k] == sst.st_ino;
		if (!isdir || dup) {
			if (nskipped && !(*nskipped)++ && skipped)
				snprintf(skipped, cap, "%s", name);
			continue;
		}
		if (seen_dev && seen_ino) {
			seen_dev[nseen] = sst.st_dev;
			seen_ino[nseen++] = sst.st_ino;
		}
		if (!rc)
			rc = fn(arg, sub, name, kind_in(kinds, nkinds, name, NULL));
	}
	for (int i = 0; i < nl; i++)
		free(list[i]);
	free(list);
	free(seen_dev);
	free(seen_ino);
	return rc;
}

/* ---- the tree ---------------------------------------------------------------- */

void sonde_exp_tree_init(struct sonde_exp_tree *t)
{
	memset(t, 0, sizeof(*t));
	t->kinds = sonde_subexp_kinds;
	t->nkinds = sonde_subexp_nkinds;
}

void sonde_exp_tree_release(struct sonde_exp_tree *t)
{
	const struct sonde_subexp_kind *kinds = t->kinds;
	size_t nkinds = t->nkinds;

	for (size_t i = 0; i < t->n; i++) {
		sonde_exp_close(t->exps[i]);
		free((char *)t->names[i]);
		free((char *)t->node[i].lineage);
	}
	free(t->exps);
	free(t->names);
	free(t->node);
	memset(t, 0, sizeof(*t));
	t->kinds = kinds;
	t->nkinds = nkinds;
}

struct adding {
	struct sonde_exp_tree *t;
	size_t founder, group;
	void (*say)(void *arg, const char *msg);
	void *arg;
	int rc;
};

static void say(const struct adding *a, const char *msg)
{
	if (a->say)
		a->say(a->arg, msg);
}

/* A rank's experiment is named by the rank its launcher gave; MPI itself
 * says which rank the process is after MPI_Init (the tracing library's
 * log).  They differ when the program's MPI is not its launcher's: each
 * process is then a singleton, rank 0 of 1.  Said, and read as named. */
static void check_rank(const struct adding *a, const char *path, const struct sonde_exp_node *id,
		       const struct sonde_exp_mpi *m)
{
	char msg[PATH_MAX + 300];
	const char *why = "(a program built with another MPI than its mpirun's? each process is then rank 0 "
			  "of its own)";

	if (m->mpi_rank >= 0 && m->mpi_rank != id->rank) {
		snprintf(msg, sizeof(msg), "warning: '%s': MPI_Comm_rank gave rank %" PRId64 ", the launcher rank %" PRId64 " %s",
			 path, m->mpi_rank, id->rank, why);
		say(a, msg);
	} else if (m->mpi_size >= 0 && m->size >= 0 && m->mpi_size != m->size) {
		snprintf(msg, sizeof(msg), "warning: '%s': MPI_Comm_size gave %" PRId64 " ranks, the launcher started %" PRId64 " %s",
			 path, m->mpi_size, m->size, why);
		say(a, msg);
	} else if (m->rank >= 0 && m->rank != id->rank) {
		snprintf(msg, sizeof(msg), "warning: '%s': its log says rank %" PRId64 ", its name rank %" PRId64, path, m->rank,
			 id->rank);
		say(a, msg);
	}
}

/* Opens path and appends it, of a->founder's experiments; closes it and
 * says so when out of memory.  Returns 0 or -1. */
static int add_one(struct adding *a, const char *path)
{
	struct sonde_exp_tree *t = a->t;
	char err[512];
	struct sonde_exp *e = sonde_exp_open(path, err, sizeof(err));

	if (!e) {
		say(a, err);
		return -1;
	}
	size_t cap = t->n; /* each array has room for exactly n */
	struct sonde_exp **ne = realloc(t->exps, (cap + 1) * sizeof(*ne));
	const char **nn = ne ? realloc(t->names, (cap + 1) * sizeof(*nn)) : NULL;
	struct sonde_exp_node *nd = nn ? realloc(t->node, (cap + 1) * sizeof(*nd)) : NULL;

	if (ne)
		t->exps = ne;
	if (nn)
		t->names = nn;
	if (nd)
		t->node = nd;
	struct sonde_exp_node id = { .exp = e, .rank = -1 };
	const char *base = sonde_exp_info(e)->name;

	id.kind = kind_in(t->kinds, t->nkinds, base, &id);
	char *copy = strdup(path);
	char *lineage = strndup(base, id.kind ? strcspn(base, ".") : 0);

	if (!nd || !copy || !lineage) {
		free(copy);
		free(lineage);
		sonde_exp_close(e);
		say(a, "out of memory");
		return -1;
	}
	const struct sonde_exp_info *in = sonde_exp_info(e);
	const char *exe = in->target.exe ? strrchr(in->target.exe, '/') : NULL;

	if (id.kind && !strcmp(id.kind->name, "rank"))
		check_rank(a, path, &id, &sonde_exp_info(e)->mpi);
	id.path = copy;
	id.lineage = lineage;
	id.pid = in->target.pid;
	id.program = exe ? exe + 1 : in->target.exe;
	id.founder = a->founder;
	id.group = a->group;
	t->exps[t->n] = e;
	t->names[t->n] = copy;
	t->node[t->n++] = id;
	return 0;
}

static int add_sub(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	struct adding *a = arg;

	if (k && k->alone)
		return 0;
	if (add_one(a, path) < 0)
		a->rc = -1;
	return 0;
}

int sonde_exp_tree_add(struct sonde_exp_tree *t, const char *path, unsigned flags,
		       void (*say_fn)(void *arg, const char *msg), void *arg)
{
	struct adding a = { t, t->n, t->ngroups, say_fn, arg, 0 };

	if (add_one(&a, path) < 0)
		return -1;
	const struct sonde_exp_node *f = &t->node[t->n - 1];
	const char *dir = sonde_exp_info(f->exp)->dir;

	t->ngroups++;
	if (f->kind || (flags & SONDE_TREE_ALONE))
		return 0; /* a sub-experiment given by itself, or only it wanted */
	size_t skipped = 0;
	char first[NAME_MAX + 1];

	/* a directory that cannot be read has no sub-experiments to give */
	sonde_subexp_scan(dir, t->kinds, t->nkinds, add_sub, &a, &skipped, first, sizeof(first));
	if (skipped) {
		char msg[PATH_MAX + 2 * NAME_MAX + 400];

		snprintf(msg, sizeof(msg),
			 "warning: '%s': %zu sub-experiment name%s skipped (the first: '%s'): not a directory of "
			 "its own (a symbolic link, or a second name of a directory already read), whose samples "
			 "would be counted twice",
			 path, skipped, skipped == 1 ? "" : "s", first);
		say(&a, msg);
	}
	return a.rc;
}

/* ---- selections ----------------------------------------------------------------- */

int sonde_exp_tree_pick(const struct sonde_exp_tree *t, const char *spec, bool *want)
{
	bool all = !strcmp(spec, "all");
	/* rank=LIST: MPI ranks, the rank's process and its descendants */
	bool ranks = !strncmp(spec, "rank=", 5);

	for (size_t i = 0; i < t->n; i++)
		want[i] = all;
	if (ranks && !spec[5])
		return -1;
	for (const char *p = all ? "" : ranks ? spec + 5 : spec; *p;) {
		char *end;
		long lo, hi;

		if (*p < '0' || *p > '9')
			return -1; /* strtol would take a sign or a space */
		errno = 0;
		lo = hi = strtol(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -1;
			hi = strtol(p, &end, 10);
		}
		if (errno || hi < lo)
			return -1;
		if (ranks) {
			bool any = false;

			for (size_t i = 0; i < t->n; i++)
				if (t->node[i].rank >= lo && t->node[i].rank <= hi)
					want[i] = any = true;
			if (!any)
				return -1; /* no such rank */
		} else {
			if (lo < 1 || (size_t)hi > t->n)
				return -1;
			for (long k = lo; k <= hi; k++)
				want[k - 1] = true;
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

int sonde_exp_tree_desc(const struct sonde_exp_tree *t, const char *spec, bool *want, char *err, size_t errlen)
{
	bool rx = spec[0] == '=';
	regex_t re;

	if (!rx && strcmp(spec, "on") && strcmp(spec, "off")) {
		snprintf(err, errlen, "'%s' is not on, off or =REGEX", spec);
		return -1;
	}
	if (rx && !spec[1]) {
		snprintf(err, errlen, "'%s' is not on, off or =REGEX", spec);
		return -1;
	}
	int rc = rx ? regcomp(&re, spec + 1, REG_EXTENDED | REG_NOSUB) : 0;

	if (rc) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		snprintf(err, errlen, "'%s': %s", spec + 1, msg);
		return -1;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct sonde_exp_node *id = &t->node[i];

		want[i] = !id->kind || !strcmp(spec, "on");
		if (id->kind && rx)
			want[i] = !regexec(&re, id->lineage, 0, NULL, 0) ||
				  (id->program && !regexec(&re, id->program, 0, NULL, 0));
	}
	if (rx)
		regfree(&re);
	return 0;
}
