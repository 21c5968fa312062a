/*
 * expwriter: writes synthetic experiments, for tests and benchmarks of the
 * readers, and the experiments sonde merge makes (lib/reader/expmerge.c);
 * it is not the collector, which writes from inside the target.
 *
 *	struct sonde_expw *w = sonde_expw_create("/tmp/t.er", err, sizeof(err));
 *	sonde_expw_log_preamble(w, 1234, 1000000000);
 *	sonde_expw_object(w, 1, "/usr/lib/libc.so.6", 0x7f0000000000, 0x7f0000028000,
 *			  0x7f00001a0000, 0);
 *	uint64_t pcs[] = { 0x7f0000030000 | SONDE_PC_EXACT, 0x401000 };
 *	sonde_expw_stack(w, 7, 0, 2, pcs);
 *	sonde_expw_sample(w, 1234, 0, 1001000000, 1000000, 7);
 *	sonde_expw_log(w, "<event kind=\"exit\" time_ns=\"2000000000\" status=\"0\"/>\n");
 *	sonde_expw_finish(w, 0, err, sizeof(err));
 *
 * Data packets are laid out as the collector lays them out: each thread
 * fills its own block of each data file; a full block makes it claim the
 * next free one.  Functions that write a packet return its file offset so
 * that a test can damage exactly that packet afterwards.  Data are kept in
 * memory until sonde_expw_finish() writes the files.
 *
 * Errors: functions return -1 (and remember the first error, which
 * sonde_expw_finish() reports); a failed writer may still be finished or
 * freed.  Not thread-safe.
 */
#ifndef SONDE_EXPWRITER_H
#define SONDE_EXPWRITER_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/format.h>

#include "reader/experiment.h"

struct sonde_expw;

/* Creates directory dir (its parent must exist; dir may exist already) and
 * log.xml in it.  NULL with a message in err on failure. */
struct sonde_expw *sonde_expw_create(const char *dir, char *err, size_t errlen);
/* The experiment's directory, as given to sonde_expw_create. */
const char *sonde_expw_dir(const struct sonde_expw *w);

/* Appends printf-formatted text to log.xml / map.xml as it is.  The first
 * write to map.xml starts it with the XML declaration and <map>. */
