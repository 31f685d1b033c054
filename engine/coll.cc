// Collective algorithms over point-to-point (see coll.h for the contract).
//
// Ranks are renumbered relative to the root ("lrank") wherever the shape of
// a tree only matters up to rotation; reductions with a non-commutative
// operation keep the real rank order instead, because they must combine
// rank 0 op rank 1 op ... in that order.
#include "engine/coll.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "engine/op.h"
#include "engine/p2p.h"

namespace sonde::engine::coll {
namespace {

// Size switches between the latency- and the bandwidth-oriented algorithms,
// in bytes. Below them the log(p) message count matters more than the
// log(p) extra copies of the payload.
constexpr int64_t kBcastLarge = 64 * 1024;            // whole message
constexpr int64_t kAllreduceLarge = 32 * 1024;        // whole vector
constexpr int64_t kGatherBinomialMax = 64 * 1024;     // all ranks' data together
constexpr int64_t kAllgatherDoublingMax = 64 * 1024;  // all ranks' data together

#define SONDE_TRY(expr)                             \
  do {                                              \
    int sonde_rc_ = (expr);                         \
    if (sonde_rc_ != MPI_SUCCESS) return sonde_rc_; \
  } while (0)

int begin(Comm* c, Kind kind) {
  ++c->coll_seq;
  return collective_tag(kind);
}

// Address of element `i` of a buffer of `type` elements.
inline uint8_t* at(void* buf, int64_t i, const Datatype* type) { return static_cast<uint8_t*>(buf) + i * type->extent; }
inline const uint8_t* at(const void* buf, int64_t i, const Datatype* type) {
  return static_cast<const uint8_t*>(buf) + i * type->extent;
}

inline int64_t lowbit(int64_t x) { return x & -x; }

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

// The requests of one step, started together and waited for together, so a
// node feeds all its children (or drains all of them) concurrently.
class Step {
 public:
  explicit Step(Comm* comm, int tag) : comm_(comm), tag_(tag) {}
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  ~Step() { wait(); }

  void send(const void* buf, int64_t count, Datatype* type, int dest) {
    Request* r = nullptr;
    const int rc = start_send(buf, count, type, dest, tag_, comm_, SendMode::kStandard, &r);
    note(rc, r);
  }
  void recv(void* buf, int64_t count, Datatype* type, int source) {
    Request* r = nullptr;
    const int rc = start_recv(buf, count, type, source, tag_, comm_, &r);
    note(rc, r);
  }
  // Completes every started request; the first error wins.
  int wait() {
    if (!requests_.empty()) {
      int rc = wait_all(static_cast<int>(requests_.size()), requests_.data());
      requests_.clear();
      if (error_ == MPI_SUCCESS) error_ = rc;
    }
    int rc = error_;
    error_ = MPI_SUCCESS;
    return rc;
  }

