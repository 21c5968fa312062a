/*
 * dynfunc: dynamic functions, the code a JIT generated at run time, as the
 * JIT announced it in its perf map file.
 *
 * The convention (perf's, followed by V8/Node, CPython 3.12's perf
 * trampolines, LuaJIT, .NET, perf-map-agent, ...): the JIT appends one line
 * per function it emits to /tmp/perf-PID.map,
 *
 *	START SIZE NAME
 *
 * START and SIZE in hex (a "0x" prefix is allowed, as perf reads them with
 * strtoull base 16), NAME the rest of the line (it may contain blanks).
 * The collector copies that file into the experiment as "jit.map" when
 * collection ends (sonde collect does it for a target killed before its
 * collector could); see doc/experiment-format.md.
 *
 * Reading: a pc in no load object that lies in [START, START+SIZE) of an
 * entry is in that dynamic function.  When entries overlap (a JIT reused
 * the memory of freed code), the entry written last wins: the file has no
 * times, and the newest code is the likeliest to have been sampled at
 * the end of a run.  Lines that are not entries (no hex start, no size,
 * size 0, a range that wraps, no name) are counted and skipped.  Names
 * are kept as written except that control characters become '?'.
 *
 * The functions' load object is a pseudo object, path and name "<JIT>",
 * base 0 (so a function's lo/hi are its run-time addresses), id 0 (map.xml
 * ids start at 1), lo/hi spanning all entries; but the JVM's own code
 * (jvm.map's entries other than compiled Java methods, "NAME [compiled]":
 * the interpreter, stubs, adapters) is in one of its own, "<JVM-code>",
 * which a view mode may take for the runtime's.
 */
#ifndef SONDE_DYNFUNC_H
#define SONDE_DYNFUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "reader/experiment.h"

#define SONDE_JIT_MAP_FILE "jit.map"
/* The same format, written by sonde's Java agent: the JVM's generated
 * code (tracers/java/agent.c).  Read before jit.map. */
#define SONDE_JVM_MAP_FILE "jvm.map"
/* The Java agent's compiled methods by time ("T load 0xCODE SIZE 0xID
 * LEVEL CID BCI NAME"): each load an entry "NAME [compiled]", read
 * before jvm.map, so that the code alive at the JVM's end (jvm.map's)
 * wins where a later method took freed code's place, and a sample in code
 * freed before the end has its method's name. */
#define SONDE_JVM_CODE_FILE "jvm.code"
#define SONDE_JIT_OBJECT "<JIT>"
#define SONDE_JVM_OBJECT "<JVM-code>"

struct sonde_dynfunc {
	uint64_t lo, hi;  /* run-time addresses [lo, hi) */
	const char *name; /* never empty */
	unsigned line;	  /* line of jit.map: the larger wins on overlap */
	bool jvm;	  /* the JVM's own code: in the <JVM-code> object */
};

struct sonde_dynfuncs; /* opaque */

/*
 * Parses perf map text (len bytes, need not be NUL-terminated).  NULL only
 * when memory runs out; text without a single entry gives an empty table.
 */
struct sonde_dynfuncs *sonde_dynfuncs_parse(const char *text, size_t len);

/*
 * Reads the experiment's jit.map.  *present tells whether the file exists;
 * NULL with *present false when it does not, NULL with *present true when
 * it cannot be read (errno set) or memory runs out.
 */
struct sonde_dynfuncs *sonde_dynfuncs_read(const struct sonde_exp *exp, bool *present);

void sonde_dynfuncs_free(struct sonde_dynfuncs *d);

/* The index of the entry holding pc, or -1.  O(log n) plus the number of
 * entries overlapping pc. */
long sonde_dynfuncs_find(const struct sonde_dynfuncs *d, uint64_t pc);

/* Entries sorted by lo (then line), *n of them. */
const struct sonde_dynfunc *sonde_dynfuncs_entries(const struct sonde_dynfuncs *d, size_t *n);

/* Lines that were not entries (blank lines are not counted). */
size_t sonde_dynfuncs_ignored(const struct sonde_dynfuncs *d);

/* The "<JIT>" pseudo object; lives as long as d. */
const struct sonde_object *sonde_dynfuncs_object(const struct sonde_dynfuncs *d);

/* The pseudo object of entry i: "<JIT>", or "<JVM-code>" for the JVM's
 * own code. */
const struct sonde_object *sonde_dynfuncs_entry_object(const struct sonde_dynfuncs *d, size_t i);

/*
 * For sonde collect, after the target ended: copies the perf map of pid
 * (/tmp/perf-PID.map, else $TMPDIR/perf-PID.map) into the experiment as
 * jit.map when the collector did not (a target killed by SIGKILL, one that
 * replaced itself by exec).  since: when the target started (time(NULL));
 * a map file last written before then was left by an earlier process with
 * the same pid.  Returns 1 copied, 0 nothing to do (no map file, a stale
 * one, or jit.map already there), -1 with a message in err.
 */
int sonde_jitmap_copy(pid_t pid, time_t since, const char *expdir, char *err, size_t errlen);

#endif
