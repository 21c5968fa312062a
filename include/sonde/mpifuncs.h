/*
 * The MPI functions sonde's MPI tracing interposes: the one list, for
 * the wrappers of both ABIs (Open MPI, MPICH) and their Fortran bindings,
 * which the tracing library's generator makes from this file and each
 * library's mpi.h (tracers/mpi/), and for the analyzer's names and
 * metrics.
 *
 * A function's id (the `func` of an MPI call or message packet,
 * format.h) is its row's number, from 1: append only, never reorder or
 * remove a row (ids are on disk).  The reference's list (VampirTrace's,
 * about 170 functions) comes first, then MPI-3's and MPI-4's.  A
 * function the MPI library at hand does not declare gets no wrapper.
 * One row a line, `X(NAME, CLASS)`: the generator reads the lines.
 *
 * CLASS says what a call means for the metrics (table 2-4 of the
 * reference; doc/experiment-format.md, "MPI tracing"):
 *   SEND       a point-to-point send started (blocking or not)
 *   RECV       a point-to-point receive completed by the call
 *   IRECV      a receive started; it completes in a WAIT call
 *   SENDRECV   a send started and a receive completed
 *   ISENDRECV  a send and a receive started
 *   PINIT      a persistent request made (nothing moves)
 *   START      persistent requests started (their sends start here)
 *   WAIT       requests completed (their receives complete here)
 *   PROBE      a message looked at, not received
 *   COLL       a collective (its bytes: the collective bytes metric)
 *   RMA        one-sided communication
 *   INIT, FINALIZE, ABORT
 *   FILE       MPI-IO
 *   OTHER      none of these (an Other MPI Event)
 */
#ifndef SONDE_MPIFUNCS_H
#define SONDE_MPIFUNCS_H

enum sonde_mpi_class {
	SONDE_MPI_C_OTHER,
	SONDE_MPI_C_SEND,
	SONDE_MPI_C_RECV,
	SONDE_MPI_C_IRECV,
	SONDE_MPI_C_SENDRECV,
	SONDE_MPI_C_ISENDRECV,
	SONDE_MPI_C_PINIT,
	SONDE_MPI_C_START,
	SONDE_MPI_C_WAIT,
	SONDE_MPI_C_PROBE,
	SONDE_MPI_C_COLL,
	SONDE_MPI_C_RMA,
	SONDE_MPI_C_INIT,
	SONDE_MPI_C_FINALIZE,
	SONDE_MPI_C_ABORT,
	SONDE_MPI_C_FILE,
};

