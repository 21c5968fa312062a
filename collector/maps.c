/*
 * map.xml: the load objects of the target over time.  Rescanned with
 * dl_iterate_phdr at start-up and after every dlopen/dlclose; objects that
 * appeared are logged as loads, objects that vanished as unloads.  The
 * vDSO, which has no file, is copied into the experiment (vdso.so) so that
 * samples in it can be symbolised later.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "collector.h"

/* Objects loaded after the target installed a seccomp filter are noted
 * too: every call goes through the collector's gate (sysgate.c). */
#define open(...) ((int)syscall(SYS_open, __VA_ARGS__))
#define readlink(p, b, n) ((ssize_t)syscall(SYS_readlink, p, b, n))
#define write(fd, b, n) ((ssize_t)syscall(SYS_write, fd, b, n))
#define close(fd) syscall(SYS_close, fd)
#include "unwind.h"

struct obj {
	uintptr_t base, lo, hi;
	char *path;
	char *raw; /* the loader's name for it (dlpi_name), to know it again cheaply */
	const void *phdr; /* the loader's program headers (dlpi_phdr) */
	char buildid[65];
	int id;
	int seen;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj *g_objs;
static size_t g_nobjs, g_cap;
static int g_next_id = 1;
/* map.xml is open only while an update writes to it: one descriptor
 * fewer in the target's table, and none it could take between updates.
 * An update is rare (start-up, dlopen, dlclose) and the open costs a few
 * microseconds. */
static struct cfile g_map = { .fd = -1 };
static char g_map_path[4200];
static int g_map_ok; /* created; 0: nothing is written */
static int g_map_warned;
static char g_exe[PATH_MAX];
static char g_expdir[4096];

int maps_open(const char *expdir)
{
	snprintf(g_map_path, sizeof g_map_path, "%s/map.xml", expdir);
	snprintf(g_expdir, sizeof g_expdir, "%s", expdir);
	g_map_ok = 0;
	if (cfile_open(&g_map, g_map_path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL, 0) < 0)
		return -1;
	static const char head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<map>\n";
	int rc = cfile_write(&g_map, head, sizeof head - 1);
	cfile_close(&g_map);
	if (rc < 0)
		return -1;
	g_map_ok = 1;
	ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
	g_exe[n > 0 ? n : 0] = 0;
	return 0;
}

/* Append one record, opening map.xml for the rest of this update. */
static void map_write(const char *buf, size_t len)
{
	if (!g_map_ok)
		return;
	if (atomic_load(&g_map.fd) < 0 && cfile_open(&g_map, g_map_path, O_WRONLY | O_APPEND, 0) < 0) {
		if (!g_map_warned++)
			log_event_text("warning", "cannot open map.xml again (the target may restrict opening "
						  "files); later loads and unloads are not recorded");
		return;
	}
	cfile_write(&g_map, buf, len);
}

void maps_close(void)
{
	cfile_close(&g_map);
	g_map_ok = 0;
}

/* In a fork child: the objects are to be listed again in its own map.xml;
 * the lock may have been held by a thread that does not exist here. */
void maps_fork_child(void)
{
	maps_close();
	pthread_mutex_init(&g_lock, NULL);
	for (size_t i = 0; i < g_nobjs; i++) {
		free(g_objs[i].path);
		free(g_objs[i].raw);
	}
	g_nobjs = 0;
	g_next_id = 1;
}

static void read_buildid(struct dl_phdr_info *info, char *out)
{
	out[0] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const unsigned char *desc =
				(const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
			if ((const char *)desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				unsigned n = nh->n_descsz > 32 ? 32 : nh->n_descsz;
				for (unsigned k = 0; k < n; k++) {
					out[2 * k] = "0123456789abcdef"[desc[k] >> 4];
					out[2 * k + 1] = "0123456789abcdef"[desc[k] & 15];
				}
				out[2 * n] = 0;
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

struct scan {
	struct obj *v;
	size_t n, cap;
	int uw; /* the unwinder's refresh walks along */
};

/* g_objs is kept sorted by base between updates, so that a scan knows an
 * object already listed by a binary search on what the loader hands the
 * callback (its base, program headers and name), without touching the
 * object's own memory (reading every object's program headers at each
 * dlopen was mostly cache misses), and skips the costly part (realpath's
 * system calls, the build id): a dlopen of the 300th library used to redo
 * that work for the 299 others, and a linear match of each against all,
 * which made loading N libraries cost N^2 realpaths and N^3 comparisons. */
static int obj_cmp(const void *a, const void *b)
{
	const struct obj *x = a, *y = b;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

static struct obj *known(const struct dl_phdr_info *info)
{
	uintptr_t base = info->dlpi_addr;
	size_t a = 0, b = g_nobjs;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (g_objs[m].base < base)
			a = m + 1;
		else
			b = m;
	}
	const char *raw = info->dlpi_name ? info->dlpi_name : "";
	for (; a < g_nobjs && g_objs[a].base == base; a++)
		if (g_objs[a].phdr == info->dlpi_phdr && g_objs[a].raw && !strcmp(g_objs[a].raw, raw))
			return &g_objs[a];
	return NULL;
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct scan *sc = data;
	if (sc->uw)
		uw_refresh_visit(info);
	struct obj *k = known(info);
	if (k && !k->seen) {
		k->seen = 1;
		return 0;
	}
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi == 0)
		return 0;
	if (sc->n == sc->cap) {
		size_t nc = sc->cap ? sc->cap * 2 : 64;
		struct obj *nv = realloc(sc->v, nc * sizeof *nv);
		if (!nv)
			return 0; /* not listed; the walk goes on for the unwinder */
		sc->v = nv;
		sc->cap = nc;
	}
	struct obj *o = &sc->v[sc->n++];
	memset(o, 0, sizeof *o);
	o->base = info->dlpi_addr;
	o->lo = lo;
	o->hi = hi;
	const char *name = info->dlpi_name;
	if (lo == getauxval(AT_SYSINFO_EHDR) || (lo <= getauxval(AT_SYSINFO_EHDR) && getauxval(AT_SYSINFO_EHDR) < hi))
		name = "[vdso]";
	else if (!name || !*name)
		name = g_exe;
	char real[PATH_MAX];
	if (name[0] != '[' && !sysgate_active() && realpath(name, real))
		name = real;
	o->path = strdup(name);
	o->raw = strdup(info->dlpi_name ? info->dlpi_name : "");
	o->phdr = info->dlpi_phdr;
	read_buildid(info, o->buildid);
	return 0;
}

static void emit_load(const struct obj *o, uint64_t t)
{
	char mem[PATH_MAX * 2 + 512];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<object");
	xb_attr_u64(&b, "id", (uint64_t)o->id);
	xb_attr_u64(&b, "time_ns", t);
	xb_attr_str(&b, "event", "load");
	xb_attr_str(&b, "path", o->path ? o->path : "?");
	xb_attr_hex(&b, "base", o->base);
	xb_attr_hex(&b, "lo", o->lo);
	xb_attr_hex(&b, "hi", o->hi);
	xb_attr_str(&b, "buildid", o->buildid);
	if (o->path && !strcmp(o->path, "[vdso]"))
		xb_attr_str(&b, "copy", "vdso.so");
	xb_str(&b, "/>\n");
	map_write(mem, b.len);
}

static void emit_unload(const struct obj *o)
{
	char mem[256];
	struct xbuf b;
	xb_init(&b, mem, sizeof mem);
	xb_str(&b, "<object");
	xb_attr_u64(&b, "id", (uint64_t)o->id);
	xb_attr_u64(&b, "time_ns", now_ns());
	xb_attr_str(&b, "event", "unload");
	xb_str(&b, "/>\n");
	map_write(mem, b.len);
}

static void save_vdso(const struct obj *o)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/vdso.so", g_expdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* The whole ELF image, section headers included (they lie past the
	 * last PT_LOAD segment's end but inside the vDSO's mapping), so that
	 * ordinary ELF tools can read the copy. */
	size_t len = o->hi - o->lo;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)o->lo;
	size_t full = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	size_t mapped = (len + 4095) & ~(size_t)4095;
	if (!memcmp(eh->e_ident, ELFMAG, SELFMAG) && full > len && full <= mapped)
		len = full;
	if (write(fd, (const void *)o->lo, len) < 0)
		log_event_text("warning", "cannot save a copy of the vDSO");
	close(fd);
}

