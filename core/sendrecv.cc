// MPI_Isendrecv(_replace) and detached buffered sends (p2p.h): requests
// built from internal sends and receives.
#include <cstdlib>
#include <vector>

#include "core/engine.h"
#include "core/p2p.h"
#include "core/progress_hooks.h"

namespace sonde::engine {

// MPI_Bsend and friends: the data is copied out at once (issue_send stages
// it), and the transfer runs on a detached internal request that releases
// itself when done. Returns the error class of the copy-out.
int start_detached_bsend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  Request* inner = engine().new_request(RequestKind::kSend, buf, count, type, dest, tag, comm, SendMode::kBuffered);
  if (!inner) return MPI_ERR_INTERN;
  inner->user_freed = true;
  return engine().issue_send(inner);
}

namespace {

int progress_sendrecvs();
ProgressHook g_hook{progress_sendrecvs, 0};
struct Register {
  Register() { register_progress_hook(&g_hook); }
} g_register;

// One in flight: the user's request and the parts it waits for.
struct SendrecvFlight {
  Request* user;
  Request* send;  // null once the data has left (or at once, by send_now)
  Request* recv;
  uint8_t* copy;  // _replace: the packed outgoing data, sent from here
  int error;      // an error starting a part
};

std::vector<SendrecvFlight>& sendrecv_flights() {
  static std::vector<SendrecvFlight> v;
  return v;
}

bool flight_done(const SendrecvFlight& f) { return (!f.send || f.send->complete) && f.recv->complete; }

// Both parts are complete: the user's request takes the receive's status
// and the first error, and completes (and is released if the user freed it).
void finish_flight(SendrecvFlight& f) {
  Engine& e = engine();
  Request* q = f.user;
  q->status_source = f.recv->status_source;
  q->status_tag = f.recv->status_tag;
  q->status_bytes = f.recv->status_bytes;
  q->cancelled = f.recv->cancelled;
  int err = f.error ? f.error : f.recv->error;
  if (!err && f.send) err = f.send->error;
  q->error = err;
  e.release(f.recv);
  if (f.send) e.release(f.send);
  std::free(f.copy);
  e.complete(q);
}

int progress_sendrecvs() {
  std::vector<SendrecvFlight>& v = sendrecv_flights();
  int moved = 0;
  for (size_t i = 0; i < v.size();) {
    if (!flight_done(v[i])) {
      ++i;
      continue;
    }
    SendrecvFlight f = v[i];
    v[i] = v.back();
    v.pop_back();
    finish_flight(f);
    ++moved;
  }
  set_in_flight(&g_hook, int(v.size()));
  return moved;
}

}  // namespace

// Starts both parts; `copy` (malloc'ed, or null) is freed when the flight ends.
int start_isendrecv(const void* sendbuf, int64_t sendcount, Datatype* st, int dest, int sendtag, void* recvbuf,
                    int64_t recvcount, Datatype* rt, int source, int recvtag, Comm* c, uint8_t* copy,
                    MPI_Request* request) {
  Engine& e = engine();
  Request* q = e.new_request(RequestKind::kSendrecv);
  if (!q) {
    std::free(copy);
    return MPI_ERR_INTERN;
  }
  // No communicator on the user's request: PERUSE describes plain sends and
  // receives, and sees this call's two parts as such.
  q->active = true;
  SendrecvFlight f{q, nullptr, nullptr, copy, MPI_SUCCESS};
  int rc = start_recv(recvbuf, recvcount, rt, source, recvtag, c, &f.recv);
  if (!f.recv) {
    e.release(q);
    std::free(copy);
    return rc;
  }
  f.error = rc;
  if (!e.send_now(sendbuf, sendcount, st, dest, sendtag, c)) {
    rc = start_send(sendbuf, sendcount, st, dest, sendtag, c, SendMode::kStandard, &f.send);
    if (!f.error) f.error = rc;
    if (!f.send) {
      // The receive is posted and cannot be withdrawn once matched: let it
      // finish inside the flight, which then reports the send's error.
      if (!f.error) f.error = MPI_ERR_INTERN;
    }
  }
  *request = q->handle;
  if (flight_done(f)) {
    finish_flight(f);
  } else {
    sendrecv_flights().push_back(f);
    set_in_flight(&g_hook, int(sendrecv_flights().size()));
  }
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
