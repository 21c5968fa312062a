/*
 * sonde agg: DTrace-style aggregations over the events of an experiment,
 * or over lines of standard input.
 *
 *	sonde agg [-x OPTION[=VALUE]]... 'PROGRAM' [EXPERIMENT]
 *	sonde agg [-x OPTION[=VALUE]]... -s FILE [EXPERIMENT]
 *
 * The program is compiled first (errors name the line and column, exit 2);
 * then BEGIN runs, every event is fed to the program, END runs, and every
 * aggregation not printed yet is printed as dtrace prints it at exit.
 * Events skipped because their evaluation failed, and damaged experiment
 * data, are reported on stderr and make the exit status 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "agg/dlang.h"
#include "base/grow.h"
#include "symbols/symbols.h"
#include "reader/experiment.h"
#include "reader/exptree.h"

/* "KIND (field field ...)" of an event kind, appended to buf. */
static size_t kind_fields(char *buf, size_t len, size_t n, const struct sonde_dl_kind *k)
{
	/* \001: a space the lines do not break at (the name stays with its fields) */
	n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s\001(", k->name);
	for (size_t i = 0; i < k->nfields; i++)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? " " : "", k->fields[i].name);
	return n + (size_t)snprintf(buf + n, n < len ? len - n : 0, ")");
}

/* The kinds of events and their fields, from agg's own kinds and the data
 * kinds' modules, filled to 75 columns. */
static void usage_kinds(FILE *f)
{
	char text[2048];
	const struct sonde_dl_kind *traced[SONDE_KIND_MAX];
	size_t n = 0, nt = 0;

	for (int id = 1; id <= SONDE_KIND_MAX; id++)
		if (sonde_kind_modular(id) && sonde_dl_kind_of(id))
			traced[nt++] = sonde_dl_kind_of(id);
	n += (size_t)snprintf(text, sizeof text,
			      "DTrace-style aggregations.  Without an experiment the events are the lines "
			      "of standard input (kind stdin, fields $0 $1 $2 ...); with one, its recorded "
			      "events: kind ");
	n = kind_fields(text, sizeof text, n, sonde_dl_kind_of(SONDE_KIND_PROFILE));
	for (size_t i = 0; i < nt; i++) {
		n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, "%s",
				      i == 0 ? ", and as traced: " : i + 1 == nt ? " and " : ", ");
		n = kind_fields(text, sizeof text, n, traced[i]);
	}
	if (n + 2 >= sizeof text)
		n = sizeof text - 3;
	n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0,
			      ".  An experiment is read with its sub-experiments (descendants, an MPI "
			      "job's ranks); in every kind but stdin, pid and rank name the process "
			      "of the event (rank -1: not an MPI rank)");
	if (n + 2 >= sizeof text)
		n = sizeof text - 3;
	text[n++] = '.';
	text[n] = '\0';
	/* Break at the last space that keeps a line within 75 columns. */
	const char *p = text;
	while (*p) {
		size_t len = strlen(p), cut = len;
		if (len > 75) {
			cut = 75;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (!cut)
				cut = 75;
		}
		for (size_t i = 0; i < cut; i++)
			fputc(p[i] == '\001' ? ' ' : p[i], f);
		fputc('\n', f);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde agg [-x OPTION[=VALUE]]... 'PROGRAM' [EXPERIMENT]\n"
		"       sonde agg [-x OPTION[=VALUE]]... -s FILE [EXPERIMENT]\n"
		"\n");
	usage_kinds(f);
	fprintf(f,
		"\n"
		"  PROGRAM   clauses KIND [/predicate/] { statements }, and BEGIN / END\n"
		"            statements: @name[key, ...] = count() | sum(v) | min(v) | max(v)\n"
		"            | avg(v) | stddev(v) | quantize(v[, incr])\n"
		"            | lquantize(v, base, limit[, step[, incr]])\n"
		"            | llquantize(v, factor, low, high, steps[, incr]);\n"
		"            in BEGIN/END: printa(@a[, @b...]) normalize(@a, n) denormalize(@a)\n"
		"            trunc(@a[, n]) clear(@a)\n"
		"  -s FILE   read the program from FILE\n"
		"  -tailcalls on|off  caller: the function a tail call left off (on, the\n"
		"            default, as sonde print restores it) or the frame as recorded\n"
		"  -x OPT    aggsortkey, aggsortrev, aggsortpos=N, aggsortkeypos=N\n"
		"\n"
		"examples:\n"
		"  seq 1 1000 | sonde agg 'stdin { @ = quantize($1); }'\n"
		"  sonde agg 'stdin /$2 > 0/ { @[$1] = sum($2); } END { normalize(@, 10); }' < file\n"
		"  sonde agg 'profile { @[func] = count(); }' test.1.er\n"
		"  sonde agg 'heap /event == \"alloc\"/ { @[func] = quantize(size); }' test.1.er\n"
		"  sonde agg 'sync { @[object] = llquantize(wait, 10, 3, 9, 10); }' test.1.er\n"
		"  sonde agg 'io /iofunc == \"write\"/ { @[file] = sum(bytes); }' test.1.er\n"
		"  sonde agg 'mpi { @[rank] = sum(dur); }' job.er\n"
		"\n"
		"See doc/sonde-agg.md.\n");
}

