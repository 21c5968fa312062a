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
extern _Atomic uint64_t java_walks, java_walked, java_failed[JAVA_NREASONS];
/* The code cache as far as the JVM has reported its code: [lo, hi). */
extern _Atomic uint64_t java_code_lo, java_code_hi;

/* The JNIEnv of Java thread tid (NULL: none, or it ended).  Normal
 * context. */
void java_thread_set(pid_t tid, JNIEnv *env);

/* The stack source (sonde/hooks.h).  Async-signal-safe. */
int java_frames(const struct sonde_hook_sample *s, struct sonde_hook_frame *out, int max,
		struct sonde_hook_splice *where, void *arg);

#endif
