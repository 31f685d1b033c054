// Gather(v), Scatter(v) and Allgather(v), on intra- and intercommunicators
// (coll.h has the contract, coll_internal.h what the collective files share).
#include "coll/coll.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "coll/coll_internal.h"
#include "coll/coll_schedule.h"
#include "coll/shared.h"

namespace sonde::engine::coll {
using namespace detail;

namespace {

inline int64_t lowbit(int64_t x) { return x & -x; }

// ---- gather / gatherv --------------------------------------------------------

// Binomial tree over packed bytes: interior nodes forward their whole
// subtree in one message, so the root takes log2 p messages. For small data,
// where message count dominates.
Task gather_binomial(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                     Datatype* rtype, int root, int64_t block) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p;
  const bool in_place = sbuf == MPI_IN_PLACE;
  const int64_t subtree = lrank == 0 ? p : std::min<int64_t>(lowbit(lrank), p - lrank);
  const int parent = (r - static_cast<int>(lowbit(lrank)) + p) % p;
  if (subtree == 1) {  // a leaf: straight from the user buffer
    s.send(sbuf, scount, stype, parent);
    co_return co_await s.round();
  }

  ScratchBytes packed(static_cast<size_t>(subtree * block));
  int own_rc = MPI_SUCCESS;
  if (!in_place) {
    // Only the root's own contribution can disagree with `block` (its send
    // and receive signatures are the user's to match). Report it, but only
    // after draining the children, who would otherwise wait forever.
    int64_t mine = scount * stype->size;
    if (mine > block) {
      own_rc = MPI_ERR_TRUNCATE;
      mine = block;
    }
    pack(*stype, sbuf, scount, 0, packed.data(), static_cast<uint64_t>(mine));
  }
  for (int mask = 1; mask < p && !(lrank & mask); mask <<= 1) {
    const int child = lrank + mask;
    if (child >= p) continue;
    const int64_t blocks = std::min<int64_t>(mask, p - child);
    s.recv(packed.data() + mask * block, blocks * block, byte_type(), (r + mask) % p);
  }
  SONDE_CO_TRY(co_await s.round());
  if (lrank != 0) {
    s.send(packed.data(), subtree * block, byte_type(), parent);
    co_return co_await s.round();
  }
  for (int j = in_place ? 1 : 0; j < p; ++j) {
    const int owner = (j + root) % p;
    unpack(*rtype, at(rbuf, owner * rcount, rtype), rcount, 0, packed.data() + j * block, static_cast<uint64_t>(block));
  }
  co_return own_rc;
}

// Linear: every rank sends straight into its slot at the root, which
// receives all of them concurrently. For large data, where the tree's
// store-and-forward copies would dominate. rcounts/displs null: rcount
// elements per rank at slot i*rcount (Gather); otherwise Gatherv's.
// Posts the transfers and copies the root's own block meanwhile; the
// caller completes the round. Returns the copy's result.
int post_gather_linear(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                       const int64_t* rcounts, const int64_t* displs, Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  if (r != root) {
    s.send(sbuf, scount, stype, root);
    return MPI_SUCCESS;
  }
  auto count_of = [=](int i) -> int64_t { return rcounts ? rcounts[i] : rcount; };
  auto slot = [=](int i) { return at(rbuf, displs ? displs[i] : int64_t(i) * rcount, rtype); };
  for (int i = 0; i < p; ++i)
    if (i != root) s.recv(slot(i), count_of(i), rtype, i);
  if (sbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  return copy(sbuf, scount, stype, slot(root), count_of(root), rtype);
}

Task gather_linear(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                   const int64_t* rcounts, const int64_t* displs, Datatype* rtype, int root) {
  const int rc = post_gather_linear(s, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype, root);
  const int wrc = co_await s.round();
  co_return rc != MPI_SUCCESS ? rc : wrc;
}

Task gather_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                 Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  // Every rank computes the same per-rank size: MPI makes each sender's
  // signature match the root's receive signature.
  const int64_t block = r == root ? rcount * rtype->size : scount * stype->size;
  if (p == 1 || block == 0) {
    if (r == root && sbuf != MPI_IN_PLACE)
      co_return copy(sbuf, scount, stype, at(rbuf, root * rcount, rtype), rcount, rtype);
    co_return MPI_SUCCESS;
  }
  if (block * p <= kGatherBinomialMax)
    co_return co_await gather_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root, block);
  co_return co_await gather_linear(s, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, root);
}