void maps_update(void)
{
	maps_update_since(0);
}

void maps_update_since(uint64_t since)
{
	__sonde_quiet++;
	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < g_nobjs; i++)
		g_objs[i].seen = 0;
	struct scan sc = { 0 };
	size_t added = 0, nold_gone = 0;
	sc.uw = uw_refresh_begin() == 0;
	dl_iterate_phdr(scan_cb, &sc); /* marks the known objects seen; sc: the new ones */
	for (size_t k = 0; k < sc.n; k++) {
		struct obj *n = &sc.v[k];
		if (!n->path || !n->raw) {
			free(n->path);
			free(n->raw);
			continue;
		}
		if (g_nobjs == g_cap) {
			size_t nc = g_cap ? g_cap * 2 : 64;
			struct obj *nv = realloc(g_objs, nc * sizeof *nv);
			if (!nv) {
				free(n->path);
				free(n->raw);
				continue;
			}
			g_objs = nv;
			g_cap = nc;
		}
		n->id = g_next_id++;
		n->seen = 1;
		g_objs[g_nobjs++] = *n;
		added++;
		emit_load(n, since ? since : now_ns());
		if (!strcmp(n->path, "[vdso]"))
			save_vdso(n);
	}
	free(sc.v);
	/* Unloads, keeping the order of the rest; then the new objects
	 * (appended above) are put in their places: one pass each, where a
	 * sort of all would cost N log N per dlopen. */
	size_t kept = 0, nold = g_nobjs - added;
	for (size_t i = 0; i < g_nobjs; i++) {
		if (!g_objs[i].seen) {
			emit_unload(&g_objs[i]);
			free(g_objs[i].path);
			free(g_objs[i].raw);
			if (i < nold)
				nold_gone++;
			continue;
		}
		g_objs[kept++] = g_objs[i];
	}
	g_nobjs = kept;
	for (size_t i = nold - nold_gone; i < g_nobjs; i++) {
		struct obj tmp = g_objs[i];
		size_t j = i;
		for (; j > 0 && obj_cmp(&g_objs[j - 1], &tmp) > 0; j--)
			g_objs[j] = g_objs[j - 1];
		g_objs[j] = tmp;
	}
	if (!sc.uw || uw_refresh_end() < 0)
		log_event_text("warning", "cannot build the unwind tables for a load object");
	/* Traced events carry the tracing clock's last tick, up to a tick
	 * early: one made just after a dlclose and dlopen would be stamped
	 * before the unload and load written above, and the reader would
	 * look its addresses up in the library that held them before.  No
	 * event after this point is stamped before them. */
	trace_clock_raise(now_ns() + 1);
	cfile_close(&g_map);
	pthread_mutex_unlock(&g_lock);
	__sonde_quiet--;
}

/* ---- the module (collector.h) ---- */

static void maps_module_open(struct clock_settings *cs)
{
	(void)cs;
	if (maps_open(g_col.expdir) < 0)
		log_event_text("warning", "cannot create map.xml");
	maps_update();
}

/* The JIT map (perf's /tmp/perf-PID.map), copied as the experiment ends. */
static void maps_end(struct xbuf *b)
{
	(void)b;
	jitmap_save(g_col.expdir, g_col.pid);
}

const struct collector_module maps_module = {
	.name = "maps",
	.open = maps_module_open,
	.end = maps_end,
	.fork_child = maps_fork_child,
	.close_fds = maps_close,
};
