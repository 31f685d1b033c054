// C ABI: send-receive (MPI 4.1 section 3.10): MPI_Sendrecv and
// MPI_Sendrecv_replace, their nonblocking MPI 4.0 forms (core/p2p.h,
// start_isendrecv) and the large-count _c forms of all four.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/p2p_args.h"
#include "core/engine.h"
#include "core/p2p.h"

using namespace sonde::engine;
using namespace sonde::engine::p2p_args;

namespace {

int blocking_sendrecv(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                      void* recvbuf, int64_t recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                      MPI_Status* status, const char* fn) {
  Comm* c;
  Datatype *st, *rt;
  int rc = check(comm, &c, sendtype, &st, sendcount, sendbuf, dest, sendtag, false);
  if (!rc) rc = check(comm, &c, recvtype, &rt, recvcount, recvbuf, source, recvtag, true);
  if (rc) return raise(c, rc, fn);
  return finish(c, sendrecv(sendbuf, sendcount, st, dest, sendtag, recvbuf, recvcount, rt, source, recvtag, c, status),
                fn);
}

int blocking_sendrecv_replace(void* buf, int64_t count, MPI_Datatype datatype, int dest, int sendtag, int source,
                              int recvtag, MPI_Comm comm, MPI_Status* status, const char* fn) {
  Comm* c;
  Datatype* t;
  int rc = check(comm, &c, datatype, &t, count, buf, dest, sendtag, false);
  if (!rc) rc = check(comm, &c, datatype, &t, count, buf, source, recvtag, true);
  if (rc) return raise(c, rc, fn);
  // Send from a packed copy so the receive can land in place.
  std::vector<uint8_t> copy(uint64_t(count) * uint64_t(t->size));
  pack(*t, buf, count, 0, copy.data(), copy.size());
  return finish(c,
                sendrecv(copy.data(), int64_t(copy.size()), byte_type(), dest, sendtag, buf, count, t, source, recvtag,
                         c, status),
                fn);
}

int isendrecv(const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int64_t recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request,
              const char* fn) {
  Comm* c;
  Datatype *st, *rt;
  int rc = check(comm, &c, sendtype, &st, sendcount, sendbuf, dest, sendtag, false);
  if (!rc) rc = check(comm, &c, recvtype, &rt, recvcount, recvbuf, source, recvtag, true);
  if (!rc && !request) rc = MPI_ERR_ARG;
  if (rc) return raise(c, rc, fn);
  return finish(c,
                start_isendrecv(sendbuf, sendcount, st, dest, sendtag, recvbuf, recvcount, rt, source, recvtag, c,
                                nullptr, request),
                fn);
}

int isendrecv_replace(void* buf, int64_t count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                      MPI_Comm comm, MPI_Request* request, const char* fn) {
  Comm* c;
  Datatype* t;
  int rc = check(comm, &c, datatype, &t, count, buf, dest, sendtag, false);
  if (!rc) rc = check(comm, &c, datatype, &t, count, buf, source, recvtag, true);
  if (!rc && !request) rc = MPI_ERR_ARG;
  if (rc) return raise(c, rc, fn);
  // The outgoing data is packed now (any layout), so the receive can land in
  // the user's buffer while the send is still reading its copy.
  uint64_t bytes = uint64_t(count) * uint64_t(t->size);
  uint8_t* copy = static_cast<uint8_t*>(std::malloc(bytes ? bytes : 1));
  if (!copy) return raise(c, MPI_ERR_NO_MEM, fn);
  pack(*t, buf, count, 0, copy, bytes);
  return finish(c,
                start_isendrecv(copy, int64_t(bytes), byte_type(), dest, sendtag, buf, count, t, source, recvtag, c,
                                copy, request),
                fn);
}

}  // namespace

extern "C" {

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv");
  return blocking_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv)

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv_replace");
  return blocking_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv_replace)

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv");
  return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                   request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv)

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv_replace");
  return isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv_replace)

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv_c");
  return blocking_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv_c)

int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                            int recvtag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv_replace_c");
  return blocking_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv_replace_c)

int PMPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv_c");
  return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                   request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv_c)

int PMPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv_replace_c");
  return isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv_replace_c)

}  // extern "C"
