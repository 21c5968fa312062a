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
#include "reader/exptree.h"
#include "model/filter.h"
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
	char *thread_select, *object_select, *sample_select, *cpu_select, *callpath_select;
	char *experiment_select; /* as given, for -filters */
	bool index_cpus, index_seconds; /* the profile keeps per-CPU / per-second totals */
	uint64_t start_ns, end_ns; /* -time; end 0: none */
	bool no_inlines;
	bool no_tailcalls;
	char **frag; /* the callers-callees stack fragment: function names, caller first */
	size_t nfrag;
	char **hidden; /* -object_hide: object names (base names or paths) */
	size_t nhidden;
	char **pathmap; /* -pathmap OLD NEW pairs: 2 * npathmap strings */
	size_t npathmap;
	char **addpaths;
	size_t naddpath;

	struct sonde_exp **exps; /* the selected experiments (-experiment_select) */
	const char **names;
	size_t nexps;
	struct sonde_exp_tree tree; /* every experiment loaded, founders with their
				     * sub-experiments after them */

	struct sonde_profile prof;
	bool have_prof;
	struct sonde_profile *cprof; /* -compare: one per experiment */
	bool have_cprof;
	bool *reported; /* symbol problems said, per experiment */

	FILE *out;
	bool printed;
	bool in_doc;	       /* html: the current step's document is open */
	const char *doc_title; /* html: the current step's name */
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

/*
 * Symbol problems, once per experiment loaded whatever the selection.  The
 * load objects with no function symbols are one line for all experiments
 * (a stripped program run as several processes named each object once per
 * process): they change no number, and -header lists them.
 */
static void report_symbols(struct state *st, const struct sonde_profile *p, size_t first_exp)
{
	const char **unnamed = NULL;
	size_t nunnamed = 0, cap = 0;

	for (size_t i = 0; i < p->nexps; i++) {
		size_t e = first_exp + i, n, a = 0;

		while (a < st->tree.n && st->tree.exps[a] != st->exps[e])
			a++;
		if (st->reported[a] || !p->syms || !p->syms[i])
			continue;
		st->reported[a] = true;
		const char *const *msg = sonde_syms_problems(p->syms[i], &n);

		for (size_t k = 0; k < n; k++)
			complain(NULL, "warning: '%s': %s", st->names[e], msg[k]);
		msg = sonde_syms_unnamed(p->syms[i], &n);
		for (size_t k = 0; k < n; k++) {
			size_t j = 0;

			while (j < nunnamed && strcmp(unnamed[j], msg[k]))
				j++;
			if (j == nunnamed && !sonde_grow(&unnamed, &cap, nunnamed + 1, sizeof(*unnamed), 8))
				unnamed[nunnamed++] = msg[k];
		}
	}
	if (nunnamed == 1)
		complain(NULL, "warning: '%s' has no function symbols (stripped, and no debug file "
			       "found); its functions are shown as addresses",
			 unnamed[0]);
	else if (nunnamed)
		complain(NULL, "warning: %zu load objects with samples have no function symbols "
			       "(stripped, and no debug file found); their functions are shown as "
			       "addresses (-header lists every such object loaded)",
			 nunnamed);
	free(unnamed);
}

static int build(struct state *st, struct sonde_profile *p, size_t first, size_t n)
{
	struct sonde_profile_opts po = { 0 };
	char err[512];

	po.thread_select = st->thread_select;
	po.object_select = st->object_select;
	po.sample_select = st->sample_select;
	po.cpu_select = st->cpu_select;
	po.callpath_select = st->callpath_select;
	po.index_cpus = st->index_cpus;
	po.index_seconds = st->index_seconds;
	po.start_ns = st->start_ns;
	po.end_ns = st->end_ns;
	/* (machine mode shows inlined code as the function it was inlined
	 * into: the profile builder's rule) */
	po.no_inlines = st->no_inlines;
	po.no_tailcalls = st->no_tailcalls;
	po.viewmode = (enum sonde_stackmode)st->o.viewmode;
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
	if (!st->in_doc) {
		char title[128];

		snprintf(title, sizeof(title), "sonde print -%s", st->doc_title ? st->doc_title : "");
		em_doc_begin(&e, title);
		st->in_doc = true;
	}
}

/* The clock profile's default metrics, into spec (len bytes), each ending
 * in ':': with off-CPU time Total Thread Time and its parts, CPU, Wait CPU
 * and each off-CPU state's metric (sonde/states.h: User Lock, Other Wait),
 * else Total CPU; and the metric of each CPU state (or runtime's off-CPU
 * state, OpenMP's) that cpu_state marks (one an experiment recorded; NULL:
 * none), a summed metric (OpenMP Wait) instead of its members.  Its
 * length. */
static size_t clock_default_metrics(char *spec, size_t len, bool offcpu, const bool *cpu_state)
{
	size_t n = (size_t)snprintf(spec, len, "%s",
				    offcpu ? "e.%total:i.%total:e.totalcpu:e.wait:" : "e.%totalcpu:i.%totalcpu:");
	uint64_t summed = 0; /* the members of a sum: the sum stands for them */
#define SUM_MEMBERS_(NAME, members, ...) summed |= (members);
	SONDE_STATE_SUMS(SUM_MEMBERS_)
#undef SUM_MEMBERS_
	for (unsigned s = 0; s < SONDE_STATE_COUNT && n < len; s++) {
		int m = sonde_state_metric(s);
		bool in_sum = s < 64 && (summed >> s & 1);
		if (m >= 0 && !in_sum &&
		    (sonde_state_offcpu(s) && !sonde_state_runtime_offcpu(s) ? offcpu : cpu_state && cpu_state[s]))
			n += (size_t)snprintf(spec + n, len - n, "e.%s:", sonde_metric(m)->name);
	}
	/* each sum with a member recorded (OpenMP Wait) */
#define SUM_DEFAULT_(NAME, members, name, metric, ...)                           \
	for (unsigned s = 0; s < SONDE_STATE_COUNT && s < 64 && n < len; s++)    \
		if (((members) >> s & 1) && cpu_state && cpu_state[s]) {          \
			n += (size_t)snprintf(spec + n, len - n, "e.%s:", metric); \
			break;                                                     \
		}
	SONDE_STATE_SUMS(SUM_DEFAULT_)
#undef SUM_DEFAULT_
	return n < len ? n : len - 1;
}

