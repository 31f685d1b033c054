#include "peruse/registry.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "peruse/events.h"

namespace sonde::peruse {

namespace {

struct Handle {
  uint32_t generation = 0;
  bool live = false;
  int event = PERUSE_EVENT_INVALID;
  CommEvents* events = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  bool comm_freed = false;
  peruse_comm_callback_f* callback = nullptr;
  void* param = nullptr;
  bool active = false;
  bool propagate = false;
  bool twin = false;      // made by propagation, released with its communicator
  bool internal = false;  // an MPI_T bridge subscription (subscribe()): not a user handle
};

// Everything writers touch. Readers (dispatch.h, Reader) never take this lock.
struct Registry {
  std::mutex mutex;
  std::vector<Handle> handles{1};  // slot 0 is PERUSE_EVENT_HANDLE_NULL
  std::vector<uint32_t> free_slots;
  std::vector<const ActiveSet*> retired;
  EngineHooks hooks;
  bool initialized = false;
  std::vector<std::string> env;
  std::vector<char*> env_ptrs;
  CommObserver observer;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: callbacks may fire at exit
  return *r;
}

// ---- Readers and reclamation ------------------------------------------------
// Each thread that fires events has a depth word it alone writes (plain
// stores, no read-modify-write, no fence on x86; dispatch.h, Reader). A
// writer that retired an array publishes the replacement, then issues an
// asymmetric fence (membarrier: a full barrier on every running thread of
// the process), then reads every depth word: a reader that entered before
// the fence is seen (depth != 0, reclamation waits); one that enters after
// it loads the new array. Where membarrier is unavailable readers use a full
// fence instead (detail::enter_slow), and under TSan (which cannot see it)
// seq_cst read-modify-writes; the same argument holds.
using detail::kDenied;
using detail::ReaderSlot;
using detail::t_state;

#if defined(__SANITIZE_THREAD__)
constexpr bool kMayUseMembarrier = false;
#else
constexpr bool kMayUseMembarrier = true;
#endif
std::atomic<bool> g_membarrier{false};

std::mutex g_readers_mutex;
std::vector<ReaderSlot*>& reader_slots() {
  static auto* v = new std::vector<ReaderSlot*>();  // slots outlive their threads (depth 0)
  return *v;
}

// Writer side: true when no reader can still hold a retired array.
bool no_reader_inside() {
#if defined(__SANITIZE_THREAD__)
  // Readers use seq_cst read-modify-writes; seq_cst loads complete the pair.
  std::lock_guard<std::mutex> g(g_readers_mutex);
  for (ReaderSlot* r : reader_slots())
    if (r->depth.load(std::memory_order_seq_cst) != 0) return false;
  return true;
#else
  if (g_membarrier.load(std::memory_order_relaxed)) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  std::lock_guard<std::mutex> g(g_readers_mutex);
  for (ReaderSlot* r : reader_slots())
    if (r->depth.load(std::memory_order_acquire) != 0) return false;
  return true;
#endif
}

size_t set_bytes(uint32_t n) { return sizeof(ActiveSet) + (n ? n - 1 : 0) * sizeof(Entry); }

void free_retired(Registry& r) {
  for (const ActiveSet* s : r.retired) std::free(const_cast<ActiveSet*>(s));
  r.retired.clear();
}

// An array replaced in its slot: freed as soon as no reader can hold it.
void retire(Registry& r, const ActiveSet* old) {
  if (old) r.retired.push_back(old);
  if (!r.retired.empty() && no_reader_inside()) free_retired(r);
}

// A free handle slot, its generation bumped (caller holds r.mutex).
uint32_t allocate_slot(Registry& r, uint32_t* generation) {
  uint32_t slot;
  if (!r.free_slots.empty()) {
    slot = r.free_slots.back();
    r.free_slots.pop_back();
  } else {
    slot = static_cast<uint32_t>(r.handles.size());
    r.handles.emplace_back();
  }
  *generation = r.handles[slot].generation + 1;
  return slot;
}

peruse_event_h handle_value(uint32_t generation, size_t slot) {
  return (static_cast<long>(generation) << 32) | static_cast<long>(slot);
}

// A new live, inactive handle (caller holds r.mutex); *out (if given) is
// valid until the handle table next grows.
peruse_event_h new_handle(Registry& r, int event, CommEvents* events, MPI_Comm comm, peruse_comm_callback_f* callback,
                          void* param, Handle** out) {
  uint32_t gen;
  uint32_t slot = allocate_slot(r, &gen);
  Handle& h = r.handles[slot];
  h = Handle{};
  h.generation = gen;
  h.live = true;
  h.event = event;
  h.events = events;
  h.comm = comm;
  h.callback = callback;
  h.param = param;
  if (out) *out = &h;
  return handle_value(gen, slot);
}

// Rebuild and publish the array of active handles of (events, event).
// Caller holds r.mutex.
void republish(Registry& r, CommEvents* events, int event) {
  uint32_t n = 0;
  for (size_t i = 1; i < r.handles.size(); ++i) {
    const Handle& h = r.handles[i];
    if (h.live && h.active && !h.comm_freed && h.events == events && h.event == event) ++n;
  }
  ActiveSet* set = nullptr;
  if (n) {
    set = static_cast<ActiveSet*>(std::malloc(set_bytes(n)));
    if (!set) {
      std::fprintf(stderr, "sonde: PERUSE: out of memory publishing a dispatch array\n");
      std::abort();
    }
    set->count = 0;
    set->event = event;
    for (size_t i = 1; i < r.handles.size(); ++i) {
      const Handle& h = r.handles[i];
      if (h.live && h.active && !h.comm_freed && h.events == events && h.event == event) {
        set->comm = h.comm;
        set->entries[set->count++] = {handle_value(h.generation, i), h.callback, h.param};
      }
    }
    set->call = set->count == 1 ? set->entries[0] : Entry{PERUSE_EVENT_HANDLE_NULL, &detail::fan_out, set};
  }
  const ActiveSet* old = events->slot[event].exchange(set, std::memory_order_seq_cst);
  // The mask follows the slots (writers are serialised by r.mutex).
  uint32_t mask = events->watched.load(std::memory_order_relaxed);
  mask = set ? (mask | bit(event)) : (mask & ~bit(event));
  events->watched.store(mask, std::memory_order_seq_cst);
  retire(r, old);
}

std::mutex g_tool_lock;

}  // namespace

// ---------------------------------------------------------------- readers

namespace detail {

constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;

Entered enter_slow() {
  ReaderSlot* me = t_state.reader;
  if (!me) me = t_state.fenced;
  if (!me) {
    me = new ReaderSlot();
    {
      std::lock_guard<std::mutex> g(g_readers_mutex);
      reader_slots().push_back(me);
    }
    // Writers have used membarrier since install_hooks; a slot registered
    // before that fences for good.
    if (g_membarrier.load(std::memory_order_acquire)) t_state.reader = me;
    else t_state.fenced = me;
  }
  const uint32_t outer = me->depth.load(std::memory_order_relaxed);
  const uint32_t inside = (outer & ~kDenied) + 1;
#if defined(__SANITIZE_THREAD__)
  me->depth.exchange(inside, std::memory_order_seq_cst);
#else
  me->depth.store(inside, std::memory_order_relaxed);
  if (t_state.reader == me) std::atomic_signal_fence(std::memory_order_seq_cst);
  else std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  return {me, outer};
}

int fan_out(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param) {
  const auto* set = static_cast<const ActiveSet*>(param);
  // The dispatcher's section is open and no callback of this upcall has run:
  // the depth word holds the section's "inside" value.
  ReaderSlot* me = current_slot();
  const uint32_t inside = me->depth.load(std::memory_order_relaxed);
  const Entry* e = set->entries;
  const Entry* const last = e + (set->count - 1);
  for (; e != last; ++e) {
    peruse_comm_spec_t copy = *spec;  // callbacks may scribble on their spec
    int rc = e->callback(e->handle, unique_id, &copy, e->param);
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) return rc;
    me->depth.store(inside, std::memory_order_relaxed);  // each callback is its own upcall: clears kDenied
  }
  return e->callback(e->handle, unique_id, spec, e->param);
}

void callback_failed(const ActiveSet* set, int rc, ReaderSlot* me, uint32_t outer) {
  me->depth.store(outer, std::memory_order_release);  // the upcall is over
  Registry& r = registry();
  std::string name = r.hooks.comm_name ? r.hooks.comm_name(set->comm) : std::to_string(set->comm);
  char msg[512];
  std::snprintf(msg, sizeof msg,
                "sonde: PERUSE callback for %s on communicator %s returned %d (not MPI_SUCCESS); ending the job",
                event_name(set->event), name.c_str(), rc);
  if (r.hooks.fatal) r.hooks.fatal(msg, rc);
  std::fprintf(stderr, "%s\n", msg);
  std::_Exit(1);
}

}  // namespace detail

