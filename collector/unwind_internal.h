/* Private to the unwinder: unwind.c (the walk, async-signal-safe) and
 * unwind_tables.c (building the object table, normal context). */
#ifndef SONDE_COLLECTOR_UNWIND_INTERNAL_H
#define SONDE_COLLECTOR_UNWIND_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* Limits                                                              */
/* ------------------------------------------------------------------ */

#define UW_MAX_OBJECTS 1024
#define UW_MAX_RANGES (UW_MAX_OBJECTS * 4) /* PT_LOAD segments, all objects */
#define UW_NREG 17			   /* DWARF 0-15 GPRs, 16 = RA/rip */
#define UW_REG_RBP 6
#define UW_REG_RSP 7
#define UW_REG_RA 16
#define UW_REMEMBER_DEPTH 16	/* DW_CFA_remember_state nesting */
#define UW_EXPR_STACK 16	/* DWARF expression stack slots */
#define UW_EXPR_STEPS 256	/* ops executed per expression */
#define UW_CFA_OPS 4096		/* CFA instructions executed per frame */
#define UW_MAX_SIGFRAMES 32	/* signal frames crossed per walk */
#define UW_PAGE 4096u
#define UW_PROBE_PAGES 32	/* pages validated per probe (128 KiB) */
#define UW_MAX_PROBES 8		/* probe syscalls per walk */
#define UW_MAX_WINDOWS 8	/* disjoint validated windows per walk */

/* DWARF pointer encodings (LSB Core, .eh_frame). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit 0xff

/* ------------------------------------------------------------------ */
/* 1. Object table                                                     */
/* ------------------------------------------------------------------ */

struct uw_object {
	uintptr_t bias;
	uintptr_t hdr;	    /* .eh_frame_hdr; 0: no usable CFI for this object */
	uintptr_t table;    /* hdr search table: nfde pairs of int32 (datarel) */
	uint32_t nfde;
	uintptr_t eh_lo;    /* .eh_frame start ... */
	uintptr_t eh_hi;    /* ... to the end of the PT_LOAD segment holding it */
	const void *phdr;   /* the loader's program headers: the object's identity */
};

/* A PT_LOAD segment [lo, hi) of object `obj`. */
struct uw_range {
	uintptr_t lo, hi;
	uint32_t obj;
};

struct uw_table {
	atomic_uint users;	/* handlers currently walking with this table */
	uint32_t gen;		/* cache generation; changes on every refresh */
	int nobj, nexec, nread;
	int overflow;		/* objects or segments dropped (table full) */
	int inc_pos, inc_base;	/* uw_refresh's incremental scan: objects matched, kept */
	bool inc_ok;
	struct uw_object obj[UW_MAX_OBJECTS];
	struct uw_range exec[UW_MAX_RANGES]; /* PF_X segments, sorted by lo */
	struct uw_range rd[UW_MAX_RANGES];   /* PF_R segments, sorted by lo */
};

/* The table handlers walk with; published by uw_refresh (unwind_tables.c). */
extern _Atomic(struct uw_table *) g_cur;

struct uw_walk;

/* A bounded cursor over CFI bytes.  Overruns set `bad` and return 0. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

/* Async-signal-safe cursor readers shared with the table builder. */
uint8_t c_u8(struct cur *c);
bool c_encoded(struct cur *c, uint8_t enc, uintptr_t datarel, struct uw_walk *w, uint64_t *out);

#endif
