// C ABI: reductions (reduce, allreduce, scan, exscan, reduce_scatter and
// reduce_scatter_block, blocking and nonblocking, int and large-count
// forms), the local reduction and user-defined operations. Validates every
// argument a rank can check on its own (coll_args.h) and hands over to
// coll/coll.h and datatype/op.h. Each blocking MPI_X, its nonblocking MPI_IX
// and their _c forms call one checking function (x_entry below), which sees
// the request (null in the blocking forms); the nonblocking forms refuse a
// null request first.
#include <utility>

#include "binding/c/abi.h"
#include "binding/c/coll_args.h"
#include "coll/coll.h"
#include "datatype/op.h"

using namespace sonde::engine;
using namespace sonde::engine::coll_args;

namespace {

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
  if (rc) return refuse(c, rc, fn);
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

int allreduce_entry(const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    Prefix prefix, MPI_Request* request, const char* fn) {
  Comm* c = find_coll_comm(comm, prefix == Prefix::kNone);  // no Scan/Exscan on intercommunicators
  if (!c) return raise(find_comm(comm), MPI_ERR_COMM, fn);
  Datatype* t = nullptr;
  int rc = check_allreduce(sendbuf, recvbuf, count, datatype, op, c->inter, &t);
  if (rc) return refuse(c, rc, fn);
  switch (prefix) {
    case Prefix::kInclusive: rc = coll::scan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kExclusive: rc = coll::exscan(sendbuf, recvbuf, count, t, op, c, request); break;
    case Prefix::kNone: rc = coll::allreduce(sendbuf, recvbuf, count, t, op, c, request); break;
  }
  return finish(c, rc, fn);
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
  const int64_t total = rc ? 0 : block ? times(recvcount, c->size) : total_of(counts);
  if (!rc && total < 0) rc = MPI_ERR_COUNT;
  const int64_t mine = rc ? 0 : block ? recvcount : counts[c->rank];
  Datatype* t = nullptr;
  if (!rc) {
    t = find_comm_datatype(datatype);
    if (!t) rc = MPI_ERR_TYPE;
  }
  if (!rc) rc = check_op(op, *t);
  if (!rc && !datatype_fits(*t, total)) rc = MPI_ERR_COUNT;
  if (!rc) {
    const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, in_place ? total : mine, t)) rc = MPI_ERR_BUFFER;
    else if (!in_place &&
             (sendbuf == MPI_IN_PLACE || bad_buffer(sendbuf, total, t) || aliased(sendbuf, recvbuf, total * t->size)))
      rc = MPI_ERR_BUFFER;
  }
  if (rc) return refuse(c, rc, fn);
  if (block) rc = coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, t, op, c, request);
  else rc = coll::reduce_scatter(sendbuf, recvbuf, std::move(counts), t, op, c, request);
  return finish(c, rc, fn);
}

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

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce");
  return reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce)

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce)

int PMPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce_c");
  return reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce_c)

int PMPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_entry(sendbuf, recvbuf, count, datatype, op, root, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce_c)

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allreduce");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, nullptr, fn);
}
SONDE_WEAK_ALIAS(Allreduce)

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request) {
  SONDE_ENTER("MPI_Iallreduce");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, request, fn);
}
SONDE_WEAK_ALIAS(Iallreduce)

int PMPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm) {
  SONDE_ENTER("MPI_Allreduce_c");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, nullptr, fn);
}
SONDE_WEAK_ALIAS(Allreduce_c)

int PMPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iallreduce_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kNone, request, fn);
}
SONDE_WEAK_ALIAS(Iallreduce_c)

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scan");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, nullptr, fn);
}
SONDE_WEAK_ALIAS(Scan)

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request) {
  SONDE_ENTER("MPI_Iscan");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, request, fn);
}
SONDE_WEAK_ALIAS(Iscan)

int PMPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scan_c");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, nullptr, fn);
}
SONDE_WEAK_ALIAS(Scan_c)

int PMPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  SONDE_ENTER("MPI_Iscan_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kInclusive, request, fn);
}
SONDE_WEAK_ALIAS(Iscan_c)

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Exscan");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, nullptr, fn);
}
SONDE_WEAK_ALIAS(Exscan)

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  SONDE_ENTER("MPI_Iexscan");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, request, fn);
}
SONDE_WEAK_ALIAS(Iexscan)

int PMPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  SONDE_ENTER("MPI_Exscan_c");
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, nullptr, fn);
}
SONDE_WEAK_ALIAS(Exscan_c)

int PMPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  SONDE_ENTER("MPI_Iexscan_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allreduce_entry(sendbuf, recvbuf, count, datatype, op, comm, Prefix::kExclusive, request, fn);
}
SONDE_WEAK_ALIAS(Iexscan_c)

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce_scatter_block");
  return reduce_scatter_entry<int>(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce_scatter_block)

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce_scatter_block");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_scatter_entry<int>(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce_scatter_block)

int PMPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce_scatter_block_c");
  return reduce_scatter_entry<int>(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce_scatter_block_c)

int PMPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce_scatter_block_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_scatter_entry<int>(sendbuf, recvbuf, recvcount, nullptr, datatype, op, comm, true, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce_scatter_block_c)

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce_scatter");
  return reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce_scatter)

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce_scatter");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce_scatter)

int PMPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce_scatter_c");
  return reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Reduce_scatter_c)

int PMPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ireduce_scatter_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return reduce_scatter_entry(sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Ireduce_scatter_c)

// ---- local reduction and user-defined operations ----

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
