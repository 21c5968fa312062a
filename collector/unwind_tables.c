/*
 * The unwinder's object table (see unwind.h): built with dl_iterate_phdr in
 * normal context and published to handlers through g_cur.  Nothing here
 * runs in a signal handler.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "sys_mmap.h"
#include <time.h>
#include <unistd.h>

#include "unwind.h"
#include "unwind_internal.h"

static struct uw_table *g_buf[2];
static pthread_mutex_t g_refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_gen;

/* ------------------------------------------------------------------ */
/* uw_refresh (normal context)                                         */
/* ------------------------------------------------------------------ */

/* Shell sort by lo: no malloc (qsort may allocate). */
static void sort_ranges(struct uw_range *r, int n)
{
	static const int gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		int gap = gaps[g];
		for (int i = gap; i < n; i++) {
			struct uw_range tmp = r[i];
			int j = i;
			for (; j >= gap && r[j - gap].lo > tmp.lo; j -= gap)
				r[j] = r[j - gap];
			r[j] = tmp;
		}
	}
}

/* End of the readable PT_LOAD segment of info holding [addr, addr+len), or
 * 0 if there is none. */
static uintptr_t segment_end(const struct dl_phdr_info *info, uintptr_t addr,
			     size_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		uintptr_t hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
		    addr >= lo && addr < hi && hi - addr >= len)
			return hi;
	}
	return 0;
}

/* Validate an object's .eh_frame_hdr and fill hdr/table/nfde/eh_lo/eh_hi.
 * Leaves hdr = 0 (no CFI) for anything unusual. */
static void setup_hdr(struct uw_object *o, const struct dl_phdr_info *info,
		      uintptr_t hdr, size_t hdr_size)
{
	struct cur c = { (const uint8_t *)hdr, (const uint8_t *)hdr + hdr_size,
			 false };
	uint64_t ehp, cnt;

	o->hdr = 0;
	if (hdr_size < 12 || !segment_end(info, hdr, hdr_size) ||
	    c_u8(&c) != 1)	/* version */
		return;
	uint8_t ptr_enc = c_u8(&c), cnt_enc = c_u8(&c), tab_enc = c_u8(&c);
	/* The table must be the usual one: the binary search reads it
	 * directly as pairs of int32 relative to the header. */
	if (ptr_enc == DW_EH_PE_omit || cnt_enc == DW_EH_PE_omit ||
	    tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	if ((ptr_enc & DW_EH_PE_indirect) || (cnt_enc & DW_EH_PE_indirect) ||
	    !c_encoded(&c, ptr_enc, hdr, NULL, &ehp) ||
	    !c_encoded(&c, cnt_enc, hdr, NULL, &cnt))
		return;
	if (((uintptr_t)c.p & 3) || cnt > UINT32_MAX ||
	    cnt * 8 > (uint64_t)(c.end - c.p))
		return;
	/* CIE/FDE reads are bounded by the end of the segment holding
	 * .eh_frame (its size is not recorded anywhere cheaper). */
	uintptr_t end = segment_end(info, (uintptr_t)ehp, 1);
	if (!end)
		return;
	o->eh_lo = (uintptr_t)ehp;
	o->eh_hi = end;
	o->table = (uintptr_t)c.p;
	o->nfde = (uint32_t)cnt;
	o->hdr = hdr;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct uw_table *t = arg;
	struct uw_object *o;
	uintptr_t hdr = 0;
	size_t hdr_size = 0;
	int nload = 0;

	(void)size;
	if (t->nobj == UW_MAX_OBJECTS) {
		t->overflow++;
		return 0;
	}
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			nload++;
	if (t->nexec + nload > UW_MAX_RANGES || t->nread + nload > UW_MAX_RANGES) {
		t->overflow++;
		return 0;
	}
	o = &t->obj[t->nobj];
	memset(o, 0, sizeof(*o));
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = lo;
			hdr_size = ph->p_memsz;
		}
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		struct uw_range r = { lo, lo + ph->p_memsz, (uint32_t)t->nobj };
		if (ph->p_flags & PF_X)
			t->exec[t->nexec++] = r;
		if (ph->p_flags & PF_R)
			t->rd[t->nread++] = r;
	}
	if (hdr)
		setup_hdr(o, info, hdr, hdr_size);
	t->nobj++;
	return 0;
}

/* The incremental scan: the loader lists objects in a fixed order and
 * appends new ones, so while the objects seen so far are the previous
 * table's, in order, they are kept as they are, and only the ones after
 * them are read.  Anything else (an object gone, or one inserted before
 * the last known: another namespace) stops the scan for a full rebuild. */
static int add_object_inc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct uw_table *t = arg;

	if (t->inc_pos < t->inc_base) {
		const struct uw_object *o = &t->obj[t->inc_pos];

		if (o->bias != info->dlpi_addr || o->phdr != info->dlpi_phdr) {
			t->inc_ok = false;
			return 1;
		}
		t->inc_pos++;
		return 0;
	}
	return add_object(info, size, arg);
}