Task gatherv_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts,
                  Counts displs, Datatype* rtype, int root) {
  co_return co_await gather_linear(s, sbuf, scount, stype, rbuf, 0, rcounts.data(), displs.data(), rtype, root);
}

// ---- scatter / scatterv ------------------------------------------------------

// Binomial tree over packed bytes, the mirror of gather_binomial: a node
// receives its whole subtree's blocks from its parent and passes each
// child its part.
Task scatter_binomial(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                      Datatype* rtype, int root, int64_t block) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p;
  const int64_t subtree = lrank == 0 ? p : std::min<int64_t>(lowbit(lrank), p - lrank);
  const int parent = (r - static_cast<int>(lowbit(lrank)) + p) % p;
  if (subtree == 1) {  // a leaf: straight into the user buffer
    s.recv(rbuf, rcount, rtype, parent);
    co_return co_await s.round();
  }
  ScratchBytes packed(static_cast<size_t>(subtree * block));
  if (lrank == 0) {
    for (int j = 0; j < p; ++j)
      pack(*stype, at(sbuf, int64_t((j + root) % p) * scount, stype), scount, 0, packed.data() + j * block,
           static_cast<uint64_t>(block));
  } else {
    s.recv(packed.data(), subtree * block, byte_type(), parent);
    SONDE_CO_TRY(co_await s.round());
  }
  int mask = 1;
  while (mask < p && !(lrank & mask)) mask <<= 1;
  for (int m = mask >> 1; m > 0; m >>= 1) {
    const int child = lrank + m;
    if (child >= p) continue;
    const int64_t blocks = std::min<int64_t>(m, p - child);
    s.send(packed.data() + m * block, blocks * block, byte_type(), (r + m) % p);
  }
  int rc = MPI_SUCCESS;
  if (rbuf != MPI_IN_PLACE) {
    if (rcount * rtype->size < block) rc = MPI_ERR_TRUNCATE;
    else unpack(*rtype, rbuf, rcount, 0, packed.data(), static_cast<uint64_t>(block));
  }
  const int wrc = co_await s.round();
  co_return rc != MPI_SUCCESS ? rc : wrc;
}

}  // namespace

namespace detail {

// Linear: the root sends every rank its block directly. scounts/displs
// null: Scatter's layout. Posts the transfers and copies the root's own
// block meanwhile; the caller completes the round. Returns the copy's
// result.
int post_scatter_linear(Schedule& s, const void* sbuf, int64_t scount, const int64_t* scounts, const int64_t* displs,
                        Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  if (r != root) {
    s.recv(rbuf, rcount, rtype, root);
    return MPI_SUCCESS;
  }
  auto count_of = [=](int i) -> int64_t { return scounts ? scounts[i] : scount; };
  auto slot = [=](int i) { return at(sbuf, displs ? displs[i] : int64_t(i) * scount, stype); };
  for (int i = 0; i < p; ++i)
    if (i != root) s.send(slot(i), count_of(i), stype, i);
  if (rbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  return copy(slot(root), count_of(root), stype, rbuf, rcount, rtype);
}

Task scatter_linear(Schedule& s, const void* sbuf, int64_t scount, const int64_t* scounts, const int64_t* displs,
                    Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root) {
  const int rc = post_scatter_linear(s, sbuf, scount, scounts, displs, stype, rbuf, rcount, rtype, root);
  const int wrc = co_await s.round();
  co_return rc != MPI_SUCCESS ? rc : wrc;
}

}  // namespace detail

namespace {

Task scatter_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                  Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  const int64_t block = r == root ? scount * stype->size : rcount * rtype->size;
  if (p == 1 || block == 0) {
    if (r == root && rbuf != MPI_IN_PLACE)
      co_return copy(at(sbuf, root * scount, stype), scount, stype, rbuf, rcount, rtype);
    co_return MPI_SUCCESS;
  }
  if (block * p <= kScatterBinomialMax)
    co_return co_await scatter_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root, block);
  co_return co_await scatter_linear(s, sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype, root);
}

Task scatterv_task(Schedule& s, const void* sbuf, Counts scounts, Counts displs, Datatype* stype, void* rbuf,
                   int64_t rcount, Datatype* rtype, int root) {
  co_return co_await scatter_linear(s, sbuf, 0, scounts.data(), displs.data(), stype, rbuf, rcount, rtype, root);
}

// ---- allgather / allgatherv -------------------------------------------------

