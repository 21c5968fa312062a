/*
 * -samples and -overview: the global (sampling) data of experiments, per
 * sample (the interval between two sample points; experiment.h) and over
 * the whole run.
 *
 * A sample's usage counters are the differences of the process's
 * getrusage counters between its two points; its resident size is the
 * one read at its end.  Its event metrics are the clock-profile samples
 * and traced events whose time falls in it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/view.h"
#include "views/view_table.h"

static const char *const reason_names[SONDE_OV_NREASONS] = {
	"start", "end", "periodic", "signal", "pause", "resume", "api",
};

const char *sonde_view_point_reason(uint32_t r)
{
	return r < SONDE_OV_NREASONS && reason_names[r] ? reason_names[r] : "other";
}

/* Event metrics of one sample. */
struct smet {
	uint64_t cpu_ns, samples, sync_ns, heap_bytes, io_bytes;
};

/* Metrics of every sample (1..ns) of exp; NULL out of memory. */
static struct smet *sample_metrics(const struct sonde_exp *e, size_t ns)
{
	struct smet *m = calloc(ns + 1, sizeof(*m));

	if (!m)
		return NULL;
	struct sonde_sample_iter it;
	struct sonde_sample s;

	sonde_sample_iter_init(&it, e);
	while (sonde_sample_iter_next(&it, &s)) {
		if (sonde_state_offcpu(s.state))
			continue; /* off-CPU: no CPU time */
		size_t k = sonde_exp_sample_of(e, s.time_ns);

		m[k].cpu_ns += s.weight_ns;
		m[k].samples++;
	}
	size_t n;
	const struct sonde_sync_event *se = sonde_exp_sync_events(e, &n);

	for (size_t i = 0; se && i < n; i++)
		m[sonde_exp_sample_of(e, se[i].time_ns)].sync_ns += se[i].wait_ns;
	const struct sonde_heap_event *he = sonde_exp_heap_events(e, &n);

	for (size_t i = 0; he && i < n; i++)
		if (he[i].flags & SONDE_HEAPF_ALLOC)
			m[sonde_exp_sample_of(e, he[i].time_ns)].heap_bytes += he[i].bytes;
	const struct sonde_io_event *ie = sonde_exp_io_events(e, &n);

	for (size_t i = 0; ie && i < n; i++)
		if (ie[i].bytes > 0 && !(ie[i].flags & SONDE_IOF_ERROR))
			m[sonde_exp_sample_of(e, ie[i].time_ns)].io_bytes += (uint64_t)ie[i].bytes;
	return m;
}

static uint64_t d64(uint64_t hi, uint64_t lo)
{
	return hi >= lo ? hi - lo : 0;
}

static double rel(const struct sonde_exp *e, uint64_t t)
{
	uint64_t t0 = sonde_exp_info(e)->start_ns;

	return t > t0 ? (double)(t - t0) / 1e9 : 0.0;
}

static int fail(FILE *f, char *err, size_t errlen)
{
	if (ferror(f)) {
		snprintf(err, errlen, "cannot write the output");
		return -1;
	}
	return 0;
}

