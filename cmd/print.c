/*
 * sonde print: er_print-style views of experiments.
 *
 *	sonde print [COMMAND...] EXPERIMENT...
 *
 * Commands are single-dash words, some with one argument (-metrics SPEC),
 * run in order like er_print's: settings (-metrics, -sort, -limit, -name,
 * -thread_select, -printmode, -outfile, ...) apply to the views after them.
 * Every command, including those of -script files, is parsed and checked
 * before any experiment is opened, so a typo fails fast (exit 2).  With no
 * command, an interactive prompt when stdin is a terminal, else -header.
 *
 * The experiments on the command line are added together into one profile
 * (lib/model/profile.h), built when the first view needs it and again when a
 * selection changes; -compare builds one per experiment instead.  -header,
 * -dump and -statistics report on each experiment.  The views themselves
 * are in lib/views/ (view.h, view_exp.h); this file is the command
 * language: one table, commands[], gives each command's argument, the
 * check of its argument, its run function and its line of -help.
 *
 * Exit status: 0; 1 when an experiment could not be opened or is damaged,
 * or output could not be written; 2 for a usage error (unknown command,
 * bad argument, unknown function or metric).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "base/grow.h"
#include "reader/experiment.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "views/view.h"
#include "views/view_exp.h"
#include "views/view_table.h"

struct step {
	const struct command *cmd;
	char *arg;   /* owned; NULL without argument */
	char *where; /* owned: "FILE:LINE" for steps of scripts, else NULL */
};

struct steps {
	struct step *v;
	size_t n, cap;
};

