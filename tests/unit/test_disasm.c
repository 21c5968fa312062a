/*
 * test_disasm: lib/symbols/disasm.c on programs built here at test time (cc, ld,
 * objcopy) and on ELF files written here byte by byte.  The truth is what
 * binutils says (nm -S for function ranges, objdump -d for instruction
 * addresses, bytes, calls, jumps and their targets) and, for aarch64 (which
 * this machine's objdump may not read), the instruction encodings of the
 * Arm architecture manual.
 *
 * Last line: "N passed, N failed"; exit status 1 when anything failed.
 * SONDE_TEST_KEEP=1 keeps the temporary directory.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "symbols/disasm.h"

static char tmpdir[] = "/tmp/sonde-test-disasm.XXXXXX";

/* tmpdir/name: the same string for the same name, until the end. */
static const char *in_tmp(const char *name)
{
	static char paths[32][600];
	static size_t n;
	size_t dir = strlen(tmpdir);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(paths[i] + dir + 1, name))
			return paths[i];
	if (n == 32) {
		printf("# too many temporary files\n");
		exit(1);
	}
	snprintf(paths[n], sizeof(paths[n]), "%s/%s", tmpdir, name);
	return paths[n++];
}

/* The output of a shell command (stdout and stderr), malloc'ed; NULL when
 * it exits non-zero or cannot run. */
static char *output_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *output_of(const char *fmt, ...)
{
	char cmd[4096], full[4800];
	const char *out = in_tmp("cmd.out");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "(%s) >'%s' 2>&1", cmd, out);
	int st = system(full);
	FILE *f = fopen(out, "r");
	char *text = NULL;
	size_t len = 0;

	if (f) {
		FILE *m = open_memstream(&text, &len);
		int c;

		while (m && (c = getc(f)) != EOF)
			putc(c, m);
		if (m)
			fclose(m);
		fclose(f);
	}
	if (st != 0) {
		printf("# '%s' failed: %s", cmd, text ? text : "\n");
		free(text);
		return NULL;
	}
	return text ? text : strdup("");
}

/* ---- binutils' view ------------------------------------------------------ */

/* The first line of a command's output whose word name_at (from 0) is
 * name: its words at and size_at, read in hex.  False if none. */
static bool row_of(const char *cmd, const char *name, int name_at, int at, int size_at, uint64_t *addr,
		   uint64_t *size)
{
	char *out = output_of("%s", cmd);
	bool found = false;

	for (char *line = out ? strtok(out, "\n") : NULL; line && !found; line = strtok(NULL, "\n")) {
		char w[4][256];

		if (sscanf(line, "%255s %255s %255s %255s", w[0], w[1], w[2], w[3]) == 4 && !strcmp(w[name_at], name)) {
			*addr = strtoull(w[at], NULL, 16);
			*size = strtoull(w[size_at], NULL, 16);
			found = true;
		}
	}
	free(out);
	return found;
}

/* The address and size of a function: "ADDR SIZE T NAME" of nm -S. */
static bool nm_func(const char *file, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", file);
	return row_of(cmd, name, 3, 0, 1, addr, size);
}

/* The start and end of a section: "IDX NAME SIZE VMA ..." of objdump -h. */
static bool section(const char *file, const char *name, uint64_t *lo, uint64_t *hi)
{
	char cmd[700];
	uint64_t size;

	snprintf(cmd, sizeof(cmd), "objdump -h '%s'", file);
	if (!row_of(cmd, name, 1, 3, 2, lo, &size))
		return false;
	*hi = *lo + size;
	return true;
}

/* One instruction as objdump prints it:
 *	"    1198:\te8 d3 ff ff ff       \tcall   1170 <callee>" */
struct ref {
	uint64_t addr;
	unsigned size;
	uint8_t bytes[16];
	char mnemonic[32];
	bool has_target;
	uint64_t target;
};

