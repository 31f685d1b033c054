// What the collective files of coll/ share, and nothing else includes:
// the algorithms' switch points, buffer helpers, the sub-algorithms one
// family borrows from another, and the run machinery (launch) through which
// every entry point of coll.h starts its Task.
//
// Files: barrier_bcast.cc, reduce.cc (reduce, allreduce, reduce_scatter,
// scan), gather_scatter.cc (gather, scatter, allgather and their v forms),
// alltoall_neighbor.cc (alltoall(v,w) and the neighbourhood collectives),
// each with its intercommunicator variants and its entry points;
// buffers.cc (copy, pack_all, unpack_all); coll_schedule.cc (Schedule,
// the nonblocking collectives in flight and their progress hook).
// docs/collectives.md explains the choice of algorithms and the switch
// points below.
//
// Ranks are renumbered relative to the root ("lrank") wherever the shape of
// a tree only matters up to rotation; reductions with a non-commutative
// operation keep the real rank order instead, because they must combine
// rank 0 op rank 1 op ... in that order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "coll/coll.h"
#include "coll/coll_schedule.h"
#include "coll/scratch_pool.h"
#include "core/engine.h"
#include "core/lookup.h"
#include "core/progress_hooks.h"
#include "datatype/op.h"

namespace sonde::engine::coll::detail {

// Size switches between the latency- and the bandwidth-oriented algorithms,
// in bytes. Below them the log(p) message count matters more than the
// log(p) extra copies of the payload.
constexpr int64_t kBcastLarge = 64 * 1024;          // whole message
constexpr int64_t kAllreduceLarge = 32 * 1024;      // whole vector
constexpr int64_t kReduceLarge = 32 * 1024;         // whole vector
constexpr int64_t kGatherBinomialMax = 64 * 1024;   // all ranks' data together
constexpr int64_t kScatterBinomialMax = 64 * 1024;  // all ranks' data together
constexpr int64_t kAllgatherSmallMax = 64 * 1024;   // all ranks' data together (doubling / Bruck)
constexpr int64_t kAlltoallBruckMax = 256;          // one block
// Alltoall's Bruck saves at most one message per rank on 4 ranks or fewer
// and costs a second dependent round: there all pairs are posted at once.
constexpr int kAlltoallBruckMinRanks = 5;
constexpr int64_t kAlltoallScatteredMax = 32 * 1024;  // one block
// ... except on this many ranks or fewer, where posting every pair at once
// never has more than 3 large messages in flight per rank, and a rank
// whose partner is not running (ranks outnumbering cores) moves on to the
// next (4 ranks on 2 cores, 64 KiB blocks: 50-55 us against 59-62 us
// pairwise).
constexpr int kAlltoallScatteredRanks = 4;
constexpr int64_t kReduceScatterPairwiseMin = 8 * 1024;  // whole vector
// Bcast's scatter + allgather and Reduce's reduce-scatter + gather take
// about twice the binomial tree's rounds: on fewer ranks than
// Settings::coll_split_min_ranks (default 8) the rounds cost more than the
// bandwidth saves (measured at 4 ranks, 64 KiB and 1 MiB: bcast 1.6-2.7x
// and reduce 1.7-2.1x slower than the tree).
inline int split_min_ranks() { return engine().settings().coll_split_min_ranks; }

// The tag of collective `kind` with sequence number `seq` on a
// communicator (coll.h: -16 - kind - 64 * (seq mod 2^24)).
int tag_of(int kind, uint64_t seq);

// ---- buffers ---------------------------------------------------------------

// Address of element `i` of a buffer of `type` elements.
inline uint8_t* at(void* buf, int64_t i, const Datatype* type) { return static_cast<uint8_t*>(buf) + i * type->extent; }
inline const uint8_t* at(const void* buf, int64_t i, const Datatype* type) {
  return static_cast<const uint8_t*>(buf) + i * type->extent;
}

// Scratch laid out like `count` elements of a datatype, gaps included, so it
// is sent, received and reduced with the user's datatype (user operations
// expect exactly that layout). Up to kInline bytes live in the object itself
// (in the coroutine frame, which is pooled), so a small reduction allocates
// nothing; larger scratch comes from ScratchPool, which keeps large blocks
// for the next call.
class TypedScratch {
 public:
  static constexpr int64_t kInline = 64;