/* Prints "sonde print: [WHERE: ]MSG". */
static void complain(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void complain(const char *where, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "sonde print: ");
	if (where)
		fprintf(stderr, "%s: ", where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* ---- the state of a run ----------------------------------------------------- */

struct state {
	struct sonde_view_opts o;
	char *thread_select, *object_select, *sample_select;
	uint64_t start_ns, end_ns; /* -time; end 0: none */
	bool no_inlines;
	bool no_tailcalls;
	char **pathmap; /* -pathmap OLD NEW pairs: 2 * npathmap strings */
	size_t npathmap;
	char **addpaths;
	size_t naddpath;

	struct sonde_exp **exps; /* the selected experiments (-experiment_select) */
	const char **names;
	size_t nexps;
	struct sonde_exp **all_exps; /* every experiment loaded, founders with */
	const char **all_names;	     /* their descendants after them */
	size_t nall;

	struct sonde_profile prof;
	bool have_prof;
	struct sonde_profile *cprof; /* -compare: one per experiment */
	bool have_cprof;
	bool *reported; /* symbol problems said, per experiment */

	FILE *out;
	bool printed;
	bool interactive;
	int rc;
};

static void set_rc(struct state *st, int rc)
{
	if (rc > st->rc)
		st->rc = rc;
}

static void drop_profiles(struct state *st)
{
	if (st->have_prof)
		sonde_profile_release(&st->prof);
	st->have_prof = false;
	if (st->have_cprof)
		for (size_t i = 0; i < st->nexps; i++)
			sonde_profile_release(&st->cprof[i]);
	st->have_cprof = false;
}

static void report_symbols(struct state *st, const struct sonde_profile *p, size_t first_exp)
{
	for (size_t i = 0; i < p->nexps; i++) {
		size_t e = first_exp + i, n, a = 0;

		/* said once per experiment loaded, whatever the selection */
		while (a < st->nall && st->all_exps[a] != st->exps[e])
			a++;
		if (st->reported[a] || !p->syms || !p->syms[i])
			continue;
		st->reported[a] = true;
		const char *const *msg = sonde_syms_problems(p->syms[i], &n);

		for (size_t k = 0; k < n; k++)
			complain(NULL, "warning: '%s': %s", st->names[e], msg[k]);
	}
}

static int build(struct state *st, struct sonde_profile *p, size_t first, size_t n)
{
	struct sonde_profile_opts po = { 0 };
	char err[512];

	po.thread_select = st->thread_select;
	po.object_select = st->object_select;
	po.sample_select = st->sample_select;
	po.start_ns = st->start_ns;
	po.end_ns = st->end_ns;
	po.no_inlines = st->no_inlines;
	po.no_tailcalls = st->no_tailcalls;
	if (sonde_profile_build(p, (const struct sonde_exp *const *)st->exps + first, n, &po, err,
				sizeof(err)) < 0) {
		complain(NULL, "%s", err);
		return -1;
	}
	report_symbols(st, p, first);
	return 0;
}

static struct sonde_profile *profile(struct state *st)
{
	if (!st->have_prof) {
		if (build(st, &st->prof, 0, st->nexps) < 0)
			return NULL;
		st->have_prof = true;
	}
	return &st->prof;
}

static struct sonde_profile *cprofiles(struct state *st)
{
	if (!st->have_cprof) {
		for (size_t i = 0; i < st->nexps; i++)
			if (build(st, &st->cprof[i], i, 1) < 0) {
				while (i-- > 0)
					sonde_profile_release(&st->cprof[i]);
				return NULL;
			}
		st->have_cprof = true;
	}
	return st->cprof;
}

/* Opens FILE for later output ("-": stdout). */
static int set_output(struct state *st, const char *file, bool append)
{
	FILE *f = stdout;

	if (strcmp(file, "-")) {
		f = fopen(file, append ? "a" : "w");
		if (!f) {
			complain(NULL, "cannot open '%s': %s", file, strerror(errno));
			return -1;
		}
	}
	if (st->out != stdout && fclose(st->out)) {
		complain(NULL, "error writing the output file: %s", strerror(errno));
		set_rc(st, 1);
	}
	st->out = f;
	st->printed = false;
	return 0;
}

/* The function called name; 0, or -1 after saying why (exit 2). */
static int find_function(struct state *st, const struct sonde_profile *p, const char *name,
			 uint32_t *func)
{
	enum { MAXC = 20 };
	uint32_t cands[MAXC];
	const struct sonde_model *m = p->model;
	size_t n = sonde_view_find(m, name, st->o.names, func, cands, MAXC);

	if (n == 1)
		return 0;
	if (n == 0) {
		/* known to the symbol tables but never sampled? */
		for (size_t i = 0; i < p->nexps; i++) {
			const struct sonde_func *sf;

			if (p->syms && p->syms[i] && sonde_syms_find(p->syms[i], name, &sf, 1) > 0) {
				complain(NULL, "function '%s' has no samples", name);
				return -1;
			}
		}
		complain(NULL, "no function '%s' (see -functions; names as -name %s shows them)", name,
			 st->o.names == SONDE_NAME_SHORT	 ? "short"
			 : st->o.names == SONDE_NAME_MANGLED ? "mangled"
							     : "long");
		return -1;
	}
	fflush(stdout);
	fprintf(stderr, "sonde print: function name '%s' is ambiguous; choose one as '%s:N':\n", name,
		name);
	for (size_t i = 0; i < n && i < MAXC; i++) {
		const struct sonde_mfunc *fi = sonde_model_funcinfo(m, cands[i]);
		const struct sonde_mobject *ob = fi->object < sonde_model_nobjects(m)
							 ? sonde_model_objectinfo(m, fi->object)
							 : NULL;

		fprintf(stderr, "  %zu) %s  (%s, 0x%" PRIx64 ")\n", i + 1, sonde_view_funcname(fi, st->o.names),
			ob && ob->path ? ob->path : "?", fi->lo);
	}
	if (n > MAXC)
		fprintf(stderr, "  ... and %zu more\n", n - MAXC);
	return -1;
}

/* Before a view's output: a blank line after the previous one (text and
 * csv; json documents are one a line). */
static void separate(struct state *st)
{
	struct sonde_emit e;

	em_init(&e, st->out, st->o.mode);
	if (st->printed)
		em_between(&e);
	st->printed = true;
}

/* The default metrics follow the data, as er_print's do: clock-profile
 * time when there is any (with off-CPU time recorded: Total Thread Time
 * and its parts, CPU, Wait CPU, User Lock, Other Wait), then each traced
 * kind's main metrics; the sort key is the first of them.  -metrics and
 * -sort override. */
static void default_metrics(struct state *st)
{
	bool clock = false, traced = false, offcpu = false;
	bool kind[SONDE_KIND_MAX + 1] = { false };
	for (size_t i = 0; i < st->nexps; i++) {
		const struct sonde_exp *e = st->exps[i];
		clock |= sonde_metric_recorded(e, SONDE_M_TOTALCPU);
		offcpu |= sonde_exp_has_offcpu(e);
		for (int id = 1; id <= SONDE_KIND_MAX; id++)
			if (sonde_kind_default_metrics(id, NULL) && sonde_exp_traced(e, id))
				traced = kind[id] = true;
	}
	if (!traced && !offcpu)
		return; /* the built-in default */
	char spec[512] = "";
	size_t n = 0;
	const char *sort = offcpu ? "total" : clock ? "totalcpu" : NULL;
	if (offcpu)
		n += (size_t)snprintf(spec + n, sizeof spec - n,
				      "e.%%total:i.%%total:e.totalcpu:e.wait:e.ulock:e.owait:");
	else if (clock)
		n += (size_t)snprintf(spec + n, sizeof spec - n, "e.%%totalcpu:i.%%totalcpu:");
	for (int id = 1; id <= SONDE_KIND_MAX; id++) {
		const char *ksort;
		const char *m = kind[id] ? sonde_kind_default_metrics(id, &ksort) : NULL;
		if (!m)
			continue;
		n += (size_t)snprintf(spec + n, sizeof spec - n, "%s", m);
		if (!sort)
			sort = ksort;
	}
	snprintf(spec + n, sizeof spec - n, "name");
	char err[256];
	if (sonde_mspec_parse(&st->o.metrics, spec, err, sizeof err) < 0)
		return;
	st->o.sort.flavor = 'e';
	snprintf(st->o.sort.metric, sizeof st->o.sort.metric, "%s", sort);
}

/* ---- opening and selecting the experiments (C10) ----------------------------- */

/* The experiment at path, then (for a founder) the sub-experiments of its
 * descendants (cmd/expopen.c); one that cannot be opened is said and
 * makes the exit status 1. */
static void open_with_descendants(struct state *st, const char *path)
{
	if (cmd_open_experiment("sonde print", path, &st->all_exps, &st->all_names, &st->nall) < 0)
		set_rc(st, 1);
}

/* -experiment_select: "all", or numbers and ranges ("1,3-5") as
 * -experiment_list shows them.  Returns -1 on a bad list. */
static int select_experiments(struct state *st, const char *spec)
{
	bool *want = calloc(st->nall + 1, sizeof(*want));

	if (!want)
		return -1;
	if (!strcmp(spec, "all")) {
		for (size_t i = 0; i < st->nall; i++)
			want[i] = true;
	} else {
		const char *p = spec;

		while (*p) {
			char *end;
			long lo = strtol(p, &end, 10), hi = lo;

			if (end == p)
				goto bad;
			if (*end == '-') {
				p = end + 1;
				hi = strtol(p, &end, 10);
				if (end == p)
					goto bad;
			}
			if (lo < 1 || hi < lo || (size_t)hi > st->nall)
				goto bad;
			for (long k = lo; k <= hi; k++)
				want[k - 1] = true;
			p = end;
			if (*p == ',')
				p++;
			else if (*p)
				goto bad;
		}
	}
	drop_profiles(st);
	st->nexps = 0;
	for (size_t i = 0; i < st->nall; i++)
		if (want[i]) {
			st->exps[st->nexps] = st->all_exps[i];
			st->names[st->nexps++] = st->all_names[i];
		}
	free(want);
	return 0;
bad:
	free(want);
	complain(NULL, "-experiment_select: '%s' is not 'all' or a list of experiment numbers from 1 to %zu "
		       "(like 1,3-5)",
		 spec, st->nall);
	return -1;
}

/* The experiments loaded and selected, for the views of view_exp.h. */
static struct sonde_exp_set exp_set(const struct state *st)
{
	return (struct sonde_exp_set){
		.all = (const struct sonde_exp *const *)st->all_exps,
		.names = st->all_names,
		.nall = st->nall,
		.sel = (const struct sonde_exp *const *)st->exps,
		.nsel = st->nexps,
	};
}

/* ---- the commands ----------------------------------------------------------- */

/*
 * How to add a command: write its run function below (and a check function
 * when its argument can be checked before any experiment is opened), and
 * add one row to commands[], kept sorted by name.  The row drives parsing,
 * checking, -help and running.
 */

/* What a command takes after its name. */
enum arg_kind {
	ARG_NONE,
	ARG_ONE, /* one word */
	ARG_TWO, /* two (-pathmap OLD NEW), kept as one string "OLD\nNEW" */
};

struct command {
	const char *name;
	enum arg_kind arg_kind;
	const char *arg; /* the argument as -help names it; NULL with ARG_NONE */
	/* Checks the argument while parsing, before any experiment is
	 * opened: 0, or -1 with a message in err.  NULL: any will do. */
	int (*check)(const struct command *c, const char *arg, char *err, size_t errlen);
	/* Runs the command: 0, or a negated enum sonde_err with a message in
	 * err, said as "-NAME: MSG" (exit 2 for the user's mistakes, else 1).
	 * A command that says its problems itself sets st->rc and returns 0.
	 * (run_quit and run_script mark the commands that act while parsing.) */
	int (*run)(struct state *st, const struct step *s, char *err, size_t errlen);
	const char *help; /* one line of -help */
};

/* An argument that -help makes from the table of kinds: the -dump
 * arguments ("profile|stacks|...|io"). */
#define ARG_DUMPS "{dumps}"

/* ---- checking arguments ----------------------------------------------------- */

static int check_metrics(const struct command *c, const char *arg, char *err, size_t errlen)
{
	struct sonde_mspec s;

	return sonde_mspec_parse(&s, arg, err, errlen);
}

static int check_sort(const struct command *c, const char *arg, char *err, size_t errlen)
{
	struct sonde_sortkey k;

	return sonde_sort_parse(&k, arg, err, errlen);
}

static int check_limit(const struct command *c, const char *arg, char *err, size_t errlen)
{
	size_t l;

	return sonde_limit_parse(&l, arg, err, errlen);
}

static int check_name(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum sonde_namefmt n;

	return sonde_namefmt_parse(&n, arg, err, errlen);
}

static int check_printmode(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum sonde_printmode m;

	return sonde_printmode_parse(&m, arg, err, errlen);
}

static int check_compare(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum sonde_compare cm;

	return sonde_compare_parse(&cm, arg, err, errlen);
}

static int check_dump(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum sonde_dump_kind k;

	return sonde_dump_parse(&k, arg, err, errlen);
}

static int check_thread_list(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum { MAXT = 1 << 20 };
	bool *sel = calloc(MAXT + 1, sizeof(*sel));
	int rc;

	if (!sel) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = sonde_parse_list(arg, sel, MAXT, err, errlen);
	free(sel);
	return rc;
}

static int check_sample_list(const struct command *c, const char *arg, char *err, size_t errlen)
{
	return sonde_sample_list_check(arg, err, errlen);
}

static int check_time(const struct command *c, const char *arg, char *err, size_t errlen)
{
	uint64_t a, b;

	return strcmp(arg, "all") ? sonde_time_parse(arg, &a, &b, err, errlen) : 0;
}

static int check_percent(const struct command *c, const char *arg, char *err, size_t errlen)
{
	char *end;
	double d = strtod(arg, &end);

	if (end == arg || *end || !(d >= 0 && d <= 100)) {
		snprintf(err, errlen, "'%s' is not a percentage (0 to 100)", arg);
		return -1;
	}
	return 0;
}

static int check_on_off(const struct command *c, const char *arg, char *err, size_t errlen)
{
	if (strcmp(arg, "on") && strcmp(arg, "off")) {
		snprintf(err, errlen, "'%s' is not on or off", arg);
		return -1;
	}
	return 0;
}

static int check_pathmap(const struct command *c, const char *arg, char *err, size_t errlen)
{
	const char *nl = strchr(arg, '\n');

	if (!nl || nl == arg || !nl[1] || strchr(nl + 1, '\n')) {
		snprintf(err, errlen, "needs two paths: OLD NEW");
		return -1;
	}
	return 0;
}

/* A name, a file or a list that must not be empty. */
static int check_nonempty(const struct command *c, const char *arg, char *err, size_t errlen)
{
	if (!*arg) {
		snprintf(err, errlen, "-%s needs a non-empty argument", c->name);
		return -1;
	}
	return 0;
}

/* ---- commands that act while parsing ---------------------------------------- */

/* -quit and -exit end the commands (those after them are not even
 * checked); -script FILE reads FILE's commands in its place.  add_step()
 * does both; these never run. */
static int run_quit(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return 0;
}

static int run_script(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return 0;
}

/* ---- settings: they apply to the views after them --------------------------- */

static int run_metrics(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_mspec_parse(&st->o.metrics, s->arg, err, errlen);
	if (st->interactive) {
		char spec[512];

		sonde_mspec_format(&st->o.metrics, spec, sizeof(spec));
		printf("Current metrics: %s\n", spec);
	}
	return 0;
}

/* (The arguments of these were checked while parsing.) */
static int run_sort(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_sort_parse(&st->o.sort, s->arg, err, errlen);
	return 0;
}

static int run_limit(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_limit_parse(&st->o.limit, s->arg, err, errlen);
	return 0;
}

static int run_name(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_namefmt_parse(&st->o.names, s->arg, err, errlen);
	return 0;
}

static int run_printmode(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_printmode_parse(&st->o.mode, s->arg, err, errlen);
	return 0;
}

static int run_compare(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sonde_compare_parse(&st->o.compare, s->arg, err, errlen);
	return 0;
}

static int run_sthresh(struct state *st, const struct step *s, char *err, size_t errlen)
{
	st->o.sthresh = strtod(s->arg, NULL);
	return 0;
}

static int run_dthresh(struct state *st, const struct step *s, char *err, size_t errlen)
{
	st->o.dthresh = strtod(s->arg, NULL);
	return 0;
}

static int run_outfile(struct state *st, const struct step *s, char *err, size_t errlen)
{
	if (set_output(st, s->arg, false) < 0)
		set_rc(st, 1);
	return 0;
}

static int run_appendfile(struct state *st, const struct step *s, char *err, size_t errlen)
{
	if (set_output(st, s->arg, true) < 0)
		set_rc(st, 1);
	return 0;
}

/* -pathmap OLD NEW (pair: "OLD\nNEW", kept as two strings of one
 * allocation) and -addpath DIR: appended to the list *v of *n entries. */
static void add_path(struct state *st, char ***v, size_t *n, bool pair, const char *arg)
{
	size_t k = pair ? 2 : 1;
	char **nv = realloc(*v, (*n + 1) * k * sizeof(*nv));
	char *a = strdup(arg), *b = pair && a ? strchr(a, '\n') : NULL;

	if (!nv || !a) {
		if (nv)
			*v = nv;
		free(a);
		complain(NULL, "out of memory");
		set_rc(st, 1);
		return;
	}
	*v = nv;
	if (b)
		*b++ = '\0';
	nv[*n * k] = a;
	if (b)
		nv[*n * k + 1] = b;
	(*n)++;
	st->o.pathmap = (const char *const *)st->pathmap;
	st->o.npathmap = st->npathmap;
	st->o.addpath = (const char *const *)st->addpaths;
	st->o.naddpath = st->naddpath;
}

static int run_pathmap(struct state *st, const struct step *s, char *err, size_t errlen)
{
	add_path(st, &st->pathmap, &st->npathmap, true, s->arg);
	return 0;
}

static int run_addpath(struct state *st, const struct step *s, char *err, size_t errlen)
{
	add_path(st, &st->addpaths, &st->naddpath, false, s->arg);
	return 0;
}

/* ---- selections: they change the profile the views read --------------------- */

static int run_experiment_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	if (select_experiments(st, s->arg) < 0)
		set_rc(st, 2);
	return 0;
}

/* Replaces *slot with a copy of arg; the profiles are built again. */
static void set_select(struct state *st, char **slot, const char *arg)
{
	free(*slot);
	*slot = strdup(arg);
	drop_profiles(st);
}

static int run_thread_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->thread_select, s->arg);
	return 0;
}

