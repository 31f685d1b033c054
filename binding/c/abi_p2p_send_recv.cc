// C ABI: point-to-point sends and receives (MPI 4.1 chapter 3): blocking,
// nonblocking and persistent, in every send mode, with their large-count
// _c forms, and the buffer of buffered sends. Sendrecv: abi_sendrecv.cc;
// waits, tests and the rest of a request's life: abi_requests.cc; probes and
// matched receives: abi_probe.cc.
#include <climits>

#include "binding/c/abi.h"
#include "binding/c/p2p_args.h"
#include "core/engine.h"
#include "core/p2p.h"

using namespace sonde::engine;
using namespace sonde::engine::p2p_args;

namespace {

// A blocking send: no user-visible request, and the eager fast path completes
// inside issue_send without allocating.
int blocking_send(const void* buf, int64_t count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  SendMode mode, const char* fn) {
  Comm* c;
  Datatype* t;
  int rc = check(comm, &c, datatype, &t, count, buf, dest, tag, false);
  if (rc) return raise(c, rc, fn);
  if (mode == SendMode::kBuffered) return finish(c, start_detached_bsend(buf, count, t, dest, tag, c), fn);
  if (mode != SendMode::kSync && engine().send_now(buf, count, t, dest, tag, c)) return MPI_SUCCESS;
  Request* r = nullptr;
  rc = start_send(buf, count, t, dest, tag, c, mode, &r);
  if (!r) return raise(c, rc, fn);
  int w = wait(r, MPI_STATUS_IGNORE);
  return finish(c, rc ? rc : w, fn);
}

int nonblocking_send(const void* buf, int64_t count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request, SendMode mode, bool persistent, const char* fn) {
  Comm* c;
  Datatype* t;
  if (!request) return raise(find_comm(comm), MPI_ERR_ARG, fn);
  int rc = check(comm, &c, datatype, &t, count, buf, dest, tag, false);
  if (rc) return raise(c, rc, fn);
  Engine& e = engine();
  Request* r = e.new_request(RequestKind::kSend, buf, count, t, dest, tag, c, mode);
  if (!r) return raise(c, MPI_ERR_INTERN, fn);
  r->persistent = persistent;
  if (persistent) {
    r->complete = true;  // inactive
    *request = r->handle;
    return MPI_SUCCESS;
  }
  if (mode == SendMode::kBuffered) {
    // The data is copied out at once, so the user's request is complete now.
    rc = start_detached_bsend(buf, count, t, dest, tag, c);
    r->error = rc;
    e.complete_at_once(r);
    *request = r->handle;
    return finish(c, rc, fn);
  }
  rc = e.issue_send(r);
  *request = r->handle;
  return finish(c, rc, fn);
}

int nonblocking_recv(void* buf, int64_t count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request* request, bool persistent, const char* fn) {
  Comm* c;
  Datatype* t;
  if (!request) return raise(find_comm(comm), MPI_ERR_ARG, fn);
  int rc = check(comm, &c, datatype, &t, count, buf, source, tag, true);
  if (rc) return raise(c, rc, fn);
  Engine& e = engine();
  Request* r = e.new_request(RequestKind::kRecv, buf, count, t, source, tag, c);
  if (!r) return raise(c, MPI_ERR_INTERN, fn);
  r->persistent = persistent;
  *request = r->handle;
  if (persistent) {
    r->complete = true;
    return MPI_SUCCESS;
  }
  return finish(c, e.issue_recv(r), fn);
}

int blocking_recv(void* buf, int64_t count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Status* status, const char* fn) {
  Comm* c;
  Datatype* t;
  int rc = check(comm, &c, datatype, &t, count, buf, source, tag, true);
  if (rc) return raise(c, rc, fn);
  return finish(c, engine().recv_blocking(buf, count, t, source, tag, c, status), fn);
}

}  // namespace

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Send");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kStandard, fn);
}
SONDE_WEAK_ALIAS(Send)

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Ssend");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kSync, fn);
}
SONDE_WEAK_ALIAS(Ssend)

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Rsend");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kReady, fn);
}
SONDE_WEAK_ALIAS(Rsend)

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Bsend");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kBuffered, fn);
}
SONDE_WEAK_ALIAS(Bsend)

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  SONDE_ENTER("MPI_Isend");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kStandard, false, fn);
}
SONDE_WEAK_ALIAS(Isend)

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SONDE_ENTER("MPI_Issend");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kSync, false, fn);
}
SONDE_WEAK_ALIAS(Issend)

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SONDE_ENTER("MPI_Irsend");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kReady, false, fn);
}
SONDE_WEAK_ALIAS(Irsend)

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SONDE_ENTER("MPI_Ibsend");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kBuffered, false, fn);
}
SONDE_WEAK_ALIAS(Ibsend)

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  SONDE_ENTER("MPI_Send_init");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kStandard, true, fn);
}
SONDE_WEAK_ALIAS(Send_init)

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  SONDE_ENTER("MPI_Ssend_init");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kSync, true, fn);
}
SONDE_WEAK_ALIAS(Ssend_init)

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  SONDE_ENTER("MPI_Rsend_init");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kReady, true, fn);
}
SONDE_WEAK_ALIAS(Rsend_init)

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  SONDE_ENTER("MPI_Bsend_init");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kBuffered, true, fn);
}
SONDE_WEAK_ALIAS(Bsend_init)

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  SONDE_ENTER("MPI_Recv_init");
  return nonblocking_recv(buf, count, datatype, source, tag, comm, request, true, fn);
}
SONDE_WEAK_ALIAS(Recv_init)

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Recv");
  return blocking_recv(buf, count, datatype, source, tag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Recv)

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Irecv");
  return nonblocking_recv(buf, count, datatype, source, tag, comm, request, false, fn);
}
SONDE_WEAK_ALIAS(Irecv)