static bool parse_ref(char *line, struct ref *r)
{
	char *tab1 = strchr(line, '\t'), *tab2, *end;

	memset(r, 0, sizeof(*r));
	if (!tab1 || tab1 == line || tab1[-1] != ':')
		return false;
	r->addr = strtoull(line, &end, 16);
	if (end != tab1 - 1)
		return false;
	tab2 = strchr(tab1 + 1, '\t');
	if (!tab2)
		return false;
	*tab2 = 0; /* the bytes end there */
	for (char *p = tab1 + 1; r->size < sizeof(r->bytes);) {
		unsigned long b = strtoul(p, &end, 16);

		if (end == p)
			break;
		r->bytes[r->size++] = (uint8_t)b;
		p = end;
	}
	int used = 0;

	if (sscanf(tab2 + 1, "%31s %n", r->mnemonic, &used) < 1)
		return false;
	const char *ops = tab2 + 1 + used;
	uint64_t t = strtoull(ops, &end, 16);

	if (end != ops && !strncmp(end, " <", 2)) {
		r->has_target = true;
		r->target = t;
	}
	return true;
}

/* objdump -d of [lo, hi): its instructions, in *refs (malloc'ed); the
 * number, -1 when objdump failed. */
static long objdump(const char *file, uint64_t lo, uint64_t hi, struct ref **refs)
{
	char *out = output_of("objdump -d --insn-width=16 --start-address=0x%" PRIx64 " --stop-address=0x%" PRIx64
			      " '%s'",
			      lo, hi, file);
	long n = 0;

	*refs = NULL;
	if (!out)
		return -1;
	*refs = calloc(strlen(out) / 8 + 1, sizeof(**refs));
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ')
			line++;
		if (parse_ref(line, &(*refs)[n]))
			n++;
	}
	free(out);
	return n;
}

/* What objdump's mnemonic says an instruction is: 'c' call, 'j' jump, 'r'
 * return, 0 none (x86 and aarch64 mnemonics). */
static char kind_of(const char *m)
{
	static const char *const a64_jumps[] = { "b", "br", "cbz", "cbnz", "tbz", "tbnz" };

	if (!strncmp(m, "call", 4) || !strcmp(m, "bl") || !strcmp(m, "blr"))
		return 'c';
	if (!strcmp(m, "ret"))
		return 'r';
	if (m[0] == 'j' || !strncmp(m, "loop", 4) || !strncmp(m, "b.", 2))
		return 'j';
	for (size_t i = 0; i < sizeof(a64_jumps) / sizeof(a64_jumps[0]); i++)
		if (!strcmp(m, a64_jumps[i]))
			return 'j';
	return 0;
}

/* ---- comparison with objdump --------------------------------------------- */

static struct sonde_disasm *open_ok(const char *file)
{
	char err[512] = "";
	struct sonde_disasm *d = sonde_disasm_open(file, err, sizeof(err));

	if (!d)
		printf("# %s\n", err);
	CHECK(d != NULL);
	return d;
}

static long range_ok(struct sonde_disasm *d, uint64_t lo, uint64_t hi, struct sonde_insn **v)
{
	char err[512] = "";
	long n = d ? sonde_disasm_range(d, lo, hi, v, err, sizeof(err)) : -1;

	if (n < 0) {
		printf("# %s\n", err);
		*v = NULL;
	}
	CHECK(n >= 0);
	return n;
}

/* [lo, hi) of file disassembled by sonde and by objdump: the same
 * instructions (addresses, sizes, bytes), the same calls, jumps, returns
 * and direct targets, and for branches the same mnemonic.  The number of
 * instructions, in *v (malloc'ed). */
