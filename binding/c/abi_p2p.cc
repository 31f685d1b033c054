// C ABI: point-to-point communication, requests, probes.
#include <climits>
#include <cstdlib>
#include <vector>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "core/grequest.h"
#include "runtime/errors.h"
#include "datatype/op.h"
#include "core/p2p.h"

using namespace sonde::engine;

namespace {

constexpr int kTagUb = INT_MAX;

// Validate the arguments every send or receive shares. Returns an error class.
int check(MPI_Comm comm, Comm** c, MPI_Datatype type, Datatype** t, int64_t count, const void* buf, int peer,
          int tag, bool receive) {
  *c = find_comm(comm);
  if (!*c) return MPI_ERR_COMM;
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (!buf && count > 0 && (*t)->size > 0 && (*t)->predefined) return MPI_ERR_BUFFER;
  if (receive) {
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > kTagUb)) return MPI_ERR_TAG;
    if (peer != MPI_ANY_SOURCE && peer != MPI_PROC_NULL && (peer < 0 || peer >= (*c)->peers())) return MPI_ERR_RANK;
  } else {
    if (tag < 0 || tag > kTagUb) return MPI_ERR_TAG;
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= (*c)->peers())) return MPI_ERR_RANK;
  }
  return MPI_SUCCESS;
}

void empty_status(MPI_Status* s) {
  if (!s || s == MPI_STATUS_IGNORE) return;
  s->MPI_SOURCE = MPI_ANY_SOURCE;
  s->MPI_TAG = MPI_ANY_TAG;
  s->MPI_ERROR = MPI_SUCCESS;
  s->sonde_cancelled = 0;
  s->sonde_count = 0;
}

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
  Request* r = nullptr;
  rc = start_recv(buf, count, t, source, tag, c, &r);
  if (!r) return raise(c, rc, fn);
  int w = wait(r, status);
  return finish(c, rc ? rc : w, fn);
}

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
                sendrecv(copy.data(), int64_t(copy.size()), byte_type(), dest, sendtag, buf, count, t, source,
                         recvtag, c, status),
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
  return finish(c, start_isendrecv(sendbuf, sendcount, st, dest, sendtag, recvbuf, recvcount, rt, source, recvtag, c,
                                   nullptr, request),
                fn);
}

int isendrecv_replace(void* buf, int64_t count, MPI_Datatype datatype, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Request* request, const char* fn) {
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
  return finish(c, start_isendrecv(copy, int64_t(bytes), byte_type(), dest, sendtag, buf, count, t, source, recvtag,
                                   c, copy, request),
                fn);
}

}  // namespace


