// Alltoall(v,w) on intra- and intercommunicators, and the neighbourhood
// collectives: exchanges of one block per peer (coll.h has the contract,
// coll_internal.h what the collective files share).
#include "coll/coll.h"

#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "coll/coll_internal.h"
#include "coll/coll_schedule.h"
#include "coll/shared.h"
#include "comm/topo.h"

namespace sonde::engine::coll {
using namespace detail;

namespace {

// ---- alltoall(v,w) -----------------------------------------------------------

// One peer's part of an exchange.
using Piece = Block;

// Posts every transfer of a scattered exchange (out[r+i] to r+i, in[r-i]
// from r-i) and copies the rank's own piece meanwhile (unless in place);
// the caller completes the round. Returns the copy's result.
int post_scattered(Schedule& s, const Piece* out, const Piece* in, bool in_place) {
  const int p = s.p, r = s.r;
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    s.recv(in[from].buf, in[from].count, in[from].type, from);
    s.send(out[to].buf, out[to].count, out[to].type, to);
  }
  return in_place ? MPI_SUCCESS : copy(out[r].buf, out[r].count, out[r].type, in[r].buf, in[r].count, in[r].type);
}

// The general exchange behind Alltoallv/w and medium/large Alltoall:
// `scattered` posts every transfer at once (one round); otherwise pairwise,
// one partner per round (r+i out, r-i in), which keeps a single pair of
// large messages in flight per rank. In place, the outgoing data is first
// packed out of the receive pieces; otherwise the rank copies its own
// piece once the first transfers are posted, while its partners (and, for
// large messages, the copy engine of the rendezvous) move those.
Task exchange(Schedule& s, std::vector<Piece> out, std::vector<Piece> in, bool in_place, bool scattered) {
  const int p = s.p, r = s.r;
  ScratchBytes packed;
  if (in_place) {
    std::vector<int64_t> off(static_cast<size_t>(p) + 1, 0);
    for (int j = 0; j < p; ++j) off[j + 1] = off[j] + in[j].count * in[j].type->size;
    packed.reset(static_cast<size_t>(off[p]));
    out.assign(static_cast<size_t>(p), Piece{});
    for (int j = 0; j < p; ++j) {
      if (j != r) pack_all(in[j].buf, in[j].count, in[j].type, packed.data() + off[j]);
      out[j] = Piece{packed.data() + off[j], off[j + 1] - off[j], byte_type()};
    }
  }
  if (scattered || p == 1) {
    SONDE_CO_TRY(post_scattered(s, out.data(), in.data(), in_place));
    co_return co_await s.round();
  }
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    s.recv(in[from].buf, in[from].count, in[from].type, from);
    s.send(out[to].buf, out[to].count, out[to].type, to);
    if (i == 1 && !in_place)
      SONDE_CO_TRY(copy(out[r].buf, out[r].count, out[r].type, in[r].buf, in[r].count, in[r].type));
    SONDE_CO_TRY(co_await s.round());
  }
  co_return MPI_SUCCESS;
}

// Bruck: ceil(log2 p) rounds of about half the data each, for small blocks
// where the per-message cost dominates. After a local rotation, block i
// (destined for rank r+i) travels +2^k in round k if bit k of i is set.
Task alltoall_bruck(Schedule& s, const void* src, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                    Datatype* rtype, int64_t block) {
  const int p = s.p, r = s.r;
  std::vector<uint8_t> tmp(static_cast<size_t>(p * block));
  for (int i = 0; i < p; ++i)
    pack_all(at(src, int64_t((r + i) % p) * scount, stype), scount, stype, tmp.data() + i * block);
  std::vector<uint8_t> out(static_cast<size_t>((p + 1) / 2 * block)), in(out.size());
  for (int k = 1; k < p; k <<= 1) {
    int64_t n = 0;
    for (int i = k; i < p; ++i)
      if (i & k) std::memcpy(out.data() + (n++) * block, tmp.data() + i * block, static_cast<size_t>(block));
    s.recv(in.data(), n * block, byte_type(), (r - k + p) % p);
    s.send(out.data(), n * block, byte_type(), (r + k) % p);
    SONDE_CO_TRY(co_await s.round());
    n = 0;
    for (int i = k; i < p; ++i)
      if (i & k) std::memcpy(tmp.data() + i * block, in.data() + (n++) * block, static_cast<size_t>(block));
  }
  // tmp[i] now holds what rank r-i sent to r.
  for (int i = 0; i < p; ++i)
    unpack_all(tmp.data() + i * block, at(rbuf, int64_t((r - i + p) % p) * rcount, rtype), rcount, rtype);
  co_return MPI_SUCCESS;
}

