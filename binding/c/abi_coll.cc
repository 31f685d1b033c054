// C ABI: barrier, broadcast, gather, scatter and allgather (blocking and
// nonblocking, int and large-count forms). Validates every argument a rank
// can check on its own (coll_args.h) and hands over to coll/coll.h. Each
// blocking MPI_X, its nonblocking MPI_IX and their _c forms call one
// checking function (x_entry below), which sees the request (null in the
// blocking forms); the nonblocking forms refuse a null request first.
// Reductions: abi_coll_reduce.cc; all-to-all: abi_coll_alltoall.cc;
// neighbourhood collectives: abi_coll_neighbor.cc.
#include <utility>

#include "binding/c/abi.h"
#include "binding/c/coll_args.h"
#include "coll/coll.h"

using namespace sonde::engine;
using namespace sonde::engine::coll_args;

namespace {

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
  if (rc) return refuse(c, rc, fn);
  return finish(c, coll::bcast(buffer, count, t, root, c, request), fn);
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
                : check_data(recvbuf, recvcount, recvtype, &rt, c->peers());
    if (!rc && sends && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return refuse(c, rc, fn);
  if (vector)
    rc = coll::gatherv(sendbuf, sendcount, st, recvbuf, std::move(counts), std::move(disp), rt, root, c, request);
  else rc = coll::gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
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
                : check_data(sendbuf, sendcount, sendtype, &st, c->peers());
    if (!rc && receives && aliased(sendbuf, recvbuf, recvcount * rt->size)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return refuse(c, rc, fn);
  if (vector)
    rc = coll::scatterv(sendbuf, std::move(counts), std::move(disp), st, recvbuf, recvcount, rt, root, c, request);
  else rc = coll::scatter(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c, request);
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
                : check_data(recvbuf, recvcount, recvtype, &rt, c->peers());
  }
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return refuse(c, rc, fn);
  if (vector)
    rc = coll::allgatherv(sendbuf, sendcount, st, recvbuf, std::move(counts), std::move(disp), rt, c, request);
  else rc = coll::allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request);
  return finish(c, rc, fn);
}

}  // namespace

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  SONDE_ENTER("MPI_Barrier");
  return barrier_entry(comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Barrier)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ibarrier");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return barrier_entry(comm, request, fn);
}
SONDE_WEAK_ALIAS(Ibarrier)

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Bcast");
  return bcast_entry(buffer, count, datatype, root, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Bcast)

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ibcast");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return bcast_entry(buffer, count, datatype, root, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ibcast)

int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Bcast_c");
  return bcast_entry(buffer, count, datatype, root, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Bcast_c)

int PMPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ibcast_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return bcast_entry(buffer, count, datatype, root, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ibcast_c)

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Gather");
  return gather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root,
                                comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Gather)

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Igather");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return gather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root,
                                comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Igather)

int PMPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Gather_c");
  return gather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root,
                                comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Gather_c)

int PMPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Igather_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return gather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root,
                                comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Igather_c)

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Gatherv");
  return gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm, true, nullptr,
                      fn);
}
SONDE_WEAK_ALIAS(Gatherv)

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Igatherv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm, true, request,
                      fn);
}
SONDE_WEAK_ALIAS(Igatherv)

int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm) {
  SONDE_ENTER("MPI_Gatherv_c");
  return gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm, true, nullptr,
                      fn);
}
SONDE_WEAK_ALIAS(Gatherv_c)

int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Igatherv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return gather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm, true, request,
                      fn);
}
SONDE_WEAK_ALIAS(Igatherv_c)

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scatter");
  return scatter_entry<int, int>(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Scatter)

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iscatter");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return scatter_entry<int, int>(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Iscatter)

int PMPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scatter_c");
  return scatter_entry<int, int>(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Scatter_c)

int PMPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iscatter_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return scatter_entry<int, int>(sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, false, request, fn);
}
SONDE_WEAK_ALIAS(Iscatter_c)

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scatterv");
  return scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, true,
                       nullptr, fn);
}
SONDE_WEAK_ALIAS(Scatterv)

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iscatterv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, true,
                       request, fn);
}
SONDE_WEAK_ALIAS(Iscatterv)

int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Scatterv_c");
  return scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, true,
                       nullptr, fn);
}
SONDE_WEAK_ALIAS(Scatterv_c)

int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request* request) {
  SONDE_ENTER("MPI_Iscatterv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return scatter_entry(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, true,
                       request, fn);
}
SONDE_WEAK_ALIAS(Iscatterv_c)

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allgather");
  return allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                                   false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Allgather)

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iallgather");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                                   false, request, fn);
}
SONDE_WEAK_ALIAS(Iallgather)

int PMPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allgather_c");
  return allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                                   false, nullptr, fn);
}
SONDE_WEAK_ALIAS(Allgather_c)

int PMPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iallgather_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                                   false, request, fn);
}
SONDE_WEAK_ALIAS(Iallgather_c)

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allgatherv");
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true, nullptr,
                         fn);
}
SONDE_WEAK_ALIAS(Allgatherv)

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Iallgatherv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true, request,
                         fn);
}
SONDE_WEAK_ALIAS(Iallgatherv)

int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allgatherv_c");
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true, nullptr,
                         fn);
}
SONDE_WEAK_ALIAS(Allgatherv_c)

int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request* request) {
  SONDE_ENTER("MPI_Iallgatherv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, true, request,
                         fn);
}
SONDE_WEAK_ALIAS(Iallgatherv_c)

}  // extern "C"