int sonde_view_samples(FILE *f, const struct sonde_exp *const *exps, size_t n,
		       const struct sonde_view_opts *o, char *err, size_t errlen)
{
	struct sonde_emit e;

	em_init(&e, f, o->mode);
	em_csv(&e, "experiment,sample,start,end,reason,label,totalcpu,samples,sync,heapallocbytes,iobytes,"
		   "user,system,minflt,majflt,inblock,oublock,nvcsw,nivcsw,rss_kb,maxrss_kb\n");
	em_obj(&e, NULL);
	em_s(&e, "view", "samples");
	em_arr(&e, "rows");
	for (size_t x = 0; x < n; x++) {
		const struct sonde_exp *ex = exps[x];
		const char *name = sonde_exp_info(ex)->name;
		size_t nov, ns = sonde_exp_nsamples(ex);
		const struct sonde_overview_packet *ov = sonde_exp_overview(ex, &nov);
		struct sonde_sample_sel *sel;

		if (sonde_sample_sel_new(&sel, ex, o->sample_select, err, errlen) < 0)
			return -1;
		struct smet *m = sample_metrics(ex, ns);

		if (!m) {
			sonde_sample_sel_free(sel);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (x)
			em_text(&e, "\n");
		em_text(&e, "Samples of %s: %zu; times in seconds from the start, usage counters per sample\n", name,
			ns);
		if (!ns) {
			em_text(&e, "(fewer than two sample points: no samples)\n");
		} else {
			em_text(&e, "%5s %9s %9s  %-8s %8s %7s %8s %8s %7s %6s %7s %7s %7s %7s %9s  %s\n", "#", "start",
				"end", "reason", "CPU s", "prof", "user s", "sys s", "minflt", "majflt", "inblk",
				"oublk", "vcsw", "ivcsw", "rss_kB", "label");
		}
		for (size_t k = 1; k <= ns; k++) {
			const struct sonde_overview_packet *a = &ov[k - 1], *b = &ov[k];

			if (sel && !sonde_sample_sel_has(sel, b->time_ns))
				continue;
			const char *label = sonde_exp_overview_label(ex, k);
			const char *why = sonde_view_point_reason(b->reason);

			em_text(&e,
				"%5zu %9.3f %9.3f  %-8s %8.3f %7" PRIu64 " %8.3f %8.3f %7" PRIu64 " %6" PRIu64
				" %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %9" PRIu64 "  %s\n",
				k, rel(ex, a->time_ns), rel(ex, b->time_ns), why, (double)m[k].cpu_ns / 1e9,
				m[k].samples, (double)d64(b->utime_ns, a->utime_ns) / 1e9,
				(double)d64(b->stime_ns, a->stime_ns) / 1e9, d64(b->minflt, a->minflt),
				d64(b->majflt, a->majflt), d64(b->inblock, a->inblock), d64(b->oublock, a->oublock),
				d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw), b->rss_kb, label ? label : "");
			em_row(&e);
			em_s(&e, "experiment", name);
			em_u(&e, "sample", k);
			em_f(&e, "start", "%.9f", rel(ex, a->time_ns));
			em_f(&e, "end", "%.9f", rel(ex, b->time_ns));
			em_s(&e, "reason", why);
			em_s(&e, "label", label);
			em_u(&e, "totalcpu", m[k].cpu_ns);
			em_u(&e, "samples", m[k].samples);
			em_u(&e, "sync", m[k].sync_ns);
			em_u(&e, "heapallocbytes", m[k].heap_bytes);
			em_u(&e, "iobytes", m[k].io_bytes);
			em_u(&e, "user", d64(b->utime_ns, a->utime_ns));
			em_u(&e, "system", d64(b->stime_ns, a->stime_ns));
			em_u(&e, "minflt", d64(b->minflt, a->minflt));
			em_u(&e, "majflt", d64(b->majflt, a->majflt));
			em_u(&e, "inblock", d64(b->inblock, a->inblock));
			em_u(&e, "oublock", d64(b->oublock, a->oublock));
			em_u(&e, "nvcsw", d64(b->nvcsw, a->nvcsw));
			em_u(&e, "nivcsw", d64(b->nivcsw, a->nivcsw));
			em_u(&e, "rss_kb", b->rss_kb);
			em_u(&e, "maxrss_kb", b->maxrss_kb);
			em_row_end(&e);
		}
		free(m);
		sonde_sample_sel_free(sel);
	}
	em_end(&e);
	em_end_doc(&e);
	return fail(f, err, errlen);
}

/*
 * -overview: per experiment, the sample points by reason, the usage over
 * the run, and a timeline: one line per sample (at most 40: consecutive
 * samples are merged) with the process's CPU use over wall time as a bar,
 * '#' user and '=' system time, 50 characters for one CPU fully used, and
 * the recorded CPU time.
 */
