// Reduce, Allreduce, Reduce_scatter(_block), Scan and Exscan, on intra- and
// intercommunicators (coll.h has the contract, coll_internal.h what the
// collective files share).
#include "coll/coll.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "coll/coll_internal.h"
#include "coll/coll_schedule.h"
#include "coll/shared.h"
#include "datatype/op.h"

namespace sonde::engine::coll {
using namespace detail;

namespace {

inline int pof2_below(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
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

// The commutative tree, blocking, as plain code (run_now): what MPI_Reduce
// runs with a commutative op below the large-vector switch. Same tree and
// messages as reduce_tree. The root (input not in place) receives its first
// child's partial straight into rbuf and folds its input into it (input op
// partial, the same combination as the other way round for a commutative
// op): no copy of the input, no scratch.
int reduce_tree_now(Schedule& s, const void* input, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  const int p = s.p, r = s.r;
  if (p == 1) return copy(input, count, type, rbuf, count, type);
  const int lrank = (r - root + p) % p, low = binomial_low(lrank, p);
  TypedScratch acc_store, tmp_store;
  const void* acc = input;
  if (low > 1 && lrank + 1 < p) {
    void* acc_w;
    int m = 1;
    if (r == root && input != rbuf) {
      // The root's partials accumulate where its result belongs.
      acc_w = rbuf;
      s.recv(acc_w, count, type, (lrank + 1 + root) % p);
      if (const int rc = s.wait_round(); rc != MPI_SUCCESS) return rc;
      if (const int rc = reduce_local(input, acc_w, count, *type, op); rc != MPI_SUCCESS) return rc;
      m = 2;
    } else {
      acc_w = r == root ? rbuf : acc_store.allocate(count, type);
      if (const int rc = copy(input, count, type, acc_w, count, type); rc != MPI_SUCCESS) return rc;
    }
    void* tmp = nullptr;
    for (; m < low && lrank + m < p; m <<= 1) {
      if (!tmp) tmp = tmp_store.allocate(count, type);
      s.recv(tmp, count, type, (lrank + m + root) % p);
      if (const int rc = s.wait_round(); rc != MPI_SUCCESS) return rc;
      if (const int rc = reduce_local(tmp, acc_w, count, *type, op); rc != MPI_SUCCESS) return rc;
    }
    acc = acc_w;
  }
  if (lrank == 0) return MPI_SUCCESS;  // the root: its result is in rbuf
  s.send(acc, count, type, (lrank - low + root) % p);
  return s.wait_round();
}

// ---- allreduce ---------------------------------------------------------------

// Real rank of a rank in the power-of-two group left after folding: the
// first `rem` of them are the odd ranks below 2*rem.
inline int unfolded(int newrank, int rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

// Recursive doubling among pof2 ranks: log2 pof2 exchanges of the whole
// vector. The group a rank has combined is always a contiguous newrank
// range, so ordering for non-commutative ops is kept by putting the lower
// range first. Leaves the result in *acc (which may end up being *tmp).
Task allreduce_doubling(Schedule& s, void** acc, void** tmp, int64_t count, Datatype* type, MPI_Op op, bool commutative,
                        int newrank, int pof2, int rem) {
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
//
// `input`, when not null, is this rank's vector and acc holds nothing yet:
// the first step then receives the partner's half straight into acc and
// folds the input's half into it (mine op partner's: commutative), so the
// input is never copied whole.
Task allreduce_halving(Schedule& s, const void* input, void* acc, void* tmp, int64_t count, Datatype* type, MPI_Op op,
                       int newrank, int pof2, int rem, bool gather_only) {
  // Block i of pof2: elements [first(i), first(i+1)); the first count%pof2 blocks get one extra.
  const int64_t q = count / pof2, extra = count % pof2;
  auto first = [q, extra](int64_t i) { return i * q + std::min(i, extra); };
  struct Range {
    int lo, hi;
  };
  std::vector<Range> before;  // block range held before each halving step
  int lo = 0, hi = pof2;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int partner = newrank ^ mask;
    const int mid = (lo + hi) / 2;
    const Range keep = newrank < partner ? Range{lo, mid} : Range{mid, hi};
    const Range give = newrank < partner ? Range{mid, hi} : Range{lo, mid};
    const int64_t keep_n = first(keep.hi) - first(keep.lo), give_n = first(give.hi) - first(give.lo);
    // The partner's half lands in tmp and folds into acc, or (first step
    // with the input) lands in acc and the input's half folds into it.
    const void* mine = input ? input : acc;
    void* theirs = input ? acc : tmp;
    s.recv(at(theirs, first(keep.lo), type), keep_n, type, unfolded(partner, rem));
    s.send(at(mine, first(give.lo), type), give_n, type, unfolded(partner, rem));
    SONDE_CO_TRY(co_await s.round());
    const void* folded = input ? input : tmp;
    SONDE_CO_TRY(reduce_local(at(folded, first(keep.lo), type), at(acc, first(keep.lo), type), keep_n, *type, op));
    input = nullptr;
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
// *input, when not null, is this rank's vector and acc holds nothing yet
// (commutative ops only): an even rank sends the input, an odd one receives
// straight into acc and folds the input in, and both then set *input to
// null (acc is what holds the data, or the rank is out).
Task fold(Schedule& s, const void** input, void* acc, void* tmp, int64_t count, Datatype* type, MPI_Op op, int rem,
          int* newrank) {
  const int r = s.r;
  if (r >= 2 * rem) {
    *newrank = r - rem;
    co_return MPI_SUCCESS;
  }
  const void* mine = *input;
  *input = nullptr;
  if (r % 2 == 0) {
    *newrank = -1;
    s.send(mine ? mine : acc, count, type, r + 1);
    co_return co_await s.round();
  }
  *newrank = r / 2;
  s.recv(mine ? acc : tmp, count, type, r - 1);
  SONDE_CO_TRY(co_await s.round());
  if (mine) co_return reduce_local(mine, acc, count, *type, op);
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
  int newrank = -1;
  SONDE_CO_TRY(co_await fold(s, &input, acc, tmp, count, type, op, rem, &newrank));
  if (newrank >= 0)
    SONDE_CO_TRY(co_await allreduce_halving(s, input, acc, tmp, count, type, op, newrank, pof2, rem, true));
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
  const bool commutative = op_is_commutative(op);
  const int pof2 = pof2_below(p);
  const int rem = p - pof2;
  const bool empty = count == 0 || type->size == 0;
  const bool halving = p > 1 && !empty && commutative && count >= pof2 && count * type->size >= kAllreduceLarge;
  // Halving reads the input where it is (fold and its first step write
  // rbuf); otherwise the result builds up in rbuf from a copy of it.
  const void* input = sbuf == MPI_IN_PLACE ? nullptr : sbuf;
  if (input && !halving) {
    SONDE_CO_TRY(copy(input, count, type, rbuf, count, type));
    input = nullptr;
  }
  if (p == 1 || empty) co_return MPI_SUCCESS;

  TypedScratch tmp_store;
  void* acc = rbuf;
  void* tmp = tmp_store.allocate(count, type);
  int newrank = -1;
  SONDE_CO_TRY(co_await fold(s, &input, acc, tmp, count, type, op, rem, &newrank));

  if (newrank >= 0) {
    if (halving) {
      SONDE_CO_TRY(co_await allreduce_halving(s, input, acc, tmp, count, type, op, newrank, pof2, rem, false));
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

// Rabenseifner's reduce: commutative ops on large vectors, on at least
// split_min_ranks() ranks.
bool reduce_by_halving(int64_t count, const Datatype* type, MPI_Op op, int p) {
  return p >= split_min_ranks() && op_is_commutative(op) && count >= pof2_below(p) &&
         count * type->size >= kReduceLarge;
}

// A plain function choosing the algorithm's Task (one coroutine frame per
// call, not two).
Task reduce_task(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root) {
  if (count == 0 || type->size == 0) return finished(MPI_SUCCESS);
  const void* input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  if (reduce_by_halving(count, type, op, s.p)) return reduce_halving(s, input, rbuf, count, type, op, root);
  return reduce_tree(s, input, rbuf, count, type, op, root);
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

// out = in op src, for a contiguous type in one pass; out overlaps neither.
int combined(const void* in, const void* src, void* out, int64_t count, Datatype* type, MPI_Op op) {
  if (type->contiguous) return reduce_local_into(in, src, out, count, *type, op);
  if (const int rc = copy(src, count, type, out, count, type); rc != MPI_SUCCESS) return rc;
  return reduce_local(in, out, count, *type, op);
}

// Prefix doubling: in the round with distance d = 1, 2, 4, ... rank r
// sends its running reduction to r + d and receives r - d's, which covers
// the d ranks just below the ones r's already covers; after the round r's
// covers ranks max(0, r - 2d + 1)..r. Messages only go up, so rank 0 of
// two sends once and is done, and the received data always comes first
// (non-commutative operations combine in rank order).
// Scan keeps the running reduction in rbuf, which ends as the result.
// Exscan keeps in rbuf the reduction without r's own input (what r - 1's
// message first brings) and, while r still has rounds to send in, the one
// with it in `partial`.
Task scan_task(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, bool exclusive) {
  const int p = s.p, r = s.r;
  if (count == 0 || type->size == 0) co_return MPI_SUCCESS;
  const bool in_place = sbuf == MPI_IN_PLACE;
  TypedScratch own_store, partial_store, tmp_store;
  const void* input = sbuf;
  if (in_place && exclusive && p > 1) {
    // rbuf receives r - 1's data while the input is still to be sent.
    void* own = own_store.allocate(count, type);
    SONDE_CO_TRY(copy(rbuf, count, type, own, count, type));
    input = own;
  } else if (in_place) {
    input = rbuf;
  }
  // Scan: rbuf holds the running reduction (else it is still `input`).
  bool have = in_place && !exclusive;
  const void* running = input;  // what this rank sends in the next round
  void* partial = nullptr;
  void* tmp = nullptr;
  for (int d = 1; d < p; d <<= 1) {
    const bool from = r >= d, to = r + d < p;
    if (!from && !to) break;  // no round left sends to or from this rank
    void* in = nullptr;
    if (from) {
      if (exclusive && d == 1) {
        in = rbuf;
      } else {
        if (!tmp) tmp = tmp_store.allocate(count, type);
        in = tmp;
      }
      s.recv(in, count, type, r - d);
    }
    if (to) s.send(running, count, type, r + d);
    SONDE_CO_TRY(co_await s.round());
    if (!from) continue;
    const bool sends_later = r + 2 * d < p;
    if (!exclusive) {
      if (have) {
        SONDE_CO_TRY(reduce_local(in, rbuf, count, *type, op));
      } else {
        SONDE_CO_TRY(combined(in, input, rbuf, count, type, op));
        have = true;
      }
      running = rbuf;
    } else if (d == 1) {
      if (sends_later) {
        partial = partial_store.allocate(count, type);
        SONDE_CO_TRY(combined(rbuf, input, partial, count, type, op));
        running = partial;
      }
    } else {
      SONDE_CO_TRY(reduce_local(in, rbuf, count, *type, op));
      if (sends_later) SONDE_CO_TRY(reduce_local(in, partial, count, *type, op));
    }
  }
  if (!exclusive && !have) co_return copy(input, count, type, rbuf, count, type);
  co_return MPI_SUCCESS;
}

// ---- intercommunicators (see coll_internal.h) --------------------------------------

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

// Each group reduces to its leader, the leaders swap, each broadcasts the
// other group's result locally.
Task inter_allreduce(Schedule& s, const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op) {
  TypedScratch store;
  void* acc = nullptr;
  SONDE_CO_TRY(co_await reduce_to_leader(s, sbuf, store, &acc, count, type, op));
  co_return co_await swap_and_broadcast(s, acc, count, type, rbuf, count, type);
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

}  // namespace

// ---- entry points ----------------------------------------------------------------

int reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* comm,
           MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::reduce(sbuf, rbuf, count, type, op, root, comm, &rc)) return rc;
  if (comm->inter)
    return launch(comm, kReduce, request,
                  [=](Schedule& s) { return inter_reduce(s, sbuf, rbuf, count, type, op, root); }, op, {type});
  if (!request && op_is_commutative(op) && !reduce_by_halving(count, type, op, comm->size)) {
    return run_now(comm, kReduce, [=](Schedule& s) {
      if (count == 0 || type->size == 0) return MPI_SUCCESS;
      return reduce_tree_now(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, type, op, root);
    });
  }
  return launch(comm, kReduce, request, [=](Schedule& s) { return reduce_task(s, sbuf, rbuf, count, type, op, root); },
                op, {type});
}

int allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm,
              MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::allreduce(sbuf, rbuf, count, type, op, comm, &rc)) return rc;
  if (comm->inter)
    return launch(comm, kAllreduce, request,
                  [=](Schedule& s) { return inter_allreduce(s, sbuf, rbuf, count, type, op); }, op, {type});
  return launch(comm, kAllreduce, request, [=](Schedule& s) { return allreduce_task(s, sbuf, rbuf, count, type, op); },
                op, {type});
}

int reduce_scatter_block(const void* sbuf, void* rbuf, int64_t rcount, Datatype* type, MPI_Op op, Comm* comm,
                         MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::reduce_scatter(sbuf, rbuf, nullptr, rcount, type, op, comm, &rc))
    return rc;
  if (comm->inter)
    return launch(comm, kReduceScatterBlock, request,
                  [=](Schedule& s) {
                    return inter_reduce_scatter(s, sbuf, rbuf, Counts(static_cast<size_t>(s.local->size), rcount), type,
                                                op);
                  },
                  op, {type});
  return launch(comm, kReduceScatterBlock, request,
                [=](Schedule& s) { return reduce_scatter_block_task(s, sbuf, rbuf, rcount, type, op); }, op, {type});
}

int reduce_scatter(const void* sbuf, void* rbuf, Counts rcounts, Datatype* type, MPI_Op op, Comm* comm,
                   MPI_Request* request) {
  if (int rc; !request && !comm->inter && shared::reduce_scatter(sbuf, rbuf, rcounts.data(), 0, type, op, comm, &rc))
    return rc;
  auto task = comm->inter ? inter_reduce_scatter : reduce_scatter_task;
  return launch(comm, kReduceScatter, request,
                [&](Schedule& s) { return task(s, sbuf, rbuf, std::move(rcounts), type, op); }, op, {type});
}

int scan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm, MPI_Request* request) {
  if (int rc; !request && shared::scan(sbuf, rbuf, count, type, op, false, comm, &rc)) return rc;
  return launch(comm, kScan, request, [=](Schedule& s) { return scan_task(s, sbuf, rbuf, count, type, op, false); }, op,
                {type});
}

int exscan(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* comm, MPI_Request* request) {
  if (int rc; !request && shared::scan(sbuf, rbuf, count, type, op, true, comm, &rc)) return rc;
  return launch(comm, kExscan, request, [=](Schedule& s) { return scan_task(s, sbuf, rbuf, count, type, op, true); },
                op, {type});
}

}  // namespace sonde::engine::coll
