/*
 * The reader's part of a data kind (base/kindmod.h): how its packets are
 * decoded and its events kept, for the kinds' modules (lib/kinds/NAME.c)
 * and experiment.c, which finds each kind's part through its module.  Not
 * for the other layers: they use reader/experiment.h.
 *
 * A kind keeps its events in a state of its own in the experiment
 * (sonde_rk_state_new), hands them out with an accessor of its own
 * (sonde_exp_NAME_events, declared where other files read them), and
 * keeps its log.xml settings (<trace kind="NAME" .../>) in that state or
 * in the experiment's info.  The collector's own kinds (profile, stacks,
 * overview) are read by experiment.c itself; the heap kind's events are
 * kept by experiment.c (sonde_rk_heap_room below), not in its state.
 */
#ifndef SONDE_READER_KIND_H
#define SONDE_READER_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/kindmod.h"
#include "base/xmlline.h"
#include "reader/experiment.h"

/* One packet being scanned (experiment.c's). */
struct scan;

struct sonde_reader_kind {
	/* Takes one whole packet (its size is at least the packet header's
	 * and fits its block): NULL when taken, or out of memory (marked with
	 * sonde_rk_oom), or what is wrong with it (written into why), or
	 * sonde_rk_not_mine for a packet type that is not the kind's.  A
	 * packet of a traced file is offered to the file's own kind first,
	 * then to the other traced kinds (as it always could be). */
	const char *(*take)(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen);
	/* How many events of the kind exp holds. */
	size_t (*events)(const struct sonde_exp *exp);
	/* Once every data file is read (sort the events by time, ...). */
	void (*finish)(struct sonde_exp *exp);
	/* Frees what sonde_rk_state_new gave the kind. */
	void (*free)(void *state);
	/* A <trace kind="NAME" ...> element of log.xml (file): the kind's
	 * settings, into sonde_rk_info(exp)->settings. */
	void (*log_trace)(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e);
};

/* The heap kind's events (lib/kinds/heap.c), kept by the reader
 * (experiment.c): at open counted per block, when decoded again appended
 * in order.  A packet's events are decoded into the room that
 * sonde_rk_heap_room gives for n of them (NULL out of memory), and the
 * first n decoded are taken by sonde_rk_heap_commit (false out of
 * memory): decoding again writes them where they are kept, once.
 * Its packets' helpers: the block's first time (the base of short
 * packets' times), the bytes from the packet to the block's used end (a
 * packet being extended when the process died runs past it), and the
 * events counted at open. */
struct sonde_heap_event *sonde_rk_heap_room(struct scan *sc, size_t n);
bool sonde_rk_heap_commit(struct scan *sc, size_t n);
uint64_t sonde_rk_block_first_ns(const struct scan *sc);
uint32_t sonde_rk_rest(const struct scan *sc);
uint64_t sonde_rk_heap_count(const struct sonde_exp *exp);

extern const char sonde_rk_not_mine[];

/* The scan of a packet: its experiment, the thread of its block, and
 * whether heap blocks are being decoded again (every other packet was
 * taken at open: return NULL). */
struct sonde_exp *sonde_rk_exp(const struct scan *sc);
uint32_t sonde_rk_tid(const struct scan *sc);
bool sonde_rk_again(const struct scan *sc);

/* The kind's state in exp: NULL until the kind makes it.  _new makes it
 * (size bytes, zeroed) on the first call; NULL out of memory, exp then
 * marked so. */
void *sonde_rk_state(const struct sonde_exp *exp, int kind);
void *sonde_rk_state_new(struct sonde_exp *exp, int kind, size_t size);
void sonde_rk_oom(struct sonde_exp *exp);
/* A problem of exp found by a kind once its files are read (events that
 * do not join: an OpenMP thread's part without its region): a warning. */
void sonde_rk_problem(struct sonde_exp *exp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The experiment's info, to fill from log.xml. */
struct sonde_exp_info *sonde_rk_info(struct sonde_exp *exp);
/* Attribute attr of e as a number into *out: true, or false (and a
 * warning naming file and the line when it is there but not a number). */
bool sonde_rk_attr_u64(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e,
		       const char *attr, uint64_t *out);
/* An event's stack id: materialised from the frame nodes now, counted
 * when unknown. */
void sonde_rk_stack_ref(struct sonde_exp *exp, uint64_t stack_id);
/* "WHAT packet size SIZE is below MIN", in why. */
const char *sonde_rk_too_small(char *why, size_t whylen, const char *what, unsigned size, size_t min);
/* names[i], "?" past the end or for a gap. */
const char *sonde_rk_name_in(const char *const *names, size_t n, unsigned i);

/* Stable sorts of trace events by time: a merge sort, so that events of
 * one time keep file order. */
#define SONDE_RK_TIME_SORT(name, type)                                            \
	static void name(type *v, type *tmp, size_t n)                            \
	{                                                                         \
		if (n < 2)                                                        \
			return;                                                   \
		size_t h = n / 2;                                                 \
		name(v, tmp, h);                                                  \
		name(v + h, tmp, n - h);                                          \
		if (v[h - 1].time_ns <= v[h].time_ns)                             \
			return;                                                   \
		size_t i = 0, j = h, k = 0;                                       \
		while (i < h && j < n)                                            \
			tmp[k++] = v[j].time_ns < v[i].time_ns ? v[j++] : v[i++]; \
		while (i < h)                                                     \
			tmp[k++] = v[i++];                                        \
		memcpy(v, tmp, k * sizeof(*v));                                   \
	}

#endif
