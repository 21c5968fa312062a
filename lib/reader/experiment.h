/*
 * experiment: read a sonde experiment directory (see include/sonde/format.h
 * and doc/experiment-format.md).
 *
 * sonde_exp_open() reads and checks everything at once: log.xml, map.xml,
 * notes, and the data files "profile", "stacks" and "overview", which it
 * memory-maps.  It validates every file header, block and packet, builds the
 * stack table (stack id -> frames) and per-thread totals, and records what
 * it could not read as *problems* instead of failing: a truncated or
 * corrupted data file keeps every packet that was valid before the damage.
 * Only a directory that is not an experiment at all (missing, no log.xml,
 * log.xml without <experiment>, a format this sonde cannot read) makes
 * sonde_exp_open() fail.
 *
 * Problems are SONDE_PROBLEM_ERROR when data was lost: a data file that is
 * truncated inside its used area, a bad file header, block or packet, a
 * data file that log.xml declares but that is missing.  Everything else is
 * a SONDE_PROBLEM_WARNING: no map.xml, a malformed or cut-off XML line, a
 * stack id used for two different stacks, samples whose stack is missing,
 * fewer samples than the collector's end event reports, heap events
 * stamped by a tracing clock that had stopped (sonde collect killed).  (A
 * data file cut exactly at a block boundary looks like one without more
 * blocks; the end event's sample count is what catches that.)
 *
 * An experiment that is still being written can be opened; the handle is
 * a snapshot of the packets published when it was opened.
 *
 * After open the handle is read-only: any number of threads may use it and
 * its iterators at once.  Every pointer the accessors return (strings,
 * arrays, stacks' frames, labels that point into a mapped data file) is
 * owned by the handle and stays valid until sonde_exp_close().  Absent
 * strings are NULL, absent numbers 0, unless a field says otherwise.
 *
 * Library code never prints or exits; errors come back as one-line
 * messages (lower case, the failing thing in quotes) in a caller's buffer.
 *
 * Byte order: the format is little-endian and this reader reads fields
 * directly, so it builds only on little-endian hosts.
 */
#ifndef SONDE_EXPERIMENT_H
#define SONDE_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/format.h>

struct sonde_exp; /* opaque */

/* ---- opening ---------------------------------------------------------- */

/*
 * Opens the experiment in directory dir.  Returns a handle to free with
 * sonde_exp_close(), or NULL with a message in err (errlen bytes, always
 * NUL-terminated when errlen > 0) when dir is missing, is not a directory,
 * has no log.xml (not an experiment), has a log.xml without <experiment>
 * or of a format this reader does not read, or when memory runs out.
 * Damaged data does not fail the open: see sonde_exp_problems().
 */
struct sonde_exp *sonde_exp_open(const char *dir, char *err, size_t errlen);

/* Unmaps and frees everything; every pointer obtained from exp dies.
 * NULL is allowed. */
void sonde_exp_close(struct sonde_exp *exp);

/* ---- log.xml ---------------------------------------------------------- */

enum sonde_event_kind {
	SONDE_EV_OTHER = 0, /* an event kind this reader does not know */
	SONDE_EV_START,
	SONDE_EV_THREAD_START, /* tid */
	SONDE_EV_THREAD_END,   /* tid, cpu_ns (has_cpu_ns), start_ns, utime_ns, stime_ns
				* (has_times), run_delay_ns (has_run_delay) */
	SONDE_EV_WARNING,      /* text */
	SONDE_EV_ERROR,	       /* text: a data kind was disabled */
	SONDE_EV_END,	       /* collector shutdown: samples, lost, stacks, stacks_lost,
				* offcpu_samples, offcpu_discarded (has_offcpu),
				* offcpu_late_ns (has_offcpu_late) */
	SONDE_EV_EXIT,	       /* status */
	SONDE_EV_SIGNAL,       /* signal, signame */
	SONDE_EV_EXEC,	       /* the image is about to exec: end records follow */
	SONDE_EV_EXEC_FAILED,  /* ...and the exec failed: since_ns, err, text */
	SONDE_EV_REAPED,       /* this process reaped child pid: status, or signal and signame */
	SONDE_EV_UNRECORDED,   /* (a founder's) a descendant was not recorded: lineage, reason,
				* pid and command when known */
};