static int run_object_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->object_select, s->arg);
	return 0;
}

static int run_sample_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->sample_select, s->arg);
	st->o.sample_select = st->sample_select;
	return 0;
}

static int run_time(struct state *st, const struct step *s, char *err, size_t errlen)
{
	uint64_t a = 0, b = 0;

	if (strcmp(s->arg, "all") && sonde_time_parse(s->arg, &a, &b, err, errlen) < 0)
		return -SONDE_ERR_FAILED; /* check_time took it already */
	if (a != st->start_ns || b != st->end_ns) {
		st->start_ns = st->o.start_ns = a;
		st->end_ns = st->o.end_ns = b;
		drop_profiles(st);
	}
	return 0;
}

static int run_inlines(struct state *st, const struct step *s, char *err, size_t errlen)
{
	bool off = !strcmp(s->arg, "off");

	if (st->no_inlines != off) {
		st->no_inlines = off;
		drop_profiles(st);
	}
	return 0;
}

static int run_tailcalls(struct state *st, const struct step *s, char *err, size_t errlen)
{
	bool off = !strcmp(s->arg, "off");

	if (st->no_tailcalls != off) {
		st->no_tailcalls = off;
		drop_profiles(st);
	}
	return 0;
}

/* ---- views of the experiments themselves (lib/views/view_exp.h) ------------- */

