/*
 * Kernel call stacks (sonde collect -k on): what the module (kstacks.c,
 * normal context) and the handler's stack source (kstacks_source.c) share.
 */
#ifndef SONDE_COLLECTOR_KSTACKS_H
#define SONDE_COLLECTOR_KSTACKS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/hooks.h"

/* A thread's ring: the header page and one of data. */
#define RING_PAGES 2
extern size_t g_kst_page;
/* For log.xml: samples that read their records, those given kernel
 * frames, records lost (the ring was full), threads without a ring. */
extern _Atomic uint64_t g_kst_samples, g_kst_with, g_kst_lost, g_kst_nomap;

int kstack_frames(const struct sonde_hook_sample *hs, struct sonde_hook_frame *out, int max,
		  struct sonde_hook_splice *where, void *arg);

#endif