static long same_as_objdump(const char *file, uint64_t lo, uint64_t hi, struct sonde_insn **v)
{
	struct sonde_disasm *d = open_ok(file);
	struct ref *r;
	long n = range_ok(d, lo, hi, v), nr = objdump(file, lo, hi, &r);
	int bad = 0;

	sonde_disasm_close(d);
	CHECK(nr > 0);
	CHECK_I(n, nr);
	for (long i = 0; i < n && i < nr && bad < 3; i++) {
		const struct sonde_insn *x = &(*v)[i];
		const struct ref *y = &r[i];
		char k = kind_of(y->mnemonic);
		bool same = x->addr == y->addr && x->size == y->size && !memcmp(x->bytes, y->bytes, x->size) &&
			    x->is_call == (k == 'c') && x->is_jump == (k == 'j') && x->is_ret == (k == 'r') &&
			    x->has_target == y->has_target && (!y->has_target || x->target == y->target) &&
			    (!k || !strcmp(x->mnemonic, y->mnemonic));

		if (!same) {
			bad++;
			printf("# sonde %" PRIx64 " (%u bytes) %s %s [call %d jump %d ret %d target %d %" PRIx64 "]\n"
			       "# objdump %" PRIx64 " (%u bytes) %s [target %d %" PRIx64 "]\n",
			       x->addr, x->size, x->mnemonic, x->operands, x->is_call, x->is_jump, x->is_ret,
			       x->has_target, x->target, y->addr, y->size, y->mnemonic, y->has_target, y->target);
		}
		CHECK(same);
	}
	free(r);
	return n;
}

/* The known function "work" (a loop around a call of "callee") of a
 * program: as objdump says, with the call's target callee's address and
 * the loop's conditional jump inside work. */
static void check_work(const char *file)
{
	uint64_t lo, size, callee, csize;
	struct sonde_insn *v = NULL;

	if (!nm_func(file, "work", &lo, &size) || !nm_func(file, "callee", &callee, &csize)) {
		CHECK(!"work and callee in nm -S");
		return;
	}
	long n = same_as_objdump(file, lo, lo + size, &v);
	int calls = 0, back = 0;

	for (long i = 0; i < n; i++) {
		if (v[i].is_call && v[i].has_target && v[i].target == callee)
			calls++;
		if (v[i].is_jump && v[i].has_target && strcmp(v[i].mnemonic, "jmp") && strcmp(v[i].mnemonic, "b") &&
		    v[i].target >= lo && v[i].target < lo + size && v[i].target <= v[i].addr)
			back++;
	}
	CHECK_I(calls, 1);
	CHECK(back >= 1);
	CHECK(n > 0 && v[n - 1].addr + v[n - 1].size == lo + size);

	/* the same from a stripped copy, which has no section of symbols */
	const char *stripped = in_tmp("stripped");
	char *out = output_of("objcopy --strip-all '%s' '%s' && readelf -SW '%s'", file, stripped, stripped);

	CHECK(out && !strstr(out, ".symtab") && !strstr(out, ".debug"));
	free(out);
	struct sonde_disasm *d = open_ok(stripped);
	struct sonde_insn *w = NULL;
	long m = range_ok(d, lo, lo + size, &w);

	CHECK_I(m, n);
	CHECK(m == n && w && v && !memcmp(v, w, (size_t)n * sizeof(*v)));
	sonde_disasm_close(d);
	free(w);
	free(v);
}

/* The known functions, in C without a header (also built for i386
 * without a C library). */
#define WORK_C                                                              \
	"__attribute__((noinline)) int callee(int x) { return x * 3 + 1; }\n" \
	"__attribute__((noinline)) long work(int n)\n"                        \
	"{\n"                                                                 \
	"	long s = 0;\n"                                                \
	"	for (int i = 0; i < n; i++)\n"                                \
	"		s += callee(i) ^ (s >> 3);\n"                         \
	"	return s;\n"                                                  \
	"}\n"

static const char prog_c[] = "#include <stdio.h>\n"
			     "#include <stdlib.h>\n" WORK_C
			     "int main(int argc, char **argv) { printf(\"%ld\\n\", work(argc > 1 ? atoi(argv[1]) : 10)); }\n";
static const char prog32_c[] = WORK_C "void _start32(void) { work(5); for (;;); }\n";

static bool write_file(const char *file, const void *p, size_t n)
{
	FILE *f = fopen(file, "w");
	bool ok = f && fwrite(p, 1, n, f) == n;

	if (f && fclose(f) != 0)
		ok = false;
	CHECK(ok);
	return ok;
}

