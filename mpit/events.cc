// MPI_T events: one event type per PERUSE event, raised from the same
// instrumentation point through an internal PERUSE subscriber.
//
// Where callbacks run (docs/mpit.md, "Where event callbacks run"): an event
// is raised inside the engine (on the thread driving progress, engine lock
// held under MPI_THREAD_MULTIPLE), where a callback must not call MPI. A
// registration's callback for the least demanding level that fits that
// context (MPI_RESTRICTED, then THREAD_SAFE, then ASYNC_SIGNAL_SAFE) runs
// there at once, and is told MPI_T_CB_REQUIRE_MPI_RESTRICTED. A registration
// whose only callback is MPI_T_CB_REQUIRE_NONE (it may call MPI) has its
// instances buffered (at most the cvar sonde_mpit_event_buffer per
// registration), tagged with the raising thread, and delivered:
//   - when the MPI call that raised them returns to the user: after the
//     engine lock is released, on the same thread, in the order raised
//     (core/process.h; an MPI call made while this thread holds the
//     engine lock, as from an error handler, leaves them to the outer call);
//   - otherwise (raised on a thread that is not in an MPI call, or during a
//     call that returns no ABI function's way) at the next MPI_T call any
//     thread makes outside a callback, and at MPI_T_event_handle_free and
//     MPI_T_finalize.
// Instances that do not fit are dropped and counted (saturating); the
// dropped handler is told at the next delivery.
//
// Nothing is subscribed until a registration has a callback, so event types
// nobody listens to cost nothing; with no instance waiting, an MPI call's
// return costs one load and a branch.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <deque>

#include "base/weak_alias.h"
#include "core/introspect.h"
#include "core/process.h"
#include "mpit/state.h"
#include "peruse/registry.h"

