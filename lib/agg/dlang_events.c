/*
 * dlang_events: the event kinds of the sonde agg language and the sources
 * that feed a program their events: stdin lines, an experiment's profile
 * samples, and the helpers the traced kinds' run functions feed theirs
 * with (agg/kind.h, lib/kinds/NAME.c).  Apart from the language because
 * this is where it meets the reader and the symbols: names are computed
 * once per distinct stack and mapping epoch, and only for the fields a
 * program uses.
 */
#include "base/grow.h"
#include "agg/dlang_internal.h"
#include "agg/kind.h"
#include "symbols/symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- kinds ------------------------------------------------------------------ */

const struct sonde_dl_kind sonde_dl_kind_stdin = {
	.name = "stdin",
	.positional = true,
	.doc = "one event per line of standard input; $0 is the line, $1, $2, ... its "
	       "blank-separated fields",
};

/* The state field's text: its words, from the table of states
 * (sonde/states.h): "cpu (a CPU sample), user-lock or other-wait (an
 * off-CPU sample)". */
static char state_doc[512];

static size_t state_words(size_t n, bool offcpu)
{
	unsigned k = 0, all = 0;
	for (unsigned st = 0; st < SONDE_STATE_COUNT; st++)
		all += sonde_state_offcpu(st) == offcpu;
	for (unsigned st = 0; st < SONDE_STATE_COUNT && n < sizeof state_doc; st++)
		if (sonde_state_offcpu(st) == offcpu)
			n += (size_t)snprintf(state_doc + n, sizeof state_doc - n, "%s%s",
					      !k++ ? "" : k == all ? " or " : ", ", sonde_state_desc(st)->agg);
	return n < sizeof state_doc ? n : sizeof state_doc - 1;
}

__attribute__((constructor)) static void state_doc_init(void)
{
	size_t n = state_words(0, false);
	n += (size_t)snprintf(state_doc + n, sizeof state_doc - n, " (a CPU sample), ");
	n = state_words(n < sizeof state_doc ? n : sizeof state_doc - 1, true);
	snprintf(state_doc + n, sizeof state_doc - n, " (an off-CPU sample)");
}

static const struct sonde_dl_field profile_fields[SONDE_DL_P_NFIELDS] = {
	[SONDE_DL_P_THREAD] = { "thread", SONDE_DL_INT, "thread id" },
	[SONDE_DL_P_CPU] = { "cpu", SONDE_DL_INT, "CPU the sample was taken on, -1 when unknown" },
	[SONDE_DL_P_TIME] = { "time", SONDE_DL_INT, "nanoseconds since the experiment started" },
	[SONDE_DL_P_WEIGHT] = { "weight", SONDE_DL_INT,
				"nanoseconds of CPU time the sample stands for (off-CPU: of blocked wall time)" },
	[SONDE_DL_P_OBJECT] = { "object", SONDE_DL_STR, "load object of the leaf frame (file name)" },
	[SONDE_DL_P_FUNC] = { "func", SONDE_DL_STR, "function of the leaf frame" },
	[SONDE_DL_P_CALLER] = { "caller", SONDE_DL_STR, "function of the leaf's caller (tail calls restored)" },
	[SONDE_DL_P_PC] = { "pc", SONDE_DL_INT, "address of the leaf frame" },
	[SONDE_DL_P_DEPTH] = { "depth", SONDE_DL_INT, "number of frames in the call stack" },
	[SONDE_DL_P_STATE] = { "state", SONDE_DL_STR, state_doc },
	[SONDE_DL_P_USER] = { "user", SONDE_DL_INT, "nanoseconds of User CPU time of the sample (weight - system)" },
	[SONDE_DL_P_SYSTEM] = { "system", SONDE_DL_INT, "nanoseconds of System CPU time of the sample" },
	[SONDE_DL_P_WAITCPU] = { "waitcpu", SONDE_DL_INT,
				 "nanoseconds the thread waited for a CPU (run queue) before the sample" },
	[SONDE_DL_P_SYSCALL] = { "syscall", SONDE_DL_INT,
				 "off-CPU: the x86-64 system call it blocked in; -1 none (a page-in, or a CPU sample)" },
	[SONDE_DL_P_OMPSTATE] = { "ompstate", SONDE_DL_STR,
				  "the thread's OpenMP state, on CPU or blocked: work, barrier, lock, taskwait, idle, "
				  "overhead; none outside OpenMP" },
	[SONDE_DL_P_JAVAFRAME] = { "javaframe", SONDE_DL_STR,
				   "how the sample's top Java frame ran: interpreted, compiled (C2), compiled-c1, "
				   "inlined (into a compiled method), unknown (not told); none without Java frames" },
};