/* The default metrics follow the data, as er_print's do: clock-profile
 * time when there is any (with off-CPU time recorded: Total Thread Time
 * and its parts, CPU, Wait CPU, User Lock, Other Wait; the metrics of the
 * runtime's states it recorded), then each traced kind's main metrics;
 * the sort key is the first of them.  -metrics and -sort override. */
static void default_metrics(struct state *st)
{
	bool clock = false, traced = false, offcpu = false, states = false;
	bool kind[SONDE_KIND_MAX + 1] = { false };
	bool cpu_state[SONDE_STATE_COUNT] = { false };
	for (size_t i = 0; i < st->nexps; i++) {
		const struct sonde_exp *e = st->exps[i];
		clock |= sonde_metric_recorded(e, SONDE_M_TOTALCPU);
		offcpu |= sonde_exp_has_offcpu(e);
		for (int id = 1; id <= SONDE_KIND_MAX; id++)
			if (sonde_kind_default_metrics(id, NULL) && sonde_exp_traced(e, id))
				traced = kind[id] = true;
		for (unsigned s = 0; s < SONDE_STATE_COUNT; s++)
			if ((!sonde_state_offcpu(s) || sonde_state_runtime_offcpu(s)) && sonde_state_metric(s) >= 0 &&
			    sonde_metric_recorded(e, sonde_state_metric(s)))
				states = cpu_state[s] = true;
	}
	if (!traced && !offcpu && !states)
		return; /* the built-in default */
	char spec[512] = "";
	size_t n = 0;
	const char *sort = offcpu ? "total" : clock ? "totalcpu" : NULL;
	if (offcpu || clock)
		n += clock_default_metrics(spec + n, sizeof spec - n, offcpu, cpu_state);
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

/* The experiment at path, then (for a founder) its sub-experiments
 * (reader/exptree.h); one that cannot be opened is said and makes the
 * exit status 1. */
static void open_with_descendants(struct state *st, const char *path)
{
	if (cmd_open_experiment("sonde print", path, &st->tree, 0) < 0)
		set_rc(st, 1);
}

/* -experiment_select: "all", or numbers and ranges ("1,3-5") as
 * -experiment_list shows them.  Returns -1 on a bad list. */
static int select_experiments(struct state *st, const char *spec)
{
	bool *want = calloc(st->tree.n + 1, sizeof(*want));

	if (!want)
		return -1;
	if (sonde_exp_tree_pick(&st->tree, spec, want) < 0)
		goto bad;
	drop_profiles(st);
	st->nexps = 0;
	for (size_t i = 0; i < st->tree.n; i++)
		if (want[i]) {
			st->exps[st->nexps] = st->tree.exps[i];
			st->names[st->nexps++] = st->tree.names[i];
		}
	free(want);
	return 0;
bad:
	free(want);
	if (!strncmp(spec, "rank=", 5))
		complain(NULL, "-experiment_select: '%s' is not a list of MPI ranks these experiments have (like "
			       "rank=0,2-3)",
			 spec);
	else
		complain(NULL, "-experiment_select: '%s' is not 'all', a list of experiment numbers from 1 to %zu "
			       "(like 1,3-5) or rank=LIST",
			 spec, st->tree.n);
	return -1;
}

/* The experiments loaded and selected, for the views of view_exp.h. */
static struct sonde_exp_set exp_set(const struct state *st)
{
	return (struct sonde_exp_set){
		.tree = &st->tree,
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
	ARG_OPT, /* an optional word that the check accepts (-calltree -inverted);
		  * on the command line only one starting with '-' */
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
	bool so;

	return sonde_name_parse(&n, &so, arg, err, errlen);
}

static int check_viewmode(const struct command *c, const char *arg, char *err, size_t errlen)
{
	enum sonde_viewmode v;

	return sonde_viewmode_parse(&v, arg, err, errlen);
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

/* The slicing filters' values are lib/model/filter.h's to check and to
 * convert; -lwp_select is -thread_select. */
static const struct sonde_filter *filter_of(const struct command *c)
{
	return sonde_filter_find(strcmp(c->name, "lwp_select") ? c->name : "thread_select");
}

static int check_filter(const struct command *c, const char *arg, char *err, size_t errlen)
{
	return filter_of(c)->check(arg, err, errlen);
}

/* What a (checked) filter value sets, alone. */
static struct sonde_profile_opts filter_value(const struct command *c, const char *arg)
{
	struct sonde_profile_opts po = { 0 };

	filter_of(c)->set(&po, arg);
	return po;
}

static int check_indxobj(const struct command *c, const char *arg, char *err, size_t errlen)
{
	char names[256];

	if (sonde_indxobj_find(arg))
		return 0;
	sonde_indxobj_names(names, sizeof names);
	snprintf(err, errlen, "unknown index object type '%s' (one of %s; see -indxobj_list)", arg, names);
	return -1;
}

/* -calltree's optional word. */
static int check_inverted(const struct command *c, const char *arg, char *err, size_t errlen)
{
	if (strcmp(arg, "-inverted") && strcmp(arg, "inverted")) {
		snprintf(err, errlen, "'%s' is not -inverted", arg);
		return -1;
	}
	return 0;
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
	sonde_name_parse(&st->o.names, &st->o.soname, s->arg, err, errlen);
	return 0;
}

static int run_viewmode(struct state *st, const struct step *s, char *err, size_t errlen)
{
	enum sonde_viewmode v = st->o.viewmode;

	sonde_viewmode_parse(&st->o.viewmode, s->arg, err, errlen);
	if (v != st->o.viewmode)
		drop_profiles(st); /* inlines (machine mode) and a runtime's shaped stacks (model/shape.h) */
	if (st->interactive)
		printf("Viewmode set to %s\n", s->arg);
	return 0;
}

static int run_version(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	fprintf(st->out, "sonde print %s\n", SONDE_VERSION);
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

/* er_print's setpath: the search path becomes these directories (':'
 * separated); "$expts", the experiments' own places, is always searched
 * here, so it is accepted and skipped. */
static int run_setpath(struct state *st, const struct step *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < st->naddpath; i++)
		free(st->addpaths[i]);
	st->naddpath = 0;
	st->o.naddpath = 0;
	for (const char *p = s->arg; *p;) {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX];

		if (n && n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			if (strcmp(dir, "$expts"))
				add_path(st, &st->addpaths, &st->naddpath, false, dir);
		}
		p += n + (p[n] == ':');
	}
	return 0;
}

/* ---- selections: they change the profile the views read --------------------- */

static int run_experiment_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	if (select_experiments(st, s->arg) < 0) {
		set_rc(st, 2);
		return 0;
	}
	free(st->experiment_select);
	st->experiment_select = strdup(s->arg);
	return 0;
}

/*
 * er_print's en_desc: the sub-experiments read, all (on), none (off), or
 * =REGEX those whose lineage (_f1_x1) or program name matches
 * (reader/exptree.h, sonde_exp_tree_desc).  Founders are always read.
 * Expressed as an experiment selection.
 */
static int check_en_desc(const struct command *c, const char *arg, char *err, size_t errlen)
{
	struct sonde_exp_tree none;

	sonde_exp_tree_init(&none);
	return sonde_exp_tree_desc(&none, arg, NULL, err, errlen);
}

static int run_en_desc(struct state *st, const struct step *s, char *err, size_t errlen)
{
	char *spec = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&spec, &len);
	bool *want = calloc(st->tree.n + 1, sizeof(*want)), any = false;

	if (!m || !want) {
		if (m)
			fclose(m);
		free(spec);
		free(want);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (sonde_exp_tree_desc(&st->tree, s->arg, want, err, errlen) < 0) {
		fclose(m);
		free(spec);
		free(want);
		return -1; /* check_en_desc took it already */
	}
	for (size_t i = 0; i < st->tree.n; i++)
		if (want[i]) {
			fprintf(m, "%s%zu", any ? "," : "", i + 1);
			any = true;
		}
	free(want);
	if (fclose(m)) {
		free(spec);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = select_experiments(st, spec);

	if (!rc) {
		free(st->experiment_select);
		st->experiment_select = spec;
		spec = NULL;
	} else
		set_rc(st, 2);
	free(spec);
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

static void free_hidden(struct state *st)
{
	for (size_t i = 0; i < st->nhidden; i++)
		free(st->hidden[i]);
	free(st->hidden);
	st->hidden = NULL;
	st->nhidden = 0;
}

static int run_object_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	free_hidden(st); /* the list replaces what -object_hide said */
	set_select(st, &st->object_select, s->arg);
	return 0;
}

/* An object as -object_list names it, "<libc.so.6>", or as -object_select
 * does: its base name or path. */
static bool object_named(const char *word, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(word);

	base = base ? base + 1 : path;
	if (n > 2 && word[0] == '<' && word[n - 1] == '>')
		return strlen(base) == n - 2 && !strncmp(base, word + 1, n - 2);
	return !strcmp(word, path) || !strcmp(word, base);
}

static bool object_hidden(const struct state *st, const char *path)
{
	for (size_t i = 0; i < st->nhidden; i++)
		if (!strcmp(st->hidden[i], path))
			return true;
	return false;
}

/* The distinct load objects of the selected experiments, in order of
 * appearance (the collector's and tracers' left out: their frames are
 * folded away); *n of them, NULL when out of memory. */
static const struct sonde_object **load_objects(const struct state *st, size_t *n)
{
	size_t cap = 0, k = 0;

	for (size_t e = 0; e < st->nexps; e++) {
		size_t no;

		sonde_exp_objects(st->exps[e], &no);
		cap += no;
	}
	const struct sonde_object **v = calloc(cap + 1, sizeof(*v));

	for (size_t e = 0; v && e < st->nexps; e++) {
		size_t no;
		const struct sonde_object *ob = sonde_exp_objects(st->exps[e], &no);

		for (size_t i = 0; i < no; i++) {
			size_t j = 0;

			if (ob[i].sonde)
				continue;
			while (j < k && strcmp(v[j]->path, ob[i].path))
				j++;
			if (j == k)
				v[k++] = &ob[i];
		}
	}
	*n = k;
	return v;
}

/* -object_show and -object_hide OBJ,...|all: st->hidden holds the paths
 * of the objects hidden, which make the object selection (every other
 * object of the experiments), as -object_select would. */
static int show_hide(struct state *st, const char *arg, bool hide, char *err, size_t errlen)
{
	char *copy = strdup(arg);
	size_t no;
	const struct sonde_object **ob = load_objects(st, &no);
	int rc = 0;

	if (!copy || !ob) {
		rc = -SONDE_ERR_FAILED;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (char *w = strtok(copy, ","); w; w = strtok(NULL, ",")) {
		bool found = false;

		for (size_t i = 0; i < no; i++) {
			if (strcmp(w, "all") && !object_named(w, ob[i]->path))
				continue;
			found = true;
			if (hide && !object_hidden(st, ob[i]->path)) {
				char **nv = realloc(st->hidden, (st->nhidden + 1) * sizeof(*nv));

				if (!nv || !(nv[st->nhidden] = strdup(ob[i]->path))) {
					if (nv)
						st->hidden = nv;
					rc = -SONDE_ERR_FAILED;
					snprintf(err, errlen, "out of memory");
					goto out;
				}
				st->hidden = nv;
				st->nhidden++;
			} else if (!hide) {
				size_t m = 0;

				for (size_t k = 0; k < st->nhidden; k++)
					if (strcmp(st->hidden[k], ob[i]->path))
						st->hidden[m++] = st->hidden[k];
					else
						free(st->hidden[k]);
				st->nhidden = m;
			}
		}
		if (!found && strcmp(w, "all")) {
			snprintf(err, errlen, "no load object '%s' (see -object_list)", w);
			rc = -SONDE_ERR_NO_MATCH;
			goto out;
		}
	}
	/* the selection: every object not hidden ("," selects none) */
	size_t len = 2;

	for (size_t i = 0; i < no; i++)
		len += strlen(ob[i]->path) + 1;
	char *sel = calloc(len, 1);

	if (!sel) {
		rc = -SONDE_ERR_FAILED;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < no; i++)
		if (!object_hidden(st, ob[i]->path)) {
			if (*sel)
				strcat(sel, ",");
			strcat(sel, ob[i]->path);
		}
	set_select(st, &st->object_select, !st->nhidden ? "all" : *sel ? sel : ",");
	free(sel);
out:
	free(copy);
	free(ob);
	return rc;
}

static int run_object_show(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return show_hide(st, s->arg, false, err, errlen);
}

static int run_object_hide(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return show_hide(st, s->arg, true, err, errlen);
}

/* er_print's object_list: each load object, whether its functions are
 * shown, its index and path. */
static int run_object_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	size_t no;
	const struct sonde_object **ob = load_objects(st, &no);
	struct sonde_emit e;

	if (!ob) {
		snprintf(err, errlen, "out of memory");
		return -SONDE_ERR_FAILED;
	}
	separate(st);
	em_init(&e, st->out, st->o.mode);
	em_text(&e, "Sel  Load Object            Index Path\n");
	em_text(&e, "==== ====================== ===== ====================================================\n");
	em_csv(&e, "sel,object,index,path\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "object_list");
	em_arr(&e, "objects");
	for (size_t i = 0; i < no; i++) {
		char name[512];
		/* shown: not hidden, and selected when -object_select chose */
		bool shown = !object_hidden(st, ob[i]->path);

		if (!st->nhidden && st->object_select && strcmp(st->object_select, "all")) {
			char *copy = strdup(st->object_select);

			shown = false;
			for (char *w = copy ? strtok(copy, ",") : NULL; w; w = strtok(NULL, ","))
				shown |= object_named(w, ob[i]->path);
			free(copy);
		}
		snprintf(name, sizeof name, "<%s>", ob[i]->name ? ob[i]->name : ob[i]->path);
		em_text(&e, "%-4s %-22s %-5zu %s\n", shown ? "show" : "hide", name, i + 1, ob[i]->path);
		em_row(&e);
		em_s(&e, "sel", shown ? "show" : "hide");
		em_s(&e, "object", name);
		em_u(&e, "index", i + 1);
		em_s(&e, "path", ob[i]->path);
		em_row_end(&e);
	}
	em_end(&e);
	em_end_doc(&e);
	free(ob);
	return 0;
}

/*
 * er_print's selection summaries (thread_list, lwp_list, cpu_list,
 * sample_list): per experiment, the selection in force and how many there
 * are, "Exp Sel Total" as gprofng prints them.
 */
static void sel_table(struct state *st, const char *view, const char *what, const char *sel,
		      size_t (*count)(const struct sonde_exp *))
{
	struct sonde_emit e;

	separate(st);
	em_init(&e, st->out, st->o.mode);
	em_text(&e, "Exp Sel Total\n=== === =====\n");
	em_csv(&e, "experiment,selection,%s\n", what);
	em_obj(&e, NULL);
	em_s(&e, "view", view);
	em_arr(&e, "experiments");
	for (size_t i = 0; i < st->nexps; i++) {
		size_t n = count(st->exps[i]);

		em_text(&e, "%3zu %s %5zu\n", i + 1, sel ? sel : "all", n);
		em_row(&e);
		em_u(&e, "experiment", i + 1);
		em_s(&e, "selection", sel ? sel : "all");
		em_u(&e, what, n);
		em_row_end(&e);
	}
	em_end(&e);
	em_end_doc(&e);
}

static size_t count_threads(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_threads(exp, &n);
	return n;
}

/* The CPUs its clock samples were taken on (as gprofng counts them: those
 * seen, not the host's). */
static size_t count_cpus(const struct sonde_exp *exp)
{
	static uint8_t seen[65536 / 8];
	struct sonde_sample_iter it;
	struct sonde_sample smp;
	size_t n = 0;

	memset(seen, 0, sizeof(seen));
	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &smp))
		if (smp.cpu != 0xffff && !(seen[smp.cpu / 8] & (1u << smp.cpu % 8))) {
			seen[smp.cpu / 8] |= (uint8_t)(1u << smp.cpu % 8);
			n++;
		}
	return n;
}

/* A thread is an LWP on Linux: thread_list and lwp_list are one. */
static int run_thread_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sel_table(st, "thread_list", "threads", st->thread_select, count_threads);
	return 0;
}

