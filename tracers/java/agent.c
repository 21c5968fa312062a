/*
 * The Java agent (sonde collect -j on): libsonde_java.so, a JVMTI agent
 * that the JVM loads (-agentpath:, which sonde collect puts on the java
 * command line or in JAVA_TOOL_OPTIONS) beside the preloaded collector.
 * It adds each Java thread's Java frames to every clock and counter
 * sample (a stack source of the sampling handler, sonde/hooks.h), and
 * writes the experiment's method table, the file "methods"
 * (doc/experiment-format.md), that names them.
 *
 * The frames come from AsyncGetCallTrace, libjvm's own walk of a thread's
 * Java frames from a signal handler's context: method ids and bytecode
 * indexes, interpreted, compiled and inlined frames as Java shows them
 * (with -XX:+DebugNonSafepoints, which sonde collect adds, a compiled
 * frame's scope is exact between safepoints too).  It needs, and gets
 * here, what the JVM makes lazily otherwise: each method's id is created
 * when its class is prepared (GetClassMethods), never in the handler; and
 * the thread's JNIEnv, kept by thread id in a table filled at ThreadStart
 * (VMInit for the thread running main), which the handler reads with
 * plain loads.  A walk that answers no frames (a thread in the VM's own
 * code, a GC, a deoptimisation) leaves the sample its native frames, and
 * is counted by its reason in log.xml at the end.
 *
 * Where the frames go: the native unwinder stops in the JVM's code cache
 * (the interpreter's and the compilers' code is no ELF object's, and
 * compiled frames keep no frame pointer), so the Java frames take the
 * place of the native frames from the first one in the code cache on: the
 * native frames above it (a JNI method's C code, the JVM's runtime calls,
 * libc) stay above the Java method that called them.  The code cache's
 * bounds are what the JVM reports of its generated code
 * (DynamicCodeGenerated: the interpreter, stubs, adapters; and
 * CompiledMethodLoad), widened as it reports more.
 *
 * This file is the normal context: the JVMTI callbacks (any Java
 * thread) and the load.  The stack source, which runs in the sampling
 * handler, is frames.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sonde/hooks.h>
#include <sonde/settings.h>
#include <sonde/shared.h>

#include "../tracer.h"

#include "java.h"

static jvmtiEnv *g_jvmti;
static int g_hook;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- the method table ---- */

/* The method table, and the JVM's generated code as dynamic functions
 * ("jvm.map", jit.map's format: the interpreter, stubs, adapters and each
 * compiled method's code as the JVM reports it), under one lock. */
static int g_methods_fd = -1, g_map_fd = -1, g_inline_fd = -1;
static pthread_mutex_t g_methods_lock = PTHREAD_MUTEX_INITIALIZER;

static void jfree(void *p)
{
	if (p)
		(*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)p);
}

/* Append to buf at *len, as far as it fits. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < cap - *len ? (size_t)n : cap - *len - 1;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (fd >= 0 && n > 0) {
		long w = __sonde_syscall(SYS_write, fd, (long)p, (long)n, 0, 0, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* A field of the table has no blank: one that would is written with '_'. */
static const char *field(char *s)
{
	if (!s || !*s)
		return "-";
	for (char *p = s; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p = '_';
	return s;
}

/* A method as Java shows it, "com.example.Main.run" (from the class's
 * signature "Lcom/example/Main;"), in buf. */
static const char *java_name(char *buf, size_t cap, const char *csig, const char *name)
{
	const char *c = csig[0] == 'L' ? csig + 1 : csig;
	size_t k = 0;
	for (; c[k] && c[k] != ';' && k < cap - 1; k++)
		buf[k] = c[k] == '/' ? '.' : c[k];
	snprintf(buf + k, cap - k, ".%s", name);
	return buf;
}

/* Every method of klass gets its id now (the handler cannot make one)
 * and its line in the table. */
static void class_methods(jvmtiEnv *jvmti, jclass klass)
{
	char *csig = NULL, *src = NULL;
	jint nm = 0;
	jmethodID *ms = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE)
		return;
	if ((*jvmti)->GetClassMethods(jvmti, klass, &nm, &ms) != JVMTI_ERROR_NONE) {
		jfree(csig);
		return;
	}
	if ((*jvmti)->GetSourceFileName(jvmti, klass, &src) != JVMTI_ERROR_NONE)
		src = NULL;
	field(csig);
	field(src);
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	if (buf && g_methods_fd >= 0) {
		pthread_mutex_lock(&g_methods_lock);
		for (jint i = 0; i < nm; i++) {
			char *name = NULL, *sig = NULL, jname[768];
			if ((*jvmti)->GetMethodName(jvmti, ms[i], &name, &sig, NULL) != JVMTI_ERROR_NONE)
				continue;
			java_code_method(ms[i], java_name(jname, sizeof jname, csig, name));
			size_t len = 0;
			put(buf, cap, &len, "0x%" PRIxPTR " %s %s %s %s", (uintptr_t)ms[i], csig, field(name),
			    field(sig), src ? src : "-");
			jint nl = 0;
			jvmtiLineNumberEntry *lt = NULL;
			if ((*jvmti)->GetLineNumberTable(jvmti, ms[i], &nl, &lt) == JVMTI_ERROR_NONE) {
				for (jint k = 0; k < nl; k++)
					if (lt[k].start_location >= 0 && lt[k].start_location < 65536 &&
					    lt[k].line_number > 0)
						put(buf, cap, &len, " %lld:%d", (long long)lt[k].start_location,
						    (int)lt[k].line_number);
				jfree(lt);
			}
			put(buf, cap, &len, "\n");
			if (len > 0 && buf[len - 1] != '\n') /* cut short: end the line */
				buf[len - 1] = '\n';
			write_all(g_methods_fd, buf, len);
			jfree(name);
			jfree(sig);
		}
		pthread_mutex_unlock(&g_methods_lock);
	}
	free(buf);
	jfree(ms);
	jfree(src);
	jfree(csig);
}

