// The argument check shared by the point-to-point files of the C binding
// (abi_p2p_send_recv.cc, abi_sendrecv.cc).
#pragma once

#include <climits>
#include <cstdint>

#include "binding/c/abi.h"

namespace sonde::engine::p2p_args {

constexpr int kTagUb = INT_MAX;

// Validates the arguments every send or receive shares: the communicator,
// count, datatype, buffer (null only for nothing to move, or with a derived
// type that may carry absolute addresses; never MPI_IN_PLACE, which only
// collectives accept; count elements of the type must fit in MPI_Count
// bytes, datatype_fits), the peer (MPI_PROC_NULL always;
// MPI_ANY_SOURCE and MPI_ANY_TAG only for a `receive`) and the tag. Sets *c
// and *t as they are found (*c null for a bad communicator). Returns an MPI
// error class, MPI_SUCCESS when the arguments are acceptable; raises nothing.
// Always inlined: it is the first step of every send and receive, and inlined
// its outputs stay in registers and `receive` folds away.
[[gnu::always_inline]] inline int check(MPI_Comm comm, Comm** c, MPI_Datatype type, Datatype** t, int64_t count,
                                        const void* buf, int peer, int tag, bool receive) {
  *c = find_comm(comm);
  if (!*c) return MPI_ERR_COMM;
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (!buf && count > 0 && (*t)->size > 0 && (*t)->predefined) return MPI_ERR_BUFFER;
  if (!datatype_fits(**t, count)) return MPI_ERR_COUNT;
  if (receive) {
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > kTagUb)) return MPI_ERR_TAG;
    if (peer != MPI_ANY_SOURCE && peer != MPI_PROC_NULL && (peer < 0 || peer >= (*c)->peers())) return MPI_ERR_RANK;
  } else {
    if (tag < 0 || tag > kTagUb) return MPI_ERR_TAG;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= (*c)->peers())) return MPI_ERR_RANK;
  }
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::p2p_args
