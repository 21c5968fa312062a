/*
 * disasm: a load object's machine code, disassembled with capstone
 * (lib/symbols/disasm.h).
 *
 * Open reads the ELF header and program headers with libelf and keeps the
 * file descriptor and the PT_LOAD segments' file-backed parts; a range reads
 * just its bytes with pread, segment by segment, and decodes them with
 * cs_disasm_iter into one reused cs_insn.
 */
#define _GNU_SOURCE
#include "base/grow.h"
#include "symbols/disasm.h"
#include "base/partition.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The longest instruction (x86): bytes read past hi so that the last
 * instruction starting before hi is whole. */
#define INSN_MAX 15

/* The file-backed part of a PT_LOAD segment: [vaddr, vaddr + size) is at
 * offset in the file. */
struct seg {
	uint64_t vaddr, size, offset;
};

struct sonde_disasm {
	char *path;
	int fd;
	unsigned machine;
	csh cs;
	cs_insn *insn;
	struct seg *segs; /* by vaddr */
	size_t nsegs;
};

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* e_machine as readelf names it, for messages. */
static const char *machine_name(unsigned m, char *buf, size_t len)
{
	static const struct {
		unsigned em;
		const char *name;
	} names[] = {
		{ EM_SPARC, "SPARC" },	     { EM_68K, "MC68000" },	    { EM_MIPS, "MIPS" },
		{ EM_PARISC, "HPPA" },	     { EM_SPARCV9, "SPARC v9" },    { EM_PPC, "PowerPC" },
		{ EM_PPC64, "PowerPC64" },   { EM_S390, "IBM S/390" },	    { EM_ARM, "ARM" },
		{ EM_SH, "Renesas / SuperH SH" }, { EM_IA_64, "Intel IA-64" }, { EM_RISCV, "RISC-V" },
		{ EM_LOONGARCH, "LoongArch" }, { EM_BPF, "Linux BPF" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].em == m)
			return names[i].name;
	snprintf(buf, len, "%u", m);
	return buf;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The PT_LOAD segments' file-backed parts, clipped to the file's size (a
 * truncated file has as many bytes as it has).  0, or -1 with err set. */
static int read_segments(struct sonde_disasm *d, Elf *elf, uint64_t file_size, char *err, size_t errlen)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0) {
		say(err, errlen, "'%s': cannot read program headers: %s", d->path, elf_errmsg(-1));
		return -1;
	}
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs) {
		say(err, errlen, "'%s': out of memory", d->path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			say(err, errlen, "'%s': cannot read program header %zu: %s", d->path, i, elf_errmsg(-1));
			return -1;
		}
		if (ph.p_type != PT_LOAD || ph.p_offset >= file_size)
			continue;
		uint64_t size = ph.p_filesz;

		if (size > file_size - ph.p_offset)
			size = file_size - ph.p_offset;
		if (size > UINT64_MAX - ph.p_vaddr)
			size = UINT64_MAX - ph.p_vaddr;
		if (size)
			d->segs[d->nsegs++] = (struct seg){ ph.p_vaddr, size, ph.p_offset };
	}
	qsort(d->segs, d->nsegs, sizeof(*d->segs), cmp_seg);
	return 0;
}

/* capstone is loaded on the first disassembly, not linked: its
 * relocations (77,000 in capstone 4, every architecture's tables) cost
 * 0.8 ms at every start of sonde, and most commands (collect first of
 * all, whose start-up counts in the target's cost) never disassemble. */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CAPSTONE_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	const char *(*strerror)(cs_err);
	char error[256];
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
	void *h = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(cs.error, sizeof cs.error, "cannot load %s: %s", CAPSTONE_SONAME, dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	*(void **)&cs.strerror = dlsym(h, "cs_strerror");
	if (!cs.open || !cs.option || !cs.malloc || !cs.disasm_iter || !cs.free || !cs.close || !cs.strerror) {
		snprintf(cs.error, sizeof cs.error, "%s lacks the functions sonde uses", CAPSTONE_SONAME);
		cs.open = NULL;
	}
}