/* ---- JVMTI events ---- */

/* The call stub, through which the JVM's C++ calls Java code (main, a
 * JNI method's callback, a thread's run): the native walk crosses the
 * code cache to it (sonde/hooks.h, __sonde_hook_jit_region), so that the
 * C frames between a callback and the JNI method that made it, and the
 * JVM's below a thread's first Java frame, are on the stack.  0 until the
 * JVM reports it. */

static int jit_region(void)
{
	return __sonde_hook_jit_region(atomic_load(&java_code_lo), atomic_load(&java_code_hi),
				       atomic_load(&java_stub_lo), atomic_load(&java_stub_hi));
}

static void widen(const void *addr, jint length)
{
	uint64_t lo = (uint64_t)(uintptr_t)addr, hi = lo + (uint64_t)(length > 0 ? length : 0);
	uint64_t cur = atomic_load(&java_code_lo);
	int grew = 0;
	while (lo < cur && !(grew = atomic_compare_exchange_weak(&java_code_lo, &cur, lo)))
		;
	cur = atomic_load(&java_code_hi);
	int grew_hi = 0;
	while (hi > cur && !(grew_hi = atomic_compare_exchange_weak(&java_code_hi, &cur, hi)))
		;
	if ((grew || grew_hi) && atomic_load(&java_stub_lo))
		jit_region();
}

/* A line of jvm.map: START SIZE NAME, the name on one line. */
static void map_line(const void *addr, jint length, const char *name, const char *suffix)
{
	if (g_map_fd < 0 || length <= 0)
		return;
	char line[1024];
	size_t len = 0;
	put(line, sizeof line, &len, "%" PRIxPTR " %x %s%s", (uintptr_t)addr, (unsigned)length,
	    name && *name ? name : "?", suffix);
	for (size_t i = 0; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	put(line, sizeof line, &len, "\n");
	if (line[len - 1] != '\n')
		line[len - 1] = '\n';
	pthread_mutex_lock(&g_methods_lock);
	write_all(g_map_fd, line, len);
	pthread_mutex_unlock(&g_methods_lock);
}

static void JNICALL cb_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *addr, jint length)
{
	(void)jvmti;
	widen(addr, length);
	if (name && !strcmp(name, "call_stub") && length > 0 && !atomic_load(&java_stub_lo)) {
		atomic_store(&java_stub_hi, (uint64_t)(uintptr_t)addr + (uint64_t)length);
		atomic_store(&java_stub_lo, (uint64_t)(uintptr_t)addr);
		if (jit_region() != 0)
			__sonde_trace_log("warning", "Java: the collector took no JIT region; a Java method that "
						     "C called back has no C frames below it");
	}
	if (name && !strcmp(name, "Interpreter") && length > 0 && !atomic_load(&java_interp_hi)) {
		atomic_store(&java_interp_lo, (uint64_t)(uintptr_t)addr);
		atomic_store(&java_interp_hi, (uint64_t)(uintptr_t)addr + (uint64_t)length);
	}
	map_line(addr, length, name, "");
}

/* A compiled method's scopes by code address, from the JVM's inline
 * records (with -XX:+DebugNonSafepoints, which sonde collect adds, at
 * every pc the JIT kept a scope for, not only at calls and safepoints):
 * "jvm.inline" (doc/experiment-format.md), a line for the method,
 *	0xCODE SIZE 0xMETHODID
 * then one for the last address of each run of addresses with one scope,
 *	+OFFSET 0xMETHODID:BCI ...
 * the method the instruction is of first, then the ones it was inlined
 * into, out to the compiled method.  The last: an address is of the first
 * scope at or after it, as HotSpot finds a pc's (the scope's address ends
 * the instructions it describes; a call's is its return address). */
static bool usable_scope(const PCStackInfo *p, const void *addr, jint size)
{
	uint64_t off = (uint64_t)(uintptr_t)p->pc - (uint64_t)(uintptr_t)addr;
	return p->numstackframes > 0 && p->methods && p->bcis && off < (uint64_t)size;
}