namespace {

// Finish a completed request the user waited on or tested: status out, the
// request released (or made inactive if persistent), handle nulled.
[[gnu::always_inline]] inline int retire(MPI_Request* handle, Request* r, MPI_Status* status) {
  if (__builtin_expect(r->kind == RequestKind::kGeneralized, 0)) return retire_generalized(handle, r, status);
  Engine::notify(r);
  Engine::fill_status(r, status);
  int rc = r->error;
  if (r->persistent) {
    r->active = false;
  } else {
    engine().release(r);
    *handle = MPI_REQUEST_NULL;
  }
  return rc;
}

// Is this handle something wait/test must act on? Null and inactive
// persistent requests are not (they complete at once with an empty status).
enum class Slot { kNull, kInvalid, kLive };
Slot classify(MPI_Request h, Request** out) {
  if (h == MPI_REQUEST_NULL) return Slot::kNull;
  Request* r = find_request(h);
  if (!r || r->user_freed) return Slot::kInvalid;
  *out = r;
  if (r->persistent && !r->active) return Slot::kNull;
  return Slot::kLive;
}

void wait_until(Request* r) {
  Engine& e = engine();
  int idle = 0;
  while (!r->complete) {
    if (e.wait_pass(idle)) e.waiting_on(r);  // (ofi) liveness
  }
}

int start_one(Request* r) {
  if (r->active) return MPI_ERR_REQUEST;
  if (r->kind == RequestKind::kSend) {
    if (r->mode == SendMode::kBuffered) {
      int rc = start_detached_bsend(r->buf, r->count, r->type, r->peer, r->tag, r->comm);
      r->error = rc;
      engine().complete_at_once(r);
      return rc;
    }
    return engine().issue_send(r);
  }
  return engine().issue_recv(r);
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

static int buffer_attach(void* buffer, int64_t size) {
  Engine& e = engine();
  if (size < 0) return MPI_ERR_ARG;
  if (!buffer && size > 0) return MPI_ERR_BUFFER;
  if (e.bsend_buffer) return MPI_ERR_BUFFER;  // one buffer at a time
  e.bsend_buffer = buffer;
  e.bsend_size = size;
  e.bsend_used = 0;
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
  if (!e.bsend_buffer) {
    *static_cast<void**>(buffer_addr) = nullptr;
    *size = 0;
    return MPI_SUCCESS;
  }
  // Blocks until every buffered message has left (MPI 3.6.1).
  int idle = 0;
  while (e.bsend_used > 0) {
    if (e.progress() == 0) e.idle(idle);
    else idle = 0;
  }
  *static_cast<void**>(buffer_addr) = e.bsend_buffer;
  *size = e.bsend_size;
  e.bsend_buffer = nullptr;
  e.bsend_size = 0;
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

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  SONDE_ENTER("MPI_Recv");
  return blocking_recv(buf, count, datatype, source, tag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Recv)

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  SONDE_ENTER("MPI_Irecv");
  return nonblocking_recv(buf, count, datatype, source, tag, comm, request, false, fn);
}
SONDE_WEAK_ALIAS(Irecv)

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                  MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv");
  return blocking_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv)

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Sendrecv_replace");
  return blocking_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status, fn);
}
SONDE_WEAK_ALIAS(Sendrecv_replace)

int PMPI_Start(MPI_Request* request) {
  SONDE_ENTER("MPI_Start");
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = find_request(*request);
  if (!r || !r->persistent || r->user_freed) return raise(nullptr, MPI_ERR_REQUEST, fn);
  return finish(r->comm, start_one(r), fn);
}
SONDE_WEAK_ALIAS(Start)

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  SONDE_ENTER("MPI_Startall");
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (count > 0 && !array_of_requests) return raise(nullptr, MPI_ERR_ARG, fn);
  for (int i = 0; i < count; ++i) {
    Request* r = find_request(array_of_requests[i]);
    if (!r || !r->persistent || r->active || r->user_freed) return raise(nullptr, MPI_ERR_REQUEST, fn);
  }
  for (int i = 0; i < count; ++i) {
    Request* r = find_request(array_of_requests[i]);
    int rc = start_one(r);
    if (rc) return raise(r->comm, rc, fn);
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Startall)

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  SONDE_ENTER("MPI_Wait");
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = nullptr;
  switch (classify(*request, &r)) {
    case Slot::kNull: empty_status(status); return MPI_SUCCESS;
    case Slot::kInvalid: return raise(nullptr, MPI_ERR_REQUEST, fn);
    case Slot::kLive: break;
  }
  wait_until(r);
  Comm* c = r->comm;
  return finish(c, retire(request, r, status), fn);
}
SONDE_WEAK_ALIAS(Wait)

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Test");
  if (!request || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = nullptr;
  switch (classify(*request, &r)) {
    case Slot::kNull: *flag = 1; empty_status(status); return MPI_SUCCESS;
    case Slot::kInvalid: return raise(nullptr, MPI_ERR_REQUEST, fn);
    case Slot::kLive: break;
  }
  if (!r->complete && engine().fruitless(engine().progress())) engine().waiting_on(r);  // (ofi) liveness
  *flag = r->complete;
  if (!r->complete) return MPI_SUCCESS;
  Comm* c = r->comm;
  return finish(c, retire(request, r, status), fn);
}
SONDE_WEAK_ALIAS(Test)

