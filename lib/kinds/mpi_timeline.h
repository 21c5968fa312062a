/*
 * The MPI kind's timelines (lib/kinds/mpi_timeline.c): its part of the
 * chrome export (calls as spans on a track of their own, each rank a
 * process named "rank N", messages as flows from send to receive) and its
 * view in the HTML report (a timeline with a lane per rank and the
 * rank-by-rank communication matrix), for lib/kinds/mpi.c's module.
 */
#ifndef SONDE_KINDS_MPI_TIMELINE_H
#define SONDE_KINDS_MPI_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "views/kind.h"

extern const struct sonde_view_timeline sonde_mpi_timeline;
extern const struct sonde_view_report_view sonde_mpi_report[];
extern const struct sonde_view_report_script sonde_mpi_report_script;

/* A message matched: the k-th send from rank A to rank B on (communicator,
 * tag) with the k-th receive at B from A on the same (MPI's
 * non-overtaking order), the sends in the order they started, the
 * receives in the order they completed.  Experiments are indices of the
 * list given; msg and call index sonde_exp_mpi_msgs() and
 * sonde_exp_mpi_calls() (call SIZE_MAX: no call of the message's was
 * found). */
struct sonde_mpi_pair {
	uint32_t send_exp, recv_exp;
	size_t send_msg, recv_msg, send_call, recv_call;
};

/* Calls pair(arg, p) for each matched message (in no set order) and
 * returns how many messages matched nothing (a send to a rank whose
 * experiment is not in the list, a receive whose send is not there, a
 * message of an experiment whose rank is unknown), or -1 out of memory or
 * when pair returned -1. */
long sonde_mpi_match(const struct sonde_exp *const *exps, size_t n,
		     int (*pair)(void *arg, const struct sonde_mpi_pair *p), void *arg);

#endif