static bool same_scope(const PCStackInfo *a, const PCStackInfo *b)
{
	return a->numstackframes == b->numstackframes &&
	       !memcmp(a->methods, b->methods, (size_t)a->numstackframes * sizeof *a->methods) &&
	       !memcmp(a->bcis, b->bcis, (size_t)a->numstackframes * sizeof *a->bcis);
}

void java_inline_put(const char *buf, size_t len)
{
	pthread_mutex_lock(&g_methods_lock);
	if (g_inline_fd >= 0)
		write_all(g_inline_fd, buf, len);
	pthread_mutex_unlock(&g_methods_lock);
}

static void inline_records(jmethodID m, jint size, const void *addr, const void *info)
{
	const jvmtiCompiledMethodLoadInlineRecord *r = NULL;
	for (const jvmtiCompiledMethodLoadRecordHeader *h = info; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO) {
			r = (const jvmtiCompiledMethodLoadInlineRecord *)h;
			break;
		}
	if (g_inline_fd < 0 || !r || r->numpcs <= 0 || size <= 0 ||
	    java_code_scoped((uint64_t)(uintptr_t)addr, (uint64_t)size, (uint64_t)(uintptr_t)m))
		return;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return;
	pthread_mutex_lock(&g_methods_lock);
	put(buf, cap, &len, "0x%" PRIxPTR " %x 0x%" PRIxPTR "\n", (uintptr_t)addr, (unsigned)size, (uintptr_t)m);
	for (jint i = 0; i < r->numpcs; i++) {
		const PCStackInfo *p = &r->pcinfo[i];
		uint64_t off = (uint64_t)(uintptr_t)p->pc - (uint64_t)(uintptr_t)addr;
		if (!usable_scope(p, addr, size))
			continue;
		/* the next usable one: the same scope, this is not its run's end */
		jint j = i + 1;
		while (j < r->numpcs && !usable_scope(&r->pcinfo[j], addr, size))
			j++;
		if (j < r->numpcs && same_scope(p, &r->pcinfo[j]))
			continue;
		if (len + 64 + (size_t)p->numstackframes * 32 > cap) {
			write_all(g_inline_fd, buf, len);
			len = 0;
		}
		put(buf, cap, &len, "+%" PRIx64, off);
		for (jint k = 0; k < p->numstackframes && k < 256; k++)
			put(buf, cap, &len, " 0x%" PRIxPTR ":%d", (uintptr_t)p->methods[k], (int)p->bcis[k]);
		put(buf, cap, &len, "\n");
	}
	write_all(g_inline_fd, buf, len);
	pthread_mutex_unlock(&g_methods_lock);
	free(buf);
}

/* A compiled method's code: named as Java shows the method
 * ("com.example.Main.run"), marked as compiled code. */
static void JNICALL cb_compiled_load(jvmtiEnv *jvmti, jmethodID m, jint size, const void *addr, jint nmap,
				     const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)nmap, (void)map, (void)compile_info;
	widen(addr, size);
	jclass cls;
	char *csig = NULL, *name = NULL, mname[768] = "?";
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) == JVMTI_ERROR_NONE)
		java_name(mname, sizeof mname, csig, name);
	jfree(name);
	jfree(csig);
	map_line(addr, size, mname, " [compiled]");
	inline_records(m, size, addr, compile_info);
}

static void JNICALL cb_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jni, (void)thread;
	class_methods(jvmti, klass);
}

/* Nothing to do, but AsyncGetCallTrace answers no frames unless the
 * ClassLoad event is on (it takes it for a profiler's promise to make
 * the method ids). */
static void JNICALL cb_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jvmti, (void)jni, (void)thread, (void)klass;
}

static void JNICALL cb_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti, (void)thread;
	java_thread_set(my_tid(), jni);
	__sonde_attach_thread(); /* attached late: sampled from now on */
}

static void JNICALL cb_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti, (void)jni, (void)thread;
	java_thread_set(my_tid(), NULL);
}

/* The code cache: the JVM reserves it whole at its start (240 MiB by
 * default; its segments committed as they fill, rwx, the rest ---p), and
 * every compiled method goes into it.  Its bounds are the anonymous
 * mappings around the code the JVM has reported (its stubs), contiguous;
 * CompiledMethodLoad events would give them one method at a time, but
 * are not enabled while the program runs: HotSpot 17 posts them late,
 * from its service thread, and one posted for a method whose class was
 * unloaded meanwhile fails a guarantee and kills the JVM (JGuest, with
 * 200 classes unloaded: 1 run of many). */
