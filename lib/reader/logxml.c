/*
 * logxml: the reading of an experiment's log.xml (doc/experiment-format.md):
 * the experiment's description, its events, its packet layouts and which
 * data files it declares; and the numbers of XML attributes, which map.xml
 * (mapxml.c) and the data kinds' <trace> elements (sonde_rk_attr_u64)
 * read the same way.  Apart from experiment.c because it reads text the
 * collector and sonde collect wrote, line by line, where experiment.c
 * reads the binary data files; a bad attribute is a warning, a log.xml
 * that is no experiment's a failure to open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "reader/experiment_internal.h"

/* ---- numbers in XML attributes ----------------------------------------- */

/* Parses decimal, or hexadecimal with 0x.  No sign, no trailing text. */
static bool parse_u64(const char *s, uint64_t *out)
{
	int base = 10;

	if (!s || !*s)
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	if (!((*s >= '0' && *s <= '9') || (base == 16 && ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f'))))
		return false;
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, base);

	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* Reads numeric attribute attr of e into *out; leaves *out alone when the
 * attribute is absent; warns when it is not a number.  Returns true when
 * a value was stored. */
bool exp_attr_u64(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		  const char *attr, uint64_t *out)
{
	const char *v = sonde_xml_attr(e, attr);

	if (!v)
		return false;
	if (!parse_u64(v, out)) {
		exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' line %u: <%s %s=\"%s\">: not a number", file,
			    e->line, e->name, attr, v);
		return false;
	}
	return true;
}

bool exp_attr_u32(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		  const char *attr, uint32_t *out)
{
	uint64_t v;

	if (!exp_attr_u64(exp, file, e, attr, &v))
		return false;
	if (v > UINT32_MAX) {
		exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' line %u: <%s %s>: value too large", file,
			    e->line, e->name, attr);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

static void attr_uint(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		      const char *attr, unsigned *out)
{
	uint32_t v;

	if (exp_attr_u32(exp, file, e, attr, &v))
		*out = v;
}

static void attr_int(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		     const char *attr, int *out)
{
	const char *v = sonde_xml_attr(e, attr);

	if (!v)
		return;
	char *end;

	errno = 0;
	long x = strtol(v, &end, 10);

	if (errno || end == v || *end || x < -2147483647 - 1 || x > 2147483647)
		exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' line %u: <%s %s=\"%s\">: not a number", file,
			    e->line, e->name, attr, v);
	else
		*out = (int)x;
}

/* "1763700000.123456789" -> seconds and nanoseconds. */
static bool parse_realtime(const char *s, int64_t *sec, uint32_t *nsec)
{
	uint64_t whole = 0, frac = 0;
	const char *dot = strchr(s, '.');
	char intpart[32];
	size_t n = dot ? (size_t)(dot - s) : strlen(s);

	if (n == 0 || n >= sizeof(intpart))
		return false;
	memcpy(intpart, s, n);
	intpart[n] = '\0';
	if (intpart[0] == '0' && intpart[1] == 'x')
		return false;
	if (!parse_u64(intpart, &whole) || whole > INT64_MAX)
		return false;
	if (dot) {
		const char *f = dot + 1;
		int digits = 0;

		for (; *f; f++) {
			if (*f < '0' || *f > '9')
				return false;
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*f - '0');
				digits++;
			}
		}
		if (digits == 0)
			return false;
		for (; digits < 9; digits++)
			frac *= 10;
	}
	*sec = (int64_t)whole;
	*nsec = (uint32_t)frac;
	return true;
}

/* ---- log.xml ----------------------------------------------------------- */

static const struct {
	const char *name;
	enum sonde_event_kind kind;
} event_kinds[] = {
	{ "start", SONDE_EV_START },	     { "thread_start", SONDE_EV_THREAD_START },
	{ "thread_end", SONDE_EV_THREAD_END }, { "warning", SONDE_EV_WARNING },
	{ "error", SONDE_EV_ERROR },	     { "end", SONDE_EV_END },
	{ "exit", SONDE_EV_EXIT },	     { "signal", SONDE_EV_SIGNAL },
	{ "exec", SONDE_EV_EXEC },	     { "exec_failed", SONDE_EV_EXEC_FAILED },
	{ "reaped", SONDE_EV_REAPED },	     { "unrecorded", SONDE_EV_UNRECORDED },
};