 private:
  // A request that failed to start is still waited for (and so released),
  // as p2p.h's own blocking calls do.
  void note(int rc, Request* r) {
    if (r) requests_.push_back(r);
    if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  }
  Comm* comm_;
  int tag_;
  int error_ = MPI_SUCCESS;
  std::vector<Request*> requests_;
};

template <class F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

// ---- barrier -------------------------------------------------------------

// Dissemination: ceil(log2 p) rounds; in round k every rank signals rank+2^k
// and hears from rank-2^k, whatever p is. No pair repeats within a barrier.
int barrier_impl(Comm* c) {
  const int tag = begin(c, kBarrier);
  const int p = c->size, r = c->rank;
  // Empty messages, but from a real address: the engine's immediate-send
  // path takes only non-null contiguous sources.
  uint8_t token = 0;
  for (int k = 1; k < p; k <<= 1) {
    SONDE_TRY(sendrecv(&token, 0, byte_type(), (r + k) % p, tag, &token, 0, byte_type(), (r - k + p) % p, tag, c,
                       MPI_STATUS_IGNORE));
  }
  return MPI_SUCCESS;
}

// ---- bcast -----------------------------------------------------------------

// Binomial tree: log2 p rounds, the whole message on every edge.
int bcast_binomial(void* buf, int64_t count, Datatype* type, int root, Comm* c, int tag) {
  const int p = c->size, r = c->rank;
  const int lrank = (r - root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (lrank & mask) {
      SONDE_TRY(recv(buf, count, type, (r - mask + p) % p, tag, c, MPI_STATUS_IGNORE));
      break;
    }
  }
  Step step(c, tag);
  for (int m = mask >> 1; m > 0; m >>= 1)
    if (lrank + m < p) step.send(buf, count, type, (r + m) % p);
  return step.wait();
}

// Van de Geijn: binomial scatter of p pieces, then a ring allgather. Each
// rank moves about 2n bytes instead of n*log2(p) through the root's subtree.
// Works on packed bytes; block j belongs to lrank j.
int bcast_scatter_allgather(void* buf, int64_t count, Datatype* type, int root, Comm* c, int tag) {
  const int p = c->size, r = c->rank;
  const int lrank = (r - root + p) % p;
  const int64_t nbytes = count * type->size;
  std::vector<uint8_t> packed;
  uint8_t* bytes;
  if (type->contiguous) {
    bytes = contiguous_start(*type, buf);
  } else {
    packed.resize(static_cast<size_t>(nbytes));
    bytes = packed.data();
    if (r == root) pack(*type, buf, count, 0, bytes, static_cast<uint64_t>(nbytes));
  }
  Datatype* byte = byte_type();
  const int64_t piece = (nbytes + p - 1) / p;
  auto edge = [&](int64_t block) { return std::min(block * piece, nbytes); };

  // Scatter: the subtree of lrank covers blocks [lrank, lrank + lowbit(lrank)).
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (lrank & mask) {
      const int64_t from = edge(lrank), to = edge(std::min(lrank + mask, p));
      if (to > from) SONDE_TRY(recv(bytes + from, to - from, byte, (r - mask + p) % p, tag, c, MPI_STATUS_IGNORE));
      break;
    }
  }
  {
    Step step(c, tag);
    for (int m = mask >> 1; m > 0; m >>= 1) {
      if (lrank + m >= p) continue;
      const int64_t from = edge(lrank + m), to = edge(std::min(lrank + 2 * m, p));
      if (to > from) step.send(bytes + from, to - from, byte, (r + m) % p);
    }
    SONDE_TRY(step.wait());
  }

  // Ring: in step i, pass block lrank-i to the right, take lrank-i-1 from the left.
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    const int64_t sb = (lrank - i + p) % p, rb = (lrank - i - 1 + p) % p;
    Step step(c, tag);
    if (edge(rb + 1) > edge(rb)) step.recv(bytes + edge(rb), edge(rb + 1) - edge(rb), byte, left);
    if (edge(sb + 1) > edge(sb)) step.send(bytes + edge(sb), edge(sb + 1) - edge(sb), byte, right);
    SONDE_TRY(step.wait());
  }
  if (!type->contiguous && r != root) unpack(*type, buf, count, 0, bytes, static_cast<uint64_t>(nbytes));
  return MPI_SUCCESS;
}

int bcast_impl(void* buf, int64_t count, Datatype* type, int root, Comm* c) {
  const int tag = begin(c, kBcast);
  const int64_t nbytes = count * type->size;
  if (c->size == 1 || nbytes == 0) return MPI_SUCCESS;
  // With 2 ranks the scatter gains nothing: the single edge carries n either way.
  if (nbytes < kBcastLarge || c->size <= 2) return bcast_binomial(buf, count, type, root, c, tag);
  return bcast_scatter_allgather(buf, count, type, root, c, tag);
}

// ---- reduce ----------------------------------------------------------------