/* A native program, -O2: work() as objdump says, and its whole .text. */
static void test_native(void)
{
	const char *src = in_tmp("prog.c"), *prog = in_tmp("prog");
	char *out;

	group = "native program";
	if (!write_file(src, prog_c, sizeof(prog_c) - 1))
		return;
#ifdef __x86_64__
	const char *cet = "-fcf-protection=full"; /* endbr64 first */
#else
	const char *cet = "";
#endif
	out = output_of("cc -O2 %s -o '%s' '%s'", cet, prog, src);
	CHECK(out != NULL);
	free(out);
	if (!out)
		return;
	check_work(prog);

	uint64_t lo = 0, hi = 0, at, size;
	struct sonde_insn *v = NULL;

	group = "native program, .text";
	CHECK(section(prog, ".text", &lo, &hi));
	long n = same_as_objdump(prog, lo, hi, &v);

	free(v);
	CHECK(n > 20);
#ifdef __x86_64__
	group = "native program, endbr64";
	CHECK(nm_func(prog, "work", &at, &size));
	struct sonde_disasm *d = open_ok(prog);

	n = range_ok(d, at, at + size, &v);
	CHECK(n > 0 && !strcmp(v[0].mnemonic, "endbr64") && v[0].size == 4);
	CHECK_U(d ? sonde_disasm_machine(d) : 0, EM_X86_64);
	sonde_disasm_close(d);
	free(v);
#else
	(void)at, (void)size;
#endif
}

/* i386, where capstone says "calll" and "retl" and objdump "call", "ret":
 * built without a C library (cc -m32 -c, ld -m elf_i386), where the
 * machine can. */
static void test_i386(void)
{
	const char *obj = in_tmp("prog32.o"), *prog = in_tmp("prog32");
	char *out;

	group = "i386 program";
#ifndef __x86_64__
	printf("# skipped: i386 (not an x86-64 machine)\n");
	return;
#endif
	if (!write_file(in_tmp("prog32.c"), prog32_c, sizeof(prog32_c) - 1))
		return;
	out = output_of("cc -m32 -O2 -ffreestanding -fno-pic -c -o '%s' '%s' && ld -m elf_i386 -e _start32 -o '%s' '%s'",
			obj, in_tmp("prog32.c"), prog, obj);
	if (!out) {
		printf("# skipped: i386 (cc -m32 or ld -m elf_i386 failed)\n");
		return;
	}
	free(out);
	check_work(prog);
}

/* ---- ELF files written here ---------------------------------------------- */

/* A segment of a written file: filesz bytes at vaddr (file offset
 * 0x1000 * its index + 0x1000), nbytes of them in the file (fewer: a
 * truncated file, the last segment only), memsz in memory. */
struct wseg {
	uint64_t vaddr, filesz, memsz;
	const void *bytes;
	size_t nbytes;
};

/* An ELF64 little-endian executable of machine with these segments. */
static bool write_elf(const char *file, unsigned machine, const struct wseg *segs, size_t nsegs)
{
	size_t size = 0x1000 * (nsegs + 1);
	uint8_t *img = calloc(1, size);
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = (Elf64_Half)machine,
		.e_version = EV_CURRENT,
		.e_entry = nsegs ? segs[0].vaddr : 0,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = (Elf64_Half)nsegs,
	};

	if (!img)
		return false;
	memcpy(img, &eh, sizeof(eh));
	for (size_t i = 0; i < nsegs; i++) {
		Elf64_Phdr ph = {
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_offset = 0x1000 * (i + 1),
			.p_vaddr = segs[i].vaddr,
			.p_paddr = segs[i].vaddr,
			.p_filesz = segs[i].filesz,
			.p_memsz = segs[i].memsz,
			.p_align = 0x1000,
		};

		memcpy(img + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		memcpy(img + ph.p_offset, segs[i].bytes, segs[i].nbytes);
		if (i == nsegs - 1)
			size = ph.p_offset + segs[i].nbytes;
	}
	bool ok = write_file(file, img, size);

	free(img);
	return ok;
}