// Bruck: ceil(log2 p) rounds for any p. Rank r collects the blocks of ranks
// r, r+1, ... in a packed buffer, doubling the run each round, then rotates
// them into place.
Task allgather_bruck(Schedule& s, void* rbuf, int64_t rcount, Datatype* rtype, int64_t block) {
  const int p = s.p, r = s.r;
  std::vector<uint8_t> tmp(static_cast<size_t>(p * block));
  pack_all(at(rbuf, int64_t(r) * rcount, rtype), rcount, rtype, tmp.data());
  for (int k = 1; k < p; k <<= 1) {
    const int64_t n = std::min(k, p - k);
    s.recv(tmp.data() + k * block, n * block, byte_type(), (r + k) % p);
    s.send(tmp.data(), n * block, byte_type(), (r - k + p) % p);
    SONDE_CO_TRY(co_await s.round());
  }
  for (int i = 1; i < p; ++i)
    unpack_all(tmp.data() + i * block, at(rbuf, int64_t((r + i) % p) * rcount, rtype), rcount, rtype);
  co_return MPI_SUCCESS;
}

// Recursive doubling (p a power of two): log2 p exchanges of the slots
// gathered so far, which are always the aligned run of `mask` slots
// containing r.
Task allgather_doubling(Schedule& s, void* rbuf, int64_t rcount, Datatype* rtype) {
  const int r = s.r;
  for (int mask = 1; mask < s.p; mask <<= 1) {
    const int partner = r ^ mask;
    const int64_t mine = (r & ~(mask - 1)) * rcount, theirs = (partner & ~(mask - 1)) * rcount;
    s.recv(at(rbuf, theirs, rtype), mask * rcount, rtype, partner);
    s.send(at(rbuf, mine, rtype), mask * rcount, rtype, partner);
    SONDE_CO_TRY(co_await s.round());
  }
  co_return MPI_SUCCESS;
}

// The slots of an Allgather(v) receive buffer: slot i holds rank i's block
// (rcounts/displs null: Allgather's layout, rcount elements at i * rcount).
struct RingSlots {
  void* rbuf;
  int64_t rcount;
  const int64_t *rcounts, *displs;
  Datatype* rtype;
  int64_t count(int i) const { return rcounts ? rcounts[i] : rcount; }
  uint8_t* at(int i) const { return detail::at(rbuf, displs ? displs[i] : int64_t(i) * rcount, rtype); }
};

// Ring: p-1 steps, each passing on the slot received in the step before;
// steps before `from` have been done by the caller.
Task allgather_ring(Schedule& s, RingSlots slots, int from = 0) {
  const int p = s.p, r = s.r;
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = from; i < p - 1; ++i) {
    const int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
    s.recv(slots.at(rb), slots.count(rb), slots.rtype, left);
    s.send(slots.at(sb), slots.count(sb), slots.rtype, right);
    SONDE_CO_TRY(co_await s.round());
  }
  co_return MPI_SUCCESS;
}

// The ring, its first step sent straight from sbuf while the rank copies its
// own block into its slot: the copy need not finish first, and a peer never
// reads memory this rank has just written (which would cost every line of it
// a transfer between the caches). The caller checks that the send fits the
// rank's slot.
Task allgather_ring_from(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, RingSlots slots) {
  const int p = s.p, r = s.r, left = (r - 1 + p) % p;
  s.recv(slots.at(left), slots.count(left), slots.rtype, left);
  s.send(sbuf, scount, stype, (r + 1) % p);
  const int copied = copy(sbuf, scount, stype, slots.at(r), slots.count(r), slots.rtype);
  SONDE_CO_TRY(co_await s.round());
  SONDE_CO_TRY(copied);
  co_return co_await allgather_ring(s, slots, 1);
}

// Everything happens in rbuf with rtype: slot j holds rank j's rcount elements.
Task allgather_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                    Datatype* rtype) {
  const int p = s.p, r = s.r;
  const int64_t block = rcount * rtype->size;
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (!in_place && p > 1 && block * p > kAllgatherSmallMax && scount * stype->size <= block)
    co_return co_await allgather_ring_from(s, sbuf, scount, stype, {rbuf, rcount, nullptr, nullptr, rtype});
  if (!in_place) SONDE_CO_TRY(copy(sbuf, scount, stype, at(rbuf, r * rcount, rtype), rcount, rtype));
  if (p == 1 || block == 0) co_return MPI_SUCCESS;
  if (block * p <= kAllgatherSmallMax) {
    if ((p & (p - 1)) == 0) co_return co_await allgather_doubling(s, rbuf, rcount, rtype);
    co_return co_await allgather_bruck(s, rbuf, rcount, rtype, block);
  }
  co_return co_await allgather_ring(s, {rbuf, rcount, nullptr, nullptr, rtype});
}