static void code_cache_bounds(void)
{
	uint64_t at = atomic_load(&java_code_lo);
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f || !at) {
		if (f)
			fclose(f);
		return;
	}
	char line[512];
	uint64_t lo = 0, hi = 0; /* the run of anonymous mappings being read */
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, b, ino;
		char perms[8];
		int path = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %n", &a, &b, perms, &ino, &path) < 4)
			continue;
		int anon = ino == 0 && (!path || line[path] == '\0' || line[path] == '\n') &&
			   (!strcmp(perms, "rwxp") || !strcmp(perms, "r-xp") || !strcmp(perms, "---p"));
		if (anon && a == hi) {
			hi = b; /* the run goes on */
		} else if (found) {
			break;
		} else if (anon) {
			lo = a, hi = b;
		} else {
			lo = hi = 0;
		}
		if (lo <= at && at < hi)
			found = 1;
	}
	fclose(f);
	if (found)
		widen((const void *)(uintptr_t)lo, (jint)(hi - lo > INT32_MAX ? INT32_MAX : hi - lo));
}

static long vm_entry(const char *type, const char *field, int is_static);
static long vm_type_size(const char *type);
static void deep_walk(jvmtiEnv *jvmti, JNIEnv *jni);

/* The heaps of the code cache that hold compiled methods only, for the
 * handler to tell a compiled top frame (java.h): HotSpot's segmented code
 * cache (the default with tiered compilation) keeps its interpreter, stubs
 * and adapters in a heap of their own, the one holding the interpreter;
 * the others (profiled and non-profiled methods) are the compilers'.  The
 * heaps' list and bounds are fixed at the JVM's start; JVMTI does not
 * give them, vmStructs does (CodeCache::_heaps, a GrowableArray of
 * CodeHeap*, each with its reserved VirtualSpace).  One heap for all (no
 * segmentation): none told.  And -Xint: every frame interpreted. */
static void code_heaps(jvmtiEnv *jvmti)
{
	char *info = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.info", &info) == JVMTI_ERROR_NONE && info) {
		if (strstr(info, "interpreted mode"))
			atomic_store(&java_interp_only, 1);
		jfree(info);
	}
	long heaps = vm_entry("CodeCache", "_heaps", 1), len = vm_entry("GrowableArrayBase", "_len", 0),
	     data = vm_entry("GrowableArray<int>", "_data", 0), mem = vm_entry("CodeHeap", "_memory", 0),
	     lo = vm_entry("VirtualSpace", "_low_boundary", 0), hi = vm_entry("VirtualSpace", "_high_boundary", 0);
	uint64_t ilo = atomic_load(&java_interp_lo);
	if (heaps <= 0 || len < 0 || data < 0 || mem < 0 || lo < 0 || hi < 0 || !ilo || atomic_load(&java_nmheaps))
		return;
	const char *arr = *(const char *const *)(uintptr_t)heaps;
	if (!arr)
		return;
	int n = *(const int32_t *)(arr + len);
	const char *const *v = *(const char *const *const *)(arr + data);
	struct {
		const char *h;
		uint64_t lo, hi;
	} b[8];
	int nb = 0, with_interp = 0;
	for (int i = 0; v && i < n && nb < 8; i++) {
		const char *h = v[i];
		if (!h)
			continue;
		b[nb].h = h;
		b[nb].lo = (uint64_t)(uintptr_t) * (char *const *)(h + mem + lo);
		b[nb].hi = (uint64_t)(uintptr_t) * (char *const *)(h + mem + hi);
		if (b[nb].lo >= b[nb].hi)
			continue;
		with_interp += ilo >= b[nb].lo && ilo < b[nb].hi;
		nb++;
	}
	if (with_interp != 1)
		return;
	/* one heap for all (no segmentation): a compiled method is told only
	 * where its Method* is one of the frames' */
	int mixed = nb == 1;
	/* and what finds a compiled method's code in them */
	long seg = vm_entry("CodeHeap", "_segmap", 0), log2 = vm_entry("CodeHeap", "_log2_segment_size", 0),
	     vlow = vm_entry("VirtualSpace", "_low", 0), vhigh = vm_entry("VirtualSpace", "_high", 0),
	     used = vm_entry("HeapBlock::Header", "_used", 0), hdr0 = vm_entry("HeapBlock", "_header", 0),
	     hdr = vm_type_size("HeapBlock"), cb = vm_entry("CodeBlob", "_code_begin", 0),
	     ce = vm_entry("CodeBlob", "_code_end", 0), meth = vm_entry("CompiledMethod", "_method", 0),
	     lvl = vm_entry("nmethod", "_comp_level", 0), size = vm_type_size("nmethod"),
	     fs = vm_entry("CodeBlob", "_frame_size", 0), fc = vm_entry("CodeBlob", "_frame_complete_offset", 0);
	int look = seg >= 0 && log2 >= 0 && vlow >= 0 && vhigh >= 0 && used >= 0 && hdr0 >= 0 && hdr > 0 && cb >= 0 &&
		   ce >= 0 && meth >= 0 && lvl >= 0 && size > 0 && fs >= 0 && fc >= 0;
	if (look) {
		java_nm.high_off = mem + vhigh;
		java_nm.block_hdr = hdr;
		java_nm.used_off = hdr0 + used;
		java_nm.code_begin = cb;
		java_nm.code_end = ce;
		java_nm.method = meth;
		java_nm.level = lvl;
		java_nm.blob_size = size;
		java_nm.frame_size = fs;
		java_nm.frame_complete = fc;
	}
	long blen = vm_entry("HeapBlock::Header", "_length", 0), st = vm_entry("nmethod", "_state", 0),
	     cid = vm_entry("nmethod", "_compile_id", 0), ebci = vm_entry("nmethod", "_entry_bci", 0);
	java_code.length_off = look && blen >= 0 && st >= 0 && cid >= 0 && ebci >= 0 ? hdr0 + blen : -1;
	long spcs = vm_entry("nmethod", "_scopes_pcs_offset", 0), sdeps = vm_entry("nmethod", "_dependencies_offset", 0),
	     smd = vm_entry("nmethod", "_metadata_offset", 0), sdata = vm_entry("CompiledMethod", "_scopes_data_begin", 0),
	     ppc = vm_entry("PcDesc", "_pc_offset", 0), pdec = vm_entry("PcDesc", "_scope_decode_offset", 0),
	     psize = vm_type_size("PcDesc");
	java_scope = (struct java_scopelook){ spcs, sdeps, smd, sdata, ppc, pdec,
					      spcs >= 0 && sdeps >= 0 && smd >= 0 && sdata >= 0 && ppc >= 0 &&
							      pdec >= 0 && psize >= 8
						      ? psize
						      : -1 };
	java_code.state = st;
	java_code.compile_id = cid;
	java_nm.compile_id = look ? cid : -1;
	java_code.entry_bci = ebci;
	int k = 0, l2 = -1;
	for (int i = 0; i < nb && k < JAVA_NMHEAPS; i++) {
		const char *h = b[i].h;
		if (!mixed && ilo >= b[i].lo && ilo < b[i].hi)
			continue; /* the interpreter's and the stubs' */
		if (look) {
			int g = *(const int32_t *)(h + log2);
			/* the segment map's index is from the heap's committed
			 * low, which is its reserved low */
			if ((uint64_t)(uintptr_t) * (char *const *)(h + mem + vlow) != b[i].lo || g < 4 || g > 16 ||
			    (l2 >= 0 && g != l2))
				look = 0;
			l2 = g;
			java_nm.heap[k] = (uint64_t)(uintptr_t)h;
			java_nm.segmap[k] = (uint64_t)(uintptr_t) * (char *const *)(h + seg + vlow);
			if (!java_nm.segmap[k])
				look = 0;
		}
		atomic_store(&java_nm_lo[k], b[i].lo);
		atomic_store(&java_nm_hi[k], b[i].hi);
		k++;
	}
	java_nm.log2_seg = l2;
	if (mixed && !look)
		return;
	java_nm.mixed = mixed;
	atomic_store_explicit(&java_nmheaps, k, memory_order_release);
	atomic_store_explicit(&java_nm_at, look && k > 0, memory_order_release);
	if (!look)
		__sonde_trace_log("warning", "Java: the JVM does not say where its compiled methods' code begins "
					     "(vmStructs); a compiled top frame's inlined callers are not told");
}

