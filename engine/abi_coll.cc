// C ABI: collectives (blocking and nonblocking) and reduction operations.
// Validates every argument a rank can check on its own (a collective cannot
// tell whether the other ranks passed matching arguments) and hands over to
// engine/coll.h. Each blocking MPI_X and its nonblocking MPI_IX share one
// checking function (x_entry below) and are defined together by
// SONDE_COLL_PAIR.
#include <vector>

#include "engine/abi.h"
#include "engine/coll.h"
#include "engine/engine.h"
#include "engine/op.h"

using namespace sonde::engine;

namespace {

// Collectives run on intracommunicators only (intercommunicator
// collectives are not implemented: MPI_ERR_COMM).
Comm* find_intracomm(MPI_Comm h) {
  Comm* c = find_comm(h);
  return c && !c->inter ? c : nullptr;
}

// A buffer pointer that cannot hold `count` elements of `type`. MPI_BOTTOM
// is null, so only predefined types (which cannot carry absolute addresses)
// are checked.
bool bad_buffer(const void* buf, int64_t count, const Datatype* t) {
  return buf == nullptr && count > 0 && t->size > 0 && t->predefined;
}

// Common checks of a (buffer, count, datatype) triple; MPI_IN_PLACE is not
// a buffer here (callers that accept it test for it first).
int check_data(const void* buf, int count, MPI_Datatype type, Datatype** t) {
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, count, *t)) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

// A count array: present, no negative entry. Only the buffer's null-ness is
// checked against it (per-peer extents are the user's to get right).
int check_counts(const int* counts, const int* displs, int n) {
  if (!counts || !displs) return MPI_ERR_ARG;
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) return MPI_ERR_COUNT;
  return MPI_SUCCESS;
}

int64_t total_of(const int* counts, int n) {
  int64_t t = 0;
  for (int i = 0; i < n; ++i) t += counts[i];
  return t;
}

// The (buffer, counts, displacements, datatype) of a v-collective.
int check_vdata(const void* buf, const int* counts, const int* displs, MPI_Datatype type, int n, Datatype** t) {
  int rc = check_counts(counts, displs, n);
  if (rc) return rc;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, total_of(counts, n), *t)) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

// The reduction op for a collective. MPI_REPLACE and MPI_NO_OP exist for
// one-sided accumulates only, and an op undefined on the datatype is an op
// error (both as MPICH and Open MPI answer).
int check_op(MPI_Op op, const Datatype& t) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_ERR_OP;
  return op_check(op, t) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
}

int check_root(int root, const Comm* c) { return root < 0 || root >= c->size ? MPI_ERR_ROOT : MPI_SUCCESS; }

// Send and receive buffers of one call may only coincide through MPI_IN_PLACE.
bool aliased(const void* sbuf, const void* rbuf, int64_t bytes) {
  return sbuf == rbuf && sbuf != MPI_IN_PLACE && sbuf != nullptr && bytes > 0;
}

#define SONDE_COMM_OR_RAISE(c, comm)                  \
  Comm* c = find_intracomm(comm);                     \
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn)

int barrier_entry(MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  return finish(c, coll::barrier(c, request), fn);
}

int bcast_entry(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request,
                const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* t;
  int rc = check_data(buffer, count, datatype, &t);
  if (!rc) rc = check_root(root, c);
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::bcast(buffer, count, t, root, c, request), fn);
}

int reduce_entry(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  Datatype* t = nullptr;
  if (!rc) {
    // The send side: MPI_IN_PLACE only at the root.
    const bool in_place = sendbuf == MPI_IN_PLACE && c->rank == root;
    rc = check_data(in_place ? nullptr : sendbuf, in_place ? 0 : count, datatype, &t);
    if (!rc && count < 0) rc = MPI_ERR_COUNT;
  }
  if (!rc) rc = check_op(op, *t);
  if (!rc && c->rank == root) {
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, count, t)) rc = MPI_ERR_BUFFER;
    else if (aliased(sendbuf, recvbuf, count * t->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::reduce(sendbuf, recvbuf, count, t, op, root, c, request), fn);
}

