// Argument checks shared by the collective files of the C binding
// (abi_coll.cc, abi_coll_reduce.cc, abi_coll_alltoall.cc,
// abi_coll_neighbor.cc). Each check validates what a rank can check on its
// own (a collective cannot tell whether the other ranks passed matching
// arguments) and returns an MPI error class, MPI_SUCCESS when the arguments
// are acceptable; none raises an error or touches engine state.
#pragma once

#include <cstdint>
#include <vector>

#include "binding/c/abi.h"
#include "coll/coll.h"
#include "datatype/op.h"

namespace sonde::engine::coll_args {

// The communicator of a collective, or null for a bad handle. Every
// collective but Scan/Exscan (and the neighbourhood ones) exists on
// intercommunicators too (coll/coll.h describes their semantics); with
// inter_ok false an intercommunicator gives null.
inline Comm* find_coll_comm(MPI_Comm h, bool inter_ok = true) {
  Comm* c = find_comm(h);
  return c && (inter_ok || !c->inter) ? c : nullptr;
}

// A buffer pointer that cannot hold `count` elements of `type`. MPI_BOTTOM
// is null, so only predefined types (which cannot carry absolute addresses)
// are checked.
inline bool bad_buffer(const void* buf, int64_t count, const Datatype* t) {
  return buf == nullptr && count > 0 && t->size > 0 && t->predefined;
}

// count * times, or -1 when the product does not fit.
inline int64_t times(int64_t count, int64_t n) {
  int64_t out;
  return __builtin_mul_overflow(count, n, &out) ? -1 : out;
}

// Common checks of a (buffer, count, datatype) triple; MPI_IN_PLACE is not
// a buffer here (callers that accept it test for it first). `per` copies of
// the count must fit in MPI_Count bytes (a root's or an all-to-all's buffer
// holds one block per peer). Sets *t to the datatype once it is found.
inline int check_data(const void* buf, int64_t count, MPI_Datatype type, Datatype** t, int64_t per = 1) {
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  const int64_t total = times(count, per);
  if (total < 0) return MPI_ERR_COUNT;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, total, *t)) return MPI_ERR_BUFFER;
  if (!datatype_fits(**t, total)) return MPI_ERR_COUNT;
  return MPI_SUCCESS;
}

// A count array (int or MPI_Count) with its displacements (int or
// MPI_Aint): both present, no negative count; copied for the engine. `span`
// (when given) gets the sum of the counts (-1 when it overflows) and the
// furthest block end, displacement + count elements (-1 when that
// overflows), counting negative displacements as 0.
struct Span {
  int64_t total = 0, furthest = 0;
};
template <class C, class D>
int check_counts(const C* counts, const D* displs, int n, coll::Counts* out_counts, coll::Counts* out_displs,
                 Span* span = nullptr) {
  if (n > 0 && (!counts || !displs)) return MPI_ERR_ARG;  // a rank without neighbours may pass none
  int64_t* oc = out_counts->overwrite(static_cast<size_t>(n));
  int64_t* od = out_displs->overwrite(static_cast<size_t>(n));
  bool negative = false, total_overflows = false, end_overflows = false;
  int64_t total = 0, furthest = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t c = static_cast<int64_t>(counts[i]), d = static_cast<int64_t>(displs[i]);
    oc[i] = c;
    od[i] = d;
    negative |= c < 0;
    int64_t end;
    total_overflows |= __builtin_add_overflow(total, c, &total);
    end_overflows |= __builtin_add_overflow(c, d < 0 ? 0 : d, &end);
    furthest = end > furthest ? end : furthest;
  }
  if (negative) return MPI_ERR_COUNT;
  if (span) *span = {total_overflows ? -1 : total, end_overflows ? -1 : furthest};
  return MPI_SUCCESS;
}

// The sum of counts, or -1 when it does not fit.
inline int64_t total_of(const coll::Counts& counts) {
  int64_t t = 0;
  for (int64_t c : counts)
    if (__builtin_add_overflow(t, c, &t)) return -1;
  return t;
}