struct sonde_event {
	enum sonde_event_kind kind;
	const char *kind_name; /* as written in log.xml, never NULL */
	unsigned line;	       /* line of log.xml */
	uint64_t time_ns;      /* CLOCK_MONOTONIC, 0 when absent */
	uint32_t tid;
	bool has_cpu_ns;
	uint64_t cpu_ns;  /* thread_end: the thread's real CPU time */
	uint64_t start_ns; /* thread_end: when the thread started, 0 when absent */
	const char *text; /* warning, error */
	int status;	  /* exit */
	int signal;	  /* signal */
	const char *signame; /* signal: its name; thread_end: the thread's name */
	uint64_t samples, lost, stacks, stacks_lost; /* end */
	uint64_t handler_ns; /* end: CPU time spent in the sampling handler */
	uint64_t start_cost_ns, end_cost_ns; /* end: the collector's at the starts and
						 ends of threads (<Collector>) */
	uint64_t pseudo_samples; /* end: of samples, those of pseudo-functions */
	uint64_t since_ns;   /* exec_failed: when the exec's end records began */
	int err;	     /* exec_failed: the exec's errno */
	uint32_t pid;	     /* reaped: the child; unrecorded: the descendant, 0 unknown */
	const char *lineage, *reason, *command; /* unrecorded */
	bool has_status;     /* exit, reaped: status is set (else signal) */
	/* thread_end: the kernel's user and system CPU time of the thread
	 * (/proc/self/task/TID/stat, clock-tick resolution) and its run-queue
	 * delay (schedstat, exact) */
	bool has_times, has_run_delay;
	uint64_t utime_ns, stime_ns, run_delay_ns;
	/* end: off-CPU samples written, and found but thrown away (the thread
	 * ran while the sampler unwound it) */
	bool has_offcpu;
	uint64_t offcpu_samples, offcpu_discarded;
	/* end: how late the off-CPU sampler's latest look was */
	bool has_offcpu_late;
	uint64_t offcpu_late_ns;
};

/* One <packet> element: the layout of a packet type as the writer saw it. */
struct sonde_packet_desc {
	unsigned type;
	unsigned size;
	const char *name;
	const char *fields; /* "type:0:u16 size:2:u16 ..." */
};

struct sonde_exp_info {
	const char *dir;  /* as given to open, trailing '/' removed */
	const char *name; /* last path component of dir */
	unsigned format;  /* <experiment format> */
	const char *collector;
	bool log_complete; /* </experiment> was seen */
	const char *notes; /* contents of "notes", NULL when there is none */

	struct {
		uint32_t pid, ppid;
		const char *cwd, *exe, *command;
	} target;
	struct {
		const char *host, *os, *release, *arch;
		unsigned cpus;
		uint64_t pagesize, memory_kb;
	} system;
	struct {
		const char *clock_source;
		/* <settings kernel_time>: "sampled", "sampled-at-tick",
		 * "next-user-sample", or NULL (older experiments). */
		const char *kernel_time;
		uint64_t clock_interval_ns;
		unsigned depth_limit;
		uint64_t size_limit_mb;
		double duration_s;
		/* <settings follow>: the -F setting ("on", "off", "all",
		 * "=REGEX"), NULL in older experiments. */
		const char *follow;
		/* Tracing, from <trace kind=".." .../> lines: mode "on", "all"
		 * or microseconds, NULL when the kind was not traced. */
		const char *sync_mode;
		uint64_t sync_threshold_ns;
		/* <settings offcpu_interval_ns>: the off-CPU sampler's
		 * interval, 0 when off-CPU time was not recorded;
		 * microstates: <settings microstates="1"> (profile packets
		 * split their CPU time and carry the run-queue delay). */
		uint64_t offcpu_interval_ns;
		bool microstates;
	} settings;

	/*
	 * start_ns: <time start_ns>, else the data files' header start_ns,
	 * else the start event, else 0.  realtime_sec/nsec: wall clock at
	 * start (has_realtime false when absent).
	 */
	/*
	 * An MPI rank's experiment: what the launcher said of the process
	 * (<mpirank rank size launcher job/>, written by sonde collect from
	 * the launcher's environment) and what MPI said after MPI_Init (the
	 * tracing library's <trace kind="mpi" name="rank"|"size" value/>);
	 * -1 (NULL) when not said.
	 */
	struct sonde_exp_mpi {
		int64_t rank, size, mpi_rank, mpi_size;
		const char *launcher, *job;
	} mpi;

	uint64_t start_ns;
	bool has_realtime;
	int64_t realtime_sec;
	uint32_t realtime_nsec;

	/*
	 * end_ns: the exit or signal event, else the collector's end event,
	 * else the last sample, else the last event, else start_ns;
	 * end_source names which ("exit", "signal", "end", "last sample",
	 * "last event", "start").
	 */
	uint64_t end_ns;
	const char *end_source;

	const struct sonde_event *exit_event; /* last exit or signal event, or NULL */
	const struct sonde_event *end_event;  /* last end event, or NULL */
	/* The exec that replaced this image (its end records are the last
	 * ones, and no exec_failed follows), or NULL. */
	const struct sonde_event *exec_event;
};

const struct sonde_exp_info *sonde_exp_info(const struct sonde_exp *exp);

/* All events of log.xml in file order. */
const struct sonde_event *sonde_exp_events(const struct sonde_exp *exp, size_t *n);