/* The javaframe field's words, and the one of a stack: the kind of its
 * first Java frame. */
static const char *const java_words[] = { "interpreted", "compiled", "compiled-c1", "inlined", "unknown", "none" };
#define JAVA_WORDS (sizeof java_words / sizeof java_words[0])

static int java_frame_word(const struct sonde_stack *st)
{
	for (uint32_t i = 0; st && i < st->depth; i++)
		switch (st->frame[i].kind) {
		case SONDE_FRAME_JAVA_INTERP:
			return 0;
		case SONDE_FRAME_JAVA_COMPILED:
			return 1;
		case SONDE_FRAME_JAVA_COMPILED_C1:
			return 2;
		case SONDE_FRAME_JAVA_INLINED:
			return 3;
		case SONDE_FRAME_JAVA:
			return 4;
		}
	return 5;
}

/* The ompstate field's word of a state: its OpenMP cause, the same on
 * CPU and off it. */
static const char *omp_word(unsigned state)
{
	switch (state) {
	case SONDE_STATE_OMP_WORK:
		return "work";
	case SONDE_STATE_OMP_BARRIER:
	case SONDE_STATE_OMP_BARRIER_OFF:
		return "barrier";
	case SONDE_STATE_OMP_LOCK:
	case SONDE_STATE_OMP_LOCK_OFF:
		return "lock";
	case SONDE_STATE_OMP_TASKWAIT:
	case SONDE_STATE_OMP_TASKWAIT_OFF:
		return "taskwait";
	case SONDE_STATE_OMP_IDLE:
	case SONDE_STATE_OMP_IDLE_OFF:
		return "idle";
	case SONDE_STATE_OMP_OVERHEAD:
		return "overhead";
	default:
		return "none";
	}
}

/* The clock profile module's agg part (lib/kinds/profile.c): its source,
 * sonde_dl_run_profile below, walks the samples with the evaluator's own
 * fast path for a single clause. */
const struct sonde_dl_kind sonde_dl_kind_profile = {
	.name = "profile",
	.fields = profile_fields,
	.nfields = SONDE_DL_P_NFIELDS,
	.doc = "one event per clock-profile sample of the experiment, and per off-CPU sample (state not cpu)",
	.run = sonde_dl_run_profile,
};

const struct sonde_dl_kind *sonde_dl_kind_of(int kind)
{
	const struct sonde_kind_module *m = sonde_kind_module(kind);

	return m ? m->agg : NULL;
}

int64_t sonde_dl_run_kind(struct sonde_dl_prog *p, int kind, const struct sonde_exp *exp,
			  sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen)
{
	const struct sonde_dl_kind *k = sonde_dl_kind_of(kind);

	return k && k->run ? k->run(p, exp, name_of_pc, ctx, err, errlen) : 0;
}

/* ---- stdin -------------------------------------------------------------------------- */