Task allgatherv_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts,
                     Counts displs, Datatype* rtype) {
  const int p = s.p, r = s.r;
  if (sbuf != MPI_IN_PLACE && p > 1 && scount * stype->size <= rcounts[r] * rtype->size)
    co_return co_await allgather_ring_from(s, sbuf, scount, stype, {rbuf, 0, rcounts.data(), displs.data(), rtype});
  if (sbuf != MPI_IN_PLACE) SONDE_CO_TRY(copy(sbuf, scount, stype, at(rbuf, displs[r], rtype), rcounts[r], rtype));
  if (p == 1) co_return MPI_SUCCESS;
  co_return co_await allgather_ring(s, {rbuf, 0, rcounts.data(), displs.data(), rtype});
}

// ---- intercommunicators (see coll_internal.h) --------------------------------------

// The non-root group gathers to its leader (in its send layout), which
// sends the lot to the root in one message.
Task inter_gather(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                  Datatype* rtype, int root) {
  if (root_idle(root)) co_return MPI_SUCCESS;
  if (root == MPI_ROOT) {
    s.recv(rbuf, rcount * s.p, rtype, 0);
    co_return co_await s.round();
  }
  const int64_t n = scount * s.local->size;
  TypedScratch store;
  void* all = s.r == 0 ? store.allocate(n, stype) : nullptr;
  s.to_local();
  SONDE_CO_TRY(co_await gather_task(s, sbuf, scount, stype, all, scount, stype, 0));
  if (s.r != 0) co_return MPI_SUCCESS;
  s.to_remote();
  s.send(all, n, stype, root);
  co_return co_await s.round();
}

// Gatherv and Scatterv: every member of the other group straight from or
// to the root, which has one (counts[i], displs[i]) slot of `rooted` per
// remote rank i; the members' own data is (buf, count, type).
Task inter_linear(Schedule& s, bool gather, void* rooted, Counts counts, Counts displs, Datatype* rooted_type,
                  void* buf, int64_t count, Datatype* type, int root) {
  if (root_idle(root)) co_return MPI_SUCCESS;
  if (root == MPI_ROOT) {
    for (int i = 0; i < s.p; ++i) {
      if (gather) s.recv(at(rooted, displs[i], rooted_type), counts[i], rooted_type, i);
      else s.send(at(rooted, displs[i], rooted_type), counts[i], rooted_type, i);
    }
  } else if (gather) {
    s.send(buf, count, type, root);
  } else {
    s.recv(buf, count, type, root);
  }
  co_return co_await s.round();
}

// The root sends everything to the other group's leader, which scatters it.
Task inter_scatter(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                   Datatype* rtype, int root) {
  if (root_idle(root)) co_return MPI_SUCCESS;
  if (root == MPI_ROOT) {
    s.send(sbuf, scount * s.p, stype, 0);
    co_return co_await s.round();
  }
  const int64_t n = rcount * s.local->size;
  TypedScratch store;
  void* all = s.r == 0 ? store.allocate(n, rtype) : nullptr;
  if (s.r == 0) {
    s.recv(all, n, rtype, root);
    SONDE_CO_TRY(co_await s.round());
  }
  s.to_local();
  co_return co_await scatter_task(s, all, rcount, rtype, rbuf, rcount, rtype, 0);
}

// Each group gathers to its leader, the leaders swap, each broadcasts the
// other group's blocks locally.
Task inter_allgather(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                     Datatype* rtype) {
  const int64_t n = scount * s.local->size, m = rcount * s.p;
  TypedScratch store;
  void* all = s.r == 0 ? store.allocate(n, stype) : nullptr;
  s.to_local();
  SONDE_CO_TRY(co_await gather_task(s, sbuf, scount, stype, all, scount, stype, 0));
  co_return co_await swap_and_broadcast(s, all, n, stype, rbuf, m, rtype);
}

// Allgatherv: the receive layout is known only per remote rank, so every
// member sends its block to every member of the other group.
Task inter_allgatherv(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts,
                      Counts displs, Datatype* rtype) {
  for (int i = 0; i < s.p; ++i) {
    const int j = (s.r + i) % s.p;  // spread the load over the other group
    s.recv(at(rbuf, displs[j], rtype), rcounts[j], rtype, j);
  }
  for (int i = 0; i < s.p; ++i) s.send(sbuf, scount, stype, (s.r + i) % s.p);
  co_return co_await s.round();
}
}  // namespace

// ---- entry points ----------------------------------------------------------------

int gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
           Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &rc))
    return rc;
  if (comm->inter)
    return launch(comm, kGather, request,
                  [=](Schedule& s) { return inter_gather(s, sbuf, scount, stype, rbuf, rcount, rtype, root); },
                  MPI_OP_NULL, {stype, rtype});
  return launch(comm, kGather, request,
                [=](Schedule& s) { return gather_task(s, sbuf, scount, stype, rbuf, rcount, rtype, root); },
                MPI_OP_NULL, {stype, rtype});
}

namespace {
// Gatherv and Scatterv over point-to-point, out of line: the calls the
// shared segment takes do not set up these paths' frames.
[[gnu::noinline]] int gatherv_p2p(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts&& rcounts,
                                  Counts&& displs, Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  if (!request && !comm->inter) {
    return run_now(comm, kGatherv, [&](Schedule& s) {
      return s.wait_round(
          post_gather_linear(s, sbuf, scount, stype, rbuf, 0, rcounts.data(), displs.data(), rtype, root));
    });
  }
  return launch(comm, kGatherv, request,
                [&](Schedule& s) {
                  if (comm->inter)
                    return inter_linear(s, true, rbuf, std::move(rcounts), std::move(displs), rtype,
                                        const_cast<void*>(sbuf), scount, stype, root);
                  return gatherv_task(s, sbuf, scount, stype, rbuf, std::move(rcounts), std::move(displs), rtype, root);
                },
                MPI_OP_NULL, {stype, rtype});
}

[[gnu::noinline]] int scatterv_p2p(const void* sbuf, Counts&& scounts, Counts&& displs, Datatype* stype, void* rbuf,
                                   int64_t rcount, Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  if (!request && !comm->inter) {
    return run_now(comm, kScatterv, [&](Schedule& s) {
      return s.wait_round(
          post_scatter_linear(s, sbuf, 0, scounts.data(), displs.data(), stype, rbuf, rcount, rtype, root));
    });
  }
  return launch(comm, kScatterv, request,
                [&](Schedule& s) {
                  if (comm->inter)
                    return inter_linear(s, false, const_cast<void*>(sbuf), std::move(scounts), std::move(displs), stype,
                                        rbuf, rcount, rtype, root);
                  return scatterv_task(s, sbuf, std::move(scounts), std::move(displs), stype, rbuf, rcount, rtype,
                                       root);
                },
                MPI_OP_NULL, {stype, rtype});
}
}  // namespace

int gatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts&& rcounts, Counts&& displs,
            Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter &&
              shared::gatherv(sbuf, scount, stype, rbuf, rcounts.data(), displs.data(), rtype, root, comm, &rc))
    return rc;
  return gatherv_p2p(sbuf, scount, stype, rbuf, std::move(rcounts), std::move(displs), rtype, root, comm, request);
}

int scatter(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
            Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &rc))
    return rc;
  auto task = comm->inter ? inter_scatter : scatter_task;
  return launch(comm, kScatter, request,
                [=](Schedule& s) { return task(s, sbuf, scount, stype, rbuf, rcount, rtype, root); }, MPI_OP_NULL,
                {stype, rtype});
}

int scatterv(const void* sbuf, Counts&& scounts, Counts&& displs, Datatype* stype, void* rbuf, int64_t rcount,
             Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter &&
              shared::scatterv(sbuf, scounts.data(), displs.data(), stype, rbuf, rcount, rtype, root, comm, &rc))
    return rc;
  return scatterv_p2p(sbuf, std::move(scounts), std::move(displs), stype, rbuf, rcount, rtype, root, comm, request);
}

int allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
              Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &rc))
    return rc;
  auto task = comm->inter ? inter_allgather : allgather_task;
  return launch(comm, kAllgather, request,
                [=](Schedule& s) { return task(s, sbuf, scount, stype, rbuf, rcount, rtype); }, MPI_OP_NULL,
                {stype, rtype});
}

int allgatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts&& rcounts, Counts&& displs,
               Datatype* rtype, Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter &&
              shared::allgatherv(sbuf, scount, stype, rbuf, rcounts.data(), displs.data(), rtype, comm, &rc))
    return rc;
  auto task = comm->inter ? inter_allgatherv : allgatherv_task;
  return launch(comm, kAllgatherv, request,
                [&](Schedule& s) {
                  return task(s, sbuf, scount, stype, rbuf, std::move(rcounts), std::move(displs), rtype);
                },
                MPI_OP_NULL, {stype, rtype});
}

}  // namespace sonde::engine::coll
