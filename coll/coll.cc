// Collective algorithms over point-to-point (see coll.h for the contract,
// coll_schedule.h for how a Task runs, docs/collectives.md for the choice
// of algorithms and their switch points).
//
// Ranks are renumbered relative to the root ("lrank") wherever the shape of
// a tree only matters up to rotation; reductions with a non-commutative
// operation keep the real rank order instead, because they must combine
// rank 0 op rank 1 op ... in that order.
#include "coll/coll.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "coll/coll_schedule.h"
#include "core/engine.h"
#include "datatype/op.h"
#include "core/p2p.h"
#include "core/progress_hooks.h"
#include "comm/topo.h"

namespace sonde::engine::coll {
namespace {

// Size switches between the latency- and the bandwidth-oriented algorithms,
// in bytes. Below them the log(p) message count matters more than the
// log(p) extra copies of the payload.
constexpr int64_t kBcastLarge = 64 * 1024;            // whole message
constexpr int64_t kAllreduceLarge = 32 * 1024;        // whole vector
constexpr int64_t kReduceLarge = 32 * 1024;           // whole vector
constexpr int64_t kGatherBinomialMax = 64 * 1024;     // all ranks' data together
constexpr int64_t kScatterBinomialMax = 64 * 1024;    // all ranks' data together
constexpr int64_t kAllgatherSmallMax = 64 * 1024;     // all ranks' data together (doubling / Bruck)
constexpr int64_t kAlltoallBruckMax = 256;            // one block
constexpr int64_t kAlltoallScatteredMax = 32 * 1024;  // one block
constexpr int64_t kReduceScatterPairwiseMin = 8 * 1024;  // whole vector

// Tags: -16 - kind - 64 * (sequence mod 2^24). Every value stays above
// INT_MIN and below the engine's own kinds' range only at sequence 0, which
// collectives never use before wrapping (the first call takes sequence 1).
constexpr int kKindSpan = 64;
constexpr uint32_t kSeqWindow = 1u << 24;
int coll_tag(int kind, uint32_t seq) {
  return kCollectiveTagBase - kind - kKindSpan * static_cast<int>(seq % kSeqWindow);
}

// Address of element `i` of a buffer of `type` elements.
inline uint8_t* at(void* buf, int64_t i, const Datatype* type) { return static_cast<uint8_t*>(buf) + i * type->extent; }
inline const uint8_t* at(const void* buf, int64_t i, const Datatype* type) {
  return static_cast<const uint8_t*>(buf) + i * type->extent;
}

inline int64_t lowbit(int64_t x) { return x & -x; }

inline int pof2_below(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// Scratch laid out like `count` elements of a datatype, gaps included, so it
// is sent, received and reduced with the user's datatype (user operations
// expect exactly that layout).
class TypedScratch {
 public:
  void* allocate(int64_t count, const Datatype* type) {
    if (count <= 0) return nullptr;
    const int64_t last = (count - 1) * type->extent;
    const int64_t lo = std::min<int64_t>(0, last) + type->true_lb;
    const int64_t hi = std::max<int64_t>(0, last) + type->true_lb + type->true_extent;
    bytes_.reset(new uint8_t[static_cast<size_t>(hi - lo)]);  // uninitialized: every byte read is written first
    // The element at user offset 0 sits `-lo` bytes into the storage; the
    // base pointer may lie outside it, as with any MPI buffer whose lb > 0.
    return bytes_.get() - lo;
  }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
};

// Copies scount elements of stype at src into rcount elements of rtype at
// dst (the type signatures agree, as MPI requires). More data than room is
// MPI_ERR_TRUNCATE, like a receive.
int copy(const void* src, int64_t scount, const Datatype* stype, void* dst, int64_t rcount, const Datatype* rtype) {
  const int64_t n = scount * stype->size;
  if (n > rcount * rtype->size) return MPI_ERR_TRUNCATE;
  if (n == 0 || src == dst) return MPI_SUCCESS;
  if (stype->contiguous && rtype->contiguous) {
    std::memmove(contiguous_start(*rtype, dst), contiguous_start(*stype, src), static_cast<size_t>(n));
  } else if (stype->contiguous) {
    unpack(*rtype, dst, rcount, 0, contiguous_start(*stype, src), static_cast<uint64_t>(n));
  } else if (rtype->contiguous) {
    pack(*stype, src, scount, 0, contiguous_start(*rtype, dst), static_cast<uint64_t>(n));
  } else {
    constexpr int64_t kPiece = 64 * 1024;
    std::vector<uint8_t> piece(static_cast<size_t>(std::min(n, kPiece)));
    for (int64_t off = 0; off < n; off += kPiece) {
      const uint64_t len = static_cast<uint64_t>(std::min(kPiece, n - off));
      pack(*stype, src, scount, static_cast<uint64_t>(off), piece.data(), len);
      unpack(*rtype, dst, rcount, static_cast<uint64_t>(off), piece.data(), len);
    }
  }
  return MPI_SUCCESS;
}

// Packed bytes of (buf, count, type) into out / from in, whole.
void pack_all(const void* buf, int64_t count, const Datatype* type, uint8_t* out) {
  const int64_t n = count * type->size;
  if (n > 0) pack(*type, buf, count, 0, out, static_cast<uint64_t>(n));
}
void unpack_all(const uint8_t* in, void* buf, int64_t count, const Datatype* type) {
  const int64_t n = count * type->size;
  if (n > 0) unpack(*type, buf, count, 0, in, static_cast<uint64_t>(n));
}

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

// Binomial tree: log2 p rounds, the whole message on every edge.
Task bcast_binomial(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (lrank & mask) {
      s.recv(buf, count, type, (r - mask + p) % p);
      SONDE_CO_TRY(co_await s.round());
      break;
    }
  }
  for (int m = mask >> 1; m > 0; m >>= 1)
    if (lrank + m < p) s.send(buf, count, type, (r + m) % p);
  co_return co_await s.round();
}

// Van de Geijn: binomial scatter of p pieces, then a ring allgather. Each
// rank moves about 2n bytes instead of n*log2(p) through the root's subtree.
// Works on packed bytes; block j belongs to lrank j.
Task bcast_scatter_allgather(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int p = s.p, r = s.r;
  const int lrank = (r - root + p) % p;
  const int64_t nbytes = count * type->size;
  std::vector<uint8_t> packed;
  uint8_t* bytes;
  if (type->contiguous) {
    bytes = contiguous_start(*type, buf);
  } else {
    packed.resize(static_cast<size_t>(nbytes));
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

Task bcast_task(Schedule& s, void* buf, int64_t count, Datatype* type, int root) {
  const int64_t nbytes = count * type->size;
  if (s.p == 1 || nbytes == 0) co_return MPI_SUCCESS;
  // With 2 ranks the scatter gains nothing: the single edge carries n either way.
  if (nbytes < kBcastLarge || s.p <= 2) co_return co_await bcast_binomial(s, buf, count, type, root);
  co_return co_await bcast_scatter_allgather(s, buf, count, type, root);
}

// ---- reduce ----------------------------------------------------------------

// Binomial tree. Commutative ops: rooted at `root` (relative ranks).
// Otherwise rooted at rank 0, where every subtree is a contiguous rank range
// and a node combines (its own range) op (its child's, higher range); rank
// 0 then hands the result to the root. `input` is never MPI_IN_PLACE here.
Task reduce_tree(Schedule& s, const void* input, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  const int p = s.p, r = s.r;
  if (p == 1) co_return copy(input, count, type, rbuf, count, type);

  const bool commutative = op_is_commutative(op);
  const int lrank = commutative ? (r - root + p) % p : r;
  auto real = [commutative, root, p](int l) { return commutative ? (l + root) % p : l; };

  TypedScratch acc_store, tmp_store;
  const void* acc = input;  // this node's partial result
  void* acc_w = nullptr;    // the same once it is writable
  void* tmp = nullptr;      // where a child's partial lands
  for (int mask = 1; mask < p; mask <<= 1) {
    if (lrank & mask) {
      s.send(acc, count, type, real(lrank - mask));
      SONDE_CO_TRY(co_await s.round());
      break;
    }
    if (lrank + mask >= p) continue;
    if (!acc_w) {
      // The root's partials accumulate where its result belongs (the input
      // is read only here, so this holds in place too).
      acc_w = r == root ? rbuf : acc_store.allocate(count, type);
      SONDE_CO_TRY(copy(input, count, type, acc_w, count, type));
      tmp = tmp_store.allocate(count, type);
      acc = acc_w;
    }
    s.recv(tmp, count, type, real(lrank + mask));
    SONDE_CO_TRY(co_await s.round());
    if (commutative) {
      SONDE_CO_TRY(reduce_local(tmp, acc_w, count, *type, op));
    } else {
      SONDE_CO_TRY(reduce_local(acc_w, tmp, count, *type, op));  // mine (lower ranks) op child's
      std::swap(acc_w, tmp);
      acc = acc_w;
    }
  }
  if (lrank == 0) {
    if (r == root) co_return copy(acc, count, type, rbuf, count, type);
    s.send(acc, count, type, root);  // non-commutative, root != 0
    co_return co_await s.round();
  }
  if (r == root) {
    s.recv(rbuf, count, type, 0);
    co_return co_await s.round();
  }
  co_return MPI_SUCCESS;
}

// ---- allreduce ---------------------------------------------------------------

// Real rank of a rank in the power-of-two group left after folding: the
// first `rem` of them are the odd ranks below 2*rem.
inline int unfolded(int newrank, int rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

// Recursive doubling among pof2 ranks: log2 pof2 exchanges of the whole
// vector. The group a rank has combined is always a contiguous newrank
// range, so ordering for non-commutative ops is kept by putting the lower
// range first. Leaves the result in *acc (which may end up being *tmp).
Task allreduce_doubling(Schedule& s, void** acc, void** tmp, int64_t count, Datatype* type, MPI_Op op,
                        bool commutative, int newrank, int pof2, int rem) {
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = newrank ^ mask;
    s.recv(*tmp, count, type, unfolded(partner, rem));
    s.send(*acc, count, type, unfolded(partner, rem));
    SONDE_CO_TRY(co_await s.round());
    if (commutative || partner < newrank) {
      SONDE_CO_TRY(reduce_local(*tmp, *acc, count, *type, op));
    } else {
      SONDE_CO_TRY(reduce_local(*acc, *tmp, count, *type, op));
      std::swap(*acc, *tmp);
    }
  }
  co_return MPI_SUCCESS;
}

// Rabenseifner: reduce-scatter by recursive halving (each rank ends up
// owning the full reduction of 1/pof2 of the vector), then an allgather
// retracing the same pairs. About 2n bytes per rank instead of n*log2 p.
// `gather_only` (Reduce): the retrace is a binomial gather of the blocks to
// newrank 0 instead. Commutative ops only: each step folds the partner's
// half into this rank's (partner op mine), the wrong order whenever the
// partner holds higher ranks.
Task allreduce_halving(Schedule& s, void* acc, void* tmp, int64_t count, Datatype* type, MPI_Op op, int newrank,
                       int pof2, int rem, bool gather_only) {
  // Block i of pof2: elements [first(i), first(i+1)); the first count%pof2 blocks get one extra.
  const int64_t q = count / pof2, extra = count % pof2;
  auto first = [q, extra](int64_t i) { return i * q + std::min(i, extra); };
  struct Range { int lo, hi; };
  std::vector<Range> before;  // block range held before each halving step
  int lo = 0, hi = pof2;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = newrank ^ mask;
    const int mid = (lo + hi) / 2;
    const Range keep = newrank < partner ? Range{lo, mid} : Range{mid, hi};
    const Range give = newrank < partner ? Range{mid, hi} : Range{lo, mid};
    const int64_t keep_n = first(keep.hi) - first(keep.lo), give_n = first(give.hi) - first(give.lo);
    s.recv(at(tmp, first(keep.lo), type), keep_n, type, unfolded(partner, rem));
    s.send(at(acc, first(give.lo), type), give_n, type, unfolded(partner, rem));
    SONDE_CO_TRY(co_await s.round());
    SONDE_CO_TRY(reduce_local(at(tmp, first(keep.lo), type), at(acc, first(keep.lo), type), keep_n, *type, op));
    before.push_back({lo, hi});
    lo = keep.lo;
    hi = keep.hi;
  }
  for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
    const int partner = newrank ^ mask;
    const Range whole = before.back();
    before.pop_back();
    // The partner completed the other half of `whole`.
    const Range theirs = lo == whole.lo ? Range{hi, whole.hi} : Range{whole.lo, lo};
    if (!gather_only || !(newrank & mask))
      s.recv(at(acc, first(theirs.lo), type), first(theirs.hi) - first(theirs.lo), type, unfolded(partner, rem));
    if (!gather_only || (newrank & mask))
      s.send(at(acc, first(lo), type), first(hi) - first(lo), type, unfolded(partner, rem));
    SONDE_CO_TRY(co_await s.round());
    if (gather_only && (newrank & mask)) break;  // handed over: done
    lo = whole.lo;
    hi = whole.hi;
  }
  co_return MPI_SUCCESS;
}

// Non-power-of-two sizes fold first: among the first 2*rem ranks each even
// rank hands its vector (acc) to the odd one above it, which folds it in
// (lower rank first, so order holds), leaving pof2 participants. Sets
// *newrank to this rank's place among them, or -1 for a rank folded away.
Task fold(Schedule& s, void* acc, void* tmp, int64_t count, Datatype* type, MPI_Op op, int rem, int* newrank) {
  const int r = s.r;
  if (r >= 2 * rem) {
    *newrank = r - rem;
    co_return MPI_SUCCESS;
  }
  if (r % 2 == 0) {
    *newrank = -1;
    s.send(acc, count, type, r + 1);
    co_return co_await s.round();
  }
  *newrank = r / 2;
  s.recv(tmp, count, type, r - 1);
  SONDE_CO_TRY(co_await s.round());
  co_return reduce_local(tmp, acc, count, *type, op);
}

// Rabenseifner's reduce (commutative ops, large vectors): fold, the
// allreduce's reduce-scatter by recursive halving, a binomial gather of the
// reduced blocks to newrank 0, which hands the result to the root. About 2n
// bytes into the root instead of n*log2 p.
Task reduce_halving(Schedule& s, const void* input, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  const int r = s.r;
  const int pof2 = pof2_below(s.p), rem = s.p - pof2;
  TypedScratch acc_store, tmp_store;
  void* acc = acc_store.allocate(count, type);
  void* tmp = tmp_store.allocate(count, type);
  SONDE_CO_TRY(copy(input, count, type, acc, count, type));
  int newrank = -1;
  SONDE_CO_TRY(co_await fold(s, acc, tmp, count, type, op, rem, &newrank));
  if (newrank >= 0) SONDE_CO_TRY(co_await allreduce_halving(s, acc, tmp, count, type, op, newrank, pof2, rem, true));
  const int holder = unfolded(0, rem);
  if (r == holder) {
    if (r == root) co_return copy(acc, count, type, rbuf, count, type);
    s.send(acc, count, type, root);
    co_return co_await s.round();
  }
  if (r == root) {
    s.recv(rbuf, count, type, holder);
    co_return co_await s.round();
  }
  co_return MPI_SUCCESS;
}

Task allreduce_task(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op) {
  const int p = s.p, r = s.r;
  if (sbuf != MPI_IN_PLACE) SONDE_CO_TRY(copy(sbuf, count, type, rbuf, count, type));
  if (p == 1 || count == 0 || type->size == 0) co_return MPI_SUCCESS;

  const bool commutative = op_is_commutative(op);
  const int pof2 = pof2_below(p);
  const int rem = p - pof2;

  TypedScratch tmp_store;
  void* acc = rbuf;
  void* tmp = tmp_store.allocate(count, type);
  int newrank = -1;
  SONDE_CO_TRY(co_await fold(s, acc, tmp, count, type, op, rem, &newrank));

  if (newrank >= 0) {
    if (commutative && count >= pof2 && count * type->size >= kAllreduceLarge) {
      SONDE_CO_TRY(co_await allreduce_halving(s, acc, tmp, count, type, op, newrank, pof2, rem, false));
    } else {
      SONDE_CO_TRY(co_await allreduce_doubling(s, &acc, &tmp, count, type, op, commutative, newrank, pof2, rem));
      if (acc != rbuf) SONDE_CO_TRY(copy(acc, count, type, rbuf, count, type));
    }
  }

  if (r < 2 * rem) {
    if (r % 2 == 1) s.send(rbuf, count, type, r - 1);
    else s.recv(rbuf, count, type, r + 1);
    co_return co_await s.round();
  }
  co_return MPI_SUCCESS;
}

Task reduce_task(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  if (count == 0 || type->size == 0) co_return MPI_SUCCESS;
  const void* input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  if (s.p > 2 && op_is_commutative(op) && count >= pof2_below(s.p) && count * type->size >= kReduceLarge)
    co_return co_await reduce_halving(s, input, rbuf, count, type, op, root);
  co_return co_await reduce_tree(s, input, rbuf, count, type, op, root);
}

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

