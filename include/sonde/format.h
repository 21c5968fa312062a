/*
 * sonde experiment format: the contract between the collector (which writes
 * experiments inside the target process) and every reader.
 *
 * An experiment is a directory.  Besides the XML files (log.xml, map.xml)
 * and notes, each data kind has one binary data file shared by all threads:
 *
 *   file header   SONDE_FILE_HEADER_SIZE bytes (struct sonde_file_header,
 *                 zero-padded)
 *   block 0       SONDE_BLOCK_SIZE bytes
 *   block 1       ...
 *
 * A block belongs to one thread (tid in its header) and holds packets back to
 * back.  The writer fills a packet first and only then publishes it by
 * storing the new `used` count with release semantics, so a reader (of a
 * running experiment, or of one whose target was SIGKILLed) sees only whole
 * packets.  A block whose magic is zero was claimed but never written (or
 * lies past the end of the data); readers skip it.
 *
 * Every packet starts with struct sonde_packet (type, size).  Readers skip
 * types they do not know by `size`; log.xml describes each packet layout
 * (<dataformat>), so a reader can also decode a type it was not built for.
 *
 * All fields are little-endian and fixed-width; there are no bitfields.
 * Layouts never change within one SONDE_FORMAT_VERSION: a change that moves
 * a field bumps the version; new packet types and new fields at the end of a
 * packet (with a larger size) do not.  doc/experiment-format.md describes
 * the same layouts and is changed in the same commit as this file.
 */
#ifndef SONDE_FORMAT_H
#define SONDE_FORMAT_H

#include <stdint.h>

#include <sonde/kinds.h>
#include <sonde/states.h>

#define SONDE_FORMAT_VERSION 1
#define SONDE_FORMAT_MIN_READABLE 1

#define SONDE_DATA_MAGIC "SONDEDAT" /* 8 bytes, no terminator on disk */
#define SONDE_FILE_HEADER_SIZE 4096u
#define SONDE_BLOCK_SIZE 16384u
#define SONDE_BLOCK_MAGIC 0x4b4c4253u /* "SBLK" little-endian */

/* Data kinds, one file each: the rows of sonde/kinds.h (ids and files
 * there): 1 "profile" clock-profile samples, 2 "stacks" deduplicated call
 * stacks, 3 "overview" process usage samples, 4 "synctrace"
 * synchronization waits, 5 "heaptrace" allocations and frees, 6 "iotrace"
 * I/O calls and file names, 7 "counters" counter overflow samples. */
enum sonde_kind {
#define SONDE_KIND_ENUM_(NAME, id, ...) SONDE_KIND_##NAME = (id),
	SONDE_KINDS(SONDE_KIND_ENUM_)
#undef SONDE_KIND_ENUM_
};
_Static_assert(SONDE_KIND_PROFILE == 1 && SONDE_KIND_STACKS == 2 && SONDE_KIND_OVERVIEW == 3 &&
		       SONDE_KIND_SYNC == 4 && SONDE_KIND_HEAP == 5 && SONDE_KIND_IO == 6 &&
		       SONDE_KIND_COUNTERS == 7,
	       "kind ids are on disk: never change one");

struct sonde_file_header {
	char magic[8];		/* SONDE_DATA_MAGIC */
	uint32_t version;	/* SONDE_FORMAT_VERSION of the writer */
	uint32_t kind;		/* enum sonde_kind */
	uint32_t header_size;	/* SONDE_FILE_HEADER_SIZE */
	uint32_t block_size;	/* SONDE_BLOCK_SIZE */
	uint32_t pid;		/* process that wrote the file */
	uint32_t reserved0;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at collector start */
	char kind_name[16];	/* "profile", NUL-padded */
	uint64_t reserved;
};
_Static_assert(sizeof(struct sonde_file_header) == 64, "file header layout");

struct sonde_block_header {
	uint32_t magic;		/* SONDE_BLOCK_MAGIC, 0 when unused */
	uint32_t kind;		/* same as the file's kind */
	uint32_t tid;		/* thread that owns the block */
	uint32_t used;		/* bytes of whole packets after this header */
	uint64_t first_ns;	/* CLOCK_MONOTONIC when the block was claimed */
	uint64_t reserved;
};
_Static_assert(sizeof(struct sonde_block_header) == 32, "block header layout");

#define SONDE_BLOCK_PAYLOAD (SONDE_BLOCK_SIZE - sizeof(struct sonde_block_header))

/* Common prefix of every packet.  size includes this prefix, is a multiple
 * of 8 and at least 8. */
struct sonde_packet {
	uint16_t type;
	uint16_t size;
};
_Static_assert(sizeof(struct sonde_packet) == 4, "packet prefix layout");