/* All <packet> descriptions of log.xml in file order. */
const struct sonde_packet_desc *sonde_exp_packet_descs(const struct sonde_exp *exp, size_t *n);

/* ---- files ------------------------------------------------------------- */

struct sonde_exp_file {
	const char *name; /* "log.xml", "map.xml", "notes", "profile", "stacks", "overview" */
	bool present;
	uint64_t size; /* bytes */
	uint64_t written; /* data files: bytes of block headers and valid packets */
};

/* The files above, in that order. */
const struct sonde_exp_file *sonde_exp_files(const struct sonde_exp *exp, size_t *n);

/* ---- problems found while reading -------------------------------------- */

enum sonde_problem_severity {
	SONDE_PROBLEM_WARNING, /* the data is usable as it is (missing map.xml, ...) */
	SONDE_PROBLEM_ERROR,   /* data was lost: truncated or corrupted files */
};

struct sonde_problem {
	enum sonde_problem_severity severity;
	const char *msg; /* "'profile' offset 4288 (block 0, tid 100): packet size 0 is invalid; ..." */
};

/*
 * The problems in the order found.  At most SONDE_EXP_MAX_PROBLEMS are
 * kept; then the last one says how many more there were.
 */
#define SONDE_EXP_MAX_PROBLEMS 100
const struct sonde_problem *sonde_exp_problems(const struct sonde_exp *exp, size_t *n);

/* Number of problems of severity SONDE_PROBLEM_ERROR (all, not only kept). */
size_t sonde_exp_nerrors(const struct sonde_exp *exp);

/* ---- load objects (map.xml) --------------------------------------------- */

#define SONDE_TIME_NEVER UINT64_MAX

struct sonde_object {
	uint32_t id;
	const char *path; /* absolute file name, or "[vdso]" and the like */
	const char *name; /* last component of path */
	uint64_t base;	  /* load bias: pc - base is the address in the ELF file */
	uint64_t lo, hi;  /* run-time range [lo, hi) of the loaded segments */
	const char *buildid; /* hex, NULL when unknown */
	const char *copy;    /* file in the experiment holding a copy of the object
			      * (the vDSO's "vdso.so"), NULL when none */
	uint64_t load_ns;
	uint64_t unload_ns; /* SONDE_TIME_NEVER while loaded */
	bool sonde;	    /* sonde's own (libsonde_*: the collector, a tracer):
			     * its frames are folded away by every view */
};

/* All objects in map.xml order (load order). */
const struct sonde_object *sonde_exp_objects(const struct sonde_exp *exp, size_t *n);

/*
 * The object whose [lo, hi) holds pc at time time_ns (an object loaded at
 * load_ns <= time_ns < unload_ns).  When several ranges hold pc (an address
 * reused after dlclose) and none was loaded at time_ns, or when time_ns is
 * SONDE_TIME_NEVER ("any time"), it returns the one loaded last.  NULL when
 * no object holds pc.  The SONDE_PC_EXACT bit of pc is ignored.
 * O(log n) plus the number of overlapping ranges.
 */
const struct sonde_object *sonde_exp_find_object(const struct sonde_exp *exp, uint64_t pc,
						 uint64_t time_ns);

/*
 * Mapping epochs.  An address can name different code at different times
 * only where two objects that are not the same file at the same base held
 * it (a library dlclosed and another dlopened at its address).  The load
 * and unload times of such objects cut the run into epochs; within one,
 * sonde_exp_find_object() (and so every symbol lookup by time) gives the
 * same answer for every time, so a reader that resolves an interned stack
 * (whose id events at different times share) caches per (stack, epoch).
 * A run that reused no address has one epoch, 0.
 *
 * sonde_exp_map_epoch(): the epoch of time_ns, 0 .. sonde_exp_map_epochs()
 * - 1, and its extent [*lo, *hi) (either pointer may be NULL; *hi is
 * SONDE_TIME_NEVER for the last).  SONDE_TIME_NEVER is in the last epoch.
 * O(log cuts).
 */
size_t sonde_exp_map_epochs(const struct sonde_exp *exp);
uint32_t sonde_exp_map_epoch(const struct sonde_exp *exp, uint64_t time_ns, uint64_t *lo,
			     uint64_t *hi);

/* ---- stacks ------------------------------------------------------------ */