  std::vector<uint8_t> packed(static_cast<size_t>(subtree * block));
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
Task gather_linear(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                   const int64_t* rcounts, const int64_t* displs, Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  if (r != root) {
    s.send(sbuf, scount, stype, root);
    co_return co_await s.round();
  }
  auto count_of = [=](int i) -> int64_t { return rcounts ? rcounts[i] : rcount; };
  auto slot = [=](int i) { return at(rbuf, displs ? displs[i] : int64_t(i) * rcount, rtype); };
  for (int i = 0; i < p; ++i)
    if (i != root) s.recv(slot(i), count_of(i), rtype, i);
  int rc = MPI_SUCCESS;
  if (sbuf != MPI_IN_PLACE) rc = copy(sbuf, scount, stype, slot(root), count_of(root), rtype);
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
    if (r == root && sbuf != MPI_IN_PLACE) co_return copy(sbuf, scount, stype, at(rbuf, root * rcount, rtype), rcount, rtype);
    co_return MPI_SUCCESS;
  }
  if (block * p <= kGatherBinomialMax)
    co_return co_await gather_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root, block);
  co_return co_await gather_linear(s, sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, root);
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
  std::vector<uint8_t> packed(static_cast<size_t>(subtree * block));
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

// Linear: the root sends every rank its block directly. scounts/displs
// null: Scatter's layout.
Task scatter_linear(Schedule& s, const void* sbuf, int64_t scount, const int64_t* scounts, const int64_t* displs,
                    Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  if (r != root) {
    s.recv(rbuf, rcount, rtype, root);
    co_return co_await s.round();
  }
  auto count_of = [=](int i) -> int64_t { return scounts ? scounts[i] : scount; };
  auto slot = [=](int i) { return at(sbuf, displs ? displs[i] : int64_t(i) * scount, stype); };
  for (int i = 0; i < p; ++i)
    if (i != root) s.send(slot(i), count_of(i), stype, i);
  int rc = MPI_SUCCESS;
  if (rbuf != MPI_IN_PLACE) rc = copy(slot(root), count_of(root), stype, rbuf, rcount, rtype);
  const int wrc = co_await s.round();
  co_return rc != MPI_SUCCESS ? rc : wrc;
}

Task scatter_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                  Datatype* rtype, int root) {
  const int p = s.p, r = s.r;
  const int64_t block = r == root ? scount * stype->size : rcount * rtype->size;
  if (p == 1 || block == 0) {
    if (r == root && rbuf != MPI_IN_PLACE) co_return copy(at(sbuf, root * scount, stype), scount, stype, rbuf, rcount, rtype);
    co_return MPI_SUCCESS;
  }
  if (block * p <= kScatterBinomialMax)
    co_return co_await scatter_binomial(s, sbuf, scount, stype, rbuf, rcount, rtype, root, block);
  co_return co_await scatter_linear(s, sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype, root);
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
  for (int i = 1; i < p; ++i) unpack_all(tmp.data() + i * block, at(rbuf, int64_t((r + i) % p) * rcount, rtype), rcount, rtype);
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

// Ring: p-1 steps, each passing on the slot received in the step before.
// rcounts/displs null: Allgather's layout.
Task allgather_ring(Schedule& s, void* rbuf, int64_t rcount, const int64_t* rcounts, const int64_t* displs,
                    Datatype* rtype) {
  const int p = s.p, r = s.r;
  auto count_of = [=](int i) -> int64_t { return rcounts ? rcounts[i] : rcount; };
  auto slot = [=](int i) { return at(rbuf, displs ? displs[i] : int64_t(i) * rcount, rtype); };
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    const int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
    s.recv(slot(rb), count_of(rb), rtype, left);
    s.send(slot(sb), count_of(sb), rtype, right);
    SONDE_CO_TRY(co_await s.round());
  }
  co_return MPI_SUCCESS;
}