static void JNICALL cb_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	java_thread_set(my_tid(), jni);
	/* the classes loaded before now, and the code generated */
	jint n = 0;
	jclass *cs = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &cs) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < n; i++) {
			jint st = 0;
			if ((*jvmti)->GetClassStatus(jvmti, cs[i], &st) == JVMTI_ERROR_NONE &&
			    (st & JVMTI_CLASS_STATUS_PREPARED))
				class_methods(jvmti, cs[i]);
		}
		jfree(cs);
	}
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	code_cache_bounds();
	code_heaps(jvmti);
	if (jni && !atomic_load(&java_deep_on))
		deep_walk(jvmti, jni);
	if (atomic_load(&java_code_hi) == 0)
		__sonde_trace_log("warning", "Java: the JVM reported no generated code; Java frames replace no native "
					     "frames");
	java_code_start();
	/* SONDE_JAVA_WALK=0: no walk in the sampling handler, everything
	 * else as usual (its cost, and what the scopes alone give) */
	const char *walk = getenv(SONDE_ENV_JAVA_WALK);
	int nowalk = walk && !strcmp(walk, "0");
	if (nowalk)
		__sonde_trace_log("info", "Java: no walk of the Java frames (" SONDE_ENV_JAVA_WALK "=0); samples have "
					  "native frames, and Java frames from the compiled code's scopes");
	g_hook = __sonde_hook_stack_add(nowalk ? java_code_only : java_frames, NULL);
	if (g_hook <= 0)
		__sonde_trace_log("error", "Java: the sampling handler has no room for the Java frames' source; "
					   "samples have native frames only");
}