// Allreduce, Scan, Exscan: same arguments, sendbuf may be MPI_IN_PLACE.
int check_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Datatype** t) {
  int rc = check_data(recvbuf, count, datatype, t);
  if (!rc) rc = check_op(op, **t);
  if (!rc && sendbuf != MPI_IN_PLACE) {
    if (bad_buffer(sendbuf, count, *t) || aliased(sendbuf, recvbuf, count * (*t)->size)) rc = MPI_ERR_BUFFER;
  }
  return rc;
}

enum class Prefix { kNone, kInclusive, kExclusive };

int allreduce_entry(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    Prefix prefix, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* t = nullptr;
  int rc = check_allreduce(sendbuf, recvbuf, count, datatype, op, &t);
  if (rc) return raise(c, rc, fn);
  switch (prefix) {
    case Prefix::kInclusive: rc = coll::scan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kExclusive: rc = coll::exscan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kNone: rc = coll::allreduce(sendbuf, recvbuf, count, t, op, c, request); break;
  }
  return finish(c, rc, fn);
}

int gather_entry(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 bool vector, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  const bool is_root = !rc && c->rank == root;
  const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  if (!rc && !in_place) rc = check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc && is_root) {
    rc = vector ? check_vdata(recvbuf, recvcounts, displs, recvtype, c->size, &rt)
                : check_data(recvbuf, recvcount, recvtype, &rt);
    if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (vector) rc = coll::gatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, root, c, request);
  else rc = coll::gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
  return finish(c, rc, fn);
}

int scatter_entry(const void* sendbuf, int sendcount, const int* sendcounts, const int* displs,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, bool vector, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = check_root(root, c);
  const bool is_root = !rc && c->rank == root;
  const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  if (!rc && !in_place) rc = check_data(recvbuf, recvcount, recvtype, &rt);
  if (!rc && is_root) {
    rc = vector ? check_vdata(sendbuf, sendcounts, displs, sendtype, c->size, &st)
                : check_data(sendbuf, sendcount, sendtype, &st);
    if (!rc && !in_place && aliased(sendbuf, recvbuf, recvcount * rt->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (vector) rc = coll::scatterv(sendbuf, sendcounts, displs, st, recvbuf, recvcount, rt, root, c, request);
  else rc = coll::scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
  return finish(c, rc, fn);
}

int allgather_entry(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm, bool vector,
                    MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) {
    rc = vector ? check_vdata(recvbuf, recvcounts, displs, recvtype, c->size, &rt)
                : check_data(recvbuf, recvcount, recvtype, &rt);
  }
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  if (vector) rc = coll::allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, c, request);
  else rc = coll::allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request);
  return finish(c, rc, fn);
}

int alltoall_entry(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) rc = check_data(recvbuf, recvcount, recvtype, &rt);
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request), fn);
}

int alltoallv_entry(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                    void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = in_place ? MPI_SUCCESS : check_vdata(sendbuf, sendcounts, sdispls, sendtype, c->size, &st);
  if (!rc) rc = check_vdata(recvbuf, recvcounts, rdispls, recvtype, c->size, &rt);
  if (!rc && !in_place && aliased(sendbuf, recvbuf, total_of(sendcounts, c->size) * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, c, request),
                fn);
}

// One datatype per peer, all of them checked.
int check_wdata(const void* buf, const int* counts, const int* displs, const MPI_Datatype* types, int n,
                std::vector<Datatype*>& out) {
  int rc = check_counts(counts, displs, n);
  if (rc) return rc;
  if (!types) return MPI_ERR_ARG;
  if (buf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  out.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i] = find_comm_datatype(types[i]);
    if (!out[i]) return MPI_ERR_TYPE;
    if (bad_buffer(buf, counts[i], out[i])) return MPI_ERR_BUFFER;
  }
  return MPI_SUCCESS;
}

int alltoallw_entry(const void* sendbuf, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
                    void* recvbuf, const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                    MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  std::vector<Datatype*> st, rt;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = in_place ? MPI_SUCCESS : check_wdata(sendbuf, sendcounts, sdispls, sendtypes, c->size, st);
  if (!rc) rc = check_wdata(recvbuf, recvcounts, rdispls, recvtypes, c->size, rt);
  if (!rc && !in_place && sendbuf == recvbuf && sendbuf) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  // The type arrays are read before coll::alltoallw returns.
  return finish(c,
                coll::alltoallw(sendbuf, sendcounts, sdispls, in_place ? nullptr : st.data(), recvbuf, recvcounts,
                                rdispls, rt.data(), c, request),
                fn);
}