// Everything happens in rbuf with rtype: slot j holds rank j's rcount elements.
Task allgather_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                    Datatype* rtype) {
  const int p = s.p, r = s.r;
  if (sbuf != MPI_IN_PLACE) SONDE_CO_TRY(copy(sbuf, scount, stype, at(rbuf, r * rcount, rtype), rcount, rtype));
  const int64_t block = rcount * rtype->size;
  if (p == 1 || block == 0) co_return MPI_SUCCESS;
  if (block * p <= kAllgatherSmallMax) {
    if ((p & (p - 1)) == 0) co_return co_await allgather_doubling(s, rbuf, rcount, rtype);
    co_return co_await allgather_bruck(s, rbuf, rcount, rtype, block);
  }
  co_return co_await allgather_ring(s, rbuf, rcount, nullptr, nullptr, rtype);
}

Task allgatherv_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts,
                     Counts displs, Datatype* rtype) {
  const int r = s.r;
  if (sbuf != MPI_IN_PLACE)
    SONDE_CO_TRY(copy(sbuf, scount, stype, at(rbuf, displs[r], rtype), rcounts[r], rtype));
  if (s.p == 1) co_return MPI_SUCCESS;
  co_return co_await allgather_ring(s, rbuf, 0, rcounts.data(), displs.data(), rtype);
}