static inline bool blank(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int64_t sonde_dl_run_stdin(struct sonde_dl_prog *p, int fd, char *err, size_t errlen)
{
	const struct kindinfo *ki = dl_kind_info(p, &sonde_dl_kind_stdin);

	if (!ki || !ki->nclauses)
		return 0;
	size_t nf = p->maxpos + 1, cap = 1 << 20, have = 0;
	struct sonde_dl_val *vals = calloc(nf, sizeof(*vals));
	char *buf = malloc(cap);
	int64_t lines = 0;
	bool eof = false;

	if (!vals || !buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	const struct clause *only = ki->nclauses == 1 ? &p->clauses[ki->clauses[0]] : NULL;
	struct evctx c = { p, vals, nf };

	p->cur_kind = "stdin";
	while (!eof) {
		if (sonde_grow(&buf, &cap, have + 1, 1, 1 << 20)) {
			snprintf(err, errlen, "out of memory (a line longer than %zu bytes)", cap);
			goto fail;
		}
		ssize_t n = read(fd, buf + have, cap - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "cannot read standard input: %s", strerror(errno));
			goto fail;
		}
		if (n == 0) {
			eof = true;
			if (have == 0)
				break;
			buf[have++] = '\n'; /* the last line had no newline; have < cap here */
		} else {
			have += (size_t)n;
		}
		char *s = buf, *end = buf + have;

		for (;;) {
			char *nl = memchr(s, '\n', (size_t)(end - s));

			if (!nl)
				break;
			char *e = nl;

			if (e > s && e[-1] == '\r')
				e--;
			lines++;
			vals[0].type = SONDE_DL_V_TEXT;
			vals[0].s = s;
			vals[0].len = (uint32_t)(e - s);
			const char *q = s;

			for (size_t f = 1; f < nf; f++) {
				while (q < e && blank((unsigned char)*q))
					q++;
				const char *b = q;

				while (q < e && !blank((unsigned char)*q))
					q++;
				vals[f].type = q > b ? SONDE_DL_V_TEXT : SONDE_DL_V_STR;
				vals[f].s = b;
				vals[f].len = (uint32_t)(q - b);
			}
			p->cur_ordinal = (uint64_t)lines;
			if (only) {
				if (dl_run_clause(&c, only, NULL) < 0)
					goto oom;
			} else if (sonde_dl_event(p, &sonde_dl_kind_stdin, vals, nf, (uint64_t)lines) < 0) {
				goto oom;
			}
			s = nl + 1;
		}
		have = (size_t)(end - s);
		memmove(buf, s, have);
		if (eof && have) /* cannot happen: a newline was appended */
			break;
	}
	free(vals);
	free(buf);
	return lines;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(vals);
	free(buf);
	return -1;
}

/* ---- profile ---------------------------------------------------------------------------- */

const char *sonde_dl_pc_name_fallback(void *ctx, const struct sonde_exp *exp, const struct sonde_frame *frame,
				      uint64_t time_ns, const struct sonde_frame *callee, const char **object)
{
	(void)callee; /* no symbols, no call sites: pc's object and offset */
	static char buf[512];
	uint64_t pc = frame->pc;

	(void)ctx;
	if (object)
		*object = NULL;
	if (frame->kind != SONDE_FRAME_NATIVE) {
		const struct sonde_frame_kind_info *ki = sonde_frame_kind_info(frame->kind);

		if (ki)
			snprintf(buf, sizeof(buf), "%s@0x%" PRIx64, ki->word, pc);
		else
			snprintf(buf, sizeof(buf), "kind %u@0x%" PRIx64, frame->kind, pc);
		return buf;
	}
	uint64_t a = frame->exact ? pc : pc - 1;
	const struct sonde_object *o = sonde_exp_find_object(exp, a, time_ns);

	if (o)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, o->name, a - o->base);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return buf;
}

/* A stack's names, made at its first event in a mapping epoch
 * (sonde_exp_map_epoch): one stack id names different functions before
 * and after a library at its addresses was replaced.  Events come nearly
 * in time order, so one entry per stack, remade when the epoch changes,
 * costs nothing where no address was reused (one epoch). */
struct sonde_dl_stack_names {
	const char *func, *caller, *object;
	uint32_t flen, clen, olen;
	uint32_t epoch;
	bool done;
};

