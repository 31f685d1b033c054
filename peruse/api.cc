// The PERUSE C interface (PERUSE 2.0 section 4): queries, event handles,
// callbacks, activation, propagation and the tool lock, over the registry
// (registry_state.h).
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "peruse/events.h"
#include "peruse/registry.h"
#include "peruse/registry_state.h"

// ---------------------------------------------------------------- the C API

using namespace sonde::peruse;
using sonde::peruse::detail::kDenied;
using sonde::peruse::detail::ReaderSlot;
using sonde::peruse::detail::t_state;

namespace {

// Resolve a user's handle. Returns a PERUSE code; on success *out is the slot.
int resolve(peruse_event_h h, Handle** out) {
  Registry& r = registry();
  if (h == PERUSE_EVENT_HANDLE_NULL) return PERUSE_ERR_EVENT_HANDLE;
  unsigned long v = static_cast<unsigned long>(h);
  uint32_t index = static_cast<uint32_t>(v & 0xffffffffu);
  uint32_t gen = static_cast<uint32_t>(v >> 32);
  if (index == 0 || index >= r.handles.size()) return PERUSE_ERR_EVENT_HANDLE;
  Handle& s = r.handles[index];
  if (!s.live || s.internal || s.generation != gen) return PERUSE_ERR_EVENT_HANDLE;
  *out = &s;
  return s.comm_freed ? PERUSE_ERR_MPI_OBJECT : PERUSE_SUCCESS;
}

int mpi_state() {
  Registry& r = registry();
  return r.hooks.mpi_state ? r.hooks.mpi_state() : 0;
}

// Every call but PERUSE_Init needs MPI running and PERUSE_Init done.
int ready(Registry& r) {
  if (!r.hooks.mpi_state || r.hooks.mpi_state() != 1) return PERUSE_ERR_MPI_INIT;
  if (!r.initialized) return PERUSE_ERR_INIT;
  return PERUSE_SUCCESS;
}

}  // namespace

extern "C" {

SONDE_API int PERUSE_Init(void) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  if (mpi_state() != 1) return PERUSE_ERR_MPI_INIT;
  r.initialized = true;  // later calls (other tools, layers) are harmless
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Query_supported_events(int* num_supported, char*** event_names, int** events) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!num_supported || !event_names || !events) return PERUSE_ERR_PARAMETER;
  *num_supported = supported_count();
  *event_names = supported_count() ? supported_names() : nullptr;
  *events = supported_count() ? supported_ids() : nullptr;
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Query_event(const char* event_name, int* event) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!event) return PERUSE_ERR_PARAMETER;
  int id = event_name ? event_by_name(event_name) : PERUSE_EVENT_INVALID;
  *event = id;
  return id == PERUSE_EVENT_INVALID ? PERUSE_ERR_EVENT : PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Query_event_name(int event, char** event_name) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!event_name) return PERUSE_ERR_PARAMETER;
  if (!event_supported(event)) {
    *event_name = nullptr;
    return PERUSE_ERR_EVENT;
  }
  *event_name = const_cast<char*>(event_name_of(event));
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Query_environment(int* env_size, char*** env) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!env_size || !env) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  *env_size = static_cast<int>(r.env_ptrs.size());
  *env = r.env_ptrs.empty() ? nullptr : r.env_ptrs.data();
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Query_queue_event_scope(int* scope) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!scope) return PERUSE_ERR_PARAMETER;
  *scope = PERUSE_PER_COMM;  // every communicator has its own queues
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Event_comm_register(int event, MPI_Comm comm, peruse_comm_callback_f* callback_fn, void* param,
                                         peruse_event_h* event_h) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!event_supported(event)) return PERUSE_ERR_EVENT;
  // The communicator must stay alive from lookup to registration.
  struct EngineGuard {
    const EngineHooks& h;
    explicit EngineGuard(const EngineHooks& hooks) : h(hooks) {
      if (h.lock_engine) h.lock_engine();
    }
    ~EngineGuard() {
      if (h.unlock_engine) h.unlock_engine();
    }
  } engine_guard(r.hooks);
  CommEvents* events = r.hooks.find_comm ? r.hooks.find_comm(comm) : nullptr;
  if (!events) return PERUSE_ERR_COMM;
  if (!callback_fn || !event_h) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  *event_h = new_handle(r, event, events, comm, callback_fn, param, nullptr);
  return PERUSE_SUCCESS;
}