// ---- alltoall(v,w) -----------------------------------------------------------

// One peer's part of an exchange.
using Piece = Block;

// The general exchange behind Alltoallv/w and medium/large Alltoall:
// `scattered` posts every transfer at once (one round); otherwise pairwise,
// one partner per round (r+i out, r-i in), which keeps a single pair of
// large messages in flight per rank. In place, the outgoing data is first
// packed out of the receive pieces.
Task exchange(Schedule& s, std::vector<Piece> out, std::vector<Piece> in, bool in_place, bool scattered) {
  const int p = s.p, r = s.r;
  std::vector<uint8_t> packed;
  if (in_place) {
    std::vector<int64_t> off(static_cast<size_t>(p) + 1, 0);
    for (int j = 0; j < p; ++j) off[j + 1] = off[j] + in[j].count * in[j].type->size;
    packed.resize(static_cast<size_t>(off[p]));
    out.assign(static_cast<size_t>(p), Piece{});
    for (int j = 0; j < p; ++j) {
      if (j != r) pack_all(in[j].buf, in[j].count, in[j].type, packed.data() + off[j]);
      out[j] = Piece{packed.data() + off[j], off[j + 1] - off[j], byte_type()};
    }
  } else {
    SONDE_CO_TRY(copy(out[r].buf, out[r].count, out[r].type, in[r].buf, in[r].count, in[r].type));
  }
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    s.recv(in[from].buf, in[from].count, in[from].type, from);
    s.send(out[to].buf, out[to].count, out[to].type, to);
    if (!scattered) SONDE_CO_TRY(co_await s.round());
  }
  co_return co_await s.round();
}

