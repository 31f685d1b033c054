// Generalized requests (grequest.h).
#include "core/grequest.h"

#include <unordered_map>

#include "core/engine.h"

namespace sonde::engine {

namespace {

struct Greq {
  MPI_Grequest_query_function* query;
  MPI_Grequest_free_function* free;
  MPI_Grequest_cancel_function* cancel;
  void* extra;
};
std::unordered_map<Request*, Greq>& greqs() {
  static auto* m = new std::unordered_map<Request*, Greq>;
  return *m;
}

}  // namespace

Request* start_generalized(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free,
                           MPI_Grequest_cancel_function* cancel, void* extra_state) {
  Request* r = engine().new_request(RequestKind::kGeneralized);
  if (!r) return nullptr;
  r->active = true;  // complete only when the user says so
  greqs()[r] = Greq{query, free, cancel, extra_state};
  return r;
}

int query_generalized(Request* r, MPI_Status* status) {
  auto it = greqs().find(r);
  if (it == greqs().end()) return MPI_ERR_REQUEST;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE || !status ? &local : status;
  // Defaults the query function may leave alone.
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  st->MPI_ERROR = MPI_SUCCESS;
  st->sonde_cancelled = 0;
  st->sonde_count = 0;
  return it->second.query ? it->second.query(it->second.extra, st) : MPI_SUCCESS;
}

namespace {
// free_fn, then forget the request (the caller releases it).
int run_free(Request* r) {
  auto it = greqs().find(r);
  if (it == greqs().end()) return MPI_SUCCESS;
  Greq g = it->second;
  greqs().erase(it);
  return g.free ? g.free(g.extra) : MPI_SUCCESS;
}
}  // namespace

int retire_generalized(MPI_Request* handle, Request* r, MPI_Status* status) {
  int rc = query_generalized(r, status);
  int rf = run_free(r);
  engine().release(r);
  *handle = MPI_REQUEST_NULL;
  return rc ? rc : rf;
}

int free_generalized(Request* r) {
  if (!r->complete) {
    r->user_freed = true;  // free_fn runs at MPI_Grequest_complete
    return MPI_SUCCESS;
  }
  int rc = run_free(r);
  engine().release(r);
  return rc;
}

int cancel_generalized(Request* r) {
  auto it = greqs().find(r);
  if (it == greqs().end() || !it->second.cancel) return MPI_SUCCESS;
  return it->second.cancel(it->second.extra, r->complete ? 1 : 0);
}

int complete_generalized(Request* r) {
  int rc = MPI_SUCCESS;
  if (r->user_freed) rc = run_free(r);  // Engine::complete releases it
  engine().complete(r);
  return rc;
}

}  // namespace sonde::engine