static void usage(FILE *f);

static int run_help(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	usage(st->out);
	return 0;
}

static int run_header(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	sonde_view_header(st->out, (const struct sonde_exp *const *)st->exps, st->nexps, &st->o);
	return 0;
}

static int run_dump(struct state *st, const struct step *s, char *err, size_t errlen)
{
	enum sonde_dump_kind kind;

	struct sonde_emit e;

	em_init(&e, st->out, st->o.mode);
	if (!em_is_text(&e))
		complain(NULL, "note: -dump prints text whatever the -printmode");
	separate(st);
	sonde_dump_parse(&kind, s->arg, err, errlen);
	for (size_t i = 0; i < st->nexps; i++) {
		if (i)
			fputc('\n', st->out);
		if (sonde_view_dump_tc(st->out, st->exps[i], kind, !st->no_tailcalls, err, errlen) < 0) {
			complain(NULL, "%s", err);
			set_rc(st, 1);
		}
	}
	return 0;
}

static int run_experiment_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_exp_set set = exp_set(st);

	separate(st);
	sonde_view_experiment_list(st->out, &set, &st->o);
	return 0;
}

static int run_processes(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_exp_set set = exp_set(st);

	separate(st);
	sonde_view_processes(st->out, &set, &st->o);
	return 0;
}

static int run_samples(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	return sonde_view_samples(st->out, (const struct sonde_exp *const *)st->exps, st->nexps, &st->o, err,
				  errlen);
}

static int run_overview(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	return sonde_view_overview(st->out, (const struct sonde_exp *const *)st->exps, st->nexps, &st->o, err,
				   errlen);
}

static int run_statistics(struct state *st, const struct step *s, char *err, size_t errlen)
{
	/* the tail-call counts are the profile's: built here if no view
	 * built it yet (the figures of the experiments come without it when
	 * it cannot be built) */
	struct sonde_profile *p = profile(st);

	separate(st);
	st->o.tailcalls = p ? &p->tail : NULL;
	int rc = sonde_view_statistics(st->out, (const struct sonde_exp *const *)st->exps, st->nexps, &st->o, err,
				       errlen);
	st->o.tailcalls = NULL;
	return rc;
}

/* ---- tracing views ---------------------------------------------------------- */

/* The selected experiments, when one of them traced kind; else NULL after
 * saying that none did (exit 2).  Separates the view's output. */
static const struct sonde_exp *const *traced(struct state *st, const struct step *s, int kind)
{
	const struct sonde_exp *const *ex = (const struct sonde_exp *const *)st->exps;
	char err[512];

	if (sonde_view_trace_check(ex, st->names, st->nexps, kind, err, sizeof(err)) < 0) {
		complain(s->where, "%s", err);
		set_rc(st, 2);
		return NULL;
	}
	separate(st);
	return ex;
}

