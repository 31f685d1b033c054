// Collectives through a segment shared by the members of a communicator
// that all run on one host (docs/collectives.md, "Shared-segment
// collectives"). Each rank writes its contribution into its own slot of the
// segment and publishes the call's sequence number in its control line;
// the ranks that need the contribution wait for that number and read the
// slot. No point-to-point message, request or match is involved, so these
// calls fire no PERUSE event; a snapshot (hang report) shows a rank waiting
// in one as receives posted from the ranks it waits for, with the
// collective's tag, like the point-to-point algorithms' waits.
//
// Which calls take the segment is decided identically on every member:
// - the communicator's decision (decide), taken at a fixed point of its
//   sequence of collectives, agreed through point-to-point collectives;
// - the call's kind and, for data, its size in bytes, which MPI makes equal
//   on every rank (type signatures match).
// A call the segment does not take runs the point-to-point algorithm.
// Gatherv, Scatterv and Alltoallv decide block by block instead, each
// block's way known to both its ends (below).
//
// Contract of every function here: blocking calls only (the nonblocking
// forms never come here), arguments validated as coll.h says, the engine
// lock held.
#pragma once

#include <cstdint>

#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine::coll::shared {

// A communicator decides after this many collectives: one that does fewer
// never pays for a segment.
constexpr uint64_t kDecideAfter = 16;
// Larger communicators keep point-to-point: every rank reads every member's
// control line, which stops paying at a few dozen ranks.
constexpr int kMaxRanks = 16;

// Called on entry to each collective that can use the segment (the ones
// below), and for a refused call of one of those kinds (skip_sequence),
// before the call takes its sequence number. The first such call once the
// communicator has started kDecideAfter collectives decides, on every
// member alike, whether it gets a segment: an intracommunicator of 2 to
// kMaxRanks ranks on one host whose members all allow it (SONDE_COLL_SHM)
// does, if the segment can be made and mapped. Deciding runs two nested
// point-to-point collectives (a Bcast of the segment's name and an
// Allreduce of who mapped it), whose sequence numbers are given back.
void decide_now(Comm* c);
inline void decide(Comm* c) {
  if (!c->coll_shared_decided && c->coll_seq >= kDecideAfter) [[unlikely]]
    decide_now(c);
}

// Each returns false when the call does not go through the segment (the
// caller then runs the point-to-point algorithm); otherwise *rc is the
// call's result. Data calls go through it when their one-rank contribution
// is between 1 byte and the segment's slot (SONDE_COLL_SHM_BYTES of rank 0):
// a Bcast's message, a reduction's or scan's vector (a Reduce_scatter's
// whole vector), a Gather's or Allgather's block (an Allgatherv's largest),
// all of a Scatter's or Alltoall's blocks together. Those that every rank
// or the root copies out (Gather, Scatter, Allgather(v), Alltoall) only up
// to 4 KiB, and reductions only while p times the vector is at most
// 256 KiB.
bool barrier(Comm* c, int* rc);
bool bcast(void* buf, int64_t count, Datatype* type, int root, Comm* c, int* rc);
bool reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c, int* rc);
bool allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* c, int* rc);
bool gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
            Comm* c, int* rc);
bool scatter(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
             Comm* c, int* rc);
bool allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
               int* rc);
// Gatherv: rank j's block goes through the segment when its size is 1 byte
// to a medium slot (4 KiB at most), which j and the root both know; the
// others travel point-to-point in the same call. False only when the
// communicator has no segment.
bool gatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, const int64_t* rcounts,
             const int64_t* displs, Datatype* rtype, int root, Comm* c, int* rc);
// Scatterv and Alltoallv (not in place): by i's count, rank j's block from
// rank i goes through i's line slot when it is 1 byte to the line stride,
// else through i's medium slot up to the medium stride (22 and 2,048 bytes
// for 2 ranks, 10 and 1,024 for 4, 1 and 256 for 16 with the default slot
// size), else point-to-point in the same call. i's line slot starts with a
// table of its p block sizes (0: point-to-point), which j follows, so a j
// whose count disagrees gets MPI_ERR_TRUNCATE or the point-to-point
// message, never a wait for data that is not coming. False only when the
// communicator has no segment (or the Alltoallv is in place).
bool scatterv(const void* sbuf, const int64_t* scounts, const int64_t* displs, Datatype* stype, void* rbuf,
              int64_t rcount, Datatype* rtype, int root, Comm* c, int* rc);
bool alltoallv(const void* sbuf, const int64_t* scounts, const int64_t* sdispls, Datatype* stype, void* rbuf,
               const int64_t* rcounts, const int64_t* rdispls, Datatype* rtype, Comm* c, int* rc);
bool allgatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, const int64_t* rcounts,
                const int64_t* displs, Datatype* rtype, Comm* c, int* rc);
bool alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
              int* rc);
// Scan, or Exscan (exclusive).
bool scan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, bool exclusive, Comm* c, int* rc);
// Reduce_scatter (rcounts, one per rank) or Reduce_scatter_block (rcounts
// null: rcount per rank).
bool reduce_scatter(const void* sbuf, void* rbuf, const int64_t* rcounts, int64_t rcount, Datatype* type, MPI_Op op,
                    Comm* c, int* rc);

// A call this rank refused after it took its sequence number: publishes
// that the rank is past it, so members that run it through the segment do
// not wait for this rank (one that needs its data gets MPI_ERR_OTHER
// instead of reading a slot it did not write).
void skipped(Comm* c);

}  // namespace sonde::engine::coll::shared
