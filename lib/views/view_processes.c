/*
 * -experiment_list and -processes: the experiments sonde print loaded (a
 * founder and its descendants' sub-experiments) and their processes.
 * Moved from cmd/print.c so that tests can call them.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/view_exp.h"
#include "views/view_table.h"

/* A founder is "(founder)"; a sub-experiment its directory's name. */
static const char *lineage_of(const struct sonde_exp_node *id)
{
	return id->kind ? sonde_exp_info(id->exp)->name : "(founder)";
}

static bool selected(const struct sonde_exp_set *s, const struct sonde_exp *e)
{
	for (size_t i = 0; i < s->nsel; i++)
		if (s->sel[i] == e)
			return true;
	return false;
}

/* -experiment_list: every experiment loaded, numbered; * marks the
 * selected ones. */
void sonde_view_experiment_list(FILE *f, const struct sonde_exp_set *s,
				const struct sonde_view_opts *o)
{
	struct sonde_emit e;

	em_init(&e, f, o->mode);
	em_obj(&e, NULL);
	em_arr(&e, "experiments");
	em_textcsv(&e, "Experiments (* selected):\n");
	for (size_t i = 0; i < s->tree->n; i++) {
		const struct sonde_exp_node *id = &s->tree->node[i];

		em_textcsv(&e, "%c %3zu  %s\n", selected(s, id->exp) ? '*' : ' ', i + 1, id->path);
		em_obj(&e, NULL);
		em_u(&e, "number", i + 1);
		em_b(&e, "selected", selected(s, id->exp));
		em_s(&e, "path", id->path);
		em_u(&e, "pid", id->pid);
		em_end(&e);
	}
	em_end(&e);
	em_end_doc(&e);
}

/* How the process of experiment e ended, for -processes: its exit status
 * or signal from its own log; "exec" for an image that an exec replaced
 * (the new image's row has the outcome); else what its parent saw when it
 * reaped it (a process killed by a signal writes nothing itself); "?"
 * when nobody knows. */
static void exit_text(const struct sonde_exp_set *s, const struct sonde_exp *e, char *out, size_t cap)
{
	const struct sonde_exp_info *in = sonde_exp_info(e);
	const struct sonde_event *x = in->exit_event;

	if (x && x->kind == SONDE_EV_EXIT) {
		snprintf(out, cap, "%d", x->status);
		return;
	}
	if (x) {
		snprintf(out, cap, "%s", x->signame ? x->signame : "signal");
		return;
	}
	if (in->exec_event) {
		snprintf(out, cap, "exec");
		return;
	}
	snprintf(out, cap, "?");
	if (!in->target.pid || !in->target.ppid)
		return;
	for (size_t k = 0; k < s->tree->n; k++) {
		size_t n;
		const struct sonde_event *ev = sonde_exp_events(s->tree->exps[k], &n);

		if (s->tree->node[k].pid != in->target.ppid)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (ev[i].kind != SONDE_EV_REAPED || ev[i].pid != in->target.pid)
				continue;
			if (ev[i].has_status)
				snprintf(out, cap, "%d", ev[i].status);
			else
				snprintf(out, cap, "%s", ev[i].signame ? ev[i].signame : "signal");
		}
	}
}

void sonde_view_processes(FILE *f, const struct sonde_exp_set *s,
			  const struct sonde_view_opts *o)
{
	struct sonde_emit em;
	uint64_t total = 0, samples = 0;

	/* An MPI job's ranks get a column; other runs keep the table they had. */
	bool ranks = false;

	for (size_t k = 0; k < s->tree->n; k++)
		ranks |= s->tree->node[k].rank >= 0;
	em_init(&em, f, o->mode);
	em_csv(&em, ranks ? "number,lineage,rank,pid,ppid,cpu_ns,samples,exit,command\n"
			  : "number,lineage,pid,ppid,cpu_ns,samples,exit,command\n");
	em_text(&em, "%3s  %-24s ", "#", "Lineage");
	if (ranks)
		em_text(&em, "%5s ", "Rank");
	em_text(&em, "%8s %8s %10s %8s %6s  %s\n", "PID", "PPID", "CPU sec.", "Samples", "Exit", "Command");
	em_obj(&em, NULL);
	em_arr(&em, "processes");
	for (size_t i = 0; i < s->nsel; i++) {
		const struct sonde_exp *e = s->sel[i];
		const struct sonde_exp_info *in = sonde_exp_info(e);
		const struct sonde_exp_summary *su = sonde_exp_summary(e);
		const char *lineage = "(founder)";
		char ex[32], rank[24] = "-";
		size_t num = 0;

		for (size_t k = 0; k < s->tree->n; k++)
			if (s->tree->exps[k] == e) {
				num = k + 1;
				lineage = lineage_of(&s->tree->node[k]);
				if (s->tree->node[k].rank >= 0)
					snprintf(rank, sizeof(rank), "%" PRId64, s->tree->node[k].rank);
			}
		exit_text(s, e, ex, sizeof(ex));
		total += su->weight_ns;
		samples += su->samples;
		const char *cmd = in->target.command ? in->target.command : "";

		em_row(&em);
		em_u(&em, "number", num);
		em_s(&em, "lineage", lineage);
		if (ranks)
			em_i(&em, "rank", strcmp(rank, "-") ? atoll(rank) : -1); /* -1: not a rank's */
		em_u(&em, "pid", in->target.pid);
		em_u(&em, "ppid", in->target.ppid);
		em_f_json(&em, "cpu_sec", "%.3f", su->weight_ns / 1e9);
		em_u_csv(&em, "cpu_ns", su->weight_ns);
		em_u(&em, "samples", su->samples);
		em_s(&em, "exit", ex);
		em_s(&em, "command", cmd);
		em_row_end(&em);
		em_text(&em, "%3zu  %-24s ", num, lineage);
		if (ranks)
			em_text(&em, "%5s ", rank);
		em_text(&em, "%8u %8u %10.3f %8" PRIu64 " %6s  %s\n", in->target.pid, in->target.ppid,
			su->weight_ns / 1e9, su->samples, ex, cmd);
	}
	em_end(&em);
	em_f(&em, "total_cpu_sec", "%.3f", total / 1e9);
	em_end_doc(&em);
	em_text(&em, "%3s  %-24s %s%8s %8s %10.3f %8" PRIu64 "\n", "", "<Total>", ranks ? "      " : "", "", "",
		total / 1e9, samples);
}
