/*
 * processes: the process frames of a system-wide experiment
 * (SONDE_FRAME_PROCESS, sonde kernel), the root of each sample's stack,
 * named by the experiment's "processes" file (doc/experiment-format.md):
 *
 *	1234 burn
 *	1240 kworker/0:1
 *
 * one process a line, its pid and its name (the rest of the line, blanks
 * allowed).  A frame's pc is the pid: the function "<NAME_PID_1234>", as
 * Oracle's er_kernel names a process, and pid 0, the idle task, "<IDLE>";
 * a pid the file does not name is "<process_PID_1234>".  Every process
 * function is in the pseudo object "<processes>".  A name given twice
 * (the process exec'd) is the last one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safeopen.h"
#include "base/u64map.h"
#include "symbols/framekind.h"
#include "symbols/srcinfo.h"

#define PROCESSES_FILE "processes"
#define PROCESSES_OBJECT "<processes>"

struct processes {
	struct sonde_object obj;
	char *text;
	struct u64map name; /* pid -> offset of its name in text */
	struct u64map fn;   /* pid -> its function's id */
};

static void *processes_open(struct sonde_syms *s)
{
	const char *dir = sonde_exp_info(sonde_syms_exp(s))->dir;
	struct processes *p = calloc(1, sizeof(*p));
	char path[PATH_MAX];
	size_t len = 0, bad = 0;

	if (!p)
		return NULL;
	p->obj.path = p->obj.name = PROCESSES_OBJECT;
	p->obj.hi = UINT64_MAX;
	p->obj.unload_ns = SONDE_TIME_NEVER;
	if (snprintf(path, sizeof(path), "%s/%s", dir, PROCESSES_FILE) >= (int)sizeof(path))
		errno = ENAMETOOLONG;
	else
		p->text = sonde_read_regular(path, &len);
	if (!p->text) {
		sonde_syms_problem(s, "cannot read '%s': %s; processes are shown by their pids", PROCESSES_FILE,
				   sonde_open_strerror(errno));
		return p;
	}
	for (char *l = p->text, *end = p->text + len; l < end;) {
		char *eol = memchr(l, '\n', (size_t)(end - l));

		if (!eol)
			eol = end;
		*eol = '\0';
		char *c = l, *e;

		l = eol + 1;
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c)
			continue;
		errno = 0;
		unsigned long long pid = strtoull(c, &e, 10);

		if (errno || e == c || (*e != ' ' && *e != '\t') || pid > INT32_MAX || strlen(c) != (size_t)(eol - c)) {
			bad++;
			continue;
		}
		while (*e == ' ' || *e == '\t')
			e++;
		for (char *q = e; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		struct u64map_slot *had = u64map_find(&p->name, pid);

		if (!*e) {
			bad++;
		} else if (had) {
			had->val = (uint32_t)(e - p->text) + 1; /* the last name */
		} else if (u64map_put(&p->name, pid, (uint32_t)(e - p->text)) < 0) {
			sonde_syms_problem(s, "out of memory reading '%s'; processes are shown by their pids",
					   PROCESSES_FILE);
			break;
		}
	}
	if (bad)
		sonde_syms_problem(s, "'%s': %zu lines are not processes (PID NAME); skipped", PROCESSES_FILE, bad);
	return p;
}

static void processes_close(void *state)
{
	struct processes *p = state;

	free(p->text);
	u64map_release(&p->name);
	u64map_release(&p->fn);
	free(p);
}

static const struct sonde_func *processes_func(struct sonde_syms *s, void *state, const struct sonde_frame *f)
{
	struct processes *p = state;
	long id = p ? u64map_get(&p->fn, f->pc) : -1;

	if (id >= 0)
		return sonde_syms_func(s, (uint32_t)id);
	char name[320];
	long at = p ? u64map_get(&p->name, f->pc) : -1;

	if (f->pc == 0)
		snprintf(name, sizeof name, "<IDLE>");
	else if (at >= 0)
		snprintf(name, sizeof name, "<%.256s_PID_%" PRIu64 ">", p->text + at, f->pc);
	else
		snprintf(name, sizeof name, "<process_PID_%" PRIu64 ">", f->pc);
	const struct sonde_func *fn = sonde_syms_kind_func(s, SONDE_FRAME_PROCESS, p ? &p->obj : NULL, f->pc,
							   f->pc + 1, name, NULL, NULL, at < 0 && f->pc);

	if (p && fn->kind == SONDE_FRAME_PROCESS)
		u64map_put(&p->fn, f->pc, fn->id); /* out of memory: made again next time */
	return fn;
}

const struct sonde_frame_module sonde_fk_process = {
	.info = { "process", "a process of a system-wide experiment", NULL },
	.open = processes_open,
	.close = processes_close,
	.func = processes_func,
};
