/*
 * The call stacks of another process, after the fact (remote_unwind.h):
 * elfutils' DWARF unwinder (libdwfl) over the process's objects as
 * /proc/PID/maps lists them, reading the registers and the copy of the
 * top of the stack a perf record holds instead of the process's memory.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/auxv.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "remote_unwind.h"

struct runw {
	Dwfl *dwfl;
	/* the sample being unwound */
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t sp, stack_len;
	struct sonde_frame *out;
	int n, max;
};

static pid_t cb_next_thread(Dwfl *d, void *arg, void **targ)
{
	(void)d, (void)arg, (void)targ;
	return 0;
}

static bool cb_get_thread(Dwfl *d, pid_t tid, void *arg, void **targ)
{
	(void)d, (void)tid;
	*targ = arg;
	return true;
}

static bool cb_memory_read(Dwfl *d, Dwarf_Addr addr, Dwarf_Word *out, void *arg)
{
	(void)d;
	const struct runw *u = arg;
	if (addr < u->sp || addr + 8 > u->sp + u->stack_len || addr + 8 < addr)
		return false;
	memcpy(out, u->stack + (addr - u->sp), 8);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *t, void *arg)
{
	const struct runw *u = arg;
	const uint64_t *r = u->regs;
	/* DWARF's order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	Dwarf_Word dw[17] = { r[RUNW_AX], r[RUNW_DX], r[RUNW_CX], r[RUNW_BX], r[RUNW_SI], r[RUNW_DI], r[RUNW_BP],
			      r[RUNW_SP] };
	for (int i = 0; i < 8; i++)
		dw[8 + i] = r[RUNW_R8 + i];
	dw[16] = r[RUNW_IP];
	return dwfl_thread_state_registers(t, 0, 17, dw);
}

static const Dwfl_Thread_Callbacks thread_cb = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* No separate debug files: unwinding needs .eh_frame only (and must not
 * ask a debuginfod server). */
static int no_debuginfo(Dwfl_Module *m, void **u, const char *mn, Dwarf_Addr a, const char *f, const char *dl,
			GElf_Word crc, char **out)
{
	(void)m, (void)u, (void)mn, (void)a, (void)f, (void)dl, (void)crc, (void)out;
	return -1;
}

static const Dwfl_Callbacks proc_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = no_debuginfo,
};

struct runw *runw_open(pid_t pid, char *err, size_t errlen)
{
	struct runw *u = calloc(1, sizeof *u);
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->dwfl = dwfl_begin(&proc_cb);
	if (!u->dwfl || dwfl_linux_proc_report(u->dwfl, pid) != 0 || dwfl_report_end(u->dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(u->dwfl, NULL, pid, &thread_cb, u)) {
		snprintf(err, errlen, "%s", dwfl_errmsg(-1));
		runw_close(u);
		return NULL;
	}
	return u;
}

void runw_close(struct runw *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

static int cb_frame(Dwfl_Frame *f, void *arg)
{
	struct runw *u = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(f, &pc, &act) || !pc || u->n >= u->max)
		return DWARF_CB_ABORT;
	/* the interrupted instruction exact, then return addresses */
	u->out[u->n] = (struct sonde_frame){ .pc = pc | (u->n ? 0 : SONDE_PC_EXACT),
		.kind = SONDE_FRAME_NATIVE, .exact = u->n == 0 };
	u->n++;
	return DWARF_CB_OK;
}

int runw_unwind(struct runw *u, pid_t tid, const uint64_t *regs, const uint8_t *stack, uint64_t len,
		struct sonde_frame *out, int max, uint16_t *flags)
{
	*flags = 0;
	if (max < 1)
		return 0;
	u->regs = regs;
	u->stack = stack;
	u->sp = regs[RUNW_SP];
	u->stack_len = len;
	u->out = out;
	u->n = 0;
	u->max = max;
	int r = dwfl_getthread_frames(u->dwfl, tid, cb_frame, u);
	if (!u->n) /* not even the pc: the registers' */
		out[u->n++] = (struct sonde_frame){ .pc = regs[RUNW_IP] | SONDE_PC_EXACT,
			.kind = SONDE_FRAME_NATIVE, .exact = true };
	/* the walk ends at the thread's first frame (no caller) or stops
	 * short (the copy's end, code it cannot read) */
	if (u->n >= max)
		*flags = SONDE_STACK_TRUNCATED;
	else if (r != 0)
		*flags = SONDE_STACK_INCOMPLETE;
	return u->n;
}

struct mapping {
	struct sonde_expw *w;
	uint32_t id; /* the last written: ids from 1, in the walk's order */
};

/* The vDSO is the kernel's, the same image in every 64-bit process it
 * runs: sonde's own is the recorded process's (a vdso.so in dir, as the
 * collector's copy is; its build id is the target's). */
static int save_own_vdso(const char *dir)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	/* the whole image: the loaded segments and the section headers
	 * (inside the mapping, past the last segment) */
	size_t len = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
			len = ph[i].p_offset + ph[i].p_filesz;
	char path[4200];
	snprintf(path, sizeof path, "%s/vdso.so", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	int rc = write(fd, eh, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	if (rc < 0)
		unlink(path);
	return rc;
}

static int map_module(Dwfl_Module *mod, void **up, const char *name, Dwarf_Addr start, void *arg)
{
	(void)up;
	struct mapping *m = arg;
	Dwarf_Addr lo, hi, bias = 0;
	const char *file = NULL;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, &file, NULL);
	if (!dwfl_module_getelf(mod, &bias))
		bias = start;
	const char *path = file ? file : name;
	/* libdwfl names the vDSO "[vdso: PID]" */
	bool vdso = !file && name && !strncmp(name, "[vdso", 5);
	if (!path || (path[0] != '/' && !vdso))
		return DWARF_CB_OK;
	if (vdso && save_own_vdso(sonde_expw_dir(m->w)) < 0)
		return DWARF_CB_OK;
	char bid[128] = "";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int nb = dwfl_module_build_id(mod, &bits, &vaddr);
	for (int i = 0; i < nb && i < 60; i++)
		snprintf(bid + 2 * i, 3, "%02x", bits[i]);
	sonde_expw_map(m->w, "<object id=\"%u\" time_ns=\"0\" event=\"load\" path=\"%s\" base=\"0x%llx\" "
			     "lo=\"0x%llx\" hi=\"0x%llx\" buildid=\"%s\"%s/>\n",
		       ++m->id, vdso ? "[vdso]" : path, (unsigned long long)bias, (unsigned long long)lo,
		       (unsigned long long)hi, bid, vdso ? " copy=\"vdso.so\"" : "");
	return DWARF_CB_OK;
}

void runw_write_map(struct runw *u, struct sonde_expw *w)
{
	struct mapping m = { w, 0 };
	dwfl_getmodules(u->dwfl, map_module, &m, 0);
	sonde_expw_map(w, "%s", "");
}

static uint64_t frames_hash(const struct sonde_frame *f, int n, uint16_t flags)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < n; i++)
		h = (h ^ (f[i].pc + 0x9e3779b97f4a7c15ull * (uint64_t)(f[i].kind + 1) + f[i].exact)) *
		    0x100000001b3ull;
	return h ^ (uint64_t)n ^ ((uint64_t)flags << 56);
}