/* clang-format off */
#define SONDE_MPI_FUNCS(X) \
	X(MPI_Abort, ABORT) \
	X(MPI_Accumulate, RMA) \
	X(MPI_Address, OTHER) \
	X(MPI_Allgather, COLL) \
	X(MPI_Allgatherv, COLL) \
	X(MPI_Allreduce, COLL) \
	X(MPI_Alltoall, COLL) \
	X(MPI_Alltoallv, COLL) \
	X(MPI_Alltoallw, COLL) \
	X(MPI_Attr_delete, OTHER) \
	X(MPI_Attr_get, OTHER) \
	X(MPI_Attr_put, OTHER) \
	X(MPI_Barrier, COLL) \
	X(MPI_Bcast, COLL) \
	X(MPI_Bsend, SEND) \
	X(MPI_Bsend_init, PINIT) \
	X(MPI_Buffer_attach, OTHER) \
	X(MPI_Buffer_detach, OTHER) \
	X(MPI_Cancel, OTHER) \
	X(MPI_Cart_coords, OTHER) \
	X(MPI_Cart_create, OTHER) \
	X(MPI_Cart_get, OTHER) \
	X(MPI_Cart_map, OTHER) \
	X(MPI_Cart_rank, OTHER) \
	X(MPI_Cart_shift, OTHER) \
	X(MPI_Cart_sub, OTHER) \
	X(MPI_Cartdim_get, OTHER) \
	X(MPI_Comm_compare, OTHER) \
	X(MPI_Comm_create, OTHER) \
	X(MPI_Comm_dup, OTHER) \
	X(MPI_Comm_free, OTHER) \
	X(MPI_Comm_group, OTHER) \
	X(MPI_Comm_rank, OTHER) \
	X(MPI_Comm_remote_group, OTHER) \
	X(MPI_Comm_remote_size, OTHER) \
	X(MPI_Comm_size, OTHER) \
	X(MPI_Comm_split, OTHER) \
	X(MPI_Comm_test_inter, OTHER) \
	X(MPI_Dims_create, OTHER) \
	X(MPI_Errhandler_create, OTHER) \
	X(MPI_Errhandler_free, OTHER) \
	X(MPI_Errhandler_get, OTHER) \
	X(MPI_Errhandler_set, OTHER) \
	X(MPI_Error_class, OTHER) \
	X(MPI_Error_string, OTHER) \
	X(MPI_File_close, FILE) \
	X(MPI_File_delete, FILE) \
	X(MPI_File_get_amode, FILE) \
	X(MPI_File_get_atomicity, FILE) \
	X(MPI_File_get_byte_offset, FILE) \
	X(MPI_File_get_group, FILE) \
	X(MPI_File_get_info, FILE) \
	X(MPI_File_get_position, FILE) \
	X(MPI_File_get_position_shared, FILE) \
	X(MPI_File_get_size, FILE) \
	X(MPI_File_get_type_extent, FILE) \
	X(MPI_File_get_view, FILE) \
	X(MPI_File_iread, FILE) \
	X(MPI_File_iread_at, FILE) \
	X(MPI_File_iread_shared, FILE) \
	X(MPI_File_iwrite, FILE) \
	X(MPI_File_iwrite_at, FILE) \
	X(MPI_File_iwrite_shared, FILE) \
	X(MPI_File_open, FILE) \
	X(MPI_File_preallocate, FILE) \
	X(MPI_File_read, FILE) \
	X(MPI_File_read_all, FILE) \
	X(MPI_File_read_all_begin, FILE) \
	X(MPI_File_read_all_end, FILE) \
	X(MPI_File_read_at, FILE) \
	X(MPI_File_read_at_all, FILE) \
	X(MPI_File_read_at_all_begin, FILE) \
	X(MPI_File_read_at_all_end, FILE) \
	X(MPI_File_read_ordered, FILE) \
	X(MPI_File_read_ordered_begin, FILE) \
	X(MPI_File_read_ordered_end, FILE) \
	X(MPI_File_read_shared, FILE) \
	X(MPI_File_seek, FILE) \
	X(MPI_File_seek_shared, FILE) \
	X(MPI_File_set_atomicity, FILE) \
	X(MPI_File_set_info, FILE) \
	X(MPI_File_set_size, FILE) \
	X(MPI_File_set_view, FILE) \
	X(MPI_File_sync, FILE) \
	X(MPI_File_write, FILE) \
	X(MPI_File_write_all, FILE) \
	X(MPI_File_write_all_begin, FILE) \
	X(MPI_File_write_all_end, FILE) \
	X(MPI_File_write_at, FILE) \
	X(MPI_File_write_at_all, FILE) \
	X(MPI_File_write_at_all_begin, FILE) \
	X(MPI_File_write_at_all_end, FILE) \
	X(MPI_File_write_ordered, FILE) \
	X(MPI_File_write_ordered_begin, FILE) \
	X(MPI_File_write_ordered_end, FILE) \
	X(MPI_File_write_shared, FILE) \
	X(MPI_Finalize, FINALIZE) \
	X(MPI_Gather, COLL) \
	X(MPI_Gatherv, COLL) \
	X(MPI_Get, RMA) \
	X(MPI_Get_count, OTHER) \
	X(MPI_Get_elements, OTHER) \
	X(MPI_Get_processor_name, OTHER) \
	X(MPI_Get_version, OTHER) \
	X(MPI_Graph_create, OTHER) \
	X(MPI_Graph_get, OTHER) \
	X(MPI_Graph_map, OTHER) \
	X(MPI_Graph_neighbors, OTHER) \
	X(MPI_Graph_neighbors_count, OTHER) \
	X(MPI_Graphdims_get, OTHER) \
	X(MPI_Group_compare, OTHER) \
	X(MPI_Group_difference, OTHER) \
	X(MPI_Group_excl, OTHER) \
	X(MPI_Group_free, OTHER) \
	X(MPI_Group_incl, OTHER) \
	X(MPI_Group_intersection, OTHER) \
	X(MPI_Group_rank, OTHER) \
	X(MPI_Group_size, OTHER) \
	X(MPI_Group_translate_ranks, OTHER) \
	X(MPI_Group_union, OTHER) \
	X(MPI_Ibsend, SEND) \
	X(MPI_Init, INIT) \
	X(MPI_Init_thread, INIT) \
	X(MPI_Intercomm_create, OTHER) \
	X(MPI_Intercomm_merge, OTHER) \
	X(MPI_Irecv, IRECV) \
	X(MPI_Irsend, SEND) \
	X(MPI_Isend, SEND) \
	X(MPI_Issend, SEND) \
	X(MPI_Keyval_create, OTHER) \
	X(MPI_Keyval_free, OTHER) \
	X(MPI_Op_create, OTHER) \
	X(MPI_Op_free, OTHER) \
	X(MPI_Pack, OTHER) \
	X(MPI_Pack_size, OTHER) \
	X(MPI_Probe, PROBE) \
	X(MPI_Put, RMA) \
	X(MPI_Recv, RECV) \
	X(MPI_Recv_init, PINIT) \
	X(MPI_Reduce, COLL) \
	X(MPI_Reduce_scatter, COLL) \
	X(MPI_Request_free, OTHER) \
	X(MPI_Rsend, SEND) \
	X(MPI_Rsend_init, PINIT) \
	X(MPI_Scan, COLL) \
	X(MPI_Scatter, COLL) \
	X(MPI_Scatterv, COLL) \
	X(MPI_Send, SEND) \
	X(MPI_Send_init, PINIT) \
	X(MPI_Sendrecv, SENDRECV) \
	X(MPI_Sendrecv_replace, SENDRECV) \
	X(MPI_Ssend, SEND) \
	X(MPI_Ssend_init, PINIT) \
	X(MPI_Start, START) \
	X(MPI_Startall, START) \
	X(MPI_Test, WAIT) \
	X(MPI_Test_cancelled, OTHER) \
	X(MPI_Testall, WAIT) \
	X(MPI_Testany, WAIT) \
	X(MPI_Testsome, WAIT) \
	X(MPI_Topo_test, OTHER) \
	X(MPI_Type_commit, OTHER) \
	X(MPI_Type_contiguous, OTHER) \
	X(MPI_Type_extent, OTHER) \
	X(MPI_Type_free, OTHER) \
	X(MPI_Type_hindexed, OTHER) \
	X(MPI_Type_hvector, OTHER) \
	X(MPI_Type_indexed, OTHER) \
	X(MPI_Type_lb, OTHER) \
	X(MPI_Type_size, OTHER) \
	X(MPI_Type_struct, OTHER) \
	X(MPI_Type_ub, OTHER) \
	X(MPI_Type_vector, OTHER) \
	X(MPI_Unpack, OTHER) \
	X(MPI_Wait, WAIT) \
	X(MPI_Waitall, WAIT) \
	X(MPI_Waitany, WAIT) \
	X(MPI_Waitsome, WAIT) \
	X(MPI_Win_complete, OTHER) \
	X(MPI_Win_create, OTHER) \
	X(MPI_Win_fence, OTHER) \
	X(MPI_Win_free, OTHER) \
	X(MPI_Win_lock, OTHER) \
	X(MPI_Win_post, OTHER) \
	X(MPI_Win_start, OTHER) \
	X(MPI_Win_test, OTHER) \
	X(MPI_Win_unlock, OTHER) \
	X(MPI_Exscan, COLL) \
	X(MPI_Reduce_scatter_block, COLL) \
	X(MPI_Ibarrier, OTHER) \
	X(MPI_Ibcast, OTHER) \
	X(MPI_Igather, OTHER) \
	X(MPI_Igatherv, OTHER) \
	X(MPI_Iscatter, OTHER) \
	X(MPI_Iscatterv, OTHER) \
	X(MPI_Iallgather, OTHER) \
	X(MPI_Iallgatherv, OTHER) \
	X(MPI_Ialltoall, OTHER) \
	X(MPI_Ialltoallv, OTHER) \
	X(MPI_Ialltoallw, OTHER) \
	X(MPI_Ireduce, OTHER) \
	X(MPI_Iallreduce, OTHER) \
	X(MPI_Ireduce_scatter, OTHER) \
	X(MPI_Ireduce_scatter_block, OTHER) \
	X(MPI_Iscan, OTHER) \
	X(MPI_Iexscan, OTHER) \
	X(MPI_Neighbor_allgather, COLL) \
	X(MPI_Neighbor_allgatherv, COLL) \
	X(MPI_Neighbor_alltoall, COLL) \
	X(MPI_Neighbor_alltoallv, COLL) \
	X(MPI_Neighbor_alltoallw, COLL) \
	X(MPI_Ineighbor_allgather, COLL) \
	X(MPI_Ineighbor_allgatherv, COLL) \
	X(MPI_Ineighbor_alltoall, COLL) \
	X(MPI_Ineighbor_alltoallv, COLL) \
	X(MPI_Ineighbor_alltoallw, COLL) \
	X(MPI_Improbe, PROBE) \
	X(MPI_Mprobe, PROBE) \
	X(MPI_Mrecv, RECV) \
	X(MPI_Imrecv, IRECV) \
	X(MPI_Iprobe, PROBE) \
	X(MPI_Rput, RMA) \
	X(MPI_Rget, RMA) \
	X(MPI_Raccumulate, RMA) \
	X(MPI_Get_accumulate, RMA) \
	X(MPI_Rget_accumulate, RMA) \
	X(MPI_Fetch_and_op, RMA) \
	X(MPI_Compare_and_swap, RMA) \
	X(MPI_Win_allocate, OTHER) \
	X(MPI_Win_allocate_shared, OTHER) \
	X(MPI_Win_create_dynamic, OTHER) \
	X(MPI_Win_lock_all, OTHER) \
	X(MPI_Win_unlock_all, OTHER) \
	X(MPI_Win_flush, OTHER) \
	X(MPI_Win_flush_all, OTHER) \
	X(MPI_Win_flush_local, OTHER) \
	X(MPI_Win_flush_local_all, OTHER) \
	X(MPI_Win_sync, OTHER) \
	X(MPI_Win_wait, OTHER) \
	X(MPI_Comm_split_type, OTHER) \
	X(MPI_Comm_create_group, OTHER) \
	X(MPI_Comm_idup, OTHER) \
	X(MPI_Comm_dup_with_info, OTHER) \
	X(MPI_Isendrecv, ISENDRECV) \
	X(MPI_Isendrecv_replace, ISENDRECV) \
	X(MPI_Request_get_status, WAIT) \
	X(MPI_Send_c, SEND) \
	X(MPI_Recv_c, RECV) \
	X(MPI_Isend_c, SEND) \
	X(MPI_Irecv_c, IRECV) \
	X(MPI_Bsend_c, SEND) \
	X(MPI_Ssend_c, SEND) \
	X(MPI_Rsend_c, SEND) \
	X(MPI_Ibsend_c, SEND) \
	X(MPI_Issend_c, SEND) \
	X(MPI_Irsend_c, SEND) \
	X(MPI_Sendrecv_c, SENDRECV) \
	X(MPI_Sendrecv_replace_c, SENDRECV) \
	X(MPI_Mrecv_c, RECV) \
	X(MPI_Imrecv_c, IRECV) \
	X(MPI_Bcast_c, COLL) \
	X(MPI_Ibcast_c, OTHER) \
	X(MPI_Reduce_c, COLL) \
	X(MPI_Ireduce_c, OTHER) \
	X(MPI_Allreduce_c, COLL) \
	X(MPI_Iallreduce_c, OTHER) \
	X(MPI_Gather_c, COLL) \
	X(MPI_Gatherv_c, COLL) \
	X(MPI_Scatter_c, COLL) \
	X(MPI_Scatterv_c, COLL) \
	X(MPI_Allgather_c, COLL) \
	X(MPI_Allgatherv_c, COLL) \
	X(MPI_Alltoall_c, COLL) \
	X(MPI_Alltoallv_c, COLL) \
	X(MPI_Alltoallw_c, COLL) \
	X(MPI_Reduce_scatter_c, COLL) \
	X(MPI_Reduce_scatter_block_c, COLL) \
	X(MPI_Scan_c, COLL) \
	X(MPI_Exscan_c, COLL) \
	X(MPI_Put_c, RMA) \
	X(MPI_Get_c, RMA) \
	X(MPI_Accumulate_c, RMA) \
	X(MPI_Rput_c, RMA) \
	X(MPI_Rget_c, RMA) \
	X(MPI_Get_count_c, OTHER) \
	X(MPI_Pready, START) \
	X(MPI_Psend_init, PINIT) \
	X(MPI_Precv_init, PINIT) \
	/* end */
/* clang-format on */

/* Function ids: SONDE_MPI_F_NAME (MPI_Send: SONDE_MPI_F_MPI_Send). */
enum {
	SONDE_MPI_F_NONE_,
#define SONDE_MPI_F_(NAME, CLASS) SONDE_MPI_F_##NAME,
	SONDE_MPI_FUNCS(SONDE_MPI_F_)
#undef SONDE_MPI_F_
	SONDE_MPI_NFUNCS /* ids are 1 to SONDE_MPI_NFUNCS - 1 */
};

struct sonde_mpi_func_desc {
	const char *name;
	enum sonde_mpi_class cls;
};

/* The row of function id, NULL for an id not in the list. */
static inline const struct sonde_mpi_func_desc *sonde_mpi_func(unsigned id)
{
	static const struct sonde_mpi_func_desc rows[] = {
		{ 0, SONDE_MPI_C_OTHER },
#define SONDE_MPI_ROW_(NAME, CLASS) { #NAME, SONDE_MPI_C_##CLASS },
		SONDE_MPI_FUNCS(SONDE_MPI_ROW_)
#undef SONDE_MPI_ROW_
	};
	return id >= 1 && id < SONDE_MPI_NFUNCS ? &rows[id] : 0;
}

#endif