// Shared by Waitall/Testall: every request completes (or none, for Testall).
static int complete_all(int count, MPI_Request reqs[], MPI_Status statuses[], const char* fn) {
  bool any_error = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    Request* r = nullptr;
    if (classify(reqs[i], &r) != Slot::kLive) {
      empty_status(st);
      continue;
    }
    int rc = retire(&reqs[i], r, st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
    if (rc) any_error = true;
  }
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

static int validate_array(int count, MPI_Request reqs[]) {
  if (count < 0) return MPI_ERR_COUNT;
  if (count > 0 && !reqs) return MPI_ERR_ARG;
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (classify(reqs[i], &r) == Slot::kInvalid) return MPI_ERR_REQUEST;
  }
  return MPI_SUCCESS;
}

// (ofi) liveness: a wait or test loop on several requests that goes idle
// watches the peers of every one still incomplete (Engine::waiting_on).
static void watch_pending(int count, MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    if (classify(reqs[i], &r) == Slot::kLive && !r->complete) engine().waiting_on(r);
  }
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses) {
  SONDE_ENTER("MPI_Waitall");
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  // wait_until() per request, but one idle count for the call: going idle
  // watches every incomplete request's peer, not only the first one's.
  Engine& e = engine();
  int idle = 0;
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    if (classify(array_of_requests[i], &r) != Slot::kLive) continue;
    while (!r->complete) {
      if (e.wait_pass(idle)) watch_pending(count, array_of_requests);  // (ofi) liveness
    }
  }
  return finish(nullptr, complete_all(count, array_of_requests, array_of_statuses, fn), fn);
}
SONDE_WEAK_ALIAS(Waitall)

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status *array_of_statuses) {
  SONDE_ENTER("MPI_Testall");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(count, array_of_requests);  // (ofi) liveness
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    if (classify(array_of_requests[i], &r) == Slot::kLive && !r->complete) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return finish(nullptr, complete_all(count, array_of_requests, array_of_statuses, fn), fn);
}
SONDE_WEAK_ALIAS(Testall)

// First completed live request, or -1; *all_null when none is live.
static int first_complete(int count, MPI_Request reqs[], bool* all_null) {
  *all_null = true;
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    if (classify(reqs[i], &r) != Slot::kLive) continue;
    *all_null = false;
    if (r->complete) return i;
  }
  return -1;
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  SONDE_ENTER("MPI_Waitany");
  if (!index) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  Engine& e = engine();
  int idle = 0;
  for (;;) {
    bool all_null;
    int i = first_complete(count, array_of_requests, &all_null);
    if (all_null) {
      *index = MPI_UNDEFINED;
      empty_status(status);
      return MPI_SUCCESS;
    }
    if (i >= 0) {
      Request* r = find_request(array_of_requests[i]);
      *index = i;
      Comm* c = r->comm;
      return finish(c, retire(&array_of_requests[i], r, status), fn);
    }
    if (e.wait_pass(idle)) watch_pending(count, array_of_requests);  // (ofi) liveness
  }
}
SONDE_WEAK_ALIAS(Waitany)

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Testany");
  if (!index || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(count, array_of_requests);  // (ofi) liveness
  bool all_null;
  int i = first_complete(count, array_of_requests, &all_null);
  if (all_null) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (i < 0) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  *index = i;
  Request* r = find_request(array_of_requests[i]);
  Comm* c = r->comm;
  return finish(c, retire(&array_of_requests[i], r, status), fn);
}
SONDE_WEAK_ALIAS(Testany)

static int collect_some(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  bool any_live = false, any_error = false;
  int n = 0;
  for (int i = 0; i < incount; ++i) {
    Request* r = nullptr;
    if (classify(reqs[i], &r) != Slot::kLive) continue;
    any_live = true;
    if (!r->complete) continue;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
    int rc = retire(&reqs[i], r, st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
    if (rc) any_error = true;
    indices[n++] = i;
  }
  *outcount = any_live ? n : MPI_UNDEFINED;
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                  MPI_Status *array_of_statuses) {
  SONDE_ENTER("MPI_Waitsome");
  if (!outcount || (incount > 0 && !array_of_indices)) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(incount, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  Engine& e = engine();
  int idle = 0;
  for (;;) {
    bool all_null;
    int i = first_complete(incount, array_of_requests, &all_null);
    if (all_null || i >= 0) break;
    if (e.wait_pass(idle)) watch_pending(incount, array_of_requests);  // (ofi) liveness
  }
  return finish(nullptr, collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses),
                fn);
}
SONDE_WEAK_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                  MPI_Status *array_of_statuses) {
  SONDE_ENTER("MPI_Testsome");
  if (!outcount || (incount > 0 && !array_of_indices)) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(incount, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(incount, array_of_requests);  // (ofi) liveness
  return finish(nullptr, collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses),
                fn);
}
SONDE_WEAK_ALIAS(Testsome)

