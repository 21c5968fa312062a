/*
 * -dump: the raw data of one experiment as the reader decoded it, one
 * line per packet (see doc/sonde-print.md), for checking what the
 * collector wrote.  Moved from cmd/ so that tests can call it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dynfunc.h"
#include "symbols/symbols.h"
#include "views/kind.h"
#include "views/view_exp.h"

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double since(const struct sonde_exp_info *in, uint64_t t)
{
	return t >= in->start_ns ? sec(t - in->start_ns) : -sec(in->start_ns - t);
}

/* The frames that tail calls left off between native frames i - 1 and i
 * (sonde_syms_tailcalls), one line each, innermost first, marked "(tail
 * call)"; or a line saying that several chains could have run. */
static void print_tailcalls(FILE *out, struct sonde_syms *syms, const struct sonde_stack *st, unsigned i,
			    bool leaf_exact, uint64_t time_ns)
{
	const struct sonde_frame *below = &st->frame[i - 1], *fr = &st->frame[i];
	bool exact = (i == 1 && leaf_exact) || below->exact;

	if (fr->exact || fr->kind != SONDE_FRAME_NATIVE || below->kind != SONDE_FRAME_NATIVE)
		return; /* a frame interrupted by a signal: no call; or not native code */
	const struct sonde_func *g = sonde_syms_lookup(syms, below->pc, exact, time_ns);
	const struct sonde_func *chain[SONDE_TAIL_MAX];
	int n = sonde_syms_tailcalls(syms, fr->pc, time_ns, g, chain, SONDE_TAIL_MAX);

	if (n == SONDE_TAIL_AMBIGUOUS)
		fprintf(out, "       (tail calls: several chains lead to %s; none restored)\n", g->name_short);
	for (int k = n; k-- > 0;)
		fprintf(out, "       (tail call)  %s+0x%" PRIx64 "  %s\n", chain[k]->object->name, chain[k]->lo,
			chain[k]->name_short);
}

/* A frame of another kind than native: its address (or method id), its
 * kind, and with syms its function in its object ("<kernel>:do_sys_open+0x12",
 * "Main.class:Main.run(int) bci 7"), or the name made for it when its
 * kind's file does not name it. */
static void print_other_frame(FILE *out, struct sonde_syms *syms, unsigned i, const struct sonde_frame *fr,
			      uint64_t time_ns)
{
	const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(fr->kind);

	fprintf(out, "    #%u 0x%" PRIx64 "  ", i, fr->pc);
	if (ki)
		fprintf(out, "%s", ki->word);
	else
		fprintf(out, "kind %u", fr->kind);
	if (syms) {
		const struct sonde_func *fn = sonde_syms_frame(syms, fr, time_ns);
		uint64_t at;
		const char *key;

		if (fn->synthesized || !fn->object)
			fprintf(out, "  %s", fn->name_long);
		else if (ki && ki->place && sonde_syms_frame_place(fr, fn, &at, &key))
			fprintf(out, "  %s:%s %s %" PRIu64, fn->object->name, fn->name_long, ki->place, at);
		else if (ki && ki->place)
			fprintf(out, "  %s:%s %s ?", fn->object->name, fn->name_long, ki->place);
		else
			fprintf(out, "  %s:%s+0x%" PRIx64, fn->object->name, fn->name_long, fr->pc - fn->lo);
	}
	if (fr->scoped)
		fprintf(out, "  [from scopes]");
	fprintf(out, "\n");
}

/* syms names the frames of other kinds than native (NULL: their kind
 * only); tailcalls also restores the native frames that tail calls left
 * off. */