int sonde_expw_log(struct sonde_expw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sonde_expw_map(struct sonde_expw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Writes the usual beginning of log.xml: declaration, <experiment>,
 * <target pid>, <system>, <settings> (1 ms clock), <time start_ns>,
 * <dataformat> and <packet> for the three data kinds, and a start event.
 * Also sets the pid and start_ns written into the data file headers.
 */
int sonde_expw_log_preamble(struct sonde_expw *w, uint32_t pid, uint64_t start_ns);

/* Sets the pid and start_ns of the data file headers without writing the
 * preamble (a writer that writes a log.xml of its own: sonde merge's). */
void sonde_expw_process(struct sonde_expw *w, uint32_t pid, uint64_t start_ns);

/* Writes a load / unload <object> line to map.xml. */
int sonde_expw_object(struct sonde_expw *w, uint32_t id, const char *path, uint64_t base,
		      uint64_t lo, uint64_t hi, uint64_t time_ns);
int sonde_expw_unload(struct sonde_expw *w, uint32_t id, uint64_t time_ns);

/* Packets.  Each returns the packet's offset in its data file, or -1. */
int64_t sonde_expw_sample(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint64_t time_ns,
			  uint64_t weight_ns, uint64_t stack_id);
/* The same in thread state `state` (a profile packet's: sonde/states.h's
 * state of CPU samples, as a state provider gives one, or any id, as a
 * collector whose table has more rows writes one). */
int64_t sonde_expw_sample_state(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint16_t state, uint64_t time_ns,
				uint64_t weight_ns, uint64_t stack_id);
/* The same with microstates (a 48-byte packet; sonde_expw_sample writes
 * the 32-byte packet of experiments recorded before them). */
int64_t sonde_expw_sample_ms(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint64_t time_ns,
			     uint64_t weight_ns, uint64_t system_ns, uint64_t wait_cpu_ns, uint64_t stack_id);
/* A 48-byte packet in any state, with microstates. */
int64_t sonde_expw_sample_state_ms(struct sonde_expw *w, uint32_t tid, uint16_t cpu, uint16_t state,
				   uint64_t time_ns, uint64_t weight_ns, uint64_t system_ns, uint64_t wait_cpu_ns,
				   uint64_t stack_id);
/* An off-CPU packet of blocked thread tid, in a block of the sampler
 * thread (as the collector writes them). */
int64_t sonde_expw_offcpu(struct sonde_expw *w, uint32_t sampler, uint32_t tid, uint16_t state,
			  uint16_t syscall, uint64_t time_ns, uint64_t weight_ns, uint64_t stack_id);
/* A thread_end event with the kernel's accounting (log.xml); returns 0 or -1. */
int sonde_expw_thread_end(struct sonde_expw *w, uint32_t tid, uint64_t time_ns, uint64_t start_ns,
			  uint64_t cpu_ns, uint64_t utime_ns, uint64_t stime_ns, uint64_t run_delay_ns);
/* A stack packet, in a block of the thread given as pid (preamble): the
 * old whole-stack form, native frames only (SONDE_PC_EXACT in pc). */
int64_t sonde_expw_stack(struct sonde_expw *w, uint64_t stack_id, uint16_t flags, uint16_t depth,
			 const uint64_t *pc);
/*
 * A stack as the collector writes one: a frame packet per frame, the root
 * first, each frame's node id made as the collector makes it (the hash of
 * its parent's id and its pc, and of its kind, fflags and aux when the kind
 * is not native), flags (SONDE_STACK_*) in the root's parent.  frames are
 * leaf first, of any kind (reader/experiment.h: a native frame's exact
 * becomes SONDE_PC_EXACT, another kind's SONDE_FRAMEF_EXACT; aux is
 * written for kinds other than native).  *stack_id gets the leaf's node id,
 * the id samples name the stack by.  Returns the leaf packet's offset, or
 * -1 (depth 0 or above SONDE_MAX_DEPTH_LIMIT, flags of 16 or more).
 */
int64_t sonde_expw_frames(struct sonde_expw *w, uint16_t flags, uint16_t depth, const struct sonde_frame *frames,
			  uint64_t *stack_id);
/*
 * Appends printf-formatted text to file name of the experiment (created at
 * the first call): the files that name frames of other kinds than native,
 * "kallsyms" (lines "ADDRESS TYPE NAME") and the method table "methods"
 * (lines "ID CLASS METHOD SIGNATURE SOURCEFILE [BCI:LINE ...]"), both in
 * doc/experiment-format.md, or any other.  0 or -1.
 */
int sonde_expw_text(struct sonde_expw *w, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int64_t sonde_expw_overview(struct sonde_expw *w, const struct sonde_overview_packet *p);
/* Any bytes as a packet of file kind (size > 0, a multiple of 8, at most
 * a block's payload; the bytes are written as given, type and size too). */
int64_t sonde_expw_packet(struct sonde_expw *w, enum sonde_kind kind, uint32_t tid, const void *pkt,
			  size_t size);

/* Counter overflow profiling (sonde collect -h): the counters file's
 * <dataformat> and <packet> lines (with index 0, the first counter) and
 * counter index's <trace kind="counters" index=... name=... title=...
 * interval=...> line in log.xml, as the collector writes them; returns 0
 * or -1.  Then its samples: a counter packet of counter index counter,
 * weighing weight events, in thread tid's block of the counters file. */
int sonde_expw_counter_decl(struct sonde_expw *w, unsigned index, const char *name, const char *title,
			    uint64_t interval);
int64_t sonde_expw_counter(struct sonde_expw *w, uint32_t tid, uint16_t counter, uint64_t time_ns, uint64_t weight,
			   uint64_t stack_id);

/* MPI tracing (sonde collect -m): the mpitrace file's <dataformat> and
 * <packet> lines and the job's <trace kind="mpi" ...> lines in log.xml
 * (rank and size when not negative, abi and library when not NULL), as
 * the tracing library writes them; returns 0 or -1.  Then its packets, in
 * thread tid's block of the mpitrace file (type and size are filled in). */
int sonde_expw_mpi_decl(struct sonde_expw *w, int64_t rank, int64_t size, const char *abi, const char *library);
int64_t sonde_expw_mpi_call(struct sonde_expw *w, uint32_t tid, const struct sonde_mpi_call_packet *p);
int64_t sonde_expw_mpi_msg(struct sonde_expw *w, uint32_t tid, const struct sonde_mpi_msg_packet *p);
/* OpenMP regions (the omp kind, written by the collector with the OpenMP
 * states): the omptrace file's <dataformat> and <packet> lines, then a
 * region, a thread's part of one (itask) or an explicit task in thread
 * tid's block of the omptrace file (type and size are filled in). */
int sonde_expw_omp_decl(struct sonde_expw *w);
int64_t sonde_expw_omp_region(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_region_packet *p);
int64_t sonde_expw_omp_itask(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_itask_packet *p);
int64_t sonde_expw_omp_task(struct sonde_expw *w, uint32_t tid, const struct sonde_omp_task_packet *p);

/* Appends an all-zero block (claimed, never written); returns its offset. */
int64_t sonde_expw_zero_block(struct sonde_expw *w, enum sonde_kind kind);

/* Flags of sonde_expw_finish(). */
#define SONDE_EXPW_OPEN_LOG 0x1u /* leave </experiment> off, as if the target were killed */
#define SONDE_EXPW_NO_MAP 0x2u	 /* write no map.xml */
#define SONDE_EXPW_NO_DATA 0x4u	 /* write no data files */

/*
 * Writes the data files (each at least its file header), closes log.xml
 * (with </experiment> unless SONDE_EXPW_OPEN_LOG) and map.xml (with
 * </map>), and frees w.  Returns 0, or -1 with the first error in err.
 */
int sonde_expw_finish(struct sonde_expw *w, unsigned flags, char *err, size_t errlen);

#endif
