/*
 * expmerge: the associative merge of a founder's sub-experiments (sonde
 * merge, doc/sonde-merge.md): one experiment holding, per call stack and
 * thread state, the sum over the processes (MPI ranks, descendants) of
 * each clock-profile metric, and across them the count, minimum, maximum
 * and sum of squares of the time (hpcprof's imbalance statistics).
 *
 *	struct sonde_merge *m = sonde_merge_new();
 *	for each sub-experiment: sonde_merge_add(m, path, name, err, len);
 *	sonde_merge_output(m, "founder.er", "merged.er", err, len);
 *	sonde_merge_free(m);
 *
 * A merge is a value that other merges combine into (sonde_merge_combine):
 * partial merges of any partition of the sub-experiments, combined in any
 * order, are equal, and sonde_merge_output() writes equal values as
 * identical bytes, for every quantity is an exact integer (sums, counts,
 * minima, maxima, a 128-bit sum of squares) and the output is sorted by
 * content, never by the order things were seen.  Partial merges travel
 * between processes as bytes (sonde_merge_pack / _unpack): the MPI tree
 * reduction (mpi/merge_mpi.c).
 *
 * Memory grows with the distinct stacks of all the processes together,
 * not with the processes: each sub-experiment is opened, folded in and
 * closed before the next.
 *
 * Frames are the same function across processes when they are at the same
 * offset of the same file: a native frame is taken as (load object,
 * address - load bias), the object known by its build id (or, without
 * one, its path), so that processes of one binary loaded at different
 * addresses (ASLR) merge.  Other kinds of frames (kernel, Java) are kept
 * as they are.  The merged experiment lays the objects out again at
 * addresses of its own, in its map.xml, with their paths and build ids,
 * so that symbols come from the objects or the founder's archives.
 *
 * Library code: nothing printed; errors are one-line messages.
 */
#ifndef SONDE_EXPMERGE_H
#define SONDE_EXPMERGE_H

#include <stddef.h>
#include <stdint.h>

struct sonde_merge;

/* An empty merge; NULL out of memory. */
struct sonde_merge *sonde_merge_new(void);
void sonde_merge_free(struct sonde_merge *m);

/*
 * Folds the experiment at path (its name, the directory's last component,
 * names it in messages) into m, as one process.  Damaged data (read
 * errors) is merged as far as it is valid and remembered as a warning
 * that the output's log.xml keeps (and returns 1 with it in err).
 * Returns 0, or -1 with a message when
 * the experiment cannot be opened or memory runs out (m is then
 * unchanged or holds the part folded before, and should be dropped).
 */
int sonde_merge_add(struct sonde_merge *m, const char *path, const char *name, char *err, size_t errlen);

/* dst += src.  Returns 0, or -1 out of memory. */
int sonde_merge_combine(struct sonde_merge *dst, const struct sonde_merge *src);

/* How many experiments m holds. */
uint64_t sonde_merge_count(const struct sonde_merge *m);

/* A failure that travels with a partial merge (a process of the MPI
 * reduction that could not read its share): the first, by message order,
 * of those combined is kept.  NULL when none. */
int sonde_merge_set_error(struct sonde_merge *m, const char *msg);
const char *sonde_merge_error(const struct sonde_merge *m);

/* m as bytes (malloc'd, *len bytes), and back.  -1 / NULL out of memory,
 * or (unpack) with a message for bytes that are not a packed merge. */
int sonde_merge_pack(const struct sonde_merge *m, uint8_t **buf, size_t *len);
struct sonde_merge *sonde_merge_unpack(const uint8_t *buf, size_t len, char *err, size_t errlen);

/*
 * The sub-experiments of the founder at dir, of every kind the reader
 * knows (reader/exptree.h), in name order: *paths gets n malloc'd paths
 * (free each and the array).  Returns 0, or -1 with a message: dir is not
 * an experiment, has no sub-experiments, cannot be read.
 */
int sonde_merge_list(const char *dir, char ***paths, size_t *n, char *err, size_t errlen);

/*
 * Writes m as the experiment out (which must not exist): into out.tmp.PID
 * first, renamed to out when complete, so that a failure leaves nothing.
 * founder (the experiment merged) names it in log.xml; when founder has
 * archives/, out gets a symbolic link to them.  Returns 0, or -1 with a
 * message.
 */
int sonde_merge_output(const struct sonde_merge *m, const char *founder, const char *out, char *err,
		       size_t errlen);

/* Checks before the work that out can be made: it does not exist and its
 * parent is a directory.  0, or -1 with a message. */
int sonde_merge_check_out(const char *out, char *err, size_t errlen);

#endif