static int run_leaks(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_HEAP);

	return ex ? sonde_view_heap_stacks(st->out, ex, st->nexps, true, &st->o, err, errlen) : 0;
}

static int run_allocs(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_HEAP);

	return ex ? sonde_view_heap_stacks(st->out, ex, st->nexps, false, &st->o, err, errlen) : 0;
}

static int run_heapstat(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_HEAP);

	return ex ? sonde_view_heapstat(st->out, ex, st->nexps, &st->o, err, errlen) : 0;
}

static int run_io(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_IO);

	return ex ? sonde_view_io(st->out, ex, st->nexps, &st->o, err, errlen) : 0;
}

static int run_iostacks(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_IO);

	return ex ? sonde_view_iostacks(st->out, ex, st->nexps, &st->o, err, errlen) : 0;
}

static int run_sync(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_SYNC);

	return ex ? sonde_view_sync(st->out, ex, st->nexps, &st->o, err, errlen) : 0;
}

/* ---- views of the profile (the experiments added together) ------------------ */

/* The profile, or NULL after saying why it could not be built (exit 2). */
static struct sonde_profile *need_profile(struct state *st)
{
	struct sonde_profile *p = profile(st);

	if (!p)
		set_rc(st, 2);
	return p;
}

/* The same, for the views that -compare does not split: with a note when
 * -compare is on. */
static struct sonde_profile *added_profile(struct state *st, const struct step *s)
{
	if (st->o.compare != SONDE_CMP_OFF && st->nexps > 1)
		complain(NULL, "note: -%s shows the experiments added together (-compare "
			       "applies to -functions and -objects)",
			 s->cmd->name);
	return need_profile(st);
}

/* -functions and -objects: of the profile, or side by side (-compare). */
static int list_or_compare(struct state *st, bool objects, char *err, size_t errlen)
{
	struct sonde_profile *p;
	int r;

	if (st->o.compare != SONDE_CMP_OFF && st->nexps > 1) {
		struct sonde_profile *cp = cprofiles(st);
		const struct sonde_model **models;

		if (!cp) {
			set_rc(st, 2);
			return 0;
		}
		models = calloc(st->nexps, sizeof(*models));
		if (!models) {
			complain(NULL, "out of memory");
			set_rc(st, 1);
			return 0;
		}
		for (size_t i = 0; i < st->nexps; i++)
			models[i] = cp[i].model;
		separate(st);
		r = sonde_view_compare(st->out, models, st->names, st->nexps, objects, &st->o, err, errlen);
		free(models);
		return r;
	}
	if (!(p = need_profile(st)))
		return 0;
	separate(st);
	return objects ? sonde_view_objects(st->out, p->model, &st->o, err, errlen)
		       : sonde_view_functions(st->out, p->model, &st->o, err, errlen);
}

static int run_functions(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return list_or_compare(st, false, err, errlen);
}

static int run_objects(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return list_or_compare(st, true, err, errlen);
}

static int run_metric_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = profile(st);

	separate(st);
	return sonde_view_metric_list(st->out, p ? p->model : NULL, &st->o, err, errlen);
}

static int run_fsingle(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);
	uint32_t func = UINT32_MAX;

	if (!p)
		return 0;
	if (find_function(st, p, s->arg, &func) < 0) {
		set_rc(st, 2);
		return 0;
	}
	separate(st);
	return sonde_view_fsingle(st->out, p->model, &st->o, func, err, errlen);
}

static int run_csingle(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);
	uint32_t func = UINT32_MAX;

	if (!p)
		return 0;
	if (find_function(st, p, s->arg, &func) < 0) {
		set_rc(st, 2);
		return 0;
	}
	separate(st);
	return sonde_view_callers_callees(st->out, p->model, &st->o, func, err, errlen);
}

static int run_callers_callees(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_callers_callees(st->out, p->model, &st->o, UINT32_MAX, err, errlen);
}

static int run_calltree(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	separate(st);
	st->o.tailmarks = p->tailmarks;
	st->o.ntailmarks = p->ntailmarks;
	int rc = sonde_view_calltree(st->out, p->model, &st->o, err, errlen);
	st->o.tailmarks = NULL;
	st->o.ntailmarks = 0;
	return rc;
}

static int run_threads(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_threads(st->out, p, &st->o, err, errlen);
}

/* ---- source lines and instructions ------------------------------------------ */

static int run_lines(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = need_profile(st);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_lines(st->out, p, &st->o, err, errlen);
}

static int run_pcs(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = need_profile(st);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_pcs(st->out, p, &st->o, err, errlen);
}

/* -source takes a function, else a file name. */
static int run_source(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = need_profile(st);
	uint32_t func = UINT32_MAX;

	if (!p)
		return 0;
	if (sonde_view_find(p->model, s->arg, st->o.names, &func, NULL, 0) > 0 &&
	    find_function(st, p, s->arg, &func) < 0) {
		set_rc(st, 2);
		return 0;
	}
	separate(st);
	return sonde_view_source(st->out, p, &st->o, func, s->arg, err, errlen);
}

static int run_disasm(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = need_profile(st);
	uint32_t func = UINT32_MAX;

	if (!p)
		return 0;
	if (find_function(st, p, s->arg, &func) < 0) {
		set_rc(st, 2);
		return 0;
	}
	separate(st);
	return sonde_view_disasm(st->out, p, &st->o, func, err, errlen);
}

/* ---- the table -------------------------------------------------------------- */