enum sonde_packet_type {
	SONDE_PKT_PROFILE = 1,
	SONDE_PKT_STACK = 2,
	SONDE_PKT_OVERVIEW = 3,
	SONDE_PKT_FRAME = 4,
	SONDE_PKT_SYNC = 5,
	SONDE_PKT_HEAP = 6,
	SONDE_PKT_HEAP_FREE = 7,
	SONDE_PKT_IO = 8,
	SONDE_PKT_IO_FILE = 9,
	SONDE_PKT_HEAP_SHORT = 10,
	SONDE_PKT_HEAP_FREE_SHORT = 11,
	SONDE_PKT_HEAP_STREAM = 12,
	SONDE_PKT_COUNTER = 13,
	SONDE_PKT_OFFCPU = 14,
	SONDE_PKT_MPI_CALL = 15,
	SONDE_PKT_MPI_MSG = 16,
	SONDE_PKT_OMP_REGION = 17,
	SONDE_PKT_OMP_ITASK = 18,
	SONDE_PKT_OMP_TASK = 19,
};

/* Thread states: the rows of sonde/states.h (ids and meaning there):
 * 0 CPU, on CPU (user and system: system_ns); 1 USER_LOCK, blocked
 * waiting for a lock (a futex wait: pthread mutex, condition, rwlock,
 * barrier, join, semaphore); 2 OTHER_WAIT, blocked any other way (sleep,
 * I/O, poll, a page-in outside a system call).  A profile packet's state
 * is one of CPU samples (SONDE_STATEF_CPU: CPU, or what a state provider
 * of the sampling handler said), an off-CPU packet's one of off-CPU
 * samples. */
enum sonde_thread_state {
#define SONDE_STATE_ENUM_(NAME, id, ...) SONDE_STATE_##NAME = (id),
	SONDE_STATES(SONDE_STATE_ENUM_)
#undef SONDE_STATE_ENUM_
};
_Static_assert(SONDE_STATE_CPU == 0 && SONDE_STATE_USER_LOCK == 1 && SONDE_STATE_OTHER_WAIT == 2,
	       "state ids are on disk: never change one");

/* One clock-profile sample.  The thread is the block's owner.
 *
 * A packet of 48 bytes splits its CPU time and carries the thread's
 * run-queue delay (microstates); one of 32 bytes (SONDE_PROFILE_V1_SIZE,
 * experiments recorded before them) has neither: readers take its whole
 * weight as User CPU, as the original analyzer does on Linux. */
struct sonde_profile_packet {
	uint16_t type;		/* SONDE_PKT_PROFILE */
	uint16_t size;		/* 48 (32: no microstates) */
	uint16_t cpu;		/* CPU the sample was taken on, 0xffff unknown */
	uint16_t state;		/* a state of CPU samples (sonde/states.h):
				   SONDE_STATE_CPU unless a state provider
				   said otherwise */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t weight_ns;	/* CPU time this sample stands for */
	uint64_t stack_id;	/* key of a sonde_stack_packet in "stacks" */
	/* Since microstates: */
	uint64_t system_ns;	/* the part of weight_ns counted as System CPU:
				   all of it for a sample taken in a system
				   call, the thread's rusage system time since
				   its previous sample (at most weight_ns) for
				   one that followed page faults, else 0 */
	uint64_t wait_cpu_ns;	/* the thread's run-queue delay (runnable, not
				   running) since its previous sample, from
				   the kernel's schedstat */
};
_Static_assert(sizeof(struct sonde_profile_packet) == 48, "profile packet layout");
#define SONDE_PROFILE_V1_SIZE 32u

/* Off-CPU time (sonde collect -w): a blocked thread found by the
 * collector's sampler thread, which looks at every thread once per
 * interval without interrupting it (/proc/self/task/TID/syscall, and its
 * stack unwound from the registers there).  In the "profile" file, in
 * the sampler's blocks: the blocked thread is `tid`, not the block's
 * owner. */
struct sonde_offcpu_packet {
	uint16_t type;		/* SONDE_PKT_OFFCPU */
	uint16_t size;		/* 40 */
	uint16_t state;		/* a state of off-CPU samples (sonde/states.h):
				   SONDE_STATE_USER_LOCK or _OTHER_WAIT */
	uint16_t syscall;	/* the system call it is blocked in (x86-64
				   number), 0xffff none (a page-in) */
	uint32_t tid;		/* the blocked thread */
	uint32_t reserved;	/* 0 */
	uint64_t time_ns;	/* CLOCK_MONOTONIC, when it was seen */
	uint64_t weight_ns;	/* the wall time this sample stands for: the
				   sampler's interval since it last looked */
	uint64_t stack_id;	/* where it blocked (the leaf is the pc after
				   the system call, SONDE_PC_EXACT) */
};
_Static_assert(sizeof(struct sonde_offcpu_packet) == 40, "off-CPU packet layout");
#define SONDE_OFFCPU_NO_SYSCALL 0xffffu

/* Stack flags. */
#define SONDE_STACK_TRUNCATED 0x1u  /* cut at the depth limit */
#define SONDE_STACK_INCOMPLETE 0x2u /* unwinding failed before the root */

/* Set on a frame's pc when the address is the exact interrupted
 * instruction (the leaf, or a frame interrupted by a signal), so a reader
 * must not step back into the call instruction.  Other frames hold return
 * addresses. */
#define SONDE_PC_EXACT (1ull << 63)

/* A call stack, leaf first.  stack_id is a 64-bit hash of the frames and
 * flags; the same stack may be written more than once (readers keep one). */