Task alltoall_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                   Datatype* rtype) {
  const int p = s.p;
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place) {
    sbuf = rbuf;
    scount = rcount;
    stype = rtype;
  }
  const int64_t block = rcount * rtype->size;
  if (block == 0 || (p == 1 && in_place)) co_return MPI_SUCCESS;
  if (p >= kAlltoallBruckMinRanks && block <= kAlltoallBruckMax)
    co_return co_await alltoall_bruck(s, sbuf, scount, stype, rbuf, rcount, rtype, block);
  std::vector<Piece> out(static_cast<size_t>(p)), in(static_cast<size_t>(p));
  for (int j = 0; j < p; ++j) {
    out[j] = Piece{const_cast<uint8_t*>(at(sbuf, int64_t(j) * scount, stype)), scount, stype};
    in[j] = Piece{at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype};
  }
  co_return co_await exchange(s, std::move(out), std::move(in), in_place,
                              block <= kAlltoallScatteredMax || p <= kAlltoallScatteredRanks);
}

// ---- intercommunicators (see coll_internal.h) --------------------------------------

// Alltoall(v,w): piece j goes to, and comes from, remote rank j; all at once.
Task inter_exchange(Schedule& s, std::vector<Piece> out, std::vector<Piece> in) {
  for (int i = 0; i < s.p; ++i) {
    const int j = (s.r + i) % s.p;
    s.recv(in[j].buf, in[j].count, in[j].type, j);
    s.send(out[j].buf, out[j].count, out[j].type, j);
  }
  co_return co_await s.round();
}

// ---- neighbourhood collectives ----------------------------------------------------

// Every transfer at once, out[i] to the i-th destination, in[i] from the
// i-th source (topo_neighbors' order; MPI_PROC_NULL neighbours skipped).
// A peer may be a neighbour several times (a periodic dimension of extent
// 1 or 2, repeated graph edges); messages between two ranks match in the
// order they are posted, so on a Cartesian topology the receives of each
// dimension are posted +1 neighbour first: what a rank sends to its -1
// neighbour (sent first) is what that neighbour takes from its +1 side.
Task neighbor_task(Schedule& s, std::vector<Block> out, std::vector<Block> in) {
  std::vector<int> sources, destinations;
  const Topology& topo = *s.user->topo;
  topo_neighbors(topo, s.r, &sources, &destinations);
  const bool cart = topo.kind == MPI_CART;
  for (size_t k = 0; k < sources.size(); ++k) {
    const size_t i = cart ? (k ^ 1) : k;  // (2d+1, 2d) instead of (2d, 2d+1)
    if (sources[i] != MPI_PROC_NULL) s.recv(in[i].buf, in[i].count, in[i].type, sources[i]);
  }
  for (size_t i = 0; i < destinations.size(); ++i)
    if (destinations[i] != MPI_PROC_NULL) s.send(out[i].buf, out[i].count, out[i].type, destinations[i]);
  co_return co_await s.round();
}

}  // namespace

// ---- entry points ----------------------------------------------------------------

int alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* comm,
             MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &rc))
    return rc;
  if (comm->inter) {
    return launch(comm, kAlltoall, request,
                  [=](Schedule& s) {
                    std::vector<Piece> out(static_cast<size_t>(s.p)), in(static_cast<size_t>(s.p));
                    for (int j = 0; j < s.p; ++j) {
                      out[j] = Piece{const_cast<uint8_t*>(at(sbuf, int64_t(j) * scount, stype)), scount, stype};
                      in[j] = Piece{at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype};
                    }
                    return inter_exchange(s, std::move(out), std::move(in));
                  },
                  MPI_OP_NULL, {stype, rtype});
  }
  return launch(comm, kAlltoall, request,
                [=](Schedule& s) { return alltoall_task(s, sbuf, scount, stype, rbuf, rcount, rtype); }, MPI_OP_NULL,
                {stype, rtype});
}