/* Insertion sort of ranges whose first `sorted` are in order: the
 * incremental refresh appends a few, and this costs one pass over the
 * rest for each. */
static void insert_ranges(struct uw_range *r, int sorted, int n)
{
	for (int i = sorted; i < n; i++) {
		struct uw_range tmp = r[i];
		int j = i;
		for (; j > 0 && r[j - 1].lo > tmp.lo; j--)
			r[j] = r[j - 1];
		r[j] = tmp;
	}
}

/* Wait until nobody walks with t.  A walk takes microseconds; give up
 * after about a second (a thread stopped by a debugger inside a handler). */
static bool drain(struct uw_table *t)
{
	for (int i = 0; i < 10100; i++) {
		if (atomic_load(&t->users) == 0)
			return true;
		if (i < 100) {
			syscall(SYS_sched_yield);
		} else {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	return false;
}

/* fork: keep the refresh mutex consistent, and in the child forget the
 * walks of threads that do not exist there (their user counts would
 * otherwise block every later refresh). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_refresh_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g_refresh_lock);
}

static void atfork_child(void)
{
	for (int i = 0; i < 2; i++)
		if (g_buf[i])
			atomic_store(&g_buf[i]->users, 0);
	pthread_mutex_unlock(&g_refresh_lock);
}

/* The refresh in progress, between uw_refresh_begin and uw_refresh_end
 * (under g_refresh_lock). */
static struct uw_table *g_building, *g_replaced;
static bool g_incremental;

int uw_refresh_begin(void)
{
	pthread_mutex_lock(&g_refresh_lock);
	if (!g_buf[0]) {
		for (int i = 0; i < 2; i++) {
			void *p = sonde_mmap(NULL, sizeof(struct uw_table),
				       PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				if (i)
					sonde_munmap(g_buf[0], sizeof(struct uw_table));
				g_buf[0] = NULL;
				pthread_mutex_unlock(&g_refresh_lock);
				return -1;
			}
			g_buf[i] = p;
		}
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	}
	struct uw_table *old = atomic_load(&g_cur);
	struct uw_table *nb = old == g_buf[0] ? g_buf[1] : g_buf[0];

	/* A handler may still hold nb from two refreshes ago. */
	if (!drain(nb)) {
		pthread_mutex_unlock(&g_refresh_lock);
		return -1;
	}
	nb->gen = ++g_gen;
	/* A dlopen adds objects at the end: copy the current table and read
	 * only those (a full rebuild per dlopen made loading N libraries
	 * cost N^2).  The full rebuild stays for everything else. */
	g_incremental = old && !old->overflow;
	if (g_incremental) {
		nb->nobj = old->nobj;
		nb->nexec = old->nexec;
		nb->nread = old->nread;
		nb->overflow = 0;
		memcpy(nb->obj, old->obj, (size_t)old->nobj * sizeof(*nb->obj));
		memcpy(nb->exec, old->exec, (size_t)old->nexec * sizeof(*nb->exec));
		memcpy(nb->rd, old->rd, (size_t)old->nread * sizeof(*nb->rd));
		nb->inc_pos = 0;
		nb->inc_base = old->nobj;
		nb->inc_ok = true;
	} else {
		nb->nobj = nb->nexec = nb->nread = nb->overflow = 0;
	}
	g_building = nb;
	g_replaced = old;
	return 0;
}

void uw_refresh_visit(struct dl_phdr_info *info)
{
	struct uw_table *t = g_building;

	if (!t)
		return;
	if (!g_incremental)
		add_object(info, sizeof(*info), t);
	else if (t->inc_ok)
		add_object_inc(info, sizeof(*info), t);
}

int uw_refresh_end(void)
{
	struct uw_table *nb = g_building, *old = g_replaced;

	if (!nb)
		return -1;
	if (g_incremental && nb->inc_ok && nb->inc_pos == nb->inc_base) {
		insert_ranges(nb->exec, old->nexec, nb->nexec);
		insert_ranges(nb->rd, old->nread, nb->nread);
	} else {
		if (g_incremental) { /* an object went away: read them all */
			nb->nobj = nb->nexec = nb->nread = nb->overflow = 0;
			dl_iterate_phdr(add_object, nb);
		}
		sort_ranges(nb->exec, nb->nexec);
		sort_ranges(nb->rd, nb->nread);
	}
	g_building = g_replaced = NULL;
	atomic_store(&g_cur, nb);
	/* After this no handler reads through the old table (and thus no
	 * object missing from the new one). */
	if (old)
		drain(old);
	pthread_mutex_unlock(&g_refresh_lock);
	return 0;
}

static int visit_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uw_refresh_visit(info);
	return 0;
}

int uw_refresh(void)
{
	if (uw_refresh_begin() < 0)
		return -1;
	dl_iterate_phdr(visit_cb, NULL);
	return uw_refresh_end();
}

int uw_object_count(void)
{
	struct uw_table *t = atomic_load(&g_cur);
	return t ? t->nobj : 0;
}
