/*
 * The Java agent's two halves (agent.c, normal context: the JVMTI
 * callbacks; frames.c, the sampling handler's stack source) and what they
 * share: AsyncGetCallTrace, the Java threads' JNIEnvs by tid, the code
 * cache's bounds and the walks' counts.
 */
#ifndef SONDE_JAVA_H
#define SONDE_JAVA_H

#include <jni.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/hooks.h>

/* AsyncGetCallTrace (libjvm's export, declared by no header). */
typedef struct {
	jint lineno; /* the bytecode index; -3: a native method */
	jmethodID method_id;
} asgct_frame;
typedef struct {
	JNIEnv *env_id;
	jint num_frames; /* > 0: frames; <= 0: why not (java_reasons) */
	asgct_frame *frames;
} asgct_trace;
typedef void asgct_fn(asgct_trace *trace, jint depth, void *ucontext);

/* AsyncGetCallTrace's answers when it has no frames (its ticks_* codes),
 * by -code; the last: any other. */
#define JAVA_NREASONS 12
extern const char *const java_reasons[JAVA_NREASONS];

extern asgct_fn *java_asgct;
/* java_again: walks that succeeded at the second try (frames.c, again) */
extern _Atomic uint64_t java_walks, java_walked, java_again, java_failed[JAVA_NREASONS];
/* The code cache as far as the JVM has reported its code: [lo, hi). */
extern _Atomic uint64_t java_code_lo, java_code_hi;
/* The call stub, through which the JVM's C++ calls Java code (main, a
 * JNI method's callback, a thread's run, a class's loader): 0 until the
 * JVM reports it. */
extern _Atomic uint64_t java_stub_lo, java_stub_hi;

/* How a sample's top Java frame ran, told by the code address it was
 * at (frames.c): the interpreter's code [java_interp_lo, java_interp_hi)
 * (DynamicCodeGenerated's "Interpreter"); the code heaps that hold only
 * compiled methods (HotSpot's segmented code cache: every heap of
 * CodeCache::_heaps but the one holding the interpreter and the stubs;
 * without segmentation, the one heap, java_nm.mixed), java_nmheaps of
 * them; and java_interp_only when the JVM runs no
 * compiler (-Xint), where every Java frame is interpreted.  0 until
 * known. */
#define JAVA_NMHEAPS 4
extern _Atomic uint64_t java_interp_lo, java_interp_hi;
extern _Atomic uint64_t java_nm_lo[JAVA_NMHEAPS], java_nm_hi[JAVA_NMHEAPS];
extern _Atomic int java_nmheaps, java_interp_only;

/* Where a compiled method's code is, to tell which of the top Java
 * frames it holds (the others above it were inlined into it) and its
 * compiler: each heap's segment map (HotSpot's CodeHeap: a byte per
 * segment, the number of segments back to its block's start, 0xff
 * free), read in the handler with plain loads inside the heap's
 * committed part only; the offsets of vmStructs.  heap[i] goes with
 * java_nm_lo[i]; java_nm_at is 0 when the JVM does not say enough. */
struct java_nmlook {
	uint64_t heap[JAVA_NMHEAPS], segmap[JAVA_NMHEAPS];
	long high_off;					     /* CodeHeap's committed end (its _memory's _high) */
	int log2_seg;					     /* a segment's size */
	long block_hdr, used_off;			     /* HeapBlock's size; its used flag */
	long code_begin, code_end, method, level, blob_size; /* the blob's (nmethod's) */
	long frame_size, frame_complete;		     /* the blob's frame, in words; where its prologue ends */
	long compile_id;				     /* nmethod's; -1: not known */
	int mixed; /* the one heap holds stubs too: compiled only where found */
};
extern struct java_nmlook java_nm;
extern _Atomic int java_nm_at;

/* What the handler's own walk of a Java thread's frames needs, below the
 * top compiled method (frames.c, frame_kinds): the thread's JavaThread
 * (its JNIEnv less env_off), its stack's bounds in it, and its frame
 * anchor, where the JVM leaves its last Java frame when the thread runs
 * native code or the VM's.  java_deep is 0 when the JVM does not say
 * enough (vmStructs) or the code heaps are not known. */
struct java_deep {
	long env_off;			/* the JNIEnv in a JavaThread */
	long stack_base, stack_size;	/* JavaThread's */
	long anchor;			/* JavaThread's frame anchor */
	long last_sp, last_pc, last_fp; /* in a frame anchor */
	long wrapper;			/* the call stub's JavaCallWrapper, from its fp */
	long wrapper_anchor;		/* its anchor; -1: not known */
};
extern struct java_deep java_deep;
extern _Atomic int java_deep_on;

/* The compiled methods by time (code.c): what a scan of the code heaps
 * reads besides java_nm's, from vmStructs; length_off -1 when the JVM
 * does not say. */
struct java_codelook {
	long length_off;		   /* a block's length in segments, in its header */
	long state, compile_id, entry_bci; /* nmethod's */
};
extern struct java_codelook java_code;
/* A compiled method's scopes, which the poller reads from its debug
 * information when it first sees it (code.c, scopes_of): nmethod's
 * offsets of its PcDescs (to _dependencies_offset) and its metadata
 * (the Method* table, to _scopes_data_begin, where the scopes' stream
 * starts), a PcDesc's fields and size.  pcdesc_size -1 when the JVM
 * does not say. */
struct java_scopelook {
	long pcs_off, deps_off, metadata_off, data_begin;
	long pc_offset, decode_offset, pcdesc_size;
};
extern struct java_scopelook java_scope;
/* jvm.inline's lines of a compiled method (agent.c, under its lock). */
void java_inline_put(const char *buf, size_t len);
/* Whether the poller wrote code's scopes, for method id (the end's
 * CompiledMethodLoad events then write none again). */
bool java_code_scoped(uint64_t code, uint64_t size, uint64_t id);
/* Each method's Method*, jmethodID and name, for jvm.code (normal
 * context). */
void java_code_method(jmethodID id, const char *name);
/* The thread that writes jvm.code: started once the code heaps are
 * known, stopped before the agent's files close. */
void java_code_start(void);
void java_code_stop(void);

/* The JNIEnv of Java thread tid (NULL: none, or it ended).  Normal
 * context. */
void java_thread_set(pid_t tid, JNIEnv *env);

/* The stack source (sonde/hooks.h).  Async-signal-safe. */
int java_frames(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		struct sonde_hook_splice *where, void *arg);
/* The same without the walk (SONDE_JAVA_WALK=0): the native frames in
 * compiled code with their codes' compile ids only. */
int java_code_only(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		   struct sonde_hook_splice *where, void *arg);

#endif