static void print_frames(FILE *out, const struct sonde_dynfuncs *dyn, struct sonde_syms *syms, bool tailcalls,
			 const struct sonde_exp *exp, const struct sonde_stack *st, bool leaf_exact, uint64_t time_ns)
{
	for (unsigned i = 0; i < st->depth; i++) {
		if (st->frame[i].kind != SONDE_FRAME_NATIVE) {
			print_other_frame(out, syms, i, &st->frame[i], time_ns);
			continue;
		}
		uint64_t pc = st->frame[i].pc;
		const struct sonde_object *o = sonde_exp_find_object(exp, pc, time_ns);

		if (tailcalls && i > 0)
			print_tailcalls(out, syms, st, i, leaf_exact, time_ns);

		long d = o || !dyn ? -1 : sonde_dynfuncs_find(dyn, pc);
		size_t nd;

		if (o)
			fprintf(out, "    #%u 0x%" PRIx64 "  %s+0x%" PRIx64 "\n", i, pc, o->name,
			       pc - o->base);
		else if (d >= 0)
			fprintf(out, "    #%u 0x%" PRIx64 "  %s:%s+0x%" PRIx64 "\n", i, pc, SONDE_JIT_OBJECT,
				sonde_dynfuncs_entries(dyn, &nd)[d].name,
				pc - sonde_dynfuncs_entries(dyn, &nd)[d].lo);
		else
			fprintf(out, "    #%u 0x%" PRIx64 "  ?\n", i, pc);
	}
}

static void print_stack_flags(FILE *out, uint16_t flags)
{
	if (flags & SONDE_STACK_TRUNCATED)
		fprintf(out, "  [truncated]");
	if (flags & SONDE_STACK_INCOMPLETE)
		fprintf(out, "  [incomplete]");
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sonde_sample *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->weight_ns != y->weight_ns)
		return x->weight_ns < y->weight_ns ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int dump_profile_tc(FILE *out, const struct sonde_dynfuncs *dyn, struct sonde_syms *syms, bool tailcalls,
			   const struct sonde_exp *exp, char *err, size_t errlen)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);
	uint64_t all = s->samples + s->offcpu_samples;
	bool ms = sonde_exp_has_microstates(exp);
	struct sonde_sample *v = malloc((all ? all : 1) * sizeof(*v));
	struct sonde_sample_iter it;
	size_t n = 0;

	if (!v) {
		snprintf(err, errlen, "out of memory sorting %" PRIu64 " samples of '%s'", s->samples,
			 in->dir);
		return -1;
	}
	sonde_sample_iter_init(&it, exp);
	while (n < all && sonde_sample_iter_next(&it, &v[n]))
		n++;
	qsort(v, n, sizeof(*v), cmp_sample);

	if (s->offcpu_samples)
		fprintf(out, "# %zu profile samples of %s (%" PRIu64 " of them off-CPU: tid is the blocked "
			     "thread), by time; time in seconds since the start\n",
			n, in->dir, s->offcpu_samples);
	else
		fprintf(out, "# %zu profile samples of %s, by time; time in seconds since the start\n", n,
			in->dir);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_stack *st = sonde_exp_stack(exp, v[i].stack_id);

		/* off-CPU lines are "offcpu N": scripts that sum /^sample/ weights read CPU time */
		bool off = sonde_state_offcpu(v[i].state);
		const struct sonde_state_desc *sd = sonde_state_desc(v[i].state);

		fprintf(out, "%s %zu  time %.9f  tid %u  cpu ", off ? "offcpu" : "sample", i, since(in, v[i].time_ns),
			v[i].tid);
		if (v[i].cpu == 0xffff)
			fprintf(out, "-");
		else
			fprintf(out, "%u", v[i].cpu);
		/* a CPU sample's state when it is not plain CPU (sonde/states.h;
		 * its number when this build does not know it) */
		if (!off && v[i].state != SONDE_STATE_CPU) {
			if (sd)
				fprintf(out, "  state %s", sd->dump);
			else
				fprintf(out, "  state %u", v[i].state);
		}
		if (off) {
			const char *sc = sonde_syscall_name(v[i].syscall);

			fprintf(out, "  state %s  syscall ", sd->dump);
			if (sc && v[i].syscall != SONDE_OFFCPU_NO_SYSCALL)
				fprintf(out, "%s (%u)", sc, v[i].syscall);
			else if (sc)
				fprintf(out, "none (page-in)");
			else
				fprintf(out, "%u", v[i].syscall);
		}
		fprintf(out, "  weight %.3f ms", (double)v[i].weight_ns / 1e6);
		if (ms && !off)
			fprintf(out, "  system %.3f ms  wait_cpu %.3f ms", (double)v[i].system_ns / 1e6,
				(double)v[i].wait_cpu_ns / 1e6);
		fprintf(out, "  stack 0x%" PRIx64, v[i].stack_id);
		if (!st) {
			fprintf(out, "  [stack not found]\n");
			continue;
		}
		print_stack_flags(out, st->flags);
		fprintf(out, "\n");
		print_frames(out, dyn, syms, tailcalls, exp, st, true, v[i].time_ns);
	}
	free(v);
	return 0;
}

