// Collectives on intra- and intercommunicators, built only on the internal
// point-to-point interface (core/p2p.h). Each algorithm is written once, as a
// C++20 coroutine over rounds of sends and receives (one file per family:
// barrier_bcast.cc, reduce.cc, gather_scatter.cc, alltoall_neighbor.cc; what
// they share in coll_internal.h); the blocking call drives it to the end on
// the spot, the nonblocking call attaches it to an MPI request that
// progress() advances (through a progress hook, core/progress_hooks.h, and
// docs/collectives.md).
//
// Contract shared by every function here:
// - Arguments are already validated by the ABI layer (binding/c/coll_args.h): live
//   communicator, committed datatypes, counts >= 0, root in range, op
//   valid and defined on the datatype. MPI_IN_PLACE arrives as MPI_IN_PLACE.
// - Intercommunicators (comm->inter): MPI's intercommunicator semantics.
//   Rooted calls take root = MPI_ROOT at the root, MPI_PROC_NULL at the
//   other members of the root's group, the root's remote rank in the other
//   group; count/displacement arrays are per remote rank (Reduce_scatter's:
//   per local rank); no MPI_IN_PLACE; Scan/Exscan do not exist there.
// - `request`: null for the blocking form, which returns when this rank's
//   part is done. Otherwise the collective is started and *request receives
//   a user request (RequestKind::kCollective) that MPI_Wait/Test/... finish.
//   Buffers, count/displacement arrays and datatypes must then stay
//   untouched until completion, as MPI requires.
// - Results are MPI error classes; nothing throws (allocation failure is
//   MPI_ERR_NO_MEM) and no error handler runs here.
// - Callers hold the engine lock, as for p2p.h.
// - Internal traffic travels on the user's communicator with a reserved tag
//   (tag_of in coll_internal.h: -16 - kind - 64 * (sequence number mod 2^24)), so
//   PERUSE/MPI_T tools see it and can filter it (tag <= kCollectiveTagBase).
//   Every collective call on a communicator takes the next sequence number
//   on every rank (MPI makes all ranks call collectives in the same order),
//   so the traffic of several outstanding collectives never mixes.
// - Reductions: inout = in op inout, with `in` the lower ranks' data, so a
//   non-commutative (user) operation sees rank 0 op rank 1 op ... op rank p-1.
//   Intermediate results are kept in the user's datatype layout (see datatype/op.h).
#pragma once

#include <cstdint>
#include <vector>

#include "coll/inline_vector.h"
#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine::coll {

// Per-rank counts and displacements (elements, or bytes for Alltoallw's
// displacements), copied from the caller's int or MPI_Count/MPI_Aint arrays:
// a nonblocking collective keeps its own copy, so the large-count (_c)
// forms and the int forms share every algorithm. Inline up to 16 ranks.
// The v-collectives take them as rvalue references: a blocking call reads
// the caller's arrays in place, a nonblocking one moves them into its
// frame.
using Counts = InlineVector<int64_t, 16>;

// Tag kinds. Stable numbers: tools may key on them ((-16 - tag) % 64).
enum Kind : int {
  kBarrier = 0,
  kBcast = 1,
  kReduce = 2,
  kAllreduce = 3,
  kGather = 4,
  kAllgather = 5,
  kGatherv = 6,
  kScatter = 7,
  kScatterv = 8,
  kAllgatherv = 9,
  kAlltoall = 10,
  kAlltoallv = 11,
  kAlltoallw = 12,
  kReduceScatter = 13,
  kReduceScatterBlock = 14,
  kScan = 15,
  kExscan = 16,
  kNeighborAllgather = 17,
  kNeighborAllgatherv = 18,
  kNeighborAlltoall = 19,
  kNeighborAlltoallv = 20,
  kNeighborAlltoallw = 21,
};

// A collective call this rank refused before starting it (an argument
// failed a local check) still takes its sequence number on `comm`, as the
// ranks whose calls went ahead did, so every later collective on `comm` --
// MPI_Finalize's barrier included -- agrees with them. Whatever they sent
// for the refused call stays unmatched under its own tag (which comes back
// only after 2^24 collectives on `comm`). `call`: the refused call's MPI
// name (a blocking call of a kind that may use a shared segment takes
// part in deciding on it, coll/shared.h, as it would have had it run).
void skip_sequence(Comm* comm, const char* call);

