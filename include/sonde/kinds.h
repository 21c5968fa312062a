/*
 * The data kinds of an experiment: the one list of them.
 *
 * Every data file an experiment can hold is one row of SONDE_KINDS below,
 * and everything that names a kind reads this table: the kind ids of the
 * file and block headers (enum sonde_kind in format.h), the collector's
 * table of traced kinds (collector/trace.c), `sonde collect`'s
 * options, environment and dry run (cmd/collect_settings.c), LD_PRELOAD
 * list and trimming of the data files (cmd/collect.c), and the analyzer's table of the kinds' modules
 * (lib/base/kindmod.h), through which the reader, the model, agg and the
 * views reach each kind.
 *
 * The table covers every data file, not only the traced kinds, because
 * the id and the file name are what the format needs of each (the header's
 * `kind` and `kind_name`, the <dataformat> lines of log.xml, the files
 * `sonde collect` trims).  Three rows are the collector's own files and
 * have no option, environment variable or library (0 and NULL there):
 * "profile" (clock profiling is built into the collector, and its -p
 * takes an interval, not a setting), "stacks" and "overview" (shared by
 * every kind; always written).  A row with a preload library is a traced
 * kind: `sonde collect -OPT VALUE` preloads its library (from the
 * collector's directory) and hands it VALUE in ENV; the library attaches
 * to the collector with __sonde_trace_attach (tracers/tracer.h), which
 * creates FILE.  Adding a traced kind (MPI, OpenMP, counters, Java) is one
 * row here, with the next free id, plus its library (tracers/NAME.c) and
 * its module (lib/kinds/NAME.c; doc/internals.md).
 *
 * Columns of X(NAME, id, name, file, opt, env, lib, title, values, help,
 * flags):
 *   NAME    enum suffix: SONDE_KIND_NAME
 *   id      the number on disk (header `kind`); never reused or changed
 *   name    short name, as in log.xml's <trace kind="name">
 *   file    the data file in the experiment (header `kind_name`, at most
 *           15 bytes)
 *   opt     `sonde collect` option letter (a char), 0 for none
 *   env     environment variable that carries the setting to the target
 *   lib     the tracing library (LD_PRELOAD), next to the collector
 *   title   what --help and the dry run call it ("heap tracing: on")
 *   values  the settings the option takes, '|' between them: words, and
 *           N for a number (microseconds, 0 to 10^9; 0 means "all")
 *   help    the option's --help text after the values (continuation
 *           lines indented to column 21)
 *   flags   SONDE_KINDF_*: SONDE_KINDF_TICK, the library reads the shared
 *           millisecond tick (tracer.h, __sonde_trace_now);
 *           SONDE_KINDF_COLLECTOR, written by the collector itself (lib
 *           NULL) but read through its module (counters, whose -h
 *           value is parsed by cmd/collect_settings.c with lib/base/counters.c,
 *           not from `values`, which only documents it)
 * The rows are in id order (ids are dense, from 1).
 */
#ifndef SONDE_KINDS_H
#define SONDE_KINDS_H

#include <stddef.h>

#define SONDE_KINDF_TICK 0x1u
/* The collector itself writes the kind (no library: its samples come from
 * the collector's signal handler), yet it is read through its module like
 * a traced kind (counters). */
#define SONDE_KINDF_COLLECTOR 0x2u