uint64_t runw_intern(struct runw_stacks *s, const struct sonde_frame *f, int n, uint16_t flags)
{
	uint64_t h = frames_hash(f, n, flags);
	long i = u64map_get(&s->map, h);
	if (i >= 0)
		return s->ids[i];
	uint64_t id = 0;
	if (sonde_expw_frames(s->w, flags, (uint16_t)n, f, &id) < 0 ||
	    sonde_grow(&s->ids, &s->cap, s->n + 1, sizeof *s->ids, 1024) ||
	    u64map_put(&s->map, h, (uint32_t)s->n) < 0) {
		s->failed = 1;
		return id;
	}
	s->ids[s->n++] = id;
	return id;
}

void runw_stacks_release(struct runw_stacks *s)
{
	u64map_release(&s->map);
	free(s->ids);
	memset(s, 0, sizeof *s);
}

void runw_ring_copy(const uint8_t *data, uint64_t size, uint64_t at, void *out, size_t n)
{
	uint64_t o = at & (size - 1);
	size_t first = (size_t)(size - o) < n ? (size_t)(size - o) : n;
	memcpy(out, data + o, first);
	memcpy((uint8_t *)out + first, data, n - first);
}

static void log_text(struct sonde_expw *w, const char *s)
{
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			sonde_expw_log(w, "&quot;");
		else if (*c == '&')
			sonde_expw_log(w, "&amp;");
		else if (*c == '<')
			sonde_expw_log(w, "&lt;");
		else if ((unsigned char)*c >= 0x20)
			sonde_expw_log(w, "%c", *c);
	}
}

void runw_log_target(struct sonde_expw *w, pid_t pid, const char *name)
{
	char exe[4096] = "", cwd[4096] = "", path[64], cmd[4096] = "";
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
	n = readlink(path, cwd, sizeof cwd - 1);
	cwd[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmd, sizeof cmd - 1);
		close(fd);
		for (ssize_t i = 0; i + 1 < n; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		cmd[n > 0 ? n : 0] = 0;
	}
	sonde_expw_log(w, "<target pid=\"%d\" ppid=\"0\" cwd=\"", (int)pid);
	log_text(w, cwd);
	sonde_expw_log(w, "\" exe=\"");
	log_text(w, exe[0] || !name ? exe : name);
	sonde_expw_log(w, "\" command=\"");
	log_text(w, cmd[0] || !name ? cmd : name);
	sonde_expw_log(w, "\"/>\n");
}

int runw_parse_user(const uint64_t *p, const uint64_t *end, const uint64_t **regs, const uint8_t **stack,
		    uint64_t *len)
{
	*regs = NULL;
	*stack = NULL;
	*len = 0;
	if (end - p < 1)
		return -1;
	if (*p++ != PERF_SAMPLE_REGS_ABI_NONE) {
		if (end - p < RUNW_NREGS)
			return -1;
		*regs = p;
		p += RUNW_NREGS;
	}
	if (end - p < 1)
		return -1;
	uint64_t size = *p++;
	if (size) {
		/* the copy, then its used size */
		if (size / 8 + 1 > (uint64_t)(end - p))
			return -1;
		*stack = (const uint8_t *)p;
		*len = p[size / 8] < size ? p[size / 8] : size;
	}
	return 0;
}
