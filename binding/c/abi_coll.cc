// C ABI: collectives (blocking and nonblocking) and reduction operations.
// Validates every argument a rank can check on its own (a collective cannot
// tell whether the other ranks passed matching arguments) and hands over to
// engine/coll.h. Each blocking MPI_X and its nonblocking MPI_IX share one
// checking function (x_entry below) and are defined together by
// SONDE_COLL_PAIR.
#include <vector>

#include "binding/c/abi.h"
#include "coll/coll.h"
#include "core/engine.h"
#include "datatype/op.h"
#include "comm/topo.h"

using namespace sonde::engine;

namespace {

// Every collective but Scan/Exscan (and the neighbourhood ones) exists on
// intercommunicators too (coll.h describes their semantics).
Comm* find_coll_comm(MPI_Comm h, bool inter_ok = true) {
  Comm* c = find_comm(h);
  return c && (inter_ok || !c->inter) ? c : nullptr;
}

// A buffer pointer that cannot hold `count` elements of `type`. MPI_BOTTOM
// is null, so only predefined types (which cannot carry absolute addresses)
// are checked.
bool bad_buffer(const void* buf, int64_t count, const Datatype* t) {
  return buf == nullptr && count > 0 && t->size > 0 && t->predefined;
}

// Common checks of a (buffer, count, datatype) triple; MPI_IN_PLACE is not
// a buffer here (callers that accept it test for it first).
int check_data(const void* buf, int64_t count, MPI_Datatype type, Datatype** t) {
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, count, *t)) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

// A count array (int or MPI_Count) with its displacements (int or
// MPI_Aint): both present, no negative count; copied for the engine.
template <class C, class D>
int check_counts(const C* counts, const D* displs, int n, coll::Counts* out_counts, coll::Counts* out_displs) {
  if (n > 0 && (!counts || !displs)) return MPI_ERR_ARG;  // a rank without neighbours may pass none
  out_counts->resize(static_cast<size_t>(n));
  out_displs->resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return MPI_ERR_COUNT;
    (*out_counts)[i] = static_cast<int64_t>(counts[i]);
    (*out_displs)[i] = static_cast<int64_t>(displs[i]);
  }
  return MPI_SUCCESS;
}

int64_t total_of(const coll::Counts& counts) {
  int64_t t = 0;
  for (int64_t c : counts) t += c;
  return t;
}

// The (buffer, counts, displacements, datatype) of a v-collective. Only the
// buffer's null-ness is checked against the counts (per-peer extents are
// the user's to get right).
template <class C, class D>
int check_vdata(const void* buf, const C* counts, const D* displs, MPI_Datatype type, int n, Datatype** t,
                coll::Counts* out_counts, coll::Counts* out_displs) {
  int rc = check_counts(counts, displs, n, out_counts, out_displs);
  if (rc) return rc;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, total_of(*out_counts), *t)) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

// The reduction op for a collective. MPI_REPLACE and MPI_NO_OP exist for
// one-sided accumulates only, and an op undefined on the datatype is an op
// error (both as MPICH and Open MPI answer).
int check_op(MPI_Op op, const Datatype& t) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_ERR_OP;
  return op_check(op, t) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
}

// Intercommunicators: MPI_ROOT, MPI_PROC_NULL or a remote rank.
int check_root(int root, const Comm* c) {
  if (c->inter) return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->peers()) ? MPI_SUCCESS
                                                                                                      : MPI_ERR_ROOT;
  return root < 0 || root >= c->size ? MPI_ERR_ROOT : MPI_SUCCESS;
}

// What this rank does in a rooted collective.
enum class Part { kRoot, kOther, kIdle };  // kIdle: MPI_PROC_NULL on an intercommunicator
Part part_of(int root, const Comm* c) {
  if (c->inter) return root == MPI_ROOT ? Part::kRoot : root == MPI_PROC_NULL ? Part::kIdle : Part::kOther;
  return c->rank == root ? Part::kRoot : Part::kOther;
}

// Send and receive buffers of one call may only coincide through MPI_IN_PLACE.
bool aliased(const void* sbuf, const void* rbuf, int64_t bytes) {
  return sbuf == rbuf && sbuf != MPI_IN_PLACE && sbuf != nullptr && bytes > 0;
}

#define SONDE_COMM_OR_RAISE(c, comm)                  \
  Comm* c = find_coll_comm(comm);                     \
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn)

int barrier_entry(MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  return finish(c, coll::barrier(c, request), fn);
}