struct sonde_stack_packet {
	uint16_t type;		/* SONDE_PKT_STACK */
	uint16_t size;		/* 16 + 8 * depth */
	uint16_t depth;		/* number of pc[] entries */
	uint16_t flags;		/* SONDE_STACK_* */
	uint64_t stack_id;
	/* uint64_t pc[depth]; */
};
_Static_assert(sizeof(struct sonde_stack_packet) == 16, "stack packet layout");

#define SONDE_MAX_DEPTH_LIMIT 2040 /* packet size must fit 16 bits */
/* The collector's default depth limit (-D).  gprofng's 256 cuts real
 * recursive programs (a 500-deep recursion lost main in its samples); a
 * stack costs the handler only the frames it has, while the limit sizes
 * the handler's buffers on the interrupted thread's stack (8 bytes a
 * frame, twice: 16 KiB at 1024). */
#define SONDE_DEFAULT_DEPTH 1024

/* One node of the call tree, the form in which the collector writes
 * stacks: a frame and the node of its caller.  A stack is named by its leaf
 * node (the stack_id of a profile packet); following parent links to the
 * outermost recorded frame gives the frames leaf first.  A stack that
 * shares its callers with one already written costs one node per new frame,
 * not a copy of the whole stack.
 *
 * node_id is a 64-bit hash of (parent_id, pc) and is never below
 * SONDE_FRAME_ROOT_LIMIT; a parent_id below it marks the outermost recorded
 * frame and holds that stack's flags (0: the walk reached the thread's
 * first frame; SONDE_STACK_TRUNCATED; SONDE_STACK_INCOMPLETE).  The same
 * node may be written more than once (readers keep one). */
#define SONDE_FRAME_ROOT_LIMIT 16u

/* What a frame is.  Experiments written before frames had kinds hold 0 in
 * the frame packet's kind byte (it was reserved, always 0): native. */
enum sonde_frame_kind {
	/* A code address in the process: pc, with SONDE_PC_EXACT on the exact
	 * interrupted instruction, else a return address. */
	SONDE_FRAME_NATIVE = 0,
	/* A kernel code address, all 64 bits of it (bit 63 is the address's,
	 * not SONDE_PC_EXACT): the exact one has SONDE_FRAMEF_EXACT. */
	SONDE_FRAME_KERNEL = 1,
	/* A Java method as the interpreter runs it, and as compiled code
	 * (its own or a method's it was inlined into): pc is the method's id
	 * (the experiment's method table), aux the bytecode index
	 * (SONDE_FRAME_NO_BCI when unknown).  Experiments written before
	 * SONDE_FRAME_JAVA hold JAVA_INTERP for every Java frame. */
	SONDE_FRAME_JAVA_INTERP = 2,
	SONDE_FRAME_JAVA_COMPILED = 3,
	/* A process of a system-wide experiment (sonde kernel): pc its pid
	 * (0: the idle task), the root of its samples' stacks; named by the
	 * experiment's processes file. */
	SONDE_FRAME_PROCESS = 4,
	/* Time whose place no sample shows, or the collector's own (enum
	 * sonde_pseudo in pc): a thread's start before sampling began, the
	 * rest of the function that ran it after its last sample, the
	 * process's and the thread's end, the collector.  A pseudo frame is
	 * a stack's root, or the leaf under the function it ran in. */
	SONDE_FRAME_PSEUDO = 5,
	/* A Java method (pc and aux as above) whose way of running the
	 * sample does not say: AsyncGetCallTrace tells no kinds, and the
	 * collector tells only the top frame's, by its code address. */
	SONDE_FRAME_JAVA = 6,
	/* A Java method compiled into the one of the frame below it (the
	 * JIT inlined it there), and one compiled by C1 (HotSpot's tiers 1
	 * to 3; SONDE_FRAME_JAVA_COMPILED is then C2's, or a compiler's the
	 * collector did not find). */
	SONDE_FRAME_JAVA_INLINED = 7,
	SONDE_FRAME_JAVA_COMPILED_C1 = 8,
	/* A native address in a compiled Java method's code (the JVM's code
	 * cache) that the Java walk did not turn into Java frames: pc the
	 * address (SONDE_FRAMEF_EXACT, not SONDE_PC_EXACT, on the
	 * interrupted one), aux the low 16 bits of the method's compile id
	 * (HotSpot's), which tells the code that held pc at the sample from
	 * the others that held it over the run (jvm.code and jvm.inline
	 * give each code's); with SONDE_FRAMEF_OWN, the interrupted
	 * instruction is in the method's own prologue or epilogue, where no
	 * method inlined into it runs.  Readers replace it by the Java frames
	 * of that code's scopes, or read it as a native frame. */
	SONDE_FRAME_JAVA_CODE = 9,
	/* Room for more (Python, JIT-described code): readers show a kind
	 * they do not know as "<kind N>@pc" rather than fail. */
	SONDE_FRAME_KIND_MAX = 255,
};
/* The pc of a SONDE_FRAME_PSEUDO frame (doc/sonde-collect.md says what
 * each holds). */