static void log_event(struct sonde_exp *exp, const struct sonde_xml_elem *e)
{
	static const char file[] = "log.xml";

	if (sonde_grow(&exp->events, &exp->capevents, exp->nevents + 1, sizeof(*exp->events), 16)) {
		exp->oom = true;
		return;
	}
	struct sonde_event *ev = &exp->events[exp->nevents++];
	const char *kind = sonde_xml_attr(e, "kind");

	memset(ev, 0, sizeof(*ev));
	ev->kind_name = kind ? kind : "";
	ev->line = e->line;
	for (size_t i = 0; kind && i < sizeof(event_kinds) / sizeof(event_kinds[0]); i++)
		if (!strcmp(kind, event_kinds[i].name))
			ev->kind = event_kinds[i].kind;
	exp_attr_u64(exp, file, e, "time_ns", &ev->time_ns);
	exp_attr_u32(exp, file, e, "tid", &ev->tid);
	ev->has_cpu_ns = exp_attr_u64(exp, file, e, "cpu_ns", &ev->cpu_ns);
	ev->text = sonde_xml_attr(e, "text");
	attr_int(exp, file, e, "status", &ev->status);
	ev->has_status = sonde_xml_attr(e, "status") != NULL;
	attr_int(exp, file, e, "signal", &ev->signal);
	ev->signame = sonde_xml_attr(e, "name");
	exp_attr_u64(exp, file, e, "samples", &ev->samples);
	exp_attr_u64(exp, file, e, "lost", &ev->lost);
	exp_attr_u64(exp, file, e, "stacks", &ev->stacks);
	exp_attr_u64(exp, file, e, "stacks_lost", &ev->stacks_lost);
	exp_attr_u64(exp, file, e, "handler_ns", &ev->handler_ns);
	exp_attr_u64(exp, file, e, "start_cost_ns", &ev->start_cost_ns);
	exp_attr_u64(exp, file, e, "end_cost_ns", &ev->end_cost_ns);
	exp_attr_u64(exp, file, e, "pseudo_samples", &ev->pseudo_samples);
	exp_attr_u64(exp, file, e, "start_ns", &ev->start_ns);
	exp_attr_u64(exp, file, e, "since_ns", &ev->since_ns);
	attr_int(exp, file, e, "errno", &ev->err);
	exp_attr_u32(exp, file, e, "pid", &ev->pid);
	ev->lineage = sonde_xml_attr(e, "lineage");
	ev->reason = sonde_xml_attr(e, "reason");
	ev->command = sonde_xml_attr(e, "command");
	bool ut = exp_attr_u64(exp, file, e, "utime_ns", &ev->utime_ns);
	bool st = exp_attr_u64(exp, file, e, "stime_ns", &ev->stime_ns);
	ev->has_times = ut && st;
	ev->has_run_delay = exp_attr_u64(exp, file, e, "run_delay_ns", &ev->run_delay_ns);
	bool os = exp_attr_u64(exp, file, e, "offcpu_samples", &ev->offcpu_samples);
	bool od = exp_attr_u64(exp, file, e, "offcpu_discarded", &ev->offcpu_discarded);
	ev->has_offcpu = os || od;
	ev->has_offcpu_late = exp_attr_u64(exp, file, e, "offcpu_late_ns", &ev->offcpu_late_ns);
}

/* An MPI rank or size, attribute a of e, into *v (a warning when it is not
 * one). */