int bcast_entry(void* buffer, int64_t count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request,
                const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* t = nullptr;
  int rc = check_root(root, c);
  if (!rc && part_of(root, c) != Part::kIdle) rc = check_data(buffer, count, datatype, &t);
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::bcast(buffer, count, t, root, c, request), fn);
}

int reduce_entry(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  Datatype* t = nullptr;
  const Part part = rc ? Part::kIdle : part_of(root, c);
  if (!rc && part != Part::kIdle) {
    // The send side: MPI_IN_PLACE only at an intracommunicator's root; an
    // intercommunicator's root sends nothing.
    const bool no_send = part == Part::kRoot && (c->inter || sendbuf == MPI_IN_PLACE);
    rc = check_data(no_send ? nullptr : sendbuf, no_send ? 0 : count, datatype, &t);
    if (!rc && count < 0) rc = MPI_ERR_COUNT;
    if (!rc) rc = check_op(op, *t);
  }
  if (!rc && part == Part::kRoot) {
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, count, t)) rc = MPI_ERR_BUFFER;
    else if (!c->inter && aliased(sendbuf, recvbuf, count * t->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::reduce(sendbuf, recvbuf, count, t, op, root, c, request), fn);
}

// Allreduce, Scan, Exscan: same arguments, sendbuf may be MPI_IN_PLACE
// (not on an intercommunicator).
int check_allreduce(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op, bool inter,
                    Datatype** t) {
  int rc = check_data(recvbuf, count, datatype, t);
  if (!rc) rc = check_op(op, **t);
  if (!rc && (sendbuf != MPI_IN_PLACE || inter)) {
    if (sendbuf == MPI_IN_PLACE || bad_buffer(sendbuf, count, *t) || aliased(sendbuf, recvbuf, count * (*t)->size))
      rc = MPI_ERR_BUFFER;
  }
  return rc;
}

enum class Prefix { kNone, kInclusive, kExclusive };

int allreduce_entry(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, Prefix prefix, MPI_Request* request, const char* fn) {
  Comm* c = find_coll_comm(comm, prefix == Prefix::kNone);  // no Scan/Exscan on intercommunicators
  if (!c) return raise(find_comm(comm), MPI_ERR_COMM, fn);
  Datatype* t = nullptr;
  int rc = check_allreduce(sendbuf, recvbuf, count, datatype, op, c->inter, &t);
  if (rc) return raise(c, rc, fn);
  switch (prefix) {
    case Prefix::kInclusive: rc = coll::scan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kExclusive: rc = coll::exscan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kNone: rc = coll::allreduce(sendbuf, recvbuf, count, t, op, c, request); break;
  }
  return finish(c, rc, fn);
}

// Gather and Gatherv (recvcounts non-null). On an intercommunicator the root
// receives from every remote rank and the other group sends.
template <class C = int, class D = int>
int gather_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf, int64_t recvcount,
                 const C* recvcounts, const D* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, bool vector,
                 MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  const Part part = rc ? Part::kIdle : part_of(root, c);
  const bool in_place = part == Part::kRoot && !c->inter && sendbuf == MPI_IN_PLACE;
  const bool sends = part == Part::kOther || (part == Part::kRoot && !c->inter && !in_place);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts counts, disp;
  if (!rc && sends) rc = check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc && part == Part::kRoot) {
    rc = vector ? check_vdata(recvbuf, recvcounts, displs, recvtype, c->peers(), &rt, &counts, &disp)
                : check_data(recvbuf, recvcount, recvtype, &rt);
    if (!rc && sends && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (vector)
    rc = coll::gatherv(sendbuf, sendcount, st, recvbuf, std::move(counts), std::move(disp), rt, root, c, request);
  else
    rc = coll::gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
  return finish(c, rc, fn);
}

// Scatter and Scatterv (sendcounts non-null): the mirror of gather_entry.
template <class C = int, class D = int>
int scatter_entry(const void* sendbuf, int64_t sendcount, const C* sendcounts, const D* displs, MPI_Datatype sendtype,
                  void* recvbuf, int64_t recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, bool vector,
                  MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  const Part part = rc ? Part::kIdle : part_of(root, c);
  const bool in_place = part == Part::kRoot && !c->inter && recvbuf == MPI_IN_PLACE;
  const bool receives = part == Part::kOther || (part == Part::kRoot && !c->inter && !in_place);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts counts, disp;
  if (!rc && receives) rc = check_data(recvbuf, recvcount, recvtype, &rt);
  if (!rc && part == Part::kRoot) {
    rc = vector ? check_vdata(sendbuf, sendcounts, displs, sendtype, c->peers(), &st, &counts, &disp)
                : check_data(sendbuf, sendcount, sendtype, &st);
    if (!rc && receives && aliased(sendbuf, recvbuf, recvcount * rt->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (vector)
    rc = coll::scatterv(sendbuf, std::move(counts), std::move(disp), st, recvbuf, recvcount, rt, root, c, request);
  else
    rc = coll::scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
  return finish(c, rc, fn);
}

template <class C = int, class D = int>
int allgather_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf, int64_t recvcount,
                    const C* recvcounts, const D* displs, MPI_Datatype recvtype, MPI_Comm comm, bool vector,
                    MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts counts, disp;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) {
    rc = vector ? check_vdata(recvbuf, recvcounts, displs, recvtype, c->peers(), &rt, &counts, &disp)
                : check_data(recvbuf, recvcount, recvtype, &rt);
  }
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  if (vector)
    rc = coll::allgatherv(sendbuf, sendcount, st, recvbuf, std::move(counts), std::move(disp), rt, c, request);
  else
    rc = coll::allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request);
  return finish(c, rc, fn);
}

int alltoall_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf, int64_t recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) rc = check_data(recvbuf, recvcount, recvtype, &rt);
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request), fn);
}