/* The capstone handle for the file's machine.  0, or -1 with err set. */
static int open_capstone(struct sonde_disasm *d, const GElf_Ehdr *eh, char *err, size_t errlen)
{
	cs_arch arch;
	cs_mode mode;
	char num[16];

	switch (eh->e_machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86, mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86, mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		/* Little-endian also in aarch64_be files: AArch64 fetches
		 * instructions little-endian whatever the data endianness. */
		arch = CS_ARCH_ARM64, mode = CS_MODE_LITTLE_ENDIAN;
		break;
	default:
		say(err, errlen, "'%s': machine '%s' is not supported (x86-64, i386, aarch64 are)", d->path,
		    machine_name(eh->e_machine, num, sizeof(num)));
		return -1;
	}
	pthread_once(&cs_once, cs_load);
	if (!cs.open) {
		say(err, errlen, "'%s': capstone: %s", d->path, cs.error);
		return -1;
	}
	cs_err e = cs.open(arch, mode, &d->cs);

	if (e == CS_ERR_OK && arch == CS_ARCH_X86)
		e = cs.option(d->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	if (e == CS_ERR_OK)
		e = cs.option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (e == CS_ERR_OK && !(d->insn = cs.malloc(d->cs)))
		e = CS_ERR_MEM;
	if (e != CS_ERR_OK) {
		say(err, errlen, "'%s': capstone: %s", d->path, cs.strerror(e));
		return -1;
	}
	d->machine = eh->e_machine;
	return 0;
}

struct sonde_disasm *sonde_disasm_open(const char *path, char *err, size_t errlen)
{
	struct sonde_disasm *d = calloc(1, sizeof(*d));
	struct stat st;
	Elf *elf = NULL;
	GElf_Ehdr eh;

	if (!d || !(d->path = strdup(path))) {
		free(d);
		say(err, errlen, "'%s': out of memory", path);
		return NULL;
	}
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
	d->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (d->fd < 0 || fstat(d->fd, &st) != 0) {
		say(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		say(err, errlen, "cannot open '%s': %s", path, strerror(EISDIR));
		goto fail;
	}
	elf_version(EV_CURRENT);
	if (!S_ISREG(st.st_mode) || !(elf = elf_begin(d->fd, ELF_C_READ, NULL)) ||
	    elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		say(err, errlen, "'%s' is not an ELF file", path);
		goto fail;
	}
	if (open_capstone(d, &eh, err, errlen) != 0 || read_segments(d, elf, (uint64_t)st.st_size, err, errlen) != 0)
		goto fail;
	elf_end(elf);
	return d;
fail:
	elf_end(elf);
	sonde_disasm_close(d);
	return NULL;
}

void sonde_disasm_close(struct sonde_disasm *d)
{
	if (!d)
		return;
	if (d->insn)
		cs.free(d->insn, 1);
	if (d->cs)
		cs.close(&d->cs);
	if (d->fd >= 0)
		close(d->fd);
	free(d->segs);
	free(d->path);
	free(d);
}

unsigned sonde_disasm_machine(const struct sonde_disasm *d)
{
	return d->machine;
}

/* ---- classification ------------------------------------------------------ */

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* x86: the groups say call/jump/ret (a far return "lret" is a return,
 * "iret" is not); a direct branch has one immediate operand (a far
 * "ljmp $seg, $off" has two and is not one). */
static void classify_x86(const cs_insn *in, struct sonde_insn *o)
{
	const cs_x86 *x = &in->detail->x86;

	o->is_call = in_group(in, CS_GRP_CALL);
	o->is_ret = in_group(in, CS_GRP_RET);
	o->is_jump = !o->is_call && !o->is_ret && in_group(in, CS_GRP_JUMP);
	/* capstone 4 leaves the loops out of the jump group (jrcxz is in) */
	if (in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE || in->id == X86_INS_LOOPNE)
		o->is_jump = true;
	if ((o->is_call || o->is_jump) && x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		o->has_target = true;
		o->target = (uint64_t)x->operands[0].imm;
	}
}

/* aarch64: by instruction (capstone 4 puts bl and ret in no call/ret
 * group); the target of b, b.cond, bl, cbz/cbnz, tbz/tbnz is the last
 * immediate operand. */
static void classify_arm64(const cs_insn *in, struct sonde_insn *o)
{
	const cs_arm64 *a = &in->detail->arm64;
	bool direct = false;

	switch (in->id) {
	case ARM64_INS_BL:
		direct = true;
		/* fall through */
	case ARM64_INS_BLR:
		o->is_call = true;
		break;
	case ARM64_INS_RET:
		o->is_ret = true;
		break;
	case ARM64_INS_B:
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		direct = true;
		/* fall through */
	case ARM64_INS_BR:
		o->is_jump = true;
		break;
	default:
		o->is_call = in_group(in, CS_GRP_CALL);
		o->is_ret = in_group(in, CS_GRP_RET);
		o->is_jump = !o->is_call && !o->is_ret && in_group(in, CS_GRP_JUMP);
		break;
	}
	if (direct && a->op_count > 0 && a->operands[a->op_count - 1].type == ARM64_OP_IMM) {
		o->has_target = true;
		o->target = (uint64_t)a->operands[a->op_count - 1].imm;
	}
}

/* Near branches without the operand-size suffix that capstone 4 gives
 * them in AT&T syntax on i386 ("calll", "jmpl", "retl"; "callq"... on
 * x86-64 in other builds of it), as objdump prints them since binutils
 * 2.35: "call", "bnd jmp", "ret".  The far "lcalll", "ljmpl", "lretl" and
 * the 16-bit "callw", "retw" keep theirs, as in objdump. */
static void drop_branch_suffix(struct sonde_insn *o, char suffix)
{
	static const char *const near[] = { "call", "jmp", "ret" };
	char *m = strrchr(o->mnemonic, ' '); /* after the prefixes */
	size_t n;

	m = m ? m + 1 : o->mnemonic;
	n = strlen(m);
	if (n < 2 || m[n - 1] != suffix)
		return;
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		if (strlen(near[i]) == n - 1 && !strncmp(m, near[i], n - 1)) {
			m[n - 1] = 0;
			return;
		}
}

static void convert(const struct sonde_disasm *d, const cs_insn *in, struct sonde_insn *o)
{
	memset(o, 0, sizeof(*o));
	o->addr = in->address;
	o->size = (uint8_t)(in->size < sizeof(o->bytes) ? in->size : sizeof(o->bytes));
	memcpy(o->bytes, in->bytes, o->size);
	snprintf(o->mnemonic, sizeof(o->mnemonic), "%s", in->mnemonic);
	snprintf(o->operands, sizeof(o->operands), "%s", in->op_str);
	if (d->machine == EM_AARCH64) {
		classify_arm64(in, o);
	} else {
		classify_x86(in, o);
		drop_branch_suffix(o, d->machine == EM_X86_64 ? 'q' : 'l');
	}
}

/* ---- ranges -------------------------------------------------------------- */

struct insns {
	struct sonde_insn *v;
	size_t n, cap;
};

static struct sonde_insn *push(struct insns *t)
{
	if (sonde_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
		return NULL;
	return &t->v[t->n++];
}

/* Decodes buf (n bytes at address addr), keeping the instructions that
 * start before hi.  0, or -1 when out of memory. */
static int decode(struct sonde_disasm *d, const uint8_t *buf, size_t n, uint64_t addr, uint64_t hi,
		  struct insns *t)
{
	const uint8_t *p = buf;
	size_t left = n;

	while (left > 0 && addr < hi) {
		struct sonde_insn *o = push(t);

		if (!o)
			return -1;
		if (cs.disasm_iter(d->cs, &p, &left, &addr, d->insn)) {
			convert(d, d->insn, o);
			continue;
		}
		/* undecodable: a byte on x86, a word on aarch64 (whose
		 * instructions are aligned words: one byte on would not
		 * resynchronise) */
		size_t bad = d->machine == EM_AARCH64 && left >= 4 ? 4 : 1;

		memset(o, 0, sizeof(*o));
		o->addr = addr;
		o->size = (uint8_t)bad;
		memcpy(o->bytes, p, bad);
		snprintf(o->mnemonic, sizeof(o->mnemonic), "(bad)");
		p += bad, left -= bad, addr += bad;
	}
	return 0;
}

/* The file-backed bytes of [lo, end) that start a run at lo: as many as
 * adjacent segments hold without a gap, read into *buf (malloc'ed).  The
 * number of bytes, 0 when lo is in no segment, -1 with err set. */
static long read_run(struct sonde_disasm *d, uint64_t lo, uint64_t end, uint8_t **buf, char *err, size_t errlen)
{
	size_t n = 0;
	uint64_t a = lo;

	*buf = NULL;
	for (size_t i = 0; i < d->nsegs && a < end; i++) {
		const struct seg *s = &d->segs[i];

		if (a < s->vaddr || a - s->vaddr >= s->size)
			continue;
		uint64_t take = s->vaddr + s->size - a;

		if (take > end - a)
			take = end - a;
		if (take > (uint64_t)(LONG_MAX - n)) {
			say(err, errlen, "'%s': range 0x%" PRIx64 "-0x%" PRIx64 " is too large", d->path, lo, end);
			goto fail;
		}
		uint8_t *nb = realloc(*buf, n + take);

		if (!nb) {
			say(err, errlen, "'%s': out of memory", d->path);
			goto fail;
		}
		*buf = nb;
		uint64_t got = 0;

		while (got < take) { /* pread may return less than asked (2 GiB at most) */
			ssize_t r = pread(d->fd, *buf + n + got, take - got, (off_t)(s->offset + (a - s->vaddr) + got));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				say(err, errlen, "cannot read '%s': %s", d->path, strerror(errno));
				goto fail;
			}
			if (r == 0) /* the file shrank since open */
				break;
			got += (uint64_t)r;
		}
		n += got;
		a += got;
		if (got < take)
			break;
	}
	return (long)n;
fail:
	free(*buf);
	*buf = NULL;
	return -1;
}

/* The first file-backed address in [a, hi), or hi. */
static uint64_t next_backed(const struct sonde_disasm *d, uint64_t a, uint64_t hi)
{
	uint64_t best = hi;

	for (size_t i = 0; i < d->nsegs; i++) {
		const struct seg *s = &d->segs[i];

		if (a >= s->vaddr && a - s->vaddr < s->size)
			return a;
		if (s->vaddr > a && s->vaddr < best)
			best = s->vaddr;
	}
	return best;
}

long sonde_disasm_range(struct sonde_disasm *d, uint64_t lo, uint64_t hi, struct sonde_insn **out, char *err,
			size_t errlen)
{
	struct insns t = { 0 };
	uint64_t end = hi > UINT64_MAX - INSN_MAX ? UINT64_MAX : hi + INSN_MAX;
	bool any = false;

	*out = NULL;
	if (lo >= hi)
		return 0;
	for (uint64_t a = next_backed(d, lo, hi); a < hi; a = next_backed(d, a, hi)) {
		uint8_t *buf;
		long n = read_run(d, a, end, &buf, err, errlen);

		if (n < 0)
			goto fail;
		if (n == 0) /* truncated file */
			break;
		any = true;
		int rc = decode(d, buf, (size_t)n, a, hi, &t);

		free(buf);
		if (rc != 0) {
			say(err, errlen, "'%s': out of memory", d->path);
			goto fail;
		}
		a = t.n ? t.v[t.n - 1].addr + t.v[t.n - 1].size : a + (uint64_t)n;
		if (a == 0) /* wrapped at the top of the address space */
			break;
	}
	if (!any) {
		say(err, errlen, "'%s': range 0x%" PRIx64 "-0x%" PRIx64 " is not in any loadable segment", d->path, lo,
		    hi);
		return -1;
	}
	*out = t.v;
	return (long)t.n;
fail:
	free(t.v);
	return -1;
}

long sonde_disasm_find(const struct sonde_insn *insns, size_t n, uint64_t addr)
{
	/* the first instruction that ends after addr */
	size_t lo = PARTITION_POINT(0, n, i, insns[i].addr + insns[i].size <= addr);

	if (lo < n && insns[lo].addr <= addr)
		return (long)lo;
	return -1;
}