/*
 * A frame of a stack, of any kind (enum sonde_frame_kind of sonde/format.h):
 * what the reader hands out instead of the format's bare pc, so that no
 * reader of a stack can take a Java method id or a kernel address for a
 * native code address, or bit 63 of a kernel address for SONDE_PC_EXACT.
 *
 *   kind   NATIVE: pc is a code address of the process, exact set when the
 *          format's pc had SONDE_PC_EXACT (which pc never carries here);
 *          KERNEL: pc is a kernel address, all 64 bits, exact from the
 *          frame packet's SONDE_FRAMEF_EXACT;
 *          JAVA_INTERP, JAVA_COMPILED: pc is the method's id in the
 *          experiment's method table, aux its bytecode index
 *          (SONDE_FRAME_NO_BCI: unknown);
 *          any other value: a kind this reader does not know, pc and aux
 *          as written (shown as "<kind N>@0x...").
 *   exact  the address of the instruction that was running (a leaf, a
 *          frame a signal interrupted), not a return address: the
 *          function is looked up at pc, not at pc - 1.
 *
 * Two frames are the same frame when all four fields are equal; the
 * padding is always 0, so memcmp compares them.  Stacks of the old
 * whole-stack packet (SONDE_PKT_STACK) hold native frames only.
 */
struct sonde_frame {
	uint64_t pc;
	uint8_t kind;	   /* enum sonde_frame_kind */
	bool exact;
	uint16_t aux;	   /* a Java frame's bytecode index; 0 for other kinds */
	/* 1: a Java frame the reader made from the compiled code's scopes
	 * (jvm.inline) for a stack whose walk failed, not a recorded one */
	uint8_t scoped;
	/* 1: a SONDE_FRAME_JAVA_CODE frame with SONDE_FRAMEF_OWN (the reader
	 * replaces such frames before it hands a stack out: materialize) */
	uint8_t own;
	uint8_t reserved[2]; /* 0 */
};
_Static_assert(sizeof(struct sonde_frame) == 16, "a frame is 16 bytes, four to a cache line");

/* The frame of a native address as the format writes one (with
 * SONDE_PC_EXACT on an exact address). */
static inline struct sonde_frame sonde_frame_native(uint64_t pc)
{
	return (struct sonde_frame){ .pc = pc & ~SONDE_PC_EXACT, .exact = (pc & SONDE_PC_EXACT) != 0 };
}

struct sonde_stack {
	uint64_t id;
	uint16_t depth;
	uint16_t flags;			 /* SONDE_STACK_TRUNCATED, SONDE_STACK_INCOMPLETE */
	const struct sonde_frame *frame; /* depth frames, leaf first */
	uint64_t offset;		 /* of its first packet in "stacks" */
};

/* The stack with id stack_id, or NULL when "stacks" has none. */
const struct sonde_stack *sonde_exp_stack(const struct sonde_exp *exp, uint64_t stack_id);

/* All distinct stacks: those written whole (SONDE_PKT_STACK) in file order,
 * then those built from frame nodes (SONDE_PKT_FRAME) for the samples that
 * name them, in sample order.  Duplicates of an id are dropped. */
const struct sonde_stack *sonde_exp_stacks(const struct sonde_exp *exp, size_t *n);

/* ---- summary and threads ----------------------------------------------- */

struct sonde_exp_summary {
	uint64_t samples;   /* profile packets read */
	uint64_t weight_ns; /* their total weight: recorded CPU time */
	uint64_t first_ns, last_ns; /* sample times, 0 without samples */
	uint64_t samples_unknown_stack; /* stack_id not found in "stacks" */
	uint64_t samples_truncated;	/* whose stack is SONDE_STACK_TRUNCATED */
	uint64_t samples_incomplete;	/* whose stack is SONDE_STACK_INCOMPLETE */
	size_t stacks;			/* distinct stack ids */
	size_t stacks_truncated, stacks_incomplete;
	/* stacks without Java frames (their walk failed) given Java frames
	 * from the compiled code's scopes (jvm.inline) */
	size_t stacks_java_scoped;
	uint64_t stack_packets;	 /* stack and frame packets, including repeats of one id */
	size_t frame_nodes;	 /* distinct frame nodes (the collector's stack form) */
	size_t stack_conflicts;	 /* ids seen with two different stacks */
	uint64_t overview_packets;
	uint64_t unknown_packets; /* packets of types skipped by size */
	uint64_t trace_unknown_stack; /* trace events whose stack_id is not found */
	uint64_t samples_bad_weight;  /* skipped: weight_ns above SONDE_MAX_SAMPLE_WEIGHT_NS */
	uint64_t first_bad_weight;    /* the first of those weights */
	/* Microstates (48-byte profile packets) and off-CPU samples. */
	uint64_t samples_ms;	   /* profile packets with microstates */
	uint64_t system_ns;	   /* recorded System CPU (part of weight_ns) */
	uint64_t wait_cpu_ns;	   /* recorded Wait CPU (run-queue delay) */
	uint64_t samples_bad_ms;   /* skipped: system_ns > weight_ns, or a wait
				    * above SONDE_MAX_SAMPLE_WEIGHT_NS */
	uint64_t offcpu_samples;   /* off-CPU packets read (not in samples) */
	/* The samples of each state (sonde/states.h), CPU and off-CPU, and
	 * their weight: the off-CPU states' make up offcpu_samples, the CPU
	 * states' samples (a state a newer collector wrote that this reader
	 * does not know is not counted here; its samples are CPU time). */
	uint64_t state_samples[SONDE_STATE_COUNT], state_ns[SONDE_STATE_COUNT];
	uint64_t offcpu_bad;	   /* skipped: a bad state, tid 0 or weight */
};

