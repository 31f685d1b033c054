// PERUSE events and MPI_T counters of one-sided operations (events.h).
#include "rma/events.h"

#include <unordered_map>

#include "core/engine.h"
#include "core/introspect.h"
#include "peruse/dispatch.h"

namespace sonde::engine::rma {

namespace {
struct Fired {
  uint64_t uid;
  peruse_comm_spec_t spec;
  Comm* comm;
};
// Operations whose last events wait for an answer, by (window, id).
std::unordered_map<uint64_t, Fired>& awaiting() {
  static auto* m = new std::unordered_map<uint64_t, Fired>;
  return *m;
}
uint64_t key(Window* w, uint64_t id) { return (uint64_t(uint32_t(w->handle)) << 40) ^ id; }
}  // namespace

void fire_issue(Window* w, int operation, const void* buf, int64_t count, Datatype* type, int target, uint64_t bytes,
                bool answered, uint64_t id) {
  auto& c = introspect::rma_counters();
  ++c.operations;
  c.bytes += bytes;
  Comm* comm = w->comm;
  constexpr uint32_t kMask = peruse::bits_of(
      {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE});
  if (__builtin_expect((SONDE_WATCHED_MASK(comm->peruse) & kMask) == 0, 1)) return;
  const uint64_t uid = engine().new_id(Engine::kIdTransientRequest);
  const peruse_comm_spec_t spec =
      peruse::make_spec(comm->handle, buf, count, type->handle, target, MPI_ANY_TAG, operation);
  SONDE_FIRE_SPEC(comm->peruse, PERUSE_COMM_REQ_ACTIVATE, uid, spec);
  SONDE_FIRE_SPEC(comm->peruse, PERUSE_COMM_REQ_XFER_BEGIN, uid, spec);
  if (answered) {
    awaiting()[key(w, id)] = Fired{uid, spec, comm};
    return;
  }
  SONDE_FIRE_SPEC(comm->peruse, PERUSE_COMM_REQ_XFER_END, uid, spec);
  SONDE_FIRE_SPEC(comm->peruse, PERUSE_COMM_REQ_COMPLETE, uid, spec);
}

void fire_remote_done(Window* w, uint64_t id) {
  auto it = awaiting().find(key(w, id));
  if (it == awaiting().end()) return;
  Fired f = it->second;
  awaiting().erase(it);
  SONDE_FIRE_SPEC(f.comm->peruse, PERUSE_COMM_REQ_XFER_END, f.uid, f.spec);
  SONDE_FIRE_SPEC(f.comm->peruse, PERUSE_COMM_REQ_COMPLETE, f.uid, f.spec);
}

void count_epoch() { ++introspect::rma_counters().epochs; }

}  // namespace sonde::engine::rma
