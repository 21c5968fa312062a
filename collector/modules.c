/*
 * The table of the collector's modules (collector.h, struct
 * collector_module) and the loops over it, one per point of the
 * process's life; and the stacks module, the call stacks' file that
 * every other module's samples and events name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "../tracers/tracer.h"

/* In their order (collector.h says which hooks run in it and which in
 * reverse): the stacks file first (every sample and event names its
 * stacks), clock profiling (its handler and profile file; the threads it
 * registers, before any thread of the collector's exists), off-CPU time
 * (a thread writing into the profile file), the sample points (the -t
 * thread; its <sampling> line), map.xml, the traced kinds, OpenMP's states
 * (omp.c: after off-CPU's settings, whose interval it reads), the hooks. */
static const struct collector_module *const g_modules[] = {
	&stacks_module, &kstacks_module, &clock_module, &offcpu_module, &sampling_module, &maps_module, &traced_module, &omp_module,
	&hooks_module,
};
#define NMODULES ((int)(sizeof g_modules / sizeof g_modules[0]))

#define EACH(hook, ...)                                   \
	for (int i_ = 0; i_ < NMODULES; i_++)             \
		if (g_modules[i_]->hook)                  \
			g_modules[i_]->hook(__VA_ARGS__)
#define EACH_REVERSE(hook, ...)                           \
	for (int i_ = NMODULES - 1; i_ >= 0; i_--)        \
		if (g_modules[i_]->hook)                  \
			g_modules[i_]->hook(__VA_ARGS__)

void cmod_open(struct clock_settings *cs) { EACH(open, cs); }
void cmod_settings(struct xbuf *b, const struct clock_settings *cs) { EACH(settings, b, cs); }
void cmod_start(void) { EACH(start); }
void cmod_thread_start(void *fn) { EACH(thread_start, fn); }
void cmod_thread_end(void) { EACH_REVERSE(thread_end); }
void cmod_quit(void) { EACH(quit); }
void cmod_stop(void) { EACH_REVERSE(stop); }
void cmod_end(struct xbuf *b) { EACH(end, b); }
void cmod_finish(void) { EACH(finish); }
void cmod_fork_child(void) { EACH_REVERSE(fork_child); }
void cmod_restart(void) { EACH_REVERSE(restart); }
void cmod_exec_prepare(void) { EACH(exec_prepare); }
void cmod_exec_failed(void) { EACH_REVERSE(exec_failed); }
void cmod_close_fds(void) { EACH(close_fds); }

/* Each module's file that exists, and its packets (the tracing
 * libraries' are described as they attach, trace.c).  b is the caller's
 * buffer, emptied line by line. */
void cmod_dataformat(struct xbuf *b)
{
	for (int i = 0; i < NMODULES; i++) {
		const struct collector_module *m = g_modules[i];
		if (!m->kind || (m->file && !m->file()))
			continue;
		xb_init(b, b->p, b->cap);
		xb_str(b, "<dataformat");
		xb_attr_str(b, "file", sonde_kind_desc(m->kind)->file);
		xb_attr_u64(b, "kind", (uint64_t)m->kind);
		xb_attr_u64(b, "block_size", SONDE_BLOCK_SIZE);
		xb_str(b, "/>\n");
		log_line(b->p, b->len);
		for (int k = 0; k < m->npackets; k++) {
			const struct sonde_packet_format *p = &m->packets[k];
			xb_init(b, b->p, b->cap);
			xb_str(b, "<packet");
			xb_attr_u64(b, "type", (uint64_t)p->type);
			xb_attr_str(b, "name", p->name);
			xb_attr_u64(b, "size", (uint64_t)p->size);
			xb_attr_str(b, "fields", p->fields);
			xb_str(b, "/>\n");
			log_line(b->p, b->len);
		}
	}
	xb_init(b, b->p, b->cap);
}

void dfile_end_errors(struct dfile *df)
{
	int e = dfile_grow_errno(df);
	if (!e)
		return;
	char msg[256];
	snprintf(msg, sizeof msg, "data file '%s' could not grow (%s); %llu later packets were lost", dfile_name(df),
		 strerror(e), (unsigned long long)dfile_lost(df));
	log_event_text("error", msg);
}

/* ---- the stacks file ---- */

static struct dfile *g_stacks;

/* Its tables on huge pages with clock profiling (stacks_init says why).
 * In a followed fork child, whose experiment is a new one, the parent's
 * nodes are forgotten first: they are in the parent's file. */
static void stacks_open(struct clock_settings *cs)
{
	stacks_reset();
	g_stacks = dfile_create(g_col.expdir, sonde_kind_desc(SONDE_KIND_STACKS)->file, SONDE_KIND_STACKS);
	if (!g_stacks || stacks_init(g_stacks, cs->interval_ns != 0) < 0) {
		cs->interval_ns = 0;
		if (!g_stacks)
			log_event_text("error", "cannot create the stacks data file; clock profiling disabled");
	}
}

static void stacks_settings(struct xbuf *b, const struct clock_settings *cs)
{
	xb_attr_u64(b, "depth_limit", (uint64_t)cs->depth);
}

static void stacks_end(struct xbuf *b)
{
	xb_attr_u64(b, "stacks", stacks_count());
	xb_attr_u64(b, "stacks_lost", dfile_lost(g_stacks));
	dfile_end_errors(g_stacks);
}

static void stacks_finish(void)
{
	dfile_finish(g_stacks);
}

static void stacks_fork_child(void)
{
	dfile_forget(g_stacks);
	g_stacks = NULL;
}

static void stacks_close_fds(void)
{
	dfile_close_fd(g_stacks);
}

static const struct sonde_packet_format stacks_packets[] = {
	{ SONDE_PKT_STACK, "stack", 16, "type:0:u16 size:2:u16 depth:4:u16 flags:6:u16 stack_id:8:u64 pc:16:u64[depth]" },
	{ SONDE_PKT_FRAME, "frame", 32,
	  "type:0:u16 size:2:u16 kind:4:u8 fflags:5:u8 aux:6:u16 node_id:8:u64 parent_id:16:u64 pc:24:u64" },
};

const struct collector_module stacks_module = {
	.name = "stacks",
	.kind = SONDE_KIND_STACKS,
	.packets = stacks_packets,
	.npackets = 2,
	.open = stacks_open,
	.settings = stacks_settings,
	.end = stacks_end,
	.finish = stacks_finish,
	.fork_child = stacks_fork_child,
	.close_fds = stacks_close_fds,
};