/* One row per command, sorted by name. */
static const struct command commands[] = {
	{ "addpath", ARG_ONE, "DIR", check_nonempty, run_addpath,
	  "also look for source files in DIR (by base name)" },
	{ "allocs", ARG_NONE, NULL, NULL, run_allocs,
	  "allocations by call stack, largest bytes first (-H on)" },
	{ "appendfile", ARG_ONE, "FILE", check_nonempty, run_appendfile,
	  "append the output of later commands to FILE" },
	{ "callers-callees", ARG_NONE, NULL, NULL, run_callers_callees,
	  "callers and callees of every function, with attributed metrics" },
	{ "calltree", ARG_NONE, NULL, NULL, run_calltree,
	  "the call tree with inclusive and exclusive metrics" },
	{ "compare", ARG_ONE, "on|off|delta|ratio", check_compare, run_compare,
	  "show several experiments side by side (-functions, -objects)" },
	{ "csingle", ARG_ONE, "NAME", check_nonempty, run_csingle,
	  "callers and callees of one function" },
	{ "disasm", ARG_ONE, "FUNC", check_nonempty, run_disasm,
	  "annotated disassembly of a function, with its source lines" },
	{ "dthresh", ARG_ONE, "PERCENT", check_percent, run_dthresh,
	  "-disasm marks instructions whose metric reaches PERCENT of the largest (75)" },
	{ "dump", ARG_ONE, ARG_DUMPS, check_dump, run_dump,
	  "raw samples, stacks, overview, objects, or traced events" },
	{ "exit", ARG_NONE, NULL, NULL, run_quit,
	  "end the script or the interactive session" },
	{ "experiment_list", ARG_NONE, NULL, NULL, run_experiment_list,
	  "the experiments loaded, numbered (founder and descendants)" },
	{ "experiment_select", ARG_ONE, "all|LIST", NULL, run_experiment_select,
	  "only these experiments (numbers as -experiment_list shows: 1,3-5)" },
	{ "fsingle", ARG_ONE, "NAME", check_nonempty, run_fsingle,
	  "the metrics and details of one function" },
	{ "functions", ARG_NONE, NULL, NULL, run_functions,
	  "the function list with the current metrics" },
	{ "header", ARG_NONE, NULL, NULL, run_header,
	  "experiment summary (the default with no command)" },
	{ "heapstat", ARG_NONE, NULL, NULL, run_heapstat,
	  "heap statistics: counts, bytes, leaks, peak, sizes (-H on)" },
	{ "help", ARG_NONE, NULL, NULL, run_help,
	  "this text" },
	{ "inlines", ARG_ONE, "on|off", check_on_off, run_inlines,
	  "inlined functions as their own entries (on) or folded into their callers" },
	{ "io", ARG_NONE, NULL, NULL, run_io,
	  "I/O by file: bytes, calls and time of reads, writes, other (-i on)" },
	{ "iostacks", ARG_NONE, NULL, NULL, run_iostacks,
	  "I/O by call stack, the top 20 by bytes and calls (-i on)" },
	{ "leaks", ARG_NONE, NULL, NULL, run_leaks,
	  "leaks by allocation stack, largest bytes first (-H on)" },
	{ "limit", ARG_ONE, "N", check_limit, run_limit,
	  "print at most N rows (functions, objects, tree nodes); 0: all" },
	{ "lines", ARG_NONE, NULL, NULL, run_lines,
	  "source lines with the current metrics" },
	{ "metric_list", ARG_NONE, NULL, NULL, run_metric_list,
	  "the current metrics and those available" },
	{ "metrics", ARG_ONE, "SPEC", check_metrics, run_metrics,
	  "metrics to show, as e.%totalcpu:i.totalcpu:name" },
	{ "name", ARG_ONE, "long|short|mangled", check_name, run_name,
	  "how to show function names" },
	{ "object_select", ARG_ONE, "all|OBJ,...", check_nonempty, run_object_select,
	  "only these load objects' functions; the rest are folded per object" },
	{ "objects", ARG_NONE, NULL, NULL, run_objects,
	  "the load-object list with the current metrics" },
	{ "outfile", ARG_ONE, "FILE", check_nonempty, run_outfile,
	  "write the output of later commands to FILE (- is stdout)" },
	{ "overview", ARG_NONE, NULL, NULL, run_overview,
	  "sample points, usage over the run and CPU use over time" },
	{ "pathmap", ARG_TWO, "OLD NEW", check_pathmap, run_pathmap,
	  "read source files recorded under OLD from NEW" },
	{ "pcs", ARG_NONE, NULL, NULL, run_pcs,
	  "instructions (PCs) with the current metrics" },
	{ "printmode", ARG_ONE, "text|csv|json", check_printmode, run_printmode,
	  "output form of later views" },
	{ "processes", ARG_NONE, NULL, NULL, run_processes,
	  "one row per process: lineage, pid, command, CPU time" },
	{ "quit", ARG_NONE, NULL, NULL, run_quit,
	  "end the script or the interactive session" },
	{ "sample_select", ARG_ONE, "all|LIST", check_sample_list, run_sample_select,
	  "only events in these samples (numbers as -samples shows), in every view" },
	{ "samples", ARG_NONE, NULL, NULL, run_samples,
	  "one row per sample: usage counters and the metrics in it" },
	{ "script", ARG_ONE, "FILE", check_nonempty, run_script,
	  "run the commands in FILE (one a line, # comments)" },
	{ "sort", ARG_ONE, "SPEC", check_sort, run_sort,
	  "sort by a metric (e.totalcpu, i.totalcpu) or by name" },
	{ "source", ARG_ONE, "FUNC|FILE", check_nonempty, run_source,
	  "annotated source of a function's file, or of a file" },
	{ "statistics", ARG_NONE, NULL, NULL, run_statistics,
	  "process statistics from the overview samples" },
	{ "sthresh", ARG_ONE, "PERCENT", check_percent, run_sthresh,
	  "-source marks lines whose metric reaches PERCENT of the largest (75)" },
	{ "sync", ARG_NONE, NULL, NULL, run_sync,
	  "sync waits by lock or other object, longest total wait first (-s on)" },
	{ "tailcalls", ARG_ONE, "on|off", check_on_off, run_tailcalls,
	  "frames that tail calls left off stacks restored from DWARF call sites (on) or not" },
	{ "thread_select", ARG_ONE, "all|LIST", check_thread_list, run_thread_select,
	  "only these threads (numbers as -threads shows)" },
	{ "time", ARG_ONE, "all|START-END", check_time, run_time,
	  "only events from START to END seconds after the start, in every view" },
	{ "threads", ARG_NONE, NULL, NULL, run_threads,
	  "per-thread totals" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* ---- parsing ---------------------------------------------------------------- */

static int parse_script(struct steps *ss, const char *file, int depth);

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde print [COMMAND...] EXPERIMENT...\n"
		   "\n"
		   "Commands run in order; settings apply to the views after them.  Several\n"
		   "experiments are added together.  With no command: an interactive prompt\n"
		   "when stdin is a terminal, else -header.\n"
		   "\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char left[128], arg[96];

		if (commands[i].arg && !strcmp(commands[i].arg, ARG_DUMPS))
			sonde_dump_names(arg, sizeof arg, "|");
		else
			snprintf(arg, sizeof arg, "%s", commands[i].arg ? commands[i].arg : "");
		snprintf(left, sizeof(left), "-%s%s%s", commands[i].name, *arg ? " " : "", arg);
		if (strlen(left) > 22)
			fprintf(f, "  %s\n  %-22s %s\n", left, "", commands[i].help);
		else
			fprintf(f, "  %-22s %s\n", left, commands[i].help);
	}
	fprintf(f, "\nMetric specs: FLAVOR VISIBILITY NAME items joined by ':'; flavours e\n"
		   "(exclusive), i (inclusive), a (attributed); visibility . (time), + (value),\n"
		   "%% (percent); metrics totalcpu, samples, user, system, wait, ulock, owait,\n"
		   "total (and the traced kinds' and counters', -metric_list; with cycles and insts\n"
		   "also the ratios CPI and IPC, which have no %%).  Default e.%%totalcpu:i.%%totalcpu:name;\n"
		   "with off-CPU time e.%%total:i.%%total:e.totalcpu:e.wait:e.ulock:e.owait:name.\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	/* er_print spells some with '_' or '-' interchangeably */
	char alt[64];

	if (strlen(name) >= sizeof(alt))
		return NULL;
	size_t i;

	for (i = 0; name[i]; i++)
		alt[i] = name[i] == '_' ? '-' : name[i] == '-' ? '_' : name[i];
	alt[i] = '\0';
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, alt))
			return &commands[i];
	return NULL;
}