/*
 * A profile packet's weight_ns is one thread's CPU time since its previous
 * sample: 2^48 ns (78 hours) of it in one sample cannot happen (the
 * sampling timer fires every few milliseconds of CPU), and a weight with a
 * high bit set (a corrupted file) would make totals wrap negative.  Such
 * samples are skipped by the reader (the summary, the threads and the
 * sample iterator alike) with one error.
 */
#define SONDE_MAX_SAMPLE_WEIGHT_NS (1ull << 48)

const struct sonde_exp_summary *sonde_exp_summary(const struct sonde_exp *exp);

/* Whether the experiment recorded microstates (<settings microstates="1">,
 * or 48-byte profile packets) / off-CPU time (<settings
 * offcpu_interval_ns> above 0, or off-CPU packets). */
bool sonde_exp_has_microstates(const struct sonde_exp *exp);
bool sonde_exp_has_offcpu(const struct sonde_exp *exp);

struct sonde_thread {
	uint32_t tid;
	uint64_t samples;
	uint64_t weight_ns;	/* recorded CPU time */
	uint64_t first_ns, last_ns; /* sample times, 0 without samples */
	uint64_t start_ns, end_ns;  /* thread_start (or thread_end's start_ns) and
				     * thread_end event times, 0 without */
	bool has_cpu_ns;
	uint64_t cpu_ns; /* real CPU time from thread_end */
	/* Recorded microstates: system_ns and wait_cpu_ns of its CPU samples
	 * (system_ns is part of weight_ns; 0 for packets without
	 * microstates), its off-CPU samples (not in samples), and the weight
	 * of its samples by state (sonde/states.h, as the summary's). */
	uint64_t system_ns, wait_cpu_ns;
	uint64_t offcpu_samples, state_ns[SONDE_STATE_COUNT];
	/* The kernel's accounting from thread_end (has_times,
	 * has_run_delay): user and system CPU, run-queue delay. */
	bool has_times, has_run_delay;
	uint64_t utime_ns, stime_ns, run_delay_ns;
	/* Its name as the kernel had it when it ended (thread_end's name:
	 * pthread_setname_np's, "GC Thread#0"), NULL when not recorded. */
	const char *name;
};

/* Every thread seen in the profile or in thread events, sorted by tid. */
const struct sonde_thread *sonde_exp_threads(const struct sonde_exp *exp, size_t *n);

/* ---- samples ----------------------------------------------------------- */

/* A clock-profile sample (a state of CPU samples, sonde/states.h:
 * weight_ns is CPU time, system_ns of it in the kernel, wait_cpu_ns the
 * run-queue delay before it) or an off-CPU sample (a state of off-CPU
 * samples, sonde_state_offcpu: SONDE_STATE_USER_LOCK or _OTHER_WAIT;
 * weight_ns is the wall time the thread was blocked, in system call
 * syscall; system_ns and wait_cpu_ns 0, cpu 0xffff).  A CPU sample's
 * syscall is SONDE_OFFCPU_NO_SYSCALL.  A CPU sample's state may be one
 * this build does not know (a newer collector's): its weight is CPU time
 * all the same. */
struct sonde_sample {
	uint32_t tid;
	uint16_t cpu; /* 0xffff: unknown */
	uint16_t state; /* enum sonde_thread_state */
	uint64_t time_ns;
	uint64_t weight_ns;
	uint64_t stack_id;
	uint64_t system_ns, wait_cpu_ns;
	uint16_t syscall;
};

/*
 * Iterator over all profile samples, on the caller's stack:
 *
 *	struct sonde_sample_iter it;
 *	struct sonde_sample s;
 *	sonde_sample_iter_init(&it, exp);
 *	while (sonde_sample_iter_next(&it, &s))
 *		...;
 *
 * Samples come in file order: block by block, so each thread's samples are
 * in time order but threads interleave by block.  Only packets that passed
 * validation at open are returned.  No allocation; fields are private.
 * Off-CPU samples come too (sonde_state_offcpu(state)), from the sampler's
 * blocks: a thread's off-CPU samples are in time order, but not merged
 * with its CPU samples.
 */
struct sonde_sample_iter {
	const struct sonde_exp *exp;
	size_t block;
	const uint8_t *p, *end;
	uint32_t tid;
};

void sonde_sample_iter_init(struct sonde_sample_iter *it, const struct sonde_exp *exp);
bool sonde_sample_iter_next(struct sonde_sample_iter *it, struct sonde_sample *s);

