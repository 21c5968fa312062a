/*
 * The model's part of a data kind (base/kindmod.h): the metrics its
 * events carry and the function that feeds them to a profile being built
 * (model/profile.c).  For the kinds' modules, lib/kinds/NAME.c.
 *
 * A kind's metrics follow the clock profile's (totalcpu, samples) in the
 * table of every metric (sonde_profile_metrics), kind after kind in id
 * order, so a new kind adds rows and no code here.  The kind's feed
 * function gives each event's values in its own metrics' order; the
 * builder puts them in place, applies the thread, time and sample filters
 * and counts the thread's totals.
 */
#ifndef SONDE_MODEL_KIND_H
#define SONDE_MODEL_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "base/kindmod.h"
#include "model/metrics.h"
#include "reader/experiment.h"

/* The profile being built, while one kind's events of one experiment are
 * fed to it (profile.c's). */
struct sonde_model_feed;

struct sonde_model_kind {
	/* Its metrics, in the order of the values it feeds. */
	const struct sonde_metric_def *metrics;
	int nmetrics;
	/* What `sonde print` shows when an experiment has the kind: an
	 * -metrics spec of its main metrics, each ending in ':'
	 * ("e.sync:i.sync:e.syncn:"), and the metric to sort by when the
	 * kind leads. */
	const char *default_metrics, *sort;
	/* Feeds exp's events with sonde_model_feed_event.  Returns 0, or -1
	 * out of memory. */
	int (*feed)(struct sonde_model_feed *f, const struct sonde_exp *exp);
	/* Whether exp recorded the kind's metric i (of its own order), for a
	 * kind whose metrics an experiment may record some of (the counters:
	 * the ones it named); NULL: all of them when exp traced the kind. */
	bool (*recorded)(const struct sonde_exp *exp, int i);
};

/* One event of the kind: its index among the kind's events (what the
 * exports' timelines look it up by), its thread, time and stack, and v,
 * one value per metric of the kind (in its order).  Returns 0, or -1 out
 * of memory. */
int sonde_model_feed_event(struct sonde_model_feed *f, size_t index, uint32_t tid, uint64_t time_ns,
			   uint64_t stack_id, const int64_t *v);
/* The CPU the next event was taken on, for a kind whose events record it
 * (the counters); without it an event has none (SONDE_CPU_UNKNOWN of
 * profile.h), which a CPU selection leaves out. */
void sonde_model_feed_cpu(struct sonde_model_feed *f, uint16_t cpu);

#endif
