/*
 * The shapers' table (shape.h) and what they share: the objects that are
 * the system's, below any runtime.
 */
#include <string.h>

#include "model/shape.h"

const struct sonde_shaper *const sonde_shapers[] = { &sonde_shaper_omp, &sonde_shaper_java, NULL };

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

bool sonde_shape_system_object(const struct sonde_object *o)
{
	if (!o || !o->name)
		return true; /* an address in no object: the runtime's jump, a trampoline */
	return prefix(o->name, "libc.so") || prefix(o->name, "libc-") || prefix(o->name, "libpthread") ||
	       prefix(o->name, "ld-linux") || prefix(o->name, "ld64.so") || prefix(o->name, "librt") ||
	       !strcmp(o->name, "[vdso]") || prefix(o->name, "linux-vdso") || prefix(o->name, "[kernel");
}

bool sonde_shape_any(const struct sonde_exp *const *exps, size_t n, bool *oom)
{
	*oom = false;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; sonde_shapers[k]; k++) {
			void *st = sonde_shapers[k]->open(exps[i], oom);

			if (*oom)
				return false;
			if (st) {
				sonde_shapers[k]->close(st);
				return true;
			}
		}
	return false;
}