/* The metrics per CPU are -cpus. */
static int run_cpu_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sel_table(st, "cpu_list", "cpus", st->cpu_select, count_cpus);
	return 0;
}

static int run_sample_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	sel_table(st, "sample_list", "samples", st->sample_select, sonde_exp_nsamples);
	return 0;
}

static int run_sample_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->sample_select, s->arg);
	st->o.sample_select = st->sample_select;
	return 0;
}

static int run_cpu_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->cpu_select, s->arg);
	return 0;
}

static int run_callpath_select(struct state *st, const struct step *s, char *err, size_t errlen)
{
	set_select(st, &st->callpath_select, s->arg);
	return 0;
}

static int run_time(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile_opts v = filter_value(s->cmd, s->arg);
	uint64_t a = v.start_ns, b = v.end_ns;

	if (a != st->start_ns || b != st->end_ns) {
		st->start_ns = st->o.start_ns = a;
		st->end_ns = st->o.end_ns = b;
		drop_profiles(st);
	}
	return 0;
}

static int run_inlines(struct state *st, const struct step *s, char *err, size_t errlen)
{
	bool off = filter_value(s->cmd, s->arg).no_inlines;

	if (st->no_inlines != off) {
		st->no_inlines = off;
		drop_profiles(st);
	}
	return 0;
}

