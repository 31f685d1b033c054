// Blocking collectives on intracommunicators, built only on the internal
// point-to-point interface (p2p.h).
//
// Contract shared by every function here:
// - Arguments are already validated by the ABI layer (abi_coll.cc): live
//   communicator, committed datatypes, counts >= 0, root in range, op valid
//   and defined on the datatype. MPI_IN_PLACE arrives as MPI_IN_PLACE.
// - Results are MPI error classes; nothing throws (allocation failure is
//   MPI_ERR_NO_MEM) and no error handler runs here.
// - Callers hold the engine lock, as for p2p.h.
// - Internal traffic travels on the user's communicator with the reserved tag
//   collective_tag(kind) of the collective's Kind below, so PERUSE/MPI_T
//   tools see it and can filter it (tag <= kCollectiveTagBase). Messages of
//   successive collectives never mix up: all ranks call collectives in the
//   same order, every receive names its source, and MPI's per-pair
//   non-overtaking order does the rest.
// - Reductions: inout = in op inout, with `in` the lower ranks' data, so a
//   non-commutative (user) operation sees rank 0 op rank 1 op ... op rank p-1.
//   Intermediate results are kept in the user's datatype layout (see op.h).
#pragma once

#include <cstdint>

#include "engine/objects.h"
#include "include/mpi.h"

namespace sonde::engine::coll {

// Tag kinds (collective_tag(kind)). Stable numbers: tools may key on them.
// The later collectives (Gatherv, Scatter, Alltoall, Scan, nonblocking
// forms) take the next numbers.
enum Kind : int {
  kBarrier = 0,
  kBcast = 1,
  kReduce = 2,
  kAllreduce = 3,
  kGather = 4,
  kAllgather = 5,
};

int barrier(Comm* comm);

int bcast(void* buf, int64_t count, Datatype* type, int root, Comm* comm);

// sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). rbuf
// matters only at the root.
int reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* comm);

// sbuf may be MPI_IN_PLACE (the input is then in rbuf).
int allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm);

// sbuf may be MPI_IN_PLACE at the root (its contribution is already at
// rbuf's root slot; scount/stype are then ignored). The r* arguments matter
// only at the root.
int gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
           int root, Comm* comm);

// sbuf may be MPI_IN_PLACE (each rank's contribution is already at its slot
// of rbuf; scount/stype are then ignored).
int allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
              Comm* comm);

}  // namespace sonde::engine::coll