int reduce_scatter_entry(const void* sendbuf, void* recvbuf, int recvcount, const int* recvcounts,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, bool block, MPI_Request* request,
                         const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  int rc = MPI_SUCCESS;
  if (block) {
    if (recvcount < 0) rc = MPI_ERR_COUNT;
  } else if (!recvcounts) {
    rc = MPI_ERR_ARG;
  } else {
    for (int i = 0; i < c->size && !rc; ++i)
      if (recvcounts[i] < 0) rc = MPI_ERR_COUNT;
  }
  const int64_t total = rc ? 0 : block ? int64_t(recvcount) * c->size : total_of(recvcounts, c->size);
  const int64_t mine = rc ? 0 : block ? recvcount : recvcounts[c->rank];
  Datatype* t = nullptr;
  if (!rc) {
    t = find_comm_datatype(datatype);
    if (!t) rc = MPI_ERR_TYPE;
  }
  if (!rc) rc = check_op(op, *t);
  if (!rc) {
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, in_place ? total : mine, t)) rc = MPI_ERR_BUFFER;
    else if (!in_place && (bad_buffer(sendbuf, total, t) || aliased(sendbuf, recvbuf, total * t->size)))
      rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  if (block) rc = coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, t, op, c, request);
  else rc = coll::reduce_scatter(sendbuf, recvbuf, recvcounts, t, op, c, request);
  return finish(c, rc, fn);
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

}  // namespace

extern "C" {

SONDE_COLL_PAIR(Barrier, Ibarrier, (MPI_Comm comm), barrier_entry(comm, request, fn))

SONDE_COLL_PAIR(Bcast, Ibcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
                bcast_entry(buffer, count, datatype, root, comm, request, fn))

SONDE_COLL_PAIR(Reduce, Ireduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm),
                reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn))

SONDE_COLL_PAIR(Allreduce, Iallreduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, request, fn))

SONDE_COLL_PAIR(Scan, Iscan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, request, fn))

SONDE_COLL_PAIR(Exscan, Iexscan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, request, fn))

SONDE_COLL_PAIR(Reduce_scatter_block, Ireduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                reduce_scatter_entry(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, request, fn))

SONDE_COLL_PAIR(Reduce_scatter, Ireduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm),
                reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, request, fn))

SONDE_COLL_PAIR(Gather, Igather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm),
                gather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root, comm,
                             false, request, fn))

SONDE_COLL_PAIR(Gatherv, Igatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
                gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm, true,
                             request, fn))

SONDE_COLL_PAIR(Scatter, Iscatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm),
                scatter_entry(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, false, request, fn))

SONDE_COLL_PAIR(Scatterv, Iscatterv,
                (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                              true, request, fn))

SONDE_COLL_PAIR(Allgather, Iallgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm),
                allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                                false, request, fn))

SONDE_COLL_PAIR(Allgatherv, Iallgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
                allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true,
                                request, fn))

SONDE_COLL_PAIR(Alltoall, Ialltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm),
                alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn))

SONDE_COLL_PAIR(Alltoallv, Ialltoallv,
                (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
                alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                request, fn))

SONDE_COLL_PAIR(Alltoallw, Ialltoallw,
                (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm),
                alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                comm, request, fn))

// ---- local reduction and user-defined operations ----------------------------------

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  SONDE_ENTER("MPI_Reduce_local");
  Datatype* t = nullptr;
  int rc = check_data(inbuf, count, datatype, &t);
  if (!rc && (inoutbuf == MPI_IN_PLACE || bad_buffer(inoutbuf, count, t))) rc = MPI_ERR_BUFFER;
  if (!rc) rc = check_op(op, *t);
  if (rc) return raise(nullptr, rc, fn);
  return finish(nullptr, reduce_local(inbuf, inoutbuf, count, *t, op), fn);
}
SONDE_WEAK_ALIAS(Reduce_local)

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