// Bruck: ceil(log2 p) rounds of about half the data each, for small blocks
// where the per-message cost dominates. After a local rotation, block i
// (destined for rank r+i) travels +2^k in round k if bit k of i is set.
Task alltoall_bruck(Schedule& s, const void* src, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount,
                    Datatype* rtype, int64_t block) {
  const int p = s.p, r = s.r;
  std::vector<uint8_t> tmp(static_cast<size_t>(p * block));
  for (int i = 0; i < p; ++i) pack_all(at(src, int64_t((r + i) % p) * scount, stype), scount, stype, tmp.data() + i * block);
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
  for (int i = 0; i < p; ++i) unpack_all(tmp.data() + i * block, at(rbuf, int64_t((r - i + p) % p) * rcount, rtype), rcount, rtype);
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
  if (p > 2 && block <= kAlltoallBruckMax)
    co_return co_await alltoall_bruck(s, sbuf, scount, stype, rbuf, rcount, rtype, block);
  std::vector<Piece> out(static_cast<size_t>(p)), in(static_cast<size_t>(p));
  for (int j = 0; j < p; ++j) {
    out[j] = Piece{const_cast<uint8_t*>(at(sbuf, int64_t(j) * scount, stype)), scount, stype};
    in[j] = Piece{at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype};
  }
  co_return co_await exchange(s, std::move(out), std::move(in), in_place, block <= kAlltoallScatteredMax);
}

// ---- reduce_scatter(_block) --------------------------------------------------

// Pairwise exchange (commutative ops, larger vectors): in step i rank r
// sends its input's block for rank r+i there and folds in the block r-i
// sent for it. Each rank moves (p-1)/p of the vector once.
Task reduce_scatter_pairwise(Schedule& s, const void* input, void* rbuf, const int64_t* rcounts, const int64_t* displs,
                             Datatype* type, MPI_Op op) {
  const int p = s.p, r = s.r;
  const int64_t mine = rcounts[r];
  TypedScratch acc_store, tmp_store;
  void* acc = acc_store.allocate(mine, type);
  void* tmp = tmp_store.allocate(mine, type);
  SONDE_CO_TRY(copy(at(input, displs[r], type), mine, type, acc, mine, type));
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    s.recv(tmp, mine, type, from);
    s.send(at(input, displs[to], type), rcounts[to], type, to);
    SONDE_CO_TRY(co_await s.round());
    SONDE_CO_TRY(reduce_local(tmp, acc, mine, *type, op));
  }
  co_return copy(acc, mine, type, rbuf, mine, type);
}

// rcounts: elements of the result per rank, back to back in the input.
Task reduce_scatter_task(Schedule& s, const void* sbuf, void* rbuf, Counts rcounts, Datatype* type, MPI_Op op) {
  const int p = s.p, r = s.r;
  std::vector<int64_t> displs(static_cast<size_t>(p) + 1, 0);
  for (int i = 0; i < p; ++i) displs[i + 1] = displs[i] + rcounts[i];
  const int64_t total = displs[p];
  const void* input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  if (total == 0 || type->size == 0) co_return MPI_SUCCESS;
  if (p > 1 && op_is_commutative(op) && total * type->size >= kReduceScatterPairwiseMin)
    co_return co_await reduce_scatter_pairwise(s, input, rbuf, rcounts.data(), displs.data(), type, op);
  // Otherwise (small, or order matters): the whole vector reduced to rank
  // 0, which scatters the blocks.
  TypedScratch whole_store;
  void* whole = r == 0 ? whole_store.allocate(total, type) : nullptr;
  SONDE_CO_TRY(co_await reduce_tree(s, input, whole, total, type, op, 0));
  if (p == 1) co_return copy(whole, total, type, rbuf, total, type);
  co_return co_await scatter_linear(s, whole, 0, rcounts.data(), displs.data(), type, rbuf, rcounts[r], type, 0);
}

Task reduce_scatter_block_task(Schedule& s, const void* sbuf, void* rbuf, int64_t rcount, Datatype* type, MPI_Op op) {
  co_return co_await reduce_scatter_task(s, sbuf, rbuf, Counts(static_cast<size_t>(s.p), rcount), type, op);
}

// ---- scan / exscan -------------------------------------------------------------

// Recursive doubling: after the round with `mask`, `partial` holds the
// reduction over this rank's aligned group of 2*mask ranks, and the result
// the reduction over ranks 0..r (Scan) or 0..r-1 (Exscan). Lower ranks'
// data always goes first, so non-commutative ops are safe.
Task scan_task(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, bool exclusive) {
  const int p = s.p, r = s.r;
  if (count == 0 || type->size == 0) co_return MPI_SUCCESS;
  const void* input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  if (!exclusive && input != rbuf) SONDE_CO_TRY(copy(input, count, type, rbuf, count, type));
  if (p == 1) co_return MPI_SUCCESS;
  const bool commutative = op_is_commutative(op);
  TypedScratch partial_store, tmp_store;
  void* partial = partial_store.allocate(count, type);
  void* tmp = tmp_store.allocate(count, type);
  SONDE_CO_TRY(copy(input, count, type, partial, count, type));
  bool have_result = !exclusive;  // Exscan: rbuf holds nothing valid yet
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = r ^ mask;
    if (partner >= p) continue;
    s.recv(tmp, count, type, partner);
    s.send(partial, count, type, partner);
    SONDE_CO_TRY(co_await s.round());
    if (r > partner) {
      // tmp: the lower group's reduction, which comes first.
      if (have_result) {
        SONDE_CO_TRY(reduce_local(tmp, rbuf, count, *type, op));
      } else {
        SONDE_CO_TRY(copy(tmp, count, type, rbuf, count, type));
        have_result = true;
      }
      SONDE_CO_TRY(reduce_local(tmp, partial, count, *type, op));
    } else if (commutative) {
      SONDE_CO_TRY(reduce_local(tmp, partial, count, *type, op));
    } else {
      SONDE_CO_TRY(reduce_local(partial, tmp, count, *type, op));  // mine (lower) op partner's
      std::swap(partial, tmp);
    }
  }
  co_return MPI_SUCCESS;
}

// ---- intercommunicator collectives ------------------------------------------------
//
// Group A and group B; every transfer between them goes through the
// leaders (local rank 0 of each group) or straight between peers, and the
// work inside a group reuses the intracommunicator algorithms on the
// hidden local intracommunicator (Schedule::to_local). Rooted collectives
// take root = MPI_ROOT at the root, MPI_PROC_NULL at the root's group
// peers (which do nothing) and the root's rank in the remote group at the
// other group's members.