/* clang-format off */
#define SONDE_KINDS(X)                                                                                  \
	X(PROFILE, 1, "profile", "profile", 0, NULL, NULL, "clock profiling", NULL, NULL, 0)            \
	X(STACKS, 2, "stacks", "stacks", 0, NULL, NULL, "call stacks", NULL, NULL, 0)                   \
	X(OVERVIEW, 3, "overview", "overview", 0, NULL, NULL, "sample points", NULL, NULL, 0)           \
	X(SYNC, 4, "sync", "synctrace", 's', "SONDE_SYNC", "libsonde_sync.so", "sync wait tracing",     \
	  "on|all|N|off",                                                                               \
	  "synchronization wait tracing: waits of at least the\n"                                       \
	  "                     calibrated threshold (on), every call (all, 0), or\n"                   \
	  "                     N microseconds", 0)                                                     \
	X(HEAP, 5, "heap", "heaptrace", 'H', "SONDE_HEAP", "libsonde_heap.so", "heap tracing",          \
	  "on|off", "heap tracing (allocations, frees, leaks)", SONDE_KINDF_TICK)                       \
	X(IO, 6, "io", "iotrace", 'i', "SONDE_IO", "libsonde_io.so", "I/O tracing",                     \
	  "on|off", "I/O tracing (reads, writes, opens, ... by file)", 0)                               \
	X(COUNTERS, 7, "counters", "counters", 'h', "SONDE_COUNTERS", NULL, "counter overflow profiling",  \
	  "on|hi|lo|COUNTER[,on|hi|lo|N][,COUNTER2[,...]]",                                             \
	  "counter overflow profiling: a sample with the call stack\n"                                 \
	  "                     every N events of each COUNTER (a perf event: cycles,\n"               \
	  "                     page-faults, ...; sonde collect alone lists them); on,\n"              \
	  "                     hi, lo: the default set or interval, hi 10x as often", SONDE_KINDF_COLLECTOR)   \
	X(MPI, 8, "mpi", "mpitrace", 'm', "SONDE_MPI", "libsonde_mpi.so", "MPI tracing", "on|off",         \
	  "MPI tracing (with -M): every MPI call, its time, bytes\n"                                       \
	  "                     and peer rank (default on with -M)", 0)                                   \
	X(OMP, 9, "omp", "omptrace", 0, "SONDE_OMP", NULL, "OpenMP regions", "on|off",                     \
	  "OpenMP parallel regions, their threads' parts and tasks\n"                                     \
	  "                     (with the OpenMP states; SONDE_OMP=0 turns both off)", SONDE_KINDF_COLLECTOR)
/* clang-format on */

/* The largest kind id: arrays indexed by kind have SONDE_KIND_MAX + 1
 * entries. */
enum {
#define SONDE_KIND_COUNT_(NAME, id, ...) +1
	SONDE_KIND_COUNT = 0 SONDE_KINDS(SONDE_KIND_COUNT_),
#undef SONDE_KIND_COUNT_
};
/* Ids are dense from 1 (checked below), so the largest is the count. */
#define SONDE_KIND_MAX SONDE_KIND_COUNT

/* The header's kind_name holds the file name, NUL-padded. */
#define SONDE_KIND_FILE_CHECK_(NAME, id, name, file, ...) \
	_Static_assert(sizeof(file) <= 16, "the file name of kind " #NAME " fits kind_name");
SONDE_KINDS(SONDE_KIND_FILE_CHECK_)
#undef SONDE_KIND_FILE_CHECK_

struct sonde_kind_desc {
	int id;
	const char *name, *file;
	char opt;
	const char *env, *lib, *title, *values, *help;
	unsigned flags;
};

/* The row of kind id, NULL for an id not in the table.  Any context (a
 * constant table, no call). */
static inline const struct sonde_kind_desc *sonde_kind_desc(int id)
{
	static const struct sonde_kind_desc rows[] = {
#define SONDE_KIND_ROW_(NAME, id, name, file, opt, env, lib, title, values, help, flags) \
	[(id) - 1] = { id, name, file, opt, env, lib, title, values, help, flags },
		SONDE_KINDS(SONDE_KIND_ROW_)
#undef SONDE_KIND_ROW_
	};
	/* A gap or an id past the count makes the array longer than the
	 * count; a repeated id warns (-Woverride-init). */
	_Static_assert(sizeof rows / sizeof rows[0] == SONDE_KIND_COUNT, "kind ids are 1 to SONDE_KIND_COUNT");
	if (id < 1 || id > SONDE_KIND_MAX)
		return NULL;
	return &rows[id - 1];
}

/* Whether kind id is read through its module (lib/kinds/NAME.c): a
 * traced kind, or one the collector writes itself (SONDE_KINDF_COLLECTOR).
 * The collector's own three files (profile, stacks, overview) are not. */
static inline int sonde_kind_modular(int id)
{
	const struct sonde_kind_desc *d = sonde_kind_desc(id);
	return d && (d->lib != NULL || (d->flags & SONDE_KINDF_COLLECTOR));
}

/* Whether kind id has a tracing library of its own (a traced kind). */
static inline int sonde_kind_traced(int id)
{
	const struct sonde_kind_desc *d = sonde_kind_desc(id);
	return d && d->lib != NULL;
}

#endif