  void* allocate(int64_t count, const Datatype* type) {
    if (count <= 0) return nullptr;
    const int64_t last = (count - 1) * type->extent;
    const int64_t lo = std::min<int64_t>(0, last) + type->true_lb;
    const int64_t hi = std::max<int64_t>(0, last) + type->true_lb + type->true_extent;
    // Uninitialized: every byte read is written first.
    uint8_t* storage = small_;
    if (hi - lo > kInline) {
      bytes_.reset(static_cast<size_t>(hi - lo));
      storage = bytes_.data();
    }
    // The element at user offset 0 sits `-lo` bytes into the storage; the
    // base pointer may lie outside it, as with any MPI buffer whose lb > 0.
    return storage - lo;
  }

 private:
  ScratchBytes bytes_;
  alignas(16) uint8_t small_[kInline];
};

// Copies scount elements of stype at src into rcount elements of rtype at
// dst (the type signatures agree, as MPI requires). More data than room is
// MPI_ERR_TRUNCATE, like a receive. (buffers.cc)
int copy(const void* src, int64_t scount, const Datatype* stype, void* dst, int64_t rcount, const Datatype* rtype);

// Packed bytes of (buf, count, type) into out / from in, whole. (buffers.cc)
void pack_all(const void* buf, int64_t count, const Datatype* type, uint8_t* out);
void unpack_all(const uint8_t* in, void* buf, int64_t count, const Datatype* type);

// ---- sub-algorithms shared between families -----------------------------------

// Linear scatter (gather_scatter.cc): the root sends every rank its block
// directly. scounts/displs null: Scatter's layout (scount elements per rank
// at slot i*scount); otherwise Scatterv's. rbuf may be MPI_IN_PLACE at the
// root.
Task scatter_linear(Schedule& s, const void* sbuf, int64_t scount, const int64_t* scounts, const int64_t* displs,
                    Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root);

// ---- intercommunicator collectives ------------------------------------------------
//
// Group A and group B; every transfer between them goes through the
// leaders (local rank 0 of each group) or straight between peers, and the
// work inside a group reuses the intracommunicator algorithms on the
// hidden local intracommunicator (Schedule::to_local). Rooted collectives
// take root = MPI_ROOT at the root, MPI_PROC_NULL at the root's group
// peers (which do nothing) and the root's rank in the remote group at the
// other group's members. Each family's file holds its own variants.

inline bool root_idle(int root) { return root == MPI_PROC_NULL; }

// The leaders swap this group's (out, n, otype) for the other's (in, m,
// itype), which each leader then broadcasts in its group (barrier_bcast.cc).
// Ends with the schedule addressing the local group.
Task swap_and_broadcast(Schedule& s, const void* out, int64_t n, Datatype* otype, void* in, int64_t m, Datatype* itype);

// ---- running a collective (coll_schedule.cc) -------------------------------------

// A nonblocking collective in flight: its schedule, its coroutine and the
// user request that completes with it. Holds its communicator(s) busy
// (Comm::pending_ops), its op and its datatypes until destroyed.
// The datatypes a collective names, as launch() receives them: a braced
// list ({stype, rtype}) or a vector, read only while launch() runs.
class HeldTypes {
 public:
  HeldTypes() = default;
  HeldTypes(std::initializer_list<Datatype*> l) : list_(l) {}
  HeldTypes(const std::vector<Datatype*>& v) : vector_(&v) {}
  std::vector<Datatype*> copy() const { return vector_ ? *vector_ : std::vector<Datatype*>(list_); }