void fire_slow(const CommEvents& events, int event, uint64_t unique_id, peruse_comm_spec_t& spec) {
  fire(events, event, unique_id, spec);
}

bool inside_upcall() {
  const ReaderSlot* me = detail::current_slot();
  return me && me->depth.load(std::memory_order_relaxed) != 0;
}

// ---------------------------------------------------------------- engine side

void install_hooks(const EngineHooks& hooks) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  r.hooks = hooks;
  if (kMayUseMembarrier && !g_membarrier.load(std::memory_order_relaxed)) {
    long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
      g_membarrier.store(true, std::memory_order_release);
    }
  }
}

void set_environment(const std::vector<std::string>& env) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  r.env = env;
  r.env_ptrs.clear();
  for (std::string& s : r.env) r.env_ptrs.push_back(s.data());
}

void comm_duplicated(CommEvents& parent, CommEvents& child, MPI_Comm child_handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  bool touched[kNumEvents] = {};
  size_t n = r.handles.size();
  for (size_t i = 1; i < n; ++i) {
    Handle h = r.handles[i];  // copy: the vector may grow below
    if (!h.live || h.comm_freed || h.events != &parent || !h.propagate) continue;
    uint32_t gen;
    Handle& t = r.handles[allocate_slot(r, &gen)];
    t = h;
    t.generation = gen;
    t.events = &child;
    t.comm = child_handle;
    t.twin = true;
    touched[h.event] = true;
  }
  for (int e = 0; e < kNumEvents; ++e)
    if (touched[e]) republish(r, &child, e);
}