template <class C, class D>
int alltoallv_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, MPI_Datatype sendtype, void* recvbuf,
                    const C* recvcounts, const D* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts sc, sd, rc_, rd;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_vdata(sendbuf, sendcounts, sdispls, sendtype, c->peers(), &st, &sc, &sd);
  if (!rc) rc = check_vdata(recvbuf, recvcounts, rdispls, recvtype, c->peers(), &rt, &rc_, &rd);
  if (!rc && !in_place && aliased(sendbuf, recvbuf, total_of(sc) * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c,
                coll::alltoallv(sendbuf, std::move(sc), std::move(sd), st, recvbuf, std::move(rc_), std::move(rd), rt,
                                c, request),
                fn);
}

// One datatype per peer, all of them checked.
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
    if (bad_buffer(buf, counts[i], out[i])) return MPI_ERR_BUFFER;
  }
  return MPI_SUCCESS;
}

template <class C, class D>
int alltoallw_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, const MPI_Datatype* sendtypes,
                    void* recvbuf, const C* recvcounts, const D* rdispls, const MPI_Datatype* recvtypes,
                    MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  std::vector<Datatype*> st, rt;
  coll::Counts sc, sd, rc_, rd;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_wdata(sendbuf, sendcounts, sdispls, sendtypes, c->peers(), st, &sc, &sd);
  if (!rc) rc = check_wdata(recvbuf, recvcounts, rdispls, recvtypes, c->peers(), rt, &rc_, &rd);
  if (!rc && !in_place && sendbuf == recvbuf && sendbuf) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c,
                coll::alltoallw(sendbuf, std::move(sc), std::move(sd), std::move(st), recvbuf, std::move(rc_),
                                std::move(rd), std::move(rt), c, request),
                fn);
}

// Reduce_scatter (recvcounts non-null) and Reduce_scatter_block. The counts
// are per local rank, on intercommunicators too.
template <class C = int>
int reduce_scatter_entry(const void* sendbuf, void* recvbuf, int64_t recvcount, const C* recvcounts,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, bool block, MPI_Request* request,
                         const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = MPI_SUCCESS;
  coll::Counts counts;
  if (block) {
    if (recvcount < 0) rc = MPI_ERR_COUNT;
  } else if (!recvcounts) {
    rc = MPI_ERR_ARG;
  } else {
    counts.resize(static_cast<size_t>(c->size));
    for (int i = 0; i < c->size && !rc; ++i) {
      if (recvcounts[i] < 0) rc = MPI_ERR_COUNT;
      counts[i] = static_cast<int64_t>(recvcounts[i]);
    }
  }
  const int64_t total = rc ? 0 : block ? recvcount * c->size : total_of(counts);
  const int64_t mine = rc ? 0 : block ? recvcount : counts[c->rank];
  Datatype* t = nullptr;
  if (!rc) {
    t = find_comm_datatype(datatype);
    if (!t) rc = MPI_ERR_TYPE;
  }
  if (!rc) rc = check_op(op, *t);
  if (!rc) {
    const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, in_place ? total : mine, t)) rc = MPI_ERR_BUFFER;
    else if (!in_place && (sendbuf == MPI_IN_PLACE || bad_buffer(sendbuf, total, t) ||
                           aliased(sendbuf, recvbuf, total * t->size)))
      rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (block) rc = coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, t, op, c, request);
  else rc = coll::reduce_scatter(sendbuf, recvbuf, std::move(counts), t, op, c, request);
  return finish(c, rc, fn);
}

