// C ABI: all-to-all collectives (alltoall, alltoallv, alltoallw; blocking
// and nonblocking, int and large-count forms). Validates every argument a
// rank can check on its own (coll_args.h) and hands over to coll/coll.h.
// Each blocking MPI_X, its nonblocking MPI_IX and their _c forms call one
// checking function (x_entry below), which sees the request (null in the
// blocking forms); the nonblocking forms refuse a null request first.
#include <utility>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/coll_args.h"
#include "coll/coll.h"

using namespace sonde::engine;
using namespace sonde::engine::coll_args;

namespace {

int alltoall_entry(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, void* recvbuf, int64_t recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st, c->peers());
  if (!rc) rc = check_data(recvbuf, recvcount, recvtype, &rt, c->peers());
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sendcount * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return refuse(c, rc, fn);
  return finish(c, coll::alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, c, request), fn);
}

template <class C, class D>
int alltoallv_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, MPI_Datatype sendtype, void* recvbuf,
                    const C* recvcounts, const D* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
                    const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts sc, sd, rc_, rd;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int64_t sent = 0;
  int rc =
      in_place ? MPI_SUCCESS : check_vdata(sendbuf, sendcounts, sdispls, sendtype, c->peers(), &st, &sc, &sd, &sent);
  if (!rc) rc = check_vdata(recvbuf, recvcounts, rdispls, recvtype, c->peers(), &rt, &rc_, &rd);
  if (!rc && !in_place && aliased(sendbuf, recvbuf, sent * st->size)) rc = MPI_ERR_BUFFER;
  if (rc) return refuse(c, rc, fn);
  return finish(c,
                coll::alltoallv(sendbuf, std::move(sc), std::move(sd), st, recvbuf, std::move(rc_), std::move(rd), rt,
                                c, request),
                fn);
}

template <class C, class D>
int alltoallw_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, const MPI_Datatype* sendtypes,
                    void* recvbuf, const C* recvcounts, const D* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                    MPI_Request* request, const char* fn) {
  SONDE_COMM_OR_RAISE(c, comm);
  std::vector<Datatype*> st, rt;
  coll::Counts sc, sd, rc_, rd;
  const bool in_place = sendbuf == MPI_IN_PLACE && !c->inter;
  int rc = in_place ? MPI_SUCCESS : check_wdata(sendbuf, sendcounts, sdispls, sendtypes, c->peers(), st, &sc, &sd);
  if (!rc) rc = check_wdata(recvbuf, recvcounts, rdispls, recvtypes, c->peers(), rt, &rc_, &rd);
  if (!rc && !in_place && sendbuf == recvbuf && sendbuf) rc = MPI_ERR_BUFFER;
  if (rc) return refuse(c, rc, fn);
  return finish(c,
                coll::alltoallw(sendbuf, std::move(sc), std::move(sd), std::move(st), recvbuf, std::move(rc_),
                                std::move(rd), std::move(rt), c, request),
                fn);
}

}  // namespace

extern "C" {

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoall");
  return alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Alltoall)

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoall");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ialltoall)

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoall_c");
  return alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Alltoall_c)

int PMPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoall_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ialltoall_c)

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoallv");
  return alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nullptr,
                         fn);
}
SONDE_WEAK_ALIAS(Alltoallv)

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoallv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request,
                         fn);
}
SONDE_WEAK_ALIAS(Ialltoallv)

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoallv_c");
  return alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nullptr,
                         fn);
}
SONDE_WEAK_ALIAS(Alltoallv_c)

int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoallv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request,
                         fn);
}
SONDE_WEAK_ALIAS(Ialltoallv_c)

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoallw");
  return alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                         nullptr, fn);
}
SONDE_WEAK_ALIAS(Alltoallw)

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoallw");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                         request, fn);
}
SONDE_WEAK_ALIAS(Ialltoallw)

int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  SONDE_ENTER("MPI_Alltoallw_c");
  return alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                         nullptr, fn);
}
SONDE_WEAK_ALIAS(Alltoallw_c)

int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ialltoallw_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                         request, fn);
}
SONDE_WEAK_ALIAS(Ialltoallw_c)

}  // extern "C"