static void mpi_number(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e, const char *a,
		       int64_t *v)
{
	uint64_t u = 0;
	const char *s = sonde_xml_attr(e, a);

	if (!s || !exp_attr_u64(exp, file, e, a, &u))
		return;
	if (u <= INT32_MAX)
		*v = (int64_t)u;
	else
		exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' line %u: <%s %s=\"%s\">: not an MPI rank or size",
			    file, e->line, e->name, a, s);
}

/* Returns 0, or -1 with err set when dir is not a readable experiment. */
int exp_read_log(struct sonde_exp *exp, char *err, size_t errlen)
{
	static const char file[] = "log.xml";
	struct sonde_exp_info *in = &exp->info;
	size_t len;
	int r = exp_read_whole(exp, file, &exp->logbuf, &len);

	if (r == 1) {
		exp_set_err(err, errlen, "'%s' is not a sonde experiment (no log.xml)", exp->dir);
		return -1;
	}
	if (r < 0) {
		exp_set_err(err, errlen, "cannot read '%s/log.xml': %s", exp->dir, strerror(errno));
		return -1;
	}

	struct sonde_xml x;
	struct sonde_xml_elem e;
	char msg[256];
	bool seen = false;

	in->mpi.rank = in->mpi.size = in->mpi.mpi_rank = in->mpi.mpi_size = -1;
	sonde_xml_init(&x, exp->logbuf, len);
	while ((r = sonde_xml_next(&x, &e, msg, sizeof(msg))) != 0) {
		if (r < 0) {
			exp_problem(exp, SONDE_PROBLEM_WARNING, "'%s' %s; ignored", file, msg);
			continue;
		}
		if (e.kind == SONDE_XML_CLOSE) {
			if (!strcmp(e.name, "experiment"))
				in->log_complete = true;
			continue;
		}
		if (e.kind == SONDE_XML_OTHER)
			continue;
		if (!strcmp(e.name, "experiment")) {
			seen = true;
			if (!sonde_xml_attr(&e, "format"))
				exp_problem(exp, SONDE_PROBLEM_WARNING,
					    "'%s' line %u: <experiment> has no format; reading it as format %d",
					    file, e.line, SONDE_FORMAT_VERSION);
			in->format = SONDE_FORMAT_VERSION;
			attr_uint(exp, file, &e, "format", &in->format);
			in->collector = sonde_xml_attr(&e, "collector");
		} else if (!strcmp(e.name, "target")) {
			exp_attr_u32(exp, file, &e, "pid", &in->target.pid);
			exp_attr_u32(exp, file, &e, "ppid", &in->target.ppid);
			in->target.cwd = sonde_xml_attr(&e, "cwd");
			in->target.exe = sonde_xml_attr(&e, "exe");
			in->target.command = sonde_xml_attr(&e, "command");
		} else if (!strcmp(e.name, "system")) {
			in->system.host = sonde_xml_attr(&e, "host");
			in->system.os = sonde_xml_attr(&e, "os");
			in->system.release = sonde_xml_attr(&e, "release");
			in->system.arch = sonde_xml_attr(&e, "arch");
			attr_uint(exp, file, &e, "cpus", &in->system.cpus);
			exp_attr_u64(exp, file, &e, "pagesize", &in->system.pagesize);
			exp_attr_u64(exp, file, &e, "memory_kb", &in->system.memory_kb);
		} else if (!strcmp(e.name, "settings")) {
			const char *d = sonde_xml_attr(&e, "duration_s");

			in->settings.clock_source = sonde_xml_attr(&e, "clock_source");
			in->settings.kernel_time = sonde_xml_attr(&e, "kernel_time");
			in->settings.follow = sonde_xml_attr(&e, "follow");
			exp_attr_u64(exp, file, &e, "clock_interval_ns", &in->settings.clock_interval_ns);
			attr_uint(exp, file, &e, "depth_limit", &in->settings.depth_limit);
			exp_attr_u64(exp, file, &e, "size_limit_mb", &in->settings.size_limit_mb);
			exp_attr_u64(exp, file, &e, "offcpu_interval_ns", &in->settings.offcpu_interval_ns);
			const char *ms = sonde_xml_attr(&e, "microstates");
			in->settings.microstates = ms && !strcmp(ms, "1");
			if (d) {
				char *end;
				double v = strtod(d, &end);

				if (end == d || *end || v < 0)
					exp_problem(exp, SONDE_PROBLEM_WARNING,
						    "'%s' line %u: <settings duration_s=\"%s\">: not a number",
						    file, e.line, d);
				else
					in->settings.duration_s = v;
			}
		} else if (!strcmp(e.name, "mpirank")) {
			mpi_number(exp, file, &e, "rank", &in->mpi.rank);
			mpi_number(exp, file, &e, "size", &in->mpi.size);
			in->mpi.launcher = sonde_xml_attr(&e, "launcher");
			in->mpi.job = sonde_xml_attr(&e, "job");
		} else if (!strcmp(e.name, "trace")) {
			const char *k = sonde_xml_attr(&e, "kind");
			const char *tn = sonde_xml_attr(&e, "name");

			/* the rank MPI gave is the process's identity, read
			 * whether or not the MPI data kind is known; spelt
			 * rank="R" (libsonde_mpi.so's) or name="rank" value="R" */
			if (k && !strcmp(k, "mpi")) {
				mpi_number(exp, file, &e, "rank", &in->mpi.mpi_rank);
				mpi_number(exp, file, &e, "size", &in->mpi.mpi_size);
				if (tn && !strcmp(tn, "rank"))
					mpi_number(exp, file, &e, "value", &in->mpi.mpi_rank);
				if (tn && !strcmp(tn, "size"))
					mpi_number(exp, file, &e, "value", &in->mpi.mpi_size);
			}

			for (int id = 1; k && id <= SONDE_KIND_MAX; id++)
				if (exp_reader_kind(id)->log_trace && !strcmp(k, sonde_kind_desc(id)->name))
					exp_reader_kind(id)->log_trace(exp, file, &e);
		} else if (!strcmp(e.name, "time")) {
			const char *rt = sonde_xml_attr(&e, "realtime");

			exp_attr_u64(exp, file, &e, "start_ns", &in->start_ns);
			if (rt && parse_realtime(rt, &in->realtime_sec, &in->realtime_nsec))
				in->has_realtime = true;
			else if (rt)
				exp_problem(exp, SONDE_PROBLEM_WARNING,
					    "'%s' line %u: <time realtime=\"%s\">: not a time", file, e.line,
					    rt);
		} else if (!strcmp(e.name, "dataformat")) {
			const char *f = sonde_xml_attr(&e, "file");

			for (int i = 0; f && i < exp->ndata; i++)
				if (!strcmp(f, exp->data[i].name))
					exp->data[i].declared = true;
		} else if (!strcmp(e.name, "packet")) {
			if (sonde_grow(&exp->descs, &exp->capdescs, exp->ndescs + 1, sizeof(*exp->descs), 16)) {
				exp->oom = true;
				continue;
			}
			struct sonde_packet_desc *d = &exp->descs[exp->ndescs++];

			memset(d, 0, sizeof(*d));
			attr_uint(exp, file, &e, "type", &d->type);
			attr_uint(exp, file, &e, "size", &d->size);
			d->name = sonde_xml_attr(&e, "name");
			d->fields = sonde_xml_attr(&e, "fields");
		} else if (!strcmp(e.name, "event")) {
			log_event(exp, &e);
		}
		/* Anything else is for a newer reader. */
	}
	if (!seen) {
		exp_set_err(err, errlen, "'%s' is not a sonde experiment (log.xml has no <experiment>)",
			    exp->dir);
		return -1;
	}
	if (in->format < SONDE_FORMAT_MIN_READABLE || in->format > SONDE_FORMAT_VERSION) {
		exp_set_err(err, errlen,
			    "'%s' has experiment format %u; this sonde reads formats %d to %d", exp->dir,
			    in->format, SONDE_FORMAT_MIN_READABLE, SONDE_FORMAT_VERSION);
		return -1;
	}
	return 0;
}