int64_t sonde_dl_run_profile(struct sonde_dl_prog *p, const struct sonde_exp *exp,
			     sonde_dl_name_fn name_of_pc, void *ctx, char *err, size_t errlen)
{
	const struct kindinfo *ki = dl_kind_info(p, &sonde_dl_kind_profile);

	if (!ki || !ki->nclauses)
		return 0;
	if (!name_of_pc)
		name_of_pc = sonde_dl_pc_name_fallback;

	bool want_func = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_FUNC);
	bool want_caller = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_CALLER);
	bool want_object = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_OBJECT);
	bool want_names = want_func || want_caller || want_object;
	bool want_java = sonde_dl_uses_field(p, &sonde_dl_kind_profile, SONDE_DL_P_JAVAFRAME);
	size_t nst;
	const struct sonde_stack *stacks = sonde_exp_stacks(exp, &nst);
	struct sonde_dl_stack_names *cache = calloc(nst ? nst : 1, sizeof(*cache));
	size_t nepochs = sonde_exp_map_epochs(exp);
	const char *unknown = sonde_aggset_intern(p->set, "<unknown>", 9);
	const char *none = sonde_aggset_intern(p->set, "<none>", 6);
	struct sonde_dl_stack_names unk = { unknown, unknown, unknown, 9, 9, 9, 0, true };
	uint64_t start = sonde_exp_info(exp)->start_ns;
	struct sonde_dl_val vals[SONDE_DL_P_NFIELDS];
	struct sonde_sample_iter it;
	struct sonde_sample smp;
	int64_t n = 0;
	uint64_t last_id = 0;
	const struct sonde_stack *last_st = NULL;
	bool have_last = false;

	/* the states' words (sonde/states.h); a state this build does not
	 * know (a CPU sample's) by its number */
	const char *states[SONDE_STATE_COUNT + 1], *omp[SONDE_STATE_COUNT + 1];
	bool states_ok = true;

	for (unsigned i = 0; i <= SONDE_STATE_COUNT; i++) {
		const char *w = i < SONDE_STATE_COUNT ? sonde_state_desc(i)->agg : "?";
		states_ok &= (states[i] = sonde_aggset_intern(p->set, w, strlen(w))) != NULL;
		w = omp_word(i);
		states_ok &= (omp[i] = sonde_aggset_intern(p->set, w, strlen(w))) != NULL;
	}
	const char *jw[JAVA_WORDS];

	for (size_t i = 0; i < JAVA_WORDS; i++)
		states_ok &= (jw[i] = sonde_aggset_intern(p->set, java_words[i], strlen(java_words[i]))) != NULL;
	if (!cache || !unknown || !none || !states_ok)
		goto oom;
	memset(vals, 0, sizeof(vals));
	for (int f = 0; f < SONDE_DL_P_NFIELDS; f++)
		vals[f].type = profile_fields[f].type == SONDE_DL_STR ? SONDE_DL_V_ISTR : SONDE_DL_V_INT;

	const struct clause *only = ki->nclauses == 1 ? &p->clauses[ki->clauses[0]] : NULL;
	struct evctx c = { p, vals, SONDE_DL_P_NFIELDS };

	p->cur_kind = "profile";
	sonde_sample_iter_init(&it, exp);
	while (sonde_sample_iter_next(&it, &smp)) {
		const struct sonde_stack *st;

		if (have_last && smp.stack_id == last_id) {
			st = last_st;
		} else {
			st = sonde_exp_stack(exp, smp.stack_id);
			last_id = smp.stack_id;
			last_st = st;
			have_last = true;
		}
		n++;
		vals[SONDE_DL_P_THREAD].i = smp.tid;
		vals[SONDE_DL_P_CPU].i = smp.cpu == 0xffff ? -1 : smp.cpu;
		vals[SONDE_DL_P_TIME].i = (int64_t)(smp.time_ns - start);
		vals[SONDE_DL_P_WEIGHT].i = (int64_t)smp.weight_ns;
		unsigned sti = smp.state < SONDE_STATE_COUNT ? smp.state : SONDE_STATE_COUNT;
		bool off = sonde_state_offcpu(smp.state); /* the reader checked it */
		vals[SONDE_DL_P_STATE].s = states[sti];
		vals[SONDE_DL_P_STATE].len = (uint32_t)strlen(states[sti]);
		vals[SONDE_DL_P_OMPSTATE].s = omp[sti];
		vals[SONDE_DL_P_OMPSTATE].len = (uint32_t)strlen(omp[sti]);
		vals[SONDE_DL_P_USER].i = off ? 0 : (int64_t)(smp.weight_ns - smp.system_ns);
		vals[SONDE_DL_P_SYSTEM].i = (int64_t)smp.system_ns;
		vals[SONDE_DL_P_WAITCPU].i = (int64_t)smp.wait_cpu_ns;
		vals[SONDE_DL_P_SYSCALL].i = !off || smp.syscall == SONDE_OFFCPU_NO_SYSCALL ? -1 : smp.syscall;
		if (want_java) {
			int w = java_frame_word(st);

			vals[SONDE_DL_P_JAVAFRAME].s = jw[w];
			vals[SONDE_DL_P_JAVAFRAME].len = (uint32_t)strlen(jw[w]);
		}
		vals[SONDE_DL_P_PC].i = st && st->depth ? (int64_t)st->frame[0].pc : 0;
		vals[SONDE_DL_P_DEPTH].i = st ? st->depth : 0;
		if (want_names) {
			const struct sonde_dl_stack_names *nm = &unk;

			if (st && st->depth && st >= stacks && st < stacks + nst) {
				struct sonde_dl_stack_names *e = &cache[st - stacks];
				uint32_t ep = nepochs > 1 ? sonde_exp_map_epoch(exp, smp.time_ns, NULL, NULL) : 0;

				if (!e->done || e->epoch != ep) {
					e->epoch = ep;
					const struct sonde_frame *f0 = &st->frame[0];
					const char *s;

					if (want_func) {
						s = name_of_pc(ctx, exp, f0, smp.time_ns, NULL, NULL);
						e->func = s ? sonde_aggset_intern(p->set, s, strlen(s)) : unknown;
						if (!e->func)
							goto oom;
					}
					if (want_caller) {
						if (st->depth > 1) {
							s = name_of_pc(ctx, exp, &st->frame[1], smp.time_ns, f0, NULL);
							e->caller = s ? sonde_aggset_intern(p->set, s, strlen(s))
								      : unknown;
							if (!e->caller)
								goto oom;
						} else {
							e->caller = none;
						}
					}
					if (want_object) {
						const char *on = NULL;

						if (f0->kind == SONDE_FRAME_NATIVE) {
							const struct sonde_object *o = sonde_exp_find_object(
								exp, f0->exact ? f0->pc : f0->pc - 1, smp.time_ns);

							on = o ? o->name : NULL;
						} else {
							name_of_pc(ctx, exp, f0, smp.time_ns, NULL, &on);
						}
						e->object = on ? sonde_aggset_intern(p->set, on, strlen(on)) : unknown;
						if (!e->object)
							goto oom;
					}
					e->flen = e->func ? (uint32_t)strlen(e->func) : 0;
					e->clen = e->caller ? (uint32_t)strlen(e->caller) : 0;
					e->olen = e->object ? (uint32_t)strlen(e->object) : 0;
					e->done = true;
				}
				nm = e;
			}
			if (want_func) {
				vals[SONDE_DL_P_FUNC].s = nm->func;
				vals[SONDE_DL_P_FUNC].len = nm->flen;
			}
			if (want_caller) {
				vals[SONDE_DL_P_CALLER].s = nm->caller;
				vals[SONDE_DL_P_CALLER].len = nm->clen;
			}
			if (want_object) {
				vals[SONDE_DL_P_OBJECT].s = nm->object;
				vals[SONDE_DL_P_OBJECT].len = nm->olen;
			}
		}
		p->cur_ordinal = (uint64_t)n;
		if (only) {
			if (dl_run_clause(&c, only, NULL) < 0)
				goto oom;
		} else if (sonde_dl_event(p, &sonde_dl_kind_profile, vals, SONDE_DL_P_NFIELDS,
					  (uint64_t)n) < 0) {
			goto oom;
		}
	}
	free(cache);
	return n;