bool root_idle(int root) { return root == MPI_PROC_NULL; }

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

// Reduces this group's `sbuf` to its leader's *acc (allocated there; rank
// order kept for non-commutative ops: reduce_task roots those at rank 0).
Task reduce_to_leader(Schedule& s, const void* sbuf, TypedScratch& store, void** acc, int64_t count, Datatype* type,
                      MPI_Op op) {
  *acc = s.r == 0 ? store.allocate(count, type) : nullptr;
  s.to_local();
  const int rc = co_await reduce_task(s, sbuf, *acc, count, type, op, 0);
  s.to_remote();
  co_return rc;
}

// The non-root group reduces to its leader, which sends to the root.
Task inter_reduce(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  if (root_idle(root)) co_return MPI_SUCCESS;
  if (root == MPI_ROOT) {
    s.recv(rbuf, count, type, 0);
    co_return co_await s.round();
  }
  TypedScratch store;
  void* acc = nullptr;
  SONDE_CO_TRY(co_await reduce_to_leader(s, sbuf, store, &acc, count, type, op));
  if (s.r != 0) co_return MPI_SUCCESS;
  s.send(acc, count, type, root);
  co_return co_await s.round();
}

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

// Each group reduces to its leader, the leaders swap, each broadcasts the
// other group's result locally.
Task inter_allreduce(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op) {
  TypedScratch store;
  void* acc = nullptr;
  SONDE_CO_TRY(co_await reduce_to_leader(s, sbuf, store, &acc, count, type, op));
  co_return co_await swap_and_broadcast(s, acc, count, type, rbuf, count, type);
}

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

// Alltoall(v,w): piece j goes to, and comes from, remote rank j; all at once.
Task inter_exchange(Schedule& s, std::vector<Piece> out, std::vector<Piece> in) {
  for (int i = 0; i < s.p; ++i) {
    const int j = (s.r + i) % s.p;
    s.recv(in[j].buf, in[j].count, in[j].type, j);
    s.send(out[j].buf, out[j].count, out[j].type, j);
  }
  co_return co_await s.round();
}

