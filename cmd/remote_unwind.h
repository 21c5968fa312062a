/*
 * The call stacks of another process, after the fact: what sonde collect
 * -P and sonde kernel -F read from the perf records of its threads (the
 * user registers and a copy of the top of the stack), unwound with
 * elfutils' DWARF unwinder over the process's objects as /proc/PID/maps
 * listed them when it was opened.  Not thread-safe.
 */
#ifndef SONDE_CMD_REMOTE_UNWIND_H
#define SONDE_CMD_REMOTE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reader/experiment.h"
#include "reader/expwriter.h"
#include "base/u64map.h"

/* The user registers a record holds (sample_regs_user RUNW_REGS_MASK), in
 * perf's order (asm/perf_regs.h: AX BX CX DX SI DI BP SP IP, R8..R15). */
enum { RUNW_AX, RUNW_BX, RUNW_CX, RUNW_DX, RUNW_SI, RUNW_DI, RUNW_BP, RUNW_SP, RUNW_IP, RUNW_R8, RUNW_NREGS = RUNW_R8 + 8 };
#define RUNW_REGS_MASK (0x1ffull | (0xffull << 16))

struct runw;

/* The unwinder of process pid, whose objects are read now (it must be
 * alive); NULL with the reason in err. */
struct runw *runw_open(pid_t pid, char *err, size_t errlen);
void runw_close(struct runw *u);

/* Thread tid's stack at a sample: its registers (RUNW_NREGS) and len
 * bytes of stack copied from its sp.  Writes up to max native frames,
 * leaf first (the first exact), into out and returns how many (at least
 * the pc); *flags gets SONDE_STACK_INCOMPLETE when the walk stopped short
 * of the thread's first frame, SONDE_STACK_TRUNCATED at max. */
int runw_unwind(struct runw *u, pid_t tid, const uint64_t *regs, const uint8_t *stack, uint64_t len,
		struct sonde_frame *out, int max, uint16_t *flags);

/* A sample record's REGS_USER and STACK_USER fields, from p to end (the
 * record's end): *regs (NULL: no user registers, a kernel thread's),
 * *stack and *len (the bytes of the copy that hold stack).  0, or -1 for
 * a record too short for what it says. */
int runw_parse_user(const uint64_t *p, const uint64_t *end, const uint64_t **regs, const uint8_t **stack,
		    uint64_t *len);

/* map.xml of w: the process's objects (the vDSO left out: no copy). */
void runw_write_map(struct runw *u, struct sonde_expw *w);

/* log.xml's <target> line of process pid, from /proc (its cwd, exe and
 * command line; name for the exe and command when it is gone). */
void runw_log_target(struct sonde_expw *w, pid_t pid, const char *name);

/* What the commands that read perf records write experiments with: the
 * stacks of a writer, each written once (its frames and flags hashed). */
struct runw_stacks {
	struct sonde_expw *w;
	struct u64map map; /* hash -> index in ids */
	uint64_t *ids;
	size_t n, cap;
	int failed; /* out of memory, or the writer failed */
};
/* The id of the stack of frames f[0, n) (leaf first) and flags, written
 * into s->w at its first use. */
uint64_t runw_intern(struct runw_stacks *s, const struct sonde_frame *f, int n, uint16_t flags);
void runw_stacks_release(struct runw_stacks *s);
/* n bytes of a perf ring's data (size a power of two) from offset at,
 * across its end. */
void runw_ring_copy(const uint8_t *data, uint64_t size, uint64_t at, void *out, size_t n);

#endif