/* aarch64 by encoding: mnemonics, calls, jumps, returns, targets. */
static void test_aarch64(void)
{
	static const struct {
		uint32_t word;
		const char *mnemonic;
		char kind;
		bool has_target;
		uint64_t target; /* relative to the first instruction */
	} want[] = {
		{ 0xd503201f, "nop", 0, false, 0 },
		{ 0x94000002, "bl", 'c', true, 0x0c },	  /* bl .+8 */
		{ 0x54ffffe1, "b.ne", 'j', true, 0x04 },  /* b.ne .-4 */
		{ 0xb4000040, "cbz", 'j', true, 0x14 },	  /* cbz x0, .+8 */
		{ 0x371fffc1, "tbnz", 'j', true, 0x08 },  /* tbnz w1, #3, .-8 */
		{ 0xd63f0020, "blr", 'c', false, 0 },	  /* blr x1 */
		{ 0xd61f0040, "br", 'j', false, 0 },	  /* br x2 */
		{ 0xd65f03c0, "ret", 'r', false, 0 },
		{ 0x14000040, "b", 'j', true, 0x120 },	  /* b .+0x100 */
		{ 0x00000000, "(bad)", 0, false, 0 },	  /* udf #0: unknown to capstone 4 */
		{ 0xaa0103e0, "mov", 0, false, 0 },	  /* mov x0, x1 */
	};
	enum { N = sizeof(want) / sizeof(want[0]) };
	uint8_t code[4 * N];
	const uint64_t base = 0x400000;
	const char *file = in_tmp("a64");
	struct sonde_insn *v = NULL;

	group = "aarch64";
	for (size_t i = 0; i < N; i++) /* instructions are little-endian */
		for (int b = 0; b < 4; b++)
			code[4 * i + b] = (uint8_t)(want[i].word >> (8 * b));
	struct wseg seg = { base, sizeof(code), sizeof(code), code, sizeof(code) };

	if (!write_elf(file, EM_AARCH64, &seg, 1))
		return;
	struct sonde_disasm *d = open_ok(file);

	CHECK_U(d ? sonde_disasm_machine(d) : 0, EM_AARCH64);
	long n = range_ok(d, base, base + sizeof(code), &v);

	CHECK_I(n, N);
	for (long i = 0; i < n && i < N; i++) {
		CHECK_U(v[i].addr, base + 4 * (uint64_t)i);
		CHECK_I(v[i].size, 4);
		CHECK(!memcmp(v[i].bytes, code + 4 * i, 4));
		CHECK_S(v[i].mnemonic, want[i].mnemonic);
		CHECK_I(v[i].is_call, want[i].kind == 'c');
		CHECK_I(v[i].is_jump, want[i].kind == 'j');
		CHECK_I(v[i].is_ret, want[i].kind == 'r');
		CHECK_I(v[i].has_target, want[i].has_target);
		CHECK_U(v[i].target, want[i].has_target ? base + want[i].target : 0);
		CHECK_I(kind_of(want[i].mnemonic), want[i].kind); /* the table against kind_of */
	}
	if (n > 1)
		CHECK_S(v[1].operands, "#0x40000c");
	free(v);
	sonde_disasm_close(d);
}

/* The bytes a range has: segments, gaps, .bss, a truncated file, an
 * instruction across two segments, undecodable bytes (x86-64). */