static void JNICALL cb_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti, (void)jni;
	if (g_hook > 0) {
		__sonde_hook_remove(g_hook);
		g_hook = 0;
	}
	char msg[512];
	size_t len = 0;
	uint64_t walks = atomic_load(&java_walks), ok = atomic_load(&java_walked);
	put(msg, sizeof msg, &len, "Java: %" PRIu64 " samples of Java threads, %" PRIu64 " with Java frames", walks,
	    ok);
	uint64_t again = atomic_load(&java_again);
	if (again)
		put(msg, sizeof msg, &len, " (%" PRIu64 " of them from the first Java frame below a leaf call or stub)",
		    again);
	for (int r = 0; r < JAVA_NREASONS; r++) {
		uint64_t f = atomic_load(&java_failed[r]);
		if (f)
			put(msg, sizeof msg, &len, "; %" PRIu64 " without (%s)", f, java_reasons[r]);
	}

	__sonde_trace_log("info", msg);
	/* the compiled methods alive at the end, named in jvm.map for the
	 * samples whose Java walk failed: GenerateEvents posts them now, in
	 * this thread, skipping those being unloaded (code_cache_bounds says
	 * why not as they come) */
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL) ==
	    JVMTI_ERROR_NONE) {
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	}
	/* after them: the compilers may still install code meanwhile, and
	 * each method in jvm.map is in jvm.code */
	java_code_stop();
	pthread_mutex_lock(&g_methods_lock);
	if (g_methods_fd >= 0)
		close(g_methods_fd);
	if (g_map_fd >= 0)
		close(g_map_fd);
	if (g_inline_fd >= 0)
		close(g_inline_fd);
	g_methods_fd = g_map_fd = g_inline_fd = -1;
	pthread_mutex_unlock(&g_methods_lock);
}

/* The events the agent takes, on from its start, off at an attached
 * recording's stop. */
static const jvmtiEvent g_events[] = {
	JVMTI_EVENT_VM_INIT,
	JVMTI_EVENT_VM_DEATH,
	JVMTI_EVENT_CLASS_LOAD,
	JVMTI_EVENT_CLASS_PREPARE,
	JVMTI_EVENT_THREAD_START,
	JVMTI_EVENT_THREAD_END,
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
};

/* Load: no failure of the agent's may stop the JVM (JNI_OK always);
 * what it could not do is said in log.xml, and native profiling goes
 * on. */
static jint agent_start(JavaVM *vm)
{
	if (g_jvmti)
		return JNI_OK; /* loaded twice */
	java_asgct = (asgct_fn *)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	if (!java_asgct) {
		__sonde_trace_log("error", "Java: this JVM has no AsyncGetCallTrace; samples have native frames only");
		return JNI_OK;
	}
	jvmtiEnv *jvmti = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		__sonde_trace_log("error", "Java: the JVM offers no JVMTI 1.2 environment; samples have native frames "
					   "only");
		return JNI_OK;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		/* without line numbers and code ranges: the frames still */
		memset(&caps, 0, sizeof caps);
		__sonde_trace_log("warning", "Java: the JVM refused the capabilities for source lines and compiled "
					     "code; methods have no lines");
	}
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.VMInit = cb_vm_init;
	cb.VMDeath = cb_vm_death;
	cb.ClassLoad = cb_class_load;
	cb.ClassPrepare = cb_class_prepare;
	cb.ThreadStart = cb_thread_start;
	cb.ThreadEnd = cb_thread_end;
	cb.DynamicCodeGenerated = cb_dynamic_code;
	cb.CompiledMethodLoad = cb_compiled_load;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) {
		__sonde_trace_log("error",
				  "Java: the JVM refused the agent's callbacks; samples have native frames only");
		return JNI_OK;
	}
	g_methods_fd = __sonde_trace_file("methods");
	if (g_methods_fd < 0) {
		__sonde_trace_log("error", errno == ENOENT ? "Java: this process records no experiment; no Java frames"
							   : "Java: cannot create the method table; no Java frames");
		return JNI_OK;
	}
	g_inline_fd = __sonde_trace_file(SONDE_JVM_INLINE_FILE);
	write_all(g_inline_fd, SONDE_JVM_INLINE_HEADER "\n", sizeof SONDE_JVM_INLINE_HEADER);
	g_map_fd = __sonde_trace_file("jvm.map");
	if (g_map_fd < 0)
		__sonde_trace_log("warning", "Java: cannot create jvm.map; the JVM's generated code is shown as "
					     "addresses where a sample has no Java frames");
	g_jvmti = jvmti;
	for (size_t i = 0; i < sizeof g_events / sizeof g_events[0]; i++)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, g_events[i], NULL);
	return JNI_OK;
}

SONDE_EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)options, (void)reserved;
	return agent_start(vm);
}

/* ---- a JVM already running (sonde collect -P PID -j on) ----
 *
 * The JVM's attach mechanism (what jcmd PID JVMTI.agent_load does) loads
 * this library, and with it the collector, into the running JVM and calls
 * Agent_OnAttach on its Attach Listener thread: "start=FILE" starts a
 * recording with the settings in FILE (__sonde_attach_start) and the
 * agent as at VMInit; "stop" ends it (the agent as at VMDeath, then the
 * recording), leaving the JVM's events and capabilities as they were.
 * What failed is written to FILE.err for sonde collect, and the load
 * answers non-zero. */