 private:
  std::initializer_list<Datatype*> list_;
  const std::vector<Datatype*>* vector_ = nullptr;
};

struct Flight {
  Flight(Comm* c, int kind, MPI_Op o, HeldTypes t) : schedule(c, kind), op(o), types(t.copy()) {
    ++schedule.user->pending_ops;
    if (schedule.local != schedule.user) ++schedule.local->pending_ops;
    op_hold(op);
    for (Datatype* d : types)
      if (d) retain_datatype(d);
  }
  ~Flight() {
    --schedule.user->pending_ops;
    if (schedule.local != schedule.user) --schedule.local->pending_ops;
    op_release(op);
    for (Datatype* d : types)
      if (d) release_datatype(d);
  }
  Schedule schedule;
  Task task;
  Request* request = nullptr;
  MPI_Op op;  // a reduction's op, held while it runs (MPI_Op_free may come meanwhile)
  // Its datatypes, likewise held (MPI_Type_free may come meanwhile).
  std::vector<Datatype*> types;
};

// The collectives' progress hook (the one instance, registered when the
// library loads); its in-flight count is the size of flights().
extern ProgressHook g_schedule_hook;

// The nonblocking collectives in flight, which the progress hook advances.
std::vector<Flight*>& flights();

// Resumes f's coroutine for as long as its rounds complete at once. True
// when the collective is finished.
bool advance(Flight& f);

// Completes f's user request with its Task's result and deletes f.
void finish_flight(Flight* f);

// The blocking form: drives t on s to its end, progressing the engine while
// a round is outstanding. Returns t's result.
int run_blocking(Schedule& s, Task t);

// A Task that is already over, yielding rc: what a function choosing among
// algorithms returns when there is nothing to do.
Task finished(int rc);

// The blocking form of an algorithm written as plain code (no coroutine, no
// frame): `body(schedule)` starts each round's transfers and completes the
// round on the spot with Schedule::wait_round. Small blocking broadcasts and
// reductions take this path; their messages, tags and PERUSE events are the
// Task versions'.
template <class Body>
int run_now(Comm* comm, Kind kind, Body body) {
  try {
    Schedule s(comm, kind);
    return body(s);
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  }
}

// Binomial trees over ranks relative to a root (lrank): the lowest set bit
// of lrank, or for lrank 0 the first power of two >= p. lrank's parent is
// lrank - low; its children are lrank + m for m = 1, 2, 4, ... below low
// (and below p - lrank).
inline int binomial_low(int lrank, int p) {
  int mask = 1;
  while (mask < p && !(lrank & mask)) mask <<= 1;
  return mask;
}

// One entry for both forms: `make(schedule)` builds the collective's Task;
// `op` is a reduction's operation.
// `types`: the datatypes a nonblocking collective uses until it completes
// (a blocking one neither copies nor holds them).
template <class Make>
int launch(Comm* comm, Kind kind, MPI_Request* request, Make make, MPI_Op op = MPI_OP_NULL, HeldTypes types = {}) {
  try {
    if (!request) {
      Schedule s(comm, kind);
      return run_blocking(s, make(s));
    }
    auto f = std::make_unique<Flight>(comm, kind, op, types);
    f->task = make(f->schedule);
    Request* q = engine().new_request(RequestKind::kCollective);
    if (!q) return MPI_ERR_INTERN;
    // No communicator on the request itself: PERUSE describes point-to-point
    // requests only, and the collective's own traffic is what tools see.
    q->active = true;
    f->request = q;
    f->schedule.waiting = f->task.handle();
    *request = q->handle;
    if (advance(*f)) {
      finish_flight(f.release());
    } else {
      flights().push_back(f.release());
      set_in_flight(&g_schedule_hook, static_cast<int>(flights().size()));
    }
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  }
}

}  // namespace sonde::engine::coll::detail
