// The shared-segment collectives (shared.h), by the protocol of
// shared_segment.h. Each call's ranks that contribute data write it and
// publish; the ranks that need others' data wait for it and read it.
#include "coll/shared.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "coll/coll_schedule.h"
#include "coll/shared_segment.h"

namespace sonde::engine::coll::shared {
using namespace detail;

bool barrier(Comm* c, int* rc) {
  decide(c);
  State* st = state(c);
  if (!st) return false;
  const uint64_t seq = enter(*st, c);
  publish(*st, seq);
  await(*st, c, kBarrier, seq, -1, false, kLineTier, seq);
  *rc = MPI_SUCCESS;
  return true;
}

bool bcast(void* buf, int64_t count, Datatype* type, int root, Comm* c, int* rc) {
  const int64_t n = count * type->size;
  State* st = fits(c, n, Use::kRead);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  if (c->rank == root) {
    write(*st, c, kBcast, seq, tier, uint64_t(n), 1, [&](uint8_t* slot) { pack_to(buf, count, type, slot); });
    publish(*st, seq);
    *rc = MPI_SUCCESS;
    return true;
  }
  publish(*st, seq);
  await(*st, c, kBcast, seq, root, true, tier, seq);
  const uint8_t* d = nullptr;
  *rc = data_of(*st, root, seq, tier, uint64_t(n), &d);
  if (*rc == MPI_SUCCESS) unpack_from(d, buf, count, type);
  return true;
}

namespace {
// Reduce (root >= 0: only the root combines) and Allreduce (root < 0).
bool reduction(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c, int* rc) {
  const int64_t n = count * type->size;
  State* st = fits(c, n, Use::kCombined);
  if (!st) return false;
  const int kind = root < 0 ? kAllreduce : kReduce;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  // A Reduce's root reads its own input where it is, unless that is rbuf,
  // which the result overwrites.
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (root < 0 || c->rank != root || in_place) {
    const void* in = in_place ? rbuf : sbuf;
    write(*st, c, kind, seq, tier, uint64_t(n), 1, [&](uint8_t* slot) { pack_to(in, count, type, slot); });
  }
  publish(*st, seq);
  *rc = MPI_SUCCESS;
  if (root >= 0 && c->rank != root) return true;
  await(*st, c, kind, seq, -1, true, tier, seq);
  try {
    *rc = combine(*st, seq, tier, st->p, 0, count, rbuf, count, type, op, in_place ? nullptr : sbuf);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}
}  // namespace

bool reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c, int* rc) {
  return reduction(sbuf, rbuf, count, type, op, root, c, rc);
}

bool allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* c, int* rc) {
  return reduction(sbuf, rbuf, count, type, op, -1, c, rc);
}