static char g_attach_err[4200];

static void attach_error(const char *why)
{
	int fd = open(g_attach_err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		write_all(fd, why, strlen(why));
		close(fd);
	}
}

/* An entry of HotSpot's own table of its types' fields (vmStructs, which
 * its Serviceability Agent reads): a field's offset, or a static field's
 * address; -1 when it is not there. */
static long vm_entry(const char *type, const char *field, int is_static)
{
	char **table = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
	const uint64_t *tn = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryTypeNameOffset"),
		       *fn = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryFieldNameOffset"),
		       *off = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryOffsetOffset"),
		       *addr = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryAddressOffset"),
		       *st = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryIsStaticOffset"),
		       *stride = dlsym(RTLD_DEFAULT, "gHotSpotVMStructEntryArrayStride");
	if (!table || !*table || !tn || !fn || !off || !addr || !st || !stride || !*stride)
		return -1;
	for (const char *e = *table;; e += *stride) {
		const char *t = *(const char *const *)(e + *tn), *f = *(const char *const *)(e + *fn);
		if (!t)
			return -1;
		if (f && !strcmp(t, type) && !strcmp(f, field) && !*(const int32_t *)(e + *st) == !is_static)
			return is_static ? (long)*(const uint64_t *)(e + *addr) : (long)*(const uint64_t *)(e + *off);
	}
}

/* The size of one of HotSpot's types (vmStructs' types table); -1 when it
 * is not there. */
static long vm_type_size(const char *type)
{
	char **table = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
	const uint64_t *tn = dlsym(RTLD_DEFAULT, "gHotSpotVMTypeEntryTypeNameOffset"),
		       *sz = dlsym(RTLD_DEFAULT, "gHotSpotVMTypeEntrySizeOffset"),
		       *stride = dlsym(RTLD_DEFAULT, "gHotSpotVMTypeEntryArrayStride");
	if (!table || !*table || !tn || !sz || !stride || !*stride)
		return -1;
	for (const char *e = *table;; e += *stride) {
		const char *t = *(const char *const *)(e + *tn);
		if (!t)
			return -1;
		if (!strcmp(t, type))
			return (long)*(const uint64_t *)(e + *sz);
	}
}

static long vm_field(const char *type, const char *field)
{
	return vm_entry(type, field, 0);
}

/* One of HotSpot's integer constants (vmStructs' int constants); 0 when
 * it is not there. */
static long vm_int_constant(const char *name)
{
	char **table = dlsym(RTLD_DEFAULT, "gHotSpotVMIntConstants");
	const uint64_t *nm = dlsym(RTLD_DEFAULT, "gHotSpotVMIntConstantEntryNameOffset"),
		       *val = dlsym(RTLD_DEFAULT, "gHotSpotVMIntConstantEntryValueOffset"),
		       *stride = dlsym(RTLD_DEFAULT, "gHotSpotVMIntConstantEntryArrayStride");
	if (!table || !*table || !nm || !val || !stride || !*stride)
		return 0;
	for (const char *e = *table;; e += *stride) {
		const char *t = *(const char *const *)(e + *nm);
		if (!t)
			return 0;
		if (!strcmp(t, name))
			return *(const int32_t *)(e + *val);
	}
}

/* Where a JavaThread keeps its JNIEnv: this thread's env less its
 * JavaThread (java.lang.Thread.eetop holds it; vmStructs does not list
 * the field); -1 when the JVM does not say.  *eetop: the field. */