// What an internal tag carries: the collective's kind and its sequence
// number on the communicator (modulo 2^24). False for a user tag.
bool decode_tag(int tag, int* kind, uint32_t* seq);
// The MPI call of a kind ("MPI_Allreduce"; the blocking name for both forms).
const char* kind_name(int kind);

int barrier(Comm* comm, MPI_Request* request = nullptr);

// Frees the large scratch blocks kept for the next collective
// (scratch_pool.h); MPI_Finalize calls it.
void release_cached_scratch();

int bcast(void* buf, int64_t count, Datatype* type, int root, Comm* comm, MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). rbuf
// matters only at the root.
int reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* comm,
           MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE (the input is then in rbuf).
int allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
              MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE at the root (its contribution is already at
// rbuf's root slot; scount/stype are then ignored). The r* arguments matter
// only at the root.
int gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
           Comm* comm, MPI_Request* request = nullptr);
int gatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts&& rcounts, Counts&& displs,
            Datatype* rtype, int root, Comm* comm, MPI_Request* request = nullptr);

// rbuf may be MPI_IN_PLACE at the root (its block stays where it is in
// sbuf; rcount/rtype are then ignored). The s* arguments matter only at the
// root.
int scatter(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
            Comm* comm, MPI_Request* request = nullptr);
int scatterv(const void* sbuf, Counts&& scounts, Counts&& displs, Datatype* stype, void* rbuf, int64_t rcount,
             Datatype* rtype, int root, Comm* comm, MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE (each rank's contribution is already at its slot
// of rbuf; scount/stype are then ignored).
int allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
              Comm* comm, MPI_Request* request = nullptr);
int allgatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts&& rcounts, Counts&& displs,
               Datatype* rtype, Comm* comm, MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE (the data to send is in rbuf, described by the
// receive arguments, and is replaced by the result).
int alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* comm,
             MPI_Request* request = nullptr);
int alltoallv(const void* sbuf, Counts&& scounts, Counts&& sdispls, Datatype* stype, void* rbuf, Counts&& rcounts,
              Counts&& rdispls, Datatype* rtype, Comm* comm, MPI_Request* request = nullptr);
// Byte displacements and one datatype per peer (stypes empty in place).
int alltoallw(const void* sbuf, Counts scounts, Counts sdispls, std::vector<Datatype*> stypes, void* rbuf,
              Counts rcounts, Counts rdispls, std::vector<Datatype*> rtypes, Comm* comm,
              MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE (the whole input vector is then in rbuf).
int reduce_scatter_block(const void* sbuf, void* rbuf, int64_t rcount, Datatype* type, MPI_Op op, Comm* comm,
                         MPI_Request* request = nullptr);
int reduce_scatter(const void* sbuf, void* rbuf, Counts rcounts, Datatype* type, MPI_Op op, Comm* comm,
                   MPI_Request* request = nullptr);

// sbuf may be MPI_IN_PLACE (the input is then in rbuf). Exscan leaves rank
// 0's rbuf untouched.
int scan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
         MPI_Request* request = nullptr);
int exscan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
           MPI_Request* request = nullptr);

// One peer's part of an exchange: `count` elements of `type` at `buf`.
struct Block {
  void* buf;
  int64_t count;
  Datatype* type;
};

// Neighbourhood collectives (comm an intracommunicator with a topology):
// out[i] goes to the i-th destination and in[i] comes from the i-th source,
// in topo_neighbors' order (comm/topo.h); all five MPI_Neighbor_* calls
// are this exchange with different blocks.
int neighbor(Comm* comm, Kind kind, std::vector<Block> out, std::vector<Block> in, MPI_Request* request = nullptr);

// Nonblocking collectives advance through a progress hook
// (core/progress_hooks.h) and count themselves in Comm::pending_ops while
// they run.

}  // namespace sonde::engine::coll
