/*
 * experiment_internal: the experiment handle and what the files of the
 * reader share to fill it.  Private to lib/reader/experiment.c (opening,
 * the data files, the accessors), logxml.c (log.xml, and the numbers of
 * XML attributes) and mapxml.c (map.xml: the load objects and the lookup
 * of an address in them); the contract is experiment.h, and a data
 * kind's part is reader/kind.h.
 */
#ifndef SONDE_READER_EXPERIMENT_INTERNAL_H
#define SONDE_READER_EXPERIMENT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/u64map.h"
#include "base/xmlline.h"
#include "reader/experiment.h"
#include "reader/kind.h"

/* ---- the handle -------------------------------------------------------- */

/* A valid byte range of one profile block. */
struct blockref {
	const uint8_t *p; /* first packet */
	uint32_t len;	  /* bytes of whole, checked packets */
	uint32_t tid;
};

/* The data files: the collector's own (DF_STACKS to DF_PERIODIC), then one
 * per traced kind of sonde/kinds.h, in id order (filled at open from the
 * table; DF_COUNT and F_COUNT are upper bounds, exp->ndata and
 * exp->nfiles the counts). */
enum { DF_STACKS, DF_PROFILE, DF_OVERVIEW, DF_PERIODIC, DF_TRACED, DF_COUNT = DF_TRACED + SONDE_KIND_COUNT };
enum { F_LOG, F_MAP, F_NOTES, F_PROFILE, F_STACKS, F_OVERVIEW, F_PERIODIC, F_TRACED, F_COUNT = F_TRACED + SONDE_KIND_COUNT };

struct datafile {
	const char *name;
	uint32_t kind;
	int file; /* F_* */
	bool declared; /* by a <dataformat> of log.xml */
	uint8_t *map;
	size_t maplen;
	uint64_t start_ns; /* from its header */
	/* Where the file has data (SEEK_DATA/SEEK_HOLE), so that the scan
	 * skips holes instead of reading gigabytes of zero pages; NULL: all
	 * of it. */
	struct extent {
		uint64_t lo, hi;
	} *ext;
	size_t next;
};

struct sonde_exp {
	struct sonde_exp_info info;
	char *dir, *logbuf, *mapbuf, *notes;
	bool oom;
	/* jvm.inline's scopes (jscopes.h): Java frames for the stacks whose
	 * Java walk failed; NULL without them */
	struct sonde_jscopes *jscopes;

	struct sonde_event *events;
	size_t nevents, capevents;
	struct sonde_packet_desc *descs;
	size_t ndescs, capdescs;

	struct sonde_exp_file files[F_COUNT];
	struct datafile data[DF_COUNT];
	int nfiles, ndata;

	struct sonde_problem *problems;
	size_t nproblems, capproblems, nerrors, dropped, dropped_errors;

	struct sonde_object *objects;
	size_t nobjects, capobjects;
	uint32_t *byaddr;   /* indices of objects with lo < hi, sorted by lo */
	uint64_t *hitree;   /* the largest hi over byaddr's ranges (find_in) */
	size_t hisize;	    /* its leaves: a power of two, at least nbyaddr */
	size_t nbyaddr;
	uint64_t *epoch_at; /* sorted distinct times where an address changed hands */
	size_t nepoch_at;

	struct sonde_stack *stacks;
	size_t nstacks, capstacks;
	struct u64map stackmap;

	/* Frame nodes (SONDE_PKT_FRAME) from "stacks"; a stack named by a
	 * leaf node is materialised into `stacks` when a sample refers to it. */
	struct node {
		uint64_t parent;
		struct sonde_frame fr;
		uint64_t off;
	} *nodes;
	size_t nnodes, capnodes;
	struct u64map nodemap;
	struct sonde_frame **owned; /* the frames of every stack */
	size_t nowned, capowned;
	bool warned_missing_node;

	struct sonde_thread *threads;
	size_t nthreads, capthreads;
	struct u64map threadmap;

	struct blockref *blocks;
	size_t nblocks, capblocks;

	struct sonde_overview_packet *ov;
	const char **ovlabel; /* parallel to ov: into the mapped file, or NULL */
	size_t nov, capov, capovlabel;

	/* Each traced kind's own state (reader/kind.h), by kind id. */
	void *kstate[SONDE_KIND_MAX + 1];

	/* Heap events are not kept at open: a heap-traced run writes tens of
	 * millions of them.  Open checks every heap block and keeps, per block,
	 * where its checked packets are and the order of its events' times
	 * (struct heapblock); the events are decoded again when asked for:
	 * streamed in time order by struct sonde_heap_iter, or all at once
	 * (exp->heap) by sonde_exp_heap_events(), on first use. */
	struct heapblock {
		const uint8_t *pay;	 /* the block's payload */
		uint32_t used, lim;	 /* its used size, and the bytes of it in the file */
		uint32_t payload;	 /* the file's block payload size */
		uint32_t tid, nev;	 /* owner, events in the checked packets */
		uint64_t first_ns, boff; /* block header's first_ns, file offset */
		uint64_t tfirst, tlast;	 /* times of its first and last event */
		bool unsorted;		 /* an event's time is below the one before */
	} *hblocks;
	size_t nhblocks, caphblocks;
	uint64_t nheapev; /* heap events in all checked packets */
	struct sonde_heap_mmap *mmaps; /* the successful mmaps, in time order */
	size_t nmmaps, capmmaps;
	struct sonde_heap_event *hroom; /* the room heap packets are decoded into at open */
	size_t caphroom;
	struct sonde_heap_event *heap; /* all heap events, by time, once asked for */
	size_t nheap, capheap;
	bool heap_done, heap_failed;
	pthread_mutex_t heap_lock;

	struct sonde_exp_summary sum;
};

/* ---- experiment.c ----------------------------------------------------- */

/* Kind id's reading (reader/kind.h), from its module (base/kindmod.h);
 * the collector's own kinds' is empty: experiment.c reads them. */
const struct sonde_reader_kind *exp_reader_kind(int id);

/* Records a problem of the experiment (a warning, or an error, which
 * sonde_exp_nerrors counts); past SONDE_EXP_MAX_PROBLEMS only counted. */
void exp_problem(struct sonde_exp *exp, enum sonde_problem_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Formats the message of a failed open into err (nothing when errlen is 0). */
void exp_set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Reads file (in the experiment) whole, NUL-terminated.  Returns 0 and sets
 * *buf, *len; 1 when the file does not exist; -1 on another error, with
 * errno set.
 */
int exp_read_whole(struct sonde_exp *exp, const char *file, char **buf, size_t *len);

/* ---- logxml.c --------------------------------------------------------- */

/* Reads numeric attribute attr of e into *out; leaves *out alone when the
 * attribute is absent; warns when it is not a number (or, _u32, too
 * large).  Returns true when a value was stored. */
bool exp_attr_u64(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e, const char *attr,
		  uint64_t *out);
bool exp_attr_u32(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e, const char *attr,
		  uint32_t *out);

/* Reads log.xml into exp->info, exp->events and exp->descs, and marks the
 * data files it declares.  Returns 0, or -1 with err set when dir is not
 * a readable experiment. */
int exp_read_log(struct sonde_exp *exp, char *err, size_t errlen);

/* ---- mapxml.c --------------------------------------------------------- */

/* Reads map.xml into exp->objects, then (memory allowing) builds their
 * address index and mapping epochs; what is wrong is a problem of exp. */
void exp_read_map(struct sonde_exp *exp);

#endif