/* ---- traced events (sync waits, heap, I/O) -------------------------------
 *
 * Each kind's events, sorted by time (ties keep file order, so each
 * thread's own events stay in program order).  stack_id 0: no stack. */

struct sonde_sync_event {
	uint32_t tid;
	uint16_t func; /* enum sonde_sync_func */
	int32_t result;
	uint64_t time_ns, wait_ns, object, stack_id;
};

struct sonde_heap_event {
	uint32_t tid;
	uint8_t func;  /* enum sonde_heap_func */
	uint8_t flags; /* SONDE_HEAPF_* */
	uint64_t time_ns, addr, bytes, stack_id; /* frees: bytes 0, stack 0 */
};

struct sonde_io_event {
	uint32_t tid;
	uint8_t func; /* enum sonde_io_func */
	uint8_t flags;
	int32_t fd, err;
	uint64_t time_ns, dur_ns;
	int64_t bytes;
	uint64_t file_id, stack_id;
};

/* MPI tracing (lib/kinds/mpi.c): a call per traced MPI call, a message
 * per point-to-point send started or receive completed (format.h's
 * packets, checked: func is a row of sonde/mpifuncs.h or a later one, a
 * peer a rank or SONDE_MPI_NONE, _ANY, _SEVERAL, _PROC_NULL, a message's
 * dir SONDE_MPI_SEND or _RECV).  Peers are ranks of MPI_COMM_WORLD. */
struct sonde_mpi_call {
	uint32_t tid;
	uint16_t func;	/* its id: sonde_mpi_func(func), NULL past the list */
	uint16_t flags; /* SONDE_MPIF_* */
	int32_t peer, tag;
	uint64_t comm, time_ns, dur_ns, coll_bytes, stack_id;
};

/* The model's index of an MPI event (sonde_model_feed_event, the
 * exports' timelines): calls first, then messages (index - ncalls). */
struct sonde_mpi_msg {
	uint32_t tid;
	uint8_t dir;   /* SONDE_MPI_SEND, SONDE_MPI_RECV */
	uint16_t func; /* the call that started the send or completed the receive */
	int32_t peer, tag;
	uint64_t comm, time_ns, bytes, stack_id;
};

/* The job as the experiment's log.xml says (<trace kind="mpi" name=...
 * value=...>): its rank and the job's size (-1 unknown), the MPI
 * library's first line and its ABI ("openmpi", "mpich"; NULL unknown). */
struct sonde_mpi_job {
	int64_t rank, size;
	const char *library, *abi;
};

/* OpenMP (lib/kinds/omp.c): format.h's region, implicit-task and task
 * packets, checked and joined.  A region is one execution of a parallel
 * region; its threads' parts are its itasks (sorted by thread_num). */
struct sonde_omp_itask {
	uint32_t tid;	     /* the thread that ran it */
	uint32_t thread_num; /* its number in the team */
	uint64_t begin_ns, arrive_ns, end_ns;
};
struct sonde_omp_region {
	uint32_t tid; /* the thread that opened it */
	uint16_t flags, level;
	uint32_t requested, nthreads;
	uint64_t region_id, parent_id, codeptr, start_ns, end_ns, stack_id;
	const struct sonde_omp_itask *itasks; /* its threads' parts */
	uint32_t nitasks;
};
struct sonde_omp_task {
	uint32_t tid; /* the thread that ran it */
	uint32_t flags;
	uint64_t region_id, create_ns, begin_ns, end_ns, create_stack, codeptr;
};
/* Regions in start order; NULL when the experiment has none. */
const struct sonde_omp_region *sonde_exp_omp_regions(const struct sonde_exp *exp, size_t *n);
const struct sonde_omp_task *sonde_exp_omp_tasks(const struct sonde_exp *exp, size_t *n);
/* The innermost region thread tid was working in at time_ns (inside one
 * of its itasks' [begin_ns, end_ns)), and that itask; NULL when none (a
 * serial part, a worker idle between regions).  Logarithmic in the
 * thread's itasks: for every sample of the user view mode. */
const struct sonde_omp_region *sonde_exp_omp_region_at(const struct sonde_exp *exp, uint32_t tid, uint64_t time_ns,
							 const struct sonde_omp_itask **itask);

/* The counter metrics (-h; lib/kinds/counters.c) are named by the
 * experiments' log.xml: this names them from the log.xml of the experiment
 * at dir before it is opened, so that options naming them ("-metrics
 * e.page-faults") can be checked first.  Nothing when dir is none. */
void sonde_counters_from_log(const char *dir);