bool allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
               int* rc) {
  const int64_t n = rcount * rtype->size;  // every rank's block, as every rank receives it
  State* st = fits(c, n, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* src = in_place ? at(rbuf, int64_t(c->rank) * rcount, rtype) : sbuf;
  const int64_t cnt = in_place ? rcount : scount;
  const Datatype* t = in_place ? rtype : stype;
  write(*st, c, kAllgather, seq, tier, uint64_t(cnt * t->size), 1, [&](uint8_t* slot) { pack_to(src, cnt, t, slot); });
  publish(*st, seq);
  await(*st, c, kAllgather, seq, -1, true, tier, seq);
  *rc = MPI_SUCCESS;
  for (int j = 0; j < c->size; ++j) {
    if (in_place && j == c->rank) continue;
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
    if (r == MPI_SUCCESS) unpack_from(d, at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

bool alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
              int* rc) {
  const int64_t n = rcount * rtype->size;  // one block
  State* st = fits(c, n * c->size, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n * c->size));
  const uint64_t seq = enter(*st, c);
  const int p = c->size, me = c->rank;
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* src = in_place ? rbuf : sbuf;
  const int64_t cnt = in_place ? rcount : scount;
  const Datatype* t = in_place ? rtype : stype;
  const int64_t sb = cnt * t->size;
  write(*st, c, kAlltoall, seq, tier, uint64_t(sb), uint64_t(p), [&](uint8_t* slot) {
    for (int j = 0; j < p; ++j) pack_to(at(src, int64_t(j) * cnt, t), cnt, t, slot + j * sb);
  });
  publish(*st, seq);
  await(*st, c, kAlltoall, seq, -1, true, tier, seq);
  *rc = MPI_SUCCESS;
  for (int j = 0; j < p; ++j) {
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
    if (r == MPI_SUCCESS) unpack_from(d + me * n, at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

bool gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
            Comm* c, int* rc) {
  const int me = c->rank;
  const int64_t n = me == root ? rcount * rtype->size : scount * stype->size;  // one block
  State* st = fits(c, n, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  *rc = MPI_SUCCESS;
  if (me != root) {
    write(*st, c, kGather, seq, tier, uint64_t(scount * stype->size), 1,
          [&](uint8_t* slot) { pack_to(sbuf, scount, stype, slot); });
    publish(*st, seq);
    return true;
  }
  publish(*st, seq);
  if (sbuf != MPI_IN_PLACE) *rc = copy(sbuf, scount, stype, at(rbuf, int64_t(root) * rcount, rtype), rcount, rtype);
  await(*st, c, kGather, seq, -1, true, tier, seq);
  for (int j = 0; j < c->size; ++j) {
    if (j == root) continue;
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
    if (r == MPI_SUCCESS) unpack_from(d, at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

bool scatter(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
             Comm* c, int* rc) {
  const int me = c->rank, p = c->size;
  const int64_t n = me == root ? scount * stype->size : rcount * rtype->size;  // one block
  State* st = fits(c, n * p, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n * p));
  const uint64_t seq = enter(*st, c);
  *rc = MPI_SUCCESS;
  if (me == root) {
    write(*st, c, kScatter, seq, tier, uint64_t(n), uint64_t(p), [&](uint8_t* slot) {
      for (int j = 0; j < p; ++j)
        if (j != root) pack_to(at(sbuf, int64_t(j) * scount, stype), scount, stype, slot + j * n);
    });
    publish(*st, seq);
    if (rbuf != MPI_IN_PLACE) *rc = copy(at(sbuf, int64_t(root) * scount, stype), scount, stype, rbuf, rcount, rtype);
    return true;
  }
  publish(*st, seq);
  await(*st, c, kScatter, seq, root, true, tier, seq);
  const uint8_t* d = nullptr;
  *rc = data_of(*st, root, seq, tier, uint64_t(n), &d);
  if (*rc == MPI_SUCCESS) unpack_from(d + me * n, rbuf, rcount, rtype);
  return true;
}

namespace {
// The point-to-point part of a v-call whose blocks decide their way one by
// one: its Schedule, under the call's own sequence number, built at the
// first transfer, so a call whose blocks all take the segment builds none.
class PointToPoint {
 public:
  PointToPoint(Comm* c, int kind, uint64_t seq) : c_(c), kind_(kind), seq_(seq) {}
  void send(const void* buf, int64_t count, Datatype* type, int dest) { get().send(buf, count, type, dest); }
  void recv(void* buf, int64_t count, Datatype* type, int source) { get().recv(buf, count, type, source); }
  // Schedule::wait_round(rc): rc when the call's own steps failed, else
  // the first error of the transfers, if any were started.
  int wait_round(int rc = MPI_SUCCESS) { return s_ ? s_->wait_round(rc) : rc; }

 private:
  Schedule& get() {
    if (!s_) s_.emplace(c_, kind_, seq_);
    return *s_;
  }
  Comm* const c_;
  const int kind_;
  const uint64_t seq_;
  std::optional<Schedule> s_;
};
}  // namespace

bool gatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, const int64_t* rcounts,
             const int64_t* displs, Datatype* rtype, int root, Comm* c, int* rc) {
  decide(c);
  State* st = state(c);
  if (!st) return false;
  const int me = c->rank, p = c->size;
  // Rank j's block takes the segment under Gather's limit for one block,
  // by its size, which j and the root both know; the others travel
  // point-to-point under the call's tag. Every rank enters the call here,
  // whichever way its block goes, so it publishes that it finished the
  // calls before: a writer may be waiting for that.
  auto through = [&](int64_t n) { return fits(c, n, Use::kCopiedOut) != nullptr; };
  const uint64_t seq = enter(*st, c);
  try {
    if (me != root) {
      const int64_t n = scount * stype->size;
      if (through(n)) {
        write(*st, c, kGatherv, seq, st->tier(uint64_t(n)), uint64_t(n), 1,
              [&](uint8_t* slot) { pack_to(sbuf, scount, stype, slot); });
        publish(*st, seq);
        *rc = MPI_SUCCESS;
        return true;
      }
      PointToPoint s(c, kGatherv, seq);
      s.send(sbuf, scount, stype, root);
      *rc = s.wait_round();
      return true;
    }
    publish(*st, seq);
    // The point-to-point blocks' receives are posted before the waits below.
    PointToPoint s(c, kGatherv, seq);
    for (int j = 0; j < p; ++j)
      if (j != root && !through(rcounts[j] * rtype->size)) s.recv(at(rbuf, displs[j], rtype), rcounts[j], rtype, j);
    int first = sbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                     : copy(sbuf, scount, stype, at(rbuf, displs[root], rtype), rcounts[root], rtype);
    for (int j = 0; j < p; ++j) {
      const int64_t n = rcounts[j] * rtype->size;
      if (j == root || !through(n)) continue;
      const Tier tier = st->tier(uint64_t(n));
      await(*st, c, kGatherv, seq, j, true, tier, seq);
      const uint8_t* d = nullptr;
      const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
      if (r == MPI_SUCCESS) unpack_from(d, at(rbuf, displs[j], rtype), rcounts[j], rtype);
      else if (first == MPI_SUCCESS) first = r;
    }
    *rc = s.wait_round(first);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}

namespace {
// Scatterv's and Alltoallv's blocks in a writer's slots. The writer
// decides, by its own counts: a block of 1 byte to the line stride goes in
// its line slot, one up to the medium stride in its medium slot, any other
// travels point-to-point under the call's tag. The line slot, written on
// every such call, starts with a table of the p block sizes (uint16_t;
// 0: point-to-point), which each reader follows, so a reader whose count
// disagrees gets MPI_ERR_TRUNCATE or the point-to-point message rather
// than a wait for data that never comes. Block j sits at table + j * line
// in the line slot, or at j * medium in the medium slot.
struct Blocks {
  uint64_t table, line, medium;
  Tier tier(int64_t n) const {  // kTiers: point-to-point
    if (n <= 0) return kTiers;
    return uint64_t(n) <= line ? kLineTier : uint64_t(n) <= medium ? kMediumTier : kTiers;
  }
};

Blocks blocks_of(const State& st) {
  const uint64_t p = uint64_t(st.p), table = p * sizeof(uint16_t), room = st.room(kLineTier);
  return {table, room > table ? (room - table) / p : 0, st.room(kMediumTier) / p};
}

// Writes this rank's size table and its blocks that take the segment for
// call seq: block j, bytes(j) long, packed by pack(j, out).
template <class Bytes, class Pack>
void write_blocks(State& st, Comm* c, int kind, uint64_t seq, const Blocks& b, Bytes bytes, Pack pack) {
  bool medium = false;
  for (int j = 0; j < st.p; ++j) medium |= b.tier(bytes(j)) == kMediumTier;
  if (medium) {
    write(st, c, kind, seq, kMediumTier, b.medium, uint64_t(st.p), [&](uint8_t* slot) {
      for (int j = 0; j < st.p; ++j)
        if (b.tier(bytes(j)) == kMediumTier) pack(j, slot + uint64_t(j) * b.medium);
    });
  }
  write(st, c, kind, seq, kLineTier, b.line, uint64_t(st.p), [&](uint8_t* slot) {
    auto* sizes = reinterpret_cast<uint16_t*>(slot);
    for (int j = 0; j < st.p; ++j) {
      const int64_t n = bytes(j);
      const Tier t = b.tier(n);
      sizes[j] = t == kTiers ? 0 : uint16_t(n);
      if (t == kLineTier) pack(j, slot + b.table + uint64_t(j) * b.line);
    }
  });
}

// Waits for rank i's size table for call seq and points *out at i's block
// for this rank, or sets it null when that block travels point-to-point;
// an error class as data_of's, or MPI_ERR_TRUNCATE when the block is not
// the n bytes this rank expects.
int block_from(State& st, Comm* c, int kind, uint64_t seq, int i, const Blocks& b, int64_t n, const uint8_t** out) {
  *out = nullptr;
  await(st, c, kind, seq, i, true, kLineTier, seq);
  const uint8_t* d = nullptr;
  if (const int rc = data_of(st, i, seq, kLineTier, b.line, &d); rc != MPI_SUCCESS) return rc;
  const int64_t m = reinterpret_cast<const uint16_t*>(d)[st.me];
  if (m == 0) return MPI_SUCCESS;
  if (m != n) return MPI_ERR_TRUNCATE;
  if (b.tier(m) == kLineTier) {
    *out = d + b.table + uint64_t(st.me) * b.line;
    return MPI_SUCCESS;
  }
  await(st, c, kind, seq, i, true, kMediumTier, seq);
  if (const int rc = data_of(st, i, seq, kMediumTier, b.medium, &d); rc != MPI_SUCCESS) return rc;
  *out = d + uint64_t(st.me) * b.medium;
  return MPI_SUCCESS;
}
}  // namespace

bool scatterv(const void* sbuf, const int64_t* scounts, const int64_t* displs, Datatype* stype, void* rbuf,
              int64_t rcount, Datatype* rtype, int root, Comm* c, int* rc) {
  decide(c);
  State* st = state(c);
  if (!st) return false;
  const int me = c->rank, p = c->size;
  const Blocks b = blocks_of(*st);
  // Every rank enters the call here, as Gatherv's do.
  const uint64_t seq = enter(*st, c);
  try {
    if (me != root) {
      publish(*st, seq);
      const uint8_t* d = nullptr;
      *rc = block_from(*st, c, kScatterv, seq, root, b, rcount * rtype->size, &d);
      if (*rc == MPI_SUCCESS && d) {
        unpack_from(d, rbuf, rcount, rtype);
      } else if (*rc == MPI_SUCCESS) {
        PointToPoint s(c, kScatterv, seq);
        s.recv(rbuf, rcount, rtype, root);
        *rc = s.wait_round();
      }
      return true;
    }
    PointToPoint s(c, kScatterv, seq);
    auto bytes = [&](int j) { return j == root ? 0 : scounts[j] * stype->size; };
    write_blocks(*st, c, kScatterv, seq, b, bytes,
                 [&](int j, uint8_t* out) { pack_to(at(sbuf, displs[j], stype), scounts[j], stype, out); });
    publish(*st, seq);
    for (int j = 0; j < p; ++j)
      if (j != root && b.tier(bytes(j)) == kTiers) s.send(at(sbuf, displs[j], stype), scounts[j], stype, j);
    const int own = rbuf == MPI_IN_PLACE
                        ? MPI_SUCCESS
                        : copy(at(sbuf, displs[root], stype), scounts[root], stype, rbuf, rcount, rtype);
    *rc = s.wait_round(own);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}

bool alltoallv(const void* sbuf, const int64_t* scounts, const int64_t* sdispls, Datatype* stype, void* rbuf,
               const int64_t* rcounts, const int64_t* rdispls, Datatype* rtype, Comm* c, int* rc) {
  decide(c);
  State* st = state(c);
  if (!st || sbuf == MPI_IN_PLACE) return false;
  const int me = c->rank, p = c->size;
  const Blocks b = blocks_of(*st);
  auto out_bytes = [&](int j) { return j == me ? 0 : scounts[j] * stype->size; };
  const uint64_t seq = enter(*st, c);
  try {
    PointToPoint s(c, kAlltoallv, seq);
    write_blocks(*st, c, kAlltoallv, seq, b, out_bytes,
                 [&](int j, uint8_t* out) { pack_to(at(sbuf, sdispls[j], stype), scounts[j], stype, out); });
    publish(*st, seq);
    for (int k = 1; k < p; ++k) {
      const int to = (me + k) % p;
      if (b.tier(out_bytes(to)) == kTiers) s.send(at(sbuf, sdispls[to], stype), scounts[to], stype, to);
    }
    int first =
        copy(at(sbuf, sdispls[me], stype), scounts[me], stype, at(rbuf, rdispls[me], rtype), rcounts[me], rtype);
    for (int k = 1; k < p; ++k) {
      const int from = (me - k + p) % p;
      const uint8_t* d = nullptr;
      const int r = block_from(*st, c, kAlltoallv, seq, from, b, rcounts[from] * rtype->size, &d);
      if (r == MPI_SUCCESS && d) unpack_from(d, at(rbuf, rdispls[from], rtype), rcounts[from], rtype);
      else if (r == MPI_SUCCESS) s.recv(at(rbuf, rdispls[from], rtype), rcounts[from], rtype, from);
      else if (first == MPI_SUCCESS) first = r;
    }
    *rc = s.wait_round(first);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}

bool allgatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, const int64_t* rcounts,
                const int64_t* displs, Datatype* rtype, Comm* c, int* rc) {
  const int me = c->rank, p = c->size;
  int64_t most = 0;  // the largest block, which every rank computes alike
  for (int j = 0; j < p; ++j) most = std::max(most, rcounts[j] * rtype->size);
  State* st = fits(c, most, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(most));
  const uint64_t seq = enter(*st, c);
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* src = in_place ? at(rbuf, displs[me], rtype) : sbuf;
  const int64_t cnt = in_place ? rcounts[me] : scount;
  const Datatype* t = in_place ? rtype : stype;
  write(*st, c, kAllgatherv, seq, tier, uint64_t(cnt * t->size), 1, [&](uint8_t* slot) { pack_to(src, cnt, t, slot); });
  publish(*st, seq);
  await(*st, c, kAllgatherv, seq, -1, true, tier, seq);
  *rc = MPI_SUCCESS;
  for (int j = 0; j < p; ++j) {
    if (in_place && j == me) continue;
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(rcounts[j] * rtype->size), &d);
    if (r == MPI_SUCCESS) unpack_from(d, at(rbuf, displs[j], rtype), rcounts[j], rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

bool scan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, bool exclusive, Comm* c, int* rc) {
  const int64_t n = count * type->size;
  State* st = fits(c, n, Use::kCombined);
  if (!st) return false;
  const int kind = exclusive ? kExscan : kScan;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  const int me = c->rank;
  const bool in_place = sbuf == MPI_IN_PLACE;
  // The last rank's input is read by nobody else, and by itself in place
  // unless rbuf holds it (a Scan in place).
  if (me < c->size - 1 || (in_place && !exclusive)) {
    const void* in = in_place ? rbuf : sbuf;
    write(*st, c, kind, seq, tier, uint64_t(n), 1, [&](uint8_t* slot) { pack_to(in, count, type, slot); });
  }
  publish(*st, seq);
  *rc = MPI_SUCCESS;
  if (me == 0) {
    if (!exclusive && !in_place) *rc = copy(sbuf, count, type, rbuf, count, type);
    return true;
  }
  await(*st, c, kind, seq, -1, true, tier, seq, me);
  try {
    *rc = combine(*st, seq, tier, exclusive ? me : me + 1, 0, count, rbuf, count, type, op,
                  exclusive || in_place ? nullptr : sbuf);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}

bool reduce_scatter(const void* sbuf, void* rbuf, const int64_t* rcounts, int64_t rcount, Datatype* type, MPI_Op op,
                    Comm* c, int* rc) {
  const int me = c->rank, p = c->size;
  int64_t total = 0, skip = 0;
  for (int j = 0; j < p; ++j) {
    if (j == me) skip = total;
    total += rcounts ? rcounts[j] : rcount;
  }
  const int64_t mine = rcounts ? rcounts[me] : rcount;
  State* st = fits(c, total * type->size, Use::kCombined);
  if (!st) return false;
  const int kind = rcounts ? kReduceScatter : kReduceScatterBlock;
  const Tier tier = st->tier(uint64_t(total * type->size));
  const uint64_t seq = enter(*st, c);
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* in = in_place ? rbuf : sbuf;
  write(*st, c, kind, seq, tier, uint64_t(total * type->size), 1,
        [&](uint8_t* slot) { pack_to(in, total, type, slot); });
  publish(*st, seq);
  *rc = MPI_SUCCESS;
  if (mine == 0) return true;
  await(*st, c, kind, seq, -1, true, tier, seq);
  try {
    *rc = combine(*st, seq, tier, p, skip, total, rbuf, mine, type, op, in_place ? nullptr : sbuf);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}

}  // namespace sonde::engine::coll::shared