namespace sonde::mpit {

namespace {

constexpr int kLevels = 4;  // MPI_T_cb_safety values

struct Callback {
  MPI_T_event_cb_function* fn = nullptr;
  void* user_data = nullptr;
};

struct Instance {
  EventRecord record{};
  MPI_T_event_registration registration = nullptr;
  pthread_t raiser{};  // the thread whose MPI call raised it
};

struct Registration {
  uint32_t index = 0;  // its own slot
  int event_index = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  Callback callbacks[kLevels];
  MPI_T_event_dropped_cb_function* dropped_handler = nullptr;
  peruse_event_h subscription = PERUSE_EVENT_HANDLE_NULL;
  size_t buffered = 0;   // its instances waiting in pending() for the NONE callback
  uint64_t dropped = 0;  // not yet reported to the dropped handler (saturating)
};

void saturating_increment(uint64_t& v) {
  if (v != UINT64_MAX) ++v;
}

using RegSlot = Slots<Registration>::Slot;

Slots<Registration>& registrations() {
  static auto* s = new Slots<Registration>();
  return *s;
}

std::atomic<bool> g_pending{false};  // some registration has buffered instances or drops

// Instances waiting for MPI_T_CB_REQUIRE_NONE callbacks, every
// registration's, in the order raised (under mutex()).
std::deque<Instance>& pending() {
  static auto* d = new std::deque<Instance>();
  return *d;
}
uint64_t g_dropped_total = 0;  // pvar sonde_mpit_events_dropped; under mutex(), saturating

// Per thread: the instance a callback on this thread may read
// (MPI_T_event_read etc.) and how deep in callbacks the thread is. Kept
// behind a pthread key rather than a thread_local: libsonde.so is linked by
// gold, which writes R_X86_64_TPOFF64 relocations of local initial-exec TLS
// without their addend, so PERUSE's initial-exec t_state must stay at
// offset 0 of the library's TLS block, and any other thread_local would
// share its bytes.
struct CallbackState {
  const Instance* current = nullptr;
  int depth = 0;
};
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
CallbackState& callback_state() {
  pthread_once(&g_key_once, [] { pthread_key_create(&g_key, [](void* p) { delete static_cast<CallbackState*>(p); }); });
  auto* s = static_cast<CallbackState*>(pthread_getspecific(g_key));
  if (!s) {
    s = new CallbackState();
    pthread_setspecific(g_key, s);
  }
  return *s;
}

MPI_T_event_registration handle_of(uint32_t i) {
  return make<MPI_T_event_registration>(registrations().at(i).generation, i);
}

void invoke(const Callback& cb, const Instance& inst, MPI_T_cb_safety level) {
  CallbackState& st = callback_state();
  const Instance* saved = st.current;
  st.current = &inst;
  ++st.depth;
  cb.fn(reinterpret_cast<MPI_T_event_instance>(const_cast<Instance*>(&inst)), inst.registration, level, cb.user_data);
  --st.depth;
  st.current = saved;
}

// The internal PERUSE subscriber of one registration (param: its slot).
int on_peruse_event(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param) {
  auto* slot = static_cast<RegSlot*>(param);
  Instance inst;
  Callback cb;
  {
    std::lock_guard<std::recursive_mutex> g(mutex());
    if (!slot->live) return MPI_SUCCESS;
    Registration& r = slot->value;
    inst.record = {uint64_t(unique_id), spec->peer,      spec->tag, int64_t(spec->count),
                   spec->datatype,      spec->operation, now_ns()};
    inst.registration = make<MPI_T_event_registration>(slot->generation, r.index);
    for (int level = MPI_T_CB_REQUIRE_MPI_RESTRICTED; level < kLevels; ++level) {
      if (r.callbacks[level].fn) {
        cb = r.callbacks[level];
        break;
      }
    }
    if (!cb.fn) {
      if (!r.callbacks[MPI_T_CB_REQUIRE_NONE].fn) return MPI_SUCCESS;
      if (r.buffered < event_buffer_capacity()) {
        inst.raiser = pthread_self();
        ++r.buffered;
        pending().push_back(inst);
      } else {
        saturating_increment(r.dropped);
        saturating_increment(g_dropped_total);
      }
      g_pending.store(true, std::memory_order_release);
      engine::request_call_return();
      return MPI_SUCCESS;
    }
  }
  invoke(cb, inst, MPI_T_CB_REQUIRE_MPI_RESTRICTED);
  return MPI_SUCCESS;
}

// Subscribe while the registration has a callback, unsubscribe when none.
void update_subscription(uint32_t i) {
  Registration& r = registrations().at(i).value;
  bool any = false;
  for (const Callback& c : r.callbacks) any = any || c.fn;
  if (any && r.subscription == PERUSE_EVENT_HANDLE_NULL) {
    peruse::CommEvents* ce = mpi_state() == 1 ? engine::introspect::comm_events(r.comm) : nullptr;
    if (!ce) return;  // the communicator is gone: nothing will ever fire
    r.subscription = peruse::subscribe(*ce, r.comm, events()[size_t(r.event_index)].peruse_event, on_peruse_event,
                                       &registrations().at(i));
  } else if (!any && r.subscription != PERUSE_EVENT_HANDLE_NULL) {
    peruse::unsubscribe(r.subscription);
    r.subscription = PERUSE_EVENT_HANDLE_NULL;
  }
}

bool valid_level(int level) { return level >= MPI_T_CB_REQUIRE_NONE && level < kLevels; }

// Checks an instance handle: only the one being delivered on this thread.
const Instance* instance(MPI_T_event_instance h) {
  const Instance* current = callback_state().current;
  return h && reinterpret_cast<const Instance*>(h) == current ? current : nullptr;
}

}  // namespace

void deliver_buffered_events(bool own_thread_only);

uint64_t events_dropped_total() {
  std::lock_guard<std::recursive_mutex> g(mutex());
  return g_dropped_total;
}

void deliver_deferred_events() { deliver_buffered_events(false); }

void deliver_at_call_return() {
  // An MPI call made while this thread holds the engine lock (from an error
  // handler, say) is inside another call: that one delivers.
  if (engine::EngineLock::held_by_me()) return;
  deliver_buffered_events(true);
}

void deliver_buffered_events(bool own_thread_only) {
  // Never from inside the engine (an MPI_T call made by any callback) nor
  // from our own deliveries: these callbacks may call MPI.
  if (!g_pending.load(std::memory_order_acquire) || callback_state().depth > 0 || peruse::inside_upcall()) return;
  if (!initialized()) return;
  struct Drops {
    MPI_T_event_registration registration;
    uint64_t count;
  };
  std::deque<Instance> work;
  std::vector<Drops> drops;
  {
    std::lock_guard<std::recursive_mutex> g(mutex());
    const pthread_t self = pthread_self();
    std::deque<Instance> keep;  // other threads' instances stay buffered
    for (Instance& inst : pending()) {
      if (own_thread_only && !pthread_equal(inst.raiser, self)) {
        keep.push_back(inst);
        continue;
      }
      if (auto* s = registrations().find(inst.registration); s && s->value.buffered) --s->value.buffered;
      work.push_back(inst);
    }
    pending() = std::move(keep);
    registrations().for_each_live([&](uint32_t i, RegSlot& s) {
      if (!s.value.dropped) return;
      drops.push_back({handle_of(i), s.value.dropped});
      s.value.dropped = 0;
    });
    const bool left = !pending().empty();
    g_pending.store(left, std::memory_order_relaxed);
    if (!left) engine::clear_call_return();
  }
  // Outside every lock, in the order raised: these callbacks may call MPI.
  // A registration freed meanwhile gets nothing more.
  auto live_callback = [](MPI_T_event_registration reg, Callback* cb, MPI_T_event_dropped_cb_function** dropped) {
    std::lock_guard<std::recursive_mutex> g(mutex());
    RegSlot* s = registrations().find(reg);
    if (!s) return false;
    *cb = s->value.callbacks[MPI_T_CB_REQUIRE_NONE];
    if (dropped) *dropped = s->value.dropped_handler;
    return cb->fn != nullptr;
  };
  Callback cb;
  for (const Instance& inst : work)
    if (live_callback(inst.registration, &cb, nullptr)) invoke(cb, inst, MPI_T_CB_REQUIRE_NONE);
  for (const Drops& d : drops) {
    MPI_T_event_dropped_cb_function* dropped = nullptr;
    if (!live_callback(d.registration, &cb, &dropped) || !dropped) continue;
    ++callback_state().depth;
    dropped(MPI_Count(std::min<uint64_t>(d.count, uint64_t(INT64_MAX))), d.registration, 0, MPI_T_CB_REQUIRE_NONE,
            cb.user_data);
    --callback_state().depth;
  }
}

}  // namespace sonde::mpit