int sonde_view_overview(FILE *f, const struct sonde_exp *const *exps, size_t n,
			const struct sonde_view_opts *o, char *err, size_t errlen)
{
	enum { MAXLINES = 40, BAR = 50 };
	struct sonde_emit em;

	em_init(&em, f, o->mode);
	em_csv(&em, "experiment,line,first_sample,last_sample,start,end,user,system,totalcpu,rss_kb\n");
	em_obj(&em, NULL);
	em_s(&em, "view", "overview");
	em_arr(&em, "experiments");
	for (size_t x = 0; x < n; x++) {
		const struct sonde_exp *e = exps[x];
		const char *name = sonde_exp_info(e)->name;
		size_t nov, ns = sonde_exp_nsamples(e);
		const struct sonde_overview_packet *ov = sonde_exp_overview(e, &nov);
		size_t by[SONDE_OV_NREASONS + 1] = { 0 };

		for (size_t i = 0; i < nov; i++)
			by[ov[i].reason < SONDE_OV_NREASONS ? ov[i].reason : SONDE_OV_NREASONS]++;
		struct smet *m = sample_metrics(e, ns);

		if (!m) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		size_t per = ns > MAXLINES ? (ns + MAXLINES - 1) / MAXLINES : 1;
		uint64_t maxrss = 0;

		for (size_t i = 0; i < nov; i++)
			if (ov[i].maxrss_kb > maxrss)
				maxrss = ov[i].maxrss_kb;
		if (x)
			em_text(&em, "\n");
		em_text(&em, "Overview of %s: %zu sample points, %zu samples\n", name, nov, ns);
		em_text(&em, "  points by reason:");
		for (size_t r = 0; r <= SONDE_OV_NREASONS; r++)
			if (by[r])
				em_text(&em, " %s %zu", r < SONDE_OV_NREASONS ? sonde_view_point_reason((uint32_t)r) : "other",
					by[r]);
		em_text(&em, "\n");
		if (nov >= 2) {
			const struct sonde_overview_packet *a = &ov[0], *b = &ov[nov - 1];

			em_text(&em,
				"  from %.3f s to %.3f s: user %.3f s, system %.3f s, %" PRIu64 " minor and %" PRIu64
				" major faults,\n"
				"  %" PRIu64 " blocks in, %" PRIu64 " out, %" PRIu64 " voluntary and %" PRIu64
				" involuntary context switches, max resident %" PRIu64 " kB\n",
				rel(e, a->time_ns), rel(e, b->time_ns), (double)d64(b->utime_ns, a->utime_ns) / 1e9,
				(double)d64(b->stime_ns, a->stime_ns) / 1e9, d64(b->minflt, a->minflt),
				d64(b->majflt, a->majflt), d64(b->inblock, a->inblock), d64(b->oublock, a->oublock),
				d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw), maxrss);
			em_text(&em, "\n  %-11s %9s %9s  %-*s %8s %9s\n", "samples", "start", "end", BAR,
				"CPU use (# user, = system; full width: one CPU)", "CPU s", "rss_kB");
		}
		em_obj(&em, NULL);
		em_s(&em, "experiment", name);
		em_u(&em, "points", nov);
		em_u(&em, "samples", ns);
		em_arr(&em, "lines");
		for (size_t k = 1, line = 0; k <= ns; k += per, line++) {
			size_t last = k + per - 1 < ns ? k + per - 1 : ns;
			const struct sonde_overview_packet *a = &ov[k - 1], *b = &ov[last];
			uint64_t cpu = 0;

			for (size_t j = k; j <= last; j++)
				cpu += m[j].cpu_ns;
			uint64_t wall = d64(b->time_ns, a->time_ns);
			uint64_t us = d64(b->utime_ns, a->utime_ns), sy = d64(b->stime_ns, a->stime_ns);
			char bar[BAR + 2], range[48];
			/* Clamped as doubles: damaged usage counters give ratios
			 * far past INT_MAX, whose conversion to int is undefined
			 * (INT_MIN on x86, then a memset of 2^64 bytes). */
			double fu = wall ? (double)us / (double)wall * BAR + 0.5 : 0;
			double fs = wall ? (double)sy / (double)wall * BAR + 0.5 : 0;
			int nu = fu >= BAR ? BAR : (int)fu;
			int nsy = fs >= BAR - nu ? BAR - nu : (int)fs;

			memset(bar, '#', (size_t)nu);
			memset(bar + nu, '=', (size_t)nsy);
			bar[nu + nsy] = 0;
			if (last > k)
				snprintf(range, sizeof(range), "%zu-%zu", k, last);
			else
				snprintf(range, sizeof(range), "%zu", k);
			em_text(&em, "  %-11s %9.3f %9.3f  %-*s %8.3f %9" PRIu64 "\n", range, rel(e, a->time_ns),
				rel(e, b->time_ns), BAR, bar, (double)cpu / 1e9, b->rss_kb);
			em_row(&em);
			em_s_csv(&em, "experiment", name);
			em_u_csv(&em, "line", line + 1);
			em_u(&em, "first_sample", k);
			em_u(&em, "last_sample", last);
			em_f(&em, "start", "%.9f", rel(e, a->time_ns));
			em_f(&em, "end", "%.9f", rel(e, b->time_ns));
			em_u(&em, "user", us);
			em_u(&em, "system", sy);
			em_u(&em, "totalcpu", cpu);
			em_u(&em, "rss_kb", b->rss_kb);
			em_row_end(&em);
		}
		em_end(&em);
		em_end(&em);
		free(m);
	}
	em_end(&em);
	em_end_doc(&em);
	return fail(f, err, errlen);
}