// Each group reduces its whole vector to its leader, the leaders swap, each
// scatters the other group's result over its own members by `rcounts`
// (this group's, whose sum both groups' vectors have).
Task inter_reduce_scatter(Schedule& s, const void* sbuf, void* rbuf, Counts rcounts, Datatype* type, MPI_Op op) {
  const int lsize = s.local->size;
  Counts displs(static_cast<size_t>(lsize) + 1, 0);
  for (int i = 0; i < lsize; ++i) displs[i + 1] = displs[i] + rcounts[i];
  const int64_t total = displs[lsize];
  TypedScratch store, theirs_store;
  void* acc = nullptr;
  SONDE_CO_TRY(co_await reduce_to_leader(s, sbuf, store, &acc, total, type, op));
  void* theirs = s.r == 0 ? theirs_store.allocate(total, type) : nullptr;
  if (s.r == 0) {
    s.recv(theirs, total, type, 0);
    s.send(acc, total, type, 0);
    SONDE_CO_TRY(co_await s.round());
  }
  s.to_local();
  if (lsize == 1) co_return copy(theirs, total, type, rbuf, total, type);
  co_return co_await scatter_linear(s, theirs, 0, rcounts.data(), displs.data(), type, rbuf, rcounts[s.r], type, 0);
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

// ---- nonblocking collectives: the schedules progress() advances ---------------

// A nonblocking collective in flight: its schedule, its coroutine and the
// user request that completes with it.
int progress_schedules();
ProgressHook g_schedule_hook{progress_schedules, 0};
struct RegisterSchedules {
  RegisterSchedules() { register_progress_hook(&g_schedule_hook); }
} g_register_schedules;

struct Flight {
  Flight(Comm* c, int kind, MPI_Op o, std::vector<Datatype*> t) : schedule(c, kind), op(o), types(std::move(t)) {
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

std::vector<Flight*>& flights() {
  static auto* v = new std::vector<Flight*>;  // never destroyed: progress may run at exit
  return *v;
}

// Resumes f's coroutine for as long as its rounds complete at once. True
// when the collective is finished.
bool advance(Flight& f) {
  Schedule& s = f.schedule;
  while (!f.task.done()) {
    if (!s.ready()) return false;
    std::exchange(s.waiting, {}).resume();
  }
  return true;
}

void finish_flight(Flight* f) {
  Request* q = f->request;
  q->error = f->task.result();
  delete f;
  engine().complete(q);
}

int run_blocking(Schedule& s, Task t) {
  s.waiting = t.handle();
  int idle = 0;
  for (;;) {
    std::exchange(s.waiting, {}).resume();
    if (t.done()) return t.result();
    while (!s.ready()) {
      if (progress() == 0) engine().idle(idle);
      else idle = 0;
    }
  }
}

// One entry for both forms: `make(schedule)` builds the collective's Task;
// `op` is a reduction's operation.
// `types`: the datatypes a nonblocking collective uses until it completes.
template <class Make>
int launch(Comm* comm, Kind kind, MPI_Request* request, Make make, MPI_Op op = MPI_OP_NULL,
           std::vector<Datatype*> types = {}) {
  try {
    if (!request) {
      Schedule s(comm, kind);
      return run_blocking(s, make(s));
    }
    auto f = std::make_unique<Flight>(comm, kind, op, std::move(types));
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

}  // namespace

// ---- Schedule ------------------------------------------------------------------

Schedule::Schedule(Comm* c, int kind)
    : user(c),
      local(c->inter ? c->local_comm : c),
      comm(c),
      user_tag_(coll_tag(kind, ++c->coll_seq)),
      local_tag_(c->inter ? coll_tag(kind, ++c->local_comm->coll_seq) : user_tag_),
      tag(user_tag_),
      p(c->peers()),
      r(c->rank) {}

Schedule::~Schedule() {
  if (!pending_.empty()) wait_all(static_cast<int>(pending_.size()), pending_.data());
}

void Schedule::note(int rc, Request* q) {
  if (q) pending_.push_back(q);
  if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
}

void Schedule::send(const void* buf, int64_t count, Datatype* type, int dest) {
  if (engine().send_now(buf, count, type, dest, tag, comm)) return;
  Request* q = nullptr;
  const int rc = start_send(buf, count, type, dest, tag, comm, SendMode::kStandard, &q);
  note(rc, q);
}

void Schedule::recv(void* buf, int64_t count, Datatype* type, int source) {
  Request* q = nullptr;
  const int rc = start_recv(buf, count, type, source, tag, comm, &q);
  note(rc, q);
}

bool Schedule::ready() const {
  for (const Request* q : pending_)
    if (!q->complete) return false;
  return true;
}

int Schedule::retire() {
  // All complete: wait_all only collects errors and releases them.
  int rc = pending_.empty() ? MPI_SUCCESS : wait_all(static_cast<int>(pending_.size()), pending_.data());
  pending_.clear();
  if (error_ != MPI_SUCCESS) rc = error_;
  error_ = MPI_SUCCESS;
  return rc;
}

// ---- the progress hook ---------------------------------------------------------

namespace {
// Advances every schedule whose current round has completed; completes the
// user requests of those that finish. Returns the number that moved.
int progress_schedules() {
  static bool running = false;  // a user op calling MPI inside a round: no recursion
  if (running) return 0;
  running = true;
  int moved = 0;
  std::vector<Flight*>& v = flights();
  for (size_t i = 0; i < v.size();) {
    Flight* f = v[i];
    if (!f->schedule.ready()) {
      ++i;
      continue;
    }
    ++moved;
    if (!advance(*f)) {
      ++i;
      continue;
    }
    v[i] = v.back();
    v.pop_back();
    finish_flight(f);
  }
  set_in_flight(&g_schedule_hook, static_cast<int>(v.size()));
  running = false;
  return moved;
}
}  // namespace

// ---- entry points ----------------------------------------------------------------

int barrier(Comm* comm, MPI_Request* request) {
  if (comm->inter) return launch(comm, kBarrier, request, [=](Schedule& s) { return inter_barrier(s); });
  return launch(comm, kBarrier, request, [=](Schedule& s) { return barrier_task(s); });
}

int bcast(void* buf, int64_t count, Datatype* type, int root, Comm* comm, MPI_Request* request) {
  if (comm->inter)
    return launch(comm, kBcast, request, [=](Schedule& s) { return inter_bcast(s, buf, count, type, root); }, MPI_OP_NULL, {type});
  return launch(comm, kBcast, request, [=](Schedule& s) { return bcast_task(s, buf, count, type, root); }, MPI_OP_NULL, {type});
}

int reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* comm,
           MPI_Request* request) {
  if (comm->inter)
    return launch(comm, kReduce, request,
                  [=](Schedule& s) { return inter_reduce(s, sbuf, rbuf, count, type, op, root); }, op, {type});
  return launch(comm, kReduce, request,
                [=](Schedule& s) { return reduce_task(s, sbuf, rbuf, count, type, op, root); }, op, {type});
}

int allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
              MPI_Request* request) {
  if (comm->inter)
    return launch(comm, kAllreduce, request,
                  [=](Schedule& s) { return inter_allreduce(s, sbuf, rbuf, count, type, op); }, op, {type});
  return launch(comm, kAllreduce, request,
                [=](Schedule& s) { return allreduce_task(s, sbuf, rbuf, count, type, op); }, op, {type});
}

int gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
           Comm* comm, MPI_Request* request) {
  if (comm->inter)
    return launch(comm, kGather, request,
                  [=](Schedule& s) { return inter_gather(s, sbuf, scount, stype, rbuf, rcount, rtype, root); }, MPI_OP_NULL, {stype, rtype});
  return launch(comm, kGather, request,
                [=](Schedule& s) { return gather_task(s, sbuf, scount, stype, rbuf, rcount, rtype, root); }, MPI_OP_NULL, {stype, rtype});
}

namespace {
Task gatherv_task(Schedule& s, const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts,
                  Counts displs, Datatype* rtype, int root) {
  co_return co_await gather_linear(s, sbuf, scount, stype, rbuf, 0, rcounts.data(), displs.data(), rtype, root);
}
Task scatterv_task(Schedule& s, const void* sbuf, Counts scounts, Counts displs, Datatype* stype, void* rbuf,
                   int64_t rcount, Datatype* rtype, int root) {
  co_return co_await scatter_linear(s, sbuf, 0, scounts.data(), displs.data(), stype, rbuf, rcount, rtype, root);
}
}  // namespace

int gatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts, Counts displs,
            Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  return launch(comm, kGatherv, request, [&](Schedule& s) {
    if (comm->inter)
      return inter_linear(s, true, rbuf, std::move(rcounts), std::move(displs), rtype, const_cast<void*>(sbuf),
                          scount, stype, root);
    return gatherv_task(s, sbuf, scount, stype, rbuf, std::move(rcounts), std::move(displs), rtype, root);
  }, MPI_OP_NULL, {stype, rtype});
}

int scatter(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
            Comm* comm, MPI_Request* request) {
  auto task = comm->inter ? inter_scatter : scatter_task;
  return launch(comm, kScatter, request,
                [=](Schedule& s) { return task(s, sbuf, scount, stype, rbuf, rcount, rtype, root); }, MPI_OP_NULL, {stype, rtype});
}

int scatterv(const void* sbuf, Counts scounts, Counts displs, Datatype* stype, void* rbuf, int64_t rcount,
             Datatype* rtype, int root, Comm* comm, MPI_Request* request) {
  return launch(comm, kScatterv, request, [&](Schedule& s) {
    if (comm->inter)
      return inter_linear(s, false, const_cast<void*>(sbuf), std::move(scounts), std::move(displs), stype, rbuf,
                          rcount, rtype, root);
    return scatterv_task(s, sbuf, std::move(scounts), std::move(displs), stype, rbuf, rcount, rtype, root);
  }, MPI_OP_NULL, {stype, rtype});
}

int allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
              Comm* comm, MPI_Request* request) {
  auto task = comm->inter ? inter_allgather : allgather_task;
  return launch(comm, kAllgather, request,
                [=](Schedule& s) { return task(s, sbuf, scount, stype, rbuf, rcount, rtype); }, MPI_OP_NULL, {stype, rtype});
}

int allgatherv(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, Counts rcounts, Counts displs,
               Datatype* rtype, Comm* comm, MPI_Request* request) {
  auto task = comm->inter ? inter_allgatherv : allgatherv_task;
  return launch(comm, kAllgatherv, request, [&](Schedule& s) {
    return task(s, sbuf, scount, stype, rbuf, std::move(rcounts), std::move(displs), rtype);
  }, MPI_OP_NULL, {stype, rtype});
}

int alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
             Comm* comm, MPI_Request* request) {
  if (comm->inter) {
    return launch(comm, kAlltoall, request, [=](Schedule& s) {
      std::vector<Piece> out(static_cast<size_t>(s.p)), in(static_cast<size_t>(s.p));
      for (int j = 0; j < s.p; ++j) {
        out[j] = Piece{const_cast<uint8_t*>(at(sbuf, int64_t(j) * scount, stype)), scount, stype};
        in[j] = Piece{at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype};
      }
      return inter_exchange(s, std::move(out), std::move(in));
    }, MPI_OP_NULL, {stype, rtype});
  }
  return launch(comm, kAlltoall, request,
                [=](Schedule& s) { return alltoall_task(s, sbuf, scount, stype, rbuf, rcount, rtype); }, MPI_OP_NULL, {stype, rtype});
}

// Alltoallv and Alltoallw: per-peer pieces, built before launch returns
// (so the count, displacement and type arrays are not needed afterwards).
// Displacements are in elements of the datatype (v) or in bytes (w).
namespace {
int alltoall_pieces(const void* sbuf, const Counts& scounts, const Counts& sdispls,
                    const std::vector<Datatype*>& stypes, void* rbuf, const Counts& rcounts, const Counts& rdispls,
                    const std::vector<Datatype*>& rtypes, bool byte_displs, Comm* comm, Kind kind,
                    MPI_Request* request) {
  const bool in_place = sbuf == MPI_IN_PLACE;
  auto type_of = [](const std::vector<Datatype*>& t, int j) { return t.size() == 1 ? t[0] : t[j]; };
  auto addr = [byte_displs](const void* buf, int64_t d, const Datatype* t) {
    return const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)) + (byte_displs ? d : d * t->extent);
  };
  std::vector<Datatype*> held(stypes);
  held.insert(held.end(), rtypes.begin(), rtypes.end());
  return launch(comm, kind, request, [&](Schedule& s) {
    std::vector<Piece> out(static_cast<size_t>(s.p)), in(static_cast<size_t>(s.p));
    for (int j = 0; j < s.p; ++j) {
      if (!in_place) out[j] = Piece{addr(sbuf, sdispls[j], type_of(stypes, j)), scounts[j], type_of(stypes, j)};
      in[j] = Piece{addr(rbuf, rdispls[j], type_of(rtypes, j)), rcounts[j], type_of(rtypes, j)};
    }
    if (s.user->inter) return inter_exchange(s, std::move(out), std::move(in));
    return exchange(s, std::move(out), std::move(in), in_place, true);
  }, MPI_OP_NULL, held);
}
}  // namespace

int alltoallv(const void* sbuf, Counts scounts, Counts sdispls, Datatype* stype, void* rbuf, Counts rcounts,
              Counts rdispls, Datatype* rtype, Comm* comm, MPI_Request* request) {
  return alltoall_pieces(sbuf, scounts, sdispls, {stype}, rbuf, rcounts, rdispls, {rtype}, false, comm, kAlltoallv,
                         request);
}

int alltoallw(const void* sbuf, Counts scounts, Counts sdispls, std::vector<Datatype*> stypes, void* rbuf,
              Counts rcounts, Counts rdispls, std::vector<Datatype*> rtypes, Comm* comm, MPI_Request* request) {
  return alltoall_pieces(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, true, comm, kAlltoallw,
                         request);
}

int reduce_scatter_block(const void* sbuf, void* rbuf, int64_t rcount, Datatype* type, MPI_Op op, Comm* comm,
                         MPI_Request* request) {
  if (comm->inter)
    return launch(comm, kReduceScatterBlock, request, [=](Schedule& s) {
      return inter_reduce_scatter(s, sbuf, rbuf, Counts(static_cast<size_t>(s.local->size), rcount), type, op);
    }, op, {type});
  return launch(comm, kReduceScatterBlock, request,
                [=](Schedule& s) { return reduce_scatter_block_task(s, sbuf, rbuf, rcount, type, op); }, op, {type});
}

int reduce_scatter(const void* sbuf, void* rbuf, Counts rcounts, Datatype* type, MPI_Op op, Comm* comm,
                   MPI_Request* request) {
  auto task = comm->inter ? inter_reduce_scatter : reduce_scatter_task;
  return launch(comm, kReduceScatter, request,
                [&](Schedule& s) { return task(s, sbuf, rbuf, std::move(rcounts), type, op); }, op, {type});
}

int scan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm, MPI_Request* request) {
  return launch(comm, kScan, request, [=](Schedule& s) { return scan_task(s, sbuf, rbuf, count, type, op, false); }, op, {type});
}

int exscan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
           MPI_Request* request) {
  return launch(comm, kExscan, request, [=](Schedule& s) { return scan_task(s, sbuf, rbuf, count, type, op, true); }, op, {type});
}

int neighbor(Comm* comm, Kind kind, std::vector<Block> out, std::vector<Block> in, MPI_Request* request) {
  std::vector<Datatype*> held;
  if (request) {
    for (const Block& b : out) held.push_back(b.type);
    for (const Block& b : in) held.push_back(b.type);
  }
  return launch(comm, kind, request, [&](Schedule& s) { return neighbor_task(s, std::move(out), std::move(in)); },
                MPI_OP_NULL, std::move(held));
}

}  // namespace sonde::engine::coll