static void steps_free(struct steps *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].arg);
		free(s->v[i].where);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* At the interactive prompt, help is "help". */
static bool at_prompt;

/* Adds command name (without its dash) with arg to ss, after checking it.
 * Returns 0, 1 for quit, or -1 (said on stderr). */
static int add_step(struct steps *ss, const char *name, const char *arg, const char *where, int depth)
{
	const struct command *c = find_command(name);
	char err[512];

	if (!c) {
		complain(where, "unknown command '%s' (try '%s')", name,
			 at_prompt ? "help" : "sonde print -help");
		return -1;
	}
	if (c->arg_kind != ARG_NONE && !arg) {
		complain(where, "-%s needs an argument: %s", c->name, c->arg);
		return -1;
	}
	if (c->arg_kind != ARG_NONE && c->check && c->check(c, arg, err, sizeof(err)) < 0) {
		complain(where, "-%s: %s", c->name, err);
		return -1;
	}
	if (c->run == run_quit)
		return 1;
	if (c->run == run_script)
		return parse_script(ss, arg, depth + 1) < 0 ? -1 : 0;
	if (sonde_grow(&ss->v, &ss->cap, ss->n + 1, sizeof(*ss->v), 16) < 0) {
		complain(where, "out of memory");
		return -1;
	}
	struct step *s = &ss->v[ss->n];

	s->cmd = c;
	s->arg = c->arg_kind != ARG_NONE ? strdup(arg) : NULL;
	s->where = where ? strdup(where) : NULL;
	ss->n++;
	return 0;
}

/*
 * Splits a script or interactive line into the command word (a leading
 * '-' dropped) and the rest, trimmed, with one level of matching quotes
 * removed.  Returns false for a blank or comment line.  Modifies line.
 */
static bool split_line(char *line, char **name, char **arg)
{
	char *p = line, *e;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#')
		return false;
	if (*p == '-')
		p++;
	*name = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (isspace((unsigned char)*p))
		p++;
	e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - p >= 2 && (*p == '\'' || *p == '"') && e[-1] == *p) {
		e[-1] = '\0';
		p++;
	}
	*arg = *p ? p : NULL;
	return true;
}

/* One line: 0, 1 for quit, -1 for an error. */
static int add_line(struct steps *ss, char *line, const char *where, int depth)
{
	char *name, *arg;

	if (!split_line(line, &name, &arg))
		return 0;
	const struct command *c = find_command(name);

	if (c && c->arg_kind == ARG_NONE && arg) {
		complain(where, "-%s takes no argument (got '%s')", c->name, arg);
		return -1;
	}
	if (c && c->arg_kind == ARG_TWO && arg) {
		/* two words: OLD NEW, kept as "OLD\nNEW" as on the command line */
		char *ws = arg + strcspn(arg, " \t");

		if (*ws) {
			char *rest = ws + strspn(ws, " \t");

			*ws = '\n';
			memmove(ws + 1, rest, strlen(rest) + 1);
		}
	}
	return add_step(ss, name, arg, where, depth);
}