// ---- neighbourhood collectives ----

// The communicator of a neighbourhood collective: an intracommunicator
// with a topology. Its in- and out-degree in *in / *out.
int neighbor_comm(Comm* c, int* in, int* out) {
  if (c->inter) return MPI_ERR_COMM;
  if (!c->topo) return MPI_ERR_TOPOLOGY;
  std::vector<int> sources, destinations;
  topo_neighbors(*c->topo, c->rank, &sources, &destinations);
  *in = static_cast<int>(sources.size());
  *out = static_cast<int>(destinations.size());
  return MPI_SUCCESS;
}

// Declares c (or raises MPI_ERR_COMM), its degrees and rc, the result of
// neighbor_comm.
#define SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc) \
  SONDE_COMM_OR_RAISE(c, comm);                         \
  int indeg = 0, outdeg = 0;                            \
  int rc = neighbor_comm(c, &indeg, &outdeg)

uint8_t* byte_at(const void* buf, int64_t offset) {
  return const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)) + offset;
}

// Neighbor_allgather (recvcounts null) and Neighbor_allgatherv.
template <class C = int, class D = int>
int neighbor_allgather_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int64_t recvcount, const C* recvcounts, const D* displs, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts counts, disp;
  if (!rc) rc = check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) {
    rc = recvcounts ? check_vdata(recvbuf, recvcounts, displs, recvtype, indeg, &rt, &counts, &disp)
                    : check_data(recvbuf, recvcount * indeg, recvtype, &rt);
  }
  if (rc) return raise(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg), coll::Block{byte_at(sendbuf, 0), sendcount, st});
  std::vector<coll::Block> in(static_cast<size_t>(indeg));
  for (int i = 0; i < indeg; ++i) {
    in[i] = recvcounts ? coll::Block{byte_at(recvbuf, disp[i] * rt->extent), counts[i], rt}
                       : coll::Block{byte_at(recvbuf, i * recvcount * rt->extent), recvcount, rt};
  }
  return finish(c,
                coll::neighbor(c, recvcounts ? coll::kNeighborAllgatherv : coll::kNeighborAllgather, std::move(out),
                               std::move(in), request),
                fn);
}

int neighbor_alltoall_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int64_t recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
                            const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  if (!rc) rc = check_data(sendbuf, sendcount * outdeg, sendtype, &st);
  if (!rc) rc = check_data(recvbuf, recvcount * indeg, recvtype, &rt);
  if (rc) return raise(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, i * sendcount * st->extent), sendcount, st};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, i * recvcount * rt->extent), recvcount, rt};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoall, std::move(out), std::move(in), request), fn);
}

template <class C, class D>
int neighbor_alltoallv_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, MPI_Datatype sendtype,
                             void* recvbuf, const C* recvcounts, const D* rdispls, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts sc, sd, rc_, rd;
  if (!rc) rc = check_vdata(sendbuf, sendcounts, sdispls, sendtype, outdeg, &st, &sc, &sd);
  if (!rc) rc = check_vdata(recvbuf, recvcounts, rdispls, recvtype, indeg, &rt, &rc_, &rd);
  if (rc) return raise(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, sd[i] * st->extent), sc[i], st};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, rd[i] * rt->extent), rc_[i], rt};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoallv, std::move(out), std::move(in), request), fn);
}

// Byte displacements (MPI_Aint in both forms) and one datatype per neighbour.
template <class C>
int neighbor_alltoallw_entry(const void* sendbuf, const C* sendcounts, const MPI_Aint* sdispls,
                             const MPI_Datatype* sendtypes, void* recvbuf, const C* recvcounts,
                             const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                             MPI_Request* request, const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  std::vector<Datatype*> st, rt;
  coll::Counts sc, sd, rc_, rd;
  if (!rc) rc = check_wdata(sendbuf, sendcounts, sdispls, sendtypes, outdeg, st, &sc, &sd);
  if (!rc) rc = check_wdata(recvbuf, recvcounts, rdispls, recvtypes, indeg, rt, &rc_, &rd);
  if (rc) return raise(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, sd[i]), sc[i], st[i]};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, rd[i]), rc_[i], rt[i]};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoallw, std::move(out), std::move(in), request), fn);
}

