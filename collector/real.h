/*
 * The real functions behind sonde's interposers: one family of macros for
 * the collector (collector/follow.c, interpose.c) and the tracing
 * libraries (tracers/tracer.h includes this).
 *
 * An interposer of NAME calls the definition that comes after sonde's
 * libraries in the lookup order, found with dlsym(RTLD_NEXT, "NAME") (or
 * dlvsym at a symbol version), kept in a pointer real_NAME:
 *
 *	REAL_DECL(fork);		static pointer, typed like fork (its
 *					prototype must be in scope)
 *	RESOLVE(fork);			look it up unless already known; the
 *					value (NULL when there is none)
 *	REAL(fork)()			the pointer, to call
 *
 * Every access is a relaxed atomic load or store: a pointer may be
 * resolved on one thread while another calls through it (sync.c resolves
 * them all at once, from whichever thread comes first), and on x86-64
 * that is a plain load.  Resolution allocates and takes the loader's lock:
 * never from a signal handler, nor between fork and exec in a child that
 * must not (follow.c resolves before forking).  Where a lookup must be
 * guarded (io.c interposes what dlsym itself calls), the file defines
 * REAL_LOOKUP (below); RESOLVE_WITH(NAME, expr) resolves with any
 * expression, and REAL_SET stores a pointer (sync.c: its stand-ins for
 * missing functions, and versioned look-ups).
 *
 * Needs _GNU_SOURCE (RTLD_NEXT, dlvsym) before the first system header.
 */
#ifndef SONDE_REAL_H
#define SONDE_REAL_H

#include <dlfcn.h>
#include <stddef.h>

#define REAL_DECL(name) static __typeof__(name) *real_##name

#define REAL(name) __atomic_load_n(&real_##name, __ATOMIC_RELAXED)

#define REAL_SET(name, p) __atomic_store_n(&real_##name, (__typeof__(real_##name))(p), __ATOMIC_RELAXED)

/* NAME after sonde's libraries: at version ver when that exists (ver
 * NULL: the default version). */
static inline void *real_lookup(const char *name, const char *ver)
{
	void *p = ver ? dlvsym(RTLD_NEXT, name, ver) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

#define RESOLVE_WITH(name, expr) (REAL(name) ? REAL(name) : (REAL_SET(name, expr), REAL(name)))

/* How RESOLVE looks a name up.  A file whose lookups must be guarded
 * (io.c: what dlsym calls itself must pass straight through) defines its
 * own before including this header. */
#ifndef REAL_LOOKUP
#define REAL_LOOKUP(name) real_lookup(name, NULL)
#endif

#define RESOLVE(name) RESOLVE_WITH(name, REAL_LOOKUP(#name))

#endif