enum sonde_pseudo {
	SONDE_PSEUDO_PROCESS_START = 1, /* "<Process start>": exec, loader, constructors before sampling */
	SONDE_PSEUDO_THREAD_START = 2,	/* "<Thread start>": a thread's start before its routine */
	SONDE_PSEUDO_AFTER_LAST = 3,	/* "<After last sample>": under the routine that ran it */
	SONDE_PSEUDO_PROCESS_END = 4,	/* "<Process end>": the exit path after main */
	SONDE_PSEUDO_THREAD_END = 5,	/* "<Thread end>": a thread's end after its routine */
	SONDE_PSEUDO_COLLECTOR = 6,	/* "<Collector>": the collector's start, handler and end */
	SONDE_PSEUDO_MAX = 6,
};
#define SONDE_FRAMEF_EXACT 0x1u /* a non-native frame's exact interrupted pc */
#define SONDE_FRAMEF_OWN 0x2u	/* SONDE_FRAME_JAVA_CODE: in its method's prologue or epilogue */
/* A Java frame a reader made from the compiled code's scopes (jvm.inline)
 * where the walk gave none, as `sonde merge` writes it */
#define SONDE_FRAMEF_SCOPED 0x4u
#define SONDE_FRAME_NO_BCI 0xffffu

struct sonde_frame_packet {
	uint16_t type;		/* SONDE_PKT_FRAME */
	uint16_t size;		/* 32 */
	uint8_t kind;		/* enum sonde_frame_kind (0 in older experiments) */
	uint8_t fflags;		/* SONDE_FRAMEF_*; 0 for native frames */
	uint16_t aux;		/* a Java frame's bytecode index; 0 otherwise */
	uint64_t node_id;	/* hash of (parent_id, pc), and kind, fflags and
				   aux when the kind is not native */
	uint64_t parent_id;	/* caller's node, or stack flags at the root */
	uint64_t pc;		/* native: may carry SONDE_PC_EXACT */
};
_Static_assert(sizeof(struct sonde_frame_packet) == 32, "frame packet layout");

/* Why a sample point was recorded.  The sample points cut the run into
 * samples: sample k (from 1) is the time from point k-1 to point k, and
 * carries point k's reason and label. */
enum sonde_overview_reason {
	SONDE_OV_START = 0,
	SONDE_OV_END = 1,
	SONDE_OV_PERIODIC = 2,	/* -S period */
	SONDE_OV_SIGNAL = 3,	/* -l signal */
	SONDE_OV_PAUSE = 4,	/* recording paused (-y, sonde_pause, -t END) */
	SONDE_OV_RESUME = 5,	/* recording resumed (-y, sonde_resume, -t start) */
	SONDE_OV_API = 6,	/* sonde_sample(label) */
	SONDE_OV_NREASONS
};

/* Process usage counters (getrusage RUSAGE_SELF) at one moment.  Writers
 * before the sampling work wrote the first 88 bytes only (size 88);
 * readers zero the fields a packet is too short for. */
#define SONDE_OVERVIEW_V1_SIZE 88u
#define SONDE_LABEL_MAX 255u
struct sonde_overview_packet {
	uint16_t type;		/* SONDE_PKT_OVERVIEW */
	uint16_t size;		/* 104 + label, rounded up to 8 (88: old) */
	uint32_t reason;	/* enum sonde_overview_reason */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t utime_ns;
	uint64_t stime_ns;
	uint64_t minflt;
	uint64_t majflt;
	uint64_t inblock;
	uint64_t oublock;
	uint64_t nvcsw;
	uint64_t nivcsw;
	uint64_t maxrss_kb;
	uint64_t rss_kb;	/* resident now (/proc/self/statm), 0 unknown */
	uint32_t label_len;	/* bytes of label, without the NUL; 0 none */
	uint32_t reserved;
	/* char label[label_len + 1]; NUL-terminated, zero-padded to 8 */
};
_Static_assert(sizeof(struct sonde_overview_packet) == 104, "overview packet layout");

/* ---- tracing (sync waits, heap, I/O) ----
 *
 * Trace packets are written in normal context by the interposers, into
 * blocks of the calling thread like every packet.  stack_id names a stack
 * in "stacks" whose leaf is the call site of the traced function (a return
 * address, never SONDE_PC_EXACT); 0 means no stack was recorded.  Times are
 * CLOCK_MONOTONIC. */

/* The traced synchronization functions (func of a sync packet). */
enum sonde_sync_func {
	SONDE_SYNC_MUTEX_LOCK = 1,
	SONDE_SYNC_MUTEX_TIMEDLOCK = 2,
	SONDE_SYNC_MUTEX_CLOCKLOCK = 3,
	SONDE_SYNC_COND_WAIT = 4,
	SONDE_SYNC_COND_TIMEDWAIT = 5,
	SONDE_SYNC_COND_CLOCKWAIT = 6,
	SONDE_SYNC_RWLOCK_RDLOCK = 7,
	SONDE_SYNC_RWLOCK_TIMEDRDLOCK = 8,
	SONDE_SYNC_RWLOCK_CLOCKRDLOCK = 9,
	SONDE_SYNC_RWLOCK_WRLOCK = 10,
	SONDE_SYNC_RWLOCK_TIMEDWRLOCK = 11,
	SONDE_SYNC_RWLOCK_CLOCKWRLOCK = 12,
	SONDE_SYNC_SEM_WAIT = 13,
	SONDE_SYNC_SEM_TIMEDWAIT = 14,
	SONDE_SYNC_SEM_CLOCKWAIT = 15,
	SONDE_SYNC_BARRIER_WAIT = 16,
	SONDE_SYNC_JOIN = 17,
	SONDE_SYNC_TIMEDJOIN = 18,
	SONDE_SYNC_CLOCKJOIN = 19,
	SONDE_SYNC_NFUNCS
};

