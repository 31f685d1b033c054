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
#include "peruse/registry_state.h"

namespace sonde::peruse {

namespace {

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

}  // namespace

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

std::mutex& tool_lock() {
  static auto* m = new std::mutex();  // never destroyed: tools may hold it at exit
  return *m;
}

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