static long env_offset(jvmtiEnv *jvmti, JNIEnv *jni, jfieldID *eetop)
{
	jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
	*eetop = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
	jthread self = NULL;
	if (!*eetop || (*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	intptr_t me = (intptr_t)(*jni)->GetLongField(jni, self, *eetop), off = (intptr_t)jni - me;
	(*jni)->DeleteLocalRef(jni, self);
	if (tc)
		(*jni)->DeleteLocalRef(jni, tc);
	return me && off > 0 && off < 65536 ? (long)off : -1;
}

/* What the handler's walk below the top frame needs (java.h, struct
 * java_deep): the offsets of a JavaThread's stack and frame anchor,
 * straight into java_deep (the handler reads it only once java_deep_on
 * is set). */
static void deep_walk(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct java_deep *D = &java_deep;
	static const char *const stack_of[] = { "JavaThread", "Thread" };
	const struct {
		const char *type, *field;
		long *to;
	} need[] = {
		{ "JavaThread", "_anchor", &D->anchor },
		{ "JavaFrameAnchor", "_last_Java_sp", &D->last_sp },
		{ "JavaFrameAnchor", "_last_Java_pc", &D->last_pc },
		{ "JavaFrameAnchor", "_last_Java_fp", &D->last_fp },
	};
	jfieldID eetop;
	int ok = (D->env_off = env_offset(jvmti, jni, &eetop)) >= 0 && atomic_load(&java_nm_at);
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		ok &= (*need[i].to = vm_field(need[i].type, need[i].field)) >= 0;
	/* JDK 17 lists the stack under JavaThread, others under Thread */
	D->stack_base = D->stack_size = -1;
	for (size_t i = 0; i < 2 && (D->stack_base < 0 || D->stack_size < 0); i++) {
		D->stack_base = vm_field(stack_of[i], "_stack_base");
		D->stack_size = vm_field(stack_of[i], "_stack_size");
	}
	if (!ok || D->stack_base < 0 || D->stack_size < 0) {
		__sonde_trace_log("warning", "Java: the JVM does not say where its threads' stacks and last Java "
					     "frames are (vmStructs); Java frames below the top method have no kind");
		return;
	}
	/* the call stub's frame: its JavaCallWrapper holds the anchor of the
	 * Java frames below the C ones that called Java */
	long wrap = vm_field("JavaCallWrapper", "_anchor"),
	     at = vm_int_constant("frame::entry_frame_call_wrapper_offset");
	D->wrapper = at < 0 && at > -64 ? at * 8 : 0;
	D->wrapper_anchor = wrap >= 0 && D->wrapper ? wrap : -1;
	atomic_store_explicit(&java_deep_on, 1, memory_order_release);
}

/* The Java threads that exist at the attach, which no ThreadStart will
 * tell of: each one's thread id and JNIEnv, which the sampling handler
 * needs, from its java.lang.Thread.  Its eetop field holds its JavaThread;
 * the JNIEnv is at the same offset in every JavaThread (this thread's
 * env less its own eetop), and its OS thread id in its OSThread (the
 * offsets of vmStructs).  A thread that ends meanwhile: its ThreadEnd
 * clears it, or the check after. Returns how many, -1 when the JVM does
 * not say enough. */
static int attach_threads(jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* JDK 17 lists _osthread under JavaThread, others under Thread */
	long osthread = vm_field("JavaThread", "_osthread"), thread_id = vm_field("OSThread", "_thread_id");
	if (osthread < 0)
		osthread = vm_field("Thread", "_osthread");
	jfieldID eetop;
	long env_off = env_offset(jvmti, jni, &eetop);
	if (osthread < 0 || thread_id < 0 || env_off < 0)
		return -1;
	jint n = 0;
	jthread *ts = NULL;
	if ((*jvmti)->GetAllThreads(jvmti, &n, &ts) != JVMTI_ERROR_NONE)
		return -1;
	int got = 0;
	pid_t mine = my_tid();
	for (jint i = 0; i < n; i++) {
		intptr_t jt = (intptr_t)(*jni)->GetLongField(jni, ts[i], eetop);
		const char *os = jt ? *(const char *const *)(jt + osthread) : NULL;
		pid_t tid = os ? *(const pid_t *)(os + thread_id) : 0;
		if (tid > 0 && tid != mine) {
			java_thread_set(tid, (JNIEnv *)(jt + env_off));
			if (!(*jni)->GetLongField(jni, ts[i], eetop))
				java_thread_set(tid, NULL); /* it ended meanwhile */
			else
				got++;
		}
		(*jni)->DeleteLocalRef(jni, ts[i]);
	}
	jfree(ts);
	return got;
}

static jint attach_start(JavaVM *vm, const char *settings)
{
	char why[512];
	snprintf(g_attach_err, sizeof g_attach_err, "%s.err", settings);
	if (__sonde_attach_start(settings, why, sizeof why) < 0) {
		attach_error(why);
		return JNI_ERR;
	}
	agent_start(vm);
	JNIEnv *jni = NULL;
	if (!g_jvmti || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || !jni) {
		/* the reason is in log.xml; native profiling goes on */
		return JNI_OK;
	}
	if (attach_threads(g_jvmti, jni) < 0)
		__sonde_trace_log("warning",
				  "Java: the JVM does not say where its threads' ids and JNIEnv are "
				  "(vmStructs, java.lang.Thread.eetop); threads older than the attach have native "
				  "frames only");
	cb_vm_init(g_jvmti, jni, NULL);
	return JNI_OK;
}

static jint attach_stop(JavaVM *vm)
{
	(void)vm;
	jvmtiEnv *jvmti = g_jvmti;
	if (jvmti) {
		for (size_t i = 0; i < sizeof g_events / sizeof g_events[0]; i++)
			(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, g_events[i], NULL);
		cb_vm_death(jvmti, NULL);	     /* the hook removed, the tables written */
		(*jvmti)->DisposeEnvironment(jvmti); /* its capabilities go with it */
		g_jvmti = NULL;
	}
	if (__sonde_attach_stop() < 0) {
		attach_error("nothing was recording in this JVM");
		return JNI_ERR;
	}
	return JNI_OK;
}

SONDE_EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (options && !strncmp(options, "start=", 6))
		return attach_start(vm, options + 6);
	if (options && !strncmp(options, "stop=", 5)) {
		snprintf(g_attach_err, sizeof g_attach_err, "%s.err", options + 5);
		return attach_stop(vm);
	}
	return JNI_ERR;
}