/* One synchronization call that waited at least the threshold (log.xml
 * <settings sync_threshold_ns>).  object is the mutex, condition variable,
 * rwlock, semaphore or barrier, or the joined thread's pthread_t. */
struct sonde_sync_packet {
	uint16_t type;		/* SONDE_PKT_SYNC */
	uint16_t size;		/* 48 */
	uint16_t func;		/* enum sonde_sync_func */
	uint16_t reserved;
	int32_t result;		/* the call's return value (0, ETIMEDOUT, ...;
				   for sem_*: errno when it returned -1) */
	uint32_t reserved2;
	uint64_t time_ns;	/* when the call started */
	uint64_t wait_ns;	/* how long it took */
	uint64_t object;
	uint64_t stack_id;
};
_Static_assert(sizeof(struct sonde_sync_packet) == 48, "sync packet layout");

/* The traced heap functions (func of a heap packet). */
enum sonde_heap_func {
	SONDE_HEAP_MALLOC = 1,
	SONDE_HEAP_CALLOC = 2,
	SONDE_HEAP_REALLOC = 3,
	SONDE_HEAP_REALLOCARRAY = 4,
	SONDE_HEAP_VALLOC = 5,
	SONDE_HEAP_PVALLOC = 6,
	SONDE_HEAP_MEMALIGN = 7,
	SONDE_HEAP_POSIX_MEMALIGN = 8,
	SONDE_HEAP_ALIGNED_ALLOC = 9,
	SONDE_HEAP_FREE = 10,
	SONDE_HEAP_MMAP = 11,
	SONDE_HEAP_MUNMAP = 12,
	SONDE_HEAP_MREMAP = 13, /* a free of the old range, an allocation of the new */
	SONDE_HEAP_NFUNCS
};

/* Heap packet flags. */
#define SONDE_HEAPF_ALLOC 0x1u	/* [addr, addr+bytes) is a new block */
#define SONDE_HEAPF_FREE 0x2u	/* addr (and for munmap, bytes) is released */
#define SONDE_HEAPF_FAILED 0x4u /* the allocation failed (addr 0) */

/* An allocation (malloc ... mmap), or an munmap of bytes at addr.  A
 * realloc that moves or frees writes a free packet for the old block
 * first; realloc(p, 0) that frees p writes only that. */
struct sonde_heap_packet {
	uint16_t type;		/* SONDE_PKT_HEAP */
	uint16_t size;		/* 40 */
	uint8_t func;		/* enum sonde_heap_func */
	uint8_t flags;		/* SONDE_HEAPF_* */
	uint16_t reserved;
	uint64_t time_ns;	/* when the call returned */
	uint64_t addr;
	uint64_t bytes;		/* bytes requested (mmap, munmap: the length) */
	uint64_t stack_id;
};
_Static_assert(sizeof(struct sonde_heap_packet) == 40, "heap packet layout");

/* A free of a heap block (free, or realloc releasing its old block):
 * no stack, no size; the reader matches it to the allocation at addr. */
struct sonde_heap_free_packet {
	uint16_t type;		/* SONDE_PKT_HEAP_FREE */
	uint16_t size;		/* 24 */
	uint8_t func;		/* SONDE_HEAP_FREE or SONDE_HEAP_REALLOC */
	uint8_t flags;		/* SONDE_HEAPF_FREE */
	uint16_t reserved;
	uint64_t time_ns;	/* when the call started */
	uint64_t addr;
};
_Static_assert(sizeof(struct sonde_heap_free_packet) == 24, "heap free packet layout");

/* Compact forms of the two heap packets, for allocation-heavy programs
 * (48 instead of 64 bytes a malloc/free pair): the time is a signed
 * offset in ns from the block header's first_ns, and the size 32 bits.
 * A writer uses the long form when a value does not fit.  A short free
 * is always a free() (func SONDE_HEAP_FREE). */
struct sonde_heap_short_packet {
	uint16_t type;		/* SONDE_PKT_HEAP_SHORT */
	uint16_t size;		/* 32 */
	uint8_t func;
	uint8_t flags;
	uint16_t reserved;
	int32_t dt_ns;		/* time_ns - block first_ns */
	uint32_t bytes;
	uint64_t addr;
	uint64_t stack_id;
};
_Static_assert(sizeof(struct sonde_heap_short_packet) == 32, "short heap packet layout");

struct sonde_heap_free_short_packet {
	uint16_t type;		/* SONDE_PKT_HEAP_FREE_SHORT */
	uint16_t size;		/* 16 */
	int32_t dt_ns;		/* time_ns - block first_ns */
	uint64_t addr;
};
_Static_assert(sizeof(struct sonde_heap_free_short_packet) == 16, "short heap free packet layout");

