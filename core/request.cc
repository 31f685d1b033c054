// Requests: reset, allocation, release, completion and status, and the
// internal point-to-point calls of p2p.h (start, wait, blocking forms).
#include <cstring>

#include "core/engine_internal.h"

namespace sonde::engine {

// ---------------------------------------------------------------- requests

// Field by field rather than `*this = Request()`: a request slot is reset on
// every receive and every queued send, and building and copying the whole
// object (hooks, sinks, a 48-byte header) showed up in the receive path.
// Every field of Request is listed here; the size check makes adding a
// field without resetting it here a compile error (x86-64 layout).
// (peruse_spec is not reset: peruse_spec_ready says whether it is built;
// the matching::PostedEntry fields are MatchQueues', which sets them on post
// and clears them when the receive leaves the queue.)
static_assert(sizeof(Request) == 384, "Request changed: reset the new field in Request::reset()");
void Request::reset() {
  handle = MPI_REQUEST_NULL;
  kind = RequestKind::kSend;
  mode = SendMode::kStandard;
  persistent = active = complete = user_freed = cancelled = handed = matched = xfer_started = false;
  cancel_state = 0;
  peruse_spec_ready = false;
  stream_asked = false;
  wait_all_index = -1;
  error = MPI_SUCCESS;
  since = 0;
  buf = nullptr;
  count = 0;
  type = nullptr;
  peer = 0;
  tag = 0;
  comm = nullptr;
  bytes = 0;
  status_source = MPI_ANY_SOURCE;
  status_tag = MPI_ANY_TAG;
  status_bytes = 0;
  on_complete = nullptr;
  owner = nullptr;
  world_peer = -1;
  staged = nullptr;
  coop_addr = coop_split = 0;
  coop_waiting = 0;
  sink.request = this;
  sink.message = nullptr;
  sink.contiguous = nullptr;
  item.request = this;
  item.header = transport::PacketHeader{};
  item.payload = nullptr;
  item.handed = 0;
}

Request* Engine::new_request(RequestKind kind) {
  Request* r = nullptr;
  int h = tables_.requests.allocate(&r);
  if (!h) return nullptr;
  r->reset();
  r->handle = h;
  r->kind = kind;
  return r;
}

Request* Engine::new_request(RequestKind kind, const void* buf, int64_t count, Datatype* type, int peer, int tag,
                             Comm* comm, SendMode mode) {
  Request* r = new_request(kind);
  if (!r) return nullptr;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  r->peer = peer;
  r->tag = tag;
  // A receive's pattern in the posted queue, should issue_recv post it.
  matching::PostedEntry& entry = *r;
  entry.source = peer;
  entry.tag = tag;
  r->comm = comm;
  r->mode = mode;
  // A derived type outlives MPI_Type_free while a request uses it.
  if (!type->predefined) retain_datatype(type);
  return r;
}

void Engine::release(Request* r) {
  if (r->staged) {
    std::free(r->staged);
    r->staged = nullptr;
  }
  if (r->type && !r->type->predefined) release_datatype(r->type);
  tables_.requests.release(r->handle);
}

void Engine::complete(Request* r) {
  uint32_t w = r->comm ? SONDE_WATCHED_MASK(r->comm->peruse) : 0;
  SONDE_DISPATCH(w, kCompleteEvents, complete_watched(r, w), complete_as<false>(r, 0));
}

void Engine::complete_watched(Request* r, uint32_t w) { complete_as<true>(r, w); }

// notify() saw REQ_NOTIFY's bit; the slot says whether it is still active.
void Engine::notify_watched(Request* r) { FIRE_REQ_IF(peruse::bit(PERUSE_COMM_REQ_NOTIFY), PERUSE_COMM_REQ_NOTIFY, r); }

void Engine::fill_recv_status(MPI_Status* status, int source, int tag, uint64_t bytes, bool cancelled) {
  if (status == MPI_STATUS_IGNORE || status == nullptr) return;
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  // MPI_ERROR is left alone: single-completion calls return the error
  // themselves, and the multiple-completion calls set it (binding/c/abi_requests.cc).
  status->sonde_cancelled = cancelled;
  status->sonde_count = static_cast<long long>(bytes);
}

void Engine::fill_status(const Request* r, MPI_Status* status) {
  // A send's status carries nothing but the error and cancel flag (MPI 3.7.3).
  const bool received = r->kind == RequestKind::kRecv || r->kind == RequestKind::kSendrecv;
  fill_recv_status(status, received ? r->status_source : MPI_ANY_SOURCE, received ? r->status_tag : MPI_ANY_TAG,
                   r->status_bytes, r->cancelled);
}

// ---------------------------------------------------------------- p2p.h

int start_send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm, SendMode mode,
               Request** out) {
  Request* r = engine().new_request(RequestKind::kSend, buf, count, type, dest, tag, comm, mode);
  *out = r;
  return r ? engine().issue_send(r) : MPI_ERR_INTERN;
}

int start_recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, Request** out) {
  Request* r = engine().new_request(RequestKind::kRecv, buf, count, type, source, tag, comm);
  *out = r;
  return r ? engine().issue_recv(r) : MPI_ERR_INTERN;
}

int wait(Request* r, MPI_Status* status) {
  Engine& e = engine();
  int idle = 0;
  while (!r->complete) {
    if (e.wait_pass(idle)) e.waiting_on(r);  // liveness
  }
  Engine::notify(r);
  Engine::fill_status(r, status);
  int rc = r->error;
  if (!r->persistent) e.release(r);
  return rc;
}

int wait_all(int n, Request** rs) {
  int rc = MPI_SUCCESS;
  for (int i = 0; i < n; ++i) {
    if (!rs[i]) continue;
    int one = wait(rs[i], MPI_STATUS_IGNORE);
    if (one && !rc) rc = one;
    rs[i] = nullptr;
  }
  return rc;
}

// A started request (possibly failed) -> its final error class.
static int wait_started(int rc, Request* r, MPI_Status* status) {
  if (!r) return rc;
  int w = wait(r, status);
  return rc ? rc : w;
}

int send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  Request* r = nullptr;
  int rc = start_send(buf, count, type, dest, tag, comm, SendMode::kStandard, &r);
  return wait_started(rc, r, MPI_STATUS_IGNORE);
}

int recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, MPI_Status* status) {
  Request* r = nullptr;
  int rc = start_recv(buf, count, type, source, tag, comm, &r);
  return wait_started(rc, r, status);
}

int sendrecv(const void* sbuf, int64_t scount, Datatype* stype, int dest, int stag, void* rbuf, int64_t rcount,
             Datatype* rtype, int source, int rtag, Comm* comm, MPI_Status* status) {
  Request *rr = nullptr, *sr = nullptr;
  int rc1 = start_recv(rbuf, rcount, rtype, source, rtag, comm, &rr);
  int rc2 = start_send(sbuf, scount, stype, dest, stag, comm, SendMode::kStandard, &sr);
  int w2 = wait_started(rc2, sr, MPI_STATUS_IGNORE);
  int w1 = wait_started(rc1, rr, status);
  return w1 ? w1 : w2;
}

int progress() { return engine().progress(); }

}  // namespace sonde::engine