oom:
	free(cache);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- traced events: the helpers of the kinds' run functions (agg/kind.h) ---------------- */

/* The collector's own frames (an interposer above the traced call) are
 * not the program's: native frames in sonde's objects. */
static bool collector_frame(const struct sonde_exp *exp, const struct sonde_frame *f, uint64_t time_ns)
{
	if (f->kind != SONDE_FRAME_NATIVE)
		return false;
	const struct sonde_object *o = sonde_exp_find_object(exp, f->exact ? f->pc : f->pc - 1, time_ns);

	return o && o->sonde;
}

static bool runs_kind(const struct sonde_dl_prog *p, const struct sonde_dl_kind *k)
{
	const struct kindinfo *ki = dl_kind_info(p, k);

	return ki && ki->nclauses;
}

int sonde_dl_trace_begin(struct sonde_dl_trace *t, struct sonde_dl_prog *p, const struct sonde_exp *exp,
			 const struct sonde_dl_kind *k, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc,
			 void *ctx, struct sonde_dl_val *vals)
{
	memset(t, 0, sizeof(*t));
	if (!runs_kind(p, k))
		return 0;
	t->p = p;
	t->exp = exp;
	t->name_of_pc = name_of_pc ? name_of_pc : sonde_dl_pc_name_fallback;
	t->ctx = ctx;
	t->want_func = sonde_dl_uses_field(p, k, ffunc);
	t->want_caller = sonde_dl_uses_field(p, k, fcaller);
	t->start = sonde_exp_info(exp)->start_ns;
	t->nepochs = sonde_exp_map_epochs(exp);
	t->unknown = sonde_aggset_intern(p->set, "<unknown>", 9);
	t->none = sonde_aggset_intern(p->set, "<none>", 6);
	if (!t->unknown || !t->none)
		return -1;
	if (t->want_func || t->want_caller) {
		t->stacks = sonde_exp_stacks(exp, &t->nst);
		t->cache = calloc(t->nst ? t->nst : 1, sizeof(*t->cache));
		if (!t->cache)
			return -1;
	}
	memset(vals, 0, k->nfields * sizeof(*vals));
	for (size_t f = 0; f < k->nfields; f++) {
		vals[f].type = k->fields[f].type == SONDE_DL_STR ? SONDE_DL_V_ISTR : SONDE_DL_V_INT;
		if (k->fields[f].type == SONDE_DL_STR) {
			vals[f].s = "";
			vals[f].len = 0;
		}
	}
	return 1;
}