/* A run of heap events of one thread, byte-packed (about 12 instead of 48
 * bytes a malloc/free pair, so that an allocation-heavy program writes a
 * quarter of the data).  The writer appends records to the packet and
 * raises nbytes and size after each; a packet ends at its block's end, or
 * where the thread writes a packet of another type.
 * Records are byte-aligned; u: unsigned LEB128, z: zigzag-coded signed
 * LEB128 (0, -1, 1, -2 ... as 0, 1, 2, 3 ...).  A record starts with a tag
 * byte, tag >> 6 its kind:
 *   0 alloc      slot = tag & 63; u dt, u bytes, z daddr
 *   1 free       func = tag & 63; u dt, z daddr
 *   2 def+alloc  slot = tag & 63; u8 func, u64 stack_id; u dt, u bytes,
 *                z daddr (defines the slot, then is an alloc through it)
 *   3 (reserved: a reader stops at it, as at a corrupt packet)
 * A slot (64 per packet, none defined at its start) holds a stack id and
 * an allocating function.  time = previous record's time + dt (the first
 * record's: base_ns + dt); addr = previous record's addr + daddr (the
 * first record's: 0 + daddr).  An alloc whose addr is 0 failed
 * (SONDE_HEAPF_FAILED), any other is SONDE_HEAPF_ALLOC; a free is
 * SONDE_HEAPF_FREE.  Times within a packet never decrease.  A packet whose
 * size runs past its block's used size was being extended when the
 * process died: its complete records up to the used size count. */
struct sonde_heap_stream_packet {
	uint16_t type;		/* SONDE_PKT_HEAP_STREAM */
	uint16_t size;		/* 16 + nbytes, rounded up to a multiple of 8 */
	uint16_t nbytes;	/* bytes of records after this header */
	uint16_t reserved;
	uint64_t base_ns;	/* CLOCK_MONOTONIC base of the first record's time */
};
_Static_assert(sizeof(struct sonde_heap_stream_packet) == 16, "heap stream packet layout");
#define SONDE_HEAP_STREAM_SLOTS 64

/* The traced I/O functions (func of an I/O packet). */
enum sonde_io_func {
	SONDE_IO_READ = 1,
	SONDE_IO_PREAD = 2,
	SONDE_IO_READV = 3,
	SONDE_IO_PREADV = 4,
	SONDE_IO_FREAD = 5,
	SONDE_IO_FGETS = 6,	/* fgets, fgets_unlocked, __fgets_chk ... */
	SONDE_IO_GETC = 7,	/* fgetc, getc, getchar, their _unlocked */
	SONDE_IO_GETLINE = 8,	/* getline, getdelim, __getdelim */
	SONDE_IO_WRITE = 16,
	SONDE_IO_PWRITE = 17,
	SONDE_IO_WRITEV = 18,
	SONDE_IO_PWRITEV = 19,
	SONDE_IO_FWRITE = 20,
	SONDE_IO_PRINTF = 21,	/* printf, vprintf, __printf_chk, __vprintf_chk */
	SONDE_IO_FPRINTF = 22,	/* fprintf, vfprintf, __fprintf_chk, __vfprintf_chk */
	SONDE_IO_DPRINTF = 23,	/* dprintf, vdprintf, __dprintf_chk, __vdprintf_chk */
	SONDE_IO_PUTS = 24,
	SONDE_IO_FPUTS = 25,	/* fputs, fputs_unlocked */
	SONDE_IO_PUTC = 26,	/* fputc, putc, putchar, their _unlocked */
	SONDE_IO_OPEN = 32,
	SONDE_IO_OPENAT = 33,
	SONDE_IO_CREAT = 34,
	SONDE_IO_CLOSE = 35,
	SONDE_IO_DUP = 36,
	SONDE_IO_DUP2 = 37,
	SONDE_IO_DUP3 = 38,
	SONDE_IO_LSEEK = 39,
	SONDE_IO_FSYNC = 40,
	SONDE_IO_FDATASYNC = 41,
	SONDE_IO_FOPEN = 42,
	SONDE_IO_FDOPEN = 43,
	SONDE_IO_FCLOSE = 44,
	SONDE_IO_FFLUSH = 45,
	SONDE_IO_NFUNCS
};
/* Reads are 1..15, writes 16..31, everything else is "other I/O". */
#define SONDE_IO_IS_READ(f) ((f) >= 1 && (f) < 16)
#define SONDE_IO_IS_WRITE(f) ((f) >= 16 && (f) < 32)

#define SONDE_IOF_ERROR 0x1u /* the call failed (err holds errno) */

/* One I/O call.  file_id names the file through an I/O file packet (0:
 * unknown); fd is the descriptor used, or the one returned by an open or
 * dup.  bytes is what was transferred by reads and writes (for fread and
 * fwrite: items times size; for the printf family its result; for puts
 * the string and its newline, fputs and fgets the string), else 0.  A
 * stdio call is traced at the call, its buffer's flush is not. */
