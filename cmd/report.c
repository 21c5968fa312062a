/*
 * sonde report: one self-contained HTML file of experiments
 * (doc/sonde-report.md; the writer is lib/views/report.c).
 *
 *	sonde report [-o FILE|DIR] [FILTERS] EXPERIMENT...
 *
 * Each experiment given is opened with its descendants' sub-experiments,
 * as sonde print opens them, and all are added together; with two or
 * more the report compares them.  The file is written beside its final
 * name and renamed into place, so a failed run leaves no half report.
 *
 * Exit status: 0; 1 when an experiment cannot be opened or is damaged
 * (a damaged one is still reported: the report says what was lost), or
 * the report cannot be written; 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "reader/experiment.h"
#include "reader/exptree.h"
#include "model/filter.h"
#include "model/profile.h"
#include "views/report.h"
#include "views/view.h"

#define CMD "sonde report"
#define DEFAULT_NAME "report.html"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde report [-o FILE|DIR] [FILTERS] EXPERIMENT...\n"
		"\n"
		"Writes one self-contained HTML file (it opens offline, from file://): the\n"
		"header, the function table with callers and callees, flame graphs (also\n"
		"inverted and per function), a timeline per thread whose selection restricts\n"
		"the other views, annotated source of the hottest functions, and the leaks,\n"
		"allocations, sync and I/O views when those were traced.  Several experiments\n"
		"are added together and compared (a differential flame graph and table).\n"
		"\n"
		"  -o FILE|DIR             the file to write (default " DEFAULT_NAME "); a directory\n"
		"                          (existing, or named with a trailing /) gets " DEFAULT_NAME "\n"
		"  -thread_select LIST     only these threads (numbers as sonde print -threads shows)\n"
		"  -object_select OBJ,...  only these load objects' functions; others folded per object\n"
		"  -sample_select LIST     only events in these samples (sonde print -samples)\n"
		"  -time START-END         only events in this time since the start, in seconds\n"
		"                          (0.5-1.25, 2- or -0.75); also -time_select\n"
		"  -cpu_select LIST        only events taken on these CPUs (0,2-3)\n"
		"  -callpath_select F|A>B,...  only events whose stack holds F, or A calling B\n"
		"  -inlines on|off         inlined functions as their own entries (default on)\n"
		"  -tailcalls on|off       frames that tail calls left off restored from DWARF (default on)\n"
		"  -viewmode user|expert|machine  an OpenMP or Java program's stacks as its source has them\n"
		"                          (user, the default), with the runtime's frames, as recorded\n"
		"  -pathmap OLD NEW        read source files recorded under OLD from NEW\n"
		"  -addpath DIR            also look for source files in DIR\n"
		"  -sources N              annotated source of the N hottest functions (default 8)\n");
}

static void warn(void *arg, const char *msg)
{
	fprintf(stderr, CMD ": warning: %s\n", msg);
}

/* Where to write: the file, or DIR/report.html for a directory (an
 * existing one, or a name ending in '/', made when missing). */
static char *output_path(const char *o)
{
	struct stat st;
	size_t l = strlen(o);
	char *path = NULL;

	if ((l && o[l - 1] == '/') || (stat(o, &st) == 0 && S_ISDIR(st.st_mode))) {
		if (mkdir(o, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, CMD ": cannot make directory '%s': %s\n", o, strerror(errno));
			return NULL;
		}
		if (asprintf(&path, "%s%s" DEFAULT_NAME, o, l && o[l - 1] == '/' ? "" : "/") < 0)
			path = NULL;
	} else {
		path = strdup(o);
	}
	if (!path)
		fprintf(stderr, CMD ": out of memory\n");
	return path;
}