// A blocking collective and its nonblocking twin: the same parameters (the
// twin adds the request) and one body, the call to the shared x_entry
// checker, which sees `request` (null in the blocking form).
#define SONDE_UNWRAP(...) __VA_ARGS__
#define SONDE_COLL_PAIR(Name, IName, params, ...)                   \
  int PMPI_##Name params {                                          \
    SONDE_ENTER("MPI_" #Name);                                      \
    MPI_Request* request = nullptr;                                 \
    return __VA_ARGS__;                                             \
  }                                                                 \
  SONDE_WEAK_ALIAS(Name)                                            \
  int PMPI_##IName(SONDE_UNWRAP params, MPI_Request* request) {     \
    SONDE_ENTER("MPI_" #IName);                                     \
    if (!request) return raise(nullptr, MPI_ERR_ARG, fn);           \
    return __VA_ARGS__;                                             \
  }                                                                 \
  SONDE_WEAK_ALIAS(IName)

// Each collective in its int form and its MPI 4 large-count form (_c:
// MPI_Count counts, MPI_Aint displacements), both pairs from one body;
// PARAMS(Cnt, Disp) is a macro giving the parameter list for the count and
// displacement types. The x_entry checkers take int64_t counts and are
// templates over the array types.
#define SONDE_COLL_PAIRS(Name, IName, PARAMS, ...)                     \
  SONDE_COLL_PAIR(Name, IName, PARAMS(int, int), __VA_ARGS__)          \
  SONDE_COLL_PAIR(Name##_c, IName##_c, PARAMS(MPI_Count, MPI_Aint), __VA_ARGS__)

}  // namespace

