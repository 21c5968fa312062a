/*
 * sonde gather FOUNDER DIR...: bring the sub-experiments that MPI ranks
 * recorded in node-local directories (SONDE_MPI_LOCALDIR, or a node that
 * did not see the founder: doc/sonde-collect.md, "MPI programs") into
 * the job's founder experiment.
 *
 * Each DIR is a node-local copy of the founder (DIR/NAME.er, as the ranks
 * made it), here or copied here by the site's own tools (rsync, scp):
 * sonde adds no transport.  Its sub-experiments (the names the reader's
 * tree takes: M_r3.er, M_r3_f1.er, ...) are moved into FOUNDER (renamed,
 * or copied and then removed across file systems); a name FOUNDER has
 * already is left where it is and said; a DIR wholly gathered is removed
 * (its founder files too).  A founder that does not exist
 * is made, with the first DIR's log.xml and mpi_job (the bare form's
 * founder of the ranks of that node).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "reader/exptree.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde gather FOUNDER DIR...\n"
		   "\n"
		   "Moves the MPI ranks' sub-experiments (M_r<rank>.er and their descendants') that\n"
		   "were recorded in node-local copies DIR of the founder into FOUNDER (made when\n"
		   "missing).  A name FOUNDER has already is not overwritten.\n");
}

/* Copies the regular file from to to (made, not overwritten); 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto done;
	rc = out >= 0 && n == 0 ? 0 : -1;
done:
	if (out >= 0 && close(out) < 0)
		rc = -1;
	close(in);
	return rc;
}

/* Moves the directory from (a sub-experiment: files and directories of
 * files) to to; across file systems, copies and then removes.  0 or -1
 * with errno. */
static int move_tree(const char *from, const char *to)
{
	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV)
		return -1;
	if (mkdir(to, 0755) < 0)
		return -1;
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = d ? 0 : -1;

	while (d && rc == 0 && (e = readdir(d))) {
		char a[PATH_MAX], b[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(a, sizeof a, "%s/%s", from, e->d_name) >= sizeof a ||
		    (size_t)snprintf(b, sizeof b, "%s/%s", to, e->d_name) >= sizeof b || lstat(a, &st) < 0) {
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode))
			rc = move_tree(a, b);
		else if (S_ISREG(st.st_mode))
			rc = copy_file(a, b) == 0 && unlink(a) == 0 ? 0 : -1;
	}
	if (d)
		closedir(d);
	return rc == 0 ? rmdir(from) : -1;
}

struct gathering {
	const char *founder;
	int moved, kept, failed;
};

static int gather_one(void *arg, const char *path, const char *name, const struct sonde_subexp_kind *k)
{
	struct gathering *g = arg;
	char to[PATH_MAX];

	if ((size_t)snprintf(to, sizeof to, "%s/%s", g->founder, name) >= sizeof to) {
		fprintf(stderr, "sonde gather: path too long: '%s/%s'\n", g->founder, name);
		g->failed++;
		return 0;
	}
	if (access(to, F_OK) == 0) {
		fprintf(stderr, "sonde gather: '%s' has '%s' already; '%s' is left where it is\n", g->founder, name, path);
		g->kept++;
		return 0;
	}
	if (move_tree(path, to) < 0) {
		fprintf(stderr, "sonde gather: cannot move '%s' to '%s': %s\n", path, to, strerror(errno));
		g->failed++;
		return 0;
	}
	g->moved++;
	return 0;
}

int cmd_gather(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	const char *founder = argv[1];
	struct gathering g = { founder, 0, 0, 0 };
	struct stat st;
	size_t n = strlen(founder);

	if (n < 4 || strcmp(founder + n - 3, ".er")) {
		fprintf(stderr, "sonde gather: the founder must be an experiment, NAME.er: '%s'\n", founder);
		return 2;
	}
	int made = 0;
	if (stat(founder, &st) < 0) {
		if (mkdir(founder, 0755) < 0) {
			fprintf(stderr, "sonde gather: cannot create '%s': %s\n", founder, strerror(errno));
			return 1;
		}
		made = 1;
	} else if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "sonde gather: not an experiment directory: '%s'\n", founder);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "sonde gather: not a directory: '%s'\n", argv[i]);
			g.failed++;
			continue;
		}
		if (made) {
			/* the bare form's founder files, from the first copy */
			static const char *const files[] = { "log.xml", "mpi_job" };
			for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
				char a[PATH_MAX], b[PATH_MAX];
				snprintf(a, sizeof a, "%s/%s", argv[i], files[f]);
				snprintf(b, sizeof b, "%s/%s", founder, files[f]);
				if (access(a, F_OK) == 0 && copy_file(a, b) < 0)
					fprintf(stderr, "sonde gather: cannot copy '%s' to '%s'\n", a, b);
			}
			made = 0;
		}
		int kept = g.kept, failed = g.failed;

		if (sonde_subexp_scan(argv[i], sonde_subexp_kinds, sonde_subexp_nkinds, gather_one, &g, NULL, NULL,
				      0) < 0) {
			fprintf(stderr, "sonde gather: cannot read '%s': %s\n", argv[i], strerror(errno));
			g.failed++;
		}
		if (g.kept == kept && g.failed == failed) {
			/* all of it gathered: the node-local copy goes, so that
			 * a later job on this node makes its own */
			char a[PATH_MAX];
			snprintf(a, sizeof a, "%s/log.xml", argv[i]);
			unlink(a);
			snprintf(a, sizeof a, "%s/mpi_job", argv[i]);
			unlink(a);
			rmdir(argv[i]);
		}
	}
	printf("sonde gather: %d sub-experiment%s moved into '%s'", g.moved, g.moved == 1 ? "" : "s", founder);
	if (g.kept)
		printf(", %d left (names taken)", g.kept);
	printf("\n");
	return g.failed ? 1 : g.kept ? 1 : 0;
}