// Binomial tree. Commutative ops: rooted at `root` (relative ranks).
// Otherwise rooted at rank 0, where every subtree is a contiguous rank range
// and a node combines (its own range) op (its child's, higher range); rank
// 0 then hands the result to the root.
int reduce_impl(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c) {
  const int tag = begin(c, kReduce);
  const int p = c->size, r = c->rank;
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* input = in_place ? rbuf : sbuf;
  if (count == 0 || type->size == 0) return MPI_SUCCESS;
  if (p == 1) return copy(input, count, type, rbuf, count, type);

  const bool commutative = op_is_commutative(op);
  const int lrank = commutative ? (r - root + p) % p : r;
  auto real = [&](int l) { return commutative ? (l + root) % p : l; };

  TypedScratch acc_store, tmp_store;
  const void* acc = input;  // this node's partial result
  void* acc_w = nullptr;    // the same once it is writable
  void* tmp = nullptr;      // where a child's partial lands
  for (int mask = 1; mask < p; mask <<= 1) {
    if (lrank & mask) {
      SONDE_TRY(send(acc, count, type, real(lrank - mask), tag, c));
      break;
    }
    if (lrank + mask >= p) continue;
    if (!acc_w) {
      if (r == root) {
        acc_w = rbuf;  // the root's partials accumulate where its result belongs
      } else {
        acc_w = acc_store.allocate(count, type);
      }
      SONDE_TRY(copy(input, count, type, acc_w, count, type));
      tmp = tmp_store.allocate(count, type);
      acc = acc_w;
    }
    SONDE_TRY(recv(tmp, count, type, real(lrank + mask), tag, c, MPI_STATUS_IGNORE));
    if (commutative) {
      SONDE_TRY(reduce_local(tmp, acc_w, count, *type, op));
    } else {
      SONDE_TRY(reduce_local(acc_w, tmp, count, *type, op));  // mine (lower ranks) op child's
      std::swap(acc_w, tmp);
      acc = acc_w;
    }
  }
  if (lrank == 0) {
    if (r == root) return copy(acc, count, type, rbuf, count, type);
    return send(acc, count, type, root, tag, c);  // non-commutative, root != 0
  }
  if (r == root) return recv(rbuf, count, type, 0, tag, c, MPI_STATUS_IGNORE);
  return MPI_SUCCESS;
}

// ---- allreduce ---------------------------------------------------------------

// Real rank of a rank in the power-of-two group left after folding: the
// first `rem` of them are the odd ranks below 2*rem.
inline int unfolded(int newrank, int rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

// Recursive doubling among pof2 ranks: log2 pof2 exchanges of the whole
// vector. The group a rank has combined is always a contiguous newrank
// range, so ordering for non-commutative ops is kept by putting the lower
// range first. Leaves the result in *acc (which may end up being tmp).
int allreduce_doubling(void*& acc, void*& tmp, int64_t count, Datatype* type, MPI_Op op, bool commutative,
                       int newrank, int pof2, int rem, Comm* c, int tag) {
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = newrank ^ mask;
    SONDE_TRY(sendrecv(acc, count, type, unfolded(partner, rem), tag, tmp, count, type, unfolded(partner, rem), tag, c,
                       MPI_STATUS_IGNORE));
    if (commutative || partner < newrank) {
      SONDE_TRY(reduce_local(tmp, acc, count, *type, op));
    } else {
      SONDE_TRY(reduce_local(acc, tmp, count, *type, op));
      std::swap(acc, tmp);
    }
  }
  return MPI_SUCCESS;
}

// Rabenseifner: reduce-scatter by recursive halving (each rank ends up
// owning the full reduction of 1/pof2 of the vector), then an allgather
// retracing the same pairs. About 2n bytes per rank instead of n*log2 p.
// Commutative ops only: each step folds the partner's half into this rank's
// (partner op mine), the wrong order whenever the partner holds higher ranks.
int allreduce_halving(void* acc, void* tmp, int64_t count, Datatype* type, MPI_Op op, int newrank, int pof2, int rem,
                      Comm* c, int tag) {
  // Block i of pof2: elements [first(i), first(i+1)); the first count%pof2 blocks get one extra.
  const int64_t q = count / pof2, extra = count % pof2;
  auto first = [&](int64_t i) { return i * q + std::min(i, extra); };
  struct Range { int lo, hi; };
  std::vector<Range> before;  // block range held before each halving step
  int lo = 0, hi = pof2;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = newrank ^ mask;
    const int mid = (lo + hi) / 2;
    const Range keep = newrank < partner ? Range{lo, mid} : Range{mid, hi};
    const Range give = newrank < partner ? Range{mid, hi} : Range{lo, mid};
    const int64_t keep_n = first(keep.hi) - first(keep.lo), give_n = first(give.hi) - first(give.lo);
    SONDE_TRY(sendrecv(at(acc, first(give.lo), type), give_n, type, unfolded(partner, rem), tag,
                       at(tmp, first(keep.lo), type), keep_n, type, unfolded(partner, rem), tag, c, MPI_STATUS_IGNORE));
    SONDE_TRY(reduce_local(at(tmp, first(keep.lo), type), at(acc, first(keep.lo), type), keep_n, *type, op));
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
    SONDE_TRY(sendrecv(at(acc, first(lo), type), first(hi) - first(lo), type, unfolded(partner, rem), tag,
                       at(acc, first(theirs.lo), type), first(theirs.hi) - first(theirs.lo), type,
                       unfolded(partner, rem), tag, c, MPI_STATUS_IGNORE));
    lo = whole.lo;
    hi = whole.hi;
  }
  return MPI_SUCCESS;
}