struct sonde_io_packet {
	uint16_t type;		/* SONDE_PKT_IO */
	uint16_t size;		/* 56 */
	uint8_t func;		/* enum sonde_io_func */
	uint8_t flags;		/* SONDE_IOF_* */
	uint16_t reserved;
	int32_t fd;
	int32_t err;		/* errno of a failed call, else 0 */
	uint64_t time_ns;	/* when the call started */
	uint64_t dur_ns;	/* how long it took */
	int64_t bytes;
	uint64_t file_id;
	uint64_t stack_id;
};
_Static_assert(sizeof(struct sonde_io_packet) == 56, "io packet layout");

/* The name of a file, written once per file_id before the first I/O
 * packet that uses it: the path given to open (as given), or for a
 * descriptor the collector did not see opened, what /proc/self/fd says
 * ("pipe:[1234]", "/dev/pts/0"). */
struct sonde_io_file_packet {
	uint16_t type;		/* SONDE_PKT_IO_FILE */
	uint16_t size;		/* 24 + name length + 1, rounded up to 8 */
	uint32_t name_len;	/* bytes of name, without the NUL */
	uint64_t file_id;	/* never 0 */
	uint64_t time_ns;
	/* char name[name_len + 1]; NUL-terminated, zero-padded */
};
_Static_assert(sizeof(struct sonde_io_file_packet) == 24, "io file packet layout");

/* ---- counter overflow profiling (-h) ----
 *
 * Written by the collector's signal handler (like a profile packet) when
 * one of the thread's counters overflows.  The counters of the run are
 * described in log.xml, one <trace kind="counters" index="I" name="..."
 * title="..." unit="..." type="T" config="C" interval="N"/> each, in
 * index order (at most SONDE_MAX_COUNTERS). */
#define SONDE_MAX_COUNTERS 4

struct sonde_counter_packet {
	uint16_t type;		/* SONDE_PKT_COUNTER */
	uint16_t size;		/* 32 */
	uint16_t counter;	/* index of the counter in log.xml */
	uint16_t cpu;		/* CPU the sample was taken on, 0xffff unknown */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t weight;	/* events of this counter on this thread since
				   its previous sample of it (since the
				   counter was opened, for the first); the
				   collector's own events are not counted */
	uint64_t stack_id;	/* its call stack, the leaf the interrupted
				   instruction (SONDE_PC_EXACT) */
};
_Static_assert(sizeof(struct sonde_counter_packet) == 32, "counter packet layout");

/* ---- MPI tracing (-m, on with -M) ----
 *
 * Written by the MPI tracing library (tracers/mpi/, libsonde_mpi.so) in
 * each rank's experiment (M_r<rank>.er): a call packet per traced MPI
 * call, and a message packet per point-to-point message a call started
 * sending or completed receiving (an MPI_Waitall that completes three
 * receives writes three, each naming its source).  The rank and the job
 * are in log.xml: <trace kind="mpi" name="rank" value="R"/>, "size",
 * "library" (MPI_Get_library_version's first line), "abi" (openmpi,
 * mpich).  Functions are named by their id: the line of
 * tracers/mpi/functions.list (append only), with the class that says what
 * the call means for the metrics (table 2-4 of the reference). */

/* A rank of MPI_COMM_WORLD, or: */
#define SONDE_MPI_NONE (-1)	/* no peer (a collective without a root, ...) */
#define SONDE_MPI_ANY (-2)	/* MPI_ANY_SOURCE, not (yet) resolved */
#define SONDE_MPI_SEVERAL (-3)	/* a call of several peers (Waitall, ...) */
#define SONDE_MPI_PROC_NULL (-4)	/* MPI_PROC_NULL */

/* Communicator ids: MPI_COMM_WORLD and MPI_COMM_SELF, and for every other
 * the same 64-bit id on each of its members (the tracer derives it from
 * the parent's id and the creation's order on the parent, which every
 * member of a collective creation shares); SONDE_MPI_COMM_NONE: none. */
#define SONDE_MPI_COMM_WORLD 0ull
#define SONDE_MPI_COMM_SELF 1ull
#define SONDE_MPI_COMM_NONE (~0ull)

/* flags of an MPI call packet */
#define SONDE_MPIF_ERROR 0x1u	/* the call returned an error code */
#define SONDE_MPIF_FORTRAN 0x2u	/* called through the Fortran bindings */

struct sonde_mpi_call_packet {
	uint16_t type;		/* SONDE_PKT_MPI_CALL */
	uint16_t size;		/* 56 */
	uint16_t func;		/* the function's id (functions.list) */
	uint16_t flags;		/* SONDE_MPIF_* */
	int32_t peer;		/* a point-to-point call's peer or a rooted
				   collective's root, as a rank of
				   MPI_COMM_WORLD; or SONDE_MPI_NONE, ... */
	int32_t tag;		/* a point-to-point call's tag (MPI_ANY_TAG as
				   the library defines it: -1 in both), else 0 */
	uint64_t comm;		/* the communicator's id (above) */
	uint64_t time_ns;	/* when the call started */
	uint64_t dur_ns;	/* how long it took */
	uint64_t coll_bytes;	/* a collective's bytes on this rank: what it
				   sends plus what it receives; else 0 */
	uint64_t stack_id;
};
_Static_assert(sizeof(struct sonde_mpi_call_packet) == 56, "mpi call packet layout");

