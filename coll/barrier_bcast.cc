// Barrier and Bcast, on intra- and intercommunicators (coll.h has the
// contract, coll_internal.h what the collective files share).
#include "coll/coll.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "coll/coll_internal.h"
#include "coll/coll_schedule.h"
#include "coll/shared.h"

namespace sonde::engine::coll {
using namespace detail;

namespace {

// ---- barrier -------------------------------------------------------------

// Dissemination: ceil(log2 p) rounds; in round k every rank signals rank+2^k
// and hears from rank-2^k, whatever p is. No pair repeats within a barrier.
Task barrier_task(Schedule& s) {
  // Empty messages, but from a real address: the engine's immediate-send
  // path takes only non-null contiguous sources.
  uint8_t token = 0;
  for (int k = 1; k < s.p; k <<= 1) {
    s.recv(&token, 0, byte_type(), (s.r - k + s.p) % s.p);
    s.send(&token, 0, byte_type(), (s.r + k) % s.p);
    SONDE_CO_TRY(co_await s.round());
  }
  co_return MPI_SUCCESS;
}

// ---- bcast -----------------------------------------------------------------

// Binomial tree: log2 p rounds, the whole message on every edge; children
// nearest the root's side of the tree first.
Task bcast_binomial(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p, low = binomial_low(lrank, p);
  if (low < p) {
    s.recv(buf, count, type, (r - low + p) % p);
    SONDE_CO_TRY(co_await s.round());
  }
  for (int m = low >> 1; m > 0; m >>= 1)
    if (lrank + m < p) s.send(buf, count, type, (r + m) % p);
  co_return co_await s.round();
}

// The same tree, blocking, as plain code (run_now): what MPI_Bcast runs
// below the large-message switch.
int bcast_binomial_now(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p, low = binomial_low(lrank, p);
  if (low < p) {
    s.recv(buf, count, type, (r - low + p) % p);
    if (const int rc = s.wait_round(); rc != MPI_SUCCESS) return rc;
  }
  for (int m = low >> 1; m > 0; m >>= 1)
    if (lrank + m < p) s.send(buf, count, type, (r + m) % p);
  return s.wait_round();
}

// Van de Geijn: binomial scatter of p pieces, then a ring allgather. Each
// rank moves about 2n bytes instead of n*log2(p) through the root's subtree.
// Works on packed bytes; block j belongs to lrank j.
Task bcast_scatter_allgather(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p;
  const int64_t nbytes = count * type->size;
  ScratchBytes packed;
  uint8_t* bytes;
  if (type->contiguous) {
    bytes = contiguous_start(*type, buf);
  } else {
    packed.reset(static_cast<size_t>(nbytes));
    bytes = packed.data();
    if (r == root) pack_all(buf, count, type, bytes);
  }
  Datatype* byte = byte_type();
  const int64_t piece = (nbytes + p - 1) / p;
  auto edge = [piece, nbytes](int64_t block) { return std::min(block * piece, nbytes); };

  // Scatter: the subtree of lrank covers blocks [lrank, lrank + lowbit(lrank)).
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (lrank & mask) {
      const int64_t from = edge(lrank), to = edge(std::min(lrank + mask, p));
      if (to > from) s.recv(bytes + from, to - from, byte, (r - mask + p) % p);
      SONDE_CO_TRY(co_await s.round());
      break;
    }
  }
  for (int m = mask >> 1; m > 0; m >>= 1) {
    if (lrank + m >= p) continue;
    const int64_t from = edge(lrank + m), to = edge(std::min(lrank + 2 * m, p));
    if (to > from) s.send(bytes + from, to - from, byte, (r + m) % p);
  }
  SONDE_CO_TRY(co_await s.round());

