/*
 * The clock profile (sonde collect -p, and -w's off-CPU samples): one
 * sample per profile or off-CPU packet (include/sonde/format.h), weighed
 * with its thread's CPU time (or blocked time) since its previous sample,
 * in a thread state (include/sonde/states.h).  Its module on the
 * analyzer's side (base/kindmod.h), as far as the other layers go through
 * it:
 *   - model: its metrics (Total CPU Time, samples, the microstates, a
 *     metric per thread state that has one, Total Thread Time), first in
 *     the table of every metric, at model/profile.h's SONDE_M_*
 *     constants, and which of them an experiment recorded.  It has no
 *     feed: the model builder adds the samples itself, summed per stack
 *     and state a cache line each (model/profile.c), the one kind whose
 *     events are counted in the millions;
 *   - agg: its event kind, `profile`, whose fields and source are agg's
 *     own (agg/dlang_events.c: it walks the samples with agg's fast path
 *     for one clause);
 *   - view: -dump profile (views/view_dump.c, with the stacks' dump it
 *     shares its frame lines with);
 *   - reader: the number of its samples.  The reader scans its packets
 *     itself (reader/experiment.c), into the samples' blocks the sample
 *     iterator walks and the summary and threads' sums every view reads;
 * -header's microstate and off-CPU lines are part of -header's own
 * layout (views/view_header.c).
 */
#include "agg/kind.h"
#include "model/kind.h"
#include "model/profile.h"
#include "reader/kind.h"
#include "views/kind.h"

/* ---- reading ------------------------------------------------------------------------- */

static size_t events(const struct sonde_exp *exp)
{
	const struct sonde_exp_summary *s = sonde_exp_summary(exp);

	return s->samples + s->offcpu_samples;
}

static const struct sonde_reader_kind reader = {
	.events = events,
};

/* ---- metrics ------------------------------------------------------------------------- */

static const struct sonde_metric_def metrics[SONDE_M_CLOCK_N] = {
	[SONDE_M_TOTALCPU] = { "totalcpu", "Total CPU Time", "Total CPU", SONDE_UNIT_NS },
	[SONDE_M_SAMPLES] = { "samples", "Samples", "Samples", SONDE_UNIT_COUNT },
	[SONDE_M_USER] = { "user", "User CPU Time", "User CPU", SONDE_UNIT_NS },
	[SONDE_M_SYSTEM] = { "system", "System CPU Time", "Sys. CPU", SONDE_UNIT_NS },
	[SONDE_M_WAIT] = { "wait", "Wait CPU Time", "Wait CPU", SONDE_UNIT_NS },
	/* each state's that has one: "ulock", "User Lock Time", "User Lock" */
#define STATE_METRIC_(NAME, id, flags, M, name, metric, title, ...) \
	SONDE_STATE_METRIC_IF_(M, [SONDE_M_STATE_##NAME] = { metric, title, name, SONDE_UNIT_NS }, )
	SONDE_STATES(STATE_METRIC_)
#undef STATE_METRIC_
	/* each summed metric's: "ompwait", "OpenMP Wait Time", "OpenMP Wait" */
#define SUM_METRIC_(NAME, members, name, metric, title) [SONDE_M_SUM_##NAME] = { metric, title, name, SONDE_UNIT_NS },
	SONDE_STATE_SUMS(SUM_METRIC_)
#undef SUM_METRIC_
	[SONDE_M_TOTAL] = { "total", "Total Thread Time", "Total Thread", SONDE_UNIT_NS },
};

/* totalcpu and samples when the experiment was clock-profiled; user,
 * system and wait with microstates; an off-CPU state's with off-CPU
 * time, a CPU state's with samples in it; total with either. */
static bool recorded(const struct sonde_exp *exp, int m)
{
	switch (m) {
	case SONDE_M_TOTALCPU:
	case SONDE_M_SAMPLES:
		return sonde_exp_info(exp)->settings.clock_interval_ns > 0 || sonde_exp_summary(exp)->samples > 0;
	case SONDE_M_USER:
	case SONDE_M_SYSTEM:
	case SONDE_M_WAIT:
		return sonde_exp_has_microstates(exp);
	case SONDE_M_TOTAL:
		return sonde_exp_has_microstates(exp) || sonde_exp_has_offcpu(exp);
	}
	/* a runtime's off-CPU state (OpenMP's) as a CPU state: with samples */
	for (unsigned st = 0; st < SONDE_STATE_COUNT; st++)
		if (sonde_state_metric(st) == m)
			return sonde_state_offcpu(st) && !sonde_state_runtime_offcpu(st)
				       ? sonde_exp_has_offcpu(exp)
				       : sonde_exp_summary(exp)->state_samples[st] > 0;
	/* a sum: with samples in any of its members */
#define SUM_REC_(NAME, members, ...) \
	if (m == SONDE_M_SUM_##NAME) { \
		for (unsigned st = 0; st < SONDE_STATE_COUNT && st < 64; st++) \
			if (((members) >> st & 1) && sonde_exp_summary(exp)->state_samples[st] > 0) \
				return true; \
		return false; \
	}
	SONDE_STATE_SUMS(SUM_REC_)
#undef SUM_REC_
	return false;
}

static const struct sonde_model_kind model = {
	.metrics = metrics,
	.nmetrics = SONDE_M_CLOCK_N,
	.recorded = recorded,
};

/* ---- the module ---------------------------------------------------------------------- */

static const struct sonde_view_kind view = {
	.dump = sonde_dump_profile,
};

const struct sonde_kind_module sonde_kind_module_PROFILE = {
	.reader = &reader,
	.model = &model,
	.agg = &sonde_dl_kind_profile,
	.view = &view,
};