void comm_freed(CommEvents& events, MPI_Comm handle) {
  Registry& r = registry();
  if (r.observer.freed) r.observer.freed(events, handle);  // outside r.mutex: it unsubscribes
  std::lock_guard<std::mutex> g(r.mutex);
  for (size_t i = 1; i < r.handles.size(); ++i) {
    Handle& h = r.handles[i];
    if (!h.live || h.events != &events) continue;
    h.comm_freed = true;
    h.events = nullptr;  // the block will belong to another communicator
    if (h.twin || h.internal) {
      h.live = false;
      r.free_slots.push_back(static_cast<uint32_t>(i));
    }
  }
  events.watched.store(0, std::memory_order_seq_cst);
  for (int e = 0; e < kNumEvents; ++e) {
    const ActiveSet* old = events.slot[e].exchange(nullptr, std::memory_order_seq_cst);
    if (old) r.retired.push_back(old);
  }
  retire(r, nullptr);  // one fence for all of them
}

void comm_created(CommEvents& events, MPI_Comm handle) {
  CommObserver observer;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    observer = r.observer;
  }
  if (observer.created) observer.created(events, handle);
}

void set_comm_observer(const CommObserver& observer) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  r.observer = observer;
}

peruse_event_h subscribe(CommEvents& events, MPI_Comm comm, int event, peruse_comm_callback_f* callback, void* param) {
  if (!event_supported(event)) return PERUSE_EVENT_HANDLE_NULL;
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  Handle* h;
  peruse_event_h id = new_handle(r, event, &events, comm, callback, param, &h);
  h->internal = true;
  h->active = true;
  republish(r, &events, event);
  return id;
}

void unsubscribe(peruse_event_h id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  unsigned long v = static_cast<unsigned long>(id);
  uint32_t index = static_cast<uint32_t>(v & 0xffffffffu);
  uint32_t gen = static_cast<uint32_t>(v >> 32);
  if (index == 0 || index >= r.handles.size()) return;
  Handle& h = r.handles[index];
  if (!h.live || !h.internal || h.generation != gen) return;  // already released with its communicator
  h.live = false;
  h.active = false;
  r.free_slots.push_back(index);
  if (!h.comm_freed) republish(r, h.events, h.event);
}

}  // namespace sonde::peruse

// ---------------------------------------------------------------- the C API

using namespace sonde::peruse;

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
  g_tool_lock.lock();
  t_state.holds_tool_lock = true;
  return PERUSE_SUCCESS;
}

SONDE_API int PERUSE_Unlock(void) {
  // No init check: a lock taken before MPI_Finalize can still be released.
  if (!t_state.holds_tool_lock) return PERUSE_ERR_UNLOCK;
  t_state.holds_tool_lock = false;
  g_tool_lock.unlock();
  return PERUSE_SUCCESS;
}

}  // extern "C"
