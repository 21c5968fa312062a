/*
 * disasm: the machine code of a load object, disassembled with capstone.
 *
 *	char err[256];
 *	struct sonde_disasm *d = sonde_disasm_open("/usr/bin/ls", err, sizeof(err));
 *	struct sonde_insn *v;
 *	long n = sonde_disasm_range(d, f->lo, f->hi, &v, err, sizeof(err));
 *	for (long i = 0; i < n; i++)
 *		printf("%" PRIx64 ": %s %s\n", v[i].addr, v[i].mnemonic, v[i].operands);
 *	free(v);
 *	sonde_disasm_close(d);
 *
 * Machines: x86-64 and i386 in AT&T syntax (what perf annotate and objdump
 * print), aarch64.  Addresses are the file's own (ELF virtual addresses, as
 * in its symbol tables), not run-time ones.
 *
 * The bytes come from the file's PT_LOAD segments, read with pread when a
 * range is asked for (only that range's bytes, and up to 15 bytes past its
 * end to complete the last instruction that starts in it), so section
 * headers and symbols are not needed: a stripped file disassembles the
 * same.  A range over several segments is disassembled segment by segment
 * (adjacent segments as one); addresses with no bytes in the file (a gap,
 * .bss) have no instruction.
 *
 * Mnemonics and operands are capstone's, but for near branches, which lose
 * the operand-size suffix that capstone 4 gives them on i386 ("calll",
 * "retl"), as in objdump since binutils 2.35 ("call", "ret").  The
 * undecodable bytes are "(bad)": one byte each on x86, one word (4 bytes)
 * on aarch64, whose instructions are aligned words.
 *
 * Capstone 4 (Debian 12's 4.0.2) does not know some instructions that
 * objdump does: AVX-512 mask and compare instructions (kmovd, kortestd,
 * vpcmpeqb into a mask, vptestnmb... in glibc's evex string functions),
 * which come out as "(bad)" bytes followed by a few wrong instructions until
 * the decoding falls back into step; aarch64 pointer authentication
 * branches (retaa, blraa); and it does not print x86's "notrack" prefix.
 *
 * A handle is for one thread at a time (it holds capstone's state).
 *
 * Messages (err): one line, lower case, the file in quotes.  Nothing here
 * prints or exits.
 */
#ifndef SONDE_DISASM_H
#define SONDE_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sonde_insn {
	uint64_t addr;        /* ELF virtual address in the file (object-relative, as in symbol tables) */
	uint8_t size;         /* bytes */
	uint8_t bytes[15];
	bool is_call;         /* call instruction (x86 call, aarch64 bl/blr) */
	bool is_jump;         /* any branch: conditional or unconditional jump (not call, not ret) */
	bool is_ret;
	bool has_target;      /* a direct call/jump: target is its destination address */
	uint64_t target;
	char mnemonic[32];    /* "mov", "call", "jne" (AT&T syntax on x86: "movq") */
	char operands[160];   /* "%rax, -8(%rbp)" ; for a direct branch the target address as capstone prints it */
};

struct sonde_disasm;

/* An object file opened for disassembly: its machine, and its loadable bytes.
 * Opening reads the ELF headers only (libelf). NULL with a one-line message in err
 * ("cannot open 'PATH': No such file or directory", "'PATH' is not an ELF file",
 * "'PATH': machine 'MIPS' is not supported (x86-64, i386, aarch64 are)"). */
struct sonde_disasm *sonde_disasm_open(const char *path, char *err, size_t errlen);
void sonde_disasm_close(struct sonde_disasm *d);   /* NULL allowed */

/* The file's ELF machine (EM_X86_64, EM_386, EM_AARCH64). */
unsigned sonde_disasm_machine(const struct sonde_disasm *d);

/* Disassembles [lo, hi) (ELF virtual addresses).  Bytes come from the file's
 * PT_LOAD segments (p_vaddr/p_offset/p_filesz), so it works for stripped files too;
 * ranges partly outside file-backed bytes are disassembled as far as bytes exist.
 * An undecodable byte becomes a 1-byte instruction with mnemonic "(bad)"
 * (on aarch64 an undecodable word, a 4-byte one).
 * Returns the number of instructions, stored in *out (malloc'd array, caller frees),
 * or -1 with a message in err (range not in any segment, out of memory). */
long sonde_disasm_range(struct sonde_disasm *d, uint64_t lo, uint64_t hi,
			struct sonde_insn **out, char *err, size_t errlen);

/* The index of the instruction containing addr in insns[0..n) (sorted), or -1. */
long sonde_disasm_find(const struct sonde_insn *insns, size_t n, uint64_t addr);

#endif