static void test_segments(void)
{
	static const uint8_t nops[8] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
	static const uint8_t rets[4] = { 0xc3, 0xc3, 0xc3, 0xc3 };
	static const uint8_t call[5] = { 0xe8, 0x00, 0x00, 0x00, 0x00 }; /* call .+5 */
	static const uint8_t bad[4] = { 0x06, 0xd6, 0x90, 0xc3 };	      /* push %es, salc: not in 64-bit */
	const struct wseg segs[] = {
		{ 0x400000, 8, 0x100, nops, 8 },	 /* 8 nops, then .bss */
		{ 0x400200, 4, 4, rets, 4 },		 /* after a gap */
		{ 0x400400, 5, 5, call, 5 },
		{ 0x400600, 2, 2, call, 2 },		 /* a call in two adjacent segments, */
		{ 0x400602, 3, 3, call + 2, 3 },	 /* at unrelated file offsets */
		{ 0x400800, 4, 4, bad, 4 },
		{ 0x500000, 0x100, 0x100, nops, 4 }, /* truncated: 4 of 0x100 bytes */
	};
	const char *file = in_tmp("segs");
	struct sonde_insn *v = NULL, dummy;
	char err[512] = "";
	long n;

	group = "segments";
	if (!write_elf(file, EM_X86_64, segs, sizeof(segs) / sizeof(segs[0])))
		return;
	struct sonde_disasm *d = open_ok(file);

	if (!d)
		return;
	/* from before the first segment to past the second: 8 nops, 4 rets */
	n = range_ok(d, 0x3ffff0, 0x400300, &v);
	CHECK_I(n, 12);
	for (long i = 0; i < n && i < 12; i++) {
		CHECK_U(v[i].addr, i < 8 ? 0x400000 + (uint64_t)i : 0x400200 + (uint64_t)i - 8);
		CHECK_S(v[i].mnemonic, i < 8 ? "nop" : "ret");
		CHECK_I(v[i].is_ret, i >= 8);
	}
	free(v);
	/* partly in .bss: as far as there are bytes */
	n = range_ok(d, 0x400004, 0x400100, &v);
	CHECK_I(n, 4);
	CHECK(n == 4 && v[3].addr == 0x400007);
	free(v);
	/* from .bss into the next segment */
	n = range_ok(d, 0x400100, 0x400202, &v);
	CHECK_I(n, 2);
	CHECK(n == 2 && v[0].addr == 0x400200 && v[1].addr == 0x400201);
	free(v);
	/* the last instruction is whole, though hi cuts it */
	n = range_ok(d, 0x400400, 0x400401, &v);
	CHECK_I(n, 1);
	CHECK(n == 1 && v[0].size == 5 && v[0].is_call && v[0].has_target && v[0].target == 0x400405);
	free(v);
	/* across adjacent segments */
	n = range_ok(d, 0x400600, 0x400605, &v);
	CHECK_I(n, 1);
	CHECK(n == 1 && v[0].size == 5 && !memcmp(v[0].bytes, call, 5) && v[0].target == 0x400605);
	free(v);
	/* undecodable bytes: one byte each */
	n = range_ok(d, 0x400800, 0x400804, &v);
	CHECK_I(n, 4);
	if (n == 4) {
		CHECK_S(v[0].mnemonic, "(bad)");
		CHECK(v[0].size == 1 && v[0].bytes[0] == 0x06 && !v[0].is_jump && !v[0].has_target);
		CHECK_S(v[1].mnemonic, "(bad)");
		CHECK_U(v[1].addr, 0x400801);
		CHECK_S(v[2].mnemonic, "nop");
		CHECK_S(v[3].mnemonic, "ret");
	}
	free(v);
	/* a truncated file: the bytes it has */
	n = range_ok(d, 0x500000, 0x500100, &v);
	CHECK_I(n, 4);
	free(v);
	/* an empty range */
	n = sonde_disasm_range(d, 0x400000, 0x400000, &v, err, sizeof(err));
	CHECK_I(n, 0);
	/* no bytes: a gap, .bss, outside every segment */
	const uint64_t none[][2] = { { 0x400008, 0x400200 }, { 0x400100, 0x400104 }, { 0x7fff00000000, 0x7fff00000010 } };

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		char want[700];

		v = &dummy; /* must become NULL */
		n = sonde_disasm_range(d, none[i][0], none[i][1], &v, err, sizeof(err));
		CHECK_I(n, -1);
		CHECK(v == NULL);
		snprintf(want, sizeof(want), "'%s': range 0x%" PRIx64 "-0x%" PRIx64 " is not in any loadable segment",
			 file, none[i][0], none[i][1]);
		CHECK_S(err, want);
	}
	sonde_disasm_close(d);
}

static void check_open_fails(const char *file, const char *fmt)
{
	char err[700] = "", want[700];
	struct sonde_disasm *d = sonde_disasm_open(file, err, sizeof(err));

	snprintf(want, sizeof(want), fmt, file);
	CHECK(d == NULL);
	CHECK_S(err, want);
	sonde_disasm_close(d);
}

