/*
 * Opening experiments as the commands that read them do (sonde print,
 * sonde export): an experiment given, then, for a founder, the
 * sub-experiments of its descendants (C10), in name order with numbers
 * compared as numbers (_f2.er before _f10.er).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "reader/experiment.h"
#include "views/view_exp.h"

static int subexp_filter(const struct dirent *d)
{
	return sonde_view_is_subexp(d->d_name);
}

static void complain(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void complain(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

static int add_exp(struct sonde_exp ***exps, const char ***names, size_t *n, struct sonde_exp *e, const char *name,
		   const char *prog)
{
	struct sonde_exp **ne = realloc(*exps, (*n + 1) * sizeof(*ne));
	const char **nn = realloc(*names, (*n + 1) * sizeof(*nn));
	char *copy = strdup(name);

	if (ne)
		*exps = ne;
	if (nn)
		*names = nn;
	if (!ne || !nn || !copy) {
		free(copy);
		sonde_exp_close(e);
		complain(prog, "out of memory");
		return 1;
	}
	(*exps)[*n] = e;
	(*names)[(*n)++] = copy;
	return 0;
}

int cmd_open_experiments(const char *path, const char *prog, struct sonde_exp ***exps, const char ***names,
			 size_t *n)
{
	char err[512];
	struct sonde_exp *e = sonde_exp_open(path, err, sizeof(err));
	int rc = 0;

	if (!e) {
		complain(prog, "%s", err);
		return 1;
	}
	if (add_exp(exps, names, n, e, path, prog))
		return 1;
	if (sonde_view_is_subexp(sonde_exp_info(e)->name))
		return 0; /* a descendant's experiment given by itself */
	struct dirent **list = NULL;
	int nl = scandir(path, &list, subexp_filter, versionsort);
	/* The collector makes each sub-experiment a directory of its own: a
	 * symbolic link (_f9.er -> .) or a second name of one directory would
	 * count its samples twice, so those are skipped, by lstat() and by
	 * device and inode, with one warning per founder. */
	struct stat fst;
	dev_t *seen_dev = calloc((size_t)(nl > 0 ? nl : 0) + 1, sizeof(*seen_dev));
	ino_t *seen_ino = calloc((size_t)(nl > 0 ? nl : 0) + 1, sizeof(*seen_ino));
	size_t nseen = 0, skipped = 0;
	char first_skipped[NAME_MAX + 1] = "";

	if (seen_dev && seen_ino && stat(sonde_exp_info(e)->dir, &fst) == 0) {
		seen_dev[nseen] = fst.st_dev;
		seen_ino[nseen++] = fst.st_ino;
	}
	for (int i = 0; i < nl; i++) {
		char sub[PATH_MAX];
		struct stat sst;

		snprintf(sub, sizeof(sub), "%s/%s", sonde_exp_info(e)->dir, list[i]->d_name);
		bool dir = lstat(sub, &sst) == 0 && S_ISDIR(sst.st_mode), dup = false;

		for (size_t k = 0; dir && k < nseen && !dup; k++)
			dup = seen_dev[k] == sst.st_dev && seen_ino[k] == sst.st_ino;
		if (!dir || dup) {
			if (!skipped++)
				snprintf(first_skipped, sizeof(first_skipped), "%s", list[i]->d_name);
			free(list[i]);
			continue;
		}
		if (seen_dev && seen_ino) {
			seen_dev[nseen] = sst.st_dev;
			seen_ino[nseen++] = sst.st_ino;
		}
		struct sonde_exp *se = sonde_exp_open(sub, err, sizeof(err));

		if (se) {
			rc |= add_exp(exps, names, n, se, sub, prog);
		} else {
			complain(prog, "%s", err);
			rc = 1;
		}
		free(list[i]);
	}
	free(list);
	free(seen_dev);
	free(seen_ino);
	if (skipped)
		complain(prog,
			 "warning: '%s': %zu sub-experiment name%s skipped (the first: '%s'): not a "
			 "directory of its own (a symbolic link, or a second name of a directory already "
			 "read), whose samples would be counted twice",
			 path, skipped, skipped == 1 ? "" : "s", first_skipped);
	return rc;
}
