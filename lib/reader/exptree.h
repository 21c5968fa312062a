/*
 * exptree: the experiments a command reads, as a tree: each experiment
 * given (a founder) followed by its sub-experiments, the directories
 * directly inside it that the collector made for the other processes of
 * the run (doc/experiment-format.md, "Sub-experiments of descendants"),
 * each with its identity: which kind of sub-experiment it is, its lineage
 * (_f1_x1), pid and program, and room for an MPI rank and a process that
 * a kernel profile followed.  Every command opens its experiments with
 * sonde_exp_tree_add(); the views of the tree (-experiment_list,
 * -processes) and sonde print's selections (-experiment_select, en_desc)
 * read it.
 *
 *	struct sonde_exp_tree t;
 *	sonde_exp_tree_init(&t);
 *	if (sonde_exp_tree_add(&t, "test.1.er", 0, say, NULL) < 0)
 *		... something was not opened (said through say) ...
 *	for (size_t i = 0; i < t.n; i++)
 *		use(t.exps[i], t.node[i].lineage);
 *	sonde_exp_tree_release(&t);
 *
 * A kind of sub-experiment is a row of sonde_subexp_kinds (exptree.c): its
 * name and the function that recognises a directory name of its kind and
 * says what the name tells of its identity.  Nothing else names the kinds:
 * a directory is a sub-experiment when a row claims its name, whoever
 * looks (the tree, -header's count of descendants, sonde archive, the
 * lookup of the founder's archives).
 *
 * Library code: nothing is printed; what could not be opened is said
 * through the caller's function, one line at a time.
 */
#ifndef SONDE_EXPTREE_H
#define SONDE_EXPTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/experiment.h"

struct sonde_exp_node;

/* A kind of sub-experiment. */
struct sonde_subexp_kind {
	const char *name; /* "descendant", "rank", ... */
	/* Whether name (a directory's last component, "_f1_x1.er") names a
	 * sub-experiment of this kind.  When it does and id is not NULL,
	 * fills what the name says of the identity (rank, kernel); the
	 * lineage, pid and program are filled by the caller.  Must not
	 * allocate. */
	bool (*match)(const char *name, struct sonde_exp_node *id);
	/* Opened only when given by itself, not with its founder: a kernel
	 * profile's processes, whose time its founder holds already. */
	bool alone;
};

/* The kinds of sub-experiments this reader knows, and how many. */
extern const struct sonde_subexp_kind sonde_subexp_kinds[];
extern const size_t sonde_subexp_nkinds;

/* The kind of sub-experiment that name (a directory's last component)
 * names, among sonde_subexp_kinds; NULL for none (a founder's name). */
const struct sonde_subexp_kind *sonde_subexp_kind_of(const char *name);

/* One experiment of a tree and its identity.  Strings are owned by the
 * tree (program: by the experiment) and live until its release. */
struct sonde_exp_node {
	struct sonde_exp *exp;
	const char *path; /* the path it was opened by */
	/* Its kind of sub-experiment; NULL for a founder (an experiment
	 * given whose name no kind claims). */
	const struct sonde_subexp_kind *kind;
	/* Its name up to the first '.' ("_f1_x1", "M_r3"), the collector's
	 * name for it; "" for a founder. */
	const char *lineage;
	uint32_t pid;	     /* its process (log.xml's target); 0: unknown */
	const char *program; /* its executable's last component; NULL: unknown */
	int64_t rank;	     /* its MPI rank; -1: none */
	bool kernel;	     /* a process that a kernel profile followed */
	size_t founder;	     /* the index of its founder in the tree (its own for a founder) */
	size_t group;	     /* which experiment given (of those opened) it came with: 0, 1, ... */
};

/*
 * A forest of experiments: in the order they were added, each experiment
 * given followed by its sub-experiments in name order (numbers compared as
 * numbers).  exps[i], names[i] and node[i] are the same experiment; exps
 * and names are there for the functions that take arrays.
 */
struct sonde_exp_tree {
	struct sonde_exp **exps;
	const char **names; /* the paths they were opened by */
	struct sonde_exp_node *node;
	size_t n;
	size_t ngroups; /* experiments given (those opened) */
	/* The kinds of sub-experiments looked for: sonde_subexp_kinds
	 * unless the caller sets others after init (a test's). */
	const struct sonde_subexp_kind *kinds;
	size_t nkinds;
};

/* An empty tree that looks for sonde_subexp_kinds. */
void sonde_exp_tree_init(struct sonde_exp_tree *t);

/* sonde_exp_tree_add's flags: the experiment only, not the sub-experiments
 * inside it. */
#define SONDE_TREE_ALONE 1u

/*
 * Opens the experiment at path and appends it to t; then, unless it is
 * itself a sub-experiment (its name is of a kind: a descendant's
 * experiment given by itself) or flags has SONDE_TREE_ALONE, every
 * sub-experiment directly inside it, in name order.  Only real
 * directories count: a symbolic link named like one (_f9.er -> .) or a
 * second name of a directory already read would count its samples twice;
 * those are skipped, with one warning for the experiment.  What cannot
 * be opened is said with say(arg, msg), msg as sonde_exp_open says it
 * ("warning: ..." for the skipped names), and the rest still opened.
 * Returns 0, or -1 when something was not opened (out of memory
 * included).
 */
int sonde_exp_tree_add(struct sonde_exp_tree *t, const char *path, unsigned flags,
		       void (*say)(void *arg, const char *msg), void *arg);

/* Closes every experiment and frees what t holds; t is then empty (as
 * after init, with the same kinds). */
void sonde_exp_tree_release(struct sonde_exp_tree *t);

/* -experiment_select's list: "all", or numbers and ranges ("1,3-5") of
 * t's experiments as -experiment_list numbers them (from 1), or
 * "rank=LIST": the experiments of MPI ranks LIST ("rank=0,2-3"), a rank's
 * own and its descendants'.  Sets want[0..t->n) for those it picks and
 * clears the rest.  Returns 0, or -1 for a list that is none of those (a
 * number out of range, a range none of whose ranks is there). */
int sonde_exp_tree_pick(const struct sonde_exp_tree *t, const char *spec, bool *want);

/* er_print's en_desc: which of t's experiments are read with spec.  Every
 * founder; and the sub-experiments: all ("on"), none ("off"), or ("=RE")
 * those whose lineage or program matches the extended regular expression
 * RE, as sonde collect -F =RE picks descendants.  Sets want[0..t->n) (want
 * may be NULL for an empty tree: a check of spec).  Returns 0, or -1 with
 * a message for a spec that is none of those. */
int sonde_exp_tree_desc(const struct sonde_exp_tree *t, const char *spec, bool *want, char *err, size_t errlen);

/*
 * The sub-experiments directly inside the experiment directory dir, of
 * the kinds given, in name order (numbers compared as numbers): fn(arg,
 * path, name, kind) for each real directory of its own (not a symbolic
 * link, not a second name of dir or of one already given); a non-zero
 * return from fn stops the walk and is returned.  *nskipped (when not
 * NULL) gets how many names were skipped, and skipped (cap bytes, when
 * not NULL) the first of them.  Returns 0, fn's stop value, or -1 when dir
 * cannot be read or memory runs out.
 */
int sonde_subexp_scan(const char *dir, const struct sonde_subexp_kind *kinds, size_t nkinds,
		      int (*fn)(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k),
		      void *arg, size_t *nskipped, char *skipped, size_t cap);

#endif