static void test_open_errors(void)
{
	const struct wseg seg = { 0x400000, 4, 4, "\0\0\0\0", 4 };

	group = "open errors";
	check_open_fails(in_tmp("missing"), "cannot open '%s': No such file or directory");
	check_open_fails(tmpdir, "cannot open '%s': Is a directory");
	check_open_fails(in_tmp("prog.c"), "'%s' is not an ELF file");
	if (write_file(in_tmp("empty"), "", 0))
		check_open_fails(in_tmp("empty"), "'%s' is not an ELF file");
	check_open_fails("/dev/null", "'%s' is not an ELF file");
	if (write_elf(in_tmp("mips"), EM_MIPS, &seg, 1))
		check_open_fails(in_tmp("mips"), "'%s': machine 'MIPS' is not supported (x86-64, i386, aarch64 are)");
	if (write_elf(in_tmp("em4660"), 4660, &seg, 1))
		check_open_fails(in_tmp("em4660"), "'%s': machine '4660' is not supported (x86-64, i386, aarch64 are)");
	sonde_disasm_close(NULL);
}

/* sonde_disasm_find at the edges of instructions, of the array, of gaps. */
static void test_find(void)
{
	const struct sonde_insn v[] = {
		{ .addr = 0x100, .size = 4 }, { .addr = 0x104, .size = 1 }, { .addr = 0x105, .size = 5 },
		{ .addr = 0x200, .size = 2 }, /* after a gap */
	};

	group = "find";
	CHECK_I(sonde_disasm_find(v, 4, 0xff), -1);
	CHECK_I(sonde_disasm_find(v, 4, 0x100), 0);
	CHECK_I(sonde_disasm_find(v, 4, 0x103), 0);
	CHECK_I(sonde_disasm_find(v, 4, 0x104), 1);
	CHECK_I(sonde_disasm_find(v, 4, 0x105), 2);
	CHECK_I(sonde_disasm_find(v, 4, 0x109), 2);
	CHECK_I(sonde_disasm_find(v, 4, 0x10a), -1); /* in the gap */
	CHECK_I(sonde_disasm_find(v, 4, 0x1ff), -1);
	CHECK_I(sonde_disasm_find(v, 4, 0x200), 3);
	CHECK_I(sonde_disasm_find(v, 4, 0x201), 3);
	CHECK_I(sonde_disasm_find(v, 4, 0x202), -1);
	CHECK_I(sonde_disasm_find(v, 1, 0x104), -1);
	CHECK_I(sonde_disasm_find(v, 0, 0x100), -1);
	CHECK_I(sonde_disasm_find(NULL, 0, 0x100), -1);
	CHECK_I(sonde_disasm_find(v, 4, UINT64_MAX), -1);

	/* every byte of a real function is in the instruction objdump says */
	uint64_t lo, size;
	struct sonde_insn *w = NULL;
	struct ref *r = NULL;
	const char *prog = in_tmp("prog");

	if (!nm_func(prog, "work", &lo, &size)) {
		CHECK(!"work in nm -S");
		return;
	}
	struct sonde_disasm *d = open_ok(prog);
	long n = range_ok(d, lo, lo + size, &w), nr = objdump(prog, lo, lo + size, &r);
	int wrong = 0;

	CHECK_I(n, nr);
	for (long i = 0; i < n && n == nr; i++)
		for (uint64_t a = r[i].addr; a < r[i].addr + r[i].size; a++)
			wrong += sonde_disasm_find(w, (size_t)n, a) != i;
	CHECK_I(wrong, 0);
	CHECK_I(sonde_disasm_find(w, (size_t)(n > 0 ? n : 0), lo - 1), -1);
	CHECK_I(sonde_disasm_find(w, (size_t)(n > 0 ? n : 0), lo + size), -1);
	sonde_disasm_close(d);
	free(w);
	free(r);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	char *tools = output_of("command -v cc && command -v objdump && command -v nm && command -v objcopy");

	if (tools) {
		test_native();
		test_i386();
		test_find();
	} else {
		printf("# skipped: programs compared with objdump (cc, objdump, nm or objcopy missing)\n");
	}
	free(tools);
	test_aarch64();
	test_segments();
	test_open_errors();

	if (getenv("SONDE_TEST_KEEP"))
		printf("# kept %s\n", tmpdir);
	else
		free(output_of("rm -rf '%s'", tmpdir));
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