// Alltoallv and Alltoallw: per-peer pieces, built before launch returns
// (so the count, displacement and type arrays are not needed afterwards).
// Displacements are in elements of the datatype (v) or in bytes (w).
namespace {
// The datatypes: one for every peer (w), or one for all (v).
int alltoall_pieces(const void* sbuf, const Counts& scounts, const Counts& sdispls, std::span<Datatype* const> stypes,
                    void* rbuf, const Counts& rcounts, const Counts& rdispls, std::span<Datatype* const> rtypes,
                    bool byte_displs, Comm* comm, Kind kind, MPI_Request* request) {
  const bool in_place = sbuf == MPI_IN_PLACE;
  auto type_of = [](std::span<Datatype* const> t, int j) { return t.size() == 1 ? t[0] : t[j]; };
  auto addr = [byte_displs](const void* buf, int64_t d, const Datatype* t) {
    return const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)) + (byte_displs ? d : d * t->extent);
  };
  auto pieces = [&](Schedule& s, auto& out, auto& in) {
    out.resize(static_cast<size_t>(s.p));
    in.resize(static_cast<size_t>(s.p));
    for (int j = 0; j < s.p; ++j) {
      if (!in_place) out[j] = Piece{addr(sbuf, sdispls[j], type_of(stypes, j)), scounts[j], type_of(stypes, j)};
      in[j] = Piece{addr(rbuf, rdispls[j], type_of(rtypes, j)), rcounts[j], type_of(rtypes, j)};
    }
  };
  if (!request && !comm->inter && !in_place) {
    // Blocking: one round, as plain code.
    return run_now(comm, kind, [&](Schedule& s) {
      InlineVector<Piece, 16> out, in;
      pieces(s, out, in);
      return s.wait_round(post_scattered(s, out.data(), in.data(), false));
    });
  }
  std::vector<Datatype*> held(stypes.begin(), stypes.end());
  held.insert(held.end(), rtypes.begin(), rtypes.end());
  return launch(
      comm, kind, request,
      [&](Schedule& s) {
        std::vector<Piece> out, in;
        pieces(s, out, in);
        if (s.user->inter) return inter_exchange(s, std::move(out), std::move(in));
        return exchange(s, std::move(out), std::move(in), in_place, true);
      },
      MPI_OP_NULL, held);
}
}  // namespace

int alltoallv(const void* sbuf, Counts&& scounts, Counts&& sdispls, Datatype* stype, void* rbuf, Counts&& rcounts,
              Counts&& rdispls, Datatype* rtype, Comm* comm, MPI_Request* request) {
  if (int rc; !request && !comm->inter &&
              shared::alltoallv(sbuf, scounts.data(), sdispls.data(), stype, rbuf, rcounts.data(), rdispls.data(),
                                rtype, comm, &rc))
    return rc;
  return alltoall_pieces(sbuf, scounts, sdispls, {&stype, 1}, rbuf, rcounts, rdispls, {&rtype, 1}, false, comm,
                         kAlltoallv, request);
}

int alltoallw(const void* sbuf, Counts scounts, Counts sdispls, std::vector<Datatype*> stypes, void* rbuf,
              Counts rcounts, Counts rdispls, std::vector<Datatype*> rtypes, Comm* comm, MPI_Request* request) {
  return alltoall_pieces(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, true, comm, kAlltoallw,
                         request);
}

int neighbor(Comm* comm, Kind kind, std::vector<Block> out, std::vector<Block> in, MPI_Request* request) {
  std::vector<Datatype*> held;
  if (request) {
    for (const Block& b : out) held.push_back(b.type);
    for (const Block& b : in) held.push_back(b.type);
  }
  return launch(
      comm, kind, request, [&](Schedule& s) { return neighbor_task(s, std::move(out), std::move(in)); }, MPI_OP_NULL,
      std::move(held));
}

}  // namespace sonde::engine::coll