/* NULL when the experiment has no data of the kind. */
const struct sonde_sync_event *sonde_exp_sync_events(const struct sonde_exp *exp, size_t *n);
const struct sonde_heap_event *sonde_exp_heap_events(const struct sonde_exp *exp, size_t *n);
const struct sonde_io_event *sonde_exp_io_events(const struct sonde_exp *exp, size_t *n);
const struct sonde_mpi_call *sonde_exp_mpi_calls(const struct sonde_exp *exp, size_t *n);
const struct sonde_mpi_msg *sonde_exp_mpi_msgs(const struct sonde_exp *exp, size_t *n);
/* NULL when the experiment has neither MPI events nor MPI settings. */
const struct sonde_mpi_job *sonde_exp_mpi_job(const struct sonde_exp *exp);
/* The point-to-point messages each call moved: t[i] (as many entries as
 * calls) for call i, from the messages of its thread that name its
 * function and its start (sends) or its end (receives), as the tracer
 * writes a call's messages.  A call that moved none is an Other MPI
 * Event.  0, or -1 out of memory. */
struct sonde_mpi_traffic {
	uint32_t sends, recvs;
	uint64_t sent, received; /* bytes */
};
int sonde_exp_mpi_traffic(const struct sonde_exp *exp, struct sonde_mpi_traffic *t);
/* The call that moved each message: call[j] (as many entries as
 * messages) the index of message j's call, SIZE_MAX for none; the one
 * mapping that the metrics, agg, -mpi and the timeline's arrows share.
 * 0, or -1 out of memory. */
int sonde_exp_mpi_msg_calls(const struct sonde_exp *exp, size_t *call);
/* The name of an I/O file id, NULL when unknown. */
const char *sonde_exp_io_file(const struct sonde_exp *exp, uint64_t file_id);
/* Whether the experiment traced the kind (its data file is present or
 * declared): a traced kind of sonde/kinds.h. */
bool sonde_exp_traced(const struct sonde_exp *exp, int kind);
/* How many events of traced kind the experiment holds (heap: as counted at
 * open); 0 for a kind that is not traced. */
size_t sonde_exp_kind_events(const struct sonde_exp *exp, int kind);

/* Leak matching (lib/reader/heapleaks.c): leaked[i] (an array of as many
 * entries as heap events) is set for each allocation never freed by the
 * end of the run.  Returns the number of leaks, or -1 out of memory.
 * O(n log n) in the heap events. */
struct sonde_heap_match {
	uint64_t leaks, leaked_bytes;
	uint64_t unmatched_frees; /* frees of blocks allocated before tracing */
	uint64_t reused_live;	  /* allocations at a live address (free not seen) */
	uint64_t peak_bytes;	  /* the most live bytes at any time, 0 without any */
	uint64_t peak_ns;	  /* time of the event that first reached them */
};
long sonde_heap_leaks(const struct sonde_exp *exp, bool *leaked, struct sonde_heap_match *st);
/* The same, and left[i] (if not NULL): the bytes of allocation i still
 * allocated at the end, its leak (a mapping unmapped in part leaks what
 * is left of it; 0 for what was freed). */
long sonde_heap_leaks_left(const struct sonde_exp *exp, bool *leaked, uint64_t *left, struct sonde_heap_match *st);

/*
 * Heap events without holding them all.  sonde_exp_heap_events() decodes
 * every event into one array on its first call (about 80 bytes an event
 * while it sorts them); these read them again from the mapped file.
 *
 * sonde_heap_iter_new(): the heap events in the order of
 * sonde_exp_heap_events(), one decoded block per thread in memory (it
 * falls back to that array only for a file whose blocks are not in time
 * order, which the collector does not write).  NULL out of memory.
 * sonde_heap_iter_next() gives the next event, false at the end or when
 * decoding ran out of memory (sonde_heap_iter_failed() then says so).
 */
struct sonde_heap_iter;
struct sonde_heap_iter *sonde_heap_iter_new(const struct sonde_exp *exp);
bool sonde_heap_iter_next(struct sonde_heap_iter *it, struct sonde_heap_event *e);
bool sonde_heap_iter_failed(const struct sonde_heap_iter *it);
void sonde_heap_iter_free(struct sonde_heap_iter *it);

/* The number of heap events (as sonde_exp_heap_events() would give),
 * without decoding them. */
size_t sonde_exp_heap_count(const struct sonde_exp *exp);

/* The successful mmaps (and mremaps' new ranges) of the heap trace, in
 * the events' order: what the leak matching needs to know in advance. */
struct sonde_heap_mmap {
	uint64_t time_ns;
	uint64_t seq; /* the event's place in file order */
	uint64_t addr, bytes;
};
const struct sonde_heap_mmap *sonde_exp_heap_mmaps(const struct sonde_exp *exp, size_t *n);

/*
 * The heap totals of sonde print -header and -heapstat in one streaming
 * pass (lib/reader/heapleaks.c): memory grows with the live blocks, the distinct
 * addresses and the mappings, not with the events.  Returns 0, or -1 out
 * of memory.
 */