using namespace sonde::mpit;

// The calls valid inside a callback: no lock, no delivery.
#define SONDE_T_ENTER_INSTANCE() \
  if (!::sonde::mpit::initialized()) return MPI_T_ERR_NOT_INITIALIZED

extern "C" {

int PMPI_T_source_get_num(int* num_sources) {
  SONDE_T_ENTER();
  if (!num_sources) return MPI_T_ERR_INVALID;
  *num_sources = 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_source_get_num)

int PMPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc, int* desc_len,
                           MPI_T_source_order* ordering, MPI_Count* ticks_per_second, MPI_Count* max_ticks,
                           MPI_Info* info) {
  SONDE_T_ENTER();
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  copy_string("sonde_monotonic_clock", name, name_len);
  copy_string("CLOCK_MONOTONIC in nanoseconds; every event of this process, in the order raised (events are "
              "raised under the engine's serialisation).",
              desc, desc_len);
  if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
  if (ticks_per_second) *ticks_per_second = 1000000000;
  if (max_ticks) *max_ticks = INT64_MAX;
  if (info) *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  SONDE_T_ENTER_INSTANCE();
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (!timestamp) return MPI_T_ERR_INVALID;
  *timestamp = now_ns();
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_source_get_timestamp)

int PMPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                              MPI_T_event_registration* event_registration) {
  SONDE_T_ENTER();
  if (event_index < 0 || event_index >= int(events().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!event_registration) return MPI_T_ERR_INVALID;
  if (mpi_state() != 1) return MPI_T_ERR_NOT_ACCESSIBLE;  // bound to a communicator: needs MPI
  if (!obj_handle) return MPI_T_ERR_INVALID_HANDLE;
  MPI_Comm comm = *static_cast<const MPI_Comm*>(obj_handle);
  if (sonde::engine::introspect::comm_size(comm) < 0) return MPI_T_ERR_INVALID_HANDLE;
  uint32_t i = registrations().allocate();
  Registration& r = registrations().at(i).value;
  r.index = i;
  r.event_index = event_index;
  r.comm = comm;
  *event_registration = handle_of(i);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_handle_alloc)

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
  SONDE_T_ENTER();
  if (!registrations().find(event_registration)) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_SUCCESS;  // no hints are understood
}
SONDE_WEAK_ALIAS(T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info* info_used) {
  SONDE_T_ENTER();
  if (!registrations().find(event_registration)) return MPI_T_ERR_INVALID_HANDLE;
  if (!info_used) return MPI_T_ERR_INVALID;
  *info_used = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_handle_get_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info, void* user_data, MPI_T_event_cb_function* event_cb_function) {
  SONDE_T_ENTER();
  auto* s = registrations().find(event_registration);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (!valid_level(cb_safety)) return MPI_T_ERR_INVALID;
  // A null function removes the callback of that level.
  s->value.callbacks[cb_safety] = {event_cb_function, event_cb_function ? user_data : nullptr};
  update_subscription(index_of(event_registration));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info) {
  SONDE_T_ENTER();
  auto* s = registrations().find(event_registration);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (!valid_level(cb_safety)) return MPI_T_ERR_INVALID;
  return MPI_SUCCESS;  // no hints are understood
}
SONDE_WEAK_ALIAS(T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info* info_used) {
  SONDE_T_ENTER();
  auto* s = registrations().find(event_registration);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (!valid_level(cb_safety) || !info_used) return MPI_T_ERR_INVALID;
  *info_used = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void* user_data,
                             MPI_T_event_free_cb_function* free_cb_function) {
  SONDE_T_ENTER();
  auto* s = registrations().find(event_registration);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (s->value.subscription != PERUSE_EVENT_HANDLE_NULL) sonde::peruse::unsubscribe(s->value.subscription);
  registrations().release(index_of(event_registration));
  // No callback of this registration runs after this point (the
  // subscription is gone and delivery checks liveness under the lock).
  if (free_cb_function) {
    MPI_T_cb_safety level = callback_state().depth > 0 ? MPI_T_CB_REQUIRE_MPI_RESTRICTED : MPI_T_CB_REQUIRE_NONE;
    free_cb_function(event_registration, level, user_data);
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_handle_free)

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function* dropped_cb_function) {
  SONDE_T_ENTER();
  auto* s = registrations().find(event_registration);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  s->value.dropped_handler = dropped_cb_function;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_set_dropped_handler)

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void* buffer) {
  SONDE_T_ENTER_INSTANCE();
  const Instance* inst = instance(event_instance);
  if (!inst) return MPI_T_ERR_INVALID_HANDLE;
  if (element_index < 0 || element_index >= kEventElements) return MPI_T_ERR_INVALID_INDEX;
  if (!buffer) return MPI_T_ERR_INVALID;
  const EventRecord& r = inst->record;
  switch (element_index) {
    case 0: std::memcpy(buffer, &r.unique_id, sizeof r.unique_id); break;
    case 1: std::memcpy(buffer, &r.peer, sizeof r.peer); break;
    case 2: std::memcpy(buffer, &r.tag, sizeof r.tag); break;
    case 3: std::memcpy(buffer, &r.count, sizeof r.count); break;
    case 4: std::memcpy(buffer, &r.datatype, sizeof r.datatype); break;
    case 5: std::memcpy(buffer, &r.operation, sizeof r.operation); break;
    default: std::memcpy(buffer, &r.timestamp, sizeof r.timestamp); break;
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
  SONDE_T_ENTER_INSTANCE();
  const Instance* inst = instance(event_instance);
  if (!inst) return MPI_T_ERR_INVALID_HANDLE;
  if (!buffer) return MPI_T_ERR_INVALID;
  std::memcpy(buffer, &inst->record, sizeof inst->record);  // the layout event_get_info describes
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count* event_timestamp) {
  SONDE_T_ENTER_INSTANCE();
  const Instance* inst = instance(event_instance);
  if (!inst) return MPI_T_ERR_INVALID_HANDLE;
  if (!event_timestamp) return MPI_T_ERR_INVALID;
  *event_timestamp = inst->record.timestamp;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int* source_index) {
  SONDE_T_ENTER_INSTANCE();
  const Instance* inst = instance(event_instance);
  if (!inst) return MPI_T_ERR_INVALID_HANDLE;
  if (!source_index) return MPI_T_ERR_INVALID;
  *source_index = 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_get_source)

}  // extern "C"