extern "C" {

SONDE_COLL_PAIR(Barrier, Ibarrier, (MPI_Comm comm), barrier_entry(comm, request, fn))

#define SONDE_P(Cnt, Disp) (void* buffer, Cnt count, MPI_Datatype datatype, int root, MPI_Comm comm)
SONDE_COLL_PAIRS(Bcast, Ibcast, SONDE_P, bcast_entry(buffer, count, datatype, root, comm, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp) \
  (const void* sendbuf, void* recvbuf, Cnt count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
SONDE_COLL_PAIRS(Reduce, Ireduce, SONDE_P,
                 reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp) \
  (const void* sendbuf, void* recvbuf, Cnt count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
SONDE_COLL_PAIRS(Allreduce, Iallreduce, SONDE_P,
                 allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, request, fn))
SONDE_COLL_PAIRS(Scan, Iscan, SONDE_P,
                 allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, request, fn))
SONDE_COLL_PAIRS(Exscan, Iexscan, SONDE_P,
                 allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp) \
  (const void* sendbuf, void* recvbuf, Cnt recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
SONDE_COLL_PAIRS(Reduce_scatter_block, Ireduce_scatter_block, SONDE_P,
                 reduce_scatter_entry<int>(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, request,
                                           fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp) \
  (const void* sendbuf, void* recvbuf, const Cnt recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
SONDE_COLL_PAIRS(Reduce_scatter, Ireduce_scatter, SONDE_P,
                 reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                  \
  (const void* sendbuf, Cnt sendcount, MPI_Datatype sendtype, void* recvbuf, Cnt recvcount, \
   MPI_Datatype recvtype, int root, MPI_Comm comm)
SONDE_COLL_PAIRS(Gather, Igather, SONDE_P,
                 gather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                                        root, comm, false, request, fn))
SONDE_COLL_PAIRS(Scatter, Iscatter, SONDE_P,
                 scatter_entry<int, int>(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype,
                                         root, comm, false, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                           \
  (const void* sendbuf, Cnt sendcount, MPI_Datatype sendtype, void* recvbuf, const Cnt recvcounts[], \
   const Disp displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
SONDE_COLL_PAIRS(Gatherv, Igatherv, SONDE_P,
                 gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm,
                              true, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                                 \
  (const void* sendbuf, const Cnt sendcounts[], const Disp displs[], MPI_Datatype sendtype, void* recvbuf, \
   Cnt recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
SONDE_COLL_PAIRS(Scatterv, Iscatterv, SONDE_P,
                 scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                               true, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                  \
  (const void* sendbuf, Cnt sendcount, MPI_Datatype sendtype, void* recvbuf, Cnt recvcount, \
   MPI_Datatype recvtype, MPI_Comm comm)
SONDE_COLL_PAIRS(Allgather, Iallgather, SONDE_P,
                 allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                           recvtype, comm, false, request, fn))
SONDE_COLL_PAIRS(Alltoall, Ialltoall, SONDE_P,
                 alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn))
SONDE_COLL_PAIRS(Neighbor_allgather, Ineighbor_allgather, SONDE_P,
                 neighbor_allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr,
                                                    nullptr, recvtype, comm, request, fn))
SONDE_COLL_PAIRS(Neighbor_alltoall, Ineighbor_alltoall, SONDE_P,
                 neighbor_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                                         fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                           \
  (const void* sendbuf, Cnt sendcount, MPI_Datatype sendtype, void* recvbuf, const Cnt recvcounts[], \
   const Disp displs[], MPI_Datatype recvtype, MPI_Comm comm)
SONDE_COLL_PAIRS(Allgatherv, Iallgatherv, SONDE_P,
                 allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true,
                                 request, fn))
SONDE_COLL_PAIRS(Neighbor_allgatherv, Ineighbor_allgatherv, SONDE_P,
                 neighbor_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                          comm, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                                  \
  (const void* sendbuf, const Cnt sendcounts[], const Disp sdispls[], MPI_Datatype sendtype, void* recvbuf, \
   const Cnt recvcounts[], const Disp rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
SONDE_COLL_PAIRS(Alltoallv, Ialltoallv, SONDE_P,
                 alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                 request, fn))
SONDE_COLL_PAIRS(Neighbor_alltoallv, Ineighbor_alltoallv, SONDE_P,
                 neighbor_alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, request, fn))
#undef SONDE_P

#define SONDE_P(Cnt, Disp)                                                                            \
  (const void* sendbuf, const Cnt sendcounts[], const Disp sdispls[], const MPI_Datatype sendtypes[], \
   void* recvbuf, const Cnt recvcounts[], const Disp rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
SONDE_COLL_PAIRS(Alltoallw, Ialltoallw, SONDE_P,
                 alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                 comm, request, fn))
#undef SONDE_P

// Alltoallw's neighbourhood form has MPI_Aint displacements in both forms.
#define SONDE_P(Cnt, Disp)                                                                                \
  (const void* sendbuf, const Cnt sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], \
   void* recvbuf, const Cnt recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],       \
   MPI_Comm comm)
SONDE_COLL_PAIRS(Neighbor_alltoallw, Ineighbor_alltoallw, SONDE_P,
                 neighbor_alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, request, fn))
#undef SONDE_P

// ---- local reduction and user-defined operations ----------------------------------

}  // extern "C"

namespace {
int reduce_local_entry(const void* inbuf, void* inoutbuf, int64_t count, MPI_Datatype datatype, MPI_Op op,
                       const char* fn) {
  Datatype* t = nullptr;
  int rc = check_data(inbuf, count, datatype, &t);
  if (!rc && (inoutbuf == MPI_IN_PLACE || bad_buffer(inoutbuf, count, t))) rc = MPI_ERR_BUFFER;
  if (!rc) rc = check_op(op, *t);
  if (rc) return raise(nullptr, rc, fn);
  return finish(nullptr, reduce_local(inbuf, inoutbuf, count, *t, op), fn);
}
}  // namespace

extern "C" {

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  SONDE_ENTER("MPI_Reduce_local");
  return reduce_local_entry(inbuf, inoutbuf, count, datatype, op, fn);
}
SONDE_WEAK_ALIAS(Reduce_local)

int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op) {
  SONDE_ENTER("MPI_Reduce_local_c");
  return reduce_local_entry(inbuf, inoutbuf, count, datatype, op, fn);
}
SONDE_WEAK_ALIAS(Reduce_local_c)

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  SONDE_ENTER("MPI_Op_create");
  if (!user_fn || !op) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, op_create(user_fn, commute != 0, op), fn);
}
SONDE_WEAK_ALIAS(Op_create)

int PMPI_Op_free(MPI_Op* op) {
  SONDE_ENTER("MPI_Op_free");
  if (!op) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, op_free(op), fn);
}
SONDE_WEAK_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  SONDE_ENTER("MPI_Op_commutative");
  if (!commute) return raise(nullptr, MPI_ERR_ARG, fn);
  if (!op_valid(op)) return raise(nullptr, MPI_ERR_OP, fn);
  *commute = op_is_commutative(op);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Op_commutative)

}  // extern "C"