int PMPI_Request_free(MPI_Request* request) {
  SONDE_ENTER("MPI_Request_free");
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = find_request(*request);
  if (!r || r->user_freed) return raise(nullptr, MPI_ERR_REQUEST, fn);
  if (r->kind == RequestKind::kGeneralized) {
    int rc = free_generalized(r);
    *request = MPI_REQUEST_NULL;
    return finish(nullptr, rc, fn);
  }
  // MPI 4.1 section 6.12: freeing a nonblocking collective's request is erroneous.
  // The request stays valid, to be completed by a wait or test.
  if (r->kind == RequestKind::kCollective) return raise(nullptr, MPI_ERR_REQUEST, fn);
  if (r->active && !r->complete) {
    r->user_freed = true;  // released (and its REQ_NOTIFY fired) when it completes
  } else {
    // Completed but never waited for: its life as a request ends now.
    if (r->active) Engine::notify(r);
    engine().release(r);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Request_free)

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Request_get_status");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = nullptr;
  switch (classify(request, &r)) {
    case Slot::kNull: *flag = 1; empty_status(status); return MPI_SUCCESS;
    case Slot::kInvalid: return raise(nullptr, MPI_ERR_REQUEST, fn);
    case Slot::kLive: break;
  }
  if (!r->complete && engine().fruitless(engine().progress())) engine().waiting_on(r);  // (ofi) liveness
  *flag = r->complete;
  if (r->complete && r->kind == RequestKind::kGeneralized) return finish(nullptr, query_generalized(r, status), fn);
  if (r->complete) Engine::fill_status(r, status);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Request_get_status)

int PMPI_Cancel(MPI_Request* request) {
  SONDE_ENTER("MPI_Cancel");
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = find_request(*request);
  if (!r || r->user_freed) return raise(nullptr, MPI_ERR_REQUEST, fn);
  if (r->kind == RequestKind::kGeneralized) return finish(nullptr, cancel_generalized(r), fn);
  // MPI 4.1 section 6.12: cancelling a nonblocking collective is erroneous.
  if (r->kind == RequestKind::kCollective) return raise(nullptr, MPI_ERR_REQUEST, fn);
  if (!r->active) return MPI_SUCCESS;
  if (r->complete) {
    // An eager send completes when handed over, before any receive matched
    // it: it can still be cancelled at the receiver.
    if (r->kind == RequestKind::kSend) engine().ask_cancel_send(r);
    return MPI_SUCCESS;
  }
  if (r->kind == RequestKind::kRecv) {
    engine().cancel_recv(r);
  } else if (r->kind == RequestKind::kSend && r->item.handed == 0 && !r->handed &&
             r->item.header.type != sonde::transport::PacketType::kRts &&
             engine().route[r->world_peer]->dequeue(r->world_peer, &r->item)) {
    // Not a byte has left: the send can be withdrawn.
    r->cancelled = true;
    engine().complete(r);
  } else if (r->kind == RequestKind::kSend) {
    // Gone out (an RTS, or eager data the request completed on): the
    // receiver drops it if still unmatched (Engine::ask_cancel_send).
    engine().ask_cancel_send(r);
  }
  // Otherwise the send is on its way and completes normally; the status
  // then reports it as not cancelled (MPI allows this).
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cancel)

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  SONDE_ENTER("MPI_Test_cancelled");
  if (!status || status == MPI_STATUS_IGNORE || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  *flag = status->sonde_cancelled != 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Test_cancelled)

// Probes complete one call each: status.MPI_ERROR is not theirs to set.
static void message_status(const Message* m, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || !status) return;
  status->MPI_SOURCE = m->header.source;
  status->MPI_TAG = m->header.tag;
  status->sonde_cancelled = 0;
  status->sonde_count = static_cast<long long>(m->header.total);
}