// Non-power-of-two sizes fold first: among the first 2*rem ranks each even
// rank hands its vector to the odd one above it (lower rank first, so order
// holds), leaving pof2 participants; the result is handed back at the end.
int allreduce_impl(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* c) {
  const int tag = begin(c, kAllreduce);
  const int p = c->size, r = c->rank;
  if (sbuf != MPI_IN_PLACE) SONDE_TRY(copy(sbuf, count, type, rbuf, count, type));
  if (p == 1 || count == 0 || type->size == 0) return MPI_SUCCESS;

  const bool commutative = op_is_commutative(op);
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;

  TypedScratch tmp_store;
  void* acc = rbuf;
  void* tmp = tmp_store.allocate(count, type);
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      SONDE_TRY(send(acc, count, type, r + 1, tag, c));
      newrank = -1;
    } else {
      SONDE_TRY(recv(tmp, count, type, r - 1, tag, c, MPI_STATUS_IGNORE));
      SONDE_TRY(reduce_local(tmp, acc, count, *type, op));
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }

  if (newrank >= 0) {
    if (commutative && count >= pof2 && count * type->size >= kAllreduceLarge) {
      SONDE_TRY(allreduce_halving(acc, tmp, count, type, op, newrank, pof2, rem, c, tag));
    } else {
      SONDE_TRY(allreduce_doubling(acc, tmp, count, type, op, commutative, newrank, pof2, rem, c, tag));
      if (acc != rbuf) SONDE_TRY(copy(acc, count, type, rbuf, count, type));
    }
  }

  if (r < 2 * rem) {
    if (r % 2 == 1) return send(rbuf, count, type, r - 1, tag, c);
    return recv(rbuf, count, type, r + 1, tag, c, MPI_STATUS_IGNORE);
  }
  return MPI_SUCCESS;
}

// ---- gather ----------------------------------------------------------------

// Binomial tree over packed bytes: interior nodes forward their whole
// subtree in one message, so the root takes log2 p messages. For small data,
// where message count dominates.
int gather_binomial(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
                    int root, Comm* c, int tag, int64_t block) {
  const int p = c->size, r = c->rank;
  const int lrank = (r - root + p) % p;
  const bool in_place = sbuf == MPI_IN_PLACE;
  const int64_t subtree = lrank == 0 ? p : std::min<int64_t>(lowbit(lrank), p - lrank);
  const int parent = (r - static_cast<int>(lowbit(lrank)) + p) % p;
  if (subtree == 1) return send(sbuf, scount, stype, parent, tag, c);  // a leaf: straight from the user buffer

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
  {
    Step step(c, tag);
    for (int mask = 1; mask < p && !(lrank & mask); mask <<= 1) {
      const int child = lrank + mask;
      if (child >= p) continue;
      const int64_t blocks = std::min<int64_t>(mask, p - child);
      step.recv(packed.data() + mask * block, blocks * block, byte_type(), (r + mask) % p);
    }
    SONDE_TRY(step.wait());
  }
  if (lrank != 0) return send(packed.data(), subtree * block, byte_type(), parent, tag, c);

  for (int j = in_place ? 1 : 0; j < p; ++j) {
    const int owner = (j + root) % p;
    unpack(*rtype, at(rbuf, owner * rcount, rtype), rcount, 0, packed.data() + j * block, static_cast<uint64_t>(block));
  }
  return own_rc;
}