int sonde_dump_profile(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err,
		       size_t errlen)
{
	return dump_profile_tc(out, dyn, NULL, false, exp, err, errlen);
}

static int dump_stacks_tc(FILE *out, const struct sonde_dynfuncs *dyn, struct sonde_syms *syms, bool tailcalls,
			  const struct sonde_exp *exp, char *err, size_t errlen)
{
	size_t n;
	const struct sonde_stack *st = sonde_exp_stacks(exp, &n);

	fprintf(out, "# %zu distinct stacks of %s, leaf first\n", n, sonde_exp_info(exp)->dir);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "stack 0x%" PRIx64 "  depth %u", st[i].id, st[i].depth);
		print_stack_flags(out, st[i].flags);
		fprintf(out, "\n");
		/* (a stack's leaf is a pc when samples use it: exact) */
		print_frames(out, dyn, syms, tailcalls, exp, &st[i], true, SONDE_TIME_NEVER);
	}
	return 0;
}

static int dump_stacks(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp,
		       char *err, size_t errlen)
{
	return dump_stacks_tc(out, dyn, NULL, false, exp, err, errlen);
}

static int dump_overview(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp,
			 char *err, size_t errlen)
{
	static const char *const reasons[] = { "start", "end", "periodic" };
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_overview_packet *o = sonde_exp_overview(exp, &n);

	fprintf(out, "# %zu overview samples of %s; times in seconds\n", n, in->dir);
	fprintf(out, "%12s %-8s %10s %10s %10s %8s %9s %9s %9s %9s %10s\n", "time", "reason", "user",
	       "system", "minflt", "majflt", "inblock", "oublock", "nvcsw", "nivcsw", "maxrss_kb");
	for (size_t i = 0; i < n; i++) {
		char r[16];

		if (o[i].reason < sizeof(reasons) / sizeof(reasons[0]))
			snprintf(r, sizeof(r), "%s", reasons[o[i].reason]);
		else
			snprintf(r, sizeof(r), "%u", o[i].reason);
		fprintf(out, "%12.6f %-8s %10.3f %10.3f %10" PRIu64 " %8" PRIu64 " %9" PRIu64
		       " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10" PRIu64 "\n",
		       since(in, o[i].time_ns), r, sec(o[i].utime_ns), sec(o[i].stime_ns),
		       o[i].minflt, o[i].majflt, o[i].inblock, o[i].oublock, o[i].nvcsw,
		       o[i].nivcsw, o[i].maxrss_kb);
	}
	return 0;
}

static int dump_objects(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp,
			char *err, size_t errlen)
{
	const struct sonde_exp_info *in = sonde_exp_info(exp);
	size_t n;
	const struct sonde_object *o = sonde_exp_objects(exp, &n);

	fprintf(out, "# %zu load objects of %s; times in seconds\n", n, in->dir);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "object %u  loaded %.6f", o[i].id, since(in, o[i].load_ns));
		if (o[i].unload_ns != SONDE_TIME_NEVER)
			fprintf(out, "  unloaded %.6f", since(in, o[i].unload_ns));
		fprintf(out, "  base 0x%" PRIx64 "  range 0x%" PRIx64 "-0x%" PRIx64 "  buildid %s  %s\n",
		       o[i].base, o[i].lo, o[i].hi, o[i].buildid ? o[i].buildid : "-", o[i].path);
	}
	const struct sonde_dynfunc *e = dyn ? sonde_dynfuncs_entries(dyn, &n) : NULL;

	if (!e)
		return 0;
	fprintf(out, "# %zu dynamic functions (%s), %zu lines ignored\n", n, SONDE_JIT_MAP_FILE,
		sonde_dynfuncs_ignored(dyn));
	for (size_t i = 0; i < n; i++)
		fprintf(out, "dynfunc line %u  range 0x%" PRIx64 "-0x%" PRIx64 "  %s\n", e[i].line,
			e[i].lo, e[i].hi, e[i].name);
	return 0;
}


double sonde_dump_since(const struct sonde_exp_info *in, uint64_t t)
{
	return since(in, t);
}