static void proc_null_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || !status) return;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  status->sonde_cancelled = 0;
  status->sonde_count = 0;
}

static int check_probe(int source, int tag, MPI_Comm comm, Comm** c) {
  *c = find_comm(comm);
  if (!*c) return MPI_ERR_COMM;
  if (tag != MPI_ANY_TAG && tag < 0) return MPI_ERR_TAG;
  if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= (*c)->peers()))
    return MPI_ERR_RANK;
  return MPI_SUCCESS;
}

// Probe until a message is found (blocking) or once (non-blocking).
static Message* probe_loop(Comm* c, int source, int tag, bool block) {
  Engine& e = engine();
  int idle = 0;
  for (;;) {
    if (Message* m = e.probe(c, source, tag)) return m;
    if (!block) {
      int moved = e.progress();
      if (e.fruitless(moved)) e.watch_peer(c, source);  // (ofi) liveness: an Iprobe loop finding nothing
      if (moved == 0) return nullptr;
      return e.probe(c, source, tag);
    }
    if (e.wait_pass(idle)) e.watch_peer(c, source);  // (ofi) liveness
  }
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  SONDE_ENTER("MPI_Probe");
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (source == MPI_PROC_NULL) {
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  message_status(probe_loop(c, source, tag, true), status);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Probe)

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Iprobe");
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (!flag) return raise(c, MPI_ERR_ARG, fn);
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  Message* m = probe_loop(c, source, tag, false);
  *flag = m != nullptr;
  if (m) message_status(m, status);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Iprobe)

static int matched_probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
                         bool block, const char* fn) {
  Comm* c;
  int rc = check_probe(source, tag, comm, &c);
  if (rc) return raise(c, rc, fn);
  if (!message || (!block && !flag)) return raise(c, MPI_ERR_ARG, fn);
  if (source == MPI_PROC_NULL) {
    if (flag) *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  Message* m = probe_loop(c, source, tag, block);
  if (flag) *flag = m != nullptr;
  if (!m) return MPI_SUCCESS;
  engine().take_message(c, m);
  m->claimed = true;
  *message = m->handle;
  message_status(m, status);
  return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mprobe");
  return matched_probe(source, tag, comm, nullptr, message, status, true, fn);
}
SONDE_WEAK_ALIAS(Mprobe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Improbe");
  return matched_probe(source, tag, comm, flag, message, status, false, fn);
}
SONDE_WEAK_ALIAS(Improbe)

// Start a receive on a message taken by Mprobe/Improbe.
static int receive_claimed(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, Request** out,
                           const char* fn) {
  if (!message) return raise(nullptr, MPI_ERR_ARG, fn);
  Engine& e = engine();
  Datatype* t = find_comm_datatype(datatype);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  // Peer and communicator come from the message (set below).
  Request* r = e.new_request(RequestKind::kRecv, buf, count, t, MPI_ANY_SOURCE, MPI_ANY_TAG, nullptr);
  if (!r) return raise(nullptr, MPI_ERR_INTERN, fn);
  *out = r;
  if (*message == MPI_MESSAGE_NO_PROC) {
    r->comm = e.self();
    r->peer = MPI_PROC_NULL;
    *message = MPI_MESSAGE_NULL;
    return e.issue_recv(r);
  }
  Message* m = e.messages.lookup(*message);
  if (!m || !m->claimed) {
    e.release(r);
    *out = nullptr;
    return raise(nullptr, MPI_ERR_REQUEST, fn);
  }
  m->claimed = false;
  r->comm = m->comm;
  r->peer = m->header.source;
  *message = MPI_MESSAGE_NULL;
  return e.receive_message(r, m);
}

static int mrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
                 const char* fn) {
  Request* r = nullptr;
  int rc = receive_claimed(buf, count, datatype, message, &r, fn);
  if (!r) return rc;
  Comm* c = r->comm;
  rc = wait(r, status);
  return finish(c, rc, fn);
}