static int run_tailcalls(struct state *st, const struct step *s, char *err, size_t errlen)
{
	bool off = filter_value(s->cmd, s->arg).no_tailcalls;

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
	FILE *out = em_text_open(&e); /* html: the text in a <pre> block */

	for (size_t i = 0; out && i < st->nexps; i++) {
		if (i)
			fputc('\n', out);
		if (sonde_view_dump_tc(out, st->exps[i], kind, !st->no_tailcalls, err, errlen) < 0) {
			complain(NULL, "%s", err);
			set_rc(st, 1);
		}
	}
	em_text_close(&e, out);
	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -1;
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

static int run_ranks(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_exp_set set = exp_set(st);

	separate(st);
	return sonde_view_ranks(st->out, &set, &st->o, err, errlen);
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

/* The tracing views that take the experiments as they are: the kind each
 * needs, by command name (er_print's names for them too). */
static const struct {
	const char *name;
	int kind;
	int (*view)(FILE *f, const struct sonde_exp *const *exps, size_t n, const struct sonde_view_opts *o,
		    char *err, size_t errlen);
} trace_views[] = {
	{ "heapstat", SONDE_KIND_HEAP, sonde_view_heapstat },
	{ "heap_peak", SONDE_KIND_HEAP, sonde_view_heap_peak },
	{ "heap_temporary", SONDE_KIND_HEAP, sonde_view_heap_temporary },
	{ "heap_timeline", SONDE_KIND_HEAP, sonde_view_heap_timeline },
	{ "io", SONDE_KIND_IO, sonde_view_io },
	{ "ioactivity", SONDE_KIND_IO, sonde_view_io },
	{ "iodetail", SONDE_KIND_IO, sonde_view_iodetail },
	{ "iostat", SONDE_KIND_IO, sonde_view_iostat },
	{ "iostacks", SONDE_KIND_IO, sonde_view_iostacks },
	{ "iocallstack", SONDE_KIND_IO, sonde_view_iostacks },
	{ "sync", SONDE_KIND_SYNC, sonde_view_sync },
	{ "mpi", SONDE_KIND_MPI, sonde_view_mpi },
	{ "omp_regions", SONDE_KIND_OMP, sonde_view_omp_regions },
};

static int run_omp_region(struct state *st, const struct step *s, char *err, size_t errlen)
{
	const struct sonde_exp *const *ex = traced(st, s, SONDE_KIND_OMP);
	size_t n = 0;

	if (!ex)
		return 0;
	if (sonde_limit_parse(&n, s->arg, err, errlen) < 0)
		return -SONDE_ERR_NO_MATCH;
	return sonde_view_omp_region(st->out, ex, st->nexps, n, &st->o, err, errlen);
}

static int run_trace(struct state *st, const struct step *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(trace_views) / sizeof(trace_views[0]); i++)
		if (!strcmp(trace_views[i].name, s->cmd->name)) {
			const struct sonde_exp *const *ex = traced(st, s, trace_views[i].kind);

			return ex ? trace_views[i].view(st->out, ex, st->nexps, &st->o, err, errlen) : 0;
		}
	snprintf(err, errlen, "no tracing view '%s'", s->cmd->name);
	return -1;
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

static void frag_clear(struct state *st)
{
	for (size_t i = 0; i < st->nfrag; i++)
		free(st->frag[i]);
	free(st->frag);
	st->frag = NULL;
	st->nfrag = 0;
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
	/* the stack fragment that -cprepend ... -crmlast edit */
	frag_clear(st);
	st->frag = malloc(sizeof(*st->frag));
	if (st->frag && (st->frag[0] = strdup(s->arg)))
		st->nfrag = 1;
	separate(st);
	return sonde_view_callers_callees(st->out, p->model, &st->o, func, err, errlen);
}

/*
 * -cprepend NAME, -cappend NAME, -crmfirst, -crmlast: edit the stack
 * fragment that -csingle started (function names, found again in each
 * profile, so that a new selection keeps it) and show it, as er_print
 * does: its callers, the fragment and its callees, with attributed
 * metrics.
 */
static int edit_fragment(struct state *st, const struct step *s, int where, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	if (s->arg) { /* check the name before it joins the fragment */
		uint32_t func;

		if (find_function(st, p, s->arg, &func) < 0) {
			set_rc(st, 2);
			return 0;
		}
		char **nv = realloc(st->frag, (st->nfrag + 1) * sizeof(*nv));
		char *name = strdup(s->arg);

		if (!nv || !name) {
			if (nv)
				st->frag = nv;
			free(name);
			snprintf(err, errlen, "out of memory");
			return -SONDE_ERR_FAILED;
		}
		st->frag = nv;
		if (where < 0)
			memmove(nv + 1, nv, st->nfrag * sizeof(*nv));
		nv[where < 0 ? 0 : st->nfrag] = name;
		st->nfrag++;
	} else {
		if (!st->nfrag) {
			snprintf(err, errlen, "no stack fragment (start one with -csingle NAME)");
			return -SONDE_ERR_NO_MATCH;
		}
		size_t k = where < 0 ? 0 : st->nfrag - 1;

		free(st->frag[k]);
		memmove(st->frag + k, st->frag + k + 1, (st->nfrag - k - 1) * sizeof(*st->frag));
		st->nfrag--;
		if (!st->nfrag) {
			complain(s->where, "note: -%s: the stack fragment is now empty", s->cmd->name);
			return 0;
		}
	}
	uint32_t *ids = malloc(st->nfrag * sizeof(*ids));

	if (!ids) {
		snprintf(err, errlen, "out of memory");
		return -SONDE_ERR_FAILED;
	}
	for (size_t i = 0; i < st->nfrag; i++)
		if (find_function(st, p, st->frag[i], &ids[i]) < 0) {
			free(ids);
			set_rc(st, 2);
			return 0;
		}
	separate(st);
	int r = sonde_view_fragment(st->out, p->model, &st->o, ids, st->nfrag, err, errlen);

	free(ids);
	return r;
}

static int run_cprepend(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return edit_fragment(st, s, -1, err, errlen);
}

static int run_cappend(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return edit_fragment(st, s, 1, err, errlen);
}

static int run_crmfirst(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return edit_fragment(st, s, -1, err, errlen);
}

static int run_crmlast(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return edit_fragment(st, s, 1, err, errlen);
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
	if (s->arg)
		return sonde_view_calltree_inverted(st->out, p->model, &st->o, err, errlen);
	/* (the inverted tree's nodes are not call paths from a root: no marks) */
	st->o.tailmarks = p->tailmarks;
	st->o.ntailmarks = p->ntailmarks;
	int rc = sonde_view_calltree(st->out, p->model, &st->o, err, errlen);
	st->o.tailmarks = NULL;
	st->o.ntailmarks = 0;
	return rc;
}
/* The profile, with the per-CPU or per-second totals the view needs: a
 * profile built without them is built again (a script asks for them
 * before its first view: cmd_print looks ahead). */
static struct sonde_profile *index_profile(struct state *st, const struct step *s, bool cpus, bool seconds)
{
	if ((cpus && !st->index_cpus) || (seconds && !st->index_seconds)) {
		st->index_cpus |= cpus;
		st->index_seconds |= seconds;
		drop_profiles(st);
	}
	return added_profile(st, s);
}

static int run_cpus(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = index_profile(st, s, true, false);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_cpus(st->out, p, &st->o, err, errlen);
}

static int run_seconds(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = index_profile(st, s, false, true);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_seconds(st->out, p, &st->o, err, errlen);
}

static int run_threads(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_threads(st->out, p, &st->o, err, errlen);
}

/* -indxobj TYPE: the view of that index object. */
static int run_indxobj(struct state *st, const struct step *s, char *err, size_t errlen)
{
	switch (sonde_indxobj_find(s->arg)->kind) {
	case SONDE_IDX_THREADS: return run_threads(st, s, err, errlen);
	case SONDE_IDX_CPUS: return run_cpus(st, s, err, errlen);
	case SONDE_IDX_SAMPLES: return run_samples(st, s, err, errlen);
	case SONDE_IDX_SECONDS: return run_seconds(st, s, err, errlen);
	case SONDE_IDX_PROCESSES: return run_processes(st, s, err, errlen);
	case SONDE_IDX_EXPERIMENTS: return run_experiment_list(st, s, err, errlen);
	}
	return 0;
}

static int run_indxobj_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	sonde_view_indxobj_list(st->out, &st->o);
	return 0;
}

static int run_filters(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_filters fl = {
		.experiments = st->experiment_select,
		.nsel = st->nexps,
		.nall = st->tree.n,
		.threads = st->thread_select,
		.cpus = st->cpu_select,
		.samples = st->sample_select,
		.objects = st->object_select,
		.callpath = st->callpath_select,
		.start_ns = st->start_ns,
		.end_ns = st->end_ns,
	};

	separate(st);
	sonde_view_filters(st->out, &fl, &st->o);
	return 0;
}

static int run_describe(struct state *st, const struct step *s, char *err, size_t errlen)
{
	separate(st);
	sonde_view_describe(st->out, (const struct sonde_exp *const *)st->exps, st->names, st->nexps, &st->o);
	return 0;
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

/* -functions of the added experiments' profile, without -compare (what
 * -fsummary shows as blocks). */
static int run_function_list(struct state *st, const struct step *s, char *err, size_t errlen)
{
	struct sonde_profile *p = added_profile(st, s);

	if (!p)
		return 0;
	separate(st);
	return sonde_view_functions(st->out, p->model, &st->o, err, errlen);
}

/* -fsummary, -lsummary, -psummary: -functions, -lines and -pcs with each
 * row as a block (er_print's fsingle for every function, ...). */
static int as_summary(struct state *st, const struct step *s, char *err, size_t errlen,
		      int (*run)(struct state *, const struct step *, char *, size_t))
{
	st->o.summary = true;
	int r = run(st, s, err, errlen);

	st->o.summary = false;
	return r;
}

static int run_fsummary(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return as_summary(st, s, err, errlen, run_function_list);
}

static int run_lsummary(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return as_summary(st, s, err, errlen, run_lines);
}

static int run_psummary(struct state *st, const struct step *s, char *err, size_t errlen)
{
	return as_summary(st, s, err, errlen, run_pcs);
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
	{ "callpath_select", ARG_ONE, "all|FUNC|A>B,...", check_filter, run_callpath_select,
	  "only events whose stack holds FUNC, or A calling B directly (any term)" },
	{ "calltree", ARG_OPT, "[-inverted]", check_inverted, run_calltree,
	  "the call tree with inclusive and exclusive metrics; -inverted: bottom-up" },
	{ "cappend", ARG_ONE, "NAME", check_nonempty, run_cappend,
	  "add a function to the end of the stack fragment (-csingle) and show it" },
	{ "compare", ARG_ONE, "on|off|delta|ratio", check_compare, run_compare,
	  "show several experiments side by side (-functions, -objects)" },
	{ "cprepend", ARG_ONE, "NAME", check_nonempty, run_cprepend,
	  "add a function to the head of the stack fragment (-csingle) and show it" },
	{ "cpu_list", ARG_NONE, NULL, NULL, run_cpu_list,
	  "per experiment: the CPU selection and the number of CPUs sampled" },
	{ "cpu_select", ARG_ONE, "all|LIST", check_filter, run_cpu_select,
	  "only events taken on these CPUs (numbers from 0: 0,2-3)" },
	{ "cpus", ARG_NONE, NULL, NULL, run_cpus,
	  "per-CPU totals (CPUs the samples were taken on)" },
	{ "crmfirst", ARG_NONE, NULL, NULL, run_crmfirst,
	  "remove the first function of the stack fragment and show it" },
	{ "crmlast", ARG_NONE, NULL, NULL, run_crmlast,
	  "remove the last function of the stack fragment and show it" },
	{ "csingle", ARG_ONE, "NAME", check_nonempty, run_csingle,
	  "callers and callees of one function" },
	{ "describe", ARG_NONE, NULL, NULL, run_describe,
	  "the data each experiment recorded, its fields, and the filters" },
	{ "disasm", ARG_ONE, "FUNC", check_nonempty, run_disasm,
	  "annotated disassembly of a function, with its source lines" },
	{ "dthresh", ARG_ONE, "PERCENT", check_percent, run_dthresh,
	  "-disasm marks instructions whose metric reaches PERCENT of the largest (75)" },
	{ "dump", ARG_ONE, ARG_DUMPS, check_dump, run_dump,
	  "raw samples, stacks, overview, objects, or traced events" },
	{ "en_desc", ARG_ONE, "on|off|=REGEX", check_en_desc, run_en_desc,
	  "descendants read: all, none, or those whose lineage or program matches" },
	{ "exit", ARG_NONE, NULL, NULL, run_quit,
	  "end the script or the interactive session" },
	{ "exp_list", ARG_NONE, NULL, NULL, run_experiment_list,
	  "the same as -experiment_list" },
	{ "exp_select", ARG_ONE, "all|LIST", NULL, run_experiment_select,
	  "the same as -experiment_select" },
	{ "experiment_list", ARG_NONE, NULL, NULL, run_experiment_list,
	  "the experiments loaded, numbered (founder and descendants)" },
	{ "experiment_select", ARG_ONE, "all|LIST", NULL, run_experiment_select,
	  "only these experiments (numbers as -experiment_list shows: 1,3-5)" },
	{ "filters", ARG_NONE, NULL, NULL, run_filters,
	  "the filters in force (experiments, threads, CPUs, samples, time, ...)" },
	{ "fsingle", ARG_ONE, "NAME", check_nonempty, run_fsingle,
	  "the metrics and details of one function" },
	{ "fsummary", ARG_NONE, NULL, NULL, run_fsummary,
	  "the metrics and details of every function, in the function list's order" },
	{ "functions", ARG_NONE, NULL, NULL, run_functions,
	  "the function list with the current metrics" },
	{ "header", ARG_NONE, NULL, NULL, run_header,
	  "experiment summary (the default with no command)" },
	{ "heap", ARG_NONE, NULL, NULL, run_allocs,
	  "the same as -allocs (er_print's name)" },
	{ "heap_peak", ARG_NONE, NULL, NULL, run_trace,
	  "stacks holding the live heap at its peak, largest first (-H on)" },
	{ "heap_temporary", ARG_NONE, NULL, NULL, run_trace,
	  "temporary allocations (freed by the next heap call) by stack (-H on)" },
	{ "heap_timeline", ARG_NONE, NULL, NULL, run_trace,
	  "live heap bytes and allocations over time (-H on)" },
	{ "heapstat", ARG_NONE, NULL, NULL, run_trace,
	  "heap statistics: counts, bytes, leaks, peak, temporary, sizes (-H on)" },
	{ "help", ARG_NONE, NULL, NULL, run_help,
	  "this text" },
	{ "indxobj", ARG_ONE, "TYPE", check_indxobj, run_indxobj,
	  "the view of an index object type (Threads, CPUs, Seconds, ...)" },
	{ "indxobj_list", ARG_NONE, NULL, NULL, run_indxobj_list,
	  "the index object types and their views" },
	{ "indx_metric_list", ARG_NONE, NULL, NULL, run_metric_list,
	  "the metrics of the index views (as -metric_list)" },
	{ "inlines", ARG_ONE, "on|off", check_filter, run_inlines,
	  "inlined functions as their own entries (on) or folded into their callers" },
	{ "io", ARG_NONE, NULL, NULL, run_trace,
	  "I/O by file: bytes, calls and time of reads, writes, other (-i on)" },
	{ "ioactivity", ARG_NONE, NULL, NULL, run_trace,
	  "the same as -io (er_print's name)" },
	{ "iocallstack", ARG_NONE, NULL, NULL, run_trace,
	  "the same as -iostacks (er_print's name)" },
	{ "iodetail", ARG_NONE, NULL, NULL, run_trace,
	  "I/O by file and descriptor (-i on)" },
	{ "iostacks", ARG_NONE, NULL, NULL, run_trace,
	  "I/O by call stack, the top 20 by bytes and calls (-i on)" },
	{ "iostat", ARG_NONE, NULL, NULL, run_trace,
	  "I/O statistics: calls by size, longest, total time and bytes (-i on)" },
	{ "leaks", ARG_NONE, NULL, NULL, run_leaks,
	  "leaks by allocation stack, largest bytes first (-H on)" },
	{ "limit", ARG_ONE, "N", check_limit, run_limit,
	  "print at most N rows (functions, objects, tree nodes); 0: all" },
	{ "lines", ARG_NONE, NULL, NULL, run_lines,
	  "source lines with the current metrics" },
	{ "lsummary", ARG_NONE, NULL, NULL, run_lsummary,
	  "the metrics and details of every source line, in -lines' order" },
	{ "lwp_list", ARG_NONE, NULL, NULL, run_thread_list,
	  "the same as -thread_list (a thread is an LWP)" },
	{ "lwp_select", ARG_ONE, "all|LIST", check_filter, run_thread_select,
	  "the same as -thread_select (a thread is an LWP)" },
	{ "metric_list", ARG_NONE, NULL, NULL, run_metric_list,
	  "the current metrics and those available" },
	{ "metrics", ARG_ONE, "SPEC", check_metrics, run_metrics,
	  "metrics to show, as e.%totalcpu:i.totalcpu:name" },
	{ "mpi", ARG_NONE, NULL, NULL, run_trace,
	  "MPI calls by function, by peer rank and messages by size (-M)" },
	{ "name", ARG_ONE, "long|short|mangled[:soname]", check_name, run_name,
	  "how to show function names (long: a Rust symbol's hash too; short: no parameters, long "
	  "template arguments as <...>); :soname adds the load object" },
	{ "object_select", ARG_ONE, "all|OBJ,...", check_filter, run_object_select,
	  "only these load objects' functions; the rest are folded per object" },
	{ "object_hide", ARG_ONE, "OBJ,...|all", check_nonempty, run_object_hide,
	  "fold these load objects' functions into one <OBJ> entry each" },
	{ "object_list", ARG_NONE, NULL, NULL, run_object_list,
	  "the load objects, whether their functions are shown" },
	{ "objects", ARG_NONE, NULL, NULL, run_objects,
	  "the load-object list with the current metrics" },
	{ "object_show", ARG_ONE, "OBJ,...|all", check_nonempty, run_object_show,
	  "show these load objects' functions again (-object_hide)" },
	{ "omp_region", ARG_ONE, "N", check_limit, run_omp_region,
	  "row N of -omp_regions per thread: work, each wait, arrival, tasks" },
	{ "omp_regions", ARG_NONE, NULL, NULL, run_trace,
	  "OpenMP parallel regions: work, wait by cause, imbalance, tasks" },
	{ "outfile", ARG_ONE, "FILE", check_nonempty, run_outfile,
	  "write the output of later commands to FILE (- is stdout)" },
	{ "overview", ARG_NONE, NULL, NULL, run_overview,
	  "sample points, usage over the run and CPU use over time" },
	{ "pathmap", ARG_TWO, "OLD NEW", check_pathmap, run_pathmap,
	  "read source files recorded under OLD from NEW" },
	{ "pcs", ARG_NONE, NULL, NULL, run_pcs,
	  "instructions (PCs) with the current metrics" },
	{ "printmode", ARG_ONE, "text|csv|json|html|CHAR", check_printmode, run_printmode,
	  "output form of later views; a character: csv with it as the delimiter" },
	{ "processes", ARG_NONE, NULL, NULL, run_processes,
	  "one row per process: lineage, pid, command, CPU time" },
	{ "psummary", ARG_NONE, NULL, NULL, run_psummary,
	  "the metrics and details of every instruction, in -pcs' order" },
	{ "quit", ARG_NONE, NULL, NULL, run_quit,
	  "end the script or the interactive session" },
	{ "ranks", ARG_NONE, NULL, NULL, run_ranks,
	  "one row per MPI rank: CPU, MPI time; the imbalance per call site (-M)" },
	{ "sample_list", ARG_NONE, NULL, NULL, run_sample_list,
	  "per experiment: the sample selection and the number of samples" },
	{ "sample_select", ARG_ONE, "all|LIST", check_filter, run_sample_select,
	  "only events in these samples (numbers as -samples shows), in every view" },
	{ "samples", ARG_NONE, NULL, NULL, run_samples,
	  "one row per sample: usage counters and the metrics in it" },
	{ "script", ARG_ONE, "FILE", check_nonempty, run_script,
	  "run the commands in FILE (one a line, # comments)" },
	{ "seconds", ARG_NONE, NULL, NULL, run_seconds,
	  "per-second totals: one row per second of the run" },
	{ "setpath", ARG_ONE, "DIR:DIR...", check_nonempty, run_setpath,
	  "look for source files in these directories only (replaces -addpath's)" },
	{ "sort", ARG_ONE, "SPEC", check_sort, run_sort,
	  "sort by a metric (e.totalcpu, i.totalcpu) or by name" },
	{ "source", ARG_ONE, "FUNC|FILE", check_nonempty, run_source,
	  "annotated source of a function's file, or of a file" },
	{ "statistics", ARG_NONE, NULL, NULL, run_statistics,
	  "process statistics from the overview samples" },
	{ "sthresh", ARG_ONE, "PERCENT", check_percent, run_sthresh,
	  "-source marks lines whose metric reaches PERCENT of the largest (75)" },
	{ "sync", ARG_NONE, NULL, NULL, run_trace,
	  "sync waits by lock or other object, longest total wait first (-s on)" },
	{ "tailcalls", ARG_ONE, "on|off", check_filter, run_tailcalls,
	  "frames tail calls left off, restored from DWARF call sites (on) or not" },
	{ "thread_list", ARG_NONE, NULL, NULL, run_thread_list,
	  "per experiment: the thread selection and the number of threads" },
	{ "thread_select", ARG_ONE, "all|LIST", check_filter, run_thread_select,
	  "only these threads (numbers as -threads shows)" },
	{ "threads", ARG_NONE, NULL, NULL, run_threads,
	  "per-thread totals" },
	{ "time", ARG_ONE, "all|START-END", check_filter, run_time,
	  "only events from START to END seconds after the start, in every view" },
	{ "time_select", ARG_ONE, "all|START-END", check_filter, run_time,
	  "the same as -time" },
	{ "version", ARG_NONE, NULL, NULL, run_version,
	  "sonde's version" },
	{ "viewmode", ARG_ONE, "user|expert|machine", check_viewmode, run_viewmode,
	  "er_print's view modes: OpenMP and Java as their source has them; machine: as recorded" },
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
	/* the clock profile's metrics (the last on a line of its own) and
	 * its default with off-CPU time, from the table */
	fprintf(f, "\nMetric specs: FLAVOR VISIBILITY NAME items joined by ':'; flavours e\n"
		   "(exclusive), i (inclusive), a (attributed); visibility . (time), + (value),\n"
		   "%% (percent); metrics ");
	for (int m = 0; m < SONDE_M_CLOCK_N; m++)
		fprintf(f, "%s%s", sonde_metric(m)->name, m + 2 < SONDE_M_CLOCK_N ? ", " : m + 1 < SONDE_M_CLOCK_N ? ",\n" : "");
	char spec[256];
	clock_default_metrics(spec, sizeof spec, true, NULL);
	fprintf(f, " (and the traced kinds' and counters', -metric_list; with cycles and insts\n"
		   "also the ratios CPI and IPC, which have no %%).  Default e.%%totalcpu:i.%%totalcpu:name;\n"
		   "with off-CPU time %sname.\n",
		spec);
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
	if (c->arg_kind != ARG_NONE && c->arg_kind != ARG_OPT && !arg) {
		complain(where, "-%s needs an argument: %s", c->name, c->arg);
		return -1;
	}
	if (c->arg_kind != ARG_NONE && arg && c->check && c->check(c, arg, err, sizeof(err)) < 0) {
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
	s->arg = c->arg_kind != ARG_NONE && arg ? strdup(arg) : NULL;
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

	st->doc_title = s->cmd->name;
	int r = s->cmd->run(st, s, err, sizeof(err));

	if (st->in_doc) { /* html: a view's output is a document of its own, as er_print's */
		struct sonde_emit e;

		em_init(&e, st->out, st->o.mode);
		em_doc_finish(&e);
		st->in_doc = false;
	}
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
	sonde_exp_tree_init(&st.tree);
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

		if (c && c->arg_kind == ARG_OPT) {
			char cerr[256];

			if (i + 1 < argc && argv[i + 1][0] == '-' && !c->check(c, argv[i + 1], cerr, sizeof cerr))
				arg = argv[++i];
		} else if (c && c->arg_kind != ARG_NONE) {
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
	st.exps = calloc(st.tree.n + 1, sizeof(*st.exps));
	st.names = calloc(st.tree.n + 1, sizeof(*st.names));
	st.cprof = calloc(st.tree.n + 1, sizeof(*st.cprof));
	st.reported = calloc(st.tree.n + 1, sizeof(*st.reported));
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
	/* The per-CPU and per-second totals cost a little per event: kept
	 * when a view will show them, from the first build on. */
	for (size_t i = 0; i < ss.n; i++) {
		const struct step *s = &ss.v[i];
		const struct sonde_indxobj *x = s->cmd->run == run_indxobj ? sonde_indxobj_find(s->arg) : NULL;

		st.index_cpus |= s->cmd->run == run_cpus || (x && x->kind == SONDE_IDX_CPUS);
		st.index_seconds |= s->cmd->run == run_seconds || (x && x->kind == SONDE_IDX_SECONDS);
	}

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
	sonde_exp_tree_release(&st.tree);
	free(st.exps);
	free(st.names);
	free(st.cprof);
	free(st.reported);
	free(st.thread_select);
	free(st.object_select);
	free(st.sample_select);
	free(st.cpu_select);
	free(st.callpath_select);
	free(st.experiment_select);
	frag_clear(&st);
	free_hidden(&st);
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