/* dir of an MPI message packet */
#define SONDE_MPI_SEND 1u	/* a send started (MPI Sends, MPI Bytes Sent) */
#define SONDE_MPI_RECV 2u	/* a receive completed (MPI Receives, MPI Bytes Received) */

struct sonde_mpi_msg_packet {
	uint16_t type;		/* SONDE_PKT_MPI_MSG */
	uint16_t size;		/* 56 */
	uint8_t dir;		/* SONDE_MPI_SEND, SONDE_MPI_RECV */
	uint8_t reserved;
	uint16_t func;		/* the call that started the send or completed
				   the receive (its id) */
	int32_t peer;		/* the destination (send) or the source
				   (receive, from its status) as a rank of
				   MPI_COMM_WORLD */
	int32_t tag;		/* its tag (a receive's: from its status) */
	uint32_t reserved2;
	uint64_t comm;		/* the communicator's id */
	uint64_t time_ns;	/* a send: when its call started; a receive:
				   when the call that completed it ended */
	uint64_t bytes;		/* count times the datatype's size (a
				   receive's: the count its status says) */
	uint64_t stack_id;	/* the stack of that call */
};
_Static_assert(sizeof(struct sonde_mpi_msg_packet) == 56, "mpi message packet layout");

/*
 * OpenMP (kind omp, file "omptrace"; collector/omp.c, from OMPT's
 * callbacks on libomp and the GOMP_* interposers on libgomp).  Events
 * cost a region's enter and leave, per thread, and a task's creation and
 * run, never an iteration.  Written when the thing they describe ends, by
 * the thread it is about; the reader joins them by region id.
 */

/* flags of an OpenMP region packet */
#define SONDE_OMPF_LIBOMP 0x1u	/* recorded through OMPT (LLVM's libomp) */
#define SONDE_OMPF_LIBGOMP 0x2u	/* recorded through the GOMP_* interposers */
#define SONDE_OMPF_TEAMS 0x4u	/* a teams region, not a parallel one */
#define SONDE_OMPF_MASTER 0x8u	/* master_part holds the master's part
				   (no implicit-task packet of thread 0) */

/* One execution of a parallel region, written by the thread that opened
 * it (the encountering thread, the team's master) when the region ends. */
struct sonde_omp_region_packet {
	uint16_t type;		/* SONDE_PKT_OMP_REGION */
	uint16_t size;		/* 72 */
	uint16_t flags;		/* SONDE_OMPF_* */
	uint16_t level;		/* nesting level: 1 for an outermost region */
	uint32_t requested;	/* threads asked for (num_threads, the ICV) */
	uint32_t nthreads;	/* threads the team had */
	uint64_t region_id;	/* unique in the process, never 0 */
	uint64_t parent_id;	/* the enclosing region's id; 0: none */
	uint64_t codeptr;	/* the return address in the code that opened
				   it (its source function and line); 0:
				   unknown */
	uint64_t start_ns;	/* the fork */
	uint64_t end_ns;	/* the join */
	uint64_t stack_id;	/* the encountering thread's stack at the fork
				   (leaf: the opening call); 0: none */
	/* With SONDE_OMPF_MASTER, the master's part: its begin less
	 * start_ns in the low 32 bits, end_ns less its arrival in the
	 * high (a part outside them has its own packet); else 0.  One
	 * packet a region on the master instead of two: its data is a
	 * region's largest cost. */
	uint64_t master_part;
};
_Static_assert(sizeof(struct sonde_omp_region_packet) == 72, "omp region packet layout");

/* One thread's part of a region (its implicit task), written by that
 * thread when it leaves the region's closing barrier. */
struct sonde_omp_itask_packet {
	uint16_t type;		/* SONDE_PKT_OMP_ITASK */
	uint16_t size;		/* 48 */
	uint32_t thread_num;	/* its number in the team (0: the master) */
	uint64_t region_id;
	uint64_t begin_ns;	/* it started the region's work */
	uint64_t arrive_ns;	/* it reached the region's closing barrier */
	uint64_t end_ns;	/* it left it */
	uint64_t reserved;
};
_Static_assert(sizeof(struct sonde_omp_itask_packet) == 48, "omp itask packet layout");

/* One explicit task, written by the thread that ran it when it ends. */
struct sonde_omp_task_packet {
	uint16_t type;		/* SONDE_PKT_OMP_TASK */
	uint16_t size;		/* 56 */
	uint32_t flags;		/* 0 (room for undeferred, final, ...) */
	uint64_t region_id;	/* the region it was created in; 0: none */
	uint64_t create_ns;	/* when it was created */
	uint64_t begin_ns;	/* when it started running */
	uint64_t end_ns;	/* when it ended */
	uint64_t create_stack;	/* the creating thread's stack at its
				   creation (leaf: the creating call) */
	uint64_t codeptr;	/* the task's function, or the creating
				   call's return address; 0: unknown */
};
_Static_assert(sizeof(struct sonde_omp_task_packet) == 56, "omp task packet layout");

#endif