static int imrecv(void* buf, int64_t count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request,
                  const char* fn) {
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = nullptr;
  int rc = receive_claimed(buf, count, datatype, message, &r, fn);
  if (!r) return rc;
  *request = r->handle;
  return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mrecv");
  return mrecv(buf, count, datatype, message, status, fn);
}
SONDE_WEAK_ALIAS(Mrecv)

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  SONDE_ENTER("MPI_Imrecv");
  return imrecv(buf, count, datatype, message, request, fn);
}
SONDE_WEAK_ALIAS(Imrecv)

// Whole elements of `datatype` in a status (MPI_UNDEFINED if not whole).
static int count_of(const MPI_Status* status, MPI_Datatype datatype, int64_t* count) {
  if (!status || status == MPI_STATUS_IGNORE || !count) return MPI_ERR_ARG;
  Datatype* t = find_datatype(datatype);
  if (!t) return MPI_ERR_TYPE;
  long long bytes = status->sonde_count;
  if (t->size == 0) {
    *count = 0;
  } else if (bytes % t->size) {
    *count = MPI_UNDEFINED;
  } else {
    *count = bytes / t->size;
  }
  return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  SONDE_ENTER("MPI_Get_count");
  int64_t n;
  int rc = count_of(status, datatype, count ? &n : nullptr);
  if (rc) return raise(nullptr, rc, fn);
  // Too many for an int: MPI 4.0 3.2.5 says MPI_UNDEFINED.
  *count = n > INT_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_count)

// ---- MPI 4.0: nonblocking send-receive (p2p.h) ----

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                   MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv");
  return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                   request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv)

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Request* request) {
  SONDE_ENTER("MPI_Isendrecv_replace");
  return isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request, fn);
}
SONDE_WEAK_ALIAS(Isendrecv_replace)

// ---- MPI 4.0 large-count forms: the same calls with MPI_Count counts ----

#define SONDE_SEND_C(Name, mode)                                                                       \
  int PMPI_##Name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,      \
                      MPI_Comm comm) {                                                                 \
    SONDE_ENTER("MPI_" #Name "_c");                                                                    \
    return blocking_send(buf, count, datatype, dest, tag, comm, mode, fn);                             \
  }                                                                                                    \
  SONDE_WEAK_ALIAS(Name##_c)
SONDE_SEND_C(Send, SendMode::kStandard)
SONDE_SEND_C(Ssend, SendMode::kSync)
SONDE_SEND_C(Rsend, SendMode::kReady)
SONDE_SEND_C(Bsend, SendMode::kBuffered)
#undef SONDE_SEND_C

#define SONDE_NB_SEND_C(Name, mode, persistent)                                                        \
  int PMPI_##Name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,      \
                      MPI_Comm comm, MPI_Request* request) {                                           \
    SONDE_ENTER("MPI_" #Name "_c");                                                                    \
    return nonblocking_send(buf, count, datatype, dest, tag, comm, request, mode, persistent, fn);     \
  }                                                                                                    \
  SONDE_WEAK_ALIAS(Name##_c)
SONDE_NB_SEND_C(Isend, SendMode::kStandard, false)
SONDE_NB_SEND_C(Issend, SendMode::kSync, false)
SONDE_NB_SEND_C(Irsend, SendMode::kReady, false)
SONDE_NB_SEND_C(Ibsend, SendMode::kBuffered, false)
SONDE_NB_SEND_C(Send_init, SendMode::kStandard, true)
SONDE_NB_SEND_C(Ssend_init, SendMode::kSync, true)
SONDE_NB_SEND_C(Rsend_init, SendMode::kReady, true)
SONDE_NB_SEND_C(Bsend_init, SendMode::kBuffered, true)
#undef SONDE_NB_SEND_C

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

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, MPI_Status* status) {
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
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request* request) {
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

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  SONDE_ENTER("MPI_Mrecv_c");
  return mrecv(buf, count, datatype, message, status, fn);
}
SONDE_WEAK_ALIAS(Mrecv_c)

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  SONDE_ENTER("MPI_Imrecv_c");
  return imrecv(buf, count, datatype, message, request, fn);
}
SONDE_WEAK_ALIAS(Imrecv_c)

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SONDE_ENTER("MPI_Get_count_c");
  int64_t n;
  int rc = count_of(status, datatype, count ? &n : nullptr);
  if (rc) return raise(nullptr, rc, fn);
  *count = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_count_c)

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
