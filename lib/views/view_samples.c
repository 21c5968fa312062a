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

static const char *reason_name(uint32_t r)
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
	bool json_first = true;

	if (o->mode == SONDE_PM_CSV)
		fprintf(f, "experiment,sample,start,end,reason,label,totalcpu,samples,sync,heapallocbytes,iobytes,"
			   "user,system,minflt,majflt,inblock,oublock,nvcsw,nivcsw,rss_kb,maxrss_kb\n");
	else if (o->mode == SONDE_PM_JSON)
		fprintf(f, "{\"view\":\"samples\",\"rows\":[");
	for (size_t x = 0; x < n; x++) {
		const struct sonde_exp *e = exps[x];
		const char *name = sonde_exp_info(e)->name;
		size_t nov, ns = sonde_exp_nsamples(e);
		const struct sonde_overview_packet *ov = sonde_exp_overview(e, &nov);
		struct sonde_sample_sel *sel;

		if (sonde_sample_sel_new(&sel, e, o->sample_select, err, errlen) < 0)
			return -1;
		struct smet *m = sample_metrics(e, ns);

		if (!m) {
			sonde_sample_sel_free(sel);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (o->mode == SONDE_PM_TEXT) {
			if (x)
				fprintf(f, "\n");
			fprintf(f, "Samples of %s: %zu; times in seconds from the start, usage counters per sample\n",
				name, ns);
			if (!ns) {
				fprintf(f, "(fewer than two sample points: no samples)\n");
			} else {
				fprintf(f, "%5s %9s %9s  %-8s %8s %7s %8s %8s %7s %6s %7s %7s %7s %7s %9s  %s\n", "#",
					"start", "end", "reason", "CPU s", "prof", "user s", "sys s", "minflt",
					"majflt", "inblk", "oublk", "vcsw", "ivcsw", "rss_kB", "label");
			}
		}
		for (size_t k = 1; k <= ns; k++) {
			const struct sonde_overview_packet *a = &ov[k - 1], *b = &ov[k];

			if (sel && !sonde_sample_sel_has(sel, b->time_ns))
				continue;
			const char *label = sonde_exp_overview_label(e, k);
			const char *why = reason_name(b->reason);

			switch (o->mode) {
			case SONDE_PM_TEXT:
				fprintf(f,
					"%5zu %9.3f %9.3f  %-8s %8.3f %7" PRIu64 " %8.3f %8.3f %7" PRIu64
					" %6" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %9" PRIu64
					"  %s\n",
					k, rel(e, a->time_ns), rel(e, b->time_ns), why, (double)m[k].cpu_ns / 1e9,
					m[k].samples, (double)d64(b->utime_ns, a->utime_ns) / 1e9,
					(double)d64(b->stime_ns, a->stime_ns) / 1e9, d64(b->minflt, a->minflt),
					d64(b->majflt, a->majflt), d64(b->inblock, a->inblock),
					d64(b->oublock, a->oublock), d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw),
					b->rss_kb, label ? label : "");
				break;
			case SONDE_PM_CSV:
				vt_csv_str(f, name);
				fprintf(f, ",%zu,%.9f,%.9f,%s,", k, rel(e, a->time_ns), rel(e, b->time_ns), why);
				vt_csv_str(f, label ? label : "");
				fprintf(f,
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
					m[k].cpu_ns, m[k].samples, m[k].sync_ns, m[k].heap_bytes, m[k].io_bytes,
					d64(b->utime_ns, a->utime_ns), d64(b->stime_ns, a->stime_ns),
					d64(b->minflt, a->minflt), d64(b->majflt, a->majflt),
					d64(b->inblock, a->inblock), d64(b->oublock, a->oublock),
					d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw), b->rss_kb, b->maxrss_kb);
				break;
			case SONDE_PM_JSON:
				fprintf(f, "%s{\"experiment\":", json_first ? "" : ",");
				json_first = false;
				vt_json_str(f, name);
				fprintf(f, ",\"sample\":%zu,\"start\":%.9f,\"end\":%.9f,\"reason\":\"%s\",\"label\":", k,
					rel(e, a->time_ns), rel(e, b->time_ns), why);
				if (label)
					vt_json_str(f, label);
				else
					fprintf(f, "null");
				fprintf(f,
					",\"totalcpu\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"sync\":%" PRIu64
					",\"heapallocbytes\":%" PRIu64 ",\"iobytes\":%" PRIu64 ",\"user\":%" PRIu64
					",\"system\":%" PRIu64 ",\"minflt\":%" PRIu64 ",\"majflt\":%" PRIu64
					",\"inblock\":%" PRIu64 ",\"oublock\":%" PRIu64 ",\"nvcsw\":%" PRIu64
					",\"nivcsw\":%" PRIu64 ",\"rss_kb\":%" PRIu64 ",\"maxrss_kb\":%" PRIu64 "}",
					m[k].cpu_ns, m[k].samples, m[k].sync_ns, m[k].heap_bytes, m[k].io_bytes,
					d64(b->utime_ns, a->utime_ns), d64(b->stime_ns, a->stime_ns),
					d64(b->minflt, a->minflt), d64(b->majflt, a->majflt),
					d64(b->inblock, a->inblock), d64(b->oublock, a->oublock),
					d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw), b->rss_kb, b->maxrss_kb);
				break;
			}
		}
		free(m);
		sonde_sample_sel_free(sel);
	}
	if (o->mode == SONDE_PM_JSON)
		fprintf(f, "]}\n");
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

	if (o->mode == SONDE_PM_CSV)
		fprintf(f, "experiment,line,first_sample,last_sample,start,end,user,system,totalcpu,rss_kb\n");
	else if (o->mode == SONDE_PM_JSON)
		fprintf(f, "{\"view\":\"overview\",\"experiments\":[");
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
		if (o->mode == SONDE_PM_TEXT) {
			if (x)
				fprintf(f, "\n");
			fprintf(f, "Overview of %s: %zu sample points, %zu samples\n", name, nov, ns);
			fprintf(f, "  points by reason:");
			for (size_t r = 0; r <= SONDE_OV_NREASONS; r++)
				if (by[r])
					fprintf(f, " %s %zu", r < SONDE_OV_NREASONS ? reason_name((uint32_t)r) : "other",
						by[r]);
			fprintf(f, "\n");
			if (nov >= 2) {
				const struct sonde_overview_packet *a = &ov[0], *b = &ov[nov - 1];

				fprintf(f,
					"  from %.3f s to %.3f s: user %.3f s, system %.3f s, %" PRIu64
					" minor and %" PRIu64 " major faults,\n"
					"  %" PRIu64 " blocks in, %" PRIu64 " out, %" PRIu64 " voluntary and %" PRIu64
					" involuntary context switches, max resident %" PRIu64 " kB\n",
					rel(e, a->time_ns), rel(e, b->time_ns), (double)d64(b->utime_ns, a->utime_ns) / 1e9,
					(double)d64(b->stime_ns, a->stime_ns) / 1e9, d64(b->minflt, a->minflt),
					d64(b->majflt, a->majflt), d64(b->inblock, a->inblock), d64(b->oublock, a->oublock),
					d64(b->nvcsw, a->nvcsw), d64(b->nivcsw, a->nivcsw), maxrss);
				fprintf(f, "\n  %-11s %9s %9s  %-*s %8s %9s\n", "samples", "start", "end", BAR,
					"CPU use (# user, = system; full width: one CPU)", "CPU s", "rss_kB");
			}
		} else if (o->mode == SONDE_PM_JSON) {
			fprintf(f, "%s{\"experiment\":", x ? "," : "");
			vt_json_str(f, name);
			fprintf(f, ",\"points\":%zu,\"samples\":%zu,\"lines\":[", nov, ns);
		}
		for (size_t k = 1, line = 0; k <= ns; k += per, line++) {
			size_t last = k + per - 1 < ns ? k + per - 1 : ns;
			const struct sonde_overview_packet *a = &ov[k - 1], *b = &ov[last];
			uint64_t cpu = 0;

			for (size_t j = k; j <= last; j++)
				cpu += m[j].cpu_ns;
			uint64_t wall = d64(b->time_ns, a->time_ns);
			uint64_t us = d64(b->utime_ns, a->utime_ns), sy = d64(b->stime_ns, a->stime_ns);

			switch (o->mode) {
			case SONDE_PM_TEXT: {
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
				fprintf(f, "  %-11s %9.3f %9.3f  %-*s %8.3f %9" PRIu64 "\n", range, rel(e, a->time_ns),
					rel(e, b->time_ns), BAR, bar, (double)cpu / 1e9, b->rss_kb);
				break;
			}
			case SONDE_PM_CSV:
				vt_csv_str(f, name);
				fprintf(f, ",%zu,%zu,%zu,%.9f,%.9f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
					line + 1, k, last, rel(e, a->time_ns), rel(e, b->time_ns), us, sy, cpu, b->rss_kb);
				break;
			case SONDE_PM_JSON:
				fprintf(f,
					"%s{\"first_sample\":%zu,\"last_sample\":%zu,\"start\":%.9f,\"end\":%.9f,"
					"\"user\":%" PRIu64 ",\"system\":%" PRIu64 ",\"totalcpu\":%" PRIu64
					",\"rss_kb\":%" PRIu64 "}",
					line ? "," : "", k, last, rel(e, a->time_ns), rel(e, b->time_ns), us, sy, cpu,
					b->rss_kb);
				break;
			}
		}
		if (o->mode == SONDE_PM_JSON)
			fprintf(f, "]}");
		free(m);
	}
	if (o->mode == SONDE_PM_JSON)
		fprintf(f, "]}\n");
	return fail(f, err, errlen);
}