  // Ring: in step i, pass block lrank-i to the right, take lrank-i-1 from the left.
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    const int64_t sb = (lrank - i + p) % p, rb = (lrank - i - 1 + p) % p;
    if (edge(rb + 1) > edge(rb)) s.recv(bytes + edge(rb), edge(rb + 1) - edge(rb), byte, left);
    if (edge(sb + 1) > edge(sb)) s.send(bytes + edge(sb), edge(sb + 1) - edge(sb), byte, right);
    SONDE_CO_TRY(co_await s.round());
  }
  if (!type->contiguous && r != root) unpack_all(bytes, buf, count, type);
  co_return MPI_SUCCESS;
}

// With 2 ranks the scatter gains nothing: the single edge carries n either
// way; below split_min_ranks() it loses.
bool bcast_is_small(int64_t nbytes, int p) { return nbytes < kBcastLarge || p < split_min_ranks(); }

// A plain function choosing the algorithm's Task (one coroutine frame per
// call, not two).
Task bcast_task(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int64_t nbytes = count * type->size;
  if (s.p == 1 || nbytes == 0) return finished(MPI_SUCCESS);
  if (bcast_is_small(nbytes, s.p)) return bcast_binomial(s, buf, count, type, root);
  return bcast_scatter_allgather(s, buf, count, type, root);
}

// ---- intercommunicators (see coll_internal.h) --------------------------------------

// Local barrier (all of my group arrived), leaders swap a token (so has
// the other group), local barrier again (nobody leaves before its leader
// has heard from the other side).
Task inter_barrier(Schedule& s) {
  s.to_local();
  SONDE_CO_TRY(co_await barrier_task(s));
  if (s.r == 0) {
    uint8_t in = 0, out = 0;
    s.to_remote();
    s.recv(&in, 0, byte_type(), 0);
    s.send(&out, 0, byte_type(), 0);
    SONDE_CO_TRY(co_await s.round());
    s.to_local();
  }
  co_return co_await barrier_task(s);
}

// The root sends to the other group's leader, which broadcasts locally.
Task inter_bcast(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  if (root_idle(root)) co_return MPI_SUCCESS;
  if (root == MPI_ROOT) {
    s.send(buf, count, type, 0);
    co_return co_await s.round();
  }
  if (s.r == 0) {
    s.recv(buf, count, type, root);
    SONDE_CO_TRY(co_await s.round());
  }
  s.to_local();
  co_return co_await bcast_task(s, buf, count, type, 0);
}

}  // namespace

namespace detail {

// The leaders swap this group's (out, n, otype) for the other's (in, m,
// itype), which each leader then broadcasts in its group.
Task swap_and_broadcast(Schedule& s, const void* out, int64_t n, Datatype* otype, void* in, int64_t m,
                        Datatype* itype) {
  if (s.r == 0) {
    s.to_remote();
    s.recv(in, m, itype, 0);
    s.send(out, n, otype, 0);
    SONDE_CO_TRY(co_await s.round());
  }
  s.to_local();
  co_return co_await bcast_task(s, in, m, itype, 0);
}

}  // namespace detail

// ---- entry points ----------------------------------------------------------------

void release_cached_scratch() { ScratchPool::drain(); }

int barrier(Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::barrier(comm, &rc)) return rc;
  if (comm->inter) return launch(comm, kBarrier, request, [=](Schedule& s) { return inter_barrier(s); });
  return launch(comm, kBarrier, request, [=](Schedule& s) { return barrier_task(s); });
}

int bcast(void* buf, int64_t count, Datatype* type, int root, Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::bcast(buf, count, type, root, comm, &rc)) return rc;
  if (comm->inter)
    return launch(comm, kBcast, request, [=](Schedule& s) { return inter_bcast(s, buf, count, type, root); },
                  MPI_OP_NULL, {type});
  if (!request && bcast_is_small(count * type->size, comm->size)) {
    return run_now(comm, kBcast, [=](Schedule& s) {
      return s.p == 1 || count * type->size == 0 ? MPI_SUCCESS : bcast_binomial_now(s, buf, count, type, root);
    });
  }
  return launch(comm, kBcast, request, [=](Schedule& s) { return bcast_task(s, buf, count, type, root); }, MPI_OP_NULL,
                {type});
}

}  // namespace sonde::engine::coll
