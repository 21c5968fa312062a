/*
 * shape: the stack-shaping view modes (-viewmode user|expert|machine) of a
 * runtime whose user's view of a program differs from the machine's (OpenMP,
 * as er_print has it).  The profile builder (profile.c) applies a shaper to
 * every stack of an experiment that ran its runtime, once, when it turns the
 * stack into the model's call path, so that every view, export and the report
 * see the shaped paths (and Java, as Oracle's analyzer has it too).  A shaper says which frames are the runtime's own,
 * what a sample spent in the runtime is called in user mode (by the sample's
 * thread state), which functions are the compiler's outlined bodies of a
 * source function, and where a thread's stack continues in another thread's
 * (call-path reconstruction: a worker's stack under the stack that opened
 * its parallel region).  doc/internals.md, "A stack-shaping view mode".
 */
#ifndef SONDE_SHAPE_H
#define SONDE_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/experiment.h"

/* sonde_profile_opts.viewmode: user (0, the default), expert, machine (the
 * stacks as recorded).  The same order as the views' enum sonde_viewmode. */
enum sonde_stackmode { SONDE_SHAPE_USER, SONDE_SHAPE_EXPERT, SONDE_SHAPE_MACHINE };

/* A sample's context, a link per level, innermost first: the code address
 * that names level k's outlined functions (0: none known), and where the
 * frames of level k continue: stack_id of the same experiment, taken at
 * time_ns (0: level k's own stack holds its callers: the last level). */
struct sonde_shape_link {
	uint64_t codeptr, stack_id, time_ns;
};
#define SONDE_SHAPE_LEVELS 8

struct sonde_shaper {
	const char *name;
	/* The shaper's state for experiment exp, NULL when exp did not run
	 * the runtime (its stacks are not shaped); *oom on failure. */
	void *(*open)(const struct sonde_exp *exp, bool *oom);
	void (*close)(void *st);
	/* Whether o (NULL: an address in no object) is the runtime's. */
	bool (*runtime_object)(const struct sonde_object *o);
	/* The user-mode name of time spent in the runtime, by the sample's
	 * thread state (sonde/states.h; 0 for a traced event). */
	const char *(*pseudo)(unsigned state);
	/* Whether name is an outlined body: 1 with *srclen the length of its
	 * source function's name at its start (0: the name does not say
	 * which: the context's codeptr does), 0 when it is not one. */
	int (*outlined)(const char *name, size_t *srclen);
	/* The context of an event of thread tid at time_ns: its links into
	 * l (at most max), their number (0: none). */
	int (*links)(void *st, uint32_t tid, uint64_t time_ns, struct sonde_shape_link *l, int max);
};

/* The shapers, NULL-terminated (shape.c): OpenMP's (shape_omp.c) and
 * Java's (shape_java.c); an experiment's stacks are shaped by the first
 * that opens it. */
extern const struct sonde_shaper *const sonde_shapers[];
extern const struct sonde_shaper sonde_shaper_omp, sonde_shaper_java;

/* Whether a shaper shapes the stacks of any of exps[0..n) (their user and
 * expert modes differ from machine mode); *oom on failure. */
bool sonde_shape_any(const struct sonde_exp *const *exps, size_t n, bool *oom);

/* Frames a shaper treats as the system's: libc, the dynamic loader, the
 * kernel's; a runtime's leaf time includes the calls it makes into them. */
bool sonde_shape_system_object(const struct sonde_object *o);

#endif