void sonde_dump_stack(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, uint64_t id,
		      uint64_t t)
{
	const struct sonde_stack *st = id ? sonde_exp_stack(exp, id) : NULL;

	if (!st) {
		fprintf(out, "%s\n", id ? "  [stack not found]" : "");
		return;
	}
	print_stack_flags(out, st->flags);
	fprintf(out, "\n");
	print_frames(out, dyn, NULL, false, exp, st, false, t);
}

/* The dumps, by enum sonde_dump_kind (a kind's is at its id - 1, named as
 * the kind in sonde/kinds.h): the stacks', the sample points' and
 * objects' here, a kind's from its module (views/kind.h: the clock
 * profile's and the traced kinds'). */
typedef int dump_fn(FILE *out, const struct sonde_dynfuncs *dyn, const struct sonde_exp *exp, char *err,
		    size_t errlen);
static dump_fn *const own_dumps[SONDE_DUMP_NKINDS] = {
	[SONDE_DUMP_STACKS] = dump_stacks,
	[SONDE_DUMP_OVERVIEW] = dump_overview,
	[SONDE_DUMP_OBJECTS] = dump_objects,
};

static dump_fn *dump_of(int i)
{
	const struct sonde_kind_module *m = i == SONDE_DUMP_OBJECTS ? NULL : sonde_kind_module(i + 1);

	if (own_dumps[i])
		return own_dumps[i];
	return m && m->view ? m->view->dump : NULL;
}

static const char *dump_name(int i)
{
	return i == SONDE_DUMP_OBJECTS ? "objects" : sonde_kind_desc(i + 1)->name;
}

void sonde_dump_names(char *names, size_t len, const char *sep)
{
	size_t n = 0;

	/* The collector's own kinds, objects, then the traced kinds. */
	names[0] = '\0';
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < SONDE_DUMP_NKINDS; i++) {
			bool objects = i == SONDE_DUMP_OBJECTS;
			if (!dump_of(i) || (pass == 1) != objects || (!objects && sonde_kind_modular(i + 1) != (pass == 2)))
				continue;
			if (n < len)
				n += (size_t)snprintf(names + n, len - n, "%s%s", n ? sep : "", dump_name(i));
		}
}

int sonde_dump_parse(enum sonde_dump_kind *k, const char *s, char *err, size_t errlen)
{
	for (int i = 0; i < SONDE_DUMP_NKINDS; i++)
		if (dump_of(i) && !strcmp(s, dump_name(i))) {
			*k = (enum sonde_dump_kind)i;
			return 0;
		}
	char names[256];

	sonde_dump_names(names, sizeof names, ", ");
	snprintf(err, errlen, "unknown -dump argument '%s' (%s)", s, names);
	return -1;
}

int sonde_view_dump_tc(FILE *f, const struct sonde_exp *exp, enum sonde_dump_kind kind, bool tailcalls,
		       char *err, size_t errlen)
{
	bool present;
	struct sonde_dynfuncs *dyn;
	int rc;

	dump_fn *dump = (unsigned)kind < SONDE_DUMP_NKINDS ? dump_of(kind) : NULL;

	if (!dump) {
		snprintf(err, errlen, "no -dump kind %d", (int)kind);
		return -1;
	}
	dyn = sonde_dynfuncs_read(exp, &present);
	struct sonde_syms *syms = NULL;

	/* stacks: the symbol handle names their frames of other kinds than
	 * native (it reads nothing before it is asked) */
	if (kind == SONDE_DUMP_PROFILE || kind == SONDE_DUMP_STACKS) {
		syms = sonde_syms_open(exp);
		if (!syms) {
			sonde_dynfuncs_free(dyn);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (kind == SONDE_DUMP_PROFILE)
		rc = dump_profile_tc(f, dyn, syms, tailcalls, exp, err, errlen);
	else if (kind == SONDE_DUMP_STACKS)
		rc = dump_stacks_tc(f, dyn, syms, tailcalls, exp, err, errlen);
	else
		rc = dump(f, dyn, exp, err, errlen);
	sonde_syms_close(syms);
	sonde_dynfuncs_free(dyn);
	return rc;
}

int sonde_view_dump(FILE *f, const struct sonde_exp *exp, enum sonde_dump_kind kind, char *err,
		    size_t errlen)
{
	return sonde_view_dump_tc(f, exp, kind, false, err, errlen);
}