static int set_active(peruse_event_h event_h, bool active) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  if (h->active == active) return PERUSE_SUCCESS;
  h->active = active;
  republish(r, h->events, h->event);
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Event_activate(peruse_event_h event_h) { return set_active(event_h, true); }
SONDE_API int PERUSE_Event_deactivate(peruse_event_h event_h) { return set_active(event_h, false); }

SONDE_API int PERUSE_Event_release(peruse_event_h* event_h) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!event_h) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  int rc = resolve(*event_h, &h);
  if (rc == PERUSE_ERR_EVENT_HANDLE) return rc;
  // Released even when its communicator is gone (then the caller also learns
  // that with PERUSE_ERR_MPI_OBJECT): nothing leaks.
  bool was_active = h->active && !h->comm_freed;
  CommEvents* events = h->events;
  int event = h->event;
  h->live = false;
  h->active = false;
  r.free_slots.push_back(static_cast<uint32_t>(static_cast<unsigned long>(*event_h) & 0xffffffffu));
  if (was_active) republish(r, events, event);
  *event_h = PERUSE_EVENT_HANDLE_NULL;
  return rc;
}

SONDE_API int PERUSE_Event_comm_callback_set(peruse_event_h event_h, peruse_comm_callback_f* callback_fn, void* param) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  if (h->active) return PERUSE_ERR_EVENT_HANDLE;  // only while inactive (5.1.2)
  if (!callback_fn) return PERUSE_ERR_PARAMETER;
  h->callback = callback_fn;
  h->param = param;
  return PERUSE_SUCCESS;
}

// Allowed on active and inactive handles, as section 5.1.2 says (5.2.14's
// "or is active" repeats callback_set's rule by mistake: reading cannot race).
SONDE_API int PERUSE_Event_comm_callback_get(peruse_event_h event_h, peruse_comm_callback_f** callback_fn,
                                             void** param) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!callback_fn || !param) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  *callback_fn = h->callback;
  *param = h->param;
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Event_get(peruse_event_h event_h, int* event) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!event) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  *event = h->event;
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Event_object_get(peruse_event_h event_h, void** mpi_object) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  if (!mpi_object) return PERUSE_ERR_PARAMETER;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  *mpi_object = reinterpret_cast<void*>(static_cast<intptr_t>(h->comm));
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Event_propagate(peruse_event_h event_h, int mode) {
  Registry& r = registry();
  if (int rc = ready(r)) return rc;
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  if (int rc = resolve(event_h, &h)) return rc;
  if (h->active) return PERUSE_ERR_EVENT_HANDLE;  // only while inactive (5.2.15)
  h->propagate = mode != 0;
  return PERUSE_SUCCESS;
}

// One tool mutex (5.2.16). Inside an upcall, a thread that already holds it
// would deadlock on itself: that upcall gets PERUSE_ERR_LOCK_NOT_GRANTABLE,
// and keeps getting it until the upcall returns.
SONDE_API int PERUSE_Lock(void) {
  // MPI running and PERUSE_Init first (5.2.1): PERUSE_ERR_MPI_INIT or
  // PERUSE_ERR_INIT, as every other call answers.
  if (int rc = ready(registry())) return rc;
  ReaderSlot* me = detail::current_slot();
  const uint32_t depth = me ? me->depth.load(std::memory_order_relaxed) : 0;
  if (depth != 0 && (t_state.holds_tool_lock || (depth & kDenied))) {  // inside an upcall
    me->depth.store(depth | kDenied, std::memory_order_relaxed);
    return PERUSE_ERR_LOCK_NOT_GRANTABLE;
  }
  if (t_state.holds_tool_lock) return PERUSE_ERR_LOCK;  // outside an upcall: would self-deadlock
  tool_lock().lock();
  t_state.holds_tool_lock = true;
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Unlock(void) {
  // No init check: a lock taken before MPI_Finalize can still be released.
  if (!t_state.holds_tool_lock) return PERUSE_ERR_UNLOCK;
  t_state.holds_tool_lock = false;
  tool_lock().unlock();
  return PERUSE_SUCCESS;
}

}  // extern "C"
