// C ABI: neighbourhood collectives (MPI 4.1 section 8.6: allgather(v),
// alltoall(v,w) over a topology's neighbours; blocking and nonblocking, int
// and large-count forms). Validates every argument a rank can check on its
// own (coll_args.h) and hands over to coll::neighbor (coll/coll.h) one block
// per neighbour. Each blocking MPI_Neighbor_X, its nonblocking
// MPI_Ineighbor_X and their _c forms call one checking function (x_entry
// below), which sees the request (null in the blocking forms); the
// nonblocking forms refuse a null request first.
#include <cstdint>
#include <utility>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/coll_args.h"
#include "coll/coll.h"
#include "comm/topo.h"

using namespace sonde::engine;
using namespace sonde::engine::coll_args;

namespace {

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

// buf + offset bytes; buf may be MPI_BOTTOM (null) with an absolute
// address as the offset, hence integer arithmetic.
uint8_t* byte_at(const void* buf, int64_t offset) {
  return reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(buf) + static_cast<uintptr_t>(offset));
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
                    : check_data(recvbuf, recvcount, recvtype, &rt, indeg);
  }
  if (rc) return refuse(c, rc, fn);
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
  if (!rc) rc = check_data(sendbuf, sendcount, sendtype, &st, outdeg);
  if (!rc) rc = check_data(recvbuf, recvcount, recvtype, &rt, indeg);
  if (rc) return refuse(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, i * sendcount * st->extent), sendcount, st};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, i * recvcount * rt->extent), recvcount, rt};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoall, std::move(out), std::move(in), request), fn);
}

template <class C, class D>
int neighbor_alltoallv_entry(const void* sendbuf, const C* sendcounts, const D* sdispls, MPI_Datatype sendtype,
                             void* recvbuf, const C* recvcounts, const D* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request, const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  coll::Counts sc, sd, rc_, rd;
  if (!rc) rc = check_vdata(sendbuf, sendcounts, sdispls, sendtype, outdeg, &st, &sc, &sd);
  if (!rc) rc = check_vdata(recvbuf, recvcounts, rdispls, recvtype, indeg, &rt, &rc_, &rd);
  if (rc) return refuse(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, sd[i] * st->extent), sc[i], st};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, rd[i] * rt->extent), rc_[i], rt};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoallv, std::move(out), std::move(in), request), fn);
}

// Byte displacements (MPI_Aint in both forms) and one datatype per neighbour.
template <class C>
int neighbor_alltoallw_entry(const void* sendbuf, const C* sendcounts, const MPI_Aint* sdispls,
                             const MPI_Datatype* sendtypes, void* recvbuf, const C* recvcounts, const MPI_Aint* rdispls,
                             const MPI_Datatype* recvtypes, MPI_Comm comm, MPI_Request* request, const char* fn) {
  SONDE_NEIGHBOR_COMM(c, comm, indeg, outdeg, rc);
  std::vector<Datatype*> st, rt;
  coll::Counts sc, sd, rc_, rd;
  if (!rc) rc = check_wdata(sendbuf, sendcounts, sdispls, sendtypes, outdeg, st, &sc, &sd);
  if (!rc) rc = check_wdata(recvbuf, recvcounts, rdispls, recvtypes, indeg, rt, &rc_, &rd);
  if (rc) return refuse(c, rc, fn);
  std::vector<coll::Block> out(static_cast<size_t>(outdeg)), in(static_cast<size_t>(indeg));
  for (int i = 0; i < outdeg; ++i) out[i] = coll::Block{byte_at(sendbuf, sd[i]), sc[i], st[i]};
  for (int i = 0; i < indeg; ++i) in[i] = coll::Block{byte_at(recvbuf, rd[i]), rc_[i], rt[i]};
  return finish(c, coll::neighbor(c, coll::kNeighborAlltoallw, std::move(out), std::move(in), request), fn);
}

}  // namespace

extern "C" {

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_allgather");
  return neighbor_allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                            recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_allgather)

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_allgather");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                            recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_allgather)

int PMPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_allgather_c");
  return neighbor_allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                            recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_allgather_c)

int PMPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_allgather_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_allgather_entry<int, int>(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                            recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_allgather_c)

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_allgatherv");
  return neighbor_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, nullptr,
                                  fn);
}
SONDE_WEAK_ALIAS(Neighbor_allgatherv)

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_allgatherv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, request,
                                  fn);
}
SONDE_WEAK_ALIAS(Ineighbor_allgatherv)

int PMPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_allgatherv_c");
  return neighbor_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, nullptr,
                                  fn);
}
SONDE_WEAK_ALIAS(Neighbor_allgatherv_c)

int PMPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_allgatherv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, request,
                                  fn);
}
SONDE_WEAK_ALIAS(Ineighbor_allgatherv_c)

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoall");
  return neighbor_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoall)

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoall");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoall)

int PMPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoall_c");
  return neighbor_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoall_c)

int PMPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoall_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoall_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoall_c)

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoallv");
  return neighbor_alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoallv");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoallv_c");
  return neighbor_alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoallv_c)

int PMPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoallv_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoallv_entry(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoallv_c)

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoallw");
  return neighbor_alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                  comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoallw)

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoallw");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                  comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoallw)

int PMPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  SONDE_ENTER("MPI_Neighbor_alltoallw_c");
  return neighbor_alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                  comm, nullptr, fn);
}
SONDE_WEAK_ALIAS(Neighbor_alltoallw_c)

int PMPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request) {
  SONDE_ENTER("MPI_Ineighbor_alltoallw_c");
  if (!request) return refuse(comm, MPI_ERR_ARG, fn);
  return neighbor_alltoallw_entry(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                  comm, request, fn);
}
SONDE_WEAK_ALIAS(Ineighbor_alltoallw_c)

}  // extern "C"