#define SONDE_HEAP_NBUCKETS 65 /* 0, then [2^k, 2^(k+1)) for k = 0..63 */
struct sonde_heap_stats {
	uint64_t events;
	/* as -header counts: every event with SONDE_HEAPF_ALLOC, else FREE */
	uint64_t any_allocs, any_alloc_bytes, any_frees;
	/* as -heapstat counts: failed ones apart */
	uint64_t allocs, bytes, frees, failed, largest, smallest; /* smallest: UINT64_MAX without */
	uint64_t hcount[SONDE_HEAP_NBUCKETS], hbytes[SONDE_HEAP_NBUCKETS];
	uint64_t temporary; /* as sonde_heap_temporary() counts them */
	struct sonde_heap_match m;
};
int sonde_heap_stats(const struct sonde_exp *exp, struct sonde_heap_stats *st);

/*
 * heaptrack's views (lib/reader/heapleaks.c).
 *
 * sonde_heap_walk(): the leak matching's walk, streamed as
 * sonde_heap_stats(): each(arg, e, live) after every event, in the order
 * matched (by time; a run of equal times may be reordered), with the live
 * bytes after it.  st (NULL: not wanted) gets the matching's totals.
 *
 * sonde_heap_peak_left(): left[i] (as many entries as heap events) the
 * bytes of allocation i live at the peak, the first event at which the
 * live bytes reached their largest (st->peak_bytes, peak_ns): heaptrack's
 * "peak" of a stack is its part of that one moment.
 *
 * sonde_heap_temporary(): temp[i] set for each allocation freed by its
 * thread's next heap event (no allocation or free of the thread in
 * between), heaptrack's temporary allocation; returns their number.
 *
 * Each returns -1 out of memory.
 */
int sonde_heap_walk(const struct sonde_exp *exp,
		    void (*each)(void *arg, const struct sonde_heap_event *e, uint64_t live), void *arg,
		    struct sonde_heap_match *st);
int sonde_heap_peak_left(const struct sonde_exp *exp, uint64_t *left, struct sonde_heap_match *st);
long sonde_heap_temporary(const struct sonde_exp *exp, bool *temp);

/* Names of the traced functions ("pthread_mutex_lock", "malloc", "read"),
 * "?" for unknown values. */
const char *sonde_sync_func_name(unsigned func);
const char *sonde_heap_func_name(unsigned func);
const char *sonde_io_func_name(unsigned func);
/* An MPI function's name ("MPI_Send"; "?" for an id past the list this
 * reader knows, written by a later sonde), and a peer's: the rank's
 * number in buf, or "none", "any", "several", "proc-null". */
const char *sonde_mpi_func_name(unsigned func);
const char *sonde_mpi_peer_name(int32_t peer, char buf[16]);

/* The x86-64 system call nr an off-CPU sample blocked in ("futex"; "none"
 * for SONDE_OFFCPU_NO_SYSCALL, a page-in), NULL for the calls the short
 * table does not name (lib/reader/syscalls.c).  (A thread state's names
 * are its row's, sonde/states.h.) */
const char *sonde_syscall_name(unsigned nr);

/* ---- overview ---------------------------------------------------------- */

/* All overview packets (sample points) in time order (ties: file order).
 * Fields beyond this reader's layout are dropped; fields an older writer
 * did not write read 0. */
const struct sonde_overview_packet *sonde_exp_overview(const struct sonde_exp *exp, size_t *n);
/* The label of overview packet i (sonde_sample's argument), NULL without. */
const char *sonde_exp_overview_label(const struct sonde_exp *exp, size_t i);

/* ---- samples: the intervals between sample points ------------------------
 *
 * With sample points P0..Pn (the overview packets in time order), sample k
 * (1..n) is the time (P[k-1], P[k]]; sample 1 also holds everything before
 * P0 and sample n everything after Pn.  An experiment with fewer than two
 * points has no samples. */
size_t sonde_exp_nsamples(const struct sonde_exp *exp);
/* The sample (1..n) that time_ns falls in; 0 when there are no samples. */
size_t sonde_exp_sample_of(const struct sonde_exp *exp, uint64_t time_ns);

/* A set of samples chosen by an er_print list ("all", "3", "1,4-6"):
 * build with sonde_sample_sel_new (NULL spec or "all": NULL, i.e.
 * everything), test times with sonde_sample_sel_has, free with
 * sonde_sample_sel_free.  Returns -1 with a message on a malformed list
 * or out of memory. */
struct sonde_sample_sel;
int sonde_sample_sel_new(struct sonde_sample_sel **out, const struct sonde_exp *exp, const char *spec,
			 char *err, size_t errlen);
bool sonde_sample_sel_has(const struct sonde_sample_sel *sel, uint64_t time_ns);
void sonde_sample_sel_free(struct sonde_sample_sel *sel);
/* Checks a list's syntax without an experiment. */
int sonde_sample_list_check(const char *spec, char *err, size_t errlen);

#endif