static int parse_uint(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 1000000 || *s == '-')
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int set_option(struct sonde_agg_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	const char *val = eq ? eq + 1 : NULL;

#define IS(name) (n == strlen(name) && !strncmp(arg, name, n))
	if (IS("aggsortkey") || IS("aggsortrev")) {
		bool on = true;

		if (val && (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "off")))
			on = false;
		else if (val && strcmp(val, "1") && strcmp(val, "true") && strcmp(val, "on") && *val) {
			fprintf(stderr, "sonde agg: -x %.*s takes no value or 0/1, not '%s'\n", (int)n,
				arg, val);
			return -1;
		}
		if (IS("aggsortkey"))
			o->sortkey = on;
		else
			o->sortrev = on;
		return 0;
	}
	if (IS("aggsortpos") || IS("aggsortkeypos")) {
		unsigned v;

		if (!val || parse_uint(val, &v)) {
			fprintf(stderr, "sonde agg: -x %.*s needs a number: -x %.*s=N\n", (int)n, arg,
				(int)n, arg);
			return -1;
		}
		if (IS("aggsortpos"))
			o->sortpos = v;
		else
			o->sortkeypos = v;
		return 0;
	}
	if (IS("quiet")) /* dtrace -q: the output is always quiet */
		return 0;
#undef IS
	fprintf(stderr,
		"sonde agg: unknown option '%.*s' for -x (aggsortkey, aggsortrev, aggsortpos=N, "
		"aggsortkeypos=N)\n",
		(int)n, arg);
	return -1;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "sonde agg: cannot open '%s': %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (sonde_grow(&buf, &cap, len + 4096 + 1, 1, 8192)) {
			fprintf(stderr, "sonde agg: out of memory reading '%s'\n", path);
			free(buf);
			fclose(f);
			return NULL;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "sonde agg: cannot read '%s': %s\n", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		fprintf(stderr, "sonde agg: '%s' holds a NUL byte; it is not a program\n", path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* "sonde agg: L:C: message", then the line and a caret under the column. */
static void report(const char *src, const char *srcname, const struct sonde_dl_error *e)
{
	if (!e->line) {
		fprintf(stderr, "sonde agg: %s\n", e->msg);
		return;
	}
	fprintf(stderr, "sonde agg: %s%s%u:%u: %s\n", srcname ? srcname : "", srcname ? ":" : "",
		e->line, e->col, e->msg);
	const char *p = src;

	for (unsigned l = 1; l < e->line && *p; p++)
		if (*p == '\n')
			l++;
	const char *end = strchr(p, '\n');
	int n = end ? (int)(end - p) : (int)strlen(p);

	if (n > 200)
		return;
	fprintf(stderr, "  %.*s\n  ", n, p);
	for (unsigned c = 1; c < e->col && (int)c <= n; c++)
		fputc(p[c - 1] == '\t' ? '\t' : ' ', stderr);
	fprintf(stderr, "^\n");
}

/* -tailcalls off: caller is the function of the frame as recorded. */
static bool no_tailcalls;

/* Function names for func/caller: the symbol layer's short names, for
 * frames of every kind; a caller is the innermost frame that tail calls
 * left off between it and the callee (native frames), as sonde print
 * restores them. */
static const char *syms_name(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *fr, uint64_t time_ns,
			     const struct sonde_frame *callee, const char **object)
{
	const struct sonde_func *f = sonde_syms_frame(ctx, fr, time_ns);

	(void)exp;
	if (object)
		*object = f->object ? f->object->name : NULL;
	if (callee && !fr->exact && !no_tailcalls && fr->kind == SONDE_FRAME_NATIVE &&
	    callee->kind == SONDE_FRAME_NATIVE) {
		const struct sonde_func *g = sonde_syms_lookup(ctx, callee->pc, callee->exact, time_ns);
		const struct sonde_func *chain[SONDE_TAIL_MAX];
		int n = sonde_syms_tailcalls(ctx, fr->pc, time_ns, g, chain, SONDE_TAIL_MAX);

		if (n > 0)
			return chain[n - 1]->name_short;
	}
	return f->name_short;
}

int cmd_agg(int argc, char **argv)
{
	struct sonde_agg_opts opts = { 0 };
	const char *progfile = NULL, *progtext = NULL, *expdir = NULL;
	char *src = NULL;
	bool only_args = false;
	int rc = 0;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			if (!progtext && !progfile) {
				progtext = a;
			} else if (!expdir) {
				expdir = a;
			} else {
				fprintf(stderr, "sonde agg: too many arguments at '%s' (one program and "
						"at most one experiment)\n",
					a);
				return 2;
			}
		} else if (!strcmp(a, "--")) {
			only_args = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "-help") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strncmp(a, "-x", 2)) {
			const char *opt = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL;

			if (!opt) {
				fprintf(stderr, "sonde agg: -x needs an option (aggsortkey, aggsortrev, "
						"aggsortpos=N, aggsortkeypos=N)\n");
				return 2;
			}
			if (set_option(&opts, opt))
				return 2;
		} else if (!strcmp(a, "-tailcalls")) {
			const char *v = i + 1 < argc ? argv[++i] : "";

			if (strcmp(v, "on") && strcmp(v, "off")) {
				fprintf(stderr, "sonde agg: -tailcalls: '%s' is not on or off\n", v);
				return 2;
			}
			no_tailcalls = !strcmp(v, "off");
		} else if (!strcmp(a, "-s")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "sonde agg: -s needs a program file\n");
				return 2;
			}
			if (progtext) { /* the program came first: it was the experiment */
				fprintf(stderr, "sonde agg: give either -s FILE or a program, not both\n");
				return 2;
			}
			progfile = argv[++i];
		} else {
			fprintf(stderr, "sonde agg: unknown option '%s' (try 'sonde agg -h')\n", a);
			return 2;
		}
	}
	if (progfile && progtext) {
		/* `-s FILE EXP`: the positional argument is the experiment */
		if (expdir) {
			fprintf(stderr, "sonde agg: give either -s FILE or a program, not both\n");
			return 2;
		}
		expdir = progtext;
		progtext = NULL;
	}
	if (!progfile && !progtext) {
		fprintf(stderr, "sonde agg: no program given (try 'sonde agg -h')\n");
		return 2;
	}
	if (progfile && !(src = read_file(progfile)))
		return 2;

	const char *text = src ? src : progtext;
	struct sonde_exp_tree tree;
	char err[512];

	/* The experiment given and its sub-experiments (a job's ranks, a
	 * program's descendants), as sonde print reads them: one program
	 * over every process's events, pid and rank telling them apart.  A
	 * sub-experiment given by itself is read alone. */
	sonde_exp_tree_init(&tree);
	if (expdir && cmd_open_experiment("sonde agg", expdir, &tree, 0) < 0) {
		free(src);
		return 1;
	}
	/* An experiment has profile events (maybe none: the clock profile's
	 * module) and the traced kinds it was collected with: at most one
	 * per kind of sonde/kinds.h; the program may use those of any
	 * process of the tree. */
	const struct sonde_dl_kind *kinds[SONDE_KIND_MAX + 1] = { expdir ? sonde_dl_kind_of(SONDE_KIND_PROFILE)
									 : &sonde_dl_kind_stdin };
	size_t nkinds = 1;

	for (int id = 1; expdir && id <= SONDE_KIND_MAX; id++) {
		bool traced = false;

		for (size_t i = 0; i < tree.n && !traced; i++)
			traced = sonde_exp_traced(tree.exps[i], id);
		if (traced && sonde_kind_modular(id) && sonde_dl_kind_of(id))
			kinds[nkinds++] = sonde_dl_kind_of(id);
	}
	struct sonde_dl_error e;
	struct sonde_dl_prog *prog = sonde_dl_compile(text, kinds, nkinds, &opts, &e);

	if (!prog) {
		report(text, progfile, &e);
		sonde_exp_tree_release(&tree);
		free(src);
		return 2;
	}

	static char obuf[1 << 16];

	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	int64_t n = 0;

	if (sonde_dl_begin(prog, stdout, err, sizeof(err)))
		goto fatal;
	/* Function names for func and caller come from the symbol layer;
	 * without it (out of memory) the stand-in "object+0xoffset" names.
	 * Each process in turn, in the tree's order (founder first, then
	 * its sub-experiments by name); its events, kind by kind, the
	 * profile's first. */
	for (size_t i = 0; expdir && n >= 0 && i < tree.n; i++) {
		struct sonde_exp *exp = tree.exps[i];
		struct sonde_syms *syms = sonde_syms_open(exp);
		sonde_dl_name_fn namer = syms ? syms_name : NULL;

		sonde_dl_set_process(prog, tree.node[i].pid ? (int64_t)tree.node[i].pid : -1,
				     tree.node[i].rank);
		for (int id = 1; n >= 0 && id <= SONDE_KIND_MAX; id++)
			n = sonde_dl_run_kind(prog, id, exp, namer, syms, err, sizeof(err));
		if (syms)
			sonde_syms_close(syms);
	}
	if (!expdir)
		n = sonde_dl_run_stdin(prog, STDIN_FILENO, err, sizeof(err));
	if (n < 0)
		goto fatal;
	if (sonde_dl_end(prog, stdout, err, sizeof(err)))
		goto fatal;

	char msg[600];

	if (sonde_dl_problems(prog, msg, sizeof(msg))) {
		fflush(stdout);
		fprintf(stderr, "sonde agg: %s\n", msg);
		rc = 1;
	}
	for (size_t i = 0; expdir && i < tree.n; i++) {
		struct sonde_exp *exp = tree.exps[i];
		size_t np, nerr = sonde_exp_nerrors(exp);
		const struct sonde_problem *p = sonde_exp_problems(exp, &np);

		if (!nerr)
			continue;
		fflush(stdout);
		for (size_t j = 0; j < np; j++)
			if (p[j].severity == SONDE_PROBLEM_ERROR)
				fprintf(stderr, "sonde agg: '%s': %s\n", tree.names[i], p[j].msg);
		fprintf(stderr,
			"sonde agg: '%s' is damaged (%zu read error%s); the aggregations cover only "
			"the data that could be read\n",
			tree.names[i], nerr, nerr == 1 ? "" : "s");
		rc = 1;
	}
	goto out;
fatal:
	fflush(stdout);
	fprintf(stderr, "sonde agg: %s\n", err);
	rc = 1;
out:
	fflush(stdout);
	sonde_dl_free(prog);
	sonde_exp_tree_release(&tree);
	free(src);
	return rc;
}
