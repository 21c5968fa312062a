/*
 * framekind: the table of frame kind modules (framekind.h).  A new kind of
 * frame is its value in enum sonde_frame_kind (sonde/format.h), its module
 * in a file of its own here, and its row below.
 */
#include "symbols/framekind.h"

extern const struct sonde_frame_module sonde_fk_kernel;	     /* kallsyms.c */
extern const struct sonde_frame_module sonde_fk_java_interp;   /* javamethods.c */
extern const struct sonde_frame_module sonde_fk_java_compiled; /* javamethods.c */
extern const struct sonde_frame_module sonde_fk_java;	     /* javamethods.c */
extern const struct sonde_frame_module sonde_fk_java_inlined;  /* javamethods.c */
extern const struct sonde_frame_module sonde_fk_java_compiled_c1; /* javamethods.c */
extern const struct sonde_frame_module sonde_fk_process;	     /* processes.c */
extern const struct sonde_frame_module sonde_fk_pseudo;	     /* pseudo.c */

static const struct sonde_frame_module *const kinds[SONDE_FRAME_KIND_MAX + 1] = {
	[SONDE_FRAME_NATIVE] = NULL, /* symbols.c's ELF and DWARF */
	[SONDE_FRAME_KERNEL] = &sonde_fk_kernel,
	[SONDE_FRAME_JAVA_INTERP] = &sonde_fk_java_interp,
	[SONDE_FRAME_JAVA_COMPILED] = &sonde_fk_java_compiled,
	[SONDE_FRAME_PROCESS] = &sonde_fk_process,
	[SONDE_FRAME_PSEUDO] = &sonde_fk_pseudo,
	[SONDE_FRAME_JAVA] = &sonde_fk_java,
	[SONDE_FRAME_JAVA_INLINED] = &sonde_fk_java_inlined,
	[SONDE_FRAME_JAVA_COMPILED_C1] = &sonde_fk_java_compiled_c1,
};

static const struct sonde_frame_kind_info native = { "native", "a function", NULL };

const struct sonde_frame_module *sonde_frame_module_of(unsigned kind)
{
	return kind <= SONDE_FRAME_KIND_MAX ? kinds[kind] : NULL;
}

const struct sonde_frame_kind_info *sonde_frame_kind_info(unsigned kind)
{
	const struct sonde_frame_module *k = sonde_frame_module_of(kind);

	return kind == SONDE_FRAME_NATIVE ? &native : k ? &k->info : NULL;
}
