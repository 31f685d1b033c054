// C ABI: the life of point-to-point requests (MPI 4.1 sections 3.7-3.9):
// starting persistent requests, the wait and test families, freeing,
// MPI_Request_get_status, cancelling, and the status queries
// MPI_Test_cancelled and MPI_Get_count(_c). Generalized requests
// (core/grequest.h) and nonblocking collectives' requests pass through the
// same calls.
#include <climits>
#include <memory>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "core/grequest.h"
#include "core/p2p.h"

using namespace sonde::engine;

namespace {

void empty_status(MPI_Status* s) {
  if (!s || s == MPI_STATUS_IGNORE) return;
  s->MPI_SOURCE = MPI_ANY_SOURCE;
  s->MPI_TAG = MPI_ANY_TAG;
  s->MPI_ERROR = MPI_SUCCESS;
  s->sonde_cancelled = 0;
  s->sonde_count = 0;
}

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
    if (e.wait_pass(idle)) e.waiting_on(r);  // watch the peers' liveness
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
    case Slot::kNull:
      *flag = 1;
      empty_status(status);
      return MPI_SUCCESS;
    case Slot::kInvalid: return raise(nullptr, MPI_ERR_REQUEST, fn);
    case Slot::kLive: break;
  }
  if (!r->complete && engine().fruitless(engine().progress())) engine().waiting_on(r);  // watch the peers' liveness
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

// Liveness: a wait or test loop on several requests that goes idle
// watches the peers of every one still incomplete (Engine::waiting_on).
static void watch_pending(int count, MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    if (classify(reqs[i], &r) == Slot::kLive && !r->complete) engine().waiting_on(r);
  }
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status* array_of_statuses) {
  SONDE_ENTER("MPI_Waitall");
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (count > 0 && !array_of_requests) return raise(nullptr, MPI_ERR_ARG, fn);
  auto status_of = [&](int i) {
    return array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[i];
  };
  // Every handle is checked before any request is waited for. The check
  // keeps what it looked up (null: nothing left to wait for) and marks the
  // request as listed; with the engine's completion notes, by its index.
  Engine& e = engine();
  const bool noting = e.claim_wait_all_notes();
  constexpr int kOnStack = 64;
  Request* on_stack[kOnStack];
  std::unique_ptr<Request*[]> on_heap(count > kOnStack ? new Request*[size_t(count)] : nullptr);
  Request** live = count > kOnStack ? on_heap.get() : on_stack;
  for (int i = 0; i < count; ++i) {
    Request* r = nullptr;
    const Slot slot = classify(array_of_requests[i], &r);
    if (slot == Slot::kInvalid) {
      for (int j = 0; j < i; ++j)
        if (live[j]) live[j]->wait_all_index = -1;
      if (noting) e.drop_wait_all_notes();
      return raise(nullptr, MPI_ERR_REQUEST, fn);
    }
    // A request listed twice (erroneous) is retired once; its second entry
    // gets an empty status, as a null handle does.
    live[i] = slot == Slot::kLive && r->wait_all_index == -1 ? r : nullptr;
    if (live[i]) r->wait_all_index = noting ? i : Request::kListedInWaitAll;
    else empty_status(status_of(i));
  }
  bool any_error = false;
  auto retire_at = [&](int i) {
    Request* r = live[i];
    live[i] = nullptr;
    r->wait_all_index = -1;
    MPI_Status* st = status_of(i);
    int rc = retire(&array_of_requests[i], r, st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
    if (rc) any_error = true;
  };
  // Requests that completed since the last look, retired while their lines
  // are in cache; the walk below then finds their entries done. (A request
  // that completes without a note is still found by the walk.)
  auto retire_noted = [&] {
    if (!noting) return;
    std::vector<Request*>& done = e.wait_all_notes();
    for (size_t k = 0; k < done.size(); ++k) {  // retiring may append (a generalized request's callbacks)
      Request* r = done[k];
      const int i = r->wait_all_index;
      if (i >= 0 && i < count && live[i] == r && r->complete) retire_at(i);
    }
    done.clear();
  };
  // Going idle watches the peers of the requests still pending, once per
  // call (a watch is kept; more walks would cost O(n) per idle spell).
  int idle = 0;
  bool watched = false;
  retire_noted();
  for (int i = 0; i < count; ++i) {
    while (live[i] && !live[i]->complete) {
      if (e.wait_pass(idle) && !watched) {  // watch the peers' liveness
        watch_pending(count - i, array_of_requests + i);
        watched = true;
      }
      retire_noted();
    }
    if (live[i]) retire_at(i);
  }
  if (noting) e.drop_wait_all_notes();
  return finish(nullptr, any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS, fn);
}
SONDE_WEAK_ALIAS(Waitall)

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status* array_of_statuses) {
  SONDE_ENTER("MPI_Testall");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(count, array_of_requests);  // watch the peers' liveness
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
    if (e.wait_pass(idle)) watch_pending(count, array_of_requests);  // watch the peers' liveness
  }
}
SONDE_WEAK_ALIAS(Waitany)

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  SONDE_ENTER("MPI_Testany");
  if (!index || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(count, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(count, array_of_requests);  // watch the peers' liveness
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
                  MPI_Status* array_of_statuses) {
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
    if (e.wait_pass(idle)) watch_pending(incount, array_of_requests);  // watch the peers' liveness
  }
  return finish(nullptr, collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses), fn);
}
SONDE_WEAK_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                  MPI_Status* array_of_statuses) {
  SONDE_ENTER("MPI_Testsome");
  if (!outcount || (incount > 0 && !array_of_indices)) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = validate_array(incount, array_of_requests);
  if (rc) return raise(nullptr, rc, fn);
  if (engine().fruitless(engine().progress())) watch_pending(incount, array_of_requests);  // watch the peers' liveness
  return finish(nullptr, collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses), fn);
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
    case Slot::kNull:
      *flag = 1;
      empty_status(status);
      return MPI_SUCCESS;
    case Slot::kInvalid: return raise(nullptr, MPI_ERR_REQUEST, fn);
    case Slot::kLive: break;
  }
  if (!r->complete && engine().fruitless(engine().progress())) engine().waiting_on(r);  // watch the peers' liveness
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
             engine().router().to(r->world_peer)->dequeue(r->world_peer, &r->item)) {
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

// ---- MPI_Get_count (MPI 4.1 section 3.2.5) ----

// Whole elements of `datatype` in a status (MPI_UNDEFINED if not whole).
static int count_of(const MPI_Status* status, MPI_Datatype datatype, int64_t* count) {
  if (!status || status == MPI_STATUS_IGNORE || !count) return MPI_ERR_ARG;
  Datatype* t = find_datatype(datatype);
  if (!t) return MPI_ERR_TYPE;
  long long bytes = status->sonde_count;
  if (t->huge_size) {
    *count = bytes == 0 ? 0 : MPI_UNDEFINED;  // fewer bytes than one element
  } else if (t->size == 0) {
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

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SONDE_ENTER("MPI_Get_count_c");
  int64_t n;
  int rc = count_of(status, datatype, count ? &n : nullptr);
  if (rc) return raise(nullptr, rc, fn);
  *count = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_count_c)

}  // extern "C"