void sonde_dl_trace_end(struct sonde_dl_trace *t)
{
	free(t->cache);
	t->cache = NULL;
}

int64_t sonde_dl_trace_oom(struct sonde_dl_trace *t, char *err, size_t errlen)
{
	sonde_dl_trace_end(t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

bool sonde_dl_trace_uses(const struct sonde_dl_trace *t, const struct sonde_dl_kind *k, size_t i)
{
	return sonde_dl_uses_field(t->p, k, i);
}

const char *sonde_dl_trace_intern(struct sonde_dl_trace *t, const char *s)
{
	return sonde_aggset_intern(t->p->set, s, strlen(s));
}

/* callee: NULL, or the frame below (sonde_dl_name_fn). */
static const char *src_name(struct sonde_dl_trace *t, const struct sonde_frame *frame, uint64_t time_ns,
			    const struct sonde_frame *callee)
{
	const char *s = t->name_of_pc(t->ctx, t->exp, frame, time_ns, callee, NULL);

	return s ? sonde_aggset_intern(t->p->set, s, strlen(s)) : t->unknown;
}

int sonde_dl_trace_names(struct sonde_dl_trace *t, uint64_t stack_id, uint64_t time_ns, struct sonde_dl_val *func,
			 struct sonde_dl_val *caller)
{
	if (!t->want_func && !t->want_caller)
		return 0;
	const struct sonde_stack *st = stack_id ? sonde_exp_stack(t->exp, stack_id) : NULL;
	struct sonde_dl_stack_names unk = { t->unknown, t->unknown, NULL, 9, 9, 0, 0, true };
	struct sonde_dl_stack_names *nm = &unk;

	if (st && st->depth && st >= t->stacks && st < t->stacks + t->nst) {
		nm = &t->cache[st - t->stacks];
		uint32_t ep = t->nepochs > 1 ? sonde_exp_map_epoch(t->exp, time_ns, NULL, NULL) : 0;
		if (!nm->done || nm->epoch != ep) {
			int k0 = -1, k1 = -1;

			nm->epoch = ep;

			for (int k = 0; k < st->depth; k++) {
				if (collector_frame(t->exp, &st->frame[k], time_ns))
					continue;
				if (k0 < 0) {
					k0 = k;
				} else {
					k1 = k;
					break;
				}
			}
			nm->func = k0 < 0 ? t->unknown : src_name(t, &st->frame[k0], time_ns, NULL);
			nm->caller = k0 < 0 ? t->unknown
				   : k1 < 0    ? t->none
					       : src_name(t, &st->frame[k1], time_ns, &st->frame[k0]);
			if (!nm->func || !nm->caller)
				return -1;
			nm->flen = (uint32_t)strlen(nm->func);
			nm->clen = (uint32_t)strlen(nm->caller);
			nm->done = true;
		}
	}
	func->s = nm->func;
	func->len = nm->flen;
	caller->s = nm->caller;
	caller->len = nm->clen;
	return 0;
}

int sonde_dl_trace_str(struct sonde_dl_trace *t, struct sonde_dl_val *v, const char *s)
{
	size_t len = strlen(s);

	v->s = sonde_aggset_intern(t->p->set, s, len);
	v->len = (uint32_t)len;
	return v->s ? 0 : -1;
}

int sonde_dl_trace_fname(struct sonde_dl_trace *t, struct sonde_dl_val *v, unsigned func,
			 const char *(*name)(unsigned))
{
	if (func >= 64)
		return sonde_dl_trace_str(t, v, name(func));
	if (!t->fname[func]) {
		const char *s = name(func);

		t->fnamelen[func] = (uint32_t)strlen(s);
		if (!(t->fname[func] = sonde_aggset_intern(t->p->set, s, t->fnamelen[func])))
			return -1;
	}
	v->s = t->fname[func];
	v->len = t->fnamelen[func];
	return 0;
}

int64_t sonde_dl_trace_run(struct sonde_dl_prog *p, const struct sonde_exp *exp, const struct sonde_dl_kind *k,
			   size_t n, size_t ffunc, size_t fcaller, sonde_dl_name_fn name_of_pc, void *ctx,
			   sonde_dl_fill_fn *fill, void *arg, char *err, size_t errlen)
{
	struct sonde_dl_val vals[SONDE_DL_MAX_FIELDS];
	struct sonde_dl_trace t;
	int r;

	if (k->nfields > SONDE_DL_MAX_FIELDS) { /* a kind this build cannot feed */
		snprintf(err, errlen, "event kind %s has more than %d fields", k->name, SONDE_DL_MAX_FIELDS);
		return -1;
	}
	if (!n || (r = sonde_dl_trace_begin(&t, p, exp, k, ffunc, fcaller, name_of_pc, ctx, vals)) == 0)
		return 0;
	if (r < 0)
		return sonde_dl_trace_oom(&t, err, errlen);
	for (size_t i = 0; i < n; i++) {
		uint64_t stack_id = 0, time_ns = 0;

		if (fill(&t, arg, i, vals, &stack_id, &time_ns) < 0 ||
		    sonde_dl_trace_names(&t, stack_id, time_ns, &vals[ffunc], &vals[fcaller]) < 0 ||
		    sonde_dl_event(p, k, vals, k->nfields, (uint64_t)i + 1) < 0)
			return sonde_dl_trace_oom(&t, err, errlen);
	}
	sonde_dl_trace_end(&t);
	return (int64_t)n;
}