// Linear: every rank sends straight into its slot at the root, which
// receives all of them concurrently. For large data, where the tree's
// store-and-forward copies would dominate.
int gather_linear(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
                  int root, Comm* c, int tag) {
  const int p = c->size, r = c->rank;
  if (r != root) return send(sbuf, scount, stype, root, tag, c);
  Step step(c, tag);
  for (int i = 0; i < p; ++i)
    if (i != root) step.recv(at(rbuf, i * rcount, rtype), rcount, rtype, i);
  int rc = MPI_SUCCESS;
  if (sbuf != MPI_IN_PLACE) rc = copy(sbuf, scount, stype, at(rbuf, root * rcount, rtype), rcount, rtype);
  int wrc = step.wait();
  return rc != MPI_SUCCESS ? rc : wrc;
}

int gather_impl(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
                int root, Comm* c) {
  const int tag = begin(c, kGather);
  const int p = c->size, r = c->rank;
  // Every rank computes the same per-rank size: MPI makes each sender's
  // signature match the root's receive signature.
  const int64_t block = r == root ? rcount * rtype->size : scount * stype->size;
  if (p == 1 || block == 0) {
    if (r == root && sbuf != MPI_IN_PLACE)
      return copy(sbuf, scount, stype, at(rbuf, root * rcount, rtype), rcount, rtype);
    return MPI_SUCCESS;
  }
  if (block * p <= kGatherBinomialMax)
    return gather_binomial(sbuf, scount, stype, rbuf, rcount, rtype, root, c, tag, block);
  return gather_linear(sbuf, scount, stype, rbuf, rcount, rtype, root, c, tag);
}

// ---- allgather ---------------------------------------------------------------

// Everything happens in rbuf with rtype: slot j holds rank j's rcount elements.
int allgather_impl(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
                   Comm* c) {
  const int tag = begin(c, kAllgather);
  const int p = c->size, r = c->rank;
  if (sbuf != MPI_IN_PLACE) SONDE_TRY(copy(sbuf, scount, stype, at(rbuf, r * rcount, rtype), rcount, rtype));
  const int64_t block = rcount * rtype->size;
  if (p == 1 || block == 0) return MPI_SUCCESS;

  if ((p & (p - 1)) == 0 && block * p <= kAllgatherDoublingMax) {
    // Recursive doubling: log2 p exchanges of the slots gathered so far,
    // which are always the aligned run of `mask` slots containing r.
    for (int mask = 1; mask < p; mask <<= 1) {
      const int partner = r ^ mask;
      const int64_t mine = (r & ~(mask - 1)) * rcount, theirs = (partner & ~(mask - 1)) * rcount;
      SONDE_TRY(sendrecv(at(rbuf, mine, rtype), mask * rcount, rtype, partner, tag, at(rbuf, theirs, rtype),
                         mask * rcount, rtype, partner, tag, c, MPI_STATUS_IGNORE));
    }
    return MPI_SUCCESS;
  }
  // Ring: p-1 steps, each passing on the slot received in the step before.
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    const int64_t sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
    SONDE_TRY(sendrecv(at(rbuf, sb * rcount, rtype), rcount, rtype, right, tag, at(rbuf, rb * rcount, rtype), rcount,
                       rtype, left, tag, c, MPI_STATUS_IGNORE));
  }
  return MPI_SUCCESS;
}

}  // namespace

int barrier(Comm* comm) {
  return guarded([&] { return barrier_impl(comm); });
}

int bcast(void* buf, int64_t count, Datatype* type, int root, Comm* comm) {
  return guarded([&] { return bcast_impl(buf, count, type, root, comm); });
}

int reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* comm) {
  return guarded([&] { return reduce_impl(sbuf, rbuf, count, type, op, root, comm); });
}

int allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm) {
  return guarded([&] { return allreduce_impl(sbuf, rbuf, count, type, op, comm); });
}

int gather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, int root,
           Comm* comm) {
  return guarded([&] { return gather_impl(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

int allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype,
              Comm* comm) {
  return guarded([&] { return allgather_impl(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

}  // namespace sonde::engine::coll