int cmd_report(int argc, char **argv)
{
	struct sonde_report_opts o;
	const char *out = DEFAULT_NAME;
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	const char **pathmap = calloc((size_t)argc + 1, sizeof(*pathmap));
	const char **addpath = calloc((size_t)argc + 1, sizeof(*addpath));
	size_t npaths = 0;
	struct sonde_exp_tree t;
	uint32_t *group = NULL;
	char *file = NULL, *tmp = NULL;
	char err[512];
	int rc = 2;
	bool only = false;

	sonde_report_opts_init(&o);
	sonde_exp_tree_init(&t);
	if (!paths || !pathmap || !addpath) {
		fprintf(stderr, CMD ": out of memory\n");
		rc = 1;
		goto out;
	}
	if (argc < 2) {
		usage(stderr);
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only || a[0] != '-' || !a[1]) {
			paths[npaths++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
			usage(stdout);
			rc = 0;
			goto out;
		}
		int need = !strcmp(a, "-pathmap") ? 2 : 1;

		if (i + need >= argc) {
			fprintf(stderr, CMD ": %s needs %s (try 'sonde report -help')\n", a,
				need == 2 ? "two arguments" : "an argument");
			goto out;
		}
		const char *v = argv[++i];

		if (!strcmp(a, "-o")) {
			if (!*v) {
				fprintf(stderr, CMD ": -o needs a file or directory name\n");
				goto out;
			}
			out = v;
		} else if (sonde_filter_find(a + 1)) {
			if (sonde_filter_parse(&o.filter, a + 1, v, err, sizeof(err)) < 0) {
				fprintf(stderr, CMD ": %s: %s\n", a, err);
				goto out;
			}
		} else if (!strcmp(a, "-pathmap")) {
			pathmap[2 * o.npathmap] = v;
			pathmap[2 * o.npathmap + 1] = argv[++i];
			o.npathmap++;
		} else if (!strcmp(a, "-addpath")) {
			addpath[o.naddpath++] = v;
		} else if (!strcmp(a, "-sources")) {
			char *end;
			long k = strtol(v, &end, 10);

			if (end == v || *end || k < 0 || k > 1000) {
				fprintf(stderr, CMD ": -sources: '%s' is not a number from 0 to 1000\n", v);
				goto out;
			}
			o.sources = (size_t)k;
		} else {
			fprintf(stderr, CMD ": unknown option '%s' (try 'sonde report -help')\n", a);
			goto out;
		}
	}
	o.pathmap = pathmap;
	o.addpath = addpath;
	if (!npaths) {
		fprintf(stderr, CMD ": no experiment given (try 'sonde report -help')\n");
		goto out;
	}

	/* Every experiment with its descendants; none may be missing: a
	 * report of what happened to open would be a wrong report. */
	rc = 1;
	for (size_t i = 0; i < npaths; i++)
		if (cmd_open_experiment(CMD, paths[i], &t, 0) < 0)
			goto out;
	if (!(group = calloc(t.n + 1, sizeof(*group)))) {
		fprintf(stderr, CMD ": out of memory\n");
		goto out;
	}
	for (size_t k = 0; k < t.n; k++)
		group[k] = (uint32_t)t.node[k].group;
	if (!(file = output_path(out)) || asprintf(&tmp, "%s.tmp%ld", file, (long)getpid()) < 0) {
		tmp = NULL;
		goto out;
	}
	FILE *f = fopen(tmp, "w");

	if (!f) {
		fprintf(stderr, CMD ": cannot write '%s': %s\n", file, strerror(errno));
		goto out;
	}
	int w = sonde_report_write(f, (const struct sonde_exp *const *)t.exps, t.names, group, t.n, paths, npaths, &o,
				   warn, NULL, err, sizeof(err));
	int werr = ferror(f) ? errno : 0;

	if (fclose(f) && !werr)
		werr = errno ? errno : EIO;
	if (w < 0 || werr) {
		unlink(tmp);
		if (w < 0)
			fprintf(stderr, CMD ": %s\n", err);
		else
			fprintf(stderr, CMD ": cannot write '%s': %s\n", file, strerror(werr));
		goto out;
	}
	if (rename(tmp, file) < 0) {
		fprintf(stderr, CMD ": cannot write '%s': %s\n", file, strerror(errno));
		unlink(tmp);
		goto out;
	}
	struct stat st;

	printf("sonde report: wrote %s (%.1f KiB)\n", file, stat(file, &st) == 0 ? (double)st.st_size / 1024 : 0.0);
	rc = 0;
	/* Damaged data: the report covers only what could be read. */
	for (size_t e = 0; e < t.n; e++) {
		size_t nerr = sonde_exp_nerrors(t.exps[e]);

		if (!nerr)
			continue;
		fprintf(stderr,
			CMD ": '%s' is damaged (%zu read error%s, listed in the report); the report covers only "
			    "the data that could be read\n",
			t.names[e], nerr, nerr == 1 ? "" : "s");
		rc = 1;
	}
out:
	sonde_exp_tree_release(&t);
	free(group);
	free(file);
	free(tmp);
	free(paths);
	free(pathmap);
	free(addpath);
	return rc;
}