// The (buffer, counts, displacements, datatype) of a v-collective. Only the
// buffer's null-ness is checked against the counts (per-peer extents are
// the user's to get right). `total` (when given) gets the sum of the counts.
template <class C, class D>
int check_vdata(const void* buf, const C* counts, const D* displs, MPI_Datatype type, int n, Datatype** t,
                coll::Counts* out_counts, coll::Counts* out_displs, int64_t* total = nullptr) {
  Span span;
  int rc = check_counts(counts, displs, n, out_counts, out_displs, &span);
  if (rc) return rc;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (span.total < 0) return MPI_ERR_COUNT;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, span.total, *t)) return MPI_ERR_BUFFER;
  // datatype_fits grows with the count, so checking the furthest block end
  // checks them all.
  if (span.furthest < 0 || !datatype_fits(**t, span.furthest)) return MPI_ERR_COUNT;
  if (total) *total = span.total;
  return MPI_SUCCESS;
}

// One datatype per peer (the w-collectives), all of them checked; the types
// found go to `out`. Displacements are in bytes, so with MPI_BOTTOM (null)
// they may be absolute addresses: a block is refused only when its own
// start, buffer plus displacement, is null.
template <class C, class D>
int check_wdata(const void* buf, const C* counts, const D* displs, const MPI_Datatype* types, int n,
                std::vector<Datatype*>& out, coll::Counts* out_counts, coll::Counts* out_displs) {
  int rc = check_counts(counts, displs, n, out_counts, out_displs);
  if (rc) return rc;
  if (n > 0 && !types) return MPI_ERR_ARG;
  if (buf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  out.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i] = find_comm_datatype(types[i]);
    if (!out[i]) return MPI_ERR_TYPE;
    if (displs[i] == 0 && bad_buffer(buf, counts[i], out[i])) return MPI_ERR_BUFFER;
    if (!datatype_fits(*out[i], counts[i])) return MPI_ERR_COUNT;
  }
  return MPI_SUCCESS;
}

// The reduction op for a collective. MPI_REPLACE and MPI_NO_OP exist for
// one-sided accumulates only, and an op undefined on the datatype is an op
// error (both as MPICH and Open MPI answer).
inline int check_op(MPI_Op op, const Datatype& t) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_ERR_OP;
  return op_check(op, t) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
}

// The root of a rooted collective: a rank of c, or on an intercommunicator
// MPI_ROOT, MPI_PROC_NULL or a remote rank.
inline int check_root(int root, const Comm* c) {
  if (c->inter)
    return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->peers()) ? MPI_SUCCESS : MPI_ERR_ROOT;
  return root < 0 || root >= c->size ? MPI_ERR_ROOT : MPI_SUCCESS;
}

// What this rank does in a rooted collective (root already checked).
enum class Part { kRoot, kOther, kIdle };  // kIdle: MPI_PROC_NULL on an intercommunicator
inline Part part_of(int root, const Comm* c) {
  if (c->inter) return root == MPI_ROOT ? Part::kRoot : root == MPI_PROC_NULL ? Part::kIdle : Part::kOther;
  return c->rank == root ? Part::kRoot : Part::kOther;
}

// Send and receive buffers of one call may only coincide through MPI_IN_PLACE.
inline bool aliased(const void* sbuf, const void* rbuf, int64_t bytes) {
  return sbuf == rbuf && sbuf != MPI_IN_PLACE && sbuf != nullptr && bytes > 0;
}

// Raises the error of a collective call refused on this rank (rc, from
// the checks above) after taking its sequence number
// (coll::skip_sequence), so the next collective on c still matches the
// other ranks'. `comm`: the handle, when c has not been looked up yet.
inline int refuse(Comm* c, int rc, const char* fn) {
  if (c) coll::skip_sequence(c, fn);
  return raise(c, rc, fn);
}
inline int refuse(MPI_Comm comm, int rc, const char* fn) { return refuse(find_comm(comm), rc, fn); }

}  // namespace sonde::engine::coll_args

// Declares `Comm* c` for the handle `comm` of a collective, or returns
// MPI_ERR_COMM raised with no communicator. Needs `fn`, the calling
// function's MPI name, in scope.
#define SONDE_COMM_OR_RAISE(c, comm)                                           \
  ::sonde::engine::Comm* c = ::sonde::engine::coll_args::find_coll_comm(comm); \
  if (!c) return ::sonde::engine::raise(nullptr, MPI_ERR_COMM, fn)
