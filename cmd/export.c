/*
 * sonde export: the experiments in a format other tools read
 * (doc/sonde-export.md).
 *
 *	sonde export --format pprof|folded|speedscope|chrome [-o FILE]
 *		[-metric NAME] [-thread_select LIST] [-object_select LIST]
 *		[-sample_select LIST] [-time START-END] [-inlines on|off]
 *		[-name long|short|mangled] [--max-units N] EXPERIMENT...
 *
 * Options take one dash or two, and "--opt=value" as well as "--opt
 * value".  The experiments are added together as sonde print adds them,
 * each founder with its descendants' sub-experiments; the filters are
 * sonde print's.  The formats are the table of lib/views/export.h.
 *
 * Exit status: 0; 1 when an experiment could not be opened or is damaged
 * (the output covers what could be read), or the output could not be
 * written; 2 for a usage error (an unknown option, format or metric, a
 * metric the experiments did not record, a filter that selects nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "reader/experiment.h"
#include "reader/exptree.h"
#include "model/filter.h"
#include "views/export.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde export --format FORMAT [-o FILE] [OPTIONS] EXPERIMENT...\n"
		   "\n"
		   "Writes the experiments (added together, with their descendants') in FORMAT:\n");
	for (size_t i = 0; i < sonde_export_nformats; i++)
		fprintf(f, "  %-11s %s\n", sonde_export_formats[i].name, sonde_export_formats[i].help);
	fprintf(f, "\n"
		   "Options (one dash or two):\n"
		   "  -o FILE               write to FILE (default: standard output)\n"
		   "  -metric NAME          the metric to carry (default: the experiment's default,\n"
		   "                        totalcpu with clock profiling); pprof carries every\n"
		   "                        recorded metric and makes NAME its default\n"
		   "  -thread_select LIST   only these threads (numbers as sonde print -threads shows)\n"
		   "  -object_select LIST   only these load objects' functions; the rest folded per object\n"
		   "  -sample_select LIST   only events in these samples (as sonde print -samples shows)\n"
		   "  -time START-END       only events from START to END seconds after the start\n"
		   "                        (END may be left out); also -time_select\n"
		   "  -cpu_select LIST      only events taken on these CPUs (0,2-3)\n"
		   "  -callpath_select F|A>B,...  only events whose stack holds F, or A calling B\n"
		   "  -inlines on|off       inlined functions as their own frames (on, the default)\n"
		   "  -tailcalls on|off     frames that tail calls left off restored from DWARF (on)\n"
		   "  -viewmode user|expert|machine  an OpenMP or Java program's stacks as its source has them (user,\n"
		   "                        the default), with the runtime's frames (expert), as recorded\n"
		   "  -name long|short|mangled  function names as sonde print -name shows them\n"
		   "  --max-units N         the budget of a timeline: speedscope's frames (default\n"
		   "                        %zu), chrome's events (%zu); 0: no limit\n",
		sonde_export_find("speedscope")->budget, sonde_export_find("chrome")->budget);
}

static void note(void *arg, const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "sonde export: note: %s\n", msg);
}

int cmd_export(int argc, char **argv)
{
	struct sonde_export_opts o;
	const struct sonde_export_format *fmt = NULL;
	const char *out = NULL, *format = NULL;
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0;
	struct sonde_exp_tree t;
	bool only_paths = false;
	int rc = 0;
	char err[1024];

	sonde_export_opts_init(&o);
	sonde_exp_tree_init(&t);
	o.note = note;
	if (!paths) {
		fprintf(stderr, "sonde export: out of memory\n");
		return 1;
	}
	if (argc < 2) {
		usage(stderr);
		free(paths);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_paths || a[0] != '-' || !a[1]) {
			paths[npaths++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_paths = true;
			continue;
		}
		const char *name = a + (a[1] == '-' ? 2 : 1), *val = NULL;
		char opt[64];
		size_t nl = strcspn(name, "=");

		if (nl >= sizeof(opt))
			nl = sizeof(opt) - 1;
		memcpy(opt, name, nl);
		opt[nl] = '\0';
		if (name[nl] == '=')
			val = name + nl + 1;
		if (!strcmp(opt, "h") || !strcmp(opt, "help")) {
			usage(stdout);
			goto out;
		}
		static const char *const with_arg[] = { "format", "o", "output", "metric", "name", "max-units",
							"max_units" };
		bool known = sonde_filter_find(opt) != NULL;

		for (size_t k = 0; k < sizeof(with_arg) / sizeof(with_arg[0]); k++)
			known |= !strcmp(opt, with_arg[k]);
		if (!known) {
			fprintf(stderr, "sonde export: unknown option '%s' (try 'sonde export --help')\n", a);
			rc = 2;
			goto out;
		}
		if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "sonde export: %s needs an argument\n", a);
				rc = 2;
				goto out;
			}
			val = argv[++i];
		}
		if (!strcmp(opt, "format")) {
			format = val;
		} else if (!strcmp(opt, "o") || !strcmp(opt, "output")) {
			out = val;
		} else if (!strcmp(opt, "metric")) {
			o.metric = val;
		} else if (sonde_filter_find(opt)) {
			if (sonde_filter_parse(&o.filter, opt, val, err, sizeof(err)) < 0) {
				fprintf(stderr, "sonde export: -%s: %s\n", opt, err);
				rc = 2;
				goto out;
			}
		} else if (!strcmp(opt, "name")) {
			if (sonde_namefmt_parse(&o.names, val, err, sizeof(err)) < 0) {
				fprintf(stderr, "sonde export: -name: %s\n", err);
				rc = 2;
				goto out;
			}
		} else {
			char *e;
			unsigned long long n = strtoull(val, &e, 10);

			if (e == val || *e || val[0] == '-') {
				fprintf(stderr, "sonde export: --max-units: '%s' is not a number\n", val);
				rc = 2;
				goto out;
			}
			o.max_units = (size_t)n;
		}
	}
	if (!format) {
		fprintf(stderr, "sonde export: no --format given (one of");
		for (size_t i = 0; i < sonde_export_nformats; i++)
			fprintf(stderr, "%s %s", i ? "," : "", sonde_export_formats[i].name);
		fprintf(stderr, ")\n");
		rc = 2;
		goto out;
	}
	if (!(fmt = sonde_export_find(format))) {
		fprintf(stderr, "sonde export: unknown format '%s' (formats:", format);
		for (size_t i = 0; i < sonde_export_nformats; i++)
			fprintf(stderr, "%s %s", i ? "," : "", sonde_export_formats[i].name);
		fprintf(stderr, ")\n");
		rc = 2;
		goto out;
	}
	if (!npaths) {
		fprintf(stderr, "sonde export: no experiment given (try 'sonde export --help')\n");
		rc = 2;
		goto out;
	}
	if (!out && !strcmp(fmt->name, "pprof") && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "sonde export: pprof is gzip-compressed binary: give -o FILE or redirect the output\n");
		rc = 2;
		goto out;
	}
	for (size_t i = 0; i < npaths; i++)
		if (cmd_open_experiment("sonde export", paths[i], &t, 0) < 0)
			rc = 1;
	if (!t.n)
		goto out;

	FILE *f = stdout;

	if (out && strcmp(out, "-") && !(f = fopen(out, "wb"))) {
		fprintf(stderr, "sonde export: cannot open '%s' for writing: %s\n", out, strerror(errno));
		rc = 1;
		goto out;
	}
	int r = sonde_export_write(f, fmt, (const struct sonde_exp *const *)t.exps, t.n, &o, err, sizeof(err));

	if (f != stdout && fclose(f) && !r) {
		snprintf(err, sizeof(err), "error writing '%s': %s", out, strerror(errno));
		r = -SONDE_ERR_FAILED;
	}
	if (r < 0) {
		fflush(stdout);
		fprintf(stderr, "sonde export: %s\n", err);
		if (f != stdout)
			unlink(out); /* no half-written file */
		rc = r == -SONDE_ERR_FAILED ? 1 : 2;
		goto out;
	}
	/* Damaged data: the export covers only what could be read. */
	for (size_t e = 0; e < t.n; e++) {
		size_t nerr = sonde_exp_nerrors(t.exps[e]), np;
		const struct sonde_problem *p = sonde_exp_problems(t.exps[e], &np);

		if (!nerr)
			continue;
		for (size_t i = 0; i < np; i++)
			if (p[i].severity == SONDE_PROBLEM_ERROR)
				fprintf(stderr, "sonde export: '%s': %s\n", t.names[e], p[i].msg);
		fprintf(stderr,
			"sonde export: '%s' is damaged (%zu read error%s); the export covers only the data "
			"that could be read\n",
			t.names[e], nerr, nerr == 1 ? "" : "s");
		rc = 1;
	}
out:
	sonde_exp_tree_release(&t);
	free(paths);
	return rc;
}