static int parse_script(struct steps *ss, const char *file, int depth)
{
	FILE *f;
	char *line = NULL, where[512];
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = 0;

	if (depth > 8) {
		complain(NULL, "-script '%s': scripts nested too deeply", file);
		return -1;
	}
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		complain(NULL, "cannot open script '%s': %s", file, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", file, lineno);
		int r = add_line(ss, line, where, depth);

		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 1)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* ---- running ---------------------------------------------------------------- */

/* Runs one step; problems are said on stderr and set st->rc. */
static void run_step(struct state *st, const struct step *s)
{
	char err[512];
	int r = s->cmd->run(st, s, err, sizeof(err));

	if (r < 0) {
		complain(s->where, "-%s: %s", s->cmd->name, err);
		/* a metric this experiment lacks, or a name that names
		 * nothing, is the user's mistake */
		set_rc(st, r == -SONDE_ERR_NOT_RECORDED || r == -SONDE_ERR_NO_MATCH ? 2 : 1);
	}
}

/* The interactive prompt: commands with or without their dash, one a
 * line, run at once; errors are said and the session goes on. */
static void interact(struct state *st)
{
	char *line = NULL;
	size_t cap = 0;

	st->interactive = true;
	at_prompt = true;
	printf("sonde print: %zu experiment%s; 'help' lists the commands, 'quit' ends.\n",
	       st->nexps, st->nexps == 1 ? "" : "s");
	for (;;) {
		struct steps ss = { 0 };

		printf("(sonde) ");
		fflush(stdout);
		if (getline(&line, &cap, stdin) < 0) {
			printf("\n");
			break;
		}
		int r = add_line(&ss, line, NULL, 0);

		for (size_t i = 0; r >= 0 && i < ss.n; i++) {
			st->printed = false;
			run_step(st, &ss.v[i]);
			fflush(st->out);
		}
		steps_free(&ss);
		if (r == 1)
			break;
	}
	free(line);
	/* errors in a session are not the session's exit status */
	st->rc = st->rc == 1 ? 1 : 0;
}

int cmd_print(int argc, char **argv)
{
	struct steps ss = { 0 };
	struct state st;
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0;
	bool only_exps = false, quit = false;
	int rc = 0;

	memset(&st, 0, sizeof(st));
	if (!paths) {
		fprintf(stderr, "sonde print: out of memory\n");
		return 1;
	}
	if (argc < 2) {
		usage(stderr);
		free(paths);
		return 2;
	}
	/* Counter metrics are named by the experiments (lib/kinds/counters.c):
	 * read their names before -metrics and -sort are checked. */
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			sonde_counters_from_log(argv[i]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_exps || a[0] != '-' || !a[1]) {
			paths[npaths++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_exps = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			goto out;
		}
		if (quit) /* commands after -quit are not run */
			continue;
		const struct command *c = find_command(a + 1);
		const char *arg = NULL;

		char *two = NULL;

		if (c && c->arg_kind != ARG_NONE) {
			int need = c->arg_kind == ARG_TWO ? 2 : 1;

			if (i + need >= argc) {
				complain(NULL, "-%s needs %s: %s", c->name, need == 2 ? "two arguments" : "an argument",
					 c->arg);
				rc = 2;
				goto out;
			}
			arg = argv[++i];
			if (need == 2) {
				if (asprintf(&two, "%s\n%s", arg, argv[i + 1]) < 0) {
					complain(NULL, "out of memory");
					rc = 1;
					goto out;
				}
				i++;
				arg = two;
			}
		}
		int r = add_step(&ss, a + 1, arg, NULL, 0);

		free(two);

		if (r < 0) {
			rc = 2;
			goto out;
		}
		if (r == 1)
			quit = true;
	}
	if (ss.n == 1 && ss.v[0].cmd->run == run_help) {
		usage(stdout);
		goto out;
	}
	if (!npaths) {
		complain(NULL, "no experiment given (try 'sonde print -help')");
		rc = 2;
		goto out;
	}

	/* Open the experiments, each founder with its descendants' (C10); one
	 * that cannot be opened is reported and skipped. */
	sonde_view_opts_init(&st.o);
	st.out = stdout;
	for (size_t i = 0; i < npaths; i++)
		open_with_descendants(&st, paths[i]);
	st.exps = calloc(st.nall + 1, sizeof(*st.exps));
	st.names = calloc(st.nall + 1, sizeof(*st.names));
	st.cprof = calloc(st.nall + 1, sizeof(*st.cprof));
	st.reported = calloc(st.nall + 1, sizeof(*st.reported));
	if (!st.exps || !st.names || !st.cprof || !st.reported) {
		complain(NULL, "out of memory");
		rc = 1;
		goto out;
	}
	select_experiments(&st, "all");
	if (!st.nexps) {
		rc = st.rc;
		goto out;
	}
	default_metrics(&st);

	if (!ss.n && !quit && isatty(STDIN_FILENO)) {
		interact(&st);
	} else {
		if (!ss.n && !quit) {
			char hdr[] = "header";

			add_line(&ss, hdr, NULL, 0);
		}
		for (size_t i = 0; i < ss.n; i++)
			run_step(&st, &ss.v[i]);
	}
	if (st.out != stdout) {
		if (fclose(st.out)) {
			complain(NULL, "error writing the output file: %s", strerror(errno));
			set_rc(&st, 1);
		}
		st.out = stdout;
	}

	/* Damaged data: the views above cover only what could be read. */
	bool header = false;

	for (size_t i = 0; i < ss.n; i++)
		header |= ss.v[i].cmd->run == run_header;
	for (size_t e = 0; e < st.nexps; e++) {
		size_t nerr = sonde_exp_nerrors(st.exps[e]), np;
		const struct sonde_problem *p = sonde_exp_problems(st.exps[e], &np);

		if (!nerr)
			continue;
		fflush(stdout);
		for (size_t i = 0; !header && i < np; i++) /* -header lists them */
			if (p[i].severity == SONDE_PROBLEM_ERROR)
				fprintf(stderr, "sonde print: '%s': %s\n", st.names[e], p[i].msg);
		fprintf(stderr,
			"sonde print: '%s' is damaged (%zu read error%s); the output covers only the "
			"data that could be read\n",
			st.names[e], nerr, nerr == 1 ? "" : "s");
		set_rc(&st, 1);
	}
	rc = st.rc;
out:
	drop_profiles(&st);
	for (size_t i = 0; i < st.nall; i++) {
		sonde_exp_close(st.all_exps[i]);
		free((char *)st.all_names[i]);
	}
	free(st.all_exps);
	free(st.all_names);
	free(st.exps);
	free(st.names);
	free(st.cprof);
	free(st.reported);
	free(st.thread_select);
	free(st.object_select);
	free(st.sample_select);
	/* a pair is one allocation: its first string */
	for (size_t i = 0; i < st.npathmap; i++)
		free(st.pathmap[2 * i]);
	free(st.pathmap);
	for (size_t i = 0; i < st.naddpath; i++)
		free(st.addpaths[i]);
	free(st.addpaths);
	steps_free(&ss);
	free(paths);
	return rc;
}

