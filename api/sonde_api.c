/*
 * libsonde_api: the collector API (include/sonde/collector.h) for
 * programs to link, statically or dynamically.
 *
 * The collector (preloaded by `sonde collect`) exports the entry points
 * under internal names; they are looked up with dlsym(RTLD_DEFAULT) rather
 * than bound by the linker, so that the program runs without the
 * collector, and so that a copy of this code linked into an executable
 * (PIE or not) never shadows the collector's definitions.  The lookup
 * happens once per process; a pointer of 1 caches "not there".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

#include <sonde/collector.h>

#define NOT_THERE ((void *)1)

static _Atomic(void *) g_fn[4];
static const char *const g_names[4] = { "__sonde_api_sample", "__sonde_api_pause", "__sonde_api_resume",
					"__sonde_api_terminate" };

static void *entry(int i)
{
	void *f = atomic_load_explicit(&g_fn[i], memory_order_acquire);
	if (!f) {
		f = dlsym(RTLD_DEFAULT, g_names[i]);
		if (!f)
			f = NOT_THERE;
		atomic_store_explicit(&g_fn[i], f, memory_order_release);
	}
	return f == NOT_THERE ? NULL : f;
}

__attribute__((visibility("default"))) void sonde_sample(const char *label)
{
	void (*f)(const char *) = (void (*)(const char *))entry(0);
	if (f)
		f(label);
}

__attribute__((visibility("default"))) void sonde_pause(void)
{
	void (*f)(void) = (void (*)(void))entry(1);
	if (f)
		f();
}

__attribute__((visibility("default"))) void sonde_resume(void)
{
	void (*f)(void) = (void (*)(void))entry(2);
	if (f)
		f();
}

__attribute__((visibility("default"))) void sonde_terminate(void)
{
	void (*f)(void) = (void (*)(void))entry(3);
	if (f)
		f();
}