// ---- the buffer of buffered sends (MPI 4.1 section 3.6) ----

static int buffer_attach(void* buffer, int64_t size) {
  Engine& e = engine();
  if (size < 0) return MPI_ERR_ARG;
  if (!buffer && size > 0) return MPI_ERR_BUFFER;
  if (!e.bsend().attach(buffer, size)) return MPI_ERR_BUFFER;  // one buffer at a time
  return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void* buffer, int size) {
  SONDE_ENTER("MPI_Buffer_attach");
  return finish(nullptr, buffer_attach(buffer, size), fn);
}
SONDE_WEAK_ALIAS(Buffer_attach)

static int buffer_detach(void* buffer_addr, int64_t* size) {
  Engine& e = engine();
  if (!buffer_addr || !size) return MPI_ERR_ARG;
  if (!e.bsend().attached()) {
    *static_cast<void**>(buffer_addr) = nullptr;
    *size = 0;
    return MPI_SUCCESS;
  }
  // Blocks until every buffered message has left (MPI 3.6.1).
  int idle = 0;
  while (e.bsend().used() > 0) {
    if (e.progress() == 0) e.idle(idle);
    else idle = 0;
  }
  e.bsend().detach(static_cast<void**>(buffer_addr), size);
  return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  SONDE_ENTER("MPI_Buffer_detach");
  int64_t n = 0;
  int rc = buffer_detach(buffer_addr, size ? &n : nullptr);
  if (rc) return raise(nullptr, rc, fn);
  // Attached with MPI_Buffer_attach_c beyond an int: the size does not fit.
  *size = n > INT_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Buffer_detach)

// ---- MPI 4.0 large-count forms: the same calls with MPI_Count counts ----

int PMPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Send_c");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kStandard, fn);
}
SONDE_WEAK_ALIAS(Send_c)

int PMPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Ssend_c");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kSync, fn);
}
SONDE_WEAK_ALIAS(Ssend_c)

int PMPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Rsend_c");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kReady, fn);
}
SONDE_WEAK_ALIAS(Rsend_c)

int PMPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SONDE_ENTER("MPI_Bsend_c");
  return blocking_send(buf, count, datatype, dest, tag, comm, SendMode::kBuffered, fn);
}
SONDE_WEAK_ALIAS(Bsend_c)

int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  SONDE_ENTER("MPI_Isend_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kStandard, false, fn);
}
SONDE_WEAK_ALIAS(Isend_c)

int PMPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  SONDE_ENTER("MPI_Issend_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kSync, false, fn);
}
SONDE_WEAK_ALIAS(Issend_c)

int PMPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  SONDE_ENTER("MPI_Irsend_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kReady, false, fn);
}
SONDE_WEAK_ALIAS(Irsend_c)

int PMPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  SONDE_ENTER("MPI_Ibsend_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kBuffered, false, fn);
}
SONDE_WEAK_ALIAS(Ibsend_c)

int PMPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  SONDE_ENTER("MPI_Send_init_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kStandard, true, fn);
}
SONDE_WEAK_ALIAS(Send_init_c)

int PMPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  SONDE_ENTER("MPI_Ssend_init_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kSync, true, fn);
}
SONDE_WEAK_ALIAS(Ssend_init_c)

int PMPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  SONDE_ENTER("MPI_Rsend_init_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kReady, true, fn);
}
SONDE_WEAK_ALIAS(Rsend_init_c)

int PMPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  SONDE_ENTER("MPI_Bsend_init_c");
  return nonblocking_send(buf, count, datatype, dest, tag, comm, request, SendMode::kBuffered, true, fn);
}
SONDE_WEAK_ALIAS(Bsend_init_c)

int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                MPI_Status* status) {
  SONDE_ENTER("MPI_Recv_c");
  return blocking_recv(buf, count, datatype, source, tag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Recv_c)

int PMPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  SONDE_ENTER("MPI_Irecv_c");
  return nonblocking_recv(buf, count, datatype, source, tag, comm, request, false, fn);
}
SONDE_WEAK_ALIAS(Irecv_c)

int PMPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  SONDE_ENTER("MPI_Recv_init_c");
  return nonblocking_recv(buf, count, datatype, source, tag, comm, request, true, fn);
}
SONDE_WEAK_ALIAS(Recv_init_c)

int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  SONDE_ENTER("MPI_Buffer_attach_c");
  return finish(nullptr, buffer_attach(buffer, size), fn);
}
SONDE_WEAK_ALIAS(Buffer_attach_c)

int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  SONDE_ENTER("MPI_Buffer_detach_c");
  int64_t n = 0;
  int rc = buffer_detach(buffer_addr, size ? &n : nullptr);
  if (rc) return raise(nullptr, rc, fn);
  *size = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Buffer_detach_c)

}  // extern "C"
